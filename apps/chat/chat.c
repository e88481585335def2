/*
 * chat.c: see chat.h.  Process-wide state (the key, the bench setting) is written once
 * by chat_init() before the serving threads start and only read afterwards.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "chat.h"
#include "chat/body.h"
#include "chat/pagecache.h"
#include "chat/version.h"
#include "db.h"
#include "json.h"
#include "keyfile.h"
#include "log.h"
#include "serve.h"
#include "settings.h"
#include "str.h"
#include "req.h"
#include "resp.h"
#include "tmpl.h"

#define CHAT_KEY_MAX	64
#define CHAT_MAC_HEX	64	/* HMAC-SHA256 in hex */

static unsigned char chat_key[CHAT_KEY_MAX];
static size_t chat_keylen;
static long long chat_bench_sessions;
static _Thread_local uint64_t chat_rng;

/*
 * The version board (version.h): every chat process maps it, since every writer must bump
 * it for the pages that cache.  A page that caches cannot do without it; any other chat
 * process logs why it has none (its writes then go unseen by caching pages: fix it).
 */
static int
chat_init_versions(void)
{
	long long cache;

	if (settings_int(SETTING_CHAT_PAGE_CACHE, &cache) < 0) {
		fprintf(stderr, "chat: SLUICE_CHAT_PAGE_CACHE must be 0 or 1\n");
		return -1;
	}
	if (chat_version_open() == 0)
		return 0;
	if (cache) {
		fprintf(stderr, "chat: chat_page_cache=1 needs the version board %s next to "
		    "the database: %s\n", CHAT_VERSION_FILE, strerror(errno));
		return -1;
	}
	log_warn("chat: no version board (%s next to the database): %s; pages with "
	    "chat_page_cache=1 would not see this process's writes", CHAT_VERSION_FILE,
	    strerror(errno));
	return 0;
}

int
chat_init(void)
{
	const char *hex = settings_get(SETTING_SESSION_KEY);
	const char *path = settings_get(SETTING_SESSION_KEY_FILE);
	char def[4096];
	long k;

	if (settings_int(SETTING_BENCH_SESSIONS, &chat_bench_sessions) < 0) {
		fprintf(stderr, "chat: SLUICE_BENCH_SESSIONS must be 0..99999999\n");
		return -1;
	}
	if (chat_init_versions() < 0)
		return -1;
	if (hex != NULL) {
		if ((k = str_unhex(hex, strlen(hex), chat_key, sizeof(chat_key))) < KEYFILE_MIN) {
			fprintf(stderr, "chat: SLUICE_SESSION_KEY must be 32 to 128 hex digits\n");
			return -1;
		}
		chat_keylen = (size_t)k;
		return 0;
	}
	if (path == NULL) {
		if (keyfile_path("chat-session.key", def, sizeof(def)) < 0) {
			fprintf(stderr, "chat: the session key path is too long\n");
			return -1;
		}
		path = def;
	}
	if ((k = keyfile_load(path, chat_key, sizeof(chat_key), 32)) <= 0) {
		fprintf(stderr, "chat: cannot read or create the session key %s: %s\n", path,
		    k == 0 ? "malformed" : strerror(errno));
		return -1;
	}
	chat_keylen = (size_t)k;
	return 0;
}

int
chat_main(int argc, char **argv, const struct endpoint *ep)
{
	int rc;

	if (chat_init() < 0)
		return 1;
	rc = serve_main(argc, argv, ep);
	chat_fini();
	return rc;
}

void
chat_fini(void)
{
	chat_cache_free();
	chat_version_close();
}

int
chat_bench_mode(void)
{
	return chat_bench_sessions > 0;
}

static uint64_t
chat_random(void)
{
	uint64_t x = chat_rng;

	if (x == 0) {
		if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x))
			x = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&x;
		x |= 1;
	}
	/* xorshift64*: plenty for picking a simulated session. */
	x ^= x >> 12;
	x ^= x << 25;
	x ^= x >> 27;
	chat_rng = x;
	return x * 0x2545F4914F6CDD1DULL;
}

static void
chat_mac_hex(const char *sid, size_t len, char out[CHAT_MAC_HEX + 1])
{
	unsigned char md[EVP_MAX_MD_SIZE];
	unsigned int mdlen = 0;

	HMAC(EVP_sha256(), chat_key, (int)chat_keylen, (const unsigned char *)sid, len, md,
	    &mdlen);
	str_hex(md, 32, out);
}

int
chat_session(const struct req *rq, char sid[CHAT_SID_MAX])
{
	const char *c = req_header(rq, "Cookie"), *v, *dot, *end;
	char mac[CHAT_MAC_HEX + 1];
	size_t n, i, namelen = strlen(CHAT_COOKIE);

	if (chat_bench_sessions > 0) {
		(void)snprintf(sid, CHAT_SID_MAX, "s_%08lld",
		    1 + (long long)(chat_random() % (uint64_t)chat_bench_sessions));
		return 1;
	}
	while (c != NULL && *c != '\0') {
		while (*c == ' ' || *c == '\t' || *c == ';')
			c++;
		end = strchr(c, ';');
		if (end == NULL)
			end = c + strlen(c);
		if ((size_t)(end - c) > namelen && memcmp(c, CHAT_COOKIE, namelen) == 0 &&
		    c[namelen] == '=') {
			v = c + namelen + 1;
			while (end > v && (end[-1] == ' ' || end[-1] == '\t'))
				end--;
			dot = memchr(v, '.', (size_t)(end - v));
			if (dot == NULL || (n = (size_t)(dot - v)) == 0 || n >= CHAT_SID_MAX ||
			    (size_t)(end - dot - 1) != CHAT_MAC_HEX)
				return 0;
			for (i = 0; i < n; i++)
				if (!((v[i] >= 'a' && v[i] <= 'z') || (v[i] >= '0' && v[i] <= '9') ||
				    v[i] == '_'))
					return 0;
			chat_mac_hex(v, n, mac);
			if (CRYPTO_memcmp(mac, dot + 1, CHAT_MAC_HEX) != 0)
				return 0;
			memcpy(sid, v, n);
			sid[n] = '\0';
			return 1;
		}
		c = end;
	}
	return 0;
}

