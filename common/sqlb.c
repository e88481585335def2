/*
 * sqlb.c: see sqlb.h.
 */
#include <string.h>

#include "arena.h"
#include "sqlb.h"

const struct sqlb_dialect sqlb_sqlite = {
	.backend = DB_SQLITE,
	.like = "LIKE",
	.is_not = "IS NOT",
	.each_open = "json_each(",
	.each_close = ") AS ",
	.each_alias = "",
	.json_param = "(SELECT value FROM json_each(",
	.json_param_close = "))",
	.collate = "",
	.json_length = "json_array_length(",
	.json_cmp_col_open = "json(",
	.json_cmp_col_close = ")",
	.json_cmp_val_open = "json(",
	.json_cmp_val_close = ")",
};

const struct sqlb_dialect sqlb_pg = {
	.backend = DB_PG,
	.like = "ILIKE",
	.is_not = "IS DISTINCT FROM",
	.each_open = "jsonb_array_elements_text(",
	.each_close = ") AS ",
	.each_alias = "(value)",
	.json_param = "(SELECT jsonb_array_elements_text(CAST(",
	.json_param_close = " AS jsonb)))",
	.collate = " COLLATE \"C\"",
	.json_length = "jsonb_array_length(",
	.json_cmp_col_open = "",
	.json_cmp_col_close = "",
	.json_cmp_val_open = "CAST(",
	.json_cmp_val_close = " AS jsonb)",
};

const struct sqlb_dialect *
sqlb_dialect_of(enum db_backend backend)
{
	return backend == DB_PG ? &sqlb_pg : &sqlb_sqlite;
}

void
sqlb_vals_init(struct sqlb_vals *vals, struct arena *a, int max)
{
	*vals = (struct sqlb_vals){ .v = NULL, .n = 0, .max = max, .cap = 0, .arena = a };
}

/* The next value, zeroed but for its kind; NULL at the cap or when the arena is full.  The
 * array doubles from 16, so a statement of a few values takes a few hundred bytes. */
static struct sqlb_val *
vals_add(struct sqlb_vals *vals, enum sqlb_kind kind)
{
	struct sqlb_val *v;

	if (vals->n >= vals->max)
		return NULL;
	if (vals->n == vals->cap) {
		int cap = vals->cap == 0 ? 16 : 2 * vals->cap;

		if (cap > vals->max)
			cap = vals->max;
		if ((v = arena_alloc(vals->arena, (size_t)cap * sizeof(*v))) == NULL)
			return NULL;
		if (vals->n > 0)
			memcpy(v, vals->v, (size_t)vals->n * sizeof(*v));
		vals->v = v;
		vals->cap = cap;
	}
	v = &vals->v[vals->n++];
	memset(v, 0, sizeof(*v));
	v->kind = kind;
	return v;
}

int
sqlb_val_text(struct sqlb_vals *vals, const char *s, size_t len)
{
	struct sqlb_val *v = vals_add(vals, SQLB_TEXT);

	if (v == NULL)
		return -1;
	v->s = s;
	v->len = len;
	return vals->n;
}

int
sqlb_val_int(struct sqlb_vals *vals, int64_t i)
{
	struct sqlb_val *v = vals_add(vals, SQLB_INT);

	if (v == NULL)
		return -1;
	v->i = i;
	return vals->n;
}

int
sqlb_val_double(struct sqlb_vals *vals, double d)
{
	struct sqlb_val *v = vals_add(vals, SQLB_DOUBLE);

	if (v == NULL)
		return -1;
	v->d = d;
	return vals->n;
}

int
sqlb_val_null(struct sqlb_vals *vals)
{
	return vals_add(vals, SQLB_NULL) == NULL ? -1 : vals->n;
}

int
sqlb_bind_all(const struct sqlb_vals *vals, struct db_stmt *st)
{
	int i, rc = 0;

	for (i = 0; i < vals->n && rc == 0; i++) {
		const struct sqlb_val *v = &vals->v[i];

		if (v->kind == SQLB_TEXT)
			rc = db_bind_text(st, i + 1, v->s, v->len);
		else if (v->kind == SQLB_INT)
			rc = db_bind_int(st, i + 1, v->i);
		else if (v->kind == SQLB_DOUBLE)
			rc = db_bind_double(st, i + 1, v->d);
		else
			rc = db_bind_null(st, i + 1);
	}
	return rc;
}

/* s between two q, each q inside doubled: a run without q is appended at once (every
 * statement quotes dozens of names). */
static void
quote_doubled(struct buf *b, const char *s, char q)
{
	const char *e;

	buf_putc(b, q);
	while ((e = strchr(s, q)) != NULL) {
		buf_append(b, s, (size_t)(e - s + 1));
		buf_putc(b, q);
		s = e + 1;
	}
	buf_puts(b, s);
	buf_putc(b, q);
}

void
sqlb_ident(struct buf *b, const char *name)
{
	quote_doubled(b, name, '"');
}

void
sqlb_literal(struct buf *b, const char *s)
{
	quote_doubled(b, s, '\'');
}

void
sqlb_col(struct buf *b, const char *alias, const char *name)
{
	buf_puts(b, alias);
	buf_putc(b, '.');
	quote_doubled(b, name, '"');
}

void
sqlb_param(struct buf *b, int k)
{
	buf_putc(b, '$');
	buf_put_int(b, k);
}

void
sqlb_init(struct sqlb *q, struct buf *sql, struct arena *a, enum db_backend backend)
{
	buf_reset(sql, 1 << 20);
	q->sql = sql;
	q->arena = a;
	q->d = sqlb_dialect_of(backend);
	sqlb_vals_init(&q->vals, a, SQLB_VALS_MAX);
	q->alias = 0;
}

/* Appends $k for a value just recorded as k, or passes -1 on. */
static int
put(struct sqlb *q, int k)
{
	if (k < 0)
		return -1;
	sqlb_param(q->sql, k);
	return 0;
}

int
sqlb_text(struct sqlb *q, const char *s, size_t len)
{
	return put(q, sqlb_val_text(&q->vals, s, len));
}

int
sqlb_int(struct sqlb *q, int64_t v)
{
	return put(q, sqlb_val_int(&q->vals, v));
}

int
sqlb_double(struct sqlb *q, double v)
{
	return put(q, sqlb_val_double(&q->vals, v));
}

int
sqlb_null(struct sqlb *q)
{
	return put(q, sqlb_val_null(&q->vals));
}

int
sqlb_in_json(struct sqlb *q, const char *json, size_t len)
{
	buf_puts(q->sql, q->d->json_param);
	if (sqlb_text(q, json, len) < 0)
		return -1;
	buf_puts(q->sql, q->d->json_param_close);
	return 0;
}

int
sqlb_bind(const struct sqlb *q, struct db_stmt *st)
{
	return sqlb_bind_all(&q->vals, st);
}
