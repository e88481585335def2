/*
 * test_sqlite_json.c: sluice_obj() and sluice_arr(), the SQL functions that build JSON
 * response bodies on SQLite (common/db_sqlite_json.c), on an in-memory database: every
 * value type, escaping, reals rendered as json_quote() renders them, templates and their
 * placeholders, spliced JSON, both aggregate forms, empty aggregates, and the errors for
 * misuse and blobs; and the containment and range functions of common/db_sqlite_ops.c
 * (sluice_contains, sluice_contained, sluice_overlaps, sluice_range) on ordinary, edge
 * and malformed values.
 */
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "extern.h"
#include "harness.h"

static sqlite3 *conn;

/* Runs one single-value query; returns its text ("<NULL>", or "<ERROR: msg>"). */
static const char *
one(const char *sql)
{
	static char out[4096];
	sqlite3_stmt *st = NULL;
	int rc;

	if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) != SQLITE_OK) {
		(void)snprintf(out, sizeof(out), "<ERROR: %s>", sqlite3_errmsg(conn));
		return out;
	}
	rc = sqlite3_step(st);
	if (rc == SQLITE_ROW && sqlite3_column_type(st, 0) == SQLITE_NULL)
		(void)snprintf(out, sizeof(out), "<NULL>");
	else if (rc == SQLITE_ROW)
		(void)snprintf(out, sizeof(out), "%s", (const char *)sqlite3_column_text(st, 0));
	else
		(void)snprintf(out, sizeof(out), "<ERROR: %s>", sqlite3_errmsg(conn));
	sqlite3_finalize(st);
	return out;
}

static void
test_obj_values(void)
{
	CHECK_STR(one("select sluice_obj('{\"i\":%v,\"n\":%v,\"t\":%v,\"neg\":%v}', 42, null, "
	    "'x', -7)"), "{\"i\":42,\"n\":null,\"t\":\"x\",\"neg\":-7}");
	CHECK_STR(one("select sluice_obj('{\"min\":%v}', -9223372036854775807 - 1)"),
	    "{\"min\":-9223372036854775808}");
	CHECK_STR(one("select sluice_obj('{}')"), "{}");
	CHECK_STR(one("select sluice_obj('')"), "");
	/* The template is copied as it is around the values; %% is a literal %. */
	CHECK_STR(one("select sluice_obj('{\"a\\\"b%%\":%v}', 1)"), "{\"a\\\"b%\":1}");
	CHECK_STR(one("select sluice_obj('%v%v%%%v', 1, 'x', null)"), "1\"x\"%null");
}

static void
test_obj_reals(void)
{
	static const char *const v[] = { "0.99", "1.0", "-2.5", "100.25", "1e20", "0.1 + 0.2",
	    "1.0 / 3", "-0.0", "123456789012.5", "0.001", "-0.07", "5e-324" };
	char sql[256], want[256];
	size_t i;

	/* Whatever the shortcut, every real must read exactly as json_quote() renders it. */
	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++) {
		(void)snprintf(sql, sizeof(sql), "select json_quote(%s)", v[i]);
		(void)snprintf(want, sizeof(want), "{\"r\":%s}", one(sql));
		(void)snprintf(sql, sizeof(sql), "select sluice_obj('{\"r\":%%v}', %s)", v[i]);
		CHECK_STR(one(sql), want);
	}
}

/* An infinity (SQLite's 9e999, stored from 1e999) is null: json_quote() writes Inf, which
 * is not JSON. */
static void
test_obj_infinity_is_null(void)
{
	CHECK_STR(one("select sluice_obj('{\"a\":%v,\"b\":%v,\"c\":%v}', 9e999, -9e999, 1.5)"),
	    "{\"a\":null,\"b\":null,\"c\":1.5}");
	CHECK_STR(one("select sluice_arr(x) from (select 9e999 as x)"), "[null]");
}

