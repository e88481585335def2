#!/usr/bin/env bash
# test_multihost: several sluice hosts behind one nginx, with a PostgreSQL primary and a
# synchronous streaming standby, on a private network of Linux network namespaces
# (tests/lib/netns.sh), under a steady mixed load through the load balancer.
#
# Hosts (10.231.N.0/24, N from the pid, inside the run's own namespaces only):
#   lb    .1   nginx from `sluiced nginx tuned -H app1,app2` (the load balancer), and the
#              load generator (bench/mhload.c)
#   app1  .11  sluiced with every pool on TCP at its own address (SLUICE_POOL_ADDRESS), and
#   app2  .12  its own nginx from `sluiced nginx tuned` (the single-host generator)
#   pg1   .21  PostgreSQL primary, synchronous_standby_names = pg2
#   pg2   .22  streaming standby made with pg_basebackup -R
# One endpoint list serves both app hosts; its rest, chat and records endpoints reach the
# databases through a libpq multi-host URL with target_session_attrs=read-write (the rest
# endpoint's GETs through db_read=, pg2 then pg1 with prefer-standby), and the
# chat's session key and the records API's token secret are files named in the list, the
# same on both hosts.  PostgreSQL runs as the postgres user (it refuses root), fsync off:
# what this test is about is replication, not the disk.
#
# Checked: the load balancer's file passes nginx -t; a chat session cookie made on app1 is
# accepted on app2 (and a forged one is not); a records token issued by app1 is accepted by
# app2 (and a forged one is not); a burst with more connections than the pools have threads
# is served with the load balancer's connections to the app hosts kept (fewer than 1 in 100
# requests leaves one in TIME_WAIT on lb).  Then, under load (GETs of one row, 30% POSTs of new
# rows with their own ids):
#   a. app1's sluiced and all its workers are killed (SIGKILL to the process group): no
#      GET fails; every POST that fails fails with a 5xx or a connection error;
#   b. pg1 is killed (every process of its host) and pg2 promoted: writes resume (the
#      seconds from the kill to the first acknowledged write sent after it are printed)
#      and no GET fails (they are served by the standby, then the promoted standby);
#   c. app1 is started again: it takes traffic again (its lines in the load balancer's
#      access log rise), and no GET fails meanwhile.
# Over the whole run: every acknowledged POST id is in the promoted standby's table
# (acknowledged and lost: 0), no POST was sent to two hosts (the access log's
# $upstream_addr of every POST names one host) and none was answered 409 (a replay of an
# id already written).
#
# Skips, with a counted "skip test_multihost: REASON" line, when not root, when ip netns
# cannot make namespaces, or without PostgreSQL or nginx.  Everything it made (namespaces
# and every process in them, the temporary directory) is removed on any exit.
# Run from the repository root, with SLUICE_BIN (bin) and SLUICE_TESTS (build/rel/tests).
set -u
BIN=${SLUICE_BIN:-bin}
TESTS=${SLUICE_TESTS:-build/rel/tests}
BUILD=$TESTS/..
passed=0 failed=0

ok() { echo "ok   $1"; passed=$((passed + 1)); }
bad() { echo "FAIL $1"; failed=$((failed + 1)); }
# check DESCRIPTION COMMAND...: one counted result.
check() { local d=$1; shift; if "$@"; then ok "$d"; else bad "$d"; fi; }
skip() {
	echo "skip test_multihost: $1"
	echo "0 passed, 0 failed, 1 skipped"
	exit 0
}
finish() {
	echo "$passed passed, $failed failed"
	exit $((failed > 0))
}
now_ms() { date +%s%3N; }

[ -f tests/lib/netns.sh ] || { echo "test_multihost: run from the repository root"; bad "setup"; finish; }
. tests/lib/netns.sh
netns_usable || skip "$NETNS_WHY"
PGBIN=$(netns_pg_bin) || skip "no PostgreSQL server (/usr/lib/postgresql/*/bin)"
command -v nginx >/dev/null || skip "no nginx"
id postgres >/dev/null 2>&1 || skip "no postgres user"
for b in "$BIN/sluiced" "$BIN/rest" "$BIN/health" "$BIN/chat_page" "$BIN/chat_nickname_set" \
    "$BIN/records" "$BUILD/bench/mhload" "$BUILD/sql/chat-seed" "$BUILD/sql/records-seed"; do
	[ -x "$b" ] || { bad "not built: $b"; finish; }
