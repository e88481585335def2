/*
 * account.c: the account flows of an auth collection C, in PocketBase's words:
 *
 *   GET  /api/collections/C/auth-methods            200 {"password":{"identityFields":
 *        ["email"],"enabled":true},"oauth2":{"providers":[],"enabled":false},"mfa":{...},
 *        "otp":{...}}: password sign-in, and OTP (otp.c) where SLUICE_RECORDS_OTP allows
 *        it (no OAuth2 or MFA is served)
 *   POST .../request-verification    {"email"}: 204; mails a verification token to an
 *        unverified record with that email
 *   POST .../confirm-verification    {"token"}: 204; the record is verified
 *   POST .../request-password-reset  {"email"}: 204; mails a password reset token
 *   POST .../confirm-password-reset  {"token","password","passwordConfirm"}: 204; a new
 *        password hash and tokenKey (every older token of the record is revoked), and the
 *        record verified when its email is still the token's
 *   POST .../request-email-change    {"newEmail"}, signed in as a record of C: 204; mails an
 *        email change token to the new address
 *   POST .../confirm-email-change    {"token","password"}: 204; the new email, verified, and
 *        a new tokenKey
 *
 * The request routes answer 204 whether an account has the email or not, so that they
 * tell nobody which addresses have accounts; a malformed email is a 400.  A record gets
 * at most one verification and one password reset mail in 2 minutes from a process.
 * The tokens are JWTs of apps/records/token.h (types verification, passwordReset and
 * emailChange), valid 3 days, 30 minutes and 30 minutes, PocketBase's defaults, signed
 * with the record's tokenKey: a new password (which sets a new tokenKey) revokes them, and
 * a confirmation's UPDATE matches the tokenKey the token was checked with, so a token
 * confirms once.  A bad,
 * expired, wrong-type or revoked token is a 400 {"data":{"token":{"code":
 * "validation_invalid_token","message":"Invalid or expired token."}},"message":"An error
 * occurred while validating the submitted data.","status":400}.
 *
 * Mail goes through apps/records/mail.h (SLUICE_RECORDS_SENDMAIL); without it the request
 * routes answer 204 all the same and log that no mail was sent.  Tables: C (read by email
 * or id, updated by id and tokenKey).
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "arena.h"
#include "json.h"
#include "log.h"
#include "records.h"
#include "records/mail.h"
#include "records/token.h"
#include "settings.h"

#define REC_VERIFY_TTL		(3 * 86400)
#define REC_RESET_TTL		1800
#define REC_EMAIL_TTL		1800
#define REC_ACCT_PASS_MIN	8
#define REC_ACCT_PASS_MAX	71
#define REC_ACCT_KEY_LEN	50
#define REC_ACCT_INVALID	"An error occurred while validating the submitted data."
#define REC_MAIL_GAP		120	/* seconds between two mails of a kind to a record */
#define REC_MAIL_SLOTS		256

/*
 * The request routes' last mails, by kind and record: a second request within
 * REC_MAIL_GAP answers 204 and sends nothing, so that nobody can fill an inbox through
 * them (PocketBase waits 2 minutes too).  Per process, as PocketBase's is per server: a
 * pool of N workers lets at most N through in the gap.  A slot holds the latest of the
 * records its hash takes; a record whose slot another took since may be mailed again.
 */
static struct {
	pthread_mutex_t mu;
	struct {
		char key[96];		/* kind, collection id, record id */
		int64_t at;
	} e[REC_MAIL_SLOTS];
} rec_mail_sent = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* 1 when a mail of type t went to collection c's record id less than REC_MAIL_GAP ago;
 * else 0, and now is kept as its time. */
