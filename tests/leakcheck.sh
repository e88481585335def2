#!/usr/bin/env bash
# leakcheck.sh [valgrind|rss|all]: memory of the workers over many requests, through the
# real stack (nginx tuned, sluiced, the release binaries of bin/, SQLite databases made by
# the real seeders), one worker per endpoint: health, ready, rest (Chinook), the chat page
# and the three chat writes.  `make leakcheck` runs both parts.
#
#   valgrind  every worker runs under valgrind --leak-check=full (sluiced starts a small
#             wrapper that execs valgrind on the binary) and serves LEAK_VG_REQUESTS
#             (5,000) requests of the mix below; then the stack stops (workers exit the
#             normal way, at SIGTERM between requests) and every valgrind report must say
#             0 errors and 0 bytes definitely, indirectly or possibly lost.
#   rss       the plain release workers serve LEAK_RSS_REQUESTS (100,000) requests; the
#             resident set of each worker after the first 10,000 and at the end is
#             printed (VmRSS, and RssAnon: VmRSS without the file pages SQLite maps, which
#             grow with the database), and RssAnon must not have grown by more than
#             LEAK_RSS_SLACK_KB (4,096 kB): per-request memory comes from an arena that is
#             reset, not freed, so it is flat once the arena and the caches are warm.
#
# The mix, sent in a cycle by one curl over kept-alive connections (curl -K with `next`):
# good reads, writes undone again, every kind of 4xx of each endpoint (bad filters, unknown
# tables, deep and huge JSON, invalid UTF-8, wrong content type, no session, a body just
# under the cap, embeds and in-lists past the limits), HEAD and wrong methods.  Each
# request's status is checked against the one the mix expects: any other fails the run.
# Takes about 3.5 minutes for valgrind and 3 minutes for rss on 2 cores.
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
bin=$top/bin
mode=${1:-all}
vg_n=${LEAK_VG_REQUESTS:-5000}
rss_n=${LEAK_RSS_REQUESTS:-100000}
slack=${LEAK_RSS_SLACK_KB:-4096}
# On tmpfs when there is one: the chat's writes fsync, and on a disk the fsyncs would be
# most of the run's time.
tmp=$(mktemp -d "$( [ -d /dev/shm ] && echo /dev/shm || echo /tmp)/sluice-leak.XXXXXX")
chmod 755 "$tmp"
fail=0 sent=0
. "$top/tests/lib/stack.sh"
cleanup() {
	stack_stop
	rm -rf "$tmp"
}
trap cleanup EXIT

for b in health ready rest chat_page chat_message_send chat_channel_open chat_nickname_set sluiced; do
	[ -x "$bin/$b" ] || { echo "leakcheck: $bin/$b is missing (run make)" >&2; exit 1; }
done
mkdir -p "$tmp/data" "$tmp/bodies" "$tmp/vg"
# Started as root, sluiced runs its workers as an unprivileged user: they write the
# valgrind logs.
chmod 1777 "$tmp/vg"
bash "$top/sql/chinook/seed.sh" "$tmp/data" >/dev/null
bash "$top/sql/chat/seed.sh" "$tmp/data" >/dev/null
port=$(stack_free_port)
base=http://127.0.0.1:$port

# start WRAP: the stack, every worker under valgrind when WRAP is "valgrind".
start() {
	local wrap=$1 name route args eps
	eps="db chinook sqlite:$tmp/data/chinook.db
db chat sqlite:$tmp/data/chat.db
db main sqlite:$tmp/data/main.db"
	while read -r name route args; do
		if [ "$wrap" = valgrind ]; then
			cat > "$tmp/vg-$name" <<-EOF
			#!/bin/sh
			exec valgrind --leak-check=full --show-leak-kinds=definite,indirect,possible \\
			    --errors-for-leak-kinds=definite,indirect,possible --num-callers=30 \\
			    --log-file=$tmp/vg/$name.%p.log $bin/$name
			EOF
			chmod 755 "$tmp/vg-$name"
			# valgrind's own system calls are not in a worker's seccomp allow-list.
			args="$args binary=$tmp/vg-$name seccomp=0"
		fi
		eps="$eps
$name $route $args"
	done <<-EOF
	health =/health workers=1 threads=2
	ready =/ready workers=1 threads=1 db=main
	rest /rest/v1/ workers=1 threads=2 db=chinook
	chat_page =/ workers=1 threads=2 db=chat
	chat_message_send =/chat/message-send workers=1 threads=4 db=chat
	chat_channel_open =/chat/channel-open workers=1 threads=4 db=chat
	chat_nickname_set =/chat/nickname-set workers=1 threads=4 db=chat
	EOF
	stack_start "$tmp/stack" "$port" "$eps"
}

