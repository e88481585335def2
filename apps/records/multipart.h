/*
 * multipart.h: the records API's reading of a multipart/form-data body (RFC 7578): the
 * PocketBase SDK's FormData on create and update, and the "@jsonPayload" of its batch.
 *
 * The boundary comes from the Content-Type's boundary parameter (its name in any case,
 * its value quoted or not, 1 to 70 characters).  multipart_next() walks the parts in order: each part's CRLF-delimited
 * headers are read (Content-Disposition: form-data with its name and filename parameters,
 * Content-Type), and its value runs up to the next delimiter.  Nothing is copied and
 * nothing allocated: names, types and values point inside the body.
 *
 * A body is refused (MULTIPART_BAD) when its first delimiter is missing, a part's headers
 * do not end within MULTIPART_HEADERS_MAX bytes, a header line has no colon, a part has no
 * Content-Disposition of form-data with a non-empty name, a parameter's quoted value does
 * not end, a part does not end before the body does, or the closing delimiter is missing;
 * MULTIPART_TOO_MANY past MULTIPART_PARTS_MAX parts.
 */
#ifndef SLUICE_RECORDS_MULTIPART_H
#define SLUICE_RECORDS_MULTIPART_H

#include <stddef.h>

#define MULTIPART_HEADERS_MAX	4096	/* bytes of one part's headers */
#define MULTIPART_PARTS_MAX	1000	/* parts of one body, as REQ_PARAMS_MAX pairs */

enum multipart_rc {
	MULTIPART_BAD = -2,		/* malformed: 400 */
	MULTIPART_TOO_MANY = -1,	/* past MULTIPART_PARTS_MAX: 400 */
	MULTIPART_END = 0,		/* the closing delimiter was read */
	MULTIPART_PART = 1,		/* *part was filled */
};

/* One part.  Every pointer is borrowed from the body. */
struct multipart_part {
	const char *name;	/* the Content-Disposition's name, never empty */
	size_t namelen;
	const char *filename;	/* its filename (possibly empty), or NULL: a plain field */
	size_t filenamelen;
	const char *type;	/* the part's Content-Type, or NULL */
	size_t typelen;
	const char *data;	/* the value */
	size_t len;
};

/* A walk over one body; opaque to the callers but for its size. */
struct multipart {
	const char *p;
	size_t rest;
	char delim[80];		/* "\r\n--BOUNDARY" */
	size_t dlen;
	size_t nparts;
	int done;		/* ended or failed: final is answered again */
	int final;
};

/*
 * Starts a walk of body[0..len) of type content_type (borrowed while the walk lasts).
 * 0, or MULTIPART_BAD when content_type has no usable boundary or the body does not start
 * with its delimiter.
 */
int multipart_open(struct multipart *m, const char *content_type, const char *body,
    size_t len);

/* The next part into *part: an enum multipart_rc.  After MULTIPART_END or a failure,
 * every further call answers the same. */
int multipart_next(struct multipart *m, struct multipart_part *part);

/*
 * The value of the sole part of body[0..len) (Content-Type content_type), which must be
 * the plain field name: 0 with *val and *vlen pointing into body, or -1.
 */
int multipart_sole_field(const char *content_type, const char *body, size_t len,
    const char *name, const char **val, size_t *vlen);

#endif
