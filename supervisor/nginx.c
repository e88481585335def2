/*
 * nginx.c: `sluiced nginx default|tuned`: resolves paths and the nginx user, then lets
 * supervisor/nginxconf.c write the file (to stdout, or atomically to -o FILE after creating
 * PREFIX and PREFIX/logs).
 *
 * Which user nginx's workers run as.  nginx started by a non-root user runs its workers as
 * that user, which is then also sluiced's user (the sockets' owner, mode 0660): nothing to
 * emit.  nginx started as root would run its workers as `nobody`, who can neither traverse
 * a private RUNDIR nor connect to a 0660 socket, so the generator (run as root) always
 * names a user, and never root:
 *   1. -u USER[:GROUP] on the command line (supervisor/run.sh passes www-data, whose group
 *      it gives RUNDIR, so that the sockets are reached through their group);
 *   2. `set nginx_user USER[:GROUP]` in the endpoint list;
 *   3. RUNDIR's owner and group when RUNDIR exists and is not root's: sluiced started as
 *      root gives RUNDIR to its run user (supervisor/priv.c) and the sockets are that
 *      user's, group RUNDIR's;
 *   4. otherwise (RUNDIR missing or still root's, as before sluiced's first start) the run
 *      user sluiced will drop to (`set user`, else sluice, else nobody) and its group: the
 *      owner of every socket once sluiced runs.
 * When the result is root (sluiced keeps root with `set user root`, or a root RUNDIR owner
 * is named), the generator refuses: nginx's workers parse every request and never run
 * as root.  The nginx user must also be able to traverse RUNDIR's parent directories.
 */
#include <errno.h>
#include <grp.h>
#include <limits.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "log.h"
#include "nginxconf.h"
#include "sluiced.h"

/* The user and group nginx's workers run as, when it is named. */
struct nginx_user {
	char user[64];
	char group[64];
};

/* Rule 1 or 2 at the top of this file: USER[:GROUP] as given, into u and o. */
static int
nginx_user_named(struct nginx_opts *o, struct nginx_user *u, const char *nginx_user)
{
	char *colon;
	int m;

	m = snprintf(u->user, sizeof(u->user), "%s", nginx_user);
	if (m < 0 || (size_t)m >= sizeof(u->user)) {
		fprintf(stderr, "sluiced: nginx user too long\n");
		return -1;
	}
	o->user = u->user;
	if ((colon = strchr(u->user, ':')) != NULL) {
		*colon = '\0';
		o->group = colon + 1;
	}
	return 0;
}

/* Rules 3 and 4 at the top of this file (started as root): RUNDIR's owner, or the run
 * user sluiced will drop to, into u and o. */
static int
nginx_user_derived(struct nginx_opts *o, struct nginx_user *u, const struct conf *c,
    const char *rundir_abs)
{
	struct sluiced sd;
	struct passwd *pw;
	struct group *gr;
	struct stat st;
	int m;

	memset(&sd, 0, sizeof(sd));
	if (stat(rundir_abs, &st) == -1 || st.st_uid == 0) {
		if (priv_resolve(&sd, c) == -1)
			return -1;
		st.st_uid = sd.drop ? sd.run_uid : 0;
		st.st_gid = sd.drop ? sd.run_gid : 0;
	}
	if ((pw = getpwuid(st.st_uid)) == NULL || (gr = getgrgid(st.st_gid)) == NULL) {
		fprintf(stderr, "sluiced: nginx: owner of %s has no user or group name\n",
		    rundir_abs);
		return -1;
	}
	m = snprintf(u->user, sizeof(u->user), "%s", pw->pw_name);
	if (m < 0 || (size_t)m >= sizeof(u->user) ||
	    (m = snprintf(u->group, sizeof(u->group), "%s", gr->gr_name)) < 0 ||
	    (size_t)m >= sizeof(u->group)) {
		fprintf(stderr, "sluiced: nginx: user or group name too long\n");
		return -1;
	}
	o->user = u->user;
	o->group = u->group;
	return 0;
}

