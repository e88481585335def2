/*
 * test_rest_chinook: the nine scenarios of the PostgREST benchmark against the Chinook
 * database as sql/chinook's seeder makes it (the same rows on both back ends), through the
 * real stack on SQLite and on a throwaway PostgreSQL: statuses, the same bodies on both,
 * and the body sizes of the two embed scenarios within 10% of the published ones (11.9 KB
 * for artist 127's albums with tracks and genres, 0.80 MB for all albums); and the reads
 * whose JSON the worker writes from rows on PostgreSQL against the database's own.
 *
 * The seeder is build/<rel|san>/sql/chinook-seed, next to the binaries under test.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

static struct stack lite, pgs;
static struct pgtmp pg;
static char litepath[128];

static const char employee[] =
    "{\"employee_id\":1334,\"first_name\":\"Virtual 1234\",\"last_name\":\"User 1234\","
    "\"title\":\"Load Tester\",\"reports_to\":1,\"birth_date\":\"1920-01-01\","
    "\"hire_date\":\"2020-01-01\",\"address\":\"666 10 Street SW\",\"city\":\"Calgary\","
    "\"state\":\"AB\",\"country\":\"Canada\",\"postal_code\":\"T2P 5G\","
    "\"phone\":\"(403) 246-9887\",\"fax\":\"+1 (403) 246-9899\","
    "\"email\":\"vu1234@chinookcorp.com\"}";

static int
json_same(const char *a, const char *b)
{
	cJSON *ja = cJSON_Parse(a ? a : ""), *jb = cJSON_Parse(b ? b : "");
	int eq = (ja != NULL && jb != NULL && cJSON_Compare(ja, jb, 1)) ||
	    strcmp(a ? a : "", b ? b : "") == 0;

	cJSON_Delete(ja);
	cJSON_Delete(jb);
	return eq;
}

/* One scenario on both stacks: status, same body, and returns the SQLite body size. */
static long
scenario(const char *name, const char *method, const char *path, const char *body,
    long want, int compare)
{
	static const char *const hdr[] = { "Content-Type: application/json", NULL };
	struct http_resp a, b;
	char url[1024];
	long size = -1;

	http_resp_init(&a);
	http_resp_init(&b);
	snprintf(url, sizeof(url), "%s/rest/v1/%s", lite.base, path);
	CHECK(http_do(method, url, hdr, body, body ? strlen(body) : 0, 30000, &a) == 0);
	snprintf(url, sizeof(url), "%s/rest/v1/%s", pgs.base, path);
	CHECK(http_do(method, url, hdr, body, body ? strlen(body) : 0, 30000, &b) == 0);
	if (a.status != want || b.status != want)
		harness_fail(__FILE__, __LINE__, "%s: status %ld (sqlite) / %ld (postgresql), "
		    "want %ld: %.200s %.200s", name, a.status, b.status, want,
		    a.body.data ? a.body.data : "", b.body.data ? b.body.data : "");
	if (compare && !json_same(a.body.data, b.body.data))
		harness_fail(__FILE__, __LINE__, "%s: the back ends differ: %.300s\n%.300s", name,
		    a.body.data ? a.body.data : "", b.body.data ? b.body.data : "");
	size = (long)a.body.len;
	printf("  %-18s %ld  sqlite %ld bytes, postgresql %ld bytes\n", name, a.status,
	    (long)a.body.len, (long)b.body.len);
	http_resp_free(&a);
	http_resp_free(&b);
	return size;
}

