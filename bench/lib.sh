# bench/lib.sh: what every benchmark suite shares (sourced by bench/run, not run alone).
#
# A suite starts stacks with bench_stack_start (sluiced + nginx from an endpoint list, in a
# scratch directory, the server pinned to SERVER_CPUS), measures with bench_wrk (wrk pinned
# to WRK_CPUS; one CSV row per run), and stops them with bench_stack_stop.  Everything is
# started from this one shell, so every stack shares the same session layout
# (docs/fastcgi.md rule 15).  Results go to $BENCH_OUT: results.csv (every run) and the
# suite's fragment of report.md (bench_report).

# Suites that bench/run leaves out unless named (or "all"): they install third-party stacks,
# which `make test`'s smoke run of bench/run must never do.
BENCH_OPT_IN_SUITES="peers"

BENCH_CSV_HEADER="suite,scenario,stack,profile,database,connections,run,rps,p50_ms,p90_ms,p99_ms,max_ms,errors_connect,errors_read,errors_write,errors_timeout,non2xx,requests,bytes"
# fastcgi.csv: per wrk run against a stack of bench_stack_start, what sluice's own counters
# (its metrics address, /metrics) say of the FastCGI connections between nginx and the
# pools (bench_fcgi_row): the requests the workers answered, the connections they
# accepted during the run and those already open at its start (kept by nginx from before),
# hence the connections opened a second and the requests each connection carried.
BENCH_FCGI_CSV_HEADER="suite,scenario,stack,profile,database,connections,run,rps,fcgi_requests,fcgi_conns_opened,fcgi_conns_open_before,fcgi_conns_opened_per_s,fcgi_requests_per_conn"

# bench_stack_start NAME PROFILE CONF_TEXT [GENERATOR_ARGS...]: starts sluiced and nginx
# for CONF_TEXT (an endpoint list without the listen line) on $BENCH_PORT, with sluice's
# metrics address on 127.0.0.1:$BENCH_PORT + 4000 (set metrics_listen; not when CONF_TEXT sets
# metrics itself or BENCH_STACK_METRICS=off) for bench_wrk's scrapes.  Sets STACK_RUN (the run dir), STACK_PIDS and
# STACK_METRICS_PORT (empty without a metrics address).
bench_stack_start() {
	local name=$1 profile=$2 conf=$3
	shift 3
	STACK_RUN=$BENCH_TMP/$name-$profile
	local prefix=$STACK_RUN/nginx metrics=""
	mkdir -p "$prefix/logs"
	chmod 755 "$STACK_RUN"
	STACK_METRICS_PORT=
	# A port another program holds (a connect succeeds) leaves the stack without one: its
	# runs' FastCGI figures are then n/a, and the stack still starts.
	if [ "${BENCH_STACK_METRICS:-on}" = on ] && ! grep -q '^set metrics' <<<"$conf" &&
	    ! (exec 3<>"/dev/tcp/127.0.0.1/$((BENCH_PORT + 4000))") 2>/dev/null; then
		STACK_METRICS_PORT=$((BENCH_PORT + 4000))
		metrics="set metrics_listen 127.0.0.1:$STACK_METRICS_PORT"$'\n'
	fi
	printf 'set listen 127.0.0.1:%s\n%s%s\n' "$BENCH_PORT" "$metrics" "$conf" > "$STACK_RUN/endpoints.conf"
	# pub-default and pub-best: the PostgREST benchmark's published pair, made from the
	# default profile (bench_nginx_published).
	local gen=$profile
	case $profile in pub-*) gen=default ;; esac
	"$TOP/bin/sluiced" -c "$STACK_RUN/endpoints.conf" nginx "$gen" -r "$STACK_RUN" \
	    -p "$prefix" "$@" > "$prefix/nginx.conf" 2>>"$STACK_RUN/generator.log"
	case $profile in pub-*) bench_nginx_published "$prefix/nginx.conf" "${profile#pub-}" ;; esac
	# The nginx ceiling: a location that answers by itself, with /health's body.
	sed -i "s|^\(\s*\)server_name localhost;|&\n\1location = /nginx-200 { default_type application/json; return 200 '{\"status\":\"ok\"}'; }|" "$prefix/nginx.conf"
	STACK_PIDS=()
	taskset -c "$SERVER_CPUS" "$TOP/bin/sluiced" -c "$STACK_RUN/endpoints.conf" -r "$STACK_RUN" \
	    -b "$TOP/bin" 2>>"$STACK_RUN/sluiced.log" &
	STACK_PIDS+=($!)
	local i
	for i in $(seq 200); do
		"$TOP/bin/sluiced" -r "$STACK_RUN" ctl status >/dev/null 2>&1 && break
		sleep 0.05
	done
	taskset -c "$SERVER_CPUS" /usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" \
	    -e "$prefix/logs/error.log" 2>>"$STACK_RUN/nginx.log" &
	STACK_PIDS+=($!)
	for i in $(seq 200); do
		curl -s -o /dev/null "http://127.0.0.1:$BENCH_PORT/nginx-200" && break
		sleep 0.05
	done
	# Every pool fully up before anything is measured.
	for i in $(seq 200); do
		"$TOP/bin/sluiced" -r "$STACK_RUN" ctl status 2>/dev/null |
		    awk '/ workers=/ { split($0, a, "workers="); split(a[2], b, " "); split(b[1], c, "/"); if (c[1] != c[2]) bad = 1 } END { exit bad }' && break
		sleep 0.05
	done
}

