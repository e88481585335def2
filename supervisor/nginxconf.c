/*
 * nginxconf.c: see nginxconf.h.  The output is written top to bottom with fprintf; every
 * string pasted into it (paths, listen address, routes, user) is checked first so that
 * the result never needs quoting: the conf parser already restricts routes and values,
 * and the paths given on the command line are checked here.  What each pool keeps, the
 * routes and the errors come from the proxy's model (proxy.h), shared with apacheconf.c.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "conf.h"
#include "log.h"
#include "nginxconf.h"
#include "proxy.h"
#include "stubstatus.h"

static const char *const nginx_profile_names[NGINX__MAX] = { "default", "tuned" };

static const struct proxy_dialect nginx_dialect = {
	.name = "nginx",
	.file = "nginx.conf",
	.unsafe = "\"'{};$\\#`",
	.indent = "\t",
	.procs = 'W',
	.procs_name = "nginx workers",
	.conns = "K",
	.conns_letter = 'K',
	.forced = "keepalive",
};

/* The app hosts of a load balancer (nginx_opts.hosts, split and checked). */
struct nginx_hosts {
	char addr[NGINX_HOSTS_MAX][INET_ADDRSTRLEN];
	int n;			/* 0: a single host's file */
};

/* The standard CGI/FastCGI parameters, as Debian's /etc/nginx/fastcgi_params has them. */
static const char *const nginx_params[][2] = {
	{ "QUERY_STRING", "$query_string" },
	{ "REQUEST_METHOD", "$request_method" },
	{ "CONTENT_TYPE", "$content_type" },
	{ "CONTENT_LENGTH", "$content_length" },
	{ "SCRIPT_NAME", "$fastcgi_script_name" },
	{ "REQUEST_URI", "$request_uri" },
	{ "DOCUMENT_URI", "$document_uri" },
	{ "SERVER_PROTOCOL", "$server_protocol" },
	{ "REQUEST_SCHEME", "$scheme" },
	{ "HTTPS", "$https if_not_empty" },
	{ "GATEWAY_INTERFACE", "CGI/1.1" },
	{ "SERVER_SOFTWARE", "nginx/$nginx_version" },
	{ "REMOTE_ADDR", "$remote_addr" },
	{ "REMOTE_PORT", "$remote_port" },
	{ "SERVER_ADDR", "$server_addr" },
	{ "SERVER_PORT", "$server_port" },
	{ "SERVER_NAME", "$server_name" },
	{ "REDIRECT_STATUS", "200" },
	/* The client's request id when well-formed (nginx_write_request_id()); else none,
	 * and the worker makes one. */
	{ "REQUEST_ID", "$sluice_client_request_id if_not_empty" },
};

int
nginx_profile_parse(const char *name)
{
	return proxy_profile_parse(nginx_profile_names, NGINX__MAX, name);
}

int
nginx_keepalive(int capacity, int nginx_workers)
{
	return proxy_fair_conns(capacity, nginx_workers);
}

/*
 * A load balancer's K (several hosts, -H): every connection an nginx worker can have open
 * to the app tier, which is at most half its worker_connections (each proxied request
 * holds its client's connection and its upstream one).  Past K, nginx closes each
 * connection it opened as soon as its request is answered, and over a network (not
 * loopback) the closing side keeps it in TIME_WAIT for 60 s: with a few thousand such
 * requests a second the load balancer runs out of ports to each app host (about 28,000
 * in Linux's default range, so some 470 new connections a second, sustained) and serves
 * at that pace.  A sluice worker binds no thread to a connection (common/serve.c), so an
 * idle kept connection costs an app host one descriptor and no thread: rule 2's bound
 * (W x K <= C / 2) is for workers that pin threads.
 */
int
nginx_lb_keepalive(void)
{
	return NGINX_WORKER_CONNECTIONS / 2;
}

int
nginx_workers_resolve(const struct conf *c, const struct nginx_opts *o)
{
	if (o->workers > 0)
		return o->workers;
	if (c->nginx_workers > 0)
		return c->nginx_workers;
	/* The CPUs the pools' auto sizes follow (set cpus, else what sluiced may use). */
	if (c->cpus > 0)
		return c->cpus;
	return proxy_cpus(1024);
}

