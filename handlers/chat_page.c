/*
 * chat_page: GET / (and HEAD): the Starcord chat page, server-rendered.
 *
 * The current user is the session cookie's, or a random seeded user in bench mode
 * (bench_sessions=N, see apps/chat/chat.h).  A first visit gets a new pending session:
 * a signed cookie and nothing written; until its first write (which inserts its user),
 * a session without a user row sees the guest nickname, the 'starcord' channel and its
 * messages.  So an anonymous GET never writes (a full disk still serves the page).  In one read transaction three queries run:
 * the user's channels with the current one flagged, the user's nickname, and the last
 * 500 messages of the current channel with their authors (read newest first through the
 * (channel_id, created_ts) index, shown oldest first; with chat_page_order=oldest the
 * channel's first 500, as the Starcord benchmark's page query).  The page is rendered from the
 * template file SLUICE_TEMPLATE (default handlers/chat_page.html of the source tree the
 * binary was built in, loaded at start-up) in
 * which every value is HTML-escaped by tmpl.h; values are only ever placed in text and
 * quoted attributes, never inside script expressions.  The page's script comes from
 * /chat/script.js (handlers/chat_script.js, served by bin/chat_script), never from another
 * host, and the page works without it: its forms post to the write endpoints, which
 * answer 303 back to /, and its message list, scrolled in column-reverse, opens at the
 * newest message.  The body is compressed with Brotli
 * or gzip by Accept-Encoding (common/encode.h), and is never cached by HTTP caches (it is
 * per user).
 *
 * chat_page_cache=1 (SLUICE_CHAT_PAGE_CACHE; off by default and in the benchmark's
 * faithful run): the message list of the current channel, the part of the page that
 * does not depend on the user, is served from the worker's cache (apps/chat/pagecache.h)
 * while the channel's and its authors' counters on the version board
 * (apps/chat/version.h), which every write bumps after its commit, say it is current
 * (a message bumps its channel's, a nickname change its user's, which the lists that
 * user wrote in are labelled with);
 * the user's nickname and channels are read as always.  The page is then gzip (spliced
 * from the cached list's deflate blocks and the compressed head and tail) when the
 * client accepts gzip, else identity: the same bytes as without the cache.  A list is
 * read by the current channel's id and cached only when the board did not move between
 * before the read transaction and after the counters were read.  A stale list of the
 * channel is brought up to date rather than read again: the list's ids and times come
 * from the channel's index, the messages the cached list holds are taken from it (a
 * message never changes; its author's nickname is read again when that author's counter
 * moved), and only the others are read, by id (up to 64; more, and the list is read
 * whole).
 *
 * No parameters.  Statuses: 200 text/html; 405 other methods; 503 database busy or down;
 * 500 otherwise.  Tables: reads channels, users, channel_memberships, messages; writes
 * nothing.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "arena.h"
#include "chat/chat.h"
#include "chat/pagecache.h"
#include "chat/version.h"
#include "settings.h"
#include "db.h"
#include "encode.h"
#include "log.h"
#include "serve.h"
#include "tmpl.h"

#define PAGE_MESSAGES	500
#define PAGE_TRIES	3

enum page_slot {
	S_NICKNAME, S_CURRENT, S_CH_NAME, S_CH_CLASS, S_M_ID, S_M_NICK, S_M_INITIAL,
	S_M_CONTENT, S_M_DATETIME, S_M_TIME, S__MAX
};
static const char *const page_slots[] = { "nickname", "current_channel", "ch_name",
    "ch_class", "m_id", "m_nick", "m_initial", "m_content", "m_datetime", "m_time", NULL };
enum page_block { B_CHANNELS, B_MESSAGES };
static const char *const page_blocks[] = { "channels", "messages", NULL };

static const char *const q_channels =
    "SELECT c.name, CASE WHEN c.id = u.current_channel_id THEN 1 ELSE 0 END "
    "FROM channels c JOIN users u ON u.session_id = $1 "
    "JOIN channel_memberships cm ON cm.user_id = u.id "
    "WHERE c.id = cm.channel_id ORDER BY c.id";
static const char *const q_nickname = "SELECT nickname FROM users WHERE session_id = $1";
/*
 * The message lists differ only in which channel (the session's current one, the guest's,
 * or one by its id, with the author's id for the cache) and in their order (newest 500,
 * shown oldest first; with chat_page_order=oldest the channel's first 500, as the Starcord
 * benchmark's page).  A pending session (no user row yet) sees the channel its user will
 * start in.
 */
