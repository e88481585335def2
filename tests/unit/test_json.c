/* test_json: parsing with the nesting limit, hostile bodies, escaping. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "json.h"
#include "../lib/harness.h"

static void
test_parse_table(void)
{
	static const struct {
		const char *in;
		enum json_err err;
	} cases[] = {
		{ "{\"a\":1}", JSON_OK }, { "[1,2,3]", JSON_OK }, { "  \"x\"  \n", JSON_OK },
		{ "{\"a\":\"[[[[\"}", JSON_OK }, { "{\"a\":\"\\\"[[[\"}", JSON_OK },
		{ "", JSON_ESYNTAX }, { "{", JSON_ESYNTAX }, { "{\"a\":1} x", JSON_ESYNTAX },
		{ "{\"a\":1}{}", JSON_ESYNTAX }, { "[1,]", JSON_ESYNTAX },
		{ "\"\xff\"", JSON_ESYNTAX }, { "{'a':1}", JSON_ESYNTAX },
		{ "[[[[[[[[[[1]]]]]]]]]]", JSON_ETOODEEP },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum json_err err = JSON_ENOMEM;
		cJSON *v = json_parse(cases[i].in, strlen(cases[i].in), 8, &err, NULL);

		CHECK_INT(err, cases[i].err);
		CHECK((v != NULL) == (cases[i].err == JSON_OK));
		cJSON_Delete(v);
	}
}

static void
test_deep_and_nul(void)
{
	size_t n = 10000, i;
	char *s = malloc(2 * n);
	enum json_err err;

	for (i = 0; i < n; i++) {
		s[i] = '[';
		s[2 * n - 1 - i] = ']';
	}
	CHECK(json_parse(s, 2 * n, JSON_DEPTH_DEFAULT, &err, NULL) == NULL);
	CHECK_INT(err, JSON_ETOODEEP);
	free(s);
	CHECK(json_parse("{\"a\":1}\0x", 9, 8, &err, NULL) == NULL);
	CHECK_INT(err, JSON_ESYNTAX);
	/* The length bounds the parse: no NUL needed. */
	{
		cJSON *v = json_parse("[1]garbage", 3, 8, &err, NULL);

		CHECK(v != NULL && cJSON_IsArray(v));
		cJSON_Delete(v);
	}
}

/*
 * Regression: cJSON on its own took these, and the write then failed in the database
 * (a 500 "malformed JSON" from SQLite's json_each) or, for "\uZZZZ", silently cut the
 * string at a NUL.  The pre-scan refuses them all as syntax errors.
 */
static void
test_cjson_lenient_inputs_refused(void)
{
	static const char *const bad[] = {
		"{\"a\":\"\\u0tex\"}", "[\"\\uzzzz\"]", "[\"\\u12\"]", "[\"a\tb\"]",
		"[\"\x01\"]", "[01]", "[1.]", "[-]", "[1e]", "[.5]", "[+1]", "\x01[1]",
		"[1]\x0b", "[tru]", "[nul]", "{\"a\" 1}", "{1:2}", "{\"a\":1,}", "[\"\\x\"]",
	};
	static const char *const good[] = {
		"[\"\\u00e9\\uD83D\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\"]", "[-0.5e+10, 0, 1E-2, 10]",
		" {\"a\" : [ true , false , null ] }\r\n", "\"\"", "-1",
	};
	size_t i, pos;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		enum json_err err = JSON_OK;
		cJSON *v = json_parse(bad[i], strlen(bad[i]), 8, &err, &pos);

		CHECK(v == NULL);
		CHECK_INT(err, JSON_ESYNTAX);
		cJSON_Delete(v);
	}
	for (i = 0; i < sizeof(good) / sizeof(good[0]); i++) {
		enum json_err err = JSON_ESYNTAX;
		cJSON *v = json_parse(good[i], strlen(good[i]), 8, &err, NULL);

		CHECK(v != NULL);
		CHECK_INT(err, JSON_OK);
		cJSON_Delete(v);
	}
	/* The position of the error is reported: the bad escape at byte 6. */
	{
		enum json_err err;

		CHECK(json_parse("{\"a\":\"\\u0tex\"}", 14, 8, &err, &pos) == NULL);
		CHECK_INT(pos, 6);
	}
}

