/*
 * auth.c: access control on the rest endpoint, as PostgREST does it: a JWT in
 * "Authorization: Bearer" names a database role, and requests without one take the
 * anonymous role.
 *
 * Off unless the endpoint sets one of rest_jwt_secret, rest_jwt_secret_file,
 * rest_anon_role or rest_grants: then every request is served as today, tokens unread.
 * On, each request gets a role:
 *   - a token is verified here (its signature by libjwt, everything around it by this
 *     file): three base64url parts, a JSON header whose "alg" is of the configured key's
 *     family (HS256/384/512 for a secret, RS256/384/512 for an RSA public key, ES256/384/512
 *     for an EC one; never "none"), a JSON object of claims, "exp", "nbf" and "iat" within
 *     REST_JWT_SKEW seconds, "aud" holding rest_jwt_aud when both are there.  Failures are
 *     401 PGRST301 with PostgREST's words ("JWT expired", "JWSError JWSInvalidSignature")
 *     and a WWW-Authenticate header; a token with no key configured is 500 PGRST300.
 *   - the role is the claim at rest_jwt_role_claim (".role"), else rest_anon_role; with
 *     neither the request is 401 PGRST302 "Anonymous access is disabled".
 * Then PostgreSQL decides (rest_auth_enter()): the request runs in one transaction that
 * starts with set_config('role', ..., true) (SET LOCAL ROLE), and request.jwt.claims,
 * request.method, request.path and request.headers set the same way, so that grants and
 * row-level security policies apply; the database's 42501 becomes 401 for the anonymous role and 403 for
 * others.  SQLite has no roles: rest_grants lists what each role may do
 * ("anon:select|web_user:select,insert,update,delete,execute", or "all"), on every table
 * and function or on the ones named after '@' ("anon:select@artist,album|anon:execute"),
 * a role's entries adding up; the table or function a request names is checked before the
 * verb runs, the tables its embeds read as names.c resolves them.  A role it does not
 * name is 400 22023, as PostgreSQL's "role does not exist".
 *
 * The configuration is read once per process, before the workers serve (rest_auth_init()
 * from main()), so that a bad one stops the worker at start-up; it is never written again.
 */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include <jwt.h>
#include <openssl/bio.h>
#include <openssl/evp.h>
#include <openssl/pem.h>

#include "arena.h"
#include "json.h"
#include "log.h"
#include "rest.h"
#include "serve.h"
#include "settings.h"
#include "str.h"

#define REST_AUTH_FILE_MAX	(64 * 1024)	/* a key file */

static struct rest_auth rest_auth_global;

/* Reads the whole file path into a malloc'ed, NUL-terminated buffer.  0 or -1 (logged). */
static int
rest_auth_read_file(const char *path, unsigned char **out, size_t *outlen)
{
	unsigned char *p = NULL;
	size_t len = 0;
	ssize_t n;
	int fd, rc = -1;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0) {
		log_err("rest_jwt_secret_file %s: %s", path, strerror(errno));
		return -1;
	}
	if ((p = malloc(REST_AUTH_FILE_MAX + 1)) == NULL)
		goto out;
	while ((n = read(fd, p + len, REST_AUTH_FILE_MAX + 1 - len)) > 0)
		if ((len += (size_t)n) > REST_AUTH_FILE_MAX)
			break;
	if (n < 0) {
		log_err("rest_jwt_secret_file %s: %s", path, strerror(errno));
		goto out;
	}
	if (len > REST_AUTH_FILE_MAX) {
		log_err("rest_jwt_secret_file %s: larger than %d bytes", path, REST_AUTH_FILE_MAX);
		goto out;
	}
	p[len] = '\0';
	*out = p;
	*outlen = len;
	p = NULL;
	rc = 0;
out:
	free(p);
	close(fd);
	return rc;
}

