/*
 * multipart.h: the records API's reading of a multipart/form-data body (RFC 7578) that
 * carries one plain field, such as the "@jsonPayload" of the PocketBase SDK's batch.
 *
 * Only what the callers need is read: the boundary from the Content-Type's parameter
 * (quoted or not, 1 to 70 characters), the parts' CRLF-delimited headers, and each part's
 * value up to the next delimiter.  Nothing is copied and nothing allocated: the value is
 * pointed at inside the body.  A body is refused (-1) when its first delimiter is missing,
 * a part's headers do not end, a part does not end before the body does, the closing
 * delimiter is missing, or it holds any part but one: a plain field (no filename) of the
 * given name, once.
 */
#ifndef SLUICE_RECORDS_MULTIPART_H
#define SLUICE_RECORDS_MULTIPART_H

#include <stddef.h>

/*
 * The value of the sole part of body[0..len) (Content-Type content_type), which must be
 * the plain field name: 0 with *val and *vlen pointing into body, or -1.
 */
int multipart_sole_field(const char *content_type, const char *body, size_t len,
    const char *name, const char **val, size_t *vlen);

#endif
