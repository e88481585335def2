/*
 * test_fault_pg: PostgreSQL stopped and started again under load, through the real stack
 * (nginx tuned, sluiced, bin/ready and bin/rest on a throwaway cluster).  Client threads
 * loop on GET /ready and on a rest GET while the server is stopped twice: once with
 * "pg_ctl stop -m fast" (backends terminated, shutdown checkpoint) and once with "-m
 * immediate" (as after a crash: recovery at the next start), down for about 1.5 s each.
 *
 * Every answer is accounted for: before the stop, 200; while the server is down, 503 with
 * the JSON error body {"code":"unavailable",...} and a Retry-After header (never a 500 or
 * 502, never an HTML page); no request takes longer than its time budget
 * (stmt_timeout_ms=2000 on the lines) and a little air; once the server accepts
 * connections again (the first moment a libpq ping, sent every 5 ms while it starts,
 * answers), service resumes within 1 s (the one timing bound: each client's first 200
 * after that moment, and the end of the last failure of a request that began after it,
 * both within 1 s of it) and every request after that succeeds.  The workers are the same processes at the end (no
 * restart was needed) and the pools count no crash.  The timeline of each outage (stop
 * asked, server down, first 503, start asked, accepting, first 200) is printed.
 *
 * test_fault_pg_start_while_down: the same stack started while the server is down (the
 * workers come up without a database, test_fault_pg's other path to a 503): 503 JSON with
 * Retry-After, then 200 within 1 s of the server accepting connections, no crash.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>
#include <libpq-fe.h>

#include "chatfix.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define FP_CLIENTS	4
#define FP_TIMEOUT_MS	30000
#define FP_DOWN_MS	1500
#define FP_RECOVER_MS	1000
#define FP_BUDGET_MS	2000
/* Scheduling air on a loaded 2-core machine, on top of the budget. */
#define FP_AIR_MS	500

/* One answer: when it began and ended, and what it was. */
struct fp_event {
	long long t0, t1;
	short status;		/* 0: transport error (or the client's timeout) */
	unsigned char unavailable;	/* a JSON body with "code":"unavailable" */
	unsigned char json;	/* the body is a JSON value */
	unsigned char retry_after;	/* a Retry-After header came with it */
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
	char ra[16];

	e->status = (short)r->status;
	e->retry_after = http_header(r, "Retry-After", ra, sizeof(ra)) == 0;
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

/* The moments of one outage: stop asked, server down, start asked, accepting again (the
 * first ping answered), pg_ctl's start returned. */
struct fp_cycle {
	const char *how;
	long long stop0, down, start0, accept, up;
};

/* A thread that pings the server every 5 ms until it answers: the moment it accepts
 * connections, to the few milliseconds (pg_ctl -w looks only every 100 ms). */
struct fp_probe {
	pthread_t tid;
	const char *conninfo;
	volatile int stop;
	long long at;		/* the first ping answered; 0: none yet */
};

static void *
fp_probe_run(void *arg)
{
	struct fp_probe *p = arg;

	while (!p->stop) {
		if (PQping(p->conninfo) == PQPING_OK) {
			p->at = stack_now_ms();
			break;
		}
		usleep(5000);
	}
	return NULL;
}

/* Starts the server with a probe beside it: fills start0, accept and up.  0 or -1. */
static int
fp_start_server(struct pgtmp *pg, struct fp_cycle *cy)
{
	struct fp_probe pr;
	int rc;

	memset(&pr, 0, sizeof(pr));
	pr.conninfo = pg->conninfo;
	cy->start0 = stack_now_ms();
	if (pthread_create(&pr.tid, NULL, fp_probe_run, &pr) != 0)
		return -1;
	rc = pgtmp_start_server(pg);
	cy->up = stack_now_ms();
	/* pg_ctl returned: the ping answers now if it has not yet. */
	usleep(200 * 1000);
	pr.stop = 1;
	pthread_join(pr.tid, NULL);
	/* The earlier of the two, should the probe thread have waited for a core. */
	cy->accept = pr.at > 0 && pr.at < cy->up ? pr.at : cy->up;
	return rc;
}

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

/* What one client saw of the outages, and when. */
struct fp_tally {
	long bad, before, down503, down_other, after, no_retry, over_budget;
	long long first503[4], last_fail[4], first_ok[4], slow;
};

/* Walks the answers of client c against the outages cy[0..ncy) into t. */
static void
fp_tally(const struct fp_client *c, const struct fp_cycle *cy, int ncy, const char *label,
    struct fp_tally *t)
{
	size_t i;
	int k;

