/*
 * filter.c: see filter.h.  A recursive-descent parser that writes the SQL as it goes: the
 * values are numbered ($N), so the text and the binds never need reordering.  Recursion
 * is bounded by FILTER_DEPTH_MAX parentheses and FILTER_PATH_MAX relation hops.
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "filter.h"
#include "str.h"

enum fop {
	OP_EQ,
	OP_NE,
	OP_GT,
	OP_GE,
	OP_LT,
	OP_LE,
	OP_LIKE,
	OP_NLIKE,
};

static const char *const fop_sql[] = { " = ", "", " > ", " >= ", " < ", " <= ", "", "" };

/* An operand: a literal value, or an SQL expression. */
struct opnd {
	int lit;
	int null;		/* the literal null (or an absent value) */
	int num;		/* the literal is a number */
	const char *s;		/* the literal's text */
	size_t len;
	const char *sql;	/* the expression, NUL-terminated, in the arena */
	int textual;		/* the expression's "no value" is '' */
	int multi;		/* the expression is a JSON array of strings */
	const char *from;	/* a set of related records: "FROM ... WHERE ... AND ", whose
				 * element is sql (then multi is set too) */
	const char *tabs;	/* the set's FROM list and its join conditions ("... AND "): */
	const char *conds;	/*   from is "FROM tabs WHERE conds" */
	const struct opnd *joined;	/* @collection.X.path: the path on the rule's shared
					 * join of X, for the any-of operators */
	int join;		/* that join's index in fp.joins */
	const struct coll_field *col;	/* a plain column of the filter's own collection */
};

#define FILTER_JOINS_MAX	8	/* distinct @collection.NAME[:alias] in one rule */

/* A collection of a rule's @collection.* references, joined once for the whole rule. */
struct fjoin {
	const struct coll *c;
	char key[2 * COLL_NAME_MAX + 2];	/* NAME or NAME:alias */
	char alias[16];
	int used;	/* referenced with an any-of operator: in the join */
};

struct fp {
	struct sqlb *q;
	const struct coll *c;
	const char *alias;
	const struct filter_ctx *ctx;
	const char *p;
	const char *end;
	int leaves;
	int depth;
	char *err;
	size_t errlen;
	struct fjoin joins[FILTER_JOINS_MAX];
	int njoins;
	struct filter_shape eq;	/* the last leaf, when it is `field = 'text'` */
	int cv;			/* the value of what was just parsed when it does not depend on
				 * the record (1, 0), else -1 */
};

static enum filter_err
fp_fail(struct fp *f, enum filter_err e, const char *msg)
{
	(void)snprintf(f->err, f->errlen, "%s", msg);
	return e;
}

static void
fp_skip(struct fp *f)
{
	for (;;) {
		while (f->p < f->end && isspace((unsigned char)*f->p))
			f->p++;
		if (f->p + 1 < f->end && f->p[0] == '/' && f->p[1] == '/') {
			while (f->p < f->end && *f->p != '\n')
				f->p++;
			continue;
		}
		return;
	}
}

/* Matches the token lit after blanks; advances past it when it is there. */
static int
fp_accept(struct fp *f, const char *lit)
{
	size_t n = strlen(lit);

	fp_skip(f);
	if ((size_t)(f->end - f->p) >= n && memcmp(f->p, lit, n) == 0) {
		f->p += n;
		return 1;
	}
	return 0;
}

static int
fp_identch(int ch)
{
	return isalnum(ch) || ch == '_' || ch == '.' || ch == '@';
}

void
filter_date(char out[25], time_t t, int ms)
{
	struct tm tm;
	char tmp[96];

	gmtime_r(&t, &tm);
	(void)snprintf(tmp, sizeof(tmp), "%04d-%02d-%02d %02d:%02d:%02d.%03dZ",
	    tm.tm_year + 1900, tm.tm_mon + 1, tm.tm_mday, tm.tm_hour, tm.tm_min, tm.tm_sec,
	    ms % 1000);
	memcpy(out, tmp, 24);
	out[24] = '\0';
}

/* Copies a literal's text into the arena.  0 or -1. */
static int
fp_lit(struct fp *f, struct opnd *o, const char *s, size_t len, int num)
{
	memset(o, 0, sizeof(*o));
	o->lit = 1;
	o->num = num;
	if ((o->s = arena_strndup(f->q->arena, s, len)) == NULL)
		return -1;
	o->len = len;
	return 0;
}

/* The date macros: 0 with *o set, 1 when name is not one, -1 out of memory. */
static int
fp_macro(struct fp *f, const char *name, size_t len, struct opnd *o)
{
	static const char *const nums[] = { "@second", "@minute", "@hour", "@day", "@month",
	    "@year", "@weekday" };
	time_t now = f->ctx != NULL ? f->ctx->now : time(NULL), t;
	struct tm tm;
	char d[25];
	size_t i;

	gmtime_r(&now, &tm);
	for (i = 0; i < sizeof(nums) / sizeof(nums[0]); i++)
		if (str_eq(name, len, nums[i])) {
			int v[] = { tm.tm_sec, tm.tm_min, tm.tm_hour, tm.tm_mday, tm.tm_mon + 1,
			    tm.tm_year + 1900, tm.tm_wday };
			char n[16];

			(void)snprintf(n, sizeof(n), "%d", v[i]);
			return fp_lit(f, o, n, strlen(n), 1);
		}
	if (str_eq(name, len, "@now")) {
		filter_date(d, now, 0);
		return fp_lit(f, o, d, strlen(d), 0);
	}
	if (str_eq(name, len, "@yesterday") || str_eq(name, len, "@tomorrow")) {
		filter_date(d, now + (name[1] == 'y' ? -86400 : 86400), 0);
		return fp_lit(f, o, d, strlen(d), 0);
	}
	tm.tm_isdst = 0;
	if (str_eq(name, len, "@todayStart") || str_eq(name, len, "@todayEnd")) {
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		if (name[6] == 'E')
			tm.tm_mday++;
	} else if (str_eq(name, len, "@monthStart") || str_eq(name, len, "@monthEnd")) {
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_mday = 1;
		if (name[6] == 'E')
			tm.tm_mon++;
	} else if (str_eq(name, len, "@yearStart") || str_eq(name, len, "@yearEnd")) {
		tm.tm_hour = tm.tm_min = tm.tm_sec = 0;
		tm.tm_mday = 1;
		tm.tm_mon = 0;
		if (name[5] == 'E')
			tm.tm_year++;
	} else
		return 1;
	t = timegm(&tm);
	/* The ends are the last millisecond before the next period. */
	if (memcmp(name + len - 3, "End", 3) == 0)
		filter_date(d, t - 1, 999);
	else
		filter_date(d, t, 0);
	return fp_lit(f, o, d, strlen(d), 0);
}

