/* test_evfcgi: the non-blocking FastCGI responder's records (common/evfcgi.c) without a
 * socket: a request whole, byte by byte and in a stream; keep-conn; malformed and hostile
 * input (a wrong version, truncated records, lengths past the limits or past the record,
 * interleaved request ids, ABORT_REQUEST, management records); an output past its cap. */
#define _GNU_SOURCE	/* memmem() */ /* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "evfcgi.h"
#include "../lib/harness.h"

/* What the test endpoint saw and does. */
struct seen {
	int requests, gone;
	int keep_open;		/* leave the request open (a stream) */
	int fail;		/* return -1 without answering */
	char method[32], body[64];
	struct evfcgi_req *open;
};

static int
on_request(void *ctx, struct evfcgi_req *r)
{
	struct seen *s = ctx;
	const char *m = evfcgi_param(r, "REQUEST_METHOD");
	const char *b;
	size_t n;

	s->requests++;
	(void)snprintf(s->method, sizeof(s->method), "%s", m != NULL ? m : "");
	b = evfcgi_body(r, &n);
	(void)snprintf(s->body, sizeof(s->body), "%.*s", (int)n, b);
	if (s->fail)
		return -1;
	if (s->keep_open) {
		s->open = r;
		return evfcgi_write(r, "Status: 200 OK\r\n\r\n", 18);
	}
	(void)evfcgi_write(r, "Status: 204 No Content\r\n\r\n", 26);
	return evfcgi_finish(r);
}

static void
on_gone(void *ctx, struct evfcgi_req *r)
{
	struct seen *s = ctx;

	CHECK(r == s->open);
	s->gone++;
	s->open = NULL;
}

static const struct evfcgi_ops ops = { on_request, on_gone, NULL, 0, NULL, NULL };
static const struct evfcgi_limits lim = { 256, 64, 4096, 100 };

/* Appends one record (version 1, no padding unless pad). */
static void
rec(struct buf *b, int version, int type, unsigned id, const void *p, size_t n, int pad)
{
	unsigned char h[8] = { (unsigned char)version, (unsigned char)type,
	    (unsigned char)(id >> 8), (unsigned char)id, (unsigned char)(n >> 8),
	    (unsigned char)n, (unsigned char)pad, 0 };
	static const char zeros[256];

	buf_append(b, h, 8);
	if (n > 0)
		buf_append(b, p, n);
	if (pad > 0)
		buf_append(b, zeros, (size_t)pad);
}

static void
begin(struct buf *b, unsigned id, int keep)
{
	unsigned char body[8] = { 0, 1, (unsigned char)keep, 0, 0, 0, 0, 0 };

	rec(b, 1, EVFCGI_BEGIN_REQUEST, id, body, 8, 0);
}

/* A name-value pair, with 4-byte lengths when long4. */
static void
nv(struct buf *b, const char *name, const char *val, int long4)
{
	size_t ln = strlen(name), lv = strlen(val);
	unsigned char l[8];

	if (long4) {
		l[0] = (unsigned char)(0x80 | (ln >> 24));
		l[1] = (unsigned char)(ln >> 16);
		l[2] = (unsigned char)(ln >> 8);
		l[3] = (unsigned char)ln;
		l[4] = (unsigned char)(0x80 | (lv >> 24));
		l[5] = (unsigned char)(lv >> 16);
		l[6] = (unsigned char)(lv >> 8);
		l[7] = (unsigned char)lv;
		buf_append(b, l, 8);
	} else {
		l[0] = (unsigned char)ln;
		l[1] = (unsigned char)lv;
		buf_append(b, l, 2);
	}
	buf_append(b, name, ln);
	buf_append(b, val, lv);
}

