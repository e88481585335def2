# bench/suites/multihost.sh: one app host against two behind one load-balancing nginx
# (sourced by bench/run).
#
# The hosts are network namespaces (tests/lib/netns.sh): lb (nginx and wrk), app1 and app2
# (sluiced with a /health and a rest pool on TCP at the host's own address, `set pool_address` and
# SLUICE_POOL_ADDRESS, as docs/deployment.md deploys them).  Each app host's sluiced and its
# workers are pinned to a core of their own (app1 to CPU 0, app2 to CPU 1 when there is
# one); nginx and wrk run in lb on whatever the scheduler gives them.  Two load balancers
# run side by side in lb, one generated with `-H app1` and one with `-H app1,app2`, and the
# runs alternate between them, so that both figures come from the same minutes.  /health
# and a scan of Chinook's tracks are measured: the first is mostly the proxy's work, the
# second the app hosts' (each reads the same SQLite file: one machine; only read).
# Each pool has fewer threads (2 x 8) than the load has connections, so nginx holds more
# connections to a host than its pool has threads: the load balancer must keep them all
# (K = worker_connections / 2).  With the single-host K (8) it closed most of them after
# one request and, over TCP between namespaces, ran out of ports to the host (1-2k req/s
# against 28-31k; docs/benchmarks.md).
#
# What limits the ratio is printed with it: on a machine with two cores there is no core
# left for nginx and wrk, which take their share from the same two cores as the app
# hosts, so two app hosts cannot double one.  Runs only as root with ip netns; otherwise
# the report says why and no row is written.