static void
nginx_write_params(FILE *out, const char *indent)
{
	size_t i;

	for (i = 0; i < sizeof(nginx_params) / sizeof(nginx_params[0]); i++)
		fprintf(out, "%sfastcgi_param %-17s %s;\n", indent, nginx_params[i][0],
		    nginx_params[i][1]);
}

static void
nginx_write_main(FILE *out, const struct nginx_opts *o, int w)
{
	if (o->user != NULL) {
		fprintf(out, "# nginx is started as root: its workers run as the user that can "
		    "reach RUNDIR\n# (see supervisor/nginx.c); as a non-root user this line "
		    "is ignored.\n");
		fprintf(out, "user %s%s%s;\n", o->user, o->group != NULL ? " " : "",
		    o->group != NULL ? o->group : "");
	}
	fprintf(out, "daemon off;\nmaster_process on;\n");
	if (o->profile == NGINX_TUNED || o->workers > 0)
		fprintf(out, "worker_processes %d;\n", w);
	else
		fprintf(out, "worker_processes auto;\n");
	fprintf(out, "pid %s/nginx.pid;\n", o->prefix);
	fprintf(out, "error_log %s/logs/error.log;\n", o->prefix);
	if (o->profile == NGINX_TUNED) {
		fprintf(out, "worker_rlimit_nofile 65536;\n\n");
		/*
		 * multi_accept on, with a listening socket per worker (reuseport, on the listen
		 * line): each worker accepts every connection waiting in its own queue at each
		 * turn of its loop.  With multi_accept off a worker accepted one connection a
		 * turn, and a busy worker's turn is long: 1000 clients connecting to a
		 * saturated chat page waited in the queue for seconds, which wrk counted as
		 * timeouts (docs/benchmarks.md, "nginx's accept queue"); none with this.  One
		 * shared socket with multi_accept on would let one worker swallow a burst while
		 * the others idle; the kernel spreads connections over the sockets instead.
		 * 4096 connections a worker hold 1000 clients and their upstream connections
		 * even when one worker gets them all; nginx allocates and touches its
		 * connection and event arrays for all of them at start, so four times as many
		 * would cost every worker memory it never uses.
		 */
		fprintf(out, "events {\n\tworker_connections %d;\n\tmulti_accept on;\n}\n\n",
		    NGINX_WORKER_CONNECTIONS);
	} else {
		/*
		 * The one departure from Debian's stock file (worker_connections 768): with it
		 * nginx drops connections past a few hundred clients (at 1000 wrk connections,
		 * about 13,000 read errors a second), which would hide what this profile is
		 * about: one new FastCGI connection per request.
		 */
		fprintf(out, "worker_rlimit_nofile 8192;\n");
		fprintf(out, "\n# Debian's stock file says 768, too few for 1000 clients.\n");
		fprintf(out, "events {\n\tworker_connections %d;\n}\n\n",
		    NGINX_WORKER_CONNECTIONS);
	}
}

/* The tuned profile's FastCGI retries (one host's pool, or several app hosts) and
 * buffers. */
static void
nginx_write_tuned_fastcgi(FILE *out, const struct nginx_hosts *h)
{
	/*
	 * A GET that hits a cached connection whose worker just exited is retried;
	 * POST is not (no non_idempotent), see docs/fastcgi.md rule 7.
	 */
	if (h->n < 2) {
		fprintf(out, "\tfastcgi_next_upstream error timeout invalid_header;\n");
		/*
		 * No cap on the count: each upstream block's entries bound the
		 * tries.  The time bound, equal to fastcgi_read_timeout (60 s),
		 * keeps a request that timed out from being sent to the pool again
		 * once per entry.
		 */
		fprintf(out, "\tfastcgi_next_upstream_tries 0;\n");
		fprintf(out, "\tfastcgi_next_upstream_timeout 60s;\n");
	} else {
		/*
		 * Several app hosts: a GET goes to the next host when its host cannot
		 * be reached or fails it (error: what nginx would answer 502) or times
		 * out; once per host at most, within 10 s.  Not on a worker's 503
		 * (see nginxconf.h).  Still no non_idempotent: a POST that reached a
		 * host is never sent to another.  A host that is gone (no RST,
		 * dropped SYNs) costs 2 s, not the default 60.
		 */
		fprintf(out, "\t# Load balancer over %d app hosts: GETs move to the next "
		    "host, POSTs are never replayed.\n", h->n);
		fprintf(out, "\tfastcgi_next_upstream error timeout invalid_header;\n");
		fprintf(out, "\tfastcgi_next_upstream_tries %d;\n", h->n);
		fprintf(out, "\tfastcgi_next_upstream_timeout 10s;\n");
		fprintf(out, "\tfastcgi_connect_timeout 2s;\n");
	}
	fprintf(out, "\tfastcgi_request_buffering on;\n");
	/* Sized so that a ~200 kB page is buffered in memory, not in fastcgi_temp. */
	fprintf(out, "\tfastcgi_buffer_size 32k;\n\tfastcgi_buffers 16 16k;\n");
}