/* A whole request: BEGIN, PARAMS (method, a long pair), empty PARAMS, body, empty STDIN. */
static void
request(struct buf *b, unsigned id, int keep, const char *method, const char *body)
{
	struct buf p;

	buf_init(&p, 1 << 16);
	nv(&p, "REQUEST_METHOD", method, 0);
	nv(&p, "HTTP_X_LONG", "0123456789012345678901234567890123456789012345678901234567890"
	    "12345678901234567890123456789012345678901234567890123456789012345678901234567"
	    "89", 1);
	begin(b, id, keep);
	rec(b, 1, EVFCGI_PARAMS, id, p.data, p.len, 3);
	rec(b, 1, EVFCGI_PARAMS, id, NULL, 0, 0);
	if (*body != '\0')
		rec(b, 1, EVFCGI_STDIN, id, body, strlen(body), 0);
	rec(b, 1, EVFCGI_STDIN, id, NULL, 0, 0);
	buf_free(&p);
}

/* Splits the pending output into records: type and id of each into types[]/ids[] (at
 * most max), the END_REQUEST protocol status of the last into *st.  The count. */
static int
records(struct evfcgi_conn *c, int *types, unsigned *ids, int max, int *st)
{
	size_t len, off = 0, n;
	const unsigned char *p = evfcgi_conn_pending(c, &len);
	int k = 0;

	while (off + 8 <= len && k < max) {
		n = ((size_t)p[off + 4] << 8 | p[off + 5]) + p[off + 6];
		CHECK_INT(p[off], 1);
		types[k] = p[off + 1];
		ids[k] = (unsigned)p[off + 2] << 8 | p[off + 3];
		if (types[k] == EVFCGI_END_REQUEST)
			*st = p[off + 8 + 4];
		k++;
		off += 8 + n;
	}
	CHECK(off == len);
	return k;
}

static void
test_whole_request(void)
{
	struct seen s = { 0 };
	struct evfcgi_conn *c = evfcgi_conn_new(&ops, &s, &lim);
	struct buf b;
	int types[16], st = -1, n;
	unsigned ids[16];

	buf_init(&b, 1 << 16);
	request(&b, 1, 1, "POST", "hello");
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	CHECK_INT(s.requests, 1);
	CHECK_STR(s.method, "POST");
	CHECK_STR(s.body, "hello");
	n = records(c, types, ids, 16, &st);
	CHECK_INT(n, 3);
	CHECK_INT(types[0], EVFCGI_STDOUT);
	CHECK_INT(types[1], EVFCGI_STDOUT);
	CHECK_INT(types[2], EVFCGI_END_REQUEST);
	CHECK_INT((int)ids[2], 1);
	CHECK_INT(st, EVFCGI_REQUEST_COMPLETE);
	/* keep-conn: the connection takes the next request. */
	CHECK_INT(evfcgi_conn_closing(c), 0);
	evfcgi_conn_sent(c, 1 << 20);
	buf_reset(&b, 0);
	request(&b, 2, 0, "GET", "");
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), -1);
	CHECK_INT(s.requests, 2);
	CHECK_STR(s.method, "GET");
	/* Without keep-conn it closes once its answer is sent, not dropped. */
	CHECK_INT(evfcgi_conn_closing(c), 1);
	CHECK_INT(evfcgi_conn_dropped(c), 0);
	CHECK_INT(records(c, types, ids, 16, &st), 3);
	evfcgi_conn_free(c);
	buf_free(&b);
}

static void
test_byte_by_byte(void)
{
	struct seen s = { 0 };
	struct evfcgi_conn *c = evfcgi_conn_new(&ops, &s, &lim);
	struct buf b;
	size_t i;
	int types[16], st = -1;
	unsigned ids[16];

	buf_init(&b, 1 << 16);
	request(&b, 300, 1, "GET", "x");
	for (i = 0; i < b.len; i++) {
		CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data + i, 1), 0);
		CHECK_INT(s.requests, i + 1 == b.len ? 1 : 0);
	}
	CHECK_INT(records(c, types, ids, 16, &st), 3);
	CHECK_INT((int)ids[0], 300);
	evfcgi_conn_free(c);
	buf_free(&b);
}

