/*
 * pgtmp.c: see pgtmp.h.  A throwaway PostgreSQL cluster per test program.
 *
 * Programs run with fork+execve and an argument vector (no shell), as the postgres user when
 * we are root, with their output appended to DIR/tools.log; the server logs to
 * DIR/server.log.  The only shell involved is the one pg_ctl itself uses to launch the
 * server, which is why the directory name comes from mkdtemp() and never holds blanks.
 *
 * The watchdog is a forked child that blocks reading a pipe whose only write end (O_CLOEXEC,
 * so the server never inherits it) stays in the test.  pgtmp_stop() tells it "q" and reaps
 * it; if the test dies instead, the read returns EOF and the watchdog stops the server with
 * "-m immediate" and removes the directory itself.
 */
#define _XOPEN_SOURCE 700	/* nftw() */

#ifdef __linux__
#include <sys/prctl.h>
#endif
#include <sys/stat.h>
#include <sys/types.h>
#include <sys/wait.h>

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <glob.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#if defined(__has_include)
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif
#else
#include <libpq-fe.h>
#endif

#include "pgtmp.h"

#define PGTMP_DBNAME	"sluice_test"
#define PGTMP_MAX	8

static struct pgtmp *pgtmp_live[PGTMP_MAX];
static int pgtmp_hooked;

/* snprintf that treats truncation as the failure it is. */
static int
pgtmp_fmt(char *buf, size_t len, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

static int
pgtmp_fmt(char *buf, size_t len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(buf, len, fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= len) {
		fprintf(stderr, "pgtmp: path or option too long\n");
		return -1;
	}
	return 0;
}

/* Copies a log file of the cluster to stderr, so that a failed step explains itself. */
static void
pgtmp_dump(const struct pgtmp *pg, const char *name)
{
	char path[128], buf[4096];
	size_t n;
	FILE *f;

	if (pgtmp_fmt(path, sizeof(path), "%s/%s", pg->dir, name) == -1 ||
	    (f = fopen(path, "r")) == NULL)
		return;
	fprintf(stderr, "pgtmp: --- %s ---\n", path);
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0)
		fwrite(buf, 1, n, stderr);
	fclose(f);
}

/* Picks the highest /usr/lib/postgresql/N/bin that has pg_ctl. */
static int
pgtmp_find_bindir(struct pgtmp *pg)
{
	const char *env = getenv("PGTMP_BINDIR");
	glob_t g;
	long best = -1, v;
	size_t i, best_i = 0;
	int rc = -1;

	if (env != NULL && *env != '\0')
		return pgtmp_fmt(pg->bindir, sizeof(pg->bindir), "%s", env);
	if (glob("/usr/lib/postgresql/*/bin/pg_ctl", 0, NULL, &g) != 0) {
		fprintf(stderr, "pgtmp: no /usr/lib/postgresql/*/bin/pg_ctl\n");
		return -1;
	}
	for (i = 0; i < g.gl_pathc; i++) {
		/* "/usr/lib/postgresql/" is 20 bytes; the version follows. */
		v = strtol(g.gl_pathv[i] + 20, NULL, 10);
		if (v > best) {
			best = v;
			best_i = i;
		}
	}
	if (best >= 0) {
		char *slash;

		if (pgtmp_fmt(pg->bindir, sizeof(pg->bindir), "%s", g.gl_pathv[best_i]) == 0) {
			slash = strrchr(pg->bindir, '/');
			*slash = '\0';
			rc = 0;
		}
	}
	globfree(&g);
	return rc;
}

/* Drops root for the postgres user in a child, which PostgreSQL insists on. */
static int
pgtmp_become_postgres(void)
{
	struct passwd *pw;

	if (geteuid() != 0)
		return 0;
	if ((pw = getpwnam("postgres")) == NULL)
		return -1;
	if (setgroups(0, NULL) == -1 || setgid(pw->pw_gid) == -1 || setuid(pw->pw_uid) == -1)
		return -1;
	return 0;
}

/*
 * Runs argv[0] with argv, as postgres when root, in the cluster directory, output to
 * tools.log.  Returns 0 when it exits 0, else -1 (and dumps the logs unless quiet).
 */
