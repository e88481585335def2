/*
 * test_db.c: unit tests of the DB interface (common/db.h) against both back ends: a real
 * SQLite file in a temp directory and a real throwaway PostgreSQL cluster (tests/lib/pgtmp).
 *
 * The shared tests run once per back end (named "sqlite/..." and "pg/..."): open and close,
 * DDL through db_exec, $N placeholders (out of order, and inside literals and comments),
 * binding every type, rows and columns, the statement cache (hits, eviction, statements in
 * use), db_changes, transactions and error classes.  Then each back end's own: SQLite
 * pragmas, two threads writing at once, the writers' queue (first come, first served
 * across processes, handed on by a writer killed holding it, bounded by the budget),
 * read-only and missing files; PostgreSQL isolation
 * levels, read-only transactions, the server restarting or going away under an open
 * connection ("503 once, then success"), and the connections a process's threads share
 * (pipelined statements from many threads, transactions holding one alone, the wait for
 * a connection within the request's budget, statement eviction, restarts).
 */
#define _XOPEN_SOURCE 700	/* nftw() */

#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <pthread.h>
#include <stdatomic.h>
#include <pwd.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "clock.h"
#include "db.h"
#include "metrics.h"
#include "log.h"

#include "../lib/harness.h"
#include "../lib/pgtmp.h"

struct backend {
	const char *name;
	enum db_backend kind;
	char url[512];
	const char *strict;	/* table option that makes column types checked */
};

static struct backend backends[2] = {
	{ "sqlite", DB_SQLITE, "", " STRICT" },
	{ "pg", DB_PG, "", "" },
};
static struct backend *B;
static struct pgtmp pgc;
static int pg_up;
static char tmpdir[64];

/* Opens the current back end's database with opts (NULL: defaults). */
static struct db *
open_db(const struct db_opts *opts)
{
	struct db *db = NULL;
	char err[256];

	if (db_open(&db, B->url, opts, err, sizeof(err)) == -1) {
		harness_fail(__FILE__, __LINE__, "db_open(%s): %s", B->url, err);
		return NULL;
	}
	return db;
}

static int
exec_ok(struct db *db, const char *sql)
{
	if (db_exec(db, sql) == -1) {
		harness_fail(__FILE__, __LINE__, "db_exec(%s): %s", sql, db_errmsg(db));
		return -1;
	}
	return 0;
}

/* The first column of the first row of sql as text ("(null)" for NULL), or NULL on
 * failure.  The string lives until the next call. */
static const char *
q1(struct db *db, const char *sql)
{
	static char buf[256];
	struct db_stmt *st;
	const char *t;

	if ((st = db_prepare(db, sql)) == NULL)
		return NULL;
	if (db_step(st) != DB_ROW) {
		db_reset(st);
		return NULL;
	}
	t = db_column_text(st, 0, NULL);
	(void)snprintf(buf, sizeof(buf), "%s", t != NULL ? t : "(null)");
	db_reset(st);
	return buf;
}

/* Runs a one-parameter statement to the end; returns db_step()'s last result. */
static int
run_int(struct db *db, const char *sql, int64_t v)
{
	struct db_stmt *st;
	int rc;

	if ((st = db_prepare(db, sql)) == NULL)
		return DB_ERROR;
	if (db_bind_int(st, 1, v) == -1)
		return DB_ERROR;
	while ((rc = db_step(st)) == DB_ROW)
		continue;
	return rc;
}

static int
rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

static int
chmod_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_D)
		(void)chmod(path, 0700);
	return 0;
}

static void
rm_rf(const char *dir)
{
	/* Read-only test directories must become writable before their files can go. */
	(void)nftw(dir, chmod_one, 16, FTW_PHYS);
	(void)nftw(dir, rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int saved_stderr = -1;

/* Sends stderr to path (created or emptied) until stderr_on(). */
static void
stderr_to(const char *path)
{
	int fd;

	fflush(stderr);
	if ((saved_stderr = dup(2)) == -1)
		return;
	if ((fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0600)) != -1) {
		(void)dup2(fd, 2);
		close(fd);
	}
}

/* Silences stderr around a call whose log lines are expected. */
static void
stderr_off(void)
{
	stderr_to("/dev/null");
}

static void
stderr_on(void)
{
	if (saved_stderr == -1)
		return;
	(void)dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
}

/* ---- shared tests, run for each back end ---- */

static void
test_open_close(void)
{
	struct db *db;

	if ((db = open_db(NULL)) == NULL)
		return;
	CHECK_INT(db_backend(db), B->kind);
	CHECK_INT(db_errcode(db), DB_OK);
	CHECK_STR(q1(db, "SELECT 1"), "1");
	CHECK_INT(db_ready(db), 0);
	db_close(db);
	db_close(NULL);
}

static void
test_exec(void)
{
	struct db *db;

	if ((db = open_db(NULL)) == NULL)
		return;
	CHECK_INT(exec_ok(db, "DROP TABLE IF EXISTS t_exec; "
	    "CREATE TABLE t_exec(x integer); "
	    "INSERT INTO t_exec VALUES (1); INSERT INTO t_exec VALUES (2)"), 0);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_exec"), "2");
	CHECK_INT(db_exec(db, "CREATE TABEL nope(x integer)"), -1);
	CHECK_INT(db_errcode(db), DB_EINTERNAL);
	CHECK(db_errmsg(db)[0] != '\0');
	CHECK_INT(db_exec(db, ""), 0);
	db_close(db);
}

static void
test_placeholders(void)
{
	struct db *db;
	struct db_stmt *st;
	const char *t;
	size_t len;

	if ((db = open_db(NULL)) == NULL)
		return;
	/* $2 before $1: SQLite's own "$1" would number them by appearance. */
	st = db_prepare(db, "SELECT CAST($2 AS text) || '-' || CAST($1 AS text) AS r");
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK_INT(db_bind_text(st, 1, "a", 1), 0);
		CHECK_INT(db_bind_text(st, 2, "b", 1), 0);
		CHECK_INT(db_step(st), DB_ROW);
		CHECK_STR(db_column_text(st, 0, NULL), "b-a");
		CHECK_STR(db_column_name(st, 0), "r");
		CHECK_INT(db_step(st), DB_DONE);
	}
	/* '$1' in a literal, "a$1" as an identifier and $N in comments stay as they are. */
	st = db_prepare(db, "SELECT '$1' AS lit, CAST($1 AS text) AS \"a$1\" /* $2 */ -- $3\n");
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK_INT(db_bind_text(st, 1, "x", 1), 0);
		CHECK_INT(db_bind_text(st, 2, "y", 1), -1);
		CHECK_INT(db_errcode(db), DB_EINTERNAL);
		CHECK_INT(db_bind_int(st, 0, 1), -1);
		CHECK_INT(db_step(st), DB_ROW);
		t = db_column_text(st, 0, &len);
		CHECK_STR(t, "$1");
		CHECK_INT(len, 2);
		CHECK_STR(db_column_text(st, 1, NULL), "x");
		CHECK_STR(db_column_name(st, 1), "a$1");
		CHECK_INT(db_column_count(st), 2);
		CHECK_INT(db_step(st), DB_DONE);
	}
	/* One statement per db_prepare() on both back ends. */
	CHECK(db_prepare(db, "SELECT 1; SELECT 2") == NULL);
	CHECK(db_prepare(db, "SELECT 1; -- trailing comment") != NULL);
	db_close(db);
}

static void
test_bind_types(void)
{
	struct db *db;
	struct db_stmt *st;
	size_t len;

	if ((db = open_db(NULL)) == NULL)
		return;
	st = db_prepare(db, "SELECT CAST($1 AS bigint), CAST($2 AS double precision), "
	    "CAST($3 AS text), CAST($4 AS text), CAST($5 AS bigint), CAST($6 AS text)");
	CHECK(st != NULL);
	if (st == NULL)
		goto out;
	CHECK_INT(db_bind_int(st, 1, INT64_MAX), 0);
	CHECK_INT(db_bind_double(st, 2, 0.25), 0);
	CHECK_INT(db_bind_text(st, 3, "hello", 3), 0);
	CHECK_INT(db_bind_null(st, 4), 0);
	CHECK_INT(db_bind_int(st, 5, -42), 0);
	/* $6 left unbound: NULL. */
	CHECK_INT(db_step(st), DB_ROW);
	CHECK_INT(db_column_int(st, 0), INT64_MAX);
	CHECK_STR(db_column_text(st, 0, NULL), "9223372036854775807");
	CHECK_STR(db_column_text(st, 1, NULL), "0.25");
	CHECK(db_column_double(st, 1) == 0.25);
	CHECK(db_column_double(st, 4) == -42.0);
	CHECK_STR(db_column_text(st, 2, &len), "hel");
	CHECK_INT(len, 3);
	CHECK_INT(db_column_isnull(st, 2), 0);
	CHECK(db_column_text(st, 3, &len) == NULL);
	CHECK_INT(len, 0);
	CHECK_INT(db_column_isnull(st, 3), 1);
	CHECK_INT(db_column_int(st, 3), 0);
	CHECK(db_column_double(st, 3) == 0.0);
	CHECK_INT(db_column_int(st, 4), -42);
	CHECK_INT(db_column_isnull(st, 5), 1);
	/* Out of range columns answer "no value". */
	CHECK(db_column_text(st, 6, NULL) == NULL);
	CHECK(db_column_double(st, 6) == 0.0);
	CHECK_INT(db_column_isnull(st, -1), 1);
	CHECK_INT(db_step(st), DB_DONE);

	/* The same statement again: bindings were cleared by db_prepare(). */
	st = db_prepare(db, "SELECT CAST($1 AS bigint), CAST($2 AS double precision), "
	    "CAST($3 AS text), CAST($4 AS text), CAST($5 AS bigint), CAST($6 AS text)");
	CHECK(st != NULL);
	if (st == NULL)
		goto out;
	CHECK_INT(db_bind_text(st, 3, "h\xc3\xa9llo", 6), 0);
	CHECK_INT(db_bind_text(st, 4, "a\0b", 3), -1);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_INT(db_step(st), DB_ROW);
	CHECK_INT(db_column_isnull(st, 0), 1);
	CHECK_STR(db_column_text(st, 2, NULL), "h\xc3\xa9llo");
	CHECK_INT(db_step(st), DB_DONE);
out:
	db_close(db);
}

static void
test_rows(void)
{
	static const char *const names[] = { "one", "two", "three" };
	struct db *db;
	struct db_stmt *st;
	char sql[256];
	int i;

	if ((db = open_db(NULL)) == NULL)
		return;
	(void)snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS t_rows; CREATE TABLE t_rows("
	    "id integer PRIMARY KEY, name text NOT NULL)%s", B->strict);
	if (exec_ok(db, sql) == -1)
		goto out;
	for (i = 0; i < 3; i++) {
		st = db_prepare(db, "INSERT INTO t_rows(id, name) VALUES ($1, $2)");
		CHECK(st != NULL);
		if (st == NULL)
			goto out;
		CHECK_INT(db_bind_int(st, 1, i + 1), 0);
		CHECK_INT(db_bind_text(st, 2, names[i], strlen(names[i])), 0);
		CHECK_INT(db_step(st), DB_DONE);
	}
	st = db_prepare(db, "SELECT id, name FROM t_rows WHERE id >= $1 ORDER BY id");
	CHECK(st != NULL);
	if (st == NULL)
		goto out;
	CHECK_INT(db_bind_int(st, 1, 1), 0);
	for (i = 0; i < 3; i++) {
		CHECK_INT(db_step(st), DB_ROW);
		CHECK_INT(db_column_count(st), 2);
		CHECK_STR(db_column_name(st, 0), "id");
		CHECK_STR(db_column_name(st, 1), "name");
		CHECK_INT(db_column_int(st, 0), i + 1);
		CHECK_STR(db_column_text(st, 1, NULL), names[i]);
	}
	CHECK_INT(db_step(st), DB_DONE);
	/* Done stays done until the statement is reset or prepared again. */
	CHECK_INT(db_step(st), DB_DONE);
	CHECK(db_column_text(st, 0, NULL) == NULL);
	db_reset(st);
	CHECK_INT(db_step(st), DB_ROW);
	CHECK_INT(db_column_int(st, 0), 1);
	db_reset(st);
	/* An empty result. */
	CHECK_INT(db_bind_int(st, 1, 100), 0);
	CHECK_INT(db_step(st), DB_DONE);
out:
	db_close(db);
}

