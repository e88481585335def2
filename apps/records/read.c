/*
 * read.c: the records API's reads: list and view, the expand of relations (one query per
 * expand node for the whole page, or a list's one single relation joined to its page's
 * statement: rec_join()), and the record's JSON (see read.h).
 */
#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "json.h"
#include "log.h"
#include "read.h"
#include "str.h"

/* Appends the columns of c as "t.\"id\", t.\"title\", ..." to b. */
static void
rec_columns(struct buf *b, const struct coll *c, const char *alias)
{
	size_t i;

	for (i = 0; i < c->nfields; i++) {
		if (i > 0)
			buf_puts(b, ", ");
		sqlb_col(b, alias, c->fields[i].name);
	}
}

/* 1 when the text value of a bool column is true. */
static int
rec_truthy(const char *v)
{
	return v != NULL && (v[0] == 't' || v[0] == '1');
}

/*
 * Reads the record that the page's statement joined to row r (rec_join()): the columns
 * of x->join's collection from column x->join_col on, attached as r's only expanded
 * record of node 0, none when the join found none (its id NULL).  0, or -1 out of memory.
 */
static int
rec_fetch_joined(struct rec_ctx *x, struct db_stmt *st, struct rec_row *r)
{
	const struct coll *jc = x->join->coll;
	struct arena *a = x->rq->arena;
	struct rec_row *j;
	size_t i;

	if ((r->ex = arena_alloc(a, QUERY_EXPAND_MAX * sizeof(*r->ex))) == NULL)
		return -1;
	memset(r->ex, 0, QUERY_EXPAND_MAX * sizeof(*r->ex));
	if (db_column_isnull(st, x->join_col))
		return 0;
	if ((r->ex[0].r = arena_alloc(a, sizeof(struct rec_row *))) == NULL ||
	    (j = arena_alloc(a, sizeof(*j))) == NULL ||
	    (j->v = arena_alloc(a, jc->nfields * sizeof(*j->v))) == NULL ||
	    (j->len = arena_alloc(a, jc->nfields * sizeof(*j->len))) == NULL)
		return -1;
	j->ex = NULL;
	for (i = 0; i < jc->nfields; i++) {
		size_t n = 0;
		const char *v = db_column_text(st, x->join_col + (int)i, &n);

		j->len[i] = n;
		j->v[i] = NULL;
		if (v != NULL && (j->v[i] = arena_strndup(a, v, n)) == NULL)
			return -1;
	}
	r->ex[0].r[0] = j;
	r->ex[0].n = 1;
	return 0;
}

int
rec_fetch(struct rec_ctx *x, const struct coll *c, struct rec_rows *out)
{
	struct sqlb *q = &x->t->q;
	struct db_stmt *st;
	struct arena *a = x->rq->arena;
	size_t cap = 0, i;
	int rc;

	memset(out, 0, sizeof(*out));
	if (buf_failed(q->sql))
		return rec_error(x->rs, 400, "The query is too large.", NULL), -1;
	if ((st = db_prepare(x->rq->db, q->sql->data)) == NULL || sqlb_bind(q, st) < 0)
		return rec_db_error(x), -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct rec_row *r;

		if (out->n == cap) {
			struct rec_row **nr;

			cap = cap ? cap * 2 : 32;
			if ((nr = arena_alloc(a, cap * sizeof(struct rec_row *))) == NULL)
				goto nomem;
			if (out->n > 0)
				memcpy(nr, out->r, out->n * sizeof(struct rec_row *));
			out->r = nr;
		}
		if ((r = arena_alloc(a, sizeof(*r))) == NULL ||
		    (r->v = arena_alloc(a, c->nfields * sizeof(*r->v))) == NULL ||
		    (r->len = arena_alloc(a, c->nfields * sizeof(*r->len))) == NULL)
			goto nomem;
		r->ex = NULL;
		if (out->n == 0 && x->wrapped)
			out->extra = db_column_int(st, (int)c->nfields);
		for (i = 0; i < c->nfields; i++) {
			size_t n = 0;
			const char *v = db_column_text(st, (int)i, &n);

			r->len[i] = n;
			r->v[i] = NULL;
			if (v != NULL && (r->v[i] = arena_strndup(a, v, n)) == NULL)
				goto nomem;
		}
		if (x->join != NULL && rec_fetch_joined(x, st, r) < 0)
			goto nomem;
		out->r[out->n++] = r;
	}
	if (rc == DB_ERROR)
		return rec_db_error(x), -1;
	return 0;
nomem:
	db_reset(st);
	rec_error(x->rs, 413, "The response is too large.", NULL);
	return -1;
}

int
rec_get(struct rec_ctx *x, const struct coll *c, const char *id, size_t idlen,
    const char *by, struct rec_row **row)
{
	struct sqlb *q = &x->t->q;
	struct rec_rows rows;

	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "SELECT ");
	rec_columns(q->sql, c, "t");
	buf_puts(q->sql, " FROM ");
	coll_quote(q->sql, c->name);
	buf_puts(q->sql, " AS t WHERE ");
	sqlb_col(q->sql, "t", by);
	buf_puts(q->sql, " = ");
	sqlb_text(q, id, idlen);
	if (rec_fetch(x, c, &rows) < 0)
		return -1;
	if (rows.n == 0)
		return 0;
	*row = rows.r[0];
	return 1;
}

void
rec_auth_set(struct rec_ctx *x, const struct coll *c, struct rec_row *row)
{
	x->auth = c;
	x->auth_row = row;
	x->superuser = strcmp(c->name, "_superusers") == 0;
	x->f.superuser = x->superuser;
	x->f.auth = c;
	x->f.auth_vals = row->v;
	x->f.auth_lens = row->len;
}

