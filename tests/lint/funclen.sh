#!/usr/bin/env bash
# The length of every function of the production C (common/, apps/, handlers/,
# supervisor/, sql/, bin/ if any; .c and .h): none over MAX (100) lines, at most MANY (10)
# over LONG (80).  A function is measured from its `{` to its `}`, both counted, in the
# house layout of STYLE.md: the name at column 0 on its own line after the return type,
# `{` and `}` alone at column 0.  A `{` at column 0 with no such name before it, or a
# definition with its `{` on the name's line, is a finding too (the measure would miss it).
#
#   tests/lint/funclen.sh            check (exit 1 on a finding, printing the offenders)
#   tests/lint/funclen.sh --list     every function, longest first ("lines file:line name")
#   tests/lint/funclen.sh --self-test  the measure itself, over a made-up file
#
# Run from anywhere; it reads the sources only (no build needed), in well under a second.
set -u
cd "$(dirname "$0")/../.." || exit 1
export LC_ALL=C
MAX=${FUNCLEN_MAX:-100} LONG=${FUNCLEN_LONG:-80} MANY=${FUNCLEN_MANY:-10}

# measure FILE...: "lines file:line name" per function, or "? file:line reason" for a
# body the layout does not let it measure.
measure() {
	awk '
	FNR == 1 { name = ""; start = 0 }
	# A definition whose { shares the line with its name (struct and array initializers,
	# which have an "=", or no parenthesis, are not definitions).
	/^[A-Za-z_].*\)[ \t]*\{[ \t]*$/ && !/=/ && !start {
		print "?", FILENAME ":" FNR, "{ on the line of the definition"
		next
	}
	# The name line; a prototype (a line ending in ";"), the "};" of a struct or a
	# preprocessor line forgets it.
	/^[A-Za-z_][A-Za-z0-9_]*\(/ && !start { name = $0; sub(/\(.*/, "", name); at = FNR }
	!start && (/;[ \t]*$/ || /^[}#]/) { name = "" }
	/^\{/ {
		if (start) { print "?", FILENAME ":" FNR, "{ at column 0 inside " name; next }
		if (name == "") { print "?", FILENAME ":" FNR, "{ at column 0 after no function name"; next }
		start = FNR; next
	}
	/^\}/ && start { print FNR - start + 1, FILENAME ":" at, name; start = 0; name = "" }
	END { if (start) print "?", FILENAME ":" start, name " has no } at column 0" }
	' "$@"
}

sources() {
	# shellcheck disable=SC2046
	find $(ls -d common apps handlers supervisor sql bin 2>/dev/null) \
	    -name '*.[ch]' -type f | sort
}

if [ "${1:-}" = --self-test ]; then
	tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
	{
		printf 'static const int tbl[] = {\n\t1,\n};\n'
		printf 'struct s {\n\tint a;\n};\n'
		printf '/* f(x) in a comment */\nstatic int\nshort_one(int a,\n    int b)\n{\n\treturn a + b;\n}\n'
		printf 'int\nlong_one(void)\n{\n'
		for _ in $(seq 1 98); do printf '\tx();\n'; done
		printf '}\n'
		printf 'static void\nbad(void) {\n}\n'
		printf 'int\nproto(int a);\nstatic const int tbl2[] =\n{\n\t2,\n};\n'
		printf 'int\nafter(int a,\n    int b)\n{\n\treturn 0;\n}\n'
	} >"$tmp/t.c"
	got=$(measure "$tmp/t.c" | sed "s|$tmp/||")
	want='3 t.c:9 short_one
100 t.c:15 long_one
? t.c:117 { on the line of the definition
? t.c:122 { at column 0 after no function name
3 t.c:126 after'
	if [ "$got" = "$want" ]; then echo "funclen: self-test ok"; exit 0; fi
	printf 'funclen: self-test FAILED\n--- want\n%s\n--- got\n%s\n' "$want" "$got"
	exit 1
fi

# shellcheck disable=SC2046
all=$(measure $(sources))
if [ "${1:-}" = --list ]; then
	echo "$all" | sort -k1,1nr
	exit 0
fi
n=$(echo "$all" | grep -c '^[0-9]')
[ "$n" -gt 0 ] || { echo "funclen: no function found: the measure is broken"; exit 1; }
status=0
bad=$(echo "$all" | awk '$1 == "?"')
if [ -n "$bad" ]; then
	echo "$bad" | sed 's/^? /funclen: cannot measure /'
	status=1
fi
over=$(echo "$all" | awk -v max="$MAX" '$1 != "?" && $1 > max' | sort -k1,1nr)
if [ -n "$over" ]; then
	echo "$over" | sed "s/^/funclen: over $MAX lines: /"
	status=1
fi
long=$(echo "$all" | awk -v long="$LONG" -v max="$MAX" '$1 != "?" && $1 > long && $1 <= max' |
	sort -k1,1nr)
nlong=$(echo "$long" | grep -c '^[0-9]')
if [ "$nlong" -gt "$MANY" ]; then
	echo "funclen: $nlong functions over $LONG lines (at most $MANY):"
	echo "$long" | sed 's/^/    /'
	status=1
fi
echo "funclen: $n functions, $(echo "$over" | grep -c '^[0-9]') over $MAX lines," \
    "$nlong over $LONG (at most $MANY): $([ $status -eq 0 ] && echo clean || echo FINDINGS)"
exit $status
