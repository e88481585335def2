/*
 * grants.c: SQLite's access control on the rest endpoint.  SQLite has no roles, so the
 * endpoint's rest_grants says what each role may do: "anon:select|web_user:select,insert",
 * on every table and function, or on the ones named after '@' ("anon:select@artist,album").
 * The value is parsed once, at start-up (auth.c's rest_auth_load()); rest_auth_may() then
 * answers, for a role, a name and a privilege, whether the entries of the role grant it.
 * auth.c asks before a verb runs, names.c for every table an embed reads: this file is
 * below both and calls neither.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "rest.h"

/* The configuration's privilege words, by bit. */
static const char *const rest_priv_words[] = {
	"select", "insert", "update", "delete", "execute", NULL
};

/* The privilege word w (n bytes): its REST_PRIV_* bit(s), or 0 when it is none. */
static unsigned
rest_priv_word(const char *w, size_t n)
{
	size_t i;

	if (n == 3 && strncmp(w, "all", 3) == 0)
		return REST_PRIV_ALL;
	for (i = 0; rest_priv_words[i] != NULL; i++)
		if (strlen(rest_priv_words[i]) == n && strncmp(w, rest_priv_words[i], n) == 0)
			return 1u << i;
	return 0;
}

#define REST_GRANTS_SYNTAX	"want ROLE:PRIV[,PRIV...][@TABLE[,TABLE...]], PRIV one of " \
	"select, insert, update, delete, execute, all"

/*
 * One entry of rest_grants, s (NUL-terminated, in a->grants_buf): "anon:select" or
 * "anon:select,insert@artist,album" into a->grants.  0, or -1 with why in err.
 */
static int
rest_auth_grant(struct rest_auth *a, char *s, char *err, size_t errlen)
{
	struct rest_grant *g = &a->grants[a->ngrants];
	char *colon, *at, *w, *we, *end;
	unsigned bits = 0, b;

	if (*s == '\0') {
		(void)snprintf(err, errlen, "an empty entry (two '|' in a row, or one at an end)");
		return -1;
	}
	if ((colon = strchr(s, ':')) == NULL || colon == s) {
		(void)snprintf(err, errlen, "no ROLE: before the privileges: " REST_GRANTS_SYNTAX);
		return -1;
	}
	if (memchr(s, '@', (size_t)(colon - s)) != NULL) {
		(void)snprintf(err, errlen, "'@' in the role name: " REST_GRANTS_SYNTAX);
		return -1;
	}
	if ((size_t)(colon - s) >= REST_ROLE_MAX) {
		(void)snprintf(err, errlen, "a role name longer than %d bytes", REST_ROLE_MAX - 1);
		return -1;
	}
	if ((at = strchr(colon + 1, '@')) != NULL && strchr(at + 1, '@') != NULL) {
		(void)snprintf(err, errlen, "more than one '@': " REST_GRANTS_SYNTAX);
		return -1;
	}
	end = at != NULL ? at : colon + 1 + strlen(colon + 1);
	for (w = colon + 1;; w = we + 1) {
		for (we = w; we < end && *we != ','; we++)
			;
		if ((b = rest_priv_word(w, (size_t)(we - w))) == 0) {
			(void)snprintf(err, errlen, "'%.*s' is no privilege: " REST_GRANTS_SYNTAX,
			    (int)(we - w > 40 ? 40 : we - w), w);
			return -1;
		}
		bits |= b;
		if (we == end)
			break;
	}
	g->on = NULL;
	if (at != NULL) {
		g->on = at + 1;
		for (w = at + 1;; w = we + 1) {
			we = w + strcspn(w, ",");
			if (we == w) {
				(void)snprintf(err, errlen, "an empty table or function name after "
				    "'@' (names separated by ',')");
				return -1;
			}
			if ((size_t)(we - w) >= REST_GRANT_NAME_MAX) {
				(void)snprintf(err, errlen, "a table or function name longer than "
				    "%d bytes", REST_GRANT_NAME_MAX - 1);
				return -1;
			}
			if (*we == '\0')
				break;
		}
	}
	memcpy(g->role, s, (size_t)(colon - s));
	g->role[colon - s] = '\0';
	g->privs = bits;
	a->ngrants++;
	return 0;
}

int
rest_auth_grants_parse(struct rest_auth *a, const char *s, char *err, size_t errlen)
{
	char *p, *e, *copy, why[256];
	const char *c;
	int n, last;

	for (c = s; *c != '\0'; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f || *c == ' ') {
			(void)snprintf(err, errlen, "a blank or control character at byte %zu",
			    (size_t)(c - s) + 1);
			return -1;
		}
	if ((copy = strdup(s)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	free(a->grants_buf);
	a->grants_buf = copy;
	a->ngrants = 0;
	for (p = copy, n = 1;; p = e + 1, n++) {
		e = p + strcspn(p, "|");
		last = *e == '\0';
		if (a->ngrants == REST_GRANTS_MAX) {
			(void)snprintf(err, errlen, "more than %d entries", REST_GRANTS_MAX);
			return -1;
		}
		*e = '\0';
		if (rest_auth_grant(a, p, err, errlen) < 0)
			break;
		if (last)
			return 0;
	}
	/* The entry's number and text before the reason (err is both source and target). */
	(void)snprintf(why, sizeof(why), "%s", err);
	(void)snprintf(err, errlen, "entry %d (\"%.60s\"): %s", n, p, why);
	return -1;
}

/* 1 when the comma-separated list on holds name. */
static int
rest_grant_covers(const char *on, const char *name)
{
	size_t n = strlen(name), k;

	for (;;) {
		k = strcspn(on, ",");
		if (k == n && strncmp(on, name, n) == 0)
			return 1;
		if (on[k] == '\0')
			return 0;
		on += k + 1;
	}
}

int
rest_auth_may(const struct rest_auth *a, const char *role, const char *name, unsigned need)
{
	unsigned have = 0;
	int i, known = 0;

	for (i = 0; i < a->ngrants; i++) {
		if (strcmp(a->grants[i].role, role) != 0)
			continue;
		known = 1;
		if (a->grants[i].on == NULL || rest_grant_covers(a->grants[i].on, name))
			have |= a->grants[i].privs;
	}
	if (!known)
		return -1;
	return (have & need) == need;
}
