/*
 * test_fault_pg: PostgreSQL stopped and started again under load, through the real stack
 * (nginx tuned, sluiced, bin/ready and bin/rest on a throwaway cluster).  Client threads
 * loop on GET /ready and on a rest GET while the server is stopped twice: once with
 * "pg_ctl stop -m fast" (backends terminated, shutdown checkpoint) and once with "-m
 * immediate" (as after a crash: recovery at the next start), down for about 1.5 s each.
 *
 * Every answer is accounted for: before the stop, 200; while the server is down, 503 with
 * the JSON error body {"code":"unavailable",...} (never a 500 or 502, never an HTML page,
 * never a hang: a request that takes longer than the client's 30 s timeout counts as a
 * failure); after pg_ctl reports the server accepting connections, service resumes within
 * 2 s (the one timing bound, documented here: the last failure of a request that began
 * after that moment must end within 2 s of it) and every request after that succeeds.  The
 * workers are the same processes at the end (no restart was needed) and the pools count no
 * crash.
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

#define FP_CLIENTS	4
#define FP_TIMEOUT_MS	30000
#define FP_DOWN_MS	1500
#define FP_RECOVER_MS	2000

/* One answer: when it began and ended, and what it was. */
struct fp_event {
	long long t0, t1;
	short status;		/* 0: transport error (or the client's timeout) */
	unsigned char unavailable;	/* a JSON body with "code":"unavailable" */
	unsigned char json;	/* the body is a JSON value */
};

struct fp_client {
	pthread_t tid;
	char url[256];
	volatile int *stop;
	struct fp_event *ev;
	size_t n, cap;
};

static void
fp_classify(const struct http_resp *r, struct fp_event *e)
{
	cJSON *j = NULL, *code;

	e->status = (short)r->status;
	if (r->body.data != NULL && r->body.len > 0)
		j = cJSON_ParseWithLength(r->body.data, r->body.len);
	e->json = j != NULL;
	code = j != NULL && cJSON_IsObject(j) ? cJSON_GetObjectItem(j, "code") : NULL;
	e->unavailable = cJSON_IsString(code) && strcmp(code->valuestring, "unavailable") == 0;
	cJSON_Delete(j);
}

static void *
fp_client_run(void *arg)
{
	struct fp_client *c = arg;
	struct http_resp r;
	struct fp_event e, *ne;

	http_resp_init(&r);
	while (!*c->stop) {
		memset(&e, 0, sizeof(e));
		e.t0 = stack_now_ms();
		if (http_do("GET", c->url, NULL, NULL, 0, FP_TIMEOUT_MS, &r) == 0)
			fp_classify(&r, &e);
		e.t1 = stack_now_ms();
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 4096;
			if ((ne = realloc(c->ev, c->cap * sizeof(*ne))) == NULL)
				break;
			c->ev = ne;
		}
		c->ev[c->n++] = e;
		/* A little air, so that the 2-core machine also runs the server. */
		usleep(2000);
	}
	http_resp_free(&r);
	return NULL;
}

/* The moments of one outage: stop asked, server down, start asked, accepting again. */
struct fp_cycle {
	const char *how;
	long long stop0, down, start0, up;
};

static int
fp_cmp_pid(const void *a, const void *b)
{
	return *(const pid_t *)a < *(const pid_t *)b ? -1 : *(const pid_t *)a > *(const pid_t *)b;
}

static int
fp_pids(struct stack *s, const char *name, pid_t *p, int max)
{
	int n = stack_worker_pids(s, name, p, max);

	qsort(p, (size_t)n, sizeof(*p), fp_cmp_pid);
	return n;
}

/* Checks the answers of client c against the outages; prints a line per outage. */
static void
fp_check(const struct fp_client *c, const char *label, const struct fp_cycle *cy, int ncy)
{
	long bad = 0, before = 0, down503 = 0, down_other = 0, after = 0;
	long long last_fail[4] = { -1, -1, -1, -1 }, first_ok[4] = { -1, -1, -1, -1 }, slow = 0;
	size_t i;
	int k;

	for (i = 0; i < c->n; i++) {
		const struct fp_event *e = &c->ev[i];
		int ok = e->status == 200, unavail = e->status == 503 && e->unavailable;

		if (e->t1 - e->t0 > slow)
			slow = e->t1 - e->t0;
		/* Only these two answers exist, whatever the database does. */
		if (!ok && !unavail) {
			bad++;
			if (bad <= 3)
				printf("  %s: unexpected answer %d (%s body) after %lld ms\n", label,
				    e->status, e->json ? "JSON" : "non-JSON", e->t1 - e->t0);
		}
		if (e->t1 < cy[0].stop0) {
			before += ok;
			CHECK(ok);
		}
		for (k = 0; k < ncy; k++) {
			/* Began after the server was gone, ended before it was asked back. */
			if (e->t0 >= cy[k].down && e->t1 <= cy[k].start0) {
				down503 += unavail;
				down_other += !unavail;
			}
			/* Began once the server accepted connections again, before the next
			 * outage. */
			if (e->t0 >= cy[k].up && (k + 1 == ncy || e->t1 < cy[k + 1].stop0)) {
				if (!ok)
					last_fail[k] = e->t1 - cy[k].up;
				else {
					after++;
					if (first_ok[k] < 0)
						first_ok[k] = e->t1 - cy[k].up;
				}
			}
		}
	}
	for (k = 0; k < ncy; k++)
		printf("  %s, %s stop: first success %lld ms after the server accepted "
		    "connections, last failure %lld ms after (-1: none)\n", label, cy[k].how,
		    first_ok[k], last_fail[k]);
	printf("  %s: %zu requests (%ld ok before, %ld 503 JSON while down, %ld ok after), "
	    "%ld unexpected, slowest %lld ms\n", label, c->n, before, down503, after, bad, slow);
	CHECK_INT(bad, 0);
	CHECK_INT(down_other, 0);
	CHECK(before > 0);
	CHECK(down503 > 0);
	CHECK(after > 0);
	for (k = 0; k < ncy; k++) {
		CHECK(first_ok[k] >= 0);
		CHECK(last_fail[k] <= FP_RECOVER_MS);
	}
}

