/*
 * sluiced.c: the supervisor's entry point, command line and main loop.
 *
 *   sluiced [-c CONF] [-r RUNDIR] [-b BINDIR] [-g GRACE_MS]
 *       runs in the foreground, logs to stderr; defaults conf/endpoints.conf, run/, bin/,
 *       5000 ms.  Creates RUNDIR, writes RUNDIR/sluiced.pid, one socket RUNDIR/NAME.sock
 *       per endpoint and the control socket RUNDIR/sluiced.ctl.
 *   sluiced [-c CONF] user
 *       prints USER:GROUP that sluiced, started now, would run its pools as (the run user
 *       when root, see priv.c; else the caller's), for scripts that prepare data.
 *   sluiced [-r RUNDIR] ctl status [--json] | top [COUNT] | up | wait [SECONDS] |
 *       reload [NAME] | upgrade | stop
 *       talks to the running supervisor; prints its answer; exit 0 on success, 1 when the
 *       supervisor refused or is not reachable, 2 on usage errors.  `wait` returns once
 *       every pool is up (0) or one failed or SECONDS (30) passed (1), see ctl.c.
 *       `reload` without NAME re-reads the endpoint list, all or nothing (reread.c), and
 *       regenerates and reloads the proxy when RUNDIR/proxy.args says how (reload.c).
 *   sluiced [-c CONF] [-r RUNDIR] nginx default|tuned [-p PREFIX] [-l LISTEN] [-w W] [-k K]
 *       [-u USER[:GROUP]] [-H ADDR,ADDR...] [-o FILE]
 *       prints the generated nginx.conf (to FILE with -o, which also creates PREFIX/logs
 *       and records the command in RUNDIR/proxy.args for `ctl reload`);
 *       -u names the user of nginx's workers when it is started as root (see nginx.c);
 *       -H writes a load balancer's file whose upstreams list every app host (nginxconf.h).
 *   sluiced [-c CONF] [-r RUNDIR] [-b BINDIR] apache default|tuned|cgi|fcgid [-p PREFIX]
 *       [-l LISTEN] [-w CHILDREN] [-k REUSE_MAX] [-o FILE]
 *       prints the generated apache2.conf (PREFIX defaults to RUNDIR/apache, LISTEN to
 *       127.0.0.1:8081; -o also creates PREFIX's directories and its JSON error files).
 *
 * Signals: SIGTERM/SIGINT stop gracefully (exit 0), SIGHUP re-reads the endpoint list as
 * `ctl reload` does, all or nothing (the proxy is left alone),
 * SIGCHLD reaps and restarts workers.  Handlers only write the signal number into a
 * self-pipe; all the work happens in the poll() loop, never in a handler.  Workers stay in
 * sluiced's session (no setsid, docs/fastcgi.md rule 15).
 *
 * A restart without a gap (adopt.c).  The workers outlive sluiced; a sluiced started on a
 * run directory whose sluiced.workers names live workers adopts them and their sockets
 * before it binds anything, and polls the adopted workers' pidfds beside its other
 * descriptors.  `ctl upgrade` makes the running sluiced record its workers and execv()
 * the binary it was started from, with its own command line: the same pid, the new
 * binary, which adopts them; the client then reloads each pool in turn, so that the
 * workers too run the new binaries.
 */
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "settings.h"
#include "sluiced.h"
#include "str.h"

static int sluiced_sig_pipe[2] = { -1, -1 };

static void
sluiced_on_signal(int sig)
{
	unsigned char b = (unsigned char)sig;
	int saved = errno;

	/* A full pipe already holds a wake-up; losing this byte loses nothing. */
	if (write(sluiced_sig_pipe[1], &b, 1) == -1)
		(void)0;
	errno = saved;
}

