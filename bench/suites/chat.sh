# bench/suites/chat.sh: the Starcord chat benchmark (sourced by bench/run: `bench/run chat`).
#
# Runs the Litestar+SQLite vs FastAPI+Postgres benchmark's workload on sluice: the chat page
# and its three writes, driven by bench/chat.lua (read share BENCH_READ_PCT, writes
# 80/10/10, channel skew BENCH_SKEW).  The seed compared two stacks (a Python framework on
# SQLite, another on PostgreSQL); this suite compares one stack, sluice, on the two
# databases.  For each alpha the dataset is seeded once per database by the real seeder.
# PostgreSQL is a throwaway cluster (bench_pg_start; fsync on); without PostgreSQL
# binaries only SQLite is measured.  The report gives req/s, p99 and errors per point, the
# PostgreSQL serialization failures (retried attempts) counted in the server's log, the
# SQLite / PostgreSQL ratios, and the differences from the published benchmark.
#
# Series (a database and its settings):
#   sqlite-durable      sluice's durable settings: synchronous=FULL, each write answered
#                       after its commit (group commit), no memory map
#                       (conf/endpoints.conf: every write would remap it).
#   sqlite-published    the seed's SQLite: synchronous=NORMAL, mmap_size as large as the
#                       database file (rounded up to a GiB).
#   pg-default          PostgreSQL at the server's default isolation (read committed).
#   pg-read_committed, pg-serializable, pg-repeatable_read: that isolation, set by sluice.
#
# Settings: CHAT_PRESET (reduced: 512 channels, 1,024 users, 3,600,000 messages, 1/8 of
# small's channels and users and 1/10 of its messages; small: the seed's 4,096 / 8,192 /
# 36,000,000, about 4 GB on SQLite; large, 262,144 / 524,288 / 360,000,000 (40 GB), needs a
# bigger machine than this one), CHAT_CHANNELS, CHAT_USERS, CHAT_MSGS (override the
# preset), CHAT_SKEWS ("0.1 0.9"), CHAT_READ_PCTS ("100 95 50"), CHAT_CONNS ("256 1000"),
# CHAT_DBS ("sqlite pg"), CHAT_ISOLATIONS ("read_committed serializable"), CHAT_SERIES
# (the series, overriding what CHAT_DBS and CHAT_ISOLATIONS make).
#
# BENCH_CHAT_FAITHFUL=1: the seed's conditions: series sqlite-published, sqlite-durable,
# pg-default and pg-serializable; wrk -t4 -c1000 -d60s (CHAT_DURATION, 60) after two warm-up
# runs as long as the run (CHAT_WARMUP, 60 s each); every read share and both skews; the
# page shows the channel's oldest 500 messages (chat_page_order=oldest) as the seed's page
# query did.  Each point is one run (the seed's method), not a median.
#
# Then the page cache (chat_page_cache=1, docs/chat.md), which the series above leave off:
# on SQLite at the first alpha, the same mix with the page's pool cache off and on, both
# with a browser's Accept-Encoding ("gzip, deflate, br": Brotli without the cache, gzip
# spliced from the cached list with it), side by side with bytes per answer:
# CHAT_CACHE_READ_PCTS ("100 95"), CHAT_CACHE_CONNS (the connections of the run).
#
# BENCH_QUICK=1 shrinks all of it to a smoke run (tiny dataset, one point per series,
# every series once: sqlite-durable, sqlite-published, pg-default, pg-serializable; the
# page's oldest 500, so that the faithful run's paths all run).

