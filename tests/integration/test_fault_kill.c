/*
 * test_fault_kill: the reliability promise under worker crashes.  A mixed load (client
 * threads: 70% GETs of the rest endpoint, 15% POSTs /rest/v1/fault_item that insert a row,
 * 15% POSTs /chat/message-send, every POST carrying a unique marker) runs against the real
 * stack (nginx, sluiced, bin/rest, bin/chat_message_send) while a killer thread sends
 * SIGKILL to a random worker of the two write pools every 100 ms.  Afterwards the database
 * is read directly and every request is accounted for:
 *
 *   - lost: a POST answered 2xx whose marker is not in the database.  Must be 0.
 *   - failed but present: a POST answered with an error whose row exists all the same (the
 *     worker died after COMMIT, before its answer reached nginx): a legitimate unknown
 *     outcome, reported, not a loss.
 *   - every POST error reaches the client as a non-2xx status with a JSON error body; no
 *     marker is stored twice (nginx never replays a POST); no GET gets a 5xx in the tuned
 *     profile (nginx retries a GET whose worker died, fastcgi_next_upstream).
 *
 * It runs on SQLite and on PostgreSQL, with the tuned profile, for SLUICE_FAULT_SECONDS
 * (default 20) each; then once on SQLite behind the default profile for a quarter of that,
 * where GETs caught by a kill are expected to fail (that profile passes requests straight to
 * the socket, like a stock configuration: nginx has a single peer and no retry), so there
 * only the write checks apply and the GET 5xx count is printed.
 *
 * The killer spares workers younger than 1.2 s: the supervisor counts a worker that dies
 * within POOL_QUICK_MS (1 s) of its start as a quick failure and, after crash_loop_tries of
 * them in a row, fails the pool on purpose (a binary that cannot start).  The faults
 * simulated here are crashes of serving workers, which must never look like that.  Under
 * AddressSanitizer it spares them 3 s: a sanitized worker starts so much slower that with
 * every worker killed at 1.2 s the restarts took the 2-core machine, and a few GETs found
 * nothing but workers that died before answering, all seven tries of each.  PostgreSQL
 * was spared 3 s too while a rest worker read its schema once per serving thread (34
 * times for a restart under load, on backends whose catalog caches were cold): its run
 * then made 550 to 2,900 requests in 20 s at 1.2 s and failed a few GETs.  Read once per
 * worker (apps/rest/schemas.c), it makes 5,600 to 7,500 requests with about 170
 * kills at 1.2 s, every GET answered, against 38,000 to 44,000 on SQLite (each restart
 * still forks two backends).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "chatfix.h"
#include "db.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define FK_CLIENTS	8
#define FK_KILL_MS	100
#if defined(__SANITIZE_ADDRESS__)
#define FK_YOUNG_MS	3000	/* a sanitized worker starts slower */
#else
#define FK_YOUNG_MS	1200
#endif
#define FK_TIMEOUT_MS	60000
#define FK_PIDS		64
/* The chat's session key: given, since a PostgreSQL database has no place for a key file. */
#define FK_KEY		"00112233445566778899aabbccddeeff"

enum fk_kind { FK_REST, FK_CHAT };

/* One POST: its marker is "fk-<id>". */
struct fk_post {
	uint32_t id;
	unsigned char kind;
	unsigned char json_ok;	/* a non-2xx answer had a JSON error body */
	short status;		/* 0: transport error */
};

struct fk_client {
	pthread_t tid;
	int index;
	const char *base;
	const char *cookie;
	volatile int *stop;
	unsigned seed;
	long gets, get_5xx, get_other, get_fail, last_get_bad;
	struct fk_post *posts;
	size_t nposts, cap;
};

struct fk_killer {
	pthread_t tid;
	struct stack *s;
	volatile int stop;
	long ticks, kills, skipped;
	unsigned seed;
	struct {
		pid_t pid;
		long long seen;
	} known[FK_PIDS * 4];
	size_t nknown;
};

/* 1 when body is a JSON object with a string "code" (the error body of every layer). */
static int
fk_json_error(const struct http_resp *r)
{
	cJSON *j;
	int ok;

	if (r->body.data == NULL || r->body.len == 0)
		return 0;
	j = cJSON_ParseWithLength(r->body.data, r->body.len);
	ok = j != NULL && cJSON_IsObject(j) && cJSON_IsString(cJSON_GetObjectItem(j, "code"));
	cJSON_Delete(j);
	return ok;
}

