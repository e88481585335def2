/*
 * test_chat_pg: the Starcord chat on a real throwaway PostgreSQL cluster.  The seeder is
 * deterministic (the same parameters give the same rows, run after run and on SQLite
 * and PostgreSQL alike: checksum queries over every table); then, at read committed and
 * at serializable, the page (status, cookie, 500 messages, Brotli), each write's status
 * and effect, bad input (nothing written) and concurrent writers that collide on the
 * same rows (serialization failures are retried: every request 204, no 5xx); and the
 * page cache (chat_page_cache=1) under writes interleaved on two channels, every cached
 * page the uncached one byte for byte, and under writes from two processes racing the
 * reads (test_pg_page_cache_race).
 */
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chatfix.h"
#include "chatrace.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

static struct pgtmp pg;
static int pg_up;

/* Checksums that cover every column of every table, in SQL both databases run alike. */
static const char *const sums[] = {
	"SELECT count(*) FROM channels",
	"SELECT sum(id * 7 + length(name)) FROM channels",
	"SELECT count(*) FROM channels WHERE name = 'c_00000003' AND id = 4",
	"SELECT sum(CAST(floor(created_ts * 1000) AS bigint)) FROM channels",
	"SELECT count(*) FROM users",
	"SELECT sum(id * current_channel_id) FROM users",
	"SELECT count(*) FROM users WHERE nickname = 'u_00000005' AND session_id = 's_00000005' "
	    "AND id = 5",
	"SELECT sum(CAST(floor(created_ts * 1000) AS bigint)) FROM users",
	"SELECT count(*) FROM channel_memberships",
	"SELECT sum(user_id * 31 + channel_id) FROM channel_memberships",
	"SELECT count(*) FROM messages",
	"SELECT sum(id + channel_id * 1000003 + user_id * 7919 + length(content)) FROM messages",
	"SELECT sum(length(content) * id) FROM messages",
	"SELECT count(*) FROM messages WHERE content <> substr('aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa', 1, length(content))",
	"SELECT sum(CAST(floor(created_ts * 1000) AS bigint)) FROM messages",
	"SELECT count(*) FROM messages WHERE id = 1 AND created_ts = 1771603335.0",
	"SELECT max(id) FROM messages",
};

static void
test_seed_deterministic(void)
{
	char dir[64], a[128], b[128];
	const char *env = "SEED_MSG_COUNT=5000 BENCH_SKEW=0.5 SEED_CHANNEL_COUNT=32";
	int64_t va, vb, vp;
	size_t i;

	snprintf(dir, sizeof(dir), "/tmp/sluice-chatseed-XXXXXX");
	CHECK(mkdtemp(dir) != NULL);
	snprintf(a, sizeof(a), "sqlite:%s/a.db", dir);
	snprintf(b, sizeof(b), "sqlite:%s/b.db", dir);
	CHECK_INT(chatfix_seed(a, env), 0);
	CHECK_INT(chatfix_seed(b, env), 0);
	CHECK_INT(chatfix_seed(pg.url, env), 0);
	/* A second run refuses to seed over data; -f would replace it. */
	CHECK(chatfix_seed(a, env) != 0);
	for (i = 0; i < sizeof(sums) / sizeof(sums[0]); i++) {
		va = chatfix_int(a, sums[i], NULL);
		vb = chatfix_int(b, sums[i], NULL);
		vp = chatfix_int(pg.url, sums[i], NULL);
		if (va != vb || va != vp || va < 0)
			printf("  %s: sqlite %lld, %lld, postgresql %lld\n", sums[i],
			    (long long)va, (long long)vb, (long long)vp);
		CHECK(va >= 0);
		CHECK(va == vb);
		CHECK(va == vp);
	}
	CHECK_INT(chatfix_int(a, "SELECT count(*) FROM channels", NULL), 33);
	CHECK_INT(chatfix_int(a, "SELECT count(*) FROM messages", NULL), 5000);
	/* The skew shows: channel 1 (rank 1) holds the most messages. */
	CHECK_INT(chatfix_int(pg.url, "SELECT channel_id FROM messages GROUP BY channel_id "
	    "ORDER BY count(*) DESC LIMIT 1", NULL), 1);
	stack_sh("rm -rf %s", dir);
}

struct coll {
	const char *base;
	const char *cookie;
	int id, ok, sent, bad;
};