/* The kind of the PEM public key in a->key: RSA or EC.  0, or -1 (logged). */
static int
rest_auth_pem_kind(struct rest_auth *a)
{
	BIO *bio;
	EVP_PKEY *k;
	int id, rc = -1;

	if ((bio = BIO_new_mem_buf(a->key, (int)a->keylen)) == NULL)
		return -1;
	k = PEM_read_bio_PUBKEY(bio, NULL, NULL, NULL);
	BIO_free(bio);
	if (k == NULL) {
		log_err("rest_jwt_secret_file: not a PEM public key (\"-----BEGIN PUBLIC KEY-----\")");
		return -1;
	}
	id = EVP_PKEY_get_base_id(k);
	if (id == EVP_PKEY_RSA) {
		a->kind = REST_KEY_RSA;
		rc = 0;
	} else if (id == EVP_PKEY_EC) {
		a->kind = REST_KEY_EC;
		rc = 0;
	} else
		log_err("rest_jwt_secret_file: the public key is neither RSA nor EC");
	EVP_PKEY_free(k);
	return rc;
}

/* ".role", ".app.\"x-role\"": the claim's path into a->role_path, each key copied
 * NUL-terminated into a->role_buf.  0 or -1 (logged). */
static int
rest_auth_role_path(struct rest_auth *a, const char *s)
{
	const char *p = s, *seg;
	char *out;
	size_t n;

	a->nrole_path = 0;
	if ((a->role_buf = malloc(strlen(s) + 1)) == NULL)
		return -1;
	out = a->role_buf;
	while (*p != '\0') {
		if (*p != '.' || a->nrole_path == REST_ROLE_PATH_MAX)
			goto bad;
		p++;
		if (*p == '"') {
			seg = ++p;
			while (*p != '\0' && *p != '"')
				p++;
			if (*p != '"')
				goto bad;
			n = (size_t)(p - seg);
			p++;
		} else {
			seg = p;
			n = strcspn(p, ".\"");
			p += n;
		}
		if (n == 0 || (*p != '\0' && *p != '.'))
			goto bad;
		memcpy(out, seg, n);
		out[n] = '\0';
		a->role_path[a->nrole_path++] = out;
		out += n + 1;
	}
	if (a->nrole_path == 0)
		goto bad;
	return 0;
bad:
	log_err("rest_jwt_role_claim=%s: want a path such as .role or .app.\"x-role\" (at most "
	    "%d keys)", s, REST_ROLE_PATH_MAX);
	return -1;
}

/* 1 when s is a name rest_pre_request may give: letters, digits and '_', not empty,
 * shorter than PostgreSQL's 64 bytes. */
static int
rest_auth_fn_name_ok(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len > 63 || (s[0] >= '0' && s[0] <= '9'))
		return 0;
	for (i = 0; i < len; i++)
		if (!(isalnum((unsigned char)s[i]) || s[i] == '_'))
			return 0;
	return 1;
}

/* ", "schema"."fn"()" of rest_pre_request (fn or schema.fn) into b.  0, or -1 logged. */
static int
rest_auth_pre_request(struct buf *b, const char *fn)
{
	const char *dot = strchr(fn, '.');
	char part[64];

	if (dot != NULL ? !rest_auth_fn_name_ok(fn, (size_t)(dot - fn)) ||
	    !rest_auth_fn_name_ok(dot + 1, strlen(dot + 1)) :
	    !rest_auth_fn_name_ok(fn, strlen(fn))) {
		log_err("rest_pre_request: '%.100s' is not a function's name (fn or schema.fn: "
		    "letters, digits and '_')", fn);
		return -1;
	}
	buf_puts(b, ", ");
	if (dot != NULL) {
		memcpy(part, fn, (size_t)(dot - fn));
		part[dot - fn] = '\0';
		sqlb_ident(b, part);
		buf_putc(b, '.');
		fn = dot + 1;
	}
	sqlb_ident(b, fn);
	buf_puts(b, "()");
	return 0;
}

static const char rest_auth_resp_settings[] = ", current_setting('response.headers', true), "
    "current_setting('response.status', true)";

/* The statements that start a PostgreSQL request (struct rest_auth's enter_sql and
 * settings_sql), with the pre-request function fn (NULL or "": none).  0, or -1. */