static enum filter_err fp_path(struct fp *f, const struct coll *c, const char *alias,
    const char *p, size_t len, int hops, struct opnd *o);
static enum filter_err fp_leaf(struct fp *f, struct opnd *a, enum fop op, int any,
    struct opnd *b);

/*
 * Makes *o the set of records "tabs" (a FROM list) under the conditions conds (each
 * followed by " AND "), whose element is the path in: a scalar of them, a further set
 * (a path crossing two sets: its FROM list and conditions join these, so that the set is
 * every pair), or a multiple field of them (its elements joined in).  FILTER_OK or
 * FILTER_ENOMEM.
 */
static enum filter_err
fp_set(struct fp *f, const char *tabs, const char *conds, const struct opnd *in,
    struct opnd *o)
{
	enum filter_err e = FILTER_OK;
	char el[32];
	struct buf t, c, b;

	memset(o, 0, sizeof(*o));
	buf_init(&t, 1 << 16);
	buf_init(&c, 1 << 16);
	buf_init(&b, 1 << 16);
	buf_puts(&t, tabs);
	buf_puts(&c, conds);
	o->textual = in->textual;
	o->sql = in->sql;
	if (in->from != NULL) {
		buf_puts(&t, ", ");
		buf_puts(&t, in->tabs);
		buf_puts(&c, in->conds);
	} else if (in->multi) {
		(void)snprintf(el, sizeof(el), "j%d", ++f->q->alias);
		buf_puts(&t, ", ");
		buf_puts(&t, f->q->d->each_open);
		buf_puts(&t, in->sql);
		buf_puts(&t, f->q->d->each_close);
		buf_puts(&t, el);
		buf_puts(&t, f->q->d->each_alias);
		(void)snprintf(el + strlen(el), sizeof(el) - strlen(el), ".value");
		o->textual = 1;
		o->sql = arena_strndup(f->q->arena, el, strlen(el));
	}
	buf_puts(&b, "FROM ");
	buf_append(&b, t.data, t.len);
	buf_puts(&b, " WHERE ");
	buf_append(&b, c.data, c.len);
	o->multi = 1;
	if (buf_failed(&t) || buf_failed(&c) || buf_failed(&b) || o->sql == NULL ||
	    (o->tabs = arena_strndup(f->q->arena, t.data, t.len)) == NULL ||
	    (o->conds = arena_strndup(f->q->arena, c.len ? c.data : "", c.len)) == NULL ||
	    (o->from = arena_strndup(f->q->arena, b.data, b.len)) == NULL)
		e = fp_fail(f, FILTER_ENOMEM, "out of memory");
	buf_free(&t);
	buf_free(&c);
	buf_free(&b);
	return e;
}

/*
 * A path through a set of related records: name.rest where name is a multiple relation of
 * c or a back-relation C_via_F.  *o becomes a set (o->from, o->sql its element); the rest
 * may cross further sets (FILTER_PATH_MAX hops in all).  FILTER_OK, or an error.
 */
static enum filter_err
fp_set_path(struct fp *f, const struct coll *c, const char *alias, const char *p,
    size_t seg, const char *rest, size_t rlen, int hops, struct opnd *o)
{
	const struct coll_field *fd = coll_field(c, p, seg), *bf = NULL;
	const struct coll *t;
	const char *via;
	char sub[16], name[2 * COLL_NAME_MAX + 8];
	struct opnd in;
	enum filter_err e;
	struct buf tabs, conds;

	if (fd != NULL) {
		t = fd->tcoll;
	} else {
		if (seg >= sizeof(name))
			return fp_fail(f, FILTER_EFIELD, "unknown field in a path");
		memcpy(name, p, seg);
		name[seg] = '\0';
		via = strstr(name, "_via_");
		t = via ? colls_find(c->all, name, (size_t)(via - name)) : NULL;
		bf = t ? coll_field(t, via + 5, strlen(via + 5)) : NULL;
		if (bf == NULL || bf->type != COLL_RELATION || bf->tcoll != c) {
			(void)snprintf(f->err, f->errlen, "unknown field \"%.*s\" in %s",
			    (int)(seg > 64 ? 64 : seg), p, c->name);
			return FILTER_EFIELD;
		}
	}
	if (hops >= FILTER_PATH_MAX)
		return fp_fail(f, FILTER_ELIMIT, "too many relation hops in a field path");
	(void)snprintf(sub, sizeof(sub), "r%d", ++f->q->alias);
	if ((e = fp_path(f, t, sub, rest, rlen, hops + 1, &in)) != FILTER_OK)
		return e;
	buf_init(&tabs, 1 << 16);
	buf_init(&conds, 1 << 16);
	coll_quote(&tabs, t->name);
	buf_printf(&tabs, " AS %s", sub);
	if (fd != NULL) {
		/* The records a multiple relation lists. */
		buf_printf(&conds, "%s.\"id\" IN (SELECT value FROM %s", sub, f->q->d->each_open);
		sqlb_col(&conds, alias, fd->name);
		buf_puts(&conds, f->q->d->each_close);
		buf_printf(&conds, "e%d%s) AND ", f->q->alias, f->q->d->each_alias);
	} else if (!bf->multiple) {
		/* The records whose relation points here. */
		sqlb_col(&conds, sub, bf->name);
		buf_puts(&conds, " = ");
		sqlb_col(&conds, alias, "id");
		buf_puts(&conds, " AND ");
	} else {
		buf_puts(&conds, "EXISTS (SELECT 1 FROM ");
		buf_puts(&conds, f->q->d->each_open);
		sqlb_col(&conds, sub, bf->name);
		buf_puts(&conds, f->q->d->each_close);
		buf_printf(&conds, "e%d%s WHERE e%d.value = ", f->q->alias, f->q->d->each_alias,
		    f->q->alias);
		sqlb_col(&conds, alias, "id");
		buf_puts(&conds, ") AND ");
	}
	if (buf_failed(&tabs) || buf_failed(&conds))
		e = fp_fail(f, FILTER_ENOMEM, "out of memory");
	else
		e = fp_set(f, tabs.data, conds.data, &in, o);
	buf_free(&tabs);
	buf_free(&conds);
	return e;
}

/* Sets o->sql to b's text, copied into the arena.  FILTER_OK, or FILTER_ENOMEM. */
static enum filter_err
fp_path_sql(struct fp *f, const struct buf *b, struct opnd *o)
{
	if (buf_failed(b) || (o->sql = arena_strndup(f->q->arena, b->data, b->len)) == NULL)
		return fp_fail(f, FILTER_ENOMEM, "out of memory");
	return FILTER_OK;
}

/* Writes into b the hidden email of an auth collection's record, table alias: its CASE,
 * which shows it when emailVisibility is on or to the record itself (the signed-in id
 * bound in b's text).  FILTER_OK, or FILTER_ELIMIT. */