/*
 * The access log: off, nginx's combined format, a load balancer's (the hosts each request
 * went to), or JSON lines (set access_log json: one object a line, every string escaped
 * by nginx's escape=json, the request id in each).
 */
static void
nginx_write_access_log(FILE *out, const struct conf *c, const struct nginx_opts *o,
    const struct nginx_hosts *h)
{
	/* The tuned profile logs no request unless asked: a line per request costs speed. */
	if (c->access_log == CONF_ACCESS_LOG_JSON) {
		fprintf(out, "\tlog_format sluice_json escape=json '{\"time\":\"$time_iso8601\","
		    "\"request_id\":\"$sluice_log_request_id\",\"remote_addr\":\"$remote_addr\","
		    "\"method\":\"$request_method\",\"uri\":\"$request_uri\",\"status\":$status,"
		    "\"bytes\":$body_bytes_sent,\"request_time\":$request_time,"
		    "\"upstream_response_time\":\"$upstream_response_time\","
		    "\"upstream_addr\":\"$upstream_addr\","
		    "\"upstream_status\":\"$upstream_status\"}';\n");
		fprintf(out, "\taccess_log %s/logs/access.log sluice_json;\n", o->prefix);
	} else if (h->n > 0 && c->access_log == 1) {
		/*
		 * A load balancer's log says which app host answered: $upstream_addr lists
		 * every host a request was sent to ("A:P, B:P" for a GET retried on B).
		 */
		fprintf(out, "\tlog_format sluice_lb '$remote_addr [$time_local] \"$request\" "
		    "$status $body_bytes_sent upstream=$upstream_addr "
		    "upstream_status=$upstream_status upstream_connect=$upstream_connect_time "
		    "$request_time';\n");
		fprintf(out, "\taccess_log %s/logs/access.log sluice_lb;\n", o->prefix);
	} else if (c->access_log == 1 || (c->access_log == -1 && o->profile != NGINX_TUNED))
		fprintf(out, "\taccess_log %s/logs/access.log;\n", o->prefix);
	else
		fprintf(out, "\taccess_log off;\n");
}

/*
 * The request id (common/reqid.h): the client's X-Request-Id when it is 1 to 128 bytes of
 * [A-Za-z0-9._:@-], what the workers accept; a header with CR, LF, quotes or blanks, or
 * past 128 bytes, is never passed on.  The workers get it as REQUEST_ID, or make one of
 * their own (32 hex digits, the form of nginx's $request_id) when there is none, and
 * answer it in X-Request-Id.  nginx's own $request_id is made only for the answers nginx
 * makes itself (its error pages add the header, nginx_write_server()) and the log lines
 * of requests no worker answered: nginx makes a variable's value only where it is used,
 * and making one for every request cost about a tenth of /health's CPU.  The access log's
 * id is the worker's answer's, so nginx's line and the worker's name the same request.
 */