/* Writers that collide: the same few new channels, the same user rows. */
static void *
coll_run(void *arg)
{
	struct coll *c = arg;
	struct http_resp r;
	char body[96];
	int i;

	http_resp_init(&r);
	for (i = 0; i < 30; i++) {
		if (i % 3 == 0)
			snprintf(body, sizeof(body), "{\"channelOpen\":\"hot_%d\"}", i % 4);
		else
			snprintf(body, sizeof(body), "{\"messageSend\":\"coll %d %d\"}", c->id, i);
		if (chatfix_post(c->base, i % 3 == 0 ? "/bench-open" : "/bench-send", NULL, NULL,
		    body, &r) == 0 && r.status == 204) {
			c->ok++;
			c->sent += i % 3 != 0;
		}
		else {
			if (c->bad++ == 0)
				printf("  collision: %ld %s\n", r.status,
				    r.body.data ? r.body.data : "");
		}
	}
	http_resp_free(&r);
	return NULL;
}

static void
run_endpoints(const char *isolation)
{
	struct http_resp r;
	struct stack st;
	char conf[3 * 4096 + 2048], bin[4096], cookie[256], sid[64], v[64], nick[64];
	char path[128], idtxt[32];
	const char *b = getenv("SLUICE_BIN");
	struct coll c[8];
	pthread_t t[8];
	int64_t msgs, chans, n, id;
	int i, ok = 0, bad = 0, sent = 0;

	if (realpath(b ? b : "bin", bin) == NULL)
		return;
	snprintf(conf, sizeof(conf),
	    "db chat sqlite:/nonexistent.db\n"
	    "chat_page =/ workers=1 db=chat db_isolation=%s session_key=%s\n"
	    "chat_message_send =/chat/message-send workers=1 threads=2 db=chat "
	    "db_isolation=%s session_key=%s\n"
	    "chat_channel_open =/chat/channel-open workers=1 threads=2 db=chat "
	    "db_isolation=%s session_key=%s\n"
	    "chat_nickname_set =/chat/nickname-set workers=1 threads=1 db=chat "
	    "db_isolation=%s session_key=%s\n"
	    "chat_messages =/chat/messages workers=1 threads=1 db=chat "
	    "db_isolation=%s session_key=%s\n"
	    "bench_send =/bench-send workers=1 threads=4 db=chat db_isolation=%s "
	    "binary=%s/chat_message_send bench_sessions=16 session_key=%s\n"
	    "bench_open =/bench-open workers=1 threads=4 db=chat db_isolation=%s "
	    "binary=%s/chat_channel_open bench_sessions=16 session_key=%s\n",
	    isolation, "00112233445566778899aabbccddeeff",
	    isolation, "00112233445566778899aabbccddeeff",
	    isolation, "00112233445566778899aabbccddeeff",
	    isolation, "00112233445566778899aabbccddeeff",
	    isolation, "00112233445566778899aabbccddeeff",
	    isolation, bin, "00112233445566778899aabbccddeeff",
	    isolation, bin, "00112233445566778899aabbccddeeff");
	setenv("SLUICE_DB_CHAT", pg.url, 1);
	if (stack_start(&st, conf, "tuned", 2, NULL) < 0) {
		unsetenv("SLUICE_DB_CHAT");
		CHECK(!"stack started");
		return;
	}
	unsetenv("SLUICE_DB_CHAT");
	http_resp_init(&r);

	CHECK(chatfix_get(st.base, "/", NULL, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(chatfix_cookie(&r, cookie, sizeof(cookie)) == 0);
	CHECK(chatfix_cookie_sid(cookie, sid, sizeof(sid)) == 0);
	/* The seed above gave 'starcord', where a new user starts, fewer than 500. */
	n = chatfix_int(pg.url, "SELECT count(*) FROM messages WHERE channel_id = 1", NULL);
	CHECK(n > 100);
	CHECK_INT(chatfix_count(&r, "<article class=\"message\""), n < 500 ? n : 500);
	printf("  %s: page %zu bytes\n", isolation, r.body.len);
	CHECK(chatfix_get(st.base, "/", cookie, "gzip, br", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(http_header(&r, "Content-Encoding", v, sizeof(v)) == 0 && strcmp(v, "br") == 0);
	CHECK(chatfix_cookie(&r, v, sizeof(v)) < 0);

	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL,
	    "{\"messageSend\":\"pg hello\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK_INT(chatfix_int(pg.url, "SELECT count(*) FROM messages m JOIN users u ON "
	    "u.id = m.user_id WHERE u.session_id = $1 AND m.content = 'pg hello'", sid), 1);
	CHECK(chatfix_get(st.base, "/", cookie, NULL, &r) == 0);
	CHECK(r.body.data && strstr(r.body.data, ">pg hello</p>\n</article>\n</section>"));
	/* The page script's poll, and a form post, on PostgreSQL. */
	id = chatfix_int(pg.url, "SELECT max(id) FROM messages WHERE content = 'pg hello'", NULL);
	snprintf(path, sizeof(path), "/chat/messages?channel=starcord&after=%lld",
	    (long long)id - 1);
	CHECK(chatfix_get(st.base, path, cookie, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	snprintf(v, sizeof(v), "{\"messages\":[{\"id\":%lld,\"nick\":\"", (long long)id);
	CHECK(r.body.data && strncmp(r.body.data, v, strlen(v)) == 0 &&
	    strstr(r.body.data, "\"content\":\"pg hello\",\"ts\":") != NULL);
	snprintf(path, sizeof(path), "/chat/messages?channel=starcord&after=%lld",
	    (long long)id);
	CHECK(chatfix_get(st.base, path, cookie, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "{\"messages\":[]}");
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie,
	    "application/x-www-form-urlencoded", "messageSend=pg+form", &r) == 0);
	CHECK_INT(r.status, 303);
	snprintf(idtxt, sizeof(idtxt), "%lld", (long long)id);
	CHECK_INT(chatfix_int(pg.url, "SELECT count(*) FROM messages WHERE content = 'pg form' "
	    "AND id > $1", idtxt), 1);
	CHECK(chatfix_post(st.base, "/chat/channel-open", cookie, NULL,
	    "{\"channelOpen\":\"pg_room\"}", &r) == 0);
	CHECK_INT(r.status, 204);
	CHECK_INT(chatfix_int(pg.url, "SELECT count(*) FROM users u JOIN channels c ON "
	    "c.id = u.current_channel_id AND c.name = 'pg_room' WHERE u.session_id = $1", sid),
	    1);
	CHECK(chatfix_post(st.base, "/chat/nickname-set", cookie, NULL,
	    "{\"nicknameSet\":\"Bob\"}", &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK_STR(r.body.data, "{\"_nicknameSetError\":\"\"}");
	CHECK(chatfix_text(pg.url, "SELECT nickname FROM users WHERE session_id = $1", sid,
	    nick, sizeof(nick)) == 0);
	CHECK_STR(nick, "Bob");

	/* Bad input writes nothing. */
	msgs = chatfix_int(pg.url, "SELECT count(*) FROM messages", NULL);
	chans = chatfix_int(pg.url, "SELECT count(*) FROM channels", NULL);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL, "{\"messageSend\":1}",
	    &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(chatfix_post(st.base, "/chat/message-send", cookie, NULL, "{", &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(chatfix_post(st.base, "/chat/channel-open", cookie, NULL,
	    "{\"channelOpen\":\"No Way\"}", &r) == 0);
	CHECK_INT(r.status, 400);
	CHECK(chatfix_post(st.base, "/chat/nickname-set", cookie, NULL,
	    "{\"nicknameSet\":\"<b>\"}", &r) == 0);
	CHECK_INT(r.status, 422);
	CHECK_INT(chatfix_int(pg.url, "SELECT count(*) FROM messages", NULL), msgs);
	CHECK_INT(chatfix_int(pg.url, "SELECT count(*) FROM channels", NULL), chans);
	CHECK(chatfix_text(pg.url, "SELECT nickname FROM users WHERE session_id = $1", sid,
	    nick, sizeof(nick)) == 0);
	CHECK_STR(nick, "Bob");

	/* Colliding writers: retried serialization failures, never a 5xx.  The pools hold 13
	 * connections: the throwaway cluster allows 20. */
	for (i = 0; i < 8; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].base = st.base;
		c[i].id = i;
		pthread_create(&t[i], NULL, coll_run, &c[i]);
	}
	for (i = 0; i < 8; i++) {
		pthread_join(t[i], NULL);
		ok += c[i].ok;
		bad += c[i].bad;
		sent += c[i].sent;
	}
	printf("  %s: %d colliding writes, %d x 204, %d others\n", isolation, 8 * 30, ok, bad);
	CHECK_INT(ok, 8 * 30);
	CHECK_INT(chatfix_int(pg.url, "SELECT count(*) FROM messages WHERE content LIKE 'coll %'",
	    NULL), sent);
	CHECK_INT(chatfix_int(pg.url, "SELECT count(*) FROM channels WHERE name LIKE 'hot%'",
	    NULL), 4);
	http_resp_free(&r);
	stack_stop(&st);
	/* The next run starts from the same messages. */
	chatfix_exec(pg.url, "DELETE FROM messages WHERE content LIKE 'coll %'");
}

static void
test_pg_read_committed(void)
{
	run_endpoints("read_committed");
}

static void
test_pg_serializable(void)
{
	run_endpoints("serializable");
}

#define CACHE_KEY	"00112233445566778899aabbccddeeff"

/*
 * Starts the page with and without its cache (/cached: 2 workers) and the writers on
 * the cluster, from a directory of its own: on PostgreSQL the version board is
 * data/chat-versions under the workers' working directory.  0, or -1.
 */
static int
cache_stack(struct stack *st, char *dir, size_t dirlen)
{
	char conf[3 * PATH_MAX + 1024], bin[PATH_MAX], cwd[PATH_MAX], data[PATH_MAX + 8];
	const char *b = getenv("SLUICE_BIN");
	int rc;

	if (realpath(b ? b : "bin", bin) == NULL || getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	snprintf(dir, dirlen, "/tmp/sluice-chatpg-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	/* The workers may run as another user (root drops to the run user). */
	snprintf(data, sizeof(data), "%s/data", dir);
	if (chmod(dir, 0755) == -1 || mkdir(data, 0700) == -1 || chmod(data, 01777) == -1)
		return -1;
	/* The page's template, which a worker reads from handlers/ under its working
	 * directory when the binary's own tree is out of its reach (a private one, as
	 * root): a copy here, readable by the run user.  Release or sanitizer tree. */
	if (stack_sh("mkdir -p '%s/handlers' && { cp '%s'/../handlers/*.html '%s/handlers/' "
	    "2>/dev/null || cp '%s'/../../../handlers/*.html '%s/handlers/'; } && "
	    "chmod -R a+rX '%s/handlers'", dir, bin, dir, bin, dir, dir) != 0)
		return -1;
	snprintf(conf, sizeof(conf),
	    "db chat sqlite:/nonexistent.db\n"
	    "chat_page =/ workers=1 db=chat session_key=%s\n"
	    "cached_page =/cached workers=2 threads=1 db=chat binary=%s/chat_page "
	    "chat_page_cache=1 session_key=%s\n"
	    "chat_message_send =/chat/message-send workers=1 threads=2 db=chat "
	    "session_key=%s\n"
	    "race_send =/race-send workers=1 threads=2 db=chat "
	    "binary=%s/chat_message_send session_key=%s\n"
	    "chat_channel_open =/chat/channel-open workers=1 threads=2 db=chat "
	    "session_key=%s\n"
	    "chat_nickname_set =/chat/nickname-set workers=1 threads=1 db=chat "
	    "session_key=%s\n",
	    CACHE_KEY, bin, CACHE_KEY, CACHE_KEY, bin, CACHE_KEY, CACHE_KEY, CACHE_KEY);
	setenv("SLUICE_BIN", bin, 1);
	setenv("SLUICE_DB_CHAT", pg.url, 1);
	rc = chdir(dir) == 0 ? stack_start(st, conf, "tuned", 2, NULL) : -1;
	unsetenv("SLUICE_DB_CHAT");
	if (chdir(cwd) == -1)
		rc = -1;
	return rc < 0 ? -1 : 0;
}

/* A write of test_pg_page_cache_two_channels: 1 when answered 204 or 200. */
static int
cache_write(const char *base, const char *path, const char *ck, const char *body)
{
	struct http_resp r;
	int ok;

	http_resp_init(&r);
	ok = chatfix_post(base, path, ck, NULL, body, &r) == 0 &&
	    (r.status == 204 || r.status == 200);
	http_resp_free(&r);
	return ok;
}

/*
 * The page cache on PostgreSQL: two users, each on a channel of their own, send
 * messages in turn (one channel, then the other) and change their nicknames now and
 * then; after every write each user's page through the cache, from both workers, in
 * identity and gzip, is the uncached page byte for byte: a write to one channel shows at
 * once on its page and leaves the other's list as it was.
 */
static void
test_pg_page_cache_two_channels(void)
{
	static const char *const chans[] = { "pc_left", "pc_right" };
	struct http_resp r;
	struct stack st;
	char dir[64], ck[2][256], body[160];
	int n, u, i, same = 0, pages = 0;

	/* Run alone (TEST=), the cluster holds no chat yet. */
	if (chatfix_int(pg.url, "SELECT count(*) FROM channels", NULL) < 0)
		CHECK_INT(chatfix_seed(pg.url, "SEED_MSG_COUNT=5000 BENCH_SKEW=0.5 "
		    "SEED_CHANNEL_COUNT=32"), 0);
	if (cache_stack(&st, dir, sizeof(dir)) < 0) {
		CHECK(!"stack started");
		return;
	}
	http_resp_init(&r);
	for (u = 0; u < 2; u++) {
		CHECK(chatfix_get(st.base, "/", NULL, NULL, &r) == 0);
		CHECK(chatfix_cookie(&r, ck[u], sizeof(ck[u])) == 0);
		snprintf(body, sizeof(body), "{\"channelOpen\":\"%s\"}", chans[u]);
		CHECK(cache_write(st.base, "/chat/channel-open", ck[u], body));
	}
	for (n = 0; n < 24; n++) {
		u = n % 2;
		if (n % 7 == 6) {
			snprintf(body, sizeof(body), "{\"nicknameSet\":\"Side %d\"}", n);
			CHECK(cache_write(st.base, "/chat/nickname-set", ck[u], body));
		} else {
			snprintf(body, sizeof(body), "{\"messageSend\":\"%s <%d> & more\"}",
			    chans[u], n);
			CHECK(cache_write(st.base, "/chat/message-send", ck[u], body));
		}
		for (i = 0; i < 8; i++, pages++)
			same += chatfix_same_page(st.base, "/cached", chans[i % 2], ck[i % 2],
			    (i / 2) % 2);
	}
	printf("  %d of %d pages the same through the cache\n", same, pages);
	CHECK_INT(same, pages);
	CHECK_INT(chatfix_int(pg.url, "SELECT count(*) FROM messages WHERE content LIKE "
	    "'pc_left <%'", NULL), 10);
	http_resp_free(&r);
	stack_stop(&st);
	stack_sh("rm -rf %s", dir);
	chatfix_exec(pg.url, "DELETE FROM messages WHERE content LIKE 'pc_%'");
}

/*
 * The page cache on PostgreSQL raced by writes (chatrace.h): three users on three
 * channels (the seeded 'starcord' and two new ones), writers through two write pools,
 * nickname changes, readers on the two cached workers; every cached page shows every
 * acknowledged message, one asked for in a quiet moment is the uncached page byte for
 * byte, identity and gzip, and so is every one once the writers stop.
 */
static void
test_pg_page_cache_race(void)
{
	struct chatrace cr = {
		.cached = "/cached",
		.sends = { "/chat/message-send", "/race-send" },
		.chans = { "starcord", "pg_race_a", "pg_race_b" },
		.seconds = 6,
	};
	struct stack st;
	char dir[64];

	if (chatfix_int(pg.url, "SELECT count(*) FROM channels", NULL) < 0)
		CHECK_INT(chatfix_seed(pg.url, "SEED_MSG_COUNT=5000 BENCH_SKEW=0.5 "
		    "SEED_CHANNEL_COUNT=32"), 0);
	if (cache_stack(&st, dir, sizeof(dir)) < 0) {
		CHECK(!"stack started");
		return;
	}
	cr.base = st.base;
	CHECK(chatrace_run(&cr) == 0);
	chatrace_check(&cr);
	stack_stop(&st);
	stack_sh("rm -rf %s", dir);
	chatfix_exec(pg.url, "DELETE FROM messages WHERE content LIKE 'race w%'");
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	memset(&pg, 0, sizeof(pg));
	if (pgtmp_start(&pg) < 0) {
		CHECK(!"PostgreSQL cluster started");
		return harness_done();
	}
	pg_up = 1;
	RUN(test_seed_deterministic);
	RUN(test_pg_read_committed);
	RUN(test_pg_serializable);
	RUN(test_pg_page_cache_two_channels);
	RUN(test_pg_page_cache_race);
	pgtmp_stop(&pg);
	return harness_done();
}
