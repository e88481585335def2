/*
 * fuzz_rest_respset: the rest endpoint's reader of response.headers and response.status
 * (apps/rest/respset.c, rest_resp_apply()) on hostile bytes.
 *
 * The values come from the database's functions, which sluice did not write.  The input
 * is response.headers up to its first newline and response.status after it (each cut at
 * its first NUL).  Invariants: no crash or sanitizer report; a refusal is a 500 with
 * PGRST111 or PGRST112 and leaves the answer's status alone; an accepted status is from
 * 100 to 599.
 *
 * It links the endpoint's library (build/fuzz/handlers/librest.a).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "resp.h"
#include "rest/rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct arena *ar;
	static struct resp rs;
	static int ready;
	struct rest_err e;
	char *in = malloc(size + 1), *nl, *status = NULL;

	if (in == NULL)
		return 0;
	if (!ready) {
		if ((ar = arena_new(1 << 20)) == NULL)
			abort();
		resp_init(&rs, 1 << 20);
		ready = 1;
	}
	arena_reset(ar);
	resp_reset(&rs);
	rs.status = 200;
	memcpy(in, data, size);
	in[size] = '\0';
	if ((nl = strchr(in, '\n')) != NULL) {
		*nl = '\0';
		status = nl + 1;
	}
	memset(&e, 0, sizeof(e));
	if (rest_resp_apply(ar, &rs, in, status, &e) < 0) {
		if (e.status != 500 || rs.status != 200 || e.code == NULL ||
		    (strcmp(e.code, "PGRST111") != 0 && strcmp(e.code, "PGRST112") != 0))
			abort();
	} else if (rs.status < 100 || rs.status > 599)
		abort();
	free(in);
	return 0;
}
