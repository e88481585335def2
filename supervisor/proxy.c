/*
 * proxy.c: see proxy.h.  The model of the proxy computed once from the endpoint list, and
 * the checks and comments both dialects write the same way.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <sys/un.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"
#include "proxy.h"

#define PROXY_BODY(code, message) \
	"{\"code\":\"" code "\",\"message\":\"" message "\",\"details\":null,\"hint\":null}"
#define PROXY_ERROR(status, answer, code, message, servers) \
	{ status, answer, code, message, PROXY_BODY(code, message), servers }

/*
 * The JSON bodies the proxy itself answers with; no quotes or backslashes inside values.
 * The 4xx cover what the server refuses before any worker sees the request (a malformed
 * request, a request line over 8 KiB, a header over 8 KiB, a slow client, a body without a
 * length, a TRACE (405), a Transfer-Encoding other than chunked (501)): every status nginx
 * can answer by itself has a row, so no answer is nginx's HTML page.  Apache answers an
 * unknown path from its empty document root (404); nginx from a location of its own.
 */
const struct proxy_error proxy_errors[] = {
	PROXY_ERROR(400, 400, "bad_request", "malformed request", PROXY_ANY),
	PROXY_ERROR(403, 403, "forbidden", "forbidden", PROXY_ANY),
	PROXY_ERROR(404, 404, "not_found", "no endpoint for this path", PROXY_APACHE),
	PROXY_ERROR(405, 405, "method_not_allowed", "method not allowed", PROXY_ANY),
	PROXY_ERROR(408, 408, "request_timeout", "request not received in time", PROXY_ANY),
	PROXY_ERROR(411, 411, "length_required", "request body without a length",
	    PROXY_NGINX),
	PROXY_ERROR(413, 413, "payload_too_large", "request body too large", PROXY_ANY),
	PROXY_ERROR(414, 414, "uri_too_long", "request line too long", PROXY_ANY),
	PROXY_ERROR(494, 400, "header_too_large", "request header too large", PROXY_NGINX),
	PROXY_ERROR(416, 416, "range_not_satisfiable", "range not satisfiable", PROXY_NGINX),
	PROXY_ERROR(429, 429, "too_many_requests", "too many requests", PROXY_ANY),
	PROXY_ERROR(500, 500, "internal_error", "internal error in the proxy", PROXY_ANY),
	PROXY_ERROR(501, 501, "not_implemented", "not implemented by the proxy", PROXY_ANY),
	PROXY_ERROR(502, 502, "bad_gateway", "endpoint unavailable", PROXY_ANY),
	PROXY_ERROR(503, 503, "unavailable", "service unavailable", PROXY_ANY),
	PROXY_ERROR(504, 504, "gateway_timeout", "endpoint timed out", PROXY_ANY),
	PROXY_ERROR(505, 505, "http_version_not_supported", "HTTP version not supported",
	    PROXY_NGINX),
};
const size_t proxy_nerrors = sizeof(proxy_errors) / sizeof(proxy_errors[0]);

const char *
proxy_error_body(int status, unsigned server)
{
	size_t i;

	for (i = 0; i < proxy_nerrors; i++)
		if (proxy_errors[i].status == status && (proxy_errors[i].servers & server))
			return proxy_errors[i].body;
	return NULL;
}

int
proxy_fair_conns(int capacity, int procs)
{
	if (capacity < 1 || procs < 1)
		return 0;
	return capacity / (2 * procs);
}

int
proxy_cpus(int max)
{
	long n = sysconf(_SC_NPROCESSORS_ONLN);

	if (n < 1)
		return 1;
	return n > max ? max : (int)n;
}

int
proxy_profile_parse(const char *const *names, int n, const char *name)
{
	int i;

	for (i = 0; i < n; i++)
		if (strcmp(name, names[i]) == 0)
			return i;
	return -1;
}

int
proxy_safe(const struct proxy_dialect *d, const char *what, const char *s)
{
	const unsigned char *u;

	if (s == NULL || *s == '\0') {
		log_err("%s: %s is empty", d->name, what);
		return 0;
	}
	for (u = (const unsigned char *)s; *u != '\0'; u++)
		if (!isgraph(*u) || strchr(d->unsafe, *u) != NULL) {
			log_err("%s: %s '%s' has characters that cannot go into %s", d->name, what,
			    s, d->file);
			return 0;
		}
	return 1;
}

