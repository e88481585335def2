/*
 * write.c: the records API's writes (create, update, delete) and sign-in
 * (auth-with-password): the body's validation by field type, the API rules checked in
 * SQL, bcrypt and the token.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "json.h"
#include "records/lane.h"
#include "log.h"
#include "idem.h"
#include "records.h"
#include "records/token.h"
#include "str.h"

#define REC_PASS_MIN	8
#define REC_PASS_MAX	71	/* bcrypt reads 72 bytes */
#define REC_TOKENKEY_LEN	50

/* Set by main() from SLUICE_BCRYPT_COST before the serving threads start. */
int rec_bcrypt_cost = 10;

/* How an update writes a column: its value, or a change of the stored value made by the
 * UPDATE itself (no read before it, so concurrent modifiers all count). */
enum rec_mod {
	REC_MOD_NONE,	/* s */
	REC_MOD_MERGE,	/* a multiple field: pre ++ (stored - rm) ++ app; s is pre ++ app */
	REC_MOD_ADD,	/* a number: stored + delta */
};

/* One column to write. */
struct rec_set {
	const struct coll_field *f;
	int null;
	const char *s;
	size_t len;
	enum rec_mod mod;
	const char *pre, *app, *rm;	/* REC_MOD_MERGE: JSON arrays of strings */
	double delta;			/* REC_MOD_ADD */
};

struct rec_sets {
	struct rec_set v[COLL_FIELDS_MAX];
	int n;
	struct buf errs;	/* the validation errors, "name":{...},... */
	const char *id;		/* create: the record's id */
};

static void
rec_invalid(struct rec_sets *s, const char *name, const char *code, const char *msg)
{
	if (s->errs.len > 0)
		buf_putc(&s->errs, ',');
	json_escape(&s->errs, name, strlen(name));
	buf_printf(&s->errs, ":{\"code\":\"%s\",\"message\":", code);
	json_escape(&s->errs, msg, strlen(msg));
	buf_putc(&s->errs, '}');
}

static int
rec_add(struct rec_sets *s, struct arena *a, const struct coll_field *f, const char *v,
    size_t len)
{
	struct rec_set *d = &s->v[s->n++];

	memset(d, 0, sizeof(*d));
	d->f = f;
	d->null = v == NULL;
	d->s = v ? arena_strndup(a, v, len) : NULL;
	d->len = len;
	return v != NULL && d->s == NULL ? -1 : 0;
}

/* The current time as PocketBase's date text. */
static void
rec_now(char out[25])
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	filter_date(out, ts.tv_sec, (int)(ts.tv_nsec / 1000000));
}

/* 1 when s is one of f's select values. */
static int
rec_select_ok(const struct coll_field *f, const char *s)
{
	size_t i;

	for (i = 0; i < f->nvalues; i++)
		if (strcmp(f->values[i], s) == 0)
			return 1;
	return 0;
}

/* Checks one string element of a select or relation; 0 or -1 (error recorded). */
static int
rec_elem_ok(struct rec_sets *s, const struct coll_field *f, const char *v)
{
	size_t i, n = strlen(v);

	if (f->type == COLL_SELECT && !rec_select_ok(f, v)) {
		rec_invalid(s, f->name, "validation_invalid_value", "Invalid value.");
		return -1;
	}
	if (f->type == COLL_RELATION) {
		for (i = 0; i < n; i++)
			if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9')))
				break;
		if (n == 0 || n > 64 || i < n) {
			rec_invalid(s, f->name, "validation_invalid_value", "Invalid record id.");
			return -1;
		}
	}
	return 0;
}

/*
 * A form's string for a number, bool or json field, as JSON: *out (caller deletes) and 1;
 * 0 when the string stays a string (other types, or text that is not a number, a bool or
 * JSON: the type check then refuses it); -1 out of memory.
 */
static int
rec_form_value(const struct coll_field *f, const cJSON *v, cJSON **out)
{
	const char *t = v->valuestring;
	enum json_err je;
	char *end;
	double d;

	*out = NULL;
	if (f->type == COLL_NUMBER && !f->multiple) {
		d = t[0] != '\0' ? strtod(t, &end) : 0;
		if (t[0] != '\0' && *end != '\0')
			return 0;
		*out = cJSON_CreateNumber(d);
	} else if (f->type == COLL_BOOL) {
		if (strcmp(t, "true") == 0 || strcmp(t, "1") == 0 || strcmp(t, "on") == 0)
			*out = cJSON_CreateTrue();
		else if (strcmp(t, "false") == 0 || strcmp(t, "0") == 0 || t[0] == '\0')
			*out = cJSON_CreateFalse();
		else
			return 0;
	} else if (f->type == COLL_JSON) {
		if ((*out = json_parse(t, strlen(t), 32, &je, NULL)) == NULL)
			*out = cJSON_CreateString(t);
	} else
		return 0;
	return *out == NULL ? -1 : 1;
}

/* Validates the value v of a multiple field f (a select's or a relation's string, or an
 * array of them) into s, as a JSON array text.  0, or -1 out of memory. */
static int
rec_value_many(struct rec_sets *s, struct arena *a, const struct coll_field *f,
    const cJSON *v)
{
	struct buf b;
	const cJSON *it;
	int n = 0, bad = 0, rc;

	buf_init(&b, 1 << 20);
	buf_putc(&b, '[');
	if (cJSON_IsString(v) && v->valuestring[0] != '\0') {
		bad = rec_elem_ok(s, f, v->valuestring);
		json_escape(&b, v->valuestring, strlen(v->valuestring));
		n = 1;
	} else if (cJSON_IsArray(v)) {
		cJSON_ArrayForEach(it, v) {
			if (!cJSON_IsString(it) || rec_elem_ok(s, f, it->valuestring) < 0) {
				if (!cJSON_IsString(it))
					rec_invalid(s, f->name, "validation_invalid_value",
					    "Invalid value.");
				bad = -1;
				break;
			}
			if (n++ > 0)
				buf_putc(&b, ',');
			json_escape(&b, it->valuestring, strlen(it->valuestring));
		}
	} else if (!cJSON_IsNull(v) && !cJSON_IsString(v)) {
		rec_invalid(s, f->name, "validation_invalid_value", "Invalid value.");
		bad = -1;
	}
	buf_putc(&b, ']');
	if (bad == 0 && n == 0 && f->required)
		rec_invalid(s, f->name, "validation_required", "Missing required value.");
	rc = bad < 0 ? 0 : rec_add(s, a, f, b.data, b.len);
	buf_free(&b);
	return rc;
}

/* Validates the value v of a single text-like field f (text, email, a select's or a
 * relation's one id, and the rest stored as text) into s.  0, or -1 out of memory. */
static int
rec_value_text(struct rec_sets *s, struct arena *a, const struct coll_field *f,
    const cJSON *v)
{
	const char *t;
	size_t n;

	if (!cJSON_IsString(v) && !cJSON_IsNull(v)) {
		rec_invalid(s, f->name, "validation_invalid_value", "Must be a string.");
		return 0;
	}
	t = cJSON_IsString(v) ? v->valuestring : "";
	n = strlen(t);
	if (n == 0 && f->required) {
		rec_invalid(s, f->name, "validation_required", "Missing required value.");
		return 0;
	}
	if (n > 0 && f->type == COLL_EMAIL && (strchr(t, '@') == NULL ||
	    strpbrk(t, " \t\r\n<>") != NULL || n > 255)) {
		rec_invalid(s, f->name, "validation_is_email", "Must be a valid email address.");
		return 0;
	}
	if (n > 0 && (f->type == COLL_SELECT || f->type == COLL_RELATION) &&
	    rec_elem_ok(s, f, t) < 0)
		return 0;
	return rec_add(s, a, f, t, n);
}

