/*
 * db.h: one database interface, two back ends.
 *
 * A URL picks the back end: "sqlite:PATH" (or "sqlite://PATH") opens an SQLite file in WAL
 * mode; "postgresql://..." / "postgres://..." or any other libpq conninfo string
 * ("host=/var/run/postgresql dbname=x") opens a PostgreSQL connection, by default over the
 * unix socket.  One handle per worker thread, opened at start-up (on PostgreSQL the
 * threads' handles share a few connections: db_pg.c); handlers hold only pointers to the
 * opaque types below.
 *
 * SQL is written once with PostgreSQL-style placeholders ($1, $2, ...) for both back ends;
 * the SQLite back end maps them to ?NNN.  Statements are prepared once per connection and
 * cached by their SQL text, so a handler calls db_prepare() on every request and pays the
 * parse only the first time.
 *
 * Values cross the interface as text (the PostgreSQL text format): a handler binds text,
 * integers or NULL, and reads columns back as text or integers.  Response bodies are meant
 * to be assembled by the database itself (json_agg / json_group_array), so the common case
 * is one row with one text column.
 *
 * Errors are classified (enum db_err) so that handlers and the serve loop can turn them into
 * the right HTTP status; the database's own message is for the log, never for the client.
 *
 * The files of the database layer (internals shared between them in extern.h):
 *   db.c              the back-end independent half: the URL's dispatch, the options,
 *                     the error state, the statement cache, the hook db_blocking() calls
 *   db_url.c          the URL split into its back end and its target (sluiced links it alone)
 *   db_sqlite.c       the SQLite back end, and the writers' queue of a file
 *   db_sqlite_vfs.c   SQLite's unix VFS keeping a file's memory map across writes
 *   db_sqlite_json.c  SQLite's SQL functions that build JSON bodies (sluice_obj, sluice_arr)
 *   db_sqlite_ops.c   SQLite's SQL functions for the containment filters on JSON values
 *                     (sluice_contains, sluice_overlaps)
 *   db_sqlite_regex.c  SQLite's regular expressions over PCRE2 (sluice_regexp), for
 *                     the match filters
 *   gcommit.c         the group commit of SQLite's writers (gcommit.h)
 *   dbwrite.c         the one committed write of every application, on either back end:
 *                     gcommit.c's, or PostgreSQL's retried transaction (dbwrite.h)
 *   db_pg.c           the PostgreSQL back end: a handle per thread on shared connections
 *   db_pg_pool.c      the shared connections and their pipelined batches (db_pg_pool.h)
 *   db_pg_conn.c      opening one PostgreSQL connection within a request's time budget
 *   db_pg_listen.c    a worker's LISTEN on a channel, in a thread with its own connection
 *   pq.c              libpq, loaded when a database is PostgreSQL (pq.h)
 */
#ifndef SLUICE_DB_H
#define SLUICE_DB_H

#include <stddef.h>
#include <stdint.h>

struct db;
struct db_stmt;

enum db_backend {
	DB_SQLITE,
	DB_PG,
};

/* Error classes, from the most to the least expected. */
enum db_err {
	DB_OK = 0,
	DB_ECONSTRAINT,	/* unique or foreign key violated: 409 */
	DB_EINPUT,	/* bad value for a type, NOT NULL or CHECK violated: 400 */
	DB_EBUSY,	/* lock timeout, serialization failure, deadlock: 503, retryable */
	DB_EUNAVAIL,	/* connection lost or server down: 503 */
	DB_EREADONLY,	/* read-only file system or database: 503 */
	DB_EFULL,	/* disk or database full: 507 */
	DB_ETIMEOUT,	/* the request's time budget ran out (statement or queue): 503 */
	DB_EINTERNAL,	/* anything else, including SQL errors in our own statements: 500 */
};

/* Transaction kinds for db_begin(). */
enum db_txn {
	DB_TXN_READ,	/* SQLite: BEGIN DEFERRED; PostgreSQL: BEGIN ... READ ONLY */
	DB_TXN_WRITE,	/* SQLite: BEGIN IMMEDIATE; PostgreSQL: BEGIN ... READ WRITE */
};

