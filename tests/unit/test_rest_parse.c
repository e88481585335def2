/*
 * test_rest_parse: the rest endpoint's URL grammar (apps/rest/parse.c), table-driven:
 * select= and query parameters in, the tree's shape or the error's status and code out.
 *
 * The tree is written as text (tree_text()):
 *   (items) where=COND order=... limit=N offset=N
 * items: "*", col, alias:col, alias:rel!hint!inner(items ...) with an embed's own where,
 * order, limit and offset inside its parentheses, ...rel(items) for a spread; a computed
 * item as alias:col[->k][->>k]::cast.agg()::cast (its alias always shown); COND:
 * col.op.value, col.in(a|b), col.op(any|all){a|b}, col.fts(lang).value, col.is.null,
 * and(...)/or(...), each with "not." when negated and the column's JSON path after it.
 */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "buf.h"
#include "rest/rest.h"
#include "../lib/harness.h"

static const char *const op_names[] = { "eq", "neq", "gt", "gte", "lt", "lte", "like",
	"ilike", "in", "is", "isdistinct", "match", "imatch", "fts", "plfts", "phfts", "wfts",
	"cs", "cd", "ov", "sl", "sr", "nxl", "nxr", "adj" };
static const char *const agg_names[] = { "", "count", "sum", "avg", "min", "max" };

static void
path_text(struct buf *b, const struct rest_path *p)
{
	size_t i;

	for (i = 0; p != NULL && i < p->nkeys; i++)
		buf_printf(b, "%s%s", i + 1 == p->nkeys && p->last_text ? "->>" : "->",
		    p->keys[i]);
}
static const char *const is_names[] = { "null", "not_null", "true", "false" };

static void
cond_text(struct buf *b, const struct rest_cond *c)
{
	size_t i;

	if (c->negate)
		buf_puts(b, "not.");
	if (c->kind != REST_C_LEAF) {
		buf_puts(b, c->kind == REST_C_AND ? "and(" : "or(");
		for (i = 0; i < c->nkids; i++) {
			if (i)
				buf_putc(b, ',');
			cond_text(b, c->kids[i]);
		}
		buf_putc(b, ')');
		return;
	}
	buf_puts(b, c->col);
	path_text(b, c->path);
	buf_printf(b, ".%s", op_names[c->op]);
	if (c->lang != NULL)
		buf_printf(b, "(%s)", c->lang);
	if (c->quant != REST_Q_NONE) {
		buf_puts(b, c->quant == REST_Q_ANY ? "(any){" : "(all){");
		for (i = 0; i < c->nlist; i++) {
			if (i)
				buf_putc(b, '|');
			buf_append(b, c->list[i], c->listlen[i]);
		}
		buf_putc(b, '}');
	} else if (c->op == REST_OP_IN) {
		buf_putc(b, '(');
		for (i = 0; i < c->nlist; i++) {
			if (i)
				buf_putc(b, '|');
			buf_append(b, c->list[i], c->listlen[i]);
		}
		buf_putc(b, ')');
	} else if (c->op == REST_OP_IS)
		buf_printf(b, ".%s", is_names[c->is]);
	else {
		buf_putc(b, '.');
		buf_append(b, c->val, c->vallen);
	}
}

static void
tree_text(struct buf *b, const struct rest_node *n)
{
	size_t i;

	buf_putc(b, '(');
	for (i = 0; i < n->nitems; i++) {
		const struct rest_item *it = &n->items[i];

		if (i)
			buf_putc(b, ',');
		if (it->kind == REST_I_STAR) {
			buf_putc(b, '*');
			continue;
		}
		if (it->kind == REST_I_COL) {
			if (it->alias != NULL)
				buf_printf(b, "%s:", it->alias);
			buf_puts(b, it->name);
			continue;
		}
		if (it->kind == REST_I_EXPR) {
			buf_printf(b, "%s:%s", it->alias, it->name ? it->name : "");
			path_text(b, it->path);
			if (it->cast != NULL)
				buf_printf(b, "::%s", it->cast);
			if (it->agg != REST_AGG_NONE)
				buf_printf(b, ".%s()", agg_names[it->agg]);
			if (it->agg_cast != NULL)
				buf_printf(b, "::%s", it->agg_cast);
			continue;
		}
		if (it->embed->spread)
			buf_puts(b, "...");
		if (it->embed->alias != NULL && strcmp(it->embed->alias, it->embed->name) != 0)
			buf_printf(b, "%s:", it->embed->alias);
		buf_puts(b, it->embed->name);
		if (it->embed->hint != NULL)
			buf_printf(b, "!%s", it->embed->hint);
		if (it->embed->inner)
			buf_puts(b, "!inner");
		tree_text(b, it->embed);
	}
	if (n->where->nkids > 0) {
		buf_puts(b, " where=");
		cond_text(b, n->where);
	}
	for (i = 0; i < n->norder; i++) {
		buf_printf(b, "%s%s", i ? "," : " order=", n->order[i].col);
		path_text(b, n->order[i].path);
		buf_printf(b, ".%s%s", n->order[i].desc ? "desc" : "asc",
		    n->order[i].nulls == 1 ? ".nullsfirst" : n->order[i].nulls == 2 ?
		    ".nullslast" : "");
	}
	if (n->limit >= 0)
		buf_printf(b, " limit=%lld", (long long)n->limit);
	if (n->offset > 0)
		buf_printf(b, " offset=%lld", (long long)n->offset);
	buf_putc(b, ')');
}

