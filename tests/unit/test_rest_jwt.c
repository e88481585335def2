/*
 * test_rest_jwt: the rest endpoint's token verifier and access control settings
 * (apps/rest/auth.c, grants.c), table-driven: tokens good and hostile (malformed, huge, bad
 * base64url, claims that are no JSON object, deep nesting, alg "none", an HS256 token
 * against an RSA key, expired, not yet valid, wrong audience) in, the role or the 401's
 * code and message out; RS256 and ES256 against PEM public keys made by the openssl
 * command; the settings that must stop a worker at start-up (a rest_pre_request that is
 * no function's name among them); and the Cookie header as request.cookies' JSON
 * (cookies.c), well-formed and hostile.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "jwtmake.h"
#include "rest/rest.h"
#include "../lib/harness.h"

#define SECRET	"0123456789abcdef0123456789abcdef-test"
#define HS256	"{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

static struct arena *ar;
static char tok[65536];

/* Loads the access control from the given settings (NULL: unset). */
static int
load(struct rest_auth *a, const char *secret, const char *anon, const char *aud,
    const char *claim, const char *grants)
{
	const struct { const char *name, *v; } env[] = {
		{ "SLUICE_REST_JWT_SECRET", secret }, { "SLUICE_REST_ANON_ROLE", anon },
		{ "SLUICE_REST_JWT_AUD", aud }, { "SLUICE_REST_JWT_ROLE_CLAIM", claim },
		{ "SLUICE_REST_GRANTS", grants },
	};
	size_t i;

	unsetenv("SLUICE_REST_JWT_SECRET_FILE");
	for (i = 0; i < sizeof(env) / sizeof(env[0]); i++) {
		if (env[i].v != NULL)
			setenv(env[i].name, env[i].v, 1);
		else
			unsetenv(env[i].name);
	}
	return rest_auth_load(a);
}

/* Verifies t; returns 0 with *role set, or the status with e's code and message. */
static int
verify(const struct rest_auth *a, const char *t, struct rest_identity *id, struct rest_err *e)
{
	arena_reset(ar);
	memset(id, 0, sizeof(*id));
	if (rest_jwt_verify(a, t, strlen(t), time(NULL), ar, id, e) == 0)
		return 0;
	return e->status;
}

