/*
 * test_pg_pool: the PostgreSQL connections a worker's threads share (common/db_pg_pool.c),
 * through the real stack (nginx tuned, sluiced, bin/rest with workers=2 threads=8
 * db_conns=2 on a throwaway cluster).
 *
 *   - shares: a burst of concurrent calls of a function that sleeps 50 ms keeps all 16
 *     threads busy, while a sampler counts the rest workers' backends in pg_stat_activity:
 *     never more than workers x db_conns (4), and every answer is the caller's own.
 *   - kill under pipelined writes: 8 clients POST rows with unique markers (return=minimal:
 *     statements outside a transaction, so they ride the pipelines) while a rest worker is
 *     killed with SIGKILL every 1.3 s.  Every POST answered 2xx has its row; no row is
 *     stored twice; every other answer is a JSON error (or no answer).  Never acknowledged
 *     and missing.
 *   - group commit: 16 clients POST new markers, every fourth a repeat of their last: the
 *     writes that meet in a batch commit in one transaction (rows sharing an xmin), and
 *     a repeat in such a group answers 409 alone while the others are stored once each.
 *     Then 16 clients increment 3 rows in random orders through an RPC: groups on the two
 *     connections deadlock now and then and give up at their lock timeout; the sum of
 *     the rows is exactly the number of increments acknowledged, and none fails.
 *   - read segments: 16 clients GET an RPC that answers its backend and transaction
 *     timestamp, every fourth call one that raises: reads that meet in a batch share one
 *     implicit transaction (the same answer), and the failing one answers its own 400
 *     22P02 while every other read answers 200.
 *   - a terminated backend: a request whose statement runs on a backend that is terminated
 *     (pg_terminate_backend, as in a server restart) answers 503 JSON "unavailable"; every
 *     request after it succeeds, and the workers count the reconnects.
 * The group commit's POSTs are counted too: one write each, in fewer batches.
 *   - connections counted: the workers' gauges of their database connections (ctl
 *     status's db_open and db_busy, and the same in ctl status --json) say what the
 *     server sees: idle, one connection open per worker (opened at start) and none busy;
 *     one slow call in flight, exactly one busy; after the bursts, as many open as the
 *     rest workers' backends in pg_stat_activity (more than one per worker, at most
 *     db_conns each); after the workers killed under writes, again as many as the
 *     server's backends: a dead worker's connections count no more.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "chatfix.h"
#include "db.h"
#include "http.h"
#include "killwrites.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define PP_THREADS	8
#define PP_CONNS	2
#define PP_WORKERS	2
#define PP_CLIENTS	16
#define PP_CALLS	12
#define PP_WRITERS	8
#define PP_KILL_MS	1300
#define PP_KILLS	4
#define PP_TIMEOUT_MS	30000

static const char pp_schema[] =
    "CREATE TABLE pk_item (id serial PRIMARY KEY, marker text NOT NULL UNIQUE);\n"
    "CREATE TABLE item (id integer PRIMARY KEY, name text);\n"
    "INSERT INTO item VALUES (1, 'one'), (2, 'two');\n"
    "CREATE FUNCTION slow_echo(n integer) RETURNS integer LANGUAGE sql AS\n"
    "  $$ SELECT n FROM pg_sleep(0.05) $$;\n"
    "CREATE FUNCTION slow_wait(ms integer) RETURNS integer LANGUAGE sql AS\n"
    "  $$ SELECT ms FROM pg_sleep(ms / 1000.0) $$;\n"
    "CREATE TABLE gc_item (id serial PRIMARY KEY, marker text NOT NULL UNIQUE);\n"
    "CREATE TABLE gc_counter (id integer PRIMARY KEY, n integer NOT NULL);\n"
    "INSERT INTO gc_counter SELECT i, 0 FROM generate_series(1, 3) i;\n"
    "CREATE FUNCTION bump(k integer) RETURNS integer LANGUAGE sql AS\n"
    "  $$ UPDATE gc_counter SET n = n + 1 WHERE id = k RETURNING n $$;\n"
    "CREATE FUNCTION stamp(fail boolean) RETURNS text LANGUAGE plpgsql STABLE AS $$\n"
    "BEGIN\n"
    "  IF fail THEN RETURN 'x'::integer; END IF;\n"
    "  RETURN pg_backend_pid() || ' ' || transaction_timestamp();\n"
    "END $$;\n";

/* The rest workers' backends: the workers connect as "sluice"; the sampler's own
 * connection is left out. */
