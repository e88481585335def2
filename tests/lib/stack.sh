# stack.sh: the real stack for test scripts (tests/leakcheck.sh, tests/sqlmap.sh), the
# shell counterpart of tests/lib/stack.h.  Source it, then:
#
#   stack_start DIR PORT ENDPOINTS   writes DIR/endpoints.conf ("set listen" + ENDPOINTS),
#                                    starts bin/sluiced on it (RUNDIR DIR/run, a long grace
#                                    period so that workers under valgrind can exit and
#                                    report) and nginx (tuned profile, one worker, prefix
#                                    DIR/run/nginx); returns once every endpoint of
#                                    ENDPOINTS answers, 1 if they do not within 60 s.
#   stack_stop                       stops nginx, then sluiced (which stops its workers
#                                    between requests and waits for them).
#   stack_free_port                  prints a free loopback TCP port.
#
# STACK_BIN (default: bin/ of the tree) holds the binaries.  The caller removes DIR.
stack_top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
STACK_BIN=${STACK_BIN:-$stack_top/bin}
stack_sluiced= stack_nginx=

stack_free_port() {
	python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1",0)); print(s.getsockname()[1])'
}

stack_start() {
	local dir=$1 port=$2 endpoints=$3 run=$1/run prefix=$1/run/nginx route code
	rm -rf "$run"
	mkdir -p "$run" "$prefix/logs"
	chmod 755 "$dir" "$run"
	{ echo "set listen 127.0.0.1:$port"; echo "$endpoints"; } > "$dir/endpoints.conf"
	"$STACK_BIN/sluiced" -c "$dir/endpoints.conf" -r "$run" -b "$STACK_BIN" -g 120000 \
	    2> "$dir/sluiced.log" &
	stack_sluiced=$!
	"$STACK_BIN/sluiced" -c "$dir/endpoints.conf" nginx tuned -r "$run" -p "$prefix" -w 1 \
	    > "$prefix/nginx.conf"
	/usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" &
	stack_nginx=$!
	# Every endpoint up: anything but a 502 (no worker listening yet) or no answer.
	for _ in $(seq 600); do
		code=ok
		for route in $(echo "$endpoints" | awk '$1 != "db" && $1 != "set" && NF >= 2 {
		    r = $2; sub(/^=/, "", r); print r }'); do
			case $(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port$route") in
			000|502) code=down; break ;;
			esac
		done
		[ "$code" = ok ] && return 0
		sleep 0.1
	done
	echo "stack: the stack did not come up" >&2
	cat "$dir/sluiced.log" >&2
	return 1
}

stack_stop() {
	if [ -n "$stack_nginx" ]; then
		kill -TERM "$stack_nginx" 2>/dev/null || true
		wait "$stack_nginx" 2>/dev/null || true
	fi
	if [ -n "$stack_sluiced" ]; then
		kill -TERM "$stack_sluiced" 2>/dev/null || true
		wait "$stack_sluiced" 2>/dev/null || true
	fi
	stack_nginx= stack_sluiced=
}
