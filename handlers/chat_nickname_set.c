/*
 * chat_nickname_set: POST /chat/nickname-set, body {"nicknameSet":"NICK"} (JSON) or the
 * form nicknameSet=NICK (application/x-www-form-urlencoded: the page without script).
 *
 * Sets the current user's nickname (apps/chat/chat.h) in one committed transaction.  NICK is
 * 1 to 32 characters matching ^[A-Za-z0-9 _-]*$.  The answer is the Datastar signal
 * patch of the original application, {"_nicknameSetError":""} on success; a NICK that
 * breaks the rules gets 422 with the reason in the same key (for the page to show) plus
 * the usual error fields {code,message,details,hint}.
 *
 * Statuses: 200 application/json set (303 to / for a form post, whose refusals are a small
 * HTML page for a browser: chat_reply() in apps/chat/chat.h); 400 malformed body (not JSON
 * or a form, not an object, missing or unexpected key, not a string); 401 no valid session;
 * 405 not POST; 409 the session's user is gone; 413; 415 neither JSON nor a form; 422 bad
 * NICK; 503 database busy or down.  Nothing is written on any 4xx.  Tables: users (nickname
 * updated).  After the commit it bumps the user's counter on the version board
 * (chat/version.h): the page's cache (chat_page_cache=1) drops the lists the user wrote in.
 */
#include <stdint.h>
#include <string.h>

#include "chat/chat.h"
#include "chat/version.h"
#include "db.h"
#include "dbwrite.h"
#include "serve.h"

enum nick_field { NICK_NICK, NICK__MAX };

/* The body's validation table (apps/chat/field.h): a refusal is 422 and repeats its
 * reason in the signal the page shows. */
static const struct chat_field nick_fields[NICK__MAX] = {
	[NICK_NICK] = {
		.name = "nicknameSet", .kind = CHAT_KIND_NICKNAME, .min = 1, .max = 32,
		.required = 1, .status = 422, .code = "invalid_nickname",
		.signal = "_nicknameSetError",
		.len_msg = "The nickname must be 1 to 32 characters.",
		.len_hint = "1 to 32 characters: letters, digits, space, _ and -",
		.chars_msg = "The nickname may contain only letters, digits, spaces, _ and -.",
		.chars_hint = "1 to 32 characters: letters, digits, space, _ and -",
	},
};

struct nick {
	const char *sid;
	const char *nick;
	size_t len;
	int64_t user;		/* out: the user renamed */
};

/* 0 updated (n->user says who), 1 no such user, -1 database failure. */
static int
nick_write(struct db *db, void *arg)
{
	struct nick *n = arg;
	struct db_stmt *st;
	int rc;

	/* A pending session's user is made by its first write (apps/chat/chat.h). */
	if (chat_user_ensure(db, n->sid) < 0)
		return -1;
	if ((st = db_prepare(db, "UPDATE users SET nickname = $2 WHERE session_id = $1 "
	    "RETURNING id")) == NULL)
		return -1;
	db_bind_text(st, 1, n->sid, strlen(n->sid));
	db_bind_text(st, 2, n->nick, n->len);
	if ((rc = db_step(st)) == DB_DONE)
		return 1;
	if (rc != DB_ROW)
		return -1;
	n->user = db_column_int(st, 0);
	/* One row at most (session_id is unique): run the statement to its end. */
	return db_step(st) == DB_DONE ? 0 : -1;
}

/* The write; handle() adapts its answer to a form post. */
static int
nick_handle(struct req *rq, struct resp *rs)
{
	static const char ok[] = "{\"_nicknameSetError\":\"\"}";
	struct chat_value v[NICK__MAX];
	char sid[CHAT_SID_MAX];
	struct nick n;
	enum db_err e;
	int rc;

	if (chat_write_input(rq, rs, nick_fields, NICK__MAX, sid, v) < 0)
		return 0;
	n.sid = sid;
	n.nick = v[NICK_NICK].s;
	n.len = v[NICK_NICK].len;
	n.user = 0;
	if ((rc = db_write(rq->db, nick_write, &n, DB_WRITE_TXN, &e)) < 0)
		return serve_db_error_class(rs, e);
	/* Committed, not yet answered: the cached lists this user wrote in are stale. */
	if (rc == 0)
		chat_version_bump_user(n.user);
	if (rc == 1)
		return resp_error(rs, 409, "no_user", "the session's user does not exist",
		    NULL, "reload the chat page");
	return resp_set(rs, 200, "application/json", ok, sizeof(ok) - 1);
}

static int
handle(struct req *rq, struct resp *rs)
{
	return chat_reply(rq, rs, nick_handle(rq, rs));
}

static const struct endpoint endpoint = {
	.name = "chat_nickname_set",
	.handle = handle,
	.methods = REQ_POST,
	.db = &serve_db,
};

int
main(int argc, char **argv)
{
	return chat_main(argc, argv, &endpoint);
}
