/*
 * test_realtime: GET and POST /api/realtime (handlers/realtime.c on the streaming loop,
 * common/evfcgi.h) through the real nginx and sluiced.
 *
 * A client streaming through nginx gets 200 text/event-stream and PB_CONNECT with a
 * 40-character id at once, then heartbeats; two clients get two ids.  POST sets a client's
 * subscriptions (204), and answers PocketBase's JSON errors: an unknown client 404, a
 * malformed body, a missing clientId, too many or too long subscriptions 400, another
 * method 405; a client that left is unknown.  Past realtime_clients a GET is answered 503.
 * A reader that does not read (a FastCGI client on the pool's socket, stream_buf=4096,
 * heartbeats every 10 ms) is dropped once its buffer fills while a client through nginx
 * keeps receiving heartbeats.  1,000 idle clients are held by the one process, its
 * memory (PSS, /proc/PID/smaps_rollup) printed and bounded.  PocketBase's JavaScript SDK
 * (pb.realtime, tests/js/realtime.test.mjs) connects and subscribes.  A reload of the pool
 * ends the old worker's streams properly and the new worker serves new clients.  The
 * generated nginx
 * configuration passes the stream unbuffered; after the stop no worker is left.
 */
#define _GNU_SOURCE	/* memmem() */ /* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http.h"
#include "jsrun.h"
#include "stack.h"
#include "../lib/harness.h"

#define RT_ID_LEN	40
#define RT_IDLE		1000

/* One streaming client through nginx: its socket and everything it read. */
struct sse {
	int fd;
	struct buf in;
	char id[RT_ID_LEN + 1];
};

/* Opens a TCP connection to the stack and sends GET /api/realtime; -1 on failure. */
static int
sse_connect(const struct stack *s, int nonblock)
{
	struct sockaddr_in sin;
	char req[256];
	int fd, n;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)s->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) < 0) {
		close(fd);
		return -1;
	}
	n = snprintf(req, sizeof(req), "GET /api/realtime HTTP/1.1\r\nHost: 127.0.0.1\r\n"
	    "Accept: text/event-stream\r\nCache-Control: no-store\r\n\r\n");
	if (write(fd, req, (size_t)n) != n) {
		close(fd);
		return -1;
	}
	if (nonblock)
		(void)fcntl(fd, F_SETFL, fcntl(fd, F_GETFL) | O_NONBLOCK);
	return fd;
}

/* Reads what is there within ms; the bytes read, 0 on timeout, -1 on EOF or error. */
static long
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
	return (long)n;
}

/* Reads until needle is in b (1) or ms pass (0). */
static int
sse_wait(int fd, struct buf *b, const char *needle, int ms)
{
	long long end = stack_now_ms() + ms;

	while (b->len == 0 || memmem(b->data, b->len, needle, strlen(needle)) == NULL) {
		if (stack_now_ms() >= end || sse_read(fd, b, 50) < 0)
			return 0;
	}
	return 1;
}

/* The client id of the PB_CONNECT event in b into id, checked against its "id:" line;
 * 0, or -1 when there is none or it is malformed. */
static int
sse_client_id(const struct buf *b, char *id)
{
	static const char ev[] = "event:PB_CONNECT\ndata:{\"clientId\":\"";
	char want[128];
	const char *p;
	int i;

	if (b->len == 0 || (p = memmem(b->data, b->len, ev, sizeof(ev) - 1)) == NULL)
		return -1;
	p += sizeof(ev) - 1;
	if ((size_t)(p - b->data) + RT_ID_LEN + 3 > b->len)
		return -1;
	for (i = 0; i < RT_ID_LEN; i++) {
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9')))
			return -1;
		id[i] = p[i];
	}
	id[RT_ID_LEN] = '\0';
	if (strncmp(p + RT_ID_LEN, "\"}\n", 3) != 0)
		return -1;
	(void)snprintf(want, sizeof(want), "id:%s\nevent:PB_CONNECT\n", id);
	return memmem(b->data, b->len, want, strlen(want)) != NULL ? 0 : -1;
}

/* Opens c through nginx and reads its PB_CONNECT; 0 or -1. */
static int
sse_open(const struct stack *s, struct sse *c)
{
	buf_init(&c->in, 0);
	c->id[0] = '\0';
	if ((c->fd = sse_connect(s, 0)) < 0)
		return -1;
	if (!sse_wait(c->fd, &c->in, "event:PB_CONNECT", 5000))
		return -1;
	/* The id and its closing "}\n" may come a moment later in a slow run. */
	(void)sse_wait(c->fd, &c->in, "\"}\n", 1000);
	return sse_client_id(&c->in, c->id);
}

static void
sse_close(struct sse *c)
{
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	buf_free(&c->in);
}

/* How many heartbeats (SSE comments, each its own chunk) b holds. */
static int
sse_beats(const struct buf *b)
{
	const char *p = b->data, *end = b->data + b->len, *q;
	int n = 0;

	while (p != NULL && p < end && (q = memmem(p, (size_t)(end - p), "\r\n:\n\n",
	    5)) != NULL) {
		n++;
		p = q + 5;
	}
	return n;
}

/* POSTs body to /api/realtime: the status, the body into out (may be NULL). */
static long
rt_post(const struct stack *s, const char *body, size_t len, struct buf *out)
{
	static const char *const headers[] = { "Content-Type: application/json", NULL };
	struct http_resp r;
	char url[256];
	long st;

	(void)snprintf(url, sizeof(url), "%s/api/realtime", s->base);
	http_resp_init(&r);
	(void)http_do("POST", url, headers, body, len, 5000, &r);
	st = r.status;
	if (out != NULL) {
		buf_reset(out, 0);
		if (r.body.len > 0)
			buf_append(out, r.body.data, r.body.len);
	}
	http_resp_free(&r);
	return st;
}

