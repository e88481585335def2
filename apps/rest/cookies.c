/*
 * cookies.c: the request's Cookie header as the JSON object PostgREST gives the database
 * in request.cookies ({"name": "value", ...}).
 *
 * The header is "name=value; name=value" (RFC 6265); a pair is cut at its first '=',
 * blanks around names and values are dropped, a value's enclosing double quotes kept as
 * sent.  Left out: a pair without '=' or with an empty name, a name or value that is not
 * UTF-8 (PostgreSQL would refuse the whole text) or holds a control character, a name
 * given before (the first one counts, as a browser sends the most specific first), and
 * every pair past REST_COOKIES_MAX.  Past REST_COOKIES_BYTES of JSON the object is "{}".
 */
#include <string.h>

#include "arena.h"
#include "json.h"
#include "rest.h"
#include "str.h"

/* s[0..len) without the blanks around it. */
static void
cookie_trim(const char **s, size_t *len)
{
	while (*len > 0 && (**s == ' ' || **s == '\t')) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && ((*s)[*len - 1] == ' ' || (*s)[*len - 1] == '\t'))
		(*len)--;
}

/* 1 when s[0..len) is UTF-8 without control characters. */
static int
cookie_text_ok(const char *s, size_t len)
{
	size_t i;

	for (i = 0; i < len; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return str_utf8_valid(s, len);
}

/* 1 when the name n[0..len) is among the nseen names already taken. */
static int
cookie_seen(const char *const *names, const size_t *lens, int nseen, const char *n,
    size_t len)
{
	int i;

	for (i = 0; i < nseen; i++)
		if (lens[i] == len && memcmp(names[i], n, len) == 0)
			return 1;
	return 0;
}

char *
rest_cookies_json(struct arena *ar, const char *header, size_t *len)
{
	const char *names[REST_COOKIES_MAX], *p = header != NULL ? header : "", *end, *eq;
	size_t lens[REST_COOKIES_MAX], nl, vl;
	int n = 0;
	struct buf b;
	char *out;

	buf_init(&b, REST_COOKIES_BYTES);
	buf_putc(&b, '{');
	for (; *p != '\0' && n < REST_COOKIES_MAX; p = *end != '\0' ? end + 1 : end) {
		const char *nm = p, *v;

		end = p + strcspn(p, ";");
		if ((eq = memchr(p, '=', (size_t)(end - p))) == NULL)
			continue;
		nl = (size_t)(eq - nm);
		v = eq + 1;
		vl = (size_t)(end - v);
		cookie_trim(&nm, &nl);
		cookie_trim(&v, &vl);
		if (nl == 0 || !cookie_text_ok(nm, nl) || !cookie_text_ok(v, vl) ||
		    cookie_seen(names, lens, n, nm, nl))
			continue;
		if (n > 0)
			buf_putc(&b, ',');
		names[n] = nm;
		lens[n++] = nl;
		json_escape(&b, nm, nl);
		buf_putc(&b, ':');
		json_escape(&b, v, vl);
	}
	buf_putc(&b, '}');
	if (buf_failed(&b))
		out = arena_strndup(ar, "{}", 2), *len = 2;
	else
		out = arena_strndup(ar, b.data, b.len), *len = b.len;
	buf_free(&b);
	return out;
}
