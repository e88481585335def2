/*
 * fts.c: PostgreSQL's text search queries in FTS5's query language, for the table API's
 * fts, plfts, phfts and wfts filters on SQLite (dialect.c runs the result against the
 * column's FTS5 table: docs/postgrest.md says how a table declares one).
 *
 * Each filter's text is read with the grammar of the PostgreSQL function it stands for
 * into a small tree (terms, &, |, !, <->, <N>), then written as FTS5 text:
 *
 *   fts    to_tsquery: 'quoted' or bare lexemes, :* (prefix), :ABCD (weights: FTS5 has
 *          none, they are ignored), ! & | <-> <N> and parentheses; a malformed query is
 *          400 42601 "syntax error in tsquery", as PostgreSQL answers it
 *   plfts  plainto_tsquery: every word, all required
 *   phfts  phraseto_tsquery: the words as one phrase
 *   wfts   websearch_to_tsquery: words (all required), "a phrase", -word (not), a or b;
 *          never an error
 *
 * A term is always written as an FTS5 string ("word", '"' doubled), so that nothing a
 * request holds can be read by FTS5 as its own syntax (AND, NEAR, ^, column filters):
 * the only syntax in the result is what this file writes.  A word is a run of ASCII
 * letters and digits or of bytes of multi-byte UTF-8 characters; a term with no word
 * is dropped, as PostgreSQL drops a stop word (an FTS5 string without a token matches
 * nothing, where PostgreSQL's query goes on without it), and a query left with none
 * matches no row, as PostgreSQL's empty tsquery.
 *
 * FTS5's NOT is binary (a NOT b), where PostgreSQL's ! stands alone: every node is
 * written as a text T and a sign, the node being T or the rows T does not match, by De
 * Morgan's laws (a & !b is "a NOT b", !a & !b is the complement of "a OR b", a | !b the
 * complement of "b NOT a"); the caller matches the complement with NOT IN.  a <-> b is
 * FTS5's phrase ("a" + "b"); a <N> b, N > 1, its NEAR("a" "b", N - 1), which also
 * matches the two closer or in the other order; <0> is &.  Either side of <-> or <N> must
 * be a term or a phrase of terms (FTS5 has no phrase of expressions): (a | b) <-> c is a
 * 400 0A000 on SQLite.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "rest.h"

/* Nodes of one query: past it, 400 (PostgreSQL has no such bound; a query of more
 * terms than this is no search a client makes). */
#define FTS_NODES_MAX	256
/* Nesting of parentheses and ! in a to_tsquery text. */
#define FTS_DEPTH_MAX	16

enum fts_kind { FTS_TERM, FTS_AND, FTS_OR, FTS_NOT, FTS_FOLLOW };

struct fts_node {
	enum fts_kind kind;
	const char *s;		/* FTS_TERM: the lexeme, s[0..n) (not NUL-terminated) */
	size_t n;
	int prefix;		/* FTS_TERM: :* */
	int dist;		/* FTS_FOLLOW: <dist> */
	struct fts_node *l, *r;	/* r NULL for FTS_NOT */
	/* Set by fts_mark(): no word under it; the rows of its text's complement; a
	 * phrase of terms (a term, or <-> between phrases). */
	int empty, neg, phrase;
};

struct fts_parse {
	struct arena *a;
	struct rest_err *e;
	const char *v, *end, *p;
	int nodes;
	int depth;
};

static struct fts_node *fts_or(struct fts_parse *fp);

/* 1 for a byte of a word: an ASCII letter or digit, or a byte of a multi-byte UTF-8
 * character (FTS5's unicode61 tokenizer decides what those hold). */
static int
fts_wordc(unsigned char c)
{
	return isalnum(c) || c >= 0x80;
}

static struct fts_node *
fts_node(struct fts_parse *fp, enum fts_kind kind, struct fts_node *l, struct fts_node *r)
{
	struct fts_node *n;

	if (fp->nodes++ == FTS_NODES_MAX) {
		rest_err_set(fp->e, 400, "54000", NULL, "text search query has more than %d "
		    "terms and operators", FTS_NODES_MAX);
		return NULL;
	}
	if ((n = arena_alloc(fp->a, sizeof(*n))) == NULL) {
		rest_err_set(fp->e, 413, "54000", NULL, "request too large");
		return NULL;
	}
	memset(n, 0, sizeof(*n));
	n->kind = kind;
	n->l = l;
	n->r = r;
	return n;
}

