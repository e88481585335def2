/*
 * errors.c: struct rest_err, a failure to answer with PostgREST's code, and its answer.
 *
 * Every layer fills one (rest_err_set()) and returns -1; the verb that gave up answers it
 * with rest_error(), the only place a struct rest_err becomes a response.  Its details are
 * a string, or JSON as it is where PostgREST answers an array there (PGRST201's
 * candidate relationships).
 *
 * A failure of the database is answered by rest_db_error(): in the database's own words
 * where it said something about what the request did (an integrity or input error), unless
 * rest_db_errors=hide, as PostgREST passes PostgreSQL's on.
 */
#include <stdarg.h>
#include <stdio.h>

#include "rest.h"
#include "serve.h"

void
rest_err_set(struct rest_err *e, int status, const char *code, const char *details,
    const char *fmt, ...)
{
	va_list ap;

	e->status = status;
	e->code = code;
	va_start(ap, fmt);
	(void)vsnprintf(e->message, sizeof(e->message), fmt, ap);
	va_end(ap);
	e->details[0] = '\0';
	e->details_json = 0;
	if (details != NULL)
		(void)snprintf(e->details, sizeof(e->details), "%s", details);
	e->hint = NULL;
}

int
rest_error(struct resp *rs, const struct rest_err *e)
{
	if (e->details_json)
		return resp_error_json(rs, e->status, e->code, e->message, e->details,
		    e->hint);
	return resp_error(rs, e->status, e->code, e->message,
	    e->details[0] != '\0' ? e->details : NULL, e->hint);
}

/* An error about a count of rows: its details say how many ("The X N rows"). */
static int
rest_error_rows(struct resp *rs, int status, const char *code, const char *message,
    const char *what, int64_t rows)
{
	struct rest_err e;

	rest_err_set(&e, status, code, NULL, "%s", message);
	(void)snprintf(e.details, sizeof(e.details), "The %s %lld rows", what, (long long)rows);
	return rest_error(rs, &e);
}

int
rest_error_not_one(struct resp *rs, int64_t rows)
{
	return rest_error_rows(rs, 406, "PGRST116",
	    "JSON object requested, multiple (or no) rows returned", "result contains", rows);
}

int
rest_error_max_affected(struct resp *rs, int64_t rows)
{
	return rest_error_rows(rs, 400, "PGRST124",
	    "Query result exceeds max-affected preference constraint", "query affects", rows);
}

int
rest_db_error(struct resp *rs, const struct rest_thread *t, struct db *db)
{
	return serve_db_error_words(rs, db, t->db_words);
}
