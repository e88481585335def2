/*
 * db_pg_pool.c: the PostgreSQL connections a worker's threads share, and the pipelined
 * batches that carry their statements.
 *
 * A pool holds up to opts.pg_conns connections to one server, opened when first needed
 * (so an idle worker holds one backend, and a busy one no more than pg_conns whatever its
 * thread count).  Each connection is in one of three states, guarded by the pool's mutex:
 *
 *   IDLE   nobody is using it; statements may queue on it.
 *   BATCH  a leader thread is running a batch on it; new statements queue behind.
 *   EXCL   one handle holds it alone (a transaction, db_exec()); nothing queues on it.
 *
 * Lock and batch.  A statement outside a transaction becomes a job queued on a connection:
 * an idle connected one if there is one, else one not opened yet, else the busy one with
 * the shortest queue.  Whoever finds its connection IDLE becomes the leader: it takes the
 * queued jobs (up to PG_BATCH_MAX), enters libpq's pipeline mode and sends them all
 * (Parse for a statement the connection has not prepared yet, then Bind/Execute, then
 * the Syncs below), reads the answers in order, leaves pipeline mode and wakes the
 * other threads of the batch; one of the threads still queued leads the next batch.  Under
 * load a batch of n statements costs the worker one write per job but one wait for the
 * server's answers instead of n, and the server one wake-up instead of n; with one request
 * in flight it costs what a plain PQexecPrepared did.
 *
 * A statement counts as done (its write committed) only once the answer of the Sync that
 * ends its transaction arrived; a connection lost before that fails the job with
 * DB_EUNAVAIL, even when the statement's own result had already come back.
 *
 * Read segment.  The jobs of a batch off the write route (reads), when there are two or
 * more, go back to back with one Sync: one implicit transaction, so the server commits and
 * flushes its answers once for all of them instead of once each.  They are done when
 * that Sync is answered and every one of them succeeded.  When one failed, the ones after
 * it were not run (PIPELINE_ABORTED) and the ones before it may have written (a function
 * a GET calls), all of it rolled back: each runs again alone, with a Sync of its own (its
 * own implicit transaction), so that each is answered what it would have been alone.  A
 * job sent alone (a describe, a lone read or write, a job run again) has its own Sync.
 *
 * Group commit.  The jobs of a batch that may write (struct pg_job's group: statements on
 * the write route) go instead in one transaction, BEGIN, their statements, COMMIT and one
 * Sync, when there are two or more: the server flushes the WAL once for all of them, where
 * each implicit transaction would flush it once each, one after the other on a connection.
 * They are done when the COMMIT's Sync is answered.  When the group does not commit (a
 * statement's error, a lock wait past PG_GROUP_LOCKS, a cancel) the connection rolls it
 * back and runs its jobs again, each with its own Sync, so that each is answered what it
 * would have been alone.  Prepared statements outlive a rolled back transaction (the
 * protocol's Parse is not transactional), so the retry reuses what the group prepared.
 *
 * Transactions.  pg_pool_acquire() takes an IDLE connection with an empty queue for one
 * handle until pg_pool_release(); when there is none it reserves a busy one (no new job
 * queues on it) and waits for its queue to drain, so that a stream of statements never
 * starves a transaction.  An EXCL connection is used with libpq's plain blocking calls.
 * The worker's counters (common/metrics.h) follow the states: a connection is busy while
 * it is not IDLE (pg_conn_set()), and open while it holds a session (c->pq).
 *
 * Prepared statements are per connection: each keeps an LRU of the SQL texts it prepared
 * (opts.stmt_cache of them, names "s1", "s2", ...), touched only by whoever holds the
 * connection (a leader or an EXCL holder), so it needs no lock.  A connection found dead
 * is reset (and forgets its statements) by the next thread that takes it; a server that
 * went away while the connection was idle is noticed before any job is sent (a
 * non-blocking read), so such a restart fails no request.
 *
 * Waits honour the job's deadline (the request's time budget): a job that could not even
 * be sent in time gives up with DB_ETIMEOUT, or sooner, when every connection stays busy
 * for opts.pg_wait_ms (db_wait_ms, the pool's wait budget), with DB_EBUSY; once sent, it is cancelled at the deadline
 * (pg_conn_result()), so that the budget bounds a request's statements together, and the
 * server's statement_timeout (the same budget) bounds each one as a backstop.  The
 * cancel reaches whatever the connection runs when it arrives: in the rare case that
 * the job has just been answered, the next job of the batch is cancelled instead and
 * answers 503 "timeout", which a client may retry.  A connection (re)opened for a request
 * is opened within that deadline too (pg_connect(), db_pg_conn.c).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "db_pg_pool.h"
#include "extern.h"
#include "log.h"
#include "metrics.h"

/* Jobs sent in one batch at most: enough to fill a round trip, few enough that the
 * first thread of a batch does not wait long for the last one's answer. */
#define PG_BATCH_MAX	32

/*
 * A group's lock waits give up after 10 ms (SQLSTATE 55P03): the group rolls back and
 * its writes run again one by one, which never wait for each other in a cycle.  Two
 * groups on two connections that update the same rows in different orders would
 * otherwise deadlock until the server's deadlock_timeout (1 s, a superuser's setting)
 * picked one.  Writes that wait for a group ahead to commit wait a WAL flush, well under
 * it.  (The timeouts tried, and what each cost: docs/benchmarks.md, "PostgreSQL's group
 * commit".)
 */
#define PG_GROUP_LOCKS	"SET LOCAL lock_timeout = 10"

enum pg_conn_state {
	PGC_IDLE,
	PGC_BATCH,
	PGC_EXCL,
};

/* A statement a connection prepared, or is preparing in the batch under way. */
enum pg_stmt_state {
	PGS_NONE,	/* named but not on the server (new, or its Parse failed) */
	PGS_SENT,	/* Parse sent in this batch */
	PGS_READY,	/* prepared */
};

struct pg_stmt {
	char *sql;		/* owned */
	uint64_t hash;
	uint64_t used;		/* the connection's clock when last used */
	enum pg_stmt_state state;
	char name[16];
};

enum pg_op_kind {
	PG_OP_PLAIN,	/* DEALLOCATE, a group's BEGIN and SET LOCAL, ROLLBACK: answer dropped */
	PG_OP_PREPARE,
	PG_OP_MAIN,
	PG_OP_SYNC,
	PG_OP_SEGSYNC,	/* the read segment's Sync: job is the batch's first job */
	PG_OP_COMMIT,	/* a group's: whether it committed */
};

/* What was sent, in order, so that the answers can be matched to it. */
struct pg_op {
	enum pg_op_kind kind;
	struct pg_job *job;	/* NULL for DEALLOC */
	size_t stmt;		/* PREPARE: index in the connection's statements */
};

