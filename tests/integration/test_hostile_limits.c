/*
 * test_hostile_limits: oversized and pathological requests through the real stack (nginx
 * tuned, sluiced, bin/rest on SQLite, the chat's page and writes on a seeded SQLite
 * database), against the rest and chat endpoints: a 10 MB body, a 100 KB query string,
 * 10,000 filters, embeds 50 deep, an in-list of 100,000 values, JSON nested 10,000 deep,
 * a 10,000-row insert into a column that does not exist, a 64 KB header, bodies just
 * under the cap, invalid UTF-8 and a wrong content type; and requests malformed at the
 * HTTP level (a garbage request line, a header without a colon, two Hosts, a bad
 * Content-Length), which nginx refuses itself.
 *
 * Each must get a 4xx with the JSON error body {code,...}, whether nginx refuses it
 * (413, 414, 400 for a header too large: the generated error_page bodies) or a worker
 * does, and nothing is written.  Each input is sent several times, and the workers'
 * memory must stay bounded: the resident set (VmRSS, from /proc) of every worker of the
 * pools involved grows by at most RSS_GROWTH_MAX over the whole run (not asserted for
 * workers built with AddressSanitizer, whose quarantine holds freed memory on purpose).  The one timing
 * assertion is generous and documented: each answer within ANSWER_MAX_MS (a refusal is
 * cheap; a stack that buffers or parses its way through 10 MB for seconds is not
 * refusing).  The output has a table: input, status, who answered, worst time, and the
 * RSS delta of the pool's workers.
 */
#include <arpa/inet.h>
#include <limits.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include "chatfix.h"
#include "db.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

#define ANSWER_MAX_MS	5000
#define RSS_GROWTH_MAX	(32 * 1024)	/* kB per worker over the whole run */
#define REPEAT		5
#define MAXPIDS		8

static struct stack st;
static char dir[64], resturl[128], chaturl[128], cookie[256];
static int up;

static const char schema[] =
    "create table artist (artist_id integer primary key, name varchar(120));\n"
    "create table album (album_id integer primary key, title varchar(160) not null,\n"
    "  artist_id integer not null references artist (artist_id));\n"
    "insert into artist values (1, 'AC/DC'), (2, 'Accept');\n"
    "insert into album values (1, 'For Those About To Rock', 1), (2, 'Balls', 2);\n"
    "create table sluice_functions (name text primary key, args text not null,\n"
    "  returns text not null, volatility text not null, body text not null);\n"
    "insert into sluice_functions values ('add_them', 'a integer, b integer', 'integer',\n"
    "  'immutable', 'select :a + :b');\n";

