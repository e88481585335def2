/* stack.c: see stack.h. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <limits.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "http.h"
#include "stack.h"
#include "str.h"

#define STACK_MAX	8

static struct stack *live[STACK_MAX];
static int atexit_set;

long long
stack_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
stack_sleep_ms(long ms)
{
	struct timespec ts = { ms / 1000, (ms % 1000) * 1000000L };

	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		continue;
}

int
stack_sh(const char *fmt, ...)
{
	char cmd[4096];
	va_list ap;
	int n, rc;

	va_start(ap, fmt);
	n = vsnprintf(cmd, sizeof(cmd), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(cmd))
		return -1;
	rc = system(cmd);
	if (rc < 0 || !WIFEXITED(rc))
		return -1;
	return WEXITSTATUS(rc);
}

const char *
stack_bin(void)
{
	static char path[PATH_MAX];
	const char *b;

	if (path[0] != '\0')
		return path;
	if ((b = getenv("SLUICE_BIN")) == NULL)
		b = "bin";
	if (realpath(b, path) == NULL)
		snprintf(path, sizeof(path), "%s", b);
	return path;
}

/* Starts argv with stdout and stderr appended to log; returns the pid or -1. */
static pid_t
stack_spawn(char *const argv[], const char *log)
{
	pid_t pid = fork();
	int fd;

	if (pid != 0)
		return pid;
	if ((fd = open(log, O_WRONLY | O_CREAT | O_APPEND, 0644)) >= 0) {
		dup2(fd, 1);
		dup2(fd, 2);
		close(fd);
	}
	if ((fd = open("/dev/null", O_RDONLY)) >= 0) {
		dup2(fd, 0);
		close(fd);
	}
	execv(argv[0], argv);
	_exit(127);
}

int
stack_reap(pid_t pid, int ms)
{
	long long end = stack_now_ms() + ms;
	int status;

	while (stack_now_ms() < end) {
		pid_t r = waitpid(pid, &status, WNOHANG);

		if (r == pid)
			return status;
		if (r < 0)
			return -1;
		stack_sleep_ms(10);
	}
	kill(pid, SIGKILL);
	return waitpid(pid, &status, 0) == pid ? status : -1;
}

int
stack_free_port(void)
{
	struct sockaddr_in sin;
	socklen_t len = sizeof(sin);
	int fd, port = -1;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return -1;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0 &&
	    getsockname(fd, (struct sockaddr *)&sin, &len) == 0)
		port = ntohs(sin.sin_port);
	close(fd);
	return port;
}

static int
stack_port_open(int port)
{
	struct sockaddr_in sin;
	int fd, ok;

	if ((fd = socket(AF_INET, SOCK_STREAM, 0)) < 0)
		return 0;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	sin.sin_port = htons((unsigned short)port);
	ok = connect(fd, (struct sockaddr *)&sin, sizeof(sin)) == 0;
	close(fd);
	return ok;
}

static void
stack_atexit(void)
{
	int i;

	for (i = 0; i < STACK_MAX; i++)
		if (live[i] != NULL)
			stack_stop(live[i]);
}

static void
stack_dump_logs(struct stack *s)
{
	stack_sh("tail -n 30 %s/sluiced.log %s/logs/error.log %s/logs/stderr.log 1>&2 "
	    "2>/dev/null", s->dir, s->prefix, s->prefix);
}

