/*
 * rest.h: the PostgREST engine (libapp_rest.a), a PostgREST-compatible table API, served by
 * the rest endpoint (bin/rest: handlers/rest/, whose main.c says what it serves and whose
 * route.c routes a request to the verbs below).
 *
 * Layers, top to bottom: a file calls only files below it, never one above (the types of
 * this header are shared by all).
 *   schemas.c  the process's schemas, read once and shared by its threads
 *   watch.c    the schema read again when the database says it changed (NOTIFY pgrst,
 *              SQLite's schema version)
 *   read.c     GET and HEAD on a table or view
 *   flat.c     a PostgreSQL read of the common shapes as rows, their JSON written here
 *   write.c    POST, PATCH and DELETE
 *   commit.c   write.c's writes, committed by db_write() (common/dbwrite.h)
 *   idem.c     Idempotency-Key: a write's answer stored in its transaction, replayed
 *   rpc.c      functions, by GET or POST
 *   openapi.c  the root's OpenAPI 3.1 document: what the request's role may use
 *   auth.c     access control: JWTs, the request's role (PostgreSQL: SET LOCAL ROLE in
 *              the request's transaction; SQLite: grants.c), the request's settings
 *              (request.method, .path, .headers, .cookies, .jwt.claims) and the
 *              pre-request function (rest_pre_request)
 *   http.c     Prefer, Accept, Range, the query's parameters; a read's answer (status,
 *              Content-Range, the body as JSON, CSV, GeoJSON or one object); the answer to a
 *              table the schema does not hold (PostgREST 13's, or 12's)
 *   cookies.c  the Cookie header as request.cookies' JSON object
 *   respset.c  response.headers and response.status, as a function set them, applied
 *   select.c   SELECT and JSON assembly: one statement whose one row is the body
 *   where.c    WHERE: filters, and()/or() trees, the joins of embeds, !inner
 *   names.c    the tree's names resolved against the schema
 *   grants.c   SQLite's rest_grants: what each role may do on a table or function
 *   dialect.c  what PostgreSQL's and SQLite's SQL do differently: a struct per back end
 *   fts.c      PostgreSQL's text search queries as FTS5 queries (SQLite's fts filters)
 *   gen.c      rest's part of SQL writing over sqlb.h: its values' cap, aliases
 *   parse.c    the URL grammar into a tree of struct rest_node
 *   schema.c   what the database holds, introspected (schemas.c: once per process)
 *   reads.c    the tables an SQLite function's body reads, found as the schema is read
 *   errors.c   struct rest_err and its answer
 *
 * Ownership: the schemas are the process's, shared by its threads (schemas.c); a set
 * lives until the last thread holding it ends or reloads; everything a request produces
 * lives in the request's arena.
 */
#ifndef SLUICE_REST_H
#define SLUICE_REST_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "db.h"
#include "idem.h"
#include "req.h"
#include "resp.h"
#include "sqlb.h"

struct arena;
struct rest_dialect;
struct rest_lhs;

/* Limits: each one crossed is a 4xx. */
#define REST_QUERY_MAX		8192	/* query string bytes: 414 */
#define REST_FILTERS_MAX	64	/* filter conditions per request: 400 */
#define REST_IN_MAX		1000	/* values in one in.(...): 400 */
#define REST_EMBED_DEPTH	8	/* nested embeds: 400 */
#define REST_NODES_MAX		32	/* embeds per request: 400 */
#define REST_LOGIC_DEPTH	8	/* nested and()/or(): 400 */
#define REST_MEMBERS_MAX	256	/* keys of one object of select= ('*': all columns): 400 */
#define REST_PARAMS_MAX		256	/* bound values per statement */
#define REST_SQL_MAX		(256 * 1024)
/* Members of one sluice_obj() call on SQLite: a template and 126 values, SQLite's default
 * SQLITE_MAX_FUNCTION_ARG of 127; wider rows are concatenated instead. */
#define REST_OBJ_MEMBERS_MAX	126
#define REST_PATH_MAX		16	/* keys of one JSON path col->a->b: 400 */

/* schema.c: what the database holds. */

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
	char *comment;		/* PostgreSQL's COMMENT ON COLUMN, SQLite's sluice_comments
				 * row, or NULL (openapi.c) */
};

struct rest_table {
	char *name;
	int is_view;
	int hidden;		/* sluice's own tables: not served */
	struct rest_col *cols;
	int ncols;
	int rowid;		/* SQLite: a rowid table, whose rows come in rowid order */
	int fts;		/* SQLite: an FTS5 table (hidden; TABLE_fts indexes TABLE's
				 * columns for the fts filters: dialect.c) */
	/* Computed fields, PostgreSQL functions taking this table's row and returning one
	 * value: cols[ncols .. ncols + ncomputed), named like their function, found by
	 * rest_schema_col() (select=, filters, order) but not in '*' nor writable; PostgreSQL
	 * reads alias."fn" as "fn"(alias). */
	int ncomputed;
	char *comment;		/* COMMENT ON TABLE or VIEW (sluice_comments), or NULL */
};

#define REST_FK_COLS	8

/*
 * A foreign key from table (or view) from to table (or view) to.  A key of a view is one
 * of its base table's keys carried over to the view's columns (PostgreSQL: read from the
 * view's query), under the constraint's name.
 */
struct rest_fk {
	char *name;		/* the constraint's name (SQLite: from the DDL, else the name
				 * PostgreSQL would give it, table_col_fkey) */
	int from;		/* table index */
	int to;
	int ncols;
	int from_cols[REST_FK_COLS];	/* column indexes */
	int to_cols[REST_FK_COLS];
	int unique;		/* from_cols are a primary or unique key of from: one-to-one */
};

struct rest_func {
	char *name;
	int nargs;
	char **argnames;
	char **argtypes;
	int ndefaults;		/* the last ndefaults arguments may be left out */
	char **argdefaults;	/* SQLite: the value each of those takes when left out
				 * (NULL: SQL NULL), bound in its place; NULL on
				 * PostgreSQL, which applies its own defaults */
	int retset;
	int retvoid;		/* returns void: 204 without a body */
	int may_write;		/* volatile (PostgreSQL): a GET runs it read-only (rpc.c) */
	int rettable;		/* table index for setof/composite results, -1 for scalars; an
				 * anonymous record's (RETURNS TABLE, OUT parameters) is a hidden
				 * table of the function's name holding its columns */
	char *body;		/* SQLite: the SELECT, with $k placeholders for the args */
	int writes;		/* SQLite: the body is an INSERT, UPDATE or DELETE ...
				 * RETURNING, run before the call's SELECT (rpc.c) */
	char **reads;		/* SQLite: the tables the body reads (reads.c), which its
				 * caller must be allowed to read */
	int nreads;
	int reads_unknown;	/* SQLite: the body's tables could not all be told */
	char *rettype;		/* the type returned as the catalog names it ("integer",
				 * "album", "void", "record"), "" when unknown */
	char *comment;		/* COMMENT ON FUNCTION (sluice_comments), or NULL */
};

