/*
 * write.c: POST, PATCH and DELETE on a table, each one statement whatever the body size.
 *
 * The request body goes to the database as one JSON parameter:
 *   PostgreSQL  with _w as (insert into "t" ("a", "b") select (_j->>'a')::integer, ...
 *               from jsonb_array_elements($1::jsonb) _j [on conflict ...] returning *)
 *               select <ARR(OBJ) of select.c>, count(*) from _w _t0
 *   SQLite      insert into "t" as _t0 ("a", "b") select json_extract(_j.value, '$."a"'), ...
 *               from json_each($1) _j where true [on conflict ...] [returning '{"a":' || ...]
 *               (one object: select json_extract($1, '$."a"'), ... where true ..., and a
 *               string value, not an upsert's, bound alone: select $2, ...)
 * PATCH sets every key of the body object the same way; DELETE returns what it removed.
 * Both need a filter (400 21000 without one) unless the endpoint sets
 * rest_unfiltered_writes=1.
 *
 * The body must be application/json (415 otherwise: a cross-site form cannot write) and is
 * parsed once by rest_body_json() (depth limit; no "\u0000", no non-finite number: 400
 * PGRST102) only to check it: an object or an array of objects whose keys are all known
 * columns (400 PGRST204 otherwise), the same keys in every object unless columns= says
 * which to take (400 PGRST102).  A representation too large for the response is 413 and
 * the write is rolled back (it runs in a transaction for that; on SQLite every write is
 * group-committed, in a savepoint of its batch's transaction: commit.c).  Prefer:
 * return=minimal (default: 201/204 and no body) or representation (the rows as JSON, with
 * select= and embeds), resolution=merge-duplicates|ignore-duplicates with on_conflict=
 * (default: the primary key), missing=default (absent keys take the column default),
 * return=headers-only (no body; Location "/<table>?<pk>=eq.<value>" of the one row
 * inserted), count=exact (Content-Range "*" "/N").  With Accept: application/vnd.pgrst.object+json a write
 * that touches other than one row is rolled back and answered 406 PGRST116.
 */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "json.h"
#include "log.h"
#include "rest.h"
#include "serve.h"
#include "str.h"

#define WRITE_JSON_DEPTH	32

/* A writable column of tb: rest_schema_col() but for computed fields.  Index or -1. */
static int
write_col(const struct rest_table *tb, const char *name)
{
	int k = rest_schema_col(tb, name);

	return k < tb->ncols ? k : -1;
}

static int
write_bad_body(struct rest_err *e, const char *msg, const char *details)
{
	rest_err_set(e, 400, "PGRST102", details, "%s", msg);
	return -1;
}

static int
write_unknown_col(struct rest_err *e, const char *table, const char *col)
{
	rest_err_set(e, 400, "PGRST204", NULL,
	    "Could not find the '%.80s' column of '%.80s' in the schema cache", col, table);
	return -1;
}

/* A column usable as a JSON path key and a SQL literal without surprises. */
static int
write_plain_name(const char *s)
{
	for (; *s != '\0'; s++)
		if (*s == '"' || *s == '\'' || *s == '\\' || (unsigned char)*s < 0x20)
			return 0;
	return 1;
}

/* The column indexes of the write, from columns= or the first object's keys. */
static int
write_columns(struct req *rq, const struct rest_table *tb, cJSON *body, int *cols, int *ncols,
    struct rest_err *e)
{
	const struct req_param *cp = req_param(rq, "columns");
	cJSON *first = cJSON_IsArray(body) ? cJSON_GetArrayItem(body, 0) : body, *it, *o;
	int i, k;

