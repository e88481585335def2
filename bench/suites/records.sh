# bench/suites/records.sh: the records API (PocketBase's dialect) against seed 000's table
# (sourced by bench/run: `bench/run records`).
#
# The slonbase benchmark's scenarios on bin/records (handlers/records/, docs/records.md):
# /api/health, view one post, list 30 posts, list 30 filtered on the indexed status, list
# 30 with expand=author, create a post, and sign-in (auth-with-password, bcrypt cost 10);
# besides them, the three lists with skipTotal=1 (no count(*)), an update of one of the
# signed-in user's posts, and view one measured while 32 other clients sign in (issue 33's
# target 4).  On SQLite and on a throwaway PostgreSQL cluster, each seeded by
# build/rel/sql/records-seed, through the tuned profile, 32 connections, the medians of
# BENCH_RUNS runs after a warm-up (bench/records.lua makes the requests that need ids, a
# body or a token).
#
# The data set is a preset: "default" (the seeder's default: 300 users, 5,000 posts,
# 15,000 comments, every password password123) and "large" (RECORDS_POSTS posts, 1,000,000
# by default, with users and comments scaled alike: 60,000 and 3,000,000).  Every run
# measures its preset's data set: after every run of create (warm-up, settle and measured
# alike) the posts it made (those created after the seed's last one) are deleted through
# the records API's DELETE, as the signed-in user (so that whatever the server keeps
# beside the rows stays in step), then SQLite's WAL is checkpointed or PostgreSQL's posts
# table vacuumed; after every run of update the titles it changed are put back the same
# way.  The posts are counted (SQL count(*)) before and after each measured run and after
# each restore, and the report gives those counts beside each scenario.
#
# The report puts each scenario's ratio to /api/health beside issue 33's target and
# slonbase's own ratio, bcrypt compares per second on the server's core beside sign-in
# (and the share of them sign-in reaches), per preset the large / default ratios of the
# counted lists, and the records pool's footprint: the stripped binary with its non-base
# libraries, the pool's RSS and PSS after the run, and the whole stack's PSS.
#
# Settings: BENCH_RECORDS_PRESETS ("default"; "default large" runs both), RECORDS_POSTS
# (the large preset's posts, 1000000), BENCH_RECORDS_DBS ("sqlite postgresql"),
# BENCH_RECORDS_CONNS (32), BENCH_RECORDS_SIGNIN_CONNS (4: a sign-in costs one bcrypt
# compare, some 50 ms of a core), BENCH_RECORDS_LOADED_SIGNIN_CONNS (32: the sign-in
# clients beside the view one run), BENCH_RECORDS_POOL (by default "workers=auto
# threads=auto", the shipped pool, resolved for the CPUs the server is pinned to),
# BENCH_RECORDS_SCENARIOS (the scenarios measured, by default all of RECORDS_SCENARIOS's;
# health always runs), BENCH_RECORDS_LARGE_SCENARIOS (the scenarios of a preset other than default: "view list
# filtered expanded", what target 2 compares; "all": every one, sign-in included).

RECORDS_SCENARIOS=${BENCH_RECORDS_SCENARIOS:-"view list list_skiptotal filtered filtered_skiptotal expanded expanded_skiptotal create update signin"}
# Seed 000 (slonbase 2.2 and PocketBase 0.40.6 on a 4-vCPU cloud VM): req/s.
declare -A RECORDS_SLON=([health]=44316 [view]=19965 [list]=7814 [filtered]=7100 [expanded]=3906 [create]=7424)
declare -A RECORDS_PB=([health]=32270 [view]=11484 [list]=1610 [filtered]=105 [expanded]=1065 [create]=4051)
# Issue 33's targets: at least this ratio to /api/health (slonbase's own in brackets), on
# both databases and both presets, with p99 <= RECORDS_TARGET_P99 ms in every row but
# sign-in; the counted lists of the large preset at least RECORDS_TARGET_LARGE of their
# figure at the default one; view one while 32 clients sign in p99 <= RECORDS_TARGET_P99;
# sign-in at least RECORDS_TARGET_BCRYPT of bcrypt's compares a second.
declare -A RECORDS_TARGET=([view]=0.5 [list]=0.2 [filtered]=0.2 [expanded]=0.1 [create]=0.2)
RECORDS_TARGET_P99=10
RECORDS_TARGET_LARGE=0.5
RECORDS_TARGET_BCRYPT=0.9
declare -A RECORDS_LABEL=([health]="health (/api/health)" [view]="view one" [list]="list 30"
    [list_skiptotal]="list 30, skipTotal" [filtered]="list 30 filtered (status)"
    [filtered_skiptotal]="list 30 filtered, skipTotal" [expanded]="list 30, expand=author"
    [expanded_skiptotal]="list 30 expanded, skipTotal" [create]="create" [update]="update own post"
    [signin]="sign-in (auth-with-password)" [view_signin]="view one while clients sign in"
    [signin_view]="sign-in beside view one")

