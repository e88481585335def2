# bench/suites/peers.sh: sluice against the stacks a user would pick instead (sourced by
# bench/run: `bench/run peers`).
#
# The same scenarios, data, nginx and pinning for every stack: /health, GETSingle and
# GETSingleEmbed of the PostgREST benchmark on Chinook (bench/postgrest.lua) and the
# Starcord chat page GET / (bench mode: a random seeded user, the page uncompressed), on
# SQLite and on a throwaway PostgreSQL cluster, seeded once by the real seeders.  The peers,
# each small and idiomatic under bench/peers/NAME/:
#   php-fpm       PHP-FPM 8.2 (pdo_sqlite / pdo_pgsql) over FastCGI, in its default pool
#                 (as installed: pm = dynamic, 5 children, a connection per request, no
#                 FastCGI keepalive) and its tuned one (pm = static, PEERS_PHP_CHILDREN,
#                 persistent connections, keepalive);
#   fastify       Node.js, a cluster of PEERS_NODE_WORKERS (2), pg / better-sqlite3;
#   fastapi       FastAPI + uvicorn --workers 2 (uvloop, httptools) + psycopg 3, Jinja;
#   platformatic  @platformatic/db 2.61.0: the automatic REST API, GETSingle only (its own
#                 URL and JSON shape: camelCase fields), no /health, no embedding, no page;
#                 one process (`start`; several workers need Platformatic's runtime);
#   go            a compiled peer: Go's net/http, pgx v4's pool / go-sqlite3 through
#                 database/sql, from Debian's golang packages (GOPATH mode, nothing
#                 fetched), one process on every CPU: /health and GETSingle only.
# Every peer runs behind its own nginx (bench/peers/nginx-*.conf.in: the tuned profile's
# settings, HTTP/1.1 upstream with keepalive, or FastCGI for PHP-FPM) while sluice's stack
# (tuned) runs beside it, idle when not measured, and the runs of both are interleaved, so
# each ratio sluice / peer comes from one stretch of time.  Before measuring, each peer's
# GETSingle and GETSingleEmbed bodies are compared with sluice's (the report says whether
# they are the same JSON); the chat page's size is the mean response size wrk saw.
#
# Installing: the Debian packages (apt-get, when missing) and the npm packages (npm ci into
# bench/peers/.cache/NAME/, gitignored; better-sqlite3 built with node-gyp against the
# system Node's headers) are installed by this suite on first use, never by make test.  A
# peer that cannot be installed or started gets n/a rows with the reason; the Node peers
# need Node 20 or newer.
#
# Settings: BENCH_PEERS ("php-fpm fastify fastapi platformatic go"), PEERS_DBS ("sqlite
# postgresql"), PEERS_CONNS (32), PEERS_SCENARIOS ("health GETSingle GETSingleEmbed chat"),
# PEERS_PHP_CHILDREN (8), PEERS_NODE_WORKERS (2), PEERS_PY_WORKERS (2), PEERS_PG_POOL (8
# connections per peer process), PEERS_CHAT_CHANNELS (64), PEERS_CHAT_USERS (1024),
# PEERS_CHAT_MSGS (200000), PEERS_NO_INSTALL=1 (use what is there), PEERS_DIRECT=1 (also
# measure the HTTP peers on their own port, without nginx: a labelled column, profile
# "tuned-direct" in results.csv).

PEERS_DEBS="php8.2-fpm php8.2-sqlite3 php8.2-pgsql python3-fastapi python3-uvicorn python3-uvloop python3-httptools python3-psycopg python3-psycopg-pool python3-jinja2 golang-go golang-github-jackc-pgx-v4-dev golang-github-mattn-go-sqlite3-dev"
PEERS_DIR=$TOP/bench/peers
declare -A PEER_NA=()
PEER_PIDS=()

