/*
 * fuzz_multipart: multipart_sole_field() (apps/records/multipart.c) on hostile bytes.  The input
 * is a Content-Type line, a newline, then the body; the field asked for is "@jsonPayload",
 * as the records batch asks for it.
 *
 * Invariants: no crash, no read past the input (the body is copied into a buffer of
 * exactly its size, the Content-Type into one of its length and a NUL); an accepted value
 * lies inside the body, is preceded by a blank line (the end of its part's headers) and
 * followed by the delimiter "\r\n--" and the boundary; and the same body answers the same
 * way twice.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "records/multipart.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	free(ct);
	free(body);
	return 0;
}