static const char pp_count_sql[] =
    "SELECT count(*) FROM pg_stat_activity WHERE application_name = 'sluice' AND "
    "backend_type = 'client backend' AND pid <> pg_backend_pid()";

static struct pgtmp pp_pg;
static struct stack pp_s;
static int pp_up;

static long pp_open_matches(const char *when);

/* ---- bursts of clients ---- */

/* What a burst's client starts with: the first member of its struct. */
struct pp_client {
	pthread_t tid;
	int id;			/* 1, 2, ... */
};

/* The i-th of an array of structs of size bytes, each starting with a struct pp_client. */
static struct pp_client *
pp_client_at(void *c, size_t size, int i)
{
	return (struct pp_client *)((char *)c + (size_t)i * size);
}

/* Runs n clients of fn, one on each element of c (zeroed here but for its id), and waits
 * for them all.  Returns how many ran. */
static int
pp_clients(void *(*fn)(void *), void *c, size_t size, int n)
{
	struct pp_client *h;
	int i, started = 0;

	for (i = 0; i < n; i++) {
		h = pp_client_at(c, size, i);
		memset(h, 0, size);
		h->id = i + 1;
		if (pthread_create(&h->tid, NULL, fn, h) != 0)
			break;
		started++;
	}
	for (i = 0; i < started; i++)
		pthread_join(pp_client_at(c, size, i)->tid, NULL);
	return started;
}

/* ---- shares ---- */

struct pp_caller {
	struct pp_client h;
	int ok, bad;
};

static void *
pp_caller_run(void *arg)
{
	struct pp_caller *c = arg;
	struct http_resp r;
	char url[256], want[32];
	int i, n;

	http_resp_init(&r);
	for (i = 0; i < PP_CALLS; i++) {
		n = c->h.id * 1000 + i;
		snprintf(url, sizeof(url), "%s/rest/v1/rpc/slow_echo?n=%d", pp_s.base, n);
		snprintf(want, sizeof(want), "%d", n);
		if (http_do("GET", url, NULL, NULL, 0, PP_TIMEOUT_MS, &r) == 0 &&
		    r.status == 200 && r.body.len == strlen(want) &&
		    memcmp(r.body.data, want, r.body.len) == 0)
			c->ok++;
		else
			c->bad++;
	}
	http_resp_free(&r);
	return NULL;
}

struct pp_sampler {
	pthread_t tid;
	struct db *db;
	atomic_int stop;
	int max, samples, bad;
};

static void *
pp_sampler_run(void *arg)
{
	struct pp_sampler *m = arg;
	struct db_stmt *st;
	int n;

	while (!atomic_load(&m->stop)) {
		if ((st = db_prepare(m->db, pp_count_sql)) != NULL && db_step(st) == DB_ROW) {
			n = (int)db_column_int(st, 0);
			if (n > m->max)
				m->max = n;
			m->samples++;
		} else {
			m->bad++;
		}
		if (st != NULL)
			db_reset(st);
		usleep(5000);
	}
	return NULL;
}

