/*
 * test_rest_openapi: the OpenAPI 3.1 document at the rest endpoint's root
 * (apps/rest/openapi.c), on SQLite and PostgreSQL side by side.
 *
 * The two stacks of rest_fixture.h take HS256 tokens (rest_jwt_secret_file) with
 * rest_anon_role=anon.  The anonymous role may read artist and album and call add_them,
 * and nothing else: on PostgreSQL by real grants (EXECUTE revoked from PUBLIC), on
 * SQLite by rest_grants; web_user may do everything.  Comments are PostgreSQL's COMMENT
 * ON and SQLite's sluice_comments rows.  The document must parse, say 3.1.0, list only
 * what the role may use, give each table's columns their types and required, and carry
 * the comments; tests/js/openapi.test.mjs then validates it with a standard OpenAPI
 * validator from npm, and tests/js/openapi_browser.test.mjs renders it with Swagger UI
 * (swagger-ui-dist, served on loopback) in headless chromium, with no console error.  Each test is named after what it checks.
 */
#include <sys/stat.h>

#include "jsrun.h"
#include "jwtmake.h"
#include "rest_fixture.h"

#define SECRET	"sluice-test-secret-0123456789abcdef0123456789"
#define HS256	"{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

static struct http_resp r;
static char dir[64];

static const char more_pg[] =
    "create role anon nologin; create role web_user nologin;\n"
    "grant usage on schema public to anon, web_user;\n"
    "grant select on artist, album to anon;\n"
    "grant all on all tables in schema public to web_user;\n"
    "revoke execute on all functions in schema public from public;\n"
    "grant execute on function add_them(integer, integer) to anon;\n"
    "grant execute on all functions in schema public to web_user;\n"
    "comment on table artist is 'Who made the albums';\n"
    "comment on column artist.name is 'The artist''s name';\n"
    "comment on function add_them(integer, integer) is 'Adds two integers';\n";

static const char more_sqlite[] =
    "create table sluice_comments (name text not null, column_name text,\n"
    "  description text not null);\n"
    "insert into sluice_comments values ('artist', null, 'Who made the albums'),\n"
    "  ('artist', 'name', 'The artist''s name'), ('add_them', '', 'Adds two integers'),\n"
    "  ('no_such_table', null, 'left out');\n";

/* An HS256 token of the claims, in a static buffer: use at once. */
static const char *
hs(const char *claims)
{
	static char t[4096];

	if (jwtmake_hs(HS256, claims, SECRET, 256, t, sizeof(t)) < 0)
		return "";
	return t;
}

/* Headers: Authorization with a token of role (none when NULL), then accept (if any). */
static const char *const *
hdrs(const char *role, const char *accept)
{
	static char auth[4200], acc[256], claims[128];
	static const char *hv[3];
	int n = 0;

	if (role != NULL) {
		snprintf(claims, sizeof(claims), "{\"role\":\"%s\"}", role);
		snprintf(auth, sizeof(auth), "Authorization: Bearer %s", hs(claims));
		hv[n++] = auth;
	}
	if (accept != NULL) {
		snprintf(acc, sizeof(acc), "Accept: %s", accept);
		hv[n++] = acc;
	}
	hv[n] = NULL;
	return hv;
}

/* GETs the document from s as role (NULL: anonymous); the parsed tree (caller deletes)
 * or NULL after a failed check. */
static cJSON *
doc_of(struct stack *s, const char *role, const char *name)
{
	cJSON *doc;

	if (fx_do(s, "GET", "", hdrs(role, NULL), NULL, &r) < 0 || r.status != 200) {
		harness_fail(__FILE__, __LINE__, "%s: GET /rest/v1/ answered %ld: %.300s", name,
		    r.status, r.body.data ? r.body.data : "");
		return NULL;
	}
	if ((doc = cJSON_Parse(r.body.data ? r.body.data : "")) == NULL)
		harness_fail(__FILE__, __LINE__, "%s: the document does not parse", name);
	return doc;
}

/* The member at the path of keys (NULL-terminated) under o, or NULL. */
static const cJSON *
at(const cJSON *o, const char *const *keys)
{
	for (; o != NULL && *keys != NULL; keys++)
		o = cJSON_GetObjectItemCaseSensitive(o, *keys);
	return o;
}

#define AT(o, ...)	at(o, (const char *const[]){ __VA_ARGS__, NULL })

/* The keys of object o joined by commas, in order (static buffer). */
static const char *
keys_of(const cJSON *o)
{
	static char out[2048];
	const cJSON *k;
	size_t n = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(k, o)
		n += (size_t)snprintf(out + n, n < sizeof(out) ? sizeof(out) - n : 0, "%s%s",
		    n ? "," : "", k->string);
	return out;
}