static void
sluiced_usage(void)
{
	fprintf(stderr,
	    "usage: sluiced [-c CONF] [-r RUNDIR] [-b BINDIR] [-g GRACE_MS]\n"
	    "       sluiced [-r RUNDIR] ctl status [--json] | top [COUNT] | up | wait [SECONDS] |\n"
	    "               reload [NAME] | upgrade | stop\n"
	    "       sluiced [-c CONF] user\n"
	    "       sluiced [-c CONF] [-r RUNDIR] nginx default|tuned [-p PREFIX] [-l LISTEN]\n"
	    "               [-w NGINX_WORKERS] [-k KEEPALIVE] [-u USER[:GROUP]]\n"
	    "               [-H APP_HOST,APP_HOST...] [-o FILE]\n"
	    "       sluiced [-c CONF] [-r RUNDIR] [-b BINDIR] apache default|tuned|cgi|fcgid\n"
	    "               [-p PREFIX] [-l LISTEN] [-w CHILDREN] [-k REUSE_MAX] [-o FILE]\n");
	exit(2);
}

/* A strict decimal option value in [min, max], or exit with usage (start-up only). */
static int
sluiced_opt_int(const char *opt, const char *s, long long min, long long max)
{
	int64_t v;

	if (str_to_int(s, strlen(s), min, max, &v) == -1)
		errx(2, "-%s: want an integer in [%lld, %lld], got '%s'", opt, min, max, s);
	return (int)v;
}

/* Starts a pool for every endpoint of c that has none; at start-up a failure is fatal. */
static int
sluiced_start_new(struct sluiced *s, const struct conf *c)
{
	struct pool *p;
	size_t i;
	int rc = 0;

	for (i = 0; i < c->neps; i++) {
		if (pool_find(s, c->eps[i].name) != NULL)
			continue;
		if ((p = pool_new(s, &c->eps[i])) == NULL) {
			rc = -1;
			continue;
		}
		p->next = s->pools;
		s->pools = p;
	}
	return rc;
}

/* SIGHUP: the list read again, all or nothing (reread.c). */
static void
sluiced_hup(struct sluiced *s)
{
	char errbuf[512];

	if (reread_list(s, "SIGHUP", 0, errbuf, sizeof(errbuf)) == -1)
		log_err("SIGHUP: %s; keeping the running configuration", errbuf);
}

static void
sluiced_reap(struct sluiced *s)
{
	pid_t pid;
	int status;

	for (;;) {
		pid = waitpid(-1, &status, WNOHANG);
		if (pid == -1 && errno == EINTR)
			continue;
		if (pid <= 0)
			return;
		if (pool_reap(s, pid, status, pool_now()) == -1)
			log_debug("reaped unknown child %ld", (long)pid);
	}
}

static void
sluiced_signals(struct sluiced *s)
{
	unsigned char buf[64];
	ssize_t n, i;
	int chld = 0, stop = 0, hup = 0;

	for (;;) {
		n = read(sluiced_sig_pipe[0], buf, sizeof(buf));
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			break;
		for (i = 0; i < n; i++) {
			if (buf[i] == SIGCHLD)
				chld = 1;
			else if (buf[i] == SIGTERM || buf[i] == SIGINT)
				stop = 1;
			else if (buf[i] == SIGHUP)
				hup = 1;
		}
	}
	if (chld)
		sluiced_reap(s);
	if (stop)
		pool_stop_all(s);
	if (hup)
		sluiced_hup(s);
}

/* Start-up only: the pipe, the handlers; errors are fatal. */
static void
sluiced_setup_signals(void)
{
	static const int sigs[] = { SIGCHLD, SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa;
	size_t i;
	int j;

	if (pipe(sluiced_sig_pipe) == -1)
		err(1, "pipe");
	for (j = 0; j < 2; j++)
		if (fcntl(sluiced_sig_pipe[j], F_SETFL, O_NONBLOCK) == -1 ||
		    fcntl(sluiced_sig_pipe[j], F_SETFD, FD_CLOEXEC) == -1)
			err(1, "fcntl");
	memset(&sa, 0, sizeof(sa));
	sigemptyset(&sa.sa_mask);
	/* No SA_RESTART: poll() returns EINTR and the loop looks at the pipe at once. */
	sa.sa_flags = SA_NOCLDSTOP;
	sa.sa_handler = sluiced_on_signal;
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++)
		if (sigaction(sigs[i], &sa, NULL) == -1)
			err(1, "sigaction");
	/* A ctl client that hangs up must not kill us. */
	signal(SIGPIPE, SIG_IGN);
}

