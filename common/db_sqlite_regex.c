/*
 * db_sqlite_regex.c: regular expressions for SQLite, an SQL function registered on every
 * SQLite connection over PCRE2 (Debian's libpcre2-8), for the table API's match and
 * imatch filters (PostgreSQL's ~ and ~*):
 *
 *   sluice_regexp(s, pattern, icase)   1 when s holds a match of pattern (a search, not
 *                                      anchored, as ~), caseless when icase is non-zero;
 *                                      NULL when s or pattern is NULL
 *
 * The pattern is compiled once per statement (SQLite's auxiliary data keeps it, with its
 * match data, while the statement runs with the same bound value), UTF-8, with Unicode
 * properties for \w and caseless matching, and text that is not valid UTF-8 searched
 * byte-wise where it is invalid (PCRE2_MATCH_INVALID_UTF) rather than refused.  Every
 * search has a match limit, a depth limit and a heap limit (DB_REGEX_*), so that a
 * pattern that backtracks catastrophically ((a+)+$ on a long run of a) gives up within
 * milliseconds: the function then fails the statement with "invalid regular expression:
 * regular expression is too complex", which db_sqlite.c answers as PostgreSQL's 2201B (a
 * 400).  No JIT: the workers' sandbox allows no executable memory.  A pattern that does
 * not compile fails the statement the same way; the table API checks it first with
 * db_regex_ok() and answers 400 before the statement runs.
 *
 * PCRE2 is Perl's dialect, not PostgreSQL's ARE: the common syntax (classes, anchors,
 * quantifiers, groups, alternation, \d \s \w, backreferences) means the same; PostgreSQL's
 * own escapes (\m \M \y \Y, [[:<:]]) and its embedded options (***: and (?b)) do not.
 */
#define PCRE2_CODE_UNIT_WIDTH 8

#include <stdio.h>
#include <string.h>

#include <pcre2.h>
#include <sqlite3.h>

#include "db.h"
#include "extern.h"

/* Backtracking steps of one search (PCRE2's default is 10,000,000, seconds on some
 * patterns), its depth, and the heap it may take in KiB. */
#define DB_REGEX_MATCH_LIMIT	1000000
#define DB_REGEX_DEPTH_LIMIT	10000
#define DB_REGEX_HEAP_LIMIT	16384

/* One compiled pattern with what a search needs, kept as a statement's auxiliary data. */
struct sr_regex {
	pcre2_code *code;
	pcre2_match_data *md;
	pcre2_match_context *mc;
	int icase;
};

static void
sr_free(void *p)
{
	struct sr_regex *r = p;

	if (r == NULL)
		return;
	pcre2_match_data_free(r->md);
	pcre2_match_context_free(r->mc);
	pcre2_code_free(r->code);
	sqlite3_free(r);
}

/* Compiles pattern (len bytes): the code, or NULL with PCRE2's message in msg. */
static pcre2_code *
sr_compile(const char *pattern, size_t len, int icase, char *msg, size_t msglen)
{
	pcre2_code *code;
	PCRE2_SIZE off;
	PCRE2_UCHAR text[160];
	int err;

	code = pcre2_compile((PCRE2_SPTR)pattern, len, PCRE2_UTF | PCRE2_UCP |
	    PCRE2_MATCH_INVALID_UTF | (icase ? PCRE2_CASELESS : 0), &err, &off, NULL);
	if (code == NULL && msg != NULL) {
		if (pcre2_get_error_message(err, text, sizeof(text)) < 0)
			(void)snprintf((char *)text, sizeof(text), "error %d", err);
		(void)snprintf(msg, msglen, "%s at offset %zu", (const char *)text, (size_t)off);
	}
	return code;
}

static struct sr_regex *
sr_new(const char *pattern, size_t len, int icase)
{
	struct sr_regex *r = sqlite3_malloc(sizeof(*r));

	if (r == NULL)
		return NULL;
	memset(r, 0, sizeof(*r));
	r->icase = icase;
	if ((r->code = sr_compile(pattern, len, icase, NULL, 0)) == NULL ||
	    (r->md = pcre2_match_data_create_from_pattern(r->code, NULL)) == NULL ||
	    (r->mc = pcre2_match_context_create(NULL)) == NULL) {
		sr_free(r);
		return NULL;
	}
	(void)pcre2_set_match_limit(r->mc, DB_REGEX_MATCH_LIMIT);
	(void)pcre2_set_depth_limit(r->mc, DB_REGEX_DEPTH_LIMIT);
	(void)pcre2_set_heap_limit(r->mc, DB_REGEX_HEAP_LIMIT);
	return r;
}

static void
sr_regexp_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const unsigned char *s = sqlite3_value_text(argv[0]);
	const unsigned char *pat = sqlite3_value_text(argv[1]);
	int icase = sqlite3_value_int(argv[2]) != 0, rc;
	struct sr_regex *r;

	(void)argc;
	if (s == NULL || pat == NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	r = sqlite3_get_auxdata(ctx, 1);
	if (r == NULL || r->icase != icase) {
		if ((r = sr_new((const char *)pat, (size_t)sqlite3_value_bytes(argv[1]),
		    icase)) == NULL) {
			sqlite3_result_error(ctx, "invalid regular expression", -1);
			return;
		}
		/* SQLite owns r from here, and may free it at once (then fetch it again). */
		sqlite3_set_auxdata(ctx, 1, r, sr_free);
		if ((r = sqlite3_get_auxdata(ctx, 1)) == NULL) {
			sqlite3_result_error_nomem(ctx);
			return;
		}
	}
	rc = pcre2_match(r->code, s, (PCRE2_SIZE)sqlite3_value_bytes(argv[0]), 0, 0, r->md,
	    r->mc);
	if (rc >= 0)
		sqlite3_result_int(ctx, 1);
	else if (rc == PCRE2_ERROR_NOMATCH)
		sqlite3_result_int(ctx, 0);
	else
		sqlite3_result_error(ctx, "invalid regular expression: regular expression is "
		    "too complex", -1);
}

int
db_regex_ok(const char *pattern, size_t len, int icase, char *msg, size_t msglen)
{
	pcre2_code *code = sr_compile(pattern, len, icase, msg, msglen);

	pcre2_code_free(code);
	return code != NULL;
}

int
db_sqlite_regex_register(sqlite3 *conn)
{
	return sqlite3_create_function(conn, "sluice_regexp", 3, SQLITE_UTF8 |
	    SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS, NULL, sr_regexp_fn, NULL, NULL) ==
	    SQLITE_OK ? 0 : -1;
}
