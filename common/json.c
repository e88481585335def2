/*
 * json.c: see json.h.
 *
 * A validating pre-scan runs before cJSON: the RFC 8259 grammar, with the nesting limit
 * counted on the way.  cJSON alone is lenient: it takes "\uZZZZ" as a NUL that silently
 * cuts the string, control characters inside strings, any byte up to 0x20 as whitespace,
 * and numbers such as 01 or 1.  A body that passes here is JSON for every other parser
 * too (SQLite's json_each, PostgreSQL's jsonb), so such bytes are a 400 at the door and
 * never a database error later.  The scan recurses once per nesting level, at most
 * max_depth deep.
 */
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "str.h"

enum json_scan {
	JSON_SCAN_OK = 0,
	JSON_SCAN_SYNTAX = -1,
	JSON_SCAN_DEEP = -2,
};

static void
json_ws(const char *s, size_t len, size_t *i)
{
	while (*i < len && (s[*i] == ' ' || s[*i] == '\t' || s[*i] == '\n' || s[*i] == '\r'))
		(*i)++;
}

static int
json_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

static int
json_digit(const char *s, size_t len, size_t i)
{
	return i < len && s[i] >= '0' && s[i] <= '9';
}

/* A string whose opening quote is at s[*i]; leaves *i after the closing quote. */
static enum json_scan
json_scan_string(const char *s, size_t len, size_t *i)
{
	size_t k;

	for ((*i)++; *i < len; ) {
		unsigned char c = (unsigned char)s[*i];

		if (c == '"') {
			(*i)++;
			return JSON_SCAN_OK;
		}
		if (c < 0x20)
			return JSON_SCAN_SYNTAX;
		if (c != '\\') {
			(*i)++;
			continue;
		}
		if (*i + 1 >= len)
			return JSON_SCAN_SYNTAX;
		if (strchr("\"\\/bfnrt", s[*i + 1]) != NULL && s[*i + 1] != '\0') {
			*i += 2;
			continue;
		}
		if (s[*i + 1] != 'u' || *i + 5 >= len)
			return JSON_SCAN_SYNTAX;
		for (k = 2; k < 6; k++)
			if (!json_hex(s[*i + k]))
				return JSON_SCAN_SYNTAX;
		*i += 6;
	}
	return JSON_SCAN_SYNTAX;
}

/* -?(0|[1-9][0-9]*)(.[0-9]+)?([eE][+-]?[0-9]+)? at s[*i]. */
static enum json_scan
json_scan_number(const char *s, size_t len, size_t *i)
{
	if (*i < len && s[*i] == '-')
		(*i)++;
	if (!json_digit(s, len, *i))
		return JSON_SCAN_SYNTAX;
	if (s[(*i)++] != '0')
		while (json_digit(s, len, *i))
			(*i)++;
	if (*i < len && s[*i] == '.') {
		if (!json_digit(s, len, ++(*i)))
			return JSON_SCAN_SYNTAX;
		while (json_digit(s, len, *i))
			(*i)++;
	}
	if (*i < len && (s[*i] == 'e' || s[*i] == 'E')) {
		(*i)++;
		if (*i < len && (s[*i] == '+' || s[*i] == '-'))
			(*i)++;
		if (!json_digit(s, len, *i))
			return JSON_SCAN_SYNTAX;
		while (json_digit(s, len, *i))
			(*i)++;
	}
	return JSON_SCAN_OK;
}

/* One value at s[*i] (no leading whitespace), depth levels already open. */
static enum json_scan
json_scan_value(const char *s, size_t len, size_t *i, int depth, int max_depth)
{
	enum json_scan rc;
	char close;

	if (*i >= len)
		return JSON_SCAN_SYNTAX;
	switch (s[*i]) {
	case '"':
		return json_scan_string(s, len, i);
	case 't':
	case 'f':
	case 'n': {
		const char *word = s[*i] == 't' ? "true" : s[*i] == 'f' ? "false" : "null";
		size_t n = strlen(word);

		if (len - *i < n || memcmp(s + *i, word, n) != 0)
			return JSON_SCAN_SYNTAX;
		*i += n;
		return JSON_SCAN_OK;
	}
	case '[':
	case '{':
		break;
	default:
		return json_scan_number(s, len, i);
	}
	if (depth + 1 > max_depth)
		return JSON_SCAN_DEEP;
	close = s[*i] == '[' ? ']' : '}';
	(*i)++;
	json_ws(s, len, i);
	if (*i < len && s[*i] == close) {
		(*i)++;
		return JSON_SCAN_OK;
	}
	for (;;) {
		if (close == '}') {
			if (*i >= len || s[*i] != '"')
				return JSON_SCAN_SYNTAX;
			if ((rc = json_scan_string(s, len, i)) != JSON_SCAN_OK)
				return rc;
			json_ws(s, len, i);
			if (*i >= len || s[*i] != ':')
				return JSON_SCAN_SYNTAX;
			(*i)++;
			json_ws(s, len, i);
		}
		if ((rc = json_scan_value(s, len, i, depth + 1, max_depth)) != JSON_SCAN_OK)
			return rc;
		json_ws(s, len, i);
		if (*i >= len)
			return JSON_SCAN_SYNTAX;
		if (s[*i] == close) {
			(*i)++;
			return JSON_SCAN_OK;
		}
		if (s[*i] != ',')
			return JSON_SCAN_SYNTAX;
		(*i)++;
		json_ws(s, len, i);
	}
}

