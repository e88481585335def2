/*
 * test_sqlb.c: the SQL statement builder (common/sqlb.c): hostile identifiers and literals
 * quoted so that they stay one token, the value cap (the value past it refused, nothing
 * appended), placeholders numbered in the order the values came, each back end's record,
 * and every kind of value bound to a real SQLite statement.
 */
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "buf.h"
#include "db.h"
#include "harness.h"
#include "sqlb.h"

/* What one call appended, as a string (b is emptied first). */
static const char *
quoted(struct buf *b, void (*fn)(struct buf *, const char *), const char *s)
{
	buf_reset(b, 0);
	fn(b, s);
	return buf_failed(b) ? NULL : b->data;
}

static void
test_ident_hostile(void)
{
	static const struct {
		const char *in, *want;
	} t[] = {
		{ "title", "\"title\"" },
		{ "", "\"\"" },
		{ "\"", "\"\"\"\"" },
		{ "a\"b", "\"a\"\"b\"" },
		{ "\"; DROP TABLE t; --", "\"\"\"; DROP TABLE t; --\"" },
		{ "x\"\"y", "\"x\"\"\"\"y\"" },
		{ "it's", "\"it's\"" },
		{ "ends\"", "\"ends\"\"\"" },
		{ "\xc3\xa9t\xc3\xa9", "\"\xc3\xa9t\xc3\xa9\"" },
	};
	struct buf b;
	size_t i;

	buf_init(&b, 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_STR(quoted(&b, sqlb_ident, t[i].in), t[i].want);
	/* A NUL ends the name: what follows it never reaches the text. */
	CHECK_STR(quoted(&b, sqlb_ident, "a\0\"b"), "\"a\"");
	buf_free(&b);
}

static void
test_literal_hostile(void)
{
	static const struct {
		const char *in, *want;
	} t[] = {
		{ "abc", "'abc'" },
		{ "", "''" },
		{ "'", "''''" },
		{ "it's", "'it''s'" },
		{ "'); DELETE FROM t; --", "'''); DELETE FROM t; --'" },
		{ "say \"hi\"", "'say \"hi\"'" },
		{ "\\'", "'\\'''" },
	};
	struct buf b;
	size_t i;

	buf_init(&b, 0);
	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		CHECK_STR(quoted(&b, sqlb_literal, t[i].in), t[i].want);
	CHECK_STR(quoted(&b, sqlb_literal, "a\0'"), "'a'");
	buf_free(&b);
}

static void
test_col_and_param(void)
{
	struct buf b;

	buf_init(&b, 0);
	sqlb_col(&b, "_t0", "na\"me");
	buf_putc(&b, ' ');
	sqlb_param(&b, 1);
	buf_putc(&b, ' ');
	sqlb_param(&b, 1024);
	CHECK_STR(b.data, "_t0.\"na\"\"me\" $1 $1024");
	buf_free(&b);
}

/* n == max: the next value is refused, the ones before kept. */
static void
test_vals_cap(void)
{
	struct arena *a = arena_new(1 << 20);
	struct sqlb_vals v;
	int i, ok = 1;

	sqlb_vals_init(&v, a, 3);
	CHECK_INT(v.n, 0);
	CHECK_INT(sqlb_val_text(&v, "x", 1), 1);
	CHECK_INT(sqlb_val_int(&v, 7), 2);
	CHECK_INT(sqlb_val_null(&v), 3);
	CHECK_INT(sqlb_val_double(&v, 1.5), -1);
	CHECK_INT(sqlb_val_text(&v, "y", 1), -1);
	CHECK_INT(v.n, 3);
	CHECK(v.v[0].kind == SQLB_TEXT && v.v[1].kind == SQLB_INT && v.v[1].i == 7 &&
	    v.v[2].kind == SQLB_NULL);

	/* A cap of 0 takes nothing; a large one grows past every doubling and keeps the
	 * values in place. */
	sqlb_vals_init(&v, a, 0);
	CHECK_INT(sqlb_val_null(&v), -1);
	sqlb_vals_init(&v, a, 1000);
	for (i = 0; i < 1000; i++)
		if (sqlb_val_int(&v, i) != i + 1)
			ok = 0;
	CHECK(ok);
	CHECK_INT(sqlb_val_int(&v, 0), -1);
	for (i = 0; i < 1000; i++)
		if (v.v[i].kind != SQLB_INT || v.v[i].i != i)
			ok = 0;
	CHECK(ok);
	arena_free(a);
}

/* A full arena refuses a value as the cap does. */
static void
test_vals_arena_full(void)
{
	struct arena *a = arena_new(64);
	struct sqlb_vals v;

	sqlb_vals_init(&v, a, 100);
	CHECK_INT(sqlb_val_int(&v, 1), -1);
	CHECK_INT(v.n, 0);
	arena_free(a);
}

/* sqlb_text() and friends append $1, $2, ... in the order the values came; past the cap,
 * nothing is appended. */
static void
test_statement_order(void)
{
	struct arena *a = arena_new(1 << 20);
	struct buf sql;
	struct sqlb q;
	int i, rc = 0;

	buf_init(&sql, 0);
	sqlb_init(&q, &sql, a, DB_SQLITE);
	CHECK(q.d == &sqlb_sqlite);
	buf_puts(q.sql, "SELECT ");
	CHECK_INT(sqlb_text(&q, "a", 1), 0);
	buf_puts(q.sql, ", ");
	CHECK_INT(sqlb_int(&q, 2), 0);
	buf_puts(q.sql, ", ");
	CHECK_INT(sqlb_double(&q, 3.5), 0);
	buf_puts(q.sql, ", ");
	CHECK_INT(sqlb_null(&q), 0);
	CHECK_STR(sql.data, "SELECT $1, $2, $3, $4");
	CHECK_INT(q.vals.n, 4);

	sqlb_init(&q, &sql, a, DB_PG);
	CHECK_INT((int)sql.len, 0);
	CHECK_INT(q.vals.n, 0);
	for (i = 0; i < SQLB_VALS_MAX; i++)
		rc |= sqlb_null(&q);
	CHECK_INT(rc, 0);
	CHECK_INT(sqlb_null(&q), -1);
	CHECK(sql.len >= 5 && memcmp(sql.data + sql.len - 5, "$1024", 5) == 0);
	buf_free(&sql);
	arena_free(a);
}

static void
test_dialects(void)
{
	struct arena *a = arena_new(1 << 20);
	struct buf sql;
	struct sqlb q;

	CHECK(sqlb_dialect_of(DB_SQLITE) == &sqlb_sqlite);
	CHECK(sqlb_dialect_of(DB_PG) == &sqlb_pg);
	CHECK(sqlb_sqlite.backend == DB_SQLITE && sqlb_pg.backend == DB_PG);
	CHECK_STR(sqlb_sqlite.is_not, "IS NOT");
	CHECK_STR(sqlb_pg.is_not, "IS DISTINCT FROM");
	CHECK_STR(sqlb_sqlite.like, "LIKE");
	CHECK_STR(sqlb_pg.like, "ILIKE");

	buf_init(&sql, 0);
	sqlb_init(&q, &sql, a, DB_SQLITE);
	CHECK_INT(sqlb_in_json(&q, "[\"a\"]", 5), 0);
	CHECK_STR(sql.data, "(SELECT value FROM json_each($1))");
	sqlb_init(&q, &sql, a, DB_PG);
	CHECK_INT(sqlb_int(&q, 1), 0);
	buf_puts(q.sql, " ");
	CHECK_INT(sqlb_in_json(&q, "[]", 2), 0);
	CHECK_STR(sql.data, "$1 (SELECT jsonb_array_elements_text(CAST($2 AS jsonb)))");
	CHECK(q.vals.n == 2 && q.vals.v[1].kind == SQLB_TEXT && q.vals.v[1].len == 2);
	buf_free(&sql);
	arena_free(a);
}

/* Every kind bound and read back, a hostile text among them as a value, never as SQL. */
static void
test_bind_all_sqlite(void)
{
	static const char hostile[] = "x'); DROP TABLE t; --\"";
	struct arena *a = arena_new(1 << 20);
	struct db *db = NULL;
	struct db_stmt *st;
	struct sqlb_vals v;
	struct buf sql;
	struct sqlb q;
	char err[256];
	const char *s;
	size_t len = 0;

	if (db_open(&db, "sqlite::memory:", NULL, err, sizeof(err)) == -1) {
		harness_fail(__FILE__, __LINE__, "db_open: %s", err);
		arena_free(a);
		return;
	}
	buf_init(&sql, 0);
	sqlb_init(&q, &sql, a, DB_SQLITE);
	buf_puts(q.sql, "SELECT ");
	CHECK_INT(sqlb_text(&q, hostile, sizeof(hostile) - 1), 0);
	buf_puts(q.sql, ", ");
	CHECK_INT(sqlb_int(&q, INT64_MIN), 0);
	buf_puts(q.sql, ", ");
	CHECK_INT(sqlb_double(&q, 0.25), 0);
	buf_puts(q.sql, ", ");
	CHECK_INT(sqlb_null(&q), 0);
	buf_puts(q.sql, ", ");
	/* The length bounds a text: the bytes past it are not bound. */
	CHECK_INT(sqlb_text(&q, "ab\0cd", 2), 0);
	CHECK((st = db_prepare(db, sql.data)) != NULL);
	if (st != NULL) {
		CHECK_INT(sqlb_bind(&q, st), 0);
		CHECK_INT(db_step(st), DB_ROW);
		s = db_column_text(st, 0, &len);
		CHECK(s != NULL && len == sizeof(hostile) - 1 && memcmp(s, hostile, len) == 0);
		CHECK(db_column_int(st, 1) == INT64_MIN);
		CHECK(db_column_double(st, 2) == 0.25);
		CHECK(db_column_isnull(st, 3));
		s = db_column_text(st, 4, &len);
		CHECK(s != NULL && len == 2 && memcmp(s, "ab", 2) == 0);
		db_reset(st);
	}

	/* More values than the statement has places: the first one past them fails. */
	CHECK((st = db_prepare(db, "SELECT $1")) != NULL);
	if (st != NULL) {
		sqlb_vals_init(&v, a, 4);
		CHECK_INT(sqlb_val_int(&v, 1), 1);
		CHECK_INT(sqlb_bind_all(&v, st), 0);
		CHECK_INT(sqlb_val_int(&v, 2), 2);
		CHECK_INT(sqlb_bind_all(&v, st), -1);
		db_reset(st);
	}
	buf_free(&sql);
	db_close(db);
	arena_free(a);
}

int
main(void)
{
	RUN(test_ident_hostile);
	RUN(test_literal_hostile);
	RUN(test_col_and_param);
	RUN(test_vals_cap);
	RUN(test_vals_arena_full);
	RUN(test_statement_order);
	RUN(test_dialects);
	RUN(test_bind_all_sqlite);
	return harness_done();
}
