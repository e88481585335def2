/*
 * serve.c: the serve loop over fcgi2's FCGX_*_r API (see serve.h).
 *
 * Signals.  fcgi2 writes with a plain write(2) that gives up on EINTR, so a signal that
 * lands while a response is being written would cut it short.  Every serving thread
 * therefore keeps all signals blocked, SIGUSR2 included, except while it sleeps in
 * epoll_pwait() for a connection with a request (serve_conns_next()), whose mask lets
 * SIGUSR2 in for that wait alone (one system call, where unblocking around the wait took
 * two more per request).  The main thread waits for SIGTERM, SIGINT, SIGUSR1 and SIGHUP
 * with sigwait(); on a stop signal it sets the stop flag, calls FCGX_ShutdownPending(),
 * and sends SIGUSR2 to every serving thread every few milliseconds until all have left.
 * A thread waiting in epoll_pwait() gets EINTR (the handler is installed without
 * SA_RESTART, before FCGX_Init() so that fcgi2 leaves it alone); a thread in the middle of
 * a request finishes it first; then each serves what was sent before the stop (the
 * connections still in the accept queue, the kept ones whose request has arrived:
 * serve_conns_queued(), for a second at most), closing each after its answer, and leaves;
 * the idle kept-alive connections close with the process.  So a worker leaves only
 * between requests, even behind nginx's keepalive.
 * A SIGHUP only counts (serve_reloads()): each serving thread sees the count move before
 * its next request and calls the endpoint's thread_reload() (serve_req.c).
 *
 * Connections.  No connection belongs to a thread.  fcgi2 on its own binds a thread to
 * the connection it accepted until nginx closes it, and nginx's `keepalive K` caps only
 * the connections it keeps *idle*: under saturation no kept connection stays idle, every
 * thread ends up bound to one, and the connections waiting in the accept queue are served
 * only once the load drops (the clients on kept connections get fast answers while the
 * others get none until the burst is over).  Here the listening
 * socket and every idle kept connection of the process wait in one epoll set, and a free
 * thread takes a new connection if one is waiting, else the kept connection whose request
 * came first (epoll's ready list is first come, first served; serve_conns_next() says
 * why new ones go first).  fcgi2 then reads the request from that connection
 * (FCGX_Request.ipcFd set before FCGX_Accept_r(), which never accepts itself), and after
 * the response a kept connection goes back into the set.  The listening socket is in
 * every worker's set with EPOLLEXCLUSIVE (a new connection wakes one idle worker, not
 * all), edge-triggered (one thread woken per arrival; a thread always looks for a
 * waiting connection before it waits, so none is left in the queue) and non-blocking
 * (the worker that loses a race for it gets EAGAIN); a kept connection is armed for one
 * event at a time (EPOLLONESHOT), so one thread reads it.  Not every thread waits in the
 * set: serve_gate.c lets a few (twice the pool's CPUs) wait at once and parks the others until
 * requests sleep or run long, so that under load a few warm threads serve the requests.
 *
 * Watchdog.  When sluiced gives the worker a shared page (SLUICE_WATCHDOG_FD), each
 * serving thread writes into its slot the CLOCK_MONOTONIC time its request started, and 0
 * once it is answered.  sluiced reads the slots in its poll loop and kills a worker whose
 * request has run past the time budget and a grace: a worker that hangs (stopped, stuck in
 * a system call, looping outside SQLite) is replaced, and the locks it held go with it.
 * The page also carries sluiced's heartbeat (settings.h, SETTINGS_WATCH_BEAT): the main
 * thread looks at it every second, and a worker whose supervisor has been silent longer
 * than SLUICE_ORPHAN_GRACE_MS (30 s) leaves as on SIGTERM.  Until then it goes on serving
 * without a supervisor, so that a sluiced killed or upgraded takes no request with it: a
 * new sluiced on the same run directory adopts the worker (supervisor/adopt.c), finding
 * the page and the counters' page on the descriptors sluiced gave them (kept open here
 * for that) and taking the heartbeat up again.
 *
 * Counters.  When sluiced gives the worker a counters page (SLUICE_METRICS_FD), each
 * serving thread counts there its requests, their durations and the connections it
 * accepted and closed (common/metrics.h); sluiced reads them.  The request's start time
 * is the one clock read the watchdog's slot takes anyway, and one more at its end.
 *
 * Requests.  What happens to one request, from its parameters to its response, is
 * serve_req.c's serve_request().
 */
