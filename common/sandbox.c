/*
 * sandbox.c: the workers' seccomp allow-list (see sandbox.h), built with libseccomp.
 *
 * How the list was made: the whole integration suite was run with the filter off and
 * every process of the stack under `strace -f`; the calls the workers made after start-up
 * were collected, then grouped below with the reason each group is needed.  Names that do
 * not exist on the build's architecture are skipped, so the list is written once for
 * every Linux architecture.  Calls a worker makes only before the filter (execve, bind,
 * listen, prctl ...) are left out on purpose.
 */
#include <errno.h>
#include <linux/sched.h>
#include <string.h>
#include <sys/prctl.h>

#include <seccomp.h>

#include "settings.h"
#include "log.h"
#include "sandbox.h"

static const char *const sandbox_names[] = {
	/* Sockets and files: FastCGI connections, SQLite's database, journal and WAL files
	 * (locks, syncs, truncation, the journal's removal), templates, the chat's session
	 * key (written to a temporary file, then renamed into place), the free space and
	 * read-only flag of the database's file system (/ready); fchmod: SQLite gives a
	 * -wal or -shm file it creates the database's mode; chmod: so does db_sqlite.c to
	 * a -wal or -shm file left with another one, when it opens a connection after
	 * start-up (the group commit's own, one opened again once a read-only file is
	 * writable again). */
	"read", "write", "readv", "writev", "pread64", "pwrite64", "lseek", "close",
	"openat", "open", "fstat", "newfstatat", "stat", "lstat", "statx", "access",
	"faccessat", "faccessat2", "readlink", "getcwd", "fcntl", "flock", "fsync",
	"fdatasync", "ftruncate", "fallocate", "unlink", "unlinkat", "rename", "renameat",
	"renameat2", "fchown", "fchmod", "chmod", "fchmodat", "statfs", "fstatfs",
	/* FastCGI accept and the set of waiting connections (serve.c), and libpq's
	 * (re)connections over unix or TCP sockets: non-blocking connect, poll, socket
	 * options, send and receive; name look-ups for a TCP host. */
	"accept", "accept4", "epoll_wait", "epoll_pwait", "epoll_ctl", "socket", "connect",
	"poll", "ppoll", "getsockopt",
	"setsockopt", "getsockname", "getpeername", "sendto", "recvfrom", "sendmsg",
	"recvmsg", "sendmmsg", "recvmmsg", "shutdown",
	/* Memory: malloc, SQLite's mmap of the database and its WAL index. */
	"brk", "mmap", "munmap", "mremap", "mprotect", "madvise", "msync",
	/* Threads and their synchronisation (clone and clone3: see sandbox_threads()). */
	"futex", "set_robust_list", "get_robust_list", "rseq",
	"set_tid_address", "sched_yield", "sched_getaffinity", "gettid", "exit", "exit_group",
	"getpriority", "setpriority",
	/* Signals: the SIGUSR2 wake-up (tgkill), sigwait, blocked masks, restarts. */
	"rt_sigaction", "rt_sigprocmask", "rt_sigreturn", "rt_sigtimedwait", "rt_sigpending",
	"rt_sigsuspend", "sigaltstack", "tgkill", "restart_syscall",
	/* Clocks, sleeps, random bytes (session keys, OpenSSL), identity look-ups (libpq's
	 * user name), limits. */
	"clock_gettime", "clock_getres", "clock_nanosleep", "nanosleep", "gettimeofday",
	"time", "getrandom", "getpid", "getppid", "getuid", "geteuid", "getgid", "getegid",
	"getgroups", "uname", "sysinfo", "getrlimit", "prlimit64",
};

#if defined(__SANITIZE_ADDRESS__)
/*
 * AddressSanitizer and LeakSanitizer: the exit-time leak check stops the threads from a
 * helper task that ptraces them (listing /proc/self/task with getdents), and a report
 * starts the symbolizer (fork, execve, pipes, wait).  Release builds never make these
 * calls.  A call missing here kills only LeakSanitizer's helper (a process of its own),
 * and the worker then spins at exit until sluiced's SIGKILL: test_privileges checks that
 * workers leave on SIGTERM under the filter.
 */
