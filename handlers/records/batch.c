/*
 * batch.c: POST /api/batch, PocketBase's batch API (the SDK's pb.createBatch()): several
 * creates, updates, upserts and deletes, across collections, stored all or nothing.
 *
 *   POST /api/batch  {"requests":[{"method","url","headers","body"}, ...]} as JSON, or as
 *                    multipart/form-data whose field "@jsonPayload" holds that JSON (what
 *                    the SDK sends); 200 [{"status":N,"body":...}, ...] in order (a
 *                    delete's body null)
 *
 * A request is POST /api/collections/C/records (create), PUT the same (upsert: an update
 * when the body's "id" names a record of C, else a create), PATCH or DELETE
 * /api/collections/C/records/ID, each with an optional ?query (fields=, expand=).  Each
 * runs the single request's own code (write.c) with the batch's Authorization and is
 * checked against its own collection's rule; "headers" is read and not used.
 *
 * The whole batch is one committed write (rec_commit(), common/dbwrite.h): on SQLite one
 * write of the group commit (its savepoint undone when a request fails), on PostgreSQL a
 * transaction of its own (DB_WRITE_TXN) on one held connection, which every statement of
 * every request, its reads included, runs on; run again whole after a serialization
 * failure.  The requests' own rec_commit() calls run their writes at once inside it
 * (x->in_batch).  A request that fails ends the batch: nothing is stored and the answer is
 * 400 {"data":{"requests":{"I":{"code":"batch_request_failed","message":"Batch request
 * failed.","response":{the request's own error}}}},"message":"Batch transaction failed.",
 * "status":400}.  A method or URL that is not one of the four (a GET, another path, a
 * "../") fails its request with a 400 of its own.
 *
 * Statuses: 200; 400 (a body that is not the batch's JSON: "Failed to read the submitted
 * batch data."; no request or more than SLUICE_RECORDS_BATCH_MAX: "Invalid batch request
 * data."; a failed request, above); 401 (an invalid token); 403 (SLUICE_RECORDS_BATCH=off,
 * main.c); 503 (the request's time budget spent, the database unavailable).  The body's
 * size is bounded by the worker's body cap, its nesting by json_parse()'s depth; file
 * parts are refused (no file field is served).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "clock.h"
#include "json.h"
#include "records/multipart.h"
#include "records.h"

#define REC_BATCH_DEPTH	36	/* a single body's 32 levels, below requests[i].body */
#define REC_BATCH_OUT_MAX	(16 << 20)

int rec_batch_on = 1;
int rec_batch_max = 50;

struct rec_batch {
	cJSON *reqs;		/* the parsed "requests" array (owned by rec_batch()) */
	struct resp sub;	/* each request's answer, in turn */
	struct buf out;		/* the answers so far, "[{...},..." */
	long long deadline;	/* the request's time budget's end (ms), 0: none; read
				 * from its own connection (on SQLite the write runs on
				 * another thread's, whose budget is its own request's) */
};

/* Answers the batch's 400 of a malformed body.  Returns -1. */
static int
rec_batch_unreadable(struct rec_ctx *x)
{
	rec_error(x->rs, 400, "Failed to read the submitted batch data.", NULL);
	return -1;
}

/*
 * Parses the body into *root and checks its shape: {"requests":[...]} of 1 to
 * rec_batch_max objects, each with a string "method" and "url" and a "body" that is an
 * object (made an empty one when absent or null).  0 with *root (caller frees), or -1
 * answered.
 */
