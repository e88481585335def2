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
# BENCH_PGRST_CONNS (32), BENCH_PGRST_POOL (the rest pool on both databases; by default
# "workers=8 threads=8" on SQLite, the pool /health has, and "workers=4 threads=4" on
# PostgreSQL, where each thread is a server backend and 64 of them on two cores cost more
# than they bring).

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
	[ "${BENCH_QUICK:-0}" = 1 ] && { profiles=${BENCH_PGRST_PROFILES:-tuned}; }
	mkdir -p "$BENCH_TMP/pgrst"
	{
		echo "## postgrest: the PostgREST benchmark's scenarios on Chinook"
		echo
		echo "bin/rest (pool: ${BENCH_PGRST_POOL:-workers=8 threads=8 on SQLite, workers=4 threads=4 on PostgreSQL}) and /health (workers=8 threads=8) in the same run, $conns connections, median of $BENCH_RUNS; published: PostgREST on AWS t3a.nano and c5.xlarge (k6), other hardware and software, for scale only."
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
		pool=${BENCH_PGRST_POOL:-workers=4 threads=4}
		[ "$db" = sqlite ] && pool=${BENCH_PGRST_POOL:-workers=8 threads=8}
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
				echo "| scenario | req/s | requests | avg ms | p99 ms | received | sent | connections | failed | / health | t3a.nano req/s | c5.xlarge req/s |"
				echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
			} | bench_report
			for s in $PGRST_SCENARIOS; do
				printf '%s\t%s\t%s\n' "$s" "$([ "$db" = sqlite ] && echo SQLite || echo PostgreSQL)" \
				    "${MEAS[$s.rps]}" >> "$BENCH_TMP/pgrst/chart-$profile.txt"
				ratio=$(awk -v a="${MEAS[$s.rps]}" -v b="${MEAS[health.rps]}" 'BEGIN { print (b > 0 ? a / b : 0) }')
				printf '| %s | %.0f | %s | %s | %s | %s | %s | %s | %s | %.2f | %s | %s |\n' "$s" \
				    "${MEAS[$s.rps]}" "${MEAS[$s.reqs]}" "${MEAS[$s.avg]}" "${MEAS[$s.p99]}" \
				    "$(pgrst_size "${MEAS[$s.rx]}")" "$(pgrst_size "${MEAS[$s.tx]}")" "$conns" \
				    "${MEAS[$s.err]}" "$ratio" "${PGRST_NANO[$s]}" "${PGRST_C5[$s]}" | bench_report
			done
			echo | bench_report
			bench_stack_stop
		done
		[ "$db" = postgresql ] && bench_pg_stop
	done
	# req/s per scenario, a bar per database, a chart per profile.
	for profile in $profiles; do
		[ -s "$BENCH_TMP/pgrst/chart-$profile.txt" ] || continue
		bench_pivot scenario < "$BENCH_TMP/pgrst/chart-$profile.txt" > "$BENCH_TMP/pgrst/chart-$profile.dat"
		bench_bar_chart "postgrest-$profile" "PostgREST scenarios, $profile profile: req/s" "req/s" \
		    "$BENCH_TMP/pgrst/chart-$profile.dat"
	done
}
