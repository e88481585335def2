/*
 * encode.h: content coding of response bodies (Brotli, gzip) by Accept-Encoding.
 *
 * encode_response() picks Brotli when the request accepts "br", gzip when it accepts
 * gzip but not br, and identity otherwise ("q=0" refuses a coding; "*" stands for any
 * coding not named).  Bodies under ENCODE_MIN bytes are sent as they are: the framing
 * would cost more than it saves.  Brotli runs at quality 3 with a 2^21-byte window (the
 * settings of the benchmark this reproduces), or the smallest power of two that holds a
 * smaller body (which compresses it the same, with a smaller buffer); gzip at zlib's
 * default level.  The response
 * always gets "Vary: Accept-Encoding", since its representation depends on that header.
 */
#ifndef SLUICE_ENCODE_H
#define SLUICE_ENCODE_H

#include <stddef.h>

struct req;
struct resp;

#define ENCODE_MIN		500
#define ENCODE_BR_QUALITY	3
#define ENCODE_BR_LGWIN		21

enum encode_coding {
	ENCODE_IDENTITY,
	ENCODE_GZIP,
	ENCODE_BR,
};

/* The Brotli window (log2 of its bytes) for a body of len bytes: ENCODE_BR_LGWIN, or the
 * smallest window, at least BROTLI_MIN_WINDOW_BITS (10), that holds the whole body. */
int encode_br_window(size_t len);

/* The coding to use for an Accept-Encoding value (NULL: identity). */
enum encode_coding encode_choose(const char *accept_encoding);

/* 1 when an Accept-Encoding value (NULL: none) accepts coding c (identity: always), by
 * the rules of encode_choose(); else 0. */
int encode_accepts(const char *accept_encoding, enum encode_coding c);

/*
 * Compresses rs->body in place according to rq's Accept-Encoding and adds the
 * Content-Encoding and Vary headers.  Scratch memory comes from rq's arena.  Returns 0,
 * or -1 when compression failed (the body is then left as it was, uncompressed, and the
 * response is still correct).
 */
int encode_response(const struct req *rq, struct resp *rs);

#endif /* SLUICE_ENCODE_H */
