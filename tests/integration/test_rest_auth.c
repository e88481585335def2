/*
 * test_rest_auth: access control on the rest endpoint (apps/rest/auth.c), on SQLite
 * and PostgreSQL side by side.
 *
 * The two stacks of rest_fixture.h take HS256 tokens signed with the secret of a
 * rest_jwt_secret_file, with rest_anon_role=anon.  On PostgreSQL the roles anon, web_user
 * and reader are real roles with real grants, and the table note has a row-level security
 * policy reading current_setting('request.jwt.claims'); on SQLite rest_grants says the
 * same (anon reads and calls functions, web_user does everything, reader reads).  A third
 * stack (SQLite) takes RS256 tokens of a key pair made by the openssl command at test
 * time and has no anonymous role.  postgrest-js (tests/js/rest_auth.test.mjs) runs against
 * both with and without a token.  Each test is named after what it checks.
 */
#include <sys/stat.h>
#include <time.h>

#include "jsrun.h"
#include "jwtmake.h"
#include "rest_fixture.h"

#define SECRET	"sluice-test-secret-0123456789abcdef0123456789"
#define HS256	"{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

static struct http_resp r;
static struct stack rs;		/* RS256, no anonymous role */
static char dir[64];		/* keys and the secret file */
static char litepath2[128];

static const char pg_setup[] =
    "create role anon nologin; create role web_user nologin; create role reader nologin;\n"
    "grant usage on schema public to anon, web_user, reader;\n"
    "grant select on all tables in schema public to anon;\n"
    "grant all on all tables in schema public to web_user;\n"
    "grant select on all tables in schema public to reader;\n"
    "create table note (note_id integer primary key, owner text not null, body text);\n"
    "insert into note values (1, 'alice', 'a1'), (2, 'bob', 'b1'), (3, 'alice', 'a2');\n"
    "alter table note enable row level security;\n"
    "create policy note_owner on note using (owner = current_setting('request.jwt.claims',\n"
    "  true)::json->>'sub') with check (owner = current_setting('request.jwt.claims',\n"
    "  true)::json->>'sub');\n"
    "grant select, insert on note to web_user;\n"
    "create function whoami() returns text language sql stable as\n"
    "  $$ select current_user || ' ' || current_setting('request.method', true) || ' ' ||\n"
    "  current_setting('request.path', true) $$;\n"
    "create function header_of(h text) returns text language sql stable as\n"
    "  $$ select current_setting('request.headers', true)::json->>h $$;\n";

static const char lite_setup[] =
    "create table note (note_id integer primary key, owner text not null, body text);\n"
    "insert into note values (1, 'alice', 'a1'), (2, 'bob', 'b1'), (3, 'alice', 'a2');\n"
    /* Functions that read tables: the caller needs select on each (reads.c). */
    "create view album_v as select * from album;\n"
    "insert into sluice_functions (name, args, returns, volatility, body) values "
    "('notes_of', 'o text', 'setof note', 'stable', 'select * from note where owner = :o'), "
    "('album_titles', '', 'table(title text)', 'stable', "
    "'select title from album where album_id < 3 order by album_id'), "
    "('artist_album_names', '', 'table(name text)', 'stable', 'select ar.name from artist ar "
    "join album al on al.artist_id = ar.artist_id where al.album_id = 1'), "
    "('view_titles', '', 'table(title text)', 'stable', "
    "'select title from album_v where album_id = 1'), "
    "('artists_with_albums', '', 'integer', 'stable', 'select count(*) from artist where "
    "artist_id in (select artist_id from album)'), "
    "('notes_in', 'j text', 'setof note', 'stable', 'select * from note where note_id in "
    "(select value from json_each(:j))'), "
    /* A function that writes (rpc.c runs its UPDATE ... RETURNING on its own). */
    "('note_touch', 'i integer', 'integer', 'volatile', 'update note set body = body "
    "where note_id = :i returning note_id');\n";

/* An HS256 token of the claims, signed with key (SECRET unless told), in a static
 * buffer: use at once (the next call overwrites it). */
