/*
 * parse.c: PostgREST's URL grammar, into a tree of struct rest_node.
 *
 *   select=item,item,...     item: *  |  [alias:]column  |  [alias:]rel[!hint][!inner](items)
 *                            |  ...rel[!hint][!inner](items)   (a spread, to-one only)
 *                            |  [alias:]field[::type][.agg()[::type]]  |  [alias:]count()[::type]
 *                            field: column[->key|->index]...[->>key]; agg: count sum avg min
 *                            max; type: a name of letters, digits, '_' (names.c checks it)
 *   field=[not.]op.value     op: eq neq gt gte lt lte like ilike (* as wildcard)
 *                            isdistinct match imatch cs cd ov sl sr nxl nxr adj
 *                            fts plfts phfts wfts, each with an optional (language)
 *                            in.(v,"quoted, value",...)  is.(null|not_null|true|false)
 *                            eq neq gt gte lt lte like ilike match imatch with (any) or
 *                            (all) and a list {v,"quoted, value",...}
 *   or=(c.op.v,and(...),...) and=(...) not.or=(...)    nested up to REST_LOGIC_DEPTH
 *   order=field[.asc|.desc][.nullsfirst|.nullslast],...
 *   limit=N offset=N
 *   rel.col=..., rel.or=..., rel.order=..., rel.limit=..., rel.offset=...  (embeds, by
 *   alias or name, nested as a.b.col)
 *
 * Names are only collected here; names.c matches them against the schema.  Everything
 * parsed lives in the request's arena.  Each failure is a PGRST100 (400) with the offending
 * text in details.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "rest.h"
#include "str.h"

static int
parse_fail(struct rest_err *e, const char *what, const char *s, size_t len)
{
	char d[200];

	(void)snprintf(d, sizeof(d), "unexpected input in \"%.*s\"", len > 120 ? 120 : (int)len,
	    s);
	rest_err_set(e, 400, "PGRST100", d, "\"failed to parse %s\"", what);
	return -1;
}

struct rest_node *
rest_node_new(struct arena *a, struct rest_node *parent)
{
	struct rest_node *n = arena_alloc(a, sizeof(*n));

	if (n == NULL)
		return NULL;
	memset(n, 0, sizeof(*n));
	n->parent = parent;
	n->depth = parent ? parent->depth + 1 : 0;
	n->limit = -1;
	n->table = n->fk = n->junction = n->fk2 = -1;
	if ((n->where = arena_alloc(a, sizeof(*n->where))) == NULL)
		return NULL;
	memset(n->where, 0, sizeof(*n->where));
	n->where->kind = REST_C_AND;
	return n;
}

/* A cursor over (s, len). */
struct cur {
	const char *s;
	size_t len;
	size_t i;
};

static void
cur_ws(struct cur *c)
{
	while (c->i < c->len && (c->s[c->i] == ' ' || c->s[c->i] == '\t'))
		c->i++;
}

static int
cur_is(struct cur *c, char ch)
{
	return c->i < c->len && c->s[c->i] == ch;
}

/*
 * A name: "quoted" (with "" for a quote) or a run of bytes up to one of stops.  Returns the
 * arena copy, or NULL when empty, unterminated or out of memory.
 */
static char *
cur_name(struct arena *a, struct cur *c, const char *stops)
{
	size_t start, n = 0;
	char *out;

	cur_ws(c);
	if (cur_is(c, '"')) {
		c->i++;
		if ((out = arena_alloc(a, c->len - c->i + 1)) == NULL)
			return NULL;
		while (c->i < c->len) {
			if (c->s[c->i] == '"') {
				if (c->i + 1 < c->len && c->s[c->i + 1] == '"') {
					out[n++] = '"';
					c->i += 2;
					continue;
				}
				c->i++;
				out[n] = '\0';
				cur_ws(c);
				return n ? out : NULL;
			}
			out[n++] = c->s[c->i++];
		}
		return NULL;
	}
	start = c->i;
	while (c->i < c->len && strchr(stops, c->s[c->i]) == NULL && c->s[c->i] != ' ')
		c->i++;
	if (c->i == start)
		return NULL;
	out = arena_strndup(a, c->s + start, c->i - start);
	cur_ws(c);
	return out;
}

