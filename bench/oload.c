/*
 * oload: an open-loop HTTP load generator, for the benchmark's constant-rate tables.
 *
 *   oload -r RATE -d SECONDS [-c CONNECTIONS] [-t TIMEOUT_S] [-i LO:HI] http://127.0.0.1:PORT/PATH
 *
 * wrk runs a closed loop: each connection sends its next request when the last answer is
 * in, so a stalled server is sent less and its stall is counted once (coordinated
 * omission).  The published PostgREST runs (k6's constant-arrival-rate executor) and wrk2
 * send on a fixed schedule instead.  Debian has neither wrk2 nor vegeta, hence this.
 *
 * Request i is due at start + i / RATE.  Due requests go out on idle connections (up to
 * CONNECTIONS, 64 by default, HTTP/1.1 keep-alive, GET only); when none is idle they wait,
 * and their latency still counts from the time they were due, so queueing shows in the
 * percentiles.  The schedule is kept to about a millisecond (epoll_wait's resolution).
 * With -i LO:HI the PATH holds "{}" once, and each request puts there an integer drawn
 * uniformly from LO..HI (as the wrk scripts' math.random(LO, HI) does), so the open loop
 * asks for as many different rows as the closed one.
 * Answers must carry Content-Length (sluice's and nginx's do).  A connection the server
 * closes is opened again; a request it was carrying counts as an error.  After SECONDS no
 * new request is due; answers still missing TIMEOUT_S (2) seconds later are errors.
 *
 * Prints one line, "oload: key=value ...": rate (asked), sent, done, achieved (answers a
 * second), errors, non2xx, late (requests sent more than 1 ms after they were due), and
 * p50_ms p90_ms p99_ms p999_ms max_ms (latency from the due time: every sample, sorted).
 * Exits 0, or 1 on bad arguments or when no connection could be made.
 */
#define _GNU_SOURCE	/* memmem() */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#define OL_MAXCONN	4096
#define OL_REQMAX	2048
#define OL_BUF		65536

struct ol_conn {
	int fd;
	int busy;		/* a request is out on it */
	int64_t due_ns;		/* when the request out on it was due */
	size_t sent;		/* bytes of the request written */
	char req[OL_REQMAX];	/* the request out on it */
	size_t reqlen;
	char in[OL_BUF];	/* the answer so far */
	size_t have;
};

static struct sockaddr_in ol_addr;
static char ol_head[OL_REQMAX], ol_tail[OL_REQMAX];	/* the request around "{}" */
static long ol_lo, ol_hi;	/* -i: the range put in place of "{}"; ol_hi < ol_lo: none */
static uint64_t ol_rng = 0x9e3779b97f4a7c15u;
static int ol_ep;
static uint64_t ol_errors, ol_non2xx, ol_late, ol_done, ol_sent;
static uint32_t *ol_lat;	/* microseconds, one per answer */
static size_t ol_nlat, ol_caplat;

static int64_t
ol_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* Asks epoll for c's input, and for room to write while a request is half sent. */
static void
ol_watch(struct ol_conn *c, int op)
{
	struct epoll_event ev;

	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN | (c->busy && c->sent < c->reqlen ? EPOLLOUT : 0);
	ev.data.ptr = c;
	(void)epoll_ctl(ol_ep, op, c->fd, &ev);
}

/*
 * A connection to the target, then non-blocking and registered for reading; -1 on
 * failure.  The connect itself blocks: on loopback it completes at once, and a request
 * must not be written before it has.
 */
