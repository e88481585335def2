#!/usr/bin/env bash
# make run: serves the demo in the foreground; Ctrl-C stops everything.  It either says
# "sluice is serving on http://ADDR/" with its own nginx (or Apache) and sluiced answering
# there and every pool up, or exits non-zero with the reason and the fix.
#
#   supervisor/run.sh [PROFILE]    PROFILE tuned (default) or default; for SERVER=apache
#                                  also cgi or fcgid (Apache starts the binaries itself)
#   SERVER=nginx|apache            the front server (nginx)
#   LISTEN=ADDR:PORT               where it listens: the endpoint list's "set listen"
#                                  (127.0.0.1:8080) for nginx, 127.0.0.1:8081 for Apache
#   DB=sqlite|postgresql           postgresql: a local cluster in data/pg (initdb on the
#                                  first run, as the postgres user when root), listening
#                                  only on a unix socket in run/pg (its log there too),
#                                  the demo databases (chat, chinook, records) seeded
#                                  into it, SLUICE_DB_CHAT, _CHINOOK and _RECORDS pointing
#                                  at it; stopped with the rest
#   SLUICE_CONF=FILE               another endpoint list (conf/endpoints.conf)
#
# Everything lives in the checkout: run/ holds the sockets, the control socket, sluiced's
# log (run/sluiced.log) and nginx's or Apache's prefix; data/ the databases.
#
# As root, nothing that parses a request runs as root: sluiced and its workers drop to
# the run user (`sluiced user`: `set user`, else the system user sluice that `make run`'s
# install step creates, conf/users.sh), nginx's workers run as www-data, and run/ gets
# www-data's group, through which nginx reaches the 0660 sockets (Apache runs as
# www-data, which then owns run/).  Those users must reach the checkout: one under a
# private directory (root's home is 0700 on Debian) is not reachable, and then the stack
# runs from /var/lib/sluice/NAME-HASH instead, where bin/, the templates and the endpoint
# list are copied and data/ and run/ live (said when it starts).
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${1:-tuned}
server=${SERVER:-nginx}
db=${DB:-sqlite}
tree=$(pwd)
conf=${SLUICE_CONF:-$tree/conf/endpoints.conf}

die() { echo "make run: $*" >&2; exit 1; }

case "$server/$profile" in
nginx/default|nginx/tuned) ;;
apache/default|apache/tuned|apache/cgi|apache/fcgid) ;;
nginx/*) echo "make run: PROFILE must be default or tuned, not '$profile'" >&2; exit 2 ;;
apache/*) echo "make run: PROFILE must be default, tuned, cgi or fcgid, not '$profile'" >&2; exit 2 ;;
*) echo "make run: SERVER must be nginx or apache, not '$server'" >&2; exit 2 ;;
esac
case "$db" in
sqlite|postgresql) ;;
*) echo "make run: DB must be sqlite or postgresql, not '$db'" >&2; exit 2 ;;
esac
supervised=1
case "$profile" in cgi|fcgid) supervised= ;; esac
[ -r "$conf" ] || die "$conf: no such endpoint list"
conf=$(cd "$(dirname "$conf")" && pwd)/$(basename "$conf")
for b in "$tree/bin/sluiced" /usr/sbin/$([ "$server" = apache ] && echo apache2 || echo nginx); do
	[ -x "$b" ] || die "$b is missing: run make run (it installs and builds what is missing)"
done

# Where to listen.
if [ -n "${LISTEN:-}" ]; then
	listen=$LISTEN
elif [ "$server" = apache ]; then
	listen=${APACHE_LISTEN:-127.0.0.1:8081}
else
	listen=$(sed -n 's/^[[:space:]]*set[[:space:]]\+listen[[:space:]]\+\([^[:space:]#]*\).*/\1/p' "$conf" | head -1)
	listen=${listen:-127.0.0.1:8080}
