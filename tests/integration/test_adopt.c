/*
 * test_adopt: a supervisor restart without a gap, through the real tuned nginx, on
 * SQLite and PostgreSQL (supervisor/adopt.c).
 *
 * sluiced killed with SIGKILL under two client loops (/health, and /ready, which queries
 * and writes its SQLite file) and started again on the same list and run directory: no
 * request fails (no 502, no transport error) while it is gone and after, the new sluiced
 * serves with the same worker pids (`ctl status` adopted=N, the same sockets, never
 * unlinked), and manages them: an adopted worker killed is replaced, its replacement
 * counted as a spawn, another stopped is killed by the watchdog, their counters go on
 * counting, a second sluiced is still refused, and a stop stops the adopted workers too.
 * The same kill -9 on PostgreSQL (a throwaway cluster, /ready): 0 failed, the same pids
 * adopted.  A supervisor that never comes back: its orphans serve on for their
 * orphan_grace_ms (2 s here), then each exits cleanly (status 0, reaped by this program,
 * which is their subreaper) and no process is left.  `ctl upgrade` under the same load,
 * after a new sluiced binary was renamed over the running one's file (SLUICE_TEST_SLUICED:
 * a copy of the test's own): the same sluiced pid running the new file, every pool
 * reloaded onto new workers, no request failed.  The test is the workers' subreaper
 * (PR_SET_CHILD_SUBREAPER), so the orphans of a killed sluiced are its children and it
 * reaps them all before it ends.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chatfix.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define ADOPT_MAX	16

static void
sleep_ms(long ms)
{
	usleep((useconds_t)ms * 1000);
}

/* The pids of pool name from ctl status (pids=), into pids[max]: their count, or -1. */
static int
pool_pids(struct stack *s, const char *name, pid_t *pids, int max)
{
	char v[512], *p, *end;
	int n = 0;

	if (stack_pool_field(s, name, "pids", v, sizeof(v)) < 0)
		return -1;
	for (p = v; *p != '\0' && n < max; p = *end == ',' ? end + 1 : end) {
		long pid = strtol(p, &end, 10);

		if (end == p || pid <= 0)
			return -1;
		pids[n++] = (pid_t)pid;
	}
	return n;
}

/* Whether the sets a[0..na) and b[0..nb) are the same pids. */
static int
same_pids(const pid_t *a, int na, const pid_t *b, int nb)
{
	int i, j, found;

	if (na != nb)
		return 0;
	for (i = 0; i < na; i++) {
		for (j = 0, found = 0; j < nb; j++)
			found |= a[i] == b[j];
		if (!found)
			return 0;
	}
	return 1;
}

/* Reaps every child that has exited (the orphans handed to this subreaper). */
static void
reap_orphans(void)
{
	while (waitpid(-1, NULL, WNOHANG) > 0)
		continue;
}

/* The SQLite file at path and the files SQLite and the writers' queue make beside it,
 * removed. */
static void
rm_db(const char *path)
{
	static const char *const ext[] = { "", "-wal", "-shm", "-journal", "-wlock" };
	char p[300];
	size_t i;

	for (i = 0; i < sizeof(ext) / sizeof(ext[0]); i++) {
		snprintf(p, sizeof(p), "%s%s", path, ext[i]);
		(void)unlink(p);
	}
}

/* The stack of the restart tests: /health and a SQLite /ready, path the database. */
static int
adopt_stack(struct stack *s, const char *path, const char *extra)
{
	char conf[1024], url[300];

	snprintf(url, sizeof(url), "sqlite:%s", path);
	rm_db(path);
	if (chatfix_exec(url, "CREATE TABLE item (id integer PRIMARY KEY)") != 0)
		return -1;
	snprintf(conf, sizeof(conf), "db main %s\nhealth =/health workers=2 threads=2 %s\n"
	    "ready =/ready workers=2 threads=2 db=main %s\n", url, extra, extra);
	if (stack_start(s, conf, "tuned", 2, NULL) < 0)
		return -1;
	if (stack_wait_pool(s, "health", 3000) < 0 || stack_wait_pool(s, "ready", 3000) < 0) {
		stack_stop(s);
		return -1;
	}
	return 0;
}

