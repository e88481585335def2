/*
 * test_dbwrite: the one committed write (common/dbwrite.h) on both back ends.  SQLite: a
 * write function that returns -1 leaves nothing of what it wrote while the writes batched
 * with it commit, and concurrent writers of one process all commit.  PostgreSQL (a
 * throwaway cluster, tests/lib/pgtmp): a real serialization failure (a concurrent update
 * under repeatable read) is retried and the write then commits once; a write function's
 * -1 without a database error is undone and not retried; a write that keeps failing
 * DB_EBUSY is tried DB_WRITE_RETRIES more times and no more, or fewer when the request's
 * time budget would end before the next try; without DB_WRITE_TXN the write runs once.
 */
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "clock.h"
#include "db.h"
#include "dbwrite.h"
#include "log.h"
#include "../lib/harness.h"
#include "../lib/pgtmp.h"

#define DW_THREADS	8
#define DW_WRITES	24

static char dw_file[100], dw_url[300];
static struct pgtmp dw_pg;
static int dw_pg_up;

static struct db *
dw_open(const char *url, int budget_ms, enum db_isolation iso)
{
	struct db_opts o;
	struct db *db = NULL;
	char err[200];

	memset(&o, 0, sizeof(o));
	o.stmt_timeout_ms = budget_ms;
	o.isolation = iso;
	if (db_open(&db, url, &o, err, sizeof(err)) < 0)
		fprintf(stderr, "open %s: %s\n", url, err);
	return db;
}

/* The rows of t with value v (-1: every row), on a connection of its own. */
static long
dw_count(int v)
{
	struct db *db = dw_open(dw_url, 0, DB_ISO_DEFAULT);
	struct db_stmt *st;
	long n = -1;

	if (db == NULL)
		return -1;
	if ((st = db_prepare(db, "SELECT count(*) FROM t WHERE $1 < 0 OR v = $1")) != NULL) {
		db_bind_int(st, 1, v);
		if (db_step(st) == DB_ROW)
			n = (long)db_column_int(st, 0);
		db_reset(st);
	}
	db_close(db);
	return n;
}

static int
dw_setup_sqlite(void)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-wlock" };
	struct db *db;
	char p[160];
	size_t i;

	snprintf(dw_file, sizeof(dw_file), "/tmp/sluice-dw-%d.db", (int)getpid());
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", dw_file, sfx[i]);
		unlink(p);
	}
	snprintf(dw_url, sizeof(dw_url), "sqlite:%s", dw_file);
	if ((db = dw_open(dw_url, 0, DB_ISO_DEFAULT)) == NULL)
		return -1;
	CHECK_INT(db_exec(db, "CREATE TABLE t(v integer)"), 0);
	db_close(db);
	return 0;
}

static void
dw_teardown_sqlite(void)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-wlock" };
	char p[160];
	size_t i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", dw_file, sfx[i]);
		unlink(p);
	}
}

/* A write: inserts v, then keeps it (0) or, with undo, refuses (-1, no database error). */
struct dw_insert {
	int v;
	int undo;
	int runs;
};

static int
dw_insert(struct db *db, void *arg)
{
	struct dw_insert *w = arg;
	struct db_stmt *st;
	int rc;

	w->runs++;
	if ((st = db_prepare(db, "INSERT INTO t(v) VALUES ($1)")) == NULL)
		return -1;
	db_bind_int(st, 1, w->v);
	rc = db_step(st);
	db_reset(st);
	if (rc != DB_DONE)
		return -1;
	return w->undo ? -1 : 0;
}

struct dw_writer {
	pthread_t th;
	int base;
	int undo;		/* every other write refuses */
	int committed, refused, failed;
};

static void *
dw_writer(void *arg)
{
	struct dw_writer *wr = arg;
	struct db *db = dw_open(dw_url, 0, DB_ISO_DEFAULT);
	int i, rc;

	if (db == NULL) {
		wr->failed = DW_WRITES;
		return NULL;
	}
	for (i = 0; i < DW_WRITES; i++) {
		struct dw_insert w = { wr->base + i, wr->undo && i % 2 == 1, 0 };
		enum db_err e = DB_OK;

		if (db_ready(db) < 0) {
			wr->failed++;
			continue;
		}
		rc = db_write(db, dw_insert, &w, DB_WRITE_TXN, &e);
		if (rc == 0 && e == DB_OK)
			wr->committed++;
		else if (rc < 0 && w.undo)
			wr->refused++;
		else
			wr->failed++;
	}
	db_deadline_clear(db);
	db_close(db);
	return NULL;
}

/* Concurrent writers of one process, every other write of half of them refusing: what
 * was refused is not there, everything else is, once each. */