/* fds 0-2 must be open, or a listening socket could land on 0 and be dup2'ed away. */
static void
sluiced_std_fds(void)
{
	int fd;

	while ((fd = open("/dev/null", O_RDWR)) != -1 && fd <= 2)
		;
	if (fd > 2)
		close(fd);
}

static void
sluiced_write_pid(struct sluiced *s)
{
	char buf[32];
	int fd, n;

	n = snprintf(s->pid_path, sizeof(s->pid_path), "%s/sluiced.pid", s->rundir);
	if (n < 0 || (size_t)n >= sizeof(s->pid_path))
		errx(1, "%s: path too long", s->rundir);
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if ((fd = open(s->pid_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644)) == -1)
		err(1, "%s", s->pid_path);
	if (write(fd, buf, (size_t)n) != n)
		err(1, "%s", s->pid_path);
	close(fd);
}

/*
 * Raises the soft limit on descriptors to the hard one, for sluiced and the workers it
 * starts.  A worker holds every connection nginx keeps open to it, idle ones included
 * (none is bound to a thread: common/serve.c), and a load balancer in front of several
 * hosts keeps up to 2,048 per nginx worker (supervisor/nginxconf.c): the usual soft limit
 * of 1,024 would make a worker refuse connections (EMFILE) with threads to spare.
 * Descriptors past 1,023 are safe in a worker: fcgi2 (2.4.2) waits with poll() when it
 * closes a connection, and its select() is only in the asynchronous I/O sluice does not
 * use (checked: a worker holding 1,200 connections, descriptor 1,203, closed them all).
 */
static void
sluiced_raise_nofile(void)
{
	struct rlimit rl;

	if (getrlimit(RLIMIT_NOFILE, &rl) == -1 || rl.rlim_cur >= rl.rlim_max)
		return;
	rl.rlim_cur = rl.rlim_max;
	if (setrlimit(RLIMIT_NOFILE, &rl) == -1)
		log_warn("cannot raise the descriptor limit: %s", strerror(errno));
}

/* Start-up, all or nothing: the endpoint list, the run dir, the run user, the control
 * socket, the pid file, every pool; then root is dropped.  Exits with the reason on a
 * failure. */
static void
sluiced_start(struct sluiced *s)
{
	struct pool *p;
	char errbuf[512];
	int m;

	if ((s->conf = conf_load(s->conf_path, errbuf, sizeof(errbuf))) == NULL ||
	    pool_check_binaries(s, s->conf, errbuf, sizeof(errbuf)) == -1)
		errx(1, "%s", errbuf);
	s->crash_loop_tries = s->conf->crash_loop_tries;
	sluiced_raise_nofile();
	if (mkdir(s->rundir, 0755) == -1 && errno != EEXIST)
		err(1, "mkdir %s", s->rundir);
	m = snprintf(s->ctl_path, sizeof(s->ctl_path), "%s/sluiced.ctl", s->rundir);
	if (m < 0 || (size_t)m >= sizeof(s->ctl_path))
		errx(1, "%s/sluiced.ctl: path too long for a unix socket", s->rundir);
	if (ctl_in_use(s->ctl_path))
		errx(1, "another sluiced is running on %s", s->rundir);
	/* Nobody answers there: the workers of the one that ran before are ours to adopt. */
	adopt_load(s);
	if (priv_resolve(s, s->conf) == -1 || priv_rundir(s, s->conf) == -1)
		errx(1, "cannot set up the run user");
	if (priv_sock_owner(s, s->conf) == -1)
		errx(1, "cannot apply socket_group");
	sluiced_setup_signals();
	if (ctl_listen(s) == -1)
		errx(1, "cannot create the control socket");
	if (stats_listen(s) == -1)
		errx(1, "cannot listen on metrics_listen");
	sluiced_write_pid(s);
	if (sluiced_start_new(s, s->conf) == -1) {
		/* Undo what did start, then fail: start-up is all or nothing. */
		for (p = s->pools; p != NULL; p = s->pools) {
			s->pools = p->next;
			pool_free(p);
		}
		unlink(s->ctl_path);
		unlink(s->pid_path);
		errx(1, "cannot start the endpoints (see above)");
	}
	adopt_done(s);
	/* Every socket exists: root is not needed any more. */
	priv_drop(s);
	log_info("sluiced %ld: %zu endpoints from %s, run dir %s", (long)getpid(),
	    s->conf->neps, s->conf_path, s->rundir);
}

