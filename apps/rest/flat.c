/*
 * flat.c: a PostgreSQL read whose JSON the worker writes from plain rows.
 *
 * select.c has the database build the whole body as text: on PostgreSQL with '||' and
 * to_json() per value, which costs the backend some 2.5 us a row of a dozen columns (the
 * all-albums embed, 3,503 tracks: 20 ms of the backend a request against under 6 ms for
 * the same join returning its rows).  For the shapes below the statement returns the
 * rows instead, and this file writes their JSON: each value from its text by its
 * column's kind, as to_json() would render it, so that the body is the same byte for
 * byte as select.c's (and so SQLite's).
 *
 * The shapes: a table's columns, its to-one embeds (a foreign key this row holds,
 * recursively, each a LEFT JOIN), and at most one to-many embed of another table with
 * its own columns, to-one embeds, filters, order and page:
 *
 *   select _s.*, _e.* from (select _f0."a" as _k0, ... , _f2."k" as _k3, ...
 *       from "album" _f0 left join "artist" _f2 on ... where true <filters> <order page>) _s
 *     left join lateral (select _f1."b" as _k9, ... from "track" _f1
 *       left join "genre" _f3 on ... where _f1."album_id" = _s._k0 <filters> <order page>)
 *       _e on true
 *
 * The lateral join is run once per row of _s, in _s's order (a nested loop: it refers to
 * _s), so the rows of one parent come together and in the order select.c's correlated
 * subquery reads them; a parent starts where its key (_s's key columns, unique as the
 * target of a foreign key) changes, or where the embed found no row (its foreign key
 * null).  The to-one joins are select.c's own; a to-one embed is absent where its joined
 * key is null.  A key or a presence test reads the member that selects its column when
 * there is one (album_id above), and a column of its own only otherwise.
 *
 * What is left to select.c: SQLite (its C templates already build the body cheaply), CSV,
 * counts, computed members, spreads, many-to-many, to-many embeds nested in embeds or more
 * than one, and every column whose type's text is not its JSON by one rule below
 * (timestamps, dates, arrays, enums, domains, composites: to_json() renders them its own
 * way).
 */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "json.h"
#include "rest.h"
#include "serve.h"

enum flat_what { FLAT_COL, FLAT_ONE, FLAT_MANY };

struct flat_obj;

/* One member of an object: its key as JSON text ("key":), and a column or an embed. */
struct flat_member {
	char *key;
	size_t keylen;
	enum flat_what what;
	int col;			/* FLAT_COL: the result's column */
	int tcol;			/* FLAT_COL: the table's column it selects */
	enum rest_kind kind;
	struct flat_obj *obj;		/* FLAT_ONE, FLAT_MANY */
};

struct flat_obj {
	struct flat_member *m;
	size_t n;
	int present;			/* a column that is NULL when the row is not there
					 * (an embed's); -1 for the root */
};

/* The plan of one statement: where each value is in the result's row. */
struct flat_plan {
	struct flat_obj root;
	size_t many_at;			/* the to-many member's index in root, or root.n */
	int nkeys;			/* the parent's key columns in the result */
	int keys[REST_FK_COLS];
};

/* The generator's state: the SQL goes to g->sql, pointed at one of the parts by turns. */
struct flat_gen {
	struct rest_gen *g;
	struct arena *a;
	int k;				/* the next result column (_k<k>) */
	int nalias;			/* the next alias _f<nalias> */
};

/* Whether column c of table t renders from its text by flat_value(): to_json() writes
 * these as their text (integers, numbers), true/false, JSON as it is, or a string. */
static int
flat_col_ok(const struct rest_table *t, int c)
{
	const struct rest_col *col;

	if (c < 0 || c >= t->ncols)	/* computed fields are functions: select.c's */
		return 0;
	col = &t->cols[c];
	switch (col->kind) {
	case REST_K_INT:
	case REST_K_NUM:
	case REST_K_BOOL:
	case REST_K_JSON:
		return 1;
	case REST_K_TEXT:
		return !strcmp(col->type, "text") || !strcmp(col->type, "character varying") ||
		    !strcmp(col->type, "character") || !strcmp(col->type, "uuid");
	default:
		return 0;
	}
}