static void
test_stream_and_abort(void)
{
	struct seen s = { 0 };
	struct evfcgi_conn *c = evfcgi_conn_new(&ops, &s, &lim);
	struct buf b;
	int types[16], st = -1;
	unsigned ids[16];

	s.keep_open = 1;
	buf_init(&b, 1 << 16);
	request(&b, 5, 1, "GET", "");
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	CHECK(s.open != NULL);
	CHECK(evfcgi_conn_req(c) == s.open);
	CHECK_INT(evfcgi_write(s.open, ":\n\n", 3), 0);
	CHECK_INT(records(c, types, ids, 16, &st), 2);
	evfcgi_conn_sent(c, 1 << 20);
	/* A second request on the busy connection is refused, its records ignored. */
	buf_reset(&b, 0);
	request(&b, 6, 1, "DELETE", "zz");
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	CHECK_INT(s.requests, 1);
	CHECK_INT(records(c, types, ids, 16, &st), 1);
	CHECK_INT(types[0], EVFCGI_END_REQUEST);
	CHECK_INT((int)ids[0], 6);
	CHECK_INT(st, EVFCGI_CANT_MPX_CONN);
	evfcgi_conn_sent(c, 1 << 20);
	/* ABORT of another id: nothing; of the stream's: gone, then END_REQUEST. */
	buf_reset(&b, 0);
	rec(&b, 1, EVFCGI_ABORT_REQUEST, 9, NULL, 0, 0);
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	CHECK_INT(s.gone, 0);
	buf_reset(&b, 0);
	rec(&b, 1, EVFCGI_ABORT_REQUEST, 5, NULL, 0, 0);
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	CHECK_INT(s.gone, 1);
	CHECK(evfcgi_conn_req(c) == NULL);
	CHECK_INT(records(c, types, ids, 16, &st), 1);
	CHECK_INT(types[0], EVFCGI_END_REQUEST);
	CHECK_INT((int)ids[0], 5);
	evfcgi_conn_sent(c, 1 << 20);
	/* A stream still open when the connection goes: gone once. */
	buf_reset(&b, 0);
	request(&b, 7, 1, "GET", "");
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	CHECK(s.open != NULL);
	evfcgi_conn_free(c);
	CHECK_INT(s.gone, 2);
	buf_free(&b);
}

static void
test_interleaved(void)
{
	struct seen s = { 0 };
	struct evfcgi_conn *c = evfcgi_conn_new(&ops, &s, &lim);
	struct buf b, p;
	int types[16], st = -1;
	unsigned ids[16];

	buf_init(&b, 1 << 16);
	buf_init(&p, 1 << 16);
	nv(&p, "REQUEST_METHOD", "PUT", 0);
	begin(&b, 1, 1);
	begin(&b, 2, 1);
	rec(&b, 1, EVFCGI_PARAMS, 2, p.data, p.len, 0);
	rec(&b, 1, EVFCGI_PARAMS, 1, p.data, p.len, 0);
	rec(&b, 1, EVFCGI_STDIN, 2, "evil", 4, 0);
	rec(&b, 1, EVFCGI_PARAMS, 2, NULL, 0, 0);
	rec(&b, 1, EVFCGI_PARAMS, 1, NULL, 0, 0);
	rec(&b, 1, EVFCGI_STDIN, 1, "ok", 2, 0);
	rec(&b, 1, EVFCGI_STDIN, 2, NULL, 0, 0);
	rec(&b, 1, EVFCGI_STDIN, 1, NULL, 0, 0);
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	CHECK_INT(s.requests, 1);
	CHECK_STR(s.method, "PUT");
	CHECK_STR(s.body, "ok");
	CHECK_INT(records(c, types, ids, 16, &st), 4);
	CHECK_INT(types[0], EVFCGI_END_REQUEST);
	CHECK_INT((int)ids[0], 2);
	CHECK_INT((int)ids[3], 1);
	evfcgi_conn_free(c);
	buf_free(&b);
	buf_free(&p);
}

