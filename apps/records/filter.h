/*
 * filter.h: PocketBase's filter language, parsed and compiled to SQL with every value
 * bound (a client's filter=, and the API rules of coll.h).
 *
 *   expr    := and ('||' and)*
 *   and     := primary ('&&' primary)*
 *   primary := '(' expr ')' | operand OP operand
 *   OP      := = != > >= < <= ~ !~ and the any-of forms ?= ?!= ?> ?>= ?< ?<= ?~ ?!~
 *   operand := field path (author.name: through single relations; through sets, such as
 *              comments_via_post.author.posts_via_author.title, as a set), 'text' or
 *              "text" (only the enclosing quote escapable), -?digits(.digits), true, false,
 *              null, a date macro (@now @todayStart ... @yesterday @tomorrow, @second ...
 *              @weekday), and in API rules @request.auth.FIELD, @request.body.FIELD,
 *              @request.body.FIELD:isset, @request.body.FIELD:changed and
 *              @collection.NAME[:alias].path (any-of operators on one NAME[:alias] read
 *              one row of a join over the whole rule)
 *   // comments run to the end of the line.
 *
 * The SQL (see docs/records.md for every form): '=' is a plain '=', '!=' null-safe, a
 * comparison with '' or null matches both empty and NULL, '~' is a case-insensitive
 * (ASCII) LIKE with the literal wrapped in '%' and its '%', '_' and '\' escaped.  On a
 * multi-valued field an any-of operator matches when one element does; a plain operator
 * when every element does (and at least one exists, for =, ~, <, <=, >, >=).  Two literals
 * (most rules: @request.auth.id != '') are compared in C and become 1=1 or 1=0.
 *
 * In a client's filter, an auth record's email reads as '' unless emailVisibility is set,
 * the record is the signed-in one, or the request is a superuser's: a filter cannot find
 * out what the response hides.
 */
#ifndef SLUICE_RECORDS_FILTER_H
#define SLUICE_RECORDS_FILTER_H

#include <stddef.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "coll.h"
#include "sqlb.h"

#define FILTER_LEN_MAX		3500	/* characters of one filter */
#define FILTER_LEAVES_MAX	200	/* comparisons in one filter */
#define FILTER_DEPTH_MAX	32	/* nested parentheses */
#define FILTER_PATH_MAX		6	/* relation hops in a field path */

enum filter_err {
	FILTER_OK = 0,
	FILTER_ESYNTAX,		/* 400 */
	FILTER_ELIMIT,		/* 400: too long, too many leaves or too deep */
	FILTER_EFIELD,		/* 400: unknown or unsupported field */
	FILTER_EFORBIDDEN,	/* 403: @request or @collection in a client's filter */
	FILTER_ENOMEM,		/* 500 or 413 */
};

/* What filter_compile() found a filter to be (a kept count may answer its total). */
struct filter_shape {
	/* One comparison of a field of the collection itself with a quoted text, `status =
	 * 'published'`: the field and the text (unquoted, arena memory); else NULL. */
	const struct coll_field *eq_field;
	const char *eq_val;
	size_t eq_len;
	/* Its value when it does not depend on the record (every comparison is between two
	 * literals, as a rule's `@request.auth.id != ''` becomes): 1 true, 0 false; -1 when
	 * it depends on the record. */
	int value;
};

/* What @request.* means for this request. */
struct filter_ctx {
	int rule;			/* 1: an API rule (@request.* allowed) */
	int superuser;			/* the request is a superuser's */
	const struct coll *auth;	/* the signed-in record's collection, or NULL */
	const char *const *auth_vals;	/* its column values by field index (NULL: none) */
	const size_t *auth_lens;
	const cJSON *body;		/* the request body (an object), or NULL */
	time_t now;			/* for the date macros */
	struct filter_shape *shape;	/* when not NULL, set by filter_compile() */
};

/*
 * Appends s[0..len), compiled against collection c whose table has alias, to q->sql as one
 * parenthesised boolean expression, and records its values in q.  Returns FILTER_OK, or an
 * error with a message for the client in err[errlen] (q's text is then unusable).
 */
enum filter_err filter_compile(struct sqlb *q, const struct coll *c, const char *alias,
    const char *s, size_t len, const struct filter_ctx *ctx, char *err, size_t errlen);

/* The HTTP status of an error (400, 403 or 500). */
int filter_status(enum filter_err e);

/* Writes t as PocketBase's date text "2006-01-02 15:04:05.000Z" (plus ms milliseconds)
 * into out[25] (NUL-terminated). */
void filter_date(char out[25], time_t t, int ms);

#endif /* SLUICE_RECORDS_FILTER_H */
