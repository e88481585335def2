/*
 * test_status: the metrics address's status page (supervisor/stats_html.c, its charts
 * from stats_ring.c) and nginx's stub_status figures in /metrics (set nginx_status,
 * supervisor/stubstatus.c, nginxconf.c), through the whole stack: nginx, sluiced,
 * bin/health and bin/rest on a SQLite file.
 *
 * The page answers GET / and /status with 200 text/html, a Content-Security-Policy that
 * allows no script, a section per pool named after it, the requests counted, and an SVG
 * chart per figure whose requests line has points once the ring holds two samples; it
 * holds no script and stays under 100 kB; HEAD has no body, POST is 405, other paths 404,
 * and nginx's public listener never leads there.  Pool names are [a-z][a-z0-9_]* (the
 * endpoint list refuses anything else), so what can carry markup is a path: the database
 * file here is named with "<b>" and "&", which the page shows escaped, never as markup.
 *
 * nginx's figures, in both profiles: a known number of requests through nginx raises
 * sluice_nginx_requests_total by at least that number; the stub_status server answers
 * 127.0.0.1 and refuses another loopback address (403), answers 404 to any other path,
 * and the public listener answers 404 at its path; nginx stopped, /metrics says
 * sluice_nginx_up 0 and no figure, at once; without set nginx_status, no sluice_nginx_
 * line at all.  The same figures in ctl status --json ("nginx": n GETs between two asks
 * are exactly n + 1 requests, the second ask's own one included; {"up": false} once
 * nginx is stopped; no member without the setting) and a line of ctl top.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "chatfix.h"
#include "http.h"
#include "metricsfix.h"
#include "stack.h"
#include "../lib/harness.h"

/* The database file's name: markup and an ampersand, which the page must escape. */
#define DB_NAME_FMT	"/tmp/sluice-status-%d-<b>x&y.db"

/* The stack (tests/lib/metricsfix.h: health with 2 workers, rest on a one-table SQLite
 * file, the metrics address on *mport) on a file whose name carries markup (into db), and
 * extra lines (set nginx_status ...).  0 or -1. */
static int
start(struct stack *s, const char *profile, const char *extra, char *db, size_t dblen,
    int *mport)
{
	snprintf(db, dblen, DB_NAME_FMT, (int)getpid());
	return metricsfix_start(s, profile, extra, db, mport);
}

static int
send_n(const char *url, int n)
{
	struct http_resp r;
	int i, bad = 0;

	http_resp_init(&r);
	for (i = 0; i < n; i++)
		if (http_do("GET", url, NULL, NULL, 0, 5000, &r) != 0 || r.status != 200)
			bad++;
	http_resp_free(&r);
	return bad;
}

/* 1 when r's body holds text. */
static int
has(const struct http_resp *r, const char *text)
{
	return r->body.data != NULL && strstr(r->body.data, text) != NULL;
}

/* The value of the sample line "name value" of the Prometheus text r, or -1. */
static double
sample(const struct http_resp *r, const char *name)
{
	const char *p = r->body.data;
	size_t n = strlen(name);

	for (; p != NULL && (p = strstr(p, name)) != NULL; p += n)
		if ((p == r->body.data || p[-1] == '\n') && p[n] == ' ')
			return atof(p + n + 1);
	return -1;
}

/* The points of the series class cls in the page r: its path's steps ("l2") plus its
 * starts ("M"); 0 when there is none. */
static int
points(const struct http_resp *r, const char *section, const char *cls)
{
	char want[64];
	const char *sec, *p, *end;
	int n = 0;

	if (r->body.data == NULL || (sec = strstr(r->body.data, section)) == NULL)
		return 0;
	snprintf(want, sizeof(want), "<path class=\"%s\" d=\"", cls);
	if ((p = strstr(sec, want)) == NULL || (end = strchr(p + strlen(want), '"')) == NULL)
		return 0;
	for (p += strlen(want); p < end; p++)
		n += *p == 'M' || (*p == 'l' && p[1] == '2');
	return n;
}

