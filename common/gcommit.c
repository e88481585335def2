/*
 * gcommit.c: the leader/follower queue of gcommit.h.  One mutex per process guards a FIFO
 * of pending writes and a "batch in progress" flag; the leader works without the mutex
 * held, so threads keep queueing while it writes.  Each waiting writer sleeps on a
 * condition variable of its own (on CLOCK_MONOTONIC, the clock of the time budgets): a
 * result wakes its writer alone, and the end of a batch wakes only the writer at the head
 * of the queue, which leads the next one.  With one variable for all, each result of a
 * batch of n woke all m writers waiting, n x m wake-ups where n are needed, and one process
 * of many threads, which makes the biggest batches, wrote slowest; now it writes fastest
 * (docs/benchmarks.md, "The group commit's wake-ups").  Across processes the batches meet
 * in the SQLite writers' queue that the leader's BEGIN joins (db_sqlite.c's "<file>-wlock",
 * then SQLite's own lock): the lock order is in gcommit.h.
 *
 * A write's time budget is its caller's (db->deadline_ms of the caller's connection, set by
 * db_ready()).  The leader runs each write with that write's budget on its own connection,
 * cut to the write's time in the writers' lock (db_opts.sqlite_write_ms, 250 ms by
 * default, from the moment it starts), so the progress handler interrupts it at whichever
 * ends first, and lets a write go (done) as soon as its result is final: failed alone, or
 * past its budget.  A write still in the
 * queue leaves it by itself at its deadline (pthread_cond_timedwait()).
 *
 * Writers are woken after the mutex is let go, not while it is held: a writer woken by a
 * leader that still held it ran (the kernel runs a woken thread at once when it can), found
 * the mutex taken, and slept again until the leader let it go, two context switches more a
 * write (docs/benchmarks.md, "Waking writers after the mutex is let go").  A writer may
 * then have returned before its variable is signalled, so the variables are not on the
 * writers' stacks: each writer takes one from a free list for the time of its write, and
 * they live as long as the process; a late signal wakes the next writer that uses the
 * variable, which waits in a loop on its own condition and sleeps again.
 */
#include <errno.h>
#include <pthread.h>
#include <stddef.h>
#include <stdlib.h>
#include <time.h>

#include "clock.h"
#include "extern.h"
#include "gcommit.h"
#include "log.h"
#include "metrics.h"

/* How far past the leader's own deadline the writes of its batch may have theirs. */
#define GCOMMIT_LEAD_SPAN_MS	1000

struct gcommit_item {
	gcommit_fn fn;
	void *arg;
	long long deadline;	/* CLOCK_MONOTONIC ms the writer's budget ends; 0: none */
	int rc;
	enum db_err err;
	int taken;		/* in a batch: only the leader may let it go */
	int done;		/* the result is in: the writer may return */
	struct gcommit_item *next;
	pthread_cond_t *cv;	/* its writer waits on it: the result, or its turn to lead */
};

/* A writer's condition variable, kept for the process's life (see the top). */
struct gcommit_waiter {
	pthread_cond_t cv;
	struct gcommit_waiter *next;
};

static pthread_once_t gcommit_once = PTHREAD_ONCE_INIT;
static pthread_mutex_t gcommit_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_condattr_t gcommit_ca;
static int gcommit_monotonic;
static struct gcommit_item *gcommit_head, *gcommit_tail;
static int gcommit_busy;
static struct db *gcommit_conn;		/* the batches' own connection, or NULL */
static int gcommit_conn_tried;
static struct gcommit_waiter *gcommit_waiters;	/* the free ones */
static long gcommit_batches, gcommit_writes, gcommit_commits, gcommit_replays,
    gcommit_timeouts;

static void
gcommit_init(void)
{
	/* The deadlines are CLOCK_MONOTONIC (clock_now_ms()): wait on the same clock. */
	gcommit_monotonic = pthread_condattr_init(&gcommit_ca) == 0 &&
	    pthread_condattr_setclock(&gcommit_ca, CLOCK_MONOTONIC) == 0;
	if (!gcommit_monotonic)
		log_err("group commit: no monotonic condition variable; waits use the wall "
		    "clock");
}

/* Its result in (gcommit_mu held).  Returns the variable to signal once the mutex is let
 * go; the writer returns once the mutex is free: the item (on its stack) is not to be
 * touched after that. */
static pthread_cond_t *
gcommit_set(struct gcommit_item *it, int rc, enum db_err err)
{
	it->rc = rc;
	it->err = rc < 0 ? err : DB_OK;
	it->done = 1;
	if (rc < 0 && err == DB_ETIMEOUT)
		gcommit_timeouts++;
	return it->cv;
}