/* Whether embed n is a to-one embed flat_part() joins: the foreign key its parent holds,
 * no filter of its own. */
static int
flat_one_ok(const struct rest_gen *g, const struct rest_node *n)
{
	return n->one && n->fk_forward && n->junction < 0 && !n->spread &&
	    n->where->nkids == 0 && n->norder == 0 && n->limit < 0 && n->offset == 0 &&
	    !g->sc->tables[n->table].is_view;
}

/* At most this many columns in one statement's result: PostgreSQL refuses a select list
 * of more than 1,664, which select.c's one concatenated value never meets. */
#define FLAT_COLS_MAX	1000

/* Whether the members of n fit: columns of the kinds above, to-one embeds of the same
 * (recursively) and, where many allows it (the root), one to-many embed whose members
 * fit without one.  *nmany counts the to-many embeds, *ncols the result's columns. */
static int
flat_items_ok(const struct rest_gen *g, const struct rest_node *n, int many, int *nmany,
    int *ncols)
{
	const struct rest_table *t = &g->sc->tables[n->table];
	size_t i;
	int c;

	if (n->nitems == 0 && n->parent == NULL) {
		for (c = 0; c < t->ncols; c++)
			if (!flat_col_ok(t, c))
				return 0;
		*ncols += t->ncols;
	}
	/* An embed's key, and the room its members take below. */
	if ((*ncols += (int)n->nitems * t->ncols + 1 + REST_FK_COLS) > FLAT_COLS_MAX)
		return 0;
	for (i = 0; i < n->nitems; i++) {
		const struct rest_item *it = &n->items[i];
		const struct rest_node *e = it->embed;

		switch (it->kind) {
		case REST_I_STAR:
			for (c = 0; c < t->ncols; c++)
				if (!flat_col_ok(t, c))
					return 0;
			break;
		case REST_I_COL:
			if (!flat_col_ok(t, rest_schema_col(t, it->name)))
				return 0;
			break;
		case REST_I_EMBED:
			if (e->nitems == 0)	/* rel(): no key (its !inner is a filter) */
				break;
			/* A to-one embed, or the root's one to-many embed of a table. */
			if (!flat_one_ok(g, e) && !(many && !e->one && !e->fk_forward &&
			    e->junction < 0 && !e->spread && !g->sc->tables[e->table].is_view &&
			    ++*nmany == 1))
				return 0;
			if (!flat_items_ok(g, e, 0, nmany, ncols))
				return 0;
			break;
		default:
			return 0;
		}
	}
	return 1;
}

int
rest_flat_fits(const struct rest_gen *g, const struct rest_node *root,
    enum rest_accept acc, int count, int64_t planned, enum db_backend backend)
{
	int nmany = 0, ncols = 0;

	return backend == DB_PG && (acc == REST_ACCEPT_JSON || acc == REST_ACCEPT_OBJECT) &&
	    !count && planned < 0 && !g->sc->tables[root->table].is_view &&
	    flat_items_ok(g, root, 1, &nmany, &ncols);
}

/* A member of o, its key escaped once for every row.  NULL when the arena is full. */
static struct flat_member *
flat_member(struct flat_gen *f, struct flat_obj *o, const char *key, enum flat_what what)
{
	struct flat_member *m = &o->m[o->n];
	struct buf b;

	buf_init(&b, 4096);
	if (o->n > 0)
		buf_putc(&b, ',');
	json_escape(&b, key, strlen(key));
	buf_putc(&b, ':');
	m->key = buf_failed(&b) ? NULL : arena_strndup(f->a, b.data, b.len);
	m->keylen = b.len;
	buf_free(&b);
	if (m->key == NULL)
		return NULL;
	m->what = what;
	m->col = -1;
	m->tcol = -1;
	m->obj = NULL;
	o->n++;
	return m;
}

