/*
 * test_reload: an endpoint added and removed with one command, `sluiced ctl reload`
 * (supervisor/reread.c, supervisor/reload.c), on the real stack: sluiced and nginx, whose
 * file the stack generates with -o (so RUNDIR/proxy.args records how).
 *
 * Under a load of 3 threads of sequential GETs of /health through nginx (every non-200
 * and every transport error counted): a third line (the health binary under /extra,
 * binary=) and `ctl reload` make /extra answer 200 through nginx while the two old pools
 * keep the same workers (pids, generation 1); the line removed and `ctl reload` again make
 * /extra 404 and its socket go, a loop on /extra seeing 200 then 404 and never a 502 (the
 * pool stops once nginx's old workers have left); a list that does not parse, and one
 * whose new endpoint cannot bind its socket, make `ctl reload` fail with the reason and
 * change nothing (same pools, same nginx.conf, no FILE.next left); one whose new
 * endpoint's workers die at start (binary=/bin/false) fails once the pool is seen failed,
 * nginx not reloaded, and the fixed list's reload removes that pool.  The load saw no
 * failure at all.  Behind Apache (apache2 -k graceful) the same command adds and removes
 * /extra under a lighter load.
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "buf.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

#define LOADERS	3

/* The whole of a file into a malloc'ed string (caller frees), or NULL. */
static char *
slurp(const char *path)
{
	FILE *f = fopen(path, "r");
	struct buf b;
	char chunk[4096];
	size_t n;

	if (f == NULL)
		return NULL;
	buf_init(&b, 0);
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		buf_append(&b, chunk, n);
	fclose(f);
	if (b.data == NULL)
		buf_puts(&b, "");
	return b.data;
}

static int
write_file(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");
	int rc;

	if (f == NULL)
		return -1;
	rc = fputs(text, f) < 0 ? -1 : 0;
	if (fclose(f) != 0)
		rc = -1;
	return rc;
}

/* The status of GET url through nginx, 0 on a transport error. */
static long
status_of(const char *url)
{
	struct http_resp r;
	long st;

	http_resp_init(&r);
	st = http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0 ? r.status : 0;
	http_resp_free(&r);
	return st;
}

/* Waits up to ms for url to answer want; 0 or -1. */
static int
wait_status(const char *url, long want, int ms)
{
	long long end = stack_now_ms() + ms;

	while (status_of(url) != want) {
		if (stack_now_ms() > end)
			return -1;
		usleep(20 * 1000);
	}
	return 0;
}

/* GETs of one URL until told to stop, counting 200, 404 and anything else. */
struct route_loop {
	pthread_t tid;
	const char *url;
	volatile int stop;
	long ok, gone, other, last_other;
};

static void *
route_loop_main(void *arg)
{
	struct route_loop *l = arg;
	long st;

	while (!l->stop) {
		st = status_of(l->url);
		if (st == 200)
			l->ok++;
		else if (st == 404)
			l->gone++;
		else {
			l->other++;
			l->last_other = st;
		}
	}
	return NULL;
}

/* `ctl reload`: its exit status, its output (stdout and stderr) into out[len]. */
static int
ctl_reload(struct stack *s, char *out, size_t len)
{
	struct buf b;
	int rc;

	buf_init(&b, 0);
	rc = stack_ctl(s, &b, "reload");
	snprintf(out, len, "%s", b.data != NULL ? b.data : "");
	buf_free(&b);
	return rc;
}

/* The pids of pool name, sorted as ctl status lists them, into buf. */
static void
pids_of(struct stack *s, const char *name, char *buf, size_t len)
{
	if (stack_pool_field(s, name, "pids", buf, len) == -1)
		snprintf(buf, len, "(none)");
}

/* 1 when path exists. */
static int
exists(const char *path)
{
	struct stat st;

	return lstat(path, &st) == 0;
}

/*
 * A list that fails, as given in text: ctl reload exits non-zero saying want, and
 * nothing changed for what served: the pools' pids, nginx.conf, no nginx.conf.next,
 * /health serves.
 */
static void
check_refused(struct stack *s, const char *text, const char *want, const char *hpids,
    const char *opids, const char *nginx_conf)
{
	char out[4096], url[128], pids[256], next[400], *now;

	CHECK(write_file(s->conf, text) == 0);
	CHECK(ctl_reload(s, out, sizeof(out)) != 0);
	if (strstr(out, want) == NULL)
		harness_fail(__FILE__, __LINE__, "ctl reload said '%s', want '%s'", out, want);
	printf("  refused: %s", out);
	pids_of(s, "health", pids, sizeof(pids));
	CHECK_STR(pids, hpids);
	pids_of(s, "other", pids, sizeof(pids));
	CHECK_STR(pids, opids);
	snprintf(next, sizeof(next), "%s/nginx.conf", s->prefix);
	now = slurp(next);
	CHECK(now != NULL && strcmp(now, nginx_conf) == 0);
	free(now);
	snprintf(next, sizeof(next), "%s/nginx.conf.next", s->prefix);
	CHECK(!exists(next));
	snprintf(url, sizeof(url), "%s/health", s->base);
	CHECK_INT(status_of(url), 200);
}

