/*
 * route.c: the rest endpoint's router and its per-thread state.
 *
 * The resource is "<table>" or "rpc/<fn>" right under the endpoint's route; the method
 * picks the verb: GET and HEAD read (read.c), POST inserts and PATCH and DELETE change
 * rows (write.c), a function is called by GET or POST (rpc.c).  A path with no resource
 * is 404 PGRST125, an unknown table 404 PGRST205, a query string over REST_QUERY_MAX
 * 414, another method 405.  CORS (rest_cors()) is answered first: OPTIONS is a preflight,
 * 204 for an origin of rest_cors_origins and 403 for any other.  With access control on,
 * the request's token is verified next and the verb runs between rest_auth_enter() and
 * rest_auth_leave() (auth.c): in the role's transaction on PostgreSQL, after the role's
 * grants are checked on SQLite.
 *
 * Each serving thread keeps its connection's schema (schema.c), that connection's SQL
 * dialect (dialect.c) and a reusable SQL buffer in a struct rest_thread, the endpoint's
 * thread state (common/serve.h): made before the thread's first request, read again after
 * a SIGHUP (kill -HUP of the workers, or "sluiced ctl reload rest" for new workers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rest.h"
#include "settings.h"
#include "str.h"

void *
rest_thread_init(struct db *db)
{
	struct rest_thread *t;

	long long unfiltered;

	if (settings_int(SETTING_REST_UNFILTERED_WRITES, &unfiltered) < 0)
		return NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->unfiltered_writes = unfiltered != 0;
	t->cors_origins = settings_get(SETTING_REST_CORS_ORIGINS);
	if (t->cors_origins != NULL && *t->cors_origins == '\0')
		t->cors_origins = NULL;
	t->auth = rest_auth_config();
	buf_init(&t->sql, REST_SQL_MAX);
	t->d = rest_dialect_of(db_backend(db));
	if ((t->sc = rest_schema_load(db, t->d)) == NULL) {
		buf_free(&t->sql);
		free(t);
		return NULL;
	}
	return t;
}

int
rest_thread_reload(void *state, struct db *db)
{
	struct rest_thread *t = state;
	struct rest_schema *sc;

	if ((sc = rest_schema_load(db, t->d)) == NULL)
		return -1;
	rest_schema_free(t->sc);
	t->sc = sc;
	return 0;
}

void
rest_thread_fini(void *state)
{
	struct rest_thread *t = state;

	rest_schema_free(t->sc);
	buf_free(&t->sql);
	free(t);
}

/*
 * The resource: "<table>" or "rpc/<fn>" right under the endpoint's route (SLUICE_ROUTE,
 * set by sluiced: "/rest/v1/x/artist" is not "artist").  Without a route (a binary run
 * alone) the last segments are taken.  Returns 0, or -1 when there is no resource.
 */
static int
rest_route(const char *path, const char **name, int *rpc)
{
	const char *end = path + strlen(path), *s, *prev;
	const char *route = settings_get(SETTING_ROUTE);
	size_t rlen;

	if (route != NULL && *route != '\0') {
		rlen = strlen(route);
		if (strncmp(path, route, rlen) != 0)
			return -1;
		path += rlen;
		if (path[0] == '/')
			path++;
		*rpc = strncmp(path, "rpc/", 4) == 0;
		if (*rpc)
			path += 4;
		if (*path == '\0' || strchr(path, '/') != NULL)
			return -1;
		*name = path;
		return 0;
	}

	while (end > path && end[-1] == '/')
		end--;
	for (s = end; s > path && s[-1] != '/'; s--)
		continue;
	if (s == end)
		return -1;
	*name = s;
	*rpc = 0;
	if (*end != '\0')
		return -1;	/* a trailing slash: not a resource */
	if (s > path) {
		for (prev = s - 1; prev > path && prev[-1] != '/'; prev--)
			continue;
		*rpc = (size_t)(s - 1 - prev) == 3 && strncmp(prev, "rpc", 3) == 0;
	}
	return 0;
}

/* 1 when origin is one of the comma-separated origins of list, byte for byte. */
static int
rest_cors_listed(const char *list, const char *origin)
{
	size_t n = strlen(origin);
	const char *s, *e;

	for (s = list; *s != '\0'; s = *e == ',' ? e + 1 : e) {
		while (*s == ' ')
			s++;
		for (e = s; *e != '\0' && *e != ','; e++)
			continue;
		if ((size_t)(e - s) == n && n > 0 && memcmp(s, origin, n) == 0)
			return 1;
	}
	return 0;
}

