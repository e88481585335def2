/*
 * sluiced.h: what the supervisor's modules share.  Not part of common/: handlers never see
 * any of this.
 *
 *   sluiced.c     main, command line, start-up and the poll() loop (signals via a
 *                 self-pipe)
 *   pool.c        one pool per endpoint: its socket, its workers, restarts, backoff,
 *                 crash-loop detection, generations for reload, graceful stop (of one pool
 *                 or all), and the clock every deadline is measured on
 *   dbcheck.c     what a pool sees of its SQLite database from outside (dbcheck.h)
 *   ctl.c         the control socket RUNDIR/sluiced.ctl, server and client sides; it acts
 *                 on pools through pool.c and never calls back into sluiced.c
 *   adopt.c       the workers outlive their supervisor: RUNDIR/sluiced.workers records
 *                 them, and the next sluiced (after a crash, or `ctl upgrade`'s execv)
 *                 adopts them and their pools' sockets through pidfds
 *   stats.c       the workers' counters pages (common/metrics.h): made before a fork,
 *                 folded into the pool's totals when a worker dies, shown by ctl status
 *                 (text and JSON) and served as Prometheus text on set metrics_listen
 *   stats_ring.c  the last minutes of every pool, a sample every STATS_RING_EVERY_MS in a
 *                 ring of fixed size, for the status page's charts
 *   stats_html.c  the status page of the metrics address: an HTML section per pool with
 *                 its counters and inline SVG charts of its ring, no script
 *   stubstatus.c  nginx's stub_status figures (set nginx_status), read over loopback
 *                 for /metrics and the status page (stubstatus.h)
 *   listenq.c     the listen queue of each pool's socket, asked of the kernel (sock_diag
 *                 for unix sockets, TCP_INFO and SO_MEMINFO for TCP)
 *   top.c         the frames of `ctl top`: every pool's rates each second, from ctl
 *                 status's JSON
 *   priv.c        started as root: sets up what the run user cannot, then drops root;
 *                 who owns the endpoint sockets
 *   reread.c      the endpoint list read again while running (SIGHUP, ctl reload): new
 *                 pools bound first, and all or nothing
 *   reload.c      `ctl reload`'s proxy side: how the proxy's file was generated
 *                 (RUNDIR/proxy.args), made anew, tested, and the proxy reloaded
 *   nginx.c       the `nginx` subcommand around nginxconf.c
 *   nginxconf.c   the nginx configuration generator (nginxconf.h)
 *   apache.c      the `apache` subcommand around apacheconf.c
 *   apacheconf.c  the Apache configuration generator (apacheconf.h)
 *   proxy.c       the proxy's model for both generators: each pool's connections, the
 *                 routes' order, the JSON errors, the checks both make (proxy.h)
 *   paths.c       the generators' file system: absolute paths, the servers' prefix
 *                 directories, a generated file written atomically
 *   conf.c        the endpoint list's parser (conf.h)
 *
 * Times are CLOCK_MONOTONIC milliseconds (int64_t).  Everything runs in one thread.
 *
 * Where the logs go.  sluiced writes to its standard error, and its workers inherit it, so
 * one stream holds the whole back end: lines of the form "sluice NAME[PID] LEVEL: text"
 * (common/log.c: one write(2) per line, so concurrent lines never interleave), NAME being
 * sluiced or the endpoint.  Run by hand or by `make run` that is the terminal; under a
 * service manager, wherever it sends a service's stderr (systemd: the journal); the
 * integration tests keep it in DIR/sluiced.log.  SLUICE_LOG_LEVEL (error, warn, info,
 * debug; default info) in sluiced's environment sets the level for sluiced and every
 * worker, and log_level=LEVEL on an endpoint's line sets it for that endpoint's workers.
 * At info a pool says one line when it starts ("NAME: listening on SOCKET ... N workers of
 * BINARY") and one when it stops ("NAME: stopped ..."); each worker's own start and stop,
 * and each worker sluiced starts or reaps in normal operation, are debug lines.  Anything
 * that goes wrong (a worker that dies unasked, a crash loop, a refused reload) is a warn or
 * error line.  nginx's error log and its optional access log are files under its prefix
 * (supervisor/nginxconf.h; `set access_log on|off|json` in the endpoint list).
 */