static int
ol_open(struct ol_conn *c)
{
	struct epoll_event ev;
	int one = 1;

	c->fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (c->fd < 0)
		return -1;
	(void)setsockopt(c->fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (connect(c->fd, (struct sockaddr *)&ol_addr, sizeof(ol_addr)) < 0 ||
	    fcntl(c->fd, F_SETFL, O_NONBLOCK) < 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	memset(&ev, 0, sizeof(ev));
	ev.events = EPOLLIN;
	ev.data.ptr = c;
	if (epoll_ctl(ol_ep, EPOLL_CTL_ADD, c->fd, &ev) < 0) {
		close(c->fd);
		c->fd = -1;
		return -1;
	}
	c->busy = 0;
	c->have = 0;
	c->sent = 0;
	return 0;
}

/* Closes c (its request, if any, an error) and opens it again. */
static void
ol_reopen(struct ol_conn *c)
{
	if (c->busy)
		ol_errors++;
	if (c->fd >= 0)
		close(c->fd);
	c->fd = -1;
	c->busy = 0;
	(void)ol_open(c);
}

static void
ol_record(int64_t lat_ns)
{
	uint32_t *n;

	if (ol_nlat == ol_caplat) {
		ol_caplat = ol_caplat ? 2 * ol_caplat : 65536;
		if ((n = realloc(ol_lat, ol_caplat * sizeof(*n))) == NULL) {
			ol_caplat = ol_nlat;
			return;
		}
		ol_lat = n;
	}
	lat_ns /= 1000;
	ol_lat[ol_nlat++] = lat_ns > UINT32_MAX ? UINT32_MAX : (uint32_t)lat_ns;
}

/* Writes what is left of c's request (watching for room when it does not all fit); 0,
 * or -1 when the connection failed. */
static int
ol_write(struct ol_conn *c)
{
	size_t before = c->sent;
	ssize_t n;

	while (c->sent < c->reqlen) {
		n = send(c->fd, c->req + c->sent, c->reqlen - c->sent, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) {
			if (before == 0 || c->sent == before)
				ol_watch(c, EPOLL_CTL_MOD);
			return 0;
		}
		if (n <= 0)
			return -1;
		c->sent += (size_t)n;
	}
	if (before > 0)
		ol_watch(c, EPOLL_CTL_MOD);	/* sent in several goes: input only again */
	return 0;
}

/* xorshift64*: the next pseudo-random number (the load's ids, not secrets). */
static uint64_t
ol_random(void)
{
	ol_rng ^= ol_rng >> 12;
	ol_rng ^= ol_rng << 25;
	ol_rng ^= ol_rng >> 27;
	return ol_rng * 0x2545f4914f6cdd1du;
}

/* Writes the next request into c->req: the URL's, with a drawn id for "{}" under -i. */
static void
ol_make(struct ol_conn *c)
{
	int n;

	if (ol_hi < ol_lo) {
		n = snprintf(c->req, sizeof(c->req), "%s", ol_head);
	} else {
		long id = ol_lo + (long)(ol_random() % (uint64_t)(ol_hi - ol_lo + 1));

		n = snprintf(c->req, sizeof(c->req), "%s%ld%s", ol_head, id, ol_tail);
	}
	c->reqlen = n < 0 ? 0 : (size_t)n < sizeof(c->req) ? (size_t)n : sizeof(c->req) - 1;
}

static int
ol_send(struct ol_conn *c, int64_t due)
{
	ol_make(c);
	c->busy = 1;
	c->due_ns = due;
	c->sent = 0;
	c->have = 0;
	ol_sent++;
	return ol_write(c);
}

/* Case-insensitive search for a header's value in the head [p, p + len). */
static const char *
ol_header(const char *p, size_t len, const char *name)
{
	size_t nl = strlen(name), i;

	for (i = 0; i + nl < len; i++)
		if ((i == 0 || p[i - 1] == '\n') && strncasecmp(p + i, name, nl) == 0)
			return p + i + nl;
	return NULL;
}

/* Reads from c; when a whole answer is in, records it.  -1 when c must be reopened. */
static int
ol_read(struct ol_conn *c, int64_t now)
{
	const char *end, *cl, *conn;
	size_t head, body;
	ssize_t n;
	int status;

	for (;;) {
		if (c->have == sizeof(c->in))
			return -1;	/* an answer larger than the buffer: not ours to measure */
		n = recv(c->fd, c->in + c->have, sizeof(c->in) - c->have, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n <= 0)
			return -1;
		c->have += (size_t)n;
		if (!c->busy)
			return -1;	/* bytes nobody asked for */
		end = memmem(c->in, c->have, "\r\n\r\n", 4);
		if (end == NULL)
			continue;
		head = (size_t)(end - c->in) + 4;
		if ((cl = ol_header(c->in, head, "Content-Length:")) == NULL)
			return -1;
		body = strtoul(cl, NULL, 10);
		if (c->have < head + body)
			continue;
		status = head > 12 && c->in[9] >= '0' && c->in[9] <= '9' ?
		    (c->in[9] - '0') * 100 + (c->in[10] - '0') * 10 + (c->in[11] - '0') : 0;
		if (status < 200 || status > 299)
			ol_non2xx++;
		ol_done++;
		ol_record(now - c->due_ns);
		c->busy = 0;
		conn = ol_header(c->in, head, "Connection:");
		c->have = 0;
		if (conn != NULL && strncasecmp(conn + strspn(conn, " "), "close", 5) == 0)
			return -1;
		return 0;
	}
}

static int
ol_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

static double
ol_pct(double p)
{
	size_t i;

	if (ol_nlat == 0)
		return 0;
	i = (size_t)(p * (double)ol_nlat);
	if (i >= ol_nlat)
		i = ol_nlat - 1;
	return ol_lat[i] / 1000.0;
}

/* http://HOST:PORT/PATH with a numeric IPv4 host into ol_addr, and the request into
 * ol_head (and ol_tail, split at "{}" under -i: the path must then hold it once). */
static int
ol_url(const char *url)
{
	char host[64], req[OL_REQMAX];
	const char *p, *path, *mark;
	size_t hl;
	long port = 80;
	int n;

	if (strncmp(url, "http://", 7) != 0)
		return -1;
	p = url + 7;
	path = strchr(p, '/');
	if (path == NULL)
		path = "/";
	hl = strcspn(p, ":/");
	if (hl == 0 || hl >= sizeof(host))
		return -1;
	memcpy(host, p, hl);
	host[hl] = '\0';
	if (p[hl] == ':') {
		char *e;

		port = strtol(p + hl + 1, &e, 10);
		if (port <= 0 || port > 65535 || (*e != '/' && *e != '\0'))
			return -1;
	}
	memset(&ol_addr, 0, sizeof(ol_addr));
	ol_addr.sin_family = AF_INET;
	ol_addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, host, &ol_addr.sin_addr) != 1)
		return -1;
	/* Room is left for the id: 20 digits and a sign. */
	n = snprintf(req, sizeof(req) - 21, "GET %s HTTP/1.1\r\nHost: %s:%ld\r\n"
	    "User-Agent: oload\r\nAccept: */*\r\n\r\n", path, host, port);
	if (n < 0 || (size_t)n >= sizeof(req) - 21)
		return -1;
	mark = strstr(req, "{}");
	if ((ol_hi >= ol_lo) != (mark != NULL) || (mark != NULL && strstr(mark + 2, "{}") != NULL))
		return -1;
	if (mark == NULL) {
		memcpy(ol_head, req, (size_t)n + 1);
		return 0;
	}
	memcpy(ol_head, req, (size_t)(mark - req));
	ol_head[mark - req] = '\0';
	memcpy(ol_tail, mark + 2, strlen(mark + 2) + 1);
	return 0;
}