enum db_isolation {
	DB_ISO_DEFAULT,		/* the server's default (read committed on PostgreSQL) */
	DB_ISO_READ_COMMITTED,
	DB_ISO_REPEATABLE_READ,
	DB_ISO_SERIALIZABLE,
};

/* PostgreSQL's plan_cache_mode for the connections' prepared statements. */
enum db_plans {
	DB_PLANS_AUTO,		/* the server's setting (its default: auto) */
	DB_PLANS_GENERIC,	/* force_generic_plan: planned once per connection */
	DB_PLANS_CUSTOM,	/* force_custom_plan: planned at every execution */
};

/* PRAGMA synchronous.  DB_SYNC_DEFAULT (zero) means FULL, so that zero-initialised options
 * never turn durability off by accident. */
enum db_sync {
	DB_SYNC_DEFAULT,
	DB_SYNC_OFF,
	DB_SYNC_NORMAL,
	DB_SYNC_FULL,
};

/* db_step() results. */
enum db_step {
	DB_ROW = 1,
	DB_DONE = 0,
	DB_ERROR = -1,
};

/*
 * Splits a database URL (borrowed) into its back end and what that back end opens:
 * "sqlite:PATH" and "sqlite://PATH" (the same file: "sqlite:///abs" is /abs,
 * "sqlite://data/x.db" is relative to the working directory) give DB_SQLITE and PATH;
 * "postgresql://...", "postgres://..." and libpq key=value strings (any '=') give DB_PG and
 * the whole URL as the conninfo.  *path points into url.  Returns 0, or -1 with nothing
 * stored for NULL, an unknown form or an sqlite: URL without a path.  Every reader of a
 * URL (db_open(), sluiced, the generators, the seeders, the applications) goes through it.
 */
int db_url_parse(const char *url, enum db_backend *backend, const char **path);

/*
 * Options for db_open().  Zero-initialised means the defaults noted on each field.
 * db_opts_from_env() fills them from the worker's environment (SLUICE_DB_ISOLATION,
 * SLUICE_DB_PLANS,
 * SLUICE_SQLITE_SYNC, SLUICE_SQLITE_BUSY_MS, SLUICE_SQLITE_MMAP, SLUICE_SQLITE_CHUNK,
 * SLUICE_SQLITE_WRITE_MS,
 * SLUICE_DB_STMT_CACHE,
 * SLUICE_STMT_TIMEOUT_MS, SLUICE_RESP_MAX, SLUICE_DB_CONNS with SLUICE_THREADS,
 * SLUICE_DB_READ).
 */
struct db_opts {
	enum db_isolation isolation;	/* for every db_begin(); default: server default */
	enum db_plans pg_plans;		/* PostgreSQL sessions' plan_cache_mode; default:
					 * the server's */
	enum db_sync sqlite_sync;	/* PRAGMA synchronous; default FULL */
	int sqlite_busy_ms;		/* busy timeout; 0 means 10000 */
	int64_t sqlite_mmap;		/* mmap_size in bytes; 0 means 256 MiB, -1 disables */
	int sqlite_chunk;		/* SQLITE_FCNTL_CHUNK_SIZE in bytes; 0: none */
	int sqlite_write_ms;		/* a group-committed write's time while it holds the
					 * writers' lock (gcommit.h); 0 means 250, -1: none
					 * (the request's budget alone) */
	int stmt_cache;			/* prepared statements kept per connection; 0 means 64 */
	int sqlite_no_create;		/* SQLite: a missing file is an error, never created;
					 * db_opts_from_env() sets it (a serving worker never
					 * creates a database, only a seeder does); default 0 */
	int stmt_timeout_ms;		/* a request's time budget (db_ready()); 0: none */
	int pg_wait_ms;			/* PostgreSQL: a statement's wait for a connection
					 * of the pool when all are busy, then DB_EBUSY;
					 * 0: the request's budget alone */
	int64_t value_max;		/* the longest text a statement may build; 0: SQLite's */
	int pg_conns;			/* PostgreSQL: > 0: the process's handles of one URL
					 * share this many connections (db_pg_pool.c);
					 * db_opts_from_env() sets it; 0: a connection of the
					 * handle's own */
	const char *read_url;		/* PostgreSQL: where the work db_route() sends to
					 * DB_ROUTE_READ goes (a URL with
					 * target_session_attrs=prefer-standby, say), borrowed
					 * for the handle's life; NULL: everything goes to the
					 * URL of db_open() (SLUICE_DB_READ) */
};

