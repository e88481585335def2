/*
 * serve_gate.h: how many of a worker's serving threads wait for a request at once.
 *
 * A worker runs many serving threads (64 by default) so that requests which sleep (on a
 * write batch's commit, on PostgreSQL) do not hold the others back; but a thread that
 * sleeps for a *request* is only needed while the others are busy.  The gate lets a few
 * threads wait for requests (in epoll_pwait(): serve.c) and parks the rest on a stack,
 * the last parked first out, until they are needed: when a thread is about to sleep on
 * something else with nobody left waiting for requests (serve_gate_blocking()), or when
 * nobody has waited for requests for a while (every waiting thread taken by requests that
 * run long: the gate's keeper thread).  The details and the measurements are in
 * serve_gate.c.
 *
 * One gate per process: serve.c starts it before its serving threads and stops it when
 * they leave.  serve_gate_blocking() may be called from anywhere, gate or not.
 */
#ifndef SLUICE_SERVE_GATE_H
#define SLUICE_SERVE_GATE_H

#include <pthread.h>

/* A serving thread's place on the gate's stack of parked threads; the thread owns it
 * (on its stack) and passes it to every serve_gate_enter(). */
struct serve_gate_slot {
	pthread_cond_t cv;
	struct serve_gate_slot *next;
	int called;		/* set by whoever woke it: its turn to wait for a request */
};

/*
 * Starts the process's gate for threads serving threads, of which at most awake wait for
 * requests at once (clamped to 1..threads), and its keeper thread.  Returns 0, or -1
 * (logged) when the keeper cannot start: the worker then cannot serve.
 */
int serve_gate_start(int threads, int awake);

/* Initialises slot for serve_gate_enter(); serve_gate_slot_fini() frees it. */
void serve_gate_slot_init(struct serve_gate_slot *slot);
void serve_gate_slot_fini(struct serve_gate_slot *slot);

/*
 * Waits for the calling thread's turn to wait for a request (at once while fewer than
 * awake threads wait).  Returns 0, or -1 once the gate is stopping (the thread leaves).
 * Each 0 is followed by one serve_gate_leave() when the thread stops waiting.
 */
int serve_gate_enter(struct serve_gate_slot *slot);
void serve_gate_leave(void);

/*
 * Says that a serving thread is about to sleep on something other than a request: if no
 * thread waits for requests, a parked one is called to.  Cheap when some thread waits
 * (two atomic loads); a no-op in a process without a gate (CGI, tests).  serve.c installs
 * it as the database layer's hook (extern.h's db_blocking_hook()), which calls it: the
 * database layer does not know the gate.
 */
void serve_gate_blocking(void);

/* Wakes every parked thread (their serve_gate_enter() returns -1 from now on) and ends
 * the keeper.  Called once, by the thread that started the gate. */
void serve_gate_stop(void);

#endif /* SLUICE_SERVE_GATE_H */
