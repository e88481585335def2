/*
 * auth.c: who asks: the Authorization header's token checked against its record's key,
 * at once or, for a SQLite create or update, inside the write (rec_auth_settle()).
 */
#include <stdint.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "db.h"
#include "records.h"
#include "records/token.h"

/* Reads token x->auth_tok's record (collection x->auth_wait, id x->auth_id) and checks the
 * token with the record's key: 0 (x->auth set), or -1 answered. */
static int
rec_auth_check(struct rec_ctx *x)
{
	const struct coll *c = x->auth_wait;
	const struct coll_field *tk;
	struct rec_row *row;
	size_t i;
	int rc;

	x->auth_wait = NULL;
	if ((rc = rec_get(x, c, x->auth_id, strlen(x->auth_id), "id", &row)) < 0)
		return -1;
	tk = coll_field(c, "tokenKey", 8);
	i = coll_field_index(c, tk);
	if (rc == 0 || row->v[i] == NULL ||
	    !token_verify(x->auth_tok, strlen(x->auth_tok), c->id, row->v[i], row->len[i])) {
		rec_error(x->rs, 401, "The request requires valid record authorization token.",
		    NULL);
		return -1;
	}
	x->auth = c;
	x->auth_row = row;
	x->superuser = strcmp(c->name, "_superusers") == 0;
	x->f.superuser = x->superuser;
	x->f.auth = c;
	x->f.auth_vals = row->v;
	x->f.auth_lens = row->len;
	return 0;
}

int
rec_auth_settle(struct rec_ctx *x)
{
	return x->auth_wait != NULL ? rec_auth_check(x) : 0;
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
	if (defer && db_backend(x->rq->db) == DB_SQLITE && strcmp(c->name, "_superusers") != 0)
		return 0;
	return rec_auth_check(x);
}