static const char *const sandbox_san_names[] = {
	"ptrace", "wait4", "waitid", "prctl", "getdents", "getdents64", "execve", "fork",
	"vfork", "kill", "setpgid", "getpgid", "setsid", "process_vm_readv", "setrlimit",
	"sched_setaffinity", "arch_prctl", "mincore", "pipe", "pipe2", "dup", "dup2", "dup3",
	/* A report asks whether its output is a terminal (isatty: TCGETS); without it the
	 * worker died of SIGSYS as a report began, leaving an empty report file. */
	"ioctl",
};
#endif

/*
 * clone(2) with exactly the flags glibc's pthread_create() passes: a thread, never a new
 * process.  Any other clone (fork(), vfork(), a raw clone without CLONE_THREAD) falls to
 * the default action and kills the worker.  clone3(2) takes its flags in a structure that
 * seccomp cannot read, so it fails with ENOSYS and glibc falls back to clone.
 */
#define SANDBOX_THREAD_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_SIGHAND | \
	CLONE_THREAD | CLONE_SYSVSEM | CLONE_SETTLS | CLONE_PARENT_SETTID | \
	CLONE_CHILD_CLEARTID)

#if defined(__SANITIZE_ADDRESS__)
/* LeakSanitizer's exit check runs its tracer as a task sharing the worker's memory. */
#define SANDBOX_LSAN_FLAGS (CLONE_VM | CLONE_FS | CLONE_FILES | CLONE_UNTRACED)
#endif

/* The clone and clone3 rules; 0 or -1 (logged). */
static int
sandbox_threads(scmp_filter_ctx ctx)
{
	int rc;

	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_EQ, SANDBOX_THREAD_FLAGS))) < 0)
		goto fail;
#if defined(__SANITIZE_ADDRESS__)
	if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, SCMP_SYS(clone), 1,
	    SCMP_A0(SCMP_CMP_EQ, SANDBOX_LSAN_FLAGS))) < 0)
		goto fail;
#endif
	if (seccomp_syscall_resolve_name("clone3") != __NR_SCMP_ERROR &&
	    (rc = seccomp_rule_add(ctx, SCMP_ACT_ERRNO(ENOSYS),
	    seccomp_syscall_resolve_name("clone3"), 0)) < 0)
		goto fail;
	return 0;
fail:
	log_err("seccomp: cannot add the clone rules: %s", strerror(-rc));
	return -1;
}

const char *const *
sandbox_allowed(size_t *n)
{
	*n = sizeof(sandbox_names) / sizeof(sandbox_names[0]);
	return sandbox_names;
}

/* Adds an allow rule for each name that exists here; 0 or -1 (logged). */
static int
sandbox_add(scmp_filter_ctx ctx, const char *const *names, size_t n)
{
	size_t i;
	int nr, rc;

	for (i = 0; i < n; i++) {
		if ((nr = seccomp_syscall_resolve_name(names[i])) == __NR_SCMP_ERROR)
			continue;
		if ((rc = seccomp_rule_add(ctx, SCMP_ACT_ALLOW, nr, 0)) < 0) {
			log_err("seccomp: cannot allow %s: %s", names[i], strerror(-rc));
			return -1;
		}
	}
	return 0;
}

int
sandbox_apply(void)
{
	scmp_filter_ctx ctx = NULL;
	long long on;
	int rc = -1, err;

	if (settings_int(SETTING_SECCOMP, &on) == -1)
		return -1;
	if (!on) {
		log_info("seccomp filter off (SLUICE_SECCOMP=0)");
		return 0;
	}
	/* libseccomp sets no_new_privs itself too; doing it first makes the failure plain. */
	if (prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == -1) {
		log_err("prctl(PR_SET_NO_NEW_PRIVS): %s", strerror(errno));
		goto out;
	}
	if ((ctx = seccomp_init(SCMP_ACT_KILL_PROCESS)) == NULL) {
		log_err("seccomp_init failed");
		goto out;
	}
	if (sandbox_add(ctx, sandbox_names, sizeof(sandbox_names) / sizeof(sandbox_names[0]))
	    == -1 || sandbox_threads(ctx) == -1)
		goto out;
#if defined(__SANITIZE_ADDRESS__)
	if (sandbox_add(ctx, sandbox_san_names,
	    sizeof(sandbox_san_names) / sizeof(sandbox_san_names[0])) == -1)
		goto out;
#endif
	if ((err = seccomp_load(ctx)) < 0) {
		log_err("seccomp_load: %s", strerror(-err));
		goto out;
	}
	rc = 1;
out:
	if (ctx != NULL)
		seccomp_release(ctx);
	return rc;
}