struct pg_conn {
	struct pg_pool *pool;
	PGconn *pq;			/* NULL until first used */
	enum pg_conn_state state;	/* under pool->mu */
	int reserved;			/* an acquirer waits for it: queue nothing more */
	struct pg_job *head, **tail;	/* the queue, under pool->mu */
	int nqueued;
	int broken;			/* out of step with the server: reset before use */
	/* The holder's (leader or EXCL) alone: */
	struct pg_stmt *stmts;
	size_t nstmts, capstmts;
	unsigned next_name;
	uint64_t clock;
	struct pg_op *ops;
	size_t capops;
};

/*
 * A condition variable a thread waits on for its job.  The pool owns them (a free list,
 * freed with the pool), so that a leader may signal the threads of its batch after letting
 * go of the pool's mutex: a thread woken while the leader still held it would only wake to
 * wait for the mutex (two context switches instead of one, and the woken thread usually
 * runs at once on a loaded core).  A signal that comes after its thread has returned
 * wakes, at worst, whoever waits on that variable next, which rechecks what it waits for.
 */
struct pg_waiter {
	pthread_cond_t cv;
	struct pg_waiter *next;
};

struct pg_pool {
	pthread_mutex_t mu;
	pthread_cond_t cv;		/* a connection became free or drained */
	pthread_condattr_t ca;		/* CLOCK_MONOTONIC, for cv and the jobs' own */
	int waiters;			/* threads waiting on cv */
	struct pg_waiter *spare;	/* the waiters no job uses, under mu */
	unsigned long long jobs, batches;	/* sent so far, for the log at close */
	char *conninfo;			/* owned */
	struct db_opts opts;
	struct pg_conn *conns;
	int nconns;
	/* The process's shared pools (pg_pools), under pg_pools_mu. */
	int shared;
	int refs;
	struct pg_pool *next;
};

static pthread_mutex_t pg_pools_mu = PTHREAD_MUTEX_INITIALIZER;
static struct pg_pool *pg_pools;

/* Notices (and the FATAL a dying backend sends to an idle connection) go to the log, not
 * to libpq's default of stderr. */
static void
pg_notice(void *arg, const char *msg)
{
	size_t n = strlen(msg);

	(void)arg;
	while (n > 0 && msg[n - 1] == '\n')
		n--;
	log_debug("pg: %.*s", (int)n, msg);
}

/* Copies a libpq message without its trailing newlines. */
static void
pg_msg(char *out, size_t outlen, const char *what, const char *msg)
{
	size_t n;

	if (outlen == 0)
		return;
	(void)snprintf(out, outlen, "pg %s: %s", what, msg != NULL ? msg : "");
	n = strlen(out);
	while (n > 0 && (out[n - 1] == '\n' || out[n - 1] == ' '))
		out[--n] = '\0';
}

static void
pg_stmts_drop(struct pg_conn *c)
{
	size_t i;

	for (i = 0; i < c->nstmts; i++)
		free(c->stmts[i].sql);
	c->nstmts = 0;
}

/*
 * Settings of a new session: the time budget (opts.stmt_timeout_ms) as statement_timeout,
 * so that the server cancels a statement that runs past it and the worker is answered at
 * once (SQLSTATE 57014, DB_ETIMEOUT).  The budget is the worker's, the same for every
 * request, so connections shared by requests carry it alike.  opts.pg_plans, unless the
 * server's own, as plan_cache_mode (PostgreSQL 12 and later; an older server plans as it
 * always did).  Generic plans also turn JIT compilation and Memoize (PostgreSQL 14 and
 * later) off.  A generic plan cannot see a bound LIMIT and costs it as a tenth of the
 * rows, so a page of 30 at 1,000,000 rows is costed past jit_above_cost and compiled at
 * every execution (195 ms for the records API's list of 30 joined to its authors, whose
 * 30 probes take 3 ms), and the Memoize node that estimate puts over a LATERAL probe
 * builds a cache sized for it at every execution (16.7 ms a statement there).  0 or -1
 * with msg set.
 */
