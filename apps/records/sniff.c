/*
 * sniff.c: the content type of a file from its bytes and name (see sniff.h).
 */
#include <string.h>
#include <strings.h>

#include "sniff.h"

/* A signature: magic[0..mlen) at offset at of the file (and "RIFF" at 0 when riff). */
static const struct {
	size_t at;
	const char *magic;
	size_t mlen;
	const char *type;
	int riff;
} sniff_magic[] = {
	{ 0, "\x89PNG\r\n\x1a\n", 8, "image/png", 0 },
	{ 0, "\xff\xd8\xff", 3, "image/jpeg", 0 },
	{ 0, "GIF87a", 6, "image/gif", 0 },
	{ 0, "GIF89a", 6, "image/gif", 0 },
	{ 8, "WEBP", 4, "image/webp", 1 },
	{ 4, "ftypavif", 8, "image/avif", 0 },
	{ 0, "\0\0\1\0", 4, "image/x-icon", 0 },
	{ 0, "%PDF-", 5, "application/pdf", 0 },
	{ 0, "PK\3\4", 4, "application/zip", 0 },
	{ 0, "\x1f\x8b", 2, "application/gzip", 0 },
	{ 4, "ftyp", 4, "video/mp4", 0 },
	{ 0, "\x1a\x45\xdf\xa3", 4, "video/webm", 0 },
	{ 0, "OggS", 4, "audio/ogg", 0 },
	{ 0, "ID3", 3, "audio/mpeg", 0 },
	{ 8, "WAVE", 4, "audio/wav", 1 },
};

/* Text files by extension; active ones run in a browser. */
static const struct {
	const char *ext;
	const char *type;
	int active;
} sniff_ext[] = {
	{ "txt", "text/plain; charset=utf-8", 0 },
	{ "json", "application/json", 0 },
	{ "csv", "text/csv; charset=utf-8", 0 },
	{ "css", "text/css; charset=utf-8", 0 },
	{ "md", "text/markdown; charset=utf-8", 0 },
	{ "html", "text/html; charset=utf-8", 1 },
	{ "htm", "text/html; charset=utf-8", 1 },
	{ "svg", "image/svg+xml", 1 },
	{ "xml", "application/xml", 1 },
	{ "js", "text/javascript; charset=utf-8", 1 },
	{ "mjs", "text/javascript; charset=utf-8", 1 },
};

/* The markup a text opening with '<' names, in the order tried. */
static const struct {
	const char *word;
	const char *type;
} sniff_markup[] = {
	{ "<svg", "image/svg+xml" },
	{ "<!doctype html", "text/html; charset=utf-8" },
	{ "<html", "text/html; charset=utf-8" },
	{ "<script", "text/html; charset=utf-8" },
	{ "<?xml", "application/xml" },
};

/* 1 when d[0..len) is UTF-8 text without NULs or control bytes but \t \n \f \r.  A
 * sequence cut at the end of the peek is allowed. */
static int
sniff_text(const unsigned char *d, size_t len)
{
	size_t i = 0, k, n;

	while (i < len) {
		unsigned char c = d[i];

		if (c < 0x80) {
			if (c < 0x20 && c != '\t' && c != '\n' && c != '\f' && c != '\r')
				return 0;
			if (c == 0x7f)
				return 0;
			i++;
			continue;
		}
		if (c >= 0xc2 && c <= 0xdf)
			n = 1;
		else if (c >= 0xe0 && c <= 0xef)
			n = 2;
		else if (c >= 0xf0 && c <= 0xf4)
			n = 3;
		else
			return 0;
		for (k = 1; k <= n; k++)
			if (i + k < len && (d[i + k] & 0xc0) != 0x80)
				return 0;
		i += n + 1;
	}
	return 1;
}

/* 1 when the lower-cased word appears in d[0..len), ignoring ASCII case. */
static int
sniff_has(const unsigned char *d, size_t len, const char *word)
{
	size_t wl = strlen(word), i;

	for (i = 0; wl <= len && i <= len - wl; i++)
		if (strncasecmp((const char *)d + i, word, wl) == 0)
			return 1;
	return 0;
}

/* The markup type of text d[0..len), or NULL when it is not markup. */
static const char *
sniff_markup_type(const unsigned char *d, size_t len)
{
	size_t i = 0, k;

	if (len >= 3 && memcmp(d, "\xef\xbb\xbf", 3) == 0)
		i = 3;
	while (i < len && (d[i] == ' ' || d[i] == '\t' || d[i] == '\r' || d[i] == '\n' ||
	    d[i] == '\f'))
		i++;
	if (i == len || d[i] != '<')
		return NULL;
	for (k = 0; k < sizeof(sniff_markup) / sizeof(sniff_markup[0]); k++)
		if (sniff_has(d + i, len - i, sniff_markup[k].word))
			return sniff_markup[k].type;
	return NULL;
}

/* The extension's entry of name[0..nlen) (after its last '.'), or -1. */
static int
sniff_ext_index(const char *name, size_t nlen)
{
	const char *dot = NULL;
	size_t i;

	for (i = nlen; i > 0 && dot == NULL; i--)
		if (name[i - 1] == '.')
			dot = name + i - 1;
	if (dot == NULL)
		return -1;
	for (i = 0; i < sizeof(sniff_ext) / sizeof(sniff_ext[0]); i++)
		if (strlen(sniff_ext[i].ext) == nlen - (size_t)(dot + 1 - name) &&
		    strncasecmp(dot + 1, sniff_ext[i].ext, strlen(sniff_ext[i].ext)) == 0)
			return (int)i;
	return -1;
}

const char *
sniff_type(const char *name, size_t nlen, const unsigned char *data, size_t len,
    int *active)
{
	const char *t;
	size_t i;
	int e;

	*active = 0;
	if (len > SNIFF_PEEK)
		len = SNIFF_PEEK;
	for (i = 0; i < sizeof(sniff_magic) / sizeof(sniff_magic[0]); i++)
		if (len >= sniff_magic[i].at + sniff_magic[i].mlen &&
		    memcmp(data + sniff_magic[i].at, sniff_magic[i].magic,
		    sniff_magic[i].mlen) == 0 &&
		    (!sniff_magic[i].riff || memcmp(data, "RIFF", 4) == 0))
			return sniff_magic[i].type;
	if (len == 0 || !sniff_text(data, len))
		return "application/octet-stream";
	if ((t = sniff_markup_type(data, len)) != NULL) {
		*active = 1;
		return t;
	}
	if ((e = sniff_ext_index(name, nlen)) < 0)
		return "text/plain; charset=utf-8";
	*active = sniff_ext[e].active;
	return sniff_ext[e].type;
}