static int
rest_auth_statements(struct rest_auth *a, const char *fn)
{
	static const char *const names[] = { "request.jwt.claims", "request.method",
		"request.path", "request.headers", "request.cookies" };
	size_t i;

	buf_init(&a->enter_sql, 4096);
	buf_init(&a->settings_sql, 4096);
	buf_puts(&a->enter_sql, "select set_config('role', $1, true)");
	buf_puts(&a->settings_sql, "select ");
	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		buf_printf(&a->enter_sql, ", set_config('%s', $%zu, true)", names[i], i + 2);
		buf_printf(&a->settings_sql, "%sset_config('%s', $%zu, true)", i ? ", " : "",
		    names[i], i + 1);
	}
	if (fn != NULL && *fn != '\0') {
		a->pre_request = fn;
		if (rest_auth_pre_request(&a->enter_sql, fn) < 0 ||
		    rest_auth_pre_request(&a->settings_sql, fn) < 0)
			return -1;
		/* What it set of response.headers and response.status (respset.c). */
		buf_puts(&a->enter_sql, rest_auth_resp_settings);
		buf_puts(&a->settings_sql, rest_auth_resp_settings);
	}
	return buf_failed(&a->enter_sql) || buf_failed(&a->settings_sql) ? -1 : 0;
}

int
rest_auth_load(struct rest_auth *a)
{
	const char *secret = settings_get(SETTING_REST_JWT_SECRET);
	const char *file = settings_get(SETTING_REST_JWT_SECRET_FILE);
	const char *aud = settings_get(SETTING_REST_JWT_AUD);
	const char *claim = settings_get(SETTING_REST_JWT_ROLE_CLAIM);
	const char *anon = settings_get(SETTING_REST_ANON_ROLE);
	const char *grants = settings_get(SETTING_REST_GRANTS);
	char why[320];

	memset(a, 0, sizeof(*a));
	if (secret != NULL && *secret == '\0')
		secret = NULL;
	if (file != NULL && *file == '\0')
		file = NULL;
	if (secret != NULL && file != NULL) {
		log_err("rest_jwt_secret and rest_jwt_secret_file are both set: keep one");
		return -1;
	}
	if (secret != NULL) {
		if ((a->key = (unsigned char *)strdup(secret)) == NULL)
			return -1;
		a->keylen = strlen(secret);
		a->kind = REST_KEY_HMAC;
	} else if (file != NULL) {
		if (rest_auth_read_file(file, &a->key, &a->keylen) < 0)
			goto fail;
		if (a->keylen > 10 && memcmp(a->key, "-----BEGIN", 10) == 0) {
			if (rest_auth_pem_kind(a) < 0)
				goto fail;
		} else {
			/* A secret file: its bytes, but for the line end an editor adds. */
			if (a->keylen > 0 && a->key[a->keylen - 1] == '\n')
				a->key[--a->keylen] = '\0';
			if (a->keylen > 0 && a->key[a->keylen - 1] == '\r')
				a->key[--a->keylen] = '\0';
			a->kind = REST_KEY_HMAC;
		}
	}
	if (a->kind == REST_KEY_HMAC && a->keylen < REST_JWT_SECRET_MIN) {
		log_err("the JWT secret (rest_jwt_secret%s) is %zu bytes: it must be at least %d",
		    file != NULL ? "_file" : "", a->keylen, REST_JWT_SECRET_MIN);
		goto fail;
	}
	if (rest_auth_role_path(a, claim != NULL && *claim != '\0' ? claim : ".role") < 0)
		goto fail;
	if (anon != NULL && *anon != '\0') {
		if (strlen(anon) >= REST_ROLE_MAX) {
			log_err("rest_anon_role: longer than %d bytes", REST_ROLE_MAX - 1);
			goto fail;
		}
		a->anon = anon;
		/* PostgREST's claims for a request without a token: the role alone. */
		buf_init(&a->anon_claims, 4 * REST_ROLE_MAX);
		buf_puts(&a->anon_claims, "{\"role\":");
		json_escape(&a->anon_claims, anon, strlen(anon));
		buf_putc(&a->anon_claims, '}');
		if (buf_failed(&a->anon_claims))
			goto fail;
	}
	if (aud != NULL && *aud != '\0')
		a->aud = aud;
	if (grants != NULL && *grants != '\0' &&
	    rest_auth_grants_parse(a, grants, why, sizeof(why)) < 0) {
		log_err("rest_grants: %s", why);
		goto fail;
	}
	a->on = a->kind != REST_KEY_NONE || a->anon != NULL || (grants != NULL && *grants != '\0');
	if (rest_auth_statements(a, settings_get(SETTING_REST_PRE_REQUEST)) < 0)
		goto fail;
	return 0;
fail:
	rest_auth_clear(a);
	return -1;
}

