/*
 * test_rest_safety: what the rest endpoint refuses so that it never stores bad data, never
 * reports a write wrongly and cannot be written to by a cross-site form, on SQLite and
 * PostgreSQL side by side: non-finite numbers and NUL escapes in bodies, a representation
 * too large for its buffer, CSV with a repeated key, wide select= lists and on_conflict=
 * without a unique constraint, PATCH and DELETE without a filter (refused unless the
 * endpoint sets rest_unfiltered_writes=1), writes without a JSON Content-Type, and CORS
 * (no Access-Control-* headers unless the origin is in rest_cors_origins; preflight).
 * Each test is named after what it reproduces.
 */
#include "rest_fixture.h"

static struct http_resp r;

static const char *const json[] = { "Content-Type: application/json", NULL };
static const char *const rep[] = { "Content-Type: application/json",
	"Prefer: return=representation", NULL };
static const char *const csv[] = { "Accept: text/csv", NULL };

#define GOOD_ORIGIN	"https://app.example"

/* r's body, "" when there is none. */
static const char *
body_of(const struct http_resp *rr)
{
	return rr->body.data != NULL ? rr->body.data : "";
}

/* 1 when r's body is JSON (or empty). */
static int
is_json(const struct http_resp *rr)
{
	cJSON *v;

	if (rr->body.data == NULL || rr->body.data[0] == '\0')
		return 1;
	if ((v = cJSON_Parse(rr->body.data)) == NULL)
		return 0;
	cJSON_Delete(v);
	return 1;
}

/* Regression: "unit_price":1e999 was stored as Inf (201) and every later read was "Inf",
 * not JSON. */
static void
test_rest_post_infinite_number_refused(void)
{
	FX_BOTH("POST", "track", json, "{\"track_id\":50,\"name\":\"x\",\"milliseconds\":1,"
	    "\"unit_price\":1e999}", 400, NULL, &r);
	CHECK(strstr(body_of(&r), "PGRST102") != NULL);
	FX_BOTH("POST", "track", json, "[{\"track_id\":50,\"name\":\"x\",\"milliseconds\":1,"
	    "\"unit_price\":-1e400}]", 400, NULL, &r);
	FX_BOTH("PATCH", "track?track_id=eq.1", json, "{\"unit_price\":1E+999}", 400, NULL, &r);
	FX_BOTH("POST", "rpc/add_them", json, "{\"a\":1e999,\"b\":1}", 400, NULL, &r);
	FX_BOTH("GET", "track?track_id=eq.50", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "track?track_id=eq.1&select=unit_price", NULL, NULL, 200,
	    "[{\"unit_price\":0.99}]", &r);
	/* Large but finite numbers are still taken (1e300 does not fit numeric(10,2): 400
	 * from the database on both, never a 201). */
	FX_BOTH("POST", "track", json, "{\"track_id\":51,\"name\":\"x\",\"milliseconds\":1,"
	    "\"unit_price\":1.5}", 201, "", &r);
	FX_BOTH("DELETE", "track?track_id=eq.51", NULL, NULL, 204, "", &r);
}

/* A non-finite REAL already in a SQLite file (written by something else) is read as
 * null, in the template path and in the concatenated one (more than 126 members). */
