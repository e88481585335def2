# bench/suites/postgrest.sh: the PostgREST benchmark on the Chinook database (sourced by
# bench/run).
#
# The nine scenarios of the published benchmark (bench/postgrest.lua: GETSingle,
# GETSingleEmbed, GETAllEmbed, POSTSingle, POSTBulk, RPCSimple, RPCGETSingle,
# RPCGETSingleEmbed, PATCHSingle, random ids as in its later scripts), against bin/rest on
# SQLite and on a throwaway PostgreSQL cluster, both seeded by build/rel/sql/chinook-seed,
# through each nginx profile, with /health in the same run as the yardstick.  Inserted
# employees are deleted after each table (the benchmark's teardown).  The published
# t3a.nano and c5.xlarge figures stand beside, labelled: other hardware, other software.
#
# Settings: BENCH_PGRST_PROFILES ("default tuned"), BENCH_PGRST_DBS ("sqlite postgresql"),
# BENCH_PGRST_CONNS (32), BENCH_PGRST_PUB_DBS (the databases of the published nginx pair
# and of the open-loop table: BENCH_PGRST_DBS; sqlite alone in a smoke run),
# BENCH_PGRST_POOL (the rest pool on both databases; by default "workers=auto
# threads=auto", the pool that ships, resolved for the CPUs the server is pinned to: one
# worker of 64 threads here.  One process makes the biggest group-commit batches on
# SQLite, and on PostgreSQL its threads share 2 backends with pipelining, where a backend
# per thread cost more than it brought on two cores; 64 threads keep nginx's keepalive at
# K = 16 per nginx worker, so that 32 connections split over 2 nginx workers seldom open
# one of their own).

PGRST_SCENARIOS="GETSingle GETSingleEmbed GETAllEmbed POSTSingle POSTBulk RPCSimple RPCGETSingle RPCGETSingleEmbed PATCHSingle"
# The published runs (PostgREST, k6), after its GET optimisations: t3a.nano and c5.xlarge.
declare -A PGRST_NANO=([GETSingle]=2068 [GETSingleEmbed]=805 [GETAllEmbed]=28.4 [POSTSingle]=1547
    [POSTBulk]=608 [RPCSimple]=2011 [RPCGETSingle]=2166 [RPCGETSingleEmbed]=724 [PATCHSingle]=n/a)
declare -A PGRST_C5=([GETSingle]=2845 [GETSingleEmbed]=1523 [GETAllEmbed]=69.8 [POSTSingle]=1515
    [POSTBulk]=629 [RPCSimple]=2756 [RPCGETSingle]=2793 [RPCGETSingleEmbed]=1449 [PATCHSingle]=n/a)

# Bytes as k6 prints them (kB, MB); 0 (nothing reported) as n/a.
pgrst_size() {
	awk -v n="${1:-0}" 'BEGIN {
		if (n <= 0) print "n/a"; else if (n >= 1e6) printf "%.1f MB\n", n / 1e6;
		else printf "%.1f kB\n", n / 1e3 }'
}

