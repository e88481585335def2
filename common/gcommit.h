/*
 * gcommit.h: group commit of small write transactions inside one worker process, part of
 * the db layer (db.h) for the writers of an SQLite file.
 *
 * SQLite has one writer at a time, and with synchronous=FULL every COMMIT costs an fsync.
 * When many threads of a process write at once, gcommit_run() queues each write; the
 * first thread to find no batch in progress becomes the leader: it takes the queued
 * writes, runs them all in one write transaction (db_begin(DB_TXN_WRITE)), commits once,
 * and wakes the other threads with their results.  Writes that arrive meanwhile form the
 * next batch.  Each write runs inside its own SAVEPOINT, so one write that fails (a
 * constraint) is undone alone while the others in the batch commit.
 *
 * One writers' queue.  Across processes the batches queue where every other SQLite writer
 * of the file queues: the leader's BEGIN takes db_sqlite.c's "<file>-wlock" (first come,
 * first served across processes, woken as soon as it is free) and then SQLite's write
 * lock (BEGIN IMMEDIATE, within the busy timeout); COMMIT lets both go.  The group commit
 * adds no lock file of its own, so a write takes one file lock whether it is batched or
 * not (every application's writes come through here, by db_write(): dbwrite.h).  The
 * lock order:
 *
 *   1. gcommit's process mutex: held only to queue a write, to take a batch off the
 *      queue and to hand the results back, never while waiting for 2 or 3;
 *   2. "<file>-wlock", by the leader's db_begin(), once per batch;
 *   3. SQLite's WAL write lock, by the same BEGIN IMMEDIATE.
 *
 * A write is reported done only after the COMMIT that contains it returned: what a client
 * was told is on disk.  If BEGIN or COMMIT fails, every write of the batch fails with that
 * error class and nothing of the batch is kept.  A write that fails is reported at once
 * (its savepoint undone), without waiting for the batch's COMMIT.
 *
 * Time budgets.  Each write keeps its caller's budget (db_ready() on the caller's
 * connection): no write waits in the queue past it, and none holds the others past it.
 *   - Queued behind a batch in progress, a write leaves the queue at its deadline
 *     (DB_ETIMEOUT, 503).
 *   - The leader's BEGIN waits in the writers' queue until the earliest deadline of the
 *     batch; the writes past theirs leave with DB_ETIMEOUT, the others wait on.
 *   - Each write runs with its own deadline on the leader's connection: past it, SQLite's
 *     progress handler interrupts the write (DB_ETIMEOUT), and a write whose turn comes
 *     after its deadline is not run at all.  SQLite ends the whole transaction when a
 *     write statement is interrupted (and on an I/O error); the failed write alone is
 *     answered with its error and the batch's other writes before it are run again in a
 *     new transaction ("replay"), so they do not pay for it.
 *   - Each write also has a budget for its time in the writers' lock, however long its
 *     request's (db_opts.sqlite_write_ms, SLUICE_SQLITE_WRITE_MS: 250 ms by default):
 *     past it, it is interrupted and answered DB_ETIMEOUT the same way, and one that
 *     ended past it all the same (in a step SQLite's progress handler cannot cut short:
 *     one row of 18 MB stored and read back, a function's call) is undone and answered
 *     so too, whatever it returned.  While a write
 *     runs, every other writer of the file waits (this process's next batch, the other
 *     processes' batches), so a write made slow on purpose (a representation that fans
 *     out, a trigger) holds them for that long at most, not for its request's budget.
 * A writer is therefore answered by its own deadline plus at most one COMMIT (the fsync of
 * the batch it is in), whatever the other writes of its batch do.  A leader takes into its
 * batch only writes whose budgets end at most a second after its own, so that leading
 * never holds its own request much past its budget (and the watchdog's limit).
 *
 * The writes run on the group commit's own connection to the file (db_sqlite.c's
 * db_sqlite_writer_open(), opened by the first leader, the leader's own connection when it
 * cannot be), kept from batch to batch: its page cache stays warm, where every request
 * thread's connection starts from an empty one after each commit of another.  So a write
 * that reads (a rule's check, a related record, a token's record) reads cheaply inside its
 * write.  The WAL's checkpoint runs between batches, after a batch is answered.  A write
 * function must use only the db it is given, and its argument (owned by the waiting
 * caller) stays valid because the caller is blocked until its result is in.  A write
 * function may run more than once (a replay): what it leaves in its argument must be the
 * last run's result (reset outputs first).  Every write of a process goes to one database
 * file (one endpoint, one database); should it change (a test's several files, a file
 * replaced), the own connection is opened again on the new one, and so it is when it was
 * opened while the file was read-only and the file can be written again (looked at once a
 * second at most), so that a file made writable again takes writes within a second.
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

struct gcommit_counts {
	long batches;		/* batches taken off the queue */
	long writes;		/* writes in them */
	long commits;		/* transactions committed (one fsync each) */
	long replays;		/* transactions begun again after SQLite ended one */
	long timeouts;		/* writes answered DB_ETIMEOUT (queue, BEGIN or interrupt) */
};

/* The counters, process-wide, for tests and logs. */
void gcommit_counts(struct gcommit_counts *out);

#endif /* SLUICE_GCOMMIT_H */
