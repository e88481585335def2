/*
 * arena.h: the per-request arena.
 *
 * Every request gets one arena: decoded parameters, header values, the request body and
 * scratch strings are carved from it and all freed at once by arena_reset() after the
 * request ends.  The arena has a hard cap; an allocation past it fails (NULL) and the
 * request is answered 413 or 500 instead of growing the worker without bound.  The first
 * block is kept across resets so that a steady stream of small requests allocates nothing.
 */
#ifndef SLUICE_ARENA_H
#define SLUICE_ARENA_H

#include <stddef.h>

struct arena;

/* Creates an arena that hands out at most cap bytes between resets (so it holds at most
 * cap plus one 64 KiB block).  Returns NULL when out of memory.  Caller frees with
 * arena_free(). */
struct arena *arena_new(size_t cap);
void arena_free(struct arena *a);

/* Frees everything allocated since the last reset but the first block. */
void arena_reset(struct arena *a);

/* Returns n bytes aligned for any type, or NULL past the cap (or n == 0 overflow).  The
 * memory is owned by the arena until the next arena_reset(). */
void *arena_alloc(struct arena *a, size_t n);

/* Copies s[0..len) and adds a NUL.  NULL past the cap. */
char *arena_strndup(struct arena *a, const char *s, size_t len);

/* Bytes handed out since the last reset. */
size_t arena_used(const struct arena *a);

#endif /* SLUICE_ARENA_H */
