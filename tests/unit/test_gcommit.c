/*
 * test_gcommit: the time budgets of group commit (common/gcommit.h) on a real SQLite file,
 * with the writers' queue held by another connection as another process's writer would
 * hold it: a write queued behind a batch leaves at its deadline (DB_ETIMEOUT) while one
 * without a budget waits on and commits; a leader whose BEGIN cannot get in gives up at
 * its budget; a slow write in a batch is interrupted at its own budget and undone alone,
 * the writes batched with it committed (run again in a new transaction, since SQLite ends
 * the whole transaction when a write statement is interrupted), and so it is after its own
 * time in the writers' lock (sqlite_write_ms) when that ends first.  Under churn (many
 * writers with short budgets, the queue taken now and then by another writer) every
 * writer returns, and a write is in the table exactly when it was acknowledged.
 */
#define _GNU_SOURCE	/* pthread_timedjoin_np() */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "db.h"
#include "gcommit.h"
#include "stack.h"
#include "../lib/harness.h"

static char gt_file[100], gt_url[140];
/* The connections' sqlite_write_ms: none (-1) but where a test sets it, so that the
 * request budgets are what the other tests see. */
static int gt_write_ms = -1;

static void
gt_sleep_ms(int ms)
{
	nanosleep(&(struct timespec){ ms / 1000, (long)(ms % 1000) * 1000000L }, NULL);
}

static struct db *
gt_open(int budget_ms)
{
	struct db_opts o;
	struct db *db = NULL;
	char err[200];

	memset(&o, 0, sizeof(o));
	o.stmt_timeout_ms = budget_ms;
	o.sqlite_write_ms = gt_write_ms;
	if (db_open(&db, gt_url, &o, err, sizeof(err)) < 0)
		fprintf(stderr, "open: %s\n", err);
	return db;
}

static void
gt_setup(const char *name)
{
	struct db *db;

	snprintf(gt_file, sizeof(gt_file), "/tmp/sluice-gt-%s-%d.db", name, (int)getpid());
	snprintf(gt_url, sizeof(gt_url), "sqlite:%s", gt_file);
	unlink(gt_file);
	if ((db = gt_open(0)) == NULL)
		return;
	CHECK_INT(db_exec(db, "CREATE TABLE t(v integer)"), 0);
	db_close(db);
}

static void
gt_teardown(void)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-wlock" };
	char p[160];
	size_t i;

	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", gt_file, sfx[i]);
		unlink(p);
	}
}

/* The rows of t with value v (at least v: ge). */
static long
gt_count_rows(int v, int ge)
{
	struct db *db = gt_open(0);
	struct db_stmt *st;
	long n = -1;

	if (db == NULL)
		return -1;
	if ((st = db_prepare(db, ge ? "SELECT count(*) FROM t WHERE v >= $1" :
	    "SELECT count(*) FROM t WHERE v = $1")) != NULL) {
		db_bind_int(st, 1, v);
		if (db_step(st) == DB_ROW)
			n = (long)db_column_int(st, 0);
		db_reset(st);
	}
	db_close(db);
	return n;
}

static int
gt_insert(struct db *db, void *arg)
{
	struct db_stmt *st = db_prepare(db, "INSERT INTO t(v) VALUES ($1)");

	if (st == NULL)
		return -1;
	db_bind_int(st, 1, *(const int *)arg);
	return db_step(st) == DB_DONE ? 0 : -1;
}

/* A write that runs for seconds unless interrupted: a long recursive count, inserted. */
static int
gt_slow_insert(struct db *db, void *arg)
{
	struct db_stmt *st = db_prepare(db, "INSERT INTO t(v) SELECT $1 FROM (WITH RECURSIVE "
	    "c(x) AS (SELECT 1 UNION ALL SELECT x + 1 FROM c WHERE x < 2000000000) "
	    "SELECT max(x) FROM c)");

	if (st == NULL)
		return -1;
	db_bind_int(st, 1, *(const int *)arg);
	return db_step(st) == DB_DONE ? 0 : -1;
}

