/*
 * test_pg_faults: the table API on PostgreSQL under three faults, through the real stack
 * (nginx tuned, sluiced, bin/rest on a throwaway cluster).
 *
 * test_pg_pool_busy: one worker whose two threads share one connection (db_conns=1,
 * db_wait_ms=300, a 3 s budget).  A transaction holds the connection (a POST of a function
 * that sleeps 1.5 s: a write with a representation runs in a transaction of its own); a
 * GET sent meanwhile gets 503 {"code":"busy",...} with Retry-After after the pool's wait
 * budget (300 ms, not the request's 3 s), never a hang; the slow call then answers 200,
 * and the next GET 200.
 *
 * test_pg_schema_change: 4 clients loop on GET, POST and PATCH of a table while columns
 * are added and dropped (the one the clients name among them) and a table created.  Every
 * answer is a success or a JSON 4xx (a column the workers' schema still names but the
 * database dropped: PostgREST's 400 42703 with the database's words), never a 500, a
 * non-JSON body or a transport error; no worker crashes.  Then `sluiced ctl reload rest`
 * (the documented step after a schema change) and, within 5 s (the old generation may
 * answer a request or two while it leaves), a new column and the new table are served,
 * 20 times in a row.
 *
 * test_pg_graceful_stop: three slow calls in flight (pg_sleep(0.8) through a GET of a
 * function) on a worker of one thread, one running and two waiting for it in the worker's
 * socket or on a kept connection, when sluiced gets SIGTERM: each gets its full 200, the stop ends within the grace
 * period, and a request sent after the stop began is answered at once (refused by the
 * workers' sockets: nginx's JSON 502, or 503), never held until the stop ends.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "chatfix.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define PF_TIMEOUT_MS	30000

static const char pf_schema[] =
    "CREATE TABLE item (id serial PRIMARY KEY, name text);\n"
    "INSERT INTO item (name) VALUES ('one'), ('two');\n"
    "CREATE FUNCTION slow_wait(ms integer) RETURNS integer LANGUAGE sql AS\n"
    "  $$ SELECT ms FROM pg_sleep(ms / 1000.0) $$;\n";

static int
pf_start(struct pgtmp *pg, struct stack *s, const char *endpoints)
{
	if (pgtmp_start(pg) < 0)
		return -1;
	if (chatfix_exec(pg->url, pf_schema) != 0) {
		pgtmp_stop(pg);
		return -1;
	}
	setenv("SLUICE_DB_MAIN", pg->url, 1);
	if (stack_start(s, endpoints, "tuned", 2, NULL) < 0) {
		unsetenv("SLUICE_DB_MAIN");
		pgtmp_stop(pg);
		return -1;
	}
	unsetenv("SLUICE_DB_MAIN");
	if (stack_wait_pool(s, "rest", 10000) < 0) {
		stack_stop(s);
		pgtmp_stop(pg);
		return -1;
	}
	return 0;
}

/* One request in a thread of its own. */
struct pf_call {
	pthread_t tid;
	const char *method;
	char url[256];
	const char *body;
	const char *const *headers;
	struct http_resp r;
	int rc;
	long long t0, t1;
};

static void *
pf_call_run(void *arg)
{
	struct pf_call *c = arg;

	c->t0 = stack_now_ms();
	c->rc = http_do(c->method, c->url, c->headers, c->body, c->body ? strlen(c->body) : 0,
	    PF_TIMEOUT_MS, &c->r);
	c->t1 = stack_now_ms();
	return NULL;
}

static int
pf_call_start(struct pf_call *c, const char *method, const char *url, const char *body,
    const char *const *headers)
{
	memset(c, 0, sizeof(*c));
	http_resp_init(&c->r);
	c->method = method;
	snprintf(c->url, sizeof(c->url), "%s", url);
	c->body = body;
	c->headers = headers;
	return pthread_create(&c->tid, NULL, pf_call_run, c);
}

/* Waits up to 10 s (a loaded machine) for n backends of the workers to be in pg_sleep;
 * 1 when they are. */
