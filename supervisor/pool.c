/*
 * pool.c: one worker pool per endpoint.
 *
 * The pool owns the endpoint's listening unix socket for its whole life and hands it to
 * every worker on fd 0 (docs/fastcgi.md rule 8), so a worker restart or a reload never
 * produces "connection refused": connections wait in the backlog.
 *
 * Workers belong to a generation.  Workers of the current generation that die are
 * restarted: at once when they had lived POOL_QUICK_MS or longer, otherwise after a
 * doubling backoff; crash_loop_tries consecutive quick deaths mark the pool failed and
 * stop respawning (the other pools go on).  A reload bumps the generation: the new
 * workers start on the same socket, and only when all of them have been up POOL_READY_MS
 * is the old generation sent SIGTERM (it finishes its request and exits between requests;
 * after the grace period it gets SIGKILL).  If the new generation crash-loops, the pool
 * is failed but the old generation is never told to stop, so it keeps serving.
 *
 * A watchdog replaces a worker that hangs.  Each worker gets a page shared with sluiced
 * (a memfd on SLUICE_WATCHDOG_FD) where each of its threads writes since when it has been
 * serving its request (serve.c); pool_tick() kills a worker one of whose requests has run
 * past the time budget (SLUICE_STMT_TIMEOUT_MS) and POOL_WATCH_GRACE_MS.  The budget stops
 * every statement in time, so only a worker that cannot run (stopped, stuck in the
 * kernel, looping outside the database) gets there; its locks (the SQLite writers' queue,
 * a chat's locks) go with the process, and the pool starts a new one at once.  A worker
 * stopped (SIGSTOP) between requests is killed after the same time: nginx keeps sending
 * it requests on its kept connections.
 *
 * A pool whose database is a SQLite file looks at it every DBCHECK_EVERY_MS (dbcheck.c):
 * a file deleted, replaced or emptied while the pool serves is logged once per change,
 * naming the pool and the file, and `sluiced ctl status` shows the pool as degraded with
 * the reason until the file is back (or, replaced, until a reload opens the new one).
 *
 * A worker outlives its supervisor.  It has no parent-death signal: killed or upgraded,
 * sluiced leaves its workers serving on the sockets they hold, and a worker leaves on its
 * own only once sluiced's heartbeat, which pool_tick() writes on its watchdog page at
 * least every POOL_BEAT_MS, has been silent for its orphan grace (SLUICE_ORPHAN_GRACE_MS,
 * 30 s).  The next sluiced on the run directory adopts them before it binds anything
 * (adopt.c, from pool_socket()): the pool keeps the socket the workers hold, and the
 * adopted workers, which are not its children, are signalled and watched through pidfds
 * (pool_reap_pidfd() for their exits).  So the watchdog page is given to every worker,
 * with or without a time budget.
 *
 * Nothing here blocks or exits: the poll() loop in sluiced.c calls pool_tick() and
 * pool_reap(), which return the next deadline they care about.
 */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <ctype.h>

#include "db.h"
#include "log.h"
#include "proc.h"
#include "settings.h"
#include "sluiced.h"
#include "str.h"

/* Appends "KEY=VALUE" to a NULL-terminated vector of n entries. */
static int
pool_env_add(char ***env, size_t *n, const char *key, const char *value)
{
	char **grown, *s;
	size_t len = strlen(key) + strlen(value) + 2, i;
	int m;

	if ((s = malloc(len)) == NULL)
		return -1;
	m = snprintf(s, len, "%s=%s", key, value);
	if (m < 0 || (size_t)m >= len) {
		free(s);
		return -1;
	}
	/* Environment names are upper case: SLUICE_<KEY>. */
	for (i = 0; s[i] != '='; i++)
		s[i] = (char)toupper((unsigned char)s[i]);
	if ((grown = realloc(*env, (*n + 2) * sizeof(*grown))) == NULL) {
		free(s);
		return -1;
	}
	*env = grown;
	grown[(*n)++] = s;
	grown[*n] = NULL;
	return 0;
}

/* The path of ep's binary (binary= or BINDIR/NAME) into buf[len]: 0, or -1 if too long. */
static int
pool_binary(const struct sluiced *s, const struct conf_endpoint *ep, char *buf, size_t len)
{
	int m;

	if (ep->binary != NULL)
		m = snprintf(buf, len, "%s", ep->binary);
	else
		m = snprintf(buf, len, "%s/%s", s->bindir, ep->name);
	return m < 0 || (size_t)m >= len ? -1 : 0;
}

int
pool_check_binaries(const struct sluiced *s, const struct conf *c, char *err, size_t errlen)
{
	char path[4096];
	size_t i;

	for (i = 0; i < c->neps; i++) {
		if (pool_binary(s, &c->eps[i], path, sizeof(path)) == -1) {
			(void)snprintf(err, errlen, "%s:%d: endpoint %s: binary path too long",
			    c->path, c->eps[i].line, c->eps[i].name);
			return -1;
		}
		/* The user that will exec it is the one asking (sluiced has dropped root by
		 * the time a SIGHUP comes; at start it runs the check as who started it). */
		if (access(path, X_OK) == -1) {
			(void)snprintf(err, errlen, "%s:%d: endpoint %s: cannot execute %s: %s%s",
			    c->path, c->eps[i].line, c->eps[i].name, path, strerror(errno),
			    c->eps[i].binary == NULL ? " (build it with make, or set binary=)" :
			    "");
			return -1;
		}
	}
	return 0;
}

