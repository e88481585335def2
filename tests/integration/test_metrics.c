/*
 * test_metrics: the pools' counters (common/metrics.h, supervisor/stats.c) through the
 * whole stack: nginx, sluiced, bin/health and bin/rest on a SQLite file.  A known mix of
 * requests gives exactly those counts in `ctl status`, `ctl status --json` and the
 * Prometheus text on set metrics_listen; a worker killed with SIGKILL loses none of them;
 * the tuned profile's kept connections show as requests per connection above 1 where the
 * default profile's show exactly 1; a request stopped at its time budget counts as slow;
 * connections to stopped workers show in the listen queue (a unix pool's and a TCP
 * pool's, whose handshakes past its backlog the kernel drops and counts); the database's
 * counters of a SQLite endpoint (group commits, busy retries, connections open); set
 * metrics off gives no page and no counts.
 */
#include <dirent.h>
#include <errno.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/un.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "chatfix.h"
#include "http.h"
#include "metricsfix.h"
#include "stack.h"
#include "../lib/harness.h"

/* `ctl status --json`, parsed; NULL when it failed.  Caller frees with cJSON_Delete(). */
static cJSON *
status_json(struct stack *s)
{
	struct buf out;
	cJSON *j = NULL;

	buf_init(&out, 0);
	if (stack_ctl(s, &out, "status --json") == 0 && out.data != NULL)
		j = cJSON_Parse(out.data);
	buf_free(&out);
	return j;
}

/* The pool called name in a status_json() answer, or NULL. */
static const cJSON *
pool_of(const cJSON *j, const char *name)
{
	const cJSON *p, *n;

	cJSON_ArrayForEach(p, cJSON_GetObjectItem(j, "pools")) {
		n = cJSON_GetObjectItem(p, "name");
		if (cJSON_IsString(n) && strcmp(n->valuestring, name) == 0)
			return p;
	}
	return NULL;
}

