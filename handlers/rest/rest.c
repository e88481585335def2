/*
 * rest: a PostgREST-compatible API over every table, view and function of a database.
 *
 * Route (from conf/endpoints.conf, e.g. "rest /rest/v1/ db=chinook"):
 *   GET|HEAD    PREFIX<table>      select=, filters, or=/and=, order=, limit=, offset=,
 *                                  embeds rel(...) with rel.col=, rel.order=, rel.limit=
 *   POST        PREFIX<table>      one JSON object or an array: 201; columns=, on_conflict=
 *   PATCH       PREFIX<table>      filters, one JSON object: 204 (200 with representation)
 *   DELETE      PREFIX<table>      filters: 204 (200 with representation)
 *   GET|POST    PREFIX rpc/<fn>    named arguments in the query or a JSON object body
 * Headers: Prefer (return=minimal|representation, count=exact, resolution=merge-duplicates|
 * ignore-duplicates, missing=default), Accept (application/json, text/csv,
 * application/vnd.pgrst.object+json), Range: N-M.  Responses carry Content-Range.
 *
 * Statuses: 200, 201, 204, 206 (partial with a count); 400 PGRST100 (parse), 42703
 * (unknown column), PGRST200/PGRST201 (relationship), PGRST102 (body), PGRST204 (unknown
 * column in a body); 404 PGRST205/PGRST202 (unknown table or function); 406 PGRST116 (object
 * requested, not one row) and PGRST107 (Accept); 409 constraint; 414 (query string over
 * REST_QUERY_MAX); 416 PGRST103 (range past the end); 503 database unavailable.
 *
 * Tables touched: any table the database holds, as the request asks; the schema is read
 * from the catalogs once per connection (see schema.c), and again after the worker got a
 * SIGHUP (kill -HUP of the workers, or "sluiced ctl reload rest" for new workers).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "json.h"
#include "log.h"
#include "rest_handler.h"
#include "settings.h"
#include "serve.h"
#include "str.h"

/* The thread's state (serve.h: thread_init): this connection's schema, read now. */
static void *
rest_thread_init(struct db *db)
{
	struct rest_thread *t;

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	buf_init(&t->sql, REST_SQL_MAX);
	t->db = db;
	if ((t->sc = rest_schema_load(db)) == NULL) {
		buf_free(&t->sql);
		free(t);
		return NULL;
	}
	return t;
}

/* After a SIGHUP: tables or functions may have changed.  The old schema stays when the
 * database fails. */
static int
rest_thread_reload(void *state, struct db *db)
{
	struct rest_thread *t = state;
	struct rest_schema *sc;

	if ((sc = rest_schema_load(db)) == NULL)
		return -1;
	rest_schema_free(t->sc);
	t->sc = sc;
	return 0;
}

static void
rest_thread_fini(void *state)
{
	struct rest_thread *t = state;

	rest_schema_free(t->sc);
	buf_free(&t->sql);
	free(t);
}

int
rest_error(struct resp *rs, const struct rest_err *e)
{
	return resp_error(rs, e->status, e->code, e->message,
	    e->details[0] != '\0' ? e->details : NULL, e->hint);
}

/* Is token (e.g. "count=exact") one of the comma-separated values of Prefer? */
int
rest_prefer(const struct req *rq, const char *token)
{
	const char *h = req_header(rq, "Prefer"), *p;
	size_t n = strlen(token);

	if (h == NULL)
		return 0;
	for (p = h; (p = strstr(p, token)) != NULL; p += n) {
		int start = p == h || p[-1] == ',' || p[-1] == ' ' || p[-1] == ';';
		int end = p[n] == '\0' || p[n] == ',' || p[n] == ' ' || p[n] == ';';

		if (start && end)
			return 1;
	}
	return 0;
}

/* Does the Accept header ask for mime (or is it absent / any)? */
static int
rest_accepts(const char *accept, const char *mime)
{
	return accept != NULL && strstr(accept, mime) != NULL;
}

enum rest_accept
rest_accept(const struct req *rq, struct rest_err *e)
{
	const char *a = req_header(rq, "Accept");

	if (a == NULL || *a == '\0')
		return REST_ACCEPT_JSON;
	if (rest_accepts(a, "application/vnd.pgrst.object"))
		return REST_ACCEPT_OBJECT;
	if (rest_accepts(a, "text/csv"))
		return REST_ACCEPT_CSV;
	if (rest_accepts(a, "application/json") || rest_accepts(a, "*/*") ||
	    rest_accepts(a, "application/*"))
		return REST_ACCEPT_JSON;
	rest_err_set(e, 406, "PGRST107", NULL, "None of these media types are available: %.200s",
	    a);
	return REST_ACCEPT_BAD;
}

