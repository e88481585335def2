/*
 * coll.h: the records API's collections (PocketBase's dialect).
 *
 * A collection is a table plus its field definitions and its five API rules.  Collections
 * are declared in one SQL file of the application (sql/records/collections.sql) that holds
 * rows of the table _collections, the same text on SQLite and PostgreSQL:
 *
 *   _collections (id, name, type, fields, list_rule, view_rule, create_rule, update_rule,
 *                 delete_rule)
 *
 * type is 'base' or 'auth'; a rule is NULL (superusers only), '' (anyone) or a filter
 * expression.  fields is a list of declarations separated by ';' or new lines:
 *
 *   NAME TYPE [OPTION ...]
 *   TYPE:   text number bool email url date autodate select relation json
 *   OPTION: required, unique, index, multiple (select, relation), values=a|b|c (select),
 *           to=COLLECTION (relation), onupdate (autodate: set on update too)
 *
 * Every collection has the system field id (15 characters of [a-z0-9]); an auth collection
 * also has email, emailVisibility, verified, password and tokenKey.  coll_ddl() turns a
 * collection into each back end's CREATE TABLE (SQLite: TEXT, REAL, BOOLEAN and JSON text
 * columns; PostgreSQL: text, double precision, boolean and jsonb), so that one declaration
 * serves both.  Workers read _collections at start-up and after a SIGHUP (coll_load()).
 */
#ifndef SLUICE_RECORDS_COLL_H
#define SLUICE_RECORDS_COLL_H

#include <stddef.h>

#include "buf.h"
#include "db.h"

#define COLL_NAME_MAX	64	/* names: [A-Za-z_][A-Za-z0-9_]*, shorter than this */
#define COLL_FIELDS_MAX	64	/* fields of one collection, system fields included */
#define COLL_VALUES_MAX	32	/* values of one select field */
#define COLL_MAX	64	/* collections */
#define COLL_ID_LEN	15	/* record ids: 15 characters of [a-z0-9] */

enum coll_type {
	COLL_TEXT,
	COLL_NUMBER,
	COLL_BOOL,
	COLL_EMAIL,
	COLL_URL,
	COLL_DATE,
	COLL_AUTODATE,
	COLL_SELECT,
	COLL_RELATION,
	COLL_JSON,
	COLL_PASSWORD,
	COLL_TYPE__MAX,
};

enum coll_rule {
	COLL_RULE_LIST,
	COLL_RULE_VIEW,
	COLL_RULE_CREATE,
	COLL_RULE_UPDATE,
	COLL_RULE_DELETE,
	COLL_RULE__MAX,
};

struct coll;
struct colls;

struct coll_field {
	char name[COLL_NAME_MAX];
	enum coll_type type;
	int multiple;		/* select or relation holding a JSON array of strings */
	int required;
	int unique;
	int index;
	int onupdate;		/* autodate: also set by every update */
	int counted;		/* its records are to be counted per value (coll_counted()) */
	int kept;		/* the database keeps those counts (colls_load()) */
	int hidden;		/* password and tokenKey: never in a response */
	int system;		/* id and the auth fields */
	char target[COLL_NAME_MAX];	/* relation: the target collection's name */
	struct coll *tcoll;	/* relation: the target, resolved by coll_load() */
	char values[COLL_VALUES_MAX][COLL_NAME_MAX];	/* select */
	size_t nvalues;
};

struct coll {
	char id[COLL_NAME_MAX];
	char name[COLL_NAME_MAX];
	int auth;
	struct coll_field fields[COLL_FIELDS_MAX];	/* fields[0] is id */
	size_t nfields;
	char *rules[COLL_RULE__MAX];	/* malloc'ed; NULL: superusers only */
	/* The response's key order (bytewise, as PocketBase's JSON): field indexes, and
	 * COLL_KEY_* for the keys that are not columns. */
	int keys[COLL_FIELDS_MAX + 3];
	size_t nkeys;
	const struct colls *all;	/* every collection (back-relations), set by
					 * coll_resolve() */
	int counts;		/* the database keeps its total (_counts), set by
				 * colls_load() */
};

#define COLL_KEY_COLLID		-1	/* "collectionId" */
#define COLL_KEY_COLLNAME	-2	/* "collectionName" */
#define COLL_KEY_EXPAND		-3	/* "expand" */

struct colls {
	struct coll *c;		/* malloc'ed array */
	size_t n;
};

/*
 * Parses one collection's declaration (the columns of a _collections row) into *c.
 * rules[i] may be NULL.  Returns 0, or -1 with a message in err[errlen].  Relations are
 * resolved later (coll_resolve()).  The caller frees with coll_free().
 */
int coll_parse(struct coll *c, const char *id, const char *name, const char *type,
    const char *fields, const char *const rules[COLL_RULE__MAX], char *err, size_t errlen);

/* Resolves every relation's target and computes the key order.  0, or -1 with err set. */
int coll_resolve(struct colls *cs, char *err, size_t errlen);