static int
pg_session(struct pg_conn *c, char *msg, size_t msglen)
{
	static const char *const modes[] = {
		[DB_PLANS_GENERIC] = "force_generic_plan",
		[DB_PLANS_CUSTOM] = "force_custom_plan",
	};
	const struct db_opts *o = &c->pool->opts;
	char sql[192];
	PGresult *res;
	int n, ret = -1;

	n = snprintf(sql, sizeof(sql), "SET statement_timeout = %d", o->stmt_timeout_ms);
	if (n > 0 && o->pg_plans != DB_PLANS_AUTO && PQserverVersion(c->pq) >= 120000)
		n += snprintf(sql + n, sizeof(sql) - (size_t)n, "; SET plan_cache_mode = %s",
		    modes[o->pg_plans]);
	if (n > 0 && o->pg_plans == DB_PLANS_GENERIC)
		n += snprintf(sql + n, sizeof(sql) - (size_t)n, "; SET jit = off%s",
		    PQserverVersion(c->pq) >= 140000 ? "; SET enable_memoize = off" : "");
	if (n < 0 || (size_t)n >= sizeof(sql))
		return -1;
	res = PQexec(c->pq, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		pg_msg(msg, msglen, "set the session's settings", PQerrorMessage(c->pq));
	else
		ret = 0;
	PQclear(res);
	return ret;
}

/*
 * Makes c (held by the caller) usable: opens it the first time, notices (probe 1) a
 * server that went away while it was idle, reopens it when dead, before deadline_ms (0:
 * libpq's blocking connect).  Returns 0, or -1 with *code (DB_EUNAVAIL, DB_ETIMEOUT past
 * the deadline, or DB_EINTERNAL when libpq is out of memory) and msg set.
 */
static int
pg_conn_check(struct pg_conn *c, int probe, long long deadline_ms, enum db_err *code,
    char *msg, size_t msglen)
{
	int lost = 0;

	*code = DB_EUNAVAIL;
	if (c->pq != NULL) {
		/* A server that went away while we were idle has left an error message and an
		 * EOF on the socket; reading them (libpq's socket never blocks here) marks the
		 * connection bad now, before a request is spent finding out.  The second read
		 * is for the EOF after the message. */
		if (probe && PQstatus(c->pq) == CONNECTION_OK &&
		    PQtransactionStatus(c->pq) == PQTRANS_IDLE && !c->broken) {
			if (PQconsumeInput(c->pq) == 1)
				(void)PQconsumeInput(c->pq);
		}
		if (PQstatus(c->pq) == CONNECTION_OK && !c->broken)
			return 0;
		/* A new session, not PQreset(): nothing of the old one (its statement
		 * names, a pipeline left half read) may survive.  With several hosts the new
		 * one may be another server (a promoted standby). */
		log_warn("pg: connection lost; reconnecting");
		pg_stmts_drop(c);
		PQfinish(c->pq);
		c->pq = NULL;
		metrics_db_open(-1);
		lost = 1;
	}
	if ((c->pq = pg_connect(c->pool->conninfo, deadline_ms, NULL, code, msg, msglen)) == NULL)
		return -1;
	metrics_db_open(1);
	PQsetNoticeProcessor(c->pq, pg_notice, NULL);
	c->broken = 0;
	if (pg_session(c, msg, msglen) == -1) {
		c->broken = 1;
		return -1;
	}
	if (lost) {
		log_info("pg: reconnected");
		metrics_db_reconnect();
	}
	return 0;
}

/* Waits on cv (pool->mu held) until signalled or past deadline_ms (0: no deadline).
 * Returns ETIMEDOUT when the deadline passed, else 0. */
static int
pg_wait(pthread_cond_t *cv, struct pg_pool *p, long long deadline_ms)
{
	struct timespec ts;

	db_blocking();
	if (deadline_ms <= 0) {
		pthread_cond_wait(cv, &p->mu);
		return 0;
	}
	if (clock_now_ms() >= deadline_ms)
		return ETIMEDOUT;
	clock_timespec(deadline_ms, &ts);
	return pthread_cond_timedwait(cv, &p->mu, &ts) == ETIMEDOUT ? ETIMEDOUT : 0;
}

/*
 * Until when a statement or a transaction that began to wait at now may wait for a
 * connection: its request's deadline (0: none), or sooner opts.pg_wait_ms after now (the
 * pool's wait budget, db_wait_ms).  *busy is set when the wait budget ends first: giving
 * up then is the pool being busy (DB_EBUSY, 503 "busy"), not the request out of time.
 */
static long long
pg_wait_until(const struct pg_pool *p, long long deadline_ms, int *busy)
{
	long long until;

	*busy = 0;
	if (p->opts.pg_wait_ms <= 0)
		return deadline_ms;
	until = clock_now_ms() + p->opts.pg_wait_ms;
	if (deadline_ms > 0 && deadline_ms <= until)
		return deadline_ms;
	*busy = 1;
	return until;
}

/* The answer of a statement or transaction that waited in vain for a connection. */
static enum db_err
pg_wait_code(int busy)
{
	return busy ? DB_EBUSY : DB_ETIMEOUT;
}

/* Puts c in state st (pool->mu held), counting it busy while it is not IDLE. */
static void
pg_conn_set(struct pg_conn *c, enum pg_conn_state st)
{
	if ((c->state == PGC_IDLE) != (st == PGC_IDLE))
		metrics_db_busy_conn(st == PGC_IDLE ? -1 : 1);
	c->state = st;
}

static int
pg_conn_usable(const struct pg_conn *c)
{
	return c->pq != NULL && PQstatus(c->pq) == CONNECTION_OK && !c->broken;
}

/* A connection free for one holder: IDLE, nothing queued, not reserved; an open one
 * before one not opened yet.  pool->mu held.  NULL when there is none. */
static struct pg_conn *
pg_pick_free(struct pg_pool *p)
{
	struct pg_conn *c, *spare = NULL;
	int i;

	for (i = 0; i < p->nconns; i++) {
		c = &p->conns[i];
		if (c->state != PGC_IDLE || c->head != NULL || c->reserved)
			continue;
		if (pg_conn_usable(c))
			return c;
		if (spare == NULL)
			spare = c;
	}
	return spare;
}

/* Where a job queues: a free connection, else the busy one with the shortest queue.
 * pool->mu held.  NULL when every connection is held or reserved. */
static struct pg_conn *
pg_pick_job(struct pg_pool *p)
{
	struct pg_conn *c, *busy = NULL;
	int i;

	if ((c = pg_pick_free(p)) != NULL)
		return c;
	for (i = 0; i < p->nconns; i++) {
		c = &p->conns[i];
		if (c->state == PGC_EXCL || c->reserved)
			continue;
		if (busy == NULL || c->nqueued < busy->nqueued)
			busy = c;
	}
	return busy;
}

/*
 * The statement of sql on c, added (state PGS_NONE, a fresh name) when c has none.  To
 * make room it may evict the least recently used one not used in the current batch:
 * its name is copied into evicted[16] (else evicted[0] is NUL) for the caller to
 * DEALLOCATE.  Returns its index, or -1 when out of memory.
 */
static long
pg_stmt_get(struct pg_conn *c, const char *sql, uint64_t hash, char *evicted)
{
	size_t i, victim = (size_t)-1, cap = (size_t)c->pool->opts.stmt_cache;
	struct pg_stmt *s, *n;
	char *copy;

	evicted[0] = '\0';
	for (i = 0; i < c->nstmts; i++)
		if (c->stmts[i].hash == hash && strcmp(c->stmts[i].sql, sql) == 0)
			return (long)i;
	if ((copy = strdup(sql)) == NULL)
		return -1;
	if (c->nstmts >= cap)
		for (i = 0; i < c->nstmts; i++)
			if (c->stmts[i].used != c->clock &&
			    (victim == (size_t)-1 || c->stmts[i].used < c->stmts[victim].used))
				victim = i;
	if (victim != (size_t)-1) {
		s = &c->stmts[victim];
		if (s->state == PGS_READY)
			memcpy(evicted, s->name, sizeof(s->name));
		free(s->sql);
	} else {
		if (c->nstmts == c->capstmts) {
			cap = c->capstmts ? c->capstmts * 2 : 16;
			if ((n = realloc(c->stmts, cap * sizeof(*n))) == NULL) {
				free(copy);
				return -1;
			}
			c->stmts = n;
			c->capstmts = cap;
		}
		victim = c->nstmts++;
		s = &c->stmts[victim];
	}
	s->sql = copy;
	s->hash = hash;
	s->used = c->clock;
	s->state = PGS_NONE;
	/* Cannot truncate: "s" and a 32-bit number fit 16 bytes. */
	(void)snprintf(s->name, sizeof(s->name), "s%u", ++c->next_name);
	return (long)victim;
}

/*
 * 1 when res is the server's "cached plan must not change result type" (SQLSTATE 0A000):
 * a statement prepared on the connection whose result's columns a schema change has
 * changed since (ALTER TABLE ... ADD COLUMN under a SELECT *).  The prepared statement
 * would fail so at every execution, on this connection, until it is prepared again.
 */
static int
pg_res_stale(const PGresult *res)
{
	const char *ss = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	const char *m = res != NULL ? PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY) : NULL;

	return ss != NULL && strcmp(ss, "0A000") == 0 && m != NULL &&
	    strstr(m, "cached plan must not change result type") != NULL;
}

