#!/usr/bin/env bash
# make run: serves the demo on 127.0.0.1:8080 (the endpoint list's "set listen") with the
# given nginx profile (tuned by default), in the foreground.  Ctrl-C stops everything.
# SERVER=apache serves it behind Apache on 127.0.0.1:8081 (APACHE_LISTEN) instead, with
# the profile tuned, default, cgi or fcgid (the last two run no sluiced: Apache starts the
# binaries itself).
#
# Everything lives inside the working tree: run/ holds the sockets, the control socket
# and nginx's or Apache's prefix (config, logs, temp files); data/ holds the SQLite
# databases.  As root, Apache's children cannot run as root: run/ (and, for cgi and
# fcgid, whose processes open the databases themselves, data/) is given to www-data.
# sluiced started as root gives up root for its run user once its sockets exist
# (supervisor/priv.c); nginx's master, started here, keeps root for its own user switch.
set -euo pipefail
cd "$(dirname "$0")/.."

profile=${1:-tuned}
server=${SERVER:-nginx}
top=$(pwd)
run=$top/run
conf=${SLUICE_CONF:-$top/conf/endpoints.conf}
bin=$top/bin
prefix=$run/$server

case "$server/$profile" in
nginx/default|nginx/tuned) ;;
apache/default|apache/tuned|apache/cgi|apache/fcgid) ;;
nginx/*) echo "make run: PROFILE must be default or tuned, not '$profile'" >&2; exit 2 ;;
apache/*) echo "make run: PROFILE must be default, tuned, cgi or fcgid, not '$profile'" >&2; exit 2 ;;
*) echo "make run: SERVER must be nginx or apache, not '$server'" >&2; exit 2 ;;
esac

mkdir -p "$run" "$prefix/logs" "$top/data"
# nginx's workers may run as another user (as root, nginx's default user): let them
# reach the sockets' directory.
chmod 755 "$run"

# Seed what the endpoint list needs (each application adds its seeder to this script).
for seeder in "$top"/sql/*/seed.sh; do
	[ -x "$seeder" ] && "$seeder" "$top/data"
done

# As root, sluiced and its workers run as an unprivileged user (`sluiced user` names it:
# set user/group in the endpoint list): data/ is theirs, whoever had it before.
if [ "$(id -u)" -eq 0 ] && [ "$server/$profile" != apache/cgi ] &&
    [ "$server/$profile" != apache/fcgid ]; then
	chown -R "$("$bin/sluiced" -c "$conf" user)" "$top/data"
fi

if [ "$server" = apache ]; then
	if [ "$(id -u)" -eq 0 ]; then
		chown www-data:www-data "$run"
		case "$profile" in cgi|fcgid) chown -R www-data:www-data "$top/data" ;; esac
	fi
	"$bin/sluiced" -c "$conf" -r "$run" -b "$bin" apache "$profile" -p "$prefix" \
		-l "${APACHE_LISTEN:-127.0.0.1:8081}" -o "$prefix/apache2.conf"
	listen=$(sed -n 's/^Listen[[:space:]]\+\([^[:space:]]*\).*/\1/p' "$prefix/apache2.conf" | head -1)
else
	"$bin/sluiced" -c "$conf" nginx "$profile" -r "$run" -p "$prefix" > "$prefix/nginx.conf"
	listen=$(sed -n 's/^[[:space:]]*listen[[:space:]]\+\([^;[:space:]]*\).*/\1/p' "$prefix/nginx.conf" | head -1)
fi

pids=()
stop() {
	trap - INT TERM EXIT
	echo
	echo "sluice: stopping"
	for p in "${pids[@]}"; do kill -TERM "$p" 2>/dev/null || true; done
	for p in "${pids[@]}"; do wait "$p" 2>/dev/null || true; done
	exit 0
}
trap stop INT TERM EXIT

if [ "$server/$profile" != apache/cgi ] && [ "$server/$profile" != apache/fcgid ]; then
	"$bin/sluiced" -c "$conf" -r "$run" -b "$bin" &
	pids+=($!)
	for _ in $(seq 100); do
		"$bin/sluiced" -r "$run" ctl status >/dev/null 2>&1 && break
		sleep 0.05
	done
fi
if [ "$server" = apache ]; then
	/usr/sbin/apache2 -f "$prefix/apache2.conf" -DFOREGROUND &
else
	/usr/sbin/nginx -p "$prefix" -c "$prefix/nginx.conf" -e "$prefix/logs/error.log" &
fi
pids+=($!)

for _ in $(seq 100); do
	curl -s -o /dev/null "http://$listen/health" && break
	sleep 0.05
done
echo
echo "sluice is serving on http://$listen/ ($server profile: $profile)"
echo "endpoints:"
grep -vE '^[[:space:]]*(#|$|set |db )' "$conf" | awk -v u="http://$listen" \
	'{ r = $2; sub(/^=/, "", r); printf "  %-12s %s%s\n", $1, u, r }'
echo "status:   $bin/sluiced -r $run ctl status"
echo "Ctrl-C stops everything."
echo
# Return when either process ends; stop() then ends the other.
wait -n "${pids[@]}" || true