int
rest_bind_run(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, struct db_stmt **out)
{
	struct db_stmt *st;
	int i;

	(void)rq;
	log_debug("rest: %s", t->sql.data);
	if ((st = db_prepare(t->db, t->sql.data)) == NULL)
		return serve_db_error(rs, t->db), -1;
	for (i = 0; i < p->n; i++) {
		if (p->isnull[i])
			db_bind_null(st, i + 1);
		else if (p->isint[i])
			db_bind_int(st, i + 1, p->iv[i]);
		else
			db_bind_text(st, i + 1, p->v[i], p->len[i]);
	}
	*out = st;
	return 0;
}

/*
 * Applies the query parameters other than skip[] to the tree, select= first.
 */
int
rest_apply_params(struct req *rq, struct rest_node *root, const char *const *skip,
    const struct rest_func *fn, struct rest_err *e)
{
	const struct req_param *sel = req_param(rq, "select");
	size_t i;
	int j;

	if (sel != NULL && rest_parse_select(rq->arena, sel->val, sel->vallen, root, e) < 0)
		return -1;
	for (i = 0; i < rq->nparams; i++) {
		const struct req_param *p = &rq->params[i];
		int skipped = 0;

		if (!str_utf8_valid(p->key, p->keylen) || !str_utf8_valid(p->val, p->vallen)) {
			rest_err_set(e, 400, "PGRST100", NULL, "the query string is not UTF-8");
			return -1;
		}
		for (j = 0; skip[j] != NULL; j++)
			if (strcmp(p->key, skip[j]) == 0)
				skipped = 1;
		for (j = 0; fn != NULL && j < fn->nargs; j++)
			if (strcmp(p->key, fn->argnames[j]) == 0)
				skipped = 1;
		if (skipped)
			continue;
		if (rest_parse_param(rq->arena, root, p->key, p->keylen, p->val, p->vallen, e) < 0)
			return -1;
	}
	return 0;
}

/* "Range: 0-9" (items) into offset and limit when the query gave neither. */
static int
rest_range(struct req *rq, struct rest_node *root, struct rest_err *e)
{
	const char *h = req_header(rq, "Range"), *dash;
	int64_t lo, hi = -1;

	if (h == NULL || *h == '\0')
		return 0;
	if (strncmp(h, "items=", 6) == 0)
		h += 6;
	if ((dash = strchr(h, '-')) == NULL ||
	    str_to_int(h, (size_t)(dash - h), 0, INT32_MAX, &lo) < 0 ||
	    (dash[1] != '\0' && str_to_int(dash + 1, strlen(dash + 1), 0, INT32_MAX, &hi) < 0) ||
	    (hi >= 0 && hi < lo)) {
		rest_err_set(e, 416, "PGRST103", NULL, "Requested range not satisfiable");
		return -1;
	}
	if (root->offset == 0)
		root->offset = lo;
	if (hi >= 0 && (root->limit < 0 || root->limit > hi - lo + 1))
		root->limit = hi - lo + 1;
	return 0;
}

/*
 * Runs the prepared read (body, rows[, total]) and answers it: status, Content-Range,
 * the singular object or CSV as asked.
 */
int
rest_answer_read(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, const struct rest_node *root, enum rest_accept acc,
    int count, const char *csv_header)
{
	struct db_stmt *st;
	const char *body;
	size_t len;
	int64_t rows, total = -1, off = root->offset;
	char range[80];
	struct rest_err e;

	if (rest_bind_run(rq, rs, t, p, &st) < 0)
		return 0;
	if (db_step(st) != DB_ROW)
		return serve_db_error(rs, t->db);
	body = db_column_text(st, 0, &len);
	rows = db_column_int(st, 1);
	if (count)
		total = db_column_int(st, 2);
	if (body == NULL)
		body = "", len = 0;
	if (count && off > 0 && off >= total && rows == 0) {
		db_reset(st);
		(void)snprintf(range, sizeof(range), "*/%lld", (long long)total);
		resp_header(rs, "Content-Range", range);
		rest_err_set(&e, 416, "PGRST103", NULL, "Requested range not satisfiable");
		(void)snprintf(e.details, sizeof(e.details),
		    "An offset of %lld was requested, but there are only %lld rows.",
		    (long long)off, (long long)total);
		return rest_error(rs, &e);
	}
	if (acc == REST_ACCEPT_OBJECT && rows != 1) {
		db_reset(st);
		rest_err_set(&e, 406, "PGRST116", NULL,
		    "JSON object requested, multiple (or no) rows returned");
		(void)snprintf(e.details, sizeof(e.details), "The result contains %lld rows",
		    (long long)rows);
		return rest_error(rs, &e);
	}
	if (rows > 0)
		(void)snprintf(range, sizeof(range), "%lld-%lld/", (long long)off,
		    (long long)(off + rows - 1));
	else
		(void)snprintf(range, sizeof(range), "*/");
	if (count)
		(void)snprintf(range + strlen(range), sizeof(range) - strlen(range), "%lld",
		    (long long)total);
	else
		(void)snprintf(range + strlen(range), sizeof(range) - strlen(range), "*");
	resp_header(rs, "Content-Range", range);
	rs->status = count && (off > 0 || rows < total) ? 206 : 200;
	buf_reset(&rs->body, 1 << 20);
	if (acc == REST_ACCEPT_CSV) {
		rs->content_type = "text/csv; charset=utf-8";
		buf_puts(&rs->body, csv_header);
		if (len > 0)
			buf_putc(&rs->body, '\n');
		buf_append(&rs->body, body, len);
	} else if (acc == REST_ACCEPT_OBJECT) {
		rs->content_type = "application/vnd.pgrst.object+json; charset=utf-8";
		/* "[{...}]" -> "{...}": the one element, without parsing it. */
		buf_append(&rs->body, body + 1, len - 2);
	} else {
		rs->content_type = "application/json; charset=utf-8";
		buf_append(&rs->body, body, len);
	}
	db_reset(st);
	if (buf_failed(&rs->body))
		return resp_error(rs, 500, "internal", "the response is too large", NULL, NULL);
	return 0;
}

