/*
 * select.c: the SELECT of a read, built from a parsed and resolved tree: one statement
 * whose one row is the finished response body (JSON or CSV); and the JSON of written rows.
 *
 * The body is built as text by the database, the same JSON on both back ends (byte for
 * byte on Chinook, rows in the same order).  OBJ is a row's JSON object and ARR(x) the
 * array of the x:
 *   SQLite      OBJ    = sluice_obj('{"c":%v,"rel":%j}', _t0."c", EMBED)
 *               ARR(OBJ) = sluice_arr('{"c":%v,"rel":%j}', _t0."c", EMBED), each object
 *               built in place; ARR(_j) = sluice_arr(_j)
 *   PostgreSQL  OBJ    = '{"c":' || coalesce(_t0."c"::text, 'null') || ',"rel":' || ... || '}'
 *               (to_json(v)::text for every kind but integers)
 *               ARR(x) = '[' || coalesce(string_agg(x, ','), '') || ']'; the body's
 *               top array bare, coalesce(string_agg(x, ','), ''), its brackets written
 *               by rest_answer_read()
 *
 *   select ARR(_j), count(*) from (ROWS) _r
 *     ROWS = select OBJ as _j from "t" _t0 [JOINS] where ... order by ... limit ...
 *   or, without order or page,
 *   select ARR(OBJ), count(*) from "t" _t0 [JOINS] where ...
 *     to-many EMBED = (select ARR(OBJ) from "t1" _t1 where ...), or over ROWS1 with its
 *                     own order or page
 *     to-one  EMBED = case when _t1."k" is null then null else OBJ end
 *                     with JOINS = left join "t1" _t1 on <key> and <its filters>, when
 *                     its key is the table's primary key; else a subquery with limit 1
 *
 * sluice_obj() and sluice_arr() are C functions registered on every SQLite connection
 * (common/db_sqlite_json.c): json_object() would need json() around every nested value (a
 * JSON subtype does not cross a subquery), which parses the whole nested text again at
 * every level, and it costs several times more per row.  On PostgreSQL, concatenation
 * costs half what json_agg() over row_to_json() does for the all-albums embed (its
 * composite_to_json looks up every value's type again), and leaves out the ", " and
 * newlines json_agg() puts between elements.
 *
 * Computed members (casts, JSON paths, aggregates) are expressions in the same places as
 * columns; a node with an aggregate is read through ROWS with " group by" its other
 * columns (gen_group()), never the direct form.  A spread ...rel(cols) puts each column of
 * its to-one row into the parent's object, each a scalar subquery on the key.
 *
 * To-many embeds are correlated subqueries on the foreign key; many-to-many goes through
 * the junction with EXISTS; !inner adds an EXISTS on the parent.  SQLite renders timestamps
 * with strftime() and booleans as JSON true/false so that both back ends give the same
 * JSON.  Every value is a bound parameter; every identifier was matched against the schema
 * first and is double-quoted.  The SQL text depends only on the shape of the request, so
 * it is also the key of the connection's prepared statement cache.  The WHERE side
 * (filters, joins, !inner) is where.c's; each piece the back ends write differently,
 * dialect.c's.
 */
#include <stdio.h>
#include <string.h>

#include "json.h"
#include "rest.h"

static const struct rest_table *
tab(const struct rest_gen *g, int t)
{
	return &g->sc->tables[t];
}

/* The column as its JSON value should look (a CSV column, a template's value). */
static void
col_value(struct rest_gen *g, const char *alias, int t, int c)
{
	g->d->col_value(g->sql, alias, &tab(g, t)->cols[c]);
}

/* The column as JSON text, 'null' for NULL (a member of a concatenated object). */
static void
col_text(struct rest_gen *g, const char *alias, int t, int c)
{
	g->d->col_text(g->sql, alias, &tab(g, t)->cols[c]);
}

/*
 * An embed that selects nothing, rel(): no key in its parent's object (PostgREST leaves
 * it out), though its !inner still filters the parent.
 */
static int
embed_hidden(const struct rest_item *it)
{
	return it->kind == REST_I_EMBED && it->embed->nitems == 0;
}

static int gen_rows(struct rest_gen *g, struct rest_node *n, const char *from,
    const char *alias, const char *palias, int columns);
static int gen_items(struct rest_gen *g, struct rest_node *n, const char *alias, int columns);
static int gen_obj(struct rest_gen *g, struct rest_node *n, const char *alias, int agg);

/* ARR(x) of the file's comment, around what is written between the two calls. */
static void
arr_open(struct rest_gen *g)
{
	buf_puts(g->sql, g->d->arr_open);
}

static void
arr_close(struct rest_gen *g)
{
	buf_puts(g->sql, g->d->arr_close);
}

/* ARR(_j): the array of the rows' objects _j; bare: without its brackets (the body's top
 * array, rest_sql_select()). */
static void
arr_of_j(struct rest_gen *g, int bare)
{
	buf_puts(g->sql, bare ? g->d->arr_bare_open : g->d->arr_open);
	buf_puts(g->sql, "_j");
	buf_puts(g->sql, bare ? g->d->arr_bare_close : g->d->arr_close);
}

/* Whether a select item of n aggregates: its rows are then grouped (gen_group()). */
static int
has_agg(const struct rest_node *n)
{
	size_t i;

	for (i = 0; i < n->nitems; i++)
		if (n->items[i].kind == REST_I_EXPR && n->items[i].agg != REST_AGG_NONE)
			return 1;
	return 0;
}

