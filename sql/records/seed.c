/*
 * seed.c: the deterministic seeder of the records API's demo database
 * (build/.../sql/records-seed).
 *
 *   records-seed [-u USERS] [-p POSTS] [-c COMMENTS] [-S DIR] [-f] [-q] URL
 *   records-seed [-q] -k URL
 *   records-seed [-q] -a EMAIL URL < PASSWORD
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
 * -a upserts one superuser of an existing database, as PocketBase's `superuser upsert
 * EMAIL PASS` does: the record of _superusers with that email gets the password read from
 * the standard input (one line) and a new tokenKey (its tokens are revoked), or is created
 * (verified); the hash is bcrypt at SLUICE_BCRYPT_COST.  The password comes on the
 * standard input, not the command line, so that it shows in no process list or shell
 * history.
 *
 * The rows go in SEED_ROWS at a time, one multi-row INSERT a batch (a prepared statement
 * per batch size), so that a large data set (-u 60000 -p 1000000 -c 3000000, the records
 * benchmark's large preset) is a few thousand statements rather than millions of round
 * trips to PostgreSQL; SQLite inserts the same rows in the same order, so its file is the
 * same bytes as with one row a statement.  Every seeded account shares one bcrypt hash.
 */
#include <assert.h>
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
#include "records/token.h"
#include "settings.h"
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

/*
 * A table's rows, SEED_ROWS to a statement: "INSERT INTO t (cols) VALUES ($1, ...),
 * ($n+1, ...) ...".  The values of a batch are kept (text in vals, each one's offset and
 * length) until the batch is sent, since a bound text is read only at db_step().
 */
#define SEED_ROWS	512
#define SEED_COLS_MAX	9
#define SEED_PROGRESS_MIN	100000

struct seed_ins {
	struct db *db;
	const char *head;	/* "INSERT INTO t (cols) VALUES ", borrowed */
	int ncols;
	int nvals;		/* values of the batch so far */
	int64_t done;		/* rows sent */
	struct buf vals;
	struct buf sql;
	size_t off[SEED_ROWS * SEED_COLS_MAX];
	size_t len[SEED_ROWS * SEED_COLS_MAX];
	int64_t ival[SEED_ROWS * SEED_COLS_MAX];
	char isint[SEED_ROWS * SEED_COLS_MAX];
	struct seed_progress pr;
};

static void
seed_ins_begin(struct seed_ins *in, struct db *db, const char *head, int ncols,
    const char *what, int64_t total)
{
	assert(ncols > 0 && ncols <= SEED_COLS_MAX);
	in->db = db;
	in->head = head;
	in->ncols = ncols;
	in->nvals = 0;
	in->done = 0;
	buf_init(&in->vals, 0);
	buf_init(&in->sql, 0);
	/* Progress lines for the large loads only: the default seed says what it always said. */
	seed_progress_start(&in->pr, "records-seed", what, total,
	    seed_quiet || total < SEED_PROGRESS_MIN);
}

static void
seed_ins_text(struct seed_ins *in, const char *s, size_t len)
{
	in->off[in->nvals] = in->vals.len;
	in->len[in->nvals] = len;
	in->isint[in->nvals++] = 0;
	buf_append(&in->vals, s, len);
	buf_putc(&in->vals, '\0');
}

static void
seed_ins_int(struct seed_ins *in, int64_t v)
{
	in->ival[in->nvals] = v;
	in->isint[in->nvals++] = 1;
}

/* Sends the batch's rows, if any, in one statement; 0 or -1. */
static int
seed_ins_flush(struct seed_ins *in)
{
	struct db_stmt *st;
	int i, rows = in->nvals / in->ncols;

	if (rows == 0)
		return 0;
	if (buf_failed(&in->vals)) {
		fprintf(stderr, "records-seed: out of memory\n");
		return -1;
	}
	buf_reset(&in->sql, 1 << 16);
	buf_puts(&in->sql, in->head);
	for (i = 0; i < in->nvals; i++) {
		buf_puts(&in->sql, i % in->ncols == 0 ? (i > 0 ? "), ($" : "($") : ", $");
		buf_put_int(&in->sql, i + 1);
	}
	buf_putc(&in->sql, ')');
	if (buf_failed(&in->sql) || (st = db_prepare(in->db, in->sql.data)) == NULL)
		return seed_fail(in->db, "prepare");
	for (i = 0; i < in->nvals; i++)
		if (in->isint[i])
			db_bind_int(st, i + 1, in->ival[i]);
		else
			db_bind_text(st, i + 1, in->vals.data + in->off[i], in->len[i]);
	if (seed_run(in->db, st) < 0)
		return -1;
	in->done += rows;
	in->nvals = 0;
	buf_reset(&in->vals, 1 << 16);
	seed_progress_tick(&in->pr, in->done);
	return 0;
}

