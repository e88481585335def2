/*
 * keyfile.c: see keyfile.h.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/random.h>
#include <unistd.h>

#include "db.h"
#include "keyfile.h"
#include "settings.h"
#include "str.h"

#define KEYFILE_MAX	128	/* bytes of key a file may hold */

int
keyfile_path(const char *name, char *out, size_t outlen)
{
	const char *url = settings_get(SETTING_DB), *path, *slash;
	enum db_backend be;
	int n;

	if (db_url_parse(url, &be, &path) == 0 && be == DB_SQLITE) {
		slash = strrchr(path, '/');
		n = slash != NULL ? snprintf(out, outlen, "%.*s/%s", (int)(slash - path), path,
		    name) : snprintf(out, outlen, "%s", name);
	} else
		n = snprintf(out, outlen, "data/%s", name);
	return n < 0 || (size_t)n >= outlen ? -1 : 0;
}

/* Reads the file: the key's length, 0 when malformed, -1 (errno) when unreadable. */
static long
keyfile_read(const char *path, unsigned char *key, size_t keymax)
{
	char text[2 * KEYFILE_MAX + 2];
	ssize_t n;
	long k;
	int fd;

	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return -1;
	n = read(fd, text, sizeof(text) - 1);
	close(fd);
	if (n < 0)
		return -1;
	while (n > 0 && (text[n - 1] == '\n' || text[n - 1] == ' '))
		n--;
	k = str_unhex(text, (size_t)n, key, keymax);
	return k < KEYFILE_MIN ? 0 : k;
}

/* Writes len random bytes in hex to a private temporary file and links it in place. */
static int
keyfile_create(const char *path, size_t len)
{
	unsigned char key[KEYFILE_MAX];
	char tmp[4200], text[2 * KEYFILE_MAX + 2];
	int fd, n, rc = -1;

	if (len > sizeof(key))
		len = sizeof(key);
	n = snprintf(tmp, sizeof(tmp), "%s.%ld.tmp", path, (long)getpid());
	if (n < 0 || (size_t)n >= sizeof(tmp))
		return -1;
	if (getrandom(key, len, 0) != (ssize_t)len)
		return -1;
	str_hex(key, len, text);
	text[2 * len] = '\n';
	text[2 * len + 1] = '\0';
	if ((fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600)) < 0)
		return -1;
	if (write(fd, text, 2 * len + 1) == (ssize_t)(2 * len + 1) && fsync(fd) == 0 &&
	    (link(tmp, path) == 0 || errno == EEXIST))
		rc = 0;
	close(fd);
	unlink(tmp);
	return rc;
}

long
keyfile_load(const char *path, unsigned char *key, size_t keymax, size_t newlen)
{
	long k = keyfile_read(path, key, keymax);

	if (k < 0 && errno == ENOENT && keyfile_create(path, newlen) == 0)
		k = keyfile_read(path, key, keymax);
	return k;
}
