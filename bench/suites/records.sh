# bench/suites/records.sh: the records API (PocketBase's dialect) against seed 000's table
# (sourced by bench/run: `bench/run records`).
#
# The slonbase benchmark's scenarios on bin/records (handlers/records/, docs/records.md):
# /api/health, view one post, list 30 posts, list 30 filtered on the indexed status, list
# 30 with expand=author, create a post, and sign-in (auth-with-password, bcrypt cost 10);
# besides them, the three lists with skipTotal=1 (no count(*)) and an update of one of the
# signed-in user's posts.  On SQLite and on a throwaway PostgreSQL cluster, each seeded by
# build/rel/sql/records-seed with its default data set (300 users, 5,000 posts, 15,000
# comments, every password password123), through the tuned profile, 32 connections, the
# medians of BENCH_RUNS runs after a warm-up (bench/records.lua makes the requests that
# need ids, a body or a token).  The report puts each scenario's ratio to /api/health
# beside slonbase's own (the targets of issue 17), bcrypt compares per second on the
# server's core beside sign-in, and the records pool's footprint: the stripped binary with
# its non-base libraries, the pool's RSS and PSS after the run, and the whole stack's PSS.
#
# Settings: BENCH_RECORDS_DBS ("sqlite postgresql"), BENCH_RECORDS_CONNS (32),
# BENCH_RECORDS_SIGNIN_CONNS (4: a sign-in costs one bcrypt compare, some 50 ms of a core),
# BENCH_RECORDS_POOL (by default "workers=auto threads=auto", the shipped pool, resolved
# for the CPUs the server is pinned to).

RECORDS_SCENARIOS="view list list_skiptotal filtered filtered_skiptotal expanded expanded_skiptotal create update signin"
# Seed 000 (slonbase 2.2 and PocketBase 0.40.6 on a 4-vCPU cloud VM): req/s.
declare -A RECORDS_SLON=([health]=44316 [view]=19965 [list]=7814 [filtered]=7100 [expanded]=3906 [create]=7424)
declare -A RECORDS_PB=([health]=32270 [view]=11484 [list]=1610 [filtered]=105 [expanded]=1065 [create]=4051)
# Issue 17's targets: at least this ratio to /api/health (slonbase's own in brackets).
declare -A RECORDS_TARGET=([view]=0.5 [list]=0.2 [filtered]=0.2 [expanded]=0.1 [create]=0.2)
declare -A RECORDS_LABEL=([health]="health (/api/health)" [view]="view one" [list]="list 30"
    [list_skiptotal]="list 30, skipTotal" [filtered]="list 30 filtered (status)"
    [filtered_skiptotal]="list 30 filtered, skipTotal" [expanded]="list 30, expand=author"
    [expanded_skiptotal]="list 30 expanded, skipTotal" [create]="create" [update]="update own post"
    [signin]="sign-in (auth-with-password)")

# records_pss_kib PID...: the summed proportional set size (KiB) of the processes.
records_pss_kib() {
	local p sum=0
	for p in "$@"; do
		sum=$((sum + $(bench_smaps_kib "$p" Pss)))
	done
	echo "$sum"
}

# records_bcrypt_per_s: bcrypt cost-10 comparisons a second on the server's core, through
# the system's crypt(3) (libcrypt, as bin/records uses it), for about a second.
records_bcrypt_per_s() {
	command -v perl >/dev/null || { echo 0; return; }
	# shellcheck disable=SC2016
	taskset -c "$SERVER_CPUS" perl -MTime::HiRes=time -e '
		my ($n, $t0, $salt) = (0, time, q($2b$10$abcdefghijklmnopqrstuu));
		# Arguments that vary: perl folds a crypt() of constants at compile time.
		while (time - $t0 < 1) { crypt("password" . ($n % 2), $salt); $n++ }
		printf "%.1f\n", $n / (time - $t0)'
}