/*
 * Forgets statement i of c (its plan went stale, pg_res_stale()): its text no longer
 * matches any statement, so the next use of that SQL prepares it afresh under a new name,
 * and it is the first evicted (its name then DEALLOCATEd).
 */
static void
pg_stmt_forget(struct pg_conn *c, size_t i)
{
	struct pg_stmt *s = &c->stmts[i];

	s->sql[0] = '\0';
	s->hash = 0;
	s->used = 0;
}

static int
pg_op_add(struct pg_conn *c, size_t *nops, enum pg_op_kind kind, struct pg_job *job,
    size_t stmt)
{
	struct pg_op *n;
	size_t cap;

	if (*nops == c->capops) {
		cap = c->capops ? c->capops * 2 : 4 * PG_BATCH_MAX;
		if ((n = realloc(c->ops, cap * sizeof(*n))) == NULL)
			return -1;
		c->ops = n;
		c->capops = cap;
	}
	c->ops[*nops].kind = kind;
	c->ops[*nops].job = job;
	c->ops[*nops].stmt = stmt;
	(*nops)++;
	return 0;
}

static void
pg_job_fail(struct pg_job *j, enum db_err code, const char *msg)
{
	PQclear(j->res);
	j->res = NULL;
	j->code = code;
	(void)snprintf(j->msg, sizeof(j->msg), "%s", msg);
}

/* Sends a statement with no parameters that returns no rows (BEGIN, COMMIT, DEALLOCATE),
 * recorded as kind.  Returns 0, or -1 when libpq refused. */
static int
pg_send_plain(struct pg_conn *c, const char *sql, size_t *nops, enum pg_op_kind kind)
{
	if (PQsendQueryParams(c->pq, sql, 0, NULL, NULL, NULL, NULL, 0) != 1 ||
	    pg_op_add(c, nops, kind, NULL, 0) == -1)
		return -1;
	return 0;
}

static int
pg_send_sync(struct pg_conn *c, size_t *nops, enum pg_op_kind kind, struct pg_job *j)
{
	if (PQpipelineSync(c->pq) != 1 || pg_op_add(c, nops, kind, j, 0) == -1)
		return -1;
	return 0;
}

/* Finds (or adds) job j's statement on c, as j->stmt, and sends the DEALLOCATE of the
 * statement it evicts, with a Sync of its own (outside any group's transaction).
 * Returns 0, or -1 when out of memory or libpq refused. */
static int
pg_batch_stmt(struct pg_conn *c, struct pg_job *j, size_t *nops)
{
	char evicted[16], sql[48];

	if ((j->stmt = pg_stmt_get(c, j->sql, db_hash(j->sql), evicted)) < 0)
		return -1;
	c->stmts[j->stmt].used = c->clock;
	if (evicted[0] == '\0')
		return 0;
	/* Cannot truncate: a name is at most 15 bytes. */
	(void)snprintf(sql, sizeof(sql), "DEALLOCATE %s", evicted);
	if (pg_send_plain(c, sql, nops, PG_OP_PLAIN) == -1 ||
	    pg_send_sync(c, nops, PG_OP_SYNC, NULL) == -1)
		return -1;
	return 0;
}

/* Sends job j, whose statement pg_batch_stmt() found: Parse when needed, then Execute or
 * Describe, then (sync) a Sync of its own.  Returns 0, or -1 when libpq refused (the
 * connection is lost, or out of memory). */
static int
pg_batch_exec(struct pg_conn *c, struct pg_job *j, int sync, size_t *nops)
{
	struct pg_stmt *s = &c->stmts[j->stmt];

	if (s->state == PGS_NONE) {
		if (PQsendPrepare(c->pq, s->name, j->sql, 0, NULL) != 1 ||
		    pg_op_add(c, nops, PG_OP_PREPARE, j, (size_t)j->stmt) == -1)
			return -1;
		s->state = PGS_SENT;
	}
	if (j->describe) {
		if (PQsendDescribePrepared(c->pq, s->name) != 1)
			return -1;
	} else if (PQsendQueryPrepared(c->pq, s->name, j->nparams, j->values, NULL, NULL,
	    0) != 1)
		return -1;
	if (pg_op_add(c, nops, PG_OP_MAIN, j, 0) == -1 ||
	    (sync && pg_send_sync(c, nops, PG_OP_SYNC, j) == -1))
		return -1;
	return 0;
}

/*
 * Asks the server to cancel what c runs now (the statement past its request's budget):
 * it answers that statement with 57014 (DB_ETIMEOUT), as statement_timeout does.  Best
 * effort: a cancel that cannot be sent is logged, and the wait goes on.
 */
static void
pg_cancel(struct pg_conn *c)
{
	PGcancel *cn;
	char err[256];

	if ((cn = PQgetCancel(c->pq)) == NULL)
		return;
	if (PQcancel(cn, err, sizeof(err)) != 1)
		log_warn("pg: cannot cancel a statement past its budget: %s", err);
	PQfreeCancel(cn);
}

/*
 * The next result on c, as PQgetResult() gives it, waiting no later than deadline_ms
 * (CLOCK_MONOTONIC ms; 0: no deadline): past it, the statement running is cancelled
 * (once) and its answer, the cancel's error, awaited.  So a request's budget bounds the
 * sum of its statements, not each alone (statement_timeout, the session's, is the
 * budget of one).
 */
static PGresult *
pg_conn_result(struct pg_conn *c, long long deadline_ms)
{
	struct pollfd pfd;
	long long left;
	int cancelled = 0, n;

	if (PQisBusy(c->pq))
		db_blocking();
	pfd.fd = PQsocket(c->pq);
	pfd.events = POLLIN;
	while (deadline_ms > 0 && PQisBusy(c->pq)) {
		left = cancelled ? -1 : deadline_ms - clock_now_ms();
		if (!cancelled && left <= 0) {
			pg_cancel(c);
			cancelled = 1;
			continue;
		}
		n = poll(&pfd, 1, left < 0 ? -1 : left > 60000 ? 60000 : (int)left);
		if (n < 0 && errno != EINTR)
			break;	/* PQgetResult() reports what is wrong */
		if (n > 0 && PQconsumeInput(c->pq) != 1)
			break;
	}
	return PQgetResult(c->pq);
}

