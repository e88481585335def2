/*
 * test_apacheconf.c: the Apache configuration generator (supervisor/apacheconf.c).
 *
 * The reuse rule (P children x max M <= C / 2, M the largest such, M < 1 meaning no reuse)
 * over a grid of pool sizes and child counts, and in the generated tuned file; each
 * profile's characteristic lines; routes as exact (anchored regex) or prefix sections in
 * the order that makes the most specific one win; the cgi profile's environment (absolute
 * SQLite paths, one value per name, other endpoints' keys unset); fcgid's process classes;
 * refused paths; the JSON error documents.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "apacheconf.h"
#include "conf.h"
#include "harness.h"
#include "json.h"

/* Generates apache2.conf for the endpoint list text (caller frees); NULL when refused. */
static char *
gen_opts(const char *text, struct apache_opts *o)
{
	char path[64], *buf = NULL;
	char err[512];
	struct conf *c;
	size_t len = 0;
	FILE *f;
	int fd, rc;

	snprintf(path, sizeof(path), "/tmp/test_apacheconf.XXXXXX");
	if ((fd = mkstemp(path)) == -1 || (f = fdopen(fd, "w")) == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	c = conf_load(path, err, sizeof(err));
	unlink(path);
	if (c == NULL) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	if ((f = open_memstream(&buf, &len)) == NULL) {
		conf_free(c);
		return NULL;
	}
	rc = apache_conf_write(f, c, o);
	fclose(f);
	conf_free(c);
	if (rc == -1) {
		free(buf);
		return NULL;
	}
	return buf;
}

static void
opts_init(struct apache_opts *o, enum apache_profile prof, int p, int reuse)
{
	memset(o, 0, sizeof(*o));
	o->profile = prof;
	o->rundir = "/srv/run";
	o->prefix = "/srv/run/apache";
	o->bindir = "/srv/bin";
	o->cwd = "/srv";
	o->children = p;
	o->reuse = reuse;
}

static char *
gen(const char *text, enum apache_profile prof, int p, int reuse)
{
	struct apache_opts o;

	opts_init(&o, prof, p, reuse);
	return gen_opts(text, &o);
}

/* Position of needle in s, or -1. */
static long
at(const char *s, const char *needle)
{
	const char *p = s != NULL ? strstr(s, needle) : NULL;

	return p != NULL ? p - s : -1;
}

static void
test_profiles(void)
{
	CHECK_INT(apache_profile_parse("default"), APACHE_DEFAULT);
	CHECK_INT(apache_profile_parse("tuned"), APACHE_TUNED);
	CHECK_INT(apache_profile_parse("cgi"), APACHE_CGI);
	CHECK_INT(apache_profile_parse("fcgid"), APACHE_FCGID);
	CHECK_INT(apache_profile_parse("Tuned"), -1);
	CHECK_INT(apache_profile_parse(""), -1);
	CHECK_STR(apache_profile_name(APACHE_FCGID), "fcgid");
	CHECK_STR(apache_profile_name(99), "?");
}

static void
test_reuse_rule(void)
{
	static const struct {
		int cap, p, m;
	} cases[] = {
		{ 8, 2, 2 }, { 8, 1, 4 }, { 4, 2, 1 }, { 3, 2, 0 }, { 1, 1, 0 }, { 2, 1, 1 },
		{ 64, 2, 16 }, { 12, 3, 2 }, { 6, 3, 1 }, { 5, 3, 0 }, { 0, 2, 0 }, { 8, 0, 0 },
	};
	struct apache_opts o;
	size_t i;
	int c, p, m;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (apache_reuse_max(cases[i].cap, cases[i].p) != cases[i].m)
			harness_fail(__FILE__, __LINE__, "C %d P %d: M %d, want %d", cases[i].cap,
			    cases[i].p, apache_reuse_max(cases[i].cap, cases[i].p), cases[i].m);
	/* Pinning cannot happen: P x M <= C / 2 always, and M is the largest such. */
	for (c = 1; c <= 300; c++)
		for (p = 1; p <= 16; p++) {
			m = apache_reuse_max(c, p);
			if (m < 0 || 2 * p * m > c || 2 * p * (m + 1) <= c)
				harness_fail(__FILE__, __LINE__, "C %d P %d: M %d breaks the rule",
				    c, p, m);
		}
	opts_init(&o, APACHE_TUNED, 3, -1);
	CHECK_INT(apache_children_resolve(&o), 3);
	o.children = 0;
	CHECK(apache_children_resolve(&o) >= 1);
}

/* The rule in the generated file, over a grid: every max= respects P x M <= C / 2. */
static void
test_gen_tuned_grid(void)
{
	char text[128], want[96], *s;
	int w, t, p, m;

	for (w = 1; w <= 12; w += 3)
		for (t = 1; t <= 8; t *= 2)
			for (p = 1; p <= 4; p++) {
				snprintf(text, sizeof(text), "e =/e workers=%d threads=%d\n", w, t);
				s = gen(text, APACHE_TUNED, p, -1);
				m = (w * t) / (2 * p);
				if (m >= 1)
					snprintf(want, sizeof(want), "enablereuse=on max=%d retry=0", m);
				else
					snprintf(want, sizeof(want), "enablereuse=off retry=0");
				if (s == NULL || strstr(s, want) == NULL ||
				    (m < 1 && strstr(s, "enablereuse=on") != NULL))
					harness_fail(__FILE__, __LINE__, "C %d P %d: want '%s'", w * t,
					    p, want);
				if (m >= 1 && 2 * p * m > w * t)
					harness_fail(__FILE__, __LINE__, "C %d P %d M %d pins", w * t,
					    p, m);
				free(s);
			}
}

static void
test_gen_tuned(void)
{
	char *s = gen("health =/health workers=8 threads=1\n"
	    "small /small/ workers=3\n"
	    "big /big/ workers=4 threads=4\n", APACHE_TUNED, 2, -1);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	/* P 2: health C 8 -> M 2, small C 3 -> no reuse, big C 16 -> M 4. */
	CHECK(strstr(s, "<Proxy \"unix:/srv/run/health.sock|fcgi://sluice_health\">\n"
	    "\tProxySet enablereuse=on max=2 retry=0\n</Proxy>") != NULL);
	CHECK(strstr(s, "<Proxy \"unix:/srv/run/small.sock|fcgi://sluice_small\">\n"
	    "\t# M < 1: no reuse for this endpoint.\n\tProxySet enablereuse=off retry=0\n"
	    "</Proxy>") != NULL);
	CHECK(strstr(s, "big.sock|fcgi://sluice_big\">\n\tProxySet enablereuse=on max=4 "
	    "retry=0") != NULL);
	CHECK(strstr(s, "<LocationMatch \"^/health$\">\n\tSetHandler "
	    "\"proxy:fcgi://sluice_health\"\n</LocationMatch>") != NULL);
	CHECK(strstr(s, "<Location \"/small/\">\n\tSetHandler \"proxy:fcgi://sluice_small\"\n"
	    "</Location>") != NULL);
	/* Exactly P children, never more: the bound the rule relies on. */
	CHECK(strstr(s, "\tServerLimit 2\n\tStartServers 2\n") != NULL);
	CHECK(strstr(s, "\tThreadsPerChild 64\n\tMaxRequestWorkers 128\n") != NULL);
	CHECK(strstr(s, "\tMaxSpareThreads 128\n") != NULL);
	CHECK(strstr(s, "CustomLog") == NULL);
	CHECK(strstr(s, "Listen 127.0.0.1:8081\n") != NULL);
	CHECK(strstr(s, "ServerRoot \"/srv/run/apache\"\n") != NULL);
	CHECK(strstr(s, "PidFile \"/srv/run/apache/apache2.pid\"\n") != NULL);
	CHECK(strstr(s, "Mutex file:/srv/run/apache/runtime default\n") != NULL);
	CHECK(strstr(s, "DefaultRuntimeDir \"/srv/run/apache/runtime\"\n") != NULL);
	CHECK(strstr(s, "LoadModule proxy_fcgi_module /usr/lib/apache2/modules/"
	    "mod_proxy_fcgi.so\n") != NULL);
	CHECK(strstr(s, "LoadModule mpm_event_module") != NULL);
	CHECK(strstr(s, "/etc/") == NULL);
	CHECK(strstr(s, "Include") == NULL);
	CHECK(strstr(s, "\nUser ") == NULL);
	CHECK(strstr(s, "WARNING") == NULL);
	CHECK(strstr(s, "ErrorDocument 404 /.sluice-errors/404.json\n") != NULL);
	CHECK(strstr(s, "ErrorDocument 502 /.sluice-errors/502.json\n") != NULL);
	CHECK(strstr(s, "LimitRequestBody 1048576\n") != NULL);
	CHECK(strstr(s, "SetEnvIf Request_URI \"^(.*)$\" DOCUMENT_URI=$1\n") != NULL);
	/* The request id: the client's well-formed X-Request-Id, else mod_unique_id's. */
	CHECK(strstr(s, "SetEnvIf X-Request-Id \"^[A-Za-z0-9._:@-]{1,128}$\" REQUEST_ID=$0\n") !=
	    NULL);
	CHECK(strstr(s, "LoadModule unique_id_module /usr/lib/apache2/modules/"
	    "mod_unique_id.so\n") != NULL);
	free(s);
}

static void
test_gen_forced_reuse(void)
{
	char *s;

	/* The warning logged below is expected. */
	/* P 2 x M 8 = 16 > C / 2 = 2: written, with a warning comment. */
	s = gen("health =/health workers=4\n", APACHE_TUNED, 2, 8);
	CHECK(s != NULL && strstr(s, "enablereuse=on max=8 retry=0") != NULL &&
	    strstr(s, "# WARNING: P x M = 16 > C / 2 = 2") != NULL);
	free(s);
	/* A forced value that respects the rule has no warning. */
	s = gen("health =/health workers=8\n", APACHE_TUNED, 2, 1);
	CHECK(s != NULL && strstr(s, "max=1 ") != NULL && strstr(s, "WARNING") == NULL);
	free(s);
}

static void
test_gen_default(void)
{
	char *s = gen("health =/health workers=8\nbig /big/ workers=4 tcp=127.0.0.1:9001\n",
	    APACHE_DEFAULT, 2, -1);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strstr(s, "<LocationMatch \"^/health$\">\n\tSetHandler "
	    "\"proxy:unix:/srv/run/health.sock|fcgi://localhost\"\n</LocationMatch>") != NULL);
	CHECK(strstr(s, "<Location \"/big/\">\n\tSetHandler \"proxy:fcgi://127.0.0.1:9001\"\n"
	    "</Location>") != NULL);
	CHECK(strstr(s, "enablereuse") == NULL);
	CHECK(strstr(s, "<Proxy") == NULL);
	CHECK(strstr(s, "\tThreadsPerChild 25\n\tMaxRequestWorkers 150\n") != NULL);
	CHECK(strstr(s, "CustomLog \"/srv/run/apache/logs/access.log\" common\n") != NULL);
	free(s);
	s = gen("h =/h workers=4 tcp=127.0.0.1:9001\n", APACHE_TUNED, 1, -1);
	CHECK(s != NULL && strstr(s, "<Proxy \"fcgi://127.0.0.1:9001\">\n\tProxySet "
	    "enablereuse=on max=2 retry=0") != NULL &&
	    strstr(s, "SetHandler \"proxy:fcgi://127.0.0.1:9001\"") != NULL);
	free(s);
}

