/*
 * reqid.c: see reqid.h.  The current id lives in thread-local storage, a copy, so that
 * a log line written after fcgi2 has freed the request's parameters still names it
 * correctly, and so that no caller has to pass it along.
 */
#include <stdint.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "reqid.h"

static _Thread_local char reqid_buf[REQID_MAX + 1];
static _Thread_local int reqid_isset;

/* [A-Za-z0-9._:@-]: '@' and '-' are in mod_unique_id's alphabet, '.' and ':' in the ids
 * of common tracers; nothing here ends a header line, a JSON string or a log field. */
static int
reqid_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	    c == '.' || c == '_' || c == ':' || c == '@' || c == '-';
}

int
reqid_valid(const char *s, size_t len)
{
	size_t i;

	if (s == NULL || len == 0 || len > REQID_MAX)
		return 0;
	for (i = 0; i < len; i++)
		if (!reqid_char((unsigned char)s[i]))
			return 0;
	return 1;
}

const char *
reqid_pick(const char *const *c, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (c[i] != NULL && reqid_valid(c[i], strnlen(c[i], REQID_MAX + 1)))
			return c[i];
	return NULL;
}

void
reqid_seed(struct reqid_gen *g)
{
	struct timespec ts;

	if (getrandom(&g->s, sizeof(g->s), GRND_NONBLOCK) == (ssize_t)sizeof(g->s))
		return;
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	g->s = (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
	g->s ^= (uint64_t)(uintptr_t)g;
}

/* splitmix64: a new 64-bit word per call from a counter; ids need to be distinct, not
 * secret. */
static uint64_t
reqid_next(struct reqid_gen *g)
{
	uint64_t z = (g->s += 0x9e3779b97f4a7c15u);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9u;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebu;
	return z ^ (z >> 31);
}

void
reqid_make(struct reqid_gen *g, char out[REQID_GEN_LEN + 1])
{
	static const char hex[] = "0123456789abcdef";
	uint64_t w = 0;
	int i;

	for (i = 0; i < REQID_GEN_LEN; i++) {
		if (i % 16 == 0)
			w = reqid_next(g);
		out[i] = hex[w & 15];
		w >>= 4;
	}
	out[REQID_GEN_LEN] = '\0';
}

int
reqid_set(const char *id)
{
	size_t len = id != NULL ? strnlen(id, REQID_MAX + 1) : 0;

	if (!reqid_valid(id, len)) {
		reqid_clear();
		return -1;
	}
	memcpy(reqid_buf, id, len);
	reqid_buf[len] = '\0';
	reqid_isset = 1;
	return 0;
}

void
reqid_clear(void)
{
	reqid_isset = 0;
	reqid_buf[0] = '\0';
}

const char *
reqid_current(void)
{
	return reqid_isset ? reqid_buf : NULL;
}
