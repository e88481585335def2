/*
 * seed.c: chinook-seed, the deterministic seeder of the Chinook database.
 *
 *   chinook-seed [-f] [-s SQLDIR] URL
 *
 * URL is any sluice database URL (sqlite:PATH, or a PostgreSQL URL or conninfo).  The
 * seeder applies the schema of that back end (SQLDIR/schema.pg.sql, or
 * SQLDIR/schema.sqlite.sql then SQLDIR/rpc.sqlite.sql), then inserts every row, all in
 * one transaction: a failed run leaves the database as it was.  On SQLite the load goes
 * into PATH.seeding.PID, renamed over PATH once complete (sql/seedfile.h), so that an
 * interrupted run leaves no database at PATH at all; a PATH that exists is refused unless
 * -f is given (a new file replaces it).  On PostgreSQL a database that already has the
 * table artist is refused (exit 1) unless -f is given, which drops the Chinook tables and
 * functions first.  SQLDIR defaults to sql/chinook next to the binary's build
 * tree (the binary lives in build/<rel|san>/sql/), else sql/chinook under the current
 * directory.  Exit status: 0 seeded, 1 failure (message on stderr), 2 bad usage.
 *
 * The rows have the shape of the Chinook database the PostgREST benchmark ran against
 * (shape.h: row counts, foreign keys, string lengths, numbers, NULLs), so that responses
 * have the published sizes; the text is generated here: pseudo-words of exactly the
 * recorded length, made of alternating consonants and vowels (printable ASCII letters and
 * spaces only, nothing a JSON string must escape).  The tables the shape does not cover
 * (playlist names, employee, customer, invoice, invoice_line, actor) get plausible rows
 * of the real counts and types.  Everything derives from the row ids through a fixed
 * pseudo-random function, so two runs, on either back end, give the same rows.
 *
 * Rows go in through common/db.h as multi-row INSERT statements with $N placeholders
 * (up to SEED_MAX_PARAMS values per statement), prepared once per shape, every value
 * bound as text (SQLite's column affinity and PostgreSQL's input functions convert it).
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "db.h"
#include "shape.h"
#include "../seedfile.h"

#define SEED_MAX_PARAMS		960		/* per statement; both back ends allow more */
#define SEED_POOL		(256 * 1024)	/* text of the pending rows */
#define SEED_PATH_MAX		4096

#define SEED_EMPLOYEES		8
#define SEED_CUSTOMERS		59
#define SEED_INVOICES		412
#define SEED_INVOICE_LINES	2240
#define SEED_PLAYLISTS		18
#define SEED_ACTORS		203

/* Tables and columns number the pseudo-random streams, so that no two values share one. */
enum seed_table {
	SEED_T_ARTIST = 1, SEED_T_GENRE, SEED_T_MEDIA_TYPE, SEED_T_ALBUM, SEED_T_TRACK,
	SEED_T_PLAYLIST, SEED_T_EMPLOYEE, SEED_T_CUSTOMER, SEED_T_INVOICE, SEED_T_ACTOR,
};

/*
 * A multi-row INSERT being filled: values of up to `batch` rows kept as text in pool
 * (len -1 is NULL), sent as one statement when the batch is full and at the end.
 */
struct seed_ins {
	struct db *db;
	const char *table;
	const char *cols;	/* "a, b, c", as written in the statement */
	int ncols;
	int batch;		/* rows per full statement */
	int rows;		/* rows pending */
	int nvals;		/* values pending */
	int failed;		/* a value did not fit; reported at the next flush */
	size_t off[SEED_MAX_PARAMS];
	int len[SEED_MAX_PARAMS];
	char pool[SEED_POOL];
	size_t used;
	struct buf sql;
	long long total;	/* rows inserted, for the summary */
};

/* The real playlist names' lengths (18 playlists); the names themselves are generated. */
static const short seed_playlist_name_len[SEED_PLAYLISTS] = {
	5, 6, 8, 10, 10, 10, 6, 5, 12, 8, 15, 9, 25, 26, 26, 6, 19, 11,
};

/* The employees: who reports to whom (0: nobody), the lengths of their titles. */
static const int seed_employee_reports_to[SEED_EMPLOYEES] = { 0, 1, 2, 2, 2, 1, 6, 6 };
static const int seed_employee_title_len[SEED_EMPLOYEES] = { 15, 13, 19, 19, 19, 10, 8, 8 };

/* Lines per invoice, repeated (the real database's own pattern). */
static const int seed_lines_pattern[] = { 1, 2, 2, 4, 6, 9, 14 };

/*
 * Set when a generated value did not fit its buffer (it cannot, with the sizes below; the
 * check keeps it that way).  seed_all() refuses to commit then.
 */
static int seed_truncated;