/*
 * The watchdog's limit for ep's workers: their time budget and the grace; 0 (no watchdog)
 * when the budget is 0.  The budget is what the workers will read: the endpoint's
 * stmt_timeout_ms=, else SLUICE_STMT_TIMEOUT_MS of sluiced's environment (which they
 * inherit), else the setting's default.  A value the worker would refuse is left to the
 * worker to report.
 */
static int64_t
pool_spec_watch(const struct conf_endpoint *ep)
{
	const struct setting *set = &settings_table[SETTING_STMT_TIMEOUT_MS];
	const char *val = settings_get(SETTING_STMT_TIMEOUT_MS);
	int64_t budget = set->def, v;
	size_t i;

	for (i = 0; i < ep->nextra; i++)
		if (strcasecmp(ep->extra[i].key, set->name + strlen("SLUICE_")) == 0)
			val = ep->extra[i].value;
	if (val != NULL && str_to_int(val, strlen(val), set->min, set->max, &v) == 0)
		budget = v;
	return budget > 0 ? budget + POOL_WATCH_GRACE_MS : 0;
}

int
pool_spec_make(const struct sluiced *s, const struct conf_endpoint *ep, struct pool_spec *out)
{
	char buf[4096], key[CONF_NAME_MAX + 8];
	enum db_backend backend;
	const char *dbpath;
	size_t n = 0, i;
	int m;

	memset(out, 0, sizeof(*out));
	out->workers = ep->workers;
	out->threads = ep->threads;
	if (!ep->workers_auto && !ep->threads_auto)
		(void)snprintf(out->sizing, sizeof(out->sizing), "fixed");
	else
		(void)snprintf(out->sizing, sizeof(out->sizing), "%s:%dcpus",
		    ep->workers_auto && ep->threads_auto ? "auto" :
		    ep->workers_auto ? "auto-workers" : "auto-threads", s->conf->cpus);
	out->mode = ep->mode;
	out->backlog = ep->backlog;
	(void)snprintf(out->where, sizeof(out->where), "%.300s:%d",
	    s->conf->path != NULL ? s->conf->path : "?", ep->line);
	if (ep->tcp != NULL && (out->tcp = strdup(ep->tcp)) == NULL)
		goto fail;
	if (pool_binary(s, ep, buf, sizeof(buf)) == -1 || (out->binary = strdup(buf)) == NULL)
		goto fail;
	if (pool_env_add(&out->env, &n, "SLUICE_NAME", ep->name) == -1 ||
	    pool_env_add(&out->env, &n, "SLUICE_ROUTE", ep->path) == -1)
		goto fail;
	(void)snprintf(buf, sizeof(buf), "%d", ep->threads);
	if (pool_env_add(&out->env, &n, "SLUICE_THREADS", buf) == -1)
		goto fail;
	(void)snprintf(buf, sizeof(buf), "%d", s->conf->cpus);
	if (pool_env_add(&out->env, &n, "SLUICE_CPUS", buf) == -1)
		goto fail;
	(void)snprintf(buf, sizeof(buf), "%lld", s->conf->body_max);
	if (pool_env_add(&out->env, &n, "SLUICE_BODY_MAX", buf) == -1)
		goto fail;
	if (ep->db_url != NULL &&
	    pool_env_add(&out->env, &n, "SLUICE_DB", ep->db_url) == -1)
		goto fail;
	if (ep->db_url != NULL && db_url_parse(ep->db_url, &backend, &dbpath) == 0 &&
	    backend == DB_SQLITE && (out->db_path = strdup(dbpath)) == NULL)
		goto fail;
	out->metrics = s->conf->metrics;
	if (out->metrics &&
	    pool_env_add(&out->env, &n, "SLUICE_METRICS_FD", POOL_METRICS_FD_STR) == -1)
		goto fail;
	out->watch_ms = pool_spec_watch(ep);
	/* Given with or without a budget: the page carries sluiced's heartbeat too. */
	if (pool_env_add(&out->env, &n, "SLUICE_WATCHDOG_FD", POOL_WATCH_FD_STR) == -1)
		goto fail;
	for (i = 0; i < ep->nextra; i++) {
		m = snprintf(key, sizeof(key), "SLUICE_%s", ep->extra[i].key);
		if (m < 0 || (size_t)m >= sizeof(key) ||
		    pool_env_add(&out->env, &n, key, ep->extra[i].value) == -1)
			goto fail;
	}
	return 0;
fail:
	log_err("%s: out of memory or path too long building the worker spec", ep->name);
	pool_spec_free(out);
	return -1;
}

void
pool_spec_free(struct pool_spec *sp)
{
	size_t i;

	free(sp->binary);
	free(sp->tcp);
	free(sp->db_path);
	for (i = 0; sp->env != NULL && sp->env[i] != NULL; i++)
		free(sp->env[i]);
	free(sp->env);
	memset(sp, 0, sizeof(*sp));
}

/* Same workers, binary and environment: no reload needed (mode and backlog apply live). */
int
pool_spec_same(const struct pool_spec *a, const struct pool_spec *b)
{
	size_t i;

	if (a->workers != b->workers || strcmp(a->binary, b->binary) != 0)
		return 0;
	/* A changed tcp= is not applied to the running pool (its socket stays bound). */
	for (i = 0; a->env[i] != NULL && b->env[i] != NULL; i++)
		if (strcmp(a->env[i], b->env[i]) != 0)
			return 0;
	return a->env[i] == NULL && b->env[i] == NULL;
}

