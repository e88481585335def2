/*
 * fuzz_fcgi_params: one request through the serve loop (common/serve_req.c) as
 * fcgi2 hands it over: the parameters (REQUEST_METHOD, DOCUMENT_URI, QUERY_STRING,
 * CONTENT_TYPE, CONTENT_LENGTH, HTTP_* ...) and the FCGI_STDIN bytes.
 *
 * Input: "NAME=value" parameters separated by NUL bytes; a double NUL ends them and what
 * follows is the request body (FCGI_STDIN).  The request goes through serve_request():
 * req_init(), the method check (the endpoint allows GET, POST), the body read against
 * CONTENT_LENGTH with a 4 KiB cap, then an echo handler that reads everything a handler
 * can read (parameters, headers, Content-Type, body) and puts a request header into a
 * response header.  The body is read through fcgi2's own stream functions (FCGX_GetStr
 * over a stream built here); the response goes out as a worker writes it, as FastCGI
 * records on the request's connection (a socket pair here), read back and taken apart.
 *
 * Invariants: the records are well framed (FCGI_STDOUT records of this request's id, the
 * stream's empty closing record, then FCGI_END_REQUEST complete, nothing after, nothing
 * left for fcgi2 to write); the response is well framed (a "Status: NNN" line, CRLF-terminated header
 * lines with no bare CR or LF, so no request byte can split it, a blank line, and exactly
 * Content-Length body bytes, none for HEAD); the status is the echo's 200 or one of the
 * loop's 400/405/413, never 500; the handler sees a body exactly when CONTENT_LENGTH is a
 * positive number the input satisfies, and then the very bytes sent; every decoded
 * parameter is NUL-free and its length is right.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <fastcgi.h>
#include <fcgiapp.h>

#include "arena.h"
#include "buf.h"
#include "extern.h"
#include "json.h"
#include "log.h"
#include "req.h"
#include "resp.h"
#include "serve.h"
#include "str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define FUZZ_ENV_MAX	64
#define FUZZ_BODY_CAP	4096

/* What the echo handler saw, for the checks after the response. */
static struct {
	int ran;
	size_t body_len;
	const char *body;
} fuzz_seen;

static int
fuzz_echo(struct req *rq, struct resp *rs)
{
	const char *v;
	size_t i;
	int64_t n;

	fuzz_seen.ran = 1;
	fuzz_seen.body_len = rq->body != NULL ? rq->body_len : 0;
	fuzz_seen.body = rq->body;
	if (rq->method_name == NULL || rq->path == NULL || rq->query == NULL ||
	    (rq->body != NULL && (rq->body_len == 0 || rq->body[rq->body_len] != '\0')))
		abort();
	rs->status = 200;
	rs->content_type = "application/json";
	buf_puts(&rs->body, "{\"path\":");
	json_escape(&rs->body, rq->path, strlen(rq->path));
	buf_puts(&rs->body, ",\"params\":[");
	for (i = 0; i < rq->nparams; i++) {
		const struct req_param *p = &rq->params[i];

		if (strlen(p->key) != p->keylen || strlen(p->val) != p->vallen)
			abort();
		buf_puts(&rs->body, i ? ",[" : "[");
		json_escape(&rs->body, p->key, p->keylen);
		buf_putc(&rs->body, ',');
		json_escape(&rs->body, p->val, p->vallen);
		buf_putc(&rs->body, ']');
		(void)req_param_int(rq, p->key, -1000, 1000, 0, &n);
	}
	buf_printf(&rs->body, "],\"json\":%d,\"body\":%zu}",
	    req_content_type_is(rq, "application/json"), fuzz_seen.body_len);
	/* A request header copied into a response header: refused if it could split it. */
	if ((v = req_header(rq, "X-Echo")) != NULL)
		(void)resp_header(rs, "X-Echo", v);
	(void)req_header(rq, "Accept-Encoding");
	(void)req_header(rq, "Cookie");
	(void)req_header(rq, "Content-Length");
	return 0;
}

static const struct endpoint fuzz_ep = {
	.name = "fuzz",
	.handle = fuzz_echo,
	.methods = REQ_GET | REQ_POST,
	.db = NULL,
};

/* The body's stream, and the connection the records are written to and read back from. */
static struct buf fuzz_out;
static int fuzz_conn[2];

static void
fuzz_fill(FCGX_Stream *s)
{
	s->isClosed = 1;	/* the body is all there is: end of FCGI_STDIN */
}

/* fcgi2 must have nothing left to write once the loop answered. */
static void
fuzz_empty(FCGX_Stream *s, int doClose)
{
	(void)s;
	(void)doClose;
	abort();
}

/*
 * Reads the records of request id off the connection and appends their FCGI_STDOUT
 * content to fuzz_out: records of that id only, the empty one that closes the stream,
 * then FCGI_END_REQUEST (complete), and nothing after it.
 */
static void
fuzz_records(int id)
{
	static unsigned char in[1 << 18];
	size_t len = 0, off = 0;
	ssize_t r;
	int closed = 0;

	while ((r = recv(fuzz_conn[1], in + len, sizeof(in) - len, MSG_DONTWAIT)) > 0)
		len += (size_t)r;
	for (;;) {
		const unsigned char *h = in + off;
		size_t clen;

		if (len - off < FCGI_HEADER_LEN || h[0] != FCGI_VERSION_1 ||
		    ((h[2] << 8) | h[3]) != id)
			abort();
		clen = (size_t)((h[4] << 8) | h[5]);
		if (len - off - FCGI_HEADER_LEN < clen + h[6])
			abort();
		off += FCGI_HEADER_LEN;
		if (h[1] == FCGI_END_REQUEST) {
			if (!closed || clen != 8 || in[off + 4] != FCGI_REQUEST_COMPLETE ||
			    off + clen + h[6] != len)
				abort();
			return;
		}
		if (h[1] != FCGI_STDOUT || closed)
			abort();
		if (clen == 0)
			closed = 1;
		else if (buf_append(&fuzz_out, (const char *)in + off, clen) < 0)
			abort();
		off += clen + h[6];
	}
}

