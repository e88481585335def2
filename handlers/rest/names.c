/*
 * names.c: the names of a parsed tree resolved against the schema: each relation's table,
 * each embed's relationship to its parent (a foreign key either way, or a junction table
 * for many-to-many, chosen by the !hint when there are several), and every column of
 * select=, order= and the filters.  More than REST_MEMBERS_MAX keys in one object (a '*'
 * counts the table's columns) is a 400 PGRST100.  A JSON path needs a json column, a cast
 * one of the dialect's type names, a spread a to-one relationship (PGRST119 otherwise),
 * and aggregates do not mix with embeds in one object.  An unknown name is a 400 (42703 for a column,
 * PGRST200 for a relationship, PGRST201 when it is ambiguous); past this point every
 * identifier the generators write is one the database has.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "rest.h"

static const struct rest_table *
tab(const struct rest_gen *g, int t)
{
	return &g->sc->tables[t];
}

static int
no_column(struct rest_gen *g, int t, const char *col)
{
	char m[200];

	(void)snprintf(m, sizeof(m), "column %s.%s does not exist", tab(g, t)->name, col);
	rest_err_set(g->e, 400, "42703", NULL, "%s", m);
	return -1;
}

/* A JSON path needs a json or jsonb column (PostgreSQL has no -> on other types). */
static int
path_fits(struct rest_gen *g, int t, int c, const struct rest_path *path)
{
	if (path == NULL || tab(g, t)->cols[c].kind == REST_K_JSON)
		return 0;
	rest_err_set(g->e, 400, "42883", NULL, "column %.80s.%.80s is not json: it has no "
	    "JSON path", tab(g, t)->name, tab(g, t)->cols[c].name);
	return -1;
}

static int
resolve_cond(struct rest_gen *g, int t, struct rest_cond *c)
{
	size_t i;

	if (c->kind == REST_C_LEAF) {
		if ((c->colidx = rest_schema_col(tab(g, t), c->col)) < 0)
			return no_column(g, t, c->col);
		if (c->path != NULL && c->op == REST_OP_IS &&
		    (c->is == REST_IS_TRUE || c->is == REST_IS_FALSE)) {
			rest_err_set(g->e, 400, "42804", NULL, "is.true and is.false need a "
			    "boolean, not a JSON path");
			return -1;
		}
		return path_fits(g, t, c->colidx, c->path);
	}
	for (i = 0; i < c->nkids; i++)
		if (resolve_cond(g, t, c->kids[i]) < 0)
			return -1;
	return 0;
}

/* Does the hint name this key or one of its columns (in table t)? */
static int
hint_fits(const struct rest_gen *g, const struct rest_fk *fk, int t, const char *hint)
{
	if (hint == NULL)
		return 1;
	if (strcmp(fk->name, hint) == 0)
		return 1;
	return fk->ncols == 1 && strcmp(tab(g, t)->cols[fk->from_cols[0]].name, hint) == 0;
}

/* Finds the relationship from table p to the embed n (by table name). */
static int
resolve_rel(struct rest_gen *g, int p, struct rest_node *n)
{
	int r = rest_schema_table(g->sc, n->name), i, j, found = 0;
	char d[200];

	if (r < 0)
		goto none;
	n->table = r;
	for (i = 0; i < g->sc->nfks; i++) {
		const struct rest_fk *fk = &g->sc->fks[i];

		if (fk->from == p && fk->to == r && hint_fits(g, fk, p, n->hint)) {
			if (found++ == 0 || (p == r && n->fk_forward == 0)) {
				n->fk = i;
				n->fk_forward = 1;
			}
		}
		if (fk->from == r && fk->to == p && hint_fits(g, fk, r, n->hint) &&
		    !(p == r && n->hint != NULL)) {
			if (found++ == 0) {
				n->fk = i;
				n->fk_forward = 0;
			}
		}
	}
	if (found == 0) {
		/* Many-to-many: a junction with a key to each side. */
		for (i = 0; i < g->sc->nfks; i++) {
			const struct rest_fk *a = &g->sc->fks[i];

			if (a->to != p || a->from == p || a->from == r)
				continue;
			if (n->hint != NULL && strcmp(tab(g, a->from)->name, n->hint) != 0)
				continue;
			for (j = 0; j < g->sc->nfks; j++) {
				const struct rest_fk *b = &g->sc->fks[j];

				if (j == i || b->from != a->from || b->to != r)
					continue;
				if (found++ == 0) {
					n->fk = i;
					n->fk2 = j;
					n->junction = a->from;
					n->fk_forward = 0;
				}
			}
		}
	}
	if (found == 1)
		return 0;
	if (found > 1) {
		(void)snprintf(d, sizeof(d), "more than one relationship was found for '%s' and '%s'",
		    tab(g, p)->name, n->name);
		rest_err_set(g->e, 300, "PGRST201", d,
		    "Could not embed because more than one relationship was found for '%s' "
		    "and '%s'", tab(g, p)->name, n->name);
		g->e->hint = "Try changing the embedded resource to one of the relationship "
		    "names, e.g. rel!fk_name(...)";
		return -1;
	}
none:
	snprintf(d, sizeof(d), "searched for a foreign key relationship between '%s' and '%s'",
	    tab(g, p)->name, n->name);
	rest_err_set(g->e, 400, "PGRST200", d,
	    "Could not find a relationship between '%s' and '%s' in the schema cache",
	    tab(g, p)->name, n->name);
	return -1;
}

