/*
 * records.h: internal to handlers/records/: what the routes share (the thread's state, the
 * request's context, the rows read, the response helpers).
 *
 *   main.c    the endpoint: the thread's state, the route, the body, main()
 *   auth.c    who asks: the token and its record
 *   form.c    form bodies (urlencoded, multipart) read into the object a JSON body makes
 *   write.c   create, update, delete and sign-in: the body by field type, the rules, tokens
 *   commit.c  the writes committed, by common/dbwrite.h's db_write()
 *   publish.c  a committed write announced on the realtime socket
 *   idem.c    the Idempotency-Key of the writes (common/idem.h): a write's answer
 *             stored in its transaction and replayed; the key's check
 *   batch.c   POST /api/batch: several writes in one committed write, all or nothing
 *   account.c  the account flows: auth-methods, verification, password reset, email change
 *   otp.c     sign-in with a one-time password: request-otp, auth-with-otp
 *   methods.c  the sign-in methods of a collection: auth-methods, which allow OTP
 *   limit.c   the rate limits of sign-in and the account flows (429)
 */
#ifndef SLUICE_RECORDS_HANDLER_H
#define SLUICE_RECORDS_HANDLER_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "records/coll.h"
#include "records/filter.h"
#include "records/query.h"
#include "records/read.h"
#include "sqlb.h"
#include "req.h"
#include "resp.h"

/* Settings read at start-up (main.c). */
extern int rec_bcrypt_cost;
extern int rec_batch_on;		/* SLUICE_RECORDS_BATCH */
extern int rec_batch_max;		/* SLUICE_RECORDS_BATCH_MAX */
extern long rec_limit_addr;		/* SLUICE_RECORDS_AUTH_LIMIT */
extern long rec_limit_ident;		/* SLUICE_RECORDS_AUTH_LIMIT_IDENTITY */
extern const char *rec_limit_exempt;	/* SLUICE_RECORDS_AUTH_LIMIT_EXEMPT; NULL: loopback */

/*
 * Counts a request of route what (the last part below /api/collections/C/; its body
 * parsed) against the rate limits of sign-in and the account flows (limit.c): 0 when it
 * may go on (or is not counted), 1 with PocketBase's 429 answered.
 */
int rec_limit(struct rec_ctx *x, const char *what);

/*
 * form.c: reads the body of x (application/x-www-form-urlencoded: rec_form();
 * multipart/form-data: rec_multipart()) into x->body, an object of strings (and of an
 * "@jsonPayload" part's values), and sets x->form.  0, or -1 with a 400 (malformed, not
 * UTF-8, a NUL, too many pairs or parts, a file) or a 413 (the arena's cap) answered.
 */
int rec_form(struct rec_ctx *x);
int rec_multipart(struct rec_ctx *x);




/*
 * commit.c: runs fn(x, arg), a write on x->rq->db that answers its own failures (returns
 * >= 0, or -1 answered), as one committed write (db_write(), common/dbwrite.h): on SQLite
 * group-committed with the process's other writes (on the batch's connection, which
 * x->rq->db points at while it runs); on PostgreSQL fn's one statement outside a
 * transaction, which the connections' pipelined batches group-commit with the process's
 * other writes (common/db_pg_pool.c), or with txn set a transaction of its own (a write of
 * several statements), retried on serialization failures.  fn may run more than once on
 * either back end (commit.c says why that is safe).  Inside a batch (x->in_batch) fn runs
 * at once on x->rq->db, within the batch's own committed write (batch.c), and txn is moot.
 * Returns fn's value once committed, or -1 answered.
 */
int rec_commit(struct rec_ctx *x, int (*fn)(struct rec_ctx *x, void *arg), void *arg,
    int txn);

int rec_create(struct rec_ctx *x);

/*
 * publish.c: announces a committed write of record id of collection c (action "create",
 * "update" or "delete") on the datagram socket SLUICE_REALTIME_SOCKET, without waiting:
 * a socket absent or full drops it and counts it (rec_publish_dropped()).  Never fails
 * the write.  rec_publish_init() opens the sending socket (from main(), before the
 * system call filter); without the setting both do nothing.
 */
#define REC_PUB_MAX	60000	/* a datagram's bytes, at most */
int rec_publish_init(void);
void rec_publish(const struct coll *c, const char *action, const char *id);
/* The same, with the record's columns (row, or NULL: none) carried in the datagram: a
 * delete's, whose record the realtime worker can no longer read (publish.c). */
void rec_publish_row(const struct coll *c, const char *action, const char *id,
    const struct rec_row *row);
unsigned long rec_publish_dropped(void);

/*
 * Checks the Authorization header, if any: 0 (none, or a valid one: x->auth set), or -1
 * with a 401 (or a database error) answered.  defer: a create or an update, which on
 * SQLite reads the token's record later, inside its write (rec_auth_settle()), unless the
 * token is a superuser's (x->superuser is then known before any check).
 */
int rec_authorize(struct rec_ctx *x, int defer);

