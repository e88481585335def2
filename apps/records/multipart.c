/*
 * multipart.c: one plain field of a multipart/form-data body (see multipart.h).
 */
#include <stdio.h>
#include <string.h>

#include "multipart.h"

/* Finds needle[0..nlen) in h[0..hlen): its offset, or -1. */
static long
multipart_find(const char *h, size_t hlen, const char *needle, size_t nlen)
{
	size_t i;

	for (i = 0; nlen <= hlen && i <= hlen - nlen; i++)
		if (memcmp(h + i, needle, nlen) == 0)
			return (long)i;
	return -1;
}

/* The delimiter "\r\n--BOUNDARY" of content_type into delim[size]: its length, or -1. */
static int
multipart_delim(const char *content_type, char *delim, size_t size)
{
	const char *b = content_type != NULL ? strstr(content_type, "boundary=") : NULL;
	size_t bl;
	int n;

	if (b == NULL)
		return -1;
	b += 9;
	if (*b == '"')
		b++;
	for (bl = 0; b[bl] != '\0' && b[bl] != '"' && b[bl] != ';' && b[bl] != ' '; bl++)
		;
	if (bl == 0 || bl > 70)
		return -1;
	n = snprintf(delim, size, "\r\n--%.*s", (int)bl, b);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

int
multipart_sole_field(const char *content_type, const char *body, size_t len,
    const char *name, const char **val, size_t *vlen)
{
	char delim[80], want[96];
	const char *q = body, *hdr;
	size_t rest = len, wl;
	long at;
	int found = 0, n, w;

	if ((n = multipart_delim(content_type, delim, sizeof(delim))) < 0 ||
	    (w = snprintf(want, sizeof(want), "name=\"%s\"", name)) < 0 ||
	    (size_t)w >= sizeof(want))
		return -1;
	wl = (size_t)w;
	/* The first delimiter has no CRLF before it. */
	if (rest < (size_t)n - 2 || memcmp(q, delim + 2, (size_t)n - 2) != 0)
		return -1;
	q += n - 2;
	rest -= (size_t)n - 2;
	for (;;) {
		if (rest >= 2 && q[0] == '-' && q[1] == '-')
			return found ? 0 : -1;
		if (rest < 2 || q[0] != '\r' || q[1] != '\n')
			return -1;
		q += 2;
		rest -= 2;
		if ((at = multipart_find(q, rest, "\r\n\r\n", 4)) < 0)
			return -1;
		hdr = q;
		/* One field of that name, once; no filename (a file). */
		if (found || multipart_find(hdr, (size_t)at, want, wl) < 0 ||
		    multipart_find(hdr, (size_t)at, "filename", 8) >= 0)
			return -1;
		q += at + 4;
		rest -= (size_t)at + 4;
		if ((at = multipart_find(q, rest, delim, (size_t)n)) < 0)
			return -1;
		*val = q;
		*vlen = (size_t)at;
		found = 1;
		q += at + n;
		rest -= (size_t)at + (size_t)n;
	}
}