/* Rows inserted so far, of every table, for the progress lines. */
static struct seed_progress seed_pr;
static int64_t seed_pr_rows;

static void
seed_fmt(int n, size_t len)
{
	if (n < 0 || (size_t)n >= len)
		seed_truncated = 1;
}

/* The next value of the splitmix64 stream s (seed_mix64() of the state, which then steps
 * on by the same constant that function adds). */
static uint64_t
seed_rng(uint64_t *s)
{
	uint64_t z = seed_mix64(*s);

	*s += SEED_MIX64_STEP;
	return z;
}

/* The stream of one value: a table, a column number and a row id. */
static uint64_t
seed_stream(enum seed_table t, int col, int id)
{
	uint64_t s = ((uint64_t)t << 48) ^ ((uint64_t)(unsigned)col << 32) ^ (uint64_t)(unsigned)id;

	(void)seed_rng(&s);
	return s;
}

/* A number in [lo, hi] from the stream. */
static int
seed_range(uint64_t *s, int lo, int hi)
{
	return lo + (int)(seed_rng(s) % (uint64_t)(hi - lo + 1));
}

/*
 * Writes exactly n characters of pseudo-words into out (n + 1 bytes, NUL-terminated):
 * capitalised words of 2 to 9 letters separated by single spaces, consonants and vowels
 * alternating so that every word ends in a vowel.  The alphabet has no quote, backslash
 * or control character, so the text is its own JSON string body.
 */
static void
seed_words(char *out, int n, uint64_t s)
{
	static const char cons[] = "bdfgklmnprstvz";
	static const char vows[] = "aeiou";
	int pos = 0, r = n, w, i, max;

	while (r > 0) {
		if (r <= 9) {
			w = r;
		} else {
			/* Leave room for a space and a word of two letters at least. */
			max = r - 3 < 9 ? r - 3 : 9;
			w = seed_range(&s, 2, max);
		}
		for (i = 0; i < w; i++) {
			/* Odd lengths start with a vowel, so the last letter is always one. */
			char c = (i + w) % 2 == 0 ?
			    cons[seed_rng(&s) % (sizeof(cons) - 1)] :
			    vows[seed_rng(&s) % (sizeof(vows) - 1)];

			out[pos++] = i == 0 ? (char)(c - 'a' + 'A') : c;
		}
		r -= w;
		if (r > 0) {
			out[pos++] = ' ';
			r--;
		}
	}
	out[pos] = '\0';
}

/* n random characters from set into out (n + 1 bytes). */
static void
seed_chars(char *out, int n, const char *set, uint64_t *s)
{
	size_t k = strlen(set);
	int i;

	for (i = 0; i < n; i++)
		out[i] = set[seed_rng(s) % k];
	out[n] = '\0';
}

/* Lower-cases generated words in place and drops their spaces (for e-mail addresses). */
static void
seed_lower(char *p)
{
	char *q = p;

	for (; *p != '\0'; p++)
		if (*p != ' ')
			*q++ = *p >= 'A' && *p <= 'Z' ? (char)(*p - 'A' + 'a') : *p;
	*q = '\0';
}

/*
 * The date `days` after 1970-01-01 as "YYYY-MM-DDTHH:MM:SS" (PostgREST's JSON form of a
 * timestamp) into out[20], with the given seconds of the day.  Proleptic Gregorian
 * calendar, the civil_from_days algorithm.
 */
static void
seed_timestamp(char *out, size_t outlen, long days, int secs)
{
	long z = days + 719468, era, doe, yoe, y, doy, mp, d, m;

	era = (z >= 0 ? z : z - 146096) / 146097;
	doe = z - era * 146097;
	yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
	y = yoe + era * 400;
	doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
	mp = (5 * doy + 2) / 153;
	d = doy - (153 * mp + 2) / 5 + 1;
	m = mp < 10 ? mp + 3 : mp - 9;
	if (m <= 2)
		y++;
	/* Four-digit years and fixed-width fields: 20 bytes always suffice. */
	seed_fmt(snprintf(out, outlen, "%04ld-%02ld-%02ldT%02d:%02d:%02d", y, m, d,
	    secs / 3600, secs / 60 % 60, secs % 60), outlen);
}

/* Days from 1970-01-01 to y-01-01. */
static long
seed_days_of_year(int y)
{
	long days = 0;
	int i;

	for (i = 1970; i < y; i++)
		days += (i % 4 == 0 && (i % 100 != 0 || i % 400 == 0)) ? 366 : 365;
	return days;
}

static void
seed_ins_init(struct seed_ins *in, struct db *db, const char *table, const char *cols,
    int ncols)
{
	in->db = db;
	in->table = table;
	in->cols = cols;
	in->ncols = ncols;
	in->batch = SEED_MAX_PARAMS / ncols;
	in->rows = in->nvals = in->failed = 0;
	in->used = 0;
	in->total = 0;
	buf_reset(&in->sql, 0);
}