#ifndef SLUICED_H
#define SLUICED_H

#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>
#include <sys/un.h>

#include "conf.h"
#include "dbcheck.h"
#include "metrics.h"
#include "stubstatus.h"

#define SLUICED_SUN_MAX	sizeof(((struct sockaddr_un *)0)->sun_path)

/* A worker that lived shorter than this and died counts as a quick failure. */
#define POOL_QUICK_MS	1000
/* A new generation's worker counts as up once it has been alive this long. */
#define POOL_READY_MS	200
/* Backoff after the first quick failure, doubled per further one, capped. */
#define POOL_BACKOFF_MS	100
#define POOL_BACKOFF_MAX_MS	3200
/* The watchdog kills a worker whose request has run this long past the time budget
 * (SLUICE_STMT_TIMEOUT_MS), and looks at the slots at least this often (and again at
 * the moment the oldest request it saw reaches the limit).  A second: a worker that can
 * run answers within its budget (every statement and every wait in the writers' queue
 * stops there), so one that has not a second later cannot run. */
#define POOL_WATCH_GRACE_MS	1000
#define POOL_WATCH_EVERY_MS	250
/* sluiced writes its heartbeat on every worker's watchdog page at least this often; a
 * worker's orphan grace (SLUICE_ORPHAN_GRACE_MS, at least 2 s) is counted from the last. */
#define POOL_BEAT_MS		500
/* The watchdog's page is the workers' fd 3, the counters' page fd 4; the workers keep
 * both open, for a sluiced that adopts them (adopt.c). */
#define POOL_WATCH_FD		3
#define POOL_WATCH_FD_STR	"3"
#define POOL_METRICS_FD		4
#define POOL_METRICS_FD_STR	"4"
/* The wait status of an adopted worker that was not our child: the kernel tells it to
 * the parent alone. */
#define POOL_STATUS_UNKNOWN	(-1)

enum pool_state {
	POOL_RUNNING,
	POOL_FAILED,
	POOL_STOPPING,
	POOL__MAX
};

/* What a pool's workers are started with; compared on SIGHUP to decide on a reload. */
struct pool_spec {
	char *binary;		/* path given to execv */
	char **env;		/* "SLUICE_...=..." strings, NULL-terminated */
	int workers;
	int threads;
	char sizing[48];	/* how they were chosen: "fixed", "auto:2cpus", ... */
	unsigned mode;		/* socket mode */
	int backlog;
	char *tcp;		/* "IPv4:PORT" to listen on instead of the unix socket, or NULL */
	int64_t watch_ms;	/* a request older than this gets its worker killed; 0: never */
	char where[320];	/* the endpoint's line in the endpoint list, "PATH:LINE" */
	char *db_path;		/* the file of a sqlite: database (dbcheck.c), or NULL */
	int metrics;		/* its workers get a counters page (set metrics on) */
};

struct worker {
	pid_t pid;
	int pidfd;		/* adopted: its pidfd, polled for its exit; -1: our child */
	int adopted;		/* started by a previous sluiced (adopt.c) */
	unsigned long long start;	/* its start time in clock ticks (/proc/PID/stat) */
	unsigned gen;		/* the pool generation it was started for */
	int64_t started;
	int64_t term_at;	/* when SIGTERM was sent; 0: not asked to stop */
	int killed;		/* SIGKILL sent */
	int64_t *watch;		/* the watchdog's page shared with it (SETTINGS_WATCH_SLOTS
				 * slots, written by the worker), or NULL */
	int64_t stopped_at;	/* first seen stopped (SIGSTOP) while idle; 0: not */
	struct metrics_page *metrics;	/* its counters page (stats.c), or NULL */
	int mthreads;		/* the threads the page was made for */
};

/* What the kernel said of a pool's listening socket at the last sample (listenq.c). */
struct pool_queue {
	int known;		/* the last sample succeeded */
	uint32_t now;		/* connections waiting for an accept() */
	uint32_t peak;		/* the most seen waiting, at any sample */
	uint32_t backlog;	/* the queue's limit, as the kernel applies it */
	int drops_known;	/* TCP: the kernel counts the listener's drops */
	uint64_t drops;		/* connections dropped at the listener (TCP) */
	int64_t next;		/* the next sample (pool_tick()) */
};

