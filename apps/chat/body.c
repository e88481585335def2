/*
 * body.c: the JSON and form decodings of body.h.  cJSON parses a JSON body (json_parse(),
 * with its depth limit); the tree is freed before returning, so the accepted values are
 * copied into the request's arena.  A form is decoded by req_form() straight into the
 * arena.
 */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "chat/body.h"
#include "json.h"
#include "req.h"
#include "resp.h"
#include "str.h"

#define CHAT_BODY_DEPTH	8

/* The page's signals: Datastar sends them all with every action. */
static const char *const chat_body_signals[] = { "messageSend", "channelOpen",
    "nicknameSet", NULL };

static int
chat_body_is_signal(const char *name)
{
	size_t i;

	for (i = 0; name != NULL && chat_body_signals[i] != NULL; i++)
		if (strcmp(name, chat_body_signals[i]) == 0)
			return 1;
	return 0;
}

/* The JSON object root's members into vals (see body.h for the order).  0 or -1. */
static int
chat_body_members(struct req *rq, struct resp *rs, const cJSON *root,
    const struct chat_field *tbl, size_t n, struct chat_value *vals)
{
	const cJSON *found[CHAT_BODY_FIELDS_MAX] = { NULL }, *m;
	enum chat_field_err e;
	char msg[160];
	size_t i, len;
	const char *s;

	for (m = root->child; m != NULL; m = m->next) {
		if ((i = chat_field_row(tbl, n, m->string)) < n) {
			if (found[i] != NULL)
				return chat_field_refuse(rs, &tbl[i], m->string,
				    CHAT_FIELD_TWICE);
			found[i] = m;
		} else if (!chat_body_is_signal(m->string))
			return chat_field_refuse(rs, NULL, m->string, CHAT_FIELD_UNKNOWN);
	}
	for (i = 0; i < n; i++)
		if (tbl[i].required && found[i] == NULL)
			return chat_field_refuse(rs, &tbl[i], tbl[i].name, CHAT_FIELD_MISSING);
	for (i = 0; i < n; i++) {
		if ((m = found[i]) == NULL)
			continue;
		if (!cJSON_IsString(m) || m->valuestring == NULL) {
			(void)snprintf(msg, sizeof(msg), "\"%s\" must be a string", tbl[i].name);
			resp_error(rs, 400, "invalid_type", msg, NULL, NULL);
			return -1;
		}
		len = strlen(m->valuestring);
		/* Not valid UTF-8 (a lone surrogate escape) is refused before the copy, as the
		 * reader would, so that a full arena does not change that answer. */
		if (!str_utf8_valid(m->valuestring, len))
			return chat_field_refuse(rs, &tbl[i], tbl[i].name, CHAT_FIELD_UTF8);
		if ((s = arena_strndup(rq->arena, m->valuestring, len)) == NULL) {
			resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
			return -1;
		}
		if ((e = chat_field_read(tbl, n, vals, tbl[i].name, s, len, NULL)) !=
		    CHAT_FIELD_OK)
			return chat_field_refuse(rs, &tbl[i], tbl[i].name, e);
	}
	return 0;
}

/* A JSON body (body.h).  0, or -1 with the response in rs. */
static int
chat_body_json(struct req *rq, struct resp *rs, const struct chat_field *tbl, size_t n,
    struct chat_value *vals)
{
	enum json_err jerr = JSON_OK;
	cJSON *root = NULL;
	char msg[160];
	size_t pos = 0;
	int ret = -1;