/* nginx picks exact, then the longest prefix; Apache merges matching sections in order,
 * the last one winning: prefixes short to long, then exact ones.  Aliases (cgi, fcgid)
 * take the first match: the reverse order. */
static void
test_gen_routes(void)
{
	const char *text = "root / workers=2\n"
	    "api /api/ workers=2\n"
	    "api_v1 /api/v1/ workers=2\n"
	    "dot =/a.b workers=2\n"
	    "home =/ workers=2\n";
	char *s = gen(text, APACHE_TUNED, 1, -1);
	long root, api, v1, dot;

	CHECK(s != NULL);
	root = at(s, "<Location \"/\">");
	api = at(s, "<Location \"/api/\">");
	v1 = at(s, "<Location \"/api/v1/\">");
	dot = at(s, "<LocationMatch \"^/a\\.b$\">");
	CHECK(root >= 0 && api > root && v1 > api && dot > v1);
	CHECK(at(s, "<LocationMatch \"^/$\">") > v1);
	free(s);

	s = gen(text, APACHE_CGI, 1, -1);
	CHECK(s != NULL);
	root = at(s, "AliasMatch \"^/(.*)$\" \"/srv/bin/root/$1\"");
	api = at(s, "AliasMatch \"^/api/(.*)$\" \"/srv/bin/api/$1\"");
	v1 = at(s, "AliasMatch \"^/api/v1/(.*)$\" \"/srv/bin/api_v1/$1\"");
	dot = at(s, "AliasMatch \"^/a\\.b$\" \"/srv/bin/dot\"");
	CHECK(dot >= 0 && v1 > dot && api > v1 && root > api);
	CHECK(at(s, "AliasMatch \"^/$\" \"/srv/bin/home\"") >= 0);
	free(s);
}