struct rest_schema {
	struct rest_table *tables;
	int ntables;
	struct rest_fk *fks;
	int nfks;
	struct rest_func *funcs;
	int nfuncs;
	/* PostgreSQL with PostGIS: its ST_AsGeoJSON(record), schema-qualified and quoted,
	 * for Accept: application/geo+json; NULL without it (SQLite: always), where that
	 * type is 406 PGRST107 as any type not served. */
	char *geojson;
};

/*
 * Finds the name the DDL of SQLite table table (CREATE TABLE ...) gives its foreign key
 * over the ncols columns cols to reftable: "CONSTRAINT name FOREIGN KEY (cols)
 * REFERENCES reftable" or "col type CONSTRAINT name REFERENCES reftable".  Returns 1
 * with the name in out (outlen bytes), 0 when the key has no name there (or is not
 * found, or its name does not fit).
 */
int rest_ddl_fk_name(const char *ddl, const char *const *cols, int ncols,
    const char *reftable, char *out, size_t outlen);
/* Loads the schema nsp (PostgreSQL; SQLite has one) through db, whose dialect is d.
 * Returns the schema (free with rest_schema_free()) or NULL when the database failed (its
 * error is on db). */
struct rest_schema *rest_schema_load(struct db *db, const struct rest_dialect *d,
    const char *nsp);
/* SQLite: fills each function's reads (reads.c).  0, or -1 when the database or memory
 * failed. */
int rest_schema_lite_reads(struct rest_schema *sc, struct db *db);
void rest_schema_free(struct rest_schema *sc);
int rest_schema_table(const struct rest_schema *sc, const char *name);	/* index or -1 */
int rest_schema_col(const struct rest_table *t, const char *name);	/* index or -1 */
const struct rest_func *rest_schema_func(const struct rest_schema *sc, const char *name);

/* errors.c: a failure to answer, with PostgREST's code.  details_json: details holds
 * JSON text (PGRST201's array of relationships), written as it is; else a string. */
#define REST_ERR_DETAILS	4096
struct rest_err {
	int status;
	const char *code;
	char message[256];
	char details[REST_ERR_DETAILS];
	int details_json;
	const char *hint;
	char hint_buf[512];	/* where hint points when it was composed */
};

/* Fills e (message from fmt, truncated to fit; details copied when not NULL). */
void rest_err_set(struct rest_err *e, int status, const char *code, const char *details,
    const char *fmt, ...) __attribute__((format(printf, 5, 6)));
/* Writes e as the response; returns 0. */
int rest_error(struct resp *rs, const struct rest_err *e);
/* 406 PGRST116: the object Accept asked for one row and there were rows.  Returns 0. */
int rest_error_not_one(struct resp *rs, int64_t rows);
/* 400 PGRST124: Prefer: max-affected=N was exceeded by rows.  Returns 0. */
int rest_error_max_affected(struct resp *rs, int64_t rows);
struct rest_thread;
/* The last failure on db (the request's connection, or the one its write ran on) as the
 * response: serve_db_error_words() with the database's own words unless t's
 * rest_db_errors=hide (t->db_words).  Returns 0. */
int rest_db_error(struct resp *rs, const struct rest_thread *t, struct db *db);

/* parse.c: the tree of a request. */

enum rest_op {
	REST_OP_EQ, REST_OP_NEQ, REST_OP_GT, REST_OP_GTE, REST_OP_LT, REST_OP_LTE,
	REST_OP_LIKE, REST_OP_ILIKE, REST_OP_IN, REST_OP_IS,
	REST_OP_ISDISTINCT, REST_OP_MATCH, REST_OP_IMATCH,
	REST_OP_FTS, REST_OP_PLFTS, REST_OP_PHFTS, REST_OP_WFTS,
	REST_OP_CS, REST_OP_CD, REST_OP_OV,
	REST_OP_SL, REST_OP_SR, REST_OP_NXL, REST_OP_NXR, REST_OP_ADJ,
	REST_OP__MAX
};

/* op(any).{a,b} and op(all).{a,b}: the comparison with each value, or'ed or and'ed. */
enum rest_quant { REST_Q_NONE, REST_Q_ANY, REST_Q_ALL };

/* A JSON path after a column, col->a->1->>b: keys (an all-digit key is an array index);
 * last_text when the last arrow is ->> (the value as text, not JSON). */
struct rest_path {
	const char **keys;
	size_t nkeys;
	int last_text;
};

enum rest_is { REST_IS_NULL, REST_IS_NOT_NULL, REST_IS_TRUE, REST_IS_FALSE };

enum rest_cond_kind { REST_C_LEAF, REST_C_AND, REST_C_OR };

struct rest_cond {
	enum rest_cond_kind kind;
	int negate;
	/* leaf */
	const char *col;
	int colidx;		/* resolved by names.c */
	enum rest_op op;
	const char *val;
	size_t vallen;
	const char **list;	/* in.(...) values */
	size_t *listlen;
	size_t nlist;
	enum rest_is is;
	enum rest_quant quant;	/* with list: op(any|all).{...} */
	const char *lang;	/* fts(lang): the text search configuration, or NULL */
	struct rest_path *path;	/* col->a->>b: NULL for the column itself */
	/* and/or */
	struct rest_cond **kids;
	size_t nkids;
};

struct rest_order {
	const char *col;
	int desc;
	int nulls;		/* 0 default, 1 first, 2 last */
	struct rest_path *path;	/* order=col->a.desc: NULL for the column itself */
};

/*
 * REST_I_EXPR: a computed member, [alias:]col[->a->>b][::type][.agg()[::type]] or
 * count(); its alias is always set (PostgREST's key: the last path key, the aggregate's
 * name, else the column's).
 */
enum rest_item_kind { REST_I_STAR, REST_I_COL, REST_I_EMBED, REST_I_EXPR };