# bench_nginx_published FILE KIND: turns a config generated in sluice's default profile
# into the PostgREST benchmark's published nginx pair (seed 002), as far as FastCGI allows.
# Both: one worker process, `events {}` (nginx's built-in 512 connections a worker), the
# access log on, the listen line without the generated backlog (nginx's own 511).  KIND
# default: every fastcgi_pass as generated (the suite gives the endpoints tcp= addresses:
# TCP to the upstream, a new connection per request).  KIND best:
# every unix-socket fastcgi_pass through an upstream block with `keepalive 64` and
# `keepalive_timeout 120s`, and fastcgi_keep_conn on.
bench_nginx_published() {
	local file=$1 kind=$2 prefix
	prefix=$(dirname "$file")
	awk -v kind="$kind" -v prefix="$prefix" '
		FNR == NR {
			if (kind == "best" && $1 == "fastcgi_pass" && $2 ~ /^unix:/) {
				p = $2; sub(/;$/, "", p)
				if (!(p in up)) { up[p] = "pub_" (++n); order[n] = p }
			}
			next
		}
		/^worker_processes / { print "worker_processes 1;"; next }
		/^events [{]/ { print "events {}"; skip = 1; next }
		skip { if ($0 ~ /^[}]/) skip = 0; next }
		/^\taccess_log / { print "\taccess_log " prefix "/logs/access.log;"; next }
		/^\t\tlisten / { sub(/ backlog=[0-9]+/, ""); sub(/ reuseport/, "") }
		/^\tserver [{]/ && !done {
			for (i = 1; i <= n; i++) {
				print "\tupstream " up[order[i]] " {"
				print "\t\tserver " order[i] ";"
				print "\t\tkeepalive 64;"
				print "\t\tkeepalive_timeout 120s;"
				print "\t}"
				print ""
			}
			done = 1
		}
		$1 == "fastcgi_pass" && kind == "best" {
			p = $2; sub(/;$/, "", p)
			if (p in up) {
				ind = $0; sub(/[^\t].*/, "", ind)
				print ind "fastcgi_pass " up[p] ";"
				print ind "fastcgi_keep_conn on;"
				next
			}
		}
		{ print }
	' "$file" "$file" > "$file.pub" && mv "$file.pub" "$file"
}

bench_stack_stop() {
	local p
	for p in "${STACK_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${STACK_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	STACK_PIDS=()
	STACK_METRICS_PORT=
}

# bench_fcgi_scrape: sluice's counters summed over the stack's pools, from its metrics
# address: "REQUESTS ACCEPTED OPEN" (requests answered, FastCGI connections accepted, open
# now), or nothing without a metrics address or an answer.  One target runs at a time, so
# the difference between two scrapes is that target's pool's.  A bare fcgi2 pool
# (bench/hello.c) counts nothing.
bench_fcgi_scrape() {
	[ -n "${STACK_METRICS_PORT:-}" ] || return 0
	curl -s --max-time 2 "http://127.0.0.1:$STACK_METRICS_PORT/metrics" 2>/dev/null | awk '
		/^sluice_request_duration_seconds_count\{/ { r += $NF; seen = 1 }
		/^sluice_fastcgi_connections_accepted_total\{/ { a += $NF }
		/^sluice_fastcgi_connections_open\{/ { o += $NF }
		END { if (seen) printf "%d %d %d\n", r, a, o }'
}

# bench_fcgi_row SUITE SCENARIO PROFILE DATABASE CONNS RUN RPS BEFORE AFTER: one row of
# fastcgi.csv from two bench_fcgi_scrape lines; prints "OPENED_PER_S REQUESTS_PER_CONN"
# ("n/a n/a" without both scrapes or when the run reached no counted pool).  The requests
# per connection are the requests answered over the connections that carried them: those
# opened during the run and those nginx kept open from before it.
bench_fcgi_row() {
	local suite=$1 scenario=$2 profile=$3 database=$4 conns=$5 run=$6 rps=$7
	local -a b a
	read -r -a b <<<"$8"
	read -r -a a <<<"$9"
	if [ ${#b[@]} -ne 3 ] || [ ${#a[@]} -ne 3 ] || [ $((a[0] - b[0])) -le 0 ]; then
		echo "n/a n/a"
		return 0
	fi
	local row
	row=$(awk -v r=$((a[0] - b[0])) -v o=$((a[1] - b[1])) -v k="${b[2]}" -v d="$BENCH_DURATION" 'BEGIN {
		printf "%d,%d,%d,%.1f,%.2f", r, o, k, o / d, (o + k > 0 ? r / (o + k) : 0) }')
	echo "$suite,$scenario,${BENCH_STACK:-sluice},$profile,$database,$conns,$run,${rps:-0},$row" >> "$BENCH_OUT/fastcgi.csv"
	awk -F, '{ print $4, $5 }' <<<"$row"
}

# wrk prints latencies as 1.23ms, 456.00us or 1.20s: to milliseconds.
bench_to_ms() {
	awk -v v="$1" 'BEGIN {
		n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
		if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000;
		printf "%.3f", n }'
}

# wrk prints transfer sizes as 12.34MB: to bytes.
bench_to_bytes() {
	awk -v v="$1" 'BEGIN {
		n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
		if (u == "KB") n *= 1024; else if (u == "MB") n *= 1048576; else if (u == "GB") n *= 1073741824;
		printf "%d", n }'
}

# bench_wrk SUITE SCENARIO PROFILE DATABASE CONNS RUN URL [WRK_ARGS...]: one wrk run of
# BENCH_WRK_THREADS threads (2), one CSV row (stack: BENCH_STACK, sluice by default); prints "rps p99_ms errors requests avg_ms
# bytes_received bytes_sent cpu fcgi_opened_per_s fcgi_requests_per_conn" (sent: only
# when the Lua script reports it, see bench/postgrest.lua; otherwise n/a; cpu: bench_cpu_per_req's
# three figures joined by "/"; the FastCGI figures: bench_fcgi_row, from sluice's counters
# scraped before and after the run, outside its measured window, n/a without them).
bench_wrk() {
	local suite=$1 scenario=$2 profile=$3 database=$4 conns=$5 run=$6 url=$7
	shift 7
	local threads=${BENCH_WRK_THREADS:-2} log cpu0 cpu1 fcgi0 fcgi1
	[ "$conns" -lt "$threads" ] && threads=$conns
	fcgi0=$(bench_fcgi_scrape)
	cpu0=$(bench_cpu_ticks)
	log=$(taskset -c "$WRK_CPUS" wrk -t"$threads" -c"$conns" -d"${BENCH_DURATION}s" --latency \
	    "$@" "$url" 2>&1) || true
	cpu1=$(bench_cpu_ticks)
	fcgi1=$(bench_fcgi_scrape)
	# The raw output of every run, beside the CSV row made from it.
	mkdir -p "$BENCH_OUT/raw"
	local rawname="$suite-$scenario-${BENCH_STACK:-sluice}-$profile-$database-c$conns-r$run"
	printf '%s\n' "$log" > "$BENCH_OUT/raw/${rawname//\//_}.txt"
	local rps p50 p90 p99 max reqs bytes c=0 r=0 w=0 t=0 non2xx avg sent
	rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$log")
	avg=$(bench_to_ms "$(awk '$1 == "Latency" { print $2; exit }' <<<"$log")")
	sent=$(awk '/^Sent bytes:/ { print $3 }' <<<"$log")
	p50=$(bench_to_ms "$(awk '$1 == "50%" { print $2 }' <<<"$log")")
	p90=$(bench_to_ms "$(awk '$1 == "90%" { print $2 }' <<<"$log")")
	p99=$(bench_to_ms "$(awk '$1 == "99%" { print $2 }' <<<"$log")")
	max=$(bench_to_ms "$(awk '$1 == "Latency" { print $4; exit }' <<<"$log")")
	reqs=$(awk '/requests in/ { print $1 }' <<<"$log")
	bytes=$(bench_to_bytes "$(awk '/requests in/ { print $5 }' <<<"$log")")
	if grep -q "Socket errors" <<<"$log"; then
		read -r c r w t < <(sed -n 's/.*connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\).*/\1 \2 \3 \4/p' <<<"$log")
	fi
	non2xx=$(awk '/Non-2xx/ { print $NF }' <<<"$log")
	echo "$suite,$scenario,${BENCH_STACK:-sluice},$profile,$database,$conns,$run,${rps:-0},$p50,$p90,$p99,$max,$c,$r,$w,$t,${non2xx:-0},${reqs:-0},$bytes" >> "$BENCH_OUT/results.csv"
	local cpu
	cpu=$(bench_cpu_per_req "$cpu0" "$cpu1" "${reqs:-0}")
	echo "$suite,$scenario,${BENCH_STACK:-sluice},$profile,$database,$conns,$run,${reqs:-0},${cpu// /,}" >> "$BENCH_OUT/cpu.csv"
	bench_point "$suite" "$scenario (${BENCH_STACK:-sluice}, $profile, db $database, $conns connections, run $run)" \
	    "$(printf '%.0f' "${rps:-0}") req/s, p99 $p99 ms, $((c + r + w + t + ${non2xx:-0})) errors"
	local fcgi
	fcgi=$(bench_fcgi_row "$suite" "$scenario" "$profile" "$database" "$conns" "$run" "${rps:-0}" "$fcgi0" "$fcgi1")
	echo "${rps:-0} $p99 $((c + r + w + t + ${non2xx:-0})) ${reqs:-0} $avg ${bytes:-0} ${sent:-n/a} ${cpu// //} $fcgi"
}

# bench_cpu_ticks: the CPU time (utime + stime, clock ticks) of the processes pinned to
# SERVER_CPUS, as "SLUICE NGINX POSTGRES": sluiced and its workers (and any other server
# process pinned there, a peer's), nginx, PostgreSQL; not the kernel's threads of that
# CPU.  Every server process of a run is started pinned (bench_stack_start,
# bench_pg_start), and nothing else is, so the sums are the server's own work whatever
# else the machine does (a process that exits during a run takes its time with it).
bench_cpu_ticks() {
	local stats
	# One grep and one awk for every process, outside the measured window.
	stats=$(grep -lx "Cpus_allowed_list:[[:space:]]*$SERVER_CPUS" /proc/[0-9]*/status 2>/dev/null |
	    sed 's/status$/stat/')
	# shellcheck disable=SC2086
	[ -n "$stats" ] && awk '{
		line = $0
		comm = substr(line, index(line, "(") + 1)
		comm = substr(comm, 1, index(comm, ")") - 1)
		# utime and stime: fields 14 and 15, the 12th and 13th after ") ".
		rest = substr(line, match(line, /\) [A-Za-z] /) + 2)
		split(rest, f, " ")
		if (f[2] == 2 || $1 == 2)
			next	# a kernel thread of that CPU
		t = f[12] + f[13]
		if (comm ~ /^postgres/) p += t; else if (comm ~ /^nginx/) n += t; else a += t
	} END { printf "%d %d %d\n", a, n, p }' $stats 2>/dev/null || echo "0 0 0"
}

# bench_cpu_per_req BEFORE AFTER REQUESTS: microseconds of CPU a request of the run cost
# each part, "SLUICE NGINX POSTGRES" (from two bench_cpu_ticks).
bench_cpu_per_req() {
	local -a b a
	read -r -a b <<<"$1"
	read -r -a a <<<"$2"
	awk -v r="$3" -v hz="$(getconf CLK_TCK)" -v a0="${b[0]}" -v a1="${a[0]}" -v n0="${b[1]}" \
	    -v n1="${a[1]}" -v p0="${b[2]}" -v p1="${a[2]}" 'BEGIN {
		if (r <= 0) { print "0 0 0"; exit }
		f = 1e6 / hz / r
		printf "%.0f %.0f %.0f\n", (a1 - a0) * f, (n1 - n0) * f, (p1 - p0) * f }'
}

# bench_oload SUITE SCENARIO PROFILE DATABASE CONNS RUN RATE URL [IDS]: one open-loop run of
# bench/oload.c (RATE requests a second on a fixed schedule, latency from each request's
# due time; IDS = LO:HI puts an id drawn from LO..HI in place of the URL's "{}" in each
# request) for BENCH_DURATION seconds, pinned like wrk; one CSV row (req/s = answers a
# second; errors: unanswered or failed requests in errors_timeout); prints "achieved p50
# p90 p99 p999 max errors late".
bench_oload() {
	local suite=$1 scenario=$2 profile=$3 database=$4 conns=$5 run=$6 rate=$7 url=$8 log
	local ids=()
	[ -n "${9:-}" ] && ids=(-i "$9")
	log=$(taskset -c "$WRK_CPUS" "$TOP/build/rel/bench/oload" -r "$rate" -d "$BENCH_DURATION" \
	    -c "$conns" "${ids[@]}" "$url" 2>&1) || true
	mkdir -p "$BENCH_OUT/raw"
	printf '%s\n' "$log" > "$BENCH_OUT/raw/$suite-$scenario-$profile-$database-r$rate-c$conns-r$run.txt"
	local k v achieved=0 p50=0 p90=0 p99=0 p999=0 max=0 errors=0 non2xx=0 late=0 done_=0
	for kv in $(grep '^oload:' <<<"$log" | cut -d' ' -f2-); do
		k=${kv%%=*} v=${kv#*=}
		case $k in
		achieved) achieved=$v ;; p50_ms) p50=$v ;; p90_ms) p90=$v ;; p99_ms) p99=$v ;;
		p999_ms) p999=$v ;; max_ms) max=$v ;; errors) errors=$v ;; non2xx) non2xx=$v ;;
		late) late=$v ;; done) done_=$v ;;
		esac
	done
	echo "$suite,$scenario,${BENCH_STACK:-sluice},$profile,$database,$conns,$run,$achieved,$p50,$p90,$p99,$max,0,0,0,$errors,$non2xx,$done_,0" >> "$BENCH_OUT/results.csv"
	bench_point "$suite" "$scenario (open loop at $rate req/s, $profile, db $database, $conns connections, run $run)" \
	    "$(printf '%.0f' "$achieved") req/s, p99 $p99 ms, $((errors + non2xx)) errors"
	echo "$achieved $p50 $p90 $p99 $p999 $max $((errors + non2xx)) $late"
}