#define PAGE_GUEST_CHANNEL	"starcord"
#define PAGE_Q_MSGS		"SELECT m.id, u.nickname, m.content, m.created_ts"
#define PAGE_Q_MSGS_FROM \
    " FROM messages m JOIN users u ON u.id = m.user_id WHERE m.channel_id = "
#define PAGE_Q_CURRENT		"(SELECT current_channel_id FROM users WHERE session_id = $1)"
#define PAGE_Q_GUEST		"(SELECT id FROM channels WHERE name = '" PAGE_GUEST_CHANNEL "')"
#define PAGE_Q_NEWEST		" ORDER BY m.created_ts DESC, m.id DESC LIMIT 500"
#define PAGE_Q_OLDEST		" ORDER BY m.created_ts, m.id LIMIT 500"
static const char *const q_messages =
    PAGE_Q_MSGS PAGE_Q_MSGS_FROM PAGE_Q_CURRENT PAGE_Q_NEWEST;
static const char *const q_messages_guest =
    PAGE_Q_MSGS PAGE_Q_MSGS_FROM PAGE_Q_GUEST PAGE_Q_NEWEST;
static const char *const q_messages_oldest =
    PAGE_Q_MSGS PAGE_Q_MSGS_FROM PAGE_Q_CURRENT PAGE_Q_OLDEST;
static const char *const q_messages_guest_oldest =
    PAGE_Q_MSGS PAGE_Q_MSGS_FROM PAGE_Q_GUEST PAGE_Q_OLDEST;
static int page_oldest;		/* SLUICE_CHAT_PAGE_ORDER=oldest, read at start-up */
/* With the cache: the current channel's id, and its messages by that id. */
static const char *const q_nickname_channel =
    "SELECT nickname, current_channel_id FROM users WHERE session_id = $1";
static const char *const q_guest_channel =
    "SELECT id FROM channels WHERE name = '" PAGE_GUEST_CHANNEL "'";
static const char *const q_messages_channel =
    PAGE_Q_MSGS ", m.user_id" PAGE_Q_MSGS_FROM "$1" PAGE_Q_NEWEST;
static const char *const q_messages_channel_oldest =
    PAGE_Q_MSGS ", m.user_id" PAGE_Q_MSGS_FROM "$1" PAGE_Q_OLDEST;
/*
 * Bringing a cached list up to date: the list's ids and times alone (read from the
 * channel's index; a message is known by both, as SQLite may give a deleted row's id to
 * the next one),
 * then in full only the messages the cached list lacks, and the nicknames of the authors
 * whose counters moved.
 */
#define PAGE_Q_IDS	"SELECT m.id, m.created_ts FROM messages m WHERE m.channel_id = $1"
static const char *const q_ids = PAGE_Q_IDS PAGE_Q_NEWEST;
static const char *const q_ids_oldest = PAGE_Q_IDS PAGE_Q_OLDEST;
static const char *const q_message_one =
    PAGE_Q_MSGS ", m.user_id FROM messages m JOIN users u ON u.id = m.user_id WHERE m.id = $1";
static const char *const q_user_nickname = "SELECT nickname FROM users WHERE id = $1";
/* More new messages than this: the list is read whole. */
#define PAGE_REFRESH_MAX	64

static struct tmpl *page_tmpl;
static long long page_cache_on;

struct page_channel {
	struct tmpl_val name;
	int current;
};

struct page {
	struct tmpl_val nickname;
	struct page_channel *channels;
	size_t nchannels;
	struct chat_row msgs[PAGE_MESSAGES];	/* newest first; oldest first with
						 * page_oldest */
	size_t nmsgs;
	char datetime[32], time[32], initial[8];
	/* The cache (chat_page_cache=1). */
	int cache;		/* this page uses it */
	int64_t channel;	/* the current channel's id; -1: unknown (no caching) */
	uint64_t ver;		/* the board's counter for it, read in the transaction */
	uint32_t slots[PAGE_MESSAGES];	/* the list's authors' user slots, one a message */
	struct chat_author authors[PAGE_MESSAGES];	/* distinct, with their counters */
	size_t nauthors;
	int storable;		/* the counters held when the snapshot was taken */
	struct chat_frag *frag;	/* a hit: the list, held until the response is made */
	struct chat_frag *base;	/* a list brought up to date: msgs point into it, held
				 * until the response is made */
	struct buf *out;	/* the body being rendered */
	size_t list_at, list_end;	/* where the list is (or goes) in out */
	size_t cuts[PAGE_MESSAGES];	/* where the list's chunks start, from list_at */
	size_t ncuts;
};