/* A ::type of select= must be one of the known casts, and one this back end has. */
static int
cast_fits(struct rest_gen *g, const char *cast)
{
	enum rest_kind k;

	if (cast == NULL || g->d->cast_type(cast, &k) != NULL)
		return 0;
	if (rest_cast_known(cast))
		rest_err_set(g->e, 400, "PGRST100", NULL, "cannot cast to type \"%.60s\" on "
		    "SQLite", cast);
	else
		rest_err_set(g->e, 400, "PGRST100", NULL, "cannot cast to type \"%.60s\"", cast);
	g->e->hint = "casts: text, varchar, int, int2, int4, int8, smallint, integer, bigint, "
	    "numeric, decimal, real, float, float4, float8; on PostgreSQL also boolean, date, "
	    "timestamp, timestamptz, json, jsonb, uuid";
	return -1;
}

static const char *const agg_names[] = { "", "count", "sum", "avg", "min", "max" };

/*
 * An aggregate's argument must be one PostgreSQL has the function for (the same answer
 * on SQLite, which would take anything): sum() and avg() of numbers, min() and max() of
 * anything but booleans and JSON.  The argument's kind: its input cast's, else its JSON
 * path's (text for ->>), else its column's.
 */
static int
agg_fits(struct rest_gen *g, const struct rest_col *c, const struct rest_item *it)
{
	enum rest_kind k = c->kind;
	int ok;

	if (it->path != NULL)
		k = it->path->last_text ? REST_K_TEXT : REST_K_JSON;
	if (it->cast != NULL)
		(void)g->d->cast_type(it->cast, &k);
	if (it->agg == REST_AGG_SUM || it->agg == REST_AGG_AVG)
		ok = k == REST_K_INT || k == REST_K_NUM;
	else if (it->agg == REST_AGG_MIN || it->agg == REST_AGG_MAX)
		ok = k != REST_K_BOOL && k != REST_K_JSON;
	else
		ok = 1;
	if (ok)
		return 0;
	rest_err_set(g->e, 400, "42883", NULL, "function %s() does not take %s values",
	    agg_names[it->agg], k == REST_K_BOOL ? "boolean" : k == REST_K_JSON ? "json" :
	    k == REST_K_TEXT ? "text" : "these");
	g->e->hint = "cast the column first, e.g. col::numeric.sum()";
	return -1;
}

/* Whether a declared type holds text (not an array of it). */
static int
type_textual(const char *type)
{
	size_t n = type != NULL ? strlen(type) : 0, i;

	if (n == 0 || type[n - 1] == ']')
		return 0;
	for (i = 0; i < n; i++)
		if (strncasecmp(type + i, "char", 4) == 0 || strncasecmp(type + i, "text", 4) == 0 ||
		    strncasecmp(type + i, "clob", 4) == 0)
			return 1;
	return 0;
}

/*
 * Whether PostgreSQL casts a value of kind src (textual: a text) to the type name dst
 * (else 42846 would fail the statement): text to anything and anything to text; numbers
 * to numbers; integer (is_int4) and boolean to each other; timestamps and dates to each
 * other; jsonb (json: only to json and jsonb) to json, numbers and booleans.  0, or -1
 * with g->e set (400 42846).
 */