bench_median() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print 0 }'; }
bench_median_na() { sort -g | awk '{ a[NR] = $1 } END { if (NR) print a[int((NR + 1) / 2)]; else print "n/a" }'; }

# bench_measure SUITE PROFILE DATABASE CONNS TARGET... : warms up, then runs every target
# BENCH_RUNS times, interleaved so that drift on a shared machine hits all alike, each run
# after BENCH_SETTLE seconds of the same target (unmeasured).  A target
# is SCENARIO=PATH (a GET of PATH) or SCENARIO=lua:NAME (bench/postgrest.lua with
# SCENARIO=NAME, the API under /rest/v1; BENCH_LUA names another script).  Fills MEAS[scenario.rps|p99|err|reqs|avg|rx|tx|cpu|fopen|rpc]
# with the medians (errors summed; fopen and rpc: sluice's FastCGI connections opened a
# second and requests per connection, bench_fcgi_row, n/a where not counted).  BENCH_RUN_HOOK, when set, names a function called as
# HOOK SCENARIO PHASE RUN right before each measured run (PHASE "before") and after every
# wrk run of a target ("warmup", "settle", "run"): a suite whose targets write puts its
# data back there, so that each run measures the data set it says (bench/suites/records.sh).
declare -A MEAS
bench_hook() { [ -z "${BENCH_RUN_HOOK:-}" ] || "$BENCH_RUN_HOOK" "$@"; }
bench_measure() {
	local suite=$1 profile=$2 database=$3 conns=$4
	shift 4
	local t scenario path r
	declare -A rows=()
	for t in "$@"; do
		bench_target "$t"
		[ "$BENCH_WARMUP" = 0 ] || SCENARIO=$BT_LUA taskset -c "$WRK_CPUS" wrk -t2 -c"$conns" -d"${BENCH_WARMUP}s" \
		    "${BT_ARGS[@]}" "$BT_URL" >/dev/null 2>&1 || true
		bench_hook "${t%%=*}" warmup 0
	done
	for r in $(seq "$BENCH_RUNS"); do
		for t in "$@"; do
			scenario=${t%%=*}
			bench_target "$t"
			# The previous target's requests still in the server (32 GETAllEmbed on
			# PostgreSQL take 0.3 s to drain) would land in this run's first
			# latencies: BENCH_SETTLE seconds of this target first, unmeasured.
			if [ "${BENCH_SETTLE:-0}" != 0 ]; then
				SCENARIO=$BT_LUA taskset -c "$WRK_CPUS" wrk -t2 -c"$conns" \
				    -d"${BENCH_SETTLE}s" "${BT_ARGS[@]}" "$BT_URL" >/dev/null 2>&1 || true
				bench_hook "$scenario" settle "$r"
			fi
			bench_hook "$scenario" before "$r"
			rows[$scenario]+="$(SCENARIO=$BT_LUA bench_wrk "$suite" "$scenario" "$profile" "$database" "$conns" "$r" "$BT_URL" "${BT_ARGS[@]}")"$'\n'
			bench_hook "$scenario" run "$r"
		done
	done
	for t in "$@"; do
		scenario=${t%%=*}
		MEAS[$scenario.rps]=$(printf '%s' "${rows[$scenario]}" | awk '{ print $1 }' | bench_median)
		MEAS[$scenario.p99]=$(printf '%s' "${rows[$scenario]}" | awk '{ print $2 }' | bench_median)
		MEAS[$scenario.err]=$(printf '%s' "${rows[$scenario]}" | awk '{ s += $3 } END { print s + 0 }')
		MEAS[$scenario.reqs]=$(printf '%s' "${rows[$scenario]}" | awk '{ print $4 }' | bench_median)
		MEAS[$scenario.avg]=$(printf '%s' "${rows[$scenario]}" | awk '{ print $5 }' | bench_median)
		MEAS[$scenario.rx]=$(printf '%s' "${rows[$scenario]}" | awk '{ print $6 }' | bench_median)
		MEAS[$scenario.tx]=$(printf '%s' "${rows[$scenario]}" | awk '$7 != "n/a" { print $7 }' | bench_median)
		MEAS[$scenario.cpu]=$(printf '%s' "${rows[$scenario]}" | awk '$8 != "" { split($8, c, "/"); print c[1] + c[2] + c[3], $8 }' |
		    sort -g | awk '{ a[NR] = $2 } END { if (NR) print a[int((NR + 1) / 2)]; else print "n/a" }')
		# sluice's FastCGI connections (bench_fcgi_row): medians, n/a when not counted.
		MEAS[$scenario.fopen]=$(printf '%s' "${rows[$scenario]}" | awk '$9 != "" && $9 != "n/a" { print $9 }' | bench_median_na)
		MEAS[$scenario.rpc]=$(printf '%s' "${rows[$scenario]}" | awk '$10 != "" && $10 != "n/a" { print $10 }' | bench_median_na)
	done
}

