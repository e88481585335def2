/*
 * evfcgi_loop.c: a streaming endpoint's worker, one thread and one epoll set (see
 * evfcgi.h).
 *
 * The set holds the listening socket (the pool's, fd 0 from sluiced; level-triggered and
 * EPOLLEXCLUSIVE, so that during a reload the old and new workers do not all wake for one
 * connection) and every connection.  A turn of the loop accepts what waits, reads what
 * came (each connection's records run through evfcgi.c, which calls the endpoint), runs
 * the tick when it is due, then sends what every connection has queued: a write that
 * would block leaves the rest for EPOLLOUT, and a connection dropped for its buffer or
 * closing after its request is closed there.  Writes never block, so the loop never
 * waits for one client.
 *
 * Signals.  SIGTERM, SIGINT and SIGUSR1 (sluiced's stop and restart) and SIGHUP are
 * blocked, and let in only during epoll_pwait(): a handler sets a flag, and the wait
 * returns EINTR.  A stop takes the listening socket out of the set, finishes every open
 * request (each stream's FastCGI response ends properly, so the proxy ends its client's
 * response and an EventSource reconnects, to the new worker during a reload), sends what
 * is queued for one second at most and leaves.
 *
 * Watchdog.  The slot of the loop's thread (SLUICE_WATCHDOG_FD's first) holds the time
 * the current turn began, and 0 while the loop sleeps: a turn that hangs (a callback
 * stuck) is seen by sluiced past the pool's budget, as a serving thread's request is.  An
 * open stream is not a request in progress for the watchdog.  The counters' page
 * (common/metrics.h) is not written yet: sluiced shows the pool's worker, not its
 * requests.
 */
#define _GNU_SOURCE	/* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <unistd.h>

#include "clock.h"
#include "evfcgi.h"
#include "extern.h"
#include "log.h"
#include "sandbox.h"
#include "settings.h"

#define EVFCGI_EVENTS		64
#define EVFCGI_READ		65536
/* How long a stop waits for queued output to leave. */
#define EVFCGI_STOP_MS		1000
/* How long the listening socket rests when accept() runs out of descriptors. */
#define EVFCGI_ACCEPT_REST_MS	100

/* One connection of the set: its socket and its records (evfcgi.c). */
struct evfcgi_sock {
	int fd;
	int armed_out;			/* EPOLLOUT asked */
	int dead;			/* closed in this turn, freed at its end */
	struct evfcgi_conn *c;
	struct evfcgi_sock *prev, *next;
};

struct evfcgi_loop {
	int epfd, listen_fd;
	struct evfcgi_limits lim;
	const struct evfcgi_ops *ops;
	void *ctx;
	struct evfcgi_sock *socks;	/* every connection */
	struct evfcgi_sock *dead;	/* closed in this turn: see evfcgi_sock_close() */
	int nsocks;
	atomic_llong *watch;		/* the watchdog's slot, or NULL */
	unsigned long refused;		/* connections closed for the cap */
	unsigned long starved;		/* accept() failures for want of descriptors */
	long long rest_until;		/* the listening socket out of the set until then */
};

static volatile sig_atomic_t evfcgi_stop;

/* The epoll tag of the endpoint's own descriptor (ops->own_fd), told apart from the
 * listening socket (NULL) and the connections by its address. */
static char evfcgi_own_tag;

static void
evfcgi_on_stop(int sig)
{
	(void)sig;
	evfcgi_stop = 1;
}

static void
evfcgi_on_ignore(int sig)
{
	(void)sig;
}

/* Blocks the stop signals and SIGHUP (installed without SA_RESTART) and fills *wait_mask
 * with the mask the loop sleeps with, which lets them in. */
static void
evfcgi_signals(sigset_t *wait_mask)
{
	struct sigaction sa;
	sigset_t block;

	sigemptyset(&block);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGUSR1);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, wait_mask);
	sigdelset(wait_mask, SIGTERM);
	sigdelset(wait_mask, SIGINT);
	sigdelset(wait_mask, SIGUSR1);
	sigdelset(wait_mask, SIGHUP);
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = evfcgi_on_stop;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sa.sa_handler = evfcgi_on_ignore;
	sigaction(SIGHUP, &sa, NULL);
	sa.sa_handler = SIG_IGN;
	sigaction(SIGPIPE, &sa, NULL);
}