static enum filter_err
fp_path_email(struct fp *f, const char *alias, struct buf *b, struct opnd *o)
{
	const struct filter_ctx *x = f->ctx;
	struct buf *saved = f->q->sql;
	int rc;

	buf_puts(b, "(CASE WHEN ");
	sqlb_col(b, alias, "emailVisibility");
	buf_puts(b, " OR ");
	sqlb_col(b, alias, "id");
	buf_puts(b, " = ");
	f->q->sql = b;
	rc = x != NULL && x->auth != NULL && x->auth_vals != NULL && x->auth_vals[0] ?
	    sqlb_text(f->q, x->auth_vals[0], x->auth_lens[0]) : sqlb_text(f->q, "", 0);
	f->q->sql = saved;
	buf_puts(b, " THEN ");
	sqlb_col(b, alias, "email");
	buf_puts(b, " ELSE '' END)");
	o->textual = 1;
	if (rc < 0)
		return fp_fail(f, FILTER_ELIMIT, "too many values in the filter");
	return FILTER_OK;
}

/* The rest of a field path (rest, rlen) past the single relation fd (p, seg: its name in
 * the path) of the record at table alias, hops so far: the related record's value as a
 * subquery, or, when a set follows, that set with the related record joined to its FROM
 * list.  FILTER_OK with *o set. */
static enum filter_err
fp_path_hop(struct fp *f, const struct coll_field *fd, const char *alias, const char *p,
    size_t seg, const char *rest, size_t rlen, int hops, struct opnd *o)
{
	struct opnd in;
	struct buf b, cb;
	char sub[16];
	enum filter_err e;

	if (fd->type != COLL_RELATION || fd->multiple || fd->tcoll == NULL) {
		(void)snprintf(f->err, f->errlen, "\"%.*s\" is not a single relation", (int)seg, p);
		return FILTER_EFIELD;
	}
	if (hops >= FILTER_PATH_MAX)
		return fp_fail(f, FILTER_ELIMIT, "too many relation hops in a field path");
	(void)snprintf(sub, sizeof(sub), "r%d", ++f->q->alias);
	if ((e = fp_path(f, fd->tcoll, sub, rest, rlen, hops + 1, &in)) != FILTER_OK)
		return e;
	buf_init(&b, 1 << 16);
	if (in.from != NULL) {
		/* A set further on (author.posts_via_author.title): the related record joins
		 * that set's FROM list. */
		buf_init(&cb, 1 << 16);
		coll_quote(&b, fd->tcoll->name);
		buf_printf(&b, " AS %s", sub);
		buf_printf(&cb, "%s.\"id\" = ", sub);
		sqlb_col(&cb, alias, fd->name);
		buf_puts(&cb, " AND ");
		e = buf_failed(&b) || buf_failed(&cb) ?
		    fp_fail(f, FILTER_ENOMEM, "out of memory") : fp_set(f, b.data, cb.data, &in, o);
		buf_free(&b);
		buf_free(&cb);
		return e;
	}
	buf_puts(&b, "(SELECT ");
	buf_puts(&b, in.sql);
	buf_puts(&b, " FROM ");
	coll_quote(&b, fd->tcoll->name);
	buf_printf(&b, " AS %s WHERE %s.\"id\" = ", sub, sub);
	sqlb_col(&b, alias, fd->name);
	buf_putc(&b, ')');
	o->textual = in.textual;
	o->multi = in.multi;
	e = fp_path_sql(f, &b, o);
	buf_free(&b);
	return e;
}

/* A field path in collection c, table alias; hops so far.  FILTER_OK with *o set. */
static enum filter_err
fp_path(struct fp *f, const struct coll *c, const char *alias, const char *p, size_t len,
    int hops, struct opnd *o)
{
	const char *dot = memchr(p, '.', len);
	size_t seg = dot ? (size_t)(dot - p) : len;
	const struct coll_field *fd = coll_field(c, p, seg);
	struct buf b;
	enum filter_err e;

	if (dot != NULL && (fd == NULL || (fd->type == COLL_RELATION && fd->multiple &&
	    fd->tcoll != NULL)))
		return fp_set_path(f, c, alias, p, seg, dot + 1, len - seg - 1, hops, o);
	if (fd == NULL || fd->hidden) {
		(void)snprintf(f->err, f->errlen, "unknown field \"%.*s\" in %s",
		    (int)(seg > 64 ? 64 : seg), p, c->name);
		return FILTER_EFIELD;
	}
	memset(o, 0, sizeof(*o));
	if (dot != NULL)
		return fp_path_hop(f, fd, alias, p, seg, dot + 1, len - seg - 1, hops, o);
	buf_init(&b, 1 << 16);
	if (c->auth && strcmp(fd->name, "email") == 0 && (f->ctx == NULL ||
	    (!f->ctx->rule && !f->ctx->superuser))) {
		if ((e = fp_path_email(f, alias, &b, o)) != FILTER_OK) {
			buf_free(&b);
			return e;
		}
	} else {
		sqlb_col(&b, alias, fd->name);
		o->textual = coll_textual(fd);
		o->multi = fd->multiple;
		if (hops == 0 && c == f->c)
			o->col = fd;
	}
	e = fp_path_sql(f, &b, o);
	buf_free(&b);
	return e;
}

/* The value of the signed-in record's field name (a rule's @request.auth.NAME). */
static enum filter_err
fp_auth(struct fp *f, const char *name, size_t len, struct opnd *o)
{
	const struct filter_ctx *x = f->ctx;
	const struct coll_field *fd;
	size_t i;

	if (x->auth == NULL || x->auth_vals == NULL) {
		memset(o, 0, sizeof(*o));
		o->lit = o->null = 1;
		o->s = "";
		return FILTER_OK;
	}
	if (str_eq(name, len, "collectionId") || str_eq(name, len, "collectionName")) {
		const char *v = name[10] == 'I' ? x->auth->id : x->auth->name;

		return fp_lit(f, o, v, strlen(v), 0) < 0 ? FILTER_ENOMEM : FILTER_OK;
	}
	if ((fd = coll_field(x->auth, name, len)) == NULL || fd->hidden) {
		(void)snprintf(f->err, f->errlen, "unknown field \"@request.auth.%.*s\"", (int)len,
		    name);
		return FILTER_EFIELD;
	}
	i = coll_field_index(x->auth, fd);
	if (x->auth_vals[i] == NULL) {
		memset(o, 0, sizeof(*o));
		o->lit = o->null = 1;
		o->s = "";
		return FILTER_OK;
	}
	if (fd->type == COLL_BOOL) {
		int t = x->auth_vals[i][0] == 't' || x->auth_vals[i][0] == '1';

		return fp_lit(f, o, t ? "1" : "0", 1, 1) < 0 ? FILTER_ENOMEM : FILTER_OK;
	}
	return fp_lit(f, o, x->auth_vals[i], x->auth_lens[i], fd->type == COLL_NUMBER) < 0 ?
	    FILTER_ENOMEM : FILTER_OK;
}

