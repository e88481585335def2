#!/usr/bin/env bash
# run.sh: the official client's own test suite against sluice's rest endpoint.
#
#   tests/compat/run.sh [--sqlite] SUITE_DIR
#
# SUITE_DIR is a checkout of @supabase/postgrest-js (its last standalone commit, 63c5d9a,
# is the yardstick: docs/testing.md); nothing of it is part of sluice.  The runner
#   1. makes the database from the suite's test/db/*.sql:
#      on PostgreSQL (the default) a throwaway cluster (initdb in a temporary directory,
#      as the postgres user when root, on a unix socket only) whose database "postgres"
#      gets the files as the suite's docker-compose loads them (a statement that cannot
#      run here, such as "create extension postgis", is reported and skipped, as psql
#      does); with --sqlite a SQLite file made from their translation by
#      tests/compat/sqlite-schema.js (which reports what it leaves out, and why);
#   2. starts sluiced and nginx (tests/lib/stack.sh) with two rest endpoints on that
#      database, /rest/v1/ answering as PostgREST 13 and /rest12/v1/ as PostgREST 12
#      (rest_dialect_version), exposing the schemas the suite's PostgREST exposes (public,
#      personal; SQLite serves one);
#   3. copies the suite to a temporary directory and rewrites only its base URLs:
#      http://localhost:3000 (its PostgREST 12) to /rest12/v1, :3001 (13) to /rest/v1;
#   4. installs its npm packages from its own package-lock.json (npm ci, once: kept in
#      build/compat/npm-HASH) and runs its jest tests (test/*.test.ts);
#   5. prints every failed test's name and the line "N passed, N failed".
#
# docs/postgrest.md lists the counts on both back ends and why each test that fails on
# SQLite cannot apply there.  Exit status: 0 when every test passed, 1 when some failed,
# 2 when the run itself could not be made.  SLUICE_KEEP_TMP=1 keeps the temporary
# directory (logs, jest's JSON report, the SQLite file); COMPAT_JEST_ARGS adds jest
# arguments (a test file's name, -t PATTERN).
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
backend=pg
if [ "${1:-}" = --sqlite ]; then
	backend=sqlite
	shift
fi
suite=${1:-}
if [ -z "$suite" ] || [ ! -f "$suite/test/db/00-schema.sql" ] || [ ! -f "$suite/package-lock.json" ]; then
	echo "usage: $0 [--sqlite] SUITE_DIR  (SUITE_DIR: a postgrest-js checkout)" >&2
	exit 2
fi
suite=$(cd "$suite" && pwd)
for b in rest sluiced; do
	[ -x "$top/bin/$b" ] || { echo "compat: bin/$b missing: make all first" >&2; exit 2; }
done

# shellcheck source=../lib/stack.sh
. "$top/tests/lib/stack.sh"

