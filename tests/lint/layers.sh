#!/usr/bin/env bash
# The tree's layering, checked from the build's objects (who calls whom) and the sources
# (who includes whom, and which files each folder's header says it holds).  Each part may
# use only the parts below it:
#
#   handlers/NAME, sql/, bench/  ->  apps/NAME  ->  common/
#   supervisor/                  ->  common/
#
# 1. Nothing in common/ uses an application or the supervisor, and no application uses
#    another or the supervisor: no call and no #include reaches sideways or up.
# 2. Every file of common/ is used by more than one application or by the supervisor and
#    an endpoint (otherwise it belongs to its one user).  The exceptions are the facilities
#    common/ offers every endpoint on purpose though one application uses them today:
#    templates (tmpl.c), response encoding (encode.c), the streaming loop (evfcgi.c,
#    evfcgi_loop.c: the realtime endpoint's today, the chat's live updates next) and
#    PostgreSQL's LISTEN (db_pg_listen.c: the table API's schema reloads today, the
#    realtime engine's hosts next): GENERIC below (the README's "Where things live" says
#    why).
# 3. No circle between concepts: the files of one concept (one folder, the same name up to
#    an '_' suffix, such as db.c and db_sqlite.c) are one node, and the graph of calls
#    between nodes has no strongly connected component, of any length.  A circle is
#    printed with the calls that close it.
# 4. Every folder's map is true.  A map is the list of files at the top of a header, one
#    a line: " *   NAME.c   what it holds".  A folder with a main header (named after the
#    folder, as apps/rest/rest.h, or after the file that holds main(), as
#    supervisor/sluiced.h) has every .c file in that header's map; a folder without one
#    (common/, apps/records/) has a header per file (db.h for db.c), and each file without
#    a header of its own is in the map of its concept's header (db_sqlite.c in db.h's).
#    Every name in a map is a file of its folder.  A folder of one .c file needs no map.
#
#   tests/lint/layers.sh [--dot]   check (exit 1 on a finding); --dot prints the graph
#
# Run from the repository root after a build (objects in build/rel, or SLUICE_OBJ).
set -u
cd "$(dirname "$0")/../.."
export LC_ALL=C
O=${SLUICE_OBJ:-build/rel}
dot=; [ "${1:-}" = --dot ] && dot=1
status=0
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
dirs="common apps handlers supervisor"

# shellcheck disable=SC2086
find $dirs -name '*.[ch]' | sort >"$tmp/files"

# What each object defines and uses ("symbol file.c"), from one nm over all of them; an
# object whose source is gone (it moved) is left out.
objs=$(find "$O/common" "$O/supervisor" "$O/apps" "$O/handlers" -name '*.o' 2>/dev/null |
	grep -v '/tests/' | sort)
[ -n "$objs" ] || { echo "layers: no objects under $O (build first)"; exit 1; }
symbols() {	# symbols NM-OPTION...
	# shellcheck disable=SC2086
	nm -A "$@" $objs 2>/dev/null | awk -v O="$O/" -v files="$tmp/files" '
	BEGIN { while ((getline f <files) > 0) have[f] = 1 }
	{
		src = $1; sub(/\.o:.*/, ".c", src)
		if (index(src, O) == 1) src = substr(src, length(O) + 1)
		if (src in have) print $NF, src
	}' | sort -u
}
symbols -g --defined-only >"$tmp/defs"
symbols -u >"$tmp/uses"
# Calls: "caller callee symbol", and the edges without the symbols.
join "$tmp/uses" "$tmp/defs" | awk '$2 != $3 { print $2, $3, $1 }' | sort -u >"$tmp/calls"
awk '{ print $1, $2 }' "$tmp/calls" | sort -u >"$tmp/edges"

if [ -n "$dot" ]; then
	echo "digraph sluice {"
	echo "  rankdir=LR; node [shape=box, fontsize=10];"
	while read -r a b; do printf '  "%s" -> "%s";\n' "$a" "$b"; done <"$tmp/edges"
	echo "}"
	exit 0
fi

