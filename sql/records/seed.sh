#!/usr/bin/env bash
# seed.sh DATA_DIR: makes DATA_DIR/records.db, the records API's demo database (users,
# posts, comments; sql/records/seed.c), when it is missing (sql/seed-sqlite.sh).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../seed-sqlite.sh"
seed_sqlite "${1:?usage: seed.sh DATA_DIR}" records.db \
    "${RECORDS_SEED:-$here/../../build/rel/sql/records-seed}" -S "$here"