static void
test_gen_cgi(void)
{
	char *s = gen("db main sqlite:data/x.db\ndb pg postgresql:///x?host=/run/pg\n"
	    "health =/health workers=2 body_max=1024 env.color=blue\n"
	    "ready =/ready workers=2 db=main\n"
	    "other =/other workers=2 db=pg binary=tools/other\n", APACHE_CGI, 2, -1);
	long h, r;

	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strstr(s, "LoadModule cgid_module /usr/lib/apache2/modules/mod_cgid.so\n"));
	CHECK(strstr(s, "ScriptSock \"/srv/run/apache/runtime/cgid.sock\"\n") != NULL);
	CHECK(strstr(s, "proxy") == NULL);
	h = at(s, "<LocationMatch \"^/health$\">");
	r = at(s, "<LocationMatch \"^/ready$\">");
	CHECK(h >= 0 && r >= 0);
	/* health: its own body_max only (one value per name), its key, the others' unset. */
	CHECK(strstr(s, "<LocationMatch \"^/health$\">\n\tSetHandler cgi-script\n"
	    "\tOptions +ExecCGI\n\tSetEnv SLUICE_NAME health\n"
	    "\tSetEnv SLUICE_BODY_MAX \"1024\"\n\tSetEnv SLUICE_COLOR \"blue\"\n"
	    "\tUnsetEnv SLUICE_DB\n</LocationMatch>") != NULL);
	/* ready: the global cap, the SQLite path made absolute, color unset. */
	CHECK(strstr(s, "\tSetEnv SLUICE_NAME ready\n\tSetEnv SLUICE_BODY_MAX 1048576\n"
	    "\tSetEnv SLUICE_DB \"sqlite:/srv/data/x.db\"\n\tUnsetEnv SLUICE_COLOR\n") != NULL);
	CHECK(strstr(s, "SetEnv SLUICE_DB \"postgresql:///x?host=/run/pg\"\n") != NULL);
	/* binary= relative to the working directory; its directory is granted. */
	CHECK(strstr(s, "AliasMatch \"^/other$\" \"/srv/tools/other\"\n") != NULL);
	CHECK(strstr(s, "<Directory \"/srv/tools\">\n\tRequire all granted\n") != NULL);
	CHECK(strstr(s, "<Directory \"/srv/bin\">\n\tRequire all granted\n") != NULL);
	free(s);
}