/* One writer thread: opens its connection, starts its budget, writes once. */
struct gt_writer {
	int budget_ms;
	int v;
	gcommit_fn fn;
	int rc;
	enum db_err err;
	long long ms;		/* how long gcommit_run() took */
	pthread_t tid;
};

static void *
gt_write(void *arg)
{
	struct gt_writer *w = arg;
	struct db *db = gt_open(w->budget_ms);
	long long t0;

	w->rc = -2;
	if (db == NULL)
		return NULL;
	t0 = stack_now_ms();
	if (db_ready(db) == 0)
		w->rc = gcommit_run(db, w->fn, &w->v, &w->err);
	w->ms = stack_now_ms() - t0;
	db_close(db);
	return NULL;
}

static void
gt_start(struct gt_writer *w, int budget_ms, int v, gcommit_fn fn)
{
	w->budget_ms = budget_ms;
	w->v = v;
	w->fn = fn;
	w->err = DB_OK;
	pthread_create(&w->tid, NULL, gt_write, w);
}

/*
 * The writers' queue held elsewhere for 1.2 s: the leader (no budget) waits in BEGIN; a
 * write with a 300 ms budget queued behind it answers DB_ETIMEOUT in about 300 ms; one
 * without a budget waits and commits.
 */
static void
test_gcommit_queue_budget(void)
{
	struct gt_writer lead, quick, patient;
	struct db *holder;

	gt_setup("queue");
	if ((holder = gt_open(0)) == NULL)
		return;
	CHECK_INT(db_begin(holder, DB_TXN_WRITE), 0);
	gt_start(&lead, 0, 1, gt_insert);
	gt_sleep_ms(100);
	gt_start(&quick, 300, 2, gt_insert);
	gt_start(&patient, 0, 3, gt_insert);
	pthread_join(quick.tid, NULL);
	CHECK_INT(quick.rc, -1);
	CHECK_INT(quick.err, DB_ETIMEOUT);
	printf("  queued write with a 300 ms budget answered after %lld ms\n", quick.ms);
	CHECK(quick.ms >= 250 && quick.ms < 1000);
	gt_sleep_ms(800);
	CHECK_INT(db_commit(holder), 0);
	pthread_join(lead.tid, NULL);
	pthread_join(patient.tid, NULL);
	CHECK_INT(lead.rc, 0);
	CHECK_INT(patient.rc, 0);
	CHECK_INT(gt_count_rows(1, 0), 1);
	CHECK_INT(gt_count_rows(2, 0), 0);
	CHECK_INT(gt_count_rows(3, 0), 1);
	db_close(holder);
	gt_teardown();
}

/* A leader whose BEGIN cannot get into the writers' queue gives up at its own budget. */
static void
test_gcommit_begin_budget(void)
{
	struct gt_writer w;
	struct db *holder;

	gt_setup("begin");
	if ((holder = gt_open(0)) == NULL)
		return;
	CHECK_INT(db_begin(holder, DB_TXN_WRITE), 0);
	gt_start(&w, 400, 1, gt_insert);
	pthread_join(w.tid, NULL);
	CHECK_INT(w.rc, -1);
	CHECK_INT(w.err, DB_ETIMEOUT);
	printf("  leader with a 400 ms budget gave up after %lld ms\n", w.ms);
	CHECK(w.ms >= 350 && w.ms < 1200);
	CHECK_INT(db_rollback(holder), 0);
	CHECK_INT(gt_count_rows(1, 0), 0);
	db_close(holder);
	gt_teardown();
}

/*
 * While holder keeps the writers' lock, a leading write (1), then a batch queued behind it
 * of a write (2), a slow one (3, budget slow_ms) and another (4), each other with budget
 * ms; the lock let go, all four are waited for.
 */