int
rec_rule(struct rec_ctx *x, const struct coll *c, enum coll_rule r, const char *alias)
{
	const char *rule = c->rules[r];
	char err[256];
	enum filter_err e;

	if (x->superuser)
		return 0;
	if (rule == NULL)
		return 1;
	if (*rule == '\0')
		return 0;
	buf_puts(x->t->q.sql, " AND ");
	x->f.rule = 1;
	if ((e = filter_compile(&x->t->q, c, alias, rule, strlen(rule), &x->f, err,
	    sizeof(err))) != FILTER_OK) {
		log_err("records: the rule %d of %s: %s", (int)r, c->name, err);
		rec_error(x->rs, e == FILTER_ENOMEM ? 500 : 400, NULL, NULL);
		return -1;
	}
	return 0;
}

/* Appends a number column's text as JSON (the shortest form that reads back the same). */
static void
rec_number(struct buf *b, const char *v)
{
	double d = v != NULL ? strtod(v, NULL) : 0;
	char out[40];

	if (!isfinite(d))
		d = 0;
	if (d == floor(d) && fabs(d) < 1e15)
		(void)snprintf(out, sizeof(out), "%lld", (long long)d);
	else {
		(void)snprintf(out, sizeof(out), "%.15g", d);
		if (strtod(out, NULL) != d)
			(void)snprintf(out, sizeof(out), "%.17g", d);
	}
	buf_puts(b, out);
}

/* Appends JSON text without the blanks outside its strings (PostgreSQL's jsonb prints
 * `["a", "b"]`; SQLite keeps what was stored, already compact). */
static void
rec_minify(struct buf *b, const char *v, size_t len)
{
	size_t i, start = 0;
	int in = 0;

	for (i = 0; i < len; i++) {
		char ch = v[i];

		if (in) {
			if (ch == '\\')
				i++;
			else if (ch == '"')
				in = 0;
		} else if (ch == '"')
			in = 1;
		else if (ch == ' ' || ch == '\n' || ch == '\t' || ch == '\r') {
			buf_append(b, v + start, i - start);
			start = i + 1;
		}
	}
	if (start < len)
		buf_append(b, v + start, len - start);
}

/* An excerpt: tags dropped, blanks folded, the first n characters (UTF-8). */
static void
rec_excerpt(struct buf *b, const char *v, size_t len, int n, int ellipsis)
{
	struct buf t;
	size_t i, chars = 0;
	int tag = 0, space = 0;

	buf_init(&t, len + 8);
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)v[i];

		if (ch == '<')
			tag = 1;
		else if (ch == '>' && tag)
			tag = 0;
		else if (!tag) {
			if (isspace(ch)) {
				space = t.len > 0;
				continue;
			}
			if ((ch & 0xc0) != 0x80) {
				if ((int)chars == n) {
					if (ellipsis)
						buf_puts(&t, "...");
					break;
				}
				chars++;
				if (space && (int)chars < n) {
					buf_putc(&t, ' ');
					chars++;
				}
				space = 0;
			}
			buf_putc(&t, (char)ch);
		}
	}
	json_escape(b, t.data ? t.data : "", t.len);
	buf_free(&t);
}

/* The expand nodes below node parent, sorted by name, into out; returns their count. */
static int
rec_children(const struct query_expands *ex, int parent, int out[QUERY_EXPAND_MAX])
{
	int i, j, n = 0;

	if (ex == NULL)
		return 0;
	for (i = 0; i < ex->count; i++) {
		if (ex->n[i].parent != parent)
			continue;
		for (j = n; j > 0 && strcmp(ex->n[out[j - 1]].name, ex->n[i].name) > 0; j--)
			out[j] = out[j - 1];
		out[j] = i;
		n++;
	}
	return n;
}

/* Writes a row's "expand" object: each child node of node, under its name, the records
 * expanded for the row (an array when the relation holds many), keeping the fields fs asks
 * for under prefix (all of them when keep is 1, the "expand" key itself asked whole). */
static void
rec_write_expand(struct rec_ctx *x, struct buf *b, const struct rec_row *row,
    const struct rec_out *o, int node, const char *prefix, size_t plen,
    const struct query_fields *fs, int keep)
{
	int kids[QUERY_EXPAND_MAX], nkids = rec_children(o->ex, node, kids);
	int i, efirst = 1;

	buf_putc(b, '{');
	for (i = 0; i < nkids; i++) {
		const struct query_expand *e = &o->ex->n[kids[i]];
		const struct rec_rows *rr = row->ex ? &row->ex[kids[i]] : NULL;
		const struct query_field *q2;
		char pre[512];
		int n, keep2;
		size_t j;

		n = snprintf(pre, sizeof(pre), "%.*sexpand.", (int)plen, prefix);
		if (rr == NULL || rr->n == 0 || n < 0 || (size_t)n >= sizeof(pre))
			continue;
		keep2 = keep == 1 ? 1 : query_fields_keep(fs, pre, (size_t)n, e->name, &q2);
		if (keep2 == 0)
			continue;
		n += snprintf(pre + n, sizeof(pre) - (size_t)n, "%s.", e->name);
		if ((size_t)n >= sizeof(pre))
			continue;
		if (!efirst)
			buf_putc(b, ',');
		efirst = 0;
		json_escape(b, e->name, strlen(e->name));
		buf_putc(b, ':');
		if (e->many)
			buf_putc(b, '[');
		for (j = 0; j < (e->many ? rr->n : 1); j++) {
			if (j > 0)
				buf_putc(b, ',');
			rec_write(x, b, e->coll, rr->r[j], o, kids[i], pre, (size_t)n, keep2 == 1);
		}
		if (e->many)
			buf_putc(b, ']');
	}
	buf_putc(b, '}');
}

/* Writes the JSON value of field f, whose text is v (len bytes, NULL for SQL NULL); qf,
 * when not NULL, is the field's entry in ?fields, whose excerpt modifier applies to text. */
