/*
 * reload.c: the proxy's side of `sluiced ctl reload` (without a NAME): an endpoint added
 * or removed in the endpoint list reaches nginx or Apache with that one command.
 *
 * The record.  `sluiced nginx|apache ... -o FILE` writes, once FILE is in place,
 * RUNDIR/proxy.args (mode 0644): the server, its prefix and FILE as absolute paths, the
 * directory the generator ran in and its words and options as given, less -o FILE.  A
 * generator that prints to stdout records nothing: the proxy's file is then the
 * operator's, and `ctl reload` re-reads the list in sluiced alone.
 *
 * `ctl reload`, in this order, so that a failure at any step leaves what runs as it was:
 *   1. the generator is run again from the record, in its directory, its output into
 *      FILE.next: a list it refuses stops here (its reason on stderr);
 *   2. the proxy tests FILE.next (nginx -t -q -p PREFIX -c FILE.next, apache2 -t -f ...);
 *   3. sluiced re-reads the list ("reread hold" on the control socket, reread.c): new
 *      pools bound, changed ones reloaded, unchanged ones untouched, the removed ones
 *      still serving, or, when anything fails, nothing changed and the reason answered;
 *      then the new pools must come up ("up", at most RELOAD_UP_MS): one that fails
 *      (its workers die at start) stops the command here, the proxy not reloaded;
 *   4. FILE.next replaces FILE (rename) and the proxy reloads gracefully with the same
 *      prefix and file: nginx -s reload (its master starts new workers on the new file,
 *      the old ones finish their requests), apache2 -k graceful;
 *   5. once the proxy's workers of the old file have left (at most RELOAD_TURNOVER_MS),
 *      "prune": sluiced stops the removed pools, whose sockets the proxy no longer
 *      sends to.
 * FILE.next is removed when a step before 4 fails.  The proxy's programs are looked up in
 * PATH (nginx, apache2), and run with the caller's rights: the master of a proxy started
 * as root takes its signal from root only, which is why this runs in the client and not
 * in sluiced, which has dropped root.  Without a record, "reread" does 3 and 5 at once.
 *
 * The record is trusted only when the caller's user (or root) owns it and no one else can
 * write it: RUNDIR belongs to sluiced's run user, who must not be able to choose what
 * root runs.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "sluiced.h"

#define RELOAD_ARGS_MAX	48
#define RELOAD_TURNOVER_MS	5000
#define RELOAD_UP_MS		10000

/* What RUNDIR/proxy.args says. */
struct reload_rec {
	char server[16];		/* "nginx" or "apache" */
	char prefix[PATH_MAX];
	char file[PATH_MAX];
	char cwd[PATH_MAX];
	char *args[RELOAD_ARGS_MAX + 2];	/* argv for the generator, NULL-terminated,
						 * pointing into text */
	size_t nargs;
	char text[8192];			/* the args' bytes */
	size_t used;
};

static int
reload_rec_path(const char *rundir, char *buf, size_t len)
{
	int m = snprintf(buf, len, "%s/proxy.args", rundir);

	return m < 0 || (size_t)m >= len ? -1 : 0;
}