enum rest_agg { REST_AGG_NONE, REST_AGG_COUNT, REST_AGG_SUM, REST_AGG_AVG, REST_AGG_MIN,
	REST_AGG_MAX };

/* The aggregates' names, in the URL and in SQL alike, by enum rest_agg ("" for none). */
extern const char *const rest_agg_names[];

struct rest_node;

struct rest_item {
	enum rest_item_kind kind;
	const char *alias;	/* NULL: the name */
	const char *name;	/* REST_I_EXPR: the column, NULL for count() */
	struct rest_node *embed;
	/* REST_I_EXPR */
	struct rest_path *path;
	const char *cast;	/* col::type (before the aggregate), or NULL */
	enum rest_agg agg;
	const char *agg_cast;	/* agg()::type, or NULL */
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
	/* resolved by names.c */
	int table;
	int fk;			/* relationship to the parent */
	int fk_forward;		/* 1: parent holds the key (to-one); 0: child does (to-many) */
	int junction;		/* many-to-many: junction table index, else -1 */
	int fk2;		/* junction -> this table */
	int spread;		/* ...rel(cols): the members go into the parent's object */
	int one;		/* one row (an object): to-one, or a one-to-one key */
};

/* Values bound to the statement, in order ($1, $2, ...): at most REST_PARAMS_MAX, past
 * which the generator answers PGRST100 (rest_param_*()). */