	memset(t, 0, sizeof(*t));
	for (k = 0; k < 4; k++)
		t->first503[k] = t->last_fail[k] = t->first_ok[k] = -1;
	for (i = 0; i < c->n; i++) {
		const struct fp_event *e = &c->ev[i];
		int ok = e->status == 200, unavail = e->status == 503 && e->unavailable;

		if (e->t1 - e->t0 > t->slow)
			t->slow = e->t1 - e->t0;
		t->over_budget += e->t1 - e->t0 > FP_BUDGET_MS + FP_AIR_MS;
		/* Only these two answers exist, whatever the database does. */
		if (!ok && !unavail && ++t->bad <= 3)
			printf("  %s: unexpected answer %d (%s body) after %lld ms\n", label,
			    e->status, e->json ? "JSON" : "non-JSON", e->t1 - e->t0);
		/* Every 503 says when to come back. */
		t->no_retry += e->status == 503 && !e->retry_after;
		if (ncy > 0 && e->t1 < cy[0].stop0)
			t->before += ok;
		for (k = 0; k < ncy; k++) {
			if (unavail && e->t1 >= cy[k].stop0 && (t->first503[k] < 0 ||
			    e->t1 - cy[k].stop0 < t->first503[k]))
				t->first503[k] = e->t1 - cy[k].stop0;
			/* Began after the server was gone, ended before it was asked back. */
			if (e->t0 >= cy[k].down && e->t1 <= cy[k].start0) {
				t->down503 += unavail;
				t->down_other += !unavail;
			}
			/* Ended once the server accepted connections again, before the next
			 * outage: the first 200 (a request that began while it was down may
			 * be the first served); began after that moment: none fails past the
			 * bound. */
			if (e->t1 >= cy[k].accept && (k + 1 == ncy || e->t1 < cy[k + 1].stop0)) {
				if (ok && t->first_ok[k] < 0)
					t->first_ok[k] = e->t1 - cy[k].accept;
				if (e->t0 >= cy[k].accept && !ok)
					t->last_fail[k] = e->t1 - cy[k].accept;
				else if (e->t0 >= cy[k].accept)
					t->after++;
			}
		}
	}
}

/* Checks the answers of client c against the outages; prints a timeline per outage. */
static void
fp_check(const struct fp_client *c, const char *label, const struct fp_cycle *cy, int ncy)
{
	struct fp_tally t;
	int k;

	fp_tally(c, cy, ncy, label, &t);
	for (k = 0; k < ncy; k++)
		printf("  %s, %s: timeline (ms from the stop asked) down %lld, first 503 %lld, "
		    "start asked %lld, accepting %lld, pg_ctl back %lld, first 200 %lld "
		    "(%lld after accepting), last failure %lld after accepting (-1: none)\n",
		    label, cy[k].how, cy[k].down - cy[k].stop0, t.first503[k],
		    cy[k].start0 - cy[k].stop0, cy[k].accept - cy[k].stop0,
		    cy[k].up - cy[k].stop0, t.first_ok[k] < 0 ? -1 :
		    cy[k].accept + t.first_ok[k] - cy[k].stop0, t.first_ok[k], t.last_fail[k]);
	printf("  %s: %zu requests (%ld ok before, %ld 503 JSON while down, %ld ok after), "
	    "%ld unexpected, %ld 503 without Retry-After, slowest %lld ms\n", label, c->n,
	    t.before, t.down503, t.after, t.bad, t.no_retry, t.slow);
	CHECK_INT(t.bad, 0);
	CHECK_INT(t.down_other, 0);
	CHECK_INT(t.no_retry, 0);
	CHECK_INT(t.over_budget, 0);
	CHECK(t.down503 > 0);
	CHECK(t.after > 0);
	for (k = 0; k < ncy; k++) {
		CHECK(t.first_ok[k] >= 0 && t.first_ok[k] <= FP_RECOVER_MS);
		CHECK(t.last_fail[k] <= FP_RECOVER_MS);
	}
}

/* The two pools of the tests, on the database of SLUICE_DB_MAIN. */
#define FP_ENDPOINTS \
	"db main sqlite:/nonexistent.db\n" \
	"ready =/ready workers=2 threads=2 db=main stmt_timeout_ms=2000\n" \
	"rest /rest/v1/ workers=2 threads=2 db=main stmt_timeout_ms=2000\n"

static int
fp_stack_start(struct stack *s, const struct pgtmp *pg)
{
	int rc;

	setenv("SLUICE_DB_MAIN", pg->url, 1);
	rc = stack_start(s, FP_ENDPOINTS, "tuned", 2, NULL);
	unsetenv("SLUICE_DB_MAIN");
	return rc;
}

/* Starts FP_CLIENTS loops, half on /ready and half on the rest GET; returns how many. */
static int
fp_clients_start(struct fp_client *cl, const struct stack *s, volatile int *stop)
{
	int i, started = 0;

	for (i = 0; i < FP_CLIENTS; i++) {
		if (i % 2 == 0)
			snprintf(cl[i].url, sizeof(cl[i].url), "%s/ready", s->base);
		else
			snprintf(cl[i].url, sizeof(cl[i].url), "%s/rest/v1/item?select=id,name"
			    "&order=id", s->base);
		cl[i].stop = stop;
		if (pthread_create(&cl[i].tid, NULL, fp_client_run, &cl[i]) != 0)
			break;
		started++;
	}
	return started;
}

static int
fp_item_table(const struct pgtmp *pg)
{
	return chatfix_exec(pg->url, "CREATE TABLE item (id integer PRIMARY KEY, name text); "
	    "INSERT INTO item VALUES (1, 'one'), (2, 'two')");
}

static void
test_fault_pg_restart_under_load(void)
{
	static const char *const names[2] = { "ready", "rest" };
	struct fp_client cl[FP_CLIENTS];
	struct fp_cycle cy[2] = { { "fast", 0, 0, 0, 0, 0 }, { "immediate", 0, 0, 0, 0, 0 } };
	struct pgtmp pg;
	struct stack s;
	pid_t before[2][8], after[2][8];
	int nb[2], na[2], i, k, started = 0, up = 0;
	volatile int stop = 0;
	size_t j;

	memset(cl, 0, sizeof(cl));
	if (pgtmp_start(&pg) < 0) {
		CHECK(!"PostgreSQL cluster started");
		return;
	}
	if (fp_item_table(&pg) != 0) {
		CHECK(!"table created");
		goto out;
	}
	if (fp_stack_start(&s, &pg) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	up = 1;
	CHECK(stack_wait_pool(&s, "ready", 10000) == 0);
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	for (k = 0; k < 2; k++)
		nb[k] = fp_pids(&s, names[k], before[k], 8);
	CHECK_INT(nb[0], 2);
	CHECK_INT(nb[1], 2);

	started = fp_clients_start(cl, &s, &stop);
	CHECK_INT(started, FP_CLIENTS);
	usleep(1000 * 1000);
	for (k = 0; k < 2; k++) {
		cy[k].stop0 = stack_now_ms();
		CHECK((k == 0 ? pgtmp_stop_server(&pg) : pgtmp_kill_server(&pg)) == 0);
		cy[k].down = stack_now_ms();
		usleep(FP_DOWN_MS * 1000);
		CHECK(fp_start_server(&pg, &cy[k]) == 0);
		printf("  %s stop took %lld ms, down %lld ms, start took %lld ms (accepting "
		    "after %lld)\n", cy[k].how, cy[k].down - cy[k].stop0,
		    cy[k].start0 - cy[k].down, cy[k].up - cy[k].start0,
		    cy[k].accept - cy[k].start0);
		usleep((FP_RECOVER_MS + 1500) * 1000);
	}
	stop = 1;
	for (i = 0; i < started; i++)
		pthread_join(cl[i].tid, NULL);
	for (i = 0; i < started; i++) {
		fp_check(&cl[i], i % 2 == 0 ? "GET /ready" : "GET /rest/v1/item", cy, 2);
		/* Served before the first stop. */
		for (j = 0; j < cl[i].n && cl[i].ev[j].t1 < cy[0].stop0; j++)
			CHECK(cl[i].ev[j].status == 200);
		CHECK(j > 0);
	}

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

/*
 * The workers start while the server is down: each thread has no database handle yet and
 * tries again per request (serve_db_connect()), which answers the same 503 with
 * Retry-After, and connects within 1 s of the server accepting again.
 */
static void
test_fault_pg_start_while_down(void)
{
	struct fp_client cl[FP_CLIENTS];
	struct fp_cycle cy = { "started while down", 0, 0, 0, 0, 0 };
	struct pgtmp pg;
	struct stack s;
	int i, started = 0, up = 0;
	volatile int stop = 0;

	memset(cl, 0, sizeof(cl));
	if (pgtmp_start(&pg) < 0) {
		CHECK(!"PostgreSQL cluster started");
		return;
	}
	if (fp_item_table(&pg) != 0 || pgtmp_stop_server(&pg) != 0) {
		CHECK(!"table created, server stopped");
		goto out;
	}
	cy.stop0 = cy.down = stack_now_ms();
	if (fp_stack_start(&s, &pg) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	up = 1;
	CHECK(stack_wait_pool(&s, "ready", 10000) == 0);
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	started = fp_clients_start(cl, &s, &stop);
	CHECK_INT(started, FP_CLIENTS);
	usleep(FP_DOWN_MS * 1000);
	CHECK(fp_start_server(&pg, &cy) == 0);
	usleep((FP_RECOVER_MS + 1500) * 1000);
	stop = 1;
	for (i = 0; i < started; i++)
		pthread_join(cl[i].tid, NULL);
	for (i = 0; i < started; i++)
		fp_check(&cl[i], i % 2 == 0 ? "GET /ready" : "GET /rest/v1/item", &cy, 1);
	CHECK_INT(stack_pool_value(&s, "ready", "crashes"), 0);
	CHECK_INT(stack_pool_value(&s, "rest", "crashes"), 0);
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
	RUN(test_fault_pg_start_while_down);
	curl_global_cleanup();
	return harness_done();
}