static void
test_rest_read_stored_infinity_is_null(void)
{
	struct db *db;
	char url[160], err[200], path[2048];
	size_t len;
	int i;

	snprintf(url, sizeof(url), "sqlite:%s", fx.litepath);
	CHECK(db_open(&db, url, NULL, err, sizeof(err)) == 0);
	if (db == NULL)
		return;
	CHECK(db_exec(db, "insert into track values (52, 'inf', NULL, NULL, NULL, 1, 9e999), "
	    "(53, 'ninf', NULL, NULL, NULL, 1, -9e999)") == 0);
	db_close(db);
	CHECK(fx_do(&fx.lite, "GET", "track?track_id=in.(52,53)&select=track_id,unit_price"
	    "&order=track_id", NULL, NULL, &r) == 0);
	CHECK(r.status == 200);
	CHECK(is_json(&r));
	CHECK(fx_json_eq(body_of(&r), "[{\"track_id\":52,\"unit_price\":null},"
	    "{\"track_id\":53,\"unit_price\":null}]"));
	len = (size_t)snprintf(path, sizeof(path), "track?track_id=eq.52&select=");
	for (i = 0; i < 130 && len + 16 < sizeof(path); i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%sp%d:unit_price",
		    i ? "," : "", i);
	CHECK(fx_do(&fx.lite, "GET", path, NULL, NULL, &r) == 0);
	CHECK(r.status == 200);
	CHECK(is_json(&r));
	CHECK(strstr(body_of(&r), "\"p129\":null") != NULL);
	CHECK(fx_do(&fx.lite, "DELETE", "track?track_id=in.(52,53)", NULL, NULL, &r) == 0);
	CHECK(r.status == 204);
}

/* Regression: "a\u0000b" was stored as "a". */
static void
test_rest_post_nul_escape_refused(void)
{
	FX_BOTH("POST", "artist", json, "{\"artist_id\":70,\"name\":\"a\\u0000b\"}", 400, NULL,
	    &r);
	CHECK(strstr(body_of(&r), "PGRST102") != NULL);
	FX_BOTH("POST", "artist", json, "{\"artist_id\":70,\"name\\u0000x\":\"a\"}", 400, NULL,
	    &r);
	FX_BOTH("PATCH", "artist?artist_id=eq.1", json, "{\"name\":\"\\u0000\"}", 400, NULL, &r);
	FX_BOTH("POST", "rpc/add_them", json, "{\"a\":1,\"b\":1,\"c\\u0000\":1}", 400, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=eq.70", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "artist?artist_id=eq.1", NULL, NULL, 200,
	    "[{\"artist_id\":1,\"name\":\"AC/DC\"}]", &r);
	/* An escaped backslash before u0000 is text, not a NUL. */
	FX_BOTH("POST", "artist", rep, "{\"artist_id\":70,\"name\":\"a\\\\u0000b\"}", 201,
	    "[{\"artist_id\":70,\"name\":\"a\\\\u0000b\"}]", &r);
	FX_BOTH("DELETE", "artist?artist_id=eq.70", NULL, NULL, 204, "", &r);
}

/* head, n times c, tail, in memory of its own (free()); NULL (and a failed check) when
 * there is none. */
static char *
long_text(const char *head, char c, size_t n, const char *tail)
{
	size_t h = strlen(head), t = strlen(tail);
	char *s = malloc(h + n + t + 1);

	CHECK(s != NULL);
	if (s == NULL)
		return NULL;
	memcpy(s, head, h);
	memset(s + h, c, n);
	memcpy(s + h + n, tail, t + 1);
	return s;
}

/* Regression: a write whose representation outgrew its buffer was committed and then
 * answered 500, so the client retried a write that had happened. */
static void
test_rest_write_representation_too_large_rolls_back(void)
{
	static const char *const repobj[] = { "Content-Type: application/json",
		"Prefer: return=representation", NULL };
	size_t n = 300 * 1024;
	char *body = long_text("{\"doc_id\":80,\"body\":{\"k\":\"", 'x', n, "\"}}");

	if (body == NULL)
		return;
	FX_BOTH("POST", "doc?select=a:body,b:body,c:body,d:body", repobj, body, 413, NULL, &r);
	CHECK(strstr(body_of(&r), "representation") != NULL);
	FX_BOTH("GET", "doc?doc_id=eq.80&select=doc_id", NULL, NULL, 200, "[]", &r);
	/* The same with a PATCH of a row that exists: its old value stays. */
	free(body);
	if ((body = long_text("{\"body\":{\"k\":\"", 'y', n, "\"}}")) == NULL)
		return;
	FX_BOTH("PATCH", "doc?doc_id=eq.2&select=a:body,b:body,c:body,d:body", repobj, body,
	    413, NULL, &r);
	FX_BOTH("GET", "doc?doc_id=eq.2", NULL, NULL, 200,
	    "[{\"doc_id\":2,\"album_id\":1,\"body\":null}]", &r);
	/* Without the representation the same write is fine. */
	FX_BOTH("PATCH", "doc?doc_id=eq.2", json, body, 204, "", &r);
	FX_BOTH("PATCH", "doc?doc_id=eq.2", json, "{\"body\":null}", 204, "", &r);
	free(body);
}

