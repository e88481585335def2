/*
 * fuzz_query: the query-string parser (req_init) and percent-decoding on hostile bytes.
 *
 * The input, cut at its first NUL (a FastCGI parameter value cannot hold one), becomes
 * QUERY_STRING.  Invariants checked on every parameter: lengths match the strings, no NUL
 * inside, and decoding never grows; the integer accessor never crashes on any value.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "req.h"
#include "str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct arena *a;
	char *q = malloc(size + sizeof("QUERY_STRING="));
	char *envp[4];
	struct req rq;
	size_t i, n = strnlen((const char *)data, size);
	int64_t v;

	if (a == NULL)
		a = arena_new(1 << 24);
	memcpy(q, "QUERY_STRING=", 13);
	memcpy(q + 13, data, n);
	q[13 + n] = '\0';
	envp[0] = (char *)(uintptr_t)"REQUEST_METHOD=GET";
	envp[1] = q;
	envp[2] = (char *)(uintptr_t)"HTTP_ACCEPT=*/*";
	envp[3] = NULL;
	arena_reset(a);
	if (req_init(&rq, envp, a) == REQ_OK) {
		if (rq.nparams > REQ_PARAMS_MAX)
			abort();
		for (i = 0; i < rq.nparams; i++) {
			const struct req_param *p = &rq.params[i];

			if (strlen(p->key) != p->keylen || strlen(p->val) != p->vallen ||
			    p->keylen + p->vallen > n)
				abort();
			(void)req_param_int(&rq, p->key, INT64_MIN, INT64_MAX, 0, &v);
			(void)str_utf8_valid(p->val, p->vallen);
		}
	}
	(void)req_header(&rq, "Accept");
	free(q);
	return 0;
}
