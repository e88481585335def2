/* str.c: see str.h. */
#include <stdint.h>
#include <string.h>

#include "str.h"

int
str_to_int(const char *s, size_t len, int64_t min, int64_t max, int64_t *out)
{
	uint64_t v = 0, limit;
	size_t i = 0;
	int neg = 0;

	if (len > 0 && s[0] == '-') {
		if (min >= 0)
			return -1;
		neg = 1;
		i = 1;
	}
	if (i == len)
		return -1;
	if (s[i] == '0' && len - i > 1)
		return -1;
	limit = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; i < len; i++) {
		unsigned d = (unsigned char)s[i] - '0';

		if (d > 9)
			return -1;
		if (v > (limit - d) / 10)
			return -1;
		v = v * 10 + d;
	}
	if (neg) {
		if (v == (uint64_t)INT64_MAX + 1) {
			if (min != INT64_MIN)
				return -1;
			*out = INT64_MIN;
			return 0;
		}
		if (-(int64_t)v < min)
			return -1;
		*out = -(int64_t)v;
		return 0;
	}
	if ((int64_t)v > max || (int64_t)v < min)
		return -1;
	*out = (int64_t)v;
	return 0;
}

int
str_utf8_valid(const char *str, size_t len)
{
	const unsigned char *s = (const unsigned char *)str;
	size_t i = 0;

	while (i < len) {
		unsigned c = s[i];
		size_t n;
		uint32_t cp, lo;

		if (c < 0x80) {
			i++;
			continue;
		} else if (c >= 0xc2 && c <= 0xdf) {
			n = 1; cp = c & 0x1f; lo = 0x80;
		} else if (c >= 0xe0 && c <= 0xef) {
			n = 2; cp = c & 0x0f; lo = 0x800;
		} else if (c >= 0xf0 && c <= 0xf4) {
			n = 3; cp = c & 0x07; lo = 0x10000;
		} else
			return 0;
		if (len - i - 1 < n)
			return 0;
		for (size_t k = 1; k <= n; k++) {
			if ((s[i + k] & 0xc0) != 0x80)
				return 0;
			cp = (cp << 6) | (s[i + k] & 0x3f);
		}
		if (cp < lo || cp > 0x10ffff || (cp >= 0xd800 && cp <= 0xdfff))
			return 0;
		i += n + 1;
	}
	return 1;
}

static int
hexval(unsigned char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

void
str_hex(const unsigned char *p, size_t len, char *out)
{
	static const char digits[] = "0123456789abcdef";
	size_t i;

	for (i = 0; i < len; i++) {
		out[2 * i] = digits[p[i] >> 4];
		out[2 * i + 1] = digits[p[i] & 15];
	}
	out[2 * len] = '\0';
}

long
str_unhex(const char *s, size_t len, unsigned char *out, size_t outlen)
{
	size_t i;

	if (len % 2 != 0 || len / 2 > outlen)
		return -1;
	for (i = 0; i < len / 2; i++) {
		int hi = hexval((unsigned char)s[2 * i]), lo = hexval((unsigned char)s[2 * i + 1]);

		if (hi < 0 || lo < 0)
			return -1;
		out[i] = (unsigned char)(hi << 4 | lo);
	}
	return (long)(len / 2);
}

long
str_pct_decode(const char *s, size_t len, char *out, int plus_space)
{
	size_t i, o = 0;

	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];

		if (c == '%') {
			int hi, lo;

			if (len - i < 3 || (hi = hexval((unsigned char)s[i + 1])) < 0 ||
			    (lo = hexval((unsigned char)s[i + 2])) < 0)
				return -1;
			c = (unsigned char)(hi << 4 | lo);
			if (c == '\0')
				return -1;
			i += 2;
		} else if (c == '+' && plus_space)
			c = ' ';
		else if (c == '\0')
			return -1;
		out[o++] = (char)c;
	}
	return (long)o;
}

int
str_eq(const char *s, size_t len, const char *lit)
{
	size_t n = strlen(lit);

	return n == len && memcmp(s, lit, n) == 0;
}

size_t
str_from_int(char out[STR_INT_MAX], int64_t v)
{
	/* Two digits per division, written in place from the end: JSON bodies carry tens
	 * of thousands of integers. */
	static const char pairs[] =
	    "00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	    "40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	    "8081828384858687888990919293949596979899";
	/* Through unsigned, so that INT64_MIN negates without overflow. */
	uint64_t u = v < 0 ? 0 - (uint64_t)v : (uint64_t)v, p = 10;
	size_t n = 1, len;
	char *e;

	while (n < 19 && u >= p) {	/* |v| < 10^19 */
		n++;
		p *= 10;
	}
	len = n + (v < 0);
	e = out + len;
	while (u >= 100) {
		e -= 2;
		memcpy(e, pairs + 2 * (u % 100), 2);
		u /= 100;
	}
	if (u >= 10) {
		e -= 2;
		memcpy(e, pairs + 2 * u, 2);
	} else
		*--e = (char)('0' + u);
	if (v < 0)
		out[0] = '-';
	return len;
}

static const char str_b64url_alphabet[] =
    "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";

long
str_b64url_enc(const unsigned char *p, size_t len, char *out, size_t outlen)
{
	size_t i, n = 0;
	unsigned acc = 0;
	int bits = 0;

	if ((len + 2) / 3 * 4 + 1 > outlen)
		return -1;
	for (i = 0; i < len; i++) {
		acc = (acc << 8) | p[i];
		bits += 8;
		while (bits >= 6) {
			bits -= 6;
			out[n++] = str_b64url_alphabet[(acc >> bits) & 63];
		}
	}
	if (bits > 0)
		out[n++] = str_b64url_alphabet[(acc << (6 - bits)) & 63];
	out[n] = '\0';
	return (long)n;
}

long
str_b64url_dec(const char *s, size_t len, unsigned char *out, size_t outlen)
{
	unsigned acc = 0;
	size_t i, n = 0;
	int bits = 0, v;
	char c;

	if (len % 4 == 1)
		return -1;
	for (i = 0; i < len; i++) {
		c = s[i];
		if (c >= 'A' && c <= 'Z')
			v = c - 'A';
		else if (c >= 'a' && c <= 'z')
			v = c - 'a' + 26;
		else if (c >= '0' && c <= '9')
			v = c - '0' + 52;
		else if (c == '-' || c == '_')
			v = c == '-' ? 62 : 63;
		else
			return -1;
		acc = (acc << 6) | (unsigned)v;
		bits += 6;
		if (bits >= 8) {
			bits -= 8;
			if (n == outlen)
				return -1;
			out[n++] = (unsigned char)((acc >> bits) & 0xff);
		}
	}
	if ((acc & ((1u << bits) - 1)) != 0)
		return -1;
	return (long)n;
}