# records_pss_kib PID...: the summed proportional set size (KiB) of the processes.
records_pss_kib() {
	local p sum=0
	for p in "$@"; do
		sum=$((sum + $(bench_smaps_kib "$p" Pss)))
	done
	echo "$sum"
}

# records_bcrypt_per_s: bcrypt cost-10 comparisons a second on the server's core, through
# the system's crypt(3) (libcrypt, as bin/records uses it): the best of three seconds, since
# a shared machine's other work takes the core from one second to the next.
records_bcrypt_per_s() {
	command -v perl >/dev/null || { echo 0; return; }
	# shellcheck disable=SC2016
	taskset -c "$SERVER_CPUS" perl -MTime::HiRes=time -e '
		my ($best, $salt) = (0, q($2b$10$abcdefghijklmnopqrstuu));
		for my $round (1 .. 3) {
			my ($n, $t0) = (0, time);
			# Arguments that vary: perl folds a crypt() of constants at compile time.
			while (time - $t0 < 1) { crypt("password" . ($n % 2), $salt); $n++ }
			my $rate = $n / (time - $t0);
			$best = $rate if $rate > $best;
		}
		printf "%.1f\n", $best'
}

# records_preset NAME: the preset's sizes into REC_USERS, REC_POSTS, REC_COMMENTS (users
# and comments in the default's proportions: 300 and 15,000 for 5,000 posts).
records_preset() {
	case $1 in
	default) REC_USERS=300 REC_POSTS=5000 REC_COMMENTS=15000 ;;
	large)
		REC_POSTS=${RECORDS_POSTS:-1000000}
		REC_USERS=$((REC_POSTS * 3 / 50)) REC_COMMENTS=$((REC_POSTS * 3)) ;;
	*) echo "bench: records: no preset '$1' (default, large)" >&2; return 1 ;;
	esac
}

# records_sql SQL: runs SQL on the database being measured (REC_DB): the sqlite3 shell as
# the file's owner (the workers' run user when bench/run is root, so that no file of the
# database changes hands), or psql; prints the rows.
records_sql() {
	local as=() owner
	case $REC_DB in
	sqlite)
		owner=$(stat -c %U "$REC_SQLITE_FILE")
		[ "$(id -u)" -eq 0 ] && [ "$owner" != root ] && as=(runuser -u "$owner" --)
		"${as[@]}" sqlite3 -batch -cmd '.timeout 10000' "$REC_SQLITE_FILE" "$1" ;;
	postgresql)
		"$BENCH_PG_BIN/psql" -X -q -A -t -h "$BENCH_PG_DIR" -p "$BENCH_PG_PORT" -U postgres \
		    -d "$REC_PG_NAME" -c "$1" ;;
	esac
}

records_count() { records_sql 'SELECT count(*) FROM posts' 2>/dev/null || echo n/a; }