static int parse_items(struct arena *a, struct cur *c, struct rest_node *n,
    struct rest_err *e);
static int parse_path(struct arena *a, const char **col, struct rest_path **out,
    struct rest_err *e);

const char *const rest_agg_names[] = {
	[REST_AGG_NONE] = "", [REST_AGG_COUNT] = "count", [REST_AGG_SUM] = "sum",
	[REST_AGG_AVG] = "avg", [REST_AGG_MIN] = "min", [REST_AGG_MAX] = "max",
};

/* "::type" at c: a name of letters, digits and '_' (names.c checks it against the
 * dialect's list).  0, or -1 with e set. */
static int
parse_cast(struct arena *a, struct cur *c, const char **out, struct rest_err *e)
{
	size_t start;

	if (c->i + 1 >= c->len || c->s[c->i] != ':' || c->s[c->i + 1] != ':')
		return parse_fail(e, "the select parameter", c->s, c->len);
	c->i += 2;
	start = c->i;
	while (c->i < c->len && (isalnum((unsigned char)c->s[c->i]) || c->s[c->i] == '_'))
		c->i++;
	if (c->i == start || c->i - start > 63 ||
	    (*out = arena_strndup(a, c->s + start, c->i - start)) == NULL)
		return parse_fail(e, "the select parameter (the cast)", c->s, c->len);
	cur_ws(c);
	return 0;
}

/* Whether "()" is at c (an aggregate's empty argument list); skips it. */
static int
parse_empty_parens(struct cur *c)
{
	if (c->i + 1 < c->len && c->s[c->i] == '(' && c->s[c->i + 1] == ')') {
		c->i += 2;
		cur_ws(c);
		return 1;
	}
	return 0;
}

/*
 * The rest of a column item after its name: ->path, ::cast, .agg() and ::cast; it
 * becomes a REST_I_EXPR when it has any of them.
 */
static int
parse_expr(struct arena *a, struct cur *c, struct rest_item *it, struct rest_err *e)
{
	if (parse_path(a, &it->name, &it->path, e) < 0)
		return -1;
	if (cur_is(c, ':') && parse_cast(a, c, &it->cast, e) < 0)
		return -1;
	if (cur_is(c, '.')) {
		char *f;
		int k;

		c->i++;
		if ((f = cur_name(a, c, ",():!.")) == NULL)
			return parse_fail(e, "the select parameter", c->s, c->len);
		for (k = REST_AGG_COUNT; k <= REST_AGG_MAX; k++)
			if (!strcmp(f, rest_agg_names[k]))
				break;
		if (k > REST_AGG_MAX || !parse_empty_parens(c))
			return parse_fail(e, "the select parameter (aggregates: count() sum() "
			    "avg() min() max())", c->s, c->len);
		it->agg = (enum rest_agg)k;
		if (cur_is(c, ':') && parse_cast(a, c, &it->agg_cast, e) < 0)
			return -1;
	}
	if (it->path == NULL && it->cast == NULL && it->agg == REST_AGG_NONE)
		return 0;
	it->kind = REST_I_EXPR;
	if (it->alias == NULL)
		it->alias = it->agg != REST_AGG_NONE ? rest_agg_names[it->agg] :
		    it->path != NULL ? it->path->keys[it->path->nkeys - 1] : it->name;
	return 0;
}

/* An embed, name[:alias] or ...name (spread) already read: its hints (!inner, !left,
 * !hint) and its own items in parentheses.  0, or -1 (e set). */
