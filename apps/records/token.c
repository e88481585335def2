/*
 * token.c: see token.h.  The server secret is process-wide, written once by token_init()
 * before the serving threads start, and only read afterwards.
 */
#include <crypt.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/params.h>

#include "buf.h"
#include "db.h"
#include "json.h"
#include "keyfile.h"
#include "settings.h"
#include "str.h"
#include "token.h"

#define TOKEN_SECRET_LEN	32

static unsigned char token_secret[64];
static size_t token_secret_len;
static unsigned token_secret_gen;	/* token_set_secret()'s calls: the threads' caches */

void
token_set_secret(const unsigned char *key, size_t len)
{
	if (len > sizeof(token_secret))
		len = sizeof(token_secret);
	memcpy(token_secret, key, len);
	token_secret_len = len;
	token_secret_gen++;
}

int
token_init(const char *path)
{
	unsigned char key[64];
	char def[4096];
	long k;

	if (path == NULL)
		path = settings_get(SETTING_RECORDS_SECRET_FILE);
	if (path == NULL) {
		if (keyfile_path("records-secret.key", def, sizeof(def)) < 0) {
			fprintf(stderr, "records: the secret's path is too long\n");
			return -1;
		}
		path = def;
	}
	if ((k = keyfile_load(path, key, sizeof(key), TOKEN_SECRET_LEN)) <= 0) {
		fprintf(stderr, "records: cannot read or create the secret %s: %s\n", path,
		    k == 0 ? "malformed" : strerror(errno));
		return -1;
	}
	token_set_secret(key, (size_t)k);
	return 0;
}

/*
 * HMAC-SHA256 of data[0..len) with key into md (32 bytes), on a MAC context of the
 * thread's own, made once and given a new key each time: OpenSSL's one-shot HMAC() looks
 * the algorithm up and allocates its context at every call, a few microseconds that a
 * signed-in request pays two or three times.  The context is freed when its thread ends.
 */
static pthread_once_t token_mac_once = PTHREAD_ONCE_INIT;
static pthread_key_t token_mac_key;
static int token_mac_keyed;

static void
token_mac_free(void *ctx)
{
	EVP_MAC_CTX_free(ctx);
}

static void
token_mac_init(void)
{
	token_mac_keyed = pthread_key_create(&token_mac_key, token_mac_free) == 0;
}

static EVP_MAC_CTX *
token_mac_ctx(void)
{
	OSSL_PARAM params[2];
	EVP_MAC_CTX *ctx;
	EVP_MAC *mac;

	(void)pthread_once(&token_mac_once, token_mac_init);
	if (!token_mac_keyed)
		return NULL;
	if ((ctx = pthread_getspecific(token_mac_key)) != NULL)
		return ctx;
	if ((mac = EVP_MAC_fetch(NULL, "HMAC", NULL)) == NULL)
		return NULL;
	ctx = EVP_MAC_CTX_new(mac);
	EVP_MAC_free(mac);	/* the context keeps its own reference */
	params[0] = OSSL_PARAM_construct_utf8_string("digest", (char *)(uintptr_t)"SHA256", 0);
	params[1] = OSSL_PARAM_construct_end();
	if (ctx == NULL || EVP_MAC_CTX_set_params(ctx, params) != 1 ||
	    pthread_setspecific(token_mac_key, ctx) != 0) {
		EVP_MAC_CTX_free(ctx);
		return NULL;
	}
	return ctx;
}

static void
token_hmac(const void *key, size_t klen, const void *data, size_t len, unsigned char md[32])
{
	EVP_MAC_CTX *ctx = token_mac_ctx();
	unsigned int mdlen = 0;
	size_t out = 0;

	if (ctx != NULL && EVP_MAC_init(ctx, key, klen, NULL) == 1 &&
	    EVP_MAC_update(ctx, data, len) == 1 && EVP_MAC_final(ctx, md, &out, 32) == 1 &&
	    out == 32)
		return;
	HMAC(EVP_sha256(), key, (int)klen, data, len, md, &mdlen);
}

/* What a type is called in a token's "type" claim, and the suffix of its collection
 * secret's message: PocketBase keeps a secret per token type, so that a token of one type
 * never checks as another even where the claims were to agree; the auth type's message is
 * the one its tokens have always been signed with. */