/* The nginx user, as described at the top of this file, into u and o; never root when
 * started as root.  0, or -1 with the reason on stderr. */
static int
nginx_user_resolve(struct nginx_opts *o, struct nginx_user *u, const struct conf *c,
    const char *nginx_user, const char *rundir_abs)
{
	struct passwd *pw;

	if (nginx_user == NULL)
		nginx_user = c->nginx_user;
	if (nginx_user != NULL) {
		if (nginx_user_named(o, u, nginx_user) == -1)
			return -1;
	} else if (geteuid() == 0 && nginx_user_derived(o, u, c, rundir_abs) == -1) {
		return -1;
	}
	if (o->user != NULL && geteuid() == 0 &&
	    ((pw = getpwnam(o->user)) == NULL || pw->pw_uid == 0)) {
		fprintf(stderr, "sluiced: nginx: %s: nginx's workers must run as an existing "
		    "unprivileged user (set nginx_user USER, or -u USER)\n", o->user);
		return -1;
	}
	return 0;
}

/* -o: PREFIX and PREFIX/logs made, FILE.tmp opened (its path into path[len]).  NULL with
 * the reason on stderr. */
static FILE *
nginx_out_open(const char *prefix_abs, const char *outfile, char *path, size_t len)
{
	int m;

	if (sluiced_mkdirs(prefix_abs) == -1) {
		fprintf(stderr, "sluiced: mkdir %s: %s\n", prefix_abs, strerror(errno));
		return NULL;
	}
	m = snprintf(path, len, "%s/logs", prefix_abs);
	if (m < 0 || (size_t)m >= len || sluiced_mkdirs(path) == -1) {
		fprintf(stderr, "sluiced: mkdir %s/logs: %s\n", prefix_abs, strerror(errno));
		return NULL;
	}
	return sluiced_out_open(outfile, path, len);
}

int
nginx_main(const char *conf_path, const char *rundir, const char *prefix,
    const char *profile, const char *listen, int workers, int keepalive,
    const char *nginx_user, const char *hosts, const char *outfile)
{
	struct nginx_opts o;
	struct nginx_user u;
	struct conf *c = NULL;
	char errbuf[512], rundir_abs[PATH_MAX], prefix_abs[PATH_MAX], path[PATH_MAX + 16];
	FILE *out = stdout;
	int pr, rc = 1;

	memset(&o, 0, sizeof(o));
	if ((pr = nginx_profile_parse(profile)) == -1) {
		fprintf(stderr, "sluiced: nginx: unknown profile '%s' (want default or tuned)\n",
		    profile);
		return 2;
	}
	if ((c = conf_load(conf_path, errbuf, sizeof(errbuf))) == NULL) {
		fprintf(stderr, "sluiced: %s\n", errbuf);
		goto out;
	}
	if (sluiced_abspath(rundir, rundir_abs, sizeof(rundir_abs)) == -1) {
		fprintf(stderr, "sluiced: nginx: run dir path too long\n");
		goto out;
	}
	if (sluiced_prefix("nginx", rundir_abs, prefix, prefix_abs, sizeof(prefix_abs)) == -1)
		goto out;
	o.profile = (enum nginx_profile)pr;
	o.rundir = rundir_abs;
	o.prefix = prefix_abs;
	o.listen = listen;
	o.workers = workers;
	o.keepalive = keepalive;
	o.hosts = hosts;
	if (nginx_user_resolve(&o, &u, c, nginx_user, rundir_abs) == -1)
		goto out;
	if (outfile != NULL &&
	    (out = nginx_out_open(prefix_abs, outfile, path, sizeof(path))) == NULL) {
		out = stdout;
		goto out;
	}
	rc = nginx_conf_write(out, c, &o) == -1 ? 1 : 0;
out:
	if (out != stdout && sluiced_out_close(out, path, outfile, rc == 0) == -1)
		rc = 1;
	conf_free(c);
	return rc;
}
