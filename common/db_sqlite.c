/*
 * db_sqlite.c: the SQLite back end of db.h.
 *
 * One connection per thread (SQLITE_OPEN_NOMUTEX), in WAL mode so that readers never wait
 * for the writer, with a busy timeout that write transactions wait out at BEGIN IMMEDIATE
 * (db_begin) instead of failing later with "database is locked".  PRAGMA synchronous is FULL
 * unless configured otherwise: an acknowledged write survives a power cut.  sluice's writers
 * of one file queue on a lock file first (db_sqlite_wlock_open()), so that they are woken
 * in turn instead of polling SQLite's lock.  It is the file's one writers' queue: a
 * group-committed batch (gcommit.h) joins it through the same db_begin(), once per batch.
 * The queue is first-come first-served across processes: a mutex shared through the lock
 * file hands the lock to the writer that has waited longest (db_sqlite_wq_open()).
 * Lock order: the queue's turn, "<file>-wlock" (flock), then SQLite's write lock (BEGIN
 * IMMEDIATE), all at db_begin(DB_TXN_WRITE); all are let go when the transaction ends,
 * only once SQLite says no transaction is open, the turn last.
 *
 * Budgets.  db_ready() starts a request's time budget (db->deadline_ms); a progress handler
 * looks at the clock every few thousand virtual machine steps and interrupts the statement
 * past it (DB_ETIMEOUT), and the wait in the writers' queue gives up at the same moment.
 * No text a statement builds (sluice_arr(), sluice_obj(), SQLite's own strings) may grow
 * past opts.value_max (SQLITE_LIMIT_LENGTH): it fails as soon as it would, not once the
 * whole body is in memory, as any value past a limit of the database does (DB_EINPUT,
 * 54000: a 400).
 *
 * SQL arrives with PostgreSQL placeholders.  SQLite would read "$1" as a *named* parameter
 * numbered by first appearance, so "$2 ... $1" would bind backwards; each $N outside string
 * literals, quoted identifiers and comments is rewritten to ?N, which SQLite numbers as
 * written.  The rewrite keeps the length, since "$" and "?" are both one byte.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <time.h>
#include <unistd.h>

#include <sqlite3.h>

#include "clock.h"
#include "db.h"
#include "extern.h"
#include "log.h"
#include "metrics.h"
#include "proc.h"

/*
 * The writers' turn, shared by every process of a file through "<file>-wlock" itself
 * (mapped): a process-shared, robust, priority-inheritance mutex.  On unlock the kernel
 * gives a PI mutex straight to the waiter at the head of its queue (waiters of one
 * priority queue in arrival order), so the writer that lets it go cannot take it again
 * ahead of the others, and a process that dies holding it lets it go to the next
 * (EOWNERDEAD).  A flock() is no queue: every waiter is woken and the first to run wins,
 * usually the process that just let go, whose next batch is ready; with the budget's
 * polling the writers of eight processes waited up to half a second for their turn.
 */
struct db_sqlite_wq {
	atomic_uint state;	/* 0: new file, 1: mu being made, 2: mu made */
	unsigned size;		/* sizeof(struct db_sqlite_wq) of the process that made it */
	char boot[40];		/* the boot it was made in (db_sqlite_boot_id()) */
	pthread_mutex_t mu;
	atomic_int holder;	/* the process whose writer holds mu; 0: none */
	atomic_llong since;	/* since when (clock_now_ms(), one clock for all) */
};

struct db_sqlite {
	struct db base;		/* first: a struct db * is a struct db_sqlite * */
	sqlite3 *conn;
	int wlock;		/* "<file>-wlock", or -1: no queue for writers */
	int wlocked;		/* this connection holds it */
	struct db_sqlite_wq *wq;	/* the turn, mapped from wlock, or NULL: flock alone */
	int wqheld;		/* this connection (its thread) holds wq->mu */
	int busy_ms;		/* the busy timeout (db_sqlite_busy()) */
	long long ro_checked;	/* opened read-only: when db_sqlite_writable_again() last
				 * looked at the file (CLOCK_MONOTONIC ms) */
	atomic_int ckpt_due;	/* a group commit's connection: its WAL wants a checkpoint */
};

struct db_sqlite_stmt {
	struct db_stmt base;	/* first, likewise */
	sqlite3_stmt *stmt;
};

static const struct db_ops db_sqlite_ops;

static struct db_sqlite *
sq(struct db *db)
{
	return (struct db_sqlite *)db;
}

static struct db_sqlite_stmt *
sqst(struct db_stmt *st)
{
	return (struct db_sqlite_stmt *)st;
}

/*
 * The errno behind an I/O error.  A failed COMMIT leaves none on the connection
 * (sqlite3_system_errno() is 0): the file whose write failed keeps it, and in WAL mode
 * that is the WAL, reached through SQLITE_FCNTL_JOURNAL_POINTER; else the database file.
 * 0 when unknown.
 */
static int
db_sqlite_io_errno(sqlite3 *conn)
{
	sqlite3_file *f = NULL;
	int e;

	if (conn == NULL)
		return 0;
	if ((e = sqlite3_system_errno(conn)) != 0)
		return e;
	if (sqlite3_file_control(conn, "main", SQLITE_FCNTL_JOURNAL_POINTER, &f) ==
	    SQLITE_OK && f != NULL && f->pMethods != NULL &&
	    f->pMethods->xFileControl(f, SQLITE_FCNTL_LAST_ERRNO, &e) == SQLITE_OK && e != 0)
		return e;
	e = 0;
	if (sqlite3_file_control(conn, "main", SQLITE_FCNTL_LAST_ERRNO, &e) != SQLITE_OK)
		return 0;
	return e;
}

/*
 * Maps an SQLite (extended) result code to a class.  A file that cannot be opened is
 * "read-only" when the OS said no (permissions, read-only mount) and "unavailable" when it
 * is missing, so that start-up can tell a deployment mistake from a mount not there yet.
 */
static enum db_err
db_sqlite_class(sqlite3 *conn, int rc)
{
	int sys;

	/* STRICT table: like PostgreSQL's 22P02; NOT NULL and CHECK: like 23502 and 23514,
	 * which PostgREST answers with 400, keeping 409 for unique and foreign keys. */
	if (rc == SQLITE_CONSTRAINT_DATATYPE || rc == SQLITE_CONSTRAINT_NOTNULL ||
	    rc == SQLITE_CONSTRAINT_CHECK)
		return DB_EINPUT;
	/* A trigger's RAISE(ABORT, ...): PostgreSQL's RAISE EXCEPTION (db_raised()). */
	if (rc == SQLITE_CONSTRAINT_TRIGGER)
		return DB_EINPUT;
	switch (rc & 0xff) {
	case SQLITE_INTERRUPT:
		return DB_ETIMEOUT;
	case SQLITE_BUSY:
	case SQLITE_LOCKED:
		return DB_EBUSY;
	case SQLITE_CONSTRAINT:
		return DB_ECONSTRAINT;
	case SQLITE_READONLY:
	case SQLITE_PERM:
		return DB_EREADONLY;
	case SQLITE_CANTOPEN:
		sys = conn != NULL ? sqlite3_system_errno(conn) : 0;
		if (sys == EACCES || sys == EPERM || sys == EROFS)
			return DB_EREADONLY;
		return DB_EUNAVAIL;
	case SQLITE_FULL:
		return DB_EFULL;
	case SQLITE_IOERR:
		/* SQLite reports a write refused by a file system gone read-only (ext4's
		 * errors=remount-ro) as an I/O error; the errno says what it is. */
		sys = db_sqlite_io_errno(conn);
		if (sys == EROFS)
			return DB_EREADONLY;
		if (sys == ENOSPC || sys == EDQUOT)
			return DB_EFULL;
		return DB_EINTERNAL;
	case SQLITE_MISMATCH:
	case SQLITE_RANGE:
	case SQLITE_TOOBIG:
		return DB_EINPUT;
	default:
		return DB_EINTERNAL;
	}
}

