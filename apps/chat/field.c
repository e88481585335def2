/*
 * field.c: the validation table's reader (field.h).  Pure functions of their arguments,
 * but for chat_field_refuse(), which writes the response.
 */
#include <stdio.h>
#include <string.h>

#include "buf.h"
#include "chat/field.h"
#include "json.h"
#include "resp.h"
#include "str.h"

/* Decodes one code point of valid UTF-8 at s[*i], advancing *i. */
static uint32_t
chat_utf8_next(const unsigned char *s, size_t *i)
{
	uint32_t c = s[*i];

	if (c < 0x80) {
		*i += 1;
		return c;
	}
	if (c < 0xE0) {
		c = (c & 0x1F) << 6 | (s[*i + 1] & 0x3F);
		*i += 2;
		return c;
	}
	if (c < 0xF0) {
		c = (c & 0x0F) << 12 | (uint32_t)(s[*i + 1] & 0x3F) << 6 | (s[*i + 2] & 0x3F);
		*i += 3;
		return c;
	}
	c = (c & 0x07) << 18 | (uint32_t)(s[*i + 1] & 0x3F) << 12 |
	    (uint32_t)(s[*i + 2] & 0x3F) << 6 | (s[*i + 3] & 0x3F);
	*i += 4;
	return c;
}

size_t
chat_utf8_len(const char *s, size_t len)
{
	size_t i, n = 0;

	for (i = 0; i < len; i++)
		n += ((unsigned char)s[i] & 0xC0) != 0x80;
	return n;
}

/* 1 when the k-th code point c of a value may appear in a field of f's kind. */
static int
chat_field_char_ok(const struct chat_field *f, uint32_t c, size_t k)
{
	switch (f->kind) {
	case CHAT_KIND_TEXT:
		if (c < 0x20)
			return (f->ctrl & CHAT_CTRL(c)) != 0;
		return c != 0x7F && !(c >= 0x80 && c <= 0x9F);
	case CHAT_KIND_CHANNEL:
		return (c >= 'a' && c <= 'z') || c == '_' ||
		    (k > 0 && ((c >= '0' && c <= '9') || c == '-'));
	case CHAT_KIND_NICKNAME:
		return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
		    (c >= '0' && c <= '9') || c == ' ' || c == '_' || c == '-';
	}
	return 0;
}

size_t
chat_field_row(const struct chat_field *tbl, size_t n, const char *name)
{
	size_t i;

	for (i = 0; i < n && name != NULL; i++)
		if (strcmp(tbl[i].name, name) == 0)
			return i;
	return n;
}

enum chat_field_err
chat_field_check(const struct chat_field *f, const char *s, size_t len)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t n, i = 0, k = 0;

	if (memchr(s, '\0', len) != NULL)
		return CHAT_FIELD_NUL;
	if (!str_utf8_valid(s, len))
		return CHAT_FIELD_UTF8;
	n = chat_utf8_len(s, len);
	if (n < f->min || n > f->max)
		return CHAT_FIELD_LENGTH;
	while (i < len)
		if (!chat_field_char_ok(f, chat_utf8_next(u, &i), k++))
			return CHAT_FIELD_CHARS;
	return CHAT_FIELD_OK;
}

enum chat_field_err
chat_field_read(const struct chat_field *tbl, size_t n, struct chat_value *vals,
    const char *name, const char *s, size_t len, size_t *row)
{
	size_t r = chat_field_row(tbl, n, name);
	enum chat_field_err e;

	if (row != NULL)
		*row = r;
	if (r == n)
		return CHAT_FIELD_UNKNOWN;
	if (vals[r].s != NULL)
		return CHAT_FIELD_TWICE;
	if ((e = chat_field_check(&tbl[r], s, len)) != CHAT_FIELD_OK)
		return e;
	vals[r].s = s;
	vals[r].len = len;
	return CHAT_FIELD_OK;
}

size_t
chat_field_missing(const struct chat_field *tbl, size_t n, const struct chat_value *vals)
{
	size_t i;

	for (i = 0; i < n; i++)
		if (tbl[i].required && vals[i].s == NULL)
			break;
	return i;
}

/* The row's answer to a value it refused: resp_error()'s body, led by the row's signal
 * when it has one. */
static int
chat_field_answer(struct resp *rs, const struct chat_field *f, const char *msg,
    const char *hint)
{
	struct buf *b = &rs->body;

	if (f->signal == NULL) {
		resp_error(rs, f->status, f->code, msg, NULL, hint);
		return -1;
	}
	rs->status = f->status;
	rs->content_type = "application/json";
	b->len = 0;
	buf_putc(b, '{');
	json_escape(b, f->signal, strlen(f->signal));
	buf_putc(b, ':');
	json_escape(b, msg, strlen(msg));
	buf_puts(b, ",\"code\":");
	json_escape(b, f->code, strlen(f->code));
	buf_puts(b, ",\"message\":");
	json_escape(b, msg, strlen(msg));
	buf_puts(b, ",\"details\":null,\"hint\":");
	if (hint != NULL)
		json_escape(b, hint, strlen(hint));
	else
		buf_puts(b, "null");
	resp_error_id(rs, b);
	buf_putc(b, '}');
	if (buf_failed(b))
		resp_error(rs, f->status, f->code, msg, NULL, NULL);
	return -1;
}

int
chat_field_refuse(struct resp *rs, const struct chat_field *f, const char *name,
    enum chat_field_err e)
{
	char msg[160];

	switch (e) {
	case CHAT_FIELD_LENGTH:
		return chat_field_answer(rs, f, f->len_msg, f->len_hint);
	case CHAT_FIELD_CHARS:
		return chat_field_answer(rs, f, f->chars_msg, f->chars_hint);
	case CHAT_FIELD_NUL:
		resp_error(rs, 400, "invalid_body", "NUL characters are not allowed", NULL,
		    NULL);
		break;
	case CHAT_FIELD_UTF8:
		resp_error(rs, 400, "invalid_body", "the string is not valid UTF-8", NULL,
		    NULL);
		break;
	case CHAT_FIELD_UNKNOWN:
		resp_error(rs, 400, "invalid_body", "unexpected key in the body", name, NULL);
		break;
	case CHAT_FIELD_TWICE:
		resp_error(rs, 400, "invalid_body", "a key appears twice", name, NULL);
		break;
	case CHAT_FIELD_MISSING:
		(void)snprintf(msg, sizeof(msg), "the body must have the key \"%s\"", name);
		resp_error(rs, 400, "invalid_body", msg, NULL, NULL);
		break;
	case CHAT_FIELD_OK:
		resp_error(rs, 500, "internal", "a field was refused without a reason", NULL,
		    NULL);
		break;
	}
	return -1;
}
