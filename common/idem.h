/*
 * idem.h: the storage of the Idempotency-Key, shared by the applications whose writes
 * honour it (their adapters: the table API's apps/rest/idem.c, the records API's
 * handlers/records/idem.c).  A write sent with a key is
 * answered once: its answer (status, content type, the headers the write made, body) is
 * stored in the table sluice_idempotency in the write's own transaction, so that the row
 * and the answer commit together or not at all, and a retry by the same caller is looked
 * up before anything runs.  The table is shared: a row's scope starts with what tells the
 * applications' callers apart ("anon", "role:...", "records:..."), so that no caller of
 * one application can meet another's keys.  This module holds what does not depend on
 * the dialect: the key's validation, the request's hash, the table, the lookup, the store
 * and the purge of expired keys; each application's adapter makes its scope and its error
 * bodies.
 */
#ifndef SLUICE_IDEM_H
#define SLUICE_IDEM_H

#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "req.h"
#include "resp.h"

#define IDEM_KEY_MAX	255	/* a key's bytes, at most */

/*
 * A request's key: the caller's scope and the key (borrowed from the request), the
 * request's SHA-256 in hex, the time and the expiry in Unix seconds, and where the headers
 * the write makes start in the response.
 */
struct idem {
	const char *scope, *key;
	char request[65];
	int64_t now, expires;
	size_t headers_from;
};

/* What idem_lookup() found. */
enum idem_found {
	IDEM_NEW = 0,		/* no live row: the write runs and stores its answer */
	IDEM_REPLAYED,		/* the same request: its stored answer is in the response */
	IDEM_REUSED		/* another request under the key */
};

/* 1 when k is 1 to IDEM_KEY_MAX bytes of printable ASCII (space to '~'), else 0. */
int idem_key_ok(const char *k);

/*
 * Fills k for the request rq: scope (kept, not copied), key, the hash of the method, path,
 * query, the headers named in the NULL-terminated list headers (those that shape the
 * answer) and the body, and the expiry from idempotency_ttl.  0, or -1 when OpenSSL failed.
 */
int idem_init(struct idem *k, const struct req *rq, const char *scope, const char *key,
    const char *const *headers, size_t headers_from);

/*
 * Makes the table if it is not there (CREATE ... IF NOT EXISTS), then runs extra when not
 * NULL (an application's own statements about it, on PostgreSQL).  0, or -1 (logged).
 */
int idem_table(struct db *db, const char *pg_extra);

/*
 * Looks k up.  IDEM_REPLAYED leaves the stored answer in rs with "Idempotent-Replayed:
 * true" (or a 500 when it does not fit).  -1 with the error on db.
 */
int idem_lookup(struct db *db, const struct idem *k, struct req *rq, struct resp *rs);

/* Inside the write, on its connection: stores rs's answer under k and purges a few expired
 * keys.  0, 1 when the key is another write's (in flight), -1 with the error on db. */
int idem_store(struct db *db, const struct idem *k, const struct resp *rs);

#endif