# records_each METHOD: sends METHOD to each post of stdin's lines ("ID" or "ID<TAB>JSON
# body") as the signed-in user, 16 at a time (curl --parallel, pinned like wrk); prints the
# number of answers that were not 2xx.
records_each() {
	local cfg=$REC_SCRATCH/each.curl
	awk -F'\t' -v port="$BENCH_PORT" -v m="$1" -v tok="$RECORDS_TOKEN" '
		$1 == "" { next }
		{
			if (n++) print "next"
			print "url = \"http://127.0.0.1:" port "/api/collections/posts/records/" $1 "\""
			print "request = \"" m "\""
			print "output = \"/dev/null\""
			print "write-out = \"%{http_code}\\n\""
			print "header = \"Authorization: " tok "\""
			if (NF > 1) {
				b = $2; gsub(/[\\"]/, "\\\\&", b)
				print "header = \"Content-Type: application/json\""
				print "data = \"" b "\""
			}
		}' > "$cfg"
	[ -s "$cfg" ] || { echo 0; return 0; }
	taskset -c "$WRK_CPUS" curl -s --parallel --parallel-max 16 -K "$cfg" 2>/dev/null |
	    awk '$1 !~ /^2[0-9][0-9]$/ { n++ } END { print n + 0 }'
}

# records_restore SCENARIO: puts back what a run of SCENARIO changed.  create: the posts
# created after the seed's last one, deleted through the API a page of 1,000 at a time;
# update: the signed-in user's titles as seeded.  Then SQLite's WAL is checkpointed
# (truncated) or PostgreSQL's posts vacuumed, so that the next run starts where the
# first one did.  Failures are counted in REC_RESTORE_ERRORS.
records_restore() {
	local ids bad
	case $1 in
	create)
		[ -n "$REC_SEED_LAST" ] || { REC_RESTORE_ERRORS=$((REC_RESTORE_ERRORS + 1)); return 0; }
		for _ in $(seq 10000); do
			ids=$(curl -s -G "http://127.0.0.1:$BENCH_PORT/api/collections/posts/records" \
			    --data-urlencode "filter=created > '$REC_SEED_LAST'" -d perPage=1000 \
			    -d skipTotal=1 -d fields=id | jq -r '.items[]?.id' 2>/dev/null || true)
			[ -n "$ids" ] || break
			bad=$(records_each DELETE <<<"$ids")
			[ "$bad" -eq 0 ] || { REC_RESTORE_ERRORS=$((REC_RESTORE_ERRORS + bad)); break; }
		done ;;
	update)
		bad=$(records_each PATCH < "$REC_SCRATCH/own-titles")
		REC_RESTORE_ERRORS=$((REC_RESTORE_ERRORS + bad)) ;;
	*) return 0 ;;
	esac
	case $REC_DB in
	sqlite) records_sql 'PRAGMA wal_checkpoint(TRUNCATE)' >/dev/null 2>&1 || true ;;
	postgresql) records_sql 'VACUUM posts' >/dev/null 2>&1 || true ;;
	esac
}

# The BENCH_RUN_HOOK of the suite (bench_measure): counts the posts before and after each
# measured run, and puts back what a writing run changed after every run of it.  One line
# per measured run in REC_SIZES: "SCENARIO RUN BEFORE AFTER RESTORED" ("-": nothing to
# restore).
records_hook() {
	local scenario=$1 phase=$2 run=$3 after=- t0
	if [ "$phase" = before ]; then
		REC_BEFORE=$(records_count)
		return 0
	fi
	case $scenario in
	create|update)
		[ "$phase" = run ] && after=$(records_count)
		t0=$(date +%s.%N)
		records_restore "$scenario"
		REC_RESTORE_MAX=$(awk -v a="$t0" -v b="$(date +%s.%N)" -v m="$REC_RESTORE_MAX" \
		    'BEGIN { t = b - a; printf "%.1f", (t > m ? t : m) }')
		[ "$phase" = run ] && echo "$scenario $run $REC_BEFORE $after $(records_count)" >> "$REC_SIZES" ;;
	*)
		[ "$phase" = run ] && echo "$scenario $run $REC_BEFORE $(records_count) -" >> "$REC_SIZES" ;;
	esac
	return 0
}

# records_sizes SCENARIO: the post counts of the scenario's measured runs, each distinct
# "before -> after (-> restored)" once, in the order seen.
records_sizes() {
	awk -v s="$1" '$1 == s {
		t = ($3 == $4) ? $3 : $3 " &rarr; " $4
		if ($5 != "-") t = t " &rarr; " $5
		if (!(t in seen)) { seen[t] = 1; out = out (out == "" ? "" : "; ") t }
	} END { print (out == "" ? "n/a" : out) }' "$REC_SIZES"
}

