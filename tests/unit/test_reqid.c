/* test_reqid: the request id's validator on malformed and hostile input (table-driven),
 * the choice among candidates, the generated ids (nginx's form, distinct), and the current
 * id being the calling thread's own. */
#include <pthread.h>
#include <string.h>

#include "reqid.h"
#include "../lib/harness.h"

static void
test_valid(void)
{
	static const struct {
		const char *s;
		size_t len;	/* 0: strlen */
		int ok;
	} cases[] = {
		{ "a", 0, 1 },
		{ "0123456789abcdef0123456789abcdef", 0, 1 },
		{ "req-1.2_3:4@host", 0, 1 },
		{ "AZaz09", 0, 1 },
		{ "", 0, 0 },
		{ "a b", 0, 0 },
		{ "a\r\nSet-Cookie: x=1", 0, 0 },
		{ "a\n", 0, 0 },
		{ "a\r", 0, 0 },
		{ "\"quoted\"", 0, 0 },
		{ "it's", 0, 0 },
		{ "back\\slash", 0, 0 },
		{ "a,b", 0, 0 },
		{ "a;b", 0, 0 },
		{ "a=b", 0, 0 },
		{ "{\"json\":1}", 0, 0 },
		{ "tab\there", 0, 0 },
		{ "caf\xc3\xa9", 0, 0 },
		{ "\xff\xfe", 0, 0 },
		{ "%0d%0a", 0, 0 },
		{ "a/b", 0, 0 },
		{ "<script>", 0, 0 },
		{ "a\0b", 3, 0 },
		{ "$request_id", 0, 0 },
	};
	char buf[REQID_MAX + 2];
	size_t i, len;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		len = cases[i].len ? cases[i].len : strlen(cases[i].s);
		if (reqid_valid(cases[i].s, len) != cases[i].ok)
			harness_fail(__FILE__, __LINE__, "case %zu: \"%s\" valid %d, want %d", i,
			    cases[i].s, !cases[i].ok, cases[i].ok);
	}
	CHECK_INT(reqid_valid(NULL, 0), 0);
	CHECK_INT(reqid_valid(NULL, 5), 0);
	/* The bound: 128 bytes pass, 129 do not; every byte outside the set fails alone. */
	memset(buf, 'x', sizeof(buf));
	CHECK_INT(reqid_valid(buf, REQID_MAX), 1);
	CHECK_INT(reqid_valid(buf, REQID_MAX + 1), 0);
	for (i = 0; i < 256; i++) {
		unsigned char c = (unsigned char)i;
		int want = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || strchr("._:@-", c) != NULL;

		if (c == '\0')
			want = 0;
		buf[0] = 'a';
		buf[1] = (char)c;
		buf[2] = 'z';
		if (reqid_valid(buf, 3) != want)
			harness_fail(__FILE__, __LINE__, "byte 0x%02zx: valid %d", i, !want);
	}
}

static void
test_pick(void)
{
	char longid[REQID_MAX + 2];
	const char *c[4];

	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	c[0] = NULL;
	c[1] = "bad id";
	c[2] = longid;
	c[3] = "good";
	CHECK_STR(reqid_pick(c, 4), "good");
	CHECK(reqid_pick(c, 3) == NULL);
	CHECK(reqid_pick(c, 0) == NULL);
	c[0] = "first";
	CHECK_STR(reqid_pick(c, 4), "first");
	/* Exactly REQID_MAX is fine. */
	longid[REQID_MAX] = '\0';
	CHECK(reqid_pick((const char *const *)&c[2], 1) == longid);
}

static void
test_make(void)
{
	struct reqid_gen g, h;
	char a[REQID_GEN_LEN + 1], b[REQID_GEN_LEN + 1];
	size_t i;
	int k;

	reqid_seed(&g);
	reqid_make(&g, a);
	CHECK_INT((long long)strlen(a), REQID_GEN_LEN);
	for (i = 0; i < REQID_GEN_LEN; i++)
		CHECK((a[i] >= '0' && a[i] <= '9') || (a[i] >= 'a' && a[i] <= 'f'));
	CHECK_INT(reqid_valid(a, strlen(a)), 1);
	for (k = 0; k < 1000; k++) {
		reqid_make(&g, b);
		CHECK(strcmp(a, b) != 0);
	}
	/* Two threads' generators, seeded apart, do not repeat each other. */
	reqid_seed(&h);
	reqid_make(&h, b);
	reqid_make(&g, a);
	CHECK(strcmp(a, b) != 0);
	/* A zeroed state (the FastCGI fuzzer's thread) still makes valid ids. */
	memset(&h, 0, sizeof(h));
	reqid_make(&h, b);
	CHECK_INT(reqid_valid(b, strlen(b)), 1);
}

static void *
other_thread(void *arg)
{
	const char **seen = arg;

	*seen = reqid_current();
	(void)reqid_set("other");
	return NULL;
}

static void
test_current(void)
{
	const char *seen = "unset";
	pthread_t t;

	CHECK(reqid_current() == NULL);
	CHECK_INT(reqid_set("abc"), 0);
	CHECK_STR(reqid_current(), "abc");
	/* Another thread has its own: none, and its set does not touch ours. */
	CHECK(pthread_create(&t, NULL, other_thread, &seen) == 0);
	pthread_join(t, NULL);
	CHECK(seen == NULL);
	CHECK_STR(reqid_current(), "abc");
	/* An invalid id clears it. */
	CHECK_INT(reqid_set("a\r\nb"), -1);
	CHECK(reqid_current() == NULL);
	CHECK_INT(reqid_set(NULL), -1);
	CHECK_INT(reqid_set("x"), 0);
	reqid_clear();
	CHECK(reqid_current() == NULL);
}

int
main(void)
{
	RUN(test_valid);
	RUN(test_pick);
	RUN(test_make);
	RUN(test_current);
	return harness_done();
}