/* Validates the value v of field f into s.  0, or -1 out of memory. */
static int
rec_value(struct rec_ctx *x, struct rec_sets *s, const struct coll_field *f, const cJSON *v,
    int create)
{
	struct arena *a = x->rq->arena;
	char num[40];
	cJSON *conv = NULL;
	int rc;

	/* A form's values are strings: read them as the field's type. */
	if (x->form && cJSON_IsString(v) && (rc = rec_form_value(f, v, &conv)) != 0) {
		if (rc < 0)
			return -1;
		rc = rec_value(x, s, f, conv, create);
		cJSON_Delete(conv);
		return rc;
	}
	if (f->type == COLL_JSON) {
		char *t;

		if (cJSON_IsNull(v))
			return rec_add(s, a, f, NULL, 0);
		if ((t = cJSON_PrintUnformatted(v)) == NULL)
			return -1;
		rc = rec_add(s, a, f, t, strlen(t));
		cJSON_free(t);
		return rc;
	}
	if (f->multiple)
		return rec_value_many(s, a, f, v);
	switch (f->type) {
	case COLL_NUMBER:
		if (cJSON_IsNull(v))
			return rec_add(s, a, f, "0", 1);
		if (!cJSON_IsNumber(v)) {
			rec_invalid(s, f->name, "validation_invalid_number", "Must be a number.");
			return 0;
		}
		(void)snprintf(num, sizeof(num), "%.17g", v->valuedouble);
		return rec_add(s, a, f, num, strlen(num));
	case COLL_BOOL:
		if (!cJSON_IsBool(v) && !cJSON_IsNull(v)) {
			rec_invalid(s, f->name, "validation_invalid_bool", "Must be a bool.");
			return 0;
		}
		return rec_add(s, a, f, cJSON_IsTrue(v) ? "1" : "0", 1);
	default:
		return rec_value_text(s, a, f, v);
	}
}

/*
 * The ids a relation value d refers to, as a JSON array of strings in the arena (*ids), and
 * how many there are (*want).  1 when d refers to some, 0 when to none (null, empty), -1
 * answered (500).
 */
static int
rec_relation_ids(struct rec_ctx *x, const struct rec_set *d, char **ids, int *want)
{
	cJSON *arr = NULL;
	enum json_err je;
	struct buf b;

	if (d->f->type != COLL_RELATION || d->null || d->len == 0 || str_eq(d->s, d->len, "[]"))
		return 0;
	buf_init(&b, 1 << 20);
	if (d->f->multiple)
		buf_append(&b, d->s, d->len);
	else {
		buf_putc(&b, '[');
		json_escape(&b, d->s, d->len);
		buf_putc(&b, ']');
	}
	*ids = arena_strndup(x->rq->arena, b.data, b.len);
	buf_free(&b);
	if (*ids == NULL || (arr = json_parse(*ids, strlen(*ids), 4, &je, NULL)) == NULL)
		return rec_error(x->rs, 500, NULL, NULL), -1;
	*want = cJSON_GetArraySize(arr);
	cJSON_Delete(arr);
	return 1;
}

/* Appends to q the query of the number of distinct records of d's collection among ids,
 * without its SELECT: "count(DISTINCT rel.id) FROM ... AS rel WHERE ...".  A single
 * relation compares its one id, which both databases answer with one probe of the primary
 * key; a set of ids from a JSON array may be planned as a scan of the whole collection
 * (PostgreSQL's generic plan of IN (SELECT jsonb_array_elements_text(...)) is a hash semi
 * join over a sequential scan).  0, or -1 (too many values). */
static int
rec_relation_count(struct sqlb *q, const struct rec_set *d, const char *ids)
{
	buf_puts(q->sql, "count(DISTINCT rel.\"id\") FROM ");
	coll_quote(q->sql, d->f->tcoll->name);
	if (!d->f->multiple) {
		buf_puts(q->sql, " AS rel WHERE rel.\"id\" = ");
		return sqlb_text(q, d->s, d->len);
	}
	buf_puts(q->sql, " AS rel WHERE rel.\"id\" IN ");
	return sqlb_in_json(q, ids, strlen(ids));
}

/* Checks that every related id exists: one query per relation field written. */
static int
rec_relations_exist(struct rec_ctx *x, struct rec_sets *s)
{
	int i, r, want;

	for (i = 0; i < s->n; i++) {
		const struct rec_set *d = &s->v[i];
		struct sqlb *q = &x->t->q;
		struct db_stmt *st;
		char *ids;

		if ((r = rec_relation_ids(x, d, &ids, &want)) <= 0) {
			if (r < 0)
				return -1;
			continue;
		}
		sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
		buf_puts(q->sql, "SELECT ");
		rec_relation_count(q, d, ids);
		if ((st = db_prepare(x->rq->db, q->sql->data)) == NULL ||
		    sqlb_bind(q, st) < 0 || db_step(st) != DB_ROW)
			return rec_db_error(x), -1;
		if (db_column_int(st, 0) != want)
			rec_invalid(s, d->f->name, "validation_missing_rel_records",
			    "Failed to find all relation records with the provided ids.");
		db_reset(st);
	}
	return 0;
}

/* Adds the strings of v (a string or an array of them) to a, or removes them from a
 * (del).  Returns 0, or -1 when v is neither. */
static int
rec_modify(cJSON *a, const cJSON *v, int prepend, int del)
{
	const cJSON *it, *one = v;
	int i, n = cJSON_IsArray(v) ? cJSON_GetArraySize(v) : 1;

	if (!cJSON_IsString(v) && !cJSON_IsArray(v))
		return -1;
	for (i = 0; i < n; i++) {
		cJSON *e, *next;

		it = cJSON_IsArray(v) ? cJSON_GetArrayItem(v, prepend ? n - 1 - i : i) : one;
		if (!cJSON_IsString(it))
			return -1;
		/* Each value once: an existing one is removed before it is added again. */
		for (e = a->child; e != NULL; e = next) {
			next = e->next;
			if (cJSON_IsString(e) && strcmp(e->valuestring, it->valuestring) == 0)
				cJSON_Delete(cJSON_DetachItemViaPointer(a, e));
		}
		if (del)
			continue;
		e = cJSON_CreateString(it->valuestring);
		if (e == NULL)
			return -1;
		if (prepend && a->child != NULL)
			cJSON_InsertItemInArray(a, 0, e);
		else
			cJSON_AddItemToArray(a, e);
	}
	return 0;
}

/* a as JSON text in the arena, or NULL. */
static char *
rec_json_text(struct rec_ctx *x, const cJSON *a)
{
	char *t = cJSON_PrintUnformatted(a), *out;

	out = t != NULL ? arena_strndup(x->rq->arena, t, strlen(t)) : NULL;
	cJSON_free(t);
	return out;
}

/*
 * An update's modifiers of multiple field f without f itself in the body: the UPDATE
 * merges them into the stored value (rec_update(), coll_merge()), in the statement that
 * writes it.  The result is what applying them in C would give: P ++ (stored - P - A - D)
 * ++ A, with P the prepended values (once each, first first) minus A and D, A the
 * appended ones (once each) minus D.  The added values are checked here (select values,
 * relation ids, which rec_relations_exist() then looks up).  1 (the set, or its error, in
 * s), or -1 answered.
 */