static int
parse_embed(struct arena *a, struct cur *c, struct rest_node *n, struct rest_item *it,
    char *name, char *alias, int spread, struct rest_err *e)
{
	if (n->depth + 1 > REST_EMBED_DEPTH) {
		rest_err_set(e, 400, "PGRST100", NULL,
		    "embedding is limited to %d levels", REST_EMBED_DEPTH);
		return -1;
	}
	it->kind = REST_I_EMBED;
	if ((it->embed = rest_node_new(a, n)) == NULL)
		return parse_fail(e, "the select parameter", c->s, c->len);
	it->embed->name = name;
	it->embed->alias = alias ? alias : name;
	it->embed->spread = spread;
	while (cur_is(c, '!')) {
		char *h;

		c->i++;
		if ((h = cur_name(a, c, ",():!")) == NULL)
			return parse_fail(e, "the select parameter", c->s, c->len);
		if (!strcmp(h, "inner"))
			it->embed->inner = 1;
		else if (!strcmp(h, "left"))
			it->embed->inner = 0;
		else
			it->embed->hint = h;
	}
	if (!cur_is(c, '('))
		return parse_fail(e, "the select parameter", c->s, c->len);
	c->i++;
	cur_ws(c);
	if (cur_is(c, ')')) {
		/* rel() selects no column; PostgREST allows it with !inner for filtering. */
		c->i++;
		cur_ws(c);
		return 0;
	}
	if (parse_items(a, c, it->embed, e) < 0)
		return -1;
	if (!cur_is(c, ')'))
		return parse_fail(e, "the select parameter", c->s, c->len);
	c->i++;
	cur_ws(c);
	return 0;
}

/* One select item at c. */
static int
parse_item(struct arena *a, struct cur *c, struct rest_node *n, struct rest_item *it,
    struct rest_err *e)
{
	char *name, *alias = NULL;
	int spread = 0;

	memset(it, 0, sizeof(*it));
	cur_ws(c);
	if (cur_is(c, '*')) {
		c->i++;
		cur_ws(c);
		it->kind = REST_I_STAR;
		return 0;
	}
	if (c->len - c->i >= 3 && !memcmp(c->s + c->i, "...", 3)) {
		spread = 1;
		c->i += 3;
	}
	if ((name = cur_name(a, c, ",():!.")) == NULL)
		return parse_fail(e, "the select parameter", c->s, c->len);
	if (!spread && cur_is(c, ':') && !(c->i + 1 < c->len && c->s[c->i + 1] == ':')) {
		c->i++;
		alias = name;
		if (c->len - c->i >= 3 && !memcmp(c->s + c->i, "...", 3))
			return parse_fail(e, "the select parameter (a spread takes no alias)",
			    c->s, c->len);
		if ((name = cur_name(a, c, ",():!.")) == NULL)
			return parse_fail(e, "the select parameter", c->s, c->len);
	}
	it->alias = alias;
	it->name = name;
	it->kind = REST_I_COL;
	if (!spread && !strcmp(name, "count") && parse_empty_parens(c)) {
		/* count(): the rows of each group. */
		it->kind = REST_I_EXPR;
		it->agg = REST_AGG_COUNT;
		it->name = NULL;
		if (it->alias == NULL)
			it->alias = "count";
		if (cur_is(c, ':') && parse_cast(a, c, &it->agg_cast, e) < 0)
			return -1;
		return 0;
	}
	if (!cur_is(c, '!') && !cur_is(c, '(')) {
		if (spread)
			return parse_fail(e, "the select parameter (a spread needs an embedded "
			    "resource: ...rel(cols))", c->s, c->len);
		return parse_expr(a, c, it, e);
	}
	return parse_embed(a, c, n, it, name, alias, spread, e);
}

static int
parse_items(struct arena *a, struct cur *c, struct rest_node *n, struct rest_err *e)
{
	size_t cap = 8;

	if ((n->items = arena_alloc(a, cap * sizeof(*n->items))) == NULL)
		return parse_fail(e, "the select parameter", c->s, c->len);
	for (;;) {
		if (n->nitems == cap) {
			struct rest_item *p;

			if ((p = arena_alloc(a, 2 * cap * sizeof(*p))) == NULL)
				return parse_fail(e, "the select parameter", c->s, c->len);
			memcpy(p, n->items, cap * sizeof(*p));
			n->items = p;
			cap *= 2;
		}
		if (parse_item(a, c, n, &n->items[n->nitems], e) < 0)
			return -1;
		n->nitems++;
		if (!cur_is(c, ','))
			return 0;
		c->i++;
	}
}

/* Counts the embeds of a tree, to bound the work per request. */
static size_t
parse_count_nodes(const struct rest_node *n)
{
	size_t i, k = 1;

	for (i = 0; i < n->nitems; i++)
		if (n->items[i].kind == REST_I_EMBED)
			k += parse_count_nodes(n->items[i].embed);
	return k;
}

