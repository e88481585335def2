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
 * The table is made by the first keyed request of each thread (CREATE TABLE IF NOT
 * EXISTS); it is hidden from the API (schema.c hides the sluice_ tables).  On PostgreSQL
 * it is public.sluice_idempotency, granted to PUBLIC, since with access control the write
 * runs as the request's role, and under row level security: a role reads and writes the
 * rows of its own scope only (a policy on current_user), so that no role's functions can
 * read another's stored answers.
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>

#include "arena.h"
#include "log.h"
#include "rest.h"
#include "settings.h"

#define IDEM_KEY_MAX	255
#define IDEM_PURGE	8

/* The statements of each back end: only the table's name and the purge's lock differ. */
struct idem_sql {
	const char *create, *lookup, *store, *purge;
};

#define IDEM_COLS "(scope text NOT NULL, idem_key text NOT NULL, request text NOT NULL, " \
	"expires bigint NOT NULL, status integer NOT NULL, content_type text, " \
	"headers text NOT NULL, body text NOT NULL, PRIMARY KEY (scope, idem_key))"
#define IDEM_STORE(T) "insert into " T " (scope, idem_key, request, expires, status, " \
	"content_type, headers, body) values ($1, $2, $3, $4, $5, $6, $7, $8) " \
	"on conflict (scope, idem_key) do update set request = excluded.request, " \
	"expires = excluded.expires, status = excluded.status, " \
	"content_type = excluded.content_type, headers = excluded.headers, " \
	"body = excluded.body where sluice_idempotency.expires <= $9"
#define IDEM_LOOKUP(T) "select request, status, content_type, headers, body from " T \
	" where scope = $1 and idem_key = $2 and expires > $3"

static const struct idem_sql idem_sqlite = {
	"create table if not exists sluice_idempotency " IDEM_COLS ";"
	"create index if not exists sluice_idempotency_expires on sluice_idempotency "
	"(expires)",
	IDEM_LOOKUP("sluice_idempotency"),
	IDEM_STORE("sluice_idempotency"),
	"delete from sluice_idempotency where (scope, idem_key) in (select scope, idem_key "
	"from sluice_idempotency where expires <= $1 order by expires limit 8)",
};

static const struct idem_sql idem_pg = {
	"create table if not exists public.sluice_idempotency " IDEM_COLS ";"
	"create index if not exists sluice_idempotency_expires on public.sluice_idempotency "
	"(expires);"
	"grant select, insert, update, delete on public.sluice_idempotency to public;"
	/* A role sees and writes its own callers' rows only (scope "role:<len>:<role>..."). */
	"alter table public.sluice_idempotency enable row level security;"
	"do $idem$ begin if not exists (select 1 from pg_catalog.pg_policies where "
	"schemaname = 'public' and tablename = 'sluice_idempotency' and "
	"policyname = 'sluice_idempotency_own') then "
	"create policy sluice_idempotency_own on public.sluice_idempotency using "
	"(starts_with(scope, 'role:' || length(current_user) || ':' || current_user || ' ') "
	"or scope = 'role:' || length(current_user) || ':' || current_user); "
	"end if; end $idem$",
	IDEM_LOOKUP("public.sluice_idempotency"),
	IDEM_STORE("public.sluice_idempotency"),
	/* Rows another keyed write is purging are left to it (no lock wait, no deadlock). */
	"delete from public.sluice_idempotency where (scope, idem_key) in (select scope, "
	"idem_key from public.sluice_idempotency where expires <= $1 order by expires "
	"limit 8 for update skip locked)",
};

static const struct idem_sql *
idem_sql_of(const struct db *db)
{
	return db_backend(db) == DB_PG ? &idem_pg : &idem_sqlite;
}

/* 1 when k is 1 to IDEM_KEY_MAX bytes of printable ASCII. */
static int
idem_key_ok(const char *k)
{
	size_t n = 0;

	for (; k[n] != '\0'; n++)
		if ((unsigned char)k[n] < 0x20 || (unsigned char)k[n] > 0x7e)
			return 0;
	return n > 0 && n <= IDEM_KEY_MAX;
}

/* Feeds s (NULL: nothing) and a separator to the digest. */
static void
idem_feed(EVP_MD_CTX *c, const char *s, size_t len)
{
	if (s != NULL)
		(void)EVP_DigestUpdate(c, s, len);
	(void)EVP_DigestUpdate(c, "", 1);
}

static void
idem_feed_header(EVP_MD_CTX *c, const struct req *rq, const char *name)
{
	const char *v = req_header(rq, name);

	idem_feed(c, v, v != NULL ? strlen(v) : 0);
}

/* The request's hash into hex[65].  0, or -1 when OpenSSL failed. */
static int
idem_hash(const struct req *rq, char hex[65])
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;

	if (c == NULL || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1) {
		EVP_MD_CTX_free(c);
		return -1;
	}
	idem_feed(c, rq->method_name, strlen(rq->method_name));
	idem_feed(c, rq->path, strlen(rq->path));
	idem_feed(c, rq->query, strlen(rq->query));
	idem_feed_header(c, rq, "Prefer");
	idem_feed_header(c, rq, "Accept");
	idem_feed_header(c, rq, "Content-Profile");
	idem_feed(c, rq->body, rq->body != NULL ? rq->body_len : 0);
	if (EVP_DigestFinal_ex(c, md, &n) != 1 || n != 32) {
		EVP_MD_CTX_free(c);
		return -1;
	}
	EVP_MD_CTX_free(c);
	for (i = 0; i < n; i++)
		(void)snprintf(hex + 2 * i, 3, "%02x", md[i]);
	return 0;
}

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

