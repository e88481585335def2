/*
 * apacheconf.c: see apacheconf.h.  The output is written top to bottom with fprintf; every
 * string pasted into it is checked first (the conf parser already restricts routes and
 * values, the paths given on the command line are checked here), and strings go inside
 * double quotes, which then never need escaping.
 *
 * Why the tuned pool size is M = floor(C / (2P)).  mod_proxy keeps, in every Apache child
 * process, one connection pool per worker (apr_reslist, hard maximum `max`, which defaults
 * to ThreadsPerChild).  With enablereuse=on a connection goes back into that pool after
 * each request and stays open (no ttl is set, and smax defaults to max, so nothing above a
 * soft limit is reaped): a child holds up to M idle connections to the endpoint.  An fcgi2
 * worker thread that accepted such a connection serves only it until Apache closes it
 * (docs/fastcgi.md rule 2), so those idle connections pin up to M threads each.  The event
 * MPM here runs exactly P children: StartServers = ServerLimit = P, MaxRequestWorkers =
 * P x ThreadsPerChild and MaxSpareThreads at that total, so no child is ever stopped for
 * idling and none is added; a gracefully finishing child keeps its scoreboard slot, which
 * ServerLimit counts.  At most P x M connections to the endpoint exist at any time, busy
 * or idle.  Requiring P x M <= C / 2, with C = workers x threads the pool's connection
 * capacity, leaves at least half of the pool's threads free to accept: nothing queues
 * behind a pinned thread, even with every child's pool full of idle connections.  Unlike
 * nginx's keepalive (an idle cache, with extra connections opened past it), `max` also caps
 * the busy connections of a child: a thread beyond M waits inside Apache for a pooled
 * connection (no `acquire` timeout) instead of in the pool's listen backlog.  So tuned
 * Apache uses at most half of each pool at once; give pools the capacity for it (a smax
 * with a ttl cannot lift that safely: connections above smax linger idle for up to ttl,
 * pinning threads meanwhile).  M < 1 (C < 2P) means no reuse for that endpoint.
 * sluice's own workers bind no thread to a connection (common/serve.c), so for them the
 * rule only keeps Apache from holding more connections than the pool can serve; it is
 * kept for any plain fcgi2 program a pool runs (`binary=`, such as bench/hello).
 */
#include <ctype.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "apacheconf.h"
#include "conf.h"
#include "db.h"
#include "log.h"
#include "proxy.h"

#define APACHE_MODULES	"/usr/lib/apache2/modules"
#define APACHE_PCRE	"/usr/lib/x86_64-linux-gnu/libpcre.so.3"

static const char *const apache_profile_names[APACHE__MAX] = {
	"default", "tuned", "cgi", "fcgid"
};

static const struct proxy_dialect apache_dialect = {
	.name = "apache",
	.file = "apache2.conf",
	.unsafe = "\"'\\$%#`<>{}",
	.indent = "",
	.procs = 'P',
	.procs_name = "children",
	.conns = "max M",
	.conns_letter = 'M',
	.forced = "reuse max",
};

int
apache_profile_parse(const char *name)
{
	return proxy_profile_parse(apache_profile_names, APACHE__MAX, name);
}

const char *
apache_profile_name(int profile)
{
	return profile >= 0 && profile < APACHE__MAX ? apache_profile_names[profile] : "?";
}

int
apache_reuse_max(int capacity, int children)
{
	return proxy_fair_conns(capacity, children);
}

int
apache_children_resolve(const struct apache_opts *o)
{
	if (o->children > 0)
		return o->children;
	return proxy_cpus(256);
}

const char *
apache_error_body(int status)
{
	return proxy_error_body(status, PROXY_APACHE);
}

/* The route as an anchored regular expression: exact "^/a\.b$", prefix "^/p/". */
static void
apache_write_regex(FILE *out, const struct conf_endpoint *ep)
{
	const char *p;

	fputc('^', out);
	for (p = ep->path; *p != '\0'; p++) {
		/* Routes hold [A-Za-z0-9/_.~-] only; of these '.' means something in a regex. */
		if (*p == '.')
			fputc('\\', out);
		fputc(*p, out);
	}
	if (ep->exact)
		fputc('$', out);
}