int
rest_parse_select(struct arena *a, const char *s, size_t len, struct rest_node *root,
    struct rest_err *e)
{
	struct cur c = { s, len, 0 };

	cur_ws(&c);
	if (c.i == len) {
		/* select= with nothing: PostgREST answers every column. */
		root->items = NULL;
		root->nitems = 0;
		return 0;
	}
	if (parse_items(a, &c, root, e) < 0)
		return -1;
	if (c.i != len)
		return parse_fail(e, "the select parameter", s, len);
	if (parse_count_nodes(root) > REST_NODES_MAX) {
		rest_err_set(e, 400, "PGRST100", NULL, "at most %d embedded resources",
		    REST_NODES_MAX);
		return -1;
	}
	return 0;
}

static const char *const parse_ops[REST_OP__MAX] = {
	"eq", "neq", "gt", "gte", "lt", "lte", "like", "ilike", "in", "is",
	"isdistinct", "match", "imatch", "fts", "plfts", "phfts", "wfts",
	"cs", "cd", "ov", "sl", "sr", "nxl", "nxr", "adj",
};

/* Reads an in.(...) list, or with open '{' an op(any).{...} list: values separated by
 * commas, "quoted" with \ escapes. */
static int
parse_list(struct arena *a, const char *s, size_t len, struct rest_cond *c, char open,
    struct rest_err *e)
{
	size_t i = 0, cap = 0;

	if (len < 2 || s[0] != open || s[len - 1] != (open == '(' ? ')' : '}'))
		return parse_fail(e, "the in list", s, len);
	s++;
	len -= 2;
	c->nlist = 0;
	if (len == 0)
		return 0;
	for (;;) {
		char *v;
		size_t n = 0;

		if (c->nlist == REST_IN_MAX) {
			rest_err_set(e, 400, "PGRST100", NULL,
			    "an in list holds at most %d values", REST_IN_MAX);
			return -1;
		}
		if (c->nlist == cap) {
			const char **l;
			size_t *ll;

			cap = cap ? cap * 2 : 8;
			l = arena_alloc(a, cap * sizeof(*l));
			ll = arena_alloc(a, cap * sizeof(*ll));
			if (l == NULL || ll == NULL)
				return parse_fail(e, "the in list", s, len);
			if (c->nlist) {
				memcpy(l, c->list, c->nlist * sizeof(*l));
				memcpy(ll, c->listlen, c->nlist * sizeof(*ll));
			}
			c->list = l;
			c->listlen = ll;
		}
		if ((v = arena_alloc(a, len + 1)) == NULL)
			return parse_fail(e, "the in list", s, len);
		if (i < len && s[i] == '"') {
			i++;
			while (i < len && s[i] != '"') {
				if (s[i] == '\\' && i + 1 < len)
					i++;
				v[n++] = s[i++];
			}
			if (i == len)
				return parse_fail(e, "the in list", s - 1, len + 2);
			i++;
		} else
			while (i < len && s[i] != ',')
				v[n++] = s[i++];
		v[n] = '\0';
		c->list[c->nlist] = v;
		c->listlen[c->nlist++] = n;
		if (i == len)
			return 0;
		if (s[i] != ',')
			return parse_fail(e, "the in list", s - 1, len + 2);
		i++;
	}
}

/*
 * The JSON path of a filter's, order's or select item's column: for "col->a->1->>b",
 * *col becomes "col" (a new arena copy) and the path goes to *out (NULL without one).
 * Keys are non-empty, at most REST_PATH_MAX, and only the last arrow may be ->> (a text
 * has no keys).
 */
