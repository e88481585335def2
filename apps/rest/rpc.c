/*
 * rpc.c: GET|HEAD|POST PREFIX rpc/<fn>, a function of the database called with named
 * arguments.
 *
 * GET takes the arguments from the query string (a parameter named like an argument is an
 * argument; the others are filters on the result); POST takes them from a JSON object body
 * (numbers, strings, booleans, null; nested values as JSON text).  Every argument must be
 * given but those with a default and none may be unknown, otherwise 404 PGRST202, as
 * PostgREST answers when no function matches.
 *
 * A scalar result is answered as a bare JSON value (15, "x", null); with Prefer:
 * count=exact its Content-Range counts it as one row (0-0/1).  A void function answers 204
 * without a body.  A function returning TABLE(...) or OUT parameters is a relation of
 * those columns.  A set of rows of a
 * table ("setof album") is a relation like any table: select=, embeds, filters, order,
 * limit, offset, count, Range, CSV and the object type all apply, because the call becomes
 * the FROM item of the same generated statement:
 *   PostgreSQL  from "ret_albums"("a" => $1::integer) _t0
 *   SQLite      from (<body of sluice_functions.ret_albums with $1 for :a>) _t0
 * The arguments are always $1..$n, bound before the values of the filters.  On SQLite a
 * function whose body writes runs first, on its own (rpc_lite_write()), its rows then the
 * FROM item.
 */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "json.h"
#include "rest.h"
#include "serve.h"
#include "str.h"

static int
rpc_not_found(struct resp *rs, const char *schema, const char *name, const char *why)
{
	char m[256];

	(void)snprintf(m, sizeof(m), "Could not find the function %.63s.%.100s in the schema "
	    "cache", schema, name);
	return resp_error(rs, 404, "PGRST202", m, why, NULL);
}

/* The arguments' values as given: text (NULL: not given) of lens bytes, or SQL NULL. */
struct rpc_vals {
	const char **vals;
	size_t *lens;
	int *isnull;
};

/* A POST's JSON object into v, each member an argument of f (a string's text, any other
 * value's JSON), copied into the request's arena.  0, or -1 after answering. */
static int
rpc_args_body(struct req *rq, struct resp *rs, const char *scname, const struct rest_func *f,
    struct rpc_vals *v)
{
	struct rest_err e;
	struct buf tmp;
	cJSON *body, *it;
	char d[160];
	int i, rc = -1;

	if ((body = rest_body_json(rq, 32, &e)) == NULL) {
		rest_error(rs, &e);
		return -1;
	}
	if (!cJSON_IsObject(body)) {
		resp_error(rs, 400, "PGRST102", "Empty or invalid json", NULL, NULL);
		goto out;
	}
	cJSON_ArrayForEach(it, body) {
		for (i = 0; i < f->nargs; i++)
			if (strcmp(f->argnames[i], it->string) == 0)
				break;
		if (i == f->nargs) {
			(void)snprintf(d, sizeof(d), "the function has no argument \"%.80s\"",
			    it->string);
			rpc_not_found(rs, scname, f->name, d);
			goto out;
		}
		v->isnull[i] = cJSON_IsNull(it);
		if (cJSON_IsString(it)) {
			v->lens[i] = strlen(it->valuestring);
			v->vals[i] = arena_strndup(rq->arena, it->valuestring, v->lens[i]);
		} else {
			buf_init(&tmp, 1 << 20);
			json_print(&tmp, it);
			v->vals[i] = tmp.data ? arena_strndup(rq->arena, tmp.data, tmp.len) : NULL;
			v->lens[i] = tmp.len;
			buf_free(&tmp);
		}
		if (v->vals[i] == NULL) {
			resp_error(rs, 413, "too_large", "the request is too large", NULL,
			    NULL);
			goto out;
		}
	}
	rc = 0;
out:
	cJSON_Delete(body);
	return rc;
}

/* Argument i of f bound from v (a default's value when left out and the dialect binds
 * defaults), after its checks: given, UTF-8, an integer's syntax.  0, or -1 after
 * answering. */
static int
rpc_arg_bind(struct resp *rs, const char *scname, const struct rest_func *f,
    struct rest_gen *g, struct rpc_vals *v, int i)
{
	int64_t iv;
	char d[160];

