/*
 * test_records: the records API (bin/records at /api/) on two real stacks, one over a real
 * SQLite file and one over a throwaway PostgreSQL cluster, both seeded by the real seeder
 * (records-seed -u 20 -p 200 -c 400) with the same rows.
 *
 * The PocketBase JavaScript SDK from npm (tests/js/records.test.mjs, installed by npm ci
 * when tests/js/node_modules lacks it) runs against each; node must report no failed,
 * skipped, todo or cancelled test.  Here, in C: the same JSON from both back ends for
 * reads of the seeded data (lists with filters, sorts, expands and fields, views), and the
 * hostile and malformed input every parser must refuse with a 4xx (filter length and leaf
 * limits, syntax, unknown fields, @request in a client's filter, sort and expand limits,
 * page, tokens), never a 5xx; and POST /api/batch: answers in order, all or nothing,
 * hostile batches, and its off-switch on a third stack (records_batch=off); the account
 * flows (auth-methods, verification, password reset, email change) against hostile tokens
 * and bodies, their mail captured by a script given as records_sendmail's command, and
 * the third stack's 204 without one; superusers: sign-in, impersonation (a token that
 * works and is not refreshable, refused to anyone else), records-seed -a (create, then
 * update, which revokes the old tokens); the rate limits of sign-in and the account
 * routes (records_auth_limit=8 and records_auth_limit_identity=4 on both stacks, with
 * 127.0.0.1 exempt so that the other tests are not counted), from other loopback
 * addresses: PocketBase's 429 past each; sign-in with a one-time password
 * (records_otp=users,_superusers, over databases without _otps, which the workers make):
 * request-otp and auth-with-otp against wrong, used, expired, other collections' and
 * malformed input, the code read from the captured mail; multipart/form-data bodies (the
 * SDK's FormData: fields, "@jsonPayload", modifiers) and hostile ones (no boundary, the
 * boundary in a value, 8 kB part headers, 1,001 parts, a file named ../../etc/passwd,
 * NULs, bad UTF-8), each a 400 that writes nothing.
 */
#include <dirent.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "http.h"
#include "jsrun.h"
#include "pgtmp.h"
#include "records/token.h"
#include "stack.h"
#include "../lib/harness.h"

static struct {
	struct pgtmp pg;
	struct stack lite;
	struct stack pgs;
	char litepath[128];
	char secret[128];
	char expired[TOKEN_MAX];
	char mailer[128];		/* the capture script, records_sendmail's command */
	char mail_lite[128], mail_pg[128];	/* each stack's captured mail */
} rx;

/* 64 hex digits, the server secret both stacks share (so one token works on both). */
static const char rx_secret_hex[] =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/*
 * Two collections of the tests' own beside the demo's, for the rules the demo does not
 * use: notes (listed and viewed by their owner and by members, through a join of
 * members; created without `locked`; updated by the owner without moving it, without
 * changing its labels, and without changing the title of a locked note; deleted by an
 * admin member) and members (user, note, role).
 */
static const char rx_test_collections[] =
    "INSERT INTO _collections VALUES ('pbc_1000000001', 'notes', 'base',\n"
    "  'owner relation to=users; title text; locked bool; "
    "labels select multiple values=x|y|z; readers relation multiple to=users; "
    "views number; created autodate',\n"
    "  'owner = @request.auth.id || (@collection.members.user ?= @request.auth.id && "
    "@collection.members.note ?= id)',\n"
    "  'owner = @request.auth.id || (@collection.members.user ?= @request.auth.id && "
    "@collection.members.note ?= id)',\n"
    "  '@request.auth.id != '''' && owner = @request.auth.id && "
    "@request.body.locked:isset = false',\n"
    "  'owner = @request.auth.id && @request.body.owner:changed = false && "
    "@request.body.labels:changed = false && "
    "(locked = false || @request.body.title:changed = false)',\n"
    "  '@collection.members:m.user ?= @request.auth.id && @collection.members:m.note ?= id "
    "&& @collection.members:m.role ?= ''admin''');\n"
    "INSERT INTO _collections VALUES ('pbc_1000000002', 'members', 'base',\n"
    "  'user relation to=users; note relation to=notes; role select values=admin|member',\n"
    "  '', '', '', NULL, NULL);\n";

static char rx_sqldir[128];

static int
rx_seed(const char *url)
{
	const char *tests = getenv("SLUICE_TESTS");

	return stack_sh("%s/../sql/records-seed -q -u 20 -p 200 -c 400 -S %s '%s'",
	    tests ? tests : "build/rel/tests", rx_sqldir, url);
}

/*
 * The mail capture: a script given as records_sendmail's command, with a directory as its
 * argument, that writes the message on its standard input to a file of its own there
 * (written, then renamed, so that a reader never sees half a message).  The directories
 * are the workers' to write, whichever user they run as.
 */
static int
rx_mailer(void)
{
	FILE *f;

	snprintf(rx.mailer, sizeof(rx.mailer), "/tmp/sluice-records-%d-mail.sh", (int)getpid());
	snprintf(rx.mail_lite, sizeof(rx.mail_lite), "/tmp/sluice-records-%d-mail-lite",
	    (int)getpid());
	snprintf(rx.mail_pg, sizeof(rx.mail_pg), "/tmp/sluice-records-%d-mail-pg", (int)getpid());
	if ((f = fopen(rx.mailer, "w")) == NULL)
		return -1;
	fputs("#!/bin/sh\nf=\"$1/$(date +%s%N)-$$.eml\"\n"
	    "cat >\"$f.tmp\" && mv \"$f.tmp\" \"$f\"\n", f);
	if (fclose(f) != 0)
		return -1;
	return stack_sh("chmod 755 %s && mkdir -p %s %s && chmod 1777 %s %s", rx.mailer,
	    rx.mail_lite, rx.mail_pg, rx.mail_lite, rx.mail_pg);
}

/* Drops _otps from the database of url (a database made before the table was). */
static int
rx_drop_otps(const char *url)
{
	struct db *db = NULL;
	char err[256];
	int rc;

	if (db_open(&db, url, NULL, err, sizeof(err)) < 0)
		return -1;
	rc = db_exec(db, "DROP TABLE IF EXISTS _otps");
	db_close(db);
	return rc;
}

static int
rx_start(void)
{
	char url[200], conf[1024];
	unsigned char key[32];
	FILE *f;
	size_t i;

	signal(SIGPIPE, SIG_IGN);
	/* The demo's collections and the tests' own, in one collections.sql. */
	snprintf(rx_sqldir, sizeof(rx_sqldir), "/tmp/sluice-records-%d-sql", (int)getpid());
	if (stack_sh("mkdir -p %s && cp sql/records/collections.sql %s/", rx_sqldir,
	    rx_sqldir) != 0)
		return -1;
	{
		char p[200];

		snprintf(p, sizeof(p), "%s/collections.sql", rx_sqldir);
		if ((f = fopen(p, "a")) == NULL)
			return -1;
		fputs(rx_test_collections, f);
		if (fclose(f) != 0)
			return -1;
	}
	snprintf(rx.litepath, sizeof(rx.litepath), "/tmp/sluice-records-%d.db", (int)getpid());
	snprintf(rx.secret, sizeof(rx.secret), "/tmp/sluice-records-%d.key", (int)getpid());
	unlink(rx.litepath);
	if ((f = fopen(rx.secret, "w")) == NULL)
		return -1;
	fprintf(f, "%s\n", rx_secret_hex);
	if (fclose(f) != 0)
		return -1;
	stack_sh("chmod 644 %s", rx.secret);
	for (i = 0; i < sizeof(key); i++) {
		unsigned v;

		sscanf(rx_secret_hex + 2 * i, "%2x", &v);
		key[i] = (unsigned char)v;
	}
	token_set_secret(key, sizeof(key));
	snprintf(url, sizeof(url), "sqlite:%s", rx.litepath);
	/* Both databases as made before _otps was: the workers make it at their first OTP
	 * request. */
	if (rx_seed(url) != 0 || rx_drop_otps(url) != 0)
		return -1;
	stack_sh("chmod 666 %s", rx.litepath);
	if (pgtmp_start(&rx.pg) < 0 || rx_seed(rx.pg.url) != 0 || rx_drop_otps(rx.pg.url) != 0)
		return -1;
	if (rx_mailer() < 0)
		return -1;
	snprintf(conf, sizeof(conf), "db records %s\nrecords /api/ workers=1 threads=2 "
	    "db=records db_plans=generic records_secret_file=%s bcrypt_cost=4 "
	    "records_sendmail=%s,%s records_app_url=http://app.example.test "
	    "records_auth_limit=8 records_auth_limit_identity=4 "
	    "records_auth_limit_exempt=127.0.0.1 records_otp=users,_superusers\n", url, rx.secret,
	    rx.mailer, rx.mail_lite);
	if (stack_start(&rx.lite, conf, "tuned", 1, NULL) < 0)
		return -1;
	snprintf(conf, sizeof(conf), "db records %s\nrecords /api/ workers=1 threads=2 "
	    "db=records db_plans=generic records_secret_file=%s bcrypt_cost=4 "
	    "records_sendmail=%s,%s records_app_url=http://app.example.test "
	    "records_auth_limit=8 records_auth_limit_identity=4 "
	    "records_auth_limit_exempt=127.0.0.1 records_otp=users,_superusers\n", url, rx.secret,
	    rx.mailer, rx.mail_pg);
	setenv("SLUICE_DB_RECORDS", rx.pg.url, 1);
	i = stack_start(&rx.pgs, conf, "tuned", 1, NULL) < 0;
	unsetenv("SLUICE_DB_RECORDS");
	return i ? -1 : 0;
}

static void
rx_stop(void)
{
	stack_stop(&rx.lite);
	stack_stop(&rx.pgs);
	pgtmp_stop(&rx.pg);
	stack_sh("rm -f %s %s-wal %s-shm %s", rx.litepath, rx.litepath, rx.litepath, rx.secret);
	if (rx_sqldir[0] != '\0')
		stack_sh("rm -rf %s", rx_sqldir);
	if (rx.mailer[0] != '\0')
		stack_sh("rm -rf %s %s %s", rx.mailer, rx.mail_lite, rx.mail_pg);
}

static int
rx_do(struct stack *s, const char *method, const char *path, const char *auth,
    const char *body, struct http_resp *r)
{
	static char url[16384];
	char h1[TOKEN_MAX + 32];
	const char *headers[3] = { "Content-Type: application/json", NULL, NULL };

	if (auth != NULL) {
		snprintf(h1, sizeof(h1), "Authorization: %s", auth);
		headers[1] = h1;
	}
	if (snprintf(url, sizeof(url), "%s%s", s->base, path) >= (int)sizeof(url))
		return -1;
	return http_do(method, url, headers, body, body ? strlen(body) : 0, 10000, r);
}

static int
rx_json_eq(const char *a, const char *b)
{
	cJSON *ja = cJSON_Parse(a ? a : ""), *jb = cJSON_Parse(b ? b : "");
	int eq = ja != NULL && jb != NULL && cJSON_Compare(ja, jb, 1);

	cJSON_Delete(ja);
	cJSON_Delete(jb);
	return eq;
}

/* Sends the request to both stacks: both must answer want; the bodies must be the same
 * bytes (the same JSON in the same key order).  Returns the SQLite body's copy (free it). */
#define RX_BOTH(method, path, auth, body, want) \
	rx_both(__FILE__, __LINE__, method, path, auth, body, want)

static char *
rx_both(const char *file, int line, const char *method, const char *path, const char *auth,
    const char *body, long want)
{
	struct http_resp a, b;
	char *out = NULL;

	http_resp_init(&a);
	http_resp_init(&b);
	if (rx_do(&rx.lite, method, path, auth, body, &a) < 0 ||
	    rx_do(&rx.pgs, method, path, auth, body, &b) < 0) {
		harness_fail(file, line, "%s %.200s: no response", method, path);
		goto out;
	}
	if (a.status != want || b.status != want)
		harness_fail(file, line, "%s %.200s: status %ld (sqlite) %ld (postgresql), want %ld;"
		    " %.300s | %.300s", method, path, a.status, b.status, want,
		    a.body.data ? a.body.data : "", b.body.data ? b.body.data : "");
	if (strcmp(a.body.data ? a.body.data : "", b.body.data ? b.body.data : "") != 0)
		harness_fail(file, line, "%s %.200s: back ends differ\n  sqlite     %.500s\n"
		    "  postgresql %.500s", method, path, a.body.data ? a.body.data : "",
		    b.body.data ? b.body.data : "");
	if (want != 204 && strcmp(method, "HEAD") != 0 && !rx_json_eq(a.body.data, a.body.data))
		harness_fail(file, line, "%s %.200s: not JSON: %.300s", method, path,
		    a.body.data ? a.body.data : "");
	out = strdup(a.body.data ? a.body.data : "");
out:
	http_resp_free(&a);
	http_resp_free(&b);
	return out;
}

static void
rx_check(const char *file, int line, const char *method, const char *path,
    const char *auth, const char *body, long want, const char *needle)
{
	char *got = rx_both(file, line, method, path, auth, body, want);

	if (got != NULL && needle != NULL && strstr(got, needle) == NULL)
		harness_fail(file, line, "%s %.200s: no \"%s\" in %.400s", method, path, needle,
		    got);
	free(got);
}
#define RX_CHECK(method, path, auth, body, want, needle) \
	rx_check(__FILE__, __LINE__, method, path, auth, body, want, needle)

static void
test_records_same_json(void)
{
	static const char *const paths[] = {
		"/api/health",
		"/api/collections/posts/records",
		"/api/collections/posts/records?page=2&perPage=7&sort=-created,title",
		"/api/collections/posts/records?filter=status%3D'published'&perPage=30",
		"/api/collections/posts/records?filter=tags%3F%3D'tech'%26%26status!%3D'draft'",
		"/api/collections/posts/records?filter=title~'POST%201'&sort=title",
		"/api/collections/posts/records?filter=author.name%3D'User%202'",
		"/api/collections/posts/records?filter=tags%3D''&skipTotal=1",
		"/api/collections/posts/records?filter=tags:length%3E1%26%26title:lower~'post%201'",
		"/api/collections/posts/records?filter=tags:each!%3D'news'&sort=-title",
		"/api/collections/posts/records?filter=comments_via_post.text%3F~'zebra'&sort=title",
		"/api/collections/posts/records?filter=comments_via_post.author.name%3F%3D'User%203'",
		"/api/collections/users/records?filter=posts_via_author.status%3D'draft'",
		"/api/collections/posts/records?expand=author,comments_via_post.author&perPage=5"
		    "&sort=created",
		"/api/collections/posts/records?expand=author&fields=id,expand.author.name"
		    "&perPage=3&sort=created",
		"/api/collections/posts/records?fields=*,body:excerpt(12,true)&perPage=3"
		    "&sort=created",
		"/api/collections/comments/records?expand=post.author&perPage=4&sort=created",
		"/api/collections/users/records?sort=-name&perPage=50",
		"/api/collections/users/records?filter=created%3C%3D'2025-01-01%2000:05:00.000Z'",
		"/api/collections/posts/records?perPage=5000&skipTotal=true&sort=created",
		"/api/collections/posts/records?page=-3&perPage=0",
		"/api/collections/_superusers/records",
	};
	size_t i;

	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		free(RX_BOTH("GET", paths[i], NULL, NULL, 200));
	RX_CHECK("GET", "/api/collections/posts/records?perPage=5000&skipTotal=1", NULL, NULL,
	    200, "\"perPage\":1000,\"totalItems\":-1,\"totalPages\":-1}");
	RX_CHECK("GET", "/api/collections/posts/records?page=-3&perPage=0", NULL, NULL, 200,
	    "\"page\":1,\"perPage\":30,\"totalItems\":200,\"totalPages\":7}");
	RX_CHECK("HEAD", "/api/health", NULL, NULL, 200, NULL);
	RX_CHECK("GET", "/api/collections/posts/records?filter=title:lower%3D'post%203'", NULL,
	    NULL, 200, "\"totalItems\":1");
	/* A hidden email cannot be found by filtering (user 2's is hidden, user 4's is not). */
	RX_CHECK("GET", "/api/collections/users/records?filter=email%3D'user0002@example.com'",
	    NULL, NULL, 200, "\"totalItems\":0");
	RX_CHECK("GET", "/api/collections/users/records?filter=email~'user000'", NULL, NULL, 200,
	    "\"totalItems\":2");
	RX_CHECK("GET", "/api/collections/users/records?filter=email%3D'user0004@example.com'",
	    NULL, NULL, 200, "\"totalItems\":1");
	RX_CHECK("GET", "/api/collections/users/records?sort=email", NULL, NULL, 400,
	    "\"status\":400");
}