/* The body's value of key name[0..len), or NULL when the key is absent. */
static const cJSON *
fp_body_get(const struct fp *f, const char *name, size_t len)
{
	const cJSON *it;

	if (f->ctx->body != NULL)
		cJSON_ArrayForEach(it, f->ctx->body)
			if (it->string != NULL && str_eq(name, len, it->string))
				return it;
	return NULL;
}

/* The request body's key name (a rule's @request.body.NAME). */
static enum filter_err
fp_body(struct fp *f, const char *name, size_t len, struct opnd *o)
{
	const cJSON *v = fp_body_get(f, name, len);
	char n[64];

	if (v == NULL || cJSON_IsNull(v)) {
		memset(o, 0, sizeof(*o));
		o->lit = o->null = 1;
		o->s = "";
		return FILTER_OK;
	}
	if (cJSON_IsString(v))
		return fp_lit(f, o, v->valuestring, strlen(v->valuestring), 0) < 0 ?
		    FILTER_ENOMEM : FILTER_OK;
	if (cJSON_IsBool(v))
		return fp_lit(f, o, cJSON_IsTrue(v) ? "1" : "0", 1, 1) < 0 ? FILTER_ENOMEM :
		    FILTER_OK;
	if (cJSON_IsNumber(v)) {
		(void)snprintf(n, sizeof(n), "%.17g", v->valuedouble);
		return fp_lit(f, o, n, strlen(n), 1) < 0 ? FILTER_ENOMEM : FILTER_OK;
	}
	return fp_fail(f, FILTER_EFIELD, "@request.body: only strings, numbers, bools, null");
}

/*
 * @request.body.NAME:isset (the key was sent, even as null: a literal true or false) and
 * @request.body.NAME:changed (sent, and different from the record's NAME as the rule sees
 * it: an update's stored value, a create's new one).  A multiple or json field compares
 * as JSON (a lone string as a one-element array); other values as `body != NAME` does.
 */
static enum filter_err
fp_body_mod(struct fp *f, const char *name, size_t len, const char *m, size_t mlen,
    struct opnd *o)
{
	const cJSON *v = fp_body_get(f, name, len);
	const struct coll_field *fd;
	struct buf *saved = f->q->sql, b;
	struct opnd col, val;
	enum filter_err e = FILTER_OK;

	if (!str_eq(m, mlen, "isset") && !str_eq(m, mlen, "changed"))
		return fp_fail(f, FILTER_ESYNTAX, "unknown modifier of @request.body "
		    "(isset, changed)");
	if (*m == 'c') {
		if ((fd = coll_field(f->c, name, len)) == NULL || fd->hidden) {
			(void)snprintf(f->err, f->errlen, "unknown field \"%.*s\" in %s",
			    (int)(len > 64 ? 64 : len), name, f->c->name);
			return FILTER_EFIELD;
		}
	} else
		fd = NULL;
	if (v == NULL || fd == NULL)
		return fp_lit(f, o, v != NULL ? "1" : "0", 1, 1) < 0 ?
		    fp_fail(f, FILTER_ENOMEM, "out of memory") : FILTER_OK;
	/* The comparison, written apart: it becomes this operand's SQL. */
	buf_init(&b, 1 << 16);
	f->q->sql = &b;
	buf_putc(&b, '(');
	if (fd->multiple || fd->type == COLL_JSON) {
		cJSON *arr = NULL;
		char *js, *jv;
		int rc;

		if (fd->multiple && cJSON_IsString(v)) {
			if ((arr = cJSON_CreateArray()) != NULL)
				cJSON_AddItemToArray(arr, cJSON_CreateString(v->valuestring));
			v = arr;
		}
		/* The bound text must outlive the statement: into the arena. */
		js = v != NULL ? cJSON_PrintUnformatted(v) : NULL;
		jv = js != NULL ? arena_strndup(f->q->arena, js, strlen(js)) : NULL;
		free(js);
		cJSON_Delete(arr);
		buf_puts(&b, f->q->d->json_cmp_col_open);
		sqlb_col(&b, f->alias, fd->name);
		buf_puts(&b, f->q->d->json_cmp_col_close);
		buf_putc(&b, ' ');
		buf_puts(&b, f->q->d->is_not);
		buf_putc(&b, ' ');
		buf_puts(&b, f->q->d->json_cmp_val_open);
		rc = jv != NULL ? sqlb_text(f->q, jv, strlen(jv)) : -1;
		buf_puts(&b, f->q->d->json_cmp_val_close);
		if (rc < 0)
			e = fp_fail(f, FILTER_ELIMIT, "too many values in the filter");
	} else {
		memset(&col, 0, sizeof(col));
		if ((e = fp_path(f, f->c, f->alias, name, len, 0, &col)) == FILTER_OK &&
		    (e = fp_body(f, name, len, &val)) == FILTER_OK) {
			f->leaves--;	/* one leaf of the rule's, not two */
			e = fp_leaf(f, &val, OP_NE, 0, &col);
		}
	}
	buf_putc(&b, ')');
	f->q->sql = saved;
	memset(o, 0, sizeof(*o));
	if (e == FILTER_OK && (buf_failed(&b) ||
	    (o->sql = arena_strndup(f->q->arena, b.data, b.len)) == NULL))
		e = fp_fail(f, FILTER_ENOMEM, "out of memory");
	buf_free(&b);
	return e;
}

/*
 * @collection.NAME[:alias].path in a rule: the records of collection NAME, joined to the
 * rule.  With an any-of operator every reference to one NAME[:alias] reads the same row of
 * one join over the whole rule (as PocketBase's LEFT JOIN: `@collection.r.user ?= X &&
 * @collection.r.course ?= Y` asks for one record of r with both); with a plain operator
 * the path is a set of its own, true when every record of NAME passes (and one exists).
 * s[0..len) starts after "@collection.".
 */