	*ncols = 0;
	if (cp != NULL) {
		const char **names;
		size_t n, j;

		if (rest_parse_columns(rq->arena, cp->val, cp->vallen, &names, &n, e) < 0)
			return -1;
		for (j = 0; j < n; j++) {
			if ((k = write_col(tb, names[j])) < 0)
				return write_unknown_col(e, tb->name, names[j]);
			for (i = 0; i < *ncols; i++)
				if (cols[i] == k)
					break;
			if (i == *ncols)
				cols[(*ncols)++] = k;
		}
		return 0;
	}
	if (first == NULL)
		return 0;
	cJSON_ArrayForEach(it, first) {
		if ((k = write_col(tb, it->string)) < 0)
			return write_unknown_col(e, tb->name, it->string);
		if (cJSON_GetObjectItemCaseSensitive(first, it->string) != it)
			return write_bad_body(e, "A key appears twice in an object", it->string);
		if (*ncols < tb->ncols)
			cols[(*ncols)++] = k;
	}
	/* Every other object must carry the same keys. */
	if (!cJSON_IsArray(body))
		return 0;
	cJSON_ArrayForEach(o, body) {
		int n = 0;

		/* Exactly the first object's keys: same case (cJSON_HasObjectItem ignores
		 * it), each once, so that no value silently becomes NULL. */
		cJSON_ArrayForEach(it, o) {
			n++;
			if (cJSON_GetObjectItemCaseSensitive(first, it->string) == NULL)
				return write_bad_body(e, "All object keys must match", NULL);
			if (cJSON_GetObjectItemCaseSensitive(o, it->string) != it)
				return write_bad_body(e, "A key appears twice in an object",
				    it->string);
		}
		if (n != cJSON_GetArraySize(first))
			return write_bad_body(e, "All object keys must match", NULL);
	}
	return 0;
}

/* Checks that body is an object or an array of objects. */
static int
write_shape(cJSON *body, int allow_array, struct rest_err *e)
{
	cJSON *o;

	if (cJSON_IsObject(body))
		return 0;
	if (!allow_array || !cJSON_IsArray(body))
		return write_bad_body(e, allow_array ? "Expected a JSON object or an array of "
		    "objects" : "Expected a JSON object", NULL);
	cJSON_ArrayForEach(o, body)
		if (!cJSON_IsObject(o))
			return write_bad_body(e, "All elements of the array must be objects", NULL);
	return 0;
}

/*
 * A write's answer once its rows are known: Content-Range (the count when asked), and the
 * status: 201 when created, else 200 with a representation, else 200 for an upsert and
 * 204; a representation as the JSON array in rs->body, or its one object.
 */
static int
write_answer(struct resp *rs, const struct rest_prefs *pf, int rep, enum rest_accept acc,
    int created, int upsert, int64_t rows)
{
	struct buf *out = &rs->body;
	char range[64];

	if (pf->count != REST_COUNT_NONE)
		(void)snprintf(range, sizeof(range), "*/%lld", (long long)rows);
	else
		(void)snprintf(range, sizeof(range), "*/*");
	resp_header(rs, "Content-Range", range);
	if (!rep) {
		buf_reset(out, 1 << 20);
		rs->status = created ? 201 : upsert ? 200 : 204;
		return 0;
	}
	rs->status = created ? 201 : 200;
	if (acc == REST_ACCEPT_OBJECT) {
		/* "[{...}]" -> "{...}" */
		memmove(out->data, out->data + 1, out->len - 2);
		out->len -= 2;
		out->data[out->len] = '\0';
		rs->content_type = "application/vnd.pgrst.object+json; charset=utf-8";
	} else
		rs->content_type = "application/json; charset=utf-8";
	return 0;
}

static int write_location(struct resp *rs, const struct rest_table *tb);

/* write_answer() as a struct rest_answer's fn, inside the write (commit.c), with the
 * Location of return=headers-only. */
static int
write_answer_fn(struct resp *rs, const struct rest_answer *a, int64_t rows, int64_t existing)
{
	int created = a->created && !(a->upsert && existing >= a->nbody);

	(void)write_answer(rs, a->prefs, a->rep, (enum rest_accept)a->acc, created, a->upsert,
	    rows);
	if (a->location != NULL && rs->status < 300)
		return write_location(rs, a->location);
	return 0;
}

/* A representation past the response cap: 413, nothing written (the write was undone). */
static int
write_too_large(struct resp *rs)
{
	buf_reset(&rs->body, 1 << 20);
	return resp_error(rs, 413, "too_large", "the representation of the written rows is too "
	    "large; nothing was written", "ask for fewer columns with select= or for "
	    "return=minimal", NULL);
}

/*
 * PostgreSQL: with a representation the write stays open until its body is known to fit:
 * a representation past the buffer rolls the write back (413), so that no client is told a
 * committed write failed.  So do those that may be rolled back (tx=rollback,
 * max-affected=N, one row required by the object Accept) and upserts: a transaction of
 * their own (commit.c).  A request in the router's transaction (auth.c's, or for another
 * schema than public) is in one already, which the router ends: 0 then.  (SQLite: every
 * write is in its savepoint of the group commit, whatever this says.)
 */