# Installs what the peers need; a peer that cannot be installed gets PEER_NA[peer].
peers_install() {
	local peers=$1 missing=() p node_major
	for p in $PEERS_DEBS; do
		dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
	done
	if [ ${#missing[@]} -gt 0 ] && [ "${PEERS_NO_INSTALL:-0}" != 1 ]; then
		echo "peers: apt-get install ${missing[*]}" >&2
		DEBIAN_FRONTEND=noninteractive apt-get install -y -q "${missing[@]}" >"$BENCH_TMP/peers-apt.log" 2>&1 ||
		    echo "peers: apt-get failed (see the log in a kept run)" >&2
	fi
	[ -x /usr/sbin/php-fpm8.2 ] || PEER_NA[php-fpm]="php8.2-fpm is not installed"
	/usr/bin/python3 -c 'import fastapi, uvicorn, uvloop, httptools, psycopg, psycopg_pool, jinja2' 2>/dev/null ||
	    PEER_NA[fastapi]="python3-fastapi, -uvicorn, -uvloop, -httptools, -psycopg, -jinja2 are not all installed"
	node_major=$(node -p 'process.versions.node.split(".")[0]' 2>/dev/null || echo 0)
	for p in fastify platformatic; do
		[[ " $peers " == *" $p "* ]] || continue
		if [ "$node_major" -lt 20 ]; then
			PEER_NA[$p]="needs Node 20 (node is ${node_major:-missing})"
			continue
		fi
		peers_npm "$p" || PEER_NA[$p]="npm ci failed (bench/peers/.cache/$p/npm.log)"
	done
	if [[ " $peers " == *" go "* ]]; then
		if ! command -v go >/dev/null || [ ! -d /usr/share/gocode/src/github.com/jackc/pgx/v4 ] ||
		    [ ! -d /usr/share/gocode/src/github.com/mattn/go-sqlite3 ]; then
			PEER_NA[go]="golang-go, golang-github-jackc-pgx-v4-dev, golang-github-mattn-go-sqlite3-dev are not all installed"
		else
			peers_go_build || PEER_NA[go]="go build failed (bench/peers/.cache/go/build.log)"
		fi
	fi
}

# Builds bench/peers/go into bench/peers/.cache/go/peer with Debian's Go packages (GOPATH
# mode: /usr/share/gocode), again only when its source changed; go-sqlite3 is cgo, built
# against the system's SQLite (the first build takes about 30 s).
peers_go_build() {
	local cache=$PEERS_DIR/.cache/go stamp
	mkdir -p "$cache"
	stamp=$(cat "$PEERS_DIR"/go/*.go | sha256sum | cut -c1-16)
	[ -x "$cache/peer" ] && [ -f "$cache/.stamp-$stamp" ] && return 0
	echo "peers: go build of bench/peers/go (first run: about 30 s)" >&2
	(cd "$PEERS_DIR/go" && GO111MODULE=off GOPATH=/usr/share/gocode GOCACHE="$cache/gocache" \
	    go build -o "$cache/peer" .) >"$cache/build.log" 2>&1 || return 1
	rm -f "$cache"/.stamp-*
	touch "$cache/.stamp-$stamp"
}

# npm ci of bench/peers/NAME into bench/peers/.cache/NAME, redone only when the lock file
# changed; the peer's own files are copied there on every run.
peers_npm() {
	local name=$1 cache=$PEERS_DIR/.cache/$1 stamp gyp d
	mkdir -p "$cache"
	cp -r "$PEERS_DIR/$name/." "$cache/"
	stamp=$(sha256sum "$PEERS_DIR/$name/package-lock.json" | cut -c1-16)
	[ -f "$cache/.stamp-$stamp" ] && return 0
	[ "${PEERS_NO_INSTALL:-0}" = 1 ] && return 1
	echo "peers: npm ci in $cache (first run: minutes)" >&2
	(cd "$cache" && npm ci --no-audit --no-fund --omit=dev) >"$cache/npm.log" 2>&1 || return 1
	# npm does not run install scripts it was not told to allow, and the prebuilt
	# better-sqlite3 binaries live on GitHub: build it against the system Node's headers.
	gyp=$(dirname "$(readlink -f "$(command -v npm)")")/../node_modules/node-gyp/bin/node-gyp.js
	for d in $(find "$cache/node_modules" -type d -name better-sqlite3 -not -path "*/@types/*"); do
		[ -f "$d/binding.gyp" ] || continue
		(cd "$d" && node "$gyp" rebuild --release --nodedir=/usr -j 2) >>"$cache/npm.log" 2>&1 || return 1
	done
	rm -f "$cache"/.stamp-*
	touch "$cache/.stamp-$stamp"
}

# Renders a template: peers_render IN OUT KEY=VALUE...
peers_render() {
	local in=$1 out=$2 kv script=()
	shift 2
	for kv in "$@"; do
		script+=(-e "s|@${kv%%=*}@|${kv#*=}|g")
	done
	sed "${script[@]}" "$in" > "$out"
}

peers_wait_http() {
	local url=$1 i
	for i in $(seq 400); do
		curl -s -o /dev/null -f "$url" && return 0
		sleep 0.05
	done
	return 1
}

# peers_start PEER PROFILE DB: starts the peer and its nginx on PEERS_PORT, pinned with the
# server.  The databases are in PEERS_ENV (PEER_* variables, bench/peers/*/ say which) and
# PEERS_PLT_URL.  Every process started joins STACK_PIDS at once, so that bench/run's exit
# trap stops it even when the run is interrupted.
peers_start() {
	local peer=$1 profile=$2 db=$3 run=$BENCH_TMP/peer-$1-$2-$3 port=$((BENCH_PORT + 3001))
	local prefix children k env_lines kv
	prefix=$run/nginx
	mkdir -p "$prefix/logs"
	PEER_PIDS=()
	case $peer in
	php-fpm)
		children=${PEERS_PHP_CHILDREN:-8}
		# PHP-FPM passes the pool's env[] to the scripts; one pool, both databases.
		env_lines=""
		for kv in "${PEERS_ENV[@]}" PEER_PERSISTENT=$([ "$profile" = tuned ] && echo 1 || echo 0); do
			env_lines+="env[${kv%%=*}] = ${kv#*=}\\n"
		done
		peers_render "$PEERS_DIR/php-fpm/pool-$profile.conf.in" "$run/php-fpm.conf" RUN="$run" \
		    SOCKET="$run/php.sock" CHILDREN="$children" ENV="$env_lines"
		taskset -c "$SERVER_CPUS" /usr/sbin/php-fpm8.2 -R -F -y "$run/php-fpm.conf" \
		    -d "opcache.enable=1" >"$run/php.log" 2>&1 &
		PEER_PIDS+=($!) STACK_PIDS+=($!)
		k=$((children / 4))
		[ "$k" -lt 1 ] && k=1
		if [ "$profile" = tuned ]; then
			set -- KEEPALIVE_LINE="keepalive $k;" KEEP_CONN=on
		else
			set -- KEEPALIVE_LINE="" KEEP_CONN=off
		fi
		peers_render "$PEERS_DIR/nginx-fastcgi.conf.in" "$prefix/nginx.conf" PREFIX="$prefix" \
		    WORKERS=2 LISTEN="127.0.0.1:$PEERS_PORT" SOCKET="$run/php.sock" ROOT="$PEERS_DIR/php-fpm" "$@"
		local i
		for i in $(seq 200); do [ -S "$run/php.sock" ] && break; sleep 0.05; done
		;;
	fastify)
		env "${PEERS_ENV[@]}" PEER_PORT=$port PEER_WORKERS="${PEERS_NODE_WORKERS:-2}" \
		    PEER_PG_POOL="${PEERS_PG_POOL:-8}" NODE_ENV=production \
		    taskset -c "$SERVER_CPUS" node "$PEERS_DIR/.cache/fastify/server.js" >"$run/peer.log" 2>&1 &
		PEER_PIDS+=($!) STACK_PIDS+=($!)
		;;
	fastapi)
		env "${PEERS_ENV[@]}" PEER_PG_POOL="${PEERS_PG_POOL:-8}" PYTHONDONTWRITEBYTECODE=1 \
		    taskset -c "$SERVER_CPUS" /usr/bin/python3 -m uvicorn app:app --app-dir "$PEERS_DIR/fastapi" \
		    --host 127.0.0.1 --port "$port" --workers "${PEERS_PY_WORKERS:-2}" --loop uvloop \
		    --http httptools --no-access-log --log-level warning >"$run/peer.log" 2>&1 &
		PEER_PIDS+=($!) STACK_PIDS+=($!)
		;;
	go)
		env "${PEERS_ENV[@]}" PEER_PORT=$port PEER_PG_POOL="${PEERS_PG_POOL:-8}" \
		    taskset -c "$SERVER_CPUS" "$PEERS_DIR/.cache/go/peer" >"$run/peer.log" 2>&1 &
		PEER_PIDS+=($!) STACK_PIDS+=($!)
		;;
	platformatic)
		# Its database is the chinook one only: an automatic API over one database.
		# `start` runs one process: several workers need Platformatic's runtime.
		(cd "$PEERS_DIR/.cache/platformatic" && exec env PLT_PORT=$port \
		    PLT_DATABASE_URL="$PEERS_PLT_URL" taskset -c "$SERVER_CPUS" node node_modules/@platformatic/db/db.mjs start \
		    -c platformatic.json) >"$run/peer.log" 2>&1 &
		PEER_PIDS+=($!) STACK_PIDS+=($!)
		;;
	esac
	if [ "$peer" != php-fpm ]; then
		peers_render "$PEERS_DIR/nginx-http.conf.in" "$prefix/nginx.conf" PREFIX="$prefix" \
		    WORKERS=2 LISTEN="127.0.0.1:$PEERS_PORT" UPSTREAM="127.0.0.1:$port" KEEPALIVE=64
		if [ "$peer" = platformatic ]; then
			peers_wait_http "http://127.0.0.1:$port/artist?limit=1" || return 1
		else
			peers_wait_http "http://127.0.0.1:$port/health" || return 1
		fi
	fi
	taskset -c "$SERVER_CPUS" /usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" \
	    -e "$prefix/logs/error.log" >"$run/nginx.log" 2>&1 &
	PEER_PIDS+=($!) STACK_PIDS+=($!)
	peers_wait_http "http://127.0.0.1:$PEERS_PORT/nginx-200" || return 1
	# PHP-FPM answers through nginx only.
	[ "$peer" != php-fpm ] || peers_wait_http "http://127.0.0.1:$PEERS_PORT/health"
}

