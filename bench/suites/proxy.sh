# bench/suites/proxy.sh: what the proxy in front costs (sourced by bench/run).
#
# 1. Ceilings and profiles: nginx's own `return 200`, a bare fcgi2 hello-world pool
#    (bench/hello.c: the ceiling of the architecture) and /health, through the default and
#    the tuned profile, at each of BENCH_CONNS.
# 2. unix socket vs TCP loopback between nginx and the pool, both profiles.
# 3. The keepalive sweep: K in BENCH_SWEEP_K x nginx workers x pool sizes (single-threaded
#    workers) x connections.  W x K >= the pool's capacity is where plain fcgi2 workers
#    are pinned (requests stall: timeouts, p99 jumps); sluice's workers bind no thread to
#    a connection (common/serve.c), so /health shows no such cliff.  Charts: req/s and p99
#    against K.
# 4. The PostgREST benchmark's own pair, adapted to FastCGI: "default" (a new upstream
#    connection per request) and "best" (unix socket + keepalive 64, on a pool large enough
#    that 2 x 64 cached connections stay half of its capacity).
#
# Beside req/s, every table of /health gives what sluice's own counters say of the run
# (its metrics address, scraped before and after each wrk run: bench_fcgi_row in
# bench/lib.sh, every run in fastcgi.csv): the FastCGI connections the pool accepted a
# second, and the requests each connection carried (those opened during the run and those
# nginx kept from before it).  That is why the tuned profile is faster: the default one
# opens a connection per request, the tuned one a handful for the whole run.

suite_proxy() {
	local hello=$TOP/build/rel/bench/hello profile conns tcp_port
	local pool="health =/health workers=8 threads=8
hello =/hello workers=64 threads=1 binary=$hello"

	# 1. Ceilings and profiles.
	{
		echo "## proxy: ceilings and profiles"
		echo
		echo "health: 8 workers x 8 threads; hello (bare fcgi2): 64 single-threaded workers (same capacity, same keepalive); 2 nginx workers."
		echo
		echo "| profile | connections | nginx return 200 req/s | bare fcgi2 req/s | /health req/s | /health p99 ms | /health errors | health / bare | /health FastCGI conns opened/s | /health requests per conn |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
	} | bench_report
	for profile in default tuned; do
		bench_stack_start proxy "$profile" "set nginx_workers 2
$pool"
		for conns in $BENCH_CONNS; do
			bench_measure proxy "$profile" none "$conns" nginx-200=/nginx-200 hello=/hello health=/health
			printf '| %s | %s | %.0f | %.0f | %.0f | %s | %s | %.2f | %s | %s |\n' "$profile" "$conns" \
			    "${MEAS[nginx-200.rps]}" "${MEAS[hello.rps]}" "${MEAS[health.rps]}" \
			    "${MEAS[health.p99]}" "${MEAS[health.err]}" \
			    "$(awk -v a="${MEAS[health.rps]}" -v b="${MEAS[hello.rps]}" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
			    "${MEAS[health.fopen]}" "${MEAS[health.rpc]}" | bench_report
		done
		bench_stack_stop
	done
	echo | bench_report

	# 2. unix vs TCP.
	tcp_port=$((BENCH_PORT + 1000))
	{
		echo "## proxy: unix socket vs TCP loopback (nginx to the pool)"
		echo
		echo "| profile | connections | unix req/s | unix p99 ms | TCP req/s | TCP p99 ms | TCP / unix | unix conns opened/s | unix requests per conn | TCP conns opened/s | TCP requests per conn |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|"
	} | bench_report
	for profile in default tuned; do
		bench_stack_start transport "$profile" "set nginx_workers 2
health =/health workers=8 threads=8
health_tcp =/health-tcp workers=8 threads=8 binary=$TOP/bin/health tcp=127.0.0.1:$tcp_port"
		for conns in $BENCH_CONNS; do
			bench_measure transport "$profile" none "$conns" unix=/health tcp=/health-tcp
			printf '| %s | %s | %.0f | %s | %.0f | %s | %.2f | %s | %s | %s | %s |\n' "$profile" "$conns" \
			    "${MEAS[unix.rps]}" "${MEAS[unix.p99]}" "${MEAS[tcp.rps]}" "${MEAS[tcp.p99]}" \
			    "$(awk -v a="${MEAS[tcp.rps]}" -v b="${MEAS[unix.rps]}" 'BEGIN { print (b > 0 ? a / b : 0) }')" \
			    "${MEAS[unix.fopen]}" "${MEAS[unix.rpc]}" "${MEAS[tcp.fopen]}" "${MEAS[tcp.rpc]}" | bench_report
		done
		bench_stack_stop
	done
	echo | bench_report

	# 3. The keepalive sweep.
	suite_proxy_sweep

	# 4. The PostgREST benchmark's pair.
	{
		echo "## proxy: the PostgREST benchmark's nginx pair, adapted to FastCGI"
		echo
		echo "default: fastcgi_pass to the unix socket, a new connection per request; best: upstream keepalive 64 over the unix socket, pool 8 workers x 32 threads (2 nginx workers x 64 = 128 cached connections = half the capacity)."
		echo
		echo "| pair | connections | /health req/s | p99 ms | errors | FastCGI conns opened/s | requests per conn |"
		echo "|---|---|---|---|---|---|---|"
	} | bench_report
	for profile in default tuned; do
		local args=() label=default
		[ "$profile" = tuned ] && { args=(-k 64); label=best; }
		bench_stack_start pgrst "$profile" "set nginx_workers 2
health =/health workers=8 threads=32" "${args[@]}"
		for conns in $BENCH_CONNS; do
			bench_measure "pgrst-$label" "$profile" none "$conns" health=/health
			printf '| %s | %s | %.0f | %s | %s | %s | %s |\n' "$label" "$conns" "${MEAS[health.rps]}" \
			    "${MEAS[health.p99]}" "${MEAS[health.err]}" "${MEAS[health.fopen]}" \
			    "${MEAS[health.rpc]}" | bench_report
		done
		bench_stack_stop
	done
	echo | bench_report
}

