/*
 * evfcgi.h: a non-blocking FastCGI responder in one epoll loop, for endpoints that keep
 * many requests open at once (Server-Sent Events streams).
 *
 * The serve loop (serve.h) gives each request a thread until it is answered, which is right
 * for requests that end in milliseconds and wrong for a stream that stays open for hours:
 * 10,000 subscribers would be 10,000 threads.  Here one thread holds every connection of
 * the worker in one epoll set, reads FastCGI records as they come, and calls the
 * endpoint's request callback once a request's parameters and body are complete.  The
 * callback answers at once (evfcgi_respond(), or evfcgi_write() then evfcgi_finish()) or
 * keeps the request open as a stream, writes to it later (from a tick, or when some other
 * request asks) and finishes it when it likes.  fcgi2 has no such mode, so the protocol is
 * spoken here by hand: FCGI_BEGIN_REQUEST, PARAMS, STDIN, STDOUT, END_REQUEST,
 * ABORT_REQUEST and GET_VALUES, with keep-conn honoured.  One request at a time per
 * connection, as nginx and Apache send them: a second BEGIN_REQUEST while one is open is
 * answered FCGI_CANT_MPX_CONN, and GET_VALUES says FCGI_MPXS_CONNS 0.
 *
 * Limits (settings.h): a request's PARAMS bytes (SLUICE_STREAM_PARAMS_MAX) and body
 * (SLUICE_BODY_MAX), the connections a worker holds (SLUICE_STREAM_CONNS; past it a new
 * connection is closed at once) and the bytes waiting to be written on one connection
 * (SLUICE_STREAM_BUF, 256 kB): a connection whose reader does not keep up is dropped when
 * its buffer would pass the cap, so one slow subscriber never slows the others and never
 * holds more than the cap.  A record that breaks the protocol (a version other than 1, a
 * BEGIN_REQUEST of the wrong length, a request over a limit) closes its connection.
 *
 * The files of the concept:
 *   evfcgi.c       one connection's records: the parser, the writer, the requests
 *   evfcgi_loop.c  the worker: the epoll loop, the listening socket, signals, the
 *                  watchdog's slot, the tick, the graceful stop, evfcgi_main()
 */
#ifndef SLUICE_EVFCGI_H
#define SLUICE_EVFCGI_H

#include <stddef.h>

#include "resp.h"

/* FastCGI's record types and statuses (the specification's numbers). */
enum evfcgi_type {
	EVFCGI_BEGIN_REQUEST = 1,
	EVFCGI_ABORT_REQUEST = 2,
	EVFCGI_END_REQUEST = 3,
	EVFCGI_PARAMS = 4,
	EVFCGI_STDIN = 5,
	EVFCGI_STDOUT = 6,
	EVFCGI_STDERR = 7,
	EVFCGI_DATA = 8,
	EVFCGI_GET_VALUES = 9,
	EVFCGI_GET_VALUES_RESULT = 10,
	EVFCGI_UNKNOWN_TYPE = 11,
};

enum evfcgi_status {
	EVFCGI_REQUEST_COMPLETE = 0,
	EVFCGI_CANT_MPX_CONN = 1,
	EVFCGI_OVERLOADED = 2,
	EVFCGI_UNKNOWN_ROLE = 3,
};

#define EVFCGI_HEADER_LEN	8
#define EVFCGI_RESPONDER	1
#define EVFCGI_KEEP_CONN	1

struct evfcgi_conn;
struct evfcgi_req;

struct evfcgi_limits {
	size_t params_max;	/* a request's PARAMS bytes */
	size_t stdin_max;	/* a request's body */
	size_t out_max;		/* bytes waiting to be written on one connection */
	int conns_max;		/* connections held at once (evfcgi_loop.c) */
};

struct evfcgi_ops {
	/*
	 * A request's parameters and body are complete.  The callback answers it
	 * (evfcgi_respond(), or evfcgi_write() and evfcgi_finish()) or returns with it open:
	 * a stream, which it may write to and finish later.  Returns 0, or -1 when it failed
	 * without answering: the request is then answered 500.
	 */
	int (*request)(void *ctx, struct evfcgi_req *r);
	/*
	 * A request that was handed to request() and not finished has ended without the
	 * endpoint: the web server hung up or sent FCGI_ABORT_REQUEST, its buffer filled,
	 * or the worker is stopping.  r is valid until the callback returns and may not be
	 * written to; the endpoint forgets every pointer to it.  May be NULL.
	 */
	void (*gone)(void *ctx, struct evfcgi_req *r);
	/* Called every tick_ms milliseconds (heartbeats, expiries) with the monotonic
	 * time in milliseconds; may be NULL. */
	void (*tick)(void *ctx, long long now_ms);
	int tick_ms;
	/* A descriptor of the endpoint's own that the loop watches for input (a datagram
	 * socket, say): own_fd(ctx), asked once after init, returns it or -1 (none);
	 * own_ready(ctx) runs when it is readable (level-triggered: it reads until
	 * EAGAIN).  Both may be NULL. */
	int (*own_fd)(void *ctx);
	void (*own_ready)(void *ctx);
};

