/*
 * pagecache.c: the chat page's cache of rendered message lists (see pagecache.h).
 *
 * One mutex guards the slot table, held only to look up, take a reference or swap an
 * entry; copying a list into a response happens outside it, on an entry that cannot
 * change or go away while it is held.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <zlib.h>

#include "arena.h"
#include "buf.h"
#include "chat/pagecache.h"
#include "chat/version.h"

/*
 * zlib's levels.  A list is compressed fast when it is stored (a miss: the default level
 * would take longer than rendering the page without the cache, for somewhat less text;
 * docs/benchmarks.md, "The chat page cache's levels"), and again at the default level by
 * the request that finds it the CHAT_CACHE_PROMOTE-th time: a list written to between most
 * reads never pays the slow level, one read many times is sent at its best.  Heads and
 * tails (a few kB, per request) use the default level.
 */
#define CHAT_CACHE_ZLEVEL	Z_DEFAULT_COMPRESSION
#define CHAT_CACHE_ZFAST	1
#define CHAT_CACHE_PROMOTE	2

static pthread_mutex_t chat_cache_mu = PTHREAD_MUTEX_INITIALIZER;
static struct chat_frag **chat_cache_slot;	/* chat_cache_nslots, under the mutex */
static size_t chat_cache_nslots;

static size_t
chat_cache_index(int64_t channel)
{
	return (size_t)((uint64_t)channel % chat_cache_nslots);
}

int
chat_cache_init(size_t nslots)
{
	int rc = 0;

	if (nslots < 1)
		return -1;
	pthread_mutex_lock(&chat_cache_mu);
	/* Made already: the first size stays. */
	if (chat_cache_slot == NULL) {
		if ((chat_cache_slot = calloc(nslots, sizeof(struct chat_frag *))) != NULL)
			chat_cache_nslots = nslots;
		else
			rc = -1;
	}
	pthread_mutex_unlock(&chat_cache_mu);
	return rc;
}

static void
chat_frag_free(struct chat_frag *f)
{
	if (f == NULL)
		return;
	free(f->text);
	free(f->z);
	free(f->authors);
	free(f->rows);
	free(f->rowtext);
	free(f->chunks);
	free(f);
}

void
chat_cache_release(struct chat_frag *f)
{
	if (f != NULL && __atomic_sub_fetch(&f->refs, 1, __ATOMIC_ACQ_REL) == 0)
		chat_frag_free(f);
}

/*
 * Raw deflate (no header) of in[0..len) into out[outcap], ending with flush (a sync
 * flush leaves the stream open on a byte boundary, Z_FINISH closes it).  0 or -1.
 */
static int
chat_deflate_raw(z_stream *z, const char *in, size_t len, int flush, unsigned char *out,
    size_t outcap, size_t *outlen)
{
	int rc;

	z->next_in = (Bytef *)(uintptr_t)in;
	z->avail_in = (uInt)len;
	z->next_out = out;
	z->avail_out = (uInt)outcap;
	rc = deflate(z, flush);
	/* All input taken, and the flush complete: the stream's end, or room left over. */
	if (z->avail_in != 0 || (flush == Z_FINISH ? rc != Z_STREAM_END :
	    rc != Z_OK || z->avail_out == 0))
		return -1;
	*outlen = outcap - z->avail_out;
	return 0;
}

/*
 * The window (log2, 9..15) and hash memory level for deflating at most len bytes: a
 * window no larger than the input loses no match, and zlib's own (32 kB, level 8) would
 * cost more to set up than to compress a page's few kB of head (76 us against 14 us for
 * 3.8 kB, the same bytes out).
 */
#define CHAT_ZMEMLEVEL	6

static int
chat_zbits(size_t len)
{
	int bits = 9;

	while (bits < 15 && ((size_t)1 << bits) < len)
		bits++;
	return bits;
}

/* A deflate stream's output bound for len bytes with one flush (zlib's, plus its flush
 * markers). */
static size_t
chat_deflate_bound(size_t len)
{
	return compressBound((uLong)len) + 16;
}

/* Copies the string v into the entry's row text at *at; its copy in *dst. */
static void
chat_row_str(char *text, size_t *at, const struct tmpl_val *v, struct tmpl_val *dst)
{
	dst->s = text + *at;
	dst->len = v->len;
	if (v->len > 0)
		memcpy(text + *at, v->s, v->len);
	*at += v->len;
}

