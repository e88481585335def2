/*
 * resp.c: building and sending responses (see resp.h).
 *
 * The head of the response is formatted with snprintf into a stack buffer and sent with
 * the body through one writer; fcgi2's FCGX_FPrintF is never used (it does not know %zu
 * and silently writes broken headers).
 */
#include <ctype.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "reqid.h"
#include "resp.h"

#define RESP_KEEP	(1024 * 1024)

static const struct {
	int status;
	const char *reason;
} resp_reasons[] = {
	{ 200, "OK" }, { 201, "Created" }, { 202, "Accepted" }, { 204, "No Content" },
	{ 206, "Partial Content" }, { 300, "Multiple Choices" }, { 301, "Moved Permanently" }, { 302, "Found" },
	{ 303, "See Other" }, { 304, "Not Modified" }, { 400, "Bad Request" },
	{ 401, "Unauthorized" }, { 403, "Forbidden" }, { 404, "Not Found" },
	{ 405, "Method Not Allowed" }, { 406, "Not Acceptable" }, { 409, "Conflict" },
	{ 411, "Length Required" }, { 413, "Content Too Large" }, { 414, "URI Too Long" },
	{ 415, "Unsupported Media Type" }, { 416, "Range Not Satisfiable" },
	{ 422, "Unprocessable Content" }, { 429, "Too Many Requests" },
	{ 500, "Internal Server Error" }, { 501, "Not Implemented" }, { 502, "Bad Gateway" },
	{ 503, "Service Unavailable" }, { 504, "Gateway Timeout" },
	{ 507, "Insufficient Storage" },
};

const char *
resp_reason(int status)
{
	size_t i;

	for (i = 0; i < sizeof(resp_reasons) / sizeof(resp_reasons[0]); i++)
		if (resp_reasons[i].status == status)
			return resp_reasons[i].reason;
	return "Unknown";
}

void
resp_init(struct resp *rs, size_t body_cap)
{
	rs->status = 0;
	rs->content_type = NULL;
	rs->head = 0;
	rs->request_id = NULL;
	rs->error_ids = 1;
	buf_init(&rs->headers, 64 * 1024);
	buf_init(&rs->body, body_cap);
}

void
resp_free(struct resp *rs)
{
	buf_free(&rs->headers);
	buf_free(&rs->body);
}

void
resp_reset(struct resp *rs)
{
	rs->status = 0;
	rs->content_type = NULL;
	rs->head = 0;
	rs->request_id = NULL;
	buf_reset(&rs->headers, RESP_KEEP);
	buf_reset(&rs->body, RESP_KEEP);
}

int
resp_header(struct resp *rs, const char *name, const char *value)
{
	const char *p;

	if (*name == '\0')
		return -1;
	for (p = name; *p != '\0'; p++)
		if (!isalnum((unsigned char)*p) && strchr("!#$%&'*+-.^_`|~", *p) == NULL)
			return -1;
	for (p = value; *p != '\0'; p++)
		if (*p == '\r' || *p == '\n')
			return -1;
	if (buf_puts(&rs->headers, name) < 0 || buf_append(&rs->headers, ": ", 2) < 0 ||
	    buf_puts(&rs->headers, value) < 0 || buf_append(&rs->headers, "\r\n", 2) < 0)
		return -1;
	return 0;
}

int
resp_set(struct resp *rs, int status, const char *content_type, const char *body,
    size_t len)
{
	rs->status = status;
	rs->content_type = content_type;
	buf_reset(&rs->body, RESP_KEEP);
	return buf_append(&rs->body, body, len);
}

static int
resp_error_field(struct buf *b, const char *key, const char *value)
{
	if (buf_printf(b, ",\"%s\":", key) < 0)
		return -1;
	if (value == NULL)
		return buf_puts(b, "null");
	return json_escape(b, value, strlen(value));
}

/* The request id if it is one that may go into a header and a JSON string (the serve
 * loop checked it; checked again here, since a header line is at stake), else NULL. */
static const char *
resp_id(const struct resp *rs)
{
	const char *id = rs->request_id;

	return id != NULL && reqid_valid(id, strnlen(id, REQID_MAX + 1)) ? id : NULL;
}

int
resp_error_id(const struct resp *rs, struct buf *b)
{
	const char *id = resp_id(rs);

	if (id == NULL || !rs->error_ids)
		return 0;
	return resp_error_field(b, "requestId", id);
}

static int
resp_error_any(struct resp *rs, int status, const char *code, const char *message,
    const char *details, int details_json, const char *hint)
{
	static const char fallback[] =
	    "{\"code\":\"internal\",\"message\":\"response too large\",\"details\":null,"
	    "\"hint\":null}";
	struct buf *b = &rs->body;

	rs->status = status;
	rs->content_type = "application/json; charset=utf-8";
	buf_reset(b, RESP_KEEP);
	if (buf_puts(b, "{\"code\":") < 0 || json_escape(b, code, strlen(code)) < 0 ||
	    resp_error_field(b, "message", message) < 0 ||
	    (details_json ? buf_printf(b, ",\"details\":%s", details) :
	    resp_error_field(b, "details", details)) < 0 ||
	    resp_error_field(b, "hint", hint) < 0 || resp_error_id(rs, b) < 0 ||
	    buf_putc(b, '}') < 0) {
		/* The cap cannot refuse a few hundred bytes unless it is absurdly low. */
		buf_reset(b, RESP_KEEP);
		rs->status = 500;
		if (buf_append(b, fallback, sizeof(fallback) - 1) < 0)
			buf_reset(b, 0);
	}
	return 0;
}