/* sched_getaffinity(), CPU_COUNT(). */
#define _GNU_SOURCE	/* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <fcgiapp.h>

#include "arena.h"
#include "clock.h"
#include "extern.h"
#include "settings.h"
#include "log.h"
#include "metrics.h"
#include "sandbox.h"
#include "serve.h"
#include "serve_gate.h"
#include "serve_ops.h"

#define SERVE_WAKE_SIGNAL	SIGUSR2
/* At a stop, how long a connection still in the accept queue has to send its request:
 * nginx writes it right after connecting. */
#define SERVE_DRAIN_MS		100
/* How long after the stop a thread keeps taking what was sent before it: the queue of a
 * socket that stays (a reload's, whose new workers share it; a TCP pool's) never runs
 * dry under load, and the drain must end for the worker to leave within its grace. */
#define SERVE_DRAIN_FOR_MS	1000

extern char **environ;

/* The process's connections waiting for a thread: see "Connections" above. */
struct serve_conns {
	int epfd;
	int listen_fd;
	int tcp;		/* the listening socket is TCP: no Nagle on its connections */
};

static atomic_int serve_stopping;
/* The thread that waits for signals (serve_main()), for serve_restart(). */
static pthread_t serve_main_thread;
static int serve_main_set;
static atomic_uint serve_hups;		/* SIGHUPs received: see serve_reloads() */

unsigned
serve_reloads(void)
{
	return atomic_load(&serve_hups);
}

void
serve_reload_soon(void)
{
	(void)atomic_fetch_add(&serve_hups, 1);
}

void
serve_restart(void)
{
	/* SIGUSR1 is a stop signal to the waiting thread like SIGTERM (any but SIGHUP). */
	if (atomic_exchange(&serve_stopping, 1) == 0 && serve_main_set)
		(void)pthread_kill(serve_main_thread, SIGUSR1);
}

/* Runs in whichever serving thread SIGUSR2 interrupts: only async-signal-safe work. */
static void
serve_wake(int sig)
{
	(void)sig;
	atomic_store(&serve_stopping, 1);
	FCGX_ShutdownPending();
}

static void
serve_ignore(int sig)
{
	(void)sig;
}

/*
 * Installs the handlers before FCGX_Init(): fcgi2 replaces only default or ignored
 * handlers, so these stay.  None uses SA_RESTART: a wait must return EINTR.
 */
static void
serve_signals_install(sigset_t *waited)
{
	struct sigaction sa;

	/* Blocked before the handlers go in: a stop signal that arrives during start-up stays
	 * pending until sigwait() takes it, instead of landing in serve_ignore() and being
	 * lost (the worker would then stay until sluiced's grace runs out). */
	sigemptyset(waited);
	sigaddset(waited, SIGTERM);
	sigaddset(waited, SIGINT);
	sigaddset(waited, SIGUSR1);
	sigaddset(waited, SIGHUP);
	pthread_sigmask(SIG_BLOCK, waited, NULL);

	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	sa.sa_handler = serve_wake;
	sigaction(SERVE_WAKE_SIGNAL, &sa, NULL);
	sa.sa_handler = serve_ignore;
	sigaction(SIGPIPE, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGHUP, &sa, NULL);
}

/* CGI: one request, then exit; a stop signal ends the process as it would any program. */
static void
serve_signals_default(const sigset_t *waited)
{
	signal(SIGTERM, SIG_DFL);
	signal(SIGINT, SIG_DFL);
	signal(SIGUSR1, SIG_DFL);
	signal(SIGHUP, SIG_DFL);
	pthread_sigmask(SIG_UNBLOCK, waited, NULL);
}

/* Blocks every signal in the calling thread (threads created later inherit this). */
static void
serve_block_all(void)
{
	sigset_t all;

	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, NULL);
}

/* The mask a serving thread sleeps with in epoll_pwait(): everything blocked but the
 * wake-up signal.  A wake-up sent before the wait stays pending and interrupts it. */
static sigset_t serve_wait_mask;

static void
serve_wait_mask_init(void)
{
	sigfillset(&serve_wait_mask);
	sigdelset(&serve_wait_mask, SERVE_WAKE_SIGNAL);
}