static enum filter_err
fp_collection(struct fp *f, const char *s, size_t len, struct opnd *o)
{
	const char *dot = memchr(s, '.', len), *colon;
	const struct coll *c;
	struct fjoin *j = NULL;
	struct opnd *in;
	size_t nlen, klen;
	enum filter_err e;
	char tabs[COLL_NAME_MAX + 32];
	struct buf q;
	int i;

	if (dot == NULL || dot == s || (size_t)(dot - s) + 1 >= len)
		return fp_fail(f, FILTER_EFIELD, "@collection needs a collection and a field");
	klen = (size_t)(dot - s);
	colon = memchr(s, ':', klen);
	nlen = colon != NULL ? (size_t)(colon - s) : klen;
	if (colon != NULL && colon + 1 == dot)
		return fp_fail(f, FILTER_ESYNTAX, "an empty @collection alias");
	for (i = 0; colon != NULL && colon + 1 + i < dot; i++)
		if (!isalnum((unsigned char)colon[1 + i]) && colon[1 + i] != '_')
			return fp_fail(f, FILTER_ESYNTAX, "a malformed @collection alias");
	if ((c = colls_find(f->c->all, s, nlen)) == NULL || strlen(c->name) != nlen ||
	    memcmp(c->name, s, nlen) != 0) {
		(void)snprintf(f->err, f->errlen, "unknown collection \"@collection.%.*s\"",
		    (int)(nlen > 64 ? 64 : nlen), s);
		return FILTER_EFIELD;
	}
	if (klen >= sizeof(f->joins[0].key))
		return fp_fail(f, FILTER_EFIELD, "a malformed @collection alias");
	for (i = 0; i < f->njoins; i++)
		if (str_eq(s, klen, f->joins[i].key))
			j = &f->joins[i];
	if (j == NULL) {
		if (f->njoins >= FILTER_JOINS_MAX)
			return fp_fail(f, FILTER_ELIMIT, "too many @collection references in a rule");
		j = &f->joins[f->njoins++];
		memset(j, 0, sizeof(*j));
		j->c = c;
		memcpy(j->key, s, klen);
		j->key[klen] = '\0';
		(void)snprintf(j->alias, sizeof(j->alias), "c%d", f->njoins);
	}
	if ((in = arena_alloc(f->q->arena, sizeof(*in))) == NULL)
		return fp_fail(f, FILTER_ENOMEM, "out of memory");
	if ((e = fp_path(f, c, j->alias, dot + 1, len - klen - 1, 1, in)) != FILTER_OK)
		return e;
	/* The set form reuses the join's alias: inside its own subquery it hides the join. */
	buf_init(&q, sizeof(tabs));
	coll_quote(&q, c->name);
	(void)snprintf(tabs, sizeof(tabs), "%s AS %s", buf_failed(&q) ? "" : q.data, j->alias);
	buf_free(&q);
	if ((e = fp_set(f, tabs, "", in, o)) != FILTER_OK)
		return e;
	o->joined = in;
	o->join = (int)(j - f->joins);
	return FILTER_OK;
}

/*
 * A field path with a modifier: name:lower (LOWER() of a text), name:length (the number of
 * elements of a multiple field, or of characters of a text), name:each (a multiple field
 * element by element: what a plain operator does on one already).
 */
static enum filter_err
fp_modified(struct fp *f, const char *name, size_t len, const char *m, size_t mlen,
    struct opnd *o)
{
	enum filter_err e;
	struct buf b;
	int lower = str_eq(m, mlen, "lower"), length = str_eq(m, mlen, "length");

	if (!lower && !length && !str_eq(m, mlen, "each"))
		return fp_fail(f, FILTER_ESYNTAX, "unknown modifier (lower, length, each)");
	if ((e = fp_path(f, f->c, f->alias, name, len, 0, o)) != FILTER_OK)
		return e;
	if (!lower && !length) {
		if (!o->multi)
			return fp_fail(f, FILTER_EFIELD, ":each needs a multiple field");
		return FILTER_OK;
	}
	if (lower && !o->textual)
		return fp_fail(f, FILTER_EFIELD, ":lower needs a text field");
	if (length && o->from != NULL)
		return fp_fail(f, FILTER_EFIELD, ":length needs a field of the record, not a "
		    "path through a set of records");
	buf_init(&b, 1 << 16);
	buf_puts(&b, lower ? "LOWER(" : o->multi ? f->q->d->json_length : "length(");
	buf_puts(&b, o->sql);
	buf_putc(&b, ')');
	/* :lower on a set lowers each element; the set stays one. */
	o->multi = o->from != NULL;
	o->col = NULL;
	o->textual = lower;
	if (buf_failed(&b) || (o->sql = arena_strndup(f->q->arena, b.data, b.len)) == NULL)
		e = fp_fail(f, FILTER_ENOMEM, "out of memory");
	buf_free(&b);
	return e;
}

/* A quoted text literal, f->p at its opening quote (' or "), which a backslash escapes
 * inside it.  FILTER_OK with *o set. */
static enum filter_err
fp_quoted(struct fp *f, struct opnd *o)
{
	const char *s = f->p;
	int ch = (unsigned char)*s;
	char *out, *w;

	for (f->p++; f->p < f->end && *f->p != ch; f->p++)
		if (*f->p == '\\' && f->p + 1 < f->end && f->p[1] == ch)
			f->p++;
	if (f->p == f->end)
		return fp_fail(f, FILTER_ESYNTAX, "a quoted text is not closed");
	if ((out = arena_alloc(f->q->arena, (size_t)(f->p - s))) == NULL)
		return fp_fail(f, FILTER_ENOMEM, "out of memory");
	for (w = out, s++; s < f->p; s++) {
		if (*s == '\\' && s + 1 < f->p && s[1] == ch)
			s++;
		*w++ = *s;
	}
	*w = '\0';
	f->p++;
	memset(o, 0, sizeof(*o));
	o->lit = 1;
	o->s = out;
	o->len = (size_t)(w - out);
	return FILTER_OK;
}

/* A number literal, f->p at its first digit or its minus sign: digits, and a fraction's.
 * FILTER_OK with *o set. */
static enum filter_err
fp_number(struct fp *f, struct opnd *o)
{
	const char *s = f->p;

	f->p++;
	while (f->p < f->end && isdigit((unsigned char)*f->p))
		f->p++;
	if (f->p + 1 < f->end && *f->p == '.' && isdigit((unsigned char)f->p[1]))
		for (f->p++; f->p < f->end && isdigit((unsigned char)*f->p); f->p++)
			;
	if (f->p < f->end && fp_identch((unsigned char)*f->p))
		return fp_fail(f, FILTER_ESYNTAX, "a malformed number");
	return fp_lit(f, o, s, (size_t)(f->p - s), 1) < 0 ?
	    fp_fail(f, FILTER_ENOMEM, "out of memory") : FILTER_OK;
}

/* An API rule's @request or @collection operand, which starts at s; f->p is past its
 * first identifier, on any modifier or alias that follows.  FILTER_OK with *o set. */
