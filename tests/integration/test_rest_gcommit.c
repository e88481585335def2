/*
 * test_rest_gcommit: the rest endpoint's SQLite writes group-committed (apps/rest/
 * commit.c, common/gcommit.h), on the real stack (nginx, sluiced, bin/rest) and a real
 * SQLite file with synchronous=FULL.
 *
 * The number of transactions is read from the database's own WAL file: every COMMIT
 * appends frames, the last of which is a commit frame (its "database size" field is
 * non-zero), and with synchronous=FULL each commit is one fsync of the WAL.  Counting the
 * commit frames that a burst of POSTs appended is an observable independent of sluice's
 * code.
 *
 *   - test_rest_gcommit_batches: 16 clients POST 240 rows at once, one in eight a row
 *     that breaks a CHECK (400 23514) and half of them with return=representation: every
 *     good row 201 and stored, its representation its own row, every bad one answered alone
 *     and not stored, and fewer commits than writes.
 *   - test_rest_gcommit_worker_killed: clients POST while the worker is killed (SIGKILL)
 *     three times: every POST answered 201 is in the database afterwards (nothing
 *     acknowledged is lost); the others were answered with an error or not at all.
 *   - test_rest_gcommit_slow_patch_bounded (hardening issue: "one slow PATCH with
 *     return=representation blocks every other writer"): a PATCH whose trigger runs for
 *     many seconds, with a 1 s statement budget, and an unrelated POST sent meanwhile: the
 *     PATCH is interrupted at its budget and undone (503), the POST is answered 201 within
 *     its own budget.
 *   - test_rest_gcommit_write_budget ("a writer held hostage"): with 10 s request budgets,
 *     slow PATCHes with return=representation are undone at their time in the writers'
 *     lock (sqlite_write_ms, 250 ms) and answered 503 with the JSON error body; an insert
 *     sent beside one is answered 201 within 600 ms; so is one sent beside a PATCH whose
 *     representation embeds 1000000 rows (503, or 413 had it met the response cap first);
 *     nothing of the PATCHes is stored.
 *   - test_records_gcommit_batches: the records API (bin/records) writes through the same
 *     group commit: 16 clients sign up 96 users at once, one in eight with an e-mail
 *     address already taken (400, alone): every other one stored, fewer commits than
 *     writes.
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

#define GC_CLIENTS	16
#define GC_BUDGET_MS	1000

static char gc_db[128];
static struct stack gc_stack;
static int gc_up;

static const char gc_schema[] =
    "create table item (id integer primary key, name text not null,\n"
    "  n integer not null check (n >= 0));\n"
    "create table slow (id integer primary key, v integer);\n"
    "insert into slow values (1, 0);\n"
    /* Burns CPU for many seconds per updated row: the slow write. */
    "create trigger slow_burn after update on slow begin\n"
    "  select count(*) from (with recursive c(x) as (select 1 union all select x + 1\n"
    "  from c where x < 400000000) select x from c);\n"
    "end;\n";

static int
gc_start(void)
{
	struct db *db;
	char url[160], conf[512], err[256];

	signal(SIGPIPE, SIG_IGN);
	snprintf(gc_db, sizeof(gc_db), "/tmp/sluice-gcommit-%d.db", (int)getpid());
	stack_sh("rm -f %s %s-wal %s-shm %s-wlock", gc_db, gc_db, gc_db, gc_db);
	snprintf(url, sizeof(url), "sqlite:%s", gc_db);
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s\n", err);
		return -1;
	}
	if (db_exec(db, gc_schema) < 0) {
		fprintf(stderr, "schema: %s\n", db_errmsg(db));
		db_close(db);
		return -1;
	}
	db_close(db);
	snprintf(conf, sizeof(conf), "db lite %s\nrest /rest/v1/ workers=1 threads=8 db=lite "
	    "stmt_timeout_ms=%d\n", url, GC_BUDGET_MS);
	if (stack_start(&gc_stack, conf, "tuned", 1, NULL) < 0)
		return -1;
	gc_up = 1;
	return 0;
}

static void
gc_stop(void)
{
	if (gc_up)
		stack_stop(&gc_stack);
	gc_up = 0;
	stack_sh("rm -f %s %s-wal %s-shm %s-wlock", gc_db, gc_db, gc_db, gc_db);
}