/* POST {"clientId":id,"subscriptions":[subs]} (subs: the array's inside, JSON). */
static long
rt_subscribe(const struct stack *s, const char *id, const char *subs, struct buf *out)
{
	struct buf b;
	long st;

	buf_init(&b, 0);
	buf_printf(&b, "{\"clientId\":\"%s\",\"subscriptions\":[%s]}", id, subs);
	st = rt_post(s, b.data, b.len, out);
	buf_free(&b);
	return st;
}

/* 1 when out is PocketBase's error of status with data holding member (NULL: {}). */
static int
pb_error(const struct buf *out, long status, const char *member)
{
	char st[32];

	(void)snprintf(st, sizeof(st), ",\"status\":%ld}", status);
	if (out->len == 0 || strncmp(out->data, "{\"data\":", 8) != 0 ||
	    strstr(out->data, "\"message\":\"") == NULL || strstr(out->data, st) == NULL)
		return 0;
	if (member == NULL)
		return strncmp(out->data, "{\"data\":{},", 11) == 0;
	return strstr(out->data, member) != NULL;
}

static int
rt_start(struct stack *s, const char *keys, const char *profile)
{
	char line[512];

	(void)snprintf(line, sizeof(line), "realtime =/api/realtime workers=1 threads=1 "
	    "stream=1 %s\n", keys);
	return stack_start(s, line, profile, 1, NULL);
}

/* The worker's pid, or 0. */
static pid_t
rt_worker(struct stack *s)
{
	pid_t pids[4];

	return stack_worker_pids(s, "realtime", pids, 4) == 1 ? pids[0] : 0;
}

/* Stops the stack; its worker is gone afterwards. */
static void
rt_stop(struct stack *s, pid_t worker)
{
	stack_stop(s);
	if (worker > 0)
		CHECK(kill(worker, 0) < 0 && errno == ESRCH);
}

static void
test_realtime_connect(void)
{
	struct stack s;
	struct sse a, b;
	struct buf conf;
	char path[512];
	FILE *f;
	char line[512];
	pid_t w;

	if (rt_start(&s, "realtime_heartbeat_ms=200", "tuned") < 0) {
		CHECK(!"stack started");
		return;
	}
	w = rt_worker(&s);
	CHECK(w > 0);
	/* The generated location passes the stream on as it comes. */
	buf_init(&conf, 0);
	(void)snprintf(path, sizeof(path), "%s/nginx.conf", s.prefix);
	if ((f = fopen(path, "r")) != NULL) {
		while (fgets(line, sizeof(line), f) != NULL)
			buf_puts(&conf, line);
		fclose(f);
	}
	CHECK(conf.len > 0 && strstr(conf.data, "location = /api/realtime") != NULL);
	CHECK(conf.len > 0 && strstr(conf.data, "fastcgi_buffering off;") != NULL);
	CHECK(conf.len > 0 && strstr(conf.data, "fastcgi_read_timeout 60s;") != NULL);
	buf_free(&conf);

	CHECK_INT(sse_open(&s, &a), 0);
	CHECK(a.in.len > 0 && strncmp(a.in.data, "HTTP/1.1 200", 12) == 0);
	CHECK(a.in.len > 0 && strcasestr(a.in.data, "Content-Type: text/event-stream") != NULL);
	CHECK_INT(sse_open(&s, &b), 0);
	CHECK(strcmp(a.id, b.id) != 0);
	/* Heartbeats every 200 ms: several within 1.5 s. */
	(void)sse_wait(a.fd, &a.in, "\r\n:\n\n\r\n:\n\n\r\n:\n\n", 1500);
	{
		long long end = stack_now_ms() + 1500;

		while (sse_beats(&a.in) < 3 && stack_now_ms() < end)
			(void)sse_read(a.fd, &a.in, 100);
	}
	printf("# %d heartbeats in the first stream\n", sse_beats(&a.in));
	CHECK(sse_beats(&a.in) >= 3);
	sse_close(&a);
	sse_close(&b);
	rt_stop(&s, w);
}

