/*
 * serve_req.c: one request through the serve loop (see extern.h, "Serve loop"): the
 * parameters (req_init()), the method check, the body, the database connection, the
 * handler, the response, and the request's id (reqid.h) for the thread's log lines and
 * the response.  serve.c owns the threads, the connections and the signals and
 * calls serve_request() once per request; the FastCGI fuzzer calls it the same way.
 *
 * Body.  The request body is read whole, up to the cap, before the handler runs, and
 * whatever remains of FCGI_STDIN is drained before FCGX_Finish_r(), so fcgi2 never finds
 * leftover records and drops a kept-alive connection.
 *
 * Output.  A FastCGI response goes out whole in one writev(), with the records that end
 * the request (serve_fcgi_send()); in CGI mode, to stdout.
 */
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/uio.h>
#include <unistd.h>

#include <fastcgi.h>
#include <fcgiapp.h>

#include "arena.h"
#include "clock.h"
#include "extern.h"
#include "log.h"
#include "serve.h"
#include "serve_ops.h"
#include "str.h"

static long
serve_read(struct serve_io *io, char *p, size_t n)
{
	ssize_t r;
	int chunk = n > INT_MAX ? INT_MAX : (int)n;

	if (io->fcgi != NULL)
		return FCGX_GetStr(p, chunk, io->fcgi->in);
	do
		r = read(STDIN_FILENO, p, n);
	while (r < 0 && errno == EINTR);
	return r;
}

