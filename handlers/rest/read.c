/*
 * read.c: GET and HEAD on a table or view: select=, filters, or=/and=, order=, limit=,
 * offset=, embeds with their own parameters, Range, Prefer count=exact, and Accept for
 * JSON, CSV or one object.  The whole answer is one statement (select.c) whose one row is
 * the body; http.c answers it.
 */
#include "arena.h"
#include "rest.h"

static const char *const rest_read_skip[] = { "select", "columns", "on_conflict", NULL };

int
rest_read(struct req *rq, struct resp *rs, struct rest_thread *t, int table)
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
	g = (struct rest_gen){ t->sc, t->d, rq->arena, &t->sql, p, &e, 0, NULL };
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

