/*
 * evfcgi.c: one FastCGI connection's records, without its socket (see evfcgi.h): the
 * parser of what the web server sends, the requests it makes, and the output queued for
 * them.  Nothing here blocks or touches a descriptor, so the unit tests and the fuzzer
 * drive it with bytes alone.
 *
 * Input is kept only while a record is incomplete: a connection that waits (an idle kept
 * connection, an open stream) holds no input buffer, and its output buffer is freed once
 * sent, so an idle subscriber costs this struct and its request's parameters.
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "evfcgi.h"

/* A record's content is at most 65,535 bytes and its padding 255. */
#define EVFCGI_RECORD_MAX	(EVFCGI_HEADER_LEN + 65535 + 255)
/* Output is cut into STDOUT records of this much at most. */
#define EVFCGI_CHUNK		32768
/* An output buffer larger than this is given back once empty. */
#define EVFCGI_OUT_KEEP		4096

enum evfcgi_state {
	EVFCGI_IDLE,		/* no request */
	EVFCGI_IN_PARAMS,	/* BEGIN_REQUEST read, PARAMS coming */
	EVFCGI_IN_STDIN,	/* PARAMS complete, STDIN coming */
	EVFCGI_OPEN,		/* handed to request(), not finished */
};

struct evfcgi_req {
	struct evfcgi_conn *c;
	unsigned id;
	int keep;
	unsigned char *params;		/* the raw name-value pairs */
	size_t plen;
	char **env;			/* decoded "NAME=value" strings, NULL-terminated */
	size_t nenv;
	char *body;
	size_t blen;
	void *data;
};

struct evfcgi_conn {
	const struct evfcgi_ops *ops;
	void *ctx;
	struct evfcgi_limits lim;
	enum evfcgi_state state;
	struct evfcgi_req req;
	unsigned char *in;		/* an incomplete record */
	size_t inlen, incap;
	unsigned char *out;		/* queued output: out[outoff..outlen) */
	size_t outoff, outlen, outcap;
	int closing;			/* close once the output is sent */
	int dropped;			/* close at once, nothing more to send */
	int failed;			/* broke the protocol */
	void *user;
};

struct evfcgi_conn *
evfcgi_conn_new(const struct evfcgi_ops *ops, void *ctx, const struct evfcgi_limits *lim)
{
	struct evfcgi_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->ops = ops;
	c->ctx = ctx;
	c->lim = *lim;
	c->req.c = c;
	return c;
}

/* Forgets the request's parameters and body (the connection may take another). */
static void
evfcgi_req_clear(struct evfcgi_req *r)
{
	size_t i;

	for (i = 0; i < r->nenv; i++)
		free(r->env[i]);
	free(r->env);
	free(r->params);
	free(r->body);
	memset(r, 0, sizeof(*r));
}

void
evfcgi_conn_free(struct evfcgi_conn *c)
{
	if (c == NULL)
		return;
	if (c->state == EVFCGI_OPEN && c->ops->gone != NULL)
		c->ops->gone(c->ctx, &c->req);
	evfcgi_req_clear(&c->req);
	free(c->in);
	free(c->out);
	free(c);
}

const unsigned char *
evfcgi_conn_pending(const struct evfcgi_conn *c, size_t *len)
{
	*len = c->dropped ? 0 : c->outlen - c->outoff;
	return c->out != NULL ? c->out + c->outoff : NULL;
}

void
evfcgi_conn_sent(struct evfcgi_conn *c, size_t n)
{
	if (n > c->outlen - c->outoff)
		n = c->outlen - c->outoff;
	c->outoff += n;
	if (c->outoff < c->outlen)
		return;
	c->outoff = c->outlen = 0;
	if (c->outcap > EVFCGI_OUT_KEEP || c->state != EVFCGI_OPEN) {
		free(c->out);
		c->out = NULL;
		c->outcap = 0;
	}
}

int
evfcgi_conn_closing(const struct evfcgi_conn *c)
{
	return c->closing || c->dropped || c->failed;
}

int
evfcgi_conn_dropped(const struct evfcgi_conn *c)
{
	return c->dropped || c->failed;
}

struct evfcgi_req *
evfcgi_conn_req(struct evfcgi_conn *c)
{
	return c->state == EVFCGI_OPEN ? &c->req : NULL;
}