fi
host=${listen%:*} port=${listen##*:}
[[ "$listen" == *:* && "$port" =~ ^[0-9]+$ && "$port" -ge 1 && "$port" -le 65535 &&
    "$host" =~ ^[A-Za-z0-9.-]+$ ]] ||
	die "LISTEN=$listen: want ADDR:PORT, e.g. make run LISTEN=127.0.0.1:8081"
[ "$host" = 0.0.0.0 ] && probe=127.0.0.1 || probe=$host

port_busy() { (exec 3<>"/dev/tcp/$probe/$1") 2>/dev/null; }

# A free port near ours, for the fix we suggest.
suggest() {
	local p=$((port + 1))
	while [ "$p" -le 65535 ] && [ "$p" -le $((port + 100)) ]; do
		port_busy "$p" || { echo "$host:$p"; return; }
		p=$((p + 1))
	done
	echo "$host:$((port + 1))"
}

# As root: who runs what, and whether they reach the checkout.
root=
[ "$(id -u)" -eq 0 ] && root=1
top=$tree
if [ -n "$root" ]; then
	getent passwd www-data >/dev/null || die "the user www-data (nginx's and Apache's workers) does not exist: create it (adduser --system --group www-data)"
	if [ -n "$supervised" ]; then
		run_user=$("$tree/bin/sluiced" -c "$conf" user) || die "cannot tell sluiced's run user (see above)"
		run_user=${run_user%%:*}
	else
		run_user=www-data
	fi
	[ "$run_user" != root ] || die "sluiced would keep root (set user root in $conf): name an unprivileged user"
	reaches() {	# reaches USER: can USER use the checkout?
		runuser -u "$1" -- test -x "$tree/bin/health" -a -r "$tree/handlers/chat_page.html" \
		    -a -r "$conf" -a -x "$tree" 2>/dev/null
	}
	if ! reaches "$run_user" || ! reaches www-data; then
		# The first directory on the way that they cannot traverse.
		blocker=$tree d=
		IFS=/ read -ra parts <<< "${tree#/}"
		for part in "${parts[@]}"; do
			d=$d/$part
			if ! runuser -u "$run_user" -- test -x "$d" 2>/dev/null ||
			    ! runuser -u www-data -- test -x "$d" 2>/dev/null; then
				blocker=$d
				break
			fi
		done
		top=/var/lib/sluice/$(basename "$tree")-$(printf '%s' "$tree" | cksum | cut -d' ' -f1)
		mkdir -p -m 0755 /var/lib/sluice "$top"
		chmod 0755 /var/lib/sluice "$top"
		if ! runuser -u "$run_user" -- test -x "$top" 2>/dev/null; then
			die "$run_user cannot reach $tree ($blocker is private) nor $top: move the checkout under a directory others can traverse (chmod o+x $blocker)"
		fi
		echo "sluice: $run_user cannot reach $tree ($blocker is private): serving from $top (bin/, the templates and the endpoint list copied there; its data/ and run/ are the ones in use)"
		rm -rf "$top/bin.new"
		cp -a "$tree/bin" "$top/bin.new"
		rm -rf "$top/bin" && mv "$top/bin.new" "$top/bin"
		mkdir -p "$top/handlers" "$top/conf"
		cp "$tree"/handlers/*.html "$top/handlers/"
		cp "$conf" "$top/conf/endpoints.conf"
		conf=$top/conf/endpoints.conf
		chmod -R a+rX "$top/bin" "$top/handlers" "$top/conf"
	fi
fi
cd "$top"
run=$top/run
data=$top/data
bin=$top/bin
prefix=$run/$server
log=$run/sluiced.log

# Already serving from here, or the port taken by something else?
if "$bin/sluiced" -r "$run" ctl status >/dev/null 2>&1; then
	die "sluice is already running from this checkout (sluiced pid $(cat "$run/sluiced.pid" 2>/dev/null || echo '?'), run dir $run): stop it first (Ctrl-C where it runs, or $bin/sluiced -r $run ctl stop)"
fi
if port_busy "$port"; then
	die "$listen is in use: make run LISTEN=$(suggest)"
fi

mkdir -p "$run" "$prefix/logs" "$data"
# The web server's workers (another user when root) traverse run/ to the sockets.
chmod 755 "$run"
: > "$log"

pids=() names=() pg_data= pg_bin= pg_as=()
stop() {
	local i
	trap - INT TERM EXIT
	echo
	echo "sluice: stopping"
	for i in "${!pids[@]}"; do kill -TERM "${pids[$i]}" 2>/dev/null || true; done
	for i in "${!pids[@]}"; do wait "${pids[$i]}" 2>/dev/null || true; done
	if [ -n "$pg_data" ]; then
		"${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_data" -m fast -w stop >/dev/null 2>&1 || true
	fi
}
fail() {
	echo "make run: $*" >&2
	stop
	exit 1
}
trap 'stop; exit 0' INT TERM
trap 'stop' EXIT

# DB=postgresql: a cluster of our own, on a unix socket only.
if [ "$db" = postgresql ]; then
	pg_bin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)
	[ -n "$pg_bin" ] && [ -x "$pg_bin/initdb" ] ||
		fail "PostgreSQL is not installed: make run DB=postgresql installs it (apt-get install postgresql)"
	pg_data=$data/pg
	pg_sock=$run/pg
	mkdir -p "$pg_data" "$pg_sock"
	if [ -n "$root" ]; then
		pg_as=(runuser -u postgres --)
		chown postgres:postgres "$pg_data" "$pg_sock"
	fi
	chmod 700 "$pg_data"
	chmod 755 "$pg_sock"
	if [ ! -f "$pg_data/PG_VERSION" ]; then
		echo "sluice: initdb $pg_data"
		"${pg_as[@]}" "$pg_bin/initdb" -D "$pg_data" -U postgres --auth=trust -E UTF8 \
		    --no-sync >"$pg_sock/initdb.log" 2>&1 || { cat "$pg_sock/initdb.log" >&2; fail "initdb failed"; }
	fi
	# Every worker thread holds a backend: the demo's pools need about 180.
	"${pg_as[@]}" "$pg_bin/pg_ctl" -D "$pg_data" -l "$pg_sock/server.log" -w -t 60 \
	    -o "-c listen_addresses='' -c unix_socket_directories='$pg_sock' -c max_connections=250 -c fsync=off" \
	    start >/dev/null || { tail -20 "$pg_sock/server.log" >&2; pg_data=; fail "PostgreSQL did not start (log: $pg_sock/server.log)"; }
	pg_url() { echo "postgresql:///$1?host=$pg_sock&user=postgres"; }
	psql_() { "$pg_bin/psql" -X -q -v ON_ERROR_STOP=1 -h "$pg_sock" -U postgres "$@"; }
	for name in chat chinook records; do
		if [ "$(psql_ -d postgres -tAc "SELECT 1 FROM pg_database WHERE datname = '$name'")" != 1 ]; then
			echo "sluice: seeding the PostgreSQL database $name"
			psql_ -d postgres -c "CREATE DATABASE $name" || fail "cannot create the database $name"
			case $name in
			chat) "$tree/build/rel/sql/chat-seed" -q -p "${SEED_PRESET:-tiny}" -S "$tree/sql/chat" "$(pg_url chat)" ;;
			chinook) "$tree/build/rel/sql/chinook-seed" -s "$tree/sql/chinook" "$(pg_url chinook)" >/dev/null ;;
			records) "$tree/build/rel/sql/records-seed" -q -S "$tree/sql/records" "$(pg_url records)" ;;
			esac || { psql_ -d postgres -c "DROP DATABASE $name" || true; fail "seeding $name failed"; }
		fi
	done
	export SLUICE_DB_CHAT=$(pg_url chat) SLUICE_DB_CHINOOK=$(pg_url chinook) \
	    SLUICE_DB_RECORDS=$(pg_url records)
else
	# Seed what the endpoint list needs (each application adds its seeder to this script).
	for seeder in "$tree"/sql/*/seed.sh; do
		[ -x "$seeder" ] && "$seeder" "$data"
	done
fi

if [ -n "$root" ]; then
	# The run user writes the SQLite databases; data/pg stays the postgres user's.
	find "$data" -path "$data/pg" -prune -o -exec chown "$run_user" {} +
	if [ "$server" = apache ]; then
		chown www-data:www-data "$run"
	else
		# sluiced keeps run/'s group for the sockets (mode 0660): nginx's.
		chgrp www-data "$run"
	fi
fi

if [ "$server" = apache ]; then
	"$bin/sluiced" -c "$conf" -r "$run" -b "$bin" apache "$profile" -p "$prefix" \
		-l "$listen" -o "$prefix/apache2.conf" || fail "cannot write the Apache configuration"
else
	nginx_user=()
	if [ -n "$root" ]; then nginx_user=(-u www-data:www-data); fi
	"$bin/sluiced" -c "$conf" -r "$run" nginx "$profile" -p "$prefix" -l "$listen" \
		"${nginx_user[@]}" -o "$prefix/nginx.conf" || fail "cannot write the nginx configuration"
fi

if [ -n "$supervised" ]; then
	"$bin/sluiced" -c "$conf" -r "$run" -b "$bin" 2> >(tee -a "$log" >&2) &
	pids+=($!) names+=(sluiced)
	for _ in $(seq 100); do
		"$bin/sluiced" -r "$run" ctl status >/dev/null 2>&1 && break
		kill -0 "${pids[0]}" 2>/dev/null || fail "sluiced did not start (see above; log: $log)"
		sleep 0.05
	done
	if ! "$bin/sluiced" -r "$run" ctl wait 30 >/dev/null 2>"$run/wait.out"; then
		cat "$run/wait.out" >&2
		for p in $(sed -n 's/^sluiced: pool \([^ ]*\) .*/\1/p' "$run/wait.out"); do
			grep -F -- "$p" "$log" | tail -3 | sed 's/^/  /' >&2 || true
		done
		fail "not every pool started (log: $log); fix the cause above and run make run again"
	fi
fi
if [ "$server" = apache ]; then
	/usr/sbin/apache2 -f "$prefix/apache2.conf" -DFOREGROUND 2>"$prefix/logs/stderr.log" &
else
	/usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" \
	    2>"$prefix/logs/stderr.log" &
fi
front=$!
pids+=($front) names+=("$server")

# Is it our server that holds the port?  The listening socket's inode must be one of its
# descriptors: anything else answering there would make a "serving" line a lie.
ours() {
	local hex inodes fds i
	hex=$(printf '%04X' "$port")
	inodes=$(awk -v p=":$hex" '$4 == "0A" && substr($2, length($2) - 4) == p { print $10 }' \
	    /proc/net/tcp /proc/net/tcp6 2>/dev/null)
	[ -n "$inodes" ] || return 1
	fds=$(ls -l "/proc/$front/fd" 2>/dev/null) || return 1
	for i in $inodes; do
		[[ "$fds" == *"socket:[$i]"* ]] && return 0
	done
	return 1
}
for _ in $(seq 200); do
	ours && break
	if ! kill -0 "$front" 2>/dev/null; then
		wait "$front" 2>/dev/null || true
		cat "$prefix/logs/stderr.log" >&2
		if grep -q "in use" "$prefix/logs/stderr.log" "$prefix/logs/error.log" 2>/dev/null; then
			fail "$listen is in use: make run LISTEN=$(suggest)"
		fi
		fail "$server did not start (see above; log: $prefix/logs/)"
	fi
	sleep 0.05
done
ours || fail "$server does not hold $listen (log: $prefix/logs/)"
code=$(curl -s -o /dev/null -w '%{http_code}' --max-time 5 "http://$probe:$port/health" || true)
[ "$code" = 200 ] || fail "GET http://$listen/health answered $code, not 200 (logs: $log, $prefix/logs/)"

echo
echo "sluice is serving on http://$listen/ ($server profile: $profile, database: $db)"
echo "endpoints:"
grep -vE '^[[:space:]]*(#|$|set |db )' "$conf" | awk -v u="http://$listen" \
	'{ r = $2; sub(/^=/, "", r); printf "  %-18s %s%s\n", $1, u, r }'
if [ -n "$supervised" ]; then
	echo "status:   $bin/sluiced -r $run ctl status   (log: $log)"
fi
echo "Ctrl-C stops everything."
echo
# Return when either process ends: a Ctrl-C stops both (exit 0, the INT trap), and so does
# `sluiced ctl stop` (sluiced leaves with status 0); anything else is a failure.
rc=0
wait -n "${pids[@]}" || rc=$?
for i in "${!pids[@]}"; do
	kill -0 "${pids[$i]}" 2>/dev/null && continue
	if [ "${names[$i]}" = sluiced ] && [ "$rc" -eq 0 ]; then
		echo "sluice: sluiced was asked to stop (ctl stop)"
		stop
		exit 0
	fi
	fail "${names[$i]} exited (status $rc) (logs: $log, $prefix/logs/)"
done
fail "a process of the stack exited (status $rc)"