/* The strings of array a joined by commas (static buffer). */
static const char *
strings_of(const cJSON *a)
{
	static char out[1024];
	const cJSON *k;
	size_t n = 0;

	out[0] = '\0';
	cJSON_ArrayForEach(k, a)
		if (cJSON_IsString(k))
			n += (size_t)snprintf(out + n, n < sizeof(out) ? sizeof(out) - n : 0,
			    "%s%s", n ? "," : "", k->valuestring);
	return out;
}

/* The string at o, or "" (borrowed from the tree). */
static const char *
str_of(const cJSON *o)
{
	return cJSON_IsString(o) ? o->valuestring : "";
}

static struct stack *
stack_of(int k)
{
	return k == 0 ? &fx.lite : &fx.pgs;
}

static const char *const backends[] = { "sqlite", "postgresql" };

static void
test_rest_openapi_parses_as_3_1(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		cJSON *doc = doc_of(stack_of(k), NULL, backends[k]);

		if (doc == NULL)
			continue;
		CHECK_STR(str_of(AT(doc, "openapi")), "3.1.0");
		CHECK_STR(fx_header(&r, "Content-Type"), "application/openapi+json; charset=utf-8");
		CHECK_STR(str_of(AT(doc, "servers")->child ?
		    AT(doc, "servers")->child->child : NULL), "/rest/v1");
		CHECK(cJSON_IsObject(AT(doc, "components", "securitySchemes", "jwt")));
		cJSON_Delete(doc);
	}
}

/* anon reads artist and album and calls add_them, and sees nothing else. */
static void
test_rest_openapi_anon_sees_only_its_grants(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		cJSON *doc = doc_of(stack_of(k), NULL, backends[k]);

		if (doc == NULL)
			continue;
		CHECK_STR(keys_of(AT(doc, "paths")), "/album,/artist,/rpc/add_them");
		CHECK_STR(keys_of(AT(doc, "paths", "/artist")), "get");
		CHECK_STR(keys_of(AT(doc, "paths", "/rpc/add_them")), "get,post");
		CHECK_STR(keys_of(AT(doc, "components", "schemas")), "album,artist");
		CHECK(AT(doc, "components", "parameters", "artist.name") != NULL);
		CHECK(AT(doc, "components", "parameters", "track.name") == NULL);
		cJSON_Delete(doc);
	}
}

/* web_user may do everything: every table with its four operations, every function. */
static void
test_rest_openapi_token_role_sees_more(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		cJSON *doc = doc_of(stack_of(k), "web_user", backends[k]);
		const cJSON *p;

		if (doc == NULL)
			continue;
		CHECK_STR(keys_of(AT(doc, "paths", "/track")), "get,post,patch,delete");
		CHECK(AT(doc, "paths", "/rpc/albums_of", "get") != NULL);
		CHECK(AT(doc, "paths", "/rpc/albums_of", "post") != NULL);
		/* A setof album: an array of album's rows. */
		p = AT(doc, "paths", "/rpc/albums_of", "post", "responses", "200", "content",
		    "application/json", "schema");
		CHECK_STR(str_of(AT(p, "type")), "array");
		CHECK_STR(str_of(AT(p, "items", "$ref")), "#/components/schemas/album");
		/* A scalar function: its arguments, both required. */
		p = AT(doc, "paths", "/rpc/add_them", "post", "requestBody", "content",
		    "application/json", "schema");
		CHECK_STR(strings_of(AT(p, "required")), "a,b");
		CHECK_STR(strings_of(AT(p, "properties", "a", "type")), "integer,null");
		CHECK_STR(strings_of(AT(doc, "paths", "/rpc/add_them", "post", "responses", "200",
		    "content", "application/json", "schema", "type")), "integer,null");
		/* A default argument is not required. */
		p = AT(doc, "paths", "/rpc/add_default", "post", "requestBody", "content",
		    "application/json", "schema");
		CHECK_STR(strings_of(AT(p, "required")), "a");
		/* RETURNS TABLE: its columns inline. */
		p = AT(doc, "paths", "/rpc/artists_upto", "get", "responses", "200", "content",
		    "application/json", "schema", "items", "properties");
		CHECK_STR(keys_of(p), "id,name");
		/* void: 204. */
		CHECK(AT(doc, "paths", "/rpc/do_nothing", "post", "responses", "204") != NULL);
		/* sluice's own tables never show. */
		CHECK(AT(doc, "paths", "/sluice_functions") == NULL);
		CHECK(AT(doc, "paths", "/sluice_comments") == NULL);
		cJSON_Delete(doc);
	}
}