static int
pgtmp_run(const struct pgtmp *pg, const char *const argv[], int quiet)
{
	static const char *const env[] = { "PATH=/usr/bin:/bin", "LC_ALL=C", "TZ=UTC",
	    NULL };
	char log[128];
	pid_t pid;
	int status, fd;

	if (pgtmp_fmt(log, sizeof(log), "%s/tools.log", pg->dir) == -1)
		return -1;
	if ((pid = fork()) == -1) {
		perror("pgtmp: fork");
		return -1;
	}
	if (pid == 0) {
		if (pgtmp_become_postgres() == -1 || chdir(pg->dir) == -1)
			_exit(126);
		if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0600)) != -1) {
			(void)dup2(fd, 1);
			(void)dup2(fd, 2);
			close(fd);
		}
		if ((fd = open("/dev/null", O_RDONLY)) != -1) {
			(void)dup2(fd, 0);
			close(fd);
		}
		/* execve() takes char *const[] for historical reasons; it writes nothing. */
		execve(argv[0], (char *const *)(uintptr_t)argv, (char *const *)(uintptr_t)env);
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR) {
			perror("pgtmp: waitpid");
			return -1;
		}
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		return 0;
	if (!quiet) {
		fprintf(stderr, "pgtmp: %s failed (status %d)\n", argv[0], status);
		pgtmp_dump(pg, "tools.log");
		pgtmp_dump(pg, "server.log");
	}
	return -1;
}

static int
pgtmp_rm_one(const char *path, const struct stat *sb, int flag, struct FTW *ftw)
{
	(void)sb;
	(void)ftw;
	if (flag == FTW_DP)
		(void)rmdir(path);
	else
		(void)unlink(path);
	return 0;
}

static void
pgtmp_rmdir(const struct pgtmp *pg)
{
	if (pg->dir[0] != '\0')
		(void)nftw(pg->dir, pgtmp_rm_one, 16, FTW_DEPTH | FTW_PHYS);
}

static int
pgtmp_ctl(struct pgtmp *pg, const char *mode, int quiet)
{
	char ctl[300], data[96];

	if (pgtmp_fmt(ctl, sizeof(ctl), "%s/pg_ctl", pg->bindir) == -1 ||
	    pgtmp_fmt(data, sizeof(data), "%s/data", pg->dir) == -1)
		return -1;
	{
		const char *const argv[] = { ctl, "-D", data, "-w", "-t", "30", "-s", "-m",
		    mode, "stop", NULL };

		return pgtmp_run(pg, argv, quiet);
	}
}

/* The watchdog's whole life: wait for the test to finish or die, then clean up after a
 * death.  Never returns. */
static void
pgtmp_watch(struct pgtmp *pg, int rfd)
{
	char c;
	ssize_t n;
	int fd;

	signal(SIGINT, SIG_IGN);
	signal(SIGTERM, SIG_IGN);
	signal(SIGHUP, SIG_IGN);
	signal(SIGPIPE, SIG_IGN);
	/* Keep no other descriptor: holding another cluster's pipe would keep that
	 * watchdog from ever seeing EOF. */
	for (fd = 3; fd < 1024; fd++)
		if (fd != rfd)
			(void)close(fd);
	while ((n = read(rfd, &c, 1)) == -1 && errno == EINTR)
		continue;
	if (n == 1 && c == 'q')
		_exit(0);
	(void)pgtmp_ctl(pg, "immediate", 1);
	pgtmp_rmdir(pg);
	_exit(0);
}

static void
pgtmp_atexit(void)
{
	int i;

	for (i = 0; i < PGTMP_MAX; i++)
		if (pgtmp_live[i] != NULL)
			pgtmp_stop(pgtmp_live[i]);
}

static int
pgtmp_createdb(struct pgtmp *pg)
{
	char ci[256];
	PGconn *c;
	PGresult *r = NULL;
	int rc = -1;

	if (pgtmp_fmt(ci, sizeof(ci), "host=%s port=%d user=postgres dbname=postgres",
	    pg->dir, pg->port) == -1)
		return -1;
	c = PQconnectdb(ci);
	if (PQstatus(c) != CONNECTION_OK) {
		fprintf(stderr, "pgtmp: connect: %s", PQerrorMessage(c));
		goto out;
	}
	r = PQexec(c, "CREATE DATABASE " PGTMP_DBNAME);
	if (PQresultStatus(r) != PGRES_COMMAND_OK) {
		fprintf(stderr, "pgtmp: create database: %s", PQerrorMessage(c));
		goto out;
	}
	rc = 0;
out:
	PQclear(r);
	PQfinish(c);
	return rc;
}

