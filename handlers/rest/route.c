/*
 * route.c: the rest endpoint's router and its per-thread state.
 *
 * The endpoint's root answers the OpenAPI document (openapi.c) to GET and HEAD.
 * The resource is "<table>" or "rpc/<fn>" right under the endpoint's route; the method
 * picks the engine's verb (apps/rest/): GET and HEAD read (read.c), POST inserts and PATCH
 * and DELETE change rows (write.c), a function is called by GET or POST (rpc.c).  A path with no resource
 * is 404 PGRST125, an unknown table 404 PGRST205, a query string over REST_QUERY_MAX
 * 414, another method 405.  CORS (rest_cors()) is answered first: OPTIONS is a preflight,
 * 204 for an origin of rest_cors_origins and 403 for any other.  With access control on,
 * the request's token is verified next and the verb runs between rest_auth_enter() and
 * rest_auth_leave() (auth.c): in the role's transaction on PostgreSQL, after the role's
 * grants are checked on SQLite.  With rest_pre_request (PostgreSQL) rest_auth_enter()
 * runs with or without access control: the request's settings and that function first,
 * in the request's transaction.  response.headers and response.status that a function
 * set are applied to the answer last (respset.c).
 *
 * Each serving thread holds the process's schemas (schemas.c: one per name of
 * rest_schemas, the request's picked by Accept-Profile or Content-Profile), its
 * connection's SQL dialect (dialect.c) and a reusable SQL buffer in a struct rest_thread,
 * the endpoint's thread state (common/serve.h): made before the thread's first request;
 * after a SIGHUP (kill -HUP of the workers, or "sluiced ctl reload rest" for new workers)
 * the thread takes the schemas read afresh before its next request.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "route.h"
#include "serve.h"
#include "settings.h"
#include "str.h"

/* Makes the request's schema the search_path of a transaction of its own (PostgreSQL, a
 * schema other than public: the connections are shared, so nothing is set for the
 * session).  0, or -1 when the database failed (its error is on db). */
static int
rest_search_path(struct rest_thread *t, struct req *rq)
{
	struct db_stmt *st;
	struct buf q;
	int rc = -1;

	if (t->d->search_path == NULL || strcmp(t->scname, "public") == 0)
		return 0;
	if (rest_txn_begin(rq, t) < 0)
		return -1;
	buf_init(&q, 1024);
	sqlb_ident(&q, t->scname);
	if (!buf_failed(&q) && (st = db_prepare(rq->db, t->d->search_path)) != NULL) {
		if (db_bind_text(st, 1, q.data, q.len) == 0 && db_step(st) == DB_ROW)
			rc = 0;
		db_reset(st);
	}
	buf_free(&q);
	return rc;
}

/* Takes the process's schemas, read for the worker's SIGHUPs so far or later, in place of
 * those the thread held (if any).  0, or -1 with the thread's left as they were. */
static int
rest_schemas_use(struct rest_thread *t, struct db *db)
{
	struct rest_schemas *set;

	if ((set = rest_schemas_take(db, t->d, t->scnames, t->nschemas,
	    serve_reloads())) == NULL)
		return -1;
	rest_schemas_drop(t->set);
	t->set = set;
	t->sc = rest_schemas_get(set, 0);
	t->scname = t->scnames[0];
	return 0;
}

/* rest_schemas into t->scnames: comma-separated, blanks around names dropped.  0, or -1
 * when it is malformed (logged). */
static int
rest_schemas_names(struct rest_thread *t)
{
	const char *v = settings_get(SETTING_REST_SCHEMAS), *s, *e;

	if (v == NULL || *v == '\0')
		v = "public";
	for (s = v; *s != '\0'; s = *e ? e + 1 : e) {
		size_t len;

		while (*s == ' ')
			s++;
		for (e = s; *e != '\0' && *e != ','; e++)
			continue;
		len = (size_t)(e - s);
		while (len > 0 && s[len - 1] == ' ')
			len--;
		if (len == 0 || len > 63 || t->nschemas == REST_SCHEMAS_MAX ||
		    !str_utf8_valid(s, len)) {
			log_err("rest_schemas=%s: want 1 to %d names of 1 to 63 bytes", v,
			    REST_SCHEMAS_MAX);
			return -1;
		}
		if ((t->scnames[t->nschemas] = malloc(len + 1)) == NULL)
			return -1;
		memcpy(t->scnames[t->nschemas], s, len);
		t->scnames[t->nschemas++][len] = '\0';
	}
	return 0;
}

static void
rest_thread_free(struct rest_thread *t)
{
	int i;

	rest_schemas_drop(t->set);
	for (i = 0; i < t->nschemas; i++)
		free(t->scnames[i]);
	buf_free(&t->sql);
	free(t);
}

