/*
 * fname.c: the stored names of files (see fname.h).
 */
#include <string.h>

#include "fname.h"
#include "token.h"

static int
fname_lower(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9');
}

static int
fname_upper(unsigned char c)
{
	return c >= 'A' && c <= 'Z';
}

/* The cleaned extension of base b[0..blen) into ext (FNAME_EXT_MAX + 1 bytes): its
 * length (0: none), and in *cut where the base name ends. */
static size_t
fname_ext(const char *b, size_t blen, char *ext, size_t *cut)
{
	const char *dot = NULL;
	size_t i, n = 0, from;

	for (i = blen; i > 1 && dot == NULL; i--)
		if (b[i - 1] == '.')
			dot = b + i - 1;
	*cut = blen;
	ext[0] = '\0';
	if (dot == NULL)
		return 0;
	*cut = (size_t)(dot - b);
	ext[n++] = '.';
	for (i = *cut + 1; i < blen; i++) {
		unsigned char c = (unsigned char)b[i];

		if (fname_lower(c) || fname_upper(c))
			ext[n++] = (char)(fname_upper(c) ? c + 32 : c);
		/* Keep the last characters: slide once past the cap. */
		if (n > FNAME_EXT_MAX) {
			memmove(ext + 1, ext + 2, FNAME_EXT_MAX - 1);
			n--;
		}
	}
	from = n > 1 ? n : 0;
	ext[from] = '\0';
	return from;
}

/* The cleaned base name of b[0..blen) into out (FNAME_BASE_MAX + 1 bytes): its length. */
static size_t
fname_base(const char *b, size_t blen, char *out)
{
	size_t i, n = 0;
	int gap = 0;

	for (i = 0; i < blen && n < FNAME_BASE_MAX; i++) {
		unsigned char c = (unsigned char)b[i];

		if (!fname_lower(c) && !fname_upper(c)) {
			gap = n > 0;
			continue;
		}
		if (fname_upper(c) && i > 0 && fname_lower((unsigned char)b[i - 1]))
			gap = n > 0;
		if (gap && n + 1 < FNAME_BASE_MAX)
			out[n++] = '_';
		gap = 0;
		if (n < FNAME_BASE_MAX)
			out[n++] = (char)(fname_upper(c) ? c + 32 : c);
	}
	out[n] = '\0';
	return n;
}

int
fname_derive(const char *orig, size_t len, const char rnd[2 * FNAME_RAND],
    char out[FNAME_MAX])
{
	char ext[FNAME_EXT_MAX + 1], base[FNAME_BASE_MAX + 1];
	const char *b = orig;
	size_t i, blen, cut, el, n;

	for (i = 0; i < 2 * FNAME_RAND; i++)
		if (!fname_lower((unsigned char)rnd[i]))
			return -1;
	for (i = 0; i < len; i++)
		if (orig[i] == '/' || orig[i] == '\\')
			b = orig + i + 1;
	blen = len - (size_t)(b - orig);
	el = fname_ext(b, blen, ext, &cut);
	n = fname_base(b, cut, base);
	memcpy(out, base, n);
	if (n < 3) {
		memcpy(out + n, rnd, FNAME_RAND);
		n += FNAME_RAND;
	}
	out[n++] = '_';
	memcpy(out + n, rnd + FNAME_RAND, FNAME_RAND);
	n += FNAME_RAND;
	memcpy(out + n, ext, el + 1);
	return (int)(n + el);
}

int
fname_make(const char *orig, size_t len, char out[FNAME_MAX])
{
	char rnd[2 * FNAME_RAND];

	if (token_random_text(rnd, sizeof(rnd)) < 0)
		return -1;
	return fname_derive(orig, len, rnd, out);
}

int
fname_valid(const char *name, size_t len)
{
	size_t i, dots = 0;

	if (len == 0 || len >= FNAME_MAX || name[0] == '.' || name[len - 1] == '.')
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char c = (unsigned char)name[i];

		if (c == '.')
			dots++;
		else if (!fname_lower(c) && c != '_')
			return 0;
	}
	return dots <= 1;
}
