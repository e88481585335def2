/*
 * test_privileges: privilege separation through the real stack (nginx, sluiced, workers).
 *
 * As root: sluiced and its workers end up as the run user (sluice if it exists, else
 * nobody) with no way back; the sockets are the run user's, mode 0660, group RUNDIR's (or
 * socket_group's); RUNDIR is the run user's and setgid; an SQLite database in a root-owned
 * private directory is handed over and written to, one in a directory tree is not; an
 * endpoint added by SIGHUP after the drop gets a socket with the same owner, group, mode.
 * Everywhere: a worker that makes a forbidden system call (the test-only endpoint
 * tests/handlers/forbidden.c calls mount(2)) is killed with SIGSYS, sluiced logs it and
 * starts a new worker that serves the next request; with seccomp=0 the same call only
 * fails.  A worker that forks (tests/handlers/escape.c) is killed the same way, and a
 * secret in sluiced's environment never reaches a worker.  Not as root, the identity checks become "nothing changed".
 */
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chatfix.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

static char forbidden_bin[PATH_MAX + 32], escape_bin[PATH_MAX + 32];
static uid_t run_uid;
static gid_t run_gid;

/* The run user sluiced picks by default, or ours when we are not root. */
static void
priv_expected(void)
{
	struct passwd *pw;

	run_uid = getuid();
	run_gid = getgid();
	if (geteuid() != 0)
		return;
	if ((pw = getpwnam("sluice")) == NULL)
		pw = getpwnam("nobody");
	if (pw != NULL) {
		run_uid = pw->pw_uid;
		run_gid = pw->pw_gid;
	}
}

/* The four ids of "Uid:" or "Gid:" in /proc/pid/status; 0 or -1. */
static int
proc_ids(pid_t pid, const char *key, long ids[4])
{
	char path[64], line[256];
	FILE *f;
	int rc = -1;

	snprintf(path, sizeof(path), "/proc/%ld/status", (long)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, strlen(key)) == 0 &&
		    sscanf(line + strlen(key), "%ld %ld %ld %ld", &ids[0], &ids[1], &ids[2],
		    &ids[3]) == 4) {
			rc = 0;
			break;
		}
	fclose(f);
	return rc;
}

static int
proc_is(pid_t pid, uid_t uid, gid_t gid)
{
	long u[4], g[4];
	int i;

	if (proc_ids(pid, "Uid:", u) == -1 || proc_ids(pid, "Gid:", g) == -1)
		return 0;
	for (i = 0; i < 4; i++)
		if (u[i] != (long)uid || g[i] != (long)gid)
			return 0;
	return 1;
}

/* GET url; the pid in {"pid":N,...}, or -1 (status into *status). */
static long
get_pid(const char *url, long *status)
{
	struct http_resp r;
	const char *p;
	long pid = -1;

	http_resp_init(&r);
	if (http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0 && r.body.data != NULL &&
	    (p = strstr(r.body.data, "\"pid\":")) != NULL)
		pid = strtol(p + 6, NULL, 10);
	*status = r.status;
	http_resp_free(&r);
	return pid;
}

/* 1 when file holds needle. */
static int
file_has(const char *path, const char *needle)
{
	char buf[65536];
	size_t n;
	FILE *f;

	if ((f = fopen(path, "r")) == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	return strstr(buf, needle) != NULL;
}

static void
test_identity_and_sockets(void)
{
	struct stack s;
	struct stat st, rst;
	char conf[PATH_MAX + 512], path[400];
	pid_t pids[4];
	int n, i;

	snprintf(conf, sizeof(conf), "health =/health workers=2\n"
	    "forbidden =/forbidden workers=1 binary=%s\n", forbidden_bin);
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK(stack_wait_pool(&s, "health", 5000) == 0);
	CHECK(proc_is(s.sluiced, run_uid, run_gid));
	n = stack_worker_pids(&s, "health", pids, 4);
	CHECK_INT(n, 2);
	for (i = 0; i < n; i++)
		CHECK(proc_is(pids[i], run_uid, run_gid));
	/* The sockets: the run user's, RUNDIR's group, 0660; RUNDIR setgid when root. */
	CHECK(stat(s.run, &rst) == 0);
	snprintf(path, sizeof(path), "%s/health.sock", s.run);
	CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode));
	CHECK_INT(st.st_mode & 07777, 0660);
	CHECK_INT((long)st.st_uid, (long)run_uid);
	CHECK_INT((long)st.st_gid, (long)rst.st_gid);
	if (geteuid() == 0) {
		CHECK_INT((long)rst.st_uid, (long)run_uid);
		CHECK(rst.st_mode & S_ISGID);
		snprintf(path, sizeof(path), "%s/sluiced.ctl", s.run);
		CHECK(stat(path, &st) == 0 && st.st_uid == run_uid && (st.st_mode & 0777) == 0600);
		snprintf(path, sizeof(path), "%s/sluiced.log", s.dir);
		CHECK(file_has(path, "running as "));
	}
	/* And the whole chain still answers. */
	snprintf(path, sizeof(path), "%s/forbidden", s.base);
	{
		long status;

		CHECK(get_pid(path, &status) > 0);
		CHECK_INT(status, 200);
	}
	/*
	 * Workers leave on SIGTERM under the filter (a reload stops the old generation):
	 * no SIGSYS at exit and no straggler killed after the grace period, in release and
	 * sanitizer builds (LeakSanitizer's exit check runs under the filter too).
	 */
	CHECK_INT(stack_ctl(&s, NULL, "reload health"), 0);
	{
		long long end = stack_now_ms() + 8000;

		while (stack_now_ms() < end && (stack_pool_value(&s, "health", "old") != 0 ||
		    stack_pool_value(&s, "health", "reloading") != 0))
			usleep(50 * 1000);
	}
	CHECK_INT(stack_pool_value(&s, "health", "old"), 0);
	snprintf(path, sizeof(path), "%s/sluiced.log", s.dir);
	CHECK(!file_has(path, "seccomp filter forbids"));
	CHECK(!file_has(path, "did not stop within"));
	stack_stop(&s);
}

