/*
 * otp.c: sign-in with a one-time password mailed to the record, in PocketBase's words,
 * for the auth collections SLUICE_RECORDS_OTP names (none by default):
 *
 *   POST /api/collections/C/request-otp    {"email"}: 200 {"otpId":"..."}, whether a
 *        record of C has the email or not (no mail then: nobody learns which addresses
 *        have accounts); the record's email gets a code of SLUICE_RECORDS_OTP_LENGTH
 *        digits (8) valid SLUICE_RECORDS_OTP_DURATION seconds (180).  400 for a malformed
 *        email, or when C does not allow OTP.
 *   POST /api/collections/C/auth-with-otp  {"otpId","password"}: auth-with-password's
 *        200 {"record","token"}; the OTP is deleted (it signs in once), and the record
 *        verified when the code went to the email it still has.  An unknown, expired or
 *        other collection's otpId, or a wrong code, is a 400 "Invalid or expired OTP"; the
 *        fifth wrong code deletes the OTP.
 *
 * Tables: _otps (id, collectionRef, recordRef, hash, sentTo, attempts, created), made by
 * the seeder, or by the first OTP request of a worker whose database lacks it; C (read by
 * email or id, its verified set).  The code is stored as token_otp_hash() (HMAC-SHA256
 * under the server secret), never as itself; expired OTPs are deleted by the next
 * request-otp.
 */
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "log.h"
#include "records.h"
#include "records/mail.h"
#include "records/token.h"
#include "settings.h"

#define REC_OTP_ID_LEN		15
#define REC_OTP_TRIES		5	/* wrong codes that delete an OTP */
#define REC_OTP_INVALID		"Invalid or expired OTP"

/* The table exists in this process's database (checked, or made, once). */
static atomic_int rec_otp_table;

static long long
rec_otp_setting(enum setting_key id)
{
	long long v = 0;

	(void)settings_int(id, &v);
	return v;
}

int
rec_otp_route(const char *what)
{
	return strcmp(what, "request-otp") == 0 || strcmp(what, "auth-with-otp") == 0;
}

/* The date text of now - seconds: OTPs created at or before it have expired. */
static void
rec_otp_cutoff(const struct rec_ctx *x, long long seconds, char out[25])
{
	filter_date(out, x->f.now - (time_t)seconds, 0);
}

/* rec_commit()'s fn: the CREATE TABLE of _otps. */
static int
rec_otp_create(struct rec_ctx *x, void *arg)
{
	struct buf ddl;
	int rc = 0;

	(void)arg;
	buf_init(&ddl, 4096);
	if (coll_otps_table(db_backend(x->rq->db), &ddl) < 0 || db_exec(x->rq->db, ddl.data) < 0)
		rc = (rec_db_error(x), -1);
	buf_free(&ddl);
	return rc;
}

/* 1 when _otps can be read on x's database, else 0. */
static int
rec_otp_exists(struct rec_ctx *x)
{
	struct db_stmt *st = db_prepare(x->rq->db, "SELECT count(*) FROM _otps WHERE id = ''");

	if (st == NULL || db_step(st) != DB_ROW)
		return 0;
	db_reset(st);
	return 1;
}

/*
 * Makes sure _otps exists (a database seeded before it lacks it): 0, or -1 answered.  Two
 * workers that make it at once on PostgreSQL may collide in the catalog (a unique
 * violation of the second CREATE TABLE IF NOT EXISTS): the table is there all the same,
 * and the loser goes on; the answer its failure set is replaced by the request's own.
 */
static int
rec_otp_ready(struct rec_ctx *x)
{
	if (atomic_load(&rec_otp_table))
		return 0;
	if (!rec_otp_exists(x)) {
		log_info("records: making the table _otps");
		if (rec_commit(x, rec_otp_create, NULL, 1) < 0 && !rec_otp_exists(x))
			return -1;
	}
	atomic_store(&rec_otp_table, 1);
	return 0;
}

/* A new OTP to store (rec_otp_insert()). */
struct rec_otp_new {
	const char *id, *rec_id, *hash, *to;
	char created[25], cutoff[25];
};