/* The checks behind refusing a body: a \u0000 escape (cJSON would cut the string there)
 * and a number beyond a double (1e999 parses as infinity). */
static void
test_nul_escape_and_finite(void)
{
	static const struct {
		const char *s;
		int nul, finite;
	} t[] = {
		{ "{\"a\":\"x\"}", 0, 1 },
		{ "{\"a\":\"a\\u0000b\"}", 1, 1 },
		{ "{\"a\\u0000\":1}", 1, 1 },
		{ "[\"a\\\\u0000\"]", 0, 1 },	/* an escaped backslash, then text */
		{ "[\"\\u00000\"]", 1, 1 },
		{ "[\"\\u0001\"]", 0, 1 },
		{ "{\"a\":1e999}", 0, 0 },
		{ "[[-1E+400]]", 0, 0 },
		{ "{\"a\":{\"b\":[1,2,1e308]}}", 0, 1 },
		{ "1e999", 0, 0 },
	};
	enum json_err err;
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		cJSON *v = json_parse(t[i].s, strlen(t[i].s), 8, &err, NULL);

		CHECK(v != NULL);
		CHECK_INT(json_has_nul_escape(t[i].s, strlen(t[i].s)), t[i].nul);
		if (v != NULL)
			CHECK_INT(json_numbers_finite(v), t[i].finite);
		cJSON_Delete(v);
	}
}

static void
test_escape(void)
{
	struct buf b;

	buf_init(&b, 0);
	{
		static const char in[] = "a\"b\\c\n\x01\x1f caf\xc3\xa9";

		CHECK(json_escape(&b, in, sizeof(in) - 1) == 0);
	}
	CHECK_STR(b.data, "\"a\\\"b\\\\c\\n\\u0001\\u001f caf\xc3\xa9\"");
	buf_reset(&b, 0);
	CHECK(json_escape(&b, "", 0) == 0);
	CHECK_STR(b.data, "\"\"");
	/* Every byte value at every position of texts of 0 to 40 bytes (eight at a time
	 * are looked at together): the same as escaping byte by byte. */
	{
		unsigned seed = 12345;
		int k;

		for (k = 0; k < 20000; k++) {
			char in[40], want[300];
			size_t n = (size_t)(k % 41), j, w = 0;

			for (j = 0; j < n; j++) {
				seed = seed * 1103515245u + 12345u;
				/* Mostly plain text, now and then any byte. */
				in[j] = (char)((seed >> 16) % 8 == 0 ? (seed >> 8) & 0xff :
				    'a' + (seed >> 16) % 26);
			}
			want[w++] = '"';
			for (j = 0; j < n; j++) {
				unsigned char c = (unsigned char)in[j];

				if (c == '"' || c == '\\' || c < 0x20) {
					const char *e = c == '"' ? "\\\"" : c == '\\' ? "\\\\" :
					    c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" :
					    c == '\b' ? "\\b" : c == '\f' ? "\\f" : NULL;

					if (e != NULL)
						w += (size_t)snprintf(want + w, sizeof(want) - w, "%s", e);
					else
						w += (size_t)snprintf(want + w, sizeof(want) - w, "\\u%04x", c);
				} else
					want[w++] = (char)c;
			}
			want[w++] = '"';
			want[w] = '\0';
			buf_reset(&b, 0);
			if (json_escape(&b, in, n) < 0 || b.len != w ||
			    memcmp(b.data, want, w) != 0) {
				CHECK(!"json_escape() as byte by byte");
				break;
			}
		}
	}
	buf_free(&b);
	/* A cap that cannot hold the text refuses, and says so. */
	buf_init(&b, 4);
	CHECK(json_escape(&b, "abcdef", 6) < 0);
	CHECK(buf_failed(&b));
	buf_free(&b);
}

int
main(void)
{
	RUN(test_parse_table);
	RUN(test_deep_and_nul);
	RUN(test_cjson_lenient_inputs_refused);
	RUN(test_nul_escape_and_finite);
	RUN(test_escape);
	return harness_done();
}
