/*
 * test_run: `make run` (supervisor/run.sh) as a new user meets it, on a copy of the tree
 * (bin/ from SLUICE_BIN, conf/, sql/, supervisor/, handlers/ and the seeders) in a private
 * directory: mkdtemp()'s mode 0700, like root's home on Debian.  As root the workers and
 * nginx's workers cannot reach it, so the script must serve from a directory they can
 * reach; as another user everything runs as that user.
 *
 *   - it serves /health, / and /ready with 200 on LISTEN=; nginx's workers are never root;
 *     an ordinary user's private checkout serves from itself, as that user;
 *   - a second run while it serves, and a port held by something else, exit non-zero
 *     with the reason and the fix (LISTEN=), never "sluice is serving";
 *   - a pool that crash-loops at start makes it exit non-zero, naming the pool;
 *   - SERVER=apache serves /health and /;
 *   - DB=postgresql starts a cluster in data/pg, seeds it, serves /ready ("postgresql"),
 *     / and the REST API from it, and stops it with the stack;
 *   - the integration stack (tests/lib/stack.c) serves from the same private tree;
 *   - `sluiced nginx` as root never names root as nginx's user;
 *   - `make deps` installs what running needs (no Apache, linters, wrk or gnuplot) and
 *     `make deps-test` what the tests need;
 *   - the systemd units in conf/ pass `systemd-analyze verify` (when it is installed).
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <dirent.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

static char priv[64];		/* the private directory (0700) */
static char tree[128];		/* the copy of the tree inside it */
static char bin_abs[PATH_MAX];	/* SLUICE_BIN, absolute */

struct runsh {
	pid_t pid;
	char out[160];		/* its stdout and stderr */
	int port;
};

static void
sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		continue;
}

/* The whole output of r so far, into buf[len]. */
static void
run_output(const struct runsh *r, char *buf, size_t len)
{
	size_t n = 0;
	FILE *f;

	buf[0] = '\0';
	if ((f = fopen(r->out, "r")) == NULL)
		return;
	n = fread(buf, 1, len - 1, f);
	buf[n] = '\0';
	fclose(f);
}

/*
 * Starts supervisor/run.sh of the copy with the environment settings env ("K=V K=V", may
 * be NULL) and LISTEN on port.  Returns once its banner is printed whole (1), exits (0:
 * *status holds its wait status) or timeout_s passes (-1).
 */
static int
run_start_in(struct runsh *r, const char *top, const char *user, int port, const char *env,
    int timeout_s, int *status)
{
	static int seq;
	char buf[65536], cmd[2048];
	long long end;
	pid_t w;

	memset(r, 0, sizeof(*r));
	r->port = port;
	snprintf(r->out, sizeof(r->out), "%s/run-%d.out", priv, seq++);
	/* setpriv executes the script itself (runuser would stand between, as a parent). */
	snprintf(cmd, sizeof(cmd), "exec %s%s%s env LISTEN=127.0.0.1:%d %s bash "
	    "%s/supervisor/run.sh >%s 2>&1", user != NULL ? "setpriv --reuid=" : "",
	    user != NULL ? user : "", user != NULL ? " --regid=nogroup --clear-groups" : "",
	    port, env != NULL ? env : "", top, r->out);
	if ((r->pid = fork()) == 0) {
		setpgid(0, 0);
		execl("/bin/sh", "sh", "-c", cmd, (char *)NULL);
		_exit(127);
	}
	end = stack_now_ms() + timeout_s * 1000LL;
	while (stack_now_ms() < end) {
		run_output(r, buf, sizeof(buf));
		/* The banner's last line: the lines between it and "sluice is serving on"
		 * (endpoints, the status command) are written by then. */
		if (strstr(buf, "sluice is serving on") != NULL &&
		    strstr(buf, "Ctrl-C stops everything.") != NULL)
			return 1;
		if ((w = waitpid(r->pid, status, WNOHANG)) == r->pid) {
			r->pid = 0;
			return 0;
		}
		sleep_ms(100);
	}
	return -1;
}

