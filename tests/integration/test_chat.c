/*
 * test_chat: the Starcord chat on SQLite through the whole stack (nginx tuned, sluiced,
 * bin/chat_*), on a database made by the real seeder: the page (status, headers, size,
 * structure, sessions), compression negotiation (Brotli decoded with libbrotlidec, gzip
 * with zlib, identity), every write's status and effect, HTML escaping of hostile values,
 * bad input (4xx, nothing written), bench mode, concurrent writers (every 204 is a row,
 * no 5xx, no "database is locked", the writer processes locking no file but the writers'
 * queue "chat.db-wlock", and no other lock file in the data directory), and kill -9
 * of the writers right after their 204s (no acknowledged message is lost); the page
 * cache (chat_page_cache=1): the same bytes as without it, identity and gzip, and every
 * write shown at once, also when lists are brought up to date under interleaved writes,
 * and under writes from several processes racing the reads (test_page_cache_race);
 * and a memory-mapped page worker whose map outlives the writes of other processes (its
 * page faults per page with writes within twice those without).
 */
#include <dirent.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <brotli/decode.h>
#include <cjson/cJSON.h>
#include <zlib.h>

#include "chatfix.h"
#include "chatrace.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

#define FORM	"application/x-www-form-urlencoded"

static struct stack st;
static char dir[64], dburl[128], cookie[256], sid[64];
static int up;

/* Starts the stack on a freshly seeded database; 0 or -1. */
static int
setup(void)
{
	char conf[2048 + 6 * PATH_MAX], bin[PATH_MAX];
	const char *b = getenv("SLUICE_BIN");

	snprintf(dir, sizeof(dir), "/tmp/sluice-chat-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(dburl, sizeof(dburl), "sqlite:%s/chat.db", dir);
	if (chatfix_seed(dburl, "") != 0) {
		fprintf(stderr, "seeding failed\n");
		return -1;
	}
	if (realpath(b ? b : "bin", bin) == NULL)
		return -1;
	snprintf(conf, sizeof(conf),
	    "db chat %s\n"
	    "chat_page =/ workers=2 threads=2 db=chat\n"
	    "chat_message_send =/chat/message-send workers=2 threads=8 db=chat\n"
	    "chat_channel_open =/chat/channel-open workers=1 threads=4 db=chat\n"
	    "chat_nickname_set =/chat/nickname-set workers=1 threads=4 db=chat\n"
	    "chat_messages =/chat/messages workers=1 threads=4 db=chat\n"
	    "bench_page =/bench workers=1 db=chat binary=%s/chat_page bench_sessions=64\n"
	    "bench_send =/bench-send workers=2 threads=8 db=chat "
	    "binary=%s/chat_message_send bench_sessions=64\n"
	    "cached_page =/cached workers=2 threads=2 db=chat binary=%s/chat_page "
	    "chat_page_cache=1\n"
	    "race_send =/race-send workers=1 threads=4 db=chat binary=%s/chat_message_send\n"
	    "oldest_page =/oldest workers=1 db=chat binary=%s/chat_page "
	    "chat_page_order=oldest\n"
	    "mapped_page =/mapped workers=1 threads=1 db=chat binary=%s/chat_page "
	    "sqlite_mmap=268435456\n",
	    dburl, bin, bin, bin, bin, bin, bin);
	if (stack_start(&st, conf, "tuned", 2, NULL) < 0)
		return -1;
	up = 1;
	return 0;
}

static void
teardown(void)
{
	if (up)
		stack_stop(&st);
	stack_sh("rm -rf %s", dir);
}

static void
test_page_first_visit(void)
{
	struct http_resp r;
	char v[256], again[256], forged[256];
	int64_t users = chatfix_int(dburl, "SELECT count(*) FROM users", NULL);

	http_resp_init(&r);
	CHECK(chatfix_get(st.base, "/", NULL, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(http_header(&r, "Content-Type", v, sizeof(v)) == 0 &&
	    strcmp(v, "text/html; charset=utf-8") == 0);
	CHECK(http_header(&r, "Vary", v, sizeof(v)) == 0 && strcmp(v, "Accept-Encoding") == 0);
	CHECK(http_header(&r, "Cache-Control", v, sizeof(v)) == 0 &&
	    strcmp(v, "no-store") == 0);
	CHECK(http_header(&r, "Content-Encoding", v, sizeof(v)) < 0);
	CHECK(chatfix_cookie(&r, cookie, sizeof(cookie)) == 0);
	CHECK(http_header(&r, "Set-Cookie", v, sizeof(v)) == 0 && strstr(v, "HttpOnly") &&
	    strstr(v, "Path=/"));
	CHECK(chatfix_cookie_sid(cookie, sid, sizeof(sid)) == 0);
	/* A first visit writes nothing: the cookie carries the pending user. */
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users", NULL), users);
	/* A new user sits in 'starcord', the channel with the most messages: a full page. */
	CHECK(r.body.len > 15 && memcmp(r.body.data, "<!DOCTYPE html>", 15) == 0);
	CHECK(strstr(r.body.data, "</html>") != NULL);
	CHECK_INT(chatfix_count(&r, "<article class=\"message\""), 500);
	CHECK_INT(chatfix_count(&r, "class=\"channel current\""), 1);
	CHECK(strstr(r.body.data, "# starcord</h2>") != NULL);
	CHECK(strstr(r.body.data, "value=\"guest-") != NULL);
	printf("  page at 500 messages: %zu bytes\n", r.body.len);
	CHECK(r.body.len > 170000 && r.body.len < 210000);

	/* The cookie brings the same user back, and no new cookie. */
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(chatfix_cookie(&r, again, sizeof(again)) < 0);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users", NULL), users);

	/* An altered signature counts as no cookie: a new user. */
	snprintf(forged, sizeof(forged), "%s", cookie);
	forged[strlen(forged) - 1] = forged[strlen(forged) - 1] == '0' ? '1' : '0';
	CHECK(chatfix_get(st.base, "/", forged, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(chatfix_cookie(&r, again, sizeof(again)) == 0);
	CHECK(strcmp(again, cookie) != 0);
	/* A session id of a seeded user with a wrong signature cannot borrow that user. */
	CHECK(chatfix_post(st.base, "/chat/nickname-set",
	    "starcord_session=s_00000001.00000000000000000000000000000000"
	    "00000000000000000000000000000000", NULL, "{\"nicknameSet\":\"x\"}", &r) == 0);
	CHECK_INT(r.status, 401);
	http_resp_free(&r);
}

static void
test_page_compression(void)
{
	struct http_resp plain, r;
	char v[64];
	size_t outlen;
	uint8_t *out;
	z_stream z;

	http_resp_init(&plain);
	http_resp_init(&r);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &plain) == 0);
	CHECK_INT(plain.status, 200);

	CHECK(chatfix_get(st.base, "/", cookie, "br", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(http_header(&r, "Content-Encoding", v, sizeof(v)) == 0 && strcmp(v, "br") == 0);
	CHECK(http_header(&r, "Vary", v, sizeof(v)) == 0);
	printf("  brotli: %zu -> %zu bytes\n", plain.body.len, r.body.len);
	CHECK(r.body.len < plain.body.len / 4);
	outlen = plain.body.len + 1024;
	out = malloc(outlen);
	CHECK(BrotliDecoderDecompress(r.body.len, (const uint8_t *)r.body.data, &outlen, out) ==
	    BROTLI_DECODER_RESULT_SUCCESS);
	CHECK(outlen == plain.body.len && memcmp(out, plain.body.data, outlen) == 0);

	CHECK(chatfix_get(st.base, "/", cookie, "gzip, deflate", &r) == 0);
	CHECK(http_header(&r, "Content-Encoding", v, sizeof(v)) == 0 && strcmp(v, "gzip") == 0);
	printf("  gzip: %zu -> %zu bytes\n", plain.body.len, r.body.len);
	memset(&z, 0, sizeof(z));
	CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = (Bytef *)r.body.data;
	z.avail_in = (uInt)r.body.len;
	z.next_out = out;
	z.avail_out = (uInt)(plain.body.len + 1024);
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	CHECK(z.total_out == plain.body.len && memcmp(out, plain.body.data, z.total_out) == 0);
	inflateEnd(&z);

	CHECK(chatfix_get(st.base, "/", cookie, "br;q=0, gzip", &r) == 0);
	CHECK(http_header(&r, "Content-Encoding", v, sizeof(v)) == 0 && strcmp(v, "gzip") == 0);
	CHECK(chatfix_get(st.base, "/", cookie, "identity", &r) == 0);
	CHECK(http_header(&r, "Content-Encoding", v, sizeof(v)) < 0);
	CHECK_INT(r.body.len, plain.body.len);
	/* A small answer (an error) is never compressed. */
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL, "{", &r) == 0);
	CHECK(http_header(&r, "Content-Encoding", v, sizeof(v)) < 0);
	free(out);
	http_resp_free(&plain);
	http_resp_free(&r);
}

static void
test_writes(void)
{
	struct http_resp r;
	char nick[64], v[64];
	int64_t chans = chatfix_int(dburl, "SELECT count(*) FROM channels", NULL);

	http_resp_init(&r);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL,
	    "{\"messageSend\":\"hello from the test\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK_INT(r.body.len, 0);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages m JOIN users u ON "
	    "u.id = m.user_id WHERE u.session_id = $1 AND m.content = 'hello from the test' "
	    "AND m.channel_id = 1", sid), 1);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK(strstr(r.body.data, "<p class=\"message-content\">hello from the test</p>\n"
	    "</article>\n</section>") != NULL);	/* the newest, last */

	CHECK(chatfix_post(st.base, "/chat/channel-open", cookie, NULL,
	    "{\"channelOpen\":\"test_room-1\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM channels", NULL), chans + 1);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM channel_memberships cm JOIN users u "
	    "ON u.id = cm.user_id WHERE u.session_id = $1", sid), 2);
	CHECK_INT(chatfix_int(dburl, "SELECT c.name = 'test_room-1' FROM users u JOIN channels "
	    "c ON c.id = u.current_channel_id WHERE u.session_id = $1", sid), 1);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK(strstr(r.body.data, "# test_room-1</h2>") != NULL);
	CHECK_INT(chatfix_count(&r, "<article class=\"message\""), 0);
	CHECK_INT(chatfix_count(&r, "class=\"channel current\" value=\"test_room-1\""), 1);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL,
	    "{\"messageSend\":\"first in the room\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK_INT(chatfix_count(&r, "<article class=\"message\""), 1);

	/* Opening an existing channel adds nothing but the switch. */
	CHECK(chatfix_post(st.base, "/chat/channel-open", cookie, NULL,
	    "{\"channelOpen\":\"starcord\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM channels", NULL), chans + 1);
	CHECK_INT(chatfix_int(dburl, "SELECT current_channel_id FROM users WHERE "
	    "session_id = $1", sid), 1);

	CHECK(chatfix_post(st.base, "/chat/nickname-set", cookie, NULL,
	    "{\"nicknameSet\":\"Alice B_-9\"}", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(http_header(&r, "Content-Type", v, sizeof(v)) == 0 &&
	    strcmp(v, "application/json") == 0);
	CHECK_STR(r.body.data, "{\"_nicknameSetError\":\"\"}");
	CHECK(chatfix_text(dburl, "SELECT nickname FROM users WHERE session_id = $1", sid, nick,
	    sizeof(nick)) == 0);
	CHECK_STR(nick, "Alice B_-9");
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK(strstr(r.body.data, "value=\"Alice B_-9\"") != NULL);
	/* Datastar sends every signal with each action: the others are ignored. */
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL,
	    "{\"messageSend\":\"with signals\",\"channelOpen\":\"\",\"nicknameSet\":\"x\"}",
	    &r) == 0);
	CHECK_INT(r.status, 204);
	http_resp_free(&r);
}