/* What a computed item gives, for its rendering (names.c checked the casts). */
static enum rest_kind
expr_kind(const struct rest_gen *g, int t, const struct rest_item *it)
{
	enum rest_kind k = REST_K_INT;

	if (it->agg_cast != NULL) {
		(void)g->d->cast_type(it->agg_cast, &k);
		return k;
	}
	k = rest_expr_arg_kind(g, t, it);
	switch (it->agg) {
	case REST_AGG_COUNT:
		return REST_K_INT;
	case REST_AGG_AVG:
		return REST_K_NUM;
	case REST_AGG_SUM:
		return k == REST_K_INT ? REST_K_INT : REST_K_NUM;
	default:
		return k;
	}
}

/*
 * A computed item's SQL value: [agg(][cast_open]col[path][cast_as type cast_close][)]
 * with its casts, or count(*).  Path keys are bound; the type names come from the
 * dialect's list, never from the request.
 */
static int
expr_raw(struct rest_gen *g, const char *alias, int t, const struct rest_item *it)
{
	enum rest_kind k;
	const char *in = NULL, *out = NULL;

	if ((it->cast != NULL && (in = g->d->cast_type(it->cast, &k)) == NULL) ||
	    (it->agg_cast != NULL && (out = g->d->cast_type(it->agg_cast, &k)) == NULL))
		return -1;
	if (out != NULL)
		g->d->cast(g->sql, out, 1);
	if (it->agg != REST_AGG_NONE) {
		buf_puts(g->sql, rest_agg_names[it->agg]);
		buf_putc(g->sql, '(');
	}
	if (it->name == NULL)
		buf_putc(g->sql, '*');
	else {
		const struct rest_col *c = &tab(g, t)->cols[rest_schema_col(tab(g, t), it->name)];
		struct rest_lhs l = { alias, c, it->path };

		if (in != NULL)
			g->d->cast(g->sql, in, 1);
		if (it->path != NULL) {
			if (g->d->path_value(g, &l) < 0)
				return -1;
		} else
			sqlb_col(g->sql, alias, c->name);
		if (in != NULL)
			g->d->cast(g->sql, in, 0);
	}
	if (it->agg != REST_AGG_NONE)
		buf_putc(g->sql, ')');
	if (out != NULL)
		g->d->cast(g->sql, out, 0);
	return 0;
}

/* A computed item as its value (text 0: CSV, template) or its JSON text (text 1). */
static int
gen_expr(struct rest_gen *g, const char *alias, int t, const struct rest_item *it, int text)
{
	enum rest_kind k = expr_kind(g, t, it);
	int json = k == REST_K_JSON, ts = k == REST_K_TS && it->cast == NULL &&
	    it->agg_cast == NULL;

	if (text)
		buf_puts(g->sql, json ? g->d->expr_json_open : g->d->expr_open);
	if (ts)
		buf_puts(g->sql, g->d->ts_open);
	if (expr_raw(g, alias, t, it) < 0)
		return -1;
	if (ts)
		buf_puts(g->sql, g->d->ts_close);
	if (text)
		buf_puts(g->sql, json ? g->d->expr_json_close : g->d->expr_close);
	return 0;
}

/*
 * " group by <columns>" for a node with aggregates: every selected column, the column
 * under each computed member that does not aggregate (its path and casts are functions
 * of it), and the key columns a spread's subqueries read.  Nothing when every member
 * aggregates.
 */
static void
gen_group(struct rest_gen *g, const struct rest_node *n, const char *alias)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;
	int c, k = 0;

	for (i = 0; i < n->nitems; i++) {
		const struct rest_item *it = &n->items[i];

		if (it->kind == REST_I_STAR) {
			for (c = 0; c < t->ncols; c++) {
				buf_puts(g->sql, k++ ? ", " : " group by ");
				rest_gen_col(g, alias, n->table, c);
			}
		} else if (it->kind == REST_I_COL || (it->kind == REST_I_EXPR &&
		    it->agg == REST_AGG_NONE && it->name != NULL)) {
			buf_puts(g->sql, k++ ? ", " : " group by ");
			rest_gen_col(g, alias, n->table, rest_schema_col(t, it->name));
		} else if (it->kind == REST_I_EMBED && it->embed->spread) {
			const struct rest_fk *fk = &g->sc->fks[it->embed->fk];
			int fwd = it->embed->fk_forward;

			for (c = 0; c < fk->ncols; c++) {
				buf_puts(g->sql, k++ ? ", " : " group by ");
				rest_gen_col(g, alias, n->table, fwd ? fk->from_cols[c] :
				    fk->to_cols[c]);
			}
		}
	}
}

/*
 * The columns of spread embed n (its '*' and names; -1 - i for its aggregating item i),
 * and their keys; how many.
 */
static int
spread_cols(const struct rest_gen *g, const struct rest_node *n, int *cols,
    const char **keys, int max)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;
	int k = 0, c;

	for (i = 0; i < n->nitems; i++) {
		const struct rest_item *it = &n->items[i];

		if (it->kind == REST_I_STAR) {
			for (c = 0; c < t->ncols && k < max; c++) {
				cols[k] = c;
				keys[k++] = t->cols[c].name;
			}
		} else if (it->kind == REST_I_COL && k < max) {
			cols[k] = rest_schema_col(t, it->name);
			keys[k++] = it->alias ? it->alias : it->name;
		} else if (it->kind == REST_I_EXPR && k < max) {
			cols[k] = -1 - (int)i;
			keys[k++] = it->alias;
		}
	}
	return k;
}

