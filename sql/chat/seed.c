/*
 * seed.c: the deterministic seeder of the Starcord chat database (build/.../sql/chat-seed).
 *
 *   chat-seed [-p tiny|small|large] [-S SCHEMA_DIR] [-f] [-q] URL
 *
 * URL is "sqlite:PATH" or a PostgreSQL URL / conninfo.  The schema comes from
 * SCHEMA_DIR/schema.sqlite.sql or schema.pg.sql (default sql/chat): the part above its
 * "-- indexes" line runs before loading, the rest after.  A database that is there already
 * is refused unless -f (SQLite: a new file replaces it; PostgreSQL: the four tables are
 * dropped first).
 *
 * Sizes come from the preset (default tiny), then from the environment, which wins:
 * SEED_CHANNEL_COUNT and SEED_USER_COUNT (powers of two), SEED_MSG_COUNT, BENCH_SKEW
 * (0 <= alpha < 1, default 0.1).  The rows are a pure function of those four numbers,
 * computed with splitmix64 and an inverse-CDF Zipf approximation, exactly as the
 * benchmark's generator specifies them, so SQLite and PostgreSQL seeded with the same parameters hold the same rows:
 *
 *   channels  id 1 'starcord'; ids 2..C+1 named c_%08d 1..C
 *   users     1..U: nickname u_%08d, session_id s_%08d,
 *             current_channel_id = zipf_rank(id ^ 0x6fd8b0befdacc77a, C, alpha) (a raw id)
 *   channel_memberships  the current channel and 1+((cur-1+k*977) % C), k = 1..3
 *             (duplicates, possible only when C is tiny, are kept once)
 *   messages  g = 0..M-1, id g+1: channel zipf_rank(g ^ 0xa581c28479563caa, C, alpha),
 *             user 1+(mix64(g ^ 0xdda62d587212b38b) & (U-1)),
 *             content 'a' x (mix64(g ^ 0xffd9962d6f73449e) & 127),
 *             created_ts 1787155335-180d + ((g*7919) & 0xFFFFFF) * 180d / 16777215
 *
 * Channels, users and memberships are created at the start of the 180 days.  SQLite loads
 * in one transaction with prepared inserts and the journal off into PATH.seeding.PID, a
 * temporary file renamed over PATH only when complete (sql/seedfile.h: an interrupted
 * seed never leaves a half-written database at PATH; an existing PATH is refused unless
 * -f), then switches to WAL; PostgreSQL loads with COPY in one transaction (-f drops
 * the four tables first).  Long loads print their progress (rows, rate) every second.  Both build the indexes after loading and run ANALYZE.
 */
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include <libpq-fe.h>
#include <sqlite3.h>

#include "db.h"
#include "str.h"
#include "../seedfile.h"

#define SEED_TS_END	1787155335.0
#define SEED_SPAN	(180.0 * 86400.0)
#define SEED_TS_START	(SEED_TS_END - SEED_SPAN)
#define SEED_COPY_BUF	(1 << 20)

struct seed_params {
	int64_t channels;	/* C, a power of two */
	int64_t users;		/* U, a power of two */
	int64_t messages;	/* M */
	double alpha;		/* 0 <= alpha < 1 */
};

static const struct {
	const char *name;
	struct seed_params p;
} seed_presets[] = {
	{ "tiny", { 16, 64, 20000, 0.1 } },
	{ "small", { 4096, 8192, 36000000, 0.1 } },
	{ "large", { 262144, 524288, 360000000, 0.1 } },
};

static int seed_quiet;

static int64_t
seed_zipf_rank(uint64_t seed, int64_t count, double alpha)
{
	double u = (double)(seed_mix64(seed) >> 11) / 9007199254740992.0;
	double p = 1.0 - alpha;
	double r = pow(1.0 + u * (pow((double)count, p) - 1.0), 1.0 / p);

	if (r < 1.0)
		r = 1.0;
	if (r > (double)count)
		r = (double)count;
	return (int64_t)floor(r);
}

