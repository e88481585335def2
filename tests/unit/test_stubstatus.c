/*
 * test_stubstatus.c: the reader of nginx's stub_status answer (supervisor/stubstatus.c).
 *
 * nginx 1.22's exact text gives its seven figures, with "\r\n" line ends too; every proper
 * prefix of it, and a table of malformed and hostile bodies (a word changed, a sign, a
 * number past 64 bits, a missing line, bytes after the last line, a NUL, blanks inside the
 * numbers), is refused and leaves the output untouched.  The HTTP answer around it: a 200
 * of HTTP/1.0 or 1.1 is read, any other status, version or a head without its end is
 * refused.  The fetch from a port where nothing listens fails at once.
 */
#include <netinet/in.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "harness.h"
#include "stubstatus.h"

/* What nginx 1.22 writes (ngx_http_stub_status_module.c). */
static const char good[] = "Active connections: 291 \n"
    "server accepts handled requests\n"
    " 16630948 16630947 31070465 \n"
    "Reading: 6 Writing: 179 Waiting: 106 \n";

static void
test_stubstatus_good(void)
{
	static const char crlf[] = "Active connections: 1 \r\n"
	    "server accepts handled requests\r\n"
	    " 0 0 18446744073709551615 \r\n"
	    "Reading: 0 Writing: 1 Waiting: 0 \r\n";
	struct stubstatus s;

	memset(&s, 0xff, sizeof(s));
	CHECK_INT(stubstatus_parse(good, strlen(good), &s), 0);
	CHECK_INT(s.active, 291);
	CHECK_INT(s.accepts, 16630948);
	CHECK_INT(s.handled, 16630947);
	CHECK_INT(s.requests, 31070465);
	CHECK_INT(s.reading, 6);
	CHECK_INT(s.writing, 179);
	CHECK_INT(s.waiting, 106);
	CHECK_INT(stubstatus_parse(crlf, strlen(crlf), &s), 0);
	CHECK(s.requests == UINT64_MAX);
	CHECK_INT(s.active, 1);
	CHECK_INT(s.writing, 1);
}

/* Every proper prefix of the good text is refused, and so is the text cut anywhere and
 * given a byte that does not belong there. */
static void
test_stubstatus_prefixes(void)
{
	struct stubstatus s, before;
	size_t n;
	int bad = 0;

	memset(&before, 0x5a, sizeof(before));
	for (n = 0; n < strlen(good); n++) {
		s = before;
		if (stubstatus_parse(good, n, &s) != -1 || memcmp(&s, &before, sizeof(s)) != 0) {
			fprintf(stderr, "   the first %zu bytes were read\n", n);
			bad++;
		}
	}
	CHECK_INT(bad, 0);
}

static void
test_stubstatus_malformed(void)
{
	static const char *const bodies[] = {
		"",
		"\n",
		"Active connections: \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: -1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: +1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1x \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"active connections: 1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1 \nserver accepts handled\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1 \nserver accepts handled requests\n 1 2 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1 \nserver accepts handled requests\n 1 2 3 4 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1 \nserver accepts handled requests\n1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 \n",
		"Active connections: 1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Waiting: 1 Writing: 0 \n",
		"Active connections: 1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \nextra\n",
		"Active connections: 1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n\n",
		"Active connections: 1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0",
		"Active connections: 1 \nserver accepts handled requests\n"
		    " 18446744073709551616 2 3 \nReading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1 \nserver accepts handled requests\n"
		    " 99999999999999999999999 2 3 \nReading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1 \nserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting:0 \n",
		"Active connections: 1 \nserver accepts handled requests\n 1\t2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"Active connections: 1 \rserver accepts handled requests\n 1 2 3 \n"
		    "Reading: 0 Writing: 1 Waiting: 0 \n",
		"<html><body>Active connections: 1</body></html>\n",
		"{\"code\":\"not_found\"}",
	};
	struct stubstatus s, before;
	size_t i;
	int bad = 0;
	char nul[sizeof(good)];

	memset(&before, 0x5a, sizeof(before));
	for (i = 0; i < sizeof(bodies) / sizeof(bodies[0]); i++) {
		s = before;
		if (stubstatus_parse(bodies[i], strlen(bodies[i]), &s) != -1 ||
		    memcmp(&s, &before, sizeof(s)) != 0) {
			fprintf(stderr, "   read: %s\n", bodies[i]);
			bad++;
		}
	}
	CHECK_INT(bad, 0);
	/* A NUL where a digit or a blank was. */
	memcpy(nul, good, sizeof(good));
	nul[20] = '\0';
	CHECK_INT(stubstatus_parse(nul, strlen(good), &s), -1);
	nul[20] = good[20];
	nul[strlen(good) - 2] = '\0';
	CHECK_INT(stubstatus_parse(nul, strlen(good), &s), -1);
}

