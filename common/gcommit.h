/*
 * gcommit.h: group commit of small write transactions inside one worker process.
 *
 * SQLite has one writer at a time, and with synchronous=FULL every COMMIT costs an fsync.
 * When many threads of a process write at once, gcommit_run() queues each write; the
 * first thread to find no batch in progress becomes the leader: it takes the queued
 * writes, runs them all in one write transaction (BEGIN IMMEDIATE, so across processes it
 * waits out SQLite's busy timeout instead of failing with "database is locked"), commits
 * once, and wakes the other threads with their results.  Writes that arrive meanwhile form
 * the next batch.  Each write runs inside its own SAVEPOINT, so one write that fails (a
 * constraint) is undone alone while the others in the batch commit.
 *
 * A write is reported done only after the COMMIT that contains it returned: what a client
 * was told is on disk.  If BEGIN or COMMIT fails, every write of the batch fails with that
 * error class and nothing of the batch is kept.
 *
 * The writes run on the leader's connection, so a write function must use only the db it
 * is given, and its argument (owned by the waiting caller) stays valid because the caller
 * is blocked until its result is in.
 */
#ifndef SLUICE_GCOMMIT_H
#define SLUICE_GCOMMIT_H

#include "db.h"

#define GCOMMIT_BATCH_MAX	128

/*
 * One write, run inside the batch's transaction on db.  Returns a value >= 0 that
 * gcommit_run() hands back (its changes are kept), or -1 with the error on db (its
 * changes are undone).
 */
typedef int (*gcommit_fn)(struct db *db, void *arg);

/*
 * Runs fn(db', arg) in a group-committed transaction, where db' is db or the connection
 * of another thread of this process that leads the batch.  Returns fn's value once the
 * batch committed, or -1 with *err (may be NULL) set to the class of the failure: fn's
 * own, or BEGIN's / COMMIT's for the whole batch.
 */
int gcommit_run(struct db *db, gcommit_fn fn, void *arg, enum db_err *err);

/*
 * Optionally serialises the batches of every process that calls this with the same path:
 * the leader takes an exclusive flock() on the file (created if missing) before BEGIN and
 * releases it after COMMIT.  A process waiting for SQLite's write lock otherwise polls it
 * from the busy handler with sleeps growing to 100 ms, and under load other processes keep
 * taking the lock in between, so a write can wait for seconds; a blocked flock() is woken
 * as soon as the lock is free.  Call once at start-up, before any gcommit_run().  Returns
 * 0, or -1 with errno set when the file cannot be opened.
 */
int gcommit_lockfile(const char *path);

/* Statistics for tests and logs: batches committed and writes in them, process-wide. */
void gcommit_stats(long *batches, long *writes);

#endif /* SLUICE_GCOMMIT_H */