/* The row schema of track: its columns in order, their JSON types, required. */
static void
test_rest_openapi_table_schema_types_required(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		cJSON *doc = doc_of(stack_of(k), "web_user", backends[k]);
		const cJSON *t, *ty;

		if (doc == NULL)
			continue;
		t = AT(doc, "components", "schemas", "track");
		CHECK_STR(str_of(AT(t, "type")), "object");
		CHECK_STR(keys_of(AT(t, "properties")), "track_id,name,album_id,genre_id,"
		    "composer,milliseconds,unit_price");
		/* NOT NULL without a default; an SQLite INTEGER PRIMARY KEY is the rowid,
		 * given when left out. */
		CHECK_STR(strings_of(AT(t, "required")), k == 0 ?
		    "name,milliseconds,unit_price" : "track_id,name,milliseconds,unit_price");
		CHECK_STR(str_of(AT(t, "properties", "milliseconds", "type")), "integer");
		CHECK_STR(str_of(AT(t, "properties", "unit_price", "type")), "number");
		CHECK_STR(str_of(AT(t, "properties", "name", "type")), "string");
		ty = AT(t, "properties", "composer", "type");
		CHECK_STR(strings_of(ty), "string,null");
		CHECK_STR(str_of(AT(t, "properties", "milliseconds", "format")),
		    k == 0 ? "int64" : "int32");
		t = AT(doc, "components", "schemas", "employee", "properties");
		CHECK_STR(strings_of(AT(t, "active", "type")), "boolean,null");
		CHECK_STR(strings_of(AT(t, "birth_date", "type")), "string,null");
		/* A JSON column holds any value: no type. */
		CHECK(AT(doc, "components", "schemas", "doc", "properties", "body", "type") ==
		    NULL);
		/* A default makes a NOT NULL column optional. */
		CHECK_STR(strings_of(AT(doc, "components", "schemas", "actor", "required")),
		    k == 0 ? "first_name,last_name" : "actor_id,first_name,last_name");
		cJSON_Delete(doc);
	}
}

static void
test_rest_openapi_comments_are_descriptions(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		cJSON *doc = doc_of(stack_of(k), NULL, backends[k]);

		if (doc == NULL)
			continue;
		CHECK_STR(str_of(AT(doc, "components", "schemas", "artist", "description")),
		    "Who made the albums");
		CHECK_STR(str_of(AT(doc, "components", "schemas", "artist", "properties", "name",
		    "description")), "The artist's name");
		CHECK_STR(str_of(AT(doc, "paths", "/artist", "get", "description")),
		    "Who made the albums");
		CHECK_STR(str_of(AT(doc, "paths", "/rpc/add_them", "post", "description")),
		    "Adds two integers");
		CHECK(AT(doc, "components", "schemas", "album", "description") == NULL);
		cJSON_Delete(doc);
	}
}

/* The query parameters of a read: the column filters, then the dialect's own. */
static void
test_rest_openapi_read_parameters(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		cJSON *doc = doc_of(stack_of(k), NULL, backends[k]);
		const cJSON *p, *e;
		char refs[1024] = "";
		size_t n = 0;

		if (doc == NULL)
			continue;
		p = AT(doc, "paths", "/artist", "get", "parameters");
		cJSON_ArrayForEach(e, p)
			n += (size_t)snprintf(refs + n, n < sizeof(refs) ? sizeof(refs) - n : 0,
			    "%s%s", n ? " " : "", str_of(AT(e, "$ref")) +
			    strlen("#/components/parameters/"));
		CHECK_STR(refs, "artist.artist_id artist.name select order limit offset range "
		    "preferRead");
		p = AT(doc, "components", "parameters", "artist.name");
		CHECK_STR(str_of(AT(p, "name")), "name");
		CHECK_STR(str_of(AT(p, "in")), "query");
		p = AT(doc, "components", "parameters", "range");
		CHECK_STR(str_of(AT(p, "name")), "Range");
		CHECK_STR(str_of(AT(p, "in")), "header");
		CHECK_STR(str_of(AT(doc, "components", "parameters", "preferRead", "name")),
		    "Prefer");
		cJSON_Delete(doc);
	}
}