static int
setup(void)
{
	char conf[1024];
	struct db *db;
	char err[256];
	struct http_resp r;
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/sluice-limits-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(resturl, sizeof(resturl), "sqlite:%s/rest.db", dir);
	snprintf(chaturl, sizeof(chaturl), "sqlite:%s/chat.db", dir);
	if (db_open(&db, resturl, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	rc = db_exec(db, schema);
	db_close(db);
	if (rc < 0 || chatfix_seed(chaturl, "") != 0)
		return -1;
	snprintf(conf, sizeof(conf),
	    "db chinook %s\ndb chat %s\n"
	    "rest /rest/v1/ workers=2 threads=2 db=chinook\n"
	    "chat_page =/ workers=1 threads=2 db=chat\n"
	    "chat_message_send =/chat/message-send workers=1 threads=4 db=chat\n"
	    "chat_channel_open =/chat/channel-open workers=1 threads=4 db=chat\n"
	    "chat_nickname_set =/chat/nickname-set workers=1 threads=4 db=chat\n",
	    resturl, chaturl);
	if (stack_start(&st, conf, "tuned", 2, NULL) < 0)
		return -1;
	up = 1;
	http_resp_init(&r);
	rc = chatfix_get(st.base, "/", NULL, NULL, &r) == 0 && r.status == 200 &&
	    chatfix_cookie(&r, cookie, sizeof(cookie)) == 0 ? 0 : -1;
	http_resp_free(&r);
	return rc;
}

/* The RSS of the workers of pool into kb[] (pids[] alongside); returns the count. */
static int
pool_rss(const char *pool, pid_t *pids, long *kb)
{
	int i, n = stack_worker_pids(&st, pool, pids, MAXPIDS);

	for (i = 0; i < n; i++)
		kb[i] = stack_proc_kb(pids[i], "VmRSS:");
	return n;
}

/* The pools each input goes to, and the RSS every worker had at the start. */
static const char *const pools[] = { "rest", "chat_message_send", "chat_nickname_set",
	"chat_channel_open" };
static pid_t start_pids[4][MAXPIDS];
static long start_kb[4][MAXPIDS];
static int start_n[4];

/* A string of n copies of unit between head and tail (caller frees), or NULL. */
static char *
repeat(const char *head, const char *unit, size_t n, const char *tail)
{
	size_t hl = strlen(head), ul = strlen(unit), tl = strlen(tail), i;
	char *s = malloc(hl + ul * n + tl + 1), *p;

	if (s == NULL)
		return NULL;
	memcpy(s, head, hl);
	p = s + hl;
	for (i = 0; i < n; i++, p += ul)
		memcpy(p, unit, ul);
	memcpy(p, tail, tl + 1);
	return s;
}

/* "k,k+1,..." n integers (caller frees). */
static char *
numbers(const char *head, size_t n, const char *tail)
{
	size_t cap = strlen(head) + 8 * n + strlen(tail) + 1, len;
	char *s = malloc(cap);
	size_t i;

	if (s == NULL)
		return NULL;
	len = (size_t)snprintf(s, cap, "%s", head);
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%s%zu", i ? "," : "", i);
	snprintf(s + len, cap - len, "%s", tail);
	return s;
}

/* 10,000 filters: "artist_id=gt.-1&artist_id=gt.-2&..." (caller frees). */
static char *
filters(size_t n)
{
	size_t cap = 32 * n + 64, len;
	char *s = malloc(cap);
	size_t i;

	if (s == NULL)
		return NULL;
	len = (size_t)snprintf(s, cap, "/rest/v1/artist?");
	for (i = 0; i < n; i++)
		len += (size_t)snprintf(s + len, cap - len, "%sartist_id=gt.-%zu", i ? "&" : "",
		    i + 1);
	return s;
}

/*
 * Sends one hostile input REPEAT times and prints its row of the table.  path is below
 * the stack's base; hdr an extra header line (may be NULL); ctype the body's type (may be
 * NULL); the answer must be want_status (or alt_status when it is not 0).
 */
static void
hostile(const char *name, const char *pool, const char *method, const char *path,
    const char *hdr, const char *ctype, const char *body, size_t body_len, long want,
    long alt)
{
	char *url, ct[128], ck[300], server[64];
	const char *hdrs[5];
	struct http_resp r;
	pid_t pids[MAXPIDS];
	long before[MAXPIDS], after[MAXPIDS], delta = 0, worst = 0, status = 0;
	int i, n, h = 0, ok = 1;

	if (path == NULL) {
		harness_fail(__FILE__, __LINE__, "%s: out of memory", name);
		return;
	}
	if ((url = malloc(strlen(st.base) + strlen(path) + 1)) == NULL)
		return;
	memcpy(url, st.base, strlen(st.base));
	memcpy(url + strlen(st.base), path, strlen(path) + 1);
	if (ctype != NULL) {
		snprintf(ct, sizeof(ct), "Content-Type: %s", ctype);
		hdrs[h++] = ct;
	}
	if (strncmp(pool, "chat", 4) == 0) {
		snprintf(ck, sizeof(ck), "Cookie: %s", cookie);
		hdrs[h++] = ck;
		hdrs[h++] = "Datastar-Request: true";
	}
	if (hdr != NULL)
		hdrs[h++] = hdr;
	hdrs[h] = NULL;
	http_resp_init(&r);
	n = pool_rss(pool, pids, before);
	for (i = 0; i < REPEAT; i++) {
		long long t0 = stack_now_ms(), ms;

		http_do(method, url, hdrs, body, body_len, 30000, &r);
		ms = stack_now_ms() - t0;
		if (ms > worst)
			worst = ms;
		status = r.status;
		if (r.status != want && (alt == 0 || r.status != alt)) {
			harness_fail(__FILE__, __LINE__, "%s: status %ld, want %ld; body %.200s", name,
			    r.status, want, r.body.data ? r.body.data : "");
			ok = 0;
		} else if (r.body.data == NULL || strncmp(r.body.data, "{\"code\":", 8) != 0 ||
		    strstr(r.body.data, "\"message\":") == NULL) {
			harness_fail(__FILE__, __LINE__, "%s: status %ld without the JSON error body: "
			    "%.200s", name, r.status, r.body.data ? r.body.data : "");
			ok = 0;
		}
		if (ms > ANSWER_MAX_MS) {
			harness_fail(__FILE__, __LINE__, "%s: answered in %lld ms", name, ms);
			ok = 0;
		}
		if (!ok)
			break;
	}
	/* Who answered: the workers' JSON has "details", nginx's says so by its code. */
	server[0] = '\0';
	if (r.body.data != NULL)
		snprintf(server, sizeof(server), "%s", strstr(r.body.data, "payload_too_large") ||
		    strstr(r.body.data, "uri_too_long") || strstr(r.body.data, "header_too_large") ?
		    "nginx" : "worker");
	if (pool_rss(pool, pids, after) == n)
		for (i = 0; i < n; i++)
			if (after[i] - before[i] > delta)
				delta = after[i] - before[i];
	printf("  | %-44s | %3ld | %-6s | %5ld ms | %+7ld kB |\n", name, status, server, worst,
	    delta);
	http_resp_free(&r);
	free(url);
}

static void
test_limits_table(void)
{
	size_t big = 10 * 1024 * 1024, under = 1000 * 1000;
	char *body, *p;
	int k;

	for (k = 0; k < 4; k++)
		start_n[k] = pool_rss(pools[k], start_pids[k], start_kb[k]);
	printf("  | %-44s | %3s | %-6s | %8s | %10s |\n", "input (each sent 5 times)", "st",
	    "by", "worst", "RSS delta");
	printf("  |%.46s|%.5s|%.8s|%.10s|%.12s|\n", "-----------------------------------------"
	    "------", "-----", "--------", "----------", "------------");

	/* rest */
	if ((body = malloc(big + 1)) != NULL) {
		memset(body, ' ', big);
		body[0] = '[';
		body[big - 1] = ']';
		body[big] = '\0';
		hostile("rest POST 10 MB body", "rest", "POST", "/rest/v1/artist", NULL,
		    "application/json", body, big, 413, 0);
		/* Just under the 1 MB cap: the worker reads and parses all of it, to the
		 * stray byte at the end. */
		memcpy(body + under - 2, "x]", 3);
		hostile("rest POST 1 MB of blanks, then junk", "rest", "POST", "/rest/v1/artist", NULL,
		    "application/json", body, under, 400, 0);
		free(body);
	}
	p = repeat("/rest/v1/artist?name=eq.", "a", 100 * 1024, "");
	hostile("rest GET 100 KB query string", "rest", "GET", p, NULL, NULL, NULL, 0, 414, 0);
	free(p);
	p = filters(10000);
	hostile("rest GET 10,000 filters", "rest", "GET", p, NULL, NULL, NULL, 0, 414, 0);
	free(p);
	p = filters(300);
	hostile("rest GET 300 filters (7 KB)", "rest", "GET", p, NULL, NULL, NULL, 0, 400, 0);
	free(p);
	p = repeat("/rest/v1/artist?select=", "album(artist(", 25, "*");
	if (p != NULL) {
		char *q = repeat(p, "))", 25, "");

		hostile("rest GET embed depth 50", "rest", "GET", q, NULL, NULL, NULL, 0, 400, 0);
		free(q);
		free(p);
	}
	p = numbers("/rest/v1/artist?artist_id=in.(", 100000, ")");
	hostile("rest GET in.(100,000 values)", "rest", "GET", p, NULL, NULL, NULL, 0, 414, 0);
	free(p);
	p = numbers("/rest/v1/artist?artist_id=in.(", 1500, ")");
	hostile("rest GET in.(1,500 values) (7 KB)", "rest", "GET", p, NULL, NULL, NULL, 0, 400,
	    0);
	free(p);
	p = repeat("", "[", 10000, "");
	if (p != NULL) {
		char *q = repeat(p, "]", 10000, "");

		hostile("rest POST JSON nested 10,000 deep", "rest", "POST", "/rest/v1/artist",
		    NULL, "application/json", q, q ? strlen(q) : 0, 400, 0);
		hostile("rest POST rpc JSON nested 10,000 deep", "rest", "POST",
		    "/rest/v1/rpc/add_them", NULL, "application/json", q, q ? strlen(q) : 0, 400,
		    0);
		free(q);
		free(p);
	}
	p = repeat("[{\"nosuch\":1}", ",{\"nosuch\":1}", 9999, "]");
	hostile("rest POST 10,000 rows, unknown column", "rest", "POST", "/rest/v1/artist",
	    NULL, "application/json", p, p ? strlen(p) : 0, 400, 0);
	free(p);
	p = repeat("[{\"name\":\"x\"}", ",{\"name\":\"x\",\"artist_id\":\"x\"}", 9999, "]");
	hostile("rest POST 10,000 rows, one bad value", "rest", "POST", "/rest/v1/artist",
	    NULL, "application/json", p, p ? strlen(p) : 0, 400, 0);
	free(p);
	p = repeat("X-Big: ", "a", 64 * 1024, "");
	hostile("rest GET with a 64 KB header", "rest", "GET", "/rest/v1/artist", p, NULL,
	    NULL, 0, 400, 0);
	free(p);
	p = repeat("Cookie: ", "a=b; ", 200, "");
	hostile("rest GET with a 1 KB cookie, 200 pairs", "rest", "GET", "/rest/v1/nosuch", p,
	    NULL, NULL, 0, 404, 0);
	free(p);

	/* chat writes */
	if ((body = malloc(big + 1)) != NULL) {
		memset(body, 'a', big);
		memcpy(body, "{\"messageSend\":\"", 16);
		memcpy(body + big - 2, "\"}", 3);
		hostile("chat message-send 10 MB body", "chat_message_send", "POST",
		    "/chat/message-send", NULL, "application/json", body, big, 413, 0);
		memcpy(body + under - 2, "\"}", 3);
		hostile("chat message-send 1 MB message", "chat_message_send", "POST",
		    "/chat/message-send", NULL, "application/json", body, under, 400, 0);
		free(body);
	}
	/* Form bodies (the page without script): 2,000 fields, a 1 MB escaped message. */
	p = repeat("messageSend=x", "&nicknameSet=", 2000, "");
	hostile("chat message-send form with 2,000 fields", "chat_message_send", "POST",
	    "/chat/message-send", NULL, "application/x-www-form-urlencoded", p,
	    p ? strlen(p) : 0, 400, 0);
	free(p);
	p = repeat("messageSend=", "%E2%82%AC", 110000, "");
	hostile("chat message-send form with a 1 MB escaped message", "chat_message_send",
	    "POST", "/chat/message-send", NULL, "application/x-www-form-urlencoded", p,
	    p ? strlen(p) : 0, 400, 413);
	free(p);
	p = repeat("", "{\"a\":", 10000, "1");
	if (p != NULL) {
		char *q = repeat(p, "}", 10000, "");

		hostile("chat message-send JSON nested 10,000 deep", "chat_message_send", "POST",
		    "/chat/message-send", NULL, "application/json", q, q ? strlen(q) : 0, 400, 0);
		hostile("chat nickname-set JSON nested 10,000 deep", "chat_nickname_set", "POST",
		    "/chat/nickname-set", NULL, "application/json", q, q ? strlen(q) : 0, 400, 0);
		hostile("chat channel-open JSON nested 10,000 deep", "chat_channel_open", "POST",
		    "/chat/channel-open", NULL, "application/json", q, q ? strlen(q) : 0, 400, 0);
		free(q);
		free(p);
	}
	{
		static const char utf8[] = "{\"messageSend\":\"caf\xc3\x28 \xff\xfe \xed\xa0\x80\"}";
		static const char nul[] = "{\"messageSend\":\"a\\u0000b\"}";
		static const char ok[] = "{\"messageSend\":\"hello\"}";

		hostile("chat message-send invalid UTF-8", "chat_message_send", "POST",
		    "/chat/message-send", NULL, "application/json", utf8, strlen(utf8), 400, 0);
		hostile("chat nickname-set invalid UTF-8", "chat_nickname_set", "POST",
		    "/chat/nickname-set", NULL, "application/json",
		    "{\"nicknameSet\":\"\xc0\xaf\"}", 19, 400, 0);
		hostile("chat message-send escaped NUL", "chat_message_send", "POST",
		    "/chat/message-send", NULL, "application/json", nul, strlen(nul), 400, 0);
		hostile("chat message-send text/plain", "chat_message_send", "POST",
		    "/chat/message-send", NULL, "text/plain", ok, strlen(ok), 415, 0);
		/* A form body is decoded: JSON text sent as a form is one unknown field. */
		hostile("chat message-send JSON as form-urlencoded", "chat_message_send", "POST",
		    "/chat/message-send", NULL, "application/x-www-form-urlencoded", ok,
		    strlen(ok), 400, 0);
	}
	p = repeat("X-Big: ", "a", 64 * 1024, "");
	hostile("chat message-send with a 64 KB header", "chat_message_send", "POST",
	    "/chat/message-send", p, "application/json", "{}", 2, 400, 0);
	free(p);
}

/* Sends raw bytes to the stack's port and reads the answer until the server closes (at
 * most 5 s) into out; returns the bytes read, or -1. */
static long
raw_http(const char *req, size_t len, char *out, size_t outlen)
{
	struct sockaddr_in sa;
	struct timeval tv = { 5, 0 };
	size_t got = 0;
	ssize_t n;
	int fd;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_port = htons((unsigned short)st.port);
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 ||
	    send(fd, req, len, MSG_NOSIGNAL) != (ssize_t)len) {
		close(fd);
		return -1;
	}
	while (got + 1 < outlen && (n = recv(fd, out + got, outlen - 1 - got, 0)) > 0)
		got += (size_t)n;
	out[got] = '\0';
	close(fd);
	return (long)got;
}

/* Requests nginx refuses before any location (malformed request line or header, a
 * duplicate Host, a request line over 8 KiB): each answers its status with the JSON body
 * of the generated error pages, not nginx's HTML. */
static void
test_limits_malformed(void)
{
	static const struct {
		const char *req;
		const char *status;
		const char *code;
	} cases[] = {
		{ "GARBAGE\r\n\r\n", "HTTP/1.1 400 ", "bad_request" },
		{ "GET /rest/v1/artist HTTP/1.1\r\nHost: x\r\nno colon here\r\n\r\n",
		    "HTTP/1.1 400 ", "bad_request" },
		{ "GET /rest/v1/artist HTTP/1.1\r\nHost: x\r\nHost: y\r\n\r\n", "HTTP/1.1 400 ",
		    "bad_request" },
		{ "GET /health HTTP/1.1\r\n\r\n", "HTTP/1.1 400 ", "bad_request" },
		{ "GET /health HTTP/9.9\r\nHost: x\r\n\r\n", "HTTP/1.1 505 ",
		    "http_version_not_supported" },
		{ "POST /chat/message-send HTTP/1.1\r\nHost: x\r\nContent-Length: 1\r\n"
		    "Transfer-Encoding: chunked\r\n\r\n0\r\n\r\n", "HTTP/1.1 400 ", "bad_request" },
		{ "POST /chat/message-send HTTP/1.1\r\nHost: x\r\nContent-Length: -5\r\n\r\n",
		    "HTTP/1.1 400 ", "bad_request" },
	};
	static char out[65536];
	char *req;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (raw_http(cases[i].req, strlen(cases[i].req), out, sizeof(out)) < 0) {
			harness_fail(__FILE__, __LINE__, "case %zu: no connection", i);
			continue;
		}
		if (strncmp(out, cases[i].status, strlen(cases[i].status)) != 0)
			harness_fail(__FILE__, __LINE__, "case %zu: %.60s, want %s", i, out,
			    cases[i].status);
		if (cases[i].code != NULL) {
			char want[64];

			snprintf(want, sizeof(want), "\r\n\r\n{\"code\":\"%s\"", cases[i].code);
			if (strstr(out, want) == NULL || strstr(out, "application/json") == NULL)
				harness_fail(__FILE__, __LINE__, "case %zu: not the JSON error: %.400s", i,
				    out);
		}
	}
	/* A request line of 20 KiB: 414, JSON. */
	if ((req = repeat("GET /rest/v1/artist?x=", "a", 20 * 1024, " HTTP/1.1\r\nHost: x\r\n\r\n"))
	    != NULL) {
		CHECK(raw_http(req, strlen(req), out, sizeof(out)) > 0);
		CHECK(strncmp(out, "HTTP/1.1 414 ", 13) == 0);
		CHECK(strstr(out, "\r\n\r\n{\"code\":\"uri_too_long\"") != NULL);
		free(req);
	}
}