/*
 * The binary an endpoint runs (cgi, fcgid): binary= (relative to cwd) or BINDIR/NAME, into
 * buf; with dir set, only its directory.  Returns -1 when it does not fit.
 */
static int
apache_binary(char *buf, size_t len, const struct conf_endpoint *ep,
    const struct apache_opts *o, int dir)
{
	char *slash;
	int n;

	if (ep->binary == NULL)
		n = snprintf(buf, len, "%s/%s", o->bindir, ep->name);
	else if (ep->binary[0] == '/')
		n = snprintf(buf, len, "%s", ep->binary);
	else
		n = snprintf(buf, len, "%s/%s", o->cwd, ep->binary);
	if (n < 0 || (size_t)n >= len)
		return -1;
	if (dir && (slash = strrchr(buf, '/')) != NULL)
		*(slash == buf ? slash + 1 : slash) = '\0';
	return 0;
}

/*
 * SLUICE_DB for a process that Apache starts: a relative sqlite: path is made absolute,
 * because CGI scripts run in their own directory, not where sluiced would have run them.
 */
static void
apache_write_db(FILE *out, const char *url, const struct apache_opts *o)
{
	enum db_backend be;
	const char *path;

	if (db_url_parse(url, &be, &path) == 0 && be == DB_SQLITE && path[0] != '/')
		fprintf(out, "sqlite:%s/%s", o->cwd, path);
	else
		fprintf(out, "%s", url);
}

/* 1 when an endpoint has a rate= limit. */
static int
apache_any_rate(const struct conf *c)
{
	size_t i;

	for (i = 0; i < c->neps; i++)
		if (c->eps[i].rate > 0)
			return 1;
	return 0;
}

/*
 * The rate= limits, by mod_qos: an event variable QS_Limit_NAME set on the endpoint's
 * requests, counted per client address in a fixed window of a second (r/s) or a minute
 * (r/m): past rate requests in the window, the client's requests to the endpoint are
 * refused with 429 for the window's length.  The conditional form (QS_Cond, the
 * endpoint's name) keeps the refusal to that endpoint: the plain one refuses the client
 * everywhere.  mod_qos has no burst of nginx's kind: its
 * window lets rate requests through at once.  rate_by=token is refused (the generator
 * says so): mod_qos counts client addresses only.
 */
static void
apache_write_rates(FILE *out, const struct conf *c)
{
	const struct conf_endpoint *ep;
	size_t i;

	if (!apache_any_rate(c))
		return;
	fprintf(out, "\n# rate= limits (mod_qos): 429 with the JSON body and Retry-After.\n");
	fprintf(out, "QS_ErrorResponseCode 429\n");
	fprintf(out, "Header always set Retry-After 1 \"expr=%%{REQUEST_STATUS} == 429\"\n");
	for (i = 0; i < c->neps; i++) {
		ep = &c->eps[i];
		if (ep->rate == 0)
			continue;
		fprintf(out, "SetEnvIf Request_URI \"");
		apache_write_regex(out, ep);
		fprintf(out, "\" QS_Limit_%s=1 QS_Cond=%s\n", ep->name, ep->name);
		fprintf(out, "QS_CondClientEventLimitCount %d %d QS_Limit_%s ^%s$\n", ep->rate,
		    ep->rate_unit == 'm' ? 60 : 1, ep->name, ep->name);
	}
}