static void
test_records_view_and_errors(void)
{
	char *list = RX_BOTH("GET", "/api/collections/posts/records?perPage=1&sort=created",
	    NULL, NULL, 200), path[256];
	const char *id;

	if (list == NULL || (id = strstr(list, "\"id\":\"")) == NULL) {
		CHECK(!"a post id");
		free(list);
		return;
	}
	snprintf(path, sizeof(path), "/api/collections/posts/records/%.15s?expand=author,"
	    "comments_via_post", id + 6);
	free(list);
	free(RX_BOTH("GET", path, NULL, NULL, 200));
	RX_CHECK("GET", "/api/collections/posts/records/aaaaaaaaaaaaaaa", NULL, NULL, 404,
	    "{\"data\":{},\"message\":\"The requested resource wasn't found.\",\"status\":404}");
	RX_CHECK("GET", "/api/collections/nope/records", NULL, NULL, 404, NULL);
	RX_CHECK("GET", "/api/nothing", NULL, NULL, 404, NULL);
	RX_CHECK("PUT", "/api/collections/posts/records", NULL, NULL, 405, NULL);
}

/* Filters that must be refused, with their status. */
static void
test_records_hostile_filters(void)
{
	static const struct { const char *f; long want; } cases[] = {
		{ "title%3D", 400 }, { "%3D'x'", 400 }, { "title%3D'x", 400 },
		{ "(title%3D'x'", 400 }, { "title%3D'x')", 400 }, { "title%3D%3D'x'", 400 },
		{ "nope%3D1", 400 }, { "password%3D'x'", 400 }, { "author.nope%3D1", 400 },
		{ "title.name%3D1", 400 }, { "tags%3Dtags", 400 }, { "1x%3D1", 400 },
		{ "@request.auth.id%3D''", 403 }, { "@collection.posts.id%3D''", 403 },
		{ "@nope%3D1", 400 }, { "title%3D'x'%26%26", 400 }, { "title%3D'x'||", 400 },
		{ "title%3D'%00'", 400 }, { "%27%3B%20DROP%20TABLE%20posts%3B--", 400 },
		{ "@collection.posts:x.id%3F%3D''", 403 }, { "@request.body.title:isset%3Dtrue", 403 },
		{ "comments_via_post.text:length%3E1", 400 }, { "tags:isset%3Dtrue", 400 },
		{ "comments_via_post.post.comments_via_post%3D'x'", 400 },
		{ "comments_via_post.post.comments_via_post.nope%3F%3D'x'", 400 },
	};
	char path[16384], f[12000];
	size_t i, n;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(path, sizeof(path), "/api/collections/posts/records?filter=%s",
		    cases[i].f);
		/* A NUL never reaches the handler: the serve loop refuses the query. */
		RX_CHECK("GET", path, NULL, NULL, cases[i].want,
		    strstr(cases[i].f, "%00") ? NULL : "\"status\":");
	}
	/* A value is never SQL: a quote inside a literal is only a character. */
	RX_CHECK("GET", "/api/collections/posts/records?filter=title%3D%22x'%20OR%20'1'%3D'1%22",
	    NULL, NULL, 200, "\"totalItems\":0");
	/* 201 comparisons: 400; 200: fine. */
	for (n = 0, f[0] = '\0'; n < 201; n++)
		strcat(f, n ? "||id%3D'a'" : "id%3D'a'");
	snprintf(path, sizeof(path), "/api/collections/posts/records?filter=%s", f);
	RX_CHECK("GET", path, NULL, NULL, 400, "\"status\":400");
	f[strlen(f) - strlen("||id%3D'a'")] = '\0';
	snprintf(path, sizeof(path), "/api/collections/posts/records?filter=%s", f);
	RX_CHECK("GET", path, NULL, NULL, 200, "\"totalItems\":0");
	/* Over 3,500 characters: 400. */
	memset(f, ' ', 3600);
	memcpy(f + 3600, "id%3D'a'", 9);
	for (i = 0; i < 3600; i++)
		f[i] = '+';
	snprintf(path, sizeof(path), "/api/collections/posts/records?filter=%s", f);
	RX_CHECK("GET", path, NULL, NULL, 400, "\"status\":400");
	/* Deep parentheses: 400, not a stack overflow. */
	for (i = 0; i < 2000; i++)
		f[i] = '(';
	f[i] = '\0';
	snprintf(path, sizeof(path), "/api/collections/posts/records?filter=%s", f);
	RX_CHECK("GET", path, NULL, NULL, 400, "\"status\":400");
}

static void
test_records_hostile_params(void)
{
	static const char *const bad[] = {
		"sort=nope", "sort=password", "sort=-", "sort=a,b,c,d,e,f,g,h,i",
		"sort=author.name", "page=abc", "perPage=1x", "page=99999999999999999999",
		"fields=id,(x)", "fields=body:excerpt(x)", "fields=body:nope(1)",
		"expand=author.a.b.c.d.e.f",
	};
	char path[512];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "/api/collections/posts/records?%s", bad[i]);
		RX_CHECK("GET", path, NULL, NULL, 400, "\"status\":400");
	}
	/* Unknown expand names are skipped, as PocketBase does. */
	RX_CHECK("GET", "/api/collections/posts/records?perPage=1&expand=nope,title", NULL, NULL,
	    200, "\"expand\":{}");
	RX_CHECK("POST", "/api/collections/posts/records", NULL, "{\"title\":", 400,
	    "\"status\":400");
	RX_CHECK("POST", "/api/collections/posts/records", NULL, "[1]", 400, "\"status\":400");
	RX_CHECK("POST", "/api/collections/users/auth-with-password", NULL,
	    "{\"identity\":\"user0001@example.com\\u0000x\",\"password\":\"password123\"}", 400,
	    "\"status\":400");
	RX_CHECK("POST", "/api/collections/users/auth-with-password", NULL,
	    "{\"identity\":\"x\",\"password\":\"y\",\"n\":1e999}", 400, "\"status\":400");
	RX_CHECK("POST", "/api/collections/users/auth-with-password", NULL, "{}", 400,
	    "\"identity\":{\"code\":\"validation_required\"");
	RX_CHECK("POST", "/api/collections/posts/auth-with-password", NULL, "{}", 404, NULL);
}

static void
test_records_tokens(void)
{
	static const char *const bad[] = {
		"x", "a.b.c", "Bearer ", "eyJhbGciOiJub25lIn0.e30.", "....",
		"eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.%%%.abc",
	};
	char tok[TOKEN_MAX];
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (strcmp(bad[i], "Bearer ") != 0)
			RX_CHECK("GET", "/api/collections/posts/records?perPage=1", bad[i], NULL, 401,
			    "\"status\":401");
	/* The seeded user0001 signs in on both (the tokens' exp may differ by a second, so
	 * the bodies are not compared byte for byte here). */
	for (i = 0; i < 2; i++) {
		struct http_resp r;

		http_resp_init(&r);
		CHECK(rx_do(i ? &rx.pgs : &rx.lite, "POST", "/api/collections/users/"
		    "auth-with-password", NULL, "{\"identity\":\"user0001@example.com\","
		    "\"password\":\"password123\"}", &r) == 0);
		CHECK(r.status == 200 && r.body.data != NULL &&
		    strstr(r.body.data, "\"email\":\"user0001@example.com\"") != NULL &&
		    strstr(r.body.data, "\"token\":\"eyJ") != NULL);
		http_resp_free(&r);
	}
	{
		struct http_resp r;
		cJSON *j;
		const char *kid;

		http_resp_init(&r);
		CHECK(rx_do(&rx.lite, "GET", "/api/collections/users/records?filter=name%3D'User%201'"
		    "&fields=id", NULL, NULL, &r) == 0);
		j = cJSON_Parse(r.body.data ? r.body.data : "");
		kid = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetArrayItem(
		    cJSON_GetObjectItem(j, "items"), 0), "id"));
		CHECK(kid != NULL);
		if (kid != NULL) {
			/* The seeder's tokenKey of user 1 is read back from the database file. */
			struct http_resp k;
			char cmd[512], key[64] = "", body[256];
			FILE *p;

			snprintf(cmd, sizeof(cmd), "sqlite3 %s \"select tokenKey from users where "
			    "id='%s'\"", rx.litepath, kid);
			if ((p = popen(cmd, "r")) != NULL) {
				if (fgets(key, sizeof(key), p) == NULL)
					key[0] = '\0';
				pclose(p);
			}
			key[strcspn(key, "\n")] = '\0';
			CHECK(strlen(key) == 50);
			CHECK(token_make(tok, sizeof(tok), "_pb_users_auth_", kid, key, strlen(key),
			    (int64_t)time(NULL) - 10) > 0);
			snprintf(rx.expired, sizeof(rx.expired), "%s", tok);
			RX_CHECK("GET", "/api/collections/posts/records?perPage=1", tok, NULL, 401,
			    "\"status\":401");
			CHECK(token_make(tok, sizeof(tok), "_pb_users_auth_", kid, key, strlen(key),
			    (int64_t)time(NULL) + 600) > 0);
			RX_CHECK("GET", "/api/collections/users/records?filter=name%3D'User%201'", tok,
			    NULL, 200, "\"email\":\"user0001@example.com\"");
			/* Signed with another key: 401. */
			CHECK(token_make(tok, sizeof(tok), "_pb_users_auth_", kid, "other", 5,
			    (int64_t)time(NULL) + 600) > 0);
			RX_CHECK("GET", "/api/collections/posts/records?perPage=1", tok, NULL, 401,
			    "\"status\":401");
			/* A create checks its token before anything else, whether its body is
			 * valid or not (on SQLite the token's record is read inside the write). */
			snprintf(body, sizeof(body), "{\"title\":\"t\",\"author\":\"%s\"}", kid);
			RX_CHECK("POST", "/api/collections/posts/records", tok, body, 401,
			    "\"status\":401");
			RX_CHECK("POST", "/api/collections/posts/records", tok,
			    "{\"title\":\"t\",\"status\":\"nope\"}", 401, "\"status\":401");
			RX_CHECK("POST", "/api/collections/posts/records", tok,
			    "{\"title\":\"t\",\"author\":\"zzzzzzzzzzzzzzz\"}", 401,
			    "\"status\":401");
			/* An update too: the token, then the record, then the body. */
			RX_CHECK("PATCH", "/api/collections/posts/records/zzzzzzzzzzzzzzz", tok,
			    "{\"status\":\"nope\"}", 401, "\"status\":401");
			/* With the right key: a missing related record is the body's error. */
			CHECK(token_make(tok, sizeof(tok), "_pb_users_auth_", kid, key, strlen(key),
			    (int64_t)time(NULL) + 600) > 0);
			RX_CHECK("POST", "/api/collections/posts/records", tok,
			    "{\"title\":\"t\",\"author\":\"zzzzzzzzzzzzzzz\"}", 400,
			    "\"validation_missing_rel_records\"");
			RX_CHECK("POST", "/api/collections/posts/records", tok,
			    "{\"title\":\"t\",\"status\":\"nope\"}", 400,
			    "\"validation_invalid_value\"");
			RX_CHECK("PATCH", "/api/collections/posts/records/zzzzzzzzzzzzzzz", tok,
			    "{\"status\":\"nope\"}", 404, "\"status\":404");
			RX_CHECK("PATCH", "/api/collections/posts/records/zzzzzzzzzzzzzzz", tok,
			    "{\"title\":\"t\"}", 404, "\"status\":404");
			/* The token of a user that does not exist: 401. */
			CHECK(token_make(tok, sizeof(tok), "_pb_users_auth_", "zzzzzzzzzzzzzzz", key,
			    strlen(key), (int64_t)time(NULL) + 600) > 0);
			RX_CHECK("POST", "/api/collections/posts/records", tok, body, 401,
			    "\"status\":401");
			http_resp_init(&k);
			http_resp_free(&k);
		}
		cJSON_Delete(j);
		http_resp_free(&r);
	}
}

/* Paths through two sets of records, with any-of and every-record semantics, counted
 * against a one-set filter that must select the same posts. */
static void
test_records_paths_across_two_sets(void)
{
	static const struct { const char *a, *b; } same[] = {
		/* A commented post is its comments' post's comments' post. */
		{ "comments_via_post.post.comments_via_post.post%3F%3Did",
		    "comments_via_post.post.id%3F%3Did" },
		{ "comments_via_post.post.comments_via_post.post%3Did",
		    "comments_via_post.post.id%3F%3Did" },
		/* Through a set to a multiple field of the related record. */
		{ "comments_via_post.post.tags%3F%3D'tech'",
		    "tags%3F%3D'tech'%26%26comments_via_post.post.id%3F%3Did" },
		/* Through a single relation into a set. */
		{ "author.posts_via_author.id%3F%3Did", "id!%3D''" },
	};
	char pa[512], pb[512], *a, *b;
	const char *ta, *tb;
	size_t i;

	for (i = 0; i < sizeof(same) / sizeof(same[0]); i++) {
		snprintf(pa, sizeof(pa), "/api/collections/posts/records?filter=%s&fields=id"
		    "&perPage=1000&sort=id", same[i].a);
		snprintf(pb, sizeof(pb), "/api/collections/posts/records?filter=%s&fields=id"
		    "&perPage=1000&sort=id", same[i].b);
		a = RX_BOTH("GET", pa, NULL, NULL, 200);
		b = RX_BOTH("GET", pb, NULL, NULL, 200);
		ta = a ? strstr(a, "\"totalItems\":") : NULL;
		tb = b ? strstr(b, "\"totalItems\":") : NULL;
		if (a == NULL || b == NULL || strcmp(a, b) != 0 || ta == NULL || tb == NULL ||
		    strncmp(ta, "\"totalItems\":0", 14) == 0)
			harness_fail(__FILE__, __LINE__, "%s: %.200s\n  vs %s: %.200s", same[i].a,
			    a ? a : "", same[i].b, b ? b : "");
		free(a);
		free(b);
	}
	/* Every record of the pairs fails, or none: both back ends agree. */
	free(RX_BOTH("GET", "/api/collections/users/records?filter=posts_via_author."
	    "comments_via_post.author.name%3D'User%201'&fields=id", NULL, NULL, 200));
	free(RX_BOTH("GET", "/api/collections/users/records?filter=posts_via_author."
	    "comments_via_post.text%3F~'zebra'&fields=id&sort=id", NULL, NULL, 200));
	/* Past six hops: 400. */
	RX_CHECK("GET", "/api/collections/posts/records?filter=comments_via_post.post."
	    "comments_via_post.post.comments_via_post.post.comments_via_post.text%3D'x'", NULL,
	    NULL, 400, "\"status\":400");
}

