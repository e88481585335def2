/*
 * test_realtime_delivery: record events delivered by the realtime pool to subscribers
 * under their rules (apps/records/realtime_send.c, read.h's rec_event_record()), on SQLite
 * and on PostgreSQL (a throwaway cluster, tests/lib/pgtmp), through the real nginx,
 * sluiced, records and realtime pools sharing realtime_socket=.
 *
 * A collection of the test's own, notes (owner, title, public, secret): its list rule
 * shows a note to its owner and, when public, to anyone; its view rule to its owner
 * only.  Two users (A and B) and an anonymous client subscribe to notes/"*" and users/"*":
 * - A's private note: A receives its create, update and delete (the delete carrying the
 *   record as it was); B and the anonymous client receive none of them (checked after
 *   a sentinel event that each does receive, so that nothing is still on its way);
 * - A's public note: everyone subscribed to notes/"*" receives it; a subscription to the
 *   note's id follows the view rule: A receives it under that topic, B does not;
 * - users/"*": A's own update carries A's email (the owner), B's copy of it does not (a
 *   hidden email), and no event carries password or tokenKey;
 * - a topic with the SDK's options (expand=owner, fields=id,title,expand.owner.name)
 *   receives the record expanded and trimmed;
 * - after an unsubscribe (subscriptions []) nothing more arrives;
 * - topics that are not of the form (malformed options, no record part) are accepted
 *   and receive nothing;
 * - the SSE event is PocketBase's: id:<clientId>, event:<the topic as subscribed>,
 *   data:{"action":"...","record":{...}}.
 * The PocketBase SDK's subscribe() receiving events: tests/js/realtime_events.test.mjs.
 */
#define _GNU_SOURCE	/* memmem() */ /* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "http.h"
#include "jsrun.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define RD_ID_LEN	40

static const char rd_collections[] =
    "INSERT INTO _collections VALUES ('pbc_1000000009', 'notes', 'base',\n"
    "  'owner relation to=users; title text; public bool; secret text',\n"
    "  'public = true || owner = @request.auth.id', 'owner = @request.auth.id',\n"
    "  '@request.auth.id != ''''', 'owner = @request.auth.id', 'owner = @request.auth.id');\n";

static const char rd_secret_hex[] =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/* One streaming client through nginx. */
struct sse {
	int fd;
	struct buf in;
	char id[RD_ID_LEN + 1];
};

static int
sse_read(int fd, struct buf *b, int ms)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	char tmp[16384];
	ssize_t n;

	if (poll(&p, 1, ms) <= 0)
		return 0;
	n = recv(fd, tmp, sizeof(tmp), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EINTR))
		return 0;
	if (n <= 0)
		return -1;
	buf_append(b, tmp, (size_t)n);
	return 1;
}

/* Reads until needle is in c's stream (1) or ms pass (0). */
static int
sse_wait(struct sse *c, const char *needle, int ms)
{
	long long end = stack_now_ms() + ms;

	while (c->in.len == 0 || memmem(c->in.data, c->in.len, needle, strlen(needle)) == NULL) {
		if (stack_now_ms() >= end || sse_read(c->fd, &c->in, 50) < 0)
			return 0;
	}
	return 1;
}

/* 1 when c's stream holds needle. */
static int
sse_has(const struct sse *c, const char *needle)
{
	return c->in.len > 0 && memmem(c->in.data, c->in.len, needle, strlen(needle)) != NULL;
}

static int
sse_open(const struct stack *s, struct sse *c)
{
	static const char ev[] = "event:PB_CONNECT\ndata:{\"clientId\":\"";
	struct sockaddr_in sin;
	char req[256];
	const char *p;
	int n;

	buf_init(&c->in, 0);
	c->id[0] = '\0';
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)s->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	n = snprintf(req, sizeof(req), "GET /api/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Accept: text/event-stream\r\n\r\n");
	if (connect(c->fd, (struct sockaddr *)&sin, sizeof(sin)) < 0 ||
	    write(c->fd, req, (size_t)n) != n || !sse_wait(c, "\"}\n", 5000) ||
	    (p = memmem(c->in.data, c->in.len, ev, sizeof(ev) - 1)) == NULL ||
	    (size_t)(p - c->in.data) + sizeof(ev) - 1 + RD_ID_LEN > c->in.len)
		return -1;
	memcpy(c->id, p + sizeof(ev) - 1, RD_ID_LEN);
	c->id[RD_ID_LEN] = '\0';
	return 0;
}

