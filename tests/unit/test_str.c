/* test_str: strict integers, UTF-8 validation and percent-decoding, table-driven. */
#include <stdint.h>
#include <string.h>

#include "str.h"
#include "../lib/harness.h"

static void
test_str_to_int(void)
{
	static const struct {
		const char *in;
		int64_t min, max;
		int ok;
		int64_t want;
	} cases[] = {
		{ "0", 0, 10, 1, 0 }, { "10", 0, 10, 1, 10 }, { "11", 0, 10, 0, 0 },
		{ "-1", 0, 10, 0, 0 }, { "-1", -5, 10, 1, -1 }, { "-", -5, 10, 0, 0 },
		{ "", 0, 10, 0, 0 }, { "+1", 0, 10, 0, 0 }, { " 1", 0, 10, 0, 0 },
		{ "1 ", 0, 10, 0, 0 }, { "01", 0, 10, 0, 0 }, { "1x", 0, 10, 0, 0 },
		{ "9223372036854775807", 0, INT64_MAX, 1, INT64_MAX },
		{ "9223372036854775808", 0, INT64_MAX, 0, 0 },
		{ "-9223372036854775808", INT64_MIN, 0, 1, INT64_MIN },
		{ "-9223372036854775809", INT64_MIN, 0, 0, 0 },
		{ "99999999999999999999999", 0, INT64_MAX, 0, 0 },
		{ "-0", -1, 1, 1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t v = 12345;
		int rc = str_to_int(cases[i].in, strlen(cases[i].in), cases[i].min,
		    cases[i].max, &v);

		CHECK_INT(rc == 0, cases[i].ok);
		if (cases[i].ok)
			CHECK_INT(v, cases[i].want);
	}
	/* The length bounds the parse: "12" inside "123". */
	{
		int64_t v;

		CHECK(str_to_int("123", 2, 0, 100, &v) == 0 && v == 12);
	}
}

/*
 * The one strict integer parser of the tree (settings, the endpoint list, sluiced's options,
 * ports, database counts, seeders) against hostile text: every case is (bytes, length,
 * bounds); a refusal must leave *out untouched.
 */
static void
test_str_to_int_hostile(void)
{
	static const struct {
		const char *in;
		size_t len;		/* 0: strlen(in) */
		int64_t min, max;
		int ok;
		int64_t want;
	} cases[] = {
		{ "-0", 0, 0, 10, 0, 0 },		/* no '-' where no negative is allowed */
		{ "-00", 0, -10, 10, 0, 0 },
		{ "00", 0, 0, 10, 0, 0 },
		{ "+0", 0, 0, 10, 0, 0 },
		{ "+1", 0, -10, 10, 0, 0 },
		{ "--1", 0, -10, 10, 0, 0 },
		{ "-+1", 0, -10, 10, 0, 0 },
		{ " 1", 0, -10, 10, 0, 0 },
		{ "1 ", 0, -10, 10, 0, 0 },
		{ "\t1", 0, 0, 10, 0, 0 },
		{ "1\n", 0, 0, 10, 0, 0 },
		{ "1\0" "2", 3, 0, 100, 0, 0 },		/* a NUL inside the given length */
		{ "", 0, INT64_MIN, INT64_MAX, 0, 0 },
		{ "-", 0, INT64_MIN, INT64_MAX, 0, 0 },
		{ "0x10", 0, 0, 100, 0, 0 },
		{ "1e3", 0, 0, 10000, 0, 0 },
		{ "1.0", 0, 0, 10, 0, 0 },
		{ "1_000", 0, 0, 10000, 0, 0 },
		{ "\xd9\xa3", 0, 0, 10, 0, 0 },		/* ARABIC-INDIC DIGIT THREE */
		{ "1000000000000000000", 0, 0, INT64_MAX, 1, 1000000000000000000LL },
		{ "9999999999999999999", 0, 0, INT64_MAX, 0, 0 },	/* 19 digits, too big */
		{ "-9999999999999999999", 0, INT64_MIN, 0, 0, 0 },
		{ "18446744073709551616", 0, 0, INT64_MAX, 0, 0 },	/* 2^64 wraps to 0 */
		{ "18446744073709551617", 0, 0, INT64_MAX, 0, 0 },	/* ... and to 1 */
		{ "000000000000000000001", 0, 0, INT64_MAX, 0, 0 },
		{ "65535", 0, 1, 65535, 1, 65535 },
		{ "65536", 0, 1, 65535, 0, 0 },
		{ "0", 0, 1, 65535, 0, 0 },
		{ "-1", 0, -1, -1, 1, -1 },
		{ "-2", 0, -1, 100, 0, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int64_t v = 12345;
		size_t len = cases[i].len ? cases[i].len : strlen(cases[i].in);
		int rc = str_to_int(cases[i].in, len, cases[i].min, cases[i].max, &v);

		CHECK_INT(rc == 0, cases[i].ok);
		CHECK_INT(v, cases[i].ok ? cases[i].want : 12345);
	}
}

static void
test_utf8(void)
{
	static const struct {
		const char *in;
		int ok;
	} cases[] = {
		{ "", 1 }, { "plain", 1 }, { "caf\xc3\xa9", 1 }, { "\xe2\x82\xac", 1 },
		{ "\xf0\x9f\x98\x80", 1 }, { "\xc3", 0 }, { "\xc0\xaf", 0 },
		{ "\xe0\x80\xaf", 0 }, { "\xed\xa0\x80", 0 }, { "\xf4\x90\x80\x80", 0 },
		{ "\xff", 0 }, { "\x80", 0 }, { "\xe2\x82", 0 }, { "a\xc3(", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_INT(str_utf8_valid(cases[i].in, strlen(cases[i].in)), cases[i].ok);
}

static void
test_pct_decode(void)
{
	static const struct {
		const char *in;
		int plus;
		const char *want;	/* NULL: malformed */
	} cases[] = {
		{ "abc", 1, "abc" }, { "a%20b", 1, "a b" }, { "a+b", 1, "a b" },
		{ "a+b", 0, "a+b" }, { "%41%4a%4A", 1, "AJJ" }, { "%", 1, NULL },
		{ "%4", 1, NULL }, { "%zz", 1, NULL }, { "%00", 1, NULL }, { "a%2", 1, NULL },
		{ "%25", 1, "%" }, { "%e2%82%ac", 1, "\xe2\x82\xac" }, { "", 1, "" },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[64];
		long n = str_pct_decode(cases[i].in, strlen(cases[i].in), out, cases[i].plus);

		if (cases[i].want == NULL) {
			CHECK_INT(n, -1);
			continue;
		}
		CHECK_INT(n, (long)strlen(cases[i].want));
		if (n >= 0) {
			out[n] = '\0';
			CHECK_STR(out, cases[i].want);
		}
	}
	/* A NUL inside the given length is refused even unescaped. */
	{
		char out[4];

		CHECK_INT(str_pct_decode("a\0b", 3, out, 1), -1);
	}
}

static void
test_unhex(void)
{
	unsigned char out[4];

	CHECK(str_unhex("00fFa9", 6, out, sizeof(out)) == 3 && out[0] == 0 && out[1] == 0xff &&
	    out[2] == 0xa9);
	CHECK(str_unhex("", 0, out, sizeof(out)) == 0);
	CHECK(str_unhex("abc", 3, out, sizeof(out)) < 0);
	CHECK(str_unhex("0g", 2, out, sizeof(out)) < 0);
	CHECK(str_unhex("0\0", 2, out, sizeof(out)) < 0);
	CHECK(str_unhex("0011223344", 10, out, sizeof(out)) < 0);
}

/* base64url: round trips of every length class, and what a decoder must refuse. */
static void
test_b64url(void)
{
	const unsigned char bin[] = { 0xfb, 0xff, 0x00, 0x3e, 0x3f, 'a' };
	unsigned char back[8];
	char enc[16];
	size_t len;

	for (len = 0; len <= sizeof(bin); len++) {
		long n = str_b64url_enc(bin, len, enc, sizeof(enc));

		CHECK(n >= 0 && (size_t)n == strlen(enc));
		CHECK(str_b64url_dec(enc, (size_t)n, back, sizeof(back)) == (long)len);
		CHECK(memcmp(back, bin, len) == 0);
	}
	CHECK(str_b64url_enc(bin, 3, enc, sizeof(enc)) == 4 && strcmp(enc, "-_8A") == 0);
	CHECK(str_b64url_enc(bin, 6, enc, 8) < 0);
	CHECK(str_b64url_dec("-_8A", 4, back, 2) < 0);		/* does not fit */
	CHECK(str_b64url_dec("+/8A", 4, back, sizeof(back)) < 0);	/* plain base64 */
	CHECK(str_b64url_dec("YQ==", 4, back, sizeof(back)) < 0);	/* padding */
	CHECK(str_b64url_dec("YWJjZ", 5, back, sizeof(back)) < 0);	/* no such length */
	CHECK(str_b64url_dec("YR", 2, back, sizeof(back)) < 0);	/* bits left over */
	CHECK(str_b64url_dec("Y\0", 2, back, sizeof(back)) < 0);
	CHECK(str_b64url_dec("YQ", 2, back, sizeof(back)) == 1 && back[0] == 'a');
}

int
main(void)
{
	RUN(test_str_to_int);
	RUN(test_str_to_int_hostile);
	RUN(test_utf8);
	RUN(test_pct_decode);
	RUN(test_unhex);
	RUN(test_b64url);
	return harness_done();
}