static void
test_fault_pg_restart_under_load(void)
{
	static const char *const names[2] = { "ready", "rest" };
	struct fp_client cl[FP_CLIENTS];
	struct fp_cycle cy[2] = { { "fast", 0, 0, 0, 0 }, { "immediate", 0, 0, 0, 0 } };
	struct pgtmp pg;
	struct stack s;
	pid_t before[2][8], after[2][8];
	int nb[2], na[2], i, k, started = 0, up = 0;
	volatile int stop = 0;

	memset(cl, 0, sizeof(cl));
	if (pgtmp_start(&pg) < 0) {
		CHECK(!"PostgreSQL cluster started");
		return;
	}
	if (chatfix_exec(pg.url, "CREATE TABLE item (id integer PRIMARY KEY, name text); "
	    "INSERT INTO item VALUES (1, 'one'), (2, 'two')") != 0) {
		CHECK(!"table created");
		goto out;
	}
	setenv("SLUICE_DB_MAIN", pg.url, 1);
	if (stack_start(&s, "db main sqlite:/nonexistent.db\n"
	    "ready =/ready workers=2 threads=2 db=main\n"
	    "rest /rest/v1/ workers=2 threads=2 db=main\n", "tuned", 2, NULL) < 0) {
		unsetenv("SLUICE_DB_MAIN");
		CHECK(!"stack started");
		goto out;
	}
	unsetenv("SLUICE_DB_MAIN");
	up = 1;
	CHECK(stack_wait_pool(&s, "ready", 10000) == 0);
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	for (k = 0; k < 2; k++)
		nb[k] = fp_pids(&s, names[k], before[k], 8);
	CHECK_INT(nb[0], 2);
	CHECK_INT(nb[1], 2);

	for (i = 0; i < FP_CLIENTS; i++) {
		if (i % 2 == 0)
			snprintf(cl[i].url, sizeof(cl[i].url), "%s/ready", s.base);
		else
			snprintf(cl[i].url, sizeof(cl[i].url), "%s/rest/v1/item?select=id,name"
			    "&order=id", s.base);
		cl[i].stop = &stop;
		if (pthread_create(&cl[i].tid, NULL, fp_client_run, &cl[i]) != 0)
			break;
		started++;
	}
	CHECK_INT(started, FP_CLIENTS);
	usleep(1000 * 1000);
	for (k = 0; k < 2; k++) {
		cy[k].stop0 = stack_now_ms();
		CHECK((k == 0 ? pgtmp_stop_server(&pg) : pgtmp_kill_server(&pg)) == 0);
		cy[k].down = stack_now_ms();
		usleep(FP_DOWN_MS * 1000);
		cy[k].start0 = stack_now_ms();
		CHECK(pgtmp_start_server(&pg) == 0);
		cy[k].up = stack_now_ms();
		printf("  %s stop took %lld ms, down %lld ms, start took %lld ms\n", cy[k].how,
		    cy[k].down - cy[k].stop0, cy[k].start0 - cy[k].down,
		    cy[k].up - cy[k].start0);
		usleep((FP_RECOVER_MS + 1500) * 1000);
	}
	stop = 1;
	for (i = 0; i < started; i++)
		pthread_join(cl[i].tid, NULL);
	for (i = 0; i < started; i++)
		fp_check(&cl[i], i % 2 == 0 ? "GET /ready" : "GET /rest/v1/item", cy, 2);

	/* The same workers served throughout: reconnecting needed no restart. */
	for (k = 0; k < 2; k++) {
		na[k] = fp_pids(&s, names[k], after[k], 8);
		CHECK_INT(na[k], nb[k]);
		CHECK(na[k] == nb[k] &&
		    memcmp(before[k], after[k], (size_t)nb[k] * sizeof(pid_t)) == 0);
		CHECK_INT(stack_pool_value(&s, names[k], "crashes"), 0);
		CHECK_INT(stack_pool_value(&s, names[k], "spawns"), nb[k]);
	}
out:
	for (i = 0; i < FP_CLIENTS; i++)
		free(cl[i].ev);
	if (up)
		stack_stop(&s);
	pgtmp_stop(&pg);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	RUN(test_fault_pg_restart_under_load);
	curl_global_cleanup();
	return harness_done();
}
