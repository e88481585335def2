#!/usr/bin/env bash
# run.sh: the official client's own test suite against sluice's rest endpoint.
#
#   tests/compat/run.sh SUITE_DIR [pg]
#
# SUITE_DIR is a checkout of @supabase/postgrest-js (its last standalone commit, 63c5d9a,
# is the yardstick: docs/testing.md); nothing of it is part of sluice.  The runner
#   1. makes a throwaway PostgreSQL cluster (initdb in a temporary directory, as the
#      postgres user when root, on a unix socket only) and loads the suite's
#      test/db/*.sql into its database "postgres", as the suite's docker-compose does (a
#      statement that cannot run here, such as "create extension postgis", is reported and
#      skipped, as psql does);
#   2. starts sluiced and nginx (tests/lib/stack.sh) with one rest endpoint on /rest/v1/
#      exposing the schemas the suite's PostgREST exposes (public, personal);
#   3. copies the suite to a temporary directory and rewrites only its base URLs
#      (http://localhost:3000 and :3001, PostgREST 12 and 13) to the endpoint's;
#   4. installs its npm packages from its own package-lock.json (npm ci, once: kept in
#      build/compat/npm-HASH) and runs its jest tests (test/*.test.ts);
#   5. prints every failed test's name and the line "N passed, N failed".
#
# Only PostgreSQL is supported: the suite's schema (enums, ranges, tsvector, jsonb, a
# second schema) has no SQLite translation.  Exit status: 0 when every test passed, 1 when
# some failed, 2 when the run itself could not be made.  SLUICE_KEEP_TMP=1 keeps the
# temporary directory (logs, jest's JSON report); COMPAT_JEST_ARGS adds jest arguments
# (a test file's name, -t PATTERN).
set -u

top=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)
suite=${1:-}
backend=${2:-pg}
if [ -z "$suite" ] || [ ! -f "$suite/test/db/00-schema.sql" ] || [ ! -f "$suite/package-lock.json" ]; then
	echo "usage: $0 SUITE_DIR [pg]  (SUITE_DIR: a postgrest-js checkout)" >&2
	exit 2
fi
suite=$(cd "$suite" && pwd)
if [ "$backend" != pg ]; then
	echo "compat: only pg is supported (the suite's schema is PostgreSQL's)" >&2
	exit 2
fi
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

# 1. The database.
mkdir -p "$pgdir"
[ "$(id -u)" -eq 0 ] && chown postgres: "$pgdir"
pgport=$(stack_free_port)
as_pg "$pgbin/initdb" -D "$pgdir/data" -A trust -U postgres >/dev/null || exit 2
as_pg "$pgbin/pg_ctl" -D "$pgdir/data" -w -s -l "$pgdir/server.log" \
    -o "-k $pgdir -p $pgport -c listen_addresses=''" start || exit 2
for f in "$suite"/test/db/*.sql; do
	as_pg "$pgbin/psql" -q -h "$pgdir" -p "$pgport" -U postgres -d postgres \
	    -v ON_ERROR_STOP=0 -f "$f" > "$tmp/load.log" 2>&1
	grep -h 'ERROR' "$tmp/load.log" | sed "s|^|compat: $(basename "$f"): |" >&2
done

# 2. The stack.
port=$(stack_free_port)
url="postgresql:///postgres?host=$pgdir&port=$pgport&user=postgres"
stack_start "$tmp/stack" "$port" "db compat $url
rest /rest/v1/ workers=2 threads=2 db=compat rest_schemas=public,personal rest_unfiltered_writes=1" \
    || exit 2

# 3. The suite, its base URLs pointed at sluice.
base="http://127.0.0.1:$port/rest/v1"
mkdir -p "$tmp/suite"
(cd "$suite" && tar cf - --exclude=./node_modules --exclude=./.git --exclude=./docs .) |
    (cd "$tmp/suite" && tar xf -)
find "$tmp/suite/test" -name '*.ts' -exec sed -i \
    -e "s|http://localhost:3000|$base|g" -e "s|http://localhost:3001|$base|g" {} +

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