/* How often pool_tick() samples each pool's listen queue. */
#define LISTENQ_EVERY_MS	500

/* The status page's samples: one every STATS_RING_EVERY_MS, the last STATS_RING_LEN kept
 * (5 minutes). */
#define STATS_RING_EVERY_MS	2000
#define STATS_RING_LEN		150

/* One sample of a pool, its rates over the time since the sample before; a figure that is
 * not known (no request in that time, no listen queue) is -1. */
struct stats_point {
	int64_t at;		/* pool_now() */
	float rps;		/* requests a second */
	float err5;		/* 5xx a second */
	float p50_ms, p99_ms;	/* of the requests in that time */
	float busy, threads;	/* serving threads busy, and all of them, now */
	float queue;		/* the listen queue now */
	float reuse;		/* requests per FastCGI connection opened in that time */
};

struct stats_ring {
	struct stats_point pt[STATS_RING_LEN];
	size_t head;		/* the next slot written */
	size_t n;		/* samples held, at most STATS_RING_LEN */
	int64_t last_at;	/* the previous sample's time; 0: none yet */
	uint64_t last_req, last_5xx, last_acc;	/* the pool's counts then */
	uint64_t last_bucket[METRICS_BUCKETS];
	int64_t next;		/* the next sample */
};

struct pool {
	/* First: its counters are aligned to cache lines (common/metrics.h), and anywhere
	 * else the members around them would pad the struct. */
	struct metrics_sum retired;	/* the counts of its workers that are gone */
	struct pool *next;
	char name[CONF_NAME_MAX];
	char sock_path[SLUICED_SUN_MAX];	/* or "tcp:ADDR:PORT" for a TCP pool */
	int tcp;			/* listening on TCP: no file to chmod or unlink */
	int fd;			/* the listening socket, -1 once closed */
	struct pool_spec spec;
	enum pool_state state;
	int removing;		/* removed from the conf: freed once its workers are gone */
	int reloading;		/* a new generation is starting; the old one still serves */
	unsigned gen;
	struct worker *w;
	size_t nw, wcap;
	unsigned long spawns, crashes;
	unsigned long hung;	/* workers the watchdog killed */
	int quick_fails;
	int64_t fail_at;	/* time of the last quick failure */
	int64_t next_spawn;	/* no spawn before this (backoff) */
	int last_status;	/* wait status of the last unexpected exit */
	int has_exit;
	struct dbcheck db;	/* its SQLite database as last seen (spec.db_path) */
	struct pool_queue queue;	/* its socket's listen queue (listenq.c) */
	struct stats_ring *ring;	/* its last minutes (stats_ring.c), or NULL */
};

/* The supervisor's state; one instance, owned by main. */
struct sluiced {
	const char *conf_path;
	const char *rundir;
	const char *bindir;
	int grace_ms;
	struct conf *conf;
	struct pool *pools;
	int crash_loop_tries;
	uid_t sock_uid;		/* chown target of sockets, (uid_t)-1: leave */
	gid_t sock_gid;		/* (gid_t)-1: leave */
	int stopping;
	int ctl_fd;
	char ctl_path[SLUICED_SUN_MAX];
	char pid_path[4096];
	int *waiters;		/* ctl clients of `stop`, answered by our exit */
	size_t nwaiters;
	int drop;		/* started as root: runs as run_uid/run_gid once set up */
	uid_t run_uid;
	gid_t run_gid;
	char run_user[64];
	int metrics_fd;		/* the Prometheus address's listening socket, or -1 */
	struct adopt_rec *adopt;	/* the previous sluiced's workers (adopt.c), at start */
	size_t nadopt;
	char adopt_path[4096];	/* RUNDIR/sluiced.workers */
	char *adopt_last;	/* what it holds now */
	char self_exe[4096];	/* the binary sluiced was started from, for ctl upgrade */
	char **argv;		/* its command line, for ctl upgrade */
	int upgrade;		/* ctl upgrade asked: execv() once the answer is sent */
};

/* pool.c */
/*
 * Checks that every endpoint of c has a binary this process may execute.  0, or -1 with
 * "path:line: endpoint NAME: cannot execute PATH: reason" in err[errlen].
 */