static int
parse_path(struct arena *a, const char **col, struct rest_path **out, struct rest_err *e)
{
	const char *arrow = strstr(*col, "->"), *p;
	struct rest_path *path;
	size_t cap = 4;

	*out = NULL;
	if (arrow == NULL)
		return 0;
	if (arrow == *col)
		return parse_fail(e, "the JSON path", *col, strlen(*col));
	if ((path = arena_alloc(a, sizeof(*path))) == NULL ||
	    (path->keys = arena_alloc(a, cap * sizeof(*path->keys))) == NULL)
		return parse_fail(e, "the JSON path", *col, strlen(*col));
	path->nkeys = 0;
	path->last_text = 0;
	p = arrow;
	while (*p != '\0') {
		const char *next;
		char *key;
		int text;

		if (p[0] != '-' || p[1] != '>')
			return parse_fail(e, "the JSON path", arrow, strlen(arrow));
		p += 2;
		text = *p == '>';
		p += text;
		if ((next = strstr(p, "->")) == NULL)
			next = p + strlen(p);
		if (next == p || path->last_text || path->nkeys == REST_PATH_MAX)
			return parse_fail(e, "the JSON path", arrow, strlen(arrow));
		if (path->nkeys == cap) {
			const char **k;

			cap *= 2;
			/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
			if ((k = arena_alloc(a, cap * sizeof(*k))) == NULL)
				return parse_fail(e, "the JSON path", arrow, strlen(arrow));
			/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
			memcpy(k, path->keys, path->nkeys * sizeof(*k));
			path->keys = k;
		}
		if ((key = arena_strndup(a, p, (size_t)(next - p))) == NULL)
			return parse_fail(e, "the JSON path", arrow, strlen(arrow));
		path->keys[path->nkeys++] = key;
		path->last_text = text;
		p = next;
	}
	if ((*col = arena_strndup(a, *col, (size_t)(arrow - *col))) == NULL)
		return parse_fail(e, "the JSON path", arrow, strlen(arrow));
	*out = path;
	return 0;
}

/*
 * "[not.]op[(any|all)|(lang)].value" into the leaf c (col already set).  The modifiers:
 * op(any).{a,b} / op(all).{a,b} for eq neq gt gte lt lte like ilike match imatch;
 * fts(lang) (and plfts, phfts, wfts) with a configuration name of letters and '_'.
 */
static int
parse_opval(struct arena *a, const char *s, size_t len, struct rest_cond *c,
    struct rest_err *e)
{
	const char *dot, *paren;
	size_t oplen;
	int op;

	c->kind = REST_C_LEAF;
	if (len >= 4 && !memcmp(s, "not.", 4)) {
		c->negate = 1;
		s += 4;
		len -= 4;
	}
	if ((dot = memchr(s, '.', len)) == NULL)
		return parse_fail(e, "the filter", s, len);
	oplen = (size_t)(dot - s);
	if ((paren = memchr(s, '(', oplen)) != NULL)
		oplen = (size_t)(paren - s);
	for (op = 0; op < REST_OP__MAX; op++)
		if (str_eq(s, oplen, parse_ops[op]))
			break;
	if (op == REST_OP__MAX)
		return parse_fail(e, "the filter operator", s, len);
	c->op = (enum rest_op)op;
	if (paren != NULL) {
		const char *m = paren + 1;
		size_t mlen = (size_t)(dot - m), i;

		if (mlen == 0 || m[mlen - 1] != ')')
			return parse_fail(e, "the filter operator", s, len);
		mlen--;
		if (op >= REST_OP_FTS && op <= REST_OP_WFTS) {
			for (i = 0; i < mlen; i++)
				if (!isalpha((unsigned char)m[i]) && m[i] != '_')
					return parse_fail(e, "the text search language", s, len);
			if (mlen == 0 || mlen > 63 || (c->lang = arena_strndup(a, m, mlen)) == NULL)
				return parse_fail(e, "the text search language", s, len);
		} else if (op <= REST_OP_ILIKE || op == REST_OP_MATCH || op == REST_OP_IMATCH) {
			if (str_eq(m, mlen, "any"))
				c->quant = REST_Q_ANY;
			else if (str_eq(m, mlen, "all"))
				c->quant = REST_Q_ALL;
			else
				return parse_fail(e, "the filter operator (any or all)", s, len);
		} else
			return parse_fail(e, "the filter operator", s, len);
	}
	len -= (size_t)(dot + 1 - s);
	s = dot + 1;
	if (c->op == REST_OP_IN)
		return parse_list(a, s, len, c, '(', e);
	if (c->quant != REST_Q_NONE)
		return parse_list(a, s, len, c, '{', e);
	if (c->op == REST_OP_IS) {
		if (str_eq(s, len, "null"))
			c->is = REST_IS_NULL;
		else if (str_eq(s, len, "not_null"))
			c->is = REST_IS_NOT_NULL;
		else if (str_eq(s, len, "true"))
			c->is = REST_IS_TRUE;
		else if (str_eq(s, len, "false"))
			c->is = REST_IS_FALSE;
		else
			return parse_fail(e, "the is filter", s, len);
		return 0;
	}
	if ((c->val = arena_strndup(a, s, len)) == NULL)
		return parse_fail(e, "the filter", s, len);
	c->vallen = len;
	return 0;
}

