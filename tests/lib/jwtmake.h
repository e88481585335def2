/*
 * jwtmake.h: JSON Web Tokens for the tests of the rest endpoint's access control.
 *
 * jwtmake_hs() writes any header and payload text, signed with HMAC (so that a test can
 * send what no library would make: alg "none", a header that is no JSON, a bad
 * signature); jwtmake_key() signs claims with a private key through libjwt (RS256,
 * ES256).  Both write "header.payload.signature", base64url without padding.
 */
#ifndef SLUICE_JWTMAKE_H
#define SLUICE_JWTMAKE_H

#include <stddef.h>

/* base64url of p[0..len) without padding into out (NUL-terminated).  0, or -1 when it
 * does not fit. */
int jwtmake_b64url(const void *p, size_t len, char *out, size_t outlen);
/* header and payload as given; the signature HMAC-SHA256 (bits 256), -384 or -512 of
 * key, or an empty one when bits is 0.  0 or -1 (does not fit). */
int jwtmake_hs(const char *header, const char *payload, const char *key, int bits,
    char *out, size_t outlen);
/* claims (a JSON object) signed by libjwt with alg ("RS256", "ES256") and the PEM private
 * key in the file keyfile.  0 or -1. */
int jwtmake_key(const char *alg, const char *claims, const char *keyfile, char *out,
    size_t outlen);

#endif /* SLUICE_JWTMAKE_H */