/*
 * One column c of spread embed n under palias: "(select VALUE from "t" _tk where <join>
 * <filters> limit 1)", VALUE its value (text 0) or its JSON text (text 1, 'null' when
 * there is no row).  A to-one row is at most one: each member reads it by its key.  A
 * to-many spread's column is the JSON array of its values.
 */
static int
gen_spread_col(struct rest_gen *g, const struct rest_node *n, const char *palias, int c,
    int text)
{
	char a[16];

	rest_next_alias(g, "_t", a, sizeof(a));
	if (!n->one) {
		/* To-many (PostgREST 13): the array of the column's values, in the embed's
		 * order, '[]' without rows; the same JSON text in both modes. */
		buf_puts(g->sql, "(select ");
		arr_open(g);
		buf_puts(g->sql, "_v");
		arr_close(g);
		buf_puts(g->sql, " from (select ");
		g->d->col_text(g->sql, a, &tab(g, n->table)->cols[c]);
		buf_puts(g->sql, " as _v from ");
		sqlb_ident(g->sql, tab(g, n->table)->name);
		buf_printf(g->sql, " %s where ", a);
		rest_sql_join(g, n, a, palias);
		if (rest_sql_filters(g, n, a) < 0 || rest_sql_order_limit(g, n, a, 1) < 0)
			return -1;
		buf_puts(g->sql, ") _s)");
		return 0;
	}
	buf_puts(g->sql, text ? "coalesce((select " : "(select ");
	if (c < 0) {
		/* An aggregate of the one row (names.c allows it only there). */
		if (gen_expr(g, a, n->table, &n->items[-1 - c], text) < 0)
			return -1;
	} else if (text)
		g->d->col_text(g->sql, a, &tab(g, n->table)->cols[c]);
	else
		g->d->col_value(g->sql, a, &tab(g, n->table)->cols[c]);
	buf_puts(g->sql, " from ");
	sqlb_ident(g->sql, tab(g, n->table)->name);
	buf_printf(g->sql, " %s where ", a);
	rest_sql_join(g, n, a, palias);
	if (rest_sql_filters(g, n, a) < 0)
		return -1;
	buf_puts(g->sql, text ? " limit 1), 'null')" : " limit 1)");
	return 0;
}

/*
 * Whether PostgreSQL could answer the filter c through a range of a b-tree index: a
 * comparison (=, <, <=, >, >=, in, op(any), is null, is not null) of a column itself, in
 * an and with any such kid, or an or of only such kids.  Anything else (<>, like,
 * negations, JSON paths) it answers by reading the heap, in insertion order.
 */
static int
cond_indexable(const struct rest_cond *c)
{
	size_t i;
	int all = 1;

	if (c->negate)
		return 0;
	if (c->kind == REST_C_LEAF)
		return c->path == NULL && c->quant != REST_Q_ALL &&
		    (c->op == REST_OP_EQ || c->op == REST_OP_GT || c->op == REST_OP_GTE ||
		    c->op == REST_OP_LT || c->op == REST_OP_LTE || c->op == REST_OP_IN ||
		    (c->op == REST_OP_IS &&
		    (c->is == REST_IS_NULL || c->is == REST_IS_NOT_NULL)));
	for (i = 0; i < c->nkids; i++) {
		int k = cond_indexable(c->kids[i]);

		if (c->kind == REST_C_AND && k)
			return 1;
		all = all && k;
	}
	return c->kind == REST_C_OR && c->nkids > 0 && all;
}

/* " from <from> alias where <join to palias> <filters>" */
static int
gen_from_where(struct rest_gen *g, struct rest_node *n, const char *from, const char *alias,
    const char *palias, const struct buf *joins)
{
	buf_puts(g->sql, " from ");
	if (from != NULL)
		buf_puts(g->sql, from);
	else
		sqlb_ident(g->sql, tab(g, n->table)->name);
	buf_putc(g->sql, ' ');
	buf_puts(g->sql, alias);
	/* SQLite, a rowid table read whole without order=, or through filters no index range
	 * answers (neq, like, ...): in rowid order (insertion order, as PostgreSQL's heap scan
	 * gives), not through a covering index in key order.  With order=, an index may
	 * still spare the sort. */
	if (from == NULL && palias == NULL && n->norder == 0 && tab(g, n->table)->rowid &&
	    (n->where->nkids == 0 || !cond_indexable(n->where)))
		buf_puts(g->sql, " not indexed");
	if (joins->len > 0)
		buf_append(g->sql, joins->data, joins->len);
	buf_puts(g->sql, " where ");
	if (palias != NULL)
		rest_sql_join(g, n, alias, palias);
	else
		buf_puts(g->sql, "true");
	return rest_sql_filters(g, n, alias);
}

/* Whether the to-one embed n's key is its table's whole primary key: at most one row. */
static int
to_one_unique(const struct rest_gen *g, const struct rest_node *n)
{
	const struct rest_fk *fk = &g->sc->fks[n->fk];
	const struct rest_table *t = tab(g, n->table);
	int i, npk = 0;

	if (t->is_view || !n->fk_forward)
		return 0;
	for (i = 0; i < t->ncols; i++)
		npk += t->cols[i].pk > 0;
	if (npk != fk->ncols)
		return 0;
	for (i = 0; i < fk->ncols; i++)
		if (t->cols[fk->to_cols[i]].pk == 0)
			return 0;
	return 1;
}

/*
 * A to-one embed (alias a) as a LEFT JOIN of the parent's FROM, its filters in the ON
 * clause.  A correlated subquery would be opened, sought and closed once per parent row;
 * a join's table is opened once for the statement and only sought per row, which costs
 * less (docs/benchmarks.md, "To-one embeds joined").  Its own to-one embeds join the same
 * FROM, after it.
 */
