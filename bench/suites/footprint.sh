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
# Each process's /proc/PID/smaps is kept in raw/footprint-ROW-PID.smaps: where its private
# pages are (heap, thread stacks, the relocated data of each shared library).
# The published figures of the systems in the slonbase benchmark stand beside them: the
# idle RSS of one process each (other hardware; their PostgreSQL server is not counted
# there, nor is sluice's here).  For one process RSS >= PSS >= USS.

# footprint_row LABEL KEY PIDS...: one table row and three CSV rows (rss-, pss-, uss-KEY)
# for the processes PIDS, summed; adds them to the stack's totals.
footprint_row() {
	local label=$1 key=$2 p rss=0 pss=0 uss=0 n=0 m
	shift 2
	mkdir -p "$BENCH_OUT/raw"
	for p in "$@"; do
		# Each process's mappings, kept raw: where its private pages are.
		cat "/proc/$p/smaps" > "$BENCH_OUT/raw/footprint-$key-$p.smaps" 2>/dev/null || true
		rss=$((rss + $(bench_smaps_kib "$p" Rss)))
		pss=$((pss + $(bench_smaps_kib "$p" Pss)))
		uss=$((uss + $(bench_smaps_kib "$p" Private_Clean Private_Dirty)))
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
	# A subshell: the stack it starts is stopped when it ends, however it ends (errexit).
	(trap bench_stack_stop EXIT
	 cd "$scratch" && BENCH_STACK_METRICS=off bench_stack_start footprint tuned "$(grep -v '^[[:space:]]*set[[:space:]]\+listen' "$TOP/conf/endpoints.conf")"
	 sleep 0.5
	 grep -vE '^[[:space:]]*(#|$|set |db )' "$TOP/conf/endpoints.conf" | while read -r name route _; do
		# At most 2 s each: a stream (stream=1, the realtime line) never ends by itself.
		curl -s -m 2 -o /dev/null "http://127.0.0.1:$BENCH_PORT${route#=}" || true
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
	 done)
	{
		echo
		echo "Published figures (slonbase benchmark, a 4-vCPU cloud VM, other hardware): binary on disk slonbase 2.2.0 21.3 MB, PocketBase 0.40.6 32.0 MB, PostgREST 16.5 19.6 MB; resident memory idle (RSS of their one process, shared libraries included) 40 MB, 41 MB, 15 MB (their PostgreSQL server not counted). Compare them with the whole stack's PSS: for one process, PSS is its RSS less the shares of its shared pages that other processes map."
		echo
	} | bench_report
}

# Debian's base system, as packages: the Essential and Priority required ones and what they
# depend on, two levels down (what debootstrap's minbase installs: libc6, zlib1g, libgcc-s1,
# libcrypt1, libseccomp2, libgnutls30 and their kind).
footprint_base_pkgs() {
	local ess base
	ess=$(dpkg-query -W -f='${Package} ${Essential} ${Priority}\n' | awk '$2 == "yes" || $3 == "required" { print $1 }')
	base=$( (echo "$ess"; dpkg-query -W -f='${Pre-Depends}, ${Depends}\n' $ess 2>/dev/null |
	    tr ',|' '\n\n' | awk '{ print $1 }' | sed 's/:.*//') | grep . | sort -u)
	(echo "$base"; dpkg-query -W -f='${Pre-Depends}, ${Depends}\n' $base 2>/dev/null |
	    tr ',|' '\n\n' | awk '{ print $1 }' | sed 's/:.*//') | grep . | sort -u
}

# The Debian package that ships FILE (Debian's merged /usr: a library under /usr/lib may
# be listed as /lib), or nothing.
footprint_pkg() {
	(dpkg -S "$1" 2>/dev/null || dpkg -S "${1#/usr}" 2>/dev/null || true) | head -1 | cut -d: -f1
}

# The shared libraries FILES load, resolved, one a line.
footprint_ldd() {
	ldd "$@" 2>/dev/null | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | xargs -r readlink -f | sort -u
}

