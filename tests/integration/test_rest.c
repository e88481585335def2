/*
 * test_rest: the rest endpoint's reads (GET/HEAD) through the real stack, on SQLite and
 * on PostgreSQL, with the same expected answers on both: select, aliases, filters of every
 * operator, and/or trees, order, limit/offset, embeds in both directions, nested, many-to-
 * many, !inner, embed filters, counts (exact, and planned where PostgreSQL has an
 * estimate), Range, Content-Range, the object, CSV and plan types, computed fields, and
 * the errors of each (see rest_fixture.h for the schema); the root's OpenAPI document
 * with access control off.
 */
#include "rest_fixture.h"

static struct http_resp r;

static void
test_rest_select(void)
{
	FX_BOTH("GET", "artist?select=*&artist_id=eq.3", NULL, NULL, 200,
	    "[{\"artist_id\":3,\"name\":\"Aerosmith\"}]", &r);
	FX_BOTH("GET", "artist?artist_id=eq.4", NULL, NULL, 200,
	    "[{\"artist_id\":4,\"name\":\"O'Brien, \\\"Jr\\\"\"}]", &r);
	FX_BOTH("GET", "artist?select=id:artist_id,name&artist_id=lt.3&order=artist_id", NULL,
	    NULL, 200, "[{\"id\":1,\"name\":\"AC/DC\"},{\"id\":2,\"name\":\"Accept\"}]", &r);
	FX_BOTH("GET", "artist?select=name&artist_id=eq.5", NULL, NULL, 200,
	    "[{\"name\":null}]", &r);
	FX_BOTH("GET", "artist?artist_id=eq.99", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "track?select=track_id,unit_price&track_id=in.(1,3,5)&order=track_id",
	    NULL, NULL, 200, "[{\"track_id\":1,\"unit_price\":0.99},"
	    "{\"track_id\":3,\"unit_price\":1.99},{\"track_id\":5,\"unit_price\":1}]", &r);
	FX_BOTH("GET", "employee?select=employee_id,birth_date,active&order=employee_id", NULL,
	    NULL, 200, "[{\"employee_id\":1,\"birth_date\":\"1962-02-18T00:00:00\","
	    "\"active\":true},{\"employee_id\":2,\"birth_date\":\"1958-12-08T00:00:00\","
	    "\"active\":false},{\"employee_id\":3,\"birth_date\":null,\"active\":null}]", &r);
	FX_BOTH("GET", "album?order=album_id&limit=2&offset=1", NULL, NULL, 200,
	    "[{\"album_id\":2,\"title\":\"Let There Be Rock\",\"artist_id\":1},"
	    "{\"album_id\":3,\"title\":\"Balls to the Wall\",\"artist_id\":2}]", &r);
	FX_BOTH("GET", "album?select=album_id&order=album_id&offset=4", NULL, NULL, 200,
	    "[{\"album_id\":5}]", &r);
	FX_BOTH("GET", "playlist", NULL, NULL, 200, NULL, &r);
	FX_BOTH("GET", "artist?select=%20artist_id%20,%20name%20&artist_id=eq.1", NULL, NULL,
	    200, "[{\"artist_id\":1,\"name\":\"AC/DC\"}]", &r);
}