void *
evfcgi_conn_user(const struct evfcgi_conn *c)
{
	return c->user;
}

void
evfcgi_conn_set_user(struct evfcgi_conn *c, void *user)
{
	c->user = user;
}

/*
 * Queues one record of type for request id with content p[0..n) (n <= 65535).  Past the
 * connection's output cap the connection is dropped instead: its reader is not keeping
 * up, and waiting for it would hold memory for nobody.  0, or -1 (dropped).
 */
static int
evfcgi_put_record(struct evfcgi_conn *c, int type, unsigned id, const void *p, size_t n)
{
	size_t need = EVFCGI_HEADER_LEN + n, len = c->outlen - c->outoff, cap;
	unsigned char *q;

	if (c->dropped || c->failed)
		return -1;
	if (len + need > c->lim.out_max) {
		c->dropped = 1;
		return -1;
	}
	if (c->outoff > 0 && c->outlen + need > c->outcap) {
		memmove(c->out, c->out + c->outoff, len);
		c->outoff = 0;
		c->outlen = len;
	}
	if (c->outlen + need > c->outcap) {
		cap = c->outcap < 512 ? 512 : c->outcap;
		while (cap < c->outlen + need)
			cap *= 2;
		if ((q = realloc(c->out, cap)) == NULL) {
			c->dropped = 1;
			return -1;
		}
		c->out = q;
		c->outcap = cap;
	}
	q = c->out + c->outlen;
	q[0] = 1;
	q[1] = (unsigned char)type;
	q[2] = (unsigned char)(id >> 8);
	q[3] = (unsigned char)id;
	q[4] = (unsigned char)(n >> 8);
	q[5] = (unsigned char)n;
	q[6] = 0;
	q[7] = 0;
	if (n > 0)
		memcpy(q + EVFCGI_HEADER_LEN, p, n);
	c->outlen += need;
	return 0;
}

/* FCGI_END_REQUEST for id with protocol status st. */
static int
evfcgi_put_end(struct evfcgi_conn *c, unsigned id, int st)
{
	unsigned char body[8] = { 0, 0, 0, 0, (unsigned char)st, 0, 0, 0 };

	return evfcgi_put_record(c, EVFCGI_END_REQUEST, id, body, sizeof(body));
}

/*
 * One name-value pair's length at p[*i..n): 1 byte below 128, else 4 with the top bit set.
 * 0 with *len, or -1 when the bytes end first.
 */
static int
evfcgi_nv_len(const unsigned char *p, size_t n, size_t *i, size_t *len)
{
	if (*i >= n)
		return -1;
	if (!(p[*i] & 0x80)) {
		*len = p[(*i)++];
		return 0;
	}
	if (n - *i < 4)
		return -1;
	*len = ((size_t)(p[*i] & 0x7f) << 24) | ((size_t)p[*i + 1] << 16) |
	    ((size_t)p[*i + 2] << 8) | p[*i + 3];
	*i += 4;
	return 0;
}

/*
 * The next pair of p[*i..n): name and value as pointers into p with their lengths.  0, or
 * -1 when the lengths point past the end.
 */
static int
evfcgi_nv_next(const unsigned char *p, size_t n, size_t *i, const unsigned char **name,
    size_t *nlen, const unsigned char **val, size_t *vlen)
{
	if (evfcgi_nv_len(p, n, i, nlen) < 0 || evfcgi_nv_len(p, n, i, vlen) < 0)
		return -1;
	if (*nlen > n - *i || *vlen > n - *i - *nlen)
		return -1;
	*name = p + *i;
	*val = p + *i + *nlen;
	*i += *nlen + *vlen;
	return 0;
}

/*
 * The request's parameters decoded into "NAME=value" strings.  A name with '=' or a NUL
 * anywhere would make the array mean something else than the record: refused.  0, or -1
 * (malformed, or out of memory).
 */
