/*
 * adopt.c: a sluiced that dies (kill -9, a crash) or is upgraded takes no worker with it,
 * and the next one adopts them.
 *
 * The record.  sluiced keeps RUNDIR/sluiced.workers true (adopt_record(), rewritten
 * atomically whenever its workers change): one line per worker with its pool, its pid,
 * its start time in the kernel's clock ticks (field 22 of /proc/PID/stat, which a reused
 * pid does not share), its serving threads, whether it was asked to stop, and its pool's
 * socket.  A graceful stop removes it.
 *
 * The orphans.  A worker no longer dies with its supervisor (pool.c sets no parent-death
 * signal): it goes on serving on its listening socket, which it holds on fd 0, and leaves
 * on its own only when sluiced's heartbeat on its watchdog page has been silent for
 * orphan_grace_ms (30 s; common/serve.c).  nginx, which sluiced does not start, keeps
 * connecting to the same socket files, so requests go on being served meanwhile.
 *
 * The adoption.  A sluiced started on the same run directory (after the check that no
 * other answers on its control socket) reads the record, and as it makes each pool
 * (adopt_pool(), from pool.c, before anything is bound) opens a pidfd for each recorded
 * worker of that pool and keeps it only when the pid still has the recorded start time
 * (checked after the pidfd is open, so the pidfd is that process).  From one such worker
 * it takes the pool's listening socket itself with pidfd_getfd() (fd 0), and checks that
 * it listens at the pool's address: the socket is kept, never unlinked and bound again,
 * so nginx never meets a missing or new socket.  From each worker it takes the watchdog's
 * page (fd 3, where it writes the heartbeat again at once) and the counters' page (fd 4),
 * which the workers keep open for this.  The adopted workers are then the pool's current
 * generation like any other: the watchdog watches them, their counters count, `ctl status`
 * lists them (adopted=N), reloads replace them, and a stop stops them.  A non-child cannot
 * be waited for: its pidfd is in the poll loop (sluiced.c) and turns readable when it
 * exits; its exit status is not known then (the kernel gives it to the parent only), and
 * the pool starts its replacement as after any death.  Signals go through the pidfd, so a
 * reused pid is never signalled.
 *
 * What is not adopted: a worker whose pid was reused or is gone, every worker of a pool
 * whose socket cannot be taken or is not at the pool's address (those are told to stop
 * and the pool binds its socket anew, as before), and the workers of a pool no longer in
 * the list (left to leave at the end of their grace).  pidfd_getfd() needs the right to
 * ptrace the worker: sluiced started as root adopts before it drops root; started as the
 * workers' user it needs a Yama ptrace_scope of 0 (or none), else it says so and binds
 * anew.
 *
 * The upgrade (`ctl upgrade`, ctl.c): the running sluiced writes the record and replaces
 * itself with execv() of the binary it was started from (the same path, now the new
 * binary), keeping its pid and so its children; the new image adopts them as above.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include "log.h"
#include "settings.h"
#include "sluiced.h"
#include "str.h"

#ifndef P_PIDFD
#define P_PIDFD	3
#endif

/* One line of the record. */
struct adopt_rec {
	char pool[CONF_NAME_MAX];
	char sock[SLUICED_SUN_MAX];
	pid_t pid;
	unsigned long long start;
	int threads;
	int stopping;
};

int
adopt_start_time(pid_t pid, unsigned long long *start)
{
	char path[64], buf[1024], *p, *end;
	unsigned long long v;
	ssize_t n;
	int fd, field;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) == -1)
		return -1;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return -1;
	buf[n] = '\0';
	/* The command may hold blanks and parentheses: fields count from the last ')'. */
	if ((p = strrchr(buf, ')')) == NULL || p[1] != ' ' || p[2] == 'Z')
		return -1;
	for (field = 3, p += 1; field < 22 && p != NULL; field++)
		p = strchr(p + 1, ' ');
	if (p == NULL)
		return -1;
	errno = 0;
	v = strtoull(p + 1, &end, 10);
	if (errno != 0 || end == p + 1 || *end != ' ')
		return -1;
	*start = v;
	return 0;
}