/*
 * Reads every collection from the _collections table of db into *cs (caller frees with
 * colls_free()).  Returns 0, or -1 with a message in err[errlen] (the database's own
 * message for the log).
 */
int colls_load(struct colls *cs, struct db *db, char *err, size_t errlen);
void colls_free(struct colls *cs);
void coll_free(struct coll *c);

/* The collection called name (or with that id), or NULL.  Borrowed from cs. */
struct coll *colls_find(const struct colls *cs, const char *name, size_t len);

/* The field called name[0..len) of c, or NULL. */
const struct coll_field *coll_field(const struct coll *c, const char *name, size_t len);

/* The index of f in c's fields. */
size_t coll_field_index(const struct coll *c, const struct coll_field *f);

/* 1 when f's column holds text (its "no value" is ''), 0 for numbers, bools, JSON and
 * multiple values. */
int coll_textual(const struct coll_field *f);

/* 1 when s is an email address fit for a mail's headers and an auth record: an '@', no
 * blanks, controls or angle brackets, at most 255 bytes (the account flows, records-seed
 * -a). */
int coll_email_ok(const char *s);

/*
 * f's column type on backend ("jsonb", "REAL", ...) and, in *dflt, the SQL literal of the
 * value its column takes when a write leaves it out ("''", "0", "'[]'"), or NULL when the
 * column is nullable (json).  The one place coll_ddl() and the writes learn both from.
 */
const char *coll_column(const struct coll_field *f, enum db_backend backend,
    const char **dflt);

/*
 * The collation of every text column on PostgreSQL: bytewise, as SQLite's BINARY (and so
 * PocketBase) compares and sorts.  A list's sort asks for it (sqlb's collate), so the
 * column's index serves an ORDER BY only when the column has it too; without it, a sort
 * by created at 1,000,000 posts sorted every matching row (1.2 s).  Comparisons skip the
 * locale's rules (strcoll) on every index probe, and ILIKE folds ASCII letters only, as
 * SQLite's LIKE.  A column of the database's default collation meets it without a
 * conflict (the default yields).
 */
#define COLL_PG_BYTES	" COLLATE \"C\""

/* Appends the CREATE TABLE and CREATE INDEX statements of c for backend to b.  0 or -1. */
int coll_ddl(const struct coll *c, enum db_backend backend, struct buf *b);

/*
 * Kept counts.  A list with totals must not cost in proportion to the collection, so the
 * database keeps, in the same transaction as every write, the number of records of each
 * collection and, per value, of each field that coll_counted() accepts (single select and
 * relation fields declared with `index`):
 *
 *   _counts (coll, field, value, slot, n)   field '' and value '': the whole collection
 *
 * Triggers made by coll_counts_ddl() add +1 and -1 to these rows: on SQLite in slot 0
 * (one writer at a time), on PostgreSQL in the slot of the writing backend
 * (pg_backend_pid() % COLL_COUNT_SLOTS), so that concurrent transactions do not queue on
 * one row's lock; a count is the sum over the slots.  coll_counts_ddl() also writes, in
 * the same transaction as the triggers, a marker row in slot -1 (n 0) for the collection
 * (field '') and for each field it counts: colls_load() sets c->counts and f->kept from
 * them, so that a list reads from _counts only what the database really keeps (a field
 * declared `index` after the counts were made is counted row by row until
 * `records-seed -k` makes its counts).
 */
#define COLL_COUNT_SLOTS	16

/* 1 when f's records are counted per value (a single select or relation with index). */
int coll_counted(const struct coll_field *f);

/* Appends the CREATE TABLE of _counts for backend to b.  0 or -1. */
int coll_counts_table(enum db_backend backend, struct buf *b);

/*
 * Appends the CREATE TABLE (and index) of _otps for backend to b, both IF NOT EXISTS: the
 * one-time passwords of request-otp (id, collectionRef, recordRef, hash: the code's
 * token_otp_hash(), sentTo, attempts: wrong codes so far, created: PocketBase's date
 * text).  The seeder makes it; a worker makes it in a database made before it.  0 or -1.
 */
int coll_otps_table(enum db_backend backend, struct buf *b);

/*
 * Appends the statements that (re)count c's records into _counts and make the triggers
 * that keep them (run them in one transaction with the table's writes stopped, as the
 * seeder does after loading).  0 or -1.
 */
int coll_counts_ddl(const struct coll *c, enum db_backend backend, struct buf *b);

/* Appends the quoted identifier "name" (names are valid, so nothing needs escaping). */
int coll_quote(struct buf *b, const char *name);

struct sqlb;

/*
 * Appends to q->sql the JSON array of strings pre ++ (alias."col"'s elements not in rm) ++
 * app, as one expression over the stored value of a multiple field (an UPDATE's new value:
 * no read before it).  pre, app and rm are JSON arrays of strings, bound; borrowed until
 * the statement ran.  0, or -1 (too many values).
 */
int coll_merge(struct sqlb *q, const char *alias, const char *col, const char *pre,
    const char *app, const char *rm);

#endif /* SLUICE_RECORDS_COLL_H */