/* Copies rows[0..n) into f, their strings into one block; 0, or -1 when out of memory. */
static int
chat_frag_rows(struct chat_frag *f, const struct chat_row *rows, size_t n)
{
	size_t i, total = 1, at = 0;

	if (n == 0)
		return 0;
	for (i = 0; i < n; i++)
		total += rows[i].id.len + rows[i].nick.len + rows[i].content.len;
	if ((f->rows = malloc(n * sizeof(*rows))) == NULL ||
	    (f->rowtext = malloc(total)) == NULL)
		return -1;
	for (i = 0; i < n; i++) {
		f->rows[i] = rows[i];
		chat_row_str(f->rowtext, &at, &rows[i].id, &f->rows[i].id);
		chat_row_str(f->rowtext, &at, &rows[i].nick, &f->rows[i].nick);
		chat_row_str(f->rowtext, &at, &rows[i].content, &f->rows[i].content);
	}
	f->nrows = n;
	return 0;
}

/* The chunk of base whose text is text[0..len), or NULL. */
static const struct chat_chunk *
chat_chunk_find(const struct chat_frag *base, const char *text, size_t len)
{
	size_t i;

	for (i = 0; base != NULL && i < base->nchunks; i++)
		if (base->chunks[i].len == len &&
		    memcmp(base->text + base->chunks[i].at, text, len) == 0)
			return &base->chunks[i];
	return NULL;
}

/*
 * Compresses f's text chunk by chunk into f->z (allocated to cap): a chunk whose text
 * base holds too has its blocks copied, any other is compressed by z (a fresh stream,
 * so that no chunk's matches reach into another) at z's level.  0 or -1.
 */
static int
chat_frag_deflate(struct chat_frag *f, z_stream *z, int level, size_t cap,
    const struct chat_frag *base)
{
	const struct chat_chunk *old;
	struct chat_chunk *c;
	size_t i, n;

	f->level = CHAT_CACHE_ZLEVEL;
	for (i = 0; i < f->nchunks; i++) {
		c = &f->chunks[i];
		c->zat = f->zlen;
		if (base != NULL &&
		    (old = chat_chunk_find(base, f->text + c->at, c->len)) != NULL) {
			memcpy(f->z + f->zlen, base->z + old->zat, old->zlen);
			c->zlen = old->zlen;
			c->crc = old->crc;
			c->level = old->level;
		} else {
			if (deflateReset(z) != Z_OK || chat_deflate_raw(z, f->text + c->at,
			    c->len, Z_SYNC_FLUSH, f->z + f->zlen, cap - f->zlen, &n) != 0)
				return -1;
			c->zlen = n;
			c->crc = crc32(0L, (const Bytef *)f->text + c->at, (uInt)c->len);
			c->level = level;
		}
		f->zlen += c->zlen;
		f->crc = i == 0 ? c->crc : crc32_combine(f->crc, c->crc, (z_off_t)c->len);
		if (c->level != CHAT_CACHE_ZLEVEL)
			f->level = c->level;
	}
	return 0;
}

/* f's chunks from the cuts of l (one chunk without them); the room their compressed
 * blocks may need in *cap.  0, or -1 when out of memory or the cuts are not in order. */
static int
chat_frag_chunks(struct chat_frag *f, const struct chat_list *l, size_t *cap)
{
	size_t i, n = l->ncuts > 0 ? l->ncuts : 1, at, end;

	if ((f->chunks = calloc(n, sizeof(*f->chunks))) == NULL)
		return -1;
	f->nchunks = n;
	*cap = 0;
	for (i = 0; i < n; i++) {
		at = l->ncuts > 0 ? l->cuts[i] : 0;
		end = i + 1 < n ? l->cuts[i + 1] : l->len;
		if (at > end || end > l->len || (i == 0 && at != 0))
			return -1;
		f->chunks[i].at = at;
		f->chunks[i].len = end - at;
		*cap += chat_deflate_bound(end - at);
	}
	return 0;
}

/* A new entry, held twice (the slot's reference and the caller's), its list compressed
 * at level but for the chunks it shares with l->base; NULL when out of memory or
 * compression failed. */
static struct chat_frag *
chat_frag_make(const struct chat_list *l, int level)
{
	struct chat_frag *f;
	z_stream z;
	size_t cap = 0, n = l->nauthors, i, most = 0;
	int ok;

	if (l->len > 0x7fffffffu || (f = calloc(1, sizeof(*f))) == NULL)
		return NULL;
	f->channel = l->channel;
	f->ver = l->ver;
	f->refs = 2;	/* the slot's and the caller's */
	f->len = l->len;
	f->nauthors = n;
	if (chat_frag_rows(f, l->rows, l->nrows) < 0 || chat_frag_chunks(f, l, &cap) < 0 ||
	    (f->text = malloc(l->len + 1)) == NULL || (f->z = malloc(cap)) == NULL ||
	    (n > 0 && (f->authors = malloc(n * sizeof(*l->authors))) == NULL)) {
		chat_frag_free(f);
		return NULL;
	}
	if (n > 0)
		memcpy(f->authors, l->authors, n * sizeof(*l->authors));
	memcpy(f->text, l->text, l->len);
	memset(&z, 0, sizeof(z));
	for (i = 0; i < f->nchunks; i++)
		if (f->chunks[i].len > most)
			most = f->chunks[i].len;
	if (deflateInit2(&z, level, Z_DEFLATED, -chat_zbits(most), CHAT_ZMEMLEVEL,
	    Z_DEFAULT_STRATEGY) != Z_OK) {
		chat_frag_free(f);
		return NULL;
	}
	ok = chat_frag_deflate(f, &z, level, cap, l->base) == 0;
	(void)deflateEnd(&z);
	if (!ok) {
		chat_frag_free(f);
		return NULL;
	}
	return f;
}