static void
test_rest_chinook_scenarios(void)
{
	char bulk[16384], path[512];
	long n;
	int i;

	n = scenario("GETSingle", "GET", "artist?select=*&artist_id=eq.3", NULL, 200, 1);
	CHECK(n > 20 && n < 60);
	n = scenario("GETSingleEmbed", "GET", "album?select=*,track(*,genre(*))"
	    "&artist_id=eq.127", NULL, 200, 1);
	CHECK(n > 11900 * 9 / 10 && n < 11900 * 11 / 10);
	/* Without an order the row order is the database's own: compare an ordered copy. */
	n = scenario("GETAllEmbed", "GET", "album?select=*,track(*,genre(*))", NULL, 200, 0);
	CHECK(n > 800000 * 9 / 10 && n < 800000 * 11 / 10);
	scenario("GETAllEmbedOrdered", "GET", "album?select=*,track(*,genre(*))&order=album_id"
	    "&track.order=track_id", NULL, 200, 1);
	scenario("POSTSingle", "POST", "employee", employee, 201, 1);
	snprintf(bulk, sizeof(bulk), "[");
	for (i = 0; i < 20; i++)
		snprintf(bulk + strlen(bulk), sizeof(bulk) - strlen(bulk), "%s%s", i ? "," : "",
		    employee);
	snprintf(bulk + strlen(bulk), sizeof(bulk) - strlen(bulk), "]");
	snprintf(path, sizeof(path), "employee?columns=employee_id,first_name,last_name,title,"
	    "reports_to,birth_date,hire_date,address,city,state,country,postal_code,phone,fax,"
	    "email");
	scenario("POSTBulk", "POST", path, bulk, 201, 1);
	scenario("RPCSimple", "GET", "rpc/add_them?a=1&b=2&c=3&d=4&e=5", NULL, 200, 1);
	scenario("RPCGETSingle", "GET", "rpc/ret_artists?select=*&artist_id=eq.3", NULL, 200, 1);
	n = scenario("RPCGETSingleEmbed", "GET", "rpc/ret_albums?select=*,track(*,genre(*))"
	    "&artist_id=eq.127", NULL, 200, 1);
	CHECK(n > 11900 * 9 / 10 && n < 11900 * 11 / 10);
	scenario("PATCHSingle", "PATCH", "actor?actor_id=eq.1", "{\"first_name\":\"Penelope\","
	    "\"last_name\":\"Guiness\"}", 204, 1);
	scenario("GETEmployees", "GET", "employee?select=employee_id,birth_date&title=eq."
	    "Load%20Tester&limit=2", NULL, 200, 1);
	scenario("DELETE", "DELETE", "employee?title=eq.Load%20Tester", NULL, 204, 1);
	scenario("GETPlaylist", "GET", "playlist?select=name,track(name)&playlist_id=eq.1"
	    "&track.order=track_id&track.limit=3", NULL, 200, 1);
}

/*
 * GET path on the PostgreSQL stack twice: as it comes (for these shapes the worker writes
 * the JSON from plain rows, apps/rest/flat.c) and with Prefer: count=exact (the database
 * builds the body, select.c): the same bytes, status want, and with lite_too the same
 * JSON on SQLite.  accept: an Accept header line, or NULL.
 */
static void
flat_same(const char *path, const char *accept, long want, int lite_too)
{
	const char *plain[] = { accept, NULL }, *counted[] = { "Prefer: count=exact", accept,
	    NULL };
	struct http_resp a, b, c;
	char url[1024];

	http_resp_init(&a);
	http_resp_init(&b);
	http_resp_init(&c);
	snprintf(url, sizeof(url), "%s/rest/v1/%s", pgs.base, path);
	CHECK(http_do("GET", url, plain, NULL, 0, 30000, &a) == 0);
	CHECK(http_do("GET", url, counted, NULL, 0, 30000, &b) == 0);
	snprintf(url, sizeof(url), "%s/rest/v1/%s", lite.base, path);
	CHECK(http_do("GET", url, plain, NULL, 0, 30000, &c) == 0);
	if (a.status != want || (b.status != want && !(want == 200 && b.status == 206)) ||
	    c.status != want)
		harness_fail(__FILE__, __LINE__, "%s: status %ld (rows) / %ld (counted) / %ld "
		    "(sqlite), want %ld: %.200s", path, a.status, b.status, c.status, want,
		    a.body.data ? a.body.data : "");
	else if (a.body.len != b.body.len ||
	    (a.body.len > 0 && memcmp(a.body.data, b.body.data, a.body.len) != 0))
		harness_fail(__FILE__, __LINE__, "%s: rows and counted bodies differ:\n%.400s\n"
		    "%.400s", path, a.body.data ? a.body.data : "", b.body.data ? b.body.data : "");
	else if (lite_too && !json_same(a.body.data, c.body.data))
		harness_fail(__FILE__, __LINE__, "%s: the back ends differ:\n%.400s\n%.400s",
		    path, a.body.data ? a.body.data : "", c.body.data ? c.body.data : "");
	http_resp_free(&a);
	http_resp_free(&b);
	http_resp_free(&c);
}

/*
 * The reads whose JSON the worker writes on PostgreSQL: the same bytes as the database's
 * own concatenation, for each shape flat.c takes (to-one embeds nested, one to-many embed
 * with its filters, order and page, !inner, aliases, an embed alone, a hidden one, the one
 * object, nothing found), for text that must be escaped (quotes, backslashes, control
 * characters, non-ASCII), and for a shape it leaves to select.c (a CSV).
 */