static void
test_rest_jwt_valid_tokens(void)
{
	struct rest_auth a;
	struct rest_identity id;
	struct rest_err e;
	char claims[256];
	long now = (long)time(NULL);

	CHECK_INT(load(&a, SECRET, "anon", NULL, NULL, NULL), 0);
	CHECK_INT(a.on, 1);
	/* The claims a request without a token runs with, made once at start-up. */
	CHECK_STR(a.anon_claims.data, "{\"role\":\"anon\"}");
	CHECK_INT((int)a.anon_claims.len, (int)strlen("{\"role\":\"anon\"}"));
	snprintf(claims, sizeof(claims), "{\"role\":\"web_user\",\"exp\":%ld}", now + 60);
	CHECK_INT(jwtmake_hs(HS256, claims, SECRET, 256, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 0);
	CHECK_STR(id.role, "web_user");
	CHECK_INT(id.anon, 0);
	CHECK(id.claims != NULL && id.claimslen == strlen(claims) &&
	    memcmp(id.claims, claims, id.claimslen) == 0);
	/* HS384 and HS512 with the same secret. */
	CHECK_INT(jwtmake_hs("{\"alg\":\"HS384\"}", claims, SECRET, 384, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 0);
	CHECK_INT(jwtmake_hs("{\"alg\":\"HS512\"}", claims, SECRET, 512, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 0);
	/* Expired 10 s ago: within the clock skew allowance. */
	snprintf(claims, sizeof(claims), "{\"role\":\"web_user\",\"exp\":%ld}", now - 10);
	CHECK_INT(jwtmake_hs(HS256, claims, SECRET, 256, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 0);
	/* No role claim: the anonymous role. */
	CHECK_INT(jwtmake_hs(HS256, "{\"sub\":\"x\"}", SECRET, 256, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 0);
	CHECK_STR(id.role, "anon");
	CHECK_INT(id.anon, 1);
	/* A role that is no string is no role. */
	CHECK_INT(jwtmake_hs(HS256, "{\"role\":{\"a\":1}}", SECRET, 256, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 0);
	CHECK_STR(id.role, "anon");
	rest_auth_clear(&a);
}

static void
test_rest_jwt_refused_tokens(void)
{
	static const struct {
		const char *header, *payload, *key;
		int bits;
		const char *message;
	} cases[] = {
		{ HS256, "{\"role\":\"u\",\"exp\":1}", SECRET, 256, "JWT expired" },
		{ HS256, "{\"role\":\"u\",\"exp\":\"tomorrow\"}", SECRET, 256, "JWT expired" },
		{ HS256, "{\"role\":\"u\",\"nbf\":99999999999}", SECRET, 256, "JWT not yet valid" },
		{ HS256, "{\"role\":\"u\",\"iat\":99999999999}", SECRET, 256,
		  "JWT issued at future" },
		{ HS256, "{\"role\":\"u\"}", SECRET "x", 256, "JWSError JWSInvalidSignature" },
		{ "{\"alg\":\"none\"}", "{\"role\":\"u\"}", SECRET, 0,
		  "JWSError JWSInvalidSignature" },
		{ "{\"alg\":\"none\"}", "{\"role\":\"u\"}", SECRET, 256,
		  "JWSError JWSInvalidSignature" },
		{ "{\"alg\":\"RS256\"}", "{\"role\":\"u\"}", SECRET, 256,
		  "JWSError JWSInvalidSignature" },
		{ "{\"alg\":\"HS256\",\"crit\":[\"exp\"]}", "{\"role\":\"u\"}", SECRET, 256,
		  "JWSError JWSInvalidSignature" },
		{ "{\"alg\":256}", "{\"role\":\"u\"}", SECRET, 256, "JWSError JWSInvalidSignature" },
		{ "[\"HS256\"]", "{\"role\":\"u\"}", SECRET, 256,
		  "JWSError (JSONDecodeError the header is not a JSON object)" },
		{ "not json", "{\"role\":\"u\"}", SECRET, 256,
		  "JWSError (JSONDecodeError the header is not a JSON object)" },
		{ HS256, "[1,2]", SECRET, 256,
		  "JWSError (JSONDecodeError the claims are not a JSON object)" },
		{ HS256, "{\"role\":\"u\"", SECRET, 256,
		  "JWSError (JSONDecodeError the claims are not a JSON object)" },
		{ HS256, "{\"role\":\"u\"} {}", SECRET, 256,
		  "JWSError (JSONDecodeError the claims are not a JSON object)" },
		{ HS256 "x", "{\"role\":\"u\"}", SECRET, 256,
		  "JWSError (JSONDecodeError the header is not a JSON object)" },
		{ HS256, "\"role\"", SECRET, 256,
		  "JWSError (JSONDecodeError the claims are not a JSON object)" },
		{ HS256, "{\"role\":\"\xff\xfe\"}", SECRET, 256,
		  "JWSError (JSONDecodeError the claims are not a JSON object)" },
	};
	struct rest_auth a;
	struct rest_identity id;
	struct rest_err e;
	size_t i;

	CHECK_INT(load(&a, SECRET, NULL, NULL, NULL, NULL), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(jwtmake_hs(cases[i].header, cases[i].payload, cases[i].key,
		    cases[i].bits, tok, sizeof(tok)), 0);
		if (verify(&a, tok, &id, &e) != 401 || strcmp(e.code, "PGRST301") != 0 ||
		    strcmp(e.message, cases[i].message) != 0)
			harness_fail(__FILE__, __LINE__, "case %zu (%s %s): %d %s %s", i,
			    cases[i].header, cases[i].payload, e.status, e.code, e.message);
	}
	/* A valid token without a role, and no anonymous role: 401 PGRST302. */
	CHECK_INT(jwtmake_hs(HS256, "{\"sub\":\"x\"}", SECRET, 256, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 401);
	CHECK_STR(e.code, "PGRST302");
	CHECK_STR(e.message, "Anonymous access is disabled");
	rest_auth_clear(&a);
}

static void
test_rest_jwt_malformed_tokens(void)
{
	static const struct {
		const char *token, *message;
	} cases[] = {
		{ "", "Empty JWT is sent in Authorization header" },
		{ "abc", "JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; "
		  "got 1)" },
		{ "a.b", "JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; "
		  "got 2)" },
		{ "a.b.c.d", "JWSError (CompactDecodeError Invalid number of parts: Expected 3 "
		  "parts; got 4)" },
		{ "....", "JWSError (CompactDecodeError Invalid number of parts: Expected 3 parts; "
		  "got 5)" },
		{ "@@@@.e30.x", "JWSError (CompactDecodeError Invalid base64url)" },
		{ "e30=.e30.x", "JWSError (CompactDecodeError Invalid base64url)" },
		{ "e30.e30.a", "JWSError (CompactDecodeError Invalid base64url)" },
		{ "e31.e30.", "JWSError (CompactDecodeError Invalid base64url)" },
		{ "e30.e30.", "JWSError JWSInvalidSignature" },
		{ "..", "JWSError (JSONDecodeError the header is not a JSON object)" },
		/* {"alg":"HS256"} with a NUL byte inside the header's JSON. */
		{ "eyJhbGciOiJIUzI1NiIAfQ.e30.", "JWSError (JSONDecodeError the header is not a "
		  "JSON object)" },
	};
	struct rest_auth a;
	struct rest_identity id;
	struct rest_err e;
	size_t i;
	char *deep, *big;
	int n;

	CHECK_INT(load(&a, SECRET, "anon", NULL, NULL, NULL), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (verify(&a, cases[i].token, &id, &e) != 401 ||
		    strcmp(e.message, cases[i].message) != 0)
			harness_fail(__FILE__, __LINE__, "case %zu (%s): %d %s", i,
			    cases[i].token, e.status, e.message);
	/* Over REST_JWT_MAX bytes: refused before anything is decoded. */
	big = malloc(REST_JWT_MAX + 100);
	CHECK(big != NULL);
	if (big != NULL) {
		memset(big, 'A', REST_JWT_MAX + 99);
		big[10] = '.';
		big[20] = '.';
		big[REST_JWT_MAX + 99] = '\0';
		CHECK_INT(verify(&a, big, &id, &e), 401);
		CHECK_STR(e.message, "JWSError (CompactDecodeError the token is too long)");
		free(big);
	}
	/* Claims nested 3000 deep, signed: past cJSON's nesting limit, refused, no crash. */
	deep = malloc(3000 * 2 + 32);
	CHECK(deep != NULL);
	if (deep != NULL) {
		n = sprintf(deep, "{\"a\":");
		for (i = 0; i < 3000; i++)
			deep[n++] = '[';
		for (i = 0; i < 3000; i++)
			deep[n++] = ']';
		deep[n++] = '}';
		deep[n] = '\0';
		CHECK_INT(jwtmake_hs(HS256, deep, SECRET, 256, tok, sizeof(tok)), 0);
		CHECK_INT(verify(&a, tok, &id, &e), 401);
		CHECK_STR(e.code, "PGRST301");
		free(deep);
	}
	rest_auth_clear(&a);
}

/* An HS256 token signed with the text of the RSA public key must not pass as RS256: the
 * classic algorithm confusion. */
static void
test_rest_jwt_hs_rs_confusion(void)
{
	static const char pem[] = "-----BEGIN PUBLIC KEY-----\nMIIBIjANBg\n"
	    "-----END PUBLIC KEY-----\n";
	struct rest_auth a;
	struct rest_identity id;
	struct rest_err e;

	CHECK_INT(load(&a, NULL, "anon", NULL, NULL, NULL), 0);
	CHECK_INT(a.kind, REST_KEY_NONE);
	/* No key at all: a token is 500 PGRST300, as PostgREST's "Server lacks JWT secret". */
	CHECK_INT(jwtmake_hs(HS256, "{\"role\":\"u\"}", SECRET, 256, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 500);
	CHECK_STR(e.code, "PGRST300");
	CHECK_STR(e.message, "Server lacks JWT secret");
	/* The key as if read from a PEM file. */
	a.kind = REST_KEY_RSA;
	a.key = (unsigned char *)strdup(pem);
	a.keylen = strlen(pem);
	CHECK_INT(jwtmake_hs(HS256, "{\"role\":\"u\"}", pem, 256, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 401);
	CHECK_STR(e.message, "JWSError JWSInvalidSignature");
	rest_auth_clear(&a);
}

static void
test_rest_jwt_audience_and_role_path(void)
{
	static const struct {
		const char *payload;
		int status;
		const char *role;
	} cases[] = {
		{ "{\"aud\":\"api\",\"app\":{\"role\":\"r1\"}}", 0, "r1" },
		{ "{\"aud\":[\"x\",\"api\"],\"app\":{\"role\":\"r1\"}}", 0, "r1" },
		{ "{\"app\":{\"role\":\"r1\"}}", 0, "r1" },
		{ "{\"aud\":\"other\",\"app\":{\"role\":\"r1\"}}", 401, NULL },
		{ "{\"aud\":[],\"app\":{\"role\":\"r1\"}}", 401, NULL },
		{ "{\"aud\":5,\"app\":{\"role\":\"r1\"}}", 401, NULL },
		{ "{\"role\":\"top\"}", 0, "anon" },
		{ "{\"app\":[\"role\"]}", 0, "anon" },
		{ "{\"app\":{\"role\":\"\"}}", 0, "anon" },
	};
	struct rest_auth a;
	struct rest_identity id;
	struct rest_err e;
	size_t i;
	int st;

	CHECK_INT(load(&a, SECRET, "anon", "api", ".app.role", NULL), 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(jwtmake_hs(HS256, cases[i].payload, SECRET, 256, tok, sizeof(tok)), 0);
		st = verify(&a, tok, &id, &e);
		if (st != cases[i].status)
			harness_fail(__FILE__, __LINE__, "case %zu (%s): %d, want %d", i,
			    cases[i].payload, st, cases[i].status);
		else if (st == 0)
			CHECK_STR(id.role, cases[i].role);
		else
			CHECK_STR(e.message, "JWT not in audience");
	}
	rest_auth_clear(&a);
	/* A quoted key holding dots. */
	CHECK_INT(load(&a, SECRET, NULL, NULL, ".\"https://x.example/role\"", NULL), 0);
	CHECK_INT(a.nrole_path, 1);
	CHECK_STR(a.role_path[0], "https://x.example/role");
	CHECK_INT(jwtmake_hs(HS256, "{\"https://x.example/role\":\"q\"}", SECRET, 256, tok,
	    sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 0);
	CHECK_STR(id.role, "q");
	rest_auth_clear(&a);
}

/* PEM public keys from files: RSA takes RS256, EC (P-256) ES256, each only its own
 * family; the private keys are made by the openssl command. */
static void
test_rest_jwt_public_keys(void)
{
	static const char *const kinds[][3] = {
		/* key, its algorithm, another family's */
		{ "rsa", "RS256", "ES256" },
		{ "ec", "ES256", "RS256" },
	};
	struct rest_auth a;
	struct rest_identity id;
	struct rest_err e;
	char dir[64], cmd[1024], priv[128], pub[128], pem[4096];
	FILE *f;
	size_t i, n;

	snprintf(dir, sizeof(dir), "/tmp/test_rest_jwt.%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "mkdir -p %s && "
	    "openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out %s/rsa.key 2>/dev/null && "
	    "openssl pkey -in %s/rsa.key -pubout -out %s/rsa.pub && "
	    "openssl genpkey -algorithm EC -pkeyopt ec_paramgen_curve:P-256 -out %s/ec.key 2>/dev/null && "
	    "openssl pkey -in %s/ec.key -pubout -out %s/ec.pub", dir, dir, dir, dir, dir, dir,
	    dir);
	if (system(cmd) != 0)
		SKIP("the openssl command could not make keys");
	/* Only the key file: what earlier tests set is cleared. */
	unsetenv("SLUICE_REST_ANON_ROLE");
	unsetenv("SLUICE_REST_JWT_AUD");
	unsetenv("SLUICE_REST_JWT_ROLE_CLAIM");
	unsetenv("SLUICE_REST_GRANTS");
	for (i = 0; i < 2; i++) {
		snprintf(priv, sizeof(priv), "%s/%s.key", dir, kinds[i][0]);
		snprintf(pub, sizeof(pub), "%s/%s.pub", dir, kinds[i][0]);
		unsetenv("SLUICE_REST_JWT_SECRET");
		setenv("SLUICE_REST_JWT_SECRET_FILE", pub, 1);
		CHECK_INT(rest_auth_load(&a), 0);
		CHECK_INT(a.kind, i == 0 ? REST_KEY_RSA : REST_KEY_EC);
		CHECK_INT(jwtmake_key(kinds[i][1], "{\"role\":\"k\"}", priv, tok, sizeof(tok)), 0);
		CHECK_INT(verify(&a, tok, &id, &e), 0);
		CHECK_STR(id.role, "k");
		/* A flipped byte of the signature. */
		n = strlen(tok);
		tok[n - 2] = tok[n - 2] == 'A' ? 'B' : 'A';
		CHECK_INT(verify(&a, tok, &id, &e), 401);
		CHECK_STR(e.message, "JWSError JWSInvalidSignature");
		/* Signed with the other family's key, and HS256 with the public key's text. */
		snprintf(priv, sizeof(priv), "%s/%s.key", dir, kinds[1 - i][0]);
		CHECK_INT(jwtmake_key(kinds[i][2], "{\"role\":\"k\"}", priv, tok, sizeof(tok)), 0);
		CHECK_INT(verify(&a, tok, &id, &e), 401);
		f = fopen(pub, "r");
		CHECK(f != NULL);
		if (f != NULL) {
			n = fread(pem, 1, sizeof(pem) - 1, f);
			pem[n] = '\0';
			fclose(f);
			CHECK_INT(jwtmake_hs(HS256, "{\"role\":\"k\"}", pem, 256, tok, sizeof(tok)), 0);
			CHECK_INT(verify(&a, tok, &id, &e), 401);
		}
		rest_auth_clear(&a);
	}
	/* A PEM file that holds no public key. */
	snprintf(pub, sizeof(pub), "%s/bad.pub", dir);
	if ((f = fopen(pub, "w")) != NULL) {
		fputs("-----BEGIN PUBLIC KEY-----\nnot base64\n-----END PUBLIC KEY-----\n", f);
		fclose(f);
	}
	setenv("SLUICE_REST_JWT_SECRET_FILE", pub, 1);
	CHECK_INT(rest_auth_load(&a), -1);
	/* A secret file: its bytes without the final line end, at least 32 of them. */
	if ((f = fopen(pub, "w")) != NULL) {
		fputs(SECRET "\r\n", f);
		fclose(f);
	}
	CHECK_INT(rest_auth_load(&a), 0);
	CHECK_INT(a.kind, REST_KEY_HMAC);
	CHECK_INT(a.keylen, strlen(SECRET));
	CHECK_INT(jwtmake_hs(HS256, "{\"role\":\"s\"}", SECRET, 256, tok, sizeof(tok)), 0);
	CHECK_INT(verify(&a, tok, &id, &e), 0);
	rest_auth_clear(&a);
	if ((f = fopen(pub, "w")) != NULL) {
		fputs("short\n", f);
		fclose(f);
	}
	CHECK_INT(rest_auth_load(&a), -1);
	unsetenv("SLUICE_REST_JWT_SECRET_FILE");
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	CHECK_INT(system(cmd), 0);
}

/* What stops a worker at start-up, and what turns access control on. */
static void
test_rest_auth_settings(void)
{
	struct rest_auth a;

	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, NULL), 0);
	CHECK_INT(a.on, 0);
	rest_auth_clear(&a);
	/* Shorter than 32 bytes: refused, as PostgREST refuses it. */
	CHECK_INT(load(&a, "0123456789abcdef0123456789abcde", NULL, NULL, NULL, NULL), -1);
	CHECK_INT(load(&a, "0123456789abcdef0123456789abcdef", NULL, NULL, NULL, NULL), 0);
	CHECK_INT(a.on, 1);
	CHECK_INT(a.kind, REST_KEY_HMAC);
	rest_auth_clear(&a);
	/* A secret and a secret file: which one? */
	setenv("SLUICE_REST_JWT_SECRET", SECRET, 1);
	setenv("SLUICE_REST_JWT_SECRET_FILE", "/nonexistent", 1);
	CHECK_INT(rest_auth_load(&a), -1);
	unsetenv("SLUICE_REST_JWT_SECRET");
	CHECK_INT(rest_auth_load(&a), -1);	/* the file does not exist */
	unsetenv("SLUICE_REST_JWT_SECRET_FILE");
	/* Role claim paths. */
	CHECK_INT(load(&a, SECRET, NULL, NULL, "role", NULL), -1);
	CHECK_INT(load(&a, SECRET, NULL, NULL, ".", NULL), -1);
	CHECK_INT(load(&a, SECRET, NULL, NULL, ".a..b", NULL), -1);
	CHECK_INT(load(&a, SECRET, NULL, NULL, ".\"a", NULL), -1);
	CHECK_INT(load(&a, SECRET, NULL, NULL, ".a.b.c.d.e.f.g.h.i", NULL), -1);
	CHECK_INT(load(&a, SECRET, NULL, NULL, ".a.b", NULL), 0);
	CHECK_INT(a.nrole_path, 2);
	CHECK_STR(a.role_path[0], "a");
	CHECK_STR(a.role_path[1], "b");
	rest_auth_clear(&a);
	/* Grants. */
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, "anon:select|web:select,insert,delete|"
	    "admin:all"), 0);
	CHECK_INT(a.on, 1);
	CHECK_INT(a.ngrants, 3);
	CHECK_STR(a.grants[0].role, "anon");
	CHECK_INT(a.grants[0].privs, REST_PRIV_SELECT);
	CHECK_INT(a.grants[1].privs, REST_PRIV_SELECT | REST_PRIV_INSERT | REST_PRIV_DELETE);
	CHECK_INT(a.grants[2].privs, REST_PRIV_ALL);
	rest_auth_clear(&a);
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, "anon:drop"), -1);
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, "anon"), -1);
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, ":select"), -1);
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, "anon:"), -1);
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, "anon:select,"), -1);
	CHECK_INT(load(&a, NULL, "anon", NULL, NULL, NULL), 0);
	CHECK_INT(a.on, 1);
	CHECK_STR(a.anon, "anon");
	rest_auth_clear(&a);
}