static void
rec_write_value(struct buf *b, const struct coll_field *f, const char *v, size_t len,
    const struct query_field *qf)
{
	if ((f->multiple || f->type == COLL_JSON) && v != NULL)
		rec_minify(b, v, len);
	else if (f->multiple)
		buf_puts(b, "[]");
	else if (f->type == COLL_JSON)
		buf_puts(b, "null");
	else if (f->type == COLL_NUMBER)
		rec_number(b, v);
	else if (f->type == COLL_BOOL)
		buf_puts(b, rec_truthy(v) ? "true" : "false");
	else if (qf != NULL)
		rec_excerpt(b, v ? v : "", v ? len : 0, qf->excerpt, qf->ellipsis);
	else
		json_escape(b, v ? v : "", v ? len : 0);
}

int
rec_write(struct rec_ctx *x, struct buf *b, const struct coll *c, const struct rec_row *row,
    const struct rec_out *o, int node, const char *prefix, size_t plen, int whole)
{
	static const struct query_fields none;
	const struct query_fields *fs = whole || o->fields == NULL ? &none : o->fields;
	size_t k;
	int first = 1;

	buf_putc(b, '{');
	for (k = 0; k < c->nkeys; k++) {
		int key = c->keys[k], keep;
		const struct query_field *qf;
		const char *name = key == COLL_KEY_COLLID ? "collectionId" : key == COLL_KEY_COLLNAME ?
		    "collectionName" : key == COLL_KEY_EXPAND ? "expand" : c->fields[key].name;

		if (key == COLL_KEY_EXPAND && o->ex == NULL)
			continue;
		if ((keep = query_fields_keep(fs, prefix, plen, name, &qf)) == 0)
			continue;
		if (key >= 0 && c->auth && strcmp(name, "email") == 0 && !o->show_email &&
		    !x->superuser && !rec_truthy(row->v[coll_field_index(c,
		    coll_field(c, "emailVisibility", 15))]) &&
		    !(x->auth == c && strcmp(x->auth_row->v[0], row->v[0]) == 0))
			continue;
		if (!first)
			buf_putc(b, ',');
		first = 0;
		json_escape(b, name, strlen(name));
		buf_putc(b, ':');
		if (key == COLL_KEY_COLLID)
			json_escape(b, c->id, strlen(c->id));
		else if (key == COLL_KEY_COLLNAME)
			json_escape(b, c->name, strlen(c->name));
		else if (key == COLL_KEY_EXPAND)
			rec_write_expand(x, b, row, o, node, prefix, plen, fs, keep);
		else
			rec_write_value(b, &c->fields[key], row->v[key], row->len[key], qf);
	}
	buf_putc(b, '}');
	return buf_failed(b) ? -1 : 0;
}

/* Compares two rows by id (qsort, bsearch). */
static int
rec_cmp_id(const void *a, const void *b)
{
	const struct rec_row *const *x = a, *const *y = b;

	return strcmp((*x)->v[0], (*y)->v[0]);
}

/* The row with this id among rows sorted by id, or NULL. */
static struct rec_row *
rec_find(const struct rec_rows *rows, const char *id)
{
	const char *vals[1] = { id };
	struct rec_row key = { .v = vals }, *kp = &key, **hit;

	if (rows->n == 0)
		return NULL;
	hit = bsearch(&kp, rows->r, rows->n, sizeof(struct rec_row *), rec_cmp_id);
	return hit ? *hit : NULL;
}

/* The ids a relation value holds: a single id, or a JSON array's strings. */
static int
rec_ids(const struct coll_field *f, const char *v, size_t len, cJSON **arr)
{
	enum json_err je;

	*arr = NULL;
	if (v == NULL || len == 0)
		return 0;
	if (!f->multiple) {
		*arr = cJSON_CreateArray();
		return *arr != NULL && cJSON_AddItemToArray(*arr, cJSON_CreateString(v)) ? 0 : -1;
	}
	*arr = json_parse(v, len, 4, &je, NULL);
	return 0;
}

/* Appends id to the JSON array text b (ids hold [a-z0-9] only, but are escaped all the
 * same). */
static void
rec_id_json(struct buf *b, const char *id, int *first)
{
	if (!*first)
		buf_putc(b, ',');
	*first = 0;
	json_escape(b, id, strlen(id));
}

/* Answers 413: an expansion outgrew the request's arena.  Returns -1. */
static int
rec_too_large(struct rec_ctx *x)
{
	rec_error(x->rs, 413, "The response is too large.", NULL);
	return -1;
}

/* Appends to ids, as a JSON array text, the ids expand e joins on: the parents' own ids for
 * a back-relation, the ids their relation field holds otherwise.  *first stays 1 when there
 * is none.  0, or -1 (a relation value that cannot be read). */
static int
rec_expand_ids(const struct query_expand *e, const struct rec_rows *parents,
    const struct coll *pc, struct buf *ids, int *first)
{
	size_t i;
	cJSON *arr, *it;

	buf_putc(ids, '[');
	for (i = 0; i < parents->n; i++) {
		if (e->back)
			rec_id_json(ids, parents->r[i]->v[0], first);
		else {
			size_t fi = coll_field_index(pc, e->field);

			if (rec_ids(e->field, parents->r[i]->v[fi], parents->r[i]->len[fi], &arr) < 0)
				return -1;
			cJSON_ArrayForEach(it, arr)
				if (cJSON_IsString(it))
					rec_id_json(ids, it->valuestring, first);
			cJSON_Delete(arr);
		}
	}
	buf_putc(ids, ']');
	return 0;
}

/* Writes the expand query up to its WHERE clause: e's records whose id is among ids (a
 * relation), or whose relation field holds one of them (a back-relation, the field single
 * or multiple). */