static int
rec_mail_recent(enum token_type t, const char *coll_id, const char *id, int64_t now)
{
	char key[96];
	uint64_t h = 1469598103934665603ULL;
	const char *p;
	int n = snprintf(key, sizeof(key), "%d:%s:%s", (int)t, coll_id, id), recent = 0;
	size_t slot;

	if (n < 0 || (size_t)n >= sizeof(key))
		return 0;
	for (p = key; *p != '\0'; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ULL;
	slot = (size_t)(h % REC_MAIL_SLOTS);
	pthread_mutex_lock(&rec_mail_sent.mu);
	if (strcmp(rec_mail_sent.e[slot].key, key) == 0 &&
	    now - rec_mail_sent.e[slot].at < REC_MAIL_GAP)
		recent = 1;
	else {
		memcpy(rec_mail_sent.e[slot].key, key, (size_t)n + 1);
		rec_mail_sent.e[slot].at = now;
	}
	pthread_mutex_unlock(&rec_mail_sent.mu);
	return recent;
}

/* What each request route mails. */
struct rec_mail_kind {
	enum token_type type;
	int64_t ttl;			/* the token's life, in seconds */
	const char *subject, *text, *page;
};

static const struct rec_mail_kind rec_mail_verify = {
	TOKEN_VERIFICATION, REC_VERIFY_TTL, "Verify your email",
	"Thank you for joining us.  Open the link below to verify your email address.",
	"confirm-verification"
};
static const struct rec_mail_kind rec_mail_reset = {
	TOKEN_PASSWORD_RESET, REC_RESET_TTL, "Reset your password",
	"Open the link below to reset your password.  If you did not ask for it, ignore this "
	"message.", "confirm-password-reset"
};
static const struct rec_mail_kind rec_mail_change = {
	TOKEN_EMAIL_CHANGE, REC_EMAIL_TTL, "Confirm your new email address",
	"Open the link below to confirm your new email address.", "confirm-email-change"
};

/* The index of c's field name. */
static size_t
rec_acct_field(const struct coll *c, const char *name)
{
	return coll_field_index(c, coll_field(c, name, strlen(name)));
}

/* Appends one field's error to errs ("name":{"code","message"}). */
static void
rec_acct_invalid(struct buf *errs, const char *name, const char *code, const char *msg)
{
	if (errs->len > 1)
		buf_putc(errs, ',');
	buf_printf(errs, "\"%s\":{\"code\":\"%s\",\"message\":", name, code);
	json_escape(errs, msg, strlen(msg));
	buf_putc(errs, '}');
}

/* Answers the 400 of the errors in errs (which it frees).  Returns 0. */
static int
rec_acct_fail(struct rec_ctx *x, struct buf *errs)
{
	buf_putc(errs, '}');
	rec_error(x->rs, 400, REC_ACCT_INVALID, buf_failed(errs) ? "{}" : errs->data);
	buf_free(errs);
	return 0;
}

/* The body's string key: its text, or NULL when absent, empty or not a string. */
static const char *
rec_acct_str(const struct rec_ctx *x, const char *key)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(x->body, key);

	return cJSON_IsString(v) && v->valuestring[0] != '\0' ? v->valuestring : NULL;
}

/* The body's email key, checked: its text, or NULL with the error in errs. */
static const char *
rec_acct_email(const struct rec_ctx *x, const char *key, struct buf *errs)
{
	const char *e = rec_acct_str(x, key);

	if (e == NULL)
		rec_acct_invalid(errs, key, "validation_required", "Missing required value.");
	else if (!coll_email_ok(e)) {
		rec_acct_invalid(errs, key, "validation_is_email", "Must be a valid email address.");
		e = NULL;
	}
	return e;
}

void
rec_acct_send(struct rec_ctx *x, const char *what, const char *to, const char *subject,
    const char *text)
{
	const char *from = settings_get(SETTING_RECORDS_MAIL_FROM);
	struct buf m;

	if (from == NULL || *from == '\0')
		from = "noreply@example.com";
	buf_init(&m, MAIL_MAX);
	buf_printf(&m, "From: %s\r\nTo: %s\r\nSubject: %s\r\nMIME-Version: 1.0\r\n"
	    "Content-Type: text/plain; charset=UTF-8\r\nContent-Transfer-Encoding: 8bit\r\n\r\n"
	    "%s", from, to, subject, text);
	if (buf_failed(&m) || mail_send(m.data, m.len) < 0)
		log_err("records: a %s mail for a record of %s could not be handed to the mail "
		    "command", what, x->c->name);
	buf_free(&m);
}