/* The rows, shared by both loaders. */
static int64_t
seed_user_channel(const struct seed_params *sp, int64_t uid)
{
	return seed_zipf_rank((uint64_t)uid ^ 0x6fd8b0befdacc77aULL, sp->channels, sp->alpha);
}

/* The user's memberships into ch[4]; returns how many (duplicates dropped). */
static int
seed_user_memberships(const struct seed_params *sp, int64_t uid, int64_t ch[4])
{
	int64_t cur = seed_user_channel(sp, uid), c;
	int n = 0, k, i, dup;

	ch[n++] = cur;
	for (k = 1; k <= 3; k++) {
		c = 1 + ((cur - 1 + k * 977) % sp->channels);
		for (dup = 0, i = 0; i < n; i++)
			dup |= ch[i] == c;
		if (!dup)
			ch[n++] = c;
	}
	return n;
}

struct seed_msg {
	int64_t id, channel, user;
	int len;
	double ts;
};

static void
seed_message(const struct seed_params *sp, int64_t g, struct seed_msg *m)
{
	uint64_t ug = (uint64_t)g;

	m->id = g + 1;
	m->channel = seed_zipf_rank(ug ^ 0xa581c28479563caaULL, sp->channels, sp->alpha);
	m->user = 1 + (int64_t)(seed_mix64(ug ^ 0xdda62d587212b38bULL) &
	    (uint64_t)(sp->users - 1));
	m->len = (int)(seed_mix64(ug ^ 0xffd9962d6f73449eULL) & 127);
	m->ts = SEED_TS_START + (double)((ug * 7919) & 0xFFFFFF) * SEED_SPAN / 16777215.0;
}

static const char seed_a128[] =
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa";

/* Reads SCHEMA_DIR/name whole and splits it at the "-- indexes" line.  Returns the
 * malloc'd text (caller frees) with *after pointing into it, or NULL. */
static char *
seed_schema(const char *dir, const char *name, char **after)
{
	char path[4096], *text = NULL, *mark;
	FILE *f = NULL;
	long len;
	int n;

	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		fprintf(stderr, "chat-seed: schema path too long\n");
		return NULL;
	}
	if ((f = fopen(path, "rb")) == NULL) {
		fprintf(stderr, "chat-seed: %s: %s\n", path, strerror(errno));
		return NULL;
	}
	if (fseek(f, 0, SEEK_END) != 0 || (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (text = malloc((size_t)len + 1)) == NULL ||
	    fread(text, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "chat-seed: cannot read %s\n", path);
		free(text);
		text = NULL;
		goto out;
	}
	text[len] = '\0';
	if ((mark = strstr(text, "\n-- indexes\n")) == NULL) {
		fprintf(stderr, "chat-seed: %s has no \"-- indexes\" line\n", path);
		free(text);
		text = NULL;
		goto out;
	}
	mark[1] = '\0';
	*after = mark + strlen("\n-- indexes\n");
out:
	fclose(f);
	return text;
}

/* ---- the load, on either back end ---- */

/* A COPY stream: rows are formatted into a buffer sent in 1 MiB pieces. */
struct seed_copy {
	PGconn *conn;
	char *buf;
	size_t len;
	int failed;
};

/* One load's connection and statements, the fields of its back end's only. */
struct seed_load {
	const char *name;	/* what the "already seeded" message names */
	sqlite3 *db;		/* SQLite: the connection and the four inserts */
	sqlite3_stmt *ch, *us, *mb, *ms;
	PGconn *conn;		/* PostgreSQL: the connection and its COPY stream */
	struct seed_copy cp;
};

/*
 * A back end: its schema file and the steps of a load, in the order seed_run() takes them.
 * Each step returns 0, or -1 said on stderr.  open connects to target; seeded tells
 * whether the channels table has rows; create begins the transaction with the schema
 * (force: the tables dropped first); channels, users (with their memberships) and
 * messages load the rows, ticking pr as they go; indexes runs the schema's part past its
 * "-- indexes" line and commits; analyze ends the load; close frees what open made,
 * whatever step failed.
 */
