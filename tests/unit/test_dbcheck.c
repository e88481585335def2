/*
 * test_dbcheck.c: what sluiced sees of an SQLite database from outside
 * (supervisor/dbcheck.c), on real files written by SQLite in WAL mode: a database with
 * tables, and one whose tables were all dropped (in the log, before any checkpoint); the
 * walk of the log's frame headers goes on from the last commit frame instead of reading
 * the whole log on every look, starts over when the log starts over, and is not misled by
 * a rolled-back transaction's frames that the next transaction writes over.
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "dbcheck.h"
#include "harness.h"
#include "log.h"

static char path[64];

static int
exec_ok(sqlite3 *db, const char *sql)
{
	return sqlite3_exec(db, sql, NULL, NULL, NULL) == SQLITE_OK;
}

/* The database at path and its log and shared memory, gone. */
static void
remove_files(void)
{
	static const char *const ext[] = { "", "-wal", "-shm" };
	char f[80];
	size_t i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(f, sizeof(f), "%s%s", path, ext[i]);
		unlink(f);
	}
}

/* A fresh database in WAL mode whose log is never checkpointed by itself. */
static sqlite3 *
open_fresh(void)
{
	sqlite3 *db;

	snprintf(path, sizeof(path), "/tmp/test_dbcheck.%d.db", (int)getpid());
	remove_files();
	if (sqlite3_open(path, &db) != SQLITE_OK)
		return NULL;
	if (!exec_ok(db, "pragma journal_mode=wal; pragma wal_autocheckpoint=0; "
	    "create table t (id integer primary key, b blob);")) {
		sqlite3_close(db);
		return NULL;
	}
	return db;
}

static void
close_fresh(sqlite3 *db)
{
	sqlite3_close(db);
	remove_files();
}

/* n transactions of one 1 kB row each. */
static int
insert_rows(sqlite3 *db, int n)
{
	int i;

	for (i = 0; i < n; i++)
		if (!exec_ok(db, "insert into t (b) values (zeroblob(1000))"))
			return -1;
	return 0;
}

static enum dbcheck_state
look(struct dbcheck *d)
{
	char why[256];

	return dbcheck_look(d, path, why, sizeof(why));
}

/* A fresh database with rows transactions in its log, and d's first look at it (ok). */
static sqlite3 *
start(struct dbcheck *d, int rows)
{
	sqlite3 *db = open_fresh();

	CHECK(db != NULL);
	if (db == NULL)
		return NULL;
	dbcheck_reset(d);
	CHECK(insert_rows(db, rows) == 0);
	CHECK_INT(look(d), DBCHECK_OK);
	return db;
}

/* The log is read once; later looks read only the frames written since. */
static void
test_walk_goes_on(void)
{
	struct dbcheck d;
	sqlite3 *db = start(&d, 300);

	if (db == NULL)
		return;
	CHECK(d.walk.frames >= 300);
	CHECK(insert_rows(db, 1) == 0);
	CHECK_INT(look(&d), DBCHECK_OK);
	CHECK(d.walk.frames >= 1 && d.walk.frames <= 4);
	/* Every table dropped: page 1's newest committed copy, in the log, has no row. */
	CHECK(exec_ok(db, "drop table t"));
	CHECK_INT(look(&d), DBCHECK_EMPTY);
	/* The drop's frames (the 300 pages go to the free list), not the log's 300 before. */
	CHECK(d.walk.frames >= 1 && d.walk.frames < 150);
	/* Nothing written: no walk at all. */
	CHECK_INT(look(&d), DBCHECK_EMPTY);
	CHECK_INT(d.walk.frames, 0);
	close_fresh(db);
}

/* A checkpoint that truncates the log, then writes: a new log (new salts), read whole. */
static void
test_walk_starts_over(void)
{
	struct dbcheck d;
	sqlite3 *db = start(&d, 200);

	if (db == NULL)
		return;
	CHECK(d.walk.frames >= 200);
	CHECK(exec_ok(db, "pragma wal_checkpoint(truncate)"));
	CHECK(insert_rows(db, 3) == 0);
	CHECK_INT(look(&d), DBCHECK_OK);
	CHECK(d.walk.frames >= 3 && d.walk.frames < 20);
	CHECK(exec_ok(db, "drop table t"));
	CHECK_INT(look(&d), DBCHECK_EMPTY);
	close_fresh(db);
}

/*
 * A transaction too big for its page cache writes frames before it commits; rolled back,
 * they stay in the log until the next transaction writes over them.  A look between the
 * two reads them; the look after the next commit must still see that commit.
 */
static void
test_rolled_back_frames(void)
{
	struct dbcheck d;
	sqlite3 *db = start(&d, 20);

	if (db == NULL)
		return;
	CHECK(exec_ok(db, "pragma cache_size=2; begin; "
	    "insert into t (b) select zeroblob(1000) from (with recursive n(i) as (select 1 "
	    "union all select i + 1 from n where i < 400) select i from n);"));
	CHECK_INT(look(&d), DBCHECK_OK);
	CHECK(d.walk.frames >= 50);	/* the spilled frames were read */
	CHECK(exec_ok(db, "rollback; pragma cache_size=2000; drop table t"));
	CHECK_INT(look(&d), DBCHECK_EMPTY);
	close_fresh(db);
}

int
main(void)
{
	log_init("test_dbcheck");
	RUN(test_walk_goes_on);
	RUN(test_walk_starts_over);
	RUN(test_rolled_back_frames);
	return harness_done();
}