int
proxy_sockets_fit(const struct proxy_dialect *d, const struct conf *c, const char *rundir)
{
	size_t i;

	/* RUNDIR/NAME.sock must fit in sun_path, or sluiced could not bind it either. */
	for (i = 0; i < c->neps; i++)
		if (strlen(rundir) + 1 + strlen(c->eps[i].name) + 5 >=
		    sizeof(((struct sockaddr_un *)0)->sun_path)) {
			log_err("%s: socket path %s/%s.sock is too long for a unix socket",
			    d->name, rundir, c->eps[i].name);
			return -1;
		}
	return 0;
}

/* Order of the routes: prefixes from short to long, then the exact routes, so that the
 * most specific is merged last and wins (Apache's sections), as nginx's choice does. */
static int
proxy_route_cmp(const void *a, const void *b)
{
	const struct conf_endpoint *x = *(const struct conf_endpoint *const *)a;
	const struct conf_endpoint *y = *(const struct conf_endpoint *const *)b;
	size_t lx = strlen(x->path), ly = strlen(y->path);

	if (x->exact != y->exact)
		return x->exact - y->exact;
	if (lx != ly)
		return lx < ly ? -1 : 1;
	return strcmp(x->path, y->path);
}

/* One pool's connections: forced, a load balancer's, or the rule's fair share. */
static void
proxy_pool_fill(struct proxy_pool *pl, const struct conf_endpoint *ep, int procs,
    int forced, int lb)
{
	pl->ep = ep;
	pl->cap = ep->workers * ep->threads;
	pl->fair = proxy_fair_conns(pl->cap, procs);
	/* binary= may be a plain fcgi2 program, which pins threads: rule 2 for it. */
	if (forced >= 0) {
		pl->forced = 1;
		pl->conns = forced;
		pl->over = 2 * procs * forced > pl->cap;
	} else if (lb > 0 && ep->binary == NULL) {
		pl->lb = 1;
		pl->conns = lb;
	} else {
		pl->conns = pl->fair;
	}
}

int
proxy_model(struct proxy *p, const struct proxy_dialect *d, const struct conf *c,
    int procs, int forced, int lb)
{
	size_t i;

	memset(p, 0, sizeof(*p));
	p->procs = procs;
	p->npools = c->neps;
	p->pools = calloc(c->neps + 1, sizeof(*p->pools));
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	p->routes = calloc(c->neps + 1, sizeof(*p->routes));
	if (p->pools == NULL || p->routes == NULL) {
		log_err("%s: out of memory", d->name);
		proxy_free(p);
		return -1;
	}
	for (i = 0; i < c->neps; i++) {
		proxy_pool_fill(&p->pools[i], &c->eps[i], procs, forced, lb);
		p->routes[i] = &c->eps[i];
		if (!c->eps[i].exact && strcmp(c->eps[i].path, "/") == 0)
			p->root_prefix = 1;
	}
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	qsort(p->routes, c->neps, sizeof(*p->routes), proxy_route_cmp);
	return 0;
}

void
proxy_free(struct proxy *p)
{
	free(p->pools);
	free(p->routes);
	p->pools = NULL;
	p->routes = NULL;
}

void
proxy_write_capacity(FILE *out, const struct proxy_dialect *d, const struct proxy_pool *pl,
    int procs, const char *how)
{
	fprintf(out, "%s# %s: capacity C = %d workers x %d threads = %d, %c = %d %s, %s = %s%d\n",
	    d->indent, pl->ep->name, pl->ep->workers, pl->ep->threads, pl->cap, d->procs, procs,
	    d->procs_name, d->conns, how, pl->conns);
}

void
proxy_write_over(FILE *out, const struct proxy_dialect *d, const struct proxy_pool *pl,
    int procs)
{
	if (!pl->over)
		return;
	fprintf(out, "%s# WARNING: %c x %c = %d > C / 2 = %d: a worker that binds a thread to "
	    "its connection\n%s# (plain fcgi2, not sluice's) can have every thread pinned "
	    "and stall (docs/fastcgi.md rule 2).\n", d->indent, d->procs, d->conns_letter,
	    procs * pl->conns, pl->cap / 2, d->indent);
	log_warn("%s: %s: forced %s %d with %d %s: %c x %c = %d > C / 2 = %d, a plain fcgi2 "
	    "worker would stall behind pinned threads", d->name, pl->ep->name, d->forced,
	    pl->conns, procs, d->procs_name, d->procs, d->conns_letter, procs * pl->conns,
	    pl->cap / 2);
}
