/*
 * records: PocketBase's records API (its dialect: docs/records.md), mounted at /api/.
 *
 *   GET|HEAD /api/health                                  200 {"message","code","data"}
 *   GET      /api/collections/C/records                   list: page (>= 1), perPage
 *            (1..1000, default 30), sort, filter (3,500 characters, 200 comparisons),
 *            expand (6 levels), fields, skipTotal
 *   GET      /api/collections/C/records/ID                view; 404 when absent or hidden
 *   POST     /api/collections/C/records                   create: 200 with the record
 *   PATCH    /api/collections/C/records/ID                update: 200 with the record
 *   DELETE   /api/collections/C/records/ID                delete: 204
 *   POST     /api/collections/C/auth-with-password        {"identity","password"}: 200
 *            {"record","token"}; 400 when wrong
 *   POST     /api/collections/C/auth-refresh              with a valid token of C: 200
 *            {"record","token"} with a new token; 401 otherwise, 403 for an
 *            impersonation's token (not refreshable)
 *   POST     /api/collections/C/impersonate/ID            a superuser's, {"duration"}
 *            (seconds, >= 0): 200 {"record","token"}, a token of record ID that is not
 *            refreshable; 401 without a token, 403 for another record's, 404 no record
 *   POST     /api/batch                                   several writes, all or nothing
 *            (batch.c); 403 when SLUICE_RECORDS_BATCH=off
 *   GET      /api/collections/C/auth-methods              the sign-in methods (account.c)
 *   POST     /api/collections/C/request-verification, confirm-verification,
 *            request-password-reset, confirm-password-reset, request-email-change,
 *            confirm-email-change                         the account flows: 204 (account.c)
 *   POST     /api/collections/C/request-otp, auth-with-otp  sign-in with a one-time
 *            password mailed to the record, for the collections SLUICE_RECORDS_OTP names
 *            (otp.c)
 *
 * Bodies: JSON, application/x-www-form-urlencoded or multipart/form-data (form.c).
 *
 * Statuses: 400 (malformed parameters or body, failed validation), 401 (an invalid or
 * expired Authorization token), 403 (a superusers-only rule, @request in a filter), 404
 * (unknown collection or record, or a rule that hides it), 429 (a sign-in or account
 * request past its rate limit), 503 (database unavailable).
 * Errors are {"data":{},"message":"...","status":N}.
 *
 * Tables touched: _collections (read at start-up and after SIGHUP) and every collection's
 * table it declares (sql/records/collections.sql).  Settings: SLUICE_BCRYPT_COST (4..31,
 * default 10; the endpoint key bcrypt_cost), SLUICE_RECORDS_SECRET_FILE (token.h),
 * SLUICE_RECORDS_BATCH (on|off), SLUICE_RECORDS_BATCH_MAX (1..1000, default 50),
 * SLUICE_RECORDS_SENDMAIL, SLUICE_RECORDS_APP_URL and SLUICE_RECORDS_MAIL_FROM (the
 * account flows' mail: apps/records/mail.h), SLUICE_RECORDS_AUTH_LIMIT (0..1000000,
 * default 60), SLUICE_RECORDS_AUTH_LIMIT_IDENTITY (0..1000000, default 20) and
 * SLUICE_RECORDS_AUTH_LIMIT_EXEMPT (default loopback): the rate limits of sign-in and the
 * account flows, 429 past them (limit.c); SLUICE_RECORDS_OTP (none by default),
 * SLUICE_RECORDS_OTP_DURATION (1..86400 s, default 180) and SLUICE_RECORDS_OTP_LENGTH
 * (4..16 digits, default 8): the one-time passwords (otp.c).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "json.h"
#include "log.h"
#include "records.h"
#include "records/mail.h"
#include "records/token.h"
#include "serve.h"
#include "settings.h"
#include "str.h"


/* The thread's state: the collections as this thread's connection reads them. */
static void *
rec_thread_init(struct db *db)
{
	struct rec_thread *t;
	char err[256];

	if ((t = calloc(1, sizeof(*t))) == NULL)
		return NULL;
	buf_init(&t->sql, REC_SQL_MAX);
	if (colls_load(&t->colls, db, err, sizeof(err)) < 0) {
		log_err("records: %s", err);
		buf_free(&t->sql);
		free(t);
		return NULL;
	}
	return t;
}

/* After a SIGHUP: _collections again (the old ones stay when the new ones fail). */
static int
rec_thread_reload(void *state, struct db *db)
{
	struct rec_thread *t = state;
	struct colls cs;
	char err[256];

	if (colls_load(&cs, db, err, sizeof(err)) < 0) {
		log_err("records: %s", err);
		return -1;
	}
	colls_free(&t->colls);
	t->colls = cs;
	/* The collections point to their set: resolve them where it now lives. */
	return coll_resolve(&t->colls, err, sizeof(err));
}