/* Gives it its result and lets its writer return; the leader must not touch it again. */
static void
gcommit_release(struct gcommit_item *it, int rc, enum db_err err)
{
	pthread_cond_t *cv;

	pthread_mutex_lock(&gcommit_mu);
	cv = gcommit_set(it, rc, err);
	pthread_mutex_unlock(&gcommit_mu);
	pthread_cond_signal(cv);
}

/* Unlinks *pp (the pointer that points at an item of the batch) and releases the item. */
static void
gcommit_drop(struct gcommit_item **pp, int rc, enum db_err err)
{
	struct gcommit_item *it = *pp;

	*pp = it->next;
	gcommit_release(it, rc, err);
}

/* Fails every write of the batch with err and empties it. */
static void
gcommit_fail_all(struct gcommit_item **batch, enum db_err err)
{
	while (*batch != NULL)
		gcommit_drop(batch, -1, err);
}

/* The error class of a failure on db, never DB_OK. */
static enum db_err
gcommit_err(struct db *db)
{
	return db_errcode(db) == DB_OK ? DB_EINTERNAL : db_errcode(db);
}

/*
 * Lets the writes of the batch that are past their deadline go (DB_ETIMEOUT).  Returns the
 * earliest deadline of the others (0: none has a budget), or -1 when none is left.
 */
static long long
gcommit_expire(struct gcommit_item **batch)
{
	struct gcommit_item **pp = batch;
	long long now = clock_now_ms(), first = 0;

	while (*pp != NULL) {
		struct gcommit_item *it = *pp;

		if (it->deadline != 0 && now >= it->deadline) {
			gcommit_drop(pp, -1, DB_ETIMEOUT);
			continue;
		}
		if (it->deadline != 0 && (first == 0 || it->deadline < first))
			first = it->deadline;
		pp = &it->next;
	}
	return *batch == NULL ? -1 : first;
}

/*
 * BEGIN for the batch: the wait in the writers' queue lasts until the earliest deadline of
 * its writes; when it passes, the writes past their budget leave (DB_ETIMEOUT) and the
 * others wait on, until their own.  Returns 0 with the transaction open, or -1 when no
 * write is left (each answered).
 */
static int
gcommit_begin(struct db *db, struct gcommit_item **batch)
{
	long long first;

	for (;;) {
		if ((first = gcommit_expire(batch)) < 0)
			return -1;
		db->deadline_ms = first;
		if (db_begin(db, DB_TXN_WRITE) == 0)
			return 0;
		if (db_errcode(db) != DB_ETIMEOUT) {
			log_warn("group commit: BEGIN failed: %s", db_errmsg(db));
			gcommit_fail_all(batch, gcommit_err(db));
			return -1;
		}
	}
}

/* A committed batch's writes acknowledged, each with its result: only now are the writers
 * told their writes are on disk. */
static void
gcommit_ack(struct gcommit_item *batch)
{
	pthread_cond_t *woken[GCOMMIT_BATCH_MAX];
	struct gcommit_item *it;
	int n;

	pthread_mutex_lock(&gcommit_mu);
	gcommit_commits++;
	for (n = 0; (it = batch) != NULL; n++) {
		batch = it->next;
		woken[n] = gcommit_set(it, it->rc, DB_OK);
	}
	pthread_mutex_unlock(&gcommit_mu);
	while (n > 0)
		pthread_cond_signal(woken[--n]);
}

/*
 * The deadline of one run of it on db: its request's, or sooner the end of its time in the
 * writers' lock (db_opts.sqlite_write_ms from now), so that no write holds the lock, and
 * with it the writes after it in this process and the others, for longer than that.
 */
static long long
gcommit_write_deadline(const struct db *db, const struct gcommit_item *it)
{
	long long end;

	if (db->opts.sqlite_write_ms <= 0)
		return it->deadline;
	end = clock_now_ms() + db->opts.sqlite_write_ms;
	return it->deadline != 0 && it->deadline < end ? it->deadline : end;
}

/*
 * Runs one batch (a detached list) in one transaction on db and gives every write its
 * result.  The BEGIN queues this process among the file's writers (lock 2 of gcommit.h)
 * and the COMMIT or ROLLBACK lets the queue go.  A write that fails alone is undone to its
 * savepoint and let go at once.  A write whose failure made SQLite end the whole
 * transaction (an interrupt at the end of its budget, an I/O error) is let go with its
 * error, and the writes before it run again in a new transaction ("replay"): one write
 * never costs the others theirs.
 */