static int
rec_modifiers_merge(struct rec_ctx *x, struct rec_sets *s, const struct coll_field *f,
    const cJSON *pre, const cJSON *app, const cJSON *del)
{
	cJSON *p = cJSON_CreateArray(), *a = cJSON_CreateArray(), *r = cJSON_CreateArray();
	cJSON *both = NULL;
	const cJSON *it;
	struct rec_set *d;
	char *added;
	int rc = -1, bad = 0;

	if (p == NULL || a == NULL || r == NULL) {
		rec_error(x->rs, 500, NULL, NULL);
		goto out;
	}
	if ((pre != NULL && rec_modify(p, pre, 1, 0) < 0) ||
	    (app != NULL && rec_modify(a, app, 0, 0) < 0) ||
	    (del != NULL && rec_modify(r, del, 0, 0) < 0)) {
		rec_invalid(s, f->name, "validation_invalid_value", "Invalid value.");
		rc = 1;
		goto out;
	}
	/* r becomes every value the stored array loses: D, P and A. */
	if (rec_modify(p, a, 0, 1) < 0 || rec_modify(p, r, 0, 1) < 0 ||
	    rec_modify(a, r, 0, 1) < 0 || rec_modify(r, p, 0, 0) < 0 ||
	    rec_modify(r, a, 0, 0) < 0 || (both = cJSON_Duplicate(p, 1)) == NULL) {
		rec_error(x->rs, 500, NULL, NULL);
		goto out;
	}
	cJSON_ArrayForEach(it, a) {
		cJSON_AddItemToArray(both, cJSON_CreateString(it->valuestring));
	}
	cJSON_ArrayForEach(it, both) {
		if (!bad && rec_elem_ok(s, f, it->valuestring) < 0)
			bad = 1;
	}
	rc = 1;
	if (bad)
		goto out;
	if ((added = rec_json_text(x, both)) == NULL ||
	    rec_add(s, x->rq->arena, f, added, strlen(added)) < 0) {
		rec_error(x->rs, 500, NULL, NULL);
		rc = -1;
		goto out;
	}
	d = &s->v[s->n - 1];
	d->mod = REC_MOD_MERGE;
	if ((d->pre = rec_json_text(x, p)) == NULL || (d->app = rec_json_text(x, a)) == NULL ||
	    (d->rm = rec_json_text(x, r)) == NULL) {
		rec_error(x->rs, 500, NULL, NULL);
		rc = -1;
	}
out:
	cJSON_Delete(p);
	cJSON_Delete(a);
	cJSON_Delete(r);
	cJSON_Delete(both);
	return rc;
}

/*
 * The modifiers of a number field f: "f+" adds, "f-" subtracts, to the body's "f" if it
 * has one, else to 0 (a create) or to the stored value, inside the UPDATE (an update:
 * concurrent increments all count).  Returns 0 when the body has none, 1 when the field
 * is set in s (or its error recorded), -1 answered.
 */
static int
rec_number_mods(struct rec_ctx *x, struct rec_sets *s, const struct coll_field *f,
    const cJSON *v, int create)
{
	char key[COLL_NAME_MAX + 2], num[40];
	const cJSON *m[2];
	double delta = 0, base = 0, d;
	char *end;
	int i;

	for (i = 0; i < 2; i++) {
		(void)snprintf(key, sizeof(key), "%s%c", f->name, i ? '-' : '+');
		m[i] = cJSON_GetObjectItemCaseSensitive(x->body, key);
	}
	if (m[0] == NULL && m[1] == NULL)
		return 0;
	for (i = 0; i < 2; i++) {
		if (m[i] == NULL)
			continue;
		if (cJSON_IsNumber(m[i]))
			d = m[i]->valuedouble;
		else if (x->form && cJSON_IsString(m[i]) && m[i]->valuestring[0] != '\0' &&
		    (d = strtod(m[i]->valuestring, &end), *end == '\0'))
			;
		else {
			rec_invalid(s, f->name, "validation_invalid_number", "Must be a number.");
			return 1;
		}
		delta += i ? -d : d;
	}
	if (v != NULL && !cJSON_IsNull(v)) {
		if (cJSON_IsNumber(v))
			base = v->valuedouble;
		else if (x->form && cJSON_IsString(v) && v->valuestring[0] != '\0' &&
		    (base = strtod(v->valuestring, &end), *end == '\0'))
			;
		else {
			rec_invalid(s, f->name, "validation_invalid_number", "Must be a number.");
			return 1;
		}
	}
	if (!isfinite(base + delta)) {
		rec_invalid(s, f->name, "validation_invalid_number", "Must be a number.");
		return 1;
	}
	(void)snprintf(num, sizeof(num), "%.17g", v != NULL || create ? base + delta : delta);
	if (rec_add(s, x->rq->arena, f, num, strlen(num)) < 0)
		return rec_error(x->rs, 500, NULL, NULL), -1;
	if (v == NULL && !create) {
		s->v[s->n - 1].mod = REC_MOD_ADD;
		s->v[s->n - 1].delta = delta;
	}
	return 1;
}

/*
 * The modifiers of a multiple field f: "f+" appends, "+f" prepends, "f-" removes, applied
 * to the body's "f" if it has one, else to [] (a create) or, by the UPDATE itself, to the
 * stored value (rec_modifiers_merge()).  Returns 0 when the body has none, 1 when the
 * field's value is set in s, -1 answered.
 */
static int
rec_modifiers(struct rec_ctx *x, struct rec_sets *s, const struct coll_field *f,
    const cJSON *v, int create)
{
	char key[COLL_NAME_MAX + 2];
	const cJSON *app, *pre, *del;
	cJSON *a = NULL;
	int rc = -1;

	(void)snprintf(key, sizeof(key), "%s+", f->name);
	app = cJSON_GetObjectItemCaseSensitive(x->body, key);
	(void)snprintf(key, sizeof(key), "+%s", f->name);
	pre = cJSON_GetObjectItemCaseSensitive(x->body, key);
	(void)snprintf(key, sizeof(key), "%s-", f->name);
	del = cJSON_GetObjectItemCaseSensitive(x->body, key);
	if (app == NULL && pre == NULL && del == NULL)
		return 0;
	if (v == NULL && !create)
		return rec_modifiers_merge(x, s, f, pre, app, del);
	if (v != NULL)
		a = cJSON_IsArray(v) ? cJSON_Duplicate(v, 1) : cJSON_CreateArray();
	else
		a = cJSON_CreateArray();
	if (a == NULL)
		return rec_error(x->rs, 500, NULL, NULL), -1;
	if (v != NULL && cJSON_IsString(v) && v->valuestring[0] != '\0')
		cJSON_AddItemToArray(a, cJSON_CreateString(v->valuestring));
	if ((pre != NULL && rec_modify(a, pre, 1, 0) < 0) ||
	    (app != NULL && rec_modify(a, app, 0, 0) < 0) ||
	    (del != NULL && rec_modify(a, del, 0, 1) < 0)) {
		rec_invalid(s, f->name, "validation_invalid_value", "Invalid value.");
		rc = 1;
	} else
		rc = rec_value(x, s, f, a, create) < 0 ? (rec_error(x->rs, 500, NULL, NULL), -1) : 1;
	cJSON_Delete(a);
	return rc;
}

/* A password and a hash to compare on the slow lane (rec_pass_check()). */
struct rec_pass {
	char pw[128];
	size_t len;
	char hash[PASS_HASH_MAX];
	int real;		/* hash is set (else: an unknown identity, the dummy hash) */
	int cost;
	int ok;
};