/* "sqlite://data/x.db" is relative like "sqlite:data/x.db" (db_url_parse()): Apache's
 * workers get it made absolute too, and an absolute one unchanged. */
static void
test_gen_sqlite_double_slash_relative(void)
{
	char *s = gen("db rel sqlite://data/y.db\ndb abs sqlite:///var/z.db\n"
	    "ready =/ready workers=2 db=rel\nother =/other workers=2 db=abs\n", APACHE_CGI, 2,
	    -1);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strstr(s, "SetEnv SLUICE_DB \"sqlite:/srv/data/y.db\"\n") != NULL);
	CHECK(strstr(s, "SetEnv SLUICE_DB \"sqlite:///var/z.db\"\n") != NULL);
	free(s);
}

static void
test_gen_fcgid(void)
{
	char *s = gen("db main sqlite:/var/x.db\nhealth =/health workers=3 threads=8\n"
	    "ready =/ready workers=2 db=main body_max=2k\n", APACHE_FCGID, 2, -1);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strstr(s, "LoadModule fcgid_module /usr/lib/apache2/modules/mod_fcgid.so\n"));
	CHECK(strstr(s, "FcgidCmdOptions \"/srv/bin/health\" \\\n\tMaxProcesses 3 "
	    "MinProcesses 0 IdleTimeout 300 IOTimeout 60 \\\n\tInitialEnv SLUICE_NAME=health "
	    "InitialEnv SLUICE_THREADS=1 \\\n\tInitialEnv SLUICE_BODY_MAX=1048576\n") != NULL);
	CHECK(strstr(s, "InitialEnv \"SLUICE_DB=sqlite:/var/x.db\"") != NULL);
	CHECK(strstr(s, "InitialEnv \"SLUICE_BODY_MAX=2k\"") != NULL);
	CHECK(strstr(s, "InitialEnv SLUICE_BODY_MAX=1048576 \\\n\tInitialEnv \"SLUICE_DB") ==
	    NULL);
	CHECK(strstr(s, "FcgidIPCDir \"/srv/run/apache/fcgid\"\n") != NULL);
	CHECK(strstr(s, "FcgidMaxRequestLen 1048576\n") != NULL);
	CHECK(strstr(s, "<LocationMatch \"^/health$\">\n\tSetHandler fcgid-script\n") != NULL);
	CHECK(strstr(s, "AliasMatch \"^/health$\" \"/srv/bin/health\"\n") != NULL);
	free(s);
	/* Two endpoints on one binary cannot have different settings under mod_fcgid. */
	/* The error logged below is expected. */
	s = gen("a =/a workers=1 binary=/x/y\nb =/b workers=1 binary=/x/y\n", APACHE_FCGID,
	    1, -1);
	CHECK(s == NULL);
	free(s);
}

