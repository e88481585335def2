/*
 * body.h: the chat's write bodies, decoded into their validation table (field.h).
 *
 * A body is JSON (Content-Type application/json): an object whose members are the
 * table's fields, each a string; or an HTML form (application/x-www-form-urlencoded, the
 * page without its script), decoded by req_form(), whose fields are the table's.  The
 * page's other fields (messageSend, channelOpen, nicknameSet: Datastar sent every signal
 * of the page with each action) are allowed and ignored; any other is refused.  The
 * values go through the table's reader, chat_field_read(), whatever the encoding.
 *
 * The order of the refusals: 415 neither JSON nor a form; 400 no body, a "\u0000" escape,
 * not JSON (or nested deeper than 8), not an object, a malformed form escape (or a NUL,
 * or more than REQ_PARAMS_MAX fields); then over the members or fields: a field twice, an
 * unknown name; a required field missing; then field by field, in the table's order: not
 * a string (400 invalid_type, JSON only), NUL, not UTF-8, and the row's own length and
 * character rules.
 */
#ifndef SLUICE_CHAT_BODY_H
#define SLUICE_CHAT_BODY_H

#include <stddef.h>

#include "chat/field.h"

struct req;
struct resp;

/* The most fields a body's table may have. */
#define CHAT_BODY_FIELDS_MAX	8

/*
 * Reads the request body into vals[0..n), one entry per row of tbl[0..n) (n at most
 * CHAT_BODY_FIELDS_MAX): the value of each field that came (in the request's arena,
 * NUL-terminated, valid UTF-8, within its row's rules), s NULL for an optional one that
 * did not.  Returns 0, or -1 with a 4xx response in rs (500 when out of memory).  The
 * values are borrowed until the request ends.
 */
int chat_body_read(struct req *rq, struct resp *rs, const struct chat_field *tbl, size_t n,
    struct chat_value *vals);

#endif /* SLUICE_CHAT_BODY_H */
