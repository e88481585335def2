/*
 * sqlb.h: an SQL statement being built, with the values bound to it, and the spellings
 * that differ between SQLite and PostgreSQL (one record per back end, struct sqlb_dialect,
 * instead of branches spread over the callers).
 *
 * Every value from a request is bound: sqlb_val_*() records it under the next number
 * ($1, $2, ...) and sqlb_bind_all() hands the values to a prepared statement.  Only
 * identifiers the caller has matched against its schema reach the text, quoted by
 * sqlb_ident() (or sqlb_col()); sqlb_literal() is for names and aliases the caller
 * writes as string literals, never for a request's values.
 *
 * Two ways to use it: an application with its own statement state keeps a struct
 * sqlb_vals and writes "$k" with sqlb_param(); one that appends as it goes holds a struct
 * sqlb, whose sqlb_text() and friends record the value and append its "$N" at once.
 */
#ifndef SLUICE_SQLB_H
#define SLUICE_SQLB_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "db.h"

struct arena;

#define SQLB_VALS_MAX	1024	/* a struct sqlb's values (sqlb_init()) */

enum sqlb_kind {
	SQLB_TEXT,
	SQLB_INT,
	SQLB_DOUBLE,
	SQLB_NULL,
};

struct sqlb_val {
	enum sqlb_kind kind;
	const char *s;		/* text: borrowed until the statement ran */
	size_t len;
	int64_t i;
	double d;
};

/* The values bound to one statement, in order: v[k - 1] is $k.  The array comes from the
 * arena and grows as values are added, up to max. */
struct sqlb_vals {
	struct sqlb_val *v;
	int n;			/* values held */
	int max;		/* the cap the caller gave */
	int cap;		/* room in v */
	struct arena *arena;	/* borrowed */
};

/* Empties vals for at most max values allocated from a (borrowed until the statement
 * ran).  Allocates nothing. */
void sqlb_vals_init(struct sqlb_vals *vals, struct arena *a, int max);

/* Records a value.  Returns its number (1-based: $k), or -1 when vals holds max values
 * already or the arena is full.  s is borrowed until the statement ran. */
int sqlb_val_text(struct sqlb_vals *vals, const char *s, size_t len);
int sqlb_val_int(struct sqlb_vals *vals, int64_t v);
int sqlb_val_double(struct sqlb_vals *vals, double v);
int sqlb_val_null(struct sqlb_vals *vals);

/* Binds every value of vals to st as $1..$n.  0, or -1 at the first one st refuses (its
 * error on the connection). */
int sqlb_bind_all(const struct sqlb_vals *vals, struct db_stmt *st);

/* Appends "name", its double quotes doubled. */
void sqlb_ident(struct buf *b, const char *name);
/* Appends 's' as a string literal, its single quotes doubled (names and aliases only). */
void sqlb_literal(struct buf *b, const char *s);
/* Appends alias."name". */
void sqlb_col(struct buf *b, const char *alias, const char *name);
/* Appends "$k", a placeholder. */
void sqlb_param(struct buf *b, int k);

/* The spellings both engines have but write differently. */
struct sqlb_dialect {
	enum db_backend backend;
	const char *like;		/* case-insensitive for ASCII: LIKE / ILIKE */
	const char *is_not;		/* null-safe <>: IS NOT / IS DISTINCT FROM */
	const char *each_open;		/* the rows of a JSON array of strings, column value: */
	const char *each_close;		/*   each_open EXPR each_close ALIAS each_alias */
	const char *each_alias;
	const char *json_param;		/* a bound JSON array of strings as a subquery: */
	const char *json_param_close;	/*   json_param $N json_param_close */
	const char *collate;		/* after a text ORDER BY term: bytewise order */
	const char *json_length;	/* the length of a JSON array: "json_array_length(" */
	const char *json_cmp_col_open;	/* a JSON column and a bound JSON text, compared as */
	const char *json_cmp_col_close;	/*   JSON: col_open COL col_close IS NOT */
	const char *json_cmp_val_open;	/*   val_open $N val_close */
	const char *json_cmp_val_close;
};

extern const struct sqlb_dialect sqlb_sqlite;
extern const struct sqlb_dialect sqlb_pg;

/* The record of backend; never NULL. */
const struct sqlb_dialect *sqlb_dialect_of(enum db_backend backend);

/* A statement being appended to, with its values. */
struct sqlb {
	struct buf *sql;	/* borrowed */
	struct arena *arena;	/* scratch strings and the values; borrowed */
	const struct sqlb_dialect *d;
	struct sqlb_vals vals;	/* at most SQLB_VALS_MAX */
	int alias;		/* a counter for subquery aliases */
};

/* Sets up q over sql (emptied) for backend. */
void sqlb_init(struct sqlb *q, struct buf *sql, struct arena *a, enum db_backend backend);

/* Records a value and appends its "$N" to q->sql.  Returns 0, or -1 when there are too
 * many (SQLB_VALS_MAX) or the arena is full: the caller answers 400. */
int sqlb_text(struct sqlb *q, const char *s, size_t len);
int sqlb_int(struct sqlb *q, int64_t v);
int sqlb_double(struct sqlb *q, double v);
int sqlb_null(struct sqlb *q);

/* Appends the rows of the bound JSON array of strings json[0..len) as a subquery:
 * "(SELECT value FROM json_each($N))".  0 or -1 (too many values). */
int sqlb_in_json(struct sqlb *q, const char *json, size_t len);

/* Binds q's values to st: sqlb_bind_all() of q->vals. */
int sqlb_bind(const struct sqlb *q, struct db_stmt *st);

#endif /* SLUICE_SQLB_H */
