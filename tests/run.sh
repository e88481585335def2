#!/usr/bin/env bash
# Runs test programs and ends with the suite's line "N passed, N failed", the sum of each
# program's own line.  A program that dies without printing its line counts as one failed
# test.  Exits non-zero on any failure.
#
#   tests/run.sh PROGRAM...   just those programs (make check: the unit tests, seconds;
#                             SLUICE_LAYERS=1 adds the layering check, tests/lint/layers.sh,
#                             and the functions' lengths, tests/lint/funclen.sh)
#   tests/run.sh              every test_* program in SLUICE_TESTS, then the fuzz harnesses'
#                             replay, the static analysis and the benchmark smoke run
#                             (make test); SLUICE_SKIP_UNIT=1 leaves the unit tests out
#                             (make check-integration)
#
# The programs run two at a time (SLUICE_TEST_JOBS=1: one by one, their output as it
# comes), those that time what they see alone; the static analysis runs beside them at the
# lowest priority.
#
# Sanitizer builds: every process of the stack (workers, sluiced) writes its reports to
# files under one directory (ASAN_OPTIONS/UBSAN_OPTIONS log_path), because a worker's
# stderr ends in a temporary log that a passing test deletes.  Any report there fails the
# run: one more failed "test" named after the report.
set -u
tests=${SLUICE_TESTS:?}
passed=0 failed=0 skipped=0
programs=("$@")
extras=1
if [ ${#programs[@]} -gt 0 ]; then
	extras=
else
	for t in "$tests"/test_*; do
		case " ${SLUICE_UNIT:-} " in
		*" $t "*) [ -n "${SLUICE_SKIP_UNIT:-}" ] && continue ;;
		esac
		programs+=("$t")
	done
fi
san_dir=$(mktemp -d /tmp/sluice-san.XXXXXX)
chmod 777 "$san_dir"
trap 'rm -rf "$san_dir"' EXIT
export ASAN_OPTIONS="log_path=$san_dir/asan:detect_leaks=1:abort_on_error=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}"
export UBSAN_OPTIONS="log_path=$san_dir/ubsan:print_stacktrace=1${UBSAN_OPTIONS:+:$UBSAN_OPTIONS}"
# Reports that appeared while one program ran are named after it (a worker's report reaches
# the directory after the test that started the worker printed its line).
san_claim() {
	local r
	for r in "$san_dir"/*; do
		[ -e "$r" ] || continue
		case $r in *.during-*) continue ;; esac
		mv "$r" "$r.during-$1"
	done
}

# The static analysis (make lint: cppcheck and clang-tidy, tests/lint/README) is one test
# of the whole run.  It needs only the sources, so it starts now, beside the programs, at
# the lowest priority: it takes the cores when the programs wait on their stacks, and
# yields them at once when they do not.  Its report is printed after the fuzzing.
if [ -n "$extras" ]; then
	lint_log=$(mktemp /tmp/sluice-lint.XXXXXX)
	nice -n 19 bash tests/lint/run.sh >"$lint_log" 2>&1 &
	lint_pid=$!
fi

# One program's result line added to the totals; its output was printed already.
tally() {
	local name=$1 rc=$2 log=$3 line p f s
	line=$(grep -E '^[0-9]+ passed, [0-9]+ failed(, [0-9]+ skipped)?$' "$log" | tail -1)
	if [ -z "$line" ]; then
		echo "FAIL $name: exited $rc without a result line"
		failed=$((failed + 1))
		return
	fi
	p=${line%% passed*}; f=${line#*, }; f=${f%% failed*}
	s=0; case $line in *skipped) s=${line##*failed, }; s=${s%% skipped} ;; esac
	passed=$((passed + p)); failed=$((failed + f)); skipped=$((skipped + s))
	if [ "$rc" -ne 0 ] && [ "$f" -eq 0 ]; then
		echo "FAIL $name: exited $rc"
		failed=$((failed + 1))
	fi
}

# Two programs at a time (SLUICE_TEST_JOBS): each starts its own stack on free ports in
# temporary directories, and most of a program's time is spent waiting on its stack.  The
# programs that time what they see (budgets, hung workers, failovers, load, writes that
# must meet in a batch) or load the machine themselves run alone.  A program's output is
# printed whole when it ends.
ALONE=" test_adopt test_budgets test_chat_browser test_dbwrite test_fault_kill test_fault_pg test_gate
    test_gcommit test_http test_hung_worker test_multihost test_pg_failover test_pg_faults
    test_pg_pool test_records_pg_writes
    test_rest_gcommit test_slowloris test_status_browser test_supervisor "
ALONE=" $(echo $ALONE) "	# one space between names, and around them
jobs=${SLUICE_TEST_JOBS:-2}
[ ${#programs[@]} -gt 1 ] || jobs=1
out_dir=$(mktemp -d /tmp/sluice-tests.XXXXXX)
trap 'rm -rf "$san_dir" "$out_dir"' EXIT
declare -A running=()	# pid -> program name
declare -A started=()	# program name -> $SECONDS at its start

# The end of a program: its time, the sanitizer reports that appeared meanwhile (named
# after claim), its result line added up.
ended() {
	local name=$1 rc=$2 claim=$3
	echo "   ($name: $((SECONDS - started[$name])) s)"
	san_claim "$claim"
	tally "$name" "$rc" "$out_dir/$name.log"
}

# Waits for one running program to end and reports it, with its whole output.
reap() {
	local pid name rc
	wait -n -p pid "${!running[@]}"
	rc=$?
	name=${running[$pid]}
	unset "running[$pid]"
	echo "== $name"
	cat "$out_dir/$name.log"
	# Reports are named after it and what ran beside it.
	local IFS=+
	ended "$name" "$rc" "$name${running[*]:+-beside-${running[*]}}"
}

for t in "${programs[@]}"; do
	[ -x "$t" ] || { echo "FAIL $t: not built"; failed=$((failed + 1)); continue; }
	name=$(basename "$t")
	width=$jobs
	case $ALONE in *" $name "*) width=1 ;; esac
	while [ ${#running[@]} -gt 0 ] && [ ${#running[@]} -ge "$width" ]; do reap; done
	# One that must run alone also keeps the next from starting beside it.
	for p in "${!running[@]}"; do
		case $ALONE in *" ${running[$p]} "*) reap ;; esac
	done
	started[$name]=$SECONDS
	if [ "$jobs" -eq 1 ]; then
		# One at a time: the output as it comes.
		echo "== $name"
		"$t" 2>&1 | tee "$out_dir/$name.log"
		ended "$name" "${PIPESTATUS[0]}" "$name"
		continue
	fi
	"$t" >"$out_dir/$name.log" 2>&1 &
	running[$!]=$name
done
while [ ${#running[@]} -gt 0 ]; do reap; done

# Fuzz harnesses: each replays its committed corpus, then fuzzes for FUZZ_SECONDS (5) from
# a scratch copy of it.  A crash, a leak or a sanitizer report fails that harness.
fuzz=${SLUICE_FUZZ:-}
[ -n "$extras" ] || fuzz=
for f in ${fuzz:+"$fuzz"/fuzz_*}; do
	[ -x "$f" ] || continue
	name=$(basename "$f"); n=${name#fuzz_}
	scratch=$(mktemp -d /tmp/sluice-fuzz.XXXXXX)
	cp -r tests/fuzz/corpus/"$n"/. "$scratch"/ 2>/dev/null || true
	dict=; [ -f tests/fuzz/"$n".dict ] && dict=-dict=tests/fuzz/"$n".dict
	log=$(mktemp)
	if ASAN_OPTIONS=detect_leaks=1 UBSAN_OPTIONS=print_stacktrace=1 \
	    "$f" -max_total_time="${FUZZ_SECONDS:-5}" -print_final_stats=1 $dict \
	    -artifact_prefix="$scratch/" "$scratch" >"$log" 2>&1; then
		echo "ok   $name ($(awk -F: '/number_of_executed_units/ { print $NF + 0 }' "$log") runs)"
		passed=$((passed + 1))
	else
		echo "FAIL $name:"; grep -E "ERROR|SUMMARY|Test unit written" "$log" | head -10
		failed=$((failed + 1))
	fi
	rm -rf "$scratch" "$log"
done

# The static analysis started at the beginning, one test.
if [ -n "$extras" ]; then
	echo "== lint"
	if wait "$lint_pid"; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	cat "$lint_log"
	rm -f "$lint_log"
fi

# The benchmark suite's smoke run (BENCH_QUICK=1): release binaries only, since benchmarks
# never run on a sanitizer build; under SANITIZE=1 it is left out and said so (not counted).
if [ -z "$extras" ]; then
	:
elif [ "${SLUICE_BIN:-bin}" = bin ]; then
	echo "== bench smoke"
	if bash tests/bench_smoke.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
else
	echo "== bench smoke: not run on a sanitizer build (not counted)"
fi

# The layering and the folders' maps (tests/lint/layers.sh), as one test, and the
# functions' lengths (tests/lint/funclen.sh, its self-test first), as another: make check
# asks for them (SLUICE_LAYERS=1); make test and make check-integration run them within
# the lint.
if [ -n "${SLUICE_LAYERS:-}" ]; then
	echo "== layers"
	if bash tests/lint/layers.sh; then passed=$((passed + 1)); else failed=$((failed + 1)); fi
	echo "== funclen"
	if bash tests/lint/funclen.sh --self-test && bash tests/lint/funclen.sh; then
		passed=$((passed + 1))
	else
		failed=$((failed + 1))
	fi
fi

for report in "$san_dir"/*; do
	[ -e "$report" ] || continue
	echo "FAIL sanitizer report $(basename "$report"):"
	if [ -s "$report" ]; then
		head -40 "$report"
	else
		echo "  (empty: the process was killed while it began a report)"
	fi
	failed=$((failed + 1))
done
if [ "$skipped" -gt 0 ]; then
	echo "$passed passed, $failed failed, $skipped skipped"
else
	echo "$passed passed, $failed failed"
fi
[ "$failed" -eq 0 ]