static int
cond_add(struct arena *a, struct rest_cond *parent, struct rest_cond *kid)
{
	struct rest_cond **k;

	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	if ((k = arena_alloc(a, (parent->nkids + 1) * sizeof(*k))) == NULL)
		return -1;
	if (parent->nkids)
		/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
		memcpy(k, parent->kids, parent->nkids * sizeof(*k));
	k[parent->nkids++] = kid;
	parent->kids = k;
	return 0;
}

static size_t
cond_count(const struct rest_cond *c)
{
	size_t i, k = c->kind == REST_C_LEAF;

	for (i = 0; i < c->nkids; i++)
		k += cond_count(c->kids[i]);
	return k;
}

/* Finds the end of one element of a logic list: a comma or ')' at depth 0, outside quotes. */
static size_t
parse_elem_end(const char *s, size_t len, size_t i)
{
	int depth = 0, q = 0;

	for (; i < len; i++) {
		char ch = s[i];

		if (q) {
			if (ch == '\\' && i + 1 < len)
				i++;
			else if (ch == '"')
				q = 0;
			continue;
		}
		if (ch == '"')
			q = 1;
		else if (ch == '(' || ch == '{')
			depth++;
		else if (ch == ')' || ch == '}') {
			if (depth == 0)
				return i;
			depth--;
		} else if (ch == ',' && depth == 0)
			return i;
	}
	return i;
}

/* Strips one pair of double quotes around a value inside a logic tree. */
static void
parse_unquote(struct arena *a, struct rest_cond *c)
{
	char *v;
	size_t i, n = 0;

	if (c->val == NULL || c->vallen < 2 || c->val[0] != '"' || c->val[c->vallen - 1] != '"')
		return;
	if ((v = arena_alloc(a, c->vallen)) == NULL)
		return;
	for (i = 1; i + 1 < c->vallen; i++) {
		if (c->val[i] == '\\' && i + 2 < c->vallen)
			i++;
		v[n++] = c->val[i];
	}
	v[n] = '\0';
	c->val = v;
	c->vallen = n;
}

/* "(elem,elem,...)" of a logic tree into the and/or node c. */
static int
parse_logic(struct arena *a, const char *s, size_t len, struct rest_cond *c, int depth,
    struct rest_err *e)
{
	size_t i = 1;

	if (depth > REST_LOGIC_DEPTH) {
		rest_err_set(e, 400, "PGRST100", NULL, "and/or trees are limited to %d levels",
		    REST_LOGIC_DEPTH);
		return -1;
	}
	if (len < 3 || s[0] != '(' || s[len - 1] != ')')
		return parse_fail(e, "the logic tree", s, len);
	while (i < len - 1) {
		size_t end = parse_elem_end(s, len - 1, i), n = end - i;
		const char *el = s + i;
		struct rest_cond *k;
		int neg = 0;

		if (n == 0)
			return parse_fail(e, "the logic tree", s, len);
		if ((k = arena_alloc(a, sizeof(*k))) == NULL)
			return parse_fail(e, "the logic tree", s, len);
		memset(k, 0, sizeof(*k));
		if (n >= 4 && !memcmp(el, "not.", 4)) {
			neg = 1;
			el += 4;
			n -= 4;
		}
		if ((n > 3 && !memcmp(el, "or(", 3)) || (n > 4 && !memcmp(el, "and(", 4))) {
			size_t skip = el[0] == 'o' ? 2 : 3;

			k->kind = el[0] == 'o' ? REST_C_OR : REST_C_AND;
			k->negate = neg;
			if (parse_logic(a, el + skip, n - skip, k, depth + 1, e) < 0)
				return -1;
		} else {
			/* col.[not.]op.value: the column runs to the first dot. */
			const char *dot = memchr(el, '.', n);

			if (neg || dot == NULL || dot == el)
				return parse_fail(e, "the logic tree", s, len);
			if ((k->col = arena_strndup(a, el, (size_t)(dot - el))) == NULL ||
			    parse_path(a, &k->col, &k->path, e) < 0 ||
			    parse_opval(a, dot + 1, n - (size_t)(dot + 1 - el), k, e) < 0)
				return -1;
			parse_unquote(a, k);
		}
		if (cond_add(a, c, k) < 0)
			return parse_fail(e, "the logic tree", s, len);
		i = end;
		if (i < len - 1) {
			if (s[i] != ',')
				return parse_fail(e, "the logic tree", s, len);
			i++;
			if (i == len - 1)
				return parse_fail(e, "the logic tree", s, len);
		}
	}
	return 0;
}

