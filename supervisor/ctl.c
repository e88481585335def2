/*
 * ctl.c: the control socket RUNDIR/sluiced.ctl (mode 0600: only sluiced's user talks to
 * it), both sides.
 *
 * Protocol: the client sends one line, "status", "status json" (every pool's figures and
 * counters as one JSON object, stats.c), "up", "reread" (the endpoint list read again,
 * all or nothing: reread.c; "reread hold" keeps the removed pools serving until "prune"
 * stops them, see reload.c), "reload NAME", "upgrade" or "stop"; the
 * server answers with a first line "ok" or "error REASON", then the body, then closes.
 * For "stop" the server answers "ok" at once but closes only by exiting, so the client
 * returns when the supervisor has finished stopping.  "up" answers one line per pool,
 * "NAME up", "NAME starting" or "NAME failed last_exit=HOW": a pool is up when all its
 * current workers have lived POOL_QUICK_MS (a binary that cannot execute, or dies at
 * start, has shown it by then).  The client's `ctl wait [SECONDS]` asks "up" until every
 * pool is up (exit 0) or one failed or the time is over (exit 1, the pools named), which
 * is how `make run` knows that what it started is serving.
 *
 * "upgrade" is answered "ok" at once and the connection closes when sluiced replaces
 * itself with the binary it was started from (adopt.c: the same pid; the workers stay and
 * the new image adopts them).  The client's `ctl upgrade` then waits until the new image
 * answers with every pool up, and reloads the pools one by one (`reload NAME`, each up
 * again before the next), so that the workers run the new binaries too.  Under load that
 * is served throughout: the sockets never change, and a reload never refuses a request.
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
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "sluiced.h"
#include "str.h"

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

/* The "up" line of pool p: up, starting, or failed with its last exit. */
static void
ctl_pool_up(FILE *out, const struct pool *p, int64_t now)
{
	size_t i, cur = 0, old = 0;
	int up = p->state == POOL_RUNNING && !p->reloading && p->quick_fails == 0;

	for (i = 0; i < p->nw; i++) {
		if (p->w[i].gen != p->gen || p->w[i].term_at != 0) {
			old++;
			continue;
		}
		cur++;
		if (now - p->w[i].started < POOL_QUICK_MS)
			up = 0;
	}
	if (cur != (size_t)p->spec.workers)
		up = 0;
	if (p->state == POOL_FAILED) {
		fprintf(out, "%s failed last_exit=", p->name);
		if (!p->has_exit)
			fprintf(out, "none");
		else if (WIFSIGNALED(p->last_status))
			fprintf(out, "signal:%d", WTERMSIG(p->last_status));
		else
			fprintf(out, "exit:%d", WEXITSTATUS(p->last_status));
		fprintf(out, "%s\n", old > 0 ? " (the previous generation serves)" : "");
	} else {
		fprintf(out, "%s %s\n", p->name, up ? "up" : "starting");
	}
}

