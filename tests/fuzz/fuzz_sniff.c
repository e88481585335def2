/*
 * fuzz_sniff: sniff_type() (apps/records/sniff.c) on hostile files.  The input's first
 * byte is the name's length (modulo 64), then the name, then the file's bytes.
 *
 * Invariants: no crash, no read past the input (name and bytes copied into buffers of
 * exactly their size); a type is always given, active is 0 or 1, and a type is active
 * exactly when it is HTML, SVG, XML or JavaScript; bytes past SNIFF_PEEK change nothing;
 * the same input answers the same way twice.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "records/sniff.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
is_active_type(const char *t)
{
	return strncmp(t, "text/html", 9) == 0 || strcmp(t, "image/svg+xml") == 0 ||
	    strcmp(t, "application/xml") == 0 || strncmp(t, "text/javascript", 15) == 0;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	size_t nlen = size > 0 ? data[0] % 64 : 0, blen;
	char *name;
	unsigned char *body;
	const char *t, *t2;
	int a = -1, a2 = -1;

	if (size == 0 || 1 + nlen > size)
		return 0;
	blen = size - 1 - nlen;
	name = malloc(nlen ? nlen : 1);
	body = malloc(blen ? blen : 1);
	assert(name != NULL && body != NULL);
	memcpy(name, data + 1, nlen);
	memcpy(body, data + 1 + nlen, blen);
	t = sniff_type(name, nlen, body, blen, &a);
	t2 = sniff_type(name, nlen, body, blen > SNIFF_PEEK ? SNIFF_PEEK : blen, &a2);
	assert(t != NULL && t == t2 && a == a2);
	assert(a == 0 || a == 1);
	assert(a == is_active_type(t));
	free(name);
	free(body);
	return 0;
}