/* rec_commit()'s fn: deletes the expired OTPs and stores the new one. */
static int
rec_otp_insert(struct rec_ctx *x, void *arg)
{
	const struct rec_otp_new *o = arg;
	struct db_stmt *st;

	if ((st = db_prepare(x->rq->db, "DELETE FROM _otps WHERE created <= $1")) == NULL ||
	    db_bind_text(st, 1, o->cutoff, strlen(o->cutoff)) < 0 || db_step(st) == DB_ERROR)
		return rec_db_error(x), -1;
	db_reset(st);
	if ((st = db_prepare(x->rq->db, "INSERT INTO _otps (id, \"collectionRef\", "
	    "\"recordRef\", hash, \"sentTo\", attempts, created) VALUES ($1, $2, $3, $4, $5, 0, "
	    "$6)")) == NULL || db_bind_text(st, 1, o->id, strlen(o->id)) < 0 ||
	    db_bind_text(st, 2, x->c->id, strlen(x->c->id)) < 0 ||
	    db_bind_text(st, 3, o->rec_id, strlen(o->rec_id)) < 0 ||
	    db_bind_text(st, 4, o->hash, strlen(o->hash)) < 0 ||
	    db_bind_text(st, 5, o->to, strlen(o->to)) < 0 ||
	    db_bind_text(st, 6, o->created, strlen(o->created)) < 0 || db_step(st) == DB_ERROR)
		return rec_db_error(x), -1;
	db_reset(st);
	return 1;
}

/* Mails code to the address to. */
static void
rec_otp_mail(struct rec_ctx *x, const char *to, const char *code)
{
	char text[512];
	int n;

	if (!mail_on()) {
		log_info("records: no mail sent (records_sendmail is unset): otp for a record of %s",
		    x->c->name);
		return;
	}
	n = snprintf(text, sizeof(text), "Your one-time password is below; it is valid for "
	    "%lld seconds. If you did not ask to sign in, ignore this mail.\r\n\r\n"
	    "Code: %s\r\n", rec_otp_setting(SETTING_RECORDS_OTP_DURATION), code);
	if (n > 0 && (size_t)n < sizeof(text))
		rec_acct_send(x, "one-time password", to, "Your one-time password", text);
	explicit_bzero(text, sizeof(text));
}

/* Answers 200 {"otpId":id}. */
static int
rec_otp_answer(struct rec_ctx *x, const char *id)
{
	x->rs->status = 200;
	x->rs->content_type = "application/json";
	buf_reset(&x->rs->body, 4096);
	buf_printf(&x->rs->body, "{\"otpId\":\"%s\"}", id);
	return 0;
}

static int
rec_request_otp(struct rec_ctx *x)
{
	size_t ei = coll_field_index(x->c, coll_field(x->c, "email", 5));
	long long len = rec_otp_setting(SETTING_RECORDS_OTP_LENGTH);
	char id[REC_OTP_ID_LEN + 1], code[24], hash[TOKEN_SECRET_HEX];
	struct rec_otp_new o;
	struct rec_row *row;
	const char *email;
	int r;

	if ((email = rec_acct_email_of(x, "email")) == NULL)
		return 0;
	if (token_random_text(id, REC_OTP_ID_LEN) < 0 || len < 1 || len >= (long long)sizeof(code) ||
	    token_random_digits(code, (size_t)len) < 0)
		return rec_error(x->rs, 500, NULL, NULL);
	id[REC_OTP_ID_LEN] = '\0';
	code[len] = '\0';
	if ((r = rec_get(x, x->c, email, strlen(email), "email", &row)) < 0)
		return 0;
	/* Nobody has the address: an otpId all the same, which no OTP stores. */
	if (r == 0 || row->v[ei] == NULL)
		return rec_otp_answer(x, id);
	if (rec_otp_ready(x) < 0)
		return 0;
	if (token_otp_hash(id, code, (size_t)len, hash) < 0)
		return rec_error(x->rs, 500, NULL, NULL);
	memset(&o, 0, sizeof(o));
	o.id = id;
	o.rec_id = row->v[0];
	o.hash = hash;
	o.to = row->v[ei];
	filter_date(o.created, x->f.now, 0);
	rec_otp_cutoff(x, rec_otp_setting(SETTING_RECORDS_OTP_DURATION), o.cutoff);
	if (rec_commit(x, rec_otp_insert, &o, 1) < 0)
		return 0;
	rec_otp_mail(x, row->v[ei], code);
	explicit_bzero(code, sizeof(code));
	return rec_otp_answer(x, id);
}