static int
embed_join(struct rest_gen *g, struct rest_node *n, const char *a, const char *palias)
{
	struct buf *sql = g->sql;
	int rc;

	buf_puts(g->joins, " left join ");
	sqlb_ident(g->joins, tab(g, n->table)->name);
	buf_printf(g->joins, " %s on ", a);
	g->sql = g->joins;
	rest_sql_join(g, n, a, palias);
	rc = rest_sql_filters(g, n, a);
	g->sql = sql;
	if (buf_failed(g->joins))
		sql->failed = 1;
	return rc;
}

/* The to-one embed n (alias a) as embed_join() and the value "case when <key> is null
 * then null else OBJ end". */
static int
gen_embed_join(struct rest_gen *g, struct rest_node *n, const char *a, const char *palias)
{
	const struct rest_fk *fk = &g->sc->fks[n->fk];

	if (embed_join(g, n, a, palias) < 0)
		return -1;
	buf_puts(g->sql, "case when ");
	rest_gen_col(g, a, fk->to, fk->to_cols[0]);
	buf_puts(g->sql, " is null then null else ");
	if (gen_obj(g, n, a, 0) < 0)
		return -1;
	buf_puts(g->sql, " end");
	return 0;
}

/* Whether embed n is aggregated straight from its table: no order, page or aggregate. */
static int
embed_direct(const struct rest_node *n)
{
	return n->norder == 0 && n->limit < 0 && n->offset == 0 && !has_agg(n);
}

/*
 * The JSON value of embed n under parent alias palias.  spliced: the value is an argument
 * of the parent's sluice_obj()/sluice_arr() (SQLite's templates), where a to-many embed
 * aggregated directly is sluice_embed(), the array handed over as a pointer to the
 * template's %e.
 */
static int
gen_embed(struct rest_gen *g, struct rest_node *n, const char *palias, int spliced)
{
	char a[16], r[16];
	int many = !n->one, rc;
	struct buf joins, *outer = g->joins;

	rest_next_alias(g, "_t", a, sizeof(a));
	rest_next_alias(g, "_r", r, sizeof(r));
	/* The array of the rows' objects ('[]' when there are none), or the one object (NULL
	 * when there is none, which the parent's object renders as null). */
	if (embed_direct(n)) {
		if (!many && g->joins != NULL && to_one_unique(g, n))
			return gen_embed_join(g, n, a, palias);
		/* Without order or page, aggregate the table directly: no subquery to run
		 * as a co-routine per parent row. */
		buf_init(&joins, REST_SQL_MAX);
		g->joins = &joins;
		buf_puts(g->sql, "(select ");
		rc = gen_obj(g, n, a, many && spliced ? 2 : many);
		g->joins = outer;
		if (rc == 0)
			rc = gen_from_where(g, n, NULL, a, palias, &joins);
		buf_free(&joins);
		if (rc < 0)
			return -1;
		buf_puts(g->sql, many ? ")" : " limit 1)");
		return 0;
	}
	buf_puts(g->sql, "(select ");
	if (many)
		arr_of_j(g, 0);
	else
		buf_puts(g->sql, "_j");
	buf_puts(g->sql, " from (");
	if (gen_rows(g, n, NULL, a, palias, 0) < 0)
		return -1;
	buf_printf(g->sql, ") %s%s)", r, many ? "" : " limit 1");
	return 0;
}

/* The literal '{"key":' (or ',"key":') that starts a member of the object text. */
static void
key_text(struct rest_gen *g, const char *key, int first)
{
	struct buf k;

	buf_init(&k, REST_SQL_MAX);
	buf_putc(&k, first ? '{' : ',');
	json_escape(&k, key, strlen(key));
	buf_putc(&k, ':');
	if (buf_failed(&k))
		g->sql->failed = 1;
	else {
		if (!first)
			buf_puts(g->sql, " || ");
		sqlb_literal(g->sql, k.data);
		buf_puts(g->sql, " || ");
	}
	buf_free(&k);
}

/* An output column's name: _k<k> (columns 1), or its key (columns 2: GeoJSON's
 * properties are the record's column names). */
static void
col_as(struct rest_gen *g, int columns, size_t k, const char *key)
{
	if (columns == 2) {
		buf_puts(g->sql, " as ");
		sqlb_ident(g->sql, key);
	} else
		buf_printf(g->sql, " as _k%zu", k);
}

/*
 * The output of n over alias: with columns, "expr as _k0, expr as _k1, ..." (CSV: named by
 * position, since two keys may be the same, select=a:name,a:artist_id; 2: named by key);
 * without, one concatenation giving the row's JSON object as text.
 */
