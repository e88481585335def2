/*
 * stack.h: the real stack for integration tests.
 *
 * stack_start() writes an endpoint list into a fresh temporary directory, starts the real
 * sluiced on it (sockets, workers from SLUICE_BIN; sluiced itself from SLUICE_BIN, or from
 * SLUICE_TEST_SLUICED when set, a copy whose file a test replaces), generates the nginx configuration of the
 * chosen profile with sluiced itself (-o PREFIX/nginx.conf, so that RUNDIR/proxy.args lets
 * `ctl reload` make it anew and reload nginx), starts the real nginx on a free loopback port from a
 * prefix inside that directory, and waits until both answer.  stack_start_server() does
 * the same with the front server chosen: "nginx" (profiles default, tuned) or "apache"
 * (default, tuned, cgi, fcgid; the cgi and fcgid profiles run no sluiced, Apache starts
 * the binaries itself; as root, RUNDIR is given to www-data, Apache's user).  stack_stop()
 * stops everything,
 * reaps every process and removes the directory.  As root, when the run user cannot reach
 * SLUICE_BIN (a tree under a private directory), the binaries, their templates and the
 * binary= files of the endpoint list are copied into the directory first; it is also run at exit for any stack still
 * up, so a failing test leaves nothing behind.
 */
#ifndef SLUICE_STACK_H
#define SLUICE_STACK_H

#include <stddef.h>
#include <sys/types.h>

#include "buf.h"

struct stack {
	char dir[256];		/* temporary directory holding everything */
	char run[300];		/* RUNDIR: sockets, ctl socket */
	char conf[300];		/* the endpoint list */
	char base[64];		/* "http://127.0.0.1:PORT" */
	int port;
	pid_t sluiced;
	pid_t nginx;
	pid_t apache;
	int nginx_workers;	/* nginx workers, or Apache's child processes */
	const char *profile;
	const char *server;	/* "nginx" or "apache" */
	char prefix[300];	/* the front server's prefix (config, logs) */
	char bin[4096];		/* the workers' binaries: SLUICE_BIN, or a copy in dir when
				 * the run user cannot reach it (root, a private tree) */
};

/* The directory of the binaries under test: SLUICE_BIN, else bin, made absolute where it
 * exists (static storage). */
const char *stack_bin(void);

/*
 * Starts sluiced and nginx.  endpoints is the body of the endpoint list (the "set listen"
 * line is added); profile is "default" or "tuned"; nginx_workers > 0.  extra_nginx_args are
 * passed to "sluiced nginx" (e.g. "-k 8"), may be NULL.  Returns 0, or -1 with the reason on
 * stderr (the logs under dir are printed too).
 */
int stack_start(struct stack *s, const char *endpoints, const char *profile,
    int nginx_workers, const char *extra_nginx_args);

/*
 * The same with the front server named: server "nginx" or "apache", profile one of that
 * server's (see above), workers its worker or child processes (> 0), extra_args passed to
 * "sluiced nginx|apache" (e.g. "-k 8"), may be NULL.  Returns 0 or -1 like stack_start().
 */
int stack_start_server(struct stack *s, const char *endpoints, const char *server,
    const char *profile, int workers, const char *extra_args);
void stack_stop(struct stack *s);

/*
 * A binary at path that the stack's workers can execute, for an endpoint line added after
 * the start (a SIGHUP test): path itself, or as root in a private tree a copy under the
 * stack's directory.  Writes it into out[len]; returns 0, or -1 (too long, copy failed).
 */
int stack_reachable(const struct stack *s, const char *path, char *out, size_t len);

/*
 * Starts sluiced again on the stack's list and run directory, with the same command line
 * (after the test killed it and reaped it: s->sluiced is then the new one), and waits for
 * its control socket.  0, or -1 with the reason on stderr.
 */
int stack_restart_sluiced(struct stack *s);

/* Runs "sluiced -r RUN ctl ARGS" and returns its exit status; its output goes to out
 * (may be NULL). */
int stack_ctl(struct stack *s, struct buf *out, const char *args);

/*
 * Reads "NAME key=value ..." from ctl status for pool name: the integer value of key
 * ("spawns", "crashes"), or -1 when absent.  For "workers", the number of live workers
 * (before the '/').  state (may be NULL) receives the state word.
 */
long stack_pool_value(struct stack *s, const char *name, const char *key);
/* The text after " key=" in the ctl status line of pool name ("sizing", "pids") into
 * val[len]: 0, or -1 when absent or too long. */
int stack_pool_field(struct stack *s, const char *name, const char *key, char *val,
    size_t len);
int stack_pool_state(struct stack *s, const char *name, char *state, size_t len);

/* Waits up to ms for pool name to report all its workers up; 0 or -1. */
int stack_wait_pool(struct stack *s, const char *name, int ms);

/* The pids of the live workers of pool name (from /proc: children of sluiced whose
 * SLUICE_NAME is name), at most max; returns the count. */
int stack_worker_pids(struct stack *s, const char *name, pid_t *pids, int max);

/* Kills a worker of pool name with SIGKILL n times, one every every_ms (which should wait
 * out the supervisor's quick-failure window for the worker that replaced the previous
 * victim), taking them in turn among the workers alive at each kill.  Returns how many
 * were killed. */
int stack_kill_workers(struct stack *s, const char *name, int n, int every_ms);

/* A value in kB from /proc/PID/status (key with its colon: "VmRSS:", "VmHWM:"), or -1. */
long stack_proc_kb(pid_t pid, const char *key);

/* 1 when pid runs with AddressSanitizer (a SANITIZE=1 build): its quarantine keeps freed
 * memory (up to 256 MB) on purpose, so its RSS says nothing about leaks or caps. */
int stack_under_asan(pid_t pid);

/*
 * The pinning workload of the keepalive tests: a burst of 500 concurrent GETs of
 * s->base + /health (which fills the proxy's idle-connection caches), 200 sequential ones,
 * and a second burst.  Returns the number of requests that failed, got another status
 * than 200 or took longer than limit seconds; with stop_early (a negative control that
 * expects stalls) it returns at the first.
 */
int stack_pinning_workload(struct stack *s, double limit, long timeout_ms, int stop_early);

/* A free TCP port on loopback (bound, read and released: a small race, fine for tests),
 * or -1. */
int stack_free_port(void);

/* Milliseconds on a monotonic clock. */
long long stack_now_ms(void);
/* Waits up to ms for pid; SIGKILLs it past that.  Returns its wait status (a SIGKILL
 * status when it had to be killed) or -1. */
int stack_reap(pid_t pid, int ms);

/* The seeder NAME (e.g. "chinook-seed") of the build under test: build/san/sql/NAME when
 * SLUICE_BIN is the sanitizer build's, else build/rel/sql/NAME.  A static buffer: use it
 * before the next call. */
const char *stack_seeder(const char *name);

/* The directory holding the running program (build/<rel|san>/tests for an integration
 * test) into out; 0, or -1 when /proc/self/exe cannot be read or out is too short. */
int stack_self_dir(char *out, size_t len);

/* How many lines of the stack's sluiced.log (sluiced's and the workers' stderr) hold
 * needle; -1 when it cannot be read. */
int stack_log_count(const struct stack *s, const char *needle);

/* Runs a shell command, returns its exit status (-1 if it could not run). */
int stack_sh(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

#endif /* SLUICE_STACK_H */
