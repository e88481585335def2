/*
 * idem.c: the Idempotency-Key of the records API's writes, its adapter of common/idem.h
 * (the table API's is apps/rest/idem.c): the caller's scope, PocketBase's error bodies,
 * and the store of a write's answer inside it.
 *
 * A create, an update or a delete sent with a key that is not 1 to 255 bytes of printable
 * ASCII is answered 400 before anything runs.  A write with a well-formed
 * key is answered once: its token is checked first (so that a forged token cannot read
 * another caller's answer), its key looked up in sluice_idempotency under the scope
 * "records:<collection of the token's record>:<its id>" (or "records:anon"): the same
 * request replays the stored answer byte for byte with "Idempotent-Replayed: true",
 * another request under the key is 422, and a new key runs the write with its answer made
 * inside it and stored in its own transaction (write.c: rec_insert(), rec_update_write(),
 * rec_delete_keyed()), so that the row and the answer commit together or not at all:
 * the answer is made there rather than rebuilt after the commit because only then is it
 * the bytes sent, whatever the record became since.  A write that found nothing (404)
 * stores nothing.  A key that another write stored meanwhile is 409 with Retry-After: 1,
 * the write undone.  Requests of a batch ignore the key.
 * A request without the header pays one header lookup.
 */
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "idem.h"
#include "records.h"

int
rec_idem_check(struct rec_ctx *x)
{
	const char *key = req_header(x->rq, "Idempotency-Key");

	if (key == NULL || idem_key_ok(key))
		return 0;
	(void)rec_error(x->rs, 400, "Idempotency-Key must be 1 to 255 bytes of printable "
	    "ASCII.", NULL);
	return -1;
}

int
rec_idem_begin(struct rec_ctx *x, struct idem **out)
{
	const char *key = req_header(x->rq, "Idempotency-Key");
	struct idem *k;
	char *scope;
	size_t len;
	int r;

	*out = NULL;
	if (key == NULL)
		return 0;
	len = 40 + (x->auth != NULL ? strlen(x->auth->name) + strlen(x->auth_id) : 0);
	if ((k = arena_alloc(x->rq->arena, sizeof(*k))) == NULL ||
	    (scope = arena_alloc(x->rq->arena, len)) == NULL) {
		(void)rec_error(x->rs, 500, NULL, NULL);
		return -1;
	}
	if (x->auth != NULL)
		(void)snprintf(scope, len, "records:%s:%s", x->auth->name, x->auth_id);
	else
		(void)snprintf(scope, len, "records:anon");
	if (idem_init(k, x->rq, scope, key, NULL, x->rs->headers.len) < 0) {
		(void)rec_error(x->rs, 500, NULL, NULL);
		return -1;
	}
	if (!x->t->idem_table && idem_table(x->rq->db, NULL) == 0)
		x->t->idem_table = 1;
	if ((r = idem_lookup(x->rq->db, k, x->rq, x->rs)) < 0)
		return rec_db_error(x), -1;
	if (r == IDEM_REUSED) {
		(void)rec_error(x->rs, 422, "This Idempotency-Key was used for another request.",
		    NULL);
		return -1;
	}
	if (r == IDEM_REPLAYED)
		return -1;
	*out = k;
	return 1;
}

int
rec_idem_store(struct rec_ctx *x, const struct idem *k)
{
	int r = idem_store(x->rq->db, k, x->rs);

	if (r == 0)
		return 0;
	buf_truncate(&x->rs->headers, k->headers_from);
	if (r > 0) {
		resp_header(x->rs, "Retry-After", "1");
		(void)rec_error(x->rs, 409, "A request with this Idempotency-Key is in flight.",
		    NULL);
	} else
		(void)rec_db_error(x);
	return -1;
}