static const char *
hs(const char *claims, const char *key)
{
	static char t[4096];

	if (jwtmake_hs(HS256, claims, key != NULL ? key : SECRET, 256, t, sizeof(t)) < 0)
		return "";
	return t;
}

/* "Authorization: Bearer TOKEN" headers (with Content-Type JSON for writes). */
static const char *const *
bearer(const char *token)
{
	static char h[4200];
	static const char *hv[3];

	snprintf(h, sizeof(h), "Authorization: Bearer %s", token);
	hv[0] = h;
	hv[1] = "Content-Type: application/json";
	hv[2] = NULL;
	return hv;
}

static const char *
body_of(const struct http_resp *rr)
{
	return rr->body.data != NULL ? rr->body.data : "";
}

/* The error body's code, "" when there is none (static buffer). */
static const char *
code_of(const struct http_resp *rr)
{
	static char c[64];
	cJSON *j = cJSON_Parse(body_of(rr)), *v;

	c[0] = '\0';
	if (j != NULL && cJSON_IsString(v = cJSON_GetObjectItem(j, "code")))
		snprintf(c, sizeof(c), "%s", v->valuestring);
	cJSON_Delete(j);
	return c;
}

/* Sends to the one stack s. */
static long
one(struct stack *s, const char *method, const char *path, const char *const *h,
    const char *body)
{
	if (fx_do(s, method, path, h, body, &r) < 0)
		return -1;
	return r.status;
}

static void
test_rest_auth_anon_reads_but_cannot_write(void)
{
	FX_BOTH("GET", "artist?artist_id=eq.1", NULL, NULL, 200,
	    "[{\"artist_id\":1,\"name\":\"AC/DC\"}]", &r);
	FX_BOTH("GET", "rpc/add_them?a=1&b=2", NULL, NULL, 200, "3", &r);
	FX_BOTH("POST", "artist", bearer(""), NULL, 401, NULL, &r);
	/* Without a token: the anonymous role, which may not insert (42501: 401). */
	{
		static const char *const json[] = { "Content-Type: application/json", NULL };

		FX_BOTH("POST", "artist", json, "{\"artist_id\":90,\"name\":\"x\"}", 401, NULL, &r);
		CHECK_STR(code_of(&r), "42501");
		CHECK_STR(fx_header(&r, "WWW-Authenticate"), "Bearer");
		FX_BOTH("DELETE", "artist?artist_id=eq.5", json, NULL, 401, NULL, &r);
		CHECK_STR(code_of(&r), "42501");
	}
	FX_BOTH("GET", "artist?artist_id=eq.90", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "artist?artist_id=eq.5", NULL, NULL, 200,
	    "[{\"artist_id\":5,\"name\":null}]", &r);
}

static void
test_rest_auth_valid_token_writes(void)
{
	const char *t = hs("{\"role\":\"web_user\",\"sub\":\"alice\"}", NULL);

	FX_BOTH("POST", "artist", bearer(t), "{\"artist_id\":91,\"name\":\"Token\"}", 201, "", &r);
	FX_BOTH("GET", "artist?artist_id=eq.91", bearer(t), NULL, 200,
	    "[{\"artist_id\":91,\"name\":\"Token\"}]", &r);
	FX_BOTH("PATCH", "artist?artist_id=eq.91", bearer(t), "{\"name\":\"T2\"}", 204, "", &r);
	FX_BOTH("DELETE", "artist?artist_id=eq.91", bearer(t), NULL, 204, "", &r);
	FX_BOTH("GET", "artist?artist_id=eq.91", NULL, NULL, 200, "[]", &r);
}

/* A role whose grants do not cover the verb: 403 (it has a token), nothing written. */
static void
test_rest_auth_role_without_grant_is_403(void)
{
	const char *t = hs("{\"role\":\"reader\"}", NULL);

	FX_BOTH("GET", "genre?genre_id=eq.1", bearer(t), NULL, 200,
	    "[{\"genre_id\":1,\"name\":\"Rock\"}]", &r);
	FX_BOTH("POST", "genre", bearer(t), "{\"genre_id\":9,\"name\":\"x\"}", 403, NULL, &r);
	CHECK_STR(code_of(&r), "42501");
	CHECK(strstr(body_of(&r), "permission denied") != NULL);
	FX_BOTH("GET", "genre?genre_id=eq.9", NULL, NULL, 200, "[]", &r);
}