/* Reads the board for the current channel (cache mode) and looks the list up: 1 on a
 * hit (pg->frag held), 0 on a miss. */
static int
page_cache_lookup(struct page *pg)
{
	pg->ver = chat_version_channel(pg->channel);
	pg->frag = chat_cache_get(pg->channel, pg->ver);
	return pg->frag != NULL;
}

static int
page_slot_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * After a list was read (cache mode, a miss): its distinct authors' counters, and
 * whether the list may be stored under them and pg->ver.  seq0 is the board's sequence
 * read before the transaction's snapshot: if it still holds after every counter was
 * read, they all held at the snapshot too.  (chat_version_quiet(), which would store a
 * list read while only other channels were written, let a stale list into the cache in
 * a sequential run of test_chat_pg's two-channel case, cause not found yet: the whole
 * board's sequence, the rule the cache was proven with, stays.)
 */
static void
page_cache_label(struct page *pg, uint64_t seq0)
{
	size_t i;

	qsort(pg->slots, pg->nmsgs, sizeof(pg->slots[0]), page_slot_cmp);
	pg->nauthors = 0;
	for (i = 0; i < pg->nmsgs; i++)
		if (i == 0 || pg->slots[i] != pg->slots[i - 1]) {
			pg->authors[pg->nauthors].slot = pg->slots[i];
			pg->authors[pg->nauthors++].ver = chat_version_user(pg->slots[i]);
		}
	pg->storable = chat_version_seq() == seq0;
}

/* Copies the text column col into the arena as a tmpl_val; -1 past the arena's cap. */
static int
page_col(struct req *rq, struct db_stmt *st, int col, struct tmpl_val *v)
{
	size_t len = 0;
	const char *s = db_column_text(st, col, &len);

	if (s == NULL) {
		v->s = "";
		v->len = 0;
		return 0;
	}
	if ((v->s = arena_strndup(rq->arena, s, len)) == NULL)
		return -1;
	v->len = len;
	return 0;
}

/*
 * A pending session's page (apps/chat/chat.h): the guest nickname of sid, the 'starcord'
 * channel alone and, in cache mode, that channel's id.  0, -1 on a database failure, -2
 * when out of request memory.
 */
static int
page_load_guest(struct req *rq, const char *sid, struct page *pg)
{
	struct db_stmt *st;
	char nick[CHAT_NICK_GUEST];
	int rc;

	chat_guest_nickname(sid, nick);
	if ((pg->nickname.s = arena_strndup(rq->arena, nick, strlen(nick))) == NULL ||
	    (pg->channels = arena_alloc(rq->arena, sizeof(*pg->channels))) == NULL)
		return -2;
	pg->nickname.len = strlen(nick);
	pg->channels[0].name.s = PAGE_GUEST_CHANNEL;
	pg->channels[0].name.len = sizeof(PAGE_GUEST_CHANNEL) - 1;
	pg->channels[0].current = 1;
	pg->nchannels = 1;
	if (!pg->cache)
		return 0;
	if ((st = db_prepare(rq->db, q_guest_channel)) == NULL)
		return -1;
	if ((rc = db_step(st)) == DB_ERROR)
		return -1;
	if (rc == DB_ROW) {
		pg->channel = db_column_int(st, 0);
		db_reset(st);
	}
	return 0;
}

/* The user's channels, the current one marked.  0, -1 on a database failure, -2 when out
 * of request memory. */
static int
page_load_channels(struct req *rq, const char *sid, struct page *pg)
{
	struct db_stmt *st;
	struct page_channel *nc;
	size_t cap = 0;
	int rc;

	if ((st = db_prepare(rq->db, q_channels)) == NULL)
		return -1;
	db_bind_text(st, 1, sid, strlen(sid));
	while ((rc = db_step(st)) == DB_ROW) {
		if (pg->nchannels == cap) {
			cap = cap ? cap * 2 : 16;
			if ((nc = arena_alloc(rq->arena, cap * sizeof(*nc))) == NULL)
				return -2;
			if (pg->nchannels > 0)
				memcpy(nc, pg->channels, pg->nchannels * sizeof(*nc));
			pg->channels = nc;
		}
		if (page_col(rq, st, 0, &pg->channels[pg->nchannels].name) < 0)
			return -2;
		pg->channels[pg->nchannels++].current = db_column_int(st, 1) != 0;
	}
	return rc == DB_ERROR ? -1 : 0;
}

/* One message from st's row into m (with its author's id in cache mode); -1 past the
 * arena's cap. */
static int
page_msg(struct req *rq, struct db_stmt *st, int cache, struct chat_row *m)
{
	if (page_col(rq, st, 0, &m->id) < 0 || page_col(rq, st, 1, &m->nick) < 0 ||
	    page_col(rq, st, 2, &m->content) < 0)
		return -1;
	m->num = db_column_int(st, 0);
	m->ts = db_column_double(st, 3);
	m->user = cache ? db_column_int(st, 4) : 0;
	return 0;
}

/* A cached row's number and its index in the cached list, sorted by number. */
struct page_num {
	int64_t num;
	uint32_t i;
};

static int
page_num_cmp(const void *a, const void *b)
{
	int64_t x = ((const struct page_num *)a)->num, y = ((const struct page_num *)b)->num;

	return x < y ? -1 : x > y;
}

/* The index in the cached list of the row numbered num (by[0..n) sorted), or -1. */
static long
page_find_row(const struct page_num *by, size_t n, int64_t num)
{
	size_t lo = 0, hi = n, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (by[mid].num == num)
			return (long)by[mid].i;
		if (by[mid].num < num)
			lo = mid + 1;
		else
			hi = mid;
	}
	return -1;
}

