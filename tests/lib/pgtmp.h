/*
 * pgtmp.h: a throwaway PostgreSQL cluster for tests.
 *
 * pgtmp_start() makes a directory /tmp/pgtmp.XXXXXX, runs initdb in it (trust auth,
 * superuser "postgres", no fsync), starts a server that listens only on a unix socket in
 * that directory, creates the database "sluice_test" and writes a db_open() URL into
 * pg->url:
 *
 *   postgresql:///sluice_test?host=/tmp/pgtmp.XXXXXX&port=NNNNN&user=postgres
 *
 * Running as root, every PostgreSQL program runs as the "postgres" user, which owns the
 * directory.  Binaries come from the highest /usr/lib/postgresql/N/bin, or from the
 * directory in PGTMP_BINDIR.
 *
 * Nothing is left behind: pgtmp_stop() stops the server and removes the directory, an
 * atexit() hook stops every cluster still running, and a watchdog process does the same
 * if the test dies without running atexit (crash, abort, kill -9).  Server and tool output
 * goes to files in the directory, printed to stderr when a step fails.
 */
#ifndef SLUICE_PGTMP_H
#define SLUICE_PGTMP_H

#include <sys/types.h>

struct pgtmp {
	char dir[64];		/* the temp directory: socket, data/, logs */
	char bindir[256];	/* where initdb and pg_ctl live */
	char url[256];		/* for db_open() */
	char conninfo[256];	/* the same as key=value, for libpq tools */
	int port;
	int max_connections;	/* the server's max_connections (20 by pgtmp_start()) */
	int running;		/* the server is up */
	int started;		/* the directory exists and the watchdog runs */
	pid_t watchdog;
	int watch_fd;		/* write end of the watchdog's pipe */
};

/* Creates and starts a cluster.  Returns 0, or -1 (after printing why to stderr and
 * cleaning up) when any step fails. */
int pgtmp_start(struct pgtmp *pg);

/* The same with the server's max_connections set to max_connections (> 0), for tests
 * whose pools hold more connections than the default 20. */
int pgtmp_start_conns(struct pgtmp *pg, int max_connections);

/*
 * Makes pg a streaming standby of primary (running): pg_basebackup -R of it into a new
 * directory, started on port primary->port + 1, its URLs set as pgtmp_start()'s.  The
 * primary's hba (trust, local replication) lets it in.  Returns 0, or -1 after printing
 * why and cleaning up.
 */
int pgtmp_start_standby(struct pgtmp *pg, const struct pgtmp *primary);

/* Kills the postmaster and its backends with SIGKILL, as when its machine dies: no
 * shutdown, no backend left to finish what it was doing.  Returns 0 or -1. */
int pgtmp_crash(struct pgtmp *pg);

/* pg_ctl promote: a standby becomes a primary (waits until it takes writes).  0 or -1. */
int pgtmp_promote(struct pgtmp *pg);

/* Stops the server (pg_ctl stop -m fast: connected backends are terminated), keeping the
 * data.  Returns 0 or -1. */
int pgtmp_stop_server(struct pgtmp *pg);

/* The same with "-m immediate": the postmaster and its backends quit at once, without a
 * shutdown checkpoint, as after a crash (the next start recovers from the WAL).  Returns 0
 * or -1. */
int pgtmp_kill_server(struct pgtmp *pg);

/* Starts the server again on the same socket and data.  Returns 0 or -1. */
int pgtmp_start_server(struct pgtmp *pg);

/* pgtmp_stop_server() then pgtmp_start_server(). */
int pgtmp_restart(struct pgtmp *pg);

/* Stops the server if it runs and removes the directory.  Safe to call more than once and
 * on a zeroed struct pgtmp. */
void pgtmp_stop(struct pgtmp *pg);

#endif /* SLUICE_PGTMP_H */