struct parse_case {
	const char *select;		/* NULL: no select= */
	const char *params[6];		/* "key=value", NULL-terminated */
	const char *want;		/* the tree, or NULL for an error */
	int status;			/* the error's */
	const char *code;
};

static const struct parse_case parse_cases[] = {
	/* select= */
	{ NULL, { NULL }, "()", 0, NULL },
	{ "*", { NULL }, "(*)", 0, NULL },
	{ "artist_id,name", { NULL }, "(artist_id,name)", 0, NULL },
	{ "id:artist_id,name", { NULL }, "(id:artist_id,name)", 0, NULL },
	{ "title,artist(name)", { NULL }, "(title,artist(name))", 0, NULL },
	{ "*,track(*,genre(*))", { NULL }, "(*,track(*,genre(*)))", 0, NULL },
	{ "album_id,artist!artist_id(name)", { NULL }, "(album_id,artist!artist_id(name))", 0,
	    NULL },
	{ "album_id,artist!inner(name)", { NULL }, "(album_id,artist!inner(name))", 0, NULL },
	{ "album_id,singer:artist(name)", { NULL }, "(album_id,singer:artist(name))", 0, NULL },
	{ "title,artist(", { NULL }, NULL, 400, "PGRST100" },
	{ "title,,name", { NULL }, NULL, 400, "PGRST100" },
	{ "a(b(c(d(e(f(g(h(i(j(*))))))))))", { NULL }, NULL, 400, "PGRST100" },
	/* Filters. */
	{ NULL, { "artist_id=eq.3", NULL }, "( where=and(artist_id.eq.3))", 0, NULL },
	{ NULL, { "name=not.like.*Rock*", NULL }, "( where=and(not.name.like.*Rock*))", 0,
	    NULL },
	{ NULL, { "name=ilike.a*", "artist_id=gte.2", NULL },
	    "( where=and(name.ilike.a*,artist_id.gte.2))", 0, NULL },
	{ NULL, { "artist_id=in.(1,\"a,b\",3)", NULL },
	    "( where=and(artist_id.in(1|a,b|3)))", 0, NULL },
	{ NULL, { "composer=is.null", "ok=is.true", NULL },
	    "( where=and(composer.is.null,ok.is.true))", 0, NULL },
	{ NULL, { "artist_id=zz.1", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "artist_id=eq", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "artist_id=in.(1,2", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "composer=is.maybe", NULL }, NULL, 400, "PGRST100" },
	/* Logic trees. */
	{ NULL, { "or=(a.eq.1,and(b.lt.2,c.gt.3))", NULL },
	    "( where=and(or(a.eq.1,and(b.lt.2,c.gt.3))))", 0, NULL },
	{ NULL, { "not.or=(a.eq.1,b.eq.2)", NULL }, "( where=and(not.or(a.eq.1,b.eq.2)))", 0,
	    NULL },
	{ NULL, { "or=(a.eq.1", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "or=(and(or(and(or(and(or(and(or(a.eq.1)))))))))", NULL }, NULL, 400,
	    "PGRST100" },
	/* Order and page. */
	{ NULL, { "order=name.desc.nullsfirst,artist_id", NULL },
	    "( order=name.desc.nullsfirst,artist_id.asc)", 0, NULL },
	{ NULL, { "limit=10", "offset=5", NULL }, "( limit=10 offset=5)", 0, NULL },
	{ NULL, { "order=name.sideways", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "limit=-1", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "offset=x", NULL }, NULL, 400, "PGRST100" },
	/* An embed's own parameters, by name or alias. */
	{ "album_id,track(track_id)", { "track.limit=2", "track.order=track_id.desc",
	    "track.name=eq.x", NULL },
	    "(album_id,track(track_id where=and(name.eq.x) order=track_id.desc limit=2))", 0,
	    NULL },
	{ "t:track(track_id)", { "t.offset=1", NULL }, "(t:track(track_id offset=1))", 0, NULL },
	{ "album_id", { "track.limit=2", NULL }, NULL, 400, "PGRST108" },
	/* Aggregates, casts, JSON paths. */
	{ "count()", { NULL }, "(count:.count())", 0, NULL },
	{ "n:count()::text,genre_id", { NULL }, "(n:.count()::text,genre_id)", 0, NULL },
	{ "unit_price.sum(),total:milliseconds::numeric.avg()::int", { NULL },
	    "(sum:unit_price.sum(),total:milliseconds::numeric.avg()::int)", 0, NULL },
	{ "a:track_id::text", { NULL }, "(a:track_id::text)", 0, NULL },
	{ "track_id::text", { NULL }, "(track_id:track_id::text)", 0, NULL },
	{ "data->a->>b,x:data->0,data->>n::int", { NULL },
	    "(b:data->a->>b,x:data->0,n:data->>n::int)", 0, NULL },
	{ "count(x)", { NULL }, "(count(x))", 0, NULL },
	{ "unit_price.median()", { NULL }, NULL, 400, "PGRST100" },
	{ "unit_price.sum", { NULL }, NULL, 400, "PGRST100" },
	{ "unit_price.sum(1)", { NULL }, NULL, 400, "PGRST100" },
	{ "unit_price::", { NULL }, NULL, 400, "PGRST100" },
	{ "unit_price::text;drop", { NULL }, NULL, 400, "PGRST100" },
	{ "unit_price:::text", { NULL }, NULL, 400, "PGRST100" },
	{ "data->", { NULL }, NULL, 400, "PGRST100" },
	{ "data->>a->b", { NULL }, NULL, 400, "PGRST100" },
	{ "->a", { NULL }, NULL, 400, "PGRST100" },
	{ "data->a->b->c->d->e->f->g->h->i->j->k->l->m->n->o->p->q", { NULL }, NULL, 400,
	    "PGRST100" },
	/* Spreads. */
	{ "title,...artist(name)", { NULL }, "(title,...artist(name))", 0, NULL },
	{ "...artist!inner(*)", { "artist.name=eq.x", NULL },
	    "(...artist!inner(* where=and(name.eq.x)))", 0, NULL },
	{ "...title", { NULL }, NULL, 400, "PGRST100" },
	{ "a:...artist(name)", { NULL }, NULL, 400, "PGRST100" },
	{ "....artist(name)", { NULL }, NULL, 400, "PGRST100" },
	/* New operators and modifiers. */
	{ NULL, { "a=isdistinct.1", "b=not.match.^x", "c=imatch.y", NULL },
	    "( where=and(a.isdistinct.1,not.b.match.^x,c.imatch.y))", 0, NULL },
	{ NULL, { "t=fts.cat", "t=plfts(english).fat%20cat", "t=not.phfts.a", "t=wfts(simple).b",
	    NULL }, "( where=and(t.fts.cat,t.plfts(english).fat%20cat,not.t.phfts.a,"
	    "t.wfts(simple).b))", 0, NULL },
	{ NULL, { "t=cs.{a,b}", "t=cd.{1}", "r=ov.[1,2)", "r=sl.(1,2]", NULL },
	    "( where=and(t.cs.{a,b},t.cd.{1},r.ov.[1,2),r.sl.(1,2]))", 0, NULL },
	{ NULL, { "r=sr.[1,2)", "r=nxl.[1,2)", "r=nxr.[1,2)", "r=not.adj.[1,2)", NULL },
	    "( where=and(r.sr.[1,2),r.nxl.[1,2),r.nxr.[1,2),not.r.adj.[1,2)))", 0, NULL },
	{ NULL, { "a=eq(any).{1,\"2,3\"}", "b=not.like(all).{x*,*y}", NULL },
	    "( where=and(a.eq(any){1|2,3},not.b.like(all){x*|*y}))", 0, NULL },
	{ NULL, { "a=gt(any).{}", NULL }, "( where=and(a.gt(any){}))", 0, NULL },
	{ NULL, { "or=(a.eq(any).{1,2},b.cs.{x,y})", NULL },
	    "( where=and(or(a.eq(any){1|2},b.cs.{x,y})))", 0, NULL },
	{ NULL, { "data->a->>b=eq.x", "or=(data->>n.gt.1,data->k.is.null)", NULL },
	    "( where=and(data->a->>b.eq.x,or(data->>n.gt.1,data->k.is.null)))", 0, NULL },
	{ NULL, { "order=data->a.desc,data->>b", NULL }, "( order=data->a.desc,data->>b.asc)", 0,
	    NULL },
	{ NULL, { "a=eq(some).{1}", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "a=in(any).{1}", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "a=cs(any).{1}", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "a=eq(any).(1,2)", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "a=eq(any).{1,2", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "a=eq(any.{1}", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "a=fts().x", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "a=fts(eng'lish).x", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "a=eq(english).x", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "data->=eq.x", NULL }, NULL, 400, "PGRST100" },
	{ NULL, { "order=data->.desc", NULL }, NULL, 400, "PGRST100" },
};

