/*
 * extern.h: declarations shared between the files of common/ and not meant for handlers.
 *
 * Database: db.c owns the public db_*() functions, the URL dispatch, the options, the error
 * state and the per-connection statement cache (LRU, keyed by SQL text).  Each back end
 * (db_sqlite.c, db_pg.c) embeds struct db and struct db_stmt as the first member of its own
 * connection and statement structs, fills a struct db_ops table, and never touches the cache
 * itself except through db_cache_drop() when its server forgot every prepared statement.
 *
 * Serve loop: serve.c owns the worker's threads, its connections and its signals;
 * serve_req.c answers one request on a thread (serve_request()).  The thread's state and
 * the worker's settings are shared between the two, and with the FastCGI fuzzer, which
 * drives serve_request() over in-memory fcgi2 streams.
 */
#ifndef SLUICE_EXTERN_H
#define SLUICE_EXTERN_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "db.h"
#include "reqid.h"
#include "resp.h"
#include "settings.h"

/* Long enough for any database message worth logging; longer ones are cut. */
#define DB_ERRMSG_MAX	512

/* Where a statement is in its execution; db.c uses it to route db_step() and the column
 * accessors, and to never evict a statement that still has rows to hand out. */
enum db_stmt_state {
	DB_ST_IDLE,	/* prepared or reset, not executed since */
	DB_ST_ROW,	/* executed, positioned on a row */
	DB_ST_DONE,	/* executed to the end (or failed); db_step() keeps answering DONE */
};

struct db_stmt {
	struct db *db;
	char *sql;		/* the cache key, owned */
	uint64_t hash;		/* of sql, to skip most strcmp()s */
	uint64_t used;		/* db->clock at the last db_prepare(), for LRU */
	int nparams;		/* highest $N the statement takes */
	enum db_stmt_state state;
	int64_t changes;	/* rows changed by the last execution */
	int ncols;		/* the row's column count once read (db.c), 0: not yet */
};

struct db_ops {
	/* Frees the back end's connection and the struct db itself (the cache is empty). */
	void (*close)(struct db *);
	/* Start of a request: reconnect when the connection is known bad.  0 or -1. */
	int (*ready)(struct db *);
	int (*exec)(struct db *, const char *sql);
	int (*begin)(struct db *, enum db_txn);
	/* Fails (and leaves no transaction open) when the server rolled back instead. */
	int (*commit)(struct db *);
	/* 1 when a transaction is open (or failed and awaits ROLLBACK), else 0. */
	int (*in_txn)(struct db *);

	/* Prepares sql; returns a zeroed-then-filled statement (db and nparams set) or NULL
	 * with the error set.  db.c fills the cache fields. */
	struct db_stmt *(*stmt_new)(struct db *, const char *sql);
	/* Releases everything; server_side is 0 when the server already forgot it. */
	void (*stmt_free)(struct db_stmt *, int server_side);
	void (*stmt_reset)(struct db_stmt *);
	void (*stmt_clear)(struct db_stmt *);

	int (*bind_text)(struct db_stmt *, int idx, const char *s, size_t len);
	int (*bind_int)(struct db_stmt *, int idx, int64_t v);
	int (*bind_double)(struct db_stmt *, int idx, double v);
	int (*bind_null)(struct db_stmt *, int idx);

	/* Called in DB_ST_IDLE or DB_ST_ROW; sets st->state and st->changes. */
	int (*step)(struct db_stmt *);
	int (*column_count)(struct db_stmt *);
	const char *(*column_name)(struct db_stmt *, int col);
	const char *(*column_text)(struct db_stmt *, int col, size_t *len);
	int64_t (*column_int)(struct db_stmt *, int col);
	double (*column_double)(struct db_stmt *, int col);
	int (*column_isnull)(struct db_stmt *, int col);

	/* The back end's part of db_state(): the SQL that counts the user tables (one row,
	 * one integer column) and whether a write would be accepted now; fills writable and
	 * moved.  0 or -1 with the error set. */
	const char *tables_sql;
	int (*state)(struct db *, struct db_state *);
};