static void
test_pg_pool_threads_share_connections(void)
{
	struct pp_caller c[PP_CLIENTS];
	struct pp_sampler m;
	char err[256];
	int i, started = 0, ok = 0, bad = 0;
	long open;

	if (!pp_up) {
		CHECK(!"stack up");
		return;
	}
	memset(&m, 0, sizeof(m));
	if (db_open(&m.db, pp_pg.url, NULL, err, sizeof(err)) < 0) {
		harness_fail(__FILE__, __LINE__, "db_open: %s", err);
		return;
	}
	CHECK_INT(pthread_create(&m.tid, NULL, pp_sampler_run, &m), 0);
	started = pp_clients(pp_caller_run, c, sizeof(c[0]), PP_CLIENTS);
	CHECK_INT(started, PP_CLIENTS);
	for (i = 0; i < started; i++) {
		ok += c[i].ok;
		bad += c[i].bad;
	}
	atomic_store(&m.stop, 1);
	pthread_join(m.tid, NULL);
	db_close(m.db);
	printf("  %d calls by %d clients: %d right, %d wrong; %d samples, at most %d backends "
	    "for %d workers x %d threads (db_conns=%d)\n", PP_CLIENTS * PP_CALLS, PP_CLIENTS, ok,
	    bad, m.samples, m.max, PP_WORKERS, PP_THREADS, PP_CONNS);
	CHECK_INT(bad, 0);
	CHECK_INT(ok, PP_CLIENTS * PP_CALLS);
	CHECK_INT(m.bad, 0);
	CHECK(m.samples > 10);
	/* Busy workers opened more than the one backend each holds while idle, and never
	 * more than their share. */
	CHECK(m.max > PP_WORKERS);
	CHECK(m.max <= PP_WORKERS * PP_CONNS);
	/* The workers count what the server sees: more than one a worker now. */
	open = pp_open_matches("after the bursts");
	CHECK(open > PP_WORKERS && open <= PP_WORKERS * PP_CONNS);
}

/* ---- connections counted ---- */

/* The rest workers' backends as the server counts them (pp_count_sql), -1 on failure. */
static long
pp_backends(void)
{
	return (long)chatfix_int(pp_pg.url, pp_count_sql, NULL);
}

/* The rest pool's "db" member of ctl status --json: connections_open in *open and
 * pg_connections_busy in *busy.  0, or -1. */
static int
pp_db_json(long *open, long *busy)
{
	struct buf out;
	cJSON *root = NULL, *p;
	const cJSON *o, *b;
	int ret = -1;

	buf_init(&out, 0);
	if (stack_ctl(&pp_s, &out, "status --json") == 0 && out.data != NULL)
		root = cJSON_Parse(out.data);
	cJSON_ArrayForEach(p, cJSON_GetObjectItem(root, "pools")) {
		if (!cJSON_IsString(cJSON_GetObjectItem(p, "name")) ||
		    strcmp(cJSON_GetObjectItem(p, "name")->valuestring, "rest") != 0)
			continue;
		o = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "db"), "connections_open");
		b = cJSON_GetObjectItem(cJSON_GetObjectItem(p, "db"), "pg_connections_busy");
		if (cJSON_IsNumber(o) && cJSON_IsNumber(b)) {
			*open = (long)o->valuedouble;
			*busy = (long)b->valuedouble;
			ret = 0;
		}
	}
	cJSON_Delete(root);
	buf_free(&out);
	return ret;
}

/*
 * Waits up to 3 s for the workers' count of open connections (ctl status's db_open) to
 * equal the server's count of their backends (a killed worker's backends leave the server
 * a moment after it dies; a terminated one's connection is noticed at its next use).
 * Prints and checks them, and returns the count.
 */
static long
pp_open_matches(const char *when)
{
	long open = -1, backends = -2;
	int i;

	for (i = 0; i < 60; i++) {
		open = stack_pool_value(&pp_s, "rest", "db_open");
		backends = pp_backends();
		if (open == backends)
			break;
		usleep(50000);
	}
	printf("  %s: %ld connections open by the workers' count, %ld backends by the "
	    "server's\n", when, open, backends);
	CHECK_INT(open, backends);
	CHECK_INT(stack_pool_value(&pp_s, "rest", "db_busy"), 0);
	return open;
}

