/*
 * auth.c: who asks: the Authorization header's token checked against its record's key,
 * at once or, for a SQLite create or update, inside the write (rec_auth_settle()).
 *
 * A PostgreSQL create is one statement (write.c's rec_insert_one()), and reading the
 * token's record before it cost a round trip of its own: a statement, a wait for its batch
 * and a wake-up.  So a create checks its token against the record as this process last
 * read it (the auth cache below: the record's every column as text, by collection and
 * id), and its INSERT stores nothing unless that record is, at the statement's snapshot,
 * still the same in every column (rec_auth_guard()).  A record that changed since (a new
 * tokenKey, a password, a field a rule reads) makes the INSERT answer no row, as a refused
 * rule does; the create then reads the record afresh (rec_auth_settle()), checks the token
 * and the rule again with it, and runs once more (rec_create()).  Nothing is stored on
 * what was read before the write, and a token is answered as it would be by a fresh read.
 * Every other request reads the token's record as before.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "db.h"
#include "records.h"
#include "records/token.h"

/* The auth cache: a record per slot, the slot a hash of its collection id and record id;
 * a record read afresh replaces the slot's.  Guarded by mu; its blobs are malloc()ed. */
#define REC_AUTH_SLOTS	256

struct rec_auth_ent {
	char *blob;		/* coll id NUL id NUL, then each column (its length before
				 * it as a size_t, SIZE_MAX for NULL) */
	size_t len;
};

static struct {
	pthread_mutex_t mu;
	struct rec_auth_ent e[REC_AUTH_SLOTS];
} rec_auth_cache = { .mu = PTHREAD_MUTEX_INITIALIZER };