void
rest_auth_clear(struct rest_auth *a)
{
	free(a->key);
	free(a->role_buf);
	free(a->grants_buf);
	buf_free(&a->anon_claims);
	buf_free(&a->enter_sql);
	buf_free(&a->settings_sql);
	memset(a, 0, sizeof(*a));
}

int
rest_auth_init(void)
{
	return rest_auth_load(&rest_auth_global);
}

void
rest_auth_fini(void)
{
	rest_auth_clear(&rest_auth_global);
}

const struct rest_auth *
rest_auth_config(void)
{
	return &rest_auth_global;
}

/* base64url without padding into the arena (NUL-terminated).  NULL when malformed. */
static char *
rest_b64url(struct arena *ar, const char *s, size_t len, size_t *outlen)
{
	size_t max = len / 4 * 3 + 3;
	char *out;
	long n;

	if ((out = arena_alloc(ar, max + 1)) == NULL ||
	    (n = str_b64url_dec(s, len, (unsigned char *)out, max)) < 0)
		return NULL;
	out[n] = '\0';
	*outlen = (size_t)n;
	return out;
}

/* Parses the decoded JSON of a part (NUL-terminated at len): NULL unless it is one
 * object, valid UTF-8, without NUL bytes and with nothing after it, so that PostgreSQL's
 * json type takes the claims as they are. */
static cJSON *
rest_jwt_object(const char *s, size_t len)
{
	cJSON *j;

	if (memchr(s, '\0', len) != NULL || !str_utf8_valid(s, len))
		return NULL;
	if ((j = cJSON_ParseWithLengthOpts(s, len + 1, NULL, 1)) == NULL)
		return NULL;
	if (!cJSON_IsObject(j)) {
		cJSON_Delete(j);
		return NULL;
	}
	return j;
}

/* 1 when alg is of the configured key's family. */
static int
rest_jwt_alg_ok(const struct rest_auth *a, const char *alg)
{
	static const char *const fam[][3] = {
		[REST_KEY_HMAC] = { "HS256", "HS384", "HS512" },
		[REST_KEY_RSA] = { "RS256", "RS384", "RS512" },
		[REST_KEY_EC] = { "ES256", "ES384", "ES512" },
	};
	int i;

	if (a->kind == REST_KEY_NONE)
		return 0;
	for (i = 0; i < 3; i++)
		if (strcmp(alg, fam[a->kind][i]) == 0)
			return 1;
	return 0;
}

/* A time claim: 0 when absent, 1 with *v set, -1 when not a number. */
static int
rest_jwt_time(const cJSON *claims, const char *name, double *v)
{
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(claims, name);

	if (c == NULL)
		return 0;
	if (!cJSON_IsNumber(c) || !isfinite(c->valuedouble))
		return -1;
	*v = c->valuedouble;
	return 1;
}

/* 1 when the "aud" claim (a string or an array of strings) holds aud. */
static int
rest_jwt_aud_ok(const cJSON *c, const char *aud)
{
	const cJSON *e;

	if (cJSON_IsString(c))
		return strcmp(c->valuestring, aud) == 0;
	if (cJSON_IsArray(c))
		cJSON_ArrayForEach(e, c)
			if (cJSON_IsString(e) && strcmp(e->valuestring, aud) == 0)
				return 1;
	return 0;
}

static int
rest_jwt_invalid(struct rest_err *e, const char *msg)
{
	rest_err_set(e, 401, "PGRST301", NULL, "%s", msg);
	return -1;
}

/* The claims' times (exp, nbf, iat, each SKEW seconds either way) at now and the
 * audience; 0, or -1 (e set). */