suite_records() {
	local dbs=${BENCH_RECORDS_DBS:-sqlite postgresql} conns=${BENCH_RECORDS_CONNS:-32}
	local signin_conns=${BENCH_RECORDS_SIGNIN_CONNS:-4}
	local seed=$TOP/build/rel/sql/records-seed scratch=$BENCH_TMP/records
	local db url pool auth s ratio target keydir run_user pids pid rss pss stack_pss pg_pss
	local bin_bytes lib_bytes lib libs bcrypt
	local qs='/api/collections/posts/records?perPage=30'
	# The SQLite database alone in its directory, which sluiced then hands to its run user.
	mkdir -p "$scratch/sqlite"
	chmod 755 "$scratch" "$scratch/sqlite"
	# The PostgreSQL stack's token secret: in a directory of its own that the workers (the
	# run user when bench/run is root) may write.
	keydir=$scratch/key
	mkdir -p "$keydir"
	if [ "$(id -u)" -eq 0 ]; then
		run_user=$("$TOP/bin/sluiced" -c "$TOP/conf/endpoints.conf" user)
		chown "${run_user%%:*}" "$keydir"
	fi
	bcrypt=$(records_bcrypt_per_s)
	bench_point records "bcrypt cost 10 compares on CPUs $SERVER_CPUS" "$bcrypt /s"
	echo "records,bcrypt_compares,sluice,none,none,1,1,$bcrypt,0,0,0,0,0,0,0,0,0,0,0" >> "$BENCH_OUT/results.csv"
	{
		echo "## records: the records API (PocketBase's dialect) against seed 000"
		echo
		echo "bin/records through the tuned profile, $conns connections, median of $BENCH_RUNS runs of $BENCH_DURATION s after a ${BENCH_WARMUP} s warm-up, runs interleaved. Dataset: build/rel/sql/records-seed's default (300 users, 5,000 posts: 60% published, 25% draft, 15% archived; 15,000 comments), reseeded per database. Requests: view one = a random post of the first 500 (bench/records.lua), list 30 = \`?perPage=30\` (no sort, the count(*) included), filtered = \`&filter=(status='published')\` (an indexed column), expanded = \`&expand=author\`, the skipTotal rows the same with \`skipTotal=1\`, create = a post by the signed-in user user0001 (its create rule needs the token), update = a new title on one of that user's posts (its update rule \`author = @request.auth.id\`), sign-in = a random seeded user's auth-with-password (bcrypt cost 10) with $signin_conns connections, since 32 clients each waiting for 32 compares of some 50 ms would run into wrk's 2 s timeout. The choices seed 000 leaves open (its dataset, sort, page) are these ones."
		echo
		echo "Seed 000's figures (slonbase 2.2 on PostgreSQL, PocketBase 0.40.6 on SQLite) were measured on other hardware (a 4-vCPU cloud VM, 3 CPUs for the server): compare the ratios to the health check, not the req/s. The target column is issue 17's: at least that ratio, slonbase's own ratio in brackets."
		echo
		echo "bcrypt: $bcrypt cost-10 compares a second through crypt(3) on CPUs $SERVER_CPUS (a sign-in is one compare)."
		echo
	} | bench_report
	for db in $dbs; do
		case $db in
		sqlite)
			url=sqlite:$scratch/sqlite/records.db
			"$seed" -f -S "$TOP/sql/records" "$url" >/dev/null ;;
		postgresql)
			bench_pg_start records || { echo "PostgreSQL did not start: no $db rows" | bench_report; continue; }
			url=$BENCH_PG_URL
			"$seed" -f -S "$TOP/sql/records" "$url" >/dev/null ;;
		esac
		pool=${BENCH_RECORDS_POOL:-workers=auto threads=auto}
		bench_stack_start "records-$db" tuned "set nginx_workers 2