const char *
rec_acct_email_of(struct rec_ctx *x, const char *key)
{
	struct buf errs;
	const char *email;

	buf_init(&errs, 4096);
	buf_putc(&errs, '{');
	if ((email = rec_acct_email(x, key, &errs)) == NULL) {
		rec_acct_fail(x, &errs);
		return NULL;
	}
	buf_free(&errs);
	return email;
}

/*
 * Mails a token of kind k for row (collection x->c) to the address to: the link of the
 * app's page for it and the token itself.  Never fails the request: a mail that could not
 * be handed over, or no command to hand it to, is logged (never the token).
 */
static void
rec_acct_mail(struct rec_ctx *x, const struct rec_mail_kind *k, const struct rec_row *row,
    const char *to, const char *new_email)
{
	const char *url = settings_get(SETTING_RECORDS_APP_URL);
	size_t ki = rec_acct_field(x->c, "tokenKey"), ei = rec_acct_field(x->c, "email");
	int64_t ttl = k->ttl;
	char token[TOKEN_MAX];
	struct buf m;
	int n;

	if (!mail_on()) {
		log_info("records: no mail sent (records_sendmail is unset): %s for a record of %s",
		    k->page + 8, x->c->name);
		return;
	}
	if (row->v[ki] == NULL || row->v[ei] == NULL)
		return;
	n = token_make_as(token, sizeof(token), k->type, x->c->id, row->v[0], row->v[ei],
	    new_email, row->v[ki], row->len[ki], (int64_t)x->f.now + ttl);
	if (n < 0) {
		log_err("records: a %s token did not fit", k->page + 8);
		return;
	}
	if (url == NULL || *url == '\0')
		url = "http://127.0.0.1:8080";
	buf_init(&m, MAIL_MAX);
	buf_printf(&m, "%s\r\n\r\n%s/_/#/auth/%s/%s\r\n\r\nToken: %s\r\n", k->text, url,
	    k->page, token, token);
	if (!buf_failed(&m))
		rec_acct_send(x, k->page + 8, to, k->subject, m.data);
	buf_free(&m);
}

/* request-verification and request-password-reset: 204 whoever has the email. */
static int
rec_acct_request(struct rec_ctx *x, const struct rec_mail_kind *k)
{
	size_t vi = rec_acct_field(x->c, "verified");
	struct rec_row *row;
	struct buf errs;
	const char *email;
	int r;

	buf_init(&errs, 4096);
	buf_putc(&errs, '{');
	if ((email = rec_acct_email(x, "email", &errs)) == NULL)
		return rec_acct_fail(x, &errs);
	buf_free(&errs);
	if ((r = rec_get(x, x->c, email, strlen(email), "email", &row)) < 0)
		return 0;
	/* A verified record needs no verification mail (PocketBase sends none either). */
	if (r > 0 && !(k->type == TOKEN_VERIFICATION && row->v[vi] != NULL &&
	    (row->v[vi][0] == '1' || row->v[vi][0] == 't')) &&
	    !rec_mail_recent(k->type, x->c->id, row->v[0], (int64_t)x->f.now))
		rec_acct_mail(x, k, row, email, NULL);
	return resp_set(x->rs, 204, NULL, "", 0);
}

/*
 * The body's "token", of type t, checked against its record of x->c: 1 (*row the record,
 * *cl its claims), 0 when it does not hold (the error is in errs), -1 answered.  errs is
 * started here (an object's "{"), and freed when -1 is returned.  A token is
 * good when it parses as its type, has not expired, names x->c and a record of it, and is
 * signed with that record's tokenKey (a good token of another auth collection is answered
 * validation_token_collection_mismatch, as in PocketBase); a verification or an email change token must also
 * have been made for the email the record has now (a password reset's email only decides
 * whether the reset verifies the record, as in PocketBase).
 */
static int
rec_acct_token(struct rec_ctx *x, enum token_type t, struct token_claims *cl,
    struct rec_row **row, struct buf *errs)
{
	const char *tok = rec_acct_str(x, "token");
	const struct coll *c;
	size_t ki, ei = rec_acct_field(x->c, "email");
	int r;

