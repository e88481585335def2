/*
 * conf.h: the endpoint list (conf/endpoints.conf), the single source of truth that the
 * supervisor and the nginx and Apache config generators read.  What it gives a worker
 * reaches it as SLUICE_* environment variables (common/settings.h).
 *
 * The file is line based; '#' starts a comment; fields are separated by blanks:
 *
 *   set KEY VALUE                 global setting, see below
 *   db NAME URL                   a named database; SLUICE_DB_<NAME> in the environment
 *                                 overrides URL (NAME upper-cased)
 *   NAME ROUTE [KEY=VALUE ...]    an endpoint: binary bin/NAME, unix socket RUNDIR/NAME.sock
 *
 * ROUTE is "=/path" for an exact location or "/prefix/" for a prefix location; a route
 * that is neither ("/hello3") is refused as ambiguous.  Endpoint keys the supervisor reads:
 * workers (default 4, or auto), threads (1, or auto: see conf_auto_size() for the rule),
 * db (a db NAME, or none), backlog (4096), mode (socket
 * mode, octal, 0660), binary (bin/NAME; sluiced checks that it exists and is executable
 * when it reads the list, at start and on SIGHUP), tcp (an IPv4 address and port, e.g.
 * 127.0.0.1:9001: the pool listens there instead of on its unix socket, for proxies on
 * other hosts and for the unix-vs-TCP benchmark), rate (a request rate the proxy lets
 * through, per client: 10r/s or 600r/m, unset: no limit), burst (the requests past the rate
 * let through at once, 0-100000: the rate's count by default) and rate_by (who "a client"
 * is: addr, the client's address, by default; token, its Authorization header, the
 * address when it sends none); past the limit the proxy answers 429 with the JSON error
 * body and Retry-After (supervisor/nginxconf.h), and stream (1: the endpoint answers with
 * long-lived streams, Server-Sent Events, from one process of one thread running an event
 * loop, common/evfcgi.h: it must say workers=1 threads=1, and the proxy passes its
 * responses on unbuffered with a read timeout above its heartbeats).  The worker settings of sluice's own
 * binaries (the table in common/settings.c: sqlite_mmap, db_isolation, session_key,
 * bench_sessions, template, seccomp, log_level, body_max, ...) are written KEY=VALUE too
 * and reach the workers as SLUICE_<KEY>=VALUE (KEY upper-cased).  Any other key is an
 * error with its line, so a typo (workres=2) stops start-up instead of being passed on
 * unread.  A handler's own setting that sluice does not know is written env.KEY=VALUE and
 * reaches its workers as SLUICE_<KEY>=VALUE; env. is refused for the keys above (one
 * spelling each) and for name and route (sluiced sets SLUICE_NAME and SLUICE_ROUTE).
 *
 * Global settings (each at most once; any other key is an error, so typos are caught):
 *   listen ADDR:PORT       where nginx listens (127.0.0.1:8080)
 *   nginx_workers N        nginx worker processes, 0 = online CPUs (0); feeds keepalive sizing
 *   nginx_user USER[:GROUP] the user the generated nginx.conf names when nginx starts as root
 *                          (unset: the owner of RUNDIR, see supervisor/nginx.c)
 *   socket_group GROUP     sluiced chowns every endpoint socket to this group (unset: no chown)
 *   body_max SIZE          largest request body, bytes with optional k/m suffix (1m); nginx's
 *                          client_max_body_size and SLUICE_BODY_MAX in every worker
 *   crash_loop_tries N     consecutive quick worker deaths before a pool is failed (5)
 *   access_log on|off|json nginx's access log, PREFIX/logs/access.log (unset: on in the
 *                          default profile, off in the tuned one, where a line per request
 *                          costs throughput; see supervisor/nginxconf.h); json: one JSON
 *                          object a line, with the request id
 *   user USER              the user sluiced and its workers run as when sluiced starts as
 *                          root (sluice if that user exists, else nobody; root: no drop)
 *   group GROUP            their group (USER's primary group)
 *   pool_address ADDR      the IPv4 address every tcp= pool binds on this host, replacing the
 *                          address part of each tcp= value (the port stays); the
 *                          environment's SLUICE_POOL_ADDRESS overrides it, so one list
 *                          serves every app host behind a load balancer (docs/deployment.md)
 *   cpus N                 the CPUs that workers=auto, threads=auto and nginx_workers 0
 *                          follow (unset: conf_cpus(), what this process may run on)
 *   metrics on|off         the workers' counters (common/metrics.h; on)
 *   metrics_listen ADDR:PORT  where sluiced serves them as Prometheus text (an IPv4
 *                          address and port, or a port alone on 127.0.0.1; unset: nowhere)
 *                          and its status page
 *   nginx_status PORT      nginx answers stub_status on 127.0.0.1:PORT, a server of its own
 *                          for loopback clients only, and sluiced's /metrics and status
 *                          page show its figures (supervisor/stubstatus.h; unset: neither;
 *                          127.0.0.1:PORT is accepted too, no other address)
 *
 * Names (endpoints, dbs, keys) are [a-z0-9_], start with a letter and are shorter than
 * CONF_NAME_MAX; routes and values are limited to characters that need no quoting in
 * nginx.conf or a unix path, so the generators can paste them verbatim.
 */