int
pgtmp_start_server(struct pgtmp *pg)
{
	char ctl[300], data[96], log[96], opts[256];

	if (pg->running)
		return 0;
	if (pgtmp_fmt(ctl, sizeof(ctl), "%s/pg_ctl", pg->bindir) == -1 ||
	    pgtmp_fmt(data, sizeof(data), "%s/data", pg->dir) == -1 ||
	    pgtmp_fmt(log, sizeof(log), "%s/server.log", pg->dir) == -1 ||
	    /* Unix socket only, in our directory; no fsync; small, since tests are. */
	    pgtmp_fmt(opts, sizeof(opts), "-k %s -c listen_addresses='' -p %d -F "
	    "-c max_connections=%d -c shared_buffers=16MB", pg->dir, pg->port,
	    pg->max_connections > 0 ? pg->max_connections : 20) == -1)
		return -1;
	{
		const char *const argv[] = { ctl, "-D", data, "-l", log, "-w", "-t", "30", "-s",
		    "-o", opts, "start", NULL };

		if (pgtmp_run(pg, argv, 0) == -1)
			return -1;
	}
	pg->running = 1;
	return 0;
}

/* The postmaster's pid, from the first line of DIR/data/postmaster.pid, or -1. */
static pid_t
pgtmp_postmaster(const struct pgtmp *pg)
{
	char path[128], line[32];
	long v;
	FILE *f;
	pid_t pid = -1;

	if (pgtmp_fmt(path, sizeof(path), "%s/data/postmaster.pid", pg->dir) == -1 ||
	    (f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) != NULL) {
		v = strtol(line, NULL, 10);
		if (v > 1)
			pid = (pid_t)v;
	}
	fclose(f);
	return pid;
}

/* Stops the server with mode; once it is down, reaps the postmaster, our child since we
 * are a subreaper (else waitpid() fails with ECHILD and init reaps it). */
static int
pgtmp_ctl_reap(struct pgtmp *pg, const char *mode, int quiet)
{
	pid_t pid = pgtmp_postmaster(pg);

	if (pgtmp_ctl(pg, mode, quiet) == -1)
		return -1;
	if (pid > 0)
		while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
			continue;
	return 0;
}

int
pgtmp_stop_server(struct pgtmp *pg)
{
	if (!pg->running)
		return 0;
	if (pgtmp_ctl_reap(pg, "fast", 0) == -1)
		return -1;
	pg->running = 0;
	return 0;
}

int
pgtmp_kill_server(struct pgtmp *pg)
{
	if (!pg->running)
		return 0;
	if (pgtmp_ctl_reap(pg, "immediate", 0) == -1)
		return -1;
	pg->running = 0;
	return 0;
}

int
pgtmp_restart(struct pgtmp *pg)
{
	if (pgtmp_stop_server(pg) == -1)
		return -1;
	return pgtmp_start_server(pg);
}

int
pgtmp_start(struct pgtmp *pg)
{
	return pgtmp_start_conns(pg, 20);
}

/*
 * What every cluster needs before its data directory is made: the temp directory (owned by
 * postgres when root), the watchdog, the atexit hook.  Returns 0, or -1 after cleaning up.
 */