/*
 * Closes s (the endpoint hears gone() of an open request).  Its struct lives until the end
 * of the turn (evfcgi_reap()): a later event of the same batch may point to it, and finds
 * it dead.
 */
static void
evfcgi_sock_close(struct evfcgi_loop *l, struct evfcgi_sock *s)
{
	(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, s->fd, NULL);
	close(s->fd);
	if (s->prev != NULL)
		s->prev->next = s->next;
	else
		l->socks = s->next;
	if (s->next != NULL)
		s->next->prev = s->prev;
	l->nsocks--;
	s->dead = 1;
	s->prev = NULL;
	s->next = l->dead;
	l->dead = s;
	evfcgi_conn_free(s->c);
	s->c = NULL;
}

/* Frees the connections closed during the turn. */
static void
evfcgi_reap(struct evfcgi_loop *l)
{
	struct evfcgi_sock *s;

	while ((s = l->dead) != NULL) {
		l->dead = s->next;
		free(s);
	}
}

/*
 * Sends what s has queued without blocking; EPOLLOUT is asked for the rest.  Closes s
 * when it was dropped, when it is closing and all is sent, or when the socket failed.
 * Returns 0, or -1 when s is closed (freed).
 */
static int
evfcgi_sock_flush(struct evfcgi_loop *l, struct evfcgi_sock *s)
{
	struct epoll_event ev = { .data.ptr = s };
	const unsigned char *p;
	size_t len;
	ssize_t n;

	if (evfcgi_conn_dropped(s->c))
		goto close;
	for (;;) {
		p = evfcgi_conn_pending(s->c, &len);
		if (len == 0)
			break;
		n = send(s->fd, p, len, MSG_NOSIGNAL | MSG_DONTWAIT);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			break;
		if (n <= 0)
			goto close;
		evfcgi_conn_sent(s->c, (size_t)n);
	}
	if (len == 0 && evfcgi_conn_closing(s->c))
		goto close;
	if ((len > 0) != s->armed_out) {
		ev.events = EPOLLIN | (len > 0 ? EPOLLOUT : 0);
		if (epoll_ctl(l->epfd, EPOLL_CTL_MOD, s->fd, &ev) < 0)
			goto close;
		s->armed_out = len > 0;
	}
	return 0;
close:
	evfcgi_sock_close(l, s);
	return -1;
}

/* Sends what every connection has queued (a stream may be written from any callback). */
static void
evfcgi_flush_all(struct evfcgi_loop *l)
{
	struct evfcgi_sock *s, *next;

	for (s = l->socks; s != NULL; s = next) {
		next = s->next;
		(void)evfcgi_sock_flush(l, s);
	}
}

/*
 * accept() found no descriptor (or memory) for a waiting connection.  The listening socket
 * is level-triggered: left in the set it would wake the loop again at once, and the loop
 * would spin.  It leaves the set for EVFCGI_ACCEPT_REST_MS (evfcgi_accept_resume()), while
 * the connections held go on being served and may close.
 */
static void
evfcgi_accept_rest(struct evfcgi_loop *l)
{
	if (l->starved++ % 1000 == 0)
		log_warn("accept: %s (%d connections held); new connections wait",
		    strerror(errno), l->nsocks);
	(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->listen_fd, NULL);
	l->rest_until = clock_now_ms() + EVFCGI_ACCEPT_REST_MS;
}

/* The listening socket back in the set once its rest is over (now: the loop's clock). */
static void
evfcgi_accept_resume(struct evfcgi_loop *l, long long now)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = NULL };

	if (l->rest_until == 0 || now < l->rest_until)
		return;
	l->rest_until = 0;
	if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, l->listen_fd, &ev) < 0 && errno != EEXIST)
		log_warn("listening socket: %s", strerror(errno));
}