static void
test_cache(void)
{
	struct db_opts o;
	struct db *db;
	struct db_stmt *a, *b, *s1, *s2;

	memset(&o, 0, sizeof(o));
	o.stmt_cache = 2;
	if ((db = open_db(&o)) == NULL)
		return;
	/* Same text, same statement, ready again. */
	a = db_prepare(db, "SELECT 10 + $1");
	CHECK(a != NULL);
	if (a == NULL)
		goto out;
	CHECK_INT(db_bind_int(a, 1, 1), 0);
	CHECK_INT(db_step(a), DB_ROW);
	b = db_prepare(db, "SELECT 10 + $1");
	CHECK(a == b);
	CHECK_INT(db_bind_int(b, 1, 2), 0);
	CHECK_INT(db_step(b), DB_ROW);
	CHECK_INT(db_column_int(b, 0), 12);
	CHECK_INT(db_step(b), DB_DONE);

	/* Eviction: three texts through a cache of two, then the first again. */
	CHECK_STR(q1(db, "SELECT 1"), "1");
	CHECK_STR(q1(db, "SELECT 2"), "2");
	CHECK_STR(q1(db, "SELECT 3"), "3");
	CHECK_STR(q1(db, "SELECT 1"), "1");
	CHECK_STR(q1(db, "SELECT 2"), "2");

	/* Re-prepare in the middle of the rows starts over. */
	if (exec_ok(db, "DROP TABLE IF EXISTS t_cache; CREATE TABLE t_cache(n integer); "
	    "INSERT INTO t_cache VALUES (1); INSERT INTO t_cache VALUES (2); "
	    "INSERT INTO t_cache VALUES (3)") == -1)
		goto out;
	s1 = db_prepare(db, "SELECT n FROM t_cache ORDER BY n");
	CHECK(s1 != NULL);
	if (s1 == NULL)
		goto out;
	CHECK_INT(db_step(s1), DB_ROW);
	CHECK_INT(db_step(s1), DB_ROW);
	CHECK_INT(db_column_int(s1, 0), 2);
	s1 = db_prepare(db, "SELECT n FROM t_cache ORDER BY n");
	CHECK_INT(db_step(s1), DB_ROW);
	CHECK_INT(db_column_int(s1, 0), 1);

	/* A statement handing out rows is not evicted by others filling the cache. */
	CHECK_STR(q1(db, "SELECT 4"), "4");
	CHECK_STR(q1(db, "SELECT 5"), "5");
	s2 = db_prepare(db, "SELECT 6");
	CHECK(s2 != NULL);
	CHECK_INT(db_step(s2), DB_ROW);
	CHECK_INT(db_step(s1), DB_ROW);
	CHECK_INT(db_column_int(s1, 0), 2);
	CHECK_INT(db_step(s1), DB_ROW);
	CHECK_INT(db_step(s1), DB_DONE);
out:
	db_close(db);
}

static void
test_changes(void)
{
	struct db *db;
	struct db_stmt *st;

	if ((db = open_db(NULL)) == NULL)
		return;
	if (exec_ok(db, "DROP TABLE IF EXISTS t_ch; CREATE TABLE t_ch(n integer)") == -1)
		goto out;
	st = db_prepare(db, "INSERT INTO t_ch VALUES ($1)");
	CHECK(st != NULL);
	if (st == NULL)
		goto out;
	CHECK_INT(db_bind_int(st, 1, 1), 0);
	CHECK_INT(db_step(st), DB_DONE);
	CHECK_INT(db_changes(st), 1);
	CHECK_INT(run_int(db, "INSERT INTO t_ch VALUES ($1)", 2), DB_DONE);
	CHECK_INT(run_int(db, "INSERT INTO t_ch VALUES ($1)", 3), DB_DONE);
	st = db_prepare(db, "UPDATE t_ch SET n = n + 10 WHERE n <= $1");
	CHECK_INT(db_bind_int(st, 1, 2), 0);
	CHECK_INT(db_step(st), DB_DONE);
	CHECK_INT(db_changes(st), 2);
	st = db_prepare(db, "DELETE FROM t_ch WHERE n = $1");
	CHECK_INT(db_bind_int(st, 1, 99), 0);
	CHECK_INT(db_step(st), DB_DONE);
	CHECK_INT(db_changes(st), 0);
	st = db_prepare(db, "DELETE FROM t_ch WHERE n > $1");
	CHECK_INT(db_bind_int(st, 1, 0), 0);
	CHECK_INT(db_step(st), DB_DONE);
	CHECK_INT(db_changes(st), 3);
out:
	db_close(db);
}

static void
test_txn(void)
{
	struct db *db;

	if ((db = open_db(NULL)) == NULL)
		return;
	if (exec_ok(db, "DROP TABLE IF EXISTS t_txn; "
	    "CREATE TABLE t_txn(id integer PRIMARY KEY)") == -1)
		goto out;
	CHECK_INT(db_rollback(db), 0);
	CHECK_INT(db_commit(db), -1);

	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(db_begin(db, DB_TXN_WRITE), -1);
	CHECK_INT(run_int(db, "INSERT INTO t_txn VALUES ($1)", 1), DB_DONE);
	CHECK_INT(db_rollback(db), 0);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_txn"), "0");

	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(run_int(db, "INSERT INTO t_txn VALUES ($1)", 1), DB_DONE);
	CHECK_INT(db_commit(db), 0);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_txn"), "1");
	CHECK_INT(db_rollback(db), 0);

	CHECK_INT(db_begin(db, DB_TXN_READ), 0);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_txn"), "1");
	CHECK_INT(db_commit(db), 0);

	/* A failed statement inside a transaction: rollback, then the connection is fine. */
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(run_int(db, "INSERT INTO t_txn VALUES ($1)", 1), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_ECONSTRAINT);
	CHECK_INT(db_rollback(db), 0);
	CHECK_INT(db_errcode(db), DB_ECONSTRAINT);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_txn"), "1");

	/* db_ready() ends a transaction a previous request left open. */
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(run_int(db, "INSERT INTO t_txn VALUES ($1)", 2), DB_DONE);
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(db_commit(db), -1);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_txn"), "1");
out:
	db_close(db);
}