static void
rec_pass_step(void *arg)
{
	struct rec_pass *p = arg;

	p->ok = pass_check(p->pw, p->len, p->real ? p->hash : NULL, p->cost);
}

/* rec_pass_check() (records.h) runs pass_check() on the slow lane (apps/records/lane.h),
 * so that a burst of sign-ins does not take the CPU from the other requests. */
int
rec_pass_check(struct rec_ctx *x, const char *pw, const char *hash)
{
	struct rec_pass p;
	size_t len = strlen(pw);
	int ok;

	memset(&p, 0, sizeof(p));
	p.len = len < sizeof(p.pw) ? len : sizeof(p.pw) - 1;
	memcpy(p.pw, pw, p.len);
	if (hash != NULL && strlen(hash) < sizeof(p.hash)) {
		memcpy(p.hash, hash, strlen(hash) + 1);
		p.real = 1;
	}
	p.cost = rec_bcrypt_cost;
	if (lane_run(rec_pass_step, &p, sizeof(p), db_deadline(x->rq->db)) != LANE_OK) {
		explicit_bzero(&p, sizeof(p));
		log_warn("records: a password comparison did not finish within its budget");
		rec_error(x->rs, 503, "The server is too busy to check the password now; try "
		    "again.", NULL);
		return -1;
	}
	ok = p.ok;
	explicit_bzero(&p, sizeof(p));
	return ok;
}

/* A password change by the record itself needs the old one: 0 when oldPassword matches,
 * 1 when it does not (the error is in s), -1 answered. */
static int
rec_old_password(struct rec_ctx *x, struct rec_sets *s)
{
	const cJSON *old = cJSON_GetObjectItemCaseSensitive(x->body, "oldPassword");
	struct rec_row *row;
	size_t hi = coll_field_index(x->c, coll_field(x->c, "password", 8));
	int r, ok;

	if (old == NULL || !cJSON_IsString(old) || old->valuestring[0] == '\0') {
		rec_invalid(s, "oldPassword", "validation_required", "Missing required value.");
		return 1;
	}
	if ((r = rec_get(x, x->c, x->id, strlen(x->id), "id", &row)) < 0 ||
	    (ok = rec_pass_check(x, old->valuestring, r ? row->v[hi] : NULL)) < 0)
		return -1;
	if (!ok || r == 0) {
		rec_invalid(s, "oldPassword", "validation_invalid_old_password",
		    "Missing or invalid old password.");
		return 1;
	}
	return 0;
}

/* A create's record id into s: the body's "id", checked, or a new random one.  0, or -1
 * answered (500). */
static int
rec_values_id(struct rec_ctx *x, struct rec_sets *s)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(x->body, "id");
	size_t i;

	if (v != NULL && cJSON_IsString(v) && v->valuestring[0] != '\0') {
		size_t n = strlen(v->valuestring);

		for (i = 0; i < n; i++)
			if (!((v->valuestring[i] >= 'a' && v->valuestring[i] <= 'z') ||
			    (v->valuestring[i] >= '0' && v->valuestring[i] <= '9')))
				break;
		if (n != COLL_ID_LEN || i < n)
			rec_invalid(s, "id", "validation_invalid_id",
			    "Must be 15 characters of a-z and 0-9.");
		s->id = v->valuestring;
	} else {
		char *id = arena_alloc(x->rq->arena, COLL_ID_LEN + 1);

		if (id == NULL || token_random_text(id, COLL_ID_LEN) < 0)
			return rec_error(x->rs, 500, NULL, NULL), -1;
		id[COLL_ID_LEN] = '\0';
		s->id = id;
	}
	return 0;
}

/* An auth collection's "password" and "passwordConfirm" into s: checked (and, on an
 * update by its owner, "oldPassword" too), then hashed with a new token key when the body
 * has no other error.  0 (s->errs may hold validation errors), -1 answered. */
static int
rec_values_password(struct rec_ctx *x, struct rec_sets *s, int create)
{
	const struct coll *c = x->c;
	const cJSON *pw, *pw2;
	int r;

	pw = cJSON_GetObjectItemCaseSensitive(x->body, "password");
	pw2 = cJSON_GetObjectItemCaseSensitive(x->body, "passwordConfirm");
	if (pw == NULL && !create)
		return 0;
	if (pw == NULL || !cJSON_IsString(pw) || strlen(pw->valuestring) < REC_PASS_MIN ||
	    strlen(pw->valuestring) > REC_PASS_MAX)
		rec_invalid(s, "password", pw == NULL ? "validation_required" :
		    "validation_length_out_of_range", pw == NULL ? "Missing required value." :
		    "The length must be between 8 and 71.");
	else if (pw2 == NULL || !cJSON_IsString(pw2) ||
	    strcmp(pw->valuestring, pw2->valuestring) != 0)
		rec_invalid(s, "passwordConfirm", "validation_values_mismatch",
		    "Values don't match.");
	else if (!create && !x->superuser && (r = rec_old_password(x, s)) != 0) {
		if (r < 0)
			return -1;
	} else if (s->errs.len == 0) {
		char hash[PASS_HASH_MAX], key[REC_TOKENKEY_LEN];

		if (pass_hash(pw->valuestring, strlen(pw->valuestring), rec_bcrypt_cost, hash) < 0 ||
		    token_random_text(key, sizeof(key)) < 0)
			return rec_error(x->rs, 500, NULL, NULL), -1;
		rec_add(s, x->rq->arena, coll_field(c, "password", 8), hash, strlen(hash));
		rec_add(s, x->rq->arena, coll_field(c, "tokenKey", 8), key, sizeof(key));
	}
	return 0;
}