/* Ends a row (every column given): sends the batch when it is full; 0 or -1. */
static int
seed_ins_row(struct seed_ins *in)
{
	assert(in->nvals % in->ncols == 0);
	return in->nvals == SEED_ROWS * in->ncols ? seed_ins_flush(in) : 0;
}

/* Sends the last batch and frees the buffers; 0 or -1 (the buffers freed either way). */
static int
seed_ins_end(struct seed_ins *in, int rc)
{
	if (rc == 0)
		rc = seed_ins_flush(in);
	if (rc == 0)
		seed_progress_end(&in->pr, in->done);
	buf_free(&in->vals);
	buf_free(&in->sql);
	return rc;
}

static int
seed_users(struct db *db, const char *table, uint64_t kind, int64_t count, const char *hash)
{
	char head[256], id[COLL_ID_LEN + 1], key[51], email[64], name[64], date[25];
	struct seed_ins in;
	int64_t n;
	int i, rc = 0, users = strcmp(table, "users") == 0;

	(void)snprintf(head, sizeof(head), "INSERT INTO \"%s\" (\"id\", \"email\", "
	    "\"emailVisibility\", \"verified\", \"password\", \"tokenKey\", \"created\", "
	    "\"updated\"%s) VALUES ", table, users ? ", \"name\"" : "");
	seed_ins_begin(&in, db, head, users ? 9 : 8, table, count);
	for (n = 1; n <= count && rc == 0; n++) {
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
		seed_ins_text(&in, id, strlen(id));
		seed_ins_text(&in, email, strlen(email));
		seed_ins_int(&in, users ? n % 4 == 0 : 0);
		seed_ins_int(&in, 1);
		seed_ins_text(&in, hash, strlen(hash));
		seed_ins_text(&in, key, 50);
		seed_ins_text(&in, date, strlen(date));
		seed_ins_text(&in, date, strlen(date));
		if (users)
			seed_ins_text(&in, name, strlen(name));
		rc = seed_ins_row(&in);
	}
	return seed_ins_end(&in, rc);
}

static int
seed_posts(struct db *db, int64_t users, int64_t posts)
{
	static const char *const tags[] = { "news", "tech", "life", "travel", "food", "music" };
	static const char head[] = "INSERT INTO \"posts\" (\"id\", \"title\", \"body\", "
	    "\"status\", \"author\", \"tags\", \"created\", \"updated\") VALUES ";
	char id[COLL_ID_LEN + 1], author[COLL_ID_LEN + 1], title[64], date[25];
	struct buf body, tagb;
	struct seed_ins in;
	int64_t n;
	int rc = 0;

	buf_init(&body, 1 << 16);
	buf_init(&tagb, 1 << 10);
	seed_ins_begin(&in, db, head, 8, "posts", posts);
	for (n = 1; n <= posts && rc == 0; n++) {
		uint64_t r = seed_mix64(0xb0d1e5ULL ^ (uint64_t)n);
		int k, ntags = (int)(r >> 20 & 3);
		const char *status = r % 20 < 12 ? "published" : r % 20 < 17 ? "draft" : "archived";

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
		seed_ins_text(&in, id, strlen(id));
		seed_ins_text(&in, title, strlen(title));
		seed_ins_text(&in, body.data, body.len);
		seed_ins_text(&in, status, strlen(status));
		seed_ins_text(&in, author, strlen(author));
		seed_ins_text(&in, tagb.data, tagb.len);
		seed_ins_text(&in, date, strlen(date));
		seed_ins_text(&in, date, strlen(date));
		rc = seed_ins_row(&in);
	}
	rc = seed_ins_end(&in, rc);
	buf_free(&body);
	buf_free(&tagb);
	return rc;
}

