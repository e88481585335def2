/*
 * form.c: the records API's form bodies read into x->body, the same object a JSON body
 * makes, so that one validation (write.c's rec_value()) serves them all.
 *
 * application/x-www-form-urlencoded (a=1&b=x&b=y) and multipart/form-data (the PocketBase
 * SDK's FormData) give an object of strings, a key given more than once an array of them;
 * x->form is set, so that rec_value() reads each string by its field's type.  A multipart
 * part named "@jsonPayload" (what the SDK sends for an object value beside files) holds a
 * JSON object whose keys are merged in, later ones replacing earlier ones, as PocketBase
 * does.  Files are not stored by the records API: a part with a non-empty filename or
 * content is refused (400, its field named in data); a file input left empty by a
 * browser (filename "" and no bytes) is skipped.
 */
#include <string.h>

#include "arena.h"
#include "json.h"
#include "records.h"
#include "records/multipart.h"
#include "str.h"

#define REC_FORM_DEPTH	32	/* nesting of an "@jsonPayload", as a JSON body's */

/* Sets key to the string v in x->body, or appends v when the key is there already.  0, or
 * -1 (v is freed). */
static int
rec_form_put(struct rec_ctx *x, const char *key, cJSON *v)
{
	cJSON *old = cJSON_GetObjectItemCaseSensitive(x->body, key), *arr;

	if (old == NULL)
		return cJSON_AddItemToObject(x->body, key, v) ? 0 : (cJSON_Delete(v), -1);
	if (cJSON_IsArray(old))
		return cJSON_AddItemToArray(old, v) ? 0 : (cJSON_Delete(v), -1);
	if ((arr = cJSON_CreateArray()) == NULL) {
		cJSON_Delete(v);
		return -1;
	}
	cJSON_AddItemToArray(arr, cJSON_Duplicate(old, 1));
	cJSON_AddItemToArray(arr, v);
	cJSON_ReplaceItemInObjectCaseSensitive(x->body, key, arr);
	return 0;
}

/* Starts x->body as an empty object of a form.  0, or -1 with a 413 answered. */
static int
rec_form_start(struct rec_ctx *x)
{
	x->form = 1;
	if ((x->body = cJSON_CreateObject()) == NULL) {
		rec_error(x->rs, 413, NULL, NULL);
		return -1;
	}
	x->f.body = x->body;
	return 0;
}

static int
rec_form_bad(struct rec_ctx *x)
{
	rec_error(x->rs, 400, "Failed to load the submitted data due to invalid formatting.",
	    NULL);
	return -1;
}

int
rec_form(struct rec_ctx *x)
{
	struct req_param *p;
	size_t n, i;
	enum req_err re;

	if (rec_form_start(x) < 0)
		return -1;
	if ((re = req_form(x->rq, &p, &n)) == REQ_ENOMEM) {
		rec_error(x->rs, 413, NULL, NULL);
		return -1;
	}
	if (re != REQ_OK)
		return rec_form_bad(x);
	for (i = 0; i < n; i++) {
		cJSON *v;

		if (!str_utf8_valid(p[i].key, p[i].keylen) ||
		    !str_utf8_valid(p[i].val, p[i].vallen) ||
		    (v = cJSON_CreateString(p[i].val)) == NULL ||
		    rec_form_put(x, p[i].key, v) < 0)
			return rec_form_bad(x);
	}
	return 0;
}

/* Merges the JSON object p[0..len) of an "@jsonPayload" part into x->body.  0 or -1. */
static int
rec_form_payload(struct rec_ctx *x, const char *p, size_t len)
{
	enum json_err je;
	cJSON *o = json_parse(p, len, REC_FORM_DEPTH, &je, NULL), *it;

	if (o == NULL || !cJSON_IsObject(o) || json_has_nul_escape(p, len) ||
	    !json_numbers_finite(o)) {
		cJSON_Delete(o);
		return -1;
	}
	while ((it = o->child) != NULL) {
		cJSON_DetachItemViaPointer(o, it);
		cJSON_DeleteItemFromObjectCaseSensitive(x->body, it->string);
		if (!cJSON_AddItemToObject(x->body, it->string, it)) {
			cJSON_Delete(it);
			cJSON_Delete(o);
			return -1;
		}
	}
	cJSON_Delete(o);
	return 0;
}

/* Answers the 400 of a file part pt: its field named in data.  Returns -1. */
static int
rec_form_file(struct rec_ctx *x, const struct multipart_part *pt)
{
	struct buf b;
	const char *data;

	buf_init(&b, 4096);
	buf_putc(&b, '{');
	json_escape(&b, pt->name, pt->namelen);
	buf_puts(&b, ":{\"code\":\"validation_file_not_accepted\",\"message\":\"Files are "
	    "not accepted.\"}}");
	data = b.len > 0 && b.data[b.len - 1] == '}' ?
	    arena_strndup(x->rq->arena, b.data, b.len) : NULL;
	buf_free(&b);
	rec_error(x->rs, 400, "Failed to load the submitted data due to invalid formatting.",
	    data);
	return -1;
}

/* Reads one part pt of a multipart body into x->body.  0, or -1 with a 400 or 413
 * answered. */
static int
rec_form_part(struct rec_ctx *x, const struct multipart_part *pt)
{
	const char *key, *val;
	cJSON *v;

	if (pt->filename != NULL) {
		if (pt->filenamelen == 0 && pt->len == 0)
			return 0;
		return rec_form_file(x, pt);
	}
	if (memchr(pt->name, '\0', pt->namelen) != NULL ||
	    memchr(pt->data, '\0', pt->len) != NULL ||
	    !str_utf8_valid(pt->name, pt->namelen) || !str_utf8_valid(pt->data, pt->len))
		return rec_form_bad(x);
	if (str_eq(pt->name, pt->namelen, "@jsonPayload"))
		return rec_form_payload(x, pt->data, pt->len) < 0 ? rec_form_bad(x) : 0;
	if ((key = arena_strndup(x->rq->arena, pt->name, pt->namelen)) == NULL ||
	    (val = arena_strndup(x->rq->arena, pt->data, pt->len)) == NULL) {
		rec_error(x->rs, 413, NULL, NULL);
		return -1;
	}
	if ((v = cJSON_CreateString(val)) == NULL || rec_form_put(x, key, v) < 0)
		return rec_form_bad(x);
	return 0;
}

int
rec_multipart(struct rec_ctx *x)
{
	struct multipart m;
	struct multipart_part pt;
	int r;

	if (rec_form_start(x) < 0)
		return -1;
	if (multipart_open(&m, req_header(x->rq, "Content-Type"), x->rq->body,
	    x->rq->body_len) < 0)
		return rec_form_bad(x);
	while ((r = multipart_next(&m, &pt)) == MULTIPART_PART)
		if (rec_form_part(x, &pt) < 0)
			return -1;
	return r == MULTIPART_END ? 0 : rec_form_bad(x);
}
