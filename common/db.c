/*
 * db.c: the back-end independent half of db.h.
 *
 * It picks the back end from the URL, applies the option defaults, keeps the error state,
 * and owns the statement cache: every connection keeps up to opts.stmt_cache prepared
 * statements keyed by their SQL text, evicting the least recently prepared one that is not
 * in the middle of handing out rows.  The back ends (db_sqlite.c, db_pg.c) only prepare,
 * bind, step and free single statements through the struct db_ops table in extern.h.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>
#include <unistd.h>

#include "clock.h"
#include "db.h"
#include "extern.h"
#include "log.h"
#include "settings.h"
#include "str.h"

/* The defaults of the zero fields of struct db_opts: the settings table's. */
#define DB_DEFAULT_BUSY_MS	((int)settings_table[SETTING_SQLITE_BUSY_MS].def)
#define DB_DEFAULT_MMAP		(settings_table[SETTING_SQLITE_MMAP].def)
#define DB_DEFAULT_WRITE_MS	((int)settings_table[SETTING_SQLITE_WRITE_MS].def)
#define DB_DEFAULT_STMT_CACHE	((int)settings_table[SETTING_DB_STMT_CACHE].def)

/* What db_blocking() calls (extern.h): the serve loop's hook, or NULL. */
static void (*_Atomic db_block_hook)(void);

void
db_set_err(struct db *db, enum db_err code, const char *fmt, ...)
{
	va_list ap;
	size_t n;

	db->errcode = code;
	db->sqlstate[0] = '\0';
	db->words.state[0] = '\0';
	va_start(ap, fmt);
	/* Truncation is acceptable: the message only goes to a log line. */
	(void)vsnprintf(db->errmsg, sizeof(db->errmsg), fmt, ap);
	va_end(ap);
	/* Database messages often end in a newline; a log line adds its own. */
	n = strlen(db->errmsg);
	while (n > 0 && (db->errmsg[n - 1] == '\n' || db->errmsg[n - 1] == ' '))
		db->errmsg[--n] = '\0';
}

int
db_opts_from_env(struct db_opts *o)
{
	long long iso, plans, sync, busy, mmap, chunk, wms, cache, budget, resp, conns, threads,
	    cpus, pwait;

	memset(o, 0, sizeof(*o));
	if (settings_int(SETTING_DB_ISOLATION, &iso) == -1 ||
	    settings_int(SETTING_DB_PLANS, &plans) == -1 ||
	    settings_int(SETTING_SQLITE_SYNC, &sync) == -1 ||
	    settings_int(SETTING_SQLITE_BUSY_MS, &busy) == -1 ||
	    settings_int(SETTING_SQLITE_MMAP, &mmap) == -1 ||
	    settings_int(SETTING_SQLITE_CHUNK, &chunk) == -1 ||
	    settings_int(SETTING_SQLITE_WRITE_MS, &wms) == -1 ||
	    settings_int(SETTING_DB_STMT_CACHE, &cache) == -1 ||
	    settings_int(SETTING_STMT_TIMEOUT_MS, &budget) == -1 ||
	    settings_int(SETTING_DB_WAIT_MS, &pwait) == -1 ||
	    settings_int(SETTING_RESP_MAX, &resp) == -1 ||
	    settings_int(SETTING_DB_CONNS, &conns) == -1 ||
	    settings_int(SETTING_THREADS, &threads) == -1)
		return -1;
	/* The choices are listed in the order of the enums (settings.c). */
	o->isolation = (enum db_isolation)(DB_ISO_DEFAULT + iso);
	o->pg_plans = (enum db_plans)(DB_PLANS_AUTO + plans);
	o->sqlite_sync = (enum db_sync)(DB_SYNC_OFF + sync);
	o->sqlite_busy_ms = (int)busy;
	/* In the environment 0 means what PRAGMA mmap_size=0 means: no mmap.  In struct
	 * db_opts, 0 means the default, so store the explicit -1. */
	o->sqlite_mmap = mmap == 0 ? -1 : mmap;
	o->sqlite_chunk = (int)chunk;
	/* Likewise: 0 in the environment is no budget of its own. */
	o->sqlite_write_ms = wms == 0 ? -1 : (int)wms;
	o->stmt_cache = (int)cache;
	o->sqlite_no_create = 1;
	o->stmt_timeout_ms = (int)budget;
	o->pg_wait_ms = (int)pwait;
	/* No text a statement builds may be longer than the response that carries it. */
	o->value_max = resp;
	/* PostgreSQL connections shared by the worker's threads (db_pg_pool.c): by default
	 * one per CPU, never fewer than 2 (so that a transaction does not stall the other
	 * threads' reads), never more than DB_PG_CONNS_AUTO_MAX (a pool's 4 workers then
	 * hold 32 backends at most, on any machine), nor more than the threads.  The CPUs
	 * are those sluiced counts for the auto sizes (SLUICE_CPUS: set cpus, the affinity
	 * mask, a cgroup's quota), else the online ones. */
	if (conns == 0) {
		if (settings_int(SETTING_CPUS, &cpus) == -1 || cpus <= 0)
			cpus = sysconf(_SC_NPROCESSORS_ONLN);
		conns = cpus < 2 ? 2 : cpus > DB_PG_CONNS_AUTO_MAX ? DB_PG_CONNS_AUTO_MAX : cpus;
		if (conns > threads)
			conns = threads;
	}
	o->pg_conns = (int)conns;
	o->read_url = settings_get(SETTING_DB_READ);
	if (o->read_url != NULL && *o->read_url == '\0')
		o->read_url = NULL;
	return 0;
}

