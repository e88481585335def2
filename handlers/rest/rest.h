/*
 * rest.h: the internals of the rest endpoint (bin/rest), a PostgREST-compatible table API.
 *
 * Four parts, one file each:
 *   schema.c  what the database holds (tables, views, columns, foreign keys, functions),
 *             introspected once per connection and used to accept identifiers;
 *   parse.c   the URL grammar (select, filters, logic trees, order, limit/offset) into a tree
 *             of struct rest_node, one node per relation (the root and each embed);
 *   sql.c     one SQL statement per request from that tree, returning the finished body;
 *   rest.c    the handler: routes, methods, headers, statuses, errors.
 *
 * Ownership: the schema is owned by the thread's state and lives until the thread ends;
 * everything a parse produces lives in the request's arena.
 */
#ifndef SLUICE_REST_H
#define SLUICE_REST_H

#include <stddef.h>
#include <stdint.h>

#include "buf.h"
#include "db.h"

struct arena;

/* Limits: each one crossed is a 4xx. */
#define REST_QUERY_MAX		8192	/* query string bytes: 414 */
#define REST_FILTERS_MAX	64	/* filter conditions per request: 400 */
#define REST_IN_MAX		1000	/* values in one in.(...): 400 */
#define REST_EMBED_DEPTH	8	/* nested embeds: 400 */
#define REST_NODES_MAX		32	/* embeds per request: 400 */
#define REST_LOGIC_DEPTH	8	/* nested and()/or(): 400 */
#define REST_PARAMS_MAX		256	/* bound values per statement */
#define REST_SQL_MAX		(256 * 1024)
/* Members of one sluice_obj() call on SQLite: a template and 126 values, SQLite's default
 * SQLITE_MAX_FUNCTION_ARG of 127; wider rows are concatenated instead. */
#define REST_OBJ_MEMBERS_MAX	126

/* What a column holds, for JSON rendering and comparisons. */
enum rest_kind {
	REST_K_TEXT,
	REST_K_INT,
	REST_K_NUM,
	REST_K_BOOL,
	REST_K_TS,	/* timestamp: ISO-8601 "1920-01-01T00:00:00" in JSON */
	REST_K_DATE,
	REST_K_JSON,
};

struct rest_col {
	char *name;
	char *type;		/* PostgreSQL: format_type without typmod; SQLite: declared */
	enum rest_kind kind;
	int notnull;
	int pk;			/* position in the primary key, 1-based; 0 when not in it */
	char *dflt;		/* default expression from the catalog, or NULL */
};

struct rest_table {
	char *name;
	int is_view;
	int hidden;		/* sluice's own tables: not served */
	struct rest_col *cols;
	int ncols;
};

#define REST_FK_COLS	8

struct rest_fk {
	char *name;
	int from;		/* table index */
	int to;
	int ncols;
	int from_cols[REST_FK_COLS];	/* column indexes */
	int to_cols[REST_FK_COLS];
};

struct rest_func {
	char *name;
	int nargs;
	char **argnames;
	char **argtypes;
	int retset;
	int rettable;		/* table index for setof/composite results, -1 for scalars */
	char *body;		/* SQLite: the SELECT, with $k placeholders for the args */
};

struct rest_schema {
	enum db_backend be;
	struct rest_table *tables;
	int ntables;
	struct rest_fk *fks;
	int nfks;
	struct rest_func *funcs;
	int nfuncs;
};

/* Loads the schema through db.  Returns the schema (free with rest_schema_free()) or NULL
 * when the database failed (its error is on db). */
struct rest_schema *rest_schema_load(struct db *db);
void rest_schema_free(struct rest_schema *sc);
/* What a column or argument of this declared type holds. */
enum rest_kind rest_kind_of(enum db_backend be, const char *type);
int rest_schema_table(const struct rest_schema *sc, const char *name);	/* index or -1 */
int rest_schema_col(const struct rest_table *t, const char *name);	/* index or -1 */
const struct rest_func *rest_schema_func(const struct rest_schema *sc, const char *name);

/* A failure to answer, with PostgREST's code. */
struct rest_err {
	int status;
	const char *code;
	char message[256];
	char details[256];
	const char *hint;
};

void rest_err_set(struct rest_err *e, int status, const char *code, const char *details,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));

enum rest_op {
	REST_OP_EQ, REST_OP_NEQ, REST_OP_GT, REST_OP_GTE, REST_OP_LT, REST_OP_LTE,
	REST_OP_LIKE, REST_OP_ILIKE, REST_OP_IN, REST_OP_IS,
	REST_OP__MAX
};

enum rest_is { REST_IS_NULL, REST_IS_NOT_NULL, REST_IS_TRUE, REST_IS_FALSE };

enum rest_cond_kind { REST_C_LEAF, REST_C_AND, REST_C_OR };

