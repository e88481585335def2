/*
 * proxy.h: the model of the proxy in front of the pools, computed once from the endpoint
 * list, and what its two dialects share.  nginxconf.c and apacheconf.c are writers over it:
 * each spells the same model in its server's words, through a struct proxy_dialect (its
 * name, its file, the characters it cannot take, the letters its comments use).
 *
 * The model: per endpoint, the pool's connection capacity C = workers x threads and the
 * connections each proxy process may keep to it (nginx's keepalive K per worker, Apache's
 * pool size max M per child), floor(C / 2P) for P proxy processes (docs/fastcgi.md rule 2:
 * at most half the pool's threads held by idle connections), or a forced value (-k) that
 * may break the rule and is then flagged; the routes from the least specific to the most
 * (the order Apache merges its sections in); whether a prefix route takes "/" (then nginx
 * needs no 404 location of its own); and the JSON errors the proxy answers by itself.
 */
#ifndef SLUICE_PROXY_H
#define SLUICE_PROXY_H

#include <stdio.h>

struct conf;
struct conf_endpoint;

/* Which servers answer an error by themselves (struct proxy_error's servers). */
#define PROXY_NGINX	0x1
#define PROXY_APACHE	0x2
#define PROXY_ANY	(PROXY_NGINX | PROXY_APACHE)

/*
 * An error the proxy answers itself, with the same JSON body as the endpoints' errors.
 * status is what the server raises, answer what the client gets (nginx raises 494 for a
 * request header too large and answers it as a 400).  The table is ordered as both
 * configurations list them.
 */
struct proxy_error {
	int status;
	int answer;
	const char *code;
	const char *message;
	const char *body;	/* {"code","message","details":null,"hint":null} */
	unsigned servers;	/* PROXY_NGINX | PROXY_APACHE */
};

extern const struct proxy_error proxy_errors[];
extern const size_t proxy_nerrors;

/* The body of the error of status that server answers (PROXY_NGINX, PROXY_APACHE, or
 * PROXY_ANY), or NULL when it has none.  Static. */
const char *proxy_error_body(int status, unsigned server);

/* How one server spells the model. */
struct proxy_dialect {
	const char *name;	/* "nginx": log lines begin with it */
	const char *file;	/* "nginx.conf": what an unsafe string cannot go into */
	const char *unsafe;	/* characters a pasted string may not hold */
	const char *indent;	/* before each comment line of a pool ("\t" inside http {}) */
	char procs;		/* the processes' letter: W (nginx workers), P (children) */
	const char *procs_name;	/* "nginx workers", "children" */
	const char *conns;	/* the connections' name: "K", "max M" */
	char conns_letter;	/* K, M */
	const char *forced;	/* what -k forces, in the warning: "keepalive", "reuse max" */
};

/* One endpoint's pool as the proxy sees it. */
struct proxy_pool {
	const struct conf_endpoint *ep;
	int cap;		/* C = workers x threads */
	int fair;		/* floor(C / 2P): the connections the rule allows */
	int conns;		/* the connections kept per proxy process (K, M); 0: none */
	int forced;		/* conns forced by -k */
	int lb;			/* conns of a load balancer (nginx -H, not rule 2's) */
	int over;		/* forced and P x conns > C / 2 */
};

struct proxy {
	int procs;				/* P: the proxy's processes */
	size_t npools;
	struct proxy_pool *pools;		/* the endpoint list's order */
	const struct conf_endpoint **routes;	/* least specific first: prefixes short to
						 * long, then the exact routes */
	int root_prefix;			/* a prefix route takes "/" */
};

/*
 * Fills p from c for procs proxy processes: forced >= 0 forces every pool's conns; with
 * lb > 0 (a load balancer) a pool without binary= keeps lb connections instead of its
 * fair share.  Returns 0, or -1 when memory ran out (logged under d's name).  p is freed
 * with proxy_free().
 */
int proxy_model(struct proxy *p, const struct proxy_dialect *d, const struct conf *c,
    int procs, int forced, int lb);
void proxy_free(struct proxy *p);

/* The connections the rule allows: floor(capacity / (2 * procs)); 0 means none. */
int proxy_fair_conns(int capacity, int procs);

/* The online CPUs, at least 1 and at most max. */
int proxy_cpus(int max);

/* Profile by name among names[0..n); -1 when unknown. */
int proxy_profile_parse(const char *const *names, int n, const char *name);

/*
 * 1 when s can be pasted into d's file as it is (printable, none of d->unsafe); else 0,
 * with the reason logged under what.
 */
int proxy_safe(const struct proxy_dialect *d, const char *what, const char *s);

/* 0 when every endpoint's RUNDIR/NAME.sock fits in a unix socket's path, else -1 (logged). */
int proxy_sockets_fit(const struct proxy_dialect *d, const struct conf *c,
    const char *rundir);

/* A pool's comment, in d's words: its capacity and connections, and how they were chosen
 * (how: "floor(C / 2W) = ", "forced ", ...). */
void proxy_write_capacity(FILE *out, const struct proxy_dialect *d,
    const struct proxy_pool *pl, int procs, const char *how);

/* For a forced value that breaks the rule (pl->over), the warning comment, also logged;
 * nothing otherwise. */
void proxy_write_over(FILE *out, const struct proxy_dialect *d, const struct proxy_pool *pl,
    int procs);

#endif /* SLUICE_PROXY_H */