/* The whole of s[0..len): one value between optional whitespace. */
static enum json_scan
json_scan(const char *s, size_t len, int max_depth, size_t *pos)
{
	enum json_scan rc;

	*pos = 0;
	json_ws(s, len, pos);
	if ((rc = json_scan_value(s, len, pos, 0, max_depth)) != JSON_SCAN_OK)
		return rc;
	json_ws(s, len, pos);
	return *pos == len ? JSON_SCAN_OK : JSON_SCAN_SYNTAX;
}

cJSON *
json_parse(const char *s, size_t len, int max_depth, enum json_err *err, size_t *errpos)
{
	size_t pos = 0;
	cJSON *v;

	if (errpos != NULL)
		*errpos = 0;
	/* Not UTF-8, or a NUL byte (cJSON would stop there): not JSON either way. */
	if (!str_utf8_valid(s, len) || memchr(s, '\0', len) != NULL) {
		*err = JSON_ESYNTAX;
		return NULL;
	}
	switch (json_scan(s, len, max_depth, &pos)) {
	case JSON_SCAN_OK:
		break;
	case JSON_SCAN_DEEP:
		*err = JSON_ETOODEEP;
		return NULL;
	default:
		*err = JSON_ESYNTAX;
		if (errpos != NULL)
			*errpos = pos;
		return NULL;
	}
	/* Valid JSON that cJSON still refuses: an unpaired surrogate escape, or no memory. */
	if ((v = cJSON_ParseWithLength(s, len)) == NULL) {
		*err = JSON_ESYNTAX;
		return NULL;
	}
	*err = JSON_OK;
	return v;
}

int
json_has_nul_escape(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i + 1 < len; i++) {
		if (s[i] != '\\')
			continue;
		if (s[i + 1] == 'u' && i + 5 < len && memcmp(s + i + 2, "0000", 4) == 0)
			return 1;
		i++;	/* skip the escaped character */
	}
	return 0;
}

int
json_numbers_finite(const cJSON *v)
{
	const cJSON *it;

	if (cJSON_IsNumber(v))
		return isfinite(v->valuedouble);
	for (it = v->child; it != NULL; it = it->next)
		if (!json_numbers_finite(it))
			return 0;
	return 1;
}

/*
 * 1 when one of the 8 bytes of w (any order) is below 0x20, a '"' or a '\\': a byte that
 * json_escape() writes escaped.  Each test sets the high bit of the byte it matches
 * (the classic "has zero byte" trick, on w itself for < 0x20 and on w with the quote or
 * the backslash xored away); a byte of 0x80 or more (UTF-8) matches none of them.
 */
static int
json_word_special(uint64_t w)
{
	const uint64_t ones = 0x0101010101010101ULL, highs = 0x8080808080808080ULL;
	uint64_t q = w ^ (ones * '"'), bs = w ^ (ones * '\\');

	return ((((w - ones * 0x20) & ~w) | ((q - ones) & ~q) | ((bs - ones) & ~bs)) &
	    highs) != 0;
}

int
json_escape(struct buf *b, const char *s, size_t len)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0;

	if (buf_putc(b, '"') < 0)
		return -1;
	for (i = 0; i < len; i++) {
		unsigned char c;
		char esc[7];
		size_t n = 2;
		uint64_t w;

		/* Eight plain bytes at a time (most text has nothing to escape). */
		while (len - i >= 8) {
			memcpy(&w, s + i, 8);
			if (json_word_special(w))
				break;
			i += 8;
		}
		if (i == len)
			break;
		c = (unsigned char)s[i];
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