static size_t
rec_auth_slot(const char *coll_id, const char *id)
{
	uint64_t h = 1469598103934665603ULL;
	const char *p;

	for (p = coll_id; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	for (p = id; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	return (size_t)(h % REC_AUTH_SLOTS);
}

/* Keeps row, collection c's record id, as the process's latest read of it (a copy). */
static void
rec_auth_keep(const struct coll *c, const char *id, const struct rec_row *row)
{
	size_t cl = strlen(c->id) + 1, il = strlen(id) + 1, len = cl + il, i, off;
	struct rec_auth_ent *e;
	char *blob;

	for (i = 0; i < c->nfields; i++)
		len += sizeof(size_t) + (row->v[i] != NULL ? row->len[i] : 0);
	if ((blob = malloc(len)) == NULL)
		return;
	memcpy(blob, c->id, cl);
	memcpy(blob + cl, id, il);
	for (i = 0, off = cl + il; i < c->nfields; i++) {
		size_t n = row->v[i] != NULL ? row->len[i] : SIZE_MAX;

		memcpy(blob + off, &n, sizeof(n));
		off += sizeof(n);
		if (row->v[i] != NULL) {
			memcpy(blob + off, row->v[i], row->len[i]);
			off += row->len[i];
		}
	}
	e = &rec_auth_cache.e[rec_auth_slot(c->id, id)];
	pthread_mutex_lock(&rec_auth_cache.mu);
	free(e->blob);
	e->blob = blob;
	e->len = len;
	pthread_mutex_unlock(&rec_auth_cache.mu);
}

/* Forgets collection c's record id. */
static void
rec_auth_forget(const struct coll *c, const char *id)
{
	struct rec_auth_ent *e = &rec_auth_cache.e[rec_auth_slot(c->id, id)];
	char *old = NULL;

	pthread_mutex_lock(&rec_auth_cache.mu);
	if (e->blob != NULL && strcmp(e->blob, c->id) == 0 &&
	    strcmp(e->blob + strlen(c->id) + 1, id) == 0) {
		old = e->blob;
		e->blob = NULL;
	}
	pthread_mutex_unlock(&rec_auth_cache.mu);
	free(old);
}

/* The kept record of collection c's id, copied into arena a: 1 (*row set), 0 when none is
 * kept, -1 out of memory. */
static int
rec_auth_kept(struct arena *a, const struct coll *c, const char *id, struct rec_row **row)
{
	struct rec_auth_ent *e = &rec_auth_cache.e[rec_auth_slot(c->id, id)];
	size_t cl = strlen(c->id) + 1, il = strlen(id) + 1, off = cl + il, i, len = 0;
	struct rec_row *r;
	char *blob = NULL;

	pthread_mutex_lock(&rec_auth_cache.mu);
	if (e->blob != NULL && e->len >= off && memcmp(e->blob, c->id, cl) == 0 &&
	    memcmp(e->blob + cl, id, il) == 0 && (blob = arena_alloc(a, e->len)) != NULL) {
		memcpy(blob, e->blob, e->len);
		len = e->len;
	}
	pthread_mutex_unlock(&rec_auth_cache.mu);
	if (blob == NULL)
		return 0;
	if ((r = arena_alloc(a, sizeof(*r))) == NULL ||
	    (r->v = arena_alloc(a, c->nfields * sizeof(*r->v))) == NULL ||
	    (r->len = arena_alloc(a, c->nfields * sizeof(*r->len))) == NULL)
		return -1;
	r->ex = NULL;
	for (i = 0; i < c->nfields; i++) {
		size_t n;

		if (off + sizeof(n) > len)
			return 0;
		memcpy(&n, blob + off, sizeof(n));
		off += sizeof(n);
		r->v[i] = NULL;
		r->len[i] = 0;
		if (n == SIZE_MAX)
			continue;
		if (n > len - off)
			return 0;
		/* A copy with its NUL, as rec_fetch() gives its values. */
		if ((r->v[i] = arena_strndup(a, blob + off, n)) == NULL)
			return -1;
		r->len[i] = n;
		off += n;
	}
	*row = r;
	return 1;
}

void
rec_auth_cache_free(void)
{
	size_t i;

	pthread_mutex_lock(&rec_auth_cache.mu);
	for (i = 0; i < REC_AUTH_SLOTS; i++) {
		free(rec_auth_cache.e[i].blob);
		rec_auth_cache.e[i].blob = NULL;
	}
	pthread_mutex_unlock(&rec_auth_cache.mu);
}

/* 1 when token x->auth_tok checks with row's key (collection c's tokenKey). */
static int
rec_auth_token_ok(const struct rec_ctx *x, const struct coll *c, const struct rec_row *row)
{
	size_t i = coll_field_index(c, coll_field(c, "tokenKey", 8));

	return row->v[i] != NULL && token_verify(x->auth_tok, strlen(x->auth_tok), c->id,
	    row->v[i], row->len[i]);
}

/* Reads token x->auth_tok's record (collection x->auth_wait, id x->auth_id) and checks the
 * token with the record's key: 0 (x->auth set), or -1 answered. */
static int
rec_auth_check(struct rec_ctx *x)
{
	const struct coll *c = x->auth_wait;
	struct rec_row *row;
	int rc;

	x->auth_wait = NULL;
	if ((rc = rec_get(x, c, x->auth_id, strlen(x->auth_id), "id", &row)) < 0)
		return -1;
	if (rc == 0 || !rec_auth_token_ok(x, c, row)) {
		rec_auth_forget(c, x->auth_id);
		rec_error(x->rs, 401, "The request requires valid record authorization token.",
		    NULL);
		return -1;
	}
	if (x->auth_keep)
		rec_auth_keep(c, x->auth_id, row);
	rec_auth_set(x, c, row);
	return 0;
}

int
rec_auth_settle(struct rec_ctx *x)
{
	if (x->auth_kept) {
		/* What the cache said is not enough for this answer: read the record. */
		rec_auth_forget(x->auth, x->auth_id);
		x->auth_kept = 0;
		x->auth_wait = x->auth;
		x->auth = NULL;
		x->auth_row = NULL;
		x->f.auth = NULL;
		x->f.auth_vals = NULL;
		x->f.auth_lens = NULL;
	}
	return x->auth_wait != NULL ? rec_auth_check(x) : 0;
}

/* A PostgreSQL create's token checked against its record as kept: 1 (x->auth set from
 * it, x->auth_kept), 0 when none is kept or the token does not check with it (the record
 * is then read), -1 answered (500). */
static int
rec_auth_from_kept(struct rec_ctx *x, const struct coll *c)
{
	struct rec_row *row;
	int rc;

	if ((rc = rec_auth_kept(x->rq->arena, c, x->auth_id, &row)) <= 0)
		return rc < 0 ? (rec_error(x->rs, 500, NULL, NULL), -1) : 0;
	if (!rec_auth_token_ok(x, c, row))
		return 0;
	x->auth_wait = NULL;
	x->auth_kept = 1;
	rec_auth_set(x, c, row);
	return 1;
}

int
rec_auth_guard(struct rec_ctx *x)
{
	const struct coll *c = x->auth;
	struct sqlb *q = &x->t->q;
	size_t i;

	if (!x->auth_kept)
		return 0;
	buf_puts(q->sql, " AND EXISTS (SELECT 1 FROM ");
	coll_quote(q->sql, c->name);
	buf_puts(q->sql, " AS au WHERE au.\"id\" = ");
	if (sqlb_text(q, x->auth_id, strlen(x->auth_id)) < 0)
		return -1;
	for (i = 0; i < c->nfields; i++) {
		buf_puts(q->sql, " AND ");
		sqlb_col(q->sql, "au", c->fields[i].name);
		buf_puts(q->sql, " IS NOT DISTINCT FROM ");
		if ((x->auth_row->v[i] == NULL ? sqlb_null(q) :
		    sqlb_text(q, x->auth_row->v[i], x->auth_row->len[i])) < 0)
			return -1;
	}
	buf_putc(q->sql, ')');
	return 0;
}

int
rec_authorize(struct rec_ctx *x, int defer)
{
	const char *h = req_header(x->rq, "Authorization");
	struct token_claims cl;
	const struct coll *c;
	size_t len;

	if (h == NULL)
		return 0;
	if (strncasecmp(h, "Bearer ", 7) == 0)
		h += 7;
	while (*h == ' ')
		h++;
	if ((len = strlen(h)) == 0)
		return 0;
	if (token_parse(h, len, &cl) < 0 || cl.exp <= (int64_t)x->f.now ||
	    (c = colls_find(&x->t->colls, cl.coll_id, strlen(cl.coll_id))) == NULL || !c->auth ||
	    strcmp(c->id, cl.coll_id) != 0) {
		rec_error(x->rs, 401, "The request requires valid record authorization token.",
		    NULL);
		return -1;
	}
	if ((x->auth_id = arena_strndup(x->rq->arena, cl.id, strlen(cl.id))) == NULL)
		return rec_error(x->rs, 500, NULL, NULL), -1;
	x->auth_wait = c;
	x->auth_tok = h;
	x->auth_refreshable = cl.refreshable;
	if (defer && strcmp(c->name, "_superusers") != 0) {
		if (db_backend(x->rq->db) == DB_SQLITE)
			return 0;
		/* A PostgreSQL create (no record id in the route): the kept record, guarded
		 * by its INSERT; else the record read now, and kept for the next one. */
		if (db_backend(x->rq->db) == DB_PG && x->id == NULL) {
			int r = rec_auth_from_kept(x, c);

			if (r != 0)
				return r < 0 ? -1 : 0;
			x->auth_keep = 1;
		}
	}
	return rec_auth_check(x);
}