/* chmod, chown and listen() again: how mode, group and backlog changes take effect. */
void
pool_apply_socket(struct sluiced *s, struct pool *p, const struct pool_spec *sp)
{
	if (p->tcp)
		goto listen;
	if (chmod(p->sock_path, sp->mode) == -1)
		log_err("%s: chmod %s: %s", p->name, p->sock_path, strerror(errno));
	if ((s->sock_uid != (uid_t)-1 || s->sock_gid != (gid_t)-1) &&
	    chown(p->sock_path, s->sock_uid, s->sock_gid) == -1)
		log_err("%s: chown %s: %s", p->name, p->sock_path, strerror(errno));
listen:
	/* The kernel caps the backlog at net.core.somaxconn. */
	if (listen(p->fd, sp->backlog) == -1)
		log_err("%s: listen: %s", p->name, strerror(errno));
}

/* Creates, binds and listens on RUNDIR/NAME.sock; -1 with the reason logged. */
/*
 * A pool on TCP (tcp=ADDR:PORT): the same life as the unix socket, without a file.
 * SO_REUSEADDR so that a restarted sluiced can bind at once past TIME_WAIT.
 */
static int
pool_socket_tcp(struct sluiced *s, struct pool *p)
{
	struct sockaddr_in sin;
	char host[16];
	const char *colon = strrchr(p->spec.tcp, ':');
	int64_t port;
	int fd, one = 1, m;

	m = snprintf(p->sock_path, sizeof(p->sock_path), "tcp:%s", p->spec.tcp);
	if (colon == NULL || (size_t)(colon - p->spec.tcp) >= sizeof(host) || m < 0 ||
	    (size_t)m >= sizeof(p->sock_path) ||
	    str_to_int(colon + 1, strlen(colon + 1), 1, 65535, &port) == -1)
		return -1;
	memcpy(host, p->spec.tcp, (size_t)(colon - p->spec.tcp));
	host[colon - p->spec.tcp] = '\0';
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)port);
	if (inet_pton(AF_INET, host, &sin.sin_addr) != 1)
		return -1;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_err("%s: socket: %s", p->name, strerror(errno));
		return -1;
	}
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1) {
		log_err("%s: bind %s: %s", p->name, p->spec.tcp, strerror(errno));
		close(fd);
		return -1;
	}
	p->fd = fd;
	p->tcp = 1;
	pool_apply_socket(s, p, &p->spec);
	return 0;
}

static struct worker *pool_worker_add(struct pool *p);

/* The socket and the workers of a previous sluiced (adopt.c) into p: 0, or -1 when
 * there were none to take (p binds its socket as usual). */
static int
pool_adopt(struct sluiced *s, struct pool *p)
{
	struct worker *ws, *w;
	size_t nws, i;
	int fd;

	if ((fd = adopt_pool(s, p, p->sock_path, pool_now(), &ws, &nws)) == -1)
		return -1;
	p->fd = fd;
	for (i = 0; i < nws; i++) {
		if ((w = pool_worker_add(p)) == NULL) {
			/* Out of memory: that one is left to its orphan grace. */
			(void)close(ws[i].pidfd);
			if (ws[i].watch != NULL)
				(void)munmap(ws[i].watch, SETTINGS_WATCH_SIZE);
			stats_page_free(&ws[i]);
			continue;
		}
		*w = ws[i];
	}
	free(ws);
	pool_apply_socket(s, p, &p->spec);
	return 0;
}

static int
pool_socket(struct sluiced *s, struct pool *p)
{
	struct sockaddr_un sun;
	struct stat st;
	mode_t old;
	int fd = -1, m;

	if (p->spec.tcp != NULL) {
		m = snprintf(p->sock_path, sizeof(p->sock_path), "tcp:%s", p->spec.tcp);
		p->tcp = 1;
	} else {
		m = snprintf(p->sock_path, sizeof(p->sock_path), "%s/%s.sock", s->rundir,
		    p->name);
		p->tcp = 0;
	}
	if (m < 0 || (size_t)m >= sizeof(p->sock_path)) {
		log_err("%s: socket path %s too long", p->name, p->sock_path);
		goto fail;
	}
	/* The previous sluiced's workers still serve on it: kept, never bound again. */
	if (s->nadopt > 0 && pool_adopt(s, p) == 0)
		return 0;
	if (p->spec.tcp != NULL)
		return pool_socket_tcp(s, p);
	/* A stale socket from a killed sluiced is removed; anything else is not ours. */
	if (lstat(p->sock_path, &st) == 0) {
		if (!S_ISSOCK(st.st_mode)) {
			log_err("%s: %s exists and is not a socket", p->name, p->sock_path);
			goto fail;
		}
		if (unlink(p->sock_path) == -1) {
			log_err("%s: unlink %s: %s", p->name, p->sock_path, strerror(errno));
			goto fail;
		}
	}
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1) {
		log_err("%s: socket: %s", p->name, strerror(errno));
		goto fail;
	}
	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	memcpy(sun.sun_path, p->sock_path, (size_t)m + 1);
	/* Bind with a tight umask so the socket is never briefly open to everyone. */
	old = umask(0177);
	m = bind(fd, (struct sockaddr *)&sun, sizeof(sun));
	umask(old);
	if (m == -1) {
		log_err("%s: bind %s: %s", p->name, p->sock_path, strerror(errno));
		goto fail;
	}
	p->fd = fd;
	pool_apply_socket(s, p, &p->spec);
	return 0;
fail:
	if (fd != -1)
		close(fd);
	return -1;
}

