/*
 * chat.h: what the Starcord chat endpoints share (handlers/chat_*.c): who the current
 * user is, the validation of the one-field JSON bodies, and running a write so that it
 * is acknowledged only once committed.
 *
 * The current user.  With SLUICE_BENCH_SESSIONS=N (the endpoint setting bench_sessions=N)
 * every request acts as a uniformly random seeded user s_%08d in 1..N, as the benchmark's
 * load generator simulates N sessions.  Otherwise the session is a signed cookie,
 * "starcord_session=SID.HMAC", with HMAC-SHA256 over SID under a server key: the key is
 * SLUICE_SESSION_KEY (hex, at least 32 digits), or the file SLUICE_SESSION_KEY_FILE, or
 * chat-session.key next to the SQLite database (data/chat-session.key for PostgreSQL),
 * created with 32 random bytes by the first worker that needs it.  A forged or altered
 * cookie is ignored as if absent.
 *
 * Writes.  chat_write() runs a write function in a transaction and returns only after it
 * committed.  On SQLite the writes of all threads of a process are group-committed
 * (gcommit.h): one BEGIN IMMEDIATE / COMMIT, hence one fsync, for a whole batch, and the
 * batches of several processes take turns in the file's one writers' queue ("<file>-wlock",
 * db_sqlite.c): a write takes that one file lock and no other.  On PostgreSQL each write is its own transaction at
 * the configured isolation (SLUICE_DB_ISOLATION), retried a few times on serialization
 * failures and deadlocks.
 */
#ifndef SLUICE_CHAT_H
#define SLUICE_CHAT_H

#include <stddef.h>

#include "db.h"
#include "gcommit.h"

struct req;
struct resp;

#define CHAT_SID_MAX	48	/* session ids: [a-z0-9_], shorter than this */
#define CHAT_COOKIE	"starcord_session"
#define CHAT_PG_RETRIES	10

/* Reads the settings and the session key.  Call once from main() before serve_main().
 * Returns 0, or -1 after printing why on stderr. */
int chat_init(void);

/* 1 in bench mode (SLUICE_BENCH_SESSIONS > 0), else 0. */
int chat_bench_mode(void);

/*
 * The current user's session id into sid[CHAT_SID_MAX]: the bench-mode pick, or the
 * verified cookie.  Returns 1 when there is one, 0 when the request has no valid session.
 */
int chat_session(const struct req *rq, char sid[CHAT_SID_MAX]);

/*
 * Makes a new user (nickname "guest-XXXXXX", in the 'starcord' channel) with a fresh
 * random session id into sid[CHAT_SID_MAX], and adds its Set-Cookie header to rs.
 * Returns 0, or -1 with an error response already in rs.
 */
int chat_session_new(struct req *rq, struct resp *rs, char sid[CHAT_SID_MAX]);

/*
 * Runs fn(db, arg) as a committed write (see above).  Returns fn's value (>= 0) after the
 * commit, or -1 with an error response (503 busy, 409, 500 ...) already in rs.
 */
/*
 * What every write starts with: the session (401 without one) and the string field key of
 * the JSON body (chat_body_string's 4xx).  Returns 0 with sid, *s and *len set, or -1 with
 * the error response in rs.  *s is borrowed until the request ends.
 */
int chat_write_input(struct req *rq, struct resp *rs, const char *key,
    char sid[CHAT_SID_MAX], const char **s, size_t *len);

int chat_write(struct req *rq, struct resp *rs, gcommit_fn fn, void *arg);

/* The character rules of the request fields. */
enum chat_chars {
	CHAT_CHARS_TEXT,	/* any printable text: no control characters but \t and \n */
	CHAT_CHARS_CHANNEL,	/* ^[a-z_][a-z0-9_-]*$ */
	CHAT_CHARS_NICKNAME,	/* ^[A-Za-z0-9 _-]*$ */
};

/* Why a field value was refused (0: it was not). */
enum chat_field_err {
	CHAT_FIELD_OK = 0,
	CHAT_FIELD_LENGTH,
	CHAT_FIELD_CHARS,
};

/* Checks s[0..len) (valid UTF-8) has min..max code points and the allowed characters. */
enum chat_field_err chat_field_check(const char *s, size_t len, size_t min, size_t max,
    enum chat_chars chars);

/* Number of code points in the valid UTF-8 string s[0..len). */
size_t chat_utf8_len(const char *s, size_t len);

/*
 * Reads the request body: JSON (Content-Type application/json), an object, with the
 * string member key.  The other members may only be the chat's other signals (Datastar
 * sends every signal of the page with each action), and are ignored.  On success *val is
 * the value (in the request's arena, NUL-terminated, valid UTF-8, no NUL inside) and 0 is
 * returned; otherwise a 4xx response is in rs and -1 is returned.  The value's length and
 * characters are the caller's to check (chat_field_check()).
 */
int chat_body_string(struct req *rq, struct resp *rs, const char *key, const char **val,
    size_t *len);

/* Seconds since the epoch, with a fraction, for created_ts. */
double chat_now(void);

#endif /* SLUICE_CHAT_H */