static void
gt_batch_with_slow(struct db *holder, struct gt_writer *lead, struct gt_writer *a,
    struct gt_writer *slow, struct gt_writer *b, int ms, int slow_ms)
{
	CHECK_INT(db_begin(holder, DB_TXN_WRITE), 0);
	gt_start(lead, ms, 1, gt_insert);
	gt_sleep_ms(100);
	gt_start(a, ms, 2, gt_insert);
	gt_sleep_ms(50);
	gt_start(slow, slow_ms, 3, gt_slow_insert);
	gt_sleep_ms(50);
	gt_start(b, ms, 4, gt_insert);
	gt_sleep_ms(100);
	CHECK_INT(db_commit(holder), 0);
	pthread_join(lead->tid, NULL);
	pthread_join(a->tid, NULL);
	pthread_join(slow->tid, NULL);
	pthread_join(b->tid, NULL);
}

/*
 * One batch of three writes, the middle one slow with a 1 s budget: it is interrupted at
 * its budget and answered alone; the two others are committed, and answered soon after.
 */
static void
test_gcommit_slow_write_alone(void)
{
	struct gt_writer lead, a, slow, b;
	struct gcommit_counts c0, c1;
	struct db *holder;

	gt_setup("slow");
	if ((holder = gt_open(0)) == NULL)
		return;
	gcommit_counts(&c0);
	/* The first batch (lead) waits for the holder, so the next three queue together. */
	gt_batch_with_slow(holder, &lead, &a, &slow, &b, 0, 1000);
	gcommit_counts(&c1);
	CHECK_INT(lead.rc, 0);
	CHECK_INT(a.rc, 0);
	CHECK_INT(b.rc, 0);
	CHECK_INT(slow.rc, -1);
	CHECK_INT(slow.err, DB_ETIMEOUT);
	printf("  slow write (1 s budget) answered after %lld ms; batched writes after %lld and "
	    "%lld ms; %ld replays\n", slow.ms, a.ms, b.ms, c1.replays - c0.replays);
	CHECK(slow.ms >= 900 && slow.ms < 2500);
	CHECK(a.ms < 3000 && b.ms < 3000);
	CHECK(c1.replays - c0.replays >= 1);
	CHECK(c1.timeouts - c0.timeouts >= 1);
	CHECK_INT(gt_count_rows(1, 0), 1);
	CHECK_INT(gt_count_rows(2, 0), 1);
	CHECK_INT(gt_count_rows(3, 0), 0);
	CHECK_INT(gt_count_rows(4, 0), 1);
	db_close(holder);
	gt_teardown();
}

/*
 * The write's own budget in the writers' lock (sqlite_write_ms, here 200 ms), however long
 * its request's (10 s): the slow write of a batch of three is interrupted after about
 * 200 ms and undone alone, the two others committed, none held for seconds.
 */
static void
test_gcommit_write_budget(void)
{
	struct gt_writer lead, a, slow, b;
	struct db *holder;

	gt_write_ms = 200;
	gt_setup("wbudget");
	if ((holder = gt_open(0)) == NULL)
		goto out;
	gt_batch_with_slow(holder, &lead, &a, &slow, &b, 10000, 10000);
	printf("  slow write (10 s budget, 200 ms in the lock) answered after %lld ms (150 of "
	    "them queued); batched writes after %lld and %lld ms\n", slow.ms, a.ms, b.ms);
	CHECK_INT(lead.rc, 0);
	CHECK_INT(a.rc, 0);
	CHECK_INT(b.rc, 0);
	CHECK_INT(slow.rc, -1);
	CHECK_INT(slow.err, DB_ETIMEOUT);
	CHECK(slow.ms >= 300 && slow.ms < 1500);
	CHECK(a.ms < 1500 && b.ms < 1500);
	CHECK_INT(gt_count_rows(1, 0), 1);
	CHECK_INT(gt_count_rows(2, 0), 1);
	CHECK_INT(gt_count_rows(3, 0), 0);
	CHECK_INT(gt_count_rows(4, 0), 1);
	db_close(holder);
out:
	gt_write_ms = -1;
	gt_teardown();
}