static void
rec_expand_select(struct sqlb *q, const struct query_expand *e, const struct buf *ids)
{
	buf_puts(q->sql, "SELECT ");
	rec_columns(q->sql, e->coll, "t");
	buf_puts(q->sql, " FROM ");
	coll_quote(q->sql, e->coll->name);
	buf_puts(q->sql, " AS t WHERE ");
	if (!e->back) {
		buf_puts(q->sql, "t.\"id\" IN ");
		sqlb_in_json(q, ids->data, ids->len);
	} else if (!e->field->multiple) {
		sqlb_col(q->sql, "t", e->field->name);
		buf_puts(q->sql, " IN ");
		sqlb_in_json(q, ids->data, ids->len);
	} else {
		buf_puts(q->sql, "EXISTS (SELECT 1 FROM ");
		buf_puts(q->sql, q->d->each_open);
		sqlb_col(q->sql, "t", e->field->name);
		buf_puts(q->sql, q->d->each_close);
		buf_puts(q->sql, "e");
		buf_puts(q->sql, q->d->each_alias);
		buf_puts(q->sql, " WHERE e.value IN ");
		sqlb_in_json(q, ids->data, ids->len);
		buf_putc(q->sql, ')');
	}
}

/* Appends a back-relation's order: by creation time when the collection keeps one, then
 * by id. */
static void
rec_expand_order(struct sqlb *q, const struct query_expand *e)
{
	const struct coll_field *cr = coll_field(e->coll, "created", 7);

	buf_puts(q->sql, " ORDER BY ");
	if (cr != NULL && cr->type == COLL_AUTODATE) {
		sqlb_col(q->sql, "t", "created");
		buf_puts(q->sql, ", ");
	}
	buf_puts(q->sql, "t.\"id\"");
	buf_puts(q->sql, q->d->collate);
}

/* Gives each parent row that has none its table of expanded records, zeroed.  0, or -1
 * out of memory. */
static int
rec_expand_slots(struct arena *a, struct rec_rows *parents)
{
	size_t i;

	for (i = 0; i < parents->n; i++) {
		struct rec_row *p = parents->r[i];

		if (p->ex == NULL) {
			if ((p->ex = arena_alloc(a, QUERY_EXPAND_MAX * sizeof(*p->ex))) == NULL)
				return -1;
			memset(p->ex, 0, QUERY_EXPAND_MAX * sizeof(*p->ex));
		}
	}
	return 0;
}

/* Attaches a relation's records (got) to each parent, in the order its field lists their
 * ids.  0, or -1: answered when out of memory, not when a relation value cannot be read. */
static int
rec_attach_relation(struct rec_ctx *x, const struct query_expand *e, int ni,
    struct rec_rows *parents, const struct coll *pc, const struct rec_rows *got)
{
	struct arena *a = x->rq->arena;
	struct rec_rows sorted = *got;
	size_t fi = coll_field_index(pc, e->field), i;
	cJSON *arr, *it;

	if ((sorted.r = arena_alloc(a, (got->n + 1) * sizeof(struct rec_row *))) == NULL)
		return rec_too_large(x);
	if (got->n > 0)
		memcpy(sorted.r, got->r, got->n * sizeof(struct rec_row *));
	qsort(sorted.r, sorted.n, sizeof(struct rec_row *), rec_cmp_id);
	for (i = 0; i < parents->n; i++) {
		struct rec_row *p = parents->r[i];
		struct rec_rows *dst = &p->ex[ni];
		int n;

		if (rec_ids(e->field, p->v[fi], p->len[fi], &arr) < 0)
			return -1;
		n = cJSON_GetArraySize(arr);
		dst->n = 0;
		if (n > 0 && (dst->r = arena_alloc(a, (size_t)n * sizeof(struct rec_row *))) == NULL) {
			cJSON_Delete(arr);
			return rec_too_large(x);
		}
		cJSON_ArrayForEach(it, arr) {
			struct rec_row *hit = cJSON_IsString(it) ?
			    rec_find(&sorted, it->valuestring) : NULL;

			if (hit != NULL)
				dst->r[dst->n++] = hit;
		}
		cJSON_Delete(arr);
	}
	return 0;
}

/* Attaches a back-relation's records (got) to each parent their field names, in the
 * query's order.  0, or -1: answered when out of memory, not when a relation value cannot
 * be read. */
static int
rec_attach_back(struct rec_ctx *x, const struct query_expand *e, int ni,
    struct rec_rows *parents, const struct rec_rows *got)
{
	struct arena *a = x->rq->arena;
	struct rec_rows byid = *parents;
	size_t fi = coll_field_index(e->coll, e->field), i, j;
	cJSON *arr, *it;

	if ((byid.r = arena_alloc(a, (parents->n + 1) * sizeof(struct rec_row *))) == NULL)
		return rec_too_large(x);
	memcpy(byid.r, parents->r, parents->n * sizeof(struct rec_row *));
	qsort(byid.r, byid.n, sizeof(struct rec_row *), rec_cmp_id);
	/* Two passes: count each parent's records, then fill. */
	for (j = 0; j < 2; j++) {
		for (i = 0; i < parents->n; i++) {
			struct rec_rows *dst = &parents->r[i]->ex[ni];

			if (j == 1 && dst->n > 0 &&
			    (dst->r = arena_alloc(a, dst->n * sizeof(struct rec_row *))) == NULL)
				return rec_too_large(x);
			dst->n = 0;
		}
		for (i = 0; i < got->n; i++) {
			struct rec_row *ch = got->r[i];

			if (rec_ids(e->field, ch->v[fi], ch->len[fi], &arr) < 0)
				return -1;
			cJSON_ArrayForEach(it, arr) {
				struct rec_row *p = cJSON_IsString(it) ?
				    rec_find(&byid, it->valuestring) : NULL;

				if (p == NULL)
					continue;
				if (j == 1)
					p->ex[ni].r[p->ex[ni].n] = ch;
				p->ex[ni].n++;
			}
			cJSON_Delete(arr);
		}
	}
	return 0;
}