/* The counter base's label holds for user slot, or UINT64_MAX when it has none. */
static uint64_t
page_base_ver(const struct chat_frag *base, uint32_t slot)
{
	size_t lo = 0, hi = base->nauthors, mid;

	while (lo < hi) {
		mid = lo + (hi - lo) / 2;
		if (base->authors[mid].slot == slot)
			return base->authors[mid].ver;
		if (base->authors[mid].slot < slot)
			lo = mid + 1;
		else
			hi = mid;
	}
	return UINT64_MAX;
}

/*
 * A kept row m of the cached list: its nickname again from the database when its
 * author's counter moved since the list was labelled.  0, -1 on a database failure, -2
 * out of request memory, -3 when the author is gone (the list is then read whole).
 */
static int
page_refresh_nick(struct req *rq, const struct chat_frag *base, struct chat_row *m)
{
	struct db_stmt *st;
	uint32_t slot = chat_version_user_slot(m->user);
	int rc;

	if (chat_version_user(slot) == page_base_ver(base, slot))
		return 0;
	if ((st = db_prepare(rq->db, q_user_nickname)) == NULL)
		return -1;
	db_bind_int(st, 1, m->user);
	if ((rc = db_step(st)) != DB_ROW)
		return rc == DB_ERROR ? -1 : -3;
	rc = page_col(rq, st, 0, &m->nick) < 0 ? -2 : 0;
	db_reset(st);
	return rc;
}

/* A message the cached list lacks, read whole into m.  0, -1, -2 as page_refresh_nick(),
 * -3 when it is gone. */
static int
page_refresh_new(struct req *rq, int64_t num, struct chat_row *m)
{
	struct db_stmt *st;
	int rc;

	if ((st = db_prepare(rq->db, q_message_one)) == NULL)
		return -1;
	db_bind_int(st, 1, num);
	if ((rc = db_step(st)) != DB_ROW)
		return rc == DB_ERROR ? -1 : -3;
	rc = page_msg(rq, st, 1, m) < 0 ? -2 : 0;
	db_reset(st);
	return rc;
}

/*
 * The list of pg->channel as the cached (but stale) list base would be after the writes
 * its label lacks: the list's ids read in this transaction, each message the cached list
 * holds taken from it (messages do not change; a nickname is read again when its author's
 * counter moved), the others read in full.  The page is then rendered from pg->msgs as
 * if read whole.  1 when done, 0 when the list is better read whole (base lacks rows,
 * too many new messages, a row gone between reads), -1 on a database failure, -2 when out
 * of request memory.
 */