static const struct {
	const char *name, *suffix;
} token_types[TOKEN__MAX] = {
	[TOKEN_AUTH] = { "auth", "" },
	[TOKEN_VERIFICATION] = { "verification", ":verification" },
	[TOKEN_PASSWORD_RESET] = { "passwordReset", ":passwordReset" },
	[TOKEN_EMAIL_CHANGE] = { "emailChange", ":emailChange" },
};

/* The secret of the collection with this id for tokens of type t into out; the thread
 * keeps the last one. */
static void
token_coll_secret(enum token_type t, const char *coll_id, char out[TOKEN_SECRET_HEX])
{
	static _Thread_local char last_msg[128], last[TOKEN_SECRET_HEX];
	static _Thread_local unsigned last_gen;
	unsigned char md[32];
	char msg[128];
	int n = snprintf(msg, sizeof(msg), "collection:%s%s", coll_id, token_types[t].suffix);

	if (n < 0 || (size_t)n >= sizeof(msg))
		n = (int)sizeof(msg) - 1;
	msg[n] = '\0';
	if (last[0] != '\0' && last_gen == token_secret_gen && strcmp(last_msg, msg) == 0) {
		memcpy(out, last, TOKEN_SECRET_HEX);
		return;
	}
	token_hmac(token_secret, token_secret_len, msg, (size_t)n, md);
	str_hex(md, 32, out);
	memcpy(last_msg, msg, (size_t)n + 1);
	memcpy(last, out, TOKEN_SECRET_HEX);
	last_gen = token_secret_gen;
}

/* The signature of data[0..len) into out (base64url, 43 characters + NUL). */
static void
token_sign(enum token_type t, const char *data, size_t len, const char *coll_id,
    const char *token_key, size_t keylen, char out[48])
{
	unsigned char key[512], md[32];
	char secret[TOKEN_SECRET_HEX];
	size_t klen;

	token_coll_secret(t, coll_id, secret);
	if (keylen > sizeof(key) - TOKEN_SECRET_HEX)
		keylen = sizeof(key) - TOKEN_SECRET_HEX;
	memcpy(key, token_key, keylen);
	memcpy(key + keylen, secret, TOKEN_SECRET_HEX - 1);
	klen = keylen + TOKEN_SECRET_HEX - 1;
	token_hmac(key, klen, data, len, md);
	(void)str_b64url_enc(md, 32, out, 48);
}

/* token_make_as(), with an auth token's "refreshable" claim as refresh says. */
static int
token_make_full(char *out, size_t outlen, enum token_type t, const char *coll_id,
    const char *id, const char *email, const char *new_email, const char *token_key,
    size_t keylen, int64_t exp, int refresh)
{
	static const char head[] = "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9";	/* HS256, JWT */
	struct buf claims;
	char sig[48];
	int n, m, rc = -1;

	/* The claims in the order of PocketBase's (its JSON sorts a map's keys). */
	buf_init(&claims, 2048);
	buf_puts(&claims, "{\"collectionId\":");
	json_escape(&claims, coll_id, strlen(coll_id));
	if (t != TOKEN_AUTH) {
		buf_puts(&claims, ",\"email\":");
		json_escape(&claims, email != NULL ? email : "", email != NULL ? strlen(email) : 0);
	}
	buf_printf(&claims, ",\"exp\":%lld,\"id\":", (long long)exp);
	json_escape(&claims, id, strlen(id));
	if (t == TOKEN_EMAIL_CHANGE) {
		buf_puts(&claims, ",\"newEmail\":");
		json_escape(&claims, new_email != NULL ? new_email : "",
		    new_email != NULL ? strlen(new_email) : 0);
	}
	if (t == TOKEN_AUTH)
		buf_puts(&claims, refresh ? ",\"refreshable\":true" : ",\"refreshable\":false");
	buf_printf(&claims, ",\"type\":\"%s\"}", token_types[t].name);
	if (buf_failed(&claims) || outlen < sizeof(head) + 1)
		goto out;
	memcpy(out, head, sizeof(head) - 1);
	out[sizeof(head) - 1] = '.';
	m = (int)str_b64url_enc((const unsigned char *)claims.data, claims.len, out + sizeof(head),
	    outlen - sizeof(head));
	if (m < 0)
		goto out;
	n = (int)sizeof(head) + m;
	token_sign(t, out, (size_t)n, coll_id, token_key, keylen, sig);
	if ((size_t)n + 1 + strlen(sig) + 1 > outlen)
		goto out;
	out[n] = '.';
	memcpy(out + n + 1, sig, strlen(sig) + 1);
	rc = n + 1 + (int)strlen(sig);
out:
	buf_free(&claims);
	return rc;
}