suite_postgrest() {
	local profiles=${BENCH_PGRST_PROFILES:-default tuned} dbs=${BENCH_PGRST_DBS:-sqlite postgresql}
	local conns=${BENCH_PGRST_CONNS:-32} seed=$TOP/build/rel/sql/chinook-seed
	local db url profile targets s size127 sizeall ratio pool
	local pubdbs=${BENCH_PGRST_PUB_DBS:-$dbs}
	[ "${BENCH_QUICK:-0}" = 1 ] && { profiles=${BENCH_PGRST_PROFILES:-tuned}; pubdbs=${BENCH_PGRST_PUB_DBS:-sqlite}; }
	: > "$BENCH_TMP/pgrst-published.txt"
	mkdir -p "$BENCH_TMP/pgrst"
	{
		echo "## postgrest: the PostgREST benchmark's scenarios on Chinook"
		echo
		echo "bin/rest (pool: ${BENCH_PGRST_POOL:-workers=auto threads=auto, the shipped sizes: one worker of 64 threads on the server core, 2 backends on PostgreSQL}) and /health (workers=8 threads=8) in the same run, $conns connections, median of $BENCH_RUNS; published: PostgREST on AWS t3a.nano and c5.xlarge (k6), other hardware and software, for scale only."
		echo
	} | bench_report
	for db in $dbs; do
		case $db in
		sqlite)
			url=sqlite:$BENCH_TMP/pgrst/chinook.db
			"$seed" -f "$url" >/dev/null ;;
		postgresql)
			bench_pg_start chinook || { echo "PostgreSQL did not start: no $db rows" | bench_report; continue; }
			url=$BENCH_PG_URL
			"$seed" -f "$url" >/dev/null ;;
		esac
		pool=${BENCH_PGRST_POOL:-workers=auto threads=auto}
		for profile in $profiles; do
			bench_stack_start "pgrst-$db" "$profile" "set nginx_workers 2
db chinook $url
health =/health workers=8 threads=8
rest /rest/v1/ $pool db=chinook"
			size127=$(curl -s "http://127.0.0.1:$BENCH_PORT/rest/v1/album?select=*,track(*,genre(*))&artist_id=eq.127" | wc -c)
			sizeall=$(curl -s "http://127.0.0.1:$BENCH_PORT/rest/v1/album?select=*,track(*,genre(*))" | wc -c)
			targets=(health=/health)
			for s in $PGRST_SCENARIOS; do targets+=("$s=lua:$s"); done
			bench_measure "postgrest" "$profile" "$db" "$conns" "${targets[@]}"
			curl -s -o /dev/null -X DELETE "http://127.0.0.1:$BENCH_PORT/rest/v1/employee?title=eq.Load%20Tester"
			{
				echo "### $db, $profile profile (/health: ${MEAS[health.rps]} req/s, p99 ${MEAS[health.p99]} ms)"
				echo
				echo "Body sizes: artist 127 embed $size127 bytes (published ~11.9 KB), all albums embed $sizeall bytes (published ~0.80 MB)."
				echo
				echo "Columns as in the published table (k6's http_reqs rate and count, http_req_duration avg, data_received, data_sent, vus, failed requests), plus p99 and the ratio to /health; one run of $BENCH_DURATION s, medians of $BENCH_RUNS."
				echo
				echo "| scenario | req/s | requests | avg ms | p99 ms | received | sent | connections | failed | / health | t3a.nano req/s | c5.xlarge req/s | server CPU &micro;s / request: sluice / nginx / PostgreSQL |"
				echo "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
			} | bench_report
			for s in $PGRST_SCENARIOS; do
				printf '%s\t%s\t%s\n' "$s" "$([ "$db" = sqlite ] && echo SQLite || echo PostgreSQL)" \
				    "${MEAS[$s.rps]}" >> "$BENCH_TMP/pgrst/chart-$profile.txt"
				ratio=$(awk -v a="${MEAS[$s.rps]}" -v b="${MEAS[health.rps]}" 'BEGIN { print (b > 0 ? a / b : 0) }')
				printf '| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %s | %s |\n' "$s" \
				    "${MEAS[$s.rps]}" "${MEAS[$s.reqs]}" "${MEAS[$s.avg]}" "${MEAS[$s.p99]}" \
				    "$(pgrst_size "${MEAS[$s.rx]}")" "$(pgrst_size "${MEAS[$s.tx]}")" "$conns" \
				    "${MEAS[$s.err]}" "$ratio" "${PGRST_NANO[$s]}" "${PGRST_C5[$s]}" \
				    "${MEAS[$s.cpu]:-n/a}" | bench_report
			done
			echo | bench_report
			bench_stack_stop
		done
		if [[ " $pubdbs " == *" $db "* ]]; then
			pgrst_published "$db" "$url" "$pool"
			pgrst_openloop "$db" "$url" "$pool"
		fi
		[ "$db" = postgresql ] && bench_pg_stop
	done
	pgrst_published_table
	pgrst_differences
	# req/s per scenario, a bar per database, a chart per profile.
	for profile in $profiles; do
		[ -s "$BENCH_TMP/pgrst/chart-$profile.txt" ] || continue
		bench_pivot scenario < "$BENCH_TMP/pgrst/chart-$profile.txt" > "$BENCH_TMP/pgrst/chart-$profile.dat"
		bench_bar_chart "postgrest-$profile" "PostgREST scenarios, $profile profile: req/s" "req/s" \
		    "$BENCH_TMP/pgrst/chart-$profile.dat"
	done
}

