/*
 * test_budgets: no request holds a worker past its time budget or grows it past the
 * response cap, and a worker that hangs is replaced.  The real stack (nginx tuned,
 * sluiced, bin/rest) on the Chinook database as sql/chinook's seeder makes it, with two
 * pools of the same binary: "rest" (/rest/v1/) with the default settings (a 5 s budget,
 * SLUICE_STMT_TIMEOUT_MS, and the 64 MiB response cap) and "fast" (/fast/v1/, one worker)
 * with a 500 ms budget, so that the watchdog's limit (budget and 1 s of grace) is short.
 *
 * Each case reproduces a failure found against the stack before the budgets existed:
 *   - the embed bomb, GET playlist?select=playlist_id,track(track_id,playlist(playlist_id,
 *     track(track_id))) (100 bytes, no auth), ran 74 s and grew one worker to 2.3 GB
 *     (VmHWM) before failing with a 400.  Now: a JSON 400 (54000: the response cap, reached
 *     while the body is built) or 503 (the budget), within the budget and a
 *     margin, the worker's peak RSS under BOMB_HWM_MAX_KB (release builds; under ASan,
 *     whose quarantine keeps freed memory, it is printed only), and the next request
 *     answered at once; with the short budget, 503 "timeout" in about 500 ms;
 *   - a writer that holds the writers' queue (here the test holds "<file>-wlock" itself,
 *     standing for a slow or hung writer) made every other writer wait without end.  Now
 *     a POST answers 503 "timeout" once its budget is spent, reads are not held at all,
 *     and the POST succeeds once the queue is free;
 *   - a worker stopped with SIGSTOP in the middle of a request was never detected: its
 *     requests waited 60 s for nginx's timeout.  Now sluiced kills it once the request has
 *     run past the budget and the grace, the pool starts a new worker (pool status hung=1),
 *     and the request in flight is answered long before nginx's timeout; one stopped
 *     between requests is replaced after the same time.
 * Then the bomb once more on PostgreSQL (a throwaway cluster seeded alike, the database
 * given by SLUICE_DB_CHINOOK): statement_timeout cancels it at the budget.
 * The figures (time to answer, peak RSS, time to replacement) are printed.
 */
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <unistd.h>

#include "db.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define BOMB_QUERY	"playlist?select=playlist_id,track(track_id,playlist(playlist_id," \
			    "track(track_id)))"
#define BUDGET_MS	5000	/* SLUICE_STMT_TIMEOUT_MS's default */
#define FAST_MS		500	/* the fast pool's budget */
#define GRACE_MS	1000	/* POOL_WATCH_GRACE_MS */
#define MARGIN_MS	2500	/* a loaded 2-core machine, a sanitizer build */
#define BOMB_HWM_MAX_KB	(256 * 1024)
#define MAXPIDS		4

static struct stack st, pgs;
static struct pgtmp pg;
static char dir[64], dbpath[128], binabs[4096];	/* binabs: SLUICE_BIN's real path */
static int up, pg_up;

static int
setup(void)
{
	char conf[8192], bin[4096];
	const char *b = getenv("SLUICE_BIN");

	snprintf(dir, sizeof(dir), "/tmp/sluice-budgets-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(dbpath, sizeof(dbpath), "%s/chinook.db", dir);
	if (stack_sh("%s sqlite:%s >/dev/null", stack_seeder("chinook-seed"), dbpath) != 0)
		return -1;
	if (realpath(b ? b : "bin", bin) == NULL)
		return -1;
	snprintf(binabs, sizeof(binabs), "%s", bin);
	snprintf(conf, sizeof(conf),
	    "db chinook sqlite:%s\n"
	    "rest /rest/v1/ workers=1 threads=2 db=chinook\n"
	    "fast /fast/v1/ workers=1 threads=2 db=chinook binary=%s/rest "
	    "stmt_timeout_ms=%d\n", dbpath, bin, FAST_MS);
	if (stack_start(&st, conf, "tuned", 1, NULL) < 0)
		return -1;
	up = 1;
	return 0;
}

/* Sends method to /PREFIX/v1/path; 0 when an answer came. */
static int
call(const char *prefix, const char *method, const char *path, const char *body,
    long timeout_ms, struct http_resp *r)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	char url[512];

	snprintf(url, sizeof(url), "%s/%s/v1/%s", st.base, prefix, path);
	return http_do(method, url, body != NULL ? json : NULL, body,
	    body != NULL ? strlen(body) : 0, timeout_ms, r);
}