/* Feeds b to a fresh connection: the feed's result, the requests seen, the output. */
static int
feed_fresh(struct buf *b, int *requests, size_t *out)
{
	struct seen s = { 0 };
	struct evfcgi_conn *c = evfcgi_conn_new(&ops, &s, &lim);
	int rc = evfcgi_conn_feed(c, (unsigned char *)b->data, b->len);

	*requests = s.requests;
	(void)evfcgi_conn_pending(c, out);
	evfcgi_conn_free(c);
	return rc;
}

static void
test_hostile(void)
{
	struct buf b, p;
	int reqs;
	size_t out;
	char big[300];
	unsigned char bad[16];

	buf_init(&b, 1 << 20);
	buf_init(&p, 1 << 20);
	/* A version other than 1. */
	rec(&b, 2, EVFCGI_BEGIN_REQUEST, 1, "\0\1\1\0\0\0\0\0", 8, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), -1);
	CHECK_INT((int)out, 0);
	/* Truncated: a header and half a body wait, nothing runs. */
	buf_reset(&b, 0);
	request(&b, 1, 1, "GET", "");
	buf_truncate(&b, 13);
	CHECK_INT(feed_fresh(&b, &reqs, &out), 0);
	CHECK_INT(reqs, 0);
	/* BEGIN_REQUEST of the wrong length. */
	buf_reset(&b, 0);
	rec(&b, 1, EVFCGI_BEGIN_REQUEST, 1, "\0\1\1\0", 4, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), -1);
	/* Another role: refused with UNKNOWN_ROLE, the connection kept. */
	buf_reset(&b, 0);
	rec(&b, 1, EVFCGI_BEGIN_REQUEST, 1, "\0\2\1\0\0\0\0\0", 8, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), 0);
	CHECK_INT((int)out, 16);
	/* Parameters past params_max (256), sent in small records. */
	buf_reset(&b, 0);
	begin(&b, 1, 1);
	memset(big, 'a', sizeof(big));
	rec(&b, 1, EVFCGI_PARAMS, 1, big, 200, 0);
	rec(&b, 1, EVFCGI_PARAMS, 1, big, 200, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), -1);
	/* A body past stdin_max (64). */
	buf_reset(&b, 0);
	begin(&b, 1, 1);
	rec(&b, 1, EVFCGI_PARAMS, 1, NULL, 0, 0);
	rec(&b, 1, EVFCGI_STDIN, 1, big, 65, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), -1);
	CHECK_INT(reqs, 0);
	/* A pair whose 4-byte length says 2 GB. */
	buf_reset(&b, 0);
	begin(&b, 1, 1);
	memcpy(bad, "\x84\0\0\0\x01" "Ax", 7);
	rec(&b, 1, EVFCGI_PARAMS, 1, bad, 7, 0);
	rec(&b, 1, EVFCGI_PARAMS, 1, NULL, 0, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), -1);
	/* A name with '=' and a value with a NUL. */
	buf_reset(&b, 0);
	begin(&b, 1, 1);
	rec(&b, 1, EVFCGI_PARAMS, 1, "\3\1A=BC", 6, 0);
	rec(&b, 1, EVFCGI_PARAMS, 1, NULL, 0, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), -1);
	buf_reset(&b, 0);
	begin(&b, 1, 1);
	rec(&b, 1, EVFCGI_PARAMS, 1, "\1\3AB\0C", 6, 0);
	rec(&b, 1, EVFCGI_PARAMS, 1, NULL, 0, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), -1);
	/* STDIN before the parameters ended. */
	buf_reset(&b, 0);
	begin(&b, 1, 1);
	rec(&b, 1, EVFCGI_STDIN, 1, NULL, 0, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), -1);
	/* Records of a request never begun are ignored. */
	buf_reset(&b, 0);
	rec(&b, 1, EVFCGI_STDIN, 7, "x", 1, 0);
	rec(&b, 1, EVFCGI_ABORT_REQUEST, 7, NULL, 0, 0);
	CHECK_INT(feed_fresh(&b, &reqs, &out), 0);
	CHECK_INT((int)out, 0);
	/* Garbage of maximal lengths: waits for the rest, runs nothing. */
	buf_reset(&b, 0);
	rec(&b, 1, EVFCGI_PARAMS, 1, NULL, 0, 0);
	b.data[4] = (char)0xff;
	b.data[5] = (char)0xff;
	b.data[6] = (char)0xff;
	CHECK_INT(feed_fresh(&b, &reqs, &out), 0);
	buf_free(&b);
	buf_free(&p);
}

