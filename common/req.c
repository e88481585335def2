/*
 * req.c: building a struct req from FastCGI parameters (see req.h).
 *
 * The query string is split on '&' and each "key=value" percent-decoded into the arena.
 * Decoding is strict: a '%' must be followed by two hex digits and may not produce a NUL.
 * An empty pair ("a=1&&b=2") is skipped, a key without '=' gets the empty value, as in
 * every common query string parser.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "req.h"
#include "str.h"

static const struct {
	const char *name;
	unsigned bit;
} req_methods[] = {
	{ "GET", REQ_GET }, { "HEAD", REQ_HEAD }, { "POST", REQ_POST }, { "PUT", REQ_PUT },
	{ "PATCH", REQ_PATCH }, { "DELETE", REQ_DELETE }, { "OPTIONS", REQ_OPTIONS },
};

unsigned
req_method_parse(const char *s)
{
	size_t i;

	if (s == NULL)
		return REQ_OTHER;
	for (i = 0; i < sizeof(req_methods) / sizeof(req_methods[0]); i++)
		if (strcmp(s, req_methods[i].name) == 0)
			return req_methods[i].bit;
	return REQ_OTHER;
}

void
req_methods_format(unsigned mask, char *out, size_t outlen)
{
	size_t i, off = 0;
	int n;

	if (outlen == 0)
		return;
	out[0] = '\0';
	for (i = 0; i < sizeof(req_methods) / sizeof(req_methods[0]); i++) {
		if (!(mask & req_methods[i].bit))
			continue;
		n = snprintf(out + off, outlen - off, "%s%s", off ? ", " : "",
		    req_methods[i].name);
		if (n < 0 || (size_t)n >= outlen - off)
			return;
		off += (size_t)n;
	}
}

const char *
req_env(const struct req *rq, const char *name)
{
	size_t n = strlen(name);
	char **e;

	if (rq->envp == NULL)
		return NULL;
	for (e = rq->envp; *e != NULL; e++)
		if (strncmp(*e, name, n) == 0 && (*e)[n] == '=')
			return *e + n + 1;
	return NULL;
}

/* Whether the environment entry e is "HTTP_<name>=...", name (n bytes) a header name in
 * any case, with '-' where CGI has '_'. */
static int
req_header_is(const char *e, const char *name, size_t n)
{
	size_t i;

	if (e[0] != 'H' || e[1] != 'T' || e[2] != 'T' || e[3] != 'P' || e[4] != '_')
		return 0;
	e += 5;
	/* A mismatch, the end of e included (want is never NUL), ends the loop. */
	for (i = 0; i < n; i++) {
		unsigned char c = (unsigned char)name[i];
		char want = c == '-' ? '_' : c >= 'a' && c <= 'z' ? (char)(c - 'a' + 'A') :
		    (char)c;

		if (e[i] != want)
			return 0;
	}
	return e[n] == '=';
}

const char *
req_header(const struct req *rq, const char *name)
{
	size_t n = strlen(name);
	char **e;

	/* CGI passes two headers without the HTTP_ prefix. */
	if ((name[0] == 'C' || name[0] == 'c') && strcasecmp(name, "Content-Type") == 0)
		return req_env(rq, "CONTENT_TYPE");
	if ((name[0] == 'C' || name[0] == 'c') && strcasecmp(name, "Content-Length") == 0)
		return req_env(rq, "CONTENT_LENGTH");
	/* Entry by entry, without building "HTTP_NAME" first: this runs several times for
	 * every request, and most entries differ at their first byte or the sixth. */
	if (rq->envp == NULL || memchr(name, '=', n) != NULL)
		return NULL;
	for (e = rq->envp; *e != NULL; e++)
		if (req_header_is(*e, name, n))
			return *e + 5 + n + 1;
	return NULL;
}