static void
apache_write_modules(FILE *out, const struct conf *c, const struct apache_opts *o)
{
	static const char *const common[] = { "mpm_event", "authz_core", "alias", "setenvif",
	    "unique_id" };
	size_t i;

	fprintf(out, "# Modules, from Debian's apache2 package (log_config and unixd are built "
	    "in).\n");
	for (i = 0; i < sizeof(common) / sizeof(common[0]); i++)
		fprintf(out, "LoadModule %s_module %s/mod_%s.so\n", common[i], APACHE_MODULES,
		    common[i]);
	switch (o->profile) {
	case APACHE_DEFAULT:
	case APACHE_TUNED:
		fprintf(out, "LoadModule proxy_module %s/mod_proxy.so\n", APACHE_MODULES);
		fprintf(out, "LoadModule proxy_fcgi_module %s/mod_proxy_fcgi.so\n",
		    APACHE_MODULES);
		break;
	case APACHE_CGI:
		fprintf(out, "LoadModule env_module %s/mod_env.so\n", APACHE_MODULES);
		fprintf(out, "LoadModule cgid_module %s/mod_cgid.so\n", APACHE_MODULES);
		break;
	case APACHE_FCGID:
		fprintf(out, "LoadModule fcgid_module %s/mod_fcgid.so\n", APACHE_MODULES);
		break;
	default:
		break;
	}
	if (apache_any_rate(c)) {
		/*
		 * rate=: mod_qos from Debian's libapache2-mod-qos, Retry-After by mod_headers.
		 * Debian 12's mod_qos calls PCRE (pcre_exec, pcre_free) by name from the server
		 * it loads into, which links PCRE2 since 2.4.62: libpcre.so.3 (a dependency of
		 * the package) loaded first gives it them.
		 */
		fprintf(out, "LoadFile %s\n", APACHE_PCRE);
		fprintf(out, "LoadModule qos_module %s/mod_qos.so\n", APACHE_MODULES);
		fprintf(out, "LoadModule headers_module %s/mod_headers.so\n", APACHE_MODULES);
	}
	fprintf(out, "\n");
}

static void
apache_write_main(FILE *out, const struct conf *c, const struct apache_opts *o, int p)
{
	const char *listen = o->listen != NULL ? o->listen : APACHE_LISTEN_DEFAULT;

	fprintf(out, "ServerRoot \"%s\"\n", o->prefix);
	fprintf(out, "PidFile \"%s/apache2.pid\"\n", o->prefix);
	fprintf(out, "DefaultRuntimeDir \"%s/runtime\"\n", o->prefix);
	fprintf(out, "Mutex file:%s/runtime default\n", o->prefix);
	fprintf(out, "ErrorLog \"%s/logs/error.log\"\n", o->prefix);
	fprintf(out, "LogLevel warn\n");
	fprintf(out, "ServerName localhost\n");
	fprintf(out, "Listen %s\n", listen);
	if (o->user != NULL) {
		fprintf(out, "# Apache is started as root: its children run as the user that "
		    "can reach RUNDIR\n# (see supervisor/apache.c); as a non-root user these "
		    "lines are ignored.\n");
		fprintf(out, "User %s\nGroup %s\n", o->user, o->group);
	}
	fprintf(out, "\n");
	apache_write_modules(out, c, o);

	if (o->profile == APACHE_DEFAULT) {
		fprintf(out, "# Debian's stock event MPM settings (mods-available/mpm_event.conf) "
		    "and apache2.conf.\n");
		fprintf(out, "<IfModule mpm_event_module>\n\tStartServers 2\n"
		    "\tMinSpareThreads 25\n\tMaxSpareThreads 75\n\tThreadLimit 64\n"
		    "\tThreadsPerChild 25\n\tMaxRequestWorkers 150\n"
		    "\tMaxConnectionsPerChild 0\n</IfModule>\n");
		fprintf(out, "Timeout 300\nKeepAlive On\nMaxKeepAliveRequests 100\n"
		    "KeepAliveTimeout 5\n");
		/*
		 * The one departure from Debian's stock files (ListenBacklog 511), like the
		 * nginx default profile's worker_connections: 1000 clients connecting at
		 * once would otherwise overflow the backlog and measure SYN retries.
		 */
		fprintf(out, "# Debian's default backlog is 511, too few for 1000 clients.\n");
		fprintf(out, "ListenBacklog 4096\n");
		fprintf(out, "LogFormat \"%%h %%l %%u %%t \\\"%%r\\\" %%>s %%O\" common\n");
		fprintf(out, "CustomLog \"%s/logs/access.log\" common\n\n", o->prefix);
		return;
	}
	fprintf(out, "# Exactly P = %d children of %d threads: none is added or stopped, so "
	    "P bounds\n# the per-child connection pools of the tuned profile.\n", p,
	    APACHE_TUNED_THREADS);
	fprintf(out, "<IfModule mpm_event_module>\n\tServerLimit %d\n\tStartServers %d\n"
	    "\tThreadLimit %d\n\tThreadsPerChild %d\n\tMaxRequestWorkers %d\n"
	    "\tMinSpareThreads %d\n\tMaxSpareThreads %d\n\tMaxConnectionsPerChild 0\n"
	    "</IfModule>\n", p, p, APACHE_TUNED_THREADS, APACHE_TUNED_THREADS,
	    p * APACHE_TUNED_THREADS, APACHE_TUNED_THREADS, p * APACHE_TUNED_THREADS);
	fprintf(out, "Timeout 60\nKeepAlive On\nMaxKeepAliveRequests 0\nKeepAliveTimeout 65\n");
	fprintf(out, "ListenBacklog 4096\nServerTokens Prod\n");
	fprintf(out, "# No access log: only errors, at warn.\n\n");
	(void)c;
}