static int
write_needs_txn(const struct rest_thread *t, int rep, enum rest_accept acc, int upsert)
{
	const struct rest_prefs *pf = &t->prefs;

	return !t->in_txn && (rep || acc == REST_ACCEPT_OBJECT || pf->rollback ||
	    pf->max_affected >= 0 || upsert);
}

/*
 * Runs the write in t->sql and answers (a's fn, inside the write).  The dialect reads the
 * rows: PostgreSQL's statement returns (body, count) in one row, SQLite's one JSON object
 * per row (representation) or nothing.  upsert (or NULL) counts the body's a->nbody rows
 * already in the table, run first in the write's transaction: an upsert that inserted
 * nothing answers 200, not 201.  With an Idempotency-Key (t->idem) the answer is stored
 * in the same transaction, or the key is in flight: 409.
 * Prefer: tx=rollback undoes the write once answered; max-affected=N (handling=strict)
 * undoes one that touched more rows, 400 PGRST124.
 */
static int
write_run(struct req *rq, struct resp *rs, struct rest_thread *t, struct rest_params *p,
    struct rest_answer *a, const char *upsert)
{
	int64_t rows = 0, existing = 0;
	int txn = write_needs_txn(t, a->rep, (enum rest_accept)a->acc, upsert != NULL);

	/* PostgreSQL: an Idempotency-Key's row goes into the write's own transaction. */
	if (t->idem != NULL && !t->in_txn)
		txn = 1;
	a->fn = write_answer_fn;
	a->prefs = &t->prefs;
	a->upsert = upsert != NULL;
	/* Answered inside the write, undone there when refused (commit.c). */
	switch (rest_commit_write(rq, rs, t, p, a->rep, a->acc == REST_ACCEPT_OBJECT, upsert,
	    txn, a, &existing, &rows)) {
	case REST_COMMIT_OK:
	case REST_COMMIT_ROLLED_BACK:
		return 0;
	case REST_COMMIT_NOT_ONE:
		return rest_error_not_one(rs, rows);
	case REST_COMMIT_TOO_LARGE:
		return write_too_large(rs);
	case REST_COMMIT_MAX_AFFECTED:
		buf_reset(&rs->body, 1 << 20);
		return rest_error_max_affected(rs, rows);
	case REST_COMMIT_KEY_IN_FLIGHT:
		return rest_idem_in_flight(rs);
	default:
		return 0;
	}
}

/*
 * The representation: the rows' JSON over the written rows (PostgreSQL: the array of them,
 * selected from _w; SQLite: each row's object in RETURNING).
 */
static int
write_returning(struct rest_gen *g, struct rest_node *root)
{
	const char *alias = "_t0";

	if (g->d->ret_table) {
		/* SQLite's RETURNING does not know the statement's alias: name the table
		 * itself. */
		struct buf q;

		buf_init(&q, 4096);
		sqlb_ident(&q, g->sc->tables[root->table].name);
		alias = buf_failed(&q) ? NULL : arena_strndup(g->a, q.data, q.len);
		buf_free(&q);
		if (alias == NULL)
			return -1;
	}
	if (rest_sql_caps_body(g) && g->d->ret_agg) {
		/* Capped in the statement, as a read (select.c): past body_max the whole
		 * statement fails (54000), so nothing is written and the worker never
		 * receives the body. */
		buf_puts(g->sql, ") select ");
		rest_sql_capped_body(g);
		buf_puts(g->sql, " from (select ");
		if (rest_sql_row_json(g, root, alias, g->d->ret_agg) < 0)
			return -1;
		buf_puts(g->sql, " as _b, count(*) as _n from _w _t0) _s");
		return 0;
	}
	buf_puts(g->sql, g->d->ret_open);
	if (rest_sql_row_json(g, root, alias, g->d->ret_agg) < 0)
		return -1;
	buf_puts(g->sql, g->d->ret_close);
	return 0;
}

/* select= for the representation: parsed and resolved, never filters. */
static int
write_select(struct req *rq, struct rest_gen *g, struct rest_node *root, int table)
{
	const struct req_param *sel = req_param(rq, "select");

	if (sel != NULL && rest_parse_select(rq->arena, sel->val, sel->vallen, root, g->e) < 0)
		return -1;
	return rest_resolve(g, root, table);
}

/*
 * Prefer: return=headers-only: the representation is the primary key's columns, to be
 * turned into Location by write_location().  1 when set up, 0 when the table has no
 * primary key (then no Location, as return=minimal), -1 with g->e set.
 */