static int
fk_push(struct fk_client *c, const struct fk_post *p)
{
	if (c->nposts == c->cap) {
		size_t n = c->cap ? c->cap * 2 : 1024;
		struct fk_post *np = realloc(c->posts, n * sizeof(*np));

		if (np == NULL)
			return -1;
		c->posts = np;
		c->cap = n;
	}
	c->posts[c->nposts++] = *p;
	return 0;
}

static void *
fk_client_run(void *arg)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	struct fk_client *c = arg;
	struct http_resp r;
	struct fk_post p;
	char url[256], body[128], ch[512];
	const char *chat_h[4];
	uint32_t seq = 0;

	snprintf(ch, sizeof(ch), "Cookie: %s", c->cookie);
	chat_h[0] = "Content-Type: application/json";
	chat_h[1] = "Datastar-Request: true";
	chat_h[2] = ch;
	chat_h[3] = NULL;
	http_resp_init(&r);
	while (!*c->stop) {
		int dice = (int)(rand_r(&c->seed) % 100);

		if (dice < 70) {
			snprintf(url, sizeof(url), dice % 2 ? "%s/rest/v1/fault_item?select=id,"
			    "marker&order=id.desc&limit=3" : "%s/rest/v1/channels?select=id,name"
			    "&order=id&limit=5", c->base);
			c->gets++;
			if (http_do("GET", url, NULL, NULL, 0, FK_TIMEOUT_MS, &r) < 0)
				c->get_fail++;
			else if (r.status >= 500) {
				c->get_5xx++;
				c->last_get_bad = r.status;
				if (c->get_5xx <= 3)
					printf("  GET %s: %ld %.200s\n", url + strlen(c->base),
					    r.status, r.body.data ? r.body.data : "");
			} else if (r.status != 200) {
				c->get_other++;
				c->last_get_bad = r.status;
			}
			continue;
		}
		memset(&p, 0, sizeof(p));
		p.id = (uint32_t)c->index * 1000000u + seq++;
		p.kind = dice < 85 ? FK_REST : FK_CHAT;
		if (p.kind == FK_REST) {
			snprintf(url, sizeof(url), "%s/rest/v1/fault_item", c->base);
			snprintf(body, sizeof(body), "{\"marker\":\"fk-%u\"}", p.id);
			(void)http_do("POST", url, json, body, strlen(body), FK_TIMEOUT_MS, &r);
		} else {
			snprintf(url, sizeof(url), "%s/chat/message-send", c->base);
			snprintf(body, sizeof(body), "{\"messageSend\":\"fk-%u\"}", p.id);
			(void)http_do("POST", url, chat_h, body, strlen(body), FK_TIMEOUT_MS, &r);
		}
		p.status = (short)r.status;
		p.json_ok = r.status >= 300 && fk_json_error(&r);
		if (fk_push(c, &p) < 0)
			break;
	}
	http_resp_free(&r);
	return NULL;
}

/* The first time the killer saw pid, remembered so that young workers are spared. */
static long long
fk_seen(struct fk_killer *k, pid_t pid, long long now)
{
	size_t i;

	for (i = 0; i < k->nknown; i++)
		if (k->known[i].pid == pid)
			return k->known[i].seen;
	if (k->nknown == sizeof(k->known) / sizeof(k->known[0])) {
		/* Forget the oldest half: long gone pids, in practice. */
		memmove(k->known, k->known + k->nknown / 2,
		    (k->nknown - k->nknown / 2) * sizeof(k->known[0]));
		k->nknown -= k->nknown / 2;
	}
	k->known[k->nknown].pid = pid;
	k->known[k->nknown].seen = now;
	k->nknown++;
	return now;
}

static void *
fk_killer_run(void *arg)
{
	struct fk_killer *k = arg;
	pid_t pids[FK_PIDS], old[FK_PIDS];
	long long now, next = stack_now_ms();
	int n, m, i;

	while (!k->stop) {
		/* One tick every FK_KILL_MS, however long the scan of /proc took. */
		next += FK_KILL_MS;
		if ((now = stack_now_ms()) < next)
			usleep((useconds_t)(next - now) * 1000);
		else if (now > next + FK_KILL_MS)
			next = now;
		now = stack_now_ms();
		k->ticks++;
		n = stack_worker_pids(k->s, "rest", pids, FK_PIDS / 2);
		n += stack_worker_pids(k->s, "chat_message_send", pids + n, FK_PIDS / 2);
		for (i = m = 0; i < n; i++)
			if (now - fk_seen(k, pids[i], now) >= FK_YOUNG_MS)
				old[m++] = pids[i];
		if (m == 0) {
			k->skipped++;
			continue;
		}
		if (kill(old[rand_r(&k->seed) % (unsigned)m], SIGKILL) == 0)
			k->kills++;
	}
	return NULL;
}