/* Sends the pending rows as one INSERT.  Returns 0, or -1 after printing why. */
static int
seed_ins_flush(struct seed_ins *in)
{
	struct db_stmt *st;
	int r, c, k = 0, rc = -1;

	if (in->failed) {
		fprintf(stderr, "chinook-seed: %s: a row does not fit in the batch buffer\n",
		    in->table);
		goto out;
	}
	if (in->rows == 0)
		return 0;
	buf_reset(&in->sql, 0);
	buf_printf(&in->sql, "insert into %s (%s) values ", in->table, in->cols);
	for (r = 0; r < in->rows; r++) {
		buf_puts(&in->sql, r == 0 ? "(" : ", (");
		for (c = 0; c < in->ncols; c++)
			buf_printf(&in->sql, c == 0 ? "$%d" : ", $%d", ++k);
		buf_putc(&in->sql, ')');
	}
	if (buf_failed(&in->sql)) {
		fprintf(stderr, "chinook-seed: %s: out of memory\n", in->table);
		goto out;
	}
	if ((st = db_prepare(in->db, in->sql.data)) == NULL)
		goto dberr;
	for (k = 0; k < in->nvals; k++) {
		r = in->len[k] < 0 ? db_bind_null(st, k + 1) :
		    db_bind_text(st, k + 1, in->pool + in->off[k], (size_t)in->len[k]);
		if (r == -1)
			goto dberr;
	}
	if (db_step(st) != DB_DONE)
		goto dberr;
	db_reset(st);
	in->total += in->rows;
	seed_pr_rows += in->rows;
	seed_progress_tick(&seed_pr, seed_pr_rows);
	in->rows = in->nvals = 0;
	in->used = 0;
	rc = 0;
	goto out;
dberr:
	fprintf(stderr, "chinook-seed: insert into %s: %s\n", in->table, db_errmsg(in->db));
out:
	return rc;
}

/* Adds one text value (NULL for SQL NULL) to the current row. */
static void
seed_val(struct seed_ins *in, const char *s)
{
	size_t n;

	if (in->nvals >= SEED_MAX_PARAMS) {
		in->failed = 1;
		return;
	}
	if (s == NULL) {
		in->len[in->nvals++] = -1;
		return;
	}
	n = strlen(s);
	if (n > INT_MAX || SEED_POOL - in->used < n + 1) {
		in->failed = 1;
		return;
	}
	memcpy(in->pool + in->used, s, n + 1);
	in->off[in->nvals] = in->used;
	in->len[in->nvals++] = (int)n;
	in->used += n + 1;
}

static void
seed_int(struct seed_ins *in, long long v)
{
	char b[24];

	seed_fmt(snprintf(b, sizeof(b), "%lld", v), sizeof(b));
	seed_val(in, b);
}

/* A numeric(10,2) from cents. */
static void
seed_money(struct seed_ins *in, int cents)
{
	char b[24];

	seed_fmt(snprintf(b, sizeof(b), "%d.%02d", cents / 100, cents % 100), sizeof(b));
	seed_val(in, b);
}

/* Ends a row; sends the batch when it is full.  Returns 0 or -1. */
static int
seed_row(struct seed_ins *in)
{
	if (in->nvals != (in->rows + 1) * in->ncols) {
		fprintf(stderr, "chinook-seed: %s: row %d has %d values, not %d\n", in->table,
		    in->rows + 1, in->nvals - in->rows * in->ncols, in->ncols);
		in->failed = 1;
		return -1;
	}
	if (++in->rows == in->batch || SEED_POOL - in->used < 4096)
		return seed_ins_flush(in);
	return 0;
}

/* A table whose rows are (id, generated name of a recorded length). */
static int
seed_named(struct seed_ins *in, const char *table, const char *cols, enum seed_table t,
    const short *lens, int n)
{
	char name[256];
	int id;

	seed_ins_init(in, in->db, table, cols, 2);
	for (id = 1; id <= n; id++) {
		seed_int(in, id);
		seed_words(name, lens[id - 1], seed_stream(t, 1, id));
		seed_val(in, name);
		if (seed_row(in) == -1)
			return -1;
	}
	return seed_ins_flush(in);
}

static int
seed_albums(struct seed_ins *in)
{
	char title[256];
	int id;

	seed_ins_init(in, in->db, "album", "album_id, title, artist_id", 3);
	for (id = 1; id <= SHAPE_ALBUMS; id++) {
		seed_int(in, id);
		seed_words(title, shape_album[id - 1].title_len, seed_stream(SEED_T_ALBUM, 1, id));
		seed_val(in, title);
		seed_int(in, shape_album[id - 1].artist_id);
		if (seed_row(in) == -1)
			return -1;
	}
	return seed_ins_flush(in);
}