/* The stored answer of the row st is on, replayed into rs.  Returns 0. */
static int
idem_replay(struct req *rq, struct resp *rs, struct db_stmt *st)
{
	size_t hlen = 0, blen = 0, clen = 0;
	const char *ct = db_column_text(st, 2, &clen);
	const char *h = db_column_text(st, 3, &hlen), *b = db_column_text(st, 4, &blen);
	int status = (int)db_column_int(st, 1);

	if (buf_append(&rs->headers, h != NULL ? h : "", hlen) < 0 ||
	    resp_set(rs, status, NULL, b != NULL ? b : "", blen) < 0) {
		db_reset(st);
		return resp_error(rs, 500, "internal", "the stored answer does not fit", NULL,
		    NULL);
	}
	rs->content_type = ct != NULL ? arena_strndup(rq->arena, ct, clen) : NULL;
	db_reset(st);
	resp_header(rs, "Idempotent-Replayed", "true");
	return 0;
}

/* Makes the table once per thread.  0, or -1 (logged). */
static int
idem_table(struct db *db, struct rest_thread *t)
{
	if (t->idem_table)
		return 0;
	if (db_exec(db, idem_sql_of(db)->create) < 0) {
		/* Another worker's CREATE at the same time: the lookup says if it is there. */
		log_warn("idempotency: cannot create sluice_idempotency: %s", db_errmsg(db));
		return -1;
	}
	t->idem_table = 1;
	return 0;
}

int
rest_idem_begin(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id)
{
	const char *key = req_header(rq, "Idempotency-Key"), *req_hash;
	struct rest_idem *k;
	struct db_stmt *st;
	long long ttl;
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
	    (k->scope = idem_scope(rq, id)) == NULL || idem_hash(rq, k->request) < 0) {
		(void)resp_error(rs, 500, "internal", "out of memory", NULL, NULL);
		return -1;
	}
	if (settings_int(SETTING_IDEMPOTENCY_TTL, &ttl) < 0)
		ttl = 86400;
	k->key = key;
	k->now = (int64_t)time(NULL);
	k->expires = k->now + ttl;
	k->headers_from = rs->headers.len;
	(void)idem_table(rq->db, t);
	if ((st = db_prepare(rq->db, idem_sql_of(rq->db)->lookup)) == NULL ||
	    db_bind_text(st, 1, k->scope, strlen(k->scope)) < 0 ||
	    db_bind_text(st, 2, key, strlen(key)) < 0 || db_bind_int(st, 3, k->now) < 0) {
		(void)rest_db_error(rs, t, rq->db);
		return -1;
	}
	if ((r = db_step(st)) == DB_ERROR) {
		(void)rest_db_error(rs, t, rq->db);
		return -1;
	}
	if (r == DB_DONE) {
		db_reset(st);
		t->idem = k;
		return 1;
	}
	req_hash = db_column_text(st, 0, NULL);
	if (req_hash == NULL || strcmp(req_hash, k->request) != 0) {
		db_reset(st);
		(void)resp_error(rs, 422, "idempotency_key_reused", "this Idempotency-Key was "
		    "used for another request", NULL, "use a new key for a new request");
		return -1;
	}
	(void)idem_replay(rq, rs, st);
	return -1;
}

int
rest_idem_store(struct db *db, const struct rest_idem *k, const struct resp *rs)
{
	const struct idem_sql *q = idem_sql_of(db);
	const char *h = rs->headers.data != NULL ? rs->headers.data + k->headers_from : "";
	size_t hlen = rs->headers.len - k->headers_from;
	struct db_stmt *st;
	int64_t changed;

	if ((st = db_prepare(db, q->store)) == NULL ||
	    db_bind_text(st, 1, k->scope, strlen(k->scope)) < 0 ||
	    db_bind_text(st, 2, k->key, strlen(k->key)) < 0 ||
	    db_bind_text(st, 3, k->request, strlen(k->request)) < 0 ||
	    db_bind_int(st, 4, k->expires) < 0 || db_bind_int(st, 5, rs->status) < 0 ||
	    (rs->content_type != NULL ? db_bind_text(st, 6, rs->content_type,
	    strlen(rs->content_type)) : db_bind_null(st, 6)) < 0 ||
	    db_bind_text(st, 7, h, hlen) < 0 ||
	    db_bind_text(st, 8, rs->body.data != NULL ? rs->body.data : "", rs->body.len) < 0 ||
	    db_bind_int(st, 9, k->now) < 0 || db_step(st) != DB_DONE)
		return -1;
	changed = db_changes(st);
	db_reset(st);
	if (changed == 0)
		return 1;
	if ((st = db_prepare(db, q->purge)) == NULL || db_bind_int(st, 1, k->now) < 0 ||
	    db_step(st) != DB_DONE)
		return -1;
	db_reset(st);
	return 0;
}

int
rest_idem_in_flight(struct resp *rs)
{
	resp_header(rs, "Retry-After", "1");
	return resp_error(rs, 409, "idempotency_key_in_flight", "a request with this "
	    "Idempotency-Key is in flight", NULL, "retry once it is answered");
}