static int
write_location_select(struct rest_gen *g, struct rest_node *root, const struct rest_table *tb,
    int table)
{
	struct buf s;
	char *sel;
	int i, n = 0;

	buf_init(&s, 4096);
	for (i = 0; i < tb->ncols; i++) {
		if (!tb->cols[i].pk)
			continue;
		if (!write_plain_name(tb->cols[i].name)) {
			buf_free(&s);
			return 0;
		}
		if (n++)
			buf_putc(&s, ',');
		buf_puts(&s, tb->cols[i].name);
	}
	sel = n == 0 || buf_failed(&s) ? NULL : arena_strndup(g->a, s.data, s.len);
	buf_free(&s);
	if (sel == NULL)
		return 0;
	if (rest_parse_select(g->a, sel, strlen(sel), root, g->e) < 0 ||
	    rest_resolve(g, root, table) < 0)
		return -1;
	return 1;
}

/* Appends s percent-encoded (all but RFC 3986's unreserved characters). */
static void
write_pct(struct buf *b, const char *s)
{
	for (; *s != '\0'; s++) {
		unsigned char c = (unsigned char)*s;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '-' || c == '.' || c == '_' || c == '~')
			buf_putc(b, (char)c);
		else
			buf_printf(b, "%%%02X", c);
	}
}

/*
 * The answer of return=headers-only: Location "/<table>?<pk>=eq.<value>&..." of the one
 * row written (PostgREST's), from the representation of its key, and no body.  Returns 0.
 */
static int
write_location(struct resp *rs, const struct rest_table *tb)
{
	cJSON *rows = cJSON_ParseWithLength(rs->body.data ? rs->body.data : "", rs->body.len);
	cJSON *row = cJSON_GetArraySize(rows) == 1 ? cJSON_GetArrayItem(rows, 0) : NULL, *it;
	struct buf loc;
	char sep = '?';

	buf_init(&loc, 8192);
	buf_putc(&loc, '/');
	write_pct(&loc, tb->name);
	cJSON_ArrayForEach(it, row) {
		char *v = cJSON_IsString(it) ? NULL : cJSON_PrintUnformatted(it);

		buf_putc(&loc, sep);
		sep = '&';
		write_pct(&loc, it->string);
		buf_puts(&loc, "=eq.");
		write_pct(&loc, cJSON_IsString(it) ? it->valuestring : v ? v : "");
		cJSON_free(v);
	}
	if (row != NULL && !buf_failed(&loc) && loc.data != NULL)
		resp_header(rs, "Location", loc.data);
	buf_free(&loc);
	cJSON_Delete(rows);
	buf_reset(&rs->body, 1 << 20);
	rs->content_type = NULL;
	return 0;
}

/*
 * What every write starts with: no values yet, the thread's SQL buffer emptied, the
 * generator set up, and the Accept header checked (a write never answers CSV).  Returns
 * 0, or -1 when the error response is already made.
 */
static int
write_start(struct req *rq, struct resp *rs, struct rest_thread *t, struct rest_params *p,
    struct rest_gen *g, struct rest_err *e, enum rest_accept *acc)
{
	rest_params_init(p, rq->arena);
	buf_reset(&t->sql, 1 << 20);
	/* body_max: on PostgreSQL a representation past the response cap fails in the
	 * statement (54000, as SQLite's length limit), before the worker receives it. */
	rest_gen_start(g, t, rq->arena, &t->sql, p, e, t->body_max);
	if ((*acc = rest_accept(rq, t->sc, e)) == REST_ACCEPT_BAD || *acc == REST_ACCEPT_CSV ||
	    *acc >= REST_ACCEPT_GEOJSON) {
		if (*acc != REST_ACCEPT_BAD)
			rest_err_set(e, 406, "PGRST107", NULL, "%s is for reads only",
			    *acc == REST_ACCEPT_CSV ? "text/csv" : *acc == REST_ACCEPT_GEOJSON ?
			    "application/geo+json" : "a query plan");
		(void)rest_error(rs, e);
		return -1;
	}
	return 0;
}

/*
 * For an upsert: the count of the body's rows ($1) whose conflict key is in the table
 * already, "select count(*) from t where (k1, ...) in (select <k1 of each row>, ...)";
 * the same on both back ends, each row named row among rows.  In g's arena; NULL when it
 * does not fit.
 */