static int
serve_settings_load(struct serve_settings *s, const struct endpoint *ep)
{
	long long threads, body, arena, resp, cpus, budget;

	if (settings_int(SETTING_THREADS, &threads) < 0 ||
	    settings_int(SETTING_STMT_TIMEOUT_MS, &budget) < 0 ||
	    settings_int(SETTING_CPUS, &cpus) < 0 ||
	    settings_int(SETTING_BODY_MAX, &body) < 0 ||
	    settings_int(SETTING_ARENA_MAX, &arena) < 0 ||
	    settings_int(SETTING_RESP_MAX, &resp) < 0 ||
	    settings_int(SETTING_ORPHAN_GRACE_MS, &s->orphan_ms) < 0)
		return -1;
	s->threads = (int)threads;
	s->cpus = (int)cpus;
	s->body_max = (size_t)body;
	s->arena_max = (size_t)arena;
	s->resp_max = (size_t)resp;
	s->budget_us = (uint64_t)budget * 1000;
	/* The body lives in the arena, so the arena must hold at least one full body. */
	if (s->arena_max < s->body_max + 1024 * 1024)
		s->arena_max = s->body_max + 1024 * 1024;
	s->db_url = settings_get(SETTING_DB);
	if (ep->db != NULL && (s->db_url == NULL || *s->db_url == '\0')) {
		log_err("this endpoint needs a database: set db= in the endpoint list "
		    "(SLUICE_DB)");
		return -1;
	}
	return 0;
}

/*
 * A thread's arena and response; with connect, its database connection too.  The first
 * thread connects at start-up, so that a database that cannot be opened stops the worker
 * at once (the supervisor reports the pool); the others connect at their first request
 * (serve_request()), so that an idle thread holds no SQLite connection (its schema and
 * page cache) and the thread count costs an idle worker only stacks.
 */
static int
serve_thread_init(struct serve_thread *t, int connect)
{
	if ((t->arena = arena_new(t->set->arena_max)) == NULL)
		return -1;
	resp_init(&t->rs, t->set->resp_max);
	t->rs.error_ids = !t->ep->dialect_errors;
	reqid_seed(&t->idgen);
	if (connect && t->ep->db != NULL && serve_db_connect(t) < 0)
		return -1;
	return 0;
}

static void
serve_thread_fini(struct serve_thread *t)
{
	if (t->state != NULL && t->ep->thread_fini != NULL)
		t->ep->thread_fini(t->state);
	t->state = NULL;
	if (t->db != NULL)
		t->ep->db->close(t->db);
	t->db = NULL;
	resp_free(&t->rs);
	arena_free(t->arena);
	t->arena = NULL;
}

/*
 * The set starts with the listening socket, made non-blocking (every worker of the pool
 * shares it: the losers of a race for a connection must not block in accept()).
 */
static int
serve_conns_open(struct serve_conns *c, int listen_fd)
{
	struct epoll_event ev = {
		.events = EPOLLIN | EPOLLET | EPOLLEXCLUSIVE, .data.fd = listen_fd
	};
	struct sockaddr_storage ss = { 0 };
	socklen_t sl = sizeof(ss);
	int fl;

	c->listen_fd = listen_fd;
	c->tcp = getsockname(listen_fd, (struct sockaddr *)&ss, &sl) == 0 &&
	    (ss.ss_family == AF_INET || ss.ss_family == AF_INET6);
	if ((fl = fcntl(listen_fd, F_GETFL)) < 0 ||
	    fcntl(listen_fd, F_SETFL, fl | O_NONBLOCK) < 0 ||
	    (c->epfd = epoll_create1(EPOLL_CLOEXEC)) < 0) {
		log_err("connection set: %s", strerror(errno));
		return -1;
	}
	if (epoll_ctl(c->epfd, EPOLL_CTL_ADD, listen_fd, &ev) < 0) {
		log_err("connection set: %s", strerror(errno));
		close(c->epfd);
		return -1;
	}
	return 0;
}

/* Closes a connection, counted on the closing thread's counts mc (may be NULL). */
static void
serve_conns_close(int fd, struct metrics_counts *mc)
{
	close(fd);
	if (mc != NULL)
		metrics_conn(mc, 0);
}

/* Puts connection fd (back) into the set, armed for its next request; closes it if not. */
static void
serve_conns_park(struct serve_conns *c, int fd, struct metrics_counts *mc)
{
	struct epoll_event ev = { .events = EPOLLIN | EPOLLONESHOT, .data.fd = fd };

	if (epoll_ctl(c->epfd, EPOLL_CTL_MOD, fd, &ev) == 0)
		return;
	if (errno == ENOENT && epoll_ctl(c->epfd, EPOLL_CTL_ADD, fd, &ev) == 0)
		return;
	log_warn("connection set: %s; connection closed", strerror(errno));
	serve_conns_close(fd, mc);
}

