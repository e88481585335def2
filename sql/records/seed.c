/*
 * seed.c: the deterministic seeder of the records API's demo database
 * (build/.../sql/records-seed).
 *
 *   records-seed [-u USERS] [-p POSTS] [-c COMMENTS] [-S DIR] [-f] [-q] URL
 *   records-seed [-q] -k URL
 *
 * URL is "sqlite:PATH" or a PostgreSQL URL / conninfo.  DIR/collections.sql (default
 * sql/records) declares the collections; each collection's table is made from its
 * declaration (coll_ddl(), the same declaration on both back ends).  An SQLite database is
 * seeded into PATH.seeding.PID, renamed over PATH once complete (sql/seedfile.h), and an
 * existing PATH is refused unless -f; a PostgreSQL database that already has _collections
 * is refused unless -f (drop the tables first).
 *
 * The rows are a pure function of the three counts (default 300 users, 5,000 posts,
 * 15,000 comments), computed with splitmix64, so SQLite and PostgreSQL seeded alike hold
 * the same records:
 *
 *   users     n = 1..U: id rid(1, n), email user%04d@example.com, name "User n",
 *             emailVisibility when n % 4 == 0, verified, created 2025-01-01 + n minutes
 *   _superusers  one: admin@example.com
 *   posts     n = 1..P: title "Post n", a body of 8..40 words, status published (60%),
 *             draft (25%) or archived (15%), author a uniform user, 0..3 tags,
 *             created 2025-01-01 + 37 n seconds
 *   comments  n = 1..C: a uniform post, a uniform author, text of 3..20 words
 *
 * Every seeded user (and the superuser) has the password "password123" (bcrypt, cost 10,
 * one fixed salt so that the file is reproducible: a demo, not a secret); each has its own
 * tokenKey.  Everything loads in one transaction, with the kept counts of every
 * collection (apps/records/coll.h) made once the rows are in, then ANALYZE.  -k makes
 * (or makes again) the kept counts of an existing database and changes nothing else.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include <crypt.h>

#include "buf.h"
#include "db.h"
#include "records/coll.h"
#include "records/filter.h"
#include "str.h"
#include "../seedfile.h"

#define SEED_T0		1735689600	/* 2025-01-01 00:00:00 UTC */
#define SEED_PASSWORD	"password123"

static int seed_quiet;

static const char *const seed_words[] = {
	"sluice", "river", "stone", "quiet", "garden", "signal", "window", "harbor", "amber",
	"copper", "meadow", "lantern", "orbit", "velvet", "cedar", "marble", "echo", "timber",
	"falcon", "ember", "willow", "canyon", "pixel", "kernel", "thread", "socket", "record",
	"filter", "expand", "token", "Zebra", "Quartz",
};

/* A record id: 15 characters of [a-z0-9] from (kind, n). */
static void
seed_id(char out[COLL_ID_LEN + 1], uint64_t kind, uint64_t n)
{
	static const char alpha[] = "abcdefghijklmnopqrstuvwxyz0123456789";
	uint64_t a = seed_mix64(kind << 40 ^ n), b = seed_mix64(a ^ 0x5bd1e995);
	int i;

	for (i = 0; i < COLL_ID_LEN; i++) {
		uint64_t *v = i < 8 ? &a : &b;

		out[i] = alpha[*v % 36];
		*v /= 36;
	}
	out[COLL_ID_LEN] = '\0';
}

/* n words chosen by seed into b. */
static void
seed_text(struct buf *b, uint64_t seed, int n)
{
	int i;

	buf_reset(b, 1 << 16);
	for (i = 0; i < n; i++) {
		uint64_t r = seed_mix64(seed + (uint64_t)i);

		if (i > 0)
			buf_putc(b, ' ');
		buf_puts(b, seed_words[r % (sizeof(seed_words) / sizeof(seed_words[0]))]);
	}
}

static void
seed_date(char out[25], int64_t t)
{
	filter_date(out, (time_t)t, (int)(t % 1000));
}

static int
seed_fail(struct db *db, const char *what)
{
	fprintf(stderr, "records-seed: %s: %s\n", what, db_errmsg(db));
	return -1;
}

/* Runs a statement to its end; 0 or -1. */
static int
seed_run(struct db *db, struct db_stmt *st)
{
	int rc;

	while ((rc = db_step(st)) == DB_ROW)
		;
	return rc == DB_DONE ? 0 : seed_fail(db, "insert");
}

