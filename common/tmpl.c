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

/* The state of one parse: the template being built and where an error is written. */
struct tmpl_parser {
	struct tmpl *t;
	size_t cap;			/* nodes allocated */
	const char *const *slots, *const *blocks;
	char *err;
	size_t errlen;
	size_t open;			/* the open block's node, when in_block */
	int in_block;
};

/* Appends a node; 0, or -1 with "out of memory" in the error. */
static int
tmpl_add(struct tmpl_parser *p, struct tmpl_node n)
{
	if (tmpl_push(p->t, &p->cap, n) == 0)
		return 0;
	(void)snprintf(p->err, p->errlen, "out of memory");
	return -1;
}

/* The literal text src[off, off + len) as a node, when not empty; 0 or -1. */
static int
tmpl_add_lit(struct tmpl_parser *p, size_t off, size_t len)
{
	struct tmpl_node n;

	if (len == 0)
		return 0;
	memset(&n, 0, sizeof(n));
	n.kind = TMPL_LIT;
	n.off = off;
	n.len = len;
	return tmpl_add(p, n);
}

/* 1 when a marker's name is one or more of [a-z0-9_]. */
static int
tmpl_name_ok(const char *s, size_t len)
{
	size_t j;

	for (j = 0; j < len; j++)
		if (!((s[j] >= 'a' && s[j] <= 'z') || s[j] == '_' || (s[j] >= '0' && s[j] <= '9')))
			return 0;
	return len > 0;
}

/* A block's start ({{#name}}) or end ({{/name}}) at src[at]; 0, or -1 with the error. */
static int
tmpl_add_block(struct tmpl_parser *p, size_t at, char kind, const char *name,
    size_t namelen)
{
	struct tmpl *t = p->t;
	struct tmpl_node n;
	int id;

	if ((id = tmpl_lookup(p->blocks, name, namelen)) < 0) {
		(void)snprintf(p->err, p->errlen, "line %zu: unknown block \"%.*s\"",
		    tmpl_line(t->src, at), (int)namelen, name);
		return -1;
	}
	if (kind == '#' && p->in_block) {
		(void)snprintf(p->err, p->errlen, "line %zu: blocks do not nest",
		    tmpl_line(t->src, at));
		return -1;
	}
	if (kind == '/' && (!p->in_block || t->nodes[p->open].id != id)) {
		(void)snprintf(p->err, p->errlen, "line %zu: {{/%.*s}} closes no open block",
		    tmpl_line(t->src, at), (int)namelen, name);
		return -1;
	}
	memset(&n, 0, sizeof(n));
	n.kind = kind == '#' ? TMPL_BLOCK : TMPL_END;
	n.id = id;
	if (kind == '#') {
		p->open = t->nnodes;
		p->in_block = 1;
	} else {
		t->nodes[p->open].end = t->nnodes;
		p->in_block = 0;
	}
	return tmpl_add(p, n);
}

/* The marker {{...}} at src[at], whose "}}" is at close; 0, or -1 with the error. */
static int
tmpl_add_marker(struct tmpl_parser *p, size_t at, const char *close)
{
	struct tmpl *t = p->t;
	struct tmpl_node n;
	size_t name = at + 2, namelen;
	char kind = t->src[name];
	int id;

	if (kind == '#' || kind == '/')
		name++;
	namelen = (size_t)(close - (t->src + name));
	if (!tmpl_name_ok(t->src + name, namelen)) {
		(void)snprintf(p->err, p->errlen, "line %zu: malformed marker",
		    tmpl_line(t->src, at));
		return -1;
	}
	if (kind == '#' || kind == '/')
		return tmpl_add_block(p, at, kind, t->src + name, namelen);
	if ((id = tmpl_lookup(p->slots, t->src + name, namelen)) < 0) {
		(void)snprintf(p->err, p->errlen, "line %zu: unknown slot \"%.*s\"",
		    tmpl_line(t->src, at), (int)namelen, t->src + name);
		return -1;
	}
	memset(&n, 0, sizeof(n));
	n.kind = TMPL_SLOT;
	n.id = id;
	return tmpl_add(p, n);
}

struct tmpl *
tmpl_parse(const char *src, size_t len, const char *const *slots,
    const char *const *blocks, char *err, size_t errlen)
{
	struct tmpl_parser p = { NULL, 0, slots, blocks, err, errlen, 0, 0 };
	struct tmpl *t = NULL;
	size_t i = 0, lit = 0, j;
	const char *close;

	if ((t = calloc(1, sizeof(*t))) == NULL || (t->src = malloc(len + 1)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		goto fail;
	}
	p.t = t;
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
		if (tmpl_add_lit(&p, lit, i - lit) < 0 || tmpl_add_marker(&p, i, close) < 0)
			goto fail;
		i = (size_t)(close - t->src) + 2;
		lit = i;
	}
	if (p.in_block) {
		(void)snprintf(err, errlen, "block \"%s\" is not closed",
		    blocks[t->nodes[p.open].id]);
		goto fail;
	}
	if (tmpl_add_lit(&p, lit, len - lit) < 0)
		goto fail;
	return t;
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
