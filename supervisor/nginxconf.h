/*
 * nginxconf.h: generates a complete, self-contained nginx.conf from the endpoint list, in
 * one of two profiles.
 *
 * default: what a user writes from the nginx documentation: one location per endpoint with
 *   a bare fastcgi_pass to its unix socket (a new FastCGI connection per request), Debian's
 *   stock settings (worker_processes auto, worker_connections 768, access log on).
 * tuned: an upstream per endpoint with an idle-connection cache of K per nginx worker and
 *   fastcgi_keep_conn on.  K is derived so that W x K <= C / 2, where W is the number of
 *   nginx workers and C = workers x threads the pool's connection capacity (docs/fastcgi.md
 *   rule 2: otherwise requests queue behind connections pinned by idle keepalives).  When K
 *   comes out below 1 the endpoint gets no keepalive at all.  sluice's own workers bind no
 *   thread to a connection (common/serve.c), so they cannot be pinned; the rule stays for
 *   any plain fcgi2 program a pool runs (`binary=`, such as bench/hello).
 *
 * Both profiles run without touching /etc: `nginx -p PREFIX -c PREFIX/nginx.conf`, with
 * pid, logs and every temp path under PREFIX (PREFIX/logs must exist; sluiced's -o creates
 * it).  nginx's errors go to PREFIX/logs/error.log; its access log, a line per request in
 * PREFIX/logs/access.log, is on in the default profile and off in the tuned one (for
 * speed), and `set access_log on|off` in the endpoint list says otherwise for either;
 * `set access_log json` writes it in either profile as one JSON object a line (nginx's
 * escape=json), with the request id.  Unknown paths answer a JSON 404; nginx's own 4xx
 * and 5xx answer JSON too.
 *
 * Request ids (common/reqid.h): a map takes the client's X-Request-Id when it is 1 to 128
 * bytes of [A-Za-z0-9._:@-], else nginx's $request_id, as $sluice_request_id; every
 * location passes it to the workers as REQUEST_ID, and nginx's own answers add it as an
 * X-Request-Id header (the workers add theirs).
 *
 * A load balancer in front of several app hosts (tuned profile, hosts = "ADDR,ADDR,..."):
 * every endpoint must be on TCP (tcp=, its port the same on every host, the app hosts
 * binding their own address with `set pool_address` or SLUICE_POOL_ADDRESS), and each
 * upstream lists ADDR:PORT once per host with passive health checks (max_fails=2
 * fail_timeout=5s: two failed tries take a host out of rotation for 5 s, after which one
 * request probes it again).  A GET whose host is gone (error: refused, reset, closed, what
 * nginx itself answers 502), or times out, is sent to the next host, at most once per host
 * (fastcgi_next_upstream_tries) and within 10 s; connecting to a host times out after 2 s.
 * A worker's own 503 (its database unavailable) is not retried and does not count against
 * its host: with http_503 in fastcgi_next_upstream, a database failover made every app
 * host answer 503 at once, took them all out of rotation for fail_timeout and held writes
 * back 5 s after the database was back (tests/integration/test_multihost.sh).  nginx has
 * no http_502 for FastCGI at all (unlike proxy_next_upstream: `nginx -t` refuses it).
 * A POST (or any non-idempotent request) is never sent again once it has reached a host:
 * there is no non_idempotent, so a host dying under a POST answers 502, never a replay.
 * K is the single-host K: nginx's cache of K idle connections per worker is shared by the
 * upstream's hosts, so at most K of them can ever sit on one host's pool.  A single app
 * host (hosts without a comma) gets the single-host upstream at its address: the pool
 * listed K + 3 times, never marked down, since there is no other host to move to.  With
 * `set access_log on`, the access log's lines name the host(s) each request went to
 * ($upstream_addr, $upstream_status, and $upstream_connect_time, "-" for a host that
 * could not be connected to, so a request tried on two hosts shows whether it reached the
 * first).
 * The generator lives in libsupervisor.a so that the unit tests link it; sluiced's `nginx`
 * subcommand (supervisor/nginx.c) fills the options.  Each pool's K, the routes and the
 * JSON errors come from the proxy's model (proxy.h), which apacheconf.c writes too.
 */
#ifndef SLUICE_NGINXCONF_H
#define SLUICE_NGINXCONF_H

#include <stdio.h>

struct conf;

enum nginx_profile {
	NGINX_DEFAULT,
	NGINX_TUNED,
	NGINX__MAX
};

struct nginx_opts {
	enum nginx_profile profile;
	const char *rundir;	/* absolute; sockets are RUNDIR/NAME.sock */
	const char *prefix;	/* absolute nginx prefix */
	const char *listen;	/* NULL: the conf's listen */
	int workers;		/* nginx worker processes W; 0: the conf's, else online CPUs */
	int keepalive;		/* -1: derived per endpoint; >= 0: forced K for every endpoint */
	const char *user;	/* emit `user USER GROUP;` when non-NULL (nginx started as root) */
	const char *group;	/* with user; NULL: USER's primary group (nginx decides) */
	const char *comment;	/* an extra comment line for the header, or NULL */
	const char *hosts;	/* "ADDR,ADDR,...": the app hosts of a load balancer, or NULL */
};

#define NGINX_HOSTS_MAX	64
/* Both profiles' worker_connections. */
#define NGINX_WORKER_CONNECTIONS	4096
/* A stream=1 endpoint's fastcgi_read_timeout in seconds: twice the longest heartbeat
 * interval a streaming worker allows (SLUICE_REALTIME_HEARTBEAT_MS <= 30 s). */
#define NGINX_STREAM_READ_TIMEOUT	60
/* Both profiles' listen backlog (the kernel caps it at net.core.somaxconn). */
#define NGINX_LISTEN_BACKLOG		4096

/* Profile by name ("default", "tuned"); -1 when unknown. */
int nginx_profile_parse(const char *name);

/* The derived keepalive K = floor(capacity / (2 * nginx_workers)); 0 means none. */
int nginx_keepalive(int capacity, int nginx_workers);

/* A load balancer's K (-H): worker_connections / 2, whatever the pools (nginxconf.c). */
int nginx_lb_keepalive(void);

/* W as the generator resolves it: o->workers, else c->nginx_workers, else c->cpus (the CPUs
 * the pools' auto sizes follow), else online CPUs. */
int nginx_workers_resolve(const struct conf *c, const struct nginx_opts *o);

/*
 * Writes the whole nginx.conf to out.  Returns 0, or -1 when a path or option cannot be
 * pasted into nginx.conf (the reason is logged), hosts is malformed (not dotted IPv4
 * addresses, a repeated one, more than NGINX_HOSTS_MAX), given with the default profile or
 * with an endpoint that has no tcp=, or a write fails.  With a forced keepalive
 * that breaks W x K <= C / 2 it still writes the file, with a warning comment above the
 * upstream and a log_warn() line, because the experiments that prove the cliff need it.
 */
int nginx_conf_write(FILE *out, const struct conf *c, const struct nginx_opts *o);

#endif /* SLUICE_NGINXCONF_H */