static int
cast_from(struct rest_gen *g, enum rest_kind src, int textual, int is_json, int is_int4,
    const char *dst)
{
	enum rest_kind k;
	int ok;

	if (dst == NULL || g->d->cast_type(dst, &k) == NULL)
		return 0;
	if (textual || (k == REST_K_TEXT && strcmp(dst, "uuid") != 0))
		return 0;
	switch (src) {
	case REST_K_INT:
	case REST_K_NUM:
		ok = k == REST_K_INT || k == REST_K_NUM || (is_int4 && k == REST_K_BOOL);
		break;
	case REST_K_TS:
	case REST_K_DATE:
		ok = k == REST_K_TS || k == REST_K_DATE;
		break;
	case REST_K_BOOL:
		ok = k == REST_K_BOOL || !strcmp(dst, "int") || !strcmp(dst, "int4") ||
		    !strcmp(dst, "integer");
		break;
	case REST_K_JSON:
		ok = k == REST_K_JSON || (!is_json && (k == REST_K_INT || k == REST_K_NUM ||
		    k == REST_K_BOOL));
		break;
	default:
		ok = 0;
	}
	if (ok)
		return 0;
	rest_err_set(g->e, 400, "42846", NULL, "cannot cast this value to type %.60s", dst);
	g->e->hint = "text casts to any type and any type to text; numbers to numbers, "
	    "timestamps to dates, jsonb to numbers and booleans";
	return -1;
}

/* A computed item: its column, JSON path, casts and aggregate. */
static int
resolve_expr(struct rest_gen *g, int table, const struct rest_item *it)
{
	const struct rest_col *col;
	enum rest_kind k = REST_K_INT;
	int c, textual = 0, is_json = 0, is_int4 = 0;

	if (cast_fits(g, it->cast) < 0 || cast_fits(g, it->agg_cast) < 0)
		return -1;
	if (it->name != NULL) {
		if ((c = rest_schema_col(tab(g, table), it->name)) < 0)
			return no_column(g, table, it->name);
		if (path_fits(g, table, c, it->path) < 0)
			return -1;
		col = &tab(g, table)->cols[c];
		k = col->kind;
		textual = type_textual(col->type);
		is_json = col->type != NULL && strcasecmp(col->type, "json") == 0;
		is_int4 = col->type != NULL && (strcasecmp(col->type, "integer") == 0 ||
		    strcasecmp(col->type, "int") == 0);
		if (it->path != NULL) {
			k = it->path->last_text ? REST_K_TEXT : REST_K_JSON;
			textual = it->path->last_text;
			is_json = is_int4 = 0;
		}
		if (cast_from(g, k, textual, is_json, is_int4, it->cast) < 0 ||
		    agg_fits(g, col, it) < 0)
			return -1;
		if (it->cast != NULL) {
			(void)g->d->cast_type(it->cast, &k);
			textual = k == REST_K_TEXT;
			is_json = strcmp(it->cast, "json") == 0;
			is_int4 = !strcmp(it->cast, "int") || !strcmp(it->cast, "int4") ||
			    !strcmp(it->cast, "integer");
		}
	}
	/* What the aggregate gives, for the cast after it (sum() of an integer is bigint). */
	if (it->agg == REST_AGG_COUNT || it->agg == REST_AGG_SUM)
		is_int4 = 0;
	if (it->agg == REST_AGG_COUNT)
		k = REST_K_INT, textual = 0;
	else if (it->agg == REST_AGG_AVG || (it->agg == REST_AGG_SUM && k != REST_K_INT))
		k = REST_K_NUM, textual = 0;
	return cast_from(g, k, textual, is_json, is_int4, it->agg_cast);
}

/* Whether column c is one the aggregating node n groups by (select.c's gen_group()). */
static int
grouped(const struct rest_gen *g, const struct rest_node *n, int c)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;

	for (i = 0; i < n->nitems; i++) {
		const struct rest_item *it = &n->items[i];

		if (it->kind == REST_I_STAR)
			return 1;
		if ((it->kind == REST_I_COL || (it->kind == REST_I_EXPR &&
		    it->agg == REST_AGG_NONE && it->name != NULL)) &&
		    rest_schema_col(t, it->name) == c)
			return 1;
	}
	return 0;
}