/* The default db_conns: one PostgreSQL connection a CPU, up to this many a worker. */
#define DB_PG_CONNS_AUTO_MAX	8

/*
 * Fills *o with defaults, then applies the SLUICE_* variables above.  Returns 0, or -1 when
 * a variable holds a value it cannot parse (the caller reports it at start-up).
 */
int db_opts_from_env(struct db_opts *o);

/*
 * Opens a connection.  url is borrowed; opts may be NULL for defaults.  On success *out is
 * the connection (caller closes with db_close()) and 0 is returned.  On failure returns -1,
 * sets *out to NULL and writes a message (never containing a password) into err[errlen].
 */
int db_open(struct db **out, const char *url, const struct db_opts *opts,
    char *err, size_t errlen);

/*
 * The same as db_open(), and on failure also sets *code (when not NULL) to the class of the
 * failure, so that start-up can tell a configuration error (DB_EINPUT: unknown URL form or
 * bad conninfo) from a database it may wait for (DB_EUNAVAIL: server down, file or directory
 * missing) or one it may not write (DB_EREADONLY: read-only file or directory).  On success
 * *code is DB_OK.
 */
int db_open_code(struct db **out, const char *url, const struct db_opts *opts,
    enum db_err *code, char *err, size_t errlen);

/*
 * What a readiness probe must know of a database, beyond "it answers a statement".
 * writable: a write would be accepted now (SQLite: the connection is read-write, the file
 * and its directory are writable by this process, the file system is not read-only and
 * has free space; PostgreSQL: not a standby, not read-only by default).  moved: SQLite's
 * file was deleted or replaced since the connection opened it (writes would go to a file
 * nobody will open again).  tables: the user tables in the database (0: an empty one).
 */
struct db_state {
	int writable;
	int moved;
	int64_t tables;
};

/*
 * Fills *out for db.  Returns 0, or -1 with the error set (a statement failed: the
 * database is not usable at all).
 */
int db_state(struct db *db, struct db_state *out);

/*
 * 1 when the connection cannot recover within this process and the worker should be
 * replaced (an SQLite file opened read-only that has become writable: see db_sqlite.c),
 * else 0.  The serve loop asks after a failed db_ready().
 */
int db_restart_wanted(const struct db *db);

/* Closes the connection and finalizes every cached statement.  NULL is allowed. */
void db_close(struct db *db);

enum db_backend db_backend(const struct db *db);

/*
 * Makes sure the connection is usable before a request starts: for PostgreSQL, a
 * connection found broken is reset (and the statement cache dropped), so that after a
 * server restart the request in flight fails with DB_EUNAVAIL and the next one succeeds.
 * A connection that died while idle is noticed here (a non-blocking read), so that such a
 * restart fails no request at all.  (Connections shared by a worker's threads,
 * opts.pg_conns > 0, are checked the same way each time a thread takes one, and this
 * returns 0 for them.)  It also ends what a previous request left behind:
 * statements still holding rows are reset, an open transaction is rolled back (logged),
 * and its last failure is forgotten (db_errcode() DB_OK, no SQLSTATE).
 * Returns 0, or -1 with the error class set (DB_EUNAVAIL) when the server is still down.
 *
 * It also starts the request's time budget (opts.stmt_timeout_ms): on SQLite every
 * statement of the request, and the wait in the writers' queue, fails with DB_ETIMEOUT
 * once the budget is spent; on PostgreSQL the statement running when it is spent is
 * cancelled (DB_ETIMEOUT) and no statement is sent after it, so the budget bounds the
 * request's statements together (the server's statement_timeout, the same budget, bounds
 * each one as a backstop).  db_deadline_clear() ends it.
 */
int db_ready(struct db *db);

