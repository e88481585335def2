/*
 * test_supervisor: sluiced under a request loop, through the real tuned nginx.
 *
 * kill -9 of a worker (restarted within 1 s, counted, no request refused); reload of one
 * endpoint (a new generation on the same socket, zero failed requests); a crash loop (a
 * binary that exits at once is marked failed after R tries, without spinning, while the
 * other endpoints keep serving); SIGTERM (workers gone within the grace period, socket
 * files removed), with nginx holding kept-alive connections to every worker.  Mistakes in
 * the endpoint list (an unknown key, an ambiguous route, a missing binary) stop the start
 * and are refused on SIGHUP, each with one line; a pool logs one line at start and one at
 * stop.  A worker asked to stop while it is still starting stops.  workers=auto and
 * threads=auto start the numbers the rule computes from set cpus.
 */
#include <errno.h>
#include <limits.h>
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

/* The whole of a file into a malloc'ed string (caller frees), or NULL. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	char *buf = NULL;
	size_t len = 0, n;

	if (f == NULL)
		return NULL;
	for (;;) {
		char *grown = realloc(buf, len + 4097);

		if (grown == NULL) {
			free(buf);
			fclose(f);
			return NULL;
		}
		buf = grown;
		n = fread(buf + len, 1, 4096, f);
		len += n;
		if (n == 0)
			break;
	}
	buf[len] = '\0';
	fclose(f);
	return buf;
}

/* How many times needle occurs in the file at path; -1 if it cannot be read. */
static int
count_in_file(const char *path, const char *needle)
{
	char *text = slurp(path), *at;
	int n = 0;

	if (text == NULL)
		return -1;
	for (at = text; (at = strstr(at, needle)) != NULL; at += strlen(needle))
		n++;
	free(text);
	return n;
}

/* How many lines the file at path has; -1 if it cannot be read. */
static int
lines_in_file(const char *path)
{
	return count_in_file(path, "\n");
}

/* Writes text to path: 0 or -1. */
static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	if (f == NULL)
		return -1;
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

/*
 * A mistake in the endpoint list stops sluiced at start with one line that names the
 * file, the line and the fix: an unknown key (workres=2 was once passed on to the
 * workers unread), a route that is neither exact nor a prefix, a binary that is not there
 * (it used to be found out by every worker, one "cannot execute" line each, again at every
 * restart).
 */
static void
test_start_refuses_mistakes(void)
{
	static const struct {
		const char *line;
		const char *want;
	} bad[] = {
		{ "health =/health workres=2\n", ":2: endpoint health: unknown key 'workres' "
		    "(did you mean workers?)" },
		{ "health /health workers=2\n", ":2: endpoint health: route /health is ambiguous: "
		    "write =/health for an exact route, /health/ for a prefix" },
		{ "ghost =/ghost workers=2\n", ":2: endpoint ghost: cannot execute " },
		{ "health =/health binary=/nonexistent/health\n", ":2: endpoint health: cannot "
		    "execute /nonexistent/health: No such file or directory" },
	};
	char dir[] = "/tmp/sluice-conf-XXXXXX", conf[128], errf[128], text[256];
	size_t i;
	int rc;

	if (mkdtemp(dir) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(conf, sizeof(conf), "%s/endpoints.conf", dir);
	snprintf(errf, sizeof(errf), "%s/stderr", dir);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(text, sizeof(text), "set listen 127.0.0.1:1\n%s", bad[i].line);
		CHECK(write_file(conf, text) == 0);
		rc = stack_sh("%s/sluiced -c %s -r %s/run -b %s >%s 2>&1", stack_bin(), conf, dir,
		    stack_bin(), errf);
		CHECK_INT(rc, 1);
		/* Said once, on one line, and nothing started. */
		if (count_in_file(errf, bad[i].want) != 1 || lines_in_file(errf) != 1) {
			harness_fail(__FILE__, __LINE__, "case %zu: want one line with '%s'", i,
			    bad[i].want);
			(void)stack_sh("cat %s 1>&2", errf);
		}
		CHECK(count_in_file(errf, conf) == 1);
	}
	/* The missing binary is named by the path sluiced looked for. */
	CHECK(write_file(conf, "ghost =/ghost\n") == 0);
	CHECK_INT(stack_sh("%s/sluiced -c %s -r %s/run -b %s >%s 2>&1", stack_bin(), conf, dir,
	    stack_bin(), errf), 1);
	snprintf(text, sizeof(text), "cannot execute %s/ghost: No such file or directory",
	    stack_bin());
	CHECK_INT(count_in_file(errf, text), 1);
	stack_sh("rm -rf '%s'", dir);
}