/* A role the back end does not know: 400 22023, as PostgreSQL's "role does not exist". */
static void
test_rest_auth_unknown_role_refused(void)
{
	FX_BOTH("GET", "artist", bearer(hs("{\"role\":\"nobody\"}", NULL)), NULL, 400, NULL, &r);
	CHECK_STR(code_of(&r), "22023");
	CHECK(strstr(body_of(&r), "role \\\"nobody\\\" does not exist") != NULL);
}

static void
test_rest_auth_bad_tokens_are_401(void)
{
	char claims[128], t[4096], h[512];

	snprintf(claims, sizeof(claims), "{\"role\":\"web_user\",\"exp\":%ld}",
	    (long)time(NULL) - 3600);
	FX_BOTH("GET", "artist", bearer(hs(claims, NULL)), NULL, 401,
	    "{\"code\":\"PGRST301\",\"message\":\"JWT expired\",\"details\":null,"
	    "\"hint\":null}", &r);
	CHECK_STR(fx_header(&r, "WWW-Authenticate"),
	    "Bearer error=\"invalid_token\", error_description=\"JWT expired\"");
	/* Signed with another secret. */
	FX_BOTH("GET", "artist", bearer(hs("{\"role\":\"web_user\"}",
	    "another-secret-0123456789abcdef0123456789")), NULL, 401,
	    "{\"code\":\"PGRST301\",\"message\":\"JWSError JWSInvalidSignature\","
	    "\"details\":null,\"hint\":null}", &r);
	/* alg none, with and without a signature. */
	CHECK_INT(jwtmake_hs("{\"alg\":\"none\"}", "{\"role\":\"web_user\"}", SECRET, 0, t,
	    sizeof(t)), 0);
	FX_BOTH("POST", "artist", bearer(t), "{\"artist_id\":92}", 401, NULL, &r);
	CHECK_STR(code_of(&r), "PGRST301");
	/* The wrong algorithm for a secret. */
	CHECK_INT(jwtmake_hs("{\"alg\":\"RS256\"}", "{\"role\":\"web_user\"}", SECRET, 256, t,
	    sizeof(t)), 0);
	FX_BOTH("GET", "artist", bearer(t), NULL, 401, NULL, &r);
	CHECK_STR(code_of(&r), "PGRST301");
	/* Not a token at all, and a huge one. */
	FX_BOTH("GET", "artist", bearer("not-a-token"), NULL, 401, NULL, &r);
	CHECK(strstr(body_of(&r), "Expected 3 parts; got 1") != NULL);
	FX_BOTH("GET", "artist", bearer("a.b.c"), NULL, 401, NULL, &r);
	CHECK_STR(code_of(&r), "PGRST301");
	memset(t, 'A', 4000);
	t[100] = '.';
	t[200] = '.';
	t[4000] = '\0';
	FX_BOTH("GET", "artist", bearer(t), NULL, 401, NULL, &r);
	/* Nothing was written by any of them. */
	FX_BOTH("GET", "artist?artist_id=eq.92", NULL, NULL, 200, "[]", &r);
	/* Another scheme is not a token for this API: the anonymous role. */
	snprintf(h, sizeof(h), "Authorization: Basic dXNlcjpwYXNz");
	{
		const char *const hv[] = { h, NULL };

		FX_BOTH("GET", "artist?artist_id=eq.2", hv, NULL, 200,
		    "[{\"artist_id\":2,\"name\":\"Accept\"}]", &r);
	}
}

/* PostgreSQL: the role, the claims and the request reach the database, so its policies
 * apply. */
