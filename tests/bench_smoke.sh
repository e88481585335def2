#!/usr/bin/env bash
# The benchmark suite's smoke test (run by tests/run.sh in `make test`): every suite runs in
# BENCH_QUICK mode and writes well-formed results.  Timing is never asserted: only that each
# suite reported, that results.csv has its header and 19 well-formed fields per row, that
# the throughput columns hold positive numbers, that the run printed a line per point, and
# that its charts are marked as a smoke run, labelled in words, on a log scale when one bar
# dwarfs the rest, and that the published benchmarks' own paths ran (the PostgREST nginx
# pair, the open loop, the chat's series, sizes on disk, the differences sections), and
# that fastcgi.csv (sluice's own counters of each run) is well-formed and gives one request
# per FastCGI connection without keepalive and more with it.
# Prints "ok"/"FAIL" lines; exits 0 when
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
# Sizes and memory (the footprint suite's rows, a suite's rss-, pss- and binary- rows)
# carry no throughput.
zero=$(awk -F, 'NR > 1 && $1 != "footprint" && $2 !~ /^(rss|pss|binary)-/ && $8 + 0 <= 0 { n++ } END { print n + 0 }' "$out/results.csv")
[ "$zero" -eq 0 ] || { echo "FAIL $zero measured rows with no throughput"; fail=1; }
# Every answer a 2xx: a stack that answers errors quickly would otherwise look fast.
bad=$(awk -F, 'NR > 1 && $17 + 0 > 0 { n++; print "  " $1 "," $2 "," $5 ": " $17 " non-2xx" > "/dev/stderr" } END { print n + 0 }' "$out/results.csv")
[ "$bad" -eq 0 ] || { echo "FAIL $bad result rows with non-2xx answers"; fail=1; }
# sluice's own counters beside req/s (fastcgi.csv, bench_fcgi_row): well-formed rows, and
# what a keepalive K must give: a connection per request without keepalive (the default
# profile, the PostgREST pair's default, the sweep's K = 0), more than one request per
# connection with it (the tuned profile, the pair's best, the sweep's K > 0).  Counts, not
# timing: within 10% of one for one each.
if [ "$(head -1 "$out/fastcgi.csv" 2>/dev/null)" != "$BENCH_FCGI_CSV_HEADER" ]; then
	echo "FAIL fastcgi.csv header"; fail=1