/*
 * Regression: on SQLite a JSON column stored a string's text unquoted (malformed JSON,
 * which every later read of the row failed on: 500) and true as 1.  Each value, as one
 * object (its strings bound), as an array of one and by PATCH, reads back as sent, the
 * same on both back ends; JSON null is SQL NULL.
 */
static void
test_rest_json_column_values(void)
{
	static const char *const vals[] = { "\"a \\\"quoted\\\" string\"", "\"null\"", "true",
		"false", "1.5", "-7", "[1,\"x\",null]", "{\"k\":\"v\"}", "null" };
	char body[256], want[256];
	size_t i;

	for (i = 0; i < sizeof(vals) / sizeof(vals[0]); i++) {
		snprintf(want, sizeof(want), "[{\"body\":%s}]", vals[i]);
		snprintf(body, sizeof(body), "{\"doc_id\":82,\"body\":%s}", vals[i]);
		FX_BOTH("POST", "doc", json, body, 201, "", &r);
		FX_BOTH("GET", "doc?doc_id=eq.82&select=body", NULL, NULL, 200, want, &r);
		FX_BOTH("GET", "doc?doc_id=eq.82&body=is.null&select=doc_id", NULL, NULL, 200,
		    strcmp(vals[i], "null") == 0 ? "[{\"doc_id\":82}]" : "[]", &r);
		FX_BOTH("DELETE", "doc?doc_id=eq.82", NULL, NULL, 204, "", &r);
		snprintf(body, sizeof(body), "[{\"doc_id\":82,\"body\":%s}]", vals[i]);
		FX_BOTH("POST", "doc", json, body, 201, "", &r);
		FX_BOTH("GET", "doc?doc_id=eq.82&select=body", NULL, NULL, 200, want, &r);
		snprintf(body, sizeof(body), "{\"body\":%s}", vals[i]);
		FX_BOTH("PATCH", "doc?doc_id=eq.2", json, body, 204, "", &r);
		FX_BOTH("GET", "doc?doc_id=eq.2&select=body", NULL, NULL, 200, want, &r);
		FX_BOTH("DELETE", "doc?doc_id=eq.82", NULL, NULL, 204, "", &r);
	}
	FX_BOTH("PATCH", "doc?doc_id=eq.2", json, "{\"body\":null}", 204, "", &r);
}

/*
 * A read's body is capped at resp_max (1 MiB here) in the statement: one of exactly 1 MiB
 * passes, whole, one byte more is refused, on both back ends.  On PostgreSQL the body's
 * top array comes without its brackets, which the cap leaves room for.  The row's body is
 * a JSON string of L x's (the same text on both: PostgreSQL spells an object's jsonb with
 * blanks); four one-letter aliases give 31 + 4 * L bytes, one byte more for each letter
 * more.  Past the cap: 400 with SQLSTATE 54000 and sluice's message (never the
 * database's, rest_db_errors=pass or not), as a write's representation.
 */