/* The number at the path "a" or "a.b" in pool object p, or -1. */
static double
num(const cJSON *p, const char *a, const char *b)
{
	const cJSON *v = cJSON_GetObjectItem(p, a);

	if (b != NULL)
		v = cJSON_GetObjectItem(v, b);
	return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

/*
 * Waits up to 3 s for pool name to have counted want requests with every connection it
 * accepted closed or kept (a worker counts a request once its response is written, so
 * the client may see the answer a moment before the count).  The pool's object from the
 * last look goes to *out (caller frees *root), NULL when there was none.
 */
static const cJSON *
wait_requests(struct stack *s, const char *name, double want, cJSON **root)
{
	const cJSON *p = NULL;
	long long end = stack_now_ms() + 3000;

	*root = NULL;
	do {
		cJSON_Delete(*root);
		if ((*root = status_json(s)) != NULL && (p = pool_of(*root, name)) != NULL &&
		    num(p, "requests", NULL) == want && num(p, "inflight", NULL) == 0)
			return p;
		usleep(20 * 1000);
	} while (stack_now_ms() < end);
	return p;
}

static int
send_n(const char *method, const char *url, int n, long want)
{
	struct http_resp r;
	int i, bad = 0;

	http_resp_init(&r);
	for (i = 0; i < n; i++)
		if (http_do(method, url, NULL, method[0] == 'P' ? "{}" : NULL,
		    method[0] == 'P' ? 2 : 0, 5000, &r) != 0 || r.status != want)
			bad++;
	http_resp_free(&r);
	return bad;
}

/* A connection to the metrics address, with 5 s timeouts; -1 when refused. */
static int
metrics_connect(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	struct timeval tv = { 5, 0 };
	int fd = socket(AF_INET, SOCK_STREAM, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends raw bytes to the metrics address and reads the answer's start into out[len]. */
static void
metrics_raw(int port, const char *req, char *out, size_t len)
{
	ssize_t n;
	int fd = metrics_connect(port);

	out[0] = '\0';
	if (fd < 0)
		return;
	if (write(fd, req, strlen(req)) == (ssize_t)strlen(req) &&
	    (n = read(fd, out, len - 1)) > 0)
		out[n] = '\0';
	close(fd);
}

/* 1 when the Prometheus text holds the line exactly. */
static int
has_line(const struct http_resp *r, const char *line)
{
	const char *p = r->body.data;
	size_t n = strlen(line);

	for (; p != NULL && (p = strstr(p, line)) != NULL; p += n)
		if ((p == r->body.data || p[-1] == '\n') && (p[n] == '\n' || p[n] == '\0'))
			return 1;
	return 0;
}

/* The stack of the counting cases (tests/lib/metricsfix.h: health with 2 workers, rest on
 * a one-table SQLite file, the metrics address on *mport), the file's name into db.  0 or
 * -1. */
static int
start(struct stack *s, const char *profile, const char *extra, char *db, size_t dblen,
    int *mport)
{
	snprintf(db, dblen, "/tmp/sluice-metrics-%d.db", (int)getpid());
	return metricsfix_start(s, profile, extra, db, mport);
}

/* 20 GET /health, 2 POST /health (405), 3 GET of a missing table (404): exactly those. */
static void
test_metrics_counts(void)
{
	struct stack s;
	struct http_resp r;
	cJSON *root = NULL;
	const cJSON *h, *rest;
	char db[128], url[300];
	int mport;

	if (start(&s, "default", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK_INT(send_n("GET", url, 20, 200), 0);
	CHECK_INT(send_n("POST", url, 2, 405), 0);
	snprintf(url, sizeof(url), "%s/rest/v1/nosuch", s.base);
	CHECK_INT(send_n("GET", url, 3, 404), 0);
	h = wait_requests(&s, "health", 22, &root);
	CHECK(h != NULL);
	CHECK_INT(num(h, "requests", NULL), 22);
	CHECK_INT(num(h, "status", "2xx"), 20);
	CHECK_INT(num(h, "status", "4xx"), 2);
	CHECK_INT(num(h, "status", "5xx"), 0);
	CHECK_INT(num(h, "methods", "GET"), 20);
	CHECK_INT(num(h, "methods", "POST"), 2);
	CHECK_INT(num(h, "methods", "HEAD"), 0);
	CHECK_INT(num(h, "duration_seconds", "count"), 22);
	CHECK_INT(num(h, "inflight", NULL), 0);
	CHECK(num(h, "inflight_peak", NULL) >= 1);
	/* The default profile opens a connection per request. */
	CHECK_INT(num(h, "connections", "accepted"), 22);
	CHECK_INT(num(h, "requests_per_connection", NULL), 1);
	CHECK_INT(num(h, "spawns", NULL), 2);
	CHECK_INT(num(h, "slow", NULL), 0);
	CHECK(num(h, "p99_ms", NULL) > 0 && num(h, "p99_ms", NULL) <= 10000);
	cJSON_Delete(root);
	rest = wait_requests(&s, "rest", 3, &root);
	CHECK(rest != NULL);
	CHECK_INT(num(rest, "requests", NULL), 3);
	CHECK_INT(num(rest, "status", "4xx"), 3);
	CHECK_INT(num(rest, "methods", "GET"), 3);
	cJSON_Delete(root);
	CHECK_INT(stack_pool_value(&s, "health", "requests"), 22);
	CHECK_INT(stack_pool_value(&s, "health", "5xx"), 0);

	http_resp_init(&r);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(has_line(&r, "# TYPE sluice_requests_total counter"));
	CHECK(has_line(&r, "sluice_requests_total{pool=\"health\",class=\"2xx\"} 20"));
	CHECK(has_line(&r, "sluice_requests_total{pool=\"health\",class=\"4xx\"} 2"));
	CHECK(has_line(&r, "sluice_requests_total{pool=\"rest\",class=\"4xx\"} 3"));
	CHECK(has_line(&r, "sluice_requests_method_total{pool=\"health\",method=\"POST\"} 2"));
	CHECK(has_line(&r, "sluice_request_duration_seconds_bucket{pool=\"health\","
	    "le=\"+Inf\"} 22"));
	CHECK(has_line(&r, "sluice_request_duration_seconds_count{pool=\"health\"} 22"));
	CHECK(has_line(&r, "sluice_fastcgi_connections_accepted_total{pool=\"health\"} 22"));
	CHECK(has_line(&r, "sluice_worker_spawns_total{pool=\"health\"} 2"));
	CHECK(metricsfix_scrape(mport, "HEAD", "/metrics", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(r.body.len, 0);
	CHECK(metricsfix_scrape(mport, "POST", "/metrics", &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(metricsfix_scrape(mport, "GET", "/other", &r) == 0);
	CHECK_INT(r.status, 404);
	/* nginx's public listener does not lead there. */
	snprintf(url, sizeof(url), "%s/metrics", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 404);
	CHECK(r.body.data == NULL || strstr(r.body.data, "sluice_requests_total") == NULL);
	http_resp_free(&r);
	metricsfix_stop(&s, db);
}

/*
 * The metrics address against bad clients: a request line without a space is refused,
 * and one that never sends anything holds sluiced about a second at most (the next
 * client is answered, the pools supervised).
 */
static void
test_metrics_bad_clients(void)
{
	struct stack s;
	struct http_resp r;
	char db[128], got[64];
	long long t0;
	int mport, silent;

	if (start(&s, "default", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	metrics_raw(mport, "GARBAGE\r\n\r\n", got, sizeof(got));
	CHECK(strncmp(got, "HTTP/1.1 405 ", 13) == 0);
	silent = metrics_connect(mport);
	CHECK(silent >= 0);
	http_resp_init(&r);
	t0 = stack_now_ms();
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(stack_now_ms() - t0 < 3000);
	printf("   a scrape behind a silent client: %lld ms\n", stack_now_ms() - t0);
	http_resp_free(&r);
	if (silent >= 0)
		close(silent);
	metricsfix_stop(&s, db);
}

/* A worker killed with SIGKILL: its counts stay in the pool's, and the pool counts on. */
static void
test_metrics_kill(void)
{
	struct stack s;
	cJSON *root = NULL;
	const cJSON *h;
	char db[128], url[300];
	pid_t pids[4];
	int mport, n;

	if (start(&s, "default", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK_INT(send_n("GET", url, 30, 200), 0);
	cJSON_Delete(root);
	CHECK(wait_requests(&s, "health", 30, &root) != NULL);
	cJSON_Delete(root);
	n = stack_worker_pids(&s, "health", pids, 4);
	CHECK_INT(n, 2);
	CHECK(n > 0 && kill(pids[0], SIGKILL) == 0);
	n = n > 1 ? kill(pids[1], SIGKILL) : -1;
	CHECK_INT(n, 0);
	usleep(300 * 1000);
	CHECK(stack_wait_pool(&s, "health", 5000) == 0);
	h = wait_requests(&s, "health", 30, &root);
	CHECK(h != NULL);
	CHECK_INT(num(h, "requests", NULL), 30);
	CHECK_INT(num(h, "status", "2xx"), 30);
	CHECK_INT(num(h, "crashes", NULL), 2);
	CHECK_INT(num(h, "spawns", NULL), 4);
	CHECK_INT(num(h, "connections", "open"), 0);
	cJSON_Delete(root);
	CHECK_INT(send_n("GET", url, 5, 200), 0);
	h = wait_requests(&s, "health", 35, &root);
	CHECK(h != NULL);
	CHECK_INT(num(h, "requests", NULL), 35);
	CHECK_INT(num(h, "duration_seconds", "count"), 35);
	cJSON_Delete(root);
	metricsfix_stop(&s, db);
}

/* The tuned profile keeps its FastCGI connections: more than one request each. */
static void
test_metrics_keepalive(void)
{
	struct stack s;
	cJSON *root = NULL;
	const cJSON *h;
	char db[128], url[300];
	int mport;

	if (start(&s, "tuned", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK_INT(send_n("GET", url, 100, 200), 0);
	h = wait_requests(&s, "health", 100, &root);
	CHECK(h != NULL);
	CHECK_INT(num(h, "requests", NULL), 100);
	CHECK(num(h, "connections", "accepted") >= 1);
	CHECK(num(h, "connections", "accepted") < 100);
	CHECK(num(h, "requests_per_connection", NULL) > 1);
	printf("   tuned profile: 100 requests over %.0f FastCGI connections (%.1f each)\n",
	    num(h, "connections", "accepted"), num(h, "requests_per_connection", NULL));
	cJSON_Delete(root);
	metricsfix_stop(&s, db);
}

/*
 * The time budget: a request stopped at its budget (the embed bomb of test_budgets on a
 * 400 ms budget, answered 503) counts as slow; one that runs a millisecond does not.  It
 * also counts as timed out when it ran past the whole budget, which the database's
 * deadline (in whole milliseconds, set a moment after the request's start) may beat by
 * less than a millisecond: printed, not asserted.
 */
static void
test_metrics_budget(void)
{
	struct stack s;
	struct http_resp r;
	cJSON *root = NULL;
	const cJSON *p;
	char dir[64] = "/tmp/sluice-metrics-XXXXXX", conf[512], url[512];

	if (mkdtemp(dir) == NULL || stack_sh("%s sqlite:%s/chinook.db >/dev/null",
	    stack_seeder("chinook-seed"), dir) != 0) {
		CHECK(!"chinook seeded");
		return;
	}
	snprintf(conf, sizeof(conf), "db chinook sqlite:%s/chinook.db\n"
	    "rest /rest/v1/ workers=1 threads=2 db=chinook stmt_timeout_ms=400\n", dir);
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		stack_sh("rm -rf %s", dir);
		return;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/playlist?select=playlist_id,track(track_id,"
	    "playlist(playlist_id,track(track_id)))", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 60000, &r) == 0);
	CHECK_INT(r.status, 503);
	snprintf(url, sizeof(url), "%s/rest/v1/artist?artist_id=eq.1", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 10000, &r) == 0);
	CHECK_INT(r.status, 200);
	http_resp_free(&r);
	p = wait_requests(&s, "rest", 2, &root);
	CHECK(p != NULL);
	CHECK_INT(num(p, "status", "5xx"), 1);
	CHECK_INT(num(p, "status", "2xx"), 1);
	CHECK_INT(num(p, "slow", NULL), 1);
	CHECK(num(p, "timed_out", NULL) == 0 || num(p, "timed_out", NULL) == 1);
	CHECK(num(p, "p99_ms", NULL) >= 200);
	printf("   a request stopped at its 400 ms budget: slow %.0f, timed out %.0f, p99 %.0f "
	    "ms\n", num(p, "slow", NULL), num(p, "timed_out", NULL), num(p, "p99_ms", NULL));
	cJSON_Delete(root);
	stack_stop(&s);
	stack_sh("rm -rf %s", dir);
}

/* A connection to unix socket path that waits in its listen queue; -1 when refused. */
static int
unix_connect(const char *path)
{
	struct sockaddr_un sun = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM, 0);

	if (fd < 0 || strlen(path) >= sizeof(sun.sun_path)) {
		if (fd >= 0)
			close(fd);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) != 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* The listen queue's figure key ("now", "peak", "backlog") of pool name, or -1. */
static double
queue_of(struct stack *s, const char *name, const char *key)
{
	cJSON *root = status_json(s);
	double v = num(pool_of(root, name), "listen_queue", key);

	cJSON_Delete(root);
	return v;
}

/*
 * The listen queue: both health workers stopped (SIGSTOP), K connections made straight to
 * its socket wait there, and sluiced sees exactly K now and at least K at its peak; once
 * the workers go on (SIGCONT) they take them and the queue is 0, the peak stays.  The
 * serving threads: 2 workers x 4 threads, all idle once nothing is served.
 */
static void
test_metrics_queue(void)
{
	enum { K = 5 };
	struct stack s;
	struct buf out;
	struct http_resp r;
	cJSON *root;
	const cJSON *h;
	char db[128], path[400], line[64];
	pid_t pids[4];
	int mport, fds[K], i, n, made = 0;
	long long end;

	if (start(&s, "default", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	root = status_json(&s);
	h = pool_of(root, "health");
	CHECK_INT(num(h, "threads_busy", NULL), 0);
	CHECK_INT(num(h, "threads_idle", NULL), 8);
	CHECK_INT(num(h, "listen_queue", "now"), 0);
	CHECK(num(h, "listen_queue", "backlog") > 0);
	/* The kernel counts no drops per unix socket: not shown. */
	CHECK(cJSON_GetObjectItem(cJSON_GetObjectItem(h, "listen_queue"), "dropped") == NULL);
	cJSON_Delete(root);
	n = stack_worker_pids(&s, "health", pids, 4);
	CHECK_INT(n, 2);
	for (i = 0; i < n; i++)
		CHECK_INT(kill(pids[i], SIGSTOP), 0);
	snprintf(path, sizeof(path), "%s/health.sock", s.run);
	for (i = 0; i < K; i++)
		if ((fds[i] = unix_connect(path)) >= 0)
			made++;
	CHECK_INT(made, K);
	CHECK_INT(queue_of(&s, "health", "now"), K);
	CHECK(queue_of(&s, "health", "peak") >= K);
	buf_init(&out, 0);
	CHECK_INT(stack_ctl(&s, &out, "status"), 0);
	snprintf(line, sizeof(line), " queue=%d queue_peak=", K);
	CHECK(out.data != NULL && strstr(out.data, line) != NULL);
	buf_free(&out);
	http_resp_init(&r);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	snprintf(line, sizeof(line), "sluice_listen_queue{pool=\"health\"} %d", K);
	CHECK(has_line(&r, line));
	CHECK(has_line(&r, "sluice_threads_idle{pool=\"health\"} 8"));
	CHECK(r.body.data != NULL &&
	    strstr(r.body.data, "sluice_listen_dropped_total{pool=\"health\"}") == NULL);
	http_resp_free(&r);
	for (i = 0; i < n; i++)
		CHECK_INT(kill(pids[i], SIGCONT), 0);
	end = stack_now_ms() + 3000;
	while (queue_of(&s, "health", "now") != 0 && stack_now_ms() < end)
		usleep(20 * 1000);
	CHECK_INT(queue_of(&s, "health", "now"), 0);
	CHECK(queue_of(&s, "health", "peak") >= K);
	printf("   %d connections to stopped workers: queue %d while stopped, 0 after, peak "
	    "%.0f\n", K, K, queue_of(&s, "health", "peak"));
	for (i = 0; i < K; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	metricsfix_stop(&s, db);
}

/* One client of the concurrent POSTs: rows first, first + step, ... below last. */
struct poster {
	pthread_t tid;
	const char *base;
	int first, step, last;
	int created;		/* answered 201 */
};

static void *
poster_run(void *arg)
{
	static const char *const hdr[] = { "Content-Type: application/json", NULL };
	struct poster *c = arg;
	struct http_resp r;
	char url[400], body[64];
	int id;

	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/item", c->base);
	for (id = c->first; id < c->last; id += c->step) {
		snprintf(body, sizeof(body), "{\"id\":%d}", id);
		if (http_do("POST", url, hdr, body, strlen(body), 10000, &r) == 0 &&
		    r.status == 201)
			c->created++;
	}
	http_resp_free(&r);
	return NULL;
}

/* POSTs rows [first, first + n) from clients threads at once; the 201s. */
static int
post_rows(const struct stack *s, int first, int n, int clients)
{
	struct poster c[8];
	int i, created = 0;

	for (i = 0; i < clients && i < 8; i++) {
		c[i] = (struct poster){ .base = s->base, .first = first + i, .step = clients,
		    .last = first + n };
		pthread_create(&c[i].tid, NULL, poster_run, &c[i]);
	}
	for (i = 0; i < clients && i < 8; i++) {
		pthread_join(c[i].tid, NULL);
		created += c[i].created;
	}
	return created;
}

static void busy_retried(struct stack *s, const char *db, int n);

/*
 * The database's counters on a SQLite rest endpoint: 32 POSTs from 8 clients at once are
 * 32 writes in group commits (at least one batch, at most 32, the size histogram's count
 * the batches and its sum the writes); a POST that meets the database locked by another
 * connection (this process's BEGIN IMMEDIATE, held 300 ms) is retried by the busy handler,
 * counted, and answered 201 once the lock goes.
 */
/*
 * Every metric a query of the Grafana dashboard (conf/grafana-sluice.json) names is a
 * family of the exposition r (its # TYPE line), so that no panel stays empty.
 */
static void
dashboard_names(const struct http_resp *r)
{
	FILE *f = fopen("conf/grafana-sluice.json", "r");
	char text[65536], name[96], type[128];
	const char *p;
	size_t n = 0, len, checked = 0;
	static const char *const sfx[] = { "_bucket", "_sum", "_count" };
	const char *body = r->body.data ? r->body.data : "";

	CHECK(f != NULL);
	if (f == NULL)
		return;
	len = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[len] = '\0';
	CHECK(len > 0 && len < sizeof(text) - 1);
	for (p = strstr(text, "sluice_"); p != NULL; p = strstr(p + n, "sluice_")) {
		size_t k;

		for (n = 0; n < sizeof(name) - 1 && (p[n] == '_' || (p[n] >= 'a' && p[n] <= 'z'));
		    n++)
			name[n] = p[n];
		name[n] = '\0';
		if (strcmp(name, "sluice_") == 0)
			continue;
		/* A histogram's series are named after their family. */
		snprintf(type, sizeof(type), "# TYPE %s ", name);
		for (k = 0; k < sizeof(sfx) / sizeof(sfx[0]) && strstr(body, type) == NULL; k++)
			if (n > strlen(sfx[k]) && strcmp(name + n - strlen(sfx[k]), sfx[k]) == 0)
				snprintf(type, sizeof(type), "# TYPE %.*s ",
				    (int)(n - strlen(sfx[k])), name);
		if (strstr(body, type) == NULL)
			fprintf(stderr, "   the dashboard's %s is not in /metrics\n", name);
		CHECK(strstr(body, type) != NULL);
		checked++;
	}
	printf("   the dashboard's queries name %zu metrics\n", checked);
	CHECK(checked >= 20);
}

static void
test_metrics_db(void)
{
	enum { N = 32 };
	struct stack s;
	struct http_resp r;
	cJSON *root = NULL;
	const cJSON *p, *bs, *last;
	char db[128], line[128];
	double batches;
	int mport, created;

	if (start(&s, "default", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	created = post_rows(&s, 1, N, 8);
	CHECK_INT(created, N);
	p = wait_requests(&s, "rest", N, &root);
	CHECK(p != NULL);
	CHECK_INT(num(p, "status", "2xx"), N);
	CHECK_INT(num(p, "db", "commit_writes"), N);
	batches = num(p, "db", "commit_batches");
	CHECK(batches >= 1 && batches <= N);
	bs = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "db"), "batch_size");
	CHECK_INT(cJSON_GetArraySize(cJSON_GetObjectItem(bs, "cumulative")), 9);
	last = cJSON_GetArrayItem(cJSON_GetObjectItem(bs, "cumulative"), 8);
	CHECK_INT(cJSON_IsNumber(last) ? last->valuedouble : -1, batches);
	CHECK_INT(num(p, "db", "busy_retries"), 0);
	CHECK_INT(num(p, "db", "reconnects"), 0);
	printf("   %d concurrent POSTs: %.0f writes in %.0f group commits\n", N,
	    num(p, "db", "commit_writes"), batches);
	cJSON_Delete(root);
	http_resp_init(&r);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	snprintf(line, sizeof(line), "sluice_db_commit_batch_writes_sum{pool=\"rest\"} %d", N);
	CHECK(has_line(&r, line));
	snprintf(line, sizeof(line), "sluice_db_commit_batch_writes_count{pool=\"rest\"} %.0f",
	    batches);
	CHECK(has_line(&r, line));
	CHECK(has_line(&r, "sluice_db_sqlite_busy_retries_total{pool=\"rest\"} 0"));
	dashboard_names(&r);
	http_resp_free(&r);

	busy_retried(&s, db, N);
	metricsfix_stop(&s, db);
}

/* The database db locked by another connection for 300 ms while one POST writes: the busy
 * handler's retries are counted, the POST answered 201 (the pool rest has served n). */
static void
busy_retried(struct stack *s, const char *db, int n)
{
	sqlite3 *lock = NULL;
	cJSON *root = NULL;
	const cJSON *p;

	CHECK_INT(sqlite3_open(db, &lock), SQLITE_OK);
	CHECK_INT(sqlite3_exec(lock, "BEGIN IMMEDIATE", NULL, NULL, NULL), SQLITE_OK);
	{
		struct poster c = { .base = s->base, .first = 1000, .step = 1, .last = 1001 };

		pthread_create(&c.tid, NULL, poster_run, &c);
		usleep(300 * 1000);
		CHECK_INT(sqlite3_exec(lock, "COMMIT", NULL, NULL, NULL), SQLITE_OK);
		pthread_join(c.tid, NULL);
		CHECK_INT(c.created, 1);
	}
	sqlite3_close(lock);
	p = wait_requests(s, "rest", n + 1, &root);
	CHECK(p != NULL);
	CHECK(num(p, "db", "busy_retries") >= 1);
	CHECK_INT(num(p, "db", "commit_writes"), n + 1);
	printf("   a POST behind a lock held 300 ms: %.0f busy retries\n",
	    num(p, "db", "busy_retries"));
	cJSON_Delete(root);
}

/* The pool name's "db" member key of ctl status --json, -1 when missing; waits up to 3 s
 * for it to be want (a worker opens its first connection as it starts). */
static double
db_gauge(struct stack *s, const char *name, const char *key, double want)
{
	cJSON *root;
	double v = -1;
	int i;

	for (i = 0; i < 60; i++) {
		root = status_json(s);
		v = num(cJSON_GetObjectItem(pool_of(root, name), "db"), key, NULL);
		cJSON_Delete(root);
		if (v == want)
			break;
		usleep(50000);
	}
	return v;
}

/* The descriptors of process pid open on the file path exactly: each SQLite connection
 * holds one on its database file.  -1 when /proc cannot tell. */
static int
fds_on(pid_t pid, const char *path)
{
	char dir[64], link[400], to[300];
	struct dirent *e;
	ssize_t n;
	DIR *d;
	int count = 0;

	snprintf(dir, sizeof(dir), "/proc/%d/fd", (int)pid);
	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL) {
		if (e->d_name[0] == '.')
			continue;
		snprintf(link, sizeof(link), "%s/%s", dir, e->d_name);
		if ((n = readlink(link, to, sizeof(to) - 1)) <= 0)
			continue;
		to[n] = '\0';
		count += strcmp(to, path) == 0;
	}
	closedir(d);
	return count;
}

/*
 * The database connections a SQLite pool holds (rest: 1 worker x 2 threads): the first
 * thread's, opened at start, then one per thread that has served a request of the
 * database and the group commit's writer once a write came; as many as the worker's
 * descriptors on the database file.  None for health (no database), none ever busy (a
 * PostgreSQL figure); the same in ctl status, the JSON and the Prometheus text.  The
 * worker killed with SIGKILL, its successor's one connection is all the pool counts.
 */
static void
test_metrics_db_conns(void)
{
	struct stack s;
	struct http_resp r;
	char db[128];
	pid_t pid;
	double open;
	int mport;

	if (start(&s, "default", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK_INT(stack_worker_pids(&s, "rest", &pid, 1), 1);
	CHECK_INT(db_gauge(&s, "rest", "connections_open", 1), 1);
	CHECK_INT(fds_on(pid, db), 1);
	CHECK_INT(db_gauge(&s, "rest", "pg_connections_busy", 0), 0);
	CHECK_INT(db_gauge(&s, "health", "connections_open", 0), 0);
	CHECK_INT(stack_pool_value(&s, "rest", "db_open"), 1);
	CHECK_INT(stack_pool_value(&s, "rest", "db_busy"), 0);
	http_resp_init(&r);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	CHECK(has_line(&r, "# TYPE sluice_db_connections_open gauge"));
	CHECK(has_line(&r, "sluice_db_connections_open{pool=\"rest\"} 1"));
	CHECK(has_line(&r, "sluice_db_connections_open{pool=\"health\"} 0"));
	CHECK(has_line(&r, "# TYPE sluice_db_pg_connections_busy gauge"));
	CHECK(has_line(&r, "sluice_db_pg_connections_busy{pool=\"rest\"} 0"));
	/* 16 POSTs from 8 clients: one connection per thread that served one, at most 2. */
	CHECK_INT(post_rows(&s, 1, 16, 8), 16);
	{
		cJSON *root = NULL;

		CHECK(wait_requests(&s, "rest", 16, &root) != NULL);
		cJSON_Delete(root);
	}
	open = db_gauge(&s, "rest", "connections_open", fds_on(pid, db));
	printf("   after 16 concurrent POSTs on 1 worker x 2 threads: %.0f SQLite connections "
	    "open, %d descriptors on the file\n", open, fds_on(pid, db));
	CHECK_INT(open, fds_on(pid, db));
	CHECK(open >= 2 && open <= 3);
	CHECK_INT(stack_pool_value(&s, "rest", "db_open"), (long)open);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	{
		char line[96];

		snprintf(line, sizeof(line), "sluice_db_connections_open{pool=\"rest\"} %.0f",
		    open);
		CHECK(has_line(&r, line));
	}
	CHECK_INT(kill(pid, SIGKILL), 0);
	usleep(300 * 1000);
	CHECK(stack_wait_pool(&s, "rest", 5000) == 0);
	CHECK_INT(stack_worker_pids(&s, "rest", &pid, 1), 1);
	CHECK_INT(db_gauge(&s, "rest", "connections_open", 1), 1);
	CHECK_INT(fds_on(pid, db), 1);
	CHECK(metricsfix_scrape(mport, "GET", "/metrics", &r) == 0);
	CHECK(has_line(&r, "sluice_db_connections_open{pool=\"rest\"} 1"));
	http_resp_free(&r);
	metricsfix_stop(&s, db);
}

/* A non-blocking connection to 127.0.0.1:port under way; -1 when it failed at once. */
static int
tcp_connect_nb(int port)
{
	struct sockaddr_in sin = { .sin_family = AF_INET, .sin_port = htons((uint16_t)port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);

	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sin, sizeof(sin)) != 0 &&
	    errno != EINPROGRESS) {
		close(fd);
		fd = -1;
	}
	return fd;
}

/*
 * A TCP pool (tcp=, backlog=2) whose only worker is stopped: of 8 connections, as many as
 * the accept queue holds (the backlog, or one more as Linux counts) wait there, and the
 * kernel drops the others' handshakes at the listener, which it counts for the socket:
 * dropped >= 1.  After SIGCONT the queue is 0.
 */
static void
test_metrics_tcp_queue(void)
{
	enum { K = 8 };
	struct stack s;
	char conf[256];
	pid_t pid;
	int port = stack_free_port(), fds[K], i;
	double now;
	long long end;

	snprintf(conf, sizeof(conf), "health =/health workers=1 threads=2 tcp=127.0.0.1:%d "
	    "backlog=2\n", port);
	if (port < 0 || stack_start(&s, conf, "default", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK_INT(queue_of(&s, "health", "backlog"), 2);
	CHECK_INT(queue_of(&s, "health", "dropped"), 0);
	CHECK_INT(stack_worker_pids(&s, "health", &pid, 1), 1);
	CHECK_INT(kill(pid, SIGSTOP), 0);
	for (i = 0; i < K; i++)
		fds[i] = tcp_connect_nb(port);
	usleep(200 * 1000);
	now = queue_of(&s, "health", "now");
	CHECK(now >= 2 && now <= 3);
	CHECK(queue_of(&s, "health", "peak") >= now);
	CHECK(queue_of(&s, "health", "dropped") >= 1);
	printf("   TCP backlog 2, worker stopped, %d connections: %.0f queued, %.0f dropped\n",
	    K, now, queue_of(&s, "health", "dropped"));
	CHECK_INT(kill(pid, SIGCONT), 0);
	end = stack_now_ms() + 3000;
	while (queue_of(&s, "health", "now") != 0 && stack_now_ms() < end)
		usleep(20 * 1000);
	CHECK_INT(queue_of(&s, "health", "now"), 0);
	for (i = 0; i < K; i++)
		if (fds[i] >= 0)
			close(fds[i]);
	stack_stop(&s);
}

/* The fields of pool name's line in the last frame of ctl top's output, into f[n]; the
 * count found. */
static int
top_fields(char *text, const char *name, char **f, int n)
{
	char *line, *save = NULL, *last = NULL, *tok;
	size_t nl = strlen(name);
	int k = 0;

	for (line = strtok_r(text, "\n", &save); line != NULL;
	    line = strtok_r(NULL, "\n", &save))
		if (strncmp(line, name, nl) == 0 && line[nl] == ' ')
			last = line;
	if (last == NULL)
		return 0;
	for (tok = strtok_r(last, " ", &save); tok != NULL && k < n;
	    tok = strtok_r(NULL, " ", &save))
		f[k++] = tok;
	return k;
}

/*
 * ctl top: its first frame shows the totals (20 requests sent before it, "-" for the
 * rates, which need two samples); while a client sends requests, a later frame shows a
 * rate above 0 and a p99 bound.
 */
static void
test_metrics_top(void)
{
	struct stack s;
	struct http_loop g;
	struct buf out;
	cJSON *root = NULL;
	char db[128], url[300], *f[10];
	int mport, n;

	if (start(&s, "tuned", "", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK_INT(send_n("GET", url, 20, 200), 0);
	CHECK(wait_requests(&s, "health", 20, &root) != NULL);
	cJSON_Delete(root);
	buf_init(&out, 0);
	CHECK_INT(stack_ctl(&s, &out, "top 1"), 0);
	CHECK(out.data != NULL && strstr(out.data, "REQ/S") != NULL);
	n = out.data != NULL ? top_fields(out.data, "health", f, 10) : 0;
	CHECK_INT(n, 10);
	if (n == 10) {
		CHECK_STR(f[2], "20");
		CHECK_STR(f[3], "-");
	}
	buf_free(&out);
	/* A client's GETs, 2 ms apart, while ctl top draws its frames. */
	CHECK_INT(http_loop_start_paced(&g, "GET", url, 200, 2), 0);
	buf_init(&out, 0);
	CHECK_INT(stack_ctl(&s, &out, "top 3"), 0);
	http_loop_stop(&g);
	n = out.data != NULL ? top_fields(out.data, "health", f, 10) : 0;
	CHECK_INT(n, 10);
	if (n == 10) {
		printf("   ctl top's last frame: health %s requests, %s a second, p99 <= %s ms\n",
		    f[2], f[3], f[5]);
		CHECK(strcmp(f[3], "-") != 0 && atof(f[3]) > 0);
		CHECK(strcmp(f[5], "-") != 0);
		CHECK(atof(f[2]) > 20);
	}
	buf_free(&out);
	CHECK(stack_ctl(&s, NULL, "top 0") != 0);
	metricsfix_stop(&s, db);
}

/* set metrics off: no page, no counts, and ctl status says so. */
static void
test_metrics_off(void)
{
	struct stack s;
	cJSON *root;
	const cJSON *h;
	struct buf out;
	char db[128], url[300];
	int mport;

	if (start(&s, "default", "set metrics off\n", db, sizeof(db), &mport) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK_INT(send_n("GET", url, 3, 200), 0);
	root = status_json(&s);
	h = pool_of(root, "health");
	CHECK(h != NULL);
	CHECK(cJSON_IsFalse(cJSON_GetObjectItem(h, "metrics")));
	CHECK(cJSON_GetObjectItem(h, "requests") == NULL);
	cJSON_Delete(root);
	buf_init(&out, 0);
	CHECK_INT(stack_ctl(&s, &out, "status"), 0);
	CHECK(out.data != NULL && strstr(out.data, "health state=running") != NULL &&
	    strstr(out.data, " metrics=off") != NULL);
	buf_free(&out);
	metricsfix_stop(&s, db);
}

int
main(void)
{
	RUN(test_metrics_counts);
	RUN(test_metrics_bad_clients);
	RUN(test_metrics_kill);
	RUN(test_metrics_keepalive);
	RUN(test_metrics_budget);
	RUN(test_metrics_queue);
	RUN(test_metrics_db);
	RUN(test_metrics_db_conns);
	RUN(test_metrics_tcp_queue);
	RUN(test_metrics_off);
	RUN(test_metrics_top);
	return harness_done();
}