int
stack_ctl(struct stack *s, struct buf *out, const char *args)
{
	char cmd[PATH_MAX + 1024], line[512];
	FILE *p;
	int rc, n;

	n = snprintf(cmd, sizeof(cmd), "%s/sluiced -r %s ctl %s 2>&1", stack_bin(), s->run,
	    args);
	if (n < 0 || (size_t)n >= sizeof(cmd) || (p = popen(cmd, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), p) != NULL)
		if (out != NULL)
			buf_puts(out, line);
	rc = pclose(p);
	return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

int
stack_pool_field(struct stack *s, const char *name, const char *key, char *val, size_t len)
{
	struct buf out;
	char pat[96];
	const char *line, *p, *end;
	int rc = -1;

	buf_init(&out, 0);
	if (stack_ctl(s, &out, "status") != 0 || out.data == NULL)
		goto out;
	for (line = out.data; *line != '\0'; line = end + (*end != '\0')) {
		if ((end = strchr(line, '\n')) == NULL)
			end = line + strlen(line);
		if (strncmp(line, name, strlen(name)) != 0 || line[strlen(name)] != ' ')
			continue;
		snprintf(pat, sizeof(pat), " %s=", key);
		if ((p = strstr(line, pat)) == NULL || p > end)
			break;
		p += strlen(pat);
		size_t n = strcspn(p, " \n");
		if (n >= len)
			break;
		memcpy(val, p, n);
		val[n] = '\0';
		rc = 0;
		break;
	}
out:
	buf_free(&out);
	return rc;
}

long
stack_pool_value(struct stack *s, const char *name, const char *key)
{
	char v[64];

	if (stack_pool_field(s, name, key, v, sizeof(v)) < 0)
		return -1;
	return strtol(v, NULL, 10);
}

int
stack_pool_state(struct stack *s, const char *name, char *state, size_t len)
{
	return stack_pool_field(s, name, "state", state, len);
}

int
stack_wait_pool(struct stack *s, const char *name, int ms)
{
	long long end = stack_now_ms() + ms;
	char v[64], *slash;
	int64_t have, want;

	while (stack_now_ms() < end) {
		if (stack_pool_field(s, name, "workers", v, sizeof(v)) == 0 &&
		    (slash = strchr(v, '/')) != NULL &&
		    str_to_int(v, (size_t)(slash - v), 1, INT32_MAX, &have) == 0 &&
		    str_to_int(slash + 1, strlen(slash + 1), 1, INT32_MAX, &want) == 0 &&
		    have == want)
			return 0;
		stack_sleep_ms(20);
	}
	return -1;
}

long
stack_proc_kb(pid_t pid, const char *key)
{
	char path[64], line[256];
	size_t n = strlen(key);
	long v = -1;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/status", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strncmp(line, key, n) == 0) {
			v = strtol(line + n, NULL, 10);
			break;
		}
	fclose(f);
	return v;
}

int
stack_under_asan(pid_t pid)
{
	char path[64], line[512];
	int found = 0;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/maps", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return 0;
	while (!found && fgets(line, sizeof(line), f) != NULL)
		found = strstr(line, "libasan") != NULL;
	fclose(f);
	return found;
}

int
stack_worker_pids(struct stack *s, const char *name, pid_t *pids, int max)
{
	DIR *d = opendir("/proc");
	struct dirent *e;
	char path[64], buf[8192], want[64];
	int n = 0;

	if (d == NULL)
		return 0;
	snprintf(want, sizeof(want), "SLUICE_NAME=%s", name);
	while ((e = readdir(d)) != NULL && n < max) {
		long pid = strtol(e->d_name, NULL, 10), ppid = 0;
		FILE *f;
		size_t len, off;

		if (pid <= 0)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/stat", pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		if (fscanf(f, "%*d (%*[^)]) %*c %ld", &ppid) != 1)
			ppid = 0;
		fclose(f);
		if (ppid != s->sluiced)
			continue;
		snprintf(path, sizeof(path), "/proc/%ld/environ", pid);
		if ((f = fopen(path, "r")) == NULL)
			continue;
		len = fread(buf, 1, sizeof(buf) - 1, f);
		fclose(f);
		buf[len] = '\0';
		for (off = 0; off < len; off += strlen(buf + off) + 1)
			if (strcmp(buf + off, want) == 0) {
				pids[n++] = (pid_t)pid;
				break;
			}
	}
	closedir(d);
	return n;
}

int
stack_kill_workers(struct stack *s, const char *name, int n, int every_ms)
{
	pid_t pids[16];
	int k, alive, kills = 0;

	for (k = 0; k < n; k++) {
		stack_sleep_ms(every_ms);
		alive = stack_worker_pids(s, name, pids, 16);
		if (alive > 0 && kill(pids[k % alive], SIGKILL) == 0)
			kills++;
	}
	return kills;
}

int
stack_start(struct stack *s, const char *endpoints, const char *profile, int nginx_workers,
    const char *extra_nginx_args)
{
	return stack_start_server(s, endpoints, "nginx", profile, nginx_workers,
	    extra_nginx_args);
}

