#!/usr/bin/env bash
# The tree's layering, checked from the build's objects (who calls whom) and the sources
# (who includes whom).  Each part may use only the parts below it:
#
#   handlers/NAME, sql/, bench/  ->  apps/NAME  ->  common/
#   supervisor/                  ->  common/
#
# nothing in common/ uses an application or the supervisor, no application uses another
# or the supervisor, and every file of common/ is used by more than one application or by
# the supervisor and an endpoint (otherwise it belongs to its one user).  The exceptions
# are the facilities common/ offers every endpoint on purpose though one application uses
# them today: templates (tmpl.c), response encoding (encode.c) and SQLite's group commit
# (gcommit.c): GENERIC below.  Within a part the
# object files may call each other only downwards: a circle between two files is printed
# as a finding unless both files are of one concept (the same name up to an '_' suffix,
# such as db.c and db_sqlite.c).
#
#   tests/lint/layers.sh [--dot]   check (exit 1 on a finding); --dot prints the graph
#
# Run from the repository root after a build (objects in build/rel).
set -u
cd "$(dirname "$0")/../.."
O=${SLUICE_OBJ:-build/rel}
dot=; [ "${1:-}" = --dot ] && dot=1
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

part() {
	case $1 in
	common/*) echo common ;;
	supervisor/*) echo supervisor ;;
	apps/*) echo "apps/$(echo "$1" | cut -d/ -f2)" ;;
	handlers/*/*) echo "handlers/$(echo "$1" | cut -d/ -f2)" ;;
	handlers/*) echo "handlers/$(basename "$1" .c)" ;;
	*) echo other ;;
	esac
}
allowed() {	# allowed FROM-PART TO-PART
	[ "$1" = "$2" ] && return 0
	case $1:$2 in
	*:common) return 0 ;;
	handlers/*:apps/*) return 0 ;;
	esac
	return 1
}

# Symbol edges: object A calls or reads a global that object B defines.
objs=$(find "$O/common" "$O/supervisor" "$O/apps" "$O/handlers" -name '*.o' 2>/dev/null |
	grep -v '/tests/' | sort)
[ -n "$objs" ] || { echo "layers: no objects under $O (build first)"; exit 1; }
for o in $objs; do
	src=${o#"$O"/}; src=${src%.o}.c
	[ -f "$src" ] || continue	# a stale object whose source moved
	nm -g --defined-only "$o" 2>/dev/null | awk -v s="$src" 'NF == 3 { print $3, s }'
done | sort -u >"$tmp/defs"
for o in $objs; do
	src=${o#"$O"/}; src=${src%.o}.c
	[ -f "$src" ] || continue
	nm -u "$o" 2>/dev/null | awk -v s="$src" '{ print $NF, s }'
done | sort -u >"$tmp/uses"
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3 }' | sort -u >"$tmp/edges"

if [ -n "$dot" ]; then
	echo "digraph sluice {"
	echo "  rankdir=LR; node [shape=box, fontsize=10];"
	while read -r a b; do printf '  "%s" -> "%s";\n' "$a" "$b"; done <"$tmp/edges"
	echo "}"
	exit 0
fi

# 1. No part reaches sideways or up.
while read -r a b; do
	pa=$(part "$a"); pb=$(part "$b")
	if ! allowed "$pa" "$pb"; then
		echo "layers: $a ($pa) uses $b ($pb): not allowed"
		status=1
	fi
done <"$tmp/edges"
# The same for includes (a header can tie parts together without a call).
for f in $(find common apps supervisor handlers -name '*.[ch]' | sort); do
	pf=$(part "$f")
	grep -o '^#include "[^"]*"' "$f" | sed 's/#include "\(.*\)"/\1/' | while read -r inc; do
		for cand in "$(dirname "$f")/$inc" "common/$inc" "apps/$inc"; do
			if [ -f "$cand" ]; then
				pi=$(part "$(realpath --relative-to=. "$cand")")
				allowed "$pf" "$pi" || echo "layers: $f ($pf) includes $cand ($pi): not allowed"
				break
			fi
		done
	done
done >"$tmp/incs"
if [ -s "$tmp/incs" ]; then cat "$tmp/incs"; status=1; fi

GENERIC=" common/tmpl.c common/encode.c common/gcommit.c "

# 2. Every file of common/ has more than one user among the applications, handlers and the
# supervisor (common's own files do not count).
for c in $(awk '$2 ~ /^common\// { print $2 }' "$tmp/edges" | sort -u) \
    $(find common -name '*.c' | sort); do
	users=$(awk -v c="$c" '$2 == c { print $1 }' "$tmp/edges" | while read -r u; do
		p=$(part "$u"); [ "$p" = common ] || echo "$p"; done | sed 's#^handlers/chat_.*#apps/chat#' | sort -u)
	n=$(printf '%s\n' "$users" | grep -c .)
	case $GENERIC in *" $c "*) continue ;; esac
	if [ "$n" -eq 1 ] && [ -z "$(awk -v c="$c" '$2 == c && $1 ~ /^common\// { print }' "$tmp/edges")" ]; then
		echo "layers: $c is used only by $users: it belongs there"
		status=1
	fi
done | sort -u >"$tmp/lonely"
if [ -s "$tmp/lonely" ]; then cat "$tmp/lonely"; status=1; fi

# 3. No circle between two files of different concepts within a part.
concept() { basename "$1" .c | sed 's/_.*//'; }
while read -r a b; do
	if grep -qx "$b $a" "$tmp/edges" && [ "$(concept "$a")" != "$(concept "$b")" ] &&
	    [[ "$a" < "$b" ]]; then
		echo "layers: $a and $b call each other"
	fi
done <"$tmp/edges" >"$tmp/circles"
if [ -s "$tmp/circles" ]; then cat "$tmp/circles"; status=1; fi

echo "layers: $(wc -l <"$tmp/edges") calls between $(echo "$objs" | wc -w) files, $([ $status -eq 0 ] && echo clean || echo FINDINGS)"
exit $status