static void
test_obj_escapes(void)
{
	CHECK_STR(one("select sluice_obj('{\"s\":%v}', 'q\"b\\' || char(10, 13, 9, 8, 12, 1, "
	    "31) || 'é')"), "{\"s\":\"q\\\"b\\\\\\n\\r\\t\\b\\f\\u0001\\u001fé\"}");
	/* The same text as json_quote() gives, byte for byte. */
	CHECK_STR(one("select sluice_obj('{\"s\":%v}', char(0x7f, 0x2028) || '/<>') = "
	    "'{\"s\":' || json_quote(char(0x7f, 0x2028) || '/<>') || '}'"), "1");
}

/* An escape at every position of a string longer than a machine word, and a string
 * without any: read as json_quote() writes them. */
static void
test_obj_escapes_long(void)
{
	static const int cs[] = { '"', '\\', 1, 10, 31, 0x7f, 0xe9, 0x2028 };
	char sql[512];
	size_t i;
	int pos;

	for (i = 0; i < sizeof(cs) / sizeof(cs[0]); i++)
		for (pos = 0; pos < 30; pos++) {
			(void)snprintf(sql, sizeof(sql), "select sluice_obj('%%v', x) = "
			    "json_quote(x) from (select substr(printf('%%.29c', 'a'), 1, %d) || "
			    "char(%d) || substr(printf('%%.29c', 'b'), %d) as x)", pos, cs[i],
			    pos + 1);
			CHECK_STR(one(sql), "1");
		}
	CHECK_STR(one("select sluice_obj('%v', printf('%.40c', 'z')) = "
	    "json_quote(printf('%.40c', 'z'))"), "1");
	CHECK_STR(one("select sluice_obj('%v', char(34, 34, 34, 34, 34, 34, 34, 34, 92))"),
	    "\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\"\\\\\"");
}

static void
test_obj_splice(void)
{
	CHECK_STR(one("select sluice_obj('{\"a\":%j,\"b\":%j,\"c\":%v}', '[1,2]', null, "
	    "'[1,2]')"), "{\"a\":[1,2],\"b\":null,\"c\":\"[1,2]\"}");
	CHECK_STR(one("select sluice_obj('{\"o\":%j}', sluice_obj('{\"x\":%v}', 1))"),
	    "{\"o\":{\"x\":1}}");
}

static void
test_obj_groups(void)
{
	/* An optional group: null in its place when its value is NULL, its values passed
	 * over (they need not be NULL); else the group's text with its values. */
	CHECK_STR(one("select sluice_obj('{\"id\":%v,\"g\":%?{\"gid\":%v,\"n\":%v}%.,\"z\":%v}', "
	    "1, null, 7, 'x', 'end')"), "{\"id\":1,\"g\":null,\"z\":\"end\"}");
	CHECK_STR(one("select sluice_obj('{\"id\":%v,\"g\":%?{\"gid\":%v,\"n\":%v}%.,\"z\":%v}', "
	    "1, 2, 2, 'Jazz', 'end')"), "{\"id\":1,\"g\":{\"gid\":2,\"n\":\"Jazz\"},\"z\":\"end\"}");
	/* Nested groups, and a group that ends the template. */
	CHECK_STR(one("select sluice_obj('{\"a\":%?{\"b\":%?{\"c\":%v}%.,\"d\":%j}%.}', 1, 1, "
	    "5, '[]')"), "{\"a\":{\"b\":{\"c\":5},\"d\":[]}}");
	CHECK_STR(one("select sluice_obj('{\"a\":%?{\"b\":%?{\"c\":%v}%.,\"d\":%j}%.}', 1, null, "
	    "5, '[]')"), "{\"a\":{\"b\":null,\"d\":[]}}");
	CHECK_STR(one("select sluice_obj('{\"a\":%?{\"b\":%?{\"c\":%v}%.,\"d\":%j}%.}', null, 1, "
	    "5, '[]')"), "{\"a\":null}");
	CHECK_STR(one("select sluice_obj('%?%.', null)"), "null");
	CHECK_STR(one("select sluice_obj('%?%.', 0)"), "");
	/* In the aggregate form, row by row. */
	CHECK_STR(one("select sluice_arr('{\"i\":%v,\"o\":%?{\"v\":%v}%.}', value, "
	    "nullif(value, 2), value * 10) from json_each('[1,2,3]')"),
	    "[{\"i\":1,\"o\":{\"v\":10}},{\"i\":2,\"o\":null},{\"i\":3,\"o\":{\"v\":30}}]");
}