static void
test_rest_chinook_rows_json(void)
{
	static const char *const paths[] = {
		"album?select=*,track(*,genre(*))&artist_id=eq.127",
		"album?select=*,track(*,genre(*))&order=album_id&track.order=track_id",
		"album?select=title,track(name,milliseconds)&order=title.desc&limit=5&offset=3",
		"album?select=title,t:track(name,g:genre(name))&order=album_id.desc&limit=3"
		    "&track.order=name.asc&track.limit=2",
		"album?select=title,track(name)&track.name=like.*a*&order=album_id&limit=10",
		"album?select=title,track!inner(name)&track.name=like.*zz*",
		"album?select=title,track!inner(name)&track.name=like.*A*&order=album_id&limit=5",
		"album?select=*,artist(*)&order=album_id&limit=20",
		"album?select=*,artist(name),track(name,media_type(name))&order=album_id&limit=4",
		"track?select=*,album(title,artist(name)),genre(*)&order=track_id&limit=20",
		"track?select=name,unit_price&order=track_id&limit=5",
		"customer?select=customer_id,invoice(total,invoice_line(quantity))"
		    "&customer_id=lte.2&order=customer_id",
		"customer?select=customer_id,invoice(total)&customer_id=lte.3&order=customer_id",
		"album?select=track(name)&album_id=lte.2&order=album_id",
		"album?select=title,track()&album_id=lte.2&order=album_id",
		"album?select=title,track(name)&album_id=eq.999999",
		"artist?select=name,album(title,track(name))&artist_id=eq.9001",
		"artist?select=*,album(*)&artist_id=gte.9001&order=artist_id",
	};
	static const char *const json[] = { "Content-Type: application/json", NULL };
	static const char artist[] = "{\"artist_id\":9001,\"name\":\"q\\\"b\\\\s \\u0001"
	    "\\t\\n\\u001f \\u00e9 \\u4e2d </script>\"}";
	static const char album[] = "{\"album_id\":9001,\"title\":\"\\u007f\\\"\","
	    "\"artist_id\":9001}";
	char url[1024];
	struct http_resp r;
	size_t i;
	int k;

	/* An artist and album whose names need escaping, on both back ends. */
	for (k = 0; k < 2; k++) {
		const char *base = k ? pgs.base : lite.base;

		http_resp_init(&r);
		snprintf(url, sizeof(url), "%s/rest/v1/artist", base);
		CHECK(http_do("POST", url, json, artist, strlen(artist), 30000, &r) == 0 &&
		    r.status == 201);
		http_resp_free(&r);
		http_resp_init(&r);
		snprintf(url, sizeof(url), "%s/rest/v1/album", base);
		CHECK(http_do("POST", url, json, album, strlen(album), 30000, &r) == 0 &&
		    r.status == 201);
		http_resp_free(&r);
	}
	for (i = 0; i < sizeof(paths) / sizeof(paths[0]); i++)
		flat_same(paths[i], NULL, 200, 1);
	/* Without order= the rows come in the database's own order: the same on PostgreSQL
	 * both ways (a heap scan's), another on SQLite. */
	flat_same("album?select=*,track(*,genre(*))", NULL, 200, 0);
	flat_same("album?select=*,track(name)&album_id=eq.1",
	    "Accept: application/vnd.pgrst.object+json", 200, 1);
	flat_same("album?select=*,track(name)&album_id=lte.2",
	    "Accept: application/vnd.pgrst.object+json", 406, 1);
	flat_same("album?select=title,track(name)&album_id=eq.1", "Accept: text/csv", 200, 1);
	for (k = 0; k < 2; k++) {
		http_resp_init(&r);
		snprintf(url, sizeof(url), "%s/rest/v1/album?album_id=eq.9001",
		    k ? pgs.base : lite.base);
		CHECK(http_do("DELETE", url, NULL, NULL, 0, 30000, &r) == 0 && r.status == 204);
		http_resp_free(&r);
		http_resp_init(&r);
		snprintf(url, sizeof(url), "%s/rest/v1/artist?artist_id=eq.9001",
		    k ? pgs.base : lite.base);
		CHECK(http_do("DELETE", url, NULL, NULL, 0, 30000, &r) == 0 && r.status == 204);
		http_resp_free(&r);
	}
}

/* The body of GET path on the SQLite stack, or "" (static: the next call overwrites it). */
static const char *
lite_get(const char *path)
{
	static char body[4096];
	struct http_resp r;
	char url[1024];

	body[0] = '\0';
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/%s", lite.base, path);
	if (http_do("GET", url, NULL, NULL, 0, 30000, &r) == 0 && r.status == 200 &&
	    r.body.data != NULL)
		snprintf(body, sizeof(body), "%s", r.body.data);
	http_resp_free(&r);
	return body;
}

/*
 * The benchmark's own PATCHSingle body, {"last_update":"now"}, and PostgreSQL's other
 * special time inputs: PostgreSQL reads them itself; SQLite's CHECK on a timestamp column
 * made 'now' a database error (500) before the REST layer turned the special inputs into
 * times.  'today' and 'now' are compared with the clock (UTC, as the schema keeps times),
 * 'epoch' between the back ends; 'infinity', which SQLite cannot hold, is a 400.
 */
