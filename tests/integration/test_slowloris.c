/*
 * test_slowloris: slow clients against the real stack, in both nginx profiles at once
 * (default and tuned, each nginx + sluiced + bin/health + bin/rest on SQLite, the rest
 * pool deliberately tiny: one worker of two threads).
 *
 * Against each stack, SLOW_CONNS raw connections (nonblocking sockets, all driven by one
 * thread with poll): half send a request header one byte a second and never finish it
 * (slowloris), half send a complete POST header with Content-Length 1000 and then the body
 * one byte a second (slow body).  A connection the server closes is opened again, so the
 * pressure stays.  Meanwhile a normal client requests /health and a rest GET from each
 * stack in turn, over new connections.
 *
 * What must hold: every request of the normal client completes with 200 within
 * NORMAL_MAX_MS (a generous, documented bound: unloaded they take a few ms; the
 * latencies seen are printed), the workers never see a slow request (nginx buffers
 * headers and bodies before it passes a request on, so even a rest pool of two
 * connections keeps serving), and nginx cuts off every slowloris connection once
 * client_header_timeout (10 s, supervisor/nginxconf.c) has passed: the test runs RUN_MS
 * (14 s), and every one of the first wave (opened at the start) must have been closed by
 * the server by then.  The open-file limit is raised to its hard limit for the 1,000
 * sockets (plus curl's).
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "db.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

#define SLOW_CONNS	500		/* per stack */
#define RUN_MS		14000
#define NORMAL_MAX_MS	5000
#define MAXLAT		20000

enum { KIND_HEADER, KIND_BODY };

struct slow {
	int fd;
	int stack;
	int kind;
	int first_wave;
	size_t sent;		/* bytes of the header sent (KIND_BODY: 0 until sent whole) */
	long long next;		/* when the next byte is due */
	long long opened;
};

static struct stack stacks[2];
static const char *const profiles[2] = { "default", "tuned" };
static char dir[64];
static struct slow conns[2 * SLOW_CONNS];

/* What the normal client saw, per stack and route (0 /health, 1 rest). */
static struct {
	long long ms[MAXLAT];
	int n;
	int bad;
	long long worst;
} lat[2][2];
static volatile int normal_stop;

/* Connection counters per stack. */
static struct {
	int opened;
	int first_closed;	/* first-wave slowloris connections the server closed */
	int first_total;
	int closed;		/* all closes by the server */
	int failed;		/* connect errors */
	long long first_close_ms;	/* age of the first slowloris connection closed */
	long long last_close_ms;	/* the oldest age at which one was closed */
} cnt[2];

static const char head_get[] = "GET /health HTTP/1.1\r\nHost: localhost\r\nX-Slow: ";
static const char head_post[] = "POST /rest/v1/artist HTTP/1.1\r\nHost: localhost\r\n"
    "Content-Type: application/json\r\nContent-Length: 1000\r\n\r\n";

static int
slow_open(struct slow *c, int k, int kind, int first, long long now)
{
	struct sockaddr_in sa;
	int fd;

	memset(c, 0, sizeof(*c));
	c->fd = -1;
	c->stack = k;
	c->kind = kind;
	c->first_wave = first;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)stacks[k].port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		cnt[k].failed++;
		return -1;
	}
	c->fd = fd;
	c->opened = now;
	/* Spread the first bytes over a second so that the sends do not come in bursts. */
	c->next = now + 50 + rand() % 1000;
	cnt[k].opened++;
	return 0;
}

/* Sends what is due on c: one byte, or (slow body) the whole header first.  Returns -1
 * when the connection is gone. */