# The page cache, off and on, on SQLite (the first alpha's database, still in $scratch):
# called by suite_chat with its locals in scope.
chat_cache_scenario() {
	local mode pct c out rps p99 err size row conf
	local skew0=${skews%% *}
	{
		echo
		echo "The page cache (chat_page_cache=1, off in the runs above): SQLite, alpha $skew0, the same mix, every request with a browser's Accept-Encoding (gzip, deflate, br): without the cache the page is Brotli q3, with it gzip spliced from the cached message list. A write to a channel or a nickname invalidates the cached lists it touches (docs/chat.md). The cache holds a list per channel ($channels lists a worker, chat_page_cache_lists, about 200 KB each: up to $((channels * 8 / 5)) MB for the pool's 8 workers), so that the channels read fit in it."
		echo
		echo "| page cache | read % | connections | req/s | p99 ms | errors | bytes/answer |"
		echo "|---|---|---|---|---|---|---|"
	} | bench_report
	for mode in 0 1; do
		conf="db chat sqlite:/unused.db
chat_page =/ workers=8 threads=2 db=chat session_key=$key bench_sessions=$users sqlite_mmap=0 chat_page_cache=$mode chat_page_cache_lists=$channels
chat_message_send =/chat/message-send workers=1 threads=32 db=chat session_key=$key bench_sessions=$users sqlite_mmap=0
chat_channel_open =/chat/channel-open workers=1 threads=32 db=chat session_key=$key bench_sessions=$users sqlite_mmap=0
chat_nickname_set =/chat/nickname-set workers=1 threads=32 db=chat session_key=$key bench_sessions=$users sqlite_mmap=0"
		SLUICE_DB_CHAT=sqlite:$scratch/chat-$skew0.db bench_stack_start "chat-cache$mode" tuned "$conf"
		for pct in $cache_reads; do
			for c in $cache_conns; do
				[ "$BENCH_WARMUP" = 0 ] || BENCH_READ_PCT=$pct BENCH_ACCEPT_ENCODING="gzip, deflate, br" \
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
	local preset=${CHAT_PRESET:-reduced} channels users msgs
	case $preset in
	small) channels=4096 users=8192 msgs=36000000 ;;
	large) channels=262144 users=524288 msgs=360000000 ;;
	*) preset=reduced channels=512 users=1024 msgs=3600000 ;;
	esac
	channels=${CHAT_CHANNELS:-$channels} users=${CHAT_USERS:-$users} msgs=${CHAT_MSGS:-$msgs}
	local skews=${CHAT_SKEWS:-0.1 0.9} reads=${CHAT_READ_PCTS:-100 95 50}
	local conns=${CHAT_CONNS:-256 1000} dbs=${CHAT_DBS:-sqlite pg}
	local isos=${CHAT_ISOLATIONS:-read_committed serializable} faithful=${BENCH_CHAT_FAITHFUL:-0}
	local duration=$BENCH_DURATION warmups=1 warmup=$BENCH_WARMUP wrk_threads=2 order=newest
	local series_list="" s cache_reads=${CHAT_CACHE_READ_PCTS:-100 95} cache_conns=${CHAT_CACHE_CONNS:-}
	for s in $dbs; do
		if [ "$s" = sqlite ]; then series_list+=" sqlite-durable"
		else for iso in $isos; do series_list+=" pg-$iso"; done; fi
	done
	if [ "$faithful" = 1 ]; then
		series_list="sqlite-published sqlite-durable pg-default pg-serializable"
		conns=${CHAT_CONNS:-1000} duration=${CHAT_DURATION:-60} warmups=2
		warmup=${CHAT_WARMUP:-60} wrk_threads=4 order=oldest
	fi
	if [ "${BENCH_QUICK:-0}" = 1 ]; then
		preset=tiny channels=16 users=64 msgs=20000 skews=0.1 reads=95 conns=32
		series_list="sqlite-durable sqlite-published pg-default pg-serializable"
		duration=$BENCH_DURATION warmups=1 warmup=$BENCH_WARMUP order=oldest cache_reads=95
		[ "$faithful" = 1 ] && wrk_threads=4
	fi
	series_list=${CHAT_SERIES:-$series_list}
	cache_conns=${cache_conns:-$conns}
	local seeder=$TOP/build/rel/sql/chat-seed scratch=$BENCH_TMP/chat url conf key
	# One session key for every stack, given on the endpoints' lines: on PostgreSQL the
	# workers would otherwise keep it in data/ of the working directory, which the
	# unprivileged workers of a root-started sluiced may not be able to read.
	key=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')
	local skew db iso pct c out rps p99 err label ww wt keys mmap size series name i
	local fails0 fails1 gaveup0 gaveup1 retries gaveup dbfile
	declare -A RPS=() SEEDED=()
	mkdir -p "$scratch"
	chmod 755 "$scratch"
	# bench/run's exit trap stops the cluster, even when the run is interrupted.
	if [[ " $series_list " == *" pg-"* ]] && ! bench_pg_start chat_setup; then
		echo "chat: no PostgreSQL cluster (binaries missing or initdb failed): SQLite only" >&2
		series_list=$(tr ' ' '\n' <<<"$series_list" | grep '^sqlite' | tr '\n' ' ')
	fi
	{
		echo "## chat (Starcord: the Litestar+SQLite vs FastAPI+Postgres workload)"
		echo
		echo "What is compared: one stack (sluice: nginx, FastCGI workers in C) on SQLite and on PostgreSQL, not the seed's two stacks (Litestar on SQLite against FastAPI on PostgreSQL); its ratios are a database's effect on one stack, not the seed's framework-and-database pairs."
		echo
		echo "Dataset: preset $preset, $channels channels, $users users, $msgs messages per alpha (sql/chat/seed.c; the seed's small preset is 4,096 / 8,192 / 36,000,000, about 4 GB: CHAT_PRESET=small; its 40 GB large preset needs more memory and disk than this machine's)."
		echo
		echo "Method: wrk -t$wrk_threads, $duration s per point, after $warmups warm-up run(s) of $warmup s; **one run per point** (not a median). bench/chat.lua, every request a random seeded user (bench_sessions=$users); Brotli q3 pages; the page shows the channel's $order 500 messages (chat_page_order=$order)$([ "$faithful" = 1 ] && echo "; BENCH_CHAT_FAITHFUL=1: the seed's conditions")."
		echo
		echo "Series: sqlite-durable = synchronous=FULL, each write answered after its commit (group commit), no memory map; sqlite-published = synchronous=NORMAL and mmap_size as large as the database, as the seed ran SQLite; pg-default = PostgreSQL at the server's default isolation (read committed); pg-ISOLATION = that isolation. PostgreSQL: fsync on."
		echo
		echo "errors: wrk's socket errors and timeouts. wrk counts a timeout when a request completes after more than 2 s; a request still waiting when the run ends is not counted at all. Every client is served in its turn, so a request waits about connections / req/s: past 2 s (1,000 connections here) nearly every answer is a timeout (README, Benchmarks)."
		echo
		echo "PostgreSQL retries: the page's read transaction is retried up to 3 times and a write up to 10 times after a serialization failure or deadlock, so such failures do not reach the errors column until the retries run out. 'retried' counts the failed attempts in PostgreSQL's log during the point (could not serialize access, deadlock detected); 'gave up' the writes that failed after their last retry (sluiced's log, 'write failed')."
		echo
		echo "| series | alpha | read % | connections | req/s | p99 ms | errors | retried | gave up |"
		echo "|---|---|---|---|---|---|---|---|---|"
	} | bench_report
	export SEED_CHANNEL_COUNT=$channels SEED_USER_COUNT=$users
	for skew in $skews; do
		export BENCH_SKEW=$skew
		for series in $series_list; do
			db=${series%%-*}
			iso=${series#*-}
			if [ "$db" = sqlite ]; then
				dbfile=$scratch/chat-$skew.db
				url=sqlite:$dbfile
				if [ -z "${SEEDED[sqlite.$skew]:-}" ]; then
					SEED_MSG_COUNT=$msgs "$seeder" -q -f -S "$TOP/sql/chat" "$url"
					SEEDED[sqlite.$skew]=1
				fi
			else
				name=chat_${skew/./_}
				url="postgresql:///$name?host=$BENCH_PG_DIR&port=$BENCH_PG_PORT&user=postgres"
				if [ -z "${SEEDED[pg.$skew]:-}" ]; then
					"$BENCH_PG_BIN/createdb" -h "$BENCH_PG_DIR" -p "$BENCH_PG_PORT" -U postgres "$name" 2>/dev/null || true
					SEED_MSG_COUNT=$msgs "$seeder" -q -f -S "$TOP/sql/chat" "$url"
					SEEDED[pg.$skew]=1
				fi
			fi
			# SQLite: one 32-thread process per writer (the largest group commits);
			# PostgreSQL: 2 x 8, 56 server connections with the page's 8 x 2.
			ww=1 wt=32
			[ "$db" = pg ] && ww=2 wt=8
			keys="db=chat session_key=$key bench_sessions=$users chat_page_order=$order"
			# Both SQLite series grow the file in 8 MB steps, as the shipped endpoint
			# list does, so that a memory map is made again once a step, not at
			# every checkpoint (docs/databases.md).
			case $series in
			sqlite-durable) keys+=" sqlite_sync=full sqlite_mmap=0 sqlite_chunk=8388608" ;;
			sqlite-published)
				size=$(stat -c %s "$dbfile")
				mmap=$(( (size + (1 << 30) - 1) / (1 << 30) * (1 << 30) ))
				keys+=" sqlite_sync=normal sqlite_mmap=$mmap sqlite_chunk=8388608" ;;
			pg-*) keys+=" db_isolation=$iso" ;;
			esac
			conf="db chat sqlite:/unused.db
