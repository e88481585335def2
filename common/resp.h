/*
 * resp.h: the response a handler builds.
 *
 * A handler sets a status, adds headers and appends to the body buffer; the serve loop
 * then writes it in one go with the right Content-Length (and no body for HEAD).  Nothing
 * is sent before the handler returns, so a handler that fails half-way can still replace
 * its response with an error: no partial responses ever leave a worker.
 *
 * Errors go through resp_error(), which writes the JSON body {"code","message","details",
 * "hint"} used by every sluice API (PostgREST's error shape), and "requestId" after them
 * when the response has a request id and its endpoint answers sluice's own errors.
 *
 * Every response with a request id (set by the serve loop, reqid.h) carries it in an
 * X-Request-Id header, and every 503 a Retry-After header ("1" unless the handler added
 * its own): a worker answers 503 only for a passing state.
 */
#ifndef SLUICE_RESP_H
#define SLUICE_RESP_H

#include <stddef.h>
#include <sys/uio.h>

#include "buf.h"
#include "reqid.h"

struct resp {
	int status;			/* 0 until set: the serve loop answers 500 */
	const char *content_type;	/* borrowed; static strings in practice */
	struct buf headers;		/* extra "Name: value\r\n" lines */
	struct buf body;
	int head;			/* a HEAD request: the body is measured, not sent */
	/* The request's id (reqid.h), sent as X-Request-Id; NULL: none.  Borrowed until
	 * the response is sent; cleared by resp_reset(). */
	const char *request_id;
	/* 1 (resp_init()'s default): resp_error() adds "requestId" to the body.  0 for an
	 * endpoint that speaks another API's dialect, whose clients know its exact error
	 * body (the header still names the request).  Kept by resp_reset(). */
	int error_ids;
};

/* Writes raw bytes of the response to the client; returns 0 or -1 (client gone). */
typedef int (*resp_writer)(void *ctx, const char *p, size_t len);

/* Sets up the two buffers with the body cap; called once per thread. */
void resp_init(struct resp *rs, size_t body_cap);
void resp_free(struct resp *rs);
/* Clears everything for the next request (keeps up to 1 MiB of buffer memory). */
void resp_reset(struct resp *rs);

/*
 * Adds a header line.  Refuses (returns -1) a name that is not a token or a value with CR,
 * LF or NUL, so nothing a client sent can split the response.  The value is copied.
 */
int resp_header(struct resp *rs, const char *name, const char *value);

/* Sets status and content type and replaces the body with body[0..len).  0 or -1 (cap). */
int resp_set(struct resp *rs, int status, const char *content_type, const char *body,
    size_t len);

/*
 * Replaces the response with an error: status, and the JSON body
 * {"code":code,"message":message,"details":details,"hint":hint} (details and hint may be
 * NULL, giving JSON null), with ,"requestId":"ID" before the brace when rs has a request
 * id and error_ids is 1.  Headers already added are kept (a 405 keeps its Allow).
 * Always leaves a complete response (a fixed one when even that does not fit); returns 0.
 */
int resp_error(struct resp *rs, int status, const char *code, const char *message,
    const char *details, const char *hint);
/* The same with details_json, JSON text written as it is (an array, an object), as
 * details. */
int resp_error_json(struct resp *rs, int status, const char *code, const char *message,
    const char *details_json, const char *hint);

/*
 * For an error body a handler builds itself (one with members of its own): appends
 * ,"requestId":"ID" to b, as resp_error() ends its body, when rs has a request id and
 * error_ids is 1; else nothing.  Returns 0, or -1 when b's cap refuses it.
 */
int resp_error_id(const struct resp *rs, struct buf *b);

/* The reason phrase of an HTTP status ("Not Found"), "Unknown" when not listed. */
const char *resp_reason(int status);

/* The head's longest text: a status line, a content type of up to 384 bytes, the length,
 * the request id and a 503's Retry-After. */
#define RESP_HEAD_MAX	(512 + 32 + REQID_MAX)

/* The whole response as its bytes go out: the head (status, id, type, length), the extra
 * headers, the blank line and the body (none for HEAD, 204 and 304). */
struct resp_parts {
	char head[RESP_HEAD_MAX];
	struct iovec part[4];	/* borrowed from rs and head; empty ones left out */
	int n;
	size_t len;		/* of all the parts */
};

/*
 * Fills p with rs's response, made whole first as resp_send() makes it (a 500 for a
 * missing or invalid status or a response past its caps).  The parts point into rs and p
 * until either changes.
 */
void resp_parts(struct resp *rs, struct resp_parts *p);

/* Writes the whole response through w; returns 0 or -1 when the writer failed. */
int resp_send(struct resp *rs, resp_writer w, void *ctx);

#endif /* SLUICE_RESP_H */