tmp=$(mktemp -d /tmp/sluice-compat.XXXXXX)
chmod 755 "$tmp"
pgdir=$tmp/pg pgbin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
as_pg() { if [ "$(id -u)" -eq 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

cleanup() {
	stack_stop
	if [ -f "$pgdir/data/postmaster.pid" ]; then
		as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -s -m immediate stop >/dev/null 2>&1 || true
	fi
	if [ "${SLUICE_KEEP_TMP:-0}" = 1 ]; then
		echo "compat: kept $tmp" >&2
	else
		rm -rf "$tmp"
	fi
}
trap cleanup EXIT
trap 'exit 2' INT TERM

# 1. The database: url and the schemas to serve.
load_sqlite() {
	node "$top/tests/compat/sqlite-schema.js" "$suite"/test/db/*.sql \
	    > "$tmp/schema.sqlite.sql" 2> "$tmp/translate.log" || {
		cat "$tmp/translate.log" >&2; return 1; }
	sed 's/^sqlite-schema/compat/' "$tmp/translate.log" >&2
	mkdir -p "$tmp/lite"
	sqlite3 -bail "$tmp/lite/compat.db" < "$tmp/schema.sqlite.sql" || return 1
	# Started as root, sluiced's workers run as another user: they write the file, its
	# journal and its WAL in that directory.
	chmod 777 "$tmp/lite"
	chmod 666 "$tmp/lite/compat.db"
	url=sqlite:$tmp/lite/compat.db
	schemas=public
}

load_pg() {
	local f
	mkdir -p "$pgdir"
	[ "$(id -u)" -eq 0 ] && chown postgres: "$pgdir"
	pgport=$(stack_free_port)
	as_pg "$pgbin/initdb" -D "$pgdir/data" -A trust -U postgres >/dev/null || return 1
	as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -w -s -l "$pgdir/server.log" \
	    -o "-k $pgdir -p $pgport -c listen_addresses=''" start || return 1
	for f in "$suite"/test/db/*.sql; do
		as_pg "$pgbin/psql" -q -h "$pgdir" -p "$pgport" -U postgres -d postgres \
		    -v ON_ERROR_STOP=0 -f "$f" > "$tmp/load.log" 2>&1
		grep -h 'ERROR' "$tmp/load.log" | sed "s|^|compat: $(basename "$f"): |" >&2
	done
	url="postgresql:///postgres?host=$pgdir&port=$pgport&user=postgres"
	schemas=public,personal
}

"load_$backend" || exit 2

# 2. The stack.
port=$(stack_free_port)
stack_start "$tmp/stack" "$port" "db compat $url
rest /rest/v1/ workers=1 threads=2 db=compat rest_schemas=$schemas rest_unfiltered_writes=1
rest12 /rest12/v1/ workers=1 threads=2 db=compat binary=$top/bin/rest rest_schemas=$schemas rest_unfiltered_writes=1 rest_dialect_version=12" \
    || exit 2

# 3. The suite, its base URLs pointed at sluice.
base="http://127.0.0.1:$port/rest/v1" base12="http://127.0.0.1:$port/rest12/v1"
mkdir -p "$tmp/suite"
(cd "$suite" && tar cf - --exclude=./node_modules --exclude=./.git --exclude=./docs .) |
    (cd "$tmp/suite" && tar xf -)
find "$tmp/suite/test" -name '*.ts' -exec sed -i \
    -e "s|http://localhost:3000|$base12|g" -e "s|http://localhost:3001|$base|g" {} +

# 4. Its packages, installed once per lockfile (a directory named node_modules, so that
# node finds each package's own dependencies from its real path).
hash=$(sha256sum "$suite/package-lock.json" | cut -c1-16)
npmdir=$top/build/compat/npm-$hash
if [ ! -f "$npmdir/done" ]; then
	rm -rf "$npmdir"
	mkdir -p "$npmdir"
	cp "$suite/package.json" "$suite/package-lock.json" "$npmdir/"
	(cd "$npmdir" && npm ci --ignore-scripts --no-audit --no-fund >"$tmp/npm.log" 2>&1) || {
		echo "compat: npm ci failed:" >&2; tail -20 "$tmp/npm.log" >&2; exit 2; }
	touch "$npmdir/done"
fi
ln -s "$npmdir/node_modules" "$tmp/suite/node_modules"

# 5. The run.
# shellcheck disable=SC2086
(cd "$tmp/suite" && node node_modules/jest/bin/jest.js --runInBand --ci \
    --json --outputFile="$tmp/jest.json" ${COMPAT_JEST_ARGS:-} test/ >"$tmp/jest.log" 2>&1)
if [ ! -s "$tmp/jest.json" ]; then
	echo "compat: jest wrote no report:" >&2
	tail -40 "$tmp/jest.log" >&2
	exit 2
fi
node -e '
const r = JSON.parse(require("fs").readFileSync(process.argv[1], "utf8"));
for (const f of r.testResults) {
	const file = f.name.replace(/.*\/test\//, "test/");
	if (f.assertionResults.length === 0 && f.status === "failed")
		console.log("FAIL " + file + " (the file did not run: " +
		    (f.message || "").split("\n").slice(0, 3).join(" ") + ")");
	for (const a of f.assertionResults)
		if (a.status === "failed")
			console.log("FAIL " + file + ": " + a.fullName);
}
console.log(r.numPassedTests + " passed, " + r.numFailedTests + " failed" +
    (r.numPendingTests ? ", " + r.numPendingTests + " skipped" : ""));
process.exit(r.numFailedTests || r.numRuntimeErrorTestSuites ? 1 : 0);
' "$tmp/jest.json"
