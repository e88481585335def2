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
 * A POST may carry the records API's token (Authorization, "Bearer " optional): it is
 * checked as the records API checks it (handlers/records/auth.c: the claims, the expiry,
 * an auth collection, the signature under the record's tokenKey read from the pool's
 * database and the secret of SLUICE_RECORDS_SECRET_FILE), and a token that fails is
 * answered 401 in the records API's words.  The first verified token's record stays the
 * client's; a later POST whose token names another record, or carries none, is answered
 * 403 ("The current and the previous request authorization don't match.", PocketBase's
 * words).  Without db= on the pool no token can be checked: a POST carrying one is 401.
 *
 * The clients live in this one process (the pool is stream=1: workers=1 threads=1), so a
 * POST always finds the client its GET made.
 *
 * With realtime_socket= the worker binds that unix datagram socket at start and reads the
 * records pool's announcements of committed writes in its loop (evfcgi's own_fd).  Each
 * create, update and delete goes to every client subscribed to COLLECTION/RECORD_ID or to
 * the collection's "*" that may see the record, as that client may see it, as the SSE
 * event "id:<clientId>\nevent:<topic as subscribed>\ndata:{"action":"create",
 * "record":{...}}" (apps/records/realtime_send.c); the reads that check it block the loop
 * (docs/records.md, "Delivering record events").
 */
#include <errno.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "buf.h"
#include "db.h"
#include "evfcgi.h"
#include "log.h"
#include "records/coll.h"
#include "records/pberr.h"
#include "records/realtime.h"
#include "records/token.h"
#include "settings.h"

struct rt {
	struct realtime *clients;
	struct resp rs;			/* reused for every one-shot answer */
	struct db *db;			/* the pool's database (db=), or NULL */
	struct realtime_reader rd;	/* its collections, the events' reads */
	int have_rd;
	int events_fd;			/* realtime_socket=, bound; or -1 */
	unsigned long events_in;	/* datagrams read from it */
};

/* A token's verdict. */
enum rt_auth {
	RT_AUTH_NONE,			/* no token: anonymous */
	RT_AUTH_OK,			/* *coll_id and *id set */
	RT_AUTH_BAD,			/* 401 */
	RT_AUTH_EDB,			/* the database failed: 503 */
};

/*
 * Checks r's Authorization token the way the records API does (rec_authorize() and
 * rec_auth_check()): a well-formed auth token not expired, naming an auth collection by
 * id, signed under its record's tokenKey as the database holds it now.
 */
static enum rt_auth
rt_auth(struct rt *t, struct evfcgi_req *r, char coll_id[64], char id[64])
{
	const char *h = evfcgi_param(r, "HTTP_AUTHORIZATION");
	struct token_claims cl;
	const struct coll *c;
	struct db_stmt *st;
	const char *key;
	size_t len, keylen;
	int rc;

	if (h == NULL)
		return RT_AUTH_NONE;
	if (strncasecmp(h, "Bearer ", 7) == 0)
		h += 7;
	while (*h == ' ')
		h++;
	if ((len = strlen(h)) == 0)
		return RT_AUTH_NONE;
	if (t->db == NULL || token_parse(h, len, &cl) < 0 || cl.exp <= (int64_t)time(NULL) ||
	    (c = colls_find(&t->rd.th.colls, cl.coll_id, strlen(cl.coll_id))) == NULL || !c->auth ||
	    strcmp(c->id, cl.coll_id) != 0 || strlen(cl.id) >= 64)
		return RT_AUTH_BAD;
	/* The collection's name was checked by colls_load(): quoting it is enough. */
	buf_reset(&t->rd.th.sql, 4096);
	buf_puts(&t->rd.th.sql, "SELECT ");
	(void)coll_quote(&t->rd.th.sql, "tokenKey");
	buf_puts(&t->rd.th.sql, " FROM ");
	(void)coll_quote(&t->rd.th.sql, c->name);
	buf_puts(&t->rd.th.sql, " WHERE ");
	(void)coll_quote(&t->rd.th.sql, "id");
	buf_puts(&t->rd.th.sql, " = $1");
	if (t->rd.th.sql.failed || (st = db_prepare(t->db, t->rd.th.sql.data)) == NULL ||
	    db_bind_text(st, 1, cl.id, strlen(cl.id)) < 0)
		return RT_AUTH_EDB;
	if ((rc = db_step(st)) != DB_ROW) {
		db_reset(st);
		return rc == DB_DONE ? RT_AUTH_BAD : RT_AUTH_EDB;
	}
	key = db_column_text(st, 0, &keylen);
	rc = key != NULL && token_verify(h, len, c->id, key, keylen);
	db_reset(st);
	if (!rc)
		return RT_AUTH_BAD;
	(void)snprintf(coll_id, 64, "%s", c->id);
	(void)snprintf(id, 64, "%s", cl.id);
	return RT_AUTH_OK;
}

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
	char data[160], coll_id[64] = "", id[64] = "";
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
	switch (rt_auth(t, r, coll_id, id)) {
	case RT_AUTH_BAD:
		realtime_set_free(&set);
		return rt_error(t, r, 401, "The request requires valid record authorization "
		    "token.", NULL);
	case RT_AUTH_EDB:
		log_err("realtime: reading a token's record: %s", db_errmsg(t->db));
		realtime_set_free(&set);
		return rt_error(t, r, 503, NULL, NULL);
	default:
		break;
	}
	/* A client keeps the first auth it subscribed with: another one (or none) may not
	 * take over its subscriptions, nor read what that auth may see. */
	if (cl->auth_id[0] != '\0' && (strcmp(cl->auth_coll, coll_id) != 0 ||
	    strcmp(cl->auth_id, id) != 0)) {
		realtime_set_free(&set);
		return rt_error(t, r, 403, "The current and the previous request authorization "
		    "don't match.", NULL);
	}
	memcpy(cl->auth_coll, coll_id, sizeof(cl->auth_coll));
	memcpy(cl->auth_id, id, sizeof(cl->auth_id));
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