static int
evfcgi_params_decode(struct evfcgi_req *r)
{
	const unsigned char *name, *val;
	size_t i = 0, nlen, vlen, n = 0, cap = 0;
	char **env = NULL, **e, *s;

	while (i < r->plen) {
		if (evfcgi_nv_next(r->params, r->plen, &i, &name, &nlen, &val, &vlen) < 0 ||
		    nlen == 0 || memchr(name, '=', nlen) != NULL ||
		    memchr(name, '\0', nlen) != NULL || memchr(val, '\0', vlen) != NULL)
			goto fail;
		if (n + 2 > cap) {
			cap = cap == 0 ? 32 : cap * 2;
			if ((e = realloc(env, cap * sizeof(*env))) == NULL)
				goto fail;
			env = e;
		}
		if ((s = malloc(nlen + vlen + 2)) == NULL)
			goto fail;
		memcpy(s, name, nlen);
		s[nlen] = '=';
		memcpy(s + nlen + 1, val, vlen);
		s[nlen + 1 + vlen] = '\0';
		env[n++] = s;
		env[n] = NULL;
	}
	if (env == NULL && (env = calloc(1, sizeof(*env))) == NULL)
		return -1;
	r->env = env;
	r->nenv = n;
	return 0;
fail:
	while (n > 0)
		free(env[--n]);
	free(env);
	return -1;
}

/* Appends p[0..n) to *buf[0..*len) within max bytes.  0, or -1 (over max, no memory). */
static int
evfcgi_grow(void *bufp, size_t *len, const unsigned char *p, size_t n, size_t max)
{
	unsigned char **buf = bufp, *q;

	if (n > max || *len > max - n)
		return -1;
	if (n == 0)
		return 0;
	if ((q = realloc(*buf, *len + n + 1)) == NULL)
		return -1;
	memcpy(q + *len, p, n);
	*len += n;
	q[*len] = '\0';
	*buf = q;
	return 0;
}

/*
 * GET_VALUES: the values asked for among FCGI_MAX_CONNS, FCGI_MAX_REQS and
 * FCGI_MPXS_CONNS, in one GET_VALUES_RESULT (the others are left out, as the specification
 * says).  0, or -1 (malformed).
 */
static int
evfcgi_get_values(struct evfcgi_conn *c, const unsigned char *p, size_t n)
{
	unsigned char res[256];
	const unsigned char *name, *val;
	size_t i = 0, nlen, vlen, rlen = 0, vl;
	char num[24];
	const char *v;

	while (i < n) {
		if (evfcgi_nv_next(p, n, &i, &name, &nlen, &val, &vlen) < 0)
			return -1;
		v = NULL;
		/* One request a connection: as many requests as connections. */
		if ((nlen == 14 && memcmp(name, "FCGI_MAX_CONNS", 14) == 0) ||
		    (nlen == 13 && memcmp(name, "FCGI_MAX_REQS", 13) == 0)) {
			(void)snprintf(num, sizeof(num), "%d", c->lim.conns_max);
			v = num;
		} else if (nlen == 15 && memcmp(name, "FCGI_MPXS_CONNS", 15) == 0) {
			v = "0";
		}
		if (v == NULL)
			continue;
		vl = strlen(v);
		/* Each name at most once, each value short: three always fit. */
		if (rlen + 2 + nlen + vl > sizeof(res))
			continue;
		res[rlen++] = (unsigned char)nlen;
		res[rlen++] = (unsigned char)vl;
		memcpy(res + rlen, name, nlen);
		rlen += nlen;
		memcpy(res + rlen, v, vl);
		rlen += vl;
	}
	(void)evfcgi_put_record(c, EVFCGI_GET_VALUES_RESULT, 0, res, rlen);
	return 0;
}

/* A management record (request id 0). 0, or -1 (malformed). */
static int
evfcgi_management(struct evfcgi_conn *c, int type, const unsigned char *p, size_t n)
{
	unsigned char body[8] = { 0 };

	if (type == EVFCGI_GET_VALUES)
		return evfcgi_get_values(c, p, n);
	body[0] = (unsigned char)type;
	(void)evfcgi_put_record(c, EVFCGI_UNKNOWN_TYPE, 0, body, sizeof(body));
	return 0;
}

/* BEGIN_REQUEST for id.  0, or -1 (malformed). */
static int
evfcgi_begin(struct evfcgi_conn *c, unsigned id, const unsigned char *p, size_t n)
{
	unsigned role;

	if (n != 8)
		return -1;
	if (c->state != EVFCGI_IDLE) {
		/* One request at a time on a connection: nginx and Apache never send two. */
		(void)evfcgi_put_end(c, id, EVFCGI_CANT_MPX_CONN);
		return 0;
	}
	role = ((unsigned)p[0] << 8) | p[1];
	if (role != EVFCGI_RESPONDER) {
		(void)evfcgi_put_end(c, id, EVFCGI_UNKNOWN_ROLE);
		return 0;
	}
	c->req.id = id;
	c->req.keep = p[2] & EVFCGI_KEEP_CONN;
	c->state = EVFCGI_IN_PARAMS;
	return 0;
}

