/*
 * fuzz_rest_ddl: the rest endpoint's reader of SQLite's CREATE TABLE text for foreign
 * keys' names (apps/rest/schema.c, rest_ddl_fk_name()) on hostile bytes.
 *
 * The DDL comes from the database file, which sluice may not have written.  The input is
 * the DDL (cut at its first NUL); it is asked for the key over (u) and over (a, b) to
 * "users".  Invariants: no crash or sanitizer report, and a name found is a
 * NUL-terminated string that fits the buffer.
 *
 * It links the endpoint's library (build/fuzz/handlers/librest.a).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "rest/rest.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const one[] = { "u" }, *const two[] = { "a", "b" };
	char *ddl = malloc(size + 1), out[32];

	if (ddl == NULL)
		return 0;
	memcpy(ddl, data, size);
	ddl[size] = '\0';
	memset(out, 0, sizeof(out));
	if (rest_ddl_fk_name(ddl, one, 1, "users", out, sizeof(out)) &&
	    memchr(out, '\0', sizeof(out)) == NULL)
		abort();
	if (rest_ddl_fk_name(ddl, two, 2, "users", out, sizeof(out)) &&
	    memchr(out, '\0', sizeof(out)) == NULL)
		abort();
	free(ddl);
	return 0;
}