static int
seed_users(struct db *db, const char *table, uint64_t kind, int64_t count, const char *hash)
{
	char sql[512], id[COLL_ID_LEN + 1], key[51], email[64], name[64], date[25];
	struct db_stmt *st;
	int64_t n;
	int i, users = strcmp(table, "users") == 0;

	(void)snprintf(sql, sizeof(sql), "INSERT INTO \"%s\" (\"id\", \"email\", "
	    "\"emailVisibility\", \"verified\", \"password\", \"tokenKey\", \"created\", "
	    "\"updated\"%s) VALUES ($1, $2, $3, $4, $5, $6, $7, $7%s)", table,
	    users ? ", \"name\"" : "", users ? ", $8" : "");
	for (n = 1; n <= count; n++) {
		if ((st = db_prepare(db, sql)) == NULL)
			return seed_fail(db, "prepare");
		seed_id(id, kind, (uint64_t)n);
		for (i = 0; i < 50; i++)
			key[i] = "abcdefghijklmnopqrstuvwxyz0123456789"[seed_mix64(kind * 7919 +
			    (uint64_t)n * 64 + (uint64_t)i) % 36];
		key[50] = '\0';
		if (users)
			(void)snprintf(email, sizeof(email), "user%04lld@example.com", (long long)n);
		else
			(void)snprintf(email, sizeof(email), "admin@example.com");
		(void)snprintf(name, sizeof(name), "User %lld", (long long)n);
		seed_date(date, SEED_T0 + n * 60);
		db_bind_text(st, 1, id, strlen(id));
		db_bind_text(st, 2, email, strlen(email));
		db_bind_int(st, 3, users ? n % 4 == 0 : 0);
		db_bind_int(st, 4, 1);
		db_bind_text(st, 5, hash, strlen(hash));
		db_bind_text(st, 6, key, 50);
		db_bind_text(st, 7, date, strlen(date));
		if (users)
			db_bind_text(st, 8, name, strlen(name));
		if (seed_run(db, st) < 0)
			return -1;
	}
	return 0;
}

static int
seed_posts(struct db *db, int64_t users, int64_t posts)
{
	static const char *const tags[] = { "news", "tech", "life", "travel", "food", "music" };
	static const char sql[] = "INSERT INTO \"posts\" (\"id\", \"title\", \"body\", \"status\", "
	    "\"author\", \"tags\", \"created\", \"updated\") VALUES ($1, $2, $3, $4, $5, $6, $7, $7)";
	char id[COLL_ID_LEN + 1], author[COLL_ID_LEN + 1], title[64], date[25];
	struct buf body, tagb;
	struct db_stmt *st;
	int64_t n;
	int rc = -1;

	buf_init(&body, 1 << 16);
	buf_init(&tagb, 1 << 10);
	for (n = 1; n <= posts; n++) {
		uint64_t r = seed_mix64(0xb0d1e5ULL ^ (uint64_t)n);
		int k, ntags = (int)(r >> 20 & 3);
		const char *status = r % 20 < 12 ? "published" : r % 20 < 17 ? "draft" : "archived";

		if ((st = db_prepare(db, sql)) == NULL) {
			seed_fail(db, "prepare");
			goto out;
		}
		seed_id(id, 2, (uint64_t)n);
		seed_id(author, 1, 1 + (r >> 8) % (uint64_t)users);
		(void)snprintf(title, sizeof(title), "Post %lld", (long long)n);
		seed_text(&body, r, 8 + (int)((r >> 32) % 33));
		buf_reset(&tagb, 1 << 10);
		buf_putc(&tagb, '[');
		for (k = 0; k < ntags; k++)
			buf_printf(&tagb, "%s\"%s\"", k ? "," : "", tags[(r >> (24 + 3 * k)) % 6 == 0 ?
			    (size_t)k : (size_t)((r >> (24 + 3 * k)) % 6)]);
		buf_putc(&tagb, ']');
		seed_date(date, SEED_T0 + n * 37);
		db_bind_text(st, 1, id, strlen(id));
		db_bind_text(st, 2, title, strlen(title));
		db_bind_text(st, 3, body.data, body.len);
		db_bind_text(st, 4, status, strlen(status));
		db_bind_text(st, 5, author, strlen(author));
		db_bind_text(st, 6, tagb.data, tagb.len);
		db_bind_text(st, 7, date, strlen(date));
		if (seed_run(db, st) < 0)
			goto out;
	}
	rc = 0;
out:
	buf_free(&body);
	buf_free(&tagb);
	return rc;
}