/* Takes what waits in the accept queue; past the cap a connection is closed at once. */
static void
evfcgi_accept(struct evfcgi_loop *l)
{
	struct epoll_event ev = { .events = EPOLLIN };
	struct evfcgi_sock *s;
	int fd, i;

	for (i = 0; i < EVFCGI_EVENTS; i++) {
		fd = accept4(l->listen_fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		if (fd < 0) {
			if (errno == EINTR || errno == ECONNABORTED)
				continue;
			if (errno == EMFILE || errno == ENFILE || errno == ENOBUFS ||
			    errno == ENOMEM) {
				evfcgi_accept_rest(l);
				return;
			}
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				log_warn("accept: %s", strerror(errno));
			return;
		}
		if (l->nsocks >= l->lim.conns_max) {
			if (l->refused++ % 1000 == 0)
				log_warn("%d connections held (stream_conns): connection refused",
				    l->nsocks);
			close(fd);
			continue;
		}
		if ((s = calloc(1, sizeof(*s))) == NULL ||
		    (s->c = evfcgi_conn_new(l->ops, l->ctx, &l->lim)) == NULL) {
			free(s);
			close(fd);
			continue;
		}
		s->fd = fd;
		ev.data.ptr = s;
		if (epoll_ctl(l->epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			evfcgi_conn_free(s->c);
			free(s);
			close(fd);
			continue;
		}
		s->next = l->socks;
		if (l->socks != NULL)
			l->socks->prev = s;
		l->socks = s;
		l->nsocks++;
	}
}

/* Reads what came on s and runs its records; closes s on EOF or a failure. */
static void
evfcgi_read(struct evfcgi_loop *l, struct evfcgi_sock *s)
{
	static unsigned char buf[EVFCGI_READ];
	ssize_t n;

	n = recv(s->fd, buf, sizeof(buf), MSG_DONTWAIT);
	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return;
	if (n <= 0) {
		evfcgi_sock_close(l, s);
		return;
	}
	/* A -1 is seen by the flush: closing after its output, or dropped. */
	(void)evfcgi_conn_feed(s->c, buf, (size_t)n);
}

/* One batch of events. */
static void
evfcgi_events(struct evfcgi_loop *l, const struct epoll_event *ev, int n)
{
	struct evfcgi_sock *s;
	int i;

	for (i = 0; i < n; i++) {
		if (ev[i].data.ptr == NULL) {
			evfcgi_accept(l);
			continue;
		}
		if (ev[i].data.ptr == &evfcgi_own_tag) {
			/* Only added to the set when both hooks are there (evfcgi_run()). */
			if (l->ops->own_ready != NULL)
				l->ops->own_ready(l->ctx);
			continue;
		}
		s = ev[i].data.ptr;
		if (s->dead)
			continue;
		if (ev[i].events & (EPOLLIN | EPOLLHUP | EPOLLERR))
			evfcgi_read(l, s);
		else if (ev[i].events & EPOLLOUT)
			(void)evfcgi_sock_flush(l, s);
	}
}

/* Turns of the loop until a stop signal; -1 when the wait itself fails. */
static int
evfcgi_run(struct evfcgi_loop *l, const sigset_t *wait_mask)
{
	struct epoll_event ev[EVFCGI_EVENTS];
	long long now, next_tick;
	int n, timeout;

	next_tick = clock_now_ms() + l->ops->tick_ms;
	while (!evfcgi_stop) {
		timeout = -1;
		now = clock_now_ms();
		if (l->ops->tick != NULL)
			timeout = next_tick > now ? (int)(next_tick - now) : 0;
		if (l->rest_until != 0 && (timeout < 0 || l->rest_until - now < timeout))
			timeout = l->rest_until > now ? (int)(l->rest_until - now) : 0;
		n = epoll_pwait(l->epfd, ev, EVFCGI_EVENTS, timeout, wait_mask);
		if (n < 0 && errno != EINTR) {
			log_err("epoll_pwait: %s", strerror(errno));
			return -1;
		}
		now = clock_now_ms();
		if (l->watch != NULL)
			atomic_store(l->watch, now);
		if (n > 0)
			evfcgi_events(l, ev, n);
		evfcgi_accept_resume(l, now);
		if (l->ops->tick != NULL && now >= next_tick) {
			l->ops->tick(l->ctx, now);
			next_tick = now + l->ops->tick_ms;
		}
		evfcgi_flush_all(l);
		evfcgi_reap(l);
		if (l->watch != NULL)
			atomic_store(l->watch, 0);
	}
	return 0;
}

/* The stop: no new connection, every open request finished, queued output sent for
 * EVFCGI_STOP_MS at most, every connection closed. */
static void
evfcgi_drain(struct evfcgi_loop *l)
{
	struct epoll_event ev[EVFCGI_EVENTS];
	struct evfcgi_sock *s, *next;
	struct evfcgi_req *r;
	long long until = clock_now_ms() + EVFCGI_STOP_MS, now;
	int n;

	(void)epoll_ctl(l->epfd, EPOLL_CTL_DEL, l->listen_fd, NULL);
	for (s = l->socks; s != NULL; s = s->next)
		if ((r = evfcgi_conn_req(s->c)) != NULL) {
			if (l->ops->gone != NULL)
				l->ops->gone(l->ctx, r);
			(void)evfcgi_finish(r);
		}
	for (;;) {
		/* An idle connection (kept, or whose request just ended) closes now. */
		for (s = l->socks; s != NULL; s = next) {
			size_t len;

			next = s->next;
			(void)evfcgi_conn_pending(s->c, &len);
			if (len == 0)
				evfcgi_sock_close(l, s);
		}
		evfcgi_flush_all(l);
		now = clock_now_ms();
		if (l->socks == NULL || now >= until)
			break;
		n = epoll_wait(l->epfd, ev, EVFCGI_EVENTS, (int)(until - now));
		if (n > 0)
			evfcgi_events(l, ev, n);
		evfcgi_reap(l);
	}
	while (l->socks != NULL)
		evfcgi_sock_close(l, l->socks);
	evfcgi_reap(l);
}

/* The limits from the settings; -1 (logged) when one is malformed. */
static int
evfcgi_limits_load(struct evfcgi_limits *lim)
{
	long long conns, buf, params, body;

	if (settings_int(SETTING_STREAM_CONNS, &conns) < 0 ||
	    settings_int(SETTING_STREAM_BUF, &buf) < 0 ||
	    settings_int(SETTING_STREAM_PARAMS_MAX, &params) < 0 ||
	    settings_int(SETTING_BODY_MAX, &body) < 0)
		return -1;
	lim->conns_max = (int)conns;
	lim->out_max = (size_t)buf;
	lim->params_max = (size_t)params;
	lim->stdin_max = (size_t)body;
	return 0;
}

/* The soft descriptor limit raised to the hard one (sluiced does it for its workers; a
 * worker run alone needs it too), and warned about when below the connection cap. */
static void
evfcgi_nofile(int conns)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) < 0)
		return;
	if (rl.rlim_cur < rl.rlim_max) {
		rl.rlim_cur = rl.rlim_max;
		(void)setrlimit(RLIMIT_NOFILE, &rl);
	}
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < (rlim_t)conns + 64)
		log_warn("descriptor limit %llu is below stream_conns=%d",
		    (unsigned long long)rl.rlim_cur, conns);
}