/*
 * SIGHUP with a broken list: one error line, and the running configuration stays (the
 * pool keeps its workers and serves).
 */
static void
test_sighup_refuses_mistakes(void)
{
	struct http_resp r;
	struct stack s;
	char url[128], log[400], text[512], want[PATH_MAX + 1200], state[32];
	pid_t pids[8];

	if (stack_start(&s, "health =/health workers=2\n", "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	snprintf(log, sizeof(log), "%s/sluiced.log", s.dir);
	snprintf(url, sizeof(url), "%s/health", s.base);

	/* A new endpoint whose binary was never built. */
	snprintf(text, sizeof(text), "set listen 127.0.0.1:%d\nhealth =/health workers=2\n"
	    "ghost =/ghost workers=1\n", s.port);
	CHECK(write_file(s.conf, text) == 0);
	CHECK(kill(s.sluiced, SIGHUP) == 0);
	sleep_ms(500);
	snprintf(want, sizeof(want), "SIGHUP: %s:3: endpoint ghost: cannot execute %s/ghost: "
	    "No such file or directory", s.conf, s.bin);
	CHECK_INT(count_in_file(log, want), 1);
	CHECK_INT(count_in_file(log, "cannot execute"), 1);
	CHECK(stack_pool_state(&s, "ghost", state, sizeof(state)) != 0);

	/* A typo in a key. */
	snprintf(text, sizeof(text), "set listen 127.0.0.1:%d\nhealth =/health workers=2 "
	    "workres=3\n", s.port);
	CHECK(write_file(s.conf, text) == 0);
	CHECK(kill(s.sluiced, SIGHUP) == 0);
	sleep_ms(500);
	snprintf(want, sizeof(want), "SIGHUP: %s:2: endpoint health: unknown key 'workres' "
	    "(did you mean workers?); keeping the running configuration", s.conf);
	CHECK_INT(count_in_file(log, want), 1);
	CHECK_INT(count_in_file(log, "workres"), 1);

	/* Still the same two workers, still serving. */
	CHECK_INT(stack_worker_pids(&s, "health", pids, 8), 2);
	CHECK_INT(stack_pool_value(&s, "health", "gen"), 1);
	http_resp_init(&r);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	http_resp_free(&r);
	stack_stop(&s);
}

/*
 * At the default level a pool says one line when it starts and one when it stops, however
 * many workers it has; the workers' own start and stop lines are debug.
 */
static void
test_one_log_line_per_pool(void)
{
	struct stack s;
	char eps[PATH_MAX + 128], log[400];
	int status = 0;

	snprintf(eps, sizeof(eps), "health =/health workers=6 threads=2\n"
	    "other =/other workers=3 binary=%s/health\n", stack_bin());
	if (stack_start(&s, eps, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	CHECK(stack_wait_pool(&s, "other", 3000) == 0);
	snprintf(log, sizeof(log), "%s/sluiced.log", s.dir);
	CHECK(kill(s.sluiced, SIGTERM) == 0);
	CHECK(waitpid(s.sluiced, &status, 0) == s.sluiced);
	s.sluiced = 0;
	CHECK_INT(count_in_file(log, "] info: health: listening on "), 1);
	CHECK_INT(count_in_file(log, "] info: other: listening on "), 1);
	CHECK_INT(count_in_file(log, "] info: health: stopped ("), 1);
	CHECK_INT(count_in_file(log, "] info: other: stopped ("), 1);
	/* No line from a worker (their name is the endpoint's: "sluice health[PID]"). */
	CHECK_INT(count_in_file(log, "sluice health["), 0);
	CHECK_INT(count_in_file(log, "sluice other["), 0);
	CHECK(count_in_file(log, "] warn:") == 0 && count_in_file(log, "] error:") == 0);
	/* Two pools, nine workers: a handful of lines in all. */
	CHECK(lines_in_file(log) <= 10);
	if (lines_in_file(log) > 10)
		(void)stack_sh("cat %s 1>&2", log);
	stack_stop(&s);
}

/*
 * workers=auto / threads=auto: a pool starts the number of workers the rule computes from
 * set cpus (one per two CPUs; 64 threads each), says so in ctl status
 * and its start line, and each worker runs that many serving threads.
 */
static void
test_pool_auto_sizes(void)
{
	struct stack s;
	char eps[PATH_MAX + 128], log[400], sizing[64];
	pid_t pids[16];
	int n, i;

	snprintf(eps, sizeof(eps), "set cpus 6\nhealth =/health workers=auto threads=auto\n"
	    "other =/other workers=2 threads=auto binary=%s/health\n", stack_bin());
	if (stack_start(&s, eps, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	CHECK(stack_wait_pool(&s, "other", 3000) == 0);
	CHECK_INT(stack_pool_value(&s, "health", "workers"), 3);
	CHECK_INT(stack_pool_value(&s, "health", "threads"), 64);
	CHECK(stack_pool_field(&s, "health", "sizing", sizing, sizeof(sizing)) == 0 &&
	    strcmp(sizing, "auto:6cpus") == 0);
	CHECK_INT(stack_pool_value(&s, "other", "workers"), 2);
	CHECK_INT(stack_pool_value(&s, "other", "threads"), 64);
	CHECK(stack_pool_field(&s, "other", "sizing", sizing, sizeof(sizing)) == 0 &&
	    strcmp(sizing, "auto-threads:6cpus") == 0);
	n = stack_worker_pids(&s, "health", pids, 16);
	CHECK_INT(n, 3);
	/* Every worker serves with 64 threads (and may have a helper or two of its own). */
	for (i = 0; i < n; i++)
		CHECK(stack_proc_kb(pids[i], "Threads:") >= 64);
	CHECK_INT(stack_worker_pids(&s, "other", pids, 16), 2);
	snprintf(log, sizeof(log), "%s/sluiced.log", s.dir);
	CHECK_INT(count_in_file(log, "health: listening on "), 1);
	CHECK_INT(count_in_file(log, "3 workers x 64 threads (auto:6cpus)"), 1);
	CHECK_INT(count_in_file(log, "2 workers x 64 threads (auto-threads:6cpus)"), 1);
	stack_stop(&s);
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

	char eps[PATH_MAX + 128];

	/* sluiced refuses a list whose binaries it cannot execute: other names the real one. */
	snprintf(eps, sizeof(eps), "health =/health workers=8 threads=1\n"
	    "other =/other workers=2 threads=2 binary=%s/health\n", stack_bin());
	if (stack_start(&s, eps, "tuned", 2, NULL) < 0) {
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

/*
 * A worker asked to stop while it is still starting stops: the signal is blocked from the
 * first step of its start-up, so it waits for the worker's sigwait() instead of being
 * lost (the worker would then serve on until sluiced's grace ran out and it was killed).
 * The signal lands at 0 to 8 ms after fork, across the whole start-up.
 */
static void
test_stop_signal_during_startup(void)
{
	char dir[] = "/tmp/sluice-startXXXXXX", sock[64], binary[PATH_MAX + 16];
	int i, status, hung = 0, stopped = 0;
	pid_t pid;

	if (mkdtemp(dir) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(sock, sizeof(sock), "%s/w.sock", dir);
	snprintf(binary, sizeof(binary), "%s/health", stack_bin());
	for (i = 0; i < 80; i++) {
		if ((pid = fork()) == 0) {
			execl(binary, binary, "-s", sock, (char *)NULL);
			_exit(127);
		}
		CHECK(pid > 0);
		usleep((useconds_t)(i * 100));
		CHECK(kill(pid, SIGTERM) == 0);
		status = stack_reap(pid, 1000);
		if (WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL)
			hung++;
		else if ((WIFEXITED(status) && WEXITSTATUS(status) == 0) ||
		    (WIFSIGNALED(status) && WTERMSIG(status) == SIGTERM))
			stopped++;
		unlink(sock);
	}
	printf("  80 stop signals during start-up: %d stopped, %d hung\n", stopped, hung);
	CHECK_INT(hung, 0);
	CHECK_INT(stopped, 80);
	rmdir(dir);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_stop_signal_during_startup);
	RUN(test_start_refuses_mistakes);
	RUN(test_sighup_refuses_mistakes);
	RUN(test_one_log_line_per_pool);
	RUN(test_pool_auto_sizes);
	RUN(test_kill9_worker_under_load);
	RUN(test_reload_under_load);
	RUN(test_crash_loop);
	RUN(test_sigterm_with_kept_connections);
	return harness_done();
}