/* Common to every profile: limits, the empty document root, JSON errors, DOCUMENT_URI. */
static void
apache_write_common(FILE *out, const struct conf *c, const struct apache_opts *o)
{
	size_t i;

	fprintf(out, "TraceEnable Off\n");
	fprintf(out, "LimitRequestBody %lld\n", c->body_max);
	fprintf(out, "# Unknown paths fall through to this empty directory: a JSON 404.\n");
	fprintf(out, "DocumentRoot \"%s/htdocs\"\n", o->prefix);
	fprintf(out, "<Directory />\n\tAllowOverride None\n\tRequire all denied\n"
	    "</Directory>\n");
	fprintf(out, "<Directory \"%s/htdocs\">\n\tRequire all granted\n</Directory>\n",
	    o->prefix);
	fprintf(out, "\n# Apache's own errors answer JSON like the endpoints do; the files "
	    "are served only\n# as error documents (a direct request is refused).\n");
	fprintf(out, "Alias /.sluice-errors/ \"%s/errors/\"\n", o->prefix);
	fprintf(out, "<Directory \"%s/errors\">\n\tRequire all granted\n</Directory>\n",
	    o->prefix);
	fprintf(out, "<Location /.sluice-errors/>\n\tSetHandler none\n"
	    "\tForceType application/json\n\t<If \"-z %%{ENV:REDIRECT_STATUS}\">\n"
	    "\t\tRequire all denied\n\t</If>\n</Location>\n");
	for (i = 0; i < proxy_nerrors; i++)
		if (proxy_errors[i].servers & PROXY_APACHE)
			fprintf(out, "ErrorDocument %d /.sluice-errors/%d.json\n",
			    proxy_errors[i].status, proxy_errors[i].status);
	fprintf(out, "\n# The decoded path, as nginx's $document_uri, which the endpoints read "
	    "(req.h).\n");
	fprintf(out, "SetEnvIf Request_URI \"^(.*)$\" DOCUMENT_URI=$1\n");
	apache_write_rates(out, c);
	/*
	 * The request id (common/reqid.h): the client's X-Request-Id when it is 1 to 128
	 * bytes of [A-Za-z0-9._:@-] (what the workers accept), else mod_unique_id's
	 * UNIQUE_ID; the workers read REQUEST_ID first, check both again, and answer the id
	 * in X-Request-Id.
	 */
	fprintf(out, "# The request id: the client's X-Request-Id when well-formed, else "
	    "mod_unique_id's UNIQUE_ID.\n");
	fprintf(out, "SetEnvIf X-Request-Id \"^[A-Za-z0-9._:@-]{1,128}$\" REQUEST_ID=$0\n\n");
}

/* tuned: one mod_proxy worker per endpoint, for the pool pl. */
static void
apache_write_worker(FILE *out, const struct proxy_pool *pl, const struct apache_opts *o,
    int p)
{
	const struct conf_endpoint *ep = pl->ep;

	proxy_write_capacity(out, &apache_dialect, pl, p, pl->forced ? "forced " :
	    "floor(C / 2P) = ");
	proxy_write_over(out, &apache_dialect, pl, p);
	if (ep->tcp != NULL)
		fprintf(out, "<Proxy \"fcgi://%s\">\n", ep->tcp);
	else
		fprintf(out, "<Proxy \"unix:%s/%s.sock|fcgi://sluice_%s\">\n", o->rundir,
		    ep->name, ep->name);
	/*
	 * retry=0: a pool that was briefly unreachable (sluiced restarting) is tried again
	 * at the next request instead of being shunned for mod_proxy's default 60 s.
	 */
	if (pl->conns >= 1)
		fprintf(out, "\tProxySet enablereuse=on max=%d retry=0\n", pl->conns);
	else
		fprintf(out, "\t# M < 1: no reuse for this endpoint.\n"
		    "\tProxySet enablereuse=off retry=0\n");
	fprintf(out, "</Proxy>\n\n");
}