/*
 * The class of a failed open.  A new file in a directory we may not write fails with the
 * errno of SQLite's read-only retry (ENOENT), so the directory is looked at here.
 */
static enum db_err
db_sqlite_open_class(sqlite3 *conn, int rc, const char *path)
{
	enum db_err c = db_sqlite_class(conn, rc);
	char dir[PATH_MAX];
	const char *slash;
	int n;

	if ((rc & 0xff) != SQLITE_CANTOPEN || c != DB_EUNAVAIL)
		return c;
	if ((slash = strrchr(path, '/')) == NULL)
		n = snprintf(dir, sizeof(dir), ".");
	else if (slash == path)
		n = snprintf(dir, sizeof(dir), "/");
	else
		n = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - path), path);
	if (n < 0 || (size_t)n >= sizeof(dir))
		return c;
	if (access(dir, F_OK) == 0 && access(dir, W_OK) == -1 &&
	    (errno == EACCES || errno == EROFS || errno == EPERM))
		return DB_EREADONLY;
	return c;
}

/*
 * PostgreSQL's SQLSTATE for an SQLite failure a request caused (rc extended, msg SQLite's
 * message): a constraint, a value too big (54000), an upsert without a matching unique
 * index (42P10); or NULL.  A CHECK on typeof() is how a non-STRICT schema gives a column a type
 * (sql/chinook/schema.sqlite.sql): failing it is PostgreSQL's 22P02, a value of the wrong
 * type, not a failed check.
 */
static const char *
db_sqlite_sqlstate(int rc, const char *msg)
{
	switch (rc) {
	case SQLITE_CONSTRAINT_UNIQUE:
	case SQLITE_CONSTRAINT_PRIMARYKEY:
	case SQLITE_CONSTRAINT_ROWID:
		return "23505";
	case SQLITE_CONSTRAINT_FOREIGNKEY:
		return "23503";
	case SQLITE_CONSTRAINT_NOTNULL:
		return "23502";
	case SQLITE_CONSTRAINT_CHECK:
		return msg != NULL && strstr(msg, "typeof(") != NULL ? "22P02" : "23514";
	case SQLITE_CONSTRAINT_DATATYPE:
	case SQLITE_MISMATCH:	/* not an integer, into an INTEGER PRIMARY KEY */
		return "22P02";
	case SQLITE_TOOBIG:	/* a string or blob the statement built grew past its limit */
		return "54000";
	case SQLITE_ERROR:
		/* An upsert's conflict target that no unique index covers: the request's
		 * mistake, as PostgreSQL's 42P10 says. */
		if (msg != NULL && strstr(msg, "ON CONFLICT clause does not match") != NULL)
			return "42P10";
		/* sluice_regexp() past its limits (db_sqlite_regex.c): the request's pattern,
		 * as PostgreSQL's "regular expression is too complex". */
		return msg != NULL && strncmp(msg, "invalid regular expression", 26) == 0 ?
		    "2201B" : NULL;
	default:
		return NULL;
	}
}

static void
db_sqlite_err(struct db_sqlite *s, int rc, const char *what)
{
	const char *ss = db_sqlite_sqlstate(rc, sqlite3_errmsg(s->conn));

	db_set_err(&s->base, ss != NULL && (strcmp(ss, "42P10") == 0 ||
	    strcmp(ss, "2201B") == 0) ? DB_EINPUT :
	    db_sqlite_class(s->conn, rc), "sqlite %s: %s (%d)", what, sqlite3_errmsg(s->conn), rc);
	if (ss != NULL) {
		memcpy(s->base.sqlstate, ss, 6);
		/* SQLite's own words (db_words()): its message, which names the constraint
		 * (and the table and column), never the statement. */
		db_set_words(&s->base, ss, sqlite3_errmsg(s->conn), NULL, NULL);
	}
	if (rc == SQLITE_CONSTRAINT_TRIGGER)
		db_set_raised(&s->base, sqlite3_errmsg(s->conn), NULL, NULL);
}

/*
 * Rewrites $N placeholders to ?N in place (buf is a copy of the SQL).  Skips '...' string
 * literals, "..." `...` [...] identifiers, -- and block comments.  A '$' that continues an
 * identifier (PostgreSQL allows "a$1") is left alone.  Returns the highest N, or -1 when an
 * N is out of SQLite's range.
 */
