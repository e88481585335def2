/*
 * test_sandbox: the workers' seccomp filter (common/sandbox.c) in forked children: allowed
 * calls (threads, files, sockets) work under it, a forbidden one (mount, execve) kills the
 * process with SIGSYS, and SLUICE_SECCOMP=0 leaves the process unfiltered.
 */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include "sandbox.h"
#include "../lib/harness.h"

/* Runs fn in a child (SLUICE_SECCOMP set to seccomp, or unset when NULL); its status. */
static int
in_child(const char *seccomp, int (*fn)(void))
{
	pid_t pid;
	int status = -1;

	fflush(NULL);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (seccomp != NULL)
			setenv("SLUICE_SECCOMP", seccomp, 1);
		else
			unsetenv("SLUICE_SECCOMP");
		/* _exit: the child's exit code is fn's verdict, nothing else runs after it. */
		_exit(fn());
	}
	while (waitpid(pid, &status, 0) == -1 && errno == EINTR)
		continue;
	return status;
}

static int
try_mount(void)
{
	return syscall(SYS_mount, "none", "/nonexistent/sluice", "tmpfs", 0UL, NULL) == 0 ? 3 :
	    0;
}

static void *
thread_main(void *arg)
{
	return arg;
}

/* What a serving worker does under the filter: threads, a file, a socket pair of calls. */
static int
child_allowed(void)
{
	pthread_t t;
	void *ret = NULL;
	char path[64], buf[4];
	int fd, s;

	if (sandbox_apply() != 1)
		return 10;
	if (pthread_create(&t, NULL, thread_main, (void *)1) != 0 ||
	    pthread_join(t, &ret) != 0 || ret != (void *)1)
		return 11;
	snprintf(path, sizeof(path), "/tmp/sluice-sandbox-%ld", (long)getpid());
	if ((fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0600)) < 0 || write(fd, "ok", 2) != 2 ||
	    pread(fd, buf, 2, 0) != 2 || fsync(fd) != 0 || close(fd) != 0 || unlink(path) != 0)
		return 12;
	if ((s = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0 || close(s) != 0)
		return 13;
	return 0;
}

static int
child_mount(void)
{
	if (sandbox_apply() != 1)
		return 10;
	return try_mount();
}

#if !defined(__SANITIZE_ADDRESS__)
static int
child_execve(void)
{
	char *argv[] = { (char *)(unsigned long)"/bin/true", NULL };

	if (sandbox_apply() != 1)
		return 10;
	execv(argv[0], argv);
	return 4;
}
#endif

/* fork() is a clone without CLONE_THREAD: it must kill the worker, never return. */
static int
child_fork(void)
{
	pid_t pid;

	if (sandbox_apply() != 1)
		return 10;
	if ((pid = fork()) == 0)
		_exit(0);
	return pid > 0 ? 5 : 6;
}

/* The raw system call with only an exit signal (what a hand-written fork would pass). */
static int
child_clone_process(void)
{
	long rc;

	if (sandbox_apply() != 1)
		return 10;
	if ((rc = syscall(SYS_clone, (unsigned long)SIGCHLD, 0UL, NULL, NULL, 0UL)) == 0)
		_exit(0);
	return rc > 0 ? 5 : 6;
}

#if defined(SYS_clone3)
/* clone3 answers ENOSYS (so libc falls back to clone) and nobody dies. */
static int
child_clone3(void)
{
	if (sandbox_apply() != 1)
		return 10;
	if (syscall(SYS_clone3, NULL, (size_t)0) != -1)
		return 7;
	return errno == ENOSYS ? 0 : 8;
}
#endif

static int
child_off(void)
{
	if (sandbox_apply() != 0)
		return 10;
	return try_mount();
}

static void
test_allowed_calls_work(void)
{
	int st = in_child(NULL, child_allowed);

	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
}

static void
test_forbidden_call_kills(void)
{
	int st = in_child("1", child_mount);

	CHECK(WIFSIGNALED(st));
	CHECK_INT(WTERMSIG(st), SIGSYS);
#if !defined(__SANITIZE_ADDRESS__)
	/* Sanitizer builds allow execve for their symbolizer (sandbox.c). */
	st = in_child(NULL, child_execve);
	CHECK(WIFSIGNALED(st));
	CHECK_INT(WTERMSIG(st), SIGSYS);
#endif
}

/* Regression: the filter allowed clone with any flags, so a worker could fork. */
static void
test_fork_under_filter_kills(void)
{
	int st = in_child("1", child_fork);

	CHECK(WIFSIGNALED(st));
	CHECK_INT(WTERMSIG(st), SIGSYS);
	st = in_child("1", child_clone_process);
	CHECK(WIFSIGNALED(st));
	CHECK_INT(WTERMSIG(st), SIGSYS);
#if defined(SYS_clone3)
	st = in_child("1", child_clone3);
	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
#endif
}

static void
test_off_switch(void)
{
	int st = in_child("0", child_off);

	/* mount itself fails (not root, or no such directory), but nobody is killed. */
	CHECK(WIFEXITED(st));
	CHECK_INT(WEXITSTATUS(st), 0);
}

static void
test_list(void)
{
	const char *const *names;
	size_t n, i;
	int accept = 0, futex = 0, bad = 0, clone = 0;

	names = sandbox_allowed(&n);
	printf("  %zu system calls allowed\n", n);
	CHECK(n > 50);
	for (i = 0; i < n; i++) {
		accept += strcmp(names[i], "accept") == 0;
		futex += strcmp(names[i], "futex") == 0;
		/* clone is allowed by a rule on its flags, never by name. */
		clone += strcmp(names[i], "clone") == 0 || strcmp(names[i], "clone3") == 0;
		bad += strcmp(names[i], "ptrace") == 0 || strcmp(names[i], "execve") == 0 ||
		    strcmp(names[i], "mount") == 0 || strcmp(names[i], "setuid") == 0 ||
		    strcmp(names[i], "bind") == 0 || strcmp(names[i], "listen") == 0;
	}
	CHECK_INT(accept, 1);
	CHECK_INT(futex, 1);
	CHECK_INT(bad, 0);
	CHECK_INT(clone, 0);
}

int
main(void)
{
	RUN(test_allowed_calls_work);
	RUN(test_forbidden_call_kills);
	RUN(test_fork_under_filter_kills);
	RUN(test_off_switch);
	RUN(test_list);
	return harness_done();
}