/* Every SLUICE_* key that some endpoint sets, so that each route unsets the others'. */
struct apache_keys {
	const char *key[CONF_EXTRA_MAX * 8];
	size_t n;
};

static void
apache_keys_add(struct apache_keys *k, const char *key)
{
	size_t i;

	for (i = 0; i < k->n; i++)
		if (strcmp(k->key[i], key) == 0)
			return;
	if (k->n < sizeof(k->key) / sizeof(k->key[0]))
		k->key[k->n++] = key;
}

/* 1 when the endpoint's line sets key=value itself. */
static int
apache_ep_extra(const struct conf_endpoint *ep, const char *key)
{
	size_t i;

	for (i = 0; i < ep->nextra; i++)
		if (strcmp(ep->extra[i].key, key) == 0)
			return 1;
	return 0;
}

static int
apache_ep_has(const struct conf_endpoint *ep, const char *key)
{
	/* SLUICE_BODY_MAX is set for every endpoint (the global cap or the endpoint's own). */
	if (strcmp(key, "body_max") == 0)
		return 1;
	if (strcmp(key, "db") == 0)
		return ep->db_url != NULL;
	return apache_ep_extra(ep, key);
}

static void
apache_write_upper(FILE *out, const char *s)
{
	for (; *s != '\0'; s++)
		fputc(toupper((unsigned char)*s), out);
}

/* cgi: the endpoint's environment, as sluiced would give it (supervisor/pool.c). */
static void
apache_write_cgi_env(FILE *out, const struct conf *c, const struct conf_endpoint *ep,
    const struct apache_opts *o, const struct apache_keys *keys)
{
	size_t i;

	fprintf(out, "\tSetEnv SLUICE_NAME %s\n", ep->name);
	if (!apache_ep_extra(ep, "body_max"))
		fprintf(out, "\tSetEnv SLUICE_BODY_MAX %lld\n", c->body_max);
	if (ep->db_url != NULL) {
		fprintf(out, "\tSetEnv SLUICE_DB \"");
		apache_write_db(out, ep->db_url, o);
		fprintf(out, "\"\n");
	}
	for (i = 0; i < ep->nextra; i++) {
		fprintf(out, "\tSetEnv SLUICE_");
		apache_write_upper(out, ep->extra[i].key);
		fprintf(out, " \"%s\"\n", ep->extra[i].value);
	}
	/* A longer route's section merges over a shorter one's: drop what is not ours. */
	for (i = 0; i < keys->n; i++)
		if (!apache_ep_has(ep, keys->key[i])) {
			fprintf(out, "\tUnsetEnv SLUICE_");
			apache_write_upper(out, keys->key[i]);
			fprintf(out, "\n");
		}
}

/* fcgid: the process class of an endpoint, with its environment and process counts. */
static void
apache_write_fcgid_cmd(FILE *out, const struct conf *c, const struct conf_endpoint *ep,
    const struct apache_opts *o)
{
	char bin[4096];
	size_t i;

	/* apache_check() made sure that the path fits. */
	(void)apache_binary(bin, sizeof(bin), ep, o, 0);
	fprintf(out, "# %s: up to %d processes (workers=%d), one request at a time each.\n",
	    ep->name, ep->workers, ep->workers);
	fprintf(out, "FcgidCmdOptions \"%s\" \\\n\tMaxProcesses %d MinProcesses 0 "
	    "IdleTimeout 300 IOTimeout 60 \\\n\tInitialEnv SLUICE_NAME=%s "
	    "InitialEnv SLUICE_THREADS=1", bin, ep->workers, ep->name);
	/* One entry per name: the process would see only the first of two. */
	if (!apache_ep_extra(ep, "body_max"))
		fprintf(out, " \\\n\tInitialEnv SLUICE_BODY_MAX=%lld", c->body_max);
	if (ep->db_url != NULL) {
		fprintf(out, " \\\n\tInitialEnv \"SLUICE_DB=");
		apache_write_db(out, ep->db_url, o);
		fprintf(out, "\"");
	}
	for (i = 0; i < ep->nextra; i++) {
		fprintf(out, " \\\n\tInitialEnv \"SLUICE_");
		apache_write_upper(out, ep->extra[i].key);
		fprintf(out, "=%s\"", ep->extra[i].value);
	}
	fprintf(out, "\n");
}