#ifndef SLUICE_CONF_H
#define SLUICE_CONF_H

#include <stddef.h>

#define CONF_NAME_MAX	32
#define CONF_EXTRA_MAX	16
#define CONF_LINE_MAX	1024
#define CONF_BODY_MAX_DEFAULT	(1024LL * 1024)
/* set access_log json: nginx writes one JSON object a line (nginxconf.h). */
#define CONF_ACCESS_LOG_JSON	2

/*
 * What an endpoint spends its time on, which its auto sizes follow: no database (CPU
 * only: a thread waits for nothing but nginx), SQLite (a thread holds a connection and
 * its page cache, and writers wait for their batch's fsync) or PostgreSQL (a worker's
 * threads share db_conns server backends, processes of the server's that compete with
 * the workers for the CPUs).
 */
enum conf_kind {
	CONF_KIND_CPU,
	CONF_KIND_SQLITE,
	CONF_KIND_PG,
	CONF_KIND__MAX
};

struct conf_kv {
	char *key;
	char *value;
};

struct conf_endpoint {
	char name[CONF_NAME_MAX];
	char *route;		/* "=/health" or "/rest/v1/" */
	int exact;		/* route began with '=' */
	const char *path;	/* route without the '=' */
	int workers;		/* resolved: auto is never left here after conf_load() */
	int threads;
	int workers_auto;	/* written workers=auto */
	int threads_auto;	/* written threads=auto */
	enum conf_kind kind;	/* from db= and its URL */
	int backlog;
	unsigned mode;
	char *binary;		/* NULL: bin/NAME */
	char *tcp;		/* "IPv4:PORT": listen there instead of RUNDIR/NAME.sock */
	char *db_name;		/* NULL: no database */
	char *db_url;		/* resolved URL (override applied), or NULL */
	int rate;		/* rate=: requests a second or a minute, 0: no limit */
	char rate_unit;		/* 's' or 'm' */
	int burst;		/* burst=, or -1: the rate's count */
	int rate_token;		/* rate_by=token: 1; addr: 0 */
	int stream;		/* stream=1: its responses are streams (Server-Sent Events):
				 * the proxy passes them on unbuffered (nginxconf.h) */
	struct conf_kv extra[CONF_EXTRA_MAX];	/* worker settings and env. keys, without env. */
	size_t nextra;
	int line;
};

