/*
 * str.h: small string utilities shared by the parsers and generators: strict integer
 * parsing and fast formatting, UTF-8 validation and percent-decoding.  Everything takes
 * (pointer, length) and never reads past it; nothing allocates.
 */
#ifndef SLUICE_STR_H
#define SLUICE_STR_H

#include <stddef.h>
#include <stdint.h>

/*
 * Parses s[0..len) as a decimal integer in [min, max]: an optional '-' (only when min < 0),
 * then digits, nothing else (no '+', no blanks, no leading zeros beyond a lone "0").
 * Returns 0 with *out set, or -1 (empty, stray bytes, out of range, overflow).
 */
int str_to_int(const char *s, size_t len, int64_t min, int64_t max, int64_t *out);

/* Returns 1 when s[0..len) is well-formed UTF-8 (no overlongs, no surrogates, nothing past
 * U+10FFFF), 0 otherwise. */
int str_utf8_valid(const char *s, size_t len);

/*
 * Percent-decodes s[0..len) into out (which must have room for len bytes; decoding never
 * grows).  With plus_space, '+' becomes ' ' (query strings and forms).  Returns the decoded
 * length, or -1 for a malformed escape ('%' not followed by two hex digits) or a decoded
 * NUL byte, which no parameter may carry.
 */
long str_pct_decode(const char *s, size_t len, char *out, int plus_space);

/*
 * Decodes the hex digits s[0..len) (either case, an even count) into out[outlen].  Returns
 * the number of bytes, or -1 for an odd count, a byte that is not a hex digit, or more
 * bytes than outlen.
 */
long str_unhex(const char *s, size_t len, unsigned char *out, size_t outlen);

/* Writes p[0..len) as lower-case hex into out, which holds 2 * len + 1 bytes (NUL
 * included). */
void str_hex(const unsigned char *p, size_t len, char *out);

/*
 * base64url without padding (RFC 4648, section 5), as JSON Web Tokens use it.
 * str_b64url_enc() writes p[0..len) into out[outlen] (NUL-terminated) and returns the
 * length, or -1 when it does not fit.  str_b64url_dec() decodes s[0..len) into out[outlen]
 * and returns the number of bytes, or -1 for a character outside the alphabet, a length
 * no encoding has, bits left over that are not zero (so one value has one encoding) or
 * more bytes than outlen.
 */
long str_b64url_enc(const unsigned char *p, size_t len, char *out, size_t outlen);
long str_b64url_dec(const char *s, size_t len, unsigned char *out, size_t outlen);

/* Compares s[0..len) with the NUL-terminated lit. */
int str_eq(const char *s, size_t len, const char *lit);

/* The decimal text of v into out (not NUL-terminated), without printf's cost: SQL and JSON
 * generation write many integers.  Returns its length. */
#define STR_INT_MAX	20	/* "-9223372036854775808" */
size_t str_from_int(char out[STR_INT_MAX], int64_t v);

#endif /* SLUICE_STR_H */