db records $url
records /api/ $pool db=records records_secret_file=$keydir/records-secret.key"
		# The ids and the token bench/records.lua needs.
		curl -s "http://127.0.0.1:$BENCH_PORT/api/collections/posts/records?perPage=500&skipTotal=1&fields=id" |
		    jq -r '.items[].id' > "$scratch/ids-$db"
		auth=$(curl -s -X POST -H 'Content-Type: application/json' \
		    -d '{"identity":"user0001@example.com","password":"password123"}' \
		    "http://127.0.0.1:$BENCH_PORT/api/collections/users/auth-with-password")
		export RECORDS_TOKEN RECORDS_USER RECORDS_IDS=$scratch/ids-$db RECORDS_OWN_IDS=$scratch/own-$db
		RECORDS_TOKEN=$(jq -r .token <<<"$auth")
		RECORDS_USER=$(jq -r .record.id <<<"$auth")
		curl -s -G "http://127.0.0.1:$BENCH_PORT/api/collections/posts/records" --data-urlencode \
		    "filter=author='$RECORDS_USER'" -d perPage=100 -d skipTotal=1 -d fields=id |
		    jq -r '.items[].id' > "$RECORDS_OWN_IDS"
		BENCH_LUA=$TOP/bench/records.lua bench_measure records tuned "$db" "$conns" \
		    health=/api/health view=lua:view list="$qs" list_skiptotal="$qs&skipTotal=1" \
		    filtered="$qs&filter=(status%3D%27published%27)" \
		    filtered_skiptotal="$qs&filter=(status%3D%27published%27)&skipTotal=1" \
		    expanded="$qs&expand=author" expanded_skiptotal="$qs&expand=author&skipTotal=1" \
		    create=lua:create update=lua:update
		# Sign-in apart, with fewer clients: each costs one bcrypt compare (some 50 ms
		# of a core), so 32 clients would wait past wrk's 2 s timeout.
		BENCH_LUA=$TOP/bench/records.lua bench_measure records tuned "$db" "$signin_conns" signin=lua:auth
		# The footprint after the run: the records pool, then the stack around it.
		pids=$("$TOP/bin/sluiced" -r "$STACK_RUN" ctl status |
		    awk '$1 == "records" { for (i = 1; i <= NF; i++) if ($i ~ /^pids=/) { sub(/pids=/, "", $i); print $i } }')
		rss=0
		for pid in ${pids//,/ }; do rss=$((rss + $(bench_rss_kib "$pid"))); done
		# shellcheck disable=SC2086
		pss=$(records_pss_kib ${pids//,/ })
		# shellcheck disable=SC2046,SC2086
		stack_pss=$(records_pss_kib "${STACK_PIDS[0]}" ${pids//,/ } "${STACK_PIDS[1]}" \
		    $(pgrep -P "${STACK_PIDS[1]}" 2>/dev/null))
		pg_pss=n/a
		if [ "$db" = postgresql ]; then
			# shellcheck disable=SC2046,SC2086
			pg_pss=$(records_pss_kib $(pgrep -u postgres -f "postgres.*$BENCH_PG_DIR" 2>/dev/null;
			    pgrep -u postgres -P "$(head -1 "$BENCH_PG_DIR/data/postmaster.pid" 2>/dev/null || echo 0)" 2>/dev/null))
		fi
		for s in rss-pool:$rss pss-pool:$pss pss-stack:$stack_pss; do
			echo "records,${s%%:*},sluice,tuned,$db,0,1,0,0,0,0,0,0,0,0,0,0,0,$(( ${s#*:} * 1024 ))" >> "$BENCH_OUT/results.csv"
			bench_point records "${s%%:*} ($db)" "${s#*:} KiB"
		done
		{
			echo "### $db (pool: $pool; /api/health ${MEAS[health.rps]} req/s, p99 ${MEAS[health.p99]} ms)"
			echo
			echo "| scenario | req/s | p99 ms | errors | / health | target | slonbase 2.2 req/s (/ health) | PocketBase 0.40.6 req/s (/ health) |"
			echo "|---|---|---|---|---|---|---|---|"
		} | bench_report
		for s in health $RECORDS_SCENARIOS; do
			ratio=$(awk -v a="${MEAS[$s.rps]}" -v b="${MEAS[health.rps]}" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
			target=
			if [ -n "${RECORDS_TARGET[$s]:-}" ]; then
				target="&ge; ${RECORDS_TARGET[$s]} ($(awk -v a="${RECORDS_SLON[$s]}" -v b="${RECORDS_SLON[health]}" 'BEGIN { printf "%.2f", a / b }'))"
				awk -v r="$ratio" -v t="${RECORDS_TARGET[$s]}" 'BEGIN { exit !(r < t) }' && target="$target **short**"
			fi
			[ "$s" = signin ] && target="bcrypt: $bcrypt /s"
			printf '| %s | %.0f | %s | %s | %s | %s | %s | %s |\n' "${RECORDS_LABEL[$s]}" "${MEAS[$s.rps]}" \
			    "${MEAS[$s.p99]}" "${MEAS[$s.err]}" "$ratio" "$target" \
			    "$( [ -n "${RECORDS_SLON[$s]:-}" ] && awk -v a="${RECORDS_SLON[$s]}" -v b="${RECORDS_SLON[health]}" 'BEGIN { printf "%d (%.2f)", a, a / b }' || echo n/a)" \
			    "$( [ -n "${RECORDS_PB[$s]:-}" ] && awk -v a="${RECORDS_PB[$s]}" -v b="${RECORDS_PB[health]}" 'BEGIN { printf "%d (%.2f)", a, a / b }' || echo n/a)" | bench_report
			printf '%s\t%s\t%s\n' "${RECORDS_LABEL[$s]}" "$([ "$db" = sqlite ] && echo SQLite || echo PostgreSQL)" \
			    "$ratio" >> "$scratch/chart.txt"
		done
		{
			echo
			echo "Footprint after the run: the records pool's RSS $rss KiB, PSS $pss KiB; the stack's PSS (sluiced, the pool, nginx) $stack_pss KiB$([ "$db" = postgresql ] && echo "; the PostgreSQL cluster's PSS $pg_pss KiB, not in the stack's (seed 000 did not count its PostgreSQL either)")."
			echo
		} | bench_report
		bench_stack_stop
		[ "$db" = postgresql ] && bench_pg_stop
	done
	# The binary and its libraries beyond the C library, as seed 000's "binary on disk".
	strip -o "$scratch/records.stripped" "$TOP/bin/records" 2>/dev/null || cp "$TOP/bin/records" "$scratch/records.stripped"
	bin_bytes=$(stat -c %s "$scratch/records.stripped")
	libs=$(ldd "$TOP/bin/records" | awk '$3 ~ /^\// { print $3 }' | grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' || true)
	lib_bytes=0
	for lib in $libs; do lib_bytes=$((lib_bytes + $(stat -L -c %s "$lib"))); done
	echo "records,binary-records+libs,sluice,none,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$((bin_bytes + lib_bytes))" >> "$BENCH_OUT/results.csv"
	bench_point records "bin/records stripped with its non-base libraries" "$((bin_bytes + lib_bytes)) bytes"
	{
		echo "Binary on disk: bin/records stripped $bin_bytes bytes, with its $(wc -w <<<"$libs") non-base libraries ($(for lib in $libs; do basename "$lib"; done | tr '\n' ' ' | sed 's/ $//')) $((bin_bytes + lib_bytes)) bytes; seed 000: slonbase 21.3 MB, PocketBase 32.0 MB, idle resident memory 40 MB and 41 MB."
		echo
	} | bench_report
	if [ -s "$scratch/chart.txt" ]; then
		bench_pivot scenario < "$scratch/chart.txt" > "$scratch/chart.dat"
		bench_bar_chart records "records API: req/s as a ratio to /api/health" "ratio to /api/health" "$scratch/chart.dat"
	fi
}