struct pp_slow {
	pthread_t tid;
	struct http_resp r;
	int rc;
	long long ms;
	int wait_ms;
};

/* Waits up to 2 s for one backend of the workers to be in pg_sleep (a slow call
 * started); 1 when it is, else 0. */
static int
pp_sleep_started(void)
{
	int i;

	for (i = 0; i < 100; i++) {
		if (chatfix_int(pp_pg.url, "SELECT count(*) FROM pg_stat_activity WHERE "
		    "application_name = 'sluice' AND wait_event = 'PgSleep'", NULL) == 1)
			return 1;
		usleep(20000);
	}
	return 0;
}

static void *
pp_slow_run(void *arg)
{
	struct pp_slow *s = arg;
	char url[256];
	long long t0 = stack_now_ms();

	snprintf(url, sizeof(url), "%s/rest/v1/rpc/slow_wait?ms=%d", pp_s.base, s->wait_ms);
	s->rc = http_do("GET", url, NULL, NULL, 0, PP_TIMEOUT_MS, &s->r);
	s->ms = stack_now_ms() - t0;
	return NULL;
}

/* Idle: one connection a worker (opened at start), none busy; one slow call in flight:
 * exactly one busy, on a connection already open. */
static void
test_pg_pool_connections_counted(void)
{
	struct pp_slow s;
	long open = -1, busy = -1;
	int i;

	if (!pp_up) {
		CHECK(!"stack up");
		return;
	}
	CHECK_INT(pp_open_matches("idle"), PP_WORKERS);
	CHECK_INT(pp_db_json(&open, &busy), 0);
	CHECK_INT(open, PP_WORKERS);
	CHECK_INT(busy, 0);
	memset(&s, 0, sizeof(s));
	http_resp_init(&s.r);
	s.wait_ms = 1500;
	CHECK_INT(pthread_create(&s.tid, NULL, pp_slow_run, &s), 0);
	CHECK(pp_sleep_started());
	CHECK_INT(stack_pool_value(&pp_s, "rest", "db_busy"), 1);
	CHECK_INT(stack_pool_value(&pp_s, "rest", "db_open"), PP_WORKERS);
	CHECK_INT(pp_db_json(&open, &busy), 0);
	CHECK_INT(busy, 1);
	CHECK_INT(open, PP_WORKERS);
	pthread_join(s.tid, NULL);
	CHECK_INT(s.rc, 0);
	CHECK_INT(s.r.status, 200);
	http_resp_free(&s.r);
	/* Answered: the connection is let go (the worker counts it a moment after the
	 * client has its answer). */
	for (i = 0; i < 50 && stack_pool_value(&pp_s, "rest", "db_busy") != 0; i++)
		usleep(20000);
	CHECK_INT(stack_pool_value(&pp_s, "rest", "db_busy"), 0);
	CHECK_INT(stack_pool_value(&pp_s, "rest", "db_open"), PP_WORKERS);
}

/* ---- kill under pipelined writes ---- */

/* A POST of a row marked "pk-ID" (killwrites.h). */
static void
pp_post(struct kw_write *w)
{
	static const char *const hdr[] = { "Content-Type: application/json", NULL };
	struct http_resp r;
	char url[256], body[96];

	snprintf(url, sizeof(url), "%s/rest/v1/pk_item", pp_s.base);
	snprintf(body, sizeof(body), "{\"marker\":\"pk-%u\"}", w->id);
	http_resp_init(&r);
	if (http_do("POST", url, hdr, body, strlen(body), PP_TIMEOUT_MS, &r) == 0) {
		w->status = (short)r.status;
		w->json = r.status >= 300 && http_json_code(&r, NULL);
	}
	http_resp_free(&r);
}