static int
seed_comments(struct db *db, int64_t users, int64_t posts, int64_t comments)
{
	static const char head[] = "INSERT INTO \"comments\" (\"id\", \"post\", \"author\", "
	    "\"text\", \"created\") VALUES ";
	char id[COLL_ID_LEN + 1], post[COLL_ID_LEN + 1], author[COLL_ID_LEN + 1], date[25];
	struct buf text;
	struct seed_ins in;
	int64_t n;
	int rc = 0;

	buf_init(&text, 1 << 16);
	seed_ins_begin(&in, db, head, 5, "comments", comments);
	for (n = 1; n <= comments && rc == 0; n++) {
		uint64_t r = seed_mix64(0xc033e7ULL ^ (uint64_t)n);

		seed_id(id, 3, (uint64_t)n);
		seed_id(post, 2, 1 + r % (uint64_t)posts);
		seed_id(author, 1, 1 + (r >> 24) % (uint64_t)users);
		seed_text(&text, r, 3 + (int)(r >> 48) % 18);
		seed_date(date, SEED_T0 + 86400 + n * 53);
		seed_ins_text(&in, id, strlen(id));
		seed_ins_text(&in, post, strlen(post));
		seed_ins_text(&in, author, strlen(author));
		seed_ins_text(&in, text.data, text.len);
		seed_ins_text(&in, date, strlen(date));
		rc = seed_ins_row(&in);
	}
	rc = seed_ins_end(&in, rc);
	buf_free(&text);
	return rc;
}

static void
seed_usage(void)
{
	fprintf(stderr, "usage: records-seed [-u USERS] [-p POSTS] [-c COMMENTS] [-S DIR] [-f] "
	    "[-q] URL\n       records-seed -k URL\n       records-seed -a EMAIL URL "
	    "< PASSWORD\n");
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


/* The password on the standard input's first line (its line end removed) into pw; 0, or
 * -1 (said on stderr) when it is not 8 to 71 bytes, the API's bounds. */
static int
seed_read_password(char *pw, size_t len)
{
	size_t n;

	if (fgets(pw, (int)len, stdin) == NULL) {
		fprintf(stderr, "records-seed: -a reads the password on the standard input\n");
		return -1;
	}
	n = strcspn(pw, "\r\n");
	pw[n] = '\0';
	if (n < 8 || n > 71) {
		fprintf(stderr, "records-seed: the password must be 8 to 71 bytes\n");
		return -1;
	}
	return 0;
}

/* Binds text values vals[0..n) to st from $1 on. */
static void
seed_bind_texts(struct db_stmt *st, const char *const *vals, int n)
{
	int i;

	for (i = 0; i < n; i++)
		db_bind_text(st, i + 1, vals[i], strlen(vals[i]));
}

/*
 * -a: the superuser with this email, its password (from the standard input) and tokenKey
 * set, or created, in one transaction of the existing database at url.  0, or 1.
 */
static int
seed_superuser(const char *url, const char *email)
{
	char pw[128], hash[PASS_HASH_MAX], key[51], id[COLL_ID_LEN + 1], date[25], err[256];
	struct db *db = NULL;
	struct db_stmt *st;
	struct timespec ts;
	long long cost;
	int rc = 1, created = 0;

	if (!coll_email_ok(email)) {
		fprintf(stderr, "records-seed: %s: not an email address\n", email);
		return 1;
	}
	if (seed_read_password(pw, sizeof(pw)) < 0 ||
	    settings_int(SETTING_BCRYPT_COST, &cost) < 0)
		goto out;
	if (pass_hash(pw, strlen(pw), (int)cost, hash) < 0 ||
	    token_random_text(key, 50) < 0 || token_random_text(id, COLL_ID_LEN) < 0) {
		fprintf(stderr, "records-seed: bcrypt or randomness failed\n");
		goto out;
	}
	key[50] = '\0';
	id[COLL_ID_LEN] = '\0';
	clock_gettime(CLOCK_REALTIME, &ts);
	filter_date(date, ts.tv_sec, (int)(ts.tv_nsec / 1000000));
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "records-seed: %s\n", err);
		goto out;
	}
	if (db_begin(db, DB_TXN_WRITE) < 0) {
		seed_fail(db, "begin");
		goto out;
	}
	{
		const char *const v[] = { hash, key, date, email };

		if ((st = db_prepare(db, "UPDATE \"_superusers\" SET \"password\" = $1, "
		    "\"tokenKey\" = $2, \"updated\" = $3 WHERE \"email\" = $4")) == NULL) {
			seed_fail(db, "_superusers (a database seeded by records-seed)");
			goto out;
		}
		seed_bind_texts(st, v, 4);
		if (seed_run(db, st) < 0)
			goto out;
		created = db_changes(st) == 0;
	}
	if (created) {
		const char *const v[] = { id, email, hash, key, date, date };

		if ((st = db_prepare(db, "INSERT INTO \"_superusers\" (\"id\", \"email\", "
		    "\"password\", \"tokenKey\", \"created\", \"updated\", \"emailVisibility\", "
		    "\"verified\") VALUES ($1, $2, $3, $4, $5, $6, FALSE, TRUE)")) == NULL) {
			seed_fail(db, "prepare");
			goto out;
		}
		seed_bind_texts(st, v, 6);
		if (seed_run(db, st) < 0)
			goto out;
	}
	if (db_commit(db) < 0) {
		seed_fail(db, "commit");
		goto out;
	}
	if (!seed_quiet)
		printf("records-seed: superuser %s %s\n", email, created ? "created" : "updated");
	rc = 0;
