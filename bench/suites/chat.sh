# bench/suites/chat.sh: the Starcord chat benchmark (sourced by bench/run: `bench/run chat`).
#
# Reproduces the Litestar+SQLite vs FastAPI+Postgres benchmark on sluice: the chat page and
# its three writes, driven by bench/chat.lua (read share BENCH_READ_PCT, writes 80/10/10,
# channel skew BENCH_SKEW), on SQLite and on PostgreSQL at read committed and at
# serializable.  For each alpha the dataset is seeded once per database by the real seeder
# (a reduced one that fits this machine: 1/10 of "small" by default).  PostgreSQL is a
# throwaway cluster (bench_pg_start; fsync on, like SQLite's synchronous=FULL);
# without PostgreSQL binaries only SQLite is measured.  The report gives req/s, p99 and
# errors per point and the SQLite / PostgreSQL ratios.
#
# Then the page cache (chat_page_cache=1, docs/chat.md), which the faithful runs above
# leave off: on SQLite at the first alpha, the same mix with the page's pool cache off
# and on, both with a browser's Accept-Encoding ("gzip, deflate, br": Brotli without the
# cache, gzip spliced from the cached list with it), side by side with bytes per answer.
#
# Settings: CHAT_CHANNELS (512), CHAT_USERS (1024), CHAT_MSGS (3600000), CHAT_SKEWS
# ("0.1 0.9"), CHAT_READ_PCTS ("100 95 50"), CHAT_CONNS ("256 1000"), CHAT_DBS
# ("sqlite pg"), CHAT_ISOLATIONS ("read_committed serializable"), CHAT_CACHE_READ_PCTS
# ("100 95"), CHAT_CACHE_CONNS (CHAT_CONNS).  BENCH_QUICK=1 shrinks all of it to a smoke
# run (tiny dataset, one point per database and cache mode).

# The page cache, off and on, on SQLite (the first alpha's database, still in $scratch):
# called by suite_chat with its locals in scope.
chat_cache_scenario() {
	local mode pct c out rps p99 err size row conf
	local skew0=${skews%% *}
	{
		echo
		echo "The page cache (chat_page_cache=1, off in the runs above): SQLite, alpha $skew0, the same mix, every request with a browser's Accept-Encoding (gzip, deflate, br): without the cache the page is Brotli q3, with it gzip spliced from the cached message list. A write to a channel or a nickname invalidates the cached lists it touches (docs/chat.md)."
		echo
		echo "| page cache | read % | connections | req/s | p99 ms | errors | bytes/answer |"
		echo "|---|---|---|---|---|---|---|"
	} | bench_report
	for mode in 0 1; do
		conf="db chat sqlite:/unused.db
chat_page =/ workers=8 threads=2 db=chat session_key=$key bench_sessions=$users sqlite_mmap=0 chat_page_cache=$mode
chat_message_send =/chat/message-send workers=1 threads=32 db=chat session_key=$key bench_sessions=$users sqlite_mmap=0
chat_channel_open =/chat/channel-open workers=1 threads=32 db=chat session_key=$key bench_sessions=$users sqlite_mmap=0
chat_nickname_set =/chat/nickname-set workers=1 threads=32 db=chat session_key=$key bench_sessions=$users sqlite_mmap=0"
		SLUICE_DB_CHAT=sqlite:$scratch/chat-$skew0.db bench_stack_start "chat-cache$mode" tuned "$conf"
		for pct in $cache_reads; do
			for c in $cache_conns; do
				BENCH_READ_PCT=$pct BENCH_ACCEPT_ENCODING="gzip, deflate, br" \
				    taskset -c "$WRK_CPUS" wrk -t2 -c"$c" -d"${BENCH_WARMUP}s" -s "$TOP/bench/chat.lua" \
				    "http://127.0.0.1:$BENCH_PORT" >/dev/null 2>&1 || true
				out=$(BENCH_READ_PCT=$pct BENCH_ACCEPT_ENCODING="gzip, deflate, br" \
				    bench_wrk chat "page-cache-$([ "$mode" = 1 ] && echo on || echo off)-r$pct" tuned sqlite "$c" 1 \
				    "http://127.0.0.1:$BENCH_PORT" -s "$TOP/bench/chat.lua")
				read -r rps p99 err _ <<<"$out"
				row=$(tail -1 "$BENCH_OUT/results.csv")
				size=$(awk -F, '{ if ($18 > 0) printf "%d", $19 / $18; else print 0 }' <<<"$row")
				echo "| $([ "$mode" = 1 ] && echo on || echo off) | $pct | $c | $rps | $p99 | $err | $size |" | bench_report
			done
		done
		bench_stack_stop
	done
}