static int
page_refresh(struct req *rq, struct page *pg, const struct chat_frag *base)
{
	int64_t nums[PAGE_MESSAGES];
	double ts[PAGE_MESSAGES];
	struct page_num by[PAGE_MESSAGES];
	struct db_stmt *st;
	size_t n = 0, i, fresh = 0;
	long at;
	int rc;

	if (base->nrows == 0 || base->nrows > PAGE_MESSAGES)
		return 0;
	if ((st = db_prepare(rq->db, page_oldest ? q_ids_oldest : q_ids)) == NULL)
		return -1;
	db_bind_int(st, 1, pg->channel);
	while (n < PAGE_MESSAGES && (rc = db_step(st)) == DB_ROW) {
		nums[n] = db_column_int(st, 0);
		ts[n++] = db_column_double(st, 1);
	}
	if (n < PAGE_MESSAGES && rc == DB_ERROR)
		return -1;
	db_reset(st);
	for (i = 0; i < base->nrows; i++) {
		by[i].num = base->rows[i].num;
		by[i].i = (uint32_t)i;
	}
	qsort(by, base->nrows, sizeof(by[0]), page_num_cmp);
	for (i = 0; i < n; i++) {
		struct chat_row *m = &pg->msgs[i];

		if ((at = page_find_row(by, base->nrows, nums[i])) >= 0 &&
		    base->rows[at].ts == ts[i]) {
			*m = base->rows[at];
			rc = page_refresh_nick(rq, base, m);
		} else
			rc = ++fresh > PAGE_REFRESH_MAX ? -3 : page_refresh_new(rq, nums[i], m);
		if (rc == -3)
			return 0;
		if (rc < 0)
			return rc;
		pg->slots[i] = chat_version_user_slot(m->user);
	}
	pg->nmsgs = n;
	return 1;
}

/*
 * The current channel's messages: in cache mode with a known channel the cached list, or
 * the list by the channel's id (then labelled for the cache, seq0 as page_cache_label()
 * wants it); otherwise by the session (a guest's: the guest channel's).  0, -1 on a
 * database failure, -2 when out of request memory.
 */
static int
page_load_messages(struct req *rq, const char *sid, int guest, struct page *pg,
    uint64_t seq0)
{
	struct db *db = rq->db;
	struct db_stmt *st;
	int rc;

	if (pg->channel >= 0) {
		if (page_cache_lookup(pg))
			return 0;
		if ((pg->base = chat_cache_peek(pg->channel)) != NULL) {
			if ((rc = page_refresh(rq, pg, pg->base)) < 0)
				return rc;
			if (rc == 1) {
				page_cache_label(pg, seq0);
				return 0;
			}
			chat_cache_release(pg->base);
			pg->base = NULL;
			pg->nmsgs = 0;
		}
		if ((st = db_prepare(db, page_oldest ? q_messages_channel_oldest :
		    q_messages_channel)) == NULL)
			return -1;
		db_bind_int(st, 1, pg->channel);
	} else {
		if ((st = db_prepare(db, page_oldest ? (guest ? q_messages_guest_oldest :
		    q_messages_oldest) : (guest ? q_messages_guest : q_messages))) == NULL)
			return -1;
		if (!guest)
			db_bind_text(st, 1, sid, strlen(sid));
	}
	while ((rc = db_step(st)) == DB_ROW && pg->nmsgs < PAGE_MESSAGES) {
		if (page_msg(rq, st, pg->channel >= 0, &pg->msgs[pg->nmsgs]) < 0)
			return -2;
		pg->nmsgs++;
	}
	if (rc == DB_ERROR)
		return -1;
	if (pg->channel >= 0)
		page_cache_label(pg, seq0);
	if (rc == DB_ROW)
		db_reset(st);
	return 0;
}

/*
 * Runs the three queries in one read transaction into pg.  A session whose user does not
 * exist yet is a pending one (apps/chat/chat.h) when guest_ok is set: its page has the
 * guest nickname, the 'starcord' channel and that channel's messages.  Returns 1 when
 * done, 0 when the session's user does not exist and guest_ok is 0, -1 on a database
 * failure (left on rq->db), -2 when out of request memory.
 */