/* Puts f in its slot unless that holds the same channel with a newer label, or (when
 * expect is not NULL) anything but expect; f, or NULL (f is then freed). */
static struct chat_frag *
chat_cache_store(struct chat_frag *f, const struct chat_frag *expect)
{
	struct chat_frag *old;
	size_t i;

	pthread_mutex_lock(&chat_cache_mu);
	if (chat_cache_slot == NULL) {
		/* No table (chat_cache_init() not called, or it failed): nothing is kept. */
		pthread_mutex_unlock(&chat_cache_mu);
		chat_frag_free(f);
		return NULL;
	}
	i = chat_cache_index(f->channel);
	old = chat_cache_slot[i];
	/* Counters only grow: an entry of the same channel with a newer label stays. */
	if ((old != NULL && old->channel == f->channel && old->ver > f->ver) ||
	    (expect != NULL && old != expect)) {
		pthread_mutex_unlock(&chat_cache_mu);
		chat_frag_free(f);
		return NULL;
	}
	chat_cache_slot[i] = f;
	pthread_mutex_unlock(&chat_cache_mu);
	chat_cache_release(old);
	return f;
}

struct chat_frag *
chat_cache_put_list(const struct chat_list *l)
{
	/* A list made from another is mostly that one's blocks: the few new chunks are worth
	 * the default level at once.  A list read whole is compressed fast. */
	struct chat_frag *f = chat_frag_make(l, l->base != NULL ? CHAT_CACHE_ZLEVEL :
	    CHAT_CACHE_ZFAST);

	return f != NULL ? chat_cache_store(f, NULL) : NULL;
}

struct chat_frag *
chat_cache_put(int64_t channel, uint64_t ver, const struct chat_author *authors, size_t n,
    const struct chat_row *rows, size_t nrows, const char *text, size_t len)
{
	struct chat_list l;

	memset(&l, 0, sizeof(l));
	l.channel = channel;
	l.ver = ver;
	l.authors = authors;
	l.nauthors = n;
	l.rows = rows;
	l.nrows = nrows;
	l.text = text;
	l.len = len;
	return chat_cache_put_list(&l);
}

/* f again, its chunks as they are but all at the default level; NULL when out of
 * memory or compression failed. */
static struct chat_frag *
chat_frag_promoted(const struct chat_frag *f)
{
	struct chat_list l;
	size_t *cuts, i;
	struct chat_frag *g;

	if ((cuts = malloc(f->nchunks * sizeof(*cuts))) == NULL)
		return NULL;
	for (i = 0; i < f->nchunks; i++)
		cuts[i] = f->chunks[i].at;
	memset(&l, 0, sizeof(l));
	l.channel = f->channel;
	l.ver = f->ver;
	l.authors = f->authors;
	l.nauthors = f->nauthors;
	l.rows = f->rows;
	l.nrows = f->nrows;
	l.text = f->text;
	l.len = f->len;
	l.cuts = cuts;
	l.ncuts = f->nchunks;
	g = chat_frag_make(&l, CHAT_CACHE_ZLEVEL);
	free(cuts);
	return g;
}

/*
 * The CHAT_CACHE_PROMOTE-th hit of a fast-compressed entry: the same list compressed at
 * the default level takes its slot, if f still holds it.  Returns the entry to serve,
 * held (f, released, when the new one is in its place).
 */
static struct chat_frag *
chat_cache_promote(struct chat_frag *f)
{
	struct chat_frag *g;

	if (f->level == CHAT_CACHE_ZLEVEL ||
	    __atomic_add_fetch(&f->hits, 1, __ATOMIC_RELAXED) != CHAT_CACHE_PROMOTE)
		return f;
	g = chat_frag_promoted(f);
	if (g == NULL || (g = chat_cache_store(g, f)) == NULL)
		return f;
	chat_cache_release(f);
	return g;
}

