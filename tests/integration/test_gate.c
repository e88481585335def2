/*
 * test_gate: a worker's serving threads wait for requests a few at a time
 * (common/serve_gate.c), yet requests that run long do not hold the others back, and a
 * worker whose threads are parked stops at once.  The real stack (nginx tuned, sluiced,
 * bin/rest) on the Chinook SQLite database as its seeder makes it, plus a function that
 * counts until its budget runs out (rpc/spin); one pool of one worker and 12 threads with
 * a 2 s budget.  The test, and so the stack it starts, runs on one CPU
 * (sched_setaffinity()), so the worker lets 2 threads wait for requests (twice its CPUs).
 *   - Four calls of spin hold the two waiting threads and two more; a read sent while they
 *     run is answered in well under their budget (the gate's keeper calls a parked thread
 *     when no thread has waited for requests for 5 ms), and the four end with 503 timeout
 *     at their budget.  Without the keeper the read waits for the first of them to end.
 *   - Twelve reads at once (six times the waiting threads) are all answered.
 *   - SIGTERM to the worker, most of whose threads are parked: it is gone within a second
 *     (the gate wakes its parked threads to leave), not when sluiced kills it after its
 *     grace.
 */
#define _GNU_SOURCE	/* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

#define BUDGET_MS	2000
#define SPINS		4

static struct stack st;
static char dir[64], dbpath[128];
static int up;

static const char spin_sql[] =
    "insert into sluice_functions (name, args, returns, volatility, body) values "
    "('spin', '', 'integer', 'stable', 'with recursive c(x) as (select 1 union all "
    "select x + 1 from c where x < 4000000000) select count(*) from c')";

static int
setup(void)
{
	char conf[1024], url[256], err[256];
	struct db *db;
	cpu_set_t one;

	/* One CPU for the test and every process it starts. */
	CPU_ZERO(&one);
	CPU_SET(sched_getcpu() >= 0 ? sched_getcpu() : 0, &one);
	if (sched_setaffinity(0, sizeof(one), &one) < 0)
		return -1;
	snprintf(dir, sizeof(dir), "/tmp/sluice-gate-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(dbpath, sizeof(dbpath), "%s/chinook.db", dir);
	if (stack_sh("%s sqlite:%s >/dev/null", stack_seeder("chinook-seed"), dbpath) != 0)
		return -1;
	snprintf(url, sizeof(url), "sqlite:%s", dbpath);
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "setup: %s\n", err);
		return -1;
	}
	if (db_exec(db, spin_sql) < 0) {
		fprintf(stderr, "setup: %s\n", db_errmsg(db));
		db_close(db);
		return -1;
	}
	db_close(db);
	snprintf(conf, sizeof(conf), "db chinook sqlite:%s\n"
	    "rest /rest/v1/ workers=1 threads=12 db=chinook stmt_timeout_ms=%d\n",
	    dbpath, BUDGET_MS);
	if (stack_start(&st, conf, "tuned", 1, NULL) < 0)
		return -1;
	up = 1;
	return 0;
}

static int
get(const char *path, long timeout_ms, struct http_resp *r)
{
	char url[512];

	snprintf(url, sizeof(url), "%s/rest/v1/%s", st.base, path);
	return http_do("GET", url, NULL, NULL, 0, timeout_ms, r);
}

struct spin {
	pthread_t tid;
	struct http_resp r;
	int rc;
};

static void *
spin_main(void *arg)
{
	struct spin *s = arg;

	s->rc = get("rpc/spin", 30000, &s->r);
	return NULL;
}

/* Four requests that run for their whole budget do not hold back a short one. */
static void
test_long_requests_do_not_hold_back_a_read(void)
{
	struct spin spins[SPINS];
	struct http_resp r;
	int i, started = 0;

	http_resp_init(&r);
	for (i = 0; i < SPINS; i++) {
		http_resp_init(&spins[i].r);
		spins[i].rc = -1;
		if (pthread_create(&spins[i].tid, NULL, spin_main, &spins[i]) != 0)
			break;
		started++;
	}
	CHECK_INT(started, SPINS);
	/* Every spin under way (each takes the whole budget). */
	(void)usleep(300 * 1000);
	CHECK_INT(get("artist?artist_id=eq.1", 30000, &r), 0);
	CHECK_INT(r.status, 200);
	printf("# a read behind %d requests running for their %d ms budget: %.3f s\n",
	    SPINS, BUDGET_MS, r.seconds);
	CHECK(r.seconds < BUDGET_MS / 2000.0);
	for (i = 0; i < started; i++) {
		pthread_join(spins[i].tid, NULL);
		printf("# spin %d: %ld in %.2f s\n", i, spins[i].r.status, spins[i].r.seconds);
		CHECK_INT(spins[i].rc, 0);
		CHECK_INT(spins[i].r.status, 503);
		CHECK(http_json_code(&spins[i].r, "timeout"));
		http_resp_free(&spins[i].r);
	}
	http_resp_free(&r);
}

/* More concurrent requests than waiting threads: every one answered. */
static void
test_burst_answered(void)
{
	struct http_burst b;
	char url[512];

	snprintf(url, sizeof(url), "%s/rest/v1/artist?artist_id=eq.1", st.base);
	http_burst(url, 12, 200, 10000, &b);
	printf("# 12 reads at once: %d ok, slowest %.3f s\n", b.ok, b.max_seconds);
	CHECK_INT(b.ok, 12);
	CHECK_INT(b.other, 0);
	CHECK_INT(b.failed, 0);
}

/* 1 while pid lives (a zombie counts as gone). */
static int
alive(pid_t pid)
{
	char path[64], line[256];
	FILE *f;
	int live = 0;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, "State:", 6) == 0) {
			live = strchr(line, 'Z') == NULL && strchr(line, 'X') == NULL;
			break;
		}
	fclose(f);
	return live;
}

/* A worker with parked threads leaves at once on SIGTERM. */
static void
test_worker_with_parked_threads_stops_at_once(void)
{
	pid_t pid;
	long long t0, gone = -1;

	CHECK_INT(stack_wait_pool(&st, "rest", 10000), 0);
	CHECK_INT(stack_worker_pids(&st, "rest", &pid, 1), 1);
	t0 = stack_now_ms();
	CHECK_INT(kill(pid, SIGTERM), 0);
	while (stack_now_ms() - t0 < 15000) {
		if (!alive(pid)) {
			gone = stack_now_ms() - t0;
			break;
		}
		(void)usleep(5 * 1000);
	}
	printf("# SIGTERM to a worker of 12 threads, most parked: gone after %lld ms\n", gone);
	CHECK(gone >= 0);
	CHECK(gone < 1000);
	/* The pool starts its successor, which serves. */
	CHECK_INT(stack_wait_pool(&st, "rest", 10000), 0);
	test_burst_answered();
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (setup() < 0) {
		CHECK(!"the stack started");
		goto out;
	}
	RUN(test_long_requests_do_not_hold_back_a_read);
	RUN(test_burst_answered);
	RUN(test_worker_with_parked_threads_stops_at_once);
out:
	if (up)
		stack_stop(&st);
	stack_sh("rm -rf %s", dir);
	return harness_done();
}