static struct fts_node *
fts_term(struct fts_parse *fp, const char *s, size_t len)
{
	struct fts_node *n = fts_node(fp, FTS_TERM, NULL, NULL);

	if (n != NULL) {
		n->s = s;
		n->n = len;
	}
	return n;
}

/* l op r where either may be NULL (nothing yet, or nothing there): the other. */
static struct fts_node *
fts_join(struct fts_parse *fp, enum fts_kind kind, struct fts_node *l, struct fts_node *r,
    int *failed)
{
	struct fts_node *n;

	if (l == NULL)
		return r;
	if (r == NULL)
		return l;
	if ((n = fts_node(fp, kind, l, r)) == NULL)
		*failed = 1;
	else
		n->dist = 1;
	return n;
}

static void
fts_syntax(struct fts_parse *fp)
{
	size_t len = (size_t)(fp->end - fp->v);

	rest_err_set(fp->e, 400, "42601", NULL, "syntax error in tsquery: \"%.*s\"",
	    (int)(len > 120 ? 120 : len), fp->v);
}

static void
fts_space(struct fts_parse *fp)
{
	while (fp->p < fp->end && isspace((unsigned char)*fp->p))
		fp->p++;
}

/* A to_tsquery operand: 'quoted' ('' or \ before a quote) or bare, then :* and weights. */
static struct fts_node *
fts_operand(struct fts_parse *fp)
{
	struct fts_node *n;
	const char *s = fp->p;
	char *q;
	size_t k = 0;

	if (fp->p < fp->end && *fp->p == '\'') {
		if ((q = arena_alloc(fp->a, (size_t)(fp->end - fp->p))) == NULL) {
			rest_err_set(fp->e, 413, "54000", NULL, "request too large");
			return NULL;
		}
		for (fp->p++;; fp->p++) {
			if (fp->p == fp->end) {
				fts_syntax(fp);
				return NULL;
			}
			if (fp->p + 1 < fp->end && (*fp->p == '\\' ||
			    (*fp->p == '\'' && fp->p[1] == '\'')))
				fp->p++;
			else if (*fp->p == '\'')
				break;
			q[k++] = *fp->p;
		}
		fp->p++;
		n = fts_term(fp, q, k);
	} else {
		while (fp->p < fp->end && !isspace((unsigned char)*fp->p) &&
		    strchr("&|!()<:'", *fp->p) == NULL)
			fp->p++;
		if (fp->p == s) {
			fts_syntax(fp);
			return NULL;
		}
		n = fts_term(fp, s, (size_t)(fp->p - s));
	}
	if (n == NULL)
		return NULL;
	if (fp->p < fp->end && *fp->p == ':')
		for (fp->p++; fp->p < fp->end && strchr("*aAbBcCdD", *fp->p) != NULL; fp->p++)
			if (*fp->p == '*')
				n->prefix = 1;
	return n;
}

/* ! unary, ( or ), or an operand. */
static struct fts_node *
fts_unary(struct fts_parse *fp)
{
	struct fts_node *n = NULL;

	fts_space(fp);
	if (fp->p == fp->end) {
		fts_syntax(fp);
		return NULL;
	}
	if (++fp->depth > FTS_DEPTH_MAX) {
		rest_err_set(fp->e, 400, "54001", NULL, "text search query nested more than %d "
		    "deep", FTS_DEPTH_MAX);
		return NULL;
	}
	if (*fp->p == '!') {
		fp->p++;
		if ((n = fts_unary(fp)) != NULL)
			n = fts_node(fp, FTS_NOT, n, NULL);
	} else if (*fp->p == '(') {
		fp->p++;
		if ((n = fts_or(fp)) != NULL) {
			fts_space(fp);
			if (fp->p == fp->end || *fp->p != ')') {
				fts_syntax(fp);
				n = NULL;
			} else
				fp->p++;
		}
	} else
		n = fts_operand(fp);
	fp->depth--;
	return n;
}

