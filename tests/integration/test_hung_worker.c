/*
 * test_hung_worker: a worker stopped (SIGSTOP) in the middle of a write is found and
 * replaced within its pool's time budget and one second, its request is answered, and no
 * other pool waits for it.  The real stack (nginx tuned, sluiced, bin/rest) with two pools
 * of the same binary on one database: "writer" (/w/v1/, one worker of 4 threads, a time
 * budget of WRITER_BUDGET_MS), standing for the chat's writing pool, and "rest"
 * (/rest/v1/, the default settings), the other pool.  On SQLite, then on PostgreSQL (a
 * throwaway cluster, the database given by SLUICE_DB_MAIN).
 *
 * The stopped write holds the database's write locks: on SQLite the writers' turn, the
 * lock file and SQLite's own write lock; on PostgreSQL its row's lock, in a backend
 * whose statement_timeout ends it whatever the stopped worker does.  Meanwhile:
 *   - GETs of the rest pool, from two clients, each answer 200 within GET_MAX_MS (their
 *     p99 and maximum are printed);
 *   - a POST to the rest pool on the same database answers without waiting for the
 *     stopped worker's budget: on SQLite 503 "busy" within GET_MAX_MS (a writer gives up
 *     once a stopped process has held the writers' queue for twice the write budget,
 *     sqlite_write_ms), on PostgreSQL 201 (the stopped write's statement_timeout ends
 *     its transaction in the server);
 *   - sluiced kills the stopped worker within the budget and HUNG_GRACE_MS (plus a
 *     margin for a loaded 2-core machine) of the write's start, and starts another at
 *     once (its exec seen within SPAWN_MS);
 *   - the stopped write is answered (nginx's JSON 502: a POST is never sent twice);
 *   - `ctl status` says hung=1 and spawns=2 for the pool, state=running, and the
 *     Prometheus text (set metrics_listen) says sluice_worker_hung_total 1 for it; the next write succeeds.
 * The figures (time to find the stopped worker, the GETs' p99 before and meanwhile) are
 * printed.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chatfix.h"
#include "db.h"
#include "http.h"
#include "metricsfix.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define WRITER_BUDGET_MS	1000	/* the writer pool's stmt_timeout_ms */
#define HUNG_GRACE_MS		1000	/* POOL_WATCH_GRACE_MS */
#define STOP_AFTER_MS		300	/* the slow write's age when its worker is stopped */
#define MARGIN_MS		700	/* a loaded 2-core machine, a sanitizer build */
#define SPAWN_MS		1500	/* the kill to the new worker's exec, loaded */
#define GET_MAX_MS		1000
#define MAXGETS			20000
#define MAXPIDS			4

static const char schema_sqlite[] =
    "create table item (id integer primary key, name text not null);\n"
    "create table slow (id integer primary key, v integer);\n"
    "insert into slow values (1, 0);\n"
    /* Burns CPU for many seconds per updated row: a write that holds the lock. */
    "create trigger slow_burn after update on slow begin\n"
    "  select count(*) from (with recursive c(x) as (select 1 union all select x + 1\n"
    "  from c where x < 400000000) select x from c);\n"
    "end;\n";

static const char schema_pg[] =
    "create table item (id integer primary key, name text not null);\n"
    "create table slow (id integer primary key, v integer);\n"
    "insert into slow values (1, 0);\n"
    "create function slow_burn() returns trigger language plpgsql as\n"
    "  $$ begin perform pg_sleep(30); return new; end $$;\n"
    "create trigger slow_burn after update on slow for each row\n"
    "  execute function slow_burn();\n";

static struct stack st;
static struct pgtmp pg;
static char dir[64], url[160], binabs[4096];
static int metrics_port;

/* The rest pool's GETs while the writer is stopped. */
struct getter {
	volatile int *stop;
	double ms[MAXGETS];
	long long at[MAXGETS];	/* when each was sent */
	size_t n;
	long bad;		/* answers other than 200, or none */
};

