/*
 * serve_db.c: the database side of the serve loop, in its own file so that only endpoints
 * that name &serve_db link the database code (and libpq, libsqlite3): the health endpoint
 * stays a few kilobytes and a megabyte of RSS.
 */
#include <stdio.h>

#include "db.h"
#include "serve_ops.h"
#include "log.h"
#include "serve.h"

static int
serve_db_open(struct db **out, const char *url)
{
	struct db_opts opts;
	char err[256];

	if (db_opts_from_env(&opts) < 0) {
		log_err("bad database setting in the environment");
		return -1;
	}
	if (db_open(out, url, &opts, err, sizeof(err)) < 0) {
		log_err("cannot open the database: %s", err);
		return -1;
	}
	return 0;
}

const struct serve_db_ops serve_db = {
	.open = serve_db_open,
	.close = db_close,
	.ready = db_ready,
	.rollback = db_rollback,
	.error = serve_db_error,
};

int
serve_db_error(struct resp *rs, struct db *db)
{
	enum db_err e = db_errcode(db);
	int status = db_err_status(e);
	const char *code, *msg;

	switch (e) {
	case DB_ECONSTRAINT:
		code = "conflict";
		msg = "the request conflicts with the data (a constraint was violated)";
		break;
	case DB_EINPUT:
		code = "invalid_input";
		msg = "a value does not fit its column";
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
	default:
		code = "internal";
		msg = "database error";
		break;
	}
	if (status >= 500)
		log_err("database: %s", db_errmsg(db));
	else
		log_debug("database: %s", db_errmsg(db));
	return resp_error(rs, status, code, msg, NULL, NULL);
}