int pool_check_binaries(const struct sluiced *s, const struct conf *c, char *err,
    size_t errlen);
int pool_spec_make(const struct sluiced *s, const struct conf_endpoint *ep,
    struct pool_spec *out);
void pool_spec_free(struct pool_spec *sp);
int pool_spec_same(const struct pool_spec *a, const struct pool_spec *b);
struct pool *pool_new(struct sluiced *s, const struct conf_endpoint *ep);
void pool_free(struct pool *p);
void pool_apply_socket(struct sluiced *s, struct pool *p, const struct pool_spec *sp);
void pool_tick(struct sluiced *s, struct pool *p, int64_t now, int64_t *deadline);
int pool_reap(struct sluiced *s, pid_t pid, int status, int64_t now);
void pool_reload(struct pool *p, struct pool_spec *sp, int64_t now);
void pool_stop(struct pool *p, int64_t now);
void pool_remove(struct pool *p, int64_t now);
size_t pool_live(const struct pool *p);
void pool_status(FILE *out, const struct pool *p);
/* Milliseconds on the monotonic clock: the time base of every pool deadline. */
int64_t pool_now(void);
/* The pool called name that is not being removed, or NULL.  Borrowed from s. */
struct pool *pool_find(struct sluiced *s, const char *name);
/* Starts a graceful stop of every pool (once; s->stopping is then set). */
void pool_stop_all(struct sluiced *s);
/* pool_reap() of the adopted worker whose pidfd turned readable (its exit). */
void pool_reap_pidfd(struct sluiced *s, int pidfd, int64_t now);

/* adopt.c */
/* The previous sluiced's record (RUNDIR/sluiced.workers) into s, at start; nothing when
 * there is none. */
void adopt_load(struct sluiced *s);
/*
 * Pool p (being made, no socket yet) takes its socket and its workers from the record at
 * now: the listening socket, when a recorded worker's listens at want (p->sock_path's
 * form), and in *ws (caller frees; *nws of them) every recorded worker of p that is still
 * the process recorded, for p to take as its own.  -1 when nothing was adopted (those
 * workers told to stop, *ws NULL): p binds as usual.
 */
int adopt_pool(struct sluiced *s, const struct pool *p, const char *want, int64_t now,
    struct worker **ws, size_t *nws);
/* The end of the start's adoption: what was not adopted logged, the record freed. */
void adopt_done(struct sluiced *s);
/* RUNDIR/sluiced.workers written anew (atomically) when s's workers changed. */
void adopt_record(struct sluiced *s);
/* A graceful stop: the record removed. */
void adopt_forget(struct sluiced *s);
/* pid's start time in clock ticks into *start: 0, or -1 (gone, a zombie, unreadable). */
int adopt_start_time(pid_t pid, unsigned long long *start);
/* Sends sig to w, through its pidfd when adopted: kill()'s result. */
int adopt_signal(const struct worker *w, int sig);
/* The wait status of the exited process of pidfd (reaped when it is our child), or
 * POOL_STATUS_UNKNOWN. */
int adopt_wait(int pidfd);

/* stats.c */
/*
 * A zeroed counters page for a worker of threads threads: a memfd whose descriptor (*fd,
 * close-on-exec) the child gets, mapped here.  NULL (and *fd -1) when the kernel refused:
 * logged, the worker runs uncounted.
 */
struct metrics_page *stats_page_new(const char *pool, int threads, int *fd);
/* The same for any page of size bytes a worker shares with sluiced (the counters', the
 * watchdog's), named what in the kernel and in the log line of a refusal. */
void *stats_shared_page(const char *pool, const char *what, size_t size, int *fd);
/* w's page added to p's retired totals (w has died), then unmapped. */
void stats_retire(struct pool *p, struct worker *w);
void stats_page_free(struct worker *w);
/* "running", "degraded", "failed" or "stopping": what ctl status says of p. */
const char *stats_state_word(const struct pool *p);
/* Pool p's counts: its retired totals and every live worker's page. */
void stats_pool_sum(const struct pool *p, struct metrics_sum *out);
/* ctl status: the counters' part of p's line (" requests=N ..."). */
void stats_status_words(FILE *out, const struct pool *p);
/* ctl status --json: every pool with every figure, one JSON object. */
void stats_json(FILE *out, const struct sluiced *s);
/* nginx's figures at a scrape (set nginx_status): up 0 when it did not answer. */
struct stats_nginx {
	int up;
	int port;		/* set nginx_status */
	struct stubstatus st;
};
/* The Prometheus text format 0.0.4 of every pool, and nginx's families when nginx is not
 * NULL (set nginx_status): sluice_nginx_up, and its figures when up. */