struct pool *
pool_new(struct sluiced *s, const struct conf_endpoint *ep)
{
	struct pool *p;

	if ((p = calloc(1, sizeof(*p))) == NULL) {
		log_err("%s: out of memory", ep->name);
		return NULL;
	}
	p->fd = -1;
	p->gen = 1;
	memcpy(p->name, ep->name, sizeof(p->name));
	if (pool_spec_make(s, ep, &p->spec) == -1 || pool_socket(s, p) == -1) {
		pool_spec_free(&p->spec);
		free(p);
		return NULL;
	}
	p->state = POOL_RUNNING;
	log_info("%s: listening on %s (mode %04o, backlog %d), %d workers x %d threads (%s) "
	    "of %s", p->name, p->sock_path, p->spec.mode, p->spec.backlog, p->spec.workers,
	    p->spec.threads, p->spec.sizing, p->spec.binary);
	return p;
}

/* Closes and unlinks the socket; the workers keep their own copies of the descriptor. */
static void
pool_close_socket(struct pool *p)
{
	if (p->fd == -1)
		return;
	close(p->fd);
	p->fd = -1;
	if (!p->tcp && unlink(p->sock_path) == -1 && errno != ENOENT)
		log_warn("%s: unlink %s: %s", p->name, p->sock_path, strerror(errno));
}

static void
pool_deadline(int64_t *deadline, int64_t t)
{
	if (*deadline == 0 || t < *deadline)
		*deadline = t;
}

/*
 * A new worker's watchdog page: a zeroed memfd, mapped here, whose descriptor (*fd) the
 * child gets as POOL_WATCH_FD.  Returns the slots, or NULL (and *fd -1) when the kernel
 * refused: logged, the worker runs unwatched.
 */
static int64_t *
pool_watch_new(const struct pool *p, int *fd, int64_t now)
{
	int64_t *watch = stats_shared_page(p->name, "sluice-watchdog", SETTINGS_WATCH_SIZE,
	    fd);

	/* The heartbeat starts now: the worker's orphan grace counts from here. */
	if (watch != NULL)
		watch[SETTINGS_WATCH_BEAT] = now;
	return watch;
}

static void
pool_watch_free(int64_t *watch)
{
	if (watch != NULL)
		(void)munmap(watch, SETTINGS_WATCH_SIZE);
}

/*
 * The watchdog: kills w when one of its requests has run longer than the pool's limit, and
 * lowers *deadline to when it looks again.  The slots are written by the worker: a torn or
 * silly value only makes the worker look idle or young.
 */
static void
pool_watch(struct pool *p, struct worker *w, int64_t now, int64_t *deadline)
{
	int64_t started, oldest = 0;
	size_t i;

	if (w->watch == NULL || w->killed || p->spec.watch_ms <= 0)
		return;
	for (i = 0; i < SETTINGS_WATCH_SLOTS; i++) {
		started = __atomic_load_n(&w->watch[i], __ATOMIC_RELAXED);
		if (started > 0 && started <= now && (oldest == 0 || started < oldest))
			oldest = started;
	}
	/* A worker stopped between requests serves nothing, yet nginx still sends it
	 * requests on the connections it keeps: stopped as long as the limit, it goes too. */
	if (oldest == 0 && proc_stopped(w->pid)) {
		if (w->stopped_at == 0)
			w->stopped_at = now;
		oldest = w->stopped_at;
	} else if (oldest == 0)
		w->stopped_at = 0;
	if (oldest != 0 && now - oldest >= p->spec.watch_ms) {
		log_err("%s: worker %ld has %s for %lld ms (budget and grace: %lld ms): it "
		    "hangs; killing it", p->name, (long)w->pid, w->stopped_at != 0 ?
		    "been stopped between requests" : "served one request",
		    (long long)(now - oldest), (long long)p->spec.watch_ms);
		if (adopt_signal(w, SIGKILL) == -1 && errno != ESRCH)
			log_warn("%s: kill %ld: %s", p->name, (long)w->pid, strerror(errno));
		w->killed = 1;
		p->hung++;
		return;
	}
	/* The oldest request reaches the limit then; requests that start later, and a
	 * worker stopped later, are seen at the next look. */
	if (oldest != 0)
		pool_deadline(deadline, oldest + p->spec.watch_ms);
	pool_deadline(deadline, now + POOL_WATCH_EVERY_MS);
}

void
pool_free(struct pool *p)
{
	size_t i;

	if (p == NULL)
		return;
	for (i = 0; i < p->nw; i++) {
		pool_watch_free(p->w[i].watch);
		stats_page_free(&p->w[i]);
		if (p->w[i].pidfd >= 0)
			(void)close(p->w[i].pidfd);
	}
	pool_close_socket(p);
	pool_spec_free(&p->spec);
	stats_ring_free(p);
	free(p->w);
	free(p);
}

/*
 * Whether a worker gets "NAME=value" of sluiced's environment: the worker settings (the
 * rows of settings_table; not SLUICE_DB_<NAME>, the other endpoints' database URLs),
 * the program search path, time zone and locale, the PG* defaults libpq reads, and the
 * sanitizers' options of a test build.  Anything else (an operator's tokens, a CI's
 * secrets) stays with sluiced: a compromised worker cannot read what it never had.
 */
static int
pool_env_keep(const char *entry)
{
	static const char *const names[] = { "PATH=", "TZ=", "LANG=", "LANGUAGE=",
	    "ASAN_OPTIONS=", "UBSAN_OPTIONS=", "LSAN_OPTIONS=" };
	static const char *const prefixes[] = { "LC_", "PG" };
	size_t i, len;

	for (i = 0; i < SETTING__MAX; i++) {
		len = strlen(settings_table[i].name);
		if (strncmp(entry, settings_table[i].name, len) == 0 && entry[len] == '=')
			return 1;
	}
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
		if (strncmp(entry, names[i], strlen(names[i])) == 0)
			return 1;
	for (i = 0; i < sizeof(prefixes) / sizeof(prefixes[0]); i++)
		if (strncmp(entry, prefixes[i], strlen(prefixes[i])) == 0 &&
		    strchr(entry, '=') != NULL)
			return 1;
	return 0;
}