struct seed_back {
	const char *schema;
	int (*open)(struct seed_load *, const char *target);
	int (*seeded)(struct seed_load *, int *has);
	int (*create)(struct seed_load *, const char *schema, int force);
	int (*channels)(struct seed_load *, const struct seed_params *, struct seed_progress *pr);
	int (*users)(struct seed_load *, const struct seed_params *, struct seed_progress *pr);
	int (*messages)(struct seed_load *, const struct seed_params *, struct seed_progress *pr);
	int (*indexes)(struct seed_load *, const char *after);
	int (*analyze)(struct seed_load *);
	void (*close)(struct seed_load *);
};

/* ---- SQLite ---- */

static int
seed_sqlite_exec(sqlite3 *db, const char *sql)
{
	char *msg = NULL;

	if (sqlite3_exec(db, sql, NULL, NULL, &msg) != SQLITE_OK) {
		fprintf(stderr, "chat-seed: sqlite: %s\n", msg ? msg : sqlite3_errmsg(db));
		sqlite3_free(msg);
		return -1;
	}
	return 0;
}

static sqlite3_stmt *
seed_sqlite_prepare(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "chat-seed: sqlite: %s\n", sqlite3_errmsg(db));
		return NULL;
	}
	return st;
}

/* Steps an insert and resets it; 0 or -1. */
static int
seed_sqlite_step(sqlite3 *db, sqlite3_stmt *st)
{
	int rc = sqlite3_step(st);

	sqlite3_reset(st);
	if (rc != SQLITE_DONE) {
		fprintf(stderr, "chat-seed: sqlite insert: %s\n", sqlite3_errmsg(db));
		return -1;
	}
	return 0;
}

/* Opens the SQLite file path. */
static int
seed_sqlite_open(struct seed_load *ld, const char *path)
{
	ld->name = path;
	if (sqlite3_open(path, &ld->db) != SQLITE_OK) {
		fprintf(stderr, "chat-seed: %s: %s\n", path,
		    ld->db ? sqlite3_errmsg(ld->db) : "no memory");
		return -1;
	}
	sqlite3_busy_timeout(ld->db, 10000);
	return 0;
}

/* Whether the channels table has a row (no table: nothing seeded). */
static int
seed_sqlite_has_rows(struct seed_load *ld, int *has)
{
	sqlite3_stmt *st;
	int rc;

	*has = 0;
	st = NULL;
	rc = sqlite3_prepare_v2(ld->db, "SELECT 1 FROM channels LIMIT 1", -1, &st, NULL);
	if (rc != SQLITE_OK) {
		/* No table yet: nothing seeded. */
		sqlite3_finalize(st);
		return 0;
	}
	rc = sqlite3_step(st);
	*has = rc == SQLITE_ROW;
	sqlite3_finalize(st);
	return rc == SQLITE_ROW || rc == SQLITE_DONE ? 0 : -1;
}

/* The journal off, the tables made in a transaction and the four inserts prepared. */
static int
seed_sqlite_create(struct seed_load *ld, const char *schema, int force)
{
	sqlite3 *db = ld->db;

	/*
	 * A fresh load needs no rollback journal: a crash leaves a file to delete.  The
	 * workers switch the file to WAL, but it is done here too so that the first of them
	 * does not have to.
	 */
	if (seed_sqlite_exec(db, "PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; "
	    "PRAGMA cache_size=-262144; PRAGMA temp_store=MEMORY; PRAGMA foreign_keys=OFF") < 0)
		return -1;
	if (force && seed_sqlite_exec(db, "DROP TABLE IF EXISTS messages; "
	    "DROP TABLE IF EXISTS channel_memberships; DROP TABLE IF EXISTS users; "
	    "DROP TABLE IF EXISTS channels") < 0)
		return -1;
	if (seed_sqlite_exec(db, "BEGIN") < 0 || seed_sqlite_exec(db, schema) < 0)
		return -1;
	if ((ld->ch = seed_sqlite_prepare(db, "INSERT INTO channels(id, name, created_ts) "
	    "VALUES (?1, ?2, ?3)")) == NULL ||
	    (ld->us = seed_sqlite_prepare(db, "INSERT INTO users(id, nickname, session_id, "
	    "current_channel_id, created_ts) VALUES (?1, ?2, ?3, ?4, ?5)")) == NULL ||
	    (ld->mb = seed_sqlite_prepare(db, "INSERT INTO channel_memberships(user_id, "
	    "channel_id, created_ts) VALUES (?1, ?2, ?3)")) == NULL ||
	    (ld->ms = seed_sqlite_prepare(db, "INSERT INTO messages(id, channel_id, user_id, "
	    "content, created_ts) VALUES (?1, ?2, ?3, ?4, ?5)")) == NULL)
		return -1;
	return 0;
}

