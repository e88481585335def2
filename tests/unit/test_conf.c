/*
 * test_conf.c: the endpoint list parser (supervisor/conf.c) and the nginx.conf generator
 * (supervisor/nginxconf.c).
 *
 * Parser tests are tables: good files with the values they must yield, and one bad file
 * per kind of mistake with the line and the words the error must contain.  Generator
 * tests check the keepalive rule of docs/fastcgi.md rule 2 (W x K <= C / 2, K < 1 means no
 * keepalive at all) over a grid of pool and nginx sizes, and that routes become the right
 * kind of location, and that set nginx_status gives nginx's stub_status a loopback server
 * of its own in both profiles.
 */
#include <arpa/inet.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "harness.h"
#include "log.h"
#include "nginxconf.h"
#include "sluiced.h"

/* Writes text to a fresh temporary file; returns its path in buf (caller unlinks). */
static int
write_tmp(const char *text, char *buf, size_t len)
{
	FILE *f;
	int fd;

	if ((size_t)snprintf(buf, len, "/tmp/test_conf.XXXXXX") >= len)
		return -1;
	if ((fd = mkstemp(buf)) == -1)
		return -1;
	if ((f = fdopen(fd, "w")) == NULL) {
		close(fd);
		return -1;
	}
	fputs(text, f);
	return fclose(f) == 0 ? 0 : -1;
}

/* Parses text; the error (if any) lands in err. */
static struct conf *
load_text(const char *text, char *err, size_t errlen)
{
	char path[64];
	struct conf *c;

	if (write_tmp(text, path, sizeof(path)) == -1) {
		snprintf(err, errlen, "cannot write temp file");
		return NULL;
	}
	c = conf_load(path, err, errlen);
	unlink(path);
	return c;
}

static void
test_shipped_file(void)
{
	char err[512];
	struct conf *c = conf_load("conf/endpoints.conf", err, sizeof(err));
	const struct conf_endpoint *ep;

	CHECK(c != NULL);
	if (c == NULL) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_STR(c->listen, "127.0.0.1:8080");
	CHECK((ep = conf_find(c, "health")) != NULL);
	if (ep != NULL) {
		CHECK_INT(ep->exact, 1);
		CHECK_STR(ep->path, "/health");
		/* Sized by the machine: one worker per two CPUs, 64 threads each. */
		CHECK(ep->workers_auto && ep->threads_auto);
		CHECK_INT(c->cpus, conf_cpus());
		CHECK_INT(ep->workers, (conf_cpus() + 1) / 2);
		CHECK_INT(ep->threads, 64);
		CHECK(ep->db_name == NULL);
	}
	/* The writers stay one process each, whatever the machine: one group commit each. */
	CHECK((ep = conf_find(c, "chat_message_send")) != NULL);
	if (ep != NULL) {
		CHECK(!ep->workers_auto && ep->workers == 1);
		CHECK_INT(ep->threads, 32);
	}
	CHECK((ep = conf_find(c, "rest")) != NULL);
	if (ep != NULL)
		CHECK_INT(ep->kind, CONF_KIND_SQLITE);
	/* The readiness probe names the database the demo writes (a seeded one: workers
	 * never create a database). */
	CHECK((ep = conf_find(c, "ready")) != NULL);
	if (ep != NULL)
		CHECK_STR(ep->db_name, "chat");
	conf_free(c);
}

/* set metrics_listen PORT is on loopback; ADDR:PORT as written; set metrics off. */
static void
test_metrics_listen_port(void)
{
	char err[512];
	struct conf *c = load_text("set metrics_listen 9145\nx /x/\n", err, sizeof(err));

	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(c->metrics_port, 9145);
	CHECK_INT(ntohl(c->metrics_addr), 0x7f000001);
	CHECK_INT(c->metrics, 1);
	conf_free(c);
	c = load_text("set metrics off\nset metrics_listen 10.0.0.2:80\nx /x/\n", err,
	    sizeof(err));
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(c->metrics_port, 80);
	CHECK_INT(ntohl(c->metrics_addr), 0x0a000002);
	CHECK_INT(c->metrics, 0);
	CHECK_INT(c->nginx_status_port, 0);
	conf_free(c);
	c = load_text("set nginx_status 127.0.0.1:9146\nx /x/\n", err, sizeof(err));
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_INT(c->nginx_status_port, 9146);
	conf_free(c);
}

static void
test_good_full(void)
{
	const char *text =
	    "# a comment\n"
	    "\n"
	    "   set listen 0.0.0.0:9000   # trailing comment\n"
	    "set nginx_workers 3\n"
	    "set body_max 8m\n"
	    "set crash_loop_tries 7\n"
	    "set socket_group www-data\n"
	    "set nginx_user www-data:www-data\n"
	    "db chinook sqlite:data/chinook.db\n"
	    "db pg postgresql:///x?host=/var/run/postgresql\n"
	    "rest /rest/v1/ workers=16 threads=2 db=chinook backlog=1024 mode=0600 "
	    "env.page_max=200 env.prefer=on sqlite_mmap=0\n"
	    "\thealth\t=/health\tdb=none binary=/opt/h\n"
	    "chat =/ db=pg\n"
	    "late /late/ db=later\n"
	    "db later sqlite::memory:\n";
	char err[512];
	struct conf *c = load_text(text, err, sizeof(err));
	const struct conf_endpoint *ep;

	CHECK(c != NULL);
	if (c == NULL) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_STR(c->listen, "0.0.0.0:9000");
	CHECK_INT(c->nginx_workers, 3);
	CHECK_INT(c->body_max, 8LL * 1024 * 1024);
	CHECK_INT(c->crash_loop_tries, 7);
	CHECK_STR(c->socket_group, "www-data");
	CHECK_STR(c->nginx_user, "www-data:www-data");
	CHECK_STR(conf_get(c, "listen", NULL), "0.0.0.0:9000");
	CHECK_STR(conf_get(c, "nope", "dflt"), "dflt");
	CHECK_INT(c->neps, 4);
	CHECK_INT(c->ndbs, 3);
	ep = conf_find(c, "rest");
	CHECK(ep != NULL);
	if (ep != NULL) {
		CHECK_INT(ep->exact, 0);
		CHECK_STR(ep->path, "/rest/v1/");
		CHECK_INT(ep->workers, 16);
		CHECK_INT(ep->threads, 2);
		CHECK_INT(ep->backlog, 1024);
		CHECK_INT(ep->mode, 0600);
		CHECK_STR(ep->db_name, "chinook");
		CHECK_STR(ep->db_url, "sqlite:data/chinook.db");
		/* env. keys are kept without env.; a known worker setting as written. */
		CHECK_INT(ep->nextra, 3);
		CHECK_STR(ep->extra[0].key, "page_max");
		CHECK_STR(ep->extra[0].value, "200");
		CHECK_STR(ep->extra[1].key, "prefer");
		CHECK_STR(ep->extra[2].key, "sqlite_mmap");
		CHECK_STR(ep->extra[2].value, "0");
		CHECK(ep->binary == NULL);
	}
	ep = conf_find(c, "health");
	CHECK(ep != NULL);
	if (ep != NULL) {
		CHECK(ep->db_name == NULL);
		CHECK(ep->db_url == NULL);
		CHECK_STR(ep->binary, "/opt/h");
		CHECK_INT(ep->workers, 4);
		CHECK_INT(ep->backlog, 4096);
		CHECK_INT(ep->mode, 0660);
		CHECK_INT(ep->line, 12);
	}
	ep = conf_find(c, "chat");
	CHECK(ep != NULL && ep->exact && strcmp(ep->path, "/") == 0);
	/* A db may be declared after the endpoint that names it. */
	ep = conf_find(c, "late");
	CHECK(ep != NULL && ep->db_url != NULL && strcmp(ep->db_url, "sqlite::memory:") == 0);
	CHECK(conf_find(c, "nope") == NULL);
	conf_free(c);
}

