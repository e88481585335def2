/*
 * test_rate: an endpoint line's rate= limit, generated into the real front server's
 * configuration and enforced by it: nginx's limit_req (tuned and default profiles) and
 * Apache's mod_qos (tuned).  A limited endpoint answers 200 up to its allowance, then 429
 * with the JSON error body ("code":"too_many_requests"), Content-Type application/json and
 * Retry-After, and 200 again once the rate has let more through; another client address
 * has an allowance of its own, and an endpoint without rate= beside it is never limited.
 * rate_by=token counts each Authorization header apart, and requests without one by their
 * address.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

#define RT_TIMEOUT_MS	5000

static const char *
bindir(void)
{
	const char *b = getenv("SLUICE_BIN");

	return b != NULL ? b : "bin";
}

/* A request from address from (NULL: 127.0.0.1) with an optional Authorization header;
 * its status, with the 429's shape checked when it is one. */
static long
rt_get(const struct stack *s, const char *path, const char *from, const char *auth)
{
	struct http_resp r;
	char url[512], hdr[256], retry[16], type[64];
	const char *headers[2] = { NULL, NULL };
	long status;

	(void)snprintf(url, sizeof(url), "%s%s", s->base, path);
	if (auth != NULL) {
		(void)snprintf(hdr, sizeof(hdr), "Authorization: %s", auth);
		headers[0] = hdr;
	}
	http_resp_init(&r);
	if (from != NULL)
		(void)http_do_from(from, "GET", url, headers, NULL, 0, RT_TIMEOUT_MS, &r);
	else
		(void)http_do("GET", url, headers, NULL, 0, RT_TIMEOUT_MS, &r);
	status = r.status;
	if (status == 429) {
		CHECK(http_json_code(&r, "too_many_requests"));
		CHECK(http_header(&r, "Retry-After", retry, sizeof(retry)) == 0 &&
		    atoi(retry) >= 1);
		CHECK(http_header(&r, "Content-Type", type, sizeof(type)) == 0 &&
		    strncmp(type, "application/json", 16) == 0);
	}
	http_resp_free(&r);
	return status;
}

/*
 * Sends n requests back to back; counts the 200s and the 429s (anything else fails).
 * Returns the most 200s a limit of allowance at once and rate a second may let through in
 * the time they took (a slow machine's requests spread over more of the rate).
 */
static int
rt_run(const struct stack *s, const char *path, const char *from, const char *auth, int n,
    int *ok, int *limited, int allowance, int rate)
{
	long long t0 = stack_now_ms();
	long st;
	int i;

	*ok = *limited = 0;
	for (i = 0; i < n; i++) {
		st = rt_get(s, path, from, auth);
		if (st == 200)
			(*ok)++;
		else if (st == 429)
			(*limited)++;
		else
			CHECK_INT(st, 200);
	}
	return allowance + rate * (int)((stack_now_ms() - t0) / 1000 + 1);
}

/*
 * The shared scenario: /health limited to 2 r/s (burst 2 on nginx), /free unlimited.  12
 * requests at once from one address: at most the allowance passes (nginx: 1 + burst;
 * Apache: the window's 2; plus what the rate adds while they run), the rest are 429;
 * /free meanwhile all 200; another address has its own allowance; after the window, 200
 * again.
 */
static void
rt_scenario(const char *server, const char *profile)
{
	struct stack s;
	char conf[1024];
	int ok, limited, most;

	(void)snprintf(conf, sizeof(conf),
	    "health =/health workers=1 threads=4 rate=2r/s burst=2\n"
	    "free =/free workers=1 threads=2 binary=%s/health\n", bindir());
	if (stack_start_server(&s, conf, server, profile, 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	most = rt_run(&s, "/health", NULL, NULL, 12, &ok, &limited, 3, 2);
	CHECK(ok >= 1 && ok <= most);
	CHECK(limited >= 12 - most && limited >= 1);
	(void)rt_run(&s, "/free", NULL, NULL, 12, &ok, &limited, 0, 0);
	CHECK_INT(ok, 12);
	(void)rt_run(&s, "/health", "127.0.0.2", NULL, 3, &ok, &limited, 0, 0);
	CHECK(ok >= 1);
	/* The window over (Apache blocks for its window's length once over), 200 again. */
	usleep(2100 * 1000);
	CHECK_INT(rt_get(&s, "/health", NULL, NULL), 200);
	stack_stop(&s);
}

static void
test_rate_nginx_tuned(void)
{
	rt_scenario("nginx", "tuned");
}

static void
test_rate_nginx_default(void)
{
	rt_scenario("nginx", "default");
}

static void
test_rate_apache_tuned(void)
{
	rt_scenario("apache", "tuned");
}

/* rate_by=token: each token its own allowance, no token counted by address. */
static void
test_rate_by_token(void)
{
	struct stack s;
	int ok, limited, most;

	if (stack_start(&s, "health =/health workers=1 threads=4 rate=1r/s burst=1 "
	    "rate_by=token\n", "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	most = rt_run(&s, "/health", NULL, "Bearer token-a", 8, &ok, &limited, 2, 1);
	CHECK(ok >= 1 && ok <= most);
	CHECK(limited >= 8 - most && limited >= 1);
	/* Another token from the same address: its own allowance. */
	(void)rt_run(&s, "/health", NULL, "Bearer token-b", 2, &ok, &limited, 0, 0);
	CHECK(ok >= 1);
	/* No token: the address's own count, apart from the tokens'. */
	most = rt_run(&s, "/health", NULL, NULL, 8, &ok, &limited, 2, 1);
	CHECK(ok >= 1 && ok <= most);
	CHECK(limited >= 8 - most && limited >= 1);
	stack_stop(&s);
}

int
main(void)
{
	RUN(test_rate_nginx_tuned);
	RUN(test_rate_nginx_default);
	RUN(test_rate_apache_tuned);
	RUN(test_rate_by_token);
	return harness_done();
}
