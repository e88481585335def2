/*
 * db_pg.c: the PostgreSQL back end of db.h, over libpq.
 *
 * One blocking connection per thread, opened with the URL or conninfo string as given plus
 * client_encoding=UTF8 (responses are JSON) and a fallback application name.  Statements are
 * prepared server side once (PQprepare, names "s1", "s2", ... per connection) and run with
 * PQexecPrepared; parameters travel in the text format, each copied into a buffer of its
 * statement, so the caller's text need not be NUL-terminated.  A result is read whole and
 * db_step() walks its rows.
 *
 * Losing the server: libpq notices only when it next reads the socket.  The statement that
 * finds the connection dead fails with DB_EUNAVAIL; db_ready() at the start of the next
 * request looks at the socket without blocking, resets a dead connection and drops the
 * statement cache (the new server session knows none of our names).  So a restart costs
 * at most one failed request per connection, and none when the restart happened while the
 * connection was idle.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Debian keeps libpq-fe.h in /usr/include/postgresql, off the default path; the Makefile
 * adds it, and the fallback keeps a build without that -I working. */
#if defined(__has_include)
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif
#else
#include <libpq-fe.h>
#endif

#include "db.h"
#include "extern.h"
#include "log.h"
#include "str.h"

/* Enough for "%.17g" of any double and "%lld" of any int64. */
#define DB_PG_NUMLEN	32

struct db_pg {
	struct db base;		/* first: a struct db * is a struct db_pg * */
	PGconn *conn;
	unsigned next_name;
};

struct db_pg_param {
	char *buf;		/* owned; NUL-terminated value when !isnull */
	size_t cap;
	int isnull;
};