/* 1 when the body is the JSON error shape with this code (NULL: any). */
static int
json_error(const struct http_resp *r, const char *code)
{
	char want[64];

	if (r->body.data == NULL || strstr(r->body.data, "\"message\"") == NULL)
		return 0;
	if (code == NULL)
		return strstr(r->body.data, "\"code\"") != NULL;
	snprintf(want, sizeof(want), "\"code\":\"%s\"", code);
	return strstr(r->body.data, want) != NULL;
}

/*
 * The embed bomb on the default settings: a JSON 400 54000 (the cap, reached while the
 * body is built) or 503 (the budget), within the budget and a margin, the worker's peak memory
 * bounded, and the worker free for the next request at once.
 */
static void
test_embed_bomb_answered_within_budget(void)
{
	struct http_resp r;
	pid_t pids[MAXPIDS];
	long hwm;
	int n;

	http_resp_init(&r);
	CHECK_INT(call("rest", "GET", BOMB_QUERY, NULL, 60000, &r), 0);
	printf("# embed bomb, default budget: %ld in %.2f s\n", r.status, r.seconds);
	CHECK(r.status == 400 || r.status == 503);
	CHECK(json_error(&r, r.status == 400 ? "54000" : "timeout"));
	CHECK(r.seconds * 1000 < BUDGET_MS + MARGIN_MS);
	n = stack_worker_pids(&st, "rest", pids, MAXPIDS);
	CHECK_INT(n, 1);
	if (n == 1) {
		hwm = stack_proc_kb(pids[0], "VmHWM:");
		printf("# embed bomb: the worker's peak RSS (VmHWM) %ld kB\n", hwm);
		CHECK(hwm > 0);
		if (!stack_under_asan(pids[0]))
			CHECK(hwm < BOMB_HWM_MAX_KB);
	}
	/* Free again at once. */
	CHECK_INT(call("rest", "GET", "artist?artist_id=eq.1", NULL, 10000, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.seconds < 1.0);
	http_resp_free(&r);
}

/*
 * The embed bomb on PostgreSQL: statement_timeout cancels it at the budget (503
 * "timeout"), and the worker answers the next request at once.
 */
static void
test_embed_bomb_pg_cancelled_at_budget(void)
{
	char url[512];
	struct http_resp r;
	pid_t pids[MAXPIDS];

	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/%s", pgs.base, BOMB_QUERY);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 60000, &r), 0);
	printf("# embed bomb on PostgreSQL, default budget: %ld in %.2f s\n", r.status,
	    r.seconds);
	CHECK(r.status == 503 || r.status == 400);
	CHECK(json_error(&r, r.status == 400 ? "54000" : "timeout"));
	CHECK(r.seconds * 1000 < BUDGET_MS + MARGIN_MS);
	if (stack_worker_pids(&pgs, "rest", pids, MAXPIDS) == 1)
		printf("# embed bomb on PostgreSQL: the worker's peak RSS (VmHWM) %ld kB\n",
		    stack_proc_kb(pids[0], "VmHWM:"));
	snprintf(url, sizeof(url), "%s/rest/v1/artist?artist_id=eq.1", pgs.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 10000, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.seconds < 1.0);
	http_resp_free(&r);
}

/*
 * A body past the response cap on PostgreSQL: the statement fails at the cap on the
 * server (400 54000, as SQLite's length limit answers), so that the worker never receives
 * it; it used to receive the whole body and then answer 500.  The "capped" pool has
 * resp_max=262144 and track?select=* is about 700 kB.
 */
static void
test_pg_body_past_cap_refused_before_received(void)
{
	char url[512];
	struct http_resp r;
	pid_t pids[MAXPIDS];
	long before, after;

	http_resp_init(&r);
	if (stack_worker_pids(&pgs, "capped", pids, MAXPIDS) != 1) {
		CHECK(!"one capped worker");
		return;
	}
	before = stack_proc_kb(pids[0], "VmHWM:");
	snprintf(url, sizeof(url), "%s/capped/v1/track?select=*", pgs.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 20000, &r), 0);
	CHECK_INT(r.status, 400);
	CHECK(json_error(&r, "54000"));
	after = stack_proc_kb(pids[0], "VmHWM:");
	printf("# a 700 kB body past a 256 kB cap on PostgreSQL: %ld in %.2f s, the worker's "
	    "peak RSS %ld -> %ld kB\n", r.status, r.seconds, before, after);
	/* A body under the cap is served whole, and the same worker answers at once. */
	snprintf(url, sizeof(url), "%s/capped/v1/track?select=track_id&track_id=lt.4", pgs.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 10000, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"track_id\":3}]") != NULL);
	CHECK(r.seconds < 1.0);
	/* CSV is capped alike (every column and the long ones twice more: about 500 kB). */
	snprintf(url, sizeof(url), "%s/capped/v1/track?select=*,n1:name,c1:composer,n2:name,"
	    "c2:composer", pgs.base);
	{
		const char *h[] = { "Accept: text/csv", NULL };

		CHECK_INT(http_do("GET", url, h, NULL, 0, 20000, &r), 0);
		CHECK_INT(r.status, 400);
		CHECK(json_error(&r, "54000"));
	}
	/* A write whose representation is past the cap (every track with its album's
	 * tracks: several MB): 413, nothing written, and the worker never received it. */
	before = stack_proc_kb(pids[0], "VmHWM:");
	snprintf(url, sizeof(url), "%s/capped/v1/track?track_id=gt.0&select=*,album(*,track(*))",
	    pgs.base);
	{
		const char *h[] = { "Content-Type: application/json",
		    "Prefer: return=representation", NULL };
		const char *patch = "{\"composer\":\"capped-write\"}";

		CHECK_INT(http_do("PATCH", url, h, patch, strlen(patch), 30000, &r), 0);
		CHECK_INT(r.status, 413);
		CHECK(r.body.data != NULL && strstr(r.body.data, "nothing was written") != NULL);
	}
	after = stack_proc_kb(pids[0], "VmHWM:");
	printf("# a PATCH's representation of several MB past a 256 kB cap: %ld, the worker's "
	    "peak RSS %ld -> %ld kB\n", r.status, before, after);
	CHECK(after - before < 2048);
	snprintf(url, sizeof(url), "%s/capped/v1/track?select=track_id&composer=eq.capped-write",
	    pgs.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 10000, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.body.data != NULL && strcmp(r.body.data, "[]") == 0);
	http_resp_free(&r);
}

