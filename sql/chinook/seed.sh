#!/usr/bin/env bash
# seed.sh DATA_DIR: makes DATA_DIR/chinook.db, the Chinook database on SQLite, when it is
# missing (sql/seed-sqlite.sh).  To seed PostgreSQL, run the seeder on a URL:
# build/rel/sql/chinook-seed [-f] postgresql:///DBNAME
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../seed-sqlite.sh"
seed_sqlite "${1:?usage: seed.sh DATA_DIR}" chinook.db \
    "$here/../../build/rel/sql/chinook-seed" -s "$here"