# The published nginx pair (seed 002: "Nginx with default config", "Nginx with best
# config"), as bench_nginx_published writes it: pub-default (one worker, events {}, access
# log, TCP to the pool, no keepalive) and pub-best (the same, over the unix socket with
# keepalive 64 and keepalive_timeout 120s).  Measured: the two scenarios the seed ran
# through nginx (GETSingle, POSTSingle), and in the same run nginx's own return 200 and the
# bare fcgi2 hello pool behind the same config, which stand in for the seed's baseline
# (PostgREST without nginx; see pgrst_published_table).  Rows go to pgrst-published.txt.
pgrst_published() {
	local db=$1 url=$2 pool=$3 profile tcp hello=$TOP/build/rel/bench/hello
	for profile in pub-default pub-best; do
		tcp=()
		[ "$profile" = pub-default ] && tcp=("tcp=127.0.0.1:$((BENCH_PORT + 1500))"
		    "tcp=127.0.0.1:$((BENCH_PORT + 1501))" "tcp=127.0.0.1:$((BENCH_PORT + 1502))")
		bench_stack_start "pgrst-$db" "$profile" "db chinook $url
rest /rest/v1/ $pool db=chinook ${tcp[0]:-}
hello =/hello workers=8 threads=1 binary=$hello ${tcp[1]:-}
health =/health workers=8 threads=8 ${tcp[2]:-}"
		bench_measure "postgrest-published" "$profile" "$db" "$conns" nginx-200=/nginx-200 \
		    hello=/hello health=/health GETSingle=lua:GETSingle POSTSingle=lua:POSTSingle
		curl -s -o /dev/null -X DELETE "http://127.0.0.1:$BENCH_PORT/rest/v1/employee?title=eq.Load%20Tester"
		printf '%s %s %s %s %s %s %s %s %s\n' "$db" "$profile" "${MEAS[nginx-200.rps]}" \
		    "${MEAS[hello.rps]}" "${MEAS[health.rps]}" "${MEAS[GETSingle.rps]}" \
		    "${MEAS[POSTSingle.rps]}" "${MEAS[GETSingle.err]}" "${MEAS[POSTSingle.err]}" \
		    >> "$BENCH_TMP/pgrst-published.txt"
		bench_stack_stop
	done
}