/* Accept as PostgREST negotiates it, HEAD, other methods, and the same bytes twice. */
static void
test_rest_openapi_negotiation_head_and_determinism(void)
{
	static const char *const ok[] = { "application/openapi+json", "application/json",
		"*/*", "text/html, */*;q=0.8" };
	size_t i;
	int k;

	for (k = 0; k < 2; k++) {
		struct stack *s = stack_of(k);
		char *first;

		for (i = 0; i < sizeof(ok) / sizeof(ok[0]); i++) {
			CHECK(fx_do(s, "GET", "", hdrs(NULL, ok[i]), NULL, &r) == 0);
			CHECK_INT(r.status, 200);
		}
		CHECK(fx_do(s, "GET", "", hdrs(NULL, "text/csv"), NULL, &r) == 0);
		CHECK_INT(r.status, 406);
		CHECK(r.body.data != NULL && strstr(r.body.data, "PGRST107") != NULL);
		CHECK(fx_do(s, "HEAD", "", NULL, NULL, &r) == 0);
		CHECK_INT(r.status, 200);
		CHECK_INT((long)r.body.len, 0);
		CHECK_STR(fx_header(&r, "Content-Type"), "application/openapi+json; charset=utf-8");
		CHECK(fx_do(s, "POST", "", hdrs(NULL, NULL), "{}", &r) == 0);
		CHECK_INT(r.status, 405);
		CHECK(fx_do(s, "GET", "", hdrs("web_user", NULL), NULL, &r) == 0);
		first = strdup(r.body.data ? r.body.data : "");
		CHECK(fx_do(s, "GET", "", hdrs("web_user", NULL), NULL, &r) == 0);
		CHECK(first != NULL && r.body.data != NULL && strcmp(first, r.body.data) == 0);
		free(first);
		/* A bad token is refused here too; a role nobody knows is 400. */
		CHECK(fx_do(s, "GET", "", (const char *const[]){ "Authorization: Bearer x.y.z",
		    NULL }, NULL, &r) == 0);
		CHECK_INT(r.status, 401);
		CHECK(fx_do(s, "GET", "", hdrs("nobody", NULL), NULL, &r) == 0);
		CHECK_INT(r.status, 400);
	}
}

/* The document passes a standard OpenAPI 3.1 validator (tests/js/openapi.test.mjs). */
static void
test_rest_openapi_js_validator(void)
{
	char env[12288], tok[4096];
	int k;

	if (jsrun_install("@seriousme/openapi-schema-validator") < 0) {
		CHECK(!"npm ci installed @seriousme/openapi-schema-validator in tests/js");
		return;
	}
	snprintf(tok, sizeof(tok), "%s", hs("{\"role\":\"web_user\"}"));
	for (k = 0; k < 2; k++) {
		snprintf(env, sizeof(env), "REST_URL='%s/rest/v1' REST_TOKEN='%s'",
		    stack_of(k)->base, tok);
		CHECK(jsrun(env, "openapi.test.mjs", backends[k]) == 0);
	}
}

/* Swagger UI (swagger-ui-dist) renders web_user's document in chromium with no console
 * error (tests/js/openapi_browser.test.mjs). */
static void
test_rest_openapi_swagger_ui(void)
{
	char env[12288], tok[4096];
	int k;

	if (jsrun_browser_ready() < 0 || jsrun_install("swagger-ui-dist") < 0) {
		CHECK(!"chromium, puppeteer-core and swagger-ui-dist are installed");
		return;
	}
	snprintf(tok, sizeof(tok), "%s", hs("{\"role\":\"web_user\"}"));
	for (k = 0; k < 2; k++) {
		snprintf(env, sizeof(env), "REST_URL='%s/rest/v1' REST_TOKEN='%s' "
		    "REST_BACKEND=%s", stack_of(k)->base, tok, backends[k]);
		CHECK(jsrun_browser(env, "openapi_browser.test.mjs") == 0);
	}
}

static int
setup(void)
{
	char path[128], xconf[1024];
	FILE *f;

	snprintf(dir, sizeof(dir), "/tmp/sluice-openapi-%d", (int)getpid());
	if (stack_sh("rm -rf %s && mkdir -p %s && chmod 755 %s", dir, dir, dir) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/secret", dir);
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fprintf(f, "%s\n", SECRET);
	fclose(f);
	chmod(path, 0644);	/* the workers may run as the user sluice */
	snprintf(xconf, sizeof(xconf), "rest_jwt_secret_file=%s rest_anon_role=anon "
	    "rest_grants=anon:select@artist,album|anon:execute@add_them|web_user:all", path);
	fx_more_sqlite = more_sqlite;
	fx_more_pg = more_pg;
	return fx_start(xconf);
}

int
main(void)
{
	http_resp_init(&r);
	if (setup() < 0) {
		CHECK(!"the stacks started");
		goto out;
	}
	RUN(test_rest_openapi_parses_as_3_1);
	RUN(test_rest_openapi_anon_sees_only_its_grants);
	RUN(test_rest_openapi_token_role_sees_more);
	RUN(test_rest_openapi_table_schema_types_required);
	RUN(test_rest_openapi_comments_are_descriptions);
	RUN(test_rest_openapi_read_parameters);
	RUN(test_rest_openapi_negotiation_head_and_determinism);
	RUN(test_rest_openapi_js_validator);
	RUN(test_rest_openapi_swagger_ui);
out:
	fx_stop();
	stack_sh("rm -rf %s", dir);
	http_resp_free(&r);
	return harness_done();
}