/* Ends the connection's request: END_REQUEST queued, its memory freed, and the
 * connection closing unless keep-conn was asked. */
static void
evfcgi_end(struct evfcgi_conn *c)
{
	(void)evfcgi_put_end(c, c->req.id, EVFCGI_REQUEST_COMPLETE);
	if (!c->req.keep)
		c->closing = 1;
	evfcgi_req_clear(&c->req);
	c->req.c = c;
	c->state = EVFCGI_IDLE;
}

/* The body is complete: the request goes to the endpoint. */
static void
evfcgi_dispatch(struct evfcgi_conn *c)
{
	static const char fail[] = "Status: 500 Internal Server Error\r\n"
	    "Content-Type: application/json\r\n\r\n"
	    "{\"code\":\"internal\",\"message\":\"internal error\",\"details\":null,"
	    "\"hint\":null}";

	if (c->req.body == NULL && (c->req.body = calloc(1, 1)) == NULL) {
		c->failed = 1;
		return;
	}
	c->state = EVFCGI_OPEN;
	if (c->ops->request(c->ctx, &c->req) < 0 && c->state == EVFCGI_OPEN) {
		(void)evfcgi_write(&c->req, fail, sizeof(fail) - 1);
		(void)evfcgi_finish(&c->req);
	}
}

/* ABORT_REQUEST for the open request: the endpoint is told, the request ended. */
static void
evfcgi_abort(struct evfcgi_conn *c)
{
	if (c->state == EVFCGI_OPEN && c->ops->gone != NULL)
		c->ops->gone(c->ctx, &c->req);
	evfcgi_end(c);
}

/* One record of the request's stream (PARAMS, STDIN).  0, or -1 (protocol, limit). */
static int
evfcgi_stream(struct evfcgi_conn *c, int type, const unsigned char *p, size_t n)
{
	struct evfcgi_req *r = &c->req;

	if (type == EVFCGI_PARAMS && c->state == EVFCGI_IN_PARAMS) {
		if (n > 0)
			return evfcgi_grow(&r->params, &r->plen, p, n, c->lim.params_max);
		if (evfcgi_params_decode(r) < 0)
			return -1;
		/* The decoded copies are all that is read: an open stream keeps only them. */
		free(r->params);
		r->params = NULL;
		r->plen = 0;
		c->state = EVFCGI_IN_STDIN;
		return 0;
	}
	if (type == EVFCGI_STDIN && c->state == EVFCGI_IN_STDIN) {
		if (n > 0)
			return evfcgi_grow(&r->body, &r->blen, p, n, c->lim.stdin_max);
		evfcgi_dispatch(c);
		return 0;
	}
	/* STDIN after its end (an open stream's), DATA: nothing to do with them.  PARAMS
	 * after they ended, or STDIN before, is out of order. */
	if (type == EVFCGI_STDIN && c->state == EVFCGI_OPEN)
		return 0;
	if (type == EVFCGI_DATA)
		return 0;
	return -1;
}

/* One complete record.  0, or -1 when the connection must close. */
static int
evfcgi_record(struct evfcgi_conn *c, const unsigned char *h, const unsigned char *p)
{
	unsigned id = ((unsigned)h[2] << 8) | h[3];
	size_t n = ((size_t)h[4] << 8) | h[5];
	int type = h[1];

	if (h[0] != 1)
		return -1;
	if (id == 0)
		return evfcgi_management(c, type, p, n);
	if (type == EVFCGI_BEGIN_REQUEST)
		return evfcgi_begin(c, id, p, n);
	/* Records of another request than the connection's are ignored, as the
	 * specification says of inactive request ids. */
	if (c->state == EVFCGI_IDLE || id != c->req.id)
		return 0;
	if (type == EVFCGI_ABORT_REQUEST) {
		evfcgi_abort(c);
		return 0;
	}
	return evfcgi_stream(c, type, p, n);
}