/* An OTP as stored. */
struct rec_otp_row {
	char coll[64], rec[64], hash[TOKEN_SECRET_HEX], to[256], created[32];
	int64_t attempts;
};

/* Copies column col of st into out[size] ("" when it does not fit). */
static void
rec_otp_col(struct db_stmt *st, int col, char *out, size_t size)
{
	size_t len = 0;
	const char *v = db_column_text(st, col, &len);

	if (v == NULL || len >= size)
		len = 0;
	else
		memcpy(out, v, len);
	out[len] = '\0';
}

/* Reads the OTP id into *o: 1 found, 0 not, -1 answered. */
static int
rec_otp_read(struct rec_ctx *x, const char *id, struct rec_otp_row *o)
{
	struct db_stmt *st;
	int rc;

	if ((st = db_prepare(x->rq->db, "SELECT \"collectionRef\", \"recordRef\", hash, "
	    "\"sentTo\", attempts, created FROM _otps WHERE id = $1")) == NULL ||
	    db_bind_text(st, 1, id, strlen(id)) < 0)
		return rec_db_error(x), -1;
	if ((rc = db_step(st)) == DB_ERROR)
		return rec_db_error(x), -1;
	if (rc != DB_ROW)
		return 0;
	rec_otp_col(st, 0, o->coll, sizeof(o->coll));
	rec_otp_col(st, 1, o->rec, sizeof(o->rec));
	rec_otp_col(st, 2, o->hash, sizeof(o->hash));
	rec_otp_col(st, 3, o->to, sizeof(o->to));
	o->attempts = db_column_int(st, 4);
	rec_otp_col(st, 5, o->created, sizeof(o->created));
	db_reset(st);
	return 1;
}

/* rec_commit()'s fn of a wrong code (arg: the OTP's id): one more attempt counted, the
 * OTP deleted at the fifth.  1, or -1 answered. */
static int
rec_otp_wrong(struct rec_ctx *x, void *arg)
{
	const char *id = arg;
	struct db_stmt *st;

	if ((st = db_prepare(x->rq->db, "UPDATE _otps SET attempts = attempts + 1 "
	    "WHERE id = $1")) == NULL || db_bind_text(st, 1, id, strlen(id)) < 0 ||
	    db_step(st) == DB_ERROR)
		return rec_db_error(x), -1;
	db_reset(st);
	if ((st = db_prepare(x->rq->db, "DELETE FROM _otps WHERE id = $1 AND attempts >= 5")) ==
	    NULL || db_bind_text(st, 1, id, strlen(id)) < 0 || db_step(st) == DB_ERROR)
		return rec_db_error(x), -1;
	db_reset(st);
	return 1;
}

/* Deletes the OTP id whose hash is hash as a committed write: 1 when this request deleted
 * it (it signs in once), 0 when another did first, -1 answered. */
static int
rec_otp_take(struct rec_ctx *x, const char *id, const char *hash)
{
	struct sqlb *q = &x->t->q;

	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "DELETE FROM _otps WHERE id = ");
	sqlb_text(q, id, strlen(id));
	buf_puts(q->sql, " AND hash = ");
	sqlb_text(q, hash, strlen(hash));
	buf_printf(q->sql, " AND attempts < %d", REC_OTP_TRIES);
	return rec_commit(x, rec_exec_write, NULL, 0);
}

