/*
 * db_pg.c: the PostgreSQL back end of db.h, over libpq.
 *
 * A struct db here is a handle, one per thread, on the connections the process shares
 * (db_pg_pool.c): the worker's threads hold pg_conns backends between them (db_conns,
 * SLUICE_DB_CONNS), not one each.  A statement outside a transaction is a job the pool
 * runs on a shared connection in libpq's pipeline mode, batched with the statements other
 * threads send meanwhile: the reads of a batch in one implicit transaction (one Sync, run
 * again one by one when one of them fails), the statements on the write route that meet
 * in a batch in one transaction that commits them together (db_pg_pool.c's group
 * commit).  A transaction (db_begin(), or db_exec() of anything, which may set up
 * session state) takes a connection for this handle alone until it ends: every statement
 * in between runs there with the plain blocking calls, so BEGIN ... SET LOCAL ... COMMIT
 * sees one session.
 * A session-level SET outside a transaction would leak into other requests: use SET LOCAL
 * inside one.  db_open() callers outside a worker (seeders, tools, tests) get a connection
 * of their own, as before (opts.pg_conns 0).
 *
 * Statements are prepared server side once per connection (PQprepare, or Parse in the
 * pipeline, names "s1", "s2", ... per connection, kept in the connection's LRU); their
 * parameter count comes from describing them once per handle.  Parameters travel in the
 * text format, each copied into a buffer of its statement, so the caller's text need not
 * be NUL-terminated.  A result is read whole and db_step() walks its rows.
 *
 * Losing the server: libpq notices only when it next reads the socket.  The statements
 * in flight on a connection found dead fail with DB_EUNAVAIL (503); the next thread to
 * take it opens a new session (and the connection forgets its statement names).  A
 * connection that died while idle is noticed before anything is sent on it, so a restart
 * costs at most the statements in flight, and none when the connections were idle.
 *
 * Reads and writes.  With opts.read_url (db_read=, a standby's URL) a handle has a second
 * set of shared connections, opened by the first read: once a handler has called
 * db_route(DB_ROUTE_READ), statements outside a transaction and read-only transactions go
 * there, while write transactions and db_exec() stay on the URL of db_open().  Each URL
 * may name several hosts (libpq's target_session_attrs picks among them), so a reconnect
 * after a failover finds the promoted standby (db_pg_conn.c).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "db_pg_pool.h"
#include "db.h"
#include "extern.h"
#include "log.h"
#include "str.h"

/* Enough for "%.17g" of any double and "%lld" of any int64. */
#define DB_PG_NUMLEN	32

struct db_pg {
	struct db base;		/* first: a struct db * is a struct db_pg * */
	struct pg_pool *pool;	/* a reference: the write URL's connections */
	struct pg_pool *rpool;	/* a reference: opts.read_url's, or NULL */
	struct pg_conn *held;	/* the connection held alone (a transaction), or NULL */
	struct pg_pool *hpool;	/* the pool held comes from */
	int held_ro;		/* held's transaction was begun READ ONLY */
};

struct db_pg_param {
	char *buf;		/* owned; NUL-terminated value when !isnull */
	size_t cap;
	int isnull;
};

struct db_pg_stmt {
	struct db_stmt base;	/* first, likewise */
	struct db_pg_param *params;	/* nparams of them */
	const char **values;		/* nparams, rebuilt at each execution */
	PGresult *res;
	int row;
	int nrows;
};

static const struct db_ops db_pg_ops;

static struct db_pg *
pg(struct db *db)
{
	return (struct db_pg *)db;
}

static struct db_pg_stmt *
pgst(struct db_stmt *st)
{
	return (struct db_pg_stmt *)st;
}

/* Maps a failure to a class: by the connection state first (a dead connection explains
 * any error), then by SQLSTATE. */
