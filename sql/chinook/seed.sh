#!/usr/bin/env bash
# seed.sh DATA_DIR: creates DATA_DIR/chinook.db, the Chinook database on SQLite, with
# build/rel/sql/chinook-seed, unless it exists already (supervisor/run.sh calls every
# executable sql/*/seed.sh with the data directory before starting the stack).
#
# The seeder writes a temporary file that is renamed into place only once it is complete,
# so an interrupted or failed run never leaves a half-seeded database that the next run
# would take for a finished one.  To seed again, delete the file; to seed PostgreSQL, run
# the seeder on a URL: build/rel/sql/chinook-seed [-f] postgresql:///DBNAME
set -euo pipefail
top=$(cd "$(dirname "$0")/../.." && pwd)
data=${1:?usage: seed.sh DATA_DIR}
db=$data/chinook.db
seeder=$top/build/rel/sql/chinook-seed

[ -e "$db" ] && exit 0
if [ ! -x "$seeder" ]; then
	echo "seed.sh: $seeder is missing (run make)" >&2
	exit 1
fi
mkdir -p "$data"
tmp=$db.seeding.$$
trap 'rm -f "$tmp" "$tmp-wal" "$tmp-shm" "$tmp-journal"' EXIT
"$seeder" -s "$top/sql/chinook" "sqlite:$tmp"
# A closed WAL database is one file: the last connection checkpoints and removes the WAL.
if [ -e "$tmp-wal" ]; then
	echo "seed.sh: $tmp-wal left behind after seeding" >&2
	exit 1
fi
mv "$tmp" "$db"