int
pg_conn_exec(struct pg_conn *c, const char *name, int nparams, const char *const *values,
    long long deadline_ms, PGresult **out)
{
	PGresult *r, *last = NULL;
	size_t i;

	*out = NULL;
	if (PQsendQueryPrepared(c->pq, name, nparams, values, NULL, NULL, 0) != 1)
		return -1;
	/* As PQexecPrepared(): the last result, once the statement's answer has ended. */
	while ((r = pg_conn_result(c, deadline_ms)) != NULL) {
		PQclear(last);
		last = r;
		if (PQstatus(c->pq) == CONNECTION_BAD)
			break;
	}
	/* Inside a transaction it cannot run again (the transaction failed): its caller
	 * answers the error, and the next use prepares it afresh. */
	if (pg_res_stale(last))
		for (i = 0; i < c->nstmts; i++)
			if (strcmp(c->stmts[i].name, name) == 0)
				pg_stmt_forget(c, i);
	*out = last;
	return last != NULL ? 0 : -1;
}

/* A job of the batch still to send: not answered (synced) and not failed. */
static int
pg_job_pending(const struct pg_job *j)
{
	return !j->synced && j->code == DB_OK;
}

/* A job that may ride the batch's read segment: a statement off the write route (a read)
 * not sent alone already. */
static int
pg_job_reads(const struct pg_job *j)
{
	return pg_job_pending(j) && !j->group && !j->describe && !j->alone;
}

/* The read segment's Sync answered (the jobs of batch marked seg): when every one of them
 * succeeded, they are done; else none is, and each runs again alone. */
static void
pg_segment_settle(struct pg_job *batch)
{
	ExecStatusType st;
	struct pg_job *j;

	for (j = batch; j != NULL; j = j->next) {
		if (!j->seg)
			continue;
		st = j->res != NULL ? PQresultStatus(j->res) : PGRES_FATAL_ERROR;
		if (j->code != DB_OK || (st != PGRES_TUPLES_OK && st != PGRES_COMMAND_OK))
			return;
	}
	for (j = batch; j != NULL; j = j->next)
		if (j->seg)
			j->synced = 1;
}

/* Reads the answers of ops[0..nops) in order; *committed: a group's COMMIT succeeded.
 * Returns 0, or -1 when the connection was lost or answered out of step (the jobs not yet
 * synced then fail). */
static int
pg_batch_read(struct pg_conn *c, size_t nops, int *committed)
{
	struct pg_op *op;
	PGresult *r;
	size_t i;

	for (i = 0; i < nops; i++) {
		op = &c->ops[i];
		/* The statement of a job is cancelled at its request's deadline. */
		if ((r = pg_conn_result(c, op->kind == PG_OP_MAIN && !op->job->describe ?
		    op->job->deadline_ms : 0)) == NULL)
			return -1;
		if (op->kind == PG_OP_SYNC || op->kind == PG_OP_SEGSYNC) {
			if (PQresultStatus(r) != PGRES_PIPELINE_SYNC) {
				PQclear(r);
				return -1;
			}
			PQclear(r);
			if (op->kind == PG_OP_SEGSYNC)
				pg_segment_settle(op->job);
			else if (op->job != NULL)
				op->job->synced = 1;
			continue;
		}
		switch (op->kind) {
		case PG_OP_PREPARE:
			if (PQresultStatus(r) == PGRES_COMMAND_OK) {
				c->stmts[op->stmt].state = PGS_READY;
				PQclear(r);
			} else {
				/* Parsed again next time; the job answers with this error. */
				c->stmts[op->stmt].state = PGS_NONE;
				PQclear(op->job->res);
				op->job->res = r;
			}
			break;
		case PG_OP_MAIN:
			/* After a failed Parse this is PIPELINE_ABORTED: keep the cause. */
			if (op->job->res != NULL)
				PQclear(r);
			else
				op->job->res = r;
			if (pg_res_stale(op->job->res))
				pg_stmt_forget(c, (size_t)op->job->stmt);
			break;
		case PG_OP_COMMIT:
			/* PIPELINE_ABORTED when a statement of the group failed. */
			*committed = PQresultStatus(r) == PGRES_COMMAND_OK;
			PQclear(r);
			break;
		default:
			PQclear(r);
			break;
		}
		/* Each command's answer ends with a NULL. */
		while ((r = PQgetResult(c->pq)) != NULL)
			PQclear(r);
	}
	return 0;
}

/* The parts of a batch whose jobs share a Sync: its reads (the read segment, one implicit
 * transaction) and its writes (the group, one explicit transaction). */
enum pg_part {
	PG_PART_READS,
	PG_PART_GROUP,
};

static int
pg_job_in(const struct pg_job *j, enum pg_part part)
{
	return part == PG_PART_READS ? pg_job_reads(j) : j->group && pg_job_pending(j);
}

/* Finds (or adds) the statements of part's jobs, so that the DEALLOCATEs that make room,
 * each with a Sync of its own, go before the part.  Returns 0, or -1 as pg_batch_stmt(). */
static int
pg_part_stmts(struct pg_conn *c, struct pg_job *batch, enum pg_part part, size_t *nops)
{
	struct pg_job *j;

	for (j = batch; j != NULL; j = j->next)
		if (pg_job_in(j, part) && pg_batch_stmt(c, j, nops) == -1)
			return -1;
	return 0;
}

/* Sends part's jobs back to back, without a Sync of their own (a read marked seg).
 * Returns 0, or -1 as pg_batch_exec(). */
static int
pg_part_execs(struct pg_conn *c, struct pg_job *batch, enum pg_part part, size_t *nops)
{
	struct pg_job *j;

	for (j = batch; j != NULL; j = j->next) {
		if (!pg_job_in(j, part))
			continue;
		j->seg = part == PG_PART_READS;
		if (pg_batch_exec(c, j, 0, nops) == -1)
			return -1;
	}
	return 0;
}

/*
 * Sends the pending jobs of batch.  First those that go alone, each with a Sync of its
 * own: a describe, a job run again alone, a lone read, a lone write.  Then, when two or
 * more are reads (off the write route), the read segment: their statements back to back
 * and one Sync, one implicit transaction, so that the server answers them with one flush
 * and one commit, not one each.  Then, when two or more may write, the group: one
 * transaction (BEGIN, their statements, COMMIT, one Sync).  In both, the statements are
 * found first: the DEALLOCATEs that make room go before, each with its own Sync.  *grouped
 * says whether a group was sent.  Returns 0, or -1 when libpq refused (what was sent is
 * in c->ops[0..*nops)).
 */