static int
page_load(struct req *rq, const char *sid, int guest_ok, struct page *pg)
{
	struct db *db = rq->db;
	struct db_stmt *st;
	int rc, ret = -1, guest = 0;
	uint64_t seq0 = 0;

	pg->nchannels = pg->nmsgs = 0;
	pg->channel = -1;
	chat_cache_release(pg->frag);
	pg->frag = NULL;
	chat_cache_release(pg->base);
	pg->base = NULL;
	/* Before the snapshot: see page_cache_lookup(). */
	if (pg->cache)
		seq0 = chat_version_seq();
	if (db_begin(db, DB_TXN_READ) < 0)
		return -1;
	if ((st = db_prepare(db, pg->cache ? q_nickname_channel : q_nickname)) == NULL)
		goto out;
	db_bind_text(st, 1, sid, strlen(sid));
	if ((rc = db_step(st)) == DB_ERROR)
		goto out;
	if (rc == DB_DONE && !guest_ok) {
		ret = 0;
		goto out;
	}
	if (rc == DB_DONE) {
		guest = 1;
		if ((ret = page_load_guest(rq, sid, pg)) < 0)
			goto out;
	} else {
		if (page_col(rq, st, 0, &pg->nickname) < 0) {
			ret = -2;
			goto out;
		}
		if (pg->cache && !db_column_isnull(st, 1))
			pg->channel = db_column_int(st, 1);
		db_reset(st);
		if ((ret = page_load_channels(rq, sid, pg)) < 0)
			goto out;
	}
	if ((ret = page_load_messages(rq, sid, guest, pg, seq0)) < 0)
		goto out;
	if (db_commit(db) < 0) {
		ret = -1;
		goto out;
	}
	return 1;
out:
	chat_cache_release(pg->frag);
	pg->frag = NULL;
	chat_cache_release(pg->base);
	pg->base = NULL;
	db_rollback(db);
	return ret;
}

/* Two digits of v (0..99) at o. */
static void
page_2digits(char *o, int v)
{
	o[0] = (char)('0' + v / 10 % 10);
	o[1] = (char)('0' + v % 10);
}

/*
 * A message's time as "YYYY-MM-DDTHH:MM:SSZ" (full) or "YYYY-MM-DD HH:MM", written by hand:
 * strftime() is most of the page's time formatting cost at 500 messages.  Years outside
 * 0..9999 print as 0000 (the seeded data spans a few months).  Returns the length; out
 * must hold 21 bytes.
 */
static size_t
page_time(char *out, const struct tm *tm, int full)
{
	int y = tm->tm_year + 1900;

	if (y < 0 || y > 9999)
		y = 0;
	page_2digits(out, y / 100);
	page_2digits(out + 2, y % 100);
	out[4] = '-';
	page_2digits(out + 5, tm->tm_mon + 1);
	out[7] = '-';
	page_2digits(out + 8, tm->tm_mday);
	out[10] = full ? 'T' : ' ';
	page_2digits(out + 11, tm->tm_hour);
	out[13] = ':';
	page_2digits(out + 14, tm->tm_min);
	if (!full) {
		out[16] = '\0';
		return 16;
	}
	out[16] = ':';
	page_2digits(out + 17, tm->tm_sec);
	out[19] = 'Z';
	out[20] = '\0';
	return 20;
}

/*
 * Whether the cached list's text is cut into a new chunk before message num
 * (pagecache.h's chat_chunk): about one message in 32, chosen by the message alone, so
 * that a list made from another after a few writes cuts where that one did and shares
 * its chunks but those with a message added, gone or renamed.
 */
static int
page_cut_before(int64_t num)
{
	return ((uint64_t)num * UINT64_C(0x9E3779B97F4A7C15)) >> 59 == 0;
}

/* Fills the block slots of row i: channels in order, messages oldest first. */
static int
page_row(void *ctx, int block, size_t i, struct tmpl_val *vals)
{
	struct page *pg = ctx;
	const struct chat_row *m;
	struct tm tm;
	time_t t;
	int n;

	if (block == B_CHANNELS) {
		if (i >= pg->nchannels)
			return 0;
		vals[S_CH_NAME] = pg->channels[i].name;
		vals[S_CH_CLASS].s = pg->channels[i].current ? " current" : "";
		vals[S_CH_CLASS].len = strlen(vals[S_CH_CLASS].s);
		return 1;
	}
	/* Where the list starts and ends in the body; a cached list goes in later. */
	if (i == 0) {
		pg->list_at = pg->out->len;
		pg->ncuts = 0;
	}
	if (i >= pg->nmsgs || pg->frag != NULL) {
		pg->list_end = pg->out->len;
		return 0;
	}
	m = &pg->msgs[page_oldest ? i : pg->nmsgs - 1 - i];
	if (i == 0 || page_cut_before(m->num))
		pg->cuts[pg->ncuts++] = pg->out->len - pg->list_at;
	vals[S_M_ID] = m->id;
	vals[S_M_NICK] = m->nick;
	vals[S_M_CONTENT] = m->content;
	/* The avatar shows the nickname's first character (whole, if it is multi-byte). */
	n = 1;
	while (n < (int)m->nick.len && n < 4 && ((unsigned char)m->nick.s[n] & 0xC0) == 0x80)
		n++;
	memcpy(pg->initial, m->nick.s, m->nick.len > 0 ? (size_t)n : 0);
	vals[S_M_INITIAL].s = pg->initial;
	vals[S_M_INITIAL].len = m->nick.len > 0 ? (size_t)n : 0;
	t = (time_t)m->ts;
	if (gmtime_r(&t, &tm) == NULL)
		memset(&tm, 0, sizeof(tm));
	vals[S_M_DATETIME].s = pg->datetime;
	vals[S_M_DATETIME].len = page_time(pg->datetime, &tm, 1);
	vals[S_M_TIME].s = pg->time;
	vals[S_M_TIME].len = page_time(pg->time, &tm, 0);
	return 1;
}

