/*
 * http.c: the HTTP side of the rest endpoint, what a request says besides its resource and
 * how a read is answered.
 *
 *   Prefer   comma-separated tokens (return=representation, count=exact, ...); unknown
 *            ones ignored under handling=lenient (the default), 400 PGRST122 under
 *            handling=strict; the honoured ones echoed in Preference-Applied
 *   Accept   application/json (and any), text/csv, application/vnd.pgrst.object+json,
 *            application/vnd.pgrst.plan[+text|+json] with options= (PostgreSQL's EXPLAIN),
 *            application/geo+json (PostgreSQL with PostGIS: a FeatureCollection);
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
 *   a table the schema does not hold: 404 PGRST205 (PostgREST 13), or under
 *            rest_dialect_version=12 PostgREST 12's answer, which depends on the request
 *            (PGRST200 for an embed, 404 {} for a write naming columns, else 42P01).
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

/* The tokens sluice honours; a value NULL takes an integer (max-affected=N). */
static const struct {
	const char *key;
	const char *const vals[4];
} rest_pref_known[] = {
	{ "return", { "minimal", "representation", "headers-only", NULL } },
	{ "count", { "exact", "planned", "estimated", NULL } },
	{ "resolution", { "merge-duplicates", "ignore-duplicates", NULL } },
	{ "missing", { "default", "null", NULL } },
	{ "handling", { "strict", "lenient", NULL } },
	{ "tx", { "commit", "rollback", NULL } },
	{ "max-affected", { NULL } },
};

/* 1 when tok[0..len) is a token of rest_pref_known; *maxn gets max-affected's count. */
static int
rest_pref_valid(const char *tok, size_t len, int64_t *maxn)
{
	const char *eq = memchr(tok, '=', len);
	size_t k, i, klen;

	if (eq == NULL)
		return 0;
	klen = (size_t)(eq - tok);
	for (k = 0; k < sizeof(rest_pref_known) / sizeof(rest_pref_known[0]); k++) {
		if (!str_eq(tok, klen, rest_pref_known[k].key))
			continue;
		if (rest_pref_known[k].vals[0] == NULL)
			return str_to_int(eq + 1, len - klen - 1, 0, INT64_MAX, maxn) == 0;
		for (i = 0; rest_pref_known[k].vals[i] != NULL; i++)
			if (str_eq(eq + 1, len - klen - 1, rest_pref_known[k].vals[i]))
				return 1;
		return 0;
	}
	return 0;
}

int
rest_prefs_read(const struct req *rq, struct rest_prefs *pf, struct rest_err *e)
{
	const char *h = req_header(rq, "Prefer"), *s, *end;
	char bad[200];
	size_t alen = 0, blen = 0;
	int64_t maxn = -1, n;
	int strict;

	memset(pf, 0, sizeof(*pf));
	pf->max_affected = -1;
	bad[0] = '\0';
	if (h == NULL)
		return 0;
	strict = rest_prefer(rq, "handling=strict");
	for (s = h; *s != '\0'; s = *end ? end + 1 : end) {
		size_t len;

		while (*s == ' ' || *s == '\t')
			s++;
		for (end = s; *end != '\0' && *end != ','; end++)
			continue;
		len = (size_t)(end - s);
		while (len > 0 && (s[len - 1] == ' ' || s[len - 1] == '\t'))
			len--;
		if (len == 0)
			continue;
		n = -1;
		if (!rest_pref_valid(s, len, &n)) {
			int m = snprintf(bad + blen, sizeof(bad) - blen, "%s%.*s", blen ? ", " : "",
			    (int)(len > 60 ? 60 : len), s);

			if (m > 0 && (size_t)m < sizeof(bad) - blen)
				blen += (size_t)m;
			continue;
		}
		if (n >= 0 && !strict)
			continue;	/* max-affected is honoured under handling=strict only */
		if (n >= 0)
			maxn = n;
		if (str_eq(s, len, "count=exact"))
			pf->count = REST_COUNT_EXACT;
		else if (str_eq(s, len, "count=planned"))
			pf->count = REST_COUNT_PLANNED;
		else if (str_eq(s, len, "count=estimated"))
			pf->count = REST_COUNT_ESTIMATED;
		else if (str_eq(s, len, "tx=rollback"))
			pf->rollback = 1;
		else if (str_eq(s, len, "tx=commit"))
			pf->rollback = 0;
		if (alen + len + 2 < sizeof(pf->applied)) {
			if (alen) {
				memcpy(pf->applied + alen, ", ", 2);
				alen += 2;
			}
			memcpy(pf->applied + alen, s, len);
			alen += len;
			pf->applied[alen] = '\0';
		}
	}
	if (strict) {
		if (blen > 0) {
			rest_err_set(e, 400, "PGRST122", NULL,
			    "Invalid preferences given with handling=strict");
			(void)snprintf(e->details, sizeof(e->details), "Invalid preferences: %s",
			    bad);
			return -1;
		}
		pf->max_affected = maxn;
	}
	return 0;
}