static void
test_parse_table(void)
{
	struct arena *a = arena_new(1 << 20);
	size_t i, j;

	CHECK(a != NULL);
	for (i = 0; a != NULL && i < sizeof(parse_cases) / sizeof(parse_cases[0]); i++) {
		const struct parse_case *pc = &parse_cases[i];
		struct rest_node *root = rest_node_new(a, NULL);
		struct rest_err e;
		struct buf b;
		int rc = 0;

		memset(&e, 0, sizeof(e));
		CHECK(root != NULL);
		if (root == NULL)
			break;
		if (pc->select != NULL)
			rc = rest_parse_select(a, pc->select, strlen(pc->select), root, &e);
		for (j = 0; rc == 0 && pc->params[j] != NULL; j++) {
			const char *eq = strchr(pc->params[j], '=');

			rc = rest_parse_param(a, root, pc->params[j],
			    (size_t)(eq - pc->params[j]), eq + 1, strlen(eq + 1), &e);
		}
		if (pc->want == NULL) {
			if (rc == 0 || e.status != pc->status || e.code == NULL ||
			    strcmp(e.code, pc->code) != 0)
				harness_fail(__FILE__, __LINE__, "case %zu (%s %s): rc %d, %d %s, "
				    "want %d %s", i, pc->select ? pc->select : "-",
				    pc->params[0] ? pc->params[0] : "-", rc, e.status,
				    e.code ? e.code : "(none)", pc->status, pc->code);
			arena_reset(a);
			continue;
		}
		buf_init(&b, 1 << 16);
		if (rc == 0)
			tree_text(&b, root);
		if (rc != 0 || buf_failed(&b) || strcmp(b.data, pc->want) != 0)
			harness_fail(__FILE__, __LINE__, "case %zu: rc %d (%s), tree %s, want %s",
			    i, rc, e.code ? e.code : "", rc == 0 && b.data ? b.data : "-",
			    pc->want);
		buf_free(&b);
		arena_reset(a);
	}
	arena_free(a);
}