/* Reads the body into s: 0 (s->errs may hold validation errors), -1 answered. */
static int
rec_values(struct rec_ctx *x, struct rec_sets *s, int create)
{
	const struct coll *c = x->c;
	const cJSON *v;
	char now[25];
	size_t i;
	int r;

	memset(s, 0, sizeof(*s));
	buf_init(&s->errs, 1 << 16);
	rec_now(now);
	for (i = 1; i < c->nfields; i++) {
		const struct coll_field *f = &c->fields[i];

		if (f->type == COLL_AUTODATE) {
			if (create || f->onupdate)
				rec_add(s, x->rq->arena, f, now, 24);
			continue;
		}
		if (f->type == COLL_PASSWORD || f->hidden ||
		    (strcmp(f->name, "verified") == 0 && c->auth && !x->superuser))
			continue;
		v = cJSON_GetObjectItemCaseSensitive(x->body, f->name);
		if (f->type == COLL_NUMBER && (r = rec_number_mods(x, s, f, v, create)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}
		if (f->multiple && (r = rec_modifiers(x, s, f, v, create)) != 0) {
			if (r < 0)
				return -1;
			continue;
		}
		if (v == NULL) {
			if (create && (f->required || (c->auth && strcmp(f->name, "email") == 0)))
				rec_invalid(s, f->name, "validation_required", "Missing required value.");
			continue;
		}
		if (rec_value(x, s, f, v, create) < 0)
			return rec_error(x->rs, 500, NULL, NULL), -1;
	}
	if (create && rec_values_id(x, s) < 0)
		return -1;
	if (!c->auth)
		return 0;
	return rec_values_password(x, s, create);
}

/* Answers the validation errors collected in s (400).  Returns 1 when it did. */
static int
rec_invalid_answer(struct rec_ctx *x, struct rec_sets *s, const char *msg)
{
	struct buf d;

	if (s->errs.len == 0)
		return 0;
	buf_init(&d, 1 << 17);
	buf_putc(&d, '{');
	buf_append(&d, s->errs.data, s->errs.len);
	buf_putc(&d, '}');
	rec_error(x->rs, 400, msg, buf_failed(&d) ? NULL : d.data);
	buf_free(&d);
	return 1;
}

/* Binds the values of s in order. */
static int
rec_bind_sets(struct sqlb *q, const struct rec_sets *s, int i)
{
	const struct rec_set *d = &s->v[i];

	return d->null ? sqlb_null(q) : sqlb_text(q, d->s, d->len);
}

/* Runs the statement in x->t->q; returns the rows changed, or -1 answered. */
static int64_t
rec_exec(struct rec_ctx *x)
{
	struct db_stmt *st;
	int rc;

	if ((st = db_prepare(x->rq->db, x->t->q.sql->data)) == NULL ||
	    sqlb_bind(&x->t->q, st) < 0)
		return rec_db_error(x), -1;
	while ((rc = db_step(st)) == DB_ROW)
		;
	if (rc == DB_ERROR) {
		const char *state = db_sqlstate(x->rq->db);

		if (strcmp(state, "23505") == 0) {
			log_warn("records: %s", db_errmsg(x->rq->db));
			rec_error(x->rs, 400, "Failed to save the record: a value must be unique.",
			    NULL);
			return -1;
		}
		return rec_db_error(x), -1;
	}
	return db_changes(st);
}

int
rec_exec_write(struct rec_ctx *x, void *arg)
{
	int64_t n = rec_exec(x);

	(void)arg;
	return n < 0 ? -1 : n > 0;
}

/* Appends " RETURNING alias.\"id\", ..." of every field of c, in order (rec_fetch());
 * alias NULL: the names unqualified, which both back ends take (SQLite refuses a qualified
 * name there). */
static void
rec_returning(struct sqlb *q, const struct coll *c, const char *alias)
{
	size_t i;

	buf_puts(q->sql, " RETURNING ");
	for (i = 0; i < c->nfields; i++) {
		if (i > 0)
			buf_puts(q->sql, ", ");
		if (alias != NULL)
			sqlb_col(q->sql, alias, c->fields[i].name);
		else
			coll_quote(q->sql, c->fields[i].name);
	}
}

/* Runs the statement in x->t->q, a write that returns its record of x->c (rec_returning()),
 * into *rows.  0, or -1 answered (a duplicate unique value: 400, as rec_exec()). */
static int
rec_exec_rows(struct rec_ctx *x, struct rec_rows *rows)
{
	if (rec_fetch(x, x->c, rows) == 0)
		return 0;
	if (db_errcode(x->rq->db) == DB_ECONSTRAINT &&
	    strcmp(db_sqlstate(x->rq->db), "23505") == 0)
		rec_error(x->rs, 400, "Failed to save the record: a value must be unique.", NULL);
	return -1;
}

/* rec_exec_rows() as a write of rec_commit(), arg the struct rec_rows: the rows changed (0
 * or 1), or -1 answered. */
static int
rec_exec_rows_write(struct rec_ctx *x, void *arg)
{
	struct rec_rows *rows = arg;

	return rec_exec_rows(x, rows) < 0 ? -1 : rows->n > 0;
}

/* A create: its values, and what it stored. */
struct rec_insert {
	struct rec_sets *s;
	int txn;		/* the rule reads the collection itself: rec_insert_txn() */
	int fetched;		/* rows holds the record as stored (its INSERT returned it) */
	int refused;		/* rec_insert_one() stored nothing: a missing relation or the
				 * rule (rec_create() tells which) */
	struct rec_rows rows;
	struct idem *k;		/* the request's Idempotency-Key, or NULL */
};

/*
 * The INSERT of a new record (the values in->s), which returns the record as stored into
 * in->rows (no read after the write), and under a create rule the rule's check of the
 * record, in the same transaction: a write of rec_commit(), which may run it more than
 * once, so it builds its statements each time.  0, or -1 answered.
 */
static int
rec_insert_txn(struct rec_ctx *x, struct rec_insert *in)
{
	const struct rec_sets *s = in->s;
	struct sqlb *q = &x->t->q;
	const char *rule = x->c->rules[COLL_RULE_CREATE];
	int i, r;
	struct db_stmt *st;

	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "INSERT INTO ");
	coll_quote(q->sql, x->c->name);
	buf_puts(q->sql, " (\"id\"");
	for (i = 0; i < s->n; i++) {
		buf_puts(q->sql, ", ");
		coll_quote(q->sql, s->v[i].f->name);
	}
	buf_puts(q->sql, ") VALUES (");
	sqlb_text(q, s->id, strlen(s->id));
	for (i = 0; i < s->n; i++) {
		buf_puts(q->sql, ", ");
		rec_bind_sets(q, s, i);
	}
	buf_putc(q->sql, ')');
	rec_returning(q, x->c, NULL);
	if (rec_exec_rows(x, &in->rows) < 0)
		return -1;
	in->fetched = in->rows.n > 0;
	if (x->superuser || rule == NULL || *rule == '\0')
		return 0;
	/* The rule sees the new record as it was stored, in the same transaction. */
	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "SELECT 1 FROM ");
	coll_quote(q->sql, x->c->name);
	buf_puts(q->sql, " AS t WHERE t.\"id\" = ");
	sqlb_text(q, s->id, strlen(s->id));
	if (rec_rule(x, x->c, COLL_RULE_CREATE, "t") < 0)
		return -1;
	if ((st = db_prepare(x->rq->db, q->sql->data)) == NULL || sqlb_bind(q, st) < 0)
		return rec_db_error(x), -1;
	r = db_step(st);
	db_reset(st);
	if (r == DB_ERROR)
		return rec_db_error(x), -1;
	if (r != DB_ROW)
		return rec_error(x->rs, 400, "Failed to create record.", NULL), -1;
	return 0;
}

/* 1 when the text from off on in q's statement names collection c's table: a rule that
 * reads the collection itself (@collection.C, a relation to C, a back-relation of C). */
static int
rec_reads_coll(const struct sqlb *q, size_t off, const struct coll *c)
{
	char quoted[COLL_NAME_MAX + 3];
	int n = snprintf(quoted, sizeof(quoted), "\"%s\"", c->name);

	return n < 0 || (size_t)n >= sizeof(quoted) ||
	    strstr(q->sql->data + off, quoted) != NULL;
}

/*
 * PostgreSQL: a create as one statement that checks the related records and the create
 * rule and inserts, and returns the record as stored, so that it rides the connections'
 * pipelined group commit (common/db_pg_pool.c) with the other writes of the process
 * instead of holding a connection for a transaction of four round trips.  The rule looks
 * at the new record before it is stored, as a derived row t of every field (PocketBase
 * checks a create rule the same way); a record with a missing relation or that the rule
 * refuses is not inserted, and the statement answers no row (in->refused): a 400 that
 * costs the writes batched with it nothing (no error, no rollback).  A rule that reads the
 * collection's own table would not see the new record there: such a create sets in->txn
 * and runs nothing, for rec_insert_txn().  0, or -1 answered.
 */