static void
test_rest_chinook_patch_now(void)
{
	static const char *const hdr[] = { "Content-Type: application/json", NULL };
	static const char body[] = "{\"employee_id\":1335,\"first_name\":\"Virtual\","
	    "\"last_name\":\"Clock\",\"title\":\"Time Tester\",\"birth_date\":\" Today \","
	    "\"hire_date\":\"epoch\"}";
	static const char inf[] = "{\"last_update\":\"infinity\"}";
	struct http_resp r;
	char url[512], day0[16], day1[16], want0[128], want1[128];
	const char *got;
	time_t t0, t1, t;
	struct tm tm;

	t0 = time(NULL);
	gmtime_r(&t0, &tm);
	strftime(day0, sizeof(day0), "%Y-%m-%d", &tm);
	scenario("PATCHSingleNow", "PATCH", "actor?actor_id=eq.2",
	    "{\"last_update\":\"now\"}", 204, 0);
	scenario("PATCHNowCased", "PATCH", "actor?actor_id=eq.3",
	    "{\"last_update\":\" NOW\"}", 204, 0);
	scenario("POSTTodayEpoch", "POST", "employee", body, 201, 1);
	t1 = time(NULL);
	gmtime_r(&t1, &tm);
	strftime(day1, sizeof(day1), "%Y-%m-%d", &tm);

	/* 'now' stored as the current UTC time, to the second. */
	got = lite_get("actor?select=last_update&actor_id=eq.2");
	memset(&tm, 0, sizeof(tm));
	CHECK(sscanf(got, "[{\"last_update\":\"%d-%d-%dT%d:%d:%d\"}]", &tm.tm_year, &tm.tm_mon,
	    &tm.tm_mday, &tm.tm_hour, &tm.tm_min, &tm.tm_sec) == 6);
	tm.tm_year -= 1900;
	tm.tm_mon -= 1;
	t = timegm(&tm);
	if (t < t0 - 1 || t > t1 + 1)
		harness_fail(__FILE__, __LINE__, "'now' stored as %s, not between %lld and %lld",
		    got, (long long)t0, (long long)t1);

	/* 'today' as midnight UTC, 'epoch' as 1970-01-01, on SQLite; the same on both. */
	got = lite_get("employee?select=birth_date,hire_date&employee_id=eq.1335");
	snprintf(want0, sizeof(want0), "[{\"birth_date\":\"%sT00:00:00\","
	    "\"hire_date\":\"1970-01-01T00:00:00\"}]", day0);
	snprintf(want1, sizeof(want1), "[{\"birth_date\":\"%sT00:00:00\","
	    "\"hire_date\":\"1970-01-01T00:00:00\"}]", day1);
	if (strcmp(got, want0) != 0 && strcmp(got, want1) != 0)
		harness_fail(__FILE__, __LINE__, "today/epoch stored as %s, want %s", got, want0);
	scenario("GETEpoch", "GET", "employee?select=hire_date&employee_id=eq.1335", NULL, 200,
	    1);

	/* No infinite time in SQLite: the column's CHECK refuses it, a 400 with a JSON code. */
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/actor?actor_id=eq.2", lite.base);
	CHECK(http_do("PATCH", url, hdr, inf, strlen(inf), 30000, &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"code\":\"23514\"") != NULL);
	http_resp_free(&r);
	scenario("DELETETimeTester", "DELETE", "employee?title=eq.Time%20Tester", NULL, 204, 1);
}

int
main(void)
{
	char conf[512], cmd[1024];

	signal(SIGPIPE, SIG_IGN);
	snprintf(litepath, sizeof(litepath), "/tmp/sluice-rest-chinook-%d.db", (int)getpid());
	unlink(litepath);
	memset(&pg, 0, sizeof(pg));
	snprintf(cmd, sizeof(cmd), "%s sqlite:%s >/dev/null", stack_seeder("chinook-seed"),
	    litepath);
	if (stack_sh("%s", cmd) != 0 || pgtmp_start(&pg) < 0) {
		CHECK(!"seeded SQLite and started PostgreSQL");
		goto out;
	}
	if (stack_sh("%s '%s' >/dev/null", stack_seeder("chinook-seed"), pg.url) != 0) {
		CHECK(!"seeded PostgreSQL");
		goto out;
	}
	snprintf(conf, sizeof(conf), "db chinook sqlite:%s\n"
	    "rest /rest/v1/ workers=2 threads=2 db=chinook\n", litepath);
	if (stack_start(&lite, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	setenv("SLUICE_DB_CHINOOK", pg.url, 1);
	if (stack_start(&pgs, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	RUN(test_rest_chinook_scenarios);
	RUN(test_rest_chinook_patch_now);
	RUN(test_rest_chinook_rows_json);
out:
	unsetenv("SLUICE_DB_CHINOOK");
	stack_stop(&lite);
	stack_stop(&pgs);
	pgtmp_stop(&pg);
	stack_sh("rm -f %s %s-wal %s-shm", litepath, litepath, litepath);
	return harness_done();
}
