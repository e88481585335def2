/*
 * gcommit.c: the leader/follower queue of gcommit.h.  One mutex and one condition
 * variable per process guard a FIFO of pending writes and a "batch in progress" flag; the
 * leader works without the mutex held, so threads keep queueing while it writes.  Across
 * processes the batches meet in the SQLite writers' queue that the leader's BEGIN joins
 * (db_sqlite.c's "<file>-wlock", then SQLite's own lock): the lock order is in gcommit.h.
 */
#include <pthread.h>
#include <stddef.h>

#include "gcommit.h"
#include "log.h"

struct gcommit_item {
	gcommit_fn fn;
	void *arg;
	int rc;
	enum db_err err;
	int done;
	struct gcommit_item *next;
};

static pthread_mutex_t gcommit_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t gcommit_cv = PTHREAD_COND_INITIALIZER;
static struct gcommit_item *gcommit_head, *gcommit_tail;
static int gcommit_busy;
static long gcommit_batches, gcommit_writes;

/* Marks every write of the batch failed with err. */
static void
gcommit_fail_all(struct gcommit_item *batch, enum db_err err)
{
	for (; batch != NULL; batch = batch->next) {
		batch->rc = -1;
		batch->err = err;
	}
}

/*
 * Runs one batch (a detached list) in one transaction on db; fills every result.  The
 * BEGIN queues this process among the file's writers (lock 2 of gcommit.h) and the
 * COMMIT or ROLLBACK lets the queue go.
 */
static void
gcommit_batch(struct db *db, struct gcommit_item *batch, int n)
{
	struct gcommit_item *it;
	enum db_err e;

	if (db_begin(db, DB_TXN_WRITE) < 0) {
		gcommit_fail_all(batch, db_errcode(db));
		log_warn("group commit: BEGIN failed: %s", db_errmsg(db));
		return;
	}
	for (it = batch; it != NULL; it = it->next) {
		it->err = DB_OK;
		/* A lone write needs no savepoint: its failure rolls back the transaction. */
		if (n > 1 && db_exec(db, "SAVEPOINT gcommit") < 0) {
			it->rc = -1;
			it->err = db_errcode(db);
			continue;
		}
		it->rc = it->fn(db, it->arg);
		if (it->rc < 0) {
			it->err = db_errcode(db);
			if (it->err == DB_OK)
				it->err = DB_EINTERNAL;
			if (n == 1)
				break;
			if (db_exec(db, "ROLLBACK TO gcommit") < 0) {
				/* The transaction is in an unknown state: give it all up. */
				e = db_errcode(db);
				db_rollback(db);
				gcommit_fail_all(batch, e);
				return;
			}
		}
		if (n > 1 && db_exec(db, "RELEASE gcommit") < 0) {
			e = db_errcode(db);
			db_rollback(db);
			gcommit_fail_all(batch, e);
			return;
		}
	}
	if (n == 1 && batch->rc < 0) {
		db_rollback(db);
		return;
	}
	if (db_commit(db) < 0) {
		e = db_errcode(db);
		log_warn("group commit: COMMIT failed: %s", db_errmsg(db));
		db_rollback(db);
		gcommit_fail_all(batch, e);
	}
}

int
gcommit_run(struct db *db, gcommit_fn fn, void *arg, enum db_err *err)
{
	struct gcommit_item item = { fn, arg, -1, DB_EINTERNAL, 0, NULL };
	struct gcommit_item *batch, *it, *last;
	int n;

	pthread_mutex_lock(&gcommit_mu);
	if (gcommit_tail != NULL)
		gcommit_tail->next = &item;
	else
		gcommit_head = &item;
	gcommit_tail = &item;
	while (!item.done) {
		if (gcommit_busy) {
			pthread_cond_wait(&gcommit_cv, &gcommit_mu);
			continue;
		}
		/* Lead: take up to GCOMMIT_BATCH_MAX writes from the head of the queue. */
		gcommit_busy = 1;
		batch = last = gcommit_head;
		for (n = 1; n < GCOMMIT_BATCH_MAX && last->next != NULL; n++)
			last = last->next;
		gcommit_head = last->next;
		if (gcommit_head == NULL)
			gcommit_tail = NULL;
		last->next = NULL;
		pthread_mutex_unlock(&gcommit_mu);

		gcommit_batch(db, batch, n);

		pthread_mutex_lock(&gcommit_mu);
		for (it = batch; it != NULL; it = it->next)
			it->done = 1;
		gcommit_batches++;
		gcommit_writes += n;
		gcommit_busy = 0;
		pthread_cond_broadcast(&gcommit_cv);
	}
	pthread_mutex_unlock(&gcommit_mu);
	if (item.rc < 0 && err != NULL)
		*err = item.err;
	return item.rc;
}

void
gcommit_stats(long *batches, long *writes)
{
	pthread_mutex_lock(&gcommit_mu);
	*batches = gcommit_batches;
	*writes = gcommit_writes;
	pthread_mutex_unlock(&gcommit_mu);
}