static int
seed_tracks(struct seed_ins *in)
{
	char name[256], composer[256];
	const struct shape_track *t;
	int id;

	seed_ins_init(in, in->db, "track", "track_id, name, album_id, media_type_id, "
	    "genre_id, composer, milliseconds, bytes, unit_price", 9);
	for (id = 1; id <= SHAPE_TRACKS; id++) {
		t = &shape_track[id - 1];
		seed_int(in, id);
		seed_words(name, t->name_len, seed_stream(SEED_T_TRACK, 1, id));
		seed_val(in, name);
		seed_int(in, t->album_id);
		seed_int(in, t->media_type_id);
		seed_int(in, t->genre_id);
		if (t->composer_len < 0) {
			seed_val(in, NULL);
		} else {
			seed_words(composer, t->composer_len, seed_stream(SEED_T_TRACK, 2, id));
			seed_val(in, composer);
		}
		seed_int(in, t->milliseconds);
		seed_int(in, t->bytes);
		seed_money(in, t->price_cents);
		if (seed_row(in) == -1)
			return -1;
	}
	return seed_ins_flush(in);
}

static int
seed_playlist_tracks(struct seed_ins *in)
{
	int i, k;

	seed_ins_init(in, in->db, "playlist_track", "playlist_id, track_id", 2);
	for (i = 0; i < SHAPE_RUNS; i++)
		for (k = 0; k < shape_run[i].count; k++) {
			seed_int(in, shape_run[i].playlist_id);
			seed_int(in, shape_run[i].first_track_id + k);
			if (seed_row(in) == -1)
				return -1;
		}
	return seed_ins_flush(in);
}

/* "+1 (NNN) NNN-NNNN" into out[24]. */
static void
seed_phone(char *out, size_t outlen, uint64_t *s)
{
	seed_fmt(snprintf(out, outlen, "+1 (%03d) %03d-%04d", seed_range(s, 200, 999),
	    seed_range(s, 200, 999), seed_range(s, 0, 9999)), outlen);
}

static int
seed_employees(struct seed_ins *in)
{
	char last[32], first[32], title[32], address[80], city[48], state[4], country[48];
	char postal[16], a[4], b[4], phone[32], fax[32], email[64], birth[24], hire[24];
	uint64_t s;
	int id;

	seed_ins_init(in, in->db, "employee", "employee_id, last_name, first_name, title, "
	    "reports_to, birth_date, hire_date, address, city, state, country, postal_code, "
	    "phone, fax, email", 15);
	for (id = 1; id <= SEED_EMPLOYEES; id++) {
		s = seed_stream(SEED_T_EMPLOYEE, 0, id);
		seed_words(last, seed_range(&s, 4, 10), seed_stream(SEED_T_EMPLOYEE, 1, id));
		seed_words(first, seed_range(&s, 4, 8), seed_stream(SEED_T_EMPLOYEE, 2, id));
		seed_words(title, seed_employee_title_len[id - 1],
		    seed_stream(SEED_T_EMPLOYEE, 3, id));
		seed_timestamp(birth, sizeof(birth), seed_days_of_year(1947) +
		    seed_range(&s, 0, 26 * 365), 0);
		seed_timestamp(hire, sizeof(hire), seed_days_of_year(2002) +
		    seed_range(&s, 0, 2 * 365), 0);
		/* "NNN Words Street"-like: a house number, then words. */
		seed_words(address + 4, seed_range(&s, 10, 20), seed_stream(SEED_T_EMPLOYEE, 4, id));
		seed_fmt(snprintf(address, 5, "%03d", seed_range(&s, 100, 999)), 5);
		address[3] = ' ';
		seed_words(city, seed_range(&s, 5, 10), seed_stream(SEED_T_EMPLOYEE, 5, id));
		seed_chars(state, 2, "ABCDEFGHIJKLMNOPRSTUVWZ", &s);
		seed_words(country, 6, seed_stream(SEED_T_EMPLOYEE, 6, 0));
		/* "A1B 2C3", a Canadian-style postal code. */
		seed_chars(a, 3, "ABCEGHJKLMNPRSTVXY0123456789", &s);
		seed_chars(b, 3, "ABCEGHJKLMNPRSTVXY0123456789", &s);
		seed_fmt(snprintf(postal, sizeof(postal), "%s %s", a, b), sizeof(postal));
		seed_phone(phone, sizeof(phone), &s);
		seed_phone(fax, sizeof(fax), &s);
		seed_fmt(snprintf(email, sizeof(email), "%s@example.com", first), sizeof(email));
		seed_lower(email);

		seed_int(in, id);
		seed_val(in, last);
		seed_val(in, first);
		seed_val(in, title);
		if (seed_employee_reports_to[id - 1] == 0)
			seed_val(in, NULL);
		else
			seed_int(in, seed_employee_reports_to[id - 1]);
		seed_val(in, birth);
		seed_val(in, hire);
		seed_val(in, address);
		seed_val(in, city);
		seed_val(in, state);
		seed_val(in, country);
		seed_val(in, postal);
		seed_val(in, phone);
		seed_val(in, fax);
		seed_val(in, email);
		if (seed_row(in) == -1)
			return -1;
	}
	return seed_ins_flush(in);
}