	buf_init(errs, 4096);
	buf_putc(errs, '{');
	if (tok == NULL) {
		rec_acct_invalid(errs, "token", "validation_required", "Missing required value.");
		return 0;
	}
	/* The token's own collection first, as PocketBase finds the record before it
	 * compares collections: a good token of another one is answered as such. */
	if (token_parse_as(tok, strlen(tok), t, cl) < 0 || cl->exp <= (int64_t)x->f.now ||
	    (c = colls_find(&x->t->colls, cl->coll_id, strlen(cl->coll_id))) == NULL ||
	    !c->auth || strcmp(c->id, cl->coll_id) != 0)
		goto invalid;
	ki = rec_acct_field(c, "tokenKey");
	if ((r = rec_get(x, c, cl->id, strlen(cl->id), "id", row)) < 0) {
		buf_free(errs);
		return -1;
	}
	if (r == 0 || (*row)->v[ki] == NULL || !token_verify_as(tok, strlen(tok), t, c->id,
	    (*row)->v[ki], (*row)->len[ki]))
		goto invalid;
	if (c != x->c) {
		rec_acct_invalid(errs, "token", "validation_token_collection_mismatch",
		    "The provided token is for different auth collection.");
		return 0;
	}
	if (t != TOKEN_PASSWORD_RESET &&
	    ((*row)->v[ei] == NULL || strcmp((*row)->v[ei], cl->email) != 0)) {
		rec_acct_invalid(errs, "token", "validation_token_email_mismatch",
		    "The record email doesn't match with the requested token claims.");
		return 0;
	}
	return 1;
invalid:
	rec_acct_invalid(errs, "token", "validation_invalid_token", "Invalid or expired token.");
	return 0;
}

/*
 * Runs x->t->q, an UPDATE of one record of x->c that ends in the record's id and the
 * tokenKey its token was checked with (rec_acct_where()), as a committed write: 1 when it
 * changed the record, 0 when the record had changed meanwhile (another confirmation of
 * the same token, a new password), -1 answered.
 */
static int
rec_acct_update(struct rec_ctx *x)
{
	return rec_commit(x, rec_exec_write, NULL, 0);
}

/* Starts x->t->q as "UPDATE C SET " with the onupdate autodate fields set to now. */
static void
rec_acct_set(struct rec_ctx *x)
{
	struct sqlb *q = &x->t->q;
	struct timespec ts;
	char *now;
	size_t i;

	/* The statement's values are borrowed until it runs: the date lives in the arena. */
	if ((now = arena_alloc(x->rq->arena, 25)) == NULL)
		now = (char *)(uintptr_t)"";
	else {
		clock_gettime(CLOCK_REALTIME, &ts);
		filter_date(now, ts.tv_sec, (int)(ts.tv_nsec / 1000000));
	}
	sqlb_init(q, &x->t->sql, x->rq->arena, db_backend(x->rq->db));
	buf_puts(q->sql, "UPDATE ");
	coll_quote(q->sql, x->c->name);
	buf_puts(q->sql, " SET ");
	for (i = 0; i < x->c->nfields; i++)
		if (x->c->fields[i].type == COLL_AUTODATE && x->c->fields[i].onupdate) {
			coll_quote(q->sql, x->c->fields[i].name);
			buf_puts(q->sql, " = ");
			sqlb_text(q, now, strlen(now));
			buf_puts(q->sql, ", ");
		}
}

/* Ends x->t->q with the WHERE of row's id and tokenKey. */
static void
rec_acct_where(struct rec_ctx *x, const struct rec_row *row)
{
	struct sqlb *q = &x->t->q;
	size_t ki = rec_acct_field(x->c, "tokenKey");

	buf_puts(q->sql, " WHERE \"id\" = ");
	sqlb_text(q, row->v[0], row->len[0]);
	buf_puts(q->sql, " AND \"tokenKey\" = ");
	sqlb_text(q, row->v[ki], row->len[ki]);
}

/* Appends "col" = $n to x->t->q. */
static void
rec_acct_col(struct rec_ctx *x, const char *col, const char *v, size_t len)
{
	coll_quote(x->t->q.sql, col);
	buf_puts(x->t->q.sql, " = ");
	sqlb_text(&x->t->q, v, len);
}