static int
seed_comments(struct db *db, int64_t users, int64_t posts, int64_t comments)
{
	static const char sql[] = "INSERT INTO \"comments\" (\"id\", \"post\", \"author\", "
	    "\"text\", \"created\") VALUES ($1, $2, $3, $4, $5)";
	char id[COLL_ID_LEN + 1], post[COLL_ID_LEN + 1], author[COLL_ID_LEN + 1], date[25];
	struct buf text;
	struct db_stmt *st;
	int64_t n;
	int rc = -1;

	buf_init(&text, 1 << 16);
	for (n = 1; n <= comments; n++) {
		uint64_t r = seed_mix64(0xc033e7ULL ^ (uint64_t)n);

		if ((st = db_prepare(db, sql)) == NULL) {
			seed_fail(db, "prepare");
			goto out;
		}
		seed_id(id, 3, (uint64_t)n);
		seed_id(post, 2, 1 + r % (uint64_t)posts);
		seed_id(author, 1, 1 + (r >> 24) % (uint64_t)users);
		seed_text(&text, r, 3 + (int)(r >> 48) % 18);
		seed_date(date, SEED_T0 + 86400 + n * 53);
		db_bind_text(st, 1, id, strlen(id));
		db_bind_text(st, 2, post, strlen(post));
		db_bind_text(st, 3, author, strlen(author));
		db_bind_text(st, 4, text.data, text.len);
		db_bind_text(st, 5, date, strlen(date));
		if (seed_run(db, st) < 0)
			goto out;
	}
	rc = 0;
out:
	buf_free(&text);
	return rc;
}

static void
seed_usage(void)
{
	fprintf(stderr, "usage: records-seed [-u USERS] [-p POSTS] [-c COMMENTS] [-S DIR] [-f] "
	    "[-q] URL\n       records-seed -k URL\n");
}

/*
 * -k: the kept counts of every collection of an existing database (apps/records/coll.h),
 * counted anew with their triggers made again, in one transaction: a database seeded
 * before the counts existed, or a collection added by hand.  0, or 1.
 */
static int
seed_keep_counts(const char *url)
{
	struct colls cs = { 0 };
	struct db *db = NULL;
	struct buf ddl;
	char err[256];
	size_t i;
	int rc = 1;

	buf_init(&ddl, 1 << 20);
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "records-seed: %s\n", err);
		goto out;
	}
	if (db_begin(db, DB_TXN_WRITE) < 0 || coll_counts_table(db_backend(db), &ddl) < 0 ||
	    db_exec(db, ddl.data) < 0) {
		seed_fail(db, "_counts");
		goto out;
	}
	if (colls_load(&cs, db, err, sizeof(err)) < 0) {
		fprintf(stderr, "records-seed: %s\n", err);
		goto out;
	}
	buf_reset(&ddl, 0);
	for (i = 0; i < cs.n; i++)
		if (coll_counts_ddl(&cs.c[i], db_backend(db), &ddl) < 0)
			goto out;
	if (db_exec(db, ddl.data) < 0 || db_commit(db) < 0) {
		seed_fail(db, "kept counts");
		goto out;
	}
	if (!seed_quiet)
		printf("records-seed: counts kept for %zu collections\n", cs.n);
	rc = 0;
out:
	colls_free(&cs);
	buf_free(&ddl);
	db_close(db);
	return rc;
}

