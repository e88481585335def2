/*
 * idem.c: the Idempotency-Key of the table API's writes (POST, PATCH, DELETE on a table),
 * on either back end.
 *
 * A write sent with "Idempotency-Key: K" is answered once: its answer (status, content
 * type, the headers the write made, body) is stored in sluice_idempotency in the write's
 * own transaction (commit.c calls rest_idem_store() inside the write, after its answer is
 * made), so that the row and the answer are committed together or not at all.  A retry
 * with the same key by the same caller (the scope: "anon" without access control, else
 * the role and the token's "sub") is looked up before anything runs:
 *   - the same request (method, path, query, body, and the Prefer, Accept and
 *     Content-Profile headers that shape the answer, as one SHA-256) gets the stored
 *     answer byte for byte, with "Idempotent-Replayed: true", and writes nothing;
 *   - another request under the key is 422 idempotency_key_reused;
 *   - a key still held by a write in flight (its row not yet committed) is 409
 *     idempotency_key_in_flight with Retry-After: 1 (the store finds it taken inside the
 *     second write, which is undone).
 * A key is 1 to 255 bytes of printable ASCII (space to '~'); any other is 400
 * idempotency_key_invalid, before anything runs.  A write that failed (4xx, 5xx, rolled
 * back) stores nothing, so its retry runs again.  Keys live idempotency_ttl seconds
 * (SLUICE_IDEMPOTENCY_TTL, 24 hours by default): an expired key is neither replayed nor
 * in the way (the store takes its row over), and each keyed write deletes up to
 * IDEM_PURGE expired rows in its transaction through the index on expires, so that the
 * table stays as large as a day's keys; a request without the header pays nothing.
 *
 * The storage (the table, the lookup, the store, the purge, the hash, the key's check) is
 * common/idem.c's, shared with the records API; this file is the table API's adapter: its
 * scopes, its error bodies, and the row level security it puts on the table.  The table
 * is made by the first keyed request of each thread (CREATE TABLE IF NOT EXISTS); it is
 * hidden from the API (schema.c hides the sluice_ tables).  On PostgreSQL, with access
 * control the write runs as the request's role, and under row level security: a role
 * reads and writes the rows of its own scope only (a policy on current_user), so that no
 * role's functions can read another's stored answers.
 */
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "idem.h"
#include "rest.h"

/* The table API's policy on the shared table (PostgreSQL): a role sees and writes its own
 * callers' rows only (scope "role:<len>:<role>..."). */
static const char idem_rest_policy[] =
	"alter table public.sluice_idempotency enable row level security;"
	"do $idem$ begin if not exists (select 1 from pg_catalog.pg_policies where "
	"schemaname = 'public' and tablename = 'sluice_idempotency' and "
	"policyname = 'sluice_idempotency_own') then "
	"create policy sluice_idempotency_own on public.sluice_idempotency using "
	"(starts_with(scope, 'role:' || length(current_user) || ':' || current_user || ' ') "
	"or scope = 'role:' || length(current_user) || ':' || current_user); "
	"end if; end $idem$";

/* The headers that shape the table API's answer, hashed with the request. */
static const char *const idem_rest_headers[] = { "Prefer", "Accept", "Content-Profile", NULL };

/* The caller's scope in the request's arena: "anon" without access control, else
 * "role:<length of role>:<role>" and, when the token has one, " sub:<sub>" (the length
 * keeps a role whose name holds " sub:" apart from another role's subject).  NULL when
 * out of memory. */
static const char *
idem_scope(struct req *rq, const struct rest_identity *id)
{
	cJSON *claims, *sub;
	const char *role = id->role != NULL ? id->role : "";
	char *out;
	size_t len;

	if (!id->active)
		return "anon";
	claims = id->claims != NULL ? cJSON_ParseWithLength(id->claims, id->claimslen) : NULL;
	sub = cJSON_GetObjectItemCaseSensitive(claims, "sub");
	len = strlen(role) + 40 + (cJSON_IsString(sub) ? strlen(sub->valuestring) : 0);
	if ((out = arena_alloc(rq->arena, len)) != NULL)
		(void)snprintf(out, len, "role:%zu:%s%s%s", strlen(role), role,
		    cJSON_IsString(sub) ? " sub:" : "", cJSON_IsString(sub) ? sub->valuestring : "");
	cJSON_Delete(claims);
	return out;
}

int
rest_idem_begin(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id)
{
	const char *key = req_header(rq, "Idempotency-Key"), *scope;
	struct idem *k;
	int r;

	t->idem = NULL;
	if (key == NULL || !(rq->method & (REQ_POST | REQ_PATCH | REQ_DELETE | REQ_PUT)))
		return 0;
	if (!idem_key_ok(key)) {
		(void)resp_error(rs, 400, "idempotency_key_invalid", "Idempotency-Key must be 1 "
		    "to 255 bytes of printable ASCII", NULL, NULL);
		return -1;
	}
	if ((k = arena_alloc(rq->arena, sizeof(*k))) == NULL ||
	    (scope = idem_scope(rq, id)) == NULL ||
	    idem_init(k, rq, scope, key, idem_rest_headers, rs->headers.len) < 0) {
		(void)resp_error(rs, 500, "internal", "out of memory", NULL, NULL);
		return -1;
	}
	if (!t->idem_table && idem_table(rq->db, idem_rest_policy) == 0)
		t->idem_table = 1;
	if ((r = idem_lookup(rq->db, k, rq, rs)) < 0) {
		(void)rest_db_error(rs, t, rq->db);
		return -1;
	}
	if (r == IDEM_NEW) {
		t->idem = k;
		return 1;
	}
	if (r == IDEM_REUSED)
		(void)resp_error(rs, 422, "idempotency_key_reused", "this Idempotency-Key was "
		    "used for another request", NULL, "use a new key for a new request");
	return -1;
}

int
rest_idem_in_flight(struct resp *rs)
{
	resp_header(rs, "Retry-After", "1");
	return resp_error(rs, 409, "idempotency_key_in_flight", "a request with this "
	    "Idempotency-Key is in flight", NULL, "retry once it is answered");
}