/*
 * Churn: GT_CHURN_THREADS writers of GT_CHURN_WRITES writes each, three in four with a
 * budget of 5-45 ms, while another connection takes the writers' queue for 5-40 ms at a
 * time, so that writes leave the queue at their deadlines, some as their turn to lead
 * comes (the wake-up then passes to the next writer).  Every writer returns (none waits
 * for a wake-up that never comes), and each write is in the table exactly when
 * gcommit_run() acknowledged it: none acknowledged and missing, none failed and stored.
 */
#define GT_CHURN_THREADS	32
#define GT_CHURN_WRITES		40

struct gt_churner {
	int id;
	int rc[GT_CHURN_WRITES];
	pthread_t tid;
};

static atomic_int gt_churn_stop;

static void *
gt_churn_write(void *arg)
{
	struct gt_churner *w = arg;
	int budget = w->id % 4 == 0 ? 0 : 5 + (w->id * 7) % 41;
	struct db *db = gt_open(budget);
	enum db_err err;
	int k, v;

	for (k = 0; k < GT_CHURN_WRITES; k++) {
		w->rc[k] = -2;
		v = w->id * 1000 + k;
		if (db != NULL && db_ready(db) == 0)
			w->rc[k] = gcommit_run(db, gt_insert, &v, &err);
	}
	if (db != NULL)
		db_close(db);
	return NULL;
}

static void *
gt_churn_hold(void *arg)
{
	struct db *db = gt_open(0);
	unsigned n = 0;

	(void)arg;
	while (db != NULL && !atomic_load(&gt_churn_stop)) {
		if (db_begin(db, DB_TXN_WRITE) == 0) {
			gt_sleep_ms(5 + (int)(n * 13 % 36));
			(void)db_commit(db);
		}
		gt_sleep_ms((int)(n * 7 % 21));
		n++;
	}
	if (db != NULL)
		db_close(db);
	return NULL;
}

static void
test_gcommit_churn(void)
{
	static struct gt_churner w[GT_CHURN_THREADS];
	struct gcommit_counts c0, c1;
	struct db *db;
	struct db_stmt *st;
	struct timespec until;
	pthread_t holder;
	long ok = 0, failed = 0, mismatched = 0, stray = 0;
	int i, k, joined = 0;
	static char seen[GT_CHURN_THREADS][GT_CHURN_WRITES];

	gt_setup("churn");
	gcommit_counts(&c0);
	atomic_store(&gt_churn_stop, 0);
	pthread_create(&holder, NULL, gt_churn_hold, NULL);
	for (i = 0; i < GT_CHURN_THREADS; i++) {
		w[i].id = i;
		pthread_create(&w[i].tid, NULL, gt_churn_write, &w[i]);
	}
	clock_gettime(CLOCK_REALTIME, &until);
	until.tv_sec += 60;
	for (i = 0; i < GT_CHURN_THREADS; i++)
		if (pthread_timedjoin_np(w[i].tid, NULL, &until) == 0)
			joined++;
	atomic_store(&gt_churn_stop, 1);
	pthread_join(holder, NULL);
	CHECK_INT(joined, GT_CHURN_THREADS);
	if (joined != GT_CHURN_THREADS) {
		/* A writer still waits for a wake-up: nothing more can be checked. */
		return;
	}
	gcommit_counts(&c1);
	memset(seen, 0, sizeof(seen));
	if ((db = gt_open(0)) == NULL) {
		CHECK(!"database reopened");
		gt_teardown();
		return;
	}
	if ((st = db_prepare(db, "SELECT v FROM t")) != NULL) {
		while (db_step(st) == DB_ROW) {
			long long v = db_column_int(st, 0);

			if (v < 0 || v / 1000 >= GT_CHURN_THREADS || v % 1000 >= GT_CHURN_WRITES ||
			    seen[v / 1000][v % 1000]++)
				stray++;
		}
		db_reset(st);
	}
	db_close(db);
	for (i = 0; i < GT_CHURN_THREADS; i++)
		for (k = 0; k < GT_CHURN_WRITES; k++) {
			if (w[i].rc[k] == 0)
				ok++;
			else
				failed++;
			if ((w[i].rc[k] == 0) != (seen[i][k] == 1))
				mismatched++;
		}
	printf("  %ld writes acknowledged, %ld failed (%ld timeouts counted), %ld batches; "
	    "%ld acknowledged but missing or failed but stored, %ld rows stray or twice\n",
	    ok, failed, c1.timeouts - c0.timeouts, c1.batches - c0.batches, mismatched, stray);
	CHECK_INT(mismatched, 0);
	CHECK_INT(stray, 0);
	/* The churn did what it is for: writes both committed and timed out. */
	CHECK(ok > 0);
	CHECK(c1.timeouts - c0.timeouts > 0);
	gt_teardown();
}