static void
test_defaults(void)
{
	char err[512];
	struct conf *c = load_text("x /x/\n", err, sizeof(err));

	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_STR(c->listen, "127.0.0.1:8080");
	CHECK_INT(c->nginx_workers, 0);
	CHECK_INT(c->body_max, 1024 * 1024);
	CHECK_INT(c->crash_loop_tries, 5);
	CHECK_INT(c->metrics, 1);
	CHECK_INT(c->metrics_port, 0);
	CHECK(c->socket_group == NULL);
	CHECK(c->nginx_user == NULL);
	CHECK_INT(c->eps[0].workers, 4);
	CHECK_INT(c->eps[0].threads, 1);
	conf_free(c);
	c = load_text("", err, sizeof(err));
	CHECK(c != NULL && c->neps == 0);
	conf_free(c);
}

static void
test_db_override(void)
{
	char err[512];
	struct conf *c;

	setenv("SLUICE_DB_CHINOOK", "postgresql:///chinook", 1);
	c = load_text("db chinook sqlite:data/chinook.db\nrest /rest/ db=chinook\n"
	    "db other sqlite:o.db\nx =/x db=other\n", err, sizeof(err));
	unsetenv("SLUICE_DB_CHINOOK");
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_STR(c->eps[0].db_url, "postgresql:///chinook");
	CHECK_STR(c->eps[1].db_url, "sqlite:o.db");
	conf_free(c);
	/* An empty override is no override. */
	setenv("SLUICE_DB_CHINOOK", "", 1);
	c = load_text("db chinook sqlite:a.db\nrest /rest/ db=chinook\n", err, sizeof(err));
	unsetenv("SLUICE_DB_CHINOOK");
	CHECK(c != NULL && strcmp(c->eps[0].db_url, "sqlite:a.db") == 0);
	conf_free(c);
}

/* db_read= names a db line (its override applied) as db= does, or is a URL itself. */
static void
test_db_read(void)
{
	char err[512];
	struct conf *c;

	setenv("SLUICE_DB_REPLICA", "postgresql://h1,h2/app?target_session_attrs=any", 1);
	c = load_text("db main postgresql://h1:5432,h2:5432/app?target_session_attrs=read-write\n"
	    "db replica postgresql:///x\n"
	    "rest /rest/ db=main db_read=replica\n"
	    "raw /raw/ db=main db_read=postgresql://h2/app?target_session_attrs=prefer-standby\n",
	    err, sizeof(err));
	unsetenv("SLUICE_DB_REPLICA");
	CHECK(c != NULL);
	if (c == NULL)
		return;
	CHECK_STR(c->eps[0].db_url,
	    "postgresql://h1:5432,h2:5432/app?target_session_attrs=read-write");
	CHECK_INT(c->eps[0].nextra, 1);
	CHECK_STR(c->eps[0].extra[0].key, "db_read");
	CHECK_STR(c->eps[0].extra[0].value, "postgresql://h1,h2/app?target_session_attrs=any");
	CHECK_STR(c->eps[1].extra[0].value,
	    "postgresql://h2/app?target_session_attrs=prefer-standby");
	conf_free(c);
}

static void
test_bad_lines(void)
{
	static const struct {
		const char *text;
		int line;
		const char *words;	/* must occur in the error */
	} bad[] = {
		{ "bogus\n", 1, "missing ROUTE" },
		{ "Health =/health\n", 1, "bad endpoint name" },
		{ "he-alth =/health\n", 1, "bad endpoint name" },
		{ "1abc =/x\n", 1, "bad endpoint name" },
		{ "abcdefghijabcdefghijabcdefghijab =/x\n", 1, "bad endpoint name" },
		{ "x health\n", 1, "bad route" },
		{ "x =health\n", 1, "bad route" },
		{ "x /a/ b\n", 1, "not KEY=VALUE" },
		{ "x /a;/\n", 1, "bad route" },
		{ "x /a//b\n", 1, "bad route" },
		{ "x /a/../b\n", 1, "bad route" },
		{ "x /a/{}\n", 1, "bad route" },
		{ "x /x/\ny /x/\n", 2, "already used" },
		{ "x /x/\n#\nx /y/\n", 3, "declared twice" },
		{ "x /x/ workers=0\n", 1, "out of range" },
		{ "x /x/ workers=1025\n", 1, "out of range" },
		{ "x /x/ workers=-1\n", 1, "out of range" },
		{ "x /x/ workers=+4\n", 1, "out of range" },
		{ "x /x/ workers=4x\n", 1, "out of range" },
		{ "x /x/ workers= \n", 1, "empty value" },
		{ "x /x/ workers=99999999999999999999\n", 1, "out of range" },
		{ "x /x/ threads=0\n", 1, "out of range" },
		{ "x /x/ workers=AUTO\n", 1, "out of range" },
		{ "x /x/ threads=auto2\n", 1, "out of range" },
		{ "x /x/ workers=auto workers=2\n", 1, "given twice" },
		{ "set cpus 0\n", 1, "cpus" },
		{ "set cpus 1025\n", 1, "cpus" },
		{ "set cpus auto\n", 1, "cpus" },
		{ "set cpus 2\nset cpus 2\n", 2, "given twice" },
		{ "x /x/ backlog=70000\n", 1, "out of range" },
		{ "x /x/ mode=0999\n", 1, "octal" },
		{ "x /x/ mode=1777\n", 1, "octal" },
		{ "x /x/ workers=2 workers=3\n", 1, "twice" },
		{ "x /x/ tcp=9001\n", 1, "IPv4 address and a port" },
		{ "x /x/ tcp=:9001\n", 1, "IPv4 address and a port" },
		{ "x /x/ tcp=localhost:9001\n", 1, "IPv4 address and a port" },
		{ "x /x/ tcp=127.0.0.1:0\n", 1, "IPv4 address and a port" },
		{ "x /x/ tcp=127.0.0.1:65536\n", 1, "IPv4 address and a port" },
		{ "x /x/ tcp=127.0.0.1:90x\n", 1, "IPv4 address and a port" },
		{ "x /x/ tcp=1.2.3.4.5:9\n", 1, "IPv4 address and a port" },
		{ "x /x/ env.foo=1 env.foo=2\n", 1, "twice" },
		/* rate=, burst=, rate_by=: the proxy's request limit. */
		{ "x /x/ rate=10\n", 1, "like 10r/s or 600r/m" },
		{ "x /x/ rate=10r/h\n", 1, "like 10r/s or 600r/m" },
		{ "x /x/ rate=r/s\n", 1, "like 10r/s or 600r/m" },
		{ "x /x/ rate=0r/s\n", 1, "out of range" },
		{ "x /x/ rate=100001r/s\n", 1, "out of range" },
		{ "x /x/ rate=-1r/s\n", 1, "out of range" },
		{ "x /x/ rate=10r/s burst=-1\n", 1, "burst wants a count" },
		{ "x /x/ rate=10r/s burst=100001\n", 1, "burst wants a count" },
		{ "x /x/ rate=10r/s rate_by=ip\n", 1, "rate_by wants addr or token" },
		{ "x /x/ burst=5\n", 1, "need a rate" },
		{ "x /x/ rate_by=token\n", 1, "need a rate" },
		/* stream=1: one process of one thread, said on the line. */
		{ "x =/x stream=2 workers=1 threads=1\n", 1, "stream wants 1" },
		{ "x =/x stream=1\n", 1, "write workers=1 threads=1" },
		{ "x =/x stream=1 workers=2 threads=1\n", 1, "write workers=1 threads=1" },
		{ "x =/x stream=1 workers=1 threads=auto\n", 1, "write workers=1 threads=1" },
		{ "x =/x stream=1 workers=auto threads=1\n", 1, "write workers=1 threads=1" },
		{ "x /x/ rate=1r/s rate=2r/s\n", 1, "twice" },
		{ "x /x/ sqlite_mmap=0 sqlite_mmap=1\n", 1, "twice" },
		{ "x /x/ env.name=y\n", 1, "reserved" },
		{ "x /x/ env.route=/y\n", 1, "reserved" },
		/* Unknown keys: a typo is caught, with its line and the nearest key. */
		{ "x /x/ workres=2\n", 1, "unknown key 'workres' (did you mean workers?)" },
		{ "x /x/\ny =/y threads=2 sqlite_mmpa=0\n", 2,
		    "unknown key 'sqlite_mmpa' (did you mean sqlite_mmap?)" },
		{ "x /x/ name=y\n", 1, "unknown key 'name' (the keys are" },
		{ "x /x/ treads=2\n", 1, "(did you mean threads?)" },
		{ "x /x/ page_max=200\n", 1, "written env.page_max=VALUE" },
		/* env. is for a handler's own settings; what sluice knows has one spelling. */
		{ "x /x/ env.workers=2\n", 1, "write workers=2, without env." },
		{ "x /x/ env.sqlite_mmap=0\n", 1, "write sqlite_mmap=0, without env." },
		{ "x /x/ env.Foo=1\n", 1, "bad key" },
		{ "x /x/ env.=1\n", 1, "bad key" },
		{ "x /x/ env.foo=a;b\n", 1, "not allowed" },
		/* A route must say whether it is exact or a prefix. */
		{ "x /hello3\n", 1, "route /hello3 is ambiguous: write =/hello3 for an exact "
		    "route, /hello3/ for a prefix" },
		{ "x /x/\nhello3 /a/b workers=2\n", 2, "=/a/b for an exact route, /a/b/ for" },
		{ "x /x/ Foo=1\n", 1, "bad key" },
		{ "x /x/ =1\n", 1, "bad key" },
		{ "x /x/ foo=a;b\n", 1, "not allowed" },
		{ "x /x/ foo=\"a\"\n", 1, "not allowed" },
		{ "x /x/ db=nope\n", 1, "not declared" },
		{ "\n\nx /x/ db=nope\ndb other sqlite:x\n", 3, "not declared" },
		{ "set\n", 1, "exactly KEY VALUE" },
		{ "set listen\n", 1, "exactly KEY VALUE" },
		{ "set listen a b\n", 1, "exactly KEY VALUE" },
		{ "set lisen 1\n", 1, "unknown setting" },
		{ "set listen 1\nset listen 2\n", 2, "twice" },
		{ "set listen a;b\n", 1, "not allowed" },
		{ "set nginx_workers -1\n", 1, "nginx_workers" },
		{ "set nginx_workers 2000\n", 1, "nginx_workers" },
		{ "set body_max 0\n", 1, "body_max" },
		{ "set body_max 2g\n", 1, "body_max" },
		{ "set body_max 1025m\n", 1, "body_max" },
		{ "set body_max k\n", 1, "body_max" },
		{ "set crash_loop_tries 0\n", 1, "crash_loop_tries" },
		{ "set access_log yes\n", 1, "access_log: want on, off or json" },
		{ "set access_log JSON\n", 1, "access_log: want on, off or json" },
		{ "set access_log on\nset access_log off\n", 2, "twice" },
		{ "set metrics yes\n", 1, "metrics: want on or off" },
		{ "set metrics_listen x\n", 1, "metrics_listen" },
		{ "set metrics_listen 0\n", 1, "metrics_listen" },
		{ "set metrics_listen 65536\n", 1, "metrics_listen" },
		{ "set metrics_listen :9145\n", 1, "metrics_listen" },
		{ "set metrics_listen 1.2.3:9145\n", 1, "metrics_listen" },
		{ "set metrics_listen localhost:9145\n", 1, "metrics_listen" },
		{ "set metrics_listen 127.0.0.1:\n", 1, "metrics_listen" },
		{ "set nginx_status x\n", 1, "nginx_status: want a port" },
		{ "set nginx_status 0\n", 1, "nginx_status: want a port" },
		{ "set nginx_status 65536\n", 1, "nginx_status: want a port" },
		{ "set nginx_status 10.0.0.2:9146\n", 1, "nginx_status: want a port" },
		{ "set nginx_status 0.0.0.0:9146\n", 1, "nginx_status: want a port" },
		{ "set nginx_status 127.0.0.1:\n", 1, "nginx_status: want a port" },
		{ "set nginx_status 9146\nset nginx_status 9147\n", 2, "twice" },
		{ "set metrics_listen 9146\nset nginx_status 9146\n", 2,
		    "nginx_status: port 9146 is metrics_listen's" },
		{ "db\n", 1, "exactly NAME URL" },
		{ "db x\n", 1, "exactly NAME URL" },
		{ "db X sqlite:x\n", 1, "bad db name" },
		{ "db none sqlite:x\n", 1, "bad db name" },
		{ "db x sqlite:x\ndb x sqlite:y\n", 2, "declared twice" },
	};
	char err[512], want[64];
	struct conf *c;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		c = load_text(bad[i].text, err, sizeof(err));
		if (c != NULL) {
			harness_fail(__FILE__, __LINE__, "case %zu (%s) parsed", i, bad[i].text);
			conf_free(c);
			continue;
		}
		snprintf(want, sizeof(want), ":%d: ", bad[i].line);
		if (strstr(err, want) == NULL || strstr(err, bad[i].words) == NULL)
			harness_fail(__FILE__, __LINE__, "case %zu: error '%s', want line %d and "
			    "'%s'", i, err, bad[i].line, bad[i].words);
	}
}