static void
test_rest_filters(void)
{
	FX_BOTH("GET", "track?select=track_id&milliseconds=gt.331180&order=track_id", NULL,
	    NULL, 200, "[{\"track_id\":1},{\"track_id\":4}]", &r);
	FX_BOTH("GET", "track?select=track_id&milliseconds=gte.331180&order=track_id", NULL,
	    NULL, 200, "[{\"track_id\":1},{\"track_id\":3},{\"track_id\":4}]", &r);
	FX_BOTH("GET", "track?select=track_id&milliseconds=lt.205662", NULL, NULL, 200,
	    "[{\"track_id\":7}]", &r);
	FX_BOTH("GET", "track?select=track_id&milliseconds=lte.205662&order=track_id.desc",
	    NULL, NULL, 200, "[{\"track_id\":7},{\"track_id\":2}]", &r);
	FX_BOTH("GET", "genre?select=genre_id&genre_id=neq.1&order=genre_id", NULL, NULL, 200,
	    "[{\"genre_id\":2},{\"genre_id\":3}]", &r);
	FX_BOTH("GET", "track?select=track_id&name=like.*Rock*", NULL, NULL, 200,
	    "[{\"track_id\":1}]", &r);
	FX_BOTH("GET", "track?select=track_id&name=like.*rock*", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "track?select=track_id&name=ilike.*rock*", NULL, NULL, 200,
	    "[{\"track_id\":1}]", &r);
	FX_BOTH("GET", "track?select=track_id&name=like.Go_Down", NULL, NULL, 200,
	    "[{\"track_id\":3}]", &r);
	FX_BOTH("GET", "track?select=track_id&name=not.like.*o*&order=track_id", NULL, NULL,
	    200, "[{\"track_id\":5},{\"track_id\":6},{\"track_id\":7}]", &r);
	FX_BOTH("GET", "track?select=track_id&composer=is.null&order=track_id", NULL, NULL, 200,
	    "[{\"track_id\":2},{\"track_id\":4},{\"track_id\":7}]", &r);
	FX_BOTH("GET", "track?select=track_id&composer=not.is.null&album_id=is.null", NULL,
	    NULL, 200, "[]", &r);
	FX_BOTH("GET", "employee?select=employee_id&active=is.true", NULL, NULL, 200,
	    "[{\"employee_id\":1}]", &r);
	FX_BOTH("GET", "employee?select=employee_id&active=is.false", NULL, NULL, 200,
	    "[{\"employee_id\":2}]", &r);
	FX_BOTH("GET", "employee?select=employee_id&active=eq.true", NULL, NULL, 200,
	    "[{\"employee_id\":1}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=in.(Accept,%22O'Brien,%20%5C%22Jr%5C%22%22)"
	    "&order=artist_id", NULL, NULL, 200, "[{\"artist_id\":2},{\"artist_id\":4}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&artist_id=not.in.(1,2,3)&order=artist_id",
	    NULL, NULL, 200, "[{\"artist_id\":4},{\"artist_id\":5}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&artist_id=in.()", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "track?select=track_id&or=(milliseconds.lt.2000,track_id.eq.2)"
	    "&order=track_id", NULL, NULL, 200, "[{\"track_id\":2},{\"track_id\":7}]", &r);
	FX_BOTH("GET", "track?select=track_id&or=(genre_id.eq.2,and(album_id.eq.1,"
	    "composer.not.is.null))&order=track_id", NULL, NULL, 200,
	    "[{\"track_id\":1},{\"track_id\":3},{\"track_id\":7}]", &r);
	FX_BOTH("GET", "track?select=track_id&not.or=(track_id.lt.3,track_id.gt.4)"
	    "&order=track_id", NULL, NULL, 200, "[{\"track_id\":3},{\"track_id\":4}]", &r);
	FX_BOTH("GET", "track?select=track_id&and=(track_id.gt.1,or(name.like.*Wall*,"
	    "name.eq.%22Go%20Down%22))&order=track_id", NULL, NULL, 200,
	    "[{\"track_id\":3},{\"track_id\":4}]", &r);
	FX_BOTH("GET", "track?select=track_id&or=(track_id.in.(1,2),name.eq.Orphan)"
	    "&order=track_id", NULL, NULL, 200,
	    "[{\"track_id\":1},{\"track_id\":2},{\"track_id\":7}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=eq.AC/DC&name=neq.x", NULL, NULL, 200,
	    "[{\"artist_id\":1}]", &r);
	FX_BOTH("GET", "employee?select=employee_id&birth_date=eq.1962-02-18T00:00:00", NULL,
	    NULL, 200, "[{\"employee_id\":1}]", &r);
	FX_BOTH("GET", "employee?select=employee_id&birth_date=lt.1960-01-01", NULL, NULL, 200,
	    "[{\"employee_id\":2}]", &r);
}

static void
test_rest_order(void)
{
	FX_BOTH("GET", "artist?select=artist_id&order=name.desc", NULL, NULL, 200,
	    "[{\"artist_id\":5},{\"artist_id\":4},{\"artist_id\":3},{\"artist_id\":2},"
	    "{\"artist_id\":1}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&order=name.asc", NULL, NULL, 200,
	    "[{\"artist_id\":1},{\"artist_id\":2},{\"artist_id\":3},{\"artist_id\":4},"
	    "{\"artist_id\":5}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&order=name.asc.nullsfirst&limit=2", NULL, NULL,
	    200, "[{\"artist_id\":5},{\"artist_id\":1}]", &r);
	FX_BOTH("GET", "track?select=track_id&order=genre_id.desc.nullslast,track_id.desc"
	    "&limit=3", NULL, NULL, 200,
	    "[{\"track_id\":6},{\"track_id\":7},{\"track_id\":3}]", &r);
}