void stats_prometheus(FILE *out, const struct sluiced *s, const struct stats_nginx *nginx);
/* Binds set metrics_listen when given (start-up, before the privilege drop): 0 or -1
 * (logged); s->metrics_fd stays -1 when unset. */
int stats_listen(struct sluiced *s);
/* What the metrics address serves at 200. */
enum stats_doc {
	STATS_DOC_METRICS,	/* /metrics: the Prometheus text */
	STATS_DOC_PAGE,		/* / and /status: the status page (stats_html.c) */
	STATS_DOC__MAX
};
/* What the metrics address answers the request head req (NUL-terminated): 405 for a
 * method but GET and HEAD, 200 for /metrics, / and /status (with or without a query; which
 * one in *doc), else 404. */
int stats_route(const char *req, enum stats_doc *doc);
/* Answers one client of the metrics address (from the poll loop; short timeouts). */
void stats_accept(struct sluiced *s);
/* Serving threads busy in m: its requests in flight, at most its threads. */
int64_t stats_busy(const struct metrics_sum *m);

/* stats_ring.c */
/* Samples p into its ring when a sample is due at now (the ring made at the first; no
 * ring, no sample when memory is short); returns when the next one is. */
int64_t stats_ring_tick(struct pool *p, int64_t now);
/* Frees p's ring. */
void stats_ring_free(struct pool *p);

/* stats_html.c */
/*
 * The status page: every pool of s with its counters and charts of its ring, as one HTML
 * document into out; nginx (may be NULL: no set nginx_status) are nginx's figures of the
 * moment.  Every text that comes from the endpoint list or the file system is
 * HTML-escaped.
 */
void stats_html_page(FILE *out, const struct sluiced *s, const struct stats_nginx *nginx);
/* text HTML-escaped into out (& < > " ' as entities). */
void stats_html_escape(FILE *out, const char *text);

/* listenq.c */
/* Samples p's listen queue into p->queue (the peak kept); p->queue.known is 0 when the
 * kernel would not tell or the pool has no socket. */
void listenq_sample(struct pool *p);
/* Samples every pool that keeps counters: before ctl status and a scrape. */
void listenq_sample_all(struct sluiced *s);

/* ctl.c */
int ctl_listen(struct sluiced *s);
int ctl_in_use(const char *path);
void ctl_accept(struct sluiced *s);
int ctl_client(const char *rundir, int argc, char **argv);

/* top.c: the frames of `ctl top` (ctl.c asks for them). */
#define TOP_POOLS	64
#define TOP_BUCKETS	32

/* A pool's counters at one sample. */
struct top_pool {
	char name[CONF_NAME_MAX];
	char state[16];
	double requests, accepted, errors5;
	double busy, threads;		/* serving threads busy, and all of them */
	double queue;			/* the listen queue now; -1: unknown */
	double cum[TOP_BUCKETS];	/* the histogram's cumulative counts */
	double le[TOP_BUCKETS];		/* its bounds in seconds; +Inf as INFINITY */
	int nb;
};

/* nginx's stub_status figures in a sample (set nginx_status). */
struct top_nginx {
	int state;			/* 0: not set, 1: not answering, 2: up */
	double active, reading, writing, waiting, accepts, requests;
};

struct top_sample {
	struct top_pool p[TOP_POOLS];
	int n;
	struct top_nginx nginx;
	int64_t at;			/* pool_now() */
};

/* Reads the answer text of "status json" (after "ok\n") into s: 0, or -1 when it is not
 * that JSON. */
int top_parse(const char *text, struct top_sample *s);
/* One frame: cur against prev (NULL for the first: totals, and "-" for the rates). */
void top_frame(FILE *out, const struct top_sample *prev, const struct top_sample *cur);