struct db_pg_stmt {
	struct db_stmt base;	/* first, likewise */
	char name[16];
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
db_pg_class(PGconn *conn, const PGresult *res)
{
	const char *ss;

	if (conn == NULL || PQstatus(conn) == CONNECTION_BAD)
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
	/* Serialization failure, deadlock, lock_timeout: retryable. */
	if (strcmp(ss, "40001") == 0 || strcmp(ss, "40P01") == 0 ||
	    strcmp(ss, "55P03") == 0)
		return DB_EBUSY;
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

static void
db_pg_err(struct db_pg *p, const PGresult *res, const char *what)
{
	const char *msg = res != NULL ? PQresultErrorMessage(res) : "";
	const char *ss = res != NULL ? PQresultErrorField(res, PG_DIAG_SQLSTATE) : NULL;

	if (msg == NULL || *msg == '\0')
		msg = PQerrorMessage(p->conn);
	db_set_err(&p->base, db_pg_class(p->conn, res), "pg %s: %s%s%s", what,
	    ss != NULL ? ss : "", ss != NULL ? " " : "", msg);
	/* Data exceptions (class 22: bad syntax for the type, out of range, ...) all read
	 * 22P02, and limits (class 54) 54000, as SQLite can tell no finer (db_sqlite.c): the
	 * back ends answer alike. */
	if ((p->base.errcode == DB_ECONSTRAINT || p->base.errcode == DB_EINPUT) && ss != NULL &&
	    strlen(ss) == 5)
		memcpy(p->base.sqlstate, strncmp(ss, "22", 2) == 0 ? "22P02" :
		    strncmp(ss, "54", 2) == 0 ? "54000" : ss, 6);
}

/* Notices (and the FATAL a dying backend sends to an idle connection) go to the log, not
 * to libpq's default of stderr. */
static void
db_pg_notice(void *arg, const char *msg)
{
	size_t n = strlen(msg);

	(void)arg;
	while (n > 0 && msg[n - 1] == '\n')
		n--;
	log_debug("pg: %.*s", (int)n, msg);
}

/*
 * Settings of a new session: the time budget (opts.stmt_timeout_ms) as statement_timeout,
 * so that the server cancels a statement that runs past it and the worker is answered at
 * once (SQLSTATE 57014, DB_ETIMEOUT).  0 or -1 with the error set.
 */
static int
db_pg_session(struct db_pg *p)
{
	char sql[64];
	PGresult *res;
	int n, ret = -1;

	n = snprintf(sql, sizeof(sql), "SET statement_timeout = %d", p->base.opts.stmt_timeout_ms);
	if (n < 0 || (size_t)n >= sizeof(sql))
		return -1;
	res = PQexec(p->conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		db_pg_err(p, res, "set statement_timeout");
	else
		ret = 0;
	PQclear(res);
	return ret;
}

int
db_pg_open(struct db **out, const char *conninfo, const struct db_opts *opts,
    enum db_err *code, char *err, size_t errlen)
{
	/* client_encoding comes after dbname so that it wins over the expanded string. */
	const char *const keys[] = { "dbname", "client_encoding",
	    "fallback_application_name", NULL };
	const char *vals[] = { conninfo, "UTF8", "sluice", NULL };
	PQconninfoOption *parsed;
	struct db_pg *p = NULL;
	char *perr = NULL;
	int ret = -1;

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
	if ((p->conn = PQconnectdbParams(keys, vals, 1)) == NULL) {
		(void)snprintf(err, errlen, "pg connect: out of memory");
		goto out;
	}
	if (PQstatus(p->conn) != CONNECTION_OK) {
		*code = DB_EUNAVAIL;
		(void)snprintf(err, errlen, "pg connect: %s", PQerrorMessage(p->conn));
		goto out;
	}
	PQsetNoticeProcessor(p->conn, db_pg_notice, p);
	if (db_pg_session(p) == -1) {
		(void)snprintf(err, errlen, "%s", p->base.errmsg);
		goto out;
	}
	*out = &p->base;
	p = NULL;
	*code = DB_OK;
	ret = 0;
out:
	if (p != NULL) {
		PQfinish(p->conn);
		free(p);
	}
	if (ret == -1 && errlen > 0) {
		size_t n = strlen(err);

		while (n > 0 && err[n - 1] == '\n')
			err[--n] = '\0';
	}
	return ret;
}

static void
db_pg_close(struct db *db)
{
	PQfinish(pg(db)->conn);
	free(db);
}

static int
db_pg_ready(struct db *db)
{
	struct db_pg *p = pg(db);

	/* A server that went away while we were idle has left an error message and an EOF
	 * on the socket; reading them (libpq's socket never blocks here) marks the
	 * connection bad now, before a request is spent finding out.  The second read is
	 * for the EOF after the message. */
	if (PQstatus(p->conn) == CONNECTION_OK &&
	    PQtransactionStatus(p->conn) == PQTRANS_IDLE) {
		if (PQconsumeInput(p->conn) == 1)
			(void)PQconsumeInput(p->conn);
	}
	if (PQstatus(p->conn) == CONNECTION_OK)
		return 0;

	/* The new session will not know our statement names. */
	db_cache_drop(db, 0);
	log_warn("pg: connection lost; reconnecting");
	PQreset(p->conn);
	if (PQstatus(p->conn) != CONNECTION_OK) {
		db_set_err(db, DB_EUNAVAIL, "pg reconnect: %s", PQerrorMessage(p->conn));
		return -1;
	}
	if (db_pg_session(p) == -1)
		return -1;
	log_info("pg: reconnected");
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

static int
db_pg_exec(struct db *db, const char *sql)
{
	struct db_pg *p = pg(db);
	PGresult *res;
	int ret = -1;

	res = PQexec(p->conn, sql);
	switch (PQresultStatus(res)) {
	case PGRES_COMMAND_OK:
	case PGRES_TUPLES_OK:
	case PGRES_EMPTY_QUERY:
		ret = 0;
		break;
	default:
		db_pg_err(p, res, "exec");
		break;
	}
	PQclear(res);
	return ret;
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
	return db_pg_exec(db, sql);
}

static int
db_pg_in_txn(struct db *db)
{
	switch (PQtransactionStatus(pg(db)->conn)) {
	case PQTRANS_INTRANS:
	case PQTRANS_INERROR:
	case PQTRANS_ACTIVE:
		return 1;
	default:
		/* Idle, or unknown because the connection is gone: nothing to end. */
		return 0;
	}
}

static int
db_pg_commit(struct db *db)
{
	struct db_pg *p = pg(db);
	enum db_err was = db->errcode;
	PGresult *res;
	int ret = -1;

	/* COMMIT of a failed transaction "succeeds" as a ROLLBACK: report it as the
	 * failure it is, with the class of the error that aborted it. */
	if (PQtransactionStatus(p->conn) == PQTRANS_INERROR) {
		(void)db_pg_exec(db, "ROLLBACK");
		db_set_err(db, was != DB_OK ? was : DB_EINTERNAL,
		    "pg commit: the transaction had failed and was rolled back");
		return -1;
	}
	res = PQexec(p->conn, "COMMIT");
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		db_pg_err(p, res, "commit");
	else if (strcmp(PQcmdStatus(res), "COMMIT") != 0)
		db_set_err(db, DB_EINTERNAL, "pg commit: server answered %s", PQcmdStatus(res));
	else
		ret = 0;
	PQclear(res);
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

/* Best effort: a name left on the server costs a little memory until reconnect. */
static void
db_pg_deallocate(struct db_pg *p, const char *name)
{
	PGresult *res;
	char sql[48];
	int n;

	if (PQstatus(p->conn) != CONNECTION_OK ||
	    PQtransactionStatus(p->conn) == PQTRANS_INERROR)
		return;
	n = snprintf(sql, sizeof(sql), "DEALLOCATE %s", name);
	if (n < 0 || (size_t)n >= sizeof(sql))
		return;
	res = PQexec(p->conn, sql);
	if (PQresultStatus(res) != PGRES_COMMAND_OK)
		log_debug("pg: %s: %s", sql, PQerrorMessage(p->conn));
	PQclear(res);
}

static struct db_stmt *
db_pg_stmt_new(struct db *db, const char *sql)
{
	struct db_pg *p = pg(db);
	struct db_pg_stmt *st;
	PGresult *res = NULL;
	int n, prepared = 0;

	if ((st = calloc(1, sizeof(*st))) == NULL) {
		db_set_err(db, DB_EINTERNAL, "out of memory");
		goto fail;
	}
	st->base.db = db;
	n = snprintf(st->name, sizeof(st->name), "s%u", ++p->next_name);
	if (n < 0 || (size_t)n >= sizeof(st->name)) {
		db_set_err(db, DB_EINTERNAL, "statement name too long");
		goto fail;
	}
	res = PQprepare(p->conn, st->name, sql, 0, NULL);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		db_pg_err(p, res, "prepare");
		goto fail;
	}
	prepared = 1;
	PQclear(res);
	/* The server knows how many $N the statement takes; counting them here would mean
	 * parsing dollar quotes and E'' strings.  One round trip, once per statement. */
	res = PQdescribePrepared(p->conn, st->name);
	if (PQresultStatus(res) != PGRES_COMMAND_OK) {
		db_pg_err(p, res, "describe");
		goto fail;
	}
	st->base.nparams = PQnparams(res);
	PQclear(res);
	res = NULL;
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
	PQclear(res);
	if (prepared)
		db_pg_deallocate(p, st->name);
	db_pg_stmt_release(st);
	return NULL;
}

static void
db_pg_stmt_free(struct db_stmt *st, int server_side)
{
	if (server_side)
		db_pg_deallocate(pg(st->db), pgst(st)->name);
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
		s->res = PQexecPrepared(p->conn, s->name, st->nparams, s->values, NULL, NULL, 0);
		switch (PQresultStatus(s->res)) {
		case PGRES_TUPLES_OK:
		case PGRES_COMMAND_OK:
			break;
		default:
			db_pg_err(p, s->res, "step");
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

	if (PQgetisnull(s->res, s->row, col)) {
		if (len != NULL)
			*len = 0;
		return NULL;
	}
	if (len != NULL)
		*len = (size_t)PQgetlength(s->res, s->row, col);
	return PQgetvalue(s->res, s->row, col);
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
