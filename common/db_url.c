/*
 * db_url.c: the database URL, split into its back end and what that back end opens (see
 * db_url_parse() in db.h).  A file of its own so that sluiced and the generators, which
 * only look at URLs, do not link the database back ends.
 */
#include <string.h>

#include "db.h"

int
db_url_parse(const char *url, enum db_backend *backend, const char **path)
{
	const char *p;

	if (url == NULL)
		return -1;
	if (strncmp(url, "sqlite:", 7) == 0) {
		/* "sqlite://PATH" and "sqlite:PATH" name the same file, so that
		 * "sqlite:///abs" is /abs and "sqlite://data/x.db" is relative. */
		p = url + 7;
		if (strncmp(p, "//", 2) == 0)
			p += 2;
		if (*p == '\0')
			return -1;
		*backend = DB_SQLITE;
		*path = p;
		return 0;
	}
	if (strncmp(url, "postgresql://", 13) == 0 || strncmp(url, "postgres://", 11) == 0 ||
	    strchr(url, '=') != NULL) {
		*backend = DB_PG;
		*path = url;
		return 0;
	}
	return -1;
}