/* What an invoice copies from its customer. */
struct seed_customer {
	char first[48], last[24], company[88], address[80], city[48], state[4], country[48];
	char postal[16], phone[32], fax[32], email[64];
	int has_company, has_state, has_postal, has_fax;
};

/* Customer id's generated fields, the same each time it is asked for. */
static void
seed_customer_make(struct seed_customer *c, int id)
{
	uint64_t s = seed_stream(SEED_T_CUSTOMER, 0, id);
	int n;

	seed_words(c->first, seed_range(&s, 4, 9), seed_stream(SEED_T_CUSTOMER, 1, id));
	seed_words(c->last, seed_range(&s, 4, 12), seed_stream(SEED_T_CUSTOMER, 2, id));
	c->has_company = id % 6 == 1;
	seed_words(c->company, seed_range(&s, 10, 40), seed_stream(SEED_T_CUSTOMER, 3, id));
	n = seed_range(&s, 12, 30);
	seed_words(c->address + 4, n, seed_stream(SEED_T_CUSTOMER, 4, id));
	seed_fmt(snprintf(c->address, 5, "%03d", seed_range(&s, 100, 999)), 5);
	c->address[3] = ' ';
	/* Customers share cities and countries, as real ones do. */
	seed_words(c->city, seed_range(&s, 4, 12), seed_stream(SEED_T_CUSTOMER, 5, id % 53));
	c->has_state = id % 3 != 0;
	seed_chars(c->state, 2, "ABCDEFGHIJKLMNOPRSTUVWZ", &s);
	seed_words(c->country, 4 + id % 24 % 7, seed_stream(SEED_T_CUSTOMER, 6, id % 24));
	c->has_postal = id % 15 != 0;
	seed_fmt(snprintf(c->postal, sizeof(c->postal), "%05d", seed_range(&s, 1000, 99999)),
	    sizeof(c->postal));
	seed_phone(c->phone, sizeof(c->phone), &s);
	c->has_fax = id % 5 == 0;
	seed_phone(c->fax, sizeof(c->fax), &s);
	seed_fmt(snprintf(c->email, sizeof(c->email), "%s.%s@example.org", c->first, c->last),
	    sizeof(c->email));
	seed_lower(c->email);
}

static int
seed_customers(struct seed_ins *in)
{
	struct seed_customer c;
	int id;

	seed_ins_init(in, in->db, "customer", "customer_id, first_name, last_name, company, "
	    "address, city, state, country, postal_code, phone, fax, email, support_rep_id", 13);
	for (id = 1; id <= SEED_CUSTOMERS; id++) {
		seed_customer_make(&c, id);
		seed_int(in, id);
		seed_val(in, c.first);
		seed_val(in, c.last);
		seed_val(in, c.has_company ? c.company : NULL);
		seed_val(in, c.address);
		seed_val(in, c.city);
		seed_val(in, c.has_state ? c.state : NULL);
		seed_val(in, c.country);
		seed_val(in, c.has_postal ? c.postal : NULL);
		seed_val(in, c.phone);
		seed_val(in, c.has_fax ? c.fax : NULL);
		seed_val(in, c.email);
		/* The three sales support agents, employees 3 to 5. */
		seed_int(in, 3 + id % 3);
		if (seed_row(in) == -1)
			return -1;
	}
	return seed_ins_flush(in);
}

/*
 * Invoices and their lines, together because an invoice's total is the sum of its lines.
 * Lines per invoice follow seed_lines_pattern, the remainder spread over the last
 * invoices; each invoice buys tracks two apart, from where the previous one stopped plus
 * a jump.  A total whose cents end in 0 would print as 9.9 on SQLite and 9.90 on
 * PostgreSQL, so such an invoice buys its last track twice (one more 0.99 or 1.99 moves
 * the last digit by 9).
 */