static uint32_t
gc_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The commit frames in dbpath's WAL file now (those whose salts match the header's: the valid
 * ones), and the header's checkpoint sequence number (it changes when the WAL restarts
 * from the top).  Returns 0, or -1 when the WAL cannot be read.
 */
static int
gc_wal_commits(const char *dbpath, long *commits, uint32_t *seq)
{
	unsigned char hdr[32], fh[24];
	char path[160];
	uint32_t psize;
	FILE *f;

	*commits = 0;
	snprintf(path, sizeof(path), "%s-wal", dbpath);
	if ((f = fopen(path, "rb")) == NULL)
		return -1;
	if (fread(hdr, 1, sizeof(hdr), f) != sizeof(hdr)) {
		fclose(f);
		*seq = 0;
		return 0;	/* an empty WAL: nothing committed since the last checkpoint */
	}
	psize = gc_be32(hdr + 8);
	*seq = gc_be32(hdr + 12);
	while (fread(fh, 1, sizeof(fh), f) == sizeof(fh)) {
		if (memcmp(fh + 8, hdr + 16, 8) != 0)
			break;
		if (gc_be32(fh + 4) != 0)
			(*commits)++;
		if (fseek(f, (long)psize, SEEK_CUR) != 0)
			break;
	}
	fclose(f);
	return 0;
}

/* The rows of item with id, read directly from the file; -1 on failure. */
static long
gc_stored(long id)
{
	static struct db *db;
	struct db_stmt *st;
	char url[160], err[200];
	long n = -1;

	if (id < 0) {
		db_close(db);
		db = NULL;
		return 0;
	}
	snprintf(url, sizeof(url), "sqlite:%s", gc_db);
	if (db == NULL && db_open(&db, url, NULL, err, sizeof(err)) < 0)
		return -1;
	if ((st = db_prepare(db, "select count(*) from item where id = $1")) == NULL)
		return -1;
	db_bind_int(st, 1, id);
	if (db_step(st) == DB_ROW)
		n = (long)db_column_int(st, 0);
	db_reset(st);
	return n;
}

/* One client: POSTs ids first, first + step, ... below last. */
struct gc_client {
	long first, step, last;
	int bad_every;		/* every bad_every-th id breaks the CHECK (0: none) */
	volatile int *stop;	/* stop early when set (may be NULL) */
	long *status;		/* per id: the answer's status (0: not sent, -1: no answer) */
	int *rep_ok;		/* per id: 1 the representation was the row, -1 not */
	int *json_err;		/* per id: 1 an error answer had the JSON error shape */
	pthread_t tid;
};

static void *
gc_client_run(void *arg)
{
	static const char *const hdr_min[] = { "Content-Type: application/json", NULL };
	static const char *const hdr_rep[] = { "Content-Type: application/json",
	    "Prefer: return=representation", NULL };
	struct gc_client *c = arg;
	struct http_resp r;
	char url[128], body[128], want[160];
	long id;

	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/item", gc_stack.base);
	for (id = c->first; id < c->last; id += c->step) {
		int bad = c->bad_every > 0 && id % c->bad_every == 0, rep = id % 2 == 0;

		if (c->stop != NULL && *c->stop)
			break;
		snprintf(body, sizeof(body), "{\"id\":%ld,\"name\":\"item %ld\",\"n\":%d}", id, id,
		    bad ? -1 : (int)(id % 100));
		c->status[id] = -1;
		if (http_do("POST", url, rep ? hdr_rep : hdr_min, body, strlen(body), 30000,
		    &r) < 0)
			continue;
		c->status[id] = r.status;
		if (r.status == 201 && rep) {
			snprintf(want, sizeof(want), "[%s]", body);
			c->rep_ok[id] = r.body.data != NULL && strcmp(r.body.data, want) == 0 ? 1 :
			    -1;
		}
		if (r.status >= 400)
			c->json_err[id] = r.body.data != NULL &&
			    strncmp(r.body.data, "{\"code\":", 8) == 0;
	}
	http_resp_free(&r);
	return NULL;
}