static int
run_start(struct runsh *r, int port, const char *env, int timeout_s, int *status)
{
	return run_start_in(r, tree, NULL, port, env, timeout_s, status);
}

/* Stops r (SIGTERM, as Ctrl-C would); returns its exit status, or -1. */
static int
run_stop(struct runsh *r)
{
	long long end = stack_now_ms() + 60000;
	int status;

	if (r->pid <= 0)
		return -1;
	kill(r->pid, SIGTERM);
	while (stack_now_ms() < end) {
		if (waitpid(r->pid, &status, WNOHANG) == r->pid) {
			r->pid = 0;
			return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
		}
		sleep_ms(50);
	}
	kill(-r->pid, SIGKILL);
	waitpid(r->pid, &status, 0);
	r->pid = 0;
	return -1;
}

static long
get_status(int port, const char *path, char *body, size_t len)
{
	struct http_resp r;
	char url[128];
	long st;

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	http_resp_init(&r);
	if (http_do("GET", url, NULL, NULL, 0, 10000, &r) != 0)
		r.status = 0;
	st = r.status;
	if (body != NULL)
		snprintf(body, len, "%s", r.body.data != NULL ? r.body.data : "");
	http_resp_free(&r);
	return st;
}

/* The uids of the children of pid, at most max; returns the count. */
static int
child_uids(long pid, uid_t *uids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	struct stat st;
	char path[300];
	long ppid;
	int n = 0;
	FILE *f;

	if (d == NULL)
		return 0;
	while ((e = readdir(d)) != NULL && n < max) {
		if (e->d_name[0] < '0' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%s/stat", e->d_name);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fscanf(f, "%*d (%*[^)]) %*c %ld", &ppid) != 1)
			ppid = 0;
		fclose(f);
		snprintf(path, sizeof(path), "/proc/%s", e->d_name);
		if (ppid == pid && stat(path, &st) == 0)
			uids[n++] = st.st_uid;
	}
	closedir(d);
	return n;
}

/* The /var/lib/sluice/... directory the script said it serves from, or "". */
static void
stage_dir(const struct runsh *r, char *out, size_t len)
{
	char buf[65536], *p;
	size_t n;

	out[0] = '\0';
	run_output(r, buf, sizeof(buf));
	if ((p = strstr(buf, "serving from ")) == NULL)
		return;
	p += 13;
	n = strcspn(p, " \n");
	if (n < len)
		snprintf(out, len, "%.*s", (int)n, p);
}