/*
 * Regression: nginx answered its own 405 (a TRACE) and 501 (an unknown
 * Transfer-Encoding) with its HTML pages.  Every answer nginx makes by itself has the
 * JSON error shape and type.
 */
static void
test_nginx_405_501_answer_json(void)
{
	static const struct {
		const char *req;
		const char *status;
		const char *code;
	} cases[] = {
		{ "TRACE /health HTTP/1.1\r\nHost: x\r\n\r\n", "HTTP/1.1 405 ",
		    "method_not_allowed" },
		{ "TRACE /rest/v1/artist HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n",
		    "HTTP/1.1 405 ", "method_not_allowed" },
		{ "POST /chat/message-send HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: gzip\r\n"
		    "\r\n", "HTTP/1.1 501 ", "not_implemented" },
	};
	static char out[65536];
	char want[80];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		if (raw_http(cases[i].req, strlen(cases[i].req), out, sizeof(out)) < 0) {
			harness_fail(__FILE__, __LINE__, "case %zu: no connection", i);
			continue;
		}
		if (strncmp(out, cases[i].status, strlen(cases[i].status)) != 0)
			harness_fail(__FILE__, __LINE__, "case %zu: %.60s, want %s", i, out,
			    cases[i].status);
		snprintf(want, sizeof(want), "\r\n\r\n{\"code\":\"%s\"", cases[i].code);
		if (strstr(out, want) == NULL || strstr(out, "application/json") == NULL ||
		    strstr(out, "<html") != NULL)
			harness_fail(__FILE__, __LINE__, "case %zu: not the JSON error: %.400s", i,
			    out);
	}
}