struct db {
	const struct db_ops *ops;
	enum db_backend backend;
	struct db_opts opts;		/* defaults applied: no zero means "default" here */
	enum db_err errcode;
	char errmsg[DB_ERRMSG_MAX];
	char sqlstate[6];		/* of the last failure, "" when none applies */
	struct db_words words;		/* db_words(), db_raised(); words.state "": none */

	int restart;			/* db_restart_wanted() */
	long long deadline_ms;		/* CLOCK_MONOTONIC ms the request's budget ends; 0: none */
	enum db_route route;		/* db_route(); DB_ROUTE_WRITE from db_ready() */

	struct db_stmt **cache;		/* unordered; LRU by stmt->used */
	size_t ncache;
	size_t capcache;
	uint64_t clock;
};

/* Records the class and a message (printf format) of a failure on db.  A message longer
 * than DB_ERRMSG_MAX is cut, which is fine for a log line. */
void db_set_err(struct db *db, enum db_err code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/* Records the database's own words (db_words()) for the failure just set by db_set_err():
 * state (5 characters), message, detail and hint (each may be NULL), cut at a character's
 * boundary to fit.  A text that is not UTF-8 is left out. */
void db_set_words(struct db *db, const char *state, const char *message,
    const char *detail, const char *hint);
/* The same for what the schema's own code raised for the client: also sets the SQLSTATE
 * to P0001 (db_raised()). */
void db_set_raised(struct db *db, const char *message, const char *detail,
    const char *hint);

/*
 * "Before I block": db_blocking() is called by the database layer just before a thread
 * sleeps on something other than its own statement (the writers' queue in db_sqlite.c, a
 * batch's commit in gcommit.c, a pooled PostgreSQL connection or its answer in
 * db_pg_pool.c and db_pg_conn.c, a retry's back-off in dbwrite.c), and calls the hook that
 * db_blocking_hook() installed.
 * The serve loop installs its gate's (serve_gate_blocking(): another thread takes
 * requests meanwhile) before its threads open their connections; a process without the
 * loop (CGI, tests, seeders) installs none, and db_blocking() does nothing.  The database
 * layer so never calls up into the serve loop.
 */
void db_blocking_hook(void (*hook)(void));
void db_blocking(void);

/* A hash of the NUL-terminated s, eight bytes a step: cheap and good enough to skip almost
 * every strcmp() in a cache of SQL texts (db.c's, and each pooled PostgreSQL
 * connection's). */
uint64_t db_hash(const char *s);

/* Frees every cached statement; server_side as in db_ops.stmt_free. */
void db_cache_drop(struct db *db, int server_side);

/* Back-end constructors, called by db_open_code() with opts already defaulted.  On failure
 * they return -1 with *code set and a message in err[errlen]. */
int db_sqlite_open(struct db **out, const char *path, const struct db_opts *opts,
    enum db_err *code, char *err, size_t errlen);
/* The group commit's own connection to db's file (db_sqlite.c): 0, or -1 (none). */
int db_sqlite_writer_open(struct db *db, struct db **out);
/* 1 when writer is a connection to db's file, as it is now (not replaced since), and not
 * one opened read-only to a file that can be written again (looked at once a second). */
int db_sqlite_writer_fits(struct db *writer, struct db *db);
/* 1 once when the writer's WAL wants a checkpoint, else 0. */
int db_sqlite_checkpoint_due(struct db *writer);
/* A passive checkpoint of db's WAL, on db. */
void db_sqlite_checkpoint(struct db *db);
int db_pg_open(struct db **out, const char *conninfo, const struct db_opts *opts,
    enum db_err *code, char *err, size_t errlen);

/* SQLite: registers the VFS "sluice-mmap" (db_sqlite_vfs.c), once, before any connection
 * opens.  Returns 0, or -1 when SQLite has no unix VFS to wrap or refused it. */
int db_sqlite_vfs_register(void);
/* Its name once registered, else NULL (SQLite's default VFS). */
const char *db_sqlite_vfs_name(void);

/* SQLite: registers sluice_obj() and sluice_arr() (db_sqlite_json.c) on a connection
 * whose database text encoding is UTF-8 (utf8 set) or another one.  Returns 0, or -1 when
 * SQLite refused (out of memory). */
struct sqlite3;
int db_sqlite_json_register(struct sqlite3 *conn, int utf8);
/* SQLite: registers sluice_contains() and sluice_overlaps() (db_sqlite_ops.c), jsonb's
 * @> and arrays' && over JSON text.  Returns 0, or -1 when SQLite refused. */
int db_sqlite_ops_register(struct sqlite3 *conn);
/* SQLite: registers sluice_regexp() (db_sqlite_regex.c), PostgreSQL's ~ and ~* over
 * PCRE2.  Returns 0, or -1 when SQLite refused. */
int db_sqlite_regex_register(struct sqlite3 *conn);

/* ---- Serve loop ---- */

struct endpoint;
struct metrics_counts;
struct metrics_page;
struct serve_conns;
struct FCGX_Request;

/* The worker settings the loop uses (settings.h), read once at start-up. */
struct serve_settings {
	int threads;
	int cpus;		/* SLUICE_CPUS; 0: unknown */
	size_t body_max;
	size_t arena_max;
	size_t resp_max;
	const char *db_url;
	uint64_t budget_us;	/* SLUICE_STMT_TIMEOUT_MS in microseconds, for the counters */
	long long orphan_ms;	/* SLUICE_ORPHAN_GRACE_MS */
};

/* One serving thread: what serve_request() needs, and serve.c's bookkeeping. */
struct serve_thread {
	pthread_t tid;
	const struct endpoint *ep;
	const struct serve_settings *set;
	struct serve_conns *conns;
	struct arena *arena;
	struct resp rs;
	struct db *db;
	int db_later;		/* the server was down: connect before the next request */
	long long db_retry_ms;	/* not before this (monotonic), to spare a down server */
	void *state;		/* the endpoint's thread_init() state, or NULL */
	unsigned hups;		/* serve_reloads() when the state was made or last reloaded */
	unsigned long served;
	atomic_llong *watch;	/* the watchdog's slot (CLOCK_MONOTONIC ms of the request
				 * being served, 0: idle), or NULL */
	struct metrics_page *metrics;	/* the worker's counters page, or NULL */
	struct metrics_counts *counts;	/* this thread's counts on it, or NULL */
	unsigned method;	/* the enum req_method of the request just served, 0: none */
	struct reqid_gen idgen;	/* makes the ids of requests that came without one */
	atomic_int done;
};

/* The watchdog's page (settings.h, SETTINGS_WATCH_SLOTS and the heartbeat after them). */
#define SERVE_WATCH_SIZE	SETTINGS_WATCH_SIZE

/* The I/O of one request: fcgi2's streams, or (fcgi NULL) the CGI process's stdin and
 * stdout. */
struct serve_io {
	struct FCGX_Request *fcgi;
};

/*
 * Answers one request whose parameters are in envp (borrowed) on thread t: parses them,
 * checks the method, reads the body into t's arena up to the cap, connects to the
 * database if the thread has none, calls the handler and writes the response to io.
 * Every failure becomes an error response; the caller resets t's arena and response.
 */
void serve_request(struct serve_thread *t, struct serve_io *io, char **envp);

/*
 * Opens t's database connection.  At start-up an unreachable server is allowed (the
 * thread connects later, at most every 500 ms); returns 0 when connected, 1 when it will
 * try again later, -1 on a configuration error (logged).
 */
int serve_db_connect(struct serve_thread *t);

/* Asks the worker to stop between requests, as SIGTERM does, so that sluiced starts a
 * fresh one (a database connection that cannot recover in this process).  Any thread. */
void serve_restart(void);

/* Writes p[0..len) to the request's output (ctx: a struct serve_io), resp_send()'s writer.
 * Returns 0, or -1 when the connection failed. */
int serve_write(void *ctx, const char *p, size_t len);

/* Binds a unix socket at path for a worker run alone (-s PATH), replacing a stale one:
 * the descriptor, or -1 (logged).  The caller unlinks path and closes it at exit. */
int serve_listen_path(const char *path);

/* 1 when fd is a listening socket (the spawn-fcgi convention for fd 0), else 0. */
int serve_is_listener(int fd);

#endif /* SLUICE_EXTERN_H */