/*
 * A request's budget spans its statements on PostgreSQL: three statements of 350 ms under
 * a 600 ms budget, each well within it alone, stop at the budget (DB_ETIMEOUT) instead of
 * running 1050 ms; outside a transaction (the pool's pipelined batches) and inside one (a
 * connection held alone).  A new request's budget runs again.
 */
static void
test_pg_request_budget_spans_statements(void)
{
	struct db_opts o;
	struct db *db;
	struct db_stmt *q;
	char err[256];
	long long t0, ms;
	int txn, i, rc = DB_ROW;

	memset(&o, 0, sizeof(o));
	o.stmt_timeout_ms = 600;
	o.pg_conns = 2;
	if (db_open(&db, pg.url, &o, err, sizeof(err)) < 0) {
		harness_fail(__FILE__, __LINE__, "db_open: %s", err);
		return;
	}
	for (txn = 0; txn < 2; txn++) {
		CHECK_INT(db_ready(db), 0);
		t0 = stack_now_ms();
		if (txn)
			CHECK_INT(db_begin(db, DB_TXN_READ), 0);
		for (i = 0; i < 3; i++) {
			if ((q = db_prepare(db, "select pg_sleep(0.35)")) == NULL)
				break;
			rc = db_step(q);
			db_reset(q);
			if (rc != DB_ROW)
				break;
		}
		ms = stack_now_ms() - t0;
		printf("# %s: %d of 3 statements of 350 ms in a 600 ms budget, %lld ms\n",
		    txn ? "in a transaction" : "pipelined", i, ms);
		CHECK_INT(i, 1);
		CHECK_INT(rc, DB_ERROR);
		CHECK_INT(db_errcode(db), DB_ETIMEOUT);
		CHECK(ms < 600 + 400);
		if (txn)
			(void)db_rollback(db);
	}
	/* The next request has a budget of its own. */
	CHECK_INT(db_ready(db), 0);
	q = db_prepare(db, "select pg_sleep(0.35)");
	CHECK(q != NULL);
	if (q != NULL) {
		CHECK_INT(db_step(q), DB_ROW);
		db_reset(q);
	}
	db_deadline_clear(db);
	db_close(db);
}