/* <-> or <N> at fp->p: the distance (0 .. 16384, PostgreSQL's), or -1. */
static int
fts_follow_op(struct fts_parse *fp)
{
	const char *p = fp->p + 1;
	long d = 0;

	if (p < fp->end && *p == '-') {
		d = 1;
		p++;
	} else {
		if (p == fp->end || !isdigit((unsigned char)*p))
			return -1;
		for (; p < fp->end && isdigit((unsigned char)*p); p++)
			if ((d = d * 10 + (*p - '0')) > 16384)
				return -1;
	}
	if (p == fp->end || *p != '>')
		return -1;
	fp->p = p + 1;
	return (int)d;
}

static struct fts_node *
fts_follow(struct fts_parse *fp)
{
	struct fts_node *l, *r;
	int d;

	if ((l = fts_unary(fp)) == NULL)
		return NULL;
	for (;;) {
		fts_space(fp);
		if (fp->p == fp->end || *fp->p != '<')
			return l;
		if ((d = fts_follow_op(fp)) < 0) {
			fts_syntax(fp);
			return NULL;
		}
		if ((r = fts_unary(fp)) == NULL ||
		    (l = fts_node(fp, d == 0 ? FTS_AND : FTS_FOLLOW, l, r)) == NULL)
			return NULL;
		l->dist = d;
	}
}

static struct fts_node *
fts_and(struct fts_parse *fp)
{
	struct fts_node *l, *r;

	if ((l = fts_follow(fp)) == NULL)
		return NULL;
	for (;;) {
		fts_space(fp);
		if (fp->p == fp->end || *fp->p != '&')
			return l;
		fp->p++;
		if ((r = fts_follow(fp)) == NULL || (l = fts_node(fp, FTS_AND, l, r)) == NULL)
			return NULL;
	}
}

static struct fts_node *
fts_or(struct fts_parse *fp)
{
	struct fts_node *l, *r;

	if ((l = fts_and(fp)) == NULL)
		return NULL;
	for (;;) {
		fts_space(fp);
		if (fp->p == fp->end || *fp->p != '|')
			return l;
		fp->p++;
		if ((r = fts_and(fp)) == NULL || (l = fts_node(fp, FTS_OR, l, r)) == NULL)
			return NULL;
	}
}

/* to_tsquery's text: the tree, NULL for an empty text (*failed 0), or NULL with e set. */
static struct fts_node *
fts_parse_tsquery(struct fts_parse *fp, int *failed)
{
	struct fts_node *n;

	fts_space(fp);
	if (fp->p == fp->end)
		return NULL;
	if ((n = fts_or(fp)) != NULL) {
		fts_space(fp);
		if (fp->p != fp->end) {
			fts_syntax(fp);
			n = NULL;
		}
	}
	if (n == NULL)
		*failed = 1;
	return n;
}

/*
 * The words of s[0..len) joined by kind (FTS_AND: plainto_tsquery; FTS_FOLLOW:
 * phraseto_tsquery and a websearch "phrase"), NULL when there is none (or on failure,
 * *failed set).
 */
static struct fts_node *
fts_words(struct fts_parse *fp, const char *s, size_t len, enum fts_kind kind, int *failed)
{
	struct fts_node *n = NULL, *w;
	size_t i = 0, j;

	while (i < len && !*failed) {
		while (i < len && !fts_wordc((unsigned char)s[i]))
			i++;
		for (j = i; j < len && fts_wordc((unsigned char)s[j]); j++)
			;
		if (j > i) {
			if ((w = fts_term(fp, s + i, j - i)) == NULL)
				*failed = 1;
			else
				n = fts_join(fp, kind, n, w, failed);
		}
		i = j;
	}
	return *failed ? NULL : n;
}

/*
 * websearch_to_tsquery's text: words and "phrases" (the closing quote may be missing),
 * each negated by a '-' just before it, joined by "or" (of any case) into groups that are
 * all required.  Everything else is a separator.
 */