static void
nginx_write_request_id(FILE *out, const struct conf *c)
{
	fprintf(out, "\t# The request id: the client's X-Request-Id when well-formed, else the "
	    "worker's;\n\t# nginx's own for its own answers.\n");
	fprintf(out, "\tmap $http_x_request_id $sluice_client_request_id {\n\t\tdefault \"\";\n"
	    "\t\t\"~^[A-Za-z0-9._:@-]{1,128}$\" $http_x_request_id;\n\t}\n");
	fprintf(out, "\tmap $sluice_client_request_id $sluice_request_id {\n"
	    "\t\t\"\" $request_id;\n\t\tdefault $sluice_client_request_id;\n\t}\n");
	if (c->access_log != CONF_ACCESS_LOG_JSON)
		return;
	fprintf(out, "\tmap $upstream_http_x_request_id $sluice_log_request_id {\n"
	    "\t\t\"\" $sluice_request_id;\n\t\tdefault $upstream_http_x_request_id;\n\t}\n");
}

static void
nginx_write_http_common(FILE *out, const struct conf *c, const struct nginx_opts *o,
    const struct nginx_hosts *h)
{
	fprintf(out, "\tsendfile on;\n\ttcp_nopush on;\n\ttcp_nodelay on;\n");
	fprintf(out, "\ttypes_hash_max_size 2048;\n");
	fprintf(out, "\tdefault_type application/json;\n");
	fprintf(out, "\tkeepalive_timeout 65;\n");
	/*
	 * Slow clients (slowloris) cost nginx one connection each and no worker: a request
	 * reaches FastCGI only once its header (and, with request buffering, its body) is
	 * complete.  The header must arrive within 10 s in all (nginx's default, 60 s, lets
	 * a trickle of one byte a second hold a connection for a minute); the body and the
	 * response may stall 30 s between two reads or writes.  A timed-out connection is
	 * reset rather than closed, so its socket buffers and fd are freed at once instead
	 * of lingering in FIN_WAIT.
	 */
	fprintf(out, "\tclient_header_timeout 10s;\n\tclient_body_timeout 30s;\n");
	fprintf(out, "\tsend_timeout 30s;\n\treset_timedout_connection on;\n");
	/* No version in Server headers and error pages, in either profile. */
	fprintf(out, "\tserver_tokens off;\n");
	if (o->profile == NGINX_TUNED)
		fprintf(out, "\tkeepalive_requests 100000;\n");
	nginx_write_request_id(out, c);
	nginx_write_access_log(out, c, o, h);
	fprintf(out, "\tclient_max_body_size %lld;\n", c->body_max);
	fprintf(out, "\tclient_body_temp_path %s/client_body_temp;\n", o->prefix);
	fprintf(out, "\tfastcgi_temp_path %s/fastcgi_temp;\n", o->prefix);
	fprintf(out, "\tproxy_temp_path %s/proxy_temp;\n", o->prefix);
	fprintf(out, "\tuwsgi_temp_path %s/uwsgi_temp;\n", o->prefix);
	fprintf(out, "\tscgi_temp_path %s/scgi_temp;\n\n", o->prefix);
	/* Responses of the workers, error statuses included, pass through untouched. */
	fprintf(out, "\tfastcgi_intercept_errors off;\n");
	if (o->profile == NGINX_TUNED)
		nginx_write_tuned_fastcgi(out, h);
	fprintf(out, "\n");
}

/* The pool's address as nginx spells it: unix:RUNDIR/NAME.sock or ADDR:PORT. */
static void
nginx_write_addr(FILE *out, const struct conf_endpoint *ep, const struct nginx_opts *o)
{
	if (ep->tcp != NULL)
		fprintf(out, "%s", ep->tcp);
	else
		fprintf(out, "unix:%s/%s.sock", o->rundir, ep->name);
}

/*
 * How many times an upstream block lists its pool, which is how many times nginx may try a
 * GET (each try takes an entry not yet tried).  When a worker dies, the request it was
 * serving fails, and so may the next tries: nginx picks kept-alive connections first, and
 * the dead worker's other idle connections can still look alive until nginx reads their
 * EOF.  A worker holds any number of them (none is bound to a thread: serve.c), but an
 * nginx worker caches at most K, so K + 1 tries always reach a connection that is not the
 * dead worker's (without keepalive the first retry opens a fresh connection, accepted by
 * a live worker).  Two tries more, so that a GET is still answered when the worker that
 * accepted its fresh connection dies too: with workers killed 17 times a second,
 * test_fault_kill's GETs failed so about once in 5,000 on a 2-core machine.
 */