	if (v->vals[i] == NULL && i >= f->nargs - f->ndefaults) {
		/* PostgreSQL applies its defaults; SQLite's body names every argument, so the
		 * default's value is bound in its place. */
		if (f->argdefaults == NULL)
			return 0;
		v->isnull[i] = f->argdefaults[i] == NULL;
		v->vals[i] = v->isnull[i] ? "" : f->argdefaults[i];
		v->lens[i] = strlen(v->vals[i]);
	}
	if (v->vals[i] == NULL) {
		(void)snprintf(d, sizeof(d), "the argument \"%.80s\" is missing", f->argnames[i]);
		rpc_not_found(rs, scname, f->name, d);
		return -1;
	}
	if (!str_utf8_valid(v->vals[i], v->lens[i])) {
		resp_error(rs, 400, "PGRST100", "an argument is not UTF-8", NULL, NULL);
		return -1;
	}
	if (!v->isnull[i] && g->d->kind_of(f->argtypes[i]) == REST_K_INT &&
	    str_to_int(v->vals[i], v->lens[i], INT64_MIN, INT64_MAX, &iv) < 0) {
		(void)snprintf(d, sizeof(d), "invalid input syntax for type integer: \"%.60s\"",
		    v->vals[i]);
		resp_error(rs, 400, "22P02", d, NULL, NULL);
		return -1;
	}
	if (v->isnull[i] ? rest_param_null(g) < 0 :
	    rest_param_text(g, v->vals[i], v->lens[i]) < 0) {
		resp_error(rs, 400, "PGRST100", "too many arguments", NULL, NULL);
		return -1;
	}
	return 0;
}

/* Binds the arguments given as $1..$n from the query (GET) or the body (POST), and marks
 * them in given (f->nargs bytes); one left out must have a default.  0, or -1 after
 * answering. */
static int
rpc_args(struct req *rq, struct resp *rs, const char *scname, const struct rest_func *f,
    struct rest_gen *g, unsigned char *given)
{
	struct rpc_vals v;
	const struct req_param *p;
	int i;

	v.vals = arena_alloc(rq->arena, (size_t)(f->nargs + 1) * sizeof(char *));
	v.lens = arena_alloc(rq->arena, (size_t)(f->nargs + 1) * sizeof(size_t));
	v.isnull = arena_alloc(rq->arena, (size_t)(f->nargs + 1) * sizeof(int));
	if (v.vals == NULL || v.lens == NULL || v.isnull == NULL) {
		resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
		return -1;
	}
	for (i = 0; i < f->nargs; i++)
		v.vals[i] = NULL;
	if (rq->method == REQ_POST && rq->body != NULL && rq->body_len > 0) {
		if (rpc_args_body(rq, rs, scname, f, &v) < 0)
			return -1;
	} else if (rq->method != REQ_POST) {
		/* (A POST without a body has no arguments.) */
		for (i = 0; i < f->nargs; i++)
			if ((p = req_param(rq, f->argnames[i])) != NULL) {
				v.vals[i] = p->val;
				v.lens[i] = p->vallen;
				v.isnull[i] = 0;
			}
	}
	for (i = 0; i < f->nargs; i++) {
		given[i] = v.vals[i] != NULL;
		if (rpc_arg_bind(rs, scname, f, g, &v, i) < 0)
			return -1;
	}
	return 0;
}

static const char *const rpc_skip[] = { "select", "columns", "on_conflict", NULL };

/* 1 when s[0..len) is a JSON number (what a column of a numeric kind holds, written
 * bare); else it is written as a string. */