static int
gen_items(struct rest_gen *g, struct rest_node *n, const char *alias, int columns)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i, nout = 0;
	int c;
	int star = n->nitems == 0 && n->parent == NULL ? 1 : 0;

	for (i = 0; i < n->nitems + (size_t)star; i++) {
		struct rest_item *it = i < n->nitems ? &n->items[i] : NULL;

		if (it == NULL || it->kind == REST_I_STAR) {
			for (c = 0; c < t->ncols; c++) {
				if (columns) {
					if (nout)
						buf_puts(g->sql, ", ");
					col_value(g, alias, n->table, c);
					col_as(g, columns, nout, t->cols[c].name);
				} else {
					key_text(g, t->cols[c].name, nout == 0);
					col_text(g, alias, n->table, c);
				}
				nout++;
			}
			continue;
		}
		if (it->kind == REST_I_EMBED && it->embed->spread) {
			int cols[REST_MEMBERS_MAX], nc, k;
			const char *keys[REST_MEMBERS_MAX];

			nc = spread_cols(g, it->embed, cols, keys, REST_MEMBERS_MAX);
			for (k = 0; k < nc; k++) {
				if (columns && nout)
					buf_puts(g->sql, ", ");
				if (!columns)
					key_text(g, keys[k], nout == 0);
				if (gen_spread_col(g, it->embed, alias, cols[k], !columns) < 0)
					return -1;
				if (columns)
					col_as(g, columns, nout, keys[k]);
				nout++;
			}
			continue;
		}
		if (embed_hidden(it))
			continue;
		if (columns && nout)
			buf_puts(g->sql, ", ");
		if (!columns)
			key_text(g, it->alias ? it->alias : it->name, nout == 0);
		nout++;
		if (it->kind == REST_I_COL) {
			if (columns)
				col_value(g, alias, n->table, rest_schema_col(t, it->name));
			else
				col_text(g, alias, n->table, rest_schema_col(t, it->name));
		} else if (it->kind == REST_I_EXPR) {
			if (gen_expr(g, alias, n->table, it, !columns) < 0)
				return -1;
		} else if (columns) {
			if (gen_embed(g, it->embed, alias, 0) < 0)
				return -1;
		} else {
			/* A missing to-one row is NULL, which would make the whole text NULL. */
			buf_puts(g->sql, "coalesce(");
			if (gen_embed(g, it->embed, alias, 0) < 0)
				return -1;
			buf_puts(g->sql, ", 'null')");
		}
		if (columns)
			col_as(g, columns, nout - 1, it->alias ? it->alias : it->name);
	}
	if (!columns)
		buf_puts(g->sql, nout ? " || '}'" : "'{}'");
	return 0;
}

/* SQLite: one member's start in a template, ',"key":' (no comma first), with the key's %
 * doubled: the template's placeholders are %v and %j (db_sqlite_json.c). */
static void
tpl_key(struct buf *tpl, const char *key, int first)
{
	struct buf k;
	size_t i, n = strlen(key);

	/* The common case, a name with nothing to escape or double, as it is. */
	for (i = 0; i < n; i++)
		if ((unsigned char)key[i] < 0x20 || key[i] == '"' || key[i] == '\\' ||
		    key[i] == '%')
			break;
	if (i == n) {
		buf_append(tpl, first ? "\"" : ",\"", first ? 1 : 2);
		buf_append(tpl, key, n);
		buf_append(tpl, "\":", 2);
		return;
	}
	buf_init(&k, REST_SQL_MAX);
	json_escape(&k, key, strlen(key));
	if (buf_failed(&k))
		tpl->failed = 1;
	if (!first)
		buf_putc(tpl, ',');
	for (i = 0; i < k.len; i++) {
		if (k.data[i] == '%')
			buf_putc(tpl, '%');
		buf_putc(tpl, k.data[i]);
	}
	buf_putc(tpl, ':');
	buf_free(&k);
}

/* SQLite: one value of a sluice_obj()/sluice_arr() call, ", value". */
static int
obj_value(struct rest_gen *g, const char *alias, int t, int c, struct rest_node *embed)
{
	buf_puts(g->sql, ", ");
	if (embed != NULL)
		return gen_embed(g, embed, alias, 1);
	col_value(g, alias, t, c);
	return 0;
}

/* The row's object as one concatenation (gen_items()); with agg, inside ARR(). */
static int
gen_obj_concat(struct rest_gen *g, struct rest_node *n, const char *alias, int agg)
{
	int rc;

	if (agg)
		arr_open(g);
	rc = gen_items(g, n, alias, 0);
	if (agg)
		arr_close(g);
	return rc;
}

/*
 * Whether embed n goes into its parent's template as an optional group (%?{...}%.) over a
 * LEFT JOIN of the parent's FROM: a to-one embed on its table's primary key, without
 * order, page or aggregate, where the FROM is generated here.  Its values join the
 * parent's: no sluice_obj() call and no object text of its own per row.
 */
static int
embed_inline(const struct rest_gen *g, const struct rest_node *n)
{
	return n->one && !n->spread && n->nitems > 0 && embed_direct(n) && g->joins != NULL &&
	    to_one_unique(g, n);
}

/*
 * The members of n's object into the template tpl, *nk counting its values: -1 when
 * they pass REST_OBJ_MEMBERS_MAX.  star: select= was empty, every column.
 */