static void
loops_report(const char *what, struct http_loop *l, int n)
{
	int i;

	for (i = 0; i < n; i++)
		printf("  %s %s: requests %ld, failed %ld (last status %ld), slowest %.3f s\n",
		    what, l[i].url, l[i].sent, l[i].bad, l[i].last_bad_status, l[i].max_seconds);
}

/*
 * kill -9 of sluiced under load, then a new sluiced: 0 failed requests, the same workers
 * (adopted), and managed: one killed is replaced.
 */
static void
test_kill9_sluiced_adopted_under_load(void)
{
	struct http_loop loop[2];
	struct stack s;
	char url[2][128], db[128];
	pid_t hb[ADOPT_MAX], ha[ADOPT_MAX], rb[ADOPT_MAX], ra[ADOPT_MAX], victim;
	int nhb, nha, nrb, nra, i, status;
	long long t0, back = -1;
	long counted;

	snprintf(db, sizeof(db), "/tmp/sluice-adopt-%d.db", (int)getpid());
	if (adopt_stack(&s, db, "stmt_timeout_ms=1000") < 0) {
		CHECK(!"stack started");
		return;
	}
	nhb = pool_pids(&s, "health", hb, ADOPT_MAX);
	nrb = pool_pids(&s, "ready", rb, ADOPT_MAX);
	CHECK_INT(nhb, 2);
	CHECK_INT(nrb, 2);
	snprintf(url[0], sizeof(url[0]), "%s/health", s.base);
	snprintf(url[1], sizeof(url[1]), "%s/ready", s.base);
	for (i = 0; i < 2; i++)
		CHECK(http_loop_start(&loop[i], "GET", url[i], 200) == 0);
	sleep_ms(500);

	counted = stack_pool_value(&s, "health", "requests");
	CHECK(kill(s.sluiced, SIGKILL) == 0);
	CHECK(waitpid(s.sluiced, &status, 0) == s.sluiced);
	t0 = stack_now_ms();
	/* A second with no supervisor at all: the workers serve on. */
	sleep_ms(1000);
	for (i = 0; i < 2; i++)
		printf("  without sluiced: %s %ld requests so far, %ld failed\n", url[i],
		    loop[i].sent, loop[i].bad);
	CHECK(stack_restart_sluiced(&s) == 0);
	printf("  sluiced back %lld ms after the kill\n", stack_now_ms() - t0);
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	CHECK(stack_wait_pool(&s, "ready", 3000) == 0);
	nha = pool_pids(&s, "health", ha, ADOPT_MAX);
	nra = pool_pids(&s, "ready", ra, ADOPT_MAX);
	CHECK(same_pids(hb, nhb, ha, nha));
	CHECK(same_pids(rb, nrb, ra, nra));
	CHECK_INT(stack_pool_value(&s, "health", "adopted"), 2);
	CHECK_INT(stack_pool_value(&s, "ready", "adopted"), 2);
	{
		struct buf out;

		buf_init(&out, 0);
		CHECK_INT(stack_ctl(&s, &out, "status --json"), 0);
		CHECK(out.data != NULL && strstr(out.data, "\"workers_wanted\":2,\"adopted\":2,")
		    != NULL);
		buf_free(&out);
	}
	CHECK_INT(stack_pool_value(&s, "health", "spawns"), 0);
	CHECK_INT(stack_log_count(&s, "health: adopted the socket"), 1);
	/* Their counters' pages were adopted too: what they counted before is still there,
	 * and what they served meanwhile. */
	printf("  health requests counted: %ld before the kill, %ld after the adoption\n",
	    counted, stack_pool_value(&s, "health", "requests"));
	CHECK(counted > 0 && stack_pool_value(&s, "health", "requests") > counted);
	/* A second sluiced on the same run directory is still refused, and changes nothing. */
	CHECK_INT(stack_sh("%s/sluiced -c %s -r %s -b %s >/dev/null 2>&1", stack_bin(), s.conf,
	    s.run, s.bin), 1);
	CHECK_INT(stack_pool_value(&s, "ready", "adopted"), 2);
	sleep_ms(500);

	/* Managed: an adopted worker killed is replaced. */
	victim = ha[0];
	CHECK(victim > 0 && kill(victim, SIGKILL) == 0);
	t0 = stack_now_ms();
	sleep_ms(50);
	back = stack_wait_pool(&s, "health", 3000) == 0 ? stack_now_ms() - t0 : -1;
	printf("  adopted worker %d killed: pool whole again after %lld ms\n", (int)victim,
	    back);
	CHECK(back >= 0 && back <= 1500);
	nha = pool_pids(&s, "health", ha, ADOPT_MAX);
	CHECK_INT(nha, 2);
	for (i = 0; i < nha; i++)
		CHECK(ha[i] != victim);
	CHECK_INT(stack_pool_value(&s, "health", "spawns"), 1);
	CHECK_INT(stack_pool_value(&s, "health", "adopted"), 1);
	sleep_ms(500);

	for (i = 0; i < 2; i++)
		http_loop_stop(&loop[i]);
	loops_report("kill -9", loop, 2);
	for (i = 0; i < 2; i++) {
		CHECK(loop[i].sent > 100);
		CHECK_INT(loop[i].bad, 0);
	}
	/* The watchdog watches an adopted worker: stopped between requests, it is killed
	 * after its budget and grace (1 s + 1 s) and replaced. */
	CHECK(nra > 0 && kill(ra[0], SIGSTOP) == 0);
	t0 = stack_now_ms();
	while (stack_now_ms() - t0 < 6000 && stack_pool_value(&s, "ready", "hung") != 1)
		sleep_ms(50);
	printf("  adopted worker %d stopped: killed by the watchdog after %lld ms\n",
	    (int)ra[0], stack_now_ms() - t0);
	CHECK_INT(stack_pool_value(&s, "ready", "hung"), 1);
	CHECK(stack_wait_pool(&s, "ready", 3000) == 0);
	CHECK_INT(stack_pool_value(&s, "ready", "adopted"), 1);
	stack_stop(&s);
	/* The stop reached the adopted workers too: none left. */
	sleep_ms(100);
	reap_orphans();
	for (i = 0; i < nra; i++)
		CHECK(kill(ra[i], 0) == -1 && errno == ESRCH);
	rm_db(db);
}