static int
rest_jwt_claims_ok(const struct rest_auth *a, const cJSON *c, time_t now, struct rest_err *e)
{
	const cJSON *v;
	double t;
	int r;

	if ((r = rest_jwt_time(c, "exp", &t)) < 0 || (r > 0 && (double)now > t + REST_JWT_SKEW))
		return rest_jwt_invalid(e, "JWT expired");
	if ((r = rest_jwt_time(c, "nbf", &t)) < 0 || (r > 0 && (double)now + REST_JWT_SKEW < t))
		return rest_jwt_invalid(e, "JWT not yet valid");
	if ((r = rest_jwt_time(c, "iat", &t)) < 0 || (r > 0 && (double)now + REST_JWT_SKEW < t))
		return rest_jwt_invalid(e, "JWT issued at future");
	if (a->aud != NULL && (v = cJSON_GetObjectItemCaseSensitive(c, "aud")) != NULL &&
	    !rest_jwt_aud_ok(v, a->aud))
		return rest_jwt_invalid(e, "JWT not in audience");
	return 0;
}

/* The request's role into id: the claim at the configured path when it is a string, else
 * the anonymous role (id->anon).  0, or -1 (e set) when neither is. */
static int
rest_jwt_role(const struct rest_auth *a, const cJSON *c, struct arena *ar,
    struct rest_identity *id, struct rest_err *e)
{
	const cJSON *v = c;
	size_t i;

	for (i = 0; v != NULL && i < (size_t)a->nrole_path; i++)
		v = cJSON_IsObject(v) ? cJSON_GetObjectItemCaseSensitive(v, a->role_path[i]) : NULL;
	id->role = NULL;
	if (v != NULL && cJSON_IsString(v) && *v->valuestring != '\0') {
		if (strlen(v->valuestring) >= REST_ROLE_MAX)
			return rest_jwt_invalid(e, "JWT role claim is too long");
		if ((id->role = arena_strndup(ar, v->valuestring, strlen(v->valuestring))) == NULL) {
			rest_err_set(e, 413, "too_large", NULL, "the request is too large");
			return -1;
		}
	}
	id->anon = id->role == NULL;
	if (id->role == NULL)
		id->role = a->anon;
	if (id->role == NULL) {
		rest_err_set(e, 401, "PGRST302", NULL, "Anonymous access is disabled");
		return -1;
	}
	return 0;
}

int
rest_jwt_verify(const struct rest_auth *a, const char *token, size_t len, time_t now,
    struct arena *ar, struct rest_identity *id, struct rest_err *e)
{
	const char *dot1, *dot2;
	char *hdr, *pay, *tok;
	size_t hlen, plen, i;
	cJSON *h = NULL, *c = NULL;
	const cJSON *alg;
	jwt_t *j = NULL;
	int parts = 1, rc = -1, r;