/*
 * Splits q[0..len) on '&' into percent-decoded "key=value" pairs (a missing '=' gives an
 * empty value, '+' is a space) in the arena: the one parser of query strings and form
 * bodies.  *out and *nout are set only on success.
 */
static enum req_err
req_split(struct arena *a, const char *q, size_t len, struct req_param **out,
    size_t *nout)
{
	size_t count = 0, n = 0, i, start;
	struct req_param *params, *p;

	if (len == 0) {
		*out = NULL;
		*nout = 0;
		return REQ_OK;
	}
	for (i = 0; i < len; i++)
		if (q[i] == '&')
			count++;
	if (count + 1 > REQ_PARAMS_MAX)
		return REQ_ETOOMANY;
	if ((params = arena_alloc(a, (count + 1) * sizeof(*p))) == NULL)
		return REQ_ENOMEM;
	for (start = 0; start <= len; start = i + 1) {
		const char *pair = q + start, *eq;
		size_t plen, klen;
		char *k, *v;
		long kl, vl;

		for (i = start; i < len && q[i] != '&'; i++)
			continue;
		if ((plen = i - start) == 0)
			continue;
		eq = memchr(pair, '=', plen);
		klen = eq ? (size_t)(eq - pair) : plen;
		if ((k = arena_alloc(a, plen + 2)) == NULL)
			return REQ_ENOMEM;
		if ((kl = str_pct_decode(pair, klen, k, 1)) < 0)
			return REQ_EQUERY;
		k[kl] = '\0';
		v = k + kl + 1;
		vl = 0;
		if (eq != NULL && (vl = str_pct_decode(eq + 1, plen - klen - 1, v, 1)) < 0)
			return REQ_EQUERY;
		v[vl] = '\0';
		p = &params[n++];
		p->key = k;
		p->keylen = (size_t)kl;
		p->val = v;
		p->vallen = (size_t)vl;
	}
	*out = params;
	*nout = n;
	return REQ_OK;
}

enum req_err
req_init(struct req *rq, char **envp, struct arena *a)
{
	const char *v;

	memset(rq, 0, sizeof(*rq));
	rq->arena = a;
	rq->envp = envp;
	rq->method_name = (v = req_env(rq, "REQUEST_METHOD")) != NULL ? v : "GET";
	rq->method = req_method_parse(rq->method_name);
	if ((v = req_env(rq, "DOCUMENT_URI")) == NULL || *v == '\0')
		if ((v = req_env(rq, "SCRIPT_NAME")) == NULL || *v == '\0')
			v = "/";
	rq->path = v;
	if ((v = req_env(rq, "QUERY_STRING")) == NULL)
		v = "";
	rq->query = v;
	return req_split(a, v, strlen(v), &rq->params, &rq->nparams);
}

enum req_err
req_form(const struct req *rq, struct req_param **params, size_t *nparams)
{
	if (rq->body == NULL)
		return req_split(rq->arena, "", 0, params, nparams);
	return req_split(rq->arena, rq->body, rq->body_len, params, nparams);
}

const struct req_param *
req_param(const struct req *rq, const char *key)
{
	size_t i;

	for (i = 0; i < rq->nparams; i++)
		if (strcmp(rq->params[i].key, key) == 0)
			return &rq->params[i];
	return NULL;
}

int
req_param_int(const struct req *rq, const char *key, int64_t min, int64_t max, int64_t def,
    int64_t *out)
{
	const struct req_param *p;

	if ((p = req_param(rq, key)) == NULL) {
		*out = def;
		return 0;
	}
	return str_to_int(p->val, p->vallen, min, max, out);
}

int
req_content_type_is(const struct req *rq, const char *mime)
{
	const char *ct = req_header(rq, "Content-Type");
	size_t n = strlen(mime), i;

	if (ct == NULL || strncasecmp(ct, mime, n) != 0)
		return 0;
	for (i = n; ct[i] == ' ' || ct[i] == '\t'; i++)
		continue;
	return ct[i] == '\0' || ct[i] == ';';
}