static void
test_rest_auth_role_switch_visible_in_rls(void)
{
	const char *alice = hs("{\"role\":\"web_user\",\"sub\":\"alice\"}", NULL);
	const char *bob;
	cJSON *j;

	CHECK_INT(one(&fx.pgs, "GET", "note?select=note_id&order=note_id", bearer(alice), NULL),
	    200);
	CHECK(fx_json_eq(body_of(&r), "[{\"note_id\":1},{\"note_id\":3}]"));
	bob = hs("{\"role\":\"web_user\",\"sub\":\"bob\"}", NULL);
	CHECK_INT(one(&fx.pgs, "GET", "note?select=note_id,body", bearer(bob), NULL), 200);
	CHECK(fx_json_eq(body_of(&r), "[{\"note_id\":2,\"body\":\"b1\"}]"));
	/* Writing a row the policy does not let bob own: 403, PostgreSQL's 42501. */
	CHECK_INT(one(&fx.pgs, "POST", "note", bearer(bob),
	    "{\"note_id\":4,\"owner\":\"alice\",\"body\":\"forged\"}"), 403);
	CHECK_STR(code_of(&r), "42501");
	CHECK(strstr(body_of(&r), "row-level security") != NULL);
	CHECK_INT(one(&fx.pgs, "POST", "note", bearer(bob),
	    "{\"note_id\":5,\"owner\":\"bob\",\"body\":\"b2\"}"), 201);
	/* The anonymous role has no grant on note: reads too run as the role (401). */
	CHECK_INT(one(&fx.pgs, "GET", "note", NULL, NULL), 401);
	CHECK_STR(code_of(&r), "42501");
	CHECK_STR(fx_header(&r, "WWW-Authenticate"), "Bearer");
	/* current_user, request.method and request.path inside the function. */
	CHECK_INT(one(&fx.pgs, "GET", "rpc/whoami", bearer(bob), NULL), 200);
	j = cJSON_Parse(body_of(&r));
	CHECK(cJSON_IsString(j) && strcmp(j->valuestring, "web_user GET /rest/v1/rpc/whoami") == 0);
	cJSON_Delete(j);
	CHECK_INT(one(&fx.pgs, "GET", "rpc/whoami", NULL, NULL), 200);
	CHECK(strstr(body_of(&r), "anon GET") != NULL);
	/* request.headers: names in lower case. */
	{
		const char *const hv[] = { "X-Sluice-Test: hello \"there\"", NULL };

		CHECK_INT(one(&fx.pgs, "GET", "rpc/header_of?h=x-sluice-test", hv, NULL), 200);
		CHECK(fx_json_eq(body_of(&r), "\"hello \\\"there\\\"\""));
	}
}

/* SQLite: the same note table, guarded by rest_grants alone. */
static void
test_rest_auth_sqlite_grants(void)
{
	char t[4096];

	snprintf(t, sizeof(t), "%s", hs("{\"role\":\"web_user\"}", NULL));
	CHECK_INT(one(&fx.lite, "GET", "note?select=note_id&order=note_id", NULL, NULL), 200);
	CHECK(fx_json_eq(body_of(&r), "[{\"note_id\":1},{\"note_id\":2},{\"note_id\":3}]"));
	CHECK_INT(one(&fx.lite, "POST", "note", bearer(hs("{\"role\":\"reader\"}", NULL)),
	    "{\"note_id\":6,\"owner\":\"x\"}"), 403);
	CHECK_INT(one(&fx.lite, "POST", "note", bearer(t), "{\"note_id\":6,\"owner\":\"x\"}"),
	    201);
	CHECK_INT(one(&fx.lite, "DELETE", "note?note_id=eq.6", bearer(t), NULL), 204);
}

/*
 * rest_grants per table on SQLite: clerk reads note and artist, inserts into note and
 * calls add_them, and nothing else; an embed reads its table too, so it needs select on
 * it as well.
 */