/* The embed bomb on the short budget: 503 "timeout" in about the budget. */
static void
test_embed_bomb_stops_at_short_budget(void)
{
	struct http_resp r;

	http_resp_init(&r);
	CHECK_INT(call("fast", "GET", BOMB_QUERY, NULL, 60000, &r), 0);
	printf("# embed bomb, %d ms budget: %ld in %.2f s\n", FAST_MS, r.status, r.seconds);
	CHECK_INT(r.status, 503);
	CHECK(json_error(&r, "timeout"));
	CHECK(r.seconds * 1000 >= FAST_MS * 0.8);
	CHECK(r.seconds * 1000 < FAST_MS + MARGIN_MS);
	CHECK_INT(call("fast", "GET", "artist?artist_id=eq.1", NULL, 10000, &r), 0);
	CHECK_INT(r.status, 200);
	http_resp_free(&r);
}

/*
 * A writer holding the writers' queue (the test, standing for a slow or hung writer):
 * another writer answers 503 "timeout" once its budget is spent, a reader is not held,
 * and writes go through once the queue is free.
 */
static void
test_held_writers_queue_answers_503(void)
{
	static const char row[] = "{\"artist_id\":90001,\"name\":\"Queued\"}";
	struct http_resp r;
	char path[200];
	int fd;

	http_resp_init(&r);
	snprintf(path, sizeof(path), "%s-wlock", dbpath);
	if ((fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0644)) < 0) {
		CHECK(!"opened the writers' queue");
		goto out;
	}
	CHECK_INT(flock(fd, LOCK_EX), 0);
	CHECK_INT(call("fast", "POST", "artist", row, 60000, &r), 0);
	printf("# POST behind a held writers' queue: %ld in %.2f s\n", r.status, r.seconds);
	CHECK_INT(r.status, 503);
	CHECK(json_error(&r, "timeout"));
	CHECK(r.seconds * 1000 >= FAST_MS * 0.8);
	CHECK(r.seconds * 1000 < FAST_MS + MARGIN_MS);
	CHECK_INT(call("fast", "GET", "artist?artist_id=eq.90001", NULL, 10000, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.seconds < 1.0);
	CHECK(r.body.data != NULL && strcmp(r.body.data, "[]") == 0);
	CHECK_INT(flock(fd, LOCK_UN), 0);
	close(fd);
	CHECK_INT(call("fast", "POST", "artist", row, 10000, &r), 0);
	CHECK_INT(r.status, 201);
out:
	http_resp_free(&r);
}

/* Milliseconds until the fast pool's one worker is another than old, or -1 after the
 * watchdog's limit and 10 s more. */
static long long
wait_replaced(pid_t old)
{
	long long t0 = stack_now_ms();
	pid_t now[MAXPIDS];

	while (stack_now_ms() - t0 < FAST_MS + GRACE_MS + 10000) {
		if (stack_worker_pids(&st, "fast", now, MAXPIDS) == 1 && now[0] != old)
			return stack_now_ms() - t0;
		(void)usleep(50 * 1000);
	}
	return -1;
}

struct inflight {
	struct http_resp r;
	int rc;
};

static void *
inflight_main(void *arg)
{
	struct inflight *f = arg;

	f->rc = call("fast", "GET", BOMB_QUERY, NULL, 120000, &f->r);
	return NULL;
}

/*
 * A worker stopped in the middle of a request is killed by sluiced's watchdog once the
 * request has run past the budget and the grace, and the pool starts a new one; the
 * request in flight is answered long before nginx's 60 s timeout.
 */