# Splits a target into BT_URL, BT_ARGS (extra wrk arguments) and BT_LUA (the Lua scenario).
bench_target() {
	local path=${1#*=}
	BT_ARGS=()
	BT_LUA=
	if [ "${path#lua:}" != "$path" ]; then
		BT_LUA=${path#lua:}
		BT_ARGS=(-s "${BENCH_LUA:-$TOP/bench/postgrest.lua}")
		BT_URL=http://127.0.0.1:$BENCH_PORT
	else
		BT_URL=http://127.0.0.1:$BENCH_PORT$path
	fi
}

# A throwaway PostgreSQL cluster for a suite: initdb in the scratch directory (as the
# postgres user when root: PostgreSQL refuses root), listening only on a unix socket there,
# pinned with the server.  Sets BENCH_PG_URL (a sluice db URL for database NAME, created).
# random_page_cost 1.1 (the default 4 is for spinning disks): the data sets are in memory,
# and at 4 the planner reads a 2-page table such as Chinook's artist from end to end for
# one primary key (a prepared GETSingle statement costs half as much again).
bench_pg_start() {
	local name=$1 bin
	bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
	# A cluster of its own per call: a second initdb into one directory would fail, and two
	# suites of one run may ask for the same name (postgrest and peers: chinook).
	BENCH_PG_DIR=$BENCH_TMP/pg-$name
	local n=1
	while [ -e "$BENCH_PG_DIR" ]; do
		BENCH_PG_DIR=$BENCH_TMP/pg-$name-$n
		n=$((n + 1))
	done
	BENCH_PG_PORT=$((BENCH_PORT + 2000))
	mkdir -p "$BENCH_PG_DIR"
	local as=()
	if [ "$(id -u)" -eq 0 ]; then
		chown postgres "$BENCH_PG_DIR"
		as=(runuser -u postgres --)
	fi
	"${as[@]}" "$bin/initdb" -D "$BENCH_PG_DIR/data" -A trust -U postgres --no-sync >"$BENCH_TMP/pg-init-$name.log" 2>&1 || return 1
	"${as[@]}" taskset -c "$SERVER_CPUS" "$bin/pg_ctl" -D "$BENCH_PG_DIR/data" -l "$BENCH_PG_DIR/log" -w \
	    -o "-k $BENCH_PG_DIR -c listen_addresses='' -p $BENCH_PG_PORT -c max_connections=300 -c shared_buffers=256MB -c random_page_cost=1.1" \
	    start >/dev/null || return 1
	"${as[@]}" "$bin/createdb" -h "$BENCH_PG_DIR" -p "$BENCH_PG_PORT" -U postgres "$name" || return 1
	BENCH_PG_BIN=$bin
	BENCH_PG_URL="postgresql:///$name?host=$BENCH_PG_DIR&port=$BENCH_PG_PORT&user=postgres"
}

bench_pg_stop() {
	[ -n "${BENCH_PG_BIN:-}" ] || return 0
	local as=()
	[ "$(id -u)" -eq 0 ] && as=(runuser -u postgres --)
	"${as[@]}" "$BENCH_PG_BIN/pg_ctl" -D "$BENCH_PG_DIR/data" -m fast -w stop >/dev/null 2>&1 || true
	BENCH_PG_BIN=
}

# bench_bar_chart NAME TITLE YLABEL DATA: a clustered bar chart $BENCH_OUT/NAME.png from
# DATA, a tab-separated table whose first line names the series ("scenario<TAB>SQLite<TAB>
# PostgreSQL") and whose other lines give a label (blanks allowed) and one value per
# series; linked from the report, with NAME.dat and NAME.gp (the table and the gnuplot
# script) beside it.  When the largest bar is 10 times the smallest or more,
# the y axis is logarithmic, so that the small bars stay readable (the title says so).
bench_bar_chart() {
	local name=$1 title=$2 ylabel=$3 data=$4 n scale
	command -v gnuplot >/dev/null || { echo "gnuplot is missing (make deps): no chart $name" | bench_report; return 0; }
	n=$(awk -F'\t' 'NR == 1 { print NF; exit }' "$data")
	[ "${n:-0}" -ge 2 ] || return 0
	scale=$(awk -F'\t' 'NR > 1 { for (i = 2; i <= NF; i++) if ($i + 0 > 0) {
		if (min == "" || $i + 0 < min) min = $i + 0; if ($i + 0 > max) max = $i + 0 } }
		END { print (min != "" && max >= 10 * min) ? "log" : "linear" }' "$data")
	[ "$scale" = log ] && title="$title (log scale)"
	# The table and the script stay beside the chart, to re-plot or restyle it.
	cp "$data" "$BENCH_OUT/$name.dat"
	cat > "$BENCH_OUT/$name.gp" <<EOF
set terminal png size 1000,560
set output '$BENCH_OUT/$name.png'
$(bench_gnuplot_head "$title")
set ylabel '$ylabel'
set datafile separator '\t'
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set xtics rotate by 30 right noenhanced
set key outside right
set bmargin 10
set grid ytics
$( [ "$scale" = log ] && echo "set logscale y" && echo "set yrange [*:*]" || echo "set yrange [0:*]")
plot for [i=2:$n] '$BENCH_OUT/$name.dat' using i:xtic(1) title columnheader(i)
EOF
	gnuplot "$BENCH_OUT/$name.gp" 2>/dev/null || true
	[ -f "$BENCH_OUT/$name.png" ] && { echo "![$title]($name.png)"; echo; } | bench_report
}

# Turns tab-separated "LABEL<TAB>SERIES<TAB>VALUE" lines (labels and series may hold
# blanks: "95% reads, skew 0.1, 32 clients") into bench_bar_chart's table (labels and
# series in the order they first appear; a missing pair is 0).
bench_pivot() {
	awk -F'\t' -v head="$1" '
		{ v[$1, $2] = $3; if (!($2 in ss)) { ss[$2] = 1; s[++ns] = $2 }
		  if (!($1 in ll)) { ll[$1] = 1; l[++nl] = $1 } }
		END {
			printf "%s", head; for (j = 1; j <= ns; j++) printf "\t%s", s[j]; print ""
			for (i = 1; i <= nl; i++) {
				printf "%s", l[i]
				for (j = 1; j <= ns; j++) printf "\t%s", ((l[i], s[j]) in v) ? v[l[i], s[j]] : 0
				print ""
			}
		}'
}

# bench_point SUITE TARGET FIGURE: one line on stderr as each point is measured, so that a
# run of many minutes says what it is doing ("bench: chat: ... : 1234 req/s, ...").
bench_point() { echo "bench: $1: $2: $3" >&2; }

# The gnuplot lines every chart starts with: a smoke run (BENCH_QUICK=1) says on the
# chart's face that its numbers mean nothing, in its title and across the plot.
bench_gnuplot_head() {
	local title=$1
	if [ "${BENCH_QUICK:-0}" = 1 ]; then
		echo "set title \"$title\\nSMOKE RUN (BENCH_QUICK=1, 1 s runs): these numbers mean nothing\" noenhanced textcolor rgb '#cc0000'"
		echo "set label 99 'SMOKE RUN: NUMBERS MEAN NOTHING' at graph 0.5, graph 0.55 center front font ',22' textcolor rgb '#cc0000'"
	else
		echo "set title \"$title\" noenhanced"
	fi
}

# Appends markdown to the report.
bench_report() { cat >> "$BENCH_OUT/report.md"; }

bench_rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status" 2>/dev/null || echo 0; }

# bench_smaps_kib PID FIELD...: the sum of the fields (kB) of PID's smaps_rollup (Rss, Pss,
# Private_Clean ...), 0 if gone.
bench_smaps_kib() {
	local pid=$1
	shift
	awk -v f=" $* " 'index(f, " " substr($1, 1, length($1) - 1) " ") { s += $2 } END { print s + 0 }' \
	    "/proc/$pid/smaps_rollup" 2>/dev/null || echo 0
}