static void
test_rest_auth_sqlite_grants_per_table(void)
{
	char t[4096];

	snprintf(t, sizeof(t), "%s", hs("{\"role\":\"clerk\"}", NULL));
	CHECK_INT(one(&fx.lite, "GET", "note?select=note_id&note_id=eq.1", bearer(t), NULL), 200);
	CHECK(fx_json_eq(body_of(&r), "[{\"note_id\":1}]"));
	CHECK_INT(one(&fx.lite, "GET", "artist?artist_id=eq.1", bearer(t), NULL), 200);
	CHECK(fx_json_eq(body_of(&r), "[{\"artist_id\":1,\"name\":\"AC/DC\"}]"));
	/* A table not listed: 403 42501, for the token's role. */
	CHECK_INT(one(&fx.lite, "GET", "album?album_id=eq.1", bearer(t), NULL), 403);
	CHECK_STR(code_of(&r), "42501");
	CHECK(strstr(body_of(&r), "permission denied for table album") != NULL);
	/* An embed of it, from a table clerk may read: refused the same. */
	CHECK_INT(one(&fx.lite, "GET", "artist?select=name,album(title)&artist_id=eq.1",
	    bearer(t), NULL), 403);
	CHECK_STR(code_of(&r), "42501");
	CHECK(strstr(body_of(&r), "album") != NULL);
	/* The verbs, per table: insert into note only, no update or delete anywhere. */
	CHECK_INT(one(&fx.lite, "POST", "note", bearer(t), "{\"note_id\":7,\"owner\":\"c\"}"),
	    201);
	CHECK_INT(one(&fx.lite, "POST", "artist", bearer(t), "{\"artist_id\":95,\"name\":\"c\"}"),
	    403);
	CHECK_STR(code_of(&r), "42501");
	CHECK_INT(one(&fx.lite, "PATCH", "note?note_id=eq.7", bearer(t), "{\"body\":\"x\"}"), 403);
	CHECK_INT(one(&fx.lite, "DELETE", "note?note_id=eq.7", bearer(t), NULL), 403);
	/* return=representation reads the row back: select on note, which clerk has. */
	{
		const char *h[4] = { NULL, "Content-Type: application/json",
		    "Prefer: return=representation", NULL };
		char auth[4200];

		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", t);
		h[0] = auth;
		CHECK_INT(one(&fx.lite, "POST", "note", h, "{\"note_id\":8,\"owner\":\"c\"}"),
		    201);
		CHECK(strstr(body_of(&r), "\"note_id\":8") != NULL);
	}
	/* RPC: execute on the functions listed only. */
	CHECK_INT(one(&fx.lite, "GET", "rpc/add_them?a=1&b=2", bearer(t), NULL), 200);
	CHECK_STR(body_of(&r), "3");
	CHECK_INT(one(&fx.lite, "GET", "rpc/all_albums", bearer(t), NULL), 403);
	CHECK_STR(code_of(&r), "42501");
	CHECK(strstr(body_of(&r), "permission denied for function all_albums") != NULL);
	/* A function reads its tables with its caller's rights, as PostgreSQL's do by
	 * default: execute on it and select on note let clerk read the notes... */
	CHECK_INT(one(&fx.lite, "GET", "rpc/notes_of?o=bob&select=note_id", bearer(t), NULL),
	    200);
	CHECK(fx_json_eq(body_of(&r), "[{\"note_id\":2}]"));
	/* (a table-valued function such as json_each() is no table to be granted) */
	CHECK_INT(one(&fx.lite, "GET", "rpc/notes_in?j=%5B1,3%5D&select=note_id&order=note_id",
	    bearer(t), NULL), 200);
	CHECK(fx_json_eq(body_of(&r), "[{\"note_id\":1},{\"note_id\":3}]"));
	/* ...and not album, however the body reaches it: directly, in a join, through a
	 * view, in a subquery. */
	{
		static const char *const album_readers[] = { "album_titles",
		    "artist_album_names", "view_titles", "artists_with_albums" };
		char path[64];
		size_t i;

		for (i = 0; i < sizeof(album_readers) / sizeof(album_readers[0]); i++) {
			snprintf(path, sizeof(path), "rpc/%s", album_readers[i]);
			CHECK_INT(one(&fx.lite, "GET", path, bearer(t), NULL), 403);
			CHECK_STR(code_of(&r), "42501");
			CHECK(strstr(body_of(&r), "permission denied for table album") != NULL);
		}
		/* A role that may read album gets the rows; anon's token-less call too. */
		snprintf(t, sizeof(t), "%s", hs("{\"role\":\"web_user\"}", NULL));
		CHECK_INT(one(&fx.lite, "GET", "rpc/album_titles", bearer(t), NULL), 200);
		CHECK(fx_json_eq(body_of(&r), "[{\"title\":\"For Those About To Rock\"},"
		    "{\"title\":\"Let There Be Rock\"}]"));
		CHECK_INT(one(&fx.lite, "GET", "rpc/view_titles", NULL, NULL), 200);
		CHECK_INT(one(&fx.lite, "GET", "rpc/artists_with_albums", NULL, NULL), 200);
		CHECK(atoi(body_of(&r)) > 0);
	}
	/* The rows clerk wrote are there; another role removes them. */
	snprintf(t, sizeof(t), "%s", hs("{\"role\":\"web_user\"}", NULL));
	/* A function that writes would write past every grant: refused under access
	 * control, even to a role that may do everything. */
	CHECK_INT(one(&fx.lite, "POST", "rpc/note_touch", bearer(t), "{\"i\":1}"), 403);
	CHECK_STR(code_of(&r), "42501");
	CHECK(strstr(body_of(&r), "permission denied for function note_touch") != NULL);
	CHECK_INT(one(&fx.lite, "DELETE", "note?note_id=in.(7,8)", bearer(t), NULL), 204);
	CHECK_INT(one(&fx.lite, "GET", "note?note_id=in.(7,8)", bearer(t), NULL), 200);
	CHECK_STR(body_of(&r), "[]");
}

