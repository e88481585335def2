/*
 * test_records_pg_writes: the records API's creates on PostgreSQL (handlers/records/write.c,
 * commit.c), through the real stack (nginx tuned, sluiced, bin/records with workers=2
 * threads=8 db_conns=2 on a throwaway cluster seeded by records-seed -u 20 -p 200 -c 400).
 *
 *   - group commit: 16 clients create comments as user 1, every fourth one with user 2 as
 *     its author, which the create rule (author = @request.auth.id) refuses.  The creates
 *     that meet in a batch commit in one transaction (rows sharing an xmin); every refused
 *     one answers 400 "Failed to create record." alone and is not stored, every other one
 *     answers 200 with its record and is stored once.
 *   - a rule that reads its own collection: a create whose rule is true only once the new
 *     record is in its table (@collection.threads.id ?= id) passes, as it did when every
 *     create under a rule ran in a transaction of its own.
 *   - a missing relation: a create naming a record that does not exist answers 400 with
 *     validation_missing_rel_records (before its rule is looked at) and stores nothing.
 *   - a token's record changed under the auth cache (handlers/records/auth.c): after
 *     creates that leave user 1's record kept in both workers, a change of its name lets
 *     creates through (they read it afresh), a name the notes rule refuses
 *     (@request.auth.name != 'blocked') refuses them, and a new tokenKey makes the old
 *     token answer 401; none of the refused ones is stored.
 *   - kill under creates: 8 clients create posts with unique titles while a records worker
 *     is killed with SIGKILL every 1.3 s.  Every create answered 200 is stored once; no
 *     row is stored twice or unasked; every other answer is a JSON error (or none).
 */
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "chatfix.h"
#include "http.h"
#include "killwrites.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define RW_CLIENTS	16
#define RW_POSTS	48	/* each client's; every fourth refused by the rule */
#define RW_WRITERS	8
#define RW_KILL_MS	1300
#define RW_KILLS	4
#define RW_TIMEOUT_MS	30000
#define RW_TOKEN_MAX	1024

/* A collection of the test's own: its create rule sees the new record only in its table. */
static const char rw_collections[] =
    "INSERT INTO _collections VALUES ('pbc_1000000003', 'threads', 'base',\n"
    "  'title text', '', '', '@collection.threads.id ?= id', NULL, NULL);\n"
    "INSERT INTO _collections VALUES ('pbc_1000000004', 'notes', 'base',\n"
    "  'title text', '', '', '@request.auth.name != ''blocked''', NULL, NULL);\n";

static const char rw_secret_hex[] =
    "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677";

static struct pgtmp rw_pg;
static struct stack rw_s;
static int rw_up;
static char rw_sqldir[128], rw_secret[128];
static char rw_token[RW_TOKEN_MAX], rw_user1[16], rw_user2[16], rw_post[16];

/* method path with the signed-in user's token when auth, the JSON body (may be NULL). */
static int
rw_do(const char *method, const char *path, int auth, const char *body,
    struct http_resp *r)
{
	char url[512], h[RW_TOKEN_MAX + 32];
	const char *headers[3] = { "Content-Type: application/json", NULL, NULL };

	if (auth) {
		snprintf(h, sizeof(h), "Authorization: %s", rw_token);
		headers[1] = h;
	}
	snprintf(url, sizeof(url), "%s%s", rw_s.base, path);
	return http_do(method, url, headers, body, body ? strlen(body) : 0, RW_TIMEOUT_MS, r);
}

