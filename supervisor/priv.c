/*
 * priv.c: sluiced started as root gives up root once its sockets exist.
 *
 * Who.  `set user USER` and `set group GROUP` in the endpoint list; by default the user
 * `sluice` when it exists (a dedicated account, the production choice: nothing else runs
 * as it), else `nobody`, and USER's primary group (nobody's is nogroup).  `set user root`
 * keeps root, with a warning.  Not started as root: nothing here happens.
 *
 * What root does first, because the run user could not:
 *   - RUNDIR goes to USER (its group stays, or becomes socket_group) and gets the setgid
 *     bit, so that every socket sluiced binds later (a re-added endpoint, a failed pool
 *     started again) inherits the web server's group without a chown; a world-writable
 *     or sticky RUNDIR (/run itself, /tmp) is refused;
 *   - every endpoint socket is USER's, group socket_group or RUNDIR's group, mode 0660
 *     (sluiced.c, pool.c): the web server reaches it through its group, nobody else can;
 *   - the control socket and the pid file go to USER (it removes them when it stops);
 *   - each SQLite database is handed to USER: SQLite writes the database and creates its
 *     -wal, -shm and -journal files next to it, and the chat writes its session key there.
 *     The database's directory goes to USER, with the root-owned regular files directly
 *     in it, when root owns it, it holds no subdirectory (a data directory like data/ or
 *     /var/lib/sluice, never a tree like /var/lib) and it is not world-writable (never
 *     /tmp).  Otherwise only the database's own files are given, and sluiced says so when,
 *     once it is USER, it cannot write the directory.
 *
 * Then initgroups(), setgid(), setuid(), and a check that root cannot come back:
 * setuid(0) and setgid(0) must fail, or sluiced aborts.  The workers are forked from the
 * unprivileged sluiced.  The endpoint list must stay readable by USER (SIGHUP re-reads
 * it), and changing user, group or socket_group takes a restart.  nginx is not started by
 * sluiced: its master keeps root for its own user switch (supervisor/run.sh starts it).
 */
#include <dirent.h>
#include <err.h>
#include <errno.h>
#include <fcntl.h>
#include <grp.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "db.h"
#include "log.h"
#include "sluiced.h"

int
priv_resolve(struct sluiced *s, const struct conf *c)
{
	const char *user = conf_get(c, "user", NULL), *group = conf_get(c, "group", NULL);
	struct passwd *pw;
	struct group *gr;
	int m;

	s->drop = 0;
	if (geteuid() != 0) {
		if (user != NULL || group != NULL)
			log_info("not started as root: set user/group have no effect");
		return 0;
	}
	if (user == NULL)
		user = getpwnam("sluice") != NULL ? "sluice" : "nobody";
	if ((pw = getpwnam(user)) == NULL) {
		log_err("set user %s: no such user", user);
		return -1;
	}
	s->run_uid = pw->pw_uid;
	s->run_gid = pw->pw_gid;
	m = snprintf(s->run_user, sizeof(s->run_user), "%s", pw->pw_name);
	if (m < 0 || (size_t)m >= sizeof(s->run_user)) {
		log_err("set user %s: name too long", user);
		return -1;
	}
	if (group != NULL) {
		if ((gr = getgrnam(group)) == NULL) {
			log_err("set group %s: no such group", group);
			return -1;
		}
		s->run_gid = gr->gr_gid;
	}
	if (s->run_uid == 0) {
		log_warn("set user %s: sluiced and every worker keep root", user);
		return 0;
	}
	s->drop = 1;
	return 0;
}

int
priv_rundir(struct sluiced *s, const struct conf *c)
{
	struct group *gr;
	struct stat st;
	gid_t gid = (gid_t)-1;

	if (!s->drop)
		return 0;
	if (c->socket_group != NULL) {
		if ((gr = getgrnam(c->socket_group)) == NULL) {
			log_err("socket_group %s: no such group", c->socket_group);
			return -1;
		}
		gid = gr->gr_gid;
	}
	/* RUNDIR is handed over: never a shared directory such as /run or /tmp. */
	if (stat(s->rundir, &st) == -1 || !S_ISDIR(st.st_mode) ||
	    (st.st_mode & (S_IWOTH | S_ISVTX)) != 0) {
		log_err("%s: not a directory of sluiced's own (missing, world-writable or "
		    "sticky): use e.g. /run/sluice", s->rundir);
		return -1;
	}
	if (chown(s->rundir, s->run_uid, gid) == -1 || stat(s->rundir, &st) == -1 ||
	    chmod(s->rundir, (st.st_mode & 07777) | S_ISGID) == -1) {
		log_err("%s: cannot give it to %s: %s", s->rundir, s->run_user, strerror(errno));
		return -1;
	}
	return 0;
}

