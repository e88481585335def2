/*
 * chatfix.h: fixtures for the chat integration tests (tests/integration/test_chat*.c):
 * running the real seeder, HTTP calls with the chat's headers and cookie, and one-value
 * queries straight into the database behind the stack, to check what a request did.
 */
#ifndef SLUICE_CHATFIX_H
#define SLUICE_CHATFIX_H

#include <stddef.h>
#include <stdint.h>

#include "http.h"

/* The seeder of the build under test: build/san/sql/chat-seed when SLUICE_BIN is the
 * sanitizer build's bin, else build/rel/sql/chat-seed (CHAT_SEED overrides). */
const char *chatfix_seeder(void);

/* Runs the seeder on url with the environment assignments env ("SEED_MSG_COUNT=5000
 * BENCH_SKEW=0.5", may be ""), tiny preset.  Returns its exit status. */
int chatfix_seed(const char *url, const char *env);

/* GET base+path with an optional cookie ("starcord_session=...") and Accept-Encoding. */
int chatfix_get(const char *base, const char *path, const char *cookie, const char *ae,
    struct http_resp *r);

/* The gunzip of r's body (one gzip member, its CRC and length checked), NUL-terminated
 * (malloc'd: the caller frees), and its length in *len; or NULL. */
char *chatfix_gunzip(const struct http_resp *r, size_t *len);

/*
 * 1 when the page at base+cached (a chat_page pool with chat_page_cache=1) for cookie ck
 * is the page at base+"/" (without the cache) byte for byte: in identity, or with gz set
 * as gzip (asked with "gzip, br": the cache answers gzip) inflating to the same bytes;
 * else 0, and a line naming who and the sizes.
 */
int chatfix_same_page(const char *base, const char *cached, const char *who,
    const char *ck, int gz);

/* POST body to base+path with Content-Type ctype (NULL: application/json), the Datastar
 * header and an optional cookie. */
int chatfix_post(const char *base, const char *path, const char *cookie, const char *ctype,
    const char *body, struct http_resp *r);

/* The "starcord_session=VALUE" pair of r's Set-Cookie into out; 0, or -1 when absent. */
int chatfix_cookie(const struct http_resp *r, char *out, size_t len);

/* The session id inside such a cookie pair into out; 0 or -1. */
int chatfix_cookie_sid(const char *cookie, char *out, size_t len);

/* Runs sql (with $1 bound to arg when arg is not NULL) on the database at url and
 * returns the first column of the first row as an integer; -1 on failure or no row. */
int64_t chatfix_int(const char *url, const char *sql, const char *arg);

/* The same for a text value into out; 0 or -1. */
int chatfix_text(const char *url, const char *sql, const char *arg, char *out, size_t len);

/* Runs sql without results on url; 0 or -1. */
int chatfix_exec(const char *url, const char *sql);

/* Occurrences of needle in the body of r. */
int chatfix_count(const struct http_resp *r, const char *needle);

#endif /* SLUICE_CHATFIX_H */