/* The string at key (of the object at key2 when not NULL) of a JSON body into out. */
static int
rw_json_str(const struct http_resp *r, const char *key2, const char *key, char *out,
    size_t len)
{
	cJSON *j = cJSON_Parse(r->body.data ? r->body.data : ""), *o = j;
	const char *v;
	int rc = -1;

	if (key2 != NULL)
		o = cJSON_GetObjectItem(j, key2);
	if ((v = cJSON_GetStringValue(cJSON_GetObjectItem(o, key))) != NULL &&
	    strlen(v) < len) {
		memcpy(out, v, strlen(v) + 1);
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}

/* 1 when r is a JSON error: the records API's {"data":{...},"message":"...","status":N},
 * or the front server's own for a worker that went away ({"code":...}). */
static int
rw_json_error(const struct http_resp *r)
{
	cJSON *j = cJSON_Parse(r->body.data ? r->body.data : "");
	int ok = cJSON_IsObject(cJSON_GetObjectItem(j, "data")) &&
	    cJSON_IsString(cJSON_GetObjectItem(j, "message")) &&
	    cJSON_IsNumber(cJSON_GetObjectItem(j, "status"));

	cJSON_Delete(j);
	return ok || http_json_code(r, NULL);
}

/* Signs in user n: its id into id (16 bytes), and for user 1 the token. */
static int
rw_signin(int n, char *id)
{
	struct http_resp r;
	char body[128];
	int rc = -1;

	http_resp_init(&r);
	snprintf(body, sizeof(body), "{\"identity\":\"user%04d@example.com\","
	    "\"password\":\"password123\"}", n);
	if (rw_do("POST", "/api/collections/users/auth-with-password", 0, body, &r) == 0 &&
	    r.status == 200 && rw_json_str(&r, "record", "id", id, 16) == 0 &&
	    (n != 1 || rw_json_str(&r, NULL, "token", rw_token, sizeof(rw_token)) == 0))
		rc = 0;
	http_resp_free(&r);
	return rc;
}

static int
rw_start(void)
{
	struct http_resp r;
	char conf[1024], path[200];
	const char *tests = getenv("SLUICE_TESTS");
	FILE *f;
	int rc;

	signal(SIGPIPE, SIG_IGN);
	snprintf(rw_sqldir, sizeof(rw_sqldir), "/tmp/sluice-records-pgw-%d-sql", (int)getpid());
	if (stack_sh("mkdir -p %s && cp sql/records/collections.sql %s/", rw_sqldir,
	    rw_sqldir) != 0)
		return -1;
	snprintf(path, sizeof(path), "%s/collections.sql", rw_sqldir);
	if ((f = fopen(path, "a")) == NULL)
		return -1;
	fputs(rw_collections, f);
	if (fclose(f) != 0)
		return -1;
	snprintf(rw_secret, sizeof(rw_secret), "/tmp/sluice-records-pgw-%d.key", (int)getpid());
	if ((f = fopen(rw_secret, "w")) == NULL)
		return -1;
	fprintf(f, "%s\n", rw_secret_hex);
	if (fclose(f) != 0)
		return -1;
	stack_sh("chmod 644 %s", rw_secret);
	if (pgtmp_start_conns(&rw_pg, 40) < 0 ||
	    stack_sh("%s/../sql/records-seed -q -u 20 -p 200 -c 400 -S %s '%s'",
	    tests ? tests : "build/rel/tests", rw_sqldir, rw_pg.url) != 0 ||
	    chatfix_exec(rw_pg.url, "CREATE INDEX ON posts (title)") != 0)
		return -1;
	snprintf(conf, sizeof(conf), "db records sqlite:/nonexistent.db\n"
	    "records /api/ workers=2 threads=8 db=records db_conns=2 db_plans=generic records_secret_file=%s "
	    "bcrypt_cost=4\n", rw_secret);
	setenv("SLUICE_DB_RECORDS", rw_pg.url, 1);
	rc = stack_start(&rw_s, conf, "tuned", 2, NULL);
	unsetenv("SLUICE_DB_RECORDS");
	if (rc < 0 || stack_wait_pool(&rw_s, "records", 10000) < 0)
		return -1;
	if (rw_signin(1, rw_user1) < 0 || rw_signin(2, rw_user2) < 0)
		return -1;
	http_resp_init(&r);
	rc = rw_do("GET", "/api/collections/posts/records?perPage=1&skipTotal=1&sort=id", 0,
	    NULL, &r) == 0 && r.status == 200 && r.body.data != NULL &&
	    strstr(r.body.data, "\"id\":\"") != NULL ? 0 : -1;
	if (rc == 0)
		memcpy(rw_post, strstr(r.body.data, "\"id\":\"") + 6, 15);
	http_resp_free(&r);
	return rc;
}

/* ---- bursts of clients ---- */

struct rw_client {
	pthread_t tid;
	int id;			/* 1, 2, ... */
	int created, refused, other, nonjson;
};

static int
rw_clients(void *(*fn)(void *), struct rw_client *c, int n, struct rw_client *sum)
{
	int i, started = 0;

	memset(sum, 0, sizeof(*sum));
	for (i = 0; i < n; i++) {
		memset(&c[i], 0, sizeof(c[i]));
		c[i].id = i + 1;
		if (pthread_create(&c[i].tid, NULL, fn, &c[i]) != 0)
			break;
		started++;
	}
	for (i = 0; i < started; i++) {
		pthread_join(c[i].tid, NULL);
		sum->created += c[i].created;
		sum->refused += c[i].refused;
		sum->other += c[i].other;
		sum->nonjson += c[i].nonjson;
	}
	return started;
}

/* ---- group commit ---- */

/* Client c's comments on rw_post: "gc-ID-N" by user 1, every fourth "gr-ID-N" with user 2
 * as its author (refused). */
static void *
rw_gc_run(void *arg)
{
	struct rw_client *c = arg;
	struct http_resp r;
	char body[256], text[32];
	int i, refuse;

	http_resp_init(&r);
	for (i = 0; i < RW_POSTS; i++) {
		refuse = i % 4 == 3;
		snprintf(text, sizeof(text), "%s-%d-%d", refuse ? "gr" : "gc", c->id, i);
		snprintf(body, sizeof(body), "{\"post\":\"%s\",\"author\":\"%s\",\"text\":\"%s\"}",
		    rw_post, refuse ? rw_user2 : rw_user1, text);
		if (rw_do("POST", "/api/collections/comments/records", 1, body, &r) != 0) {
			c->other++;
			continue;
		}
		if (r.status != 200 && !rw_json_error(&r))
			c->nonjson++;
		if (!refuse && r.status == 200 && r.body.data != NULL &&
		    strstr(r.body.data, text) != NULL)
			c->created++;
		else if (refuse && r.status == 400 && r.body.data != NULL &&
		    strstr(r.body.data, "\"message\":\"Failed to create record.\"") != NULL)
			c->refused++;
		else
			c->other++;
	}
	http_resp_free(&r);
	return NULL;
}

/*
 * Creates that meet in a batch commit together (one transaction, so their rows share an
 * xmin), and a create its rule refuses in such a group is refused alone: every other
 * create is answered 200 with its record and stored once, every refused one answered 400
 * and not stored.
 */
static void
test_records_pg_creates_group_commit_refused_alone(void)
{
	struct rw_client c[RW_CLIENTS], sum;
	long long rows, texts, xids, refused_rows;
	int started;

	if (!rw_up) {
		CHECK(!"stack up");
		return;
	}
	started = rw_clients(rw_gc_run, c, RW_CLIENTS, &sum);
	CHECK_INT(started, RW_CLIENTS);
	rows = chatfix_int(rw_pg.url, "SELECT count(*) FROM comments WHERE text LIKE 'gc-%'",
	    NULL);
	texts = chatfix_int(rw_pg.url, "SELECT count(DISTINCT text) FROM comments WHERE "
	    "text LIKE 'gc-%'", NULL);
	xids = chatfix_int(rw_pg.url, "SELECT count(DISTINCT xmin::text) FROM comments WHERE "
	    "text LIKE 'gc-%'", NULL);
	refused_rows = chatfix_int(rw_pg.url, "SELECT count(*) FROM comments WHERE "
	    "text LIKE 'gr-%' OR (text LIKE 'gc-%' AND author <> $1)", rw_user1);
	printf("  %d clients: %d records created, %d refused by the rule, %d other answers; "
	    "%lld rows stored by %lld transactions, %lld refused ones stored\n", started,
	    sum.created, sum.refused, sum.other, rows, xids, refused_rows);
	CHECK_INT(sum.created, RW_CLIENTS * RW_POSTS / 4 * 3);
	CHECK_INT(sum.refused, RW_CLIENTS * RW_POSTS / 4);
	CHECK_INT(sum.other, 0);
	CHECK_INT(sum.nonjson, 0);
	CHECK_INT(rows, sum.created);
	CHECK_INT(texts, rows);
	CHECK_INT(refused_rows, 0);
	/* Some creates were committed together. */
	CHECK(xids > 0 && xids < rows);
}

/* ---- a rule that reads its own collection ---- */

static void
test_records_pg_create_rule_reading_own_collection(void)
{
	struct http_resp r;
	long long n;

	if (!rw_up) {
		CHECK(!"stack up");
		return;
	}
	http_resp_init(&r);
	CHECK_INT(rw_do("POST", "/api/collections/threads/records", 0,
	    "{\"id\":\"t00000000000001\",\"title\":\"own\"}", &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"title\":\"own\"") != NULL);
	http_resp_free(&r);
	n = chatfix_int(rw_pg.url, "SELECT count(*) FROM threads WHERE id = 't00000000000001'",
	    NULL);
	CHECK_INT(n, 1);
}

/* ---- a missing relation ---- */

/* A create that names a record that does not exist answers 400 with the field's
 * validation_missing_rel_records, and stores nothing, also when its rule would refuse it
 * too (the relations are checked first, as before the rule). */
static void
test_records_pg_create_missing_relation_answers_validation(void)
{
	static const char want[] = "{\"data\":{\"post\":{\"code\":"
	    "\"validation_missing_rel_records\",\"message\":\"Failed to find all relation "
	    "records with the provided ids.\"}},\"message\":\"Failed to create record.\","
	    "\"status\":400}";
	struct http_resp r;
	char body[256];
	int k;

	if (!rw_up) {
		CHECK(!"stack up");
		return;
	}
	http_resp_init(&r);
	for (k = 0; k < 2; k++) {
		snprintf(body, sizeof(body), "{\"post\":\"zzzzzzzzzzzzzzz\",\"author\":\"%s\","
		    "\"text\":\"mr-%d\"}", k ? rw_user2 : rw_user1, k);
		CHECK_INT(rw_do("POST", "/api/collections/comments/records", 1, body, &r), 0);
		CHECK_INT(r.status, 400);
		CHECK_STR(r.body.data ? r.body.data : "", want);
	}
	http_resp_free(&r);
	CHECK_INT(chatfix_int(rw_pg.url, "SELECT count(*) FROM comments WHERE text LIKE 'mr-%'",
	    NULL), 0);
}

/* ---- the auth cache ---- */

#define RW_KEPT_TRIES	8

/* RW_KEPT_TRIES creates of notes titled PREFIX-k as user 1: how many answered status
 * want; the notes stored with that prefix into *stored. */
static int
rw_notes(const char *prefix, int want, int *stored)
{
	struct http_resp r;
	char body[128], sql[160];
	int k, n = 0;

	for (k = 0; k < RW_KEPT_TRIES; k++) {
		http_resp_init(&r);
		snprintf(body, sizeof(body), "{\"title\":\"%s-%d\"}", prefix, k);
		if (rw_do("POST", "/api/collections/notes/records", 1, body, &r) == 0 &&
		    r.status == want)
			n++;
		http_resp_free(&r);
	}
	snprintf(sql, sizeof(sql), "SELECT count(*) FROM notes WHERE title LIKE '%s-%%'",
	    prefix);
	*stored = (int)chatfix_int(rw_pg.url, sql, NULL);
	return n;
}

/* A create checks its token against its record as its worker last read it, and its INSERT
 * against the record as it is: every change to the record since is seen. */
static void
test_records_pg_create_sees_token_record_changes(void)
{
	char sql[256];
	int stored;

	if (!rw_up) {
		CHECK(!"stack up");
		return;
	}
	/* Kept: every create of a burst that both workers answer. */
	CHECK_INT(rw_notes("kept", 200, &stored), RW_KEPT_TRIES);
	CHECK_INT(stored, RW_KEPT_TRIES);
	/* Renamed: read afresh, still allowed. */
	snprintf(sql, sizeof(sql), "UPDATE users SET name = 'renamed' WHERE id = '%s'",
	    rw_user1);
	CHECK_INT(chatfix_exec(rw_pg.url, sql), 0);
	CHECK_INT(rw_notes("renamed", 200, &stored), RW_KEPT_TRIES);
	CHECK_INT(stored, RW_KEPT_TRIES);
	/* A name the rule refuses: refused with the record as it is now. */
	snprintf(sql, sizeof(sql), "UPDATE users SET name = 'blocked' WHERE id = '%s'",
	    rw_user1);
	CHECK_INT(chatfix_exec(rw_pg.url, sql), 0);
	CHECK_INT(rw_notes("blocked", 400, &stored), RW_KEPT_TRIES);
	CHECK_INT(stored, 0);
	/* A new tokenKey: the old token is no longer valid. */
	snprintf(sql, sizeof(sql), "UPDATE users SET name = 'User', \"tokenKey\" = "
	    "'rotated-key-000000000000000000000000000000' WHERE id = '%s'", rw_user1);
	CHECK_INT(chatfix_exec(rw_pg.url, sql), 0);
	CHECK_INT(rw_notes("rotated", 401, &stored), RW_KEPT_TRIES);
	CHECK_INT(stored, 0);
	/* Signed in again: a token of the new key. */
	CHECK_INT(rw_signin(1, rw_user1), 0);
	CHECK_INT(rw_notes("again", 200, &stored), RW_KEPT_TRIES);
	CHECK_INT(stored, RW_KEPT_TRIES);
}

/* ---- kill under creates ---- */

/* A create of a post titled "pk-ID" (killwrites.h). */
static void
rw_create(struct kw_write *w)
{
	struct http_resp r;
	char body[192];

	snprintf(body, sizeof(body), "{\"title\":\"pk-%u\",\"status\":\"draft\","
	    "\"author\":\"%s\"}", w->id, rw_user1);
	http_resp_init(&r);
	if (rw_do("POST", "/api/collections/posts/records", 1, body, &r) == 0) {
		w->status = (short)r.status;
		w->json = r.status != 200 && rw_json_error(&r);
	}
	http_resp_free(&r);
}

static void
test_records_pg_kill_under_creates(void)
{
	struct kw_result res;

	if (!rw_up) {
		CHECK(!"stack up");
		return;
	}
	if (kw_run(&rw_s, "records", RW_WRITERS, RW_KILLS, RW_KILL_MS, rw_create, rw_pg.url,
	    "SELECT count(*) FROM posts WHERE title = $1", "pk-",
	    "SELECT count(*) FROM posts WHERE title LIKE 'pk-%'", &res) < 0)
		return;
	CHECK_INT(res.kills, RW_KILLS);
	kw_check(&res, "creates", 101);
}

int
main(void)
{
	rw_up = rw_start() == 0;
	RUN(test_records_pg_creates_group_commit_refused_alone);
	RUN(test_records_pg_create_rule_reading_own_collection);
	RUN(test_records_pg_create_missing_relation_answers_validation);
	RUN(test_records_pg_create_sees_token_record_changes);
	RUN(test_records_pg_kill_under_creates);
	if (rw_up)
		stack_stop(&rw_s);
	pgtmp_stop(&rw_pg);
	if (rw_sqldir[0] != '\0')
		stack_sh("rm -rf %s", rw_sqldir);
	if (rw_secret[0] != '\0')
		unlink(rw_secret);
	return harness_done();
}