/* Runs the complete records of p[0..n); returns the bytes used, or -1 (close). */
static long
evfcgi_records(struct evfcgi_conn *c, const unsigned char *p, size_t n)
{
	size_t off = 0, len;

	while (n - off >= EVFCGI_HEADER_LEN && !evfcgi_conn_closing(c)) {
		len = EVFCGI_HEADER_LEN + (((size_t)p[off + 4] << 8) | p[off + 5]) + p[off + 6];
		if (p[off] != 1)
			return -1;
		if (n - off < len)
			break;
		if (evfcgi_record(c, p + off, p + off + EVFCGI_HEADER_LEN) < 0) {
			c->failed = 1;
			return -1;
		}
		off += len;
	}
	return (long)off;
}

int
evfcgi_conn_feed(struct evfcgi_conn *c, const unsigned char *p, size_t n)
{
	unsigned char *q;
	long used;

	if (evfcgi_conn_closing(c))
		return -1;
	if (c->inlen == 0) {
		/* The common case: whole records straight from the caller's bytes. */
		if ((used = evfcgi_records(c, p, n)) < 0)
			goto fail;
		p += used;
		n -= (size_t)used;
		if (n == 0 || evfcgi_conn_closing(c))
			goto out;
	}
	if (c->inlen + n > c->incap) {
		if (c->inlen + n > 2 * EVFCGI_RECORD_MAX ||
		    (q = realloc(c->in, c->inlen + n)) == NULL)
			goto fail;
		c->in = q;
		c->incap = c->inlen + n;
	}
	memcpy(c->in + c->inlen, p, n);
	c->inlen += n;
	if ((used = evfcgi_records(c, c->in, c->inlen)) < 0)
		goto fail;
	memmove(c->in, c->in + used, c->inlen - (size_t)used);
	c->inlen -= (size_t)used;
	if (c->inlen == 0) {
		free(c->in);
		c->in = NULL;
		c->incap = 0;
	}
out:
	return evfcgi_conn_closing(c) ? -1 : 0;
fail:
	c->failed = 1;
	return -1;
}

const char *
evfcgi_param(const struct evfcgi_req *r, const char *name)
{
	size_t i, n = strlen(name);

	for (i = 0; i < r->nenv; i++)
		if (strncmp(r->env[i], name, n) == 0 && r->env[i][n] == '=')
			return r->env[i] + n + 1;
	return NULL;
}

char **
evfcgi_envp(struct evfcgi_req *r)
{
	return r->env;
}

const char *
evfcgi_body(const struct evfcgi_req *r, size_t *len)
{
	*len = r->blen;
	return r->body != NULL ? r->body : "";
}

void *
evfcgi_data(const struct evfcgi_req *r)
{
	return r->data;
}

void
evfcgi_set_data(struct evfcgi_req *r, void *data)
{
	r->data = data;
}

int
evfcgi_write(struct evfcgi_req *r, const void *p, size_t n)
{
	struct evfcgi_conn *c = r->c;
	const unsigned char *q = p;
	size_t k;

	if (c->state != EVFCGI_OPEN)
		return -1;
	while (n > 0) {
		k = n < EVFCGI_CHUNK ? n : EVFCGI_CHUNK;
		if (evfcgi_put_record(c, EVFCGI_STDOUT, r->id, q, k) < 0)
			return -1;
		q += k;
		n -= k;
	}
	return 0;
}

int
evfcgi_finish(struct evfcgi_req *r)
{
	struct evfcgi_conn *c = r->c;
	int rc;

	if (c->state != EVFCGI_OPEN)
		return -1;
	rc = c->dropped || c->failed ? -1 : 0;
	if (rc == 0)
		rc = evfcgi_put_record(c, EVFCGI_STDOUT, r->id, NULL, 0);
	evfcgi_end(c);
	return rc;
}

/* resp_send()'s writer over a request. */
static int
evfcgi_resp_writer(void *ctx, const char *p, size_t len)
{
	return evfcgi_write(ctx, p, len);
}

int
evfcgi_respond(struct evfcgi_req *r, struct resp *rs)
{
	int rc = resp_send(rs, evfcgi_resp_writer, r);

	return evfcgi_finish(r) < 0 || rc < 0 ? -1 : 0;
}