static void
test_pg_pool_kill_under_pipelined_writes(void)
{
	struct kw_result res;

	if (!pp_up) {
		CHECK(!"stack up");
		return;
	}
	if (kw_run(&pp_s, "rest", PP_WRITERS, PP_KILLS, PP_KILL_MS, pp_post, pp_pg.url,
	    "SELECT count(*) FROM pk_item WHERE marker = $1", "pk-",
	    "SELECT count(*) FROM pk_item", &res) < 0)
		return;
	CHECK_INT(res.kills, PP_KILLS);
	kw_check(&res, "POSTs", 101);
	/* The killed workers' connections count no more. */
	CHECK(stack_wait_pool(&pp_s, "rest", 10000) == 0);
	(void)pp_open_matches("after the kills");
}

/* ---- group commit ---- */

#define PP_GC_CLIENTS	16
#define PP_GC_POSTS	48	/* each client's; every fourth repeats the one before */
#define PP_GC_BUMPS	60	/* each client's, over 3 rows */

struct pp_gc {
	struct pp_client h;
	int created, conflict, other, nonjson;
};

/* Client c's POSTs of markers gc-ID-N: three new markers, then the third again (a unique
 * violation riding in the same batches as the others' new rows). */
static void *
pp_gc_post_run(void *arg)
{
	static const char *const hdr[] = { "Content-Type: application/json", NULL };
	struct pp_gc *c = arg;
	struct http_resp r;
	char url[256], body[96];
	int i, n = 0;

	snprintf(url, sizeof(url), "%s/rest/v1/gc_item", pp_s.base);
	http_resp_init(&r);
	for (i = 0; i < PP_GC_POSTS; i++) {
		if (i % 4 != 3)
			n++;
		snprintf(body, sizeof(body), "{\"marker\":\"gc-%d-%d\"}", c->h.id, n);
		if (http_do("POST", url, hdr, body, strlen(body), PP_TIMEOUT_MS, &r) != 0) {
			c->other++;
			continue;
		}
		if (r.status >= 300 && !http_json_code(&r, NULL))
			c->nonjson++;
		if (r.status == 201 && i % 4 != 3)
			c->created++;
		else if (r.status == 409 && i % 4 == 3)
			c->conflict += http_json_code(&r, "23505");
		else
			c->other++;
	}
	http_resp_free(&r);
	return NULL;
}

/* Client c's calls of bump() on rows 1..3 in a random order. */
static void *
pp_gc_bump_run(void *arg)
{
	static const char *const hdr[] = { "Content-Type: application/json", NULL };
	struct pp_gc *c = arg;
	struct http_resp r;
	char url[256], body[32];
	unsigned seed = (unsigned)c->h.id * 7919u;
	int i;

	snprintf(url, sizeof(url), "%s/rest/v1/rpc/bump", pp_s.base);
	http_resp_init(&r);
	for (i = 0; i < PP_GC_BUMPS; i++) {
		snprintf(body, sizeof(body), "{\"k\":%d}", 1 + rand_r(&seed) % 3);
		if (http_do("POST", url, hdr, body, strlen(body), PP_TIMEOUT_MS, &r) == 0 &&
		    r.status == 200)
			c->created++;
		else
			c->other++;
	}
	http_resp_free(&r);
	return NULL;
}

/* Runs n clients of fn, summing what they counted into *sum.  Returns how many ran. */
static int
pp_gc_clients(void *(*fn)(void *), struct pp_gc *c, int n, struct pp_gc *sum)
{
	int i, started = pp_clients(fn, c, sizeof(c[0]), n);

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < started; i++) {
		sum->created += c[i].created;
		sum->conflict += c[i].conflict;
		sum->other += c[i].other;
		sum->nonjson += c[i].nonjson;
	}
	return started;
}

/*
 * Writes outside a transaction that meet in a batch commit together (one transaction,
 * so their rows share an xmin), and a write that fails in such a group fails alone: every
 * new marker is acknowledged 201 and stored once, every repeated one answered 409 with
 * the server's 23505 and stored no second time, nothing else answered.
 */
