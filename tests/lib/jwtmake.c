/*
 * jwtmake.c: JSON Web Tokens for tests (see jwtmake.h).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <jwt.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>

#include "str.h"
#include "jwtmake.h"

int
jwtmake_b64url(const void *p, size_t len, char *out, size_t outlen)
{
	return str_b64url_enc(p, len, out, outlen) < 0 ? -1 : 0;
}

int
jwtmake_hs(const char *header, const char *payload, const char *key, int bits, char *out,
    size_t outlen)
{
	unsigned char mac[EVP_MAX_MD_SIZE];
	unsigned int maclen = 0;
	const EVP_MD *md = bits == 384 ? EVP_sha384() : bits == 512 ? EVP_sha512() : EVP_sha256();
	size_t n;

	if (jwtmake_b64url(header, strlen(header), out, outlen) < 0)
		return -1;
	n = strlen(out);
	if (n + 2 > outlen)
		return -1;
	out[n++] = '.';
	if (jwtmake_b64url(payload, strlen(payload), out + n, outlen - n) < 0)
		return -1;
	n += strlen(out + n);
	if (n + 2 > outlen)
		return -1;
	if (bits != 0 && HMAC(md, key, (int)strlen(key), (const unsigned char *)out, n, mac,
	    &maclen) == NULL)
		return -1;
	out[n++] = '.';
	return jwtmake_b64url(mac, maclen, out + n, outlen - n);
}

int
jwtmake_key(const char *alg, const char *claims, const char *keyfile, char *out,
    size_t outlen)
{
	unsigned char key[16384];
	FILE *f;
	size_t len;
	jwt_t *j = NULL;
	char *s = NULL;
	int rc = -1;

	if ((f = fopen(keyfile, "rb")) == NULL)
		return -1;
	len = fread(key, 1, sizeof(key) - 1, f);
	fclose(f);
	key[len] = '\0';
	if (jwt_new(&j) != 0 || jwt_add_grants_json(j, claims) != 0 ||
	    jwt_set_alg(j, jwt_str_alg(alg), key, (int)len) != 0 ||
	    (s = jwt_encode_str(j)) == NULL)
		goto out;
	if (strlen(s) < outlen) {
		memcpy(out, s, strlen(s) + 1);
		rc = 0;
	}
out:
	free(s);
	if (j != NULL)
		jwt_free(j);
	return rc;
}