done

tmp=$(mktemp -d /tmp/sluice-mh.XXXXXX)
chmod 755 "$tmp"
# SLUICE_KEEP_TMP=1 keeps the temporary directory (logs, configs) for a post-mortem.
cleanup() {
	netns_down
	if [ -n "${SLUICE_KEEP_TMP:-}" ]; then echo "# kept $tmp"; else rm -rf "$tmp"; fi
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# Dumps the logs of a failed set-up and ends the run.
die() {
	bad "$1"
	for f in "$tmp"/pglog/*.log "$tmp"/app*/sluiced.log "$tmp"/*/nginx/logs/error.log; do
		[ -s "$f" ] && { echo "--- $f"; tail -15 "$f"; }
	done
	finish
}

netns_init || die "switch namespace"
for h in lb:1 app1:11 app2:12 pg1:21 pg2:22; do
	netns_host "${h%%:*}" "${h#*:}" || die "host ${h%%:*}"
done
LB=$(netns_addr lb) A1=$(netns_addr app1) A2=$(netns_addr app2)
P1=$(netns_addr pg1) P2=$(netns_addr pg2)
NET="10.231.$NETNS_NET.0/24"
echo "# network 10.231.$NETNS_NET.0/24 in namespaces ${NETNS_PREFIX}*"

# --- PostgreSQL: pg1 primary, pg2 its streaming standby ---
pg() { netns_run "$1" runuser -u postgres -- "$PGBIN/$2" "${@:3}"; }
sql() { # sql HOST DB SQL: one value (or nothing) on stdout
	netns_run app1 "$PGBIN/psql" -X -q -A -t -v ON_ERROR_STOP=1 \
	    "postgresql://postgres@$1:5432/$2?connect_timeout=3" -c "$3"
}
mkdir -p "$tmp/pglog" "$tmp/pg1" "$tmp/pg2"
chown postgres: "$tmp/pglog" "$tmp/pg1" "$tmp/pg2"
chmod 700 "$tmp/pg1" "$tmp/pg2"
pg pg1 initdb -D "$tmp/pg1" -U postgres -A trust --no-sync >"$tmp/pglog/initdb.log" 2>&1 ||
    die "initdb"
cat >>"$tmp/pg1/postgresql.conf" <<EOF
listen_addresses = '*'
port = 5432
unix_socket_directories = ''
wal_level = replica
max_wal_senders = 5
wal_keep_size = 64MB
hot_standby = on
fsync = off
shared_buffers = 16MB
max_connections = 60
EOF
cat >>"$tmp/pg1/pg_hba.conf" <<EOF
host all all $NET trust
host replication all $NET trust
EOF
pg pg1 pg_ctl -D "$tmp/pg1" -l "$tmp/pglog/pg1.log" -w -t 60 start >/dev/null || die "start pg1"
for d in mh chat records; do
	sql "$P1" postgres "CREATE DATABASE $d" || die "create database $d"
done
sql "$P1" mh "CREATE TABLE mh_items (id int PRIMARY KEY, name text NOT NULL);
    INSERT INTO mh_items SELECT i, 'item ' || i FROM generate_series(1, 10) i;
    CREATE TABLE mh_writes (id bigint PRIMARY KEY, note text NOT NULL,
        at timestamptz NOT NULL DEFAULT now());" || die "rest tables"
netns_run app1 "$BUILD/sql/chat-seed" -q -S sql/chat "postgresql://postgres@$P1:5432/chat" ||
    die "chat seed"
netns_run app1 "$BUILD/sql/records-seed" -q -u 5 -p 5 -c 5 -S sql/records \
    "postgresql://postgres@$P1:5432/records" || die "records seed"
pg pg2 pg_basebackup -h "$P1" -U postgres -D "$tmp/pg2" -R -X stream -c fast \
    >"$tmp/pglog/basebackup.log" 2>&1 || die "pg_basebackup"
# The standby names itself pg2 (cluster_name is its walreceiver's application_name).
pg pg2 pg_ctl -D "$tmp/pg2" -l "$tmp/pglog/pg2.log" -w -t 60 -o "-c cluster_name=pg2" \
    start >/dev/null || die "start pg2"
# Only now synchronous: acknowledged commits are on pg2 as well.  Set on pg1 alone, so the
# promoted pg2 waits for no standby.
sql "$P1" postgres "ALTER SYSTEM SET synchronous_standby_names = 'pg2'" &&
    sql "$P1" postgres "SELECT pg_reload_conf()" >/dev/null || die "synchronous_standby_names"
for _ in $(seq 50); do
	[ "$(sql "$P1" postgres "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'pg2'")" = sync ] && break
	sleep 0.2
done
check "pg2 streams from pg1 as its synchronous standby" \
    test "$(sql "$P1" postgres "SELECT sync_state FROM pg_stat_replication WHERE application_name = 'pg2'")" = sync

# --- the app hosts: one endpoint list, shared keys ---
RUNUSER=$("$BIN/sluiced" -c /dev/null user 2>/dev/null) || RUNUSER=nobody:nogroup
mkdir -p "$tmp/keys"
hex32() { head -c 32 /dev/urandom | od -An -tx1 | tr -d ' \n'; }
hex32 >"$tmp/keys/session.key"
hex32 >"$tmp/keys/records.key"
chown "$RUNUSER" "$tmp/keys"/*.key
chmod 600 "$tmp/keys"/*.key
# No gssencmode in the URLs: sluice turns GSSAPI off by default (common/db_pg_conn.c), else
# a worker reconnecting over TCP after the failover would be killed by its seccomp filter.
DBURL() { echo "postgresql://postgres@$P1:5432,$P2:5432/$1?target_session_attrs=read-write&connect_timeout=2"; }
# The rest endpoint's reads (db_read=): the standby first, the primary when it is gone.
READURL="postgresql://postgres@$P2:5432,$P1:5432/mh?target_session_attrs=prefer-standby&connect_timeout=2"
cat >"$tmp/endpoints.conf" <<EOF
# One list for every app host: each binds its pools on SLUICE_POOL_ADDRESS.
set pool_address 127.0.0.1
set nginx_workers 1
set access_log on
db mh $(DBURL mh)
db mh_read $READURL
db chat $(DBURL chat)
db records $(DBURL records)
health =/health workers=1 threads=2 tcp=127.0.0.1:9001
rest /rest/v1/ workers=2 threads=4 db=mh db_read=mh_read tcp=127.0.0.1:9002
chat_page =/ workers=1 threads=2 db=chat tcp=127.0.0.1:9003 session_key_file=$tmp/keys/session.key
chat_nickname_set =/chat/nickname-set workers=1 threads=2 db=chat tcp=127.0.0.1:9004 session_key_file=$tmp/keys/session.key
records /api/ workers=1 threads=2 db=records tcp=127.0.0.1:9005 records_secret_file=$tmp/keys/records.key bcrypt_cost=4
EOF

# start_app HOST: sluiced in its own process group (the kill of scenario a takes the group).
start_app() {
	local h=$1 addr
	addr=$(netns_addr "$h")
	mkdir -p "$tmp/$h"
	rm -f "$tmp/$h/run/sluiced.ctl"
	netns_run "$h" env SLUICE_POOL_ADDRESS="$addr" setsid "$BIN/sluiced" \
	    -c "$tmp/endpoints.conf" -r "$tmp/$h/run" -b "$BIN" >>"$tmp/$h/sluiced.log" 2>&1 &
	for _ in $(seq 100); do
		[ -S "$tmp/$h/run/sluiced.ctl" ] && break
		sleep 0.1
	done
	"$BIN/sluiced" -r "$tmp/$h/run" ctl wait 30 >/dev/null
}
# start_nginx HOST ADDR:PORT [-H HOSTS]: generates the host's nginx.conf and starts nginx.
start_nginx() {
	local h=$1 listen=$2
	shift 2
	netns_run "$h" env SLUICE_POOL_ADDRESS="$(netns_addr "$h")" "$BIN/sluiced" \
	    -c "$tmp/endpoints.conf" -r "$tmp/$h/run" nginx tuned -l "$listen" \
	    -p "$tmp/$h/nginx" -u nobody:nogroup -o "$tmp/$h/nginx/nginx.conf" "$@" || return 1
	netns_run "$h" nginx -t -q -p "$tmp/$h/nginx" -c "$tmp/$h/nginx/nginx.conf" || return 1
	netns_run "$h" nginx -p "$tmp/$h/nginx" -c "$tmp/$h/nginx/nginx.conf" \
	    >>"$tmp/$h/nginx.out" 2>&1 &
	for _ in $(seq 100); do
		[ "$(netns_run "$h" curl -s -o /dev/null -w '%{http_code}' "http://$listen/health")" = 200 ] && return 0
		sleep 0.1
	done
	return 1
}
start_app app1 || die "sluiced on app1"
start_app app2 || die "sluiced on app2"
check "app1's pools listen on its own address" \
    netns_run app1 sh -c "ss -ltn | grep -q '$A1:9002'"
start_nginx app1 "$A1:8080" || die "nginx on app1"
start_nginx app2 "$A2:8080" || die "nginx on app2"
mkdir -p "$tmp/lb"
start_nginx lb "$LB:8080" -H "$A1,$A2" || die "the load balancer's nginx"
ok "the load balancer's generated nginx.conf passes nginx -t and serves /health"
check "the load balancer's upstream lists both app hosts" \
    grep -q "server $A2:9002 max_fails=2 fail_timeout=5s;" "$tmp/lb/nginx/nginx.conf"
check "the load balancer never replays a POST (no non_idempotent)" \
    sh -c "! grep -q non_idempotent '$tmp/lb/nginx/nginx.conf'"

# --- shared keys: a session made on app1 works on app2, a token issued by app1 too ---
hcurl() { netns_run lb curl -s -m 10 "$@"; }
cookie=$(hcurl -D - -o /dev/null "http://$A1:8080/" | tr -d '\r' |
    sed -n 's/^[Ss]et-[Cc]ookie: \(starcord_session=[^;]*\).*/\1/p' | head -1)
sid=${cookie#starcord_session=}
sid=${sid%%.*}
check "app1's chat page hands out a session cookie" test -n "$sid"
body=$(hcurl -H "Cookie: $cookie" -H 'Content-Type: application/json' \
    -d '{"nicknameSet":"FromApp2"}' "http://$A2:8080/chat/nickname-set")
check "app2 accepts app1's session cookie (the write lands on that session)" \
    test "$body" = '{"_nicknameSetError":""}' -a \
    "$(sql "$P1" chat "SELECT count(*) FROM users WHERE session_id = '$sid' AND nickname = 'FromApp2'")" = 1
forged="${cookie%?}$(printf '%s' "${cookie: -1}" | tr '0-9a-f' '1-9a-f0')"
hcurl -o /dev/null -H "Cookie: $forged" -H 'Content-Type: application/json' \
    -d '{"nicknameSet":"Forged"}' "http://$A2:8080/chat/nickname-set"
check "app2 refuses a forged cookie for that session" \
    test "$(sql "$P1" chat "SELECT count(*) FROM users WHERE session_id = '$sid' AND nickname = 'Forged'")" = 0
token=$(hcurl -H 'Content-Type: application/json' \
    -d '{"identity":"user0001@example.com","password":"password123"}' \
    "http://$A1:8080/api/collections/users/auth-with-password" |
    sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
check "app1 issues a records token" test -n "$token"
check "app2 accepts app1's records token" test "$(hcurl -o /dev/null -w '%{http_code}' \
    -X POST -H "Authorization: $token" "http://$A2:8080/api/collections/users/auth-refresh")" = 200
check "app2 refuses a forged records token" test "$(hcurl -o /dev/null -w '%{http_code}' \
    -X POST -H "Authorization: ${token%?????}AAAAA" \
    "http://$A2:8080/api/collections/users/auth-refresh")" = 401
check "a GET through the load balancer" test "$(hcurl -o /dev/null -w '%{http_code}' \
    "http://$LB:8080/rest/v1/mh_items?id=eq.3")" = 200

# --- the load balancer keeps its connections to the app hosts ---
# 16 connections against /health's 2 x 2 threads: nginx needs more upstream connections
# than the pools have threads, and must keep them all (K = worker_connections / 2): a
# connection it closed would wait 60 s in TIME_WAIT on lb, and at a few thousand such
# requests a second lb runs out of ports to a host (a single-host K of 1 here did that:
# every request but one a new connection, 870-2,350 req/s and 15,000 ports in TIME_WAIT
# after 5 s with a 2 x 8 pool under 32 connections).  nginx still closes a kept
# connection after its 1,000th request (the upstream keepalive_requests default), which
# spreads them over the app workers again: fewer than 1 in 100 requests may leave one.
burst=$(netns_run lb "$BUILD/bench/mhload" -d 2 -c 16 -G /health "http://$LB:8080")
tw=$(netns_run lb ss -Htan state time-wait '( dport = :9001 )' | wc -l)
gets=$(echo "$burst" | sed -n 's/.* get=\([0-9]*\) .*/\1/p')
echo "# keepalive burst: $burst; lb's connections to :9001 in TIME_WAIT: $tw"
check "a burst past the pools' threads is served (${burst#mhload: })" \
    sh -c "echo '$burst' | grep -q ' get_failed=0 ' && [ '${gets:-0}' -gt 0 ]"
check "the load balancer kept its connections to the app hosts ($tw in TIME_WAIT after ${gets:-0} GETs)" \
    test "$((tw * 100))" -lt "${gets:-0}"

# --- under load: kill an app host, fail the database over, bring the host back ---
alog="$tmp/lb/nginx/logs/access.log"
# Started directly (not through a shell function) so that $! is mhload itself.
ip netns exec "${NETNS_PREFIX}lb" "$BUILD/bench/mhload" -d 0 -c 8 -w 30 -G '/rest/v1/mh_items?id=eq.3' \
    -P /rest/v1/mh_writes -l "$tmp/load.log" "http://$LB:8080" >"$tmp/load.out" 2>&1 &
load=$!
sleep 4
pgid=$(ps -o pgid= -p "$(cat "$tmp/app1/run/sluiced.pid")" | tr -d ' ')
t_a=$(now_ms)
kill -9 -- "-$pgid"
sleep 6
# The primary's host is lost: every process of pg1, at once.  t_b is taken once they are
# signalled, so that a write counted as after the kill was sent after it; t_k just before,
# so that a GET counted as answered before it was.
t_k=$(now_ms)
kill -9 $(ip netns pids "${NETNS_PREFIX}pg1") 2>/dev/null
t_b=$(now_ms)
sleep 1
pg pg2 pg_ctl -D "$tmp/pg2" -w -t 30 promote >/dev/null || bad "pg_ctl promote"
t_p=$(now_ms)
sleep 8
t_c=$(now_ms)
mark=$(wc -l <"$alog")
start_app app1 || bad "sluiced on app1, started again"
sleep 8
kill -TERM "$load"
wait "$load"
t_end=$(now_ms)
cat "$tmp/load.out"
echo "# answers by method and status: $(awk '{ n[$3 " " $4]++ } END { for (k in n) printf "%s x %d, ", k, n[k] }' "$tmp/load.log")"

# --- the figures ---
L="$tmp/load.log"
# comm wants its inputs in its own (byte) order, not numeric order.
awk '$4 == 201 { print $5 }' "$L" | LC_ALL=C sort >"$tmp/acked"
netns_run app1 "$PGBIN/psql" -X -q -A -t "postgresql://postgres@$P2:5432/mh" \
    -c "SELECT id FROM mh_writes ORDER BY id" | LC_ALL=C sort >"$tmp/stored"
requests=$(wc -l <"$L")
gets=$(awk '$3 == "G"' "$L" | wc -l)
get_fail=$(awk '$3 == "G" && $4 != 200' "$L" | wc -l)
get_fail_a=$(awk -v k="$t_k" '$3 == "G" && $4 != 200 && $2 < k' "$L" | wc -l)
get_fail_b=$(awk -v k="$t_k" -v c="$t_c" '$3 == "G" && $4 != 200 && $2 >= k && $1 < c' "$L" | wc -l)
get_fail_c=$(awk -v c="$t_c" '$3 == "G" && $4 != 200 && $1 >= c' "$L" | wc -l)
posts=$(awk '$3 == "P"' "$L" | wc -l)
acked=$(wc -l <"$tmp/acked")
post_fail=$(awk '$3 == "P" && $4 != 201' "$L" | wc -l)
post_unclean=$(awk '$3 == "P" && $4 != 201 && $4 != 0 && $4 < 500' "$L" | wc -l)
post_409=$(awk '$3 == "P" && $4 == 409' "$L" | wc -l)
lost=$(LC_ALL=C comm -23 "$tmp/acked" "$tmp/stored" | wc -l)
failed_but_stored=$(awk '$3 == "P" && $4 != 201 { print $5 }' "$L" | LC_ALL=C sort |
    LC_ALL=C comm -12 - "$tmp/stored" | wc -l)
acked_before_b=$(awk -v k="$t_k" '$4 == 201 && $2 < k' "$L" | wc -l)
first=$(awk -v b="$t_b" '$3 == "P" && $4 == 201 && $1 >= b { print $2 }' "$L" | sort -n | head -1)
resume=$(awk -v b="$t_b" -v f="${first:-0}" 'BEGIN { if (f > 0) printf "%.1f", (f - b) / 1000; else print "never" }')
promoted=$(awk -v b="$t_b" -v p="$t_p" 'BEGIN { printf "%.1f", (p - b) / 1000 }')
retried=$(awk '/upstream=[^ ]*, /' "$alog" | wc -l)
# A POST tried on two hosts must not have reached the first: its connect time there is
# "-" (refused), never a time (connected, request sent).
post_twice=$(awk '$4 == "\"POST" && / upstream=[0-9.:]+, [0-9]/ && !/ upstream_connect=-, /' "$alog" | wc -l)
post_moved=$(awk '$4 == "\"POST" && / upstream=[0-9.:]+, [0-9]/' "$alog" | wc -l)
app1_back=$(tail -n +"$((mark + 1))" "$alog" | grep -c "upstream=$A1:")
app2_back=$(tail -n +"$((mark + 1))" "$alog" | grep -c "upstream=$A2:")

echo "multihost: requests=$requests in $(( (t_end - t_a) / 1000 + 4 )) s, GETs=$gets failed=$get_fail" \
    "(app1 killed: $get_fail_a, primary lost until app1's restart: $get_fail_b," \
    "app1 back: $get_fail_c), POSTs=$posts acknowledged=$acked failed=$post_fail" \
    "(of which committed anyway: $failed_but_stored), acknowledged-lost=$lost," \
    "seconds-to-resume-writes=$resume (pg2 promoted ${promoted} s after the kill), GETs retried on the other host=$retried," \
    "after app1's restart: app1 $app1_back app2 $app2_back requests"
check "a. no GET failed while app1 was down (nginx sent them to app2)" test "$get_fail_a" -eq 0
check "b. no GET failed while the primary was lost and the standby promoted" \
    test "$get_fail_b" -eq 0
check "a. every POST that failed failed with a 5xx or a connection error" test "$post_unclean" -eq 0
check "a. nginx retried GETs on the other host" test "$retried" -gt 0
check "no POST was sent to two hosts ($post_moved moved on after a refused connect)" \
    test "$post_twice" -eq 0
check "no POST was answered 409 (an id written twice)" test "$post_409" -eq 0
check "POSTs were acknowledged before the primary was lost" test "$acked_before_b" -gt 0
check "b. writes resumed on the promoted standby within 10 s ($resume s)" \
    awk -v r="$resume" 'BEGIN { exit !(r != "never" && r + 0 <= 10) }'
check "b. every acknowledged POST ($acked) is in the promoted standby (lost: $lost)" \
    test "$lost" -eq 0 -a "$acked" -gt 0
check "c. app1 takes traffic again after its restart ($app1_back requests)" test "$app1_back" -gt 0
check "c. no GET failed after app1's restart" test "$get_fail_c" -eq 0
finish
