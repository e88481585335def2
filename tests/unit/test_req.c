/* test_req: building a request from FastCGI parameters; query parsing, hostile input. */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "arena.h"
#include "req.h"
#include "../lib/harness.h"

static struct arena *a;

static enum req_err
parse(struct req *rq, const char *method, const char *query)
{
	static char m[64], q[8192];
	static char *envp[8];

	snprintf(m, sizeof(m), "REQUEST_METHOD=%s", method);
	snprintf(q, sizeof(q), "QUERY_STRING=%s", query);
	envp[0] = m;
	envp[1] = q;
	envp[2] = (char *)(uintptr_t)"DOCUMENT_URI=/rest/v1/artist";
	envp[3] = (char *)(uintptr_t)"HTTP_ACCEPT_ENCODING=br, gzip";
	envp[4] = (char *)(uintptr_t)"CONTENT_TYPE=application/json; charset=utf-8";
	envp[5] = (char *)(uintptr_t)"HTTP_X=1";
	envp[6] = NULL;
	arena_reset(a);
	return req_init(rq, envp, a);
}

static void
test_query_table(void)
{
	static const struct {
		const char *q;
		enum req_err err;
		size_t n;
		const char *k0, *v0;
	} cases[] = {
		{ "", REQ_OK, 0, NULL, NULL },
		{ "a=1", REQ_OK, 1, "a", "1" },
		{ "a=1&b=2", REQ_OK, 2, "a", "1" },
		{ "a", REQ_OK, 1, "a", "" },
		{ "a=", REQ_OK, 1, "a", "" },
		{ "=v", REQ_OK, 1, "", "v" },
		{ "&&a=1&&", REQ_OK, 1, "a", "1" },
		{ "name=eq.A%20B", REQ_OK, 1, "name", "eq.A B" },
		{ "q=a+b", REQ_OK, 1, "q", "a b" },
		{ "x=a=b", REQ_OK, 1, "x", "a=b" },
		{ "k%3D=v%26", REQ_OK, 1, "k=", "v&" },
		{ "a=%", REQ_EQUERY, 0, NULL, NULL },
		{ "a=%g1", REQ_EQUERY, 0, NULL, NULL },
		{ "a=%00", REQ_EQUERY, 0, NULL, NULL },
		{ "%0=1", REQ_EQUERY, 0, NULL, NULL },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct req rq;

		CHECK_INT(parse(&rq, "GET", cases[i].q), cases[i].err);
		if (cases[i].err != REQ_OK)
			continue;
		CHECK_INT(rq.nparams, cases[i].n);
		if (cases[i].n > 0) {
			CHECK_STR(rq.params[0].key, cases[i].k0);
			CHECK_STR(rq.params[0].val, cases[i].v0);
			CHECK_INT(rq.params[0].vallen, strlen(cases[i].v0));
		}
	}
}

static void
test_too_many_params(void)
{
	static char q[8000];
	struct req rq;
	size_t i, off = 0;

	for (i = 0; i < REQ_PARAMS_MAX + 1; i++)
		off += (size_t)snprintf(q + off, sizeof(q) - off, "%s%c", i ? "&" : "",
		    'a' + (int)(i % 26));
	CHECK_INT(parse(&rq, "GET", q), REQ_ETOOMANY);
	q[off - 2] = '\0';	/* one fewer */
	CHECK_INT(parse(&rq, "GET", q), REQ_OK);
	CHECK_INT(rq.nparams, REQ_PARAMS_MAX);
}