	if (len == 0)
		return rest_jwt_invalid(e, "Empty JWT is sent in Authorization header");
	if (a->kind == REST_KEY_NONE) {
		rest_err_set(e, 500, "PGRST300", NULL, "Server lacks JWT secret");
		return -1;
	}
	if (len > REST_JWT_MAX)
		return rest_jwt_invalid(e, "JWSError (CompactDecodeError the token is too long)");
	for (i = 0; i < len; i++)
		parts += token[i] == '.';
	if (parts != 3) {
		rest_err_set(e, 401, "PGRST301", NULL, "JWSError (CompactDecodeError Invalid number "
		    "of parts: Expected 3 parts; got %d)", parts);
		return -1;
	}
	dot1 = memchr(token, '.', len);
	dot2 = memchr(dot1 + 1, '.', len - (size_t)(dot1 + 1 - token));
	if ((hdr = rest_b64url(ar, token, (size_t)(dot1 - token), &hlen)) == NULL ||
	    (pay = rest_b64url(ar, dot1 + 1, (size_t)(dot2 - dot1 - 1), &plen)) == NULL ||
	    rest_b64url(ar, dot2 + 1, len - (size_t)(dot2 + 1 - token), &i) == NULL)
		return rest_jwt_invalid(e, "JWSError (CompactDecodeError Invalid base64url)");
	if ((h = rest_jwt_object(hdr, hlen)) == NULL) {
		rest_jwt_invalid(e, "JWSError (JSONDecodeError the header is not a JSON object)");
		goto out;
	}
	alg = cJSON_GetObjectItemCaseSensitive(h, "alg");
	if (!cJSON_IsString(alg) || !rest_jwt_alg_ok(a, alg->valuestring) ||
	    cJSON_GetObjectItemCaseSensitive(h, "crit") != NULL) {
		rest_jwt_invalid(e, "JWSError JWSInvalidSignature");
		goto out;
	}
	if ((c = rest_jwt_object(pay, plen)) == NULL) {
		rest_jwt_invalid(e, "JWSError (JSONDecodeError the claims are not a JSON object)");
		goto out;
	}
	/* The signature, by libjwt, on a NUL-terminated copy; the algorithm it read must be
	 * the one checked above. */
	if ((tok = arena_strndup(ar, token, len)) == NULL) {
		rest_err_set(e, 413, "too_large", NULL, "the request is too large");
		goto out;
	}
	r = jwt_decode(&j, tok, a->key, (int)a->keylen);
	if (r != 0 || j == NULL || jwt_get_alg(j) != jwt_str_alg(alg->valuestring)) {
		rest_jwt_invalid(e, "JWSError JWSInvalidSignature");
		goto out;
	}
	if (rest_jwt_claims_ok(a, c, now, e) < 0 || rest_jwt_role(a, c, ar, id, e) < 0)
		goto out;
	id->claims = pay;
	id->claimslen = plen;
	rc = 0;
out:
	if (j != NULL)
		jwt_free(j);
	cJSON_Delete(h);
	cJSON_Delete(c);
	return rc;
}

int
rest_auth_identify(struct req *rq, const struct rest_auth *a, struct rest_identity *id,
    struct rest_err *e)
{
	const char *h;
	size_t n;

	memset(id, 0, sizeof(*id));
	if (!a->on)
		return 0;
	id->active = 1;
	h = req_header(rq, "Authorization");
	if (h != NULL && strncasecmp(h, "Bearer", 6) == 0 && (h[6] == ' ' || h[6] == '\0')) {
		h += 6;
		while (*h == ' ')
			h++;
		n = strlen(h);
		while (n > 0 && h[n - 1] == ' ')
			n--;
		return rest_jwt_verify(a, h, n, time(NULL), rq->arena, id, e);
	}
	/* No token (or another scheme, which is not for this API): the anonymous role. */
	if (a->anon == NULL) {
		rest_err_set(e, 401, "PGRST302", NULL, "Anonymous access is disabled");
		return -1;
	}
	id->role = a->anon;
	id->anon = 1;
	id->claims = a->anon_claims.data;
	id->claimslen = a->anon_claims.len;
	return 0;
}

int
rest_auth_error(struct resp *rs, const struct rest_err *e)
{
	char h[320];

	if (strcmp(e->code, "PGRST301") == 0) {
		/* error_description as a quoted string, its quotes and backslashes escaped. */
		size_t i, n = 0;
		const char *m = e->message;

		n = (size_t)snprintf(h, sizeof(h), "Bearer error=\"invalid_token\", "
		    "error_description=\"");
		for (i = 0; m[i] != '\0' && n + 4 < sizeof(h); i++) {
			if (m[i] == '"' || m[i] == '\\')
				h[n++] = '\\';
			h[n++] = m[i];
		}
		h[n++] = '"';
		h[n] = '\0';
		resp_header(rs, "WWW-Authenticate", h);
	} else if (e->status == 401)
		resp_header(rs, "WWW-Authenticate", "Bearer");
	return rest_error(rs, e);
}

/* The privilege a request needs: by method, on a table or (rpc) a function. */
static unsigned
rest_auth_needed(const struct req *rq, int rpc)
{
	unsigned p;

	if (rpc)
		return REST_PRIV_EXECUTE;
	switch (rq->method) {
	case REQ_POST:
		p = REST_PRIV_INSERT;
		if (rest_prefer(rq, "resolution=merge-duplicates"))
			p |= REST_PRIV_UPDATE;
		break;
	case REQ_PATCH:
		p = REST_PRIV_UPDATE;
		break;
	case REQ_DELETE:
		p = REST_PRIV_DELETE;
		break;
	default:
		return REST_PRIV_SELECT;
	}
	/* The written rows read back need the right to read them, as in PostgreSQL. */
	if (rest_prefer(rq, "return=representation"))
		p |= REST_PRIV_SELECT;
	return p;
}

