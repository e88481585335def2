/*
 * http.h: an HTTP client for integration tests, over libcurl.
 *
 * http_do() sends one request and collects status, headers and body; http_burst() sends n
 * requests at once over separate connections (curl's multi interface) and reports how
 * they ended; a request loop runs in a background thread while a test kills or reloads
 * workers, and counts every request that did not get the expected status.  For what
 * curl cannot send: raw bytes to a worker's unix socket, and FastCGI record headers.
 */
#ifndef SLUICE_HTTP_H
#define SLUICE_HTTP_H

#include <pthread.h>
#include <stddef.h>

#include "buf.h"

struct http_resp {
	long status;		/* 0 when the request failed at the transport level */
	struct buf headers;
	struct buf body;
	double seconds;
};

void http_resp_init(struct http_resp *r);
void http_resp_free(struct http_resp *r);

/*
 * Sends method url with the given extra header lines (NULL-terminated array, may be NULL)
 * and body (may be NULL).  Fills r (reset first).  Returns 0 when a response arrived, -1
 * on a transport error (r->status 0).  timeout_ms bounds the whole request.
 */
int http_do(const char *method, const char *url, const char *const *headers,
    const char *body, size_t body_len, long timeout_ms, struct http_resp *r);

/* http_do() from the local address from (CURLOPT_INTERFACE; a 127.0.0.0/8 address reaches a
 * server on 127.0.0.1 as a client of its own, as rate limits by address see it). */
int http_do_from(const char *from, const char *method, const char *url,
    const char *const *headers, const char *body, size_t body_len, long timeout_ms,
    struct http_resp *r);

/* The value of response header name (case insensitive) copied into out, or -1. */
int http_header(const struct http_resp *r, const char *name, char *out, size_t len);

/* 1 when r's body is a JSON object whose "code" is the string code (any string when code
 * is NULL), else 0. */
int http_json_code(const struct http_resp *r, const char *code);

struct http_burst {
	int ok;			/* got want_status */
	int other;		/* another status */
	int failed;		/* transport errors */
	double max_seconds;
};

/* Sends n GETs of url at once (one connection each); fills b. */
void http_burst(const char *url, int n, long want_status, long timeout_ms,
    struct http_burst *b);

/*
 * A background loop of sequential requests, for kill and reload tests and for a steady
 * load while a test watches its figures.  sent - bad requests got want_status.
 */
struct http_loop {
	pthread_t tid;
	const char *url;
	const char *method;
	long want_status;
	long pause_ms;		/* the sleep after each request; 0: none */
	volatile int stop;
	long sent;
	long bad;		/* not want_status, or a transport error */
	long last_bad_status;
	double max_seconds;
};

/* Starts the loop of method url in a thread (l is reset first; url and method borrowed
 * until http_loop_stop()).  Returns 0, or -1 when the thread could not start. */
int http_loop_start(struct http_loop *l, const char *method, const char *url, long want);
/* The same, sleeping pause_ms after each request. */
int http_loop_start_paced(struct http_loop *l, const char *method, const char *url,
    long want, long pause_ms);
/* Stops the loop and waits for it. */
void http_loop_stop(struct http_loop *l);

/* Writes a FastCGI record header (version 1, type, request id, content length len, no
 * padding) into p[0..8); returns 8. */
size_t http_fcgi_record(unsigned char *p, int type, int id, size_t len);

/* Writes raw bytes to the unix socket at path and reads until EOF or timeout_ms.  Returns
 * the bytes read, or -1 when the connection could not be made. */
long http_raw_unix(const char *path, const void *p, size_t len, long timeout_ms);

#endif /* SLUICE_HTTP_H */