/*
 * CORS, off unless rest_cors_origins lists origins: a listed Origin gets its own origin
 * back (never "*") on every answer, errors included, so that its page can read them.  A
 * preflight (OPTIONS) is 204 with the methods and headers the API takes for a listed
 * origin, 403 without any Access-Control-* header for any other (or without CORS).
 * Returns 1 when the request was a preflight and is answered, else 0.
 */
static int
rest_cors(struct req *rq, struct resp *rs, const struct rest_thread *t)
{
	const char *origin;
	int ok;

	if (t->cors_origins == NULL && rq->method != REQ_OPTIONS)
		return 0;	/* the common case: no CORS, nothing to look at */
	origin = req_header(rq, "Origin");
	ok = t->cors_origins != NULL && origin != NULL &&
	    rest_cors_listed(t->cors_origins, origin);
	if (t->cors_origins != NULL)
		resp_header(rs, "Vary", "Origin");
	if (ok) {
		resp_header(rs, "Access-Control-Allow-Origin", origin);
		resp_header(rs, "Access-Control-Expose-Headers", "Content-Range, Range");
	}
	if (rq->method != REQ_OPTIONS)
		return 0;
	if (!ok || req_header(rq, "Access-Control-Request-Method") == NULL) {
		resp_error(rs, 403, "cors_forbidden", "cross-origin requests from this origin "
		    "are not allowed", NULL, NULL);
		return 1;
	}
	resp_header(rs, "Access-Control-Allow-Methods", "GET, HEAD, POST, PATCH, DELETE");
	resp_header(rs, "Access-Control-Allow-Headers", "Accept, Authorization, Content-Type, "
	    "Prefer, Range, Accept-Profile, Content-Profile, X-Client-Info");
	resp_header(rs, "Access-Control-Max-Age", "600");
	rs->status = 204;
	return 1;
}

/* The verb for the method, on table (or the function name with rpc). */
static int
rest_verb(struct req *rq, struct resp *rs, struct rest_thread *t, const char *name, int rpc,
    int table)
{
	if (rpc)
		return rest_rpc(rq, rs, t, name);
	switch (rq->method) {
	case REQ_GET:
	case REQ_HEAD:
		return rest_read(rq, rs, t, table);
	case REQ_POST:
		return rest_insert(rq, rs, t, table);
	case REQ_PATCH:
	case REQ_DELETE:
		return rest_update_delete(rq, rs, t, table);
	default:
		resp_header(rs, "Allow", "GET, HEAD, POST, PATCH, DELETE");
		return resp_error(rs, 405, "method_not_allowed", "method not allowed", NULL, NULL);
	}
}

int
rest_handle(struct req *rq, struct resp *rs)
{
	struct rest_thread *t = rq->thread;
	struct rest_identity id;
	struct rest_err e;
	const char *name;
	int rpc, table = -1, rc;
	char d[160];

	if (rest_cors(rq, rs, t))
		return 0;
	/* Who asks comes first, as in PostgREST: a bad token is 401 whatever it asks. */
	if (rest_auth_identify(rq, t->auth, &id, &e) < 0)
		return rest_auth_error(rs, &e);

	if (strlen(rq->query) > REST_QUERY_MAX)
		return resp_error(rs, 414, "PGRST100", "the query string is too long", NULL, NULL);
	if (rest_route(rq->path, &name, &rpc) < 0 || !str_utf8_valid(name, strlen(name)))
		return resp_error(rs, 404, "PGRST125", "Invalid path specified in request URL",
		    NULL, NULL);
	if (!rpc && (table = rest_schema_table(t->sc, name)) < 0) {
		(void)snprintf(d, sizeof(d), "Could not find the table 'public.%.100s' in the schema cache",
		    name);
		return resp_error(rs, 404, "PGRST205", d, NULL, NULL);
	}
	if (!id.active)
		return rest_verb(rq, rs, t, name, rpc, table);
	if (rest_auth_enter(rq, rs, t, &id, name, rpc) < 0)
		return 0;
	rc = rest_verb(rq, rs, t, name, rpc, table);
	rest_auth_leave(rq, rs, t, &id, name, rpc);
	return rc;
}
