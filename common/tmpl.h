/*
 * tmpl.h: HTML templates with escaping that cannot be turned off.
 *
 * A template is text with two kinds of markers:
 *
 *   {{name}}                  a slot: the value is HTML-escaped (& < > " ') and inserted
 *   {{#name}} ... {{/name}}   a block: its body is repeated once per row (no nesting)
 *
 * There is no raw-output marker on purpose: every value that reaches the page goes
 * through tmpl_escape(), so a template change or a careless handler cannot open an XSS
 * hole.  Slot and block names are given at parse time as tables and resolved to indexes,
 * so a typo in a template is a start-up error, not an empty spot in a page, and rendering
 * does no string lookups.  Templates are parsed once at start-up and are read-only after,
 * so any number of threads may render the same one.
 */
#ifndef SLUICE_TMPL_H
#define SLUICE_TMPL_H

#include <stddef.h>

#include "buf.h"

struct tmpl;

/* One slot value: s[0..len), raw (unescaped).  s == NULL renders nothing. */
struct tmpl_val {
	const char *s;
	size_t len;
};

/*
 * Fills the slots of one row of block (an index into the blocks table) number i (0, 1,
 * ...) in vals, which is indexed by slot number.  Returns 1 when the row was filled, 0
 * when there are no more rows, -1 on failure (rendering stops and fails).
 */
typedef int (*tmpl_row_fn)(void *ctx, int block, size_t i, struct tmpl_val *vals);

/*
 * Parses src[0..len) against the NULL-terminated tables of slot and block names (both
 * borrowed; they must outlive the template).  Returns the template (caller frees with
 * tmpl_free()), or NULL with a message naming the line in err[errlen]: unknown name,
 * unclosed or mismatched block, nested block, malformed marker.
 */
struct tmpl *tmpl_parse(const char *src, size_t len, const char *const *slots,
    const char *const *blocks, char *err, size_t errlen);

/* tmpl_parse() of the file at path.  NULL with err set when it cannot be read. */
struct tmpl *tmpl_load(const char *path, const char *const *slots,
    const char *const *blocks, char *err, size_t errlen);

void tmpl_free(struct tmpl *t);

/*
 * Appends the page to out.  vals (one entry per slot, borrowed) holds the values outside
 * blocks; row() fills the block slots of each row in place (it may be NULL when the
 * template has no block).  Returns 0, or -1 when out refused an append (its cap) or row()
 * failed.
 */
int tmpl_render(const struct tmpl *t, struct buf *out, struct tmpl_val *vals,
    tmpl_row_fn row, void *ctx);

/* Appends s[0..len) HTML-escaped (& < > " ' become entities).  0 or -1 (the buf's cap). */
int tmpl_escape(struct buf *out, const char *s, size_t len);

#endif /* SLUICE_TMPL_H */
