/*
 * stubstatus.c: see stubstatus.h.  The reader is strict (the module's four lines exactly,
 * numbers that fit), since what it reads comes over a socket: a port another program took
 * (nginx not started, another server on it) gives -1 and /metrics then says
 * sluice_nginx_up 0, never a figure made up from someone else's text.  The fetch is a
 * non-blocking loopback connection waited on with poll(), STUBSTATUS_TIMEOUT_MS from the
 * connect to the last byte, so that a stopped nginx holds sluiced's loop a quarter of a
 * second at most; no request of the pools waits on it (sluiced serves none).
 */
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "stubstatus.h"

/* A cursor over text being read. */
struct stubstatus_cur {
	const char *p, *end;
};

static int
stubstatus_lit(struct stubstatus_cur *c, const char *s)
{
	size_t n = strlen(s);

	if ((size_t)(c->end - c->p) < n || memcmp(c->p, s, n) != 0)
		return -1;
	c->p += n;
	return 0;
}

/* At least min spaces, and any more. */
static int
stubstatus_spaces(struct stubstatus_cur *c, int min)
{
	int k = 0;

	while (c->p < c->end && *c->p == ' ') {
		c->p++;
		k++;
	}
	return k >= min ? 0 : -1;
}

/* A decimal number of at most 20 digits that fits 64 bits. */
static int
stubstatus_num(struct stubstatus_cur *c, uint64_t *v)
{
	uint64_t n = 0, d;
	int k = 0;

	while (c->p < c->end && *c->p >= '0' && *c->p <= '9') {
		d = (uint64_t)(*c->p - '0');
		if (n > (UINT64_MAX - d) / 10)
			return -1;
		n = n * 10 + d;
		c->p++;
		k++;
	}
	if (k == 0)
		return -1;
	*v = n;
	return 0;
}

/* The end of a line: spaces, then "\n" or "\r\n". */
static int
stubstatus_eol(struct stubstatus_cur *c)
{
	(void)stubstatus_spaces(c, 0);
	if (c->p < c->end && *c->p == '\r')
		c->p++;
	return stubstatus_lit(c, "\n");
}

/* "WORD:" then a number, with the blanks around them. */
static int
stubstatus_field(struct stubstatus_cur *c, const char *word, uint64_t *v)
{
	return stubstatus_lit(c, word) == 0 && stubstatus_spaces(c, 1) == 0 &&
	    stubstatus_num(c, v) == 0 ? 0 : -1;
}

int
stubstatus_parse(const char *text, size_t len, struct stubstatus *out)
{
	struct stubstatus_cur c = { text, text + len };
	struct stubstatus s;

	if (stubstatus_field(&c, "Active connections:", &s.active) == -1 ||
	    stubstatus_eol(&c) == -1 ||
	    stubstatus_lit(&c, "server accepts handled requests") == -1 ||
	    stubstatus_eol(&c) == -1 ||
	    stubstatus_spaces(&c, 1) == -1 || stubstatus_num(&c, &s.accepts) == -1 ||
	    stubstatus_spaces(&c, 1) == -1 || stubstatus_num(&c, &s.handled) == -1 ||
	    stubstatus_spaces(&c, 1) == -1 || stubstatus_num(&c, &s.requests) == -1 ||
	    stubstatus_eol(&c) == -1 ||
	    stubstatus_field(&c, "Reading:", &s.reading) == -1 ||
	    stubstatus_spaces(&c, 1) == -1 ||
	    stubstatus_field(&c, "Writing:", &s.writing) == -1 ||
	    stubstatus_spaces(&c, 1) == -1 ||
	    stubstatus_field(&c, "Waiting:", &s.waiting) == -1 ||
	    stubstatus_eol(&c) == -1 || c.p != c.end)
		return -1;
	*out = s;
	return 0;
}

/* The first end of the head in text[len] spelt as sep, and the body after it: NULL when
 * there is none (memmem() is not POSIX). */
static const char *
stubstatus_find(const char *text, size_t len, const char *sep)
{
	size_t n = strlen(sep), i;

	for (i = 0; i + n <= len; i++)
		if (memcmp(text + i, sep, n) == 0)
			return text + i + n;
	return NULL;
}

int
stubstatus_response(const char *resp, size_t len, struct stubstatus *out)
{
	struct stubstatus_cur c = { resp, resp + len };
	const char *body;

	/* "HTTP/1.0 200 OK" or "HTTP/1.1 200 OK": the status alone, then a blank or the
	 * line's end. */
	if (stubstatus_lit(&c, "HTTP/1.") == -1 || c.p == c.end || *c.p < '0' || *c.p > '9')
		return -1;
	c.p++;
	if (stubstatus_lit(&c, " 200") == -1 || c.p == c.end ||
	    (*c.p != ' ' && *c.p != '\r' && *c.p != '\n'))
		return -1;
	if ((body = stubstatus_find(resp, len, "\r\n\r\n")) == NULL &&
	    (body = stubstatus_find(resp, len, "\n\n")) == NULL)
		return -1;
	return stubstatus_parse(body, (size_t)(resp + len - body), out);
}

/* Waits until fd is ready for events or the deadline passes: 0 ready, -1 not. */
static int
stubstatus_wait(int fd, short events, long long deadline)
{
	struct pollfd pfd = { .fd = fd, .events = events };
	long long left;
	int n;

	for (;;) {
		if ((left = deadline - clock_now_ms()) <= 0)
			return -1;
		n = poll(&pfd, 1, (int)left);
		if (n == -1 && errno == EINTR)
			continue;
		return n == 1 ? 0 : -1;
	}
}

/* Connects fd to 127.0.0.1:port before the deadline: 0 or -1. */
static int
stubstatus_connect(int fd, int port, long long deadline)
{
	struct sockaddr_in sin;
	socklen_t elen = sizeof(int);
	int e = 0;

	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0)
		return 0;
	if (errno != EINPROGRESS || stubstatus_wait(fd, POLLOUT, deadline) == -1 ||
	    getsockopt(fd, SOL_SOCKET, SO_ERROR, &e, &elen) == -1 || e != 0)
		return -1;
	return 0;
}

int
stubstatus_fetch(int port, struct stubstatus *out)
{
	static const char req[] = "GET " STUBSTATUS_PATH " HTTP/1.0\r\nHost: localhost\r\n"
	    "User-Agent: sluiced\r\n\r\n";
	long long deadline = clock_now_ms() + STUBSTATUS_TIMEOUT_MS;
	char buf[STUBSTATUS_MAX];
	size_t got = 0;
	ssize_t n;
	int fd, rc = -1;

	if (port < 1 || port > 65535)
		return -1;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	if (stubstatus_connect(fd, port, deadline) == -1 ||
	    stubstatus_wait(fd, POLLOUT, deadline) == -1 ||
	    write(fd, req, sizeof(req) - 1) != (ssize_t)(sizeof(req) - 1))
		goto out;
	/* HTTP/1.0: nginx closes once it has answered; the answer is what came before. */
	while (got < sizeof(buf)) {
		if (stubstatus_wait(fd, POLLIN, deadline) == -1)
			goto out;
		n = read(fd, buf + got, sizeof(buf) - got);
		if (n == -1 && (errno == EINTR || errno == EAGAIN))
			continue;
		if (n < 0)
			goto out;
		if (n == 0)
			break;
		got += (size_t)n;
	}
	if (got < sizeof(buf))
		rc = stubstatus_response(buf, got, out);
out:
	(void)close(fd);
	return rc;
}