/* Starts sluiced on s->conf and waits for its control socket. */
static int
stack_start_sluiced(struct stack *s)
{
	char log[400], sluiced_path[PATH_MAX + 16];
	char *argv[10];
	long long end;
	int i = 0;

	snprintf(log, sizeof(log), "%s/sluiced.log", s->dir);
	if (getenv("SLUICE_TEST_SLUICED") != NULL) {
		if (snprintf(sluiced_path, sizeof(sluiced_path), "%s",
		    getenv("SLUICE_TEST_SLUICED")) >= (int)sizeof(sluiced_path))
			return -1;
	} else if (snprintf(sluiced_path, sizeof(sluiced_path), "%s/sluiced", stack_bin()) >=
	    (int)sizeof(sluiced_path)) {
		return -1;
	}
	argv[i++] = sluiced_path;
	argv[i++] = (char *)(unsigned long)"-c";
	argv[i++] = s->conf;
	argv[i++] = (char *)(unsigned long)"-r";
	argv[i++] = s->run;
	argv[i++] = (char *)(unsigned long)"-b";
	argv[i++] = s->bin;
	argv[i++] = (char *)(unsigned long)"-g";
	argv[i++] = (char *)(unsigned long)"3000";
	argv[i] = NULL;
	if ((s->sluiced = stack_spawn(argv, log)) < 0)
		return -1;
	end = stack_now_ms() + 5000;
	while (stack_ctl(s, NULL, "status") != 0) {
		if (stack_now_ms() > end || waitpid(s->sluiced, NULL, WNOHANG) != 0) {
			fprintf(stderr, "stack: sluiced did not come up\n");
			return -1;
		}
		stack_sleep_ms(20);
	}
	return 0;
}

int
stack_restart_sluiced(struct stack *s)
{
	return stack_start_sluiced(s);
}

/*
 * Apache: the configuration from "sluiced apache", then apache2 in the foreground.  As
 * root, Apache's children cannot run as root: RUNDIR goes to www-data, the generator then
 * names that user and sluiced gives it the sockets.  Sanitizer settings reach the binaries
 * that Apache starts itself (cgi, fcgid), whose environment Apache otherwise clears.
 */
static int
stack_start_apache(struct stack *s, const char *profile, int children, const char *extra)
{
	static const char *const san[] = { "ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS" };
	char conf[400], log[400];
	char *argv[6];
	const char *v;
	long long end;
	size_t k;
	FILE *f;
	int i = 0;

	if (stack_sh("cd %s && %s/sluiced -c %s -r %s -b %s apache %s -p %s -l 127.0.0.1:%d "
	    "-w %d %s -o %s/apache2.conf", s->dir, stack_bin(), s->conf, s->run, s->bin,
	    profile, s->prefix, s->port, children, extra ? extra : "", s->prefix) != 0) {
		fprintf(stderr, "stack: cannot generate the Apache configuration\n");
		return -1;
	}
	snprintf(conf, sizeof(conf), "%s/apache2.conf", s->prefix);
	if ((f = fopen(conf, "a")) == NULL)
		return -1;
	for (k = 0; k < sizeof(san) / sizeof(san[0]); k++) {
		if ((v = getenv(san[k])) == NULL || strchr(v, '"') != NULL)
			continue;
		if (strcmp(profile, "cgi") == 0)
			fprintf(f, "PassEnv %s\n", san[k]);
		else if (strcmp(profile, "fcgid") == 0)
			fprintf(f, "FcgidInitialEnv %s \"%s\"\n", san[k], v);
	}
	fclose(f);
	snprintf(log, sizeof(log), "%s/logs/stderr.log", s->prefix);
	argv[i++] = (char *)(unsigned long)"/usr/sbin/apache2";
	argv[i++] = (char *)(unsigned long)"-f";
	argv[i++] = conf;
	argv[i++] = (char *)(unsigned long)"-DFOREGROUND";
	argv[i] = NULL;
	if ((s->apache = stack_spawn(argv, log)) < 0)
		return -1;
	end = stack_now_ms() + 10000;
	while (!stack_port_open(s->port)) {
		if (stack_now_ms() > end || waitpid(s->apache, NULL, WNOHANG) != 0) {
			s->apache = 0;
			fprintf(stderr, "stack: apache did not come up\n");
			stack_sh("cat %s 1>&2", log);
			return -1;
		}
		stack_sleep_ms(10);
	}
	return 0;
}