struct rest_params {
	struct sqlb_vals vals;
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

/* Whom a request's SQLite grants are checked for, past the router's check of the table
 * it names: the tables its embeds read (names.c).  role NULL: no check (PostgreSQL, or
 * access control off). */
struct rest_access {
	const struct rest_auth *auth;
	const char *role;	/* borrowed for the request */
	int anon;		/* the anonymous role: a refusal is 401, else 403 */
};

/* The generator's state for one statement, shared by gen.c, names.c, where.c, select.c. */
struct rest_gen {
	const struct rest_schema *sc;
	const struct rest_dialect *d;
	struct arena *a;
	struct buf *sql;
	struct rest_params *p;
	struct rest_err *e;
	int seq;		/* alias counter */
	/* The LEFT JOINs of the FROM whose select list is being generated, where to-one
	 * embeds go; NULL where that FROM is not generated here (writes). */
	struct buf *joins;
	int pgrst12;		/* rest_dialect_version=12: PostgREST 12's answers where 13's
				 * differ (to-many spreads); 0: 13's */
	/* The request's SQLite grants, which every embedded table must allow to be read;
	 * NULL (or its role NULL): no check. */
	const struct rest_access *access;
	/* rest_sql_select(): the longest body the database may send back (the response
	 * cap), for a dialect with body_over; 0: no bound in the statement. */
	int64_t body_max;
	/* rest_sql_select(): whether the body's top array is written bare (the dialect's
	 * arr_bare_open), its brackets left to rest_answer_read() */
	int bare;
	/* rest_sql_select(): the dialect's resp_settings after the body's columns (a
	 * function's call), read by rest_answer_read() */
	int resp_settings;
};

/*
 * fts.c: v (len bytes), the text of filter op (REST_OP_FTS, _PLFTS, _PHFTS or _WFTS),
 * read as PostgreSQL's to_tsquery, plainto_, phraseto_ or websearch_to_tsquery reads it,
 * appended to out as an FTS5 query whose every word is a quoted string.  Returns 1 with
 * *neg 0 when the filter matches the rows out matches, *neg 1 when it matches those it
 * does not; 0 when the text holds no word (the filter matches nothing, out untouched);
 * -1 with e set: 400 42601 for a malformed to_tsquery text, 400 0A000 for what FTS5
 * cannot express, 400 54000 past the bound on terms.  Nodes come from a.
 */
int rest_fts_query(struct arena *a, int op, const char *v, size_t len, struct buf *out,
    int *neg, struct rest_err *e);

/* gen.c: what rest adds to sqlb.h's quoting and values (every function writes to the
 * buffer it is given, g->sql for g). */
/* Appends alias."name" of column c of table t to g->sql. */
void rest_gen_col(struct rest_gen *g, const char *alias, int t, int c);
/* Empties p for a statement, its values from a (borrowed until the statement ran). */
void rest_params_init(struct rest_params *p, struct arena *a);
/* Adds a bound value; returns its number ($k), or -1 with g->e set (too many values, or
 * the arena full). */
int rest_param_text(struct rest_gen *g, const char *v, size_t len);
int rest_param_int(struct rest_gen *g, int64_t v);
int rest_param_null(struct rest_gen *g);
/* prefix and a number unique in the statement ("_t3") into out (len bytes; 16 do). */
void rest_next_alias(struct rest_gen *g, const char *prefix, char *out, size_t len);
struct rest_thread;
/* g for a statement of t's into sql, its values into p, its errors into e; body_max as
 * struct rest_gen's. */
void rest_gen_start(struct rest_gen *g, struct rest_thread *t, struct arena *a,
    struct buf *sql, struct rest_params *p, struct rest_err *e, int64_t body_max);

/*
 * dialect.c: every piece of SQL the back ends write differently (see dialect.c).  The
 * strings are appended as they are ("" where a back end has nothing to add); the
 * functions write to the buffer given or to g->sql and return 0, or -1 with g->e set.
 */
struct rest_dialect {
	/* The column's value as its JSON should look (a CSV column, a template value). */
	void (*col_value)(struct buf *b, const char *alias, const struct rest_col *c);
	/* The column's JSON text, 'null' for NULL. */
	void (*col_text)(struct buf *b, const char *alias, const struct rest_col *c);
	/* The spellings rest shares with every SQL writer (sqlb.h). */
	const struct sqlb_dialect *sqlb;
	/* alias.c op $k, with v bound (op: = <> > >= < <=, or sqlb->is_not). */
	int (*cmp)(struct rest_gen *g, const struct rest_lhs *l, const char *op, const char *v,
	    size_t len);
	/* like.v or ilike.v, '*' as the wildcard. */
	int (*like)(struct rest_gen *g, const struct rest_lhs *l, int ilike, const char *v,
	    size_t len);
	/* in.(...) with at least one value. */
	int (*in)(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond);
	/* The operators one back end lacks (match, imatch, fts, plfts, phfts, wfts, cs, cd,
	 * ov, sl, sr, nxl, nxr, adj): cond's op over l with v bound; -1 with g->e set (a 400
	 * naming the operator) where the back end has no such operator. */
	int (*op)(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond,
	    const char *v, size_t len);
	/* The left side of a filter or an order: the column or its JSON path (->> as text,
	 * -> as JSON).  0, or -1 with g->e set (a key the back end cannot express). */
	int (*lhs)(struct rest_gen *g, const struct rest_lhs *l);
	/* A JSON path's value in select= (the same expression as lhs() writes; its JSON is
	 * col_text's of a JSON column for ->, of text for ->>).  0 or -1. */
	int (*path_value)(struct rest_gen *g, const struct rest_lhs *l);
	/* col::type: the back end's type for a whitelisted name, NULL when the name is not
	 * one or this back end cannot cast to it; the kind it gives in *kind. */
	const char *(*cast_type)(const char *name, enum rest_kind *kind);
	/* Writes what goes before the cast's expression (open 1), then after it (open 0),
	 * type from cast_type(). */
	void (*cast)(struct buf *b, const char *type, int open);
	/* A computed value's JSON text ('null' for NULL): open EXPR close; json_* for a
	 * value that is JSON text already (a -> path). */
	const char *expr_open, *expr_close, *expr_json_open, *expr_json_close;
	/* Around a computed timestamp (min() or max() of one): its ISO-8601 spelling. */
	const char *ts_open, *ts_close;
	int obj_template;	/* row objects by sluice_obj()/sluice_arr(), else concatenated */
	const char *arr_open;	/* ARR(x) = arr_open x arr_close: the array of the x */
	const char *arr_close;
	/* A read's top array without its brackets, its elements joined by commas ('' for
	 * none), which rest_answer_read() writes around it; NULL: arr_open and arr_close.
	 * Only for a dialect that concatenates objects (obj_template 0). */
	const char *arr_bare_open, *arr_bare_close;
	const char *limit_none;	/* before an offset without a limit */
	/* CSV: the aggregate around the lines, and its functions. */
	const char *csv_agg_open, *csv_agg_close;
	const char *strpos, *as_text, *chr;
	/* Writes: written around and into INSERT, UPDATE and DELETE (write.c). */
	const char *write_open;		/* before the statement */
	const char *insert_alias;	/* after INSERT's table */
	const char *write_alias;	/* after UPDATE's and DELETE's table: _t0 */
	const char *insert_rows;	/* the rows of the body $1, FROM of INSERT's SELECT */
	const char *insert_row;		/* one of them, for json_value() */
	/* The same when the body is one object (NULL: as an array of one). */
	const char *insert_one_rows, *insert_one_row;
	const char *patch_open;		/* the PATCH body: patch_open $k patch_close */
	const char *patch_close;
	const char *insert_returning, *update_returning;
	const char *ret_open;		/* the representation: ret_open OBJ ret_close */
	int ret_agg;			/* its OBJ is ARR(OBJ) over all rows */
	int ret_table;			/* its alias is the quoted table name, not _t0 */
	const char *ret_close;
	const char *write_minimal;	/* after the statement without representation */
	/* The value of column c from the JSON object src; with missing_default, the column's
	 * default when the key is absent. */
	void (*json_value)(struct buf *b, const struct rest_col *c, const char *src,
	    int missing_default);
	/* The same for a string value bound alone as $k, or NULL: json_value() only. */
	void (*bound_value)(struct buf *b, const struct rest_col *c, int k);
	/* Steps through the write's result: the body into out with rep, the row count in
	 * rows.  0, or -1 when the database failed (its error is on the connection). */
	int (*write_read)(struct db_stmt *st, int rep, struct buf *out, int64_t *rows);
	/* The FROM item calling f with $1..$n, the arguments given (given[i] != 0; NULL:
	 * all) in order, and the SELECT around a scalar one. */
	void (*call)(struct buf *b, const struct rest_func *f, const unsigned char *given);
	const char *scalar_open, *scalar_close;
	/*
	 * What a read's body becomes past rest_gen's body_max (_s._b the body): an
	 * expression failing with 54000, as the back end's own limit on a value fails
	 * (SQLite's SQLITE_LIMIT_LENGTH, set to the same cap by db_sqlite.c, needs none:
	 * NULL), so that the worker never receives more than the cap.
	 */
	const char *body_over;
	/* Before a SELECT: its plan as JSON with "Plan Rows" (count=planned), or NULL. */
	const char *explain;
	/* The statement making $1 (a quoted schema name) the transaction's search_path;
	 * NULL: one schema only (then the schema queries below take no parameter; else $1
	 * is the schema's name). */
	const char *search_path;
	/*
	 * Introspection (schema.c).  schema_cols: table, kind ("v..." for a view), column,
	 * type, not null (0/1), default ('' for none), position in the primary key (0 when
	 * not in it).  schema_fks: name, from table, to table, from column, to column, one
	 * row per column pair.  schema_funcs: name, arguments, set-returning (0/1), the
	 * table returned ('' for a scalar), the SQLite body or NULL, how many of the last
	 * arguments have defaults, void (0/1), the columns of an anonymous record returned
	 * (in the arguments' format; '' for none), the type returned.  schema_funcs_table:
	 * a table that query needs (no functions without it), or NULL.
	 */
	const char *schema_cols, *schema_fks, *schema_funcs;
	const char *schema_funcs_table;
	/*
	 * schema_uniques: table, constraint, column of every primary key and unique
	 * constraint, one row per column.  schema_view_cols (NULL: none): view, its column,
	 * the base table and column it shows as it is.  schema_ddl (NULL: none): table and
	 * its CREATE TABLE text, for the names of foreign keys and rowid tables.
	 */
	const char *schema_uniques, *schema_view_cols, *schema_ddl;
	/*
	 * schema_comments: kind ('r' a table or view, 'f' a function, '' whichever has
	 * the name), name, column ('' for the relation itself), text; schema_comments_table:
	 * a table that query needs (no comments without it), or NULL.  schema_privs (NULL:
	 * none, rest_grants decides): kind ('r', 'f'), name, and whether the current role
	 * may select (for a function: execute), insert, update, delete, as 0/1.
	 */
	const char *schema_comments, *schema_comments_table, *schema_privs;
	/* Two more columns of a function's call, response.headers and response.status as
	 * the function set them (NULL: none, SQLite). */
	const char *resp_settings;
	/* schema_geojson (NULL: none): one row, PostGIS's ST_AsGeoJSON(record) as a
	 * qualified, quoted name, or no row without PostGIS. */
	const char *schema_geojson;
	char schema_args_sep;	/* ',': "a integer, b text"; else name sep type sep ... */
	/* What a column or argument of this declared type holds. */
	enum rest_kind (*kind_of)(const char *type);
};

/* The left side of a comparison: a column of alias, or a JSON path into it. */
struct rest_lhs {
	const char *alias;
	const struct rest_col *c;
	const struct rest_path *path;	/* NULL: the column itself */
};

/* 1 when name is a type select= may cast to on some back end (rest_dialect.cast_type()
 * says whether this one can). */
int rest_cast_known(const char *name);

/* The dialect of a connection to be; never NULL. */
const struct rest_dialect *rest_dialect_of(enum db_backend be);

/* names.c */
/* Resolves names in the tree against the schema (table t for the root).  0 or -1. */
int rest_resolve(struct rest_gen *g, struct rest_node *root, int table);
/*
 * The kind of a resolved computed item's argument, before its aggregate: its input
 * cast's, else its JSON path's (text for ->>), else its column's of table t; an integer
 * for count() of the rows.
 */
enum rest_kind rest_expr_arg_kind(const struct rest_gen *g, int t, const struct rest_item *it);
/*
 * The table of sc that has a relationship (a foreign key either way, or a many-to-many)
 * whose name is closest to name, as PGRST200's hint names it for a parent PostgREST 12
 * did not find ("Perhaps you meant 'album' instead of 'albums'."); NULL when none scores
 * 0.33 or more.  Borrowed from sc.
 */
const char *rest_names_closest_related(const struct rest_schema *sc, const char *name);

/* where.c */
/* The condition joining embed n (alias) to its parent (palias). */
void rest_sql_join(struct rest_gen *g, const struct rest_node *n, const char *alias,
    const char *palias);
/* " and (filters) and exists(inner embeds)..." for node n over alias.  0 or -1. */
int rest_sql_filters(struct rest_gen *g, const struct rest_node *n, const char *alias);
/* The WHERE conditions of node over alias (for PATCH and DELETE), " where true" first
 * when first.  0 or -1. */
int rest_sql_where(struct rest_gen *g, struct rest_node *n, const char *alias, int first);

/* select.c */
enum rest_shape {
	REST_SHAPE_JSON,	/* one column: the JSON array; a second: the row count */
	REST_SHAPE_CSV,
	REST_SHAPE_GEOJSON,	/* PostgreSQL with PostGIS: one GeoJSON FeatureCollection */
};

/*
 * SELECT for GET: columns (1) body (JSON array or CSV text), (2) rows in the page, and
 * with count (3) the total.  from is the quoted relation or a function call, NULL for the
 * root's table.  0 or -1.
 */
int rest_sql_select(struct rest_gen *g, struct rest_node *root, const char *from,
    enum rest_shape shape, int count);
/*
 * The JSON object of one row of n over alias (SQLite's RETURNING), or with agg the array
 * of the rows' objects (PostgreSQL's select over the written rows).  0 or -1.
 */
int rest_sql_row_json(struct rest_gen *g, struct rest_node *n, const char *alias, int agg);
/*
 * " order by ... limit $k offset $k" of n over alias, as its order=, limit= and offset=
 * say; table: alias is a table (not a function's result, rows not groups), whose SQLite
 * rows come in rowid order without order=.  0 or -1 (g's error set).
 */
int rest_sql_order_limit(struct rest_gen *g, const struct rest_node *n, const char *alias,
    int table);
/* Whether g's statement caps its body (body_max set, the dialect has body_over). */
int rest_sql_caps_body(const struct rest_gen *g);
/* The capped body and its row count, from a subquery _s with columns _b and _n: _b when
 * it is body_max bytes at most, else body_over, which fails the statement (54000). */
void rest_sql_capped_body(struct rest_gen *g);
/* The output keys of n in order (CSV header); returns how many were stored in keys. */
int rest_sql_keys(struct rest_gen *g, struct rest_node *n, const char **keys, int max);

/* http.c: what Prefer asks for beyond the tokens the verbs test with rest_prefer(). */
enum rest_count {
	REST_COUNT_NONE,
	REST_COUNT_EXACT,
	REST_COUNT_PLANNED,	/* the planner's estimate (PostgreSQL; SQLite: exact) */
	REST_COUNT_ESTIMATED,	/* the same here: sluice has no max-rows threshold */
};

struct rest_prefs {
	enum rest_count count;
	int rollback;		/* tx=rollback: the request runs, then is rolled back */
	int64_t max_affected;	/* max-affected=N under handling=strict; -1: none */
	char applied[256];	/* Preference-Applied: the tokens honoured, or "" */
};

#define REST_SCHEMAS_MAX	8

/* The state of one serving thread (rq->thread; common/serve.h), made and kept by the
 * router (handlers/rest/route.c). */
struct rest_thread {
	struct rest_schema *sc;		/* the request's schema, one of set's */
	const char *scname;		/* its name */
	struct rest_schemas *set;	/* the process's schemas the thread holds (schemas.c):
					 * rest_schemas, the first the default */
	char *scnames[REST_SCHEMAS_MAX];
	int nschemas;
	const struct rest_dialect *d;	/* its connection's dialect */
	struct buf sql;			/* the statement being written, reused */
	int unfiltered_writes;		/* rest_unfiltered_writes=1: PATCH/DELETE of all rows */
	int pgrst12;			/* rest_dialect_version=12 (rest_gen's pgrst12) */
	int db_words;			/* rest_db_errors=pass: the database's own words for
					 * its integrity and input errors (rest_db_error()) */
	int64_t body_max;		/* the response cap (resp_max): a read's longest body */
	const char *cors_origins;	/* rest_cors_origins, comma-separated; NULL: no CORS */
	const struct rest_auth *auth;	/* the process's access control (auth.c) */
	int in_txn;			/* the request's transaction is open (rest_txn_begin()): the
					 * verbs neither begin nor end one of their own */
	struct rest_prefs prefs;	/* the request's Prefer, read by the router */
	struct rest_access access;	/* the request's SQLite grants (auth.c) */
	int64_t rows;			/* rows of the last answer of rest_answer_read() */
	struct idem *idem;		/* the request's Idempotency-Key, or NULL (idem.c) */
	int idem_table;			/* sluice_idempotency is known to exist */
	/* response.headers and response.status as the request's functions left them
	 * (respset.c), in the request's arena; NULL when none was read or set. */
	const char *resp_headers, *resp_status;
};

/*
 * schemas.c: the schemas of rest_schemas, read once per process and shared by its
 * threads.  rest_schemas_take() returns a reference to a set read for the serve_reloads()
 * count hups or later: the newest one published, or one it reads through db (schemas
 * names[0..n), with dialect d) after waiting, within db's budget, for the thread reading
 * it.  NULL when the database failed (its error is on db) or memory ran out.  A set is
 * read-only; rest_schemas_get() gives its i-th schema (NULL past the end),
 * rest_schemas_drop() lets go of a reference (NULL is allowed).
 */
struct rest_schemas;
struct rest_schemas *rest_schemas_take(struct db *db, const struct rest_dialect *d,
    char *const *names, int n, unsigned hups);
struct rest_schema *rest_schemas_get(const struct rest_schemas *s, int i);
void rest_schemas_drop(struct rest_schemas *s);

/* auth.c: access control (see auth.c). */
#define REST_JWT_MAX		8192	/* token bytes: 401 past it */
#define REST_JWT_SECRET_MIN	32	/* an HMAC secret's bytes, as PostgREST */
#define REST_JWT_SKEW		30	/* seconds allowed around exp, nbf and iat */
#define REST_ROLE_MAX		64	/* a role name's bytes, its NUL included */
#define REST_ROLE_PATH_MAX	8	/* keys in rest_jwt_role_claim */
#define REST_GRANTS_MAX		32	/* entries in rest_grants */
#define REST_GRANT_NAME_MAX	64	/* a table or function name of rest_grants, its NUL
					 * included (PostgreSQL's NAMEDATALEN) */

enum rest_key_kind { REST_KEY_NONE, REST_KEY_HMAC, REST_KEY_RSA, REST_KEY_EC };

/* Privileges of rest_grants (SQLite), by bit in the order of the words. */
enum {
	REST_PRIV_SELECT = 1 << 0,
	REST_PRIV_INSERT = 1 << 1,
	REST_PRIV_UPDATE = 1 << 2,
	REST_PRIV_DELETE = 1 << 3,
	REST_PRIV_EXECUTE = 1 << 4,
	REST_PRIV_ALL = (1 << 5) - 1,
};

/* One entry of rest_grants: what role may do on the tables and functions of on (a
 * comma-separated list of names, in the rest_auth's grants_buf), or on all of them. */
struct rest_grant {
	char role[REST_ROLE_MAX];
	unsigned privs;
	const char *on;		/* "artist,album", or NULL: every table and function */
};

/* The endpoint's access control, from its settings. */
struct rest_auth {
	int on;				/* any of the settings below is set */
	enum rest_key_kind kind;
	unsigned char *key;		/* the secret, or the PEM public key; NUL-terminated */
	size_t keylen;
	const char *aud;		/* rest_jwt_aud, or NULL */
	const char *anon;		/* rest_anon_role, or NULL */
	struct buf anon_claims;		/* {"role":anon}: the claims of a request without a
					 * token, made once */
	const char *role_path[REST_ROLE_PATH_MAX];	/* rest_jwt_role_claim's keys */
	int nrole_path;
	char *role_buf;			/* holds them */
	struct rest_grant grants[REST_GRANTS_MAX];
	int ngrants;
	char *grants_buf;		/* holds the entries' table lists */
	const char *pre_request;	/* rest_pre_request (PostgreSQL), or NULL */
	/* The statement that starts a PostgreSQL request's transaction: the role ($1, only
	 * in enter_sql), then request.jwt.claims, .method, .path, .headers and .cookies,
	 * then rest_pre_request's function if set (settings_sql: without access control,
	 * when that function is set). */
	struct buf enter_sql, settings_sql;
};


/* respset.c */
#define REST_RESP_HEADERS_MAX	64	/* headers one response.headers may set */
/*
 * Applies response.headers and response.status (NULL or "": unset) to an answer below
 * 400.  0, or -1 with e set (500 PGRST111 or PGRST112), nothing applied.
 */
int rest_resp_apply(struct arena *ar, struct resp *rs, const char *headers,
    const char *status, struct rest_err *e);
/* Keeps columns col and col + 1 of st's row (response.headers, response.status) in
 * t->resp_headers and t->resp_status when not empty. */
void rest_resp_capture(struct arena *ar, struct rest_thread *t, struct db_stmt *st,
    int col);

/* cookies.c */
#define REST_COOKIES_MAX	128		/* pairs kept of one Cookie header */
#define REST_COOKIES_BYTES	(64 * 1024)	/* past it, request.cookies is {} */
/* The Cookie header (NULL: none) as the JSON object of request.cookies, in the arena,
 * its length in *len; NULL when the arena is full. */
char *rest_cookies_json(struct arena *ar, const char *header, size_t *len);

/* Who a request runs as. */
struct rest_identity {
	int active;		/* access control is on: role and claims are set */
	int anon;		/* the anonymous role (no token, or a token without a role) */
	const char *role;	/* borrowed from the token's arena copy or the settings */
	const char *claims;	/* the claims' JSON text, in the request's arena (or the
				 * process's rest_auth for the anonymous role) */
	size_t claimslen;
};

/* Reads the settings into a (strings borrowed from the environment; free the rest with
 * rest_auth_clear()).  0, or -1 with the reason logged: both a secret and a secret file,
 * an unreadable key file, a secret shorter than REST_JWT_SECRET_MIN bytes, a malformed
 * role claim path or grant list. */
int rest_auth_load(struct rest_auth *a);
void rest_auth_clear(struct rest_auth *a);
/* The process's configuration: loaded by rest_auth_init() in main() before serving (0 or
 * -1 as rest_auth_load()), freed by rest_auth_fini(), read by every thread. */
int rest_auth_init(void);
void rest_auth_fini(void);
const struct rest_auth *rest_auth_config(void);
/*
 * Verifies token (len bytes, not NUL-terminated) at time now against a's key and fills id
 * (role and claims in the arena ar).  Returns 0, or -1 with e set: 401 PGRST301 (invalid,
 * expired, not yet valid, wrong audience, wrong algorithm), 401 PGRST302 (no role and no
 * anonymous role), 500 PGRST300 (no key configured), 413 (the arena is full).
 */
int rest_jwt_verify(const struct rest_auth *a, const char *token, size_t len, time_t now,
    struct arena *ar, struct rest_identity *id, struct rest_err *e);
/* The request's identity from its Authorization header: id->active is 0 when access
 * control is off.  0, or -1 with e set as rest_jwt_verify() does. */
int rest_auth_identify(struct req *rq, const struct rest_auth *a, struct rest_identity *id,
    struct rest_err *e);
/* Answers e with the WWW-Authenticate header PostgREST sends with it.  Returns 0. */
int rest_auth_error(struct resp *rs, const struct rest_err *e);
/*
 * Before the verb, for an active identity: on SQLite checks rest_grants for the table or
 * (rpc) function name (NULL: only that rest_grants names the role, for openapi.c, which
 * asks rest_auth_may() table by table); on PostgreSQL opens the request's transaction and sets the role
 * and request.jwt.claims, request.method, request.path, request.headers, request.cookies in it
 * (t->in_txn), then calls rest_pre_request's function, in one statement.  Without access control
 * (id->active 0) it is called only where that function is set: the same without the role
 * (request.jwt.claims {}), and nothing on SQLite.  Returns 0, or -1 after answering the refusal
 * or the database's error (what the function raised).
 */
int rest_auth_enter(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id, const char *name, int rpc);
/* grants.c: SQLite's rest_grants. */
/*
 * The privileges need (REST_PRIV_* bits) of role on the table or function name, by the
 * union of role's rest_grants entries that cover name.  1 when all are granted, 0 when
 * some are not, -1 when rest_grants names the role nowhere.
 */
int rest_auth_may(const struct rest_auth *a, const char *role, const char *name,
    unsigned need);
/*
 * Parses a rest_grants value s into a (entries appended to a->grants, their table lists
 * copied into a->grants_buf, which rest_auth_clear() frees).  0, or -1 with the reason
 * (the entry's number and text, and what is wrong in it) written into err[errlen].
 */
int rest_auth_grants_parse(struct rest_auth *a, const char *s, char *err, size_t errlen);
/* http.c: opens the request's transaction unless t->in_txn says it is open, read-only
 * for GET and HEAD (as PostgREST runs them), read-write otherwise, and sets t->in_txn.
 * 0, or -1 with the error on rq->db. */
int rest_txn_begin(struct req *rq, struct rest_thread *t);
/* After the verb: when PostgreSQL refused the role (42501), answers 401 (anonymous) or
 * 403 as PostgREST does and rolls back the transaction rest_auth_enter() opened; any other
 * outcome leaves the transaction to the router, which ends every request's alike. */
void rest_auth_leave(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id, const char *name, int rpc);

/* http.c */
enum rest_accept {
	REST_ACCEPT_BAD = -1,
	REST_ACCEPT_JSON,
	REST_ACCEPT_CSV,
	REST_ACCEPT_OBJECT,
	REST_ACCEPT_GEOJSON,	/* application/geo+json: where the schema has PostGIS */
	REST_ACCEPT_PLAN,	/* application/vnd.pgrst.plan[+text]: EXPLAIN's text */
	REST_ACCEPT_PLAN_JSON,	/* application/vnd.pgrst.plan+json */
};

/*
 * The request's body as JSON, for a write or a function call: Content-Type
 * application/json (415 PGRST107 otherwise, so that a cross-site form cannot write), valid
 * JSON nested at most depth deep, no "\u0000" escape (cJSON would cut the string there) and
 * no number beyond a double's range (1e999: stored as infinity, printed as no JSON): 400
 * PGRST102.  Returns the tree (caller deletes with cJSON_Delete()) or NULL with e set.
 */
cJSON *rest_body_json(const struct req *rq, int depth, struct rest_err *e);
/* 1 when the Prefer header carries token ("return=representation"). */
int rest_prefer(const struct req *rq, const char *token);
/*
 * Reads Prefer (every Prefer header, comma-separated) into pf.  Under handling=lenient
 * (the default) an unknown or malformed token is ignored; under handling=strict it is 400
 * PGRST122, as is a max-affected= that is not a count.  0, or -1 with e set.
 */
int rest_prefs_read(const struct req *rq, struct rest_prefs *pf, struct rest_err *e);
/*
 * The planner's estimate of the rows of root over the relation from (quoted table name),
 * for count=planned|estimated: 0 with *n set, or -1 when the back end has no planner
 * (the caller counts exactly) or the estimate failed (logged).
 */
int rest_count_planned(struct req *rq, struct rest_thread *t, struct rest_node *root,
    int table, int64_t *n);
/* The response type the Accept header asks for, or REST_ACCEPT_BAD with e set (406
 * PGRST107); application/geo+json only where sc has PostGIS (sc->geojson). */
enum rest_accept rest_accept(const struct req *rq, const struct rest_schema *sc,
    struct rest_err *e);
/* The shape of the body a read answers acc with (CSV, GeoJSON, else JSON). */
enum rest_shape rest_shape_of(enum rest_accept acc);
/* For the plan types: "explain (format F[, option...]) " from Accept's options=
 * (analyze|verbose|settings|buffers|wal) into b.  0, or -1 with e set (an unknown option,
 * or a back end without EXPLAIN's JSON: 406 PGRST107). */
int rest_plan_prefix(const struct req *rq, const struct rest_thread *t,
    enum rest_accept acc, struct buf *b, struct rest_err *e);
/* The Range header into root's offset and limit.  0, or -1 with e set (416). */
int rest_range(struct req *rq, struct rest_node *root, struct rest_err *e);
/* Parses select= and every parameter not in skip (NULL-terminated) nor an argument of fn.
 * 0, or -1 with e set. */
int rest_apply_params(struct req *rq, struct rest_node *root, const char *const *skip,
    const struct rest_func *fn, struct rest_err *e);
/* Prepares t->sql on db and binds p.  The statement is db's (db_prepare()); NULL with the
 * error on db. */
struct db_stmt *rest_bind(struct db *db, const struct rest_thread *t,
    const struct rest_params *p);
/* Runs sql, a count with $1 bound to p's first value (the body of an upsert), on db.
 * 0 with *n set, or -1 when the database failed (its error is on db). */
int rest_count_rows(struct db *db, const char *sql, const struct rest_params *p, int64_t *n);
/* Prepares t->sql on rq->db and binds p.  0, or -1 after answering the database error. */
int rest_bind_run(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, struct db_stmt **out);
/* Runs a statement from rest_sql_select() and writes the response; the total is the
 * statement's count (count), or planned when it is not negative.  t->rows gets the rows
 * of the page.  Returns 0. */
int rest_answer_read(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_gen *g, const struct rest_node *root, enum rest_accept acc,
    int count, int64_t planned, const char *csv_header);
/*
 * Answers a read whose JSON array (rows objects) is in rs->body: status, Content-Range
 * (not counted), the one object when acc asks for it (406 unless rows is 1).  t->rows
 * gets rows.  Returns 0.
 */
int rest_answer_rows(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_node *root, enum rest_accept acc, int64_t rows);
/* watch.c */
/*
 * Called at each request with its connection: on PostgreSQL, starts the worker's LISTEN
 * on rest_channel the first time; on SQLite, looks at the schema version once a second.
 * A change counts a reload (serve_reload_soon()).
 */
void rest_watch(struct db *db);
/* Stops the LISTEN (the worker's end). */
void rest_watch_stop(void);

/* flat.c */
/* Whether a read of root can be answered by rest_flat_read(): on PostgreSQL, JSON (an
 * array or the one object), no count, and a shape flat.c's comment lists. */
int rest_flat_fits(const struct rest_gen *g, const struct rest_node *root,
    enum rest_accept acc, int count, int64_t planned, enum db_backend backend);
/* Answers the read of root (resolved by g, whose statement it writes) from the rows of
 * one statement, their JSON written by the worker.  Returns 0. */
int rest_flat_read(struct req *rq, struct resp *rs, struct rest_thread *t, struct rest_gen *g,
    struct rest_node *root, enum rest_accept acc);

/* The CSV header line of root's output keys, in g's arena; NULL when it is full. */
char *rest_csv_header(struct rest_gen *g, struct rest_node *root);

/* http.c */
/*
 * The answer to a request naming a table (name) the request's schema does not hold: 404
 * PGRST205 as PostgREST 13 (it looks in its schema cache first); under
 * rest_dialect_version=12 as PostgREST 12, which looked for no table before its
 * statement: select= read first (400 PGRST100), an embed or spread a relationship it
 * cannot find (400 PGRST200), a POST's or PATCH's body read (415, 400 PGRST102) and, when
 * it or columns= names a column, 404 with {} (12's NotFound, no code), else PostgreSQL's
 * 404 42P01 ("relation \"public.x\" does not exist").  Returns 0.
 */
int rest_missing_table(struct req *rq, struct resp *rs, const struct rest_thread *t,
    const char *name);

/* The verbs: each answers the request in rs and returns 0 (or -1 on a failure it did not
 * answer, which the serve loop turns into a 500). */
/* read.c */
int rest_read(struct req *rq, struct resp *rs, struct rest_thread *t, int table);
/* write.c */
int rest_insert(struct req *rq, struct resp *rs, struct rest_thread *t, int table);
int rest_update_delete(struct req *rq, struct resp *rs, struct rest_thread *t, int table);
/* commit.c */
enum rest_commit {
	REST_COMMIT_OK = 0,
	REST_COMMIT_ANSWERED = -1,	/* failed; the error response is made */
	REST_COMMIT_NOT_ONE = -2,	/* one row was required (object Accept): rolled back */
	REST_COMMIT_TOO_LARGE = -3,	/* the representation is past the cap: rolled back */
	REST_COMMIT_ROLLED_BACK = -4,	/* Prefer: tx=rollback: run, read, then undone */
	REST_COMMIT_MAX_AFFECTED = -5,	/* more rows than max-affected=N: rolled back */
	REST_COMMIT_KEY_IN_FLIGHT = -6,	/* its Idempotency-Key is another write's: undone */
};

/*
 * A write's answer once it ran (write.c's), made inside the write by commit.c, so that
 * the answer an Idempotency-Key stores is the one sent: fn sets rs's status, headers and
 * body from the rows written and those of the body already there (an upsert's).
 */
struct rest_answer {
	int (*fn)(struct resp *rs, const struct rest_answer *a, int64_t rows,
	    int64_t existing);
	const struct rest_prefs *prefs;
	int rep, acc, created, upsert;
	int64_t nbody;
	const struct rest_table *location;	/* return=headers-only's table, or NULL */
};
/*
 * Runs the write in t->sql with p as a committed write (db_write(), common/dbwrite.h: on
 * SQLite the process's group commit; on PostgreSQL with txn a transaction of its own,
 * retried on serialization failures, else its one statement), reading the written rows
 * into rs->body (rep: the representation) and their count into *rows, inside the write's
 * own savepoint or transaction.  one: exactly one row must be written.  upsert (or NULL):
 * rest_count_rows()'s statement, run first in the write, its count into *existing.
 * t->prefs: tx=rollback undoes the write once read (REST_COMMIT_ROLLED_BACK, answered as
 * a success), max-affected=N one past N rows.  Returns REST_COMMIT_OK once the write
 * committed, or one of the outcomes above (*rows: the count refused by
 * REST_COMMIT_NOT_ONE or _MAX_AFFECTED); the write is then undone (alone) and nothing of
 * it is kept.  Without txn on PostgreSQL nothing is undone: the caller asks for txn
 * whenever an outcome but REST_COMMIT_OK or a failed statement may come, or runs in a
 * transaction of its own (t->in_txn) that it ends.
 */
enum rest_commit rest_commit_write(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, int rep, int one, const char *upsert, int txn,
    const struct rest_answer *ans, int64_t *existing, int64_t *rows);

/*
 * idem.c: Idempotency-Key, the table API's adapter of common/idem.h.
 *
 * Before a table's write: without the header (or for a method that does not write) 0 and
 * t->idem NULL; a key seen before by the same caller is answered here (its stored answer,
 * or 422 for another request), a malformed key 400, a database failure its error: -1;
 * else 1 with t->idem set, for commit.c to store the answer (idem_store()).
 */
int rest_idem_begin(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_identity *id);
/* The answer to a key in flight: 409 with Retry-After.  Returns 0. */
int rest_idem_in_flight(struct resp *rs);
/* rpc.c */
int rest_rpc(struct req *rq, struct resp *rs, struct rest_thread *t, const char *name);
/* openapi.c: the OpenAPI 3.1 document of t's schema for the request's role (GET or HEAD
 * of the endpoint's root), after rest_auth_enter() with no name when access control is
 * on.  406 PGRST107 for an Accept it does not match. */
int rest_openapi(struct req *rq, struct resp *rs, struct rest_thread *t);

#endif /* SLUICE_REST_H */