static int
pgtmp_setup(struct pgtmp *pg, int max_connections)
{
	struct passwd *pw;
	int p[2] = { -1, -1 }, i, slot = -1;
	pid_t pid;

	memset(pg, 0, sizeof(*pg));
	pg->watch_fd = -1;
	pg->max_connections = max_connections > 0 ? max_connections : 20;
	for (i = 0; i < PGTMP_MAX; i++)
		if (pgtmp_live[i] == NULL) {
			slot = i;
			break;
		}
	if (slot == -1) {
		fprintf(stderr, "pgtmp: more than %d clusters\n", PGTMP_MAX);
		return -1;
	}
	if (pgtmp_find_bindir(pg) == -1)
		return -1;
	/* Any port will do (the socket lives in a private directory); a pid-based one
	 * keeps lock file names apart for anyone who looks. */
	pg->port = 20000 + (int)(getpid() % 10000);
	if (pgtmp_fmt(pg->dir, sizeof(pg->dir), "/tmp/pgtmp.XXXXXX") == -1)
		return -1;
	if (mkdtemp(pg->dir) == NULL) {
		perror("pgtmp: mkdtemp");
		pg->dir[0] = '\0';
		return -1;
	}
	if (geteuid() == 0) {
		if ((pw = getpwnam("postgres")) == NULL) {
			fprintf(stderr, "pgtmp: running as root and no postgres user\n");
			pgtmp_rmdir(pg);
			return -1;
		}
		/* 0711: sluiced's unprivileged workers must reach the socket inside. */
		if (chown(pg->dir, pw->pw_uid, pw->pw_gid) == -1 || chmod(pg->dir, 0711) == -1) {
			perror("pgtmp: chown");
			pgtmp_rmdir(pg);
			return -1;
		}
	}

	/* Close-on-exec, so that no program we start (least of all the server) holds the
	 * write end; tests start clusters before any thread, so there is no race. */
	if (pipe(p) == -1 || fcntl(p[0], F_SETFD, FD_CLOEXEC) == -1 ||
	    fcntl(p[1], F_SETFD, FD_CLOEXEC) == -1) {
		perror("pgtmp: pipe");
		if (p[0] != -1) {
			close(p[0]);
			close(p[1]);
		}
		pgtmp_rmdir(pg);
		return -1;
	}
	fflush(NULL);
	if ((pid = fork()) == -1) {
		perror("pgtmp: fork");
		close(p[0]);
		close(p[1]);
		pgtmp_rmdir(pg);
		return -1;
	}
	if (pid == 0)
		pgtmp_watch(pg, p[0]);
	close(p[0]);
	pg->watchdog = pid;
	pg->watch_fd = p[1];
	pg->started = 1;
	pgtmp_live[slot] = pg;
	if (!pgtmp_hooked) {
		atexit(pgtmp_atexit);
#ifdef __linux__
		/* pg_ctl exits after starting the postmaster; as a subreaper we inherit
		 * it and can reap it, instead of leaving a zombie for an init that may
		 * not reap (as in some containers). */
		(void)prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
#endif
		pgtmp_hooked = 1;
	}
	return 0;
}

/* pg->url and pg->conninfo for the server of pg.  0 or -1. */
static int
pgtmp_urls(struct pgtmp *pg)
{
	if (pgtmp_fmt(pg->url, sizeof(pg->url), "postgresql:///%s?host=%s&port=%d&user=postgres",
	    PGTMP_DBNAME, pg->dir, pg->port) == -1 ||
	    pgtmp_fmt(pg->conninfo, sizeof(pg->conninfo), "host=%s port=%d user=postgres "
	    "dbname=%s", pg->dir, pg->port, PGTMP_DBNAME) == -1)
		return -1;
	return 0;
}

int
pgtmp_start_conns(struct pgtmp *pg, int max_connections)
{
	char initdb[300], data[96];

	if (pgtmp_setup(pg, max_connections) == -1)
		return -1;
	if (pgtmp_fmt(initdb, sizeof(initdb), "%s/initdb", pg->bindir) == -1 ||
	    pgtmp_fmt(data, sizeof(data), "%s/data", pg->dir) == -1)
		goto fail;
	{
		const char *const argv[] = { initdb, "-D", data, "-A", "trust", "-U", "postgres",
		    "-E", "UTF8", "--locale=C", "--no-sync", "--no-instructions", NULL };

		if (pgtmp_run(pg, argv, 0) == -1)
			goto fail;
	}
	if (pgtmp_start_server(pg) == -1 || pgtmp_createdb(pg) == -1)
		goto fail;
	if (pgtmp_urls(pg) == -1)
		goto fail;
	return 0;
fail:
	pgtmp_stop(pg);
	return -1;
}

