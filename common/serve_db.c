/*
 * serve_db.c: the database side of the serve loop, in its own file so that only endpoints
 * that name &serve_db link the database code (and libpq, libsqlite3): the health endpoint
 * stays a few kilobytes and a megabyte of RSS.
 */
#include <stdio.h>
#include <string.h>

#include "db.h"
#include "extern.h"
#include "serve_ops.h"
#include "log.h"
#include "serve.h"

/*
 * A PostgreSQL server that is down (or still starting) is not a reason to stop: the
 * worker starts, answers 503 and connects as soon as the server is back.  Everything else
 * (a bad URL, a SQLite file that cannot be opened) is a configuration error, and a worker
 * that exits at once lets the supervisor report the pool as failed.
 */
static enum serve_db_open
serve_db_open(struct db **out, const char *url)
{
	struct db_opts opts;
	enum db_err code = DB_OK;
	enum db_backend be;
	const char *path;
	char err[256];

	if (db_opts_from_env(&opts) < 0) {
		log_err("bad database setting in the environment");
		return SERVE_DB_FATAL;
	}
	if (db_open_code(out, url, &opts, &code, err, sizeof(err)) == 0)
		return SERVE_DB_OPEN;
	/* A server may come back; a missing SQLite file or directory will not. */
	if (code == DB_EUNAVAIL && db_url_parse(url, &be, &path) == 0 && be == DB_PG) {
		log_warn("the database is unavailable (%s); retrying per request", err);
		return SERVE_DB_LATER;
	}
	log_err("cannot open the database: %s", err);
	return SERVE_DB_FATAL;
}

const struct serve_db_ops serve_db = {
	.open = serve_db_open,
	.close = db_close,
	.ready = db_ready,
	.rollback = db_rollback,
	.error = serve_db_error,
	.restart_wanted = db_restart_wanted,
	.blocking_hook = db_blocking_hook,
};

int
serve_db_error(struct resp *rs, struct db *db)
{
	return serve_db_error_words(rs, db, 0);
}

int
serve_db_error_words(struct resp *rs, struct db *db, int words)
{
	enum db_err e = db_errcode(db);
	const struct db_words *r = db_raised(db), *w = db_words(db);

	/* 42501 (insufficient privilege) is the database refusing a role what its grants or
	 * policies do not allow: an answer about who asks (401/403 where access control
	 * switches roles), not a fault of the server, so it is no error line. */
	if (strcmp(db_sqlstate(db), "42501") == 0)
		log_info("database: %s", db_errmsg(db));
	else if (db_err_status(e) >= 500)
		log_err("database: %s", db_errmsg(db));
	else
		log_debug("database: %s", db_errmsg(db));
	/* What the schema raised is written for the client: PostgREST's answer, its text. */
	if (r != NULL)
		return resp_error(rs, db_err_status(e), "P0001", r->message[0] != '\0' ?
		    r->message : "the database refused the request", r->detail[0] != '\0' ?
		    r->detail : NULL, r->hint[0] != '\0' ? r->hint : NULL);
	/* The database's own words for what the request did wrong, as PostgREST passes
	 * them on; not past a limit, which is mostly sluice's own response cap. */
	if (words && w != NULL && (e == DB_ECONSTRAINT || e == DB_EINPUT) &&
	    strncmp(w->state, "54", 2) != 0)
		return resp_error(rs, db_err_status(e), w->state, w->message,
		    w->detail[0] != '\0' ? w->detail : NULL, w->hint[0] != '\0' ? w->hint : NULL);
	return serve_db_error_sqlstate(rs, e, db_sqlstate(db));
}

/*
 * Integrity and input errors carry PostgreSQL's SQLSTATE as their code, on SQLite too
 * (db_sqlstate()), as PostgREST's clients expect ("23505" for a duplicate key); the message
 * is sluice's own, never the database's text (serve_db_error_words() passes that on).
 */
int
serve_db_error_sqlstate(struct resp *rs, int err_class, const char *sqlstate)
{
	static const struct {
		const char *state, *msg;
	} known[] = {
		{ "23505", "a row with the same key already exists" },
		{ "23503", "the row refers to a row that does not exist, or is referred to" },
		{ "23502", "a value is missing for a column that requires one" },
		{ "23514", "a value breaks a check constraint of its column" },
		{ "22P02", "a value does not fit its column" },
		{ "54000", "the statement grew past a limit of the database (a value it builds "
		    "is too large, or it is too complex)" },
		{ "42P10", "there is no unique or exclusion constraint matching the ON CONFLICT "
		    "specification" },
	};
	enum db_err e = (enum db_err)err_class;
	size_t i;

	if (sqlstate != NULL && (e == DB_ECONSTRAINT || e == DB_EINPUT))
		for (i = 0; i < sizeof(known) / sizeof(known[0]); i++)
			if (strcmp(sqlstate, known[i].state) == 0)
				return resp_error(rs, db_err_status(e), known[i].state,
				    known[i].msg, NULL, NULL);
	return serve_db_error_class(rs, err_class);
}

int
serve_db_error_class(struct resp *rs, int err_class)
{
	enum db_err e = (enum db_err)err_class;
	const char *code, *msg;

	switch (e) {
	case DB_ECONSTRAINT:
		code = "conflict";
		msg = "the request conflicts with the data (a constraint was violated)";
		break;
	case DB_EINPUT:
		code = "invalid_input";
		msg = "a value does not fit its column or breaks one of its constraints";
		break;
	case DB_EBUSY:
		code = "busy";
		msg = "the database is busy; retry the request";
		break;
	case DB_EUNAVAIL:
		code = "unavailable";
		msg = "the database is unavailable";
		break;
	case DB_EREADONLY:
		code = "read_only";
		msg = "the database is read-only";
		break;
	case DB_EFULL:
		code = "storage_full";
		msg = "the database is out of space";
		break;
	case DB_ETIMEOUT:
		code = "timeout";
		msg = "the request ran past its time budget";
		break;
	default:
		code = "internal";
		msg = "database error";
		break;
	}
	/* Every 503 of the database passes (a restart, a failover, a busy moment): say when
	 * to come back. */
	if (db_err_status(e) == 503)
		(void)resp_header(rs, "Retry-After", "1");
	return resp_error(rs, db_err_status(e), code, msg, NULL, NULL);
}