static int
db_sqlite_placeholders(char *buf)
{
	char *p = buf, close;
	long n;
	int max = 0;

	while (*p != '\0') {
		switch (*p) {
		case '\'':
		case '"':
		case '`':
		case '[':
			close = *p == '[' ? ']' : *p;
			for (p++; *p != '\0'; p++)
				if (*p == close) {
					/* A doubled quote is an escaped one, not the end. */
					if (close != ']' && p[1] == close) {
						p++;
						continue;
					}
					break;
				}
			if (*p != '\0')
				p++;
			break;
		case '-':
			if (p[1] != '-') {
				p++;
				break;
			}
			while (*p != '\0' && *p != '\n')
				p++;
			break;
		case '/':
			if (p[1] != '*') {
				p++;
				break;
			}
			for (p += 2; *p != '\0' && !(p[0] == '*' && p[1] == '/'); p++)
				continue;
			if (*p != '\0')
				p += 2;
			break;
		case '$':
			if (p > buf && (p[-1] == '_' || p[-1] == '$' ||
			    (p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') ||
			    (p[-1] >= '0' && p[-1] <= '9') || (unsigned char)p[-1] >= 0x80)) {
				p++;
				break;
			}
			if (p[1] < '0' || p[1] > '9') {
				p++;
				break;
			}
			*p++ = '?';
			n = 0;
			for (; *p >= '0' && *p <= '9'; p++) {
				n = n * 10 + (*p - '0');
				if (n > 32766)
					return -1;
			}
			if (n == 0)
				return -1;
			if (n > max)
				max = (int)n;
			break;
		default:
			p++;
			break;
		}
	}
	return max;
}

/* Runs one pragma and reads its single result, for the checks at open. */
static int
db_sqlite_pragma(struct db_sqlite *s, const char *sql, char *res, size_t reslen)
{
	sqlite3_stmt *st = NULL;
	const unsigned char *t;
	int rc, ret = -1;

	if ((rc = sqlite3_prepare_v2(s->conn, sql, -1, &st, NULL)) != SQLITE_OK) {
		db_sqlite_err(s, rc, sql);
		goto out;
	}
	rc = sqlite3_step(st);
	if (rc != SQLITE_ROW && rc != SQLITE_DONE) {
		db_sqlite_err(s, rc, sql);
		goto out;
	}
	if (res != NULL && reslen > 0) {
		res[0] = '\0';
		if (rc == SQLITE_ROW && (t = sqlite3_column_text(st, 0)) != NULL)
			(void)snprintf(res, reslen, "%s", (const char *)t);
	}
	ret = 0;
out:
	sqlite3_finalize(st);
	return ret;
}

/*
 * Process-wide settings, before SQLite initialises itself on the first open: no memory
 * statistics, which would take one global mutex around every allocation of every
 * connection (a response of 0.8 MB makes tens of thousands); and no bulk allocation of 20
 * page-cache slots when a connection's cache is first used (touched at once when the
 * schema is read): a worker holds a connection per thread, so an idle pool paid for them
 * once per thread (docs/benchmarks.md, "SQLite's page cache"); pages now come one by one
 * as the cache fills.
 * sqlite3_config() refuses once SQLite is initialised (a program that used it first);
 * that only costs the savings.
 */
static void
db_sqlite_global(void)
{
	(void)sqlite3_config(SQLITE_CONFIG_MEMSTATUS, 0);
	(void)sqlite3_config(SQLITE_CONFIG_PAGECACHE, NULL, 0, 0);
	if (db_sqlite_vfs_register() == -1)
		log_warn("sqlite: no VFS %s; a memory map is made again after every write",
		    "sluice-mmap");
}

/*
 * Writers of one file queue on "<file>-wlock" (an exclusive flock(), one open file
 * description per connection, so threads of a process queue too) before BEGIN IMMEDIATE,
 * and let go as soon as their transaction is over.  Without it a writer waits for SQLite's
 * lock in the busy handler, which sleeps up to 100 ms between tries while other connections
 * keep taking the lock: under concurrent POSTs some writes wait for seconds.  A blocked
 * flock() is woken as soon as the lock is free, and the kernel
 * lets it go with a process that dies.  No such file (an in-memory or read-only database,
 * a directory the worker may not write): no queue, the busy timeout alone, as before.
 */
static int
db_sqlite_wlock_open(sqlite3 *conn)
{
	const char *f = sqlite3_db_filename(conn, "main");
	static atomic_flag warned = ATOMIC_FLAG_INIT;
	char path[PATH_MAX];
	int n, fd;

	if (f == NULL || *f == '\0' || sqlite3_db_readonly(conn, "main") == 1)
		return -1;
	n = snprintf(path, sizeof(path), "%s-wlock", f);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	/* Read-write to map the turn; flock() alone needs no write access, so a file another
	 * user made will do read-only.  A failure is said once per process, not once per
	 * connection of a 64-thread pool. */
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640)) < 0 &&
	    (fd = open(path, O_RDONLY | O_CREAT | O_CLOEXEC, 0640)) < 0 &&
	    !atomic_flag_test_and_set(&warned))
		log_warn("sqlite: no writers' queue (%s: %s); writers poll the busy timeout",
		    path, strerror(errno));
	return fd;
}

static char db_sqlite_boot[40];

static void
db_sqlite_boot_read(void)
{
	FILE *f;

	if ((f = fopen("/proc/sys/kernel/random/boot_id", "re")) == NULL)
		return;
	if (fgets(db_sqlite_boot, sizeof(db_sqlite_boot), f) == NULL)
		memset(db_sqlite_boot, 0, sizeof(db_sqlite_boot));
	(void)fclose(f);
}

/*
 * This boot's id (all zero where /proc does not say).  The lock file outlives the boot,
 * and a mutex left locked by a power cut names a thread of the old boot: no robust list
 * will ever free it, and the kernel would make its next taker wait for good.
 */
static const char *
db_sqlite_boot_id(void)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;

	(void)pthread_once(&once, db_sqlite_boot_read);
	return db_sqlite_boot;
}

/*
 * Maps the writers' turn from the lock file fd, making it the first time in a boot: the
 * first process to find the file new, or made in another boot, claims it (state 0 or 2
 * -> 1), makes the mutex and says so (state 2); the others wait up to a second for that.
 * Not under the file's flock, which a writer may hold for as long as its transaction
 * lasts.  Returns it, or NULL: the file is read-only to this process, was made by another
 * layout, or the turn cannot be made; its writers then queue on the flock alone, which
 * still keeps them one at a time.
 */