/* workers=auto / threads=auto: the rule of conf_auto_size() over machine sizes and kinds. */
static void
test_auto_rule(void)
{
	static const struct {
		enum conf_kind kind;
		int cpus, workers, threads;
	} cases[] = {
		{ CONF_KIND_CPU, 0, 1, 64 },
		{ CONF_KIND_CPU, 1, 1, 64 },
		{ CONF_KIND_CPU, 2, 1, 64 },
		{ CONF_KIND_CPU, 3, 2, 64 },
		{ CONF_KIND_CPU, 4, 2, 64 },
		{ CONF_KIND_CPU, 64, 32, 64 },
		{ CONF_KIND_SQLITE, 2, 1, 64 },
		{ CONF_KIND_SQLITE, 8, 4, 64 },
		{ CONF_KIND_SQLITE, 64, 32, 64 },
		{ CONF_KIND_PG, 1, 1, 64 },
		{ CONF_KIND_PG, 2, 1, 64 },
		{ CONF_KIND_PG, 8, 4, 64 },
		{ CONF_KIND_PG, 64, 4, 64 },
		{ CONF_KIND_PG, 1024, 4, 64 },
	};
	size_t i;
	int w, t;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		w = t = -1;
		conf_auto_size(cases[i].kind, cases[i].cpus, &w, &t);
		CHECK_INT(w, cases[i].workers);
		CHECK_INT(t, cases[i].threads);
	}
}