static void
test_management(void)
{
	struct seen s = { 0 };
	struct evfcgi_conn *c = evfcgi_conn_new(&ops, &s, &lim);
	struct buf b, p;
	const unsigned char *o;
	size_t len;

	buf_init(&b, 1 << 16);
	buf_init(&p, 1 << 16);
	nv(&p, "FCGI_MPXS_CONNS", "", 0);
	nv(&p, "FCGI_MAX_CONNS", "", 0);
	nv(&p, "OTHER", "", 0);
	rec(&b, 1, EVFCGI_GET_VALUES, 0, p.data, p.len, 0);
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	o = evfcgi_conn_pending(c, &len);
	CHECK(len > 8);
	CHECK_INT(o[1], EVFCGI_GET_VALUES_RESULT);
	CHECK(memmem(o, len, "FCGI_MPXS_CONNS0", 16) != NULL);
	CHECK(memmem(o, len, "FCGI_MAX_CONNS100", 17) != NULL);
	CHECK(memmem(o, len, "OTHER", 5) == NULL);
	evfcgi_conn_sent(c, len);
	buf_reset(&b, 0);
	rec(&b, 1, 42, 0, "x", 1, 0);
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	o = evfcgi_conn_pending(c, &len);
	CHECK_INT((int)len, 16);
	CHECK_INT(o[1], EVFCGI_UNKNOWN_TYPE);
	CHECK_INT(o[8], 42);
	evfcgi_conn_free(c);
	buf_free(&b);
	buf_free(&p);
}

static void
test_output_cap(void)
{
	struct seen s = { 0 };
	struct evfcgi_conn *c = evfcgi_conn_new(&ops, &s, &lim);
	struct buf b;
	char chunk[1000];
	int i, rc = 0;

	s.keep_open = 1;
	buf_init(&b, 1 << 16);
	request(&b, 1, 1, "GET", "");
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	memset(chunk, 'e', sizeof(chunk));
	/* Nothing is sent: past 4096 queued bytes the connection is dropped (the head's 26
	 * and four records of 1008 fit, the fifth does not). */
	for (i = 0; i < 10 && rc == 0; i++)
		rc = evfcgi_write(s.open, chunk, sizeof(chunk));
	CHECK_INT(rc, -1);
	CHECK_INT(i, 5);
	CHECK_INT(evfcgi_conn_dropped(c), 1);
	CHECK_INT(evfcgi_conn_feed(c, (const unsigned char *)"x", 1), -1);
	/* The endpoint hears of it when the loop frees the connection. */
	CHECK_INT(s.gone, 0);
	evfcgi_conn_free(c);
	CHECK_INT(s.gone, 1);
	buf_free(&b);
}

static void
test_callback_fails(void)
{
	struct seen s = { 0 };
	struct evfcgi_conn *c = evfcgi_conn_new(&ops, &s, &lim);
	struct buf b;
	const unsigned char *o;
	size_t len;

	s.fail = 1;
	buf_init(&b, 1 << 16);
	request(&b, 1, 1, "GET", "");
	CHECK_INT(evfcgi_conn_feed(c, (unsigned char *)b.data, b.len), 0);
	o = evfcgi_conn_pending(c, &len);
	CHECK(memmem(o, len, "Status: 500", 11) != NULL);
	CHECK(evfcgi_conn_req(c) == NULL);
	evfcgi_conn_free(c);
	buf_free(&b);
}

int
main(void)
{
	RUN(test_whole_request);
	RUN(test_byte_by_byte);
	RUN(test_stream_and_abort);
	RUN(test_interleaved);
	RUN(test_hostile);
	RUN(test_management);
	RUN(test_output_cap);
	RUN(test_callback_fails);
	return harness_done();
}