# The bodies of the mix.
b=$tmp/bodies
printf '{"name":"leakcheck"}' > "$b/artist.json"
printf '{"name":"AC/DC"}' > "$b/patch.json"
printf '{"a":1,"b":2,"c":3,"d":4,"e":5}' > "$b/rpc.json"
printf '{"a":1,"b":"x"}' > "$b/rpc_bad.json"
python3 - "$b" <<'EOF'
import sys
d = sys.argv[1]
def w(name, data):
    with open(d + "/" + name, "wb") as f:
        f.write(data)
w("deep.json", b"[" * 10000 + b"]" * 10000)
w("deep_obj.json", b'{"a":' * 10000 + b"1" + b"}" * 10000)
w("rows_nosuch.json", b"[" + b",".join([b'{"nosuch":1}'] * 10000) + b"]")
w("utf8.json", b'{"name":"caf\xc3\x28 \xff"}')
w("blanks.json", b"[" + b" " * 900000 + b"x]")
w("msg.json", b'{"messageSend":"leak check message"}')
w("msg_utf8.json", b'{"messageSend":"\xed\xa0\x80"}')
w("msg_long.json", b'{"messageSend":"' + b"a" * 600 + b'"}')
w("msg_big.json", b'{"messageSend":"' + b"a" * 900000 + b'"}')
w("msg_notjson.json", b'{"messageSend":')
w("msg_nokey.json", b'{"other":"x"}')
w("chan.json", b'{"channelOpen":"leakcheck"}')
w("chan_bad.json", b'{"channelOpen":"Bad Name!"}')
w("nick.json", b'{"nicknameSet":"leaky"}')
w("nick_bad.json", b'{"nicknameSet":""}')
EOF
in_list=$(python3 -c 'print(",".join(str(i) for i in range(1001)))')
embed9=$(python3 -c 'print("album(artist(" * 9 + "*" + "))" * 9)')

# The session cookie for the chat's writes.
cookie=

# One cycle of the mix: "STATUS|METHOD|PATH|CONTENT_TYPE|BODY_FILE|EXTRA_HEADER|COOKIE".
# COOKIE is "c" (the session) or empty.
mix() {
	cat <<-EOF
	200|GET|/health||||
	200|HEAD|/health||||
	405|POST|/health|application/json|$b/rpc.json||
	200|GET|/ready||||
	405|DELETE|/ready||||
	200|GET|/rest/v1/artist?select=artist_id,name&order=artist_id&limit=20||||
	200|GET|/rest/v1/album?select=title,artist(name),track(name,milliseconds)&album_id=lt.5||||
	200|GET|/rest/v1/track?select=name,genre(name)&or=(milliseconds.gt.300000,unit_price.gt.1)&order=name.desc&limit=50&offset=10||||
	200|GET|/rest/v1/employee?select=*|||Accept: text/csv|
	200|GET|/rest/v1/genre|||Range: 0-4|
	206|GET|/rest/v1/invoice?total=gt.10&limit=5|||Prefer: count=exact|
	200|GET|/rest/v1/rpc/add_them?a=1&b=2&c=3&d=4&e=5||||
	200|POST|/rest/v1/rpc/add_them|application/json|$b/rpc.json||
	400|POST|/rest/v1/rpc/add_them|application/json|$b/rpc_bad.json||
	201|POST|/rest/v1/artist|application/json|$b/artist.json||
	204|DELETE|/rest/v1/artist?name=eq.leakcheck||||
	204|PATCH|/rest/v1/artist?artist_id=eq.1|application/json|$b/patch.json||
	404|GET|/rest/v1/nosuch||||
	400|GET|/rest/v1/artist?artist_id=eq.x||||
	400|GET|/rest/v1/artist?select=%FF%FE||||
	400|GET|/rest/v1/artist?artist_id=in.($in_list)||||
	400|GET|/rest/v1/artist?select=$embed9||||
	400|GET|/rest/v1/artist?or=(name.eq.a,)||||
	416|GET|/rest/v1/artist|||Range: -5|
	400|POST|/rest/v1/artist|application/json|$b/deep.json||
	400|POST|/rest/v1/artist|application/json|$b/rows_nosuch.json||
	400|POST|/rest/v1/artist|application/json|$b/utf8.json||
	400|POST|/rest/v1/artist|application/json|$b/blanks.json||
	415|POST|/rest/v1/artist|text/plain|$b/artist.json||
	413|POST|/rest/v1/artist|application/json|$b/big.json||
	200|GET|/||||c
	200|GET|/|||Accept-Encoding: br|c
	200|HEAD|/||||c
	200|GET|/||||
	204|POST|/chat/message-send|application/json|$b/msg.json||c
	400|POST|/chat/message-send|application/json|$b/msg_utf8.json||c
	400|POST|/chat/message-send|application/json|$b/msg_long.json||c
	400|POST|/chat/message-send|application/json|$b/msg_big.json||c
	400|POST|/chat/message-send|application/json|$b/msg_notjson.json||c
	400|POST|/chat/message-send|application/json|$b/msg_nokey.json||c
	400|POST|/chat/message-send|application/json|$b/deep_obj.json||c
	415|POST|/chat/message-send|text/plain|$b/msg.json||c
	401|POST|/chat/message-send|application/json|$b/msg.json||
	405|GET|/chat/message-send||||c
	204|POST|/chat/channel-open|application/json|$b/chan.json||c
	400|POST|/chat/channel-open|application/json|$b/chan_bad.json||c
	400|POST|/chat/channel-open|application/json|$b/deep_obj.json||c
	200|POST|/chat/nickname-set|application/json|$b/nick.json||c
	422|POST|/chat/nickname-set|application/json|$b/nick_bad.json||c
	415|POST|/chat/nickname-set|text/plain|$b/nick.json||c
	EOF
}
head -c 2000000 /dev/zero | tr '\0' ' ' > "$b/big.json"

