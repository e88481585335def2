/*
 * health: GET|HEAD /health
 *
 * Answers 200 {"status":"ok"} when the worker is up and serving; HEAD gets the same
 * headers and no body.  Any other method: 405 with an Allow header and a JSON error.  No
 * parameters (any are ignored), no database, no tables: it measures the stack itself
 * (nginx, the socket, the serve loop), and is what load balancers and the benchmark's
 * proxy suite call.
 */
#include "serve.h"

static int
handle(struct req *rq, struct resp *rs)
{
	static const char ok[] = "{\"status\":\"ok\"}";

	(void)rq;
	return resp_set(rs, 200, "application/json", ok, sizeof(ok) - 1);
}

static const struct endpoint endpoint = {
	.name = "health",
	.handle = handle,
	.methods = REQ_GET | REQ_HEAD,
};

int
main(int argc, char **argv)
{
	return serve_main(argc, argv, &endpoint);
}
