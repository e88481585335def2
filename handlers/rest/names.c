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

/* A computed item: its column, JSON path and casts. */
static int
resolve_expr(struct rest_gen *g, int table, const struct rest_item *it)
{
	int c;

	if (it->name != NULL) {
		if ((c = rest_schema_col(tab(g, table), it->name)) < 0)
			return no_column(g, table, it->name);
		if (path_fits(g, table, c, it->path) < 0)
			return -1;
	}
	return cast_fits(g, it->cast) < 0 || cast_fits(g, it->agg_cast) < 0 ? -1 : 0;
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
	return resolve_cond(g, table, n->where);
}