static struct db_sqlite_wq *
db_sqlite_wq_open(int fd)
{
	static atomic_flag warned = ATOMIC_FLAG_INIT;
	struct timespec pause = { 0, 1000000 };
	const char *boot = db_sqlite_boot_id();
	struct db_sqlite_wq *wq;
	pthread_mutexattr_t ma;
	unsigned expect;
	struct stat st;
	void *p;
	int i;

	if (fd < 0 || (fcntl(fd, F_GETFL) & O_ACCMODE) != O_RDWR)
		return NULL;
	/* Growing it twice is harmless: the new bytes are zero, state 0. */
	if (fstat(fd, &st) < 0 || (st.st_size < (off_t)sizeof(*wq) &&
	    ftruncate(fd, (off_t)sizeof(*wq)) < 0))
		goto fail;
	p = mmap(NULL, sizeof(*wq), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	wq = p;
	expect = atomic_load(&wq->state);
	if (expect == 2 && memcmp(wq->boot, boot, sizeof(wq->boot)) == 0)
		expect = 1;	/* made in this boot: use it */
	if (expect != 1 && atomic_compare_exchange_strong(&wq->state, &expect, 1)) {
		/* Claimed.  Another process may have made it in this boot meanwhile (it
		 * was 2 again when claimed): then it is in use, and stays as it is. */
		if (expect == 2 && memcmp(wq->boot, boot, sizeof(wq->boot)) == 0) {
			atomic_store(&wq->state, 2);
			goto made;
		}
		if (pthread_mutexattr_init(&ma) != 0)
			goto unmap;	/* state stays 1: the others give up after a second */
		memset(&wq->mu, 0, sizeof(wq->mu));
		if (pthread_mutexattr_setpshared(&ma, PTHREAD_PROCESS_SHARED) == 0 &&
		    pthread_mutexattr_setrobust(&ma, PTHREAD_MUTEX_ROBUST) == 0 &&
		    pthread_mutexattr_setprotocol(&ma, PTHREAD_PRIO_INHERIT) == 0 &&
		    pthread_mutex_init(&wq->mu, &ma) == 0) {
			wq->size = sizeof(*wq);
			memcpy(wq->boot, boot, sizeof(wq->boot));
			atomic_store(&wq->state, 2);
		}
		(void)pthread_mutexattr_destroy(&ma);
	}
made:
	for (i = 0; i < 1000 && atomic_load(&wq->state) != 2; i++)
		(void)nanosleep(&pause, NULL);
	if (atomic_load(&wq->state) == 2 && wq->size == sizeof(*wq) &&
	    memcmp(wq->boot, boot, sizeof(wq->boot)) == 0)
		return wq;
	errno = EPROTO;
unmap:
	(void)munmap(wq, sizeof(*wq));
fail:
	if (!atomic_flag_test_and_set(&warned))
		log_warn("sqlite: the writers' queue is not first-come first-served (%s); "
		    "writers take the lock file in any order", strerror(errno));
	return NULL;
}

/* Waits for the turn until the clock_now_ms() time until (0: for good); the mutex's rc. */
static int
db_sqlite_wq_lock(struct db_sqlite_wq *wq, long long until)
{
	struct timespec ts;
	long long left;

	if (until == 0)
		return pthread_mutex_lock(&wq->mu);
	/* POSIX times a mutex wait on the wall clock: the time left, from now. */
	left = until - clock_now_ms();
	(void)clock_gettime(CLOCK_REALTIME, &ts);
	if (left > 0) {
		ts.tv_sec += (time_t)(left / 1000);
		ts.tv_nsec += (long)(left % 1000) * 1000000L;
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
	}
	return pthread_mutex_timedlock(&wq->mu, &ts);
}

/*
 * How long a writer waits for the turn at one go: until deadline (0: none), or sooner
 * until the writer holding it has held it twice the write budget (sqlite_write_ms), when
 * this one looks whether that writer's process is stopped.  A write holds the lock for
 * its write budget at most (gcommit.c), so a wait that long is rare; a stopped process
 * holds it until sluiced's watchdog kills it, which is the request budget and a second.
 */
static long long
db_sqlite_wq_until(const struct db_sqlite *s, long long deadline, int holder,
    long long since)
{
	long long now = clock_now_ms(), look;
	int wms = s->base.opts.sqlite_write_ms;

	if (wms <= 0)
		return deadline;
	/* No holder seen (the turn passing from one writer to the next): look again then. */
	look = holder != 0 ? since + 2LL * wms : now + 2LL * wms;
	if (look <= now)
		look = now + wms;
	return deadline != 0 && deadline < look ? deadline : look;
}

/*
 * Waits for the writers' turn until deadline (0: none).  A writer whose process is
 * stopped holds it for good (until sluiced kills the process): a writer that finds the
 * turn held that long by a stopped process gives up at once rather than at the end of its
 * own budget, so that every writer of the file is answered (503) within twice the write
 * budget of the stop, not the whole request budget.  Returns 0 with the turn held, 1
 * without it (no turn to wait for: the flock alone orders this writer), or -1 with
 * DB_ETIMEOUT (the budget spent) or DB_EBUSY (the holder stopped) set.
 */
static int
db_sqlite_wq_take(struct db_sqlite *s, long long deadline)
{
	static atomic_flag warned = ATOMIC_FLAG_INIT;
	long long since;
	int rc, holder;

	if (s->wq == NULL)
		return 1;
	for (;;) {
		holder = atomic_load(&s->wq->holder);
		since = atomic_load(&s->wq->since);
		rc = db_sqlite_wq_lock(s->wq, db_sqlite_wq_until(s, deadline, holder, since));
		if (rc != ETIMEDOUT || (deadline != 0 && clock_now_ms() >= deadline))
			break;
		/* The same writer still holds it, in a process that cannot run. */
		if (holder != 0 && atomic_load(&s->wq->holder) == holder &&
		    atomic_load(&s->wq->since) == since && proc_stopped(holder)) {
			db_set_err(&s->base, DB_EBUSY, "sqlite: the writers' queue has been "
			    "held for %lld ms by process %d, which is stopped",
			    clock_now_ms() - since, holder);
			return -1;
		}
	}
	if (rc == EOWNERDEAD) {
		/* Its holder died (its transaction is SQLite's to undo): the turn is ours. */
		log_warn("sqlite: a writer died holding the writers' queue; it goes on");
		rc = pthread_mutex_consistent(&s->wq->mu);
	}
	if (rc == 0) {
		s->wqheld = 1;
		atomic_store(&s->wq->since, clock_now_ms());
		atomic_store(&s->wq->holder, (int)getpid());
		return 0;
	}
	if (rc == ETIMEDOUT) {
		db_set_err(&s->base, DB_ETIMEOUT, "sqlite: the writers' queue was busy for "
		    "the whole time budget");
		return -1;
	}
	if (!atomic_flag_test_and_set(&warned))
		log_warn("sqlite: the writers' queue failed (%s); writers take the lock file "
		    "in any order", strerror(rc));
	return 1;
}

/* Lets the turn go, to the writer that has waited longest. */
static void
db_sqlite_wq_drop(struct db_sqlite *s)
{
	if (s->wqheld) {
		s->wqheld = 0;
		atomic_store(&s->wq->holder, 0);
		(void)pthread_mutex_unlock(&s->wq->mu);
	}
}

/*
 * Takes the queue: the writers' turn first (in arrival order), then the flock.  The
 * flock is free by then unless a writer outside the turn holds it (a process that could
 * not map the turn, a tool).  Without a time budget it waits as long as it takes, woken by
 * the kernel.  With one, a writer that finds the flock taken tries again after a pause
 * that grows from 0.1 ms to 5 ms, until the budget is spent: a writer that hangs (or a
 * slow one) makes the others answer 503 in time instead of holding them all.  Returns 0,
 * or -1 with DB_ETIMEOUT or DB_EBUSY set (neither held; db_sqlite_wq_take()).
 */
static int
db_sqlite_wlock_take(struct db_sqlite *s)
{
	long long deadline = s->base.deadline_ms;
	struct timespec ts = { 0, 100000 };

	if (s->wlock < 0 || s->wlocked)
		return 0;
	/* The write ahead (queue, lock, commit, fsync) sleeps: the pool takes requests
	 * meanwhile, and the next batch gathers. */
	db_blocking();
	if (db_sqlite_wq_take(s, deadline) < 0)
		return -1;
	if (deadline == 0) {
		while (flock(s->wlock, LOCK_EX) < 0)
			if (errno != EINTR) {
				/* Not queued this time: the busy timeout applies. */
				db_sqlite_wq_drop(s);
				return 0;
			}
		s->wlocked = 1;
		return 0;
	}
	while (flock(s->wlock, LOCK_EX | LOCK_NB) < 0) {
		if (errno != EWOULDBLOCK && errno != EINTR) {
			db_sqlite_wq_drop(s);
			return 0;
		}
		if (clock_now_ms() >= deadline) {
			db_sqlite_wq_drop(s);
			db_set_err(&s->base, DB_ETIMEOUT, "sqlite: the writers' queue was "
			    "busy for the whole time budget");
			return -1;
		}
		(void)nanosleep(&ts, NULL);
		if (ts.tv_nsec < 5000000)
			ts.tv_nsec *= 2;
	}
	s->wlocked = 1;
	return 0;
}

/*
 * SQLite's busy handler, as a busy timeout of busy_ms: another connection holds the lock
 * this one needs, so it sleeps and tries again (1 ms, then twice as long each time up to
 * 100 ms, never past busy_ms in all), counting each retry (common/metrics.h).  tries is
 * how often SQLite called it for this lock.  Never past the request's time budget either:
 * the progress handler does not run while a statement waits for a lock, and busy_ms (10 s
 * by default) is longer than the budget, so a lock held by a process that cannot run (a
 * stopped worker, until sluiced kills it) would otherwise hold the statement past it.
 * Returns 1 to try again, 0 to give up (SQLITE_BUSY).
 */
static int
db_sqlite_busy(void *arg, int tries)
{
	const struct db_sqlite *s = arg;
	long long left = 0;
	long slept, pause;

	if (s->base.deadline_ms != 0 && (left = s->base.deadline_ms - clock_now_ms()) <= 0)
		return 0;

	if (tries < 7) {
		slept = (1L << tries) - 1;
		pause = 1L << tries;
	} else {
		slept = 127 + 100L * (tries - 7);
		pause = 100;
	}
	if (slept + pause > s->busy_ms)
		pause = s->busy_ms - slept;
	if (left > 0 && pause > left)
		pause = (long)left;
	if (pause <= 0)
		return 0;
	metrics_db_busy();
	(void)sqlite3_sleep((int)pause);
	return 1;
}

/* SQLite's progress handler: non-zero interrupts the statement once the request's time
 * budget is spent. */
static int
db_sqlite_progress(void *arg)
{
	const struct db_sqlite *s = arg;

	return s->base.deadline_ms != 0 && clock_now_ms() >= s->base.deadline_ms;
}

/* Lets the queue go once no transaction is open (committed, rolled back, or ended by
 * SQLite itself after an error): the flock, then the turn, so that the next writer finds
 * the flock free. */
static void
db_sqlite_wlock_drop(struct db_sqlite *s)
{
	if (s->wlocked && sqlite3_get_autocommit(s->conn)) {
		(void)flock(s->wlock, LOCK_UN);
		s->wlocked = 0;
		db_sqlite_wq_drop(s);
	}
}

/*
 * Gives path's -wal and -shm files the database file's mode when this process owns them
 * and they differ: SQLite creates them with the database's mode of that moment, so a
 * database that was read-only when they were made leaves a read-only WAL index behind,
 * and every connection made later would be read-only too.
 *
 * By their names, never through a descriptor: SQLite's locks on them are POSIX record
 * locks, which the kernel drops for the whole process when the process closes any
 * descriptor of the file.  Opening and closing -shm here, as each new connection of a
 * serving worker did, let go of the worker's lock on it (and its WAL read marks): a
 * worker starting next to it then found nobody using the WAL index, emptied it, and the
 * other workers died of SIGBUS in their next commit (regression:
 * test_records_counts' kill storm).
 */
static void
db_sqlite_side_modes(const char *path)
{
	static const char *const sfx[] = { "-wal", "-shm" };
	char f[PATH_MAX + 8];
	struct stat st, fst;
	size_t i;
	int n;

	if (stat(path, &st) == -1)
		return;
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		n = snprintf(f, sizeof(f), "%s%s", path, sfx[i]);
		if (n < 0 || (size_t)n >= sizeof(f) || lstat(f, &fst) == -1 ||
		    !S_ISREG(fst.st_mode))
			continue;
		if (fst.st_uid == geteuid() && (fst.st_mode & 0777) != (st.st_mode & 0777))
			(void)chmod(f, st.st_mode & 0777);
	}
}