/* sluice_embed(): sluice_arr()'s array handed to a parent's %e as a pointer, through a
 * correlated subquery, row by row; %e also splices JSON text, and refuses a NULL. */
static void
test_embed(void)
{
	CHECK_STR(one("select sluice_obj('{\"t\":%e}', (select sluice_embed('{\"v\":%v}', value) "
	    "from json_each('[1,2]')))"), "{\"t\":[{\"v\":1},{\"v\":2}]}");
	CHECK_STR(one("select sluice_obj('{\"t\":%e}', (select sluice_embed('{\"v\":%v}', value) "
	    "from json_each('[]')))"), "{\"t\":[]}");
	CHECK_STR(one("select sluice_arr('{\"a\":%v,\"t\":%e}', a.x, (select sluice_embed("
	    "'{\"v\":%v}', value) from json_each(a.j))) from (select 1 as x, '[1,2]' as j "
	    "union all select 2, '[]' union all select 3, '[3]') a"),
	    "[{\"a\":1,\"t\":[{\"v\":1},{\"v\":2}]},{\"a\":2,\"t\":[]},{\"a\":3,\"t\":[{\"v\":3}]}]");
	CHECK_STR(one("select sluice_obj('{\"t\":%e}', '[1]')"), "{\"t\":[1]}");
	/* Anywhere else the pointer reads as NULL. */
	CHECK_STR(one("select sluice_embed('{\"v\":%v}', 1) is null"), "1");
	CHECK(strncmp(one("select sluice_obj('{\"t\":%e}', null)"), "<ERROR: sluice_obj: %e takes",
	    28) == 0);
	CHECK(strncmp(one("select sluice_obj('{\"t\":%e}', 5)"), "<ERROR: sluice_obj: %e takes",
	    28) == 0);
}