/* Runs one expand node for the parent rows: one query, results attached to each parent. */
static int
rec_expand_node(struct rec_ctx *x, const struct query_expands *ex, int ni,
    struct rec_rows *parents, const struct coll *pc, struct rec_rows *got)
{
	const struct query_expand *e = &ex->n[ni];
	struct sqlb *q = &x->t->q;
	struct buf ids;
	int first = 1, rc = -1, r;

	memset(got, 0, sizeof(*got));
	buf_init(&ids, 1 << 24);
	if (rec_expand_ids(e, parents, pc, &ids, &first) < 0)
		goto out;
	if (first) {
		rc = 0;
		goto out;
	}
	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	rec_expand_select(q, e, &ids);
	if ((r = rec_rule(x, e->coll, COLL_RULE_VIEW, "t")) != 0) {
		rc = r < 0 ? -1 : 0;
		goto out;
	}
	if (e->back)
		rec_expand_order(q, e);
	if (rec_fetch(x, e->coll, got) < 0)
		goto out;
	/* Attach: each parent gets its records, in the order its field lists them (a
	 * relation) or in the query's order (a back-relation). */
	if (rec_expand_slots(x->rq->arena, parents) < 0)
		rc = rec_too_large(x);
	else if (e->back)
		rc = rec_attach_back(x, e, ni, parents, got);
	else
		rc = rec_attach_relation(x, e, ni, parents, pc, got);
out:
	buf_free(&ids);
	return rc;
}

/* Runs every expand node in order (parents first).  0, or -1 answered. */
static int
rec_expand(struct rec_ctx *x, const struct query_expands *ex, struct rec_rows *top)
{
	struct rec_rows got[QUERY_EXPAND_MAX];
	int i;

	for (i = 0; i < ex->count; i++) {
		int p = ex->n[i].parent;
		struct rec_rows *parents = p < 0 ? top : &got[p];
		const struct coll *pc = p < 0 ? x->c : ex->n[p].coll;

		if (rec_expand_node(x, ex, i, parents, pc, &got[i]) < 0)
			return -1;
	}
	return 0;
}

/* The fields= and expand= parameters.  0, or -1 answered (400). */
static int
rec_out_params(struct rec_ctx *x, struct query_fields *fs, struct query_expands *ex,
    struct rec_out *o)
{
	const struct req_param *p;
	char err[256];

	memset(o, 0, sizeof(*o));
	if ((p = req_param(x->rq, "fields")) != NULL) {
		if (query_fields_parse(fs, x->rq->arena, p->val, p->vallen, err, sizeof(err)) < 0)
			return rec_error(x->rs, 400, err, NULL), -1;
		o->fields = fs;
	}
	if ((p = req_param(x->rq, "expand")) != NULL && p->vallen > 0) {
		if (query_expand_parse(ex, x->c, p->val, p->vallen, err, sizeof(err)) < 0)
			return rec_error(x->rs, 400, err, NULL), -1;
		o->ex = ex;
	}
	return 0;
}

/* Compiles the client's filter= into q (after " AND ").  0, or -1 answered. */
static int
rec_filter(struct rec_ctx *x)
{
	const struct req_param *p = req_param(x->rq, "filter");
	char err[256];
	enum filter_err e;

	if (p == NULL || p->vallen == 0)
		return 0;
	buf_puts(x->t->q.sql, " AND ");
	x->f.rule = 0;
	x->f.shape = &x->eq;
	e = filter_compile(&x->t->q, x->c, "t", p->val, p->vallen, &x->f, err, sizeof(err));
	x->f.shape = NULL;
	x->f.rule = 1;
	if (e != FILTER_OK) {
		char data[400], *w;
		struct buf b;

		buf_init(&b, sizeof(data));
		buf_puts(&b, "{\"filter\":{\"code\":\"validation_invalid_filter\",\"message\":");
		json_escape(&b, err, strlen(err));
		buf_puts(&b, "}}");
		w = buf_failed(&b) ? NULL : b.data;
		rec_error(x->rs, filter_status(e), e == FILTER_EFORBIDDEN ? NULL :
		    "Invalid filter parameters.", w);
		buf_free(&b);
		return -1;
	}
	return 0;
}

/* "SELECT <what> FROM c AS t WHERE 1=1 AND filter AND rule": 0, 1 (the rule is null:
 * nothing to see) or -1 answered. */
static int
rec_where(struct rec_ctx *x, const char *what)
{
	struct sqlb *q = &x->t->q;
	int r;

	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "SELECT ");
	if (what != NULL)
		buf_puts(q->sql, what);
	else
		rec_columns(q->sql, x->c, "t");
	x->cols_end = q->sql->len;
	buf_puts(q->sql, " FROM ");
	coll_quote(q->sql, x->c->name);
	buf_puts(q->sql, " AS t");
	x->from_end = q->sql->len;
	buf_puts(q->sql, " WHERE 1=1");
	if (rec_filter(x) < 0)
		return -1;
	x->rule.value = -1;
	x->f.shape = &x->rule;
	r = rec_rule(x, x->c, COLL_RULE_LIST, "t");
	x->f.shape = NULL;
	return r;
}

/* The row of _counts that holds a list's total. */
struct rec_kept {
	const char *field;
	const char *val;
	size_t vlen;
};