static int
tpl_items(struct rest_gen *g, const struct rest_node *n, struct buf *tpl, size_t *nk, int star)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;
	int c, k;

	for (i = 0; i < n->nitems + (size_t)star; i++) {
		const struct rest_item *it = i < n->nitems ? &n->items[i] : NULL;

		if (it == NULL || it->kind == REST_I_STAR) {
			for (c = 0; c < t->ncols; c++) {
				if (*nk == REST_OBJ_MEMBERS_MAX)
					return -1;
				k = t->cols[c].kind;
				tpl_key(tpl, t->cols[c].name, (*nk)++ == 0);
				buf_puts(tpl, k == REST_K_BOOL || k == REST_K_JSON ? "%j" : "%v");
			}
			continue;
		}
		if (it->kind == REST_I_EMBED && it->embed->spread) {
			int cols[REST_MEMBERS_MAX], nc, j;
			const char *keys[REST_MEMBERS_MAX];

			nc = spread_cols(g, it->embed, cols, keys, REST_MEMBERS_MAX);
			for (j = 0; j < nc; j++) {
				if (*nk == REST_OBJ_MEMBERS_MAX)
					return -1;
				k = !it->embed->one ? REST_K_JSON : cols[j] < 0 ?
				    expr_kind(g, it->embed->table, &it->embed->items[-1 - cols[j]]) :
				    tab(g, it->embed->table)->cols[cols[j]].kind;
				tpl_key(tpl, keys[j], (*nk)++ == 0);
				buf_puts(tpl, k == REST_K_BOOL || k == REST_K_JSON ? "%j" : "%v");
			}
			continue;
		}
		if (embed_hidden(it))
			continue;
		if (*nk == REST_OBJ_MEMBERS_MAX)
			return -1;
		tpl_key(tpl, it->alias ? it->alias : it->name, (*nk)++ == 0);
		if (it->kind == REST_I_EMBED && embed_inline(g, it->embed)) {
			size_t inner = 0;

			/* The group's keys start their own object: counted apart for the
			 * commas, together for the values. */
			buf_puts(tpl, "%?{");
			if (tpl_items(g, it->embed, tpl, &inner, 0) < 0 ||
			    (*nk += inner) > REST_OBJ_MEMBERS_MAX)
				return -1;
			buf_puts(tpl, "}%.");
			continue;
		}
		if (it->kind == REST_I_EMBED && !it->embed->one && embed_direct(it->embed)) {
			/* sluice_embed()'s array (gen_embed()). */
			buf_puts(tpl, "%e");
			continue;
		}
		k = it->kind == REST_I_COL ? t->cols[rest_schema_col(t, it->name)].kind :
		    it->kind == REST_I_EXPR ? expr_kind(g, n->table, it) : REST_K_JSON;
		buf_puts(tpl, k == REST_K_BOOL || k == REST_K_JSON ? "%j" : "%v");
	}
	return 0;
}

/* The values of tpl_items()'s template for n under alias, each ", value". */
static int
tpl_values(struct rest_gen *g, struct rest_node *n, const char *alias, int star)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;
	int c;

	for (i = 0; i < n->nitems + (size_t)star; i++) {
		struct rest_item *it = i < n->nitems ? &n->items[i] : NULL;

		if (it == NULL || it->kind == REST_I_STAR) {
			for (c = 0; c < t->ncols; c++)
				(void)obj_value(g, alias, n->table, c, NULL);
		} else if (it->kind == REST_I_EMBED && it->embed->spread) {
			int cols[REST_MEMBERS_MAX], nc, j;
			const char *keys[REST_MEMBERS_MAX];

			nc = spread_cols(g, it->embed, cols, keys, REST_MEMBERS_MAX);
			for (j = 0; j < nc; j++) {
				buf_puts(g->sql, ", ");
				if (gen_spread_col(g, it->embed, alias, cols[j], 0) < 0)
					return -1;
			}
		} else if (it->kind == REST_I_EXPR) {
			buf_puts(g->sql, ", ");
			if (gen_expr(g, alias, n->table, it, 0) < 0)
				return -1;
		} else if (embed_hidden(it))
			continue;
		else if (it->kind == REST_I_EMBED && embed_inline(g, it->embed)) {
			const struct rest_fk *fk = &g->sc->fks[it->embed->fk];
			char a[16], r[16];

			/* The aliases gen_embed() would take. */
			rest_next_alias(g, "_t", a, sizeof(a));
			rest_next_alias(g, "_r", r, sizeof(r));
			if (embed_join(g, it->embed, a, alias) < 0)
				return -1;
			/* The group's value: its key, NULL when the join found no row. */
			buf_puts(g->sql, ", ");
			rest_gen_col(g, a, fk->to, fk->to_cols[0]);
			if (tpl_values(g, it->embed, a, 0) < 0)
				return -1;
		} else if (obj_value(g, alias, n->table,
		    it->kind == REST_I_COL ? rest_schema_col(t, it->name) : -1,
		    it->kind == REST_I_EMBED ? it->embed : NULL) < 0)
			return -1;
	}
	return 0;
}

/*
 * The row's JSON object as text (OBJ of the file's comment), members in the order of
 * select=; with agg, ARR(OBJ), the array of the rows' objects.
 * PostgreSQL: a concatenation (gen_obj_concat()).
 * SQLite: sluice_obj(template, value, ...) (db_sqlite_json.c); with agg,
 * sluice_arr(template, value, ...), each object built in place.  %j splices JSON text as
 * it is: embeds, booleans (col_json() gives true/false) and JSON columns (validated by
 * json()); %v renders a plain value; a to-one embed that embed_inline() allows is an
 * optional group of the same template, %?{...}%., its key the group's value.  A row with
 * more values than an SQL function takes is concatenated value by value instead.
 */
static int
gen_obj(struct rest_gen *g, struct rest_node *n, const char *alias, int agg)
{
	struct buf tpl;
	size_t nk = 0;
	int star = n->nitems == 0 && n->parent == NULL;

	if (!g->d->obj_template)
		return gen_obj_concat(g, n, alias, agg);
	buf_init(&tpl, REST_SQL_MAX);
	buf_putc(&tpl, '{');
	if (tpl_items(g, n, &tpl, &nk, star) < 0) {
		buf_free(&tpl);
		return gen_obj_concat(g, n, alias, agg);
	}
	buf_putc(&tpl, '}');
	if (buf_failed(&tpl))
		g->sql->failed = 1;
	buf_puts(g->sql, agg == 2 ? "sluice_embed(" : agg ? "sluice_arr(" : "sluice_obj(");
	sqlb_literal(g->sql, tpl.data);
	buf_free(&tpl);
	if (tpl_values(g, n, alias, star) < 0)
		return -1;
	buf_putc(g->sql, ')');
	return 0;
}