/* The answer around the body: only a 200 of HTTP/1.x with a complete head. */
static void
test_stubstatus_response(void)
{
	static const char *const heads[] = {
		"HTTP/1.1 200 OK\r\nServer: nginx\r\nContent-Type: text/plain\r\n\r\n",
		"HTTP/1.0 200 OK\r\n\r\n",
		"HTTP/1.1 200\r\n\r\n",
		"HTTP/1.1 200 OK\n\n",
	};
	static const char *const bad[] = {
		"HTTP/1.1 404 Not Found\r\n\r\n",
		"HTTP/1.1 403 Forbidden\r\n\r\n",
		"HTTP/1.1 2000 OK\r\n\r\n",
		"HTTP/2 200\r\n\r\n",
		"HTTP/1.x 200 OK\r\n\r\n",
		"http/1.1 200 OK\r\n\r\n",
		"HTTP/1.1 200 OK\r\nServer: nginx\r\n",
		"",
	};
	char buf[1024];
	struct stubstatus s;
	size_t i;
	int n;

	for (i = 0; i < sizeof(heads) / sizeof(heads[0]); i++) {
		n = snprintf(buf, sizeof(buf), "%s%s", heads[i], good);
		CHECK(n > 0 && (size_t)n < sizeof(buf));
		s.requests = 0;
		CHECK_INT(stubstatus_response(buf, (size_t)n, &s), 0);
		CHECK_INT(s.requests, 31070465);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		n = snprintf(buf, sizeof(buf), "%s%s", bad[i], good);
		CHECK_INT(stubstatus_response(buf, (size_t)n, &s), -1);
	}
	/* The head without its end, then the body: never read as a body. */
	n = snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nX: %s", good);
	CHECK_INT(stubstatus_response(buf, (size_t)n, &s), -1);
	/* A chunked body is not the module's text. */
	n = snprintf(buf, sizeof(buf), "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
	    "%zx\r\n%s\r\n0\r\n\r\n", strlen(good), good);
	CHECK_INT(stubstatus_response(buf, (size_t)n, &s), -1);
}

/* A port where nothing listens (bound, not listening): refused at once. */
static void
test_stubstatus_fetch_refused(void)
{
	struct sockaddr_in sin = { .sin_family = AF_INET };
	socklen_t sl = sizeof(sin);
	struct stubstatus s;
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	CHECK(fd >= 0);
	CHECK_INT(bind(fd, (struct sockaddr *)&sin, sizeof(sin)), 0);
	CHECK_INT(getsockname(fd, (struct sockaddr *)&sin, &sl), 0);
	CHECK_INT(stubstatus_fetch(ntohs(sin.sin_port), &s), -1);
	CHECK_INT(stubstatus_fetch(0, &s), -1);
	CHECK_INT(stubstatus_fetch(65536, &s), -1);
	close(fd);
}

int
main(void)
{
	RUN(test_stubstatus_good);
	RUN(test_stubstatus_prefixes);
	RUN(test_stubstatus_malformed);
	RUN(test_stubstatus_response);
	RUN(test_stubstatus_fetch_refused);
	return harness_done();
}
