/*
 * db_pg_pool.h: internal to common/: the PostgreSQL connections that the handles of one
 * process share (db_pg_pool.c), for the PostgreSQL back end (db_pg.c).  Handlers never see
 * it: they hold a struct db, and db_pg.c routes each of its statements either through the
 * pool's pipelined batches (pg_pool_run()) or over a connection it holds alone for a
 * transaction (pg_pool_acquire()).
 */
#ifndef SLUICE_DB_PG_POOL_H
#define SLUICE_DB_PG_POOL_H

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>

#include "pq.h"

#include "db.h"

struct pg_pool;
struct pg_conn;

/* Long enough for libpq's connection messages. */
#define PG_JOB_MSG	256

/*
 * One statement to run on whichever shared connection the pool picks, batched with the
 * statements of other threads.  The reads of a batch share one implicit transaction (one
 * Sync); when one of them fails, each runs again in its own, so that one job's error is
 * never another's.  Jobs
 * marked group that meet in one batch run instead in one transaction, committed together
 * (one WAL flush for all): each is answered once that transaction committed; when any of
 * them fails (its own error, a deadlock, a cancel) the transaction rolls back and each is
 * run again alone, so that one job's error is never another's.
 */
struct pg_job {
	/* In, borrowed until pg_pool_run() returns. */
	const char *sql;
	int nparams;
	const char *const *values;	/* nparams text values, NULL for SQL NULL */
	int describe;			/* 1: describe the statement instead of running it */
	long long deadline_ms;		/* CLOCK_MONOTONIC ms past which a job still waiting
					 * for a connection gives up (DB_ETIMEOUT); 0: none */
	int group;			/* 1: may share one transaction with the other jobs
					 * of its batch that may (a group commit, below) */
	/* Out.  code DB_OK: res is the server's answer (the statement's result, or the
	 * error of its preparation), owned by the caller (PQclear).  Any other code: the
	 * job got no answer (connection lost, time budget spent), res is NULL and msg
	 * says why. */
	PGresult *res;
	enum db_err code;
	char msg[PG_JOB_MSG];
	/* The pool's. */
	struct pg_job *next;
	long stmt;			/* its statement's index on the connection */
	pthread_cond_t *cv;		/* its thread waits on it (the pool's: pg_waiter) */
	int taken;
	int done;
	int synced;
	int seg;			/* sent in its batch's read segment (one Sync) */
	int alone;			/* runs with a Sync of its own, in no segment */
	int replanned;			/* ran again once after its plan went stale */
};

/*
 * Opens the pool of conninfo (borrowed).  opts->pg_conns > 0: the process's pool for this
 * conninfo and these options, shared by every handle that asks for it (made at the first
 * call, with one connection opened to check the server unless lazy; later calls only
 * count a reference); 0: a pool of one connection for this caller alone.  lazy: open no
 * connection now (the first statement does, within its budget).  Returns 0, or -1 with
 * *code (DB_EUNAVAIL: server down; DB_EINTERNAL) and a message in err[errlen].  The caller
 * lets go with pg_pool_close().
 */
int pg_pool_open(struct pg_pool **out, const char *conninfo, const struct db_opts *opts,
    int lazy, enum db_err *code, char *err, size_t errlen);
void pg_pool_close(struct pg_pool *p);

/* Runs job on a shared connection (see struct pg_job); always fills its out fields. */
void pg_pool_run(struct pg_pool *p, struct pg_job *job);

/*
 * Takes a connection for the caller alone (a transaction, or a statement that must not
 * share its session), connected and checked, until pg_pool_release().  Returns it, or
 * NULL with *code (DB_EUNAVAIL, DB_ETIMEOUT past deadline_ms) and msg[msglen] set.
 */
struct pg_conn *pg_pool_acquire(struct pg_pool *p, long long deadline_ms, enum db_err *code,
    char *msg, size_t msglen);
void pg_pool_release(struct pg_pool *p, struct pg_conn *c);

/*
 * The start of a request.  A pool of the caller's own (opts.pg_conns 0) checks its
 * connection here (reopening it before deadline_ms, 0: none), as a handle did before pools: a server that went away while it was
 * idle is noticed and the connection reopened.  Returns 0, or -1 with *code (DB_EUNAVAIL)
 * and msg set when the server is still down.  A shared pool checks each connection when a
 * thread takes it, and answers 0 here.
 */
int pg_pool_ready(struct pg_pool *p, long long deadline_ms, enum db_err *code, char *msg,
    size_t msglen);

/*
 * Opens a connection to conninfo (borrowed: a URL or key=value string, one host or
 * several), UTF8, connect_timeout 2 s a host by default, its application_name name (NULL:
 * the conninfo's, else "sluice"); before deadline_ms
 * (CLOCK_MONOTONIC ms) when it is > 0, else with libpq's blocking connect (db_pg_conn.c).
 * Returns it (caller PQfinishes), or NULL with *code (DB_EUNAVAIL, DB_ETIMEOUT past the
 * deadline, DB_EINTERNAL) and msg[msglen] set.
 */
PGconn *pg_connect(const char *conninfo, long long deadline_ms, const char *name,
    enum db_err *code, char *msg, size_t msglen);

/* The libpq connection of c (held by the caller). */
PGconn *pg_conn_pq(const struct pg_conn *c);

/*
 * The name of sql (borrowed) prepared on c (held by the caller), preparing it now when c
 * has not yet.  Returns the name (borrowed until the next call on c), or NULL with
 * *failed the server's error result (caller PQclears; NULL when libpq had none).
 */
const char *pg_conn_stmt(struct pg_conn *c, const char *sql, PGresult **failed);

/*
 * Runs the prepared statement name on c (held by the caller) with nparams text values, as
 * PQexecPrepared() does, but cancels it once deadline_ms (CLOCK_MONOTONIC ms; 0: none)
 * has passed: the server then answers 57014.  Returns 0 with *out the last result
 * (caller PQclears; it may be an error result), or -1 with *out NULL when libpq could not
 * send or got no answer (the connection's error message says why).
 */
int pg_conn_exec(struct pg_conn *c, const char *name, int nparams, const char *const *values,
    long long deadline_ms, PGresult **out);

#endif /* SLUICE_DB_PG_POOL_H */