struct rest_cond {
	enum rest_cond_kind kind;
	int negate;
	/* leaf */
	const char *col;
	int colidx;		/* resolved by sql.c */
	enum rest_op op;
	const char *val;
	size_t vallen;
	const char **list;	/* in.(...) values */
	size_t *listlen;
	size_t nlist;
	enum rest_is is;
	/* and/or */
	struct rest_cond **kids;
	size_t nkids;
};

struct rest_order {
	const char *col;
	int desc;
	int nulls;		/* 0 default, 1 first, 2 last */
};

enum rest_item_kind { REST_I_STAR, REST_I_COL, REST_I_EMBED };

struct rest_node;

struct rest_item {
	enum rest_item_kind kind;
	const char *alias;	/* NULL: the name */
	const char *name;
	struct rest_node *embed;
};

/* One relation of the request: the root or an embed. */
struct rest_node {
	const char *name;	/* relation as written */
	const char *alias;	/* key in the parent's JSON */
	const char *hint;	/* !fk hint, or NULL */
	int inner;
	int depth;
	struct rest_item *items;
	size_t nitems;
	struct rest_node *parent;
	/* filled from parameters */
	struct rest_cond *where;	/* an AND node, possibly empty */
	struct rest_order *order;
	size_t norder;
	int64_t limit;		/* -1: none */
	int64_t offset;		/* 0 */
	/* resolved by sql.c */
	int table;
	int fk;			/* relationship to the parent */
	int fk_forward;		/* 1: parent holds the key (to-one); 0: child does (to-many) */
	int junction;		/* many-to-many: junction table index, else -1 */
	int fk2;		/* junction -> this table */
};

/* Values bound to the statement, in order ($1, $2, ...). */
struct rest_params {
	const char *v[REST_PARAMS_MAX];
	size_t len[REST_PARAMS_MAX];
	int isint[REST_PARAMS_MAX];
	int64_t iv[REST_PARAMS_MAX];
	int isnull[REST_PARAMS_MAX];
	int n;
};

/* parse.c.  Every function returns 0, or -1 with e filled; results live in the arena a. */
struct rest_node *rest_node_new(struct arena *a, struct rest_node *parent);
int rest_parse_select(struct arena *a, const char *s, size_t len, struct rest_node *root,
    struct rest_err *e);
/* Applies one query parameter (a filter, order, limit, offset, or an embed's) to the tree. */
int rest_parse_param(struct arena *a, struct rest_node *root, const char *key, size_t keylen,
    const char *val, size_t vallen, struct rest_err *e);
int rest_parse_columns(struct arena *a, const char *s, size_t len, const char ***cols,
    size_t *ncols, struct rest_err *e);
/* The like pattern with PostgREST's '*' wildcard turned into '%'; in the arena. */
char *rest_like_pattern(struct arena *a, const char *v, size_t len);

/* sql.c */
enum rest_shape {
	REST_SHAPE_JSON,	/* one column: the JSON array; a second: the row count */
	REST_SHAPE_CSV,
};

struct rest_gen {
	const struct rest_schema *sc;
	enum db_backend be;
	struct arena *a;
	struct buf *sql;
	struct rest_params *p;
	struct rest_err *e;
	int seq;		/* alias counter */
	/* The LEFT JOINs of the FROM whose select list is being generated, where to-one
	 * embeds go; NULL where that FROM is not generated here (writes). */
	struct buf *joins;
};

/* Resolves names in the tree against the schema (table t for the root).  0 or -1. */
int rest_resolve(struct rest_gen *g, struct rest_node *root, int table);
/*
 * SELECT for GET: columns (1) body (JSON array or CSV text), (2) rows in the page, and
 * with count (3) the total.  from is the quoted relation or a function call, NULL for the
 * root's table.
 */
int rest_sql_select(struct rest_gen *g, struct rest_node *root, const char *from,
    enum rest_shape shape, int count);
/* Adds a bound text value; returns its number, or -1. */
int rest_param_text(struct rest_gen *g, const char *v, size_t len);
int rest_param_int(struct rest_gen *g, int64_t v);
int rest_param_null(struct rest_gen *g);
/* Appends "name" with double quotes doubled. */
void rest_quote_ident(struct buf *b, const char *name);
/* The WHERE conditions of node over alias (for PATCH and DELETE).  0 or -1. */
int rest_sql_where(struct rest_gen *g, struct rest_node *n, const char *alias, int first);
/*
 * The JSON object of one row of n over alias (SQLite's RETURNING), or with agg the array
 * of the rows' objects (PostgreSQL's select over the written rows).
 */
int rest_sql_row_json(struct rest_gen *g, struct rest_node *n, const char *alias, int agg);
/* Appends 'text' as a SQL string literal (schema names and aliases only). */
void rest_sql_literal(struct buf *b, const char *s);
/* The output keys of n in order (CSV header); returns how many were stored in keys. */
int rest_sql_keys(struct rest_gen *g, struct rest_node *n, const char **keys, int max);
#endif /* SLUICE_REST_H */