static struct fts_node *
fts_parse_web(struct fts_parse *fp, int *failed)
{
	struct fts_node *all = NULL, *group = NULL, *item;
	const char *p = fp->p, *end = fp->end, *s;
	int neg, or = 0;

	while (p < end && !*failed) {
		neg = 0;
		if (*p == '-' && p + 1 < end && (fts_wordc((unsigned char)p[1]) || p[1] == '"')) {
			neg = 1;
			p++;
		}
		if (*p == '"') {
			for (s = ++p; p < end && *p != '"'; p++)
				;
			item = fts_words(fp, s, (size_t)(p - s), FTS_FOLLOW, failed);
			if (p < end)
				p++;
		} else if (fts_wordc((unsigned char)*p)) {
			for (s = p; p < end && fts_wordc((unsigned char)*p); p++)
				;
			if (p - s == 2 && !neg && group != NULL && strncasecmp(s, "or", 2) == 0) {
				or = 1;
				continue;
			}
			item = fts_term(fp, s, (size_t)(p - s));
			if (item == NULL)
				*failed = 1;
		} else {
			p++;
			continue;
		}
		if (item == NULL)
			continue;
		if (neg && (item = fts_node(fp, FTS_NOT, item, NULL)) == NULL) {
			*failed = 1;
			break;
		}
		if (or)
			group = fts_join(fp, FTS_OR, group, item, failed);
		else {
			all = fts_join(fp, FTS_AND, all, group, failed);
			group = item;
		}
		or = 0;
	}
	all = fts_join(fp, FTS_AND, all, group, failed);
	return *failed ? NULL : all;
}

/* 1 when s[0..n) holds a word. */
static int
fts_has_word(const char *s, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (fts_wordc((unsigned char)s[i]))
			return 1;
	return 0;
}

/*
 * Sets empty, neg and phrase over the tree (see struct fts_node).  0, or -1 with e set
 * (<-> or <N> beside something else than a phrase of terms).
 */
static int
fts_mark(struct fts_node *n, struct rest_err *e)
{
	if (n->kind == FTS_TERM) {
		n->empty = !fts_has_word(n->s, n->n);
		n->phrase = 1;
		return 0;
	}
	if (fts_mark(n->l, e) < 0 || (n->r != NULL && fts_mark(n->r, e) < 0))
		return -1;
	if (n->kind == FTS_NOT || n->r == NULL) {
		n->empty = n->l->empty;
		n->neg = !n->l->neg;
		return 0;
	}
	n->empty = n->l->empty && n->r->empty;
	if (n->l->empty || n->r->empty) {
		const struct fts_node *c = n->l->empty ? n->r : n->l;

		n->neg = c->neg;
		n->phrase = c->phrase;
		return 0;
	}
	switch (n->kind) {
	case FTS_AND:
		n->neg = n->l->neg && n->r->neg;
		break;
	case FTS_OR:
		n->neg = n->l->neg || n->r->neg;
		break;
	default:
		if (!n->l->phrase || !n->r->phrase) {
			rest_err_set(e, 400, "0A000", NULL, "<-> and <N> between expressions "
			    "are not supported on SQLite");
			e->hint = "FTS5 follows terms and phrases of terms only: a <-> b, "
			    "not (a | b) <-> c";
			return -1;
		}
		n->phrase = n->dist == 1;
	}
	return 0;
}

static void fts_write(struct buf *b, const struct fts_node *n);

/* The operator at the top of the non-empty n's text (" AND ", " OR ", " NOT "), or NULL
 * for a term or phrase, which needs no parentheses. */
static const char *
fts_top(const struct fts_node *n)
{
	for (;;) {
		if (n->kind == FTS_TERM || n->kind == FTS_FOLLOW)
			return NULL;
		if (n->kind == FTS_NOT)
			n = n->l;
		else if (n->l->empty || n->r->empty)
			n = n->l->empty ? n->r : n->l;
		else if (n->l->neg != n->r->neg)
			return " NOT ";
		else
			return (n->kind == FTS_AND) != n->l->neg ? " AND " : " OR ";
	}
}