static void
test_realtime_subscribe(void)
{
	struct stack s;
	struct sse a;
	struct buf out, big;
	long long end;
	long st;
	int i;
	pid_t w;

	if (rt_start(&s, "", "tuned") < 0) {
		CHECK(!"stack started");
		return;
	}
	w = rt_worker(&s);
	buf_init(&out, 0);
	buf_init(&big, 0);
	CHECK_INT(sse_open(&s, &a), 0);
	CHECK_INT(rt_subscribe(&s, a.id, "\"posts/*\",\"comments/abc?options=%7B%7D\"", &out),
	    204);
	CHECK_INT((int)out.len, 0);
	CHECK_INT(rt_subscribe(&s, a.id, "", &out), 204);
	/* A client nobody has: 404 in PocketBase's words. */
	CHECK_INT(rt_subscribe(&s, "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa", "\"posts/*\"", &out),
	    404);
	CHECK_STR(out.data, "{\"data\":{},\"message\":\"Missing or invalid client id.\","
	    "\"status\":404}");
	CHECK_INT(rt_subscribe(&s, "short", "", &out), 404);
	/* Malformed bodies. */
	CHECK_INT(rt_post(&s, "{", 1, &out), 400);
	CHECK(pb_error(&out, 400, NULL));
	CHECK_INT(rt_post(&s, "[1,2]", 5, &out), 400);
	CHECK(pb_error(&out, 400, NULL));
	CHECK_INT(rt_post(&s, "", 0, &out), 400);
	CHECK_INT(rt_post(&s, "{}", 2, &out), 400);
	CHECK(pb_error(&out, 400, "\"clientId\""));
	CHECK_INT(rt_post(&s, "{\"clientId\":7}", 14, &out), 400);
	CHECK(pb_error(&out, 400, "\"clientId\""));
	CHECK_INT(rt_subscribe(&s, a.id, "1", &out), 400);
	CHECK(pb_error(&out, 400, "\"subscriptions\""));
	CHECK_INT(rt_subscribe(&s, a.id, "\"a\\u0001b\"", &out), 400);
	CHECK_INT(rt_subscribe(&s, a.id, "\"\"", &out), 400);
	/* 1000 subscriptions pass, 1001 do not. */
	for (i = 0; i < 1000; i++)
		buf_printf(&big, "%s\"posts/%d\"", i ? "," : "", i);
	CHECK_INT(rt_subscribe(&s, a.id, big.data, &out), 204);
	buf_puts(&big, ",\"one/more\"");
	CHECK_INT(rt_subscribe(&s, a.id, big.data, &out), 400);
	CHECK(pb_error(&out, 400, "\"subscriptions\""));
	/* A topic of 2500 bytes passes, 2501 do not. */
	buf_reset(&big, 0);
	buf_putc(&big, '"');
	for (i = 0; i < 2500; i++)
		buf_putc(&big, 'x');
	buf_putc(&big, '"');
	CHECK_INT(rt_subscribe(&s, a.id, big.data, &out), 204);
	buf_truncate(&big, big.len - 1);
	buf_puts(&big, "x\"");
	CHECK_INT(rt_subscribe(&s, a.id, big.data, &out), 400);
	/* Another method. */
	{
		struct http_resp r;
		char url[256], allow[64];

		(void)snprintf(url, sizeof(url), "%s/api/realtime", s.base);
		http_resp_init(&r);
		(void)http_do("DELETE", url, NULL, NULL, 0, 5000, &r);
		CHECK_INT(r.status, 405);
		CHECK(http_header(&r, "Allow", allow, sizeof(allow)) == 0 &&
		    strcmp(allow, "GET, POST") == 0);
		http_resp_free(&r);
	}
	/* The stream is still there after all that; once it closes, its id is unknown. */
	CHECK(sse_wait(a.fd, &a.in, "PB_CONNECT", 100));
	{
		char id[RT_ID_LEN + 1];

		memcpy(id, a.id, sizeof(id));
		sse_close(&a);
		end = stack_now_ms() + 3000;
		while ((st = rt_subscribe(&s, id, "", &out)) == 204 && stack_now_ms() < end)
			usleep(50 * 1000);
		CHECK_INT(st, 404);
	}
	buf_free(&out);
	buf_free(&big);
	rt_stop(&s, w);
}

static void
test_realtime_clients_cap(void)
{
	struct stack s;
	struct sse a, b, c;
	struct http_resp r;
	char url[256], retry[16];
	pid_t w;

	if (rt_start(&s, "realtime_clients=2", "tuned") < 0) {
		CHECK(!"stack started");
		return;
	}
	w = rt_worker(&s);
	CHECK_INT(sse_open(&s, &a), 0);
	CHECK_INT(sse_open(&s, &b), 0);
	(void)snprintf(url, sizeof(url), "%s/api/realtime", s.base);
	http_resp_init(&r);
	(void)http_do("GET", url, NULL, NULL, 0, 5000, &r);
	CHECK_INT(r.status, 503);
	CHECK(r.body.len > 0 && strcmp(r.body.data, "{\"data\":{},\"message\":\"Service "
	    "unavailable.\",\"status\":503}") == 0);
	CHECK(http_header(&r, "Retry-After", retry, sizeof(retry)) == 0);
	http_resp_free(&r);
	/* One leaves: a new one is taken. */
	sse_close(&a);
	usleep(300 * 1000);
	CHECK_INT(sse_open(&s, &c), 0);
	sse_close(&b);
	sse_close(&c);
	rt_stop(&s, w);
}

/* A FastCGI GET /api/realtime on the unix socket at path, never read after its first
 * bytes; -1 on failure. */
static int
fcgi_stream_at(const char *path)
{
	struct sockaddr_un sun;
	unsigned char req[256], *p = req;
	static const char m[] = "\016\003REQUEST_METHODGET";
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path))
		return -1;
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(fd);
		return -1;
	}
	p += http_fcgi_record(p, 1, 1, 8);
	memcpy(p, "\0\1\1\0\0\0\0\0", 8);
	p += 8;
	p += http_fcgi_record(p, 4, 1, sizeof(m) - 1);
	memcpy(p, m, sizeof(m) - 1);
	p += sizeof(m) - 1;
	p += http_fcgi_record(p, 4, 1, 0);
	p += http_fcgi_record(p, 5, 1, 0);
	if (write(fd, req, (size_t)(p - req)) != p - req) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The same on the stack's realtime pool. */
static int
fcgi_stream(const struct stack *s)
{
	char path[512];

	(void)snprintf(path, sizeof(path), "%s/realtime.sock", s->run);
	return fcgi_stream_at(path);
}

static void
test_realtime_slow_reader_dropped(void)
{
	struct stack s;
	struct sse fast;
	struct buf slow, out;
	long long t0, end, dropped_at = 0;
	int fd, beats_before, beats_after, eof = 0;
	char id[RT_ID_LEN + 1];
	long st, n;
	pid_t w;

	if (rt_start(&s, "realtime_heartbeat_ms=10 stream_buf=4096", "tuned") < 0) {
		CHECK(!"stack started");
		return;
	}
	w = rt_worker(&s);
	buf_init(&slow, 0);
	buf_init(&out, 0);
	CHECK_INT(sse_open(&s, &fast), 0);
	fd = fcgi_stream(&s);
	CHECK(fd >= 0);
	if (fd < 0)
		goto out;
	/* Its first bytes, for its id; then it reads nothing more. */
	CHECK(sse_wait(fd, &slow, "\"}\n", 3000));
	CHECK_INT(sse_client_id(&slow, id), 0);
	t0 = stack_now_ms();
	end = t0 + 60000;
	/* The fast one reads all along; the slow one is polled by its id until the worker
	 * has forgotten it (its buffer full, its connection dropped). */
	while (stack_now_ms() < end) {
		(void)sse_read(fast.fd, &fast.in, 20);
		if ((st = rt_subscribe(&s, id, "", &out)) == 404) {
			dropped_at = stack_now_ms();
			break;
		}
		CHECK_INT(st, 204);
		if (st != 204)
			break;
	}
	CHECK(dropped_at > 0);
	printf("# slow reader dropped after %lld ms\n", dropped_at - t0);
	/* What the kernel still held for it, then the end: the worker closed it. */
	end = stack_now_ms() + 5000;
	while (stack_now_ms() < end)
		if ((n = sse_read(fd, &slow, 100)) < 0) {
			eof = 1;
			break;
		}
	CHECK(eof);
	printf("# the slow reader had %zu bytes to read after it was dropped\n", slow.len);
	/* The fast one goes on receiving heartbeats after the drop. */
	beats_before = sse_beats(&fast.in);
	end = stack_now_ms() + 500;
	while (stack_now_ms() < end)
		(void)sse_read(fast.fd, &fast.in, 50);
	beats_after = sse_beats(&fast.in);
	printf("# fast reader: %d heartbeats in all, %d in the 0.5 s after the drop\n",
	    beats_after, beats_after - beats_before);
	CHECK(beats_after - beats_before >= 10);
	CHECK_INT(rt_subscribe(&s, fast.id, "\"posts/*\"", &out), 204);
	close(fd);
out:
	sse_close(&fast);
	buf_free(&slow);
	buf_free(&out);
	rt_stop(&s, w);
}