static void *
getter_main(void *arg)
{
	struct getter *g = arg;
	struct http_resp r;
	char u[256];

	http_resp_init(&r);
	snprintf(u, sizeof(u), "%s/rest/v1/item?id=eq.1", st.base);
	while (!*g->stop && g->n < MAXGETS) {
		g->at[g->n] = stack_now_ms();
		if (http_do("GET", u, NULL, NULL, 0, 30000, &r) != 0 || r.status != 200)
			g->bad++;
		g->ms[g->n++] = r.seconds * 1000;
		(void)usleep(5 * 1000);
	}
	http_resp_free(&r);
	return NULL;
}

static int
cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

struct inflight {
	struct http_resp r;
	int rc;
};

static void *
inflight_main(void *arg)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	struct inflight *f = arg;
	char u[256];

	snprintf(u, sizeof(u), "%s/w/v1/slow?id=eq.1", st.base);
	f->rc = http_do("PATCH", u, json, "{\"v\":42}", 8, 120000, &f->r);
	return NULL;
}

static int
post(const char *prefix, int id, struct http_resp *r)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	char u[256], body[96];

	snprintf(u, sizeof(u), "%s/%s/v1/item", st.base, prefix);
	snprintf(body, sizeof(body), "{\"id\":%d,\"name\":\"n%d\"}", id, id);
	return http_do("POST", u, json, body, strlen(body), 30000, r);
}

/*
 * Milliseconds from t0 until the writer pool's worker old is gone (*found: killed, no
 * longer a worker of the pool) and until another has taken its place (returned), or -1.
 */
static long long
wait_replaced(pid_t old, long long t0, long long *found)
{
	pid_t now[MAXPIDS];
	int n, i, alive;

	*found = -1;
	while (stack_now_ms() - t0 < WRITER_BUDGET_MS + HUNG_GRACE_MS + 20000) {
		n = stack_worker_pids(&st, "writer", now, MAXPIDS);
		for (i = 0, alive = 0; i < n; i++)
			alive |= now[i] == old;
		if (!alive && *found < 0)
			*found = stack_now_ms() - t0;
		if (n == 1 && now[0] != old)
			return stack_now_ms() - t0;
		(void)usleep(10 * 1000);
	}
	return -1;
}

/* The p99 and the maximum of the n times in ms (sorted here). */
static void
figures(double *ms, size_t n, double *p99, double *max)
{
	*p99 = *max = 0;
	if (n == 0)
		return;
	qsort(ms, n, sizeof(ms[0]), cmp_double);
	*p99 = ms[(n * 99 + 99) / 100 - 1];
	*max = ms[n - 1];
}

/* The value of the Prometheus family name for pool in sluiced's metrics text, or -1. */
static long
prom_value(const char *name, const char *pool)
{
	struct http_resp r;
	char want[160], *p;
	long v = -1;

	http_resp_init(&r);
	snprintf(want, sizeof(want), "%s{pool=\"%s\"} ", name, pool);
	if (metricsfix_scrape(metrics_port, "GET", "/metrics", &r) == 0 && r.status == 200 &&
	    r.body.data != NULL && (p = strstr(r.body.data, want)) != NULL)
		v = strtol(p + strlen(want), NULL, 10);
	http_resp_free(&r);
	return v;
}

/*
 * The stopped writer: see the file's comment.  which names the database in the figures;
 * post_want is what the rest pool's POST meets on it.
 */
