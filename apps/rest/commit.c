/*
 * commit.c: the writes of write.c (POST, PATCH, DELETE, upserts), committed by db_write()
 * (common/dbwrite.h) on either back end, each answered from inside its write.
 *
 * SQLite has one writer at a time, and with synchronous=FULL each COMMIT costs an fsync.
 * Every write of a rest process goes through the process's group commit (common/gcommit.h):
 * the writes that arrive while a batch commits form the next batch, one transaction and
 * one fsync for all of them, each in its own SAVEPOINT, so that a write that fails (a
 * constraint, a value that does not fit, its time budget) is undone alone and the others
 * commit.  Across processes the batches queue on the file's one writers' queue
 * (db_sqlite.c's "<file>-wlock"), with the chat's writes.  On PostgreSQL a write that may
 * be undone once run (write.c's write_needs_txn(): a representation, one row required,
 * tx=rollback, max-affected, an upsert) is a transaction of its own, run again after a
 * serialization failure or a deadlock; any other is its one statement, which the server
 * commits; a write in the router's transaction (t->in_txn) is its one statement there,
 * which the router ends (it rolls back what answered 400 or more, and tx=rollback).
 *
 * What a write answers is decided inside its savepoint or transaction, before anything is
 * acknowledged: the rows RETURNING gives (the representation, return=representation) go
 * into the request's own response buffer, their number into the Content-Range count, and a
 * representation past the response cap (SLUICE_RESP_MAX) or a row count the object Accept
 * refuses undoes the write.  So no client is ever told that a write that was committed
 * failed, nor the other way round: a write is answered 2xx only after the COMMIT that holds
 * it returned.  The answer itself (status, Content-Range, Location, the body's final shape:
 * write.c's struct rest_answer) is made inside the write too, so that an Idempotency-Key
 * stores exactly the answer sent, in the write's transaction (idem.c): with a key, a
 * PostgreSQL write outside the router's transaction is always a transaction of its own,
 * the key's row in it.  A write may run more than once (SQLite's replay, a PostgreSQL retry): each
 * run starts from the response as it was before the first.
 *
 * Time: each write keeps its own request's budget (SLUICE_STMT_TIMEOUT_MS, from the
 * request's start): it waits in the queue no longer, a slow write is interrupted at its
 * budget and rolled back alone (503 "timeout"), and the writes batched with it are run again
 * in a new transaction if SQLite ended the batch's (gcommit.h); no PostgreSQL retry starts
 * past it.  On SQLite a write's time in the writers' lock is cut shorter still
 * (sqlite_write_ms, 250 ms by default), since every other writer of the file waits for
 * it: a representation that fans out is interrupted there (503), unless it met the
 * response cap first (413).
 */
#include <string.h>

#include "dbwrite.h"
#include "rest.h"
#include "serve.h"

struct commit_write {
	struct rest_thread *t;
	const struct rest_params *p;
	struct resp *rs;
	int rep, one;
	const char *upsert;	/* the count of the body's rows already there, or NULL */
	const struct rest_answer *ans;
	int64_t existing;
	int64_t rows;
	enum rest_commit why;	/* the last run's outcome; REST_COMMIT_OK also when not run */
	/* The response as it was before the write, which each run starts from. */
	int status;
	const char *content_type;
	size_t headers;
};

/* The answer stored under the request's Idempotency-Key, if any, in the write's
 * transaction.  0, or -1 to undo the write (the key in flight, or the database's error). */
static int
commit_key(struct db *db, struct commit_write *w)
{
	int r;

	if (w->t->idem == NULL || (r = idem_store(db, w->t->idem, w->rs)) == 0)
		return 0;
	w->why = r > 0 ? REST_COMMIT_KEY_IN_FLIGHT : REST_COMMIT_ANSWERED;
	buf_truncate(&w->rs->headers, w->headers);
	w->rs->content_type = w->content_type;
	buf_reset(&w->rs->body, 1 << 20);
	if (r < 0)
		rest_db_error(w->rs, w->t, db);
	return -1;
}