/* Prepares sql on db and binds p as $1..$n.  The statement is db's; NULL with the error on
 * db. */
static struct db_stmt *
rest_prepare_bound(struct db *db, const char *sql, const struct rest_params *p)
{
	struct db_stmt *st;

	if ((st = db_prepare(db, sql)) == NULL)
		return NULL;
	if (sqlb_bind_all(&p->vals, st) < 0) {
		db_reset(st);
		return NULL;
	}
	return st;
}

int
rest_count_planned(struct req *rq, struct rest_thread *t, struct rest_node *root,
    int table, int64_t *n)
{
	struct rest_params *p = arena_alloc(rq->arena, sizeof(*p));
	struct rest_err e;
	struct rest_gen g;
	struct buf sql;
	struct db_stmt *st = NULL;
	const char *plan, *rows;
	int rc = -1, i;

	if (t->d->explain == NULL || p == NULL)
		return -1;
	rest_params_init(p, rq->arena);
	buf_init(&sql, REST_SQL_MAX);
	rest_gen_start(&g, t, rq->arena, &sql, p, &e, 0);
	g.seq = 1000;
	buf_puts(&sql, t->d->explain);
	buf_puts(&sql, "select 1 from ");
	sqlb_ident(&sql, t->sc->tables[table].name);
	buf_puts(&sql, " _t0 where true");
	if (rest_sql_filters(&g, root, "_t0") < 0 || buf_failed(&sql))
		goto out;
	if ((st = rest_prepare_bound(rq->db, sql.data, p)) == NULL)
		goto out;
	if (db_step(st) == DB_ROW && (plan = db_column_text(st, 0, NULL)) != NULL &&
	    (rows = strstr(plan, "\"Plan Rows\": ")) != NULL) {
		rows += strlen("\"Plan Rows\": ");
		for (i = 0; rows[i] >= '0' && rows[i] <= '9' && i < 18; i++)
			continue;
		if (str_to_int(rows, (size_t)i, 0, INT64_MAX, n) == 0)
			rc = 0;
	}
	db_reset(st);
out:
	if (rc < 0)
		log_warn("rest: no planner estimate for %s", t->sc->tables[table].name);
	buf_free(&sql);
	return rc;
}

/* Does the Accept header ask for mime (or is it absent / any)? */
static int
rest_accepts(const char *accept, const char *mime)
{
	return accept != NULL && strstr(accept, mime) != NULL;
}

enum rest_accept
rest_accept(const struct req *rq, const struct rest_schema *sc, struct rest_err *e)
{
	const char *a = req_header(rq, "Accept");

	if (a == NULL || *a == '\0')
		return REST_ACCEPT_JSON;
	if (strncmp(a, "application/vnd.pgrst.plan", 26) == 0)
		return strncmp(a + 26, "+json", 5) == 0 ? REST_ACCEPT_PLAN_JSON : REST_ACCEPT_PLAN;
	if (rest_accepts(a, "application/vnd.pgrst.object"))
		return REST_ACCEPT_OBJECT;
	if (rest_accepts(a, "text/csv"))
		return REST_ACCEPT_CSV;
	if (sc->geojson != NULL && rest_accepts(a, "application/geo+json"))
		return REST_ACCEPT_GEOJSON;
	if (rest_accepts(a, "application/json") || rest_accepts(a, "*/*") ||
	    rest_accepts(a, "application/*"))
		return REST_ACCEPT_JSON;
	rest_err_set(e, 406, "PGRST107", NULL, "None of these media types are available: %.200s",
	    a);
	return REST_ACCEPT_BAD;
}

