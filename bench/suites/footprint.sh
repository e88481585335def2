# bench/suites/footprint.sh: sizes and idle memory (sourced by bench/run).
#
# Starts the shipped endpoint list (conf/endpoints.conf) with the tuned profile from a
# scratch directory (its SQLite databases seeded there by sql/*/seed.sh), on every CPU of
# the machine as `make run` does (workers=auto and nginx's worker count follow the CPUs the
# stack may use), waits for every pool, serves one request per route so each worker is past
# its start-up, then reads: the stripped size of every binary in bin/, and for every process
# of the stack (nginx's master and workers, sluiced, every pool's workers) its idle memory
# from /proc/PID/smaps_rollup:
#   RSS: every page the process has in memory, shared ones counted in full in each process
#        (summed over a stack, the shared libraries and nginx's and sluiced's copy-on-write
#        pages count once per process: an overstatement);
#   PSS: each page divided by the number of processes that map it (summed over the stack,
#        each of its pages counts once: what the stack costs the machine; a library page
#        that processes outside the stack map too is split with them, so the sum moves
#        by a few MB with what else runs);
#   USS: the process's private pages only (what killing it would give back).
# The published figures of the systems in the slonbase benchmark stand beside them: the
# idle RSS of one process each (other hardware; their PostgreSQL server is not counted
# there, nor is sluice's here).  For one process RSS >= PSS >= USS.

# footprint_kib PID FIELD...: the sum of the fields (kB) of PID's smaps_rollup, 0 if gone.
footprint_kib() {
	local pid=$1
	shift
	awk -v f=" $* " 'index(f, " " substr($1, 1, length($1) - 1) " ") { s += $2 } END { print s + 0 }' \
	    "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0
}

# footprint_row LABEL KEY PIDS...: one table row and three CSV rows (rss-, pss-, uss-KEY)
# for the processes PIDS, summed; adds them to the stack's totals.
footprint_row() {
	local label=$1 key=$2 p rss=0 pss=0 uss=0 n=0 m
	shift 2
	for p in "$@"; do
		rss=$((rss + $(footprint_kib "$p" Rss)))
		pss=$((pss + $(footprint_kib "$p" Pss)))
		uss=$((uss + $(footprint_kib "$p" Private_Clean Private_Dirty)))
		n=$((n + 1))
	done
	echo "| $label | $n | $rss | $pss | $uss |" | bench_report
	for m in rss pss uss; do
		local v=${!m}
		echo "footprint,$m-$key,sluice,tuned,none,0,1,0,0,0,0,0,0,0,0,0,0,$n,$((v * 1024))" >> "$BENCH_OUT/results.csv"
		bench_point footprint "idle ${m^^} of $label ($n processes)" "$v KiB"
	done
	FP_N=$((FP_N + n)) FP_RSS=$((FP_RSS + rss)) FP_PSS=$((FP_PSS + pss)) FP_USS=$((FP_USS + uss))
}

suite_footprint() {
	local scratch=$BENCH_TMP/footprint bin size name route pids line SERVER_CPUS
	FP_N=0 FP_RSS=0 FP_PSS=0 FP_USS=0
	# The stack sees the whole machine, like `make run` (the other suites pin the server).
	SERVER_CPUS=0-$(($(nproc) - 1))
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
		echo "Idle memory of the shipped stack on $(nproc) CPUs, KiB, summed over the processes of"
		echo "each row. RSS counts a shared page in every process that maps it; PSS divides it among"
		echo "them (summed, each page once: what the stack costs); USS is private pages only."
		echo
		echo "| processes | count | RSS KiB | PSS KiB | USS KiB |"
		echo "|---|---|---|---|---|"
	 } | bench_report
	 "$TOP/bin/sluiced" -r "$STACK_RUN" ctl status | awk 'NR > 1 { for (i = 1; i <= NF; i++) if ($i ~ /^pids=/) { sub(/pids=/, "", $i); print $1, $i } }' > "$scratch/pools"
	 while read -r name pids; do
		footprint_row "pool $name" "$name" ${pids//,/ }
	 done < "$scratch/pools"
	 footprint_row "sluiced" sluiced "${STACK_PIDS[0]}"
	 footprint_row "nginx (master + workers)" nginx "${STACK_PIDS[1]}" $(ps -o pid= --ppid "${STACK_PIDS[1]}")
	 echo "| **the whole stack** | $FP_N | $FP_RSS | **$FP_PSS** | $FP_USS |" | bench_report
	 for m in RSS PSS USS; do
		line=FP_$m
		echo "footprint,${m,,}-stack,sluice,tuned,none,0,1,0,0,0,0,0,0,0,0,0,0,$FP_N,$((${!line} * 1024))" >> "$BENCH_OUT/results.csv"
		bench_point footprint "idle $m of the whole stack ($FP_N processes)" "${!line} KiB"
	 done
	 bench_stack_stop)
	{
		echo
		echo "Published figures (slonbase benchmark, a 4-vCPU cloud VM, other hardware): binary on disk slonbase 2.2.0 21.3 MB, PocketBase 0.40.6 32.0 MB, PostgREST 16.5 19.6 MB; resident memory idle (RSS of their one process, shared libraries included) 40 MB, 41 MB, 15 MB (their PostgreSQL server not counted). Compare them with the whole stack's PSS: for one process, PSS is its RSS less the shares of its shared pages that other processes map."
		echo
	} | bench_report
}