/* Sends the request to one stack; checks the status; returns the body (free it). */
static char *
rx_one(const char *file, int line, struct stack *s, const char *method, const char *path,
    const char *auth, const char *body, long want)
{
	struct http_resp r;
	char *out = NULL;

	http_resp_init(&r);
	if (rx_do(s, method, path, auth, body, &r) < 0)
		harness_fail(file, line, "%s %.200s: no response", method, path);
	else if (r.status != want)
		harness_fail(file, line, "%s %.200s %.200s (%s): status %ld, want %ld: %.300s",
		    method, path, body ? body : "", s == &rx.lite ? "sqlite" : "postgresql",
		    r.status, want, r.body.data ? r.body.data : "");
	else
		out = strdup(r.body.data ? r.body.data : "");
	http_resp_free(&r);
	return out;
}
#define RX_ONE(s, method, path, auth, body, want) \
	free(rx_one(__FILE__, __LINE__, s, method, path, auth, body, want))

/* The signed-in user's token and id on s (user N of the seed). */
static int
rx_signin(struct stack *s, int n, char *tok, size_t toklen, char id[16])
{
	char body[128], *r;
	cJSON *j;
	const char *t, *i;
	int rc = -1;

	snprintf(body, sizeof(body), "{\"identity\":\"user%04d@example.com\","
	    "\"password\":\"password123\"}", n);
	r = rx_one(__FILE__, __LINE__, s, "POST", "/api/collections/users/auth-with-password",
	    NULL, body, 200);
	j = cJSON_Parse(r ? r : "");
	t = cJSON_GetStringValue(cJSON_GetObjectItem(j, "token"));
	i = cJSON_GetStringValue(cJSON_GetObjectItem(cJSON_GetObjectItem(j, "record"), "id"));
	if (t != NULL && i != NULL && strlen(t) < toklen && strlen(i) == 15) {
		memcpy(tok, t, strlen(t) + 1);
		memcpy(id, i, 16);
		rc = 0;
	}
	cJSON_Delete(j);
	free(r);
	return rc;
}

/*
 * Rules with @collection joins and @request.body's :isset and :changed, on both back ends
 * (the tests' notes and members collections).  A and B are seeded users; n1 is A's note,
 * n2 and n3 are B's; members: (B, n1, admin), (A, n3, member), (B, n2, member).  A sees
 * n1 and n3, not n2: a membership of A and a membership of n2 exist, but no one row has
 * both, and the rule's two conditions read one row of the join.
 */
/*
 * A list whose expand its page's statement joins (one single relation) against the views
 * of its records, whose expand takes a query of its own: every item of the list at path
 * (collection coll, query q and list-only parameters lq) as tok must be its view with q.
 * Returns how many items hold an expanded record, or -1.
 */
static int
rx_joined_as_viewed(const char *file, int line, struct stack *s, const char *coll,
    const char *q, const char *lq, const char *tok)
{
	char path[512], *list, *view;
	cJSON *j, *it;
	int expanded = 0;

	snprintf(path, sizeof(path), "/api/collections/%s/records?%s&%s", coll, q, lq);
	list = rx_one(file, line, s, "GET", path, tok, NULL, 200);
	if ((j = cJSON_Parse(list ? list : "")) == NULL) {
		harness_fail(file, line, "%s: not JSON", path);
		free(list);
		return -1;
	}
	cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, "items")) {
		const cJSON *id = cJSON_GetObjectItem(it, "id");
		cJSON *v;

		if (!cJSON_IsString(id)) {
			harness_fail(file, line, "%s: an item without its id", path);
			continue;
		}
		snprintf(path, sizeof(path), "/api/collections/%s/records/%s?%s", coll,
		    id->valuestring, q);
		view = rx_one(file, line, s, "GET", path, tok, NULL, 200);
		v = cJSON_Parse(view ? view : "");
		if (v == NULL || !cJSON_Compare(v, it, 1))
			harness_fail(file, line, "%s: the list's item differs from the view\n"
			    "  view %.400s", path, view ? view : "");
		expanded += cJSON_GetArraySize(cJSON_GetObjectItem(it, "expand")) > 0;
		cJSON_Delete(v);
		free(view);
	}
	cJSON_Delete(j);
	free(list);
	return expanded;
}
#define RX_JOINED(s, coll, q, lq, tok) rx_joined_as_viewed(__FILE__, __LINE__, s, coll, q, lq, tok)

static void
test_records_rules_collection_isset_changed(void)
{
	char ta[TOKEN_MAX], tb[TOKEN_MAX], ua[16], ub[16], body[512], *got;
	int k;

	for (k = 0; k < 2; k++) {
		struct stack *s = k ? &rx.pgs : &rx.lite;

		if (rx_signin(s, 1, ta, sizeof(ta), ua) < 0 ||
		    rx_signin(s, 2, tb, sizeof(tb), ub) < 0) {
			CHECK(!"users 1 and 2 signed in");
			return;
		}
		/* Create: the owner only, and never with locked (set at all, even false). */
		snprintf(body, sizeof(body), "{\"id\":\"n10000000000001\",\"owner\":\"%s\","
		    "\"title\":\"a\"}", ua);
		RX_ONE(s, "POST", "/api/collections/notes/records", ta, body, 200);
		snprintf(body, sizeof(body), "{\"owner\":\"%s\",\"title\":\"b\","
		    "\"locked\":false}", ua);
		RX_ONE(s, "POST", "/api/collections/notes/records", ta, body, 400);
		snprintf(body, sizeof(body), "{\"owner\":\"%s\",\"title\":\"b\"}", ub);
		RX_ONE(s, "POST", "/api/collections/notes/records", ta, body, 400);
		RX_ONE(s, "POST", "/api/collections/notes/records", NULL, body, 400);
		snprintf(body, sizeof(body), "{\"id\":\"n20000000000002\",\"owner\":\"%s\","
		    "\"title\":\"b\"}", ub);
		RX_ONE(s, "POST", "/api/collections/notes/records", tb, body, 200);
		snprintf(body, sizeof(body), "{\"id\":\"n30000000000003\",\"owner\":\"%s\","
		    "\"title\":\"c\"}", ub);
		RX_ONE(s, "POST", "/api/collections/notes/records", tb, body, 200);
		snprintf(body, sizeof(body), "{\"user\":\"%s\",\"note\":\"n10000000000001\","
		    "\"role\":\"admin\"}", ub);
		RX_ONE(s, "POST", "/api/collections/members/records", tb, body, 200);
		snprintf(body, sizeof(body), "{\"user\":\"%s\",\"note\":\"n30000000000003\","
		    "\"role\":\"member\"}", ua);
		RX_ONE(s, "POST", "/api/collections/members/records", tb, body, 200);
		snprintf(body, sizeof(body), "{\"user\":\"%s\",\"note\":\"n20000000000002\","
		    "\"role\":\"member\"}", ub);
		RX_ONE(s, "POST", "/api/collections/members/records", tb, body, 200);

		/* The list and view rules: one row of members holds both conditions. */
		got = rx_one(__FILE__, __LINE__, s, "GET", "/api/collections/notes/records?"
		    "sort=id&fields=id", ta, NULL, 200);
		CHECK(got != NULL && strstr(got, "\"items\":[{\"id\":\"n10000000000001\"},"
		    "{\"id\":\"n30000000000003\"}]") != NULL && strstr(got,
		    "\"totalItems\":2") != NULL);
		free(got);
		got = rx_one(__FILE__, __LINE__, s, "GET", "/api/collections/notes/records?"
		    "sort=id&fields=id", tb, NULL, 200);
		CHECK(got != NULL && strstr(got, "\"totalItems\":3") != NULL);
		free(got);
		got = rx_one(__FILE__, __LINE__, s, "GET", "/api/collections/notes/records", NULL,
		    NULL, 200);
		CHECK(got != NULL && strstr(got, "\"totalItems\":0") != NULL);
		free(got);
		RX_ONE(s, "GET", "/api/collections/notes/records/n20000000000002", ta, NULL, 404);
		RX_ONE(s, "GET", "/api/collections/notes/records/n30000000000003", ta, NULL, 200);

		/* A list's joined expand sees what the view rule of the expanded collection
		 * lets its caller see, as a view's expand does: A sees its own note and the one
		 * it is a member of, B all three, nobody none. */
		CHECK(RX_JOINED(s, "members", "expand=note", "sort=note", ta) == 2);
		CHECK(RX_JOINED(s, "members", "expand=note", "sort=note", tb) == 3);
		CHECK(RX_JOINED(s, "members", "expand=note", "sort=note", NULL) == 0);
		CHECK(RX_JOINED(s, "members", "expand=note&fields=id,expand.note.title",
		    "sort=-note", ta) == 2);
		CHECK(RX_JOINED(s, "notes", "expand=owner", "sort=id", tb) == 3);
		CHECK(RX_JOINED(s, "posts", "expand=author", "sort=-created&perPage=30", NULL) == 30);
		/* Past the first page the expand takes a statement of its own: the same. */
		CHECK(RX_JOINED(s, "posts", "expand=author", "sort=-created&perPage=30&page=3",
		    NULL) == 30);
		CHECK(RX_JOINED(s, "posts", "expand=author&fields=id,expand.author.name",
		    "filter=status%3D'draft'&perPage=7", ta) == 7);

		/* Update: :changed compares with the stored value. */
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta,
		    "{\"title\":\"a2\"}", 200);
		snprintf(body, sizeof(body), "{\"owner\":\"%s\",\"labels\":[]}", ua);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta, body, 200);
		snprintf(body, sizeof(body), "{\"owner\":\"%s\"}", ub);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta, body, 404);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta,
		    "{\"labels\":[\"x\"]}", 404);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta,
		    "{\"labels\":\"y\"}", 404);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta,
		    "{\"locked\":true}", 200);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta,
		    "{\"title\":\"a3\"}", 404);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta,
		    "{\"title\":\"a2\",\"locked\":false}", 200);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n10000000000001", ta,
		    "{\"title\":\"a3\"}", 200);
		RX_ONE(s, "PATCH", "/api/collections/notes/records/n30000000000003", ta,
		    "{\"title\":\"x\"}", 404);

		/* Delete: one members row with A, the note and admin. */
		RX_ONE(s, "DELETE", "/api/collections/notes/records/n30000000000003", ta, NULL, 404);
		RX_ONE(s, "DELETE", "/api/collections/notes/records/n20000000000002", ta, NULL, 404);
		RX_ONE(s, "DELETE", "/api/collections/notes/records/n10000000000001", ta, NULL, 404);
		RX_ONE(s, "DELETE", "/api/collections/notes/records/n10000000000001", tb, NULL, 204);
		RX_ONE(s, "GET", "/api/collections/notes/records/n10000000000001", ta, NULL, 404);
	}
}

/* The field of record id in a JSON body, printed unformatted (free it), or NULL. */
static char *
rx_field(const char *body, const char *name)
{
	cJSON *j = cJSON_Parse(body ? body : "");
	char *out = NULL;

	if (cJSON_GetObjectItem(j, name) != NULL)
		out = cJSON_PrintUnformatted(cJSON_GetObjectItem(j, name));
	cJSON_Delete(j);
	return out;
}

#define RX_FIELD_IS(s, tok, path, name, want) do { \
	char *b_ = rx_one(__FILE__, __LINE__, s, "GET", path, tok, NULL, 200); \
	char *v_ = rx_field(b_, name); \
	if (v_ == NULL || strcmp(v_, want) != 0) \
		harness_fail(__FILE__, __LINE__, "%s: %s is %s, want %s", path, name, \
		    v_ ? v_ : "(none)", want); \
	free(v_); \
	free(b_); \
} while (0)

/*
 * field+, +field and field- on a multiple field, number+ and number- on a number: applied
 * by the UPDATE to the stored value, so that 16 concurrent requests (forked clients, each
 * appending a reader and adding 1 to views) all count, on both back ends.
 */