# Size on disk, comparable with the published "binary on disk" of single-binary systems:
# sluice's binaries (stripped), the shared libraries they and nginx load beyond Debian's
# base system (footprint_base_pkgs: libfcgi, libcjson, libsqlite3, libbrotli, ... count;
# libc does not), and nginx's binary; then, on its own row, libpq and its dependencies,
# which only a PostgreSQL host needs (the workers load it at run time).  Run by bench/run
# after suite_footprint.
suite_footprint_more() {
	local scratch=$BENCH_TMP/footprint-disk bin lib pkg size total=0 libs=0 bins=0 ngx base
	local counted=" " pq pqlibs=0
	mkdir -p "$scratch"
	base=" $(footprint_base_pkgs | tr '\n' ' ') "
	ngx=$(readlink -f /usr/sbin/nginx)
	for bin in "$TOP"/bin/*; do
		[ -x "$bin" ] || continue
		strip -o "$scratch/$(basename "$bin")" "$bin" 2>/dev/null || cp "$bin" "$scratch/"
		bins=$((bins + $(stat -c %s "$scratch/$(basename "$bin")")))
	done
	{
		echo "### footprint: size on disk with shared libraries"
		echo
		echo "The published figures are one binary each, its libraries inside it. sluice's binaries load shared libraries, and nginx is part of the stack: here they are added up. A library counts unless its Debian package is part of the base system every Debian host has (Essential and required packages and their dependencies, as debootstrap's minbase installs them)."
		echo
		echo "| item | package | bytes |"
		echo "|---|---|---|"
		echo "| sluice's binaries, stripped ($(ls "$scratch" | wc -l)) | | $bins |"
	} | bench_report
	for lib in $(footprint_ldd "$TOP"/bin/* "$ngx"); do
		pkg=$(footprint_pkg "$lib")
		[ -n "$pkg" ] && [[ "$base" == *" $pkg "* ]] && continue
		size=$(stat -c %s "$lib")
		libs=$((libs + size))
		counted+="$lib "
		echo "| $(basename "$lib") | ${pkg:-?} | $size |" | bench_report
	done
	size=$(stat -c %s "$ngx")
	total=$((bins + libs + size))
	# libpq is not linked: a worker loads it when its database is PostgreSQL (common/pq.c).
	# What a PostgreSQL host needs besides: libpq and its libraries beyond the base system
	# and those counted above.
	# awk reads the whole list: leaving at the first match would end ldconfig's output
	# with SIGPIPE (56 KB here), a failed pipeline under pipefail, 12 runs in 200.
	pq=$(ldconfig -p 2>/dev/null | awk '$1 == "libpq.so.5" && p == "" { p = $NF } END { print p }')
	if [ -n "$pq" ]; then
		for lib in $( { readlink -f "$pq"; footprint_ldd "$pq"; } | sort -u); do
			[[ "$counted" == *" $lib "* ]] && continue
			pkg=$(footprint_pkg "$lib")
			[ -n "$pkg" ] && [[ "$base" == *" $pkg "* ]] && continue
			pqlibs=$((pqlibs + $(stat -c %s "$lib")))
		done
	fi
	{
		echo "| nginx | $(footprint_pkg "$ngx") | $size |"
		echo "| **total: binaries + libraries + nginx** | | **$total** ($(awk -v t="$total" 'BEGIN { printf "%.1f MB", t / 1e6 }')) |"
		[ -n "$pq" ] && echo "| with PostgreSQL: libpq and the libraries it loads beyond those above (loaded at run time, only by a worker whose database is PostgreSQL) | libpq5 and its dependencies | $pqlibs (total $(awk -v t="$((total + pqlibs))" 'BEGIN { printf "%.1f MB", t / 1e6 }')) |"
		echo
	} | bench_report
	echo "footprint,disk-binaries,sluice,none,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$bins" >> "$BENCH_OUT/results.csv"
	bench_point footprint "sluice's binaries on disk, stripped" "$bins bytes"
	echo "footprint,disk-libraries,sluice,none,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$libs" >> "$BENCH_OUT/results.csv"
	bench_point footprint "shared libraries beyond the base system" "$libs bytes"
	echo "footprint,disk-total,sluice,none,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$total" >> "$BENCH_OUT/results.csv"
	bench_point footprint "binaries + libraries + nginx on disk" "$total bytes"
	{
		echo "### footprint: differences from the published benchmark (seed 000)"
		echo
		echo "| published | this run | same? |"
		echo "|---|---|---|"
		echo "| binary on disk: one binary per system (slonbase 21.3 MB, PocketBase 32.0 MB, PostgREST 19.6 MB), its libraries linked in | sluice's binaries stripped, each row alone; and above, their total with the shared libraries beyond the base system and nginx ($(awk -v t="$total" 'BEGIN { printf "%.1f MB", t / 1e6 }')) | the total is the same quantity (what a host needs on disk to serve the API); a single binary's row is not |"
		echo "| resident memory, idle: one process (40, 41, 15 MB) | many processes (a pool per endpoint, sluiced, nginx) sharing libraries and pages | a summed RSS counts each shared page once per process: it is not comparable with one process's RSS; the whole stack's memory is comparable as summed PSS (shared pages divided among their sharers) or USS (pages of that stack alone) |"
		echo "| their PostgreSQL server not counted | sluice's PostgreSQL not counted; SQLite is inside the workers and counted | same rule |"
		echo "| a 4-vCPU cloud VM, after start-up | this machine, after one request per route | other hardware; idle after warm-up both |"
		echo
	} | bench_report
}
