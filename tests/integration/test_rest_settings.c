/*
 * test_rest_settings: what a request tells the database, as PostgREST tells it
 * (request.method, request.path, request.headers, request.cookies, request.jwt.claims,
 * read with current_setting()), and the pre-request function (rest_pre_request) run in
 * the request's transaction before its statement, and response.headers and
 * response.status set by a function (rpc, or the pre-request one) applied to the answer.
 *
 * The two stacks of rest_fixture.h run with rest_pre_request=public.pre_check and no
 * access control; a third stack on the same PostgreSQL takes HS256 tokens with
 * rest_anon_role=anon and the same function.  pre_check raises (with detail and hint)
 * when the request carries "X-Block: yes", divides by zero for the cookie crash=1, and
 * logs every POST in req_log, which shows that it runs in the request's transaction (a
 * failed write leaves no log row).  whoami returns what current_setting() reads; shape
 * sets response.headers and response.status to what it is given (valid and hostile:
 * not JSON, not an array, two keys, a number, a bad name, CR LF in a value, bad
 * statuses).  SQLite
 * has no functions in the database: there the setting changes nothing (documented).
 */
#include <sys/stat.h>

#include "jwtmake.h"
#include "rest_fixture.h"

#define SECRET	"sluice-test-secret-0123456789abcdef0123456789"
#define HS256	"{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

static struct http_resp r;
static struct stack authed;
static char dir[64];

static const char more_pg[] =
    "create table req_log (id serial primary key, method text, path text);\n"
    "create function pre_check() returns void language plpgsql as $$\n"
    "begin\n"
    "  if current_setting('request.headers', true)::json->>'x-block' = 'yes' then\n"
    "    raise exception 'blocked by the pre-request function'\n"
    "      using detail = 'the request said X-Block', hint = 'send no X-Block';\n"
    "  end if;\n"
    "  if current_setting('request.cookies', true)::json->>'crash' = '1' then\n"
    "    perform 1 / 0;\n"
    "  end if;\n"
    "  if current_setting('request.headers', true)::json->>'x-pre' = 'yes' then\n"
    "    perform set_config('response.headers', '[{\"X-From-Pre\": \"set\"}]', true);\n"
    "  end if;\n"
    "  if current_setting('request.method', true) = 'POST' then\n"
    "    insert into req_log (method, path)\n"
    "      values ('POST', current_setting('request.path', true));\n"
    "  end if;\n"
    "end $$;\n"
    "create function whoami() returns json language sql stable as $$\n"
    "  select json_build_object('method', current_setting('request.method', true),\n"
    "    'path', current_setting('request.path', true),\n"
    "    'test', current_setting('request.headers', true)::json->>'x-test',\n"
    "    'cookies', current_setting('request.cookies', true)::json,\n"
    "    'claims', current_setting('request.jwt.claims', true)::json) $$;\n"
    "create function shape(h text default null, s text default null) returns json\n"
    "  language plpgsql as $$\n"
    "begin\n"
    "  if h is not null then perform set_config('response.headers', h, true); end if;\n"
    "  if s is not null then perform set_config('response.status', s, true); end if;\n"
    "  return json_build_object('ok', true);\n"
    "end $$;\n"
    "create function artists_counted() returns setof artist language plpgsql as $$\n"
    "begin\n"
    "  perform set_config('response.headers', '[{\"X-Count\": \"5\"}]', true);\n"
    "  return query select * from artist order by artist_id;\n"
    "end $$;\n"
    "create function log_then_status(s text) returns void language plpgsql as $$\n"
    "begin\n"
    "  insert into req_log (method, path) values ('FN', s);\n"
    "  perform set_config('response.status', s, true);\n"
    "end $$;\n"
    "create role anon nologin;\n"
    "grant usage on schema public to anon;\n"
    "grant select, insert on artist, req_log to anon;\n"
    "grant usage on sequence req_log_id_seq to anon;\n";

static const char *const block[] = { "X-Block: yes", NULL };
static const char *const json_ct[] = { "Content-Type: application/json", NULL };
static const char *const json_block[] = { "Content-Type: application/json", "X-Block: yes",
	NULL };