suite_multihost() {
	local why lb a1 a2 conf prefix conns r h one two ratio old_trap cpus
	. "$TOP/tests/lib/netns.sh"
	if ! netns_usable; then
		why=$NETNS_WHY
		echo "bench: multihost not run ($why)" >&2
		{
			echo "## multihost: one app host vs two"
			echo
			echo "Not run: $why. It needs root and ip netns (network namespaces)."
			echo
		} | bench_report
		return 0
	fi
	old_trap=$(trap -p EXIT)
	trap 'netns_down; bench_stack_stop; bench_pg_stop; bench_autogroup_restore; rm -rf "$BENCH_TMP"' EXIT
	netns_init
	netns_host lb 1 && netns_host app1 11 && netns_host app2 12 || {
		echo "bench: multihost: cannot make the namespaces" >&2
		netns_down
		eval "$old_trap"
		return 1
	}
	lb=$(netns_addr lb) a1=$(netns_addr app1) a2=$(netns_addr app2)
	cpus=$(nproc)
	conf=$BENCH_TMP/multihost
	mkdir -p "$conf"
	chmod 755 "$conf"
	# The database and its directory are the workers' user's (SQLite writes its -wal and
	# -shm beside the file, even to read).
	mkdir -p "$conf/db"
	"$TOP/build/rel/sql/chinook-seed" -f "sqlite:$conf/db/chinook.db" >/dev/null &&
	    chown -R "$("$TOP/bin/sluiced" -c "$TOP/conf/endpoints.conf" user | cut -d: -f1)" \
	    "$conf/db" || {
		echo "bench: multihost: cannot seed Chinook" >&2
		netns_down
		eval "$old_trap"
		return 1
	}
	cat >"$conf/endpoints.conf" <<EOF
set pool_address 127.0.0.1
set nginx_workers 1
db chinook sqlite:$conf/db/chinook.db
health =/health workers=2 threads=8 tcp=127.0.0.1:9001
rest /rest/v1/ workers=2 threads=8 db=chinook tcp=127.0.0.1:9002
EOF
	# wrk runs in lb's namespace: taskset finds this wrk first on PATH, and it runs the
	# real one by its full path.
	mkdir -p "$conf/shim"
	printf '#!/bin/sh\nexec ip netns exec %s %s "$@"\n' "${NETNS_PREFIX}lb" \
	    "$(command -v wrk)" >"$conf/shim/wrk"
	chmod 755 "$conf/shim/wrk"
	for h in app1 app2; do
		local cpu=0
		[ "$h" = app2 ] && [ "$cpus" -gt 1 ] && cpu=1
		netns_run "$h" taskset -c "$cpu" env SLUICE_POOL_ADDRESS="$(netns_addr "$h")" \
		    "$TOP/bin/sluiced" -c "$conf/endpoints.conf" -r "$conf/$h" -b "$TOP/bin" \
		    2>>"$conf/$h.log" &
		for r in $(seq 200); do
			"$TOP/bin/sluiced" -r "$conf/$h" ctl wait 10 >/dev/null 2>&1 && break
			sleep 0.05
		done
	done
	for h in one two; do
		prefix=$conf/lb-$h
		if [ "$h" = one ]; then set -- "$a1"; port=8081; else set -- "$a1,$a2"; port=8082; fi
		"$TOP/bin/sluiced" -c "$conf/endpoints.conf" -r "$conf/lb" nginx tuned -H "$1" \
		    -l "$lb:$port" -p "$prefix" -u nobody:nogroup -o "$prefix/nginx.conf" \
		    2>>"$conf/generator.log"
		netns_run lb /usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" \
		    2>>"$conf/nginx.log" &
		for r in $(seq 200); do
			netns_run lb curl -s -o /dev/null "http://$lb:$port/health" && break
			sleep 0.05
		done
		# Both requests must answer 200 before they are measured (else the errors
		# column says how many did not).
		local code
		code=$(netns_run lb curl -s -o /dev/null -w '%{http_code}' \
		    "http://$lb:$port/rest/v1/track?select=track_id&name=like.*zzzz*")
		[ "$code" = 200 ] || echo "bench: multihost: the scan answers $code through lb-$h" >&2
	done
	{
		echo "## multihost: one app host vs two"
		echo
		echo "GET /health through a load-balancing nginx (tuned profile, \`-H\`, 1 worker) in its own network namespace; each app host is a namespace running sluiced with a pool of 2 workers x 8 threads on TCP (fewer threads than the connections: the load balancer keeps them all), pinned to a core of its own (app1 CPU 0, app2 CPU $([ "$cpus" -gt 1 ] && echo 1 || echo 0)); nginx and wrk are not pinned. Both load balancers run side by side and the runs alternate, median of $BENCH_RUNS."
		echo
		echo "| request | connections | 1 app host req/s | p99 ms | 2 app hosts req/s | p99 ms | errors | 2 / 1 |"
		echo "|---|---|---|---|---|---|---|---|"
	} | bench_report
	# /health: the proxy's work dominates; the scan: the app hosts' (a LIKE over Chinook's
	# 3,503 tracks that matches none, in each worker, with a 2-byte answer).
	local path name
	for path in /health '/rest/v1/track?select=track_id&name=like.*zzzz*'; do
		name=health
		[ "$path" = /health ] || name=scan
		for conns in $BENCH_CONNS; do
			local rows1="" rows2=""
			for h in one two; do
				port=8081
				[ "$h" = two ] && port=8082
				[ "$BENCH_WARMUP" = 0 ] || PATH="$conf/shim:$PATH" taskset -c 0-$((cpus - 1)) wrk -t2 -c"$conns" \
				    -d"${BENCH_WARMUP}s" "http://$lb:$port$path" >/dev/null 2>&1 || true
			done
			for r in $(seq "$BENCH_RUNS"); do
				rows1+="$(PATH="$conf/shim:$PATH" WRK_CPUS=0-$((cpus - 1)) bench_wrk \
				    multihost "$name-one-app-host" tuned none "$conns" "$r" \
				    "http://$lb:8081$path")"$'\n'
				rows2+="$(PATH="$conf/shim:$PATH" WRK_CPUS=0-$((cpus - 1)) bench_wrk \
				    multihost "$name-two-app-hosts" tuned none "$conns" "$r" \
				    "http://$lb:8082$path")"$'\n'
			done
			one=$(printf '%s' "$rows1" | awk '{ print $1 }' | bench_median)
			two=$(printf '%s' "$rows2" | awk '{ print $1 }' | bench_median)
			ratio=$(awk -v a="$two" -v b="$one" 'BEGIN { printf "%.2f", (b > 0 ? a / b : 0) }')
			printf '| `%s` | %s | %.0f | %s | %.0f | %s | %s | %s |\n' "$path" "$conns" \
			    "$one" "$(printf '%s' "$rows1" | awk '{ print $2 }' | bench_median)" "$two" \
			    "$(printf '%s' "$rows2" | awk '{ print $2 }' | bench_median)" \
			    "$(printf '%s%s' "$rows1" "$rows2" | awk '{ s += $3 } END { print s + 0 }')" \
			    "$ratio" | bench_report
			# Not a bench_point: that line stands for a CSV row (tests/bench_smoke.sh).
			echo "multihost: $name: two app hosts / one = $ratio at $conns connections" >&2
		done
	done
	{
		echo
		if [ "$cpus" -le 2 ]; then
			echo "What limits it: this machine has $cpus cores and both are given to app hosts, so nginx (which parses every request twice: HTTP in, FastCGI out) and wrk take their share from the same cores. With one app host, the second core is free for nginx and wrk; with two, they compete with app2 for it. For /health, where nginx and wrk do most of the work, the ratio therefore measures how much app-tier capacity a second host adds when the proxy and the client are not free, not the app tier's scaling: on a machine with spare cores for lb (or a real second host) the ratio is bounded by the load balancer's own ceiling instead (see the proxy suite's nginx return 200). The scan is the app tier's own work (each request a few hundred microseconds in a worker, a 2-byte answer): there nginx and wrk need little, and the ratio shows what a second app host adds when the app tier is the limit. Both hosts read one SQLite file here (one machine, one disk): a real deployment of several hosts shares PostgreSQL instead (docs/deployment.md); the file is only read, so the database is not what is measured."
		else
			echo "What limits it: nginx and wrk share the cores the app hosts do not use ($((cpus - 2)) of $cpus); past them, the load balancer's own ceiling (the proxy suite's nginx return 200) bounds the ratio."
		fi
		echo
	} | bench_report
	netns_down
	eval "$old_trap"
}
