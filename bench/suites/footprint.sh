# bench/suites/footprint.sh: sizes and idle memory (sourced by bench/run).
#
# Starts the shipped endpoint list (conf/endpoints.conf) with the tuned profile from a
# scratch directory (its SQLite databases seeded there by sql/*/seed.sh), waits for every
# pool, serves one request per route so each worker is past its start-up, then reads:
# the stripped size of every binary in bin/, the idle RSS of one worker per endpoint (and
# the pool's total), sluiced's and nginx's RSS, and the whole stack's.  The published
# figures of the systems in the slonbase benchmark stand beside them (other hardware; their
# PostgreSQL server is not counted there, nor is sluice's here).

suite_footprint() {
	local scratch=$BENCH_TMP/footprint bin size name pids pid rss total=0 workers_total=0 line
	mkdir -p "$scratch/data" "$scratch/strip"
	for seeder in "$TOP"/sql/*/seed.sh; do
		[ -x "$seeder" ] && "$seeder" "$scratch/data" >/dev/null 2>&1 || true
	done
	{
		echo "## footprint"
		echo
		echo "| binary | stripped bytes |"
		echo "|---|---|"
	} | bench_report
	for bin in "$TOP"/bin/*; do
		[ -x "$bin" ] || continue
		strip -o "$scratch/strip/$(basename "$bin")" "$bin" 2>/dev/null || cp "$bin" "$scratch/strip/"
		size=$(stat -c %s "$scratch/strip/$(basename "$bin")")
		echo "| $(basename "$bin") | $size |" | bench_report
		echo "footprint,binary-$(basename "$bin"),sluice,none,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$size" >> "$BENCH_OUT/results.csv"
		bench_point footprint "$(basename "$bin") stripped" "$size bytes"
	done
	echo | bench_report

	# The shipped list, with relative database paths resolved inside the scratch directory.
	(cd "$scratch" && bench_stack_start footprint tuned "$(grep -v '^[[:space:]]*set[[:space:]]\+listen' "$TOP/conf/endpoints.conf")"
	 sleep 0.5
	 grep -vE '^[[:space:]]*(#|$|set |db )' "$TOP/conf/endpoints.conf" | while read -r name route _; do
		curl -s -o /dev/null "http://127.0.0.1:$BENCH_PORT${route#=}" || true
	 done
	 sleep 1
	 {
		echo "| process | idle RSS KiB |"
		echo "|---|---|"
	 } | bench_report
	 "$TOP/bin/sluiced" -r "$STACK_RUN" ctl status | awk 'NR > 1 { for (i = 1; i <= NF; i++) if ($i ~ /^pids=/) { sub(/pids=/, "", $i); print $1, $i } }' |
	 while read -r name pids; do
		pid=${pids%%,*}
		rss=$(bench_rss_kib "$pid")
		total=0
		for p in ${pids//,/ }; do total=$((total + $(bench_rss_kib "$p"))); done
		echo "| one $name worker (pool of $(tr ',' '\n' <<<"$pids" | wc -l): $total KiB) | $rss |" | bench_report
		echo "footprint,rss-$name,sluice,tuned,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$((rss * 1024))" >> "$BENCH_OUT/results.csv"
		bench_point footprint "idle RSS of one $name worker" "$rss KiB"
		echo "$total" >> "$scratch/pools"
	 done
	 rss=$(bench_rss_kib "${STACK_PIDS[0]}")
	 echo "| sluiced | $rss |" | bench_report
	 echo "footprint,rss-sluiced,sluice,tuned,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$((rss * 1024))" >> "$BENCH_OUT/results.csv"
	 bench_point footprint "idle RSS of sluiced" "$rss KiB"
	 line=$(ps -o rss= --ppid "${STACK_PIDS[1]}" -p "${STACK_PIDS[1]}" | awk '{ s += $1 } END { print s + 0 }')
	 echo "| nginx (master + workers) | $line |" | bench_report
	 echo "footprint,rss-nginx,sluice,tuned,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$((line * 1024))" >> "$BENCH_OUT/results.csv"
	 bench_point footprint "idle RSS of nginx" "$line KiB"
	 total=$(( $(awk '{ s += $1 } END { print s + 0 }' "$scratch/pools") + rss + line ))
	 echo "| the whole stack (every pool + sluiced + nginx) | $total |" | bench_report
	 echo "footprint,rss-stack,sluice,tuned,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$((total * 1024))" >> "$BENCH_OUT/results.csv"
	 bench_point footprint "idle RSS of the whole stack" "$total KiB"
	 bench_stack_stop)
	{
		echo
		echo "Published figures (slonbase benchmark, a 4-vCPU cloud VM, other hardware): binary on disk slonbase 2.2.0 21.3 MB, PocketBase 0.40.6 32.0 MB, PostgREST 16.5 19.6 MB; resident memory idle 40 MB, 41 MB, 15 MB (their PostgreSQL server not counted)."
		echo
	} | bench_report
}