/* The body's otpId and password, or NULL with the 400 of the ones missing answered. */
static int
rec_otp_body(struct rec_ctx *x, const char **id, const char **pw)
{
	const cJSON *i = cJSON_GetObjectItemCaseSensitive(x->body, "otpId");
	const cJSON *p = cJSON_GetObjectItemCaseSensitive(x->body, "password");
	struct buf e;
	int bad;

	*id = cJSON_IsString(i) && i->valuestring[0] != '\0' ? i->valuestring : NULL;
	*pw = cJSON_IsString(p) && p->valuestring[0] != '\0' ? p->valuestring : NULL;
	if (*id != NULL && *pw != NULL)
		return 0;
	buf_init(&e, 1024);
	buf_printf(&e, "{%s%s%s}", *id != NULL ? "" : "\"otpId\":{\"code\":"
	    "\"validation_required\",\"message\":\"Missing required value.\"}",
	    *id == NULL && *pw == NULL ? "," : "", *pw != NULL ? "" : "\"password\":{\"code\":"
	    "\"validation_required\",\"message\":\"Missing required value.\"}");
	bad = buf_failed(&e);
	rec_error(x->rs, 400, "An error occurred while validating the submitted data.",
	    bad ? "{}" : e.data);
	buf_free(&e);
	return -1;
}

static int
rec_auth_with_otp(struct rec_ctx *x)
{
	size_t ei = coll_field_index(x->c, coll_field(x->c, "email", 5));
	size_t vi = coll_field_index(x->c, coll_field(x->c, "verified", 8));
	char hash[TOKEN_SECRET_HEX], cutoff[25];
	struct rec_otp_row o;
	struct rec_row *row;
	const char *id, *pw;
	int r;

	if (rec_otp_body(x, &id, &pw) < 0)
		return 0;
	if (strlen(id) > 64 || strlen(pw) > 64)
		return rec_error(x->rs, 400, REC_OTP_INVALID, NULL);
	if (rec_otp_ready(x) < 0 || (r = rec_otp_read(x, id, &o)) < 0)
		return 0;
	if (r == 0)
		return rec_error(x->rs, 400, REC_OTP_INVALID, NULL);
	rec_otp_cutoff(x, rec_otp_setting(SETTING_RECORDS_OTP_DURATION), cutoff);
	/* Another collection's OTP is left alone; an expired one goes with the next
	 * request-otp. */
	if (strcmp(o.coll, x->c->id) != 0 || strcmp(o.created, cutoff) <= 0 ||
	    o.attempts >= REC_OTP_TRIES)
		return rec_error(x->rs, 400, REC_OTP_INVALID, NULL);
	if (token_otp_hash(id, pw, strlen(pw), hash) < 0 || !token_otp_match(hash, o.hash)) {
		if (rec_commit(x, rec_otp_wrong, (void *)(uintptr_t)id, 1) < 0)
			return 0;
		return rec_error(x->rs, 400, REC_OTP_INVALID, NULL);
	}
	if ((r = rec_otp_take(x, id, hash)) <= 0)
		return r < 0 ? 0 : rec_error(x->rs, 400, REC_OTP_INVALID, NULL);
	if ((r = rec_get(x, x->c, o.rec, strlen(o.rec), "id", &row)) <= 0)
		return r < 0 ? 0 : rec_error(x->rs, 400, REC_OTP_INVALID, NULL);
	/* The code reached the address the record has now: that verifies it, as PocketBase
	 * counts it. */
	if (row->v[ei] != NULL && strcmp(row->v[ei], o.to) == 0 && row->v[vi] != NULL &&
	    row->v[vi][0] != '1' && row->v[vi][0] != 't') {
		if ((r = rec_acct_verify(x, row)) < 0)
			return 0;
		if (r > 0) {
			row->v[vi] = "1";
			row->len[vi] = 1;
		}
	}
	return rec_auth_answer(x, row, REC_TOKEN_TTL, 1);
}

int
rec_otp(struct rec_ctx *x, const char *what)
{
	if (x->rq->method != REQ_POST)
		return rec_error(x->rs, 405, "Method not allowed.", NULL);
	if (!rec_otp_on(x->c))
		return rec_error(x->rs, 400, "The collection is not configured to allow OTP "
		    "authentication.", NULL);
	return strcmp(what, "request-otp") == 0 ? rec_request_otp(x) : rec_auth_with_otp(x);
}
