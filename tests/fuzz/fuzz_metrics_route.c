/*
 * fuzz_metrics_route: the metrics address's reading of a request head (supervisor/stats.c,
 * stats_route()) on hostile bytes: what sluiced answers a scraper or an attacker that
 * reaches metrics_listen.
 *
 * Invariants: no crash, no read past the input (copied into a buffer of exactly its size
 * and a NUL, as stats_read_head() leaves it); the answer is 200, 404 or 405; 405 exactly
 * when the head does not start with "GET " or "HEAD "; 200 only when the path after that
 * is "/metrics" (the Prometheus text), "/" or "/status" (the status page), ending at a
 * blank, a '?', a line end or the head's end.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "sluiced.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *req = malloc(size + 1);
	const char *path;
	enum stats_doc doc = STATS_DOC__MAX;
	int r, method;

	assert(req != NULL);
	memcpy(req, data, size);
	req[size] = '\0';
	r = stats_route(req, &doc);
	method = strncmp(req, "GET ", 4) == 0 || strncmp(req, "HEAD ", 5) == 0;
	assert(r == 200 || r == 404 || r == 405);
	assert((r == 405) == !method);
	if (r == 200) {
		path = strchr(req, ' ') + 1;
		if (doc == STATS_DOC_METRICS) {
			assert(strncmp(path, "/metrics", 8) == 0);
			assert(strchr(" ?\r\n", path[8]) != NULL);
		} else {
			assert(doc == STATS_DOC_PAGE);
			assert(path[0] == '/');
			if (strncmp(path, "/status", 7) == 0)
				path += 6;
			assert(strchr(" ?\r\n", path[1]) != NULL);
		}
	}
	free(req);
	return 0;
}