static void
test_records_modifiers_atomic(void)
{
	char ta[TOKEN_MAX], ua[16], body[256], *users, ids[20][16];
	const char *p = "/api/collections/notes/records/n40000000000004";
	int k, i, n = 0;

	users = RX_BOTH("GET", "/api/collections/users/records?fields=id&perPage=20&sort=id",
	    NULL, NULL, 200);
	{
		cJSON *j = cJSON_Parse(users ? users : ""), *it;

		cJSON_ArrayForEach(it, cJSON_GetObjectItem(j, "items"))
			if (n < 20 && cJSON_GetStringValue(cJSON_GetObjectItem(it, "id")) != NULL)
				snprintf(ids[n++], sizeof(ids[0]), "%s",
				    cJSON_GetStringValue(cJSON_GetObjectItem(it, "id")));
		cJSON_Delete(j);
	}
	free(users);
	CHECK_INT(n, 20);
	if (n < 20)
		return;
	for (k = 0; k < 2; k++) {
		struct stack *s = k ? &rx.pgs : &rx.lite;
		pid_t kids[16];
		char want[20 * 18 + 4];

		if (rx_signin(s, 1, ta, sizeof(ta), ua) < 0) {
			CHECK(!"user 1 signed in");
			return;
		}
		snprintf(body, sizeof(body), "{\"id\":\"n40000000000004\",\"owner\":\"%s\","
		    "\"title\":\"m\",\"views+\":3,\"views-\":1,\"labels+\":[\"x\",\"y\"]}", ua);
		RX_ONE(s, "POST", "/api/collections/notes/records", ta, body, 200);
		RX_FIELD_IS(s, ta, p, "views", "2");
		RX_FIELD_IS(s, ta, p, "labels", "[\"x\",\"y\"]");
		/* The stored value, merged by the UPDATE as rec_modify() would in C. */
		RX_ONE(s, "PATCH", p, ta, "{\"+labels\":[\"z\"],\"labels+\":\"x\"}", 200);
		RX_FIELD_IS(s, ta, p, "labels", "[\"z\",\"y\",\"x\"]");
		RX_ONE(s, "PATCH", p, ta, "{\"labels-\":[\"x\",\"q\"],\"labels+\":\"z\"}", 200);
		RX_FIELD_IS(s, ta, p, "labels", "[\"y\",\"z\"]");
		RX_ONE(s, "PATCH", p, ta, "{\"labels+\":\"nope\"}", 400);
		RX_ONE(s, "PATCH", p, ta, "{\"labels+\":[1]}", 400);
		RX_ONE(s, "PATCH", p, ta, "{\"readers+\":\"aaaaaaaaaaaaaaa\"}", 400);
		RX_FIELD_IS(s, ta, p, "labels", "[\"y\",\"z\"]");
		RX_ONE(s, "PATCH", p, ta, "{\"views-\":0.5}", 200);
		RX_FIELD_IS(s, ta, p, "views", "1.5");
		RX_ONE(s, "PATCH", p, ta, "{\"views\":10,\"views+\":1}", 200);
		RX_FIELD_IS(s, ta, p, "views", "11");
		RX_ONE(s, "PATCH", p, ta, "{\"views+\":\"1\"}", 400);
		RX_ONE(s, "PATCH", p, ta, "{\"views+\":1e308,\"views\":1e308}", 400);
		RX_ONE(s, "PATCH", p, ta, "{\"views\":0}", 200);
		/* 16 clients at once: every reader appended once, every increment counted. */
		for (i = 0; i < 16; i++) {
			if ((kids[i] = fork()) == 0) {
				struct http_resp r;
				int ok;

				snprintf(body, sizeof(body), "{\"readers+\":\"%s\",\"views+\":1}",
				    ids[i]);
				http_resp_init(&r);
				ok = rx_do(s, "PATCH", p, ta, body, &r) == 0 && r.status == 200;
				_exit(ok ? 0 : 1);
			}
		}
		for (i = 0; i < 16; i++) {
			int st = 1;

			if (kids[i] > 0)
				(void)waitpid(kids[i], &st, 0);
			CHECK(kids[i] > 0 && WIFEXITED(st) && WEXITSTATUS(st) == 0);
		}
		RX_FIELD_IS(s, ta, p, "views", "16");
		{
			char *b = rx_one(__FILE__, __LINE__, s, "GET", p, ta, NULL, 200);
			char *v = rx_field(b, "readers");
			int found = 0;

			for (i = 0; i < 16; i++) {
				snprintf(want, sizeof(want), "\"%s\"", ids[i]);
				found += v != NULL && strstr(v, want) != NULL;
			}
			CHECK_INT(found, 16);
			CHECK(v != NULL && strlen(v) == 2 + 16 * 17 + 15);
			free(v);
			free(b);
		}
	}
}

/* Form bodies (application/x-www-form-urlencoded): read by the fields' types. */
static void
test_records_form_bodies(void)
{
	static const char *const ct[] = { "Content-Type: application/x-www-form-urlencoded",
	    NULL };
	struct stack *st[2] = { &rx.lite, &rx.pgs };
	char url[256];
	int i;

	for (i = 0; i < 2; i++) {
		struct http_resp r;

		http_resp_init(&r);
		snprintf(url, sizeof(url), "%s/api/collections/users/records", st[i]->base);
		CHECK(http_do("POST", url, ct, "email=form%40example.com&password=form-pass-1&"
		    "passwordConfirm=form-pass-1&name=Form+User%21&emailVisibility=on", 110, 10000,
		    &r) == 0);
		CHECK(r.status == 200 && r.body.data != NULL &&
		    strstr(r.body.data, "\"name\":\"Form User!\"") != NULL &&
		    strstr(r.body.data, "\"emailVisibility\":true") != NULL);
		http_resp_free(&r);
		http_resp_init(&r);
		CHECK(http_do("POST", url, ct, "email=%zz", 9, 10000, &r) == 0);
		CHECK(r.status == 400);
		http_resp_free(&r);
		http_resp_init(&r);
		CHECK(http_do("POST", url, ct, "email=a%00b", 11, 10000, &r) == 0);
		CHECK(r.status == 400);
		http_resp_free(&r);
		http_resp_init(&r);
		CHECK(http_do("POST", url, ct, "email=x%40y.z&emailVisibility=maybe&password=aaaaaaaa&"
		    "passwordConfirm=aaaaaaaa", 78, 10000, &r) == 0);
		CHECK(r.status == 400 && r.body.data != NULL &&
		    strstr(r.body.data, "validation_invalid_bool") != NULL);
		http_resp_free(&r);
		http_resp_init(&r);
		CHECK(http_do("POST", url, (const char *const[]){ "Content-Type: text/plain", NULL },
		    "x", 1, 10000, &r) == 0);
		CHECK(r.status == 400);
		http_resp_free(&r);
		/* A create whose id is taken: the INSERT that returns the record fails on the
		 * key and answers 400 on both back ends, the first record unchanged. */
		CHECK(rx_do(st[i], "POST", "/api/collections/users/records", NULL, "{\"id\":"
		    "\"dupid0000000001\",\"email\":\"dup1@example.com\",\"password\":"
		    "\"dup-pass-1\",\"passwordConfirm\":\"dup-pass-1\",\"name\":\"first\"}", &r) == 0);
		CHECK(r.status == 200 && r.body.data != NULL &&
		    strstr(r.body.data, "\"name\":\"first\"") != NULL);
		http_resp_free(&r);
		http_resp_init(&r);
		CHECK(rx_do(st[i], "POST", "/api/collections/users/records", NULL, "{\"id\":"
		    "\"dupid0000000001\",\"email\":\"dup2@example.com\",\"password\":"
		    "\"dup-pass-1\",\"passwordConfirm\":\"dup-pass-1\",\"name\":\"second\"}", &r) == 0);
		CHECK(r.status == 400 && r.body.data != NULL &&
		    strstr(r.body.data, "must be unique") != NULL);
		http_resp_free(&r);
		http_resp_init(&r);
		CHECK(rx_do(st[i], "GET", "/api/collections/users/records/dupid0000000001", NULL,
		    NULL, &r) == 0);
		CHECK(r.status == 200 && r.body.data != NULL &&
		    strstr(r.body.data, "\"name\":\"first\"") != NULL);
		http_resp_free(&r);
	}
}

/* The totalItems of a list on s (path with its query), or -1. */
static long
rx_total(struct stack *s, const char *path)
{
	char *got = rx_one(__FILE__, __LINE__, s, "GET", path, NULL, NULL, 200);
	cJSON *j = cJSON_Parse(got ? got : "");
	const cJSON *v = cJSON_GetObjectItem(j, "totalItems");
	long n = cJSON_IsNumber(v) ? (long)v->valuedouble : -1;

	cJSON_Delete(j);
	free(got);
	return n;
}

/* Sends a batch body to s; checks the status and that the answer is JSON; returns it
 * parsed (free it with cJSON_Delete()), or NULL. */
static cJSON *
rx_batch(const char *file, int line, struct stack *s, const char *auth, const char *body,
    long want)
{
	char *got = rx_one(file, line, s, "POST", "/api/batch", auth, body, want);
	cJSON *j = cJSON_Parse(got ? got : "");

	if (got != NULL && j == NULL)
		harness_fail(file, line, "batch: not JSON: %.300s", got);
	free(got);
	return j;
}
#define RX_BATCH(s, auth, body, want) rx_batch(__FILE__, __LINE__, s, auth, body, want)

/* GETs path on s alone: 200 with needle in the body. */
static void
rx_one_has(const char *file, int line, struct stack *s, const char *path, const char *needle)
{
	char *got = rx_one(file, line, s, "GET", path, NULL, NULL, 200);

	if (got != NULL && strstr(got, needle) == NULL)
		harness_fail(file, line, "GET %.200s: no %s in %.300s", path, needle, got);
	free(got);
}

/* 1 when j is the JSON text want. */
static int
rx_json_is(const cJSON *j, const char *want)
{
	char *t = j != NULL ? cJSON_PrintUnformatted(j) : NULL;
	int eq = t != NULL && rx_json_eq(t, want);

	if (!eq)
		fprintf(stderr, "got  %.600s\nwant %.600s\n", t ? t : "(none)", want);
	free(t);
	return eq;
}

/* The string at a.b.c... of j (NULL-terminated keys; a number key indexes an array). */
static const char *
rx_str(const cJSON *j, const char *const *keys)
{
	for (; *keys != NULL && j != NULL; keys++)
		j = cJSON_IsArray(j) ? cJSON_GetArrayItem(j, atoi(*keys)) :
		    cJSON_GetObjectItemCaseSensitive(j, *keys);
	return cJSON_GetStringValue(j);
}

/*
 * POST /api/batch on both back ends: three creates across two collections, an update
 * with fields=, a delete and an upsert answer in order and are stored; a batch whose third
 * request its rule refuses stores nothing and answers PocketBase's 400 with index 2.
 */
static void
test_records_batch(void)
{
	char ta[TOKEN_MAX], tb[TOKEN_MAX], ua[16], ub[16], body[2048], path[256];
	cJSON *j, *it;
	long before, cbefore;
	int k;

	for (k = 0; k < 2; k++) {
		struct stack *s = k ? &rx.pgs : &rx.lite;

		if (rx_signin(s, 3, ta, sizeof(ta), ua) < 0 ||
		    rx_signin(s, 4, tb, sizeof(tb), ub) < 0) {
			CHECK(!"users 3 and 4 signed in");
			return;
		}
		snprintf(path, sizeof(path), "/api/collections/posts/records?perPage=1&filter="
		    "author%%3D'%s'", ua);
		before = rx_total(s, path);
		cbefore = rx_total(s, "/api/collections/comments/records?perPage=1");
		snprintf(body, sizeof(body), "{\"requests\":["
		    "{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\","
		    "\"body\":{\"id\":\"bp0000000000001\",\"title\":\"b1\",\"author\":\"%s\"}},"
		    "{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\","
		    "\"body\":{\"id\":\"bp0000000000002\",\"title\":\"b2\",\"author\":\"%s\"}},"
		    "{\"method\":\"POST\",\"url\":\"/api/collections/comments/records\","
		    "\"body\":{\"id\":\"bc0000000000001\",\"post\":\"bp0000000000001\","
		    "\"author\":\"%s\",\"text\":\"first\"}},"
		    "{\"method\":\"PATCH\",\"url\":\"/api/collections/posts/records/"
		    "bp0000000000002?fields=id,title\",\"body\":{\"title\":\"b2x\"}},"
		    "{\"method\":\"DELETE\",\"url\":\"/api/collections/posts/records/"
		    "bp0000000000002\"},"
		    "{\"method\":\"PUT\",\"url\":\"/api/collections/comments/records\","
		    "\"body\":{\"id\":\"bc0000000000001\",\"text\":\"upserted\"}}]}", ua, ua, ua);
		j = RX_BATCH(s, ta, body, 200);
		CHECK(cJSON_IsArray(j) && cJSON_GetArraySize(j) == 6);
		cJSON_ArrayForEach(it, j)
			CHECK_INT((long)cJSON_GetNumberValue(cJSON_GetObjectItem(it, "status")),
			    it->next == NULL || it->next->next != NULL ? 200 : 204);
		CHECK(rx_str(j, (const char *const[]){ "0", "body", "id", NULL }) != NULL &&
		    strcmp(rx_str(j, (const char *const[]){ "0", "body", "id", NULL }),
		    "bp0000000000001") == 0);
		CHECK(rx_str(j, (const char *const[]){ "2", "body", "post", NULL }) != NULL &&
		    strcmp(rx_str(j, (const char *const[]){ "2", "body", "post", NULL }),
		    "bp0000000000001") == 0);
		CHECK(rx_json_is(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 3), "body"),
		    "{\"id\":\"bp0000000000002\",\"title\":\"b2x\"}"));
		CHECK(cJSON_IsNull(cJSON_GetObjectItem(cJSON_GetArrayItem(j, 4), "body")));
		CHECK(rx_str(j, (const char *const[]){ "5", "body", "text", NULL }) != NULL &&
		    strcmp(rx_str(j, (const char *const[]){ "5", "body", "text", NULL }),
		    "upserted") == 0);
		cJSON_Delete(j);
		/* Stored: one post more, the second gone, the comment as upserted. */
		CHECK_INT(rx_total(s, path), before + 1);
		CHECK_INT(rx_total(s, "/api/collections/comments/records?perPage=1"), cbefore + 1);
		RX_ONE(s, "GET", "/api/collections/posts/records/bp0000000000001", NULL, NULL, 200);
		RX_ONE(s, "GET", "/api/collections/posts/records/bp0000000000002", NULL, NULL, 404);
		rx_one_has(__FILE__, __LINE__, s, "/api/collections/comments/records/"
		    "bc0000000000001", "\"text\":\"upserted\"");

		/* All or nothing: the third request (a comment as user 4) is refused. */
		before = rx_total(s, "/api/collections/posts/records?perPage=1");
		cbefore = rx_total(s, "/api/collections/comments/records?perPage=1");
		snprintf(body, sizeof(body), "{\"requests\":["
		    "{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\","
		    "\"body\":{\"title\":\"kept?\",\"author\":\"%s\"}},"
		    "{\"method\":\"PATCH\",\"url\":\"/api/collections/posts/records/"
		    "bp0000000000001\",\"body\":{\"title\":\"changed?\"}},"
		    "{\"method\":\"POST\",\"url\":\"/api/collections/comments/records\","
		    "\"body\":{\"post\":\"bp0000000000001\",\"author\":\"%s\",\"text\":\"x\"}}]}",
		    ua, ub);
		j = RX_BATCH(s, ta, body, 400);
		CHECK(rx_json_is(j, "{\"data\":{\"requests\":{\"2\":{"
		    "\"code\":\"batch_request_failed\",\"message\":\"Batch request failed.\","
		    "\"response\":{\"data\":{},\"message\":\"Failed to create record.\","
		    "\"status\":400}}}},\"message\":\"Batch transaction failed.\",\"status\":400}"));
		cJSON_Delete(j);
		CHECK_INT(rx_total(s, "/api/collections/posts/records?perPage=1"), before);
		CHECK_INT(rx_total(s, "/api/collections/comments/records?perPage=1"), cbefore);
		rx_one_has(__FILE__, __LINE__, s, "/api/collections/posts/records/"
		    "bp0000000000001", "\"title\":\"b1\"");
		/* A failure the database finds (a duplicate id) undoes the batch too. */
		snprintf(body, sizeof(body), "{\"requests\":["
		    "{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\","
		    "\"body\":{\"id\":\"bp0000000000009\",\"title\":\"d\",\"author\":\"%s\"}},"
		    "{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\","
		    "\"body\":{\"id\":\"bp0000000000009\",\"title\":\"d\",\"author\":\"%s\"}}]}",
		    ua, ua);
		j = RX_BATCH(s, ta, body, 400);
		CHECK(rx_str(j, (const char *const[]){ "data", "requests", "1", "code", NULL }) !=
		    NULL);
		cJSON_Delete(j);
		RX_ONE(s, "GET", "/api/collections/posts/records/bp0000000000009", NULL, NULL, 404);
		CHECK_INT(rx_total(s, "/api/collections/posts/records?perPage=1"), before);
		/* Tidy: the batch's records go, by a batch of user 3's. */
		RX_ONE(s, "POST", "/api/batch", ta, "{\"requests\":[{\"method\":\"DELETE\","
		    "\"url\":\"/api/collections/comments/records/bc0000000000001\"},"
		    "{\"method\":\"DELETE\",\"url\":\"/api/collections/posts/records/"
		    "bp0000000000001\"}]}", 200);
	}
}