static int
nginx_upstream_tries(int k)
{
	return (k < 1 ? 1 : k + 1) + 2;
}

/* One upstream block (tuned profile), for the pool pl. */
static void
nginx_write_upstream(FILE *out, const struct proxy_pool *pl, const struct nginx_opts *o,
    const struct nginx_hosts *h, int w)
{
	const struct conf_endpoint *ep = pl->ep;
	int n;

	proxy_write_capacity(out, &nginx_dialect, pl, w, pl->forced ? "forced " : pl->lb ?
	    "worker_connections / 2 = " : "floor(C / 2W) = ");
	if (pl->lb)
		fprintf(out, "\t# (a load balancer keeps every connection it opens to the app "
		    "hosts: one it closed\n\t# would wait 60 s in TIME_WAIT, and ports to a host "
		    "run out at ~470 a second)\n");
	proxy_write_over(out, &nginx_dialect, pl, w);
	if (pl->conns < 1)
		fprintf(out, "\t# K < 1: no keepalive for this endpoint.\n");
	/*
	 * The pool is listed several times: with a single server nginx never retries, so a
	 * GET caught by a worker's death would fail; with n entries, fastcgi_next_upstream
	 * sends it again up to n - 1 times (see nginx_upstream_tries(); POST and other
	 * non-idempotent requests are still never retried).  max_fails=0: a failure never
	 * takes the pool out of rotation.
	 */
	fprintf(out, "\tupstream sluice_%s {\n", ep->name);
	if (h->n >= 2) {
		/*
		 * One entry per app host, the port of tcp= (the same on every host).  A
		 * worker's death on one host sends the GET to another host; two failed
		 * tries within 5 s take a host out of rotation for 5 s.
		 */
		for (int i = 0; i < h->n; i++)
			fprintf(out, "\t\tserver %s%s max_fails=2 fail_timeout=5s;\n",
			    h->addr[i], strrchr(ep->tcp, ':'));
	} else {
		/*
		 * One app host (-H with one address) is the single-host case at that
		 * address, its entries counted from the single-host K (a worker's death is
		 * retried on the same pool, as on one host).
		 */
		n = nginx_upstream_tries(pl->lb ? pl->fair : pl->conns);
		for (int i = 0; i < n; i++) {
			fprintf(out, "\t\tserver ");
			if (h->n == 1)
				fprintf(out, "%s%s", h->addr[0], strrchr(ep->tcp, ':'));
			else
				nginx_write_addr(out, ep, o);
			fprintf(out, " max_fails=0;\n");
		}
	}
	if (pl->conns >= 1)
		fprintf(out, "\t\tkeepalive %d;\n", pl->conns);
	fprintf(out, "\t}\n\n");
}

/*
 * An endpoint's rate= as a zone of limit_req, sluice_rate_NAME: keyed by the client's
 * address, or (rate_by=token) by its Authorization header, its address when it sends
 * none.  10 MB of zone keeps some 80,000 clients' states (nginx drops the oldest when it
 * is full).
 */
static void
nginx_write_rate_zone(FILE *out, const struct conf_endpoint *ep)
{
	const char *key = "$binary_remote_addr";

	if (ep->rate == 0)
		return;
	if (ep->rate_token) {
		fprintf(out, "\tmap $http_authorization $sluice_rate_%s {\n\t\t\"\" "
		    "$binary_remote_addr;\n\t\tdefault $http_authorization;\n\t}\n", ep->name);
		key = NULL;
	}
	fprintf(out, "\tlimit_req_zone %s%s zone=sluice_rate_%s:10m rate=%dr/%c;\n",
	    key != NULL ? key : "$sluice_rate_", key != NULL ? "" : ep->name, ep->name,
	    ep->rate, ep->rate_unit);
}

/* The endpoint's limit in its location: past it nginx answers 429 (its JSON error page,
 * with Retry-After), without queueing what the burst lets through. */
static void
nginx_write_rate_limit(FILE *out, const struct conf_endpoint *ep)
{
	if (ep->rate == 0)
		return;
	fprintf(out, "\t\t\tlimit_req zone=sluice_rate_%s burst=%d nodelay;\n"
	    "\t\t\tlimit_req_status 429;\n\t\t\tlimit_req_log_level warn;\n", ep->name,
	    ep->burst >= 0 ? ep->burst : ep->rate);
}

