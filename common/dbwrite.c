/*
 * dbwrite.c: the committed write of dbwrite.h.  SQLite's half is the group commit
 * (gcommit.c); PostgreSQL's transaction, its retries and their back-off are here.
 */
#include <stdint.h>
#include <sys/random.h>
#include <time.h>

#include "clock.h"
#include "dbwrite.h"
#include "extern.h"
#include "log.h"

/* A random 1..2^k ms with k = tries + 1, at most 5: the back-off before a retry, so that
 * the colliding transactions do not meet again. */
static long
db_write_backoff(int tries)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)&r;
	return 1 + (long)(r % (1u << (tries < 5 ? tries + 1 : 5)));
}

/* The class of the last failure on db; DB_EINTERNAL when nothing set one. */
static enum db_err
db_write_err(const struct db *db)
{
	enum db_err e = db_errcode(db);

	return e == DB_OK ? DB_EINTERNAL : e;
}

/*
 * PostgreSQL with DB_WRITE_TXN: BEGIN, fn, COMMIT, and again after a DB_EBUSY.  Each try
 * starts without a failure on db, so that a run of fn that refuses without a database
 * error (-1, db_errcode() DB_OK) is not taken for the serialization failure of the try
 * before it.
 */
static int
db_write_txn(struct db *db, gcommit_fn fn, void *arg, enum db_err *err)
{
	long long deadline = db_deadline(db);
	const char *what;
	long wait;
	int rc, tries, own;

	for (tries = 0;; tries++) {
		db_set_err(db, DB_OK, "%s", "");
		own = 0;
		if (db_begin(db, DB_TXN_WRITE) < 0)
			what = "BEGIN";
		else if ((rc = fn(db, arg)) < 0) {
			what = "the write";
			own = 1;
		} else if (db_commit(db) == 0)
			return rc;
		else
			what = "COMMIT";
		*err = db_write_err(db);
		/* Undone (a COMMIT that failed ended the transaction already); the failure
		 * stays readable on db. */
		db_rollback(db);
		if (*err != DB_EBUSY || tries >= DB_WRITE_RETRIES)
			break;
		/* Serialization failure or deadlock: back off, then retry, within the budget. */
		wait = db_write_backoff(tries);
		if (deadline != 0 && clock_now_ms() + wait >= deadline)
			break;
		log_debug("committed write: %s failed, try %d: %s", what, tries + 2,
		    db_errmsg(db));
		db_blocking();
		nanosleep(&(struct timespec){ 0, wait * 1000000L }, NULL);
	}
	/* The write's own failure is its caller's to answer and log. */
	if (*err == DB_EBUSY || !own)
		log_warn("committed write: %s failed (try %d): %s", what, tries + 1,
		    db_errmsg(db));
	return -1;
}

int
db_write(struct db *db, gcommit_fn fn, void *arg, unsigned flags, enum db_err *err)
{
	enum db_err e = DB_OK;
	int rc;

	if (db_backend(db) == DB_SQLITE)
		rc = gcommit_run(db, fn, arg, &e);
	else if (flags & DB_WRITE_TXN)
		rc = db_write_txn(db, fn, arg, &e);
	else if ((rc = fn(db, arg)) < 0)
		e = db_write_err(db);
	if (err != NULL)
		*err = rc < 0 ? e : DB_OK;
	return rc;
}