/* Runs one command; the answer goes to out.  Returns 1 when fd must stay open (stop). */
static int
ctl_run(struct sluiced *s, char *cmd, FILE *out)
{
	struct pool *p;
	char *arg, errbuf[4096];
	size_t n;

	if ((arg = strchr(cmd, ' ')) != NULL)
		*arg++ = '\0';
	if (strcmp(cmd, "status") == 0 && arg == NULL) {
		listenq_sample_all(s);
		for (p = s->pools, n = 0; p != NULL; p = p->next)
			n++;
		fprintf(out, "ok\nsluiced pid=%ld state=%s pools=%zu\n", (long)getpid(),
		    s->stopping ? "stopping" : "running", n);
		for (p = s->pools; p != NULL; p = p->next)
			pool_status(out, p);
		return 0;
	}
	if (strcmp(cmd, "status") == 0 && arg != NULL && strcmp(arg, "json") == 0) {
		fprintf(out, "ok\n");
		listenq_sample_all(s);
		stats_json(out, s);
		return 0;
	}
	if (strcmp(cmd, "reread") == 0 && (arg == NULL || strcmp(arg, "hold") == 0)) {
		if (reread_list(s, "ctl reload", arg != NULL, errbuf, sizeof(errbuf)) == -1)
			fprintf(out, "error %s\n", errbuf);
		else
			fprintf(out, "ok\n%s\n", errbuf);
		return 0;
	}
	if (strcmp(cmd, "prune") == 0 && arg == NULL) {
		fprintf(out, "ok\nstopped=%zu\n", s->stopping ? 0 : reread_prune(s));
		return 0;
	}
	if (strcmp(cmd, "reload") == 0 && arg != NULL) {
		if (s->stopping) {
			fprintf(out, "error sluiced is stopping\n");
			return 0;
		}
		if ((p = pool_find(s, arg)) == NULL) {
			fprintf(out, "error no endpoint named '%s'\n", arg);
			return 0;
		}
		pool_reload(p, NULL, pool_now());
		fprintf(out, "ok\n%s reloading gen=%u\n", p->name, p->gen);
		return 0;
	}
	if (strcmp(cmd, "stop") == 0 && arg == NULL) {
		fprintf(out, "ok\n");
		pool_stop_all(s);
		return 1;
	}
	if (strcmp(cmd, "upgrade") == 0 && arg == NULL) {
		if (s->stopping || s->self_exe[0] == '\0') {
			fprintf(out, "error %s\n", s->stopping ? "sluiced is stopping" :
			    "the binary sluiced was started from is not known");
			return 0;
		}
		fprintf(out, "ok\n");
		s->upgrade = 1;
		return 1;
	}
	if (strcmp(cmd, "up") == 0 && arg == NULL) {
		fprintf(out, "ok\n");
		for (p = s->pools; p != NULL; p = p->next)
			ctl_pool_up(out, p, pool_now());
		return 0;
	}
	fprintf(out, "error unknown command (want status, up, reread [hold], prune, reload NAME, "
	    "upgrade or stop)\n");
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

/*
 * Sends cmd (len bytes, newline-terminated) to the control socket at path and reads the
 * whole answer into *resp (caller frees).  Returns 0, or 1 when sluiced is not reachable
 * or the answer is cut short (said on stderr), or 2 when out of memory.
 */
static int
ctl_ask(const char *path, const char *cmd, size_t len, int rcv_ms, char **resp)
{
	struct sockaddr_un sun;
	char buf[4096], *grown;
	size_t rlen = 0;
	ssize_t n;
	int fd, rc = 1;

	*resp = NULL;
	if (ctl_addr(path, &sun) == -1)
		return 2;
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1 ||
	    connect(fd, (struct sockaddr *)&sun, sizeof(sun)) == -1) {
		fprintf(stderr, "sluiced: cannot reach %s: %s (is sluiced running?)\n", path,
		    strerror(errno));
		goto out;
	}
	ctl_timeouts(fd, rcv_ms, 10000);
	ctl_write_all(fd, cmd, len);
	for (;;) {
		n = read(fd, buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n == -1) {
			fprintf(stderr, "sluiced: ctl: read: %s\n", strerror(errno));
			goto out;
		}
		if (n == 0)
			break;
		if ((grown = realloc(*resp, rlen + (size_t)n + 1)) == NULL) {
			fprintf(stderr, "sluiced: out of memory\n");
			rc = 2;
			goto out;
		}
		*resp = grown;
		memcpy(*resp + rlen, buf, (size_t)n);
		rlen += (size_t)n;
		(*resp)[rlen] = '\0';
	}
	if (*resp == NULL) {
		fprintf(stderr, "sluiced: ctl: empty answer\n");
		goto out;
	}
	rc = 0;
out:
	if (fd != -1)
		close(fd);
	if (rc != 0) {
		free(*resp);
		*resp = NULL;
	}
	return rc;
}

/*
 * `ctl wait [SECONDS]` (default 30): asks "up" every 100 ms until every pool is up (exit
 * 0, "N pools up"), one has failed (exit 1, each failed pool named on stderr) or the time
 * is over (exit 1, the pools still starting named).  A sluiced that went away fails it.
 */
static int
ctl_wait(const char *path, int seconds)
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	char *resp = NULL, *line, *end, *sp;
	int64_t deadline = pool_now() + (int64_t)seconds * 1000;
	int pools, up, failed, rc = 1;

	for (;;) {
		free(resp);
		if (ctl_ask(path, "up\n", 3, 10000, &resp) != 0)
			return 1;
		if (strncmp(resp, "ok\n", 3) != 0) {
			fprintf(stderr, "sluiced: %s", strncmp(resp, "error ", 6) == 0 ?
			    resp + 6 : resp);
			goto out;
		}
		pools = up = failed = 0;
		for (line = resp + 3; *line != '\0'; line = end) {
			if ((end = strchr(line, '\n')) == NULL)
				end = line + strlen(line);
			else
				*end++ = '\0';
			if ((sp = strchr(line, ' ')) == NULL)
				continue;
			pools++;
			if (strcmp(sp + 1, "up") == 0)
				up++;
			else if (strncmp(sp + 1, "failed", 6) == 0) {
				failed++;
				fprintf(stderr, "sluiced: pool %.*s %s\n", (int)(sp - line), line,
				    sp + 1);
			} else if (pool_now() >= deadline)
				fprintf(stderr, "sluiced: pool %.*s still starting after %d s\n",
				    (int)(sp - line), line, seconds);
		}
		if (failed > 0 || (up < pools && pool_now() >= deadline))
			goto out;
		if (up == pools) {
			printf("%d pools up\n", pools);
			rc = 0;
			goto out;
		}
		nanosleep(&pause, NULL);
	}