# curl_config FROM N OUT: N requests of the mix from request FROM on (the mix repeats), as
# a curl config file.
curl_config() {
	local from=$1 n=$2 out=$3
	mix | awk -F'|' -v from="$from" -v n="$n" -v base="$base" -v cookie="$cookie" '
	{ line[NR] = $0 }
	END {
		for (i = from; i < from + n; i++) {
			split(line[i % NR + 1], f, "|")
			if (i > from) print "next"
			printf "url = \"%s%s\"\n", base, f[3]
			if (f[2] == "HEAD") print "head"
			else if (f[2] != "GET") printf "request = \"%s\"\n", f[2]
			if (f[4] != "") printf "header = \"Content-Type: %s\"\n", f[4]
			if (f[5] != "") printf "data-binary = \"@%s\"\n", f[5]
			if (f[6] != "") printf "header = \"%s\"\n", f[6]
			if (f[7] == "c") printf "cookie = \"%s\"\n", cookie
			print "header = \"Datastar-Request: true\""
			print "output = \"/dev/null\""
			printf "write-out = \"%%{http_code} %s %%{time_total} %s %s\\n\"\n", f[1], f[2], f[3]
		}
	}' > "$out"
}

# load N LABEL: sends N requests of the mix; fails on any unexpected status.
load() {
	local n=$1 label=$2 t0 t1 bad i=0 k
	t0=$(date +%s.%N)
	: > "$tmp/statuses"
	# In runs of 1,000 per curl: curl's own cost per transfer grows with the number of
	# transfers in one config.
	while [ "$i" -lt "$n" ]; do
		k=$(( n - i < 1000 ? n - i : 1000 ))
		curl_config $((sent + i)) "$k" "$tmp/curl.cfg"
		curl -s -K "$tmp/curl.cfg" >> "$tmp/statuses" || true
		i=$((i + k))
	done
	sent=$((sent + n))
	t1=$(date +%s.%N)
	bad=$(awk '$1 != $2' "$tmp/statuses" | wc -l)
	printf '  %s: %d requests in %.1f s, %d with an unexpected status\n' "$label" \
	    "$(wc -l < "$tmp/statuses")" "$(awk -v a="$t0" -v b="$t1" 'BEGIN { print b - a }')" "$bad"
	# Where the time went: the five kinds of request with the largest total.
	awk '{ t[$4 " " substr($5, 1, 60)] += $3; c[$4 " " substr($5, 1, 60)]++ }
	    END { for (k in t) printf "    %8.2f s %6d x %s\n", t[k], c[k], k }' "$tmp/statuses" |
	    sort -rn | head -5
	if [ "$bad" -ne 0 ] || [ "$(wc -l < "$tmp/statuses")" -ne "$n" ]; then
		awk '$1 != $2 { print $1, $2, $4, $5 }' "$tmp/statuses" | sort | uniq -c |
		    sort -rn | head -20
		fail=1
	fi
}