/* The CPUs a process may use: online CPUs, its affinity mask and its cgroup's quota. */
static void
test_cpus_limit(void)
{
	static const struct {
		long online, affinity;
		const char *cpu_max;
		int want;
	} cases[] = {
		{ 64, 0, NULL, 64 },
		{ 64, 64, "max 100000", 64 },
		{ 64, 2, NULL, 2 },		/* taskset -c 0,1 */
		{ 2, 64, NULL, 2 },
		{ 64, 64, "200000 100000", 2 },	/* a quota of two CPUs */
		{ 64, 64, "150000 100000", 2 },	/* 1.5 CPUs: rounded up */
		{ 64, 64, "50000 100000", 1 },
		{ 64, 8, "400000 100000", 4 },
		{ 4, 4, "1600000 100000", 4 },
		{ 64, 64, "junk", 64 },
		{ 64, 64, "-1 100000", 64 },
		{ 64, 64, "100000 0", 64 },
		{ 64, 64, "", 64 },
		{ -1, 0, NULL, 1024 },	/* nothing known: the cap */
		{ -1, 3, NULL, 3 },
		{ 5000, 0, NULL, 1024 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		CHECK_INT(conf_cpus_limit(cases[i].online, cases[i].affinity, cases[i].cpu_max),
		    cases[i].want);
	CHECK(conf_cpus() >= 1 && conf_cpus() <= sysconf(_SC_NPROCESSORS_ONLN));
}

/* auto on endpoint lines: resolved from set cpus (or the machine) and the db's kind. */
static void
test_auto_lines(void)
{
	const char *text =
	    "set cpus 8\n"
	    "db lite sqlite:x.db\n"
	    "db pg postgresql:///x\n"
	    "h =/h workers=auto threads=auto\n"
	    "s =/s workers=auto threads=auto db=lite\n"
	    "p =/p workers=auto threads=auto db=pg\n"
	    "w =/w workers=1 threads=auto db=lite\n"
	    "t =/t workers=auto threads=3\n";
	char err[512];
	struct conf *c = load_text(text, err, sizeof(err));
	const struct conf_endpoint *ep;

	CHECK(c != NULL);
	if (c == NULL) {
		fprintf(stderr, "%s\n", err);
		return;
	}
	CHECK_INT(c->cpus, 8);
	CHECK_INT(c->cpus_set, 1);
	if ((ep = conf_find(c, "h")) != NULL) {
		CHECK_INT(ep->kind, CONF_KIND_CPU);
		CHECK_INT(ep->workers, 4);
		CHECK_INT(ep->threads, 64);
	} else
		CHECK(ep != NULL);
	if ((ep = conf_find(c, "s")) != NULL) {
		CHECK_INT(ep->kind, CONF_KIND_SQLITE);
		CHECK_INT(ep->workers, 4);
		CHECK_INT(ep->threads, 64);
	} else
		CHECK(ep != NULL);
	if ((ep = conf_find(c, "p")) != NULL) {
		CHECK_INT(ep->kind, CONF_KIND_PG);
		CHECK_INT(ep->workers, 4);
		CHECK_INT(ep->threads, 64);
	} else
		CHECK(ep != NULL);
	if ((ep = conf_find(c, "w")) != NULL) {
		CHECK(!ep->workers_auto && ep->threads_auto);
		CHECK_INT(ep->workers, 1);
		CHECK_INT(ep->threads, 64);
	} else
		CHECK(ep != NULL);
	if ((ep = conf_find(c, "t")) != NULL) {
		CHECK(ep->workers_auto && !ep->threads_auto);
		CHECK_INT(ep->workers, 4);
		CHECK_INT(ep->threads, 3);
	} else
		CHECK(ep != NULL);
	conf_free(c);
	/* The override of a db's URL decides its kind: SQLite in the file, PostgreSQL here. */
	setenv("SLUICE_DB_LITE", "postgresql:///lite", 1);
	c = load_text("set cpus 2\ndb lite sqlite:x.db\ns =/s workers=auto threads=auto db=lite\n",
	    err, sizeof(err));
	unsetenv("SLUICE_DB_LITE");
	CHECK(c != NULL && c->eps[0].kind == CONF_KIND_PG && c->eps[0].workers == 1 &&
	    c->eps[0].threads == 64);
	conf_free(c);
	/* Without set cpus, the machine's. */
	c = load_text("h =/h workers=auto\n", err, sizeof(err));
	CHECK(c != NULL && c->cpus == conf_cpus() && !c->cpus_set &&
	    c->eps[0].workers == (conf_cpus() + 1) / 2 && c->eps[0].threads == 1);
	conf_free(c);
}

static void
test_bad_file(void)
{
	char err[512], text[2048];
	struct conf *c;

	c = conf_load("/nonexistent/endpoints.conf", err, sizeof(err));
	CHECK(c == NULL);
	CHECK(strstr(err, "/nonexistent/endpoints.conf:0: ") != NULL);
	/* A line over CONF_LINE_MAX. */
	memset(text, 'a', sizeof(text));
	memcpy(text, "x /x/ k=", 8);
	text[sizeof(text) - 2] = '\n';
	text[sizeof(text) - 1] = '\0';
	c = load_text(text, err, sizeof(err));
	CHECK(c == NULL && strstr(err, ":1: line longer") != NULL);
	conf_free(c);
	/* Too many extra keys. */
	c = load_text("x /x/ env.a=1 env.b=1 env.c=1 env.d=1 env.e=1 env.f=1 env.g=1 env.h=1 "
	    "env.i=1 env.j=1 env.k=1 env.l=1 env.m=1 env.n=1 env.o=1 env.p=1 env.q=1\n", err,
	    sizeof(err));
	CHECK(c == NULL && strstr(err, "too many") != NULL);
	conf_free(c);
	/* A tiny error buffer truncates but stays a string. */
	c = load_text("bogus\n", err, 8);
	CHECK(c == NULL && strlen(err) == 7);
}

/* The app hosts gen() passes (a load balancer's file), or NULL. */
static const char *gen_hosts;

/* Generates nginx.conf for text into a malloc'ed string (caller frees). */
static char *
gen(const char *text, enum nginx_profile prof, int w, int k)
{
	struct nginx_opts o;
	char err[512], *buf = NULL;
	size_t len = 0;
	struct conf *c;
	FILE *f;
	int rc;

	if ((c = load_text(text, err, sizeof(err))) == NULL) {
		fprintf(stderr, "%s\n", err);
		return NULL;
	}
	memset(&o, 0, sizeof(o));
	o.profile = prof;
	o.rundir = "/srv/run";
	o.prefix = "/srv/run/nginx";
	o.workers = w;
	o.keepalive = k;
	o.hosts = gen_hosts;
	if ((f = open_memstream(&buf, &len)) == NULL) {
		conf_free(c);
		return NULL;
	}
	rc = nginx_conf_write(f, c, &o);
	fclose(f);
	conf_free(c);
	if (rc == -1) {
		free(buf);
		return NULL;
	}
	return buf;
}

/*
 * gen() of text for profile prof with w nginx workers and the rule's keepalive, checked
 * to hold every one of want[0..n): each one missing fails the running test, naming the
 * profile; a list that does not generate fails it once.  The file (caller frees), or NULL.
 */
static char *
gen_want(const char *text, enum nginx_profile prof, int w, const char *const *want,
    size_t n)
{
	char *s = gen(text, prof, w, -1);
	size_t i;

	CHECK(s != NULL);
	for (i = 0; s != NULL && i < n; i++)
		if (strstr(s, want[i]) == NULL)
			harness_fail(__FILE__, __LINE__, "profile %d: no \"%s\"", (int)prof,
			    want[i]);
	return s;
}

static void
test_keepalive_rule(void)
{
	static const struct {
		int cap, w, k;
	} cases[] = {
		{ 8, 2, 2 }, { 8, 1, 4 }, { 4, 2, 1 }, { 3, 2, 0 }, { 1, 1, 0 }, { 2, 1, 1 },
		{ 32, 2, 8 }, { 12, 3, 2 }, { 6, 3, 1 }, { 5, 3, 0 }, { 0, 2, 0 }, { 8, 0, 0 },
	};
	size_t i;
	int c, w, k;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (nginx_keepalive(cases[i].cap, cases[i].w) != cases[i].k)
			harness_fail(__FILE__, __LINE__, "C %d W %d: K %d, want %d", cases[i].cap,
			    cases[i].w, nginx_keepalive(cases[i].cap, cases[i].w), cases[i].k);
	/* The rule itself, over a grid: W x K <= C / 2, and K is the largest such. */
	for (c = 1; c <= 300; c++)
		for (w = 1; w <= 16; w++) {
			k = nginx_keepalive(c, w);
			if (2 * w * k > c || 2 * w * (k + 1) <= c)
				harness_fail(__FILE__, __LINE__, "C %d W %d: K %d breaks the rule",
				    c, w, k);
		}
}

static void
test_gen_tuned(void)
{
	char *s = gen("set nginx_workers 2\n"
	    "health =/health workers=8 threads=1\n"
	    "small /small/ workers=3\n"
	    "big /big/ workers=4 threads=4\n", NGINX_TUNED, 0, -1);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	/* W from the conf (2): health C 8 -> K 2, small C 3 -> none, big C 16 -> K 4. */
	CHECK(strstr(s, "worker_processes 2;\n") != NULL);
	/* Each pool K + 3 times, at least 3 (so that a GET caught by a dying worker is
	 * retried past that worker's other kept-alive connections, then twice more on fresh
	 * ones), never marked down. */
	CHECK(strstr(s, "upstream sluice_health {\n"
	    "\t\tserver unix:/srv/run/health.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/health.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/health.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/health.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/health.sock max_fails=0;\n"
	    "\t\tkeepalive 2;\n\t}") != NULL);
	CHECK(strstr(s, "upstream sluice_small {\n"
	    "\t\tserver unix:/srv/run/small.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/small.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/small.sock max_fails=0;\n\t}") != NULL);
	CHECK(strstr(s, "upstream sluice_big {\n"
	    "\t\tserver unix:/srv/run/big.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/big.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/big.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/big.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/big.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/big.sock max_fails=0;\n"
	    "\t\tserver unix:/srv/run/big.sock max_fails=0;\n"
	    "\t\tkeepalive 4;\n\t}") != NULL);
	CHECK(strstr(s, "server_tokens off;") != NULL);
	CHECK(strstr(s, "add_header X-Content-Type-Options nosniff always;") != NULL);
	CHECK(strstr(s, "location = /health {\n\t\t\tfastcgi_pass sluice_health;\n"
	    "\t\t\tfastcgi_keep_conn on;\n\t\t}") != NULL);
	CHECK(strstr(s, "location /small/ {\n\t\t\tfastcgi_pass sluice_small;\n\t\t}") != NULL);
	CHECK(strstr(s, "location /big/ {\n\t\t\tfastcgi_pass sluice_big;\n"
	    "\t\t\tfastcgi_keep_conn on;\n\t\t}") != NULL);
	CHECK(strstr(s, "fastcgi_next_upstream error timeout invalid_header;") != NULL);
	CHECK(strstr(s, "fastcgi_next_upstream_tries 0;") != NULL);
	CHECK(strstr(s, "fastcgi_next_upstream_timeout 60s;") != NULL);
	CHECK(strstr(s, "non_idempotent") == NULL);
	CHECK(strstr(s, "access_log off;") != NULL);
	CHECK(strstr(s, "worker_rlimit_nofile 65536;") != NULL);
	CHECK(strstr(s, "pid /srv/run/nginx/nginx.pid;") != NULL);
	CHECK(strstr(s, "fastcgi_temp_path /srv/run/nginx/fastcgi_temp;") != NULL);
	CHECK(strstr(s, "listen 127.0.0.1:8080 backlog=4096 reuseport;") != NULL);
	CHECK(strstr(s, "multi_accept on;") != NULL);
	CHECK(strstr(s, "client_max_body_size 1048576;") != NULL);
	CHECK(strstr(s, "return 404 '{\"code\":\"not_found\"") != NULL);
	CHECK(strstr(s, "include") == NULL);
	CHECK(strstr(s, "WARNING") == NULL);
	free(s);

	/* -w overrides the conf: W 4, health C 8 -> K 1, big C 16 -> K 2. */
	s = gen("set nginx_workers 2\nhealth =/health workers=8\nbig /big/ workers=16\n",
	    NGINX_TUNED, 4, -1);
	CHECK(s != NULL && strstr(s, "worker_processes 4;") != NULL &&
	    strstr(s, "health.sock max_fails=0;\n\t\tkeepalive 1;") != NULL &&
	    strstr(s, "big.sock max_fails=0;\n\t\tkeepalive 2;") != NULL);
	free(s);
}

/* A pool on TCP: both profiles point at ADDR:PORT instead of the unix socket. */
static void
test_gen_tcp(void)
{
	char *s = gen("set nginx_workers 1\nh =/h workers=4 tcp=127.0.0.1:9001\n",
	    NGINX_TUNED, 0, -1);

	CHECK(s != NULL && strstr(s, "upstream sluice_h {\n\t\tserver 127.0.0.1:9001 "
	    "max_fails=0;\n\t\tserver 127.0.0.1:9001 max_fails=0;\n\t\tserver 127.0.0.1:9001 "
	    "max_fails=0;\n\t\tserver 127.0.0.1:9001 max_fails=0;\n\t\tserver 127.0.0.1:9001 "
	    "max_fails=0;\n\t\tkeepalive 2;") != NULL &&
	    strstr(s, "h.sock") == NULL);
	free(s);
	s = gen("h =/h workers=4 tcp=127.0.0.1:9001\n", NGINX_DEFAULT, 0, -1);
	CHECK(s != NULL && strstr(s, "fastcgi_pass 127.0.0.1:9001;") != NULL);
	free(s);
}

/*
 * set pool_address, and SLUICE_POOL_ADDRESS over it: every tcp= pool binds the host's own
 * address, the port stays; unix-socket pools are untouched; a bad address is refused.
 */
static void
test_pool_address(void)
{
	static const char list[] = "set pool_address 10.0.0.2\n"
	    "a =/a tcp=127.0.0.1:9001\nb =/b\nc /c/ tcp=0.0.0.0:9003\n";
	char err[512];
	struct conf *c;

	unsetenv("SLUICE_POOL_ADDRESS");
	c = load_text(list, err, sizeof(err));
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_STR(c->eps[0].tcp, "10.0.0.2:9001");
		CHECK(c->eps[1].tcp == NULL);
		CHECK_STR(c->eps[2].tcp, "10.0.0.2:9003");
	}
	conf_free(c);
	/* The environment wins: one list, each app host its own address. */
	setenv("SLUICE_POOL_ADDRESS", "10.231.1.12", 1);
	c = load_text(list, err, sizeof(err));
	CHECK(c != NULL);
	if (c != NULL) {
		CHECK_STR(c->eps[0].tcp, "10.231.1.12:9001");
		CHECK_STR(c->eps[2].tcp, "10.231.1.12:9003");
	}
	conf_free(c);
	c = load_text("a =/a tcp=127.0.0.1:9001\n", err, sizeof(err));
	CHECK(c != NULL && strcmp(c->eps[0].tcp, "10.231.1.12:9001") == 0);
	conf_free(c);
	/* Without either, tcp= keeps its own address. */
	unsetenv("SLUICE_POOL_ADDRESS");
	c = load_text("a =/a tcp=127.0.0.1:9001\n", err, sizeof(err));
	CHECK(c != NULL && strcmp(c->eps[0].tcp, "127.0.0.1:9001") == 0);
	conf_free(c);
	/* Not an IPv4 address: refused, from the list or from the environment. */
	c = load_text("set pool_address app1.internal\na =/a tcp=127.0.0.1:9001\n", err,
	    sizeof(err));
	CHECK(c == NULL && strstr(err, "pool_address app1.internal") != NULL);
	setenv("SLUICE_POOL_ADDRESS", "10.0.0.300", 1);
	c = load_text("a =/a tcp=127.0.0.1:9001\n", err, sizeof(err));
	CHECK(c == NULL && strstr(err, "pool_address 10.0.0.300") != NULL);
	setenv("SLUICE_POOL_ADDRESS", "10.0.0.1:80", 1);
	c = load_text("a =/a tcp=127.0.0.1:9001\n", err, sizeof(err));
	CHECK(c == NULL && strstr(err, "want a dotted IPv4 address") != NULL);
	unsetenv("SLUICE_POOL_ADDRESS");
}

/*
 * A load balancer's file (-H): each upstream lists every app host once at the pool's port,
 * with passive health checks; GETs move to the next host on error or timeout, at
 * most once per host; POSTs are never replayed (no non_idempotent).
 */
static void
test_gen_hosts(void)
{
	static const char list[] = "set nginx_workers 2\n"
	    "set pool_address 10.0.0.9\n"
	    "health =/health workers=8 threads=1 tcp=127.0.0.1:9001\n"
	    "rest /rest/v1/ workers=2 threads=1 tcp=127.0.0.1:9002\n";
	char *s;

	gen_hosts = "10.231.1.11,10.231.1.12";
	s = gen(list, NGINX_TUNED, 0, -1);
	CHECK(s != NULL);
	if (s == NULL)
		goto out;
	/*
	 * K is worker_connections / 2 whatever the pools (health C 8, rest C 2, which on one
	 * host give 2 and none): the load balancer keeps every connection it opens, since
	 * one it closed would sit in TIME_WAIT on its side.
	 */
	CHECK(nginx_lb_keepalive() == 2048);
	CHECK(strstr(s, "upstream sluice_health {\n"
	    "\t\tserver 10.231.1.11:9001 max_fails=2 fail_timeout=5s;\n"
	    "\t\tserver 10.231.1.12:9001 max_fails=2 fail_timeout=5s;\n"
	    "\t\tkeepalive 2048;\n\t}") != NULL);
	CHECK(strstr(s, "upstream sluice_rest {\n"
	    "\t\tserver 10.231.1.11:9002 max_fails=2 fail_timeout=5s;\n"
	    "\t\tserver 10.231.1.12:9002 max_fails=2 fail_timeout=5s;\n"
	    "\t\tkeepalive 2048;\n\t}") != NULL);
	CHECK(strstr(s, "worker_connections 4096;") != NULL);
	free(s);
	/* A binary= pool may be a plain fcgi2 program that pins threads: rule 2's K. */
	s = gen("set nginx_workers 2\nhello =/hello workers=8 threads=1 binary=/bin/true "
	    "tcp=127.0.0.1:9009\n", NGINX_TUNED, 0, -1);
	CHECK(s != NULL && strstr(s, "server 10.231.1.12:9009 max_fails=2 fail_timeout=5s;\n"
	    "\t\tkeepalive 2;\n\t}") != NULL);
	free(s);
	s = gen(list, NGINX_TUNED, 0, -1);
	if (s == NULL)
		goto out;
	/* The load balancer's own pool address is no app host's. */
	CHECK(strstr(s, "10.0.0.9") == NULL);
	CHECK(strstr(s, "max_fails=0") == NULL);
	/* Neither http_502 (nginx has none for FastCGI) nor http_503 (a database failover
	 * would take every host out of rotation). */
	CHECK(strstr(s, "fastcgi_next_upstream error timeout invalid_header;\n") != NULL);
	CHECK(strstr(s, "http_50") == NULL);
	CHECK(strstr(s, "fastcgi_next_upstream_tries 2;\n") != NULL);
	CHECK(strstr(s, "fastcgi_next_upstream_timeout 10s;\n") != NULL);
	CHECK(strstr(s, "fastcgi_connect_timeout 2s;\n") != NULL);
	CHECK(strstr(s, "non_idempotent") == NULL);
	CHECK(strstr(s, "location = /health {\n\t\t\tfastcgi_pass sluice_health;\n"
	    "\t\t\tfastcgi_keep_conn on;\n\t\t}") != NULL);
	CHECK(strstr(s, "location /rest/v1/ {\n\t\t\tfastcgi_pass sluice_rest;\n"
	    "\t\t\tfastcgi_keep_conn on;\n\t\t}") != NULL);
	CHECK(strstr(s, "# Load balancer for the app hosts 10.231.1.11,10.231.1.12") != NULL);
	free(s);

	/* The access log, when on, names the host(s) each request went to. */
	s = gen("set access_log on\nh =/h workers=4 tcp=127.0.0.1:9001\n", NGINX_TUNED, 1, -1);
	CHECK(s != NULL && strstr(s, "\tlog_format sluice_lb '$remote_addr [$time_local] "
	    "\"$request\" $status $body_bytes_sent upstream=$upstream_addr "
	    "upstream_status=$upstream_status upstream_connect=$upstream_connect_time "
	    "$request_time';\n"
	    "\taccess_log /srv/run/nginx/logs/access.log sluice_lb;\n") != NULL);
	free(s);
	s = gen("h =/h workers=4 tcp=127.0.0.1:9001\n", NGINX_TUNED, 1, -1);
	CHECK(s != NULL && strstr(s, "access_log off;") != NULL &&
	    strstr(s, "log_format") == NULL);
	free(s);

	/* One app host: the single-host upstream (the pool listed the single-host K + 3
	 * times, never marked down, tries bounded by the entries) at that host's address,
	 * with the load balancer's K. */
	gen_hosts = "10.0.1.1";
	s = gen(list, NGINX_TUNED, 0, -1);
	CHECK(s != NULL && strstr(s, "upstream sluice_health {\n"
	    "\t\tserver 10.0.1.1:9001 max_fails=0;\n\t\tserver 10.0.1.1:9001 max_fails=0;\n"
	    "\t\tserver 10.0.1.1:9001 max_fails=0;\n\t\tserver 10.0.1.1:9001 max_fails=0;\n"
	    "\t\tserver 10.0.1.1:9001 max_fails=0;\n\t\tkeepalive 2048;\n\t}") != NULL &&
	    strstr(s, "fastcgi_next_upstream_tries 0;") != NULL &&
	    strstr(s, "10.0.0.9") == NULL && strstr(s, "fail_timeout") == NULL);
	free(s);

	/* Three hosts: three tries. */
	gen_hosts = "10.0.1.1,10.0.1.2,10.0.1.3";
	s = gen(list, NGINX_TUNED, 0, -1);
	CHECK(s != NULL && strstr(s, "fastcgi_next_upstream_tries 3;") != NULL &&
	    strstr(s, "server 10.0.1.3:9002 max_fails=2 fail_timeout=5s;") != NULL);
	free(s);

	/* Refused (the errors logged here are expected): not addresses, a repeated host, an
	 * empty item, the default profile, an endpoint on a unix socket. */
	gen_hosts = "10.0.1.1,app2";
	CHECK(gen(list, NGINX_TUNED, 0, -1) == NULL);
	gen_hosts = "10.0.1.1,10.0.1.1";
	CHECK(gen(list, NGINX_TUNED, 0, -1) == NULL);
	gen_hosts = "10.0.1.1,";
	CHECK(gen(list, NGINX_TUNED, 0, -1) == NULL);
	gen_hosts = "10.0.1.1:9001";
	CHECK(gen(list, NGINX_TUNED, 0, -1) == NULL);
	gen_hosts = "10.0.1.1,10.0.1.2";
	CHECK(gen(list, NGINX_DEFAULT, 0, -1) == NULL);
	CHECK(gen("health =/health tcp=127.0.0.1:9001\nready =/ready\n", NGINX_TUNED, 0,
	    -1) == NULL);
out:
	gen_hosts = NULL;
}

/* The headers nginx's own answers add (nginxconf.c): the server's nosniff again, and the
 * request id. */
#define OWN_HEADERS "\t\t\tadd_header X-Content-Type-Options nosniff always;\n" \
	"\t\t\tadd_header X-Request-Id $sluice_request_id always;\n"

/* set access_log: off by default in the tuned profile, on in the default one, and either
 * way when the endpoint list says so. */
/* rate=: a limit_req zone per limited endpoint, keyed by address or token, and its
 * limit_req in the endpoint's location only; the 429 page says Retry-After. */
static void
test_gen_rate(void)
{
	char *s, *free_loc;

	s = gen("h =/h rate=5r/s\nt /t/ rate=600r/m burst=9 rate_by=token\nf /f/\n",
	    NGINX_TUNED, 0, -1);
	if (s == NULL) {
		CHECK(!"generated");
		return;
	}
	CHECK(strstr(s, "\tlimit_req_zone $binary_remote_addr zone=sluice_rate_h:10m "
	    "rate=5r/s;\n") != NULL);
	CHECK(strstr(s, "\tmap $http_authorization $sluice_rate_t {\n\t\t\"\" "
	    "$binary_remote_addr;\n\t\tdefault $http_authorization;\n\t}\n") != NULL);
	CHECK(strstr(s, "\tlimit_req_zone $sluice_rate_t zone=sluice_rate_t:10m "
	    "rate=600r/m;\n") != NULL);
	CHECK(strstr(s, "location = /h {\n\t\t\tlimit_req zone=sluice_rate_h burst=5 "
	    "nodelay;\n\t\t\tlimit_req_status 429;\n") != NULL);
	CHECK(strstr(s, "location /t/ {\n\t\t\tlimit_req zone=sluice_rate_t burst=9 "
	    "nodelay;\n") != NULL);
	free_loc = strstr(s, "location /f/ {\n");
	CHECK(free_loc != NULL && strncmp(free_loc + 15, "\t\t\tfastcgi_pass", 15) == 0);
	CHECK(strstr(s, "location = /.sluice-error/429 {") != NULL);
	CHECK(strstr(s, "add_header Retry-After 1 always;") != NULL);
	free(s);
}

/* stream=1: the location passes the stream unbuffered with a read timeout above the
 * heartbeats; the other locations are untouched. */
static void
test_gen_stream(void)
{
	char *s, *loc;

	s = gen("rt =/api/realtime workers=1 threads=1 stream=1\nf /f/\n", NGINX_TUNED, 0, -1);
	if (s == NULL) {
		CHECK(!"generated");
		return;
	}
	loc = strstr(s, "location = /api/realtime {\n");
	CHECK(loc != NULL && strstr(loc, "fastcgi_buffering off;\n\t\t\tfastcgi_read_timeout "
	    "60s;\n") != NULL);
	loc = strstr(s, "location /f/ {\n");
	CHECK(loc != NULL && strncmp(loc + 15, "\t\t\tfastcgi_pass", 15) == 0);
	/* Only the stream's location has it. */
	loc = strstr(s, "fastcgi_buffering off;");
	CHECK(loc != NULL && strstr(loc + 1, "fastcgi_buffering off;") == NULL);
	free(s);
	s = gen("rt =/api/realtime workers=1 threads=1 stream=1\n", NGINX_DEFAULT, 0, -1);
	CHECK(s != NULL && strstr(s, "fastcgi_buffering off;") != NULL);
	free(s);
}

static void
test_gen_access_log(void)
{
	static const struct {
		const char *set;
		enum nginx_profile prof;
		int on;
	} cases[] = {
		{ "", NGINX_TUNED, 0 },
		{ "", NGINX_DEFAULT, 1 },
		{ "set access_log on\n", NGINX_TUNED, 1 },
		{ "set access_log off\n", NGINX_TUNED, 0 },
		{ "set access_log on\n", NGINX_DEFAULT, 1 },
		{ "set access_log off\n", NGINX_DEFAULT, 0 },
	};
	char text[256], *s;
	size_t i;
	int on, off;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "%shealth =/health workers=8\n", cases[i].set);
		s = gen(text, cases[i].prof, 0, -1);
		CHECK(s != NULL);
		if (s == NULL)
			continue;
		on = strstr(s, "\taccess_log /srv/run/nginx/logs/access.log;\n") != NULL;
		off = strstr(s, "\taccess_log off;\n") != NULL;
		if (on != cases[i].on || off == cases[i].on)
			harness_fail(__FILE__, __LINE__, "case %zu: access log on %d off %d, want "
			    "on %d", i, on, off, cases[i].on);
		free(s);
	}
}

