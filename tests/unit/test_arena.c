/* test_arena: alignment, growth, the hard cap and reset. */
#include <stdint.h>
#include <string.h>

#include "arena.h"
#include "../lib/harness.h"

static void
test_alloc_aligned(void)
{
	struct arena *a = arena_new(1 << 20);
	size_t i;

	CHECK(a != NULL);
	for (i = 1; i < 100; i++) {
		unsigned char *p = arena_alloc(a, i);

		CHECK(p != NULL);
		CHECK(((uintptr_t)p & 15) == 0);
		memset(p, 0xab, i);
	}
	arena_free(a);
}

static void
test_cap(void)
{
	struct arena *a = arena_new(256 * 1024);

	/* The cap counts what is handed out, not the blocks behind it. */

	CHECK(arena_alloc(a, 200 * 1024) != NULL);
	CHECK(arena_alloc(a, 100 * 1024) == NULL);	/* past the cap */
	CHECK(arena_alloc(a, SIZE_MAX) == NULL);
	CHECK(arena_alloc(a, SIZE_MAX - 8) == NULL);
	arena_reset(a);
	CHECK_INT(arena_used(a), 0);
	CHECK(arena_alloc(a, 200 * 1024) != NULL);	/* the cap applies per request */
	arena_free(a);
}

static void
test_strndup_and_reset(void)
{
	struct arena *a = arena_new(1 << 20);
	char *s = arena_strndup(a, "hello world", 5);

	CHECK_STR(s, "hello");
	CHECK(arena_used(a) >= 6);
	/* Many blocks, then a reset keeps the arena usable. */
	for (int i = 0; i < 10; i++)
		CHECK(arena_alloc(a, 60 * 1024) != NULL);
	arena_reset(a);
	CHECK_INT(arena_used(a), 0);
	s = arena_strndup(a, "x", 1);
	CHECK_STR(s, "x");
	arena_free(a);
	arena_free(NULL);
}

int
main(void)
{
	RUN(test_alloc_aligned);
	RUN(test_cap);
	RUN(test_strndup_and_reset);
	return harness_done();
}