/*
 * A stream=1 endpoint's responses (Server-Sent Events) pass through as they come, not
 * buffered until the response ends, and an open stream is cut only when nothing came for
 * longer than its heartbeats' longest interval (SLUICE_REALTIME_HEARTBEAT_MS, at most
 * 30 s) and then some.
 */
static void
nginx_write_stream(FILE *out, const struct conf_endpoint *ep)
{
	if (!ep->stream)
		return;
	fprintf(out, "\t\t\t# stream=1: Server-Sent Events, passed on as they come; a "
	    "stream\n\t\t\t# sends a heartbeat at least every 30 s.\n"
	    "\t\t\tfastcgi_buffering off;\n\t\t\tfastcgi_read_timeout %ds;\n"
	    "\t\t\tgzip off;\n", NGINX_STREAM_READ_TIMEOUT);
}

static void
nginx_write_location(FILE *out, const struct proxy_pool *pl, const struct nginx_opts *o)
{
	const struct conf_endpoint *ep = pl->ep;

	fprintf(out, "\t\tlocation %s%s {\n", ep->exact ? "= " : "", ep->path);
	nginx_write_rate_limit(out, ep);
	nginx_write_stream(out, ep);
	if (o->profile == NGINX_TUNED) {
		fprintf(out, "\t\t\tfastcgi_pass sluice_%s;\n", ep->name);
		if (pl->conns >= 1)
			fprintf(out, "\t\t\tfastcgi_keep_conn on;\n");
	} else {
		fprintf(out, "\t\t\tfastcgi_pass ");
		nginx_write_addr(out, ep, o);
		fprintf(out, ";\n");
	}
	fprintf(out, "\t\t}\n");
}

/* Splits and checks o->hosts into h; 0, or -1 (logged). */
static int
nginx_hosts_parse(const struct conf *c, const struct nginx_opts *o, struct nginx_hosts *h)
{
	const char *s = o->hosts, *end;
	struct in_addr a;
	size_t len, i;

	h->n = 0;
	if (s == NULL)
		return 0;
	if (o->profile != NGINX_TUNED) {
		log_err("nginx: app hosts need the tuned profile (upstreams with retries)");
		return -1;
	}
	for (;;) {
		end = strchr(s, ',');
		len = end != NULL ? (size_t)(end - s) : strlen(s);
		if (h->n == NGINX_HOSTS_MAX) {
			log_err("nginx: more than %d app hosts", NGINX_HOSTS_MAX);
			return -1;
		}
		if (len == 0 || len >= sizeof(h->addr[0])) {
			log_err("nginx: app hosts: want dotted IPv4 addresses separated by commas");
			return -1;
		}
		memcpy(h->addr[h->n], s, len);
		h->addr[h->n][len] = '\0';
		if (inet_pton(AF_INET, h->addr[h->n], &a) != 1) {
			log_err("nginx: app host '%s' is not a dotted IPv4 address", h->addr[h->n]);
			return -1;
		}
		for (int j = 0; j < h->n; j++)
			if (strcmp(h->addr[j], h->addr[h->n]) == 0) {
				log_err("nginx: app host %s given twice", h->addr[j]);
				return -1;
			}
		h->n++;
		if (end == NULL)
			break;
		s = end + 1;
	}
	for (i = 0; i < c->neps; i++)
		if (c->eps[i].tcp == NULL) {
			log_err("nginx: endpoint %s has no tcp= port: a load balancer cannot reach "
			    "its unix socket on the app hosts", c->eps[i].name);
			return -1;
		}
	return 0;
}

/* What is pasted into nginx.conf, checked; 0, or -1 (logged). */
static int
nginx_check(const struct conf *c, const struct nginx_opts *o, const char *listen)
{
	const struct proxy_dialect *d = &nginx_dialect;

	if (!proxy_safe(d, "RUNDIR", o->rundir) || !proxy_safe(d, "prefix", o->prefix) ||
	    !proxy_safe(d, "listen", listen) ||
	    (o->user != NULL && !proxy_safe(d, "user", o->user)) ||
	    (o->group != NULL && !proxy_safe(d, "group", o->group)))
		return -1;
	if (o->rundir[0] != '/' || o->prefix[0] != '/') {
		log_err("nginx: RUNDIR and prefix must be absolute paths");
		return -1;
	}
	return proxy_sockets_fit(d, c, o->rundir);
}

