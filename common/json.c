/*
 * json.c: see json.h.
 *
 * The depth pre-scan walks the bytes once, tracking whether it is inside a string (and
 * after a backslash), and counts open brackets.  It is not a validator; cJSON validates.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "str.h"

static int
json_depth_ok(const char *s, size_t len, int max_depth)
{
	int depth = 0, in_str = 0, esc = 0;
	size_t i;

	for (i = 0; i < len; i++) {
		char c = s[i];

		if (in_str) {
			if (esc)
				esc = 0;
			else if (c == '\\')
				esc = 1;
			else if (c == '"')
				in_str = 0;
			continue;
		}
		if (c == '"')
			in_str = 1;
		else if (c == '[' || c == '{') {
			if (++depth > max_depth)
				return 0;
		} else if (c == ']' || c == '}')
			depth--;
	}
	return 1;
}

cJSON *
json_parse(const char *s, size_t len, int max_depth, enum json_err *err, size_t *errpos)
{
	const char *end = NULL;
	cJSON *v;

	if (errpos != NULL)
		*errpos = 0;
	if (!json_depth_ok(s, len, max_depth)) {
		*err = JSON_ETOODEEP;
		return NULL;
	}
	if (!str_utf8_valid(s, len)) {
		*err = JSON_ESYNTAX;
		return NULL;
	}
	/* cJSON stops at a NUL inside the length; such a body is not JSON anyway. */
	if (memchr(s, '\0', len) != NULL) {
		*err = JSON_ESYNTAX;
		return NULL;
	}
	v = cJSON_ParseWithLengthOpts(s, len, &end, 0);
	if (v == NULL) {
		*err = JSON_ESYNTAX;
		if (errpos != NULL && end != NULL && end >= s)
			*errpos = (size_t)(end - s);
		return NULL;
	}
	/* Only whitespace may follow the value. */
	for (size_t i = (size_t)(end - s); i < len; i++)
		if (s[i] != ' ' && s[i] != '\t' && s[i] != '\n' && s[i] != '\r') {
			cJSON_Delete(v);
			*err = JSON_ESYNTAX;
			if (errpos != NULL)
				*errpos = i;
			return NULL;
		}
	*err = JSON_OK;
	return v;
}

int
json_escape(struct buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;

	if (buf_putc(b, '"') < 0)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)s[i];
		char esc[7];
		size_t n = 2;

		if (c >= 0x20 && c != '"' && c != '\\')
			continue;
		if (buf_append(b, s + run, i - run) < 0)
			return -1;
		run = i + 1;
		esc[0] = '\\';
		switch (c) {
		case '"': esc[1] = '"'; break;
		case '\\': esc[1] = '\\'; break;
		case '\n': esc[1] = 'n'; break;
		case '\r': esc[1] = 'r'; break;
		case '\t': esc[1] = 't'; break;
		case '\b': esc[1] = 'b'; break;
		case '\f': esc[1] = 'f'; break;
		default:
			memcpy(esc + 1, "u00", 3);
			esc[4] = hex[c >> 4];
			esc[5] = hex[c & 15];
			n = 6;
		}
		if (buf_append(b, esc, n) < 0)
			return -1;
	}
	if (buf_append(b, s + run, len - run) < 0)
		return -1;
	return buf_putc(b, '"');
}

int
json_print(struct buf *b, const cJSON *v)
{
	char *text;
	int rc;

	if ((text = cJSON_PrintUnformatted(v)) == NULL)
		return -1;
	rc = buf_puts(b, text);
	cJSON_free(text);
	return rc;
}