static enum filter_err
fp_rule_operand(struct fp *f, const char *s, struct opnd *o)
{
	size_t len;

	if (f->ctx == NULL || !f->ctx->rule)
		return fp_fail(f, FILTER_EFORBIDDEN, "@request and @collection belong to API rules");
	if ((size_t)(f->p - s) > 12 && strncmp(s, "@collection.", 12) == 0) {
		/* @collection.NAME:alias.path: the alias and the path go on. */
		if (f->p < f->end && *f->p == ':')
			for (f->p++; f->p < f->end && fp_identch((unsigned char)*f->p); f->p++)
				;
		return fp_collection(f, s + 12, (size_t)(f->p - s) - 12, o);
	}
	len = (size_t)(f->p - s);
	if (f->p < f->end && *f->p == ':') {
		const char *m = ++f->p;

		while (f->p < f->end && isalpha((unsigned char)*f->p))
			f->p++;
		if (len > 14 && strncmp(s, "@request.body.", 14) == 0)
			return fp_body_mod(f, s + 14, len - 14, m, (size_t)(f->p - m), o);
		return fp_fail(f, FILTER_EFIELD, "a modifier here: only "
		    "@request.body.*:isset and :changed are supported");
	}
	if (len > 14 && strncmp(s, "@request.auth.", 14) == 0)
		return fp_auth(f, s + 14, len - 14, o);
	if (len > 14 && strncmp(s, "@request.body.", 14) == 0)
		return fp_body(f, s + 14, len - 14, o);
	return fp_fail(f, FILTER_EFIELD, "only @request.auth.*, @request.body.* and "
	    "@collection.* are supported in rules");
}

/* A word operand (s, len) without a modifier: true, false, null, a field path or a macro
 * (@now and the like).  FILTER_OK with *o set. */
static enum filter_err
fp_word(struct fp *f, const char *s, size_t len, struct opnd *o)
{
	int rc;

	if (str_eq(s, len, "true") || str_eq(s, len, "false"))
		return fp_lit(f, o, *s == 't' ? "1" : "0", 1, 1) < 0 ?
		    fp_fail(f, FILTER_ENOMEM, "out of memory") : FILTER_OK;
	if (str_eq(s, len, "null")) {
		memset(o, 0, sizeof(*o));
		o->lit = o->null = 1;
		o->s = "";
		return FILTER_OK;
	}
	if (*s != '@')
		return fp_path(f, f->c, f->alias, s, len, 0, o);
	if ((rc = fp_macro(f, s, len, o)) < 0)
		return fp_fail(f, FILTER_ENOMEM, "out of memory");
	if (rc > 0) {
		(void)snprintf(f->err, f->errlen, "unknown macro \"%.*s\"", (int)len, s);
		return FILTER_ESYNTAX;
	}
	return FILTER_OK;
}

/* One operand. */
static enum filter_err
fp_operand(struct fp *f, struct opnd *o)
{
	const char *s;
	int ch;

	fp_skip(f);
	if (f->p == f->end)
		return fp_fail(f, FILTER_ESYNTAX, "an operand is missing");
	s = f->p;
	ch = (unsigned char)*s;
	if (ch == '\'' || ch == '"')
		return fp_quoted(f, o);
	if (isdigit(ch) || (ch == '-' && f->p + 1 < f->end && isdigit((unsigned char)f->p[1])))
		return fp_number(f, o);
	if (!(isalpha(ch) || ch == '_' || ch == '@'))
		return fp_fail(f, FILTER_ESYNTAX, "an operand is expected");
	while (f->p < f->end && fp_identch((unsigned char)*f->p))
		f->p++;
	if (*s == '@' && (size_t)(f->p - s) >= 8 && (strncmp(s, "@request", 8) == 0 ||
	    strncmp(s, "@collect", 8) == 0))
		return fp_rule_operand(f, s, o);
	if (f->p < f->end && *f->p == ':' && *s != '@') {
		/* A field's modifier: :lower, :length or :each. */
		const char *m = ++f->p;

		while (f->p < f->end && isalpha((unsigned char)*f->p))
			f->p++;
		return fp_modified(f, s, (size_t)(m - 1 - s), m, (size_t)(f->p - m), o);
	}
	return fp_word(f, s, (size_t)(f->p - s), o);
}

/* The operator: *op and *any.  0, or -1 when there is none. */
static int
fp_op(struct fp *f, enum fop *op, int *any)
{
	static const struct { const char *t; enum fop op; } ops[] = {
		{ "!=", OP_NE }, { ">=", OP_GE }, { "<=", OP_LE }, { "!~", OP_NLIKE },
		{ "=", OP_EQ }, { ">", OP_GT }, { "<", OP_LT }, { "~", OP_LIKE },
	};
	size_t i;

	fp_skip(f);
	*any = f->p < f->end && *f->p == '?';
	if (*any)
		f->p++;
	for (i = 0; i < sizeof(ops) / sizeof(ops[0]); i++) {
		size_t n = strlen(ops[i].t);

		if ((size_t)(f->end - f->p) >= n && memcmp(f->p, ops[i].t, n) == 0) {
			f->p += n;
			*op = ops[i].op;
			return 0;
		}
	}
	return -1;
}

static int
opnd_empty(const struct opnd *o)
{
	return o->lit && (o->null || o->len == 0);
}

/* Case-insensitive (ASCII) containment of n in h, '%' in n matching anything. */
static int
fold_contains(const char *h, size_t hl, const char *n, size_t nl)
{
	size_t i, j, k;

	for (k = 0; k < nl && n[k] != '%'; k++)
		;
	if (k < nl)	/* a pattern of its own: compare the part before its first '%' */
		nl = k;
	if (nl > hl)
		return 0;
	for (i = 0; i + nl <= hl; i++) {
		for (j = 0; j < nl; j++)
			if (tolower((unsigned char)h[i + j]) != tolower((unsigned char)n[j]))
				break;
		if (j == nl)
			return 1;
	}
	return 0;
}

/* Two literals, compared here. */
static int
fold(const struct opnd *a, enum fop op, const struct opnd *b)
{
	int c;

	if (op == OP_LIKE || op == OP_NLIKE)
		return fold_contains(a->s, a->len, b->s, b->len) == (op == OP_LIKE);
	if (opnd_empty(a) || opnd_empty(b))
		c = opnd_empty(a) && opnd_empty(b) ? 0 : opnd_empty(a) ? -1 : 1;
	else if (a->num && b->num) {
		double x = strtod(a->s, NULL), y = strtod(b->s, NULL);

		c = x < y ? -1 : x > y;
	} else {
		size_t n = a->len < b->len ? a->len : b->len;

		c = memcmp(a->s, b->s, n);
		if (c == 0)
			c = a->len < b->len ? -1 : a->len > b->len;
	}
	switch (op) {
	case OP_EQ: return c == 0;
	case OP_NE: return c != 0;
	case OP_GT: return c > 0;
	case OP_GE: return c >= 0;
	case OP_LT: return c < 0;
	default: return c <= 0;
	}
}