/*
 * A connection's state machine without its socket, for the loop and for tests: records go
 * in through evfcgi_conn_feed(), and what the connection has to send comes out of
 * evfcgi_conn_pending().  ops and ctx are borrowed for the connection's life; lim is
 * copied.  Returns NULL when out of memory; free with evfcgi_conn_free() (which calls
 * gone() for a request still open).
 */
struct evfcgi_conn *evfcgi_conn_new(const struct evfcgi_ops *ops, void *ctx,
    const struct evfcgi_limits *lim);
void evfcgi_conn_free(struct evfcgi_conn *c);

/*
 * Reads p[0..n) as the next bytes of the connection, running every record they complete
 * (and the request callback of a request they complete).  Returns 0, or -1 when the
 * connection must be closed: a record broke the protocol or a limit, the web server
 * asked to close it after its request (no keep-conn), or its output passed its cap.
 * Bytes after the record that decided so are ignored.
 */
int evfcgi_conn_feed(struct evfcgi_conn *c, const unsigned char *p, size_t n);

/* The bytes waiting to be sent: *len of them at the returned pointer (borrowed until the
 * next call on c); evfcgi_conn_sent() drops the first n once written. */
const unsigned char *evfcgi_conn_pending(const struct evfcgi_conn *c, size_t *len);
void evfcgi_conn_sent(struct evfcgi_conn *c, size_t n);

/* 1 when the connection is to be closed once its pending bytes are sent (its request
 * finished without keep-conn), or at once (dropped); 0 otherwise. */
int evfcgi_conn_closing(const struct evfcgi_conn *c);
int evfcgi_conn_dropped(const struct evfcgi_conn *c);

/* The open request of c (handed to request() and not finished), or NULL. */
struct evfcgi_req *evfcgi_conn_req(struct evfcgi_conn *c);

/* The loop's own slot in a connection (its descriptor, its list links): borrowed. */
void *evfcgi_conn_user(const struct evfcgi_conn *c);
void evfcgi_conn_set_user(struct evfcgi_conn *c, void *user);

/* A request's parameter (the CGI variable name, "REQUEST_METHOD"): its value, or NULL.
 * Borrowed until the request ends. */
const char *evfcgi_param(const struct evfcgi_req *r, const char *name);

/* Every parameter as a NULL-terminated "NAME=value" array, as CGI's environ (req.h's
 * parser reads that).  Borrowed until the request ends; NULL when out of memory. */
char **evfcgi_envp(struct evfcgi_req *r);

/* The request's body: *len bytes, borrowed until the request ends (never NULL). */
const char *evfcgi_body(const struct evfcgi_req *r, size_t *len);

/* The endpoint's own pointer for the request (NULL at first). */
void *evfcgi_data(const struct evfcgi_req *r);
void evfcgi_set_data(struct evfcgi_req *r, void *data);

/*
 * Queues p[0..n) as the request's output (FCGI_STDOUT records).  Returns 0, or -1 when
 * the connection is gone or is dropped by this write (its buffer would pass its cap): the
 * request stays valid until gone() is called for it.  Never blocks.
 */
int evfcgi_write(struct evfcgi_req *r, const void *p, size_t n);

/* Ends the request (the empty STDOUT and FCGI_END_REQUEST) and frees it: r is invalid
 * afterwards.  Returns 0, or -1 when its connection is gone (r freed all the same). */
int evfcgi_finish(struct evfcgi_req *r);

/* Writes rs as the whole response (resp_send()) and finishes the request.  0 or -1 as
 * evfcgi_finish(); r is invalid afterwards. */
int evfcgi_respond(struct evfcgi_req *r, struct resp *rs);

/*
 * Runs a streaming endpoint as a worker: the listening socket on fd 0 (sluiced) or
 * "-s PATH", the settings above, the system call filter, signals (SIGTERM, SIGINT and
 * SIGUSR1 stop: every open request is finished, what is queued is sent for a second at
 * most, then the process leaves; SIGHUP is ignored), the watchdog's slot while a turn of
 * the loop runs.  init(ctx) runs after the settings are read and before the filter
 * applies (may be NULL; -1 stops the start).  Returns 0 after a stop, 1 when it could not
 * start (said on stderr).
 */
int evfcgi_main(int argc, char **argv, const char *name, const struct evfcgi_ops *ops,
    void *ctx, int (*init)(void *ctx));

#endif /* SLUICE_EVFCGI_H */
