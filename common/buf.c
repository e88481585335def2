/* buf.c: see buf.h. */
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "str.h"

void
buf_init(struct buf *b, size_t cap)
{
	b->data = NULL;
	b->len = b->size = 0;
	b->cap = cap ? cap : SIZE_MAX - 1;
	b->failed = 0;
}

void
buf_free(struct buf *b)
{
	free(b->data);
	b->data = NULL;
	b->len = b->size = 0;
}

void
buf_reset(struct buf *b, size_t keep)
{
	if (b->size > keep) {
		free(b->data);
		b->data = NULL;
		b->size = 0;
	}
	b->len = 0;
	if (b->data != NULL)
		b->data[0] = '\0';
	b->failed = 0;
}

void
buf_truncate(struct buf *b, size_t len)
{
	if (len < b->len) {
		b->len = len;
		b->data[len] = '\0';
	}
}

char *
buf_reserve(struct buf *b, size_t n)
{
	size_t need, size;
	char *p;

	if (b->failed)
		return NULL;
	if (n > b->cap - b->len) {
		b->failed = 1;
		return NULL;
	}
	need = b->len + n + 1;		/* room for the NUL */
	if (need > b->size) {
		size = b->size ? b->size : 256;
		while (size < need)
			size = size > SIZE_MAX / 2 ? need : size * 2;
		if ((p = realloc(b->data, size)) == NULL) {
			b->failed = 1;
			return NULL;
		}
		b->data = p;
		b->size = size;
	}
	return b->data + b->len;
}

void
buf_commit(struct buf *b, size_t n)
{
	b->len += n;
	b->data[b->len] = '\0';
}

int
buf_append_grow(struct buf *b, const void *p, size_t len)
{
	char *dst;

	if ((dst = buf_reserve(b, len)) == NULL)
		return -1;
	if (len > 0)
		memcpy(dst, p, len);
	buf_commit(b, len);
	return 0;
}

int
buf_put_int(struct buf *b, long long v)
{
	char t[STR_INT_MAX];

	return buf_append(b, t, str_from_int(t, v));
}

int
buf_puts(struct buf *b, const char *s)
{
	return buf_append(b, s, strlen(s));
}

int
buf_printf(struct buf *b, const char *fmt, ...)
{
	va_list ap;
	char *dst;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0 || (dst = buf_reserve(b, (size_t)n)) == NULL) {
		b->failed = 1;
		return -1;
	}
	va_start(ap, fmt);
	(void)vsnprintf(dst, (size_t)n + 1, fmt, ap);
	va_end(ap);
	buf_commit(b, (size_t)n);
	return 0;
}

int
buf_failed(const struct buf *b)
{
	return b->failed;
}