/* The write on db (SQLite: the batch leader's connection), a gcommit_fn.  0, or -1 to undo
 * it. */
static int
commit_fn(struct db *db, void *arg)
{
	struct commit_write *w = arg;
	struct buf *out = &w->rs->body;
	struct db_stmt *st;

	/* Run again (a replay, a retry): start from nothing, without what an earlier run's
	 * error answer set (its status, its Retry-After). */
	w->why = REST_COMMIT_OK;
	w->rows = 0;
	w->rs->status = w->status;
	w->rs->content_type = w->content_type;
	buf_truncate(&w->rs->headers, w->headers);
	buf_reset(out, 1 << 20);
	if (w->upsert != NULL && rest_count_rows(db, w->upsert, w->p, &w->existing) < 0) {
		w->why = REST_COMMIT_ANSWERED;
		rest_db_error(w->rs, w->t, db);
		return -1;
	}
	if ((st = rest_bind(db, w->t, w->p)) == NULL) {
		w->why = REST_COMMIT_ANSWERED;
		rest_db_error(w->rs, w->t, db);
		return -1;
	}
	if (w->t->d->write_read(st, w->rep, out, &w->rows) < 0) {
		/* SQLite stops building a representation at the response cap (54000, the
		 * value too big): the same answer as a body past the buffer. */
		if (w->rep && strcmp(db_sqlstate(db), "54000") == 0)
			w->why = REST_COMMIT_TOO_LARGE;
		else {
			w->why = REST_COMMIT_ANSWERED;
			rest_db_error(w->rs, w->t, db);
		}
		return -1;
	}
	if (w->one && w->rows != 1)
		w->why = REST_COMMIT_NOT_ONE;
	else if (w->t->prefs.max_affected >= 0 && w->rows > w->t->prefs.max_affected)
		w->why = REST_COMMIT_MAX_AFFECTED;
	else if (buf_failed(out))
		w->why = REST_COMMIT_TOO_LARGE;
	else if (w->t->prefs.rollback)
		w->why = REST_COMMIT_ROLLED_BACK;	/* undone, answered as done */
	if (w->why != REST_COMMIT_OK && w->why != REST_COMMIT_ROLLED_BACK)
		return -1;
	(void)w->ans->fn(w->rs, w->ans, w->rows, w->existing);
	if (w->why != REST_COMMIT_OK)
		return -1;
	return commit_key(db, w);
}

enum rest_commit
rest_commit_write(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, int rep, int one, const char *upsert, int txn,
    const struct rest_answer *ans, int64_t *existing, int64_t *rows)
{
	struct commit_write w = { t, p, rs, rep, one, upsert, ans, 0, 0, REST_COMMIT_OK,
	    rs->status, rs->content_type, rs->headers.len };
	enum db_err e = DB_EINTERNAL;
	int r = db_write(rq->db, commit_fn, &w, txn ? DB_WRITE_TXN : 0, &e);

	/* The count, also for REST_COMMIT_NOT_ONE's message. */
	*rows = w.rows;
	*existing = w.existing;
	if (r >= 0)
		return REST_COMMIT_OK;
	if (w.why != REST_COMMIT_OK)
		return w.why;
	/* Never run, or run but its transaction failed (queue past the budget, BEGIN,
	 * COMMIT).  On PostgreSQL that failure is the request's own connection's, SQLSTATE
	 * and all (a deferred constraint at COMMIT); SQLite's batch ran on the leader's
	 * connection, of which only the class is known here. */
	buf_reset(&rs->body, 1 << 20);
	buf_truncate(&rs->headers, w.headers);
	rs->content_type = w.content_type;
	if (db_backend(rq->db) == DB_PG)
		rest_db_error(rs, t, rq->db);
	else
		serve_db_error_class(rs, e);
	return REST_COMMIT_ANSWERED;
}
