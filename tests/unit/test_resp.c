/* test_resp: response framing, header injection, the error body, caps, HEAD, the request
 * id's header and field, a 503's Retry-After. */
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

/* Every 503 says when to come back: Retry-After: 1, once, unless the handler set its own
 * (in any case); no other status gets one. */
static void
test_503_retry_after(void)
{
	struct resp rs;
	struct buf out;

	resp_init(&rs, 1024);
	buf_init(&out, 0);
	resp_error(&rs, 503, "unavailable", "the database is unavailable", NULL, NULL);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strstr(out.data, "\r\nRetry-After: 1\r\n") != NULL);
	CHECK(strstr(out.data, "Retry-After") == strstr(out.data, "Retry-After: 1"));
	CHECK(strstr(strstr(out.data, "Retry-After") + 1, "Retry-After") == NULL);
	resp_reset(&rs);
	buf_reset(&out, 0);
	CHECK(resp_header(&rs, "X-A", "b") == 0);
	CHECK(resp_header(&rs, "retry-after", "7") == 0);
	resp_error(&rs, 503, "busy", "busy", NULL, NULL);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strstr(out.data, "retry-after: 7\r\n") != NULL);
	CHECK(strstr(out.data, "Retry-After") == NULL);
	resp_reset(&rs);
	buf_reset(&out, 0);
	resp_error(&rs, 504, "timeout", "t", NULL, NULL);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strstr(out.data, "Retry-After") == NULL);
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

/* The request id: an X-Request-Id header on every response (204 too), "requestId" last
 * in sluice's error bodies, none in a dialect endpoint's (error_ids 0); an id that could
 * split a header or end a JSON string is never written. */
static void
test_request_id(void)
{
	static const char *const hostile[] = {
		"a\r\nSet-Cookie: x", "a\nb", "say\"hi", "a b", "a\\b", "", "{\"x\":1}",
	};
	struct resp rs;
	struct buf out;
	char longid[130];
	size_t i;

	resp_init(&rs, 1024);
	buf_init(&out, 0);
	CHECK_INT(rs.error_ids, 1);
	rs.request_id = "abc-123:x.y_z@q";
	resp_set(&rs, 200, "application/json", "{}", 2);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK_STR(out.data, "Status: 200 OK\r\nX-Request-Id: abc-123:x.y_z@q\r\n"
	    "Content-Type: application/json\r\nContent-Length: 2\r\n\r\n{}");
	resp_error(&rs, 404, "not_found", "no such thing", NULL, NULL);
	CHECK_STR(rs.body.data, "{\"code\":\"not_found\",\"message\":\"no such thing\","
	    "\"details\":null,\"hint\":null,\"requestId\":\"abc-123:x.y_z@q\"}");
	resp_error_json(&rs, 400, "x", "m", "[1]", "h");
	CHECK_STR(rs.body.data, "{\"code\":\"x\",\"message\":\"m\",\"details\":[1],"
	    "\"hint\":\"h\",\"requestId\":\"abc-123:x.y_z@q\"}");
	/* A body built by hand ends the same way. */
	buf_reset(&out, 0);
	CHECK(resp_error_id(&rs, &out) == 0);
	CHECK(buf_putc(&out, '\0') == 0);
	CHECK_STR(out.data, ",\"requestId\":\"abc-123:x.y_z@q\"");
	/* 204: the header, no body. */
	buf_reset(&out, 0);
	rs.status = 204;
	buf_reset(&rs.body, 0);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK_STR(out.data, "Status: 204 No Content\r\nX-Request-Id: abc-123:x.y_z@q\r\n\r\n");
	/* A dialect's endpoint: the header, the body as the dialect has it. */
	rs.error_ids = 0;
	resp_error(&rs, 404, "PGRST205", "m", NULL, NULL);
	CHECK_STR(rs.body.data, "{\"code\":\"PGRST205\",\"message\":\"m\",\"details\":null,"
	    "\"hint\":null}");
	buf_reset(&out, 0);
	CHECK(resp_send(&rs, collect, &out) == 0);
	CHECK(strstr(out.data, "\r\nX-Request-Id: abc-123:x.y_z@q\r\n") != NULL);
	buf_reset(&out, 0);
	CHECK(resp_error_id(&rs, &out) == 0 && out.len == 0);
	/* resp_reset() forgets the id and keeps error_ids. */
	resp_reset(&rs);
	CHECK(rs.request_id == NULL);
	CHECK_INT(rs.error_ids, 0);
	rs.error_ids = 1;
	/* Hostile ids, had the serve loop let one through: neither header nor field. */
	memset(longid, 'a', sizeof(longid) - 1);
	longid[sizeof(longid) - 1] = '\0';
	for (i = 0; i <= sizeof(hostile) / sizeof(hostile[0]); i++) {
		rs.request_id = i < sizeof(hostile) / sizeof(hostile[0]) ? hostile[i] : longid;
		resp_error(&rs, 400, "bad", "m", NULL, NULL);
		CHECK_STR(rs.body.data, "{\"code\":\"bad\",\"message\":\"m\",\"details\":null,"
		    "\"hint\":null}");
		buf_reset(&out, 0);
		CHECK(resp_send(&rs, collect, &out) == 0);
		CHECK(strstr(out.data, "X-Request-Id") == NULL);
		CHECK(strstr(out.data, "Set-Cookie") == NULL);
	}
	/* 128 bytes pass; the longest head (a 384-byte content type) still fits. */
	longid[128] = '\0';
	rs.request_id = longid;
	memset(longid + 129, 0, 1);
	{
		char ct[385];

		memset(ct, 't', 384);
		ct[384] = '\0';
		resp_set(&rs, 507, ct, "x", 1);
		buf_reset(&out, 0);
		CHECK(resp_send(&rs, collect, &out) == 0);
		CHECK(strstr(out.data, "\r\nX-Request-Id: aaaa") != NULL);
		CHECK(strstr(out.data, ct) != NULL);
		CHECK(strstr(out.data, "Content-Length: 1\r\n\r\nx") != NULL);
	}
	buf_free(&out);
	resp_free(&rs);
}

int
main(void)
{
	RUN(test_ok_response);
	RUN(test_header_injection);
	RUN(test_503_retry_after);
	RUN(test_error_body);
	RUN(test_caps_and_defaults);
	RUN(test_request_id);
	return harness_done();
}