/* Runs in the child between fork() and execve(): only async-signal-safe calls, setenv and
 * malloc (the supervisor is single-threaded, so no lock is held by anyone). */
/*
 * The child's fd 3 and 4: the watchdog's page wfd and the counters' page mfd (each -1:
 * none), without close-on-exec; every other descriptor above 2 closed.  0, or -1.
 */
static int
pool_child_fds(int wfd, int mfd)
{
	long maxfd, fd;

	/* mfd must not sit where wfd goes. */
	if (mfd == POOL_WATCH_FD && (mfd = fcntl(mfd, F_DUPFD, POOL_METRICS_FD + 1)) == -1)
		return -1;
	if (wfd >= 0 && (wfd == POOL_WATCH_FD ? fcntl(wfd, F_SETFD, 0) :
	    dup2(wfd, POOL_WATCH_FD)) == -1)
		return -1;
	if (mfd >= 0 && (mfd == POOL_METRICS_FD ? fcntl(mfd, F_SETFD, 0) :
	    dup2(mfd, POOL_METRICS_FD)) == -1)
		return -1;
	/* Everything of ours is close-on-exec; this also catches what our parent leaked. */
	maxfd = sysconf(_SC_OPEN_MAX);
	if (maxfd < 0 || maxfd > 4096)
		maxfd = 4096;
	for (fd = 3; fd < maxfd; fd++)
		if (!(fd == POOL_WATCH_FD && wfd >= 0) && !(fd == POOL_METRICS_FD && mfd >= 0))
			close((int)fd);
	return 0;
}

static void __attribute__((noreturn))
pool_child(const struct pool *p, int wfd, int mfd)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP, SIGPIPE, SIGUSR1 };
	sigset_t none;
	char msg[512];
	extern char **environ;
	char **envp;
	size_t i, n;
	int null;

	/* No parent-death signal: a worker outlives a sluiced killed with -9 for its orphan
	 * grace, serving, for the next sluiced to adopt it (adopt.c).  One without a
	 * watchdog's page (the kernel refused the memfd) would never hear that its
	 * supervisor is gone: it keeps the old rule, SIGTERM when sluiced dies. */
	if (wfd < 0 && prctl(PR_SET_PDEATHSIG, SIGTERM) == -1)
		_exit(126);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		signal(sigs[i], SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);
	if (dup2(p->fd, 0) == -1)
		_exit(126);
	if ((null = open("/dev/null", O_WRONLY)) != -1) {
		dup2(null, 1);
		if (null > 2)
			close(null);
	}
	if (pool_child_fds(wfd, mfd) == -1)
		_exit(126);
	/* What a worker creates (SQLite's -wal, -shm and -wlock files, the chat's session
	 * key) is never world-readable. */
	(void)umask(027);
	unsetenv("SLUICE_DB");
	/* Only the pages made for this worker: never one named in sluiced's own
	 * environment. */
	unsetenv("SLUICE_WATCHDOG_FD");
	unsetenv("SLUICE_METRICS_FD");
	for (i = 0; p->spec.env[i] != NULL; i++)
		if ((wfd >= 0 || strncmp(p->spec.env[i], "SLUICE_WATCHDOG_FD=", 19) != 0) &&
		    (mfd >= 0 || strncmp(p->spec.env[i], "SLUICE_METRICS_FD=", 18) != 0))
			putenv(p->spec.env[i]);
	for (n = 0; environ[n] != NULL; n++)
		continue;
	if ((envp = calloc(n + 1, sizeof(*envp))) == NULL)
		_exit(126);
	for (i = n = 0; environ[i] != NULL; i++)
		if (pool_env_keep(environ[i]))
			envp[n++] = environ[i];
	execve(p->spec.binary, (char *const[]){ p->spec.binary, NULL }, envp);
	/* Say why on the shared stderr; the supervisor only sees exit status 127. */
	msg[0] = '\0';
	(void)snprintf(msg, sizeof(msg), "sluiced: %s: cannot execute %s: %s\n", p->name,
	    p->spec.binary, strerror(errno));
	if (write(2, msg, strlen(msg)) < 0)
		(void)0;
	_exit(127);
}

/* Room in p->w for one more worker: 0, or -1 when out of memory (logged). */
static int
pool_worker_room(struct pool *p)
{
	struct worker *grown;
	size_t ncap;

	if (p->nw < p->wcap)
		return 0;
	ncap = p->wcap == 0 ? 8 : p->wcap * 2;
	if ((grown = realloc(p->w, ncap * sizeof(*grown))) == NULL) {
		log_err("%s: out of memory", p->name);
		return -1;
	}
	p->w = grown;
	p->wcap = ncap;
	return 0;
}

/* A new zeroed worker slot at the end of p->w (pidfd -1), or NULL when out of memory
 * (logged). */
static struct worker *
pool_worker_add(struct pool *p)
{
	struct worker *w;

	if (pool_worker_room(p) == -1)
		return NULL;
	w = &p->w[p->nw++];
	memset(w, 0, sizeof(*w));
	w->pidfd = -1;
	return w;
}