/* ", alias."col" as _k<k>" (no comma for the list's first) into g->sql: the next column. */
static int
flat_select(struct flat_gen *f, const char *alias, int table, int c)
{
	if (f->k > 0)
		buf_puts(f->g->sql, ", ");
	rest_gen_col(f->g, alias, table, c);
	buf_printf(f->g->sql, " as _k%d", f->k);
	return f->k++;
}

/* The result column of o's member that is table column c, or -1: a key or a presence
 * test reads it there rather than from a column of its own (fewer values for the backend
 * to write and the worker to read, on every row). */
static int
flat_has_col(const struct flat_obj *o, int c)
{
	size_t i;

	for (i = 0; i < o->n; i++)
		if (o->m[i].what == FLAT_COL && o->m[i].tcol == c)
			return o->m[i].col;
	return -1;
}

static int flat_part(struct flat_gen *f, struct rest_node *n, const char *alias,
    struct flat_obj *o, struct buf *sel, struct buf *from, struct rest_node **many);

/* To-one embed e of the part over palias: its LEFT JOIN into from, its key (whether the
 * row is there) and its members into sel. */
static int
flat_one(struct flat_gen *f, struct rest_node *e, const char *palias, struct flat_obj *o,
    struct buf *sel, struct buf *from)
{
	const struct rest_fk *fk = &f->g->sc->fks[e->fk];
	char a[16];

	(void)snprintf(a, sizeof(a), "_f%d", f->nalias++);
	f->g->sql = from;
	buf_puts(from, " left join ");
	sqlb_ident(from, f->g->sc->tables[e->table].name);
	buf_printf(from, " %s on ", a);
	rest_sql_join(f->g, e, a, palias);
	f->g->sql = sel;
	if (flat_part(f, e, a, o, sel, from, NULL) < 0)
		return -1;
	/* The joined key: NULL exactly when no row joined. */
	f->g->sql = sel;
	if ((o->present = flat_has_col(o, fk->to_cols[0])) < 0)
		o->present = flat_select(f, a, fk->to, fk->to_cols[0]);
	return 0;
}

/*
 * The members of node n over alias into o: its columns into sel (g->sql's turn), its
 * to-one embeds' joins into from.  many: where the root's to-many embed goes (NULL
 * below the root); its member is made, its SQL left to the caller.  0 or -1.
 */
static int
flat_part(struct flat_gen *f, struct rest_node *n, const char *alias, struct flat_obj *o,
    struct buf *sel, struct buf *from, struct rest_node **many)
{
	const struct rest_table *t = &f->g->sc->tables[n->table];
	size_t i;
	int c, star = n->nitems == 0 && n->parent == NULL;
	struct flat_member *m;

	o->n = 0;
	if ((o->m = arena_alloc(f->a, (t->ncols * (n->nitems + 1) + n->nitems + 1) *
	    sizeof(*o->m))) == NULL)
		return -1;
	f->g->sql = sel;
	for (i = 0; i < n->nitems + (size_t)star; i++) {
		struct rest_item *it = i < n->nitems ? &n->items[i] : NULL;

		if (it == NULL || it->kind == REST_I_STAR) {
			for (c = 0; c < t->ncols; c++) {
				if ((m = flat_member(f, o, t->cols[c].name, FLAT_COL)) == NULL)
					return -1;
				m->kind = t->cols[c].kind;
				m->tcol = c;
				m->col = flat_select(f, alias, n->table, c);
			}
			continue;
		}
		if (it->kind == REST_I_EMBED && it->embed->nitems == 0)
			continue;
		if ((m = flat_member(f, o, it->alias ? it->alias : it->name,
		    it->kind == REST_I_COL ? FLAT_COL : it->embed->one ? FLAT_ONE :
		    FLAT_MANY)) == NULL)
			return -1;
		if (m->what == FLAT_COL) {
			c = rest_schema_col(t, it->name);
			m->kind = t->cols[c].kind;
			m->tcol = c;
			m->col = flat_select(f, alias, n->table, c);
		} else if ((m->obj = arena_alloc(f->a, sizeof(*m->obj))) == NULL ||
		    (m->what == FLAT_MANY && many == NULL))	/* none below the root */
			return -1;
		else if (m->what == FLAT_ONE) {
			if (flat_one(f, it->embed, alias, m->obj, sel, from) < 0)
				return -1;
		} else
			*many = it->embed;
	}
	return 0;
}