int
pgtmp_start_standby(struct pgtmp *pg, const struct pgtmp *primary)
{
	char bb[300], data[96], port[16];

	if (pgtmp_setup(pg, primary->max_connections) == -1)
		return -1;
	/* Its own port, so that the two are told apart in a multi-host URL. */
	pg->port = primary->port + 1;
	if (pgtmp_fmt(bb, sizeof(bb), "%s/pg_basebackup", pg->bindir) == -1 ||
	    pgtmp_fmt(data, sizeof(data), "%s/data", pg->dir) == -1 ||
	    pgtmp_fmt(port, sizeof(port), "%d", primary->port) == -1)
		goto fail;
	{
		/* -R: standby.signal and primary_conninfo, so that it starts as a standby
		 * streaming from the primary; -X stream: the WAL of the copy comes along. */
		const char *const argv[] = { bb, "-D", data, "-h", primary->dir, "-p", port,
		    "-U", "postgres", "-R", "-X", "stream", "-c", "fast", "--no-sync", NULL };

		if (pgtmp_run(pg, argv, 0) == -1)
			goto fail;
	}
	if (pgtmp_start_server(pg) == -1 || pgtmp_urls(pg) == -1)
		goto fail;
	return 0;
fail:
	pgtmp_stop(pg);
	return -1;
}

/* The pids of pid's children, from /proc, into kids[max].  Their count. */
static int
pgtmp_children(pid_t pid, pid_t *kids, int max)
{
	char path[64], line[128];
	struct dirent *de;
	long ppid;
	DIR *d;
	FILE *f;
	int n = 0;

	if ((d = opendir("/proc")) == NULL)
		return 0;
	while (n < max && (de = readdir(d)) != NULL) {
		if (de->d_name[0] < '1' || de->d_name[0] > '9' ||
		    pgtmp_fmt(path, sizeof(path), "/proc/%s/status", de->d_name) == -1 ||
		    (f = fopen(path, "r")) == NULL)
			continue;
		while (fgets(line, sizeof(line), f) != NULL)
			if (strncmp(line, "PPid:", 5) == 0) {
				ppid = strtol(line + 5, NULL, 10);
				if (ppid == (long)pid)
					kids[n++] = (pid_t)strtol(de->d_name, NULL, 10);
				break;
			}
		fclose(f);
	}
	closedir(d);
	return n;
}

int
pgtmp_crash(struct pgtmp *pg)
{
	pid_t pid, kids[256];
	int i, n, tries;

	if (!pg->running || (pid = pgtmp_postmaster(pg)) <= 0)
		return -1;
	/* The machine is gone: the postmaster and every backend with it, so that none goes
	 * on committing what its client sent after the "crash". */
	n = pgtmp_children(pid, kids, 256);
	if (kill(pid, SIGKILL) == -1)
		return -1;
	for (i = 0; i < n; i++)
		(void)kill(kids[i], SIGKILL);
	/* Ours to reap: we are a subreaper (see pgtmp_setup()); the backends become our
	 * children once the postmaster is gone. */
	while (waitpid(pid, NULL, 0) == -1 && errno == EINTR)
		continue;
	for (i = 0; i < n; i++)
		for (tries = 0; tries < 100; tries++) {
			if (waitpid(kids[i], NULL, 0) == kids[i] || errno != ECHILD)
				break;
			usleep(10000);
		}
	pg->running = 0;
	return 0;
}

int
pgtmp_promote(struct pgtmp *pg)
{
	char ctl[300], data[96];

	if (pgtmp_fmt(ctl, sizeof(ctl), "%s/pg_ctl", pg->bindir) == -1 ||
	    pgtmp_fmt(data, sizeof(data), "%s/data", pg->dir) == -1)
		return -1;
	{
		const char *const argv[] = { ctl, "-D", data, "-w", "-t", "30", "-s",
		    "promote", NULL };

		return pgtmp_run(pg, argv, 0);
	}
}

void
pgtmp_stop(struct pgtmp *pg)
{
	int i, status;

	if (!pg->started)
		return;
	if (pg->running && pgtmp_ctl_reap(pg, "fast", 0) == -1)
		(void)pgtmp_ctl_reap(pg, "immediate", 0);
	pg->running = 0;
	pgtmp_rmdir(pg);
	if (pg->watch_fd != -1) {
		/* If this fails the watchdog sees EOF and cleans an already clean place. */
		if (write(pg->watch_fd, "q", 1) != 1)
			perror("pgtmp: watchdog");
		close(pg->watch_fd);
		pg->watch_fd = -1;
	}
	if (pg->watchdog > 0)
		while (waitpid(pg->watchdog, &status, 0) == -1 && errno == EINTR)
			continue;
	pg->watchdog = 0;
	pg->started = 0;
	for (i = 0; i < PGTMP_MAX; i++)
		if (pgtmp_live[i] == pg)
			pgtmp_live[i] = NULL;
}
