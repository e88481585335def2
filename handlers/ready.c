/*
 * ready: GET|HEAD /ready
 *
 * The readiness probe.  /health says the stack is up; /ready says this worker can serve
 * the data it was started for:
 *   200 {"status":"ok","database":"sqlite"|"postgresql","writable":true|false,"tables":N}
 *       the database answers a statement, holds at least one table, and (unless
 *       ready_writable=0 on the endpoint's line) would accept a write now;
 *   503 {"code":"unavailable","message":M,"details":null,"hint":null,"writable":B,
 *       "tables":N,"moved":B,"requestId":ID}
 *       the database is down, empty (no table: a file that lost its data, or one a seeder
 *       never filled), its SQLite file was deleted or replaced under the worker, or it
 *       must be written and cannot be (a read-only file or file system, a full disk, a
 *       standby server).  The other failures of the database's own: its JSON error.
 * No parameters; reads the catalogue only (sqlite_master, information_schema).  Other
 * methods: 405.
 */
#include <inttypes.h>
#include <stdio.h>

#include "buf.h"
#include "db.h"
#include "serve.h"
#include "settings.h"

static int
handle(struct req *rq, struct resp *rs)
{
	struct db_state ds;
	long long must_write = 1;
	const char *why = NULL;

	if (db_state(rq->db, &ds) == -1)
		return serve_db_error(rs, rq->db);
	if (settings_int(SETTING_READY_WRITABLE, &must_write) == -1)
		must_write = 1;
	if (ds.moved)
		why = "the database file was deleted or replaced";
	else if (ds.tables == 0)
		why = "the database is empty";
	else if (must_write && !ds.writable)
		why = "the database is not writable";
	rs->content_type = "application/json";
	if (why != NULL) {
		rs->status = 503;
		if (buf_printf(&rs->body, "{\"code\":\"unavailable\",\"message\":\"%s\","
		    "\"details\":null,\"hint\":null,\"writable\":%s,\"tables\":%" PRId64
		    ",\"moved\":%s", why, ds.writable ? "true" : "false", ds.tables,
		    ds.moved ? "true" : "false") < 0 || resp_error_id(rs, &rs->body) < 0)
			return -1;
		return buf_putc(&rs->body, '}');
	}
	rs->status = 200;
	return buf_printf(&rs->body, "{\"status\":\"ok\",\"database\":\"%s\",\"writable\":%s,"
	    "\"tables\":%" PRId64 "}", db_backend(rq->db) == DB_PG ? "postgresql" : "sqlite",
	    ds.writable ? "true" : "false", ds.tables);
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