/*
 * A connection just accepted: fd when its request is there to read; else -1, and the
 * connection waits in the set for it, or is closed if the web server has hung up already.
 */
static int
serve_conns_fresh(struct serve_conns *c, int fd, struct metrics_counts *mc)
{
	struct pollfd pfd = { .fd = fd, .events = POLLIN };
	int one = 1;

	if (c->tcp)
		(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	if (poll(&pfd, 1, 0) == 1 && !(pfd.revents & (POLLHUP | POLLERR)))
		return fd;
	if (pfd.revents & (POLLHUP | POLLERR))
		serve_conns_close(fd, mc);
	else
		serve_conns_park(c, fd, mc);
	return -1;
}

/*
 * Waits for the next connection with a request to read, and returns its descriptor, or
 * -errno (-EINTR: the wake-up signal).  A new connection comes first: nginx opens one only
 * when none of its kept connections is idle, and a thread that took the next kept request
 * instead would leave it in the accept queue behind every request of the kept ones (each
 * worker's set lists the listening socket once): under saturation the kept connections
 * would serve a few clients while the others waited.  Each worker takes new
 * connections only as fast as its own threads come free, so they spread over the pool.
 * Once the queue is empty (nginx keeps what it opened while it stays busy), the kept
 * connections' requests are served in the order they came.  A new connection whose
 * request has not arrived yet waits in the set like a kept one.  A connection the web
 * server has closed (a unix socket then hangs up: nginx gave up on the request, its client
 * having gone) is closed unread: nobody would read the answer.  When many clients leave
 * at once, this spares the next ones the wait for pages rendered for nobody.  The
 * connections accepted and closed are counted on mc (may be NULL).
 */
static int
serve_conns_next(struct serve_conns *c, struct metrics_counts *mc)
{
	struct epoll_event ev;
	struct pollfd pfd;
	int fd;

	for (;;) {
		/* poll() tells whether one is waiting for far less than a failed accept(),
		 * which sets up a whole socket before it finds the queue empty (a cost every
		 * request behind kept connections would pay). */
		pfd = (struct pollfd){ .fd = c->listen_fd, .events = POLLIN };
		if (poll(&pfd, 1, 0) == 1 && (pfd.revents & POLLIN)) {
			if ((fd = accept(c->listen_fd, NULL, NULL)) >= 0) {
				if (mc != NULL)
					metrics_conn(mc, 1);
				if ((fd = serve_conns_fresh(c, fd, mc)) >= 0)
					return fd;
				continue;
			}
			/* Another worker took it, or it was given up before we got to it. */
			if (errno != EAGAIN && errno != EWOULDBLOCK && errno != ECONNABORTED &&
			    errno != EINTR)
				return -errno;
		}
		if (epoll_pwait(c->epfd, &ev, 1, -1, &serve_wait_mask) < 0)
			return -errno;
		if (ev.data.fd == c->listen_fd)
			continue;
		if (!(ev.events & (EPOLLHUP | EPOLLERR)))
			return ev.data.fd;
		serve_conns_close(ev.data.fd, mc);
	}
}

/*
 * At a stop, the requests already sent to the worker are still served, and nothing else
 * is waited for: the next connection with a request to read, or -1 when there is none.
 * First those still in the accept queue (a connection nginx made before the stop; its
 * request is read for up to SERVE_DRAIN_MS), then the kept connections whose next
 * request has arrived.  sluiced removes a unix socket's path when the stop begins, so no
 * connection joins the queue after it: what was queued before is answered instead of
 * reset when the last worker closes the socket.  A thread drains for SERVE_DRAIN_FOR_MS
 * from its first call at most (*until, 0 at first).
 */
static int
serve_conns_queued(struct serve_conns *c, struct metrics_counts *mc, long long *until)
{
	struct epoll_event ev;
	struct pollfd pfd;
	int fd, n, tries;

	if (*until == 0)
		*until = clock_now_ms() + SERVE_DRAIN_FOR_MS;
	else if (clock_now_ms() >= *until)
		return -1;
	while ((fd = accept(c->listen_fd, NULL, NULL)) >= 0 || errno == EINTR ||
	    errno == ECONNABORTED) {
		if (fd < 0)
			continue;
		if (mc != NULL)
			metrics_conn(mc, 1);
		pfd = (struct pollfd){ .fd = fd, .events = POLLIN };
		/* The wake-up signal may interrupt the wait: a few times at most. */
		for (tries = 0, n = -1; n < 0 && tries < 8; tries++)
			n = poll(&pfd, 1, SERVE_DRAIN_MS);
		if (n == 1 && (pfd.revents & POLLIN))
			return fd;
		serve_conns_close(fd, mc);
	}
	while ((n = epoll_wait(c->epfd, &ev, 1, 0)) == 1 || (n < 0 && errno == EINTR)) {
		if (n < 0 || ev.data.fd == c->listen_fd)
			continue;
		if (!(ev.events & (EPOLLHUP | EPOLLERR)))
			return ev.data.fd;
		serve_conns_close(ev.data.fd, mc);
	}
	return -1;
}

/*
 * Serves the request fcgi2 has read on r, timed once for the watchdog's slot and the
 * counters (a vDSO clock read at each end, no system call), and counted.
 */
static void
serve_counted(struct serve_thread *t, FCGX_Request *r, struct serve_io *io)
{
	long long t0 = 0;

	if (t->watch != NULL || t->counts != NULL)
		t0 = clock_now_us();
	if (t->watch != NULL)
		atomic_store(t->watch, t0 / 1000);
	if (t->counts != NULL)
		metrics_begin(t->metrics);
	serve_request(t, io, r->envp);
	FCGX_Finish_r(r);
	if (t->counts != NULL)
		metrics_end(t->metrics, t->counts, t->rs.status, metrics_method_of(t->method),
		    (uint64_t)(clock_now_us() - t0), t->set->budget_us);
	if (t->watch != NULL)
		atomic_store(t->watch, 0);
}

static void *
serve_thread_main(void *arg)
{
	struct serve_thread *t = arg;
	struct serve_io io;
	FCGX_Request r;
	struct serve_gate_slot slot;
	long long drain_until = 0;
	int fd, errors = 0;

	/* No listening socket for fcgi2: the connection is always given (ipcFd), and when
	 * fcgi2 drops a broken one, its attempt to accept another fails at once (EBADF). */
	if (FCGX_InitRequest(&r, -1, 0) != 0) {
		log_err("FCGX_InitRequest failed");
		goto out;
	}
	io.fcgi = &r;
	serve_gate_slot_init(&slot);
	for (;;) {
		if (atomic_load(&serve_stopping) || serve_gate_enter(&slot) < 0) {
			/* Stopping: what was sent before the stop, then leave. */
			if ((fd = serve_conns_queued(t->conns, t->counts, &drain_until)) < 0)
				break;
		} else {
			fd = serve_conns_next(t->conns, t->counts);
			serve_gate_leave();
		}
		if (fd < 0) {
			if (atomic_load(&serve_stopping))
				continue;
			/* EINTR, or a transient accept error (EMFILE): do not spin on it. */
			if (fd != -EINTR && errors++ % 1000 == 0)
				log_warn("accept failed: %s", strerror(-fd));
			if (fd != -EINTR)
				nanosleep(&(struct timespec){ 0, 10 * 1000 * 1000 }, NULL);
			continue;
		}
		/* keepConnection: the finish of the last request, which FCGX_Accept_r()
		 * begins with, must leave this connection open.  On EOF or a broken record
		 * fcgi2 closes it and fails. */
		r.ipcFd = fd;
		r.keepConnection = 1;
		if (FCGX_Accept_r(&r) < 0) {
			if (t->counts != NULL)
				metrics_conn(t->counts, 0);
			continue;
		}
		serve_counted(t, &r, &io);
		/* fcgi2 closed it when nginx did not ask to keep it.  Once stopping, it is
		 * closed after its answer: nginx then opens another for its next request. */
		if (r.ipcFd >= 0 && !atomic_load(&serve_stopping)) {
			serve_conns_park(t->conns, r.ipcFd, t->counts);
			r.ipcFd = -1;
		} else if (r.ipcFd >= 0) {
			serve_conns_close(r.ipcFd, t->counts);
			r.ipcFd = -1;
		} else if (t->counts != NULL) {
			metrics_conn(t->counts, 0);
		}
		arena_reset(t->arena);
		resp_reset(&t->rs);
	}
	FCGX_Free(&r, 1);
	serve_gate_slot_fini(&slot);
out:
	atomic_store(&t->done, 1);
	return NULL;
}

/*
 * Maps the watchdog's page from SLUICE_WATCHDOG_FD.  The descriptor stays open: a sluiced
 * that adopts this worker takes its copy of the page from it.  Returns the slots, or NULL
 * when there is no watchdog (unset, or a page that cannot be mapped: logged, the worker
 * serves unwatched).
 */
static atomic_llong *
serve_watch_map(void)
{
	long long fd;
	void *p;

	if (settings_int(SETTING_WATCHDOG_FD, &fd) < 0 || fd < 0)
		return NULL;
	p = mmap(NULL, SERVE_WATCH_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	if (p == MAP_FAILED) {
		(void)close((int)fd);
		log_warn("the watchdog's page cannot be mapped: %s", strerror(errno));
		return NULL;
	}
	return p;
}

/*
 * Maps the counters' page from SLUICE_METRICS_FD (common/metrics.h), sized for threads
 * serving threads, and attaches the database's counters to it.  The descriptor stays
 * open, as the watchdog's does, for a sluiced that adopts this worker.  Returns the page,
 * or NULL when there is none (unset, too small or cannot be mapped: logged, the worker
 * serves uncounted).
 */
static struct metrics_page *
serve_metrics_map(int threads)
{
	size_t size = metrics_page_size(threads);
	struct stat st;
	long long fd;
	void *p = MAP_FAILED;

	if (settings_int(SETTING_METRICS_FD, &fd) < 0 || fd < 0)
		return NULL;
	if (fstat((int)fd, &st) == 0 && (size_t)st.st_size >= size)
		p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, (int)fd, 0);
	else
		errno = EINVAL;
	if (p == MAP_FAILED) {
		(void)close((int)fd);
		log_warn("the counters' page cannot be mapped: %s", strerror(errno));
		return NULL;
	}
	/* The database layer counts its events there too. */
	metrics_db_attach(p);
	return p;
}

/* Undoes serve_metrics_map() once no thread counts any more (pg may be NULL). */
static void
serve_metrics_unmap(struct metrics_page *pg, int threads)
{
	metrics_db_attach(NULL);
	if (pg != NULL)
		(void)munmap(pg, metrics_page_size(threads));
}

/*
 * Development mode: binds a unix socket at path (replacing a stale one).  sluiced does
 * this itself in production; here the process owns the socket and removes it at exit.
 */
int
serve_listen_path(const char *path)
{
	struct sockaddr_un sun;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sun.sun_path)) {
		log_err("socket path too long: %s", path);
		return -1;
	}
	memcpy(sun.sun_path, path, strlen(path) + 1);
	if ((fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0)) < 0) {
		log_err("socket: %s", strerror(errno));
		return -1;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0 || listen(fd, 4096) < 0) {
		log_err("%s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	return fd;
}

/* 1 when fd is a listening socket (the spawn-fcgi convention for fd 0). */
int
serve_is_listener(int fd)
{
	int v = 0;
	socklen_t len = sizeof(v);

	return getsockopt(fd, SOL_SOCKET, SO_ACCEPTCONN, &v, &len) == 0 && v;
}

/*
 * How many of a worker's threads wait for requests at once (serve_gate.h): twice the CPUs
 * its pool may use, as sluiced counted them for the auto sizes (SLUICE_CPUS: set cpus, the
 * affinity mask, the cgroup's quota); without sluiced, its affinity mask.
 */
static int
serve_awake(const struct serve_settings *set)
{
	cpu_set_t mask;
	int cpus = set->cpus;

	if (cpus < 1)
		cpus = sched_getaffinity(0, sizeof(mask), &mask) == 0 && CPU_COUNT(&mask) > 0 ?
		    CPU_COUNT(&mask) : 1;
	return 2 * cpus;
}

/* Serves exactly one request from the CGI environment and stdin. */
static int
serve_cgi(const struct endpoint *ep, const struct serve_settings *set)
{
	struct serve_thread t;
	struct serve_io io = { NULL };
	int rc = 1;

	memset(&t, 0, sizeof(t));
	t.ep = ep;
	t.set = set;
	if (serve_thread_init(&t, 1) < 0) {
		struct resp rs;

		/* Still answer: a CGI server shows a script that prints nothing as a 500. */
		resp_init(&rs, 4096);
		resp_error(&rs, 503, "unavailable", "the service is unavailable", NULL, NULL);
		resp_send(&rs, serve_write, &io);
		resp_free(&rs);
		goto out;
	}
	serve_request(&t, &io, environ);
	rc = 0;
out:
	serve_thread_fini(&t);
	return rc;
}

static void
serve_usage(const char *prog)
{
	fprintf(stderr,
	    "usage: %s [-s socket-path]\n"
	    "  Serves FastCGI on the listening socket on fd 0 (as started by sluiced),\n"
	    "  on socket-path with -s, or one CGI request when GATEWAY_INTERFACE is set.\n",
	    prog);
}

/* The worker's log: named after SLUICE_NAME or the endpoint, at SLUICE_LOG_LEVEL. */
static void
serve_log_init(const struct endpoint *ep)
{
	const char *name = settings_get(SETTING_NAME);
	long long level;

	log_init(name != NULL ? name : ep->name);
	if (settings_int(SETTING_LOG_LEVEL, &level) < 0)
		log_warn("unknown SLUICE_LOG_LEVEL; using info");
	else
		log_set_level((enum log_level)level);
}

/*
 * The serving threads t[0..set->threads): each made ready (the first also checks the
 * database), the gate started, the process confined, then each started; *started counts
 * those running.  0, or -1 (logged) with *started of them to stop.
 */
static int
serve_threads_start(struct serve_thread *t, const struct endpoint *ep,
    const struct serve_settings *set, struct serve_conns *conns, atomic_llong *watch,
    struct metrics_page *metrics, int *started)
{
	int i;

	*started = 0;
	for (i = 0; i < set->threads; i++) {
		t[i].ep = ep;
		t[i].set = set;
		t[i].conns = conns;
		t[i].watch = watch != NULL && i < SETTINGS_WATCH_SLOTS ? &watch[i] : NULL;
		t[i].metrics = metrics;
		t[i].counts = metrics != NULL ? &metrics->thread[i] : NULL;
		if (serve_thread_init(&t[i], i == 0) < 0)
			return -1;
	}
	if (serve_gate_start(set->threads, serve_awake(set)) < 0)
		return -1;
	/* Start-up is over: confine the process before any request (sandbox.h). */
	if (sandbox_apply() < 0)
		return -1;
	for (i = 0; i < set->threads; i++) {
		if (pthread_create(&t[i].tid, NULL, serve_thread_main, &t[i]) != 0) {
			log_err("pthread_create failed");
			return -1;
		}
		(*started)++;
	}
	return 0;
}

/*
 * Whether the supervisor has been silent longer than the orphan grace: its heartbeat on
 * the watchdog's page (watch, NULL: no supervisor to hear) older than grace_ms.  Logged
 * once, when it is.
 */
static int
serve_orphaned(atomic_llong *watch, long long grace_ms)
{
	long long beat, now;

	if (watch == NULL)
		return 0;
	beat = atomic_load(&watch[SETTINGS_WATCH_BEAT]);
	now = clock_now_ms();
	if (beat <= 0 || now - beat <= grace_ms)
		return 0;
	log_warn("no word from sluiced for %lld ms (orphan_grace_ms=%lld): no supervisor "
	    "adopted this worker; leaving", now - beat, grace_ms);
	return 1;
}

/*
 * Waits for the signal that stops the worker, counting SIGHUPs (serve_reloads()), and,
 * with a watchdog's page, looks at the supervisor's heartbeat every second: an orphan
 * past its grace stops as on SIGTERM.
 */
static void
serve_wait_stop(sigset_t *waited, atomic_llong *watch, long long grace)
{
	struct timespec every = { 1, 0 };
	int sig;

	for (;;) {
		if (watch == NULL ? sigwait(waited, &sig) != 0 :
		    (sig = sigtimedwait(waited, NULL, &every)) < 0) {
			if (serve_orphaned(watch, grace))
				break;
			continue;
		}
		if (sig != SIGHUP)
			break;
		atomic_fetch_add(&serve_hups, 1);
	}
}

/* Stops the started threads t[0..started): woken until each is done, then joined.
 * Returns the requests they served. */
static unsigned long
serve_threads_stop(struct serve_thread *t, int started)
{
	unsigned long served = 0;
	int i, left;

	atomic_store(&serve_stopping, 1);
	FCGX_ShutdownPending();
	serve_gate_stop();
	for (;;) {
		left = 0;
		for (i = 0; i < started; i++)
			if (!atomic_load(&t[i].done)) {
				left++;
				pthread_kill(t[i].tid, SERVE_WAKE_SIGNAL);
			}
		if (left == 0)
			break;
		nanosleep(&(struct timespec){ 0, 5 * 1000 * 1000 }, NULL);
	}
	for (i = 0; i < started; i++) {
		pthread_join(t[i].tid, NULL);
		served += t[i].served;
	}
	return served;
}

/*
 * malloc's arenas and thresholds for a worker of many threads.  glibc's defaults give a
 * process up to eight arenas a CPU, each given back to the system down to 128 kB as soon
 * as its top is free: a worker whose threads take turns reading large results (libpq
 * keeps a result's rows in 2 kB blocks, a megabyte for the all-albums embed) spread them
 * over sixteen arenas on two CPUs, faulted some 200 pages back in for each such request
 * and held 190 MB (RSS) where 80 do.  One arena a CPU (no more threads run at once), a
 * top kept up to 8 MB before it is given back, and blocks under 1 MB from the arenas
 * rather than mapped and unmapped each time: 5 faults a request instead of 190, 2.7 ms
 * of the worker's CPU instead of 7.9; the records API's small requests measured the same.
 */
static void
serve_malloc_tune(void)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);

	(void)mallopt(M_ARENA_MAX, cpus > 0 && cpus < 64 ? (int)cpus : 64);
	(void)mallopt(M_TRIM_THRESHOLD, 8 << 20);
	(void)mallopt(M_MMAP_THRESHOLD, 1 << 20);
}