int
rec_acct_verify(struct rec_ctx *x, const struct rec_row *row)
{
	rec_acct_set(x);
	buf_puts(x->t->q.sql, "\"verified\" = TRUE WHERE \"id\" = ");
	sqlb_text(&x->t->q, row->v[0], row->len[0]);
	return rec_acct_update(x);
}

/* The answer of a confirmation whose UPDATE ran: 204, or the token's 400 when it changed
 * nothing (the token was used or revoked meanwhile). */
static int
rec_acct_done(struct rec_ctx *x, int r)
{
	struct buf errs;

	if (r < 0)
		return 0;
	if (r > 0)
		return resp_set(x->rs, 204, NULL, "", 0);
	buf_init(&errs, 4096);
	buf_putc(&errs, '{');
	rec_acct_invalid(&errs, "token", "validation_invalid_token", "Invalid or expired token.");
	return rec_acct_fail(x, &errs);
}

static int
rec_confirm_verification(struct rec_ctx *x)
{
	size_t vi = rec_acct_field(x->c, "verified");
	struct token_claims cl;
	struct rec_row *row;
	struct buf errs;
	int r;

	if ((r = rec_acct_token(x, TOKEN_VERIFICATION, &cl, &row, &errs)) <= 0)
		return r < 0 ? 0 : rec_acct_fail(x, &errs);
	buf_free(&errs);
	if (row->v[vi] != NULL && (row->v[vi][0] == '1' || row->v[vi][0] == 't'))
		return resp_set(x->rs, 204, NULL, "", 0);
	rec_acct_set(x);
	buf_puts(x->t->q.sql, "\"verified\" = TRUE");
	rec_acct_where(x, row);
	return rec_acct_done(x, rec_acct_update(x));
}

static int
rec_confirm_password_reset(struct rec_ctx *x)
{
	const char *pw = rec_acct_str(x, "password"), *pw2 = rec_acct_str(x, "passwordConfirm");
	size_t ei = rec_acct_field(x->c, "email");
	char hash[PASS_HASH_MAX], key[REC_ACCT_KEY_LEN];
	struct token_claims cl;
	struct rec_row *row;
	struct buf errs;
	int r;

	if ((r = rec_acct_token(x, TOKEN_PASSWORD_RESET, &cl, &row, &errs)) < 0)
		return 0;
	if (pw == NULL)
		rec_acct_invalid(&errs, "password", "validation_required", "Missing required value.");
	else if (strlen(pw) < REC_ACCT_PASS_MIN || strlen(pw) > REC_ACCT_PASS_MAX)
		rec_acct_invalid(&errs, "password", "validation_length_out_of_range",
		    "The length must be between 8 and 71.");
	if (pw != NULL && (pw2 == NULL || strcmp(pw, pw2) != 0))
		rec_acct_invalid(&errs, "passwordConfirm", "validation_values_mismatch",
		    "Values don't match.");
	if (r == 0 || errs.len > 1)
		return rec_acct_fail(x, &errs);
	buf_free(&errs);
	if (pass_hash(pw, strlen(pw), rec_bcrypt_cost, hash) < 0 ||
	    token_random_text(key, sizeof(key)) < 0)
		return rec_error(x->rs, 500, NULL, NULL);
	rec_acct_set(x);
	rec_acct_col(x, "password", hash, strlen(hash));
	buf_puts(x->t->q.sql, ", ");
	rec_acct_col(x, "tokenKey", key, sizeof(key));
	/* The mail reached the record's address: PocketBase counts that as verifying it. */
	if (row->v[ei] != NULL && strcmp(row->v[ei], cl.email) == 0)
		buf_puts(x->t->q.sql, ", \"verified\" = TRUE");
	rec_acct_where(x, row);
	return rec_acct_done(x, rec_acct_update(x));
}

