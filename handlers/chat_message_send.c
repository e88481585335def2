/*
 * chat_message_send: POST /chat/message-send, body {"messageSend":"TEXT"} (JSON) or the
 * form messageSend=TEXT (application/x-www-form-urlencoded: the page without script).
 *
 * Inserts a message from the current user (session cookie, or a random seeded user in
 * bench mode: apps/chat/chat.h) into the user's current channel.  TEXT is 1 to 500
 * characters (code points) of text: no control characters but tab and newline.  The
 * answer comes only after the insert committed: on SQLite the inserts of all threads of
 * the process are group-committed, one fsync per batch; on PostgreSQL each is its own
 * transaction, retried on serialization failures.
 *
 * Statuses: 204 sent (303 to / for a form post, whose refusals are a small HTML page for
 * a browser: chat_reply() in apps/chat/chat.h); 400 malformed body (not JSON or a form, not
 * an object, missing or unexpected key, not a string, NUL) or a TEXT of the wrong length
 * or characters; 401 no valid session; 405 not POST; 409 the user is gone or has no
 * current channel; 413 body over the cap; 415 neither JSON nor a form; 503 database busy
 * or down.  Nothing is written on any 4xx.  Tables: reads users, inserts into messages.
 * After the commit it bumps the channel's counter on the version board (chat/version.h),
 * which the page's cache (chat_page_cache=1) reads.
 */
#include <stdint.h>
#include <string.h>

#include "chat/chat.h"
#include "chat/version.h"
#include "db.h"
#include "dbwrite.h"
#include "serve.h"

enum send_field { SEND_TEXT, SEND__MAX };

/* The body's validation table (apps/chat/field.h). */
static const struct chat_field send_fields[SEND__MAX] = {
	[SEND_TEXT] = {
		.name = "messageSend", .kind = CHAT_KIND_TEXT, .min = 1, .max = 500,
		.ctrl = CHAT_CTRL('\t') | CHAT_CTRL('\n'), .required = 1,
		.status = 400, .code = "invalid_value",
		.len_msg = "messageSend must be 1 to 500 characters",
		.chars_msg = "messageSend may not contain control characters",
		.chars_hint = "tab and newline are allowed",
	},
};

struct send {
	const char *sid;
	const char *text;
	size_t len;
	double now;
	int64_t channel;	/* out: the channel written to */
};

/* The insert, run inside a (group) transaction: 0 inserted (s->channel says where), 1 no
 * such user or no current channel (nothing written), -1 on a database failure. */
static int
send_write(struct db *db, void *arg)
{
	struct send *s = arg;
	struct db_stmt *st;
	int rc;

	/* A pending session's user is made by its first write (apps/chat/chat.h). */
	if (chat_user_ensure(db, s->sid) < 0)
		return -1;
	if ((st = db_prepare(db, "INSERT INTO messages(channel_id, user_id, content, "
	    "created_ts) SELECT current_channel_id, id, $2, $3 FROM users "
	    "WHERE session_id = $1 AND current_channel_id IS NOT NULL "
	    "RETURNING channel_id")) == NULL)
		return -1;
	db_bind_text(st, 1, s->sid, strlen(s->sid));
	db_bind_text(st, 2, s->text, s->len);
	db_bind_double(st, 3, s->now);
	if ((rc = db_step(st)) == DB_DONE)
		return 1;
	if (rc != DB_ROW)
		return -1;
	s->channel = db_column_int(st, 0);
	/* One row at most (session_id is unique): run the statement to its end. */
	return db_step(st) == DB_DONE ? 0 : -1;
}

/* The write; handle() adapts its answer to a form post. */
static int
send_handle(struct req *rq, struct resp *rs)
{
	struct chat_value v[SEND__MAX];
	char sid[CHAT_SID_MAX];
	struct send s;
	enum db_err e;
	int rc;

	if (chat_write_input(rq, rs, send_fields, SEND__MAX, sid, v) < 0)
		return 0;
	s.sid = sid;
	s.text = v[SEND_TEXT].s;
	s.len = v[SEND_TEXT].len;
	s.now = chat_now();
	s.channel = 0;
	if ((rc = db_write(rq->db, send_write, &s, DB_WRITE_TXN, &e)) < 0)
		return serve_db_error_class(rs, e);
	/* Committed, not yet answered: cached lists of the channel are stale from now on. */
	if (rc == 0)
		chat_version_bump_channel(s.channel);
	if (rc == 1)
		return resp_error(rs, 409, "no_channel",
		    "the session's user does not exist or has no current channel", NULL,
		    "open a channel first");
	rs->status = 204;
	return 0;
}

static int
handle(struct req *rq, struct resp *rs)
{
	return chat_reply(rq, rs, send_handle(rq, rs));
}

static const struct endpoint endpoint = {
	.name = "chat_message_send",
	.handle = handle,
	.methods = REQ_POST,
	.db = &serve_db,
};

int
main(int argc, char **argv)
{
	return chat_main(argc, argv, &endpoint);
}
