/*
 * nginx.c: `sluiced nginx default|tuned`: resolves paths and the nginx user, then lets
 * supervisor/nginxconf.c write the file (to stdout, or atomically to -o FILE after creating
 * PREFIX and PREFIX/logs).
 *
 * Which user nginx's workers run as.  nginx started by a non-root user runs its workers as
 * that user, which is then also sluiced's user (the sockets' owner, mode 0660): nothing to
 * emit.  nginx started as root would run its workers as `nobody`, who can neither traverse
 * a private RUNDIR nor connect to a 0660 socket.  The rule is therefore: the workers run
 * as the user who owns RUNDIR.  The generator (when run as root) emits `user OWNER GROUP;`
 * for RUNDIR's owner and group, and sluiced (when run as root) chowns every socket to
 * RUNDIR's owner, so proxy and pools always agree without any socket being world-writable.
 * For production, make RUNDIR belong to an unprivileged user (e.g. www-data); a RUNDIR owned
 * by root yields `user root root;`, which is what a root-owned test directory asks for, and
 * the config says so in a comment.  `set nginx_user USER[:GROUP]` overrides the rule.  The
 * nginx user must also be able to traverse RUNDIR's parent directories.
 *
 * sluiced started as root drops to its run user and gives it RUNDIR, keeping RUNDIR's group
 * (or making it socket_group) for the sockets (supervisor/priv.c).  A config generated
 * after that names the run user and RUNDIR's group, which still reach the sockets (as
 * owner and as group); for production set nginx_user, or keep the distribution's nginx
 * user and give the sockets its group with socket_group.
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
    const char *profile, const char *listen, int workers, int keepalive, const char *outfile)
{
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

	/* The nginx user, as described at the top of this file. */
	if (c->nginx_user != NULL) {
		m = snprintf(user, sizeof(user), "%s", c->nginx_user);
		if (m < 0 || (size_t)m >= sizeof(user)) {
			fprintf(stderr, "sluiced: nginx_user too long\n");
			goto out;
		}
		o.user = user;
		if ((colon = strchr(user, ':')) != NULL) {
			*colon = '\0';
			o.group = colon + 1;
		}
	} else if (geteuid() == 0) {
		/* A RUNDIR that does not exist yet will be made by sluiced as root. */
		if (stat(rundir_abs, &st) == -1) {
			st.st_uid = 0;
			st.st_gid = 0;
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
		if (st.st_uid == 0) {
			o.comment = "RUNDIR is owned by root, so nginx's workers run as root: "
			    "chown RUNDIR to an unprivileged user for production.";
		}
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