out:
	explicit_bzero(pw, sizeof(pw));
	db_close(db);
	return rc;
}

/* The command line. */
struct seed_opts {
	const char *dir;	/* -S: where collections.sql is */
	int64_t users, posts, comments;
	int force;		/* -f */
	int keep;		/* -k */
	const char *superuser;	/* -a: the email of the superuser to upsert */
};

/* Reads the options into o (-q sets seed_quiet); optind is then the URL's index.  0, or -1
 * after printing the usage. */
static int
seed_args(int argc, char **argv, struct seed_opts *o)
{
	int c;

	while ((c = getopt(argc, argv, "u:p:c:S:fkqa:")) != -1) {
		int64_t *dst = c == 'u' ? &o->users : c == 'p' ? &o->posts : &o->comments;

		switch (c) {
		case 'u':
		case 'p':
		case 'c':
			if (str_to_int(optarg, strlen(optarg), 1, 100000000, dst) < 0) {
				seed_usage();
				return -1;
			}
			break;
		case 'S':
			o->dir = optarg;
			break;
		case 'f':
			o->force = 1;
			break;
		case 'k':
			o->keep = 1;
			break;
		case 'a':
			o->superuser = optarg;
			break;
		case 'q':
			seed_quiet = 1;
			break;
		default:
			seed_usage();
			return -1;
		}
	}
	if (optind != argc - 1) {
		seed_usage();
		return -1;
	}
	return 0;
}

/* Opens the database of url into *db: for SQLite, a fresh temporary file begun in f,
 * renamed over PATH once complete (sql/seedfile.h); with force, the seeded tables of an
 * existing database dropped first.  0, or -1 (said on stderr). */
static int
seed_open(struct db **db, const char *url, int force, struct seed_file *f)
{
	char tmpurl[SEED_FILE_PATH_MAX + 64], err[256];
	enum db_backend be;
	const char *target;
	int n;

	if (db_url_parse(url, &be, &target) == 0 && be == DB_SQLITE) {
		if (seed_file_begin(f, "records-seed", target, force) < 0)
			return -1;
		n = snprintf(tmpurl, sizeof(tmpurl), "sqlite:%s", f->tmp);
		if (n < 0 || (size_t)n >= sizeof(tmpurl)) {
			fprintf(stderr, "records-seed: database path too long\n");
			return -1;
		}
		url = tmpurl;
	}
	if (db_open(db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "records-seed: %s\n", err);
		return -1;
	}
	if (force && db_exec(*db, "DROP TABLE IF EXISTS comments; DROP TABLE IF EXISTS posts; "
	    "DROP TABLE IF EXISTS users; DROP TABLE IF EXISTS _superusers; "
	    "DROP TABLE IF EXISTS _collections; DROP TABLE IF EXISTS _counts; "
	    "DROP TABLE IF EXISTS _otps") < 0) {
		seed_fail(*db, "drop");
		return -1;
	}
	return 0;
}

/* The one bcrypt hash of SEED_PASSWORD every seeded account shares, into hash (len
 * bytes): a fixed salt, so that it is reproducible.  0, or -1 (said on stderr). */
static int
seed_hash(char *hash, size_t len)
{
	char setting[CRYPT_GENSALT_OUTPUT_SIZE];
	struct crypt_data *cd;
	const char *h;
	int rc = -1;

	if ((cd = calloc(1, sizeof(*cd))) == NULL ||
	    crypt_gensalt_rn("$2b$", 10, "sluice-records-1", 16, setting, sizeof(setting)) ==
	    NULL || (h = crypt_rn(SEED_PASSWORD, setting, cd, sizeof(*cd))) == NULL ||
	    h[0] != '$' || strlen(h) >= len)
		fprintf(stderr, "records-seed: bcrypt failed\n");
	else {
		memcpy(hash, h, strlen(h) + 1);
		rc = 0;
	}
	free(cd);
	return rc;
}

/* Begins the load's transaction and makes the schema: the collections declared by decl
 * (read into cs), the kept counts' table and each collection's table.  0, or -1 (said on
 * stderr). */