static void
test_errors(void)
{
	struct db *db;
	struct db_stmt *st;
	char sql[256];

	if ((db = open_db(NULL)) == NULL)
		return;
	(void)snprintf(sql, sizeof(sql), "DROP TABLE IF EXISTS t_err; CREATE TABLE t_err("
	    "id integer PRIMARY KEY, name text NOT NULL, n integer CHECK (n IS NULL OR n >= 0), "
	    "p integer REFERENCES t_err(id))%s", B->strict);
	if (exec_ok(db, sql) == -1)
		goto out;
	st = db_prepare(db, "INSERT INTO t_err(id, name, n) VALUES ($1, $2, $3)");
	CHECK(st != NULL);
	if (st == NULL)
		goto out;
	CHECK_INT(db_bind_int(st, 1, 1), 0);
	CHECK_INT(db_bind_text(st, 2, "a", 1), 0);
	CHECK_INT(db_step(st), DB_DONE);

	/* Unique violation. */
	st = db_prepare(db, "INSERT INTO t_err(id, name, n) VALUES ($1, $2, $3)");
	CHECK_INT(db_bind_int(st, 1, 1), 0);
	CHECK_INT(db_bind_text(st, 2, "b", 1), 0);
	CHECK_INT(db_step(st), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_ECONSTRAINT);
	CHECK_INT(db_err_status(db_errcode(db)), 409);
	CHECK(db_errmsg(db)[0] != '\0');
	/* The database's own words: PostgreSQL's message, detail and exact SQLSTATE;
	 * SQLite's message with the SQLSTATE db_sqlstate() gives. */
	{
		const struct db_words *w = db_words(db);

		CHECK(w != NULL);
		if (w != NULL) {
			CHECK_STR(w->state, "23505");
			CHECK_STR(w->message, B->kind == DB_PG ?
			    "duplicate key value violates unique constraint \"t_err_pkey\"" :
			    "UNIQUE constraint failed: t_err.id");
			CHECK_STR(w->detail, B->kind == DB_PG ? "Key (id)=(1) already exists." : "");
			CHECK_STR(w->hint, "");
		}
	}

	/* Not null violation: bad input, not a conflict (as PostgREST answers 23502). */
	st = db_prepare(db, "INSERT INTO t_err(id, name, n) VALUES ($1, $2, $3)");
	CHECK_INT(db_bind_int(st, 1, 2), 0);
	CHECK_INT(db_step(st), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_INT(db_err_status(db_errcode(db)), 400);

	/* CHECK violation: bad input too (23514). */
	st = db_prepare(db, "INSERT INTO t_err(id, name, n) VALUES ($1, $2, $3)");
	CHECK_INT(db_bind_int(st, 1, 2), 0);
	CHECK_INT(db_bind_text(st, 2, "c", 1), 0);
	CHECK_INT(db_bind_int(st, 3, -1), 0);
	CHECK_INT(db_step(st), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_EINPUT);

	/* Foreign key violation: a conflict, 409 (23503). */
	st = db_prepare(db, "INSERT INTO t_err(id, name, p) VALUES ($1, $2, $3)");
	CHECK_INT(db_bind_int(st, 1, 2), 0);
	CHECK_INT(db_bind_text(st, 2, "c", 1), 0);
	CHECK_INT(db_bind_int(st, 3, 99), 0);
	CHECK_INT(db_step(st), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_ECONSTRAINT);
	CHECK_INT(db_err_status(db_errcode(db)), 409);

	/* Text that is not an integer, into an integer column (SQLite: STRICT table). */
	st = db_prepare(db, "INSERT INTO t_err(id, name, n) VALUES ($1, $2, $3)");
	CHECK_INT(db_bind_int(st, 1, 3), 0);
	CHECK_INT(db_bind_text(st, 2, "c", 1), 0);
	CHECK_INT(db_bind_text(st, 3, "12abc", 5), 0);
	CHECK_INT(db_step(st), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_INT(db_err_status(db_errcode(db)), 400);
	CHECK_STR(db_sqlstate(db), "22P02");
	CHECK(db_words(db) != NULL && strcmp(db_words(db)->state, "22P02") == 0);

	/* A class-22 code of PostgreSQL's own is kept in its words, 22P02 for db_sqlstate()
	 * (SQLite cannot tell them apart). */
	if (B->kind == DB_PG) {
		CHECK_INT(db_exec(db, "SELECT 1 / 0"), -1);
		CHECK_STR(db_sqlstate(db), "22P02");
		CHECK(db_words(db) != NULL && strcmp(db_words(db)->state, "22012") == 0);
		CHECK(db_words(db) != NULL && strcmp(db_words(db)->message, "division by zero") == 0);
	}

	/* An upsert's conflict target that no unique constraint covers: the request's
	 * mistake, 400 42P10 (it was a 500). */
	CHECK_INT(db_exec(db, "INSERT INTO t_err(id, name) VALUES (9, 'x') ON CONFLICT (name) "
	    "DO NOTHING"), -1);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_STR(db_sqlstate(db), "42P10");

	/* A value the statement builds past the database's limit: 400 54000, not "does not
	 * fit its column". */
	CHECK_INT(db_exec(db, B->kind == DB_PG ? "SELECT repeat('x', 1100000000)" :
	    "SELECT zeroblob(2000000000)"), -1);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_STR(db_sqlstate(db), "54000");

	CHECK(db_raised(db) == NULL);

	/* What the schema raises for the client: P0001 and its text, cut to fit at a
	 * character's boundary (300 two-byte characters: 255 of them). */
	{
		char lit[700], big[1200];
		const struct db_words *r;
		size_t i, n = 0;

		for (i = 0; i < 300; i++)
			n += (size_t)snprintf(lit + n, sizeof(lit) - n, "\xc3\xa9");
		if (B->kind == DB_PG)
			(void)snprintf(big, sizeof(big), "DO $$ BEGIN RAISE EXCEPTION '%s' "
			    "USING DETAIL = 'd', HINT = 'h'; END $$", lit);
		else
			(void)snprintf(big, sizeof(big), "CREATE TEMP TRIGGER t_err_raise BEFORE "
			    "INSERT ON t_err BEGIN SELECT RAISE(ABORT, '%s'); END", lit);
		if (B->kind == DB_PG || exec_ok(db, big) == 0) {
			CHECK_INT(db_exec(db, B->kind == DB_PG ? big :
			    "INSERT INTO t_err(id, name) VALUES (8, 'x')"), -1);
			CHECK_INT(db_errcode(db), DB_EINPUT);
			CHECK_STR(db_sqlstate(db), "P0001");
			CHECK((r = db_raised(db)) != NULL);
			if (r != NULL) {
				CHECK_INT(strlen(r->message), 510);
				CHECK(strncmp(r->message, lit, 510) == 0);
				CHECK_STR(r->detail, B->kind == DB_PG ? "d" : "");
				CHECK_STR(r->hint, B->kind == DB_PG ? "h" : "");
			}
			if (B->kind != DB_PG)
				CHECK_INT(db_exec(db, "DROP TRIGGER t_err_raise"), 0);
		}
	}

	/* Syntax error: our own SQL, 500, and nothing of it for a client. */
	CHECK(db_prepare(db, "SELEC 1") == NULL);
	CHECK(db_raised(db) == NULL);
	CHECK(db_words(db) == NULL);
	CHECK_INT(db_errcode(db), DB_EINTERNAL);
	CHECK_INT(db_err_status(db_errcode(db)), 500);
	/* A column the database does not hold: on PostgreSQL its 42703 (PostgREST's 400),
	 * since a schema changed under a worker that read it before names such columns in
	 * sluice's own statements until the worker reloads; SQLite's is an error of ours. */
	CHECK(db_prepare(db, "SELECT nosuchcolumn FROM t_err") == NULL);
	if (B->kind == DB_PG) {
		CHECK_INT(db_errcode(db), DB_EINPUT);
		CHECK_STR(db_sqlstate(db), "42703");
	} else
		CHECK_INT(db_errcode(db), DB_EINTERNAL);

	/* After all that the connection works and nothing half-done stuck. */
	CHECK_STR(q1(db, "SELECT count(*) FROM t_err"), "1");
out:
	db_close(db);
}

/* ---- SQLite only ---- */

/*
 * The busy timeout (sqlite_busy_ms, kept by sluice's own busy handler, which counts its
 * retries: common/metrics.h): a write that finds the database locked by another
 * connection (SQLite's own, outside sluice's writers' queue) tries again for that long,
 * then fails DB_EBUSY; a write whose lock goes meanwhile succeeds.
 */
static void
test_sqlite_busy_timeout(void)
{
	struct db_opts o;
	struct db *db;
	struct metrics_page *pg = calloc(1, metrics_page_size(1));
	sqlite3 *other = NULL;
	long long t0, ms;

	metrics_db_attach(pg);
	memset(&o, 0, sizeof(o));
	o.sqlite_busy_ms = 300;
	if ((db = open_db(&o)) == NULL)
		return;
	CHECK_INT(sqlite3_open(B->url + strlen("sqlite:"), &other), SQLITE_OK);
	CHECK_INT(sqlite3_exec(other, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	t0 = clock_now_ms();
	CHECK_INT(db_exec(db, "BEGIN IMMEDIATE"), -1);
	ms = clock_now_ms() - t0;
	CHECK_INT(db_errcode(db), DB_EBUSY);
	CHECK(ms >= 250 && ms < 3000);
	/* Pauses of 1, 2, 4 ... 64, 100 and the last 73 ms: 9 retries make the 300 ms. */
	CHECK(pg != NULL && pg->db.busy_retries == 9);
	CHECK_INT(sqlite3_exec(other, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
	CHECK_INT(db_exec(db, "BEGIN IMMEDIATE"), 0);
	CHECK_INT(db_exec(db, "COMMIT"), 0);
	CHECK(pg != NULL && pg->db.busy_retries == 9);
	metrics_db_attach(NULL);
	free(pg);
	sqlite3_close(other);
	db_close(db);
}

static void
test_sqlite_pragmas(void)
{
	struct db_opts o;
	struct db *db;

	if ((db = open_db(NULL)) == NULL)
		return;
	CHECK_STR(q1(db, "PRAGMA journal_mode"), "wal");
	CHECK_STR(q1(db, "PRAGMA synchronous"), "2");
	CHECK_STR(q1(db, "PRAGMA mmap_size"), "268435456");
	CHECK_STR(q1(db, "PRAGMA foreign_keys"), "1");
	db_close(db);

	/* Zeroed options are the defaults: synchronous FULL, never OFF. */
	memset(&o, 0, sizeof(o));
	if ((db = open_db(&o)) == NULL)
		return;
	CHECK_STR(q1(db, "PRAGMA synchronous"), "2");
	db_close(db);

	o.sqlite_sync = DB_SYNC_NORMAL;
	o.sqlite_busy_ms = 1234;
	o.sqlite_mmap = -1;
	if ((db = open_db(&o)) == NULL)
		return;
	CHECK_STR(q1(db, "PRAGMA synchronous"), "1");
	CHECK_STR(q1(db, "PRAGMA mmap_size"), "0");
	db_close(db);

	o.sqlite_sync = DB_SYNC_OFF;
	if ((db = open_db(&o)) == NULL)
		return;
	CHECK_STR(q1(db, "PRAGMA synchronous"), "0");
	db_close(db);
}

/*
 * sqlite_chunk: the file grows in steps of the chunk (here 1 MB) when its WAL is copied
 * back, so its size, which decides when a memory map is made again, changes once a step;
 * a mapped connection opens it through the VFS that keeps its map (db_sqlite_vfs.c), an
 * unmapped one through SQLite's own.
 */
static void
test_sqlite_chunk(void)
{
	char url[96], path[96], err[256];
	struct db_opts o;
	struct db *db;
	struct stat sb;
	int i;

	(void)snprintf(url, sizeof(url), "sqlite:%s/chunk.db", tmpdir);
	(void)snprintf(path, sizeof(path), "%s/chunk.db", tmpdir);
	memset(&o, 0, sizeof(o));
	o.sqlite_chunk = 1 << 20;
	if (db_open(&db, url, &o, err, sizeof(err)) == -1) {
		CHECK(!"db_open chunk.db");
		return;
	}
	CHECK_STR(q1(db, "PRAGMA mmap_size"), "268435456");
	CHECK(exec_ok(db, "CREATE TABLE t_chunk (v BLOB)") == 0);
	for (i = 0; i < 3; i++) {
		CHECK(exec_ok(db, "INSERT INTO t_chunk VALUES (zeroblob(300000))") == 0);
		CHECK(exec_ok(db, "PRAGMA wal_checkpoint(TRUNCATE)") == 0);
		CHECK(stat(path, &sb) == 0 && sb.st_size > 0 && sb.st_size % (1 << 20) == 0);
	}
	CHECK(q1(db, "SELECT length(v) FROM t_chunk LIMIT 1") != NULL);
	db_close(db);

	/* Without a chunk the file is a whole number of pages, well short of 1 MB. */
	(void)snprintf(url, sizeof(url), "sqlite:%s/nochunk.db", tmpdir);
	(void)snprintf(path, sizeof(path), "%s/nochunk.db", tmpdir);
	o.sqlite_chunk = 0;
	if (db_open(&db, url, &o, err, sizeof(err)) == -1) {
		CHECK(!"db_open nochunk.db");
		return;
	}
	CHECK(exec_ok(db, "CREATE TABLE t_chunk (v BLOB)") == 0);
	CHECK(exec_ok(db, "INSERT INTO t_chunk VALUES (zeroblob(300000))") == 0);
	CHECK(exec_ok(db, "PRAGMA wal_checkpoint(TRUNCATE)") == 0);
	CHECK(stat(path, &sb) == 0 && sb.st_size % (1 << 20) != 0);
	db_close(db);
}

#define WRITERS		2
#define WRITES		150

struct writer {
	int id;
	int failures;
	int locked;
	char msg[256];
};

/* One worker thread: its own connection, short write transactions, a read in each. */
static void *
writer_main(void *arg)
{
	struct writer *w = arg;
	struct db_stmt *st;
	struct db *db = NULL;
	char err[256];
	int i;

	if (db_open(&db, B->url, NULL, err, sizeof(err)) == -1) {
		w->failures++;
		(void)snprintf(w->msg, sizeof(w->msg), "%s", err);
		return NULL;
	}
	for (i = 0; i < WRITES; i++) {
		if (db_begin(db, DB_TXN_WRITE) == -1)
			goto fail;
		if ((st = db_prepare(db, "SELECT count(*) FROM t_conc WHERE w = $1")) == NULL ||
		    db_bind_int(st, 1, w->id) == -1 || db_step(st) != DB_ROW)
			goto fail;
		if (db_column_int(st, 0) != i) {
			(void)snprintf(w->msg, sizeof(w->msg), "count %lld, want %d",
			    (long long)db_column_int(st, 0), i);
			w->failures++;
		}
		db_reset(st);
		if ((st = db_prepare(db, "INSERT INTO t_conc(w, i) VALUES ($1, $2)")) == NULL ||
		    db_bind_int(st, 1, w->id) == -1 || db_bind_int(st, 2, i) == -1 ||
		    db_step(st) != DB_DONE)
			goto fail;
		if (db_commit(db) == -1)
			goto fail;
		continue;
fail:
		w->failures++;
		if (strstr(db_errmsg(db), "locked") != NULL)
			w->locked++;
		(void)snprintf(w->msg, sizeof(w->msg), "%s", db_errmsg(db));
		(void)db_rollback(db);
	}
	db_close(db);
	return NULL;
}

/* A second writer, on its own connection with a 50 ms busy timeout. */
struct queued {
	struct db *db;
	int rc;
	double waited_ms;
};

static void *
queued_main(void *arg)
{
	struct queued *q = arg;
	struct timespec a, b;

	clock_gettime(CLOCK_MONOTONIC, &a);
	q->rc = db_begin(q->db, DB_TXN_WRITE);
	clock_gettime(CLOCK_MONOTONIC, &b);
	q->waited_ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (double)(b.tv_nsec - a.tv_nsec) / 1e6;
	if (q->rc == 0)
		q->rc = db_commit(q->db);
	return NULL;
}

/*
 * Writers queue on "<file>-wlock" before BEGIN IMMEDIATE: a writer whose busy timeout is
 * far shorter than another's transaction still gets in, woken when that one commits, where
 * SQLite's lock alone would have failed it with "database is locked" after 50 ms.
 */
static void
test_sqlite_writers_queue(void)
{
	struct db_opts o;
	struct db *db;
	struct queued q = { NULL, -1, 0 };
	enum db_backend be;
	const char *file = "";
	pthread_t th;
	char path[4200];
	struct stat sb;

	if ((db = open_db(NULL)) == NULL)
		return;
	memset(&o, 0, sizeof(o));
	o.sqlite_busy_ms = 50;
	if ((q.db = open_db(&o)) == NULL)
		goto out;
	CHECK_INT(db_url_parse(B->url, &be, &file), 0);
	(void)snprintf(path, sizeof(path), "%s-wlock", file);
	CHECK_INT(stat(path, &sb), 0);
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(pthread_create(&th, NULL, queued_main, &q), 0);
	(void)usleep(300 * 1000);
	CHECK_INT(db_commit(db), 0);
	pthread_join(th, NULL);
	CHECK_INT(q.rc, 0);
	CHECK(q.waited_ms >= 250);
	/* Both let the queue go: each can write again at once. */
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(db_rollback(db), 0);
	CHECK_INT(db_begin(q.db, DB_TXN_WRITE), 0);
	CHECK_INT(db_commit(q.db), 0);
	db_close(q.db);
out:
	db_close(db);
}

/*
 * Without its "<file>-wlock" (here a directory stands in the way) a connection writes
 * with the busy timeout alone, and the process says so once, not once per connection.
 */
static void
test_sqlite_no_queue_warns_once(void)
{
	char url[4200], path[4200], line[512];
	struct db *db[3] = { NULL, NULL, NULL };
	int i, said = 0;
	FILE *f;

	(void)snprintf(url, sizeof(url), "sqlite:%s/nq.db", tmpdir);
	(void)snprintf(path, sizeof(path), "%s/nq.db-wlock", tmpdir);
	CHECK_INT(mkdir(path, 0755), 0);
	(void)snprintf(path, sizeof(path), "%s/nq.log", tmpdir);
	log_set_level(LOG_WARN);
	stderr_to(path);
	for (i = 0; i < 3; i++)
		CHECK_INT(db_open(&db[i], url, NULL, line, sizeof(line)), 0);
	stderr_on();
	log_set_level(LOG_ERR);
	for (i = 0; i < 3 && db[i] != NULL; i++) {
		CHECK_INT(db_begin(db[i], DB_TXN_WRITE), 0);
		CHECK_INT(db_exec(db[i], "CREATE TABLE IF NOT EXISTS t_nq(x integer)"), 0);
		CHECK_INT(db_commit(db[i]), 0);
	}
	for (i = 0; i < 3; i++)
		db_close(db[i]);
	if ((f = fopen(path, "r")) == NULL) {
		harness_fail(__FILE__, __LINE__, "fopen %s: %s", path, strerror(errno));
		return;
	}
	while (fgets(line, sizeof(line), f) != NULL)
		said += strstr(line, "no writers' queue") != NULL;
	fclose(f);
	CHECK_INT(said, 1);
}

static void
test_sqlite_concurrent_writers(void)
{
	struct writer w[WRITERS];
	pthread_t th[WRITERS];
	struct db *db;
	char want[16];
	int i;

	if ((db = open_db(NULL)) == NULL)
		return;
	if (exec_ok(db, "DROP TABLE IF EXISTS t_conc; "
	    "CREATE TABLE t_conc(w integer, i integer)") == -1)
		goto out;
	memset(w, 0, sizeof(w));
	for (i = 0; i < WRITERS; i++) {
		w[i].id = i;
		CHECK_INT(pthread_create(&th[i], NULL, writer_main, &w[i]), 0);
	}
	for (i = 0; i < WRITERS; i++) {
		pthread_join(th[i], NULL);
		CHECK_INT(w[i].failures, 0);
		CHECK_INT(w[i].locked, 0);
		if (w[i].failures != 0)
			fprintf(stderr, "writer %d: %s\n", i, w[i].msg);
	}
	(void)snprintf(want, sizeof(want), "%d", WRITERS * WRITES);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_conc"), want);
out:
	db_close(db);
}

/* Checks that one db_open_code() fails with the class want. */
static void
open_fails(const char *url, enum db_err want, int line)
{
	struct db *db = (struct db *)&db;
	enum db_err code = DB_OK;
	char err[256];

	if (db_open_code(&db, url, NULL, &code, err, sizeof(err)) == 0) {
		harness_fail(__FILE__, line, "db_open(%s) succeeded", url);
		db_close(db);
		return;
	}
	if (db != NULL)
		harness_fail(__FILE__, line, "db_open(%s) failed but left *out set", url);
	if (code != want)
		harness_fail(__FILE__, line, "db_open(%s): class %d, want %d (%s)", url,
		    (int)code, (int)want, err);
	if (err[0] == '\0')
		harness_fail(__FILE__, line, "db_open(%s): no message", url);
}

/* The body of the read-only test, run without root so that file modes apply. */
static void
sqlite_readonly_checks(const char *base)
{
	char path[256], url[300];
	struct db *db;
	struct db_stmt *st;
	char err[256];

	/* A directory that does not exist: unavailable (a mount not there yet?). */
	open_fails("sqlite:/nonexistent-sluice-dir/x.db", DB_EUNAVAIL, __LINE__);

	/* A new file in a read-only directory: read-only. */
	(void)snprintf(path, sizeof(path), "%s/rodir", base);
	CHECK_INT(mkdir(path, 0555), 0);
	(void)snprintf(url, sizeof(url), "sqlite:%s/rodir/new.db", base);
	open_fails(url, DB_EREADONLY, __LINE__);

	/* An existing database file without write permission: it opens read-only, reads
	 * work and writes fail with DB_EREADONLY. */
	(void)snprintf(url, sizeof(url), "sqlite:%s/f.db", base);
	if (db_open(&db, url, NULL, err, sizeof(err)) == -1) {
		harness_fail(__FILE__, __LINE__, "%s", err);
		return;
	}
	CHECK_INT(db_exec(db, "CREATE TABLE t(x integer); INSERT INTO t VALUES (1)"), 0);
	db_close(db);
	(void)snprintf(path, sizeof(path), "%s/f.db", base);
	CHECK_INT(chmod(path, 0444), 0);
	if (db_open(&db, url, NULL, err, sizeof(err)) == -1) {
		harness_fail(__FILE__, __LINE__, "read-only file: %s", err);
	} else {
		CHECK_STR(q1(db, "SELECT count(*) FROM t"), "1");
		st = db_prepare(db, "INSERT INTO t VALUES ($1)");
		CHECK(st != NULL);
		if (st != NULL) {
			CHECK_INT(db_bind_int(st, 1, 2), 0);
			CHECK_INT(db_step(st), DB_ERROR);
			CHECK_INT(db_errcode(db), DB_EREADONLY);
			CHECK_INT(db_err_status(db_errcode(db)), 503);
		}
		db_close(db);
	}

	/* A writable WAL database in a directory that became read-only: no -wal or -shm
	 * can be made, so it cannot even be read; read-only, not "internal". */
	(void)snprintf(path, sizeof(path), "%s/d2", base);
	CHECK_INT(mkdir(path, 0755), 0);
	(void)snprintf(url, sizeof(url), "sqlite:%s/d2/g.db", base);
	if (db_open(&db, url, NULL, err, sizeof(err)) == -1) {
		harness_fail(__FILE__, __LINE__, "%s", err);
		return;
	}
	CHECK_INT(db_exec(db, "CREATE TABLE t(x integer)"), 0);
	db_close(db);
	CHECK_INT(chmod(path, 0555), 0);
	open_fails(url, DB_EREADONLY, __LINE__);
}

static void
test_sqlite_readonly(void)
{
	char base[128];
	struct passwd *pw = NULL;
	pid_t pid;
	int status, failed_before;

	(void)snprintf(base, sizeof(base), "%s/ro", tmpdir);
	if (mkdir(base, 0755) == -1) {
		harness_fail(__FILE__, __LINE__, "mkdir %s: %s", base, strerror(errno));
		return;
	}
	if (geteuid() != 0) {
		sqlite_readonly_checks(base);
		return;
	}
	/* Root ignores file modes, so the checks run in a child as nobody. */
	if ((pw = getpwnam("nobody")) == NULL) {
		harness_fail(__FILE__, __LINE__, "no user nobody");
		return;
	}
	CHECK_INT(chown(base, pw->pw_uid, pw->pw_gid), 0);
	CHECK_INT(chmod(tmpdir, 0711), 0);
	failed_before = harness_failed_checks;
	fflush(NULL);
	if ((pid = fork()) == -1) {
		harness_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
		return;
	}
	if (pid == 0) {
		if (setgroups(0, NULL) == -1 || setgid(pw->pw_gid) == -1 ||
		    setuid(pw->pw_uid) == -1)
			_exit(2);
		sqlite_readonly_checks(base);
		fflush(NULL);
		/* Its own checks only: the count it inherited has earlier tests' failures. */
		_exit(harness_failed_checks != failed_before);
	}
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* ---- PostgreSQL only ---- */

static void
test_pg_isolation(void)
{
	static const struct {
		enum db_isolation iso;
		const char *want;
	} cases[] = {
		{ DB_ISO_DEFAULT, "read committed" },
		{ DB_ISO_READ_COMMITTED, "read committed" },
		{ DB_ISO_REPEATABLE_READ, "repeatable read" },
		{ DB_ISO_SERIALIZABLE, "serializable" },
	};
	struct db_opts o;
	struct db *db;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&o, 0, sizeof(o));
		o.isolation = cases[i].iso;
		if ((db = open_db(&o)) == NULL)
			return;
		CHECK_INT(db_begin(db, DB_TXN_READ), 0);
		CHECK_STR(q1(db, "SHOW transaction_isolation"), cases[i].want);
		CHECK_STR(q1(db, "SHOW transaction_read_only"), "on");
		CHECK_INT(db_commit(db), 0);
		CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
		CHECK_STR(q1(db, "SHOW transaction_isolation"), cases[i].want);
		CHECK_STR(q1(db, "SHOW transaction_read_only"), "off");
		CHECK_INT(db_commit(db), 0);
		db_close(db);
	}
}

/* SLUICE_DB_PLANS reaches every session as plan_cache_mode, on a connection of the handle's
 * own and on the connections a process's handles share; auto leaves the server's. */
static void
test_pg_plans(void)
{
	static const struct {
		enum db_plans plans;
		const char *want;
	} cases[] = {
		{ DB_PLANS_AUTO, "auto" },
		{ DB_PLANS_GENERIC, "force_generic_plan" },
		{ DB_PLANS_CUSTOM, "force_custom_plan" },
	};
	struct db_opts o;
	struct db *db;
	size_t i;
	int shared;

	for (shared = 0; shared <= 1; shared++)
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			memset(&o, 0, sizeof(o));
			o.pg_plans = cases[i].plans;
			o.pg_conns = shared ? 2 : 0;
			if ((db = open_db(&o)) == NULL)
				return;
			CHECK_STR(q1(db, "SHOW plan_cache_mode"), cases[i].want);
			/* A prepared statement runs under it, values and all. */
			CHECK_STR(q1(db, "SELECT current_setting('plan_cache_mode')"), cases[i].want);
			db_close(db);
		}
}

/*
 * A schema change that alters a prepared statement's result (a column added under SELECT
 * *): PostgreSQL refuses the old plan (0A000, "cached plan must not change result type").
 * Outside a transaction the statement is prepared afresh and run again at once, on a
 * connection of the handle's own and on shared ones; inside one the transaction fails
 * 503-class (DB_EBUSY) and the next statement prepares it afresh.
 */
static void
test_pg_result_type_change(void)
{
	struct db_opts o;
	struct db *db;
	struct db_stmt *st;
	int shared;

	for (shared = 0; shared <= 1; shared++) {
		memset(&o, 0, sizeof(o));
		o.pg_conns = shared ? 2 : 0;
		if ((db = open_db(&o)) == NULL)
			return;
		CHECK_INT(exec_ok(db, "DROP TABLE IF EXISTS t_rt; CREATE TABLE t_rt(a integer); "
		    "INSERT INTO t_rt VALUES (1)"), 0);
		CHECK_STR(q1(db, "SELECT * FROM t_rt"), "1");
		CHECK_INT(exec_ok(db, "ALTER TABLE t_rt ADD COLUMN b text DEFAULT 'x'"), 0);
		CHECK_STR(q1(db, "SELECT * FROM t_rt"), "1");
		if ((st = db_prepare(db, "SELECT * FROM t_rt")) != NULL) {
			CHECK_INT(db_step(st), DB_ROW);
			CHECK_INT(db_column_count(st), 2);
			db_reset(st);
		}
		/* In a transaction: a clear, retryable failure, then served again. */
		CHECK_INT(db_begin(db, DB_TXN_READ), 0);
		CHECK_STR(q1(db, "SELECT * FROM t_rt"), "1");
		CHECK_INT(db_commit(db), 0);
		CHECK_INT(exec_ok(db, "ALTER TABLE t_rt DROP COLUMN b"), 0);
		CHECK_INT(db_begin(db, DB_TXN_READ), 0);
		CHECK(q1(db, "SELECT * FROM t_rt") == NULL);
		CHECK_INT(db_errcode(db), DB_EBUSY);
		CHECK_INT(db_rollback(db), 0);
		CHECK_INT(db_begin(db, DB_TXN_READ), 0);
		CHECK_STR(q1(db, "SELECT * FROM t_rt"), "1");
		CHECK_INT(db_commit(db), 0);
		CHECK_INT(exec_ok(db, "DROP TABLE t_rt"), 0);
		db_close(db);
	}
}

static void
test_pg_read_only_txn(void)
{
	struct db *db;

	if ((db = open_db(NULL)) == NULL)
		return;
	if (exec_ok(db, "DROP TABLE IF EXISTS t_ro; CREATE TABLE t_ro(n integer)") == -1)
		goto out;
	/* A write in a transaction its caller began read-only: the caller's mistake, bad
	 * input with PostgreSQL's 25006. */
	CHECK_INT(db_begin(db, DB_TXN_READ), 0);
	CHECK_INT(run_int(db, "INSERT INTO t_ro VALUES ($1)", 1), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_STR(db_sqlstate(db), "25006");
	/* COMMIT of the failed transaction is a failure with the same class. */
	CHECK_INT(db_commit(db), -1);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_INT(db_rollback(db), 0);
	/* A session the server made read-only (a standby, default_transaction_read_only;
	 * here a transaction opened by hand): the database refuses writes, 503. */
	CHECK_INT(db_exec(db, "BEGIN READ ONLY"), 0);
	CHECK_INT(run_int(db, "INSERT INTO t_ro VALUES ($1)", 1), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_EREADONLY);
	CHECK_INT(db_rollback(db), 0);
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(run_int(db, "INSERT INTO t_ro VALUES ($1)", 1), DB_DONE);
	CHECK_INT(db_commit(db), 0);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_ro"), "1");
out:
	db_close(db);
}

#define RESTART_SQL	"SELECT 1 + CAST($1 AS integer)"

/* The statement after a restart fails with DB_EUNAVAIL (503); after db_ready() the next
 * one succeeds. */
static void
test_pg_restart_503_once(void)
{
	struct db *db;
	struct db_stmt *st;

	if ((db = open_db(NULL)) == NULL)
		return;
	CHECK_INT(run_int(db, RESTART_SQL, 1), DB_DONE);
	if (pgtmp_restart(&pgc) == -1) {
		harness_fail(__FILE__, __LINE__, "pgtmp_restart");
		goto out;
	}
	st = db_prepare(db, RESTART_SQL);	/* a cache hit: no round trip yet */
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK_INT(db_bind_int(st, 1, 1), 0);
		CHECK_INT(db_step(st), DB_ERROR);
		CHECK_INT(db_errcode(db), DB_EUNAVAIL);
		CHECK_INT(db_err_status(db_errcode(db)), 503);
	}
	CHECK_INT(db_ready(db), 0);
	st = db_prepare(db, RESTART_SQL);
	CHECK(st != NULL);
	if (st != NULL) {
		CHECK_INT(db_bind_int(st, 1, 41), 0);
		CHECK_INT(db_step(st), DB_ROW);
		CHECK_INT(db_column_int(st, 0), 42);
	}
out:
	db_close(db);
}

/* A restart while the connection sat idle between requests costs no request at all:
 * db_ready() sees the dead socket and reconnects. */
static void
test_pg_restart_while_idle(void)
{
	struct db *db;

	if ((db = open_db(NULL)) == NULL)
		return;
	CHECK_INT(run_int(db, RESTART_SQL, 1), DB_DONE);
	if (pgtmp_restart(&pgc) == -1) {
		harness_fail(__FILE__, __LINE__, "pgtmp_restart");
		goto out;
	}
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(run_int(db, RESTART_SQL, 1), DB_DONE);
	CHECK_INT(db_ready(db), 0);
	CHECK_STR(q1(db, "SELECT 7"), "7");
out:
	db_close(db);
}

/* A restart in the middle of a transaction: the statement fails with DB_EUNAVAIL, the
 * rollback has nothing left to do, and the next request works. */
static void
test_pg_restart_in_txn(void)
{
	struct db *db;

	if ((db = open_db(NULL)) == NULL)
		return;
	if (exec_ok(db, "DROP TABLE IF EXISTS t_rs; CREATE TABLE t_rs(n integer)") == -1)
		goto out;
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(run_int(db, "INSERT INTO t_rs VALUES ($1)", 1), DB_DONE);
	if (pgtmp_restart(&pgc) == -1) {
		harness_fail(__FILE__, __LINE__, "pgtmp_restart");
		goto out;
	}
	CHECK_INT(run_int(db, "INSERT INTO t_rs VALUES ($1)", 2), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_EUNAVAIL);
	CHECK_INT(db_rollback(db), 0);
	CHECK_INT(db_ready(db), 0);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_rs"), "0");
out:
	db_close(db);
}

/* The server down for a while: every request fails with DB_EUNAVAIL, none hangs, and the
 * first one after it is back succeeds. */
static void
test_pg_server_down(void)
{
	struct db *db;
	enum db_err code;
	char err[256];
	struct db *db2 = NULL;

	if ((db = open_db(NULL)) == NULL)
		return;
	CHECK_STR(q1(db, "SELECT 1"), "1");
	if (pgtmp_stop_server(&pgc) == -1) {
		harness_fail(__FILE__, __LINE__, "pgtmp_stop_server");
		goto out;
	}
	CHECK_INT(db_ready(db), -1);
	CHECK_INT(db_errcode(db), DB_EUNAVAIL);
	CHECK(db_prepare(db, "SELECT 2") == NULL);
	CHECK_INT(db_errcode(db), DB_EUNAVAIL);
	CHECK_INT(db_ready(db), -1);
	CHECK_INT(db_open_code(&db2, B->url, NULL, &code, err, sizeof(err)), -1);
	CHECK_INT(code, DB_EUNAVAIL);
	if (pgtmp_start_server(&pgc) == -1) {
		harness_fail(__FILE__, __LINE__, "pgtmp_start_server");
		goto out;
	}
	CHECK_INT(db_ready(db), 0);
	CHECK_STR(q1(db, "SELECT 3"), "3");
out:
	db_close(db);
}

/* ---- PostgreSQL: connections shared by threads (db_pg_pool.c) ---- */

static double ms_since(const struct timespec *a);

#define POOL_THREADS	8
#define POOL_CONNS	2
#define POOL_ROUNDS	150

/* Opens a handle on the process's shared pool of conns connections. */
static struct db *
open_shared(int conns, int stmt_cache, int budget_ms)
{
	struct db_opts o;

	memset(&o, 0, sizeof(o));
	o.pg_conns = conns;
	o.stmt_cache = stmt_cache;
	o.stmt_timeout_ms = budget_ms;
	return open_db(&o);
}

struct pool_arg {
	pthread_t tid;
	struct db *db;
	int id;
	int bad;		/* wrong answers and unexpected failures */
	int rows;		/* rows this thread inserted and was told so */
	atomic_int *stop;	/* the monitor's */
	int max_backends;	/* the monitor's */
};

static int
pool_round(struct pool_arg *a, int i)
{
	int64_t v = (int64_t)a->id * 100000 + i;
	struct db_stmt *st;
	int ok = 0;

	switch (i % 5) {
	case 0:
		/* A transaction: one connection for this thread alone until COMMIT. */
		if (db_begin(a->db, DB_TXN_WRITE) != 0)
			return 0;
		if (run_int(a->db, "INSERT INTO t_pool VALUES ($1)", v) == DB_DONE &&
		    (st = db_prepare(a->db, "SELECT count(*) FROM t_pool WHERE n = $1")) != NULL &&
		    db_bind_int(st, 1, v) == 0 && db_step(st) == DB_ROW &&
		    db_column_int(st, 0) == 1) {
			db_reset(st);
			ok = db_commit(a->db) == 0;
		}
		if (!ok)
			db_rollback(a->db);
		a->rows += ok;
		return ok;
	case 1:
		/* A duplicate key: fails alone (its own Sync), as a conflict. */
		return run_int(a->db, "INSERT INTO t_pool_dup VALUES ($1)", 0) == DB_ERROR &&
		    db_errcode(a->db) == DB_ECONSTRAINT;
	case 2:
		if (run_int(a->db, "INSERT INTO t_pool VALUES ($1)", v) != DB_DONE)
			return 0;
		a->rows++;
		return 1;
	default:
		/* Each thread gets its own answer back, whoever sent it. */
		if ((st = db_prepare(a->db, i % 5 == 3 ? "SELECT CAST($1 AS bigint) * 2" :
		    "SELECT CAST($1 AS bigint) * 2, pg_backend_pid()")) == NULL ||
		    db_bind_int(st, 1, v) != 0 || db_step(st) != DB_ROW)
			return 0;
		ok = db_column_int(st, 0) == 2 * v;
		db_reset(st);
		return ok;
	}
}

static void *
pool_worker(void *v)
{
	struct pool_arg *a = v;
	int i;

	for (i = 0; i < POOL_ROUNDS; i++) {
		if (db_ready(a->db) == -1 || !pool_round(a, i))
			a->bad++;
		db_deadline_clear(a->db);
	}
	return NULL;
}

/* Samples how many backends the pool holds while the workers run. */
static void *
pool_monitor(void *v)
{
	struct pool_arg *a = v;
	const char *t;
	int n;

	while (!atomic_load(a->stop)) {
		t = q1(a->db, "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
		    "'sluice' AND backend_type = 'client backend' AND pid <> pg_backend_pid()");
		n = t != NULL ? atoi(t) : -1;
		if (n < 0)
			a->bad++;
		else if (n > a->max_backends)
			a->max_backends = n;
		usleep(2000);
	}
	return NULL;
}

/* Eight threads on two connections: every answer reaches its own thread, transactions
 * and failing statements mix with pipelined ones, every acknowledged row is stored, and
 * the server never sees more than two backends for them. */
static void
test_pg_pool_threads_share_connections(void)
{
	struct pool_arg a[POOL_THREADS], mon;
	struct db *setup;
	atomic_int stop = 0;
	int i, started = 0, rows = 0, bad = 0;
	const char *t;

	memset(a, 0, sizeof(a));
	memset(&mon, 0, sizeof(mon));
	if ((setup = open_db(NULL)) == NULL)
		return;
	if (exec_ok(setup, "DROP TABLE IF EXISTS t_pool; DROP TABLE IF EXISTS t_pool_dup; "
	    "CREATE TABLE t_pool(n bigint PRIMARY KEY); CREATE TABLE t_pool_dup(n bigint "
	    "PRIMARY KEY); INSERT INTO t_pool_dup VALUES (0)") == -1)
		goto out;
	mon.db = setup;
	mon.stop = &stop;
	for (i = 0; i < POOL_THREADS; i++) {
		a[i].id = i + 1;
		if ((a[i].db = open_shared(POOL_CONNS, 0, 5000)) == NULL)
			goto out;
	}
	/* An idle pool holds one backend, opened to check the server. */
	CHECK_STR(q1(setup, "SELECT count(*) FROM pg_stat_activity WHERE application_name = "
	    "'sluice' AND backend_type = 'client backend' AND pid <> pg_backend_pid()"), "1");
	CHECK_INT(pthread_create(&mon.tid, NULL, pool_monitor, &mon), 0);
	for (i = 0; i < POOL_THREADS; i++) {
		if (pthread_create(&a[i].tid, NULL, pool_worker, &a[i]) != 0)
			break;
		started++;
	}
	CHECK_INT(started, POOL_THREADS);
	for (i = 0; i < started; i++) {
		pthread_join(a[i].tid, NULL);
		rows += a[i].rows;
		bad += a[i].bad;
	}
	stop = 1;
	pthread_join(mon.tid, NULL);
	CHECK_INT(bad, 0);
	CHECK_INT(mon.bad, 0);
	CHECK_INT(rows, POOL_THREADS * (POOL_ROUNDS / 5 * 2));
	t = q1(setup, "SELECT count(*) FROM t_pool");
	CHECK(t != NULL && atoi(t) == rows);
	printf("  %d threads, at most %d backends seen (db_conns %d)\n", POOL_THREADS,
	    mon.max_backends, POOL_CONNS);
	CHECK(mon.max_backends >= 1 && mon.max_backends <= POOL_CONNS);
out:
	/* The pool logs how many statements shared a batch when it closes. */
	log_set_level(LOG_DEBUG);
	for (i = 0; i < POOL_THREADS; i++)
		db_close(a[i].db);
	log_set_level(LOG_ERR);
	db_close(setup);
}

/* One connection, held by a transaction: a statement of another thread waits for it (a
 * wait counted once), and gives up with DB_ETIMEOUT (503) when the request's budget runs
 * out first. */
static void
test_pg_pool_wait_has_budget(void)
{
	struct db *a = NULL, *b = NULL;
	struct metrics_page *pg = calloc(1, metrics_page_size(1));
	struct timespec t0;
	double ms;

	/* The wait is counted on a counters page, as a worker's (common/metrics.h). */
	metrics_db_attach(pg);
	if ((a = open_shared(1, 0, 300)) == NULL || (b = open_shared(1, 0, 300)) == NULL)
		goto out;
	CHECK_INT(db_ready(a), 0);
	CHECK_INT(db_begin(a, DB_TXN_READ), 0);
	CHECK_INT(db_ready(b), 0);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	CHECK(q1(b, "SELECT 1") == NULL);
	ms = ms_since(&t0);
	CHECK_INT(db_errcode(b), DB_ETIMEOUT);
	CHECK_INT(db_err_status(db_errcode(b)), 503);
	CHECK(ms >= 250 && ms < 3000);
	CHECK_INT(db_commit(a), 0);
	CHECK_INT(db_ready(b), 0);
	CHECK_STR(q1(b, "SELECT 1"), "1");
	/* One statement waited (once, however often it was woken); nothing else did. */
	CHECK(pg != NULL && pg->db.conn_waits == 1);
out:
	metrics_db_attach(NULL);
	free(pg);
	db_close(a);
	db_close(b);
}

struct pool_hammer {
	pthread_t tid;
	struct db *db;
	atomic_int *stop;
	long n, bad;
};

static void *
pool_hammer_run(void *v)
{
	struct pool_hammer *h = v;

	while (!atomic_load(h->stop)) {
		if (run_int(h->db, "SELECT CAST($1 AS integer)", 1) == DB_DONE)
			h->n++;
		else
			h->bad++;
	}
	return NULL;
}

/* A stream of statements from four threads on one connection never starves a transaction:
 * the one that wants the connection reserves it, its queue drains, and the transaction
 * gets it well within its budget, ten times over. */
static void
test_pg_pool_txn_not_starved(void)
{
	struct pool_hammer h[4];
	struct db *t = NULL;
	atomic_int stop = 0;
	int i, started = 0, got = 0;
	long n = 0, bad = 0;

	memset(h, 0, sizeof(h));
	if ((t = open_shared(1, 0, 2000)) == NULL)
		return;
	for (i = 0; i < 4; i++) {
		h[i].stop = &stop;
		if ((h[i].db = open_shared(1, 0, 2000)) == NULL)
			goto out;
	}
	for (i = 0; i < 4; i++) {
		if (pthread_create(&h[i].tid, NULL, pool_hammer_run, &h[i]) != 0)
			break;
		started++;
	}
	usleep(50 * 1000);
	for (i = 0; i < 10; i++) {
		CHECK_INT(db_ready(t), 0);
		if (db_begin(t, DB_TXN_READ) == 0 && db_commit(t) == 0)
			got++;
		db_deadline_clear(t);
		usleep(5 * 1000);
	}
	stop = 1;
	for (i = 0; i < started; i++) {
		pthread_join(h[i].tid, NULL);
		n += h[i].n;
		bad += h[i].bad;
	}
	CHECK_INT(started, 4);
	CHECK_INT(got, 10);
	CHECK_INT(bad, 0);
	CHECK(n > 0);
out:
	for (i = 0; i < 4; i++)
		db_close(h[i].db);
	db_close(t);
}

/* A connection's statement cache smaller than what two handles use: statements are
 * evicted (DEALLOCATE in the pipeline) and prepared again, every answer stays right. */
static void
test_pg_pool_stmt_eviction(void)
{
	struct db *a = NULL, *b = NULL;
	char sql[64];
	int i, bad = 0;
	const char *t;

	if ((a = open_shared(1, 2, 0)) == NULL || (b = open_shared(1, 2, 0)) == NULL)
		goto out;
	for (i = 0; i < 40; i++) {
		(void)snprintf(sql, sizeof(sql), "SELECT %d + 0", i % 10);
		t = q1(i % 2 ? a : b, sql);
		if (t == NULL || atoi(t) != i % 10)
			bad++;
	}
	CHECK_INT(bad, 0);
	/* The server holds no more than the cache's statements on the connection. */
	t = q1(a, "SELECT count(*) FROM pg_prepared_statements");
	CHECK(t != NULL && atoi(t) <= 2);
out:
	db_close(a);
	db_close(b);
}

/* Shared connections and a restart: one that died while idle is reopened before use (no
 * failure); a transaction caught by the restart fails with DB_EUNAVAIL, the next request
 * succeeds. */
static void
test_pg_pool_restart(void)
{
	struct db *a = NULL, *b = NULL;

	if ((a = open_shared(2, 0, 0)) == NULL || (b = open_shared(2, 0, 0)) == NULL)
		goto out;
	if (exec_ok(a, "DROP TABLE IF EXISTS t_prs; CREATE TABLE t_prs(n integer)") == -1)
		goto out;
	CHECK_STR(q1(b, "SELECT 5"), "5");
	if (pgtmp_restart(&pgc) == -1) {
		harness_fail(__FILE__, __LINE__, "pgtmp_restart");
		goto out;
	}
	CHECK_INT(db_ready(b), 0);
	CHECK_STR(q1(b, "SELECT 6"), "6");
	CHECK_INT(db_ready(a), 0);
	CHECK_INT(db_begin(a, DB_TXN_WRITE), 0);
	CHECK_INT(run_int(a, "INSERT INTO t_prs VALUES ($1)", 1), DB_DONE);
	if (pgtmp_restart(&pgc) == -1) {
		harness_fail(__FILE__, __LINE__, "pgtmp_restart");
		goto out;
	}
	CHECK_INT(run_int(a, "INSERT INTO t_prs VALUES ($1)", 2), DB_ERROR);
	CHECK_INT(db_errcode(a), DB_EUNAVAIL);
	CHECK_INT(db_err_status(db_errcode(a)), 503);
	CHECK_INT(db_rollback(a), 0);
	CHECK_INT(db_ready(a), 0);
	CHECK_STR(q1(a, "SELECT count(*) FROM t_prs"), "0");
	CHECK_INT(db_ready(b), 0);
	CHECK_STR(q1(b, "SELECT 7"), "7");
out:
	db_close(a);
	db_close(b);
}

/* ---- back-end independent ---- */

static void
test_bad_url(void)
{
	struct db *db = (struct db *)&db;
	enum db_err code;
	char err[256];

	open_fails("mysql://localhost/x", DB_EINPUT, __LINE__);
	open_fails("", DB_EINPUT, __LINE__);
	open_fails("sqlite:", DB_EINPUT, __LINE__);
	open_fails("sqlite://", DB_EINPUT, __LINE__);
	open_fails("postgresql:///x?nosuchparam=1", DB_EINPUT, __LINE__);
	open_fails("host=/tmp nosuchoption=1", DB_EINPUT, __LINE__);
	CHECK_INT(db_open(&db, NULL, NULL, err, sizeof(err)), -1);
	CHECK(db == NULL);
	/* The password never shows in the message. */
	CHECK_INT(db_open_code(&db, "postgresql://u:s3cretpw@/nodb?host=/nonexistent-sluice",
	    NULL, &code, err, sizeof(err)), -1);
	CHECK_INT(code, DB_EUNAVAIL);
	CHECK(strstr(err, "s3cretpw") == NULL);
	CHECK_INT(db_open_code(&db, "mysql://u:s3cretpw@host/x", NULL, &code, err,
	    sizeof(err)), -1);
	CHECK(strstr(err, "s3cretpw") == NULL);
}

/* db_url_parse(): the one reader of database URLs, table-driven. */
static void
test_url_parse(void)
{
	static const struct {
		const char *url;
		int ok;
		enum db_backend be;
		const char *path;	/* for DB_PG: the whole URL */
	} cases[] = {
		{ "sqlite:data/x.db", 1, DB_SQLITE, "data/x.db" },
		{ "sqlite://data/x.db", 1, DB_SQLITE, "data/x.db" },
		{ "sqlite:///abs/x.db", 1, DB_SQLITE, "/abs/x.db" },
		{ "sqlite:/abs/x.db", 1, DB_SQLITE, "/abs/x.db" },
		{ "sqlite::memory:", 1, DB_SQLITE, ":memory:" },
		{ "sqlite:a=b.db", 1, DB_SQLITE, "a=b.db" },
		{ "sqlite:", 0, DB_SQLITE, NULL },
		{ "sqlite://", 0, DB_SQLITE, NULL },
		{ "SQLITE:x.db", 0, DB_SQLITE, NULL },
		{ "sqlite", 0, DB_SQLITE, NULL },
		{ "postgresql:///chinook?host=/run/pg", 1, DB_PG, NULL },
		{ "postgres://u@h/db", 1, DB_PG, NULL },
		{ "host=/tmp dbname=x", 1, DB_PG, NULL },
		/* Several hosts: the whole string goes to libpq as it is. */
		{ "postgresql://h1:5432,h2:5433/db?target_session_attrs=read-write&"
		    "connect_timeout=2", 1, DB_PG, NULL },
		{ "host=h1,h2 port=5432,5433 dbname=db target_session_attrs=prefer-standby", 1,
		    DB_PG, NULL },
		{ "postgresql:/x", 0, DB_PG, NULL },
		{ "mysql://localhost/x", 0, DB_PG, NULL },
		{ "data/x.db", 0, DB_PG, NULL },
		{ "", 0, DB_PG, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum db_backend be = (enum db_backend)77;
		const char *path = "untouched";
		int rc = db_url_parse(cases[i].url, &be, &path);

		CHECK_INT(rc == 0, cases[i].ok);
		if (!cases[i].ok) {
			CHECK_INT(be, 77);
			CHECK_STR(path, "untouched");
			continue;
		}
		CHECK_INT(be, cases[i].be);
		CHECK_STR(path, cases[i].be == DB_PG ? cases[i].url : cases[i].path);
		/* The path is borrowed from the URL, not copied. */
		CHECK(path >= cases[i].url && path < cases[i].url + strlen(cases[i].url));
	}
	{
		enum db_backend be = DB_PG;
		const char *path = NULL;

		CHECK_INT(db_url_parse(NULL, &be, &path), -1);
		CHECK(path == NULL);
	}
}

/* db_read= is PostgreSQL's: refused on SQLite (one file, one host) and when it is no
 * PostgreSQL URL itself; SLUICE_DB_READ fills it, empty meaning unset. */
static void
test_read_url_needs_pg(void)
{
	struct db_opts o;
	struct db *db = NULL;
	enum db_err code = DB_OK;
	char err[256];

	memset(&o, 0, sizeof(o));
	o.read_url = "postgresql://h1,h2/x?target_session_attrs=prefer-standby";
	CHECK_INT(db_open_code(&db, "sqlite::memory:", &o, &code, err, sizeof(err)), -1);
	CHECK(db == NULL);
	CHECK_INT(code, DB_EINPUT);
	CHECK(strstr(err, "db_read") != NULL);
	o.read_url = "sqlite::memory:";
	CHECK_INT(db_open_code(&db, "postgresql://h1,h2/x", &o, &code, err, sizeof(err)), -1);
	CHECK(db == NULL);
	CHECK_INT(code, DB_EINPUT);
	setenv("SLUICE_DB_READ", "postgresql://h2/x?target_session_attrs=prefer-standby", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK(o.read_url != NULL &&
	    strcmp(o.read_url, "postgresql://h2/x?target_session_attrs=prefer-standby") == 0);
	setenv("SLUICE_DB_READ", "", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK(o.read_url == NULL);
	unsetenv("SLUICE_DB_READ");
}

static void
test_sqlite_url_forms(void)
{
	char url[256];
	struct db *db = NULL;
	char err[256], cwd[256];

	/* "sqlite:///abs" is /abs; "sqlite:rel" is relative to the working directory. */
	(void)snprintf(url, sizeof(url), "sqlite://%s/forms.db", tmpdir);
	CHECK_INT(db_open(&db, url, NULL, err, sizeof(err)), 0);
	db_close(db);
	CHECK_INT(access(strchr(url, '/') + 2, F_OK), 0);
	if (getcwd(cwd, sizeof(cwd)) == NULL || chdir(tmpdir) == -1) {
		harness_fail(__FILE__, __LINE__, "chdir: %s", strerror(errno));
		return;
	}
	CHECK_INT(db_open(&db, "sqlite:rel.db", NULL, err, sizeof(err)), 0);
	db_close(db);
	CHECK_INT(db_open(&db, "sqlite://rel2.db", NULL, err, sizeof(err)), 0);
	db_close(db);
	CHECK_INT(access("rel.db", F_OK), 0);
	CHECK_INT(access("rel2.db", F_OK), 0);
	CHECK_INT(chdir(cwd), 0);
}

static void
test_opts_from_env(void)
{
	static const struct {
		const char *var, *val;
		int rc;
	} cases[] = {
		{ "SLUICE_DB_ISOLATION", "serializable", 0 },
		{ "SLUICE_DB_ISOLATION", "repeatable_read", 0 },
		{ "SLUICE_DB_ISOLATION", "read_committed", 0 },
		{ "SLUICE_DB_ISOLATION", "default", 0 },
		{ "SLUICE_DB_ISOLATION", "snapshot", -1 },
		{ "SLUICE_SQLITE_SYNC", "off", 0 },
		{ "SLUICE_SQLITE_SYNC", "normal", 0 },
		{ "SLUICE_SQLITE_SYNC", "full", 0 },
		{ "SLUICE_SQLITE_SYNC", "extra", -1 },
		{ "SLUICE_SQLITE_BUSY_MS", "250", 0 },
		{ "SLUICE_SQLITE_BUSY_MS", "0", -1 },
		{ "SLUICE_SQLITE_WRITE_MS", "0", 0 },
		{ "SLUICE_SQLITE_WRITE_MS", "1000", 0 },
		{ "SLUICE_SQLITE_WRITE_MS", "-1", -1 },
		{ "SLUICE_SQLITE_WRITE_MS", "3600001", -1 },
		{ "SLUICE_SQLITE_BUSY_MS", "-5", -1 },
		{ "SLUICE_SQLITE_BUSY_MS", "12x", -1 },
		{ "SLUICE_SQLITE_BUSY_MS", " 12", -1 },
		{ "SLUICE_SQLITE_BUSY_MS", "99999999999999999999", -1 },
		{ "SLUICE_SQLITE_MMAP", "-1", 0 },
		{ "SLUICE_SQLITE_MMAP", "0", 0 },
		{ "SLUICE_SQLITE_MMAP", "1048576", 0 },
		{ "SLUICE_SQLITE_MMAP", "-2", -1 },
		{ "SLUICE_SQLITE_MMAP", "1e6", -1 },
		{ "SLUICE_DB_STMT_CACHE", "16", 0 },
		{ "SLUICE_DB_STMT_CACHE", "0", -1 },
		{ "SLUICE_DB_STMT_CACHE", "0x10", -1 },
		{ "SLUICE_DB_CONNS", "3", 0 },
		{ "SLUICE_DB_CONNS", "0", 0 },
		{ "SLUICE_DB_CONNS", "-1", -1 },
		{ "SLUICE_DB_CONNS", "257", -1 },
		{ "SLUICE_DB_CONNS", "2x", -1 },
		{ "SLUICE_STMT_TIMEOUT_MS", "0", 0 },
		{ "SLUICE_STMT_TIMEOUT_MS", "-1", -1 },
		{ "SLUICE_STMT_TIMEOUT_MS", "3600001", -1 },
	};
	static const char *const vars[] = { "SLUICE_DB_ISOLATION", "SLUICE_SQLITE_SYNC",
	    "SLUICE_SQLITE_BUSY_MS", "SLUICE_SQLITE_MMAP", "SLUICE_SQLITE_WRITE_MS",
	    "SLUICE_DB_STMT_CACHE",
	    "SLUICE_STMT_TIMEOUT_MS", "SLUICE_RESP_MAX", "SLUICE_DB_CONNS", "SLUICE_THREADS",
	    "SLUICE_CPUS" };
	struct db_opts o;
	long cpus;
	size_t i;
	int rc;

	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.isolation, DB_ISO_DEFAULT);
	CHECK_INT(o.sqlite_sync, DB_SYNC_FULL);
	CHECK_INT(o.sqlite_busy_ms, 10000);
	CHECK_INT(o.sqlite_mmap, 256LL * 1024 * 1024);
	CHECK_INT(o.sqlite_write_ms, 250);
	CHECK_INT(o.stmt_cache, 64);
	CHECK_INT(o.stmt_timeout_ms, 5000);
	CHECK_INT(o.value_max, 64LL * 1024 * 1024);

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		setenv(cases[i].var, cases[i].val, 1);
		/* A bad value is logged at error level: expected here, so hidden. */
		stderr_off();
		rc = db_opts_from_env(&o);
		stderr_on();
		if (rc != cases[i].rc)
			harness_fail(__FILE__, __LINE__, "%s=%s: got %d, want %d", cases[i].var,
			    cases[i].val, rc, cases[i].rc);
		unsetenv(cases[i].var);
	}

	setenv("SLUICE_DB_ISOLATION", "serializable", 1);
	setenv("SLUICE_SQLITE_SYNC", "normal", 1);
	setenv("SLUICE_SQLITE_BUSY_MS", "250", 1);
	setenv("SLUICE_SQLITE_MMAP", "0", 1);
	setenv("SLUICE_SQLITE_WRITE_MS", "0", 1);
	setenv("SLUICE_DB_STMT_CACHE", "16", 1);
	setenv("SLUICE_STMT_TIMEOUT_MS", "0", 1);
	setenv("SLUICE_RESP_MAX", "1000", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.stmt_timeout_ms, 0);
	CHECK_INT(o.value_max, 1000);
	CHECK_INT(o.isolation, DB_ISO_SERIALIZABLE);
	CHECK_INT(o.sqlite_sync, DB_SYNC_NORMAL);
	CHECK_INT(o.sqlite_busy_ms, 250);
	CHECK_INT(o.sqlite_mmap, -1);
	/* 0 in the environment: no budget of its own (-1 in struct db_opts). */
	CHECK_INT(o.sqlite_write_ms, -1);
	CHECK_INT(o.stmt_cache, 16);

	/* PostgreSQL connections shared by the threads: min(threads, max(2, min(CPUs, 8)))
	 * unless given; the CPUs sluiced counts (SLUICE_CPUS), else the online ones. */
	cpus = sysconf(_SC_NPROCESSORS_ONLN);
	setenv("SLUICE_THREADS", "1", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.pg_conns, 1);
	setenv("SLUICE_THREADS", "256", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.pg_conns, cpus < 2 ? 2 : cpus > DB_PG_CONNS_AUTO_MAX ? DB_PG_CONNS_AUTO_MAX :
	    cpus);
	setenv("SLUICE_CPUS", "5", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.pg_conns, 5);
	setenv("SLUICE_CPUS", "64", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.pg_conns, DB_PG_CONNS_AUTO_MAX);
	setenv("SLUICE_CPUS", "1", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.pg_conns, 2);
	unsetenv("SLUICE_CPUS");
	setenv("SLUICE_THREADS", "2", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.pg_conns, 2);
	setenv("SLUICE_DB_CONNS", "3", 1);
	CHECK_INT(db_opts_from_env(&o), 0);
	CHECK_INT(o.pg_conns, 3);
	for (i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		unsetenv(vars[i]);
}

static void
test_err_status(void)
{
	static const struct {
		enum db_err e;
		int status;
	} cases[] = {
		{ DB_ECONSTRAINT, 409 }, { DB_EINPUT, 400 }, { DB_EBUSY, 503 },
		{ DB_EUNAVAIL, 503 }, { DB_EREADONLY, 503 }, { DB_EFULL, 507 },
		{ DB_ETIMEOUT, 503 }, { DB_EINTERNAL, 500 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_INT(db_err_status(cases[i].e), cases[i].status);
}

static void
test_pg_cluster_start(void)
{
	CHECK(pg_up);
}

/* Runs fn under "backend/name", so the two back ends' lines can be told apart. */
static void
run_b(const char *name, void (*fn)(void))
{
	static char label[128];

	(void)snprintf(label, sizeof(label), "%s/%s", B->name, name);
	harness_run(label, fn);
}
#define RUNB(fn) run_b(#fn, fn)

/* Milliseconds since a. */
static double
ms_since(const struct timespec *a)
{
	struct timespec b;

	clock_gettime(CLOCK_MONOTONIC, &b);
	return (double)(b.tv_sec - a->tv_sec) * 1e3 + (double)(b.tv_nsec - a->tv_nsec) / 1e6;
}

/*
 * A statement that would run forever stops at the request's time budget (db_ready()
 * starts it) with DB_ETIMEOUT, 503, and the connection answers the next request at once.
 */
static void
test_stmt_budget_stops_endless_query(void)
{
	static const char endless[] = "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL "
	    "SELECT x + 1 FROM c) SELECT count(*) FROM c";
	struct db_opts o;
	struct db_stmt *st;
	struct timespec a;
	struct db *db;

	memset(&o, 0, sizeof(o));
	o.stmt_timeout_ms = 200;
	if ((db = open_db(&o)) == NULL)
		return;
	CHECK_INT(db_ready(db), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	if ((st = db_prepare(db, endless)) == NULL) {
		CHECK(!"prepared");
		goto out;
	}
	CHECK_INT(db_step(st), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_ETIMEOUT);
	CHECK_INT(db_err_status(db_errcode(db)), 503);
	CHECK(ms_since(&a) >= 150);
	CHECK(ms_since(&a) < 2000);
	/* The next request has a budget of its own. */
	CHECK_INT(db_ready(db), 0);
	CHECK_STR(q1(db, "SELECT 1"), "1");
	/* Without a budget (outside a request on SQLite) nothing is cut short. */
	db_deadline_clear(db);
	CHECK_STR(q1(db, "SELECT 2"), "2");
out:
	db_close(db);
}

/*
 * The text SQLite builds is capped while it is built: sluice_arr() over rows that would
 * make more than opts.value_max bytes stops at the cap, not after the whole array is in
 * memory, as a value past a limit (400 54000); a result under the cap is whole.
 */
static void
test_sqlite_value_cap_stops_big_result(void)
{
	struct db_opts o;
	struct db_stmt *st;
	struct db *db;
	size_t len = 0;

	memset(&o, 0, sizeof(o));
	o.value_max = 1000;
	if ((db = open_db(&o)) == NULL)
		return;
	if ((st = db_prepare(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
	    "FROM c WHERE x < 100000) SELECT sluice_arr('{\"x\":%v}', x) FROM c")) == NULL) {
		CHECK(!"prepared");
		goto out;
	}
	CHECK_INT(db_step(st), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_STR(db_sqlstate(db), "54000");
	CHECK_INT(db_err_status(db_errcode(db)), 400);
	if ((st = db_prepare(db, "WITH RECURSIVE c(x) AS (SELECT 1 UNION ALL SELECT x + 1 "
	    "FROM c WHERE x < 10) SELECT sluice_arr('{\"x\":%v}', x) FROM c")) == NULL) {
		CHECK(!"prepared");
		goto out;
	}
	CHECK_INT(db_step(st), DB_ROW);
	(void)db_column_text(st, 0, &len);
	CHECK_INT(len, 10 * 7 + 9 + 1 + 2);
	db_reset(st);
	/* One string whose worst case (six bytes a byte) is over the cap but which fits, and
	 * one whose object does not. */
	CHECK_STR(q1(db, "SELECT length(sluice_obj('{\"s\":%v}', printf('%.500c', 'a')))"),
	    "508");
	if ((st = db_prepare(db, "SELECT sluice_obj('{\"s\":%v}', printf('%.995c', 'a'))")) ==
	    NULL) {
		CHECK(!"prepared");
		goto out;
	}
	CHECK_INT(db_step(st), DB_ERROR);
	CHECK_INT(db_errcode(db), DB_EINPUT);
	CHECK_STR(db_sqlstate(db), "54000");
out:
	db_close(db);
}

/* 1 once process pid sleeps (in /proc/PID/stat): the only place it can wait here. */
static int
proc_sleeps(pid_t pid)
{
	char path[64], buf[512], *p;
	FILE *f;
	int s = 0;

	(void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	if (fgets(buf, sizeof(buf), f) != NULL && (p = strrchr(buf, ')')) != NULL)
		s = p[1] == ' ' && p[2] == 'S';
	fclose(f);
	return s;
}

/*
 * Whether process pid is blocked in futex(2), where a writer waits in the queue (a
 * process-shared mutex); where /proc/PID/syscall cannot be read, whether it sleeps.
 */
static int
proc_in_futex(pid_t pid)
{
	char path[64], buf[64];
	FILE *f;
	long nr = -1;

	(void)snprintf(path, sizeof(path), "/proc/%d/syscall", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return proc_sleeps(pid);
	if (fgets(buf, sizeof(buf), f) != NULL && sscanf(buf, "%ld", &nr) != 1)
		nr = -1;
	fclose(f);
	return nr == SYS_futex && proc_sleeps(pid);
}

#define FIFO_PROCS	4
#define FIFO_ROUNDS	3

/* Waits for child pid up to 20 s; past that it is killed and the test fails.  Returns its
 * exit code, or -1 when it did not exit of itself. */
static int
fifo_reap(pid_t pid)
{
	int status, t;

	for (t = 0; t < 2000; t++) {
		if (waitpid(pid, &status, WNOHANG) == pid)
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		(void)usleep(10000);
	}
	harness_fail(__FILE__, __LINE__, "child %d still runs after 20 s: killed", (int)pid);
	(void)kill(pid, SIGKILL);
	(void)waitpid(pid, &status, 0);
	return -1;
}

/*
 * The writers' queue is first come, first served across processes (the bug: eight
 * processes' writers took turns on a flock, and the process that just let it go took it
 * again while the others slept; a write waited up to half a second).  Each round, a
 * holder process takes the queue, then FIFO_PROCS writer processes are sent into it one
 * after the other, each once the one before waits in it (blocked in futex(2): it has
 * nothing else to wait for), in an order that rotates every round; then the holder
 * commits.  The writes must come in the order the writers queued, every round.  Every
 * connection is a child's own (an SQLite connection must not cross a fork).  The writers
 * open the database only once the holder has made it (opening it while another process
 * creates it may find it locked), and a child that dies makes the test fail, never hang
 * (SIGPIPE ignored, every wait bounded).
 */
static void
test_sqlite_queue_is_fifo(void)
{
	struct fifo_log {
		atomic_int n;
		int who[FIFO_PROCS * FIFO_ROUNDS];
	} *log_;
	char url[4200], err[200], c;
	struct db *db = NULL, *w;
	pid_t pid[FIFO_PROCS], holder = -1;
	int hcmd[2] = { -1, -1 }, hack[2] = { -1, -1 }, go[FIFO_PROCS], fd[2];
	int want[FIFO_PROCS * FIFO_ROUNDS], i, j, k, procs = 0;
	void (*old_pipe)(int) = signal(SIGPIPE, SIG_IGN);

	for (i = 0; i < FIFO_PROCS; i++)
		go[i] = -1;
	(void)snprintf(url, sizeof(url), "sqlite:%s/fifo.db", tmpdir);
	log_ = mmap(NULL, sizeof(*log_), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
	    -1, 0);
	if (log_ == MAP_FAILED) {
		harness_fail(__FILE__, __LINE__, "mmap: %s", strerror(errno));
		return;
	}
	atomic_init(&log_->n, 0);
	fflush(NULL);
	/* The holder: each "t" takes the queue (answered "h"), each "c" commits. */
	if (pipe(hcmd) == -1 || pipe(hack) == -1 || (holder = fork()) == -1) {
		harness_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
		goto out;
	}
	if (holder == 0) {
		(void)close(hcmd[1]);
		(void)close(hack[0]);
		if (db_open(&w, url, NULL, err, sizeof(err)) == -1 ||
		    db_exec(w, "CREATE TABLE t_fifo(who integer)") == -1 ||
		    write(hack[1], "r", 1) != 1)
			_exit(3);
		while (read(hcmd[0], &c, 1) == 1)
			if ((c == 't' && (db_begin(w, DB_TXN_WRITE) == -1 ||
			    write(hack[1], "h", 1) != 1)) || (c == 'c' && db_commit(w) == -1))
				_exit(4);
		db_close(w);
		_exit(0);
	}
	(void)close(hcmd[0]);
	(void)close(hack[1]);
	hcmd[0] = hack[1] = -1;
	if (read(hack[0], &c, 1) != 1 || c != 'r') {
		harness_fail(__FILE__, __LINE__, "the holder could not make the database");
		goto wait;
	}
	/* The writers: each byte on its go pipe is one write. */
	for (i = 0; i < FIFO_PROCS; i++) {
		if (pipe(fd) == -1 || (pid[i] = fork()) == -1) {
			harness_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
			goto wait;
		}
		if (pid[i] == 0) {
			int bad = 0;

			(void)close(fd[1]);
			if (db_open(&w, url, NULL, err, sizeof(err)) == -1)
				_exit(3);
			while (read(fd[0], &c, 1) == 1) {
				if (db_begin(w, DB_TXN_WRITE) == -1) {
					bad = 1;
					break;
				}
				log_->who[atomic_fetch_add(&log_->n, 1)] = i;
				bad |= db_exec(w, "INSERT INTO t_fifo VALUES (1)") == -1;
				bad |= db_commit(w) == -1;
			}
			db_close(w);
			_exit(bad);
		}
		procs++;
		(void)close(fd[0]);
		go[i] = fd[1];
	}
	for (k = 0; k < FIFO_ROUNDS; k++) {
		if (write(hcmd[1], "t", 1) != 1 || read(hack[0], &c, 1) != 1) {
			harness_fail(__FILE__, __LINE__, "the holder did not take the queue");
			goto wait;
		}
		for (j = 0; j < FIFO_PROCS; j++) {
			i = (j + k) % FIFO_PROCS;
			want[k * FIFO_PROCS + j] = i;
			CHECK_INT((int)write(go[i], "w", 1), 1);
			/* Queued once it waits in futex(2) (10 s at most). */
			for (int t = 0; t < 10000 && !proc_in_futex(pid[i]); t++)
				(void)usleep(1000);
			if (!proc_in_futex(pid[i])) {
				harness_fail(__FILE__, __LINE__, "round %d: writer %d never queued",
				    k, i);
				goto wait;
			}
		}
		CHECK_INT((int)write(hcmd[1], "c", 1), 1);
		for (int t = 0; t < 10000 && atomic_load(&log_->n) < (k + 1) * FIFO_PROCS; t++)
			(void)usleep(1000);
		CHECK_INT(atomic_load(&log_->n), (k + 1) * FIFO_PROCS);
	}
wait:
	for (i = 0; i < FIFO_PROCS; i++)
		if (go[i] >= 0)
			(void)close(go[i]);
	(void)close(hcmd[1]);
	hcmd[1] = -1;
	CHECK_INT(fifo_reap(holder), 0);
	for (i = 0; i < procs; i++)
		CHECK_INT(fifo_reap(pid[i]), 0);
	CHECK_INT(procs, FIFO_PROCS);
	CHECK_INT(atomic_load(&log_->n), procs * FIFO_ROUNDS);
	for (i = 0; i < atomic_load(&log_->n) && i < FIFO_PROCS * FIFO_ROUNDS; i++)
		if (log_->who[i] != want[i]) {
			harness_fail(__FILE__, __LINE__, "write %d was process %d's, want %d's",
			    i, log_->who[i], want[i]);
			break;
		}
	if (db_open(&db, url, NULL, err, sizeof(err)) == -1)
		harness_fail(__FILE__, __LINE__, "%s", err);
	else
		CHECK_STR(q1(db, "SELECT count(*) FROM t_fifo"), "12");
out:
	for (i = 0; i < 2; i++) {
		if (hcmd[i] >= 0)
			(void)close(hcmd[i]);
		if (hack[i] >= 0)
			(void)close(hack[i]);
	}
	db_close(db);
	(void)munmap(log_, sizeof(*log_));
	(void)signal(SIGPIPE, old_pipe);
}

/*
 * A writer process killed (kill -9) while it holds the writers' queue lets it go: the
 * next writer gets its turn within its budget, and the dead one's transaction is undone.
 */
/*
 * A child process that holds the writers' queue of url: it opens it, runs setup (if not
 * NULL), begins a write transaction, runs in_txn (if not NULL), and pauses until killed.
 * Returns its pid once it holds the queue, or -1 (the failure said).
 */
static pid_t
fork_queue_holder(const char *url, const char *setup, const char *in_txn)
{
	char err[200], c;
	struct db *w;
	int fd[2];
	pid_t pid;

	fflush(NULL);
	if (pipe(fd) == -1 || (pid = fork()) == -1) {
		harness_fail(__FILE__, __LINE__, "fork: %s", strerror(errno));
		return -1;
	}
	if (pid == 0) {
		(void)close(fd[0]);
		if (db_open(&w, url, NULL, err, sizeof(err)) == -1 ||
		    (setup != NULL && db_exec(w, setup) == -1) ||
		    db_begin(w, DB_TXN_WRITE) == -1 ||
		    (in_txn != NULL && db_exec(w, in_txn) == -1) ||
		    write(fd[1], "h", 1) != 1)
			_exit(3);
		for (;;)
			(void)pause();
	}
	(void)close(fd[1]);
	CHECK_INT((int)read(fd[0], &c, 1), 1);
	(void)close(fd[0]);
	return pid;
}

static void
test_sqlite_queue_survives_dead_writer(void)
{
	struct db_opts o;
	struct db *db;
	int status;
	pid_t pid;

	memset(&o, 0, sizeof(o));
	o.stmt_timeout_ms = 5000;
	if ((db = open_db(&o)) == NULL)
		return;
	CHECK_INT(db_exec(db, "CREATE TABLE IF NOT EXISTS t_dead(x integer)"), 0);
	if ((pid = fork_queue_holder(B->url, NULL, "INSERT INTO t_dead VALUES (1)")) == -1) {
		db_close(db);
		return;
	}
	CHECK_INT(kill(pid, SIGKILL), 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(db_exec(db, "INSERT INTO t_dead VALUES (2)"), 0);
	CHECK_INT(db_commit(db), 0);
	/* And the queue goes on: a second turn, then only the live writer's row. */
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(db_commit(db), 0);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_dead WHERE x = 1"), "0");
	CHECK_STR(q1(db, "SELECT count(*) FROM t_dead WHERE x = 2"), "1");
	CHECK_INT(db_exec(db, "DROP TABLE t_dead"), 0);
	db_close(db);
}

/*
 * The writers' queue made in an earlier boot is made again: a power cut while a writer
 * held it leaves it locked by a thread of that boot, which nothing would ever free (the
 * file is copied from a held queue with another boot's id, its holder gone).
 */
static void
test_sqlite_queue_from_old_boot(void)
{
	struct db_opts o;
	char url[4200], path[4200], err[200], boot[64], snap[4096], *b;
	struct db *db = NULL;
	int lf = -1, status;
	ssize_t n = -1, i;
	pid_t pid;
	FILE *f;

	(void)snprintf(url, sizeof(url), "sqlite:%s/boot.db", tmpdir);
	(void)snprintf(path, sizeof(path), "%s/boot.db-wlock", tmpdir);
	memset(boot, 0, sizeof(boot));
	if ((f = fopen("/proc/sys/kernel/random/boot_id", "r")) != NULL) {
		if (fgets(boot, sizeof(boot), f) == NULL)
			boot[0] = '\0';
		fclose(f);
	}
	CHECK(strlen(boot) >= 36);
	if ((pid = fork_queue_holder(url, "CREATE TABLE t_boot(x integer)", NULL)) == -1)
		return;
	/* The queue as the power cut left it: held, by a thread of another boot. */
	if ((lf = open(path, O_RDWR)) >= 0)
		n = pread(lf, snap, sizeof(snap), 0);
	CHECK_INT(kill(pid, SIGKILL), 0);
	CHECK(waitpid(pid, &status, 0) == pid);
	CHECK(n > 0);
	for (b = NULL, i = 0; n > 36 && i <= n - 36 && b == NULL; i++)
		if (memcmp(snap + i, boot, 36) == 0)
			b = snap + i;
	if (b == NULL || strlen(boot) < 36) {
		harness_fail(__FILE__, __LINE__, "no boot id in %s", path);
		goto out;
	}
	b[0] = b[0] == '0' ? '1' : '0';
	CHECK_INT((int)pwrite(lf, snap, (size_t)n, 0), (int)n);
	memset(&o, 0, sizeof(o));
	o.stmt_timeout_ms = 2000;
	if (db_open(&db, url, &o, err, sizeof(err)) == -1) {
		harness_fail(__FILE__, __LINE__, "%s", err);
		goto out;
	}
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(db_exec(db, "INSERT INTO t_boot VALUES (2)"), 0);
	CHECK_INT(db_commit(db), 0);
	CHECK_STR(q1(db, "SELECT count(*) FROM t_boot"), "1");
out:
	if (lf >= 0)
		(void)close(lf);
	db_close(db);
}

/*
 * A writer that holds the writers' queue (a slow or hung one) makes another writer with a
 * time budget answer DB_ETIMEOUT once its budget is spent, instead of waiting for as long
 * as the first one takes.
 */
static void
test_sqlite_queue_wait_has_budget(void)
{
	struct db_opts o;
	struct db *db, *other = NULL;
	struct timespec a;

	if ((db = open_db(NULL)) == NULL)
		return;
	memset(&o, 0, sizeof(o));
	o.stmt_timeout_ms = 300;
	if ((other = open_db(&o)) == NULL)
		goto out;
	CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
	CHECK_INT(db_ready(other), 0);
	clock_gettime(CLOCK_MONOTONIC, &a);
	CHECK_INT(db_begin(other, DB_TXN_WRITE), -1);
	CHECK_INT(db_errcode(other), DB_ETIMEOUT);
	CHECK(ms_since(&a) >= 250);
	CHECK(ms_since(&a) < 2000);
	CHECK_INT(db_commit(db), 0);
	/* The queue is free: the next request writes at once. */
	CHECK_INT(db_ready(other), 0);
	CHECK_INT(db_begin(other, DB_TXN_WRITE), 0);
	CHECK_INT(db_commit(other), 0);
out:
	db_close(other);
	db_close(db);
}

static void
run_shared(void)
{
	RUNB(test_open_close);
	RUNB(test_exec);
	RUNB(test_placeholders);
	RUNB(test_bind_types);
	RUNB(test_rows);
	RUNB(test_cache);
	RUNB(test_changes);
	RUNB(test_txn);
	RUNB(test_errors);
	RUNB(test_stmt_budget_stops_endless_query);
}

int
main(void)
{
	int rc;

	log_init("test_db");
	/* Reconnect notices are expected here; failures print through the harness. */
	log_set_level(LOG_ERR);
	(void)snprintf(tmpdir, sizeof(tmpdir), "/tmp/test_db.XXXXXX");
	if (mkdtemp(tmpdir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	pg_up = pgtmp_start(&pgc) == 0;

	RUN(test_err_status);
	RUN(test_opts_from_env);
	RUN(test_bad_url);
	RUN(test_url_parse);
	RUN(test_read_url_needs_pg);

	B = &backends[0];
	(void)snprintf(B->url, sizeof(B->url), "sqlite:%s/test.db", tmpdir);
	run_shared();
	RUNB(test_sqlite_pragmas);
	RUNB(test_sqlite_chunk);
	RUNB(test_sqlite_busy_timeout);
	RUNB(test_sqlite_concurrent_writers);
	RUNB(test_sqlite_writers_queue);
	RUNB(test_sqlite_queue_wait_has_budget);
	RUNB(test_sqlite_queue_is_fifo);
	RUNB(test_sqlite_queue_survives_dead_writer);
	RUNB(test_sqlite_queue_from_old_boot);
	RUNB(test_sqlite_value_cap_stops_big_result);
	RUNB(test_sqlite_no_queue_warns_once);
	RUNB(test_sqlite_readonly);
	RUNB(test_sqlite_url_forms);

	B = &backends[1];
	RUNB(test_pg_cluster_start);
	if (pg_up) {
		(void)snprintf(B->url, sizeof(B->url), "%s", pgc.url);
		run_shared();
		RUNB(test_pg_isolation);
		RUNB(test_pg_plans);
		RUNB(test_pg_read_only_txn);
		RUNB(test_pg_result_type_change);
		RUNB(test_pg_restart_503_once);
		RUNB(test_pg_restart_while_idle);
		RUNB(test_pg_restart_in_txn);
		RUNB(test_pg_server_down);
		RUNB(test_pg_pool_threads_share_connections);
		RUNB(test_pg_pool_wait_has_budget);
		RUNB(test_pg_pool_txn_not_starved);
		RUNB(test_pg_pool_stmt_eviction);
		RUNB(test_pg_pool_restart);
	}

	pgtmp_stop(&pgc);
	rm_rf(tmpdir);
	rc = harness_done();
	return rc;
}