/* Hostile and malformed batches: each a 4xx with a JSON error body, nothing stored. */
static void
test_records_batch_hostile(void)
{
	static const struct { const char *body; long want; const char *needle; } cases[] = {
		{ "", 400, "Failed to read the submitted batch data." },
		{ "[1,2]", 400, "Failed to read the submitted batch data." },
		{ "{\"requests\":{}}", 400, "Failed to read the submitted batch data." },
		{ "{\"requests\":\"x\"}", 400, "Failed to read the submitted batch data." },
		{ "{\"requests\":[]}", 400, "\"validation_required\"" },
		{ "{\"requests\":[1]}", 400, "Failed to read the submitted batch data." },
		{ "{\"requests\":[{\"method\":1,\"url\":\"/\"}]}", 400, "submitted batch data" },
		{ "{\"requests\":[{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\","
		  "\"body\":[1]}]}", 400, "Failed to read the submitted batch data." },
		{ "{\"requests\":[{\"method\":\"GET\",\"url\":\"/api/collections/posts/records\"}]}",
		  400, "\"batch_request_failed\"" },
		{ "{\"requests\":[{\"method\":\"POST\",\"url\":\"/api/collections/../records\"}]}",
		  400, "\"batch_request_failed\"" },
		{ "{\"requests\":[{\"method\":\"DELETE\",\"url\":\"/api/collections/posts/records/"
		  "../../etc\"}]}", 400, "\"batch_request_failed\"" },
		{ "{\"requests\":[{\"method\":\"POST\",\"url\":\"/api/health\"}]}", 400,
		  "\"batch_request_failed\"" },
		{ "{\"requests\":[{\"method\":\"POST\",\"url\":\"/api/batch\"}]}", 400,
		  "\"batch_request_failed\"" },
		{ "{\"requests\":[{\"method\":\"PATCH\",\"url\":\"/api/collections/posts/records\"}]}",
		  400, "\"batch_request_failed\"" },
	};
	char *big, *p;
	size_t i, n;
	long before;
	int k;
	cJSON *j;

	for (k = 0; k < 2; k++) {
		struct stack *s = k ? &rx.pgs : &rx.lite;

		before = rx_total(s, "/api/collections/posts/records?perPage=1");
		for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
			char *got = rx_one(__FILE__, __LINE__, s, "POST", "/api/batch", NULL,
			    cases[i].body, cases[i].want);

			if (got != NULL && (strstr(got, cases[i].needle) == NULL ||
			    !rx_json_eq(got, got)))
				harness_fail(__FILE__, __LINE__, "batch %zu: no %s in %.300s", i,
				    cases[i].needle, got);
			free(got);
		}
		/* Nested garbage past the depth: refused as unreadable. */
		n = 2000;
		big = malloc(64 + 2 * n);
		p = big + sprintf(big, "{\"requests\":");
		memset(p, '[', n);
		memset(p + n, ']', n);
		strcpy(p + 2 * n, "}");
		j = RX_BATCH(s, NULL, big, 400);
		CHECK(rx_str(j, (const char *const[]){ "message", NULL }) != NULL);
		cJSON_Delete(j);
		free(big);
		/* 51 and 10,000 requests: past the 50 allowed. */
		for (n = 51; n <= 10000; n = n == 51 ? 10000 : 10001) {
			big = malloc(64 + 4 * n);
			p = big + sprintf(big, "{\"requests\":[");
			for (i = 0; i < n; i++)
				p += sprintf(p, "%s{}", i ? "," : "");
			strcpy(p, "]}");
			j = RX_BATCH(s, NULL, big, 400);
			CHECK(rx_json_is(j, "{\"data\":{\"requests\":{"
			    "\"code\":\"validation_length_too_long\",\"message\":\"The length must "
			    "be no more than 50.\"}},\"message\":\"Invalid batch request data.\","
			    "\"status\":400}"));
			cJSON_Delete(j);
			free(big);
		}
		/* Other methods on the route, and a file part in a form. */
		RX_ONE(s, "GET", "/api/batch", NULL, NULL, 405);
		{
			static const char form[] = "--XyZ\r\nContent-Disposition: form-data; "
			    "name=\"@jsonPayload\"\r\n\r\n{\"requests\":[]}\r\n--XyZ\r\n"
			    "Content-Disposition: form-data; name=\"requests.0.f\"; "
			    "filename=\"a.txt\"\r\n\r\nhi\r\n--XyZ--\r\n";
			char url[512];
			struct http_resp r;

			snprintf(url, sizeof(url), "%s/api/batch", s->base);
			http_resp_init(&r);
			CHECK(http_do("POST", url, (const char *const[]){ "Content-Type: "
			    "multipart/form-data; boundary=XyZ", NULL }, form, sizeof(form) - 1,
			    10000, &r) == 0 && r.status == 400 && r.body.data != NULL &&
			    strstr(r.body.data, "Failed to read the submitted batch data.") != NULL);
			http_resp_free(&r);
		}
		CHECK_INT(rx_total(s, "/api/collections/posts/records?perPage=1"), before);
	}
}

/* records_batch=off on the endpoint's line: 403 in PocketBase's words.  The same stack has
 * no records_sendmail: a password reset answers 204 all the same, and its log says that
 * no mail was sent. */
static void
test_records_batch_off(void)
{
	char conf[1024];
	struct stack off;
	cJSON *j;

	memset(&off, 0, sizeof(off));
	snprintf(conf, sizeof(conf), "db records sqlite:%s\nrecords /api/ workers=1 threads=1 "
	    "db=records records_secret_file=%s records_batch=off\n", rx.litepath, rx.secret);
	if (stack_start(&off, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"a stack with records_batch=off started");
		stack_stop(&off);
		return;
	}
	j = RX_BATCH(&off, NULL, "{\"requests\":[{\"method\":\"DELETE\",\"url\":"
	    "\"/api/collections/posts/records/x\"}]}", 403);
	CHECK(rx_json_is(j, "{\"data\":{},\"message\":\"Batch requests "
	    "are not allowed.\",\"status\":403}"));
	cJSON_Delete(j);
	{
		struct http_resp r;

		http_resp_init(&r);
		CHECK(rx_do(&off, "POST", "/api/collections/users/request-password-reset", NULL,
		    "{\"email\":\"user0001@example.com\"}", &r) == 0 && r.status == 204);
		http_resp_free(&r);
		CHECK(stack_log_count(&off, "no mail sent (records_sendmail is unset)") >= 1);
	}
	stack_stop(&off);
}

/* The captured messages (*.eml) in dir. */
static int
rx_mail_count(const char *dir)
{
	struct dirent *e;
	DIR *d;
	int n = 0;

	if ((d = opendir(dir)) == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strlen(e->d_name) > 4 && strcmp(e->d_name + strlen(e->d_name) - 4, ".eml") == 0)
			n++;
	closedir(d);
	return n;
}

/* Waits up to 5 s for a message to `to` in dir, and takes it (the file is removed): its
 * text (free it), or NULL when none came. */
static char *
rx_mail_take(const char *dir, const char *to)
{
	char want[300], path[512];
	struct dirent *e;
	int tries;

	snprintf(want, sizeof(want), "\r\nTo: %s\r\n", to);
	for (tries = 0; tries < 100; tries++) {
		DIR *d = opendir(dir);

		while (d != NULL && (e = readdir(d)) != NULL) {
			char *text = NULL;
			size_t len = 0;
			FILE *f;

			if (strlen(e->d_name) < 5 ||
			    strcmp(e->d_name + strlen(e->d_name) - 4, ".eml") != 0)
				continue;
			snprintf(path, sizeof(path), "%s/%s", dir, e->d_name);
			if ((f = fopen(path, "r")) == NULL)
				continue;
			text = calloc(1, 65537);
			if (text != NULL)
				len = fread(text, 1, 65536, f);
			fclose(f);
			if (text != NULL && len > 0 && strstr(text, want) != NULL) {
				unlink(path);
				closedir(d);
				return text;
			}
			free(text);
		}
		if (d != NULL)
			closedir(d);
		usleep(50000);
	}
	return NULL;
}

/* The token of a captured message ("Token: ..." line) into out; 0 or -1. */
static int
rx_mail_token(const char *text, char *out, size_t outlen)
{
	const char *p = text != NULL ? strstr(text, "\r\nToken: ") : NULL;
	size_t n;

	if (p == NULL)
		return -1;
	p += 9;
	n = strcspn(p, "\r\n");
	if (n == 0 || n >= outlen)
		return -1;
	memcpy(out, p, n);
	out[n] = '\0';
	return 0;
}

/* Seeded user n's id and tokenKey (n 0: the superuser's), read from the SQLite file
 * (PostgreSQL's are the same: both are seeded alike).  0 or -1. */