pgrst_published_table() {
	[ -s "$BENCH_TMP/pgrst-published.txt" ] || return 0
	{
		echo "### postgrest: the published nginx pair"
		echo
		echo "As published (seed 002, t3a.nano): pub-default = one nginx worker, \`events {}\` (512 connections a worker), access log on, the upstream over TCP without keepalive; pub-best = the same over a unix socket with \`keepalive 64\` and \`keepalive_timeout 120s\`. sluice speaks FastCGI to its pools where PostgREST spoke HTTP: \`fastcgi_pass\` to the pool's TCP address, and through an upstream block with \`fastcgi_keep_conn on\`. sluice's own default/tuned profiles are the tables above."
		echo
		echo "**Baseline.** The seed reports each config's loss against PostgREST with no proxy (2067 req/s GETSingle, 1546 POSTSingle). A FastCGI pool cannot answer HTTP, so sluice has no run without nginx. The loss here is taken against nginx's own \`return 200\` under the same config (what the front hop alone allows): hop loss = 1 - /health / return 200, /health being sluice's serve loop with no database. It is the same kind of quantity as the seed's loss (what the proxy configuration takes away), measured on an application that costs nothing, so an upper bound of it; the GETSingle and POSTSingle columns against sluice's tuned-profile figures above give the configuration's cost on the real requests. The bare fcgi2 hello pool (bench/hello.c: 8 single-threaded workers, no sluice code) is shown beside: under pub-best its 8 workers are pinned by nginx's 64 cached connections (docs/fastcgi.md rule 2: W x K = 64 >= 8), which sluice's workers avoid, so it is no baseline there."
		echo
		echo "| database | config | nginx return 200 req/s | bare fcgi2 req/s | /health req/s | hop loss | GETSingle req/s | POSTSingle req/s | errors | published GETSingle | published POSTSingle | published loss (GET / POST) |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
		awk '{
			loss = ($3 > 0) ? 100 * (1 - $5 / $3) : 0
			pg = ($2 == "pub-default") ? "1437" : "1787"; pp = ($2 == "pub-default") ? "1160" : "1420"
			pl = ($2 == "pub-default") ? "30.5% / 24.9%" : "13.5% / 8.15%"
			printf "| %s | %s | %.0f | %.0f | %.0f | %.1f%% | %.0f | %.0f | %d | %s | %s | %s |\n",
			    $1, $2, $3, $4, $5, loss, $6, $7, $8 + $9, pg, pp, pl }' "$BENCH_TMP/pgrst-published.txt"
		echo
	} | bench_report
}

# Open loop (bench/oload.c) beside the closed loop (wrk), on the tuned profile: GETSingle
# (artists 1..275 drawn per request, as bench/postgrest.lua draws them) and /health.  The closed loop runs first and
# gives the saturation rate; the open loop then sends BENCH_OL_LOAD (0.5) of it on a
# fixed schedule, latency from each request's due time, so that queueing is not hidden.
pgrst_openloop() {
	local db=$1 url=$2 pool=$3 t rate frac=${BENCH_OL_LOAD:-0.5} r row
	local get=/rest/v1/artist?select=*\&artist_id=eq.{}
	bench_stack_start "pgrst-ol-$db" tuned "set nginx_workers 2
db chinook $url
health =/health workers=8 threads=8
rest /rest/v1/ $pool db=chinook"
	bench_measure "postgrest-openloop" tuned "$db" "$conns" GETSingle=lua:GETSingle health=/health
	{
		echo "### postgrest: open loop against closed loop, $db, tuned profile"
		echo
		echo "Closed loop: wrk, $conns connections, each sending its next request when the last answer is in (a slow answer delays the requests behind it and is counted once: coordinated omission). Open loop: bench/oload.c, $conns connections, $frac x the closed loop's req/s on a fixed schedule, every latency measured from the time the request was due (as k6's constant-arrival-rate executor in the published runs, and wrk2). GETSingle asks for an artist drawn from 1..275 in each request, in both loops (bench/postgrest.lua; oload -i 1:275). One run of $BENCH_DURATION s per open-loop point."
		echo
		echo "| scenario | closed req/s | closed p99 ms | open rate req/s | open achieved req/s | open p50 ms | open p90 ms | open p99 ms | open p99.9 ms | open max ms | errors | sent > 1 ms late |"
		echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
	} | bench_report
	for t in GETSingle health; do
		rate=$(awk -v a="${MEAS[$t.rps]}" -v f="$frac" 'BEGIN { r = int(a * f); print (r < 1 ? 1 : r) }')
		if [ "$t" = health ]; then
			row=$(bench_oload postgrest-openloop "$t" tuned "$db" "$conns" 1 "$rate" "http://127.0.0.1:$BENCH_PORT/health")
		else
			row=$(bench_oload postgrest-openloop "$t" tuned "$db" "$conns" 1 "$rate" "http://127.0.0.1:$BENCH_PORT$get" 1:275)
		fi
		read -r -a ol <<<"$row"
		printf '| %s | %.0f | %s | %s | %.0f | %s | %s | %s | %s | %s | %s | %s |\n' "$t" \
		    "${MEAS[$t.rps]}" "${MEAS[$t.p99]}" "$rate" "${ol[0]}" "${ol[1]}" "${ol[2]}" \
		    "${ol[3]}" "${ol[4]}" "${ol[5]}" "${ol[6]}" "${ol[7]}" | bench_report
	done
	echo | bench_report
	bench_stack_stop
}