/*
 * The request id in both profiles: the map that takes the client's X-Request-Id only when
 * well-formed, the parameter every worker gets, nginx's own pages' header; and set
 * access_log json: a JSON log_format with the id, in both profiles and for a load
 * balancer (the JSON lines themselves are parsed in test_http).
 */
static void
test_gen_request_id(void)
{
	static const char *const want[] = {
		"\tmap $http_x_request_id $sluice_client_request_id {\n\t\tdefault \"\";\n"
		    "\t\t\"~^[A-Za-z0-9._:@-]{1,128}$\" $http_x_request_id;\n\t}\n",
		"\tmap $sluice_client_request_id $sluice_request_id {\n"
		    "\t\t\"\" $request_id;\n\t\tdefault $sluice_client_request_id;\n\t}\n",
		"\t\tfastcgi_param REQUEST_ID        $sluice_client_request_id if_not_empty;\n",
		"\t\tlocation / {\n" OWN_HEADERS "\t\t\treturn 404 '",
	};
	int p;
	char *s;

	for (p = 0; p < NGINX__MAX; p++) {
		s = gen_want("health =/health workers=8\n", (enum nginx_profile)p, 0, want,
		    sizeof(want) / sizeof(want[0]));
		if (s == NULL)
			continue;
		CHECK(strstr(s, "sluice_json") == NULL);
		free(s);
		s = gen("set access_log json\nhealth =/health workers=8\n",
		    (enum nginx_profile)p, 0, -1);
		CHECK(s != NULL);
		if (s == NULL)
			continue;
		CHECK(strstr(s, "\tmap $upstream_http_x_request_id $sluice_log_request_id {\n"
		    "\t\t\"\" $sluice_request_id;\n\t\tdefault $upstream_http_x_request_id;\n"
		    "\t}\n") != NULL);
		CHECK(strstr(s, "\tlog_format sluice_json escape=json '{\"time\":\"$time_iso8601\","
		    "\"request_id\":\"$sluice_log_request_id\",") != NULL);
		CHECK(strstr(s, "\"status\":$status,\"bytes\":$body_bytes_sent,"
		    "\"request_time\":$request_time,\"upstream_response_time\":"
		    "\"$upstream_response_time\",") != NULL);
		CHECK(strstr(s, "\taccess_log /srv/run/nginx/logs/access.log sluice_json;\n") !=
		    NULL);
		CHECK(strstr(s, "access_log off;") == NULL);
		free(s);
	}
	/* A load balancer's JSON lines name the hosts too (upstream_addr). */
	gen_hosts = "10.0.1.1,10.0.1.2";
	s = gen("set access_log json\nh =/h workers=4 tcp=127.0.0.1:9001\n", NGINX_TUNED, 1, -1);
	gen_hosts = NULL;
	CHECK(s != NULL && strstr(s, "sluice_json;\n") != NULL && strstr(s, "sluice_lb") == NULL &&
	    strstr(s, "\"upstream_addr\":\"$upstream_addr\"") != NULL);
	free(s);
}

