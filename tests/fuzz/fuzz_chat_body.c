/*
 * fuzz_chat_body: the chat's write inputs (apps/chat/chat.c) as the three write endpoints use
 * them: chat_body_string() on the JSON body, then chat_field_check() with each endpoint's
 * rules (messageSend: 1..500 characters of text; channelOpen: 1..32 of ^[a-z_][a-z0-9_-]*$;
 * nicknameSet: 1..32 of [A-Za-z0-9 _-]).  No database: nothing here writes.
 *
 * The first input byte picks the endpoint (mod 3) and the Content-Type (/3 mod 4: JSON,
 * JSON with a charset, text/plain, none); the rest is the request body.
 *
 * Invariants: an accepted value is NUL-terminated at its length, has no NUL inside and is
 * valid UTF-8, and the field check agrees with an independent implementation of the rules
 * here; a refusal leaves a 4xx with a JSON error body {code, message, ...}; a body that is
 * not an object, or has an unknown key, is never accepted.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "chat/chat.h"
#include "json.h"
#include "req.h"
#include "resp.h"
#include "str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct {
	const char *key;
	size_t max;
	enum chat_chars chars;
} fuzz_fields[] = {
	{ "messageSend", 500, CHAT_CHARS_TEXT },
	{ "channelOpen", 32, CHAT_CHARS_CHANNEL },
	{ "nicknameSet", 32, CHAT_CHARS_NICKNAME },
};

static const char *const fuzz_types[] = { "CONTENT_TYPE=application/json",
	"CONTENT_TYPE=Application/JSON; charset=utf-8", "CONTENT_TYPE=text/plain", NULL };

/* Decodes one code point of valid UTF-8 (checked by the caller) at s[*i]. */
static uint32_t
fuzz_cp(const unsigned char *s, size_t *i)
{
	uint32_t c = s[*i];
	int n = c < 0x80 ? 0 : c < 0xE0 ? 1 : c < 0xF0 ? 2 : 3, k;

	if (n > 0)
		c &= 0x3Fu >> n;
	for (k = 1; k <= n; k++)
		c = c << 6 | (s[*i + (size_t)k] & 0x3F);
	*i += (size_t)n + 1;
	return c;
}

/* The rules as the endpoints' documentation states them. */
static enum chat_field_err
fuzz_rule(const char *s, size_t len, size_t max, enum chat_chars chars)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, n = 0;
	uint32_t c;

	while (i < len) {
		fuzz_cp(u, &i);
		n++;
	}
	if (n < 1 || n > max)
		return CHAT_FIELD_LENGTH;
	for (i = 0, n = 0; i < len; n++) {
		c = fuzz_cp(u, &i);
		switch (chars) {
		case CHAT_CHARS_TEXT:
			if ((c < 0x20 && c != '\t' && c != '\n') || (c >= 0x7F && c <= 0x9F))
				return CHAT_FIELD_CHARS;
			break;
		case CHAT_CHARS_CHANNEL:
			if (!((c >= 'a' && c <= 'z') || c == '_' ||
			    (n > 0 && ((c >= '0' && c <= '9') || c == '-'))))
				return CHAT_FIELD_CHARS;
			break;
		default:
			if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
			    (c >= '0' && c <= '9') || c == ' ' || c == '_' || c == '-'))
				return CHAT_FIELD_CHARS;
			break;
		}
	}
	return CHAT_FIELD_OK;
}

/* 1 when body parses (cJSON, as chat.c does) to an object with a key outside the chat's
 * signals, or to something that is not an object. */
static int
fuzz_must_refuse(const char *body, size_t len)
{
	cJSON *root, *m;
	int refuse = 0;

	if ((root = cJSON_ParseWithLength(body, len)) == NULL)
		return 0;	/* not for this check to say */
	if (!cJSON_IsObject(root))
		refuse = 1;
	else
		for (m = root->child; m != NULL; m = m->next)
			if (m->string == NULL || (strcmp(m->string, "messageSend") != 0 &&
			    strcmp(m->string, "channelOpen") != 0 &&
			    strcmp(m->string, "nicknameSet") != 0))
				refuse = 1;
	cJSON_Delete(root);
	return refuse;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct arena *a;
	static struct resp rs;
	static int ready;
	char *envp[3], *body;
	const char *val = NULL;
	size_t len = 0, f;
	struct req rq;
	enum json_err jerr;
	cJSON *err;
	int rc;

	if (size < 1)
		return 0;
	if (!ready) {
		a = arena_new(1 << 22);
		resp_init(&rs, 1 << 20);
		ready = 1;
	}
	arena_reset(a);
	resp_reset(&rs);
	f = data[0] % 3;
	envp[0] = (char *)(uintptr_t)"REQUEST_METHOD=POST";
	envp[1] = (char *)(uintptr_t)fuzz_types[(data[0] / 3) % 4];
	envp[2] = NULL;
	if (req_init(&rq, envp, a) != REQ_OK)
		abort();
	/* The body as the serve loop hands it over: a NUL-terminated copy in the arena. */
	if ((body = arena_alloc(a, size)) == NULL)
		abort();
	memcpy(body, data + 1, size - 1);
	body[size - 1] = '\0';
	rq.body = size > 1 ? body : NULL;
	rq.body_len = size - 1;

	rc = chat_body_string(&rq, &rs, fuzz_fields[f].key, &val, &len);
	if (rc == 0) {
		if (rs.status != 0 || val == NULL || strlen(val) != len ||
		    !str_utf8_valid(val, len) || envp[1] == NULL ||
		    fuzz_must_refuse(rq.body, rq.body_len))
			abort();
		if (chat_utf8_len(val, len) > len)
			abort();
		if (chat_field_check(val, len, 1, fuzz_fields[f].max, fuzz_fields[f].chars) !=
		    fuzz_rule(val, len, fuzz_fields[f].max, fuzz_fields[f].chars))
			abort();
		return 0;
	}
	if (rc != -1 || rs.status < 400 || rs.status > 499 || rs.body.data == NULL)
		abort();
	if ((err = json_parse(rs.body.data, rs.body.len, 4, &jerr, NULL)) == NULL)
		abort();
	if (!cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "code")) ||
	    !cJSON_IsString(cJSON_GetObjectItemCaseSensitive(err, "message")))
		abort();
	cJSON_Delete(err);
	return 0;
}
