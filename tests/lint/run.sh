#!/usr/bin/env bash
# Static analysis of common/, apps/, handlers/ and supervisor/: cppcheck, then clang-tidy
# with the checks chosen in .clang-tidy (see tests/lint/README), then the layering check
# (layers.sh), the functions' lengths (funclen.sh) and the libraries of bin/ (no libpq).
# Every finding is printed and makes the run fail (exit 1).  The preprocessor flags are
# the build's, from the Makefile (LINT_CPPFLAGS); both tools run on every core (LINT_JOBS,
# default nproc).
#
# Run from the repository root: `make lint`, or `bash tests/lint/run.sh`.
set -u
cd "$(dirname "$0")/../.."
cppflags=${LINT_CPPFLAGS:--D_DEFAULT_SOURCE -D_POSIX_C_SOURCE=200809L -Icommon -Iapps -Isupervisor -Itests/lib -I/usr/include/postgresql}
jobs=${LINT_JOBS:-$(nproc 2>/dev/null || echo 2)}
dirs="common apps handlers supervisor"
status=0
start=$SECONDS

for tool in cppcheck clang-tidy; do
	command -v "$tool" >/dev/null || { echo "lint: $tool is not installed (make deps)"; exit 1; }
done

# cppcheck sees only the project's own headers: system and library headers (libpq,
# cJSON, fcgi2) are modelled by --library=posix and would only slow it down.
cpp_inc=
for f in $cppflags; do
	case $f in
	-D*|-U*) cpp_inc="$cpp_inc $f" ;;
	-I/*) ;;
	-I*) cpp_inc="$cpp_inc $f" ;;
	esac
done
echo "== cppcheck"
# shellcheck disable=SC2086
if ! cppcheck --std=c11 --library=posix --enable=warning,style,performance,portability \
    --inline-suppr --suppressions-list=tests/lint/cppcheck.supp --error-exitcode=1 \
    --quiet -j "$jobs" --template='{file}:{line}: {severity} ({id}): {message}' \
    $cpp_inc $dirs; then
	status=1
fi

echo "== clang-tidy"
# A file that passed is not analysed again until it, any project header, .clang-tidy or
# the flags change: the result is remembered in build/lint/ (LINT_CACHE=0: analyse all).
# clang-tidy's analyzer is nearly all of the time this script takes.
cache=build/lint
mkdir -p "$cache"
common_sum=$( { printf '%s\n' "$cppflags"; clang-tidy --version; cat .clang-tidy;
	find $dirs tests/lib -name '*.h' | sort | xargs cat; } | sha1sum | cut -c1-40)
todo=$(mktemp)
log=$(mktemp)
trap 'rm -f "$log" "$todo"' EXIT
for f in $(find $dirs -name '*.c' | sort); do
	key=$( { echo "$common_sum"; cat "$f"; } | sha1sum | cut -c1-40)
	if [ "${LINT_CACHE:-1}" = 0 ] || [ ! -e "$cache/$key" ]; then
		echo "$f $key"
	fi
done >"$todo"
echo "   $(wc -l <"$todo") file(s) to analyse ($(find $dirs -name '*.c' | wc -l) in all)"
# One clang-tidy per file, $jobs at a time; a file with findings exits non-zero
# (WarningsAsErrors) and xargs then exits 123.  A clean file leaves its stamp.
# shellcheck disable=SC2086
if ! xargs -r -P "$jobs" -n 2 sh -c \
    'out=$(clang-tidy --quiet "$0" -- -std=c11 '"$cppflags"' 2>&1) && { : >"'"$cache"'/$1"; exit 0; }; printf "%s\n" "$out"; exit 1' \
    <"$todo" >"$log" 2>&1; then
	status=1
fi
grep -vE '^[0-9]+ warnings? (and [0-9]+ errors? )?generated\.$|^Suppressed [0-9]+ warnings|^Use -header-filter|^Use -system-headers' "$log"

# The layering: no part reaches sideways, no circle between files of different concepts
# (tests/lint/layers.sh, over the build's objects in SLUICE_OBJ).
echo "== layers"
bash tests/lint/layers.sh || status=1
# No production function over 100 lines, at most 10 over 80 (tests/lint/funclen.sh).
echo "== funclen"
{ bash tests/lint/funclen.sh --self-test && bash tests/lint/funclen.sh; } || status=1
# libpq is loaded when a database is PostgreSQL (common/pq.h): linked into a binary, it
# and its dependencies (libssl, Kerberos, LDAP, GnuTLS) cost every worker private pages.
echo "== libraries"
for b in "${SLUICE_BIN:-bin}"/*; do
	[ -x "$b" ] || continue
	if readelf -d "$b" 2>/dev/null | grep -q 'NEEDED.*\[libpq\.so'; then
		echo "$b: links libpq (the Makefile's BIN_LDLIBS leaves it out)"
		status=1
	fi
done
echo "lint: $((SECONDS - start)) s, $([ $status -eq 0 ] && echo clean || echo FINDINGS)"
exit $status