static const char *
write_upsert_count(struct rest_gen *g, const struct rest_table *tb, const int *conf,
    int nconf, const char *row, const char *rows)
{
	struct buf q;
	const char *out;
	int i;

	buf_init(&q, REST_SQL_MAX);
	buf_puts(&q, "select count(*) from ");
	sqlb_ident(&q, tb->name);
	buf_puts(&q, " where (");
	for (i = 0; i < nconf; i++) {
		if (i)
			buf_puts(&q, ", ");
		sqlb_ident(&q, tb->cols[conf[i]].name);
	}
	buf_puts(&q, ") in (select ");
	for (i = 0; i < nconf; i++) {
		if (i)
			buf_puts(&q, ", ");
		g->d->json_value(&q, &tb->cols[conf[i]], row, 0);
	}
	buf_puts(&q, rows);
	buf_puts(&q, ")");
	out = buf_failed(&q) || q.data == NULL ? NULL : arena_strndup(g->a, q.data, q.len);
	buf_free(&q);
	return out;
}

/*
 * Column c's value in an INSERT: json_value() of row, or, when obj (a one-object body) has
 * a string for c and the dialect binds one, that string as a parameter of its own (on
 * SQLite the very value json_extract() would give, without parsing the JSON again:
 * docs/benchmarks.md, "A one-object POST reads its columns from the parameter"), except for
 * a JSON column, which keeps the string's JSON text.  At most half the statement's
 * parameters are spent so, to leave the representation's filters theirs.  0, or -1 (e set).
 */
static int
write_value(struct rest_gen *g, struct buf *b, const struct rest_col *c, const cJSON *obj,
    const char *row, int missing)
{
	const cJSON *v;
	int k;

	if (obj != NULL && g->p->vals.n < REST_PARAMS_MAX / 2 && c->kind != REST_K_JSON &&
	    (v = cJSON_GetObjectItemCaseSensitive(obj, c->name)) != NULL &&
	    cJSON_IsString(v)) {
		if ((k = rest_param_text(g, v->valuestring, strlen(v->valuestring))) < 0)
			return -1;
		g->d->bound_value(b, c, k);
	} else
		g->d->json_value(b, c, row, missing);
	return 0;
}

/* The statement's end: returning, then the representation's select of the written rows
 * (rep), or the dialect's minimal answer.  0, or -1 (g's error set). */
static int
write_returning_or_minimal(struct rest_gen *g, struct buf *b, const char *returning,
    struct rest_node *root, int rep)
{
	buf_puts(b, returning);
	if (rep)
		return write_returning(g, root);
	buf_puts(b, g->d->write_minimal);
	return 0;
}

/*
 * How an insert reads its rows from the body.  One object is the row itself where the
 * dialect reads it so (SQLite: json_extract() on the parameter parses it once for all the
 * columns, where a row of json_each() is rendered and parsed again: half the statement's
 * time); else it becomes an array of one, so that both shapes share the statement.
 * Returns 1 for the one object.
 */
static int
write_insert_rows(const struct rest_dialect *d, const cJSON *body, const char **row,
    const char **rows)
{
	int one = cJSON_IsObject(body) && d->insert_one_row != NULL;

	*row = one ? d->insert_one_row : d->insert_row;
	*rows = one ? d->insert_one_rows : d->insert_rows;
	return one;
}

/* An upsert's key: on_conflict='s columns, else the primary key, into conf[0..*nconf).
 * 0, or -1 (e set) for an unknown column or no key at all. */
static int
write_conflict_key(struct req *rq, const struct rest_table *tb, int *conf, int *nconf,
    struct rest_err *e)
{
	const struct req_param *oc = req_param(rq, "on_conflict");
	const char **names;
	size_t n, m;
	int i, k;

	*nconf = 0;
	if (oc != NULL) {
		if (rest_parse_columns(rq->arena, oc->val, oc->vallen, &names, &n, e) < 0)
			return -1;
		for (m = 0; m < n && *nconf < tb->ncols; m++) {
			if ((k = write_col(tb, names[m])) < 0) {
				rest_err_set(e, 400, "42703", NULL,
				    "column %.80s.%.80s does not exist", tb->name, names[m]);
				return -1;
			}
			conf[(*nconf)++] = k;
		}
	} else
		for (i = 0; i < tb->ncols; i++)
			if (tb->cols[i].pk)
				conf[(*nconf)++] = i;
	if (*nconf == 0) {
		rest_err_set(e, 400, "PGRST100", NULL,
		    "an upsert needs on_conflict= or a primary key");
		return -1;
	}
	return 0;
}

/* The body as the statement's parameter, into *jlen: the body itself, or with wrap one
 * object made an array of one.  NULL past the arena's cap. */
