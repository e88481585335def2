/*
 * write.c: the committed writes of write.h.
 */
#include <stdint.h>
#include <sys/random.h>
#include <time.h>

#include "chat/write.h"
#include "db.h"
#include "log.h"
#include "req.h"
#include "resp.h"
#include "serve.h"

/* A random 1..2^k ms with k = tries + 1, at most 5: the back-off before a retry, so that
 * the colliding transactions do not meet again. */
static void
chat_write_backoff(int tries)
{
	uint32_t r;

	if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
		r = (uint32_t)time(NULL) ^ (uint32_t)(uintptr_t)&r;
	nanosleep(&(struct timespec){ 0, (long)(1 + r %
	    (1u << (tries < 5 ? tries + 1 : 5))) * 1000000L }, NULL);
}

int
chat_write(struct req *rq, struct resp *rs, gcommit_fn fn, void *arg)
{
	struct db *db = rq->db;
	enum db_err e = DB_EINTERNAL;
	int rc, tries;

	if (db_backend(db) == DB_SQLITE) {
		if ((rc = gcommit_run(db, fn, arg, &e)) < 0)
			serve_db_error_class(rs, e);
		return rc;
	}
	for (tries = 0;; tries++) {
		if (db_begin(db, DB_TXN_WRITE) == 0) {
			rc = fn(db, arg);
			if (rc >= 0 && db_commit(db) == 0)
				return rc;
		}
		e = db_errcode(db);
		if (e == DB_OK)
			e = DB_EINTERNAL;
		if (e != DB_EBUSY || tries >= CHAT_PG_RETRIES)
			log_warn("write failed: %s", db_errmsg(db));
		db_rollback(db);
		if (e != DB_EBUSY || tries >= CHAT_PG_RETRIES)
			break;
		/* Serialization failure or deadlock: back off, then retry. */
		chat_write_backoff(tries);
	}
	serve_db_error_class(rs, e);
	return -1;
}
