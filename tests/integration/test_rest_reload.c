/*
 * test_rest_reload: the table API reads its schema again when the database says it
 * changed, without a restart and without failing a request (apps/rest/watch.c), through
 * the real stack (two rest workers) on SQLite and on a throwaway PostgreSQL:
 *   - a table made by another process is served within about a second: on PostgreSQL
 *     after NOTIFY pgrst, 'reload schema' (PostgREST's channel), on SQLite by the file's
 *     schema version, while a loop of reads of another table gets 200 throughout;
 *   - PostgreSQL: a flood of 2,000 notifications leaves the workers serving, the same
 *     processes; with rest_channel=off a NOTIFY changes nothing, and `sluiced ctl
 *     reload rest` (its workers replaced one by one) does.
 * Each figure (ms from the DDL to the first 200 on every worker) is printed.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "db.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

static struct pgtmp pg;
static char litepath[128];

/* Runs sql on url (a connection of its own, as another process would).  0 or -1. */
static int
run_sql(const char *url, const char *sql)
{
	struct db_opts o;
	struct db *db;
	char err[256];
	int rc;

	memset(&o, 0, sizeof(o));
	if (db_open(&db, url, &o, err, sizeof(err)) < 0) {
		harness_fail(__FILE__, __LINE__, "db_open: %s", err);
		return -1;
	}
	if ((rc = db_exec(db, sql)) < 0)
		harness_fail(__FILE__, __LINE__, "%s: %s", sql, db_errmsg(db));
	db_close(db);
	return rc;
}

static long
get_status(const struct stack *s, const char *path)
{
	struct http_resp r;
	char url[512];
	long status = -1;

	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/%s", s->base, path);
	if (http_do("GET", url, NULL, NULL, 0, 10000, &r) == 0)
		status = r.status;
	http_resp_free(&r);
	return status;
}

/* Milliseconds until path answers 200 twenty times in a row (every worker), or -1 past
 * limit_ms. */
static long long
ms_until_served(const struct stack *s, const char *path, long long limit_ms)
{
	long long t0 = stack_now_ms(), now;
	struct timespec ts = { 0, 20 * 1000 * 1000 };
	int ok = 0;

	while ((now = stack_now_ms()) - t0 < limit_ms) {
		if (get_status(s, path) == 200) {
			if (++ok == 20)
				return now - t0;
			continue;
		}
		ok = 0;
		(void)nanosleep(&ts, NULL);
	}
	return -1;
}

/* The table made and served while reads of another go on, every one answered 200. */
static void
table_appears(const struct stack *s, const char *url, const char *ddl, const char *path,
    long long limit_ms, const char *what)
{
	struct http_loop loop;
	char loop_url[512];
	long long ms;

	CHECK_INT(get_status(s, path), 404);
	snprintf(loop_url, sizeof(loop_url), "%s/rest/v1/t1?select=v", s->base);
	CHECK(http_loop_start(&loop, "GET", loop_url, 200) == 0);
	CHECK(run_sql(url, ddl) == 0);
	ms = ms_until_served(s, path, 5000);
	http_loop_stop(&loop);
	printf("  %s: %s served after %lld ms; %ld reads meanwhile, %ld failed\n", what, path,
	    ms, loop.sent, loop.bad);
	CHECK(ms >= 0 && ms <= limit_ms);
	CHECK(loop.sent > 0);
	CHECK_INT(loop.bad, 0);
}

static void
test_rest_reload_sqlite(void)
{
	struct stack s;
	char conf[512], url[160];

	snprintf(url, sizeof(url), "sqlite:%s", litepath);
	if (run_sql(url, "create table t1 (id integer primary key, v text); "
	    "insert into t1 values (1, 'a')") < 0)
		return;
	snprintf(conf, sizeof(conf), "db r %s\nrest /rest/v1/ workers=2 threads=2 db=r\n",
	    url);
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK_INT(get_status(&s, "t1"), 200);
	/* A look a second per worker, then the next request reloads: within 2.5 s. */
	table_appears(&s, url, "create table t2 (id integer primary key)", "t2", 2500,
	    "sqlite");
	stack_stop(&s);
}

