/*
 * multipart.c: the parts of a multipart/form-data body (see multipart.h).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "multipart.h"

/* Finds needle[0..nlen) (nlen > 0) in h[0..hlen): its offset, or -1. */
static long
multipart_find(const char *h, size_t hlen, const char *needle, size_t nlen)
{
	const char *p = h, *end = h + hlen;

	while (nlen <= (size_t)(end - p) &&
	    (p = memchr(p, needle[0], (size_t)(end - p) - nlen + 1)) != NULL) {
		if (memcmp(p, needle, nlen) == 0)
			return (long)(p - h);
		p++;
	}
	return -1;
}

/*
 * Reads the value of the parameter key (klen bytes) of a Content-Disposition's parameters
 * v[0..vlen) (after "form-data") into *out, *olen: 1 found, 0 absent, -1 malformed (a
 * parameter without '=', a quote that does not end).  A value is quoted ("...", no
 * escapes: browsers percent-encode a quote) or a token up to the next ';'; the walk goes
 * parameter by parameter, so that a ';' inside quotes starts none.
 */
static int
multipart_param(const char *v, size_t vlen, const char *key, size_t klen, const char **out,
    size_t *olen)
{
	const char *p = v, *end = v + vlen, *k, *eq, *val, *q;
	size_t vl;

	for (;;) {
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		if (p == end)
			return 0;
		if (*p++ != ';')
			return -1;
		while (p < end && (*p == ' ' || *p == '\t'))
			p++;
		k = p;
		if ((eq = memchr(k, '=', (size_t)(end - p))) == NULL)
			return -1;
		if ((val = eq + 1) < end && *val == '"') {
			val++;
			if ((q = memchr(val, '"', (size_t)(end - val))) == NULL)
				return -1;
			vl = (size_t)(q - val);
			p = q + 1;
		} else {
			for (q = val; q < end && *q != ';' && *q != ' ' && *q != '\t'; q++)
				;
			vl = (size_t)(q - val);
			p = q;
		}
		if ((size_t)(eq - k) == klen && strncasecmp(k, key, klen) == 0) {
			*out = val;
			*olen = vl;
			return 1;
		}
	}
}

/* The delimiter "\r\n--BOUNDARY" of content_type (its boundary parameter, named in any
 * case, quoted or not) into delim[size]: its length, or -1. */
static int
multipart_delim(const char *content_type, char *delim, size_t size)
{
	const char *semi = content_type != NULL ? strchr(content_type, ';') : NULL, *b;
	size_t bl;
	int n;

	if (semi == NULL ||
	    multipart_param(semi, strlen(semi), "boundary", 8, &b, &bl) != 1 ||
	    bl == 0 || bl > 70)
		return -1;
	n = snprintf(delim, size, "\r\n--%.*s", (int)bl, b);
	return n < 0 || (size_t)n >= size ? -1 : n;
}

int
multipart_open(struct multipart *m, const char *content_type, const char *body,
    size_t len)
{
	int n;

	memset(m, 0, sizeof(*m));
	m->done = 1;
	m->final = MULTIPART_BAD;
	if ((n = multipart_delim(content_type, m->delim, sizeof(m->delim))) < 0)
		return MULTIPART_BAD;
	m->dlen = (size_t)n;
	/* The first delimiter has no CRLF before it. */
	if (body == NULL || len < m->dlen - 2 || memcmp(body, m->delim + 2, m->dlen - 2) != 0)
		return MULTIPART_BAD;
	m->p = body + m->dlen - 2;
	m->rest = len - (m->dlen - 2);
	m->done = 0;
	return 0;
}

