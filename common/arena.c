/*
 * arena.c: a bump allocator over a chain of malloc'd blocks (see arena.h).
 *
 * Blocks are 64 KiB, or larger when one allocation needs it.  The first block survives
 * arena_reset(), so the common request that fits in it costs no malloc at all.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"

#define ARENA_BLOCK	(64 * 1024)
#define ARENA_ALIGN	16

struct arena_block {
	struct arena_block *next;
	size_t size;		/* usable bytes after the header */
	size_t used;
	_Alignas(ARENA_ALIGN) unsigned char data[];
};

struct arena {
	struct arena_block *head;	/* current block; the first block is last in the chain */
	size_t cap;			/* on used */
	size_t used;			/* bytes handed out since the last reset */
};

static struct arena_block *
arena_block_new(size_t size)
{
	struct arena_block *b;

	if (size > SIZE_MAX - sizeof(*b))
		return NULL;
	if ((b = malloc(sizeof(*b) + size)) == NULL)
		return NULL;
	b->next = NULL;
	b->size = size;
	b->used = 0;
	return b;
}

struct arena *
arena_new(size_t cap)
{
	struct arena *a;

	if ((a = calloc(1, sizeof(*a))) == NULL)
		return NULL;
	if ((a->head = arena_block_new(ARENA_BLOCK)) == NULL) {
		free(a);
		return NULL;
	}
	a->cap = cap;
	return a;
}

void
arena_free(struct arena *a)
{
	struct arena_block *b, *next;

	if (a == NULL)
		return;
	for (b = a->head; b != NULL; b = next) {
		next = b->next;
		free(b);
	}
	free(a);
}

void
arena_reset(struct arena *a)
{
	struct arena_block *b;

	while (a->head->next != NULL) {
		b = a->head;
		a->head = b->next;
		free(b);
	}
	a->head->used = 0;
	a->used = 0;
}

void *
arena_alloc(struct arena *a, size_t n)
{
	struct arena_block *b = a->head;
	size_t off, size;
	void *p;

	if (n == 0)
		n = 1;
	if (n > SIZE_MAX - ARENA_ALIGN)
		return NULL;
	n = (n + ARENA_ALIGN - 1) & ~(size_t)(ARENA_ALIGN - 1);
	if (n > a->cap || a->used > a->cap - n)
		return NULL;
	off = b->used;
	if (n > b->size - off) {
		size = n > ARENA_BLOCK ? n : ARENA_BLOCK;
		if ((b = arena_block_new(size)) == NULL)
			return NULL;
		b->next = a->head;
		a->head = b;
		off = 0;
	}
	p = b->data + off;
	b->used = off + n;
	a->used += n;
	return p;
}

char *
arena_strndup(struct arena *a, const char *s, size_t len)
{
	char *p;

	if (len == SIZE_MAX || (p = arena_alloc(a, len + 1)) == NULL)
		return NULL;
	memcpy(p, s, len);
	p[len] = '\0';
	return p;
}

size_t
arena_used(const struct arena *a)
{
	return a->used;
}
