/*
 * test_request_id: request ids through the real stack (nginx in both profiles with
 * `set access_log json`, sluiced, bin/health and the test-only endpoint
 * tests/handlers/logline, which logs a line and answers an error), and behind Apache.
 *
 * A well-formed X-Request-Id comes back in the X-Request-Id header (once), in the error
 * bodies of sluice's own endpoints ("requestId") and in the worker's log line for that
 * request.  A hostile one (quotes, blanks, control bytes, JSON, past 128 bytes, a bare CR
 * sent raw to nginx) is replaced by a generated id of nginx's form (32 hex digits), which
 * the header, the body and the log line then carry.  Without one, nginx's ids come back,
 * and differ between two requests.  The JSON access log's lines are parsed: every line is
 * one JSON object with the fields of its request, the id among them, a hostile URI
 * escaped.  Straight to a worker's socket (no nginx), a REQUEST_ID or UNIQUE_ID parameter
 * with CR LF or quotes is refused by the worker itself.
 */
#include <errno.h>
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdint.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "json.h"
#include "stack.h"
#include "../lib/harness.h"

static char logline_bin[PATH_MAX + 32];

/* 1 when s is an id of nginx's form: 32 lower-case hex digits. */
static int
is_hex32(const char *s)
{
	size_t i;

	if (s == NULL || strlen(s) != 32)
		return 0;
	for (i = 0; i < 32; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return 0;
	return 1;
}

/* How many X-Request-Id header lines r has. */
static int
id_headers(const struct http_resp *r)
{
	const char *p = r->headers.data;
	int n = 0;

	while (p != NULL && (p = strstr(p, "\nX-Request-Id:")) != NULL) {
		n++;
		p++;
	}
	return n;
}

/* The string member key of the JSON object body (copied into out), or -1. */
static int
json_member(const char *body, const char *key, char *out, size_t len)
{
	enum json_err err;
	cJSON *v, *m;
	int rc = -1;

	if (body == NULL || (v = json_parse(body, strlen(body), 8, &err, NULL)) == NULL)
		return -1;
	m = cJSON_GetObjectItemCaseSensitive(v, key);
	if (cJSON_IsString(m) && strlen(m->valuestring) < len) {
		memcpy(out, m->valuestring, strlen(m->valuestring) + 1);
		rc = 0;
	}
	cJSON_Delete(v);
	return rc;
}

/*
 * GET path with header hdr (NULL: none); the id the response's header says into id, after
 * checking that there is exactly one such header.  Returns the status, 0 on failure.
 */
static long
get_id(const struct stack *s, const char *path, const char *hdr, struct http_resp *r,
    char *id, size_t idlen)
{
	const char *hdrs[2] = { hdr, NULL };
	char url[512];

	snprintf(url, sizeof(url), "%s%s", s->base, path);
	id[0] = '\0';
	if (http_do("GET", url, hdr != NULL ? hdrs : NULL, NULL, 0, 5000, r) < 0)
		return 0;
	CHECK_INT(id_headers(r), 1);
	if (http_header(r, "X-Request-Id", id, idlen) < 0)
		id[0] = '\0';
	return r->status;
}

/* A good id comes back in the header, in sluice's error bodies and in the log line. */
static void
check_good_id(struct stack *s)
{
	static const char good[] = "Good-id.42:trace_7@edge-1";
	char hdr[300], id[256], body_id[256], needle[400], url[256];
	const char *hdrs[2] = { hdr, NULL };
	struct http_resp r;

	http_resp_init(&r);
	snprintf(hdr, sizeof(hdr), "X-Request-Id: %s", good);
	CHECK_INT(get_id(s, "/health", hdr, &r, id, sizeof(id)), 200);
	CHECK_STR(id, good);
	/* A 405 of the serve loop: the id in the body too. */
	snprintf(url, sizeof(url), "%s/health", s->base);
	CHECK(http_do("DELETE", url, hdrs, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(http_header(&r, "X-Request-Id", id, sizeof(id)) == 0 && strcmp(id, good) == 0);
	CHECK(json_member(r.body.data, "requestId", body_id, sizeof(body_id)) == 0 &&
	    strcmp(body_id, good) == 0);
	CHECK(json_member(r.body.data, "code", body_id, sizeof(body_id)) == 0 &&
	    strcmp(body_id, "method_not_allowed") == 0);
	/* The handler's own error and its log line. */
	CHECK_INT(get_id(s, "/logline?say=good1", hdr, &r, id, sizeof(id)), 409);
	CHECK_STR(id, good);
	CHECK(json_member(r.body.data, "requestId", body_id, sizeof(body_id)) == 0 &&
	    strcmp(body_id, good) == 0);
	snprintf(needle, sizeof(needle), " warn: logline: said good1 request_id=%s\n", good);
	CHECK_INT(stack_log_count(s, needle), 1);
	/* A 128-byte id is well-formed; 129 bytes is not (check_hostile_ids()). */
	memset(body_id, 'k', 128);
	body_id[128] = '\0';
	snprintf(hdr, sizeof(hdr), "X-Request-Id: %s", body_id);
	CHECK_INT(get_id(s, "/health", hdr, &r, id, sizeof(id)), 200);
	CHECK_STR(id, body_id);
	http_resp_free(&r);
}

/* Hostile ids are replaced: the header, the body and the log line carry a generated id. */
static void
check_hostile_ids(struct stack *s)
{
	static const char *const hostile[] = {
		"X-Request-Id: a\"b", "X-Request-Id: a b", "X-Request-Id: it's",
		"X-Request-Id: {\"requestId\":\"x\"}", "X-Request-Id: a\\\\b",
		"X-Request-Id: tab\tsep", "X-Request-Id: caf\xc3\xa9", "X-Request-Id: %0d%0aX-Evil:1",
		"X-Request-Id: a,b", "X-Request-Id: $request_id", "X-Request-Id: <script>",
	};
	char hdr[4200], id[256], body_id[256], needle[400], path[64];
	struct http_resp r;
	size_t i, n = sizeof(hostile) / sizeof(hostile[0]);

	http_resp_init(&r);
	for (i = 0; i < n + 2; i++) {
		if (i < n) {
			snprintf(hdr, sizeof(hdr), "%s", hostile[i]);
		} else {
			/* Past the bound: 129 bytes, and 4000. */
			size_t len = i == n ? 129 : 4000;

			memcpy(hdr, "X-Request-Id: ", 14);
			memset(hdr + 14, 'a', len);
			hdr[14 + len] = '\0';
		}
		snprintf(path, sizeof(path), "/logline?say=hostile%zu", i);
		if (get_id(s, path, hdr, &r, id, sizeof(id)) != 409 || !is_hex32(id)) {
			harness_fail(__FILE__, __LINE__, "case %zu: status %ld id '%s'", i,
			    r.status, id);
			continue;
		}
		CHECK(strstr(r.headers.data, "X-Evil") == NULL);
		CHECK(json_member(r.body.data, "requestId", body_id, sizeof(body_id)) == 0 &&
		    strcmp(body_id, id) == 0);
		snprintf(needle, sizeof(needle), " warn: logline: said hostile%zu request_id=%s\n",
		    i, id);
		if (stack_log_count(s, needle) != 1)
			harness_fail(__FILE__, __LINE__, "case %zu: no log line '%s'", i, needle);
	}
	http_resp_free(&r);
}

/* Without an id: nginx's, of its form, a new one for each request, in the log line too. */
static void
check_no_id(struct stack *s)
{
	char a[256], b[256], needle[400];
	struct http_resp r;

	http_resp_init(&r);
	CHECK_INT(get_id(s, "/health", NULL, &r, a, sizeof(a)), 200);
	CHECK_INT(get_id(s, "/logline?say=none", NULL, &r, b, sizeof(b)), 409);
	CHECK(is_hex32(a));
	CHECK(is_hex32(b));
	CHECK(strcmp(a, b) != 0);
	snprintf(needle, sizeof(needle), " warn: logline: said none request_id=%s\n", b);
	CHECK_INT(stack_log_count(s, needle), 1);
	/* nginx's own answers carry one too: the JSON 404 of an unknown path. */
	CHECK_INT(get_id(s, "/nowhere", NULL, &r, a, sizeof(a)), 404);
	CHECK(is_hex32(a));
	CHECK(strstr(r.headers.data, "nosniff") != NULL);
	http_resp_free(&r);
}

/* Sends req raw to nginx over TCP and reads the answer until EOF into out
 * (NUL-terminated). */
static void
raw_tcp(const struct stack *s, const char *req, char *out, size_t len)
{
	struct sockaddr_in sin;
	struct pollfd pfd;
	size_t got = 0;
	ssize_t r;
	int fd;

	out[0] = '\0';
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((uint16_t)s->port);
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return;
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    write(fd, req, strlen(req)) == (ssize_t)strlen(req))
		while (got + 1 < len) {
			pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
			if (poll(&pfd, 1, 5000) != 1 ||
			    (r = read(fd, out + got, len - 1 - got)) <= 0)
				break;
			got += (size_t)r;
		}
	out[got] = '\0';
	close(fd);
}

/* What curl cannot send: a bare CR inside the header, a quote in the URI.  nginx refuses
 * the first itself (with its own id); the second is answered and logged. */
static void
check_raw(struct stack *s)
{
	char out[8192], *h;

	raw_tcp(s, "GET /health HTTP/1.1\r\nHost: x\r\nX-Request-Id: a\rX-Evil: 1\r\n"
	    "Connection: close\r\n\r\n", out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.1 ", 9) == 0);
	CHECK(strstr(out, "X-Evil") == NULL);
	h = strstr(out, "\r\nX-Request-Id: ");
	CHECK(h != NULL && strspn(h + 16, "0123456789abcdef") == 32 && h[48] == '\r');
	raw_tcp(s, "GET /health?q=%22\"x\\y HTTP/1.1\r\nHost: x\r\nX-Request-Id: raw-quote"
	    "\r\nConnection: close\r\n\r\n", out, sizeof(out));
	CHECK(strncmp(out, "HTTP/1.1 200", 12) == 0);
	CHECK(strstr(out, "\r\nX-Request-Id: raw-quote\r\n") != NULL);
}

/*
 * The JSON access log: every line one JSON object with the fields of its request; the
 * requests with ids given above are there with them, the quoted URI escaped.
 */
static void
check_access_log(struct stack *s)
{
	static const char *const strings[] = { "time", "request_id", "remote_addr", "method",
	    "uri", "upstream_response_time", "upstream_addr", "upstream_status" };
	static const char *const numbers[] = { "status", "bytes", "request_time" };
	char path[400], *line = NULL;
	size_t cap = 0, i;
	ssize_t n;
	int lines = 0, bad = 0, good = 0, quote = 0, hex = 0;
	enum json_err err;
	FILE *f;
	cJSON *v, *m;

	/* nginx writes a line once the response is sent: give the last one a moment. */
	usleep(200 * 1000);
	snprintf(path, sizeof(path), "%s/logs/access.log", s->prefix);
	if ((f = fopen(path, "r")) == NULL) {
		CHECK(!"access.log opened");
		return;
	}
	while ((n = getline(&line, &cap, f)) > 0) {
		lines++;
		if (line[n - 1] == '\n')
			line[--n] = '\0';
		if ((v = json_parse(line, (size_t)n, 4, &err, NULL)) == NULL ||
		    !cJSON_IsObject(v)) {
			if (bad++ < 3)
				printf("  not JSON: %s\n", line);
			cJSON_Delete(v);
			continue;
		}
		for (i = 0; i < sizeof(strings) / sizeof(strings[0]); i++)
			if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(v, strings[i])))
				bad++;
		for (i = 0; i < sizeof(numbers) / sizeof(numbers[0]); i++)
			if (!cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(v, numbers[i])))
				bad++;
		m = cJSON_GetObjectItemCaseSensitive(v, "request_id");
		if (cJSON_IsString(m)) {
			good += strcmp(m->valuestring, "Good-id.42:trace_7@edge-1") == 0;
			hex += is_hex32(m->valuestring);
			if (strcmp(m->valuestring, "raw-quote") == 0) {
				m = cJSON_GetObjectItemCaseSensitive(v, "uri");
				quote = cJSON_IsString(m) &&
				    strcmp(m->valuestring, "/health?q=%22\"x\\y") == 0;
			}
		}
		cJSON_Delete(v);
	}
	free(line);
	fclose(f);
	CHECK(lines >= 20);
	CHECK_INT(bad, 0);
	CHECK_INT(good, 3);	/* the GET, the DELETE and the logline of check_good_id() */
	CHECK(hex >= 16);
	CHECK_INT(quote, 1);
}