/*
 * Whether the counts the database keeps (coll.h) answer this list's total exactly: the
 * collection keeps counts, the list rule lets everyone through (it is '', it is true
 * whatever the record, as `@request.auth.id != ''` is for a signed-in caller, or the
 * request is a superuser's), and the filter is absent or one `field = 'text'` on a
 * counted field (rec_where() compiled both).  1 with *k set, or 0: the rows are counted.
 */
static int
rec_kept_key(struct rec_ctx *x, struct rec_kept *k)
{
	const struct req_param *p = req_param(x->rq, "filter");
	const char *rule = x->c->rules[COLL_RULE_LIST];

	*k = (struct rec_kept){ "", "", 0 };
	if (!x->c->counts || (!x->superuser && (rule == NULL || (*rule != '\0' &&
	    x->rule.value != 1))))
		return 0;
	if (p != NULL && p->vallen > 0) {
		if (x->eq.eq_field == NULL || !x->eq.eq_field->kept)
			return 0;
		*k = (struct rec_kept){ x->eq.eq_field->name, x->eq.eq_val, x->eq.eq_len };
	}
	return 1;
}

/* Appends the kept count k as a scalar subquery to the statement in x's thread. */
static void
rec_kept_sql(struct rec_ctx *x, const struct rec_kept *k)
{
	struct sqlb *q = &x->t->q;

	buf_puts(q->sql, "(SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM _counts WHERE coll = ");
	sqlb_text(q, x->c->name, strlen(x->c->name));
	buf_puts(q->sql, " AND field = ");
	sqlb_text(q, k->field, strlen(k->field));
	buf_puts(q->sql, " AND value = ");
	sqlb_text(q, k->val, k->vlen);
	buf_putc(q->sql, ')');
}

/* Inserts text[0..len) into the statement in x's thread at offset at.  0, or -1 (out of
 * memory: the caller answers). */
static int
rec_insert(struct rec_ctx *x, size_t at, const char *text, size_t len)
{
	struct buf *page = x->t->q.sql;
	char *tail;

	if (buf_failed(page) || at > page->len ||
	    (tail = arena_strndup(x->rq->arena, page->data + at, page->len - at)) == NULL)
		return -1;
	page->len = at;
	page->data[page->len] = '\0';
	buf_append(page, text, len);
	buf_puts(page, tail);
	return buf_failed(page) ? -1 : 0;
}

/*
 * Adds the kept total k to the page's statement as one more column after the record's
 * (read by rec_fetch() into rows.extra): the page and its total in one statement, one
 * round trip on PostgreSQL, one read transaction on SQLite.  The subquery's values are
 * bound after the page's, so their numbers follow the page's.  0, or -1 (out of memory:
 * the caller answers).
 */
static int
rec_page_with_total(struct rec_ctx *x, const struct rec_kept *k)
{
	struct sqlb *q = &x->t->q;
	struct buf *page = q->sql, sub;
	int rc = -1;

	buf_init(&sub, 4096);
	q->sql = &sub;
	buf_puts(&sub, ", ");
	rec_kept_sql(x, k);
	q->sql = page;
	if (!buf_failed(&sub))
		rc = rec_insert(x, x->cols_end, sub.data, sub.len);
	buf_free(&sub);
	return rc;
}

/*
 * Whether the page's statement can carry the list's expand itself (rec_join()): one node,
 * a single relation of the listed collection, whose records the caller may see (their
 * view rule is not null, or a superuser asks).
 */
static int
rec_join_fits(const struct rec_ctx *x, const struct query_expands *ex)
{
	const struct query_expand *e;

	if (ex == NULL || ex->count != 1)
		return 0;
	e = &ex->n[0];
	return e->parent < 0 && !e->back && !e->many && !e->field->multiple &&
	    (x->superuser || e->coll->rules[COLL_RULE_VIEW] != NULL);
}

/*
 * Joins expand node e (rec_join_fits()) to the page's statement: its records' columns
 * after the page's (rec_fetch() reads them into each row's expand), and after the listed
 * table, on SQLite "LEFT JOIN coll AS x ON x.id = t.field AND (view rule)", on PostgreSQL
 * "LEFT JOIN LATERAL (SELECT * FROM coll AS x WHERE x.id = t.field AND (view rule)
 * LIMIT 1) AS x ON true", so that the page and its expand take one statement instead of
 * two: one round trip less on PostgreSQL, one read less on SQLite.  Both probe the related
 * table's primary key once per row of the page.  On PostgreSQL the LATERAL form is what
 * keeps it so under a generic plan, which cannot see the page's LIMIT and is costed for a
 * tenth of the collection: a plain join would hash the whole related table at every
 * execution, whereas a LATERAL probe can only be a nested loop; the Memoize node the
 * planner would put over it (sized for that tenth: 16.7 ms a statement at 1,000,000
 * posts and 60,000 users) is off in sessions planned generically (db_pg_pool.c's
 * pg_session()), and a custom plan sees the LIMIT.  The rule's values are bound after the
 * page's.  0, -1 answered.
 */
static int
rec_join(struct rec_ctx *x, const struct query_expand *e)
{
	struct sqlb *q = &x->t->q;
	struct buf *page = q->sql, sub;
	int rc = -1, lateral;
	size_t i;

	buf_init(&sub, 1 << 16);
	q->sql = &sub;
	lateral = q->d->backend == DB_PG;
	buf_puts(&sub, lateral ? " LEFT JOIN LATERAL (SELECT * FROM " : " LEFT JOIN ");
	coll_quote(&sub, e->coll->name);
	buf_puts(&sub, lateral ? " AS x WHERE x.\"id\" = " : " AS x ON x.\"id\" = ");
	sqlb_col(&sub, "t", e->field->name);
	rc = rec_rule(x, e->coll, COLL_RULE_VIEW, "x");
	q->sql = page;
	if (rc != 0)
		goto out;
	if (lateral)
		buf_puts(&sub, " LIMIT 1) AS x ON true");
	rc = -1;
	if (buf_failed(&sub) || rec_insert(x, x->from_end, sub.data, sub.len) < 0)
		goto large;
	buf_reset(&sub, 1 << 16);
	for (i = 0; i < e->coll->nfields; i++) {
		buf_puts(&sub, ", ");
		sqlb_col(&sub, "x", e->coll->fields[i].name);
	}
	if (buf_failed(&sub) || rec_insert(x, x->cols_end, sub.data, sub.len) < 0)
		goto large;
	x->join = e;
	rc = 0;
	goto out;
large:
	rec_error(x->rs, 400, "The query is too large.", NULL);
out:
	buf_free(&sub);
	return rc;
}