/* The watchdog's slot from SLUICE_WATCHDOG_FD (the descriptor closed), or NULL. */
static atomic_llong *
evfcgi_watch_map(void)
{
	long long fd;
	void *p;

	if (settings_int(SETTING_WATCHDOG_FD, &fd) < 0 || fd < 0)
		return NULL;
	p = mmap(NULL, SERVE_WATCH_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	(void)close((int)fd);
	if (p == MAP_FAILED) {
		log_warn("the watchdog's page cannot be mapped: %s", strerror(errno));
		return NULL;
	}
	return p;
}

/* The counters' page (SLUICE_METRICS_FD) is not kept: the loop counts nothing there
 * yet, so its descriptor is closed rather than left open for the process's life. */
static void
evfcgi_metrics_close(void)
{
	long long fd;

	if (settings_int(SETTING_METRICS_FD, &fd) == 0 && fd >= 0)
		(void)close((int)fd);
}

/* Finds the listening socket: -s PATH (bound here) or fd 0.  -1 (said) when none. */
static int
evfcgi_listener(int argc, char **argv, const char **path)
{
	int opt;

	*path = NULL;
	while ((opt = getopt(argc, argv, "hs:")) != -1) {
		if (opt != 's') {
			fprintf(stderr, "usage: %s [-s socket-path]\n", argv[0]);
			return -1;
		}
		*path = optarg;
	}
	if (*path != NULL)
		return serve_listen_path(*path);
	if (!serve_is_listener(STDIN_FILENO)) {
		fprintf(stderr, "%s: no listening socket on fd 0 (run it under sluiced, or "
		    "with -s PATH)\n", argv[0]);
		return -1;
	}
	return STDIN_FILENO;
}

/*
 * The loop's set, holding the listening socket (made non-blocking: during a reload the
 * old and new workers share it, and the loser of a race must not block in accept()).
 * Returns its descriptor, or -1 (logged).
 */
static int
evfcgi_set_open(int listen_fd)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLEXCLUSIVE, .data.ptr = NULL };
	int fl, epfd = -1;

	if ((fl = fcntl(listen_fd, F_GETFL)) < 0 ||
	    fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    (epfd = epoll_create1(EPOLL_CLOEXEC)) < 0 ||
	    epoll_ctl(epfd, EPOLL_CTL_ADD, listen_fd, &ev) < 0) {
		log_err("event loop: %s", strerror(errno));
		if (epfd >= 0)
			close(epfd);
		return -1;
	}
	return epfd;
}