/*
 * The page through the cache (chat_page_cache=1, on /cached) is the page without it,
 * byte for byte, first and again (a hit in each worker), identity and gzip (spliced from
 * the cached list's deflate blocks: it must inflate to the same bytes); a write to the
 * channel, or a nickname change, shows at once on the next page; and the pages do come
 * from the cache (a row deleted behind the writers' back stays on them until a write).
 */
static int
same_page(const char *who, const char *ck, int gz)
{
	return chatfix_same_page(st.base, "/cached", who, ck, gz);
}

static void
test_page_cache(void)
{
	struct http_resp r;
	char body[128], needle[128], guest[256], *text;
	size_t len;
	int i, shown = 0, gz_shown = 0;

	http_resp_init(&r);
	/* Misses, then hits in both workers, both codings. */
	for (i = 0; i < 6; i++) {
		CHECK(same_page("user", cookie, 0));
		CHECK(same_page("user, gzip", cookie, 1));
	}
	/* A pending session (guest) reads 'starcord' by name: the same through the cache. */
	CHECK(chatfix_get(st.base, "/", NULL, NULL, &r) == 0);
	CHECK(chatfix_cookie(&r, guest, sizeof(guest)) == 0);
	for (i = 0; i < 4; i++)
		CHECK(same_page("guest", guest, i % 2));
	/* A write, then the page: the message is there at once, from either worker. */
	for (i = 0; i < 10; i++) {
		snprintf(body, sizeof(body), "{\"messageSend\":\"cached page sees %d\"}", i);
		CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL, body, &r) == 0);
		CHECK_INT(r.status, 204);
		snprintf(needle, sizeof(needle), ">cached page sees %d</p>", i);
		CHECK(chatfix_get(st.base, "/cached", cookie, NULL, &r) == 0);
		shown += r.status == 200 && strstr(r.body.data, needle) != NULL;
		CHECK(chatfix_get(st.base, "/cached", cookie, "gzip", &r) == 0);
		text = chatfix_gunzip(&r, &len);
		gz_shown += text != NULL && strstr(text, needle) != NULL;
		free(text);
	}
	CHECK_INT(shown, 10);
	CHECK_INT(gz_shown, 10);
	CHECK(same_page("after writes", cookie, 0));
	CHECK(same_page("after writes, gzip", cookie, 1));
	/* A nickname shows in every message of its author: the lists are stale after it. */
	CHECK(same_page("before the nickname", cookie, 0));
	CHECK(chatfix_post(st.base, "/chat/nickname-set", cookie, NULL,
	    "{\"nicknameSet\":\"Cached Carol\"}", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(chatfix_get(st.base, "/cached", cookie, NULL, &r) == 0);
	CHECK(chatfix_count(&r, "Cached Carol") >= 11);
	CHECK(same_page("after the nickname", cookie, 0));
	CHECK(same_page("after the nickname, gzip", cookie, 1));

	/*
	 * The pages come from the cache: a row deleted behind the writers' back (no counter
	 * moves) still shows on a cached page, where the page without the cache has lost it;
	 * the next write to the channel makes every worker read the list again.
	 */
	for (i = 0; i < 6; i++)
		CHECK(same_page("warm", cookie, 0));
	CHECK(chatfix_exec(dburl, "DELETE FROM messages WHERE content = 'cached page sees 9'")
	    == 0);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK(strstr(r.body.data, ">cached page sees 9</p>") == NULL);
	for (i = 0, shown = 0; i < 6; i++) {
		CHECK(chatfix_get(st.base, "/cached", cookie, NULL, &r) == 0);
		shown += strstr(r.body.data, ">cached page sees 9</p>") != NULL;
	}
	printf("  %d of 6 pages from the cache after a row went behind its back\n", shown);
	CHECK(shown > 0);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL,
	    "{\"messageSend\":\"after the delete\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	for (i = 0; i < 6; i++) {
		CHECK(chatfix_get(st.base, "/cached", cookie, NULL, &r) == 0);
		CHECK(strstr(r.body.data, ">cached page sees 9</p>") == NULL);
		CHECK(strstr(r.body.data, ">after the delete</p>") != NULL);
	}
	CHECK(same_page("after the delete", cookie, 0));
	http_resp_free(&r);
}

