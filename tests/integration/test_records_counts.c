/*
 * test_records_counts: the totals of the records API's lists, on SQLite and on a
 * throwaway PostgreSQL cluster, each seeded by the real seeder (records-seed -u 12 -p 150
 * -c 300) and served by the real stack (nginx, sluiced, two workers of bin/records).
 *
 * A list with totals reads them from the counts the database keeps (_counts, maintained
 * by triggers in the same transaction as each write: apps/records/coll.h) when its filter
 * is absent or one `field = 'text'` on a counted field and its list rule lets everyone
 * through; any other list counts its rows.  Checked here:
 *
 *   - every kept total equals the scanned one (the same filter with `&& id != ''` added,
 *     which the kept counts cannot answer) and the arithmetic of the writes made;
 *   - a list rule that hides rows counts only the rows the caller may list (the tests'
 *     own `tasks`, listed by their owner), and a superuser's total is every row; a rule
 *     that reads no column (`notices`: `@request.auth.id != ''`) lets the kept count
 *     answer a signed-in caller and lists nothing to others;
 *   - after a storm of concurrent creates, status changes and deletes while the workers
 *     are killed with SIGKILL, every kept count equals count(*) in the database itself,
 *     per collection and per value, whatever the writes that were cut short; and
 *     `records-seed -k` run on the live database counts them anew to the same values.
 */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "db.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define RC_CLIENTS	6
#define RC_STORM_MS	8000
#define RC_KILL_MS	1500	/* older than sluiced's quick-failure window (1 s) */
#define RC_TIMEOUT_MS	20000

static const char rc_tasks[] =
    "INSERT INTO _collections VALUES ('pbc_1000000003', 'tasks', 'base',\n"
    "  'owner relation to=users index; state select values=open|done index; "
    "created autodate',\n"
    "  'owner = @request.auth.id', 'owner = @request.auth.id',\n"
    "  '@request.auth.id != '''' && owner = @request.auth.id',\n"
    "  'owner = @request.auth.id', 'owner = @request.auth.id');\n"
    "INSERT INTO _collections VALUES ('pbc_1000000004', 'notices', 'base',\n"
    "  'kind select values=a|b index; body text',\n"
    "  '@request.auth.id != ''''', '@request.auth.id != ''''',\n"
    "  '@request.auth.id != ''''', NULL, NULL);\n";

static const char rc_secret_hex[] =
    "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff";

/* One back end under test. */
struct rc_backend {
	const char *name;
	char url[300];
	struct stack st;
	char token[RC_CLIENTS][1024];	/* user0001 ... user000N */
	char user[RC_CLIENTS][32];
	char admin[1024];
};

static struct {
	struct pgtmp pg;
	char sqldir[128];
	char litepath[128];
	char secret[128];
	struct rc_backend be[2];
} rcs;

static int
rc_seed(const char *url)
{
	const char *tests = getenv("SLUICE_TESTS");

	return stack_sh("%s/../sql/records-seed -q -f -u 12 -p 150 -c 300 -S %s '%s'",
	    tests ? tests : "build/rel/tests", rcs.sqldir, url);
}

/* Sends method path (with a token when tok is not NULL) to b's stack.  0 or -1. */
static int
rc_do(struct rc_backend *b, const char *method, const char *path, const char *tok,
    const char *body, struct http_resp *r)
{
	char url[2048], auth[1100];
	const char *hdr[3] = { "Content-Type: application/json", NULL, NULL };

	snprintf(url, sizeof(url), "%s%s", b->st.base, path);
	if (tok != NULL) {
		snprintf(auth, sizeof(auth), "Authorization: %s", tok);
		hdr[1] = auth;
	}
	return http_do(method, url, hdr, body, body ? strlen(body) : 0, RC_TIMEOUT_MS, r);
}