int
main(int argc, char **argv)
{
	const char *dir = "sql/records";
	int64_t users = 300, posts = 5000, comments = 15000;
	char path[4096], err[256], hash[128], setting[CRYPT_GENSALT_OUTPUT_SIZE];
	char tmpurl[SEED_FILE_PATH_MAX + 64];
	struct seed_file f;
	enum db_backend be;
	const char *url, *target;
	struct crypt_data *cd = NULL;
	struct colls cs = { 0 };
	struct db *db = NULL;
	struct buf ddl, decl;
	const char *h;
	int c, n, force = 0, keep = 0, rc = 1;
	size_t i;

	/* The database holds the users' password hashes: never world-readable (SQLite gives
	 * its -wal and -shm files the database's mode). */
	(void)umask(027);
	f.tmp[0] = '\0';	/* nothing to remove at out: until seed_file_begin() */
	while ((c = getopt(argc, argv, "u:p:c:S:fkq")) != -1) {
		int64_t *dst = c == 'u' ? &users : c == 'p' ? &posts : &comments;

		switch (c) {
		case 'u':
		case 'p':
		case 'c':
			if (str_to_int(optarg, strlen(optarg), 1, 100000000, dst) < 0) {
				seed_usage();
				return 2;
			}
			break;
		case 'S':
			dir = optarg;
			break;
		case 'f':
			force = 1;
			break;
		case 'k':
			keep = 1;
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
	if (keep)
		return seed_keep_counts(argv[optind]);
	buf_init(&ddl, 1 << 20);
	buf_init(&decl, 1 << 20);
	n = snprintf(path, sizeof(path), "%s/collections.sql", dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		fprintf(stderr, "records-seed: %s: path too long\n", dir);
		goto out;
	}
	if (seed_read_file("records-seed", path, &decl) < 0)
		goto out;
	url = argv[optind];
	if (db_url_parse(url, &be, &target) == 0 && be == DB_SQLITE) {
		/* A fresh temporary file, renamed over PATH once complete (sql/seedfile.h). */
		if (seed_file_begin(&f, "records-seed", target, force) < 0)
			goto out;
		n = snprintf(tmpurl, sizeof(tmpurl), "sqlite:%s", f.tmp);
		if (n < 0 || (size_t)n >= sizeof(tmpurl)) {
			fprintf(stderr, "records-seed: database path too long\n");
			goto out;
		}
		url = tmpurl;
	}
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "records-seed: %s\n", err);
		goto out;
	}
	if (force && db_exec(db, "DROP TABLE IF EXISTS comments; DROP TABLE IF EXISTS posts; "
	    "DROP TABLE IF EXISTS users; DROP TABLE IF EXISTS _superusers; "
	    "DROP TABLE IF EXISTS _collections; DROP TABLE IF EXISTS _counts") < 0) {
		seed_fail(db, "drop");
		goto out;
	}
	/* The one bcrypt hash every seeded account shares (a fixed salt: reproducible). */
	if ((cd = calloc(1, sizeof(*cd))) == NULL ||
	    crypt_gensalt_rn("$2b$", 10, "sluice-records-1", 16, setting, sizeof(setting)) ==
	    NULL || (h = crypt_rn(SEED_PASSWORD, setting, cd, sizeof(*cd))) == NULL ||
	    h[0] != '$' || strlen(h) >= sizeof(hash)) {
		fprintf(stderr, "records-seed: bcrypt failed\n");
		goto out;
	}
	memcpy(hash, h, strlen(h) + 1);
	if (db_begin(db, DB_TXN_WRITE) < 0 || db_exec(db, decl.data) < 0) {
		seed_fail(db, force ? "collections.sql" :
		    "collections.sql (an existing database needs -f)");
		goto out;
	}
	if (colls_load(&cs, db, err, sizeof(err)) < 0) {
		fprintf(stderr, "records-seed: %s\n", err);
		goto out;
	}
	if (coll_counts_table(db_backend(db), &ddl) < 0)
		goto out;
	for (i = 0; i < cs.n; i++)
		if (coll_ddl(&cs.c[i], db_backend(db), &ddl) < 0)
			goto out;
	if (db_exec(db, ddl.data) < 0) {
		seed_fail(db, "create tables");
		goto out;
	}
	if (seed_users(db, "users", 1, users, hash) < 0 ||
	    seed_users(db, "_superusers", 9, 1, hash) < 0 || seed_posts(db, users, posts) < 0 ||
	    seed_comments(db, users, posts, comments) < 0)
		goto out;
	/* The kept counts, made once the rows are in (cheaper than a trigger per row). */
	buf_reset(&ddl, 0);
	for (i = 0; i < cs.n; i++)
		if (coll_counts_ddl(&cs.c[i], db_backend(db), &ddl) < 0)
			goto out;
	if (db_exec(db, ddl.data) < 0) {
		seed_fail(db, "kept counts");
		goto out;
	}
	if (db_commit(db) < 0 || db_exec(db, "ANALYZE") < 0) {
		seed_fail(db, "commit");
		goto out;
	}
	/* Closed before the rename: the last connection checkpoints and removes the WAL. */
	db_close(db);
	db = NULL;
	if (f.tmp[0] != '\0' && seed_file_commit(&f, "records-seed") < 0)
		goto out;
	f.tmp[0] = '\0';
	if (!seed_quiet)
		printf("records-seed: %lld users, %lld posts, %lld comments\n", (long long)users,
		    (long long)posts, (long long)comments);
	rc = 0;
out:
	colls_free(&cs);
	free(cd);
	buf_free(&decl);
	buf_free(&ddl);
	db_close(db);
	if (f.tmp[0] != '\0')
		seed_file_abort(&f);
	return rc;
}