static void
stopped_writer(const char *which, long post_want)
{
	volatile int stop = 0;
	static struct getter g[2];
	struct inflight f;
	struct http_resp r;
	pthread_t th, gth[2];
	pid_t pids[MAXPIDS];
	long long t0, replaced = -1, found = -1;
	static double all[2 * MAXGETS], base[2 * MAXGETS];
	double p99 = 0, max = 0, bp99, bmax;
	size_t n = 0, nb = 0, i;
	int k, stopped = 0, ng = 0;
	char state[32];

	http_resp_init(&r);
	http_resp_init(&f.r);
	f.rc = -1;
	CHECK_INT(post("w", 1, &r), 0);
	CHECK_INT(r.status, 201);
	CHECK_INT(stack_worker_pids(&st, "writer", pids, MAXPIDS), 1);
	for (k = 0; k < 2; k++) {
		memset(&g[k], 0, sizeof(g[k]));
		g[k].stop = &stop;
		if (pthread_create(&gth[k], NULL, getter_main, &g[k]) == 0)
			ng++;
	}
	/* A second of GETs before, for comparison: the machine's own latency. */
	(void)usleep(1000 * 1000);
	t0 = stack_now_ms();
	if (pthread_create(&th, NULL, inflight_main, &f) != 0) {
		CHECK(!"started the slow write");
		goto getters;
	}
	(void)usleep(STOP_AFTER_MS * 1000);
	CHECK_INT(kill(pids[0], SIGSTOP), 0);
	stopped = 1;
	/* Another pool's write on the same database, while the stopped one holds it. */
	(void)usleep(100 * 1000);
	CHECK_INT(post("rest", 2, &r), 0);
	printf("# %s: a POST to the other pool behind the stopped write: %ld after %.0f ms\n",
	    which, r.status, r.seconds * 1000);
	CHECK_INT(r.status, post_want);
	if (post_want == 503)
		CHECK(http_json_code(&r, "busy"));
	CHECK(r.seconds * 1000 < GET_MAX_MS);
	replaced = wait_replaced(pids[0], t0, &found);
	pthread_join(th, NULL);
	printf("# %s: the writer stopped %d ms into its write, killed %lld ms and replaced "
	    "%lld ms after the write began (budget %d ms + %d ms); the write got %ld after "
	    "%.2f s\n", which, STOP_AFTER_MS, found, replaced, WRITER_BUDGET_MS,
	    HUNG_GRACE_MS, f.r.status, f.r.seconds);
	CHECK(found > 0);
	CHECK(found <= WRITER_BUDGET_MS + HUNG_GRACE_MS + MARGIN_MS);
	CHECK(replaced > 0);
	/* The new worker is forked at once; a sanitizer build takes a while to exec. */
	CHECK(replaced <= found + SPAWN_MS);
	CHECK_INT(f.rc, 0);
	CHECK_INT(f.r.status, 502);
	CHECK(http_json_code(&f.r, NULL));
	CHECK(f.r.seconds * 1000 <= WRITER_BUDGET_MS + HUNG_GRACE_MS + MARGIN_MS);
getters:
	(void)usleep(300 * 1000);
	stop = 1;
	for (k = 0; k < ng; k++) {
		pthread_join(gth[k], NULL);
		CHECK_INT(g[k].bad, 0);
		for (i = 0; i < g[k].n; i++)
			if (g[k].at[i] < t0)
				base[nb++] = g[k].ms[i];
			else
				all[n++] = g[k].ms[i];
	}
	figures(base, nb, &bp99, &bmax);
	printf("# %s: the other pool's GETs in the second before: %zu, p99 %.1f ms, max "
	    "%.1f ms\n", which, nb, bp99, bmax);
	figures(all, n, &p99, &max);
	printf("# %s: the other pool's GETs meanwhile: %zu, p99 %.1f ms, max %.1f ms\n",
	    which, n, p99, max);
	CHECK(n > 20);
	CHECK(max < GET_MAX_MS);
	CHECK_INT(stack_pool_value(&st, "writer", "hung"), 1);
	CHECK_INT(stack_pool_value(&st, "writer", "spawns"), 2);
	CHECK_INT(stack_pool_state(&st, "writer", state, sizeof(state)), 0);
	CHECK_STR(state, "running");
	CHECK_INT(prom_value("sluice_worker_hung_total", "writer"), 1);
	CHECK_INT(stack_wait_pool(&st, "writer", 10000), 0);
	CHECK_INT(post("w", 3, &r), 0);
	CHECK_INT(r.status, 201);
	if (stopped && replaced < 0)
		(void)kill(pids[0], SIGCONT);
	http_resp_free(&f.r);
	http_resp_free(&r);
}