static void
test_rest_read_at_the_response_cap(void)
{
	char *body = long_text("{\"doc_id\":81,\"body\":\"", 'x', 262136, "\"}");

	if (body == NULL)
		return;
	FX_BOTH("POST", "doc", json, body, 201, "", &r);
	FX_BOTH("GET", "doc?doc_id=eq.81&select=a:body,b:body,c:body,d:body", NULL, NULL, 200,
	    NULL, &r);
	CHECK(r.body.len == 1048575);
	FX_BOTH("GET", "doc?doc_id=eq.81&select=a:body,b:body,c:body,dd:body", NULL, NULL, 200,
	    NULL, &r);
	CHECK(r.body.len == 1048576);
	CHECK(r.body.len > 0 && r.body.data[0] == '[' && r.body.data[r.body.len - 1] == ']');
	/* sluice's own cap, in its own words on both, though the database's are passed on
	 * (PostgreSQL's would speak of the array the cap is made of). */
	FX_BOTH("GET", "doc?doc_id=eq.81&select=a:body,b:body,c:body,ddd:body", NULL, NULL, 400,
	    "{\"code\":\"54000\",\"message\":\"the statement grew past a limit of the "
	    "database (a value it builds is too large, or it is too complex)\",\"details\":null,"
	    "\"hint\":null}", &r);
	FX_BOTH("DELETE", "doc?doc_id=eq.81", NULL, NULL, 204, "", &r);
	free(body);
}

/* Regression: select=a:name,a:artist_id as CSV gave the first column twice. */
static void
test_rest_csv_repeated_alias(void)
{
	FX_BOTH("GET", "artist?select=a:name,a:artist_id&artist_id=eq.1", csv, NULL, 200, NULL,
	    &r);
	CHECK_STR(body_of(&r), "a,a\nAC/DC,1");
	FX_BOTH("GET", "artist?select=artist_id,artist_id:name&artist_id=lte.2&order=artist_id",
	    csv, NULL, 200, NULL, &r);
	CHECK_STR(body_of(&r), "artist_id,artist_id\n1,AC/DC\n2,Accept");
}

/* Regression: select= with 300 '*' or 600 columns, and on_conflict= on a column without
 * a unique constraint, answered 500 (and logged an error line each time). */