/* Gives path (not following a symlink) to the run user, group unchanged, if root owns it. */
static void
priv_give(struct sluiced *s, int dirfd, const char *path)
{
	struct stat st;

	if (fstatat(dirfd, path, &st, AT_SYMLINK_NOFOLLOW) == -1 || st.st_uid != 0 ||
	    S_ISLNK(st.st_mode))
		return;
	if (fchownat(dirfd, path, s->run_uid, (gid_t)-1, AT_SYMLINK_NOFOLLOW) == -1)
		log_warn("chown %s %s: %s", s->run_user, path, strerror(errno));
}

/*
 * A directory sluiced may take over: root's, not world-writable, no subdirectory.  With
 * take set, it and the root-owned regular files in it are given to the run user.
 */
static int
priv_data_dir(struct sluiced *s, const char *dir, int take)
{
	struct dirent *de;
	struct stat st;
	DIR *d;
	int ok = 1;

	if ((d = opendir(dir)) == NULL)
		return 0;
	while (ok && (de = readdir(d)) != NULL) {
		if (strcmp(de->d_name, ".") == 0 || strcmp(de->d_name, "..") == 0)
			continue;
		if (fstatat(dirfd(d), de->d_name, &st, AT_SYMLINK_NOFOLLOW) == -1)
			continue;
		if (S_ISDIR(st.st_mode))
			ok = 0;
		else if (take && S_ISREG(st.st_mode))
			priv_give(s, dirfd(d), de->d_name);
	}
	closedir(d);
	return ok;
}

/* The SQLite file of url (a sqlite: URL, db_url_parse()) into path[len]; 0 or -1. */
static int
priv_sqlite_path(const char *url, char *path, size_t len)
{
	enum db_backend be;
	const char *file;
	int m;

	if (db_url_parse(url, &be, &file) == -1 || be != DB_SQLITE)
		return -1;
	m = snprintf(path, len, "%s", file);
	return m <= 0 || (size_t)m >= len ? -1 : 0;
}

/* path's directory into dir[len] ("." for a bare file name); 0 or -1. */
static int
priv_dirname(const char *path, char *dir, size_t len)
{
	const char *slash = strrchr(path, '/');
	int m;

	if (slash == NULL)
		m = snprintf(dir, len, ".");
	else if (slash == path)
		m = snprintf(dir, len, "/");
	else
		m = snprintf(dir, len, "%.*s", (int)(slash - path), path);
	return m <= 0 || (size_t)m >= len ? -1 : 0;
}

static void
priv_give_sqlite(struct sluiced *s, const char *path)
{
	static const char *const sfx[] = { "", "-wal", "-shm", "-journal" };
	char dir[4096], file[4096 + 16];
	struct stat st;
	size_t i;
	int m;

	if (priv_dirname(path, dir, sizeof(dir)) == -1 || stat(dir, &st) == -1 ||
	    !S_ISDIR(st.st_mode))
		return;
	if (st.st_uid == s->run_uid) {
		priv_data_dir(s, dir, 1);
		return;
	}
	if (st.st_uid == 0 && !(st.st_mode & S_IWOTH) && strcmp(dir, "/") != 0 &&
	    priv_data_dir(s, dir, 0)) {
		if (chown(dir, s->run_uid, (gid_t)-1) == -1)
			log_warn("chown %s %s: %s", s->run_user, dir, strerror(errno));
		else
			log_info("%s: given to %s (SQLite writes next to its databases)", dir,
			    s->run_user);
		priv_data_dir(s, dir, 1);
		return;
	}
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		m = snprintf(file, sizeof(file), "%s%s", path, sfx[i]);
		if (m > 0 && (size_t)m < sizeof(file))
			priv_give(s, AT_FDCWD, file);
	}
}

/* After the drop: says plainly what the run user cannot reach. */
static void
priv_check(struct sluiced *s)
{
	char path[4096], dir[4096];
	size_t i;

	if (access(s->conf_path, R_OK) == -1)
		log_err("%s is not readable by %s: SIGHUP will fail", s->conf_path, s->run_user);
	if (access(s->bindir, X_OK) == -1)
		log_err("%s is not reachable by %s: workers cannot start", s->bindir, s->run_user);
	for (i = 0; i < s->conf->neps; i++) {
		if (priv_sqlite_path(s->conf->eps[i].db_url, path, sizeof(path)) == -1 ||
		    priv_dirname(path, dir, sizeof(dir)) == -1 || access(dir, F_OK) == -1)
			continue;
		if (access(dir, W_OK | X_OK) == -1 ||
		    (access(path, F_OK) == 0 && access(path, R_OK | W_OK) == -1))
			log_err("%s: %s cannot write %s or its directory; give them to it "
			    "(chown %s)", s->conf->eps[i].name, s->run_user, path, s->run_user);
	}
}