/*
 * The total of a list whose page is in rows: the page's extra column when it carried the
 * kept count k (wrapped), the kept count alone when it did not or the page came back
 * empty (kept), else the rows counted with the page's WHERE.  0, or -1 answered.
 */
static int
rec_list_total(struct rec_ctx *x, int kept, int wrapped, const struct rec_kept *k,
    const struct rec_rows *rows, int64_t *total)
{
	struct sqlb *q = &x->t->q;
	struct db_stmt *st;

	if (wrapped && rows->n > 0) {
		*total = rows->extra;
		return 0;
	}
	if (kept) {
		sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
		buf_puts(q->sql, "SELECT ");
		rec_kept_sql(x, k);
	} else if (rec_where(x, "count(*)") != 0)
		return -1;
	if (buf_failed(q->sql) || (st = db_prepare(x->rq->db, q->sql->data)) == NULL ||
	    sqlb_bind(q, st) < 0 || db_step(st) != DB_ROW)
		return rec_db_error(x), -1;
	*total = db_column_int(st, 0);
	db_reset(st);
	return 0;
}

int
rec_list(struct rec_ctx *x)
{
	const struct req_param *p;
	struct query_fields fs;
	struct query_expands ex;
	struct rec_out o;
	struct rec_rows rows;
	struct buf *b = &x->rs->body;
	int64_t page, per, total = -1;
	struct rec_kept k;
	char err[256];
	int skip = 0, kept, wrap, join, r;
	size_t i;

	memset(&rows, 0, sizeof(rows));
	if (req_param_int(x->rq, "page", -1000000000, 1000000000, 1, &page) < 0 ||
	    req_param_int(x->rq, "perPage", -1000000000, 1000000000, REC_PER_PAGE, &per) < 0)
		return rec_error(x->rs, 400, "page and perPage must be integers.", NULL);
	if (page <= 0)
		page = 1;
	if (per <= 0)
		per = REC_PER_PAGE;
	if (per > REC_PER_PAGE_MAX)
		per = REC_PER_PAGE_MAX;
	if ((p = req_param(x->rq, "skipTotal")) != NULL)
		skip = str_eq(p->val, p->vallen, "1") || str_eq(p->val, p->vallen, "true");
	if (rec_out_params(x, &fs, &ex, &o) < 0)
		return 0;
	if ((r = rec_where(x, NULL)) < 0)
		return 0;
	if (r == 0) {
		p = req_param(x->rq, "sort");
		if (p != NULL && query_sort(&x->t->q, x->c, "t", p->val, p->vallen, !x->superuser, err,
		    sizeof(err)) < 0)
			return rec_error(x->rs, 400, err, NULL);
		buf_puts(x->t->q.sql, " LIMIT ");
		sqlb_int(&x->t->q, per);
		buf_puts(x->t->q.sql, " OFFSET ");
		sqlb_int(&x->t->q, (page - 1) * per);
		kept = !skip && rec_kept_key(x, &k);
		wrap = kept;
		/* The join probes the related table for every row the OFFSET skips too (15,000
		 * probes on page 500 of 30): past the first page the expand takes its own
		 * statement, which probes only the page's. */
		join = page == 1 && rec_join_fits(x, o.ex);
		if (join && (r = rec_join(x, &o.ex->n[0])) != 0) {
			if (r < 0)
				return 0;
			join = 0;
		}
		if (wrap && rec_page_with_total(x, &k) < 0)
			return rec_error(x->rs, 400, "The query is too large.", NULL);
		/* The total's column goes before the joined ones. */
		x->join_col = (int)x->c->nfields + wrap;
		x->wrapped = wrap;
		r = rec_fetch(x, x->c, &rows);
		x->join = NULL;
		x->wrapped = 0;
		if (r < 0)
			return 0;
		if (!skip && rec_list_total(x, kept, wrap, &k, &rows, &total) < 0)
			return 0;
		if (o.ex != NULL && !join && rec_expand(x, o.ex, &rows) < 0)
			return 0;
	} else if (!skip)
		total = 0;
	x->rs->status = 200;
	x->rs->content_type = "application/json";
	buf_reset(b, 1 << 20);
	buf_puts(b, "{\"items\":[");
	for (i = 0; i < rows.n; i++) {
		if (i > 0)
			buf_putc(b, ',');
		rec_write(x, b, x->c, rows.r[i], &o, -1, "", 0, 0);
	}
	buf_printf(b, "],\"page\":%lld,\"perPage\":%lld,\"totalItems\":%lld,\"totalPages\":%lld}",
	    (long long)page, (long long)per, (long long)total,
	    (long long)(total < 0 ? -1 : (total + per - 1) / per));
	if (buf_failed(b))
		return rec_error(x->rs, 500, "The response is too large.", NULL);
	return 0;
}

/* Answers 200 with the first of rows, expanded and trimmed as the request asks. */
static int
rec_answer_row(struct rec_ctx *x, struct rec_rows *rows, const struct rec_out *o)
{
	struct buf *b = &x->rs->body;

	if (o->ex != NULL && rec_expand(x, o->ex, rows) < 0)
		return 0;
	x->rs->status = 200;
	x->rs->content_type = "application/json";
	buf_reset(b, 1 << 20);
	rec_write(x, b, x->c, rows->r[0], o, -1, "", 0, 0);
	if (buf_failed(b))
		return rec_error(x->rs, 500, "The response is too large.", NULL);
	return 0;
}