/*
 * The lateral join of the root's to-many embed e into from: its rows for the row of _s
 * whose key is the result's columns p->keys.  0 or -1.
 */
static int
flat_many(struct flat_gen *f, struct rest_node *e, struct flat_obj *o, struct flat_plan *p,
    struct buf *from)
{
	const struct rest_fk *fk = &f->g->sc->fks[e->fk];
	struct buf sel, joins;
	char a[16];
	int i, rc = -1;

	buf_init(&sel, REST_SQL_MAX);
	buf_init(&joins, REST_SQL_MAX);
	(void)snprintf(a, sizeof(a), "_f%d", f->nalias++);
	if (flat_part(f, e, a, o, &sel, &joins, NULL) < 0)
		goto out;
	/* The row's foreign key, equal to the parent's key: NULL exactly when the embed
	 * found no row. */
	f->g->sql = &sel;
	if ((o->present = flat_has_col(o, fk->from_cols[0])) < 0)
		o->present = flat_select(f, a, fk->from, fk->from_cols[0]);
	f->g->sql = from;
	buf_puts(from, " left join lateral (select ");
	/* Every column of sel follows _s's (the parent's key at least): a comma leads. */
	if (sel.len >= 2 && !memcmp(sel.data, ", ", 2))
		buf_append(from, sel.data + 2, sel.len - 2);
	else
		buf_append(from, sel.data, sel.len);
	buf_puts(from, " from ");
	sqlb_ident(from, f->g->sc->tables[e->table].name);
	buf_printf(from, " %s", a);
	buf_append(from, joins.data, joins.len);
	buf_puts(from, " where ");
	for (i = 0; i < fk->ncols; i++) {
		if (i)
			buf_puts(from, " and ");
		rest_gen_col(f->g, a, fk->from, fk->from_cols[i]);
		buf_printf(from, " = _s._k%d", p->keys[i]);
	}
	if (rest_sql_filters(f->g, e, a) < 0 || rest_sql_order_limit(f->g, e, a, 1) < 0)
		goto out;
	/* offset 0: the subquery stays one, run for each row of _s in turn, where the
	 * planner would otherwise pull it up into a join of its own choosing (a hash join
	 * mixes the parents' rows). */
	if (e->offset == 0)
		buf_puts(from, " offset 0");
	buf_puts(from, ") _e on true");
	rc = buf_failed(&sel) || buf_failed(&joins) ? -1 : 0;
out:
	buf_free(&sel);
	buf_free(&joins);
	return rc;
}