static void
gcommit_batch(struct db *db, struct gcommit_item *batch)
{
	struct gcommit_item **pp, *it;
	long long saved = db->deadline_ms, end;
	int lone, rc;

again:
	if (gcommit_begin(db, &batch) < 0)
		goto out;
	/* A lone write needs no savepoint: its failure rolls back the transaction. */
	lone = batch->next == NULL;
	for (pp = &batch; (it = *pp) != NULL;) {
		db->deadline_ms = 0;
		if (it->deadline != 0 && clock_now_ms() >= it->deadline) {
			gcommit_drop(pp, -1, DB_ETIMEOUT);
			continue;
		}
		if (!lone && db_exec(db, "SAVEPOINT gcommit") < 0)
			goto broken;
		db->deadline_ms = end = gcommit_write_deadline(db, it);
		rc = it->fn(db, it->arg);
		db->deadline_ms = 0;
		if (rc >= 0 && end != it->deadline && clock_now_ms() >= end) {
			/* Done, but past its time in the lock: the progress handler cannot
			 * stop a function's one step (an aggregate's final, which joins a
			 * whole representation), nor what the write does between its
			 * statements.  Undone all the same, so that a write is answered
			 * the same however its time was spent. */
			db_set_err(db, DB_ETIMEOUT, "group commit: the write ran past its "
			    "%d ms in the writers' lock", db->opts.sqlite_write_ms);
			rc = -1;
		}
		if (rc < 0 && end != it->deadline && db_errcode(db) == DB_ETIMEOUT)
			log_info("group commit: a write held the writers' lock for its %d ms "
			    "(sqlite_write_ms): undone", db->opts.sqlite_write_ms);
		if (rc >= 0) {
			if (!lone && db_exec(db, "RELEASE gcommit") < 0)
				goto broken;
			it->rc = rc;
			pp = &it->next;
			continue;
		}
		/* The write failed: undone alone, and answered now. */
		if (!db->ops->in_txn(db)) {
			/* SQLite ended the transaction: the writes before it are gone too. */
			gcommit_drop(pp, -1, gcommit_err(db));
			if (batch == NULL)
				goto out;
			pthread_mutex_lock(&gcommit_mu);
			gcommit_replays++;
			pthread_mutex_unlock(&gcommit_mu);
			goto again;
		}
		if (lone) {
			gcommit_drop(pp, -1, gcommit_err(db));
			db_rollback(db);
			goto out;
		}
		{
			enum db_err e = gcommit_err(db);

			if (db_exec(db, "ROLLBACK TO gcommit") < 0 ||
			    db_exec(db, "RELEASE gcommit") < 0)
				goto broken;
			gcommit_drop(pp, -1, e);
		}
	}
	if (batch == NULL) {
		/* Every write failed or ran out of time: nothing to keep. */
		db_rollback(db);
		goto out;
	}
	if (db_commit(db) < 0) {
		log_warn("group commit: COMMIT failed: %s", db_errmsg(db));
		goto broken;
	}
	gcommit_ack(batch);
	goto out;
broken:
	/* The transaction is in an unknown state: give it all up. */
	{
		enum db_err e = gcommit_err(db);

		db_rollback(db);
		gcommit_fail_all(&batch, e);
	}
out:
	db->deadline_ms = saved;
}

/*
 * Makes gcommit_conn the batches' own connection to db's file: kept from batch to batch,
 * opened again when db's file is another one (or was replaced since), left NULL (the
 * leader's own connection serves) when it cannot be opened.
 */
static void
gcommit_conn_take(struct db *db)
{
	if (gcommit_conn != NULL && !db_sqlite_writer_fits(gcommit_conn, db)) {
		db_close(gcommit_conn);
		gcommit_conn = NULL;
		gcommit_conn_tried = 0;
	}
	if (gcommit_conn == NULL && !gcommit_conn_tried) {
		gcommit_conn_tried = 1;
		(void)db_sqlite_writer_open(db, &gcommit_conn);
	}
}

/* A writer's variable: a free one, or a new one (NULL, logged, when none can be made).
 * gcommit_mu held. */
static struct gcommit_waiter *
gcommit_waiter_take(void)
{
	struct gcommit_waiter *w = gcommit_waiters;

	if (w != NULL) {
		gcommit_waiters = w->next;
		return w;
	}
	if ((w = calloc(1, sizeof(*w))) == NULL ||
	    pthread_cond_init(&w->cv, gcommit_monotonic ? &gcommit_ca : NULL) != 0) {
		free(w);
		log_err("group commit: no memory for a writer");
		return NULL;
	}
	return w;
}

/* Removes it from the queue (it is there: not taken yet). */
static void
gcommit_unqueue(struct gcommit_item *it)
{
	struct gcommit_item **pp, *prev = NULL;

	for (pp = &gcommit_head; *pp != it; pp = &(*pp)->next)
		prev = *pp;
	*pp = it->next;
	if (gcommit_tail == it)
		gcommit_tail = prev;
}

/*
 * A queued write waits (gcommit_mu held) for its turn to lead or for its answer; one not
 * yet taken into a batch waits no longer than its budget, then is answered DB_ETIMEOUT.
 */