	if (rq->body == NULL || rq->body_len == 0) {
		resp_error(rs, 400, "invalid_body", "the request has no body", NULL, NULL);
		goto out;
	}
	if (json_has_nul_escape(rq->body, rq->body_len)) {
		chat_field_refuse(rs, NULL, NULL, CHAT_FIELD_NUL);
		goto out;
	}
	if ((root = json_parse(rq->body, rq->body_len, CHAT_BODY_DEPTH, &jerr, &pos)) ==
	    NULL) {
		if (jerr == JSON_ENOMEM) {
			resp_error(rs, 500, "internal", "out of memory", NULL, NULL);
			goto out;
		}
		(void)snprintf(msg, sizeof(msg), "%s at byte %zu", jerr == JSON_ETOODEEP ?
		    "nested too deep" : "not valid JSON (or not UTF-8)", pos);
		resp_error(rs, 400, "invalid_json", "the body is not valid JSON", msg, NULL);
		goto out;
	}
	if (!cJSON_IsObject(root)) {
		resp_error(rs, 400, "invalid_body", "the body must be a JSON object", NULL, NULL);
		goto out;
	}
	ret = chat_body_members(rq, rs, root, tbl, n, vals);
out:
	cJSON_Delete(root);
	return ret;
}

/*
 * A form body (body.h): the fields decoded by req_form(), then the same order of
 * refusals as the JSON members: a field twice or an unknown name, a required field
 * missing, then field by field through the table's reader.  0, or -1 with the response
 * in rs.
 */
static int
chat_body_form(struct req *rq, struct resp *rs, const struct chat_field *tbl, size_t n,
    struct chat_value *vals)
{
	const struct req_param *found[CHAT_BODY_FIELDS_MAX] = { NULL };
	struct req_param *p;
	enum chat_field_err e;
	enum req_err re;
	size_t np, i, k;

	if (rq->body == NULL || rq->body_len == 0) {
		resp_error(rs, 400, "invalid_body", "the request has no body", NULL, NULL);
		return -1;
	}
	if ((re = req_form(rq, &p, &np)) != REQ_OK) {
		if (re == REQ_ENOMEM)
			resp_error(rs, 413, "too_large", "the request is too large", NULL, NULL);
		else
			resp_error(rs, 400, "invalid_body", re == REQ_ETOOMANY ?
			    "too many form fields" : "malformed form encoding (or a NUL)", NULL,
			    NULL);
		return -1;
	}
	for (k = 0; k < np; k++) {
		if ((i = chat_field_row(tbl, n, p[k].key)) < n) {
			if (found[i] != NULL)
				return chat_field_refuse(rs, &tbl[i], tbl[i].name,
				    CHAT_FIELD_TWICE);
			found[i] = &p[k];
		} else if (!chat_body_is_signal(p[k].key))
			/* The name is echoed only when it is text (the error is JSON). */
			return chat_field_refuse(rs, NULL, str_utf8_valid(p[k].key,
			    p[k].keylen) ? p[k].key : NULL, CHAT_FIELD_UNKNOWN);
	}
	for (i = 0; i < n; i++)
		if (tbl[i].required && found[i] == NULL)
			return chat_field_refuse(rs, &tbl[i], tbl[i].name, CHAT_FIELD_MISSING);
	for (i = 0; i < n; i++) {
		if (found[i] == NULL)
			continue;
		if ((e = chat_field_read(tbl, n, vals, tbl[i].name, found[i]->val,
		    found[i]->vallen, NULL)) != CHAT_FIELD_OK)
			return chat_field_refuse(rs, &tbl[i], tbl[i].name, e);
	}
	return 0;
}

int
chat_body_read(struct req *rq, struct resp *rs, const struct chat_field *tbl, size_t n,
    struct chat_value *vals)
{
	assert(n <= CHAT_BODY_FIELDS_MAX);
	memset(vals, 0, n * sizeof(*vals));
	if (req_content_type_is(rq, "application/json"))
		return chat_body_json(rq, rs, tbl, n, vals);
	if (req_content_type_is(rq, "application/x-www-form-urlencoded"))
		return chat_body_form(rq, rs, tbl, n, vals);
	resp_error(rs, 415, "unsupported_media_type", "the body must be JSON "
	    "(Content-Type: application/json) or a form (application/x-www-form-urlencoded)",
	    NULL, NULL);
	return -1;
}