/* One write of test_page_cache_mix: POST body to path for cookie ck; 1 when answered
 * 204 or 200. */
static int
mix_write(const char *path, const char *ck, const char *body)
{
	struct http_resp r;
	int ok;

	http_resp_init(&r);
	ok = chatfix_post(st.base, path, ck, NULL, body, &r) == 0 &&
	    (r.status == 204 || r.status == 200);
	http_resp_free(&r);
	return ok;
}

/*
 * A cached list is brought up to date by the writes its label lacks (the new messages
 * read alone, nicknames again where their authors' counters moved) rather than read
 * whole: after every write of an interleaving of messages, nickname changes and channel
 * switches by four users on three channels (one of them past 500 messages, so that its
 * list also drops its oldest rows), every user's cached page is the uncached page byte
 * for byte, identity and gzip, from both workers.
 */
static void
test_page_cache_mix(void)
{
	static const char *const chans[] = { "starcord", "mix_a", "mix_b" };
	struct http_resp r;
	char ck[4][256], body[160];
	int i, u, n, same = 0, pages = 0;

	http_resp_init(&r);
	for (u = 0; u < 4; u++) {
		CHECK(chatfix_get(st.base, "/", NULL, NULL, &r) == 0);
		CHECK(chatfix_cookie(&r, ck[u], sizeof(ck[u])) == 0);
		snprintf(body, sizeof(body), "{\"channelOpen\":\"%s\"}", chans[u % 3]);
		CHECK(mix_write("/chat/channel-open", ck[u], body));
		snprintf(body, sizeof(body), "{\"messageSend\":\"mix first of %d\"}", u);
		CHECK(mix_write("/chat/message-send", ck[u], body));
	}
	for (n = 0; n < 30; n++) {
		u = n % 4;
		if (n % 7 == 6)
			snprintf(body, sizeof(body), "{\"channelOpen\":\"%s\"}", chans[(n / 7) % 3]);
		else if (n % 5 == 4)
			snprintf(body, sizeof(body), "{\"nicknameSet\":\"Mixer %d\"}", n);
		else
			snprintf(body, sizeof(body), "{\"messageSend\":\"mix <%d> & more\"}", n);
		CHECK(mix_write(n % 7 == 6 ? "/chat/channel-open" : n % 5 == 4 ?
		    "/chat/nickname-set" : "/chat/message-send", ck[u], body));
		for (i = 0; i < 8; i++, pages++)
			same += same_page("mix", ck[i % 4], (i / 4 + n) % 2);
	}
	printf("  %d of %d pages the same through the cache\n", same, pages);
	CHECK_INT(same, pages);
	http_resp_free(&r);
}

/*
 * The page cache raced by writes (chatrace.h): writers send messages as three users on
 * three channels (the seeded 'starcord', past 500 messages, and two new ones) through
 * two write pools, three processes, and change a nickname now and then, while readers
 * ask for each user's page from the two cached workers; every cached page shows every
 * message acknowledged before it was asked for, one asked for when no write was in
 * flight is the uncached page of that moment byte for byte, identity and gzip, and once
 * the writers stop every cached page is the uncached one.
 */
static void
test_page_cache_race(void)
{
	struct chatrace cr = {
		.base = st.base, .cached = "/cached",
		.sends = { "/chat/message-send", "/race-send" },
		.chans = { "starcord", "race_a", "race_b" },
		.seconds = 6,
	};

	CHECK(chatrace_run(&cr) == 0);
	chatrace_check(&cr);
}

/* The minor page faults pid has taken so far (field 10 of /proc/PID/stat), or -1. */
static long
minflt(pid_t pid)
{
	char path[64], line[1024], *p;
	long v = -1;
	int i;
	FILE *f;

	snprintf(path, sizeof(path), "/proc/%d/stat", (int)pid);
	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(line, sizeof(line), f) != NULL && (p = strrchr(line, ')')) != NULL) {
		/* After the name: state is field 3, minflt field 10. */
		for (i = 2; i < 10 && p != NULL; i++)
			p = strchr(p + 1, ' ');
		if (p != NULL)
			v = strtol(p + 1, NULL, 10);
	}
	fclose(f);
	return v;
}