static int
pool_spawn(struct pool *p, int64_t now)
{
	struct worker *w;
	pid_t pid;
	sigset_t all, old;
	int64_t *watch = NULL;
	struct metrics_page *metrics = NULL;
	int wfd = -1, mfd = -1;

	if (pool_worker_room(p) == -1)
		return -1;
	watch = pool_watch_new(p, &wfd, now);
	if (p->spec.metrics)
		metrics = stats_page_new(p->name, p->spec.threads, &mfd);
	/* No signal between fork() and the child's reset of its handlers: one would run
	 * sluiced's handler in the child (a write to the shared pipe) and be lost to it.
	 * Blocked, it stays pending and meets the default action (pool_child()). */
	sigfillset(&all);
	sigprocmask(SIG_BLOCK, &all, &old);
	pid = fork();
	if (pid == 0)
		pool_child(p, wfd, mfd);
	sigprocmask(SIG_SETMASK, &old, NULL);
	if (pid == -1) {
		log_err("%s: fork: %s", p->name, strerror(errno));
		pool_watch_free(watch);
		if (wfd >= 0)
			(void)close(wfd);
		if (mfd >= 0)
			(void)close(mfd);
		if (metrics != NULL)
			(void)munmap(metrics, metrics_page_size(p->spec.threads));
		return -1;
	}
	if (wfd >= 0)
		(void)close(wfd);
	if (mfd >= 0)
		(void)close(mfd);
	w = &p->w[p->nw++];
	memset(w, 0, sizeof(*w));
	w->pidfd = -1;
	/* For the record (adopt.c): the pid with its start time names this process only. */
	(void)adopt_start_time(pid, &w->start);
	w->watch = watch;
	w->metrics = metrics;
	w->mthreads = p->spec.threads;
	w->pid = pid;
	w->gen = p->gen;
	w->started = now;
	p->spawns++;
	log_debug("%s: started worker %ld (generation %u)", p->name, (long)pid, p->gen);
	return 0;
}

/* Workers of the current generation that were not asked to stop. */
static size_t
pool_current(const struct pool *p)
{
	size_t i, n = 0;

	for (i = 0; i < p->nw; i++)
		if (p->w[i].gen == p->gen && p->w[i].term_at == 0)
			n++;
	return n;
}

size_t
pool_live(const struct pool *p)
{
	return p->nw;
}

/* A current worker started after the last quick failure has lived long: the streak ends. */
static void
pool_note_stable(struct pool *p, int64_t now)
{
	size_t i;

	if (p->quick_fails == 0)
		return;
	for (i = 0; i < p->nw; i++)
		if (p->w[i].gen == p->gen && p->w[i].started > p->fail_at &&
		    now - p->w[i].started >= POOL_QUICK_MS) {
			p->quick_fails = 0;
			return;
		}
}

static void
pool_term(struct pool *p, struct worker *w, int64_t now)
{
	if (w->term_at != 0)
		return;
	w->term_at = now;
	if (adopt_signal(w, SIGTERM) == -1 && errno != ESRCH)
		log_warn("%s: kill %ld: %s", p->name, (long)w->pid, strerror(errno));
}

/* Looks at the pool's SQLite file (dbcheck.c) and logs a change of its state, once. */
static void
pool_db_look(struct pool *p)
{
	enum dbcheck_state st;
	char why[256];

	st = dbcheck_look(&p->db, p->spec.db_path, why, sizeof(why));
	if (st == p->db.state)
		return;
	p->db.state = st;
	if (st != DBCHECK_OK)
		log_err("%s: DEGRADED: database %s: %s; its workers cannot serve from it (/ready "
		    "answers 503). Restore the file, then `sluiced ctl reload %s`.", p->name,
		    p->spec.db_path, why, p->name);
	else
		log_info("%s: database %s is usable again", p->name, p->spec.db_path);
}

/* Stragglers asked to stop get SIGKILL after the grace period; hung workers get it from
 * the watchdog. */
static void
pool_kill_stragglers(struct sluiced *s, struct pool *p, int64_t now, int64_t *deadline)
{
	struct worker *w;
	size_t i;

	for (i = 0; i < p->nw; i++) {
		w = &p->w[i];
		/* The heartbeat: while it moves, the worker knows it has a supervisor. */
		if (w->watch != NULL)
			__atomic_store_n(&w->watch[SETTINGS_WATCH_BEAT], now, __ATOMIC_RELAXED);
		pool_watch(p, w, now, deadline);
		if (w->term_at == 0 || w->killed)
			continue;
		if (now - w->term_at >= s->grace_ms) {
			log_warn("%s: worker %ld did not stop within %d ms, killing it", p->name,
			    (long)w->pid, s->grace_ms);
			if (adopt_signal(w, SIGKILL) == -1 && errno != ESRCH)
				log_warn("%s: kill %ld: %s", p->name, (long)w->pid, strerror(errno));
			w->killed = 1;
		} else {
			pool_deadline(deadline, w->term_at + s->grace_ms);
		}
	}
	if (p->nw > 0)
		pool_deadline(deadline, now + POOL_BEAT_MS);
}

/* A reload's step: once every worker of the new generation has lived POOL_READY_MS (cur
 * of them running), the old generation is told to stop. */
static void
pool_reload_step(struct sluiced *s, struct pool *p, int64_t now, int64_t *deadline,
    size_t cur)
{
	struct worker *w;
	size_t i;
	int ready = cur == (size_t)p->spec.workers;

	for (i = 0; i < p->nw; i++) {
		w = &p->w[i];
		if (w->gen != p->gen || w->term_at != 0)
			continue;
		if (now - w->started < POOL_READY_MS) {
			ready = 0;
			pool_deadline(deadline, w->started + POOL_READY_MS);
		}
	}
	if (!ready)
		return;
	p->reloading = 0;
	for (i = 0; i < p->nw; i++)
		if (p->w[i].gen != p->gen)
			pool_term(p, &p->w[i], now);
	log_info("%s: generation %u is up (%d workers); old generation told to stop", p->name,
	    p->gen, p->spec.workers);
	/* The old workers' grace deadlines start now. */
	pool_deadline(deadline, now + s->grace_ms);
}