static int
rec_insert_one(struct rec_ctx *x, struct rec_insert *in)
{
	const struct rec_sets *s = in->s;
	const struct coll *c = x->c;
	struct sqlb *q = &x->t->q;
	const char *type, *dflt;
	const struct rec_set *d;
	size_t i, off;
	int k, r;

	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "INSERT INTO ");
	coll_quote(q->sql, c->name);
	buf_puts(q->sql, " AS r (\"id\"");
	for (k = 0; k < s->n; k++) {
		buf_puts(q->sql, ", ");
		coll_quote(q->sql, s->v[k].f->name);
	}
	buf_puts(q->sql, ") SELECT t.\"id\"");
	for (k = 0; k < s->n; k++) {
		buf_puts(q->sql, ", ");
		sqlb_col(q->sql, "t", s->v[k].f->name);
	}
	buf_puts(q->sql, " FROM (SELECT ");
	if (sqlb_text(q, s->id, strlen(s->id)) < 0)
		goto too_many;
	buf_puts(q->sql, "::text AS \"id\"");
	for (i = 1; i < c->nfields; i++) {
		/* A field the body leaves out reads as it will be stored (coll.c's DDL). */
		type = coll_column(&c->fields[i], DB_PG, &dflt);
		for (k = 0, d = NULL; k < s->n && d == NULL; k++)
			if (s->v[k].f == &c->fields[i])
				d = &s->v[k];
		buf_puts(q->sql, ", ");
		if (d == NULL)
			buf_puts(q->sql, dflt != NULL ? dflt : "NULL");
		else if (rec_bind_sets(q, s, (int)(d - s->v)) < 0)
			goto too_many;
		buf_puts(q->sql, "::");
		buf_puts(q->sql, type);
		buf_puts(q->sql, " AS ");
		coll_quote(q->sql, c->fields[i].name);
	}
	buf_puts(q->sql, ") AS t WHERE true");
	/* The related records exist (rec_relations_exist()'s counts, here in the INSERT's
	 * WHERE, so that a valid create costs no round trip of its own for them). */
	for (k = 0; k < s->n; k++) {
		char *ids;
		int want;

		if ((r = rec_relation_ids(x, &s->v[k], &ids, &want)) < 0)
			return -1;
		if (r == 0)
			continue;
		buf_puts(q->sql, " AND (SELECT ");
		if (rec_relation_count(q, &s->v[k], ids) < 0)
			goto too_many;
		buf_printf(q->sql, ") = %d", want);
	}
	/* A token checked against the auth cache: its record still as kept (auth.c). */
	if (rec_auth_guard(x) < 0)
		goto too_many;
	off = q->sql->len;
	if ((r = rec_rule(x, c, COLL_RULE_CREATE, "t")) != 0)
		return r < 0 ? -1 : (rec_error(x->rs, 403, "Only superusers can perform this action.",
		    NULL), -1);
	if (rec_reads_coll(q, off, c)) {
		in->txn = 1;
		return 0;
	}
	rec_returning(q, c, "r");
	if (rec_exec_rows(x, &in->rows) < 0)
		return -1;
	in->refused = in->rows.n == 0;
	in->fetched = !in->refused;
	return 0;
too_many:
	return rec_error(x->rs, 400, "Failed to create record.", NULL), -1;
}

/*
 * A create, a write of rec_commit(): one statement on PostgreSQL (rec_insert_one()) unless
 * in->txn, else rec_insert_txn()'s.  On SQLite the write first checks what the request
 * has not read yet, on the group commit's connection (rec_auth_settle()): the token's
 * record, then the related records (the body's other errors were answered before).
 * 0, or -1 answered.
 */
static int
rec_insert(struct rec_ctx *x, void *arg)
{
	struct rec_insert *in = arg;
	struct rec_sets *s = in->s;

	if (db_backend(x->rq->db) == DB_PG && !in->txn)
		return rec_insert_one(x, in);
	if (db_backend(x->rq->db) == DB_SQLITE) {
		s->errs.len = 0;	/* a replay checks them again */
		if (rec_auth_settle(x) < 0 || rec_relations_exist(x, s) < 0)
			return -1;
		if (rec_invalid_answer(x, s, "Failed to create record."))
			return -1;
	}
	if (in->k == NULL)
		return rec_insert_txn(x, in);
	/* A keyed create answers inside its write, so that the answer stored under the key
	 * commits with the row; a run after another starts from the headers before it. */
	buf_truncate(&x->rs->headers, in->k->headers_from);
	if (rec_insert_txn(x, in) < 0)
		return -1;
	(void)rec_show_rows(x, &in->rows);
	if (x->rs->status != 200 || rec_idem_store(x, in->k) < 0)
		return -1;
	return 0;
}

int
rec_create(struct rec_ctx *x)
{
	struct rec_sets s;
	struct rec_insert in;
	const char *rule = x->c->rules[COLL_RULE_CREATE];
	int rc = 0;

	/* A token not checked yet (SQLite) is checked before any other answer, as always. */
	if (!x->superuser && rule == NULL)
		return rec_auth_settle(x) < 0 ? 0 :
		    rec_error(x->rs, 403, "Only superusers can perform this action.", NULL);
	if (rec_values(x, &s, 1) < 0)
		goto out;
	/* The relations are checked by the write: on PostgreSQL in its INSERT
	 * (rec_insert_one()), on SQLite before it (rec_insert()). */
	if (s.errs.len > 0 && rec_auth_settle(x) < 0)
		goto out;
	if (rec_invalid_answer(x, &s, "Failed to create record."))
		goto out;
	memset(&in, 0, sizeof(in));
	in.s = &s;
	/* With an Idempotency-Key: the token checked before the key is looked up, then the
	 * create and its answer inside one write, a transaction of its own on PostgreSQL
	 * (its related records checked first there, inside it on SQLite). */
	if (!x->in_batch && req_header(x->rq, "Idempotency-Key") != NULL) {
		if (rec_auth_settle(x) < 0 || rec_idem_begin(x, &in.k) < 0 ||
		    (db_backend(x->rq->db) == DB_PG && rec_relations_exist(x, &s) < 0) ||
		    rec_invalid_answer(x, &s, "Failed to create record."))
			goto out;
		in.txn = 1;
		(void)rec_commit(x, rec_insert, &in, 1);
		goto out;
	}
	/* On PostgreSQL one statement outside a transaction (rec_insert_one()), or, for a
	 * rule that reads the collection itself, a transaction of its own. */
	if (rec_commit(x, rec_insert, &in, 0) < 0)
		goto out;
	/* Nothing stored, or nothing run, on a token checked against the auth cache's copy
	 * of its record: the record read afresh, and the create run again with it. */
	if ((in.refused || in.txn) && x->auth_kept) {
		if (rec_auth_settle(x) < 0)
			goto out;
		memset(&in, 0, sizeof(in));
		in.s = &s;
		if (rec_commit(x, rec_insert, &in, 0) < 0)
			goto out;
	}
	/* Nothing stored, or nothing run: a missing relation answers as it would have
	 * before the INSERT, then the rule's refusal. */
	if ((in.refused || in.txn) && rec_relations_exist(x, &s) < 0)
		goto out;
	if (rec_invalid_answer(x, &s, "Failed to create record."))
		goto out;
	if (in.refused) {
		rc = rec_error(x->rs, 400, "Failed to create record.", NULL);
		goto out;
	}
	if (in.txn && rec_commit(x, rec_insert, &in, 1) < 0)
		goto out;
	if (!x->in_batch)
		rec_publish(x->c, "create", s.id);
	rc = in.fetched ? rec_show_rows(x, &in.rows) : rec_show(x, s.id);
out:
	buf_free(&s.errs);
	return rc;
}

/* 0 when the update rule lets the request change record x->id, 1 when not (404), -1
 * answered (403 for a superusers-only rule). */