# The parts, shared by the checks below.
PARTS='
function part(f,   n, p, b) {
	n = split(f, p, "/")
	if (p[1] == "common" || p[1] == "supervisor") return p[1]
	if (p[1] == "apps") return "apps/" p[2]
	if (p[1] == "handlers" && n > 2) return "handlers/" p[2]
	if (p[1] == "handlers") { b = p[2]; sub(/\.[ch]$/, "", b); return "handlers/" b }
	return "other"
}
function allowed(from, to) {
	return from == to || to == "common" || (from ~ /^handlers\// && to ~ /^apps\//)
}'

# 1. No part reaches sideways or up: by a call,
awk "$PARTS"'
{
	pa = part($1); pb = part($2)
	if (!allowed(pa, pb)) print "layers: " $1 " (" pa ") uses " $2 " (" pb "): not allowed"
}' "$tmp/edges" >"$tmp/parts"
# or by an include (a header can tie parts together without a call).  A quoted include is
# looked for next to the file, then in common/ and apps/ (the build's -I).
xargs grep -H '^#include "' <"$tmp/files" | awk -v files="$tmp/files" "$PARTS"'
function norm(p,   n, s, i, out, k) {
	n = split(p, s, "/"); k = 0
	for (i = 1; i <= n; i++) {
		if (s[i] == "." || s[i] == "") continue
		if (s[i] == ".." && k > 0) { k--; continue }
		out[++k] = s[i]
	}
	p = out[1]
	for (i = 2; i <= k; i++) p = p "/" out[i]
	return p
}
BEGIN { while ((getline f <files) > 0) have[f] = 1 }
{
	f = $0; sub(/:.*/, "", f)
	inc = $0; sub(/^[^"]*"/, "", inc); sub(/".*/, "", inc)
	dir = f; sub(/\/[^\/]*$/, "", dir)
	n = split(dir "/" inc " common/" inc " apps/" inc, cand, " ")
	for (i = 1; i <= n; i++) {
		if (!(norm(cand[i]) in have)) continue
		pf = part(f); pi = part(norm(cand[i]))
		if (!allowed(pf, pi))
			print "layers: " f " (" pf ") includes " cand[i] " (" pi "): not allowed"
		break
	}
}' >>"$tmp/parts"
if [ -s "$tmp/parts" ]; then cat "$tmp/parts"; status=1; fi

# 2. Every file of common/ has more than one user among the applications, handlers and the
# supervisor; a file that common's own files use is shared through them.
GENERIC=" common/tmpl.c common/encode.c common/evfcgi.c common/evfcgi_loop.c common/db_pg_listen.c "
grep '^common/.*\.c$' "$tmp/files" | awk -v generic="$GENERIC" "$PARTS"'
FILENAME != "-" {
	if ($2 !~ /^common\//) next
	if ($1 ~ /^common\//) { shared[$2] = 1; next }
	p = part($1); sub(/^handlers\/chat_.*/, "apps/chat", p)
	if (!(($2, p) in seen)) { seen[$2, p] = 1; n[$2]++; users[$2] = p }
	next
}
{ if (!index(generic, " " $0 " ") && n[$0] == 1 && !($0 in shared))
	print "layers: " $0 " is used only by " users[$0] ": it belongs there" }
' "$tmp/edges" - | sort -u >"$tmp/lonely"
if [ -s "$tmp/lonely" ]; then cat "$tmp/lonely"; status=1; fi

# 3. No circle between concepts.  Every node's reach is found by a walk from it; nodes
# that reach each other are one strongly connected component, printed as one circle
# through it (the shortest from its first node) and the calls between its concepts.
awk '
function concept(f,   d, b) {
	d = f; sub(/\/[^\/]*$/, "", d)
	b = f; sub(/.*\//, "", b); sub(/\.c$/, "", b); sub(/_.*/, "", b)
	return d "/" b
}
{
	ca = concept($1); cb = concept($2)
	if (ca == cb) next
	if (!(ca in known)) { known[ca] = 1; node[++nn] = ca }
	if (!(cb in known)) { known[cb] = 1; node[++nn] = cb }
	if (!((ca, cb) in adj)) { adj[ca, cb] = 1; out[ca] = out[ca] " " cb }
	if (!(($1, $2) in calls)) { pairs[ca, cb] = pairs[ca, cb] " " $1 SUBSEP $2 }
	calls[$1, $2] = calls[$1, $2] " " $3
}
END {
	for (i = 1; i <= nn; i++) {	# reach[a, b]: a path from a to b
		a = node[i]; head = 1; tail = 1; q[1] = a
		while (head <= tail) {
			c = q[head++]
			k = split(out[c], nx, " ")
			for (j = 1; j <= k; j++)
				if (!((a, nx[j]) in reach)) { reach[a, nx[j]] = 1; q[++tail] = nx[j] }
		}
	}
	found = 0
	for (i = 1; i <= nn; i++) {
		a = node[i]
		if ((a in comp) || !((a, a) in reach)) continue
		members = ""
		for (j = 1; j <= nn; j++) {
			b = node[j]
			if (b == a || ((a, b) in reach && (b, a) in reach)) { comp[b] = a; members = members " " b }
		}
		# The shortest way round from a, within the component.
		delete from; head = 1; tail = 1; q[1] = a; seenq[a] = a; back = ""
		while (head <= tail && back == "") {
			c = q[head++]
			k = split(out[c], nx, " ")
			for (j = 1; j <= k; j++) {
				if (!(nx[j] in comp) || comp[nx[j]] != a) continue
				if (nx[j] == a) { back = c; break }
				if (seenq[nx[j]] == a) continue
				seenq[nx[j]] = a; from[nx[j]] = c; q[++tail] = nx[j]
			}
		}
		path = a; c = back
		while (c != a) { path = c " -> " path; c = from[c] }
		print "layers: a circle: " a " -> " path
		k = split(members, m, " ")
		for (j = 1; j <= k; j++)
			for (l = 1; l <= k; l++) {
				if (!((m[j], m[l]) in adj)) continue
				np = split(pairs[m[j], m[l]], pr, " ")
				for (x = 1; x <= np; x++) {
					split(pr[x], fl, SUBSEP)
					print "    " fl[1] " -> " fl[2] ":" calls[fl[1], fl[2]]
				}
			}
		found++
	}
	exit (found > 0)
}' "$tmp/calls" >"$tmp/circles" || status=1
cat "$tmp/circles"

# 4. The maps.  A header's map is in its first comment.
xargs awk '
FNR == 1 { top = 0; done = 0 }
done { next }
FNR == 1 && /^\/\*/ { top = 1 }
top && match($0, /^ \*   [A-Za-z0-9_.-]+\.[ch](  |$)/) {
	name = substr($0, 6, RLENGTH - 5); sub(/ +$/, "", name)
	print FILENAME, name
}
/\*\// { done = 1 }' < <(grep '\.h$' "$tmp/files") >"$tmp/maps"
awk -v maps="$tmp/maps" -v defs="$tmp/defs" '
function dir(f) { sub(/\/[^\/]*$/, "", f); return f }
function base(f) { sub(/.*\//, "", f); return f }
BEGIN {
	while ((getline line <defs) > 0) {
		split(line, w, " ")
		if (w[1] == "main") mainfile[dir(w[2])] = w[2]
	}
	while ((getline line <maps) > 0) {
		split(line, w, " ")
		entry[w[1], w[2]] = 1; mapped[dir(w[1]), w[2]] = 1; entries[++ne] = line
	}
}
{
	have[$0] = 1
	d = dir($0)
	if (d ~ /^(common|supervisor|apps\/[^\/]+|handlers\/[^\/]+)$/ && $0 ~ /\.c$/) {
		src[++ns] = $0; nc[d]++
	}
}
END {
	for (i = 1; i <= ns; i++) {
		f = src[i]; d = dir(f); b = base(f)
		if (nc[d] == 1) continue	# a folder of one file needs no map
		mh = d "/" base(d) ".h"
		if (!(mh in have) && (d in mainfile)) { mh = mainfile[d]; sub(/\.c$/, ".h", mh) }
		if (mh in have) {
			if (!((mh, b) in entry))
				print "layers: " f " is not in the map of " mh
			continue
		}
		h = f; sub(/\.c$/, ".h", h)
		if (!(h in have) && !((d, b) in mapped))
			print "layers: " f " has no header of its own and is in no map of " d "/*.h"
	}
	for (i = 1; i <= ne; i++) {
		split(entries[i], w, " ")
		if (!((dir(w[1]) "/" w[2]) in have))
			print "layers: " w[1] " maps " w[2] ", which is not in " dir(w[1]) "/"
	}
}' "$tmp/files" >"$tmp/mapfind"
if [ -s "$tmp/mapfind" ]; then cat "$tmp/mapfind"; status=1; fi

echo "layers: $(wc -l <"$tmp/edges") calls between $(echo "$objs" | wc -w) files," \
    "$(wc -l <"$tmp/maps") map entries, $([ $status -eq 0 ] && echo clean || echo FINDINGS)"
exit $status