/* Threads inherit the mask: everything blocked; each lets its wake-up in only while it
 * waits (serve_wait_mask).  The main thread is the one signals go to. */
static void
serve_mask_for_threads(void)
{
	serve_wait_mask_init();
	serve_block_all();
	serve_main_thread = pthread_self();
	serve_main_set = 1;
}

int
serve_main(int argc, char **argv, const struct endpoint *ep)
{
	struct serve_settings set;
	struct serve_thread *threads = NULL;
	struct serve_conns conns = { -1, -1, 0 };
	const char *sock_path = NULL;
	sigset_t waited;
	int listen_fd = -1, i, started = 0, rc = 1, opt;
	unsigned long served;
	atomic_llong *watch = NULL;
	struct metrics_page *metrics = NULL;

	serve_log_init(ep);
	while ((opt = getopt(argc, argv, "hs:")) != -1)
		switch (opt) {
		case 's':
			sock_path = optarg;
			break;
		default:
			serve_usage(argv[0]);
			return opt == 'h' ? 0 : 1;
		}
	if (serve_settings_load(&set, ep) < 0)
		return 1;

	serve_signals_install(&waited);
	if (sock_path == NULL && !serve_is_listener(STDIN_FILENO)) {
		if (getenv("GATEWAY_INTERFACE") == NULL) {
			serve_usage(argv[0]);
			return 1;
		}
		serve_signals_default(&waited);
		return serve_cgi(ep, &set);
	}
	if (sock_path != NULL && (listen_fd = serve_listen_path(sock_path)) < 0)
		return 1;
	if (sock_path == NULL)
		listen_fd = STDIN_FILENO;
	if (FCGX_Init() != 0) {
		log_err("FCGX_Init failed");
		goto out;
	}
	if (serve_conns_open(&conns, listen_fd) < 0)
		goto out;

	serve_mask_for_threads();
	serve_malloc_tune();
	if ((threads = calloc((size_t)set.threads, sizeof(*threads))) == NULL)
		goto out;
	watch = serve_watch_map();
	metrics = serve_metrics_map(set.threads);
	/* A thread about to sleep in the database layer calls the gate first, so that another
	 * takes requests meanwhile (serve_gate.h); installed before any connection opens. */
	if (ep->db != NULL)
		ep->db->blocking_hook(serve_gate_blocking);
	if (serve_threads_start(threads, ep, &set, &conns, watch, metrics, &started) == 0) {
		/* Per-worker lines are debug: sluiced logs one line per pool at start and
		 * stop. */
		log_debug("serving with %d thread%s%s", set.threads, set.threads == 1 ? "" :
		    "s", set.db_url && ep->db ? " and a database" : "");
		serve_wait_stop(&waited, watch, set.orphan_ms);
		rc = 0;
	}
	served = serve_threads_stop(threads, started);
	log_debug("stopped after %lu request%s", served, served == 1 ? "" : "s");
out:
	if (threads != NULL)
		for (i = 0; i < set.threads; i++)
			serve_thread_fini(&threads[i]);
	free(threads);
	if (watch != NULL)
		(void)munmap(watch, SERVE_WATCH_SIZE);
	serve_metrics_unmap(metrics, set.threads);
	if (conns.epfd >= 0)
		close(conns.epfd);
	if (sock_path != NULL) {
		unlink(sock_path);
		close(listen_fd);
	}
	return rc;
}