int
resp_error(struct resp *rs, int status, const char *code, const char *message,
    const char *details, const char *hint)
{
	return resp_error_any(rs, status, code, message, details, 0, hint);
}

int
resp_error_json(struct resp *rs, int status, const char *code, const char *message,
    const char *details_json, const char *hint)
{
	return resp_error_any(rs, status, code, message, details_json, 1, hint);
}

static size_t
resp_put(char *p, const char *s, size_t n)
{
	memcpy(p, s, n);
	return n;
}

static size_t
resp_put_uint(char *p, size_t v)
{
	char tmp[24];
	size_t n = 0, i;

	do
		tmp[n++] = (char)('0' + v % 10);
	while ((v /= 10) != 0);
	for (i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

/*
 * 1 when rs's extra headers hold a Retry-After line.  Every 503 a worker sends is a
 * passing state (a database restarting, a pool busy, a budget spent), so one without it
 * gets "Retry-After: 1" in the head (resp_head()).
 */
static int
resp_has_retry_after(const struct resp *rs)
{
	static const char name[] = "retry-after:";
	const char *p = rs->headers.data, *end;

	if (p == NULL || rs->headers.len == 0)
		return 0;
	end = p + rs->headers.len;
	while (p != NULL && (size_t)(end - p) >= sizeof(name) - 1) {
		if (strncasecmp(p, name, sizeof(name) - 1) == 0)
			return 1;
		if ((p = memchr(p, '\n', (size_t)(end - p))) != NULL)
			p++;
	}
	return 0;
}

/*
 * Formats the head ("Status: 200 OK", Content-Type, Content-Length, X-Request-Id, a
 * 503's Retry-After) by hand: this runs for every request, and printf's machinery costs
 * more than the rest of the framing.  Returns its length; head must hold RESP_HEAD_MAX bytes (a content type past
 * 384 bytes is replaced, the id is at most REQID_MAX).
 */
static size_t
resp_head(const struct resp *rs, char *head)
{
	const char *reason = resp_reason(rs->status);
	const char *ct = rs->content_type ? rs->content_type : "application/octet-stream";
	const char *id = resp_id(rs);
	size_t n = 0, rlen = strlen(reason), clen = strlen(ct);

	/* Reasons are ours and short; a content type this long is a bug: refuse it. */
	if (clen > 384) {
		ct = "application/octet-stream";
		clen = strlen(ct);
	}
	n += resp_put(head + n, "Status: ", 8);
	n += resp_put_uint(head + n, (size_t)rs->status);
	head[n++] = ' ';
	n += resp_put(head + n, reason, rlen);
	n += resp_put(head + n, "\r\n", 2);
	if (id != NULL) {
		n += resp_put(head + n, "X-Request-Id: ", 14);
		n += resp_put(head + n, id, strlen(id));
		n += resp_put(head + n, "\r\n", 2);
	}
	if (rs->status == 503 && !resp_has_retry_after(rs))
		n += resp_put(head + n, "Retry-After: 1\r\n", 16);
	if (rs->status == 204 || rs->status == 304)
		return n;
	n += resp_put(head + n, "Content-Type: ", 14);
	n += resp_put(head + n, ct, clen);
	n += resp_put(head + n, "\r\nContent-Length: ", 18);
	n += resp_put_uint(head + n, rs->body.len);
	n += resp_put(head + n, "\r\n", 2);
	return n;
}

/* Appends base[0..len) to p's parts unless empty. */
static void
resp_part(struct resp_parts *p, const char *base, size_t len)
{
	if (len == 0)
		return;
	/* The parts are only read (writev()). */
	p->part[p->n].iov_base = (void *)(uintptr_t)base;
	p->part[p->n].iov_len = len;
	p->n++;
	p->len += len;
}

void
resp_parts(struct resp *rs, struct resp_parts *p)
{
	if (rs->status == 0)
		resp_error(rs, 500, "internal", "the handler produced no response", NULL, NULL);
	if (buf_failed(&rs->body))
		resp_error(rs, 500, "internal", "the response exceeded the size limit", NULL,
		    NULL);
	if (buf_failed(&rs->headers)) {
		buf_reset(&rs->headers, RESP_KEEP);
		resp_error(rs, 500, "internal", "the response headers exceeded the limit",
		    NULL, NULL);
	}
	if (rs->status < 100 || rs->status > 999)
		resp_error(rs, 500, "internal", "the handler set an invalid status", NULL, NULL);
	p->n = 0;
	p->len = 0;
	resp_part(p, p->head, resp_head(rs, p->head));
	resp_part(p, rs->headers.data, rs->headers.len);
	resp_part(p, "\r\n", 2);
	if (!rs->head && rs->status != 204 && rs->status != 304)
		resp_part(p, rs->body.data, rs->body.len);
}

int
resp_send(struct resp *rs, resp_writer w, void *ctx)
{
	struct resp_parts p;
	int i;

	resp_parts(rs, &p);
	for (i = 0; i < p.n; i++)
		if (w(ctx, p.part[i].iov_base, p.part[i].iov_len) < 0)
			return -1;
	return 0;
}