/* The channels: starcord, then c_00000001 and on. */
static int
seed_sqlite_channels(struct seed_load *ld, const struct seed_params *sp,
    struct seed_progress *pr)
{
	char name[32];
	int64_t i;

	sqlite3_bind_int64(ld->ch, 1, 1);
	sqlite3_bind_text(ld->ch, 2, "starcord", -1, SQLITE_STATIC);
	sqlite3_bind_double(ld->ch, 3, SEED_TS_START);
	if (seed_sqlite_step(ld->db, ld->ch) < 0)
		return -1;
	for (i = 1; i <= sp->channels; i++) {
		snprintf(name, sizeof(name), "c_%08lld", (long long)i);
		sqlite3_bind_int64(ld->ch, 1, i + 1);
		sqlite3_bind_text(ld->ch, 2, name, -1, SQLITE_TRANSIENT);
		if (seed_sqlite_step(ld->db, ld->ch) < 0)
			return -1;
		seed_progress_tick(pr, i);
	}
	return 0;
}

/* The users, each followed by its memberships. */
static int
seed_sqlite_users(struct seed_load *ld, const struct seed_params *sp,
    struct seed_progress *pr)
{
	char name[32];
	int64_t i, mch[4];
	int k, n;

	for (i = 1; i <= sp->users; i++) {
		snprintf(name, sizeof(name), "u_%08lld", (long long)i);
		sqlite3_bind_int64(ld->us, 1, i);
		sqlite3_bind_text(ld->us, 2, name, -1, SQLITE_TRANSIENT);
		name[0] = 's';
		sqlite3_bind_text(ld->us, 3, name, -1, SQLITE_TRANSIENT);
		sqlite3_bind_int64(ld->us, 4, seed_user_channel(sp, i));
		sqlite3_bind_double(ld->us, 5, SEED_TS_START);
		if (seed_sqlite_step(ld->db, ld->us) < 0)
			return -1;
		n = seed_user_memberships(sp, i, mch);
		for (k = 0; k < n; k++) {
			sqlite3_bind_int64(ld->mb, 1, i);
			sqlite3_bind_int64(ld->mb, 2, mch[k]);
			sqlite3_bind_double(ld->mb, 3, SEED_TS_START);
			if (seed_sqlite_step(ld->db, ld->mb) < 0)
				return -1;
		}
		seed_progress_tick(pr, i);
	}
	return 0;
}

/* The messages. */
static int
seed_sqlite_messages(struct seed_load *ld, const struct seed_params *sp,
    struct seed_progress *pr)
{
	struct seed_msg m;
	int64_t i;

	for (i = 0; i < sp->messages; i++) {
		seed_message(sp, i, &m);
		sqlite3_bind_int64(ld->ms, 1, m.id);
		sqlite3_bind_int64(ld->ms, 2, m.channel);
		sqlite3_bind_int64(ld->ms, 3, m.user);
		sqlite3_bind_text(ld->ms, 4, seed_a128, m.len, SQLITE_STATIC);
		sqlite3_bind_double(ld->ms, 5, m.ts);
		if (seed_sqlite_step(ld->db, ld->ms) < 0)
			return -1;
		seed_progress_tick(pr, i + 1);
	}
	return 0;
}

/* The indexes, then the commit. */
static int
seed_sqlite_indexes(struct seed_load *ld, const char *after)
{
	return seed_sqlite_exec(ld->db, after) < 0 || seed_sqlite_exec(ld->db, "COMMIT") < 0 ?
	    -1 : 0;
}