/* Appends an operand's SQL: its expression, or its value bound. */
static int
fp_emit(struct fp *f, const struct opnd *o, int as_text)
{
	struct buf *b = f->q->sql;

	if (o->lit && o->num) {
		/* A number is bound as one: SQLite compares an expression without a column's
		 * affinity (json_array_length(), a subquery) with a text value as text. */
		int64_t i;

		if (str_to_int(o->s, o->len, INT64_MIN, INT64_MAX, &i) == 0)
			return sqlb_int(f->q, i);
		return sqlb_double(f->q, strtod(o->s, NULL));
	}
	if (o->lit)
		return o->null ? sqlb_null(f->q) : sqlb_text(f->q, o->s, o->len);
	if (as_text && !o->textual) {
		buf_puts(b, "CAST(");
		buf_puts(b, o->sql);
		return buf_puts(b, " AS text)");
	}
	return buf_puts(b, o->sql);
}

/* A comparison of two scalar operands (not both literals). */
static enum filter_err
fp_cmp(struct fp *f, const struct opnd *a, enum fop op, const struct opnd *b)
{
	struct buf *sql = f->q->sql;
	int rc = 0;

	if ((op == OP_EQ || op == OP_NE) && (opnd_empty(a) || opnd_empty(b))) {
		const struct opnd *x = opnd_empty(a) ? b : a;

		buf_puts(sql, op == OP_NE ? "(NOT (" : "((");
		buf_puts(sql, x->sql);
		buf_puts(sql, " IS NULL");
		if (x->multi) {
			buf_puts(sql, " OR ");
			buf_puts(sql, x->sql);
			buf_puts(sql, " = '[]'");
		} else if (x->textual) {
			buf_puts(sql, " OR ");
			buf_puts(sql, x->sql);
			buf_puts(sql, " = ''");
		}
		buf_puts(sql, "))");
		return FILTER_OK;
	}
	buf_putc(sql, '(');
	if (op == OP_LIKE || op == OP_NLIKE) {
		rc |= fp_emit(f, a, 1);
		buf_printf(sql, " %s%s ", op == OP_NLIKE ? "NOT " : "", f->q->d->like);
		if (b->lit) {
			/* A literal without '%' is "contains": wrapped, its wildcards escaped. */
			char *pat = arena_alloc(f->q->arena, b->len * 2 + 3), *w = pat;
			size_t i;

			if (pat == NULL)
				return fp_fail(f, FILTER_ENOMEM, "out of memory");
			if (memchr(b->s, '%', b->len) != NULL) {
				memcpy(pat, b->s, b->len);
				w += b->len;
			} else {
				*w++ = '%';
				for (i = 0; i < b->len; i++) {
					if (b->s[i] == '%' || b->s[i] == '_' || b->s[i] == '\\')
						*w++ = '\\';
					*w++ = b->s[i];
				}
				*w++ = '%';
			}
			rc |= sqlb_text(f->q, pat, (size_t)(w - pat));
		} else {
			buf_puts(sql, "('%' || ");
			rc |= fp_emit(f, b, 1);
			buf_puts(sql, " || '%')");
		}
		buf_puts(sql, " ESCAPE '\\'");
	} else {
		rc |= fp_emit(f, a, 0);
		if (op == OP_NE) {
			buf_putc(sql, ' ');
			buf_puts(sql, f->q->d->is_not);
			buf_putc(sql, ' ');
		} else
			buf_puts(sql, fop_sql[op]);
		rc |= fp_emit(f, b, 0);
	}
	buf_putc(sql, ')');
	return rc < 0 ? fp_fail(f, FILTER_ELIMIT, "too many values in the filter") : FILTER_OK;
}

/* "SELECT 1 FROM <the elements of x> WHERE " with o set to the element: the elements of
 * a JSON array (jN.value), or a set of related records (x->from, x->sql). */
static void
fp_each(struct fp *f, const struct opnd *x, struct opnd *o)
{
	char alias[16], *sql;

	memset(o, 0, sizeof(*o));
	buf_puts(f->q->sql, "SELECT 1 ");
	if (x->from != NULL) {
		buf_puts(f->q->sql, x->from);
		o->textual = x->textual;
		o->sql = x->sql;
		return;
	}
	(void)snprintf(alias, sizeof(alias), "j%d", ++f->q->alias);
	buf_puts(f->q->sql, "FROM ");
	buf_puts(f->q->sql, f->q->d->each_open);
	buf_puts(f->q->sql, x->sql);
	buf_puts(f->q->sql, f->q->d->each_close);
	buf_puts(f->q->sql, alias);
	buf_puts(f->q->sql, f->q->d->each_alias);
	buf_puts(f->q->sql, " WHERE ");
	o->textual = 1;
	sql = arena_alloc(f->q->arena, 32);
	if (sql != NULL)
		(void)snprintf(sql, 32, "%s.value", alias);
	o->sql = sql != NULL ? sql : "NULL";
}

/* Notes a leaf `field = 'text'` (either way round) in f->eq; any other leaf clears it.
 * Clears f->cv (fp_leaf() sets it when both sides are literals). */
static void
fp_note_eq(struct fp *f, const struct opnd *a, enum fop op, int any, const struct opnd *b)
{
	const struct opnd *t;

	memset(&f->eq, 0, sizeof(f->eq));
	f->cv = -1;
	if (op != OP_EQ || any)
		return;
	if (a->lit) {
		t = a;
		a = b;
		b = t;
	}
	if (a->col == NULL || a->multi || !b->lit || b->num || b->null)
		return;
	f->eq.eq_field = a->col;
	f->eq.eq_val = b->s;
	f->eq.eq_len = b->len;
}

