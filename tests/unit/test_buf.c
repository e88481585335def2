/*
 * test_buf.c: the growable byte buffer (common/buf.c): appends keep a NUL after the data,
 * the cap latches failure, buf_putc's fast path and the general one agree, buf_put_int
 * writes every 64-bit value, buf_reset keeps or gives back memory.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "harness.h"

static void
test_append_and_nul(void)
{
	struct buf b;

	buf_init(&b, 0);
	CHECK_INT(buf_puts(&b, "ab"), 0);
	CHECK_INT(buf_putc(&b, 'c'), 0);
	CHECK_INT(buf_append(&b, "de", 2), 0);
	CHECK_INT(buf_printf(&b, "%d", 42), 0);
	CHECK_INT((int)b.len, 7);
	CHECK_STR(b.data, "abcde42");
	buf_free(&b);
}

/* Many single bytes: the fast path writes in place, growth goes through the slow one. */
static void
test_putc_growth(void)
{
	struct buf b;
	size_t i;
	int ok = 1;

	buf_init(&b, 0);
	for (i = 0; i < 100000; i++)
		if (buf_putc(&b, (char)('a' + i % 26)) != 0)
			ok = 0;
	CHECK(ok);
	CHECK_INT((int)b.len, 100000);
	CHECK(b.data[100000] == '\0');
	for (i = 0; i < 100000 && ok; i++)
		if (b.data[i] != (char)('a' + i % 26))
			ok = 0;
	CHECK(ok);
	buf_free(&b);
}

static void
test_cap(void)
{
	struct buf b;

	buf_init(&b, 4);
	CHECK_INT(buf_puts(&b, "abcd"), 0);
	CHECK_INT(buf_putc(&b, 'e'), -1);
	CHECK(buf_failed(&b));
	/* Failure latches: nothing more is appended, even what would fit. */
	CHECK_INT(buf_append(&b, "", 0), -1);
	CHECK_STR(b.data, "abcd");
	buf_reset(&b, 1024);
	CHECK(!buf_failed(&b));
	CHECK_INT(buf_putc(&b, 'x'), 0);
	CHECK_STR(b.data, "x");
	buf_free(&b);
}

/* buf_put_int(v) gives printf's "%lld". */
static void
check_put_int(long long v)
{
	char want[32];
	struct buf b;

	buf_init(&b, 0);
	CHECK_INT(buf_put_int(&b, v), 0);
	(void)snprintf(want, sizeof(want), "%lld", v);
	CHECK_STR(b.data, want);
	buf_free(&b);
}

static void
test_put_int(void)
{
	static const long long v[] = { 0, 7, -7, 10, 99, 100, 123456789, -1000000,
	    LLONG_MAX, LLONG_MIN };
	struct buf b;
	long long p;
	size_t i;

	for (i = 0; i < sizeof(v) / sizeof(v[0]); i++)
		check_put_int(v[i]);
	/* Every digit count, on both sides of each power of ten (digits go two at a time). */
	for (p = 1, i = 0; i < 19; i++, p = i < 19 ? p * 10 : p) {	/* up to 10^18 */
		check_put_int(p - 1);
		check_put_int(p);
		check_put_int(p + 1);
		check_put_int(-(p - 1));
		check_put_int(-p);
		check_put_int(-(p + 1));
	}
	buf_init(&b, 3);
	CHECK_INT(buf_put_int(&b, 1234), -1);
	CHECK(buf_failed(&b));
	buf_free(&b);
}

static void
test_reset_gives_back(void)
{
	struct buf b;
	char big[5000];

	memset(big, 'z', sizeof(big));
	buf_init(&b, 0);
	CHECK_INT(buf_append(&b, big, sizeof(big)), 0);
	buf_reset(&b, 1024);
	CHECK(b.data == NULL);
	CHECK_INT((int)b.len, 0);
	CHECK_INT(buf_puts(&b, "hi"), 0);
	buf_reset(&b, 1024);
	CHECK(b.data != NULL && b.data[0] == '\0');
	buf_free(&b);
}

int
main(void)
{
	RUN(test_append_and_nul);
	RUN(test_putc_growth);
	RUN(test_cap);
	RUN(test_put_int);
	RUN(test_reset_gives_back);
	return harness_done();
}