static void
nginx_write_header(FILE *out, const struct conf *c, const struct nginx_opts *o,
    const struct nginx_hosts *h)
{
	fprintf(out, "# nginx.conf, profile %s, generated by `sluiced nginx %s` from %s.\n",
	    nginx_profile_names[o->profile], nginx_profile_names[o->profile], c->path);
	fprintf(out, "# Do not edit: change the endpoint list and generate again.\n");
	fprintf(out, "# Run: nginx -p %s -c %s/nginx.conf (%s/logs must exist).\n",
	    o->prefix, o->prefix, o->prefix);
	if (o->comment != NULL)
		fprintf(out, "# %s\n", o->comment);
	if (h->n > 0)
		fprintf(out, "# Load balancer for the app hosts %s (-H): every pool on each of "
		    "them over TCP.\n", o->hosts);
	fprintf(out, "\n");
}

/* The headers of the answers nginx makes itself (its error pages, the 404 of unknown
 * paths). */
static const char nginx_own_headers[] =
    "\t\t\tadd_header X-Content-Type-Options nosniff always;\n"
    "\t\t\tadd_header X-Request-Id $sluice_request_id always;\n";

/* The server block: the listen line, the parameters, the locations and the error pages. */
static void
nginx_write_server(FILE *out, const struct proxy *p, const struct nginx_opts *o,
    const char *listen)
{
	size_t i;

	/*
	 * nginx's own backlog is 511: 1000 clients connecting at once (wrk's start) overflow
	 * it, and each dropped SYN is retried after 1 s and again after 3 s, which wrk counts
	 * as timeouts (docs/benchmarks.md, "nginx's accept queue").  Both profiles, as
	 * Apache's ListenBacklog; the tuned one with a socket per worker (reuseport: see
	 * multi_accept above).
	 */
	fprintf(out, "\tserver {\n\t\tlisten %s backlog=%d%s;\n\t\tserver_name localhost;\n\n",
	    listen, NGINX_LISTEN_BACKLOG, o->profile == NGINX_TUNED ? " reuseport" : "");
	/* Every answer is JSON (or what an endpoint declares): browsers must not sniff. */
	fprintf(out, "\t\tadd_header X-Content-Type-Options nosniff always;\n\n");
	fprintf(out, "\t\t# The CGI parameters every endpoint receives (inherited by the "
	    "locations).\n");
	nginx_write_params(out, "\t\t");
	/*
	 * The pages are internal locations with a URI, not named ones: nginx refuses a
	 * request line too long (414) or malformed (400) before it has a URI, and a redirect
	 * to a named location then fails with "empty URI" and a 500 in HTML.
	 */
	fprintf(out, "\n\t\t# nginx's own errors answer JSON like the endpoints do.\n");
	for (i = 0; i < proxy_nerrors; i++)
		if (proxy_errors[i].servers & PROXY_NGINX)
			fprintf(out, "\t\terror_page %d /.sluice-error/%d;\n",
			    proxy_errors[i].status, proxy_errors[i].status);
	fprintf(out, "\n");
	for (i = 0; i < p->npools; i++)
		nginx_write_location(out, &p->pools[i], o);
	/*
	 * nginx's own answers name the request too: a location's add_header replaces the
	 * server's, so each repeats nosniff.  The workers' answers carry the header of the
	 * worker (common/resp.c), the same id.
	 */
	if (!p->root_prefix)
		fprintf(out, "\t\tlocation / {\n%s\t\t\treturn 404 '%s';\n\t\t}\n",
		    nginx_own_headers, proxy_error_body(404, PROXY_ANY));
	for (i = 0; i < proxy_nerrors; i++)
		if (proxy_errors[i].servers & PROXY_NGINX)
			fprintf(out, "\t\tlocation = /.sluice-error/%d {\n\t\t\tinternal;\n"
			    "\t\t\tdefault_type application/json;\n%s%s"
			    "\t\t\treturn %d '%s';\n\t\t}\n", proxy_errors[i].status,
			    nginx_own_headers, proxy_errors[i].status == 429 ?
			    "\t\t\tadd_header Retry-After 1 always;\n" : "",
			    proxy_errors[i].answer, proxy_errors[i].body);
	fprintf(out, "\t}\n");
}