/*
 * The same on PostgreSQL: kill -9 of sluiced under a loop of /ready (a query and a write
 * on the server), a new sluiced adopting the workers with their connections, 0 failed.
 */
static void
test_kill9_sluiced_adopted_pg(void)
{
	struct http_loop loop;
	struct pgtmp pg;
	struct stack s;
	char url[128];
	pid_t before[ADOPT_MAX], after[ADOPT_MAX];
	int nb, na, status;

	memset(&pg, 0, sizeof(pg));
	if (pgtmp_start(&pg) < 0) {
		CHECK(!"PostgreSQL cluster started");
		return;
	}
	CHECK_INT(chatfix_exec(pg.url, "CREATE TABLE item (id integer PRIMARY KEY)"), 0);
	/* The restarted sluiced reads it from this environment too. */
	setenv("SLUICE_DB_MAIN", pg.url, 1);
	if (stack_start(&s, "db main sqlite:/nonexistent.db\n"
	    "ready =/ready workers=2 threads=2 db=main\n", "tuned", 2, NULL) < 0 ||
	    stack_wait_pool(&s, "ready", 3000) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	nb = pool_pids(&s, "ready", before, ADOPT_MAX);
	CHECK_INT(nb, 2);
	snprintf(url, sizeof(url), "%s/ready", s.base);
	CHECK(http_loop_start(&loop, "GET", url, 200) == 0);
	sleep_ms(500);
	CHECK(kill(s.sluiced, SIGKILL) == 0);
	CHECK(waitpid(s.sluiced, &status, 0) == s.sluiced);
	sleep_ms(1000);
	CHECK(stack_restart_sluiced(&s) == 0);
	CHECK(stack_wait_pool(&s, "ready", 3000) == 0);
	na = pool_pids(&s, "ready", after, ADOPT_MAX);
	CHECK(same_pids(before, nb, after, na));
	CHECK_INT(stack_pool_value(&s, "ready", "adopted"), 2);
	sleep_ms(500);
	http_loop_stop(&loop);
	loops_report("kill -9 (PostgreSQL)", &loop, 1);
	CHECK(loop.sent > 100);
	CHECK_INT(loop.bad, 0);
	stack_stop(&s);
out:
	unsetenv("SLUICE_DB_MAIN");
	pgtmp_stop(&pg);
	/* After the cluster's own processes are stopped and reaped by it. */
	sleep_ms(100);
	reap_orphans();
}

/*
 * A supervisor that never comes back: its workers serve for their grace (2 s), then exit
 * cleanly, and nothing is left.
 */
static void
test_orphans_leave_after_grace(void)
{
	struct http_resp r;
	struct stack s;
	char url[128], db[128];
	pid_t pids[2 * ADOPT_MAX];
	int n, m, i, status, clean = 0;
	long long t0, first = -1, last = -1, at;

	snprintf(db, sizeof(db), "/tmp/sluice-adopt-orphan-%d.db", (int)getpid());
	if (adopt_stack(&s, db, "orphan_grace_ms=2000") < 0) {
		CHECK(!"stack started");
		return;
	}
	n = pool_pids(&s, "health", pids, ADOPT_MAX);
	m = pool_pids(&s, "ready", pids + (n > 0 ? n : 0), ADOPT_MAX);
	CHECK_INT(n, 2);
	CHECK_INT(m, 2);
	n = (n > 0 ? n : 0) + (m > 0 ? m : 0);
	CHECK(kill(s.sluiced, SIGKILL) == 0);
	CHECK(waitpid(s.sluiced, &status, 0) == s.sluiced);
	s.sluiced = 0;
	t0 = stack_now_ms();
	/* Within their grace they serve, and every one is there. */
	sleep_ms(1000);
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/ready", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	http_resp_free(&r);
	for (i = 0; i < n; i++)
		CHECK(kill(pids[i], 0) == 0);
	/* Then each leaves on its own, with status 0. */
	for (i = 0; i < n; i++) {
		if ((status = stack_reap(pids[i], 6000)) == -1) {
			CHECK(!"orphan reaped");
			continue;
		}
		clean += WIFEXITED(status) && WEXITSTATUS(status) == 0;
		at = stack_now_ms() - t0;
		if (first < 0 || at < first)
			first = at;
		if (at > last)
			last = at;
	}
	printf("  orphans gone %lld to %lld ms after the kill (grace 2000 ms), %d of %d with "
	    "status 0\n", first, last, clean, n);
	/* The last heartbeat came up to POOL_BEAT_MS (500 ms) before the kill, and each
	 * looks at it once a second. */
	CHECK(first >= 1400);
	CHECK(last <= 5000);
	CHECK_INT(clean, n);
	for (i = 0; i < n; i++)
		CHECK(kill(pids[i], 0) == -1 && errno == ESRCH);
	CHECK(stack_log_count(&s, "no supervisor adopted this worker; leaving") == n);
	stack_stop(&s);
	reap_orphans();
	rm_db(db);
}

/* ctl upgrade under load: a new sluiced binary installed over the running one's file,
 * then the same sluiced pid running it, every worker replaced, no request failed. */
static void
test_upgrade_under_load(void)
{
	struct http_loop loop[2];
	struct buf out;
	struct stack s;
	char url[2][128], db[128], want[64], dir[] = "/tmp/sluice-adopt-bin-XXXXXX";
	char exe[128], proc[64];
	struct stat st, run;
	pid_t hb[ADOPT_MAX], ha[ADOPT_MAX];
	int nhb, nha, i, j, overlap = 0, rc;

	snprintf(db, sizeof(db), "/tmp/sluice-adopt-up-%d.db", (int)getpid());
	/* sluiced runs from a copy of its own, which the upgrade replaces. */
	if (mkdtemp(dir) == NULL || chmod(dir, 0755) == -1) {
		CHECK(!"temporary directory");
		return;
	}
	snprintf(exe, sizeof(exe), "%s/sluiced", dir);
	CHECK_INT(stack_sh("cp %s/sluiced %s", stack_bin(), exe), 0);
	setenv("SLUICE_TEST_SLUICED", exe, 1);
	rc = adopt_stack(&s, db, "");
	unsetenv("SLUICE_TEST_SLUICED");
	if (rc < 0) {
		CHECK(!"stack started");
		stack_sh("rm -rf %s", dir);
		return;
	}
	nhb = pool_pids(&s, "health", hb, ADOPT_MAX);
	snprintf(url[0], sizeof(url[0]), "%s/health", s.base);
	snprintf(url[1], sizeof(url[1]), "%s/ready", s.base);
	for (i = 0; i < 2; i++)
		CHECK(http_loop_start(&loop[i], "GET", url[i], 200) == 0);
	sleep_ms(500);
	/* The new binary, installed as a new file renamed into place (one more byte makes it
	 * another file: an ELF runs with bytes after its end). */
	CHECK_INT(stack_sh("cp %s/sluiced %s.new && printf x >> %s.new && mv %s.new %s",
	    stack_bin(), exe, exe, exe, exe), 0);
	CHECK(stat(exe, &st) == 0);
	snprintf(proc, sizeof(proc), "/proc/%d/exe", (int)s.sluiced);
	CHECK(stat(proc, &run) == 0 && run.st_ino != st.st_ino);
	buf_init(&out, 0);
	rc = stack_ctl(&s, &out, "upgrade");
	printf("%s", out.data != NULL ? out.data : "");
	CHECK_INT(rc, 0);
	CHECK(out.data != NULL && strstr(out.data, "upgrade: ready reloaded") != NULL);
	buf_free(&out);
	sleep_ms(500);
	for (i = 0; i < 2; i++)
		http_loop_stop(&loop[i]);
	loops_report("upgrade", loop, 2);
	for (i = 0; i < 2; i++) {
		CHECK(loop[i].sent > 100);
		CHECK_INT(loop[i].bad, 0);
	}
	/* The same process, its binary executed anew. */
	buf_init(&out, 0);
	CHECK_INT(stack_ctl(&s, &out, "status"), 0);
	snprintf(want, sizeof(want), "sluiced pid=%d ", (int)s.sluiced);
	CHECK(out.data != NULL && strstr(out.data, want) != NULL);
	buf_free(&out);
	CHECK_INT(stack_log_count(&s, "upgrade: executing "), 1);
	/* The process now runs the file installed. */
	CHECK(stat(proc, &run) == 0 && run.st_ino == st.st_ino && run.st_dev == st.st_dev);
	CHECK_INT(stack_log_count(&s, " endpoints from "), 2);
	/* Every worker is a new one of generation 2. */
	CHECK(stack_wait_pool(&s, "health", 3000) == 0);
	nha = pool_pids(&s, "health", ha, ADOPT_MAX);
	CHECK_INT(nha, 2);
	for (i = 0; i < nhb; i++)
		for (j = 0; j < nha; j++)
			overlap += hb[i] == ha[j];
	CHECK_INT(overlap, 0);
	CHECK_INT(stack_pool_value(&s, "health", "gen"), 2);
	CHECK_INT(stack_pool_value(&s, "ready", "gen"), 2);
	stack_stop(&s);
	reap_orphans();
	rm_db(db);
	stack_sh("rm -rf %s", dir);
}

int
main(void)
{
	/* The orphans of a killed sluiced become this program's children. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1) == -1) {
		perror("prctl(PR_SET_CHILD_SUBREAPER)");
		return 1;
	}
	RUN(test_kill9_sluiced_adopted_under_load);
	RUN(test_kill9_sluiced_adopted_pg);
	RUN(test_orphans_leave_after_grace);
	RUN(test_upgrade_under_load);
	return harness_done();
}