static void
gcommit_wait(struct gcommit_item *item)
{
	struct timespec ts;

	db_blocking();
	if (item->taken || item->deadline == 0) {
		pthread_cond_wait(item->cv, &gcommit_mu);
		return;
	}
	/* Queued behind a batch: wait no longer than the budget. */
	clock_timespec(item->deadline, &ts);
	if (pthread_cond_timedwait(item->cv, &gcommit_mu, &ts) == ETIMEDOUT && !item->taken &&
	    !item->done) {
		gcommit_unqueue(item);
		gcommit_set(item, -1, DB_ETIMEOUT);
		/* It may have been woken to lead as its time ran out: the turn passes to the
		 * new head. */
		if (!gcommit_busy && gcommit_head != NULL)
			pthread_cond_signal(gcommit_head->cv);
	}
}

/*
 * Lead (gcommit_mu held, the queue not empty): take up to GCOMMIT_BATCH_MAX writes from
 * the head of the queue, and (after the first) only while their budgets end within
 * GCOMMIT_LEAD_SPAN_MS of the leader's own: the batch may run until its last deadline,
 * and leading it must not keep the leader's request much past its budget (the watchdog
 * replaces a worker whose request overruns it by its grace).  Returns the batch.
 */
static struct gcommit_item *
gcommit_take_batch(const struct gcommit_item *leader)
{
	struct gcommit_item *batch, *last;
	int n;

	gcommit_busy = 1;
	batch = last = gcommit_head;
	batch->taken = 1;
	for (n = 1; n < GCOMMIT_BATCH_MAX && last->next != NULL &&
	    (leader->deadline == 0 || (last->next->deadline != 0 &&
	    last->next->deadline <= leader->deadline + GCOMMIT_LEAD_SPAN_MS)); n++) {
		last = last->next;
		last->taken = 1;
	}
	gcommit_head = last->next;
	if (gcommit_head == NULL)
		gcommit_tail = NULL;
	last->next = NULL;
	gcommit_batches++;
	gcommit_writes += n;
	metrics_db_batch((unsigned)n);
	return batch;
}

int
gcommit_run(struct db *db, gcommit_fn fn, void *arg, enum db_err *err)
{
	struct gcommit_item item = {
		.fn = fn, .arg = arg, .deadline = db->deadline_ms, .rc = -1, .err = DB_EINTERNAL
	};
	struct gcommit_item *batch;
	struct gcommit_waiter *w;
	pthread_cond_t *turn;

	(void)pthread_once(&gcommit_once, gcommit_init);
	pthread_mutex_lock(&gcommit_mu);
	if ((w = gcommit_waiter_take()) == NULL) {
		pthread_mutex_unlock(&gcommit_mu);
		if (err != NULL)
			*err = DB_EINTERNAL;
		return -1;
	}
	item.cv = &w->cv;
	if (gcommit_tail != NULL)
		gcommit_tail->next = &item;
	else
		gcommit_head = &item;
	gcommit_tail = &item;
	while (!item.done) {
		if (gcommit_busy || item.taken) {
			gcommit_wait(&item);
			continue;
		}
		if (gcommit_head == NULL) {
			/* Cannot be: this write is queued and not taken.  Fail it, never
			 * wait for a turn that no one would give. */
			log_err("group commit: a write found the queue empty");
			break;
		}
		batch = gcommit_take_batch(&item);
		pthread_mutex_unlock(&gcommit_mu);

		/* Every write of the batch is let go by the time this returns. */
		gcommit_conn_take(db);
		gcommit_batch(gcommit_conn != NULL ? gcommit_conn : db, batch);
		/* Its writes are answered: the WAL's checkpoint, if due, before the next
		 * batch (db_sqlite.c's db_sqlite_writer_open()). */
		if (gcommit_conn != NULL && db_sqlite_checkpoint_due(gcommit_conn))
			db_sqlite_checkpoint(gcommit_conn);

		pthread_mutex_lock(&gcommit_mu);
		gcommit_busy = 0;
		/* The next batch is led by the write at the head of the queue. */
		turn = gcommit_head != NULL ? gcommit_head->cv : NULL;
		if (turn != NULL) {
			pthread_mutex_unlock(&gcommit_mu);
			pthread_cond_signal(turn);
			pthread_mutex_lock(&gcommit_mu);
		}
	}
	w->next = gcommit_waiters;
	gcommit_waiters = w;
	pthread_mutex_unlock(&gcommit_mu);
	if (item.rc < 0 && err != NULL)
		*err = item.err;
	return item.rc;
}

void
gcommit_counts(struct gcommit_counts *out)
{
	pthread_mutex_lock(&gcommit_mu);
	out->batches = gcommit_batches;
	out->writes = gcommit_writes;
	out->commits = gcommit_commits;
	out->replays = gcommit_replays;
	out->timeouts = gcommit_timeouts;
	pthread_mutex_unlock(&gcommit_mu);
}
