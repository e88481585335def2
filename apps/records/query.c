/*
 * query.c: see query.h.
 */
#include <ctype.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "query.h"
#include "str.h"

/* The next comma-separated item of [*p, end), blanks trimmed; 0 at the end. */
static int
query_item(const char **p, const char *end, const char **s, size_t *len)
{
	const char *q;

	if (*p >= end)
		return 0;
	q = memchr(*p, ',', (size_t)(end - *p));
	if (q == NULL)
		q = end;
	*s = *p;
	*len = (size_t)(q - *p);
	*p = q + 1;
	while (*len > 0 && isspace((unsigned char)**s)) {
		(*s)++;
		(*len)--;
	}
	while (*len > 0 && isspace((unsigned char)(*s)[*len - 1]))
		(*len)--;
	return 1;
}

int
query_sort(struct sqlb *q, const struct coll *c, const char *alias, const char *s,
    size_t len, int hide_email, char *err, size_t errlen)
{
	const char *p = s, *end = s + len, *it;
	size_t n;
	int terms = 0;

	while (query_item(&p, end, &it, &n)) {
		const struct coll_field *f;
		int desc = 0;

		if (n == 0)
			continue;
		if (++terms > QUERY_SORT_MAX) {
			(void)snprintf(err, errlen, "too many sort fields (%d at most)",
			    QUERY_SORT_MAX);
			return -1;
		}
		buf_puts(q->sql, terms == 1 ? " ORDER BY " : ", ");
		if (*it == '-' || *it == '+') {
			desc = *it == '-';
			it++;
			n--;
		}
		if (str_eq(it, n, "@random")) {
			buf_puts(q->sql, "random()");
			continue;
		}
		if ((f = coll_field(c, it, n)) == NULL || f->hidden ||
		    (hide_email && c->auth && strcmp(f->name, "email") == 0)) {
			(void)snprintf(err, errlen, "cannot sort by \"%.*s\"", (int)(n > 64 ? 64 : n),
			    it);
			return -1;
		}
		sqlb_col(q->sql, alias, f->name);
		if (coll_textual(f))
			buf_puts(q->sql, q->d->collate);
		buf_puts(q->sql, desc ? " DESC" : " ASC");
	}
	return 0;
}

/* Resolves name[0..len) below collection c: 0 with *n filled, 1 when unknown. */
static int
query_expand_node(struct query_expand *n, const struct coll *c, const struct colls *all,
    const char *name, size_t len)
{
	const struct coll_field *f = coll_field(c, name, len);
	const char *via;

	memset(n, 0, sizeof(*n));
	if (len >= sizeof(n->name))
		return 1;
	memcpy(n->name, name, len);
	if (f != NULL) {
		if (f->type != COLL_RELATION || f->tcoll == NULL)
			return 1;
		n->coll = f->tcoll;
		n->field = f;
		n->many = f->multiple;
		return 0;
	}
	via = strstr(n->name, "_via_");
	if (via == NULL || all == NULL)
		return 1;
	n->coll = colls_find(all, n->name, (size_t)(via - n->name));
	if (n->coll == NULL)
		return 1;
	f = coll_field(n->coll, via + 5, strlen(via + 5));
	if (f == NULL || f->type != COLL_RELATION || f->tcoll != c)
		return 1;
	n->field = f;
	n->back = 1;
	n->many = !(f->unique && !f->multiple);
	return 0;
}

