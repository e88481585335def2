/*
 * test_http: the real stack (nginx in both profiles, sluiced, bin/health) driven over HTTP.
 *
 * Health through both profiles with 2 nginx workers; the pinning test, also with
 * keepalive forced so that W x K reaches the pool's capacity (no connection is bound to a
 * thread: common/serve.c), and its negative control, a plain fcgi2 program in the same
 * place, which stalls; bad input of every kind, including garbage and a truncated FastCGI
 * record written straight to the endpoint's socket.
 */
#include <limits.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

/* bench/hello, the plain fcgi2 worker, built beside this program's directory. */
static char hello_bin[PATH_MAX];

static const char health_conf[] =
    "health =/health workers=8 threads=1 body_max=1024\n";

static void
check_health(struct stack *s)
{
	struct http_resp r;
	char url[128], v[64];

	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/health", s->base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "{\"status\":\"ok\"}");
	CHECK(http_header(&r, "Content-Type", v, sizeof(v)) == 0 &&
	    strcmp(v, "application/json") == 0);
	/* Security headers of both profiles: no sniffing, no version. */
	CHECK(http_header(&r, "X-Content-Type-Options", v, sizeof(v)) == 0 &&
	    strcmp(v, "nosniff") == 0);
	CHECK(http_header(&r, "Server", v, sizeof(v)) == 0 && strcmp(v, "nginx") == 0);
	/* HEAD: the same headers, no body. */
	CHECK(http_do("HEAD", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(r.body.len, 0);
	CHECK(http_header(&r, "Content-Length", v, sizeof(v)) == 0 && strcmp(v, "15") == 0);
	/* Anything else under /health's exact route is not health. */
	snprintf(url, sizeof(url), "%s/health/x", s->base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 404);
	CHECK(strstr(r.body.data ? r.body.data : "", "\"code\"") != NULL);
	http_resp_free(&r);
}

static void
test_health_default_profile(void)
{
	struct stack s;

	if (stack_start(&s, health_conf, "default", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	check_health(&s);
	stack_stop(&s);
}

static void
test_health_tuned_profile(void)
{
	struct stack s;

	if (stack_start(&s, health_conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	check_health(&s);
	stack_stop(&s);
}

static void
test_pinning_tuned(void)
{
	struct stack s;

	if (stack_start(&s, health_conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK_INT(stack_pinning_workload(&s, 1.0, 5000, 0), 0);
	stack_stop(&s);
}

/*
 * The same workload with keepalive forced to W x K >= capacity: 2 nginx workers x 8 idle
 * connections against 4 single-threaded workers.  When each thread was bound to the kept
 * connection it accepted, requests stalled here behind idle connections (most of a burst
 * unanswered within the timeout); a connection now waits for a thread, never a thread for
 * it.
 */
static void
test_pinning_forced_keepalive(void)
{
	struct stack s;

	if (stack_start(&s, "health =/health workers=4 threads=1\n", "tuned", 2, "-k 8") < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK_INT(stack_pinning_workload(&s, 1.0, 5000, 0), 0);
	stack_stop(&s);
}

/*
 * The negative control: the same pool and keepalive, served by bench/hello, a plain fcgi2
 * program whose thread serves only the connection it accepted, must stall, which shows
 * that the workload above can fail.  Requests give up after 2 s here.
 */
static void
test_pinning_plain_fcgi2_stalls(void)
{
	struct stack s;
	char conf[PATH_MAX + 64];

	snprintf(conf, sizeof(conf), "health =/health workers=4 threads=1 binary=%s\n",
	    hello_bin);
	if (stack_start(&s, conf, "tuned", 2, "-k 8") < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_pinning_workload(&s, 1.0, 2000, 1) > 0);
	stack_stop(&s);
}

static void
test_bad_input(void)
{
	struct http_resp r;
	struct stack s;
	char url[256], v[64];
	char *big;

	if (stack_start(&s, health_conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/health", s.base);

	/* Methods: 405 with Allow and the JSON error. */
	CHECK(http_do("POST", url, NULL, "x", 1, 5000, &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(http_header(&r, "Allow", v, sizeof(v)) == 0 && strcmp(v, "GET, HEAD") == 0);
	CHECK(r.body.data && strstr(r.body.data, "\"code\":\"method_not_allowed\""));
	CHECK(http_do("DELETE", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(http_do("BREW", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 405);

	/* Malformed percent-encoding and NUL: 400 JSON. */
	snprintf(url, sizeof(url), "%s/health?a=%%zz", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(r.body.data && strstr(r.body.data, "\"code\":\"bad_query\""));
	snprintf(url, sizeof(url), "%s/health?a=%%00", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 400);
	snprintf(url, sizeof(url), "%s/health?a=%%4", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 400);

	/* A body over the endpoint's cap (1 KiB here): 413 JSON from the worker. */
	big = malloc(10 * 1024 * 1024);
	memset(big, 'x', 10 * 1024 * 1024);
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK(http_do("GET", url, NULL, big, 2048, 5000, &r) == 0);
	CHECK_INT(r.status, 413);
	CHECK(r.body.data && strstr(r.body.data, "\"code\":\"body_too_large\""));
	/* 10 MB, past nginx's own limit too: still 413 with a JSON body. */
	CHECK(http_do("GET", url, NULL, big, 10 * 1024 * 1024, 10000, &r) == 0);
	CHECK_INT(r.status, 413);
	CHECK(http_header(&r, "Content-Type", v, sizeof(v)) == 0 &&
	    strncmp(v, "application/json", 16) == 0);
	free(big);

	/* After all of it, health still answers. */
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	http_resp_free(&r);
	stack_stop(&s);
}

static void
test_garbage_on_the_socket(void)
{
	struct http_resp r;
	struct stack s;
	char sock[400], url[128];
	unsigned char rec[256];
	size_t n;
	int i;

	if (stack_start(&s, health_conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(sock, sizeof(sock), "%s/health.sock", s.run);
	snprintf(url, sizeof(url), "%s/health", s.base);
	http_resp_init(&r);

	/* Plain garbage, an HTTP request, and nothing at all. */
	CHECK(http_raw_unix(sock, "\xff\xfe garbage \x00\x01\x02", 14, 2000) >= 0);
	CHECK(http_raw_unix(sock, "GET / HTTP/1.1\r\nHost: x\r\n\r\n", 27, 2000) >= 0);
	CHECK(http_raw_unix(sock, "", 0, 2000) >= 0);

	/* A truncated record: BEGIN_REQUEST announcing 8 bytes, then 3. */
	n = http_fcgi_record(rec, 1, 1, 8);
	memcpy(rec + n, "\x00\x01\x00", 3);
	CHECK(http_raw_unix(sock, rec, n + 3, 2000) >= 0);

	/* BEGIN_REQUEST, then PARAMS whose name and value lengths add up past INT_MAX
	 * (the shape of CVE-2025-23016): the worker refuses it or dies and is replaced. */
	n = http_fcgi_record(rec, 1, 1, 8);
	memcpy(rec + n, "\x00\x01\x01\x00\x00\x00\x00\x00", 8);	/* responder, keep-conn */
	n += 8;
	n += http_fcgi_record(rec + n, 4, 1, 8);
	memcpy(rec + n, "\xff\xff\xff\xff\xff\xff\xff\xff", 8);
	n += 8;
	CHECK(http_raw_unix(sock, rec, n, 2000) >= 0);

	/* nginx keeps serving, and the pool is whole again. */
	for (i = 0; i < 50; i++) {
		CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
		CHECK_INT(r.status, 200);
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	http_resp_free(&r);
	stack_stop(&s);
}

/* A pool listening on TCP instead of its unix socket, through both profiles. */
static void
test_health_over_tcp(void)
{
	struct stack s;
	char conf[128];
	const char *profiles[] = { "default", "tuned" };
	size_t i;

	for (i = 0; i < 2; i++) {
		snprintf(conf, sizeof(conf), "health =/health workers=4 threads=2 tcp=127.0.0.1:%d\n",
		    stack_free_port());
		if (stack_start(&s, conf, profiles[i], 2, NULL) < 0) {
			CHECK(!"stack started");
			return;
		}
		check_health(&s);
		stack_stop(&s);
	}
}

int
main(void)
{
	char exe[PATH_MAX - 32], *slash;

	signal(SIGPIPE, SIG_IGN);
	/* build/<mode>/tests/test_http -> build/<mode>/bench/hello */
	if (stack_self_dir(exe, sizeof(exe)) < 0)
		return 1;
	if ((slash = strrchr(exe, '/')) != NULL)
		*slash = '\0';
	snprintf(hello_bin, sizeof(hello_bin), "%s/bench/hello", exe);
	if (access(hello_bin, X_OK) != 0) {
		fprintf(stderr, "test_http: %s not built (make integration)\n", hello_bin);
		return 1;
	}
	RUN(test_health_default_profile);
	RUN(test_health_tuned_profile);
	RUN(test_health_over_tcp);
	RUN(test_bad_input);
	RUN(test_garbage_on_the_socket);
	RUN(test_pinning_tuned);
	RUN(test_pinning_forced_keepalive);
	RUN(test_pinning_plain_fcgi2_stalls);
	return harness_done();
}
