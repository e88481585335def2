/*
 * field.h: the validation table of the chat's write bodies, and its one reader.
 *
 * Each write endpoint (handlers/chat_*.c) describes the fields of its body as rows of a
 * table of struct chat_field: the field's name, the kind of characters it takes, its length
 * bounds in characters (code points, not bytes), the control characters it allows, whether
 * it is required, and how a refusal reads.  Every value goes through chat_field_read(),
 * which takes a field's name and its decoded bytes: it does not know the body's encoding,
 * so a JSON member (body.h) and a form field pass the same rules and get the same answers.
 *
 * The order of the checks, and so of the refusals: the name (unknown, or seen twice), NUL,
 * UTF-8, the length, the characters.  NUL is refused in every field.  A field that breaks
 * its length or characters is answered by its row (chat_field_refuse()); what is wrong
 * with the body as a whole (unknown, repeated or missing keys, NUL, bad UTF-8) is a 400
 * invalid_body whatever the row.
 */
#ifndef SLUICE_CHAT_FIELD_H
#define SLUICE_CHAT_FIELD_H

#include <stddef.h>
#include <stdint.h>

struct resp;

/* The kinds of characters a field takes. */
enum chat_kind {
	CHAT_KIND_TEXT,		/* printable text: no C0 control but those of the row's ctrl,
				 * no DEL, no C1 control (U+0080..U+009F) */
	CHAT_KIND_CHANNEL,	/* ^[a-z_][a-z0-9_-]*$ */
	CHAT_KIND_NICKNAME,	/* ^[A-Za-z0-9 _-]*$ */
};

/* A C0 control character (below 0x20, not NUL) that a CHAT_KIND_TEXT field allows. */
#define CHAT_CTRL(c)	(UINT32_C(1) << (c))

/* One row of a body's validation table: one field. */
struct chat_field {
	const char *name;	/* the field's name in the body ("messageSend") */
	enum chat_kind kind;
	size_t min, max;	/* the length in code points */
	uint32_t ctrl;		/* CHAT_CTRL('\t') | ...: the controls a TEXT field allows */
	int required;		/* 1: a body without the field is refused */
	/*
	 * The answer to a value of the wrong length (len_*) or characters (chars_*): status
	 * (400, or 422 for a field the page shows the reason of), error code, message and
	 * hint (may be NULL).  With a signal (not NULL), the body leads with that Datastar
	 * signal set to the message, for the page to show: {"SIGNAL":msg,"code":...}; either
	 * way the request's id ends it (resp_error_id()).
	 */
	int status;
	const char *code;
	const char *len_msg, *len_hint;
	const char *chars_msg, *chars_hint;
	const char *signal;
};

/* A field's value as read: s is NULL while the field is absent; borrowed from the caller
 * of chat_field_read(). */
struct chat_value {
	const char *s;
	size_t len;
};

/* Why a field or a value was refused (0: it was not). */
enum chat_field_err {
	CHAT_FIELD_OK = 0,
	CHAT_FIELD_LENGTH,	/* fewer than min or more than max code points */
	CHAT_FIELD_CHARS,	/* a character its kind (and ctrl) does not allow */
	CHAT_FIELD_NUL,		/* a NUL byte */
	CHAT_FIELD_UTF8,	/* not valid UTF-8 */
	CHAT_FIELD_UNKNOWN,	/* no row of that name */
	CHAT_FIELD_TWICE,	/* the field came twice */
	CHAT_FIELD_MISSING,	/* a required field did not come */
};

/* The row of tbl[0..n) named name, or n when there is none. */
size_t chat_field_row(const struct chat_field *tbl, size_t n, const char *name);

/* Checks the value s[0..len) against the row f: NUL, UTF-8, length, characters. */
enum chat_field_err chat_field_check(const struct chat_field *f, const char *s, size_t len);

/*
 * The reader: finds the row of tbl[0..n) named name, checks the decoded value s[0..len)
 * against it (chat_field_check()) and stores it in vals[row] (vals has n entries, zeroed
 * by the caller before the first field).  *row (may be NULL) gets the row, or n when the
 * name is unknown.  Returns CHAT_FIELD_OK, or why the field was refused (UNKNOWN, TWICE
 * when vals[row] was already set, or the value's fault); nothing is stored then.  s is
 * borrowed: it must outlive vals.
 */
enum chat_field_err chat_field_read(const struct chat_field *tbl, size_t n,
    struct chat_value *vals, const char *name, const char *s, size_t len, size_t *row);

/* The first required row of tbl[0..n) without a value in vals, or n when none is missing. */
size_t chat_field_missing(const struct chat_field *tbl, size_t n,
    const struct chat_value *vals);

/*
 * Puts the refusal of field f (may be NULL but for LENGTH and CHARS) named name for
 * reason e into rs: the row's answer for LENGTH and CHARS, else 400 invalid_body.
 * Returns -1, for the callers' "return chat_field_refuse(...);".
 */
int chat_field_refuse(struct resp *rs, const struct chat_field *f, const char *name,
    enum chat_field_err e);

/* Number of code points in the valid UTF-8 string s[0..len). */
size_t chat_utf8_len(const char *s, size_t len);

#endif /* SLUICE_CHAT_FIELD_H */