static void
test_obj_errors(void)
{
	static const char *const bad[] = {
		"select sluice_obj('{%v,%v}', 1)",	/* a placeholder without its value */
		"select sluice_obj('{%v}', 1, 2)",	/* a value without its placeholder */
		"select sluice_obj('{}', 1)",
		"select sluice_obj('{%x}', 1)",		/* no such placeholder */
		"select sluice_obj('{%v%', 1)",		/* a lone % at the end */
		"select sluice_arr('[%v]', 1, 2)",
		"select sluice_obj('{%?%v}', 1, 2)",	/* a group without its end */
		"select sluice_obj('{%v%.}', 1)",	/* an end without its group */
		"select sluice_obj('{%?%v%.%.}', 1, 2)",
		"select sluice_obj('{%?%v%.}', 1)",	/* the group's own value missing */
	};
	size_t i;

	CHECK(strncmp(one("select sluice_obj('{\"b\":%v}', x'00')"), "<ERROR: JSON cannot hold "
	    "BLOB", 29) == 0);
	CHECK(strncmp(one("select sluice_arr('{\"b\":%v}', x'00')"), "<ERROR: JSON cannot hold "
	    "BLOB", 29) == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(strncmp(one(bad[i]), "<ERROR: sluice_obj: one value", 29) == 0);
	CHECK(strncmp(one("select sluice_obj()"), "<ERROR: sluice_obj(", 19) == 0);
	CHECK(strncmp(one("select sluice_obj(5, 1)"), "<ERROR: sluice_obj(", 19) == 0);
	CHECK(strncmp(one("select sluice_obj(null, 1)"), "<ERROR: sluice_obj(", 19) == 0);
	CHECK(strncmp(one("select sluice_arr()"), "<ERROR: sluice_arr(", 19) == 0);
}

static void
test_arr(void)
{
	CHECK_STR(one("select sluice_arr(x) from (select 1 as x where 0)"), "[]");
	CHECK_STR(one("select sluice_arr(x) from (select '{}' as x union all select 'null' "
	    "union all select null)"), "[{},null,null]");
	CHECK_STR(one("select sluice_arr(sluice_obj('{\"i\":%v}', value)) from "
	    "json_each('[3,1,2]')"), "[{\"i\":3},{\"i\":1},{\"i\":2}]");
	/* The template form builds each element in place: the same text. */
	CHECK_STR(one("select sluice_arr('{\"i\":%v,\"o\":%j}', value, '{}') from "
	    "json_each('[3,1,2]')"), "[{\"i\":3,\"o\":{}},{\"i\":1,\"o\":{}},{\"i\":2,\"o\":{}}]");
	CHECK_STR(one("select sluice_arr('{\"i\":%v}', 1) where 0"), "[]");
	/* The template is compiled once per statement, not per group: a group whose
	 * template differs from the one before gets its own. */
	CHECK_STR(one("select group_concat(j, ';') from (select sluice_arr(t, v) as j from "
	    "(select '{\"a\":%v}' as t, 1 as v, 1 as g union all select '{\"b\":%v}', 2, 2 "
	    "union all select '{\"b\":%v}', 3, 2 union all select '{\"a\":%v}', 4, 3) "
	    "group by g order by g)"), "[{\"a\":1}];[{\"b\":2},{\"b\":3}];[{\"a\":4}]");
	CHECK_STR(one("select group_concat(j, ';') from (select album, (select sluice_arr("
	    "'{\"t\":%v}', value) from json_each(a.tracks)) as j from (select 1 as album, "
	    "'[1,2]' as tracks union all select 2, '[]' union all select 3, '[3]') a)"),
	    "[{\"t\":1},{\"t\":2}];[];[{\"t\":3}]");
	/* A template that changes from row to row is compiled again for each row (a
	 * constant one only once: the rows above). */
	CHECK_STR(one("select sluice_arr(sluice_obj(t, v)) from (select '{\"a\":%v}' as t, 1 "
	    "as v union all select '[%j,%%]', '{}' union all select '%v', 'x')"),
	    "[{\"a\":1},[{},%],\"x\"]");
	CHECK_STR(one("select group_concat(x, ' ') from (select sluice_arr(t, v) as x from "
	    "(select 1 as g, '{\"a\":%v}' as t, 1 as v union all select 2, '[%v]', 2) "
	    "group by g)"), "[{\"a\":1}] [[2]]");
	CHECK(strncmp(one("select sluice_arr(x'01')"), "<ERROR: JSON cannot hold BLOB", 29) == 0);
}

/* A large aggregate: the buffer grows many times and every element arrives intact. */
static void
test_arr_large(void)
{
	sqlite3_stmt *st = NULL;
	const char *text;
	char last[128];
	size_t n = 0;

	CHECK_INT(sqlite3_prepare_v2(conn, "with recursive c(i) as (select 1 union all select "
	    "i + 1 from c where i < 100000) select sluice_arr('{\"i\":%v,\"s\":%v}', i, "
	    "printf('%050d', i)) from c", -1, &st, NULL), SQLITE_OK);
	CHECK_INT(sqlite3_step(st), SQLITE_ROW);
	text = (const char *)sqlite3_column_text(st, 0);
	n = (size_t)sqlite3_column_bytes(st, 0);
	/* Each element: {"i":N,"s":"<50 digits>"} = 16 + digits of N + 50 bytes, plus commas. */
	CHECK(n > 100000 * 66);
	CHECK(text != NULL && text[0] == '[' && text[n - 1] == ']');
	(void)snprintf(last, sizeof(last), "{\"i\":100000,\"s\":\"%050d\"}]", 100000);
	CHECK(text != NULL && n > strlen(last) && strcmp(text + n - strlen(last), last) == 0);
	sqlite3_finalize(st);
}

/* A UTF-16 database: text goes through SQLite's conversion, the output is the same. */
static void
test_utf16(void)
{
	sqlite3 *main_conn = conn;

	if (sqlite3_open(":memory:", &conn) != SQLITE_OK) {
		harness_fail(__FILE__, __LINE__, "cannot open an in-memory database");
		conn = main_conn;
		return;
	}
	CHECK_INT(sqlite3_exec(conn, "PRAGMA encoding='UTF-16le'; CREATE TABLE t(s text); "
	    "INSERT INTO t VALUES ('h\xc3\xa9\"llo')", NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(db_sqlite_json_register(conn, 0), 0);
	CHECK_STR(one("PRAGMA encoding"), "UTF-16le");
	CHECK_STR(one("select sluice_arr('{\"s\":%v,\"o\":%j}', s, "
	    "sluice_obj('{\"k\":%v}', s)) from t"),
	    "[{\"s\":\"h\xc3\xa9\\\"llo\",\"o\":{\"k\":\"h\xc3\xa9\\\"llo\"}}]");
	sqlite3_close(conn);
	conn = main_conn;
}

/* jsonb's @>, <@ and arrays' &&, with array literals and hostile values. */
static void
test_ops_contains(void)
{
	static const struct { const char *sql, *want; } t[] = {
		{ "sluice_contains('[\"red\",\"blue\"]', '{red}')", "1" },
		{ "sluice_contains('[\"red\",\"blue\"]', '{red,green}')", "0" },
		{ "sluice_contains('[1,2,3]', '{3,1}')", "1" },
		{ "sluice_contains('[1,2,3]', '{\"1\"}')", "0" },
		{ "sluice_contains('[\"a b\",null]', '{\"a b\",NULL}')", "1" },
		{ "sluice_contains('[]', '{}')", "1" },
		{ "sluice_contains('{\"a\":1}', '{}')", "1" },
		{ "sluice_contains('{\"a\":{\"b\":[1,2]},\"c\":3}', '{\"a\":{\"b\":[2]}}')",
		    "1" },
		{ "sluice_contains('{\"a\":{\"b\":[1,2]}}', '{\"a\":{\"b\":[3]}}')", "0" },
		{ "sluice_contains('{\"a\":1}', '{\"a\":1,\"a\":2}')", "0" },
		{ "sluice_contains('{\"a\":1,\"a\":2}', '{\"a\":2}')", "1" },
		{ "sluice_contains('[[1,2],[3]]', '[[3]]')", "1" },
		{ "sluice_contains('[1e999,0.1]', '[1e999]')", "1" },
		{ "sluice_contains('[1.0]', '{1}')", "1" },
		{ "sluice_contains('[\"x\"]', '\"x\"')", "1" },
		{ "sluice_contains('[[\"x\"]]', '\"x\"')", "0" },
		{ "sluice_contains('{\"a\":1}', '[1]')", "0" },
		{ "sluice_contains('not json', '{a}')", "0" },
		{ "sluice_contains(NULL, '{a}')", "<NULL>" },
		{ "sluice_contained('[1]', '{1,2}')", "1" },
		{ "sluice_contained('[1,4]', '{1,2}')", "0" },
		{ "sluice_contained('{\"n\":3}', '{\"n\":3,\"m\":1}')", "1" },
		{ "sluice_overlaps('[1,2]', '{2,9}')", "1" },
		{ "sluice_overlaps('[1,2]', '{}')", "0" },
		{ "sluice_overlaps('{\"a\":1}', '{1}')", "0" },
		{ "sluice_contains('[1]', '{a,{b}}')",
		    "<ERROR: malformed array literal or JSON value>" },
		{ "sluice_contains('[1]', '{a')", "<ERROR: malformed array literal or JSON value>" },
		{ "sluice_contains('[1]', '{\"a}')",
		    "<ERROR: malformed array literal or JSON value>" },
		{ "sluice_contains('[1]', '{a,,b}')",
		    "<ERROR: malformed array literal or JSON value>" },
	};
	char sql[512];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		(void)snprintf(sql, sizeof(sql), "select %s", t[i].sql);
		CHECK_STR(one(sql), t[i].want);
	}
	/* Nesting far past the functions' depth (JSON_DEPTH_DEFAULT): no crash, no relation. */
	{
		static char deep[4200];
		size_t n = 0, k;

		n += (size_t)snprintf(deep + n, sizeof(deep) - n, "select sluice_contains('");
		for (k = 0; k < 1000; k++)
			deep[n++] = '[';
		for (k = 0; k < 1000; k++)
			deep[n++] = ']';
		(void)snprintf(deep + n, sizeof(deep) - n, "', '[[[1]]]')");
		CHECK_STR(one(deep), "0");
	}
}

/* PostgreSQL's integer range operators, bounds made canonical. */
static void
test_ops_range(void)
{
	static const struct { const char *sql, *want; } t[] = {
		{ "sluice_range('@>', '[1,5)', '[2,4)')", "1" },
		{ "sluice_range('@>', '[1,5)', '(1,2]')", "1" },
		{ "sluice_range('@>', '[1,5)', '[4,6)')", "0" },
		{ "sluice_range('@>', '[1,5)', 'empty')", "1" },
		{ "sluice_range('@>', 'empty', '[1,2)')", "0" },
		{ "sluice_range('<@', '[2,3]', '[1,5)')", "1" },
		{ "sluice_range('&&', '[1,5)', '[5,10)')", "0" },
		{ "sluice_range('&&', '[1,5]', '[5,10)')", "1" },
		{ "sluice_range('&&', '(,)', '[7,8)')", "1" },
		{ "sluice_range('<<', '[1,5)', '[5,10)')", "1" },
		{ "sluice_range('>>', '[20,30)', '[10,15)')", "1" },
		{ "sluice_range('&<', '[1,5)', '[10,15)')", "1" },
		{ "sluice_range('&>', '[5,10)', '[4,15)')", "1" },
		{ "sluice_range('-|-', '[5,10)', '[10,20)')", "1" },
		{ "sluice_range('-|-', '[1,5)', '[6,8)')", "0" },
		{ "sluice_range('-|-', 'empty', '[1,2)')", "0" },
		{ "sluice_range('@>', '[1,9)', '(5,5)')", "1" },
		{ "sluice_range('&&', '[5,5]', '[5,6)')", "1" },
		{ "sluice_range('&&', ' [ 1 , 5 ) ', 'EMPTY')", "0" },
		{ "sluice_range('&&', 'garbage', '[1,2)')", "0" },
		{ "sluice_range('&&', '[1,2)', '[2,1)')", "<ERROR: malformed range literal>" },
		{ "sluice_range('&&', '[1,2)', '[a,b)')", "<ERROR: malformed range literal>" },
		{ "sluice_range('&&', '[1,2)', '[1,2')", "<ERROR: malformed range literal>" },
		{ "sluice_range('&&', '[1,2)', '[9223372036854775807,)')",
		    "<ERROR: malformed range literal>" },
		{ "sluice_range('&&', '[1,2)', '[99999999999999999999,)')",
		    "<ERROR: malformed range literal>" },
		{ "sluice_range('~', '[1,2)', '[1,2)')", "<ERROR: unknown range operator>" },
		{ "sluice_range('&&', NULL, '[1,2)')", "<NULL>" },
	};
	char sql[512];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		(void)snprintf(sql, sizeof(sql), "select %s", t[i].sql);
		CHECK_STR(one(sql), t[i].want);
	}
}

int
main(void)
{
	if (sqlite3_open(":memory:", &conn) != SQLITE_OK ||
	    db_sqlite_json_register(conn, 1) != 0 || db_sqlite_ops_register(conn) != 0) {
		fprintf(stderr, "cannot open an in-memory database\n");
		return 1;
	}
	RUN(test_obj_values);
	RUN(test_obj_reals);
	RUN(test_obj_infinity_is_null);
	RUN(test_obj_escapes);
	RUN(test_obj_escapes_long);
	RUN(test_obj_splice);
	RUN(test_obj_groups);
	RUN(test_embed);
	RUN(test_obj_errors);
	RUN(test_arr);
	RUN(test_arr_large);
	RUN(test_utf16);
	RUN(test_ops_contains);
	RUN(test_ops_range);
	sqlite3_close(conn);
	return harness_done();
}