static enum db_err
db_pg_class(int dead, const PGresult *res)
{
	const char *ss, *m;

	if (dead)
		return DB_EUNAVAIL;
	ss = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	if (ss == NULL || strlen(ss) != 5)
		return DB_EINTERNAL;
	/* As PostgREST: unique and foreign key violations are conflicts (409); the other
	 * integrity violations (NOT NULL 23502, CHECK 23514, ...) are bad input (400). */
	if (strcmp(ss, "23505") == 0 || strcmp(ss, "23503") == 0)
		return DB_ECONSTRAINT;
	/* Also what a request asked that cannot be: an upsert's conflict target without a
	 * unique constraint (42P10), a value or statement past a limit (class 54). */
	if (strncmp(ss, "23", 2) == 0 || strncmp(ss, "22", 2) == 0 ||
	    strcmp(ss, "42P10") == 0 || strncmp(ss, "54", 2) == 0)
		return DB_EINPUT;
	/* A RAISE EXCEPTION of the schema's functions: PostgREST's 400 (db_raised()). */
	if (strcmp(ss, "P0001") == 0)
		return DB_EINPUT;
	/* Serialization failure, deadlock, lock_timeout: retryable; so is a prepared
	 * statement whose plan a schema change made stale inside a transaction (0A000,
	 * "cached plan must not change result type": db_pg_pool.c prepares it afresh next
	 * time, and runs it again at once outside a transaction). */
	if (strcmp(ss, "40001") == 0 || strcmp(ss, "40P01") == 0 ||
	    strcmp(ss, "55P03") == 0 || (strcmp(ss, "0A000") == 0 &&
	    (m = PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY)) != NULL &&
	    strstr(m, "cached plan must not change result type") != NULL))
		return DB_EBUSY;
	/* A column or table the statement names that the database no longer holds: the
	 * schema changed under a worker that read it before (until `sluiced ctl reload`),
	 * or a name the request gave; PostgREST's 400, with the database's words. */
	if (strcmp(ss, "42703") == 0 || strcmp(ss, "42P01") == 0)
		return DB_EINPUT;
	/* A text search query of the request's that to_tsquery() cannot read (an fts
	 * filter): PostgREST's 400 42601, not a statement of sluice's gone wrong. */
	if (strcmp(ss, "42601") == 0 && (m = PQresultErrorField(res,
	    PG_DIAG_MESSAGE_PRIMARY)) != NULL && strncmp(m, "syntax error in tsquery", 23) == 0)
		return DB_EINPUT;
	/* statement_timeout (the request's time budget) or a cancel. */
	if (strcmp(ss, "57014") == 0)
		return DB_ETIMEOUT;
	if (strncmp(ss, "08", 2) == 0 || strcmp(ss, "57P01") == 0 ||
	    strcmp(ss, "57P02") == 0 || strcmp(ss, "57P03") == 0 ||
	    strcmp(ss, "53300") == 0)
		return DB_EUNAVAIL;
	if (strcmp(ss, "53100") == 0)
		return DB_EFULL;
	if (strcmp(ss, "25006") == 0)
		return DB_EREADONLY;
	return DB_EINTERNAL;
}

/* Records the failure res (may be NULL) of what; conn (may be NULL: a shared connection,
 * whose loss the pool reports itself) explains a failure without a result. */
static void
db_pg_err(struct db_pg *p, PGconn *conn, const PGresult *res, const char *what)
{
	const char *msg = res != NULL ? PQresultErrorMessage(res) : "";
	const char *ss = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;
	int dead = conn != NULL && PQstatus(conn) == CONNECTION_BAD;

	if ((msg == NULL || *msg == '\0') && conn != NULL)
		msg = PQerrorMessage(conn);
	if (msg == NULL)
		msg = "";
	db_set_err(&p->base, db_pg_class(dead, res), "pg %s: %s%s%s", what,
	    ss != NULL ? ss : "", ss != NULL ? " " : "", msg);
	/* A write in a transaction its caller began read-only is the caller's mistake, not
	 * a server that refuses writes. */
	if (ss != NULL && strcmp(ss, "25006") == 0 && p->held != NULL && p->held_ro)
		p->base.errcode = DB_EINPUT;
	/* Data exceptions (class 22: bad syntax for the type, out of range, ...) all read
	 * 22P02, and limits (class 54) 54000, as SQLite can tell no finer (db_sqlite.c): the
	 * back ends answer alike. */
	if ((p->base.errcode == DB_ECONSTRAINT || p->base.errcode == DB_EINPUT ||
	    (ss != NULL && strcmp(ss, "42501") == 0)) && ss != NULL && strlen(ss) == 5)
		memcpy(p->base.sqlstate, strncmp(ss, "22", 2) == 0 ? "22P02" :
		    strncmp(ss, "54", 2) == 0 ? "54000" : ss, 6);
	if (p->base.errcode == DB_EINPUT && strcmp(p->base.sqlstate, "P0001") == 0)
		db_set_raised(&p->base, PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
		    PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL),
		    PQresultErrorField(res, PG_DIAG_MESSAGE_HINT));
	/* A failure the request caused: the server's own words, its exact SQLSTATE
	 * (db_words()); never its context nor position, which quote the statement. */
	else if ((p->base.errcode == DB_ECONSTRAINT || p->base.errcode == DB_EINPUT) &&
	    p->base.sqlstate[0] != '\0')
		db_set_words(&p->base, ss, PQresultErrorField(res, PG_DIAG_MESSAGE_PRIMARY),
		    PQresultErrorField(res, PG_DIAG_MESSAGE_DETAIL),
		    PQresultErrorField(res, PG_DIAG_MESSAGE_HINT));
}