/* Writes all of iov[0..n) (n <= SERVE_IOV), through short writes and EINTR. */
static int
serve_writev_all(int fd, struct iovec *iov, int n)
{
	ssize_t w;

	while (n > 0) {
		if ((w = writev(fd, iov, n)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		while (n > 0 && (size_t)w >= iov->iov_len) {
			w -= (ssize_t)iov->iov_len;
			iov++;
			n--;
		}
		if (n > 0) {
			iov->iov_base = (char *)iov->iov_base + w;
			iov->iov_len -= (size_t)w;
		}
	}
	return 0;
}

/*
 * A FastCGI response goes out whole in one writev(): its parts (resp_parts()) as
 * FCGI_STDOUT records of up to 64 KB, the stream's empty closing record and
 * FCGI_END_REQUEST, so that the web server is woken once per response and reads it in one
 * go.  Through fcgi2's stream the same response took a write() per 8 KB of it, its
 * buffer's copy, and one more for the closing records at FCGX_Finish_r() (three writes
 * for a 20 kB list).  The request's input is drained before (serve_drain()), so nothing
 * of it is left once the web server has the end of the request.  The output stream is
 * then marked closed, as FCGX_FClose() leaves it, so FCGX_Finish_r() writes nothing more
 * (the error stream, never written to, adds no record); a failed write is left on it as
 * the stream's error, so FCGX_Finish_r() closes the connection.  A response of more than
 * some 30 records (2 MB) takes a writev() per SERVE_IOV pieces.
 */
/* How often a thread without a database handle (the server was down when the worker
 * started) tries to open one, at most: a connect to a server that is not there costs a
 * refused connection, so 100 ms spares it little and keeps the return prompt. */
#define SERVE_DB_RETRY_MS	100
#define SERVE_RECORD_MAX	65528	/* content bytes per record: a multiple of 8 */
#define SERVE_IOV		64

/* An FCGI header of type for request id, with clen bytes of content and no padding. */
static void
serve_fcgi_head(unsigned char *h, int type, int id, size_t clen)
{
	h[0] = FCGI_VERSION_1;
	h[1] = (unsigned char)type;
	h[2] = (unsigned char)(id >> 8);
	h[3] = (unsigned char)id;
	h[4] = (unsigned char)(clen >> 8);
	h[5] = (unsigned char)clen;
	h[6] = 0;
	h[7] = 0;
}

/* Writes the n pieces gathered in iov when fewer than room slots are left, and starts
 * over (*n = 0).  0, or -1 (the connection failed). */
static int
serve_fcgi_room(int fd, struct iovec *iov, int *n, int room)
{
	if (*n + room <= SERVE_IOV)
		return 0;
	if (serve_writev_all(fd, iov, *n) < 0)
		return -1;
	*n = 0;
	return 0;
}

static int
serve_fcgi_send(FCGX_Request *r, const struct resp_parts *p)
{
	unsigned char head[SERVE_IOV][FCGI_HEADER_LEN], end[FCGI_HEADER_LEN + 8];
	struct iovec iov[SERVE_IOV];
	size_t left = p->len, off = 0;
	int n = 0, i = 0;

	while (left > 0) {
		size_t c = left > SERVE_RECORD_MAX ? SERVE_RECORD_MAX : left, need = c;

		/* Room for this record's header and its first part, else write what is
		 * gathered (the headers written are not needed again). */
		if (serve_fcgi_room(r->ipcFd, iov, &n, 2) < 0)
			goto fail;
		serve_fcgi_head(head[n], FCGI_STDOUT, r->requestId, c);
		iov[n].iov_base = head[n];
		iov[n++].iov_len = FCGI_HEADER_LEN;
		while (need > 0) {
			size_t take = p->part[i].iov_len - off;

			if (take > need)
				take = need;
			if (serve_fcgi_room(r->ipcFd, iov, &n, 1) < 0)
				goto fail;
			iov[n].iov_base = (char *)p->part[i].iov_base + off;
			iov[n++].iov_len = take;
			need -= take;
			if ((off += take) == p->part[i].iov_len) {
				i++;
				off = 0;
			}
		}
		left -= c;
	}
	if (serve_fcgi_room(r->ipcFd, iov, &n, 2) < 0)
		goto fail;
	serve_fcgi_head(head[n], FCGI_STDOUT, r->requestId, 0);
	iov[n].iov_base = head[n];
	iov[n++].iov_len = FCGI_HEADER_LEN;
	/* FCGI_END_REQUEST: the application's status (4 bytes, big-endian), complete. */
	serve_fcgi_head(end, FCGI_END_REQUEST, r->requestId, 8);
	memset(end + FCGI_HEADER_LEN, 0, 8);
	end[FCGI_HEADER_LEN + 0] = (unsigned char)((unsigned)r->appStatus >> 24);
	end[FCGI_HEADER_LEN + 1] = (unsigned char)((unsigned)r->appStatus >> 16);
	end[FCGI_HEADER_LEN + 2] = (unsigned char)((unsigned)r->appStatus >> 8);
	end[FCGI_HEADER_LEN + 3] = (unsigned char)r->appStatus;
	end[FCGI_HEADER_LEN + 4] = FCGI_REQUEST_COMPLETE;
	iov[n].iov_base = end;
	iov[n++].iov_len = sizeof(end);
	if (serve_writev_all(r->ipcFd, iov, n) < 0)
		goto fail;
	r->out->wasFCloseCalled = 1;
	r->out->isClosed = 1;
	return 0;
fail:
	r->out->FCGI_errno = errno != 0 ? errno : EPIPE;
	r->out->wasFCloseCalled = 1;
	r->out->isClosed = 1;
	return -1;
}

/* Writes the whole response rs: on FastCGI in one writev() (serve_fcgi_send()), else to
 * stdout.  0, or -1 when the client went away. */
static int
serve_send(struct serve_io *io, struct resp *rs)
{
	struct resp_parts p;

	if (io->fcgi == NULL)
		return resp_send(rs, serve_write, io);
	resp_parts(rs, &p);
	return serve_fcgi_send(io->fcgi, &p);
}

int
serve_write(void *ctx, const char *p, size_t len)
{
	struct serve_io *io = ctx;
	ssize_t w;

	if (io->fcgi != NULL) {
		while (len > 0) {
			int chunk = len > INT_MAX ? INT_MAX : (int)len;

			if (FCGX_PutStr(p, chunk, io->fcgi->out) != chunk)
				return -1;
			p += chunk;
			len -= (size_t)chunk;
		}
		return 0;
	}
	while (len > 0) {
		if ((w = write(STDOUT_FILENO, p, len)) < 0) {
			if (errno == EINTR)
				continue;
			return -1;
		}
		p += w;
		len -= (size_t)w;
	}
	return 0;
}

/* Reads and throws away whatever is left of the request body. */
static void
serve_drain(struct serve_io *io)
{
	char scratch[8192];

	while (serve_read(io, scratch, sizeof(scratch)) > 0)
		continue;
}

/*
 * Reads the body into the arena.  Returns 0, or the HTTP status to answer: 400 for a
 * malformed or short Content-Length, 413 past the cap, 500 when the arena refuses.
 */
static int
serve_read_body(struct req *rq, struct serve_io *io, size_t cap)
{
	const char *cl = req_env(rq, "CONTENT_LENGTH");
	int64_t len;
	size_t got = 0;
	char *p;
	long r;

	if (cl == NULL || *cl == '\0')
		return 0;
	if (str_to_int(cl, strlen(cl), 0, INT64_MAX, &len) < 0)
		return 400;
	if (len == 0)
		return 0;
	if ((uint64_t)len > cap)
		return 413;
	if ((p = arena_alloc(rq->arena, (size_t)len + 1)) == NULL)
		return 500;
	while (got < (size_t)len) {
		if ((r = serve_read(io, p + got, (size_t)len - got)) <= 0)
			return 400;
		got += (size_t)r;
	}
	p[got] = '\0';
	rq->body = p;
	rq->body_len = got;
	return 0;
}

static void
serve_body_error(struct resp *rs, int status, size_t cap)
{
	char detail[96];

	switch (status) {
	case 413:
		(void)snprintf(detail, sizeof(detail), "the limit is %zu bytes", cap);
		resp_error(rs, 413, "body_too_large", "the request body is too large",
		    detail, NULL);
		break;
	case 400:
		resp_error(rs, 400, "bad_body",
		    "the request body does not match its Content-Length", NULL, NULL);
		break;
	default:
		resp_error(rs, 500, "internal", "cannot hold the request body", NULL, NULL);
	}
}

/*
 * Opens the thread's connection.  At start-up an unreachable server is allowed (the
 * thread connects later, at a request at most every SERVE_DB_RETRY_MS, so that it serves
 * again within that of the server's return); returns 0 when connected, 1 when it will try
 * again later, -1 on a configuration error.
 */
int
serve_db_connect(struct serve_thread *t)
{
	long long now = clock_now_ms();

	if (t->db_later && now < t->db_retry_ms)
		return -1;
	switch (t->ep->db->open(&t->db, t->set->db_url)) {
	case SERVE_DB_OPEN:
		if (t->db_later)
			log_info("connected to the database");
		t->db_later = 0;
		return 0;
	case SERVE_DB_LATER:
		t->db_later = 1;
		t->db_retry_ms = now + SERVE_DB_RETRY_MS;
		return 1;
	default:
		return -1;
	}
}

/*
 * Makes the endpoint's per-thread state, or reloads it after a SIGHUP (serve.h: struct
 * endpoint).  Returns 0, or -1 after answering the failure in rs.
 */
static int
serve_thread_state(struct serve_thread *t, struct resp *rs)
{
	const struct endpoint *ep = t->ep;
	unsigned hups = serve_reloads();

	if (ep->thread_init == NULL)
		return 0;
	if (t->state == NULL) {
		if ((t->state = ep->thread_init(t->db)) == NULL)
			goto fail;
		t->hups = hups;
		return 0;
	}
	if (hups == t->hups || ep->thread_reload == NULL)
		return 0;
	if (ep->thread_reload(t->state, t->db) < 0)
		goto fail;
	t->hups = hups;
	return 0;
fail:
	if (ep->db != NULL && t->db != NULL)
		ep->db->error(rs, t->db);
	else
		resp_error(rs, 500, "internal", "internal error", NULL, NULL);
	return -1;
}

/*
 * The request's id (reqid.h): the web server's REQUEST_ID (nginx, and Apache for a
 * client's well-formed X-Request-Id), mod_unique_id's UNIQUE_ID, the client's own
 * X-Request-Id (a worker reached without a web server that sets one), each checked
 * again, else a new one.  Made the thread's current id, and the response's.
 */
static void
serve_request_id(struct serve_thread *t, const struct req *rq, struct resp *rs)
{
	char made[REQID_GEN_LEN + 1];
	const char *id;

	/* One look through the parameters in the common case (nginx always passes one). */
	if ((id = req_env(rq, "REQUEST_ID")) == NULL || reqid_pick(&id, 1) == NULL) {
		const char *c[2] = { req_env(rq, "UNIQUE_ID"), req_header(rq, "X-Request-Id") };

		id = reqid_pick(c, 2);
	}
	if (id == NULL) {
		reqid_make(&t->idgen, made);
		id = made;
	}
	(void)reqid_set(id);
	rs->request_id = reqid_current();
}

void
serve_request(struct serve_thread *t, struct serve_io *io, char **envp)
{
	const struct endpoint *ep = t->ep;
	unsigned allowed = ep->methods ? ep->methods : (REQ_GET | REQ_HEAD);
	struct resp *rs = &t->rs;
	struct req rq;
	char allow[64];
	enum req_err err;
	int status;

	if (allowed & REQ_GET)
		allowed |= REQ_HEAD;
	err = req_init(&rq, envp, t->arena);
	serve_request_id(t, &rq, rs);
	/* Known even when the request is refused, for the counters (serve.c). */
	t->method = rq.method;
	switch (err) {
	case REQ_OK:
		break;
	case REQ_EQUERY:
		resp_error(rs, 400, "bad_query",
		    "malformed percent-encoding in the query string", NULL,
		    "escape '%' as %25; NUL bytes are not allowed");
		goto out;
	case REQ_ETOOMANY:
		resp_error(rs, 400, "bad_query", "too many query parameters", NULL, NULL);
		goto out;
	case REQ_ENOMEM:
		resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
		goto out;
	}
	rs->head = rq.method == REQ_HEAD;
	if (!(rq.method & allowed)) {
		req_methods_format(allowed, allow, sizeof(allow));
		resp_header(rs, "Allow", allow);
		resp_error(rs, 405, "method_not_allowed", "method not allowed", NULL, NULL);
		goto out;
	}
	if ((status = serve_read_body(&rq, io, t->set->body_max)) != 0) {
		serve_body_error(rs, status, t->set->body_max);
		goto out;
	}
	if (ep->db != NULL) {
		if (t->db == NULL && serve_db_connect(t) != 0) {
			resp_error(rs, 503, "unavailable", "the database is unavailable", NULL,
			    NULL);
			goto out;
		}
		rq.db = t->db;
		if (ep->db->ready(t->db) < 0) {
			ep->db->error(rs, t->db);
			if (ep->db->restart_wanted(t->db))
				serve_restart();
			goto out;
		}
	}
	if (serve_thread_state(t, rs) < 0)
		goto rollback;
	rq.thread = t->state;
	if (ep->handle(&rq, rs) < 0 && rs->status == 0)
		resp_error(rs, 500, "internal", "internal error", NULL, NULL);
rollback:
	/* A handler that failed inside a transaction must not leave it open. */
	if (ep->db != NULL && t->db != NULL) {
		ep->db->rollback(t->db);
		db_deadline_clear(t->db);
	}
out:
	serve_drain(io);
	if (serve_send(io, rs) < 0)
		log_debug("the client went away before the response was written");
	reqid_clear();
	t->served++;
}