/*
 * The records pool's announcements (handlers/records/publish.c) on realtime_socket=: the
 * socket bound now, before the system call filter (a stale socket file left by an earlier
 * worker is replaced; any other file there is an error).  0, or -1 said on stderr.
 */
static int
rt_events_open(struct rt *t)
{
	const char *path = settings_get(SETTING_REALTIME_SOCKET);
	struct sockaddr_un sa;
	struct stat st;
	int rc = -1;

	if (path == NULL || *path == '\0')
		return 0;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		fprintf(stderr, "realtime: realtime_socket: the path is too long\n");
		return -1;
	}
	if (lstat(path, &st) == 0 && S_ISSOCK(st.st_mode))
		(void)unlink(path);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, path, strlen(path) + 1);
	/* Mode 0660 from the start (a tight umask while it binds, at start-up, before any
	 * thread): a datagram is taken as a committed write's announcement, a deleted
	 * record's fields included, so only the pools' user and group may send one. */
	if ((t->events_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC,
	    0)) >= 0) {
		mode_t old = umask(0117);

		rc = bind(t->events_fd, (struct sockaddr *)&sa, sizeof(sa));
		(void)umask(old);
	}
	if (t->events_fd < 0 || rc < 0) {
		fprintf(stderr, "realtime: realtime_socket %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

static int
rt_events_fd(void *ctx)
{
	return ((struct rt *)ctx)->events_fd;
}

/*
 * The announcements waiting on the socket, each delivered to the clients subscribed to
 * its record as each may see it (apps/records/realtime_send.c).  A datagram is at most
 * 60,000 bytes (the records pool's bound); one cut short by this buffer does not parse
 * and is dropped.
 */
static void
rt_events_ready(void *ctx)
{
	struct rt *t = ctx;
	static char dg[65536];
	ssize_t n;

	while ((n = recv(t->events_fd, dg, sizeof(dg) - 1, MSG_DONTWAIT)) >= 0) {
		dg[n] = '\0';
		t->events_in++;
		log_debug("realtime: event %lu read: %.*s", t->events_in, n > 300 ? 300 : (int)n,
		    dg);
		realtime_deliver(&t->rd, t->clients, dg, (size_t)n);
	}
}

/* Before the system call filter: the pool's database (db=), when it has one, its
 * collections and the records secret. */
static int
rt_init(void *ctx)
{
	struct rt *t = ctx;
	struct db_opts o;
	const char *url = settings_get(SETTING_DB);
	char err[256];

	if (rt_events_open(t) < 0)
		return -1;
	t->have_rd = 1;
	if (url == NULL || *url == '\0')
		return realtime_reader_init(&t->rd, NULL, err, sizeof(err));
	if (db_opts_from_env(&o) < 0) {
		fprintf(stderr, "realtime: the database settings cannot be read\n");
		return -1;
	}
	if (db_open(&t->db, url, &o, err, sizeof(err)) < 0) {
		fprintf(stderr, "realtime: %s\n", err);
		return -1;
	}
	if (realtime_reader_init(&t->rd, t->db, err, sizeof(err)) < 0) {
		fprintf(stderr, "realtime: %s\n", err);
		return -1;
	}
	return token_init(NULL);
}

int
main(int argc, char **argv)
{
	struct evfcgi_ops ops = { rt_request, rt_gone, rt_tick, 0, rt_events_fd,
	    rt_events_ready };
	struct rt t;
	long long max, beat;
	int rc;

	if (settings_int(SETTING_REALTIME_CLIENTS, &max) < 0 ||
	    settings_int(SETTING_REALTIME_HEARTBEAT_MS, &beat) < 0)
		return 1;
	ops.tick_ms = (int)beat;
	memset(&t, 0, sizeof(t));
	t.events_fd = -1;
	if ((t.clients = realtime_new((size_t)max)) == NULL)
		return 1;
	resp_init(&t.rs, 1 << 20);
	t.rs.error_ids = 0;
	rc = evfcgi_main(argc, argv, "realtime", &ops, &t, rt_init);
	if (t.have_rd)
		realtime_reader_free(&t.rd);
	if (t.db != NULL)
		db_close(t.db);
	if (t.events_fd >= 0)
		(void)close(t.events_fd);
	resp_free(&t.rs);
	realtime_free(t.clients);
	return rc;
}