/*
 * A new connection's settings: WAL (unless the file is read-only or in memory), the
 * synchronous level, the memory map, foreign keys, and the JSON functions for the
 * database's text encoding.  0, or -1 with the error on s.
 */
static int
db_sqlite_pragmas(struct db_sqlite *s, const char *path, const struct db_opts *opts)
{
	static const char *const syncs[] = { "FULL", "OFF", "NORMAL", "FULL" };
	char sql[128], mode[32], enc[32];
	int n, chunk = opts->sqlite_chunk;

	if (db_sqlite_pragma(s, "PRAGMA journal_mode=WAL", mode, sizeof(mode)) == -1)
		return -1;
	if (strcmp(mode, "wal") != 0) {
		/* A read-only file cannot change its journal mode; it can still be read, and
		 * writes fail with DB_EREADONLY.  A writable one must be WAL, or readers and
		 * the writer would block each other.  ":memory:" has no WAL at all. */
		if (sqlite3_db_readonly(s->conn, "main") == 1)
			log_warn("sqlite %s: read-only, journal mode %s", path, mode);
		else if (strcmp(mode, "memory") != 0) {
			db_set_err(&s->base, DB_EINTERNAL, "sqlite %s: cannot switch to WAL "
			    "(journal mode is %s)", path, mode);
			return -1;
		}
	}
	n = snprintf(sql, sizeof(sql), "PRAGMA synchronous=%s", syncs[opts->sqlite_sync]);
	if (n < 0 || (size_t)n >= sizeof(sql) || db_sqlite_pragma(s, sql, NULL, 0) == -1)
		return -1;
	n = snprintf(sql, sizeof(sql), "PRAGMA mmap_size=%lld",
	    opts->sqlite_mmap < 0 ? 0LL : (long long)opts->sqlite_mmap);
	if (n < 0 || (size_t)n >= sizeof(sql) || db_sqlite_pragma(s, sql, NULL, 0) == -1)
		return -1;
	/* A file that grows by chunks changes its size, and so every connection's memory
	 * map (db_sqlite_vfs.c), once a chunk rather than at every checkpoint. */
	if (opts->sqlite_chunk > 0 && sqlite3_file_control(s->conn, "main",
	    SQLITE_FCNTL_CHUNK_SIZE, &chunk) != SQLITE_OK)
		log_warn("sqlite %s: no chunk size", path);
	if (db_sqlite_pragma(s, "PRAGMA foreign_keys=ON", NULL, 0) == -1)
		return -1;
	/* The schema is read by now, so the text encoding is the database's own (a new,
	 * empty file reports the UTF-8 it will be created with). */
	if (db_sqlite_pragma(s, "PRAGMA encoding", enc, sizeof(enc)) == -1)
		return -1;
	if (db_sqlite_json_register(s->conn, strcmp(enc, "UTF-8") == 0) == -1 ||
	    db_sqlite_ops_register(s->conn) == -1 ||
	    db_sqlite_regex_register(s->conn) == -1) {
		db_set_err(&s->base, DB_EINTERNAL, "sqlite %s: cannot register the JSON "
		    "and regular expression functions", path);
		return -1;
	}
	return 0;
}