static int
pf_sleeping(const struct pgtmp *pg, int n)
{
	int i;

	for (i = 0; i < 500; i++) {
		if (chatfix_int(pg->url, "SELECT count(*) FROM pg_stat_activity WHERE "
		    "application_name = 'sluice' AND wait_event = 'PgSleep'", NULL) >= n)
			return 1;
		usleep(20000);
	}
	return 0;
}

static const char *const pf_json[] = { "Content-Type: application/json", NULL };

static void
test_pg_pool_busy(void)
{
	struct pgtmp pg;
	struct stack s;
	struct pf_call slow;
	struct http_resp r;
	char url[256], ra[16];
	long long t0, ms;

	if (pf_start(&pg, &s, "db main sqlite:/nonexistent.db\n"
	    "rest /rest/v1/ workers=1 threads=2 db=main db_conns=1 db_wait_ms=300 "
	    "stmt_timeout_ms=3000\n") < 0) {
		CHECK(!"stack started");
		return;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/rpc/slow_wait", s.base);
	CHECK_INT(pf_call_start(&slow, "POST", url, "{\"ms\":1500}", pf_json), 0);
	CHECK(pf_sleeping(&pg, 1));
	snprintf(url, sizeof(url), "%s/rest/v1/item?select=id,name&order=id", s.base);
	t0 = stack_now_ms();
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, PF_TIMEOUT_MS, &r), 0);
	ms = stack_now_ms() - t0;
	printf("  the pool's one connection held: GET answered %ld in %lld ms (%.*s)\n",
	    r.status, ms, (int)(r.body.len > 160 ? 160 : r.body.len),
	    r.body.data ? r.body.data : "");
	CHECK_INT(r.status, 503);
	CHECK(http_json_code(&r, "busy"));
	CHECK(http_header(&r, "Retry-After", ra, sizeof(ra)) == 0);
	/* After the wait budget, well before the request's 3 s budget and the slow call's
	 * end. */
	CHECK(ms >= 250 && ms < 1200);
	pthread_join(slow.tid, NULL);
	printf("  the slow call answered %ld after %lld ms\n", slow.r.status,
	    slow.t1 - slow.t0);
	CHECK_INT(slow.r.status, 200);
	http_resp_free(&slow.r);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, PF_TIMEOUT_MS, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(stack_pool_value(&s, "rest", "crashes"), 0);
	http_resp_free(&r);
	stack_stop(&s);
	pgtmp_stop(&pg);
}

/* A client loop of test_pg_schema_change: counts answers by kind. */
struct pf_loop {
	pthread_t tid;
	const char *method;
	char url[256];
	const char *body;
	volatile int *stop;
	long ok, json_err, bad, n500;
	char last_bad[200];
};

static void *
pf_loop_run(void *arg)
{
	static const char *const hdr[] = { "Content-Type: application/json",
	    "Prefer: return=representation", NULL };
	struct pf_loop *l = arg;
	struct http_resp r;

	http_resp_init(&r);
	while (!*l->stop) {
		if (http_do(l->method, l->url, hdr, l->body, l->body ? strlen(l->body) : 0,
		    PF_TIMEOUT_MS, &r) != 0) {
			l->bad++;
			snprintf(l->last_bad, sizeof(l->last_bad), "transport error");
		} else if (r.status >= 200 && r.status < 300)
			l->ok++;
		else if (http_json_code(&r, NULL)) {
			l->json_err++;
			l->n500 += r.status == 500;
			if (r.status == 500 || l->json_err == 1)
				snprintf(l->last_bad, sizeof(l->last_bad), "%ld %.*s", r.status,
				    (int)(r.body.len > 150 ? 150 : r.body.len), r.body.data);
		} else {
			l->bad++;
			snprintf(l->last_bad, sizeof(l->last_bad), "%ld non-JSON", r.status);
		}
		usleep(2000);
	}
	http_resp_free(&r);
	return NULL;
}