static void
test_gen_forced_k(void)
{
	char *s;

	/* The warning logged below is expected. */
	/* W 2 x K 4 = 8 > C / 2 = 4: written, with a warning comment. */
	s = gen("health =/health workers=8\n", NGINX_TUNED, 2, 4);
	CHECK(s != NULL && strstr(s, "keepalive 4;") != NULL &&
	    strstr(s, "# WARNING: W x K = 8 > C / 2 = 4") != NULL);
	free(s);
	/* W 2 x K 2 = 4 = C / 2: fine, no warning. */
	s = gen("health =/health workers=8\n", NGINX_TUNED, 2, 2);
	CHECK(s != NULL && strstr(s, "keepalive 2;") != NULL && strstr(s, "WARNING") == NULL);
	free(s);
	/* K 0 forced: no keepalive and no keep_conn. */
	s = gen("health =/health workers=8\n", NGINX_TUNED, 2, 0);
	CHECK(s != NULL && strstr(s, "\t\tkeepalive ") == NULL &&
	    strstr(s, "fastcgi_keep_conn") == NULL);
	free(s);
}

static void
test_gen_default(void)
{
	char *s = gen("set listen 127.0.0.1:9999\nset body_max 64k\n"
	    "health =/health workers=8\nrest /rest/v1/ workers=4\n", NGINX_DEFAULT, 0, -1);

	CHECK(s != NULL);
	if (s == NULL)
		return;
	CHECK(strstr(s, "worker_processes auto;") != NULL);
	CHECK(strstr(s, "worker_connections 4096;") != NULL);
	CHECK(strstr(s, "location = /health {\n\t\t\tfastcgi_pass unix:/srv/run/health.sock;\n"
	    "\t\t}") != NULL);
	CHECK(strstr(s, "location /rest/v1/ {\n\t\t\tfastcgi_pass unix:/srv/run/rest.sock;\n"
	    "\t\t}") != NULL);
	CHECK(strstr(s, "upstream") == NULL);
	CHECK(strstr(s, "\t\tkeepalive ") == NULL);
	CHECK(strstr(s, "fastcgi_keep_conn") == NULL);
	CHECK(strstr(s, "access_log /srv/run/nginx/logs/access.log;") != NULL);
	CHECK(strstr(s, "listen 127.0.0.1:9999 backlog=4096;") != NULL);
	CHECK(strstr(s, "multi_accept") == NULL);
	CHECK(strstr(s, "client_max_body_size 65536;") != NULL);
	CHECK(strstr(s, "fastcgi_param SCRIPT_NAME       $fastcgi_script_name;") != NULL);
	CHECK(strstr(s, "fastcgi_param HTTPS             $https if_not_empty;") != NULL);
	CHECK(strstr(s, "error_page 502 /.sluice-error/502;") != NULL);
	CHECK(strstr(s, "return 502 '{\"code\":\"bad_gateway\"") != NULL);
	CHECK(strstr(s, "daemon off;") != NULL);
	free(s);

	/* A prefix route "/" takes over the catch-all location. */
	s = gen("chat / workers=4\n", NGINX_DEFAULT, 0, -1);
	CHECK(s != NULL && strstr(s, "location / {\n\t\t\tfastcgi_pass") != NULL &&
	    strstr(s, "not_found") == NULL);
	free(s);
	/* An exact "/" keeps it. */
	s = gen("chat =/ workers=4\n", NGINX_DEFAULT, 0, -1);
	CHECK(s != NULL && strstr(s, "location = / {") != NULL &&
	    strstr(s, "not_found") != NULL);
	free(s);
}