/*
 * Where the request's work goes.  DB_ROUTE_WRITE (what db_ready() sets at the start of
 * every request): the URL of db_open().  DB_ROUTE_READ: statements outside a transaction
 * and read-only transactions (db_begin(DB_TXN_READ)) go to opts.read_url, a second set of
 * connections the process's handles share, opened when first needed; a write transaction,
 * db_exec() and a transaction already open stay on the write URL.  Without a read URL (and
 * on SQLite, which is one file on one host) both routes are the same.  A handler calls it
 * after db_ready() for a request that only reads (the REST API's GET and HEAD).
 * DB_ROUTE_PRIMARY: reads that must see the write URL's latest state (the REST API's
 * schema, read again after a change), on the write URL's connections but as reads: on
 * PostgreSQL never in a group of writes (db_pg_pool.c), so that they neither hold its
 * commit nor count as writes.  Returns the route it replaces.
 */
enum db_route {
	DB_ROUTE_WRITE,
	DB_ROUTE_READ,
	DB_ROUTE_PRIMARY,
};
enum db_route db_route(struct db *db, enum db_route route);

/* Ends the time budget db_ready() started: later statements (start-up, a reload outside a
 * request) run without one.  NULL is allowed. */
void db_deadline_clear(struct db *db);

/* When the request's budget ends, in CLOCK_MONOTONIC milliseconds; 0 when none runs. */
long long db_deadline(const struct db *db);

/*
 * Returns the prepared statement for sql (borrowed string, copied into the cache), from the
 * cache when it was prepared before on this connection.  Its bindings are cleared and it is
 * reset, ready for db_bind_*() and db_step().  The statement is owned by the connection:
 * never freed by the caller; valid until the next db_prepare() of the same text, db_ready()
 * reset or db_close().  Returns NULL on failure (error class and message on db).
 */
struct db_stmt *db_prepare(struct db *db, const char *sql);

/*
 * Binding, 1-based like $1.  Text is borrowed until the first db_step() after binding; the
 * SQLite back end copies it, PostgreSQL reads it during db_step(), so keep it alive until
 * then.  Returns 0, or -1 when idx is out of range.
 */
int db_bind_text(struct db_stmt *st, int idx, const char *s, size_t len);
int db_bind_int(struct db_stmt *st, int idx, int64_t v);
int db_bind_double(struct db_stmt *st, int idx, double v);
int db_bind_null(struct db_stmt *st, int idx);

/*
 * Runs the statement (the first call executes it) and moves to the next row.  Returns
 * DB_ROW when a row is available, DB_DONE at the end, DB_ERROR on failure (error class and
 * message on the connection; the statement is reset).
 */
int db_step(struct db_stmt *st);

/* Column accessors for the current row, 0-based.  Text is borrowed until the next
 * db_step()/db_reset(); *len (may be NULL) gets its length.  NULL values: text returns NULL
 * and int (and double) return 0; db_column_isnull() tells them apart.  Out of range
 * columns, or no current row: text NULL, int 0, double 0, isnull 1.  db_column_count() and
 * db_column_name() are known once db_step() returned DB_ROW (on SQLite from db_prepare()
 * on). */
int db_column_count(struct db_stmt *st);
const char *db_column_name(struct db_stmt *st, int col);
const char *db_column_text(struct db_stmt *st, int col, size_t *len);
int64_t db_column_int(struct db_stmt *st, int col);
double db_column_double(struct db_stmt *st, int col);
int db_column_isnull(struct db_stmt *st, int col);

/* Rows changed by the last INSERT/UPDATE/DELETE run through st. */
int64_t db_changes(struct db_stmt *st);

/* Ends the statement's current execution (frees its result); bindings are kept. */
void db_reset(struct db_stmt *st);

/*
 * Runs one or more statements without parameters or results (DDL, pragmas, seeding).
 * Returns 0, or -1 with the error class and message set.
 */
int db_exec(struct db *db, const char *sql);

/*
 * Transactions.  db_begin() uses the isolation level from the options; on SQLite a write
 * transaction takes the write lock at once (BEGIN IMMEDIATE) so that it waits out the busy
 * timeout instead of failing later with "database is locked".  All return 0 or -1.
 * db_rollback() is safe to call when no transaction is open.
 */
int db_begin(struct db *db, enum db_txn kind);
int db_commit(struct db *db);
int db_rollback(struct db *db);