/* Reads a Content-Disposition value v[0..vlen) into part.  0, or -1 (malformed). */
static int
multipart_disposition(const char *v, size_t vlen, struct multipart_part *part)
{
	int r;

	if (vlen < 9 || strncasecmp(v, "form-data", 9) != 0)
		return -1;
	if (multipart_param(v + 9, vlen - 9, "name", 4, &part->name, &part->namelen) != 1 ||
	    part->namelen == 0)
		return -1;
	r = multipart_param(v + 9, vlen - 9, "filename", 8, &part->filename,
	    &part->filenamelen);
	return r < 0 ? -1 : 0;
}

/* Reads the headers h[0..len) of one part (CRLF-separated lines) into part.  0 or -1. */
static int
multipart_headers(const char *h, size_t len, struct multipart_part *part)
{
	const char *p = h, *end = h + len, *eol, *colon, *v;
	int seen = 0;

	while (p < end) {
		long at = multipart_find(p, (size_t)(end - p), "\r\n", 2);

		eol = at < 0 ? end : p + at;
		if ((colon = memchr(p, ':', (size_t)(eol - p))) == NULL)
			return -1;
		for (v = colon + 1; v < eol && (*v == ' ' || *v == '\t'); v++)
			;
		if (colon - p == 19 && strncasecmp(p, "Content-Disposition", 19) == 0) {
			if (seen++ || multipart_disposition(v, (size_t)(eol - v), part) < 0)
				return -1;
		} else if (colon - p == 12 && strncasecmp(p, "Content-Type", 12) == 0) {
			part->type = v;
			part->typelen = (size_t)(eol - v);
		}
		p = eol + (eol < end ? 2 : 0);
	}
	return seen ? 0 : -1;
}

/* Ends the walk with rc, answered again by every further call. */
static int
multipart_end(struct multipart *m, int rc)
{
	m->done = 1;
	m->final = rc;
	return rc;
}

int
multipart_next(struct multipart *m, struct multipart_part *part)
{
	size_t hmax;
	long at;

	if (m->done)
		return m->final;
	if (m->rest >= 2 && m->p[0] == '-' && m->p[1] == '-')
		return multipart_end(m, MULTIPART_END);
	if (m->rest < 2 || m->p[0] != '\r' || m->p[1] != '\n')
		return multipart_end(m, MULTIPART_BAD);
	if (m->nparts >= MULTIPART_PARTS_MAX)
		return multipart_end(m, MULTIPART_TOO_MANY);
	m->p += 2;
	m->rest -= 2;
	/* Headers end within their cap: a part that never ends its headers costs no scan of
	 * the rest of the body. */
	hmax = m->rest < MULTIPART_HEADERS_MAX + 4 ? m->rest : MULTIPART_HEADERS_MAX + 4;
	memset(part, 0, sizeof(*part));
	if ((at = multipart_find(m->p, hmax, "\r\n\r\n", 4)) < 0 ||
	    multipart_headers(m->p, (size_t)at, part) < 0)
		return multipart_end(m, MULTIPART_BAD);
	m->p += at + 4;
	m->rest -= (size_t)at + 4;
	if ((at = multipart_find(m->p, m->rest, m->delim, m->dlen)) < 0)
		return multipart_end(m, MULTIPART_BAD);
	part->data = m->p;
	part->len = (size_t)at;
	m->p += (size_t)at + m->dlen;
	m->rest -= (size_t)at + m->dlen;
	m->nparts++;
	return MULTIPART_PART;
}

int
multipart_sole_field(const char *content_type, const char *body, size_t len,
    const char *name, const char **val, size_t *vlen)
{
	struct multipart m;
	struct multipart_part pt;
	int r, found = 0;

	if (multipart_open(&m, content_type, body, len) < 0)
		return -1;
	while ((r = multipart_next(&m, &pt)) == MULTIPART_PART) {
		/* One field of that name, once; no filename (a file). */
		if (found || pt.filename != NULL || pt.namelen != strlen(name) ||
		    memcmp(pt.name, name, pt.namelen) != 0)
			return -1;
		*val = pt.data;
		*vlen = pt.len;
		found = 1;
	}
	return r == MULTIPART_END && found ? 0 : -1;
}