/* The CSV header line of root's output keys, RFC 4180 quoted where needed. */
char *
rest_csv_header(struct rest_gen *g, struct rest_node *root)
{
	const char *keys[1024];
	struct buf b;
	int n = rest_sql_keys(g, root, keys, 1024), i;
	char *out;

	buf_init(&b, 1 << 20);
	for (i = 0; i < n; i++) {
		if (i)
			buf_putc(&b, ',');
		if (strpbrk(keys[i], "\",\r\n") != NULL) {
			const char *k;

			buf_putc(&b, '"');
			for (k = keys[i]; *k != '\0'; k++) {
				if (*k == '"')
					buf_putc(&b, '"');
				buf_putc(&b, *k);
			}
			buf_putc(&b, '"');
		} else
			buf_puts(&b, keys[i]);
	}
	out = arena_strndup(g->a, b.data ? b.data : "", b.len);
	buf_free(&b);
	return out;
}

static const char *const rest_read_skip[] = { "select", "columns", "on_conflict", NULL };

static int
rest_get(struct req *rq, struct resp *rs, struct rest_thread *t, int table)
{
	struct rest_params *p;
	struct rest_err e;
	struct rest_gen g;
	struct rest_node *root;
	enum rest_accept acc;
	int count = rest_prefer(rq, "count=exact");
	char *csv = NULL;

	if ((acc = rest_accept(rq, &e)) == REST_ACCEPT_BAD)
		return rest_error(rs, &e);
	if ((p = arena_alloc(rq->arena, sizeof(*p))) == NULL ||
	    (root = rest_node_new(rq->arena, NULL)) == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	p->n = 0;
	root->name = t->sc->tables[table].name;
	buf_reset(&t->sql, 1 << 20);
	g = (struct rest_gen){ t->sc, t->sc->be, rq->arena, &t->sql, p, &e, 0, NULL };
	if (rest_apply_params(rq, root, rest_read_skip, NULL, &e) < 0 ||
	    rest_range(rq, root, &e) < 0 || rest_resolve(&g, root, table) < 0)
		return rest_error(rs, &e);
	if (acc == REST_ACCEPT_CSV && (csv = rest_csv_header(&g, root)) == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	if (rest_sql_select(&g, root, NULL, acc == REST_ACCEPT_CSV ? REST_SHAPE_CSV :
	    REST_SHAPE_JSON, count) < 0)
		return rest_error(rs, &e);
	return rest_answer_read(rq, rs, t, p, root, acc, count, csv);
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
	const char *route = settings_str("SLUICE_ROUTE", NULL);
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

static int
handle(struct req *rq, struct resp *rs)
{
	struct rest_thread *t;
	const char *name;
	int rpc, table;
	char d[160];

	if (strlen(rq->query) > REST_QUERY_MAX)
		return resp_error(rs, 414, "PGRST100", "the query string is too long", NULL, NULL);
	if (rest_route(rq->path, &name, &rpc) < 0 || !str_utf8_valid(name, strlen(name)))
		return resp_error(rs, 404, "PGRST125", "Invalid path specified in request URL",
		    NULL, NULL);
	t = rq->thread;
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
		return rest_get(rq, rs, t, table);
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

static const struct endpoint endpoint = {
	.name = "rest",
	.handle = handle,
	.methods = REQ_GET | REQ_HEAD | REQ_POST | REQ_PATCH | REQ_DELETE,
	.db = &serve_db,
	.thread_init = rest_thread_init,
	.thread_reload = rest_thread_reload,
	.thread_fini = rest_thread_fini,
};

int
main(int argc, char **argv)
{
	return serve_main(argc, argv, &endpoint);
}