/* Every pool's turn at now: the removed ones that stopped are freed, the earliest deadline
 * is kept in *deadline.  Returns the workers still alive. */
static size_t
sluiced_tick(struct sluiced *s, int64_t now, int64_t *deadline)
{
	struct pool *p, **pp;
	size_t live = 0;

	for (pp = &s->pools; (p = *pp) != NULL;) {
		pool_tick(s, p, now, deadline);
		if (p->removing && pool_live(p) == 0) {
			log_info("%s: stopped and removed", p->name);
			*pp = p->next;
			pool_free(p);
			continue;
		}
		live += pool_live(p);
		pp = &p->next;
	}
	return live;
}

/*
 * The descriptors the loop polls: the self-pipe, the control socket, the metrics address,
 * then the pidfd of every adopted worker, into *pfd (grown as needed, *cap entries).
 * Returns how many, or 3 when the array cannot grow (the adopted workers' exits are then
 * seen at the next turn that can).
 */
static nfds_t
sluiced_pollfds(struct sluiced *s, struct pollfd **pfd, size_t *cap)
{
	const struct pool *p;
	struct pollfd *grown;
	size_t n = 3, i;

	for (p = s->pools; p != NULL; p = p->next)
		for (i = 0; i < p->nw; i++)
			n += p->w[i].pidfd >= 0;
	if (n > *cap) {
		if ((grown = realloc(*pfd, n * sizeof(*grown))) == NULL)
			return 3;
		*pfd = grown;
		*cap = n;
	}
	(*pfd)[0].fd = sluiced_sig_pipe[0];
	(*pfd)[1].fd = s->stopping ? -1 : s->ctl_fd;
	(*pfd)[2].fd = s->metrics_fd;
	n = 3;
	for (p = s->pools; p != NULL; p = p->next)
		for (i = 0; i < p->nw; i++)
			if (p->w[i].pidfd >= 0)
				(*pfd)[n++].fd = p->w[i].pidfd;
	for (i = 0; i < n; i++)
		(*pfd)[i].events = POLLIN;
	return (nfds_t)n;
}

/* ctl upgrade: the workers recorded, then this process replaced by the binary it was
 * started from.  Returns only when execv() failed (logged): sluiced goes on. */
static void
sluiced_exec(struct sluiced *s)
{
	size_t i;

	s->upgrade = 0;
	adopt_record(s);
	log_info("upgrade: executing %s; the workers stay and the new binary adopts them",
	    s->self_exe);
	/* The control socket first: a client that connects from now on is refused until the
	 * new image listens, where it would wait in this socket's queue and be reset at the
	 * execv().  The `ctl upgrade` client learns that this image is gone from its own
	 * connection closing. */
	close(s->ctl_fd);
	s->ctl_fd = -1;
	for (i = 0; i < s->nwaiters; i++)
		close(s->waiters[i]);
	s->nwaiters = 0;
	execv(s->self_exe, s->argv);
	log_err("upgrade: execv %s: %s; this sluiced goes on", s->self_exe, strerror(errno));
	if (ctl_listen(s) == -1)
		log_err("upgrade: the control socket is gone; stop this sluiced with SIGTERM");
}

/* The poll() loop: pools' deadlines, signals, the control socket, the adopted workers'
 * pidfds; returns once stopping and every worker is gone. */
