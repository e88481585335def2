/*
 * sql.c: one SQL statement per request, built from a parsed tree, that returns the finished
 * response body.
 *
 * The body is built as text by the database, the same JSON on both back ends (byte for
 * byte on Chinook, rows in the same order).  OBJ is a row's JSON object and ARR(x) the
 * array of the x:
 *   SQLite      OBJ    = sluice_obj('{"c":%v,"rel":%j}', _t0."c", EMBED)
 *               ARR(OBJ) = sluice_arr('{"c":%v,"rel":%j}', _t0."c", EMBED), each object
 *               built in place; ARR(_j) = sluice_arr(_j)
 *   PostgreSQL  OBJ    = '{"c":' || coalesce(_t0."c"::text, 'null') || ',"rel":' || ... || '}'
 *               (to_json(v)::text for every kind but integers)
 *               ARR(x) = '[' || coalesce(string_agg(x, ','), '') || ']'
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
 * To-many embeds are correlated subqueries on the foreign key; many-to-many goes through
 * the junction with EXISTS; !inner adds an EXISTS on the parent.  SQLite renders timestamps
 * with strftime() and booleans as JSON true/false so that both back ends give the same
 * JSON.  Every value is a bound parameter; every identifier was matched against the schema
 * first and is double-quoted.  The SQL text depends only on the shape of the request, so
 * it is also the key of the connection's prepared statement cache.
 */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "json.h"
#include "rest.h"
#include "str.h"

void
rest_quote_ident(struct buf *b, const char *name)
{
	buf_putc(b, '"');
	for (; *name != '\0'; name++) {
		if (*name == '"')
			buf_putc(b, '"');
		buf_putc(b, *name);
	}
	buf_putc(b, '"');
}

/* A SQL string literal (JSON keys: schema names or request aliases). */
void
rest_sql_literal(struct buf *b, const char *s)
{
	buf_putc(b, '\'');
	for (; *s != '\0'; s++) {
		if (*s == '\'')
			buf_putc(b, '\'');
		buf_putc(b, *s);
	}
	buf_putc(b, '\'');
}

static int
param_slot(struct rest_gen *g)
{
	if (g->p->n == REST_PARAMS_MAX) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "the request has too many values");
		return -1;
	}
	g->p->isnull[g->p->n] = 0;
	g->p->isint[g->p->n] = 0;
	return g->p->n++;
}

int
rest_param_text(struct rest_gen *g, const char *v, size_t len)
{
	int k = param_slot(g);

	if (k < 0)
		return -1;
	g->p->v[k] = v;
	g->p->len[k] = len;
	return k + 1;
}

int
rest_param_int(struct rest_gen *g, int64_t v)
{
	int k = param_slot(g);

	if (k < 0)
		return -1;
	g->p->isint[k] = 1;
	g->p->iv[k] = v;
	return k + 1;
}

int
rest_param_null(struct rest_gen *g)
{
	int k = param_slot(g);

	if (k < 0)
		return -1;
	g->p->isnull[k] = 1;
	return k + 1;
}

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

