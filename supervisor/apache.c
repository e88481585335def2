/*
 * apache.c: `sluiced apache default|tuned|cgi|fcgid`: resolves paths and Apache's user,
 * then lets supervisor/apacheconf.c write the file (to stdout, or atomically to -o FILE after
 * creating PREFIX with its logs, runtime, htdocs, errors and fcgid directories and writing
 * the JSON error documents into PREFIX/errors).
 *
 * Which user Apache's children run as: the rule of supervisor/nginx.c.  Apache started by
 * a non-root user keeps that user (sluiced's, the sockets' owner): nothing to emit.  Apache
 * started as root switches its children to User/Group, which must reach the 0660 sockets:
 * the owner (and group) of RUNDIR, the sockets' owner (sluiced's run user once it dropped
 * root, supervisor/priv.c) and group.  Unlike
 * nginx, Apache refuses to run its children as root, so a root-owned RUNDIR is an error
 * here with the fix in the message (chown RUNDIR to an unprivileged user, e.g. www-data).
 * `set nginx_user USER[:GROUP]` (the front server's user) overrides the rule.  In the cgi
 * and fcgid profiles that user also runs the endpoint binaries, so it must be able to
 * read bin/ and write the SQLite databases and their directories.
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

#include "apacheconf.h"
#include "conf.h"
#include "log.h"
#include "sluiced.h"

/* PREFIX/sub, created; with uid != -1 (Apache started as root) owned by Apache's user. */
static int
apache_subdir(const char *prefix, const char *sub, uid_t uid, gid_t gid)
{
	char path[PATH_MAX];
	int m;

	m = snprintf(path, sizeof(path), "%s/%s", prefix, sub);
	if (m < 0 || (size_t)m >= sizeof(path) || sluiced_mkdirs(path) == -1) {
		fprintf(stderr, "sluiced: apache: mkdir %s/%s: %s\n", prefix, sub,
		    m < 0 || (size_t)m >= sizeof(path) ? "path too long" : strerror(errno));
		return -1;
	}
	if (uid != (uid_t)-1 && chown(path, uid, gid) == -1) {
		fprintf(stderr, "sluiced: apache: chown %s: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* Fills user/group (and their ids) as described at the top of this file. */
static int
apache_user(const struct conf *c, const char *rundir, char *user, size_t ulen, char *group,
    size_t glen, uid_t *uid, gid_t *gid)
{
	struct passwd *pw;
	struct group *gr;
	struct stat st;
	const char *colon;
	int m;

	if (c->nginx_user != NULL) {
		colon = strchr(c->nginx_user, ':');
		m = snprintf(user, ulen, "%.*s", colon != NULL ?
		    (int)(colon - c->nginx_user) : (int)strlen(c->nginx_user), c->nginx_user);
		if (m < 0 || (size_t)m >= ulen || (pw = getpwnam(user)) == NULL) {
			fprintf(stderr, "sluiced: apache: nginx_user %s: no such user\n", user);
			return -1;
		}
		gr = colon != NULL ? getgrnam(colon + 1) : getgrgid(pw->pw_gid);
	} else {
		if (stat(rundir, &st) == -1) {
			fprintf(stderr, "sluiced: apache: %s: %s (create it, owned by the user "
			    "Apache's children should run as)\n", rundir, strerror(errno));
			return -1;
		}
		if ((pw = getpwuid(st.st_uid)) == NULL) {
			fprintf(stderr, "sluiced: apache: owner of %s has no user name\n", rundir);
			return -1;
		}
		gr = getgrgid(st.st_gid);
	}
	if (pw->pw_uid == 0) {
		fprintf(stderr, "sluiced: apache: %s is owned by root, and Apache refuses to run "
		    "its children as root;\n  chown it to an unprivileged user (e.g. chown "
		    "www-data:www-data %s) or set nginx_user\n", rundir, rundir);
		return -1;
	}
	if (gr == NULL) {
		fprintf(stderr, "sluiced: apache: no group for user %s\n", pw->pw_name);
		return -1;
	}
	m = snprintf(user, ulen, "%s", pw->pw_name);
	if (m < 0 || (size_t)m >= ulen ||
	    (m = snprintf(group, glen, "%s", gr->gr_name)) < 0 || (size_t)m >= glen) {
		fprintf(stderr, "sluiced: apache: user or group name too long\n");
		return -1;
	}
	*uid = pw->pw_uid;
	*gid = gr->gr_gid;
	return 0;
}

/* -o: PREFIX's directories made, the error documents written, FILE.tmp opened (its path
 * into path[len]).  NULL with the reason on stderr. */
static FILE *
apache_out_open(const struct apache_opts *o, uid_t uid, gid_t gid, const char *outfile,
    char *path, size_t len)
{
	static const char *const subdirs[] = { "logs", "runtime", "htdocs", "errors" };
	size_t i;

	for (i = 0; i < sizeof(subdirs) / sizeof(subdirs[0]); i++)
		if (apache_subdir(o->prefix, subdirs[i], (uid_t)-1, (gid_t)-1) == -1)
			return NULL;
	/* mod_fcgid's sockets and process table are made by Apache's user. */
	if (o->profile == APACHE_FCGID && apache_subdir(o->prefix, "fcgid", uid, gid) == -1)
		return NULL;
	if (apache_error_files_write(o->prefix) == -1)
		return NULL;
	return sluiced_out_open(outfile, path, len);
}

int
apache_main(const char *conf_path, const char *rundir, const char *bindir,
    const char *prefix, const char *profile, const char *listen, int children, int reuse,
    const char *outfile)
{
	struct apache_opts o;
	struct conf *c = NULL;
	char errbuf[512], rundir_abs[PATH_MAX], prefix_abs[PATH_MAX], bindir_abs[PATH_MAX];
	char cwd[PATH_MAX], path[PATH_MAX + 16], user[64], group[64];
	uid_t uid = (uid_t)-1;
	gid_t gid = (gid_t)-1;
	FILE *out = stdout;
	int pr, rc = 1;

	memset(&o, 0, sizeof(o));
	if ((pr = apache_profile_parse(profile)) == -1) {
		fprintf(stderr, "sluiced: apache: unknown profile '%s' (want default, tuned, cgi "
		    "or fcgid)\n", profile);
		return 2;
	}
	if ((c = conf_load(conf_path, errbuf, sizeof(errbuf))) == NULL) {
		fprintf(stderr, "sluiced: %s\n", errbuf);
		goto out;
	}
	if (getcwd(cwd, sizeof(cwd)) == NULL ||
	    sluiced_abspath(rundir, rundir_abs, sizeof(rundir_abs)) == -1 ||
	    sluiced_abspath(bindir, bindir_abs, sizeof(bindir_abs)) == -1) {
		fprintf(stderr, "sluiced: apache: path too long\n");
		goto out;
	}
	if (sluiced_prefix("apache", rundir_abs, prefix, prefix_abs, sizeof(prefix_abs)) == -1)
		goto out;
	o.profile = (enum apache_profile)pr;
	o.rundir = rundir_abs;
	o.prefix = prefix_abs;
	o.bindir = bindir_abs;
	o.cwd = cwd;
	o.listen = listen;
	o.children = children;
	o.reuse = reuse;
	if (geteuid() == 0) {
		if (apache_user(c, rundir_abs, user, sizeof(user), group, sizeof(group), &uid,
		    &gid) == -1)
			goto out;
		o.user = user;
		o.group = group;
	}

	if (outfile != NULL && (out = apache_out_open(&o, uid, gid, outfile, path,
	    sizeof(path))) == NULL) {
		out = stdout;
		goto out;
	}
	rc = apache_conf_write(out, c, &o) == -1 ? 1 : 0;
out:
	if (out != stdout && sluiced_out_close(out, path, outfile, rc == 0) == -1)
		rc = 1;
	conf_free(c);
	return rc;
}