static void
test_gen_refused(void)
{
	struct apache_opts o;
	char *s;

	/* The errors logged below are expected. */
	opts_init(&o, APACHE_TUNED, 1, -1);
	o.rundir = "/srv/my run";
	CHECK((s = gen_opts("h =/h\n", &o)) == NULL);
	free(s);
	opts_init(&o, APACHE_TUNED, 1, -1);
	o.prefix = "/srv/${HOME}";
	CHECK((s = gen_opts("h =/h\n", &o)) == NULL);
	free(s);
	opts_init(&o, APACHE_TUNED, 1, -1);
	o.prefix = "relative/prefix";
	CHECK((s = gen_opts("h =/h\n", &o)) == NULL);
	free(s);
	opts_init(&o, APACHE_TUNED, 1, -1);
	o.listen = "127.0.0.1:80\"\nInclude /etc/x";
	CHECK((s = gen_opts("h =/h\n", &o)) == NULL);
	free(s);
	opts_init(&o, APACHE_CGI, 1, -1);
	o.rundir = "/srv/run/a-socket-directory-with-a-name-that-is-much-too-long-for-sun-path"
	    "-which-holds-only-about-108-bytes";
	CHECK((s = gen_opts("h =/h\n", &o)) == NULL);
	free(s);
	/* mod_qos counts client addresses only: a limit per token needs nginx. */
	opts_init(&o, APACHE_TUNED, 1, -1);
	CHECK((s = gen_opts("h =/h rate=5r/s rate_by=token\n", &o)) == NULL);
	free(s);
}

/* stream=1: left out of every profile (served behind nginx only), with a comment in its
 * place; the other endpoints are served as before. */
static void
test_gen_stream_left_out(void)
{
	static const enum apache_profile profs[] = { APACHE_DEFAULT, APACHE_TUNED, APACHE_CGI,
	    APACHE_FCGID };
	struct apache_opts o;
	char *s;
	size_t i;

	for (i = 0; i < sizeof(profs) / sizeof(profs[0]); i++) {
		opts_init(&o, profs[i], 1, -1);
		s = gen_opts("rt =/api/realtime workers=1 threads=1 stream=1\nh =/h\n", &o);
		CHECK(s != NULL);
		if (s == NULL)
			continue;
		CHECK(strstr(s, "# rt (stream=1): served behind nginx only, left out here.") !=
		    NULL);
		CHECK(strstr(s, "realtime\"") == NULL && strstr(s, "/api/realtime") == NULL);
		CHECK(strstr(s, "/h") != NULL);
		free(s);
	}
}

