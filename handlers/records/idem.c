/*
 * idem.c: the Idempotency-Key of the records API's writes, its adapter of common/idem.h
 * (the table API's is apps/rest/idem.c).  A create, an update or a delete sent with a key
 * that is not 1 to 255 bytes of printable ASCII is answered 400 in PocketBase's shape
 * before anything runs: checked before the body is parsed, the token read or a statement
 * prepared.  A request without the header pays one header lookup.
 */
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