/*
 * Both profiles: nginx's own refusals (malformed request, request line or header too
 * large, timeouts) answer the JSON error body, and slow clients are cut off by the
 * timeouts that tests/integration/test_slowloris.c relies on.
 */
static void
test_gen_hostile_clients(void)
{
	static const char *const want[] = {
		"client_header_timeout 10s;", "client_body_timeout 30s;", "send_timeout 30s;",
		"reset_timedout_connection on;",
		"error_page 400 /.sluice-error/400;", "error_page 408 /.sluice-error/408;",
		"error_page 411 /.sluice-error/411;", "error_page 413 /.sluice-error/413;",
		"error_page 414 /.sluice-error/414;", "error_page 494 /.sluice-error/494;",
		"error_page 505 /.sluice-error/505;",
		"error_page 405 /.sluice-error/405;", "error_page 501 /.sluice-error/501;",
		"location = /.sluice-error/414 {\n\t\t\tinternal;\n"
		    "\t\t\tdefault_type application/json;\n" OWN_HEADERS
		    "\t\t\treturn 414 '{\"code\":\"uri_too_long\",",
		/* nginx raises 494 for a header too large, and answers it as a 400. */
		"location = /.sluice-error/494 {\n\t\t\tinternal;\n"
		    "\t\t\tdefault_type application/json;\n" OWN_HEADERS
		    "\t\t\treturn 400 '{\"code\":\"header_too_large\",",
		"return 400 '{\"code\":\"bad_request\",\"message\":\"malformed request\","
		    "\"details\":null,\"hint\":null}';",
	};
	int p;

	for (p = 0; p < NGINX__MAX; p++)
		free(gen_want("health =/health workers=8\n", (enum nginx_profile)p, 0, want,
		    sizeof(want) / sizeof(want[0])));
}

