/*
 * tmpl.c: the template engine of tmpl.h.  A template compiles to a flat array of nodes
 * (literal text, slot, block start, block end); a block start knows where its end is, so
 * rendering is one loop with no recursion and no allocation.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tmpl.h"

enum tmpl_kind {
	TMPL_LIT,
	TMPL_SLOT,
	TMPL_BLOCK,	/* start; end is the index of its TMPL_END */
	TMPL_END,
};

struct tmpl_node {
	enum tmpl_kind kind;
	size_t off, len;	/* TMPL_LIT: the text in t->src */
	int id;			/* slot or block number */
	size_t end;		/* TMPL_BLOCK: index of the matching TMPL_END */
};

struct tmpl {
	char *src;
	struct tmpl_node *nodes;
	size_t nnodes;
};

/* Which characters need an entity; everything else is copied in runs. */
static const unsigned char tmpl_special[256] = {
	['&'] = 1, ['<'] = 1, ['>'] = 1, ['"'] = 1, ['\''] = 1,
};

int
tmpl_escape(struct buf *out, const char *s, size_t len)
{
	const unsigned char *p = (const unsigned char *)s;
	size_t i, run = 0;
	const char *ent;

	for (i = 0; i < len; i++) {
		if (!tmpl_special[p[i]])
			continue;
		if (i > run && buf_append(out, s + run, i - run) < 0)
			return -1;
		switch (p[i]) {
		case '&':
			ent = "&amp;";
			break;
		case '<':
			ent = "&lt;";
			break;
		case '>':
			ent = "&gt;";
			break;
		case '"':
			ent = "&quot;";
			break;
		default:
			ent = "&#39;";
			break;
		}
		if (buf_puts(out, ent) < 0)
			return -1;
		run = i + 1;
	}
	if (len > run && buf_append(out, s + run, len - run) < 0)
		return -1;
	return 0;
}

static int
tmpl_lookup(const char *const *names, const char *s, size_t len)
{
	int i;

	for (i = 0; names != NULL && names[i] != NULL; i++)
		if (strlen(names[i]) == len && memcmp(names[i], s, len) == 0)
			return i;
	return -1;
}

static size_t
tmpl_line(const char *src, size_t off)
{
	size_t i, line = 1;

	for (i = 0; i < off; i++)
		line += src[i] == '\n';
	return line;
}

static int
tmpl_push(struct tmpl *t, size_t *cap, struct tmpl_node n)
{
	struct tmpl_node *nn;

	if (t->nnodes == *cap) {
		*cap = *cap ? *cap * 2 : 32;
		if ((nn = realloc(t->nodes, *cap * sizeof(*nn))) == NULL)
			return -1;
		t->nodes = nn;
	}
	t->nodes[t->nnodes++] = n;
	return 0;
}

