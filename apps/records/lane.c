/*
 * lane.c: the slow lane (see lane.h).  A FIFO of steps under one mutex, served by up to
 * LANE_THREADS_MAX detached threads that lower their own priority once, when they start
 * (Linux keeps a nice value per thread; raising it needs no privilege, and nothing here
 * ever lowers it again).  A step lives in memory of its own: the waiter and the lane
 * thread each drop their hold on it, and the last one wipes and frees it.
 */
/* sched_getaffinity(), CPU_COUNT(). */
#define _GNU_SOURCE	/* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "lane.h"
#include "log.h"

struct lane_step {
	struct lane_step *next;
	void (*fn)(void *);
	size_t size;
	int started;		/* a lane thread took it off the queue */
	int done;		/* fn has run */
	int holds;		/* 2 while both the waiter and the queue or its thread hold it */
	_Alignas(max_align_t) unsigned char arg[];	/* the step's own copy: any type */
};

static struct {
	pthread_mutex_t mu;
	pthread_cond_t work;	/* a step was queued */
	pthread_cond_t done;	/* a step is done (waiters check their own) */
	struct lane_step *head, *tail;
	int queued;
	int threads;
	int inited;
} lane = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* Drops one hold on s (under lane.mu); the last wipes and frees it. */
static void
lane_release(struct lane_step *s)
{
	if (--s->holds > 0)
		return;
	explicit_bzero(s->arg, s->size);
	free(s);
}

static void *
lane_thread(void *unused)
{
	(void)unused;
	/* This thread alone: the threads that serve requests keep their priority. */
	if (setpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid), LANE_NICE) < 0)
		log_warn("lane: cannot lower the slow lane's priority: %s", strerror(errno));
	(void)pthread_mutex_lock(&lane.mu);
	for (;;) {
		struct lane_step *s;

		while (lane.head == NULL)
			(void)pthread_cond_wait(&lane.work, &lane.mu);
		s = lane.head;
		lane.head = s->next;
		if (lane.head == NULL)
			lane.tail = NULL;
		lane.queued--;
		s->started = 1;
		(void)pthread_mutex_unlock(&lane.mu);
		s->fn(s->arg);
		(void)pthread_mutex_lock(&lane.mu);
		s->done = 1;
		lane_release(s);
		(void)pthread_cond_broadcast(&lane.done);
	}
	return NULL;
}

/* Takes s, which no thread has started, off the queue (under lane.mu). */
static void
lane_unqueue(struct lane_step *s)
{
	struct lane_step **pp, *prev = NULL;

	for (pp = &lane.head; *pp != NULL; prev = *pp, pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			if (lane.tail == s)
				lane.tail = prev;
			lane.queued--;
			s->holds--;
			return;
		}
}

/* The lane's threads, made at the first step (under lane.mu).  0, or -1: none runs. */
static int
lane_start(void)
{
	pthread_condattr_t ca;
	pthread_attr_t ta;
	cpu_set_t cpus;
	int n = 1, i;

	if (!lane.inited) {
		if (pthread_condattr_init(&ca) != 0 ||
		    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC) != 0 ||
		    pthread_cond_init(&lane.done, &ca) != 0 ||
		    pthread_cond_init(&lane.work, NULL) != 0)
			return -1;
		(void)pthread_condattr_destroy(&ca);
		lane.inited = 1;
	}
	if (lane.threads > 0)
		return 0;
	if (sched_getaffinity(0, sizeof(cpus), &cpus) == 0)
		n = CPU_COUNT(&cpus);
	if (n < 1)
		n = 1;
	if (n > LANE_THREADS_MAX)
		n = LANE_THREADS_MAX;
	if (pthread_attr_init(&ta) != 0)
		return -1;
	(void)pthread_attr_setdetachstate(&ta, PTHREAD_CREATE_DETACHED);
	(void)pthread_attr_setstacksize(&ta, 256 * 1024);
	for (i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_create(&t, &ta, lane_thread, NULL) != 0)
			break;
		lane.threads++;
	}
	(void)pthread_attr_destroy(&ta);
	return lane.threads > 0 ? 0 : -1;
}

enum lane_err
lane_run(void (*fn)(void *arg), void *arg, size_t size, long long end_ms)
{
	struct lane_step *s;
	struct timespec ts;
	enum lane_err rc = LANE_OK;

	if (size > LANE_ARG_MAX || (s = malloc(sizeof(*s) + size)) == NULL)
		return LANE_EBUSY;
	*s = (struct lane_step){ .fn = fn, .size = size, .holds = 2 };
	memcpy(s->arg, arg, size);
	(void)pthread_mutex_lock(&lane.mu);
	if (lane_start() < 0 || lane.queued >= LANE_QUEUE_MAX) {
		(void)pthread_mutex_unlock(&lane.mu);
		explicit_bzero(s->arg, size);
		free(s);
		return LANE_EBUSY;
	}
	if (lane.tail != NULL)
		lane.tail->next = s;
	else
		lane.head = s;
	lane.tail = s;
	lane.queued++;
	(void)pthread_cond_signal(&lane.work);
	clock_timespec(end_ms, &ts);
	while (!s->done) {
		if (end_ms <= 0)
			(void)pthread_cond_wait(&lane.done, &lane.mu);
		else if (pthread_cond_timedwait(&lane.done, &lane.mu, &ts) == ETIMEDOUT &&
		    !s->done) {
			rc = LANE_ETIMEOUT;
			break;
		}
	}
	if (rc == LANE_OK)
		memcpy(arg, s->arg, size);
	else if (!s->started)
		lane_unqueue(s);	/* it will not run: a step nobody waits for */
	lane_release(s);
	(void)pthread_mutex_unlock(&lane.mu);
	return rc;
}