static void
rec_thread_fini(void *state)
{
	struct rec_thread *t = state;

	colls_free(&t->colls);
	buf_free(&t->sql);
	free(t);
}

/* Splits the route below /api/collections/: 0 with x->c and x->id set and *what the
 * last part ("records", "auth-with-password", "auth-refresh" or an account flow's, for an
 * auth collection), -1 unknown (404 answered). */
static int
rec_route(struct rec_ctx *x, const char **what)
{
	const char *p = x->rq->path, *name, *slash;
	size_t n;

	if (strncmp(p, "/api/", 5) != 0)
		goto notfound;
	p += 5;
	if (strncmp(p, "collections/", 12) != 0)
		goto notfound;
	name = p + 12;
	if ((slash = strchr(name, '/')) == NULL)
		goto notfound;
	n = (size_t)(slash - name);
	if ((x->c = colls_find(&x->t->colls, name, n)) == NULL)
		goto notfound;
	p = slash + 1;
	if ((strcmp(p, "auth-with-password") == 0 || strcmp(p, "auth-refresh") == 0 ||
	    rec_account_route(p) || rec_otp_route(p)) && x->c->auth) {
		*what = p;
		return 0;
	}
	if (strncmp(p, "impersonate/", 12) == 0 && x->c->auth) {
		*what = "impersonate";
		x->id = p + 12;
		if (*x->id == '\0' || strlen(x->id) > 64 || strchr(x->id, '/') != NULL)
			goto notfound;
		return 0;
	}
	if (strncmp(p, "records", 7) != 0 || (p[7] != '\0' && p[7] != '/'))
		goto notfound;
	*what = "records";
	if (p[7] == '/') {
		x->id = p + 8;
		if (*x->id == '\0' || strlen(x->id) > 64 || strchr(x->id, '/') != NULL)
			goto notfound;
	}
	return 0;
notfound:
	rec_error(x->rs, 404, NULL, NULL);
	return -1;
}

/* Parses a JSON object body into x->body; 0, or -1 with a 400 answered. */
static int
rec_body(struct rec_ctx *x)
{
	enum json_err je;

	if (x->rq->body == NULL || x->rq->body_len == 0) {
		x->body = cJSON_CreateObject();
		return x->body == NULL ? -1 : 0;
	}
	if (req_content_type_is(x->rq, "application/x-www-form-urlencoded"))
		return rec_form(x);
	if (req_content_type_is(x->rq, "multipart/form-data"))
		return rec_multipart(x);
	if (!req_content_type_is(x->rq, "application/json") &&
	    req_header(x->rq, "Content-Type") != NULL) {
		rec_error(x->rs, 400, "Only JSON and form bodies are supported.", NULL);
		return -1;
	}
	x->body = json_parse(x->rq->body, x->rq->body_len, 32, &je, NULL);
	/* A \u0000 would cut a string where cJSON ends it, and 1e999 is no number a column
	 * holds: both are refused, not stored altered. */
	if (x->body == NULL || !cJSON_IsObject(x->body) ||
	    json_has_nul_escape(x->rq->body, x->rq->body_len) || !json_numbers_finite(x->body)) {
		rec_error(x->rs, 400, "Failed to load the submitted data due to invalid formatting.",
		    NULL);
		return -1;
	}
	x->f.body = x->body;
	return 0;
}