static void
apache_write_route(FILE *out, const struct conf *c, const struct conf_endpoint *ep,
    const struct apache_opts *o, const struct apache_keys *keys)
{
	const char *tag = ep->exact ? "LocationMatch" : "Location";

	/*
	 * A streaming endpoint (stream=1) holds its requests open in one event loop
	 * (common/evfcgi.h): the cgi and fcgid profiles cannot run it at all (a process per
	 * request), the default profile's SetHandler has no worker to set flushpackets=on
	 * on, and mod_proxy_fcgi would otherwise buffer its events; and it relays each
	 * response on one of Apache's threads to its end, so every open stream would hold
	 * one (MaxRequestWorkers would cap the subscribers).  It is left out, and served
	 * behind nginx only (docs/records.md, "Realtime").
	 */
	if (ep->stream) {
		fprintf(out, "# %s (stream=1): served behind nginx only, left out here.\n",
		    ep->name);
		return;
	}
	if (ep->exact) {
		fprintf(out, "<LocationMatch \"");
		apache_write_regex(out, ep);
		fprintf(out, "\">\n");
	} else {
		fprintf(out, "<Location \"%s\">\n", ep->path);
	}
	switch (o->profile) {
	case APACHE_DEFAULT:
		/* A pool on TCP (tcp=ADDR:PORT) is reached there instead of its socket. */
		if (ep->tcp != NULL)
			fprintf(out, "\tSetHandler \"proxy:fcgi://%s\"\n", ep->tcp);
		else
			fprintf(out, "\tSetHandler \"proxy:unix:%s/%s.sock|fcgi://localhost\"\n",
			    o->rundir, ep->name);
		break;
	case APACHE_TUNED:
		if (ep->tcp != NULL)
			fprintf(out, "\tSetHandler \"proxy:fcgi://%s\"\n", ep->tcp);
		else
			fprintf(out, "\tSetHandler \"proxy:fcgi://sluice_%s\"\n", ep->name);
		break;
	case APACHE_CGI:
		fprintf(out, "\tSetHandler cgi-script\n\tOptions +ExecCGI\n");
		apache_write_cgi_env(out, c, ep, o, keys);
		break;
	case APACHE_FCGID:
		fprintf(out, "\tSetHandler fcgid-script\n\tOptions +ExecCGI\n");
		break;
	default:
		break;
	}
	fprintf(out, "</%s>\n", tag);
}

/* cgi, fcgid: the URL-to-binary mapping (first match wins, so most specific first). */
static void
apache_write_alias(FILE *out, const struct conf_endpoint *ep, const struct apache_opts *o)
{
	char bin[4096];

	(void)apache_binary(bin, sizeof(bin), ep, o, 0);
	fprintf(out, "AliasMatch \"");
	apache_write_regex(out, ep);
	/* A prefix route's remainder becomes PATH_INFO behind the binary's own path. */
	fprintf(out, "%s\" \"%s%s\"\n", ep->exact ? "" : "(.*)$", bin, ep->exact ? "" : "/$1");
}