static void
test_nginx_profiles(void)
{
	static const char *const profiles[] = { "default", "tuned" };
	char conf[PATH_MAX + 256];
	struct stack s;
	size_t i;

	snprintf(conf, sizeof(conf), "set access_log json\n"
	    "health =/health workers=2 threads=2\n"
	    "logline =/logline workers=1 threads=2 binary=%s\n", logline_bin);
	for (i = 0; i < 2; i++) {
		if (stack_start(&s, conf, profiles[i], 2, NULL) < 0) {
			CHECK(!"stack started");
			return;
		}
		check_good_id(&s);
		check_hostile_ids(&s);
		check_no_id(&s);
		check_raw(&s);
		check_access_log(&s);
		stack_stop(&s);
	}
}

/* Appends a FastCGI name-value pair to p at *n (both shorter than 128, or the value in
 * four bytes). */
static void
fcgi_pair(unsigned char *p, size_t *n, const char *name, const char *value)
{
	size_t nl = strlen(name), vl = strlen(value);

	p[(*n)++] = (unsigned char)nl;
	if (vl < 128) {
		p[(*n)++] = (unsigned char)vl;
	} else {
		p[(*n)++] = (unsigned char)(0x80 | (vl >> 24));
		p[(*n)++] = (unsigned char)(vl >> 16);
		p[(*n)++] = (unsigned char)(vl >> 8);
		p[(*n)++] = (unsigned char)vl;
	}
	memcpy(p + *n, name, nl);
	*n += nl;
	memcpy(p + *n, value, vl);
	*n += vl;
}