static int
parse_order(struct arena *a, const char *s, size_t len, struct rest_node *n,
    struct rest_err *e)
{
	size_t i = 0, cap = 0;

	n->norder = 0;
	if (len == 0)
		return parse_fail(e, "the order parameter", s, len);
	while (i < len) {
		const char *comma = memchr(s + i, ',', len - i);
		size_t end = comma ? (size_t)(comma - s) : len, j = i;
		struct rest_order *o;
		size_t k;

		if (n->norder == cap) {
			struct rest_order *p;

			cap = cap ? cap * 2 : 4;
			if (cap > 64 || (p = arena_alloc(a, cap * sizeof(*p))) == NULL)
				return parse_fail(e, "the order parameter", s, len);
			if (n->norder)
				memcpy(p, n->order, n->norder * sizeof(*p));
			n->order = p;
		}
		o = &n->order[n->norder++];
		memset(o, 0, sizeof(*o));
		while (j < end && s[j] != '.')
			j++;
		if (j == i || (o->col = arena_strndup(a, s + i, j - i)) == NULL ||
		    parse_path(a, &o->col, &o->path, e) < 0)
			return parse_fail(e, "the order parameter", s, len);
		while (j < end) {
			j++;
			k = j;
			while (j < end && s[j] != '.')
				j++;
			if (str_eq(s + k, j - k, "asc"))
				o->desc = 0;
			else if (str_eq(s + k, j - k, "desc"))
				o->desc = 1;
			else if (str_eq(s + k, j - k, "nullsfirst"))
				o->nulls = 1;
			else if (str_eq(s + k, j - k, "nullslast"))
				o->nulls = 2;
			else
				return parse_fail(e, "the order parameter", s, len);
		}
		i = end + (comma != NULL);
		if (comma != NULL && i == len)
			return parse_fail(e, "the order parameter", s, len);
	}
	return 0;
}

/* The embed of n whose alias (or name) is name[0..len), or NULL. */
static struct rest_node *
parse_find_embed(struct rest_node *n, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < n->nitems; i++)
		if (n->items[i].kind == REST_I_EMBED &&
		    (str_eq(name, len, n->items[i].embed->alias) ||
		    str_eq(name, len, n->items[i].embed->name)))
			return n->items[i].embed;
	return NULL;
}

/* Walks a parameter's key a.b.c from root: every part but the last names an embed of
 * the select.  Returns the node the last part is for, *key and *keylen moved to that part;
 * NULL (e set) for a part that names no embed. */
static struct rest_node *
parse_key_node(struct rest_node *root, const char **key, size_t *keylen, struct rest_err *e)
{
	struct rest_node *n = root;

	for (;;) {
		const char *dot = memchr(*key, '.', *keylen);
		size_t n1;

		if (dot == NULL)
			break;
		n1 = (size_t)(dot - *key);
		/* "not.or" / "not.and" are keys of their own. */
		if (str_eq(*key, n1, "not") &&
		    (str_eq(dot + 1, *keylen - n1 - 1, "or") ||
		    str_eq(dot + 1, *keylen - n1 - 1, "and")))
			break;
		if ((n = parse_find_embed(n, *key, n1)) == NULL) {
			char d[160];

			(void)snprintf(d, sizeof(d), "no embedded resource \"%.*s\" in select",
			    n1 > 100 ? 100 : (int)n1, *key);
			rest_err_set(e, 400, "PGRST108", d,
			    "'%.*s' is not an embedded resource in this request",
			    n1 > 100 ? 100 : (int)n1, *key);
			return NULL;
		}
		*key = dot + 1;
		*keylen -= n1 + 1;
	}
	return n;
}

