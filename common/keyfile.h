/*
 * keyfile.h: a secret key kept in a file, made on first use.
 *
 * The chat's session key and the records API's token secret live in files next to their
 * SQLite database (or under data/ for a database elsewhere), so that every worker of an
 * endpoint, and every restart, signs with the same key without the key ever being in the
 * repository.  The file holds the key in hex on one line, mode 0600.  Several workers
 * starting together may all find it missing: each writes a fresh key to a private
 * temporary file and hard-links it into place, link() fails with EEXIST for all but the
 * first, and every one then reads the same complete key.
 */
#ifndef SLUICE_KEYFILE_H
#define SLUICE_KEYFILE_H

#include <stddef.h>

/* Shortest key a file may hold; a shorter one is refused as malformed. */
#define KEYFILE_MIN	16

/*
 * The default path of a key file called name into out[outlen]: next to the SQLite
 * database of the worker's SLUICE_DB, or data/NAME for any other database.  Returns 0, or
 * -1 when the path does not fit.
 */
int keyfile_path(const char *name, char *out, size_t outlen);

/*
 * Reads the key in the file at path into key[keymax], creating the file with newlen random
 * bytes first when it does not exist.  Returns the key's length (KEYFILE_MIN or more), or
 * -1 with errno set (an unreadable or uncreatable file) or 0 (a malformed one: odd or
 * non-hex text, shorter than KEYFILE_MIN bytes or longer than keymax).
 */
long keyfile_load(const char *path, unsigned char *key, size_t keymax, size_t newlen);

#endif /* SLUICE_KEYFILE_H */