static void
test_rest_wide_select_and_bad_on_conflict_are_400(void)
{
	static const char *const merge[] = { "Content-Type: application/json",
		"Prefer: resolution=merge-duplicates", NULL };
	char path[8192];
	size_t len;
	int i;

	len = (size_t)snprintf(path, sizeof(path), "track?select=");
	for (i = 0; i < 300; i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%s*", i ? "," : "");
	FX_BOTH("GET", path, NULL, NULL, 400, NULL, &r);
	CHECK(strstr(body_of(&r), "PGRST100") != NULL);
	FX_BOTH("GET", path, csv, NULL, 400, NULL, &r);
	len = (size_t)snprintf(path, sizeof(path), "artist?select=");
	for (i = 0; i < 600; i++)
		len += (size_t)snprintf(path + len, sizeof(path) - len, "%sname", i ? "," : "");
	FX_BOTH("GET", path, NULL, NULL, 400, NULL, &r);
	/* Each database's own words (rest_db_errors=pass). */
	FX_EACH("/rest/v1/", "POST", "artist?on_conflict=name", merge,
	    "{\"artist_id\":1,\"name\":\"x\"}", 400,
	    "{\"code\":\"42P10\",\"message\":\"ON CONFLICT clause does not match any PRIMARY "
	    "KEY or UNIQUE constraint\",\"details\":null,\"hint\":null}",
	    "{\"code\":\"42P10\",\"message\":\"there is no unique or exclusion constraint "
	    "matching the ON CONFLICT specification\",\"details\":null,\"hint\":null}", &r);
	FX_BOTH("GET", "artist?artist_id=eq.1", NULL, NULL, 200,
	    "[{\"artist_id\":1,\"name\":\"AC/DC\"}]", &r);
}

/* Regression: a PATCH or DELETE without a filter changed every row of the table. */
static void
test_rest_unfiltered_write_refused(void)
{
	FX_BOTH("PATCH", "actor", json, "{\"first_name\":\"All\"}", 400, NULL, &r);
	CHECK(strstr(body_of(&r), "21000") != NULL);
	FX_BOTH("DELETE", "playlist_track", NULL, NULL, 400, NULL, &r);
	FX_BOTH("DELETE", "playlist_track?select=track_id", NULL, NULL, 400, NULL, &r);
	FX_BOTH("DELETE", "playlist_track?order=track_id", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "playlist_track?select=track_id&order=playlist_id,track_id", NULL, NULL,
	    200, "[{\"track_id\":1},{\"track_id\":2},{\"track_id\":3},{\"track_id\":3},"
	    "{\"track_id\":6}]", &r);
	FX_BOTH("GET", "actor?select=first_name&order=actor_id", NULL, NULL, 200,
	    "[{\"first_name\":\"Penelope\"},{\"first_name\":\"Nick\"}]", &r);
	/* A filter that matches every row is a deliberate choice: allowed. */
	FX_BOTH("PATCH", "actor?actor_id=gt.0", json, "{\"last_update\":\"2001-01-01\"}", 204, "",
	    &r);
}

/* Regression: a POST without a Content-Type was taken as JSON, so a cross-site form (or
 * a text/plain fetch) could write. */
static void
test_rest_write_without_json_content_type_refused(void)
{
	static const char *const none[] = { "Content-Type:", NULL };
	static const char *const form[] = {
		"Content-Type: application/x-www-form-urlencoded", NULL };
	static const char *const plain[] = { "Content-Type: text/plain", NULL };
	static const char *const jsonp[] = { "Content-Type: application/json; charset=utf-8",
		NULL };

	FX_BOTH("POST", "artist", none, "{\"artist_id\":90,\"name\":\"x\"}", 415, NULL, &r);
	CHECK(strstr(body_of(&r), "PGRST107") != NULL);
	FX_BOTH("POST", "artist", form, "{\"artist_id\":90,\"name\":\"x\"}", 415, NULL, &r);
	FX_BOTH("POST", "artist", plain, "{\"artist_id\":90,\"name\":\"x\"}", 415, NULL, &r);
	FX_BOTH("PATCH", "artist?artist_id=eq.1", none, "{\"name\":\"x\"}", 415, NULL, &r);
	FX_BOTH("POST", "rpc/add_them", none, "{\"a\":1,\"b\":2}", 415, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=in.(1,90)&select=name", NULL, NULL, 200,
	    "[{\"name\":\"AC/DC\"}]", &r);
	FX_BOTH("POST", "artist", jsonp, "{\"artist_id\":90,\"name\":\"x\"}", 201, "", &r);
	/* DELETE has no body: no type needed. */
	FX_BOTH("DELETE", "artist?artist_id=eq.90", none, NULL, 204, "", &r);
}

/* CORS: without a configured origin list no Access-Control-* header is sent; an origin in
 * rest_cors_origins gets its own origin back, and a preflight 204; any other 403. */
static void
test_rest_cors_only_for_configured_origins(void)
{
	static const char *const evil[] = { "Origin: https://evil.example", NULL };
	static const char *const good[] = { "Origin: " GOOD_ORIGIN, NULL };
	static const char *const pre_evil[] = { "Origin: https://evil.example",
		"Access-Control-Request-Method: PATCH", NULL };
	static const char *const pre_good[] = { "Origin: " GOOD_ORIGIN,
		"Access-Control-Request-Method: PATCH",
		"Access-Control-Request-Headers: content-type,prefer", NULL };

	FX_BOTH("GET", "artist?artist_id=eq.1", evil, NULL, 200, NULL, &r);
	CHECK_STR(fx_header(&r, "Access-Control-Allow-Origin"), "");
	FX_BOTH("OPTIONS", "artist", pre_evil, NULL, 403, NULL, &r);
	CHECK(is_json(&r));
	CHECK_STR(fx_header(&r, "Access-Control-Allow-Origin"), "");
	CHECK_STR(fx_header(&r, "Access-Control-Allow-Methods"), "");
	FX_BOTH("GET", "artist?artist_id=eq.1", good, NULL, 200, NULL, &r);
	CHECK_STR(fx_header(&r, "Access-Control-Allow-Origin"), GOOD_ORIGIN);
	CHECK(strstr(fx_header(&r, "Vary"), "Origin") != NULL);
	/* The page may read the request's id, and send its own. */
	CHECK(strstr(fx_header(&r, "Access-Control-Expose-Headers"), "X-Request-Id") != NULL);
	FX_BOTH("OPTIONS", "artist", pre_good, NULL, 204, "", &r);
	CHECK_STR(fx_header(&r, "Access-Control-Allow-Origin"), GOOD_ORIGIN);
	CHECK(strstr(fx_header(&r, "Access-Control-Allow-Methods"), "PATCH") != NULL);
	CHECK(strstr(fx_header(&r, "Access-Control-Allow-Headers"), "Content-Type") != NULL);
	CHECK(strstr(fx_header(&r, "Access-Control-Allow-Headers"), "Prefer") != NULL);
	CHECK(strstr(fx_header(&r, "Access-Control-Allow-Headers"), "X-Request-Id") != NULL);
	/* A preflight without an Origin is not CORS: 403 too. */
	FX_BOTH("OPTIONS", "artist", NULL, NULL, 403, NULL, &r);
}

/* With rest_unfiltered_writes=1 and no rest_cors_origins: unfiltered writes are taken,
 * and no origin gets CORS headers. */
static void
test_rest_unfiltered_writes_setting(void)
{
	static const char *const good[] = { "Origin: " GOOD_ORIGIN, NULL };
	static const char *const pre_good[] = { "Origin: " GOOD_ORIGIN,
		"Access-Control-Request-Method: PATCH", NULL };

	FX_BOTH("PATCH", "actor", json, "{\"first_name\":\"All\"}", 204, "", &r);
	FX_BOTH("GET", "actor?select=first_name", NULL, NULL, 200,
	    "[{\"first_name\":\"All\"},{\"first_name\":\"All\"}]", &r);
	FX_BOTH("DELETE", "playlist_track", NULL, NULL, 204, "", &r);
	FX_BOTH("GET", "playlist_track", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "artist?artist_id=eq.1", good, NULL, 200, NULL, &r);
	CHECK_STR(fx_header(&r, "Access-Control-Allow-Origin"), "");
	FX_BOTH("OPTIONS", "artist", pre_good, NULL, 403, NULL, &r);
	CHECK_STR(fx_header(&r, "Access-Control-Allow-Origin"), "");
}

int
main(void)
{
	http_resp_init(&r);
	if (fx_start("resp_max=1048576 rest_cors_origins=https://other.example," GOOD_ORIGIN) < 0) {
		CHECK(!"the two stacks started");
		fx_stop();
		return harness_done();
	}
	RUN(test_rest_post_infinite_number_refused);
	RUN(test_rest_read_stored_infinity_is_null);
	RUN(test_rest_post_nul_escape_refused);
	RUN(test_rest_write_representation_too_large_rolls_back);
	RUN(test_rest_csv_repeated_alias);
	RUN(test_rest_json_column_values);
	RUN(test_rest_read_at_the_response_cap);
	RUN(test_rest_wide_select_and_bad_on_conflict_are_400);
	RUN(test_rest_unfiltered_write_refused);
	RUN(test_rest_write_without_json_content_type_refused);
	RUN(test_rest_cors_only_for_configured_origins);
	fx_stop();
	if (fx_start("rest_unfiltered_writes=1") < 0) {
		CHECK(!"the two stacks started with rest_unfiltered_writes=1");
		fx_stop();
		return harness_done();
	}
	RUN(test_rest_unfiltered_writes_setting);
	http_resp_free(&r);
	fx_stop();
	return harness_done();
}