int
evfcgi_main(int argc, char **argv, const char *name, const struct evfcgi_ops *ops,
    void *ctx, int (*init)(void *ctx))
{
	struct evfcgi_loop l;
	const char *path = NULL, *logname = settings_get(SETTING_NAME);
	sigset_t wait_mask;
	long long level;
	int rc = 1;

	memset(&l, 0, sizeof(l));
	l.ops = ops;
	l.ctx = ctx;
	log_init(logname != NULL ? logname : name);
	if (settings_int(SETTING_LOG_LEVEL, &level) == 0)
		log_set_level((enum log_level)level);
	if (evfcgi_limits_load(&l.lim) < 0 || (l.listen_fd = evfcgi_listener(argc, argv,
	    &path)) < 0)
		return 1;
	evfcgi_signals(&wait_mask);
	evfcgi_nofile(l.lim.conns_max);
	if ((l.epfd = evfcgi_set_open(l.listen_fd)) < 0)
		goto out;
	l.watch = evfcgi_watch_map();
	evfcgi_metrics_close();
	if (init != NULL && init(ctx) < 0)
		goto out;
	if (ops->own_fd != NULL && ops->own_ready != NULL) {
		struct epoll_event ev = { .events = EPOLLIN, .data.ptr = &evfcgi_own_tag };
		int fd = ops->own_fd(ctx);

		if (fd >= 0 && epoll_ctl(l.epfd, EPOLL_CTL_ADD, fd, &ev) < 0) {
			log_err("event loop: %s", strerror(errno));
			goto out;
		}
	}
	/* Start-up is over: confine the process (sandbox.h). */
	if (sandbox_apply() < 0)
		goto out;
	log_debug("serving streams, at most %d connections", l.lim.conns_max);
	if (evfcgi_run(&l, &wait_mask) == 0)
		rc = 0;
	evfcgi_drain(&l);
out:
	if (l.watch != NULL)
		(void)munmap(l.watch, SERVE_WATCH_SIZE);
	if (l.epfd >= 0)
		close(l.epfd);
	if (path != NULL) {
		unlink(path);
		close(l.listen_fd);
	}
	return rc;
}