# records_medians NAME ROWS: MEAS[NAME.rps|p99|err] from bench_wrk's lines.
records_medians() {
	MEAS[$1.rps]=$(printf '%s' "$2" | awk '{ print $1 }' | bench_median)
	MEAS[$1.p99]=$(printf '%s' "$2" | awk '{ print $2 }' | bench_median)
	MEAS[$1.err]=$(printf '%s' "$2" | awk '{ s += $3 } END { print s + 0 }')
}

# records_loaded_view DB CONNS SIGNIN_CONNS: issue 33's target 4, BENCH_RUNS times: wrk
# signs in with SIGNIN_CONNS clients (timeout 10 s: a compare waits its turn behind the
# others) while, from 1 s into it, a second wrk views posts with CONNS clients for
# BENCH_DURATION; both on WRK_CPUS.  MEAS[view_signin.*] and MEAS[signin_view.*].
records_loaded_view() {
	local db=$1 conns=$2 sconns=$3 r spid rows_v='' rows_s='' long
	local url=http://127.0.0.1:$BENCH_PORT lua=$TOP/bench/records.lua
	long=$(awk -v d="$BENCH_DURATION" 'BEGIN { print d + 2 }')
	for r in $(seq "$BENCH_RUNS"); do
		REC_BEFORE=$(records_count)
		SCENARIO=auth BENCH_DURATION=$long bench_wrk records signin_view tuned "$db" \
		    "$sconns" "$r" "$url" -s "$lua" --timeout 10s > "$REC_SCRATCH/signin.out" &
		spid=$!
		sleep 1
		rows_v+="$(SCENARIO=view bench_wrk records view_signin tuned "$db" "$conns" "$r" "$url" -s "$lua")"$'\n'
		wait "$spid" || true
		rows_s+="$(cat "$REC_SCRATCH/signin.out")"$'\n'
		echo "view_signin $r $REC_BEFORE $(records_count) -" >> "$REC_SIZES"
	done
	records_medians view_signin "$rows_v"
	records_medians signin_view "$rows_s"
}

# records_ratio A B: A / B to two decimals (0 when B is not positive).
records_ratio() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }'; }
# records_short RATIO TARGET: " **short**" when RATIO < TARGET.
records_short() { awk -v r="$1" -v t="$2" 'BEGIN { if (r < t) printf " **short**" }'; }

# records_run PRESET DB: seeds DB with PRESET, starts the stack, measures every scenario,
# reports its table and footprint, stops the stack.
records_run() {
	local preset=$1 db=$2 conns=${BENCH_RECORDS_CONNS:-32}
	local signin_conns=${BENCH_RECORDS_SIGNIN_CONNS:-4}
	local loaded_conns=${BENCH_RECORDS_LOADED_SIGNIN_CONNS:-32}
	local seed=$TOP/build/rel/sql/records-seed url pool auth s ratio target p99 t0 took
	local pids pid rss pss stack_pss pg_pss dbname
	local qs='/api/collections/posts/records?perPage=30'
	records_preset "$preset" || return 0
	# The default preset's rows keep the database's name; the large one's say it.
	dbname=$db
	[ "$preset" = default ] || dbname=$db-$preset
	REC_DB=$db
	REC_SIZES=$REC_SCRATCH/sizes-$preset-$db
	REC_RESTORE_ERRORS=0 REC_RESTORE_MAX=0
	: > "$REC_SIZES"
	t0=$(date +%s.%N)
	case $db in
	sqlite)
		REC_SQLITE_FILE=$REC_SCRATCH/sqlite/records.db
		url=sqlite:$REC_SQLITE_FILE
		"$seed" -q -f -u "$REC_USERS" -p "$REC_POSTS" -c "$REC_COMMENTS" -S "$TOP/sql/records" \
		    "$url" ;;
	postgresql)
		# A cluster per preset (bench_pg_start makes one per name).
		REC_PG_NAME=records_$preset
		bench_pg_start "$REC_PG_NAME" || { echo "PostgreSQL did not start: no $db rows" | bench_report; return 0; }
		url=$BENCH_PG_URL
		"$seed" -q -f -u "$REC_USERS" -p "$REC_POSTS" -c "$REC_COMMENTS" -S "$TOP/sql/records" \
		    "$url"
		# Visibility map and statistics as autovacuum would leave them, before the runs
		# rather than in the middle of one.
		records_sql 'VACUUM ANALYZE' >/dev/null ;;
	esac
	took=$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN { printf "%.1f", b - a }')
	echo "records: seeded $preset on $db ($REC_USERS users, $REC_POSTS posts, $REC_COMMENTS comments) in $took s" >&2
	pool=${BENCH_RECORDS_POOL:-workers=auto threads=auto}
	bench_stack_start "records-$preset-$db" tuned "set nginx_workers 2
