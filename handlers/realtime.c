/*
 * realtime: GET and POST /api/realtime, the realtime connection of PocketBase's dialect
 * (its JavaScript SDK's pb.realtime), on the streaming loop (common/evfcgi.h).
 *
 * GET opens a text/event-stream response that stays open.  Its first event, at once, is
 *   id:<clientId>\nevent:PB_CONNECT\ndata:{"clientId":"<clientId>"}\n\n
 * with a fresh id of 40 random letters and digits; then an SSE comment (":\n\n") every
 * SLUICE_REALTIME_HEARTBEAT_MS (15 s, at most 30 s: under the proxy's 60 s read timeout),
 * so that the proxy and the client see a live stream.  Past SLUICE_REALTIME_CLIENTS
 * clients (10,000) a GET is answered 503.  The stream ends when the client leaves, when
 * its connection's buffer passes SLUICE_STREAM_BUF (a reader that does not keep up is
 * dropped), or when the worker stops (the SDK then reconnects and gets a new id).
 *
 * POST with the JSON body {"clientId":"...","subscriptions":["posts/RECORD_ID", ...]} replaces
 * that client's topics and answers 204.  Errors, in PocketBase's shape
 * {"data":{...},"message":"...","status":N}: 400 for a body that is not a JSON object
 * ("An error occurred while loading the submitted data."), for a clientId missing, empty
 * or over 255 bytes, or subscriptions that are not an array of at most 1000 strings of 1
 * to 2500 printable ASCII bytes ("An error occurred while validating the submitted
 * data.", data naming the member); 404 for a clientId no connected client has ("Missing
 * or invalid client id."); 405 for another method.  Bodies past SLUICE_BODY_MAX close the
 * connection (the proxy's client_max_body_size answers first).
 *
 * The clients live in this one process (the pool is stream=1: workers=1 threads=1), so a
 * POST always finds the client its GET made.  No table is read yet: events on records
 * are not delivered (docs/records.md, "Realtime").
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evfcgi.h"
#include "log.h"
#include "records/pberr.h"
#include "records/realtime.h"
#include "settings.h"

struct rt {
	struct realtime *clients;
	struct resp rs;			/* reused for every one-shot answer */
};

/* Answers r with rs (reset afterwards). */
static int
rt_answer(struct rt *t, struct evfcgi_req *r)
{
	int rc = evfcgi_respond(r, &t->rs);

	resp_reset(&t->rs);
	return rc;
}

/* A PocketBase error answered on r; data NULL means {}. */
static int
rt_error(struct rt *t, struct evfcgi_req *r, int status, const char *message,
    const char *data)
{
	pberr_set(&t->rs, status, message, data);
	return rt_answer(t, r);
}

/* GET: a new client, its stream opened with PB_CONNECT. */
static int
rt_connect(struct rt *t, struct evfcgi_req *r)
{
	static const char head[] = "Status: 200 OK\r\nContent-Type: text/event-stream\r\n"
	    "Cache-Control: no-store\r\nX-Accel-Buffering: no\r\n\r\n";
	struct realtime_client *cl;
	char ev[160];
	int n;

	if ((cl = realtime_add(t->clients, r)) == NULL) {
		if (errno == EAGAIN)
			log_warn("realtime: %zu clients (realtime_clients): connection refused",
			    realtime_count(t->clients));
		(void)resp_header(&t->rs, "Retry-After", "1");
		return rt_error(t, r, 503, NULL, NULL);
	}
	evfcgi_set_data(r, cl);
	n = snprintf(ev, sizeof(ev), "id:%s\nevent:PB_CONNECT\ndata:{\"clientId\":\"%s\"}\n\n",
	    cl->id, cl->id);
	/* A write that fails drops the connection: gone() forgets the client. */
	if (evfcgi_write(r, head, sizeof(head) - 1) == 0 && n > 0 && (size_t)n < sizeof(ev))
		(void)evfcgi_write(r, ev, (size_t)n);
	return 0;
}

/* POST: a client's subscriptions set. */
static int
rt_subscribe(struct rt *t, struct evfcgi_req *r)
{
	struct realtime_set set;
	struct realtime_client *cl;
	const char *body, *field = NULL;
	char data[160];
	size_t len;

	body = evfcgi_body(r, &len);
	switch (realtime_body_parse(body, len, &set, &field)) {
	case REALTIME_OK:
		break;
	case REALTIME_EBODY:
		return rt_error(t, r, 400, "An error occurred while loading the submitted data.",
		    NULL);
	case REALTIME_ENOMEM:
		return rt_error(t, r, 503, NULL, NULL);
	default:
		(void)snprintf(data, sizeof(data), "{\"%s\":{\"code\":\"validation_invalid_value\","
		    "\"message\":\"Invalid value.\"}}", field != NULL ? field : "subscriptions");
		return rt_error(t, r, 400, "An error occurred while validating the submitted "
		    "data.", data);
	}
	if ((cl = realtime_find(t->clients, set.client_id, strlen(set.client_id))) == NULL) {
		realtime_set_free(&set);
		return rt_error(t, r, 404, "Missing or invalid client id.", NULL);
	}
	realtime_subs_set(cl, &set);
	t->rs.status = 204;
	return rt_answer(t, r);
}

static int
rt_request(void *ctx, struct evfcgi_req *r)
{
	struct rt *t = ctx;
	const char *m = evfcgi_param(r, "REQUEST_METHOD");

	if (m != NULL && strcmp(m, "GET") == 0)
		return rt_connect(t, r);
	if (m != NULL && strcmp(m, "POST") == 0)
		return rt_subscribe(t, r);
	(void)resp_header(&t->rs, "Allow", "GET, POST");
	return rt_error(t, r, 405, NULL, NULL);
}

/* A client's stream ended: the client goes. */
static void
rt_gone(void *ctx, struct evfcgi_req *r)
{
	struct rt *t = ctx;
	struct realtime_client *cl = evfcgi_data(r);

	if (cl != NULL)
		realtime_remove(t->clients, cl);
}

static void
rt_beat(void *ctx, struct realtime_client *cl)
{
	(void)ctx;
	/* A stream that cannot take it any more is dropped; gone() follows. */
	(void)evfcgi_write(cl->stream, ":\n\n", 3);
}

static void
rt_tick(void *ctx, long long now_ms)
{
	struct rt *t = ctx;

	(void)now_ms;
	realtime_each(t->clients, rt_beat, NULL);
}

int
main(int argc, char **argv)
{
	struct evfcgi_ops ops = { rt_request, rt_gone, rt_tick, 0 };
	struct rt t;
	long long max, beat;
	int rc;

	if (settings_int(SETTING_REALTIME_CLIENTS, &max) < 0 ||
	    settings_int(SETTING_REALTIME_HEARTBEAT_MS, &beat) < 0)
		return 1;
	ops.tick_ms = (int)beat;
	memset(&t, 0, sizeof(t));
	if ((t.clients = realtime_new((size_t)max)) == NULL)
		return 1;
	resp_init(&t.rs, 1 << 20);
	t.rs.error_ids = 0;
	rc = evfcgi_main(argc, argv, "realtime", &ops, &t, NULL);
	resp_free(&t.rs);
	realtime_free(t.clients);
	return rc;
}