void
pool_tick(struct sluiced *s, struct pool *p, int64_t now, int64_t *deadline)
{
	size_t cur;

	pool_kill_stragglers(s, p, now, deadline);
	/*
	 * A failed pool with no worker left closes its socket: nginx then answers 502 at once
	 * instead of queueing requests that nobody will ever accept.  Starting the pool again
	 * (ctl reload, or SIGHUP with a changed line) binds it anew.
	 */
	if (p->state == POOL_FAILED && p->nw == 0 && p->fd != -1) {
		log_err("%s: no worker left; closing %s until the pool is reloaded", p->name,
		    p->sock_path);
		pool_close_socket(p);
	}
	if (p->state != POOL_RUNNING)
		return;
	if (p->spec.db_path != NULL) {
		if (now >= p->db.next) {
			pool_db_look(p);
			p->db.next = now + DBCHECK_EVERY_MS;
		}
		pool_deadline(deadline, p->db.next);
	}
	if (p->fd == -1 && pool_socket(s, p) == -1) {
		p->state = POOL_FAILED;
		return;
	}
	if (p->spec.metrics) {
		if (now >= p->queue.next) {
			listenq_sample(p);
			p->queue.next = now + LISTENQ_EVERY_MS;
		}
		pool_deadline(deadline, p->queue.next);
		/* The status page's charts, only where there is a page to show them. */
		if (s->metrics_fd != -1)
			pool_deadline(deadline, stats_ring_tick(p, now));
	}
	pool_note_stable(p, now);
	cur = pool_current(p);
	if (cur < (size_t)p->spec.workers) {
		if (now >= p->next_spawn) {
			while (cur < (size_t)p->spec.workers && pool_spawn(p, now) == 0)
				cur++;
			/* fork failed: try again shortly rather than spin. */
			if (cur < (size_t)p->spec.workers) {
				p->next_spawn = now + POOL_BACKOFF_MS;
				pool_deadline(deadline, p->next_spawn);
			}
		} else {
			pool_deadline(deadline, p->next_spawn);
		}
	}
	if (p->quick_fails > 0)
		pool_deadline(deadline, now + POOL_QUICK_MS);
	if (p->reloading)
		pool_reload_step(s, p, now, deadline, cur);
}

static void
pool_describe_exit(int status, char *buf, size_t len)
{
	if (status == POOL_STATUS_UNKNOWN)
		(void)snprintf(buf, len, "unknown");
	else if (WIFSIGNALED(status))
		(void)snprintf(buf, len, "signal:%d", WTERMSIG(status));
	else if (WIFEXITED(status))
		(void)snprintf(buf, len, "exit:%d", WEXITSTATUS(status));
	else
		(void)snprintf(buf, len, "status:%d", status);
}

int
pool_reap(struct sluiced *s, pid_t pid, int status, int64_t now)
{
	struct pool *p;
	struct worker w;
	char how[32];
	size_t i;
	int64_t ran, delay;
	int abnormal;

	for (p = s->pools; p != NULL; p = p->next) {
		for (i = 0; i < p->nw; i++)
			if (p->w[i].pid == pid)
				break;
		if (i < p->nw)
			break;
	}
	if (p == NULL)
		return -1;
	w = p->w[i];
	p->w[i] = p->w[--p->nw];
	if (w.pidfd >= 0)
		(void)close(w.pidfd);
	pool_watch_free(w.watch);
	stats_retire(p, &w);
	pool_describe_exit(status, how, sizeof(how));
	if (status != POOL_STATUS_UNKNOWN && WIFSIGNALED(status) && WTERMSIG(status) == SIGSYS)
		log_err("%s: worker %ld made a system call that its seccomp filter forbids "
		    "(SIGSYS; common/sandbox.c, SLUICE_SECCOMP=0 to debug)", p->name, (long)pid);
	if (w.term_at != 0) {
		log_debug("%s: worker %ld stopped (%s)", p->name, (long)pid, how);
		return 0;
	}
	/* Nobody asked this worker to go. */
	ran = now - w.started;
	/* An adopted worker's status is unknown: its death unasked counts as a crash. */
	abnormal = status == POOL_STATUS_UNKNOWN || !WIFEXITED(status) ||
	    WEXITSTATUS(status) != 0;
	p->last_status = status;
	p->has_exit = 1;
	if (abnormal)
		p->crashes++;
	if (p->state == POOL_STOPPING || w.gen != p->gen) {
		log_warn("%s: %s worker %ld exited (%s) after %lld ms", p->name,
		    w.gen != p->gen ? "old" : "stopping", (long)pid, how, (long long)ran);
		return 0;
	}
	if (p->state == POOL_FAILED) {
		log_warn("%s: worker %ld of the failed pool exited (%s)", p->name, (long)pid, how);
		return 0;
	}
	pool_note_stable(p, now);
	if (ran >= POOL_QUICK_MS) {
		p->quick_fails = 0;
		p->next_spawn = now;
		log_warn("%s: worker %ld exited (%s) after %lld ms, restarting it", p->name,
		    (long)pid, how, (long long)ran);
		return 0;
	}
	p->quick_fails++;
	p->fail_at = now;
	if (p->quick_fails >= s->crash_loop_tries) {
		p->state = POOL_FAILED;
		p->reloading = 0;
		log_err("%s: CRASH LOOP: %d workers in a row died within %d ms of starting "
		    "(last: %s); pool FAILED, no more restarts. Fix it (the endpoint's line is "
		    "%s; a worker's own log line above says what it refused), then `sluiced ctl "
		    "reload %s`.%s", p->name, p->quick_fails, POOL_QUICK_MS, how, p->spec.where,
		    p->name, p->nw > pool_current(p) ? " The previous generation keeps serving." :
		    "");
		return 0;
	}
	delay = (int64_t)POOL_BACKOFF_MS << (p->quick_fails - 1 > 5 ? 5 : p->quick_fails - 1);
	if (delay > POOL_BACKOFF_MAX_MS)
		delay = POOL_BACKOFF_MAX_MS;
	if (p->next_spawn < now + delay)
		p->next_spawn = now + delay;
	log_warn("%s: worker %ld died after %lld ms (%s), quick failure %d of %d, restarting "
	    "in %lld ms", p->name, (long)pid, (long long)ran, how, p->quick_fails,
	    s->crash_loop_tries, (long long)delay);
	return 0;
}