static int
pg_batch_send(struct pg_conn *c, struct pg_job *batch, size_t *nops, int *grouped)
{
	struct pg_job *j;
	int n = 0, nr = 0;

	*grouped = 0;
	/* A group that failed left its transaction open (a Sync does not end an explicit
	 * one): rolled back before anything else runs. */
	if (PQtransactionStatus(c->pq) == PQTRANS_INERROR &&
	    (pg_send_plain(c, "ROLLBACK", nops, PG_OP_PLAIN) == -1 ||
	    pg_send_sync(c, nops, PG_OP_SYNC, NULL) == -1))
		return -1;
	for (j = batch; j != NULL; j = j->next) {
		n += pg_job_in(j, PG_PART_GROUP);
		nr += pg_job_in(j, PG_PART_READS);
	}
	for (j = batch; j != NULL; j = j->next) {
		/* The jobs of a part that goes together are sent below. */
		if (!pg_job_pending(j) || (n >= 2 && pg_job_in(j, PG_PART_GROUP)) ||
		    (nr >= 2 && pg_job_in(j, PG_PART_READS)))
			continue;
		if (pg_batch_stmt(c, j, nops) == -1 || pg_batch_exec(c, j, 1, nops) == -1)
			return -1;
	}
	if (nr >= 2 && (pg_part_stmts(c, batch, PG_PART_READS, nops) == -1 ||
	    pg_part_execs(c, batch, PG_PART_READS, nops) == -1 ||
	    pg_send_sync(c, nops, PG_OP_SEGSYNC, batch) == -1))
		return -1;
	if (n < 2)
		return 0;
	if (pg_part_stmts(c, batch, PG_PART_GROUP, nops) == -1)
		return -1;
	*grouped = 1;
	if (pg_send_plain(c, "BEGIN", nops, PG_OP_PLAIN) == -1 ||
	    pg_send_plain(c, PG_GROUP_LOCKS, nops, PG_OP_PLAIN) == -1 ||
	    pg_part_execs(c, batch, PG_PART_GROUP, nops) == -1 ||
	    pg_send_plain(c, "COMMIT", nops, PG_OP_COMMIT) == -1 ||
	    pg_send_sync(c, nops, PG_OP_SYNC, NULL) == -1)
		return -1;
	return 0;
}

/*
 * Sends the pending jobs of batch on c (in pipeline mode) and reads their answers.  A
 * group that did not commit, or a read segment where a statement failed (which aborted
 * the segment's others), is sent again, each of its jobs alone, so that the one that
 * failed answers its own error and the others succeed; a job whose budget is spent (the
 * cancel that may have failed the rest) is not.  Returns 0, or -1 when the connection was
 * lost or libpq refused (*sent_all 0 for the latter).
 */
static int
pg_batch_round(struct pg_conn *c, struct pg_job *batch, int *sent_all)
{
	int committed = 0, again = 0;
	struct pg_job *j;
	size_t nops = 0;
	int grouped = 0;

	*sent_all = pg_batch_send(c, batch, &nops, &grouped) == 0;
	/* What was sent must be answered before the connection is used again: a job cut
	 * off in the middle gets a Sync of its own, so the server answers it whole. */
	if (!*sent_all && PQstatus(c->pq) == CONNECTION_OK &&
	    (nops == 0 || (c->ops[nops - 1].kind != PG_OP_SYNC &&
	    c->ops[nops - 1].kind != PG_OP_SEGSYNC)) &&
	    pg_send_sync(c, &nops, PG_OP_SYNC, NULL) == -1)
		return -1;
	if (pg_batch_read(c, nops, &committed) == -1 || !*sent_all)
		return -1;
	/* Every answer was read, the group's Sync included: committed means done. */
	for (j = batch; j != NULL; j = j->next) {
		/* A plan a schema change made stale ran nothing (the server refuses it
		 * before it starts): once, it runs again alone, prepared afresh. */
		if (j->code == DB_OK && !j->replanned && pg_res_stale(j->res)) {
			j->synced = j->group = j->seg = 0;
			j->alone = j->replanned = 1;
			PQclear(j->res);
			j->res = NULL;
			again = 1;
			continue;
		}
		if (!pg_job_pending(j) || !(j->seg || (grouped && j->group)))
			continue;
		if (j->group && committed) {
			j->synced = 1;
			continue;
		}
		j->group = j->seg = 0;
		j->alone = 1;
		PQclear(j->res);
		j->res = NULL;
		if (j->deadline_ms > 0 && clock_now_ms() >= j->deadline_ms)
			pg_job_fail(j, DB_ETIMEOUT, "pg: the request's time budget is spent");
		again = 1;
	}
	if (!again)
		return 0;
	log_debug("pg: a group of writes rolled back, a read of a segment failed or a plan "
	    "went stale; each runs again alone");
	return pg_batch_round(c, batch, sent_all);
}

/* Runs the jobs of batch (a list) on c, which the caller leads (state PGC_BATCH). */
static void
pg_batch_run(struct pg_conn *c, struct pg_job *batch)
{
	char msg[PG_JOB_MSG];
	enum db_err code;
	struct pg_job *j;
	long long deadline = 0;
	int sent_all = 1;

	/* A connection to (re)open is opened within the budget of the batch's job that has
	 * the most of it left; a job without a budget lets it take libpq's own time. */
	for (j = batch; j != NULL; j = j->next) {
		if (j->deadline_ms <= 0) {
			deadline = 0;
			break;
		}
		if (j->deadline_ms > deadline)
			deadline = j->deadline_ms;
	}
	if (pg_conn_check(c, c->pool->shared, deadline, &code, msg, sizeof(msg)) == -1) {
		for (j = batch; j != NULL; j = j->next)
			pg_job_fail(j, code, msg);
		return;
	}
	c->clock++;
	if (PQenterPipelineMode(c->pq) != 1) {
		pg_msg(msg, sizeof(msg), "pipeline", PQerrorMessage(c->pq));
		for (j = batch; j != NULL; j = j->next)
			pg_job_fail(j, DB_EINTERNAL, msg);
		return;
	}
	if (pg_batch_round(c, batch, &sent_all) == -1 || PQexitPipelineMode(c->pq) != 1)
		c->broken = 1;
	if (PQstatus(c->pq) != CONNECTION_OK)
		c->broken = 1;
	pg_msg(msg, sizeof(msg), "connection", PQerrorMessage(c->pq));
	/* A job is done once its Sync was answered (its write is committed); the others
	 * never got an answer they may trust. */
	for (j = batch; j != NULL; j = j->next)
		if (pg_job_pending(j))
			pg_job_fail(j, c->broken ? DB_EUNAVAIL : DB_EINTERNAL,
			    sent_all ? msg : "pg: cannot send the statement");
	if (c->broken) {
		/* The names this batch sent may or may not exist: forget them all. */
		pg_stmts_drop(c);
		if (PQstatus(c->pq) == CONNECTION_OK)
			log_warn("pg: connection out of step with the server; it will be reset");
	}
}

/* Lets the thread of c's first queued job know that c is idle: it leads the next batch.
 * pool->mu held. */
static void
pg_wake_next(struct pg_conn *c)
{
	if (c->state == PGC_IDLE && c->head != NULL)
		pthread_cond_signal(c->head->cv);
}