chat_page =/ workers=8 threads=2 $keys
chat_message_send =/chat/message-send workers=$ww threads=$wt $keys
chat_channel_open =/chat/channel-open workers=$ww threads=$wt $keys
chat_nickname_set =/chat/nickname-set workers=$ww threads=$wt $keys"
			SLUICE_DB_CHAT=$url bench_stack_start "chat-$series-$skew" tuned "$conf"
			for pct in $reads; do
				export BENCH_READ_PCT=$pct
				for c in $conns; do
					[ "$warmup" = 0 ] ||
					for i in $(seq "$warmups"); do
						taskset -c "$WRK_CPUS" wrk -t"$wrk_threads" -c"$c" -d"${warmup}s" -s "$TOP/bench/chat.lua" "http://127.0.0.1:$BENCH_PORT" >/dev/null 2>&1 || true
					done
					fails0=$(chat_pg_failures) gaveup0=$(chat_gave_up)
					label="$series-a$skew-r$pct"
					out=$(BENCH_DURATION=$duration BENCH_WRK_THREADS=$wrk_threads bench_wrk chat "$label" tuned "$db" "$c" 1 "http://127.0.0.1:$BENCH_PORT" -s "$TOP/bench/chat.lua")
					read -r rps p99 err _ <<<"$out"
					fails1=$(chat_pg_failures) gaveup1=$(chat_gave_up)
					retries=n/a gaveup=n/a
					[ "$db" = pg ] && retries=$((fails1 - fails0)) gaveup=$((gaveup1 - gaveup0))
					RPS[$series.$skew.$pct.$c]=$rps
					# Chart labels in words: "95% reads, skew 0.1, 32 clients".
					case $series in
					sqlite-durable) s="SQLite durable" ;;
					sqlite-published) s="SQLite as published" ;;
					pg-default) s="PostgreSQL default isolation" ;;
					*) s="PostgreSQL ${iso//_/ }" ;;
					esac
					printf '%s%% reads, skew %s, %s clients\t%s\t%s\n' "$pct" "$skew" "$c" \
					    "$s" "$rps" >> "$scratch/chart.txt"
					echo "| $series | $skew | $pct | $c | $rps | $p99 | $err | $retries | $gaveup |" | bench_report
				done
			done
			bench_stack_stop
		done
	done
	# The page cache's table needs the first alpha's SQLite database.
	[ -n "${SEEDED[sqlite.${skews%% *}]:-}" ] && chat_cache_scenario
	local lite pgs
	lite=$(tr ' ' '\n' <<<"$series_list" | grep '^sqlite' | tr '\n' ' ')
	pgs=$(tr ' ' '\n' <<<"$series_list" | grep '^pg' | tr '\n' ' ')
	if [ -n "${pgs// /}" ] && [ -n "${lite// /}" ]; then
		{
			echo
			echo "SQLite / PostgreSQL req/s ratios. The seed found about 2x at read committed and 3-5x at serializable, but between two different stacks (Litestar+SQLite against FastAPI+PostgreSQL) on 12 CPU threads: these ratios are one stack's, on this machine, and say what the database alone changes."
			echo
			echo "| SQLite series | PostgreSQL series | alpha | read % | connections | ratio |"
			echo "|---|---|---|---|---|---|"
			for s in $lite; do for iso in $pgs; do for skew in $skews; do for pct in $reads; do for c in $conns; do
				awk -v s="${RPS[$s.$skew.$pct.$c]:-0}" -v p="${RPS[$iso.$skew.$pct.$c]:-0}" \
				    -v row="| $s | $iso | $skew | $pct | $c |" 'BEGIN { printf "%s %s |\n", row, (p > 0 ? sprintf("%.2f", s / p) : "n/a") }'
			done; done; done; done; done
		} | bench_report
	fi
	[ -n "${pgs// /}" ] && bench_pg_stop
	echo | bench_report
	chat_differences "$faithful" "$preset" "$order" "$duration" "$warmups" "$wrk_threads"
	# req/s per point (alpha, read share, connections), a bar per series.
	if [ -s "$scratch/chart.txt" ]; then
		bench_pivot point < "$scratch/chart.txt" > "$scratch/chart.dat"
		bench_bar_chart chat "Starcord chat: req/s per read share, Zipf skew and client count" "req/s" "$scratch/chart.dat"
	fi
}