/* rest_grants per table: ROLE:PRIV[,PRIV...][@NAME[,NAME...]], entries of one role adding
 * up; the old form (no '@') covers every table and function. */
static void
test_rest_grants_per_table(void)
{
	struct rest_auth a;

	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, "anon:select@artist,album|anon:execute|"
	    "web_user:all|clerk:select|clerk:insert,update@invoice"), 0);
	CHECK_INT(a.ngrants, 5);
	CHECK_STR(a.grants[0].on, "artist,album");
	CHECK(a.grants[1].on == NULL);
	/* Allowed and refused per table, per verb. */
	CHECK_INT(rest_auth_may(&a, "anon", "artist", REST_PRIV_SELECT), 1);
	CHECK_INT(rest_auth_may(&a, "anon", "album", REST_PRIV_SELECT), 1);
	CHECK_INT(rest_auth_may(&a, "anon", "track", REST_PRIV_SELECT), 0);
	CHECK_INT(rest_auth_may(&a, "anon", "art", REST_PRIV_SELECT), 0);	/* no prefix */
	CHECK_INT(rest_auth_may(&a, "anon", "artist,album", REST_PRIV_SELECT), 0);
	CHECK_INT(rest_auth_may(&a, "anon", "artist", REST_PRIV_INSERT), 0);
	CHECK_INT(rest_auth_may(&a, "anon", "add_them", REST_PRIV_EXECUTE), 1);
	CHECK_INT(rest_auth_may(&a, "clerk", "invoice",
	    REST_PRIV_SELECT | REST_PRIV_INSERT | REST_PRIV_UPDATE), 1);
	CHECK_INT(rest_auth_may(&a, "clerk", "invoice", REST_PRIV_DELETE), 0);
	CHECK_INT(rest_auth_may(&a, "clerk", "artist", REST_PRIV_INSERT), 0);
	CHECK_INT(rest_auth_may(&a, "clerk", "artist", REST_PRIV_SELECT), 1);
	CHECK_INT(rest_auth_may(&a, "web_user", "anything", REST_PRIV_ALL), 1);
	CHECK_INT(rest_auth_may(&a, "nobody", "artist", REST_PRIV_SELECT), -1);
	rest_auth_clear(&a);
}

