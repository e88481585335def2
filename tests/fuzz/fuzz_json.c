/*
 * fuzz_json: JSON bodies (json_parse with the nesting limit) and json_escape.
 *
 * Whatever parses must print and parse again; and any valid UTF-8 text without NUL,
 * escaped with json_escape(), must parse back as a JSON string equal to the text.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const char *s = (const char *)data;
	enum json_err err;
	struct buf b;
	cJSON *v, *again;

	buf_init(&b, 0);
	if ((v = json_parse(s, size, JSON_DEPTH_DEFAULT, &err, NULL)) != NULL) {
		if (json_print(&b, v) < 0)
			abort();
		if ((again = json_parse(b.data, b.len, JSON_DEPTH_DEFAULT + 1, &err, NULL)) == NULL)
			abort();
		cJSON_Delete(again);
		cJSON_Delete(v);
	} else if (err == JSON_OK)
		abort();
	buf_reset(&b, 0);
	if (memchr(s, '\0', size) == NULL && str_utf8_valid(s, size)) {
		if (json_escape(&b, s, size) < 0)
			abort();
		v = json_parse(b.data, b.len, 1, &err, NULL);
		if (v == NULL || !cJSON_IsString(v) || strlen(v->valuestring) != size ||
		    memcmp(v->valuestring, s, size) != 0)
			abort();
		cJSON_Delete(v);
	}
	buf_free(&b);
	return 0;
}
