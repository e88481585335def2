/*
 * fuzz_fname: fname_derive() (apps/records/fname.c) on hostile names: the input is the
 * name a client sent for a file, any bytes.
 *
 * Invariants: no crash, no read past the input (copied into a buffer of exactly its
 * size); the stored name is what fname_valid() accepts (so no '/', no "..", no byte
 * outside [a-z0-9_.]), its length is the one returned and below FNAME_MAX, its base name
 * ends with "_" and the ten suffix characters given, followed by nothing or an extension
 * of at most FNAME_EXT_MAX bytes; and the same name derives the same way twice.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "records/fname.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define RND	"abcdefghij0123456789"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size ? size : 1), a[FNAME_MAX], b[FNAME_MAX];
	const char *suf;
	int n, n2;

	assert(in != NULL);
	if (size > 0)
		memcpy(in, data, size);
	n = fname_derive(in, size, RND, a);
	n2 = fname_derive(in, size, RND, b);
	assert(n > 0 && n == n2 && strcmp(a, b) == 0);
	assert((size_t)n == strlen(a) && n < FNAME_MAX);
	assert(fname_valid(a, (size_t)n));
	/* The suffix ends the base name, before the extension if there is one. */
	suf = strchr(a, '.') != NULL ? strchr(a, '.') : a + n;
	assert(suf - a >= 11 && memcmp(suf - 11, "_0123456789", 11) == 0);
	assert(strlen(suf) <= FNAME_EXT_MAX);
	free(in);
	return 0;
}