/*
 * After the drop, SIGHUP adds an endpoint: the unprivileged sluiced re-reads the list,
 * binds the new socket in RUNDIR and it gets the same owner, group and mode (RUNDIR's
 * setgid bit gives the group; no chown to a foreign group is needed).
 */
static void
test_sighup_new_endpoint(void)
{
	struct stack s;
	struct stat st, rst;
	char path[400], bin[PATH_MAX + 600];
	FILE *f;

	if (stack_start(&s, "health =/health workers=1\n", "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	if ((f = fopen(s.conf, "a")) == NULL) {
		CHECK(!"conf opened");
		stack_stop(&s);
		return;
	}
	if (stack_reachable(&s, forbidden_bin, bin, sizeof(bin)) == -1) {
		CHECK(!"binary reachable");
		fclose(f);
		stack_stop(&s);
		return;
	}
	fprintf(f, "again =/again workers=1 binary=%s\n", bin);
	fclose(f);
	CHECK(kill(s.sluiced, SIGHUP) == 0);
	CHECK(stack_wait_pool(&s, "again", 5000) == 0);
	snprintf(path, sizeof(path), "%s/again.sock", s.run);
	CHECK(stat(s.run, &rst) == 0);
	CHECK(stat(path, &st) == 0 && S_ISSOCK(st.st_mode));
	CHECK_INT((long)st.st_uid, (long)run_uid);
	CHECK_INT((long)st.st_gid, (long)rst.st_gid);
	CHECK_INT(st.st_mode & 0777, 0660);
	stack_stop(&s);
}

/* socket_group: sockets and RUNDIR take it, and nginx (the group) still connects. */
static void
test_socket_group(void)
{
	struct stack s;
	struct stat st;
	struct group *gr;
	char path[400];
	long status;

	if (geteuid() != 0)
		SKIP("needs root (a foreign socket group)");
	if ((gr = getgrnam("www-data")) == NULL) {
		CHECK(!"www-data group exists");
		return;
	}
	if (stack_start(&s, "set socket_group www-data\nhealth =/health workers=1\n", "tuned",
	    1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	snprintf(path, sizeof(path), "%s/health.sock", s.run);
	CHECK(stat(path, &st) == 0);
	CHECK_INT((long)st.st_gid, (long)gr->gr_gid);
	CHECK_INT(st.st_mode & 0777, 0660);
	CHECK(stat(s.run, &st) == 0 && st.st_gid == gr->gr_gid);
	snprintf(path, sizeof(path), "%s/health", s.base);
	get_pid(path, &status);
	CHECK_INT(status, 200);
	stack_stop(&s);
}

/* SQLite data: a private root directory is handed over; a directory tree is not. */
static void
test_sqlite_data(void)
{
	struct http_resp r;
	struct stack s;
	struct stat st;
	char dir[] = "/tmp/sluice-priv-XXXXXX", tree[] = "/tmp/sluice-priv-XXXXXX";
	char conf[PATH_MAX + 512], url[128], path[400];

	if (mkdtemp(dir) == NULL || mkdtemp(tree) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	/* Files root made there before start (a seeder's: workers never create a database),
	 * and a subdirectory in tree. */
	stack_sh("touch %s/other.key && mkdir %s/sub && chmod 755 %s", dir, tree, tree);
	snprintf(path, sizeof(path), "sqlite:%s/a.db", dir);
	CHECK_INT(chatfix_exec(path, "CREATE TABLE item (id integer PRIMARY KEY)"), 0);
	snprintf(path, sizeof(path), "sqlite:%s/b.db", tree);
	CHECK_INT(chatfix_exec(path, "CREATE TABLE item (id integer PRIMARY KEY)"), 0);
	snprintf(conf, sizeof(conf), "db a sqlite:%s/a.db\ndb b sqlite:%s/b.db\n"
	    "ready =/ready workers=1 db=a\nready_b =/ready_b workers=1 db=b binary=%s/ready\n",
	    dir, tree, getenv("SLUICE_BIN") ? getenv("SLUICE_BIN") : "bin");
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/ready", s.base);
	CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
	CHECK_INT(r.status, 200);
	http_resp_free(&r);
	CHECK(stat(dir, &st) == 0);
	CHECK_INT((long)st.st_uid, (long)run_uid);
	snprintf(path, sizeof(path), "%s/other.key", dir);
	CHECK(stat(path, &st) == 0 && st.st_uid == run_uid);
	snprintf(path, sizeof(path), "%s/a.db", dir);
	CHECK(stat(path, &st) == 0 && st.st_uid == run_uid);
	if (geteuid() == 0) {
		/* The tree stays root's, and sluiced says what to do about it. */
		CHECK(stat(tree, &st) == 0 && st.st_uid == 0);
		snprintf(path, sizeof(path), "%s/sluiced.log", s.dir);
		CHECK(file_has(path, "cannot write"));
	}
	stack_stop(&s);
out:
	stack_sh("rm -rf %s %s", dir, tree);
}

/*
 * Starts the forbidden endpoint (extra keys on its line), notes its worker's pid (*pid1,
 * asserting a 200), then asks it to call mount(2) and leaves that answer in *r.  0, or -1
 * when the stack did not start.
 */
static int
forbidden_mount(struct stack *s, const char *extra, char *url, size_t urlsz, long *pid1,
    struct http_resp *r)
{
	char conf[PATH_MAX + 512], bad[160];
	long status;

	snprintf(conf, sizeof(conf), "forbidden =/forbidden workers=1 %sbinary=%s\n", extra,
	    forbidden_bin);
	if (stack_start(s, conf, "default", 1, NULL) < 0) {
		CHECK(!"stack started");
		return -1;
	}
	snprintf(url, urlsz, "%s/forbidden", s->base);
	snprintf(bad, sizeof(bad), "%s/forbidden?do=mount", s->base);
	*pid1 = get_pid(url, &status);
	CHECK_INT(status, 200);
	CHECK(*pid1 > 0);
	http_resp_init(r);
	CHECK(http_do("GET", bad, NULL, NULL, 0, 5000, r) == 0);
	return 0;
}

/* A forbidden system call kills the worker (SIGSYS); sluiced replaces it. */
static void
test_seccomp_kills_and_replaces(void)
{
	struct http_resp r;
	struct stack s;
	char url[128], log[400], state[32];
	long pid1, pid2 = -1, status;
	long long end;

	if (forbidden_mount(&s, "", url, sizeof(url), &pid1, &r) < 0)
		return;
	CHECK_INT(r.status, 502);
	http_resp_free(&r);
	/* The next request waits in the backlog for the replacement (no refusal). */
	end = stack_now_ms() + 5000;
	while (stack_now_ms() < end) {
		pid2 = get_pid(url, &status);
		if (status == 200)
			break;
	}
	CHECK_INT(status, 200);
	CHECK(pid2 > 0 && pid2 != pid1);
	CHECK(kill((pid_t)pid1, 0) == -1);
	CHECK_INT(stack_pool_value(&s, "forbidden", "crashes"), 1);
	CHECK(stack_pool_state(&s, "forbidden", state, sizeof(state)) == 0);
	CHECK_STR(state, "running");
	snprintf(log, sizeof(log), "%s/sluiced.log", s.dir);
	CHECK(file_has(log, "signal:31"));
	CHECK(file_has(log, "seccomp filter forbids"));
	stack_stop(&s);
}

/* seccomp=0 on the endpoint's line: the same call fails and the worker lives on. */
static void
test_seccomp_off(void)
{
	struct http_resp r;
	struct stack s;
	char url[128];
	long pid1, pid2, status;

	if (forbidden_mount(&s, "seccomp=0 ", url, sizeof(url), &pid1, &r) < 0)
		return;
	CHECK_INT(r.status, 200);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"mount\":") != NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "mounted") == NULL);
	http_resp_free(&r);
	pid2 = get_pid(url, &status);
	CHECK_INT(status, 200);
	CHECK_INT(pid2, pid1);
	CHECK_INT(stack_pool_value(&s, "forbidden", "crashes"), 0);
	stack_stop(&s);
}

/* GET base/escape?do=what into *r (initialised here); its status. */
static long
escape_get(const struct stack *s, const char *what, struct http_resp *r)
{
	char url[160];

	snprintf(url, sizeof(url), "%s/escape?do=%s", s->base, what);
	http_resp_init(r);
	if (http_do("GET", url, NULL, NULL, 0, 5000, r) == -1)
		return -1;
	return r->status;
}

/*
 * Regression: the filter allowed clone with any flags, so a compromised worker could
 * fork.  Under the real sandbox a thread still starts, fork() kills the worker (SIGSYS,
 * 502) and sluiced replaces it; with seccomp=0 the same fork succeeds (the endpoint does
 * what it says).
 */
static void
test_worker_fork_killed(void)
{
	struct http_resp r;
	struct stack s;
	char conf[2 * PATH_MAX + 512], log[400];
	long long end;
	long status = 0;

	snprintf(conf, sizeof(conf), "escape =/escape workers=1 binary=%s\n"
	    "escape_off =/escape_off workers=1 seccomp=0 binary=%s\n", escape_bin, escape_bin);
	if (stack_start(&s, conf, "default", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	CHECK_INT(escape_get(&s, "thread", &r), 200);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"thread\":\"ok\"") != NULL);
	http_resp_free(&r);
	CHECK_INT(escape_get(&s, "fork", &r), 502);
	CHECK(r.body.data == NULL || strstr(r.body.data, "forked") == NULL);
	http_resp_free(&r);
	end = stack_now_ms() + 5000;
	while (stack_now_ms() < end && status != 200) {
		status = escape_get(&s, "thread", &r);
		http_resp_free(&r);
	}
	CHECK_INT(status, 200);
	CHECK_INT(stack_pool_value(&s, "escape", "crashes"), 1);
	snprintf(log, sizeof(log), "%s/sluiced.log", s.dir);
	CHECK(file_has(log, "seccomp filter forbids"));
	{
		char url[160];

		snprintf(url, sizeof(url), "%s/escape_off?do=fork", s.base);
		http_resp_init(&r);
		CHECK(http_do("GET", url, NULL, NULL, 0, 5000, &r) == 0);
		CHECK_INT(r.status, 200);
		CHECK(r.body.data != NULL && strstr(r.body.data, "\"fork\":\"forked\"") != NULL);
		http_resp_free(&r);
	}
	stack_stop(&s);
}

/*
 * Regression: workers inherited sluiced's whole environment.  A secret in sluiced's
 * environment (and another endpoint's database URL) never reaches a worker; its own
 * settings, PATH and the sanitizers' options do.
 */
static void
test_worker_env_secret_hidden(void)
{
	struct http_resp r;
	struct stack s;
	char conf[PATH_MAX + 512];

	setenv("SLUICE_TEST_SECRET_TOKEN", "hunter2", 1);
	setenv("AWS_SECRET_ACCESS_KEY", "hunter2", 1);
	setenv("SLUICE_DB_OTHER", "postgresql://u:hunter2@localhost/x", 1);
	snprintf(conf, sizeof(conf), "escape =/escape workers=1 binary=%s\n", escape_bin);
	if (stack_start(&s, conf, "default", 1, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	CHECK_INT(escape_get(&s, "env", &r), 200);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"SLUICE_NAME\"") != NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"PATH\"") != NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "SECRET") == NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "SLUICE_DB_OTHER") == NULL);
	if (getenv("ASAN_OPTIONS") != NULL)
		CHECK(r.body.data != NULL && strstr(r.body.data, "\"ASAN_OPTIONS\"") != NULL);
	http_resp_free(&r);
	stack_stop(&s);
out:
	unsetenv("SLUICE_TEST_SECRET_TOKEN");
	unsetenv("AWS_SECRET_ACCESS_KEY");
	unsetenv("SLUICE_DB_OTHER");
}

int
main(int argc, char **argv)
{
	char exe[PATH_MAX];

	(void)argc;
	(void)argv;
	/* The test-only endpoint is built next to this program: tests/handlers/forbidden. */
	if (stack_self_dir(exe, sizeof(exe)) < 0)
		return 1;
	snprintf(forbidden_bin, sizeof(forbidden_bin), "%s/handlers/forbidden", exe);
	snprintf(escape_bin, sizeof(escape_bin), "%s/handlers/escape", exe);
	if (access(forbidden_bin, X_OK) != 0) {
		fprintf(stderr, "test_privileges: %s not built (make integration)\n",
		    forbidden_bin);
		return 1;
	}
	priv_expected();
	RUN(test_identity_and_sockets);
	RUN(test_socket_group);
	RUN(test_sighup_new_endpoint);
	RUN(test_sqlite_data);
	RUN(test_seccomp_kills_and_replaces);
	RUN(test_seccomp_off);
	RUN(test_worker_fork_killed);
	RUN(test_worker_env_secret_hidden);
	return harness_done();
}