/* The JSON string key of the body of a 200 answer into out, or -1. */
static int
rc_json_str(const struct http_resp *r, const char *k1, const char *k2, char *out,
    size_t len)
{
	cJSON *j, *v;
	int rc = -1;

	if (r->status != 200 || (j = cJSON_Parse(r->body.data)) == NULL)
		return -1;
	v = cJSON_GetObjectItem(j, k1);
	if (k2 != NULL)
		v = cJSON_GetObjectItem(v, k2);
	if (cJSON_IsString(v) && strlen(v->valuestring) < len) {
		memcpy(out, v->valuestring, strlen(v->valuestring) + 1);
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}

/* Signs in identity on collection coll; the token (and the record id) into b. */
static int
rc_signin(struct rc_backend *b, const char *coll, const char *identity, char *tok,
    size_t toklen, char *id, size_t idlen)
{
	char path[200], body[200];
	struct http_resp r;
	int rc;

	snprintf(path, sizeof(path), "/api/collections/%s/auth-with-password", coll);
	snprintf(body, sizeof(body), "{\"identity\":\"%s\",\"password\":\"password123\"}",
	    identity);
	http_resp_init(&r);
	rc = rc_do(b, "POST", path, NULL, body, &r) < 0 ||
	    rc_json_str(&r, "token", NULL, tok, toklen) < 0 ||
	    (id != NULL && rc_json_str(&r, "record", "id", id, idlen) < 0) ? -1 : 0;
	http_resp_free(&r);
	return rc;
}

static int
rc_start_one(struct rc_backend *b, const char *url, int pg)
{
	char conf[1024];
	const char *lite = rcs.be[0].url;
	int i, rc;

	snprintf(b->url, sizeof(b->url), "%s", url);
	if (rc_seed(url) != 0)
		return -1;
	if (!pg)
		stack_sh("chmod 666 %s", rcs.litepath);
	snprintf(conf, sizeof(conf), "db records %s\nrecords /api/ workers=2 threads=2 "
	    "db=records db_plans=generic records_secret_file=%s bcrypt_cost=4\n",
	    lite, rcs.secret);
	if (pg)
		setenv("SLUICE_DB_RECORDS", url, 1);
	rc = stack_start(&b->st, conf, "tuned", 1, NULL);
	unsetenv("SLUICE_DB_RECORDS");
	if (rc < 0)
		return -1;
	for (i = 0; i < RC_CLIENTS; i++) {
		char who[64];

		snprintf(who, sizeof(who), "user%04d@example.com", i + 1);
		if (rc_signin(b, "users", who, b->token[i], sizeof(b->token[i]), b->user[i],
		    sizeof(b->user[i])) < 0)
			return -1;
	}
	return rc_signin(b, "_superusers", "admin@example.com", b->admin, sizeof(b->admin),
	    NULL, 0);
}

static int
rc_start(void)
{
	char url[200], p[200];
	FILE *f;

	signal(SIGPIPE, SIG_IGN);
	snprintf(rcs.sqldir, sizeof(rcs.sqldir), "/tmp/sluice-rcounts-%d-sql", (int)getpid());
	snprintf(p, sizeof(p), "%s/collections.sql", rcs.sqldir);
	if (stack_sh("mkdir -p %s && cp sql/records/collections.sql %s/", rcs.sqldir,
	    rcs.sqldir) != 0 || (f = fopen(p, "a")) == NULL)
		return -1;
	fputs(rc_tasks, f);
	if (fclose(f) != 0)
		return -1;
	snprintf(rcs.litepath, sizeof(rcs.litepath), "/tmp/sluice-rcounts-%d.db", (int)getpid());
	snprintf(rcs.secret, sizeof(rcs.secret), "/tmp/sluice-rcounts-%d.key", (int)getpid());
	if ((f = fopen(rcs.secret, "w")) == NULL)
		return -1;
	fprintf(f, "%s\n", rc_secret_hex);
	if (fclose(f) != 0)
		return -1;
	stack_sh("chmod 644 %s", rcs.secret);
	rcs.be[0].name = "sqlite";
	rcs.be[1].name = "postgresql";
	snprintf(url, sizeof(url), "sqlite:%s", rcs.litepath);
	if (rc_start_one(&rcs.be[0], url, 0) < 0)
		return -1;
	if (pgtmp_start(&rcs.pg) < 0)
		return -1;
	return rc_start_one(&rcs.be[1], rcs.pg.url, 1);
}

static void
rc_stop(void)
{
	stack_stop(&rcs.be[0].st);
	stack_stop(&rcs.be[1].st);
	pgtmp_stop(&rcs.pg);
	stack_sh("rm -rf %s %s %s %s-wal %s-shm %s-wlock", rcs.sqldir, rcs.secret, rcs.litepath,
	    rcs.litepath, rcs.litepath, rcs.litepath);
}

/* The totalItems of GET /api/collections/COLL/records?perPage=1&filter=F (F URL-encoded
 * here; "" for none), or -1. */
static long
rc_total(struct rc_backend *b, const char *coll, const char *filter, const char *tok)
{
	char path[1024], *enc = NULL;
	struct http_resp r;
	cJSON *j, *v;
	long n = -1;

	if (*filter != '\0' && (enc = curl_easy_escape(NULL, filter, 0)) == NULL)
		return -1;
	snprintf(path, sizeof(path), "/api/collections/%s/records?perPage=1%s%s", coll,
	    enc ? "&filter=" : "", enc ? enc : "");
	curl_free(enc);
	http_resp_init(&r);
	if (rc_do(b, "GET", path, tok, NULL, &r) == 0 && r.status == 200 &&
	    (j = cJSON_Parse(r.body.data)) != NULL) {
		v = cJSON_GetObjectItem(j, "totalItems");
		if (cJSON_IsNumber(v))
			n = (long)v->valuedouble;
		cJSON_Delete(j);
	}
	http_resp_free(&r);
	return n;
}

/* Checks that the kept total of filter (on coll) equals the scanned one, and returns it. */
static long
rc_same(struct rc_backend *b, const char *coll, const char *filter, const char *tok)
{
	char scan[512];
	long kept, scanned;

	snprintf(scan, sizeof(scan), "%s%s%sid != ''", *filter ? "(" : "", filter,
	    *filter ? ") && " : "");
	kept = rc_total(b, coll, filter, tok);
	scanned = rc_total(b, coll, scan, tok);
	if (kept < 0 || kept != scanned)
		harness_fail(__FILE__, __LINE__, "%s: %s [%s]: kept total %ld, rows %ld",
		    b->name, coll, filter, kept, scanned);
	return kept;
}

/* Creates a post of client i with status; its id into id[16].  0 or -1. */
static int
rc_create(struct rc_backend *b, int i, const char *status, char id[16])
{
	char body[300];
	struct http_resp r;
	int rc;

	snprintf(body, sizeof(body), "{\"title\":\"counted\",\"status\":\"%s\",\"author\":\"%s\"}",
	    status, b->user[i]);
	http_resp_init(&r);
	rc = rc_do(b, "POST", "/api/collections/posts/records", b->token[i], body, &r) < 0 ||
	    rc_json_str(&r, "id", NULL, id, 16) < 0 ? -1 : 0;
	http_resp_free(&r);
	return rc;
}

/* PATCHes (status non-NULL) or DELETEs post id as client i: the HTTP status, or 0. */
static long
rc_change(struct rc_backend *b, int i, const char *id, const char *status)
{
	char path[200], body[100];
	struct http_resp r;
	long s;

	snprintf(path, sizeof(path), "/api/collections/posts/records/%s", id);
	snprintf(body, sizeof(body), "{\"status\":\"%s\"}", status ? status : "");
	http_resp_init(&r);
	rc_do(b, status ? "PATCH" : "DELETE", path, b->token[i], status ? body : NULL, &r);
	s = r.status;
	http_resp_free(&r);
	return s;
}

/*
 * The kept counts are what a list reads: with 1000 added to the draft posts' row, the
 * lists that the counts answer say so and the others do not; then it is taken back.
 */
static void
rc_kept_read(struct rc_backend *b, long drafts)
{
	struct db *db = NULL;
	char err[256];
	int i;

	if (db_open(&db, b->url, NULL, err, sizeof(err)) < 0) {
		harness_fail(__FILE__, __LINE__, "%s: %s", b->url, err);
		return;
	}
	for (i = 0; i < 2; i++) {
		CHECK(db_exec(db, i == 0 ? "UPDATE _counts SET n = n + 1000 WHERE coll = 'posts' "
		    "AND field = 'status' AND value = 'draft' AND slot = 0" : "UPDATE _counts SET "
		    "n = n - 1000 WHERE coll = 'posts' AND field = 'status' AND value = 'draft' AND "
		    "slot = 0") == 0);
		CHECK_INT(rc_total(b, "posts", "status = 'draft'", NULL), drafts + (i ? 0 : 1000));
		CHECK_INT(rc_total(b, "posts", "(status = 'draft') && id != ''", NULL), drafts);
		CHECK_INT(rc_total(b, "posts", "status:lower = 'draft'", NULL), drafts);
	}
	db_close(db);
}

static void
rc_totals_exact(struct rc_backend *b)
{
	static const char *const st[] = { "published", "draft", "archived" };
	char filter[200], ids[6][16];
	long all, by[3], mine;
	int i;

	all = rc_same(b, "posts", "", NULL);
	CHECK_INT(all, 150);
	for (i = 0; i < 3; i++) {
		snprintf(filter, sizeof(filter), "status = '%s'", st[i]);
		by[i] = rc_same(b, "posts", filter, NULL);
	}
	CHECK_INT(by[0] + by[1] + by[2], all);
	/* The same comparison spelt the other ways the filter language allows. */
	CHECK_INT(rc_same(b, "posts", "(status=\"draft\")", NULL), by[1]);
	CHECK_INT(rc_same(b, "posts", "'archived' = status", NULL), by[2]);
	CHECK_INT(rc_same(b, "posts", "status = 'nope'", NULL), 0);
	/* Not a kept count, still exact: a modifier, an any-of operator, two leaves. */
	CHECK_INT(rc_same(b, "posts", "status:lower = 'draft'", NULL), by[1]);
	CHECK_INT(rc_same(b, "posts", "status ?= 'draft'", NULL), by[1]);
	CHECK_INT(rc_same(b, "posts", "status = 'draft' || status = 'archived'", NULL),
	    by[1] + by[2]);
	snprintf(filter, sizeof(filter), "author = '%s'", b->user[0]);
	mine = rc_same(b, "posts", filter, NULL);
	rc_same(b, "comments", "", NULL);
	/* Writes: 6 creates, 2 status changes, 2 deletes. */
	for (i = 0; i < 6; i++)
		CHECK(rc_create(b, 0, st[i % 3], ids[i]) == 0);
	CHECK_INT(rc_change(b, 0, ids[0], "archived"), 200);	/* published -> archived */
	CHECK_INT(rc_change(b, 0, ids[1], "draft"), 200);	/* draft -> draft */
	CHECK_INT(rc_change(b, 0, ids[2], NULL), 204);		/* archived, deleted */
	CHECK_INT(rc_change(b, 0, ids[3], NULL), 204);		/* published, deleted */
	CHECK_INT(rc_change(b, 1, ids[4], NULL), 404);		/* not client 1's */
	CHECK_INT(rc_same(b, "posts", "", NULL), all + 4);
	/* A page past the end: no rows to carry the total, which is still read. */
	{
		struct http_resp r;
		char want[64];

		http_resp_init(&r);
		CHECK(rc_do(b, "GET", "/api/collections/posts/records?page=9999&filter=status%3D"
		    "'draft'", NULL, NULL, &r) == 0 && r.status == 200 &&
		    strstr(r.body.data, "\"items\":[]") != NULL);
		snprintf(want, sizeof(want), "\"totalItems\":%ld,", by[1] + 2);
		CHECK(r.body.data != NULL && strstr(r.body.data, want) != NULL);
		http_resp_free(&r);
	}
	CHECK_INT(rc_same(b, "posts", "status = 'published'", NULL), by[0] + 0);
	CHECK_INT(rc_same(b, "posts", "status = 'draft'", NULL), by[1] + 2);
	CHECK_INT(rc_same(b, "posts", "status = 'archived'", NULL), by[2] + 2);
	CHECK_INT(rc_same(b, "posts", filter, NULL), mine + 4);
	/* A comment on a new post counts under that post. */
	snprintf(filter, sizeof(filter), "{\"post\":\"%s\",\"author\":\"%s\",\"text\":\"hi\"}",
	    ids[5], b->user[0]);
	{
		struct http_resp r;

		http_resp_init(&r);
		CHECK(rc_do(b, "POST", "/api/collections/comments/records", b->token[0], filter,
		    &r) == 0 && r.status == 200);
		http_resp_free(&r);
	}
	snprintf(filter, sizeof(filter), "post = '%s'", ids[5]);
	CHECK_INT(rc_same(b, "comments", filter, NULL), 1);
	rc_kept_read(b, by[1] + 2);
}

/* A list rule that hides rows: each owner counts its own tasks, a superuser all of them. */
static void
rc_totals_rule(struct rc_backend *b)
{
	char body[300];
	struct http_resp r;
	int i, j;

	for (i = 0; i < 2; i++)
		for (j = 0; j < 3 - i; j++) {
			snprintf(body, sizeof(body), "{\"owner\":\"%s\",\"state\":\"%s\"}",
			    b->user[i], j == 0 ? "done" : "open");
			http_resp_init(&r);
			CHECK(rc_do(b, "POST", "/api/collections/tasks/records", b->token[i],
			    body, &r) == 0 && r.status == 200);
			http_resp_free(&r);
		}
	CHECK_INT(rc_total(b, "tasks", "", b->token[0]), 3);
	CHECK_INT(rc_total(b, "tasks", "", b->token[1]), 2);
	CHECK_INT(rc_total(b, "tasks", "", b->token[2]), 0);
	CHECK_INT(rc_total(b, "tasks", "", NULL), 0);
	CHECK_INT(rc_total(b, "tasks", "state = 'open'", b->token[0]), 2);
	CHECK_INT(rc_total(b, "tasks", "state = 'open'", b->token[1]), 1);
	CHECK_INT(rc_same(b, "tasks", "", b->admin), 5);
	CHECK_INT(rc_same(b, "tasks", "state = 'done'", b->admin), 2);
}

/*
 * A list rule that reads no column (`@request.auth.id != ''`) is true or false for the
 * whole list: signed in, the kept count answers (a count altered in the database shows);
 * signed out, nothing is listed and the total is 0.
 */
static void
rc_totals_constant_rule(struct rc_backend *b)
{
	struct http_resp r;
	struct db *db = NULL;
	char err[256];
	int i;

	for (i = 0; i < 3; i++) {
		http_resp_init(&r);
		CHECK(rc_do(b, "POST", "/api/collections/notices/records", b->token[0],
		    i ? "{\"kind\":\"a\"}" : "{\"kind\":\"b\"}", &r) == 0 && r.status == 200);
		http_resp_free(&r);
	}
	CHECK_INT(rc_same(b, "notices", "", b->token[1]), 3);
	CHECK_INT(rc_same(b, "notices", "kind = 'a'", b->token[1]), 2);
	CHECK_INT(rc_total(b, "notices", "", NULL), 0);
	CHECK_INT(rc_total(b, "notices", "kind = 'a'", NULL), 0);
	if (db_open(&db, b->url, NULL, err, sizeof(err)) < 0) {
		harness_fail(__FILE__, __LINE__, "%s: %s", b->url, err);
		return;
	}
	/* A slot of its own: a count is the sum of its slots, whichever wrote them. */
	CHECK(db_exec(db, "INSERT INTO _counts VALUES ('notices', 'kind', 'a', 99, 100)") == 0);
	CHECK_INT(rc_total(b, "notices", "kind = 'a'", b->token[1]), 102);
	CHECK_INT(rc_total(b, "notices", "kind = 'a'", NULL), 0);
	CHECK(db_exec(db, "DELETE FROM _counts WHERE coll = 'notices' AND slot = 99") == 0);
	db_close(db);
}

/* A batch's creates and deletes (POST /api/batch, one committed write) keep the counts
 * as the single writes do; a batch that fails keeps them as they were. */
static void
rc_totals_batch(struct rc_backend *b)
{
	char body[1200], ids[2][16];
	struct http_resp r;
	long all, drafts;

	all = rc_same(b, "posts", "", NULL);
	drafts = rc_same(b, "posts", "status = 'draft'", NULL);
	CHECK(rc_create(b, 0, "draft", ids[0]) == 0 && rc_create(b, 0, "draft", ids[1]) == 0);
	snprintf(body, sizeof(body), "{\"requests\":["
	    "{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\",\"body\":"
	    "{\"title\":\"b\",\"status\":\"draft\",\"author\":\"%s\"}},"
	    "{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\",\"body\":"
	    "{\"title\":\"b\",\"status\":\"draft\",\"author\":\"%s\"}},"
	    "{\"method\":\"POST\",\"url\":\"/api/collections/posts/records\",\"body\":"
	    "{\"title\":\"b\",\"status\":\"published\",\"author\":\"%s\"}},"
	    "{\"method\":\"DELETE\",\"url\":\"/api/collections/posts/records/%s\"},"
	    "{\"method\":\"DELETE\",\"url\":\"/api/collections/posts/records/%s\"}]}",
	    b->user[0], b->user[0], b->user[0], ids[0], ids[1]);
	http_resp_init(&r);
	CHECK(rc_do(b, "POST", "/api/batch", b->token[0], body, &r) == 0 && r.status == 200);
	http_resp_free(&r);
	CHECK_INT(rc_same(b, "posts", "", NULL), all + 3);
	CHECK_INT(rc_same(b, "posts", "status = 'draft'", NULL), drafts + 2);
	/* The same batch again: its deletes find nothing, so nothing of it is kept. */
	http_resp_init(&r);
	CHECK(rc_do(b, "POST", "/api/batch", b->token[0], body, &r) == 0 && r.status == 400);
	http_resp_free(&r);
	CHECK_INT(rc_same(b, "posts", "", NULL), all + 3);
	CHECK_INT(rc_same(b, "posts", "status = 'draft'", NULL), drafts + 2);
}

static void
test_records_counts_exact_sqlite(void)
{
	rc_totals_exact(&rcs.be[0]);
	rc_totals_rule(&rcs.be[0]);
	rc_totals_constant_rule(&rcs.be[0]);
	rc_totals_batch(&rcs.be[0]);
}

/*
 * On PostgreSQL every text column of the records tables and of _counts compares bytewise
 * (COLLATE "C", apps/records/coll.h), as SQLite does, whatever the database's default: a
 * list's sort asks for that order, so only then can the column's index serve it.
 */
static void
rc_bytewise(struct rc_backend *b)
{
	struct db *db = NULL;
	struct db_stmt *st;
	char err[256];

	if (db_open(&db, b->url, NULL, err, sizeof(err)) < 0) {
		harness_fail(__FILE__, __LINE__, "%s: %s", b->url, err);
		return;
	}
	st = db_prepare(db, "SELECT count(*) FILTER (WHERE collation_name = 'C'), "
	    "count(*) FILTER (WHERE collation_name IS DISTINCT FROM 'C') "
	    "FROM information_schema.columns WHERE table_schema = 'public' AND "
	    "table_name IN ('posts', 'users', 'comments', '_counts') AND data_type = 'text'");
	CHECK(st != NULL && db_step(st) == DB_ROW);
	if (st != NULL) {
		/* posts 7 (all but tags, jsonb), users 7 (all but the two bools), comments
		 * 5, _counts 3 (coll, field, value). */
		CHECK_INT(db_column_int(st, 0), 7 + 7 + 5 + 3);
		CHECK_INT(db_column_int(st, 1), 0);
		db_reset(st);
	}
	db_close(db);
}

static void
test_records_counts_exact_postgresql(void)
{
	rc_bytewise(&rcs.be[1]);
	rc_totals_exact(&rcs.be[1]);
	rc_totals_rule(&rcs.be[1]);
	rc_totals_constant_rule(&rcs.be[1]);
	rc_totals_batch(&rcs.be[1]);
}

/* One client of the storm: creates, status changes and deletes of its own posts. */
struct rc_client {
	pthread_t tid;
	struct rc_backend *b;
	int i;
	volatile int *stop;
	long ops, acked;
};

static void *
rc_client_run(void *arg)
{
	static const char *const st[] = { "published", "draft", "archived" };
	struct rc_client *c = arg;
	char ids[32][16];
	int n = 0;
	unsigned seed = (unsigned)(c->i * 7919 + 1);

	while (!*c->stop) {
		int k = (int)(rand_r(&seed) % 4);

		c->ops++;
		if (k < 2 || n == 0) {
			char id[16];

			if (rc_create(c->b, c->i, st[rand_r(&seed) % 3], id) == 0) {
				c->acked++;
				if (n < 32)
					memcpy(ids[n++], id, 16);
			}
		} else if (k == 2) {
			if (rc_change(c->b, c->i, ids[rand_r(&seed) % (unsigned)n],
			    st[rand_r(&seed) % 3]) == 200)
				c->acked++;
		} else {
			int v = (int)(rand_r(&seed) % (unsigned)n);

			if (rc_change(c->b, c->i, ids[v], NULL) == 204)
				c->acked++;
			memmove(ids[v], ids[n - 1], 16);
			n--;
		}
	}
	return NULL;
}

/* Rows of "kept counts EXCEPT actual counts" and the reverse, for coll and field ('' for
 * the whole collection; col the column).  0 when they agree, else the rows that differ. */
static long
rc_db_diff(struct db *db, const char *coll, const char *field)
{
	char sql[1024], kept[256], actual[256];
	struct db_stmt *st;
	long n = 0;
	int i;

	snprintf(kept, sizeof(kept), "SELECT value, CAST(sum(n) AS BIGINT) FROM _counts WHERE "
	    "coll = '%s' AND field = '%s' GROUP BY value HAVING sum(n) <> 0", coll, field);
	if (*field)
		snprintf(actual, sizeof(actual), "SELECT \"%s\", count(*) FROM \"%s\" GROUP BY "
		    "\"%s\"", field, coll, field);
	else
		snprintf(actual, sizeof(actual), "SELECT '', count(*) FROM \"%s\"", coll);
	for (i = 0; i < 2; i++) {
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM (%s EXCEPT %s) AS d",
		    i ? actual : kept, i ? kept : actual);
		if ((st = db_prepare(db, sql)) == NULL || db_step(st) != DB_ROW) {
			harness_fail(__FILE__, __LINE__, "%s: %s", sql, db_errmsg(db));
			return -1;
		}
		n += (long)db_column_int(st, 0);
		db_reset(st);
	}
	return n;
}