/* A write of a 4 kB row: v and a blob. */
static int
gt_insert_big(struct db *db, void *arg)
{
	struct db_stmt *st = db_prepare(db, "INSERT INTO t(v) VALUES ($1)");
	struct db_stmt *b;

	if (st == NULL)
		return -1;
	db_bind_int(st, 1, *(const int *)arg);
	if (db_step(st) != DB_DONE)
		return -1;
	b = db_prepare(db, "INSERT INTO big(b) VALUES (randomblob(4000))");
	return b != NULL && db_step(b) == DB_DONE ? 0 : -1;
}

#define GT_WAL_THREADS	8
#define GT_WAL_WRITES	1000

static void *
gt_wal_write(void *arg)
{
	int *id = arg, k, v, *ok = id + 1;
	struct db *db = gt_open(0);
	enum db_err err;

	for (k = 0; db != NULL && k < GT_WAL_WRITES; k++) {
		v = *id * 10000 + k;
		if (db_ready(db) == 0 && gcommit_run(db, gt_insert_big, &v, &err) == 0)
			(*ok)++;
	}
	if (db != NULL)
		db_close(db);
	return NULL;
}

/*
 * The batches commit on the group commit's own connection, and the WAL's checkpoints run
 * between batches (db_sqlite.c's db_sqlite_writer_open()): the WAL is checkpointed and
 * begun again from its start, so that 32 MB written in 8,000 writes leave it under 20 MB
 * (a checkpoint every 4,000 pages of 4 kB, DB_SQLITE_WAL_CKPT), not growing with the
 * writes.
 * Every write is acknowledged and stored.
 */
static void
test_gcommit_wal_bounded(void)
{
	static int w[GT_WAL_THREADS][2];
	pthread_t tid[GT_WAL_THREADS];
	struct db *db;
	struct stat sb;
	char wal[160];
	long ok = 0;
	int i;

	gt_setup("wal");
	if ((db = gt_open(0)) == NULL) {
		CHECK(!"database opened");
		return;
	}
	CHECK_INT(db_exec(db, "CREATE TABLE big(b blob)"), 0);
	db_close(db);
	for (i = 0; i < GT_WAL_THREADS; i++) {
		w[i][0] = i;
		w[i][1] = 0;
		pthread_create(&tid[i], NULL, gt_wal_write, w[i]);
	}
	for (i = 0; i < GT_WAL_THREADS; i++) {
		pthread_join(tid[i], NULL);
		ok += w[i][1];
	}
	CHECK_INT(ok, GT_WAL_THREADS * GT_WAL_WRITES);
	snprintf(wal, sizeof(wal), "%s-wal", gt_file);
	CHECK(stat(wal, &sb) == 0);
	printf("  %ld writes of 4 kB acknowledged; the WAL is %lld kB\n", ok,
	    (long long)sb.st_size / 1024);
	CHECK(sb.st_size < 20LL * 1024 * 1024);
	CHECK_INT(gt_count_rows(0, 1), GT_WAL_THREADS * GT_WAL_WRITES);
	gt_teardown();
}

int
main(void)
{
	RUN(test_gcommit_queue_budget);
	RUN(test_gcommit_begin_budget);
	RUN(test_gcommit_slow_write_alone);
	RUN(test_gcommit_write_budget);
	RUN(test_gcommit_churn);
	RUN(test_gcommit_wal_bounded);
	return harness_done();
}