out:
	free(resp);
	return rc;
}

/*
 * The state word of pool name in an "up" answer (after "ok\n"), into word[len]: 0, or -1
 * when the pool is not there.
 */
static int
ctl_up_word(const char *resp, const char *name, char *word, size_t len)
{
	const char *line, *end;
	size_t n = strlen(name);

	for (line = resp; *line != '\0'; line = *end == '\n' ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if ((size_t)(end - line) > n && strncmp(line, name, n) == 0 && line[n] == ' ') {
			(void)snprintf(word, len, "%.*s", (int)(end - line - (long)n - 1),
			    line + n + 1);
			return 0;
		}
	}
	return -1;
}

/* Waits, at most seconds, until pool name says "up": 0, or -1 (said on stderr). */
static int
ctl_wait_one(const char *path, const char *name, int seconds)
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	int64_t deadline = pool_now() + (int64_t)seconds * 1000;
	char *resp = NULL, word[256] = "";

	for (;;) {
		free(resp);
		if (ctl_ask(path, "up\n", 3, 10000, &resp) != 0)
			return -1;
		if (strncmp(resp, "ok\n", 3) == 0 &&
		    ctl_up_word(resp + 3, name, word, sizeof(word)) == 0 &&
		    strcmp(word, "up") == 0)
			break;
		if (strncmp(word, "failed", 6) == 0 || pool_now() >= deadline) {
			fprintf(stderr, "sluiced: ctl upgrade: pool %s %s\n", name, word);
			free(resp);
			return -1;
		}
		nanosleep(&pause, NULL);
	}
	free(resp);
	return 0;
}

/*
 * `ctl upgrade`: the handover ("upgrade": sluiced records its workers and executes its
 * binary anew, which adopts them), then every pool reloaded in turn onto the new
 * binaries.  0, or 1 with the step that failed on stderr.
 */
static int
ctl_upgrade(const char *path)
{
	struct timespec pause = { 0, 50 * 1000 * 1000 };
	char *resp = NULL, *up = NULL, cmd[CTL_CMD_MAX], name[CONF_NAME_MAX];
	const char *line, *sp, *end;
	int64_t deadline;
	int rc = 1, m;

	/* The answer, then the connection closed by the execv(). */
	if (ctl_ask(path, "upgrade\n", 8, 60000, &resp) != 0)
		return 1;
	if (strncmp(resp, "ok\n", 3) != 0) {
		fprintf(stderr, "sluiced: ctl upgrade: %s", strncmp(resp, "error ", 6) == 0 ?
		    resp + 6 : resp);
		goto out;
	}
	deadline = pool_now() + 30000;
	while (!ctl_in_use(path)) {
		if (pool_now() >= deadline) {
			fprintf(stderr, "sluiced: ctl upgrade: the new sluiced does not answer\n");
			goto out;
		}
		nanosleep(&pause, NULL);
	}
	if (ctl_wait(path, 30) != 0 || ctl_ask(path, "up\n", 3, 10000, &up) != 0 ||
	    strncmp(up, "ok\n", 3) != 0)
		goto out;
	printf("upgrade: sluiced runs the new binary and serves with the adopted workers\n");
	for (line = up + 3; *line != '\0'; line = *end == '\n' ? end + 1 : end) {
		end = line + strcspn(line, "\n");
		if ((sp = memchr(line, ' ', (size_t)(end - line))) == NULL ||
		    (size_t)(sp - line) >= sizeof(name))
			continue;
		memcpy(name, line, (size_t)(sp - line));
		name[sp - line] = '\0';
		m = snprintf(cmd, sizeof(cmd), "reload %s\n", name);
		free(resp);
		resp = NULL;
		if (m < 0 || (size_t)m >= sizeof(cmd) ||
		    ctl_ask(path, cmd, (size_t)m, 10000, &resp) != 0 ||
		    strncmp(resp, "ok\n", 3) != 0 || ctl_wait_one(path, name, 30) != 0) {
			fprintf(stderr, "sluiced: ctl upgrade: pool %s not reloaded; its adopted "
			    "workers serve on\n", name);
			goto out;
		}
		printf("upgrade: %s reloaded\n", name);
	}
	rc = 0;
out:
	free(resp);
	free(up);
	return rc;
}

