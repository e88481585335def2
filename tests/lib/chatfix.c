/* chatfix.c: see chatfix.h. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "chatfix.h"
#include "db.h"
#include "stack.h"

const char *
chatfix_seeder(void)
{
	const char *s = getenv("CHAT_SEED");

	return s != NULL ? s : stack_seeder("chat-seed");
}

int
chatfix_seed(const char *url, const char *env)
{
	return stack_sh("env %s %s -q -S sql/chat '%s'", env, chatfix_seeder(), url);
}

int
chatfix_get(const char *base, const char *path, const char *cookie, const char *ae,
    struct http_resp *r)
{
	char url[256], ch[512], ah[128];
	const char *h[4];
	int n = 0;

	snprintf(url, sizeof(url), "%s%s", base, path);
	if (cookie != NULL) {
		snprintf(ch, sizeof(ch), "Cookie: %s", cookie);
		h[n++] = ch;
	}
	if (ae != NULL) {
		snprintf(ah, sizeof(ah), "Accept-Encoding: %s", ae);
		h[n++] = ah;
	}
	h[n] = NULL;
	return http_do("GET", url, h, NULL, 0, 10000, r);
}

int
chatfix_post(const char *base, const char *path, const char *cookie, const char *ctype,
    const char *body, struct http_resp *r)
{
	char url[256], ch[512], th[128];
	const char *h[4];
	int n = 0;

	snprintf(url, sizeof(url), "%s%s", base, path);
	snprintf(th, sizeof(th), "Content-Type: %s", ctype ? ctype : "application/json");
	h[n++] = th;
	h[n++] = "Datastar-Request: true";
	if (cookie != NULL) {
		snprintf(ch, sizeof(ch), "Cookie: %s", cookie);
		h[n++] = ch;
	}
	h[n] = NULL;
	return http_do("POST", url, h, body, body ? strlen(body) : 0, 10000, r);
}

int
chatfix_cookie(const struct http_resp *r, char *out, size_t len)
{
	char v[512], *semi;

	if (http_header(r, "Set-Cookie", v, sizeof(v)) < 0 ||
	    strncmp(v, "starcord_session=", 17) != 0)
		return -1;
	if ((semi = strchr(v, ';')) != NULL)
		*semi = '\0';
	snprintf(out, len, "%s", v);
	return 0;
}

int
chatfix_cookie_sid(const char *cookie, char *out, size_t len)
{
	const char *eq = strchr(cookie, '='), *dot;

	if (eq == NULL || (dot = strchr(eq, '.')) == NULL || (size_t)(dot - eq - 1) >= len)
		return -1;
	memcpy(out, eq + 1, (size_t)(dot - eq - 1));
	out[dot - eq - 1] = '\0';
	return 0;
}

static struct db_stmt *
chatfix_query(struct db **db, const char *url, const char *sql, const char *arg)
{
	struct db_stmt *st;
	char err[256];

	if (db_open(db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "chatfix: %s\n", err);
		return NULL;
	}
	if ((st = db_prepare(*db, sql)) == NULL) {
		fprintf(stderr, "chatfix: %s: %s\n", sql, db_errmsg(*db));
		return NULL;
	}
	if (arg != NULL)
		db_bind_text(st, 1, arg, strlen(arg));
	if (db_step(st) != DB_ROW) {
		if (db_errcode(*db) != DB_OK)
			fprintf(stderr, "chatfix: %s: %s\n", sql, db_errmsg(*db));
		return NULL;
	}
	return st;
}

int64_t
chatfix_int(const char *url, const char *sql, const char *arg)
{
	struct db *db = NULL;
	struct db_stmt *st = chatfix_query(&db, url, sql, arg);
	int64_t v = -1;

	if (st != NULL && !db_column_isnull(st, 0))
		v = db_column_int(st, 0);
	db_close(db);
	return v;
}

int
chatfix_text(const char *url, const char *sql, const char *arg, char *out, size_t len)
{
	struct db *db = NULL;
	struct db_stmt *st = chatfix_query(&db, url, sql, arg);
	const char *s;
	int ret = -1;

	if (st != NULL && (s = db_column_text(st, 0, NULL)) != NULL) {
		snprintf(out, len, "%s", s);
		ret = 0;
	}
	db_close(db);
	return ret;
}

int
chatfix_exec(const char *url, const char *sql)
{
	struct db *db = NULL;
	char err[256];
	int rc = -1;

	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "chatfix: %s\n", err);
		return -1;
	}
	rc = db_exec(db, sql);
	if (rc < 0)
		fprintf(stderr, "chatfix: %s: %s\n", sql, db_errmsg(db));
	db_close(db);
	return rc;
}

int
chatfix_count(const struct http_resp *r, const char *needle)
{
	const char *p = r->body.data, *end;
	size_t n = strlen(needle);
	int c = 0;

	if (p == NULL || n == 0)
		return 0;
	end = p + r->body.len;
	while (p + n <= end) {
		const char *q = memchr(p, needle[0], (size_t)(end - p));

		if (q == NULL || q + n > end)
			break;
		if (memcmp(q, needle, n) == 0) {
			c++;
			p = q + n;
		} else
			p = q + 1;
	}
	return c;
}

char *
chatfix_gunzip(const struct http_resp *r, size_t *len)
{
	size_t cap = 4 * 1024 * 1024;
	char *out = malloc(cap + 1);
	z_stream z;
	int rc;

	if (out == NULL)
		return NULL;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 15 + 16) != Z_OK) {
		free(out);
		return NULL;
	}
	z.next_in = (Bytef *)r->body.data;
	z.avail_in = (uInt)r->body.len;
	z.next_out = (Bytef *)out;
	z.avail_out = (uInt)cap;
	/* Z_STREAM_END: the whole member, its CRC and length checked by zlib. */
	rc = inflate(&z, Z_FINISH);
	*len = z.total_out;
	inflateEnd(&z);
	if (rc != Z_STREAM_END || z.avail_in != 0) {
		free(out);
		return NULL;
	}
	out[*len] = '\0';
	return out;
}

int
chatfix_same_page(const char *base, const char *cachedpath, const char *who,
    const char *ck, int gz)
{
	struct http_resp plain, cached;
	char v[64], *text = NULL;
	size_t len = 0;
	int ok;

	http_resp_init(&plain);
	http_resp_init(&cached);
	ok = chatfix_get(base, "/", ck, NULL, &plain) == 0 && plain.status == 200 &&
	    chatfix_get(base, cachedpath, ck, gz ? "gzip, br" : NULL, &cached) == 0 &&
	    cached.status == 200;
	if (ok && gz) {
		ok = http_header(&cached, "Content-Encoding", v, sizeof(v)) == 0 &&
		    strcmp(v, "gzip") == 0 && (text = chatfix_gunzip(&cached, &len)) != NULL &&
		    len == plain.body.len && memcmp(text, plain.body.data, len) == 0;
	} else if (ok) {
		ok = http_header(&cached, "Content-Encoding", v, sizeof(v)) < 0 &&
		    cached.body.len == plain.body.len &&
		    memcmp(cached.body.data, plain.body.data, plain.body.len) == 0;
	}
	if (!ok)
		printf("  %s: the cached page differs (%zu vs %zu bytes, gzip %d)\n", who,
		    gz ? len : cached.body.len, plain.body.len, gz);
	free(text);
	http_resp_free(&plain);
	http_resp_free(&cached);
	return ok;
}