db records $url
records /api/ $pool db=records db_plans=generic records_secret_file=$REC_SCRATCH/key/records-secret.key"
	REC_SEEDED=$(records_count)
	# The seed's last post: those created after it are the runs' (asked of the API, which
	# sorts on the indexed created; without it no post is deleted).
	REC_SEED_LAST=$(curl -s "http://127.0.0.1:$BENCH_PORT/api/collections/posts/records?perPage=1&sort=-created&skipTotal=1&fields=created" |
	    jq -r '.items[0].created // empty' 2>/dev/null || true)
	# The ids and the token bench/records.lua needs.
	curl -s "http://127.0.0.1:$BENCH_PORT/api/collections/posts/records?perPage=500&skipTotal=1&fields=id" |
	    jq -r '.items[].id' > "$REC_SCRATCH/ids-$db"
	auth=$(curl -s -X POST -H 'Content-Type: application/json' \
	    -d '{"identity":"user0001@example.com","password":"password123"}' \
	    "http://127.0.0.1:$BENCH_PORT/api/collections/users/auth-with-password")
	export RECORDS_TOKEN RECORDS_USER RECORDS_IDS=$REC_SCRATCH/ids-$db RECORDS_OWN_IDS=$REC_SCRATCH/own-$db
	export RECORDS_USERS=$REC_USERS
	RECORDS_TOKEN=$(jq -r .token <<<"$auth")
	RECORDS_USER=$(jq -r .record.id <<<"$auth")
	# The user's posts, with their titles as seeded (put back after each update run).
	curl -s -G "http://127.0.0.1:$BENCH_PORT/api/collections/posts/records" --data-urlencode \
	    "filter=author='$RECORDS_USER'" -d perPage=1000 -d skipTotal=1 -d fields=id,title |
	    jq -r '.items[] | [.id, ({title} | tojson)] | @tsv' > "$REC_SCRATCH/own-titles"
	cut -f1 "$REC_SCRATCH/own-titles" > "$RECORDS_OWN_IDS"
	local -A all=([view]=lua:view [list]="$qs" [list_skiptotal]="$qs&skipTotal=1"
	    [filtered]="$qs&filter=(status%3D%27published%27)"
	    [filtered_skiptotal]="$qs&filter=(status%3D%27published%27)&skipTotal=1"
	    [expanded]="$qs&expand=author" [expanded_skiptotal]="$qs&expand=author&skipTotal=1"
	    [create]=lua:create [update]=lua:update)
	local targets=(health=/api/health)
	REC_MEASURED="health"
	for s in $RECORDS_SCENARIOS; do
		[ "$s" = signin ] && continue
		if [ "$preset" != default ] && [ "${BENCH_RECORDS_LARGE_SCENARIOS:-}" != all ] &&
		    [[ " ${BENCH_RECORDS_LARGE_SCENARIOS:-view list filtered expanded} " != *" $s "* ]]; then
			continue
		fi
		targets+=("$s=${all[$s]}")
		REC_MEASURED+=" $s"
	done
	BENCH_RUN_HOOK=records_hook BENCH_LUA=$TOP/bench/records.lua bench_measure records tuned "$dbname" "$conns" \
	    "${targets[@]}"
	# Sign-in apart, with fewer clients: each costs one bcrypt compare (some 50 ms
	# of a core), so 32 clients would wait past wrk's 2 s timeout.
	# bcrypt's compares a second right before sign-in, so that the share sign-in reaches
	# compares figures of one moment of a shared machine.
	REC_BCRYPT=$(records_bcrypt_per_s)
	bench_point records "bcrypt cost 10 compares on CPUs $SERVER_CPUS (before $dbname's sign-in)" "$REC_BCRYPT /s"
	echo "records,bcrypt_compares,sluice,none,$dbname,1,1,$REC_BCRYPT,0,0,0,0,0,0,0,0,0,0,0" >> "$BENCH_OUT/results.csv"
	if [ "$preset" = default ] || [ "${BENCH_RECORDS_LARGE_SCENARIOS:-}" = all ]; then
		BENCH_RUN_HOOK=records_hook BENCH_LUA=$TOP/bench/records.lua bench_measure records tuned "$dbname" "$signin_conns" signin=lua:auth
		records_loaded_view "$dbname" "$conns" "$loaded_conns"
		REC_MEASURED+=" signin view_signin signin_view"
	fi
	# What the large / default table needs, per preset and database.
	for s in list filtered expanded; do
		REC_RPS[$preset.$db.$s]=${MEAS[$s.rps]:-}
	done
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
		echo "records,${s%%:*},sluice,tuned,$dbname,0,1,0,0,0,0,0,0,0,0,0,0,0,$(( ${s#*:} * 1024 ))" >> "$BENCH_OUT/results.csv"
		bench_point records "${s%%:*} ($dbname)" "${s#*:} KiB"
	done
	{
		echo "### $db, preset $preset: $REC_USERS users, $REC_SEEDED posts seeded, $REC_COMMENTS comments (pool: $pool; /api/health ${MEAS[health.rps]} req/s, p99 ${MEAS[health.p99]} ms)"
		echo
		echo "Seeded in $took s$([ "$db" = postgresql ] && echo ", VACUUM ANALYZE included"). Posts counted (SQL \`count(*)\`) before and after each measured run, and after the restore of a writing run (before &rarr; after &rarr; restored; each distinct sequence once): $(awk -v n="$REC_SEEDED" '$3 != n || ($5 != "-" && $5 != n) { bad++ } END { if (bad) printf "**%d runs did not start or end at the %s seeded posts**", bad, n; else printf "every run measured the %s seeded posts", n }' "$REC_SIZES") (the longest restore took $REC_RESTORE_MAX s)$([ "$REC_RESTORE_ERRORS" -gt 0 ] && echo "; **$REC_RESTORE_ERRORS restoring requests failed**")."
		echo
		echo "| scenario | req/s | p99 ms | errors | / health | target (issue 33) | slonbase 2.2 req/s (/ health) | PocketBase 0.40.6 req/s (/ health) | posts | server CPU &micro;s / request: sluice / nginx / PostgreSQL |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
	} | bench_report
	for s in $REC_MEASURED; do
		ratio=$(records_ratio "${MEAS[$s.rps]}" "${MEAS[health.rps]}")
		target=
		p99=${MEAS[$s.p99]}
		if [ -n "${RECORDS_TARGET[$s]:-}" ]; then
			target="&ge; ${RECORDS_TARGET[$s]}$(records_short "$ratio" "${RECORDS_TARGET[$s]}"), p99 &le; $RECORDS_TARGET_P99 ms$(records_short "$RECORDS_TARGET_P99" "$p99")"
		fi
		case $s in
		signin)
			ratio=$(records_ratio "${MEAS[$s.rps]}" "$REC_BCRYPT")
			target="&ge; $RECORDS_TARGET_BCRYPT of bcrypt's $REC_BCRYPT/s: $ratio$(records_short "$ratio" "$RECORDS_TARGET_BCRYPT")"
			ratio=$(records_ratio "${MEAS[$s.rps]}" "${MEAS[health.rps]}") ;;
		view_signin)
			target="p99 &le; $RECORDS_TARGET_P99 ms$(records_short "$RECORDS_TARGET_P99" "$p99") ($loaded_conns clients sign in)" ;;
		signin_view)
			target="$(records_ratio "${MEAS[$s.rps]}" "$REC_BCRYPT") of bcrypt's $REC_BCRYPT/s ($loaded_conns clients, beside $conns viewing)" ;;
		esac
		printf '| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %s |\n' "${RECORDS_LABEL[$s]}" "${MEAS[$s.rps]}" \
		    "$p99" "${MEAS[$s.err]}" "$ratio" "$target" \
		    "$( [ -n "${RECORDS_SLON[$s]:-}" ] && awk -v a="${RECORDS_SLON[$s]}" -v b="${RECORDS_SLON[health]}" 'BEGIN { printf "%d (%.2f)", a, a / b }' || echo n/a)" \
		    "$( [ -n "${RECORDS_PB[$s]:-}" ] && awk -v a="${RECORDS_PB[$s]}" -v b="${RECORDS_PB[health]}" 'BEGIN { printf "%d (%.2f)", a, a / b }' || echo n/a)" \
		    "$(records_sizes "${s/signin_view/view_signin}")" "${MEAS[$s.cpu]:-n/a}" | bench_report
		case $s in view_signin|signin_view) continue ;; esac
		printf '%s\t%s\t%s\n' "${RECORDS_LABEL[$s]}" \
		    "$([ "$db" = sqlite ] && echo SQLite || echo PostgreSQL)$([ "$preset" = default ] || echo ", $preset")" \
		    "$ratio" >> "$REC_SCRATCH/chart.txt"
	done
	{
		echo
		echo "Footprint after the run: the records pool's RSS $rss KiB, PSS $pss KiB; the stack's PSS (sluiced, the pool, nginx) $stack_pss KiB$([ "$db" = postgresql ] && echo "; the PostgreSQL cluster's PSS $pg_pss KiB, not in the stack's (seed 000 did not count its PostgreSQL either)")."
		echo
	} | bench_report
	bench_stack_stop
	[ "$db" = postgresql ] && bench_pg_stop
	# A large preset's files go before the next one is made.
	rm -f "$REC_SCRATCH"/sqlite/records.db*
	[ "$db" = postgresql ] && rm -rf "$BENCH_PG_DIR"
	return 0
}

