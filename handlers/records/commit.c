/*
 * commit.c: the records API's writes, committed by db_write() (common/dbwrite.h).  On
 * SQLite every write (create, update, delete) goes through the process's group commit,
 * like the rest and chat endpoints' writes: one transaction and one fsync per batch, each
 * write in its own savepoint (a failing one is undone alone), acknowledged only after the
 * batch's COMMIT, within the request's time budget (503 past it).  On PostgreSQL a write is
 * one statement outside a transaction (a create checks its rule in its INSERT, write.c),
 * which the connections' pipelined batches commit together with the process's other writes
 * that meet in a batch (db_pg_pool.c's group commit: one transaction and one WAL flush,
 * each write acknowledged once its batch's COMMIT was answered, a failing one run again
 * alone); only a write of several statements (a create whose rule reads its own
 * collection) holds a connection for a transaction of its own, run again after a
 * serialization failure or a deadlock.
 *
 * A write function may so run more than once on either back end (SQLite's replay, a
 * PostgreSQL retry).  It answers only its failures, each whole (rec_error(): status, type
 * and body; no header), and builds its statements anew at each run; the caller answers a
 * success whole once rec_commit() returned.  So nothing of an earlier run's answer is left
 * in the response after a later run.  A write that was not run or whose transaction failed
 * is answered here from the failure's class: the same answer as rec_db_error()'s.
 *
 * A batch (batch.c) is itself one such write, a transaction of its own on PostgreSQL; the
 * writes of its requests run inside it at once, with their reads, on its connection.
 */
#include "dbwrite.h"
#include "log.h"
#include "records.h"

struct rec_commit {
	struct rec_ctx *x;
	int (*fn)(struct rec_ctx *, void *);
	void *arg;
	int answered;		/* fn failed and made the error response */
};

/*
 * The write on db (a gcommit_fn): on SQLite the connection of the thread leading the
 * batch, on PostgreSQL the request's own.  The request's own thread is blocked in
 * db_write() meanwhile, so pointing its request at that connection for the time of the
 * call lets the write's code (and its error responses) use x->rq->db as everywhere else.
 */
static int
rec_commit_fn(struct db *db, void *arg)
{
	struct rec_commit *w = arg;
	struct db *own = w->x->rq->db;
	int rc;

	w->x->rq->db = db;
	rc = w->fn(w->x, w->arg);
	w->x->rq->db = own;
	w->answered = rc < 0;
	return rc;
}

int
rec_commit(struct rec_ctx *x, int (*fn)(struct rec_ctx *x, void *arg), void *arg, int txn)
{
	struct rec_commit w = { x, fn, arg, 0 };
	enum db_err e = DB_EINTERNAL;
	int rc, status;

	/* A request of a batch: already inside the batch's write, on its connection. */
	if (x->in_batch)
		return fn(x, arg);
	if ((rc = db_write(x->rq->db, rec_commit_fn, &w, txn ? DB_WRITE_TXN : 0, &e)) >= 0 ||
	    w.answered)
		return rc;
	/* Not run, or its transaction failed (the queue past the budget, BEGIN, COMMIT). */
	status = db_err_status(e);
	log_warn("records: write not committed (status %d)", status);
	rec_error(x->rs, status == 409 ? 400 : status, NULL, NULL);
	return -1;
}
