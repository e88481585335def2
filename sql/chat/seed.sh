#!/usr/bin/env bash
# seed.sh DATA_DIR: makes DATA_DIR/chat.db, the Starcord chat database, when it is missing
# (supervisor/run.sh runs every sql/*/seed.sh before starting the stack).  The preset is
# tiny unless SEED_PRESET says otherwise; SEED_CHANNEL_COUNT, SEED_USER_COUNT,
# SEED_MSG_COUNT and BENCH_SKEW override it (see sql/chat/seed.c).  The seeder writes a
# temporary file that is renamed only when complete, so an interrupted seed leaves no
# half-filled database behind.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
data=${1:?usage: seed.sh DATA_DIR}
seeder=${CHAT_SEED:-$top/build/rel/sql/chat-seed}
db=$data/chat.db

[ -e "$db" ] && exit 0
if [ ! -x "$seeder" ]; then
	echo "seed.sh: $seeder is missing; run make first" >&2
	exit 1
fi
mkdir -p "$data"
tmp=$db.seeding.$$
trap 'rm -f "$tmp" "$tmp-wal" "$tmp-shm" "$tmp-journal"' EXIT
"$seeder" -p "${SEED_PRESET:-tiny}" -S "$here" "sqlite:$tmp"
mv "$tmp" "$db"
