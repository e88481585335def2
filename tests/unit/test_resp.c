/* test_resp: response framing, header injection, the error body, caps, HEAD. */
#include <string.h>

#include "buf.h"
#include "resp.h"
#include "../lib/harness.h"

static int
collect(void *ctx, const char *p, size_t len)
{
	return buf_append(ctx, p, len);
}

static void
test_ok_response(void)
{
	struct resp rs;
	struct buf out;

	resp_init(&rs, 1024);
	buf_init(&out, 0);
	CHECK(resp_set(&rs, 200, "application/json", "{}", 2) == 0);
	CHECK(resp_header(&rs, "Cache-Control", "no-store") == 0);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK_STR(out.data, "Status: 200 OK\r\nContent-Type: application/json\r\n"
	    "Content-Length: 2\r\nCache-Control: no-store\r\n\r\n{}");
	/* HEAD: same head, no body. */
	buf_reset(&out, 0);
	rs.head = 1;
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strstr(out.data, "Content-Length: 2\r\n") != NULL);
	CHECK(out.len >= 4 && memcmp(out.data + out.len - 4, "\r\n\r\n", 4) == 0);
	buf_free(&out);
	resp_free(&rs);
}

static void
test_header_injection(void)
{
	struct resp rs;

	resp_init(&rs, 1024);
	CHECK(resp_header(&rs, "X-A", "ok") == 0);
	CHECK(resp_header(&rs, "X-B", "a\r\nSet-Cookie: x") < 0);
	CHECK(resp_header(&rs, "X-B", "a\nb") < 0);
	CHECK(resp_header(&rs, "Bad Name", "v") < 0);
	CHECK(resp_header(&rs, "Bad:Name", "v") < 0);
	CHECK(resp_header(&rs, "", "v") < 0);
	CHECK_STR(rs.headers.data, "X-A: ok\r\n");
	resp_free(&rs);
}

static void
test_error_body(void)
{
	struct resp rs;
	struct buf out;

	resp_init(&rs, 1024);
	buf_init(&out, 0);
	resp_set(&rs, 200, "text/plain", "partial", 7);
	resp_error(&rs, 400, "bad_query", "say \"hi\"\n", NULL, "tab\there");
	CHECK_INT(rs.status, 400);
	CHECK_STR(rs.body.data, "{\"code\":\"bad_query\",\"message\":\"say \\\"hi\\\"\\n\","
	    "\"details\":null,\"hint\":\"tab\\there\"}");
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strncmp(out.data, "Status: 400 Bad Request\r\n", 25) == 0);
	/* JSON details go in as they are; 300 has its reason phrase. */
	buf_reset(&out, 0);
	resp_error_json(&rs, 300, "PGRST201", "m", "[{\"a\":1}]", NULL);
	CHECK_STR(rs.body.data, "{\"code\":\"PGRST201\",\"message\":\"m\","
	    "\"details\":[{\"a\":1}],\"hint\":null}");
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strncmp(out.data, "Status: 300 Multiple Choices\r\n", 30) == 0);
	buf_free(&out);
	resp_free(&rs);
}

static void
test_caps_and_defaults(void)
{
	struct resp rs;
	struct buf out;
	char big[2048];

	memset(big, 'x', sizeof(big));
	resp_init(&rs, 1024);
	buf_init(&out, 0);
	/* A body past the cap becomes a 500, never a truncated 200. */
	CHECK(resp_set(&rs, 200, "text/plain", big, sizeof(big)) < 0);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strncmp(out.data, "Status: 500 ", 12) == 0);
	/* No status at all: 500 too. */
	resp_reset(&rs);
	buf_reset(&out, 0);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strncmp(out.data, "Status: 500 ", 12) == 0);
	/* 204 carries neither body nor Content-Length. */
	resp_reset(&rs);
	buf_reset(&out, 0);
	rs.status = 204;
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK_STR(out.data, "Status: 204 No Content\r\n\r\n");
	CHECK_STR(resp_reason(599), "Unknown");
	/* A status that cannot be framed becomes a 500. */
	resp_reset(&rs);
	buf_reset(&out, 0);
	resp_set(&rs, 42, "text/plain", "x", 1);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strncmp(out.data, "Status: 500 Internal Server Error\r\n", 35) == 0);
	buf_free(&out);
	resp_free(&rs);
}

int
main(void)
{
	RUN(test_ok_response);
	RUN(test_header_injection);
	RUN(test_error_body);
	RUN(test_caps_and_defaults);
	return harness_done();
}
