/*
 * lane.h: the slow lane, for a request's CPU-heavy step (a bcrypt comparison, which costs
 * as much CPU as thousands of reads) that must not take the CPU from the requests sharing
 * it.
 *
 * lane_run() hands the step to a thread of the process's own slow lane, which runs at a
 * lower priority (nice LANE_NICE: the scheduler lets any ordinary request thread that
 * wakes run before it), and waits for its result within the request's time budget.  The
 * lane has one thread per CPU the process may use (at most LANE_THREADS_MAX), started at
 * its first use, and takes the steps in the order they came.  So a burst of sign-ins is
 * served at the machine's full bcrypt rate when nothing else runs, and a view or a list
 * arriving meanwhile is answered first, instead of waiting its turn among 32 runnable
 * bcrypt threads.
 *
 * The step works on its own copy of its arguments: a caller whose budget runs out while
 * the step still waits or runs returns at once (a waiting step is dropped), and the lane
 * frees the copy (wiped) when a running step is over.
 */
#ifndef SLUICE_RECORDS_LANE_H
#define SLUICE_RECORDS_LANE_H

#include <stddef.h>

#define LANE_NICE		10	/* the lane threads' nice value */
#define LANE_THREADS_MAX	8
#define LANE_QUEUE_MAX		1024	/* steps waiting, process-wide */
#define LANE_ARG_MAX		4096	/* bytes of a step's arguments */

enum lane_err {
	LANE_OK = 0,
	LANE_EBUSY = -1,	/* LANE_QUEUE_MAX steps wait already, or no thread could start */
	LANE_ETIMEOUT = -2,	/* the budget ran out first: the result is lost */
};

/*
 * Runs fn(arg) on the slow lane and waits until it is done or CLOCK_MONOTONIC reaches
 * end_ms (0: no limit).  fn gets a copy of arg's size bytes (at most LANE_ARG_MAX) and its
 * changes are copied back into arg when the step is done in time.  Returns LANE_OK,
 * LANE_EBUSY (fn did not run) or LANE_ETIMEOUT (arg unchanged: a step that had not
 * started is dropped; one that had finishes on its copy, which the lane then wipes and
 * frees).
 */
enum lane_err lane_run(void (*fn)(void *arg), void *arg, size_t size, long long end_ms);

#endif /* SLUICE_RECORDS_LANE_H */