static void
sluiced_loop(struct sluiced *s)
{
	struct pollfd *pfd = NULL;
	size_t cap = 0;
	nfds_t n, i;
	int64_t now, deadline;
	int timeout;

	if ((pfd = calloc(3, sizeof(*pfd))) == NULL)
		errx(1, "out of memory");
	cap = 3;
	for (;;) {
		now = pool_now();
		deadline = 0;
		if (sluiced_tick(s, now, &deadline) == 0 && s->stopping)
			break;
		adopt_record(s);
		if (s->upgrade && !s->stopping)
			sluiced_exec(s);
		timeout = -1;
		if (deadline != 0) {
			timeout = deadline <= now ? 0 : (int)(deadline - now);
			/* Round up so that we wake after, not just before, the deadline. */
			if (timeout > 0)
				timeout++;
		}
		n = sluiced_pollfds(s, &pfd, &cap);
		if (poll(pfd, n, timeout) == -1) {
			if (errno != EINTR)
				log_err("poll: %s", strerror(errno));
			continue;
		}
		if (pfd[0].revents & POLLIN)
			sluiced_signals(s);
		if (pfd[1].revents & POLLIN)
			ctl_accept(s);
		if (pfd[2].revents & POLLIN)
			stats_accept(s);
		/* An adopted worker exited (a pidfd is readable once it has). */
		for (i = 3; i < n; i++)
			if (pfd[i].revents & (POLLIN | POLLHUP | POLLERR))
				pool_reap_pidfd(s, pfd[i].fd, pool_now());
	}
	free(pfd);
}

static int
sluiced_serve(struct sluiced *s)
{
	struct pool *p;
	size_t i;

	sluiced_start(s);
	sluiced_loop(s);
	log_info("all workers gone; removing sockets");
	while ((p = s->pools) != NULL) {
		s->pools = p->next;
		log_info("%s: stopped (%lu workers started, %lu crashed over its life)", p->name,
		    p->spawns, p->crashes);
		pool_free(p);
	}
	close(s->ctl_fd);
	if (s->metrics_fd != -1)
		close(s->metrics_fd);
	unlink(s->ctl_path);
	unlink(s->pid_path);
	/* Every worker is gone: nothing for a next sluiced to adopt. */
	adopt_forget(s);
	conf_free(s->conf);
	log_info("stopped");
	/* The `ctl stop` clients learn that we are gone from their sockets closing. */
	for (i = 0; i < s->nwaiters; i++)
		close(s->waiters[i]);
	free(s->waiters);
	return 0;
}

/* The command line: the subcommand's words and the options given with them. */
struct sluiced_cmd {
	const char *prefix, *listen, *outfile, *nginx_user, *hosts;
	char *words[4];
	size_t nwords;
	int nginx_workers, keepalive;
	int nginx_opts, sup_opts, grace_opt;	/* how many of each kind were given */
};

/* One option into s or a; an unknown one ends with the usage. */
static void
sluiced_opt(struct sluiced *s, struct sluiced_cmd *a, int ch)
{
	/* The generators' options that take a string as it is. */
	const struct {
		int ch;
		const char **val;
	} strs[] = {
		{ 'p', &a->prefix }, { 'l', &a->listen }, { 'o', &a->outfile },
		{ 'u', &a->nginx_user }, { 'H', &a->hosts },
	};
	size_t i;

	for (i = 0; i < sizeof(strs) / sizeof(strs[0]); i++)
		if (strs[i].ch == ch) {
			*strs[i].val = optarg;
			a->nginx_opts++;
			return;
		}
	switch (ch) {
	case 'c':
		s->conf_path = optarg;
		break;
	case 'r':
		s->rundir = optarg;
		break;
	case 'b':
		s->bindir = optarg;
		a->sup_opts++;
		break;
	case 'g':
		s->grace_ms = sluiced_opt_int("g", optarg, 0, 3600000);
		a->sup_opts++;
		a->grace_opt++;
		break;
	case 'w':
		a->nginx_workers = sluiced_opt_int("w", optarg, 1, 1024);
		a->nginx_opts++;
		break;
	case 'k':
		a->keepalive = sluiced_opt_int("k", optarg, 0, 65536);
		a->nginx_opts++;
		break;
	default:
		sluiced_usage();
	}
}