static void
test_parse_columns(void)
{
	static const struct {
		const char *in;
		int ok;
		size_t n;
		const char *first, *last;
	} cases[] = {
		{ "a", 1, 1, "a", "a" },
		{ "artist_id,name,title", 1, 3, "artist_id", "title" },
		{ "", 0, 0, NULL, NULL },
		{ "a,", 0, 0, NULL, NULL },
		{ ",a", 0, 0, NULL, NULL },
		{ "a b", 0, 0, NULL, NULL },
	};
	struct arena *a = arena_new(1 << 16);
	size_t i;

	for (i = 0; a != NULL && i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char **cols = NULL;
		size_t n = 0;
		struct rest_err e;
		int rc = rest_parse_columns(a, cases[i].in, strlen(cases[i].in), &cols, &n, &e);

		CHECK_INT(rc == 0, cases[i].ok);
		if (rc == 0 && cases[i].ok) {
			CHECK_INT(n, cases[i].n);
			CHECK_STR(cols[0], cases[i].first);
			CHECK_STR(cols[n - 1], cases[i].last);
		} else if (rc < 0) {
			CHECK_INT(e.status, 400);
			CHECK_STR(e.code, "PGRST100");
		}
	}
	arena_free(a);
}

static void
test_like_pattern(void)
{
	struct arena *a = arena_new(1 << 16);

	CHECK_STR(rest_like_pattern(a, "*Rock*", 6), "%Rock%");
	CHECK_STR(rest_like_pattern(a, "a_b", 3), "a_b");
	CHECK_STR(rest_like_pattern(a, "**", 1), "%");
	arena_free(a);
}

int
main(void)
{
	RUN(test_parse_table);
	RUN(test_parse_columns);
	RUN(test_like_pattern);
	return harness_done();
}