int
token_make_as(char *out, size_t outlen, enum token_type t, const char *coll_id,
    const char *id, const char *email, const char *new_email, const char *token_key,
    size_t keylen, int64_t exp)
{
	return token_make_full(out, outlen, t, coll_id, id, email, new_email, token_key, keylen,
	    exp, 1);
}

int
token_make(char *out, size_t outlen, const char *coll_id, const char *id,
    const char *token_key, size_t keylen, int64_t exp)
{
	return token_make_full(out, outlen, TOKEN_AUTH, coll_id, id, NULL, NULL, token_key,
	    keylen, exp, 1);
}

int
token_make_static(char *out, size_t outlen, const char *coll_id, const char *id,
    const char *token_key, size_t keylen, int64_t exp)
{
	return token_make_full(out, outlen, TOKEN_AUTH, coll_id, id, NULL, NULL, token_key,
	    keylen, exp, 0);
}

/* Copies the string member key of o into out[outlen]; 0 or -1. */
static int
token_str(const cJSON *o, const char *key, char *out, size_t outlen)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);

	if (!cJSON_IsString(v) || strlen(v->valuestring) >= outlen ||
	    v->valuestring[0] == '\0')
		return -1;
	memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
	return 0;
}

int
token_parse_as(const char *tok, size_t len, enum token_type t, struct token_claims *c)
{
	const char *d1, *d2;
	unsigned char buf[1536];
	cJSON *h = NULL, *p = NULL;
	const cJSON *v;
	enum json_err je;
	int n, rc = -1;

	memset(c, 0, sizeof(*c));
	if (len > TOKEN_MAX || (d1 = memchr(tok, '.', len)) == NULL ||
	    (d2 = memchr(d1 + 1, '.', len - (size_t)(d1 + 1 - tok))) == NULL ||
	    memchr(d2 + 1, '.', len - (size_t)(d2 + 1 - tok)) != NULL)
		return -1;
	if ((n = (int)str_b64url_dec(tok, (size_t)(d1 - tok), buf, sizeof(buf))) < 0 ||
	    (h = json_parse((const char *)buf, (size_t)n, 4, &je, NULL)) == NULL)
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(h, "alg");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, "HS256") != 0)
		goto out;
	if ((n = (int)str_b64url_dec(d1 + 1, (size_t)(d2 - d1 - 1), buf, sizeof(buf))) < 0 ||
	    (p = json_parse((const char *)buf, (size_t)n, 4, &je, NULL)) == NULL)
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(p, "type");
	if (!cJSON_IsString(v) || strcmp(v->valuestring, token_types[t].name) != 0)
		goto out;
	v = cJSON_GetObjectItemCaseSensitive(p, "exp");
	if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > 1e15)
		goto out;
	c->exp = (int64_t)v->valuedouble;
	if (token_str(p, "collectionId", c->coll_id, sizeof(c->coll_id)) < 0 ||
	    token_str(p, "id", c->id, sizeof(c->id)) < 0)
		goto out;
	if ((t != TOKEN_AUTH && token_str(p, "email", c->email, sizeof(c->email)) < 0) ||
	    (t == TOKEN_EMAIL_CHANGE && token_str(p, "newEmail", c->new_email,
	    sizeof(c->new_email)) < 0))
		goto out;
	c->refreshable = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "refreshable"));
	rc = 0;
out:
	cJSON_Delete(h);
	cJSON_Delete(p);
	return rc;
}

int
token_parse(const char *tok, size_t len, struct token_claims *c)
{
	return token_parse_as(tok, len, TOKEN_AUTH, c);
}

int
token_verify_as(const char *tok, size_t len, enum token_type t, const char *coll_id,
    const char *token_key, size_t keylen)
{
	const char *d2 = NULL, *p;
	char sig[48];
	size_t slen;

	for (p = tok; p < tok + len; p++)
		if (*p == '.')
			d2 = p;
	if (d2 == NULL)
		return 0;
	token_sign(t, tok, (size_t)(d2 - tok), coll_id, token_key, keylen, sig);
	slen = len - (size_t)(d2 + 1 - tok);
	return slen == strlen(sig) && CRYPTO_memcmp(sig, d2 + 1, slen) == 0;
}