static int
rx_user_key(int n, char id[32], char key[64])
{
	char cmd[512], line[128];
	FILE *p;
	int ok = 0;

	if (n == 0)
		snprintf(cmd, sizeof(cmd), "sqlite3 %s \"select id || ' ' || tokenKey from "
		    "_superusers\"", rx.litepath);
	else
		snprintf(cmd, sizeof(cmd), "sqlite3 %s \"select id || ' ' || tokenKey from users "
		    "where email='user%04d@example.com'\"", rx.litepath, n);
	if ((p = popen(cmd, "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), p) != NULL && sscanf(line, "%31s %63s", id, key) == 2)
		ok = 1;
	pclose(p);
	return ok && strlen(key) == 50 ? 0 : -1;
}

#define RX_INVALID_TOKEN "{\"data\":{\"token\":{\"code\":\"validation_invalid_token\"," \
	"\"message\":\"Invalid or expired token.\"}},\"message\":\"An error occurred while " \
	"validating the submitted data.\",\"status\":400}"

/* Sends a body with a token of the account flows to both stacks' route; both must answer
 * want, and with wantbody not NULL that body (a JSON object) or a body holding it. */
static void
rx_confirm(const char *file, int line, const char *route, const char *tok, const char *rest,
    long want, const char *wantbody)
{
	char path[128], body[TOKEN_MAX + 256], *got;

	snprintf(path, sizeof(path), "/api/collections/users/%s", route);
	snprintf(body, sizeof(body), "{\"token\":\"%s\"%s}", tok, rest);
	got = rx_both(file, line, "POST", path, NULL, body, want);
	if (wantbody != NULL && (wantbody[0] == '{' ? !rx_json_eq(got, wantbody) :
	    got == NULL || strstr(got, wantbody) == NULL))
		harness_fail(file, line, "POST %s: %.400s, want %s", path, got ? got : "", wantbody);
	free(got);
}
#define RX_CONFIRM(route, tok, rest, want, wantbody) \
	rx_confirm(__FILE__, __LINE__, route, tok, rest, want, wantbody)

/*
 * The account flows' routes against hostile and malformed input on both stacks, with
 * tokens made here under the stacks' secret: auth-methods in PocketBase's shape; the
 * request routes' 204 whether the account exists or not, and mail only for one that does
 * (a verified record gets no verification mail, a record asking again within 2 minutes no
 * second one); tokens that are malformed, expired, of
 * another type, of another collection, signed with another key, or for another email
 * answered with PocketBase's 400 and nothing changed.  The flows themselves, driven by the
 * SDK from the captured mail, are in records.test.mjs.
 */
static void
test_records_account_hostile(void)
{
	static const char *const bad[] = { "x", "a.b.c", "....", "eyJhbGciOiJub25lIn0.e30." };
	char id[32], key[64], tok[TOKEN_MAX], auth[TOKEN_MAX], rest[128], *b, *m;
	int64_t now = (int64_t)time(NULL);
	int before[2], i, k;

	b = RX_BOTH("GET", "/api/collections/users/auth-methods", NULL, NULL, 200);
	CHECK(rx_json_eq(b, "{\"password\":{\"identityFields\":[\"email\"],\"enabled\":true},"
	    "\"oauth2\":{\"providers\":[],\"enabled\":false},\"mfa\":{\"enabled\":false,"
	    "\"duration\":0},\"otp\":{\"enabled\":true,\"duration\":180}}"));
	free(b);
	RX_CHECK("GET", "/api/collections/posts/auth-methods", NULL, NULL, 404, "\"status\":404");
	RX_CHECK("POST", "/api/collections/users/auth-methods", NULL, "{}", 405, "\"status\":405");
	RX_CHECK("GET", "/api/collections/users/confirm-verification", NULL, NULL, 405,
	    "\"status\":405");
	RX_CHECK("POST", "/api/collections/posts/request-password-reset", NULL,
	    "{\"email\":\"user0001@example.com\"}", 404, "\"status\":404");
	RX_CHECK("POST", "/api/collections/users/request-verification", NULL, "{}", 400,
	    "\"email\":{\"code\":\"validation_required\"");
	RX_CHECK("POST", "/api/collections/users/request-password-reset", NULL,
	    "{\"email\":\"not an email\"}", 400, "\"email\":{\"code\":\"validation_is_email\"");
	RX_CHECK("POST", "/api/collections/users/request-password-reset", NULL,
	    "{\"email\":\"a@b.c\\r\\nBcc: x@y.z\"}", 400, "validation_is_email");
	RX_CHECK("POST", "/api/collections/users/request-password-reset", NULL, "[1]", 400,
	    "\"status\":400");

	/* No enumeration: 204 for nobody's address, and for a verified record's verification,
	 * with no mail sent; a record's password reset mails it. */
	before[0] = rx_mail_count(rx.mail_lite);
	before[1] = rx_mail_count(rx.mail_pg);
	RX_CHECK("POST", "/api/collections/users/request-password-reset", NULL,
	    "{\"email\":\"nobody@example.com\"}", 204, NULL);
	RX_CHECK("POST", "/api/collections/users/request-verification", NULL,
	    "{\"email\":\"nobody@example.com\"}", 204, NULL);
	RX_CHECK("POST", "/api/collections/users/request-verification", NULL,
	    "{\"email\":\"user0018@example.com\"}", 204, NULL);
	RX_CHECK("POST", "/api/collections/users/request-password-reset", NULL,
	    "{\"email\":\"user0018@example.com\"}", 204, NULL);
	for (i = 0; i < 2; i++) {
		struct token_claims cl;

		m = rx_mail_take(i ? rx.mail_pg : rx.mail_lite, "user0018@example.com");
		CHECK(m != NULL && strstr(m, "\r\nSubject: Reset your password\r\n") != NULL &&
		    strstr(m, "\r\nhttp://app.example.test/_/#/auth/confirm-password-reset/eyJ") !=
		    NULL);
		CHECK(rx_mail_token(m, tok, sizeof(tok)) == 0 &&
		    token_parse_as(tok, strlen(tok), TOKEN_PASSWORD_RESET, &cl) == 0 &&
		    strcmp(cl.email, "user0018@example.com") == 0 && cl.exp > now + 1700 &&
		    cl.exp <= now + 1800 + 5);
		free(m);
		CHECK_INT(rx_mail_count(i ? rx.mail_pg : rx.mail_lite), before[i]);
	}
	/* A second reset within 2 minutes: 204, and no second mail. */
	RX_CHECK("POST", "/api/collections/users/request-password-reset", NULL,
	    "{\"email\":\"user0018@example.com\"}", 204, NULL);
	usleep(500000);
	CHECK_INT(rx_mail_count(rx.mail_lite), before[0]);
	CHECK_INT(rx_mail_count(rx.mail_pg), before[1]);

	CHECK(rx_user_key(18, id, key) == 0);
	RX_CONFIRM("confirm-verification", "", "", 400, "{\"data\":{\"token\":{\"code\":"
	    "\"validation_required\",\"message\":\"Missing required value.\"}},\"message\":"
	    "\"An error occurred while validating the submitted data.\",\"status\":400}");
	for (i = 0; i < (int)(sizeof(bad) / sizeof(bad[0])); i++)
		RX_CONFIRM("confirm-verification", bad[i], "", 400, RX_INVALID_TOKEN);
	/* Another type: an auth token, a password reset token. */
	CHECK(token_make(tok, sizeof(tok), "_pb_users_auth_", id, key, strlen(key), now + 600) > 0);
	RX_CONFIRM("confirm-verification", tok, "", 400, RX_INVALID_TOKEN);
	RX_CONFIRM("confirm-email-change", tok, ",\"password\":\"password123\"", 400,
	    RX_INVALID_TOKEN);
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_PASSWORD_RESET, "_pb_users_auth_", id,
	    "user0018@example.com", NULL, key, strlen(key), now + 600) > 0);
	RX_CONFIRM("confirm-verification", tok, "", 400, RX_INVALID_TOKEN);
	/* Expired; signed with another key; of another collection. */
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_VERIFICATION, "_pb_users_auth_", id,
	    "user0018@example.com", NULL, key, strlen(key), now - 10) > 0);
	RX_CONFIRM("confirm-verification", tok, "", 400, RX_INVALID_TOKEN);
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_VERIFICATION, "_pb_users_auth_", id,
	    "user0018@example.com", NULL, "other", 5, now + 600) > 0);
	RX_CONFIRM("confirm-verification", tok, "", 400, RX_INVALID_TOKEN);
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_VERIFICATION, "_superusers", id,
	    "user0018@example.com", NULL, key, strlen(key), now + 600) > 0);
	RX_CONFIRM("confirm-verification", tok, "", 400, RX_INVALID_TOKEN);
	/* A good token of another auth collection (the superuser's): PocketBase's mismatch. */
	{
		char sid[32], skey[64];

		CHECK(rx_user_key(0, sid, skey) == 0);
		CHECK(token_make_as(tok, sizeof(tok), TOKEN_VERIFICATION, "pbc_3142635823", sid,
		    "admin@example.com", NULL, skey, strlen(skey), now + 600) > 0);
		RX_CONFIRM("confirm-verification", tok, "", 400, "{\"data\":{\"token\":{\"code\":"
		    "\"validation_token_collection_mismatch\",\"message\":\"The provided token is "
		    "for different auth collection.\"}},\"message\":\"An error occurred while "
		    "validating the submitted data.\",\"status\":400}");
	}
	/* Made for another email: PocketBase's mismatch. */
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_VERIFICATION, "_pb_users_auth_", id,
	    "old@example.com", NULL, key, strlen(key), now + 600) > 0);
	RX_CONFIRM("confirm-verification", tok, "", 400, "{\"data\":{\"token\":{\"code\":"
	    "\"validation_token_email_mismatch\",\"message\":\"The record email doesn't match "
	    "with the requested token claims.\"}},\"message\":\"An error occurred while "
	    "validating the submitted data.\",\"status\":400}");
	/* A good one of a verified record: 204, nothing to do. */
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_VERIFICATION, "_pb_users_auth_", id,
	    "user0018@example.com", NULL, key, strlen(key), now + 600) > 0);
	RX_CONFIRM("confirm-verification", tok, "", 204, NULL);

	/* A password reset: an expired token and a short password, both errors; a good token
	 * with passwords that differ. */
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_PASSWORD_RESET, "_pb_users_auth_", id,
	    "user0018@example.com", NULL, key, strlen(key), now - 10) > 0);
	RX_CONFIRM("confirm-password-reset", tok, ",\"password\":\"short\","
	    "\"passwordConfirm\":\"short\"", 400, "{\"data\":{\"token\":{\"code\":"
	    "\"validation_invalid_token\",\"message\":\"Invalid or expired token.\"},"
	    "\"password\":{\"code\":\"validation_length_out_of_range\",\"message\":\"The length "
	    "must be between 8 and 71.\"}},\"message\":\"An error occurred while validating the "
	    "submitted data.\",\"status\":400}");
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_PASSWORD_RESET, "_pb_users_auth_", id,
	    "user0018@example.com", NULL, key, strlen(key), now + 600) > 0);
	RX_CONFIRM("confirm-password-reset", tok, ",\"password\":\"password456\","
	    "\"passwordConfirm\":\"password789\"", 400, "\"passwordConfirm\"");

	/* An email change: signed in only, to a free address other than its own; its
	 * confirmation needs the record's password. */
	RX_CHECK("POST", "/api/collections/users/request-email-change", NULL,
	    "{\"newEmail\":\"new18@example.com\"}", 401, "\"status\":401");
	CHECK(token_make(auth, sizeof(auth), "_pb_users_auth_", id, key, strlen(key),
	    now + 600) > 0);
	RX_CHECK("POST", "/api/collections/users/request-email-change", auth,
	    "{\"newEmail\":\"user0001@example.com\"}", 400, "validation_invalid_new_email");
	RX_CHECK("POST", "/api/collections/users/request-email-change", auth,
	    "{\"newEmail\":\"user0018@example.com\"}", 400, "\"newEmail\"");
	RX_CHECK("POST", "/api/collections/users/request-email-change", auth,
	    "{\"newEmail\":\"nope\"}", 400, "validation_is_email");
	CHECK(token_make_as(tok, sizeof(tok), TOKEN_EMAIL_CHANGE, "_pb_users_auth_", id,
	    "user0018@example.com", "new18@example.com", key, strlen(key), now + 600) > 0);
	snprintf(rest, sizeof(rest), ",\"password\":\"wrong-password\"");
	RX_CONFIRM("confirm-email-change", tok, rest, 400, "{\"data\":{\"password\":{\"code\":"
	    "\"validation_invalid_password\",\"message\":\"Missing or invalid auth record "
	    "password.\"}},\"message\":\"An error occurred while validating the submitted "
	    "data.\",\"status\":400}");
	RX_CONFIRM("confirm-email-change", tok, "", 400, "\"password\":{\"code\":"
	    "\"validation_required\"");
	/* Nothing changed: the old password and email still sign in (on each back end: the
	 * tokens' times may differ by a second between the two). */
	for (k = 0; k < 2; k++) {
		char *got = rx_one(__FILE__, __LINE__, k ? &rx.pgs : &rx.lite, "POST",
		    "/api/collections/users/auth-with-password", NULL,
		    "{\"identity\":\"user0018@example.com\",\"password\":\"password123\"}",
		    200);

		CHECK(got != NULL && strstr(got, "\"verified\":true") != NULL);
		free(got);
	}
}

/* Runs the SDK's tests (tests/js/records.test.mjs) against base. */
static int
rx_js(const char *base, const char *name)
{
	const char *tests = getenv("SLUICE_TESTS");
	char env[TOKEN_MAX + 1024], cwd[512];

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	/* The seeder by an absolute path: node runs in tests/js. */
	if (tests == NULL)
		tests = "build/rel/tests";
	snprintf(env, sizeof(env), "RECORDS_URL='%s' RECORDS_EXPIRED='%s' RECORDS_MAIL='%s' "
	    "RECORDS_SEEDER='%s%s%s/../sql/records-seed' RECORDS_DB='%s%s'",
	    base, rx.expired, base == rx.lite.base ? rx.mail_lite : rx.mail_pg,
	    tests[0] == '/' ? "" : cwd, tests[0] == '/' ? "" : "/", tests,
	    base == rx.lite.base ? "sqlite:" : "", base == rx.lite.base ? rx.litepath : rx.pg.url);
	return jsrun(env, "records.test.mjs", name);
}

static void
test_records_js_sqlite(void)
{
	CHECK(rx_js(rx.lite.base, "sqlite") == 0);
}

static void
test_records_js_postgresql(void)
{
	CHECK(rx_js(rx.pgs.base, "postgresql") == 0);
}

/* Sends method path (JSON body, auth token or NULL) to s from the local address from;
 * want status, and with wantbody a body JSON-equal to it.  The body (free it), or NULL. */
static char *
rx_from(const char *file, int line, struct stack *s, const char *from, const char *method,
    const char *path, const char *auth, const char *body, long want, const char *wantbody)
{
	char url[512], h1[TOKEN_MAX + 32], *got = NULL;
	const char *headers[3] = { "Content-Type: application/json", NULL, NULL };
	struct http_resp r;

	http_resp_init(&r);
	if (auth != NULL) {
		snprintf(h1, sizeof(h1), "Authorization: %s", auth);
		headers[1] = h1;
	}
	snprintf(url, sizeof(url), "%s%s", s->base, path);
	if (http_do_from(from, method, url, headers, body, body ? strlen(body) : 0, 10000,
	    &r) < 0)
		harness_fail(file, line, "%s %s from %s: no response", method, path,
		    from ? from : "127.0.0.1");
	else if (r.status != want || (wantbody != NULL &&
	    !rx_json_eq(r.body.data ? r.body.data : "", wantbody)))
		harness_fail(file, line, "%s %s from %s (%s): %ld %.300s, want %ld %s", method, path,
		    from ? from : "127.0.0.1", s == &rx.lite ? "sqlite" : "postgresql", r.status,
		    r.body.data ? r.body.data : "", want, wantbody ? wantbody : "");
	else
		got = strdup(r.body.data ? r.body.data : "");
	http_resp_free(&r);
	return got;
}
#define RX_FROM(s, from, method, path, auth, body, want, wantbody) \
	rx_from(__FILE__, __LINE__, s, from, method, path, auth, body, want, wantbody)

/* The "token" of an auth answer into out (TOKEN_MAX); 0 or -1. */
static int
rx_token_of(const char *body, char *out)
{
	cJSON *j = cJSON_Parse(body ? body : "");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "token");
	int rc = -1;

	if (cJSON_IsString(t) && strlen(t->valuestring) < TOKEN_MAX) {
		memcpy(out, t->valuestring, strlen(t->valuestring) + 1);
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}

/* Signs in to s's collection coll as email with pw: the token into tok, or a failed
 * check. */
static int
rx_sign_in(struct stack *s, const char *coll, const char *email, const char *pw,
    char tok[TOKEN_MAX])
{
	char path[128], body[256], *b;
	int rc;

	snprintf(path, sizeof(path), "/api/collections/%s/auth-with-password", coll);
	snprintf(body, sizeof(body), "{\"identity\":\"%s\",\"password\":\"%s\"}", email, pw);
	b = RX_FROM(s, NULL, "POST", path, NULL, body, 200, NULL);
	rc = rx_token_of(b, tok);
	free(b);
	CHECK(rc == 0);
	return rc;
}

#define RX_NOT_REFRESHABLE "{\"data\":{},\"message\":\"The current auth token is not " \
	"refreshable.\",\"status\":403}"
#define RX_NO_TOKEN "{\"data\":{},\"message\":\"The request requires valid record " \
	"authorization token.\",\"status\":401}"

/*
 * Superusers on both stacks: the seeded one signs in to _superusers (PocketBase's
 * route); its token impersonates a user (200 {record, token}, the token not refreshable,
 * valid for duration seconds, that passes the user's own update rule, and that
 * auth-refresh answers 403), where no token is a 401, a user's token a 403, an unknown
 * record a 404 and a negative duration a 400.
 */
static void
test_records_superuser_impersonate(void)
{
	struct stack *const stacks[2] = { &rx.lite, &rx.pgs };
	char su[TOKEN_MAX], user[TOKEN_MAX], imp[TOKEN_MAX], id[32], key[64], path[160];
	struct token_claims cl;
	int64_t now = (int64_t)time(NULL);
	char *b;
	int i;

	CHECK(rx_user_key(7, id, key) == 0);
	snprintf(path, sizeof(path), "/api/collections/users/impersonate/%s", id);
	for (i = 0; i < 2; i++) {
		struct stack *s = stacks[i];

		if (rx_sign_in(s, "_superusers", "admin@example.com", "password123", su) < 0 ||
		    rx_sign_in(s, "users", "user0008@example.com", "password123", user) < 0)
			continue;
		free(RX_FROM(s, NULL, "POST", path, NULL, "{}", 401, RX_NO_TOKEN));
		free(RX_FROM(s, NULL, "POST", path, user, "{}", 403, "{\"data\":{},\"message\":"
		    "\"You are not allowed to perform this request.\",\"status\":403}"));
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/impersonate/nosuchrecord00",
		    su, "{}", 404, NULL));
		free(RX_FROM(s, NULL, "POST", path, su, "{\"duration\":-1}", 400, NULL));
		free(RX_FROM(s, NULL, "POST", path, su, "{\"duration\":\"x\"}", 400, NULL));
		free(RX_FROM(s, NULL, "GET", path, su, NULL, 405, NULL));
		free(RX_FROM(s, NULL, "POST", "/api/collections/posts/impersonate/x", su, "{}",
		    404, NULL));
		b = RX_FROM(s, NULL, "POST", path, su, "{\"duration\":100}", 200, NULL);
		CHECK(b != NULL && strstr(b, "\"email\":\"user0007@example.com\"") != NULL &&
		    strstr(b, "tokenKey") == NULL && strstr(b, "\"password\"") == NULL);
		if (rx_token_of(b, imp) < 0) {
			CHECK(!"an impersonation answers a token");
			free(b);
			continue;
		}
		free(b);
		CHECK(token_parse(imp, strlen(imp), &cl) == 0);
		CHECK_STR(cl.id, id);
		CHECK_INT(cl.refreshable, 0);
		CHECK(cl.exp >= now + 100 && cl.exp <= now + 160);
		/* The user's own update rule (id = @request.auth.id) lets it through. */
		snprintf(path, sizeof(path), "/api/collections/users/records/%s", id);
		free(RX_FROM(s, NULL, "PATCH", path, imp, "{\"name\":\"User 7\"}", 200, NULL));
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/auth-refresh", imp, "{}", 403,
		    RX_NOT_REFRESHABLE));
		snprintf(path, sizeof(path), "/api/collections/users/impersonate/%s", id);
		/* Without a duration: the auth token's own 5 days. */
		b = RX_FROM(s, NULL, "POST", path, su, NULL, 200, NULL);
		CHECK(rx_token_of(b, imp) == 0 && token_parse(imp, strlen(imp), &cl) == 0 &&
		    cl.exp >= now + 5 * 86400 && cl.refreshable == 0);
		free(b);
		/* A sign-in's token is still refreshable. */
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/auth-refresh", user, "{}",
		    200, NULL));
	}
}