static int page_respond(struct req *, struct resp *, struct page *);

static int
handle(struct req *rq, struct resp *rs)
{
	char sid[CHAT_SID_MAX];
	struct page *pg;
	int tries, rc = -1;

	if ((pg = arena_alloc(rq->arena, sizeof(*pg))) == NULL)
		return resp_error(rs, 413, "too_large", "out of request memory", NULL, NULL);
	memset(pg, 0, sizeof(*pg));
	pg->cache = page_cache_on != 0;
	pg->out = &rs->body;
	/* A first visit gets a pending session: a signed cookie, no write (chat.h). */
	if (!chat_session(rq, sid) && chat_session_new(rq, rs, sid) < 0)
		return 0;
	for (tries = 0; tries < PAGE_TRIES; tries++) {
		rc = page_load(rq, sid, !chat_bench_mode(), pg);
		if (rc == 1)
			break;
		if (rc == -2)
			return resp_error(rs, 413, "too_large", "out of request memory", NULL,
			    NULL);
		if (rc == 0) {
			/* Bench mode names a user that was not seeded: a setup error. */
			log_warn("bench session %s does not exist", sid);
			return resp_error(rs, 500, "internal",
			    "bench_sessions exceeds the seeded users", sid, NULL);
		}
		/* A read can fail with a serialization failure at SERIALIZABLE: retry it. */
		if (db_errcode(rq->db) != DB_EBUSY || tries + 1 == PAGE_TRIES)
			return serve_db_error(rs, rq->db);
	}
	if (rc != 1)
		return resp_error(rs, 503, "busy", "the database is busy; retry the request",
		    NULL, NULL);
	rc = page_respond(rq, rs, pg);
	chat_cache_release(pg->frag);
	pg->frag = NULL;
	chat_cache_release(pg->base);
	pg->base = NULL;
	return rc;
}

/*
 * With a list at hand (pg->frag, a hit, or just stored) the page goes out spliced:
 * gzip when the client takes it, else the list copied in.  Returns 0, or -1 when the
 * page could not be made that way (the caller then sends it as usual).
 */
static int
page_send_cached(struct req *rq, struct resp *rs, struct page *pg, size_t skip)
{
	int gz = encode_accepts(req_header(rq, "Accept-Encoding"), ENCODE_GZIP);

	if (resp_header(rs, "Vary", "Accept-Encoding") < 0)
		return -1;
	if (gz) {
		if (chat_cache_gzip(&rs->body, pg->list_at, skip, pg->frag, rq->arena) < 0)
			return -1;
		return resp_header(rs, "Content-Encoding", "gzip");
	}
	return skip > 0 ? 0 : chat_cache_splice(&rs->body, pg->list_at, pg->frag, rq->arena);
}

/* Stores the list just rendered in rs, in chunks, from pg->base's where it has them;
 * the entry held, or NULL (chat_cache_put_list()). */
static struct chat_frag *
page_cache_store(struct resp *rs, const struct page *pg)
{
	struct chat_list l;

	memset(&l, 0, sizeof(l));
	l.channel = pg->channel;
	l.ver = pg->ver;
	l.authors = pg->authors;
	l.nauthors = pg->nauthors;
	l.rows = pg->msgs;
	l.nrows = pg->nmsgs;
	l.text = rs->body.data + pg->list_at;
	l.len = pg->list_end - pg->list_at;
	l.cuts = pg->cuts;
	l.ncuts = pg->ncuts;
	l.base = pg->base;
	return chat_cache_put_list(&l);
}