static void
test_rest_gcommit_batches(void)
{
	enum { N = 240, FIRST = 1000, BAD = 8 };
	static long status[FIRST + N];
	static int rep_ok[FIRST + N], json_err[FIRST + N];
	struct gc_client c[GC_CLIENTS];
	long c0, c1, good = 0, bad = 0, id;
	uint32_t s0, s1;
	int i;

	if (!gc_up)
		SKIP("no stack");
	CHECK_INT(gc_wal_commits(gc_db, &c0, &s0), 0);
	for (i = 0; i < GC_CLIENTS; i++) {
		c[i] = (struct gc_client){ FIRST + i, GC_CLIENTS, FIRST + N, BAD, NULL, status,
		    rep_ok, json_err, 0 };
		pthread_create(&c[i].tid, NULL, gc_client_run, &c[i]);
	}
	for (i = 0; i < GC_CLIENTS; i++)
		pthread_join(c[i].tid, NULL);
	CHECK_INT(gc_wal_commits(gc_db, &c1, &s1), 0);
	for (id = FIRST; id < FIRST + N; id++) {
		if (id % BAD == 0) {
			bad++;
			if (status[id] != 400 || !json_err[id] || gc_stored(id) != 0)
				harness_fail(__FILE__, __LINE__, "bad row %ld: status %ld, stored %ld",
				    id, status[id], gc_stored(id));
			continue;
		}
		good++;
		if (status[id] != 201 || gc_stored(id) != 1 || (id % 2 == 0 && rep_ok[id] != 1))
			harness_fail(__FILE__, __LINE__, "row %ld: status %ld, stored %ld, "
			    "representation %d", id, status[id], gc_stored(id), rep_ok[id]);
	}
	gc_stored(-1);
	printf("  %ld writes (%ld good, %ld refused) from %d clients: %ld commits "
	    "(WAL commit frames)\n", good + bad, good, bad, GC_CLIENTS, c1 - c0);
	/* The WAL did not start over in between (a checkpoint and restart would make the
	 * count meaningless). */
	CHECK(s0 == s1);
	CHECK(c1 - c0 >= 1);
	CHECK(c1 - c0 < good);
}

struct gc_killer {
	volatile int *stop;
	int kills;
	pthread_t tid;
};

static void *
gc_killer_run(void *arg)
{
	struct gc_killer *k = arg;
	pid_t pids[4];
	int n, round;

	for (round = 0; round < 3; round++) {
		usleep(round == 0 ? 300000 : 1500000);
		n = stack_worker_pids(&gc_stack, "rest", pids, 4);
		if (n > 0 && kill(pids[0], SIGKILL) == 0)
			k->kills++;
	}
	usleep(1500000);
	*k->stop = 1;
	return NULL;
}

static void
test_rest_gcommit_worker_killed(void)
{
	enum { N = 200000, FIRST = 100000 };
	long *status = calloc(FIRST + N, sizeof(long));
	int *rep_ok = calloc(FIRST + N, sizeof(int));
	int *json_err = calloc(FIRST + N, sizeof(int));
	struct gc_client c[GC_CLIENTS];
	struct gc_killer k;
	volatile int stop = 0;
	long acked = 0, lost = 0, errors = 0, unanswered = 0, failed_present = 0, id;
	int i;

	if (!gc_up || status == NULL || rep_ok == NULL || json_err == NULL) {
		free(status);
		free(rep_ok);
		free(json_err);
		SKIP("no stack");
	}
	for (i = 0; i < GC_CLIENTS; i++) {
		c[i] = (struct gc_client){ FIRST + i, GC_CLIENTS, FIRST + N, 0, &stop, status,
		    rep_ok, json_err, 0 };
		pthread_create(&c[i].tid, NULL, gc_client_run, &c[i]);
	}
	k = (struct gc_killer){ &stop, 0, 0 };
	pthread_create(&k.tid, NULL, gc_killer_run, &k);
	pthread_join(k.tid, NULL);
	for (i = 0; i < GC_CLIENTS; i++)
		pthread_join(c[i].tid, NULL);
	CHECK_INT(k.kills, 3);
	CHECK_INT(stack_wait_pool(&gc_stack, "rest", 10000), 0);
	for (id = FIRST; id < FIRST + N; id++) {
		long st = status[id];

		if (st <= 0) {
			/* Sent and never answered (-1: a transport error), or never sent (0):
			 * either way not acknowledged. */
			if (st < 0)
				unanswered++;
			continue;
		}
		if (st == 201) {
			acked++;
			if (gc_stored(id) != 1) {
				lost++;
				harness_fail(__FILE__, __LINE__, "row %ld answered 201 but not stored",
				    id);
			}
			if (id % 2 == 0 && rep_ok[id] != 1)
				harness_fail(__FILE__, __LINE__, "row %ld: wrong representation", id);
			continue;
		}
		errors++;
		if (gc_stored(id) == 1)
			failed_present++;
	}
	gc_stored(-1);
	printf("  3 kills: %ld acknowledged (all stored: %ld lost), %ld answered with an error "
	    "(%ld of them stored all the same: the worker died after COMMIT), %ld sent and "
	    "never answered\n", acked, lost, errors, failed_present, unanswered);
	CHECK(acked > 0);
	CHECK_INT(lost, 0);
	free(status);
	free(rep_ok);
	free(json_err);
}

