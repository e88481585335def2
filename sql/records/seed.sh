#!/usr/bin/env bash
# seed.sh DATA_DIR: makes DATA_DIR/records.db, the records API's demo database (users,
# posts, comments; sql/records/seed.c), when it is missing (supervisor/run.sh runs every
# sql/*/seed.sh before starting the stack).  The seeder writes a temporary file that is
# renamed only when complete, so an interrupted seed leaves no half-filled database.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
top=$(cd "$here/../.." && pwd)
data=${1:?usage: seed.sh DATA_DIR}
seeder=${RECORDS_SEED:-$top/build/rel/sql/records-seed}
db=$data/records.db

[ -e "$db" ] && exit 0
if [ ! -x "$seeder" ]; then
	echo "seed.sh: $seeder is missing; run make first" >&2
	exit 1
fi
mkdir -p "$data"
tmp=$db.seeding.$$
trap 'rm -f "$tmp" "$tmp-wal" "$tmp-shm" "$tmp-journal" "$tmp-wlock"' EXIT
"$seeder" -S "$here" "sqlite:$tmp"
mv "$tmp" "$db"