int
db_sqlite_open(struct db **out, const char *path, const struct db_opts *opts,
    enum db_err *code, char *err, size_t errlen)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	struct db_sqlite *s;
	int rc, ret = -1;

	*code = DB_EINTERNAL;
	(void)pthread_once(&once, db_sqlite_global);
	if ((s = calloc(1, sizeof(*s))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		goto out;
	}
	s->base.ops = &db_sqlite_ops;
	s->base.backend = DB_SQLITE;
	s->base.opts = *opts;
	s->wlock = -1;

	if (access(path, W_OK) == 0)
		db_sqlite_side_modes(path);
	/* A serving worker never creates the file: a missing database is an error, not an
	 * empty one in its place (only a seeder creates it). */
	/* A mapped file keeps its map across other connections' writes (db_sqlite_vfs.c). */
	rc = sqlite3_open_v2(path, &s->conn, SQLITE_OPEN_READWRITE | SQLITE_OPEN_NOMUTEX |
	    (opts->sqlite_no_create ? 0 : SQLITE_OPEN_CREATE),
	    opts->sqlite_mmap > 0 ? db_sqlite_vfs_name() : NULL);
	if (rc != SQLITE_OK) {
		*code = db_sqlite_open_class(s->conn, rc, path);
		(void)snprintf(err, errlen, "sqlite open %s: %s", path,
		    s->conn != NULL ? sqlite3_errmsg(s->conn) : sqlite3_errstr(rc));
		goto out;
	}
	sqlite3_extended_result_codes(s->conn, 1);
	/* About every 0.1 ms of work: the clock is read from the vDSO, a few ns. */
	sqlite3_progress_handler(s->conn, 4000, db_sqlite_progress, s);
	if (opts->value_max > 0)
		(void)sqlite3_limit(s->conn, SQLITE_LIMIT_LENGTH,
		    opts->value_max > INT_MAX ? INT_MAX : (int)opts->value_max);
	/* Set before the first pragma: switching to WAL itself may have to wait. */
	s->busy_ms = opts->sqlite_busy_ms;
	sqlite3_busy_handler(s->conn, db_sqlite_busy, s);

	if (db_sqlite_pragmas(s, path, opts) == -1)
		goto fail;
	if (sqlite3_db_readonly(s->conn, "main") == 1)
		log_warn("sqlite %s: opened read-only; writes will fail", path);
	s->wlock = db_sqlite_wlock_open(s->conn);
	s->wq = db_sqlite_wq_open(s->wlock);

	*out = &s->base;
	s = NULL;
	*code = DB_OK;
	ret = 0;
	metrics_db_open(1);
	goto out;
fail:
	*code = s->base.errcode;
	(void)snprintf(err, errlen, "%s", s->base.errmsg);
out:
	if (s != NULL) {
		sqlite3_close(s->conn);
		if (s->wlock >= 0)
			(void)close(s->wlock);
		free(s);
	}
	return ret;
}

static void
db_sqlite_close(struct db *db)
{
	struct db_sqlite *s = sq(db);

	/* Every statement was finalized by db.c, so sqlite3_close() cannot be refused. */
	if (sqlite3_close(s->conn) != SQLITE_OK)
		log_err("sqlite close: %s", sqlite3_errmsg(s->conn));
	metrics_db_open(-1);
	/* Closed in a transaction (SQLite rolled it back): the turn goes to the next. */
	db_sqlite_wq_drop(s);
	if (s->wq != NULL)
		(void)munmap(s->wq, sizeof(*s->wq));
	if (s->wlock >= 0)
		(void)close(s->wlock);
	free(s);
}

/*
 * 1 when a file can really be made next to path now: access() and statvfs() do not see
 * every read-only state (ext4's emergency read-only after an error does not show in
 * either), creating and removing a file does.  0 otherwise.
 */
static int
db_sqlite_dir_writable(const char *path)
{
	static atomic_uint seq;
	char probe[PATH_MAX];
	const char *slash = strrchr(path, '/');
	int n, fd;

	if (slash == NULL)
		n = snprintf(probe, sizeof(probe), ".sluice-probe-%ld-%u", (long)getpid(),
		    atomic_fetch_add(&seq, 1));
	else
		n = snprintf(probe, sizeof(probe), "%.*s/.sluice-probe-%ld-%u",
		    (int)(slash - path), path, (long)getpid(), atomic_fetch_add(&seq, 1));
	if (n < 0 || (size_t)n >= sizeof(probe))
		return 0;
	if ((fd = open(probe, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600)) < 0)
		return 0;
	(void)close(fd);
	(void)unlink(probe);
	return 1;
}

/* How often a connection opened read-only looks whether its file is writable again. */
#define DB_SQLITE_RO_CHECK_MS	1000

/*
 * 1 when s was opened read-only and its file (and the directory, for the WAL's files) can
 * be written now, else 0.  A connection stays read-only for its life, so whoever holds it
 * must open a new one to write again.  It looks at most once every DB_SQLITE_RO_CHECK_MS
 * (access() and a probe file in the directory, a few system calls), so that a read-only
 * file costs the writes that keep failing nothing more, and a file writable again is seen
 * within a second.  Called by the connection's one user (its thread, or the group
 * commit's leader).
 */
static int
db_sqlite_writable_again(struct db_sqlite *s)
{
	const char *path;
	long long now;

	if (sqlite3_db_readonly(s->conn, "main") != 1 ||
	    (path = sqlite3_db_filename(s->conn, "main")) == NULL || path[0] == '\0')
		return 0;
	now = clock_now_ms();
	if (s->ro_checked != 0 && now - s->ro_checked < DB_SQLITE_RO_CHECK_MS)
		return 0;
	s->ro_checked = now;
	return access(path, W_OK) == 0 && db_sqlite_dir_writable(path);
}

/*
 * An embedded file has no connection to lose, but one opened read-only (the file or its
 * file system was read-only when the worker started) stays read-only for its life, and
 * SQLite shares the file's WAL index between every connection of the process, so no
 * connection of this process can become writable again.  Once the file is writable (seen
 * within a second: db_sqlite_writable_again()), the request fails (503) and the worker
 * asks to be replaced (db_restart_wanted()): the new one opens the file read-write,
 * without a reload.
 */
static int
db_sqlite_ready(struct db *db)
{
	struct db_sqlite *s = sq(db);
	const char *path;

	if (db->restart)
		goto restart;
	if (!sqlite3_get_autocommit(s->conn) || !db_sqlite_writable_again(s) ||
	    (path = sqlite3_db_filename(s->conn, "main")) == NULL)
		return 0;
	db_sqlite_side_modes(path);
	log_info("sqlite %s: writable again; the worker restarts to open it read-write",
	    path);
	db->restart = 1;
restart:
	db_set_err(db, DB_EREADONLY, "sqlite: the database was read-only when the worker "
	    "opened it; a new worker is starting");
	return -1;
}

/* Space below which the file system counts as full for db_state(): a few pages. */
#define DB_SQLITE_SPACE_MIN	(64 * 1024)

