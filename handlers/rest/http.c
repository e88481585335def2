/*
 * http.c: the HTTP side of the rest endpoint, what a request says besides its resource and
 * how a read is answered.
 *
 *   Prefer   comma-separated tokens (return=representation, count=exact, ...)
 *   Accept   application/json (and any), text/csv, application/vnd.pgrst.object+json;
 *            anything else is 406 PGRST107
 *   Range    "N-M" or "items=N-M" as offset and limit, when the query gave neither; a
 *            bad one is 416 PGRST103
 *   the query's parameters: select= first, then every other as a filter, order, limit,
 *            offset or embed parameter (parse.c), the verb's own (columns=, a function's
 *            arguments) left out; a key or value that is not UTF-8 is 400 PGRST100
 *   a read's answer: 200, or 206 when a count shows a partial page; Content-Range
 *            "first-last/total" (an asterisk for an unknown total, or in place of
 *            first-last for an empty page); 416 PGRST103 for an offset past the end; 406
 *            PGRST116 when one object was asked for and the rows were not one; the body
 *            as JSON, CSV (with its header line) or the one object.
 */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "json.h"
#include "log.h"
#include "rest.h"
#include "serve.h"
#include "str.h"

/* Is token (e.g. "count=exact") one of the comma-separated values of Prefer? */
cJSON *
rest_body_json(const struct req *rq, int depth, struct rest_err *e)
{
	enum json_err err;
	size_t pos = 0;
	cJSON *v;
	char d[96];

	/* A form or text/plain POST needs no preflight: only JSON may write. */
	if (!req_content_type_is(rq, "application/json")) {
		rest_err_set(e, 415, "PGRST107", "a request body must be sent as application/json",
		    "Content-Type not acceptable");
		return NULL;
	}
	if (rq->body == NULL || rq->body_len == 0) {
		rest_err_set(e, 400, "PGRST102", NULL, "Empty or invalid json");
		return NULL;
	}
	if ((v = json_parse(rq->body, rq->body_len, depth, &err, &pos)) == NULL) {
		if (err == JSON_ETOODEEP)
			(void)snprintf(d, sizeof(d), "nested deeper than %d levels", depth);
		else
			(void)snprintf(d, sizeof(d), "invalid JSON near byte %zu", pos);
		rest_err_set(e, 400, "PGRST102", d, "Empty or invalid json");
		return NULL;
	}
	/* Never stored cut ("a\u0000b" as "a") nor as a number no reader can parse back. */
	if (json_has_nul_escape(rq->body, rq->body_len)) {
		rest_err_set(e, 400, "PGRST102", "a string holds \\u0000, which cannot be stored",
		    "Empty or invalid json");
		cJSON_Delete(v);
		return NULL;
	}
	if (!json_numbers_finite(v)) {
		rest_err_set(e, 400, "PGRST102", "a number is too large to be finite (1e999)",
		    "Empty or invalid json");
		cJSON_Delete(v);
		return NULL;
	}
	return v;
}

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

struct db_stmt *
rest_bind(struct db *db, const struct rest_thread *t, const struct rest_params *p)
{
	struct db_stmt *st;
	int i;

	log_debug("rest: %s", t->sql.data);
	if ((st = db_prepare(db, t->sql.data)) == NULL)
		return NULL;
	for (i = 0; i < p->n; i++) {
		if (p->isnull[i])
			db_bind_null(st, i + 1);
		else if (p->isint[i])
			db_bind_int(st, i + 1, p->iv[i]);
		else
			db_bind_text(st, i + 1, p->v[i], p->len[i]);
	}
	return st;
}

int
rest_bind_run(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, struct db_stmt **out)
{
	if ((*out = rest_bind(rq->db, t, p)) == NULL)
		return serve_db_error(rs, rq->db), -1;
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
int
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
		return serve_db_error(rs, rq->db);
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