void
pool_reap_pidfd(struct sluiced *s, int pidfd, int64_t now)
{
	struct pool *p;
	size_t i;

	for (p = s->pools; p != NULL; p = p->next)
		for (i = 0; i < p->nw; i++)
			if (p->w[i].pidfd == pidfd) {
				(void)pool_reap(s, p->w[i].pid, adopt_wait(pidfd), now);
				return;
			}
}

void
pool_reload(struct pool *p, struct pool_spec *sp, int64_t now)
{
	if (sp != NULL) {
		pool_spec_free(&p->spec);
		p->spec = *sp;
		memset(sp, 0, sizeof(*sp));
	}
	p->gen++;
	p->reloading = 1;
	p->state = POOL_RUNNING;
	/* The new generation opens the file there is now. */
	if (p->db.state != DBCHECK_OK)
		log_info("%s: database %s: the new generation opens it anew", p->name,
		    p->spec.db_path != NULL ? p->spec.db_path : "(none)");
	dbcheck_reset(&p->db);
	p->quick_fails = 0;
	p->next_spawn = now;
	log_info("%s: reloading: starting generation %u (%d workers of %s)", p->name, p->gen,
	    p->spec.workers, p->spec.binary);
}

void
pool_stop(struct pool *p, int64_t now)
{
	size_t i;

	p->state = POOL_STOPPING;
	p->reloading = 0;
	for (i = 0; i < p->nw; i++)
		pool_term(p, &p->w[i], now);
}

void
pool_remove(struct pool *p, int64_t now)
{
	log_info("%s: removed from the endpoint list, stopping it", p->name);
	/* The path goes at once so that a re-added endpoint of that name can bind it. */
	pool_close_socket(p);
	p->removing = 1;
	pool_stop(p, now);
}

void
pool_status(FILE *out, const struct pool *p)
{
	char how[32] = "none";
	size_t i, n, adopted = 0;

	if (p->has_exit)
		pool_describe_exit(p->last_status, how, sizeof(how));
	/* adopted=: the current workers a previous sluiced started (adopt.c). */
	for (i = 0; i < p->nw; i++)
		adopted += p->w[i].adopted && p->w[i].gen == p->gen && p->w[i].term_at == 0;
	/* A running pool whose database is gone, replaced or empty is degraded: db= says
	 * why (dbcheck.c); "none" for a pool without a SQLite file. */
	fprintf(out, "%s state=%s gen=%u workers=%zu/%d threads=%d sizing=%s old=%zu "
	    "reloading=%d adopted=%zu spawns=%lu crashes=%lu hung=%lu quick_fails=%d "
	    "last_exit=%s db=%s", p->name, stats_state_word(p), p->gen, pool_current(p),
	    p->spec.workers, p->spec.threads, p->spec.sizing, p->nw - pool_current(p),
	    p->reloading, adopted, p->spawns, p->crashes, p->hung, p->quick_fails, how,
	    p->spec.db_path == NULL ? "none" : dbcheck_words[p->db.state]);
	stats_status_words(out, p);
	fprintf(out, " pids=");
	/* Only the current generation's pids: those are the ones that serve. */
	for (i = 0, n = 0; i < p->nw; i++)
		if (p->w[i].gen == p->gen && p->w[i].term_at == 0)
			fprintf(out, "%s%ld", n++ > 0 ? "," : "", (long)p->w[i].pid);
	fprintf(out, "\n");
}

int64_t
pool_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

struct pool *
pool_find(struct sluiced *s, const char *name)
{
	struct pool *p;

	for (p = s->pools; p != NULL; p = p->next)
		if (!p->removing && strcmp(p->name, name) == 0)
			return p;
	return NULL;
}

void
pool_stop_all(struct sluiced *s)
{
	struct pool *p;
	int64_t now = pool_now();

	if (s->stopping)
		return;
	s->stopping = 1;
	log_info("stopping: asking all workers to finish (grace %d ms)", s->grace_ms);
	/* The sockets go first: a connection made after the stop began is refused at once
	 * (nginx answers its JSON 502 then), where it would wait in the backlog, served by
	 * nobody, until the workers had drained and left.  The requests in flight go on:
	 * each worker finishes the one it serves. */
	for (p = s->pools; p != NULL; p = p->next) {
		pool_close_socket(p);
		pool_stop(p, now);
	}
}
