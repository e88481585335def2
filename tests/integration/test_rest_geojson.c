/*
 * test_rest_geojson: Accept: application/geo+json on the rest endpoint, PostgREST's
 * GeoJSON answer (a FeatureCollection made by PostGIS's ST_AsGeoJSON over the rows).
 *
 * The PostgreSQL stack of rest_fixture.h gets PostGIS (the Debian package
 * postgresql-15-postgis-3, installed by make deps-test) in a schema of its own,
 * "extensions", off the search_path as in postgrest-js's fixture, and a table shops with
 * a geometry column; a function returning setof shops.  SQLite has no PostGIS: the same
 * request there is PostgREST's answer to a media type it does not serve, 406 PGRST107.
 * Without PostGIS installed the test fails at start: it never skips.
 */
#include "rest_fixture.h"

static struct http_resp r;

static const char more_pg[] =
    "create schema extensions;\n"
    "create extension postgis schema extensions;\n"
    "create table shops (id int primary key, address text,\n"
    "  shop_geom extensions.geometry(point, 4326));\n"
    "insert into shops values (1, '1369 Cambridge St',\n"
    "  'SRID=4326;POINT(-71.10044 42.373695)'),\n"
    "  (2, '10 Main St', 'SRID=4326;POINT(1.5 -2.25)'), (3, 'Nowhere', null);\n"
    "create function shops_from(first int) returns setof shops language sql stable as\n"
    "  $$ select * from shops where id >= first $$;\n";

static const char more_sqlite[] =
    "create table shops (id integer primary key, address text, shop_geom text);\n"
    "insert into shops values (1, '1369 Cambridge St', null);\n";

static const char *const geo[] = { "Accept: application/geo+json", NULL };

/* GETs path (below /rest/v1/) from the PostgreSQL stack with headers h into r. */
static void
pg_get(const char *path, const char *const *h)
{
	CHECK(fx_do(&fx.pgs, "GET", path, h, NULL, &r) == 0);
}

static void
test_rest_geojson_feature_collection(void)
{
	pg_get("shops?id=eq.1", geo);
	CHECK_INT(r.status, 200);
	CHECK(strncmp(fx_header(&r, "Content-Type"), "application/geo+json", 20) == 0);
	CHECK(fx_json_eq(r.body.data, "{\"type\":\"FeatureCollection\",\"features\":[{"
	    "\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":"
	    "[-71.10044,42.373695]},\"properties\":{\"id\":1,\"address\":"
	    "\"1369 Cambridge St\"}}]}"));
	CHECK_STR(fx_header(&r, "Content-Range"), "0-0/*");
}

static void
test_rest_geojson_select_order_limit_count(void)
{
	static const char *const h[] = { "Accept: application/geo+json",
		"Prefer: count=exact", NULL };

	/* Renamed keys become the properties' names; a null geometry is PostGIS's
	 * {"type": null}. */
	pg_get("shops?select=where:address,shop_geom&order=id.desc&limit=2", h);
	CHECK_INT(r.status, 206);
	CHECK_STR(fx_header(&r, "Content-Range"), "0-1/3");
	CHECK(fx_json_eq(r.body.data, "{\"type\":\"FeatureCollection\",\"features\":["
	    "{\"type\":\"Feature\",\"geometry\":{\"type\":null},\"properties\":{\"where\":\"Nowhere\"}},"
	    "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":"
	    "[1.5,-2.25]},\"properties\":{\"where\":\"10 Main St\"}}]}"));
}

static void
test_rest_geojson_no_rows_is_empty_collection(void)
{
	pg_get("shops?id=gt.100", geo);
	CHECK_INT(r.status, 200);
	CHECK(fx_json_eq(r.body.data, "{\"type\":\"FeatureCollection\",\"features\":[]}"));
}

