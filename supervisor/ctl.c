/*
 * ctl.c: the control socket RUNDIR/sluiced.ctl (mode 0600: only sluiced's user talks to
 * it), both sides.
 *
 * Protocol: the client sends one line, "status", "reload NAME" or "stop"; the server
 * answers with a first line "ok" or "error REASON", then the body, then closes.  For
 * "stop" the server answers "ok" at once but closes only by exiting, so the client
 * returns when the supervisor has finished stopping.
 *
 * The server side runs inside the poll() loop: a client gets short socket timeouts, so a
 * stuck client delays supervision by a fraction of a second at most, and a vanished one
 * (EPIPE) costs nothing.
 */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include "log.h"
#include "sluiced.h"

#define CTL_CMD_MAX	256

static int
ctl_addr(const char *path, struct sockaddr_un *sun)
{
	size_t n = strlen(path);

	memset(sun, 0, sizeof(*sun));
	sun->sun_family = AF_UNIX;
	if (n >= sizeof(sun->sun_path))
		return -1;
	memcpy(sun->sun_path, path, n + 1);
	return 0;
}

static void
ctl_timeouts(int fd, int rcv_ms, int snd_ms)
{
	struct timeval tv;

	tv.tv_sec = rcv_ms / 1000;
	tv.tv_usec = (rcv_ms % 1000) * 1000;
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	tv.tv_sec = snd_ms / 1000;
	tv.tv_usec = (snd_ms % 1000) * 1000;
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
}

/* 1 when a live sluiced answers on path, 0 otherwise (missing or stale socket). */
int
ctl_in_use(const char *path)
{
	struct sockaddr_un sun;
	int fd, rc;

	if (ctl_addr(path, &sun) == -1)
		return 0;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return 0;
	do
		rc = connect(fd, (struct sockaddr *)&sun, sizeof(sun));
	while (rc == -1 && errno == EINTR);
	close(fd);
	return rc == 0;
}

int
ctl_listen(struct sluiced *s)
{
	struct sockaddr_un sun;
	mode_t old;
	int fd, rc;

	if (ctl_addr(s->ctl_path, &sun) == -1) {
		log_err("control socket path %s too long", s->ctl_path);
		return -1;
	}
	if (unlink(s->ctl_path) == -1 && errno != ENOENT) {
		log_err("unlink %s: %s", s->ctl_path, strerror(errno));
		return -1;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		log_err("socket: %s", strerror(errno));
		return -1;
	}
	old = umask(0177);
	rc = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (rc == -1 || chmod(s->ctl_path, 0600) == -1 || listen(fd, 16) == -1) {
		log_err("control socket %s: %s", s->ctl_path, strerror(errno));
		close(fd);
		return -1;
	}
	s->ctl_fd = fd;
	return 0;
}

/* Writes all of buf; gives up on error or timeout (the client went away). */
static void
ctl_write_all(int fd, const char *buf, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = write(fd, buf, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		buf += n;
		len -= (size_t)n;
	}
}

