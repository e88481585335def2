#!/usr/bin/env bash
# The benchmark suite's smoke test (run by tests/run.sh in `make test`): every suite runs in
# BENCH_QUICK mode and writes well-formed results.  Timing is never asserted: only that each
# suite reported, that results.csv has its header and 19 well-formed fields per row, and
# that the throughput columns hold positive numbers.  Prints "ok"/"FAIL" lines; exits 0 when
# all is well.
set -u
cd "$(dirname "$0")/.."
out=$(mktemp -d /tmp/sluice-bench-smoke.XXXXXX)
trap 'rm -rf "$out"' EXIT
fail=0
if ! BENCH_QUICK=1 BENCH_NO_BUILD=1 BENCH_OUT="$out" bash bench/run >"$out/log" 2>&1; then
	echo "FAIL bench/run exited non-zero:"; tail -20 "$out/log"; exit 1
fi
. bench/lib.sh
if [ "$(head -1 "$out/results.csv")" != "$BENCH_CSV_HEADER" ]; then
	echo "FAIL results.csv header"; fail=1
fi
bad=$(awk -F, 'NR > 1 && (NF != 19 || $6 !~ /^[0-9]+$/ || $8 !~ /^[0-9.]+$/ || $11 !~ /^[0-9.]+$/ || $19 !~ /^[0-9]+$/) { n++ } END { print n + 0 }' "$out/results.csv")
[ "$bad" -eq 0 ] || { echo "FAIL $bad malformed rows in results.csv"; fail=1; }
rows=$(awk 'END { print NR - 1 }' "$out/results.csv")
zero=$(awk -F, 'NR > 1 && $1 != "footprint" && $8 + 0 <= 0 { n++ } END { print n + 0 }' "$out/results.csv")
[ "$zero" -eq 0 ] || { echo "FAIL $zero measured rows with no throughput"; fail=1; }
# Every answer a 2xx: a stack that answers errors quickly would otherwise look fast.
bad=$(awk -F, 'NR > 1 && $17 + 0 > 0 { n++; print "  " $1 "," $2 "," $5 ": " $17 " non-2xx" > "/dev/stderr" } END { print n + 0 }' "$out/results.csv")
[ "$bad" -eq 0 ] || { echo "FAIL $bad result rows with non-2xx answers"; fail=1; }
# With PostgreSQL on the machine, the suites that use it measured it.
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	for s in postgrest:postgresql chat:pg; do
		awk -F, -v s="${s%%:*}" -v d="${s#*:}" 'NR > 1 && $1 == s && $5 == d { found = 1 } END { exit !found }' "$out/results.csv" ||
		    { echo "FAIL suite ${s%%:*} has no $(echo "${s#*:}") rows (PostgreSQL did not start?)"; fail=1; }
	done
fi
for f in bench/suites/*.sh; do
	s=$(basename "$f" .sh)
	# Opt-in suites (peers) are not run by a bare bench/run, hence not here.
	[[ " $BENCH_OPT_IN_SUITES " == *" $s "* ]] && continue
	if ! grep -q "^## $s" "$out/report.md"; then echo "FAIL suite $s wrote no report section"; fail=1; fi
	if ! awk -F, -v s="$s" 'NR > 1 && index($1, s) == 1 { found = 1 } END { exit !found }' "$out/results.csv" &&
	    ! { [ "$s" = proxy ] && grep -q '^sweep,' "$out/results.csv"; }; then
		echo "FAIL suite $s wrote no result rows"; fail=1
	fi
done
[ "$fail" -eq 0 ] && echo "ok   bench smoke: $(($(ls bench/suites/*.sh | wc -l) - $(wc -w <<<"$BENCH_OPT_IN_SUITES"))) suites, $rows result rows, report and $(ls "$out"/*.png 2>/dev/null | wc -l) charts"
exit $fail