# Failed attempts PostgreSQL logged so far (serialization failures, deadlocks); 0 without
# a cluster.
chat_pg_failures() {
	[ -n "${BENCH_PG_DIR:-}" ] && [ -f "$BENCH_PG_DIR/log" ] || { echo 0; return; }
	grep -cE 'could not serialize access|deadlock detected' "$BENCH_PG_DIR/log" || true
}

# Writes the chat's handlers gave up on after their last retry (sluiced's log of the
# running stack).
chat_gave_up() {
	[ -f "${STACK_RUN:-/nonexistent}/sluiced.log" ] || { echo 0; return; }
	grep -c 'write failed' "$STACK_RUN/sluiced.log" || true
}

# The report's "Differences from the published benchmark" section: one line per item of
# the seed (001), what sluice's run does, the same or not.
chat_differences() {
	local faithful=$1 preset=$2 order=$3 duration=$4 warmups=$5 threads=$6
	{
		echo "### chat: differences from the published benchmark (seed 001)"
		echo
		echo "| published | this run | same? |"
		echo "|---|---|---|"
		echo "| Litestar + SQLite against FastAPI + PostgreSQL: two stacks | sluice (nginx + C FastCGI workers) on SQLite and on PostgreSQL: one stack | no: the ratios measure the database alone |"
		echo "| wrk -t4 -c1k -d60s -s common.lua --latency | wrk -t$threads, connections ${conns// /, }, ${duration} s, bench/chat.lua (the same mix: GET / or 80% message-send, 10% channel-open, 10% nickname-set; Zipf inverse-CDF channel ranks) | $([ "$faithful" = 1 ] && echo "yes (BENCH_CHAT_FAITHFUL=1)" || echo "no: BENCH_CHAT_FAITHFUL=1 runs it") |"
		echo "| 2 warm-up runs before the real benchmark (their length not stated) | $warmups warm-up run(s) of ${warmup:-?} s each (CHAT_WARMUP) | $([ "$warmups" = 2 ] && echo yes || echo no) |"
		echo "| results as one run per point | one run per point | yes |"
		echo "| read/write 100/0, 95/5, 50/50; alpha 0.1 and 0.9 | read shares ${reads// /, }; alpha ${skews// /, } | $([ "$faithful" = 1 ] && echo yes || echo "as listed") |"
		echo "| 4 GB dataset: 4,096 channels, 8,192 users, 36M messages; 40 GB: 262,144 / 524,288 / 360M | preset $preset: $channels channels, $users users, $msgs messages (the 40 GB case needs a machine with more memory and disk) | $([ "$preset" = small ] && echo "yes (4 GB)" || echo "no: CHAT_PRESET=small for 4 GB") |"
		echo "| SQLite: synchronous=NORMAL, mmap_size 4 GB (the whole file mapped); writes acknowledged before they were committed (a queue drained by one writer) | sqlite-published: synchronous=NORMAL, mmap_size the file's size rounded up to a GiB, each write answered after its commit (group commit); sqlite-durable: synchronous=FULL, no map, answered after commit | settings yes; acknowledgement no: sluice never answers a write before its commit, which costs the published series some write throughput |"
		echo "| SQLite: up to 48 background threads for queries | chat_page 8 workers x 2 threads; each writer 1 process x 32 threads | no: sluice's pools |"
		echo "| PostgreSQL: default_transaction_isolation read committed, and serializable | pg-default (the server's default: read committed) and pg-serializable, set per transaction by sluice (db_isolation) | yes |"
		echo "| PostgreSQL page and write retries: not stated | page READ ONLY transaction retried up to 3 times, writes up to 10 times; failed attempts and given-up writes in the table's 'retried' and 'gave up' columns | declared |"
		echo "| the page's third query: ORDER BY created_ts, id LIMIT 500 (the channel's oldest 500) | chat_page_order=$order: the channel's $order 500 | $([ "$order" = oldest ] && echo yes || echo "no: same cost (one index walk of 500 rows), newer messages; BENCH_CHAT_FAITHFUL=1 uses oldest") |"
		echo "| Jinja template, ~190 kB page, Brotli | sluice's template (tmpl.h), ~190 kB page, Brotli quality 3 | same size and encoding; other renderer |"
		echo "| 12 uvicorn workers, 12 CPU threads, fixed clock, performance governor, 16 GB RAM | this machine (see Method): server and wrk pinned apart on $(nproc) cores | no: other hardware |"
		echo "| readahead: off for SQLite, 256 sectors for PostgreSQL | the system's default; the reduced and small datasets fit in memory | not applicable to in-memory data |"
		echo
	} | bench_report
}