/* SELECT the columns of x->c for the record id (its view rule added when rule). */
static int
rec_select_id(struct rec_ctx *x, const char *id, int rule)
{
	struct sqlb *q = &x->t->q;

	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "SELECT ");
	rec_columns(q->sql, x->c, "t");
	buf_puts(q->sql, " FROM ");
	coll_quote(q->sql, x->c->name);
	buf_puts(q->sql, " AS t WHERE t.\"id\" = ");
	sqlb_text(q, id, strlen(id));
	return rule ? rec_rule(x, x->c, COLL_RULE_VIEW, "t") : 0;
}

int
rec_view(struct rec_ctx *x)
{
	struct query_fields fs;
	struct query_expands ex;
	struct rec_out o;
	struct rec_rows rows;
	int r;

	if (rec_out_params(x, &fs, &ex, &o) < 0)
		return 0;
	if ((r = rec_select_id(x, x->id, 1)) != 0)
		return r < 0 ? 0 : rec_error(x->rs, 403, "Only superusers can perform this action.",
		    NULL);
	if (rec_fetch(x, x->c, &rows) < 0)
		return 0;
	if (rows.n == 0)
		return rec_error(x->rs, 404, NULL, NULL);
	return rec_answer_row(x, &rows, &o);
}

int
rec_show(struct rec_ctx *x, const char *id)
{
	struct query_fields fs;
	struct query_expands ex;
	struct rec_out o;
	struct rec_rows rows;

	if (rec_out_params(x, &fs, &ex, &o) < 0)
		return 0;
	rec_select_id(x, id, 0);
	if (rec_fetch(x, x->c, &rows) < 0)
		return 0;
	if (rows.n == 0)
		return rec_error(x->rs, 404, NULL, NULL);
	return rec_answer_row(x, &rows, &o);
}

int
rec_show_rows(struct rec_ctx *x, struct rec_rows *rows)
{
	struct query_fields fs;
	struct query_expands ex;
	struct rec_out o;

	if (rec_out_params(x, &fs, &ex, &o) < 0)
		return 0;
	if (rows->n == 0)
		return rec_error(x->rs, 404, NULL, NULL);
	return rec_answer_row(x, rows, &o);
}

/* Appends " FROM (SELECT $1::type AS "id", ...) AS t WHERE true": the record gone's
 * captured columns as a row of their own, typed as their table types them, for a rule to
 * read as it reads the table.  SQLite casts only its numeric columns (a JSON column's
 * CAST would be NUMERIC's, turning text to 0). */
static void
rec_from_captured(struct rec_ctx *x, const struct rec_row *gone)
{
	struct sqlb *q = &x->t->q;
	const char *type, *dflt;
	size_t i;
	int pg = db_backend(x->rq->db) == DB_PG;

	buf_puts(q->sql, " FROM (SELECT ");
	for (i = 0; i < x->c->nfields; i++) {
		const struct coll_field *f = &x->c->fields[i];

		type = coll_column(f, pg ? DB_PG : DB_SQLITE, &dflt);
		if (i > 0)
			buf_puts(q->sql, ", ");
		buf_puts(q->sql, "CAST(");
		if (gone->v[i] == NULL)
			buf_puts(q->sql, "NULL");
		else
			(void)sqlb_text(q, gone->v[i], gone->len[i]);
		if (i == 0)
			type = pg ? "text" : "TEXT";
		else if (!pg && (f->multiple || (f->type != COLL_NUMBER &&
		    f->type != COLL_BOOL)))
			type = "TEXT";
		buf_printf(q->sql, " AS %s) AS ", type);
		coll_quote(q->sql, f->name);
	}
	buf_puts(q->sql, ") AS t WHERE true");
}

/* SELECT the columns of x->c for the record of an event, rule r and the client's filter=
 * added: from its table by id, or from its captured columns gone.  0, 1 (a null rule,
 * not a superuser), -1 answered. */
static int
rec_select_event(struct rec_ctx *x, const char *id, const struct rec_row *gone,
    enum coll_rule r)
{
	struct sqlb *q = &x->t->q;
	int rc;

	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "SELECT ");
	rec_columns(q->sql, x->c, "t");
	if (gone != NULL)
		rec_from_captured(x, gone);
	else {
		buf_puts(q->sql, " FROM ");
		coll_quote(q->sql, x->c->name);
		buf_puts(q->sql, " AS t WHERE t.\"id\" = ");
		(void)sqlb_text(q, id, strlen(id));
	}
	if ((rc = rec_rule(x, x->c, r, "t")) != 0)
		return rc;
	/* The subscription's own filter, as a list's filter=. */
	return rec_filter(x);
}

int
rec_event_record(struct rec_ctx *x, const char *id, const struct rec_row *gone,
    enum coll_rule r, struct buf *b)
{
	struct query_fields fs;
	struct query_expands ex;
	struct rec_out o;
	struct rec_rows rows;
	int rc;

	if (rec_out_params(x, &fs, &ex, &o) < 0)
		return -1;
	if ((rc = rec_select_event(x, id, gone, r)) != 0)
		return rc < 0 ? -1 : 0;
	if (rec_fetch(x, x->c, &rows) < 0)
		return -1;
	if (rows.n == 0)
		return 0;
	if (o.ex != NULL && rec_expand(x, o.ex, &rows) < 0)
		return -1;
	rec_write(x, b, x->c, rows.r[0], &o, -1, "", 0, 0);
	return buf_failed(b) ? -1 : 1;
}
