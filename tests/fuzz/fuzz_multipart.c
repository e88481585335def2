/*
 * fuzz_multipart: multipart_sole_field() and the walk over every part (multipart_open(),
 * multipart_next(), apps/records/multipart.c) on hostile bytes.  The input is a
 * Content-Type line, a newline, then the body; the field asked for is "@jsonPayload", as
 * the records batch asks for it.
 *
 * Invariants: no crash, no read past the input (the body is copied into a buffer of
 * exactly its size, the Content-Type into one of its length and a NUL); an accepted value
 * lies inside the body, is preceded by a blank line (the end of its part's headers) and
 * followed by the delimiter "\r\n--" and the boundary; and the same body answers the same
 * way twice.  Every part of a walk has a non-empty name, and its name, filename, type and
 * value lie inside the body, the value between a blank line and "\r\n--"; a walk reads
 * at most MULTIPART_PARTS_MAX parts and, once ended or failed, answers the same again.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "records/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* 1 when p[0..len) lies inside body[0..blen) (or is absent). */
static int
inside(const char *p, size_t len, const char *body, size_t blen)
{
	return p == NULL || (p >= body && len <= blen && p - body <= (long)(blen - len));
}

/* Walks every part of body[0..blen) of type ct, checking each. */
static void
walk(const char *ct, const char *body, size_t blen)
{
	struct multipart m;
	struct multipart_part pt;
	size_t n = 0;
	int r;

	if (multipart_open(&m, ct, body, blen) < 0)
		return;
	while ((r = multipart_next(&m, &pt)) == MULTIPART_PART) {
		n++;
		assert(pt.name != NULL && pt.namelen > 0);
		assert(inside(pt.name, pt.namelen, body, blen));
		assert(inside(pt.filename, pt.filenamelen, body, blen));
		assert(inside(pt.type, pt.typelen, body, blen));
		assert(pt.data >= body + 4 && inside(pt.data, pt.len + 4, body, blen));
		assert(memcmp(pt.data - 4, "\r\n\r\n", 4) == 0);
		assert(memcmp(pt.data + pt.len, "\r\n--", 4) == 0);
	}
	assert(n <= MULTIPART_PARTS_MAX);
	assert(r == MULTIPART_END || r == MULTIPART_BAD || r == MULTIPART_TOO_MANY);
	assert(r != MULTIPART_TOO_MANY || n == MULTIPART_PARTS_MAX);
	assert(multipart_next(&m, &pt) == r);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nl = memchr(data, '\n', size);
	size_t ctlen = nl != NULL ? (size_t)(nl - data) : size;
	size_t blen = nl != NULL ? size - ctlen - 1 : 0;
	char *ct = malloc(ctlen + 1), *body = malloc(blen ? blen : 1);
	const char *v = NULL, *v2 = NULL;
	size_t vlen = 0, vlen2 = 0;
	int r, r2;

	assert(ct != NULL && body != NULL);
	memcpy(ct, data, ctlen);
	ct[ctlen] = '\0';
	if (blen > 0)
		memcpy(body, nl + 1, blen);
	r = multipart_sole_field(ct, body, blen, "@jsonPayload", &v, &vlen);
	r2 = multipart_sole_field(ct, body, blen, "@jsonPayload", &v2, &vlen2);
	assert(r == 0 || r == -1);
	assert(r == r2);
	if (r == 0) {
		assert(v == v2 && vlen == vlen2);
		assert(v >= body + 4 && v + vlen + 4 <= body + blen);
		assert(memcmp(v - 4, "\r\n\r\n", 4) == 0);
		assert(memcmp(v + vlen, "\r\n--", 4) == 0);
	}
	walk(ct, body, blen);
	free(ct);
	free(body);
	return 0;
}