static void
sse_close(struct sse *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	buf_free(&c->in);
}

/* method on path of s, auth a token or NULL, body or NULL: the status, the body in out. */
static long
rd_call(const struct stack *s, const char *method, const char *path, const char *auth,
    const char *body, struct buf *out)
{
	char hauth[2200], url[3000];
	const char *headers[] = { "Content-Type: application/json", NULL, NULL };
	struct http_resp r;
	long st;

	if (auth != NULL) {
		(void)snprintf(hauth, sizeof(hauth), "Authorization: %s", auth);
		headers[1] = hauth;
	}
	(void)snprintf(url, sizeof(url), "%s%s", s->base, path);
	http_resp_init(&r);
	(void)http_do(method, url, headers, body, body ? strlen(body) : 0, 10000, &r);
	st = r.status;
	buf_reset(out, 0);
	if (r.body.len > 0)
		buf_append(out, r.body.data, r.body.len);
	else
		buf_append(out, "", 0);
	http_resp_free(&r);
	return st;
}

/* POST /api/realtime for client c with subs (the array's inside) as auth. */
static long
rd_subscribe(const struct stack *s, const struct sse *c, const char *subs, const char *auth)
{
	struct buf b, out;
	long st;

	buf_init(&b, 0);
	buf_init(&out, 0);
	buf_printf(&b, "{\"clientId\":\"%s\",\"subscriptions\":[%s]}", c->id, subs);
	st = rd_call(s, "POST", "/api/realtime", auth, b.data, &out);
	buf_free(&b);
	buf_free(&out);
	return st;
}

/* Seeded user n signed in: its token into tok, its id into id[16].  0 or -1. */
static int
rd_signin(const struct stack *s, int n, char *tok, size_t len, char id[16])
{
	struct buf out;
	char body[128];
	const char *p, *e;
	int rc = -1;

	buf_init(&out, 0);
	(void)snprintf(body, sizeof(body), "{\"identity\":\"user%04d@example.com\","
	    "\"password\":\"password123\"}", n);
	if (rd_call(s, "POST", "/api/collections/users/auth-with-password", NULL, body,
	    &out) == 200 && (p = strstr(out.data, "\"token\":\"")) != NULL &&
	    (e = strchr(p + 9, '"')) != NULL && (size_t)(e - p - 9) < len &&
	    (p = strstr(out.data, "\"record\":")) != NULL &&
	    (p = strstr(p, "\"id\":\"")) != NULL && strlen(p + 6) > 15) {
		memcpy(id, p + 6, 15);
		id[15] = '\0';
		p = strstr(out.data, "\"token\":\"");
		memcpy(tok, p + 9, (size_t)(e - p - 9));
		tok[e - p - 9] = '\0';
		rc = 0;
	}
	buf_free(&out);
	return rc;
}

/* A note created by auth: its id into id[16].  0 or -1. */
static int
rd_note(const struct stack *s, const char *auth, const char *owner, const char *title,
    int public, char id[16])
{
	struct buf out;
	char body[512];
	const char *p;
	int rc = -1;

	buf_init(&out, 0);
	(void)snprintf(body, sizeof(body), "{\"owner\":\"%s\",\"title\":\"%s\",\"public\":%s,"
	    "\"secret\":\"secret-of-%s\"}", owner, title, public ? "true" : "false", title);
	if (rd_call(s, "POST", "/api/collections/notes/records", auth, body, &out) == 200 &&
	    (p = strstr(out.data, "\"id\":\"")) != NULL && strlen(p + 6) > 15) {
		memcpy(id, p + 6, 15);
		id[15] = '\0';
		rc = 0;
	}
	buf_free(&out);
	return rc;
}

/* The stack's users and clients for one run. */
struct rd {
	struct stack *s;
	char ta[1024], tb[1024], ua[16], ub[16];
	struct sse a, b, n, e;
};