static int
stack_start_nginx(struct stack *s, const char *profile, int nginx_workers, const char *extra)
{
	char nginx_conf[400], errlog[400], log[400];
	char *nginx_argv[8];
	long long end;
	int i = 0;

	if (stack_sh("mkdir -p %s/logs && %s/sluiced -c %s nginx %s -r %s -p %s -l 127.0.0.1:%d "
	    "-w %d %s -o %s/nginx.conf", s->prefix, stack_bin(), s->conf, profile, s->run,
	    s->prefix, s->port, nginx_workers, extra ? extra : "", s->prefix) != 0) {
		fprintf(stderr, "stack: cannot generate the nginx configuration\n");
		return -1;
	}
	snprintf(nginx_conf, sizeof(nginx_conf), "%s/nginx.conf", s->prefix);
	snprintf(errlog, sizeof(errlog), "%s/logs/error.log", s->prefix);
	snprintf(log, sizeof(log), "%s/logs/stderr.log", s->prefix);
	nginx_argv[i++] = (char *)(unsigned long)"/usr/sbin/nginx";
	nginx_argv[i++] = (char *)(unsigned long)"-p";
	nginx_argv[i++] = s->prefix;
	nginx_argv[i++] = (char *)(unsigned long)"-c";
	nginx_argv[i++] = nginx_conf;
	nginx_argv[i++] = (char *)(unsigned long)"-e";
	nginx_argv[i++] = errlog;
	nginx_argv[i] = NULL;
	if ((s->nginx = stack_spawn(nginx_argv, log)) < 0)
		return -1;
	end = stack_now_ms() + 5000;
	while (!stack_port_open(s->port)) {
		if (stack_now_ms() > end || waitpid(s->nginx, NULL, WNOHANG) != 0) {
			s->nginx = 0;
			fprintf(stderr, "stack: nginx did not come up\n");
			stack_sh("cat %s 1>&2", log);
			return -1;
		}
		stack_sleep_ms(10);
	}
	return 0;
}

/* 1 when user (uid, gid) can use path with access mode (R_OK, X_OK): a child checks. */
static int
stack_reaches(uid_t uid, gid_t gid, const char *path, int mode)
{
	pid_t pid;
	int status;

	if ((pid = fork()) == -1)
		return 0;
	if (pid == 0) {
		if (setgroups(0, NULL) == -1 || setgid(gid) == -1 || setuid(uid) == -1)
			_exit(2);
		_exit(access(path, mode) == 0 ? 0 : 1);
	}
	if (waitpid(pid, &status, 0) != pid)
		return 0;
	return WIFEXITED(status) && WEXITSTATUS(status) == 0;
}

/* The user the stack's workers run as when it starts as root, or NULL (not root). */
static struct passwd *
stack_run_user(void)
{
	struct passwd *pw;

	if (geteuid() != 0)
		return NULL;
	if ((pw = getpwnam("sluice")) == NULL)
		pw = getpwnam("nobody");
	return pw;
}

int
stack_reachable(const struct stack *s, const char *path, char *out, size_t len)
{
	struct passwd *pw = stack_run_user();
	int n;

	if (pw == NULL || stack_reaches(pw->pw_uid, pw->pw_gid, path, X_OK) ||
	    strchr(path, '\'') != NULL) {
		n = snprintf(out, len, "%s", path);
		return n < 0 || (size_t)n >= len ? -1 : 0;
	}
	/* A copy this stack made already (stack_start() stages every binary= file) is kept:
	 * its workers may be running it, and a copy over a running binary fails (ETXTBSY). */
	n = snprintf(out, len, "%s/extra%s", s->dir, path);
	if (n < 0 || (size_t)n >= len ||
	    stack_sh("mkdir -p \"$(dirname '%s')\" && { [ -e '%s' ] || cp -a '%s' '%s'; } && "
	    "chmod -R a+rX '%s/extra'", out, out, path, out, s->dir) != 0)
		return -1;
	return 0;
}

/*
 * As root, the workers run as sluiced's run user (sluice, else nobody) and nginx's or
 * Apache's as that user or www-data: a tree under a private directory (root's home is
 * 0700) is out of their reach.  Then the binaries (SLUICE_BIN), the templates next to them
 * and every binary= file named in the endpoint list are copied into the stack's directory,
 * and s->bin and the endpoint list name the copies.  Returns 0, or -1 when copying fails.
 */