static int
rec_may_update(struct rec_ctx *x)
{
	const char *rule = x->c->rules[COLL_RULE_UPDATE];
	struct sqlb *q = &x->t->q;
	struct db_stmt *st;
	int r;

	if (x->superuser || (rule != NULL && *rule == '\0'))
		return 0;
	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "SELECT 1 FROM ");
	coll_quote(q->sql, x->c->name);
	buf_puts(q->sql, " AS t WHERE t.\"id\" = ");
	sqlb_text(q, x->id, strlen(x->id));
	if ((r = rec_rule(x, x->c, COLL_RULE_UPDATE, "t")) != 0)
		return r < 0 ? -1 : (rec_error(x->rs, 403, "Only superusers can perform this action.",
		    NULL), -1);
	if ((st = db_prepare(x->rq->db, q->sql->data)) == NULL || sqlb_bind(q, st) < 0)
		return rec_db_error(x), -1;
	r = db_step(st);
	db_reset(st);
	if (r == DB_ERROR)
		return rec_db_error(x), -1;
	return r == DB_ROW ? 0 : 1;
}

/*
 * An update's statement in x->t->q, from the rule's check on: 0, 1 (404: the rule does
 * not let the request change the record), or -1 answered.  *s holds the body's values
 * (its own, freed by the caller).
 */
static int
rec_update_sql(struct rec_ctx *x, struct rec_sets *s)
{
	struct sqlb *q = &x->t->q;
	int i, r;

	/* The rule first: nothing about a record the request may not change (its current
	 * values, its old password) may decide the answer. */
	if ((r = rec_may_update(x)) != 0)
		return r;
	if (rec_values(x, s, 0) < 0)
		return -1;
	if (s->errs.len == 0 && rec_relations_exist(x, s) < 0)
		return -1;
	if (rec_invalid_answer(x, s, "Failed to update record."))
		return -1;
	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "UPDATE ");
	coll_quote(q->sql, x->c->name);
	buf_puts(q->sql, " AS t SET \"id\" = t.\"id\"");
	for (i = 0; i < s->n; i++) {
		const struct rec_set *d = &s->v[i];

		buf_puts(q->sql, ", ");
		coll_quote(q->sql, d->f->name);
		buf_puts(q->sql, " = ");
		if (d->mod == REC_MOD_MERGE)
			r = coll_merge(q, "t", d->f->name, d->pre, d->app, d->rm);
		else if (d->mod == REC_MOD_ADD) {
			sqlb_col(q->sql, "t", d->f->name);
			buf_puts(q->sql, " + ");
			r = sqlb_double(q, d->delta);
		} else
			r = rec_bind_sets(q, s, i);
		if (r < 0)
			return rec_error(x->rs, 400, "Failed to update record.", NULL), -1;
	}
	buf_puts(q->sql, " WHERE t.\"id\" = ");
	sqlb_text(q, x->id, strlen(x->id));
	if ((r = rec_rule(x, x->c, COLL_RULE_UPDATE, "t")) != 0)
		return r > 0 ? (rec_error(x->rs, 403, "Only superusers can perform this action.",
		    NULL), -1) : -1;
	/* The record as stored comes back with the UPDATE: no read after it. */
	rec_returning(q, x->c, NULL);
	return 0;
}

/* An update: its values, and what it stored. */
struct rec_upd {
	struct rec_sets s;
	struct rec_rows rows;
	int ran;		/* s holds a run's values (a replay frees them first) */
	struct idem *k;		/* the request's Idempotency-Key, or NULL */
};

/* An update whose reads run inside its write: its token's record, the rule's check, the
 * related records, then the UPDATE (a write of rec_commit()).  The rows changed (0: the
 * record is not there or the rule does not let the request change it, a 404 for the
 * caller to answer), or -1 answered. */

static int
rec_update_write(struct rec_ctx *x, void *arg)
{
	struct rec_upd *u = arg;
	int r;

	if (u->ran)
		buf_free(&u->s.errs);
	/* A keyed run after another starts from the headers before the write. */
	if (u->k != NULL)
		buf_truncate(&x->rs->headers, u->k->headers_from);
	memset(&u->s, 0, sizeof(u->s));
	u->ran = 1;
	if (rec_auth_settle(x) < 0 || (r = rec_update_sql(x, &u->s)) < 0)
		return -1;
	if (r > 0) {
		memset(&u->rows, 0, sizeof(u->rows));
		return 0;
	}
	if ((r = rec_exec_rows_write(x, &u->rows)) <= 0 || u->k == NULL)
		return r;
	/* A keyed update answers inside its write, so that the answer stored under the key
	 * commits with the row: the record as the UPDATE returned it, with fields= and
	 * expand= read on the write's connection.  An answer that is not a 200 (a malformed
	 * fields=) undoes the update. */
	(void)rec_show_rows(x, &u->rows);
	if (x->rs->status != 200 || rec_idem_store(x, u->k) < 0)
		return -1;
	return r;
}

/*
 * On SQLite an update whose token rec_authorize() left unread, and whose body sets no
 * password (a bcrypt hash has no place inside a batch), reads inside its write on the group
 * commit's connection (rec_update_write()), as a create does; any other one reads first.
 */
int
rec_update(struct rec_ctx *x)
{
	struct rec_upd u;
	int r, rc = 0;
	int64_t n;

	memset(&u, 0, sizeof(u));
	/* With an Idempotency-Key (and no new password, whose hash has no place inside a
	 * write): the token checked before the key is looked up, then the update and its
	 * answer inside one write, a transaction of its own on PostgreSQL. */
	if (!x->in_batch && req_header(x->rq, "Idempotency-Key") != NULL && !(x->c->auth &&
	    cJSON_GetObjectItemCaseSensitive(x->body, "password") != NULL)) {
		if (rec_auth_settle(x) < 0 || rec_idem_begin(x, &u.k) < 0)
			goto out;
		if (rec_commit(x, rec_update_write, &u, 1) == 0)
			rc = rec_error(x->rs, 404, NULL, NULL);
		goto out;
	}
	if (x->auth_wait != NULL && !(x->c->auth &&
	    cJSON_GetObjectItemCaseSensitive(x->body, "password") != NULL)) {
		if ((n = rec_commit(x, rec_update_write, &u, 0)) >= 0) {
			if (n > 0 && !x->in_batch)
				rec_publish(x->c, "update", x->id);
			rc = n == 0 ? rec_error(x->rs, 404, NULL, NULL) :
			    rec_show_rows(x, &u.rows);
		}
		goto out;
	}
	if (rec_auth_settle(x) < 0 || (r = rec_update_sql(x, &u.s)) < 0)
		goto out;
	if (r > 0) {
		rc = rec_error(x->rs, 404, NULL, NULL);
		goto out;
	}
	if ((n = rec_commit(x, rec_exec_rows_write, &u.rows, 0)) < 0)
		goto out;
	if (n > 0 && !x->in_batch)
		rec_publish(x->c, "update", x->id);
	rc = n == 0 ? rec_error(x->rs, 404, NULL, NULL) : rec_show_rows(x, &u.rows);
out:
	buf_free(&u.s.errs);
	return rc;
}

/* A delete's key (or NULL) and the record it removed, as its RETURNING read it. */
struct rec_del {
	const struct idem *k;
	struct rec_rows rows;
};

/*
 * A delete as a write of rec_commit() (arg: its struct rec_del).  The DELETE returns the
 * record's columns (rec_returning()), so that its realtime event carries the record as it
 * was when the delete committed.  A keyed delete runs in a transaction of its own on
 * PostgreSQL: the DELETE, then its 204 stored under the key in the same transaction, so
 * that a retry after a lost answer replays it and deletes nothing.  A delete that found
 * nothing stores nothing.  The rows deleted, or -1 answered (undone).
 */
