# seed-sqlite.sh: sourced by the sql/*/seed.sh scripts (supervisor/run.sh runs each with the
# data directory before starting the stack).
#
# seed_sqlite DATA_DIR FILE SEEDER [ARG...] makes DATA_DIR/FILE with `SEEDER ARG...
# sqlite:DATA_DIR/FILE` unless it exists already.  The seeder itself writes a temporary file
# that is renamed into place only once it is complete (sql/seedfile.h), so an interrupted
# or failed run never leaves a half-seeded database that the next run would take for a
# finished one.  To seed again, delete the file.
seed_sqlite() {
	local data=$1 db=$1/$2 seeder=$3
	shift 3
	[ -e "$db" ] && return 0
	if [ ! -x "$seeder" ]; then
		echo "seed.sh: $seeder is missing; run make first" >&2
		return 1
	fi
	mkdir -p "$data"
	"$seeder" "$@" "sqlite:$db"
}