static void
test_pg_schema_change(void)
{
	static const char *const ddl[][2] = {
		{ "ALTER TABLE item ADD COLUMN extra text DEFAULT 'e'", "added" },
		{ "CREATE TABLE new_t1 (id integer PRIMARY KEY)", "created" },
		{ "ALTER TABLE item DROP COLUMN extra", "dropped" },
		{ "ALTER TABLE item ADD COLUMN extra integer DEFAULT 7", "added (int)" },
		{ "ALTER TABLE item DROP COLUMN name", "name dropped" },
		{ "ALTER TABLE item ADD COLUMN name text DEFAULT 'n'", "name back" },
		{ "ALTER TABLE item DROP COLUMN extra", "dropped" },
	};
	struct pf_loop l[4];
	struct pgtmp pg;
	struct stack s;
	struct http_resp r;
	volatile int stop = 0;
	char url[256];
	pid_t before[4], after[4];
	int nb, na, i, started = 0;
	long long t0;
	size_t k;

	if (pf_start(&pg, &s, "db main sqlite:/nonexistent.db\n"
	    "rest /rest/v1/ workers=2 threads=2 db=main db_conns=2\n") < 0) {
		CHECK(!"stack started");
		return;
	}
	nb = stack_worker_pids(&s, "rest", before, 4);
	memset(l, 0, sizeof(l));
	for (i = 0; i < 4; i++) {
		l[i].stop = &stop;
		l[i].method = i < 2 ? "GET" : i == 2 ? "POST" : "PATCH";
		l[i].body = i == 2 ? "{\"name\":\"x\"}" : i == 3 ? "{\"name\":\"y\"}" : NULL;
		snprintf(l[i].url, sizeof(l[i].url), "%s/rest/v1/item%s", s.base,
		    i == 0 ? "?select=*&order=id&limit=5" : i == 1 ? "?select=id,name&id=eq.1" :
		    i == 3 ? "?id=eq.1" : "");
		if (pthread_create(&l[i].tid, NULL, pf_loop_run, &l[i]) == 0)
			started++;
	}
	CHECK_INT(started, 4);
	usleep(500 * 1000);
	for (k = 0; k < sizeof(ddl) / sizeof(ddl[0]); k++) {
		CHECK_INT(chatfix_exec(pg.url, ddl[k][0]), 0);
		usleep(600 * 1000);
	}
	stop = 1;
	for (i = 0; i < started; i++)
		pthread_join(l[i].tid, NULL);
	for (i = 0; i < started; i++) {
		printf("  %s %s: %ld ok, %ld JSON errors (%ld 500), %ld bad; last: %s\n",
		    l[i].method, l[i].url + strlen(s.base), l[i].ok, l[i].json_err, l[i].n500,
		    l[i].bad, l[i].last_bad);
		CHECK_INT(l[i].bad, 0);
		/* A name the database no longer holds is PostgREST's 400 with its words. */
		CHECK_INT(l[i].n500, 0);
		CHECK(l[i].ok > 0);
	}
	na = stack_worker_pids(&s, "rest", after, 4);
	CHECK_INT(na, nb);
	CHECK(memcmp(before, after, sizeof(pid_t) * (size_t)nb) == 0);
	CHECK_INT(stack_pool_value(&s, "rest", "crashes"), 0);

	/* The documented step: the workers read the schema afresh. */
	CHECK_INT(chatfix_exec(pg.url, "ALTER TABLE item ADD COLUMN late text DEFAULT 'l'"), 0);
	CHECK_INT(stack_ctl(&s, NULL, "reload rest"), 0);
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	http_resp_init(&r);
	/* The old generation leaves once the new one is up; a request may still reach one
	 * of its workers for a moment.  Within 5 s, and from then on, the new schema. */
	snprintf(url, sizeof(url), "%s/rest/v1/item?select=id,late&id=eq.1", s.base);
	t0 = stack_now_ms();
	while (stack_now_ms() - t0 < 5000 && http_do("GET", url, NULL, NULL, 0, PF_TIMEOUT_MS,
	    &r) == 0 && r.status != 200)
		usleep(50 * 1000);
	printf("  after ctl reload rest: the new column served %lld ms after it returned\n",
	    stack_now_ms() - t0);
	for (i = 0; i < 20; i++) {
		CHECK_INT(http_do("GET", url, NULL, NULL, 0, PF_TIMEOUT_MS, &r), 0);
		CHECK_INT(r.status, 200);
		CHECK(r.body.data != NULL && strstr(r.body.data, "\"late\":\"l\"") != NULL);
	}
	snprintf(url, sizeof(url), "%s/rest/v1/new_t1", s.base);
	for (i = 0; i < 20; i++) {
		CHECK_INT(http_do("GET", url, NULL, NULL, 0, PF_TIMEOUT_MS, &r), 0);
		CHECK_INT(r.status, 200);
	}
	http_resp_free(&r);
	stack_stop(&s);
	pgtmp_stop(&pg);
}