static int
stack_stage(struct stack *s, const char *endpoints, char *out, size_t outlen)
{
	static const char *const tmpl[] = { "/../handlers", "/../../../handlers" };
	struct passwd *pw;
	const char *p, *end;
	char path[PATH_MAX + 64], copy[PATH_MAX + 64 + 512];
	size_t used = 0, k;
	int n, staged = 0;

	n = snprintf(s->bin, sizeof(s->bin), "%s", stack_bin());
	if (n < 0 || (size_t)n >= sizeof(s->bin))
		return -1;
	n = snprintf(out, outlen, "%s", endpoints);
	if (n < 0 || (size_t)n >= outlen)
		return -1;
	if ((pw = stack_run_user()) == NULL)
		return 0;
	snprintf(path, sizeof(path), "%s/health", stack_bin());
	if (!stack_reaches(pw->pw_uid, pw->pw_gid, path, X_OK)) {
		n = snprintf(s->bin, sizeof(s->bin), "%s/bin", s->dir);
		if (n < 0 || (size_t)n >= sizeof(s->bin) || stack_sh("cp -a '%s' '%s' && mkdir -p '%s/handlers'", stack_bin(), s->bin,
		    s->dir) != 0)
			return -1;
		for (k = 0; k < sizeof(tmpl) / sizeof(tmpl[0]); k++)
			stack_sh("cp '%s%s'/*.html '%s/handlers/' 2>/dev/null", stack_bin(), tmpl[k],
			    s->dir);
		staged = 1;
	}
	/* binary=/absolute/path: a copy when out of reach. */
	out[0] = '\0';
	for (p = endpoints; *p != '\0'; p = end) {
		end = strstr(p, "binary=/");
		if (end == NULL)
			end = p + strlen(p);
		else
			end += 7;
		n = snprintf(out + used, outlen - used, "%.*s", (int)(end - p), p);
		if (n < 0 || (size_t)n >= outlen - used)
			return -1;
		used += (size_t)n;
		if (*end != '/')
			continue;
		k = strcspn(end, " \t\n");
		if (k >= PATH_MAX)
			return -1;
		snprintf(path, sizeof(path), "%.*s", (int)k, end);
		if (stack_reachable(s, path, copy, sizeof(copy)) == -1)
			return -1;
		staged |= strcmp(path, copy) != 0;
		n = snprintf(out + used, outlen - used, "%s", copy);
		if (n < 0 || (size_t)n >= outlen - used)
			return -1;
		used += (size_t)n;
		end += k;
	}
	if (staged)
		stack_sh("chmod -R a+rX '%s'", s->dir);
	return 0;
}

int
stack_start_server(struct stack *s, const char *endpoints, const char *server,
    const char *profile, int workers, const char *extra_args)
{
	int apache = strcmp(server, "apache") == 0, with_sluiced = 1;
	char *staged;
	FILE *f;
	int i;

	memset(s, 0, sizeof(*s));
	s->profile = profile;
	s->server = apache ? "apache" : "nginx";
	s->nginx_workers = workers;
	if (!apache && strcmp(server, "nginx") != 0) {
		fprintf(stderr, "stack: unknown server '%s'\n", server);
		return -1;
	}
	if (apache && (strcmp(profile, "cgi") == 0 || strcmp(profile, "fcgid") == 0))
		with_sluiced = 0;
	snprintf(s->dir, sizeof(s->dir), "/tmp/sluice-test-XXXXXX");
	if (mkdtemp(s->dir) == NULL)
		return -1;
	/* The proxy's workers may run as another user when the tests run as root. */
	chmod(s->dir, 0755);
	snprintf(s->run, sizeof(s->run), "%s/run", s->dir);
	snprintf(s->conf, sizeof(s->conf), "%s/endpoints.conf", s->dir);
	snprintf(s->prefix, sizeof(s->prefix), "%s/%s", s->dir, s->server);
	if ((s->port = stack_free_port()) < 0)
		return -1;
	snprintf(s->base, sizeof(s->base), "http://127.0.0.1:%d", s->port);
	if ((staged = malloc(strlen(endpoints) * 2 + 65536)) == NULL)
		return -1;
	if (stack_stage(s, endpoints, staged, strlen(endpoints) * 2 + 65536) == -1 ||
	    (f = fopen(s->conf, "w")) == NULL) {
		fprintf(stderr, "stack: cannot stage the binaries into %s\n", s->dir);
		free(staged);
		return -1;
	}
	fprintf(f, "set listen 127.0.0.1:%d\n%s\n", s->port, staged);
	free(staged);
	fclose(f);
	if (!atexit_set) {
		atexit(stack_atexit);
		atexit_set = 1;
	}
	for (i = 0; i < STACK_MAX && live[i] != NULL; i++)
		continue;
	if (i < STACK_MAX)
		live[i] = s;

	if (apache && geteuid() == 0 &&
	    stack_sh("mkdir -p %s && chown www-data:www-data %s", s->run, s->run) != 0) {
		fprintf(stderr, "stack: cannot give %s to www-data\n", s->run);
		goto fail;
	}
	if (with_sluiced && stack_start_sluiced(s) < 0)
		goto fail;
	if (apache ? stack_start_apache(s, profile, workers, extra_args) < 0 :
	    stack_start_nginx(s, profile, workers, extra_args) < 0)
		goto fail;
	return 0;
fail:
	stack_dump_logs(s);
	stack_stop(s);
	return -1;
}

