/*
 * test_sniff.c: the content type of a stored file (apps/records/sniff.c), table-driven:
 * each signature; names that lie about the bytes (a PNG named .html, HTML named .png or
 * .txt, SVG named .jpg, a BOM and blanks before markup); text by extension, active or
 * not; binary and empty files; a UTF-8 sequence cut at the peek's end; control bytes;
 * a RIFF signature without RIFF.
 */
#include <string.h>

#include "harness.h"
#include "records/sniff.h"

static void
test_types(void)
{
	static const struct {
		const char *name;
		const char *data;
		size_t len;	/* 0: strlen(data) */
		const char *want;
		int active;
	} t[] = {
		{ "a.png", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16, "image/png", 0 },
		{ "a.html", "\x89PNG\r\n\x1a\n\0\0\0\rIHDR", 16, "image/png", 0 },
		{ "a.jpg", "\xff\xd8\xff\xe0\0\x10JFIF", 10, "image/jpeg", 0 },
		{ "a", "GIF89a\1\0\1\0", 10, "image/gif", 0 },
		{ "a", "GIF87a", 0, "image/gif", 0 },
		{ "a", "RIFF\0\0\0\0WEBPVP8 ", 16, "image/webp", 0 },
		{ "a", "RIFX\0\0\0\0WEBPVP8 ", 16, "application/octet-stream", 0 },
		{ "a", "\0\0\0\x1c" "ftypavif", 12, "image/avif", 0 },
		{ "a", "\0\0\0\x1c" "ftypisom", 12, "video/mp4", 0 },
		{ "a", "\0\0\1\0\1\0", 6, "image/x-icon", 0 },
		{ "a.txt", "%PDF-1.7\n", 0, "application/pdf", 0 },
		{ "a", "PK\3\4\x14\0", 6, "application/zip", 0 },
		{ "a", "\x1f\x8b\x08\0", 4, "application/gzip", 0 },
		{ "a", "\x1a\x45\xdf\xa3", 4, "video/webm", 0 },
		{ "a", "OggS\0", 5, "audio/ogg", 0 },
		{ "a", "ID3\3\0", 5, "audio/mpeg", 0 },
		{ "a", "RIFF\0\0\0\0WAVEfmt ", 16, "audio/wav", 0 },
		/* Markup, whatever the name says. */
		{ "a.png", "<html><body>x", 0, "text/html; charset=utf-8", 1 },
		{ "a.txt", "<!DOCTYPE HTML>", 0, "text/html; charset=utf-8", 1 },
		{ "a.jpg", "<svg xmlns=\"http://www.w3.org/2000/svg\"><script>", 0,
		    "image/svg+xml", 1 },
		{ "a.txt", "\xef\xbb\xbf \r\n\t<?xml version=\"1.0\"?><svg/>", 0,
		    "image/svg+xml", 1 },
		{ "a.txt", "<?xml version=\"1.0\"?><note/>", 0, "application/xml", 1 },
		{ "a.gif", "<p>hi</p><ScRiPt>alert(1)</script>", 0,
		    "text/html; charset=utf-8", 1 },
		/* Text by extension. */
		{ "a.html", "hello <b>", 0, "text/html; charset=utf-8", 1 },
		{ "a.HTM", "hello", 0, "text/html; charset=utf-8", 1 },
		{ "a.svg", "  not markup", 0, "image/svg+xml", 1 },
		{ "a.js", "alert(1)", 0, "text/javascript; charset=utf-8", 1 },
		{ "a.json", "{\"a\":1}", 0, "application/json", 0 },
		{ "a.csv", "a,b\n1,2\n", 0, "text/csv; charset=utf-8", 0 },
		{ "a.md", "# Title\n", 0, "text/markdown; charset=utf-8", 0 },
		{ "a.txt", "caf\xc3\xa9\n", 0, "text/plain; charset=utf-8", 0 },
		{ "a.png", "just text", 0, "text/plain; charset=utf-8", 0 },
		{ "noext", "just text", 0, "text/plain; charset=utf-8", 0 },
		{ "a.", "<p>x</p>", 0, "text/plain; charset=utf-8", 0 },
		/* Not text: binary, control bytes, bad UTF-8, empty. */
		{ "a.txt", "ab\0cd", 5, "application/octet-stream", 0 },
		{ "a.html", "ab\x1b[31m", 0, "application/octet-stream", 0 },
		{ "a.html", "\xc0\xaf<html>", 0, "application/octet-stream", 0 },
		{ "a.html", "", 0, "application/octet-stream", 0 },
		{ "a.txt", "abc\x7f", 0, "application/octet-stream", 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		size_t len = t[i].len ? t[i].len : strlen(t[i].data);
		int active = -1;

		CHECK_STR(sniff_type(t[i].name, strlen(t[i].name),
		    (const unsigned char *)t[i].data, len, &active), t[i].want);
		CHECK_INT(active, t[i].active);
	}
}

static void
test_peek(void)
{
	unsigned char d[SNIFF_PEEK + 64];
	int active;

	/* A sequence cut at the peek's end is text; markup past the peek is not seen. */
	memset(d, 'a', sizeof(d));
	d[SNIFF_PEEK - 1] = 0xc3;
	d[SNIFF_PEEK] = 0x28;
	CHECK_STR(sniff_type("a.txt", 5, d, sizeof(d), &active), "text/plain; charset=utf-8");
	memset(d, ' ', sizeof(d));
	memcpy(d + SNIFF_PEEK, "<html>", 6);
	CHECK_STR(sniff_type("a.txt", 5, d, sizeof(d), &active), "text/plain; charset=utf-8");
	CHECK_INT(active, 0);
	d[SNIFF_PEEK - 2] = '<';
	d[SNIFF_PEEK - 1] = 'h';
	CHECK_STR(sniff_type("a.txt", 5, d, sizeof(d), &active), "text/plain; charset=utf-8");
}

int
main(void)
{
	RUN(test_types);
	RUN(test_peek);
	return harness_done();
}