/* A malformed rest_grants stops the endpoint at start-up: the worker's log says which entry
 * and why, and sluiced's crash-loop line names the endpoint's line in the list. */
static void
test_rest_auth_bad_grants_refused_at_start(void)
{
	struct stack s;
	char conf[1024];

	snprintf(conf, sizeof(conf), "set crash_loop_tries 2\ndb chinook sqlite:%s\n"
	    "rest /rest/v1/ workers=1 threads=1 db=chinook rest_anon_role=anon "
	    "rest_grants=anon:select@artist|web:selekt\n", litepath2);
	memset(&s, 0, sizeof(s));
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(1);	/* refused before serving */
		stack_stop(&s);
		return;
	}
	CHECK(one(&s, "GET", "artist", NULL, NULL) != 200);
	CHECK_INT(stack_sh("grep -rq \"rest_grants: entry 2 (.web:selekt.): 'selekt' is no "
	    "privilege\" %s", s.dir), 0);
	/* The pool fails after two quick deaths; its line is the one of "rest ...". */
	{
		long long end = stack_now_ms() + 15000;
		char st[32] = "";

		while (stack_now_ms() < end && (stack_pool_state(&s, "rest", st, sizeof(st)) < 0 ||
		    strcmp(st, "failed") != 0))
			usleep(100 * 1000);
		CHECK_STR(st, "failed");
	}
	CHECK_INT(stack_sh("l=$(grep -n '^rest ' %s | cut -d: -f1) && grep -q \"CRASH LOOP.*"
	    "line is %s:$l;\" %s/sluiced.log", s.conf, s.conf, s.dir), 0);
	stack_stop(&s);
}

/* An anonymous request that PostgreSQL's grants refuse (42501) is a normal 401: the worker
 * logs it at info, never as an error line (it logged one per request). */
static void
test_rest_auth_anon_refusal_logs_no_error(void)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	int i;

	for (i = 0; i < 3; i++) {
		CHECK_INT(one(&fx.pgs, "POST", "artist", json, "{\"artist_id\":91,\"name\":\"x\"}"),
		    401);
		CHECK_STR(code_of(&r), "42501");
	}
	CHECK_INT(stack_sh("grep -r 'info: database: .*42501' %s | grep -q 'permission denied'",
	    fx.pgs.dir), 0);
	CHECK_INT(stack_sh("grep -r ' error: ' %s | grep -q 42501", fx.pgs.dir), 1);
}

