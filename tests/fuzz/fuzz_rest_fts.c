/*
 * fuzz_rest_fts: the table API's text search translator (apps/rest/fts.c: PostgreSQL's
 * to_tsquery, plainto_tsquery, phraseto_tsquery and websearch_to_tsquery texts into FTS5
 * queries) and SQLite's regular expressions (common/db_sqlite_regex.c), on an in-memory
 * database holding an FTS5 table of three rows.
 *
 * The input is one filter's text.  Invariants: no crash, leak or sanitizer report; every
 * query the translator writes (for each of the four functions) is one FTS5 accepts: it
 * runs against the table without an error, whatever the text held, since every word is
 * written as an FTS5 string; plfts, phfts and wfts fail only past the bound on terms
 * (54000), as PostgreSQL's never fail; fts fails only with 42601, 0A000 or 54000/54001.
 * The same text as a regular expression: db_regex_ok() and sluice_regexp() agree (a
 * pattern that compiles runs on the rows, giving up at most at the limits, "too
 * complex"; one that does not fails the call, and never as "too complex").
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "arena.h"
#include "db.h"
#include "extern.h"
#include "rest/rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static sqlite3 *conn;

static void
fz_setup(void)
{
	if (sqlite3_open(":memory:", &conn) != SQLITE_OK ||
	    db_sqlite_regex_register(conn) != 0 ||
	    sqlite3_exec(conn, "create virtual table t using fts5(body, "
	    "tokenize='porter unicode61'); insert into t values ('the quick brown fox'), "
	    "('lazy dogs sleep'), ('''cat'' ''fat'''), ('é\"NEAR AND\"');", NULL, NULL,
	    NULL) != SQLITE_OK)
		abort();
}

/* Runs the FTS5 query q (len bytes): aborts when FTS5 refuses it. */
static void
fz_match(const char *q, size_t len)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(conn, "select count(*) from t where body match ?1", -1, &st,
	    NULL) != SQLITE_OK)
		abort();
	sqlite3_bind_text(st, 1, q, (int)len, SQLITE_STATIC);
	if ((rc = sqlite3_step(st)) != SQLITE_ROW) {
		fprintf(stderr, "fts5 refused %.*s: %s\n", (int)len, q, sqlite3_errmsg(conn));
		abort();
	}
	sqlite3_finalize(st);
}

/* sluice_regexp() of the pattern over every row: 1 when it ran, 2 when a search gave up
 * at the limits ("too complex"), 0 when it failed otherwise (a pattern that does not
 * compile). */
static int
fz_regexp(const char *p, size_t len, int icase)
{
	sqlite3_stmt *st;
	int rc;

	if (sqlite3_prepare_v2(conn, "select count(*) from t where sluice_regexp(body, ?1, ?2)",
	    -1, &st, NULL) != SQLITE_OK)
		abort();
	sqlite3_bind_text(st, 1, p, (int)len, SQLITE_STATIC);
	sqlite3_bind_int(st, 2, icase);
	if ((rc = sqlite3_step(st)) == SQLITE_ROW)
		rc = 1;
	else if (strstr(sqlite3_errmsg(conn), "invalid regular expression") == NULL)
		abort();
	else
		rc = strstr(sqlite3_errmsg(conn), "too complex") != NULL ? 2 : 0;
	sqlite3_finalize(st);
	return rc;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const int ops[] = { REST_OP_FTS, REST_OP_PLFTS, REST_OP_PHFTS, REST_OP_WFTS };
	const char *s = (const char *)data;
	struct arena *a;
	struct rest_err e;
	struct buf q;
	size_t i;
	int r, neg, icase;

	if (conn == NULL)
		fz_setup();
	if (size > 8192)
		return 0;
	if ((a = arena_new(1 << 20)) == NULL)
		abort();
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		buf_init(&q, 0);
		memset(&e, 0, sizeof(e));
		r = rest_fts_query(a, ops[i], s, size, &q, &neg, &e);
		if (r == 1)
			fz_match(q.data, q.len);
		else if (r == 0 && q.len != 0)
			abort();
		else if (r < 0 && (e.status != 400 || (ops[i] != REST_OP_FTS ?
		    strcmp(e.code, "54000") != 0 : strcmp(e.code, "42601") != 0 &&
		    strcmp(e.code, "0A000") != 0 && strcmp(e.code, "54000") != 0 &&
		    strcmp(e.code, "54001") != 0)))
			abort();
		buf_free(&q);
		arena_reset(a);
	}
	arena_free(a);
	for (icase = 0; icase < 2; icase++)
		if (db_regex_ok(s, size, icase, NULL, 0) != (fz_regexp(s, size, icase) != 0))
			abort();
	return 0;
}
