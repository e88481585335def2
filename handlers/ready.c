/*
 * ready: GET|HEAD /ready
 *
 * The readiness probe: 200 {"status":"ok","database":"sqlite"|"postgresql"} when this
 * worker can run a statement on its database, 503 with the JSON error otherwise (the
 * database is down or unreachable; the next request reconnects).  /health says the stack
 * is up; /ready says it can serve data.  No parameters; no tables touched (SELECT 1).
 * Other methods: 405.
 */
#include "db.h"
#include "serve.h"

static int
handle(struct req *rq, struct resp *rs)
{
	static const char sqlite_ok[] = "{\"status\":\"ok\",\"database\":\"sqlite\"}";
	static const char pg_ok[] = "{\"status\":\"ok\",\"database\":\"postgresql\"}";
	struct db_stmt *st;
	int pg = db_backend(rq->db) == DB_PG;

	if ((st = db_prepare(rq->db, "SELECT 1")) == NULL || db_step(st) != DB_ROW ||
	    db_column_int(st, 0) != 1)
		return serve_db_error(rs, rq->db);
	db_reset(st);
	return resp_set(rs, 200, "application/json", pg ? pg_ok : sqlite_ok,
	    pg ? sizeof(pg_ok) - 1 : sizeof(sqlite_ok) - 1);
}

static const struct endpoint endpoint = {
	.name = "ready",
	.handle = handle,
	.methods = REQ_GET | REQ_HEAD,
	.db = &serve_db,
};

int
main(int argc, char **argv)
{
	return serve_main(argc, argv, &endpoint);
}