static int
seed_invoices(struct seed_ins *inv, struct seed_ins *lines)
{
	int nlines[SEED_INVOICES];
	struct seed_customer c;
	char date[24];
	int i, k, sum = 0, diff, track = 1, line_id = 0, cents, qty, cust;
	const int npat = (int)(sizeof(seed_lines_pattern) / sizeof(seed_lines_pattern[0]));

	for (i = 0; i < SEED_INVOICES; i++)
		sum += nlines[i] = seed_lines_pattern[i % npat];
	for (diff = SEED_INVOICE_LINES - sum, i = SEED_INVOICES - 1; diff > 0; diff--) {
		nlines[i]++;
		i = i == 0 ? SEED_INVOICES - 1 : i - 1;
	}
	seed_ins_init(inv, inv->db, "invoice", "invoice_id, customer_id, invoice_date, "
	    "billing_address, billing_city, billing_state, billing_country, "
	    "billing_postal_code, total", 9);
	seed_ins_init(lines, lines->db, "invoice_line", "invoice_line_id, invoice_id, "
	    "track_id, unit_price, quantity", 5);
	/* Lines reference invoices: every invoice row must be sent before its lines, so the
	 * invoices go first, computed in a first pass. */
	for (i = 1; i <= SEED_INVOICES; i++) {
		int t = track;

		cents = 0;
		for (k = 0; k < nlines[i - 1]; k++) {
			cents += shape_track[t - 1].price_cents;
			if (k == nlines[i - 1] - 1 && cents % 10 == 0)
				cents += shape_track[t - 1].price_cents;
			t = (t - 1 + 2) % SHAPE_TRACKS + 1;
		}
		track = (t - 1 + 37) % SHAPE_TRACKS + 1;
		cust = (i - 1) * 8 % SEED_CUSTOMERS + 1;
		seed_customer_make(&c, cust);
		seed_timestamp(date, sizeof(date), seed_days_of_year(2009) + (i - 1) * 4, 0);
		seed_int(inv, i);
		seed_int(inv, cust);
		seed_val(inv, date);
		seed_val(inv, c.address);
		seed_val(inv, c.city);
		seed_val(inv, c.has_state ? c.state : NULL);
		seed_val(inv, c.country);
		seed_val(inv, c.has_postal ? c.postal : NULL);
		seed_money(inv, cents);
		if (seed_row(inv) == -1)
			return -1;
	}
	if (seed_ins_flush(inv) == -1)
		return -1;
	track = 1;
	for (i = 1; i <= SEED_INVOICES; i++) {
		int t = track;

		cents = 0;
		for (k = 0; k < nlines[i - 1]; k++) {
			qty = 1;
			cents += shape_track[t - 1].price_cents;
			if (k == nlines[i - 1] - 1 && cents % 10 == 0)
				qty = 2;
			seed_int(lines, ++line_id);
			seed_int(lines, i);
			seed_int(lines, t);
			seed_money(lines, shape_track[t - 1].price_cents);
			seed_int(lines, qty);
			if (seed_row(lines) == -1)
				return -1;
			t = (t - 1 + 2) % SHAPE_TRACKS + 1;
		}
		track = (t - 1 + 37) % SHAPE_TRACKS + 1;
	}
	return seed_ins_flush(lines);
}

static int
seed_actors(struct seed_ins *in)
{
	char first[48], last[48];
	uint64_t s;
	int id;

	seed_ins_init(in, in->db, "actor", "actor_id, first_name, last_name, last_update", 4);
	for (id = 1; id <= SEED_ACTORS; id++) {
		s = seed_stream(SEED_T_ACTOR, 0, id);
		seed_words(first, seed_range(&s, 3, 11), seed_stream(SEED_T_ACTOR, 1, id));
		seed_words(last, seed_range(&s, 3, 12), seed_stream(SEED_T_ACTOR, 2, id));
		seed_int(in, id);
		seed_val(in, first);
		seed_val(in, last);
		/* dvdrental's rows all carry the same time. */
		seed_val(in, "2013-05-26T14:47:57");
		if (seed_row(in) == -1)
			return -1;
	}
	return seed_ins_flush(in);
}

