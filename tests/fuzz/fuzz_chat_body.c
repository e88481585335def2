/*
 * fuzz_chat_body: the chat's write inputs (apps/chat/body.c, field.c) as the three write
 * endpoints use them: chat_body_read() on the JSON or form body through each endpoint's
 * validation table row (messageSend: 1..500 characters of text; channelOpen: 1..32 of
 * ^[a-z_][a-z0-9_-]*$; nicknameSet: 1..32 of [A-Za-z0-9 _-]).  No database: nothing here
 * writes.
 *
 * The first input byte picks the endpoint (mod 3) and the Content-Type (/3 mod 5: JSON,
 * JSON with a charset, text/plain, none, an HTML form); the rest is the request body.
 *
 * Invariants: an accepted value is NUL-terminated at its length, has no NUL inside, is
 * valid UTF-8 and keeps its row's rules; the row's check (chat_field_check()) agrees with
 * an independent implementation of the rules here on every string value the body holds
 * for the endpoint's key; a refusal leaves a 4xx with a JSON error body {code, message,
 * ...}; a JSON body that is not an object, or has an unknown key, is never accepted, nor
 * is a form without the field's name.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "chat/body.h"
#include "json.h"
#include "req.h"
#include "resp.h"
#include "str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The endpoints' rows, as handlers/chat_*.c hold them. */
static const struct chat_field fuzz_fields[] = {
	{ .name = "messageSend", .kind = CHAT_KIND_TEXT, .min = 1, .max = 500,
	    .ctrl = CHAT_CTRL('\t') | CHAT_CTRL('\n'), .required = 1, .status = 400,
	    .code = "invalid_value", .len_msg = "messageSend must be 1 to 500 characters",
	    .chars_msg = "messageSend may not contain control characters",
	    .chars_hint = "tab and newline are allowed" },
	{ .name = "channelOpen", .kind = CHAT_KIND_CHANNEL, .min = 1, .max = 32,
	    .required = 1, .status = 400, .code = "invalid_value",
	    .len_msg = "channelOpen must be 1 to 32 characters",
	    .chars_msg = "channelOpen must match ^[a-z_][a-z0-9_-]*$" },
	{ .name = "nicknameSet", .kind = CHAT_KIND_NICKNAME, .min = 1, .max = 32,
	    .required = 1, .status = 422, .code = "invalid_nickname",
	    .signal = "_nicknameSetError",
	    .len_msg = "The nickname must be 1 to 32 characters.",
	    .chars_msg = "The nickname may contain only letters, digits, spaces, _ and -." },
};

static const char *const fuzz_types[] = { "CONTENT_TYPE=application/json",
	"CONTENT_TYPE=Application/JSON; charset=utf-8", "CONTENT_TYPE=text/plain", NULL,
	"CONTENT_TYPE=application/x-www-form-urlencoded" };

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
fuzz_rule(const char *s, size_t len, size_t max, enum chat_kind chars)
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
		case CHAT_KIND_TEXT:
			if ((c < 0x20 && c != '\t' && c != '\n') || (c >= 0x7F && c <= 0x9F))
				return CHAT_FIELD_CHARS;
			break;
		case CHAT_KIND_CHANNEL:
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

/*
 * The endpoint's row f checks, like the rules above, the value of f's key wherever cJSON
 * finds one that is a valid UTF-8 string, accepted body or not.
 */
static void
fuzz_check_agrees(const char *body, size_t len, const struct chat_field *f)
{
	const cJSON *m;
	cJSON *root;
	size_t n;

	if ((root = cJSON_ParseWithLength(body, len)) == NULL)
		return;
	for (m = cJSON_IsObject(root) ? root->child : NULL; m != NULL; m = m->next) {
		if (m->string == NULL || strcmp(m->string, f->name) != 0 ||
		    !cJSON_IsString(m) || m->valuestring == NULL)
			continue;
		n = strlen(m->valuestring);
		if (!str_utf8_valid(m->valuestring, n))
			continue;
		if (chat_field_check(f, m->valuestring, n) !=
		    fuzz_rule(m->valuestring, n, f->max, f->kind))
			abort();
	}
	cJSON_Delete(root);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct arena *a;
	static struct resp rs;
	static int ready;
	char *envp[3], *body;
	struct chat_value vals[1];
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
	envp[1] = (char *)(uintptr_t)fuzz_types[(data[0] / 3) % 5];
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

	fuzz_check_agrees(rq.body, rq.body_len, &fuzz_fields[f]);
	rc = chat_body_read(&rq, &rs, &fuzz_fields[f], 1, vals);
	if (rc == 0) {
		val = vals[0].s;
		len = vals[0].len;
		if (rs.status != 0 || val == NULL || strlen(val) != len ||
		    !str_utf8_valid(val, len) || envp[1] == NULL)
			abort();
		if ((data[0] / 3) % 5 == 4 ? strstr(rq.body, fuzz_fields[f].name) == NULL :
		    fuzz_must_refuse(rq.body, rq.body_len))
			abort();
		if (chat_utf8_len(val, len) > len)
			abort();
		if (chat_field_check(&fuzz_fields[f], val, len) != CHAT_FIELD_OK ||
		    fuzz_rule(val, len, fuzz_fields[f].max, fuzz_fields[f].kind) !=
		    CHAT_FIELD_OK)
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