static int
rec_batch_parse(struct rec_ctx *x, cJSON **root)
{
	const char *ct = req_header(x->rq, "Content-Type"), *p = x->rq->body;
	size_t len = x->rq->body_len;
	enum json_err je;
	cJSON *reqs, *it, *bd;
	char data[160];
	int n;

	*root = NULL;
	if (p == NULL || len == 0)
		return rec_batch_unreadable(x);
	if (req_content_type_is(x->rq, "multipart/form-data")) {
		if (multipart_sole_field(ct, x->rq->body, x->rq->body_len, "@jsonPayload", &p,
		    &len) < 0)
			return rec_batch_unreadable(x);
	} else if (ct != NULL && !req_content_type_is(x->rq, "application/json"))
		return rec_batch_unreadable(x);
	if ((*root = json_parse(p, len, REC_BATCH_DEPTH, &je, NULL)) == NULL ||
	    !cJSON_IsObject(*root) || json_has_nul_escape(p, len) ||
	    !json_numbers_finite(*root))
		return rec_batch_unreadable(x);
	reqs = cJSON_GetObjectItemCaseSensitive(*root, "requests");
	if (reqs != NULL && !cJSON_IsArray(reqs) && !cJSON_IsNull(reqs))
		return rec_batch_unreadable(x);
	n = cJSON_GetArraySize(reqs);
	if (n == 0 || n > rec_batch_max) {
		if (n == 0)
			(void)snprintf(data, sizeof(data), "{\"requests\":{\"code\":"
			    "\"validation_required\",\"message\":\"Cannot be blank.\"}}");
		else
			(void)snprintf(data, sizeof(data), "{\"requests\":{\"code\":"
			    "\"validation_length_too_long\",\"message\":\"The length must be no "
			    "more than %d.\"}}", rec_batch_max);
		rec_error(x->rs, 400, "Invalid batch request data.", data);
		return -1;
	}
	cJSON_ArrayForEach(it, reqs) {
		if (!cJSON_IsObject(it) ||
		    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, "method")) ||
		    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(it, "url")))
			return rec_batch_unreadable(x);
		bd = cJSON_GetObjectItemCaseSensitive(it, "body");
		if (bd != NULL && !cJSON_IsObject(bd) && !cJSON_IsNull(bd))
			return rec_batch_unreadable(x);
		if (bd == NULL || cJSON_IsNull(bd)) {
			cJSON_DeleteItemFromObjectCaseSensitive(it, "body");
			if (cJSON_AddObjectToObject(it, "body") == NULL)
				return rec_batch_unreadable(x);
		}
	}
	return 0;
}

/*
 * Reads a request's method and URL into y (its collection, id, query parameters and
 * method): the method's REQ_ bit, or 0 with a 400 answered in y->rs when they are not one
 * of the batch's four (or the query is malformed).
 */
static unsigned
rec_batch_route(struct rec_ctx *y, const char *method, const char *url)
{
	static const char pre[] = "/api/collections/";
	unsigned m = 0;
	const char *name, *p;
	size_t n, k;
	struct req_param *params;
	char *q;

	if (strcasecmp(method, "POST") == 0 || strcasecmp(method, "PUT") == 0)
		m = strcasecmp(method, "POST") == 0 ? REQ_POST : REQ_PUT;
	else if (strcasecmp(method, "PATCH") == 0)
		m = REQ_PATCH;
	else if (strcasecmp(method, "DELETE") == 0)
		m = REQ_DELETE;
	if (m == 0 || strncmp(url, pre, sizeof(pre) - 1) != 0)
		goto bad;
	name = url + sizeof(pre) - 1;
	n = strcspn(name, "/?");
	if (n == 0 || strncmp(name + n, "/records", 8) != 0)
		goto bad;
	p = name + n + 8;
	if (*p == '/') {
		k = strcspn(p + 1, "/?");
		if (k == 0 || k > 64 || p[1 + k] == '/' ||
		    (y->id = arena_strndup(y->rq->arena, p + 1, k)) == NULL)
			goto bad;
		p += 1 + k;
	}
	if ((*p != '\0' && *p != '?') || ((m & (REQ_POST | REQ_PUT)) != 0) != (y->id == NULL))
		goto bad;
	if ((y->c = colls_find(&y->t->colls, name, n)) == NULL) {
		rec_error(y->rs, 404, "Missing collection context.", NULL);
		return 0;
	}
	/* The query's parameters, split by the form parser's rules. */
	if (*p == '?') {
		if ((q = arena_strndup(y->rq->arena, p + 1, strlen(p + 1))) == NULL)
			goto bad;
		y->rq->body = q;
		y->rq->body_len = strlen(q);
		if (req_form(y->rq, &params, &n) != REQ_OK)
			goto bad;
		y->rq->params = params;
		y->rq->nparams = n;
	} else {
		y->rq->params = NULL;
		y->rq->nparams = 0;
	}
	y->rq->body = NULL;
	y->rq->body_len = 0;
	y->rq->method = m;
	y->rq->method_name = method;
	return m;
bad:
	rec_error(y->rs, 400, "Unknown batch request action.", NULL);
	return 0;
}

/* Runs request it of the batch as y, on x's connection: its answer is in y->rs. */
static void
rec_batch_one(struct rec_ctx *x, struct rec_batch *b, cJSON *it, struct rec_ctx *y,
    struct req *rq)
{
	const cJSON *id;
	struct rec_row *row;
	unsigned m;