void
chat_guest_nickname(const char *sid, char nick[CHAT_NICK_GUEST])
{
	/* "w_" + hex for the sessions chat_session_new() makes. */
	if (strncmp(sid, "w_", 2) == 0)
		sid += 2;
	(void)snprintf(nick, CHAT_NICK_GUEST, "guest-%.6s", sid);
}

int
chat_user_ensure(struct db *db, const char *sid)
{
	char nick[CHAT_NICK_GUEST];
	struct db_stmt *st;
	double now = chat_now();

	chat_guest_nickname(sid, nick);
	if ((st = db_prepare(db, "INSERT INTO users(nickname, session_id, current_channel_id, "
	    "created_ts) VALUES ($1, $2, (SELECT id FROM channels WHERE name = 'starcord'), "
	    "$3) ON CONFLICT (session_id) DO NOTHING")) == NULL)
		return -1;
	db_bind_text(st, 1, nick, strlen(nick));
	db_bind_text(st, 2, sid, strlen(sid));
	db_bind_double(st, 3, now);
	if (db_step(st) != DB_DONE)
		return -1;
	if (db_changes(st) == 0)
		return 0;	/* the user exists: the common case, one statement */
	if ((st = db_prepare(db, "INSERT INTO channel_memberships(user_id, channel_id, "
	    "created_ts) SELECT id, current_channel_id, $2 FROM users WHERE session_id = $1 "
	    "AND current_channel_id IS NOT NULL")) == NULL)
		return -1;
	db_bind_text(st, 1, sid, strlen(sid));
	db_bind_double(st, 2, now);
	return db_step(st) == DB_DONE ? 0 : -1;
}

int
chat_session_new(struct req *rq, struct resp *rs, char sid[CHAT_SID_MAX])
{
	unsigned char r[16];
	char hex[2 * sizeof(r) + 1], mac[CHAT_MAC_HEX + 1], cookie[256];
	int n;

	(void)rq;
	if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
		return resp_error(rs, 500, "internal", "no randomness for a session", NULL,
		    NULL), -1;
	str_hex(r, sizeof(r), hex);
	(void)snprintf(sid, CHAT_SID_MAX, "w_%s", hex);
	chat_mac_hex(sid, strlen(sid), mac);
	n = snprintf(cookie, sizeof(cookie), "%s=%s.%s; Path=/; HttpOnly; SameSite=Lax; "
	    "Max-Age=31536000", CHAT_COOKIE, sid, mac);
	if (n < 0 || (size_t)n >= sizeof(cookie) || resp_header(rs, "Set-Cookie", cookie) < 0)
		return resp_error(rs, 500, "internal", "cannot set the session cookie", NULL,
		    NULL), -1;
	return 0;
}

double
chat_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

int
chat_write_input(struct req *rq, struct resp *rs, const struct chat_field *tbl, size_t n,
    char sid[CHAT_SID_MAX], struct chat_value *vals)
{
	if (!chat_session(rq, sid)) {
		resp_error(rs, 401, "no_session", "no valid session", NULL,
		    "load the chat page first: it sets the session cookie");
		return -1;
	}
	return chat_body_read(rq, rs, tbl, n, vals);
}

/* 1 when the request's body is an HTML form (application/x-www-form-urlencoded). */
static int
chat_is_form(const struct req *rq)
{
	return req_content_type_is(rq, "application/x-www-form-urlencoded");
}

int
chat_reply(const struct req *rq, struct resp *rs, int rc)
{
	enum json_err jerr;
	const cJSON *m;
	cJSON *root;
	char status[8];
	const char *msg = "The request failed.", *accept;
	int code = rs->status;

	if (rc < 0 || !chat_is_form(rq))
		return rc;
	if (code >= 200 && code < 300) {
		rs->status = 303;
		rs->content_type = "text/html; charset=utf-8";
		rs->body.len = 0;
		return resp_header(rs, "Location", "/");
	}
	/* Only a browser's form navigation asks for HTML; any other client keeps the JSON. */
	if ((accept = req_header(rq, "Accept")) == NULL || strstr(accept, "text/html") == NULL)
		return rc;
	/* Every error body here is resp_error()'s JSON (or a refusal that extends it). */
	root = json_parse(rs->body.data, rs->body.len, 4, &jerr, NULL);
	if (root != NULL && cJSON_IsString(m = cJSON_GetObjectItemCaseSensitive(root,
	    "message")) && m->valuestring != NULL)
		msg = m->valuestring;
	(void)snprintf(status, sizeof(status), "%d", code);
	rs->body.len = 0;
	rs->content_type = "text/html; charset=utf-8";
	buf_puts(&rs->body, "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
	    "<link rel=\"icon\" href=\"data:,\"><title>Starcord: not sent</title></head>\n"
	    "<body><h1>Not sent (");
	buf_puts(&rs->body, status);
	buf_puts(&rs->body, ")</h1>\n<p class=\"error\">");
	tmpl_escape(&rs->body, msg, strlen(msg));
	buf_puts(&rs->body, "</p>\n<p><a href=\"/\">Back to the chat</a></p></body></html>\n");
	cJSON_Delete(root);
	if (buf_failed(&rs->body))
		return -1;
	return 0;
}