/* The Pss: line of /proc/PID/smaps_rollup in kB, or -1. */
static long
pss_kb(pid_t pid)
{
	char path[64], line[256];
	long kb = -1;
	FILE *f;

	(void)snprintf(path, sizeof(path), "/proc/%d/smaps_rollup", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "Pss:", 4) == 0) {
			kb = strtol(line + 4, NULL, 10);
			break;
		}
	fclose(f);
	return kb;
}

static void
test_realtime_thousand_idle(void)
{
	struct stack s;
	static struct sse c[RT_IDLE];
	struct rlimit rl;
	struct buf out;
	long base, held;
	long long end;
	int i, open = 0, connected = 0, ids = 0;
	pid_t w;

	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < RT_IDLE + 200) {
		CHECK(!"a descriptor limit of 1,200");
		return;
	}
	if (rt_start(&s, "", "tuned") < 0) {
		CHECK(!"stack started");
		return;
	}
	w = rt_worker(&s);
	buf_init(&out, 0);
	base = pss_kb(w);
	for (i = 0; i < RT_IDLE; i++) {
		buf_init(&c[i].in, 0);
		c[i].id[0] = '\0';
		if ((c[i].fd = sse_connect(&s, 1)) >= 0)
			open++;
	}
	CHECK_INT(open, RT_IDLE);
	/* Every one gets its PB_CONNECT. */
	end = stack_now_ms() + 30000;
	while (connected < open && stack_now_ms() < end) {
		connected = 0;
		for (i = 0; i < RT_IDLE; i++) {
			if (c[i].fd < 0)
				continue;
			if (c[i].id[0] == '\0') {
				(void)sse_read(c[i].fd, &c[i].in, 0);
				if (sse_client_id(&c[i].in, c[i].id) < 0)
					c[i].id[0] = '\0';
			}
			connected += c[i].id[0] != '\0';
		}
		if (connected < open)
			usleep(20 * 1000);
	}
	CHECK_INT(connected, RT_IDLE);
	for (i = 0; i < RT_IDLE; i++)
		ids += c[i].id[0] != '\0' && (i == 0 || strcmp(c[i].id, c[0].id) != 0);
	CHECK(ids >= RT_IDLE - 1);
	held = pss_kb(w);
	printf("# realtime worker: PSS %ld kB idle, %ld kB holding %d clients (%.1f kB a "
	    "client)\n", base, held, connected, connected > 0 ? (double)(held - base) /
	    connected : 0.0);
	CHECK(base > 0 && held > 0);
	/* Generous: a client costs a few kB (its connection, its parameters); ASan's
	 * quarantine keeps what is freed, so its build is only printed. */
	if (!stack_under_asan(w)) {
		CHECK(held < 64 * 1024);
		CHECK(held - base < RT_IDLE * 32);
	}
	/* The last one still subscribes; everything closes; the worker is still there. */
	CHECK_INT(rt_subscribe(&s, c[RT_IDLE - 1].id, "\"posts/*\"", &out), 204);
	for (i = 0; i < RT_IDLE; i++)
		sse_close(&c[i]);
	usleep(300 * 1000);
	CHECK(kill(w, 0) == 0);
	CHECK_INT(rt_worker(&s), w);
	buf_free(&out);
	rt_stop(&s, w);
}

/*
 * ctl reload of the pool: the old worker ends its streams properly (nginx ends the
 * client's chunked response, so an EventSource reconnects) and leaves; a new client is
 * served by the new worker, which does not know the old client.
 */
static void
test_realtime_reload_ends_streams(void)
{
	struct stack s;
	struct sse a, b;
	struct buf out;
	long long t0, end;
	pid_t w, w2 = 0;

	if (rt_start(&s, "", "tuned") < 0) {
		CHECK(!"stack started");
		return;
	}
	w = rt_worker(&s);
	buf_init(&out, 0);
	CHECK_INT(sse_open(&s, &a), 0);
	t0 = stack_now_ms();
	CHECK_INT(stack_ctl(&s, NULL, "reload realtime"), 0);
	/* The last chunk of the response: the stream ended, not cut. */
	CHECK(sse_wait(a.fd, &a.in, "\r\n0\r\n\r\n", 5000));
	printf("# the stream ended %lld ms after the reload\n", stack_now_ms() - t0);
	end = stack_now_ms() + 5000;
	while (stack_now_ms() < end && ((w2 = rt_worker(&s)) == 0 || w2 == w ||
	    kill(w, 0) == 0))
		usleep(50 * 1000);
	CHECK(w2 > 0 && w2 != w);
	CHECK(kill(w, 0) < 0 && errno == ESRCH);
	CHECK_INT(sse_open(&s, &b), 0);
	CHECK(strcmp(a.id, b.id) != 0);
	CHECK_INT(rt_subscribe(&s, a.id, "", &out), 404);
	CHECK_INT(rt_subscribe(&s, b.id, "\"posts/*\"", &out), 204);
	sse_close(&a);
	sse_close(&b);
	buf_free(&out);
	rt_stop(&s, w2);
}