	*rq = *x->rq;
	memset(y, 0, sizeof(*y));
	y->rq = rq;
	y->rs = &b->sub;
	y->t = x->t;
	y->auth = x->auth;
	y->auth_row = x->auth_row;
	y->superuser = x->superuser;
	y->f = x->f;
	y->in_batch = 1;
	y->body = cJSON_GetObjectItemCaseSensitive(it, "body");
	y->f.body = y->body;
	resp_reset(&b->sub);
	if ((m = rec_batch_route(y, cJSON_GetObjectItemCaseSensitive(it, "method")->valuestring,
	    cJSON_GetObjectItemCaseSensitive(it, "url")->valuestring)) == 0)
		return;
	if (m == REQ_PUT) {
		/* An upsert: an update of the record the body's id names, if there is one. */
		id = cJSON_GetObjectItemCaseSensitive(y->body, "id");
		if (cJSON_IsString(id) && id->valuestring[0] != '\0' &&
		    strlen(id->valuestring) <= 64) {
			int r = rec_get(y, y->c, id->valuestring, strlen(id->valuestring), "id",
			    &row);

			if (r < 0)
				return;
			if (r == 1)
				y->id = id->valuestring;
		}
		m = y->id != NULL ? REQ_PATCH : REQ_POST;
		rq->method = m;
	}
	if (m == REQ_POST)
		(void)rec_create(y);
	else if (m == REQ_PATCH)
		(void)rec_update(y);
	else
		(void)rec_delete(y);
}

/* Answers the batch's failure at request i from its answer in b->sub.  Returns -1. */
static int
rec_batch_failed(struct rec_ctx *x, struct rec_batch *b, int i)
{
	struct buf d;
	const struct buf *sb = &b->sub.body;

	buf_init(&d, (1 << 20) + 256);
	buf_printf(&d, "{\"requests\":{\"%d\":{\"code\":\"batch_request_failed\","
	    "\"message\":\"Batch request failed.\",\"response\":", i);
	if (sb->len > 0)
		buf_append(&d, sb->data, sb->len);
	else
		buf_puts(&d, "null");
	buf_puts(&d, "}}}");
	rec_error(x->rs, 400, "Batch transaction failed.", buf_failed(&d) ? NULL : d.data);
	buf_free(&d);
	return -1;
}

/*
 * The batch's write (rec_commit()'s fn, on the batch's connection): every request in
 * order, each answer appended to b->out.  It may run more than once (a replay, a retry),
 * so it starts its output anew.  0, or -1 with the batch's error answered.
 */
static int
rec_batch_run(struct rec_ctx *x, void *arg)
{
	struct rec_batch *b = arg;
	struct rec_ctx y;
	struct req rq;
	cJSON *it;
	int i = 0;

	buf_reset(&b->out, 1 << 20);
	buf_putc(&b->out, '[');
	cJSON_ArrayForEach(it, b->reqs) {
		if (b->deadline != 0 && clock_now_ms() >= b->deadline) {
			resp_reset(&b->sub);
			rec_error(&b->sub, 503, "The batch ran out of time.", NULL);
			return rec_batch_failed(x, b, i);
		}
		rec_batch_one(x, b, it, &y, &rq);
		if (b->sub.status < 200 || b->sub.status > 299)
			return rec_batch_failed(x, b, i);
		buf_printf(&b->out, "%s{\"status\":%d,\"body\":", i > 0 ? "," : "",
		    b->sub.status);
		if (b->sub.body.len > 0)
			buf_append(&b->out, b->sub.body.data, b->sub.body.len);
		else
			buf_puts(&b->out, "null");
		buf_putc(&b->out, '}');
		i++;
	}
	buf_putc(&b->out, ']');
	if (buf_failed(&b->out)) {
		rec_error(x->rs, 413, "The batch's answer is too large.", NULL);
		return -1;
	}
	return 0;
}

int
rec_batch(struct rec_ctx *x)
{
	struct rec_batch b;
	cJSON *root;

	if (rec_batch_parse(x, &root) < 0) {
		cJSON_Delete(root);
		return 0;
	}
	memset(&b, 0, sizeof(b));
	b.reqs = cJSON_GetObjectItemCaseSensitive(root, "requests");
	b.deadline = db_deadline(x->rq->db);
	resp_init(&b.sub, 1 << 20);
	buf_init(&b.out, REC_BATCH_OUT_MAX);
	if (rec_commit(x, rec_batch_run, &b, 1) == 0 &&
	    resp_set(x->rs, 200, "application/json", b.out.data, b.out.len) < 0)
		rec_error(x->rs, 500, NULL, NULL);
	buf_free(&b.out);
	resp_free(&b.sub);
	cJSON_Delete(root);
	return 0;
}
