/*
 * test_ready: the database path through the whole stack (nginx tuned, sluiced, bin/ready)
 * on a real SQLite file and on a real throwaway PostgreSQL cluster, including PostgreSQL
 * restarted under the worker: a request may fail with 503 JSON while the server is gone,
 * and the next ones succeed without restarting any worker.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

/* An error body names the failure, never the database's own text, its host or a path. */
static int
no_leak(const char *body)
{
	static const char *const words[] = { "/tmp", "/var", "host=", "port=", "sqlite3",
	    "could not", "connection to server", "FATAL", "socket", "errno" };
	size_t i;

	if (body == NULL)
		return 0;
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		if (strstr(body, words[i]) != NULL)
			return 0;
	return 1;
}

static void
test_ready_sqlite(void)
{
	struct http_resp r;
	struct stack s;
	char conf[512], url[128], path[128];

	snprintf(path, sizeof(path), "/tmp/sluice-ready-%d.db", (int)getpid());
	snprintf(conf, sizeof(conf), "db main sqlite:%s\nready =/ready workers=2 db=main\n",
	    path);
	if (stack_start(&s, conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/ready", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "{\"status\":\"ok\",\"database\":\"sqlite\"}");
	http_resp_free(&r);
	stack_stop(&s);
	stack_sh("rm -f %s %s-wal %s-shm", path, path, path);
}

static void
test_ready_sqlite_unopenable(void)
{
	struct stack s;
	char state[32];
	long long t0;

	/* A database in a directory that does not exist: the pool cannot start, and says so
	 * by failing (crash loop), not by spinning. */
	if (stack_start(&s, "db main sqlite:/nonexistent/dir/x.db\n"
	    "ready =/ready workers=1 db=main\nhealth =/health workers=1\n", "tuned", 2,
	    NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	t0 = stack_now_ms();
	state[0] = '\0';
	while (stack_now_ms() - t0 < 15000 &&
	    !(stack_pool_state(&s, "ready", state, sizeof(state)) == 0 &&
	    strcmp(state, "failed") == 0))
		usleep(50 * 1000);
	CHECK_STR(state, "failed");
	CHECK(stack_wait_pool(&s, "health", 1000) == 0);
	stack_stop(&s);
}

static void
test_ready_postgres_restart(void)
{
	struct http_resp r;
	struct pgtmp pg;
	struct stack s;
	char url[128];
	int i, fails = 0, ok_after = 0;
	pid_t before[4], after[4];

	memset(&pg, 0, sizeof(pg));
	if (pgtmp_start(&pg) < 0) {
		CHECK(!"PostgreSQL cluster started");
		return;
	}
	setenv("SLUICE_DB_MAIN", pg.url, 1);
	if (stack_start(&s, "db main sqlite:/nonexistent.db\n"
	    "ready =/ready workers=1 threads=1 db=main\n", "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		unsetenv("SLUICE_DB_MAIN");
		pgtmp_stop(&pg);
		return;
	}
	unsetenv("SLUICE_DB_MAIN");
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/ready", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "{\"status\":\"ok\",\"database\":\"postgresql\"}");
	CHECK_INT(stack_worker_pids(&s, "ready", before, 4), 1);

	/* Down: every request is a clean 503 JSON. */
	CHECK(pgtmp_stop_server(&pg) == 0);
	for (i = 0; i < 3; i++) {
		CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
		CHECK_INT(r.status, 503);
		CHECK(r.body.data && strstr(r.body.data, "\"code\":\"unavailable\""));
		CHECK(no_leak(r.body.data));
	}
	/* Back: at most one more 503, then success, from the same worker. */
	CHECK(pgtmp_start_server(&pg) == 0);
	for (i = 0; i < 10; i++) {
		CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
		if (r.status == 200)
			ok_after++;
		else if (ok_after == 0)
			fails++;
	}
	printf("  after the restart: %d failed before the first success, %d ok\n", fails,
	    ok_after);
	CHECK(fails <= 1);
	CHECK_INT(ok_after, 10 - fails);

	/* A restart while the worker is idle and connected. */
	CHECK(pgtmp_restart(&pg) == 0);
	fails = ok_after = 0;
	for (i = 0; i < 10; i++) {
		CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
		if (r.status == 200)
			ok_after++;
		else if (ok_after == 0)
			fails++;
	}
	printf("  idle restart: %d failed before the first success, %d ok\n", fails, ok_after);
	CHECK(fails <= 1);
	CHECK_INT(ok_after, 10 - fails);
	CHECK_INT(stack_worker_pids(&s, "ready", after, 4), 1);
	CHECK_INT(after[0], before[0]);		/* no worker restart was needed */
	http_resp_free(&r);
	stack_stop(&s);
	pgtmp_stop(&pg);
}

/* Workers started while PostgreSQL is down come up anyway, answer 503, and serve as soon
 * as the server is there: no crash loop while a database boots. */
static void
test_ready_postgres_down_at_start(void)
{
	struct http_resp r;
	struct pgtmp pg;
	struct stack s;
	char url[128], state[32];
	long long t0;
	int ok = 0;

	memset(&pg, 0, sizeof(pg));
	if (pgtmp_start(&pg) < 0) {
		CHECK(!"PostgreSQL cluster started");
		return;
	}
	CHECK(pgtmp_stop_server(&pg) == 0);
	setenv("SLUICE_DB_MAIN", pg.url, 1);
	if (stack_start(&s, "db main sqlite:/nonexistent.db\n"
	    "ready =/ready workers=2 threads=2 db=main\n", "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		unsetenv("SLUICE_DB_MAIN");
		pgtmp_stop(&pg);
		return;
	}
	unsetenv("SLUICE_DB_MAIN");
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/ready", s.base);
	CHECK(stack_wait_pool(&s, "ready", 3000) == 0);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 503);
	CHECK(r.body.data && strstr(r.body.data, "\"code\":\"unavailable\""));
	CHECK(no_leak(r.body.data));
	CHECK(pgtmp_start_server(&pg) == 0);
	t0 = stack_now_ms();
	while (stack_now_ms() - t0 < 3000 && !ok) {
		CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
		ok = r.status == 200;
		if (!ok)
			usleep(50 * 1000);
	}
	printf("  serving %lld ms after the server came up\n", stack_now_ms() - t0);
	CHECK(ok);
	CHECK(stack_pool_state(&s, "ready", state, sizeof(state)) == 0 &&
	    strcmp(state, "running") == 0);
	CHECK_INT(stack_pool_value(&s, "ready", "crashes"), 0);
	http_resp_free(&r);
	stack_stop(&s);
	pgtmp_stop(&pg);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_ready_sqlite);
	RUN(test_ready_sqlite_unopenable);
	RUN(test_ready_postgres_restart);
	RUN(test_ready_postgres_down_at_start);
	return harness_done();
}