/* What is pasted into apache2.conf, checked; 0, or -1 (logged). */
static int
apache_check(const struct conf *c, const struct apache_opts *o)
{
	const struct proxy_dialect *d = &apache_dialect;
	const char *listen = o->listen != NULL ? o->listen : APACHE_LISTEN_DEFAULT;
	char bin[4096], other[4096];
	size_t i, j;

	if (!proxy_safe(d, "RUNDIR", o->rundir) || !proxy_safe(d, "prefix", o->prefix) ||
	    !proxy_safe(d, "bin dir", o->bindir) || !proxy_safe(d, "working directory", o->cwd) ||
	    !proxy_safe(d, "listen", listen) ||
	    (o->user != NULL && !proxy_safe(d, "user", o->user)) ||
	    (o->user != NULL && !proxy_safe(d, "group", o->group)))
		return -1;
	if (o->rundir[0] != '/' || o->prefix[0] != '/' || o->bindir[0] != '/' ||
	    o->cwd[0] != '/') {
		log_err("apache: RUNDIR, prefix, bin dir and working directory must be "
		    "absolute paths");
		return -1;
	}
	if (proxy_sockets_fit(d, c, o->rundir) == -1)
		return -1;
	for (i = 0; i < c->neps; i++) {
		const struct conf_endpoint *ep = &c->eps[i];

		if ((ep->binary != NULL && !proxy_safe(d, "binary", ep->binary)) ||
		    (ep->tcp != NULL && !proxy_safe(d, "tcp", ep->tcp)) ||
		    (ep->db_url != NULL && !proxy_safe(d, "db URL", ep->db_url)))
			return -1;
		for (j = 0; j < ep->nextra; j++)
			if (!proxy_safe(d, "value", ep->extra[j].value))
				return -1;
		if (ep->rate_token) {
			log_err("apache: endpoint %s: rate_by=token needs nginx (mod_qos counts "
			    "client addresses only); write rate_by=addr or leave it out",
			    ep->name);
			return -1;
		}
		if (ep->stream)
			log_warn("apache: endpoint %s: stream=1 is served behind nginx only; "
			    "left out of Apache's configuration", ep->name);
		if (apache_binary(bin, sizeof(bin), ep, o, 0) == -1) {
			log_err("apache: %s: binary path too long", ep->name);
			return -1;
		}
		/* mod_fcgid tells process classes apart by the binary alone. */
		for (j = 0; o->profile == APACHE_FCGID && j < i; j++)
			if (apache_binary(other, sizeof(other), &c->eps[j], o, 0) == 0 &&
			    strcmp(bin, other) == 0) {
				log_err("apache: fcgid: %s and %s run the same binary; mod_fcgid "
				    "cannot give them different settings", c->eps[j].name,
				    ep->name);
				return -1;
			}
	}
	return 0;
}

/* The file's first lines: what made it, how to run it, what the profile is. */
static void
apache_write_header(FILE *out, const struct conf *c, const struct apache_opts *o)
{
	static const char *const what[APACHE__MAX] = {
		[APACHE_DEFAULT] = "# mod_proxy_fcgi to sluiced's sockets, a new connection "
		    "per request.\n",
		[APACHE_TUNED] = "# mod_proxy_fcgi with connection reuse: per endpoint, P "
		    "children x max M <= C / 2\n# (the derivation is at the top of "
		    "supervisor/apacheconf.c).\n",
		[APACHE_CGI] = "# Plain CGI through mod_cgid: one process per request (fork, "
		    "exec, database\n# connect each time); no sluiced.  For shared hosting and "
		    "comparison.\n",
		[APACHE_FCGID] = "# mod_fcgid starts and stops the endpoint binaries itself; no "
		    "sluiced.\n# Trade-offs against sluiced: processes start on demand (the "
		    "first requests wait\n# for a spawn and its database connection), one "
		    "request at a time per process\n# (threads= is ignored), idle processes are "
		    "stopped after IdleTimeout, and\n# there is no crash-loop detection, no "
		    "reload without a lost spawn, no status.\n# Request bodies are buffered "
		    "whole by Apache before the binary sees them.\n",
	};

	fprintf(out, "# apache2.conf, profile %s, generated by `sluiced apache %s` from %s.\n",
	    apache_profile_names[o->profile], apache_profile_names[o->profile], c->path);
	fprintf(out, "# Do not edit: change the endpoint list and generate again.\n");
	fprintf(out, "# Run: apache2 -f %s/apache2.conf -DFOREGROUND\n", o->prefix);
	fprintf(out, "# (%s/logs, runtime, htdocs and errors must exist; sluiced's -o makes "
	    "them).\n", o->prefix);
	fputs(what[o->profile], out);
	if (o->comment != NULL)
		fprintf(out, "# %s\n", o->comment);
	fprintf(out, "\n");
}

/* The profile's own section before the common one: tuned's workers, cgi's socket,
 * fcgid's process classes (default has none: the handler alone, as the documentation
 * shows it). */
