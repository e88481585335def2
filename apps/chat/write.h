/*
 * write.h: the chat's committed writes.  chat_write() runs a write function in a
 * transaction and returns only after it committed: what a client is told was written is
 * on disk.
 *
 * On SQLite the writes of all threads of a process are group-committed (gcommit.h): one
 * BEGIN IMMEDIATE / COMMIT, hence one fsync, for a whole batch, and the batches of several
 * processes take turns in the file's one writers' queue ("<file>-wlock", db_sqlite.c): a
 * write takes that one file lock and no other.  On PostgreSQL each write is its own
 * transaction at the configured isolation (SLUICE_DB_ISOLATION), retried a few times on
 * serialization failures and deadlocks.
 */
#ifndef SLUICE_CHAT_WRITE_H
#define SLUICE_CHAT_WRITE_H

#include "gcommit.h"

struct req;
struct resp;

#define CHAT_PG_RETRIES	10

/*
 * Runs fn(db, arg) as a committed write on the request's connection (or, on SQLite, on
 * the connection of the thread that leads the batch).  Returns fn's value (>= 0) after
 * the commit, or -1 with an error response (503 busy, 409, 500 ...) already in rs.
 */
int chat_write(struct req *rq, struct resp *rs, gcommit_fn fn, void *arg);

#endif /* SLUICE_CHAT_WRITE_H */
