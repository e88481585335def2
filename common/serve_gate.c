/*
 * serve_gate.c: the gate of serve_gate.h.
 *
 * Why.  A worker's serving threads all slept in epoll_pwait() for the next request, and
 * epoll wakes its waiters in turn: the one that has waited longest first.  Under load each
 * request therefore went to the coldest thread of the 64 (its stack, its SQLite connection
 * and page cache long gone from the CPU's caches), and a burst of n requests woke n
 * threads, most of which found their request already taken by a thread that had just
 * finished one and went back to sleep: a worker of 64 threads spent more time and more
 * context switches on each request than one of 4 (docs/benchmarks.md, "A few threads wait
 * for requests").  But a pool needs its threads when requests sleep: a write waits for its
 * batch's commit (gcommit.c), a PostgreSQL read for its connection and its result
 * (db_pg_pool.c), and the more of them wait together, the bigger the batches.
 *
 * How.  At most `awake` threads are past serve_gate_enter() at once (waiting for a request,
 * or called to); the others park on a stack, each on a condition variable of its own, and
 * the thread parked last is called first (it is the warmest).  A thread that stops
 * waiting (serve_gate_leave()) serves its request and comes back; while the requests are
 * short the same few threads serve them all.  A parked thread is called when:
 *  - a serving thread is about to sleep on something other than a request and no thread
 *    waits for requests (serve_gate_blocking(), which serve.c installs as the database
 *    layer's hook: the write queue and the PostgreSQL pool call it through db_blocking()
 *    before they sleep): the pool keeps taking requests while some sleep, as many as it
 *    has threads;
 *  - no thread has waited for a request for SERVE_GATE_STALL_MS (every awake thread held
 *    by a long request, or asleep where serve_gate_blocking() is not called, such as in
 *    SQLite's busy handler or an fsync): the keeper thread calls one, and one more each
 *    period while that lasts, so the pool still shares the CPUs among up to all its
 *    threads under long requests, as it did without the gate, after that delay.
 * The keeper looks every SERVE_GATE_STALL_MS while requests come; after a second with
 * nothing to do it sleeps on its condition variable, and is signalled when the last
 * waiting thread stops waiting while threads are parked.  (Signalled each time that
 * happened, it cost a context switch every few requests under PostgreSQL reads, where
 * every request sleeps.) */
#include <errno.h>
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>
#include <time.h>

#include "clock.h"
#include "log.h"
#include "serve_gate.h"

/* How long no thread may wait for requests before the keeper calls a parked one. */
#define SERVE_GATE_STALL_MS	5
/* Periods in a row with nothing to do after which the keeper sleeps until signalled. */
#define SERVE_GATE_QUIET	200

static struct {
	pthread_mutex_t mu;
	pthread_condattr_t ca;		/* CLOCK_MONOTONIC, for the keeper's period */
	pthread_cond_t keeper_cv;
	pthread_t keeper;
	atomic_int started;
	int stopping;
	int awake;			/* at most this many past serve_gate_enter() */
	atomic_int waiting;		/* past serve_gate_enter(), not yet left (mu held
					 * to change; read without it by serve_gate_blocking()) */
	atomic_int parked_n;		/* on the stack (the same) */
	struct serve_gate_slot *parked;	/* the stack: the last parked first */
	unsigned long passes;		/* turns given: the keeper's sign of progress */
	int keeper_idle;		/* asleep until signalled, no period running */
} gate = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Calls the thread parked last: its turn to wait for a request.  mu held, a thread parked. */
static void
gate_call(void)
{
	struct serve_gate_slot *s = gate.parked;

	gate.parked = s->next;
	atomic_fetch_sub(&gate.parked_n, 1);
	atomic_fetch_add(&gate.waiting, 1);
	gate.passes++;
	s->called = 1;
	pthread_cond_signal(&s->cv);
}