/* The page's answer: status, type, the headers that keep script out, the sections. */
static void
page_basics(int mport, const char *path)
{
	struct http_resp r;
	char v[256];

	http_resp_init(&r);
	CHECK(metricsfix_scrape(mport, "GET", path, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(http_header(&r, "Content-Type", v, sizeof(v)) == 0 &&
	    strcmp(v, "text/html; charset=utf-8") == 0);
	CHECK(http_header(&r, "Content-Security-Policy", v, sizeof(v)) == 0 &&
	    strstr(v, "default-src 'none'") != NULL && strstr(v, "script") == NULL);
	CHECK(http_header(&r, "X-Content-Type-Options", v, sizeof(v)) == 0);
	CHECK(has(&r, "<!DOCTYPE html>"));
	CHECK(has(&r, "<section class=\"pool\" id=\"pool-health\">\n<h2>health "));
	CHECK(has(&r, "<section class=\"pool\" id=\"pool-rest\">\n<h2>rest "));
	CHECK(has(&r, "<svg class=\"chart\""));
	/* In the endpoint list's order. */
	CHECK(r.body.data != NULL && strstr(r.body.data, "id=\"pool-health\"") <
	    strstr(r.body.data, "id=\"pool-rest\""));
	CHECK(!has(&r, "<script") && !has(&r, "<SCRIPT") && !has(&r, "javascript:"));
	CHECK(r.body.len > 0 && r.body.len < 100 * 1024);
	http_resp_free(&r);
}

/*
 * The status page: 20 GETs of /health counted on it; a client sending for 5 s gives the
 * requests chart points; the database file's name escaped; HEAD, POST, other paths.
 */
static void
test_status_page(void)
{
	struct stack s;
	struct http_resp r;
	struct http_loop g;
	char db[128], url[300], esc[160];
	int mport, n = 0;
	long long end;

	if (start(&s, "tuned", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK_INT(send_n(url, 20), 0);
	page_basics(mport, "/");
	page_basics(mport, "/status");
	page_basics(mport, "/status?x=<script>");
	http_resp_init(&r);
	/* The count of the 20 (a worker counts a request once its answer is written). */
	end = stack_now_ms() + 3000;
	do {
		CHECK(metricsfix_scrape(mport, "GET", "/", &r) == 0);
	} while (!has(&r, "<td class=\"requests\">20</td>") && stack_now_ms() < end &&
	    usleep(20 * 1000) == 0);
	CHECK(has(&r, "<td class=\"requests\">20</td>"));
	CHECK(has(&r, "<td class=\"err5\">0</td>"));
	CHECK(has(&r, "workers <span class=\"workers\">2/2</span> x 4 threads"));
	CHECK(has(&r, "<td class=\"threads\">0 / 8</td>"));
	/* The database's name, escaped: never markup. */
	snprintf(esc, sizeof(esc), "database /tmp/sluice-status-%d-&lt;b&gt;x&amp;y.db (ok)",
	    (int)getpid());
	CHECK(has(&r, esc));
	CHECK(!has(&r, "<b>x&y"));
	CHECK(!has(&r, "<b>"));

	/* Load while the ring takes samples: at least two points on the requests line. */
	CHECK_INT(http_loop_start_paced(&g, "GET", url, 200, 5), 0);
	end = stack_now_ms() + 12000;
	do {
		usleep(500 * 1000);
		CHECK(metricsfix_scrape(mport, "GET", "/", &r) == 0);
		n = points(&r, "id=\"pool-health\"", "s-rps");
	} while (n < 3 && stack_now_ms() < end);
	http_loop_stop(&g);
	printf("   the requests chart after %ld requests: %d points, page %zu bytes\n",
	    g.sent - g.bad, n, r.body.len);
	CHECK(n >= 3);
	CHECK(points(&r, "id=\"pool-health\"", "s-p99") >= 2);
	CHECK(points(&r, "id=\"pool-health\"", "s-busy") >= 2);
	CHECK(r.body.len < 100 * 1024);

	CHECK(metricsfix_scrape(mport, "HEAD", "/", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(r.body.len, 0);
	CHECK(metricsfix_scrape(mport, "POST", "/", &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(metricsfix_scrape(mport, "POST", "/status", &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(metricsfix_scrape(mport, "DELETE", "/status", &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(metricsfix_scrape(mport, "GET", "/statusx", &r) == 0);
	CHECK_INT(r.status, 404);
	CHECK(metricsfix_scrape(mport, "GET", "/status/", &r) == 0);
	CHECK_INT(r.status, 404);
	CHECK(metricsfix_scrape(mport, "GET", "/index.html", &r) == 0);
	CHECK_INT(r.status, 404);
	/* nginx's public listener does not lead there. */
	snprintf(url, sizeof(url), "%s/status", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 404);
	CHECK(!has(&r, "<svg"));
	http_resp_free(&r);
	metricsfix_stop(&s, db);
}

/* GET path of 127.0.0.1:port from the source address src (a loopback address); the
 * answer's status, or -1. */
static int
get_from(const char *src, int port, const char *path)
{
	struct sockaddr_in me = { .sin_family = AF_INET }, to = { .sin_family = AF_INET };
	struct timeval tv = { 5, 0 };
	char req[256], got[64];
	int fd = socket(AF_INET, SOCK_STREAM, 0), st = -1;
	ssize_t n;

	if (fd < 0)
		return -1;
	inet_pton(AF_INET, src, &me.sin_addr);
	to.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	to.sin_port = htons((uint16_t)port);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	snprintf(req, sizeof(req), "GET %s HTTP/1.0\r\nHost: localhost\r\n\r\n", path);
	if (bind(fd, (struct sockaddr *)&me, sizeof(me)) == 0 &&
	    connect(fd, (struct sockaddr *)&to, sizeof(to)) == 0 &&
	    write(fd, req, strlen(req)) == (ssize_t)strlen(req) &&
	    (n = read(fd, got, sizeof(got) - 1)) > 12) {
		got[n] = '\0';
		if (strncmp(got, "HTTP/1.1 ", 9) == 0)
			st = atoi(got + 9);
	}
	close(fd);
	return st;
}

/* The "nginx" member of ctl status --json: *up 1 or 0 and its requests in *requests (-1
 * without them); 0, or -1 when there is no such member. */
static int
json_nginx(struct stack *s, int *up, double *requests, double *accepts, double *handled)
{
	struct buf out;
	cJSON *root = NULL;
	const cJSON *ng, *v;
	int ret = -1;

	buf_init(&out, 0);
	if (stack_ctl(s, &out, "status --json") == 0 && out.data != NULL)
		root = cJSON_Parse(out.data);
	ng = cJSON_GetObjectItem(root, "nginx");
	if (cJSON_IsObject(ng)) {
		*up = cJSON_IsTrue(cJSON_GetObjectItem(ng, "up"));
		v = cJSON_GetObjectItem(ng, "requests");
		*requests = cJSON_IsNumber(v) ? v->valuedouble : -1;
		v = cJSON_GetObjectItem(ng, "accepts");
		*accepts = cJSON_IsNumber(v) ? v->valuedouble : -1;
		v = cJSON_GetObjectItem(ng, "handled");
		*handled = cJSON_IsNumber(v) ? v->valuedouble : -1;
		ret = 0;
	}
	cJSON_Delete(root);
	buf_free(&out);
	return ret;
}

/* The output of `ctl top 2` holds a line starting with line; 1 or 0. */
static int
top_has(struct stack *s, const char *line)
{
	struct buf out;
	const char *p;
	int found = 0;

	buf_init(&out, 0);
	if (stack_ctl(s, &out, "top 2") == 0 && out.data != NULL)
		for (p = out.data; p != NULL && !found; p = strchr(p, '\n'))
			found = strncmp(p += *p == '\n', line, strlen(line)) == 0;
	buf_free(&out);
	return found;
}

/*
 * nginx's figures in ctl status --json: each ask reads stub_status afresh, and the ask is
 * one of nginx's requests, so n GETs between two asks are exactly n + 1 requests more;
 * handled <= accepted; ctl top has a line of them.
 */
static void
nginx_json(struct stack *s, int n)
{
	double r0 = -1, r1 = -1, acc = -1, han = -1;
	char url[300];
	int up = 0;

	CHECK_INT(json_nginx(s, &up, &r0, &acc, &han), 0);
	CHECK_INT(up, 1);
	CHECK(r0 >= 1);
	snprintf(url, sizeof(url), "%s/health", s->base);
	CHECK_INT(send_n(url, n), 0);
	CHECK_INT(json_nginx(s, &up, &r1, &acc, &han), 0);
	printf("   ctl status --json: nginx's requests %.0f, then %.0f after %d GETs\n", r0, r1,
	    n);
	CHECK_INT(r1 - r0, n + 1);
	CHECK(acc >= 1 && han >= 1 && han <= acc);
	CHECK(top_has(s, "nginx: "));
}

/* nginx's figures in one profile: see the file's comment. */
static void
nginx_figures(const char *profile)
{
	enum { N = 25 };
	struct stack s;
	struct http_resp r;
	char db[128], url[300], extra[64];
	int mport, nport = stack_free_port();
	double before, after;
	long long t0;

	snprintf(extra, sizeof(extra), "set nginx_status %d\n", nport);
	if (nport < 0 || start(&s, profile, extra, db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	http_resp_init(&r);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	CHECK_INT(sample(&r, "sluice_nginx_up"), 1);
	CHECK(has(&r, "# TYPE sluice_nginx_requests_total counter\n"));
	CHECK(has(&r, "# TYPE sluice_nginx_connections_active gauge\n"));
	CHECK(sample(&r, "sluice_nginx_connections_active") >= 0);
	CHECK(sample(&r, "sluice_nginx_connections_accepted_total") >= 1);
	CHECK(sample(&r, "sluice_nginx_connections_waiting") >= 0);
	before = sample(&r, "sluice_nginx_requests_total");
	CHECK(before >= 1);
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK_INT(send_n(url, N), 0);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	after = sample(&r, "sluice_nginx_requests_total");
	printf("   %s: nginx's requests %.0f, then %.0f after %d GETs\n", profile, before, after,
	    N);
	CHECK(after >= before + N);
	CHECK(sample(&r, "sluice_nginx_connections_handled_total") <=
	    sample(&r, "sluice_nginx_connections_accepted_total"));
	/* The page shows them too. */
	CHECK(metricsfix_scrape(mport, "GET", "/", &r) == 0);
	CHECK(has(&r, "<section id=\"nginx\">"));
	CHECK(has(&r, "<th>requests</th><td>"));
	nginx_json(&s, N);

	/* Only 127.0.0.1, only its path; the public listener never answers it. */
	CHECK_INT(get_from("127.0.0.1", nport, "/nginx_status"), 200);
	CHECK_INT(get_from("127.0.0.2", nport, "/nginx_status"), 403);
	CHECK_INT(get_from("127.0.0.1", nport, "/"), 404);
	CHECK_INT(get_from("127.0.0.1", nport, "/health"), 404);
	snprintf(url, sizeof(url), "%s/nginx_status", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 404);
	CHECK(!has(&r, "Active connections"));

	/* nginx gone: up 0, no figure, at once. */
	kill(s.nginx, SIGTERM);
	stack_reap(s.nginx, 5000);
	s.nginx = 0;
	t0 = stack_now_ms();
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	CHECK(stack_now_ms() - t0 < 1000);
	CHECK_INT(r.status, 200);
	CHECK_INT(sample(&r, "sluice_nginx_up"), 0);
	CHECK(!has(&r, "sluice_nginx_requests_total"));
	CHECK(has(&r, "sluice_requests_total{pool=\"health\",class=\"2xx\"}"));
	CHECK(metricsfix_scrape(mport, "GET", "/", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(has(&r, "stub_status did not answer"));
	{
		double req = 0, acc = 0, han = 0;
		int up = 1;

		CHECK_INT(json_nginx(&s, &up, &req, &acc, &han), 0);
		CHECK_INT(up, 0);
		CHECK(req == -1 && acc == -1);
		CHECK(top_has(&s, "nginx: stub_status not answering"));
	}
	http_resp_free(&r);
	metricsfix_stop(&s, db);
}

static void
test_status_nginx_default(void)
{
	nginx_figures("default");
}

static void
test_status_nginx_tuned(void)
{
	nginx_figures("tuned");
}

/* Without set nginx_status: no nginx family, no nginx section. */
static void
test_status_nginx_unset(void)
{
	struct stack s;
	struct http_resp r;
	char db[128];
	int mport;

	if (start(&s, "default", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	http_resp_init(&r);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(!has(&r, "sluice_nginx_"));
	CHECK(metricsfix_scrape(mport, "GET", "/", &r) == 0);
	CHECK(!has(&r, "id=\"nginx\""));
	{
		double req, acc, han;
		int up;

		CHECK_INT(json_nginx(&s, &up, &req, &acc, &han), -1);
		CHECK(!top_has(&s, "nginx: "));
	}
	http_resp_free(&r);
	metricsfix_stop(&s, db);
}

int
main(void)
{
	RUN(test_status_page);
	RUN(test_status_nginx_default);
	RUN(test_status_nginx_tuned);
	RUN(test_status_nginx_unset);
	return harness_done();
}