/* The faults of pid over n GETs of /mapped, each after a message sent when write is set. */
static long
mapped_faults(pid_t pid, const char *ck, int n, int write)
{
	struct http_resp r;
	char body[96];
	long before = minflt(pid), after;
	int i, ok = 0;

	http_resp_init(&r);
	for (i = 0; i < n; i++) {
		if (write) {
			snprintf(body, sizeof(body), "{\"messageSend\":\"mapped %d\"}", i);
			ok += chatfix_post(st.base, "/chat/message-send", ck, NULL, body,
			    &r) == 0 && r.status == 204;
		}
		ok += chatfix_get(st.base, "/mapped", ck, NULL, &r) == 0 &&
		    r.status == 200;
	}
	http_resp_free(&r);
	after = minflt(pid);
	CHECK_INT(ok, write ? 2 * n : n);
	return before < 0 || after < 0 ? -1 : after - before;
}

/*
 * sqlite_mmap_remapped_after_every_write: SQLite drops a connection's whole memory map
 * when its next read transaction finds the WAL changed, so every message sent made the
 * page worker map the file again and fault in every page of its next page (about 20
 * times the faults of a page without writes).  With the map kept while the file's size
 * is unchanged, a page after each write costs at most twice the faults of one without.
 */
static void
test_sqlite_mmap_kept_under_writes(void)
{
	struct http_resp r;
	char ck[256];
	pid_t pid;
	long ro, rw;

	http_resp_init(&r);
	CHECK(chatfix_get(st.base, "/", NULL, NULL, &r) == 0);
	CHECK(chatfix_cookie(&r, ck, sizeof(ck)) == 0);
	http_resp_free(&r);
	CHECK(stack_worker_pids(&st, "mapped_page", &pid, 1) == 1);
	(void)mapped_faults(pid, ck, 10, 1);
	ro = mapped_faults(pid, ck, 40, 0);
	rw = mapped_faults(pid, ck, 40, 1);
	printf("  page faults of the mapped page worker over 40 pages: %ld read-only, "
	    "%ld with a write before each\n", ro, rw);
	CHECK(ro >= 0 && rw >= 0);
	CHECK(rw <= 2 * ro + 40);
}

static void
test_escaping(void)
{
	struct http_resp r;
	char sql[256];

	http_resp_init(&r);
	/* The nickname rules refuse markup, so plant it behind the API's back. */
	snprintf(sql, sizeof(sql), "UPDATE users SET nickname = "
	    "'<script>alert(1)</script>' WHERE session_id = '%s'", sid);
	CHECK(chatfix_exec(dburl, sql) == 0);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL,
	    "{\"messageSend\":\"\\\"><img src=x onerror=alert(1)> & 'q'\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(strstr(r.body.data, "<script>alert") == NULL);
	CHECK(strstr(r.body.data, "<img") == NULL);
	CHECK(chatfix_count(&r, "&lt;script&gt;alert(1)&lt;/script&gt;") >= 2);
	CHECK(strstr(r.body.data, "&quot;&gt;&lt;img src=x onerror=alert(1)&gt; &amp; "
	    "&#39;q&#39;") != NULL);
	/* The avatar initial is escaped too. */
	CHECK(strstr(r.body.data, "aria-hidden=\"true\">&lt;</div>") != NULL);
	snprintf(sql, sizeof(sql), "UPDATE users SET nickname = 'Alice' WHERE session_id = "
	    "'%s'", sid);
	CHECK(chatfix_exec(dburl, sql) == 0);
	http_resp_free(&r);
}

/* A browser's form post: the body form-encoded, Accept asking for HTML first. */
static int
form_post(const char *path, const char *cookie_hdr, const char *body, struct http_resp *r)
{
	char url[256], ch[512];
	const char *h[4];
	int n = 0;

	snprintf(url, sizeof(url), "%s%s", st.base, path);
	h[n++] = "Content-Type: " FORM;
	h[n++] = "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8";
	if (cookie_hdr != NULL) {
		snprintf(ch, sizeof(ch), "Cookie: %s", cookie_hdr);
		h[n++] = ch;
	}
	h[n] = NULL;
	return http_do("POST", url, h, body, strlen(body), 10000, r);
}

/*
 * The page's forms without script: each write takes its field form-encoded, answers 303
 * See Other to / (nothing in a URL), and the page shows the change; a refused value gets
 * its status and a small HTML page with the reason, escaped, and a link back.
 */
static void
test_form_posts(void)
{
	struct http_resp r;
	char v[256];
	int64_t msgs;

	http_resp_init(&r);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, FORM,
	    "messageSend=hello+from+a+form%21+%3Ci%3E+%26+%E2%82%AC", &r) == 0);
	CHECK_INT(r.status, 303);
	CHECK(http_header(&r, "Location", v, sizeof(v)) == 0 && strcmp(v, "/") == 0);
	CHECK_INT(r.body.len, 0);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages m JOIN users u ON "
	    "u.id = m.user_id WHERE u.session_id = $1 AND "
	    "m.content = 'hello from a form! <i> & \xe2\x82\xac'", sid), 1);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK(r.body.data && strstr(r.body.data, "<p class=\"message-content\">hello from a "
	    "form! &lt;i&gt; &amp; \xe2\x82\xac</p>\n</article>\n</section>") != NULL);

	/* The other page fields may come along (a browser sends only the form's own). */
	CHECK(chatfix_post(st.base, "/chat/channel-open", cookie, FORM,
	    "channelOpen=form_room&nicknameSet=", &r) == 0);
	CHECK_INT(r.status, 303);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK(r.body.data && strstr(r.body.data, "# form_room</h2>") != NULL);
	CHECK(chatfix_post(st.base, "/chat/channel-open", cookie, FORM, "channelOpen=starcord",
	    &r) == 0);
	CHECK_INT(r.status, 303);
	CHECK(chatfix_post(st.base, "/chat/nickname-set", cookie, FORM,
	    "nicknameSet=Form+User", &r) == 0);
	CHECK_INT(r.status, 303);
	CHECK(http_header(&r, "Location", v, sizeof(v)) == 0 && strcmp(v, "/") == 0);
	CHECK(chatfix_text(dburl, "SELECT nickname FROM users WHERE session_id = $1", sid, v,
	    sizeof(v)) == 0);
	CHECK_STR(v, "Form User");

	/* Refusals keep their status; a browser (Accept: text/html) gets a page with the
	 * reason, any other client the JSON error. */
	msgs = chatfix_int(dburl, "SELECT count(*) FROM messages", NULL);
	CHECK(form_post("/chat/nickname-set", cookie, "nicknameSet=%3Cscript%3E", &r) == 0);
	CHECK_INT(r.status, 422);
	CHECK(http_header(&r, "Content-Type", v, sizeof(v)) == 0 &&
	    strcmp(v, "text/html; charset=utf-8") == 0);
	CHECK(r.body.data && strstr(r.body.data, "<p class=\"error\">The nickname may contain "
	    "only letters, digits, spaces, _ and -.</p>") != NULL);
	CHECK(r.body.data && strstr(r.body.data, "<a href=\"/\">") != NULL);
	CHECK(r.body.data && strstr(r.body.data, "<script>") == NULL);
	CHECK(form_post("/chat/message-send", cookie, "messageSend=", &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(r.body.data && strstr(r.body.data, "messageSend must be 1 to 500 characters") !=
	    NULL);
	CHECK(form_post("/chat/message-send", NULL, "messageSend=x", &r) == 0);
	CHECK_INT(r.status, 401);
	CHECK(r.body.data && strstr(r.body.data, "<p class=\"error\">no valid session</p>"));
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, "text/plain", "messageSend=x",
	    &r) == 0);
	CHECK_INT(r.status, 415);
	CHECK(r.body.data && strstr(r.body.data, "\"code\":\"unsupported_media_type\""));
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages", NULL), msgs);
	CHECK(chatfix_text(dburl, "SELECT nickname FROM users WHERE session_id = $1", sid, v,
	    sizeof(v)) == 0);
	CHECK_STR(v, "Form User");
	http_resp_free(&r);
}