struct gc_req {
	const char *method, *path, *body;
	const char *const *headers;
	long status;
	long long ms;
	char answer[256];
	pthread_t tid;
};

static void *
gc_req_run(void *arg)
{
	struct gc_req *q = arg;
	struct http_resp r;
	char url[256];
	long long t0 = stack_now_ms();

	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/%s", gc_stack.base, q->path);
	q->status = http_do(q->method, url, q->headers, q->body, strlen(q->body), 60000, &r) < 0 ?
	    0 : r.status;
	q->ms = stack_now_ms() - t0;
	snprintf(q->answer, sizeof(q->answer), "%s", r.body.data ? r.body.data : "");
	http_resp_free(&r);
	return NULL;
}

static void
test_rest_gcommit_slow_patch_bounded(void)
{
	static const char *const rep[] = { "Content-Type: application/json",
	    "Prefer: return=representation", NULL };
	static const char *const min[] = { "Content-Type: application/json", NULL };
	struct gc_req patch = { "PATCH", "slow?id=eq.1", "{\"v\":42}", rep, 0, 0, "", 0 };
	struct gc_req post = { "POST", "item", "{\"id\":7,\"name\":\"while patching\",\"n\":1}",
	    min, 0, 0, "", 0 };
	struct http_resp r;
	char url[160];

	if (!gc_up)
		SKIP("no stack");
	pthread_create(&patch.tid, NULL, gc_req_run, &patch);
	usleep(200000);
	pthread_create(&post.tid, NULL, gc_req_run, &post);
	pthread_join(post.tid, NULL);
	pthread_join(patch.tid, NULL);
	printf("  slow PATCH (budget %d ms): %ld after %lld ms; POST sent 200 ms later: %ld "
	    "after %lld ms\n", GC_BUDGET_MS, patch.status, patch.ms, post.status, post.ms);
	CHECK_INT(patch.status, 503);
	CHECK(strstr(patch.answer, "\"code\":\"timeout\"") != NULL);
	CHECK(patch.ms < GC_BUDGET_MS + 1500);
	CHECK_INT(post.status, 201);
	CHECK(post.ms < GC_BUDGET_MS + 1500);
	CHECK_INT(gc_stored(7), 1);
	gc_stored(-1);
	/* The PATCH was undone. */
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/slow?select=v", gc_stack.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 10000, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data ? r.body.data : "", "[{\"v\":0}]");
	http_resp_free(&r);
}

/*
 * A writer held hostage: writes made slow on purpose (a trigger that burns seconds, as a
 * representation that fans out does) held the writers' lock for their request's whole
 * budget, and every other write of the file waited behind them.  Now a write's time in
 * the lock has a budget of its own (sqlite_write_ms, 250 ms by default): on a stack whose
 * requests have 10 s, hostile PATCHes with return=representation (a trigger that burns
 * seconds, an embed that fans out to 1000000 rows) are undone and answered 503 with the
 * JSON error body well before theirs, and an unrelated POST sent meanwhile is answered
 * 201 within 600 ms.  Nothing of the PATCHes is stored.
 */
#define WB_BUDGET_MS	10000

/* An owner with many pets: a representation that embeds them fans out to 1000000 rows. */
static const char wb_fanout[] =
    "create table owner (id integer primary key, v integer not null);\n"
    "create table pet (id integer primary key, owner_id integer not null references\n"
    "  owner (id), name text not null);\n"
    "insert into owner values (1, 0);\n"
    "insert into pet select x, 1, printf('pet number %08d of the only owner', x) from\n"
    "  (with recursive c(x) as (select 1 union all select x + 1 from c where x < 1000000)\n"
    "  select x from c);\n";

static void
test_rest_gcommit_write_budget(void)
{
	static const char *const rep[] = { "Content-Type: application/json",
	    "Prefer: return=representation", NULL };
	static const char *const min[] = { "Content-Type: application/json", NULL };
	struct gc_req patch = { "PATCH", "slow?id=eq.1", "{\"v\":42}", rep, 0, 0, "", 0 };
	struct gc_req patch2 = { "PATCH", "slow?id=eq.2", "{\"v\":43}", rep, 0, 0, "", 0 };
	struct gc_req post = { "POST", "item", "{\"id\":8,\"name\":\"beside\",\"n\":1}",
	    min, 0, 0, "", 0 };
	struct gc_req post2 = { "POST", "item", "{\"id\":9,\"name\":\"beside two\",\"n\":1}",
	    min, 0, 0, "", 0 };
	struct stack saved = gc_stack;
	struct http_resp r;
	struct db *db;
	char url[160], conf[512], err[256], file[128];
	int up = 0;

	/* A stack of its own, on a file of its own; gc_req_run() talks to gc_stack. */
	snprintf(file, sizeof(file), "/tmp/sluice-gcommit-wb-%d.db", (int)getpid());
	stack_sh("rm -f %s %s-wal %s-shm %s-wlock", file, file, file, file);
	snprintf(url, sizeof(url), "sqlite:%s", file);
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		CHECK(!"database made");
		return;
	}
	CHECK_INT(db_exec(db, gc_schema), 0);
	CHECK_INT(db_exec(db, "insert into slow values (2, 0)"), 0);
	CHECK_INT(db_exec(db, wb_fanout), 0);
	db_close(db);
	snprintf(conf, sizeof(conf), "db lite %s\nrest /rest/v1/ workers=1 threads=8 db=lite "
	    "stmt_timeout_ms=%d\n", url, WB_BUDGET_MS);
	if (stack_start(&gc_stack, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	up = 1;

	/* One hostile write, an insert 100 ms later. */
	pthread_create(&patch.tid, NULL, gc_req_run, &patch);
	usleep(100000);
	pthread_create(&post.tid, NULL, gc_req_run, &post);
	pthread_join(post.tid, NULL);
	pthread_join(patch.tid, NULL);
	printf("  slow PATCH (request budget %d ms): %ld after %lld ms; POST sent 100 ms later: "
	    "%ld after %lld ms\n", WB_BUDGET_MS, patch.status, patch.ms, post.status, post.ms);
	CHECK_INT(patch.status, 503);
	CHECK(strncmp(patch.answer, "{\"code\":\"timeout\",", 18) == 0);
	CHECK(patch.ms < 2000);
	CHECK_INT(post.status, 201);
	CHECK(post.ms < 600);

	/* Two of them at once, as two clients would: the insert waits for at most both
	 * budgets. */
	pthread_create(&patch.tid, NULL, gc_req_run, &patch);
	pthread_create(&patch2.tid, NULL, gc_req_run, &patch2);
	usleep(100000);
	pthread_create(&post2.tid, NULL, gc_req_run, &post2);
	pthread_join(post2.tid, NULL);
	pthread_join(patch.tid, NULL);
	pthread_join(patch2.tid, NULL);
	printf("  two slow PATCHes: %ld after %lld ms, %ld after %lld ms; POST: %ld after %lld "
	    "ms\n", patch.status, patch.ms, patch2.status, patch2.ms, post2.status, post2.ms);
	CHECK_INT(patch.status, 503);
	CHECK_INT(patch2.status, 503);
	CHECK(strncmp(patch2.answer, "{\"code\":\"timeout\",", 18) == 0);
	CHECK_INT(post2.status, 201);
	CHECK(post2.ms < 1000);

	/* The fan-out: an unauthenticated PATCH whose representation embeds every pet. */
	{
		struct gc_req fan = { "PATCH", "owner?id=eq.1&select=id,v,pet(id,name)",
		    "{\"v\":44}", rep, 0, 0, "", 0 };
		struct gc_req post3 = { "POST", "item",
		    "{\"id\":10,\"name\":\"beside the fan-out\",\"n\":1}", min, 0, 0, "", 0 };

		pthread_create(&fan.tid, NULL, gc_req_run, &fan);
		usleep(100000);
		pthread_create(&post3.tid, NULL, gc_req_run, &post3);
		pthread_join(post3.tid, NULL);
		pthread_join(fan.tid, NULL);
		printf("  fan-out PATCH: %ld after %lld ms (%.60s); POST: %ld after %lld ms\n",
		    fan.status, fan.ms, fan.answer, post3.status, post3.ms);
		CHECK(fan.status == 503 || fan.status == 413);
		CHECK(fan.answer[0] == '{' && strstr(fan.answer, "\"code\":") != NULL);
		CHECK_INT(post3.status, 201);
		CHECK(post3.ms < 600);
	}

	/* Nothing of the PATCHes was kept; the inserts were. */
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/slow?select=v&order=id", gc_stack.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 10000, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data ? r.body.data : "", "[{\"v\":0},{\"v\":0}]");
	http_resp_free(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/item?select=id&order=id", gc_stack.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 10000, &r), 0);
	CHECK_STR(r.body.data ? r.body.data : "", "[{\"id\":8},{\"id\":9},{\"id\":10}]");
	http_resp_free(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/owner?select=v", gc_stack.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, 10000, &r), 0);
	CHECK_STR(r.body.data ? r.body.data : "", "[{\"v\":0}]");
	http_resp_free(&r);
out:
	if (up)
		stack_stop(&gc_stack);
	gc_stack = saved;
	stack_sh("rm -f %s %s-wal %s-shm %s-wlock", file, file, file, file);
}

/* The records stack: its own file, seeded by the real seeder. */
static char rc_db[128], rc_key[128];
static struct stack rc_stack;
static int rc_up;

static int
rc_start(void)
{
	const char *tests = getenv("SLUICE_TESTS");
	char conf[512];
	FILE *f;

	snprintf(rc_db, sizeof(rc_db), "/tmp/sluice-gcommit-rec-%d.db", (int)getpid());
	snprintf(rc_key, sizeof(rc_key), "/tmp/sluice-gcommit-rec-%d.key", (int)getpid());
	stack_sh("rm -f %s %s-wal %s-shm %s-wlock", rc_db, rc_db, rc_db, rc_db);
	if ((f = fopen(rc_key, "w")) == NULL)
		return -1;
	fprintf(f, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
	if (fclose(f) != 0)
		return -1;
	stack_sh("chmod 644 %s", rc_key);
	if (stack_sh("%s/../sql/records-seed -q -u 1 -p 1 -c 1 -S sql/records 'sqlite:%s'",
	    tests ? tests : "build/rel/tests", rc_db) != 0)
		return -1;
	stack_sh("chmod 666 %s", rc_db);
	snprintf(conf, sizeof(conf), "db rec sqlite:%s\nrecords /api/ workers=1 threads=8 "
	    "db=rec records_secret_file=%s bcrypt_cost=4\n", rc_db, rc_key);
	if (stack_start(&rc_stack, conf, "tuned", 1, NULL) < 0)
		return -1;
	rc_up = 1;
	return 0;
}

static void
rc_stop(void)
{
	if (rc_up)
		stack_stop(&rc_stack);
	rc_up = 0;
	stack_sh("rm -f %s %s-wal %s-shm %s-wlock %s", rc_db, rc_db, rc_db, rc_db, rc_key);
}

/* The users with e-mail address u<n>@gcommit.test, read directly from the file. */
static long
rc_stored(long n)
{
	struct db *db;
	struct db_stmt *st;
	char url[160], err[200], email[64];
	long c = -1;

	snprintf(url, sizeof(url), "sqlite:%s", rc_db);
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0)
		return -1;
	snprintf(email, sizeof(email), "u%ld@gcommit.test", n);
	if ((st = db_prepare(db, "select count(*) from users where email = $1")) != NULL) {
		db_bind_text(st, 1, email, strlen(email));
		if (db_step(st) == DB_ROW)
			c = (long)db_column_int(st, 0);
		db_reset(st);
	}
	db_close(db);
	return c;
}

struct rc_client {
	int first, step, last, dup_every;
	long *status;
	pthread_t tid;
};

/* Signs up users first, first + step, ...; every dup_every-th reuses user 0's address. */
static void *
rc_client_run(void *arg)
{
	static const char *const hdr[] = { "Content-Type: application/json", NULL };
	struct rc_client *c = arg;
	struct http_resp r;
	char url[160], body[200];
	int i;

	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/api/collections/users/records", rc_stack.base);
	for (i = c->first; i < c->last; i += c->step) {
		snprintf(body, sizeof(body), "{\"email\":\"u%d@gcommit.test\",\"password\":"
		    "\"secret-%d\",\"passwordConfirm\":\"secret-%d\",\"name\":\"user %d\"}",
		    i > 0 && i % c->dup_every == 0 ? 0 : i, i, i, i);
		c->status[i] = http_do("POST", url, hdr, body, strlen(body), 30000, &r) < 0 ? -1 :
		    r.status;
	}
	http_resp_free(&r);
	return NULL;
}

static void
test_records_gcommit_batches(void)
{
	enum { N = 97, DUP = 8 };
	static long status[N];
	struct rc_client c[GC_CLIENTS];
	static const char *const hdr[] = { "Content-Type: application/json", NULL };
	static const char u0[] = "{\"email\":\"u0@gcommit.test\",\"password\":\"secret-00\","
	    "\"passwordConfirm\":\"secret-00\"}";
	struct http_resp r;
	char url[160];
	long c0, c1, good = 0;
	uint32_t s0, s1;
	int i;

	CHECK_INT(rc_start(), 0);
	if (!rc_up)
		return;
	/* User 0 first, alone: the address the duplicates reuse. */
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/api/collections/users/records", rc_stack.base);
	CHECK_INT(http_do("POST", url, hdr, u0, strlen(u0), 10000, &r), 0);
	CHECK_INT(r.status, 200);
	http_resp_free(&r);
	CHECK_INT(gc_wal_commits(rc_db, &c0, &s0), 0);
	for (i = 0; i < GC_CLIENTS; i++) {
		c[i] = (struct rc_client){ 1 + i, GC_CLIENTS, N, DUP, status, 0 };
		pthread_create(&c[i].tid, NULL, rc_client_run, &c[i]);
	}
	for (i = 0; i < GC_CLIENTS; i++)
		pthread_join(c[i].tid, NULL);
	CHECK_INT(gc_wal_commits(rc_db, &c1, &s1), 0);
	for (i = 1; i < N; i++) {
		if (i % DUP == 0) {
			if (status[i] != 400)
				harness_fail(__FILE__, __LINE__, "duplicate sign-up %d: status %ld", i,
				    status[i]);
			continue;
		}
		good++;
		if (status[i] != 200 || rc_stored(i) != 1)
			harness_fail(__FILE__, __LINE__, "sign-up %d: status %ld, stored %ld", i,
			    status[i], rc_stored(i));
	}
	CHECK_INT(rc_stored(0), 1);
	printf("  records: %d sign-ups (%ld good, %d refused) from %d clients: %ld commits\n",
	    N - 1, good, (N - 1) / DUP, GC_CLIENTS, c1 - c0);
	CHECK(s0 == s1);
	CHECK(c1 - c0 >= 1);
	CHECK(c1 - c0 < good);
	rc_stop();
}

static void
test_rest_gcommit_stack(void)
{
	CHECK_INT(gc_start(), 0);
}

int
main(void)
{
	RUN(test_rest_gcommit_stack);
	RUN(test_rest_gcommit_batches);
	RUN(test_rest_gcommit_slow_patch_bounded);
	RUN(test_rest_gcommit_worker_killed);
	gc_stop();
	RUN(test_rest_gcommit_write_budget);
	RUN(test_records_gcommit_batches);
	rc_stop();
	return harness_done();
}
