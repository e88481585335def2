/*
 * mail.c: see mail.h.  The helper is forked while the worker has a single thread (main(),
 * before serve_main()), so the child inherits no lock held by another thread.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "mail.h"

static int mail_fd = -1;		/* the worker's end; -1: no helper */

/* Writes all of p[0..len) to fd; 0 or -1. */
static int
mail_write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		if ((n = write(fd, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/* Runs argv with msg on its standard input and waits for it (the helper's step). */
static void
mail_run(char *const argv[], const char *msg, size_t len)
{
	static char *const envp[] = { (char *)(uintptr_t)"PATH=/usr/sbin:/usr/bin:/sbin:/bin",
	    NULL };
	int p[2], status;
	pid_t pid;

	if (pipe(p) < 0) {
		log_err("records mail: pipe: %s", strerror(errno));
		return;
	}
	if ((pid = fork()) < 0) {
		log_err("records mail: fork: %s", strerror(errno));
		close(p[0]);
		close(p[1]);
		return;
	}
	if (pid == 0) {
		if (dup2(p[0], 0) < 0)
			_exit(127);
		close(p[0]);
		close(p[1]);
		execve(argv[0], argv, envp);
		_exit(127);
	}
	close(p[0]);
	if (mail_write_all(p[1], msg, len) < 0)
		log_err("records mail: writing to %s: %s", argv[0], strerror(errno));
	close(p[1]);
	while (waitpid(pid, &status, 0) < 0)
		if (errno != EINTR)
			return;
	if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
		log_err("records mail: %s failed (status %d): a message was not sent", argv[0],
		    WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status));
}

/* The helper: every message received on fd goes to the command; leaves at the end. */
static void __attribute__((noreturn))
mail_helper(int fd, char *const argv[])
{
	struct sigaction sa;
	char *msg;
	ssize_t n;
	int i, nul;

	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
	sa.sa_handler = SIG_DFL;
	sigaction(SIGCHLD, &sa, NULL);
	(void)prctl(PR_SET_PDEATHSIG, SIGTERM);
	/* Nothing of the worker's but the socket and the log: its FastCGI socket (fd 0) and
	 * its database files stay the worker's. */
	if ((nul = open("/dev/null", O_RDWR)) >= 0) {
		(void)dup2(nul, 0);
		(void)dup2(nul, 1);
	}
	for (i = 3; i < 1024; i++)
		if (i != fd)
			close(i);
	if ((msg = malloc(MAIL_MAX)) == NULL)
		_exit(1);
	for (;;) {
		n = recv(fd, msg, MAIL_MAX, 0);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			_exit(0);
		mail_run(argv, msg, (size_t)n);
	}
}

int
mail_start(const char *cmd)
{
	static char words[4096];
	static char *argv[MAIL_ARGS_MAX + 1];
	size_t len;
	char *p, *save = NULL;
	int sv[2], n = 0;
	pid_t pid;

	if (cmd == NULL || *cmd == '\0')
		return 0;
	if ((len = strlen(cmd)) >= sizeof(words)) {
		log_err("records: SLUICE_RECORDS_SENDMAIL is too long");
		return -1;
	}
	memcpy(words, cmd, len + 1);
	for (p = strtok_r(words, ", \t", &save); p != NULL; p = strtok_r(NULL, ", \t", &save)) {
		if (n == MAIL_ARGS_MAX) {
			log_err("records: SLUICE_RECORDS_SENDMAIL has more than %d words",
			    MAIL_ARGS_MAX);
			return -1;
		}
		argv[n++] = p;
	}
	argv[n] = NULL;
	if (n == 0 || argv[0][0] != '/' || access(argv[0], X_OK) < 0) {
		log_err("records: SLUICE_RECORDS_SENDMAIL=%s: want an executable's absolute path "
		    "first", cmd);
		return -1;
	}
	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv) < 0) {
		log_err("records: socketpair: %s", strerror(errno));
		return -1;
	}
	if ((pid = fork()) < 0) {
		log_err("records: fork: %s", strerror(errno));
		close(sv[0]);
		close(sv[1]);
		return -1;
	}
	if (pid == 0) {
		close(sv[0]);
		mail_helper(sv[1], argv);
	}
	close(sv[1]);
	mail_fd = sv[0];
	return 0;
}

int
mail_on(void)
{
	return mail_fd >= 0;
}

int
mail_send(const char *msg, size_t len)
{
	ssize_t n;

	if (mail_fd < 0 || len == 0 || len > MAIL_MAX)
		return -1;
	do
		n = send(mail_fd, msg, len, MSG_DONTWAIT | MSG_NOSIGNAL);
	while (n < 0 && errno == EINTR);
	return n == (ssize_t)len ? 0 : -1;
}

void
mail_stop(void)
{
	if (mail_fd >= 0)
		close(mail_fd);
	mail_fd = -1;
}
