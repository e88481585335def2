/*
 * sqlq.h: an SQL statement being built for the records API, with its bound values, and the
 * few places where SQLite and PostgreSQL spell it differently (one table, struct
 * sqlq_dialect, instead of branches spread over the callers).
 *
 * Every value from a request is bound: sqlq_bind_*() records it and appends "$N" to the
 * text.  Identifiers are quoted names taken from the collections (coll.h), never from the
 * request's text.
 */
#ifndef SLUICE_RECORDS_SQLQ_H
#define SLUICE_RECORDS_SQLQ_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "db.h"

struct arena;

#define SQLQ_BINDS_MAX	1024

enum sqlq_kind {
	SQLQ_TEXT,
	SQLQ_INT,
	SQLQ_DOUBLE,
	SQLQ_NULL,
};

struct sqlq_bind {
	enum sqlq_kind kind;
	const char *s;		/* text: borrowed until the statement ran */
	size_t len;
	int64_t i;
	double d;
};

/* What differs between the back ends. */
struct sqlq_dialect {
	const char *like;		/* case-insensitive for ASCII: LIKE / ILIKE */
	const char *is_not;		/* null-safe <>: IS NOT / IS DISTINCT FROM */
	const char *each_open;		/* the rows of a JSON array of strings, column value: */
	const char *each_close;		/*   each_open EXPR each_close ALIAS each_alias */
	const char *each_alias;
	const char *json_param;		/* a bound JSON array: "json_each($%d)" style prefix */
	const char *json_param_close;
	const char *collate;		/* after a text ORDER BY term: bytewise order */
	const char *json_length;	/* the length of a JSON array: "json_array_length(" */
	const char *json_cmp_col_open;	/* a JSON column and a bound JSON text, compared as */
	const char *json_cmp_col_close;	/*   JSON: col_open COL col_close IS NOT */
	const char *json_cmp_val_open;	/*   val_open $N val_close */
	const char *json_cmp_val_close;
	const char *merge[5];		/* sqlq_merge()'s text around pre, the column, rm, app */
};

extern const struct sqlq_dialect sqlq_sqlite;
extern const struct sqlq_dialect sqlq_pg;

struct sqlq {
	struct buf *sql;	/* borrowed */
	struct arena *arena;	/* scratch strings; borrowed */
	const struct sqlq_dialect *d;
	struct sqlq_bind binds[SQLQ_BINDS_MAX];
	int nbinds;
	int alias;		/* a counter for subquery aliases */
};

/* Sets up q over sql (emptied) for backend. */
void sqlq_init(struct sqlq *q, struct buf *sql, struct arena *a, enum db_backend backend);

/* Records a value and appends its "$N" to the text.  Returns 0, or -1 when there are too
 * many (SQLQ_BINDS_MAX): the caller answers 400. */
int sqlq_text(struct sqlq *q, const char *s, size_t len);
int sqlq_int(struct sqlq *q, int64_t v);
int sqlq_double(struct sqlq *q, double v);
int sqlq_null(struct sqlq *q);

/* Appends "t.\"name\"" (alias.quoted name). */
void sqlq_col(struct buf *b, const char *alias, const char *name);

/* Appends the rows of the bound JSON array of strings json[0..len) as a subquery:
 * "(SELECT value FROM json_each($N))".  0 or -1 (too many values). */
int sqlq_in_json(struct sqlq *q, const char *json, size_t len);

/*
 * Appends the JSON array of strings pre ++ (alias."col"'s elements not in rm) ++ app, as
 * one expression over the stored column (an UPDATE's new value: no read before it).
 * pre, app and rm are JSON arrays of strings, bound; borrowed until the statement ran.
 * 0, or -1 (too many values).
 */
int sqlq_merge(struct sqlq *q, const char *alias, const char *col, const char *pre,
    const char *app, const char *rm);

/* Binds everything recorded to st.  0 or -1. */
int sqlq_bind_all(const struct sqlq *q, struct db_stmt *st);

#endif /* SLUICE_RECORDS_SQLQ_H */