/* Takes job (still queued on c, not taken) out of c's queue.  pool->mu held. */
static void
pg_unqueue(struct pg_conn *c, struct pg_job *job)
{
	struct pg_job **pp;

	for (pp = &c->head; *pp != job; pp = &(*pp)->next)
		;
	*pp = job->next;
	if (c->tail == &job->next)
		c->tail = pp;
	c->nqueued--;
	/* It may have been told to lead: the next one leads instead. */
	pg_wake_next(c);
	/* An acquirer may wait for this queue to drain. */
	if (c->head == NULL && c->pool->waiters > 0)
		pthread_cond_broadcast(&c->pool->cv);
}

/*
 * Leads a batch on c (IDLE, its queue not empty; pool->mu held, and held again on
 * return): takes the queue's first jobs, runs them, and wakes their threads one by one,
 * then the thread of the job now first in the queue, which leads the next batch.  Each
 * thread waits on a condition variable of its own, so that the end of a batch wakes the
 * threads that have something to do and no other (a broadcast would wake every queued
 * thread to find its job still queued).  The batch's threads are signalled once the
 * mutex is free (struct pg_waiter), so that each takes it at once when it wakes.
 */
static void
pg_lead(struct pg_pool *p, struct pg_conn *c)
{
	pthread_cond_t *cvs[PG_BATCH_MAX];
	struct pg_job *batch, **pp, *j;
	int n, i, writes = 0;

	batch = c->head;
	for (pp = &c->head, n = 0; *pp != NULL && n < PG_BATCH_MAX; n++) {
		(*pp)->taken = 1;
		writes += (*pp)->group;
		pp = &(*pp)->next;
	}
	c->head = *pp;
	*pp = NULL;
	if (c->head == NULL)
		c->tail = &c->head;
	c->nqueued -= n;
	pg_conn_set(c, PGC_BATCH);
	p->jobs += (unsigned long long)n;
	p->batches++;
	/* The writes sent together: one group commit (a lone one commits alone). */
	metrics_db_batch((unsigned)writes);
	pthread_mutex_unlock(&p->mu);
	pg_batch_run(c, batch);
	pthread_mutex_lock(&p->mu);
	for (j = batch, n = 0; j != NULL; j = batch) {
		batch = j->next;
		j->next = NULL;
		j->done = 1;
		cvs[n++] = j->cv;
	}
	pg_conn_set(c, PGC_IDLE);
	pg_wake_next(c);
	if (p->waiters > 0)
		pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	for (i = 0; i < n; i++)
		pthread_cond_signal(cvs[i]);
	pthread_mutex_lock(&p->mu);
}

void
pg_pool_run(struct pg_pool *p, struct pg_job *job)
{
	const char *gave_up = NULL;
	struct pg_waiter *w;
	struct pg_conn *c = NULL;
	int waited = 0, busy;
	long long until = pg_wait_until(p, job->deadline_ms, &busy);

	job->res = NULL;
	job->code = DB_OK;
	job->msg[0] = '\0';
	job->next = NULL;
	job->taken = job->done = job->synced = job->seg = job->alone = job->replanned = 0;
	pthread_mutex_lock(&p->mu);
	if ((w = p->spare) != NULL)
		p->spare = w->next;
	else if ((w = malloc(sizeof(*w))) == NULL ||
	    pthread_cond_init(&w->cv, &p->ca) != 0) {
		pthread_mutex_unlock(&p->mu);
		free(w);
		pg_job_fail(job, DB_EINTERNAL, "pg: out of memory");
		return;
	}
	job->cv = &w->cv;
	while (gave_up == NULL && (c = pg_pick_job(p)) == NULL) {
		/* Every connection held alone (transactions): counted once a statement. */
		if (!waited++)
			metrics_db_wait();
		p->waiters++;
		if (pg_wait(&p->cv, p, until) == ETIMEDOUT)
			gave_up = busy ? "pg: no connection free within db_wait_ms" :
			    "pg: no connection free within the budget";
		p->waiters--;
	}
	if (c != NULL) {
		*c->tail = job;
		c->tail = &job->next;
		c->nqueued++;
	}
	while (c != NULL && !job->done) {
		if (c->state == PGC_IDLE) {
			pg_lead(p, c);
			continue;
		}
		if (pg_wait(&w->cv, p, job->taken ? 0 : until) == ETIMEDOUT &&
		    !job->taken && !job->done) {
			/* Still queued: take it out and give up. */
			pg_unqueue(c, job);
			gave_up = busy ? "pg: the statement waited past db_wait_ms" :
			    "pg: the statement waited past the budget";
			break;
		}
	}
	w->next = p->spare;
	p->spare = w;
	pthread_mutex_unlock(&p->mu);
	if (gave_up != NULL)
		pg_job_fail(job, pg_wait_code(busy), gave_up);
}

struct pg_conn *
pg_pool_acquire(struct pg_pool *p, long long deadline_ms, enum db_err *code, char *msg,
    size_t msglen)
{
	struct pg_conn *c = NULL, *mine = NULL;
	int i, waited = 0, busy;
	long long until = pg_wait_until(p, deadline_ms, &busy);

	pthread_mutex_lock(&p->mu);
	for (;;) {
		if (mine != NULL && mine->state == PGC_IDLE && mine->head == NULL) {
			c = mine;
			break;
		}
		if ((c = pg_pick_free(p)) != NULL)
			break;
		if (mine == NULL) {
			/* Reserve a connection busy with jobs: it drains, and is ours. */
			for (i = 0; i < p->nconns && mine == NULL; i++)
				if (p->conns[i].state != PGC_EXCL && !p->conns[i].reserved)
					mine = &p->conns[i];
			if (mine != NULL) {
				mine->reserved = 1;
				continue;
			}
		}
		if (!waited++)
			metrics_db_wait();
		p->waiters++;
		i = pg_wait(&p->cv, p, until);
		p->waiters--;
		if (i == ETIMEDOUT) {
			c = NULL;
			break;
		}
	}
	if (mine != NULL) {
		mine->reserved = 0;
		/* Jobs that found every connection held may queue on it again. */
		if (c != mine && p->waiters > 0)
			pthread_cond_broadcast(&p->cv);
	}
	if (c == NULL) {
		pthread_mutex_unlock(&p->mu);
		*code = pg_wait_code(busy);
		pg_msg(msg, msglen, "acquire", busy ? "no connection free within db_wait_ms" :
		    "no connection free within the budget");
		return NULL;
	}
	pg_conn_set(c, PGC_EXCL);
	pthread_mutex_unlock(&p->mu);
	if (pg_conn_check(c, p->shared, deadline_ms, code, msg, msglen) == -1) {
		pg_pool_release(p, c);
		return NULL;
	}
	return c;
}