/* ANALYZE, and the file switched to WAL. */
static int
seed_sqlite_analyze(struct seed_load *ld)
{
	return seed_sqlite_exec(ld->db, "ANALYZE; PRAGMA journal_mode=WAL");
}

/* The inserts finalized and the file closed. */
static void
seed_sqlite_close(struct seed_load *ld)
{
	sqlite3_finalize(ld->ch);
	sqlite3_finalize(ld->us);
	sqlite3_finalize(ld->mb);
	sqlite3_finalize(ld->ms);
	sqlite3_close(ld->db);
}

static const struct seed_back seed_sqlite = {
	"schema.sqlite.sql", seed_sqlite_open, seed_sqlite_has_rows, seed_sqlite_create,
	seed_sqlite_channels, seed_sqlite_users, seed_sqlite_messages, seed_sqlite_indexes,
	seed_sqlite_analyze, seed_sqlite_close,
};

/* ---- PostgreSQL ---- */

static int
seed_pg_exec(PGconn *c, const char *sql)
{
	PGresult *r = PQexec(c, sql);
	ExecStatusType st = PQresultStatus(r);
	int ret = 0;

	if (st != PGRES_COMMAND_OK && st != PGRES_TUPLES_OK) {
		fprintf(stderr, "chat-seed: postgresql: %s", PQerrorMessage(c));
		ret = -1;
	}
	PQclear(r);
	return ret;
}

static void
seed_copy_flush(struct seed_copy *cp)
{
	if (cp->len > 0 && !cp->failed &&
	    PQputCopyData(cp->conn, cp->buf, (int)cp->len) != 1) {
		fprintf(stderr, "chat-seed: COPY: %s", PQerrorMessage(cp->conn));
		cp->failed = 1;
	}
	cp->len = 0;
}

/* Makes room for n bytes and returns where they go. */
static char *
seed_copy_room(struct seed_copy *cp, size_t n)
{
	if (cp->len + n > SEED_COPY_BUF)
		seed_copy_flush(cp);
	return cp->buf + cp->len;
}

static void
seed_copy_row(struct seed_copy *cp, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

static void
seed_copy_row(struct seed_copy *cp, const char *fmt, ...)
{
	va_list ap;
	char *p = seed_copy_room(cp, 512);
	int n;

	va_start(ap, fmt);
	n = vsnprintf(p, 512, fmt, ap);
	va_end(ap);
	if (n < 0 || n >= 512) {
		fprintf(stderr, "chat-seed: COPY row too long\n");
		cp->failed = 1;
		return;
	}
	cp->len += (size_t)n;
}

static int
seed_copy_begin(struct seed_copy *cp, const char *sql)
{
	PGresult *r = PQexec(cp->conn, sql);
	int ok = PQresultStatus(r) == PGRES_COPY_IN;

	if (!ok)
		fprintf(stderr, "chat-seed: %s: %s", sql, PQerrorMessage(cp->conn));
	PQclear(r);
	cp->len = 0;
	cp->failed = !ok;
	return ok ? 0 : -1;
}

static int
seed_copy_end(struct seed_copy *cp)
{
	PGresult *r;
	int ok;

	seed_copy_flush(cp);
	if (PQputCopyEnd(cp->conn, cp->failed ? "seeding failed" : NULL) != 1) {
		fprintf(stderr, "chat-seed: COPY end: %s", PQerrorMessage(cp->conn));
		return -1;
	}
	r = PQgetResult(cp->conn);
	ok = PQresultStatus(r) == PGRES_COMMAND_OK;
	if (!ok)
		fprintf(stderr, "chat-seed: COPY: %s", PQerrorMessage(cp->conn));
	PQclear(r);
	while ((r = PQgetResult(cp->conn)) != NULL)
		PQclear(r);
	return ok && !cp->failed ? 0 : -1;
}

/* Connects to the conninfo or URL url, with the COPY stream's buffer. */
static int
seed_pg_open(struct seed_load *ld, const char *url)
{
	ld->name = "the database";
	if ((ld->cp.buf = malloc(SEED_COPY_BUF)) == NULL)
		return -1;
	ld->conn = PQconnectdb(url);
	if (PQstatus(ld->conn) != CONNECTION_OK) {
		fprintf(stderr, "chat-seed: cannot connect: %s", PQerrorMessage(ld->conn));
		return -1;
	}
	ld->cp.conn = ld->conn;
	return seed_pg_exec(ld->conn, "SET client_min_messages=warning");
}

/* Whether the channels table has a row (no table: nothing seeded). */
static int
seed_pg_seeded(struct seed_load *ld, int *has)
{
	PGresult *r = PQexec(ld->conn, "SELECT 1 FROM pg_tables WHERE tablename='channels' "
	    "AND schemaname=current_schema() AND EXISTS (SELECT 1 FROM channels)");

	/* No table: the EXISTS subquery failed to plan. */
	*has = PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) > 0;
	PQclear(r);
	return 0;
}

