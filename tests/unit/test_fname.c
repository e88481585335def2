/*
 * test_fname.c: the stored names of files (apps/records/fname.c), table-driven: plain
 * names, case and snake_case, blanks and symbols, paths (Unix, Windows, traversal), no or
 * an empty extension, a leading dot, non-ASCII names, short and long bases and extensions,
 * NULs and control bytes; every derived name valid; random characters from the kernel;
 * and fname_valid() refusing what is no stored name.
 */
#include <string.h>

#include "harness.h"
#include "records/fname.h"

#define RND	"abcdefghij0123456789"

static void
test_derive(void)
{
	static const struct {
		const char *in;
		size_t len;	/* 0: strlen(in) */
		const char *want;
	} t[] = {
		{ "photo.png", 0, "photo_0123456789.png" },
		{ "My Photo.JPG", 0, "my_photo_0123456789.jpg" },
		{ "myPhotoV2Final.jpeg", 0, "my_photo_v2_final_0123456789.jpeg" },
		{ "../../etc/passwd", 0, "passwd_0123456789" },
		{ "..\\..\\windows\\win.ini", 0, "win_0123456789.ini" },
		{ "C:\\Users\\me\\cv (1).pdf", 0, "cv_1_0123456789.pdf" },
		{ "/", 0, "abcdefghij_0123456789" },
		{ "", 0, "abcdefghij_0123456789" },
		{ "..", 0, "abcdefghij_0123456789" },
		{ ".bashrc", 0, "bashrc_0123456789" },
		{ "archive.tar.gz", 0, "archive_tar_0123456789.gz" },
		{ "name.", 0, "name_0123456789" },
		{ "x.p%n/g", 0, "gabcdefghij_0123456789" },
		{ "a.b", 0, "aabcdefghij_0123456789.b" },
		{ "\xd1\x84\xd0\xbe\xd1\x82\xd0\xbe.jpg", 0, "abcdefghij_0123456789.jpg" },
		{ "ab.j\xc3\xa9pg", 0, "ababcdefghij_0123456789.jpg" },
		{ "  --__report__--  .TXT", 0, "report_0123456789.txt" },
		{ "a\0b.png", 7, "a_b_0123456789.png" },
		{ "evil\r\nname.htm\x01l", 0, "evil_name_0123456789.html" },
		{ "f.abcdefghijklmnopqrstuvwxyz", 0, "fabcdefghij_0123456789.hijklmnopqrstuvwxyz" },
	};
	char out[FNAME_MAX];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t len = t[i].len ? t[i].len : strlen(t[i].in);
		int n = fname_derive(t[i].in, len, RND, out);

		CHECK_STR(out, t[i].want);
		CHECK_INT(n, (int)strlen(t[i].want));
		CHECK(fname_valid(out, (size_t)n));
	}
}

static void
test_derive_limits(void)
{
	char in[4096], out[FNAME_MAX], want[FNAME_MAX];
	int n;

	/* A base of 300 letters keeps 100; an extension of 300 keeps its last 19. */
	memset(in, 'a', 300);
	memcpy(in + 300, ".", 1);
	memset(in + 301, 'b', 280);
	memcpy(in + 581, "cdefghijklmnopqrst", 18);
	n = fname_derive(in, 599, RND, out);
	memset(want, 'a', 100);
	memcpy(want + 100, "_0123456789.bcdefghijklmnopqrst", 32);
	CHECK_STR(out, want);
	CHECK_INT(n, FNAME_MAX - 1);
	CHECK(fname_valid(out, (size_t)n));
	/* Random characters must be [a-z0-9]. */
	CHECK_INT(fname_derive("a.png", 5, "ABCDEFGHIJ0123456789", out), -1);
	CHECK_INT(fname_derive("a.png", 5, "abcdefghij012345678/", out), -1);
}

static void
test_make(void)
{
	char a[FNAME_MAX], b[FNAME_MAX];
	int na = fname_make("Report.PDF", 10, a), nb = fname_make("Report.PDF", 10, b);

	CHECK_INT(na, 21);
	CHECK_INT(nb, 21);
	CHECK(strncmp(a, "report_", 7) == 0 && strcmp(a + 17, ".pdf") == 0);
	CHECK(fname_valid(a, (size_t)na) && fname_valid(b, (size_t)nb));
	CHECK(strcmp(a, b) != 0);
}

static void
test_valid(void)
{
	static const char *const bad[] = {
		"", ".", "..", "../x", "a/b", "a\\b", ".png", "a.", "a.b.c", "A.png", "a b",
		"a%2fb", "a\nb",
	};
	char big[FNAME_MAX + 1];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CHECK(!fname_valid(bad[i], strlen(bad[i])));
	CHECK(!fname_valid("a\0b", 3));
	CHECK(fname_valid("photo_0123456789.png", 20));
	CHECK(fname_valid("x", 1));
	memset(big, 'a', sizeof(big));
	CHECK(fname_valid(big, FNAME_MAX - 1));
	CHECK(!fname_valid(big, FNAME_MAX));
}

int
main(void)
{
	RUN(test_derive);
	RUN(test_derive_limits);
	RUN(test_make);
	RUN(test_valid);
	return harness_done();
}