/*
 * GET /chat/messages: what the page's script polls for.  The messages of a channel after
 * a given id, oldest first, as JSON the script puts into text nodes; bad parameters 400.
 */
static void
test_messages_poll(void)
{
	static const char *const bad[] = { "", "?channel=starcord", "?after=0",
	    "?channel=Bad&after=0", "?channel=&after=0", "?channel=starcord&after=-1",
	    "?channel=starcord&after=1x", "?channel=starcord&after=99999999999999999999",
	    "?channel=%ff&after=0", "?channel=a%00&after=0" };
	size_t i;
	struct http_resp r;
	char path[256];
	const cJSON *a, *m;
	cJSON *root;
	int64_t last, prev, n = 0, id = 0;

	http_resp_init(&r);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL,
	    "{\"messageSend\":\"poll one \\\"q\\\" </script>\\n\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL,
	    "{\"messageSend\":\"poll two\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	last = chatfix_int(dburl, "SELECT max(id) FROM messages", NULL);
	prev = chatfix_int(dburl, "SELECT id FROM messages WHERE content LIKE 'poll one%'", NULL);

	snprintf(path, sizeof(path), "/chat/messages?channel=starcord&after=%lld",
	    (long long)prev - 1);
	CHECK(chatfix_get(st.base, path, cookie, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(http_header(&r, "Cache-Control", path, sizeof(path)) == 0 &&
	    strcmp(path, "no-store") == 0);
	root = r.body.data ? cJSON_Parse(r.body.data) : NULL;
	CHECK(root != NULL);
	a = cJSON_GetObjectItemCaseSensitive(root, "messages");
	CHECK(cJSON_IsArray(a));
	cJSON_ArrayForEach(m, a) {
		const cJSON *mid = cJSON_GetObjectItemCaseSensitive(m, "id");

		CHECK(cJSON_IsNumber(mid) && (int64_t)mid->valuedouble > id);
		id = (int64_t)mid->valuedouble;
		CHECK(cJSON_IsString(cJSON_GetObjectItemCaseSensitive(m, "nick")));
		CHECK(cJSON_IsNumber(cJSON_GetObjectItemCaseSensitive(m, "ts")));
		if (n == 0)
			CHECK_STR(cJSON_GetObjectItemCaseSensitive(m, "content")->valuestring,
			    "poll one \"q\" </script>\n");
		if (n == 1)
			CHECK_STR(cJSON_GetObjectItemCaseSensitive(m, "content")->valuestring,
			    "poll two");
		n++;
	}
	CHECK_INT(n, 2);
	CHECK_INT(id, last);
	cJSON_Delete(root);

	/* Nothing newer, a channel with no messages, one that does not exist. */
	snprintf(path, sizeof(path), "/chat/messages?channel=starcord&after=%lld",
	    (long long)last);
	CHECK(chatfix_get(st.base, path, cookie, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "{\"messages\":[]}");
	CHECK(chatfix_get(st.base, "/chat/messages?channel=no_such_room&after=0", cookie, NULL,
	    &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "{\"messages\":[]}");
	/* At most 100 at once, the oldest first. */
	CHECK(chatfix_get(st.base, "/chat/messages?channel=starcord&after=0", cookie, NULL,
	    &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(chatfix_count(&r, "\"nick\":"), 100);

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		snprintf(path, sizeof(path), "/chat/messages%s", bad[i]);
		CHECK(chatfix_get(st.base, path, cookie, NULL, &r) == 0);
		if (r.status != 400)
			printf("  %s: %ld\n", path, r.status);
		CHECK_INT(r.status, 400);
	}
	CHECK(chatfix_get(st.base, "/chat/messages?channel=starcord&after=0", NULL, NULL, &r) ==
	    0);
	CHECK_INT(r.status, 401);
	CHECK(chatfix_post(st.base, "/chat/messages?channel=starcord&after=0", cookie, NULL,
	    "{}", &r) == 0);
	CHECK_INT(r.status, 405);
	http_resp_free(&r);
}

static void
test_bad_input(void)
{
	static const struct {
		const char *path, *ctype, *body;
		long status;
		const char *code;
	} cases[] = {
		{ "/chat/message-send", NULL, "{", 400, "invalid_json" },
		{ "/chat/message-send", NULL, "", 400, "invalid_body" },
		{ "/chat/message-send", NULL, "[\"messageSend\"]", 400, "invalid_body" },
		{ "/chat/message-send", NULL, "\"x\"", 400, "invalid_body" },
		{ "/chat/message-send", NULL, "{}", 400, "invalid_body" },
		{ "/chat/message-send", NULL, "{\"messagesend\":\"x\"}", 400, "invalid_body" },
		{ "/chat/message-send", NULL, "{\"messageSend\":\"x\",\"evil\":1}", 400,
		    "invalid_body" },
		{ "/chat/message-send", NULL, "{\"messageSend\":\"x\",\"messageSend\":\"y\"}",
		    400, "invalid_body" },
		{ "/chat/message-send", NULL, "{\"messageSend\":5}", 400, "invalid_type" },
		{ "/chat/message-send", NULL, "{\"messageSend\":null}", 400, "invalid_type" },
		{ "/chat/message-send", NULL, "{\"messageSend\":[\"x\"]}", 400, "invalid_type" },
		{ "/chat/message-send", NULL, "{\"messageSend\":\"\"}", 400, "invalid_value" },
		{ "/chat/message-send", NULL, "{\"messageSend\":\"a\\u0001b\"}", 400,
		    "invalid_value" },
		{ "/chat/message-send", NULL, "{\"messageSend\":\"a\\u0000b\"}", 400,
		    "invalid_body" },
		{ "/chat/message-send", NULL, "{\"messageSend\":\"\\ud800\"}", 400, NULL },
		{ "/chat/message-send", NULL, "{\"messageSend\":\"\xff\"}", 400, "invalid_json" },
		{ "/chat/message-send", NULL, "[[[[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]]]]", 400,
		    "invalid_json" },
		{ "/chat/message-send", "text/plain", "{\"messageSend\":\"x\"}", 415,
		    "unsupported_media_type" },
		/* Form posts (the page without script): JSON errors unless HTML is asked for. */
		{ "/chat/message-send", FORM, "messageSend=", 400, "invalid_value" },
		{ "/chat/message-send", FORM, "messageSend=a%01b", 400, "invalid_value" },
		{ "/chat/message-send", FORM, "messageSend=a%00b", 400, "invalid_body" },
		{ "/chat/message-send", FORM, "messageSend=%zz", 400, "invalid_body" },
		{ "/chat/message-send", FORM, "messageSend=%ff", 400, "invalid_body" },
		{ "/chat/message-send", FORM, "evil=1&messageSend=x", 400, "invalid_body" },
		{ "/chat/message-send", FORM, "messageSend=x&messageSend=y", 400,
		    "invalid_body" },
		{ "/chat/message-send", FORM, "messagesend=x", 400, "invalid_body" },
		/* An unknown field name that is not UTF-8 still gets a valid JSON error. */
		{ "/chat/message-send", FORM, "caf%E9=1&messageSend=x", 400, "invalid_body" },
		{ "/chat/message-send", FORM, "{\"messageSend\":\"x\"}", 400, "invalid_body" },
		{ "/chat/channel-open", FORM, "channelOpen=Bad", 400, "invalid_value" },
		{ "/chat/nickname-set", FORM, "nicknameSet=a%3Cb", 422, "invalid_nickname" },
		{ "/chat/channel-open", NULL, "{\"channelOpen\":\"\"}", 400, "invalid_value" },
		{ "/chat/channel-open", NULL, "{\"channelOpen\":\"Bad\"}", 400, "invalid_value" },
		{ "/chat/channel-open", NULL, "{\"channelOpen\":\"1abc\"}", 400,
		    "invalid_value" },
		{ "/chat/channel-open", NULL, "{\"channelOpen\":\"a b\"}", 400, "invalid_value" },
		{ "/chat/channel-open", NULL, "{\"channelOpen\":\"<x>\"}", 400, "invalid_value" },
		{ "/chat/channel-open", NULL,
		    "{\"channelOpen\":\"abcdefghijabcdefghijabcdefghijabc\"}", 400,
		    "invalid_value" },
		{ "/chat/channel-open", NULL, "{\"channelOpen\":true}", 400, "invalid_type" },
		{ "/chat/nickname-set", NULL, "{\"nicknameSet\":\"<script>\"}", 422,
		    "invalid_nickname" },
		{ "/chat/nickname-set", NULL, "{\"nicknameSet\":\"\"}", 422, "invalid_nickname" },
		{ "/chat/nickname-set", NULL,
		    "{\"nicknameSet\":\"abcdefghijabcdefghijabcdefghijabc\"}", 422,
		    "invalid_nickname" },
		{ "/chat/nickname-set", NULL, "{\"nicknameSet\":\"caf\xc3\xa9\"}", 422,
		    "invalid_nickname" },
		{ "/chat/nickname-set", NULL, "{\"nicknameSet\":1}", 400, "invalid_type" },
		{ "/chat/nickname-set", NULL, "nicknameSet", 400, "invalid_json" },
	};
	struct http_resp r;
	char nick[64], want[64], big[2100];
	int64_t msgs = chatfix_int(dburl, "SELECT count(*) FROM messages", NULL);
	int64_t chans = chatfix_int(dburl, "SELECT count(*) FROM channels", NULL);
	int64_t cur = chatfix_int(dburl, "SELECT current_channel_id FROM users WHERE "
	    "session_id = $1", sid);
	size_t i, off;

	CHECK(chatfix_text(dburl, "SELECT nickname FROM users WHERE session_id = $1", sid, nick,
	    sizeof(nick)) == 0);
	http_resp_init(&r);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK(chatfix_post(st.base, cases[i].path, cookie, cases[i].ctype, cases[i].body,
		    &r) == 0);
		if (r.status != cases[i].status)
			printf("  case %zu (%s %s): %ld %s\n", i, cases[i].path, cases[i].body,
			    r.status, r.body.data ? r.body.data : "");
		CHECK_INT(r.status, cases[i].status);
		if (cases[i].code != NULL) {
			snprintf(want, sizeof(want), "\"code\":\"%s\"", cases[i].code);
			CHECK(r.body.data != NULL && strstr(r.body.data, want) != NULL);
		}
	}
	/* The nickname's refusal is also the signal the page shows. */
	CHECK(chatfix_post(st.base, "/chat/nickname-set", cookie, NULL,
	    "{\"nicknameSet\":\"a<b\"}", &r) == 0);
	CHECK(r.body.data && strstr(r.body.data, "{\"_nicknameSetError\":\"The nickname") ==
	    r.body.data);

	/* Lengths count characters, not bytes: 500 x U+00E9 (1000 bytes) is fine, 501 not. */
	off = (size_t)snprintf(big, sizeof(big), "{\"messageSend\":\"");
	for (i = 0; i < 501; i++) {
		big[off++] = '\xc3';
		big[off++] = '\xa9';
	}
	memcpy(big + off, "\"}", 3);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL, big, &r) == 0);
	CHECK_INT(r.status, 400);
	memmove(big + off - 2, big + off, 3);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL, big, &r) == 0);
	CHECK_INT(r.status, 204);
	msgs++;

	/* No session, wrong method. */
	CHECK(chatfix_post(st.base, "/chat/message-send", NULL, NULL, "{\"messageSend\":\"x\"}",
	    &r) == 0);
	CHECK_INT(r.status, 401);
	CHECK(chatfix_get(st.base, "/chat/message-send", cookie, NULL, &r) == 0);
	CHECK_INT(r.status, 405);
	CHECK(chatfix_post(st.base, "/", cookie, NULL, "{}", &r) == 0);
	CHECK_INT(r.status, 405);

	/* Nothing of the above was written. */
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages", NULL), msgs);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM channels", NULL), chans);
	CHECK_INT(chatfix_int(dburl, "SELECT current_channel_id FROM users WHERE "
	    "session_id = $1", sid), cur);
	CHECK(chatfix_text(dburl, "SELECT nickname FROM users WHERE session_id = $1", sid, want,
	    sizeof(want)) == 0);
	CHECK_STR(want, nick);
	http_resp_free(&r);
}