static int
start(const char *dburl)
{
	char conf[8192];

	metrics_port = stack_free_port();
	snprintf(conf, sizeof(conf),
	    "set metrics_listen 127.0.0.1:%d\n"
	    "db main %s\n"
	    "rest /rest/v1/ workers=1 threads=4 db=main\n"
	    "writer /w/v1/ workers=1 threads=4 db=main binary=%s/rest stmt_timeout_ms=%d "
	    "sqlite_write_ms=0\n", metrics_port, dburl, binabs, WRITER_BUDGET_MS);
	return stack_start(&st, conf, "tuned", 2, NULL);
}

static void
test_hung_worker_sqlite(void)
{
	if (start(url) < 0) {
		CHECK(!"the SQLite stack started");
		return;
	}
	stopped_writer("sqlite", 503);
	stack_stop(&st);
}

/*
 * SQLite's own write lock held outside the writers' queue (here by the test's connection,
 * standing for a tool or a process stopped in its transaction): a write waits in SQLite's
 * busy handler, which gave up only after sqlite_busy_ms (10 s), past the budget, so that
 * the watchdog killed a worker that was running.  Now it gives up at the budget: 503 in
 * time, and the worker lives on.
 */
static void
test_sqlite_lock_held_answers_in_budget(void)
{
	struct http_resp r;
	struct db *db = NULL;
	pid_t before[MAXPIDS], after[MAXPIDS];
	char err[256];

	http_resp_init(&r);
	if (start(url) < 0) {
		CHECK(!"the SQLite stack started");
		goto out;
	}
	CHECK_INT(stack_worker_pids(&st, "writer", before, MAXPIDS), 1);
	CHECK_INT(db_open(&db, url, NULL, err, sizeof(err)), 0);
	if (db == NULL)
		goto stop;
	CHECK_INT(db_exec(db, "BEGIN IMMEDIATE"), 0);
	CHECK_INT(post("w", 10, &r), 0);
	printf("# sqlite: a POST behind SQLite's lock held outside the queue: %ld after "
	    "%.0f ms (budget %d ms)\n", r.status, r.seconds * 1000, WRITER_BUDGET_MS);
	CHECK_INT(r.status, 503);
	CHECK(http_json_code(&r, NULL));
	CHECK(r.seconds * 1000 >= WRITER_BUDGET_MS * 0.8);
	CHECK(r.seconds * 1000 < WRITER_BUDGET_MS + MARGIN_MS);
	CHECK_INT(db_exec(db, "ROLLBACK"), 0);
	db_close(db);
	CHECK_INT(post("w", 10, &r), 0);
	CHECK_INT(r.status, 201);
	CHECK_INT(stack_worker_pids(&st, "writer", after, MAXPIDS), 1);
	CHECK_INT(after[0], before[0]);
	CHECK_INT(stack_pool_value(&st, "writer", "hung"), 0);
stop:
	stack_stop(&st);
out:
	http_resp_free(&r);
}

static void
test_hung_worker_pg(void)
{
	memset(&pg, 0, sizeof(pg));
	if (pgtmp_start(&pg) < 0 || chatfix_exec(pg.url, schema_pg) != 0) {
		CHECK(!"started PostgreSQL with the schema");
		goto out;
	}
	setenv("SLUICE_DB_MAIN", pg.url, 1);
	if (start(url) < 0) {
		CHECK(!"the PostgreSQL stack started");
		goto out;
	}
	stopped_writer("postgresql", 201);
	stack_stop(&st);
out:
	unsetenv("SLUICE_DB_MAIN");
	pgtmp_stop(&pg);
}

int
main(void)
{
	const char *b = getenv("SLUICE_BIN");
	char path[128];

	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "/tmp/sluice-hung-XXXXXX");
	if (mkdtemp(dir) == NULL || realpath(b ? b : "bin", binabs) == NULL) {
		CHECK(!"made the directory");
		return harness_done();
	}
	snprintf(path, sizeof(path), "%s/main.db", dir);
	snprintf(url, sizeof(url), "sqlite:%s", path);
	if (chatfix_exec(url, schema_sqlite) != 0) {
		CHECK(!"made the SQLite database");
		goto out;
	}
	RUN(test_hung_worker_sqlite);
	RUN(test_sqlite_lock_held_answers_in_budget);
	RUN(test_hung_worker_pg);
out:
	stack_sh("rm -rf %s", dir);
	return harness_done();
}