static int
rec_delete_run(struct rec_ctx *x, void *arg)
{
	struct rec_del *d = arg;
	int n;

	/* A run after another (a replay) starts from the headers before the write. */
	if (d->k != NULL)
		buf_truncate(&x->rs->headers, d->k->headers_from);
	if ((n = rec_exec_rows_write(x, &d->rows)) <= 0 || d->k == NULL)
		return n;
	if (resp_set(x->rs, 204, NULL, "", 0) < 0 || rec_idem_store(x, d->k) < 0)
		return -1;
	return n;
}

int
rec_delete(struct rec_ctx *x)
{
	struct sqlb *q = &x->t->q;
	struct idem *k = NULL;
	struct rec_del d;
	int64_t n;
	int r;

	if (!x->in_batch && rec_idem_begin(x, &k) < 0)
		return 0;
	memset(&d, 0, sizeof(d));
	d.k = k;

	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "DELETE FROM ");
	coll_quote(q->sql, x->c->name);
	buf_puts(q->sql, " AS t WHERE t.\"id\" = ");
	sqlb_text(q, x->id, strlen(x->id));
	if ((r = rec_rule(x, x->c, COLL_RULE_DELETE, "t")) != 0)
		return r < 0 ? 0 : rec_error(x->rs, 403, "Only superusers can perform this action.",
		    NULL);
	rec_returning(q, x->c, NULL);
	if ((n = rec_commit(x, rec_delete_run, &d, k != NULL)) < 0)
		return 0;
	if (n == 0)
		return rec_error(x->rs, 404, NULL, NULL);
	if (!x->in_batch)
		rec_publish_row(x->c, "delete", x->id, d.rows.n > 0 ? d.rows.r[0] : NULL);
	return resp_set(x->rs, 204, NULL, "", 0);
}

int
rec_auth_password(struct rec_ctx *x)
{
	const cJSON *id = cJSON_GetObjectItemCaseSensitive(x->body, "identity");
	const cJSON *pw = cJSON_GetObjectItemCaseSensitive(x->body, "password");
	struct rec_row *row = NULL;
	size_t hi, ki;
	int r, ok;

	if (!cJSON_IsString(id) || !cJSON_IsString(pw) || id->valuestring[0] == '\0' ||
	    pw->valuestring[0] == '\0') {
		char data[256];

		(void)snprintf(data, sizeof(data), "{%s%s%s}",
		    cJSON_IsString(id) && id->valuestring[0] ? "" :
		    "\"identity\":{\"code\":\"validation_required\",\"message\":\"Missing required "
		    "value.\"}", (cJSON_IsString(id) && id->valuestring[0]) ||
		    (cJSON_IsString(pw) && pw->valuestring[0]) ? "" : ",",
		    cJSON_IsString(pw) && pw->valuestring[0] ? "" :
		    "\"password\":{\"code\":\"validation_required\",\"message\":\"Missing required "
		    "value.\"}");
		return rec_error(x->rs, 400, NULL, data);
	}
	if ((r = rec_get(x, x->c, id->valuestring, strlen(id->valuestring), "email", &row)) < 0)
		return 0;
	hi = coll_field_index(x->c, coll_field(x->c, "password", 8));
	ki = coll_field_index(x->c, coll_field(x->c, "tokenKey", 8));
	/* No timing oracle: an unknown identity costs one bcrypt comparison too. */
	if ((ok = rec_pass_check(x, pw->valuestring, r ? row->v[hi] : NULL)) < 0)
		return 0;
	if (!ok || r == 0 || row->v[ki] == NULL)
		return rec_error(x->rs, 400, "Failed to authenticate.", NULL);
	return rec_auth_answer(x, row, REC_TOKEN_TTL, 1);
}

int
rec_auth_refresh(struct rec_ctx *x)
{
	if (x->auth != x->c)
		return rec_error(x->rs, 401, "The request requires valid record authorization token.",
		    NULL);
	/* An impersonation's token lives as long as it was given, never longer. */
	if (!x->auth_refreshable)
		return rec_error(x->rs, 403, "The current auth token is not refreshable.", NULL);
	return rec_auth_answer(x, x->auth_row, REC_TOKEN_TTL, 1);
}

/* The longest impersonation asked for, in seconds: some 31,700 years, far below what a
 * token's exp may hold (token_parse() takes up to 1e15). */
#define REC_IMPERSONATE_MAX	1000000000000LL

int
rec_auth_impersonate(struct rec_ctx *x)
{
	const cJSON *d = cJSON_GetObjectItemCaseSensitive(x->body, "duration");
	struct rec_row *row;
	int64_t ttl = 0;
	int r;

	if (x->auth == NULL)
		return rec_error(x->rs, 401, "The request requires valid record authorization token.",
		    NULL);
	if (!x->superuser)
		return rec_error(x->rs, 403, NULL, NULL);
	if (d != NULL && !cJSON_IsNull(d)) {
		double v = -1;

		/* A form sends the number as text. */
		if (cJSON_IsNumber(d) && d->valuedouble == floor(d->valuedouble))
			v = d->valuedouble;
		else if (cJSON_IsNumber(d) || !cJSON_IsString(d) || str_to_int(d->valuestring,
		    strlen(d->valuestring), INT64_MIN, INT64_MAX, &ttl) < 0)
			return rec_error(x->rs, 400, "An error occurred while loading the submitted "
			    "data.", NULL);
		else
			v = (double)ttl;
		if (v < 0)
			return rec_error(x->rs, 400, "An error occurred while validating the "
			    "submitted data.", "{\"duration\":{\"code\":"
			    "\"validation_min_greater_equal_than_required\",\"message\":"
			    "\"Must be no less than 0.\"}}");
		if (v > (double)REC_IMPERSONATE_MAX)
			return rec_error(x->rs, 400, "An error occurred while validating the "
			    "submitted data.", "{\"duration\":{\"code\":"
			    "\"validation_max_less_equal_than_required\",\"message\":"
			    "\"Must be no greater than 1000000000000.\"}}");
		ttl = (int64_t)v;
	}
	if ((r = rec_get(x, x->c, x->id, strlen(x->id), "id", &row)) < 0)
		return 0;
	if (r == 0)
		return rec_error(x->rs, 404, NULL, NULL);
	return rec_auth_answer(x, row, ttl > 0 ? ttl : REC_TOKEN_TTL, 0);
}

/* rec_auth_answer() (records.h): every sign-in's answer. */
int
rec_auth_answer(struct rec_ctx *x, struct rec_row *row, int64_t ttl, int refreshable)
{
	size_t ki = coll_field_index(x->c, coll_field(x->c, "tokenKey", 8));
	char token[TOKEN_MAX];
	struct buf *b = &x->rs->body;
	struct rec_out o;
	int n;

	if (row->v[ki] == NULL)
		return rec_error(x->rs, 400, "Failed to authenticate.", NULL);
	n = (refreshable ? token_make : token_make_static)(token, sizeof(token), x->c->id,
	    row->v[0], row->v[ki], row->len[ki], (int64_t)x->f.now + ttl);
	if (n < 0)
		return rec_error(x->rs, 500, NULL, NULL);
	memset(&o, 0, sizeof(o));
	o.show_email = 1;
	x->rs->status = 200;
	x->rs->content_type = "application/json";
	buf_reset(b, 1 << 20);
	buf_puts(b, "{\"record\":");
	rec_write(x, b, x->c, row, &o, -1, "", 0, 0);
	buf_puts(b, ",\"token\":");
	json_escape(b, token, (size_t)n);
	buf_putc(b, '}');
	return 0;
}