/* Runs the statements of SQLDIR/name.  Returns 0, or -1 after printing why. */
static int
seed_apply(struct db *db, const char *dir, const char *name)
{
	char path[SEED_PATH_MAX];
	struct buf b;
	int n, rc = -1;

	buf_init(&b, 0);
	n = snprintf(path, sizeof(path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(path)) {
		fprintf(stderr, "chinook-seed: %s: path too long\n", dir);
		goto out;
	}
	if (seed_read_file("chinook-seed", path, &b) == -1)
		goto out;
	if (db_exec(db, b.data) == -1) {
		fprintf(stderr, "chinook-seed: %s: %s\n", path, db_errmsg(db));
		goto out;
	}
	rc = 0;
out:
	buf_free(&b);
	return rc;
}

/*
 * Finds the SQL directory when -s is not given: sql/chinook of the tree the binary was
 * built in (the binary is TOP/build/<rel|san>/sql/chinook-seed), else sql/chinook under
 * the current directory.  Writes it into out.
 */
static void
seed_find_sqldir(char *out, size_t outlen)
{
	char exe[SEED_PATH_MAX], probe[SEED_PATH_MAX + 64];
	ssize_t n;
	char *slash;
	int i;

	seed_fmt(snprintf(out, outlen, "sql/chinook"), outlen);
	if ((n = readlink("/proc/self/exe", exe, sizeof(exe) - 1)) <= 0)
		return;
	exe[n] = '\0';
	/* Up three levels: chinook-seed, sql, rel|san. */
	for (i = 0; i < 3; i++) {
		if ((slash = strrchr(exe, '/')) == NULL)
			return;
		*slash = '\0';
	}
	if ((slash = strrchr(exe, '/')) == NULL)
		return;
	*slash = '\0';
	n = snprintf(probe, sizeof(probe), "%s/sql/chinook/schema.pg.sql", exe);
	if (n < 0 || (size_t)n >= sizeof(probe) || access(probe, R_OK) != 0)
		return;
	n = snprintf(out, outlen, "%s/sql/chinook", exe);
	if (n < 0 || (size_t)n >= outlen)
		seed_fmt(snprintf(out, outlen, "sql/chinook"), outlen);
}

/* Whether the database already has the Chinook tables: 1, 0, or -1 on failure. */
static int
seed_exists(struct db *db)
{
	struct db_stmt *st;
	int r;

	st = db_prepare(db, db_backend(db) == DB_SQLITE ?
	    "select count(*) from sqlite_master where type = 'table' and name = 'artist'" :
	    "select count(*) from pg_catalog.pg_tables "
	    "where schemaname = current_schema() and tablename = 'artist'");
	if (st == NULL || db_step(st) != DB_ROW)
		return -1;
	r = db_column_int(st, 0) > 0;
	db_reset(st);
	return r;
}

/* What -f removes: children before parents, so that SQLite's foreign keys never object. */
static const char seed_drop_sqlite[] =
	"drop table if exists sluice_functions;"
	"drop table if exists actor;"
	"drop table if exists invoice_line;"
	"drop table if exists invoice;"
	"drop table if exists customer;"
	"drop table if exists employee;"
	"drop table if exists playlist_track;"
	"drop table if exists playlist;"
	"drop table if exists track;"
	"drop table if exists album;"
	"drop table if exists media_type;"
	"drop table if exists genre;"
	"drop table if exists artist;";
static const char seed_drop_pg[] =
	"drop function if exists ret_albums(), ret_artists(), "
	"add_them(integer, integer, integer, integer, integer) cascade;"
	"drop table if exists actor, invoice_line, invoice, customer, employee, "
	"playlist_track, playlist, track, album, media_type, genre, artist cascade;"
	"drop function if exists actor_last_update() cascade;";

/*
 * Seeds db in one write transaction: refuses a seeded database unless force (then drops it
 * first), applies the schema files of the back end from sqldir, inserts every table
 * parents first, and commits.  On success stores the number of rows inserted in *rows and
 * returns 0; on failure rolls back, prints why and returns -1.
 */
static int
seed_all(struct db *db, const char *sqldir, int force, long long *rows)
{
	struct seed_ins *in = NULL, *in2 = NULL;
	enum db_backend be = db_backend(db);
	int r, rc = -1, began = 0;

	if ((in = calloc(1, sizeof(*in))) == NULL || (in2 = calloc(1, sizeof(*in2))) == NULL) {
		fprintf(stderr, "chinook-seed: out of memory\n");
		goto out;
	}
	buf_init(&in->sql, 0);
	buf_init(&in2->sql, 0);
	in->db = in2->db = db;
	if (db_begin(db, DB_TXN_WRITE) == -1)
		goto dberr;
	began = 1;
	if ((r = seed_exists(db)) == -1)
		goto dberr;
	if (r == 1 && !force) {
		fprintf(stderr, "chinook-seed: the database already has the Chinook tables "
		    "(-f drops and seeds again)\n");
		goto out;
	}
	if (force && db_exec(db, be == DB_SQLITE ? seed_drop_sqlite : seed_drop_pg) == -1)
		goto dberr;
	if (seed_apply(db, sqldir, be == DB_SQLITE ? "schema.sqlite.sql" :
	    "schema.pg.sql") == -1)
		goto out;
	if (be == DB_SQLITE && seed_apply(db, sqldir, "rpc.sqlite.sql") == -1)
		goto out;

	*rows = 0;
	seed_progress_start(&seed_pr, "chinook-seed", "rows", 0, 0);
#define SEED_STEP(call) do { if ((call) == -1) goto out; *rows += in->total; } while (0)
	SEED_STEP(seed_named(in, "artist", "artist_id, name", SEED_T_ARTIST,
	    shape_artist_name_len, SHAPE_ARTISTS));
	SEED_STEP(seed_named(in, "genre", "genre_id, name", SEED_T_GENRE,
	    shape_genre_name_len, SHAPE_GENRES));
	SEED_STEP(seed_named(in, "media_type", "media_type_id, name", SEED_T_MEDIA_TYPE,
	    shape_media_type_name_len, SHAPE_MEDIA_TYPES));
	SEED_STEP(seed_albums(in));
	SEED_STEP(seed_tracks(in));
	SEED_STEP(seed_named(in, "playlist", "playlist_id, name", SEED_T_PLAYLIST,
	    seed_playlist_name_len, SEED_PLAYLISTS));
	SEED_STEP(seed_playlist_tracks(in));
	SEED_STEP(seed_employees(in));
	SEED_STEP(seed_customers(in));
	SEED_STEP(seed_invoices(in, in2));
	*rows += in2->total;
	SEED_STEP(seed_actors(in));
#undef SEED_STEP
	if (seed_truncated) {
		fprintf(stderr, "chinook-seed: a generated value did not fit its buffer\n");
		goto out;
	}
	/* The ids were explicit: move actor's sequence past them for inserts without one. */
	if (be == DB_PG && db_exec(db, "select setval(pg_get_serial_sequence('actor', "
	    "'actor_id'), (select max(actor_id) from actor))") == -1)
		goto dberr;
	if (db_commit(db) == -1)
		goto dberr;
	began = 0;
	/* Fresh statistics, so that the first queries already get good plans. */
	if (be == DB_PG && db_exec(db, "analyze") == -1)
		goto dberr;
	rc = 0;
	goto out;
dberr:
	fprintf(stderr, "chinook-seed: %s\n", db_errmsg(db));
out:
	if (began)
		(void)db_rollback(db);
	if (in != NULL)
		buf_free(&in->sql);
	if (in2 != NULL)
		buf_free(&in2->sql);
	free(in);
	free(in2);
	return rc;
}

static void
seed_usage(void)
{
	fprintf(stderr, "usage: chinook-seed [-f] [-s SQLDIR] URL\n");
}

int
main(int argc, char **argv)
{
	char sqldir[SEED_PATH_MAX], err[256], tmpurl[SEED_FILE_PATH_MAX + 64];
	struct timespec t0, t1;
	struct seed_file f;
	struct db *db = NULL;
	const char *url, *path;
	enum db_backend be;
	long long rows = 0;
	int c, force = 0, rc = 1, n;
	const char *dir = NULL;

	/* A database is never world-readable (SQLite gives its -wal and -shm files the
	 * database's mode). */
	(void)umask(027);
	while ((c = getopt(argc, argv, "fs:")) != -1) {
		switch (c) {
		case 'f':
			force = 1;
			break;
		case 's':
			dir = optarg;
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
	if (dir != NULL) {
		n = snprintf(sqldir, sizeof(sqldir), "%s", dir);
		if (n < 0 || (size_t)n >= sizeof(sqldir)) {
			fprintf(stderr, "chinook-seed: -s: path too long\n");
			return 2;
		}
	} else {
		seed_find_sqldir(sqldir, sizeof(sqldir));
	}
	clock_gettime(CLOCK_MONOTONIC, &t0);
	url = argv[optind];
	f.tmp[0] = '\0';
	if (db_url_parse(url, &be, &path) == 0 && be == DB_SQLITE) {
		/* A fresh temporary file, renamed over PATH once complete (sql/seedfile.h). */
		if (seed_file_begin(&f, "chinook-seed", path, force) == -1)
			return 1;
		n = snprintf(tmpurl, sizeof(tmpurl), "sqlite:%s", f.tmp);
		if (n < 0 || (size_t)n >= sizeof(tmpurl)) {
			fprintf(stderr, "chinook-seed: database path too long\n");
			goto out;
		}
		url = tmpurl;
	}
	if (db_open(&db, url, NULL, err, sizeof(err)) == -1) {
		fprintf(stderr, "chinook-seed: %s\n", err);
		goto out;
	}
	if (seed_all(db, sqldir, force, &rows) == -1)
		goto out;
	be = db_backend(db);
	/* Closed before the rename: the last connection checkpoints and removes the WAL. */
	db_close(db);
	db = NULL;
	if (f.tmp[0] != '\0' && seed_file_commit(&f, "chinook-seed") == -1)
		return 1;
	f.tmp[0] = '\0';
	clock_gettime(CLOCK_MONOTONIC, &t1);
	printf("chinook-seed: %lld rows into %s in %lld ms\n", rows,
	    be == DB_SQLITE ? "SQLite" : "PostgreSQL",
	    (long long)(t1.tv_sec - t0.tv_sec) * 1000 + (t1.tv_nsec - t0.tv_nsec) / 1000000);
	rc = 0;
out:
	db_close(db);
	if (f.tmp[0] != '\0')
		seed_file_abort(&f);
	return rc;
}
