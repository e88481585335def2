/*
 * error.c: the records API's error responses, in PocketBase's shape
 * {"data":{...},"message":"...","status":N} (see records.h).
 */
#include <string.h>

#include "json.h"
#include "log.h"
#include "records.h"

static const char *
rec_message(int status)
{
	switch (status) {
	case 400: return "Something went wrong while processing your request.";
	case 401: return "Missing or invalid authentication.";
	case 403: return "You are not allowed to perform this request.";
	case 404: return "The requested resource wasn't found.";
	case 413: return "Request entity too large.";
	case 429: return "Too Many Requests.";
	case 503: return "Service unavailable.";
	default: return "Something went wrong.";
	}
}

int
rec_error(struct resp *rs, int status, const char *message, const char *data)
{
	struct buf *b = &rs->body;

	rs->status = status;
	rs->content_type = "application/json";
	buf_reset(b, 1 << 20);
	buf_puts(b, "{\"data\":");
	buf_puts(b, data != NULL ? data : "{}");
	buf_puts(b, ",\"message\":");
	message = message != NULL ? message : rec_message(status);
	json_escape(b, message, strlen(message));
	buf_printf(b, ",\"status\":%d}", status);
	if (buf_failed(b))
		(void)resp_set(rs, 500, "application/json", "{\"data\":{},\"message\":\"\","
		    "\"status\":500}", 42);
	return 0;
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