/* Copies opts (NULL: all defaults) and replaces every "0 means default" with the value. */
static void
db_opts_apply(struct db_opts *o, const struct db_opts *in)
{
	if (in != NULL)
		*o = *in;
	else
		memset(o, 0, sizeof(*o));
	if (o->sqlite_sync == DB_SYNC_DEFAULT || (unsigned)o->sqlite_sync > DB_SYNC_FULL)
		o->sqlite_sync = DB_SYNC_FULL;
	if ((unsigned)o->isolation > DB_ISO_SERIALIZABLE)
		o->isolation = DB_ISO_DEFAULT;
	if (o->sqlite_busy_ms <= 0)
		o->sqlite_busy_ms = DB_DEFAULT_BUSY_MS;
	if (o->sqlite_mmap == 0)
		o->sqlite_mmap = DB_DEFAULT_MMAP;
	else if (o->sqlite_mmap < 0)
		o->sqlite_mmap = -1;
	if (o->stmt_cache <= 0)
		o->stmt_cache = DB_DEFAULT_STMT_CACHE;
	if (o->sqlite_write_ms == 0)
		o->sqlite_write_ms = DB_DEFAULT_WRITE_MS;
	else if (o->sqlite_write_ms < 0)
		o->sqlite_write_ms = -1;
}

int
db_open_code(struct db **out, const char *url, const struct db_opts *opts,
    enum db_err *code, char *err, size_t errlen)
{
	struct db_opts o;
	enum db_err c = DB_EINPUT;
	enum db_backend be, rbe;
	const char *path, *rpath;
	int rc = -1;

	*out = NULL;
	if (errlen > 0)
		err[0] = '\0';
	db_opts_apply(&o, opts);
	if (url == NULL) {
		(void)snprintf(err, errlen, "no database URL");
		goto out;
	}

	if (db_url_parse(url, &be, &path) == -1)
		/* The URL itself is not repeated: it may hold a password. */
		(void)snprintf(err, errlen, "unknown database URL form (want sqlite:PATH with a "
		    "file path, postgresql://..., postgres://... or a libpq key=value string)");
	else if (o.read_url != NULL && (be == DB_SQLITE ||
	    db_url_parse(o.read_url, &rbe, &rpath) == -1 || rbe != DB_PG))
		/* SQLite is one file on one host: there is no standby to read from. */
		(void)snprintf(err, errlen, "a read URL (db_read=) needs a PostgreSQL database "
		    "URL and is one itself");
	else if (be == DB_SQLITE)
		rc = db_sqlite_open(out, path, &o, &c, err, errlen);
	else
		rc = db_pg_open(out, path, &o, &c, err, errlen);
out:
	if (code != NULL)
		*code = rc == 0 ? DB_OK : c;
	return rc;
}

int
db_open(struct db **out, const char *url, const struct db_opts *opts, char *err,
    size_t errlen)
{
	return db_open_code(out, url, opts, NULL, err, errlen);
}

void
db_cache_drop(struct db *db, int server_side)
{
	size_t i;

	for (i = 0; i < db->ncache; i++) {
		struct db_stmt *st = db->cache[i];

		free(st->sql);
		st->sql = NULL;
		db->ops->stmt_free(st, server_side);
	}
	db->ncache = 0;
}

