/*
 * fname.h: the name a file of the records API is stored and served under, derived from the
 * name the client sent as PocketBase derives it: a cleaned base name, "_", 10 random
 * characters of [a-z0-9], then the cleaned extension ("My Photo.JPG" becomes
 * "my_photo_k3v9x0q2ab.jpg").  The client's name is never a path: only what follows its
 * last '/' or '\' is read, and the result holds only [a-z0-9_] and one '.', so it is one
 * safe path component and needs no escaping in a URL.
 *
 * sluice's choices where PocketBase leaves one: the extension is what follows the last
 * '.' of the base name (not its first; a name starting with '.' has none), letters and
 * digits only, lowercased, its last 20 characters kept; the base name keeps ASCII letters
 * and digits, lowercased, with '_' before an upper-case letter that follows a lower-case
 * one or a digit (snake_case), every other run of bytes one '_', none at either end; a
 * base shorter than 3 gets 10 more random characters, a longer one than 100 is cut.
 */
#ifndef SLUICE_RECORDS_FNAME_H
#define SLUICE_RECORDS_FNAME_H

#include <stddef.h>

#define FNAME_BASE_MAX	100	/* bytes of the cleaned base name */
#define FNAME_EXT_MAX	20	/* bytes of the extension, its '.' included */
#define FNAME_RAND	10	/* random characters of the suffix */
#define FNAME_MAX	(FNAME_BASE_MAX + 1 + FNAME_RAND + FNAME_EXT_MAX + 1)	/* + NUL */

/*
 * Derives the stored name of a file the client called orig[0..len) into out, using rnd:
 * 2 * FNAME_RAND characters of [a-z0-9] (the first ten pad a short base, the last ten are
 * the suffix).  Returns the name's length, or -1 when rnd is not of that alphabet.
 */
int fname_derive(const char *orig, size_t len, const char rnd[2 * FNAME_RAND],
    char out[FNAME_MAX]);

/* fname_derive() with random characters from the kernel.  The length, or -1 (no random
 * bytes). */
int fname_make(const char *orig, size_t len, char out[FNAME_MAX]);

/* 1 when name[0..len) is a name fname_derive() can make ([a-z0-9_] and at most one '.',
 * not first or last, shorter than FNAME_MAX), so safe as a path component; else 0. */
int fname_valid(const char *name, size_t len);

#endif
