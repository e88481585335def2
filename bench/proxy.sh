#!/usr/bin/env bash
# bench/proxy.sh: what the proxy in front costs, measured with wrk on this machine.
#
# Starts the real stack (sluiced + nginx, like `make run`) in a temporary directory for each
# nginx profile, with three targets behind the same nginx:
#   /nginx-200  nginx's own `return 200` (the ceiling for anything behind nginx)
#   /hello      a bare fcgi2 hello-world pool, bench/hello.c (the ceiling of the architecture)
#   /health     sluice's health endpoint (common/ serve loop, same pool size)
# and runs `wrk -t2 -cN -dD --latency` RUNS times per target and connection count, the
# server pinned to one set of cores and wrk to another (taskset).  Prints a table of
# medians and writes every run to bench/results/<date>-<commit>/proxy.csv.  Also records
# the footprint: idle RSS of a health worker, sluiced and nginx, and bin/health stripped.
#
# Settings (environment): DURATION (10), RUNS (3), CONNS ("32 1000"), POOL (8 workers per
# endpoint), THREADS (8; threads per health worker: hello, single-threaded, gets
# POOL x THREADS processes so that both pools have the same capacity and keepalive),
# NGINX_WORKERS (2), SERVER_CPUS (0), WRK_CPUS (1), PROFILES ("default tuned").
# Never run it on a sanitizer build: it uses bin/ (the release build).
set -euo pipefail
cd "$(dirname "$0")/.."
top=$(pwd)

DURATION=${DURATION:-10}
RUNS=${RUNS:-3}
CONNS=${CONNS:-32 1000}
POOL=${POOL:-8}
THREADS=${THREADS:-8}
NGINX_WORKERS=${NGINX_WORKERS:-2}
SERVER_CPUS=${SERVER_CPUS:-0}
WRK_CPUS=${WRK_CPUS:-1}
PROFILES=${PROFILES:-default tuned}

make -s all build/rel/bench/hello >/dev/null
command -v wrk >/dev/null || { echo "bench: wrk is missing (make deps)" >&2; exit 1; }

stamp=$(date -u +%Y%m%d-%H%M%S)-$(git rev-parse --short HEAD 2>/dev/null || echo nogit)
out=$top/bench/results/$stamp
mkdir -p "$out"
csv=$out/proxy.csv
echo "suite,scenario,stack,profile,database,connections,run,rps,p50_ms,p90_ms,p99_ms,max_ms,errors_connect,errors_read,errors_write,errors_timeout,non2xx,bytes" > "$csv"

tmp=$(mktemp -d /tmp/sluice-bench.XXXXXX)
chmod 755 "$tmp"
pids=()
cleanup() {
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	pids=()
}
trap 'cleanup; rm -rf "$tmp"' EXIT

port=18080
cat > "$tmp/endpoints.conf" <<EOF
set listen 127.0.0.1:$port
set nginx_workers $NGINX_WORKERS
health =/health workers=$POOL threads=$THREADS
hello  =/hello  workers=$((POOL * THREADS)) threads=1 binary=$top/build/rel/bench/hello
EOF

# wrk prints latencies as 1.23ms, 456.00us or 1.20s: to milliseconds.
to_ms() {
	awk -v v="$1" 'BEGIN {
		n = v + 0; u = v; sub(/^[0-9.]+/, "", u);
		if (u == "us") n /= 1000; else if (u == "s") n *= 1000; else if (u == "m") n *= 60000;
		printf "%.3f", n }'
}

# One wrk run; appends a CSV row and prints "rps p99 errors".
wrk_run() {
	local scenario=$1 profile=$2 conns=$3 run=$4 url=$5 log
	log=$(taskset -c "$WRK_CPUS" wrk -t2 -c"$conns" -d"${DURATION}s" --latency "$url" 2>&1)
	local rps p50 p90 p99 max bytes c=0 r=0 w=0 t=0 non2xx=0
	rps=$(awk '/^Requests\/sec:/ { print $2 }' <<<"$log")
	p50=$(to_ms "$(awk '$1 == "50%" { print $2 }' <<<"$log")")
	p90=$(to_ms "$(awk '$1 == "90%" { print $2 }' <<<"$log")")
	p99=$(to_ms "$(awk '$1 == "99%" { print $2 }' <<<"$log")")
	max=$(to_ms "$(awk '$1 == "Latency" { print $4; exit }' <<<"$log")")
	bytes=$(awk '/requests in/ { print $5 }' <<<"$log")
	if grep -q "Socket errors" <<<"$log"; then
		read -r c r w t < <(sed -n 's/.*connect \([0-9]*\), read \([0-9]*\), write \([0-9]*\), timeout \([0-9]*\).*/\1 \2 \3 \4/p' <<<"$log")
	fi
	non2xx=$(awk '/Non-2xx/ { print $NF }' <<<"$log")
	non2xx=${non2xx:-0}
	echo "proxy,$scenario,sluice,$profile,none,$conns,$run,${rps:-0},$p50,$p90,$p99,$max,$c,$r,$w,$t,$non2xx,$bytes" >> "$csv"
	echo "${rps:-0} $p99 $((c + r + w + t + non2xx))"
}

median() { sort -g | awk '{ a[NR] = $1 } END { print a[int((NR + 1) / 2)] }'; }