int
db_pg_open(struct db **out, const char *conninfo, const struct db_opts *opts,
    enum db_err *code, char *err, size_t errlen)
{
	PQconninfoOption *parsed;
	struct db_pg *p = NULL;
	char *perr = NULL;
	int ret = -1;

	*code = DB_EINTERNAL;
	if (pq_load(err, errlen) == -1)
		goto out;
	*code = DB_EINPUT;
	/* Parse first, so that a malformed string is told apart from a server that is
	 * down.  libpq's messages name options, never their values. */
	if ((parsed = PQconninfoParse(conninfo, &perr)) == NULL) {
		(void)snprintf(err, errlen, "bad PostgreSQL conninfo: %s",
		    perr != NULL ? perr : "out of memory");
		PQfreemem(perr);
		goto out;
	}
	PQconninfoFree(parsed);

	*code = DB_EINTERNAL;
	if ((p = calloc(1, sizeof(*p))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		goto out;
	}
	p->base.ops = &db_pg_ops;
	p->base.backend = DB_PG;
	p->base.opts = *opts;
	if (pg_pool_open(&p->pool, conninfo, opts, 0, code, err, errlen) == -1)
		goto out;
	/* The read URL's connections are opened by the first read, within its budget: a
	 * standby that is down at start-up does not keep the writes from being served. */
	if (opts->read_url != NULL && strcmp(opts->read_url, conninfo) != 0 &&
	    pg_pool_open(&p->rpool, opts->read_url, opts, 1, code, err, errlen) == -1)
		goto out;
	*out = &p->base;
	p = NULL;
	*code = DB_OK;
	ret = 0;
out:
	if (p != NULL)
		pg_pool_close(p->pool);
	free(p);
	if (ret == -1 && errlen > 0) {
		size_t n = strlen(err);

		while (n > 0 && err[n - 1] == '\n')
			err[--n] = '\0';
	}
	return ret;
}

/* 1 when the connection the handle holds is inside a transaction (or failed in one and
 * awaits ROLLBACK). */
static int
db_pg_in_txn(struct db *db)
{
	struct db_pg *p = pg(db);

	if (p->held == NULL)
		return 0;
	switch (PQtransactionStatus(pg_conn_pq(p->held))) {
	case PQTRANS_INTRANS:
	case PQTRANS_INERROR:
	case PQTRANS_ACTIVE:
		return 1;
	default:
		/* Idle, or unknown because the connection is gone: nothing to end. */
		return 0;
	}
}

/* Gives the held connection back once no transaction is open on it any more. */
static void
db_pg_settle(struct db_pg *p)
{
	if (p->held != NULL && !db_pg_in_txn(&p->base)) {
		pg_pool_release(p->hpool, p->held);
		p->held = NULL;
		p->held_ro = 0;
	}
}

/* The pool for work that only reads (read 1) or may write, on the route db_route() set. */
static struct pg_pool *
db_pg_pool(struct db_pg *p, int read)
{
	return read && p->rpool != NULL && p->base.route == DB_ROUTE_READ ? p->rpool :
	    p->pool;
}

/* Makes sure the handle holds a connection of its own, from the pool of read (see
 * db_pg_pool()) when it holds none.  0, or -1 with the error set. */
static int
db_pg_hold(struct db_pg *p, int read)
{
	char msg[PG_JOB_MSG];
	enum db_err code;

	if (p->held != NULL)
		return 0;
	p->hpool = db_pg_pool(p, read);
	if ((p->held = pg_pool_acquire(p->hpool, p->base.deadline_ms, &code, msg,
	    sizeof(msg))) == NULL) {
		db_set_err(&p->base, code, "%s", msg);
		return -1;
	}
	return 0;
}

static void
db_pg_close(struct db *db)
{
	struct db_pg *p = pg(db);
	PGresult *res;

	if (p->held != NULL && db_pg_in_txn(db)) {
		res = PQexec(pg_conn_pq(p->held), "ROLLBACK");
		PQclear(res);
	}
	if (p->held != NULL)
		pg_pool_release(p->hpool, p->held);
	pg_pool_close(p->rpool);
	pg_pool_close(p->pool);
	free(p);
}

/* A connection this handle still holds without a transaction goes back; a connection of
 * the handle's own is checked now, shared ones by whoever takes them next. */
static int
db_pg_ready(struct db *db)
{
	struct db_pg *p = pg(db);
	char msg[PG_JOB_MSG];
	enum db_err code;

	db_pg_settle(p);
	if (p->held == NULL && pg_pool_ready(p->pool, db->deadline_ms, &code, msg,
	    sizeof(msg)) == -1) {
		db_set_err(db, code, "%s", msg);
		return -1;
	}
	return 0;
}

/* A standby, or a server whose sessions are read-only by default, refuses writes. */
static int
db_pg_state(struct db *db, struct db_state *out)
{
	struct db_stmt *st;

	if ((st = db_prepare(db, "SELECT NOT pg_is_in_recovery() AND "
	    "current_setting('default_transaction_read_only') = 'off'")) == NULL)
		return -1;
	if (db_step(st) != DB_ROW) {
		db_reset(st);
		return -1;
	}
	out->writable = db_column_int(st, 0) != 0;
	db_reset(st);
	return 0;
}

/* Runs sql on a connection the handle holds (taken now when it holds none, from the
 * pool of read: what sql does to the session stays with this handle until the transaction
 * it may open ends). */
static int
db_pg_exec_on(struct db *db, const char *sql, int read)
{
	struct db_pg *p = pg(db);
	PGresult *res;
	int ret = -1;

	if (db_pg_hold(p, read) == -1)
		return -1;
	res = PQexec(pg_conn_pq(p->held), sql);
	switch (PQresultStatus(res)) {
	case PGRES_COMMAND_OK:
	case PGRES_TUPLES_OK:
	case PGRES_EMPTY_QUERY:
		ret = 0;
		break;
	default:
		db_pg_err(p, pg_conn_pq(p->held), res, "exec");
		break;
	}
	PQclear(res);
	db_pg_settle(p);
	return ret;
}

/* db_exec() may write, or set up the session: always on the write URL. */
static int
db_pg_exec(struct db *db, const char *sql)
{
	return db_pg_exec_on(db, sql, 0);
}

static int
db_pg_begin(struct db *db, enum db_txn kind)
{
	static const char *const isos[] = {
		[DB_ISO_DEFAULT] = "",
		[DB_ISO_READ_COMMITTED] = " ISOLATION LEVEL READ COMMITTED",
		[DB_ISO_REPEATABLE_READ] = " ISOLATION LEVEL REPEATABLE READ",
		[DB_ISO_SERIALIZABLE] = " ISOLATION LEVEL SERIALIZABLE",
	};
	enum db_isolation iso = db->opts.isolation;
	char sql[96];
	int n;

	if ((unsigned)iso >= sizeof(isos) / sizeof(isos[0]))
		iso = DB_ISO_DEFAULT;
	n = snprintf(sql, sizeof(sql), "BEGIN%s %s", isos[iso],
	    kind == DB_TXN_WRITE ? "READ WRITE" : "READ ONLY");
	if (n < 0 || (size_t)n >= sizeof(sql)) {
		db_set_err(db, DB_EINTERNAL, "BEGIN statement too long");
		return -1;
	}
	/* A read-only transaction may run on the read URL (a standby). */
	if (db_pg_exec_on(db, sql, kind == DB_TXN_READ) == -1)
		return -1;
	pg(db)->held_ro = kind == DB_TXN_READ;
	return 0;
}

static int
db_pg_commit(struct db *db)
{
	struct db_pg *p = pg(db);
	enum db_err was = db->errcode;
	PGresult *res;
	PGconn *conn;
	int ret = -1;

	/* db.c calls this only inside a transaction, so a connection is held. */
	conn = pg_conn_pq(p->held);
	/* COMMIT of a failed transaction "succeeds" as a ROLLBACK: report it as the
	 * failure it is, with the class of the error that aborted it. */
	if (PQtransactionStatus(conn) == PQTRANS_INERROR) {
		(void)db_pg_exec(db, "ROLLBACK");
		db_set_err(db, was != DB_OK ? was : DB_EINTERNAL,
		    "pg commit: the transaction had failed and was rolled back");
		return -1;
	}
	res = PQexec(conn, "COMMIT");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		db_pg_err(p, conn, res, "commit");
	else if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
		db_set_err(db, DB_EINTERNAL, "pg commit: server answered %s", PQcmdStatus(res));
	else
		ret = 0;
	PQclear(res);
	db_pg_settle(p);
	return ret;
}

static void
db_pg_stmt_release(struct db_pg_stmt *st)
{
	int i;

	if (st == NULL)
		return;
	PQclear(st->res);
	if (st->params != NULL)
		for (i = 0; i < st->base.nparams; i++)
			free(st->params[i].buf);
	free(st->params);
	free(st->values);
	free(st);
}

/*
 * Runs sql (describe: only describes it) where the handle's statements go: on the
 * connection it holds, else as a job of the pool.  Returns the result (caller PQclears)
 * when the server answered success, else NULL with the error set.
 */
static PGresult *
db_pg_run(struct db_pg *p, const char *sql, int nparams, const char *const *values,
    int describe, const char *what)
{
	struct pg_job job;
	PGresult *res, *failed;
	const char *name;
	PGconn *conn;

	/* The request's budget is spent: no statement more (the one running when it ran
	 * out was cancelled, pg_conn_result()). */
	if (!describe && p->base.deadline_ms > 0 && clock_now_ms() >= p->base.deadline_ms) {
		db_set_err(&p->base, DB_ETIMEOUT, "pg: the request's time budget is spent");
		db_pg_settle(p);
		return NULL;
	}
	if (p->held != NULL) {
		conn = pg_conn_pq(p->held);
		if ((name = pg_conn_stmt(p->held, sql, &failed)) == NULL) {
			db_pg_err(p, conn, failed, "prepare");
			PQclear(failed);
			db_pg_settle(p);
			return NULL;
		}
		if (describe)
			res = PQdescribePrepared(conn, name);
		else
			(void)pg_conn_exec(p->held, name, nparams, values, p->base.deadline_ms,
			    &res);
	} else {
		memset(&job, 0, sizeof(job));
		job.sql = sql;
		job.nparams = nparams;
		job.values = values;
		job.describe = describe;
		job.deadline_ms = p->base.deadline_ms;
		/* A statement on the write route may write: it may share its commit. */
		job.group = !describe && p->base.route == DB_ROUTE_WRITE;
		conn = NULL;
		pg_pool_run(db_pg_pool(p, 1), &job);
		if (job.code != DB_OK) {
			db_set_err(&p->base, job.code, "%s", job.msg);
			return NULL;
		}
		res = job.res;
	}
	switch (PQresultStatus(res)) {
	case PGRES_TUPLES_OK:
	case PGRES_COMMAND_OK:
		return res;
	default:
		db_pg_err(p, conn, res, what);
		PQclear(res);
		db_pg_settle(p);
		return NULL;
	}
}

static struct db_stmt *
db_pg_stmt_new(struct db *db, const char *sql)
{
	struct db_pg *p = pg(db);
	struct db_pg_stmt *st;
	PGresult *res;
	int n;

	if ((st = calloc(1, sizeof(*st))) == NULL) {
		db_set_err(db, DB_EINTERNAL, "out of memory");
		goto fail;
	}
	st->base.db = db;
	/* The server knows how many $N the statement takes; counting them here would mean
	 * parsing dollar quotes and E'' strings.  It prepares the statement on the way, on
	 * the connection that describes it. */
	if ((res = db_pg_run(p, sql, 0, NULL, 1, "describe")) == NULL)
		goto fail;
	st->base.nparams = PQnparams(res);
	PQclear(res);
	if (st->base.nparams > 0) {
		st->params = calloc((size_t)st->base.nparams, sizeof(*st->params));
		st->values = calloc((size_t)st->base.nparams, sizeof(*st->values));
		if (st->params == NULL || st->values == NULL) {
			db_set_err(db, DB_EINTERNAL, "out of memory");
			goto fail;
		}
		for (n = 0; n < st->base.nparams; n++)
			st->params[n].isnull = 1;
	}
	return &st->base;
fail:
	db_pg_stmt_release(st);
	return NULL;
}

/* The server side of a statement belongs to the connections' LRUs, not to the handle. */
static void
db_pg_stmt_free(struct db_stmt *st, int server_side)
{
	(void)server_side;
	db_pg_stmt_release(pgst(st));
}

static void
db_pg_stmt_reset(struct db_stmt *st)
{
	struct db_pg_stmt *s = pgst(st);

	PQclear(s->res);
	s->res = NULL;
	s->row = s->nrows = 0;
}

static void
db_pg_stmt_clear(struct db_stmt *st)
{
	struct db_pg_stmt *s = pgst(st);
	int i;

	for (i = 0; i < st->nparams; i++)
		s->params[i].isnull = 1;
}

/* Makes parameter idx hold len bytes plus a NUL.  Returns the buffer or NULL. */
static char *
db_pg_param_buf(struct db_stmt *st, int idx, size_t len)
{
	struct db_pg_param *prm = &pgst(st)->params[idx - 1];
	size_t cap;
	char *n;

	if (prm->cap < len + 1) {
		cap = len + 1 < DB_PG_NUMLEN ? DB_PG_NUMLEN : len + 1;
		if ((n = realloc(prm->buf, cap)) == NULL) {
			db_set_err(st->db, DB_EINTERNAL, "out of memory binding $%d", idx);
			return NULL;
		}
		prm->buf = n;
		prm->cap = cap;
	}
	prm->isnull = 0;
	return prm->buf;
}

static int
db_pg_bind_text(struct db_stmt *st, int idx, const char *s, size_t len)
{
	char *b;

	if ((b = db_pg_param_buf(st, idx, len)) == NULL)
		return -1;
	memcpy(b, s, len);
	b[len] = '\0';
	return 0;
}

static int
db_pg_bind_int(struct db_stmt *st, int idx, int64_t v)
{
	char *b;

	if ((b = db_pg_param_buf(st, idx, DB_PG_NUMLEN)) == NULL)
		return -1;
	/* Cannot truncate: DB_PG_NUMLEN holds any int64. */
	(void)snprintf(b, DB_PG_NUMLEN, "%lld", (long long)v);
	return 0;
}

static int
db_pg_bind_double(struct db_stmt *st, int idx, double v)
{
	char *b;
	int n;

	if ((b = db_pg_param_buf(st, idx, DB_PG_NUMLEN)) == NULL)
		return -1;
	/* 17 significant digits read back as the same double. */
	n = snprintf(b, DB_PG_NUMLEN, "%.17g", v);
	if (n < 0 || n >= DB_PG_NUMLEN) {
		db_set_err(st->db, DB_EINPUT, "cannot format double for $%d", idx);
		return -1;
	}
	return 0;
}

static int
db_pg_bind_null(struct db_stmt *st, int idx)
{
	pgst(st)->params[idx - 1].isnull = 1;
	return 0;
}

static int
db_pg_step(struct db_stmt *st)
{
	struct db_pg_stmt *s = pgst(st);
	struct db_pg *p = pg(st->db);
	const char *ct;
	int64_t n;
	int i;

	if (st->state == DB_ST_IDLE) {
		for (i = 0; i < st->nparams; i++)
			s->values[i] = s->params[i].isnull ? NULL : s->params[i].buf;
		PQclear(s->res);
		s->res = db_pg_run(p, st->sql, st->nparams, s->values, 0, "step");
		if (s->res == NULL) {
			db_pg_stmt_reset(st);
			st->state = DB_ST_IDLE;
			return DB_ERROR;
		}
		s->nrows = PQntuples(s->res);
		s->row = -1;
		/* Empty for statements that change nothing by nature (SELECT, DDL). */
		ct = PQcmdTuples(s->res);
		st->changes = str_to_int(ct, strlen(ct), 0, INT64_MAX, &n) == 0 ? n : 0;
	}
	if (++s->row < s->nrows) {
		st->state = DB_ST_ROW;
		return DB_ROW;
	}
	db_pg_stmt_reset(st);
	st->state = DB_ST_DONE;
	return DB_DONE;
}

static int
db_pg_column_count(struct db_stmt *st)
{
	PGresult *res = pgst(st)->res;

	return res == NULL ? 0 : PQnfields(res);
}

static const char *
db_pg_column_name(struct db_stmt *st, int col)
{
	return PQfname(pgst(st)->res, col);
}

static const char *
db_pg_column_text(struct db_stmt *st, int col, size_t *len)
{
	struct db_pg_stmt *s = pgst(st);
	const char *v = PQgetvalue(s->res, s->row, col);

	/* libpq gives a NULL as "": only an empty value needs the second question. */
	if (v == NULL || (v[0] == '\0' && PQgetisnull(s->res, s->row, col))) {
		if (len != NULL)
			*len = 0;
		return NULL;
	}
	if (len != NULL)
		*len = (size_t)PQgetlength(s->res, s->row, col);
	return v;
}

static int64_t
db_pg_column_int(struct db_stmt *st, int col)
{
	struct db_pg_stmt *s = pgst(st);
	const char *v;
	int64_t n;

	if (PQgetisnull(s->res, s->row, col))
		return 0;
	v = PQgetvalue(s->res, s->row, col);
	/* Booleans come as t/f in the text format; SQLite has them as 1/0 already. */
	if (strcmp(v, "t") == 0)
		return 1;
	if (strcmp(v, "f") == 0)
		return 0;
	if (str_to_int(v, strlen(v), INT64_MIN, INT64_MAX, &n) == -1)
		return 0;
	return n;
}

/* The text format's real; anything unparsable reads as 0, like a NULL. */
static double
db_pg_column_double(struct db_stmt *st, int col)
{
	struct db_pg_stmt *s = pgst(st);
	const char *v;
	char *end;
	double d;

	if (PQgetisnull(s->res, s->row, col))
		return 0;
	v = PQgetvalue(s->res, s->row, col);
	errno = 0;
	d = strtod(v, &end);
	if (errno != 0 || end == v || *end != '\0')
		return 0;
	return d;
}

static int
db_pg_column_isnull(struct db_stmt *st, int col)
{
	struct db_pg_stmt *s = pgst(st);

	return PQgetisnull(s->res, s->row, col);
}

static const struct db_ops db_pg_ops = {
	.close = db_pg_close,
	.ready = db_pg_ready,
	.tables_sql = "SELECT count(*) FROM information_schema.tables WHERE table_schema "
	    "NOT IN ('pg_catalog', 'information_schema')",
	.state = db_pg_state,
	.exec = db_pg_exec,
	.begin = db_pg_begin,
	.commit = db_pg_commit,
	.in_txn = db_pg_in_txn,
	.stmt_new = db_pg_stmt_new,
	.stmt_free = db_pg_stmt_free,
	.stmt_reset = db_pg_stmt_reset,
	.stmt_clear = db_pg_stmt_clear,
	.bind_text = db_pg_bind_text,
	.bind_int = db_pg_bind_int,
	.bind_double = db_pg_bind_double,
	.bind_null = db_pg_bind_null,
	.step = db_pg_step,
	.column_count = db_pg_column_count,
	.column_name = db_pg_column_name,
	.column_text = db_pg_column_text,
	.column_int = db_pg_column_int,
	.column_double = db_pg_column_double,
	.column_isnull = db_pg_column_isnull,
};