/* Nothing was written, and every worker's RSS stayed within RSS_GROWTH_MAX of its start
 * (release builds; under ASan it is printed only). */
static void
test_limits_after(void)
{
	pid_t pids[MAXPIDS];
	long kb[MAXPIDS], hwm;
	int k, i, j, n;

	CHECK_INT(chatfix_int(resturl, "SELECT count(*) FROM artist", NULL), 2);
	CHECK_INT(chatfix_int(chaturl, "SELECT count(*) FROM messages WHERE content = 'hello'",
	    NULL), 0);
	for (k = 0; k < 4; k++) {
		n = pool_rss(pools[k], pids, kb);
		CHECK_INT(n, start_n[k]);
		for (i = 0; i < n; i++) {
			for (j = 0; j < start_n[k] && start_pids[k][j] != pids[i]; j++)
				;
			/* The same worker served everything: none crashed and restarted. */
			CHECK(j < start_n[k]);
			if (j == start_n[k])
				continue;
			hwm = stack_proc_kb(pids[i], "VmHWM:");
			printf("  %-18s pid %-7d RSS %6ld kB -> %6ld kB (%+ld), peak %ld kB\n",
			    pools[k], (int)pids[i], start_kb[k][j], kb[i], kb[i] - start_kb[k][j], hwm);
			if (kb[i] - start_kb[k][j] > RSS_GROWTH_MAX && !stack_under_asan(pids[i]))
				harness_fail(__FILE__, __LINE__, "%s pid %d grew by %ld kB", pools[k],
				    (int)pids[i], kb[i] - start_kb[k][j]);
		}
		CHECK_INT(stack_pool_value(&st, pools[k], "crashes"), 0);
	}
}

int
main(void)
{
	if (setup() < 0) {
		CHECK(!"the stack started");
		goto out;
	}
	RUN(test_limits_table);
	RUN(test_limits_malformed);
	RUN(test_nginx_405_501_answer_json);
	RUN(test_limits_after);
out:
	if (up)
		stack_stop(&st);
	stack_sh("rm -rf %s", dir);
	return harness_done();
}