# The report's "Differences from the published benchmark" section (seed 002), one line per
# item of the seed.
pgrst_differences() {
	{
		echo "### postgrest: differences from the published benchmark (seed 002)"
		echo
		echo "| published | this run | same? |"
		echo "|---|---|---|"
		echo "| PostgREST 7 / nightly (Haskell, HTTP) on PostgreSQL 12 | bin/rest (C, FastCGI behind nginx) on SQLite and on PostgreSQL $(ls /usr/lib/postgresql 2>/dev/null | sort -V | tail -1) | no: other server |"
		echo "| Chinook; employee without indexes or constraints | Chinook (sql/chinook, the same row counts and shapes); employee without keys, as published | yes |"
		echo "| GETSingle /artist?select=*&artist_id=eq.N | the same, N random in 1..275 | yes |"
		echo "| GETSingleEmbed /album?select=*,track(*,genre(*))&artist_id=eq.N | the same, N random in 1..347 | yes |"
		echo "| GETAllEmbed /album?select=*,track(*,genre(*)) | the same | yes |"
		echo "| POSTSingle, POSTBulk (20 objects) to /employee, bodies per virtual user and iteration | the same objects, names and e-mail numbered per request (bench/postgrest.lua) | yes |"
		echo "| RPCSimple /rpc/add_them?a=n&b=n+1&c=n+2&d=n+3&e=n+4, n random in 1..347 | the same | yes |"
		echo "| RPCGETSingle /rpc/ret_artists?select=*&artist_id=eq.N | the same | yes |"
		echo "| RPCGETSingleEmbed /rpc/ret_albums?select=album_id,title,artist_id,track(*,genre(*))&artist_id=eq.N | the same | yes |"
		echo "| PATCHSingle /actor?actor_id=eq.N with {\"last_update\":\"now\"} | the same body (on SQLite, 'now' is read as PostgreSQL reads it) | yes |"
		echo "| k6, constant arrival rate for 1 min, from another machine in the VPC; req/s is what the rate allowed | wrk, closed loop, $conns connections, ${BENCH_DURATION} s, median of $BENCH_RUNS, on the same machine over loopback; an open-loop table (bench/oload.c, constant rate, latency from the due time) for GETSingle and /health | no: closed loop measures the ceiling; the open loop is the published method, at half the ceiling |"
		echo "| http_req_duration avg, data received and sent, vus | avg and p99 latency, bytes received (wrk) and sent (counted by the Lua script), connections | same columns, p99 added |"
		echo "| PostgREST with no proxy, then nginx default (one worker, events {}, TCP, no keepalive, access log) and best (unix socket, keepalive 64, keepalive_timeout 120s) | sluice always behind nginx: its default and tuned profiles, and pub-default / pub-best written as published (FastCGI where PostgREST spoke HTTP) | the pair yes; the no-proxy baseline replaced by nginx's return 200 (see the pair's table) |"
		echo "| t3a.nano (2 vCPU, 0.5 GB) and c5.xlarge (4 vCPU) on AWS | this machine (see Method), the server and wrk pinned apart | no: other hardware |"
		echo
	} | bench_report
}