/* Adds /extra, removes it, refuses two broken lists, all under load on /health. */
static void
test_reload_adds_and_removes(void)
{
	struct http_loop load[LOADERS];
	struct route_loop gone;
	struct stack s;
	char eps[PATH_MAX + 128], bin[PATH_MAX], extra_bin[PATH_MAX], url[128], out[4096];
	char text[2 * PATH_MAX + 512], hpids[256], opids[256], pids[256], sock[400];
	char path[400], load_url[128], *orig = NULL, *nginx_conf = NULL;
	long sent = 0, bad = 0;
	long long started;
	int i;

	snprintf(bin, sizeof(bin), "%s/health", getenv("SLUICE_BIN") != NULL ?
	    getenv("SLUICE_BIN") : "bin");
	if (realpath(bin, extra_bin) == NULL)
		snprintf(extra_bin, sizeof(extra_bin), "%s", bin);
	snprintf(eps, sizeof(eps), "health =/health workers=2 threads=4\n"
	    "other =/other workers=1 threads=2 binary=%s\n", extra_bin);
	if (stack_start(&s, eps, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	CHECK(stack_wait_pool(&s, "other", 3000) == 0);
	CHECK(stack_reachable(&s, extra_bin, bin, sizeof(bin)) == 0);
	pids_of(&s, "health", hpids, sizeof(hpids));
	pids_of(&s, "other", opids, sizeof(opids));
	/* The loops read their URL as they go: a buffer of its own. */
	snprintf(load_url, sizeof(load_url), "%s/health", s.base);
	for (i = 0; i < LOADERS; i++)
		CHECK(http_loop_start(&load[i], "GET", load_url, 200) == 0);
	started = stack_now_ms();
	orig = slurp(s.conf);
	CHECK(orig != NULL);
	if (orig == NULL)
		goto out;
	usleep(300 * 1000);

	/* Added: /extra answers through nginx; the old pools keep their workers. */
	snprintf(text, sizeof(text), "%sextra =/extra workers=1 threads=2 binary=%s\n", orig,
	    bin);
	CHECK(write_file(s.conf, text) == 0);
	CHECK_INT(ctl_reload(&s, out, sizeof(out)), 0);
	CHECK(strstr(out, "added=1 removed=0 reloaded=0 unchanged=2") != NULL);
	CHECK(strstr(out, "proxy: nginx reloaded on ") != NULL);
	printf("  %s", out);
	snprintf(url, sizeof(url), "%s/extra", s.base);
	CHECK(wait_status(url, 200, 3000) == 0);
	snprintf(sock, sizeof(sock), "%s/extra.sock", s.run);
	CHECK(exists(sock));
	pids_of(&s, "health", pids, sizeof(pids));
	CHECK_STR(pids, hpids);
	pids_of(&s, "other", pids, sizeof(pids));
	CHECK_STR(pids, opids);
	CHECK_INT(stack_pool_value(&s, "health", "gen"), 1);
	CHECK_INT(stack_pool_value(&s, "other", "gen"), 1);
	usleep(500 * 1000);

	/*
	 * Removed: /extra is nginx's 404 again, its socket gone.  A loop on /extra meanwhile
	 * sees 200 until nginx has reloaded, then 404, never a 502: the pool stops only once
	 * nginx no longer sends to it.
	 */
	memset(&gone, 0, sizeof(gone));
	gone.url = url;
	CHECK(pthread_create(&gone.tid, NULL, route_loop_main, &gone) == 0);
	usleep(100 * 1000);
	CHECK(write_file(s.conf, orig) == 0);
	CHECK_INT(ctl_reload(&s, out, sizeof(out)), 0);
	CHECK(strstr(out, "added=0 removed=1 reloaded=0 unchanged=2") != NULL);
	CHECK(wait_status(url, 404, 3000) == 0);
	usleep(200 * 1000);
	gone.stop = 1;
	pthread_join(gone.tid, NULL);
	printf("  /extra while removed: %ld 200, %ld 404, %ld other (last %ld)\n", gone.ok,
	    gone.gone, gone.other, gone.last_other);
	CHECK(gone.ok > 0 && gone.gone > 0);
	CHECK_INT(gone.other, 0);
	CHECK(!exists(sock));
	pids_of(&s, "health", pids, sizeof(pids));
	CHECK_STR(pids, hpids);

	/* Refused: nothing changes, the reason is said. */
	snprintf(path, sizeof(path), "%s/nginx.conf", s.prefix);
	nginx_conf = slurp(path);
	CHECK(nginx_conf != NULL);
	if (nginx_conf == NULL)
		goto out;
	snprintf(text, sizeof(text), "%sbogus =/bogus workres=1 binary=%s\n", orig, bin);
	check_refused(&s, text, "unknown key 'workres'", hpids, opids, nginx_conf);
	/* A new endpoint whose socket cannot be bound: a file is in its place. */
	snprintf(sock, sizeof(sock), "%s/bogus.sock", s.run);
	CHECK(write_file(sock, "not a socket\n") == 0);
	snprintf(text, sizeof(text), "%sbogus =/bogus workers=1 binary=%s\n", orig, bin);
	check_refused(&s, text, "bogus: cannot start", hpids, opids, nginx_conf);
	unlink(sock);
	/* A new endpoint whose workers die at start: nginx is not reloaded (/bogus stays
	 * its 404), and the next reload of the fixed list removes the failed pool. */
	snprintf(text, sizeof(text), "%sbogus =/bogus workers=1 binary=/bin/false\n", orig);
	check_refused(&s, text, "pool bogus failed", hpids, opids, nginx_conf);
	snprintf(url, sizeof(url), "%s/bogus", s.base);
	CHECK_INT(status_of(url), 404);
	CHECK(write_file(s.conf, orig) == 0);
	CHECK_INT(ctl_reload(&s, out, sizeof(out)), 0);
	CHECK(strstr(out, "added=0 removed=1 reloaded=0 unchanged=2") != NULL);

	/* The load ran for 3 s at least. */
	while (stack_now_ms() - started < 3000)
		usleep(50 * 1000);
out:
	for (i = 0; i < LOADERS; i++) {
		http_loop_stop(&load[i]);
		sent += load[i].sent;
		bad += load[i].bad;
		if (load[i].bad > 0)
			fprintf(stderr, "  loader %d: %ld bad of %ld, last status %ld\n", i,
			    load[i].bad, load[i].sent, load[i].last_bad_status);
	}
	printf("  load on /health: %ld requests, %ld failed\n", sent, bad);
	CHECK(sent > 100);
	CHECK_INT(bad, 0);
	if (bad > 0 || harness_failed_checks > 0)
		(void)stack_sh("tail -n 40 %s/sluiced.log %s/logs/error.log 1>&2", s.dir,
		    s.prefix);
	free(orig);
	free(nginx_conf);
	stack_stop(&s);
}

/* Behind Apache: the same command adds /extra (apache2 -k graceful) and removes it. */
static void
test_reload_apache(void)
{
	struct http_loop load;
	struct stack s;
	char bin[PATH_MAX], extra_bin[PATH_MAX], url[128], load_url[128], out[4096];
	char text[PATH_MAX + 512], hpids[256], pids[256], *orig;

	snprintf(bin, sizeof(bin), "%s/health", getenv("SLUICE_BIN") != NULL ?
	    getenv("SLUICE_BIN") : "bin");
	if (realpath(bin, extra_bin) == NULL)
		snprintf(extra_bin, sizeof(extra_bin), "%s", bin);
	if (access("/usr/sbin/apache2", X_OK) != 0)
		SKIP("no /usr/sbin/apache2");
	if (stack_start_server(&s, "health =/health workers=2 threads=4\n", "apache", "tuned",
	    2, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	CHECK(stack_reachable(&s, extra_bin, bin, sizeof(bin)) == 0);
	pids_of(&s, "health", hpids, sizeof(hpids));
	snprintf(load_url, sizeof(load_url), "%s/health", s.base);
	CHECK(http_loop_start(&load, "GET", load_url, 200) == 0);
	orig = slurp(s.conf);
	CHECK(orig != NULL);
	if (orig == NULL)
		goto out;
	snprintf(text, sizeof(text), "%sextra =/extra workers=1 threads=2 binary=%s\n", orig,
	    bin);
	CHECK(write_file(s.conf, text) == 0);
	CHECK_INT(ctl_reload(&s, out, sizeof(out)), 0);
	CHECK(strstr(out, "proxy: apache reloaded on ") != NULL);
	printf("  %s", out);
	snprintf(url, sizeof(url), "%s/extra", s.base);
	CHECK(wait_status(url, 200, 5000) == 0);
	CHECK(write_file(s.conf, orig) == 0);
	CHECK_INT(ctl_reload(&s, out, sizeof(out)), 0);
	CHECK(wait_status(url, 404, 5000) == 0);
	pids_of(&s, "health", pids, sizeof(pids));
	CHECK_STR(pids, hpids);
out:
	http_loop_stop(&load);
	printf("  load on /health: %ld requests, %ld failed\n", load.sent, load.bad);
	CHECK(load.sent > 10);
	CHECK_INT(load.bad, 0);
	free(orig);
	stack_stop(&s);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	RUN(test_reload_adds_and_removes);
	RUN(test_reload_apache);
	return harness_done();
}