/* 42501 as PostgREST answers it: 401 for the anonymous role (asking for a token), 403
 * for a role named by one. */
static int
rest_auth_denied(struct resp *rs, const struct rest_identity *id, const char *what,
    const char *name, int rls)
{
	struct rest_err e;

	if (rls)
		rest_err_set(&e, id->anon ? 401 : 403, "42501", NULL,
		    "new row violates row-level security policy for table \"%.100s\"", name);
	else
		rest_err_set(&e, id->anon ? 401 : 403, "42501", NULL,
		    "permission denied for %s %.100s", what, name);
	return rest_auth_error(rs, &e);
}

/* A role the back end does not know: 400 22023, as PostgreSQL words it. */
static int
rest_auth_no_role(struct resp *rs, const char *role)
{
	struct rest_err e;

	rest_err_set(&e, 400, "22023", NULL, "role \"%.100s\" does not exist", role);
	return rest_error(rs, &e);
}

/*
 * SQLite: a function reads its tables with its caller's rights, as a PostgreSQL function
 * does by default (reads.c): the role must be allowed to read each, or the call is
 * refused as PostgreSQL refuses it, "permission denied for table artist".  A function
 * whose tables could not all be told, or that writes, is refused too.
 */
static int
rest_auth_func_reads(struct resp *rs, const struct rest_thread *t,
    const struct rest_identity *id, const char *name)
{
	const struct rest_func *f = rest_schema_func(t->sc, name);
	int i;

	if (f == NULL)
		return 0;	/* no such function: the verb answers 404 */
	/* A function that writes would write with no grant checked: refused under access
	 * control. */
	if (f->reads_unknown || f->writes)
		return rest_auth_denied(rs, id, "function", name, 0), -1;
	for (i = 0; i < f->nreads; i++)
		if (rest_auth_may(t->auth, id->role, f->reads[i], REST_PRIV_SELECT) != 1)
			return rest_auth_denied(rs, id, "table", f->reads[i], 0), -1;
	return 0;
}

#define REST_AUTH_HEADERS_MAX	(64 * 1024)

/*
 * The request's headers as PostgREST gives them to the database: one JSON object, the
 * names in lower case ("content-type", "x-client-info").  A value that is not UTF-8 is left
 * out (PostgreSQL would refuse the whole text); past REST_AUTH_HEADERS_MAX bytes the object
 * is "{}".  In the arena; NULL when it is full.
 */
static char *
rest_auth_headers(const struct req *rq, size_t *len)
{
	struct buf b;
	char **e, *out;
	const char *eq, *name;
	size_t n, i;
	int first = 1;

	buf_init(&b, REST_AUTH_HEADERS_MAX);
	buf_putc(&b, '{');
	for (e = rq->envp; e != NULL && *e != NULL; e++) {
		if (strncmp(*e, "HTTP_", 5) == 0)
			name = *e + 5;
		else if (strncmp(*e, "CONTENT_TYPE=", 13) == 0 ||
		    strncmp(*e, "CONTENT_LENGTH=", 15) == 0)
			name = *e;
		else
			continue;
		if ((eq = strchr(name, '=')) == NULL || eq == name ||
		    !str_utf8_valid(eq + 1, strlen(eq + 1)))
			continue;
		n = (size_t)(eq - name);
		if (!first)
			buf_putc(&b, ',');
		first = 0;
		buf_putc(&b, '"');
		for (i = 0; i < n; i++) {
			unsigned char c = (unsigned char)name[i];

			buf_putc(&b, c == '_' ? '-' : (char)tolower(c));
		}
		buf_puts(&b, "\":");
		json_escape(&b, eq + 1, strlen(eq + 1));
	}
	buf_putc(&b, '}');
	if (buf_failed(&b))
		out = arena_strndup(rq->arena, "{}", 2), *len = 2;
	else
		out = arena_strndup(rq->arena, b.data, b.len), *len = b.len;
	buf_free(&b);
	return out;
}