static int
fk_cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/* The markers "fk-N" the query returns, as sorted numbers; count in *n.  NULL on failure. */
static uint32_t *
fk_markers(struct db *db, const char *sql, size_t *n)
{
	struct db_stmt *st;
	uint32_t *v = NULL, *nv;
	size_t cap = 0;
	const char *t;
	int rc;

	*n = 0;
	if ((st = db_prepare(db, sql)) == NULL)
		return NULL;
	while ((rc = db_step(st)) == DB_ROW) {
		if ((t = db_column_text(st, 0, NULL)) == NULL || strncmp(t, "fk-", 3) != 0)
			continue;
		if (*n == cap) {
			cap = cap ? cap * 2 : 4096;
			if ((nv = realloc(v, cap * sizeof(*v))) == NULL)
				goto fail;
			v = nv;
		}
		v[(*n)++] = (uint32_t)strtoul(t + 3, NULL, 10);
	}
	if (rc != DB_DONE)
		goto fail;
	db_reset(st);
	if (v == NULL)
		v = malloc(sizeof(*v));
	qsort(v, *n, sizeof(*v), fk_cmp_u32);
	return v;
fail:
	db_reset(st);
	free(v);
	return NULL;
}

static int
fk_has(const uint32_t *v, size_t n, uint32_t id)
{
	return bsearch(&id, v, n, sizeof(*v), fk_cmp_u32) != NULL;
}

static size_t
fk_dups(const uint32_t *v, size_t n)
{
	size_t i, d = 0;

	for (i = 1; i < n; i++)
		d += v[i] == v[i - 1];
	return d;
}

/*
 * Runs the load and the killer for seconds against a stack whose endpoint list names
 * conf_url (SLUICE_DB_CHAT, when set, overrides it), then checks and prints the accounting
 * read from dburl, the database the stack really used.  get5xx_allowed: the default
 * profile, where GETs cannot be retried.
 */