static void
test_method_path_headers(void)
{
	struct req rq;
	int64_t v;
	char allow[64];

	CHECK_INT(parse(&rq, "PATCH", "limit=10&limit=20&neg=-3&bad=1x"), REQ_OK);
	CHECK_INT(rq.method, REQ_PATCH);
	CHECK_STR(rq.path, "/rest/v1/artist");
	CHECK_STR(req_header(&rq, "accept-encoding"), "br, gzip");
	CHECK_STR(req_header(&rq, "X"), "1");
	CHECK(req_header(&rq, "Missing") == NULL);
	/* Whole names only, in any case, '-' for '_'; the two CGI names without HTTP_. */
	CHECK_STR(req_header(&rq, "ACCEPT-encoding"), "br, gzip");
	CHECK(req_header(&rq, "Accept") == NULL);
	CHECK(req_header(&rq, "Accept-Encoding-X") == NULL);
	CHECK_STR(req_header(&rq, "accept_encoding"), "br, gzip");
	CHECK(req_header(&rq, "X=1") == NULL);
	CHECK(req_header(&rq, "") == NULL);
	CHECK_STR(req_header(&rq, "content-type"), "application/json; charset=utf-8");
	CHECK(req_header(&rq, "Content-Length") == NULL);
	CHECK(req_content_type_is(&rq, "application/json"));
	CHECK(!req_content_type_is(&rq, "application/js"));
	CHECK(!req_content_type_is(&rq, "text/csv"));
	CHECK(req_param_int(&rq, "limit", 0, 100, 5, &v) == 0 && v == 10);
	CHECK(req_param_int(&rq, "absent", 0, 100, 5, &v) == 0 && v == 5);
	CHECK(req_param_int(&rq, "neg", -10, 10, 0, &v) == 0 && v == -3);
	CHECK(req_param_int(&rq, "neg", 0, 10, 0, &v) < 0);
	CHECK(req_param_int(&rq, "bad", 0, 10, 0, &v) < 0);
	CHECK_INT(parse(&rq, "BREW", ""), REQ_OK);
	CHECK_INT(rq.method, REQ_OTHER);
	CHECK_INT(req_method_parse("get"), REQ_OTHER);	/* methods are case sensitive */
	req_methods_format(REQ_GET | REQ_HEAD | REQ_POST, allow, sizeof(allow));
	CHECK_STR(allow, "GET, HEAD, POST");
	req_methods_format(REQ_GET | REQ_DELETE, allow, 8);	/* truncation is safe */
	CHECK(strlen(allow) < 8);
}

/* Form bodies decode by the query string's rules; a body may hold what a query may not. */
static void
test_form_body(void)
{
	static const struct {
		const char *body;
		size_t len;
		enum req_err err;
		size_t n;
		const char *k0, *v0;
	} cases[] = {
		{ "messageSend=hello+world%21", 26, REQ_OK, 1, "messageSend", "hello world!" },
		{ "a=1&messageSend=%E2%82%AC", 25, REQ_OK, 2, "a", "1" },
		{ "k=line%0Anext", 13, REQ_OK, 1, "k", "line\nnext" },
		{ "k=%26%3D%2B", 11, REQ_OK, 1, "k", "&=+" },
		{ "", 0, REQ_OK, 0, NULL, NULL },
		{ "k=%00", 5, REQ_EQUERY, 0, NULL, NULL },
		{ "k=a\0b", 5, REQ_EQUERY, 0, NULL, NULL },	/* a raw NUL in the body */
		{ "k=%E", 4, REQ_EQUERY, 0, NULL, NULL },
	};
	static char env0[] = "REQUEST_METHOD=POST";
	char *envp[2] = { env0, NULL };
	struct req_param *p;
	struct req rq;
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		arena_reset(a);
		CHECK_INT(req_init(&rq, envp, a), REQ_OK);
		rq.body = cases[i].body;
		rq.body_len = cases[i].len;
		p = NULL;
		n = 99;
		CHECK_INT(req_form(&rq, &p, &n), cases[i].err);
		if (cases[i].err != REQ_OK)
			continue;
		CHECK_INT(n, cases[i].n);
		CHECK_INT(rq.nparams, 0);	/* the query's parameters are not touched */
		if (cases[i].n > 0) {
			CHECK_STR(p[0].key, cases[i].k0);
			CHECK_STR(p[0].val, cases[i].v0);
			CHECK_INT(p[0].vallen, strlen(cases[i].v0));
		}
	}
	/* The second field of case 1: the euro sign's three bytes. */
	arena_reset(a);
	CHECK_INT(req_init(&rq, envp, a), REQ_OK);
	rq.body = "a=1&messageSend=%E2%82%AC";
	rq.body_len = strlen(rq.body);
	CHECK_INT(req_form(&rq, &p, &n), REQ_OK);
	CHECK(n == 2 && p[1].vallen == 3 && memcmp(p[1].val, "\xe2\x82\xac", 3) == 0);
	/* No body at all is no field. */
	rq.body = NULL;
	rq.body_len = 0;
	CHECK_INT(req_form(&rq, &p, &n), REQ_OK);
	CHECK_INT(n, 0);
}

static void
test_arena_exhaustion(void)
{
	struct arena *small = arena_new(1024);
	static char q[4096], qs[4200];
	char *envp[2] = { qs, NULL };
	struct req rq;

	memset(q, 'a', sizeof(q) - 1);
	q[0] = 'k';
	q[1] = '=';
	snprintf(qs, sizeof(qs), "QUERY_STRING=%s", q);
	CHECK_INT(req_init(&rq, envp, small), REQ_ENOMEM);
	arena_free(small);
}

int
main(void)
{
	a = arena_new(1 << 20);
	RUN(test_query_table);
	RUN(test_too_many_params);
	RUN(test_form_body);
	RUN(test_method_path_headers);
	RUN(test_arena_exhaustion);
	arena_free(a);
	return harness_done();
}