static void
test_sqlite_concurrent_and_refused(void)
{
	struct dw_writer wr[DW_THREADS];
	int i, committed = 0, refused = 0;

	if (dw_setup_sqlite() < 0) {
		harness_fail(__FILE__, __LINE__, "setup");
		return;
	}
	for (i = 0; i < DW_THREADS; i++) {
		memset(&wr[i], 0, sizeof(wr[i]));
		wr[i].base = 1000 * (i + 1);
		wr[i].undo = i % 2;
		CHECK_INT(pthread_create(&wr[i].th, NULL, dw_writer, &wr[i]), 0);
	}
	for (i = 0; i < DW_THREADS; i++) {
		pthread_join(wr[i].th, NULL);
		CHECK_INT(wr[i].failed, 0);
		committed += wr[i].committed;
		refused += wr[i].refused;
	}
	CHECK_INT(refused, DW_THREADS / 2 * DW_WRITES / 2);
	CHECK_INT(committed + refused, DW_THREADS * DW_WRITES);
	CHECK_INT(dw_count(-1), committed);
	/* A refused write's row is not there; a kept one is, once. */
	CHECK_INT(dw_count(2001), 0);
	CHECK_INT(dw_count(2000), 1);
	CHECK_INT(dw_count(1001), 1);
	dw_teardown_sqlite();
}

/* A lone write that refuses: nothing of it is left, and its class is DB_EINTERNAL (no
 * database error: fn's own -1). */
static void
test_sqlite_refused_alone(void)
{
	struct dw_insert w = { 7, 1, 0 };
	struct db *db;
	enum db_err e = DB_OK;

	if (dw_setup_sqlite() < 0 || (db = dw_open(dw_url, 0, DB_ISO_DEFAULT)) == NULL) {
		harness_fail(__FILE__, __LINE__, "setup");
		return;
	}
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(db_write(db, dw_insert, &w, 0, &e), -1);
	CHECK_INT(e, DB_EINTERNAL);
	CHECK_INT(w.runs, 1);
	CHECK_INT(dw_count(7), 0);
	w.undo = 0;
	CHECK_INT(db_write(db, dw_insert, &w, 0, &e), 0);
	CHECK_INT(e, DB_OK);
	CHECK_INT(dw_count(7), 1);
	db_close(db);
	dw_teardown_sqlite();
}

/* PostgreSQL.  The table, emptied. */
static struct db *
dw_pg_open(int budget_ms, enum db_isolation iso)
{
	struct db *db;

	snprintf(dw_url, sizeof(dw_url), "%s", dw_pg.url);
	if ((db = dw_open(dw_url, budget_ms, iso)) == NULL)
		return NULL;
	if (db_exec(db, "CREATE TABLE IF NOT EXISTS t(v integer); TRUNCATE t; "
	    "CREATE TABLE IF NOT EXISTS c(id integer PRIMARY KEY, n integer); "
	    "TRUNCATE c; INSERT INTO c VALUES (1, 0)") < 0) {
		fprintf(stderr, "setup: %s\n", db_errmsg(db));
		db_close(db);
		return NULL;
	}
	return db;
}

/*
 * A write that reads the counter, then increments it, under repeatable read; at its first
 * run another connection increments it in between, so that its UPDATE meets a
 * serialization failure (40001, DB_EBUSY).
 */
struct dw_bump {
	struct db *other;	/* the concurrent writer, first run only */
	int runs;
	int seen;		/* the counter as the last run read it */
};

static int
dw_bump(struct db *db, void *arg)
{
	struct dw_bump *b = arg;
	struct db_stmt *st;

	b->runs++;
	if ((st = db_prepare(db, "SELECT n FROM c WHERE id = 1")) == NULL ||
	    db_step(st) != DB_ROW)
		return -1;
	b->seen = (int)db_column_int(st, 0);
	db_reset(st);
	if (b->runs == 1 && db_exec(b->other, "UPDATE c SET n = n + 1 WHERE id = 1") < 0)
		return -1;
	if ((st = db_prepare(db, "UPDATE c SET n = n + 1 WHERE id = 1")) == NULL)
		return -1;
	if (db_step(st) != DB_DONE)
		return -1;
	db_reset(st);
	return 0;
}

static void
test_pg_serialization_failure_retried(void)
{
	struct db *db, *other;
	struct dw_bump b = { NULL, 0, -1 };
	enum db_err e = DB_EINTERNAL;
	struct db_stmt *st;

	if (!dw_pg_up)
		SKIP("no PostgreSQL cluster");
	if ((db = dw_pg_open(0, DB_ISO_REPEATABLE_READ)) == NULL ||
	    (other = dw_open(dw_pg.url, 0, DB_ISO_DEFAULT)) == NULL) {
		harness_fail(__FILE__, __LINE__, "open");
		db_close(db);
		return;
	}
	b.other = other;
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(db_write(db, dw_bump, &b, DB_WRITE_TXN, &e), 0);
	CHECK_INT(e, DB_OK);
	/* Failed once, then read the other's increment and added its own. */
	CHECK_INT(b.runs, 2);
	CHECK_INT(b.seen, 1);
	if ((st = db_prepare(other, "SELECT n FROM c WHERE id = 1")) != NULL &&
	    db_step(st) == DB_ROW)
		CHECK_INT(db_column_int(st, 0), 2);
	else
		harness_fail(__FILE__, __LINE__, "read back: %s", db_errmsg(other));
	if (st != NULL)
		db_reset(st);
	db_deadline_clear(db);
	db_close(other);
	db_close(db);
}