/*
 * The text of a non-empty n as an operand of op: in parentheses, but where n's own
 * operator is op (a AND b AND c) or it has none, so that a long chain stays flat (FTS5's
 * parser has a bounded stack: a hundred nested parentheses overflow it).
 */
static void
fts_paren(struct buf *b, const struct fts_node *n, const char *op)
{
	const char *top = fts_top(n);

	if (top == NULL || (op != NULL && strcmp(op, " NOT ") != 0 &&
	    strcmp(top, op) == 0)) {
		fts_write(b, n);
		return;
	}
	buf_putc(b, '(');
	fts_write(b, n);
	buf_putc(b, ')');
}

/* A term as an FTS5 string: '"' doubled, NUL left out. */
static void
fts_write_term(struct buf *b, const struct fts_node *n)
{
	size_t i;

	buf_putc(b, '"');
	for (i = 0; i < n->n; i++) {
		if (n->s[i] == '"')
			buf_putc(b, '"');
		if (n->s[i] != '\0')
			buf_putc(b, n->s[i]);
	}
	buf_putc(b, '"');
	if (n->prefix)
		buf_puts(b, " *");
}

/*
 * Writes the FTS5 text of the non-empty n: the rows n matches, or when n->neg those it
 * does not.  Two sides of & or | of different signs become FTS5's binary NOT.
 */
static void
fts_write(struct buf *b, const struct fts_node *n)
{
	const struct fts_node *pos, *neg;

	if (n->kind == FTS_TERM) {
		fts_write_term(b, n);
		return;
	}
	if (n->kind == FTS_NOT) {
		fts_write(b, n->l);
		return;
	}
	if (n->l->empty || n->r->empty) {
		fts_write(b, n->l->empty ? n->r : n->l);
		return;
	}
	if (n->kind == FTS_FOLLOW) {
		if (n->dist != 1)
			buf_puts(b, "NEAR(");
		fts_write(b, n->l);
		if (n->dist == 1)
			buf_puts(b, " + ");
		else
			buf_putc(b, ' ');
		fts_write(b, n->r);
		if (n->dist != 1)
			buf_printf(b, ", %d)", n->dist - 1);
		return;
	}
	if (n->l->neg == n->r->neg) {
		/* a & b, a | b; !a & !b = !(a | b); !a | !b = !(a & b) */
		const char *op = fts_top(n);

		fts_paren(b, n->l, op);
		buf_puts(b, op);
		fts_paren(b, n->r, op);
		return;
	}
	/* a & !b: a NOT b.  a | !b = !(b & !a): b NOT a. */
	pos = n->l->neg ? n->r : n->l;
	neg = n->l->neg ? n->l : n->r;
	if (n->kind == FTS_OR) {
		const struct fts_node *t = pos;

		pos = neg;
		neg = t;
	}
	fts_paren(b, pos, NULL);
	buf_puts(b, " NOT ");
	fts_paren(b, neg, NULL);
}

int
rest_fts_query(struct arena *a, int op, const char *v, size_t len, struct buf *out,
    int *neg, struct rest_err *e)
{
	struct fts_parse fp;
	struct fts_node *n;
	int failed = 0;

	memset(&fp, 0, sizeof(fp));
	fp.a = a;
	fp.e = e;
	fp.v = fp.p = v;
	fp.end = v + len;
	*neg = 0;
	switch (op) {
	case REST_OP_FTS:
		n = fts_parse_tsquery(&fp, &failed);
		break;
	case REST_OP_PLFTS:
		n = fts_words(&fp, v, len, FTS_AND, &failed);
		break;
	case REST_OP_PHFTS:
		n = fts_words(&fp, v, len, FTS_FOLLOW, &failed);
		break;
	default:
		n = fts_parse_web(&fp, &failed);
	}
	if (failed)
		return -1;
	if (n == NULL)
		return 0;
	if (fts_mark(n, e) < 0)
		return -1;
	if (n->empty)
		return 0;
	*neg = n->neg;
	fts_write(out, n);
	if (buf_failed(out)) {
		rest_err_set(e, 413, "54000", NULL, "request too large");
		return -1;
	}
	return 1;
}