int
token_verify(const char *tok, size_t len, const char *coll_id, const char *token_key,
    size_t keylen)
{
	return token_verify_as(tok, len, TOKEN_AUTH, coll_id, token_key, keylen);
}

/* len characters of alphabet (n of them, at most 256) into out, each as likely as the
 * others: random bytes at or past the largest multiple of n are dropped.  0, or -1. */
static int
token_random_from(char *out, size_t len, const char *alphabet, unsigned n)
{
	unsigned char r[64];
	unsigned limit = 256 / n * n;
	size_t i = 0, j;

	while (i < len) {
		if (getrandom(r, sizeof(r), 0) != (ssize_t)sizeof(r))
			return -1;
		for (j = 0; j < sizeof(r) && i < len; j++)
			if (r[j] < limit)
				out[i++] = alphabet[r[j] % n];
	}
	return 0;
}

int
token_random_text(char *out, size_t len)
{
	return token_random_from(out, len, "abcdefghijklmnopqrstuvwxyz0123456789", 36);
}

int
token_random_alnum(char *out, size_t len)
{
	return token_random_from(out, len, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
	    "0123456789", 62);
}

int
token_random_digits(char *out, size_t len)
{
	return token_random_from(out, len, "0123456789", 10);
}

int
token_otp_hash(const char *otp_id, const char *code, size_t len, char out[TOKEN_SECRET_HEX])
{
	unsigned char md[32];
	char msg[160];
	int n = snprintf(msg, sizeof(msg), "otp:%s:%.*s", otp_id, (int)len, code);

	if (n < 0 || (size_t)n >= sizeof(msg))
		return -1;
	token_hmac(token_secret, token_secret_len, msg, (size_t)n, md);
	explicit_bzero(msg, sizeof(msg));
	str_hex(md, 32, out);
	return 0;
}

int
token_otp_match(const char *a, const char *b)
{
	return strlen(a) == TOKEN_SECRET_HEX - 1 && strlen(b) == TOKEN_SECRET_HEX - 1 &&
	    CRYPTO_memcmp(a, b, TOKEN_SECRET_HEX - 1) == 0;
}

int
pass_hash(const char *password, size_t len, int cost, char out[PASS_HASH_MAX])
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE], pw[128];
	struct crypt_data *cd;
	const char *h;
	int rc = -1;

	if (len >= sizeof(pw) || memchr(password, '\0', len) != NULL)
		return -1;
	memcpy(pw, password, len);
	pw[len] = '\0';
	if (crypt_gensalt_rn("$2b$", (unsigned long)cost, NULL, 0, setting,
	    (int)sizeof(setting)) == NULL)
		return -1;
	if ((cd = calloc(1, sizeof(*cd))) == NULL)
		return -1;
	h = crypt_rn(pw, setting, cd, (int)sizeof(*cd));
	if (h != NULL && h[0] == '$' && strlen(h) < PASS_HASH_MAX) {
		memcpy(out, h, strlen(h) + 1);
		rc = 0;
	}
	OPENSSL_cleanse(pw, sizeof(pw));
	free(cd);
	return rc;
}

int
pass_check(const char *password, size_t len, const char *hash, int cost)
{
	char dummy[CRYPT_GENSALT_OUTPUT_SIZE], pw[128];
	struct crypt_data *cd;
	const char *h;
	int ok = 0, real = hash != NULL && strncmp(hash, "$2", 2) == 0;

	if (!real) {
		/* Any well-formed setting of the same cost takes as long as a real hash. */
		if (crypt_gensalt_rn("$2b$", (unsigned long)cost, "sluice-dummy-key", 16, dummy,
		    (int)sizeof(dummy)) == NULL)
			return 0;
		hash = dummy;
	}
	if (len >= sizeof(pw))
		len = sizeof(pw) - 1;
	memcpy(pw, password, len);
	pw[len] = '\0';
	if ((cd = calloc(1, sizeof(*cd))) == NULL)
		return 0;
	h = crypt_rn(pw, hash, cd, (int)sizeof(*cd));
	if (h != NULL && h[0] == '$' && strlen(h) == strlen(hash) && real)
		ok = CRYPTO_memcmp(h, hash, strlen(h)) == 0;
	OPENSSL_cleanse(pw, sizeof(pw));
	free(cd);
	return ok;
}
