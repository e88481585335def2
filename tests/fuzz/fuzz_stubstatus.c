/*
 * fuzz_stubstatus: the reader of nginx's stub_status answer (supervisor/stubstatus.c) on
 * hostile bytes: what sluiced reads from the port of set nginx_status, where anything may
 * listen.
 *
 * Invariants: no crash, no read past the input (copied into a buffer of exactly its size,
 * with no NUL after it); a refused input leaves the output untouched; an accepted body,
 * written again in nginx's own layout, reads back to the same seven figures; the input
 * read as a whole HTTP answer is accepted only when it is a 200 whose body is accepted.
 */
#include <assert.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "stubstatus.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *in = malloc(size > 0 ? size : 1), again[512];
	struct stubstatus s, t, before;
	int n;

	assert(in != NULL);
	memcpy(in, data, size);
	memset(&before, 0xa5, sizeof(before));
	s = before;
	if (stubstatus_parse(in, size, &s) == 0) {
		n = snprintf(again, sizeof(again), "Active connections: %llu \n"
		    "server accepts handled requests\n %llu %llu %llu \n"
		    "Reading: %llu Writing: %llu Waiting: %llu \n",
		    (unsigned long long)s.active, (unsigned long long)s.accepts,
		    (unsigned long long)s.handled, (unsigned long long)s.requests,
		    (unsigned long long)s.reading, (unsigned long long)s.writing,
		    (unsigned long long)s.waiting);
		assert(n > 0 && (size_t)n < sizeof(again));
		assert(stubstatus_parse(again, (size_t)n, &t) == 0);
		assert(memcmp(&s, &t, sizeof(s)) == 0);
	} else {
		assert(memcmp(&s, &before, sizeof(s)) == 0);
	}
	s = before;
	if (stubstatus_response(in, size, &s) == 0)
		assert(size > 12 && memcmp(in, "HTTP/1.", 7) == 0 && memcmp(in + 8, " 200", 4) == 0);
	else
		assert(memcmp(&s, &before, sizeof(s)) == 0);
	free(in);
	return 0;
}