int
reload_record(const char *rundir, const char *server, int argc, char *const argv[])
{
	char path[PATH_MAX], tmp[PATH_MAX + 8], rundir_abs[PATH_MAX], prefix_abs[PATH_MAX];
	char file_abs[PATH_MAX], cwd[PATH_MAX];
	const char *prefix = NULL, *outfile = NULL;
	FILE *f;
	int i, ok;

	/* -p PREFIX and -o FILE, or -pPREFIX and -oFILE, as getopt takes them. */
	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "-p", 2) == 0)
			prefix = argv[i][2] != '\0' ? argv[i] + 2 : i + 1 < argc ? argv[i + 1] : NULL;
		else if (strncmp(argv[i], "-o", 2) == 0)
			outfile = argv[i][2] != '\0' ? argv[i] + 2 : i + 1 < argc ? argv[i + 1] :
			    NULL;
	}
	if (reload_rec_path(rundir, path, sizeof(path)) == -1)
		return -1;
	if (outfile == NULL || argc > RELOAD_ARGS_MAX || getcwd(cwd, sizeof(cwd)) == NULL ||
	    sluiced_abspath(rundir, rundir_abs, sizeof(rundir_abs)) == -1 ||
	    sluiced_prefix(server, rundir_abs, prefix, prefix_abs, sizeof(prefix_abs)) == -1 ||
	    sluiced_abspath(outfile, file_abs, sizeof(file_abs)) == -1) {
		/* An older record would make ctl reload regenerate another file. */
		(void)unlink(path);
		fprintf(stderr, "sluiced: %s: cannot record how the file was made (at most %d "
		    "words): ctl reload will not reload the proxy\n", path, RELOAD_ARGS_MAX);
		return -1;
	}
	(void)snprintf(tmp, sizeof(tmp), "%s.tmp", path);
	(void)unlink(tmp);
	if ((f = fopen(tmp, "wx")) == NULL) {
		fprintf(stderr, "sluiced: %s: %s\n", tmp, strerror(errno));
		return -1;
	}
	fprintf(f, "# how %s was generated, for sluiced ctl reload (sluiced.8)\n"
	    "server %s\nprefix %s\nfile %s\ncwd %s\n", file_abs, server, prefix_abs,
	    file_abs, cwd);
	for (i = 0; i < argc; i++) {
		if (strncmp(argv[i], "-o", 2) == 0) {
			i += argv[i][2] == '\0';
			continue;
		}
		fprintf(f, "arg %s\n", argv[i]);
	}
	ok = fchmod(fileno(f), 0644) == 0;
	if (fclose(f) == EOF || !ok || rename(tmp, path) == -1) {
		fprintf(stderr, "sluiced: %s: %s\n", path, strerror(errno));
		unlink(tmp);
		return -1;
	}
	return 0;
}

/* One "key value" line into r; -1 when it is not one the record has. */
static int
reload_rec_line(struct reload_rec *r, char *line)
{
	static const char *const keys[] = { "server", "prefix", "file", "cwd" };
	char *const dst[] = { r->server, r->prefix, r->file, r->cwd };
	const size_t lens[] = { sizeof(r->server), sizeof(r->prefix), sizeof(r->file),
		sizeof(r->cwd) };
	char *val = strchr(line, ' ');
	size_t i;

	if (line[0] == '#' || line[0] == '\0')
		return 0;
	if (val == NULL)
		return -1;
	*val++ = '\0';
	if (strcmp(line, "arg") == 0) {
		if (r->nargs == RELOAD_ARGS_MAX || strlen(val) >= sizeof(r->text) - r->used)
			return -1;
		r->args[++r->nargs] = memcpy(r->text + r->used, val, strlen(val) + 1);
		r->used += strlen(val) + 1;
		return 0;
	}
	for (i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strcmp(line, keys[i]) == 0) {
			if (strlen(val) >= lens[i])
				return -1;
			memcpy(dst[i], val, strlen(val) + 1);
			return 0;
		}
	return -1;
}

