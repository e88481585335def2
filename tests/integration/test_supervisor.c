/*
 * test_supervisor: sluiced under a request loop, through the real tuned nginx.
 *
 * kill -9 of a worker (restarted within 1 s, counted, no request refused); reload of one
 * endpoint (a new generation on the same socket, zero failed requests); a crash loop (a
 * binary that exits at once is marked failed after R tries, without spinning, while the
 * other endpoints keep serving); SIGTERM (workers gone within the grace period, socket
 * files removed), with nginx holding kept-alive connections to every worker.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

static void
sleep_ms(long ms)
{
	usleep((useconds_t)ms * 1000);
}

static void
test_kill9_worker_under_load(void)
{
	struct http_loop loop;
	struct stack s;
	char url[128];
	pid_t pids[16];
	long long t0, back = -1;
	int n, k;

	if (stack_start(&s, "health =/health workers=4 threads=1\n", "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK(http_loop_start(&loop, "GET", url, 200) == 0);
	sleep_ms(1200);	/* workers past their quick-death window */
	for (k = 0; k < 3; k++) {
		n = stack_worker_pids(&s, "health", pids, 16);
		CHECK_INT(n, 4);
		if (n < 1)
			break;
		CHECK(kill(pids[k % n], SIGKILL) == 0);
		t0 = stack_now_ms();
		/* Wait until the victim is gone from the pool, then until the pool is whole. */
		sleep_ms(20);
		back = stack_wait_pool(&s, "health", 2000) == 0 ? stack_now_ms() - t0 : -1;
		printf("  kill -9 %d: pool whole again after %lld ms\n", (int)pids[k % n], back);
		CHECK(back >= 0 && back <= 1000);
		sleep_ms(200);
	}
	http_loop_stop(&loop);
	printf("  requests %ld, failed %ld (last status %ld), slowest %.3f s\n", loop.sent,
	    loop.bad, loop.last_bad_status, loop.max_seconds);
	CHECK(loop.sent > 100);
	CHECK_INT(loop.bad, 0);
	CHECK(stack_pool_value(&s, "health", "crashes") >= 3);
	{
		struct buf out;

		buf_init(&out, 0);
		stack_ctl(&s, &out, "status");
		CHECK(out.data && strstr(out.data, "signal:9") != NULL);
		buf_free(&out);
	}
	stack_stop(&s);
}

static void
test_reload_under_load(void)
{
	struct http_loop loop;
	struct stack s;
	char url[128];
	pid_t before[16], after[16];
	int nb, na, i, j, overlap = 0;

	if (stack_start(&s, "health =/health workers=4 threads=2\n", "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	nb = stack_worker_pids(&s, "health", before, 16);
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK(http_loop_start(&loop, "GET", url, 200) == 0);
	sleep_ms(300);
	for (i = 0; i < 2; i++) {
		CHECK_INT(stack_ctl(&s, NULL, "reload health"), 0);
		sleep_ms(1500);
	}
	http_loop_stop(&loop);
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	na = stack_worker_pids(&s, "health", after, 16);
	for (i = 0; i < nb; i++)
		for (j = 0; j < na; j++)
			overlap += before[i] == after[j];
	printf("  requests %ld, failed %ld (last status %ld), slowest %.3f s\n", loop.sent,
	    loop.bad, loop.last_bad_status, loop.max_seconds);
	CHECK(loop.sent > 100);
	CHECK_INT(loop.bad, 0);
	CHECK_INT(overlap, 0);		/* every worker is of the new generation */
	CHECK_INT(na, 4);
	CHECK(stack_pool_value(&s, "health", "gen") >= 3);
	stack_stop(&s);
}

static void
test_crash_loop(void)
{
	struct http_resp r;
	struct stack s;
	char url[128], state[32];
	long spawns, later;
	long long t0;

	if (stack_start(&s, "health =/health workers=2\n"
	    "crashy =/crashy workers=2 binary=/bin/false\n", "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	t0 = stack_now_ms();
	state[0] = '\0';
	while (stack_now_ms() - t0 < 15000) {
		if (stack_pool_state(&s, "crashy", state, sizeof(state)) == 0 &&
		    strcmp(state, "failed") == 0)
			break;
		sleep_ms(50);
	}
	CHECK_STR(state, "failed");
	spawns = stack_pool_value(&s, "crashy", "spawns");
	printf("  crashy failed after %lld ms and %ld spawns\n", stack_now_ms() - t0, spawns);
	/* Backoff, not a spin: a handful of spawns, and no more once failed. */
	CHECK(spawns > 0 && spawns <= 20);
	sleep_ms(1000);
	later = stack_pool_value(&s, "crashy", "spawns");
	CHECK_INT(later, spawns);
	/* The other endpoint keeps serving; the failed one answers 502 JSON from nginx. */
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/health", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	snprintf(url, sizeof(url), "%s/crashy", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK(r.status >= 500);
	http_resp_free(&r);
	stack_stop(&s);
}

static void
test_sigterm_with_kept_connections(void)
{
	struct http_burst b;
	struct stack s;
	struct stat st;
	char url[128], sock[400], ctl[400];
	pid_t pids[32];
	long long t0, took;
	int status = 0, n, i, alive;

	if (stack_start(&s, "health =/health workers=8 threads=1\n"
	    "other =/other workers=2 threads=2 binary=health\n", "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	snprintf(url, sizeof(url), "%s/health", s.base);
	/* Fill nginx's keepalive caches: several workers now hold idle kept connections. */
	http_burst(url, 64, 200, 5000, &b);
	CHECK_INT(b.ok, 64);
	n = stack_worker_pids(&s, "health", pids, 32);
	CHECK_INT(n, 8);
	snprintf(sock, sizeof(sock), "%s/health.sock", s.run);
	snprintf(ctl, sizeof(ctl), "%s/sluiced.ctl", s.run);
	CHECK(stat(sock, &st) == 0);

	t0 = stack_now_ms();
	CHECK(kill(s.sluiced, SIGTERM) == 0);
	CHECK(waitpid(s.sluiced, &status, 0) == s.sluiced);
	took = stack_now_ms() - t0;
	s.sluiced = 0;
	printf("  sluiced stopped in %lld ms\n", took);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	/* Workers left by themselves, between requests: well within the 3 s grace. */
	CHECK(took < 3000);
	for (i = 0, alive = 0; i < n; i++)
		alive += kill(pids[i], 0) == 0 || errno != ESRCH;
	CHECK_INT(alive, 0);
	CHECK(stat(sock, &st) < 0 && errno == ENOENT);
	CHECK(stat(ctl, &st) < 0 && errno == ENOENT);
	snprintf(sock, sizeof(sock), "%s/other.sock", s.run);
	CHECK(stat(sock, &st) < 0 && errno == ENOENT);
	stack_stop(&s);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_kill9_worker_under_load);
	RUN(test_reload_under_load);
	RUN(test_crash_loop);
	RUN(test_sigterm_with_kept_connections);
	return harness_done();
}
