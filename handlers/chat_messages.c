/*
 * chat_messages: GET /chat/messages?channel=NAME&after=ID (and HEAD): the messages of
 * channel NAME newer than message ID, for the chat page's script (handlers/chat_script.js),
 * which asks every second while the page is visible and appends what comes back.
 *
 * NAME is 1 to 32 characters matching ^[a-z_][a-z0-9_-]*$ (the channel names of
 * chat_channel_open); ID is an integer 0..2^63-1, the id of the newest message the page
 * shows (0: none).  One indexed query: the channel's messages from 60 s before message
 * ID's time on (the (channel_id, created_ts) index; the slack catches a message that
 * got a larger id but an earlier time than ID, as concurrent writers can), with an id
 * above ID, oldest first, at most 100 (the script asks again for the rest).  A channel
 * that does not exist has no messages.  Readable by any session, as any channel can be
 * opened by any session.
 *
 * The answer, never cached: 200 application/json
 *   {"messages":[{"id":N,"nick":"...","content":"...","ts":SECONDS},...]}
 * (ts: seconds since the epoch, with milliseconds).  Statuses: 200; 400 a missing or bad
 * channel or after; 401 no valid session (apps/chat/chat.h); 405 other methods; 503
 * database busy or down.  Tables: reads messages, users, channels.
 */
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "chat/chat.h"
#include "db.h"
#include "json.h"
#include "serve.h"

#define MESSAGES_MAX	100

enum msgs_field { MSGS_CHANNEL, MSGS__MAX };

/* The channel parameter's row (apps/chat/field.h): chat_channel_open's rules. */
static const struct chat_field msgs_fields[MSGS__MAX] = {
	[MSGS_CHANNEL] = {
		.name = "channel", .kind = CHAT_KIND_CHANNEL, .min = 1, .max = 32,
		.required = 1, .status = 400, .code = "invalid_value",
		.len_msg = "channel must be 1 to 32 characters",
		.chars_msg = "channel must match ^[a-z_][a-z0-9_-]*$",
	},
};

static const char *const q_newer =
    "SELECT m.id, u.nickname, m.content, m.created_ts "
    "FROM messages m JOIN users u ON u.id = m.user_id "
    "WHERE m.channel_id = (SELECT id FROM channels WHERE name = $1) "
    "AND m.created_ts >= COALESCE((SELECT created_ts FROM messages WHERE id = $2), 0) - 60 "
    "AND m.id > $2 ORDER BY m.created_ts, m.id LIMIT 100";

/* Appends the text column col as a JSON string. */
static void
messages_text(struct buf *b, struct db_stmt *st, int col)
{
	size_t len = 0;
	const char *s = db_column_text(st, col, &len);

	json_escape(b, s != NULL ? s : "", s != NULL ? len : 0);
}

static int
handle(struct req *rq, struct resp *rs)
{
	const struct req_param *ch = req_param(rq, "channel");
	struct chat_value v[MSGS__MAX];
	enum chat_field_err e;
	char sid[CHAT_SID_MAX], ts[32];
	struct buf *b = &rs->body;
	struct db_stmt *st;
	int64_t after;
	int rc = DB_DONE, n = 0;

	if (!chat_session(rq, sid))
		return resp_error(rs, 401, "no_session", "no valid session", NULL,
		    "load the chat page first: it sets the session cookie");
	if (ch == NULL)
		return resp_error(rs, 400, "invalid_value", "the channel parameter is missing",
		    NULL, NULL);
	memset(v, 0, sizeof(v));
	if ((e = chat_field_read(msgs_fields, MSGS__MAX, v, "channel", ch->val, ch->vallen,
	    NULL)) != CHAT_FIELD_OK) {
		(void)chat_field_refuse(rs, &msgs_fields[MSGS_CHANNEL], "channel", e);
		return 0;
	}
	if (req_param(rq, "after") == NULL ||
	    req_param_int(rq, "after", 0, INT64_MAX, 0, &after) < 0)
		return resp_error(rs, 400, "invalid_value",
		    "after must be a message id (an integer, 0 for none)", NULL, NULL);

	if ((st = db_prepare(rq->db, q_newer)) == NULL)
		return serve_db_error(rs, rq->db);
	db_bind_text(st, 1, ch->val, ch->vallen);
	db_bind_int(st, 2, after);
	buf_puts(b, "{\"messages\":[");
	while (n < MESSAGES_MAX && (rc = db_step(st)) == DB_ROW) {
		buf_puts(b, n++ > 0 ? ",{\"id\":" : "{\"id\":");
		buf_put_int(b, db_column_int(st, 0));
		buf_puts(b, ",\"nick\":");
		messages_text(b, st, 1);
		buf_puts(b, ",\"content\":");
		messages_text(b, st, 2);
		(void)snprintf(ts, sizeof(ts), ",\"ts\":%.3f}", db_column_double(st, 3));
		buf_puts(b, ts);
	}
	if (n < MESSAGES_MAX && rc == DB_ERROR) {
		rs->body.len = 0;
		return serve_db_error(rs, rq->db);
	}
	db_reset(st);
	buf_puts(b, "]}");
	if (buf_failed(b))
		return resp_error(rs, 500, "internal", "the answer does not fit the response cap",
		    NULL, NULL);
	rs->status = 200;
	rs->content_type = "application/json";
	return resp_header(rs, "Cache-Control", "no-store");
}

static const struct endpoint endpoint = {
	.name = "chat_messages",
	.handle = handle,
	.methods = REQ_GET,
	.db = &serve_db,
};

int
main(int argc, char **argv)
{
	return chat_main(argc, argv, &endpoint);
}