static void
test_bench_mode(void)
{
	struct http_resp r;
	char v[256];

	http_resp_init(&r);
	CHECK(chatfix_get(st.base, "/bench", NULL, "br", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(http_header(&r, "Set-Cookie", v, sizeof(v)) < 0);
	CHECK(http_header(&r, "Content-Encoding", v, sizeof(v)) == 0);
	CHECK(chatfix_get(st.base, "/bench", NULL, NULL, &r) == 0);
	CHECK(r.body.data && strstr(r.body.data, "value=\"u_000000") != NULL);
	CHECK(chatfix_post(st.base, "/bench-send", NULL, NULL, "{\"messageSend\":\"aaa\"}", &r) ==
	    0);
	CHECK_INT(r.status, 204);
	http_resp_free(&r);
}

/* The id of the first and of the last message on the page r, or -1. */
static void
page_ends(const struct http_resp *r, long long *first, long long *last)
{
	static const char art[] = "<article class=\"message\" id=\"message-";
	const char *p = r->body.data, *q;

	*first = *last = -1;
	if (p == NULL || (p = strstr(p, art)) == NULL)
		return;
	*first = strtoll(p + sizeof(art) - 1, NULL, 10);
	while ((q = strstr(p + 1, art)) != NULL)
		p = q;
	*last = strtoll(p + sizeof(art) - 1, NULL, 10);
}

/*
 * chat_page_order: the default page shows the channel's newest 500 messages, oldest
 * first; chat_page_order=oldest (the Starcord benchmark's page query) its first 500, also
 * oldest first.  A guest sees 'starcord', which has more than 500.
 */
static void
test_page_order(void)
{
	static const char by[] = "SELECT m.id FROM messages m JOIN channels c ON "
	    "c.id = m.channel_id WHERE c.name = 'starcord' ORDER BY m.created_ts %s, m.id %s "
	    "LIMIT 1 OFFSET %s";
	char sql[512];
	struct http_resp r;
	long long first, last;

	http_resp_init(&r);
	CHECK(chatfix_get(st.base, "/oldest", NULL, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(chatfix_count(&r, "<article class=\"message\""), 500);
	page_ends(&r, &first, &last);
	snprintf(sql, sizeof(sql), by, "", "", "0");
	CHECK_INT(first, chatfix_int(dburl, sql, NULL));
	snprintf(sql, sizeof(sql), by, "", "", "499");
	CHECK_INT(last, chatfix_int(dburl, sql, NULL));

	CHECK(chatfix_get(st.base, "/", NULL, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_INT(chatfix_count(&r, "<article class=\"message\""), 500);
	page_ends(&r, &first, &last);
	snprintf(sql, sizeof(sql), by, "DESC", "DESC", "499");
	CHECK_INT(first, chatfix_int(dburl, sql, NULL));
	snprintf(sql, sizeof(sql), by, "DESC", "DESC", "0");
	CHECK_INT(last, chatfix_int(dburl, sql, NULL));
	http_resp_free(&r);
}

/*
 * The flock() locks that the processes pids[0..n) hold, from /proc/locks: *queue counts
 * those on the inode ino (the writers' queue), *other those on any other file.  Waiters
 * ("->") hold nothing yet.  A read of /proc/locks longer than a page is not one snapshot
 * (a lock let go and the next one taken can both show), so what is told apart is the
 * file locked, not how many locks there are at an instant.
 */
static void
flocks_of(const pid_t *pids, int n, unsigned long ino, long *queue, long *other)
{
	char line[256], type[16], dev[64];
	unsigned long i;
	long pid;
	int k;
	FILE *f;

	if ((f = fopen("/proc/locks", "r")) == NULL)
		return;
	while (fgets(line, sizeof(line), f) != NULL) {
		if (strstr(line, "->") != NULL ||
		    sscanf(line, "%*d: %15s %*s %*s %ld %63s", type, &pid, dev) != 3 ||
		    strcmp(type, "FLOCK") != 0 || strrchr(dev, ':') == NULL ||
		    sscanf(strrchr(dev, ':') + 1, "%lu", &i) != 1)
			continue;
		for (k = 0; k < n; k++)
			if (pid == (long)pids[k]) {
				if (i == ino)
					(*queue)++;
				else {
					(*other)++;
					printf("  a writer holds a lock on inode %lu\n", i);
				}
			}
	}
	fclose(f);
}

struct lockwatch {
	pid_t pids[16];
	int n;
	unsigned long ino;
	volatile int stop;
	long queue, other, samples;
};

static void *
lockwatch_run(void *arg)
{
	struct lockwatch *w = arg;

	while (!w->stop) {
		flocks_of(w->pids, w->n, w->ino, &w->queue, &w->other);
		w->samples++;
	}
	return NULL;
}

/* Concurrent writers: THREADS x N message-sends at once through two processes. */
#define CW_THREADS	8
#define CW_N		200

struct cw {
	int id;
	int ok, err5xx, other;
};

static void *
cw_run(void *arg)
{
	struct cw *c = arg;
	struct http_resp r;
	char body[96];
	int i;

	http_resp_init(&r);
	for (i = 0; i < CW_N; i++) {
		snprintf(body, sizeof(body), "{\"messageSend\":\"cw %d %d\"}", c->id, i);
		if (chatfix_post(st.base, "/bench-send", NULL, NULL, body, &r) < 0 ||
		    r.status >= 500)
			c->err5xx++;
		else if (r.status == 204)
			c->ok++;
		else
			c->other++;
	}
	http_resp_free(&r);
	return NULL;
}

static void
test_concurrent_writers(void)
{
	pthread_t t[CW_THREADS], watcher;
	struct cw c[CW_THREADS];
	struct lockwatch w;
	char path[128];
	struct stat sb;
	int i, ok = 0, bad = 0;
	long long t0 = stack_now_ms();

	/* Meanwhile /proc/locks is read over and over: a group-committed write takes one
	 * file lock, the writers' queue, so no writer process ever locks another file. */
	memset(&w, 0, sizeof(w));
	w.n = stack_worker_pids(&st, "bench_send", w.pids, 16);
	CHECK_INT(w.n, 2);
	snprintf(path, sizeof(path), "%s/chat.db-wlock", dir);
	CHECK_INT(stat(path, &sb), 0);
	w.ino = (unsigned long)sb.st_ino;
	CHECK_INT(pthread_create(&watcher, NULL, lockwatch_run, &w), 0);
	for (i = 0; i < CW_THREADS; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].id = i;
		pthread_create(&t[i], NULL, cw_run, &c[i]);
	}
	for (i = 0; i < CW_THREADS; i++) {
		pthread_join(t[i], NULL);
		ok += c[i].ok;
		bad += c[i].err5xx + c[i].other;
	}
	w.stop = 1;
	pthread_join(watcher, NULL);
	printf("  %d sends: %d x 204 in %lld ms, %d others\n", CW_THREADS * CW_N, ok,
	    stack_now_ms() - t0, bad);
	printf("  /proc/locks read %ld times: the writers held chat.db-wlock %ld times, "
	    "another file %ld times\n", w.samples, w.queue, w.other);
	CHECK(w.queue > 0);
	CHECK_INT(w.other, 0);
	CHECK_INT(ok, CW_THREADS * CW_N);
	CHECK_INT(bad, 0);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages WHERE content LIKE 'cw %'",
	    NULL), ok);
}

/*
 * The data directory after all those writes: the database, its WAL and shared memory, the
 * session key, and one lock file, the writers' queue "chat.db-wlock"; the group commit
 * made none of its own.
 */
static void
test_one_lock_file(void)
{
	static const char *const want[] = { "chat.db", "chat.db-wal", "chat.db-shm",
	    "chat.db-wlock", "chat-session.key", "chat-versions" };
	int found[sizeof(want) / sizeof(want[0])] = { 0 };
	struct dirent *e;
	size_t i;
	DIR *d;

	CHECK((d = opendir(dir)) != NULL);
	if (d == NULL)
		return;
	while ((e = readdir(d)) != NULL) {
		if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
			continue;
		for (i = 0; i < sizeof(want) / sizeof(want[0]); i++)
			if (strcmp(e->d_name, want[i]) == 0)
				break;
		if (i == sizeof(want) / sizeof(want[0]))
			printf("  unexpected file: %s\n", e->d_name);
		CHECK(i < sizeof(want) / sizeof(want[0]));
		if (i < sizeof(want) / sizeof(want[0]))
			found[i]++;
	}
	closedir(d);
	/* The database and its queue; the WAL files come and go with the connections. */
	CHECK_INT(found[0], 1);
	CHECK_INT(found[3], 1);
}

/* Acknowledged means durable: kill -9 every writer right after their 204s. */
static void
test_kill9_after_204(void)
{
	struct http_resp r;
	pid_t pids[16];
	char body[96];
	int i, n, acked = 0;

	http_resp_init(&r);
	for (i = 0; i < 20; i++) {
		snprintf(body, sizeof(body), "{\"messageSend\":\"durable %d\"}", i);
		CHECK(chatfix_post(st.base, "/bench-send", NULL, NULL, body, &r) == 0);
		acked += r.status == 204;
	}
	CHECK_INT(acked, 20);
	n = stack_worker_pids(&st, "bench_send", pids, 16);
	CHECK_INT(n, 2);
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	for (i = 0; i < n; i++)
		stack_sh("while kill -0 %d 2>/dev/null; do sleep 0.01; done", (int)pids[i]);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM messages WHERE content LIKE "
	    "'durable %'", NULL), acked);
	/* The pool comes back and writes again. */
	CHECK(stack_wait_pool(&st, "bench_send", 5000) == 0);
	CHECK(chatfix_post(st.base, "/bench-send", NULL, NULL, "{\"messageSend\":\"again\"}",
	    &r) == 0);
	CHECK_INT(r.status, 204);
	http_resp_free(&r);
}

/*
 * Regression: every anonymous GET / wrote a new user row (100 GETs = 100 users, and a
 * full disk answered a read with 507).  Now 100 first visits write nothing; the first
 * write of one of those sessions inserts its user (the guest nickname the page showed,
 * in 'starcord'), once.
 */
static void
test_anonymous_get_writes_nothing(void)
{
	struct http_resp r;
	char c[256], s[64], nick[32], want[64];
	int64_t users, members;
	int i, ok = 0;

	users = chatfix_int(dburl, "SELECT count(*) FROM users", NULL);
	members = chatfix_int(dburl, "SELECT count(*) FROM channel_memberships", NULL);
	http_resp_init(&r);
	c[0] = '\0';
	for (i = 0; i < 100; i++)
		if (chatfix_get(st.base, "/", NULL, NULL, &r) == 0 && r.status == 200 &&
		    chatfix_cookie(&r, c, sizeof(c)) == 0)
			ok++;
	CHECK_INT(ok, 100);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users", NULL), users);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM channel_memberships", NULL),
	    members);
	/* The last visitor's page shows its guest nickname; its first write makes it. */
	CHECK(chatfix_cookie_sid(c, s, sizeof(s)) == 0);
	snprintf(nick, sizeof(nick), "guest-%.6s", strncmp(s, "w_", 2) == 0 ? s + 2 : s);
	snprintf(want, sizeof(want), "value=\"%s\"", nick);
	CHECK(r.body.data != NULL && strstr(r.body.data, want) != NULL);
	CHECK(chatfix_post(st.base, "/chat/message-send", c, NULL,
	    "{\"messageSend\":\"hello from a new visitor\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users", NULL), users + 1);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users WHERE session_id = $1 AND "
	    "nickname = 'guest-' || substr($1, 3, 6)", s), 1);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM channel_memberships m JOIN users u "
	    "ON u.id = m.user_id WHERE u.session_id = $1", s), 1);
	/* A second write adds no user. */
	CHECK(chatfix_post(st.base, "/chat/nickname-set", c, NULL,
	    "{\"nicknameSet\":\"newcomer\"}", &r) == 0);
	CHECK(r.status >= 200 && r.status < 300);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users", NULL), users + 1);
	CHECK_INT(chatfix_int(dburl, "SELECT count(*) FROM users WHERE session_id = $1 AND "
	    "nickname = 'newcomer'", s), 1);
	http_resp_free(&r);
}

