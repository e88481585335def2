#!/usr/bin/env bash
# seed.sh DATA_DIR: makes DATA_DIR/chat.db, the Starcord chat database, when it is missing
# (sql/seed-sqlite.sh).  The preset is tiny unless SEED_PRESET says otherwise;
# SEED_CHANNEL_COUNT, SEED_USER_COUNT, SEED_MSG_COUNT and BENCH_SKEW override it (see
# sql/chat/seed.c).
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
. "$here/../seed-sqlite.sh"
seed_sqlite "${1:?usage: seed.sh DATA_DIR}" chat.db \
    "${CHAT_SEED:-$here/../../build/rel/sql/chat-seed}" -p "${SEED_PRESET:-tiny}" -S "$here"
