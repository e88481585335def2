/*
 * fuzz_json_contains: SQLite's sluice_contains(), sluice_contained(), sluice_overlaps()
 * and sluice_range() (common/db_sqlite_ops.c) and the literal checks the table API runs
 * first (db_json_literal_ok(), db_range_literal_ok()), on an in-memory database.
 *
 * The input is "A\nB": A a stored value, B a filter's literal.  Invariants: no crash; a
 * call fails only when B is neither JSON nor an array literal (db_json_literal_ok() says
 * 0), and otherwise answers 0 or 1 (NULL never, both being text); a JSON value (nested
 * at most JSON_DEPTH_DEFAULT deep) contains itself and is contained by itself; overlaps is symmetric when both are JSON.  For the
 * ranges, the same with db_range_literal_ok(): a range contains itself, and && and -|-
 * are symmetric.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "db.h"
#include "extern.h"
#include "json.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sqlite3 *conn;

/* fn(a, b) as an integer: 0 or 1, or -1 when the call failed.  fn may hold its first
 * argument already ("sluice_range('&&', "). */
static int
call(const char *fn, const char *a, size_t alen, const char *b, size_t blen)
{
	sqlite3_stmt *st;
	char sql[64];
	int r = -1;

	(void)snprintf(sql, sizeof(sql), "SELECT %s%s?1, ?2)", fn,
	    fn[strlen(fn) - 1] == ' ' ? "" : "(");
	if (sqlite3_prepare_v2(conn, sql, -1, &st, NULL) != SQLITE_OK)
		abort();
	sqlite3_bind_text(st, 1, a, (int)alen, SQLITE_STATIC);
	sqlite3_bind_text(st, 2, b, (int)blen, SQLITE_STATIC);
	if (sqlite3_step(st) == SQLITE_ROW) {
		if (sqlite3_column_type(st, 0) != SQLITE_INTEGER)
			abort();
		r = sqlite3_column_int(st, 0);
		if (r != 0 && r != 1)
			abort();
	}
	sqlite3_finalize(st);
	return r;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data, *nl;
	enum json_err err;
	size_t alen, blen;
	cJSON *v;
	int ok;

	if (conn == NULL && (sqlite3_open(":memory:", &conn) != SQLITE_OK ||
	    db_sqlite_ops_register(conn) != 0))
		abort();
	if (size > 4096 || memchr(s, '\0', size) != NULL)
		return 0;
	nl = memchr(s, '\n', size);
	alen = nl != NULL ? (size_t)(nl - s) : size;
	blen = nl != NULL ? size - alen - 1 : 0;
	ok = db_json_literal_ok(nl != NULL ? nl + 1 : s + size, blen);
	if ((call("sluice_contains", s, alen, nl != NULL ? nl + 1 : "", blen) >= 0) != ok ||
	    (call("sluice_contained", s, alen, nl != NULL ? nl + 1 : "", blen) >= 0) != ok ||
	    (call("sluice_overlaps", s, alen, nl != NULL ? nl + 1 : "", blen) >= 0) != ok)
		abort();
	ok = db_range_literal_ok(nl != NULL ? nl + 1 : s + size, blen);
	if ((call("sluice_range('&&', ", s, alen, nl != NULL ? nl + 1 : "", blen) >= 0) != ok ||
	    (call("sluice_range('<<', ", s, alen, nl != NULL ? nl + 1 : "", blen) >= 0) != ok)
		abort();
	if (db_range_literal_ok(s, alen)) {
		if (call("sluice_range('@>', ", s, alen, s, alen) != 1 ||
		    call("sluice_range('<@', ", s, alen, s, alen) != 1)
			abort();
		if (ok && (call("sluice_range('&&', ", s, alen, nl + 1, blen) !=
		    call("sluice_range('&&', ", nl + 1, blen, s, alen) ||
		    call("sluice_range('-|-', ", s, alen, nl + 1, blen) !=
		    call("sluice_range('-|-', ", nl + 1, blen, s, alen)))
			abort();
	}
	if ((v = json_parse(s, alen, JSON_DEPTH_DEFAULT, &err, NULL)) != NULL) {
		if (call("sluice_contains", s, alen, s, alen) != 1 ||
		    call("sluice_contained", s, alen, s, alen) != 1)
			abort();
		cJSON_Delete(v);
		if (nl != NULL && (v = json_parse(nl + 1, blen, JSON_DEPTH_DEFAULT, &err, NULL)) !=
		    NULL) {
			if (call("sluice_overlaps", s, alen, nl + 1, blen) !=
			    call("sluice_overlaps", nl + 1, blen, s, alen))
				abort();
			cJSON_Delete(v);
		}
	}
	return 0;
}