/* The number of rows in req_log, read through the PostgreSQL stack; -1 on failure. */
static int
log_rows(void)
{
	cJSON *j;
	int n;

	if (fx_do(&fx.pgs, "GET", "req_log?select=id", NULL, NULL, &r) < 0 || r.status != 200)
		return -1;
	j = cJSON_Parse(r.body.data);
	n = cJSON_IsArray(j) ? cJSON_GetArraySize(j) : -1;
	cJSON_Delete(j);
	return n;
}

static void
test_rest_settings_readable(void)
{
	static const char *const h[] = { "X-Test: hi there",
		"Cookie: a=1; b=two words; bad=\xff; a=again", NULL };

	CHECK(fx_do(&fx.pgs, "GET", "rpc/whoami", h, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(fx_json_eq(r.body.data, "{\"method\":\"GET\",\"path\":\"/rest/v1/rpc/whoami\","
	    "\"test\":\"hi there\",\"cookies\":{\"a\":\"1\",\"b\":\"two words\"},"
	    "\"claims\":{}}"));
	/* A POST of the same function: its method. */
	CHECK(fx_do(&fx.pgs, "POST", "rpc/whoami", json_ct, "{}", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(strstr(r.body.data, "\"method\" : \"POST\"") != NULL);
}

/* The function raises: PostgREST's answer, 400 P0001 with its message, detail and hint;
 * nothing of the request ran. */
static void
test_rest_settings_pre_request_raises(void)
{
	int before = log_rows();

	CHECK(fx_do(&fx.pgs, "GET", "artist?artist_id=eq.1", block, NULL, &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(fx_json_eq(r.body.data, "{\"code\":\"P0001\",\"message\":\"blocked by the "
	    "pre-request function\",\"details\":\"the request said X-Block\","
	    "\"hint\":\"send no X-Block\"}"));
	CHECK(fx_do(&fx.pgs, "POST", "artist", json_block, "{\"artist_id\":101,"
	    "\"name\":\"Blocked\"}", &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(fx_do(&fx.pgs, "GET", "artist?artist_id=eq.101", NULL, NULL, &r) == 0);
	CHECK(fx_json_eq(r.body.data, "[]"));
	CHECK_INT(log_rows(), before);
	/* Any other failure of the function: the database's answer as for any statement. */
	{
		static const char *const crash[] = { "Cookie: crash=1", NULL };

		CHECK(fx_do(&fx.pgs, "GET", "artist?artist_id=eq.1", crash, NULL, &r) == 0);
		CHECK_INT(r.status, 400);
		CHECK(strstr(r.body.data, "division by zero") != NULL);
	}
	/* The worker still serves. */
	CHECK(fx_do(&fx.pgs, "GET", "artist?artist_id=eq.1&select=name", NULL, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(fx_json_eq(r.body.data, "[{\"name\":\"AC/DC\"}]"));
}

/* The function's write is the request's: kept with a write that commits, gone with one
 * that fails. */
static void
test_rest_settings_pre_request_in_transaction(void)
{
	int before = log_rows();

	CHECK(before >= 0);
	CHECK(fx_do(&fx.pgs, "POST", "artist", json_ct, "{\"artist_id\":100,\"name\":\"New\"}",
	    &r) == 0);
	CHECK_INT(r.status, 201);
	CHECK_INT(log_rows(), before + 1);
	CHECK(fx_do(&fx.pgs, "GET", "req_log?select=method,path&order=id.desc&limit=1", NULL,
	    NULL, &r) == 0);
	CHECK(fx_json_eq(r.body.data, "[{\"method\":\"POST\",\"path\":\"/rest/v1/artist\"}]"));
	/* A duplicate key: 409, and the log row went with the transaction. */
	CHECK(fx_do(&fx.pgs, "POST", "artist", json_ct, "{\"artist_id\":1,\"name\":\"Dup\"}",
	    &r) == 0);
	CHECK_INT(r.status, 409);
	CHECK_INT(log_rows(), before + 1);
}

/* With access control: the role's claims, the function after the role. */
static void
test_rest_settings_with_roles(void)
{
	static char tok[4096], auth[4200];
	const char *h[3] = { auth, "X-Block: yes", NULL };

	CHECK(fx_do(&authed, "GET", "rpc/whoami", NULL, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(strstr(r.body.data, "\"claims\" : {\"role\":\"anon\"}") != NULL);
	CHECK(fx_do(&authed, "GET", "artist?artist_id=eq.1", block, NULL, &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(strstr(r.body.data, "\"P0001\"") != NULL);
	/* A role that does not exist is still that, not the function's failure. */
	CHECK(jwtmake_hs(HS256, "{\"role\":\"nobody\"}", SECRET, 256, tok, sizeof(tok)) == 0);
	snprintf(auth, sizeof(auth), "Authorization: Bearer %s", tok);
	h[1] = NULL;
	CHECK(fx_do(&authed, "GET", "artist", h, NULL, &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(strstr(r.body.data, "role \\\"nobody\\\" does not exist") != NULL);
	/* The anonymous role's POST is logged by the function, in its transaction. */
	CHECK(fx_do(&authed, "POST", "artist", json_ct, "{\"artist_id\":102,\"name\":\"Anon\"}",
	    &r) == 0);
	CHECK_INT(r.status, 201);
	CHECK(fx_do(&fx.pgs, "GET", "req_log?select=path&order=id.desc&limit=1", NULL, NULL,
	    &r) == 0);
	CHECK(fx_json_eq(r.body.data, "[{\"path\":\"/rest/v1/artist\"}]"));
}


/* POSTs body to rpc/shape on the PostgreSQL stack into r. */
static void
shape(const char *body)
{
	CHECK(fx_do(&fx.pgs, "POST", "rpc/shape", json_ct, body, &r) == 0);
}

static void
test_rest_settings_response_applied(void)
{
	static const char *const pre[] = { "X-Pre: yes", NULL };

	shape("{\"h\":\"[{\\\"X-A\\\": \\\"one\\\"}, {\\\"Content-Type\\\": "
	    "\\\"application/vnd.test+json\\\"}]\",\"s\":\"201\"}");
	CHECK_INT(r.status, 201);
	CHECK_STR(fx_header(&r, "X-A"), "one");
	CHECK_STR(fx_header(&r, "Content-Type"), "application/vnd.test+json");
	CHECK(fx_json_eq(r.body.data, "{\"ok\":true}"));
	/* A status of a failure, with the function's own body. */
	shape("{\"s\":\"404\"}");
	CHECK_INT(r.status, 404);
	CHECK(fx_json_eq(r.body.data, "{\"ok\":true}"));
	/* A function returning rows; the pre-request function's headers. */
	CHECK(fx_do(&fx.pgs, "GET", "rpc/artists_counted?select=artist_id&limit=2", NULL, NULL,
	    &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(fx_header(&r, "X-Count"), "5");
	CHECK(fx_json_eq(r.body.data, "[{\"artist_id\":1},{\"artist_id\":2}]"));
	CHECK(fx_do(&fx.pgs, "GET", "artist?artist_id=eq.1&select=name", pre, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(fx_header(&r, "X-From-Pre"), "set");
	/* Not set: nothing added. */
	shape("{}");
	CHECK_INT(r.status, 200);
	CHECK_STR(fx_header(&r, "X-A"), "");
}

/* Values a function must not set: PostgREST's 500s, nothing of them applied. */
static void
test_rest_settings_response_invalid(void)
{
	static const char *const bad_headers[] = {
		"{\"h\":\"nope\"}", "{\"h\":\"{\\\"X-A\\\": \\\"1\\\"}\"}",
		"{\"h\":\"[{\\\"X-A\\\": \\\"1\\\", \\\"X-B\\\": \\\"2\\\"}]\"}",
		"{\"h\":\"[{\\\"X-A\\\": 1}]\"}", "{\"h\":\"[{}]\"}", "{\"h\":\"[\\\"X-A\\\"]\"}",
		"{\"h\":\"[{\\\"X A\\\": \\\"1\\\"}]\"}",
		"{\"h\":\"[{\\\"X-A\\\": \\\"1\\\\r\\\\nSet-Cookie: evil=1\\\"}]\"}",
		"{\"h\":\"[{\\\"X-A\\\": \\\"1\\\"}]\",\"s\":\"999\"}",
	};
	static const char *const bad_status[] = { "abc", "99", "600", "2000", "20x", "-200",
		" 200", "2e2" };
	char body[128];
	size_t i;

	for (i = 0; i < sizeof(bad_headers) / sizeof(bad_headers[0]); i++) {
		shape(bad_headers[i]);
		CHECK_INT(r.status, 500);
		CHECK(strstr(r.body.data, i + 1 < sizeof(bad_headers) / sizeof(bad_headers[0]) ?
		    "PGRST111" : "PGRST112") != NULL);
		CHECK_STR(fx_header(&r, "X-A"), "");
		CHECK_STR(fx_header(&r, "Set-Cookie"), "");
	}
	CHECK(strstr(r.body.data, "response.status guc must be a valid status code") != NULL);
	shape(bad_headers[0]);
	CHECK(fx_json_eq(r.body.data, "{\"code\":\"PGRST111\",\"message\":\"response.headers "
	    "guc must be a JSON array composed of objects with a single key and a string "
	    "value\",\"details\":null,\"hint\":null}"));
	for (i = 0; i < sizeof(bad_status) / sizeof(bad_status[0]); i++) {
		snprintf(body, sizeof(body), "{\"s\":\"%s\"}", bad_status[i]);
		shape(body);
		CHECK_INT(r.status, 500);
		CHECK(strstr(r.body.data, "PGRST112") != NULL);
	}
}

/* In the request's transaction (access control on): a refused value undoes the
 * function's write; a valid one keeps it. */
static void
test_rest_settings_response_invalid_rolls_back(void)
{
	CHECK(fx_do(&authed, "POST", "rpc/log_then_status", json_ct, "{\"s\":\"bad\"}",
	    &r) == 0);
	CHECK_INT(r.status, 500);
	CHECK(strstr(r.body.data, "PGRST112") != NULL);
	CHECK(fx_do(&fx.pgs, "GET", "req_log?method=eq.FN&select=path", NULL, NULL, &r) == 0);
	CHECK(fx_json_eq(r.body.data, "[]"));
	CHECK(fx_do(&authed, "POST", "rpc/log_then_status", json_ct, "{\"s\":\"202\"}",
	    &r) == 0);
	CHECK_INT(r.status, 202);
	CHECK(fx_do(&fx.pgs, "GET", "req_log?method=eq.FN&select=path", NULL, NULL, &r) == 0);
	CHECK(fx_json_eq(r.body.data, "[{\"path\":\"202\"}]"));
}

/* SQLite: no functions in the database, so no pre-request function: served as ever. */
static void
test_rest_settings_sqlite_not_applied(void)
{
	CHECK(fx_do(&fx.lite, "GET", "artist?artist_id=eq.1&select=name", block, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(fx_json_eq(r.body.data, "[{\"name\":\"AC/DC\"}]"));
}

static int
setup(void)
{
	char path[128], conf[1024];
	FILE *f;
	int rc;

	snprintf(dir, sizeof(dir), "/tmp/sluice-settings-%d", (int)getpid());
	if (mkdir(dir, 0755) < 0)
		return -1;
	snprintf(path, sizeof(path), "%s/secret", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fprintf(f, "%s\n", SECRET);
	fclose(f);
	chmod(path, 0644);	/* the workers may run as the user sluice */
	fx_more_pg = more_pg;
	if (fx_start("rest_pre_request=public.pre_check") < 0)
		return -1;
	/* The database's URL from the environment, as the fixture's PostgreSQL stack. */
	snprintf(conf, sizeof(conf), "db chinook sqlite:%s\nrest /rest/v1/ workers=1 "
	    "threads=2 db=chinook rest_pre_request=public.pre_check rest_jwt_secret_file=%s "
	    "rest_anon_role=anon\n", fx.litepath, path);
	setenv("SLUICE_DB_CHINOOK", fx.pg.url, 1);
	rc = stack_start(&authed, conf, "tuned", 1, NULL);
	unsetenv("SLUICE_DB_CHINOOK");
	return rc;
}

int
main(void)
{
	http_resp_init(&r);
	if (setup() < 0) {
		CHECK(!"the stacks started");
		goto out;
	}
	RUN(test_rest_settings_readable);
	RUN(test_rest_settings_pre_request_raises);
	RUN(test_rest_settings_pre_request_in_transaction);
	RUN(test_rest_settings_with_roles);
	RUN(test_rest_settings_response_applied);
	RUN(test_rest_settings_response_invalid);
	RUN(test_rest_settings_response_invalid_rolls_back);
	RUN(test_rest_settings_sqlite_not_applied);
out:
	stack_stop(&authed);
	fx_stop();
	stack_sh("rm -rf %s", dir);
	http_resp_free(&r);
	return harness_done();
}