/* A's private note: A hears create, update, delete; B and the anonymous N none. */
static void
rd_private(struct rd *d)
{
	struct buf out;
	char pid[16], qid[16], path[128], want[256];

	buf_init(&out, 0);
	CHECK_INT(rd_note(d->s, d->ta, d->ua, "private-a", 0, pid), 0);
	(void)snprintf(want, sizeof(want), "id:%s\nevent:notes/*\ndata:{\"action\":\"create\","
	    "\"record\":{\"collectionId\":\"pbc_1000000009\",\"collectionName\":\"notes\","
	    "\"id\":\"%s\"", d->a.id, pid);
	CHECK(sse_wait(&d->a, want, 5000));
	CHECK(sse_wait(&d->a, "\"title\":\"private-a\"", 1000));
	(void)snprintf(path, sizeof(path), "/api/collections/notes/records/%s", pid);
	CHECK_INT(rd_call(d->s, "PATCH", path, d->ta, "{\"title\":\"private-a2\"}", &out), 200);
	CHECK(sse_wait(&d->a, "\"action\":\"update\",\"record\":{\"collectionId\":"
	    "\"pbc_1000000009\"", 5000));
	CHECK(sse_wait(&d->a, "\"title\":\"private-a2\"", 1000));
	CHECK_INT(rd_call(d->s, "DELETE", path, d->ta, NULL, &out), 204);
	(void)snprintf(want, sizeof(want), "\"action\":\"delete\",\"record\":{\"collectionId\":"
	    "\"pbc_1000000009\",\"collectionName\":\"notes\",\"id\":\"%s\"", pid);
	CHECK(sse_wait(&d->a, want, 5000));
	CHECK(sse_wait(&d->a, "\"secret\":\"secret-of-private-a\"", 1000));
	/* The sentinel: a public note everyone may list. */
	CHECK_INT(rd_note(d->s, d->ta, d->ua, "sentinel-1", 1, qid), 0);
	CHECK(sse_wait(&d->b, "\"title\":\"sentinel-1\"", 5000));
	CHECK(sse_wait(&d->n, "\"title\":\"sentinel-1\"", 5000));
	CHECK(sse_wait(&d->a, "\"title\":\"sentinel-1\"", 5000));
	CHECK(!sse_has(&d->b, "private-a") && !sse_has(&d->n, "private-a"));
	CHECK(!sse_has(&d->b, pid) && !sse_has(&d->n, pid));
	buf_free(&out);
}

/* "*" against one record's topic, the hidden email, expand and fields. */
static void
rd_topics(struct rd *d)
{
	struct buf out;
	char qid[16], subs[1200], path[128], want[256];

	buf_init(&out, 0);
	CHECK_INT(rd_note(d->s, d->ta, d->ua, "public-a", 1, qid), 0);
	CHECK(sse_wait(&d->b, "\"title\":\"public-a\"", 5000));
	/* A and B subscribe to the note by id too: its view rule is the owner's alone. */
	(void)snprintf(subs, sizeof(subs), "\"notes/*\",\"users/*\",\"notes/%s\"", qid);
	CHECK_INT(rd_subscribe(d->s, &d->a, subs, d->ta), 204);
	CHECK_INT(rd_subscribe(d->s, &d->b, subs, d->tb), 204);
	(void)snprintf(path, sizeof(path), "/api/collections/notes/records/%s", qid);
	CHECK_INT(rd_call(d->s, "PATCH", path, d->ta, "{\"title\":\"public-a2\"}", &out), 200);
	(void)snprintf(want, sizeof(want), "event:notes/%s\ndata:{\"action\":\"update\"", qid);
	CHECK(sse_wait(&d->a, want, 5000));
	CHECK(sse_wait(&d->b, "event:notes/*\ndata:{\"action\":\"update\"", 5000));
	/* E's options: expanded owner, three keys kept. */
	CHECK(sse_wait(&d->e, "\"title\":\"public-a2\"", 5000));
	(void)snprintf(want, sizeof(want), "data:{\"action\":\"update\",\"record\":{\"expand\":"
	    "{\"owner\":{\"name\":\"User 1\"}},\"id\":\"%s\",\"title\":\"public-a2\"}}\n\n", qid);
	CHECK(sse_wait(&d->e, want, 1000));
	CHECK(!sse_has(&d->e, "\"public\"") && !sse_has(&d->e, "\"secret\""));
	/* The hidden email: A's own update carries it to A, not to B. */
	(void)snprintf(path, sizeof(path), "/api/collections/users/records/%s", d->ua);
	CHECK_INT(rd_call(d->s, "PATCH", path, d->ta, "{\"emailVisibility\":false,"
	    "\"name\":\"renamed-a\"}", &out), 200);
	CHECK(sse_wait(&d->a, "\"email\":\"user0001@example.com\"", 5000));
	CHECK(sse_wait(&d->b, "\"name\":\"renamed-a\"", 5000));
	/* A sentinel for B: its own record's update, then the absences. */
	(void)snprintf(path, sizeof(path), "/api/collections/users/records/%s", d->ub);
	CHECK_INT(rd_call(d->s, "PATCH", path, d->tb, "{\"name\":\"renamed-b\"}", &out), 200);
	CHECK(sse_wait(&d->b, "\"name\":\"renamed-b\"", 5000));
	(void)snprintf(want, sizeof(want), "event:notes/%s\n", qid);
	CHECK(!sse_has(&d->b, want));
	CHECK(!sse_has(&d->b, "user0001@example.com"));
	CHECK(!sse_has(&d->a, "\"password\"") && !sse_has(&d->b, "\"password\""));
	CHECK(!sse_has(&d->a, "\"tokenKey\"") && !sse_has(&d->b, "\"tokenKey\""));
	/* The public note deleted: the anonymous client hears it. */
	(void)snprintf(path, sizeof(path), "/api/collections/notes/records/%s", qid);
	CHECK_INT(rd_call(d->s, "DELETE", path, d->ta, NULL, &out), 204);
	(void)snprintf(want, sizeof(want), "event:notes/*\ndata:{\"action\":\"delete\",\"record\":"
	    "{\"collectionId\":\"pbc_1000000009\",\"collectionName\":\"notes\",\"id\":\"%s\"", qid);
	CHECK(sse_wait(&d->n, want, 5000));
	buf_free(&out);
}