/* Runs records-seed -a email on url with pw on its standard input; its exit status. */
static int
rx_upsert(const char *url, const char *email, const char *pw)
{
	const char *tests = getenv("SLUICE_TESTS");

	return stack_sh("printf '%%s\\n' '%s' | %s/../sql/records-seed -q -a '%s' '%s'", pw,
	    tests ? tests : "build/rel/tests", email, url);
}

/*
 * records-seed -a on both databases while their stacks serve: a new superuser signs in
 * and has a superuser's powers (it lists _superusers); a second upsert sets a new
 * password, after which the old token is a 401 and only the new password signs in;
 * malformed input is refused and changes nothing.
 */
static void
test_records_superuser_upsert(void)
{
	struct stack *const stacks[2] = { &rx.lite, &rx.pgs };
	char url[300], tok[TOKEN_MAX], tok2[TOKEN_MAX], *b;
	int i;

	for (i = 0; i < 2; i++) {
		struct stack *s = stacks[i];

		if (i == 0)
			snprintf(url, sizeof(url), "sqlite:%s", rx.litepath);
		else
			snprintf(url, sizeof(url), "%s", rx.pg.url);
		CHECK_INT(rx_upsert(url, "ops@example.com", "first-pass-1"), 0);
		if (rx_sign_in(s, "_superusers", "ops@example.com", "first-pass-1", tok) < 0)
			continue;
		b = RX_FROM(s, NULL, "GET", "/api/collections/_superusers/records", tok, NULL, 200,
		    NULL);
		CHECK(b != NULL && strstr(b, "\"email\":\"ops@example.com\"") != NULL);
		free(b);
		CHECK_INT(rx_upsert(url, "ops@example.com", "second-pass-2"), 0);
		free(RX_FROM(s, NULL, "GET", "/api/collections/_superusers/records", tok, NULL, 401,
		    NULL));
		free(RX_FROM(s, NULL, "POST", "/api/collections/_superusers/auth-with-password",
		    NULL, "{\"identity\":\"ops@example.com\",\"password\":\"first-pass-1\"}",
		    400, NULL));
		CHECK(rx_sign_in(s, "_superusers", "ops@example.com", "second-pass-2", tok2) == 0);
		/* Refused: a short password, an address with a blank. */
		CHECK(rx_upsert(url, "ops@example.com", "short") != 0);
		CHECK(rx_upsert(url, "bad address@example.com", "long-enough-1") != 0);
		CHECK(rx_sign_in(s, "_superusers", "ops@example.com", "second-pass-2", tok2) == 0);
	}
}

#define RX_TOO_MANY "{\"status\":429,\"message\":\"Too Many Requests.\",\"data\":{}}"

/*
 * The rate limits on both stacks (records_auth_limit=8, records_auth_limit_identity=4),
 * each from loopback addresses of its own (127.0.0.1 is exempt): four sign-ins naming one
 * identity, then PocketBase's 429 for a fifth, even with the right password, while
 * another identity still signs in; eight requests of one address across sign-in and the
 * account routes, then a 429 for any of them; a superuser's request is not counted.
 */
static void
test_records_rate_limits(void)
{
	struct stack *const stacks[2] = { &rx.lite, &rx.pgs };
	char body[160], su[TOKEN_MAX];
	int i, k;

	for (i = 0; i < 2; i++) {
		struct stack *s = stacks[i];
		const char *from1 = "127.0.0.2", *from2 = "127.0.0.3", *from3 = "127.0.0.4";

		for (k = 0; k < 4; k++)
			free(RX_FROM(s, from1, "POST", "/api/collections/users/auth-with-password",
			    NULL, "{\"identity\":\"User0011@example.com\",\"password\":\"wrong-pass\"}",
			    400, NULL));
		/* The identity's bucket is empty, whatever the case or the address. */
		free(RX_FROM(s, from2, "POST", "/api/collections/users/auth-with-password", NULL,
		    "{\"identity\":\"user0011@example.com\",\"password\":\"password123\"}", 429,
		    RX_TOO_MANY));
		free(RX_FROM(s, from2, "POST", "/api/collections/users/request-password-reset",
		    NULL, "{\"email\":\"user0011@example.com\"}", 429, RX_TOO_MANY));
		free(RX_FROM(s, from2, "POST", "/api/collections/users/auth-with-password", NULL,
		    "{\"identity\":\"user0012@example.com\",\"password\":\"password123\"}", 200,
		    NULL));
		/* from3: eight requests of other identities and routes, then 429. */
		for (k = 0; k < 8; k++) {
			snprintf(body, sizeof(body), "{\"identity\":\"nobody%d@example.com\","
			    "\"password\":\"wrong-pass\"}", k);
			if (k % 2 == 0)
				free(RX_FROM(s, from3, "POST",
				    "/api/collections/users/auth-with-password", NULL, body, 400, NULL));
			else
				free(RX_FROM(s, from3, "POST",
				    "/api/collections/users/confirm-verification", NULL,
				    "{\"token\":\"x\"}", 400, NULL));
		}
		free(RX_FROM(s, from3, "POST", "/api/collections/users/auth-with-password", NULL,
		    "{\"identity\":\"user0013@example.com\",\"password\":\"password123\"}", 429,
		    RX_TOO_MANY));
		free(RX_FROM(s, from3, "POST", "/api/collections/users/request-verification", NULL,
		    "{\"email\":\"user0013@example.com\"}", 429, RX_TOO_MANY));
		/* Not a counted route: lists go on. */
		free(RX_FROM(s, from3, "GET", "/api/collections/posts/records?perPage=1", NULL, NULL,
		    200, NULL));
		/* A superuser's request is not counted (signed in from the exempt address). */
		if (rx_sign_in(s, "_superusers", "admin@example.com", "password123", su) == 0)
			free(RX_FROM(s, from3, "POST", "/api/collections/users/request-password-reset",
			    su, "{\"email\":\"user0014@example.com\"}", 204, NULL));
	}
}

#define RX_OTP_INVALID "{\"data\":{},\"message\":\"Invalid or expired OTP\",\"status\":400}"

/* The otpId of a request-otp answer into out (16 bytes); 0 or -1. */
static int
rx_otp_id(const char *body, char out[16])
{
	cJSON *j = cJSON_Parse(body ? body : "");
	const cJSON *t = cJSON_GetObjectItemCaseSensitive(j, "otpId");
	int rc = -1;

	if (cJSON_IsString(t) && strlen(t->valuestring) == 15) {
		memcpy(out, t->valuestring, 16);
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}

/* Asks s's collection coll for an OTP for email: its otpId into id (0), or -1. */
static int
rx_otp_request(struct stack *s, const char *coll, const char *email, char id[16])
{
	char path[128], body[256], *b;
	int rc;

	snprintf(path, sizeof(path), "/api/collections/%s/request-otp", coll);
	snprintf(body, sizeof(body), "{\"email\":\"%s\"}", email);
	b = RX_FROM(s, NULL, "POST", path, NULL, body, 200, NULL);
	rc = rx_otp_id(b, id);
	free(b);
	CHECK(rc == 0);
	return rc;
}

/* The code mailed to `to` in dir ("Code: " line) into code (32 bytes); 0 or -1. */
static int
rx_otp_code(const char *dir, const char *to, char code[32])
{
	char *m = rx_mail_take(dir, to);
	const char *p = m != NULL ? strstr(m, "\r\nCode: ") : NULL;
	size_t n = p != NULL ? strspn(p + 8, "0123456789") : 0;
	int rc = -1;

	if (p != NULL && n > 0 && n < 32 && strstr(m, "\r\nSubject: Your one-time password\r\n")) {
		memcpy(code, p + 8, n);
		code[n] = '\0';
		rc = 0;
	}
	free(m);
	CHECK(rc == 0);
	return rc;
}

/* Sends auth-with-otp {otpId, password} to s's collection coll; want, and with wantbody
 * that body.  The body (free it). */
static char *
rx_otp_auth(const char *file, int line, struct stack *s, const char *coll, const char *id,
    const char *code, long want, const char *wantbody)
{
	char path[128], body[256];

	snprintf(path, sizeof(path), "/api/collections/%s/auth-with-otp", coll);
	snprintf(body, sizeof(body), "{\"otpId\":\"%s\",\"password\":\"%s\"}", id, code);
	return rx_from(file, line, s, NULL, "POST", path, NULL, body, want, wantbody);
}
#define RX_OTP_AUTH(s, coll, id, code, want, wantbody) \
	rx_otp_auth(__FILE__, __LINE__, s, coll, id, code, want, wantbody)

/*
 * Sign-in with a one-time password on both stacks (records_otp=users,_superusers), over
 * databases whose _otps table rx_start() dropped (the workers make it again): auth-methods
 * says OTP is on; request-otp answers an otpId for an address nobody has (no mail, and
 * the otpId signs nobody in); the code mailed to a new, unverified record signs it in once
 * (a token that works, the record verified), a wrong code and the used one are PocketBase's
 * 400; five wrong codes delete an OTP (its right code then fails too); an otpId of
 * _superusers is refused by users and still signs in at _superusers; malformed and huge
 * bodies, a base collection, and the 429 of auth-with-otp past the identity limit.
 */
static void
test_records_otp(void)
{
	struct stack *const stacks[2] = { &rx.lite, &rx.pgs };
	char email[96], body[256], id[16], id2[16], code[32], code2[32], tok[TOKEN_MAX];
	struct token_claims cl;
	char *b, *big;
	int i, k, before;

	for (i = 0; i < 2; i++) {
		struct stack *s = stacks[i];
		const char *mail = i ? rx.mail_pg : rx.mail_lite;

		tok[0] = '\0';
		b = RX_FROM(s, NULL, "GET", "/api/collections/users/auth-methods", NULL, NULL, 200,
		    NULL);
		CHECK(b != NULL && strstr(b, "\"otp\":{\"enabled\":true,\"duration\":180}") != NULL);
		free(b);
		/* Nobody's address: an otpId all the same, no mail, and it signs nobody in. */
		before = rx_mail_count(mail);
		if (rx_otp_request(s, "users", "nobody-otp@example.com", id) == 0)
			free(RX_OTP_AUTH(s, "users", id, "12345678", 400, RX_OTP_INVALID));
		usleep(300000);
		CHECK_INT(rx_mail_count(mail), before);

		/* A new record, unverified: its code signs it in once and verifies it. */
		snprintf(email, sizeof(email), "otp%d-%ld@example.com", i, (long)time(NULL));
		snprintf(body, sizeof(body), "{\"email\":\"%s\",\"password\":\"password123\","
		    "\"passwordConfirm\":\"password123\"}", email);
		b = RX_FROM(s, NULL, "POST", "/api/collections/users/records", NULL, body, 200, NULL);
		CHECK(b != NULL && strstr(b, "\"verified\":false") != NULL);
		free(b);
		if (rx_otp_request(s, "users", email, id) < 0 || rx_otp_code(mail, email, code) < 0)
			continue;
		CHECK_INT((int)strlen(code), 8);
		free(RX_OTP_AUTH(s, "users", id, "00000000", 400, RX_OTP_INVALID));
		b = RX_OTP_AUTH(s, "users", id, code, 200, NULL);
		CHECK(b != NULL && strstr(b, "\"verified\":true") != NULL &&
		    strstr(b, email) != NULL && rx_token_of(b, tok) == 0);
		free(b);
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/auth-refresh", tok, "{}", 200,
		    NULL));
		free(RX_OTP_AUTH(s, "users", id, code, 400, RX_OTP_INVALID));

		/* Five wrong codes delete it: the right one then fails too. */
		if (rx_otp_request(s, "users", email, id) == 0 &&
		    rx_otp_code(mail, email, code) == 0) {
			for (k = 0; k < 5; k++)
				free(RX_OTP_AUTH(s, "users", id, k % 2 ? "1" : "99999999", 400,
				    RX_OTP_INVALID));
			free(RX_OTP_AUTH(s, "users", id, code, 400, RX_OTP_INVALID));
		}
		/* The record goes, so that the later tests see the seeded users only. */
		if (token_parse(tok, strlen(tok), &cl) == 0) {
			snprintf(body, sizeof(body), "/api/collections/users/records/%s", cl.id);
			free(RX_FROM(s, NULL, "DELETE", body, tok, NULL, 204, NULL));
		}

		/* Another collection's otpId: refused, and left to its own collection. */
		if (rx_otp_request(s, "_superusers", "admin@example.com", id2) == 0 &&
		    rx_otp_code(mail, "admin@example.com", code2) == 0) {
			free(RX_OTP_AUTH(s, "users", id2, code2, 400, RX_OTP_INVALID));
			b = RX_OTP_AUTH(s, "_superusers", id2, code2, 200, NULL);
			CHECK(b != NULL && strstr(b, "\"admin@example.com\"") != NULL);
			free(b);
		}

		/* Malformed and hostile bodies; a base collection. */
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/request-otp", NULL, "{}", 400,
		    "{\"data\":{\"email\":{\"code\":\"validation_required\",\"message\":\"Missing "
		    "required value.\"}},\"message\":\"An error occurred while validating the "
		    "submitted data.\",\"status\":400}"));
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/request-otp", NULL,
		    "{\"email\":\"not an email\"}", 400, "{\"data\":{\"email\":{\"code\":"
		    "\"validation_is_email\",\"message\":\"Must be a valid email address.\"}},"
		    "\"message\":\"An error occurred while validating the submitted data.\","
		    "\"status\":400}"));
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/request-otp", NULL,
		    "{\"email\":\"a@b.c\\r\\nBcc: x@y.z\"}", 400, NULL));
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/request-otp", NULL, "[1]", 400,
		    NULL));
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/auth-with-otp", NULL, "{}", 400,
		    "{\"data\":{\"otpId\":{\"code\":\"validation_required\",\"message\":\"Missing "
		    "required value.\"},\"password\":{\"code\":\"validation_required\",\"message\":"
		    "\"Missing required value.\"}},\"message\":\"An error occurred while validating "
		    "the submitted data.\",\"status\":400}"));
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/auth-with-otp", NULL,
		    "{\"otpId\":5,\"password\":\"12345678\"}", 400, NULL));
		free(RX_FROM(s, NULL, "POST", "/api/collections/users/auth-with-otp", NULL,
		    "{\"otpId\":\"x'; DROP TABLE _otps; --\",\"password\":\"1\"}", 400,
		    RX_OTP_INVALID));
		free(RX_FROM(s, NULL, "GET", "/api/collections/users/request-otp", NULL, NULL, 405,
		    NULL));
		free(RX_FROM(s, NULL, "POST", "/api/collections/posts/request-otp", NULL,
		    "{\"email\":\"user0001@example.com\"}", 404, NULL));
		big = malloc(200000);
		if (big != NULL) {
			memset(big, 'a', 199999);
			big[199999] = '\0';
			memcpy(big, "{\"email\":\"", 10);
			memcpy(big + 199990, "@x.com\"}", 9);
			free(RX_FROM(s, NULL, "POST", "/api/collections/users/request-otp", NULL, big,
			    400, NULL));
			memcpy(big, "{\"otpId\":\"", 10);
			memcpy(big + 199980, "\",\"password\":\"1\"}", 18);
			free(RX_FROM(s, NULL, "POST", "/api/collections/users/auth-with-otp", NULL, big,
			    400, RX_OTP_INVALID));
			free(big);
		}
		/* auth-with-otp is counted: four guesses of one otpId, then 429. */
		for (k = 0; k < 4; k++)
			free(RX_FROM(s, "127.0.0.6", "POST", "/api/collections/users/auth-with-otp",
			    NULL, "{\"otpId\":\"aaaaaaaaaaaaaaa\",\"password\":\"1\"}", 400, NULL));
		free(RX_FROM(s, "127.0.0.7", "POST", "/api/collections/users/auth-with-otp", NULL,
		    "{\"otpId\":\"aaaaaaaaaaaaaaa\",\"password\":\"1\"}", 429, RX_TOO_MANY));
	}
}

