/*
 * idem.c: the storage of the Idempotency-Key (idem.h): the key's validation, the request's
 * hash, the table sluice_idempotency, the lookup of a key, the store of an answer in the
 * write's transaction and the purge of expired keys, on either back end.
 *
 * Keys live idempotency_ttl seconds (SLUICE_IDEMPOTENCY_TTL, 24 hours by default): an
 * expired key is neither replayed nor in the way (the store takes its row over), and each
 * stored answer deletes up to IDEM_PURGE expired rows in its transaction through the index
 * on expires, so that the table stays as large as a day's keys.  On PostgreSQL the table
 * is public.sluice_idempotency, granted to PUBLIC, since the table API's writes run as the
 * request's role; what else an application says about it (the table API's row level
 * security) is its own, passed to idem_table().
 */
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <openssl/evp.h>

#include "arena.h"
#include "idem.h"
#include "log.h"
#include "settings.h"

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
	"grant select, insert, update, delete on public.sluice_idempotency to public",
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

int
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

int
idem_init(struct idem *k, const struct req *rq, const char *scope, const char *key,
    const char *const *headers, size_t headers_from)
{
	EVP_MD_CTX *c = EVP_MD_CTX_new();
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int n = 0, i;
	long long ttl;
	const char *v;
	int rc = -1;

	if (c == NULL || EVP_DigestInit_ex(c, EVP_sha256(), NULL) != 1)
		goto out;
	idem_feed(c, rq->method_name, strlen(rq->method_name));
	idem_feed(c, rq->path, strlen(rq->path));
	idem_feed(c, rq->query, strlen(rq->query));
	for (; headers != NULL && *headers != NULL; headers++) {
		v = req_header(rq, *headers);
		idem_feed(c, v, v != NULL ? strlen(v) : 0);
	}
	idem_feed(c, rq->body, rq->body != NULL ? rq->body_len : 0);
	if (EVP_DigestFinal_ex(c, md, &n) != 1 || n != 32)
		goto out;
	for (i = 0; i < n; i++)
		(void)snprintf(k->request + 2 * i, 3, "%02x", md[i]);
	if (settings_int(SETTING_IDEMPOTENCY_TTL, &ttl) < 0)
		ttl = 86400;
	k->scope = scope;
	k->key = key;
	k->now = (int64_t)time(NULL);
	k->expires = k->now + ttl;
	k->headers_from = headers_from;
	rc = 0;
out:
	EVP_MD_CTX_free(c);
	return rc;
}

int
idem_table(struct db *db, const char *pg_extra)
{
	if (db_exec(db, idem_sql_of(db)->create) < 0 ||
	    (pg_extra != NULL && db_backend(db) == DB_PG && db_exec(db, pg_extra) < 0)) {
		/* Another worker's CREATE at the same time: the lookup says if it is there. */
		log_warn("idempotency: cannot create sluice_idempotency: %s", db_errmsg(db));
		return -1;
	}
	return 0;
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

int
idem_lookup(struct db *db, const struct idem *k, struct req *rq, struct resp *rs)
{
	const char *req_hash;
	struct db_stmt *st;
	int r;

	if ((st = db_prepare(db, idem_sql_of(db)->lookup)) == NULL ||
	    db_bind_text(st, 1, k->scope, strlen(k->scope)) < 0 ||
	    db_bind_text(st, 2, k->key, strlen(k->key)) < 0 || db_bind_int(st, 3, k->now) < 0)
		return -1;
	if ((r = db_step(st)) == DB_ERROR)
		return -1;
	if (r == DB_DONE) {
		db_reset(st);
		return IDEM_NEW;
	}
	req_hash = db_column_text(st, 0, NULL);
	if (req_hash == NULL || strcmp(req_hash, k->request) != 0) {
		db_reset(st);
		return IDEM_REUSED;
	}
	(void)idem_replay(rq, rs, st);
	return IDEM_REPLAYED;
}

int
idem_store(struct db *db, const struct idem *k, const struct resp *rs)
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