static int
db_sqlite_state(struct db *db, struct db_state *out)
{
	struct db_sqlite *s = sq(db);
	const char *path = sqlite3_db_filename(s->conn, "main");
	char dir[PATH_MAX];
	const char *slash;
	struct statvfs v;
	int moved = 0, n;

	out->writable = 1;
	if (path == NULL || path[0] == '\0')
		return 0;		/* ":memory:" */
	if (sqlite3_file_control(s->conn, "main", SQLITE_FCNTL_HAS_MOVED, &moved) == SQLITE_OK)
		out->moved = moved != 0;
	if ((slash = strrchr(path, '/')) == NULL)
		n = snprintf(dir, sizeof(dir), ".");
	else
		n = snprintf(dir, sizeof(dir), "%.*s", slash == path ? 1 : (int)(slash - path),
		    path);
	if (out->moved || sqlite3_db_readonly(s->conn, "main") == 1 ||
	    access(path, W_OK) == -1 || n < 0 || (size_t)n >= sizeof(dir) ||
	    access(dir, W_OK) == -1 || statvfs(path, &v) == -1 || (v.f_flag & ST_RDONLY) ||
	    (unsigned long long)v.f_bavail * v.f_frsize < DB_SQLITE_SPACE_MIN ||
	    !db_sqlite_dir_writable(path))
		out->writable = 0;
	return 0;
}

static int
db_sqlite_exec(struct db *db, const char *sql)
{
	struct db_sqlite *s = sq(db);
	int rc;

	rc = sqlite3_exec(s->conn, sql, NULL, NULL, NULL);
	db_sqlite_wlock_drop(s);
	if (rc != SQLITE_OK) {
		db_sqlite_err(s, rc, "exec");
		return -1;
	}
	return 0;
}

static int
db_sqlite_begin(struct db *db, enum db_txn kind)
{
	/* Isolation levels do not apply: SQLite transactions are always serializable.  A
	 * writer takes the lock now, where the busy timeout applies, rather than at its
	 * first write, where an upgrade from a stale read snapshot fails at once. */
	if (kind == DB_TXN_WRITE && db_sqlite_wlock_take(sq(db)) == -1)
		return -1;
	return db_sqlite_exec(db, kind == DB_TXN_WRITE ? "BEGIN IMMEDIATE" : "BEGIN");
}

static int
db_sqlite_in_txn(struct db *db)
{
	/* db_rollback() asks this first: a transaction SQLite ended on an error must not
	 * keep the writers' queue. */
	db_sqlite_wlock_drop(sq(db));
	return sqlite3_get_autocommit(sq(db)->conn) == 0;
}

static int
db_sqlite_commit(struct db *db)
{
	return db_sqlite_exec(db, "COMMIT");
}

static struct db_stmt *
db_sqlite_stmt_new(struct db *db, const char *sql)
{
	struct db_sqlite *s = sq(db);
	struct db_sqlite_stmt *st = NULL;
	sqlite3_stmt *extra = NULL;
	const char *tail = NULL;
	char *buf = NULL;
	int rc;

	if ((buf = strdup(sql)) == NULL) {
		db_set_err(db, DB_EINTERNAL, "out of memory");
		goto fail;
	}
	if (db_sqlite_placeholders(buf) == -1) {
		db_set_err(db, DB_EINTERNAL, "placeholder out of range in: %.200s", sql);
		goto fail;
	}
	if ((st = calloc(1, sizeof(*st))) == NULL) {
		db_set_err(db, DB_EINTERNAL, "out of memory");
		goto fail;
	}
	st->base.db = db;
	rc = sqlite3_prepare_v3(s->conn, buf, -1, SQLITE_PREPARE_PERSISTENT, &st->stmt, &tail);
	if (rc != SQLITE_OK) {
		db_sqlite_err(s, rc, "prepare");
		goto fail;
	}
	if (st->stmt == NULL) {
		db_set_err(db, DB_EINTERNAL, "sqlite prepare: no statement in SQL");
		goto fail;
	}
	/* One statement per db_prepare(), as PostgreSQL enforces: a second one would be
	 * silently ignored here.  Comments and blanks after the ';' are fine. */
	if (tail != NULL && *tail != '\0') {
		rc = sqlite3_prepare_v2(s->conn, tail, -1, &extra, NULL);
		sqlite3_finalize(extra);
		if (rc != SQLITE_OK || extra != NULL) {
			db_set_err(db, DB_EINTERNAL, "sqlite prepare: more than one statement");
			goto fail;
		}
	}
	/* With ?N numbering the count is the highest N, as for $N on PostgreSQL. */
	st->base.nparams = sqlite3_bind_parameter_count(st->stmt);
	free(buf);
	return &st->base;
fail:
	if (st != NULL) {
		sqlite3_finalize(st->stmt);
		free(st);
	}
	free(buf);
	return NULL;
}

static void
db_sqlite_stmt_free(struct db_stmt *st, int server_side)
{
	(void)server_side;
	sqlite3_finalize(sqst(st)->stmt);
	free(st);
}

static void
db_sqlite_stmt_reset(struct db_stmt *st)
{
	/* The return value repeats the last step's error, already reported. */
	(void)sqlite3_reset(sqst(st)->stmt);
}

static void
db_sqlite_stmt_clear(struct db_stmt *st)
{
	(void)sqlite3_clear_bindings(sqst(st)->stmt);
}

static int
db_sqlite_bind_rc(struct db_stmt *st, int rc)
{
	if (rc != SQLITE_OK) {
		db_sqlite_err(sq(st->db), rc, "bind");
		return -1;
	}
	return 0;
}

static int
db_sqlite_bind_text(struct db_stmt *st, int idx, const char *s, size_t len)
{
	return db_sqlite_bind_rc(st, sqlite3_bind_text(sqst(st)->stmt, idx, s, (int)len,
	    SQLITE_TRANSIENT));
}

static int
db_sqlite_bind_int(struct db_stmt *st, int idx, int64_t v)
{
	return db_sqlite_bind_rc(st, sqlite3_bind_int64(sqst(st)->stmt, idx, v));
}

static int
db_sqlite_bind_double(struct db_stmt *st, int idx, double v)
{
	return db_sqlite_bind_rc(st, sqlite3_bind_double(sqst(st)->stmt, idx, v));
}

static int
db_sqlite_bind_null(struct db_stmt *st, int idx)
{
	return db_sqlite_bind_rc(st, sqlite3_bind_null(sqst(st)->stmt, idx));
}

static int
db_sqlite_step(struct db_stmt *st)
{
	struct db_sqlite *s = sq(st->db);
	sqlite3_stmt *stmt = sqst(st)->stmt;
	int rc;

	rc = sqlite3_step(stmt);
	if (rc == SQLITE_ROW) {
		st->state = DB_ST_ROW;
		return DB_ROW;
	}
	if (rc == SQLITE_DONE) {
		st->changes = sqlite3_changes64(s->conn);
		/* Reset at once: a finished statement left un-reset keeps its read
		 * transaction, and with it an old snapshot, until someone resets it. */
		(void)sqlite3_reset(stmt);
		st->state = DB_ST_DONE;
		return DB_DONE;
	}
	db_sqlite_err(s, rc, "step");
	(void)sqlite3_reset(stmt);
	db_sqlite_wlock_drop(s);
	st->state = DB_ST_IDLE;
	return DB_ERROR;
}