static void
test_rest_reload_pg(void)
{
	struct stack s;
	pid_t before[8], after[8];
	int n, m, i;

	if (run_sql(pg.url, "create table t1 (id integer primary key, v text); "
	    "insert into t1 values (1, 'a')") < 0)
		return;
	setenv("SLUICE_DB_R", pg.url, 1);
	if (stack_start(&s, "db r sqlite:/unused.db\nrest /rest/v1/ workers=2 threads=2 db=r\n",
	    "tuned", 1, NULL) < 0) {
		unsetenv("SLUICE_DB_R");
		CHECK(!"stack started");
		return;
	}
	CHECK_INT(get_status(&s, "t1"), 200);
	/* Each worker listens from its first request: give both one. */
	for (i = 0; i < 8; i++)
		(void)get_status(&s, "t1");
	table_appears(&s, pg.url, "create table t2 (id integer primary key); "
	    "notify pgrst, 'reload schema'", "t2", 1000, "postgresql");
	n = stack_worker_pids(&s, "rest", before, 8);
	CHECK(run_sql(pg.url, "select pg_notify('pgrst', 'reload schema') "
	    "from generate_series(1, 2000)") == 0);
	table_appears(&s, pg.url, "create table t3 (id integer primary key); notify pgrst",
	    "t3", 1000, "postgresql after a flood");
	m = stack_worker_pids(&s, "rest", after, 8);
	CHECK(n == 2 && m == 2 && memcmp(before, after, sizeof(pid_t) * 2) == 0);
	stack_stop(&s);
	unsetenv("SLUICE_DB_R");
}

static void
test_rest_reload_pg_channel_off(void)
{
	struct stack s;
	struct buf out;
	struct timespec ts = { 1, 500 * 1000 * 1000 };
	long long ms;
	int i;

	setenv("SLUICE_DB_R", pg.url, 1);
	if (stack_start(&s, "db r sqlite:/unused.db\nrest /rest/v1/ workers=2 threads=2 db=r "
	    "rest_channel=off\n", "tuned", 1, NULL) < 0) {
		unsetenv("SLUICE_DB_R");
		CHECK(!"stack started");
		return;
	}
	for (i = 0; i < 8; i++)
		(void)get_status(&s, "t1");
	CHECK(run_sql(pg.url, "create table t4 (id integer primary key); notify pgrst") == 0);
	(void)nanosleep(&ts, NULL);
	for (i = 0; i < 8; i++)
		CHECK_INT(get_status(&s, "t4"), 404);
	buf_init(&out, 1 << 20);
	CHECK(stack_ctl(&s, &out, "reload rest") == 0);
	buf_free(&out);
	ms = ms_until_served(&s, "t4", 5000);
	printf("  rest_channel=off: t4 served %lld ms after ctl reload rest\n", ms);
	CHECK(ms >= 0);
	stack_stop(&s);
	unsetenv("SLUICE_DB_R");
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(litepath, sizeof(litepath), "/tmp/sluice-rest-reload-%d.db", (int)getpid());
	unlink(litepath);
	RUN(test_rest_reload_sqlite);
	memset(&pg, 0, sizeof(pg));
	if (pgtmp_start(&pg) < 0)
		CHECK(!"started PostgreSQL");
	else {
		RUN(test_rest_reload_pg);
		RUN(test_rest_reload_pg_channel_off);
	}
	pgtmp_stop(&pg);
	unlink(litepath);
	(void)snprintf(litepath + strlen(litepath), 8, "-wal");
	unlink(litepath);
	litepath[strlen(litepath) - 4] = '\0';
	(void)snprintf(litepath + strlen(litepath), 8, "-shm");
	unlink(litepath);
	return harness_done();
}
