/*
 * respset.c: response.headers and response.status, the settings a function (called by
 * rpc, or the pre-request function) sets with set_config() to shape its answer, as
 * PostgREST applies them.
 *
 *   response.headers  a JSON array of objects of one key each, whose value is a string:
 *                     [{"Cache-Control": "no-cache"}, {"X-Total": "3"}]; each one a
 *                     header of the answer (Content-Type replaces the answer's type).
 *   response.status   a status code as text, "201": the answer's status.
 *
 * Applied to an answer below 400 only (a failure keeps its own).  A value that is not
 * that shape, a header name that is not an HTTP token, a value with a control character
 * (CR, LF: no response splitting) or more than REST_RESP_HEADERS_MAX headers is 500
 * PGRST111; a status that is not a number from 100 to 599 is 500 PGRST112, with
 * PostgREST's messages.  Nothing is applied unless everything is valid.
 */
#include <string.h>
#include <strings.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "rest.h"

/* 1 when s is an HTTP token (RFC 9110's tchar). */
static int
resp_token(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || strchr("!#$%&'*+-.^_`|~", *s) != NULL))
			return 0;
	return 1;
}

/* 1 when a header value holds no control character but tab. */
static int
resp_value_ok(const char *s)
{
	for (; *s != '\0'; s++)
		if (((unsigned char)*s < 0x20 && *s != '\t') || *s == 0x7f)
			return 0;
	return 1;
}

/* The headers' array j, checked whole: 1 when every element is valid. */
static int
resp_headers_ok(const cJSON *j)
{
	const cJSON *o;
	int n = 0;

	if (!cJSON_IsArray(j))
		return 0;
	cJSON_ArrayForEach(o, j) {
		const cJSON *kv = o->child;

		if (!cJSON_IsObject(o) || kv == NULL || kv->next != NULL ||
		    !cJSON_IsString(kv) || !resp_token(kv->string) ||
		    !resp_value_ok(kv->valuestring) || ++n > REST_RESP_HEADERS_MAX)
			return 0;
	}
	return 1;
}

/* The status text s as a code from 100 to 599, or -1. */
static int
resp_status_of(const char *s)
{
	int v = 0, i;

	for (i = 0; s[i] >= '0' && s[i] <= '9' && i < 3; i++)
		v = v * 10 + (s[i] - '0');
	return i == 3 && s[i] == '\0' && v >= 100 && v <= 599 ? v : -1;
}

int
rest_resp_apply(struct arena *ar, struct resp *rs, const char *headers, const char *status,
    struct rest_err *e)
{
	cJSON *j = NULL;
	const cJSON *o;
	int code = -1;

	if (rs->status >= 400)
		return 0;
	if (headers != NULL && *headers != '\0' &&
	    ((j = cJSON_Parse(headers)) == NULL || !resp_headers_ok(j))) {
		cJSON_Delete(j);
		rest_err_set(e, 500, "PGRST111", NULL, "response.headers guc must be a JSON array "
		    "composed of objects with a single key and a string value");
		return -1;
	}
	if (status != NULL && *status != '\0' && (code = resp_status_of(status)) < 0) {
		cJSON_Delete(j);
		rest_err_set(e, 500, "PGRST112", NULL, "response.status guc must be a valid "
		    "status code");
		return -1;
	}
	cJSON_ArrayForEach(o, j) {
		const cJSON *kv = o->child;

		const char *ct;

		if (strcasecmp(kv->string, "Content-Type") == 0) {
			if ((ct = arena_strndup(ar, kv->valuestring,
			    strlen(kv->valuestring))) != NULL)
				rs->content_type = ct;
		} else
			(void)resp_header(rs, kv->string, kv->valuestring);
	}
	cJSON_Delete(j);
	if (code > 0)
		rs->status = code;
	return 0;
}

void
rest_resp_capture(struct arena *ar, struct rest_thread *t, struct db_stmt *st, int col)
{
	const char *v;
	size_t len;

	if ((v = db_column_text(st, col, &len)) != NULL && len > 0)
		t->resp_headers = arena_strndup(ar, v, len);
	if ((v = db_column_text(st, col + 1, &len)) != NULL && len > 0)
		t->resp_status = arena_strndup(ar, v, len);
}