/* Checks the framing; returns the status.  head: HEAD request (no body bytes). */
static int
fuzz_check_response(const char *r, size_t len, int head, size_t *body_off)
{
	const char *p = r, *end = r + len, *eol;
	long long clen = -1;
	int status;

	if (len < 12 || memcmp(r, "Status: ", 8) != 0)
		abort();
	status = (r[8] - '0') * 100 + (r[9] - '0') * 10 + (r[10] - '0');
	for (;;) {
		eol = memchr(p, '\n', (size_t)(end - p));
		if (eol == NULL || eol == p || eol[-1] != '\r')
			abort();
		if (memchr(p, '\r', (size_t)(eol - 1 - p)) != NULL)
			abort();
		if (eol - 1 == p)
			break;	/* the blank line */
		if (strncmp(p, "Content-Length: ", 16) == 0)
			clen = strtoll(p + 16, NULL, 10);
		else if (p != r && memchr(p, ':', (size_t)(eol - p)) == NULL)
			abort();
		p = eol + 1;
	}
	p = eol + 1;
	*body_off = (size_t)(p - r);
	if (status == 204 || status == 304) {
		if (p != end)
			abort();
		return status;
	}
	if (clen < 0 || (head ? p != end : (long long)(end - p) != clen))
		abort();
	return status;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct serve_settings set = {
		.threads = 1, .body_max = FUZZ_BODY_CAP, .arena_max = 1 << 20, .resp_max = 1 << 16
	};
	static struct serve_thread t;
	static int ready;
	char *copy, *envp[FUZZ_ENV_MAX + 1], *p, *end;
	const char *body = NULL, *cl, *m;
	size_t body_len = 0, n = 0, off;
	FCGX_Stream in, out;
	FCGX_Request r;
	struct serve_io io;
	struct req probe;
	int64_t want = -1;
	int status, head;

	if (!ready) {
		t.ep = &fuzz_ep;
		t.set = &set;
		if ((t.arena = arena_new(set.arena_max)) == NULL)
			abort();
		resp_init(&t.rs, set.resp_max);
		buf_init(&fuzz_out, 0);
		if (socketpair(AF_UNIX, SOCK_STREAM, 0, fuzz_conn) < 0)
			abort();
		log_init("fuzz");
		ready = 1;
	}
	/* The parameters, NUL-terminated each, then the body after a double NUL. */
	if ((copy = malloc(size + 1)) == NULL)
		abort();
	memcpy(copy, data, size);
	copy[size] = '\0';
	end = copy + size;
	for (p = copy; p < end && n < FUZZ_ENV_MAX; p += strlen(p) + 1) {
		if (*p == '\0') {
			body = p + 1;
			body_len = (size_t)(end - body);
			break;
		}
		envp[n++] = p;
	}
	envp[n] = NULL;

	memset(&in, 0, sizeof(in));
	in.rdNext = in.stopUnget = (unsigned char *)(uintptr_t)(body ? body : "");
	in.stop = in.rdNext + body_len;
	in.wrNext = in.stop;
	in.isReader = 1;
	in.fillBuffProc = fuzz_fill;
	memset(&out, 0, sizeof(out));
	out.emptyBuffProc = fuzz_empty;
	memset(&r, 0, sizeof(r));
	r.in = &in;
	r.out = &out;
	r.envp = envp;
	r.ipcFd = fuzz_conn[0];
	r.requestId = 1 + (int)(size % 65535);
	io.fcgi = &r;

	memset(&fuzz_seen, 0, sizeof(fuzz_seen));
	buf_reset(&fuzz_out, 1 << 16);
	serve_request(&t, &io, envp);
	if (!out.isClosed || !out.wasFCloseCalled || out.FCGI_errno != 0)
		abort();
	fuzz_records(r.requestId);

	/* What the loop had to decide, seen independently of it. */
	if (req_init(&probe, envp, t.arena) != REQ_OK)
		probe.method = 0;
	m = req_env(&probe, "REQUEST_METHOD");
	head = m != NULL && strcmp(m, "HEAD") == 0 && probe.method == REQ_HEAD;
	cl = req_env(&probe, "CONTENT_LENGTH");
	if (cl != NULL && *cl != '\0' && str_to_int(cl, strlen(cl), 0, INT64_MAX, &want) < 0)
		want = -2;
	status = fuzz_check_response(fuzz_out.data, fuzz_out.len, head, &off);
	if (status != 200 && status != 400 && status != 405 && status != 413)
		abort();
	if (status == 200) {
		if (!fuzz_seen.ran || want < -1 || (want > 0 && (uint64_t)want > FUZZ_BODY_CAP))
			abort();
		if (want > 0 && (fuzz_seen.body_len != (size_t)want || (size_t)want > body_len ||
		    memcmp(fuzz_seen.body, body, (size_t)want) != 0))
			abort();
		if (want <= 0 && fuzz_seen.body_len != 0)
			abort();
		if (!head) {
			cJSON *j = cJSON_ParseWithLength(fuzz_out.data + off, fuzz_out.len - off);

			if (j == NULL ||
			    !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(j, "params")))
				abort();
			cJSON_Delete(j);
		}
	}
	arena_reset(t.arena);
	resp_reset(&t.rs);
	free(copy);
	return 0;
}
