/*
 * fuzz_rest_cookies: the rest endpoint's reader of the Cookie header into request.cookies
 * (apps/rest/cookies.c, rest_cookies_json()) on hostile bytes.
 *
 * The header is the client's.  The input is the header (cut at its first NUL).
 * Invariants: no crash or sanitizer report, and the result is a JSON object that cJSON
 * parses, of valid UTF-8, whose length is the one returned.
 *
 * It links the endpoint's library (build/fuzz/handlers/librest.a).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "str.h"
#include "rest/rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct arena *ar;
	char *h = malloc(size + 1);
	const char *j;
	size_t len = 0;
	cJSON *o;

	if (h == NULL)
		return 0;
	if (ar == NULL && (ar = arena_new(1 << 20)) == NULL)
		abort();
	arena_reset(ar);
	memcpy(h, data, size);
	h[size] = '\0';
	if ((j = rest_cookies_json(ar, h, &len)) == NULL || strlen(j) != len ||
	    !str_utf8_valid(j, len))
		abort();
	if ((o = cJSON_Parse(j)) == NULL || !cJSON_IsObject(o))
		abort();
	cJSON_Delete(o);
	free(h);
	return 0;
}