int
rest_sql_order_limit(struct rest_gen *g, const struct rest_node *n, const char *alias,
    int table)
{
	size_t i;
	int k;

	/* SQLite: without order=, rows in rowid order, the order of insertion that a heap
	 * scan gives on PostgreSQL, whatever index the plan uses; no sort where the plan
	 * reads the table or an index equality in rowid order anyway.  table: alias is the
	 * table itself, not a function's result, and rows are not groups. */
	if (n->norder == 0 && table && tab(g, n->table)->rowid &&
	    (n->limit >= 0 || n->offset > 0)) {
		buf_puts(g->sql, " order by ");
		sqlb_col(g->sql, alias, "rowid");
	}
	for (i = 0; i < n->norder; i++) {
		const struct rest_order *o = &n->order[i];
		int nulls = o->nulls ? o->nulls : (o->desc ? 1 : 2);

		buf_puts(g->sql, i ? ", " : " order by ");
		if (o->path != NULL) {
			const struct rest_table *t = tab(g, n->table);
			struct rest_lhs l = { alias, &t->cols[rest_schema_col(t, o->col)], o->path };

			if (g->d->lhs(g, &l) < 0)
				return -1;
		} else
			rest_gen_col(g, alias, n->table, rest_schema_col(tab(g, n->table), o->col));
		buf_puts(g->sql, o->desc ? " desc" : " asc");
		buf_puts(g->sql, nulls == 1 ? " nulls first" : " nulls last");
	}
	if (n->limit >= 0) {
		if ((k = rest_param_int(g, n->limit)) < 0)
			return -1;
		buf_puts(g->sql, " limit ");
		sqlb_param(g->sql, k);
	} else if (n->offset > 0)
		buf_puts(g->sql, g->d->limit_none);
	if (n->offset > 0) {
		if ((k = rest_param_int(g, n->offset)) < 0)
			return -1;
		buf_puts(g->sql, " offset ");
		sqlb_param(g->sql, k);
	}
	return 0;
}

/*
 * The rows of n: "select <items> from <from> alias where <join> <filters> order limit".
 * columns: one SQL column per key (1: CSV's, by position; 2: GeoJSON's, by key);
 * otherwise one JSON text _j.
 */
static int
gen_rows(struct rest_gen *g, struct rest_node *n, const char *from, const char *alias,
    const char *palias, int columns)
{
	struct buf joins, *outer = g->joins;
	int rc;

	buf_init(&joins, REST_SQL_MAX);
	g->joins = &joins;
	buf_puts(g->sql, "select ");
	rc = columns ? gen_items(g, n, alias, columns) : gen_obj(g, n, alias, 0);
	g->joins = outer;
	if (rc == 0 && !columns)
		buf_puts(g->sql, " as _j");
	if (rc == 0)
		rc = gen_from_where(g, n, from, alias, palias, &joins);
	buf_free(&joins);
	if (rc < 0)
		return -1;
	if (has_agg(n))
		gen_group(g, n, alias);
	return rest_sql_order_limit(g, n, alias, from == NULL && !has_agg(n));
}

int
rest_sql_row_json(struct rest_gen *g, struct rest_node *n, const char *alias, int agg)
{
	/* The written rows' objects are made one per row: nothing there to group. */
	if (has_agg(n)) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "aggregates are not supported in the "
		    "representation of a write");
		return -1;
	}
	return gen_obj(g, n, alias, agg);
}

/*
 * One CSV field, column k of _r (_k<k>), quoted as PostgREST quotes it (PostgreSQL's
 * record output): NULL is nothing, the empty string is "", and a value holding a quote,
 * comma, backslash, parenthesis or white space is quoted with " and \ doubled.
 */
static void
gen_csv_field(struct rest_gen *g, int k)
{
	static const char *const special[] = { "'\"'", "','", "'\\'", "'('", "')'", "' '",
		"9", "10", "11", "12", "13" };
	struct buf *b = g->sql;
	const char *pos = g->d->strpos, *txt = g->d->as_text, *chr = g->d->chr;
	char key[24];
	size_t i;

	(void)snprintf(key, sizeof(key), "_k%d", k);

	buf_puts(b, "case when _r.");
	sqlb_ident(b, key);
	buf_puts(b, " is null then '' when _r.");
	sqlb_ident(b, key);
	buf_printf(b, "%s = ''", txt);
	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		buf_printf(b, " or %s(_r.", pos);
		sqlb_ident(b, key);
		if (special[i][0] == '\'')
			buf_printf(b, "%s, %s) > 0", txt, special[i]);
		else
			buf_printf(b, "%s, %s(%s)) > 0", txt, chr, special[i]);
	}
	buf_puts(b, " then '\"' || replace(replace(_r.");
	sqlb_ident(b, key);
	buf_printf(b, "%s, '\\', '\\\\'), '\"', '\"\"') || '\"' else _r.", txt);
	sqlb_ident(b, key);
	buf_printf(b, "%s end", txt);
}

int
rest_sql_keys(struct rest_gen *g, struct rest_node *n, const char **keys, int max)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;
	int k = 0, c;

	if (n->nitems == 0) {
		for (c = 0; c < t->ncols && k < max; c++)
			keys[k++] = t->cols[c].name;
		return k;
	}
	for (i = 0; i < n->nitems; i++) {
		const struct rest_item *it = &n->items[i];

		if (it->kind == REST_I_STAR)
			for (c = 0; c < t->ncols && k < max; c++)
				keys[k++] = t->cols[c].name;
		else if (it->kind == REST_I_EMBED && it->embed->spread) {
			int cols[REST_MEMBERS_MAX];

			k += spread_cols(g, it->embed, cols, keys + k, max - k < REST_MEMBERS_MAX ?
			    max - k : REST_MEMBERS_MAX);
		} else if (k < max && !embed_hidden(it))
			keys[k++] = it->alias ? it->alias : it->name;
	}
	return k;
}

