/*
 * fuzz_evfcgi: the non-blocking FastCGI responder's records (common/evfcgi.c) on hostile
 * bytes: what a web server, or anything that reaches a streaming pool's socket, can send.
 *
 * The input's first byte picks how the rest is cut into reads (one feed, or pieces of 1
 * to 16 bytes) and what the endpoint does with each request (answer at once, keep it open
 * and write to it, or fail).  Invariants: no crash, no leak, no read past the input;
 * gone() only for a request the endpoint holds, once; the output is whole records of
 * version 1, each within 65,535 bytes, and never more than the output cap.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "evfcgi.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct fz {
	int mode;
	struct evfcgi_req *open;
};

static int
fz_request(void *ctx, struct evfcgi_req *r)
{
	struct fz *f = ctx;
	size_t n;
	const char *b = evfcgi_body(r, &n);
	char **env = evfcgi_envp(r);

	assert(env != NULL);
	(void)evfcgi_param(r, "REQUEST_METHOD");
	switch (f->mode++ % 3) {
	case 0:
		(void)evfcgi_write(r, b, n);
		return evfcgi_finish(r);
	case 1:
		assert(f->open == NULL);
		f->open = r;
		/* A write that drops the connection leaves the request open until gone(). */
		(void)evfcgi_write(r, "Status: 200 OK\r\n\r\n", 18);
		return 0;
	default:
		return -1;
	}
}

static void
fz_gone(void *ctx, struct evfcgi_req *r)
{
	struct fz *f = ctx;

	assert(r == f->open);
	f->open = NULL;
}

static const struct evfcgi_ops fz_ops = { fz_request, fz_gone, NULL, 0, NULL, NULL };

/* The pending output is whole records within the cap. */
static void
fz_check(struct evfcgi_conn *c, size_t cap)
{
	size_t len, off = 0, n;
	const unsigned char *p = evfcgi_conn_pending(c, &len);

	assert(len <= cap);
	while (off < len) {
		assert(len - off >= 8);
		assert(p[off] == 1);
		n = ((size_t)p[off + 4] << 8 | p[off + 5]) + p[off + 6];
		assert(len - off - 8 >= n);
		off += 8 + n;
	}
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const struct evfcgi_limits lim = { 4096, 4096, 8192, 10 };
	struct fz f = { 0, NULL };
	struct evfcgi_conn *c;
	size_t off, k, step, len;
	unsigned char *copy;

	if (size < 1)
		return 0;
	step = data[0] & 15;
	f.mode = data[0] >> 4;
	data++;
	size--;
	/* An exact copy, so that a read past the input is caught. */
	if ((copy = malloc(size > 0 ? size : 1)) == NULL)
		return 0;
	memcpy(copy, data, size);
	c = evfcgi_conn_new(&fz_ops, &f, &lim);
	assert(c != NULL);
	for (off = 0; off < size; off += k) {
		k = step == 0 ? size - off : (size - off < step ? size - off : step);
		if (evfcgi_conn_feed(c, copy + off, k) < 0)
			break;
		fz_check(c, lim.out_max);
		if (f.open != NULL && (off & 1))
			(void)evfcgi_write(f.open, "data: x\n\n", 9);
		/* Half the time the output leaves, as a socket would take it (whole, so that
		 * what stays starts with a record). */
		if (off & 2) {
			(void)evfcgi_conn_pending(c, &len);
			evfcgi_conn_sent(c, len);
		}
	}
	evfcgi_conn_free(c);
	assert(f.open == NULL);
	free(copy);
	return 0;
}