/* After B unsubscribes, B hears nothing more while N does. */
static void
rd_unsubscribe(struct rd *d)
{
	char qid[16];

	CHECK_INT(rd_subscribe(d->s, &d->b, "", d->tb), 204);
	CHECK_INT(rd_note(d->s, d->ta, d->ua, "after-unsubscribe", 1, qid), 0);
	CHECK(sse_wait(&d->n, "\"title\":\"after-unsubscribe\"", 5000));
	CHECK(sse_wait(&d->a, "\"title\":\"after-unsubscribe\"", 5000));
	(void)sse_wait(&d->b, "after-unsubscribe", 300);
	CHECK(!sse_has(&d->b, "after-unsubscribe"));
}

/* The PocketBase SDK's subscribe() on the same stack (tests/js/realtime_events.test.mjs). */
static void
rd_js(const struct stack *s, const char *name)
{
	char env[256];

	if (jsrun_install("eventsource") < 0 || jsrun_install("pocketbase") < 0) {
		CHECK(!"npm ci installed eventsource and pocketbase in tests/js, and node runs");
		return;
	}
	(void)snprintf(env, sizeof(env), "RECORDS_URL='%s'", s->base);
	CHECK_INT(jsrun(env, "realtime_events.test.mjs", name), 0);
}

static void
rd_run(struct stack *s)
{
	static const char opts[] = "%7B%22query%22%3A%7B%22expand%22%3A%22owner%22%2C%22fields"
	    "%22%3A%22id%2Ctitle%2Cexpand.owner.name%22%7D%2C%22headers%22%3A%7B%7D%7D";
	struct rd d;
	char subs[512];

	memset(&d, 0, sizeof(d));
	d.s = s;
	d.a.fd = d.b.fd = d.n.fd = d.e.fd = -1;
	if (rd_signin(s, 1, d.ta, sizeof(d.ta), d.ua) < 0 ||
	    rd_signin(s, 2, d.tb, sizeof(d.tb), d.ub) < 0 || sse_open(s, &d.a) < 0 ||
	    sse_open(s, &d.b) < 0 || sse_open(s, &d.n) < 0 || sse_open(s, &d.e) < 0) {
		CHECK(!"two users signed in and four clients connected");
		goto out;
	}
	CHECK_INT(rd_subscribe(s, &d.a, "\"notes/*\",\"users/*\"", d.ta), 204);
	CHECK_INT(rd_subscribe(s, &d.b, "\"notes/*\",\"users/*\"", d.tb), 204);
	/* N also holds topics that are not of the form: accepted, and never sent to. */
	CHECK_INT(rd_subscribe(s, &d.n, "\"notes/*\",\"notes/*?options=%zz\",\"notes\","
	    "\"notes/*?options=[1]\"", NULL), 204);
	(void)snprintf(subs, sizeof(subs), "\"pbc_1000000009/*?options=%s\"", opts);
	CHECK_INT(rd_subscribe(s, &d.e, subs, d.tb), 204);
	rd_private(&d);
	rd_topics(&d);
	rd_unsubscribe(&d);
	CHECK(sse_has(&d.n, "event:notes/*\n"));
	CHECK(!sse_has(&d.n, "event:notes/*?") && !sse_has(&d.n, "event:notes\n"));
out:
	sse_close(&d.a);
	sse_close(&d.b);
	sse_close(&d.n);
	sse_close(&d.e);
}