void
pg_pool_release(struct pg_pool *p, struct pg_conn *c)
{
	pthread_mutex_lock(&p->mu);
	pg_conn_set(c, PGC_IDLE);
	if (p->waiters > 0)
		pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
}

int
pg_pool_ready(struct pg_pool *p, long long deadline_ms, enum db_err *code, char *msg,
    size_t msglen)
{
	struct pg_conn *c = &p->conns[0];
	int ret;

	if (p->shared)
		return 0;
	/* The caller's own connection: nobody else waits for it. */
	pthread_mutex_lock(&p->mu);
	pg_conn_set(c, PGC_EXCL);
	pthread_mutex_unlock(&p->mu);
	ret = pg_conn_check(c, 1, deadline_ms, code, msg, msglen);
	pg_pool_release(p, c);
	return ret;
}

PGconn *
pg_conn_pq(const struct pg_conn *c)
{
	return c->pq;
}

const char *
pg_conn_stmt(struct pg_conn *c, const char *sql, PGresult **failed)
{
	char evicted[16], dsql[48];
	struct pg_stmt *s;
	PGresult *res;
	long i;

	*failed = NULL;
	c->clock++;
	if ((i = pg_stmt_get(c, sql, db_hash(sql), evicted)) < 0)
		return NULL;
	if (evicted[0] != '\0' && PQtransactionStatus(c->pq) != PQTRANS_INERROR) {
		/* Best effort: a name left on the server costs a little memory until
		 * reconnect.  Cannot truncate: a name is at most 15 bytes. */
		(void)snprintf(dsql, sizeof(dsql), "DEALLOCATE %s", evicted);
		res = PQexec(c->pq, dsql);
		if (PQresultStatus(res) != PGRES_COMMAND_OK)
			log_debug("pg: %s: %s", dsql, PQerrorMessage(c->pq));
		PQclear(res);
	}
	s = &c->stmts[i];
	if (s->state != PGS_READY) {
		res = PQprepare(c->pq, s->name, sql, 0, NULL);
		if (PQresultStatus(res) != PGRES_COMMAND_OK) {
			*failed = res;
			return NULL;
		}
		PQclear(res);
		s->state = PGS_READY;
	}
	return s->name;
}

static void
pg_pool_free(struct pg_pool *p)
{
	struct pg_waiter *w;
	int i;

	if (p == NULL)
		return;
	if (p->batches > 0)
		log_debug("pg: %llu statements in %llu pipelined batches (%.2f a batch) on at "
		    "most %d connections", p->jobs, p->batches,
		    (double)p->jobs / (double)p->batches, p->nconns);
	for (i = 0; i < p->nconns; i++) {
		pg_stmts_drop(&p->conns[i]);
		free(p->conns[i].stmts);
		free(p->conns[i].ops);
		if (p->conns[i].pq != NULL)
			metrics_db_open(-1);
		PQfinish(p->conns[i].pq);
	}
	free(p->conns);
	while ((w = p->spare) != NULL) {
		p->spare = w->next;
		pthread_cond_destroy(&w->cv);
		free(w);
	}
	pthread_cond_destroy(&p->cv);
	pthread_condattr_destroy(&p->ca);
	pthread_mutex_destroy(&p->mu);
	free(p->conninfo);
	free(p);
}

/* A pool of n connections, none open yet.  NULL when out of memory. */
static struct pg_pool *
pg_pool_new(const char *conninfo, const struct db_opts *opts, int n)
{
	struct pg_pool *p;
	int i, ok = 0;

	if ((p = calloc(1, sizeof(*p))) == NULL)
		return NULL;
	if (pthread_condattr_init(&p->ca) != 0) {
		free(p);
		return NULL;
	}
	/* Deadlines are CLOCK_MONOTONIC (clock_now_ms()). */
	(void)pthread_condattr_setclock(&p->ca, CLOCK_MONOTONIC);
	(void)pthread_mutex_init(&p->mu, NULL);
	(void)pthread_cond_init(&p->cv, &p->ca);
	p->opts = *opts;
	p->conninfo = strdup(conninfo);
	p->conns = calloc((size_t)n, sizeof(*p->conns));
	if (p->conninfo != NULL && p->conns != NULL) {
		p->nconns = n;
		ok = 1;
		for (i = 0; i < n; i++) {
			p->conns[i].pool = p;
			p->conns[i].tail = &p->conns[i].head;
		}
	}
	if (!ok) {
		pg_pool_free(p);
		return NULL;
	}
	return p;
}

static int
pg_pool_same(const struct pg_pool *p, const char *conninfo, const struct db_opts *o)
{
	return strcmp(p->conninfo, conninfo) == 0 && p->nconns == o->pg_conns &&
	    p->opts.stmt_timeout_ms == o->stmt_timeout_ms &&
	    p->opts.pg_wait_ms == o->pg_wait_ms &&
	    p->opts.stmt_cache == o->stmt_cache;
}

int
pg_pool_open(struct pg_pool **out, const char *conninfo, const struct db_opts *opts,
    int lazy, enum db_err *code, char *err, size_t errlen)
{
	int shared = opts->pg_conns > 0;
	struct pg_pool *p = NULL;
	int ret = -1;

	*out = NULL;
	if (shared) {
		pthread_mutex_lock(&pg_pools_mu);
		for (p = pg_pools; p != NULL; p = p->next)
			if (pg_pool_same(p, conninfo, opts)) {
				p->refs++;
				*out = p;
				*code = DB_OK;
				pthread_mutex_unlock(&pg_pools_mu);
				return 0;
			}
	}
	*code = DB_EINTERNAL;
	if ((p = pg_pool_new(conninfo, opts, shared ? opts->pg_conns : 1)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		goto out;
	}
	/* One connection now: a server that is down, or refuses us, is reported at once. */
	if (!lazy && pg_conn_check(&p->conns[0], 0, 0, code, err, errlen) == -1)
		goto out;
	p->shared = shared;
	p->refs = 1;
	if (shared) {
		p->next = pg_pools;
		pg_pools = p;
	}
	*out = p;
	p = NULL;
	*code = DB_OK;
	ret = 0;
out:
	pg_pool_free(p);
	if (shared)
		pthread_mutex_unlock(&pg_pools_mu);
	return ret;
}

void
pg_pool_close(struct pg_pool *p)
{
	struct pg_pool **pp;

	if (p == NULL)
		return;
	if (!p->shared) {
		pg_pool_free(p);
		return;
	}
	pthread_mutex_lock(&pg_pools_mu);
	if (--p->refs == 0) {
		for (pp = &pg_pools; *pp != NULL; pp = &(*pp)->next)
			if (*pp == p) {
				*pp = p->next;
				break;
			}
	} else {
		p = NULL;
	}
	pthread_mutex_unlock(&pg_pools_mu);
	pg_pool_free(p);
}