#define PF_SLOW		3

static void
test_pg_graceful_stop(void)
{
	struct pf_call slow[PF_SLOW], late;
	struct pgtmp pg;
	struct stack s;
	char url[256];
	long long stop0, ended;
	int i, st, inflight;

	/* One thread: the second and third calls wait for it, queued in the worker's
	 * socket or on a kept connection, when the stop comes. */
	if (pf_start(&pg, &s, "db main sqlite:/nonexistent.db\n"
	    "rest /rest/v1/ workers=1 threads=1 db=main db_conns=1\n") < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(url, sizeof(url), "%s/rest/v1/rpc/slow_wait?ms=800", s.base);
	for (i = 0; i < PF_SLOW; i++)
		CHECK_INT(pf_call_start(&slow[i], "GET", url, NULL, NULL), 0);
	CHECK(pf_sleeping(&pg, 1));
	usleep(100 * 1000);
	stop0 = stack_now_ms();
	CHECK_INT(kill(s.sluiced, SIGTERM), 0);
	usleep(100 * 1000);
	snprintf(url, sizeof(url), "%s/rest/v1/item?select=id", s.base);
	CHECK_INT(pf_call_start(&late, "GET", url, NULL, NULL), 0);
	pthread_join(late.tid, NULL);
	printf("  a request sent 100 ms after the stop: %ld in %lld ms (%.*s)\n",
	    late.r.status, late.t1 - late.t0, (int)(late.r.body.len > 120 ? 120 :
	    late.r.body.len), late.r.body.data ? late.r.body.data : "");
	/* Answered at once, refused: never held until the drain ends. */
	CHECK(late.rc == 0 && (late.r.status == 502 || late.r.status == 503));
	CHECK(http_json_code(&late.r, NULL));
	CHECK(late.t1 - late.t0 < 500);
	http_resp_free(&late.r);
	for (i = 0, inflight = 0; i < PF_SLOW; i++) {
		pthread_join(slow[i].tid, NULL);
		inflight += slow[i].t1 > stop0;
		printf("  slow call %d: %ld after %lld ms (%.*s)\n", i, slow[i].r.status,
		    slow[i].t1 - slow[i].t0, (int)(slow[i].r.body.len > 40 ? 40 :
		    slow[i].r.body.len), slow[i].r.body.data ? slow[i].r.body.data : "");
		CHECK_INT(slow[i].r.status, 200);
		CHECK(slow[i].r.body.data != NULL && strcmp(slow[i].r.body.data, "800") == 0);
		http_resp_free(&slow[i].r);
	}
	/* The stop came while one ran and two waited. */
	CHECK(inflight == PF_SLOW);
	st = stack_reap(s.sluiced, 10000);
	ended = stack_now_ms();
	s.sluiced = 0;
	printf("  sluiced exited %lld ms after SIGTERM (status %d)\n", ended - stop0, st);
	CHECK_INT(st, 0);
	/* Within the grace period (-g, 5 s by default). */
	CHECK(ended - stop0 < 5000);
	stack_stop(&s);
	pgtmp_stop(&pg);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	RUN(test_pg_pool_busy);
	RUN(test_pg_schema_change);
	RUN(test_pg_graceful_stop);
	curl_global_cleanup();
	return harness_done();
}