declare -A RESULT
for profile in $PROFILES; do
	run=$tmp/run-$profile
	prefix=$run/nginx
	mkdir -p "$run" "$prefix/logs"
	chmod 755 "$run"
	"$top/bin/sluiced" -c "$tmp/endpoints.conf" nginx "$profile" -r "$run" -p "$prefix" > "$prefix/nginx.conf"
	# The nginx ceiling: a location that answers by itself, same body as /health.
	sed -i "s|^\(\s*\)server_name localhost;|&\n\1location = /nginx-200 { default_type application/json; return 200 '{\"status\":\"ok\"}'; }|" "$prefix/nginx.conf"
	taskset -c "$SERVER_CPUS" "$top/bin/sluiced" -c "$tmp/endpoints.conf" -r "$run" -b "$top/bin" 2>"$run/sluiced.log" &
	pids+=($!)
	for _ in $(seq 100); do "$top/bin/sluiced" -r "$run" ctl status >/dev/null 2>&1 && break; sleep 0.05; done
	taskset -c "$SERVER_CPUS" /usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" &
	pids+=($!)
	for _ in $(seq 100); do curl -sf -o /dev/null "http://127.0.0.1:$port/health" && break; sleep 0.05; done
	sleep 0.5

	if [ "$profile" = tuned ]; then
		# Footprint, idle: the stack has served only the probe above.
		worker=$("$top/bin/sluiced" -r "$run" ctl status | awk '/^health / { for (i = 1; i <= NF; i++) if ($i ~ /^pids=/) { sub(/pids=/, "", $i); split($i, a, ","); print a[1] } }')
		RESULT[rss_worker]=$(awk '/^VmRSS/ { print $2 }' "/proc/$worker/status")
		RESULT[rss_sluiced]=$(awk '/^VmRSS/ { print $2 }' "/proc/${pids[0]}/status")
		RESULT[rss_nginx]=$(ps -o rss= --ppid "${pids[1]}" -p "${pids[1]}" | awk '{ s += $1 } END { print s }')
	fi

	for conns in $CONNS; do
		# Warm-up: connections, caches, nginx's keepalive pool.
		for target in nginx-200 hello health; do
			taskset -c "$WRK_CPUS" wrk -t2 -c"$conns" -d2s "http://127.0.0.1:$port/$target" >/dev/null 2>&1 || true
		done
		# Runs interleave the targets, so that drift on a shared machine hits all alike.
		declare -A rows=()
		for r in $(seq "$RUNS"); do
			for target in nginx-200 hello health; do
				rows[$target]+="$(wrk_run "$target" "$profile" "$conns" "$r" "http://127.0.0.1:$port/$target")"$'\n'
			done
		done
		for target in nginx-200 hello health; do
			key="$profile/$target/$conns"
			RESULT[$key.rps]=$(printf '%s' "${rows[$target]}" | awk '{ print $1 }' | median)
			RESULT[$key.p99]=$(printf '%s' "${rows[$target]}" | awk '{ print $2 }' | median)
			RESULT[$key.err]=$(printf '%s' "${rows[$target]}" | awk '{ s += $3 } END { print s + 0 }')
		done
		unset rows
	done
	cleanup
done

strip -o "$tmp/health.stripped" "$top/bin/health"
size_health=$(stat -c %s "$tmp/health.stripped")

{
	echo "# proxy: sluice behind nginx, $(date -u +%F), commit $(git rev-parse --short HEAD 2>/dev/null)"
	echo
	echo "wrk -t2 -dD=${DURATION}s --latency, median of $RUNS runs; server on CPUs $SERVER_CPUS, wrk on CPUs $WRK_CPUS;"
	echo "health: $POOL workers x $THREADS threads; hello: $((POOL * THREADS)) workers; $NGINX_WORKERS nginx workers; everything in one session."
	echo
	echo "| profile | target | connections | req/s | p99 ms | errors |"
	echo "|---|---|---|---|---|---|"
	for profile in $PROFILES; do
		for conns in $CONNS; do
			for target in nginx-200 hello health; do
				key="$profile/$target/$conns"
				echo "| $profile | /$target | $conns | ${RESULT[$key.rps]} | ${RESULT[$key.p99]} | ${RESULT[$key.err]} |"
			done
		done
	done
	echo
	if [[ " $PROFILES " == *" tuned "* && " $PROFILES " == *" default "* ]]; then
		for conns in $CONNS; do
			awk -v t="${RESULT[tuned/health/$conns.rps]}" -v d="${RESULT[default/health/$conns.rps]}" \
			    -v h="${RESULT[tuned/hello/$conns.rps]}" -v c="$conns" 'BEGIN {
				printf "c%s: health tuned / default = %.2f; health tuned / bare fcgi2 (tuned) = %.2f\n", c, t / d, t / h }'
		done
		echo
	fi
	echo "Footprint: health worker idle RSS ${RESULT[rss_worker]:-?} KiB; sluiced ${RESULT[rss_sluiced]:-?} KiB;" \
	    "nginx (master + workers) ${RESULT[rss_nginx]:-?} KiB; bin/health stripped $size_health bytes."
} | tee "$out/report.md"
echo "raw runs: $csv"