/* Hostile rest_grants values: each refused at start-up with the entry and the reason. */
static void
test_rest_grants_hostile(void)
{
	static const struct {
		const char *v, *why;
	} bad[] = {
		{ "anon:select@", "entry 1 (\"anon:select@\"): an empty table" },
		{ "anon:select@artist,", "an empty table" },
		{ "anon:select@,artist", "an empty table" },
		{ "anon:select@a@b", "more than one '@'" },
		{ "anon:@artist", "'' is no privilege" },
		{ "anon:select,@artist", "'' is no privilege" },
		{ "anon:sel ect", "a blank or control character at byte 9" },
		{ "anon:select\tx", "control character" },
		{ "anon:select||web:all", "entry 2 (\"\"): an empty entry" },
		{ "anon:select|", "entry 2" },
		{ "|anon:select", "entry 1" },
		{ "anon:select|web:drop@t", "entry 2 (\"web:drop@t\"): 'drop' is no privilege" },
		{ "@t:select", "'@' in the role name" },
		{ "anon@t", "no ROLE:" },
		{ "anon:select@tttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttttt",
		    "longer than 63 bytes" },
		{ "rrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrrr:select",
		    "a role name longer than 63 bytes" },
	};
	struct rest_auth a;
	char err[320], many[32 * 12 + 1];
	size_t i, n = 0;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		memset(&a, 0, sizeof(a));
		err[0] = '\0';
		CHECK_INT(rest_auth_grants_parse(&a, bad[i].v, err, sizeof(err)), -1);
		if (strstr(err, bad[i].why) == NULL)
			fprintf(stderr, "rest_grants=%s: \"%s\" lacks \"%s\"\n", bad[i].v, err,
			    bad[i].why);
		CHECK(strstr(err, bad[i].why) != NULL);
		rest_auth_clear(&a);
		/* And the worker's start-up refuses it. */
		CHECK_INT(load(&a, NULL, NULL, NULL, NULL, bad[i].v), -1);
	}
	/* 33 entries: one too many. */
	for (i = 0; i < 33; i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "%sr%zu:all", i ? "|" : "", i);
	memset(&a, 0, sizeof(a));
	CHECK_INT(rest_auth_grants_parse(&a, many, err, sizeof(err)), -1);
	CHECK(strstr(err, "more than 32 entries") != NULL);
	rest_auth_clear(&a);
}


