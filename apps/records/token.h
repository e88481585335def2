/*
 * token.h: the records API's sign-in: bcrypt password hashes (libcrypt's $2b$) and HS256
 * tokens (JWT) in PocketBase's form.
 *
 * An auth token's claims are {"collectionId","exp","id","refreshable":true,"type":"auth"}
 * ("refreshable":false for an impersonation's, token_make_static(), which auth-refresh
 * refuses to renew);
 * the account flows' tokens (token_make_as()) are {"collectionId","email","exp","id",
 * "type"} with type "verification" or "passwordReset", and {"collectionId","email","exp",
 * "id","newEmail","type":"emailChange"}, as PocketBase makes them.  A token is signed with
 * HMAC-SHA256 under the record's tokenKey followed by the collection's secret for its
 * type, so changing a record's tokenKey (a new password) revokes its tokens of every type.
 * A collection's secret is HMAC-SHA256(server secret, "collection:" + collection id) in hex
 * for auth tokens, with ":verification", ":passwordReset" or ":emailChange" appended to
 * the message for the others (PocketBase, too, keeps a secret per type);
 * the server secret is 32 random bytes kept in hex in the file SLUICE_RECORDS_SECRET_FILE,
 * or records-secret.key next to the SQLite database (data/records-secret.key for
 * PostgreSQL), created by the first worker that needs it.
 */
#ifndef SLUICE_RECORDS_TOKEN_H
#define SLUICE_RECORDS_TOKEN_H

#include <stddef.h>
#include <stdint.h>

#define TOKEN_MAX		2048	/* a token's length, at most (two emails fit) */
#define TOKEN_SECRET_HEX	65	/* a collection secret in hex, with its NUL */
#define PASS_HASH_MAX		128	/* a bcrypt hash: 60 characters */

/*
 * Reads (or creates) the server secret from path (NULL: the default place, see above).
 * Returns 0, or -1 after printing why on stderr.  Call once from main().
 */
int token_init(const char *path);

/* Sets the server secret directly (tests, fuzzers).  len > 0. */
void token_set_secret(const unsigned char *key, size_t len);

/*
 * Makes a token for record id of collection coll_id, valid until exp (seconds since the
 * epoch), signed with token_key and the collection's secret, into out[outlen].  Returns
 * its length, or -1 when it does not fit.
 */
int token_make(char *out, size_t outlen, const char *coll_id, const char *id,
    const char *token_key, size_t keylen, int64_t exp);

/* token_make() of a token that may not be renewed ("refreshable":false): an
 * impersonation's, as PocketBase 0.23 and later make it.  Its length, or -1. */
int token_make_static(char *out, size_t outlen, const char *coll_id, const char *id,
    const char *token_key, size_t keylen, int64_t exp);

/* The types of token: what its "type" claim says and which secret signs it. */
enum token_type {
	TOKEN_AUTH,
	TOKEN_VERIFICATION,
	TOKEN_PASSWORD_RESET,
	TOKEN_EMAIL_CHANGE,
	TOKEN__MAX
};

/*
 * Makes a token of type t: token_make()'s, with email (the record's email when the token
 * was made; not for TOKEN_AUTH) and new_email (TOKEN_EMAIL_CHANGE only) among its claims.
 * Returns its length, or -1 when it does not fit.
 */
int token_make_as(char *out, size_t outlen, enum token_type t, const char *coll_id,
    const char *id, const char *email, const char *new_email, const char *token_key,
    size_t keylen, int64_t exp);

/* What a token claims (before its signature is checked against the record's key). */
struct token_claims {
	char coll_id[64];
	char id[64];
	int64_t exp;
	char email[256];		/* not TOKEN_AUTH: the record's email it was made for */
	char new_email[256];		/* TOKEN_EMAIL_CHANGE: the address asked for */
	int refreshable;		/* TOKEN_AUTH: "refreshable":true (absent: 0, as in
					 * PocketBase) */
};

/*
 * Decodes tok[0..len) (the Authorization header without "Bearer "): three base64url
 * parts, an HS256 header, the claims above with type "auth".  Returns 0 with *c set, or
 * -1 when the token is malformed.
 */
int token_parse(const char *tok, size_t len, struct token_claims *c);

/* token_parse() of a token of type t: its "type" claim must name t, and its email claims
 * be there when t has them.  0 or -1. */
int token_parse_as(const char *tok, size_t len, enum token_type t, struct token_claims *c);

/* 1 when tok's signature is right for token_key and its collection's secret, else 0. */
int token_verify(const char *tok, size_t len, const char *coll_id, const char *token_key,
    size_t keylen);

/* token_verify() of a token of type t (its type's secret). */
int token_verify_as(const char *tok, size_t len, enum token_type t, const char *coll_id,
    const char *token_key, size_t keylen);

/* Random text of [a-z0-9] into out[0..len) (ids, token keys), not NUL-terminated.  0, or
 * -1 when the system has no randomness to give. */
int token_random_text(char *out, size_t len);

/* Random text of [a-zA-Z0-9] into out[0..len) (a realtime client's id, as PocketBase
 * makes it), not NUL-terminated.  0, or -1 when the system has no randomness to give. */
int token_random_alnum(char *out, size_t len);

/* Random decimal digits into out[0..len) (a one-time password), not NUL-terminated.  0,
 * or -1 when the system has no randomness to give. */
int token_random_digits(char *out, size_t len);

/*
 * The stored form of one-time password code[0..len) of the OTP otp_id: HMAC-SHA256 under
 * the server secret of "otp:" + otp_id + ":" + code, in hex, into out.  Keyed with a
 * secret that is not in the database, so that a copy of the database alone does not give
 * the codes away by trying all 10^8 of them; cheap, where a bcrypt hash would put every
 * code check on the slow lane for a secret that lives 3 minutes and 5 tries.  0, or -1
 * when otp_id is too long.
 */
int token_otp_hash(const char *otp_id, const char *code, size_t len,
    char out[TOKEN_SECRET_HEX]);

/* 1 when two token_otp_hash() texts are equal (compared in constant time), else 0. */
int token_otp_match(const char *a, const char *b);

/*
 * Hashes password with bcrypt at cost (4..31) into out[PASS_HASH_MAX].  0 or -1.  The
 * work area (about 32 KiB) is allocated per call.
 */
int pass_hash(const char *password, size_t len, int cost, char out[PASS_HASH_MAX]);

/* 1 when password matches hash, else 0.  With hash NULL (unknown identity), compares
 * with a dummy hash of the same cost all the same, so both take the same time. */
int pass_check(const char *password, size_t len, const char *hash, int cost);

#endif /* SLUICE_RECORDS_TOKEN_H */