static const char *
write_rows_json(struct req *rq, int wrap, size_t *jlen)
{
	char *w;

	*jlen = rq->body_len;
	if (!wrap)
		return rq->body;
	if ((w = arena_alloc(rq->arena, rq->body_len + 3)) == NULL)
		return NULL;
	w[0] = '[';
	memcpy(w + 1, rq->body, rq->body_len);
	w[rq->body_len + 1] = ']';
	w[rq->body_len + 2] = '\0';
	*jlen = rq->body_len + 2;
	return w;
}

/* "insert into t (c, ...) select v, ... ROWS" (or "default values" without columns),
 * the values read from each row (or bound from the one object bound).  0, or -1 (g's
 * error set). */
static int
write_insert_into(struct rest_gen *g, struct buf *b, const struct rest_table *tb,
    const int *cols, int ncols, const cJSON *bound, const char *row, const char *rows,
    int missing)
{
	int i;

	buf_puts(b, g->d->write_open);
	buf_puts(b, "insert into ");
	sqlb_ident(b, tb->name);
	buf_puts(b, g->d->insert_alias);
	if (ncols == 0)
		buf_puts(b, " default values");
	else
		buf_puts(b, " (");
	for (i = 0; i < ncols; i++) {
		if (i)
			buf_puts(b, ", ");
		sqlb_ident(b, tb->cols[cols[i]].name);
	}
	for (i = 0; i < ncols; i++) {
		buf_puts(b, i ? ", " : ") select ");
		if (write_value(g, b, &tb->cols[cols[i]], bound, row, missing) < 0)
			return -1;
	}
	if (ncols > 0)
		buf_puts(b, rows);
	return 0;
}

/* An upsert's "on conflict (key) do update set c = excluded.c, ..." (merge) or "do
 * nothing". */
static void
write_on_conflict(struct buf *b, const struct rest_table *tb, const int *cols, int ncols,
    const int *conf, int nconf, int merge)
{
	int any = 0, i, j;

	buf_puts(b, " on conflict (");
	for (i = 0; i < nconf; i++) {
		if (i)
			buf_puts(b, ", ");
		sqlb_ident(b, tb->cols[conf[i]].name);
	}
	buf_puts(b, ")");
	for (i = 0; merge && i < ncols; i++) {
		for (j = 0; j < nconf; j++)
			if (conf[j] == cols[i])
				break;
		if (j < nconf)
			continue;
		buf_puts(b, any++ ? ", " : " do update set ");
		sqlb_ident(b, tb->cols[cols[i]].name);
		buf_puts(b, " = excluded.");
		sqlb_ident(b, tb->cols[cols[i]].name);
	}
	if (!any && merge) {
		/* Every column is in the key: a no-op update still returns the row. */
		buf_puts(b, " do update set ");
		sqlb_ident(b, tb->cols[conf[0]].name);
		buf_puts(b, " = excluded.");
		sqlb_ident(b, tb->cols[conf[0]].name);
	} else if (!any)
		buf_puts(b, " do nothing");
}

/* The body read and checked for an insert: its shape, its columns (into cols[0..*ncols),
 * plain names only), the representation's select (rep) or the Location's (*loc, set to
 * whether it is asked and made).  The body, or NULL (e set). */
static cJSON *
write_insert_body(struct req *rq, struct rest_gen *g, struct rest_node *root, int table,
    int *cols, int *ncols, int rep, int *loc, struct rest_err *e)
{
	const struct rest_table *tb = &g->sc->tables[table];
	cJSON *body;
	int i;

	if ((body = rest_body_json(rq, WRITE_JSON_DEPTH, e)) == NULL)
		return NULL;
	if (write_shape(body, 1, e) < 0 || write_columns(rq, tb, body, cols, ncols, e) < 0 ||
	    (rep && write_select(rq, g, root, table) < 0) ||
	    (*loc && (*loc = write_location_select(g, root, tb, table)) < 0))
		goto err;
	for (i = 0; i < *ncols; i++)
		if (!write_plain_name(tb->cols[cols[i]].name)) {
			write_unknown_col(e, tb->name, tb->cols[cols[i]].name);
			goto err;
		}
	return body;
err:
	cJSON_Delete(body);
	return NULL;
}

/*
 * {} (or [{}]) names no column: one row of column defaults, as PostgREST inserts it.
 * Several rows of nothing, or an upsert of nothing, have no statement: -1 (e set).
 */