static void *
gate_keeper(void *arg)
{
	struct timespec ts;
	unsigned long seen;
	int quiet = SERVE_GATE_QUIET;

	(void)arg;
	pthread_mutex_lock(&gate.mu);
	while (!gate.stopping) {
		if (quiet >= SERVE_GATE_QUIET || gate.parked == NULL) {
			gate.keeper_idle = 1;
			pthread_cond_wait(&gate.keeper_cv, &gate.mu);
			gate.keeper_idle = 0;
			quiet = 0;
			continue;
		}
		seen = gate.passes;
		clock_timespec(clock_now_ms() + SERVE_GATE_STALL_MS, &ts);
		(void)pthread_cond_timedwait(&gate.keeper_cv, &gate.mu, &ts);
		if (!gate.stopping && atomic_load(&gate.waiting) == 0 && gate.parked != NULL &&
		    gate.passes == seen) {
			gate_call();
			quiet = 0;
		} else
			quiet++;
	}
	pthread_mutex_unlock(&gate.mu);
	return NULL;
}

int
serve_gate_start(int threads, int awake)
{
	gate.awake = awake < 1 ? 1 : awake > threads ? threads : awake;
	if (pthread_condattr_init(&gate.ca) != 0 ||
	    pthread_condattr_setclock(&gate.ca, CLOCK_MONOTONIC) != 0 ||
	    pthread_cond_init(&gate.keeper_cv, &gate.ca) != 0) {
		log_err("serve gate: no monotonic condition variable");
		return -1;
	}
	if (pthread_create(&gate.keeper, NULL, gate_keeper, NULL) != 0) {
		log_err("serve gate: pthread_create failed");
		pthread_cond_destroy(&gate.keeper_cv);
		return -1;
	}
	atomic_store(&gate.started, 1);
	return 0;
}

void
serve_gate_slot_init(struct serve_gate_slot *slot)
{
	memset(slot, 0, sizeof(*slot));
	pthread_cond_init(&slot->cv, NULL);
}

void
serve_gate_slot_fini(struct serve_gate_slot *slot)
{
	pthread_cond_destroy(&slot->cv);
}

int
serve_gate_enter(struct serve_gate_slot *slot)
{
	int rc = -1;

	pthread_mutex_lock(&gate.mu);
	if (gate.stopping)
		goto out;
	if (atomic_load(&gate.waiting) < gate.awake) {
		atomic_fetch_add(&gate.waiting, 1);
		gate.passes++;
		rc = 0;
		goto out;
	}
	slot->called = 0;
	slot->next = gate.parked;
	gate.parked = slot;
	atomic_fetch_add(&gate.parked_n, 1);
	while (slot->called == 0)
		pthread_cond_wait(&slot->cv, &gate.mu);
	/* Called (counted as waiting by its caller), or -1: the gate stopped. */
	rc = slot->called > 0 ? 0 : -1;
out:
	pthread_mutex_unlock(&gate.mu);
	return rc;
}

void
serve_gate_leave(void)
{
	pthread_mutex_lock(&gate.mu);
	if (atomic_fetch_sub(&gate.waiting, 1) == 1 && gate.parked != NULL &&
	    gate.keeper_idle)
		pthread_cond_signal(&gate.keeper_cv);
	pthread_mutex_unlock(&gate.mu);
}

void
serve_gate_blocking(void)
{
	if (!atomic_load(&gate.started) || atomic_load(&gate.waiting) > 0 ||
	    atomic_load(&gate.parked_n) == 0)
		return;
	pthread_mutex_lock(&gate.mu);
	if (!gate.stopping && atomic_load(&gate.waiting) == 0 && gate.parked != NULL)
		gate_call();
	pthread_mutex_unlock(&gate.mu);
}

void
serve_gate_stop(void)
{
	struct serve_gate_slot *s;

	if (!atomic_load(&gate.started))
		return;
	pthread_mutex_lock(&gate.mu);
	gate.stopping = 1;
	while ((s = gate.parked) != NULL) {
		gate.parked = s->next;
		s->called = -1;
		pthread_cond_signal(&s->cv);
	}
	atomic_store(&gate.parked_n, 0);
	pthread_cond_signal(&gate.keeper_cv);
	pthread_mutex_unlock(&gate.mu);
	pthread_join(gate.keeper, NULL);
	pthread_cond_destroy(&gate.keeper_cv);
	pthread_condattr_destroy(&gate.ca);
	atomic_store(&gate.started, 0);
}