static int
rec_request_email_change(struct rec_ctx *x)
{
	size_t ei = rec_acct_field(x->c, "email");
	struct rec_row *other;
	struct buf errs;
	const char *email;
	int r;

	if (x->auth != x->c)
		return rec_error(x->rs, 401, "The request requires valid record authorization token.",
		    NULL);
	buf_init(&errs, 4096);
	buf_putc(&errs, '{');
	if ((email = rec_acct_email(x, "newEmail", &errs)) == NULL)
		return rec_acct_fail(x, &errs);
	if (x->auth_row->v[ei] != NULL && strcmp(x->auth_row->v[ei], email) == 0) {
		rec_acct_invalid(&errs, "newEmail", "validation_not_in_invalid",
		    "Must be a different email address.");
		return rec_acct_fail(x, &errs);
	}
	if ((r = rec_get(x, x->c, email, strlen(email), "email", &other)) < 0) {
		buf_free(&errs);
		return 0;
	}
	if (r > 0) {
		rec_acct_invalid(&errs, "newEmail", "validation_invalid_new_email",
		    "Invalid new email address.");
		return rec_acct_fail(x, &errs);
	}
	buf_free(&errs);
	rec_acct_mail(x, &rec_mail_change, x->auth_row, email, email);
	return resp_set(x->rs, 204, NULL, "", 0);
}

static int
rec_confirm_email_change(struct rec_ctx *x)
{
	const char *pw = rec_acct_str(x, "password");
	size_t hi = rec_acct_field(x->c, "password");
	char key[REC_ACCT_KEY_LEN];
	struct token_claims cl;
	struct rec_row *row;
	struct buf errs;
	int r, ok;

	if ((r = rec_acct_token(x, TOKEN_EMAIL_CHANGE, &cl, &row, &errs)) < 0)
		return 0;
	if (pw == NULL)
		rec_acct_invalid(&errs, "password", "validation_required", "Missing required value.");
	if (r == 0 || errs.len > 1)
		return rec_acct_fail(x, &errs);
	if ((ok = rec_pass_check(x, pw, row->v[hi])) < 0) {
		buf_free(&errs);
		return 0;
	}
	if (!ok) {
		rec_acct_invalid(&errs, "password", "validation_invalid_password",
		    "Missing or invalid auth record password.");
		return rec_acct_fail(x, &errs);
	}
	buf_free(&errs);
	if (token_random_text(key, sizeof(key)) < 0)
		return rec_error(x->rs, 500, NULL, NULL);
	rec_acct_set(x);
	rec_acct_col(x, "email", cl.new_email, strlen(cl.new_email));
	buf_puts(x->t->q.sql, ", \"verified\" = TRUE, ");
	rec_acct_col(x, "tokenKey", key, sizeof(key));
	rec_acct_where(x, row);
	return rec_acct_done(x, rec_acct_update(x));
}

int
rec_account_route(const char *what)
{
	static const char *const routes[] = { "auth-methods", "request-verification",
	    "confirm-verification", "request-password-reset", "confirm-password-reset",
	    "request-email-change", "confirm-email-change" };
	size_t i;

	for (i = 0; i < sizeof(routes) / sizeof(routes[0]); i++)
		if (strcmp(what, routes[i]) == 0)
			return 1;
	return 0;
}

int
rec_account(struct rec_ctx *x, const char *what)
{
	if (strcmp(what, "auth-methods") == 0)
		return (x->rq->method & (REQ_GET | REQ_HEAD)) != 0 ? rec_auth_methods(x) :
		    rec_error(x->rs, 405, "Method not allowed.", NULL);
	if (x->rq->method != REQ_POST)
		return rec_error(x->rs, 405, "Method not allowed.", NULL);
	if (strcmp(what, "request-verification") == 0)
		return rec_acct_request(x, &rec_mail_verify);
	if (strcmp(what, "request-password-reset") == 0)
		return rec_acct_request(x, &rec_mail_reset);
	if (strcmp(what, "confirm-verification") == 0)
		return rec_confirm_verification(x);
	if (strcmp(what, "confirm-password-reset") == 0)
		return rec_confirm_password_reset(x);
	if (strcmp(what, "request-email-change") == 0)
		return rec_request_email_change(x);
	return rec_confirm_email_change(x);
}