static void
test_rest_embed(void)
{
	/* to-one */
	FX_BOTH("GET", "album?select=title,artist(name)&album_id=eq.3", NULL, NULL, 200,
	    "[{\"title\":\"Balls to the Wall\",\"artist\":{\"name\":\"Accept\"}}]", &r);
	FX_BOTH("GET", "track?select=track_id,genre(*)&track_id=in.(4,6)&order=track_id", NULL,
	    NULL, 200, "[{\"track_id\":4,\"genre\":null},{\"track_id\":6,\"genre\":"
	    "{\"genre_id\":3,\"name\":null}}]", &r);
	/* to-many, nested */
	FX_BOTH("GET", "artist?select=name,album(title)&artist_id=in.(2,5)&order=artist_id"
	    "&album.order=title.desc", NULL, NULL, 200,
	    "[{\"name\":\"Accept\",\"album\":[{\"title\":\"Restless and Wild\"},"
	    "{\"title\":\"Balls to the Wall\"}]},{\"name\":null,\"album\":[]}]", &r);
	FX_BOTH("GET", "album?select=*,track(*,genre(*))&artist_id=eq.1&order=album_id"
	    "&track.order=track_id", NULL, NULL, 200,
	    "[{\"album_id\":1,\"title\":\"For Those About To Rock\",\"artist_id\":1,\"track\":["
	    "{\"track_id\":1,\"name\":\"For Those About To Rock\",\"album_id\":1,\"genre_id\":1,"
	    "\"composer\":\"Angus Young\",\"milliseconds\":343719,\"unit_price\":0.99,"
	    "\"genre\":{\"genre_id\":1,\"name\":\"Rock\"}},"
	    "{\"track_id\":2,\"name\":\"Put The Finger On You\",\"album_id\":1,\"genre_id\":1,"
	    "\"composer\":null,\"milliseconds\":205662,\"unit_price\":0.99,"
	    "\"genre\":{\"genre_id\":1,\"name\":\"Rock\"}}]},"
	    "{\"album_id\":2,\"title\":\"Let There Be Rock\",\"artist_id\":1,\"track\":["
	    "{\"track_id\":3,\"name\":\"Go Down\",\"album_id\":2,\"genre_id\":2,"
	    "\"composer\":\"AC/DC\",\"milliseconds\":331180,\"unit_price\":1.99,"
	    "\"genre\":{\"genre_id\":2,\"name\":\"Jazz\"}}]}]", &r);
	FX_BOTH("GET", "artist?select=name,albums:album(title,songs:track(name,g:genre(name)))"
	    "&artist_id=eq.3", NULL, NULL, 200,
	    "[{\"name\":\"Aerosmith\",\"albums\":[{\"title\":\"Big Ones\",\"songs\":["
	    "{\"name\":\"Walk On Water\",\"g\":{\"name\":null}}]}]}]", &r);
	/* many-to-many */
	FX_BOTH("GET", "playlist?select=name,track(track_id)&order=playlist_id"
	    "&track.order=track_id", NULL, NULL, 200,
	    "[{\"name\":\"Music\",\"track\":[{\"track_id\":1},{\"track_id\":2},{\"track_id\":3}]},"
	    "{\"name\":\"Movies\",\"track\":[{\"track_id\":3},{\"track_id\":6}]},"
	    "{\"name\":\"Empty\",\"track\":[]}]", &r);
	FX_BOTH("GET", "track?select=track_id,playlist(name)&track_id=eq.3"
	    "&playlist.order=name", NULL, NULL, 200,
	    "[{\"track_id\":3,\"playlist\":[{\"name\":\"Movies\"},{\"name\":\"Music\"}]}]", &r);
	/* embed filters, limit, !inner */
	FX_BOTH("GET", "album?select=album_id,track(track_id)&album_id=lt.3&order=album_id"
	    "&track.genre_id=eq.2", NULL, NULL, 200,
	    "[{\"album_id\":1,\"track\":[]},{\"album_id\":2,\"track\":[{\"track_id\":3}]}]", &r);
	FX_BOTH("GET", "album?select=album_id,track!inner(track_id)&order=album_id"
	    "&track.genre_id=eq.2", NULL, NULL, 200,
	    "[{\"album_id\":2,\"track\":[{\"track_id\":3}]}]", &r);
	FX_BOTH("GET", "album?select=album_id,track(track_id)&album_id=eq.1&track.limit=1"
	    "&track.order=track_id.desc", NULL, NULL, 200,
	    "[{\"album_id\":1,\"track\":[{\"track_id\":2}]}]", &r);
	FX_BOTH("GET", "artist?select=artist_id,album!inner(title)&album.title=like.*Rock*"
	    "&order=artist_id", NULL, NULL, 200, NULL, &r);
	FX_BOTH("GET", "album?select=album_id,artist!inner(name)&artist.name=eq.Accept"
	    "&order=album_id", NULL, NULL, 200,
	    "[{\"album_id\":3,\"artist\":{\"name\":\"Accept\"}},"
	    "{\"album_id\":4,\"artist\":{\"name\":\"Accept\"}}]", &r);
	FX_BOTH("GET", "album?select=album_id,track(track_id)&album_id=eq.1"
	    "&track.or=(track_id.eq.2,track_id.eq.99)", NULL, NULL, 200,
	    "[{\"album_id\":1,\"track\":[{\"track_id\":2}]}]", &r);
	/* A JSON column, last among the plain ones, next to embeds. */
	FX_BOTH("GET", "doc?select=doc_id,album(title),body&order=doc_id", NULL, NULL, 200,
	    "[{\"doc_id\":1,\"album\":{\"title\":\"For Those About To Rock\"},"
	    "\"body\":{\"a\":[1,2],\"b\":\"x}\"}},{\"doc_id\":2,\"album\":{\"title\":"
	    "\"For Those About To Rock\"},\"body\":null}]", &r);
	FX_BOTH("GET", "album?select=title,doc(body)&album_id=eq.1&doc.order=doc_id", NULL, NULL,
	    200, "[{\"title\":\"For Those About To Rock\",\"doc\":[{\"body\":{\"a\":[1,2],"
	    "\"b\":\"x}\"}},{\"body\":null}]}]", &r);
	FX_BOTH("GET", "album?select=album_id,artist!artist_id(name)&album_id=eq.1", NULL,
	    NULL, 200, "[{\"album_id\":1,\"artist\":{\"name\":\"AC/DC\"}}]", &r);
}