fi
bad=$(awk -F, 'NR > 1 && (NF != 13 || $9 !~ /^[0-9]+$/ || $10 !~ /^[0-9]+$/ || $11 !~ /^[0-9]+$/ || $12 !~ /^[0-9.]+$/ || $13 !~ /^[0-9.]+$/ || $9 + 0 <= 0) { n++ } END { print n + 0 }' "$out/fastcgi.csv")
[ "$bad" -eq 0 ] || { echo "FAIL $bad malformed rows in fastcgi.csv"; fail=1; }
for k in proxy,health,default,one transport,unix,default,one transport,tcp,default,one \
    pgrst-default,health,default,one 'sweep,w*-k0,tuned,one' \
    proxy,health,tuned,many transport,unix,tuned,many transport,tcp,tuned,many pgrst-best,health,tuned,many 'sweep,w*-k[1-9]*,tuned,many'; do
	IFS=, read -r suite scen prof want <<<"$k"
	n=$(awk -F, -v s="$suite" -v p="$prof" -v w="$want" -v pat="^$(sed 's/\*/.*/g' <<<"$scen")\$" '
		NR > 1 && $1 == s && $2 ~ pat && $4 == p {
			rows++
			if (w == "one" ? ($13 < 0.9 || $13 > 1.1) : $13 <= 1.1) { bad++; print "  " $0 > "/dev/stderr" }
		}
		END { print (rows > 0 && !bad) ? "ok" : "bad" }' "$out/fastcgi.csv")
	[ "$n" = ok ] || { echo "FAIL fastcgi.csv: $suite $scen ($prof): no rows, or not $want request(s) per connection"; fail=1; }
done
grep -q '| FastCGI conns opened/s | requests per conn |$' "$out/report.md" &&
    grep -q '| /health FastCGI conns opened/s | /health requests per conn |$' "$out/report.md" ||
    { echo "FAIL proxy: the report's tables have no FastCGI connection columns"; fail=1; }
# With PostgreSQL on the machine, the suites that use it measured it.
if ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then
	for s in postgrest:postgresql chat:pg records:postgresql; do
		awk -F, -v s="${s%%:*}" -v d="${s#*:}" 'NR > 1 && $1 == s && $5 == d { found = 1 } END { exit !found }' "$out/results.csv" ||
		    { echo "FAIL suite ${s%%:*} has no $(echo "${s#*:}") rows (PostgreSQL did not start?)"; fail=1; }
	done
fi
# The footprint of the whole stack idle: RSS, PSS and USS summed over its processes, each
# positive, RSS >= PSS >= USS (PSS shares a page among the processes that map it, USS
# counts private pages only), over at least nginx, sluiced and one worker.
fp=$(awk -F, '$1 == "footprint" && $2 ~ /^(rss|pss|uss)-stack$/ { v[$2] = $19; n = $18 }
    END { print (v["rss-stack"] > 0 && v["pss-stack"] > 0 && v["uss-stack"] > 0 &&
        v["rss-stack"] >= v["pss-stack"] && v["pss-stack"] >= v["uss-stack"] && n >= 3) }' "$out/results.csv")
[ "$fp" = 1 ] || { echo "FAIL footprint: no whole-stack RSS/PSS/USS rows, or RSS >= PSS >= USS broken"; fail=1; }
grep -q '| \*\*the whole stack\*\* |' "$out/report.md" || { echo "FAIL footprint: no whole-stack row in the report"; fail=1; }
# A line per measured point as the run goes: one "bench: SUITE: TARGET: FIGURE" per row.
points=$(grep -c '^bench: [a-z-]*: .*: ' "$out/log")
[ "$points" -eq "$rows" ] || { echo "FAIL $points progress lines for $rows result rows"; fail=1; }
# Every chart of a smoke run says on its face that its numbers mean nothing.
command -v gnuplot >/dev/null || echo "note: gnuplot is missing (make deps): charts not checked"
command -v gnuplot >/dev/null && for gp in "$out"/*.gp; do
	[ -e "$gp" ] || { echo "FAIL no chart scripts"; fail=1; break; }
	grep -q 'these numbers mean nothing' "$gp" && grep -q "set label 99 'SMOKE RUN" "$gp" ||
	    { echo "FAIL $(basename "$gp"): not marked as a smoke run"; fail=1; }
done
# Chart labels are words, not run keys such as a0.1-r95-c32.
if [ -s "$out/chat.dat" ]; then
	grep -q '% reads, skew [0-9.]*, [0-9]* clients' "$out/chat.dat" && ! grep -qE 'a[0-9.]+-r[0-9]+' "$out/chat.dat" ||
	    { echo "FAIL chat chart labels:"; head -3 "$out/chat.dat"; fail=1; }
fi
# A log scale when one bar dwarfs the rest, a linear one otherwise (charts of our own).
printf 'x\ta\tb\none\t100\t20000\ntwo\t150\t90\n' > "$out/dwarf.txt"
printf 'x\ta\tb\none\t100\t200\ntwo\t150\t90\n' > "$out/even.txt"
(BENCH_OUT=$out BENCH_QUICK=1; bench_bar_chart dwarf "dwarf" "req/s" "$out/dwarf.txt"
 bench_bar_chart even "even" "req/s" "$out/even.txt")
! command -v gnuplot >/dev/null ||
    grep -q '^set logscale y' "$out/dwarf.gp" && ! grep -q '^set logscale y' "$out/even.gp" ||
    { echo "FAIL bar charts: log scale not chosen by the spread of the bars"; fail=1; }
for f in bench/suites/*.sh; do
	s=$(basename "$f" .sh)
	# Opt-in suites (peers) are not run by a bare bench/run, hence not here.
	[[ " $BENCH_OPT_IN_SUITES " == *" $s "* ]] && continue
	if ! grep -q "^## $s" "$out/report.md"; then echo "FAIL suite $s wrote no report section"; fail=1; fi
	# multihost writes none where it cannot make network namespaces, and says so.
	if ! awk -F, -v s="$s" 'NR > 1 && index($1, s) == 1 { found = 1 } END { exit !found }' "$out/results.csv" &&
	    ! { [ "$s" = proxy ] && grep -q '^sweep,' "$out/results.csv"; } &&
	    ! { [ "$s" = multihost ] && grep -q '^Not run: .*needs root and ip netns' "$out/report.md"; }; then
		echo "FAIL suite $s wrote no result rows"; fail=1
	fi
done
# The published benchmarks' own paths ran: the PostgREST nginx pair, the open loop, the
# chat's four series, footprint's sizes on disk, and every differences section.
for k in postgrest-published:pub-default postgrest-published:pub-best postgrest-openloop:tuned; do
	awk -F, -v s="${k%%:*}" -v p="${k#*:}" 'NR > 1 && $1 == s && $4 == p && $8 + 0 > 0 { found = 1 } END { exit !found }' "$out/results.csv" ||
	    { echo "FAIL no ${k%%:*} rows with profile ${k#*:}"; fail=1; }
done
for k in sqlite-durable sqlite-published pg-default pg-serializable; do
	[ "$k" != "${k#pg}" ] && ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1 && continue
	awk -F, -v k="$k" 'NR > 1 && $1 == "chat" && index($2, k "-") == 1 { found = 1 } END { exit !found }' "$out/results.csv" ||
	    { echo "FAIL no chat rows for the series $k"; fail=1; }
done
grep -q '^footprint,disk-total,' "$out/results.csv" || { echo "FAIL footprint: no size on disk"; fail=1; }
# multihost: both requests, both load balancers (where namespaces can be made).
grep -q '^Not run: .*needs root and ip netns' "$out/report.md" || for k in health-one scan-one health-two scan-two; do
	awk -F, -v k="$k" 'NR > 1 && $1 == "multihost" && index($2, k "-app-host") == 1 && $8 + 0 > 0 { found = 1 } END { exit !found }' "$out/results.csv" ||
	    { echo "FAIL multihost: no $k-app-host(s) rows"; fail=1; }
done
for s in postgrest chat footprint; do
	grep -q "^### $s: differences from the published benchmark" "$out/report.md" ||
	    { echo "FAIL $s: no differences section"; fail=1; }
done
[ "$fail" -eq 0 ] && echo "ok   bench smoke: $(($(ls bench/suites/*.sh | wc -l) - $(wc -w <<<"$BENCH_OPT_IN_SUITES"))) suites, $rows result rows, report and $(ls "$out"/*.png 2>/dev/null | wc -l) charts"
exit $fail