enum rest_shape
rest_shape_of(enum rest_accept acc)
{
	if (acc == REST_ACCEPT_CSV)
		return REST_SHAPE_CSV;
	return acc == REST_ACCEPT_GEOJSON ? REST_SHAPE_GEOJSON : REST_SHAPE_JSON;
}

int
rest_plan_prefix(const struct req *rq, const struct rest_thread *t, enum rest_accept acc,
    struct buf *b, struct rest_err *e)
{
	static const char *const opts[] = { "analyze", "verbose", "settings", "buffers", "wal",
		NULL };
	const char *a = req_header(rq, "Accept"), *o, *end;
	int i;

	buf_printf(b, "explain (format %s", acc == REST_ACCEPT_PLAN_JSON ? "json" : "text");
	if (a != NULL && (o = strstr(a, "options=")) != NULL) {
		for (o += 8; *o != '\0' && *o != ';' && *o != ' '; o = *end == '|' ? end + 1 : end) {
			for (end = o; *end != '\0' && *end != '|' && *end != ';' && *end != ' ';
			    end++)
				continue;
			for (i = 0; opts[i] != NULL; i++)
				if (str_eq(o, (size_t)(end - o), opts[i]))
					break;
			if (opts[i] == NULL) {
				rest_err_set(e, 406, "PGRST107", NULL, "unknown plan option in %.200s",
				    a);
				return -1;
			}
			buf_printf(b, ", %s", opts[i]);
		}
	}
	if (t->d->explain == NULL) {
		rest_err_set(e, 406, "PGRST107", NULL, "a query plan is PostgreSQL's only");
		return -1;
	}
	buf_puts(b, ") ");
	return 0;
}

struct db_stmt *
rest_bind(struct db *db, const struct rest_thread *t, const struct rest_params *p)
{
	log_debug("rest: %s", t->sql.data);
	return rest_prepare_bound(db, t->sql.data, p);
}

int
rest_txn_begin(struct req *rq, struct rest_thread *t)
{
	if (t->in_txn)
		return 0;
	if (db_begin(rq->db, rq->method == REQ_GET || rq->method == REQ_HEAD ? DB_TXN_READ :
	    DB_TXN_WRITE) < 0)
		return -1;
	t->in_txn = 1;
	return 0;
}

int
rest_count_rows(struct db *db, const char *sql, const struct rest_params *p, int64_t *n)
{
	struct db_stmt *st;

	if ((st = db_prepare(db, sql)) == NULL)
		return -1;
	if (p->vals.n < 1 ||
	    db_bind_text(st, 1, p->vals.v[0].s, p->vals.v[0].len) < 0 || db_step(st) != DB_ROW) {
		db_reset(st);
		return -1;
	}
	*n = db_column_int(st, 0);
	db_reset(st);
	return 0;
}