declare -A REC_RPS
suite_records() {
	local dbs=${BENCH_RECORDS_DBS:-sqlite postgresql} presets=${BENCH_RECORDS_PRESETS:-default}
	local conns=${BENCH_RECORDS_CONNS:-32} signin_conns=${BENCH_RECORDS_SIGNIN_CONNS:-4}
	local loaded_conns=${BENCH_RECORDS_LOADED_SIGNIN_CONNS:-32}
	local preset db s keydir run_user bin_bytes lib_bytes lib libs sizes a b
	REC_SCRATCH=$BENCH_TMP/records
	# The SQLite database alone in its directory, which sluiced then hands to its run user.
	mkdir -p "$REC_SCRATCH/sqlite"
	chmod 755 "$REC_SCRATCH" "$REC_SCRATCH/sqlite"
	: > "$REC_SCRATCH/chart.txt"
	# The PostgreSQL stack's token secret: in a directory of its own that the workers (the
	# run user when bench/run is root) may write.
	keydir=$REC_SCRATCH/key
	mkdir -p "$keydir"
	if [ "$(id -u)" -eq 0 ]; then
		run_user=$("$TOP/bin/sluiced" -c "$TOP/conf/endpoints.conf" user)
		chown "${run_user%%:*}" "$keydir"
	fi
	sizes=
	for preset in $presets; do
		records_preset "$preset" || return 1
		sizes+="${sizes:+; }$preset: $REC_USERS users, $REC_POSTS posts, $REC_COMMENTS comments"
	done
	{
		echo "## records: the records API (PocketBase's dialect) against seed 000"
		echo
		echo "bin/records through the tuned profile (db_plans=generic, as conf/endpoints.conf ships it), $conns connections, median of $BENCH_RUNS runs of $BENCH_DURATION s after a ${BENCH_WARMUP} s warm-up, runs interleaved. Data sets (build/rel/sql/records-seed, reseeded per database; posts 60% published, 25% draft, 15% archived): $sizes. Requests: view one = a random post of the first 500 listed (bench/records.lua), list 30 = \`?perPage=30\` (no sort, the count(*) included), filtered = \`&filter=(status='published')\` (an indexed column), expanded = \`&expand=author\`, the skipTotal rows the same with \`skipTotal=1\`, create = a post by the signed-in user user0001 (its create rule needs the token), update = a new title on one of that user's posts (its update rule \`author = @request.auth.id\`), sign-in = a random seeded user's auth-with-password (bcrypt cost 10) with $signin_conns connections, since 32 clients each waiting for 32 compares of some 50 ms would run into wrk's 2 s timeout; view one while clients sign in = view one with $conns connections while a second wrk signs in with $loaded_conns (issue 33's target 4; wrk's timeout 10 s for the sign-ins), both on CPUs $WRK_CPUS. The choices seed 000 leaves open (its dataset, sort, page) are these ones."
		echo
		echo "Every run measures the stated data set: after each run of create (warm-up, settle and measured) the posts created after the seed's last one are deleted through the records API's DELETE as their author, after each run of update the titles it changed are put back the same way, then SQLite's WAL is checkpointed (TRUNCATE) or PostgreSQL's posts vacuumed; each table's last column gives the posts counted before and after each run."
		echo
		echo "Seed 000's figures (slonbase 2.2 on PostgreSQL, PocketBase 0.40.6 on SQLite) were measured on other hardware (a 4-vCPU cloud VM, 3 CPUs for the server): compare the ratios to the health check, not the req/s. The target column is issue 33's: at least that ratio to /api/health (slonbase's own is in its column) and a p99 of at most $RECORDS_TARGET_P99 ms, on both databases and both presets; sign-in at least $RECORDS_TARGET_BCRYPT of bcrypt's compares a second (cost 10, through crypt(3) on CPUs $SERVER_CPUS, the best of three seconds right before each sign-in run; a sign-in is one compare); view one p99 at most $RECORDS_TARGET_P99 ms while $loaded_conns clients sign in."
		echo
	} | bench_report
	for preset in $presets; do
		for db in $dbs; do
			records_run "$preset" "$db"
		done
	done
	# The counted lists at the large preset against the default one (issue 33's target 2).
	if [[ " $presets " == *" default "* ]] && [[ " $presets " == *" large "* ]]; then
		{
			echo "### large / default: the counted lists at $(records_preset large && echo "$REC_POSTS") posts against 5,000"
			echo
			echo "| scenario | database | default req/s | large req/s | large / default | target |"
			echo "|---|---|---|---|---|---|"
			for db in $dbs; do
				for s in list filtered expanded; do
					a=${REC_RPS[default.$db.$s]:-0} b=${REC_RPS[large.$db.$s]:-0}
					printf '| %s | %s | %.0f | %.0f | %s | &ge; %s%s |\n' "${RECORDS_LABEL[$s]}" "$db" "$a" "$b" \
					    "$(records_ratio "$b" "$a")" "$RECORDS_TARGET_LARGE" \
					    "$(records_short "$(records_ratio "$b" "$a")" "$RECORDS_TARGET_LARGE")"
				done
			done
			echo
		} | bench_report
	fi
	# The binary and its libraries beyond the C library, as seed 000's "binary on disk".
	strip -o "$REC_SCRATCH/records.stripped" "$TOP/bin/records" 2>/dev/null || cp "$TOP/bin/records" "$REC_SCRATCH/records.stripped"
	bin_bytes=$(stat -c %s "$REC_SCRATCH/records.stripped")
	libs=$(ldd "$TOP/bin/records" | awk '$3 ~ /^\// { print $3 }' | grep -vE '/(libc|libm|libpthread|libdl|librt|ld-linux[^/]*)\.so' || true)
	lib_bytes=0
	for lib in $libs; do lib_bytes=$((lib_bytes + $(stat -L -c %s "$lib"))); done
	echo "records,binary-records+libs,sluice,none,none,0,1,0,0,0,0,0,0,0,0,0,0,0,$((bin_bytes + lib_bytes))" >> "$BENCH_OUT/results.csv"
	bench_point records "bin/records stripped with its non-base libraries" "$((bin_bytes + lib_bytes)) bytes"
	{
		echo "Binary on disk: bin/records stripped $bin_bytes bytes, with its $(wc -w <<<"$libs") non-base libraries ($(for lib in $libs; do basename "$lib"; done | tr '\n' ' ' | sed 's/ $//')) $((bin_bytes + lib_bytes)) bytes; seed 000: slonbase 21.3 MB, PocketBase 32.0 MB, idle resident memory 40 MB and 41 MB."
		echo
	} | bench_report
	if [ -s "$REC_SCRATCH/chart.txt" ]; then
		bench_pivot scenario < "$REC_SCRATCH/chart.txt" > "$REC_SCRATCH/chart.dat"
		bench_bar_chart records "records API: req/s as a ratio to /api/health" "ratio to /api/health" "$REC_SCRATCH/chart.dat"
	fi
}
