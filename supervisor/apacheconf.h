/*
 * apacheconf.h: generates a complete, self-contained Apache 2.4 configuration (Debian's
 * apache2) from the endpoint list, in one of four profiles.
 *
 * default: what a user writes from the mod_proxy_fcgi documentation: one
 *   `SetHandler "proxy:unix:RUNDIR/NAME.sock|fcgi://localhost"` per route, no connection
 *   reuse (mod_proxy_fcgi's default: a new FastCGI connection per request), Debian's stock
 *   event MPM settings, access log on.
 * tuned: one mod_proxy worker per endpoint with enablereuse=on and a per-endpoint pool
 *   size max=M, derived so that the connections Apache can keep open never pin the pool
 *   (docs/fastcgi.md rules 1-2, derivation in apacheconf.c); the event MPM with a fixed
 *   number of children (one per CPU) and threads; access log off.
 * cgi: every route is a CGI script run by mod_cgid (one process per request, serve.c's
 *   CGI mode); the endpoint's SLUICE_* settings reach it through SetEnv.  No sluiced.
 * fcgid: mod_fcgid spawns and manages the endpoint binaries itself (FastCGI over its own
 *   sockets, one request at a time per process).  No sluiced.
 *
 * Every profile runs without touching /etc: `apache2 -f PREFIX/apache2.conf -DFOREGROUND`,
 * with ServerRoot, PidFile, logs, mutexes and runtime files under PREFIX.  Apache's own
 * 403/404/413/500/502/503/504 answer JSON from small files under PREFIX/errors (written by
 * apache_error_files_write()); unknown paths answer the same JSON 404 as nginx's.  Each
 * pool's M, the routes' order and the JSON errors come from the proxy's model (proxy.h),
 * which nginxconf.c writes too.
 */
#ifndef SLUICE_APACHECONF_H
#define SLUICE_APACHECONF_H

#include <stdio.h>

struct conf;

enum apache_profile {
	APACHE_DEFAULT,
	APACHE_TUNED,
	APACHE_CGI,
	APACHE_FCGID,
	APACHE__MAX
};

/* Threads per child process of the tuned event MPM (ThreadsPerChild and ThreadLimit). */
#define APACHE_TUNED_THREADS	64
#define APACHE_LISTEN_DEFAULT	"127.0.0.1:8081"

struct apache_opts {
	enum apache_profile profile;
	const char *rundir;	/* absolute; sockets are RUNDIR/NAME.sock */
	const char *prefix;	/* absolute server root for config, logs, runtime files */
	const char *bindir;	/* absolute; binaries are BINDIR/NAME unless binary= (cgi, fcgid) */
	const char *cwd;	/* absolute; relative binary= and sqlite: paths resolve here */
	const char *listen;	/* NULL: APACHE_LISTEN_DEFAULT */
	int children;		/* event MPM child processes P; 0: online CPUs */
	int reuse;		/* -1: max derived per endpoint; >= 0: forced max for every one */
	const char *user;	/* emit User/Group when non-NULL (Apache started as root) */
	const char *group;	/* with user */
	const char *comment;	/* an extra comment line for the header, or NULL */
};

/* Profile by name ("default", "tuned", "cgi", "fcgid"); -1 when unknown. */
int apache_profile_parse(const char *name);

/* The profile's name; "?" when out of range. */
const char *apache_profile_name(int profile);

/*
 * The derived pool size per child M = floor(capacity / (2 * children)); 0 means that the
 * endpoint gets no connection reuse at all.
 */
int apache_reuse_max(int capacity, int children);

/* P as the generator resolves it: o->children, else online CPUs (at least 1). */
int apache_children_resolve(const struct apache_opts *o);

/*
 * Writes the whole apache2.conf to out.  Returns 0, or -1 when a path or option cannot be
 * pasted into the config (the reason is logged) or a write fails.  A forced reuse that
 * breaks P x M <= C / 2 still writes the file, with a warning comment and a log_warn()
 * line, because the negative-control experiments need it.
 */
int apache_conf_write(FILE *out, const struct conf *c, const struct apache_opts *o);

/*
 * The error documents: writes PREFIX/errors/STATUS.json for every status Apache answers by
 * itself (PREFIX/errors must exist).  Returns 0, or -1 with the reason logged.
 */
int apache_error_files_write(const char *prefix);

/* The JSON body Apache answers with for status, or NULL when it has none.  Static. */
const char *apache_error_body(int status);

#endif /* SLUICE_APACHECONF_H */