static void
rc_storm(struct rc_backend *b)
{
	struct rc_client c[RC_CLIENTS];
	volatile int stop = 0;
	long long t0 = stack_now_ms(), next = t0 + RC_KILL_MS;
	long ops = 0, acked = 0;
	int kills = 0, i;
	struct db *db = NULL;
	char err[256];

	for (i = 0; i < RC_CLIENTS; i++) {
		c[i] = (struct rc_client){ .b = b, .i = i, .stop = &stop };
		CHECK(pthread_create(&c[i].tid, NULL, rc_client_run, &c[i]) == 0);
	}
	while (stack_now_ms() - t0 < RC_STORM_MS) {
		pid_t pids[8];
		int n;

		usleep(50000);
		if (stack_now_ms() < next)
			continue;
		next = stack_now_ms() + RC_KILL_MS;
		if ((n = stack_worker_pids(&b->st, "records", pids, 8)) > 0 &&
		    kill(pids[kills % n], SIGKILL) == 0)
			kills++;
	}
	stop = 1;
	for (i = 0; i < RC_CLIENTS; i++) {
		pthread_join(c[i].tid, NULL);
		ops += c[i].ops;
		acked += c[i].acked;
	}
	printf("  %s: %ld writes (%ld acknowledged), %d workers killed\n", b->name, ops, acked,
	    kills);
	CHECK(kills >= 3);
	CHECK(acked > 20);
	CHECK(stack_wait_pool(&b->st, "records", 10000) == 0);
	if (db_open(&db, b->url, NULL, err, sizeof(err)) < 0) {
		harness_fail(__FILE__, __LINE__, "%s: %s", b->url, err);
		return;
	}
	CHECK_INT(rc_db_diff(db, "posts", ""), 0);
	CHECK_INT(rc_db_diff(db, "posts", "status"), 0);
	CHECK_INT(rc_db_diff(db, "posts", "author"), 0);
	CHECK_INT(rc_db_diff(db, "comments", ""), 0);
	CHECK_INT(rc_db_diff(db, "comments", "post"), 0);
	CHECK_INT(rc_db_diff(db, "users", ""), 0);
	CHECK_INT(rc_db_diff(db, "tasks", "state"), 0);
	/* Counted anew (records-seed -k, on the live database): the same counts. */
	CHECK_INT(stack_sh("%s/../sql/records-seed -q -k '%s'", getenv("SLUICE_TESTS") ?
	    getenv("SLUICE_TESTS") : "build/rel/tests", b->url), 0);
	CHECK_INT(rc_db_diff(db, "posts", "status"), 0);
	CHECK_INT(rc_db_diff(db, "comments", "post"), 0);
	db_close(db);
	/* And through the API, after the storm. */
	rc_same(b, "posts", "", NULL);
	rc_same(b, "posts", "status = 'draft'", NULL);
}

static void
test_records_counts_kill_storm_sqlite(void)
{
	rc_storm(&rcs.be[0]);
}

static void
test_records_counts_kill_storm_postgresql(void)
{
	rc_storm(&rcs.be[1]);
}

int
main(void)
{
	if (rc_start() < 0) {
		CHECK(!"the two stacks started and their users signed in");
		rc_stop();
		return harness_done();
	}
	RUN(test_records_counts_exact_sqlite);
	RUN(test_records_counts_exact_postgresql);
	RUN(test_records_counts_kill_storm_sqlite);
	RUN(test_records_counts_kill_storm_postgresql);
	rc_stop();
	return harness_done();
}