static void
test_hung_worker_replaced(void)
{
	struct inflight f;
	pid_t pids[MAXPIDS];
	long long replaced = -1;
	pthread_t th;
	int n;

	http_resp_init(&f.r);
	f.rc = -1;
	n = stack_worker_pids(&st, "fast", pids, MAXPIDS);
	CHECK_INT(n, 1);
	if (n != 1 || pthread_create(&th, NULL, inflight_main, &f) != 0)
		goto out;
	/* The bomb runs for the whole budget: stop the worker in the middle of it. */
	(void)usleep(FAST_MS / 3 * 1000);
	CHECK_INT(kill(pids[0], SIGSTOP), 0);
	replaced = wait_replaced(pids[0]);
	pthread_join(th, NULL);
	printf("# a worker stopped mid-request: replaced after %lld ms; the request in "
	    "flight got %ld after %.2f s\n", replaced, f.r.status, f.r.seconds);
	CHECK(replaced > 0);
	CHECK(replaced < FAST_MS + GRACE_MS + MARGIN_MS);
	CHECK_INT(f.rc, 0);
	CHECK(f.r.status >= 500);
	CHECK(f.r.seconds < (FAST_MS + GRACE_MS + MARGIN_MS) / 1000.0);
	CHECK_INT(stack_pool_value(&st, "fast", "hung"), 1);
	CHECK_INT(stack_wait_pool(&st, "fast", 10000), 0);
	CHECK_INT(call("fast", "GET", "artist?artist_id=eq.1", NULL, 10000, &f.r), 0);
	CHECK_INT(f.r.status, 200);
out:
	if (replaced < 0 && n == 1)
		(void)kill(pids[0], SIGCONT);
	http_resp_free(&f.r);
}

/* A worker stopped between requests (nginx still sends it requests on its kept
 * connections) is replaced after the same time. */
static void
test_idle_stopped_worker_replaced(void)
{
	pid_t pids[MAXPIDS];
	long long replaced = -1;
	int n;

	CHECK_INT(stack_wait_pool(&st, "fast", 10000), 0);
	n = stack_worker_pids(&st, "fast", pids, MAXPIDS);
	CHECK_INT(n, 1);
	if (n != 1)
		return;
	CHECK_INT(kill(pids[0], SIGSTOP), 0);
	replaced = wait_replaced(pids[0]);
	printf("# a worker stopped between requests: replaced after %lld ms\n", replaced);
	CHECK(replaced > 0);
	CHECK(replaced < FAST_MS + GRACE_MS + MARGIN_MS);
	CHECK_INT(stack_pool_value(&st, "fast", "hung"), 2);
	if (replaced < 0)
		(void)kill(pids[0], SIGCONT);
}

int
main(void)
{
	char conf[8192];

	signal(SIGPIPE, SIG_IGN);
	if (setup() < 0) {
		CHECK(!"the stack started");
		goto out;
	}
	RUN(test_embed_bomb_answered_within_budget);
	RUN(test_embed_bomb_stops_at_short_budget);
	RUN(test_held_writers_queue_answers_503);
	RUN(test_hung_worker_replaced);
	RUN(test_idle_stopped_worker_replaced);
	memset(&pg, 0, sizeof(pg));
	if (pgtmp_start(&pg) < 0 ||
	    stack_sh("%s '%s' >/dev/null", stack_seeder("chinook-seed"), pg.url) != 0) {
		CHECK(!"started and seeded PostgreSQL");
		goto out;
	}
	setenv("SLUICE_DB_CHINOOK", pg.url, 1);
	snprintf(conf, sizeof(conf), "db chinook sqlite:%s\n"
	    "rest /rest/v1/ workers=1 threads=2 db=chinook\n"
	    "capped /capped/v1/ workers=1 threads=1 db=chinook binary=%s/rest "
	    "resp_max=262144\n", dbpath, binabs);
	if (stack_start(&pgs, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"the PostgreSQL stack started");
		goto out;
	}
	pg_up = 1;
	RUN(test_embed_bomb_pg_cancelled_at_budget);
	RUN(test_pg_body_past_cap_refused_before_received);
	RUN(test_pg_request_budget_spans_statements);
out:
	unsetenv("SLUICE_DB_CHINOOK");
	if (pg_up)
		stack_stop(&pgs);
	pgtmp_stop(&pg);
	if (up)
		stack_stop(&st);
	stack_sh("rm -rf %s", dir);
	return harness_done();
}
