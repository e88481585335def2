/*
 * chat.h: what the Starcord chat endpoints share (handlers/chat_*.c): who the current
 * user is, and the input of a write: the session and the body.
 *
 * The current user.  With SLUICE_BENCH_SESSIONS=N (the endpoint setting bench_sessions=N)
 * every request acts as a uniformly random seeded user s_%08d in 1..N, as the benchmark's
 * load generator simulates N sessions.  Otherwise the session is a signed cookie,
 * "starcord_session=SID.HMAC", with HMAC-SHA256 over SID under a server key: the key is
 * SLUICE_SESSION_KEY (hex, at least 32 digits), or the file SLUICE_SESSION_KEY_FILE, or
 * chat-session.key next to the SQLite database (data/chat-session.key for PostgreSQL),
 * created with 32 random bytes by the first worker that needs it.  A forged or altered
 * cookie is ignored as if absent.  A new visitor's cookie is made without writing anything
 * (chat_session_new()); its user row is inserted at its first write (chat_user_ensure()).
 *
 * A write endpoint starts with chat_write_input(): the session, then the body read into
 * the endpoint's validation table (body.h, field.h); it writes with db_write(DB_WRITE_TXN)
 * (common/dbwrite.h: SQLite's group commit, or a PostgreSQL transaction retried on
 * serialization failures) and answers a failure with serve_db_error_class().
 *
 * The files of the chat's library, each with its header:
 *   chat.c       the session, the current user, a write's input and reply (this header)
 *   body.c       a write's body, JSON or form, read into its validation table
 *   field.c      the validation table's reader
 *   pagecache.c  the page's cache of rendered message lists
 *   version.c    the version board the processes of a host share
 */
#ifndef SLUICE_CHAT_H
#define SLUICE_CHAT_H

#include <stddef.h>

#include "chat/field.h"

struct req;
struct resp;

#define CHAT_SID_MAX	48	/* session ids: [a-z0-9_], shorter than this */
#define CHAT_COOKIE	"starcord_session"

/* Reads the settings and the session key.  Call once from main() before serve_main().
 * Returns 0, or -1 after printing why on stderr. */
int chat_init(void);

/* A chat endpoint's main(): chat_init(), then serve_main() with ep, then chat_fini().
 * Returns 1 when chat_init() failed, else serve_main()'s status. */
struct endpoint;
int chat_main(int argc, char **argv, const struct endpoint *ep);

/* Releases what chat_init() and the page cache hold; after the serving threads stopped. */
void chat_fini(void);

/* 1 in bench mode (SLUICE_BENCH_SESSIONS > 0), else 0. */
int chat_bench_mode(void);

/*
 * The current user's session id into sid[CHAT_SID_MAX]: the bench-mode pick, or the
 * verified cookie.  Returns 1 when there is one, 0 when the request has no valid session.
 */
int chat_session(const struct req *rq, char sid[CHAT_SID_MAX]);

/*
 * Makes a new pending session: a fresh random session id into sid[CHAT_SID_MAX] and its
 * signed Set-Cookie header in rs.  Nothing is written: the signed cookie carries the
 * pending identity, and its user row (nickname "guest-XXXXXX", in the 'starcord'
 * channel) is inserted by chat_user_ensure() at the session's first write, so an
 * anonymous read never costs a durable write.  Returns 0, or -1 with an error response
 * already in rs.
 */
int chat_session_new(struct req *rq, struct resp *rs, char sid[CHAT_SID_MAX]);

#define CHAT_NICK_GUEST	16	/* "guest-XXXXXX" and its NUL, with room */

/* The nickname of a session whose user is not written yet: "guest-" and six characters
 * of its id. */
void chat_guest_nickname(const char *sid, char nick[CHAT_NICK_GUEST]);

/*
 * Inside a write's transaction, before it touches the user: inserts the user of a
 * pending session (chat_session_new()) and its 'starcord' membership, or does nothing
 * when the user exists.  Returns 0, or -1 on a database failure (error on db).
 */
struct db;
int chat_user_ensure(struct db *db, const char *sid);

/*
 * What every write starts with: the session (401 without one), then the body read into
 * vals[0..n) through the endpoint's validation table tbl[0..n) (chat_body_read()'s 4xx).
 * Returns 0 with sid and vals set, or -1 with the error response in rs.  The values are
 * borrowed until the request ends.
 */
int chat_write_input(struct req *rq, struct resp *rs, const struct chat_field *tbl,
    size_t n, char sid[CHAT_SID_MAX], struct chat_value *vals);

/*
 * What a write answers a plain HTML form post (the page without its script): called last
 * by each write's handle() with the value rc it would return.  For a JSON request, or
 * rc < 0, it changes nothing and returns rc.  For a form: a 2xx becomes 303 See Other to
 * "/" with an empty body (the page then shows the change); an error keeps its status and,
 * when the request accepts text/html (a browser's form navigation does), its body becomes
 * a small HTML page that shows the error's message (HTML-escaped) with a link back to "/";
 * other clients keep the JSON error.  Returns rc, or -1 when the page does not fit the
 * body cap.
 */
int chat_reply(const struct req *rq, struct resp *rs, int rc);

/* Seconds since the epoch, with a fraction, for created_ts. */
double chat_now(void);

#endif /* SLUICE_CHAT_H */