void
priv_drop(struct sluiced *s)
{
	char path[4096];
	size_t i;

	if (!s->drop)
		return;
	priv_give(s, AT_FDCWD, s->ctl_path);
	priv_give(s, AT_FDCWD, s->pid_path);
	for (i = 0; i < s->conf->neps; i++)
		if (priv_sqlite_path(s->conf->eps[i].db_url, path, sizeof(path)) == 0)
			priv_give_sqlite(s, path);
	if (initgroups(s->run_user, s->run_gid) == -1)
		err(1, "initgroups %s", s->run_user);
	if (setgid(s->run_gid) == -1)
		err(1, "setgid %ld", (long)s->run_gid);
	if (setuid(s->run_uid) == -1)
		err(1, "setuid %s", s->run_user);
	/* Root must be gone for good: a kernel or libc that let it back is not run on. */
	if (setuid(0) != -1 || seteuid(0) != -1 || getuid() == 0 || geteuid() == 0 ||
	    (s->run_gid != 0 && (setgid(0) != -1 || setegid(0) != -1))) {
		log_err("FATAL: root could be regained after dropping to %s; aborting",
		    s->run_user);
		abort();
	}
#if defined(__SANITIZE_ADDRESS__)
	/* The credential change made us non-dumpable, and LeakSanitizer's exit check
	 * ptraces our thread from a helper task: allow it in sanitizer builds only. */
	prctl(PR_SET_DUMPABLE, 1, 0, 0, 0);
#endif
	log_info("running as %s (uid %ld, gid %ld)", s->run_user, (long)s->run_uid,
	    (long)s->run_gid);
	priv_check(s);
}

int
priv_user_main(const char *conf_path)
{
	struct sluiced s;
	struct conf *c;
	struct passwd *pw;
	struct group *gr;
	char errbuf[512];
	uid_t uid = getuid();
	gid_t gid = getgid();

	memset(&s, 0, sizeof(s));
	if ((c = conf_load(conf_path, errbuf, sizeof(errbuf))) == NULL) {
		fprintf(stderr, "sluiced: %s\n", errbuf);
		return 1;
	}
	if (priv_resolve(&s, c) == -1) {
		conf_free(c);
		return 1;
	}
	conf_free(c);
	if (geteuid() == 0) {
		uid = s.run_uid;
		gid = s.run_gid;
	}
	if ((pw = getpwuid(uid)) == NULL || (gr = getgrgid(gid)) == NULL) {
		fprintf(stderr, "sluiced: user %ld or group %ld has no name\n", (long)uid,
		    (long)gid);
		return 1;
	}
	printf("%s:%s\n", pw->pw_name, gr->gr_name);
	return 0;
}

/*
 * Socket ownership.  socket_group, when set, is the group of every socket.  When sluiced
 * drops root (supervisor/priv.c) the sockets belong to its run user and RUNDIR's group.
 * When it keeps root (set user root) they go to the owner of RUNDIR: the generated
 * nginx.conf runs nginx's workers as that user (supervisor/nginx.c).
 */
int
priv_sock_owner(struct sluiced *s, const struct conf *c)
{
	struct group *gr;
	struct stat st;

	s->sock_uid = (uid_t)-1;
	s->sock_gid = (gid_t)-1;
	if (c->socket_group != NULL) {
		if ((gr = getgrnam(c->socket_group)) == NULL) {
			log_err("socket_group %s: no such group", c->socket_group);
			return -1;
		}
		s->sock_gid = gr->gr_gid;
	}
	if (s->drop) {
		/* sluiced's run user owns them (to chmod them later); the web server reaches
		 * them through RUNDIR's group, which priv_rundir() set (supervisor/priv.c). */
		s->sock_uid = s->run_uid;
		if (s->sock_gid == (gid_t)-1 && stat(s->rundir, &st) == 0)
			s->sock_gid = st.st_gid;
	} else if (geteuid() == 0 && stat(s->rundir, &st) == 0 && st.st_uid != 0) {
		s->sock_uid = st.st_uid;
	}
	return 0;
}