/*
 * Options may come before, between and after the words of the subcommand: POSIX getopt
 * stops at the first word, so words are collected and scanning resumes.
 */
static void
sluiced_args(struct sluiced *s, struct sluiced_cmd *a, int argc, char *argv[])
{
	int ch;

	for (;;) {
		/* ctl status --json: a word of the subcommand, not an option of ours. */
		if (optind < argc && strcmp(argv[optind], "--json") == 0 && a->nwords > 0) {
			if (a->nwords == sizeof(a->words) / sizeof(a->words[0]))
				sluiced_usage();
			a->words[a->nwords++] = argv[optind++];
			continue;
		}
		if ((ch = getopt(argc, argv, "c:r:b:g:p:l:w:k:o:u:H:h")) == -1) {
			if (optind >= argc)
				break;
			if (a->nwords == sizeof(a->words) / sizeof(a->words[0]))
				sluiced_usage();
			a->words[a->nwords++] = argv[optind++];
			continue;
		}
		sluiced_opt(s, a, ch);
	}
}

int
main(int argc, char *argv[])
{
	struct sluiced s;
	struct sluiced_cmd a;
	long long level;
	char **all = argv + 1;
	int nall = argc - 1, rc;

	memset(&s, 0, sizeof(s));
	memset(&a, 0, sizeof(a));
	/* ctl upgrade runs this binary again, with this command line. */
	s.argv = argv;
	if (readlink("/proc/self/exe", s.self_exe, sizeof(s.self_exe) - 1) <= 0)
		s.self_exe[0] = '\0';
	s.conf_path = "conf/endpoints.conf";
	s.rundir = "run";
	s.bindir = "bin";
	s.grace_ms = 5000;
	s.ctl_fd = -1;
	s.metrics_fd = -1;
	s.crash_loop_tries = 5;
	a.keepalive = -1;
	log_init("sluiced");
	/* An unknown level is logged and leaves info. */
	if (settings_int(SETTING_LOG_LEVEL, &level) == 0)
		log_set_level((enum log_level)level);
	sluiced_args(&s, &a, argc, argv);
	argc = (int)a.nwords;
	argv = a.words;
	if (argc == 0) {
		if (a.nginx_opts > 0)
			sluiced_usage();
		sluiced_std_fds();
		return sluiced_serve(&s);
	}
	if (strcmp(argv[0], "ctl") == 0) {
		if (a.nginx_opts > 0 || a.sup_opts > 0)
			sluiced_usage();
		return ctl_client(s.rundir, argc - 1, argv + 1);
	}
	if (strcmp(argv[0], "user") == 0) {
		if (argc != 1 || a.nginx_opts > 0 || a.sup_opts > 0)
			sluiced_usage();
		return priv_user_main(s.conf_path);
	}
	if (strcmp(argv[0], "nginx") == 0) {
		if (argc != 2 || a.sup_opts > 0)
			sluiced_usage();
		rc = nginx_main(s.conf_path, s.rundir, a.prefix, argv[1], a.listen,
		    a.nginx_workers, a.keepalive, a.nginx_user, a.hosts, a.outfile);
		/* A file written with -o is the one `ctl reload` makes anew (reload.c); the file
		 * is written whether or not that can be recorded (said on stderr). */
		if (rc == 0 && a.outfile != NULL)
			(void)reload_record(s.rundir, "nginx", nall, all);
		return rc;
	}
	if (strcmp(argv[0], "apache") == 0) {
		/* -b names the binaries that the cgi and fcgid profiles run. */
		if (argc != 2 || a.grace_opt > 0 || a.nginx_user != NULL || a.hosts != NULL)
			sluiced_usage();
		rc = apache_main(s.conf_path, s.rundir, s.bindir, a.prefix, argv[1], a.listen,
		    a.nginx_workers, a.keepalive, a.outfile);
		if (rc == 0 && a.outfile != NULL)
			(void)reload_record(s.rundir, "apache", nall, all);
		return rc;
	}
	sluiced_usage();
	return 2;
}