void *
rest_thread_init(struct db *db)
{
	struct rest_thread *t;

	long long unfiltered, version, resp_max, db_errors;

	if (settings_int(SETTING_REST_UNFILTERED_WRITES, &unfiltered) < 0 ||
	    settings_int(SETTING_REST_DIALECT_VERSION, &version) < 0 ||
	    settings_int(SETTING_REST_DB_ERRORS, &db_errors) < 0 ||
	    settings_int(SETTING_RESP_MAX, &resp_max) < 0)
		return NULL;
	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	t->unfiltered_writes = unfiltered != 0;
	t->pgrst12 = version == 12;
	t->db_words = db_errors == 0;	/* pass */
	t->body_max = resp_max;
	t->cors_origins = settings_get(SETTING_REST_CORS_ORIGINS);
	if (t->cors_origins != NULL && *t->cors_origins == '\0')
		t->cors_origins = NULL;
	t->auth = rest_auth_config();
	buf_init(&t->sql, REST_SQL_MAX);
	t->d = rest_dialect_of(db_backend(db));
	if (rest_schemas_names(t) < 0) {
		rest_thread_free(t);
		return NULL;
	}
	/* SQLite has one schema: the first name stands for it. */
	if (t->d->search_path == NULL)
		while (t->nschemas > 1)
			free(t->scnames[--t->nschemas]);
	if (rest_schemas_use(t, db) < 0) {
		rest_thread_free(t);
		return NULL;
	}
	return t;
}

int
rest_thread_reload(void *state, struct db *db)
{
	return rest_schemas_use(state, db);
}

void
rest_thread_fini(void *state)
{
	rest_thread_free(state);
}

/*
 * The request's schema: Accept-Profile for GET and HEAD, Content-Profile for the others,
 * the first of rest_schemas without one; 406 PGRST106 for a schema not listed.  A schema
 * other than public becomes the search_path of the transaction the request runs in
 * (rest_search_path(), after auth.c's rest_auth_enter()), so that the statements' names,
 * and those in functions' bodies, are the schema's.  0, or -1 after answering.
 */
static int
rest_profile(struct req *rq, struct resp *rs, struct rest_thread *t)
{
	const char *h = req_header(rq, rq->method == REQ_GET || rq->method == REQ_HEAD ?
	    "Accept-Profile" : "Content-Profile");
	char m[400];
	size_t len;
	int i = 0, n;

	if (h != NULL && *h != '\0') {
		for (i = 0; i < t->nschemas; i++)
			if (strcmp(h, t->scnames[i]) == 0)
				break;
	}
	if (i == t->nschemas) {
		n = snprintf(m, sizeof(m), "The schema must be one of the following: ");
		len = n > 0 ? (size_t)n : 0;
		for (i = 0; i < t->nschemas && len < sizeof(m); i++) {
			n = snprintf(m + len, sizeof(m) - len, "%s%s", i ? ", " : "",
			    t->scnames[i]);
			len += n > 0 ? (size_t)n : 0;
		}
		resp_error(rs, 406, "PGRST106", m, NULL, NULL);
		return -1;
	}
	t->sc = rest_schemas_get(t->set, i);
	t->scname = t->scnames[i];
	if (t->nschemas > 1)
		resp_header(rs, "Content-Profile", t->scname);
	return 0;
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

/* 1 when path is the endpoint's root ("/rest/v1/" or "/rest/v1"; "/" without a route),
 * where the OpenAPI document is. */
static int
rest_route_root(const char *path)
{
	const char *route = settings_get(SETTING_ROUTE);
	size_t n;

	if (route == NULL || *route == '\0')
		return strcmp(path, "/") == 0;
	n = strlen(route);
	while (n > 0 && route[n - 1] == '/')
		n--;
	return strncmp(path, route, n) == 0 && (path[n] == '\0' || strcmp(path + n, "/") == 0);
}

/* Ends the request's transaction, if it opened one: rolled back under an error (or no
 * answer), else committed, a failed COMMIT answered.  Returns rc, or the error's. */
static int
rest_txn_end(struct req *rq, struct resp *rs, struct rest_thread *t, int rc)
{
	if (!t->in_txn)
		return rc;
	t->in_txn = 0;
	if (rs->status == 0 || rs->status >= 400)
		(void)db_rollback(rq->db);
	else if (db_commit(rq->db) < 0)
		return rest_db_error(rs, t, rq->db);
	return rc;
}

/*
 * The root: the OpenAPI document (openapi.c) for GET and HEAD, read as the request's
 * role: in its read-only transaction on PostgreSQL, which ends here.  Other methods are
 * 405.  Returns what the verb returned.
 */
static int
rest_root(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id)
{
	int rc;

	if (rq->method != REQ_GET && rq->method != REQ_HEAD) {
		resp_header(rs, "Allow", "GET, HEAD");
		return resp_error(rs, 405, "method_not_allowed", "method not allowed", NULL, NULL);
	}
	db_route(rq->db, DB_ROUTE_READ);
	if (id->active && rest_auth_enter(rq, rs, t, id, NULL, 0) < 0)
		return 0;
	rc = rest_openapi(rq, rs, t);
	return rest_txn_end(rq, rs, t, rc);
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
 * back (never "*") on every answer, errors included, so that its page can read them (and
 * their X-Request-Id, common/reqid.h; a page may send its own id).  A
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
		resp_header(rs, "Access-Control-Expose-Headers",
		    "Content-Range, Range, X-Request-Id");
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
	    "Prefer, Range, Accept-Profile, Content-Profile, X-Client-Info, X-Request-Id");
	resp_header(rs, "Access-Control-Max-Age", "600");
	rs->status = 204;
	return 1;
}