/* Renders the loaded page into rs, from the cache or into it. */
static int
page_respond(struct req *rq, struct resp *rs, struct page *pg)
{
	struct tmpl_val vals[S__MAX];
	size_t i;

	memset(vals, 0, sizeof(vals));
	vals[S_NICKNAME] = pg->nickname;
	vals[S_CURRENT].s = "";
	for (i = 0; i < pg->nchannels; i++)
		if (pg->channels[i].current)
			vals[S_CURRENT] = pg->channels[i].name;
	rs->status = 200;
	rs->content_type = "text/html; charset=utf-8";
	if (tmpl_render(page_tmpl, &rs->body, vals, page_row, pg) < 0)
		return resp_error(rs, 500, "internal", "the page does not fit the response cap",
		    NULL, NULL);
	if (resp_header(rs, "Cache-Control", "no-store") < 0)
		return -1;
	if (pg->frag != NULL) {
		/* A hit: the page was rendered without its list. */
		if (page_send_cached(rq, rs, pg, 0) < 0)
			return resp_error(rs, 500, "internal", "the cached page could not be made",
			    NULL, NULL);
		return 0;
	}
	if (pg->channel >= 0 && pg->storable && pg->list_end >= pg->list_at &&
	    (pg->frag = page_cache_store(rs, pg)) != NULL &&
	    page_send_cached(rq, rs, pg, pg->list_end - pg->list_at) == 0)
		return 0;
	if (encode_response(rq, rs) < 0)
		log_warn("compression failed; sending the page uncompressed");
	return 0;
}

static const struct endpoint endpoint = {
	.name = "chat_page",
	.handle = handle,
	.methods = REQ_GET,
	.db = &serve_db,
};

/*
 * Loads the template: SLUICE_TEMPLATE, or else handlers/chat_page.html found from the
 * binary's own place in the tree (bin/ or build/san/bin/), so that a worker started from
 * any directory finds it, or else relative to the current directory.
 */
static struct tmpl *
page_load_template(char *err, size_t errlen)
{
	static const char *const rel[] = { "/../handlers/chat_page.html",
	    "/../../../handlers/chat_page.html" };
	const char *path = settings_get(SETTING_TEMPLATE);
	char exe[4096], cand[4200], *slash;
	struct tmpl *t;
	ssize_t n;
	size_t i;
	int m;

	if (path != NULL)
		return tmpl_load(path, page_slots, page_blocks, err, errlen);
	n = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (n > 0) {
		exe[n] = '\0';
		if ((slash = strrchr(exe, '/')) != NULL)
			*slash = '\0';
		for (i = 0; i < sizeof(rel) / sizeof(rel[0]); i++) {
			m = snprintf(cand, sizeof(cand), "%s%s", exe, rel[i]);
			if (m < 0 || (size_t)m >= sizeof(cand) || access(cand, R_OK) != 0)
				continue;
			if ((t = tmpl_load(cand, page_slots, page_blocks, err, errlen)) != NULL)
				return t;
			return NULL;	/* found but broken: say so rather than look further */
		}
	}
	return tmpl_load("handlers/chat_page.html", page_slots, page_blocks, err, errlen);
}

int
main(int argc, char **argv)
{
	char err[256];
	long long order = 0, lists = 0;
	int rc;

	if (chat_init() < 0)
		return 1;
	if (settings_int(SETTING_CHAT_PAGE_CACHE, &page_cache_on) < 0)
		return 1;	/* chat_init() said why */
	if (settings_int(SETTING_CHAT_PAGE_CACHE_LISTS, &lists) < 0)
		return 1;	/* settings_int() said why */
	if (page_cache_on && chat_cache_init((size_t)lists) < 0) {
		fprintf(stderr, "chat_page: no memory for the page cache's %lld slots\n", lists);
		chat_fini();
		return 1;
	}
	if (settings_int(SETTING_CHAT_PAGE_ORDER, &order) < 0)
		return 1;	/* settings_int() said why */
	page_oldest = order == 1;
	if ((page_tmpl = page_load_template(err, sizeof(err))) == NULL) {
		fprintf(stderr, "chat_page: template: %s\n", err);
		chat_fini();
		return 1;
	}
	rc = serve_main(argc, argv, &endpoint);
	tmpl_free(page_tmpl);
	chat_fini();
	return rc;
}
