/*
 * sandbox.h: the seccomp filter of a worker process.
 *
 * A worker applies it once, after its start-up work (settings read, database connections
 * opened, listening socket found) and before its serving threads start, so the threads
 * inherit it.  From then on the process may only make the system calls that serving
 * requests needs: reading and writing its sockets and database files, SQLite's locks and
 * mmap, libpq's (re)connections over unix or TCP sockets, memory, threads (clone with the
 * flags of pthread_create only: no fork; clone3 fails with ENOSYS) and futexes,
 * signals (the SIGUSR2 wake-up, sigwait), clocks and random bytes.  Any other call kills
 * the whole process with SIGSYS (SECCOMP_RET_KILL_PROCESS): sluiced logs the death and
 * starts a fresh worker, so a compromised worker cannot ptrace, mount, execve, open a
 * listening socket, change credentials or load kernel modules.  PR_SET_NO_NEW_PRIVS is
 * set first, which seccomp requires of an unprivileged process.
 *
 * A worker that must start a program does it through a helper process forked before the
 * filter applies (the records API's mail command: apps/records/mail.h), and only send()s
 * to it afterwards.
 *
 * The list is in sandbox.c with the reason for each group; sanitizer builds (ASan and
 * UBSan, detected at compile time) allow a few more calls that the sanitizers' reports
 * and LeakSanitizer's exit check make (ptrace, execve of the symbolizer, ...).
 *
 * SLUICE_SECCOMP=0 in the environment (or seccomp=0 on the endpoint's line) turns the
 * filter off for debugging (strace, gdb); any other value, or none, turns it on.
 */
#ifndef SLUICE_SANDBOX_H
#define SLUICE_SANDBOX_H

#include <stddef.h>

/*
 * Applies the filter to the calling process (all its threads created afterwards), unless
 * SLUICE_SECCOMP=0.  Returns 1 when applied, 0 when turned off, -1 when it could not be
 * applied (logged); the worker then refuses to start rather than run unconfined.
 */
int sandbox_apply(void);

/* The allowed system calls' names, for tests and documentation: the number of entries
 * stored in *n.  Borrowed, static. */
const char *const *sandbox_allowed(size_t *n);

#endif /* SLUICE_SANDBOX_H */