static int
db_sqlite_column_count(struct db_stmt *st)
{
	return sqlite3_column_count(sqst(st)->stmt);
}

static const char *
db_sqlite_column_name(struct db_stmt *st, int col)
{
	return sqlite3_column_name(sqst(st)->stmt, col);
}

static const char *
db_sqlite_column_text(struct db_stmt *st, int col, size_t *len)
{
	sqlite3_stmt *stmt = sqst(st)->stmt;
	const char *t;

	t = (const char *)sqlite3_column_text(stmt, col);
	if (len != NULL)
		*len = t == NULL ? 0 : (size_t)sqlite3_column_bytes(stmt, col);
	return t;
}

static int64_t
db_sqlite_column_int(struct db_stmt *st, int col)
{
	return sqlite3_column_int64(sqst(st)->stmt, col);
}

/* A real without the detour through text that db_column_text() would take. */
static double
db_sqlite_column_double(struct db_stmt *st, int col)
{
	return sqlite3_column_double(sqst(st)->stmt, col);
}

static int
db_sqlite_column_isnull(struct db_stmt *st, int col)
{
	return sqlite3_column_type(sqst(st)->stmt, col) == SQLITE_NULL;
}

static const struct db_ops db_sqlite_ops = {
	.close = db_sqlite_close,
	.ready = db_sqlite_ready,
	.tables_sql = "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND "
	    "name NOT LIKE 'sqlite_%'",
	.state = db_sqlite_state,
	.exec = db_sqlite_exec,
	.begin = db_sqlite_begin,
	.commit = db_sqlite_commit,
	.in_txn = db_sqlite_in_txn,
	.stmt_new = db_sqlite_stmt_new,
	.stmt_free = db_sqlite_stmt_free,
	.stmt_reset = db_sqlite_stmt_reset,
	.stmt_clear = db_sqlite_stmt_clear,
	.bind_text = db_sqlite_bind_text,
	.bind_int = db_sqlite_bind_int,
	.bind_double = db_sqlite_bind_double,
	.bind_null = db_sqlite_bind_null,
	.step = db_sqlite_step,
	.column_count = db_sqlite_column_count,
	.column_name = db_sqlite_column_name,
	.column_text = db_sqlite_column_text,
	.column_int = db_sqlite_column_int,
	.column_double = db_sqlite_column_double,
	.column_isnull = db_sqlite_column_isnull,
};

/*
 * The group commit's own connection (gcommit.c).  Its batches commit one after the other
 * on it, so the pages they read and write stay in its page cache from one batch to the
 * next (a connection's cache is dropped whenever another one committed since its last
 * transaction; every request thread's connection sees that after each batch).
 *
 * Its COMMIT does not checkpoint the WAL (SQLite's auto-checkpoint would, every 1000 pages
 * of WAL, copying them to the database file and syncing it before the COMMIT returns, so
 * before the batch's writers are answered).  Its WAL hook instead marks the checkpoint due
 * (db_sqlite_checkpoint_due()), and the leader runs it on this connection once the batch
 * is answered, before the next batch begins (db_sqlite_checkpoint()): the next BEGIN then
 * finds the WAL copied and writes it again from its start, as after an auto-checkpoint.
 * (A checkpoint run beside the next batches instead never lets the WAL start over: it
 * grows with every write.)  Should a checkpoint fall behind (readers hold the old pages)
 * and the WAL reach DB_SQLITE_WAL_BACKSTOP pages, the COMMIT checkpoints itself again.
 */
/*
 * Every DB_SQLITE_WAL_CKPT pages (16 MB of 4 kB pages), four times fewer than SQLite's
 * auto-checkpoint's 1000: a checkpoint holds the next batch for its copy and the database
 * file's sync (a few ms here), and writes that touch the same pages over and over (a
 * table's last leaf, its indexes', the kept counts) copy each page once per checkpoint.
 * Records creates, 32 connections, same run: 1000 pages 3.1-4.2k a second, p99 32-57 ms
 * (a loaded machine); 4000 pages 4.3-4.9k, p99 18-24 ms, 10 % less CPU a create.
 */
#define DB_SQLITE_WAL_CKPT	4000
#define DB_SQLITE_WAL_BACKSTOP	(4 * DB_SQLITE_WAL_CKPT)

static int
db_sqlite_wal_hook(void *arg, sqlite3 *conn, const char *name, int pages)
{
	struct db_sqlite *s = arg;

	if (pages >= DB_SQLITE_WAL_BACKSTOP)
		(void)sqlite3_wal_checkpoint_v2(conn, name, SQLITE_CHECKPOINT_PASSIVE, NULL, NULL);
	else if (pages >= DB_SQLITE_WAL_CKPT)
		atomic_store(&s->ckpt_due, 1);
	return SQLITE_OK;
}

int
db_sqlite_writer_open(struct db *db, struct db **out)
{
	const char *path = sqlite3_db_filename(sq(db)->conn, "main");
	enum db_err code;
	char err[256];

	*out = NULL;
	if (path == NULL || path[0] == '\0')
		return -1;
	if (db_sqlite_open(out, path, &db->opts, &code, err, sizeof(err)) < 0) {
		log_warn("group commit: no connection of its own (%s): batches run on their "
		    "leader's", err);
		return -1;
	}
	(void)sqlite3_wal_hook(sq(*out)->conn, db_sqlite_wal_hook, *out);
	return 0;
}

int
db_sqlite_writer_fits(struct db *writer, struct db *db)
{
	const char *w = sqlite3_db_filename(sq(writer)->conn, "main");
	const char *d = sqlite3_db_filename(sq(db)->conn, "main");
	int moved = 0;

	if (w == NULL || d == NULL || strcmp(w, d) != 0)
		return 0;
	/* Opened while the file was read-only (a first write after a chmod), it would
	 * refuse every write for good: opened again once the file is writable. */
	if (db_sqlite_writable_again(sq(writer))) {
		log_info("sqlite %s: writable again; the group commit opens its connection "
		    "afresh", w);
		return 0;
	}
	return sqlite3_file_control(sq(writer)->conn, "main", SQLITE_FCNTL_HAS_MOVED,
	    &moved) == SQLITE_OK && !moved;
}

int
db_sqlite_checkpoint_due(struct db *writer)
{
	return atomic_exchange(&sq(writer)->ckpt_due, 0);
}

void
db_sqlite_checkpoint(struct db *db)
{
	int rc = sqlite3_wal_checkpoint_v2(sq(db)->conn, NULL, SQLITE_CHECKPOINT_PASSIVE, NULL,
	    NULL);

	if (rc != SQLITE_OK && rc != SQLITE_BUSY)
		log_warn("sqlite: checkpoint: %s", sqlite3_errmsg(sq(db)->conn));
}