static enum filter_err
fp_leaf(struct fp *f, struct opnd *a, enum fop op, int any, struct opnd *b)
{
	static const enum fop mirror[] = { OP_EQ, OP_NE, OP_LT, OP_LE, OP_GT, OP_GE };
	struct buf *sql = f->q->sql;
	struct opnd el;
	enum filter_err e;

	if (++f->leaves > FILTER_LEAVES_MAX)
		return fp_fail(f, FILTER_ELIMIT, "too many expressions in the filter (200 at most)");
	fp_note_eq(f, a, op, any, b);
	if (a->lit && b->lit) {
		f->cv = fold(a, op, b) != 0;
		return buf_puts(sql, f->cv ? "(1=1)" : "(1=0)") < 0 ?
		    fp_fail(f, FILTER_ENOMEM, "out of memory") : FILTER_OK;
	}
	/* An any-of operator on @collection.X reads the row of the rule's join of X. */
	if (any && a->joined != NULL) {
		f->joins[a->join].used = 1;
		*a = *a->joined;
	}
	if (any && b->joined != NULL) {
		f->joins[b->join].used = 1;
		*b = *b->joined;
	}
	if (b->multi && !a->multi) {
		struct opnd t = *a;

		if (op == OP_LIKE || op == OP_NLIKE)
			return fp_fail(f, FILTER_EFIELD, "a multi-valued field must be on the left of ~");
		*a = *b;
		*b = t;
		op = mirror[op];
	}
	if (a->multi && b->multi)
		return fp_fail(f, FILTER_EFIELD, "two multi-valued fields cannot be compared");
	if (!a->multi)
		return fp_cmp(f, a, op, b);
	if ((op == OP_EQ || op == OP_NE) && opnd_empty(b) && a->from == NULL)
		return fp_cmp(f, a, op, b);
	if (any) {
		buf_puts(sql, "EXISTS (");
		fp_each(f, a, &el);
		if ((e = fp_cmp(f, &el, op, b)) != FILTER_OK)
			return e;
		buf_putc(sql, ')');
		return FILTER_OK;
	}
	/* Every element: none fails; and at least one, unless the operator is negative. */
	buf_putc(sql, '(');
	if (op != OP_NE && op != OP_NLIKE) {
		buf_puts(sql, "EXISTS (");
		fp_each(f, a, &el);
		buf_puts(sql, "1=1) AND ");
	}
	buf_puts(sql, "NOT EXISTS (");
	fp_each(f, a, &el);
	if ((e = fp_cmp(f, &el, op, b)) != FILTER_OK)
		return e;
	buf_puts(sql, " IS NOT TRUE))");
	return FILTER_OK;
}

static enum filter_err fp_or(struct fp *f);

static enum filter_err
fp_primary(struct fp *f)
{
	struct opnd a, b;
	enum filter_err e;
	enum fop op;
	int any;

	if (fp_accept(f, "(")) {
		if (++f->depth > FILTER_DEPTH_MAX)
			return fp_fail(f, FILTER_ELIMIT, "parentheses nested too deep");
		if ((e = fp_or(f)) != FILTER_OK)
			return e;
		if (!fp_accept(f, ")"))
			return fp_fail(f, FILTER_ESYNTAX, "a ')' is missing");
		f->depth--;
		return FILTER_OK;
	}
	if ((e = fp_operand(f, &a)) != FILTER_OK)
		return e;
	if (fp_op(f, &op, &any) < 0)
		return fp_fail(f, FILTER_ESYNTAX, "an operator is expected");
	if ((e = fp_operand(f, &b)) != FILTER_OK)
		return e;
	return fp_leaf(f, &a, op, any, &b);
}

static enum filter_err
fp_and(struct fp *f)
{
	enum filter_err e;

	int v;

	buf_putc(f->q->sql, '(');
	if ((e = fp_primary(f)) != FILTER_OK)
		return e;
	v = f->cv;
	while (fp_accept(f, "&&")) {
		buf_puts(f->q->sql, " AND ");
		if ((e = fp_primary(f)) != FILTER_OK)
			return e;
		v = v == 0 || f->cv == 0 ? 0 : v == 1 && f->cv == 1 ? 1 : -1;
	}
	f->cv = v;
	buf_putc(f->q->sql, ')');
	return FILTER_OK;
}

static enum filter_err
fp_or(struct fp *f)
{
	enum filter_err e;

	int v;

	buf_putc(f->q->sql, '(');
	if ((e = fp_and(f)) != FILTER_OK)
		return e;
	v = f->cv;
	while (fp_accept(f, "||")) {
		buf_puts(f->q->sql, " OR ");
		if ((e = fp_and(f)) != FILTER_OK)
			return e;
		v = v == 1 || f->cv == 1 ? 1 : v == 0 && f->cv == 0 ? 0 : -1;
	}
	f->cv = v;
	buf_putc(f->q->sql, ')');
	return FILTER_OK;
}

/*
 * The joins of the rule's @collection references read with any-of operators: the rule
 * written from start becomes "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0 LEFT JOIN X AS c1
 * ON 1=1 ... WHERE rule))", true when one combination of their records (or none, when a
 * collection is empty: the LEFT JOIN's row of nulls) passes, as PocketBase's joins do.
 */
static enum filter_err
fp_joins(struct fp *f, size_t start)
{
	struct buf *sql = f->q->sql;
	char *rule;
	int i, n = 0;

	for (i = 0; i < f->njoins; i++)
		n += f->joins[i].used;
	if (n == 0)
		return FILTER_OK;
	if ((rule = arena_strndup(f->q->arena, sql->data + start, sql->len - start)) == NULL)
		return fp_fail(f, FILTER_ENOMEM, "out of memory");
	sql->len = start;
	sql->data[start] = '\0';
	buf_puts(sql, "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0");
	for (i = 0; i < f->njoins; i++) {
		if (!f->joins[i].used)
			continue;
		buf_puts(sql, " LEFT JOIN ");
		coll_quote(sql, f->joins[i].c->name);
		buf_printf(sql, " AS %s ON 1=1", f->joins[i].alias);
	}
	buf_puts(sql, " WHERE ");
	buf_puts(sql, rule);
	buf_puts(sql, "))");
	return FILTER_OK;
}

enum filter_err
filter_compile(struct sqlb *q, const struct coll *c, const char *alias, const char *s,
    size_t len, const struct filter_ctx *ctx, char *err, size_t errlen)
{
	struct fp f;
	enum filter_err e;
	size_t start;

	memset(&f, 0, sizeof(f));
	f.q = q;
	f.c = c;
	f.alias = alias;
	f.ctx = ctx;
	f.p = s;
	f.end = s + len;
	f.err = err;
	f.errlen = errlen;
	if (len > FILTER_LEN_MAX)
		return fp_fail(&f, FILTER_ELIMIT, "the filter is too long (3500 characters at most)");
	if (memchr(s, '\0', len) != NULL)
		return fp_fail(&f, FILTER_ESYNTAX, "a NUL byte in the filter");
	start = q->sql->len;
	if ((e = fp_or(&f)) != FILTER_OK)
		return e;
	fp_skip(&f);
	if (f.p != f.end)
		return fp_fail(&f, FILTER_ESYNTAX, "unexpected text after the expression");
	if (!buf_failed(q->sql) && (e = fp_joins(&f, start)) != FILTER_OK)
		return e;
	if (buf_failed(q->sql))
		return fp_fail(&f, FILTER_ENOMEM, "the filter is too large");
	if (ctx != NULL && ctx->shape != NULL) {
		*ctx->shape = f.leaves == 1 ? f.eq : (struct filter_shape){ NULL, NULL, 0, 0 };
		ctx->shape->value = f.cv;
	}
	return FILTER_OK;
}

int
filter_status(enum filter_err e)
{
	return e == FILTER_EFORBIDDEN ? 403 : e == FILTER_ENOMEM ? 500 : 400;
}