/*
 * set nginx_status: both profiles gain a server of its own on 127.0.0.1:PORT that answers
 * stub_status at /nginx_status to loopback clients only and 404 elsewhere, after the
 * public server (whose listen it never shares); without the setting, no stub_status at
 * all.  A public listen on the same port is refused.
 */
static void
test_gen_nginx_status(void)
{
	static const char *const want[] = { "\tserver {\n\t\tlisten 127.0.0.1:9146;\n",
	    "\t\tallow 127.0.0.1;\n\t\tdeny all;\n",
	    "\t\tlocation = /nginx_status {\n\t\t\tstub_status;\n\t\t}\n",
	    "\t\taccess_log off;\n" };
	enum nginx_profile prof;
	char *out, *srv;

	for (prof = NGINX_DEFAULT; prof < NGINX__MAX; prof++) {
		out = gen_want("set nginx_status 9146\nhealth =/health workers=1 threads=4\n",
		    prof, 2, want, sizeof(want) / sizeof(want[0]));
		if (out == NULL)
			continue;
		srv = strstr(out, "listen 127.0.0.1:9146;");
		CHECK(srv != NULL);
		/* One stub_status, in that server only, after the public one's locations. */
		CHECK(srv != NULL && strstr(out, "stub_status;") > srv);
		CHECK(srv != NULL && strstr(out, "location = /health") < srv);
		CHECK(strstr(strstr(out, "stub_status;") + 1, "stub_status;") == NULL);
		free(out);
		out = gen("health =/health workers=1 threads=4\n", prof, 2, -1);
		CHECK(out != NULL && strstr(out, "stub_status") == NULL);
		free(out);
		CHECK(gen("set listen 127.0.0.1:9146\nset nginx_status 9146\nhealth =/health\n",
		    prof, 2, -1) == NULL);
		CHECK(gen("set listen 9146\nset nginx_status 127.0.0.1:9146\nhealth =/health\n",
		    prof, 2, -1) == NULL);
	}
	out = gen("set listen 0.0.0.0:8080\nset nginx_status 127.0.0.1:9146\nhealth =/health\n",
	    NGINX_TUNED, 2, -1);
	CHECK(out != NULL && strstr(out, "listen 0.0.0.0:8080 backlog=") != NULL &&
	    strstr(out, "listen 127.0.0.1:9146;") != NULL);
	free(out);
}

static void
test_gen_bad_opts(void)
{
	struct nginx_opts o;
	char err[512];
	struct conf *c = load_text("health =/health\n", err, sizeof(err));
	FILE *f = fopen("/dev/null", "w");

	CHECK(c != NULL && f != NULL);
	if (c == NULL || f == NULL)
		goto out;
	/* The errors logged below are expected. */
	memset(&o, 0, sizeof(o));
	o.keepalive = -1;
	o.rundir = "/srv/run";
	o.prefix = "/srv/my prefix";
	CHECK_INT(nginx_conf_write(f, c, &o), -1);
	o.prefix = "relative";
	CHECK_INT(nginx_conf_write(f, c, &o), -1);
	o.prefix = "/srv/p";
	o.listen = "1.2.3.4:80;evil";
	CHECK_INT(nginx_conf_write(f, c, &o), -1);
	o.listen = NULL;
	o.rundir = "/a/very/long/run/directory/that/does/not/fit/into/the/sun_path/of/a/"
	    "unix/domain/socket/address/at/all";
	CHECK_INT(nginx_conf_write(f, c, &o), -1);
	CHECK_INT(nginx_profile_parse("tuned"), NGINX_TUNED);
	CHECK_INT(nginx_profile_parse("default"), NGINX_DEFAULT);
	CHECK_INT(nginx_profile_parse("fast"), -1);
out:
	if (f != NULL)
		fclose(f);
	conf_free(c);
}

/*
 * The watchdog's limit follows the budget the workers will read: the endpoint's
 * stmt_timeout_ms=, else SLUICE_STMT_TIMEOUT_MS of sluiced's environment (the workers
 * inherit it), else the default; 0 (no watchdog) when the budget is 0.
 */
static void
test_watch_follows_env_budget(void)
{
	struct sluiced s;
	struct pool_spec sp;
	char err[512];
	struct conf *c = load_text("x /x/\ny /y/ stmt_timeout_ms=100\n", err, sizeof(err));

	CHECK(c != NULL);
	if (c == NULL)
		return;
	memset(&s, 0, sizeof(s));
	s.conf = c;
	s.bindir = "bin";
	unsetenv("SLUICE_STMT_TIMEOUT_MS");
	CHECK_INT(pool_spec_make(&s, &c->eps[0], &sp), 0);
	CHECK_INT(sp.watch_ms, 5000 + POOL_WATCH_GRACE_MS);
	pool_spec_free(&sp);
	setenv("SLUICE_STMT_TIMEOUT_MS", "60000", 1);
	CHECK_INT(pool_spec_make(&s, &c->eps[0], &sp), 0);
	CHECK_INT(sp.watch_ms, 60000 + POOL_WATCH_GRACE_MS);
	pool_spec_free(&sp);
	CHECK_INT(pool_spec_make(&s, &c->eps[1], &sp), 0);
	CHECK_INT(sp.watch_ms, 100 + POOL_WATCH_GRACE_MS);
	pool_spec_free(&sp);
	setenv("SLUICE_STMT_TIMEOUT_MS", "0", 1);
	CHECK_INT(pool_spec_make(&s, &c->eps[0], &sp), 0);
	CHECK_INT(sp.watch_ms, 0);
	pool_spec_free(&sp);
	unsetenv("SLUICE_STMT_TIMEOUT_MS");
	conf_free(c);
}

int
main(void)
{
	log_init("test_conf");
	RUN(test_shipped_file);
	RUN(test_good_full);
	RUN(test_metrics_listen_port);
	RUN(test_defaults);
	RUN(test_db_override);
	RUN(test_db_read);
	RUN(test_bad_lines);
	RUN(test_bad_file);
	RUN(test_auto_rule);
	RUN(test_cpus_limit);
	RUN(test_auto_lines);
	RUN(test_keepalive_rule);
	RUN(test_gen_tuned);
	RUN(test_gen_rate);
	RUN(test_gen_stream);
	RUN(test_gen_access_log);
	RUN(test_gen_request_id);
	RUN(test_gen_forced_k);
	RUN(test_gen_default);
	RUN(test_gen_hostile_clients);
	RUN(test_gen_bad_opts);
	RUN(test_gen_nginx_status);
	RUN(test_gen_tcp);
	RUN(test_pool_address);
	RUN(test_gen_hosts);
	RUN(test_watch_follows_env_budget);
	return harness_done();
}