static void
test_serves_from_private_tree(void)
{
	struct runsh r, again;
	char body[4096], buf[65536], stage[256];
	uid_t uids[64];
	int status = 0, n, i, rc, lfd, busy;
	struct sockaddr_in sin;
	long master;
	FILE *f;

	rc = run_start(&r, stack_free_port(), NULL, 120, &status);
	CHECK_INT(rc, 1);
	if (rc != 1) {
		run_output(&r, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
		run_stop(&r);
		return;
	}
	CHECK_INT(get_status(r.port, "/health", NULL, 0), 200);
	CHECK_INT(get_status(r.port, "/", NULL, 0), 200);
	CHECK_INT(get_status(r.port, "/ready", body, sizeof(body)), 200);
	CHECK(strstr(body, "sqlite") != NULL);
	stage_dir(&r, stage, sizeof(stage));
	if (geteuid() == 0) {
		/* The tree is out of the workers' reach: served from a reachable copy. */
		CHECK(strncmp(stage, "/var/lib/sluice/", 16) == 0);
		/* nginx's workers (the children of its master) are never root. */
		snprintf(body, sizeof(body), "%s/run/nginx/nginx.pid", stage);
		if ((f = fopen(body, "r")) == NULL || fscanf(f, "%ld", &master) != 1)
			master = 0;
		if (f != NULL)
			fclose(f);
		CHECK(master > 0);
		n = child_uids(master, uids, 64);
		CHECK(n > 0);
		for (i = 0; i < n; i++)
			CHECK(uids[i] != 0);
	} else {
		CHECK_STR(stage, "");
	}

	/* A second run while this one serves: refused, with the reason. */
	rc = run_start(&again, r.port, NULL, 60, &status);
	CHECK_INT(rc, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	run_output(&again, buf, sizeof(buf));
	CHECK(strstr(buf, "already running") != NULL);
	CHECK(strstr(buf, "sluice is serving") == NULL);
	/* A port that something else holds: refused, with the fix. */
	busy = stack_free_port();
	lfd = socket(AF_INET, SOCK_STREAM, 0);
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((unsigned short)busy);
	CHECK(bind(lfd, (struct sockaddr *)&sin, sizeof(sin)) == 0 && listen(lfd, 8) == 0);
	CHECK_INT(run_stop(&r), 0);
	CHECK_INT(get_status(r.port, "/health", NULL, 0), 0);
	rc = run_start(&again, busy, NULL, 60, &status);
	CHECK_INT(rc, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	run_output(&again, buf, sizeof(buf));
	snprintf(body, sizeof(body), "127.0.0.1:%d is in use: make run LISTEN=127.0.0.1:", busy);
	CHECK(strstr(buf, body) != NULL);
	CHECK(strstr(buf, "sluice is serving") == NULL);
	close(lfd);
	if (stage[0] != '\0')
		stack_sh("rm -rf '%s'", stage);
}

/*
 * `sluiced ctl stop`, the command make run prints beside `ctl status`, ends make run as
 * Ctrl-C does: everything stopped, exit status 0, and the reason said.
 */
static void
test_ctl_stop_ends_run(void)
{
	struct runsh r;
	char buf[65536], cmd[PATH_MAX + 64];
	const char *line, *end;
	long long until;
	int rc, status = 0;

	rc = run_start(&r, stack_free_port(), NULL, 120, &status);
	CHECK_INT(rc, 1);
	if (rc != 1)
		return;
	run_output(&r, buf, sizeof(buf));
	/* "status:   BIN/sluiced -r RUN ctl status   (log: ...)" */
	line = strstr(buf, "status:   ");
	end = line != NULL ? strstr(line, " ctl status") : NULL;
	CHECK(end != NULL);
	if (end == NULL) {
		run_stop(&r);
		return;
	}
	line += strlen("status:   ");
	snprintf(cmd, sizeof(cmd), "%.*s ctl stop >/dev/null", (int)(end - line), line);
	CHECK_INT(stack_sh("%s", cmd), 0);
	for (until = stack_now_ms() + 30000; stack_now_ms() < until; sleep_ms(50))
		if (waitpid(r.pid, &status, WNOHANG) == r.pid) {
			r.pid = 0;
			break;
		}
	CHECK_INT(r.pid, 0);
	if (r.pid != 0) {
		run_stop(&r);
		return;
	}
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	run_output(&r, buf, sizeof(buf));
	CHECK(strstr(buf, "asked to stop (ctl stop)") != NULL);
	CHECK(strstr(buf, "make run:") == NULL);
	CHECK_INT(get_status(r.port, "/health", NULL, 0), 0);
}

/*
 * An ordinary user's checkout in its own private directory: everything runs as that
 * user, from the checkout itself (as root, the user nobody plays that part).
 */
static void
test_ordinary_user(void)
{
	struct runsh r;
	char dir[64] = "/tmp/sluice-user-XXXXXX", top[128], buf[65536];
	int status = 0, rc;

	if (geteuid() != 0)
		SKIP("needs root (to run as another, ordinary user)");
	if (mkdtemp(dir) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	snprintf(top, sizeof(top), "%s/checkout", dir);
	CHECK_INT(stack_sh("cp -a %s %s && chown -R nobody %s && chmod 700 %s", tree, top, dir,
	    dir), 0);
	rc = run_start_in(&r, top, "nobody", stack_free_port(), NULL, 120, &status);
	CHECK_INT(rc, 1);
	if (rc == 1) {
		CHECK_INT(get_status(r.port, "/health", NULL, 0), 200);
		CHECK_INT(get_status(r.port, "/", NULL, 0), 200);
		run_output(&r, buf, sizeof(buf));
		CHECK(strstr(buf, "serving from") == NULL);
	} else {
		run_output(&r, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
	}
	CHECK_INT(run_stop(&r), 0);
	stack_sh("rm -rf %s", dir);
}

static void
test_failed_pool(void)
{
	struct runsh r;
	char conf[256], buf[65536], stage[256];
	long long t0 = stack_now_ms();
	int status = 0, rc;
	FILE *f;

	snprintf(conf, sizeof(conf), "%s/crashy.conf", tree);
	if ((f = fopen(conf, "w")) == NULL) {
		CHECK(!"crashy.conf written");
		return;
	}
	fprintf(f, "health =/health workers=2\ncrashy =/crashy workers=2 binary=/bin/false\n");
	fclose(f);
	chmod(conf, 0644);
	snprintf(buf, sizeof(buf), "SLUICE_CONF=%s", conf);
	rc = run_start(&r, stack_free_port(), buf, 60, &status);
	CHECK_INT(rc, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) != 0);
	printf("  make run gave up after %lld ms\n", stack_now_ms() - t0);
	run_output(&r, buf, sizeof(buf));
	CHECK(strstr(buf, "pool crashy failed") != NULL);
	CHECK(strstr(buf, "sluice is serving") == NULL);
	stage_dir(&r, stage, sizeof(stage));
	if (stage[0] != '\0')
		stack_sh("rm -rf '%s'", stage);
}

static void
test_apache(void)
{
	struct runsh r;
	char buf[65536], stage[256];
	int status = 0, rc;

	rc = run_start(&r, stack_free_port(), "SERVER=apache", 120, &status);
	CHECK_INT(rc, 1);
	if (rc == 1) {
		CHECK_INT(get_status(r.port, "/health", NULL, 0), 200);
		CHECK_INT(get_status(r.port, "/", NULL, 0), 200);
	} else {
		run_output(&r, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
	}
	stage_dir(&r, stage, sizeof(stage));
	CHECK_INT(run_stop(&r), 0);
	if (stage[0] != '\0')
		stack_sh("rm -rf '%s'", stage);
}

static void
test_postgresql(void)
{
	struct runsh r;
	char body[4096], buf[65536], stage[256], pid[400];
	struct stat st;
	int status = 0, rc;

	if (stack_sh("ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1") != 0) {
		CHECK(!"PostgreSQL installed (make deps-test)");
		return;
	}
	rc = run_start(&r, stack_free_port(), "DB=postgresql", 300, &status);
	CHECK_INT(rc, 1);
	stage_dir(&r, stage, sizeof(stage));
	if (rc == 1) {
		CHECK_INT(get_status(r.port, "/ready", body, sizeof(body)), 200);
		CHECK(strstr(body, "postgresql") != NULL);
		CHECK_INT(get_status(r.port, "/", NULL, 0), 200);
		CHECK_INT(get_status(r.port, "/rest/v1/artist?limit=2", body, sizeof(body)), 200);
		CHECK(body[0] == '[');
	} else {
		run_output(&r, buf, sizeof(buf));
		fprintf(stderr, "%s\n", buf);
	}
	CHECK_INT(run_stop(&r), 0);
	/* The cluster stopped with the stack. */
	snprintf(pid, sizeof(pid), "%s/data/pg/postmaster.pid", stage[0] ? stage : tree);
	CHECK(stat(pid, &st) == -1 && errno == ENOENT);
	snprintf(pid, sizeof(pid), "%s/data/pg/PG_VERSION", stage[0] ? stage : tree);
	CHECK(stat(pid, &st) == 0);
	if (stage[0] != '\0')
		stack_sh("rm -rf '%s'", stage);
}

/* The integration stack from the private tree: binaries, template, a binary= file. */
static void
test_stack_from_private_tree(void)
{
	struct stack s;
	char conf[1024], old[PATH_MAX], bin[300], db[64] = "/tmp/sluice-chat-XXXXXX";
	const char *o = getenv("SLUICE_BIN");

	snprintf(old, sizeof(old), "%s", o != NULL ? o : "bin");
	snprintf(bin, sizeof(bin), "%s/bin", tree);
	if (mkdtemp(db) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	chmod(db, 0755);
	setenv("SLUICE_BIN", bin, 1);
	stack_sh("build/%s/sql/chat-seed -q -p tiny -S sql/chat sqlite:%s/chat.db",
	    strstr(old, "san") != NULL ? "san" : "rel", db);
	snprintf(conf, sizeof(conf), "db chat sqlite:%s/chat.db\n"
	    "health =/health workers=1\n"
	    "other =/other workers=1 binary=%s/health\n"
	    "chat_page =/ workers=1 db=chat\n", db, bin);
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started from the private tree");
		setenv("SLUICE_BIN", old, 1);
		stack_sh("rm -rf %s", db);
		return;
	}
	CHECK(stack_wait_pool(&s, "chat_page", 5000) == 0);
	CHECK_INT(get_status(s.port, "/health", NULL, 0), 200);
	CHECK_INT(get_status(s.port, "/other", NULL, 0), 200);
	CHECK_INT(get_status(s.port, "/", NULL, 0), 200);
	CHECK_INT(stack_pool_value(&s, "chat_page", "crashes"), 0);
	if (geteuid() == 0)
		CHECK(strncmp(s.bin, s.dir, strlen(s.dir)) == 0);
	stack_stop(&s);
	setenv("SLUICE_BIN", old, 1);
	stack_sh("rm -rf %s", db);
}

/* As root, `sluiced nginx` names an unprivileged user even for a root-owned RUNDIR. */
static void
test_nginx_user_never_root(void)
{
	char dir[64] = "/tmp/sluice-nguser-XXXXXX";
	int rc;

	if (geteuid() != 0)
		SKIP("needs root (nginx's user is only chosen as root)");
	if (mkdtemp(dir) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	stack_sh("mkdir -p %s/run && printf 'health =/health\\n' > %s/e.conf", dir, dir);
	CHECK_INT(stack_sh("%s/sluiced -c %s/e.conf nginx tuned -r %s/run > %s/n.conf", bin_abs,
	    dir, dir, dir), 0);
	CHECK_INT(stack_sh("grep -q '^user root' %s/n.conf", dir), 1);
	CHECK_INT(stack_sh("grep -Eq '^user (sluice|nobody) ' %s/n.conf", dir), 0);
	/* Named explicitly, root is refused. */
	rc = stack_sh("%s/sluiced -c %s/e.conf nginx tuned -r %s/run -u root >/dev/null 2>&1",
	    bin_abs, dir, dir);
	CHECK(rc != 0);
	CHECK_INT(stack_sh("%s/sluiced -c %s/e.conf nginx tuned -r %s/run -u www-data:www-data "
	    "| grep -q '^user www-data www-data;'", bin_abs, dir, dir), 0);
	stack_sh("rm -rf %s", dir);
}

/* What each deps target would install (make -n: nothing runs). */
static void
test_deps_split(void)
{
	static const char *const not_for_run[] = { "apache2", "clang-tidy", "cppcheck", "wrk",
	    "gnuplot", "postgresql" };
	static const char *const for_test[] = { "apache2", "clang-tidy", "cppcheck", "wrk",
	    "postgresql", "nginx-light", "libcurl4-openssl-dev" };
	size_t i;

	for (i = 0; i < sizeof(not_for_run) / sizeof(not_for_run[0]); i++)
		CHECK_INT(stack_sh("make -s -n deps | grep deps.sh | grep -qw -- '%s'",
		    not_for_run[i]), 1);
	CHECK_INT(stack_sh("make -s -n deps | grep deps.sh | grep -qw nginx-light"), 0);
	CHECK_INT(stack_sh("make -s -n deps SERVER=apache | grep deps.sh | grep -qw apache2"), 0);
	CHECK_INT(stack_sh("make -s -n deps DB=postgresql | grep deps.sh | grep -qw postgresql"),
	    0);
	for (i = 0; i < sizeof(for_test) / sizeof(for_test[0]); i++)
		CHECK_INT(stack_sh("make -s -n deps-test | grep deps.sh | grep -qw -- '%s'",
		    for_test[i]), 0);
	CHECK_INT(stack_sh("make -s -n deps-bench | grep deps.sh | grep -qw gnuplot-nox"), 0);
	CHECK_INT(stack_sh("grep -q 'make deps-test' .ci/run"), 0);
}

/* The units parse and name binaries that exist (the checkout's, in place of /opt/sluice). */
static void
test_systemd_units(void)
{
	char dir[64] = "/tmp/sluice-units-XXXXXX";

	CHECK_INT(stack_sh("grep -q '^ExecStart=/opt/sluice/bin/sluiced ' conf/sluiced.service"),
	    0);
	CHECK_INT(stack_sh("grep -q '^ExecStart=/usr/sbin/nginx ' conf/sluice-nginx.service"), 0);
	if (stack_sh("command -v systemd-analyze >/dev/null") != 0)
		SKIP("systemd-analyze is not installed: the units are not verified");
	if (mkdtemp(dir) == NULL) {
		CHECK(!"mkdtemp");
		return;
	}
	CHECK_INT(stack_sh("sed 's#/opt/sluice/bin#%s#g' conf/sluiced.service > %s/sluiced.service "
	    "&& cp conf/sluice-nginx.service %s/", bin_abs, dir, dir), 0);
	CHECK_INT(stack_sh("systemd-analyze verify %s/sluiced.service %s/sluice-nginx.service",
	    dir, dir), 0);
	/* A broken unit does fail the check. */
	CHECK_INT(stack_sh("printf '[Service]\\nExecStart=relative\\n' > %s/bad.service && "
	    "systemd-analyze verify %s/bad.service >/dev/null 2>&1", dir, dir) != 0, 1);
	stack_sh("rm -rf %s", dir);
}

int
main(void)
{
	const char *b = getenv("SLUICE_BIN"), *t = getenv("SLUICE_TESTS");
	char o[PATH_MAX];

	signal(SIGPIPE, SIG_IGN);
	if (realpath(b != NULL ? b : "bin", bin_abs) == NULL) {
		fprintf(stderr, "test_run: no %s\n", b != NULL ? b : "bin");
		return 1;
	}
	/* build/rel or build/san: the seeders are in its sql/. */
	snprintf(o, sizeof(o), "%s", t != NULL ? t : "build/rel/tests");
	if (strrchr(o, '/') != NULL)
		*strrchr(o, '/') = '\0';
	snprintf(priv, sizeof(priv), "/tmp/sluice-home-XXXXXX");
	if (mkdtemp(priv) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	snprintf(tree, sizeof(tree), "%s/checkout", priv);
	if (stack_sh("mkdir -p %s/build/rel && cp -a conf sql supervisor handlers %s/ && "
	    "cp -a %s %s/bin && cp -a %s/sql %s/build/rel/sql", tree, tree, bin_abs, tree, o,
	    tree) != 0) {
		fprintf(stderr, "test_run: cannot copy the tree into %s\n", tree);
		stack_sh("rm -rf %s", priv);
		return 1;
	}
	RUN(test_deps_split);
	RUN(test_nginx_user_never_root);
	RUN(test_systemd_units);
	RUN(test_serves_from_private_tree);
	RUN(test_ordinary_user);
	RUN(test_failed_pool);
	RUN(test_ctl_stop_ends_run);
	RUN(test_apache);
	RUN(test_postgresql);
	RUN(test_stack_from_private_tree);
	stack_sh("rm -rf %s", priv);
	return harness_done();
}