/* rest_pre_request: the statements carry the quoted function; a bad name stops the
 * worker; without it the statements set the settings only. */
static void
test_rest_auth_pre_request(void)
{
	struct rest_auth a;

	unsetenv("SLUICE_REST_PRE_REQUEST");
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, NULL), 0);
	CHECK(a.pre_request == NULL);
	CHECK_STR(a.settings_sql.data, "select set_config('request.jwt.claims', $1, true), "
	    "set_config('request.method', $2, true), set_config('request.path', $3, true), "
	    "set_config('request.headers', $4, true), set_config('request.cookies', $5, true)");
	CHECK(strncmp(a.enter_sql.data, "select set_config('role', $1, true), "
	    "set_config('request.jwt.claims', $2, true)", 77) == 0);
	rest_auth_clear(&a);
	setenv("SLUICE_REST_PRE_REQUEST", "api.check_request", 1);
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, NULL), 0);
	CHECK_STR(a.pre_request, "api.check_request");
	CHECK(strstr(a.settings_sql.data, "$5, true), \"api\".\"check_request\"()") != NULL);
	CHECK(strstr(a.enter_sql.data, "$6, true), \"api\".\"check_request\"()") != NULL);
	rest_auth_clear(&a);
	setenv("SLUICE_REST_PRE_REQUEST", "check_Request2", 1);
	CHECK_INT(load(&a, NULL, NULL, NULL, NULL, NULL), 0);
	CHECK(strstr(a.settings_sql.data, ", \"check_Request2\"()") != NULL);
	rest_auth_clear(&a);
	{
		static const char *const bad[] = { "a.b.c", ".fn", "fn.", "x(); drop table t",
			"f\"n", "1fn", "s.f n", "fn()", "s..f",
			"f0123456789012345678901234567890123456789012345678901234567890123" };
		size_t i;

		for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
			setenv("SLUICE_REST_PRE_REQUEST", bad[i], 1);
			CHECK_INT(load(&a, NULL, NULL, NULL, NULL, NULL), -1);
		}
	}
	unsetenv("SLUICE_REST_PRE_REQUEST");
}