static void
fk_run(const char *label, const char *conf_url, const char *dburl, const char *profile,
    int seconds, int get5xx_allowed)
{
	struct fk_client cl[FK_CLIENTS];
	struct fk_killer *k = NULL;
	struct stack s;
	struct http_resp r;
	struct db *db = NULL;
	char conf[1024], cookie[256], err[256], state[32];
	uint32_t *rest = NULL, *chat = NULL;
	size_t nrest = 0, nchat = 0, i, j;
	volatile int stop = 0;
	long gets = 0, get5xx = 0, get_other = 0, get_fail = 0, posts = 0, acked = 0, errors = 0;
	long nonjson = 0, transport = 0, lost = 0, present = 0, phantom = 0, last_bad = 0;
	int started = 0, killer = 0, up = 0;

	memset(cl, 0, sizeof(cl));
	http_resp_init(&r);
	snprintf(conf, sizeof(conf),
	    "db chat %s\n"
	    "chat_page =/ workers=1 threads=1 db=chat session_key=%s\n"
	    "chat_message_send =/chat/message-send workers=4 threads=4 db=chat "
	    "session_key=%s\n"
	    "rest /rest/v1/ workers=8 threads=2 db=chat\n", conf_url, FK_KEY, FK_KEY);
	if (stack_start(&s, conf, profile, 2, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	up = 1;
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	CHECK(stack_wait_pool(&s, "chat_message_send", 10000) == 0);
	CHECK(chatfix_get(s.base, "/", NULL, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	if (chatfix_cookie(&r, cookie, sizeof(cookie)) < 0) {
		CHECK(!"a session cookie");
		goto out;
	}
	/* Every worker past its quick-death window, so that the killer may pick any. */
	usleep((useconds_t)FK_YOUNG_MS * 1000);

	if ((k = calloc(1, sizeof(*k))) == NULL)
		goto out;
	k->s = &s;
	k->seed = (unsigned)getpid();
	{
		pid_t pids[FK_PIDS];
		long long old = stack_now_ms() - FK_YOUNG_MS;
		int n = stack_worker_pids(&s, "rest", pids, FK_PIDS / 2);

		n += stack_worker_pids(&s, "chat_message_send", pids + n, FK_PIDS / 2);
		for (int x = 0; x < n; x++)
			(void)fk_seen(k, pids[x], old);
	}
	for (i = 0; i < FK_CLIENTS; i++) {
		cl[i].index = (int)i + 1;
		cl[i].base = s.base;
		cl[i].cookie = cookie;
		cl[i].stop = &stop;
		cl[i].seed = (unsigned)(getpid() * 31 + (int)i);
		if (pthread_create(&cl[i].tid, NULL, fk_client_run, &cl[i]) != 0)
			break;
		started++;
	}
	if (pthread_create(&k->tid, NULL, fk_killer_run, k) == 0)
		killer = 1;
	CHECK_INT(started, FK_CLIENTS);
	CHECK(killer);
	sleep((unsigned)seconds);
	if (killer) {
		k->stop = 1;
		pthread_join(k->tid, NULL);
	}
	stop = 1;
	for (i = 0; i < (size_t)started; i++)
		pthread_join(cl[i].tid, NULL);

	/* The pools survived the storm: running, and whole again. */
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	CHECK(stack_wait_pool(&s, "chat_message_send", 10000) == 0);
	CHECK(stack_pool_state(&s, "rest", state, sizeof(state)) == 0 &&
	    strcmp(state, "running") == 0);
	CHECK(stack_pool_state(&s, "chat_message_send", state, sizeof(state)) == 0 &&
	    strcmp(state, "running") == 0);

	if (db_open(&db, dburl, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", label, err);
		CHECK(!"database opened for the accounting");
		goto out;
	}
	rest = fk_markers(db, "SELECT marker FROM fault_item", &nrest);
	chat = fk_markers(db, "SELECT content FROM messages WHERE content LIKE 'fk-%'", &nchat);
	if (rest == NULL || chat == NULL) {
		fprintf(stderr, "%s: %s\n", label, db_errmsg(db));
		CHECK(!"markers read back");
		goto out;
	}
	for (i = 0; i < (size_t)started; i++) {
		gets += cl[i].gets;
		get5xx += cl[i].get_5xx;
		get_other += cl[i].get_other;
		get_fail += cl[i].get_fail;
		if (cl[i].last_get_bad != 0)
			last_bad = cl[i].last_get_bad;
		for (j = 0; j < cl[i].nposts; j++) {
			const struct fk_post *p = &cl[i].posts[j];
			int here = p->kind == FK_REST ? fk_has(rest, nrest, p->id) :
			    fk_has(chat, nchat, p->id);

			posts++;
			if (p->status >= 200 && p->status < 300) {
				acked++;
				lost += !here;
				continue;
			}
			errors++;
			present += here;
			if (p->status == 0)
				transport++;
			else if (!p->json_ok)
				nonjson++;
		}
	}
	/* Every stored marker was sent by a client (and by one request only). */
	for (i = 0; i < nrest + nchat; i++) {
		uint32_t id = i < nrest ? rest[i] : chat[i - nrest];
		size_t c = (id / 1000000u) - 1, seq = id % 1000000u;

		if (id < 1000000u || c >= (size_t)started || seq >= cl[c].nposts ||
		    cl[c].posts[seq].id != id ||
		    cl[c].posts[seq].kind != (i < nrest ? FK_REST : FK_CHAT))
			phantom++;
	}
	printf("  %s: %ld requests, %ld GETs (%ld 5xx, %ld other, %ld transport errors), "
	    "%ld POSTs: %ld acknowledged, %ld errors (%ld failed but present, %ld not JSON, "
	    "%ld transport), %ld kills in %ld ticks (%ld without an old worker), lost %ld, "
	    "duplicates %zu, phantoms %ld\n", label, gets + posts, gets, get5xx, get_other,
	    get_fail, posts, acked, errors, present, nonjson, transport, k->kills, k->ticks,
	    k->skipped,
	    lost, fk_dups(rest, nrest) + fk_dups(chat, nchat), phantom);
	printf("  %s: pool rest crashes=%ld spawns=%ld, chat_message_send crashes=%ld "
	    "spawns=%ld\n", label, stack_pool_value(&s, "rest", "crashes"),
	    stack_pool_value(&s, "rest", "spawns"),
	    stack_pool_value(&s, "chat_message_send", "crashes"),
	    stack_pool_value(&s, "chat_message_send", "spawns"));
	CHECK_INT(lost, 0);
	CHECK_INT(nonjson, 0);
	CHECK_INT(transport, 0);
	CHECK_INT(phantom, 0);
	CHECK_INT(fk_dups(rest, nrest) + fk_dups(chat, nchat), 0);
	CHECK_INT(get_fail, 0);
	CHECK_INT(get_other, 0);
	if (!get5xx_allowed)
		CHECK_INT(get5xx, 0);
	else if (get5xx > 0)
		printf("  %s: GETs answered 5xx (last %ld): the default profile has no retry\n",
		    label, last_bad);
	/* The run did what it is about: kills happened, writes were acknowledged. */
	CHECK(k->kills >= seconds);
	CHECK(acked > 0);
	CHECK(gets > 0);
out:
	if (db != NULL)
		db_close(db);
	free(rest);
	free(chat);
	for (i = 0; i < FK_CLIENTS; i++)
		free(cl[i].posts);
	free(k);
	http_resp_free(&r);
	if (up)
		stack_stop(&s);
}

static const char fk_table[] =
    "CREATE TABLE fault_item (id integer PRIMARY KEY, marker text NOT NULL UNIQUE)";
static const char fk_table_pg[] =
    "CREATE TABLE fault_item (id serial PRIMARY KEY, marker text NOT NULL UNIQUE)";

static int
fk_seconds(void)
{
	const char *v = getenv("SLUICE_FAULT_SECONDS");
	long n = v != NULL ? strtol(v, NULL, 10) : 20;

	return n >= 1 && n <= 3600 ? (int)n : 20;
}

/* A seeded chat database on SQLite at dir/chat.db, plus the fault_item table. */
static int
fk_sqlite_db(char *dir, size_t dlen, char *url, size_t ulen)
{
	snprintf(dir, dlen, "/tmp/sluice-fk-XXXXXX");
	if (mkdtemp(dir) == NULL)
		return -1;
	snprintf(url, ulen, "sqlite:%s/chat.db", dir);
	if (chatfix_seed(url, "") != 0 || chatfix_exec(url, fk_table) != 0)
		return -1;
	return 0;
}

static void
test_fault_kill_sqlite(void)
{
	char dir[64], url[128];

	if (fk_sqlite_db(dir, sizeof(dir), url, sizeof(url)) < 0)
		CHECK(!"SQLite database seeded");
	else
		fk_run("sqlite tuned", url, url, "tuned", fk_seconds(), 0);
	stack_sh("rm -rf %s", dir);
}

static void
test_fault_kill_postgres(void)
{
	struct pgtmp pg;

	/* Pools of 16 + 32 connections, new ones opening while killed ones close. */
	if (pgtmp_start_conns(&pg, 100) < 0) {
		CHECK(!"PostgreSQL cluster started");
		return;
	}
	if (chatfix_seed(pg.url, "") != 0 || chatfix_exec(pg.url, fk_table_pg) != 0) {
		CHECK(!"PostgreSQL database seeded");
		pgtmp_stop(&pg);
		return;
	}
	setenv("SLUICE_DB_CHAT", pg.url, 1);
	/* The stack reads the URL from the environment; the accounting uses it directly. */
	fk_run("postgresql tuned", "sqlite:/nonexistent.db", pg.url, "tuned", fk_seconds(), 0);
	unsetenv("SLUICE_DB_CHAT");
	pgtmp_stop(&pg);
}

static void
test_fault_kill_sqlite_default_profile(void)
{
	char dir[64], url[128];
	int n = fk_seconds() / 4;

	if (fk_sqlite_db(dir, sizeof(dir), url, sizeof(url)) < 0)
		CHECK(!"SQLite database seeded");
	else
		fk_run("sqlite default", url, url, "default", n < 2 ? 2 : n, 1);
	stack_sh("rm -rf %s", dir);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	RUN(test_fault_kill_sqlite);
	RUN(test_fault_kill_postgres);
	RUN(test_fault_kill_sqlite_default_profile);
	curl_global_cleanup();
	return harness_done();
}