/* A transaction begun, the tables dropped with force, and the schema made. */
static int
seed_pg_create(struct seed_load *ld, const char *schema, int force)
{
	if (seed_pg_exec(ld->conn, "BEGIN") < 0)
		return -1;
	if (force && seed_pg_exec(ld->conn, "DROP TABLE IF EXISTS messages, "
	    "channel_memberships, users, channels CASCADE") < 0)
		return -1;
	return seed_pg_exec(ld->conn, schema);
}

/* The channels, one COPY: starcord, then c_00000001 and on. */
static int
seed_pg_channels(struct seed_load *ld, const struct seed_params *sp,
    struct seed_progress *pr)
{
	int64_t i;

	(void)pr;	/* one COPY of short rows: no progress to tell */
	if (seed_copy_begin(&ld->cp, "COPY channels(id, name, created_ts) FROM STDIN") < 0)
		return -1;
	seed_copy_row(&ld->cp, "1\tstarcord\t%.17g\n", SEED_TS_START);
	for (i = 1; i <= sp->channels; i++)
		seed_copy_row(&ld->cp, "%lld\tc_%08lld\t%.17g\n", (long long)(i + 1),
		    (long long)i, SEED_TS_START);
	return seed_copy_end(&ld->cp);
}

/* The users, one COPY, then their memberships, another. */
static int
seed_pg_users(struct seed_load *ld, const struct seed_params *sp, struct seed_progress *pr)
{
	int64_t i, mch[4];
	int k, n;

	if (seed_copy_begin(&ld->cp, "COPY users(id, nickname, session_id, current_channel_id, "
	    "created_ts) FROM STDIN") < 0)
		return -1;
	for (i = 1; i <= sp->users; i++) {
		seed_copy_row(&ld->cp, "%lld\tu_%08lld\ts_%08lld\t%lld\t%.17g\n", (long long)i,
		    (long long)i, (long long)i, (long long)seed_user_channel(sp, i),
		    SEED_TS_START);
		seed_progress_tick(pr, i);
	}
	if (seed_copy_end(&ld->cp) < 0)
		return -1;
	if (seed_copy_begin(&ld->cp, "COPY channel_memberships(user_id, channel_id, "
	    "created_ts) FROM STDIN") < 0)
		return -1;
	for (i = 1; i <= sp->users; i++) {
		n = seed_user_memberships(sp, i, mch);
		for (k = 0; k < n; k++)
			seed_copy_row(&ld->cp, "%lld\t%lld\t%.17g\n", (long long)i,
			    (long long)mch[k], SEED_TS_START);
	}
	return seed_copy_end(&ld->cp);
}

/* The messages, one COPY. */
static int
seed_pg_messages(struct seed_load *ld, const struct seed_params *sp,
    struct seed_progress *pr)
{
	struct seed_copy *cp = &ld->cp;
	struct seed_msg m;
	int64_t i;
	char *p;

	if (seed_copy_begin(cp, "COPY messages(id, channel_id, user_id, content, created_ts) "
	    "FROM STDIN") < 0)
		return -1;
	for (i = 0; i < sp->messages && !cp->failed; i++) {
		seed_message(sp, i, &m);
		seed_copy_row(cp, "%lld\t%lld\t%lld\t", (long long)m.id, (long long)m.channel,
		    (long long)m.user);
		p = seed_copy_room(cp, 160);
		memcpy(p, seed_a128, (size_t)m.len);
		cp->len += (size_t)m.len;
		seed_copy_row(cp, "\t%.17g\n", m.ts);
		seed_progress_tick(pr, i + 1);
	}
	return seed_copy_end(cp);
}

