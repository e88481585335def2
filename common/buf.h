/*
 * buf.h: a growable byte buffer with a hard cap.
 *
 * Response bodies and generated text are built in a buf.  A buf owns its memory (malloc);
 * resetting keeps the allocation, so a worker that builds similar responses over and over
 * stops allocating after the first few.  Growing past the cap fails, and the buf remembers
 * the failure (buf_failed()) so that a long run of appends needs one check at the end.
 */
#ifndef SLUICE_BUF_H
#define SLUICE_BUF_H

#include <stddef.h>
#include <string.h>

struct buf {
	char *data;		/* always NUL-terminated when non-NULL */
	size_t len;
	size_t size;
	size_t cap;		/* 0 means no cap beyond SIZE_MAX */
	int failed;		/* an append was refused (cap or out of memory) */
};

/* Sets an empty buf with the given cap; allocates nothing yet. */
void buf_init(struct buf *b, size_t cap);
/* Frees the memory; the buf may be buf_init()ed again. */
void buf_free(struct buf *b);
/* Empties the buf and clears the failure flag; keeps the memory.  A buf that grew past
 * keep bytes gives the excess back, so one huge response does not pin memory forever. */
void buf_reset(struct buf *b, size_t keep);
/* Cuts the buf back to its first len bytes, as it was when it was that long (a len at or
 * past its length changes nothing); the failure flag is kept. */
void buf_truncate(struct buf *b, size_t len);

/* Appends; returns 0, or -1 (and sets failed) past the cap or out of memory.  Inline for
 * the common case, room already there (the NUL included): responses are written a key, a
 * comma and a value at a time, tens of thousands of appends for a large one; the general
 * path (growth, the cap, a failure) is buf_append_grow(). */
int buf_append_grow(struct buf *b, const void *p, size_t len);
static inline int
buf_append(struct buf *b, const void *p, size_t len)
{
	if (!b->failed && len < b->size - b->len && len <= b->cap - b->len && len > 0) {
		memcpy(b->data + b->len, p, len);
		b->len += len;
		b->data[b->len] = '\0';
		return 0;
	}
	return buf_append_grow(b, p, len);
}
/* Inline: SQL and JSON text is built a byte at a time in places, on every request.  The
 * common case, room already there (the NUL included), without the general path. */
static inline int
buf_putc(struct buf *b, char c)
{
	if (!b->failed && b->len + 2 <= b->size && b->len < b->cap) {
		b->data[b->len++] = c;
		b->data[b->len] = '\0';
		return 0;
	}
	return buf_append(b, &c, 1);
}
int buf_puts(struct buf *b, const char *s);
int buf_printf(struct buf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A decimal integer, without printf's cost (SQL generation writes many of them). */
int buf_put_int(struct buf *b, long long v);

/* Makes room for n more bytes; returns a pointer to them (the caller then calls
 * buf_commit(b, n_written)), or NULL past the cap. */
char *buf_reserve(struct buf *b, size_t n);
void buf_commit(struct buf *b, size_t n);

int buf_failed(const struct buf *b);

#endif /* SLUICE_BUF_H */
