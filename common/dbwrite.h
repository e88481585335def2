/*
 * dbwrite.h: the one committed write of every application: db_write() runs a write
 * function and returns only once what it wrote is committed, whichever back end holds the
 * data.  The chat's, the records' and the rest endpoints' writes all come through here.
 *
 * SQLite: the process's group commit (gcommit.h).  The writes of all threads of a process
 * share one BEGIN IMMEDIATE / COMMIT, hence one fsync, per batch, each in a SAVEPOINT of
 * its own, so that a write that fails is undone alone; the batches of several processes
 * take turns in the file's one writers' queue ("<file>-wlock", db_sqlite.c).  The write
 * runs on the connection of the thread that leads the batch, and may run more than once
 * (a replay, when SQLite ended the batch's transaction under another write).
 *
 * PostgreSQL, with DB_WRITE_TXN: a transaction of the write's own (BEGIN READ WRITE at the
 * configured isolation, SLUICE_DB_ISOLATION), run again after a serialization failure or
 * a deadlock (DB_EBUSY, whether the write function or the COMMIT met it) after a random
 * back-off that grows with each try, at most DB_WRITE_RETRIES times and never past the
 * request's time budget (db_ready(), db_deadline()): a try whose back-off would end past
 * it is not made, and the write fails with the DB_EBUSY it met.  Without DB_WRITE_TXN: the
 * write function alone, one statement outside a transaction, which the server commits
 * (and the connections' pipelined batches group-commit with the process's other writes,
 * db_pg_pool.c), run once; a caller already inside a transaction of its own passes 0 too,
 * and ends that transaction itself.
 *
 * A write is reported done only after the COMMIT that holds it returned: what a client is
 * told was written is on disk.  Each write keeps its caller's time budget, on either back
 * end (gcommit.h says how a batch honours each of its writes').
 *
 * The write function's contract, the same on both back ends: it uses only the connection
 * it is given (on SQLite another thread's), its argument stays valid (the caller is
 * blocked until the result is in), and since it may run more than once (a replay, a
 * retry), what it leaves in its argument and in its caller's response must be the last
 * run's (reset its outputs first).  It returns a value >= 0 to keep its changes, or -1
 * with the failure on the connection (db_errcode()) to undo them.
 */
#ifndef SLUICE_DBWRITE_H
#define SLUICE_DBWRITE_H

#include "db.h"
#include "gcommit.h"

/* db_write() flags. */
#define DB_WRITE_TXN	0x1	/* PostgreSQL: a transaction of its own, retried */

/* The tries a PostgreSQL write makes after its first, at most. */
#define DB_WRITE_RETRIES	10

/*
 * Runs fn(db', arg) as a committed write: SQLite group commit (db' is db or the connection
 * of the thread leading the batch); PostgreSQL (db' is db) a transaction of its own when
 * flags has DB_WRITE_TXN (retried on DB_EBUSY with back-off within the request's time
 * budget), else fn alone (one autocommitted statement).  Returns fn's value >= 0 once
 * committed, or -1 with *err (may be NULL) set to the failure's class: fn's own (its last
 * run's), or that of the BEGIN, the COMMIT or the queue.  When fn itself returned -1 its
 * changes are undone (its savepoint on SQLite, ROLLBACK on PostgreSQL; without
 * DB_WRITE_TXN its one statement failed, so nothing was kept).  On PostgreSQL the failure
 * also stays on db (db_errcode(), db_sqlstate(), db_raised()); on SQLite it may have been
 * another connection's, of which only the class is known.
 */
int db_write(struct db *db, gcommit_fn fn, void *arg, unsigned flags, enum db_err *err);

#endif /* SLUICE_DBWRITE_H */