int
adopt_signal(const struct worker *w, int sig)
{
	if (w->pidfd >= 0)
		return (int)syscall(SYS_pidfd_send_signal, w->pidfd, sig, NULL, 0);
	return kill(w->pid, sig);
}

int
adopt_wait(int pidfd)
{
	siginfo_t si;

	memset(&si, 0, sizeof(si));
	/* Our own child (after an upgrade's execv()) has a status; anyone else's has not. */
	if (waitid((idtype_t)P_PIDFD, (id_t)pidfd, &si, WEXITED | WNOHANG) == 0 &&
	    si.si_pid != 0) {
		if (si.si_code == CLD_EXITED)
			return W_EXITCODE(si.si_status, 0);
		return W_EXITCODE(0, si.si_status);
	}
	return POOL_STATUS_UNKNOWN;
}

/* The record's path into s->adopt_path: 0, or -1 when too long. */
static int
adopt_path(struct sluiced *s)
{
	int m = snprintf(s->adopt_path, sizeof(s->adopt_path), "%s/sluiced.workers",
	    s->rundir);

	return m < 0 || (size_t)m >= sizeof(s->adopt_path) ? -1 : 0;
}

/* One "worker POOL PID START THREADS STOPPING SOCK" line into r: 0, or -1. */
static int
adopt_parse(const char *line, struct adopt_rec *r)
{
	/* The numbers' bounds: a pid, clock ticks, threads, a flag. */
	static const int64_t max[4] = { INT32_MAX, INT64_MAX, 1024, 1 };
	static const int64_t min[4] = { 2, 0, 1, 0 };
	int64_t v[4];
	const char *p = line + 7, *end;
	size_t i, len;

	memset(r, 0, sizeof(*r));
	if (strncmp(line, "worker ", 7) != 0 || (len = strcspn(p, " ")) == 0 ||
	    len >= sizeof(r->pool) || p[len] != ' ')
		return -1;
	memcpy(r->pool, p, len);
	r->pool[len] = '\0';
	for (p += len + 1, i = 0; i < 4; i++, p = end + 1) {
		end = p + strcspn(p, " ");
		if (*end != ' ' || str_to_int(p, (size_t)(end - p), min[i], max[i], &v[i]) == -1)
			return -1;
	}
	if (*p == '\0' || strlen(p) >= sizeof(r->sock))
		return -1;
	memcpy(r->sock, p, strlen(p) + 1);
	r->pid = (pid_t)v[0];
	r->start = (unsigned long long)v[1];
	r->threads = (int)v[2];
	r->stopping = (int)v[3];
	return 0;
}

void
adopt_load(struct sluiced *s)
{
	char line[512 + SLUICED_SUN_MAX];
	struct adopt_rec *grown;
	FILE *f;
	size_t n;

	if (adopt_path(s) == -1 || (f = fopen(s->adopt_path, "re")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		n = strlen(line);
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (strncmp(line, "worker ", 7) != 0)
			continue;
		if ((grown = realloc(s->adopt, (s->nadopt + 1) * sizeof(*grown))) == NULL)
			break;
		s->adopt = grown;
		if (adopt_parse(line, &s->adopt[s->nadopt]) == 0)
			s->nadopt++;
		else
			log_warn("%s: malformed line '%s', skipped", s->adopt_path, line);
	}
	(void)fclose(f);
	if (s->nadopt > 0)
		log_info("%s: %zu workers of a previous sluiced to adopt", s->adopt_path,
		    s->nadopt);
}

/* A pidfd for r's worker when it is the process recorded (same start time), or -1. */
static int
adopt_open(const struct adopt_rec *r)
{
	unsigned long long start;
	int fd;

	if ((fd = (int)syscall(SYS_pidfd_open, r->pid, 0)) == -1)
		return -1;
	if (adopt_start_time(r->pid, &start) == -1 || start != r->start) {
		(void)close(fd);
		return -1;
	}
	return fd;
}

/* Whether fd listens at want ("PATH", or "tcp:ADDR:PORT" as pool.c names a TCP pool). */
static int
adopt_listens_at(int fd, const char *want)
{
	struct sockaddr_storage ss;
	struct sockaddr_un *sun = (struct sockaddr_un *)&ss;
	struct sockaddr_in *sin = (struct sockaddr_in *)&ss;
	socklen_t len = sizeof(ss);
	char got[SLUICED_SUN_MAX + 32], addr[INET_ADDRSTRLEN];
	int v = 0;
	socklen_t vlen = sizeof(v);

	memset(&ss, 0, sizeof(ss));
	if (getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &vlen) == -1 || !v ||
	    getsockname(fd, (struct sockaddr *)&ss, &len) == -1)
		return 0;
	if (ss.ss_family == AF_UNIX)
		(void)snprintf(got, sizeof(got), "%.*s", (int)sizeof(sun->sun_path),
		    sun->sun_path);
	else if (ss.ss_family == AF_INET &&
	    inet_ntop(AF_INET, &sin->sin_addr, addr, sizeof(addr)) != NULL)
		(void)snprintf(got, sizeof(got), "tcp:%s:%u", addr,
		    (unsigned)ntohs(sin->sin_port));
	else
		return 0;
	return strcmp(got, want) == 0;
}