static void
ol_usage(void)
{
	fprintf(stderr, "usage: oload -r RATE -d SECONDS [-c CONNECTIONS] [-t TIMEOUT_S] "
	    "[-i LO:HI] http://IPV4:PORT/PATH (with -i, PATH holds {} once)\n");
	exit(1);
}

int
main(int argc, char *argv[])
{
	static struct ol_conn conns[OL_MAXCONN];
	struct epoll_event evs[256];
	double rate = 0, secs = 0, tmo = 2;
	int64_t start, stop, now, next_due, step_ns;
	uint64_t due_i = 0, queued = 0;
	long nconn = 64;
	int ch, i, n, open_ok = 0;

	ol_lo = 1;
	ol_hi = 0;
	while ((ch = getopt(argc, argv, "r:d:c:t:i:")) != -1) {
		char *e;

		switch (ch) {
		case 'r':
			rate = strtod(optarg, &e);
			if (*e != '\0' || rate <= 0 || rate > 1e6)
				ol_usage();
			break;
		case 'd':
			secs = strtod(optarg, &e);
			if (*e != '\0' || secs <= 0 || secs > 3600)
				ol_usage();
			break;
		case 'c':
			nconn = strtol(optarg, &e, 10);
			if (*e != '\0' || nconn < 1 || nconn > OL_MAXCONN)
				ol_usage();
			break;
		case 't':
			tmo = strtod(optarg, &e);
			if (*e != '\0' || tmo <= 0 || tmo > 60)
				ol_usage();
			break;
		case 'i':
			ol_lo = strtol(optarg, &e, 10);
			if (*e != ':' || ol_lo < 0)
				ol_usage();
			ol_hi = strtol(e + 1, &e, 10);
			if (*e != '\0' || ol_hi < ol_lo || ol_hi > 1000000000)
				ol_usage();
			break;
		default:
			ol_usage();
		}
	}
	if (optind != argc - 1 || rate <= 0 || secs <= 0 || ol_url(argv[optind]) < 0)
		ol_usage();
	if ((ol_ep = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		perror("oload: epoll_create1");
		return 1;
	}
	for (i = 0; i < nconn; i++)
		if (ol_open(&conns[i]) == 0)
			open_ok++;
	if (open_ok == 0) {
		fprintf(stderr, "oload: cannot connect to %s\n", argv[optind]);
		return 1;
	}
	step_ns = (int64_t)(1e9 / rate);
	start = ol_now();
	ol_rng ^= (uint64_t)start;
	stop = start + (int64_t)(secs * 1e9);
	for (;;) {
		int timeout, inflight = 0;

		now = ol_now();
		/* Every request due by now joins the queue; the queue drains onto idle
		 * connections, oldest first (each keeps the time it was due). */
		while (now < stop && start + (int64_t)due_i * step_ns <= now) {
			due_i++;
			queued++;
		}
		for (i = 0; i < nconn && queued > 0; i++) {
			struct ol_conn *c = &conns[i];
			int64_t due;

			if (c->fd < 0 || c->busy)
				continue;
			due = start + (int64_t)(due_i - queued) * step_ns;
			if (now - due > 1000000)
				ol_late++;
			queued--;
			if (ol_send(c, due) < 0)
				ol_reopen(c);
		}
		for (i = 0; i < nconn; i++) {
			if (conns[i].fd < 0)
				(void)ol_open(&conns[i]);
			inflight += conns[i].busy;
		}
		if (now >= stop && queued == 0 && inflight == 0)
			break;
		if (now >= stop + (int64_t)(tmo * 1e9)) {
			ol_errors += (uint64_t)inflight + queued;
			break;
		}
		next_due = now < stop ? start + (int64_t)due_i * step_ns : now + 10000000;
		timeout = next_due > now ? (int)((next_due - now) / 1000000) : 0;
		if (queued > 0)
			timeout = timeout > 1 ? 1 : timeout;	/* retry the queue soon */
		n = epoll_wait(ol_ep, evs, (int)(sizeof(evs) / sizeof(evs[0])), timeout);
		if (n < 0 && errno != EINTR) {
			perror("oload: epoll_wait");
			return 1;
		}
		now = ol_now();
		for (i = 0; i < n; i++) {
			struct ol_conn *c = evs[i].data.ptr;

			if (c->fd < 0)
				continue;
			if ((evs[i].events & (EPOLLERR | EPOLLHUP)) && !(evs[i].events & EPOLLIN)) {
				ol_reopen(c);
				continue;
			}
			if ((evs[i].events & EPOLLOUT) && c->busy && ol_write(c) < 0) {
				ol_reopen(c);
				continue;
			}
			if ((evs[i].events & EPOLLIN) && ol_read(c, now) < 0)
				ol_reopen(c);
		}
	}
	qsort(ol_lat, ol_nlat, sizeof(*ol_lat), ol_cmp);
	printf("oload: rate=%.0f sent=%llu done=%llu achieved=%.1f errors=%llu non2xx=%llu "
	    "late=%llu p50_ms=%.3f p90_ms=%.3f p99_ms=%.3f p999_ms=%.3f max_ms=%.3f\n", rate,
	    (unsigned long long)ol_sent, (unsigned long long)ol_done, (double)ol_done / secs,
	    (unsigned long long)ol_errors, (unsigned long long)ol_non2xx,
	    (unsigned long long)ol_late, ol_pct(0.50), ol_pct(0.90), ol_pct(0.99),
	    ol_pct(0.999), ol_nlat ? ol_lat[ol_nlat - 1] / 1000.0 : 0.0);
	for (i = 0; i < nconn; i++)
		if (conns[i].fd >= 0)
			close(conns[i].fd);
	close(ol_ep);
	free(ol_lat);
	return 0;
}