/*
 * One GET straight to the FastCGI socket sock, with the parameters pairs[0..np) (name,
 * value) besides the method and path; the response's STDOUT into out.  0 or -1.
 */
static int
fcgi_get(const char *sock, const char *const (*pairs)[2], size_t np, char *out,
    size_t len)
{
	unsigned char req[4096], rec[8 + 65536 + 256];
	struct sockaddr_un sun;
	struct pollfd pfd;
	size_t n = 0, pl, got = 0, i, have = 0;
	ssize_t r;
	int fd, rc = -1;

	n += http_fcgi_record(req, 1, 1, 8);
	memcpy(req + n, "\x00\x01\x00\x00\x00\x00\x00\x00", 8);	/* responder, no keep */
	n += 8;
	pl = n;
	n += 8;
	fcgi_pair(req, &n, "REQUEST_METHOD", "GET");
	fcgi_pair(req, &n, "DOCUMENT_URI", "/health");
	for (i = 0; i < np; i++)
		fcgi_pair(req, &n, pairs[i][0], pairs[i][1]);
	http_fcgi_record(req + pl, 4, 1, n - pl - 8);
	n += http_fcgi_record(req + n, 4, 1, 0);
	n += http_fcgi_record(req + n, 5, 1, 0);
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", sock);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 ||
	    write(fd, req, n) != (ssize_t)n)
		goto out;
	/* Read to EOF (no keep-conn: the worker closes after FCGI_END_REQUEST). */
	for (;;) {
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		if (poll(&pfd, 1, 5000) != 1)
			goto out;
		if ((r = read(fd, rec + have, sizeof(rec) - have)) < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			break;
		have += (size_t)r;
		if (have == sizeof(rec))
			break;
	}
	/* The STDOUT records' contents, in order. */
	for (i = 0; i + 8 <= have;) {
		size_t cl = (size_t)rec[i + 4] << 8 | rec[i + 5], pad = rec[i + 6];

		if (i + 8 + cl + pad > have)
			break;
		if (rec[i + 1] == 6 && got + cl < len) {
			memcpy(out + got, rec + i + 8, cl);
			got += cl;
		}
		i += 8 + cl + pad;
	}
	out[got] = '\0';
	rc = got > 0 ? 0 : -1;
out:
	close(fd);
	return rc;
}