static int
slow_send(struct slow *c, long long now)
{
	const char *p;
	size_t len;
	ssize_t n;

	if (c->kind == KIND_BODY && c->sent == 0) {
		p = head_post;
		len = sizeof(head_post) - 1;
	} else if (c->kind == KIND_HEADER && c->sent < sizeof(head_get) - 1) {
		p = head_get + c->sent;
		len = 1;
	} else {
		p = "a";
		len = 1;
	}
	n = send(c->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
	if (n < 0) {
		/* Still connecting: try again on the next tick. */
		if (errno == EAGAIN || errno == ENOTCONN || errno == EINPROGRESS)
			return 0;
		return -1;
	}
	if (c->kind == KIND_BODY && c->sent == 0) {
		if ((size_t)n < len)
			return -1;	/* a partial header on an empty socket: should not happen */
		c->sent = len;
	} else
		c->sent += (size_t)n;
	c->next = now + 1000;
	return 0;
}

static void *
normal_client(void *arg)
{
	char url[2][2][128];
	struct http_resp r;
	int k, j;

	(void)arg;
	for (k = 0; k < 2; k++) {
		snprintf(url[k][0], sizeof(url[k][0]), "%s/health", stacks[k].base);
		snprintf(url[k][1], sizeof(url[k][1]), "%s/rest/v1/artist?artist_id=eq.1",
		    stacks[k].base);
	}
	http_resp_init(&r);
	while (!normal_stop)
		for (k = 0; k < 2; k++)
			for (j = 0; j < 2; j++) {
				long long t0 = stack_now_ms(), ms;

				http_do("GET", url[k][j], NULL, NULL, 0, 10000, &r);
				ms = stack_now_ms() - t0;
				if (r.status != 200 || ms > NORMAL_MAX_MS)
					lat[k][j].bad++;
				if (ms > lat[k][j].worst)
					lat[k][j].worst = ms;
				if (lat[k][j].n < MAXLAT)
					lat[k][j].ms[lat[k][j].n++] = ms;
				usleep(20 * 1000);
			}
	http_resp_free(&r);
	return NULL;
}

static int
cmp_ll(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

static int
setup(void)
{
	static const char schema[] =
	    "create table artist (artist_id integer primary key, name text);\n"
	    "insert into artist values (1, 'AC/DC'), (2, 'Accept');\n";
	char url[128], conf[512], err[256];
	struct rlimit rl;
	struct db *db;
	int k, rc;

	signal(SIGPIPE, SIG_IGN);
	/* 1,000 sockets here, plus curl's: raise the soft limit as far as allowed. */
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur < 2 * SLOW_CONNS + 200) {
		fprintf(stderr, "open-file limit %lu: too low for %d connections\n",
		    (unsigned long)rl.rlim_cur, 2 * SLOW_CONNS);
		return -1;
	}
	snprintf(dir, sizeof(dir), "/tmp/sluice-slowloris-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(url, sizeof(url), "sqlite:%s/rest.db", dir);
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	rc = db_exec(db, schema);
	db_close(db);
	if (rc < 0)
		return -1;
	snprintf(conf, sizeof(conf), "db chinook %s\nhealth =/health workers=2 threads=2\n"
	    "rest /rest/v1/ workers=1 threads=2 db=chinook\n", url);
	for (k = 0; k < 2; k++)
		if (stack_start(&stacks[k], conf, profiles[k], 2, NULL) < 0)
			return -1;
	return 0;
}

static void
test_slowloris(void)
{
	struct pollfd *pfd;
	int *idx;
	pthread_t tid;
	long long start, now;
	char buf[512];
	int i, k, j, n, m;

	if ((pfd = calloc(2 * SLOW_CONNS, sizeof(*pfd))) == NULL ||
	    (idx = calloc(2 * SLOW_CONNS, sizeof(*idx))) == NULL) {
		free(pfd);
		CHECK(!"memory");
		return;
	}
	start = stack_now_ms();
	for (i = 0; i < 2 * SLOW_CONNS; i++) {
		k = i / SLOW_CONNS;
		if (slow_open(&conns[i], k, i % 2 ? KIND_BODY : KIND_HEADER, 1, start) == 0 &&
		    i % 2 == 0)
			cnt[k].first_total++;
	}
	printf("  %d connections open to each stack in %lld ms\n", SLOW_CONNS,
	    stack_now_ms() - start);
	normal_stop = 0;
	if (pthread_create(&tid, NULL, normal_client, NULL) != 0) {
		CHECK(!"thread started");
		goto out;
	}
	while ((now = stack_now_ms()) - start < RUN_MS) {
		for (i = 0, n = 0; i < 2 * SLOW_CONNS; i++)
			if (conns[i].fd >= 0) {
				pfd[n].fd = conns[i].fd;
				pfd[n].events = POLLIN;
				pfd[n].revents = 0;
				idx[n++] = i;
			}
		if (poll(pfd, (nfds_t)n, 20) < 0 && errno != EINTR) {
			CHECK(!"poll");
			break;
		}
		now = stack_now_ms();
		for (m = 0; m < n; m++) {
			struct slow *c = &conns[idx[m]];
			int gone = 0;

			if (pfd[m].revents & (POLLIN | POLLHUP | POLLERR)) {
				ssize_t r = recv(c->fd, buf, sizeof(buf), MSG_DONTWAIT);

				/* nginx answers nothing to a slow client: it closes (or resets). */
				if (r == 0 || (r < 0 && errno != EAGAIN && errno != EINTR) || r > 0)
					gone = 1;
			}
			if (!gone && now >= c->next && slow_send(c, now) < 0)
				gone = 1;
			if (!gone)
				continue;
			k = c->stack;
			cnt[k].closed++;
			if (c->kind == KIND_HEADER && c->first_wave) {
				long long age = now - c->opened;

				cnt[k].first_closed++;
				if (cnt[k].first_close_ms == 0 || age < cnt[k].first_close_ms)
					cnt[k].first_close_ms = age;
				if (age > cnt[k].last_close_ms)
					cnt[k].last_close_ms = age;
			}
			close(c->fd);
			c->fd = -1;
			/* Keep the pressure on. */
			slow_open(c, k, c->kind, 0, now);
		}
	}
	normal_stop = 1;
	pthread_join(tid, NULL);

	for (k = 0; k < 2; k++) {
		printf("  %s profile: %d slow connections opened, %d closed by nginx (%d of the "
		    "first %d slowloris ones, aged %lld to %lld ms), %d connect errors\n",
		    profiles[k], cnt[k].opened, cnt[k].closed, cnt[k].first_closed,
		    cnt[k].first_total, cnt[k].first_close_ms, cnt[k].last_close_ms,
		    cnt[k].failed);
		for (j = 0; j < 2; j++) {
			int nn = lat[k][j].n;

			qsort(lat[k][j].ms, (size_t)nn, sizeof(lat[k][j].ms[0]), cmp_ll);
			printf("    normal client %-7s %4d requests, %d bad; ms min %lld, median "
			    "%lld, p99 %lld, max %lld\n", j ? "rest" : "/health", nn, lat[k][j].bad,
			    nn ? lat[k][j].ms[0] : 0, nn ? lat[k][j].ms[nn / 2] : 0,
			    nn ? lat[k][j].ms[nn * 99 / 100] : 0, lat[k][j].worst);
			CHECK(nn >= 10);
			CHECK_INT(lat[k][j].bad, 0);
		}
		CHECK_INT(cnt[k].failed, 0);
		CHECK_INT(cnt[k].first_total, SLOW_CONNS / 2);
		/* client_header_timeout 10 s: the whole first wave is gone by RUN_MS (14 s). */
		CHECK_INT(cnt[k].first_closed, cnt[k].first_total);
		CHECK_INT(stack_pool_value(&stacks[k], "rest", "crashes"), 0);
	}
out:
	for (i = 0; i < 2 * SLOW_CONNS; i++)
		if (conns[i].fd >= 0) {
			close(conns[i].fd);
			conns[i].fd = -1;
		}
	free(pfd);
	free(idx);
}

int
main(void)
{
	int k;

	if (setup() < 0)
		CHECK(!"the stacks started");
	else
		RUN(test_slowloris);
	for (k = 0; k < 2; k++)
		stack_stop(&stacks[k]);
	stack_sh("rm -rf %s", dir);
	return harness_done();
}