/* The RS256 stack: no anonymous role, an RSA public key. */
static void
test_rest_auth_rs256_and_no_anon(void)
{
	char t[4096], path[160], pem[4096];
	FILE *f;
	size_t n;

	CHECK_INT(one(&rs, "GET", "artist?artist_id=eq.1", NULL, NULL), 401);
	CHECK_STR(code_of(&r), "PGRST302");
	CHECK(strstr(body_of(&r), "Anonymous access is disabled") != NULL);
	CHECK_STR(fx_header(&r, "WWW-Authenticate"), "Bearer");
	snprintf(path, sizeof(path), "%s/rsa.pem", dir);
	CHECK_INT(jwtmake_key("RS256", "{\"role\":\"web_user\"}", path, t, sizeof(t)), 0);
	CHECK_INT(one(&rs, "GET", "artist?artist_id=eq.1", bearer(t), NULL), 200);
	CHECK(fx_json_eq(body_of(&r), "[{\"artist_id\":1,\"name\":\"AC/DC\"}]"));
	/* A token without a role and no anonymous role: 401 PGRST302. */
	CHECK_INT(jwtmake_key("RS256", "{\"sub\":\"x\"}", path, t, sizeof(t)), 0);
	CHECK_INT(one(&rs, "GET", "artist", bearer(t), NULL), 401);
	CHECK_STR(code_of(&r), "PGRST302");
	/* HS256 signed with the public key's text: the algorithm confusion, refused. */
	snprintf(path, sizeof(path), "%s/rsa.pub", dir);
	f = fopen(path, "r");
	CHECK(f != NULL);
	if (f == NULL)
		return;
	n = fread(pem, 1, sizeof(pem) - 1, f);
	fclose(f);
	pem[n] = '\0';
	CHECK_INT(one(&rs, "GET", "artist", bearer(hs("{\"role\":\"web_user\"}", pem)), NULL),
	    401);
	CHECK_STR(code_of(&r), "PGRST301");
	/* An HS256 token of the other stacks' secret: refused as well. */
	CHECK_INT(one(&rs, "GET", "artist", bearer(hs("{\"role\":\"web_user\"}", NULL)), NULL),
	    401);
}

/* postgrest-js with and without a token (tests/js/rest_auth.test.mjs). */
static int
js_run(struct stack *s, const char *backend)
{
	char env[12288], good[4096];

	snprintf(good, sizeof(good), "%s", hs("{\"role\":\"web_user\",\"sub\":\"alice\"}",
	    NULL));
	snprintf(env, sizeof(env), "REST_URL='%s/rest/v1' REST_BACKEND=%s REST_TOKEN='%s' "
	    "REST_BAD_TOKEN='%s'", s->base, backend, good, hs("{\"role\":\"web_user\"}",
	    "another-secret-0123456789abcdef0123456789"));
	return jsrun(env, "rest_auth.test.mjs", backend);
}

static void
test_rest_auth_postgrest_js(void)
{
	if (jsrun_install("@supabase/postgrest-js") < 0) {
		CHECK(!"npm ci installed @supabase/postgrest-js in tests/js, and node runs");
		return;
	}
	CHECK(js_run(&fx.lite, "sqlite") == 0);
	CHECK(js_run(&fx.pgs, "postgresql") == 0);
}

/* A secret shorter than 32 bytes stops the workers at start-up: nothing is served. */
static void
test_rest_auth_short_secret_refused_at_start(void)
{
	struct stack s;
	char conf[512], log[400];
	long st;

	snprintf(conf, sizeof(conf), "db chinook sqlite:%s\nrest /rest/v1/ workers=1 threads=1 "
	    "db=chinook rest_jwt_secret=short-secret-of-31-bytes-000000\n", litepath2);
	memset(&s, 0, sizeof(s));
	if (stack_start(&s, conf, "tuned", 1, NULL) < 0) {
		CHECK(1);	/* refused before serving */
		stack_stop(&s);
		return;
	}
	st = one(&s, "GET", "artist", NULL, NULL);
	CHECK(st != 200);
	snprintf(log, sizeof(log), "grep -rq 'must be at least 32' %s", s.dir);
	CHECK_INT(stack_sh("%s", log), 0);
	stack_stop(&s);
}