static int
write_defaults_ok(const cJSON *body, int ncols, int upsert, struct rest_err *e)
{
	if (ncols == 0 && (upsert || (cJSON_IsArray(body) && cJSON_GetArraySize(body) != 1))) {
		write_bad_body(e, "Objects without keys: only one row of defaults can be inserted",
		    NULL);
		return -1;
	}
	return 0;
}

/* An empty array inserts nothing: 201, with [] for a representation. */
static int
write_insert_nothing(struct resp *rs, int rep)
{
	resp_header(rs, "Content-Range", "*/*");
	if (rep)
		return resp_set(rs, 201, "application/json; charset=utf-8", "[]", 2);
	rs->status = 201;
	return 0;
}

int
rest_insert(struct req *rq, struct resp *rs, struct rest_thread *t, int table)
{
	const struct rest_table *tb = &t->sc->tables[table];
	struct rest_params *p = arena_alloc(rq->arena, sizeof(*p));
	struct rest_node *root = rest_node_new(rq->arena, NULL);
	int *cols = arena_alloc(rq->arena, (size_t)(tb->ncols + 1) * sizeof(int));
	int *conf = arena_alloc(rq->arena, (size_t)(tb->ncols + 1) * sizeof(int));
	int rep = rest_prefer(rq, "return=representation");
	int merge = rest_prefer(rq, "resolution=merge-duplicates");
	int ignore = rest_prefer(rq, "resolution=ignore-duplicates");
	int loc = !rep && rest_prefer(rq, "return=headers-only");
	int ncols = 0, nconf = 0, one;
	struct rest_answer ans = { 0 };
	enum rest_accept acc;
	struct rest_err e;
	struct rest_gen g;
	cJSON *body = NULL;
	const cJSON *bound;
	const char *json, *upsert = NULL, *row, *rows;
	size_t jlen;
	struct buf *b = &t->sql;
	int64_t nbody;

	if (p == NULL || root == NULL || cols == NULL || conf == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	if (write_start(rq, rs, t, p, &g, &e, &acc) < 0)
		return 0;
	if ((body = write_insert_body(rq, &g, root, table, cols, &ncols, rep, &loc, &e)) ==
	    NULL || ((merge || ignore) && write_conflict_key(rq, tb, conf, &nconf, &e) < 0))
		goto err;
	rep = rep || loc;
	if (cJSON_IsArray(body) && cJSON_GetArraySize(body) == 0) {
		cJSON_Delete(body);
		return write_insert_nothing(rs, rep);
	}
	if (write_defaults_ok(body, ncols, merge || ignore, &e) < 0)
		goto err;
	one = write_insert_rows(t->d, body, &row, &rows);
	if ((json = write_rows_json(rq, !one && cJSON_IsObject(body), &jlen)) == NULL)
		goto toolarge;
	nbody = cJSON_IsArray(body) ? cJSON_GetArraySize(body) : 1;
	/* Strings bound alone point into body: then it lives until the write ran (one
	 * object); else its tree goes now, before the statement's own parse. */
	bound = one && !merge && !ignore && t->d->bound_value != NULL ? body : NULL;
	if (bound == NULL) {
		cJSON_Delete(body);
		body = NULL;
	}
	if ((ncols > 0 && rest_param_text(&g, json, jlen) < 0) ||
	    write_insert_into(&g, b, tb, cols, ncols, bound, row, rows,
	    rest_prefer(rq, "missing=default")) < 0)
		goto err;
	if (merge || ignore)
		write_on_conflict(b, tb, cols, ncols, conf, nconf, merge);
	if (write_returning_or_minimal(&g, b, t->d->insert_returning, root, rep) < 0)
		goto err;
	if (buf_failed(b))
		goto toolarge;
	if (merge && (upsert = write_upsert_count(&g, tb, conf, nconf, row, rows)) == NULL)
		goto toolarge;
	ans.rep = rep;
	ans.acc = acc;
	ans.created = 1;
	ans.nbody = nbody;
	ans.location = loc ? tb : NULL;
	(void)write_run(rq, rs, t, p, &ans, upsert);
	cJSON_Delete(body);
	return 0;
err:
	cJSON_Delete(body);
	return rest_error(rs, &e);
toolarge:
	cJSON_Delete(body);
	return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
}

static const char *const write_skip[] = { "select", "columns", "on_conflict", NULL };

/* A PATCH's body read and checked: one object whose keys are columns of tb, each once.
 * The body, or NULL (e set). */
static cJSON *
write_patch_body(struct req *rq, const struct rest_table *tb, struct rest_err *e)
{
	cJSON *body, *it;

	if ((body = rest_body_json(rq, WRITE_JSON_DEPTH, e)) == NULL)
		return NULL;
	if (write_shape(body, 0, e) < 0)
		goto err;
	cJSON_ArrayForEach(it, body) {
		if (write_col(tb, it->string) < 0 || !write_plain_name(it->string)) {
			write_unknown_col(e, tb->name, it->string);
			goto err;
		}
		if (cJSON_GetObjectItemCaseSensitive(body, it->string) != it) {
			write_bad_body(e, "A key appears twice in the object", it->string);
			goto err;
		}
	}
	return body;
err:
	cJSON_Delete(body);
	return NULL;
}

/* A PATCH's " set c = <the body's c>, ...", the body bound as parameter b1. */
static void
write_set(struct buf *b, const struct rest_dialect *d, const struct rest_table *tb,
    const cJSON *body, int b1)
{
	const cJSON *it;
	const char *sep = "";
	char src[24];

	(void)snprintf(src, sizeof(src), "%s%d%s", d->patch_open, b1, d->patch_close);
	buf_puts(b, " set ");
	cJSON_ArrayForEach(it, body) {
		buf_puts(b, sep);
		sep = ", ";
		sqlb_ident(b, it->string);
		buf_puts(b, " = ");
		d->json_value(b, &tb->cols[write_col(tb, it->string)], src, 0);
	}
}

int
rest_update_delete(struct req *rq, struct resp *rs, struct rest_thread *t, int table)
{
	const struct rest_table *tb = &t->sc->tables[table];
	struct rest_params *p = arena_alloc(rq->arena, sizeof(*p));
	struct rest_node *root = rest_node_new(rq->arena, NULL);
	struct rest_node *filters = rest_node_new(rq->arena, NULL);
	int rep = rest_prefer(rq, "return=representation");
	int del = rq->method == REQ_DELETE, b1 = 0;
	struct rest_answer ans = { 0 };
	enum rest_accept acc;
	struct rest_err e;
	struct rest_gen g;
	cJSON *body = NULL;
	struct buf *b = &t->sql;

	if (p == NULL || root == NULL || filters == NULL)
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	if (write_start(rq, rs, t, p, &g, &e, &acc) < 0)
		return 0;
	/* Filters apply to the table; select= only shapes the representation. */
	filters->name = tb->name;
	if (rest_apply_params(rq, filters, write_skip, NULL, &e) < 0)
		goto err;
	filters->items = NULL;
	filters->nitems = 0;
	/* A forgotten filter must not change every row (pg-safeupdate's answer). */
	if (!t->unfiltered_writes && (filters->where == NULL || filters->where->nkids == 0)) {
		rest_err_set(&e, 400, "21000", "set rest_unfiltered_writes=1 on the endpoint to "
		    "allow it", "%s requires a filter (a WHERE clause)", del ? "DELETE" :
		    "UPDATE");
		goto err;
	}
	if (rest_resolve(&g, filters, table) < 0 || (rep && write_select(rq, &g, root, table) < 0))
		goto err;
	if (!del) {
		if ((body = write_patch_body(rq, tb, &e)) == NULL)
			goto err;
		if (cJSON_GetArraySize(body) == 0) {
			/* Nothing to set: PostgREST answers as if no row matched. */
			cJSON_Delete(body);
			rs->status = rep ? 200 : 204;
			if (rep)
				return resp_set(rs, 200, "application/json; charset=utf-8", "[]", 2);
			return 0;
		}
		if ((b1 = rest_param_text(&g, rq->body, rq->body_len)) < 0)
			goto err;
	}
	buf_puts(b, t->d->write_open);
	buf_puts(b, del ? "delete from " : "update ");
	sqlb_ident(b, tb->name);
	buf_puts(b, t->d->write_alias);
	if (!del)
		write_set(b, t->d, tb, body, b1);
	g.seq = 100;
	if (rest_sql_where(&g, filters, "_t0", 1) < 0)
		goto err;
	if (write_returning_or_minimal(&g, b, t->d->update_returning, root, rep) < 0)
		goto err;
	cJSON_Delete(body);
	if (buf_failed(b))
		return resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
	ans.rep = rep;
	ans.acc = acc;
	return write_run(rq, rs, t, p, &ans, NULL);
err:
	cJSON_Delete(body);
	return rest_error(rs, &e);
}
