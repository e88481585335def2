/*
 * read.c: GET and HEAD on a table or view: select=, filters, or=/and=, order=, limit=,
 * offset=, embeds with their own parameters, Range, Prefer count=exact|planned|estimated
 * (the last two PostgreSQL's planner estimate, exact on SQLite), and Accept for
 * JSON, CSV, one object or GeoJSON (PostGIS).  The whole answer is one statement (select.c) whose one row is
 * the body, or on PostgreSQL for the common shapes the rows whose JSON flat.c writes;
 * http.c answers it.
 */
#include "arena.h"
#include "rest.h"
#include "serve.h"

static const char *const rest_read_skip[] = { "select", "columns", "on_conflict", NULL };

/*
 * Accept: application/vnd.pgrst.plan: the plan of the statement the request would run
 * (PostgreSQL's EXPLAIN, with analyze, verbose, settings, buffers or wal from options=),
 * as JSON or as text lines.
 */
static int
read_plan(struct req *rq, struct resp *rs, struct rest_thread *t, int table,
    enum rest_accept acc)
{
	struct rest_params *p = arena_alloc(rq->arena, sizeof(*p));
	struct rest_node *root = rest_node_new(rq->arena, NULL);
	struct db_stmt *st;
	struct rest_err e;
	struct rest_gen g;
	const char *line;
	size_t len;
	int rc, n = 0;

	if (p == NULL || root == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	rest_params_init(p, rq->arena);
	root->name = t->sc->tables[table].name;
	rest_gen_start(&g, t, rq->arena, &t->sql, p, &e, 0);
	if (rest_plan_prefix(rq, t, acc, &t->sql, &e) < 0 ||
	    rest_apply_params(rq, root, rest_read_skip, NULL, &e) < 0 ||
	    rest_range(rq, root, &e) < 0 || rest_resolve(&g, root, table) < 0 ||
	    rest_sql_select(&g, root, NULL, REST_SHAPE_JSON, 0) < 0)
		return rest_error(rs, &e);
	if (rest_bind_run(rq, rs, t, p, &st) < 0)
		return 0;
	buf_reset(&rs->body, 1 << 20);
	while ((rc = db_step(st)) == DB_ROW) {
		if ((line = db_column_text(st, 0, &len)) == NULL)
			continue;
		if (n++)
			buf_putc(&rs->body, '\n');
		buf_append(&rs->body, line, len);
	}
	if (rc != DB_DONE)
		return rest_db_error(rs, t, rq->db);
	rs->status = 200;
	rs->content_type = acc == REST_ACCEPT_PLAN_JSON ?
	    "application/vnd.pgrst.plan+json; charset=utf-8" :
	    "application/vnd.pgrst.plan+text; charset=utf-8";
	if (buf_failed(&rs->body))
		return resp_error(rs, 500, "internal", "the response is too large", NULL, NULL);
	return 0;
}

int
rest_read(struct req *rq, struct resp *rs, struct rest_thread *t, int table)
{
	struct rest_params *p;
	struct rest_err e;
	struct rest_gen g;
	struct rest_node *root;
	enum rest_accept acc;
	int count = t->prefs.count == REST_COUNT_EXACT;
	int64_t planned = -1;
	char *csv = NULL;

	if ((acc = rest_accept(rq, t->sc, &e)) == REST_ACCEPT_BAD)
		return rest_error(rs, &e);
	if ((p = arena_alloc(rq->arena, sizeof(*p))) == NULL ||
	    (root = rest_node_new(rq->arena, NULL)) == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	rest_params_init(p, rq->arena);
	root->name = t->sc->tables[table].name;
	buf_reset(&t->sql, 1 << 20);
	if (acc >= REST_ACCEPT_PLAN)
		return read_plan(rq, rs, t, table, acc);
	rest_gen_start(&g, t, rq->arena, &t->sql, p, &e, t->body_max);
	if (rest_apply_params(rq, root, rest_read_skip, NULL, &e) < 0 ||
	    rest_range(rq, root, &e) < 0 || rest_resolve(&g, root, table) < 0)
		return rest_error(rs, &e);
	/* count=planned|estimated: the planner's estimate where there is one, else exact. */
	if (t->prefs.count >= REST_COUNT_PLANNED &&
	    rest_count_planned(rq, t, root, table, &planned) < 0)
		count = 1;
	if (rest_flat_fits(&g, root, acc, count, planned, db_backend(rq->db)))
		return rest_flat_read(rq, rs, t, &g, root, acc);
	if (acc == REST_ACCEPT_CSV && (csv = rest_csv_header(&g, root)) == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	if (rest_sql_select(&g, root, NULL, rest_shape_of(acc), count) < 0)
		return rest_error(rs, &e);
	return rest_answer_read(rq, rs, t, &g, root, acc, count, planned, csv);
}