static void
test_pg_pool_group_commit_failing_write_fails_alone(void)
{
	struct pp_gc c[PP_GC_CLIENTS], sum;
	long long rows, markers, xids;
	long writes0, batches0, writes, batches;
	int started;

	if (!pp_up) {
		CHECK(!"stack up");
		return;
	}
	writes0 = stack_pool_value(&pp_s, "rest", "commit_writes");
	batches0 = stack_pool_value(&pp_s, "rest", "commits");
	started = pp_gc_clients(pp_gc_post_run, c, PP_GC_CLIENTS, &sum);
	CHECK_INT(started, PP_GC_CLIENTS);
	rows = chatfix_int(pp_pg.url, "SELECT count(*) FROM gc_item", NULL);
	markers = chatfix_int(pp_pg.url, "SELECT count(DISTINCT marker) FROM gc_item", NULL);
	xids = chatfix_int(pp_pg.url, "SELECT count(DISTINCT xmin::text) FROM gc_item", NULL);
	printf("  %d clients: %d rows created, %d repeats answered 409, %d other answers; "
	    "%lld rows stored by %lld transactions\n", started, sum.created, sum.conflict,
	    sum.other, rows, xids);
	CHECK_INT(sum.created, PP_GC_CLIENTS * PP_GC_POSTS / 4 * 3);
	CHECK_INT(sum.conflict, PP_GC_CLIENTS * PP_GC_POSTS / 4);
	CHECK_INT(sum.other, 0);
	CHECK_INT(sum.nonjson, 0);
	CHECK_INT(rows, sum.created);
	CHECK_INT(markers, rows);
	/* Some writes were committed together. */
	CHECK(xids > 0 && xids < rows);
	/* The workers counted them (common/metrics.h): every POST one write sent in a
	 * batch (counted as the batch is taken, before any answer), fewer batches than
	 * writes. */
	writes = stack_pool_value(&pp_s, "rest", "commit_writes") - writes0;
	batches = stack_pool_value(&pp_s, "rest", "commits") - batches0;
	printf("  counted: %ld writes in %ld group commits\n", writes, batches);
	CHECK(writes0 >= 0 && batches0 >= 0);
	CHECK_INT(writes, PP_GC_CLIENTS * PP_GC_POSTS);
	CHECK(batches >= 1 && batches < writes);
}

/* The lines of the server's log that hold what. */
static int
pp_log_count(const char *what)
{
	char path[128], line[1024];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/server.log", pp_pg.dir);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		n += strstr(line, what) != NULL;
	fclose(f);
	return n;
}

/*
 * Groups that update the same rows in different orders on different connections wait
 * for each other (a deadlock, until the server's lock wait runs out for a group and it
 * rolls back, to run again one write at a time): every increment acknowledged is counted
 * once, none is lost or doubled, and none fails.
 */
static void
test_pg_pool_group_commit_contended_updates_exact(void)
{
	struct pp_gc c[PP_GC_CLIENTS], sum;
	long long total;
	int started, before;

	if (!pp_up) {
		CHECK(!"stack up");
		return;
	}
	before = pp_log_count("lock timeout");
	started = pp_gc_clients(pp_gc_bump_run, c, PP_GC_CLIENTS, &sum);
	CHECK_INT(started, PP_GC_CLIENTS);
	total = chatfix_int(pp_pg.url, "SELECT sum(n) FROM gc_counter", NULL);
	printf("  %d clients: %d increments acknowledged, %d failed; the rows sum to %lld; "
	    "%d groups gave up a lock wait and ran again alone\n", started, sum.created,
	    sum.other, total, pp_log_count("lock timeout") - before);
	CHECK_INT(sum.created, PP_GC_CLIENTS * PP_GC_BUMPS);
	CHECK_INT(sum.other, 0);
	CHECK_INT(total, sum.created);
}

/* ---- read segments ---- */

#define PP_RS_CLIENTS	16
#define PP_RS_GETS	48	/* each client's; every fourth fails */
#define PP_RS_ANSWER	64