struct chat_frag *
chat_cache_get(int64_t channel, uint64_t ver)
{
	struct chat_frag *f;
	size_t i;

	pthread_mutex_lock(&chat_cache_mu);
	f = chat_cache_slot == NULL ? NULL : chat_cache_slot[chat_cache_index(channel)];
	if (f != NULL && f->channel == channel && f->ver == ver)
		__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
	else
		f = NULL;
	pthread_mutex_unlock(&chat_cache_mu);
	/* The entry cannot change while held: its authors are checked outside the lock. */
	for (i = 0; f != NULL && i < f->nauthors; i++)
		if (chat_version_user(f->authors[i].slot) != f->authors[i].ver) {
			chat_cache_release(f);
			f = NULL;
		}
	return f != NULL ? chat_cache_promote(f) : NULL;
}

struct chat_frag *
chat_cache_peek(int64_t channel)
{
	struct chat_frag *f;

	pthread_mutex_lock(&chat_cache_mu);
	f = chat_cache_slot == NULL ? NULL : chat_cache_slot[chat_cache_index(channel)];
	if (f != NULL && f->channel == channel)
		__atomic_add_fetch(&f->refs, 1, __ATOMIC_RELAXED);
	else
		f = NULL;
	pthread_mutex_unlock(&chat_cache_mu);
	return f;
}

int
chat_cache_splice(struct buf *body, size_t at, const struct chat_frag *f, struct arena *a)
{
	size_t tail = body->len - at;
	char *copy = NULL;

	if (at > body->len)
		return -1;
	if (tail > 0) {
		if ((copy = arena_alloc(a, tail)) == NULL)
			return -1;
		memcpy(copy, body->data + at, tail);
	}
	body->len = at;
	if (buf_append(body, f->text, f->len) < 0 ||
	    (tail > 0 && buf_append(body, copy, tail) < 0))
		return -1;
	return 0;
}

/* Appends v as 4 little-endian bytes (gzip's trailer). */
static void
chat_le32(unsigned char *o, unsigned long v)
{
	o[0] = (unsigned char)(v & 0xff);
	o[1] = (unsigned char)((v >> 8) & 0xff);
	o[2] = (unsigned char)((v >> 16) & 0xff);
	o[3] = (unsigned char)((v >> 24) & 0xff);
}

int
chat_cache_gzip(struct buf *body, size_t at, size_t skip, const struct chat_frag *f,
    struct arena *a)
{
	/* gzip member header: deflate, no flags, no time, no extra flags, OS unix. */
	static const unsigned char head[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
	const char *tail;
	size_t headlen = at, taillen, cap, n = 0, m = 0, total;
	unsigned char *out;
	unsigned long crc;
	z_stream z;
	int ok;

	if (at + skip > body->len || body->len > 0x7fffffffu)
		return -1;
	tail = body->data + at + skip;
	taillen = body->len - at - skip;
	cap = sizeof(head) + chat_deflate_bound(headlen) + f->zlen +
	    chat_deflate_bound(taillen) + 8;
	if ((out = arena_alloc(a, cap)) == NULL)
		return -1;
	memcpy(out, head, sizeof(head));
	total = sizeof(head);
	memset(&z, 0, sizeof(z));
	if (deflateInit2(&z, CHAT_CACHE_ZLEVEL, Z_DEFLATED,
	    -chat_zbits(headlen > taillen ? headlen : taillen), CHAT_ZMEMLEVEL,
	    Z_DEFAULT_STRATEGY) != Z_OK)
		return -1;
	/* The head ends on a byte boundary, the list's blocks follow, then a fresh stream
	 * for the tail (its matches may not reach back into what it did not see). */
	ok = chat_deflate_raw(&z, body->data, headlen, Z_SYNC_FLUSH, out + total, cap - total,
	    &n) == 0;
	if (ok) {
		total += n;
		memcpy(out + total, f->z, f->zlen);
		total += f->zlen;
		ok = deflateReset(&z) == Z_OK && chat_deflate_raw(&z, tail, taillen, Z_FINISH,
		    out + total, cap - total, &m) == 0;
	}
	(void)deflateEnd(&z);
	if (!ok || cap - total - m < 8)
		return -1;
	total += m;
	crc = crc32(0L, (const Bytef *)body->data, (uInt)headlen);
	crc = crc32_combine(crc, f->crc, (z_off_t)f->len);
	crc = crc32_combine(crc, crc32(0L, (const Bytef *)tail, (uInt)taillen),
	    (z_off_t)taillen);
	chat_le32(out + total, crc);
	chat_le32(out + total + 4, (unsigned long)(headlen + f->len + taillen));
	total += 8;
	body->len = 0;
	return buf_append(body, out, total);
}

void
chat_cache_free(void)
{
	size_t i;

	pthread_mutex_lock(&chat_cache_mu);
	for (i = 0; i < chat_cache_nslots; i++)
		chat_cache_release(chat_cache_slot[i]);
	free(chat_cache_slot);
	chat_cache_slot = NULL;
	chat_cache_nslots = 0;
	pthread_mutex_unlock(&chat_cache_mu);
}