/*
 * Reads the record of a token rec_authorize() deferred (x->auth_wait) on x->rq->db and
 * checks the token with its key: 0 (x->auth set, or nothing was pending), or -1 answered
 * (401, or the database's error).  A SQLite create or update calls it inside its write,
 * on the connection of the process's group commit, whose pages stay cached from one batch
 * to the next: the request itself then opens no read transaction of its own, the one
 * that after every commit would start from an empty page cache (auth.c).
 */
int rec_auth_settle(struct rec_ctx *x);

/*
 * Appends to x's statement (x->t->q), for a token checked against the auth cache's copy
 * of its record (x->auth_kept), " AND EXISTS (...)": the record, at the statement's
 * snapshot, is still that copy in every column; nothing when x->auth_kept is 0.  0, or -1
 * (too many values).
 */
int rec_auth_guard(struct rec_ctx *x);

/* Frees the auth cache's records (at exit, once no thread serves). */
void rec_auth_cache_free(void);
int rec_update(struct rec_ctx *x);
int rec_delete(struct rec_ctx *x);
/* idem.c: 0 when the request has no Idempotency-Key or a well-formed one, else -1 with
 * 400 answered. */
int rec_idem_check(struct rec_ctx *x);
struct idem;
/* Before a keyed write, its token checked: 0 without the header (*k NULL), 1 with *k set
 * for the write to store its answer (rec_idem_store()), or -1 answered (the stored answer
 * replayed, 422 for another request under the key, the database's error). */
int rec_idem_begin(struct rec_ctx *x, struct idem **k);
/* Inside the write, once its answer is in x->rs: stores it under k.  0, or -1 answered
 * (409 with Retry-After when another write holds the key, the database's error) for the
 * write to be undone. */
int rec_idem_store(struct rec_ctx *x, const struct idem *k);
int rec_auth_password(struct rec_ctx *x);
int rec_auth_refresh(struct rec_ctx *x);

/*
 * POST /api/collections/C/impersonate/ID (x->id), body {"duration"} (seconds, optional;
 * 0 or absent: the auth token's own life): a superuser's request gets 200 {"record",
 * "token"} with a token of that record that auth-refresh will not renew; 401 without a
 * token, 403 for any other record's, 404 for no such record, 400 for a bad duration.
 * Returns 0.
 */
int rec_auth_impersonate(struct rec_ctx *x);

/* rec_exec() of x->t->q as a write of rec_commit() (arg unused): the rows changed (0 or
 * 1), or -1 answered. */
int rec_exec_write(struct rec_ctx *x, void *arg);

/*
 * Compares pw with hash (NULL: no record; a dummy of the same cost is compared instead)
 * on the slow lane, within the request's time budget: 1 when they match, 0 when not, -1
 * when the lane could not answer in time (a 503 answered).
 */
int rec_pass_check(struct rec_ctx *x, const char *pw, const char *hash);

/* 1 when what (the route's last part below /api/collections/C/) is an account flow's
 * route (account.c). */
int rec_account_route(const char *what);

/* Answers the account flow's route what of x->c, an auth collection, its body parsed for
 * a POST (account.c).  Returns 0. */
int rec_account(struct rec_ctx *x, const char *what);

/* Mails text (the body, after the headers) with subject to the address to, from
 * SLUICE_RECORDS_MAIL_FROM (account.c); what names the mail in the log line of a mail that
 * could not be handed over.  Never fails the request. */
void rec_acct_send(struct rec_ctx *x, const char *what, const char *to, const char *subject,
    const char *text);

/* The body's email key, checked: its text (borrowed from x->body), or NULL with
 * PocketBase's 400 answered (validation_required, validation_is_email). */
const char *rec_acct_email_of(struct rec_ctx *x, const char *key);

/* Marks row, a record of x->c, verified (with its onupdate autodates) as a committed
 * write: 1 changed, 0 not (the record is gone), -1 answered. */
int rec_acct_verify(struct rec_ctx *x, const struct rec_row *row);

/* Answers 200 {"record":{...},"token":"..."} for the auth record row of x->c, with a token
 * valid ttl seconds that auth-refresh renews when refreshable (write.c: every sign-in's
 * answer).  Returns 0. */
int rec_auth_answer(struct rec_ctx *x, struct rec_row *row, int64_t ttl, int refreshable);

/* 1 when what is a route of otp.c ("request-otp", "auth-with-otp"). */
int rec_otp_route(const char *what);

/* Answers request-otp or auth-with-otp (what) of x->c, its body parsed (otp.c).
 * Returns 0. */
int rec_otp(struct rec_ctx *x, const char *what);

/* 1 when SLUICE_RECORDS_OTP names c, an auth collection, by name or id (methods.c). */
int rec_otp_on(const struct coll *c);

/* GET auth-methods of x->c, an auth collection: answers 200 (methods.c).  Returns 0. */
int rec_auth_methods(struct rec_ctx *x);

/* POST /api/batch (batch.c), x authorized: answers 200 with every request's answer in
 * order, or the batch's 400 with nothing stored.  Returns 0. */
int rec_batch(struct rec_ctx *x);





#endif /* SLUICE_RECORDS_HANDLER_H */