struct pp_rs {
	struct pp_client h;
	int ok, failed, other;
	char answers[PP_RS_GETS][PP_RS_ANSWER];	/* the successful ones, ok of them */
};

/* Client c's GETs of stamp(): the backend and transaction each ran in, and every fourth
 * one a statement that fails (22P02), riding in the same batches as the others. */
static void *
pp_rs_run(void *arg)
{
	struct pp_rs *c = arg;
	struct http_resp r;
	char url[256];
	int i, fail;

	http_resp_init(&r);
	for (i = 0; i < PP_RS_GETS; i++) {
		fail = i % 4 == 3;
		snprintf(url, sizeof(url), "%s/rest/v1/rpc/stamp?fail=%s", pp_s.base,
		    fail ? "true" : "false");
		if (http_do("GET", url, NULL, NULL, 0, PP_TIMEOUT_MS, &r) != 0)
			c->other++;
		else if (fail && r.status == 400 && http_json_code(&r, "22P02"))
			c->failed++;
		else if (!fail && r.status == 200 && r.body.len > 2 &&
		    r.body.len < PP_RS_ANSWER) {
			memcpy(c->answers[c->ok], r.body.data, r.body.len);
			c->answers[c->ok++][r.body.len] = '\0';
		} else
			c->other++;
	}
	http_resp_free(&r);
	return NULL;
}

static int
pp_strcmp(const void *a, const void *b)
{
	return strcmp(a, b);
}

/*
 * Reads outside a transaction that meet in a batch share one Sync, one implicit
 * transaction (answers from one backend with one transaction timestamp), and a read that
 * fails there fails alone: every failing call is answered 400 with its own 22P02 and every
 * other call 200 with its own answer, none with the error of the failed one (which aborts
 * the statements after it in the segment: they run again, each alone).
 */
static void
test_pg_pool_read_segments_failing_read_fails_alone(void)
{
	static struct pp_rs c[PP_RS_CLIENTS];
	static char all[PP_RS_CLIENTS * PP_RS_GETS][PP_RS_ANSWER];
	int i, k, n = 0, started, ok = 0, failed = 0, other = 0, shared = 0;

	if (!pp_up) {
		CHECK(!"stack up");
		return;
	}
	started = pp_clients(pp_rs_run, c, sizeof(c[0]), PP_RS_CLIENTS);
	for (i = 0; i < started; i++) {
		ok += c[i].ok;
		failed += c[i].failed;
		other += c[i].other;
		for (k = 0; k < c[i].ok; k++)
			memcpy(all[n++], c[i].answers[k], PP_RS_ANSWER);
	}
	qsort(all, (size_t)n, PP_RS_ANSWER, pp_strcmp);
	for (i = 1; i < n; i++)
		shared += strcmp(all[i - 1], all[i]) == 0;
	printf("  %d clients: %d reads answered, %d failing ones answered 22P02, %d other "
	    "answers; %d reads shared a transaction with the one before\n", started, ok,
	    failed, other, shared);
	CHECK_INT(started, PP_RS_CLIENTS);
	CHECK_INT(ok, PP_RS_CLIENTS * PP_RS_GETS / 4 * 3);
	CHECK_INT(failed, PP_RS_CLIENTS * PP_RS_GETS / 4);
	CHECK_INT(other, 0);
	/* Some reads rode one segment. */
	CHECK(shared > 0);
}

/* ---- a terminated backend ---- */