/* Reads the record: 1 when there is none, 0, or -1 with the reason on stderr. */
static int
reload_rec_read(const char *rundir, struct reload_rec *r)
{
	char path[PATH_MAX], line[PATH_MAX + 16];
	struct stat st;
	FILE *f = NULL;
	size_t n;
	int fd, rc = -1;

	memset(r, 0, sizeof(*r));
	if (reload_rec_path(rundir, path, sizeof(path)) == -1)
		return -1;
	if ((fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC)) == -1) {
		if (errno == ENOENT)
			return 1;
		fprintf(stderr, "sluiced: %s: %s\n", path, strerror(errno));
		return -1;
	}
	if (fstat(fd, &st) == -1 || !S_ISREG(st.st_mode) ||
	    (st.st_uid != geteuid() && st.st_uid != 0) || (st.st_mode & 022) != 0) {
		fprintf(stderr, "sluiced: %s: not a file of yours that only you can write: "
		    "not used\n", path);
		close(fd);
		return -1;
	}
	if ((f = fdopen(fd, "r")) == NULL) {
		close(fd);
		return -1;
	}
	while (fgets(line, sizeof(line), f) != NULL) {
		n = strlen(line);
		if (n > 0 && line[n - 1] == '\n')
			line[--n] = '\0';
		if (reload_rec_line(r, line) == -1) {
			fprintf(stderr, "sluiced: %s: malformed line '%s'\n", path, line);
			goto out;
		}
	}
	if ((strcmp(r->server, "nginx") != 0 && strcmp(r->server, "apache") != 0) ||
	    r->prefix[0] != '/' || r->file[0] != '/' || r->cwd[0] != '/' || r->nargs == 0) {
		fprintf(stderr, "sluiced: %s: incomplete record\n", path);
		goto out;
	}
	r->args[0] = (char *)(uintptr_t)"sluiced";
	rc = 0;
out:
	fclose(f);
	return rc;
}

/* Runs argv (execv when path, else execvp) in dir (may be NULL), stdout to out_path (may
 * be NULL); its exit status, or -1 when it could not run or was killed. */