suite_chat() {
	local channels=${CHAT_CHANNELS:-512} users=${CHAT_USERS:-1024} msgs=${CHAT_MSGS:-3600000}
	local skews=${CHAT_SKEWS:-0.1 0.9} reads=${CHAT_READ_PCTS:-100 95 50}
	local conns=${CHAT_CONNS:-256 1000} dbs=${CHAT_DBS:-sqlite pg}
	local isos=${CHAT_ISOLATIONS:-read_committed serializable}
	local cache_reads=${CHAT_CACHE_READ_PCTS:-100 95} cache_conns=${CHAT_CACHE_CONNS:-}
	if [ "${BENCH_QUICK:-0}" = 1 ]; then
		channels=16 users=64 msgs=20000 skews=0.1 reads=95 conns=32
		isos=serializable cache_reads=95
	fi
	cache_conns=${cache_conns:-$conns}
	local seeder=$TOP/build/rel/sql/chat-seed scratch=$BENCH_TMP/chat url conf key
	# One session key for every stack, given on the endpoints' lines: on PostgreSQL the
	# workers would otherwise keep it in data/ of the working directory, which the
	# unprivileged workers of a root-started sluiced may not be able to read.
	key=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
	local skew db iso pct c out rps p99 err label isos_db ww wt keys
	declare -A RPS=()
	mkdir -p "$scratch"
	chmod 755 "$scratch"
	# bench/run's exit trap stops the cluster, even when the run is interrupted.
	if [[ " $dbs " == *" pg "* ]] && ! bench_pg_start chat_setup; then
		echo "chat: no PostgreSQL cluster (binaries missing or initdb failed): SQLite only" >&2
		dbs=sqlite
	fi
	{
		echo "## chat (Starcord: Litestar+SQLite vs FastAPI+Postgres)"
		echo
		echo "Dataset: $channels channels, $users users, $msgs messages per alpha (seeded by sql/chat/seed.c); bench/chat.lua, every request a random seeded user (bench_sessions=$users); Brotli q3 pages; SQLite synchronous=FULL with group commit, PostgreSQL fsync on."
		echo
		echo "errors: wrk's socket errors and timeouts. wrk counts a timeout when a request completes after more than 2 s; a request still waiting when the run ends is not counted at all. Every client is served in its turn, so a request waits about connections / req/s: past 2 s (1,000 connections here) nearly every answer is a timeout (README, Benchmarks)."
		echo
		echo "| database | isolation | alpha | read % | connections | req/s | p99 ms | errors |"
		echo "|---|---|---|---|---|---|---|---|"
	} | bench_report
	export SEED_CHANNEL_COUNT=$channels SEED_USER_COUNT=$users
	for skew in $skews; do
		export BENCH_SKEW=$skew
		for db in $dbs; do
			if [ "$db" = sqlite ]; then
				url=sqlite:$scratch/chat-$skew.db
				SEED_MSG_COUNT=$msgs "$seeder" -q -f -S "$TOP/sql/chat" "$url"
				isos_db=none
			else
				"$BENCH_PG_BIN/createdb" -h "$BENCH_PG_DIR" -p "$BENCH_PG_PORT" -U postgres "chat_${skew/./_}" 2>/dev/null || true
				url="postgresql:///chat_${skew/./_}?host=$BENCH_PG_DIR&port=$BENCH_PG_PORT&user=postgres"
				SEED_MSG_COUNT=$msgs "$seeder" -q -f -S "$TOP/sql/chat" "$url"
				isos_db=$isos
			fi
			for iso in $isos_db; do
				# SQLite: one 32-thread process per writer (the largest group
				# commits), no memory map (conf/endpoints.conf: every write
				# remaps it);
				# PostgreSQL: 2 x 8, 56 server connections with the page's 8 x 2.
				ww=1 wt=32
				[ "$db" = pg ] && ww=2 wt=8
				keys="db=chat session_key=$key bench_sessions=$users db_isolation=${iso/none/default} sqlite_mmap=0"
				conf="db chat sqlite:/unused.db
chat_page =/ workers=8 threads=2 $keys
chat_message_send =/chat/message-send workers=$ww threads=$wt $keys
chat_channel_open =/chat/channel-open workers=$ww threads=$wt $keys
chat_nickname_set =/chat/nickname-set workers=$ww threads=$wt $keys"
				SLUICE_DB_CHAT=$url bench_stack_start "chat-$db-$iso-$skew" tuned "$conf"
				for pct in $reads; do
					export BENCH_READ_PCT=$pct
					for c in $conns; do
						taskset -c "$WRK_CPUS" wrk -t2 -c"$c" -d"${BENCH_WARMUP}s" -s "$TOP/bench/chat.lua" "http://127.0.0.1:$BENCH_PORT" >/dev/null 2>&1 || true
						label="$db-$iso-a$skew-r$pct"
						out=$(bench_wrk chat "$label" tuned "$db" "$c" 1 "http://127.0.0.1:$BENCH_PORT" -s "$TOP/bench/chat.lua")
						read -r rps p99 err _ <<<"$out"
						RPS[$db.$iso.$skew.$pct.$c]=$rps
						# Chart labels in words: "95% reads, skew 0.1, 32 clients".
						series="SQLite"
						[ "$db" = pg ] && series="PostgreSQL ${iso//_/ }"
						printf '%s%% reads, skew %s, %s clients\t%s\t%s\n' "$pct" "$skew" "$c" \
						    "$series" "$rps" >> "$scratch/chart.txt"
						echo "| $db | $iso | $skew | $pct | $c | $rps | $p99 | $err |" | bench_report
					done
				done
				bench_stack_stop
			done
		done
	done
	chat_cache_scenario
	if [[ " $dbs " == *" pg "* ]]; then
		{
			echo
			echo "SQLite / PostgreSQL req/s ratios (the original found about 2x at read committed, 3-5x at serializable):"
			echo
			echo "| isolation | alpha | read % | connections | ratio |"
			echo "|---|---|---|---|---|"
			for iso in $isos; do for skew in $skews; do for pct in $reads; do for c in $conns; do
				awk -v s="${RPS[sqlite.none.$skew.$pct.$c]:-0}" -v p="${RPS[pg.$iso.$skew.$pct.$c]:-0}" \
				    -v row="| $iso | $skew | $pct | $c |" 'BEGIN { printf "%s %s |\n", row, (p > 0 ? sprintf("%.2f", s / p) : "n/a") }'
			done; done; done; done
		} | bench_report
		bench_pg_stop
	fi
	echo | bench_report
	# req/s per point (alpha, read share, connections), a bar per database and isolation.
	if [ -s "$scratch/chart.txt" ]; then
		bench_pivot point < "$scratch/chart.txt" > "$scratch/chart.dat"
		bench_bar_chart chat "Starcord chat: req/s per read share, Zipf skew and client count" "req/s" "$scratch/chart.dat"
	fi
}
