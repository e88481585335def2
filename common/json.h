/*
 * json.h: JSON helpers over cJSON.
 *
 * Request bodies are parsed with cJSON after a validating pre-scan (the RFC 8259 grammar,
 * stricter than cJSON) that also enforces a nesting limit, so a hostile body of 10,000
 * nested brackets is refused before any deep recursion.
 * Small responses are built with json_escape() straight into a buf; large ones are built
 * by the database.
 */
#ifndef SLUICE_JSON_H
#define SLUICE_JSON_H

#include <stddef.h>

#include <cjson/cJSON.h>

#include "buf.h"

#define JSON_DEPTH_DEFAULT	64

enum json_err {
	JSON_OK = 0,
	JSON_ETOODEEP,		/* nesting past the limit */
	JSON_ESYNTAX,		/* not JSON, trailing bytes, or not UTF-8 */
	JSON_ENOMEM,
};

/*
 * Parses s[0..len) (need not be NUL-terminated) as one JSON value with nesting at most
 * max_depth.  Returns the value (caller frees with cJSON_Delete()) or NULL with *err set;
 * *errpos (may be NULL) gets the byte offset of a syntax error.
 */
cJSON *json_parse(const char *s, size_t len, int max_depth, enum json_err *err,
    size_t *errpos);

/*
 * 1 when the JSON text s[0..len) holds a "\u0000" escape.  cJSON ends its strings at a NUL,
 * so such a value (or key) would be silently cut: callers that store strings refuse the
 * body instead.  Meant for text json_parse() took (outside strings a backslash cannot
 * occur), where it finds exactly the escapes of NUL.
 */
int json_has_nul_escape(const char *s, size_t len);

/* 1 when every number in v (a parsed tree) is finite: "1e999" parses as infinity, which no
 * column holds and no JSON writer can print back. */
int json_numbers_finite(const cJSON *v);

/* Appends s[0..len) as a quoted JSON string, escaping what JSON requires.  Bytes are
 * copied as they are: validate UTF-8 first where it matters.  0 or -1 (the buf's cap). */
int json_escape(struct buf *b, const char *s, size_t len);

/* Appends cJSON's compact text of v.  0 or -1. */
int json_print(struct buf *b, const cJSON *v);

#endif /* SLUICE_JSON_H */
