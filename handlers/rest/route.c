/*
 * route.c: the rest endpoint's router and its per-thread state.
 *
 * The resource is "<table>" or "rpc/<fn>" right under the endpoint's route; the method
 * picks the verb: GET and HEAD read (read.c), POST inserts and PATCH and DELETE change
 * rows (write.c), a function is called by GET or POST (rpc.c).  A path with no resource
 * is 404 PGRST125, an unknown table 404 PGRST205, a query string over REST_QUERY_MAX
 * 414, another method 405.
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

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
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

int
rest_handle(struct req *rq, struct resp *rs)
{
	struct rest_thread *t = rq->thread;
	const char *name;
	int rpc, table;
	char d[160];

	if (strlen(rq->query) > REST_QUERY_MAX)
		return resp_error(rs, 414, "PGRST100", "the query string is too long", NULL, NULL);
	if (rest_route(rq->path, &name, &rpc) < 0 || !str_utf8_valid(name, strlen(name)))
		return resp_error(rs, 404, "PGRST125", "Invalid path specified in request URL",
		    NULL, NULL);
	if (rpc)
		return rest_rpc(rq, rs, t, name);
	if ((table = rest_schema_table(t->sc, name)) < 0) {
		(void)snprintf(d, sizeof(d), "Could not find the table 'public.%.100s' in the schema cache",
		    name);
		return resp_error(rs, 404, "PGRST205", d, NULL, NULL);
	}
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