/* Maps the page on the worker's descriptor target (its size must be size exactly), or
 * NULL. */
static void *
adopt_page(int pidfd, int target, size_t size)
{
	struct stat st;
	void *m = NULL;
	int fd;

	if ((fd = (int)syscall(SYS_pidfd_getfd, pidfd, target, 0)) == -1)
		return NULL;
	if (fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (size_t)st.st_size == size &&
	    (m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0)) == MAP_FAILED)
		m = NULL;
	(void)close(fd);
	return m;
}

/* r's worker (pidfd fd) into w, as one of p's workers at now. */
static void
adopt_worker(const struct pool *p, const struct adopt_rec *r, int fd, int64_t now,
    struct worker *w)
{
	memset(w, 0, sizeof(*w));
	w->pid = r->pid;
	w->pidfd = fd;
	w->adopted = 1;
	w->start = r->start;
	/* Long past its quick-death window: its death is not a failure to start. */
	w->started = now - POOL_QUICK_MS;
	w->gen = r->stopping ? p->gen - 1 : p->gen;
	w->term_at = r->stopping ? now : 0;
	w->watch = adopt_page(fd, POOL_WATCH_FD, SETTINGS_WATCH_SIZE);
	if (w->watch != NULL)
		__atomic_store_n(&w->watch[SETTINGS_WATCH_BEAT], now, __ATOMIC_RELAXED);
	else
		log_warn("%s: adopted worker %ld has no watchdog page: unwatched, and it leaves "
		    "at the end of its orphan grace", p->name, (long)r->pid);
	w->mthreads = r->threads;
	if (p->spec.metrics)
		w->metrics = adopt_page(fd, POOL_METRICS_FD, metrics_page_size(r->threads));
	log_info("%s: adopted worker %ld%s", p->name, (long)r->pid, r->stopping ?
	    " (stopping)" : "");
}