/* The verb of the method, for a resolved table or function. */
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

/*
 * The endpoint's handle(): CORS, who asks (auth.c), Prefer and the schema first, then the
 * resource and its verb.  With access control on PostgreSQL the request runs in auth.c's
 * transaction; a schema other than public runs in a transaction too (the router's own when
 * there is no other), with its search_path set locally.  Prefer: tx=rollback rolls back
 * either once the verb answered; the router's own commits when answered below 400.
 */
int
rest_handle(struct req *rq, struct resp *rs)
{
	struct rest_thread *t = rq->thread;
	struct rest_identity id;
	struct rest_err e;
	const char *name;
	int rpc, table = -1, rc = 0;

	rest_watch(rq->db);
	if (rest_cors(rq, rs, t))
		return 0;
	/* Who asks comes first, as in PostgREST: a bad token is 401 whatever it asks. */
	if (rest_auth_identify(rq, t->auth, &id, &e) < 0)
		return rest_auth_error(rs, &e);
	t->rows = 0;
	t->in_txn = 0;
	t->idem = NULL;
	t->access.role = NULL;
	t->resp_headers = NULL;
	t->resp_status = NULL;
	if (rest_prefs_read(rq, &t->prefs, &e) < 0)
		return rest_error(rs, &e);
	if (t->prefs.applied[0] != '\0')
		resp_header(rs, "Preference-Applied", t->prefs.applied);
	if (rest_profile(rq, rs, t) < 0)
		return 0;

	if (strlen(rq->query) > REST_QUERY_MAX)
		return resp_error(rs, 414, "PGRST100", "the query string is too long", NULL, NULL);
	if (rest_route_root(rq->path))
		return rest_root(rq, rs, t, &id);
	if (rest_route(rq->path, &name, &rpc) < 0 || !str_utf8_valid(name, strlen(name)))
		return resp_error(rs, 404, "PGRST125", "Invalid path specified in request URL",
		    NULL, NULL);
	/* 13 looks in its schema cache; 12 let its plan and PostgreSQL find out (http.c). */
	if (!rpc && (table = rest_schema_table(t->sc, name)) < 0)
		return rest_missing_table(rq, rs, t, name);
	/* A write's Idempotency-Key: a key seen before is answered here (idem.c). */
	if (!rpc && rest_idem_begin(rq, rs, t, &id) < 0)
		return 0;
	/* What only reads may go to a standby (db_read=); everything else stays on db=. */
	if (rq->method == REQ_GET || rq->method == REQ_HEAD)
		db_route(rq->db, DB_ROUTE_READ);
	/* The role, the request's settings and the pre-request function: only where
	 * access control or rest_pre_request asks for them, so that nothing is spent
	 * otherwise. */
	if ((id.active || t->auth->pre_request != NULL) &&
	    rest_auth_enter(rq, rs, t, &id, name, rpc) < 0)
		return 0;
	if (rest_search_path(t, rq) < 0)
		rest_db_error(rs, t, rq->db);
	else
		rc = rest_verb(rq, rs, t, name, rpc, table);
	/* response.headers and response.status as the request's functions set them; a
	 * bad value fails the request (and rolls back its transaction). */
	if ((t->resp_headers != NULL || t->resp_status != NULL) &&
	    rest_resp_apply(rq->arena, rs, t->resp_headers, t->resp_status, &e) < 0)
		rest_error(rs, &e);
	/* A failure is auth.c's to read (its SQLSTATE) and end. */
	if (t->in_txn && t->prefs.rollback && rs->status < 400) {
		(void)db_rollback(rq->db);
		t->in_txn = 0;
	}
	if (id.active)
		rest_auth_leave(rq, rs, t, &id, name, rpc);
	return rest_txn_end(rq, rs, t, rc);
}