/* The stack over url (sqlite:... or postgresql:...), with both pools on one socket. */
static int
rd_start(struct stack *s, const char *url, const char *secret, const char *sock)
{
	char conf[1500];
	int rc;

	(void)snprintf(conf, sizeof(conf), "db records %s\n"
	    "records /api/ workers=1 threads=2 db=records records_secret_file=%s "
	    "bcrypt_cost=4 realtime_socket=%s\n"
	    "realtime =/api/realtime workers=1 threads=1 stream=1 db=records "
	    "records_secret_file=%s realtime_socket=%s\n", url, secret, sock, secret, sock);
	if (strncmp(url, "postgresql:", 11) == 0)
		setenv("SLUICE_DB_RECORDS", url, 1);
	rc = stack_start(s, conf, "tuned", 1, NULL);
	unsetenv("SLUICE_DB_RECORDS");
	return rc;
}

static char rd_sqldir[128], rd_secret[128];

static int
rd_seed(const char *url)
{
	const char *tests = getenv("SLUICE_TESTS");

	return stack_sh("%s/../sql/records-seed -q -u 2 -p 1 -c 1 -S %s '%s'",
	    tests ? tests : "build/rel/tests", rd_sqldir, url);
}

static int
rd_files(void)
{
	char p[200];
	FILE *f;

	(void)snprintf(rd_sqldir, sizeof(rd_sqldir), "/tmp/sluice-rtdel-%d-sql", (int)getpid());
	(void)snprintf(rd_secret, sizeof(rd_secret), "/tmp/sluice-rtdel-%d.key", (int)getpid());
	if (stack_sh("mkdir -p %s && cp sql/records/collections.sql %s/", rd_sqldir,
	    rd_sqldir) != 0)
		return -1;
	(void)snprintf(p, sizeof(p), "%s/collections.sql", rd_sqldir);
	if ((f = fopen(p, "a")) == NULL)
		return -1;
	fputs(rd_collections, f);
	if (fclose(f) != 0 || (f = fopen(rd_secret, "w")) == NULL)
		return -1;
	fprintf(f, "%s\n", rd_secret_hex);
	if (fclose(f) != 0)
		return -1;
	return stack_sh("chmod 644 %s", rd_secret);
}

static void
test_realtime_delivery_sqlite(void)
{
	struct stack s;
	char db[128], url[160], sock[108];

	(void)snprintf(db, sizeof(db), "/tmp/sluice-rtdel-%d.db", (int)getpid());
	(void)snprintf(sock, sizeof(sock), "/tmp/sluice-rtdel-%d.sock", (int)getpid());
	(void)snprintf(url, sizeof(url), "sqlite:%s", db);
	unlink(db);
	if (rd_files() < 0 || rd_seed(url) != 0) {
		CHECK(!"database seeded");
		return;
	}
	(void)stack_sh("chmod 666 %s", db);
	if (rd_start(&s, url, rd_secret, sock) < 0) {
		CHECK(!"stack started");
	} else {
		rd_run(&s);
		rd_js(&s, "realtime events sqlite");
		stack_stop(&s);
	}
	unlink(sock);
	(void)stack_sh("rm -f %s %s-shm %s-wal %s-wlock", db, db, db, db);
}

static void
test_realtime_delivery_pg(void)
{
	struct stack s;
	struct pgtmp pg;
	char sock[108];

	(void)snprintf(sock, sizeof(sock), "/tmp/sluice-rtdelpg-%d.sock", (int)getpid());
	memset(&pg, 0, sizeof(pg));
	if (rd_files() < 0 || pgtmp_start(&pg) < 0 || rd_seed(pg.url) != 0) {
		CHECK(!"PostgreSQL started and seeded");
		pgtmp_stop(&pg);
		return;
	}
	if (rd_start(&s, pg.url, rd_secret, sock) < 0) {
		CHECK(!"stack started");
	} else {
		rd_run(&s);
		rd_js(&s, "realtime events postgresql");
		stack_stop(&s);
	}
	unlink(sock);
	pgtmp_stop(&pg);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_realtime_delivery_sqlite);
	RUN(test_realtime_delivery_pg);
	(void)stack_sh("rm -rf %s %s", rd_sqldir, rd_secret);
	return harness_done();
}