struct tmpl *
tmpl_parse(const char *src, size_t len, const char *const *slots,
    const char *const *blocks, char *err, size_t errlen)
{
	struct tmpl *t = NULL;
	struct tmpl_node n;
	size_t cap = 0, i = 0, lit = 0, open = 0, name, namelen, j;
	const char *close;
	int in_block = 0, id;
	char kind;

	if ((t = calloc(1, sizeof(*t))) == NULL || (t->src = malloc(len + 1)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		goto fail;
	}
	memcpy(t->src, src, len);
	t->src[len] = '\0';
	while (i + 1 < len) {
		if (t->src[i] != '{' || t->src[i + 1] != '{') {
			i++;
			continue;
		}
		for (close = NULL, j = i + 2; j + 1 < len; j++)
			if (t->src[j] == '}' && t->src[j + 1] == '}') {
				close = t->src + j;
				break;
			}
		if (close == NULL) {
			(void)snprintf(err, errlen, "line %zu: unclosed {{",
			    tmpl_line(t->src, i));
			goto fail;
		}
		if (i > lit) {
			memset(&n, 0, sizeof(n));
			n.kind = TMPL_LIT;
			n.off = lit;
			n.len = i - lit;
			if (tmpl_push(t, &cap, n) < 0)
				goto nomem;
		}
		name = i + 2;
		kind = t->src[name];
		if (kind == '#' || kind == '/')
			name++;
		namelen = (size_t)(close - (t->src + name));
		for (j = 0; j < namelen; j++) {
			char c = t->src[name + j];

			if (!((c >= 'a' && c <= 'z') || c == '_' || (c >= '0' && c <= '9')))
				break;
		}
		if (namelen == 0 || j != namelen) {
			(void)snprintf(err, errlen, "line %zu: malformed marker",
			    tmpl_line(t->src, i));
			goto fail;
		}
		memset(&n, 0, sizeof(n));
		if (kind == '#' || kind == '/') {
			id = tmpl_lookup(blocks, t->src + name, namelen);
			if (id < 0) {
				(void)snprintf(err, errlen, "line %zu: unknown block \"%.*s\"",
				    tmpl_line(t->src, i), (int)namelen, t->src + name);
				goto fail;
			}
			if (kind == '#' && in_block) {
				(void)snprintf(err, errlen, "line %zu: blocks do not nest",
				    tmpl_line(t->src, i));
				goto fail;
			}
			if (kind == '/' && (!in_block || t->nodes[open].id != id)) {
				(void)snprintf(err, errlen, "line %zu: {{/%.*s}} closes no open block",
				    tmpl_line(t->src, i), (int)namelen, t->src + name);
				goto fail;
			}
			n.kind = kind == '#' ? TMPL_BLOCK : TMPL_END;
			n.id = id;
			if (kind == '#') {
				open = t->nnodes;
				in_block = 1;
			} else {
				t->nodes[open].end = t->nnodes;
				in_block = 0;
			}
		} else {
			if ((id = tmpl_lookup(slots, t->src + name, namelen)) < 0) {
				(void)snprintf(err, errlen, "line %zu: unknown slot \"%.*s\"",
				    tmpl_line(t->src, i), (int)namelen, t->src + name);
				goto fail;
			}
			n.kind = TMPL_SLOT;
			n.id = id;
		}
		if (tmpl_push(t, &cap, n) < 0)
			goto nomem;
		i = (size_t)(close - t->src) + 2;
		lit = i;
	}
	if (in_block) {
		(void)snprintf(err, errlen, "block \"%s\" is not closed",
		    blocks[t->nodes[open].id]);
		goto fail;
	}
	if (len > lit) {
		memset(&n, 0, sizeof(n));
		n.kind = TMPL_LIT;
		n.off = lit;
		n.len = len - lit;
		if (tmpl_push(t, &cap, n) < 0)
			goto nomem;
	}
	return t;
nomem:
	snprintf(err, errlen, "out of memory");
fail:
	tmpl_free(t);
	return NULL;
}

struct tmpl *
tmpl_load(const char *path, const char *const *slots, const char *const *blocks,
    char *err, size_t errlen)
{
	struct tmpl *t = NULL;
	char *text = NULL;
	FILE *f;
	long len;

	if ((f = fopen(path, "rb")) == NULL) {
		(void)snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (text = malloc((size_t)len + 1)) == NULL ||
	    fread(text, 1, (size_t)len, f) != (size_t)len) {
		(void)snprintf(err, errlen, "%s: cannot read", path);
		goto out;
	}
	t = tmpl_parse(text, (size_t)len, slots, blocks, err, errlen);
out:
	free(text);
	(void)fclose(f);
	return t;
}

void
tmpl_free(struct tmpl *t)
{
	if (t == NULL)
		return;
	free(t->nodes);
	free(t->src);
	free(t);
}

int
tmpl_render(const struct tmpl *t, struct buf *out, struct tmpl_val *vals, tmpl_row_fn row,
    void *ctx)
{
	size_t i, start = 0, row_i = 0;
	const struct tmpl_node *n;
	int rc;

	for (i = 0; i < t->nnodes; i++) {
		n = &t->nodes[i];
		switch (n->kind) {
		case TMPL_LIT:
			if (buf_append(out, t->src + n->off, n->len) < 0)
				return -1;
			break;
		case TMPL_SLOT:
			if (vals[n->id].s != NULL &&
			    tmpl_escape(out, vals[n->id].s, vals[n->id].len) < 0)
				return -1;
			break;
		case TMPL_BLOCK:
			row_i = 0;
			start = i;
			rc = row != NULL ? row(ctx, n->id, row_i, vals) : 0;
			if (rc < 0)
				return -1;
			if (rc == 0)
				i = n->end;	/* the loop's i++ steps past the end */
			break;
		case TMPL_END:
			/* Without row() a block is skipped whole, so its end is never reached. */
			rc = row != NULL ? row(ctx, n->id, ++row_i, vals) : 0;
			if (rc < 0)
				return -1;
			if (rc > 0)
				i = start;	/* again from the block's first node */
			break;
		}
	}
	return buf_failed(out) ? -1 : 0;
}