void
db_close(struct db *db)
{
	if (db == NULL)
		return;
	/* Closing the connection forgets server-side statements anyway. */
	db_cache_drop(db, 0);
	free(db->cache);
	db->cache = NULL;
	db->ops->close(db);
}

enum db_backend
db_backend(const struct db *db)
{
	return db->backend;
}

int
db_restart_wanted(const struct db *db)
{
	return db->restart;
}

int
db_state(struct db *db, struct db_state *out)
{
	struct db_stmt *st;

	memset(out, 0, sizeof(*out));
	if ((st = db_prepare(db, db->ops->tables_sql)) == NULL)
		return -1;
	if (db_step(st) != DB_ROW) {
		db_reset(st);
		return -1;
	}
	out->tables = db_column_int(st, 0);
	db_reset(st);
	return db->ops->state(db, out);
}

int
db_ready(struct db *db)
{
	size_t i;

	/* The previous request's failure is not this one's: a handler reading the SQLSTATE
	 * after a failure of its own must not find an older one. */
	db->errcode = DB_OK;
	db->errmsg[0] = '\0';
	db->sqlstate[0] = '\0';
	db->words.state[0] = '\0';
	db->deadline_ms = db->opts.stmt_timeout_ms > 0 ?
	    clock_now_ms() + db->opts.stmt_timeout_ms : 0;
	db->route = DB_ROUTE_WRITE;
	if (db->ops->ready(db) == -1)
		return -1;
	/* A previous request may have left a statement half-read (on SQLite that pins an
	 * old snapshot) or a transaction open; neither may leak into this request. */
	for (i = 0; i < db->ncache; i++)
		if (db->cache[i]->state != DB_ST_IDLE) {
			db->ops->stmt_reset(db->cache[i]);
			db->cache[i]->state = DB_ST_IDLE;
		}
	if (db->ops->in_txn(db)) {
		log_warn("db: a transaction was left open by the previous request; rolling back");
		if (db_rollback(db) == -1)
			return -1;
	}
	return 0;
}

enum db_route
db_route(struct db *db, enum db_route route)
{
	enum db_route was = db->route;

	db->route = route;
	return was;
}

void
db_deadline_clear(struct db *db)
{
	if (db != NULL)
		db->deadline_ms = 0;
}

long long
db_deadline(const struct db *db)
{
	return db->deadline_ms;
}

void
db_blocking_hook(void (*hook)(void))
{
	atomic_store(&db_block_hook, hook);
}

void
db_blocking(void)
{
	void (*hook)(void) = atomic_load(&db_block_hook);

	if (hook != NULL)
		hook();
}

uint64_t
db_hash(const char *s)
{
	size_t n = strlen(s), i;
	uint64_t h = 14695981039346656037ULL ^ n, w;

	/* Eight bytes a step: the statement caches hash a statement's text, a few hundred
	 * bytes, on every request.  Equal hashes are compared as text anyway. */
	for (i = 0; i + 8 <= n; i += 8) {
		memcpy(&w, s + i, 8);
		h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
		h ^= h >> 29;
	}
	w = 0;
	memcpy(&w, s + i, n - i);
	h = (h ^ w) * 0x9e3779b97f4a7c15ULL;
	return h ^ (h >> 32);
}

/*
 * Makes room for one more statement: evicts the least recently prepared statement that is
 * not handing out rows once the cache holds opts.stmt_cache of them, and grows the array
 * when needed.  When every cached statement is busy the cache grows past its bound for a
 * while rather than pull a statement from under a caller.  Returns 0 or -1.
 */
static int
db_cache_room(struct db *db)
{
	struct db_stmt **n;
	size_t i, victim = SIZE_MAX, cap;

	if (db->ncache >= (size_t)db->opts.stmt_cache) {
		for (i = 0; i < db->ncache; i++) {
			if (db->cache[i]->state == DB_ST_ROW)
				continue;
			if (victim == SIZE_MAX || db->cache[i]->used < db->cache[victim]->used)
				victim = i;
		}
		if (victim != SIZE_MAX) {
			struct db_stmt *st = db->cache[victim];

			db->cache[victim] = db->cache[--db->ncache];
			free(st->sql);
			st->sql = NULL;
			db->ops->stmt_free(st, 1);
		}
	}
	if (db->ncache < db->capcache)
		return 0;
	cap = db->capcache == 0 ? 8 : db->capcache * 2;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	if ((n = realloc(db->cache, cap * sizeof(*n))) == NULL) {
		db_set_err(db, DB_EINTERNAL, "out of memory growing the statement cache");
		return -1;
	}
	db->cache = n;
	db->capcache = cap;
	return 0;
}