/*
 * `ctl top [COUNT]`: COUNT frames of top.c's, one a second (0: until interrupted), each
 * from a "status json" asked then; on a terminal each frame replaces the last.
 */
static int
ctl_top(const char *path, int count)
{
	static struct top_sample s[2];
	struct timespec pause = { 1, 0 };
	int tty = isatty(STDOUT_FILENO), i, k = 0;
	char *resp = NULL;

	for (i = 0; count == 0 || i < count; i++) {
		if (i > 0)
			nanosleep(&pause, NULL);
		free(resp);
		if (ctl_ask(path, "status json\n", 12, 10000, &resp) != 0)
			return 1;
		if (strncmp(resp, "ok\n", 3) != 0 || top_parse(resp + 3, &s[k]) < 0) {
			fprintf(stderr, "sluiced: ctl top: %s", strncmp(resp, "error ", 6) == 0 ?
			    resp + 6 : "not the status JSON\n");
			free(resp);
			return 1;
		}
		s[k].at = pool_now();
		if (tty)
			fputs("\033[H\033[2J", stdout);
		top_frame(stdout, i > 0 ? &s[1 - k] : NULL, &s[k]);
		if (!tty && (count == 0 || i + 1 < count))
			fputc('\n', stdout);
		k = 1 - k;
	}
	free(resp);
	return 0;
}

int
ctl_client(const char *rundir, int argc, char **argv)
{
	char path[SLUICED_SUN_MAX], cmd[CTL_CMD_MAX], *resp = NULL, *body;
	size_t rlen;
	int64_t secs = 30;
	int m, rc;

	m = snprintf(path, sizeof(path), "%s/sluiced.ctl", rundir);
	if (m < 0 || (size_t)m >= sizeof(path)) {
		fprintf(stderr, "sluiced: %s/sluiced.ctl: path too long\n", rundir);
		return 2;
	}
	if ((argc == 1 || argc == 2) && strcmp(argv[0], "wait") == 0) {
		if (argc == 2) {
			if (str_to_int(argv[1], strlen(argv[1]), 1, 3600, &secs) < 0) {
				fprintf(stderr, "sluiced: ctl wait: want seconds in [1, 3600]\n");
				return 2;
			}
		}
		return ctl_wait(path, (int)secs);
	}
	if ((argc == 1 || argc == 2) && strcmp(argv[0], "top") == 0) {
		secs = 0;
		if (argc == 2 && str_to_int(argv[1], strlen(argv[1]), 1, 86400, &secs) < 0) {
			fprintf(stderr, "sluiced: ctl top: want a count of frames in [1, 86400]\n");
			return 2;
		}
		return ctl_top(path, (int)secs);
	}
	if (argc == 1 && strcmp(argv[0], "upgrade") == 0)
		return ctl_upgrade(path);
	if (argc == 1 && (strcmp(argv[0], "status") == 0 || strcmp(argv[0], "stop") == 0 ||
	    strcmp(argv[0], "up") == 0))
		m = snprintf(cmd, sizeof(cmd), "%s\n", argv[0]);
	else if (argc == 2 && strcmp(argv[0], "status") == 0 && strcmp(argv[1], "--json") == 0)
		m = snprintf(cmd, sizeof(cmd), "status json\n");
	else if (argc == 1 && strcmp(argv[0], "reload") == 0)
		return reload_client(rundir, path, ctl_ask);
	else if (argc == 2 && strcmp(argv[0], "reload") == 0)
		m = snprintf(cmd, sizeof(cmd), "reload %s\n", argv[1]);
	else {
		fprintf(stderr, "sluiced: ctl wants status [--json], top [COUNT], up, wait "
		    "[SECONDS], reload [NAME], upgrade or stop\n");
		return 2;
	}
	if (m < 0 || (size_t)m >= sizeof(cmd)) {
		fprintf(stderr, "sluiced: ctl: argument too long\n");
		return 2;
	}
	/* stop returns when sluiced has exited, which may take the whole grace period. */
	rc = ctl_ask(path, cmd, (size_t)m, strcmp(argv[0], "stop") == 0 ? 120000 : 10000,
	    &resp);
	if (rc != 0)
		return rc;
	rlen = strlen(resp);
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
	free(resp);
	return rc;
}