# One stack per (nginx workers, pool size); nginx is restarted per K with -k K.
suite_proxy_sweep() {
	local w p k conns row rps p99 err fopen rpc data=$BENCH_OUT/sweep.dat saved_duration=$BENCH_DURATION
	BENCH_DURATION=$BENCH_SWEEP_DURATION
	{
		echo "## proxy: keepalive sweep"
		echo
		echo "Single-threaded workers (capacity = pool size P), nginx workers W, keepalive forced to K (0 = none). W x K >= P is where plain fcgi2 workers would be pinned and stall; sluice's workers take any ready connection (common/serve.c), so no cliff is expected. One ${BENCH_SWEEP_DURATION} s run per point; errors include wrk's 2 s timeouts. The last two columns are sluice's own counters (its metrics address, scraped before and after each run): the FastCGI connections the pool accepted a second, and the requests each carried (K = 0: one each; K > 0: nginx keeps up to W x K and opens few)."
		echo
		echo "| W | P | K | W x K >= P | connections | req/s | p99 ms | errors | FastCGI conns opened/s | requests per conn |"
		echo "|---|---|---|---|---|---|---|---|---|---|"
	} | bench_report
	echo "# W P K conns rps p99 errors fcgi_opened_per_s fcgi_requests_per_conn" > "$data"
	for w in $BENCH_SWEEP_W; do
		for p in $BENCH_SWEEP_P; do
			for k in $BENCH_SWEEP_K; do
				bench_stack_start "sweep-w$w-p$p-k$k" tuned "health =/health workers=$p threads=1" -w "$w" -k "$k"
				for conns in $BENCH_SWEEP_CONNS; do
					row=$(bench_wrk sweep "w$w-p$p-k$k" tuned none "$conns" 1 "http://127.0.0.1:$BENCH_PORT/health")
					read -r rps p99 err _ _ _ _ _ fopen rpc <<<"$row"
					echo "$w $p $k $conns $rps $p99 $err ${fopen:-n/a} ${rpc:-n/a}" >> "$data"
					printf '| %s | %s | %s | %s | %s | %.0f | %s | %s | %s | %s |\n' "$w" "$p" "$k" \
					    "$([ $((w * k)) -ge "$p" ] && echo yes || echo no)" "$conns" "$rps" "$p99" "$err" \
					    "${fopen:-n/a}" "${rpc:-n/a}" | bench_report
				done
				bench_stack_stop
			done
		done
	done
	BENCH_DURATION=$saved_duration
	echo | bench_report
	bench_sweep_charts "$data"
}

# A sweep chart's figure in words: bench_sweep_label rps|p99|rpc [short].
bench_sweep_label() {
	case $1 in
	rps) echo "req/s" ;;
	p99) [ -n "${2:-}" ] && echo "p99 ms" || echo "p99 (ms, log scale)" ;;
	rpc) [ -n "${2:-}" ] && echo "requests per FastCGI connection" ||
	    echo "requests per FastCGI connection (sluice's counters, log scale)" ;;
	esac
}

# req/s, p99 and the requests per FastCGI connection against K, one line per (W, P), one
# chart of each per connection count.
bench_sweep_charts() {
	local data=$1 conns plot series w p
	command -v gnuplot >/dev/null || { echo "gnuplot is missing (make deps): no charts" | bench_report; return 0; }
	for conns in $BENCH_SWEEP_CONNS; do
		for what in rps p99 rpc; do
			plot=""
			for w in $BENCH_SWEEP_W; do
				for p in $BENCH_SWEEP_P; do
					series=$BENCH_TMP/sweep-$conns-$w-$p.dat
					awk -v w="$w" -v p="$p" -v c="$conns" '$1 == w && $2 == p && $4 == c { print $3, $5, $6, $9 }' "$data" > "$series"
					col=2; [ "$what" = p99 ] && col=3; [ "$what" = rpc ] && col=4
					plot+="${plot:+, }'$series' using 1:$col with linespoints title 'W=$w P=$p'"
				done
			done
			cat > "$BENCH_OUT/sweep-$what-c$conns.gp" <<EOF
set terminal png size 800,480
set output '$BENCH_OUT/sweep-$what-c$conns.png'
$(bench_gnuplot_head "keepalive sweep, $conns connections: $(bench_sweep_label "$what") against K")
set xlabel 'K (nginx upstream keepalive per worker)'
set ylabel '$(bench_sweep_label "$what" short)'
$( [ "$what" != rps ] && echo "set logscale y")
set key outside right
plot $plot
EOF
			gnuplot "$BENCH_OUT/sweep-$what-c$conns.gp" 2>/dev/null || true
			[ -f "$BENCH_OUT/sweep-$what-c$conns.png" ] && echo "![sweep $what c$conns](sweep-$what-c$conns.png)" | bench_report
		done
	done
	echo | bench_report
}