/* The worker's CPU time in clock ticks (utime + stime of /proc/PID/stat), or -1. */
static long
cpu_ticks(pid_t pid)
{
	char path[64], line[1024], *p;
	unsigned long ut = 0, st = 0;
	FILE *f;
	int i;

	(void)snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	p = fgets(line, sizeof(line), f);
	fclose(f);
	if (p == NULL || (p = strrchr(line, ')')) == NULL)
		return -1;
	/* After the name: state is field 3; utime and stime are fields 14 and 15. */
	for (i = 2; i < 14 && p != NULL; i++)
		p = strchr(p + 1, ' ');
	if (p == NULL || sscanf(p, " %lu %lu", &ut, &st) != 2)
		return -1;
	return (long)(ut + st);
}

/*
 * The worker out of descriptors: bin/realtime run alone (-s PATH) with a limit of 40
 * descriptors, 60 FastCGI clients on its socket.  It does not spin on its level-triggered
 * listening socket (under 0.1 s of CPU in 1 s; 0.4 s when it spun), keeps the clients it
 * holds, takes new ones once they have left, and leaves at SIGTERM.
 */
static void
test_realtime_descriptors_run_out(void)
{
	enum { N = 60 };
	const char *bin = getenv("SLUICE_BIN");
	char dir[] = "/tmp/sluice-rt-XXXXXX", path[128], exe[4096];
	int fd[N], i, held = 0, late, status;
	struct buf in;
	long t0, t1;
	pid_t w;

	if (mkdtemp(dir) == NULL) {
		CHECK(!"a temporary directory");
		return;
	}
	(void)snprintf(path, sizeof(path), "%s/rt.sock", dir);
	(void)snprintf(exe, sizeof(exe), "%s/realtime", bin != NULL ? bin : "bin");
	if ((w = fork()) == 0) {
		struct rlimit rl = { 40, 40 };

		(void)setrlimit(RLIMIT_NOFILE, &rl);
		execl(exe, exe, "-s", path, (char *)NULL);
		_exit(127);
	}
	CHECK(w > 0);
	if (w <= 0)
		return;
	for (i = 0; i < 100 && access(path, F_OK) != 0; i++)
		usleep(20 * 1000);
	buf_init(&in, 0);
	for (i = 0; i < N; i++)
		fd[i] = fcgi_stream_at(path);
	usleep(500 * 1000);
	t0 = cpu_ticks(w);
	usleep(1000 * 1000);
	t1 = cpu_ticks(w);
	for (i = 0; i < N; i++) {
		buf_reset(&in, 0);
		if (fd[i] >= 0 && sse_read(fd[i], &in, 0) > 0 &&
		    memmem(in.data, in.len, "event:PB_CONNECT", 16) != NULL)
			held++;
	}
	printf("# %d of %d clients held at 40 descriptors; %ld ticks of CPU in the next "
	    "second\n", held, N, t1 - t0);
	CHECK(held >= 20 && held < N);
	CHECK(t0 >= 0 && t1 >= t0 && t1 - t0 < 10);
	for (i = 0; i < N; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	/* Once they have gone, a new client is served (within the 100 ms rest, and a
	 * margin). */
	usleep(500 * 1000);
	late = fcgi_stream_at(path);
	buf_reset(&in, 0);
	CHECK(late >= 0 && sse_wait(late, &in, "event:PB_CONNECT", 3000));
	if (late >= 0)
		close(late);
	CHECK(kill(w, SIGTERM) == 0);
	status = stack_reap(w, 3000);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	buf_free(&in);
	(void)unlink(path);
	(void)rmdir(dir);
}

/* POST {"clientId":id,"subscriptions":[subs]} with Authorization auth (NULL: none). */
static long
rt_subscribe_as(const struct stack *s, const char *id, const char *subs, const char *auth,
    struct buf *out)
{
	char hauth[2200];
	const char *headers[] = { "Content-Type: application/json", NULL, NULL };
	struct http_resp r;
	struct buf b;
	char url[256];
	long st;

	if (auth != NULL) {
		(void)snprintf(hauth, sizeof(hauth), "Authorization: %s", auth);
		headers[1] = hauth;
	}
	buf_init(&b, 0);
	buf_printf(&b, "{\"clientId\":\"%s\",\"subscriptions\":[%s]}", id, subs);
	(void)snprintf(url, sizeof(url), "%s/api/realtime", s->base);
	http_resp_init(&r);
	(void)http_do("POST", url, headers, b.data, b.len, 5000, &r);
	st = r.status;
	buf_reset(out, 0);
	if (r.body.len > 0)
		buf_append(out, r.body.data, r.body.len);
	http_resp_free(&r);
	buf_free(&b);
	return st;
}

/* Seeded user n's token from auth-with-password on s, into tok[len]; 0 or -1. */
static int
rt_signin(const struct stack *s, int n, char *tok, size_t len)
{
	static const char *const headers[] = { "Content-Type: application/json", NULL };
	struct http_resp r;
	char url[256], body[128];
	const char *p, *e;
	int rc = -1;

	(void)snprintf(url, sizeof(url), "%s/api/collections/users/auth-with-password", s->base);
	(void)snprintf(body, sizeof(body), "{\"identity\":\"user%04d@example.com\","
	    "\"password\":\"password123\"}", n);
	http_resp_init(&r);
	if (http_do("POST", url, headers, body, strlen(body), 10000, &r) == 0 &&
	    r.status == 200 && r.body.data != NULL &&
	    (p = strstr(r.body.data, "\"token\":\"")) != NULL &&
	    (e = strchr(p + 9, '"')) != NULL && (size_t)(e - p - 9) < len) {
		memcpy(tok, p + 9, (size_t)(e - p - 9));
		tok[e - p - 9] = '\0';
		rc = 0;
	}
	http_resp_free(&r);
	return rc;
}

/*
 * The subscriber's auth: a realtime pool with the records database (db=records) and the
 * records API beside it.  A POST carrying a user's token is accepted and the client keeps
 * that user; another user's token, or none, on the same client is 403 in PocketBase's
 * words; a token that does not verify (forged signature, unknown record) is 401; an
 * anonymous client may subscribe and later sign in; a pool without a database refuses
 * any token (401) and still serves anonymous clients.
 */
static void
test_realtime_auth(void)
{
	struct stack s, bare;
	struct sse a, b, c;
	struct buf out;
	char db[128], key[128], conf[1024], ta[1024], tb[1024], bad[1100], bearer[1100];
	FILE *f;
	size_t n;

	(void)snprintf(db, sizeof(db), "/tmp/sluice-realtime-%d.db", (int)getpid());
	(void)snprintf(key, sizeof(key), "/tmp/sluice-realtime-%d.key", (int)getpid());
	unlink(db);
	if ((f = fopen(key, "w")) == NULL) {
		CHECK(!"secret written");
		return;
	}
	fprintf(f, "%s\n", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	CHECK_INT(fclose(f), 0);
	(void)stack_sh("chmod 644 %s", key);
	{
		const char *tests = getenv("SLUICE_TESTS");

		CHECK_INT(stack_sh("%s/../sql/records-seed -q -u 2 -p 1 -c 1 -S sql/records "
		    "'sqlite:%s'", tests ? tests : "build/rel/tests", db), 0);
	}
	(void)stack_sh("chmod 666 %s", db);
	(void)snprintf(conf, sizeof(conf), "db records sqlite:%s\n"
	    "records /api/ workers=1 threads=1 db=records records_secret_file=%s "
	    "bcrypt_cost=4\n"
	    "realtime =/api/realtime workers=1 threads=1 stream=1 db=records "
	    "records_secret_file=%s\n", db, key, key);
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		unlink(db);
		unlink(key);
		return;
	}
	buf_init(&out, 0);
	ta[0] = tb[0] = '\0';
	CHECK_INT(rt_signin(&s, 1, ta, sizeof(ta)), 0);
	CHECK_INT(rt_signin(&s, 2, tb, sizeof(tb)), 0);
	CHECK_INT(sse_open(&s, &a), 0);
	CHECK_INT(sse_open(&s, &b), 0);
	CHECK_INT(sse_open(&s, &c), 0);
	/* A subscribes as user 1 (with and without "Bearer "): accepted, and again. */
	CHECK_INT(rt_subscribe_as(&s, a.id, "\"posts/*\"", ta, &out), 204);
	(void)snprintf(bearer, sizeof(bearer), "Bearer %s", ta);
	CHECK_INT(rt_subscribe_as(&s, a.id, "\"posts/*\"", bearer, &out), 204);
	/* Another user, or no one, on A's client: 403. */
	CHECK_INT(rt_subscribe_as(&s, a.id, "\"posts/*\"", tb, &out), 403);
	CHECK_STR(out.data, "{\"data\":{},\"message\":\"The current and the previous request "
	    "authorization don't match.\",\"status\":403}");
	CHECK_INT(rt_subscribe_as(&s, a.id, "\"posts/*\"", NULL, &out), 403);
	CHECK(pb_error(&out, 403, NULL));
	/* A token whose signature is altered: 401, the records API's answer. */
	n = strlen(ta);
	memcpy(bad, ta, n + 1);
	if (n > 2)
		bad[n - 2] = bad[n - 2] == 'A' ? 'B' : 'A';
	CHECK(n > 2);
	CHECK_INT(rt_subscribe_as(&s, b.id, "\"posts/*\"", bad, &out), 401);
	CHECK(pb_error(&out, 401, NULL));
	CHECK_INT(rt_subscribe_as(&s, b.id, "\"posts/*\"", "garbage", &out), 401);
	/* B anonymous first, then signs in as user 2; then user 1 is refused. */
	CHECK_INT(rt_subscribe_as(&s, b.id, "\"posts/*\"", NULL, &out), 204);
	CHECK_INT(rt_subscribe_as(&s, b.id, "\"posts/*\"", tb, &out), 204);
	CHECK_INT(rt_subscribe_as(&s, b.id, "\"posts/*\"", ta, &out), 403);
	/* C stays anonymous. */
	CHECK_INT(rt_subscribe_as(&s, c.id, "\"posts/*\"", NULL, &out), 204);
	CHECK_INT(rt_subscribe_as(&s, c.id, "", NULL, &out), 204);
	/* The streams are still there. */
	CHECK(sse_wait(a.fd, &a.in, "PB_CONNECT", 100));
	sse_close(&a);
	sse_close(&b);
	sse_close(&c);
	stack_stop(&s);
	/* A pool without a database cannot check a token: 401; anonymous still works. */
	if (rt_start(&bare, "", "tuned") < 0) {
		CHECK(!"stack started");
	} else {
		CHECK_INT(sse_open(&bare, &a), 0);
		CHECK_INT(rt_subscribe_as(&bare, a.id, "\"posts/*\"", ta, &out), 401);
		CHECK_INT(rt_subscribe_as(&bare, a.id, "\"posts/*\"", NULL, &out), 204);
		sse_close(&a);
		stack_stop(&bare);
	}
	buf_free(&out);
	(void)stack_sh("rm -f %s %s-shm %s-wal %s-wlock", db, db, db, db);
	unlink(key);
}

/* method on path of s with token auth and body (may be NULL): the status, the body in
 * out. */
static long
rt_call(const struct stack *s, const char *method, const char *path, const char *auth,
    const char *body, struct buf *out)
{
	char hauth[2200], url[512];
	const char *headers[] = { "Content-Type: application/json", hauth, NULL };
	struct http_resp r;
	long st;

	(void)snprintf(hauth, sizeof(hauth), "Authorization: %s", auth);
	(void)snprintf(url, sizeof(url), "%s%s", s->base, path);
	http_resp_init(&r);
	(void)http_do(method, url, headers, body, body ? strlen(body) : 0, 10000, &r);
	st = r.status;
	buf_reset(out, 0);
	if (r.body.len > 0)
		buf_append(out, r.body.data, r.body.len);
	http_resp_free(&r);
	return st;
}

/* The value of the first "key":"..." after from in text, into out[16]; 0 or -1. */
static int
rt_json_id(const char *text, const char *from, char out[16])
{
	const char *p = text != NULL ? strstr(text, from) : NULL;

	if (p == NULL || (p = strstr(p, "\"id\":\"")) == NULL || strlen(p + 6) < 16 ||
	    p[6 + 15] != '"')
		return -1;
	memcpy(out, p + 6, 15);
	out[15] = '\0';
	return 0;
}

/* The next datagram on fd within ms into out[len] (NUL-terminated): its length or -1. */
static ssize_t
rt_dgram(int fd, char *out, size_t len, int ms)
{
	struct pollfd p = { fd, POLLIN, 0 };
	ssize_t n;

	if (poll(&p, 1, ms) != 1 || (n = recv(fd, out, len - 1, MSG_DONTWAIT)) < 0)
		return -1;
	out[n] = '\0';
	return n;
}

/*
 * Publishing: the records pool with realtime_socket= announces each committed create,
 * update and delete with one datagram naming the action, the collection and the record
 * (a delete's with the record's columns);
 * a write that fails announces nothing; with the socket gone the writes still succeed.
 */
static void
test_realtime_publish(void)
{
	struct stack s;
	struct sockaddr_un sa;
	struct buf out;
	char db[128], key[128], sock[108], conf[1024], tok[1024], uid[16], pid[16], want[256];
	char dg[4096], path[256];
	const char *tests = getenv("SLUICE_TESTS");
	FILE *f;
	int fd;

	(void)snprintf(db, sizeof(db), "/tmp/sluice-rtpub-%d.db", (int)getpid());
	(void)snprintf(key, sizeof(key), "/tmp/sluice-rtpub-%d.key", (int)getpid());
	(void)snprintf(sock, sizeof(sock), "/tmp/sluice-rtpub-%d.sock", (int)getpid());
	unlink(db);
	unlink(sock);
	if ((f = fopen(key, "w")) == NULL) {
		CHECK(!"secret written");
		return;
	}
	fprintf(f, "%s\n", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	CHECK_INT(fclose(f), 0);
	(void)stack_sh("chmod 644 %s", key);
	CHECK_INT(stack_sh("%s/../sql/records-seed -q -u 2 -p 1 -c 1 -S sql/records "
	    "'sqlite:%s'", tests ? tests : "build/rel/tests", db), 0);
	(void)stack_sh("chmod 666 %s", db);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	memcpy(sa.sun_path, sock, strlen(sock) + 1);
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	CHECK(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	/* The workers may run as another user (as root, the run user). */
	(void)stack_sh("chmod 666 %s", sock);
	(void)snprintf(conf, sizeof(conf), "db records sqlite:%s\n"
	    "records /api/ workers=1 threads=2 db=records records_secret_file=%s "
	    "bcrypt_cost=4 realtime_socket=%s\n", db, key, sock);
	if (fd < 0 || stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	buf_init(&out, 0);
	uid[0] = pid[0] = '\0';
	CHECK_INT(rt_signin(&s, 1, tok, sizeof(tok)), 0);
	{
		static const char *const h[] = { "Content-Type: application/json", NULL };
		struct http_resp r;
		char url[256];

		(void)snprintf(url, sizeof(url), "%s/api/collections/users/auth-with-password",
		    s.base);
		http_resp_init(&r);
		(void)http_do("POST", url, h, "{\"identity\":\"user0001@example.com\","
		    "\"password\":\"password123\"}", 60, 10000, &r);
		CHECK_INT(rt_json_id(r.body.data, "\"record\":", uid), 0);
		http_resp_free(&r);
	}
	/* A create: one datagram after it, naming it. */
	(void)snprintf(dg, sizeof(dg), "{\"title\":\"hello\",\"author\":\"%s\"}", uid);
	CHECK_INT(rt_call(&s, "POST", "/api/collections/posts/records", tok, dg, &out), 200);
	CHECK_INT(rt_json_id(out.data, "{", pid), 0);
	(void)snprintf(want, sizeof(want), "{\"action\":\"create\",\"collection\":"
	    "\"pbc_1125843985\",\"collectionName\":\"posts\",\"record\":\"%s\"}", pid);
	CHECK(rt_dgram(fd, dg, sizeof(dg), 5000) > 0 && strcmp(dg, want) == 0);
	/* An update, then a delete. */
	(void)snprintf(path, sizeof(path), "/api/collections/posts/records/%s", pid);
	CHECK_INT(rt_call(&s, "PATCH", path, tok, "{\"title\":\"again\"}", &out), 200);
	CHECK(rt_dgram(fd, dg, sizeof(dg), 5000) > 0 && strstr(dg, "\"action\":\"update\"") &&
	    strstr(dg, pid) != NULL);
	CHECK_INT(rt_call(&s, "DELETE", path, tok, NULL, &out), 204);
	CHECK(rt_dgram(fd, dg, sizeof(dg), 5000) > 0 && strstr(dg, "\"action\":\"delete\"") &&
	    strstr(dg, pid) != NULL);
	/* A delete carries the record's columns as its DELETE returned them. */
	(void)snprintf(want, sizeof(want), "\"row\":{\"id\":\"%s\",\"title\":\"again\"", pid);
	CHECK(strstr(dg, want) != NULL);
	/* A write that fails (the record is gone) announces nothing. */
	CHECK_INT(rt_call(&s, "DELETE", path, tok, NULL, &out), 404);
	CHECK(rt_dgram(fd, dg, sizeof(dg), 300) < 0);
	/* Nobody listening: the write still succeeds. */
	(void)close(fd);
	fd = -1;
	unlink(sock);
	(void)snprintf(dg, sizeof(dg), "{\"title\":\"unheard\",\"author\":\"%s\"}", uid);
	CHECK_INT(rt_call(&s, "POST", "/api/collections/posts/records", tok, dg, &out), 200);
	buf_free(&out);
	stack_stop(&s);
out:
	if (fd >= 0)
		(void)close(fd);
	unlink(sock);
	(void)stack_sh("rm -f %s %s-shm %s-wal %s-wlock", db, db, db, db);
	unlink(key);
}

/*
 * The realtime worker reads the records pool's announcements: both pools given the same
 * realtime_socket=, a create is read by the realtime worker (its debug log says so) and
 * reaches the subscriber of posts/"*" as PocketBase's event (the rules and the other
 * cases: test_realtime_delivery).
 */
static void
test_realtime_events_read(void)
{
	struct stack s;
	struct sse a;
	struct buf out;
	char db[128], key[128], sock[108], conf[1200], tok[1024], uid[16], body[256];
	const char *tests = getenv("SLUICE_TESTS");
	long long end;
	FILE *f;

	(void)snprintf(db, sizeof(db), "/tmp/sluice-rtread-%d.db", (int)getpid());
	(void)snprintf(key, sizeof(key), "/tmp/sluice-rtread-%d.key", (int)getpid());
	(void)snprintf(sock, sizeof(sock), "/tmp/sluice-rtread-%d.sock", (int)getpid());
	unlink(db);
	if ((f = fopen(key, "w")) == NULL) {
		CHECK(!"secret written");
		return;
	}
	fprintf(f, "%s\n", "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff");
	CHECK_INT(fclose(f), 0);
	(void)stack_sh("chmod 644 %s", key);
	CHECK_INT(stack_sh("%s/../sql/records-seed -q -u 2 -p 1 -c 1 -S sql/records "
	    "'sqlite:%s'", tests ? tests : "build/rel/tests", db), 0);
	(void)stack_sh("chmod 666 %s", db);
	(void)snprintf(conf, sizeof(conf), "db records sqlite:%s\n"
	    "records /api/ workers=1 threads=2 db=records records_secret_file=%s "
	    "bcrypt_cost=4 realtime_socket=%s\n"
	    "realtime =/api/realtime workers=1 threads=1 stream=1 db=records "
	    "records_secret_file=%s realtime_socket=%s log_level=debug\n", db, key, sock, key,
	    sock);
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	buf_init(&out, 0);
	uid[0] = '\0';
	CHECK_INT(rt_signin(&s, 1, tok, sizeof(tok)), 0);
	CHECK_INT(sse_open(&s, &a), 0);
	CHECK_INT(rt_subscribe_as(&s, a.id, "\"posts/*\"", tok, &out), 204);
	{
		static const char *const h[] = { "Content-Type: application/json", NULL };
		struct http_resp r;
		char url[256];

		(void)snprintf(url, sizeof(url), "%s/api/collections/users/auth-with-password",
		    s.base);
		http_resp_init(&r);
		(void)http_do("POST", url, h, "{\"identity\":\"user0001@example.com\","
		    "\"password\":\"password123\"}", 60, 10000, &r);
		CHECK_INT(rt_json_id(r.body.data, "\"record\":", uid), 0);
		http_resp_free(&r);
	}
	(void)snprintf(body, sizeof(body), "{\"title\":\"read\",\"author\":\"%s\"}", uid);
	CHECK_INT(rt_call(&s, "POST", "/api/collections/posts/records", tok, body, &out), 200);
	end = stack_now_ms() + 5000;
	while (stack_log_count(&s, "realtime: event 1 read: {\"action\":\"create\"") < 1 &&
	    stack_now_ms() < end)
		usleep(50 * 1000);
	CHECK_INT(stack_log_count(&s, "realtime: event 1 read: {\"action\":\"create\""), 1);
	/* The subscriber hears it. */
	CHECK(sse_wait(a.fd, &a.in, "event:posts/*\ndata:{\"action\":\"create\",\"record\":{",
	    5000));
	CHECK(sse_wait(a.fd, &a.in, "\"title\":\"read\"", 1000));
	/* Only the pools' user and group may announce: the socket is mode 0660. */
	{
		struct stat st;

		CHECK(stat(sock, &st) == 0 && S_ISSOCK(st.st_mode));
		CHECK_INT(st.st_mode & 0777, 0660);
	}
	sse_close(&a);
	buf_free(&out);
	stack_stop(&s);
out:
	unlink(sock);
	(void)stack_sh("rm -f %s %s-shm %s-wal %s-wlock", db, db, db, db);
	unlink(key);
}

/* The PocketBase SDK's pb.realtime (tests/js/realtime.test.mjs). */
static void
test_realtime_js(void)
{
	struct stack s;
	char env[256];
	pid_t w;

	if (jsrun_install("eventsource") < 0 || jsrun_install("pocketbase") < 0) {
		CHECK(!"npm ci installed eventsource and pocketbase in tests/js, and node runs");
		return;
	}
	if (rt_start(&s, "", "tuned") < 0) {
		CHECK(!"stack started");
		return;
	}
	w = rt_worker(&s);
	(void)snprintf(env, sizeof(env), "REALTIME_URL='%s'", s.base);
	CHECK_INT(jsrun(env, "realtime.test.mjs", "realtime"), 0);
	rt_stop(&s, w);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_realtime_connect);
	RUN(test_realtime_subscribe);
	RUN(test_realtime_clients_cap);
	RUN(test_realtime_slow_reader_dropped);
	RUN(test_realtime_thousand_idle);
	RUN(test_realtime_reload_ends_streams);
	RUN(test_realtime_descriptors_run_out);
	RUN(test_realtime_js);
	RUN(test_realtime_auth);
	RUN(test_realtime_publish);
	RUN(test_realtime_events_read);
	return harness_done();
}