/* The indexes, the serial sequences set past the seeded ids, then the commit. */
static int
seed_pg_indexes(struct seed_load *ld, const char *after)
{
	PGconn *c = ld->conn;

	if (seed_pg_exec(c, after) < 0 ||
	    seed_pg_exec(c, "SELECT setval(pg_get_serial_sequence('channels', 'id'), "
	    "(SELECT max(id) FROM channels))") < 0 ||
	    seed_pg_exec(c, "SELECT setval(pg_get_serial_sequence('users', 'id'), "
	    "(SELECT max(id) FROM users))") < 0 ||
	    seed_pg_exec(c, "SELECT setval(pg_get_serial_sequence('messages', 'id'), "
	    "greatest((SELECT max(id) FROM messages), 1))") < 0 ||
	    seed_pg_exec(c, "COMMIT") < 0)
		return -1;
	return 0;
}

/* ANALYZE. */
static int
seed_pg_analyze(struct seed_load *ld)
{
	return seed_pg_exec(ld->conn, "ANALYZE");
}

/* The connection closed and the COPY buffer freed. */
static void
seed_pg_close(struct seed_load *ld)
{
	PQfinish(ld->conn);
	free(ld->cp.buf);
}

static const struct seed_back seed_pg = {
	"schema.pg.sql", seed_pg_open, seed_pg_seeded, seed_pg_create, seed_pg_channels,
	seed_pg_users, seed_pg_messages, seed_pg_indexes, seed_pg_analyze, seed_pg_close,
};

/* ---- the load ---- */

/*
 * Seeds target (a SQLite file's path, or a PostgreSQL URL) through back end bk, with the
 * schema from schema_dir; a database already seeded is refused unless force.  Each phase
 * tells its progress.  0, or -1 said on stderr.
 */
static int
seed_run(const struct seed_back *bk, const char *target, const char *schema_dir,
    const struct seed_params *sp, int force)
{
	struct seed_load ld;
	struct seed_progress pr;
	char *schema, *after = NULL;
	int ret = -1, has;

	memset(&ld, 0, sizeof(ld));
	if ((schema = seed_schema(schema_dir, bk->schema, &after)) == NULL)
		goto out;
	if (bk->open(&ld, target) < 0 || bk->seeded(&ld, &has) < 0)
		goto out;
	if (has && !force) {
		fprintf(stderr, "chat-seed: %s is already seeded (use -f to replace it)\n", ld.name);
		goto out;
	}
	if (bk->create(&ld, schema, force) < 0)
		goto out;
	seed_progress_start(&pr, "chat-seed", "channels", sp->channels + 1, seed_quiet);
	if (bk->channels(&ld, sp, &pr) < 0)
		goto out;
	seed_progress_end(&pr, sp->channels + 1);
	seed_progress_start(&pr, "chat-seed", "users and memberships", sp->users, seed_quiet);
	if (bk->users(&ld, sp, &pr) < 0)
		goto out;
	seed_progress_end(&pr, sp->users);
	seed_progress_start(&pr, "chat-seed", "messages", sp->messages, seed_quiet);
	if (bk->messages(&ld, sp, &pr) < 0)
		goto out;
	seed_progress_end(&pr, sp->messages);
	seed_progress_start(&pr, "chat-seed", "indexes", 0, seed_quiet);
	if (bk->indexes(&ld, after) < 0)
		goto out;
	seed_progress_end(&pr, 0);
	if (bk->analyze(&ld) < 0)
		goto out;
	ret = 0;
out:
	bk->close(&ld);
	free(schema);
	return ret;
}

/* ---- parameters ---- */