static void
test_rest_geojson_function_rows(void)
{
	pg_get("rpc/shops_from?first=2&select=id,shop_geom", geo);
	CHECK_INT(r.status, 200);
	CHECK(fx_json_eq(r.body.data, "{\"type\":\"FeatureCollection\",\"features\":["
	    "{\"type\":\"Feature\",\"geometry\":{\"type\":\"Point\",\"coordinates\":"
	    "[1.5,-2.25]},\"properties\":{\"id\":2}},"
	    "{\"type\":\"Feature\",\"geometry\":{\"type\":null},\"properties\":{\"id\":3}}]}"));
}

/* A list of types: geo+json where it is served, JSON otherwise. */
static void
test_rest_geojson_accept_list(void)
{
	static const char *const h[] = {
		"Accept: application/geo+json;q=1, application/json;q=0.5", NULL };

	pg_get("shops?id=eq.2&select=id,shop_geom", h);
	CHECK_INT(r.status, 200);
	CHECK(strncmp(fx_header(&r, "Content-Type"), "application/geo+json", 20) == 0);
	CHECK(fx_do(&fx.lite, "GET", "shops?id=eq.1&select=id", h, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(strncmp(fx_header(&r, "Content-Type"), "application/json", 16) == 0);
	CHECK(fx_json_eq(r.body.data, "[{\"id\":1}]"));
}

/* Rows without a geometry: PostGIS's own error (22023), a 400 as PostgREST answers it,
 * and the stack still serves. */
static void
test_rest_geojson_table_without_geometry(void)
{
	pg_get("artist?artist_id=eq.1", geo);
	CHECK_INT(r.status, 400);
	CHECK(strstr(r.body.data, "\"22023\"") != NULL);
	pg_get("shops?id=eq.1&select=id", geo);
	CHECK_INT(r.status, 400);
	pg_get("shops?id=eq.1&select=id", NULL);
	CHECK_INT(r.status, 200);
	CHECK(fx_json_eq(r.body.data, "[{\"id\":1}]"));
}

static void
test_rest_geojson_write_refused(void)
{
	static const char *const h[] = { "Accept: application/geo+json",
		"Content-Type: application/json", "Prefer: return=representation", NULL };

	CHECK(fx_do(&fx.pgs, "POST", "shops", h, "{\"id\":9,\"address\":\"x\"}", &r) == 0);
	CHECK_INT(r.status, 406);
	CHECK(strstr(r.body.data, "PGRST107") != NULL);
	pg_get("shops?id=eq.9", NULL);
	CHECK_INT(r.status, 200);
	CHECK(fx_json_eq(r.body.data, "[]"));
}

/* SQLite: no PostGIS, so PostgREST's answer to a type it does not serve. */
static void
test_rest_geojson_sqlite_not_acceptable(void)
{
	CHECK(fx_do(&fx.lite, "GET", "shops", geo, NULL, &r) == 0);
	CHECK_INT(r.status, 406);
	CHECK(fx_json_eq(r.body.data, "{\"code\":\"PGRST107\",\"details\":null,\"hint\":null,"
	    "\"message\":\"None of these media types are available: application/geo+json\"}"));
}

int
main(void)
{
	http_resp_init(&r);
	fx_more_pg = more_pg;
	fx_more_sqlite = more_sqlite;
	if (fx_start(NULL) < 0) {
		CHECK(!"the stacks started, PostGIS created on PostgreSQL "
		    "(postgresql-15-postgis-3: make deps-test)");
		goto out;
	}
	RUN(test_rest_geojson_feature_collection);
	RUN(test_rest_geojson_select_order_limit_count);
	RUN(test_rest_geojson_no_rows_is_empty_collection);
	RUN(test_rest_geojson_function_rows);
	RUN(test_rest_geojson_accept_list);
	RUN(test_rest_geojson_table_without_geometry);
	RUN(test_rest_geojson_write_refused);
	RUN(test_rest_geojson_sqlite_not_acceptable);
out:
	fx_stop();
	http_resp_free(&r);
	return harness_done();
}
