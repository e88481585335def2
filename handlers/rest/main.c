/*
 * rest: a PostgREST-compatible API over every table, view and function of a database.
 *
 * Route (from conf/endpoints.conf, e.g. "rest /rest/v1/ db=chinook"):
 *   GET|HEAD    PREFIX             the OpenAPI 3.1 document of what the role may use
 *                                  (Accept: application/openapi+json, application/json,
 *                                  any; else 406 PGRST107); another method 405
 *   GET|HEAD    PREFIX<table>      select=, filters, or=/and=, order=, limit=, offset=,
 *                                  embeds rel(...) with rel.col=, rel.order=, rel.limit=
 *   POST        PREFIX<table>      one JSON object or an array: 201; columns=, on_conflict=;
 *                                  an upsert that inserted nothing: 200; with
 *                                  return=headers-only, Location of the row's key
 *   PATCH       PREFIX<table>      filters, one JSON object: 204 (200 with representation)
 *   DELETE      PREFIX<table>      filters: 204 (200 with representation)
 *   GET|POST    PREFIX rpc/<fn>    named arguments in the query or a JSON object body (those
 *                                  with a default may be left out); void: 204
 *   OPTIONS     any                a CORS preflight: 204 for an origin of rest_cors_origins,
 *                                  403 otherwise (no Access-Control-* headers at all then)
 * Access control (auth.c, docs/postgrest.md): off unless a rest_jwt_*, rest_anon_role or
 * rest_grants setting is set; then 401 PGRST301 for a bad token, 401 PGRST302 without a
 * token and without rest_anon_role, 401/403 42501 for a role without the privilege.
 * Writes take Content-Type: application/json only (415 PGRST107); a PATCH or DELETE without
 * a filter is 400 21000 unless rest_unfiltered_writes=1; bodies with "\u0000" or a
 * non-finite number (1e999) are 400 PGRST102; a representation too large is 413 and the
 * write is rolled back.
 * Headers: Accept-Profile (GET, HEAD) and Content-Profile (the others) pick a schema of
 * rest_schemas (406 PGRST106 for another); Prefer (return=minimal|representation|
 * headers-only, count=exact|planned|estimated, resolution=merge-duplicates|
 * ignore-duplicates, missing=default, tx=commit|rollback, handling=lenient|strict,
 * max-affected=N; unknown ones ignored, or 400 PGRST122 under handling=strict; more rows
 * than max-affected 400 PGRST124, rolled back), Accept (application/json, text/csv,
 * application/vnd.pgrst.object+json, application/vnd.pgrst.plan[+json] for PostgreSQL's
 * EXPLAIN of a read), Range: N-M.  Responses carry Content-Range, and Preference-Applied
 * with the preferences honoured.  Idempotency-Key on a table's POST, PATCH or DELETE
 * (apps/rest/idem.c): the write's answer is stored with it and replayed to a retry, with
 * Idempotent-Replayed: true; 400 idempotency_key_invalid, 409 idempotency_key_in_flight,
 * 422 idempotency_key_reused.
 *
 * Statuses: 200, 201, 204, 206 (partial with a count); 400 PGRST100 (parse), 42703
 * (unknown column), PGRST200/PGRST201 (relationship), PGRST102 (body), PGRST204 (unknown
 * column in a body); 404 PGRST205/PGRST202 (unknown table or function); 406 PGRST116 (object
 * requested, not one row) and PGRST107 (Accept); 409 constraint (with 400, the database's
 * integrity and input errors in its own words: rest_db_errors=pass|hide); 414 (query
 * string over REST_QUERY_MAX); 416 PGRST103 (range past the end); 503 database
 * unavailable.
 *
 * Tables touched: any table the database holds, as the request asks; the schema is read
 * from the catalogs once per worker and shared by its threads (schemas.c, schema.c), and
 * again after the worker got a SIGHUP (kill -HUP of the workers, or "sluiced ctl reload
 * rest" for new workers).  sluice_idempotency (made by the first keyed write) holds the
 * keys and their answers.
 *
 * The binary's two files are listed in route.h; the engine's (apps/rest/, libapp_rest.a),
 * layer by layer, in rest/rest.h.
 */
#include "route.h"
#include "serve.h"

static const struct endpoint endpoint = {
	.name = "rest",
	.handle = rest_handle,
	.methods = REQ_GET | REQ_HEAD | REQ_POST | REQ_PATCH | REQ_DELETE | REQ_OPTIONS,
	.db = &serve_db,
	.dialect_errors = 1,
	.thread_init = rest_thread_init,
	.thread_reload = rest_thread_reload,
	.thread_fini = rest_thread_fini,
};

int
main(int argc, char **argv)
{
	int rc;

	/* Access control is read once, before serving: a bad key stops the worker here. */
	if (rest_auth_init() < 0)
		return 1;
	rc = serve_main(argc, argv, &endpoint);
	rest_watch_stop();
	rest_auth_fini();
	return rc;
}