/*
 * set nginx_status PORT: nginx's stub_status for sluiced (stubstatus.h), in a server of its
 * own on 127.0.0.1:PORT rather than a location of the public server, so that no listen
 * address of the API ever answers it, whatever the public listen is (a location on an
 * internal path of a listener on 0.0.0.0 would rest on the allow list alone).  allow
 * 127.0.0.1 on top: a client on another loopback address of this host is refused too.
 * Anything but STUBSTATUS_PATH is 404; no access log line per scrape.
 */
static void
nginx_write_status_server(FILE *out, const struct conf *c)
{
	fprintf(out, "\n\t# nginx's stub_status for sluiced's /metrics (set nginx_status): "
	    "loopback only,\n\t# never the public listener.\n");
	fprintf(out, "\tserver {\n\t\tlisten 127.0.0.1:%d;\n\t\tserver_name localhost;\n"
	    "\t\taccess_log off;\n\t\tallow 127.0.0.1;\n\t\tdeny all;\n", c->nginx_status_port);
	fprintf(out, "\t\tlocation = %s {\n\t\t\tstub_status;\n\t\t}\n", STUBSTATUS_PATH);
	fprintf(out, "\t\tlocation / {\n\t\t\treturn 404 '%s';\n\t\t}\n\t}\n",
	    proxy_error_body(404, PROXY_ANY));
}

/* 1 when the public listen (ADDR:PORT, PORT, [v6]:PORT or unix:PATH) has port's number. */
static int
nginx_listen_port_is(const char *listen, int port)
{
	const char *colon = strrchr(listen, ':'), *ps = colon != NULL ? colon + 1 : listen;
	char want[16];

	if (strncmp(listen, "unix:", 5) == 0)
		return 0;
	(void)snprintf(want, sizeof(want), "%d", port);
	return strcmp(ps, want) == 0;
}

int
nginx_conf_write(FILE *out, const struct conf *c, const struct nginx_opts *o)
{
	struct nginx_hosts *h = NULL;
	struct proxy p;
	const char *listen = o->listen != NULL ? o->listen : c->listen;
	int w, rc = -1;
	size_t i;

	memset(&p, 0, sizeof(p));
	if (nginx_check(c, o, listen) == -1)
		goto out;
	if (c->nginx_status_port != 0 && nginx_listen_port_is(listen, c->nginx_status_port)) {
		log_err("nginx: listen %s and nginx_status %d share a port: the API would answer "
		    "the status", listen, c->nginx_status_port);
		goto out;
	}
	if ((h = calloc(1, sizeof(*h))) == NULL) {
		log_err("nginx: out of memory");
		goto out;
	}
	if (nginx_hosts_parse(c, o, h) == -1)
		goto out;
	w = nginx_workers_resolve(c, o);
	/* A load balancer keeps worker_connections / 2 to each pool, past rule 2's K. */
	if (proxy_model(&p, &nginx_dialect, c, w, o->keepalive,
	    h->n >= 1 ? nginx_lb_keepalive() : 0) == -1)
		goto out;

	nginx_write_header(out, c, o, h);
	nginx_write_main(out, o, w);
	fprintf(out, "http {\n");
	nginx_write_http_common(out, c, o, h);
	for (i = 0; i < c->neps; i++)
		nginx_write_rate_zone(out, &c->eps[i]);
	for (i = 0; o->profile == NGINX_TUNED && i < p.npools; i++)
		nginx_write_upstream(out, &p.pools[i], o, h, w);
	nginx_write_server(out, &p, o, listen);
	if (c->nginx_status_port != 0)
		nginx_write_status_server(out, c);
	fprintf(out, "}\n");
	if (fflush(out) == EOF || ferror(out)) {
		log_err("nginx: write failed");
		goto out;
	}
	rc = 0;
out:
	proxy_free(&p);
	free(h);
	return rc;
}