int
rest_sql_caps_body(const struct rest_gen *g)
{
	return g->body_max > 0 && g->d->body_over != NULL;
}

void
rest_sql_capped_body(struct rest_gen *g)
{
	/* A bare top array leaves two bytes of the body to its brackets. */
	buf_printf(g->sql, "case when octet_length(_s._b) <= %lld then _s._b else %s end, _s._n",
	    (long long)(g->body_max - (g->bare ? 2 : 0)), g->d->body_over);
}

/* A CSV body: the rows' fields joined by commas, one line a row, in one value. */
static void
gen_csv_agg(struct rest_gen *g, struct rest_node *root)
{
	const char *keys[1024];
	int nk = rest_sql_keys(g, root, keys, 1024), i;

	buf_puts(g->sql, g->d->csv_agg_open);
	for (i = 0; i < nk; i++) {
		if (i)
			buf_puts(g->sql, " || ',' || ");
		gen_csv_field(g, i);
	}
	if (nk == 0)
		buf_puts(g->sql, "''");
	buf_puts(g->sql, g->d->csv_agg_close);
}

/* The exact count (Prefer: count=exact): a subquery of the rows the filters keep, from
 * from (NULL: the root's table), named _c when the body is capped (wrap).  0, or -1 (g's
 * error set). */
static int
gen_total(struct rest_gen *g, struct rest_node *root, const char *from, int wrap)
{
	char c[16];
	int rc;

	rest_next_alias(g, "_c", c, sizeof(c));
	buf_puts(g->sql, ", (select count(*) from ");
	if (from != NULL)
		buf_puts(g->sql, from);
	else
		sqlb_ident(g->sql, tab(g, root->table)->name);
	buf_printf(g->sql, " %s where true", c);
	rc = rest_sql_filters(g, root, c);
	buf_puts(g->sql, wrap ? ") as _c" : ")");
	return rc;
}

int
rest_sql_select(struct rest_gen *g, struct rest_node *root, const char *from,
    enum rest_shape shape, int count)
{
	char a[16] = "_t0";
	struct buf joins;
	int direct = shape == REST_SHAPE_JSON && root->norder == 0 &&
	    root->limit < 0 && root->offset == 0 && !has_agg(root), rc = 0;
	/* The body capped in the statement (rest_sql_capped_body()): the select below
	 * becomes the subquery _s of one that lets through body_max bytes at most. */
	int wrap = rest_sql_caps_body(g);

	g->seq = 0;
	/* A JSON body's top array without its brackets, where the dialect can: on
	 * PostgreSQL '[' || ... || ']' copies the whole body twice more (the all-albums
	 * embed: 0.8 MB each, in fresh memory), and rest_answer_read() writes them. */
	g->bare = shape == REST_SHAPE_JSON && g->d->arr_bare_open != NULL;
	if (wrap) {
		buf_puts(g->sql, "select ");
		rest_sql_capped_body(g);
		if (count)
			buf_puts(g->sql, ", _s._c");
		buf_puts(g->sql, g->resp_settings ? ", _s._rh, _s._rs from (" : " from (");
	}
	buf_puts(g->sql, "select ");
	buf_init(&joins, REST_SQL_MAX);
	if (direct) {
		/* Without order or page: the array straight from the table, each object
		 * built in place, not as a value of its own copied into the array. */
		g->joins = &joins;
		if (g->bare) {
			/* The dialect concatenates: the objects, in the bare array. */
			buf_puts(g->sql, g->d->arr_bare_open);
			rc = gen_obj(g, root, a, 0);
			buf_puts(g->sql, g->d->arr_bare_close);
		} else
			rc = gen_obj(g, root, a, 1);
		g->joins = NULL;
	} else if (shape == REST_SHAPE_CSV) {
		gen_csv_agg(g, root);
	} else if (shape == REST_SHAPE_GEOJSON) {
		/* PostgREST's: each row a Feature, its geometry column the geometry and
		 * the others its properties. */
		buf_printf(g->sql, "json_build_object('type', 'FeatureCollection', 'features', "
		    "coalesce(json_agg(%s(_r)::json), '[]'))::text", g->sc->geojson);
	} else
		arr_of_j(g, g->bare);
	buf_puts(g->sql, wrap ? " as _b, count(*) as _n" : ", count(*)");
	if (count && rc == 0)
		rc = gen_total(g, root, from, wrap);
	if (g->resp_settings)
		buf_puts(g->sql, g->d->resp_settings);
	if (direct && rc == 0)
		rc = gen_from_where(g, root, from, a, NULL, &joins);
	buf_free(&joins);
	if (rc < 0)
		return -1;
	if (!direct) {
		buf_puts(g->sql, " from (");
		if (gen_rows(g, root, from, a, NULL, shape == REST_SHAPE_CSV ? 1 :
		    shape == REST_SHAPE_GEOJSON ? 2 : 0) < 0)
			return -1;
		buf_puts(g->sql, ") _r");
	}
	if (wrap)
		buf_puts(g->sql, ") _s");
	if (buf_failed(g->sql)) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "the request is too complex");
		return -1;
	}
	return 0;
}
