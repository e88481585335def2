/*
 * pberr.c: error responses in PocketBase's shape (see pberr.h).
 */
#include <string.h>

#include "json.h"
#include "pberr.h"

/* PocketBase's standard message of a status. */
static const char *
pberr_message(int status)
{
	switch (status) {
	case 400: return "Something went wrong while processing your request.";
	case 401: return "Missing or invalid authentication.";
	case 403: return "You are not allowed to perform this request.";
	case 404: return "The requested resource wasn't found.";
	case 405: return "Method Not Allowed.";
	case 413: return "Request entity too large.";
	case 429: return "Too Many Requests.";
	case 503: return "Service unavailable.";
	default: return "Something went wrong.";
	}
}

int
pberr_set(struct resp *rs, int status, const char *message, const char *data)
{
	struct buf *b = &rs->body;

	rs->status = status;
	rs->content_type = "application/json";
	buf_reset(b, 1 << 20);
	buf_puts(b, "{\"data\":");
	buf_puts(b, data != NULL ? data : "{}");
	buf_puts(b, ",\"message\":");
	message = message != NULL ? message : pberr_message(status);
	json_escape(b, message, strlen(message));
	buf_printf(b, ",\"status\":%d}", status);
	if (buf_failed(b))
		(void)resp_set(rs, 500, "application/json", "{\"data\":{},\"message\":\"\","
		    "\"status\":500}", 42);
	return 0;
}