static int
resolve_cond(struct rest_gen *g, int t, struct rest_cond *c)
{
	size_t i;

	if (c->kind == REST_C_LEAF) {
		if ((c->colidx = rest_schema_col(tab(g, t), c->col)) < 0)
			return no_column(g, t, c->col);
		return 0;
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

int
rest_resolve(struct rest_gen *g, struct rest_node *n, int table)
{
	size_t i;

	n->table = table;
	for (i = 0; i < n->nitems; i++) {
		struct rest_item *it = &n->items[i];

		if (it->kind == REST_I_COL && rest_schema_col(tab(g, table), it->name) < 0)
			return no_column(g, table, it->name);
		if (it->kind == REST_I_EMBED) {
			if (resolve_rel(g, table, it->embed) < 0 ||
			    rest_resolve(g, it->embed, it->embed->table) < 0)
				return -1;
		}
	}
	for (i = 0; i < n->norder; i++)
		if (rest_schema_col(tab(g, table), n->order[i].col) < 0)
			return no_column(g, table, n->order[i].col);
	return resolve_cond(g, table, n->where);
}

static void
col_ref(struct rest_gen *g, const char *alias, int t, int c)
{
	buf_puts(g->sql, alias);
	buf_putc(g->sql, '.');
	rest_quote_ident(g->sql, tab(g, t)->cols[c].name);
}

/* The column as its JSON value should look (SQLite needs help for some kinds). */
static void
col_json(struct rest_gen *g, const char *alias, int t, int c)
{
	if (g->be == DB_PG) {
		col_ref(g, alias, t, c);
		return;
	}
	switch (tab(g, t)->cols[c].kind) {
	case REST_K_TS:
		buf_puts(g->sql, "strftime('%Y-%m-%dT%H:%M:%S', ");
		col_ref(g, alias, t, c);
		buf_putc(g->sql, ')');
		break;
	case REST_K_BOOL:
		buf_puts(g->sql, "json(case when ");
		col_ref(g, alias, t, c);
		buf_puts(g->sql, " is null then null when ");
		col_ref(g, alias, t, c);
		buf_puts(g->sql, " then 'true' else 'false' end)");
		break;
	case REST_K_JSON:
		buf_puts(g->sql, "json(");
		col_ref(g, alias, t, c);
		buf_putc(g->sql, ')');
		break;
	default:
		col_ref(g, alias, t, c);
	}
}

/* A PostgreSQL array literal {"a","b"} of the in-list, for = any($k::type[]). */
static char *
pg_array(struct rest_gen *g, const struct rest_cond *c, size_t *len)
{
	struct buf b;
	size_t i, j;
	char *out = NULL;

	buf_init(&b, REST_SQL_MAX);
	buf_putc(&b, '{');
	for (i = 0; i < c->nlist; i++) {
		if (i)
			buf_putc(&b, ',');
		buf_putc(&b, '"');
		for (j = 0; j < c->listlen[i]; j++) {
			if (c->list[i][j] == '"' || c->list[i][j] == '\\')
				buf_putc(&b, '\\');
			buf_putc(&b, c->list[i][j]);
		}
		buf_putc(&b, '"');
	}
	buf_putc(&b, '}');
	if (!buf_failed(&b)) {
		out = arena_strndup(g->a, b.data, b.len);
		*len = b.len;
	}
	buf_free(&b);
	return out;
}

/* The in-list as a JSON array of strings, for SQLite's json_each(). */
static char *
lite_array(struct rest_gen *g, const struct rest_cond *c, size_t *len, int boolcol)
{
	struct buf b;
	size_t i;
	char *out = NULL;

	buf_init(&b, REST_SQL_MAX);
	buf_putc(&b, '[');
	for (i = 0; i < c->nlist; i++) {
		if (i)
			buf_putc(&b, ',');
		if (boolcol && str_eq(c->list[i], c->listlen[i], "true"))
			buf_puts(&b, "1");
		else if (boolcol && str_eq(c->list[i], c->listlen[i], "false"))
			buf_puts(&b, "0");
		else
			json_escape(&b, c->list[i], c->listlen[i]);
	}
	buf_putc(&b, ']');
	if (!buf_failed(&b)) {
		out = arena_strndup(g->a, b.data, b.len);
		*len = b.len;
	}
	buf_free(&b);
	return out;
}

/* PostgREST's like pattern ('*' = '%') as a case-sensitive SQLite GLOB pattern. */
static char *
lite_glob(struct rest_gen *g, const char *v, size_t len, size_t *outlen)
{
	char *o = arena_alloc(g->a, 3 * len + 1);
	size_t i, n = 0;

	if (o == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		char ch = v[i];

		if (ch == '\\' && i + 1 < len) {
			ch = v[++i];
			if (ch == '*' || ch == '?' || ch == '[') {
				o[n++] = '[';
				o[n++] = ch;
				o[n++] = ']';
			} else
				o[n++] = ch;
		} else if (ch == '*' || ch == '%')
			o[n++] = '*';
		else if (ch == '_')
			o[n++] = '?';
		else if (ch == '?' || ch == '[') {
			o[n++] = '[';
			o[n++] = ch;
			o[n++] = ']';
		} else
			o[n++] = ch;
	}
	o[n] = '\0';
	*outlen = n;
	return o;
}

static const char *const sql_cmp[] = { "=", "<>", ">", ">=", "<", "<=" };

/* " $k", a placeholder. */
static void
put_param(struct rest_gen *g, int k)
{
	buf_puts(g->sql, " $");
	buf_put_int(g->sql, k);
}

/*
 * Values compared with integer and numeric columns must look like numbers, on both back
 * ends: PostgreSQL would refuse them (22P02), SQLite would quietly compare them as text.
 */
static int
check_number(struct rest_gen *g, const struct rest_col *col, const char *v, size_t len)
{
	int64_t iv;
	size_t i = 0, digits = 0;

	if (col->kind == REST_K_INT) {
		if (str_to_int(v, len, INT64_MIN, INT64_MAX, &iv) == 0)
			return 0;
	} else if (col->kind == REST_K_NUM) {
		if (i < len && v[i] == '-')
			i++;
		for (; i < len && v[i] >= '0' && v[i] <= '9'; i++)
			digits++;
		if (i < len && v[i] == '.')
			for (i++; i < len && v[i] >= '0' && v[i] <= '9'; i++)
				digits++;
		if (i == len && digits > 0 && len < 64)
			return 0;
	} else
		return 0;
	rest_err_set(g->e, 400, "22P02", NULL, "invalid input syntax for type %s: \"%.*s\"",
	    col->kind == REST_K_INT ? "integer" : "numeric", len > 60 ? 60 : (int)len, v);
	return -1;
}

static int
gen_leaf(struct rest_gen *g, int t, const char *alias, const struct rest_cond *c)
{
	const struct rest_col *col = &tab(g, t)->cols[c->colidx];
	int k, boolcol = g->be == DB_SQLITE && col->kind == REST_K_BOOL;
	const char *v = c->val;
	size_t len = c->vallen;

	if (c->negate)
		buf_puts(g->sql, "not ");
	buf_putc(g->sql, '(');
	switch (c->op) {
	case REST_OP_EQ: case REST_OP_NEQ: case REST_OP_GT:
	case REST_OP_GTE: case REST_OP_LT: case REST_OP_LTE:
		if (boolcol && str_eq(v, len, "true"))
			v = "1", len = 1;
		else if (boolcol && str_eq(v, len, "false"))
			v = "0", len = 1;
		if (check_number(g, col, v, len) < 0 || (k = rest_param_text(g, v, len)) < 0)
			return -1;
		if (g->be == DB_SQLITE && col->kind == REST_K_TS) {
			/* Text timestamps compare in one spelling ("T" or " ", seconds or not),
			 * as PostgreSQL compares the values. */
			buf_puts(g->sql, "strftime('%Y-%m-%dT%H:%M:%S', ");
			col_ref(g, alias, t, c->colidx);
			buf_printf(g->sql, ") %s strftime('%%Y-%%m-%%dT%%H:%%M:%%S', $%d)",
			    sql_cmp[c->op], k);
			break;
		}
		col_ref(g, alias, t, c->colidx);
		buf_putc(g->sql, ' ');
		buf_puts(g->sql, sql_cmp[c->op]);
		put_param(g, k);
		break;
	case REST_OP_LIKE:
	case REST_OP_ILIKE:
		if (g->be == DB_PG) {
			if ((v = rest_like_pattern(g->a, v, len)) == NULL ||
			    (k = rest_param_text(g, v, len)) < 0)
				return -1;
			col_ref(g, alias, t, c->colidx);
			buf_printf(g->sql, "::text %s $%d",
			    c->op == REST_OP_LIKE ? "like" : "ilike", k);
		} else if (c->op == REST_OP_LIKE) {
			size_t n;

			if ((v = lite_glob(g, v, len, &n)) == NULL ||
			    (k = rest_param_text(g, v, n)) < 0)
				return -1;
			col_ref(g, alias, t, c->colidx);
			buf_printf(g->sql, " glob $%d", k);
		} else {
			if ((v = rest_like_pattern(g->a, v, len)) == NULL ||
			    (k = rest_param_text(g, v, len)) < 0)
				return -1;
			col_ref(g, alias, t, c->colidx);
			buf_printf(g->sql, " like $%d escape '\\'", k);
		}
		break;
	case REST_OP_IN:
		if (c->nlist == 0) {
			buf_puts(g->sql, "false");
			break;
		}
		for (size_t i = 0; i < c->nlist; i++)
			if (check_number(g, col, c->list[i], c->listlen[i]) < 0)
				return -1;
		if (g->be == DB_PG) {
			if ((v = pg_array(g, c, &len)) == NULL || (k = rest_param_text(g, v, len)) < 0)
				return -1;
			col_ref(g, alias, t, c->colidx);
			buf_printf(g->sql, " = any($%d::%s[])", k, col->type);
		} else {
			if ((v = lite_array(g, c, &len, boolcol)) == NULL ||
			    (k = rest_param_text(g, v, len)) < 0)
				return -1;
			col_ref(g, alias, t, c->colidx);
			buf_printf(g->sql, " in (select value from json_each($%d))", k);
		}
		break;
	case REST_OP_IS:
		col_ref(g, alias, t, c->colidx);
		buf_puts(g->sql, c->is == REST_IS_NULL ? " is null" :
		    c->is == REST_IS_NOT_NULL ? " is not null" :
		    c->is == REST_IS_TRUE ? " is true" : " is false");
		break;
	default:
		return -1;
	}
	buf_putc(g->sql, ')');
	return 0;
}

static int
gen_cond(struct rest_gen *g, int t, const char *alias, const struct rest_cond *c)
{
	size_t i;

	if (c->kind == REST_C_LEAF)
		return gen_leaf(g, t, alias, c);
	if (c->negate)
		buf_puts(g->sql, "not ");
	buf_putc(g->sql, '(');
	if (c->nkids == 0)
		buf_puts(g->sql, c->kind == REST_C_AND ? "true" : "false");
	for (i = 0; i < c->nkids; i++) {
		if (i)
			buf_puts(g->sql, c->kind == REST_C_AND ? " and " : " or ");
		if (gen_cond(g, t, alias, c->kids[i]) < 0)
			return -1;
	}
	buf_putc(g->sql, ')');
	return 0;
}

/* prefix + a number unique in the statement ("_t3"); out holds 16 bytes. */
static void
next_alias(struct rest_gen *g, const char *prefix, char *out, size_t len)
{
	size_t n = strlen(prefix), m;
	char t[STR_INT_MAX];

	m = str_from_int(t, ++g->seq);
	if (n + m + 1 > len) {
		g->sql->failed = 1;	/* cannot happen with the callers' 16 bytes */
		out[0] = '\0';
		return;
	}
	memcpy(out, prefix, n);
	memcpy(out + n, t, m);
	out[n + m] = '\0';
}

/* The condition joining embed n (alias) to its parent (palias). */
static void
gen_join(struct rest_gen *g, const struct rest_node *n, const char *alias,
    const char *palias)
{
	const struct rest_fk *fk = &g->sc->fks[n->fk];
	int i;

	if (n->junction >= 0) {
		const struct rest_fk *fk2 = &g->sc->fks[n->fk2];
		char j[16];

		next_alias(g, "_j", j, sizeof(j));
		buf_puts(g->sql, "exists (select 1 from ");
		rest_quote_ident(g->sql, tab(g, n->junction)->name);
		buf_printf(g->sql, " %s where ", j);
		for (i = 0; i < fk->ncols; i++) {
			col_ref(g, j, fk->from, fk->from_cols[i]);
			buf_puts(g->sql, " = ");
			col_ref(g, palias, fk->to, fk->to_cols[i]);
			buf_puts(g->sql, " and ");
		}
		for (i = 0; i < fk2->ncols; i++) {
			if (i)
				buf_puts(g->sql, " and ");
			col_ref(g, j, fk2->from, fk2->from_cols[i]);
			buf_puts(g->sql, " = ");
			col_ref(g, alias, fk2->to, fk2->to_cols[i]);
		}
		buf_putc(g->sql, ')');
		return;
	}
	for (i = 0; i < fk->ncols; i++) {
		if (i)
			buf_puts(g->sql, " and ");
		if (n->fk_forward) {
			col_ref(g, alias, fk->to, fk->to_cols[i]);
			buf_puts(g->sql, " = ");
			col_ref(g, palias, fk->from, fk->from_cols[i]);
		} else {
			col_ref(g, alias, fk->from, fk->from_cols[i]);
			buf_puts(g->sql, " = ");
			col_ref(g, palias, fk->to, fk->to_cols[i]);
		}
	}
}

/* " and (filters) and exists(inner embeds)..." for node n over alias. */
static int
gen_filters(struct rest_gen *g, const struct rest_node *n, const char *alias)
{
	size_t i;

	if (n->where->nkids > 0) {
		buf_puts(g->sql, " and ");
		if (gen_cond(g, n->table, alias, n->where) < 0)
			return -1;
	}
	for (i = 0; i < n->nitems; i++) {
		const struct rest_node *c = n->items[i].embed;
		char a[16];

		if (n->items[i].kind != REST_I_EMBED || !c->inner)
			continue;
		next_alias(g, "_t", a, sizeof(a));
		buf_puts(g->sql, " and exists (select 1 from ");
		rest_quote_ident(g->sql, tab(g, c->table)->name);
		buf_printf(g->sql, " %s where ", a);
		gen_join(g, c, a, alias);
		if (gen_filters(g, c, a) < 0)
			return -1;
		buf_putc(g->sql, ')');
	}
	return 0;
}

int
rest_sql_where(struct rest_gen *g, struct rest_node *n, const char *alias, int first)
{
	if (first)
		buf_puts(g->sql, " where true");
	return gen_filters(g, n, alias);
}

static int gen_rows(struct rest_gen *g, struct rest_node *n, const char *from,
    const char *alias, const char *palias, int columns);
static int gen_items(struct rest_gen *g, struct rest_node *n, const char *alias, int columns);
static int gen_obj(struct rest_gen *g, struct rest_node *n, const char *alias, int agg);

/* ARR(x) of the file's comment, around what is written between the two calls. */
static void
arr_open(struct rest_gen *g)
{
	buf_puts(g->sql, g->be == DB_PG ? "'[' || coalesce(string_agg(" : "sluice_arr(");
}

static void
arr_close(struct rest_gen *g)
{
	buf_puts(g->sql, g->be == DB_PG ? ", ','), '') || ']'" : ")");
}

/* ARR(_j): the array of the rows' objects _j. */
static void
arr_of_j(struct rest_gen *g)
{
	arr_open(g);
	buf_puts(g->sql, "_j");
	arr_close(g);
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
		rest_quote_ident(g->sql, tab(g, n->table)->name);
	buf_putc(g->sql, ' ');
	buf_puts(g->sql, alias);
	if (joins->len > 0)
		buf_append(g->sql, joins->data, joins->len);
	buf_puts(g->sql, " where ");
	if (palias != NULL)
		gen_join(g, n, alias, palias);
	else
		buf_puts(g->sql, "true");
	return gen_filters(g, n, alias);
}

/* Whether the to-one embed n's key is its table's whole primary key: at most one row. */
static int
to_one_unique(const struct rest_gen *g, const struct rest_node *n)
{
	const struct rest_fk *fk = &g->sc->fks[n->fk];
	const struct rest_table *t = tab(g, n->table);
	int i, npk = 0;

	if (t->is_view)
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
 * clause, and the value "case when <key> is null then null else OBJ end".
 * A correlated subquery would be opened, sought and closed once per parent row: a join
 * costs about half as much (an all-albums embed with tracks and their genres: 15% fewer
 * instructions).  Its own to-one embeds join the same FROM, after it.
 */
static int
gen_embed_join(struct rest_gen *g, struct rest_node *n, const char *a, const char *palias)
{
	const struct rest_fk *fk = &g->sc->fks[n->fk];
	struct buf *sql = g->sql;
	int rc;

	buf_puts(g->joins, " left join ");
	rest_quote_ident(g->joins, tab(g, n->table)->name);
	buf_printf(g->joins, " %s on ", a);
	g->sql = g->joins;
	gen_join(g, n, a, palias);
	rc = gen_filters(g, n, a);
	g->sql = sql;
	if (buf_failed(g->joins))
		sql->failed = 1;
	if (rc < 0)
		return -1;
	buf_puts(sql, "case when ");
	col_ref(g, a, fk->to, fk->to_cols[0]);
	buf_puts(sql, " is null then null else ");
	if (gen_obj(g, n, a, 0) < 0)
		return -1;
	buf_puts(sql, " end");
	return 0;
}

/* The JSON value of embed n under parent alias palias. */
static int
gen_embed(struct rest_gen *g, struct rest_node *n, const char *palias)
{
	char a[16], r[16];
	int many = n->junction >= 0 || !n->fk_forward, rc;
	struct buf joins, *outer = g->joins;

	next_alias(g, "_t", a, sizeof(a));
	next_alias(g, "_r", r, sizeof(r));
	/* The array of the rows' objects ('[]' when there are none), or the one object (NULL
	 * when there is none, which the parent's object renders as null). */
	if (n->norder == 0 && n->limit < 0 && n->offset == 0) {
		if (!many && g->joins != NULL && to_one_unique(g, n))
			return gen_embed_join(g, n, a, palias);
		/* Without order or page, aggregate the table directly: no subquery to run
		 * as a co-routine per parent row. */
		buf_init(&joins, REST_SQL_MAX);
		g->joins = &joins;
		buf_puts(g->sql, "(select ");
		rc = gen_obj(g, n, a, many);
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
		arr_of_j(g);
	else
		buf_puts(g->sql, "_j");
	buf_puts(g->sql, " from (");
	if (gen_rows(g, n, NULL, a, palias, 0) < 0)
		return -1;
	buf_printf(g->sql, ") %s%s)", r, many ? "" : " limit 1");
	return 0;
}

/*
 * The column as JSON text, 'null' for NULL.  PostgreSQL: an integer's text is its JSON;
 * to_json() renders everything else as row_to_json() would (numbers bare unless NaN or
 * infinite, timestamps ISO-8601, text escaped).  SQLite: json_quote() renders numbers
 * bare, text quoted.
 */
static void
col_json_text(struct rest_gen *g, const char *alias, int t, int c)
{
	int kind = tab(g, t)->cols[c].kind;

	if (g->be == DB_PG) {
		buf_puts(g->sql, kind == REST_K_INT ? "coalesce(" : "coalesce(to_json(");
		col_ref(g, alias, t, c);
		buf_puts(g->sql, kind == REST_K_INT ? "::text, 'null')" : ")::text, 'null')");
		return;
	}
	switch (kind) {
	case REST_K_TS:
		buf_puts(g->sql, "json_quote(strftime('%Y-%m-%dT%H:%M:%S', ");
		col_ref(g, alias, t, c);
		buf_puts(g->sql, "))");
		break;
	case REST_K_BOOL:
		buf_puts(g->sql, "case when ");
		col_ref(g, alias, t, c);
		buf_puts(g->sql, " is null then 'null' when ");
		col_ref(g, alias, t, c);
		buf_puts(g->sql, " then 'true' else 'false' end");
		break;
	case REST_K_JSON:
		buf_puts(g->sql, "coalesce(");
		col_ref(g, alias, t, c);
		buf_puts(g->sql, ", 'null')");
		break;
	default:
		buf_puts(g->sql, "json_quote(");
		col_ref(g, alias, t, c);
		buf_putc(g->sql, ')');
	}
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
		rest_sql_literal(g->sql, k.data);
		buf_puts(g->sql, " || ");
	}
	buf_free(&k);
}

/*
 * The output of n over alias: with columns, "expr as "key", ..." (CSV); without, one
 * concatenation giving the row's JSON object as text.
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
					col_json(g, alias, n->table, c);
					buf_puts(g->sql, " as ");
					rest_quote_ident(g->sql, t->cols[c].name);
				} else {
					key_text(g, t->cols[c].name, nout == 0);
					col_json_text(g, alias, n->table, c);
				}
				nout++;
			}
			continue;
		}
		if (columns && nout)
			buf_puts(g->sql, ", ");
		if (!columns)
			key_text(g, it->alias ? it->alias : it->name, nout == 0);
		nout++;
		if (it->kind == REST_I_COL) {
			if (columns)
				col_json(g, alias, n->table, rest_schema_col(t, it->name));
			else
				col_json_text(g, alias, n->table, rest_schema_col(t, it->name));
		} else if (columns) {
			if (gen_embed(g, it->embed, alias) < 0)
				return -1;
		} else {
			/* A missing to-one row is NULL, which would make the whole text NULL. */
			buf_puts(g->sql, "coalesce(");
			if (gen_embed(g, it->embed, alias) < 0)
				return -1;
			buf_puts(g->sql, ", 'null')");
		}
		if (columns) {
			buf_puts(g->sql, " as ");
			rest_quote_ident(g->sql, it->alias ? it->alias : it->name);
		}
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
	size_t i;

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
		return gen_embed(g, embed, alias);
	col_json(g, alias, t, c);
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
 * The row's JSON object as text (OBJ of the file's comment), members in the order of
 * select=; with agg, ARR(OBJ), the array of the rows' objects.
 * PostgreSQL: a concatenation (gen_obj_concat()).
 * SQLite: sluice_obj(template, value, ...) (db_sqlite_json.c); with agg,
 * sluice_arr(template, value, ...), each object built in place.  %j splices JSON text as
 * it is: embeds, booleans (col_json() gives true/false) and JSON columns (validated by
 * json()); %v renders a plain value.  A row with more members than an SQL function takes
 * is concatenated value by value instead.
 */
static int
gen_obj(struct rest_gen *g, struct rest_node *n, const char *alias, int agg)
{
	const struct rest_table *t = tab(g, n->table);
	struct buf tpl;
	size_t i, nk = 0;
	int c, k, star = n->nitems == 0 && n->parent == NULL;

	if (g->be == DB_PG)
		return gen_obj_concat(g, n, alias, agg);
	buf_init(&tpl, REST_SQL_MAX);
	buf_putc(&tpl, '{');
	for (i = 0; i < n->nitems + (size_t)star; i++) {
		const struct rest_item *it = i < n->nitems ? &n->items[i] : NULL;

		if (it == NULL || it->kind == REST_I_STAR) {
			for (c = 0; c < t->ncols; c++) {
				if (nk == REST_OBJ_MEMBERS_MAX)
					goto wide;
				k = t->cols[c].kind;
				tpl_key(&tpl, t->cols[c].name, nk++ == 0);
				buf_puts(&tpl, k == REST_K_BOOL || k == REST_K_JSON ? "%j" : "%v");
			}
			continue;
		}
		if (nk == REST_OBJ_MEMBERS_MAX)
			goto wide;
		k = it->kind == REST_I_COL ? t->cols[rest_schema_col(t, it->name)].kind :
		    REST_K_JSON;
		tpl_key(&tpl, it->alias ? it->alias : it->name, nk++ == 0);
		buf_puts(&tpl, k == REST_K_BOOL || k == REST_K_JSON ? "%j" : "%v");
	}
	buf_putc(&tpl, '}');
	if (buf_failed(&tpl))
		g->sql->failed = 1;
	buf_puts(g->sql, agg ? "sluice_arr(" : "sluice_obj(");
	rest_sql_literal(g->sql, tpl.data);
	buf_free(&tpl);
	for (i = 0; i < n->nitems + (size_t)star; i++) {
		struct rest_item *it = i < n->nitems ? &n->items[i] : NULL;

		if (it == NULL || it->kind == REST_I_STAR) {
			for (c = 0; c < t->ncols; c++)
				(void)obj_value(g, alias, n->table, c, NULL);
		} else if (obj_value(g, alias, n->table,
		    it->kind == REST_I_COL ? rest_schema_col(t, it->name) : -1,
		    it->kind == REST_I_EMBED ? it->embed : NULL) < 0)
			return -1;
	}
	buf_putc(g->sql, ')');
	return 0;
wide:
	buf_free(&tpl);
	return gen_obj_concat(g, n, alias, agg);
}

static int
gen_order_limit(struct rest_gen *g, const struct rest_node *n, const char *alias)
{
	size_t i;
	int k;

	for (i = 0; i < n->norder; i++) {
		const struct rest_order *o = &n->order[i];
		int nulls = o->nulls ? o->nulls : (o->desc ? 1 : 2);

		buf_puts(g->sql, i ? ", " : " order by ");
		col_ref(g, alias, n->table, rest_schema_col(tab(g, n->table), o->col));
		buf_puts(g->sql, o->desc ? " desc" : " asc");
		buf_puts(g->sql, nulls == 1 ? " nulls first" : " nulls last");
	}
	if (n->limit >= 0) {
		if ((k = rest_param_int(g, n->limit)) < 0)
			return -1;
		buf_puts(g->sql, " limit");
		put_param(g, k);
	} else if (n->offset > 0 && g->be == DB_SQLITE)
		buf_puts(g->sql, " limit -1");
	if (n->offset > 0) {
		if ((k = rest_param_int(g, n->offset)) < 0)
			return -1;
		buf_puts(g->sql, " offset");
		put_param(g, k);
	}
	return 0;
}

/*
 * The rows of n: "select <items> from <from> alias where <join> <filters> order limit".
 * columns: one SQL column per key (CSV); otherwise one JSON text _j.
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
	rc = columns ? gen_items(g, n, alias, 1) : gen_obj(g, n, alias, 0);
	g->joins = outer;
	if (rc == 0 && !columns)
		buf_puts(g->sql, " as _j");
	if (rc == 0)
		rc = gen_from_where(g, n, from, alias, palias, &joins);
	buf_free(&joins);
	if (rc < 0)
		return -1;
	return gen_order_limit(g, n, alias);
}

int
rest_sql_row_json(struct rest_gen *g, struct rest_node *n, const char *alias, int agg)
{
	return gen_obj(g, n, alias, agg);
}

/* One CSV field of column key of _r: quoted when it holds a quote, comma or newline. */
static void
gen_csv_field(struct rest_gen *g, const char *key)
{
	struct buf *b = g->sql;
	const char *pos = g->be == DB_PG ? "strpos" : "instr";
	const char *txt = g->be == DB_PG ? "::text" : "";
	const char *chr = g->be == DB_PG ? "chr" : "char";

	buf_puts(b, "coalesce(case when ");
	buf_printf(b, "%s(_r.", pos);
	rest_quote_ident(b, key);
	buf_printf(b, "%s, '\"') > 0 or %s(_r.", txt, pos);
	rest_quote_ident(b, key);
	buf_printf(b, "%s, ',') > 0 or %s(_r.", txt, pos);
	rest_quote_ident(b, key);
	buf_printf(b, "%s, %s(10)) > 0 or %s(_r.", txt, chr, pos);
	rest_quote_ident(b, key);
	buf_printf(b, "%s, %s(13)) > 0 then '\"' || replace(_r.", txt, chr);
	rest_quote_ident(b, key);
	buf_printf(b, "%s, '\"', '\"\"') || '\"' else _r.", txt);
	rest_quote_ident(b, key);
	buf_printf(b, "%s end, '')", txt);
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
		else if (k < max)
			keys[k++] = it->alias ? it->alias : it->name;
	}
	return k;
}