/* A write that always meets a serialization failure (raised as 40001). */
static int
dw_busy(struct db *db, void *arg)
{
	int *runs = arg;

	(*runs)++;
	if (db_exec(db, "INSERT INTO t(v) VALUES (9)") < 0)
		return -1;
	(void)db_exec(db, "DO $$BEGIN RAISE EXCEPTION 'conflict' USING ERRCODE = "
	    "'serialization_failure'; END$$");
	return -1;
}

static void
test_pg_busy_retries_bounded(void)
{
	struct db *db;
	enum db_err e = DB_OK;
	int runs = 0;

	if (!dw_pg_up)
		SKIP("no PostgreSQL cluster");
	if ((db = dw_pg_open(0, DB_ISO_DEFAULT)) == NULL) {
		harness_fail(__FILE__, __LINE__, "open");
		return;
	}
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(db_write(db, dw_busy, &runs, DB_WRITE_TXN, &e), -1);
	CHECK_INT(e, DB_EBUSY);
	CHECK_INT(runs, DB_WRITE_RETRIES + 1);
	/* Every try was undone. */
	CHECK_INT(dw_count(9), 0);
	/* Without DB_WRITE_TXN: run once, never again. */
	runs = 0;
	CHECK_INT(db_write(db, dw_busy, &runs, 0, &e), -1);
	CHECK_INT(e, DB_EBUSY);
	CHECK_INT(runs, 1);
	db_deadline_clear(db);
	db_close(db);
}

static void
test_pg_budget_stops_retries(void)
{
	struct db *db;
	enum db_err e = DB_OK;
	long long t0, took;
	int runs = 0;

	if (!dw_pg_up)
		SKIP("no PostgreSQL cluster");
	/* The back-offs double from 1..2 ms: a 20 ms budget holds a few of them.  The tables
	 * are made first on a connection of a wider budget (a TRUNCATE on a loaded machine
	 * may take longer than 20 ms). */
	if ((db = dw_pg_open(5000, DB_ISO_DEFAULT)) != NULL)
		db_close(db);
	if ((db = dw_open(dw_url, 20, DB_ISO_DEFAULT)) == NULL) {
		harness_fail(__FILE__, __LINE__, "open");
		return;
	}
	CHECK_INT(db_ready(db), 0);
	t0 = clock_now_ms();
	CHECK_INT(db_write(db, dw_busy, &runs, DB_WRITE_TXN, &e), -1);
	took = clock_now_ms() - t0;
	/* DB_EBUSY when the next back-off would have ended past the budget; DB_ETIMEOUT when
	 * a statement ran into it first. */
	CHECK(e == DB_EBUSY || e == DB_ETIMEOUT);
	CHECK(runs >= 1 && runs < DB_WRITE_RETRIES + 1);
	/* No back-off was slept past the deadline: only the last try's statements. */
	CHECK(took < 20 + 500);
	db_deadline_clear(db);
	db_close(db);
}

/* A write function's -1 without a database error: undone, not retried. */
static void
test_pg_refused_undone(void)
{
	struct dw_insert w = { 5, 1, 0 };
	struct db *db;
	enum db_err e = DB_OK;

	if (!dw_pg_up)
		SKIP("no PostgreSQL cluster");
	if ((db = dw_pg_open(0, DB_ISO_DEFAULT)) == NULL) {
		harness_fail(__FILE__, __LINE__, "open");
		return;
	}
	CHECK_INT(db_ready(db), 0);
	CHECK_INT(db_write(db, dw_insert, &w, DB_WRITE_TXN, &e), -1);
	CHECK_INT(e, DB_EINTERNAL);
	CHECK_INT(w.runs, 1);
	CHECK_INT(dw_count(5), 0);
	w.undo = 0;
	CHECK_INT(db_write(db, dw_insert, &w, DB_WRITE_TXN, &e), 0);
	CHECK_INT(e, DB_OK);
	CHECK_INT(dw_count(5), 1);
	db_deadline_clear(db);
	db_close(db);
}

int
main(void)
{
	log_init("test_dbwrite");
	log_set_level(LOG_ERR);
	RUN(test_sqlite_refused_alone);
	RUN(test_sqlite_concurrent_and_refused);
	dw_pg_up = pgtmp_start(&dw_pg) == 0;
	RUN(test_pg_serialization_failure_retried);
	RUN(test_pg_refused_undone);
	RUN(test_pg_busy_retries_bounded);
	RUN(test_pg_budget_stops_retries);
	pgtmp_stop(&dw_pg);
	return harness_done();
}