/*
 * The first statement of a PostgreSQL request failed: a role that does not exist is
 * 22023 (22P02 once classified: db_pg.c), one the connection's user may not become
 * 42501; anything else, what the pre-request function raised among it, is the
 * database's answer as any statement's.  The transaction is rolled back.
 */
static void
rest_auth_enter_failed(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id)
{
	const char *m = db_errmsg(rq->db);
	int role = id->active && db_raised(rq->db) == NULL && strstr(m, "role \"") != NULL;

	if (role && db_errcode(rq->db) == DB_EINPUT)
		rest_auth_no_role(rs, id->role);
	else if (strcmp(db_sqlstate(rq->db), "42501") == 0)
		rest_auth_denied(rs, id, role ? "role" : "function", role ? id->role :
		    t->auth->pre_request, 0);
	else
		rest_db_error(rs, t, rq->db);
	db_rollback(rq->db);
	t->in_txn = 0;
}

int
rest_auth_enter(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id, const char *name, int rpc)
{
	const struct rest_auth *a = t->auth;
	struct db_stmt *st;
	unsigned need = rest_auth_needed(rq, rpc);
	const char *hdrs, *cookies;
	size_t hlen, clen;
	int r, k;

	if (db_backend(rq->db) == DB_SQLITE) {
		/* No roles, nor settings, nor pre-request function on SQLite. */
		if (!id->active)
			return 0;
		/* No name (the OpenAPI document): the role only has to be known. */
		if ((r = rest_auth_may(a, id->role, name != NULL ? name : "",
		    name != NULL ? need : 0)) < 0)
			return rest_auth_no_role(rs, id->role), -1;
		if (r == 0)
			return rest_auth_denied(rs, id, rpc ? "function" : "table", name, 0), -1;
		if (rpc && rest_auth_func_reads(rs, t, id, name) < 0)
			return -1;
		/* The tables its embeds read are checked as names.c resolves them. */
		t->access.auth = a;
		t->access.role = id->role;
		t->access.anon = id->anon;
		return 0;
	}
	/* PostgreSQL: one transaction, the role and the request's settings first, then the
	 * pre-request function, all in one statement.  A GET (of a table or a function)
	 * only reads, as PostgREST runs it. */
	if ((hdrs = rest_auth_headers(rq, &hlen)) == NULL ||
	    (cookies = rest_cookies_json(rq->arena, req_header(rq, "Cookie"), &clen)) == NULL) {
		resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
		return -1;
	}
	if (rest_txn_begin(rq, t) < 0)
		return rest_db_error(rs, t, rq->db), -1;
	if ((st = db_prepare(rq->db, id->active ? a->enter_sql.data : a->settings_sql.data)) ==
	    NULL)
		goto fail;
	k = id->active ? 1 : 0;
	if (id->active)
		db_bind_text(st, 1, id->role, strlen(id->role));
	db_bind_text(st, k + 1, id->active ? id->claims : "{}", id->active ? id->claimslen : 2);
	db_bind_text(st, k + 2, rq->method_name, strlen(rq->method_name));
	db_bind_text(st, k + 3, rq->path, strlen(rq->path));
	db_bind_text(st, k + 4, hdrs, hlen);
	db_bind_text(st, k + 5, cookies, clen);
	if ((r = db_step(st)) == DB_ROW && a->pre_request != NULL)
		rest_resp_capture(rq->arena, t, st, k + 6);
	db_reset(st);
	if (r != DB_ROW)
		goto fail;
	return 0;
fail:
	rest_auth_enter_failed(rq, rs, t, id);
	return -1;
}

void
rest_auth_leave(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id, const char *name, int rpc)
{
	if (!t->in_txn || rs->status < 500 || strcmp(db_sqlstate(rq->db), "42501") != 0)
		return;
	t->in_txn = 0;
	rest_auth_denied(rs, id, rpc ? "function" : "table", name,
	    strstr(db_errmsg(rq->db), "row-level security") != NULL);
	db_rollback(rq->db);
}
