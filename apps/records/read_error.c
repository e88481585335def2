/*
 * read_error.c: the records API's error responses, in PocketBase's shape
 * {"data":{...},"message":"...","status":N} (see read.h; the body is pberr.h's, which
 * the realtime endpoint shares).
 */
#include <string.h>

#include "json.h"
#include "log.h"
#include "read.h"
#include "pberr.h"

int
rec_error(struct resp *rs, int status, const char *message, const char *data)
{
	return pberr_set(rs, status, message, data);
}

int
rec_db_error(struct rec_ctx *x)
{
	enum db_err e = db_errcode(x->rq->db);
	int status = db_err_status(e);

	log_warn("records: %s", db_errmsg(x->rq->db));
	if (status == 409)
		status = 400;
	return rec_error(x->rs, status, NULL, NULL);
}
