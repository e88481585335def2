/*
 * fuzz_jwt: the rest endpoint's token verifier (rest_jwt_verify() in apps/rest/auth.c)
 * on hostile tokens.
 *
 * The first byte picks the mode.  Even: the rest of the input is the token as sent.  Odd:
 * the rest is "HEADER\nPAYLOAD" (JSON texts of the fuzzer's choice), made into a token
 * signed with HMAC-SHA256 under the fuzzing secret here, so that the fuzzer gets past the
 * signature to the claims (exp, nbf, iat, aud, the role path).
 *
 * Invariants: the verifier answers 0 or -1 and never crashes; a refusal is 401 PGRST301
 * or PGRST302 (or 413 when the arena is full); an accepted token's signature is the HMAC
 * (SHA-256, -384 or -512) of its first two parts under the secret, recomputed here with
 * OpenSSL independently of libjwt, and its role and claims are set, the claims a JSON
 * object.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "arena.h"
#include "jwtmake.h"
#include "rest/rest.h"

#define FUZZ_SECRET	"fuzz-secret-0123456789abcdef0123456789abcdef"
#define FUZZ_TOKEN_MAX	(REST_JWT_MAX + 64)

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct rest_auth auth;
static struct arena *ar;

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	unsetenv("SLUICE_REST_JWT_SECRET_FILE");
	unsetenv("SLUICE_REST_GRANTS");
	setenv("SLUICE_REST_JWT_SECRET", FUZZ_SECRET, 1);
	setenv("SLUICE_REST_ANON_ROLE", "anon", 1);
	setenv("SLUICE_REST_JWT_AUD", "api", 1);
	setenv("SLUICE_REST_JWT_ROLE_CLAIM", ".app.\"x.role\"", 1);
	if (rest_auth_load(&auth) < 0)
		abort();
	if ((ar = arena_new(1 << 20)) == NULL)
		abort();
	return 0;
}

/* base64url without padding of p[0..len) appended at out + *n (jwtmake_b64url()). */
static int
b64url(const unsigned char *p, size_t len, char *out, size_t *n, size_t cap)
{
	if (*n >= cap || jwtmake_b64url(p, len, out + *n, cap - *n) < 0)
		return -1;
	*n += strlen(out + *n);
	return 0;
}

/* 1 when the token's third part is the HMAC of the first two under one of the SHAs. */
static int
signed_here(const char *t, size_t len)
{
	const EVP_MD *mds[3] = { EVP_sha256(), EVP_sha384(), EVP_sha512() };
	const char *dot = memchr(t, '.', len), *dot2;
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen;
	char sig[128];
	size_t n;
	int i;

	if (dot == NULL || (dot2 = memchr(dot + 1, '.', len - (size_t)(dot + 1 - t))) == NULL)
		return 0;
	for (i = 0; i < 3; i++) {
		n = 0;
		if (HMAC(mds[i], FUZZ_SECRET, (int)strlen(FUZZ_SECRET), (const unsigned char *)t,
		    (size_t)(dot2 - t), mac, &maclen) == NULL ||
		    b64url(mac, maclen, sig, &n, sizeof(sig)) < 0)
			abort();
		if (n == len - (size_t)(dot2 + 1 - t) && memcmp(sig, dot2 + 1, n) == 0)
			return 1;
	}
	return 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char tok[FUZZ_TOKEN_MAX * 2 + 256];
	struct rest_identity id;
	struct rest_err e;
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen;
	const uint8_t *nl;
	size_t n = 0;
	cJSON *c;
	int rc;

	if (size < 1 || size > FUZZ_TOKEN_MAX)
		return 0;
	if (data[0] & 1) {
		/* HEADER\nPAYLOAD, signed here. */
		if ((nl = memchr(data + 1, '\n', size - 1)) == NULL)
			return 0;
		if (b64url(data + 1, (size_t)(nl - data - 1), tok, &n, sizeof(tok)) < 0)
			return 0;
		tok[n++] = '.';
		if (b64url(nl + 1, size - (size_t)(nl + 1 - data), tok, &n, sizeof(tok)) < 0)
			return 0;
		if (HMAC(EVP_sha256(), FUZZ_SECRET, (int)strlen(FUZZ_SECRET),
		    (const unsigned char *)tok, n, mac, &maclen) == NULL)
			abort();
		tok[n++] = '.';
		if (b64url(mac, maclen, tok, &n, sizeof(tok)) < 0)
			return 0;
	} else {
		memcpy(tok, data + 1, size - 1);
		n = size - 1;
		tok[n] = '\0';
	}
	arena_reset(ar);
	memset(&id, 0, sizeof(id));
	rc = rest_jwt_verify(&auth, tok, n, time(NULL), ar, &id, &e);
	if (rc != 0) {
		if (rc != -1 || !((e.status == 401 && (strcmp(e.code, "PGRST301") == 0 ||
		    strcmp(e.code, "PGRST302") == 0)) || e.status == 413))
			abort();
		return 0;
	}
	if (!signed_here(tok, n) || id.role == NULL || id.claims == NULL)
		abort();
	if ((c = cJSON_ParseWithLength(id.claims, id.claimslen)) == NULL || !cJSON_IsObject(c))
		abort();
	cJSON_Delete(c);
	return 0;
}
