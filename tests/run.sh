#!/usr/bin/env bash
# Runs every test program (unit first, then integration) and ends with the suite's line
# "N passed, N failed", the sum of each program's own line.  A program that dies without
# printing its line counts as one failed test.  Exits non-zero on any failure.
set -u
tests=${SLUICE_TESTS:?}
passed=0 failed=0
for t in "$tests"/test_*; do
	[ -x "$t" ] || continue
	name=$(basename "$t")
	echo "== $name"
	log=$(mktemp)
	"$t" 2>&1 | tee "$log"
	rc=${PIPESTATUS[0]}
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed$' "$log" | tail -1)
	rm -f "$log"
	if [ -z "$line" ]; then
		echo "FAIL $name: exited $rc without a result line"
		failed=$((failed + 1))
		continue
	fi
	p=${line%% passed*}; f=${line#*, }; f=${f%% failed}
	passed=$((passed + p)); failed=$((failed + f))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited $rc"
		failed=$((failed + 1))
	fi
done
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