/* Reads one command line; -1 on timeout, error or overlong input. */
static int
ctl_read_cmd(int fd, char *buf, size_t len)
{
	size_t got = 0;
	ssize_t n;
	char *nl;

	while (got < len - 1) {
		n = read(fd, buf + got, len - 1 - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		got += (size_t)n;
		buf[got] = '\0';
		if ((nl = strchr(buf, '\n')) != NULL) {
			*nl = '\0';
			return 0;
		}
	}
	buf[got] = '\0';
	return got > 0 && got < len - 1 ? 0 : -1;
}

/* Runs one command; the answer goes to out.  Returns 1 when fd must stay open (stop). */
static int
ctl_run(struct sluiced *s, char *cmd, FILE *out)
{
	struct pool *p;
	char *arg;
	size_t n;

	if ((arg = strchr(cmd, ' ')) != NULL)
		*arg++ = '\0';
	if (strcmp(cmd, "status") == 0 && arg == NULL) {
		for (p = s->pools, n = 0; p != NULL; p = p->next)
			n++;
		fprintf(out, "ok\nsluiced pid=%ld state=%s pools=%zu\n", (long)getpid(),
		    s->stopping ? "stopping" : "running", n);
		for (p = s->pools; p != NULL; p = p->next)
			pool_status(out, p);
		return 0;
	}
	if (strcmp(cmd, "reload") == 0 && arg != NULL) {
		if (s->stopping) {
			fprintf(out, "error sluiced is stopping\n");
			return 0;
		}
		if ((p = sluiced_find_pool(s, arg)) == NULL) {
			fprintf(out, "error no endpoint named '%s'\n", arg);
			return 0;
		}
		pool_reload(p, NULL, sluiced_now());
		fprintf(out, "ok\n%s reloading gen=%u\n", p->name, p->gen);
		return 0;
	}
	if (strcmp(cmd, "stop") == 0 && arg == NULL) {
		fprintf(out, "ok\n");
		sluiced_begin_stop(s);
		return 1;
	}
	fprintf(out, "error unknown command (want status, reload NAME or stop)\n");
	return 0;
}

void
ctl_accept(struct sluiced *s)
{
	char cmd[CTL_CMD_MAX], *buf = NULL;
	size_t len = 0;
	FILE *out = NULL;
	int fd, keep = 0, *grown;

	fd = accept(s->ctl_fd, NULL, NULL);
	if (fd == -1) {
		if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
			log_warn("control socket: accept: %s", strerror(errno));
		return;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	ctl_timeouts(fd, 200, 1000);
	if (ctl_read_cmd(fd, cmd, sizeof(cmd)) == -1) {
		ctl_write_all(fd, "error no command\n", 17);
		goto out;
	}
	if ((out = open_memstream(&buf, &len)) == NULL) {
		ctl_write_all(fd, "error out of memory\n", 20);
		goto out;
	}
	keep = ctl_run(s, cmd, out);
	if (fclose(out) == 0)
		ctl_write_all(fd, buf, len);
	out = NULL;
	if (keep) {
		if ((grown = realloc(s->waiters, (s->nwaiters + 1) * sizeof(*grown))) == NULL) {
			keep = 0;
			goto out;
		}
		s->waiters = grown;
		s->waiters[s->nwaiters++] = fd;
	}
out:
	if (out != NULL)
		(void)fclose(out);
	free(buf);
	if (!keep)
		close(fd);
}

int
ctl_client(const char *rundir, int argc, char **argv)
{
	struct sockaddr_un sun;
	char path[SLUICED_SUN_MAX], cmd[CTL_CMD_MAX], buf[4096], *body;
	char *resp = NULL, *grown;
	size_t rlen = 0;
	ssize_t n;
	int fd = -1, m, rc = 2;

	if (argc == 1 && (strcmp(argv[0], "status") == 0 || strcmp(argv[0], "stop") == 0))
		m = snprintf(cmd, sizeof(cmd), "%s\n", argv[0]);
	else if (argc == 2 && strcmp(argv[0], "reload") == 0)
		m = snprintf(cmd, sizeof(cmd), "reload %s\n", argv[1]);
	else {
		fprintf(stderr, "sluiced: ctl wants status, reload NAME or stop\n");
		return 2;
	}
	if (m < 0 || (size_t)m >= sizeof(cmd)) {
		fprintf(stderr, "sluiced: ctl: argument too long\n");
		return 2;
	}
	m = snprintf(path, sizeof(path), "%s/sluiced.ctl", rundir);
	if (m < 0 || (size_t)m >= sizeof(path) || ctl_addr(path, &sun) == -1) {
		fprintf(stderr, "sluiced: %s/sluiced.ctl: path too long\n", rundir);
		return 2;
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		fprintf(stderr, "sluiced: cannot reach %s: %s (is sluiced running?)\n", path,
		    strerror(errno));
		rc = 1;
		goto out;
	}
	/* stop returns when sluiced has exited, which may take the whole grace period. */
	ctl_timeouts(fd, strcmp(argv[0], "stop") == 0 ? 120000 : 10000, 10000);
	ctl_write_all(fd, cmd, (size_t)m);
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			fprintf(stderr, "sluiced: ctl: read: %s\n", strerror(errno));
			rc = 1;
			goto out;
		}
		if (n == 0)
			break;
		if ((grown = realloc(resp, rlen + (size_t)n + 1)) == NULL) {
			fprintf(stderr, "sluiced: out of memory\n");
			goto out;
		}
		resp = grown;
		memcpy(resp + rlen, buf, (size_t)n);
		rlen += (size_t)n;
		resp[rlen] = '\0';
	}
	if (resp == NULL) {
		fprintf(stderr, "sluiced: ctl: empty answer\n");
		rc = 1;
		goto out;
	}
	if (strncmp(resp, "ok\n", 3) == 0) {
		body = resp + 3;
		fputs(body, stdout);
		rc = 0;
	} else {
		body = strncmp(resp, "error ", 6) == 0 ? resp + 6 : resp;
		fprintf(stderr, "sluiced: %s", body);
		if (rlen > 0 && resp[rlen - 1] != '\n')
			fputc('\n', stderr);
		rc = 1;
	}
out:
	if (fd != -1)
		close(fd);
	free(resp);
	return rc;
}