/* The statement into sql (g->sql's buffer) and its plan into p.  0, or -1 with g->e set. */
static int
flat_sql(struct rest_gen *g, struct rest_node *root, struct flat_plan *p)
{
	struct flat_gen f = { g, g->a, 0, 1 };
	struct buf *sql = g->sql, sel, from;
	struct rest_node *many = NULL;
	const struct rest_fk *fk;
	size_t i;
	int rc = -1;

	buf_init(&sel, REST_SQL_MAX);
	buf_init(&from, REST_SQL_MAX);
	g->e->status = 0;
	g->seq = 0;
	g->bare = 0;
	p->root.present = -1;
	if (flat_part(&f, root, "_f0", &p->root, &sel, &from, &many) < 0)
		goto out;
	p->many_at = p->root.n;
	p->nkeys = 0;
	if (many != NULL) {
		fk = &g->sc->fks[many->fk];
		for (i = 0; i < p->root.n; i++)
			if (p->root.m[i].what == FLAT_MANY)
				p->many_at = i;
		g->sql = &sel;
		for (p->nkeys = 0; p->nkeys < fk->ncols; p->nkeys++)
			if ((p->keys[p->nkeys] = flat_has_col(&p->root,
			    fk->to_cols[p->nkeys])) < 0)
				p->keys[p->nkeys] = flat_select(&f, "_f0", fk->to,
				    fk->to_cols[p->nkeys]);
	}
	g->sql = sql;
	buf_puts(sql, many != NULL ? "select _s.*, _e.* from (select " : "select ");
	buf_append(sql, sel.data, sel.len);
	buf_puts(sql, " from ");
	sqlb_ident(sql, g->sc->tables[root->table].name);
	buf_puts(sql, " _f0");
	buf_append(sql, from.data, from.len);
	buf_puts(sql, " where true");
	if (rest_sql_filters(g, root, "_f0") < 0 || rest_sql_order_limit(g, root, "_f0", 1) < 0)
		goto out;
	if (many != NULL) {
		buf_reset(&from, 0);
		buf_puts(sql, ") _s");
		if (flat_many(&f, many, p->root.m[p->many_at].obj, p, &from) < 0)
			goto out;
		g->sql = sql;
		buf_append(sql, from.data, from.len);
	}
	rc = 0;
out:
	g->sql = sql;
	if (rc == 0 && (buf_failed(sql) || buf_failed(&sel) || buf_failed(&from))) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "the request is too complex");
		rc = -1;
	} else if (rc < 0 && g->e->status == 0)
		rest_err_set(g->e, 413, "too_large", NULL, "the request is too large");
	buf_free(&sel);
	buf_free(&from);
	return rc;
}

/* Column col of the row as to_json() writes a value of kind. */
static void
flat_value(struct buf *b, struct db_stmt *st, int col, enum rest_kind kind)
{
	size_t len;
	const char *v = db_column_text(st, col, &len);

	if (v == NULL) {
		buf_append(b, "null", 4);
		return;
	}
	switch (kind) {
	case REST_K_INT:
	case REST_K_JSON:
		buf_append(b, v, len);
		break;
	case REST_K_NUM:
		/* NaN and the infinities are no JSON numbers: to_json() quotes them. */
		if (v[0] == 'N' || v[0] == 'I' || (v[0] == '-' && v[1] == 'I'))
			json_escape(b, v, len);
		else
			buf_append(b, v, len);
		break;
	case REST_K_BOOL:
		if (v[0] == 't')
			buf_append(b, "true", 4);
		else
			buf_append(b, "false", 5);
		break;
	default:
		json_escape(b, v, len);
	}
}

static void flat_object(struct buf *b, struct db_stmt *st, const struct flat_obj *o,
    size_t from, size_t to);

/* Members [from, to) of o, each with its key (and the comma before all but the first). */
static void
flat_members(struct buf *b, struct db_stmt *st, const struct flat_obj *o, size_t from,
    size_t to)
{
	size_t i;

	for (i = from; i < to; i++) {
		const struct flat_member *m = &o->m[i];

		buf_append(b, m->key, m->keylen);
		if (m->what == FLAT_COL)
			flat_value(b, st, m->col, m->kind);
		else
			flat_object(b, st, m->obj, 0, m->obj->n);
	}
}

/* o's object, or null when its row is not there; members [from, to) only. */
static void
flat_object(struct buf *b, struct db_stmt *st, const struct flat_obj *o, size_t from,
    size_t to)
{
	if (o->present >= 0 && db_column_isnull(st, o->present)) {
		buf_append(b, "null", 4);
		return;
	}
	buf_putc(b, '{');
	flat_members(b, st, o, from, to);
	buf_putc(b, '}');
}

/*
 * Whether the row starts another parent than the last row's: its key (the values of
 * p->keys, each as its length and bytes, into now) differs from last's, or either row
 * has no embedded row (a parent without one is a row of its own).  last gets the row's
 * key, emptied when it has no embedded row.
 */
static int
flat_new_parent(struct db_stmt *st, const struct flat_plan *p, const struct flat_obj *many,
    struct buf *last, struct buf *now)
{
	int i, absent = db_column_isnull(st, many->present), same;
	const char *v;
	size_t len;