/* priv.c: privilege drop when started as root.  priv_resolve() picks the run user and
 * group (s->drop), priv_rundir() gives RUNDIR to it (before any socket is bound): 0 or -1
 * (logged).  priv_drop() gives it the control socket, the pid file and the SQLite data,
 * then switches for good; it exits or aborts when that fails. */
int priv_resolve(struct sluiced *s, const struct conf *c);
int priv_rundir(struct sluiced *s, const struct conf *c);
void priv_drop(struct sluiced *s);
/* The owner and group every endpoint socket gets (s->sock_uid, s->sock_gid; -1: left as
 * bound) under c's socket_group: 0, or -1 when that group does not exist (logged). */
int priv_sock_owner(struct sluiced *s, const struct conf *c);
/* `sluiced user`: prints USER:GROUP that sluiced started now would run as; exit status. */
int priv_user_main(const char *conf_path);

/*
 * reread.c: the endpoint list read again while sluiced runs (SIGHUP, `ctl reload`), all or
 * nothing.  who ("SIGHUP", "ctl reload") begins the log lines; with hold the pools of
 * removed endpoints keep serving until reread_prune().  Returns 0 with what changed in
 * said[len] ("endpoints=N added=N removed=N reloaded=N unchanged=N", then " new=A,B"
 * naming the new pools when there are any), or -1 with the
 * reason there and every pool, socket and setting as it was.  reread_prune() stops every
 * pool whose endpoint is not in the running list and returns how many.
 */
int reread_list(struct sluiced *s, const char *who, int hold, char *said, size_t len);
size_t reread_prune(struct sluiced *s);

/*
 * reload.c: the proxy's side of `ctl reload`.  reload_record() writes RUNDIR/proxy.args
 * after `sluiced nginx|apache ... -o FILE` wrote FILE (server: "nginx" or "apache";
 * argv[0..argc): sluiced's words and options as given, after the program's name;
 * relative paths are kept with the directory they were given in): 0, or -1 with the
 * reason on stderr and no record left (an older one is removed).  reload_client() is
 * `ctl reload` without a NAME: the generated file made anew into FILE.next and tested by
 * the proxy, the list re-read by sluiced through ask (ctl.c's exchange: 0 and the answer
 * in *resp, caller frees, or non-zero), FILE replaced, the proxy reloaded gracefully and
 * the removed pools stopped once its old workers left.  Returns the exit status (0, or 1
 * with the reason on stderr).
 */
int reload_record(const char *rundir, const char *server, int argc, char *const argv[]);
int reload_client(const char *rundir, const char *ctl_path,
    int (*ask)(const char *path, const char *cmd, size_t len, int rcv_ms, char **resp));

/* apache.c */
int apache_main(const char *conf_path, const char *rundir, const char *bindir,
    const char *prefix, const char *profile, const char *listen, int children, int reuse,
    const char *outfile);

/* nginx.c */
int nginx_main(const char *conf_path, const char *rundir, const char *prefix,
    const char *profile, const char *listen, int workers, int keepalive,
    const char *nginx_user, const char *hosts, const char *outfile);

/* paths.c.  path made absolute against the current directory (no trailing slash) into
 * buf; 0, or -1 when it does not fit or the cwd is unknown. */
int sluiced_abspath(const char *path, char *buf, size_t len);
/* The prefix of server ("nginx", "apache") into buf: prefix made absolute, or
 * RUNDIR_ABS/SERVER when prefix is NULL; 0, or -1 when it does not fit (said on stderr). */
int sluiced_prefix(const char *server, const char *rundir_abs, const char *prefix, char *buf,
    size_t len);
/* mkdir -p dir (mode 0755); 0 or -1 with errno. */
int sluiced_mkdirs(const char *dir);
/* -o FILE written atomically: sluiced_out_open() opens FILE.tmp (its path into tmp[len]),
 * NULL with the reason on stderr; sluiced_out_close() closes it and, when ok, renames it
 * over FILE, else removes it.  Returns 0, or -1 (reason on stderr when ok). */
FILE *sluiced_out_open(const char *outfile, char *tmp, size_t len);
int sluiced_out_close(FILE *f, const char *tmp, const char *outfile, int ok);

#endif /* SLUICED_H */
