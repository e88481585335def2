# seed-sqlite.sh: sourced by the sql/*/seed.sh scripts (supervisor/run.sh runs each with the
# data directory before starting the stack).
#
# seed_sqlite DATA_DIR FILE SEEDER [ARG...] makes DATA_DIR/FILE with `SEEDER ARG...
# sqlite:TMP` unless it exists already.  The seeder writes a temporary file that is renamed
# into place only once it is complete, so an interrupted or failed run never leaves a
# half-seeded database that the next run would take for a finished one.  To seed again,
# delete the file.
seed_sqlite() {
	local data=$1 db=$1/$2 seeder=$3 tmp
	shift 3
	[ -e "$db" ] && return 0
	if [ ! -x "$seeder" ]; then
		echo "seed.sh: $seeder is missing; run make first" >&2
		return 1
	fi
	mkdir -p "$data"
	tmp=$db.seeding.$$
	# shellcheck disable=SC2064
	trap "rm -f '$tmp' '$tmp-wal' '$tmp-shm' '$tmp-journal' '$tmp-wlock'" EXIT
	"$seeder" "$@" "sqlite:$tmp"
	# A closed WAL database is one file: the last connection checkpoints and removes the WAL.
	if [ -e "$tmp-wal" ]; then
		echo "seed.sh: $tmp-wal left behind after seeding" >&2
		return 1
	fi
	mv "$tmp" "$db"
}
