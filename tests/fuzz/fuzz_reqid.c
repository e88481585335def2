/*
 * fuzz_reqid: the request id's checks (common/reqid.c) on hostile bytes, and the
 * response's use of whatever id it is given (common/resp.c): what a client's X-Request-Id,
 * or a parameter a hand-written web server config passes, can do to a worker.
 *
 * Invariants: no crash, no read past the input (copied into a buffer of exactly its size
 * and a NUL); reqid_valid() is 1 exactly for 1..REQID_MAX bytes of [A-Za-z0-9._:@-];
 * reqid_set() keeps exactly the valid ids, as they were; a response given the input as
 * its id carries an X-Request-Id header exactly when the id is valid, its head has no CR
 * or LF but at the ends of its lines, and its error body is JSON that names the id only
 * then.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "buf.h"
#include "json.h"
#include "reqid.h"
#include "resp.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int
collect(void *ctx, const char *p, size_t len)
{
	return buf_append(ctx, p, len);
}

static int
by_hand(const uint8_t *p, size_t n)
{
	size_t i;

	if (n == 0 || n > REQID_MAX)
		return 0;
	for (i = 0; i < n; i++)
		if (!((p[i] >= 'a' && p[i] <= 'z') || (p[i] >= 'A' && p[i] <= 'Z') ||
		    (p[i] >= '0' && p[i] <= '9') || (p[i] != 0 && strchr("._:@-", p[i]))))
			return 0;
	return 1;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	char *id = malloc(size + 1);
	struct resp rs;
	struct buf out;
	enum json_err err;
	cJSON *v;
	int ok;
	const char *head_end, *p;

	assert(id != NULL);
	memcpy(id, data, size);
	id[size] = '\0';
	ok = reqid_valid(id, size);
	assert(ok == by_hand(data, size));
	/* As a C string (cut at a NUL, as a FastCGI parameter would be read). */
	if (reqid_set(id) == 0) {
		assert(reqid_valid(id, strlen(id)));
		assert(strcmp(reqid_current(), id) == 0);
	} else {
		assert(!reqid_valid(id, strlen(id)));
		assert(reqid_current() == NULL);
	}
	reqid_clear();

	resp_init(&rs, 1 << 16);
	buf_init(&out, 0);
	rs.request_id = id;
	resp_error(&rs, 400, "bad", "m", NULL, NULL);
	v = json_parse(rs.body.data, rs.body.len, 4, &err, NULL);
	assert(v != NULL);
	assert((cJSON_GetObjectItemCaseSensitive(v, "requestId") != NULL) ==
	    reqid_valid(id, strlen(id)));
	cJSON_Delete(v);
	assert(resp_send(&rs, collect, &out) == 0);
	assert(buf_putc(&out, '\0') == 0);
	head_end = strstr(out.data, "\r\n\r\n");
	assert(head_end != NULL);
	for (p = out.data; p < head_end; p++)
		if (*p == '\r' || *p == '\n')
			assert((p[0] == '\r' && p[1] == '\n') || (p[0] == '\n' && p[-1] == '\r'));
	assert((strstr(out.data, "\r\nX-Request-Id: ") != NULL) == reqid_valid(id, strlen(id)));
	buf_free(&out);
	resp_free(&rs);
	free(id);
	return 0;
}