static int
seed_env_int(const char *name, int64_t *v, int pow2)
{
	const char *s = getenv(name);
	int64_t n;

	if (s == NULL || *s == '\0')
		return 0;
	if (str_to_int(s, strlen(s), 1, INT64_MAX, &n) == -1 ||
	    (pow2 && (n & (n - 1)) != 0)) {
		fprintf(stderr, "chat-seed: %s=%s is not a positive integer%s\n", name, s,
		    pow2 ? " power of two" : "");
		return -1;
	}
	*v = n;
	return 0;
}

static int
seed_env_params(struct seed_params *sp)
{
	const char *s;
	char *end;
	double a;

	if (seed_env_int("SEED_CHANNEL_COUNT", &sp->channels, 1) < 0 ||
	    seed_env_int("SEED_USER_COUNT", &sp->users, 1) < 0 ||
	    seed_env_int("SEED_MSG_COUNT", &sp->messages, 0) < 0)
		return -1;
	if ((s = getenv("BENCH_SKEW")) != NULL && *s != '\0') {
		errno = 0;
		a = strtod(s, &end);
		if (errno != 0 || *end != '\0' || !(a >= 0.0 && a < 1.0)) {
			fprintf(stderr, "chat-seed: BENCH_SKEW=%s is not in [0, 1)\n", s);
			return -1;
		}
		sp->alpha = a;
	}
	return 0;
}

static void
seed_usage(void)
{
	fprintf(stderr, "usage: chat-seed [-p tiny|small|large] [-S schema_dir] [-f] [-q] "
	    "sqlite:PATH|POSTGRESQL_URL\n");
}

int
main(int argc, char **argv)
{
	const char *preset = getenv("SEED_PRESET"), *schema_dir = "sql/chat", *url, *path;
	enum db_backend be;
	struct seed_params sp;
	struct seed_file f;
	int c, force = 0, rc;
	size_t i;
	double t0;

	/* The database holds the users' messages: never world-readable (SQLite gives its
	 * -wal and -shm files the database's mode). */
	(void)umask(027);
	while ((c = getopt(argc, argv, "p:S:fq")) != -1) {
		switch (c) {
		case 'p':
			preset = optarg;
			break;
		case 'S':
			schema_dir = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'q':
			seed_quiet = 1;
			break;
		default:
			seed_usage();
			return 2;
		}
	}
	if (optind != argc - 1) {
		seed_usage();
		return 2;
	}
	url = argv[optind];
	if (preset == NULL || *preset == '\0')
		preset = "tiny";
	for (i = 0; i < sizeof(seed_presets) / sizeof(seed_presets[0]); i++)
		if (strcmp(preset, seed_presets[i].name) == 0)
			break;
	if (i == sizeof(seed_presets) / sizeof(seed_presets[0])) {
		fprintf(stderr, "chat-seed: unknown preset \"%s\" (tiny, small, large)\n", preset);
		return 2;
	}
	sp = seed_presets[i].p;
	if (seed_env_params(&sp) < 0)
		return 2;
	if (!seed_quiet)
		fprintf(stderr, "chat-seed: %lld channels, %lld users, %lld messages, alpha %g\n",
		    (long long)sp.channels, (long long)sp.users, (long long)sp.messages,
		    sp.alpha);
	t0 = seed_now();
	if (db_url_parse(url, &be, &path) == -1) {
		fprintf(stderr, "chat-seed: %s is not a database URL (sqlite:PATH or a "
		    "PostgreSQL URL or conninfo)\n", url);
		return 2;
	}
	if (be == DB_SQLITE) {
		/* A fresh temporary file, renamed over PATH once complete (sql/seedfile.h). */
		if (seed_file_begin(&f, "chat-seed", path, force) < 0)
			return 1;
		rc = seed_run(&seed_sqlite, f.tmp, schema_dir, &sp, 0);
		if (rc == 0)
			rc = seed_file_commit(&f, "chat-seed");
		else
			seed_file_abort(&f);
	} else {
		rc = seed_run(&seed_pg, path, schema_dir, &sp, force);
	}
	if (rc == 0 && !seed_quiet)
		fprintf(stderr, "chat-seed: done in %.2f s\n", seed_now() - t0);
	return rc == 0 ? 0 : 1;
}
