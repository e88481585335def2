/*
 * logline: a test-only endpoint (built under build/.../tests/handlers/, never into bin/)
 * that logs one line while it serves a request and answers an error, to prove that the
 * worker's log lines and its error bodies name the request (common/reqid.h).
 *
 * GET /logline?say=WORD  logs "logline: said WORD" at warn (WORD: letters and digits, at
 *                        most 32), then answers 409 {"code":"logged",...,"requestId"}
 *                        through resp_error().  Without a valid WORD: 400.
 * No database, no tables.
 */
#include <ctype.h>
#include <string.h>

#include "log.h"
#include "serve.h"

static int
handle(struct req *rq, struct resp *rs)
{
	const struct req_param *say = req_param(rq, "say");
	size_t i;

	if (say == NULL || say->vallen == 0 || say->vallen > 32)
		return resp_error(rs, 400, "bad_say", "say= wants a word", NULL, NULL);
	for (i = 0; i < say->vallen; i++)
		if (!isalnum((unsigned char)say->val[i]))
			return resp_error(rs, 400, "bad_say", "say= wants a word", NULL, NULL);
	log_warn("logline: said %s", say->val);
	return resp_error(rs, 409, "logged", "a line was logged", NULL, NULL);
}

static const struct endpoint endpoint = { .name = "logline", .handle = handle };

int
main(int argc, char **argv)
{
	return serve_main(argc, argv, &endpoint);
}