/* The class and the database's message of the last failure on this connection.  The
 * message is borrowed until the next call on db; it is for logs, not for clients. */
enum db_err db_errcode(const struct db *db);
const char *db_errmsg(const struct db *db);
/* The SQLSTATE of the last failure when it is an integrity or input error: PostgreSQL's
 * own, and on SQLite its equivalent (23505 unique, 23503 foreign key, 23502 not null,
 * 23514 check, 22P02 a value of the wrong type in a STRICT table), and PostgreSQL's 42501
 * (insufficient privilege, an internal error by class) and 25006 (a write in a transaction
 * begun read-only: bad input, DB_EINPUT).  "" otherwise. */
const char *db_sqlstate(const struct db *db);

/*
 * The database's own words about the last failure, as it would say them to a client: its
 * SQLSTATE, message, detail and hint (PostgREST's code, message, details and hint).  ""
 * where absent; each text is cut at a character's boundary to fit (DB_WORDS_*, the NUL
 * included), and a text that is not UTF-8 is left out.  Borrowed like db_errmsg().
 *
 * db_words(): kept only for a failure the request caused, an integrity or input error
 * (db_sqlstate() is set, 42501 aside): on PostgreSQL its exact SQLSTATE (a class-22 code
 * as the server gave it, where db_sqlstate() says 22P02) with the server's
 * PG_DIAG_MESSAGE_PRIMARY, _DETAIL and _HINT; on SQLite the SQLSTATE db_sqlstate() gives
 * and sqlite3_errmsg() as the message, without detail or hint.  NULL otherwise, and when
 * the database gave no message that is UTF-8.  Never the statement's text: PostgreSQL's
 * context and position are not kept.
 *
 * db_raised(): what the schema's own code raised for the client, when the last failure is
 * that (SQLSTATE P0001): a RAISE EXCEPTION in a PostgreSQL function or trigger, a
 * RAISE(ABORT, ...) in an SQLite trigger.  Its message, detail and hint were written by
 * the schema's author to be read by clients, unlike the database's own messages; "" where
 * absent (SQLite has only the message).  NULL when the last failure is not one.
 */
#define DB_WORDS_MSG	512
#define DB_WORDS_DETAIL	384
#define DB_WORDS_HINT	128
struct db_words {
	char state[6];
	char message[DB_WORDS_MSG];
	char detail[DB_WORDS_DETAIL];
	char hint[DB_WORDS_HINT];
};
const struct db_words *db_words(const struct db *db);
const struct db_words *db_raised(const struct db *db);

/* The HTTP status that a failure of this class should produce (409, 400, 503, 507,
 * 500). */
int db_err_status(enum db_err e);

/*
 * PostgreSQL only: starts a thread that LISTENs on channel (any name: quoted) over a
 * connection of its own to url (borrowed: copied), and calls fn(arg, payload) in that
 * thread for each notification; fn(arg, NULL) after a lost connection was made again
 * (what was sent meanwhile is not known).  One per process: a second call does nothing.
 * Returns 0, or -1 (logged) when libpq or the thread cannot be had; a server that cannot
 * be reached is tried again each second, not an error.
 */
int db_listen_start(const char *url, const char *channel,
    void (*fn)(void *arg, const char *payload), void *arg);
/* Stops the thread and closes its connection (within a second); nothing when none. */
void db_listen_stop(void);

/* 1 when s[0..len) is what SQLite's sluice_contains() reads (db_sqlite_ops.c): a JSON
 * text, or PostgreSQL's one-dimensional array literal ({a,"b c",3}); else 0. */
int db_json_literal_ok(const char *s, size_t len);
/* 1 when s[0..len) is an integer range literal sluice_range() reads ([1,5), (,3], empty). */
int db_range_literal_ok(const char *s, size_t len);
/* 1 when the regular expression pattern (len bytes) compiles as SQLite's sluice_regexp()
 * compiles it (db_sqlite_regex.c; caseless when icase); else 0 with PCRE2's reason and
 * offset in msg (msglen bytes, NUL-terminated; msg may be NULL). */
int db_regex_ok(const char *pattern, size_t len, int icase, char *msg, size_t msglen);

#endif /* SLUICE_DB_H */