struct conf {
	char *path;
	char *listen;		/* set listen; default 127.0.0.1:8080 */
	int nginx_workers;	/* set nginx_workers; 0 = the number of CPUs */
	char *nginx_user;	/* set nginx_user, or NULL */
	char *socket_group;	/* set socket_group, or NULL */
	long long body_max;	/* set body_max in bytes; default CONF_BODY_MAX_DEFAULT */
	int crash_loop_tries;	/* set crash_loop_tries; default 5 */
	int access_log;		/* set access_log: 1 on, 0 off, CONF_ACCESS_LOG_JSON json,
				 * -1 unset (the profile's) */
	int cpus;		/* the CPUs auto sizes follow: set cpus, else conf_cpus() */
	int cpus_set;		/* 1: given by set cpus */
	int metrics;		/* set metrics: 1 on (the default), 0 off */
	unsigned metrics_addr;	/* set metrics_listen: IPv4 address, network order */
	int metrics_port;	/* its port; 0: unset, no metrics address */
	int nginx_status_port;	/* set nginx_status: nginx's stub_status on 127.0.0.1; 0: none */
	struct conf_kv settings[CONF_EXTRA_MAX];
	size_t nsettings;
	struct conf_kv dbs[CONF_EXTRA_MAX];
	size_t ndbs;
	struct conf_endpoint *eps;
	size_t neps;
};

/*
 * Parses the endpoint list at path.  On success returns a conf that the caller frees with
 * conf_free().  On failure returns NULL and writes "path:line: reason" into err[errlen].
 * Rejected: unknown directives, unknown endpoint keys, duplicate names, names that are not
 * [a-z0-9_] (they become file and socket names), routes that do not start with '/' or
 * '=/' and ambiguous routes (neither '=' nor a trailing '/'), out-of-range numbers, an
 * endpoint naming an undeclared db.  Binaries are not looked for here (the generators
 * read the list on machines without them); sluiced does that.
 */
struct conf *conf_load(const char *path, char *err, size_t errlen);
/* Frees c and everything it owns; NULL is allowed. */
void conf_free(struct conf *c);

/* The endpoint called name, or NULL. Borrowed from c. */
const struct conf_endpoint *conf_find(const struct conf *c, const char *name);

#define CONF_AUTO_THREADS	64
#define CONF_AUTO_PG_WORKERS	4

/*
 * The auto sizes of an endpoint of this kind on cpus CPUs (docs/supervisor.md, "Sizes"):
 *   workers=auto: one process per two CPUs, rounded up (a worker's threads run on every
 *                 core, so processes are for isolation, not for parallelism, and each
 *                 costs its own relocated libraries and heap); on PostgreSQL at
 *                 most CONF_AUTO_PG_WORKERS;
 *   threads=auto: CONF_AUTO_THREADS, whatever the kind: the tuned nginx keeps
 *                 K = floor(workers x threads / 2W) connections to a pool per nginx
 *                 worker (W of them, one a CPU), and 64 threads give K >= 16 on any
 *                 number of CPUs (a PostgreSQL pool past 8 CPUs has less).  An idle
 *                 thread costs its stack and arena: a thread opens its database
 *                 connection at its first request (the first one at start), and on
 *                 PostgreSQL a worker's threads share db_conns backends (one a CPU, 2 to
 *                 8 by default: at most 4 x 8 = 32 a pool, so the shipped list's pools
 *                 fit the server's default max_connections of 100).
 * The pool's capacity, workers x threads, so grows with the CPUs: 32 a CPU (on
 * PostgreSQL, up to 8 CPUs).
 * cpus below 1 counts as 1.  Never fails.
 */
void conf_auto_size(enum conf_kind kind, int cpus, int *workers, int *threads);

/*
 * The CPUs a process may use, from its parts (for tests; conf_cpus() reads them): online
 * (sysconf(_SC_NPROCESSORS_ONLN)), affinity (CPUs in its affinity mask) and cpu_max (the
 * text of its cgroup's cpu.max, "QUOTA PERIOD" or "max PERIOD", or NULL): the smallest of
 * those given, a quota rounded up to whole CPUs.  A part below 1 or that does not parse
 * is ignored; the result is in [1, 1024].
 */
int conf_cpus_limit(long online, long affinity, const char *cpu_max);

/* The CPUs this process may use now: conf_cpus_limit() of this process's figures. */
int conf_cpus(void);

/* A global "set KEY VALUE", or def.  Borrowed from c. */
const char *conf_get(const struct conf *c, const char *key, const char *def);

#endif /* SLUICE_CONF_H */