/* rate=: mod_qos loaded, its window per endpoint, the refusal kept to that endpoint. */
static void
test_gen_rate(void)
{
	struct apache_opts o;
	char *s;

	opts_init(&o, APACHE_TUNED, 1, -1);
	if ((s = gen_opts("h =/h rate=5r/s\nr /r/ rate=600r/m burst=9\nf /f/\n", &o)) == NULL) {
		CHECK(!"generated");
		return;
	}
	CHECK(strstr(s, "LoadModule qos_module ") != NULL);
	CHECK(strstr(s, "QS_ErrorResponseCode 429\n") != NULL);
	CHECK(strstr(s, "SetEnvIf Request_URI \"^/h$\" QS_Limit_h=1 QS_Cond=h\n") != NULL);
	CHECK(strstr(s, "QS_CondClientEventLimitCount 5 1 QS_Limit_h ^h$\n") != NULL);
	CHECK(strstr(s, "QS_CondClientEventLimitCount 600 60 QS_Limit_r ^r$\n") != NULL);
	CHECK(strstr(s, "QS_Limit_f") == NULL);
	CHECK(strstr(s, "ErrorDocument 429 /.sluice-errors/429.json") != NULL);
	free(s);
	/* No rate=: no module. */
	opts_init(&o, APACHE_TUNED, 1, -1);
	if ((s = gen_opts("h =/h\n", &o)) == NULL) {
		CHECK(!"generated");
		return;
	}
	CHECK(strstr(s, "qos") == NULL);
	free(s);
}

static void
test_gen_user(void)
{
	struct apache_opts o;
	char *s;

	opts_init(&o, APACHE_TUNED, 1, -1);
	o.user = "www-data";
	o.group = "www-data";
	o.listen = "127.0.0.1:9999";
	o.comment = "hello";
	s = gen_opts("h =/h\n", &o);
	CHECK(s != NULL && strstr(s, "\nUser www-data\nGroup www-data\n") != NULL &&
	    strstr(s, "Listen 127.0.0.1:9999\n") != NULL && strstr(s, "# hello\n") != NULL);
	free(s);
}

static void
test_error_files(void)
{
	char dir[64], path[128], buf[512];
	static const int statuses[] = { 403, 404, 413, 500, 502, 503, 504 };
	enum json_err e;
	size_t i, n;
	cJSON *v;
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/test_apacheconf.XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(path, sizeof(path), "%s/errors", dir);
	/* No errors directory: refused. */
	CHECK_INT(apache_error_files_write(dir), -1);
	CHECK(mkdir(path, 0755) == 0);
	CHECK_INT(apache_error_files_write(dir), 0);
	for (i = 0; i < sizeof(statuses) / sizeof(statuses[0]); i++) {
		snprintf(path, sizeof(path), "%s/errors/%d.json", dir, statuses[i]);
		n = 0;
		if ((f = fopen(path, "r")) != NULL) {
			n = fread(buf, 1, sizeof(buf) - 1, f);
			fclose(f);
		}
		buf[n] = '\0';
		CHECK_STR(buf, apache_error_body(statuses[i]));
		v = json_parse(buf, n, 4, &e, NULL);
		CHECK(v != NULL && cJSON_IsString(cJSON_GetObjectItem(v, "code")) &&
		    cJSON_IsString(cJSON_GetObjectItem(v, "message")) &&
		    cJSON_IsNull(cJSON_GetObjectItem(v, "details")) &&
		    cJSON_IsNull(cJSON_GetObjectItem(v, "hint")));
		cJSON_Delete(v);
		unlink(path);
	}
	/* The 404 is word for word nginx's. */
	CHECK_STR(apache_error_body(404), "{\"code\":\"not_found\",\"message\":\"no endpoint "
	    "for this path\",\"details\":null,\"hint\":null}");
	CHECK(apache_error_body(200) == NULL);
	snprintf(path, sizeof(path), "%s/errors", dir);
	rmdir(path);
	rmdir(dir);
}

int
main(void)
{
	RUN(test_profiles);
	RUN(test_reuse_rule);
	RUN(test_gen_tuned_grid);
	RUN(test_gen_tuned);
	RUN(test_gen_forced_reuse);
	RUN(test_gen_default);
	RUN(test_gen_routes);
	RUN(test_gen_cgi);
	RUN(test_gen_sqlite_double_slash_relative);
	RUN(test_gen_fcgid);
	RUN(test_gen_refused);
	RUN(test_gen_stream_left_out);
	RUN(test_gen_rate);
	RUN(test_gen_user);
	RUN(test_error_files);
	return harness_done();
}
