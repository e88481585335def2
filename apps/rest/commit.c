/*
 * commit.c: the SQLite writes of write.c (POST, PATCH, DELETE, upserts), group-committed.
 *
 * SQLite has one writer at a time, and with synchronous=FULL each COMMIT costs an fsync.
 * Every write of a rest process goes through the process's group commit (common/gcommit.h):
 * the writes that arrive while a batch commits form the next batch, one transaction and
 * one fsync for all of them, each in its own SAVEPOINT, so that a write that fails (a
 * constraint, a value that does not fit, its time budget) is undone alone and the others
 * commit.  Across processes the batches queue on the file's one writers' queue
 * (db_sqlite.c's "<file>-wlock"), with the chat's writes.
 *
 * What a write answers is decided inside its savepoint, before anything is acknowledged:
 * the rows RETURNING gives (the representation, return=representation) go into the
 * request's own response buffer, their number into the Content-Range count, and a
 * representation past the response cap (SLUICE_RESP_MAX) or a row count the object Accept
 * refuses undoes the write to its savepoint.  So no client is ever told that a write that
 * was committed failed, nor the other way round: a write is answered 2xx only after the
 * COMMIT of its batch returned.
 *
 * Time: each write keeps its own request's budget (SLUICE_STMT_TIMEOUT_MS, from the
 * request's start): it waits in the queue no longer, a slow write is interrupted at its
 * budget and rolled back alone (503 "timeout"), and the writes batched with it are run again
 * in a new transaction if SQLite ended the batch's (gcommit.h).
 */
#include <string.h>

#include "gcommit.h"
#include "rest.h"
#include "serve.h"

struct commit_write {
	struct rest_thread *t;
	const struct rest_params *p;
	struct resp *rs;
	int rep, one;
	const char *upsert;	/* the count of the body's rows already there, or NULL */
	int64_t existing;
	int64_t rows;
	enum rest_commit why;	/* the last run's outcome; REST_COMMIT_OK also when not run */
};

/* The write on db (the batch leader's connection): a gcommit_fn.  0, or -1 to undo it. */
static int
commit_fn(struct db *db, void *arg)
{
	struct commit_write *w = arg;
	struct buf *out = &w->rs->body;
	struct db_stmt *st;

	/* Run again after a replay: start from nothing. */
	w->why = REST_COMMIT_OK;
	w->rows = 0;
	buf_reset(out, 1 << 20);
	if (w->upsert != NULL && rest_count_rows(db, w->upsert, w->p, &w->existing) < 0) {
		w->why = REST_COMMIT_ANSWERED;
		serve_db_error(w->rs, db);
		return -1;
	}
	if ((st = rest_bind(db, w->t, w->p)) == NULL) {
		w->why = REST_COMMIT_ANSWERED;
		serve_db_error(w->rs, db);
		return -1;
	}
	if (w->t->d->write_read(st, w->rep, out, &w->rows) < 0) {
		/* SQLite stops building a representation at the response cap (54000, the
		 * value too big): the same answer as a body past the buffer. */
		if (w->rep && strcmp(db_sqlstate(db), "54000") == 0)
			w->why = REST_COMMIT_TOO_LARGE;
		else {
			w->why = REST_COMMIT_ANSWERED;
			serve_db_error(w->rs, db);
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
	return w->why == REST_COMMIT_OK ? 0 : -1;
}

enum rest_commit
rest_commit_write(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, int rep, int one, const char *upsert, int64_t *existing,
    int64_t *rows)
{
	struct commit_write w = { t, p, rs, rep, one, upsert, 0, 0, REST_COMMIT_OK };
	enum db_err e = DB_EINTERNAL;
	int r = gcommit_run(rq->db, commit_fn, &w, &e);

	/* The count, also for REST_COMMIT_NOT_ONE's message. */
	*rows = w.rows;
	*existing = w.existing;
	if (r >= 0)
		return REST_COMMIT_OK;
	if (w.why != REST_COMMIT_OK)
		return w.why;
	/* Never run, or run but its batch failed (queue past the budget, BEGIN, COMMIT). */
	buf_reset(&rs->body, 1 << 20);
	serve_db_error_class(rs, e);
	return REST_COMMIT_ANSWERED;
}