int
rest_sql_select(struct rest_gen *g, struct rest_node *root, const char *from,
    enum rest_shape shape, int count)
{
	char a[16] = "_t0";
	struct buf joins;
	int direct = shape != REST_SHAPE_CSV && root->norder == 0 &&
	    root->limit < 0 && root->offset == 0, rc = 0;

	g->seq = 0;
	buf_puts(g->sql, "select ");
	buf_init(&joins, REST_SQL_MAX);
	if (direct) {
		/* Without order or page: the array straight from the table, each object
		 * built in place, not as a value of its own copied into the array. */
		g->joins = &joins;
		rc = gen_obj(g, root, a, 1);
		g->joins = NULL;
		buf_puts(g->sql, ", count(*)");
	} else if (shape == REST_SHAPE_CSV) {
		const char *keys[1024];
		int nk = rest_sql_keys(g, root, keys, 1024), i;

		buf_puts(g->sql, g->be == DB_PG ? "coalesce(string_agg(" : "coalesce(group_concat(");
		for (i = 0; i < nk; i++) {
			if (i)
				buf_puts(g->sql, " || ',' || ");
			gen_csv_field(g, keys[i]);
		}
		if (nk == 0)
			buf_puts(g->sql, "''");
		buf_puts(g->sql, g->be == DB_PG ? ", chr(10)), ''), count(*)" :
		    ", char(10)), ''), count(*)");
	} else {
		arr_of_j(g);
		buf_puts(g->sql, ", count(*)");
	}
	if (count) {
		char c[16];

		next_alias(g, "_c", c, sizeof(c));
		buf_puts(g->sql, ", (select count(*) from ");
		if (from != NULL)
			buf_puts(g->sql, from);
		else
			rest_quote_ident(g->sql, tab(g, root->table)->name);
		buf_printf(g->sql, " %s where true", c);
		if (rc == 0)
			rc = gen_filters(g, root, c);
		buf_putc(g->sql, ')');
	}
	if (direct && rc == 0)
		rc = gen_from_where(g, root, from, a, NULL, &joins);
	buf_free(&joins);
	if (rc < 0)
		return -1;
	if (!direct) {
		buf_puts(g->sql, " from (");
		if (gen_rows(g, root, from, a, NULL, shape == REST_SHAPE_CSV) < 0)
			return -1;
		buf_puts(g->sql, ") _r");
	}
	if (buf_failed(g->sql)) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "the request is too complex");
		return -1;
	}
	return 0;
}