static int
seed_schema(struct db *db, const struct buf *decl, int force, struct colls *cs)
{
	struct buf ddl;
	char err[256];
	size_t i;
	int rc = -1;

	buf_init(&ddl, 1 << 20);
	/* SQLite keeps the whole load in its page cache (pages are taken as needed): a cache
	 * too small for a large load spills it to the WAL, page by page, again and again. */
	if (db_backend(db) == DB_SQLITE && db_exec(db, "PRAGMA cache_size = -1048576") < 0) {
		seed_fail(db, "cache_size");
		goto out;
	}
	if (db_begin(db, DB_TXN_WRITE) < 0 || db_exec(db, decl->data) < 0) {
		seed_fail(db, force ? "collections.sql" :
		    "collections.sql (an existing database needs -f)");
		goto out;
	}
	if (colls_load(cs, db, err, sizeof(err)) < 0) {
		fprintf(stderr, "records-seed: %s\n", err);
		goto out;
	}
	if (coll_counts_table(db_backend(db), &ddl) < 0 ||
	    coll_otps_table(db_backend(db), &ddl) < 0)
		goto out;
	for (i = 0; i < cs->n; i++)
		if (coll_ddl(&cs->c[i], db_backend(db), &ddl) < 0)
			goto out;
	if (db_exec(db, ddl.data) < 0) {
		seed_fail(db, "create tables");
		goto out;
	}
	rc = 0;
out:
	buf_free(&ddl);
	return rc;
}

/* Ends the load: the kept counts of every collection of cs, made once the rows are in
 * (cheaper than a trigger per row), the commit, then ANALYZE.  0, or -1 (said on stderr). */
static int
seed_finish(struct db *db, const struct colls *cs)
{
	struct buf ddl;
	size_t i;
	int rc = -1;

	buf_init(&ddl, 1 << 20);
	for (i = 0; i < cs->n; i++)
		if (coll_counts_ddl(&cs->c[i], db_backend(db), &ddl) < 0)
			goto out;
	if (db_exec(db, ddl.data) < 0) {
		seed_fail(db, "kept counts");
		goto out;
	}
	if (db_commit(db) < 0 || db_exec(db, "ANALYZE") < 0) {
		seed_fail(db, "commit");
		goto out;
	}
	rc = 0;
out:
	buf_free(&ddl);
	return rc;
}

int
main(int argc, char **argv)
{
	struct seed_opts o = { "sql/records", 300, 5000, 15000, 0, 0, NULL };
	char path[4096], hash[128];
	struct seed_file f;
	struct colls cs = { 0 };
	struct db *db = NULL;
	struct buf decl;
	int n, rc = 1;

	/* The database holds the users' password hashes: never world-readable (SQLite gives
	 * its -wal and -shm files the database's mode). */
	(void)umask(027);
	f.tmp[0] = '\0';	/* nothing to remove at out: until seed_file_begin() */
	if (seed_args(argc, argv, &o) < 0)
		return 2;
	if (o.keep)
		return seed_keep_counts(argv[optind]);
	if (o.superuser != NULL)
		return seed_superuser(argv[optind], o.superuser);
	buf_init(&decl, 1 << 20);
	n = snprintf(path, sizeof(path), "%s/collections.sql", o.dir);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		fprintf(stderr, "records-seed: %s: path too long\n", o.dir);
		goto out;
	}
	if (seed_read_file("records-seed", path, &decl) < 0 ||
	    seed_open(&db, argv[optind], o.force, &f) < 0 || seed_hash(hash, sizeof(hash)) < 0 ||
	    seed_schema(db, &decl, o.force, &cs) < 0)
		goto out;
	if (seed_users(db, "users", 1, o.users, hash) < 0 ||
	    seed_users(db, "_superusers", 9, 1, hash) < 0 || seed_posts(db, o.users, o.posts) < 0 ||
	    seed_comments(db, o.users, o.posts, o.comments) < 0 || seed_finish(db, &cs) < 0)
		goto out;
	/* Closed before the rename: the last connection checkpoints and removes the WAL. */
	db_close(db);
	db = NULL;
	if (f.tmp[0] != '\0' && seed_file_commit(&f, "records-seed") < 0)
		goto out;
	f.tmp[0] = '\0';
	if (!seed_quiet)
		printf("records-seed: %lld users, %lld posts, %lld comments\n",
		    (long long)o.users, (long long)o.posts, (long long)o.comments);
	rc = 0;
out:
	colls_free(&cs);
	buf_free(&decl);
	db_close(db);
	if (f.tmp[0] != '\0')
		seed_file_abort(&f);
	return rc;
}