int
rest_parse_param(struct arena *a, struct rest_node *root, const char *key, size_t keylen,
    const char *val, size_t vallen, struct rest_err *e)
{
	struct rest_node *n;
	const char *last;
	size_t lastlen;
	struct rest_cond *c;
	int neg = 0;

	if ((n = parse_key_node(root, &key, &keylen, e)) == NULL)
		return -1;
	last = key;
	lastlen = keylen;
	if (lastlen == 0)
		return parse_fail(e, "the parameter name", key, keylen);
	if (str_eq(last, lastlen, "order"))
		return parse_order(a, val, vallen, n, e);
	if (str_eq(last, lastlen, "limit")) {
		if (str_to_int(val, vallen, 0, INT32_MAX, &n->limit) < 0)
			return parse_fail(e, "the limit parameter", val, vallen);
		return 0;
	}
	if (str_eq(last, lastlen, "offset")) {
		if (str_to_int(val, vallen, 0, INT32_MAX, &n->offset) < 0)
			return parse_fail(e, "the offset parameter", val, vallen);
		return 0;
	}
	if (cond_count(root->where) >= REST_FILTERS_MAX) {
		rest_err_set(e, 400, "PGRST100", NULL, "at most %d filters", REST_FILTERS_MAX);
		return -1;
	}
	if ((c = arena_alloc(a, sizeof(*c))) == NULL)
		return parse_fail(e, "the filter", val, vallen);
	memset(c, 0, sizeof(*c));
	if (str_eq(last, lastlen, "not.or") || str_eq(last, lastlen, "not.and")) {
		neg = 1;
		last += 4;
		lastlen -= 4;
	}
	if (str_eq(last, lastlen, "or") || str_eq(last, lastlen, "and")) {
		c->kind = last[0] == 'o' ? REST_C_OR : REST_C_AND;
		c->negate = neg;
		if (parse_logic(a, val, vallen, c, 1, e) < 0)
			return -1;
	} else {
		if ((c->col = arena_strndup(a, last, lastlen)) == NULL ||
		    parse_path(a, &c->col, &c->path, e) < 0 ||
		    parse_opval(a, val, vallen, c, e) < 0)
			return -1;
	}
	if (cond_count(root->where) + cond_count(c) > REST_FILTERS_MAX) {
		rest_err_set(e, 400, "PGRST100", NULL, "at most %d filters", REST_FILTERS_MAX);
		return -1;
	}
	if (cond_add(a, n->where, c) < 0)
		return parse_fail(e, "the filter", val, vallen);
	return 0;
}

int
rest_parse_columns(struct arena *a, const char *s, size_t len, const char ***cols,
    size_t *ncols, struct rest_err *e)
{
	struct cur c = { s, len, 0 };
	size_t cap = 0;

	*ncols = 0;
	*cols = NULL;
	for (;;) {
		char *name;

		if ((name = cur_name(a, &c, ",")) == NULL)
			return parse_fail(e, "the columns parameter", s, len);
		if (*ncols == cap) {
			const char **p;

			cap = cap ? cap * 2 : 16;
			if (cap > 4096 || (p = arena_alloc(a, cap * sizeof(*p))) == NULL)
				return parse_fail(e, "the columns parameter", s, len);
			if (*ncols)
				memcpy(p, *cols, *ncols * sizeof(*p));
			*cols = p;
		}
		(*cols)[(*ncols)++] = name;
		if (c.i == len)
			return 0;
		if (!cur_is(&c, ','))
			return parse_fail(e, "the columns parameter", s, len);
		c.i++;
	}
}

char *
rest_like_pattern(struct arena *a, const char *v, size_t len)
{
	char *p = arena_strndup(a, v, len);
	size_t i;

	if (p == NULL)
		return NULL;
	for (i = 0; i < len; i++)
		if (p[i] == '*')
			p[i] = '%';
	return p;
}
