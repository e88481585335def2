/*
 * chat_channel_open: POST /chat/channel-open, body {"channelOpen":"NAME"} (JSON) or the
 * form channelOpen=NAME (application/x-www-form-urlencoded: the page without script).
 *
 * Opens channel NAME for the current user (apps/chat/chat.h): creates the channel when it
 * does not exist, adds the user's membership when missing, and makes it the user's
 * current channel, all in one committed transaction (group-committed on SQLite, retried
 * on serialization failures on PostgreSQL).  NAME is 1 to 32 characters matching
 * ^[a-z_][a-z0-9_-]*$.
 *
 * Statuses: 204 opened (303 to / for a form post, whose refusals are a small HTML page for
 * a browser: chat_reply() in apps/chat/chat.h); 400 malformed body or a bad NAME; 401 no
 * valid session; 405 not POST; 409 the session's user is gone; 413; 415 neither JSON nor a
 * form; 503 database busy or down.  Nothing is written on any 4xx.  Tables: users (read,
 * current_channel_id updated), channels and channel_memberships (inserted when missing).
 */
#include <string.h>

#include "chat/chat.h"
#include "db.h"
#include "dbwrite.h"
#include "serve.h"

enum open_field { OPEN_NAME, OPEN__MAX };

/* The body's validation table (apps/chat/field.h). */
static const struct chat_field open_fields[OPEN__MAX] = {
	[OPEN_NAME] = {
		.name = "channelOpen", .kind = CHAT_KIND_CHANNEL, .min = 1, .max = 32,
		.required = 1, .status = 400, .code = "invalid_value",
		.len_msg = "channelOpen must be 1 to 32 characters",
		.chars_msg = "channelOpen must match ^[a-z_][a-z0-9_-]*$",
		.chars_hint = "lower-case letters, digits, _ and -, not starting with a digit "
		    "or -",
	},
};

struct open {
	const char *sid;
	const char *name;
	size_t len;
	double now;
};

/* 0 done, 1 no such user (nothing written), -1 database failure. */
static int
open_write(struct db *db, void *arg)
{
	const struct open *o = arg;
	struct db_stmt *st;
	int64_t uid;
	int rc;

	/* A pending session's user is made by its first write (apps/chat/chat.h). */
	if (chat_user_ensure(db, o->sid) < 0)
		return -1;
	if ((st = db_prepare(db, "SELECT id FROM users WHERE session_id = $1")) == NULL)
		return -1;
	db_bind_text(st, 1, o->sid, strlen(o->sid));
	if ((rc = db_step(st)) == DB_ERROR)
		return -1;
	if (rc == DB_DONE)
		return 1;
	uid = db_column_int(st, 0);
	db_reset(st);
	if ((st = db_prepare(db, "INSERT INTO channels(name, created_ts) VALUES ($1, $2) "
	    "ON CONFLICT (name) DO NOTHING")) == NULL)
		return -1;
	db_bind_text(st, 1, o->name, o->len);
	db_bind_double(st, 2, o->now);
	if (db_step(st) != DB_DONE)
		return -1;
	if ((st = db_prepare(db, "INSERT INTO channel_memberships(user_id, channel_id, "
	    "created_ts) SELECT $1, id, $3 FROM channels WHERE name = $2 "
	    "ON CONFLICT DO NOTHING")) == NULL)
		return -1;
	db_bind_int(st, 1, uid);
	db_bind_text(st, 2, o->name, o->len);
	db_bind_double(st, 3, o->now);
	if (db_step(st) != DB_DONE)
		return -1;
	if ((st = db_prepare(db, "UPDATE users SET current_channel_id = "
	    "(SELECT id FROM channels WHERE name = $2) WHERE id = $1")) == NULL)
		return -1;
	db_bind_int(st, 1, uid);
	db_bind_text(st, 2, o->name, o->len);
	return db_step(st) == DB_DONE ? 0 : -1;
}

/* The write; handle() adapts its answer to a form post. */
static int
open_handle(struct req *rq, struct resp *rs)
{
	struct chat_value v[OPEN__MAX];
	char sid[CHAT_SID_MAX];
	struct open o;
	enum db_err e;
	int rc;

	if (chat_write_input(rq, rs, open_fields, OPEN__MAX, sid, v) < 0)
		return 0;
	o.sid = sid;
	o.name = v[OPEN_NAME].s;
	o.len = v[OPEN_NAME].len;
	o.now = chat_now();
	if ((rc = db_write(rq->db, open_write, &o, DB_WRITE_TXN, &e)) < 0)
		return serve_db_error_class(rs, e);
	if (rc == 1)
		return resp_error(rs, 409, "no_user", "the session's user does not exist",
		    NULL, "reload the chat page");
	rs->status = 204;
	return 0;
}

static int
handle(struct req *rq, struct resp *rs)
{
	return chat_reply(rq, rs, open_handle(rq, rs));
}

static const struct endpoint endpoint = {
	.name = "chat_channel_open",
	.handle = handle,
	.methods = REQ_POST,
	.db = &serve_db,
};

int
main(int argc, char **argv)
{
	return chat_main(argc, argv, &endpoint);
}