/* The worker's own check, without nginx in front: what a hand-written config or a client
 * that reaches the socket could pass. */
static void
test_worker_checks_again(void)
{
	static const char *const crlf[][2] = {
		{ "REQUEST_ID", "a\r\nX-Evil: 1" }, { "UNIQUE_ID", "\"quoted\"" },
		{ "HTTP_X_REQUEST_ID", "b\r\nX-Evil: 2" },
	};
	static const char *const unique[][2] = {
		{ "REQUEST_ID", "has space" }, { "UNIQUE_ID", "Zz9@-unique" },
		{ "HTTP_X_REQUEST_ID", "client" },
	};
	static const char *const first[][2] = {
		{ "REQUEST_ID", "from-nginx" }, { "HTTP_X_REQUEST_ID", "client" },
	};
	static const char *const client[][2] = { { "HTTP_X_REQUEST_ID", "client-only" } };
	char sock[400], out[8192], *h;
	struct stack s;

	if (stack_start(&s, "health =/health workers=1 threads=2\n", "default", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(sock, sizeof(sock), "%s/health.sock", s.run);
	CHECK(fcgi_get(sock, crlf, 3, out, sizeof(out)) == 0);
	CHECK(strncmp(out, "Status: 200 OK\r\n", 16) == 0);
	CHECK(strstr(out, "X-Evil") == NULL);
	h = strstr(out, "\r\nX-Request-Id: ");
	CHECK(h != NULL && strspn(h + 16, "0123456789abcdef") == 32 && h[48] == '\r');
	CHECK(fcgi_get(sock, unique, 3, out, sizeof(out)) == 0);
	CHECK(strstr(out, "\r\nX-Request-Id: Zz9@-unique\r\n") != NULL);
	CHECK(fcgi_get(sock, first, 2, out, sizeof(out)) == 0);
	CHECK(strstr(out, "\r\nX-Request-Id: from-nginx\r\n") != NULL);
	CHECK(fcgi_get(sock, client, 1, out, sizeof(out)) == 0);
	CHECK(strstr(out, "\r\nX-Request-Id: client-only\r\n") != NULL);
	stack_stop(&s);
}

/* Behind Apache (tuned: mod_proxy_fcgi): the client's well-formed id through SetEnvIf,
 * else mod_unique_id's, a new one per request. */
static void
test_apache(void)
{
	char a[256], b[256], body_id[256], url[256];
	const char *hdrs[] = { "X-Request-Id: via-apache-1", NULL };
	const char *bad[] = { "X-Request-Id: a\"b", NULL };
	struct http_resp r;
	struct stack s;

	if (access("/usr/sbin/apache2", X_OK) != 0)
		SKIP("no /usr/sbin/apache2");
	if (stack_start_server(&s, "health =/health workers=2 threads=2\n", "apache", "tuned",
	    2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK(http_do("GET", url, hdrs, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(http_header(&r, "X-Request-Id", a, sizeof(a)) == 0 &&
	    strcmp(a, "via-apache-1") == 0);
	CHECK(http_do("DELETE", url, hdrs, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(json_member(r.body.data, "requestId", body_id, sizeof(body_id)) == 0 &&
	    strcmp(body_id, "via-apache-1") == 0);
	CHECK(http_do("GET", url, bad, NULL, 0, 5000, &r) == 0);
	CHECK(http_header(&r, "X-Request-Id", a, sizeof(a)) == 0 && strcmp(a, "a\"b") != 0 &&
	    strlen(a) >= 20);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK(http_header(&r, "X-Request-Id", b, sizeof(b)) == 0 && strlen(b) >= 20 &&
	    strcmp(a, b) != 0);
	http_resp_free(&r);
	stack_stop(&s);
}

int
main(void)
{
	char exe[PATH_MAX];

	signal(SIGPIPE, SIG_IGN);
	/* The test-only endpoint is built next to this program: tests/handlers/logline. */
	if (stack_self_dir(exe, sizeof(exe)) < 0)
		return 1;
	snprintf(logline_bin, sizeof(logline_bin), "%s/handlers/logline", exe);
	if (access(logline_bin, X_OK) != 0) {
		fprintf(stderr, "test_request_id: %s is not built (make check-integration)\n",
		    logline_bin);
		return 1;
	}
	RUN(test_nginx_profiles);
	RUN(test_worker_checks_again);
	RUN(test_apache);
	return harness_done();
}