	buf_reset(now, 256);
	for (i = 0; i < p->nkeys; i++) {
		v = db_column_text(st, p->keys[i], &len);
		buf_append(now, &len, sizeof(len));
		buf_append(now, v != NULL ? v : "", len);
	}
	same = !absent && last->len > 0 && now->len == last->len &&
	    memcmp(now->data, last->data, now->len) == 0;
	buf_reset(last, 256);
	if (!absent)
		buf_append(last, now->data, now->len);
	return !same;
}

/* The rows of st as the body's JSON array into b; *rows: the root's objects.  0; -1 when
 * the body passed max bytes (0: no cap) or b's own cap; -2 when the database failed. */
static int
flat_rows(struct buf *b, struct db_stmt *st, const struct flat_plan *p, int64_t max,
    int64_t *rows)
{
	const struct flat_obj *root = &p->root;
	const struct flat_obj *many = p->many_at < root->n ? root->m[p->many_at].obj : NULL;
	struct buf last, now, tail;
	int rc, open = 0;

	buf_init(&last, REST_SQL_MAX);
	buf_init(&now, REST_SQL_MAX);
	buf_init(&tail, b->cap);
	*rows = 0;
	buf_putc(b, '[');
	while ((rc = db_step(st)) == DB_ROW) {
		if (many == NULL) {
			if ((*rows)++)
				buf_putc(b, ',');
			flat_object(b, st, root, 0, root->n);
		} else if (flat_new_parent(st, p, many, &last, &now)) {
			if (open) {
				buf_putc(b, ']');
				buf_append(b, tail.data, tail.len);
				buf_putc(b, '}');
			}
			if ((*rows)++)
				buf_putc(b, ',');
			buf_putc(b, '{');
			flat_members(b, st, root, 0, p->many_at);
			buf_append(b, root->m[p->many_at].key, root->m[p->many_at].keylen);
			buf_putc(b, '[');
			/* What follows the array, from this row: the parent's other rows
			 * hold the same values. */
			buf_reset(&tail, 0);
			flat_members(&tail, st, root, p->many_at + 1, root->n);
			open = 1;
			if (!db_column_isnull(st, many->present))
				flat_object(b, st, many, 0, many->n);
		} else {
			buf_putc(b, ',');
			flat_object(b, st, many, 0, many->n);
		}
		if ((max > 0 && (int64_t)b->len > max) || buf_failed(b))
			break;
	}
	if (open && rc == DB_DONE) {
		buf_putc(b, ']');
		buf_append(b, tail.data, tail.len);
		buf_putc(b, '}');
	}
	buf_putc(b, ']');
	buf_free(&last);
	buf_free(&now);
	buf_free(&tail);
	if (rc == DB_ROW)
		return -1;
	return rc == DB_DONE ? 0 : -2;
}

int
rest_flat_read(struct req *rq, struct resp *rs, struct rest_thread *t, struct rest_gen *g,
    struct rest_node *root, enum rest_accept acc)
{
	struct flat_plan p;
	struct db_stmt *st;
	int64_t rows;
	int rc;

	memset(&p, 0, sizeof(p));
	if (flat_sql(g, root, &p) < 0)
		return rest_error(rs, g->e);
	if (rest_bind_run(rq, rs, t, g->p, &st) < 0)
		return 0;
	buf_reset(&rs->body, 1 << 20);
	rc = flat_rows(&rs->body, st, &p, g->body_max, &rows);
	db_reset(st);
	if (rc == -2)
		return rest_db_error(rs, t, rq->db);
	if (rc < 0 || buf_failed(&rs->body) ||
	    (g->body_max > 0 && (int64_t)rs->body.len > g->body_max))
		/* Past the response cap, as select.c's capped statement fails there. */
		return serve_db_error_sqlstate(rs, DB_EINPUT, "54000");
	return rest_answer_rows(rq, rs, t, root, acc, rows);
}