static int
setup(void)
{
	char path[160], xconf[400], conf[1024], url[200];
	struct stack *stacks[2] = { &fx.lite, &fx.pgs };
	pid_t pids[8];
	struct db *db;
	char err[256];
	FILE *f;
	int i, k, n;

	snprintf(dir, sizeof(dir), "/tmp/sluice-auth-%d", (int)getpid());
	if (stack_sh("rm -rf %s && mkdir -p %s && chmod 755 %s", dir, dir, dir) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/secret", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fprintf(f, "%s\n", SECRET);
	fclose(f);
	chmod(path, 0644);	/* the workers may run as the user sluice */
	if (stack_sh("openssl genpkey -algorithm RSA -pkeyopt rsa_keygen_bits:2048 -out %s/rsa.pem "
	    "2>/dev/null && openssl pkey -in %s/rsa.pem -pubout -out %s/rsa.pub && chmod 644 "
	    "%s/rsa.pub", dir, dir, dir, dir) != 0) {
		fprintf(stderr, "openssl could not make a key pair\n");
		return -1;
	}
	snprintf(xconf, sizeof(xconf), "rest_jwt_secret_file=%.100s "
	    "rest_anon_role=anon rest_grants=anon:select,execute|web_user:all|reader:select|"
	    "clerk:select@note,artist|clerk:insert@note|clerk:execute@add_them,notes_of,"
	    "album_titles,artist_album_names,view_titles,artists_with_albums,notes_in",
	    path);
	if (fx_start(xconf) < 0)
		return -1;
	/* The roles, grants and policy, then a SIGHUP so that the workers see note. */
	for (k = 0; k < 2; k++) {
		snprintf(url, sizeof(url), "sqlite:%s", fx.litepath);
		if (db_open(&db, k == 0 ? url : fx.pg.url, NULL, err, sizeof(err)) < 0)
			return -1;
		if (db_exec(db, k == 0 ? lite_setup : pg_setup) < 0) {
			fprintf(stderr, "setup: %s\n", db_errmsg(db));
			db_close(db);
			return -1;
		}
		db_close(db);
		n = stack_worker_pids(stacks[k], "rest", pids, 8);
		for (i = 0; i < n; i++)
			kill(pids[i], SIGHUP);
	}
	usleep(200 * 1000);
	/* The RS256 stack, on a copy of the SQLite file. */
	snprintf(litepath2, sizeof(litepath2), "/tmp/sluice-auth-%d.db", (int)getpid());
	if (stack_sh("cp %s %s && chmod 666 %s", fx.litepath, litepath2, litepath2) != 0)
		return -1;
	snprintf(conf, sizeof(conf), "db chinook sqlite:%s\nrest /rest/v1/ workers=1 threads=1 "
	    "db=chinook rest_jwt_secret_file=%s/rsa.pub rest_grants=web_user:select\n",
	    litepath2, dir);
	if (stack_start(&rs, conf, "tuned", 1, NULL) < 0)
		return -1;
	return 0;
}

int
main(void)
{
	http_resp_init(&r);
	if (setup() < 0) {
		CHECK(!"the stacks started");
		goto out;
	}
	RUN(test_rest_auth_anon_reads_but_cannot_write);
	RUN(test_rest_auth_valid_token_writes);
	RUN(test_rest_auth_role_without_grant_is_403);
	RUN(test_rest_auth_unknown_role_refused);
	RUN(test_rest_auth_bad_tokens_are_401);
	RUN(test_rest_auth_role_switch_visible_in_rls);
	RUN(test_rest_auth_sqlite_grants);
	RUN(test_rest_auth_sqlite_grants_per_table);
	RUN(test_rest_auth_anon_refusal_logs_no_error);
	RUN(test_rest_auth_rs256_and_no_anon);
	RUN(test_rest_auth_postgrest_js);
	RUN(test_rest_auth_short_secret_refused_at_start);
	RUN(test_rest_auth_bad_grants_refused_at_start);
out:
	stack_stop(&rs);
	fx_stop();
	stack_sh("rm -rf %s %s %s-wal %s-shm", dir, litepath2, litepath2, litepath2);
	http_resp_free(&r);
	return harness_done();
}