/*
 * An aggregating node groups by its other columns: none may be of type json (PostgreSQL
 * has no equality for it; jsonb has), and order= may only name grouped columns.
 */
static int
resolve_grouping(struct rest_gen *g, const struct rest_node *n)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;
	int c;

	for (c = 0; c < t->ncols; c++)
		if (t->cols[c].type != NULL && strcasecmp(t->cols[c].type, "json") == 0 &&
		    grouped(g, n, c)) {
			rest_err_set(g->e, 400, "42883", NULL, "cannot group by column %.80s of "
			    "type json", t->cols[c].name);
			g->e->hint = "aggregate it, or leave it out of select=";
			return -1;
		}
	for (i = 0; i < n->norder; i++)
		if (!grouped(g, n, rest_schema_col(t, n->order[i].col))) {
			rest_err_set(g->e, 400, "42803", NULL, "order= names %.80s, which is neither "
			    "selected nor aggregated", n->order[i].col);
			g->e->hint = "order by the selected columns of an aggregating select=";
			return -1;
		}
	return 0;
}

/*
 * A spread ...rel(cols): PostgREST 12 spreads only a to-one relationship (a to-many one
 * is a 400 PGRST119), and sluice only its columns ('*', names).
 */
static int
resolve_spread(struct rest_gen *g, int p, const struct rest_node *n)
{
	size_t i;
	char d[256];

	if (n->junction >= 0 || !n->fk_forward) {
		(void)snprintf(d, sizeof(d), "'%.60s' and '%.60s' do not form a many-to-one or "
		    "one-to-one relationship", tab(g, p)->name, n->name);
		rest_err_set(g->e, 400, "PGRST119", d, "A spread operation on '%.80s' is not "
		    "possible", n->name);
		return -1;
	}
	for (i = 0; i < n->nitems; i++)
		if (n->items[i].kind != REST_I_STAR && n->items[i].kind != REST_I_COL) {
			rest_err_set(g->e, 400, "PGRST100", NULL, "a spread ...%.80s() holds only "
			    "columns: no embeds, casts, JSON paths or aggregates", n->name);
			return -1;
		}
	return 0;
}

int
rest_resolve(struct rest_gen *g, struct rest_node *n, int table)
{
	size_t i, members = 0;
	int aggs = 0, embeds = 0;

	n->table = table;
	for (i = 0; i < n->nitems; i++) {
		struct rest_item *it = &n->items[i];

		/* Each '*' is all the table's columns: 300 of them would be thousands. */
		members += it->kind == REST_I_STAR ? (size_t)tab(g, table)->ncols : 1;
		if (members > REST_MEMBERS_MAX) {
			rest_err_set(g->e, 400, "PGRST100", NULL, "select= asks for more than %d "
			    "columns of '%.80s'", REST_MEMBERS_MAX, n->name != NULL ? n->name :
			    tab(g, table)->name);
			return -1;
		}

		if (it->kind == REST_I_COL && rest_schema_col(tab(g, table), it->name) < 0)
			return no_column(g, table, it->name);
		if (it->kind == REST_I_EXPR && resolve_expr(g, table, it) < 0)
			return -1;
		aggs += it->kind == REST_I_EXPR && it->agg != REST_AGG_NONE;
		if (it->kind == REST_I_EMBED) {
			embeds++;
			if (resolve_rel(g, table, it->embed) < 0 ||
			    rest_resolve(g, it->embed, it->embed->table) < 0)
				return -1;
			if (it->embed->spread && resolve_spread(g, table, it->embed) < 0)
				return -1;
		}
	}
	if (aggs > 0 && embeds > 0) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "aggregates cannot be mixed with "
		    "embedded resources in one select (aggregate inside the embed instead)");
		return -1;
	}
	for (i = 0; i < n->norder; i++) {
		int c = rest_schema_col(tab(g, table), n->order[i].col);

		if (c < 0)
			return no_column(g, table, n->order[i].col);
		if (path_fits(g, table, c, n->order[i].path) < 0)
			return -1;
	}
	if (aggs > 0 && resolve_grouping(g, n) < 0)
		return -1;
	return resolve_cond(g, table, n->where);
}