static void
apache_write_backends(FILE *out, const struct conf *c, const struct apache_opts *o,
    const struct proxy *p)
{
	size_t i;

	switch (o->profile) {
	case APACHE_TUNED:
		for (i = 0; i < p->npools; i++)
			apache_write_worker(out, &p->pools[i], o, p->procs);
		break;
	case APACHE_CGI:
		fprintf(out, "ScriptSock \"%s/runtime/cgid.sock\"\n\n", o->prefix);
		break;
	case APACHE_FCGID:
		fprintf(out, "FcgidIPCDir \"%s/fcgid\"\n", o->prefix);
		fprintf(out, "FcgidProcessTableFile \"%s/fcgid/shm\"\n", o->prefix);
		fprintf(out, "FcgidMaxRequestLen %lld\nFcgidMaxRequestInMem 65536\n",
		    c->body_max);
		fprintf(out, "FcgidMaxRequestsPerProcess 0\nFcgidConnectTimeout 20\n\n");
		for (i = 0; i < c->neps; i++)
			apache_write_fcgid_cmd(out, c, &c->eps[i], o);
		fprintf(out, "\n");
		break;
	default:
		break;
	}
}

/* cgi, fcgid: the URL-to-binary mapping and the binaries' directories. */
static void
apache_write_binaries(FILE *out, const struct proxy *p, const struct apache_opts *o)
{
	char dir[4096];
	size_t i;

	fprintf(out, "# URL to binary, most specific route first (the first match wins).\n");
	for (i = p->npools; i-- > 0;)
		if (!p->routes[i]->stream)
			apache_write_alias(out, p->routes[i], o);
	/* The binaries' directories (one section per endpoint; repeats are harmless). */
	for (i = 0; i < p->npools; i++) {
		(void)apache_binary(dir, sizeof(dir), p->routes[i], o, 1);
		fprintf(out, "<Directory \"%s\">\n\tRequire all granted\n</Directory>\n", dir);
	}
	fprintf(out, "\n");
}

int
apache_conf_write(FILE *out, const struct conf *c, const struct apache_opts *o)
{
	struct apache_keys keys;
	struct proxy p;
	int rc = -1;
	size_t i, j;

	memset(&p, 0, sizeof(p));
	if (o->profile < 0 || o->profile >= APACHE__MAX) {
		log_err("apache: unknown profile");
		goto out;
	}
	if (apache_check(c, o) == -1 ||
	    proxy_model(&p, &apache_dialect, c, apache_children_resolve(o), o->reuse, 0) == -1)
		goto out;
	memset(&keys, 0, sizeof(keys));
	for (i = 0; i < c->neps; i++) {
		if (c->eps[i].db_url != NULL)
			apache_keys_add(&keys, "db");
		for (j = 0; j < c->eps[i].nextra; j++)
			apache_keys_add(&keys, c->eps[i].extra[j].key);
	}

	apache_write_header(out, c, o);
	apache_write_main(out, c, o, p.procs);
	apache_write_backends(out, c, o, &p);
	apache_write_common(out, c, o);
	if (o->profile == APACHE_CGI || o->profile == APACHE_FCGID)
		apache_write_binaries(out, &p, o);
	fprintf(out, "# The routes, least specific first (the last matching section wins).\n");
	for (i = 0; i < p.npools; i++)
		apache_write_route(out, c, p.routes[i], o, &keys);
	if (fflush(out) == EOF || ferror(out)) {
		log_err("apache: write failed");
		goto out;
	}
	rc = 0;
out:
	proxy_free(&p);
	return rc;
}

int
apache_error_files_write(const char *prefix)
{
	char path[4096];
	FILE *f;
	size_t i;
	int n;

	for (i = 0; i < proxy_nerrors; i++) {
		if (!(proxy_errors[i].servers & PROXY_APACHE))
			continue;
		n = snprintf(path, sizeof(path), "%s/errors/%d.json", prefix,
		    proxy_errors[i].status);
		if (n < 0 || (size_t)n >= sizeof(path)) {
			log_err("apache: %s/errors: path too long", prefix);
			return -1;
		}
		if ((f = fopen(path, "w")) == NULL) {
			log_err("apache: %s: %s", path, strerror(errno));
			return -1;
		}
		fputs(proxy_errors[i].body, f);
		if (fclose(f) == EOF) {
			log_err("apache: %s: write failed", path);
			return -1;
		}
	}
	return 0;
}