# Stops the peer's processes (and only them), and drops them from STACK_PIDS.
peers_stop() {
	local p keep=() q
	for p in "${PEER_PIDS[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${PEER_PIDS[@]}"; do wait "$p" 2>/dev/null || true; done
	for q in "${STACK_PIDS[@]}"; do
		[[ " ${PEER_PIDS[*]} " == *" $q "* ]] || keep+=("$q")
	done
	STACK_PIDS=("${keep[@]}")
	PEER_PIDS=()
}

# What each peer can do: its target for a scenario, or nothing (n/a).
peers_target() {
	local peer=$1 scenario=$2
	case $peer:$scenario in
	platformatic:GETSingle) echo "lua:$PEERS_DIR/platformatic.lua:GETSingle" ;;
	platformatic:*) ;;
	go:GETSingleEmbed | go:chat) ;;
	*:health) echo "/health" ;;
	*:chat) echo "/" ;;
	*:GET*) echo "lua:$TOP/bench/postgrest.lua:$scenario" ;;
	esac
}

# peers_measure PROFILE DATABASE CONNS TARGET...: bench_measure for targets on either
# stack.  A target is KEY=STACK|PORT|PROFILE|SPEC, SPEC a path or lua:FILE:SCENARIO.  Fills
# MEAS[KEY.rps|p99|err|size] (size: mean response bytes, headers included).
peers_measure() {
	local database=$1 conns=$2 t key spec stack port profile url r row
	shift 2
	declare -A rows=() sizes=()
	for r in warm $(seq "$BENCH_RUNS"); do
		for t in "$@"; do
			key=${t%%=*}
			IFS='|' read -r stack port profile spec <<<"${t#*=}"
			local args=() lua=
			if [ "${spec#lua:}" != "$spec" ]; then
				spec=${spec#lua:}
				lua=${spec##*:}
				args=(-s "${spec%:*}")
				url=http://127.0.0.1:$port
			else
				url=http://127.0.0.1:$port$spec
			fi
			if [ "$r" = warm ]; then
				[ "$BENCH_WARMUP" = 0 ] || SCENARIO=$lua taskset -c "$WRK_CPUS" wrk -t2 -c"$conns" -d"${BENCH_WARMUP}s" \
				    "${args[@]}" "$url" >/dev/null 2>&1 || true
				continue
			fi
			row=$(SCENARIO=$lua BENCH_STACK=$stack bench_wrk peers "${key%@*}" "$profile" "$database" "$conns" "$r" "$url" "${args[@]}")
			rows[$key]+="$row"$'\n'
			sizes[$key]+="$(tail -1 "$BENCH_OUT/results.csv" | awk -F, '{ if ($18 > 0) printf "%d", $19 / $18; else print 0 }')"$'\n'
		done
	done
	for t in "$@"; do
		key=${t%%=*}
		MEAS[$key.rps]=$(printf '%s' "${rows[$key]}" | awk '{ print $1 }' | bench_median)
		MEAS[$key.p99]=$(printf '%s' "${rows[$key]}" | awk '{ print $2 }' | bench_median)
		MEAS[$key.err]=$(printf '%s' "${rows[$key]}" | awk '{ s += $3 } END { print s + 0 }')
		MEAS[$key.size]=$(printf '%s' "${sizes[$key]}" | bench_median)
	done
}

# Whether the peer answers GETSingle and GETSingleEmbed with sluice's JSON (a few ids):
# the same values, keys and order, compared after jq -c (on PostgreSQL sluice's embeds
# keep json_agg's spaces between elements, which the peers do not write).
peers_same_json() {
	local peer=$1 id a b q
	[ "$peer" = platformatic ] && { echo "its own shape (camelCase fields, no embedding)"; return; }
	command -v jq >/dev/null || { echo "not compared (jq is missing)"; return; }
	local embed="album?select=*,track(*,genre(*))&artist_id=eq."
	[ "$peer" = go ] && embed=
	for id in 5 127 300; do
		for q in "artist?select=*&artist_id=eq.$id" ${embed:+"$embed$id"}; do
			a=$(curl -s "http://127.0.0.1:$BENCH_PORT/rest/v1/$q" | jq -c . 2>&1 | sha256sum)
			b=$(curl -s "http://127.0.0.1:$PEERS_PORT/rest/v1/$q" | jq -c . 2>&1 | sha256sum)
			[ "$a" = "$b" ] || { echo "differs ($q)"; return; }
		done
	done
	echo "the same as sluice's"
}

suite_peers() {
	local peers=${BENCH_PEERS:-php-fpm fastify fastapi platformatic go} dbs=${PEERS_DBS:-sqlite postgresql}
	local conns=${PEERS_CONNS:-32} scenarios=${PEERS_SCENARIOS:-health GETSingle GETSingleEmbed chat}
	local channels=${PEERS_CHAT_CHANNELS:-64} users=${PEERS_CHAT_USERS:-1024} msgs=${PEERS_CHAT_MSGS:-200000}
	local scratch=$BENCH_TMP/peers db peer profile profiles s target chinook chat same targets ratio
	local direct=${PEERS_DIRECT:-0} dcol
	if [ "${BENCH_QUICK:-0}" = 1 ]; then
		channels=16 users=64 msgs=20000
	fi
	PEERS_PORT=$((BENCH_PORT + 3000))
	mkdir -p "$scratch"
	chmod 755 "$scratch"
	peers_install "$peers"
	{
		echo "## peers: sluice against the stacks a user would pick instead"
		echo
		echo "Every stack behind the same nginx (2 workers, the tuned profile's settings; HTTP/1.1 upstream with keepalive 64, or FastCGI for PHP-FPM), pinned alike; sluice's stack (tuned; its pools at the sizes that ship, workers=auto threads=auto, resolved for the server's CPUs as sluiced's start line says) runs beside each peer and their runs are interleaved, so each ratio comes from one stretch of time. $conns connections, median of $BENCH_RUNS. Chat page: $channels channels, $users users, $msgs messages, a random seeded user per request, uncompressed. Peers: php-fpm default (pm dynamic, 5 children max, a connection per request, no FastCGI keepalive) and tuned (pm static ${PEERS_PHP_CHILDREN:-8}, persistent connections, keepalive); fastify (${PEERS_NODE_WORKERS:-2}-process cluster, pg / better-sqlite3); fastapi (uvicorn ${PEERS_PY_WORKERS:-2} workers, uvloop, httptools, psycopg 3 / sqlite3, Jinja); platformatic (@platformatic/db 2.61.0, one process: GETSingle only, its own URL and camelCase JSON); go (Go's net/http, one process on every CPU, pgx v4 pool / go-sqlite3: /health and GETSingle only). n/a: the peer cannot do the scenario (or is not installed). \"JSON\": whether the peer's GETSingle/GETSingleEmbed bodies are sluice's bytes."
		echo
		echo "Versions: $(/usr/sbin/php-fpm8.2 -v 2>/dev/null | head -1 | awk '{ print "PHP", $2 }'); Node $(node -v 2>/dev/null); fastify, pg, better-sqlite3 as pinned in bench/peers/fastify/package-lock.json; FastAPI $(dpkg-query -W -f='${Version}' python3-fastapi 2>/dev/null), uvicorn $(dpkg-query -W -f='${Version}' python3-uvicorn 2>/dev/null), psycopg $(dpkg-query -W -f='${Version}' python3-psycopg 2>/dev/null), Python $(/usr/bin/python3 -V 2>&1 | awk '{ print $2 }'); $(go version 2>/dev/null | awk '{ print "Go", $3 }'), pgx $(dpkg-query -W -f='${Version}' golang-github-jackc-pgx-v4-dev 2>/dev/null), go-sqlite3 $(dpkg-query -W -f='${Version}' golang-github-mattn-go-sqlite3-dev 2>/dev/null)."
		echo
	} | bench_report

	for db in $dbs; do
		# The data, seeded once per database by the real seeders.
		case $db in
		sqlite)
			chinook=sqlite:$scratch/chinook.db
			chat=sqlite:$scratch/chat.db
			"$TOP/build/rel/sql/chinook-seed" -f "$chinook" >/dev/null
			SEED_CHANNEL_COUNT=$channels SEED_USER_COUNT=$users SEED_MSG_COUNT=$msgs \
			    "$TOP/build/rel/sql/chat-seed" -q -f -S "$TOP/sql/chat" "$chat"
			PEERS_ENV=(PEER_DB_KIND=sqlite PEER_DB_PATH="$scratch/chinook.db" PEER_CHAT_PATH="$scratch/chat.db")
			PEERS_PLT_URL="sqlite://$scratch/chinook.db"
			;;
		postgresql)
			if ! bench_pg_start chinook; then
				echo "PostgreSQL did not start: no postgresql rows" | bench_report
				continue
			fi
			"$BENCH_PG_BIN/createdb" -h "$BENCH_PG_DIR" -p "$BENCH_PG_PORT" -U postgres chat
			chinook=$BENCH_PG_URL
			chat="postgresql:///chat?host=$BENCH_PG_DIR&port=$BENCH_PG_PORT&user=postgres"
			"$TOP/build/rel/sql/chinook-seed" -f "$chinook" >/dev/null
			SEED_CHANNEL_COUNT=$channels SEED_USER_COUNT=$users SEED_MSG_COUNT=$msgs \
			    "$TOP/build/rel/sql/chat-seed" -q -f -S "$TOP/sql/chat" "$chat"
			PEERS_ENV=(PEER_DB_KIND=pg PEER_PG_HOST="$BENCH_PG_DIR" PEER_PG_PORT="$BENCH_PG_PORT"
			    PEER_PG_DB=chinook PEER_PG_CHAT_DB=chat PEER_PG_USER=postgres)
			PEERS_PLT_URL="postgres://postgres@localhost/chinook?host=${BENCH_PG_DIR//\//%2F}&port=$BENCH_PG_PORT"
			;;
		esac
		PEERS_ENV+=(PEER_BENCH_SESSIONS="$users")
		bench_stack_start "peers-sluice-$db" tuned "set nginx_workers 2
db chinook $chinook
db chat $chat
health =/health workers=auto threads=auto
rest /rest/v1/ workers=auto threads=auto db=chinook
chat_page =/ workers=auto threads=auto db=chat bench_sessions=$users session_key=$(od -An -tx1 -N32 /dev/urandom | tr -d ' \n')"
		for peer in $peers; do
			profiles=tuned
			[ "$peer" = php-fpm ] && profiles="default tuned"
			for profile in $profiles; do
				{
					echo "### $peer ($profile) vs sluice, $db"
					echo
				} | bench_report
				if [ -n "${PEER_NA[$peer]:-}" ]; then
					echo "n/a: ${PEER_NA[$peer]}" | bench_report
					echo | bench_report
					for s in $scenarios; do
						echo "peers,$s,$peer,$profile,$db,$conns,0,n/a,,,,,,,,,,," >> "$BENCH_OUT/results.csv"
						bench_point peers "$s ($peer, $profile, db $db, $conns connections)" "not measured"
					done
					continue
				fi
				echo "peers: $peer ($profile) on $db" >&2
				if ! peers_start "$peer" "$profile" "$db"; then
					echo "n/a: $peer did not start (its log: peer-$peer-$profile-$db/ in the scratch directory)" | bench_report
					echo | bench_report
					tail -5 "$BENCH_TMP/peer-$peer-$profile-$db/"*.log >&2 || true
					peers_stop
					continue
				fi
				same=$(peers_same_json "$peer")
				targets=()
				for s in $scenarios; do
					target=$(peers_target "$peer" "$s")
					[ -n "$target" ] || continue
					case $s in
					health) targets+=("$s@sluice=sluice|$BENCH_PORT|tuned-vs-$peer-$profile|/health") ;;
					chat) targets+=("$s@sluice=sluice|$BENCH_PORT|tuned-vs-$peer-$profile|/") ;;
					*) targets+=("$s@sluice=sluice|$BENCH_PORT|tuned-vs-$peer-$profile|lua:$TOP/bench/postgrest.lua:$s") ;;
					esac
					targets+=("$s@peer=$peer|$PEERS_PORT|$profile|$target")
					[ "$direct" = 1 ] && [ "$peer" != php-fpm ] &&
					    targets+=("$s@direct=$peer|$((BENCH_PORT + 3001))|$profile-direct|$target")
				done
				dcol=
				[ "$direct" = 1 ] && [ "$peer" != php-fpm ] && dcol="$peer direct req/s (no nginx)"
				[ ${#targets[@]} -gt 0 ] && peers_measure "$db" "$conns" "${targets[@]}"
				{
					echo "JSON: $same."
					echo
					echo "| scenario | sluice req/s | $peer req/s | sluice / $peer | sluice p99 ms | $peer p99 ms | errors sluice / $peer | bytes/response sluice / $peer |${dcol:+ $dcol |}"
					echo "|---|---|---|---|---|---|---|---|${dcol:+---|}"
				} | bench_report
				for s in $scenarios; do
					if [ -z "$(peers_target "$peer" "$s")" ]; then
						echo "| $s | n/a | n/a | n/a | | | | |" | bench_report
						echo "peers,$s,$peer,$profile,$db,$conns,0,n/a,,,,,,,,,,," >> "$BENCH_OUT/results.csv"
						bench_point peers "$s ($peer, $profile, db $db, $conns connections)" "not measured"
						continue
					fi
					ratio=$(awk -v a="${MEAS[$s@sluice.rps]}" -v b="${MEAS[$s@peer.rps]}" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "n/a" }')
					printf '| %s | %.0f | %.0f | %s | %s | %s | %s / %s | %s / %s |%s\n' "$s" \
					    "${MEAS[$s@sluice.rps]}" "${MEAS[$s@peer.rps]}" "$ratio" \
					    "${MEAS[$s@sluice.p99]}" "${MEAS[$s@peer.p99]}" \
					    "${MEAS[$s@sluice.err]}" "${MEAS[$s@peer.err]}" \
					    "${MEAS[$s@sluice.size]}" "${MEAS[$s@peer.size]}" \
					    "${dcol:+ $(printf '%.0f' "${MEAS[$s@direct.rps]:-0}") |}" | bench_report
					PEERS_SUMMARY+=("$peer|$profile|$db|$s|${MEAS[$s@sluice.rps]}|${MEAS[$s@peer.rps]}|$ratio")
				done
				echo | bench_report
				peers_stop
			done
		done
		bench_stack_stop
		[ "$db" = postgresql ] && bench_pg_stop
	done
	peers_summary "$peers" "$scenarios" "$dbs"
}

# The summary table: sluice / peer req/s ratios, one row per peer and profile.
PEERS_SUMMARY=()
peers_summary() {
	local peers=$1 scenarios=$2 dbs=$3 peer profile profiles db s row cells
	{
		echo "### Summary: sluice / peer req/s (same run; > 1 means sluice is faster)"
		echo
		printf '| peer | profile |'
		for db in $dbs; do for s in $scenarios; do printf ' %s %s |' "$s" "$db"; done; done
		echo
		printf '|---|---|'
		for db in $dbs; do for s in $scenarios; do printf -- '---|'; done; done
		echo
		for peer in $peers; do
			profiles=tuned
			[ "$peer" = php-fpm ] && profiles="default tuned"
			for profile in $profiles; do
				cells=""
				for db in $dbs; do
					for s in $scenarios; do
						row=n/a
						for r in "${PEERS_SUMMARY[@]}"; do
							IFS='|' read -r a b c d e f g <<<"$r"
							[ "$a|$b|$c|$d" = "$peer|$profile|$db|$s" ] && row=$g
						done
						cells+=" $row |"
					done
				done
				echo "| $peer | $profile |$cells"
			done
		done
		echo
	} | bench_report
}