static int
handle(struct req *rq, struct resp *rs)
{
	static const char health[] = "{\"message\":\"API is healthy.\",\"code\":200,\"data\":{}}";
	struct rec_ctx x;
	const char *what = "";
	int rc = 0;

	memset(&x, 0, sizeof(x));
	x.rq = rq;
	x.rs = rs;
	x.f.now = time(NULL);
	x.f.rule = 1;
	if (strcmp(rq->path, "/api/health") == 0) {
		if (!(rq->method & (REQ_GET | REQ_HEAD)))
			return rec_error(rs, 405, "Method not allowed.", NULL);
		return resp_set(rs, 200, "application/json", health, sizeof(health) - 1);
	}
	x.t = rq->thread;
	if (strcmp(rq->path, "/api/batch") == 0) {
		if (!rec_batch_on)
			return rec_error(rs, 403, "Batch requests are not allowed.", NULL);
		if (rq->method != REQ_POST)
			return rec_error(rs, 405, "Method not allowed.", NULL);
		return rec_authorize(&x, 0) < 0 ? 0 : rec_batch(&x);
	}
	if (rec_route(&x, &what) < 0)
		return 0;
	/* A record's write with a malformed Idempotency-Key is refused before anything runs. */
	if (strcmp(what, "records") == 0 && (rq->method & (REQ_POST | REQ_PATCH | REQ_DELETE)) &&
	    rec_idem_check(&x) < 0)
		return 0;
	/* A read, its token's check included: on PostgreSQL its statements ride the
	 * pipelined batches' read segment (one Sync with the other reads of a batch, no
	 * transaction of a group commit around them), and may go to a standby (db_read=), as
	 * the REST API's GETs do. */
	if (rq->method & (REQ_GET | REQ_HEAD))
		db_route(rq->db, DB_ROUTE_READ);
	/* A create or an update reads its token's record inside its write (write.c). */
	if (rec_authorize(&x, strcmp(what, "records") == 0 &&
	    ((rq->method == REQ_POST && x.id == NULL) ||
	    (rq->method == REQ_PATCH && x.id != NULL))) < 0)
		return 0;
	if (rec_account_route(what)) {
		/* A body refused is answered; what it parsed is freed below all the same. */
		if (rq->method != REQ_POST || rec_body(&x) == 0)
			rc = rec_limit(&x, what) ? 0 : rec_account(&x, what);
	} else if (rec_otp_route(what)) {
		if (rq->method != REQ_POST)
			return rec_error(rs, 405, "Method not allowed.", NULL);
		if (rec_body(&x) == 0)
			rc = rec_limit(&x, what) ? 0 : rec_otp(&x, what);
	} else if (strcmp(what, "impersonate") == 0) {
		if (rq->method != REQ_POST)
			return rec_error(rs, 405, "Method not allowed.", NULL);
		if (rec_body(&x) == 0)
			rc = rec_auth_impersonate(&x);
	} else if (strncmp(what, "auth-", 5) == 0) {
		if (rq->method != REQ_POST)
			return rec_error(rs, 405, "Method not allowed.", NULL);
		if (rec_body(&x) == 0 && !rec_limit(&x, what))
			rc = what[5] == 'w' ? rec_auth_password(&x) : rec_auth_refresh(&x);
	} else if (rq->method & (REQ_GET | REQ_HEAD))
		rc = x.id ? rec_view(&x) : rec_list(&x);
	else if (rq->method == REQ_POST && x.id == NULL) {
		if (rec_body(&x) == 0)
			rc = rec_create(&x);
	} else if (rq->method == REQ_PATCH && x.id != NULL) {
		if (rec_body(&x) == 0)
			rc = rec_update(&x);
	} else if (rq->method == REQ_DELETE && x.id != NULL)
		rc = rec_delete(&x);
	else
		rc = rec_error(rs, 405, "Method not allowed.", NULL);
	cJSON_Delete(x.body);
	return rc;
}

static const struct endpoint endpoint = {
	.name = "records",
	.handle = handle,
	.methods = REQ_GET | REQ_HEAD | REQ_POST | REQ_PATCH | REQ_DELETE,
	.db = &serve_db,
	.dialect_errors = 1,
	.thread_init = rec_thread_init,
	.thread_reload = rec_thread_reload,
	.thread_fini = rec_thread_fini,
};

int
main(int argc, char **argv)
{
	long long cost, on, max, lim, lim_id;
	int rc;

	if (settings_int(SETTING_BCRYPT_COST, &cost) < 0 ||
	    settings_int(SETTING_RECORDS_BATCH, &on) < 0 ||
	    settings_int(SETTING_RECORDS_BATCH_MAX, &max) < 0 ||
	    settings_int(SETTING_RECORDS_AUTH_LIMIT, &lim) < 0 ||
	    settings_int(SETTING_RECORDS_AUTH_LIMIT_IDENTITY, &lim_id) < 0)
		return 1;
	rec_limit_addr = (long)lim;
	rec_limit_ident = (long)lim_id;
	rec_limit_exempt = settings_get(SETTING_RECORDS_AUTH_LIMIT_EXEMPT);
	rec_bcrypt_cost = (int)cost;
	rec_batch_on = on == 1;
	rec_batch_max = (int)max;
	if (token_init(NULL) < 0 || rec_publish_init() < 0)
		return 1;
	/* Before serve_main() applies the system call filter, which forbids fork and execve:
	 * the helper that runs the mail command is forked now (apps/records/mail.h). */
	if (mail_start(settings_get(SETTING_RECORDS_SENDMAIL)) < 0)
		return 1;
	rc = serve_main(argc, argv, &endpoint);
	mail_stop();
	rec_auth_cache_free();
	return rc;
}