/* p's listening socket from one of the live workers fds[0..n), or -1. */
static int
adopt_socket(const struct pool *p, const int *fds, size_t n, const char *want)
{
	size_t i;
	int fd;

	for (i = 0; i < n; i++) {
		if ((fd = (int)syscall(SYS_pidfd_getfd, fds[i], 0, 0)) == -1) {
			log_warn("%s: cannot take the socket from a worker: %s", p->name,
			    strerror(errno));
			continue;
		}
		if (adopt_listens_at(fd, want)) {
			(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
			return fd;
		}
		log_warn("%s: a recorded worker's fd 0 is not the socket %s", p->name, want);
		(void)close(fd);
		return -1;
	}
	return -1;
}

int
adopt_pool(struct sluiced *s, const struct pool *p, const char *want, int64_t now,
    struct worker **ws, size_t *nws)
{
	int *fds = NULL, fd, sock = -1;
	size_t i, n = 0, k;

	*ws = NULL;
	*nws = 0;
	for (i = 0; i < s->nadopt; i++)
		if (strcmp(s->adopt[i].pool, p->name) == 0)
			n++;
	if (n == 0 || (fds = malloc(n * sizeof(*fds))) == NULL)
		return -1;
	if ((*ws = calloc(n, sizeof(**ws))) == NULL) {
		free(fds);
		return -1;
	}
	for (i = 0, k = 0; i < s->nadopt && k < n; i++) {
		if (strcmp(s->adopt[i].pool, p->name) != 0)
			continue;
		fds[k++] = strcmp(s->adopt[i].sock, want) == 0 ? adopt_open(&s->adopt[i]) : -1;
	}
	n = k;
	/* The socket from a live worker, else nothing is adopted. */
	for (i = 0; i < k && sock == -1; i++)
		if (fds[i] >= 0)
			sock = adopt_socket(p, &fds[i], 1, want);
	for (i = 0, k = 0; i < s->nadopt && k < n; i++) {
		if (strcmp(s->adopt[i].pool, p->name) != 0)
			continue;
		if ((fd = fds[k++]) < 0)
			continue;
		s->adopt[i].pool[0] = '\0';
		if (sock >= 0) {
			adopt_worker(p, &s->adopt[i], fd, now, &(*ws)[(*nws)++]);
			continue;
		}
		/* Its socket is not this pool's: it drains and leaves. */
		log_warn("%s: worker %ld not adopted (no socket to share with it); telling it "
		    "to stop", p->name, (long)s->adopt[i].pid);
		(void)syscall(SYS_pidfd_send_signal, fd, SIGTERM, NULL, 0);
		(void)close(fd);
	}
	free(fds);
	if (sock == -1) {
		free(*ws);
		*ws = NULL;
		return -1;
	}
	log_info("%s: adopted the socket %s and %zu workers", p->name, want, *nws);
	return sock;
}

void
adopt_done(struct sluiced *s)
{
	size_t i;

	for (i = 0; i < s->nadopt; i++)
		if (s->adopt[i].pool[0] != '\0')
			log_info("worker %ld of pool %s (not in the list, or gone) not adopted",
			    (long)s->adopt[i].pid, s->adopt[i].pool);
	free(s->adopt);
	s->adopt = NULL;
	s->nadopt = 0;
}

void
adopt_record(struct sluiced *s)
{
	char *buf = NULL, tmp[sizeof(s->adopt_path) + 8];
	const struct pool *p;
	const struct worker *w;
	size_t len = 0, i;
	FILE *f;
	int fd, ok;

	if (s->adopt_path[0] == '\0' && adopt_path(s) == -1)
		return;
	if ((f = open_memstream(&buf, &len)) == NULL)
		return;
	fprintf(f, "# the workers of sluiced %ld, for the next one to adopt "
	    "(supervisor/adopt.c)\n", (long)getpid());
	for (p = s->pools; p != NULL; p = p->next)
		for (i = 0; i < p->nw; i++) {
			w = &p->w[i];
			fprintf(f, "worker %s %ld %llu %d %d %s\n", p->name, (long)w->pid, w->start,
			    w->mthreads > 0 ? w->mthreads : p->spec.threads, w->term_at != 0,
			    p->sock_path);
		}
	if (fclose(f) != 0)
		goto out;
	if (s->adopt_last != NULL && strcmp(s->adopt_last, buf) == 0)
		goto out;
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", s->adopt_path);
	/* A failure is said once per change, not at every turn of the loop: the next
	 * change tries again. */
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0600)) ==
	    -1) {
		log_warn("%s: %s: the next sluiced cannot adopt these workers", tmp,
		    strerror(errno));
	} else {
		ok = write(fd, buf, len) == (ssize_t)len;
		if (close(fd) == -1 || !ok || rename(tmp, s->adopt_path) == -1) {
			log_warn("%s: %s: the next sluiced cannot adopt these workers",
			    s->adopt_path, strerror(errno));
			(void)unlink(tmp);
		}
	}
	free(s->adopt_last);
	s->adopt_last = buf;
	buf = NULL;
out:
	free(buf);
}

void
adopt_forget(struct sluiced *s)
{
	if (s->adopt_path[0] != '\0')
		(void)unlink(s->adopt_path);
	free(s->adopt_last);
	s->adopt_last = NULL;
}