static int
reload_run(const char *path, char *const argv[], const char *dir, const char *out_path)
{
	pid_t pid;
	int status, fd;

	(void)fflush(stdout);
	if ((pid = fork()) == -1)
		return -1;
	if (pid == 0) {
		if (dir != NULL && chdir(dir) == -1)
			_exit(127);
		if (out_path != NULL) {
			fd = open(out_path, O_WRONLY | O_CREAT | O_TRUNC | O_NOFOLLOW | O_CLOEXEC,
			    0644);
			if (fd == -1 || dup2(fd, STDOUT_FILENO) == -1)
				_exit(127);
		}
		if (path != NULL)
			execv(path, argv);
		else
			execvp(argv[0], argv);
		fprintf(stderr, "sluiced: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	while (waitpid(pid, &status, 0) == -1)
		if (errno != EINTR)
			return -1;
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/* The proxy tests file (test) or reloads gracefully on it: 0, or -1 (it said why). */
static int
reload_proxy(const struct reload_rec *r, const char *file, int test)
{
	char *nginx[] = { (char *)(uintptr_t)"nginx", (char *)(uintptr_t)"-q",
		(char *)(uintptr_t)"-e", (char *)(uintptr_t)"stderr", (char *)(uintptr_t)"-p",
		(char *)(uintptr_t)r->prefix, (char *)(uintptr_t)"-c", (char *)(uintptr_t)file,
		(char *)(uintptr_t)(test ? "-t" : "-s"), test ? NULL : (char *)(uintptr_t)"reload",
		NULL };
	char *apache[] = { (char *)(uintptr_t)"apache2", (char *)(uintptr_t)"-f",
		(char *)(uintptr_t)file, (char *)(uintptr_t)(test ? "-t" : "-k"),
		test ? NULL : (char *)(uintptr_t)"graceful", NULL };
	char *const *argv = strcmp(r->server, "nginx") == 0 ? nginx : apache;

	return reload_run(NULL, argv, r->prefix, NULL) == 0 ? 0 : -1;
}

/* Steps 1 and 2 at the top of this file: FILE.next generated and tested. */
static int
reload_next(const struct reload_rec *r, char *next, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;
	int m = snprintf(next, len, "%s.next", r->file);

	if (m < 0 || (size_t)m >= len ||
	    (n = readlink("/proc/self/exe", self, sizeof(self) - 1)) <= 0) {
		fprintf(stderr, "sluiced: ctl reload: cannot name %s.next or this program\n",
		    r->file);
		return -1;
	}
	self[n] = '\0';
	(void)unlink(next);
	if (reload_run(self, r->args, r->cwd, next) != 0) {
		fprintf(stderr, "sluiced: ctl reload: the %s configuration cannot be made from "
		    "the new list (above); nothing changed\n", r->server);
		goto fail;
	}
	if (reload_proxy(r, next, 1) == -1) {
		fprintf(stderr, "sluiced: ctl reload: %s refuses the new configuration %s "
		    "(above); nothing changed\n", r->server, next);
		goto fail;
	}
	return 0;
fail:
	unlink(next);
	return -1;
}

/* The proxy master's children now, from its pid file (PREFIX/nginx.pid or apache2.pid as
 * the generators write it), into kids[max]: their count, or -1 when unknown. */
static int
reload_kids(const struct reload_rec *r, long *kids, int max)
{
	char path[PATH_MAX + 32], line[4096], *p, *end;
	FILE *f;
	long pid = 0;
	int n = 0;

	(void)snprintf(path, sizeof(path), "%s/%s.pid", r->prefix,
	    strcmp(r->server, "nginx") == 0 ? "nginx" : "apache2");
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) != NULL) {
		errno = 0;
		pid = strtol(line, &end, 10);
		if (end == line || errno != 0)
			pid = 0;
	}
	(void)fclose(f);
	(void)snprintf(path, sizeof(path), "/proc/%ld/task/%ld/children", pid, pid);
	if (pid <= 0 || (f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) == NULL)
		line[0] = '\0';
	(void)fclose(f);
	for (p = line; n < max; p = end) {
		errno = 0;
		kids[n] = strtol(p, &end, 10);
		if (end == p || errno != 0)
			break;
		n++;
	}
	return n;
}

/*
 * Waits, at most RELOAD_TURNOVER_MS, until none of the proxy master's children of before
 * the reload (before[0..nbefore)) is left: they took requests by the old file, and the
 * master tells them to stop only once its new workers are up (nginx waits 100 ms more),
 * then each finishes the requests it holds.  Only then do the removed pools go.
 */
static void
reload_wait_turnover(const struct reload_rec *r, const long *before, int nbefore)
{
	struct timespec pause = { 0, 10 * 1000 * 1000 };
	long kids[256];
	int i, j, n, t, old;

	for (t = 0; nbefore > 0 && t < RELOAD_TURNOVER_MS; t += 10) {
		if ((n = reload_kids(r, kids, 256)) < 0)
			return;
		for (i = 0, old = 0; i < n && !old; i++)
			for (j = 0; j < nbefore && !old; j++)
				old = before[j] == kids[i];
		if (!old)
			return;
		nanosleep(&pause, NULL);
	}
}

/* Whether name (len bytes) is in the comma-separated list. */
static int
reload_listed(const char *list, const char *name, size_t len)
{
	const char *p = list, *end;

	for (; *p != '\0'; p = *end == ',' ? end + 1 : end) {
		end = p + strcspn(p, ",\n");
		if ((size_t)(end - p) == len && memcmp(p, name, len) == 0)
			return 1;
		if (*end == '\n' || *end == '\0')
			break;
	}
	return 0;
}

/*
 * Waits, at most RELOAD_UP_MS, until every pool named after " new=" in said is up (ctl.c's
 * "up": its workers have lived a second).  0, or -1 when one failed or the time ran out
 * (each such pool said on stderr).
 */
static int
reload_wait_new(const char *ctl_path, const char *said,
    int (*ask)(const char *path, const char *cmd, size_t len, int rcv_ms, char **resp))
{
	struct timespec pause = { 0, 100 * 1000 * 1000 };
	const char *list = strstr(said, " new="), *line, *sp, *end;
	char *resp = NULL;
	int t, waiting, failed = 0;

	if (list == NULL)
		return 0;
	list += 5;
	for (t = 0; t <= RELOAD_UP_MS; t += 100) {
		free(resp);
		if (ask(ctl_path, "up\n", 3, 10000, &resp) != 0 || strncmp(resp, "ok\n", 3) != 0)
			break;
		waiting = 0;
		for (line = resp + 3; *line != '\0'; line = *end == '\n' ? end + 1 : end) {
			end = line + strcspn(line, "\n");
			if ((sp = memchr(line, ' ', (size_t)(end - line))) == NULL ||
			    !reload_listed(list, line, (size_t)(sp - line)))
				continue;
			if (strncmp(sp + 1, "failed", 6) == 0 || (t == RELOAD_UP_MS &&
			    strncmp(sp + 1, "up", 2) != 0)) {
				fprintf(stderr, "sluiced: ctl reload: pool %.*s\n", (int)(end - line),
				    line);
				failed = 1;
			} else if (strncmp(sp + 1, "up", 2) != 0) {
				waiting = 1;
			}
		}
		if (failed || !waiting)
			break;
		nanosleep(&pause, NULL);
	}
	free(resp);
	return failed || t > RELOAD_UP_MS ? -1 : 0;
}

int
reload_client(const char *rundir, const char *ctl_path,
    int (*ask)(const char *path, const char *cmd, size_t len, int rcv_ms, char **resp))
{
	struct reload_rec r;
	char next[PATH_MAX + 8], *resp = NULL;
	long before[256];
	int have, nbefore, rc = 1;

	if ((have = reload_rec_read(rundir, &r)) == -1)
		goto out;
	if (have == 0 && reload_next(&r, next, sizeof(next)) == -1)
		goto out;
	/* With a proxy to reload, the removed pools serve until it has forgotten them. */
	if (ask(ctl_path, have == 0 ? "reread hold\n" : "reread\n", have == 0 ? 12 : 7, 30000,
	    &resp) != 0 || strncmp(resp, "ok\n", 3) != 0) {
		if (resp != NULL)
			fprintf(stderr, "sluiced: ctl reload: %s", strncmp(resp, "error ", 6) == 0 ?
			    resp + 6 : resp);
		fprintf(stderr, "sluiced: ctl reload: the endpoint list was not applied; "
		    "nothing changed\n");
		if (have == 0)
			unlink(next);
		goto out;
	}
	fputs(resp + 3, stdout);
	if (reload_wait_new(ctl_path, resp + 3, ask) == -1) {
		fprintf(stderr, "sluiced: ctl reload: a new endpoint did not start (its log says "
		    "why): the proxy was not reloaded%s; fix it and run ctl reload again\n",
		    have == 0 ? " and the removed endpoints still serve" : "");
		if (have == 0)
			unlink(next);
		goto out;
	}
	if (have == 1) {
		printf("proxy: none recorded in %s/proxy.args, not reloaded\n", rundir);
		rc = 0;
		goto out;
	}
	if (rename(next, r.file) == -1) {
		fprintf(stderr, "sluiced: ctl reload: %s: %s; sluiced runs the new list (its "
		    "removed endpoints still serve), %s the old one\n", r.file, strerror(errno),
		    r.server);
		unlink(next);
		goto out;
	}
	nbefore = reload_kids(&r, before, 256);
	if (reload_proxy(&r, r.file, 0) == -1) {
		fprintf(stderr, "sluiced: ctl reload: %s did not reload (above); sluiced runs "
		    "the new list (its removed endpoints still serve), %s the old one until it "
		    "reloads %s\n", r.server, r.server, r.file);
		goto out;
	}
	printf("proxy: %s reloaded on %s\n", r.server, r.file);
	reload_wait_turnover(&r, before, nbefore);
	free(resp);
	resp = NULL;
	if (ask(ctl_path, "prune\n", 6, 30000, &resp) != 0 || strncmp(resp, "ok\n", 3) != 0) {
		fprintf(stderr, "sluiced: ctl reload: the removed endpoints were not stopped; "
		    "the next ctl reload stops them\n");
		goto out;
	}
	rc = 0;
out:
	free(resp);
	return rc;
}