/* The Cookie header as request.cookies: "{}" when cookies is NULL. */
static const char *
cookies(const char *h)
{
	size_t len;
	const char *j;

	arena_reset(ar);
	j = rest_cookies_json(ar, h, &len);
	return j != NULL && strlen(j) == len ? j : "(bad)";
}

static void
test_rest_cookies(void)
{
	static char big[200000];
	size_t i;

	CHECK_STR(cookies(NULL), "{}");
	CHECK_STR(cookies(""), "{}");
	CHECK_STR(cookies("a=1"), "{\"a\":\"1\"}");
	CHECK_STR(cookies("a=1; b=two words ;c = x=y"),
	    "{\"a\":\"1\",\"b\":\"two words\",\"c\":\"x=y\"}");
	CHECK_STR(cookies("s=\"quoted\"; e="), "{\"s\":\"\\\"quoted\\\"\",\"e\":\"\"}");
	/* Hostile: no '=', empty names, repeats, separators only, escapes, not UTF-8,
	 * control characters. */
	CHECK_STR(cookies("novalue; =x; ;;; a=1; a=2"), "{\"a\":\"1\"}");
	CHECK_STR(cookies(";;;;"), "{}");
	CHECK_STR(cookies("k=back\\slash\"q"), "{\"k\":\"back\\\\slash\\\"q\"}");
	CHECK_STR(cookies("bad=\xff\xfe; ok=1; \xc3=2"), "{\"ok\":\"1\"}");
	CHECK_STR(cookies("c=a\x01b; d=\x7f; n\x1b=1; ok=\xc3\xa9"), "{\"ok\":\"\xc3\xa9\"}");
	/* Past REST_COOKIES_MAX pairs the rest is left out; past the bytes, {}. */
	big[0] = '\0';
	for (i = 0; i < 300; i++)
		snprintf(big + strlen(big), sizeof(big) - strlen(big), "c%zu=v; ", i);
	CHECK(strstr(cookies(big), "\"c127\":\"v\"") != NULL);
	CHECK(strstr(cookies(big), "\"c128\"") == NULL);
	memset(big, 'x', sizeof(big) - 1);
	big[0] = 'a';
	big[1] = '=';
	big[sizeof(big) - 1] = '\0';
	CHECK_STR(cookies(big), "{}");
}

int
main(void)
{
	ar = arena_new(1 << 20);
	RUN(test_rest_jwt_valid_tokens);
	RUN(test_rest_jwt_refused_tokens);
	RUN(test_rest_jwt_malformed_tokens);
	RUN(test_rest_jwt_hs_rs_confusion);
	RUN(test_rest_jwt_audience_and_role_path);
	RUN(test_rest_jwt_public_keys);
	RUN(test_rest_auth_settings);
	RUN(test_rest_grants_per_table);
	RUN(test_rest_grants_hostile);
	RUN(test_rest_auth_pre_request);
	RUN(test_rest_cookies);
	arena_free(ar);
	return harness_done();
}