int
query_expand_parse(struct query_expands *out, const struct coll *c, const char *s,
    size_t len, char *err, size_t errlen)
{
	const char *p = s, *end = s + len, *it;
	size_t n;

	out->count = 0;
	while (query_item(&p, end, &it, &n)) {
		const char *seg = it, *pend = it + n, *d;
		const struct coll *cur = c;
		int parent = -1, depth = 0, dots = 0;

		for (d = it; d < pend; d++)
			dots += *d == '.';
		if (dots >= QUERY_EXPAND_DEPTH) {
			(void)snprintf(err, errlen, "expand is nested too deep (%d at most)",
			    QUERY_EXPAND_DEPTH);
			return -1;
		}

		while (seg < pend) {
			const char *dot = memchr(seg, '.', (size_t)(pend - seg));
			size_t sl = (size_t)((dot ? dot : pend) - seg);
			struct query_expand node;
			int i, found = -1;

			if (++depth > QUERY_EXPAND_DEPTH) {
				(void)snprintf(err, errlen, "expand is nested too deep (%d at most)",
				    QUERY_EXPAND_DEPTH);
				return -1;
			}
			for (i = 0; i < out->count; i++)
				if (out->n[i].parent == parent && str_eq(seg, sl, out->n[i].name))
					found = i;
			if (found < 0) {
				if (sl == 0 || query_expand_node(&node, cur, cur->all, seg,
				    sl) != 0)
					break;	/* unknown: skipped */
				if (out->count == QUERY_EXPAND_MAX) {
					(void)snprintf(err, errlen, "too many expand paths");
					return -1;
				}
				node.parent = parent;
				node.depth = depth;
				out->n[out->count] = node;
				found = out->count++;
			}
			parent = found;
			cur = out->n[found].coll;
			seg = dot ? dot + 1 : pend;
		}
	}
	return 0;
}

int
query_fields_parse(struct query_fields *out, struct arena *a, const char *s, size_t len,
    char *err, size_t errlen)
{
	const char *p = s, *end = s + len, *it;
	size_t n, i;

	out->count = 0;
	while (query_item(&p, end, &it, &n)) {
		struct query_field *f;
		const char *colon;

		if (n == 0)
			continue;
		if (out->count == QUERY_FIELDS_MAX) {
			(void)snprintf(err, errlen, "too many fields (%d at most)", QUERY_FIELDS_MAX);
			return -1;
		}
		f = &out->f[out->count];
		memset(f, 0, sizeof(*f));
		colon = memchr(it, ':', n);
		f->len = colon ? (size_t)(colon - it) : n;
		for (i = 0; i < f->len; i++)
			if (!(isalnum((unsigned char)it[i]) || it[i] == '_' || it[i] == '.' ||
			    it[i] == '*'))
				goto bad;
		if (f->len == 0)
			goto bad;
		if (colon != NULL) {
			/* :excerpt(N) or :excerpt(N,true|false); the comma splits items, so the
			 * second argument arrives as the next item: take it from there. */
			const char *m = colon + 1, *mend = it + n;
			int64_t num;
			const char *close;

			if ((size_t)(mend - m) < 9 || strncmp(m, "excerpt(", 8) != 0)
				goto bad;
			m += 8;
			close = memchr(m, ')', (size_t)(mend - m));
			if (close != NULL) {
				if (close + 1 != mend)
					goto bad;
			} else {
				const char *arg;
				size_t al;

				if (!query_item(&p, end, &arg, &al) || al == 0 ||
				    arg[al - 1] != ')')
					goto bad;
				if (str_eq(arg, al - 1, "true"))
					f->ellipsis = 1;
				else if (!str_eq(arg, al - 1, "false"))
					goto bad;
				close = mend;
			}
			if (str_to_int(m, (size_t)(close - m), 1, 1 << 20, &num) < 0)
				goto bad;
			f->excerpt = (int)num;
		}
		if ((f->path = arena_strndup(a, it, f->len)) == NULL) {
			(void)snprintf(err, errlen, "out of memory");
			return -1;
		}
		out->count++;
	}
	return 0;
bad:
	(void)snprintf(err, errlen, "bad fields item \"%.*s\"", (int)(n > 64 ? 64 : n), it);
	return -1;
}

int
query_fields_keep(const struct query_fields *fs, const char *prefix, size_t plen,
    const char *key, const struct query_field **qf)
{
	size_t klen;
	int i, keep = 0;

	*qf = NULL;
	if (fs->count == 0)
		return 1;
	klen = strlen(key);
	for (i = 0; i < fs->count; i++) {
		const struct query_field *f = &fs->f[i];

		if (f->len < plen || memcmp(f->path, prefix, plen) != 0)
			continue;
		if (str_eq(f->path + plen, f->len - plen, "*") ||
		    str_eq(f->path + plen, f->len - plen, key)) {
			keep = 1;
			if (f->excerpt > 0 && f->len - plen == klen)
				*qf = f;
		} else if (keep == 0 && f->len > plen + klen + 1 &&
		    memcmp(f->path + plen, key, klen) == 0 && f->path[plen + klen] == '.')
			keep = 2;
	}
	return keep;
}