struct db_stmt *
db_prepare(struct db *db, const char *sql)
{
	struct db_stmt *st = NULL;
	uint64_t h = db_hash(sql);
	size_t i;
	char *copy = NULL;

	for (i = 0; i < db->ncache; i++)
		if (db->cache[i]->hash == h && strcmp(db->cache[i]->sql, sql) == 0) {
			st = db->cache[i];
			break;
		}
	if (st == NULL) {
		if (db_cache_room(db) == -1)
			goto out;
		if ((copy = strdup(sql)) == NULL) {
			db_set_err(db, DB_EINTERNAL, "out of memory copying a statement");
			goto out;
		}
		if ((st = db->ops->stmt_new(db, sql)) == NULL)
			goto out;
		st->sql = copy;
		copy = NULL;
		st->hash = h;
		st->state = DB_ST_IDLE;
		db->cache[db->ncache++] = st;
	} else {
		if (st->state != DB_ST_IDLE)
			db->ops->stmt_reset(st);
		db->ops->stmt_clear(st);
	}
	st->state = DB_ST_IDLE;
	st->changes = 0;
	st->used = ++db->clock;
out:
	free(copy);
	return st;
}

/* Shared by the binders: a bad index is a bug in the caller's SQL or code, hence 500. */
static int
db_bind_check(struct db_stmt *st, int idx)
{
	if (idx < 1 || idx > st->nparams) {
		db_set_err(st->db, DB_EINTERNAL, "bind index %d out of range (statement takes "
		    "%d parameters)", idx, st->nparams);
		return -1;
	}
	/* Binding after a run starts a new one, as on SQLite. */
	if (st->state != DB_ST_IDLE) {
		st->db->ops->stmt_reset(st);
		st->state = DB_ST_IDLE;
	}
	return 0;
}

int
db_bind_text(struct db_stmt *st, int idx, const char *s, size_t len)
{
	if (db_bind_check(st, idx) == -1)
		return -1;
	if (s == NULL)
		return st->db->ops->bind_null(st, idx);
	/* PostgreSQL text cannot hold NUL; refusing it on both back ends keeps them alike. */
	if (memchr(s, '\0', len) != NULL) {
		db_set_err(st->db, DB_EINPUT, "text parameter $%d contains a NUL byte", idx);
		return -1;
	}
	if (len > INT_MAX) {
		db_set_err(st->db, DB_EINPUT, "text parameter $%d is too long", idx);
		return -1;
	}
	return st->db->ops->bind_text(st, idx, s, len);
}

int
db_bind_int(struct db_stmt *st, int idx, int64_t v)
{
	if (db_bind_check(st, idx) == -1)
		return -1;
	return st->db->ops->bind_int(st, idx, v);
}

int
db_bind_double(struct db_stmt *st, int idx, double v)
{
	if (db_bind_check(st, idx) == -1)
		return -1;
	return st->db->ops->bind_double(st, idx, v);
}

int
db_bind_null(struct db_stmt *st, int idx)
{
	if (db_bind_check(st, idx) == -1)
		return -1;
	return st->db->ops->bind_null(st, idx);
}

int
db_step(struct db_stmt *st)
{
	if (st->state == DB_ST_DONE)
		return DB_DONE;
	st->ncols = 0;
	return st->db->ops->step(st);
}

int
db_column_count(struct db_stmt *st)
{
	return st->db->ops->column_count(st);
}

/* The accessors answer "no value" outside a row instead of reading garbage.  The row's
 * column count is asked of the back end once a row (db_step() forgets it), not once a
 * value: a large response reads tens of thousands of values. */
static int
db_column_ok(struct db_stmt *st, int col)
{
	if (st->state != DB_ST_ROW || col < 0)
		return 0;
	if (col < st->ncols)
		return 1;
	st->ncols = st->db->ops->column_count(st);
	return col < st->ncols;
}

const char *
db_column_name(struct db_stmt *st, int col)
{
	if (col < 0 || col >= st->db->ops->column_count(st))
		return NULL;
	return st->db->ops->column_name(st, col);
}

