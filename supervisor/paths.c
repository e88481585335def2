/*
 * paths.c: file-system helpers of the config generators (sluiced nginx, sluiced apache):
 * making the paths they paste into configurations absolute, the servers' prefix (RUNDIR/
 * SERVER unless given) and its directories, and writing a generated file atomically
 * (-o FILE).
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "sluiced.h"

int
sluiced_abspath(const char *path, char *buf, size_t len)
{
	char cwd[PATH_MAX];
	size_t n;
	int m;

	if (path[0] == '/') {
		m = snprintf(buf, len, "%s", path);
	} else {
		if (getcwd(cwd, sizeof(cwd)) == NULL)
			return -1;
		while (path[0] == '.' && path[1] == '/')
			path += 2;
		if (strcmp(path, ".") == 0)
			m = snprintf(buf, len, "%s", cwd);
		else
			m = snprintf(buf, len, "%s/%s", strcmp(cwd, "/") == 0 ? "" : cwd, path);
	}
	if (m < 0 || (size_t)m >= len)
		return -1;
	n = strlen(buf);
	while (n > 1 && buf[n - 1] == '/')
		buf[--n] = '\0';
	return 0;
}

int
sluiced_prefix(const char *server, const char *rundir_abs, const char *prefix, char *buf,
    size_t len)
{
	int m;

	if (prefix == NULL) {
		m = snprintf(buf, len, "%s/%s", rundir_abs, server);
		if (m >= 0 && (size_t)m < len)
			return 0;
	} else if (sluiced_abspath(prefix, buf, len) == 0) {
		return 0;
	}
	fprintf(stderr, "sluiced: %s: prefix path too long\n", server);
	return -1;
}

int
sluiced_mkdirs(const char *dir)
{
	char buf[PATH_MAX], *s;
	int m;

	m = snprintf(buf, sizeof(buf), "%s", dir);
	if (m < 0 || (size_t)m >= sizeof(buf))
		return -1;
	for (s = buf + 1; *s != '\0'; s++) {
		if (*s != '/')
			continue;
		*s = '\0';
		if (mkdir(buf, 0755) == -1 && errno != EEXIST)
			return -1;
		*s = '/';
	}
	if (mkdir(buf, 0755) == -1 && errno != EEXIST)
		return -1;
	return 0;
}

FILE *
sluiced_out_open(const char *outfile, char *tmp, size_t len)
{
	FILE *f;
	int m;

	m = snprintf(tmp, len, "%s.tmp", outfile);
	if (m < 0 || (size_t)m >= len) {
		fprintf(stderr, "sluiced: %s: path too long\n", outfile);
		return NULL;
	}
	if ((f = fopen(tmp, "w")) == NULL)
		fprintf(stderr, "sluiced: %s: %s\n", tmp, strerror(errno));
	return f;
}

int
sluiced_out_close(FILE *f, const char *tmp, const char *outfile, int ok)
{
	int failed = fclose(f) == EOF;

	if (ok && !failed && rename(tmp, outfile) == 0)
		return 0;
	if (ok)
		fprintf(stderr, "sluiced: %s: %s\n", outfile, strerror(errno));
	unlink(tmp);
	return -1;
}