int
rest_bind_run(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, struct db_stmt **out)
{
	if ((*out = rest_bind(rq->db, t, p)) == NULL)
		return rest_db_error(rs, t, rq->db), -1;
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

/* "lo-hi/total", "*" for what is unknown or empty: three integers of at most STR_INT_MAX
 * bytes. */
#define REST_RANGE_MAX	(3 * STR_INT_MAX + 4)

/* A read's Content-Range into range[REST_RANGE_MAX]: rows rows from off, of total (-1:
 * not counted). */
static void
rest_content_range(char *range, int64_t off, int64_t rows, int64_t total)
{
	char *rp = range;

	if (rows > 0) {
		rp += str_from_int(rp, off);
		*rp++ = '-';
		rp += str_from_int(rp, off + rows - 1);
	} else
		*rp++ = '*';
	*rp++ = '/';
	if (total >= 0)
		rp += str_from_int(rp, total);
	else
		*rp++ = '*';
	*rp = '\0';
}

/* A read's body[0..len) as the client accepts it: CSV under its header, GeoJSON as it
 * is, the one object of an array (bare: the statement's body has no brackets), or the JSON array. */
static void
rest_read_body(struct resp *rs, enum rest_accept acc, int bare, const char *csv_header,
    const char *body, size_t len)
{
	buf_reset(&rs->body, 1 << 20);
	if (acc == REST_ACCEPT_CSV) {
		rs->content_type = "text/csv; charset=utf-8";
		buf_puts(&rs->body, csv_header);
		if (len > 0)
			buf_putc(&rs->body, '\n');
		buf_append(&rs->body, body, len);
	} else if (acc == REST_ACCEPT_GEOJSON) {
		rs->content_type = "application/geo+json; charset=utf-8";
		buf_append(&rs->body, body, len);
	} else if (acc == REST_ACCEPT_OBJECT) {
		rs->content_type = "application/vnd.pgrst.object+json; charset=utf-8";
		/* "[{...}]" -> "{...}": the one element, without parsing it. */
		if (bare)
			buf_append(&rs->body, body, len);
		else
			buf_append(&rs->body, body + 1, len - 2);
	} else {
		rs->content_type = "application/json; charset=utf-8";
		if (bare)
			buf_putc(&rs->body, '[');
		buf_append(&rs->body, body, len);
		if (bare)
			buf_putc(&rs->body, ']');
	}
}

/*
 * Runs the prepared read (body, rows[, total]) and answers it: status, Content-Range,
 * the singular object or CSV as asked; the brackets of a body whose top array g wrote
 * bare.
 */
int
rest_answer_read(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_gen *g, const struct rest_node *root, enum rest_accept acc,
    int count, int64_t planned, const char *csv_header)
{
	struct db_stmt *st;
	const char *body;
	size_t len;
	int64_t rows, total = -1, off = root->offset;
	char range[REST_RANGE_MAX];
	struct rest_err e;

	if (rest_bind_run(rq, rs, t, g->p, &st) < 0)
		return 0;
	if (db_step(st) != DB_ROW)
		return rest_db_error(rs, t, rq->db);
	body = db_column_text(st, 0, &len);
	rows = db_column_int(st, 1);
	t->rows = rows;
	if (count)
		total = db_column_int(st, 2);
	if (g->resp_settings)
		rest_resp_capture(rq->arena, t, st, count ? 3 : 2);
	else if (planned >= 0) {
		/* An estimate: never below what this page shows. */
		count = 1;
		total = planned < off + rows ? off + rows : planned;
	}
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
		return rest_error_not_one(rs, rows);
	}
	rest_content_range(range, off, rows, count ? total : -1);
	resp_header(rs, "Content-Range", range);
	rs->status = count && (off > 0 || rows < total) ? 206 : 200;
	rest_read_body(rs, acc, g->bare, csv_header, body, len);
	db_reset(st);
	if (buf_failed(&rs->body))
		return resp_error(rs, 500, "internal", "the response is too large", NULL, NULL);
	return 0;
}