/*
 * An OTP past its duration: a stack of its own on each database with
 * records_otp_duration=1 (and OTP for _superusers only, so that users answers PocketBase's
 * 400 for a collection without it): the mailed code, sent 2 s later, is a 400.
 */
static void
test_records_otp_expired(void)
{
	char conf[1024], id[16], code[32];
	struct stack st;
	int i;

	for (i = 0; i < 2; i++) {
		memset(&st, 0, sizeof(st));
		snprintf(conf, sizeof(conf), "db records %s%s\nrecords /api/ workers=1 threads=1 "
		    "db=records records_secret_file=%s records_sendmail=%s,%s records_otp=_superusers "
		    "records_otp_duration=1\n", i ? "" : "sqlite:", i ? rx.pg.url : rx.litepath,
		    rx.secret, rx.mailer, i ? rx.mail_pg : rx.mail_lite);
		if (stack_start(&st, conf, "tuned", 1, NULL) < 0) {
			CHECK(!"a stack with records_otp_duration=1 started");
			stack_stop(&st);
			continue;
		}
		free(RX_FROM(&st, NULL, "POST", "/api/collections/users/request-otp", NULL,
		    "{\"email\":\"user0001@example.com\"}", 400, "{\"data\":{},\"message\":\"The "
		    "collection is not configured to allow OTP authentication.\",\"status\":400}"));
		if (rx_otp_request(&st, "_superusers", "admin@example.com", id) == 0 &&
		    rx_otp_code(i ? rx.mail_pg : rx.mail_lite, "admin@example.com", code) == 0) {
			sleep(2);
			free(RX_OTP_AUTH(&st, "_superusers", id, code, 400, RX_OTP_INVALID));
		}
		stack_stop(&st);
	}
}

/* Regression: records-seed made its database 0644, where the other seeders keep theirs
 * out of other users' reach (the users' password hashes are in it). */
static void
test_records_seeded_database_not_world_readable(void)
{
	char path[128], url[160];
	struct stat st;

	snprintf(path, sizeof(path), "/tmp/sluice-records-mode-%d.db", (int)getpid());
	snprintf(url, sizeof(url), "sqlite:%s", path);
	unlink(path);
	CHECK_INT(rx_seed(url), 0);
	CHECK(stat(path, &st) == 0);
	if ((st.st_mode & 0007) != 0)
		harness_fail(__FILE__, __LINE__, "%s: mode %04o, readable by others", path,
		    (unsigned)(st.st_mode & 07777));
	stack_sh("rm -f %s %s-wal %s-shm %s-wlock", path, path, path, path);
}

#define RX_MP_CT	"Content-Type: multipart/form-data; boundary=RxB"
#define RX_MP_PART(name)	"--RxB\r\nContent-Disposition: form-data; name=\"" name "\"\r\n\r\n"
/* The fields of a valid user: a body holding them that is refused writes nobody. */
#define RX_MP_USER	RX_MP_PART("email") "mpbad@example.com\r\n" RX_MP_PART("password") \
	"mp-pass-123\r\n" RX_MP_PART("passwordConfirm") "mp-pass-123\r\n"

/* Sends body[0..len) of Content-Type ct to s (auth token or NULL): the status, the body
 * (free it) in *out; -1 without an answer. */
static long
rx_raw(struct stack *s, const char *method, const char *path, const char *auth,
    const char *ct, const char *body, size_t len, char **out)
{
	char url[512], h1[TOKEN_MAX + 32];
	const char *headers[3] = { ct, NULL, NULL };
	struct http_resp r;
	long st = -1;

	*out = NULL;
	if (auth != NULL) {
		snprintf(h1, sizeof(h1), "Authorization: %s", auth);
		headers[1] = h1;
	}
	snprintf(url, sizeof(url), "%s%s", s->base, path);
	http_resp_init(&r);
	if (http_do(method, url, headers, body, len, 10000, &r) == 0) {
		st = r.status;
		*out = strdup(r.body.data ? r.body.data : "");
	}
	http_resp_free(&r);
	return st;
}

/* A multipart create of a user that must be refused: 400 with PocketBase's JSON error
 * and needle (when not NULL) in it, the users' count unchanged. */
static void
rx_mp_refused(const char *file, int line, struct stack *s, const char *ct, const char *body,
    size_t len, const char *needle)
{
	long before = rx_total(s, "/api/collections/users/records?perPage=1"), st;
	char *got = NULL;

	st = rx_raw(s, "POST", "/api/collections/users/records", NULL, ct, body, len, &got);
	if (st != 400 || got == NULL || strstr(got, "\"status\":400") == NULL ||
	    (needle != NULL && strstr(got, needle) == NULL))
		harness_fail(file, line, "multipart (%s): %ld %.300s, want 400 with %s",
		    s == &rx.lite ? "sqlite" : "postgresql", st, got ? got : "",
		    needle ? needle : "a JSON error");
	if (before < 0 || rx_total(s, "/api/collections/users/records?perPage=1") != before)
		harness_fail(file, line, "multipart: a refused body wrote a user");
	free(got);
}
#define RX_MP_REFUSED(s, ct, body, needle) \
	rx_mp_refused(__FILE__, __LINE__, s, ct, body, sizeof(body) - 1, needle)

/* The string member key of the JSON object text into out[size]; 0 or -1. */
static int
rx_member(const char *text, const char *key, char *out, size_t size)
{
	cJSON *j = cJSON_Parse(text ? text : "");
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(j, key);
	int rc = -1;

	if (cJSON_IsString(v) && strlen(v->valuestring) < size) {
		memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}

/* What the SDK's FormData sends: a user created (a multi-line UTF-8 name, emailVisibility
 * from an "@jsonPayload", an empty file input skipped), then signed in, creates a post
 * (tags twice: an array) and updates it (tags+ and tags- modifiers, the title from an
 * "@jsonPayload"). */
static void
rx_multipart_writes(struct stack *s)
{
	char body[2048], tok[TOKEN_MAX], path[128], uid[64], pid[64], *got = NULL;
	const char *db = s == &rx.lite ? "lite" : "pg";
	int n;

	n = snprintf(body, sizeof(body), RX_MP_PART("email") "mp-%s@example.com\r\n"
	    RX_MP_PART("password") "mp-pass-123\r\n" RX_MP_PART("passwordConfirm")
	    "mp-pass-123\r\n" RX_MP_PART("name") "Multi\r\nPart \xc3\xa9\r\n"
	    RX_MP_PART("@jsonPayload") "{\"emailVisibility\":true}\r\n--RxB\r\n"
	    "Content-Disposition: form-data; name=\"avatar\"; filename=\"\"\r\n"
	    "Content-Type: application/octet-stream\r\n\r\n\r\n--RxB--\r\n", db);
	CHECK_INT(rx_raw(s, "POST", "/api/collections/users/records", NULL, RX_MP_CT, body,
	    (size_t)n, &got), 200);
	CHECK(got != NULL && strstr(got, "\"name\":\"Multi\\r\\nPart \xc3\xa9\"") != NULL &&
	    strstr(got, "\"emailVisibility\":true") != NULL && strstr(got, "mp-") != NULL);
	n = rx_member(got, "id", uid, sizeof(uid));
	free(got);
	snprintf(body, sizeof(body), "mp-%s@example.com", db);
	if (n < 0 || rx_sign_in(s, "users", body, "mp-pass-123", tok) < 0) {
		CHECK(!"the multipart user signs in");
		return;
	}
	n = snprintf(body, sizeof(body), RX_MP_PART("title") "From a form\r\n"
	    RX_MP_PART("status") "published\r\n" RX_MP_PART("author") "%s\r\n"
	    RX_MP_PART("tags") "news\r\n" RX_MP_PART("tags") "tech\r\n--RxB--\r\n", uid);
	CHECK_INT(rx_raw(s, "POST", "/api/collections/posts/records", tok, RX_MP_CT, body,
	    (size_t)n, &got), 200);
	CHECK(got != NULL && strstr(got, "\"tags\":[\"news\",\"tech\"]") != NULL &&
	    strstr(got, "\"status\":\"published\"") != NULL && strstr(got, uid) != NULL);
	n = rx_member(got, "id", pid, sizeof(pid));
	free(got);
	if (n < 0)
		return;
	snprintf(path, sizeof(path), "/api/collections/posts/records/%s", pid);
	CHECK_INT(rx_raw(s, "PATCH", path, tok, RX_MP_CT, RX_MP_PART("tags+") "life\r\n"
	    RX_MP_PART("@jsonPayload") "{\"title\":\"Renamed\"}\r\n--RxB--\r\n",
	    sizeof(RX_MP_PART("tags+") "life\r\n" RX_MP_PART("@jsonPayload")
	    "{\"title\":\"Renamed\"}\r\n--RxB--\r\n") - 1, &got), 200);
	CHECK(got != NULL && strstr(got, "\"tags\":[\"news\",\"tech\",\"life\"]") != NULL &&
	    strstr(got, "\"title\":\"Renamed\"") != NULL);
	free(got);
	CHECK_INT(rx_raw(s, "PATCH", path, tok, RX_MP_CT, RX_MP_PART("tags-") "news\r\n--RxB--",
	    sizeof(RX_MP_PART("tags-") "news\r\n--RxB--") - 1, &got), 200);
	CHECK(got != NULL && strstr(got, "\"tags\":[\"tech\",\"life\"]") != NULL);
	free(got);
}

/* Hostile multipart bodies: each a clear 400, nobody written. */
static void
rx_multipart_hostile(struct stack *s)
{
	static const char ok[] = RX_MP_USER "--RxB--\r\n";
	char *big, *p;
	size_t i;

	/* No boundary, an empty one, one past 70 characters. */
	RX_MP_REFUSED(s, "Content-Type: multipart/form-data", ok, NULL);
	RX_MP_REFUSED(s, "Content-Type: multipart/form-data; boundary=", ok, NULL);
	RX_MP_REFUSED(s, "Content-Type: multipart/form-data; boundary=RxBxxxxxxxxxxxxxxxxxxxxxxx"
	    "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxx", ok, NULL);
	/* The boundary inside a value ends it there: what follows is no delimiter. */
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER RX_MP_PART("name") "a\r\n--RxB is here\r\n"
	    "--RxB--\r\n", NULL);
	/* No closing delimiter; headers that never end; no name; a header without colon. */
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER RX_MP_PART("name") "a\r\n", NULL);
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER "--RxB\r\nContent-Disposition: form-data; "
	    "name=\"name\"\r\n", NULL);
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER "--RxB\r\nContent-Disposition: form-data\r\n\r\n"
	    "a\r\n--RxB--", NULL);
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER "--RxB\r\nContent-Disposition: form-data; "
	    "name=a\r\nbogus\r\n\r\na\r\n--RxB--", NULL);
	/* A file, its name a path: refused, the field named. */
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER "--RxB\r\nContent-Disposition: form-data; "
	    "name=\"avatar\"; filename=\"../../etc/passwd\"\r\nContent-Type: image/png\r\n\r\n"
	    "root:x:0:0\r\n--RxB--\r\n", "{\"avatar\":{\"code\":\"validation_file_not_accepted\"");
	/* A NUL, text that is not UTF-8, an "@jsonPayload" that is no object or no JSON. */
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER RX_MP_PART("name") "a\0b\r\n--RxB--", NULL);
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER RX_MP_PART("name") "a\xff\r\n--RxB--", NULL);
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER RX_MP_PART("@jsonPayload") "[1]\r\n--RxB--", NULL);
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER RX_MP_PART("@jsonPayload") "{\"a\":\r\n--RxB--",
	    NULL);
	/* The shared validation: a bool field's text read by its type. */
	RX_MP_REFUSED(s, RX_MP_CT, RX_MP_USER RX_MP_PART("emailVisibility") "maybe\r\n--RxB--",
	    "validation_invalid_bool");
	/* Part headers of 8 kB; 1,001 parts. */
	big = malloc(64 * 1024);
	if (big == NULL)
		return;
	p = big + sprintf(big, "%s--RxB\r\nContent-Disposition: form-data; name=\"name\"\r\n"
	    "X-Pad: ", RX_MP_USER);
	memset(p, 'a', 8192);
	strcpy(p + 8192, "\r\n\r\nx\r\n--RxB--\r\n");
	rx_mp_refused(__FILE__, __LINE__, s, RX_MP_CT, big, strlen(big), NULL);
	p = big + sprintf(big, "%s", RX_MP_USER);
	for (i = 0; i < 1001; i++)
		p += sprintf(p, RX_MP_PART("x") "v\r\n");
	strcpy(p, "--RxB--\r\n");
	rx_mp_refused(__FILE__, __LINE__, s, RX_MP_CT, big, strlen(big), NULL);
	free(big);
}

/* multipart/form-data bodies (the SDK's FormData) on both back ends. */
static void
test_records_multipart_bodies(void)
{
	rx_multipart_writes(&rx.lite);
	rx_multipart_writes(&rx.pgs);
	rx_multipart_hostile(&rx.lite);
	rx_multipart_hostile(&rx.pgs);
}

int
main(void)
{
	if (jsrun_install("pocketbase") < 0) {
		CHECK(!"npm ci installed pocketbase in tests/js, and node runs");
		return harness_done();
	}
	if (rx_start() < 0) {
		CHECK(!"the two stacks started");
		rx_stop();
		return harness_done();
	}
	RUN(test_records_seeded_database_not_world_readable);
	RUN(test_records_same_json);
	RUN(test_records_view_and_errors);
	RUN(test_records_hostile_filters);
	RUN(test_records_hostile_params);
	RUN(test_records_tokens);
	RUN(test_records_account_hostile);
	RUN(test_records_js_sqlite);
	RUN(test_records_js_postgresql);
	/* After the SDK's tests, which count the superusers. */
	RUN(test_records_superuser_impersonate);
	RUN(test_records_superuser_upsert);
	RUN(test_records_rate_limits);
	RUN(test_records_otp);
	RUN(test_records_otp_expired);
	RUN(test_records_paths_across_two_sets);
	RUN(test_records_rules_collection_isset_changed);
	RUN(test_records_modifiers_atomic);
	RUN(test_records_batch);
	RUN(test_records_batch_hostile);
	RUN(test_records_batch_off);
	/* Last: it adds a user, which the SDK's tests would count. */
	RUN(test_records_form_bodies);
	RUN(test_records_multipart_bodies);
	rx_stop();
	return harness_done();
}