void
stack_stop(struct stack *s)
{
	int i;

	if (s->nginx > 0) {
		kill(s->nginx, SIGTERM);
		stack_reap(s->nginx, 5000);
		s->nginx = 0;
	}
	/* Apache's parent stops its children (and mod_fcgid's processes) on SIGTERM. */
	if (s->apache > 0) {
		kill(s->apache, SIGTERM);
		stack_reap(s->apache, 10000);
		s->apache = 0;
	}
	if (s->sluiced > 0) {
		kill(s->sluiced, SIGTERM);
		stack_reap(s->sluiced, 10000);
		s->sluiced = 0;
	}
	if (s->dir[0] != '\0' && getenv("SLUICE_KEEP_TMP") == NULL)
		stack_sh("rm -rf '%s'", s->dir);
	s->dir[0] = '\0';
	for (i = 0; i < STACK_MAX; i++)
		if (live[i] == s)
			live[i] = NULL;
}

int
stack_pinning_workload(struct stack *s, double limit, long timeout_ms, int stop_early)
{
	struct http_burst b;
	struct http_resp r;
	char url[128];
	int bad = 0, i, round;

	snprintf(url, sizeof(url), "%s/health", s->base);
	http_resp_init(&r);
	for (round = 0; round < 2; round++) {
		http_burst(url, 500, 200, timeout_ms, &b);
		bad += b.other + b.failed;
		if (b.max_seconds > limit)
			bad++;
		printf("  burst %d: ok %d other %d failed %d max %.3f s\n", round, b.ok,
		    b.other, b.failed, b.max_seconds);
		if (round == 1 || (stop_early && bad > 0))
			break;
		for (i = 0; i < 200 && !(stop_early && bad > 0); i++)
			if (http_do("GET", url, NULL, NULL, 0, timeout_ms, &r) < 0 ||
			    r.status != 200 || r.seconds > limit)
				bad++;
		printf("  sequential: %d bad so far\n", bad);
	}
	http_resp_free(&r);
	return bad;
}

const char *
stack_seeder(const char *name)
{
	static char path[256];
	const char *bin = getenv("SLUICE_BIN");

	(void)snprintf(path, sizeof(path), "build/%s/sql/%s",
	    bin != NULL && strstr(bin, "san") != NULL ? "san" : "rel", name);
	return path;
}

int
stack_log_count(const struct stack *s, const char *needle)
{
	char path[400], line[4096];
	FILE *f;
	int n = 0;

	snprintf(path, sizeof(path), "%s/sluiced.log", s->dir);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL)
		if (strstr(line, needle) != NULL)
			n++;
	fclose(f);
	return n;
}

int
stack_self_dir(char *out, size_t len)
{
	char *slash;
	ssize_t n;

	if (len == 0 || (n = readlink("/proc/self/exe", out, len - 1)) <= 0 ||
	    (size_t)n >= len - 1)
		return -1;
	out[n] = '\0';
	if ((slash = strrchr(out, '/')) != NULL)
		*slash = '\0';
	return 0;
}