int
rest_answer_rows(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_node *root, enum rest_accept acc, int64_t rows)
{
	char range[REST_RANGE_MAX];

	(void)rq;
	t->rows = rows;
	if (buf_failed(&rs->body))
		return resp_error(rs, 500, "internal", "the response is too large", NULL, NULL);
	if (acc == REST_ACCEPT_OBJECT && rows != 1)
		return rest_error_not_one(rs, rows);
	rest_content_range(range, root->offset, rows, -1);
	resp_header(rs, "Content-Range", range);
	rs->status = 200;
	if (acc == REST_ACCEPT_OBJECT) {
		/* "[{...}]" -> "{...}" */
		rs->content_type = "application/vnd.pgrst.object+json; charset=utf-8";
		memmove(rs->body.data, rs->body.data + 1, rs->body.len - 2);
		buf_truncate(&rs->body, rs->body.len - 2);
	} else
		rs->content_type = "application/json; charset=utf-8";
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

/*
 * PostgREST 12 on a table its schema cache does not hold: its plan resolved the embeds
 * first, and an embed (or spread) of a parent it did not know is a relationship it could
 * not find: 400 PGRST200, its details in the words resolve_rel() uses (names.c), its hint
 * the closest table that has relationships.  0 when select= embeds nothing.
 */
static int
missing_embed12(struct resp *rs, const struct rest_thread *t, const char *name,
    const struct rest_node *root)
{
	const struct rest_node *n = NULL;
	const char *pick;
	char d[512], m[384], h[256];
	size_t i;

	for (i = 0; i < root->nitems && n == NULL; i++)
		if (root->items[i].kind == REST_I_EMBED)
			n = root->items[i].embed;
	if (n == NULL)
		return 0;
	if (n->hint != NULL)
		(void)snprintf(d, sizeof(d), "Searched for a foreign key relationship between "
		    "'%.100s' and '%.100s' using the hint '%.100s' in the schema '%.63s', but no "
		    "matches were found.", name, n->name, n->hint, t->scname);
	else
		(void)snprintf(d, sizeof(d), "Searched for a foreign key relationship between "
		    "'%.100s' and '%.100s' in the schema '%.63s', but no matches were found.", name,
		    n->name, t->scname);
	(void)snprintf(m, sizeof(m), "Could not find a relationship between '%.100s' and "
	    "'%.100s' in the schema cache", name, n->name);
	if ((pick = rest_names_closest_related(t->sc, name)) != NULL)
		(void)snprintf(h, sizeof(h), "Perhaps you meant '%.100s' instead of '%.100s'.",
		    pick, name);
	resp_error(rs, 400, "PGRST200", m, d, pick != NULL ? h : NULL);
	return 1;
}

/* Whether a POST's or PATCH's columns= or body names a column: PostgREST 12 looked
 * them up in a table it did not find.  0 or 1, or -1 with e set (the body's errors). */
static int
missing_names_cols12(struct req *rq, struct rest_err *e)
{
	const struct req_param *cp = req_param(rq, "columns");
	const char **names;
	size_t n;
	cJSON *body, *first;
	int named;

	/* The body is read first, as PostgREST 12 read it before its plan; a write's depth
	 * (write.c). */
	if ((body = rest_body_json(rq, 32, e)) == NULL)
		return -1;
	if (cp != NULL) {
		cJSON_Delete(body);
		if (rest_parse_columns(rq->arena, cp->val, cp->vallen, &names, &n, e) < 0)
			return -1;
		return n > 0;
	}
	first = cJSON_IsArray(body) ? cJSON_GetArrayItem(body, 0) : body;
	named = cJSON_IsObject(first) && first->child != NULL;
	cJSON_Delete(body);
	return named;
}

int
rest_missing_table(struct req *rq, struct resp *rs, const struct rest_thread *t,
    const char *name)
{
	static const char *const skip[] = { "select", "columns", "on_conflict", NULL };
	struct rest_node *root;
	struct rest_err e;
	char d[256];
	int named;

	if (!t->pgrst12) {
		(void)snprintf(d, sizeof(d), "Could not find the table '%.63s.%.100s' in the schema "
		    "cache", t->scname, name);
		return resp_error(rs, 404, "PGRST205", d, NULL, NULL);
	}
	/* 12: the query is read and the plan made before PostgreSQL is asked. */
	if ((root = rest_node_new(rq->arena, NULL)) == NULL)
		return resp_error(rs, 500, "internal", "out of memory", NULL, NULL);
	root->name = name;
	if (rest_apply_params(rq, root, skip, NULL, &e) < 0)
		return rest_error(rs, &e);
	if (missing_embed12(rs, t, name, root))
		return 0;
	if (rq->method == REQ_POST || rq->method == REQ_PATCH) {
		if ((named = missing_names_cols12(rq, &e)) < 0)
			return rest_error(rs, &e);
		/* Its NotFound: no code, no message, an empty object. */
		if (named)
			return resp_set(rs, 404, "application/json; charset=utf-8", "{}", 2), 0;
	}
	(void)snprintf(d, sizeof(d), "relation \"%.63s.%.100s\" does not exist", t->scname,
	    name);
	return resp_error(rs, 404, "42P01", d, NULL, NULL);
}