get_cookie() {
	cookie=$(curl -s -o /dev/null -D - "$base/" | sed -n 's/^[Ss]et-[Cc]ookie: \(starcord_session=[^;]*\).*/\1/p' | tr -d '\r')
	[ -n "$cookie" ] || { echo "leakcheck: no session cookie" >&2; exit 1; }
}

# The workers: "PID NAME" for every child of sluiced.
workers() {
	local p
	for p in $(pgrep -P "$stack_sluiced"); do
		echo "$p $(tr '\0' '\n' < /proc/$p/environ | sed -n 's/^SLUICE_NAME=//p')"
	done
}
# Anonymous resident memory (heap, stacks) of a worker in kB: what a leak grows.  VmRSS
# also counts the SQLite file pages a worker has touched through mmap, which grow with
# the database (the mix inserts messages and users) and are not the worker's memory.
rss_of() { awk '/^RssAnon:/ { print $2 }' "/proc/$1/status"; }
vmrss_of() { awk '/^VmRSS:/ { print $2 }' "/proc/$1/status"; }

run_valgrind() {
	local t0=$SECONDS f
	echo "== valgrind: $vg_n requests, every worker under valgrind --leak-check=full"
	start valgrind
	get_cookie
	load "$vg_n" "valgrind"
	stack_stop
	for f in "$tmp"/vg/*.log; do
		[ -e "$f" ] || continue
		local name=${f##*/}
		# Leaks count as errors (--errors-for-leak-kinds), and a worker killed before its
		# exit (no report at all) has no ERROR SUMMARY line: both fail.
		if grep -q "ERROR SUMMARY: 0 errors" "$f"; then
			echo "  ${name%.log}: $(grep -o 'in use at exit: .*' "$f"), 0 errors," \
			    "$(grep -oE 'definitely lost: [0-9,]+ bytes|All heap blocks were freed' "$f" |
			    head -1)"
		else
			echo "FAIL ${name%%.*}: valgrind reported:"
			grep -v "^==[0-9]*== *$" "$f" | sed -n '/HEAP SUMMARY/,$p' | head -80
			fail=1
		fi
	done
	[ "$(ls "$tmp"/vg/*.log 2>/dev/null | wc -l)" -ge 7 ] ||
	    { echo "FAIL: fewer valgrind reports than workers"; fail=1; }
	echo "   (valgrind: $((SECONDS - t0)) s)"
}

run_rss() {
	local t0=$SECONDS p name a z zv
	echo "== rss: $rss_n requests to the release workers"
	start ""
	get_cookie
	load 10000 "first 10000"
	declare -A first firstvm
	while read -r p name; do
		first[$p]=$(rss_of "$p")
		firstvm[$p]=$(vmrss_of "$p")
	done < <(workers)
	load $((rss_n - 10000)) "next $((rss_n - 10000))"
	printf '  %-18s %7s | %-27s | %-27s\n' "" "" "RssAnon (heap, stacks) kB" "VmRSS kB"
	printf '  %-18s %7s | %8s %8s %9s | %8s %8s %9s\n' worker pid "at 10k" "at end" growth \
	    "at 10k" "at end" growth
	while read -r p name; do
		a=${first[$p]:-}
		z=$(rss_of "$p")
		if [ -z "$a" ]; then
			echo "FAIL $name: worker $p was not there after 10k requests (restarted?)"
			fail=1
			continue
		fi
		zv=$(vmrss_of "$p")
		printf '  %-18s %7d | %8d %8d %+9d | %8d %8d %+9d\n' "$name" "$p" "$a" "$z" \
		    $((z - a)) "${firstvm[$p]}" "$zv" $((zv - firstvm[$p]))
		if [ $((z - a)) -gt "$slack" ]; then
			echo "FAIL $name: RSS grew by $((z - a)) kB (over $slack kB)"
			fail=1
		fi
	done < <(workers)
	stack_stop
	echo "   (rss: $((SECONDS - t0)) s)"
}

case "$mode" in
valgrind) run_valgrind ;;
rss) run_rss ;;
all) run_valgrind; run_rss ;;
*) echo "usage: leakcheck.sh [valgrind|rss|all]" >&2; exit 2 ;;
esac
if [ "$fail" -ne 0 ]; then
	echo "leakcheck: FAILED"
	exit 1
fi
echo "leakcheck: ok"