static int
rpc_json_number(const char *s, size_t len)
{
	size_t i = 0, d;

	if (i < len && s[i] == '-')
		i++;
	for (d = i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
		;
	if (i == d || (s[d] == '0' && i - d > 1))
		return 0;
	if (i < len && s[i] == '.') {
		for (d = ++i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	if (i < len && (s[i] == 'e' || s[i] == 'E')) {
		if (++i < len && (s[i] == '+' || s[i] == '-'))
			i++;
		for (d = i; i < len && s[i] >= '0' && s[i] <= '9'; i++)
			;
		if (i == d)
			return 0;
	}
	return i == len;
}

/* Appends column i of st's row as JSON: bare for a number of kind k, else a string. */
static void
rpc_json_value(struct buf *b, struct db_stmt *st, int i, enum rest_kind k)
{
	size_t len;
	const char *v = db_column_text(st, i, &len);

	if (v == NULL || db_column_isnull(st, i))
		buf_puts(b, "null");
	else if ((k == REST_K_INT || k == REST_K_NUM) && rpc_json_number(v, len))
		(void)buf_append(b, v, len);
	else if (k == REST_K_BOOL && len == 1 && (v[0] == '0' || v[0] == '1'))
		buf_puts(b, v[0] == '1' ? "true" : "false");
	else
		(void)json_escape(b, v, len);
}

/*
 * SQLite: a function whose body writes (INSERT, UPDATE or DELETE ... RETURNING: SQLite
 * takes no RETURNING in a subquery) runs it first, as its own statement with the
 * arguments bound.  A scalar function answers its first row's first value (null without
 * a row; void: 204).  A relation's rows, one JSON array bound as $k, become the FROM of
 * the generated SELECT, (select json_extract(_j.value, $p) as "col", ... from
 * json_each($k) _j) over the returned table's columns, so that select=, filters, order
 * and counts apply as to any function's rows.  0 with *fromsql set; 1 when answered.
 */
static int
rpc_lite_write(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_func *f, struct rest_gen *g, char **fromsql)
{
	const struct rest_table *rt = f->rettable >= 0 ? &t->sc->tables[f->rettable] : NULL;
	struct db_stmt *st;
	struct buf rows;
	char path[300];
	const char *name, *text;
	int rc, i, c, n = 0, k, kp, ret = 1;

	buf_reset(&t->sql, 1 << 20);
	buf_puts(&t->sql, f->body);
	if (rest_bind_run(rq, rs, t, g->p, &st) < 0)
		return 1;
	buf_init(&rows, t->body_max > 0 ? (size_t)t->body_max : REST_SQL_MAX);
	buf_putc(&rows, rt != NULL ? '[' : ' ');
	while ((rc = db_step(st)) == DB_ROW) {
		if (rt == NULL) {
			if (n++ == 0 && db_column_count(st) > 0)
				rpc_json_value(&rows, st, 0, t->d->kind_of(f->rettype));
			continue;
		}
		buf_puts(&rows, n++ ? ",{" : "{");
		for (i = 0; i < db_column_count(st); i++) {
			name = db_column_name(st, i);
			c = name != NULL ? rest_schema_col(rt, name) : -1;
			if (i)
				buf_putc(&rows, ',');
			(void)json_escape(&rows, name != NULL ? name : "", name ? strlen(name) : 0);
			buf_putc(&rows, ':');
			rpc_json_value(&rows, st, i, c >= 0 ? rt->cols[c].kind : REST_K_TEXT);
		}
		buf_putc(&rows, '}');
	}
	if (rc != DB_DONE) {
		(void)rest_db_error(rs, t, rq->db);
		db_reset(st);
		goto out;
	}
	db_reset(st);
	/* The call's SELECT is written into the same buffer. */
	buf_reset(&t->sql, 1 << 20);
	if (buf_failed(&rows)) {
		(void)resp_error(rs, 413, "too_large", "the function's rows are too large", NULL,
		    NULL);
		goto out;
	}
	if (rt == NULL) {
		t->rows = 1;
		if (t->prefs.count != REST_COUNT_NONE)
			resp_header(rs, "Content-Range", "0-0/1");
		if (f->retvoid)
			resp_set(rs, 204, NULL, "", 0);
		else if (n == 0 || rows.len <= 1)
			resp_set(rs, 200, "application/json; charset=utf-8", "null", 4);
		else
			resp_set(rs, 200, "application/json; charset=utf-8", rows.data + 1,
			    rows.len - 1);
		goto out;
	}
	buf_putc(&rows, ']');
	if ((text = arena_strndup(rq->arena, rows.data, rows.len)) == NULL ||
	    (k = rest_param_text(g, text, rows.len)) < 0) {
		(void)resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
		goto out;
	}
	buf_reset(&rows, REST_SQL_MAX);
	buf_puts(&rows, "(select ");
	for (i = 0; i < rt->ncols; i++) {
		(void)snprintf(path, sizeof(path), "$.\"%s\"", rt->cols[i].name);
		if ((text = arena_strndup(rq->arena, path, strlen(path))) == NULL ||
		    (kp = rest_param_text(g, text, strlen(path))) < 0) {
			(void)resp_error(rs, 413, "too_large", "the request is too large", NULL,
			    NULL);
			goto out;
		}
		buf_printf(&rows, "%sjson_extract(_j.value, $%d) as ", i ? ", " : "", kp);
		sqlb_ident(&rows, rt->cols[i].name);
	}
	buf_printf(&rows, " from json_each($%d) _j)", k);
	if (buf_failed(&rows) || (*fromsql = arena_strndup(rq->arena, rows.data,
	    rows.len)) == NULL) {
		(void)resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
		goto out;
	}
	ret = 0;
out:
	buf_free(&rows);
	return ret;
}

/* Calls the function f (NULL: name is none of the schema's) and answers; t->rows gets the
 * rows answered. */
static int
rpc_call(struct req *rq, struct resp *rs, struct rest_thread *t, const char *name,
    const struct rest_func *f)
{
	struct rest_params *p = arena_alloc(rq->arena, sizeof(*p));
	unsigned char *given = f ? arena_alloc(rq->arena, (size_t)f->nargs + 1) : NULL;
	struct rest_node *root = rest_node_new(rq->arena, NULL);
	struct rest_gen g;
	struct rest_err e;
	enum rest_accept acc;
	struct buf from;
	struct db_stmt *st;
	char *fromsql, *csv = NULL;
	const char *v;
	size_t len;
	/* A function's rows are counted exactly, whatever count= asks. */
	int count = t->prefs.count != REST_COUNT_NONE;

	if (f == NULL)
		return rpc_not_found(rs, t->scname, name, NULL);
	if (rq->method != REQ_GET && rq->method != REQ_HEAD && rq->method != REQ_POST) {
		resp_header(rs, "Allow", "GET, HEAD, POST");
		return resp_error(rs, 405, "method_not_allowed", "method not allowed", NULL, NULL);
	}
	if (p == NULL || root == NULL || given == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	if ((acc = rest_accept(rq, t->sc, &e)) == REST_ACCEPT_BAD)
		return rest_error(rs, &e);
	if (acc >= REST_ACCEPT_PLAN) {
		rest_err_set(&e, 406, "PGRST107", NULL, "a query plan is for reads of tables only");
		return rest_error(rs, &e);
	}
	rest_params_init(p, rq->arena);
	buf_reset(&t->sql, 1 << 20);
	rest_gen_start(&g, t, rq->arena, &t->sql, p, &e, 0);
	if (rpc_args(rq, rs, t->scname, f, &g, given) < 0)
		return 0;
	if (f->writes) {
		if (rq->method != REQ_POST)
			return resp_error(rs, 405, "25006", "a GET or HEAD may not write: the "
			    "function writes, call it with POST", NULL, NULL);
		if (rpc_lite_write(rq, rs, t, f, &g, &fromsql) != 0)
			return 0;
	} else {
		buf_init(&from, REST_SQL_MAX);
		t->d->call(&from, f, given);
		fromsql = buf_failed(&from) ? NULL : arena_strndup(rq->arena, from.data,
		    from.len);
		buf_free(&from);
	}
	if (fromsql == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);

	if (f->rettable < 0) {
		/* A scalar: the bare JSON value. */
		buf_puts(&t->sql, t->d->scalar_open);
		buf_puts(&t->sql, fromsql);
		buf_puts(&t->sql, t->d->scalar_close);
		if (t->d->resp_settings != NULL)
			buf_puts(&t->sql, t->d->resp_settings);
		if (rest_bind_run(rq, rs, t, p, &st) < 0)
			return 0;
		if (db_step(st) != DB_ROW)
			return rest_db_error(rs, t, rq->db);
		if (t->d->resp_settings != NULL)
			rest_resp_capture(rq->arena, t, st, 1);
		v = db_column_text(st, 0, &len);
		if (v == NULL)
			v = "null", len = 4;
		/* One value is one row, as PostgREST counts it. */
		if (count)
			resp_header(rs, "Content-Range", "0-0/1");
		t->rows = 1;
		if (f->retvoid)
			resp_set(rs, 204, NULL, "", 0);
		else
			resp_set(rs, 200, "application/json; charset=utf-8", v, len);
		db_reset(st);
		return 0;
	}
	root->name = f->name;
	if (rest_apply_params(rq, root, rpc_skip, rq->method == REQ_POST ? NULL : f, &e) < 0 ||
	    rest_resolve(&g, root, f->rettable) < 0)
		return rest_error(rs, &e);
	if (acc == REST_ACCEPT_CSV && (csv = rest_csv_header(&g, root)) == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	g.body_max = t->body_max;
	g.resp_settings = t->d->resp_settings != NULL;
	if (rest_sql_select(&g, root, fromsql, rest_shape_of(acc), count) < 0)
		return rest_error(rs, &e);
	return rest_answer_read(rq, rs, t, &g, root, acc, count, -1, csv);
}

/*
 * Prefer: tx=rollback runs the call in a transaction that is rolled back once the answer
 * is made; max-affected=N (handling=strict) rolls back a call that answered more than N
 * rows, 400 PGRST124.
 *
 * Not a db_write() (common/dbwrite.h): this transaction is there to be undone, not
 * committed (a call without these preferences runs outside one), and the call answers as
 * a read does, on rq->db (rest_answer_read()): a group commit would run it on another
 * thread's connection, and a retry would run it again after its answer was made.
 */
static int
rpc_txn(struct req *rq, struct resp *rs, struct rest_thread *t, const char *name,
    const struct rest_func *f)
{
	const struct rest_prefs *pf = &t->prefs;

	if (!pf->rollback && pf->max_affected < 0)
		return rpc_call(rq, rs, t, name, f);
	/* In the router's transaction (another schema than public), the router ends it. */
	if (!t->in_txn && db_begin(rq->db, DB_TXN_WRITE) < 0)
		return rest_db_error(rs, t, rq->db);
	(void)rpc_call(rq, rs, t, name, f);
	if (rs->status < 400 && pf->max_affected >= 0 && t->rows > pf->max_affected) {
		db_rollback(rq->db);
		buf_reset(&rs->body, 1 << 20);
		return rest_error_max_affected(rs, t->rows);
	}
	if (t->in_txn)
		return 0;
	if (pf->rollback || rs->status >= 400) {
		db_rollback(rq->db);
		return 0;
	}
	if (db_commit(rq->db) < 0)
		return rest_db_error(rs, t, rq->db);
	return 0;
}

int
rest_rpc(struct req *rq, struct resp *rs, struct rest_thread *t, const char *name)
{
	const struct rest_func *f = rest_schema_func(t->sc, name);

	/* A GET or HEAD reads, as PostgREST runs it: a volatile function, the one kind
	 * that may write, runs in a read-only transaction (the router ends it), and a
	 * write it tries is 405 25006, in the database's words unless they are hidden. */
	if (f != NULL && f->may_write && (rq->method == REQ_GET || rq->method == REQ_HEAD)) {
		const struct db_words *w;

		if (rest_txn_begin(rq, t) < 0)
			return rest_db_error(rs, t, rq->db);
		(void)rpc_txn(rq, rs, t, name, f);
		/* db_pg.c classed it bad input (400): PostgREST's answer is 405. */
		if (rs->status < 400 || strcmp(db_sqlstate(rq->db), "25006") != 0)
			return 0;
		if (t->db_words && (w = db_words(rq->db)) != NULL)
			resp_error(rs, 405, "25006", w->message, w->detail[0] != '\0' ?
			    w->detail : NULL, w->hint[0] != '\0' ? w->hint : NULL);
		else
			resp_error(rs, 405, "25006", "a GET or HEAD may not write: the function "
			    "writes, call it with POST", NULL, NULL);
		return 0;
	}
	return rpc_txn(rq, rs, t, name, f);
}