static void
test_pg_pool_terminated_backend_503_then_success(void)
{
	struct pp_slow s;
	struct http_resp r;
	char url[256], started[32];
	int i, ok = 0;
	int64_t killed;
	long reconnects0 = stack_pool_value(&pp_s, "rest", "reconnects");

	if (!pp_up) {
		CHECK(!"stack up");
		return;
	}
	memset(&s, 0, sizeof(s));
	http_resp_init(&s.r);
	http_resp_init(&r);
	s.wait_ms = 5000;
	CHECK_INT(pthread_create(&s.tid, NULL, pp_slow_run, &s), 0);
	/* The slow statement has started (its backend is in pg_sleep). */
	CHECK(pp_sleep_started());
	/* Every backend of the workers goes, the busy one and the idle ones. */
	snprintf(started, sizeof(started), "%lld", (long long)chatfix_int(pp_pg.url,
	    "SELECT (extract(epoch FROM clock_timestamp()) * 1000000)::bigint", NULL));
	killed = chatfix_int(pp_pg.url, "SELECT count(pg_terminate_backend(pid)) FROM "
	    "pg_stat_activity WHERE application_name = 'sluice' AND backend_type = "
	    "'client backend' AND pid <> pg_backend_pid()", NULL);
	pthread_join(s.tid, NULL);
	printf("  %lld backends terminated; the request caught answered %d in %lld ms\n",
	    (long long)killed, (int)s.r.status, s.ms);
	CHECK(killed >= 1);
	CHECK_INT(s.rc, 0);
	CHECK_INT(s.r.status, 503);
	CHECK(http_json_code(&s.r, "unavailable"));
	CHECK(s.ms < 4000);
	/* pg_terminate_backend() only signals: a backend may still be on its way out, its
	 * socket open, when a thread takes its connection (a request caught by the restart,
	 * answered 503 like the one above).  Once they are gone, every request succeeds on
	 * connections opened afresh: a dead connection is never handed out. */
	for (i = 0; i < 200; i++) {
		if (chatfix_int(pp_pg.url, "SELECT count(*) FROM pg_stat_activity WHERE "
		    "application_name = 'sluice' AND backend_start < "
		    "to_timestamp($1::bigint / 1000000.0)", started) == 0)
			break;
		usleep(10000);
	}
	CHECK(i < 200);
	for (i = 0; i < 40; i++) {
		snprintf(url, sizeof(url), "%s/rest/v1/item?select=id&order=id", pp_s.base);
		if (http_do("GET", url, NULL, NULL, 0, PP_TIMEOUT_MS, &r) == 0 && r.status == 200)
			ok++;
	}
	CHECK_INT(ok, 40);
	/* The connections lost were opened anew, and counted. */
	CHECK(stack_pool_value(&pp_s, "rest", "reconnects") - reconnects0 >= 1);
	printf("  counted: %ld reconnects\n", stack_pool_value(&pp_s, "rest", "reconnects") -
	    reconnects0);
	http_resp_free(&s.r);
	http_resp_free(&r);
}

int
main(void)
{
	char lines[256];

	if (pgtmp_start_conns(&pp_pg, 40) == 0 && chatfix_exec(pp_pg.url, pp_schema) == 0) {
		setenv("SLUICE_DB_MAIN", pp_pg.url, 1);
		snprintf(lines, sizeof(lines), "db main sqlite:/nonexistent.db\n"
		    "rest /rest/v1/ workers=%d threads=%d db=main db_conns=%d\n", PP_WORKERS,
		    PP_THREADS, PP_CONNS);
		pp_up = stack_start(&pp_s, lines, "tuned", 2, NULL) == 0 &&
		    stack_wait_pool(&pp_s, "rest", 10000) == 0;
		unsetenv("SLUICE_DB_MAIN");
	}
	RUN(test_pg_pool_connections_counted);
	RUN(test_pg_pool_threads_share_connections);
	RUN(test_pg_pool_kill_under_pipelined_writes);
	RUN(test_pg_pool_group_commit_failing_write_fails_alone);
	RUN(test_pg_pool_group_commit_contended_updates_exact);
	RUN(test_pg_pool_read_segments_failing_read_fails_alone);
	RUN(test_pg_pool_terminated_backend_503_then_success);
	if (pp_up)
		stack_stop(&pp_s);
	pgtmp_stop(&pp_pg);
	return harness_done();
}
