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

int
nginx_main(const char *conf_path, const char *rundir, const char *prefix,
    const char *profile, const char *listen, int workers, int keepalive,
    const char *nginx_user, const char *hosts, const char *outfile)
{
	struct sluiced sd;
	struct nginx_opts o;
	struct conf *c = NULL;
	struct passwd *pw;
	struct group *gr;
	struct stat st;
	char errbuf[512], rundir_abs[PATH_MAX], prefix_abs[PATH_MAX], path[PATH_MAX + 16];
	char user[64], group[64], *colon;
	FILE *out = stdout;
	int pr, m, rc = 1;

	memset(&o, 0, sizeof(o));
	memset(&sd, 0, sizeof(sd));
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
	if (prefix == NULL) {
		m = snprintf(prefix_abs, sizeof(prefix_abs), "%s/nginx", rundir_abs);
		if (m < 0 || (size_t)m >= sizeof(prefix_abs)) {
			fprintf(stderr, "sluiced: nginx: prefix path too long\n");
			goto out;
		}
	} else if (sluiced_abspath(prefix, prefix_abs, sizeof(prefix_abs)) == -1) {
		fprintf(stderr, "sluiced: nginx: prefix path too long\n");
		goto out;
	}
	o.profile = (enum nginx_profile)pr;
	o.rundir = rundir_abs;
	o.prefix = prefix_abs;
	o.listen = listen;
	o.workers = workers;
	o.keepalive = keepalive;
	o.hosts = hosts;

	/* The nginx user, as described at the top of this file. */
	if (nginx_user == NULL)
		nginx_user = c->nginx_user;
	if (nginx_user != NULL) {
		m = snprintf(user, sizeof(user), "%s", nginx_user);
		if (m < 0 || (size_t)m >= sizeof(user)) {
			fprintf(stderr, "sluiced: nginx user too long\n");
			goto out;
		}
		o.user = user;
		if ((colon = strchr(user, ':')) != NULL) {
			*colon = '\0';
			o.group = colon + 1;
		}
	} else if (geteuid() == 0) {
		if (stat(rundir_abs, &st) == -1 || st.st_uid == 0) {
			if (priv_resolve(&sd, c) == -1)
				goto out;
			st.st_uid = sd.drop ? sd.run_uid : 0;
			st.st_gid = sd.drop ? sd.run_gid : 0;
		}
		if ((pw = getpwuid(st.st_uid)) == NULL || (gr = getgrgid(st.st_gid)) == NULL) {
			fprintf(stderr, "sluiced: nginx: owner of %s has no user or group name\n",
			    rundir_abs);
			goto out;
		}
		m = snprintf(user, sizeof(user), "%s", pw->pw_name);
		if (m < 0 || (size_t)m >= sizeof(user) ||
		    (m = snprintf(group, sizeof(group), "%s", gr->gr_name)) < 0 ||
		    (size_t)m >= sizeof(group)) {
			fprintf(stderr, "sluiced: nginx: user or group name too long\n");
			goto out;
		}
		o.user = user;
		o.group = group;
	}
	if (o.user != NULL && geteuid() == 0 &&
	    ((pw = getpwnam(o.user)) == NULL || pw->pw_uid == 0)) {
		fprintf(stderr, "sluiced: nginx: %s: nginx's workers must run as an existing "
		    "unprivileged user (set nginx_user USER, or -u USER)\n", o.user);
		goto out;
	}

	if (outfile != NULL) {
		if (sluiced_mkdirs(prefix_abs) == -1) {
			fprintf(stderr, "sluiced: mkdir %s: %s\n", prefix_abs, strerror(errno));
			goto out;
		}
		m = snprintf(path, sizeof(path), "%s/logs", prefix_abs);
		if (m < 0 || (size_t)m >= sizeof(path) || sluiced_mkdirs(path) == -1) {
			fprintf(stderr, "sluiced: mkdir %s/logs: %s\n", prefix_abs, strerror(errno));
			goto out;
		}
		if ((out = sluiced_out_open(outfile, path, sizeof(path))) == NULL) {
			out = stdout;
			goto out;
		}
	}
	rc = nginx_conf_write(out, c, &o) == -1 ? 1 : 0;
out:
	if (out != stdout && sluiced_out_close(out, path, outfile, rc == 0) == -1)
		rc = 1;
	conf_free(c);
	return rc;
}