static void
test_rest_errors(void)
{
	FX_BOTH("GET", "nosuch", NULL, NULL, 404, NULL, &r);
	CHECK(strstr(r.body.data, "\"code\":\"PGRST205\"") != NULL);
	FX_BOTH("GET", "artist?select=nosuch", NULL, NULL, 400, NULL, &r);
	CHECK(strstr(r.body.data, "\"code\":\"42703\"") != NULL);
	FX_BOTH("GET", "artist?nosuch=eq.1", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?order=nosuch", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?select=*,genre(*)", NULL, NULL, 400, NULL, &r);
	CHECK(strstr(r.body.data, "\"code\":\"PGRST200\"") != NULL);
	FX_BOTH("GET", "artist?select=*,nosuch(*)", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=xx.1", NULL, NULL, 400, NULL, &r);
	CHECK(strstr(r.body.data, "\"code\":\"PGRST100\"") != NULL);
	FX_BOTH("GET", "artist?artist_id=eq", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?select=name,", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?select=album(", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?limit=-1", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?limit=abc", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?order=name.sideways", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?or=(a.eq.1", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?name=is.maybe", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=in.(1,2", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?album.title=eq.x", NULL, NULL, 400, NULL, &r);
	CHECK(strstr(r.body.data, "\"code\":\"PGRST108\"") != NULL);
	FX_BOTH("GET", "employee?select=*,employee(*)", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=eq.notanumber", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "sluice_functions", NULL, NULL, 404, NULL, &r);
}

static void
test_rest_count_range(void)
{
	static const char *const count[] = { "Prefer: count=exact", NULL };
	static const char *const range[] = { "Range-Unit: items", "Range: 1-2", NULL };
	static const char *const range_count[] = { "Range: 0-1", "Prefer: count=exact", NULL };

	FX_BOTH("GET", "album?select=album_id&order=album_id", NULL, NULL, 200, NULL, &r);
	CHECK_STR(fx_header(&r, "Content-Range"), "0-4/*");
	FX_BOTH("GET", "album?select=album_id&order=album_id", count, NULL, 200, NULL, &r);
	CHECK_STR(fx_header(&r, "Content-Range"), "0-4/5");
	FX_BOTH("GET", "album?select=album_id&order=album_id&limit=2", count, NULL, 206,
	    "[{\"album_id\":1},{\"album_id\":2}]", &r);
	CHECK_STR(fx_header(&r, "Content-Range"), "0-1/5");
	FX_BOTH("GET", "album?select=album_id&order=album_id&artist_id=eq.1&offset=1", count,
	    NULL, 206, "[{\"album_id\":2}]", &r);
	CHECK_STR(fx_header(&r, "Content-Range"), "1-1/2");
	FX_BOTH("GET", "album?select=album_id&order=album_id", range, NULL, 200,
	    "[{\"album_id\":2},{\"album_id\":3}]", &r);
	CHECK_STR(fx_header(&r, "Content-Range"), "1-2/*");
	FX_BOTH("GET", "album?select=album_id&order=album_id", range_count, NULL, 206,
	    "[{\"album_id\":1},{\"album_id\":2}]", &r);
	CHECK_STR(fx_header(&r, "Content-Range"), "0-1/5");
	FX_BOTH("GET", "album?select=album_id&offset=10", count, NULL, 416, NULL, &r);
	CHECK(strstr(r.body.data, "PGRST103") != NULL);
	CHECK_STR(fx_header(&r, "Content-Range"), "*/5");
	FX_BOTH("GET", "album?album_id=eq.99", count, NULL, 200, "[]", &r);
	CHECK_STR(fx_header(&r, "Content-Range"), "*/0");
	FX_BOTH("HEAD", "album?select=album_id", count, NULL, 200, "", &r);
	CHECK_STR(fx_header(&r, "Content-Range"), "0-4/5");
	{
		static const char *const bad[] = { "Range: 5-2", NULL };

		FX_BOTH("GET", "album", bad, NULL, 416, NULL, &r);
	}
}

/* The total of a response's Content-Range ("0-4/5" -> 5), -1 when it is not a number. */
static long long
range_total(const struct http_resp *rr)
{
	char v[128];
	const char *slash;
	char *end;
	long long n;

	if (http_header(rr, "Content-Range", v, sizeof(v)) < 0 ||
	    (slash = strchr(v, '/')) == NULL || slash[1] < '0' || slash[1] > '9')
		return -1;
	n = strtoll(slash + 1, &end, 10);
	return *end == '\0' ? n : -1;
}

/*
 * Prefer: count=planned and count=estimated: PostgreSQL's planner estimate for the
 * filtered table (206 when it exceeds the page, as PostgREST answers), never below the
 * rows shown; SQLite has no planner estimate and answers the exact count.
 */
static void
test_rest_count_planned(void)
{
	static const char *const planned[] = { "Prefer: count=planned", NULL };
	static const char *const estimated[] = { "Prefer: count=estimated", NULL };
	const char *const *h[] = { planned, estimated };
	size_t i;

	for (i = 0; i < 2; i++) {
		long long total;

		CHECK_INT(fx_do(&fx.lite, "GET", "album?select=album_id", h[i], NULL, &r), 0);
		CHECK_INT(r.status, 200);
		CHECK_STR(fx_header(&r, "Content-Range"), "0-4/5");
		CHECK_INT(fx_do(&fx.lite, "HEAD", "album?artist_id=eq.1", h[i], NULL, &r), 0);
		CHECK_STR(fx_header(&r, "Content-Range"), "0-1/2");
		CHECK_INT(fx_do(&fx.pgs, "GET", "album?select=album_id", h[i], NULL, &r), 0);
		total = range_total(&r);
		CHECK(total >= 5);
		CHECK_INT(r.status, total > 5 ? 206 : 200);
		CHECK(r.body.data != NULL && strstr(r.body.data, "\"album_id\":5") != NULL);
		CHECK_INT(fx_do(&fx.pgs, "HEAD", "album?artist_id=eq.1", h[i], NULL, &r), 0);
		CHECK(range_total(&r) >= 2);
		CHECK(strncmp(fx_header(&r, "Content-Range"), "0-1/", 4) == 0);
		CHECK_STR(fx_header(&r, "Preference-Applied"), i ? "count=estimated" :
		    "count=planned");
	}
	/* A malformed filter is still the 400 it is without a count. */
	FX_BOTH("GET", "album?artist_id=zz.1", planned, NULL, 400, NULL, &r);
}

/* Accept: application/vnd.pgrst.plan: PostgreSQL's EXPLAIN of the read, as JSON or text,
 * with options=; SQLite, writes and unknown options are 406. */
static void
test_rest_plan(void)
{
	static const char *const pjson[] = {
		"Accept: application/vnd.pgrst.plan+json; for=\"application/json\"; options=;",
		NULL };
	static const char *const ptext[] = { "Accept: application/vnd.pgrst.plan", NULL };
	static const char *const popts[] = { "Accept: application/vnd.pgrst.plan+json; "
		"for=\"application/json\"; options=analyze|verbose;", NULL };
	static const char *const pbad[] = { "Accept: application/vnd.pgrst.plan+json; "
		"options=analyze|drop;", NULL };
	static const char *const pwrite[] = { "Accept: application/vnd.pgrst.plan+json",
		"Content-Type: application/json", NULL };
	cJSON *j;

	CHECK_INT(fx_do(&fx.pgs, "GET", "album?artist_id=eq.1", pjson, NULL, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(strncmp(fx_header(&r, "Content-Type"), "application/vnd.pgrst.plan+json", 31) == 0);
	j = cJSON_Parse(r.body.data ? r.body.data : "");
	CHECK(cJSON_IsArray(j) && cJSON_GetObjectItem(cJSON_GetArrayItem(j, 0), "Plan") != NULL);
	cJSON_Delete(j);
	CHECK_INT(fx_do(&fx.pgs, "GET", "album?order=title", ptext, NULL, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.body.data != NULL && strstr(r.body.data, "(cost=") != NULL);
	CHECK_INT(fx_do(&fx.pgs, "GET", "album", popts, NULL, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"Actual Rows\"") != NULL &&
	    strstr(r.body.data, "\"Output\"") != NULL);
	CHECK_INT(fx_do(&fx.pgs, "GET", "album", pbad, NULL, &r), 0);
	CHECK_INT(r.status, 406);
	CHECK_INT(fx_do(&fx.lite, "GET", "album", pjson, NULL, &r), 0);
	CHECK_INT(r.status, 406);
	CHECK(strstr(r.body.data, "PGRST107") != NULL);
	FX_BOTH("POST", "artist", pwrite, "{\"artist_id\":99,\"name\":\"x\"}", 406, NULL, &r);
	FX_BOTH("GET", "rpc/add_them?a=1&b=2", ptext, NULL, 406, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=eq.99", NULL, NULL, 200, "[]", &r);
}

/* A PostgreSQL request whose body must be the JSON want (status 200). */
static void
pg_json(const char *path, const char *want)
{
	CHECK_INT(fx_do(&fx.pgs, "GET", path, NULL, NULL, &r), 0);
	CHECK_INT(r.status, 200);
	if (!fx_json_eq(r.body.data, want))
		harness_fail(__FILE__, __LINE__, "GET %s: %s, want %s", path,
		    r.body.data ? r.body.data : "", want);
}

/* Computed fields (PostgreSQL): a function of a table's row returning one value is a
 * column of that table for select=, embeds, filters and order, but not in '*' and not
 * writable. */
static void
test_rest_computed_field(void)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };

	pg_json("album?select=title,title_len&album_id=eq.1",
	    "[{\"title\":\"For Those About To Rock\",\"title_len\":23}]");
	pg_json("album?select=album_id&title_len=lt.10", "[{\"album_id\":5}]");
	pg_json("album?select=album_id,len:title_len&artist_id=eq.1&order=title_len",
	    "[{\"album_id\":2,\"len\":17},{\"album_id\":1,\"len\":23}]");
	pg_json("album?album_id=eq.5", "[{\"album_id\":5,\"title\":\"Big Ones\",\"artist_id\":3}]");
	pg_json("artist?select=name,album(title_len)&artist_id=eq.3",
	    "[{\"name\":\"Aerosmith\",\"album\":[{\"title_len\":8}]}]");
	CHECK_INT(fx_do(&fx.pgs, "POST", "album", json, "{\"album_id\":99,\"title\":\"x\","
	    "\"artist_id\":1,\"title_len\":1}", &r), 0);
	CHECK_INT(r.status, 400);
	CHECK(strstr(r.body.data, "PGRST204") != NULL);
	CHECK_INT(fx_do(&fx.lite, "GET", "album?select=title_len", NULL, NULL, &r), 0);
	CHECK_INT(r.status, 400);
	pg_json("album?album_id=eq.99", "[]");
}

static void
test_rest_object_csv(void)
{
	static const char *const obj[] = { "Accept: application/vnd.pgrst.object+json", NULL };
	static const char *const csv[] = { "Accept: text/csv", NULL };
	static const char *const xml[] = { "Accept: application/xml", NULL };

	FX_BOTH("GET", "artist?artist_id=eq.1", obj, NULL, 200,
	    "{\"artist_id\":1,\"name\":\"AC/DC\"}", &r);
	CHECK(strncmp(fx_header(&r, "Content-Type"), "application/vnd.pgrst.object+json",
	    33) == 0);
	FX_BOTH("GET", "artist?artist_id=lt.3", obj, NULL, 406, NULL, &r);
	CHECK(strstr(r.body.data, "\"code\":\"PGRST116\"") != NULL);
	FX_BOTH("GET", "artist?artist_id=eq.99", obj, NULL, 406, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=eq.1", xml, NULL, 406, NULL, &r);
	FX_BOTH("GET", "artist?order=artist_id", csv, NULL, 200, NULL, &r);
	CHECK_STR(r.body.data, "artist_id,name\n1,AC/DC\n2,Accept\n3,Aerosmith\n"
	    "4,\"O'Brien, \"\"Jr\"\"\"\n5,");
	CHECK(strncmp(fx_header(&r, "Content-Type"), "text/csv", 8) == 0);
	FX_BOTH("GET", "artist?artist_id=eq.99", csv, NULL, 200, NULL, &r);
	CHECK_STR(r.body.data, "artist_id,name");
	FX_BOTH("GET", "track?select=id:track_id,unit_price&track_id=lt.3&order=track_id", csv,
	    NULL, 200, NULL, &r);
	CHECK_STR(r.body.data, "id,unit_price\n1,0.99\n2,0.99");
}

/*
 * The root's OpenAPI document with access control off: everything the schema holds, as
 * the API serves it (test_rest_openapi checks it per role).  A volatile function is only
 * offered by POST (a GET runs read-only); the hidden record table of a function returning
 * TABLE(...) is no path.
 */
static void
test_rest_openapi_all(void)
{
	int k;

	for (k = 0; k < 2; k++) {
		cJSON *doc, *paths;

		CHECK(fx_do(k == 0 ? &fx.lite : &fx.pgs, "GET", "", NULL, NULL, &r) == 0);
		CHECK_INT(r.status, 200);
		doc = cJSON_Parse(r.body.data ? r.body.data : "");
		paths = cJSON_GetObjectItemCaseSensitive(doc, "paths");
		CHECK(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(paths, "/track")) == 4);
		CHECK(cJSON_GetObjectItemCaseSensitive(paths, "/rpc/add_them") != NULL);
		CHECK(cJSON_GetObjectItemCaseSensitive(paths, "/artists_upto") == NULL);
		CHECK(cJSON_GetObjectItemCaseSensitive(doc, "security") == NULL);
		if (k == 1) {
			cJSON *f = cJSON_GetObjectItemCaseSensitive(paths, "/rpc/rename_artist");

			CHECK(f != NULL && cJSON_GetObjectItemCaseSensitive(f, "get") == NULL &&
			    cJSON_GetObjectItemCaseSensitive(f, "post") != NULL);
			/* A computed field takes an unnamed row: no path of its own. */
			CHECK(cJSON_GetObjectItemCaseSensitive(paths, "/rpc/title_len") == NULL);
		}
		cJSON_Delete(doc);
	}
}

int
main(void)
{
	http_resp_init(&r);
	if (fx_start(NULL) < 0) {
		CHECK(!"the two stacks started");
		fx_stop();
		return harness_done();
	}
	RUN(test_rest_select);
	RUN(test_rest_filters);
	RUN(test_rest_order);
	RUN(test_rest_embed);
	RUN(test_rest_errors);
	RUN(test_rest_count_range);
	RUN(test_rest_object_csv);
	RUN(test_rest_count_planned);
	RUN(test_rest_plan);
	RUN(test_rest_computed_field);
	RUN(test_rest_openapi_all);
	http_resp_free(&r);
	fx_stop();
	return harness_done();
}
