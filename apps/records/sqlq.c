/*
 * sqlq.c: see sqlq.h.
 */
#include <string.h>

#include "sqlq.h"

const struct sqlq_dialect sqlq_sqlite = {
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
	/* The elements in order: a compound subquery's ORDER BY feeds the aggregate (SQLite
	 * does not flatten a compound subquery into an aggregate query). */
	.merge = {
		"(SELECT json_group_array(value) FROM (SELECT value, 0 AS g, key AS k FROM "
		    "json_each(",
		") UNION ALL SELECT value, 1, key FROM json_each(",
		") WHERE value NOT IN (SELECT value FROM json_each(",
		")) UNION ALL SELECT value, 2, key FROM json_each(",
		") ORDER BY 2, 3))",
	},
};

const struct sqlq_dialect sqlq_pg = {
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
	.merge = {
		"(SELECT COALESCE(jsonb_agg(v ORDER BY g, k), '[]') FROM (SELECT v, 0 AS g, k "
		    "FROM jsonb_array_elements_text(CAST(",
		" AS jsonb)) WITH ORDINALITY AS p(v, k) UNION ALL SELECT v, 1, k FROM "
		    "jsonb_array_elements_text(",
		") WITH ORDINALITY AS b(v, k) WHERE v NOT IN (SELECT jsonb_array_elements_text("
		    "CAST(",
		" AS jsonb))) UNION ALL SELECT v, 2, k FROM jsonb_array_elements_text(CAST(",
		" AS jsonb)) WITH ORDINALITY AS a(v, k)) AS m)",
	},
};

void
sqlq_init(struct sqlq *q, struct buf *sql, struct arena *a, enum db_backend backend)
{
	buf_reset(sql, 1 << 20);
	q->sql = sql;
	q->arena = a;
	q->d = backend == DB_PG ? &sqlq_pg : &sqlq_sqlite;
	q->nbinds = 0;
	q->alias = 0;
}

static struct sqlq_bind *
sqlq_add(struct sqlq *q, enum sqlq_kind kind)
{
	struct sqlq_bind *b;

	if (q->nbinds >= SQLQ_BINDS_MAX)
		return NULL;
	b = &q->binds[q->nbinds++];
	memset(b, 0, sizeof(*b));
	b->kind = kind;
	buf_putc(q->sql, '$');
	buf_put_int(q->sql, q->nbinds);
	return b;
}

int
sqlq_text(struct sqlq *q, const char *s, size_t len)
{
	struct sqlq_bind *b = sqlq_add(q, SQLQ_TEXT);

	if (b == NULL)
		return -1;
	b->s = s;
	b->len = len;
	return 0;
}

int
sqlq_int(struct sqlq *q, int64_t v)
{
	struct sqlq_bind *b = sqlq_add(q, SQLQ_INT);

	if (b == NULL)
		return -1;
	b->i = v;
	return 0;
}

int
sqlq_double(struct sqlq *q, double v)
{
	struct sqlq_bind *b = sqlq_add(q, SQLQ_DOUBLE);

	if (b == NULL)
		return -1;
	b->d = v;
	return 0;
}

int
sqlq_null(struct sqlq *q)
{
	return sqlq_add(q, SQLQ_NULL) == NULL ? -1 : 0;
}

void
sqlq_col(struct buf *b, const char *alias, const char *name)
{
	buf_puts(b, alias);
	buf_puts(b, ".\"");
	buf_puts(b, name);
	buf_putc(b, '"');
}

int
sqlq_in_json(struct sqlq *q, const char *json, size_t len)
{
	buf_puts(q->sql, q->d->json_param);
	if (sqlq_text(q, json, len) < 0)
		return -1;
	buf_puts(q->sql, q->d->json_param_close);
	return 0;
}

int
sqlq_bind_all(const struct sqlq *q, struct db_stmt *st)
{
	int i, rc = 0;

	for (i = 0; i < q->nbinds && rc == 0; i++) {
		const struct sqlq_bind *b = &q->binds[i];

		if (b->kind == SQLQ_TEXT)
			rc = db_bind_text(st, i + 1, b->s, b->len);
		else if (b->kind == SQLQ_INT)
			rc = db_bind_int(st, i + 1, b->i);
		else if (b->kind == SQLQ_DOUBLE)
			rc = db_bind_double(st, i + 1, b->d);
		else
			rc = db_bind_null(st, i + 1);
	}
	return rc;
}

int
sqlq_merge(struct sqlq *q, const char *alias, const char *col, const char *pre,
    const char *app, const char *rm)
{
	int rc = 0;

	buf_puts(q->sql, q->d->merge[0]);
	rc |= sqlq_text(q, pre, strlen(pre));
	buf_puts(q->sql, q->d->merge[1]);
	sqlq_col(q->sql, alias, col);
	buf_puts(q->sql, q->d->merge[2]);
	rc |= sqlq_text(q, rm, strlen(rm));
	buf_puts(q->sql, q->d->merge[3]);
	rc |= sqlq_text(q, app, strlen(app));
	buf_puts(q->sql, q->d->merge[4]);
	return rc < 0 ? -1 : 0;
}