/*
 * Regression: the seeder's database and the files the workers make next to it were
 * world-readable (0644).  After the writes above: the database, its -wal, -shm and
 * -wlock files and the chat's session key exist and none is readable by others.
 */
static void
test_data_not_world_readable(void)
{
	static const char *const names[] = { "chat.db", "chat.db-wal", "chat.db-shm",
	    "chat.db-wlock", "chat-session.key" };
	char path[PATH_MAX];
	struct stat sb;
	size_t i;

	for (i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		if (stat(path, &sb) == -1) {
			harness_fail(__FILE__, __LINE__, "%s: missing", path);
			continue;
		}
		printf("  %-18s %04o\n", names[i], (unsigned)(sb.st_mode & 07777));
		if (sb.st_mode & 0007)
			harness_fail(__FILE__, __LINE__, "%s: mode %04o, readable by others", path,
			    (unsigned)(sb.st_mode & 07777));
	}
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	if (setup() < 0) {
		CHECK(!"stack started on a seeded database");
		teardown();
		return harness_done();
	}
	RUN(test_page_first_visit);
	RUN(test_page_order);
	RUN(test_page_compression);
	RUN(test_writes);
	RUN(test_escaping);
	RUN(test_page_cache);
	RUN(test_page_cache_mix);
	RUN(test_page_cache_race);
	RUN(test_sqlite_mmap_kept_under_writes);
	RUN(test_bad_input);
	RUN(test_form_posts);
	RUN(test_messages_poll);
	RUN(test_bench_mode);
	RUN(test_concurrent_writers);
	RUN(test_one_lock_file);
	RUN(test_kill9_after_204);
	RUN(test_anonymous_get_writes_nothing);
	RUN(test_data_not_world_readable);
	teardown();
	return harness_done();
}