const char *
db_column_text(struct db_stmt *st, int col, size_t *len)
{
	if (!db_column_ok(st, col)) {
		if (len != NULL)
			*len = 0;
		return NULL;
	}
	return st->db->ops->column_text(st, col, len);
}

int64_t
db_column_int(struct db_stmt *st, int col)
{
	if (!db_column_ok(st, col))
		return 0;
	return st->db->ops->column_int(st, col);
}

double
db_column_double(struct db_stmt *st, int col)
{
	if (!db_column_ok(st, col))
		return 0;
	return st->db->ops->column_double(st, col);
}

int
db_column_isnull(struct db_stmt *st, int col)
{
	if (!db_column_ok(st, col))
		return 1;
	return st->db->ops->column_isnull(st, col);
}

int64_t
db_changes(struct db_stmt *st)
{
	return st->changes;
}

void
db_reset(struct db_stmt *st)
{
	if (st->state != DB_ST_IDLE)
		st->db->ops->stmt_reset(st);
	st->state = DB_ST_IDLE;
}

int
db_exec(struct db *db, const char *sql)
{
	return db->ops->exec(db, sql);
}

int
db_begin(struct db *db, enum db_txn kind)
{
	if (db->ops->in_txn(db)) {
		db_set_err(db, DB_EINTERNAL, "db_begin: a transaction is already open");
		return -1;
	}
	return db->ops->begin(db, kind);
}

int
db_commit(struct db *db)
{
	if (!db->ops->in_txn(db)) {
		db_set_err(db, DB_EINTERNAL, "db_commit: no transaction is open");
		return -1;
	}
	return db->ops->commit(db);
}

int
db_rollback(struct db *db)
{
	/* No transaction (never begun, already ended by the server, or a lost connection,
	 * which ended it too): nothing to undo, and the earlier error stays readable. */
	long long deadline = db->deadline_ms;
	int rc;

	if (!db->ops->in_txn(db))
		return 0;
	/* Undoing is never cut short by the time budget: that is how a request past its
	 * budget lets go of its locks. */
	db->deadline_ms = 0;
	rc = db->ops->exec(db, "ROLLBACK");
	db->deadline_ms = deadline;
	return rc;
}

const char *
db_sqlstate(const struct db *db)
{
	return db->sqlstate;
}

/* Copies s into dst[n], cut at a character's boundary; "" when s is NULL or not UTF-8. */
static void
db_words_copy(char *dst, size_t n, const char *s)
{
	size_t len = s != NULL ? strlen(s) : 0;

	dst[0] = '\0';
	if (len == 0 || !str_utf8_valid(s, len))
		return;
	if (len >= n) {
		len = n - 1;
		/* Back off the continuation bytes of a character cut in two. */
		while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
			len--;
	}
	memcpy(dst, s, len);
	dst[len] = '\0';
}

void
db_set_words(struct db *db, const char *state, const char *message, const char *detail,
    const char *hint)
{
	db->words.state[0] = '\0';
	if (state == NULL || strlen(state) != 5)
		return;
	memcpy(db->words.state, state, 6);
	db_words_copy(db->words.message, sizeof(db->words.message), message);
	db_words_copy(db->words.detail, sizeof(db->words.detail), detail);
	db_words_copy(db->words.hint, sizeof(db->words.hint), hint);
}

void
db_set_raised(struct db *db, const char *message, const char *detail, const char *hint)
{
	memcpy(db->sqlstate, "P0001", 6);
	db_set_words(db, "P0001", message, detail, hint);
}

const struct db_words *
db_words(const struct db *db)
{
	return db->words.state[0] != '\0' && db->words.message[0] != '\0' ? &db->words :
	    NULL;
}

const struct db_words *
db_raised(const struct db *db)
{
	return strcmp(db->sqlstate, "P0001") == 0 ? &db->words : NULL;
}

enum db_err
db_errcode(const struct db *db)
{
	return db->errcode;
}

const char *
db_errmsg(const struct db *db)
{
	return db->errmsg;
}

int
db_err_status(enum db_err e)
{
	switch (e) {
	case DB_OK:
		return 200;
	case DB_ECONSTRAINT:
		return 409;
	case DB_EINPUT:
		return 400;
	case DB_EBUSY:
	case DB_EUNAVAIL:
	case DB_EREADONLY:
	case DB_ETIMEOUT:
		return 503;
	case DB_EFULL:
		return 507;
	case DB_EINTERNAL:
		break;
	}
	return 500;
}
