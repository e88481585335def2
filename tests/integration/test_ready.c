/*
 * test_ready: the database path through the whole stack (nginx tuned, sluiced, bin/ready)
 * on a real SQLite file and on a real throwaway PostgreSQL cluster, including PostgreSQL
 * restarted under the worker: a request may fail with 503 JSON while the server is gone,
 * and the next ones succeed without restarting any worker.
 */
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chatfix.h"
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
	snprintf(conf, sizeof(conf), "sqlite:%s", path);
	CHECK_INT(chatfix_exec(conf, "CREATE TABLE item (id integer PRIMARY KEY)"), 0);
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
	CHECK_STR(r.body.data, "{\"status\":\"ok\",\"database\":\"sqlite\",\"writable\":true,"
	    "\"tables\":1}");
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

/* GET base/path into *r (initialised here); its status, -1 when no answer. */
static long
ready_get(const struct stack *s, const char *path, struct http_resp *r)
{
	char url[160];

	snprintf(url, sizeof(url), "%s%s", s->base, path);
	http_resp_init(r);
	if (http_do("GET", url, NULL, NULL, 0, 5000, r) == -1)
		return -1;
	return r->status;
}

/* A private directory (handed to the run user by sluiced) with db.db holding sql. */
static int
ready_dir(char *dir, size_t dirlen, char *dburl, size_t urllen, const char *sql)
{
	snprintf(dir, dirlen, "/tmp/sluice-ready-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(dburl, urllen, "sqlite:%s/db.db", dir);
	return sql == NULL ? 0 : chatfix_exec(dburl, sql);
}

/*
 * Regression: a worker created an empty database where the file was missing.  Now the
 * pool cannot start (it reports "failed") and no file appears.
 */
static void
test_ready_sqlite_missing_not_created(void)
{
	struct stack s;
	char dir[64], url[128], conf[256], path[128], state[32];
	struct stat st;
	long long t0;

	if (ready_dir(dir, sizeof(dir), url, sizeof(url), NULL) == -1) {
		CHECK(!"temporary directory");
		return;
	}
	snprintf(conf, sizeof(conf), "db main %s\nready =/ready workers=1 db=main\n"
	    "health =/health workers=1\n", url);
	if (stack_start(&s, conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	t0 = stack_now_ms();
	state[0] = '\0';
	while (stack_now_ms() - t0 < 15000 &&
	    !(stack_pool_state(&s, "ready", state, sizeof(state)) == 0 &&
	    strcmp(state, "failed") == 0))
		usleep(50 * 1000);
	CHECK_STR(state, "failed");
	snprintf(path, sizeof(path), "%s/db.db", dir);
	CHECK(stat(path, &st) == -1);
	stack_stop(&s);
out:
	stack_sh("rm -rf %s", dir);
}

/*
 * Regression: deleting the SQLite file while serving left /ready at 200 and the workers
 * writing to a file nobody would open again.  Now /ready answers 503 (moved) and no new,
 * empty file appears in its place.  And an empty database (no table) is not ready.
 */
static void
test_ready_sqlite_deleted_or_empty_is_503(void)
{
	struct http_resp r;
	struct stack s;
	char dir[64], url[128], conf[PATH_MAX + 512], path[128];
	struct stat st;
	int i;

	if (ready_dir(dir, sizeof(dir), url, sizeof(url),
	    "CREATE TABLE item (id integer PRIMARY KEY)") == -1) {
		CHECK(!"database made");
		return;
	}
	snprintf(conf, sizeof(conf), "db main %s\ndb empty sqlite:%s/empty.db\n"
	    "ready =/ready workers=1 db=main\n"
	    "ready_empty =/ready_empty workers=1 db=empty binary=%s/ready\n", url, dir,
	    getenv("SLUICE_BIN") ? getenv("SLUICE_BIN") : "bin");
	snprintf(path, sizeof(path), "sqlite:%s/empty.db", dir);
	CHECK_INT(chatfix_exec(path, "PRAGMA user_version = 1"), 0);
	if (stack_start(&s, conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	CHECK_INT(ready_get(&s, "/ready", &r), 200);
	http_resp_free(&r);
	CHECK_INT(ready_get(&s, "/ready_empty", &r), 503);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"tables\":0") != NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "empty") != NULL);
	http_resp_free(&r);
	snprintf(path, sizeof(path), "%s/db.db", dir);
	CHECK(unlink(path) == 0);
	for (i = 0; i < 3; i++) {
		CHECK_INT(ready_get(&s, "/ready", &r), 503);
		CHECK(r.body.data != NULL && strstr(r.body.data, "\"moved\":true") != NULL);
		CHECK(r.body.data != NULL && strstr(r.body.data, "\"code\":\"unavailable\"") !=
		    NULL);
		http_resp_free(&r);
	}
	CHECK(stat(path, &st) == -1);
	stack_stop(&s);
out:
	stack_sh("rm -rf %s", dir);
}

/* Waits up to ms for pool name's status to show state and db; 0 or -1. */
static int
pool_db_wait(struct stack *s, const char *name, const char *state, const char *db, int ms)
{
	long long end = stack_now_ms() + ms;
	char st[32], d[32];

	do {
		if (stack_pool_state(s, name, st, sizeof(st)) == 0 &&
		    stack_pool_field(s, name, "db", d, sizeof(d)) == 0 &&
		    strcmp(st, state) == 0 && strcmp(d, db) == 0)
			return 0;
		usleep(100 * 1000);
	} while (stack_now_ms() < end);
	fprintf(stderr, "pool %s: state=%s db=%s, want %s and %s\n", name, st, d, state, db);
	return -1;
}

/* The lines of sluiced.log holding both a and b. */
static int
log_count(const struct stack *s, const char *a, const char *b)
{
	char cmd[1024];
	FILE *f;
	int n = -1;

	snprintf(cmd, sizeof(cmd), "grep -F -- '%s' %s/sluiced.log | grep -cF -- '%s'", a, s->dir,
	    b);
	if ((f = popen(cmd, "r")) == NULL)
		return -1;
	if (fscanf(f, "%d", &n) != 1)
		n = -1;
	pclose(f);
	return n;
}

/*
 * Regression: a database emptied, deleted or replaced while serving was told only by
 * /ready: the pool went on reporting "running".  Now sluiced looks at the file and says
 * it: one log line per change naming the pool and the file, and `ctl status` shows the
 * pool degraded with db=empty, missing or replaced (db=ok again once the tables are back;
 * a replaced file until a reload opens it).  No worker creates a file in its place.
 */
static void
test_sqlite_deleted_or_emptied_pool_degraded(void)
{
	struct stack s;
	char dir[64], url[128], conf[512], path[128];
	struct stat st;

	if (ready_dir(dir, sizeof(dir), url, sizeof(url),
	    "CREATE TABLE item (id integer PRIMARY KEY)") == -1) {
		CHECK(!"database made");
		return;
	}
	snprintf(path, sizeof(path), "%s/db.db", dir);
	snprintf(conf, sizeof(conf), "db main %s\nready =/ready workers=1 db=main\n"
	    "health =/health workers=1\n", url);
	if (stack_start(&s, conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	CHECK_INT(pool_db_wait(&s, "ready", "running", "ok", 3000), 0);
	CHECK_INT(pool_db_wait(&s, "health", "running", "none", 3000), 0);
	/* Emptied: no table left. */
	CHECK_INT(chatfix_exec(url, "DROP TABLE item"), 0);
	CHECK_INT(pool_db_wait(&s, "ready", "degraded", "empty", 3000), 0);
	CHECK_INT(log_count(&s, "ready: DEGRADED: database ", "no table left"), 1);
	CHECK(log_count(&s, "DEGRADED", path) >= 1);
	/* Its tables back: running again, said once. */
	CHECK_INT(chatfix_exec(url, "CREATE TABLE item (id integer PRIMARY KEY)"), 0);
	CHECK_INT(pool_db_wait(&s, "ready", "running", "ok", 3000), 0);
	CHECK_INT(log_count(&s, "ready: database ", "is usable again"), 1);
	/* Deleted: reported once, however long it stays gone. */
	CHECK_INT(stack_sh("cp -p %s %s.bak", path, path), 0);
	CHECK(unlink(path) == 0);
	CHECK_INT(pool_db_wait(&s, "ready", "degraded", "missing", 3000), 0);
	usleep(2500 * 1000);
	CHECK_INT(log_count(&s, "ready: DEGRADED: database ", "the file is gone"), 1);
	CHECK_INT(log_count(&s, "DEGRADED", "health"), 0);
	CHECK(stat(path, &st) == -1);	/* no worker made a new one */
	/* Another file in its place (a restore): the workers still use the old one. */
	CHECK_INT(stack_sh("mv %s.bak %s", path, path), 0);
	CHECK_INT(pool_db_wait(&s, "ready", "degraded", "replaced", 3000), 0);
	CHECK_INT(log_count(&s, "ready: DEGRADED: database ", "another file is in its place"),
	    1);
	/* A reload opens the new file: running, db=ok. */
	CHECK_INT(stack_ctl(&s, NULL, "reload ready"), 0);
	CHECK_INT(pool_db_wait(&s, "ready", "running", "ok", 5000), 0);
	stack_stop(&s);
out:
	stack_sh("rm -rf %s", dir);
}

/*
 * Regression: /ready said 200 on a read-only database file, and a worker that opened the
 * file while it was read-only kept refusing writes after it was made writable again,
 * until a reload.  Now /ready says {"writable":false} with 503, and once the file is
 * writable again both /ready and writes work again without a reload (the worker that
 * holds a read-only connection is replaced by itself: at most one more 503).
 */
static void
test_ready_sqlite_read_only_then_writable(void)
{
	struct http_resp r;
	struct stack s;
	char dir[64], url[128], conf[256], path[128], post[160], state[32];
	pid_t before[2], after[2];
	int n;

	if (ready_dir(dir, sizeof(dir), url, sizeof(url),
	    "CREATE TABLE item (id integer PRIMARY KEY, name text)") == -1) {
		CHECK(!"database made");
		return;
	}
	snprintf(conf, sizeof(conf), "db main %s\nready =/ready workers=1 db=main\n"
	    "rest /rest/v1/ workers=1 threads=1 db=main\n", url);
	snprintf(path, sizeof(path), "%s/db.db", dir);
	if (geteuid() != 0) {
		/* chmod does not bind root, but the workers run as the run user. */
		stack_sh("rm -rf %s", dir);
		SKIP("needs root (workers under another user than the file's)");
	}
	if (stack_start(&s, conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	CHECK_INT(ready_get(&s, "/ready", &r), 200);
	http_resp_free(&r);
	/* The file goes read-only: /ready says so.  The rest worker starts again on it. */
	CHECK(chmod(path, 0440) == 0);
	CHECK_INT(ready_get(&s, "/ready", &r), 503);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"writable\":false") != NULL);
	http_resp_free(&r);
	n = stack_worker_pids(&s, "rest", before, 2);
	CHECK_INT(n, 1);
	if (n == 1)
		CHECK(kill(before[0], SIGKILL) == 0);
	{
		long long end = stack_now_ms() + 5000;

		while (stack_now_ms() < end && (stack_worker_pids(&s, "rest", after, 2) != 1 ||
		    after[0] == before[0]))
			usleep(50 * 1000);
	}
	snprintf(post, sizeof(post), "%s/rest/v1/item", s.base);
	http_resp_init(&r);
	CHECK(http_do("POST", post, (const char *const[]){ "Content-Type: application/json",
	    NULL }, "{\"id\":1,\"name\":\"a\"}", 19, 5000, &r) == 0);
	CHECK_INT(r.status, 503);
	http_resp_free(&r);
	/* Writable again: no reload; the write goes through within a few tries. */
	CHECK(chmod(path, 0640) == 0);
	CHECK_INT(ready_get(&s, "/ready", &r), 200);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"writable\":true") != NULL);
	http_resp_free(&r);
	{
		long long end = stack_now_ms() + 5000;
		long status = 0;
		int tries = 0;

		while (stack_now_ms() < end && status != 201) {
			http_resp_init(&r);
			if (http_do("POST", post, (const char *const[]){
			    "Content-Type: application/json", NULL }, "{\"id\":2,\"name\":\"b\"}",
			    19, 5000, &r) == 0)
				status = r.status;
			http_resp_free(&r);
			tries++;
			if (status != 201)
				usleep(50 * 1000);
		}
		printf("  write accepted after %d tries\n", tries);
		CHECK_INT(status, 201);
	}
	CHECK_INT(stack_worker_pids(&s, "rest", before, 2), 1);
	CHECK(stack_pool_state(&s, "rest", state, sizeof(state)) == 0 &&
	    strcmp(state, "running") == 0);
	CHECK_INT(chatfix_int(url, "SELECT count(*) FROM item", NULL), 1);
	stack_stop(&s);
out:
	stack_sh("rm -rf %s", dir);
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
	/* An empty database is not ready: give it a table. */
	CHECK_INT(chatfix_exec(pg.url, "CREATE TABLE item (id integer PRIMARY KEY)"), 0);
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
	CHECK_STR(r.body.data, "{\"status\":\"ok\",\"database\":\"postgresql\",\"writable\":true,"
	    "\"tables\":1}");
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
	/* An empty database is not ready: give it a table. */
	CHECK_INT(chatfix_exec(pg.url, "CREATE TABLE item (id integer PRIMARY KEY)"), 0);
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
	RUN(test_ready_sqlite_missing_not_created);
	RUN(test_ready_sqlite_deleted_or_empty_is_503);
	RUN(test_sqlite_deleted_or_emptied_pool_degraded);
	RUN(test_ready_sqlite_read_only_then_writable);
	RUN(test_ready_postgres_restart);
	RUN(test_ready_postgres_down_at_start);
	return harness_done();
}
