/*
 * test_records_idempotency: the records API's Idempotency-Key (handlers/records/idem.c,
 * common/idem.c) on SQLite and PostgreSQL, through the real stack (nginx, sluiced,
 * bin/records on a database seeded by records-seed).
 *
 * A create, an update or a delete sent with a malformed key (256 bytes, a tab, a byte past
 * ASCII) is answered 400 in PocketBase's shape ({"data":{},"message":..,"status":400})
 * before anything runs: nothing is created, changed or deleted.  A well-formed key and no
 * key at all let the write through.  A keyed delete sent twice deletes once and answers
 * the same 204 twice, the second with Idempotent-Replayed: true; the key on another record
 * is 422 and deletes nothing; the answer is stored under the caller's scope
 * ("records:_superusers:<id>"), and an anonymous caller's same key is its own.  A keyed
 * update sent again after another client changed the record answers the first bytes,
 * replayed, and writes nothing; the key with another body is 422.  A keyed create sent
 * twice is one record and the same bytes.  A keyed create meeting its key's row held
 * uncommitted by another transaction is 409 with Retry-After: 1 once that commits,
 * nothing created.  Records workers killed with SIGKILL under
 * keyed creates that their clients retry with the same key until answered: every create
 * stored exactly once.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "http.h"
#include "killwrites.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define RI_TIMEOUT_MS	30000

static struct pgtmp ri_pg;
static struct stack ri_s[2];		/* 0 SQLite, 1 PostgreSQL */
static int ri_up[2], ri_pg_up;
static char ri_url[2][256], ri_dir[128], ri_post[2][16], ri_auth[2][1100], ri_su[2][16];

/* method path of stack k with the header h (may be NULL) and the JSON body (may be NULL),
 * as the superuser when auth. */
static int
ri_do_as(int k, int auth, const char *method, const char *path, const char *h,
    const char *body, struct http_resp *r)
{
	char url[512];
	const char *headers[4] = { "Content-Type: application/json", h, NULL, NULL };

	if (auth)
		headers[h != NULL ? 2 : 1] = ri_auth[k];

	snprintf(url, sizeof(url), "%s%s", ri_s[k].base, path);
	return http_do(method, url, headers, body, body ? strlen(body) : 0, RI_TIMEOUT_MS, r);
}

static int
ri_do(int k, const char *method, const char *path, const char *h, const char *body,
    struct http_resp *r)
{
	return ri_do_as(k, 0, method, path, h, body, r);
}

/* The first column of sql's first row on stack k's database as an integer, -1 on failure. */
static long long
ri_value(int k, const char *sql)
{
	char err[256];
	struct db *db;
	struct db_stmt *st;
	long long v = -1;

	if (db_open(&db, ri_url[k], NULL, err, sizeof(err)) < 0)
		return -1;
	if ((st = db_prepare(db, sql)) != NULL && db_step(st) == DB_ROW)
		v = db_column_int(st, 0);
	db_close(db);
	return v;
}

/* 1 when r is PocketBase's error of the status. */
static int
ri_pb_error(const struct http_resp *r, int status)
{
	cJSON *j = cJSON_Parse(r->body.data ? r->body.data : "");
	int ok = r->status == status && cJSON_IsObject(cJSON_GetObjectItem(j, "data")) &&
	    cJSON_IsString(cJSON_GetObjectItem(j, "message")) &&
	    cJSON_GetNumberValue(cJSON_GetObjectItem(j, "status")) == status;

	cJSON_Delete(j);
	return ok;
}

/* The string at key of r's JSON body, after prefix, into out. */
static int
ri_str(const struct http_resp *r, const char *key, const char *prefix, char *out, size_t len)
{
	cJSON *j = cJSON_Parse(r->body.data ? r->body.data : "");
	const char *v = cJSON_GetStringValue(cJSON_GetObjectItem(j, key));
	int rc = -1;

	if (v != NULL && strlen(prefix) + strlen(v) < len) {
		memcpy(out, prefix, strlen(prefix));
		memcpy(out + strlen(prefix), v, strlen(v) + 1);
		rc = 0;
	}
	cJSON_Delete(j);
	return rc;
}

static int
ri_start(int k)
{
	struct http_resp r;
	char conf[512];
	const char *tests = getenv("SLUICE_TESTS");
	const char *p;
	int rc;

	if (k == 0)
		snprintf(ri_url[0], sizeof(ri_url[0]), "sqlite:%s/records.db", ri_dir);
	else {
		if (pgtmp_start(&ri_pg) < 0)
			return -1;
		ri_pg_up = 1;
		snprintf(ri_url[1], sizeof(ri_url[1]), "%s", ri_pg.url);
	}
	if (stack_sh("%s/../sql/records-seed -q -u 4 -p 20 -c 20 -S sql/records '%s'",
	    tests ? tests : "build/rel/tests", ri_url[k]) != 0)
		return -1;
	if (k == 0)
		stack_sh("chmod -R a+rwX %s", ri_dir);
	snprintf(conf, sizeof(conf), "db records sqlite:/nonexistent.db\n"
	    "records /api/ workers=2 threads=4 db=records records_secret_file=%s/secret.key "
	    "bcrypt_cost=4\n", ri_dir);
	setenv("SLUICE_DB_RECORDS", ri_url[k], 1);
	rc = stack_start(&ri_s[k], conf, "tuned", 2, NULL);
	unsetenv("SLUICE_DB_RECORDS");
	if (rc < 0 || stack_wait_pool(&ri_s[k], "records", 10000) < 0)
		return -1;
	ri_up[k] = 1;
	http_resp_init(&r);
	rc = ri_do(k, "GET", "/api/collections/posts/records?perPage=1&skipTotal=1&sort=id",
	    NULL, NULL, &r) == 0 && r.status == 200 && r.body.data != NULL &&
	    (p = strstr(r.body.data, "\"id\":\"")) != NULL ? 0 : -1;
	if (rc == 0)
		memcpy(ri_post[k], p + 6, 15);
	if (rc == 0)
		rc = ri_do(k, "POST", "/api/collections/_superusers/auth-with-password", NULL,
		    "{\"identity\":\"admin@example.com\",\"password\":\"password123\"}",
		    &r) == 0 && r.status == 200 ? 0 : -1;
	if (rc == 0)
		rc = ri_str(&r, "token", "Authorization: ", ri_auth[k], sizeof(ri_auth[k])) == 0 &&
		    (p = strstr(r.body.data, "\"id\":\"")) != NULL ? 0 : -1;
	if (rc == 0)
		memcpy(ri_su[k], p + 6, 15);
	http_resp_free(&r);
	return rc;
}

/* Malformed keys: 400 before anything runs, for a create, an update and a delete. */
static void
test_records_idem_invalid_keys_400(void)
{
	static const char *const ri_bad[] = { NULL, "Idempotency-Key: a\tb",
	    "Idempotency-Key: caf\xc3\xa9", NULL };
	char longkey[300], path[128], sql[160];
	struct http_resp r;
	long long posts, same;
	int k, i, m;

	memcpy(longkey, "Idempotency-Key: ", 17);
	memset(longkey + 17, 'k', 256);
	longkey[17 + 256] = '\0';
	http_resp_init(&r);
	for (k = 0; k < 2; k++) {
		if (!ri_up[k]) {
			CHECK(!"stack up");
			continue;
		}
		posts = ri_value(k, "SELECT count(*) FROM posts");
		CHECK(posts > 0);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM posts WHERE id = '%s' AND "
		    "title = 'ri-untouched'", ri_post[k]);
		for (i = 0; i < 3; i++) {
			const char *h = i == 0 ? longkey : ri_bad[i];

			for (m = 0; m < 3; m++) {
				snprintf(path, sizeof(path), "/api/collections/posts/records%s%s",
				    m > 0 ? "/" : "", m > 0 ? ri_post[k] : "");
				CHECK(ri_do(k, m == 0 ? "POST" : m == 1 ? "PATCH" : "DELETE",
				    path, h, m < 2 ? "{\"title\":\"ri-untouched\"}" : NULL,
				    &r) == 0);
				if (!ri_pb_error(&r, 400))
					fprintf(stderr, "stack %d key %d method %d: %ld %s\n", k, i,
					    m, (long)r.status, r.body.data ? r.body.data : "");
				CHECK(ri_pb_error(&r, 400));
				CHECK(r.body.data != NULL &&
				    strstr(r.body.data, "Idempotency-Key") != NULL);
			}
		}
		CHECK_INT(ri_value(k, "SELECT count(*) FROM posts"), posts);
		same = ri_value(k, sql);
		CHECK_INT(same, 0);
	}
	http_resp_free(&r);
}

/* A key of 255 printable bytes is well-formed: the request reaches the write (here a 400
 * for a create that names no author, PocketBase's validation answer, not the key's). */
static void
test_records_idem_valid_key_passes(void)
{
	char key[300];
	struct http_resp r;
	int k;

	memcpy(key, "Idempotency-Key: ", 17);
	memset(key + 17, '~', 255);
	key[17 + 255] = '\0';
	http_resp_init(&r);
	for (k = 0; k < 2; k++) {
		if (!ri_up[k]) {
			CHECK(!"stack up");
			continue;
		}
		CHECK(ri_do(k, "DELETE", "/api/collections/posts/records/zzzzzzzzzzzzzzz", key,
		    NULL, &r) == 0);
		CHECK(ri_pb_error(&r, 404));
		CHECK(r.body.data == NULL || strstr(r.body.data, "Idempotency-Key") == NULL);
	}
	http_resp_free(&r);
}

/* A keyed delete sent twice: one delete, the same answer twice (the second replayed);
 * the key on another record 422; the answer stored once under the caller's scope. */
static void
test_records_idem_delete_replays(void)
{
	struct http_resp r, r2;
	char id[2][32], path[128], sql[200], h[64];
	int k, i;

	http_resp_init(&r);
	http_resp_init(&r2);
	for (k = 0; k < 2; k++) {
		if (!ri_up[k]) {
			CHECK(!"stack up");
			continue;
		}
		for (i = 0; i < 2; i++) {
			id[i][0] = '\0';
			CHECK(ri_do_as(k, 1, "POST", "/api/collections/posts/records", NULL,
			    "{\"title\":\"ri-delete\"}", &r) == 0);
			CHECK_INT(r.status, 200);
			CHECK(ri_str(&r, "id", "", id[i], sizeof(id[i])) == 0);
		}
		snprintf(h, sizeof(h), "Idempotency-Key: del-%d", k);
		snprintf(path, sizeof(path), "/api/collections/posts/records/%s", id[0]);
		CHECK(ri_do_as(k, 1, "DELETE", path, h, NULL, &r) == 0);
		CHECK_INT(r.status, 204);
		CHECK(http_header(&r, "Idempotent-Replayed", sql, sizeof(sql)) != 0);
		CHECK(ri_do_as(k, 1, "DELETE", path, h, NULL, &r2) == 0);
		CHECK_INT(r2.status, 204);
		CHECK(http_header(&r2, "Idempotent-Replayed", sql, sizeof(sql)) == 0 &&
		    strcmp(sql, "true") == 0);
		CHECK_INT((long)r2.body.len, (long)r.body.len);
		/* Without the key the record is gone: 404. */
		CHECK(ri_do_as(k, 1, "DELETE", path, NULL, NULL, &r) == 0);
		CHECK(ri_pb_error(&r, 404));
		/* The key on another record: 422, which is not deleted. */
		snprintf(path, sizeof(path), "/api/collections/posts/records/%s", id[1]);
		CHECK(ri_do_as(k, 1, "DELETE", path, h, NULL, &r) == 0);
		CHECK(ri_pb_error(&r, 422));
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM posts WHERE id = '%s'", id[1]);
		CHECK_INT(ri_value(k, sql), 1);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM sluice_idempotency WHERE "
		    "scope = 'records:_superusers:%s' AND idem_key = 'del-%d' AND status = 204",
		    ri_su[k], k);
		CHECK_INT(ri_value(k, sql), 1);
		/* An anonymous caller's same key is its own: its delete runs (the rule, author =
		 * @request.auth.id, lets it delete a post without an author) and is stored
		 * under "records:anon". */
		CHECK(ri_do(k, "DELETE", path, h, NULL, &r) == 0);
		CHECK_INT(r.status, 204);
		CHECK(http_header(&r, "Idempotent-Replayed", sql, sizeof(sql)) != 0);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM posts WHERE id = '%s'", id[1]);
		CHECK_INT(ri_value(k, sql), 0);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM sluice_idempotency WHERE "
		    "scope = 'records:anon' AND idem_key = 'del-%d'", k);
		CHECK_INT(ri_value(k, sql), 1);
	}
	http_resp_free(&r);
	http_resp_free(&r2);
}

/* A keyed update sent again after another client changed the record: the first answer,
 * byte for byte, and nothing written; the key with another body 422. */
static void
test_records_idem_update_replays(void)
{
	struct http_resp r, r2;
	char id[32], path[128], sql[200];
	const char *h = "Idempotency-Key: upd-1";
	int k;

	http_resp_init(&r);
	http_resp_init(&r2);
	for (k = 0; k < 2; k++) {
		if (!ri_up[k]) {
			CHECK(!"stack up");
			continue;
		}
		id[0] = '\0';
		CHECK(ri_do_as(k, 1, "POST", "/api/collections/posts/records", NULL,
		    "{\"title\":\"ri-upd\"}", &r) == 0);
		CHECK(ri_str(&r, "id", "", id, sizeof(id)) == 0);
		snprintf(path, sizeof(path), "/api/collections/posts/records/%s", id);
		CHECK(ri_do_as(k, 1, "PATCH", path, h, "{\"title\":\"ri-upd-1\"}", &r) == 0);
		CHECK_INT(r.status, 200);
		CHECK(r.body.data != NULL && strstr(r.body.data, "\"ri-upd-1\"") != NULL);
		CHECK(ri_do_as(k, 1, "PATCH", path, NULL, "{\"title\":\"ri-upd-2\"}", &r2) == 0);
		CHECK_INT(r2.status, 200);
		CHECK(ri_do_as(k, 1, "PATCH", path, h, "{\"title\":\"ri-upd-1\"}", &r2) == 0);
		CHECK_INT(r2.status, 200);
		CHECK(http_header(&r2, "Idempotent-Replayed", sql, sizeof(sql)) == 0 &&
		    strcmp(sql, "true") == 0);
		CHECK(r.body.len == r2.body.len && r.body.data != NULL && r2.body.data != NULL &&
		    memcmp(r.body.data, r2.body.data, r.body.len) == 0);
		snprintf(sql, sizeof(sql), "SELECT count(*) FROM posts WHERE id = '%s' AND "
		    "title = 'ri-upd-2'", id);
		CHECK_INT(ri_value(k, sql), 1);
		CHECK(ri_do_as(k, 1, "PATCH", path, h, "{\"title\":\"ri-upd-3\"}", &r2) == 0);
		CHECK(ri_pb_error(&r2, 422));
		CHECK_INT(ri_value(k, sql), 1);
	}
	http_resp_free(&r);
	http_resp_free(&r2);
}

/* A keyed create sent twice: one record, the same answer byte for byte (the second
 * replayed); the key with another body 422, nothing created. */
static void
test_records_idem_create_once(void)
{
	struct http_resp r, r2;
	const char *h = "Idempotency-Key: cre-1";
	char v[16];
	int k;

	http_resp_init(&r);
	http_resp_init(&r2);
	for (k = 0; k < 2; k++) {
		if (!ri_up[k]) {
			CHECK(!"stack up");
			continue;
		}
		CHECK(ri_do_as(k, 1, "POST", "/api/collections/posts/records", h,
		    "{\"title\":\"ri-cre\"}", &r) == 0);
		CHECK_INT(r.status, 200);
		CHECK(ri_do_as(k, 1, "POST", "/api/collections/posts/records", h,
		    "{\"title\":\"ri-cre\"}", &r2) == 0);
		CHECK_INT(r2.status, 200);
		CHECK(http_header(&r2, "Idempotent-Replayed", v, sizeof(v)) == 0 &&
		    strcmp(v, "true") == 0);
		CHECK(r.body.len == r2.body.len && r.body.data != NULL && r2.body.data != NULL &&
		    memcmp(r.body.data, r2.body.data, r.body.len) == 0);
		CHECK_INT(ri_value(k, "SELECT count(*) FROM posts WHERE title = 'ri-cre'"), 1);
		CHECK(ri_do_as(k, 1, "POST", "/api/collections/posts/records", h,
		    "{\"title\":\"ri-cre-other\"}", &r2) == 0);
		CHECK(ri_pb_error(&r2, 422));
		CHECK_INT(ri_value(k, "SELECT count(*) FROM posts WHERE title LIKE 'ri-cre%'"), 1);
	}
	http_resp_free(&r);
	http_resp_free(&r2);
}

struct ri_bg {
	int k;
	struct http_resp r;
	pthread_t tid;
};

static void *
ri_bg_run(void *arg)
{
	struct ri_bg *b = arg;

	(void)ri_do_as(b->k, 1, "POST", "/api/collections/posts/records",
	    "Idempotency-Key: busy-1", "{\"title\":\"ri-busy\"}", &b->r);
	return NULL;
}

/* A key in flight: another transaction holds its row, uncommitted, while a keyed create
 * arrives; once that commits, the create finds the key taken: 409 with Retry-After: 1,
 * nothing created. */
static void
test_records_idem_in_flight_409(void)
{
	char err[256], sql[512], v[16];
	struct ri_bg b;
	struct db *db;
	int k;

	for (k = 0; k < 2; k++) {
		if (!ri_up[k]) {
			CHECK(!"stack up");
			continue;
		}
		if (db_open(&db, ri_url[k], NULL, err, sizeof(err)) < 0) {
			CHECK(!"db_open");
			continue;
		}
		snprintf(sql, sizeof(sql), "INSERT INTO sluice_idempotency VALUES "
		    "('records:_superusers:%s', 'busy-1', 'x', %lld, 200, NULL, '', '')",
		    ri_su[k], (long long)time(NULL) + 3600);
		CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
		CHECK_INT(db_exec(db, sql), 0);
		memset(&b, 0, sizeof(b));
		b.k = k;
		http_resp_init(&b.r);
		CHECK_INT(pthread_create(&b.tid, NULL, ri_bg_run, &b), 0);
		usleep(500 * 1000);
		CHECK_INT(db_commit(db), 0);
		pthread_join(b.tid, NULL);
		db_close(db);
		CHECK(ri_pb_error(&b.r, 409));
		CHECK(http_header(&b.r, "Retry-After", v, sizeof(v)) == 0 && strcmp(v, "1") == 0);
		http_resp_free(&b.r);
		CHECK_INT(ri_value(k, "SELECT count(*) FROM posts WHERE title = 'ri-busy'"), 0);
	}
}

static int ri_kill_k;
static atomic_long ri_retries, ri_replays;

/* A keyed create of a post titled "rk-ID", sent again with the same key (no answer, 502,
 * 503, 409 in flight) until a 200 or 10 s (killwrites.h). */
static void
ri_kill_create(struct kw_write *w)
{
	char body[96], key[96], v[16];
	long long until = stack_now_ms() + 10000;
	struct http_resp rr;

	snprintf(body, sizeof(body), "{\"title\":\"rk-%u\"}", w->id);
	snprintf(key, sizeof(key), "Idempotency-Key: rk-%u", w->id);
	http_resp_init(&rr);
	do {
		rr.status = 0;
		w->status = 0;
		if (ri_do_as(ri_kill_k, 1, "POST", "/api/collections/posts/records", key, body,
		    &rr) == 0) {
			w->status = (short)rr.status;
			w->json = rr.status >= 300 && (ri_pb_error(&rr, (int)rr.status) ||
			    http_json_code(&rr, NULL));
		}
		if (w->status == 200) {
			if (http_header(&rr, "Idempotent-Replayed", v, sizeof(v)) == 0)
				atomic_fetch_add(&ri_replays, 1);
			break;
		}
		atomic_fetch_add(&ri_retries, 1);
		usleep(50 * 1000);
	} while (stack_now_ms() < until);
	http_resp_free(&rr);
}

/* Records workers killed with SIGKILL under keyed creates retried until answered: each
 * stored exactly once. */
static void
test_records_idem_kill_and_retry(void)
{
	struct kw_result res;
	int k;

	for (k = 0; k < 2; k++) {
		if (!ri_up[k]) {
			CHECK(!"stack up");
			continue;
		}
		ri_kill_k = k;
		memset(&res, 0, sizeof(res));
		atomic_store(&ri_retries, 0);
		atomic_store(&ri_replays, 0);
		if (kw_run(&ri_s[k], "records", 8, 4, 1300, ri_kill_create, ri_url[k],
		    "SELECT count(*) FROM posts WHERE title = $1", "rk-",
		    "SELECT count(*) FROM posts WHERE title LIKE 'rk-%'", &res) < 0) {
			CHECK(!"kw_run");
			continue;
		}
		printf("  %s: %ld retries, %ld answered by a replay\n", k == 0 ? "SQLite" :
		    "PostgreSQL", atomic_load(&ri_retries), atomic_load(&ri_replays));
		kw_check(&res, "keyed creates", 20);
		CHECK_INT(res.errors, 0);
		CHECK_INT(res.unanswered, 0);
	}
}

int
main(void)
{
	int k;

	signal(SIGPIPE, SIG_IGN);
	snprintf(ri_dir, sizeof(ri_dir), "/tmp/sluice-records-idem-%d", (int)getpid());
	if (stack_sh("mkdir -p %s && echo %s > %s/secret.key && chmod 644 %s/secret.key",
	    ri_dir, "8899aabbccddeeff00112233445566778899aabbccddeeff0011223344556677",
	    ri_dir, ri_dir) == 0)
		for (k = 0; k < 2; k++)
			if (ri_start(k) < 0)
				fprintf(stderr, "stack %d did not start\n", k);
	RUN(test_records_idem_invalid_keys_400);
	RUN(test_records_idem_valid_key_passes);
	RUN(test_records_idem_delete_replays);
	RUN(test_records_idem_update_replays);
	RUN(test_records_idem_create_once);
	RUN(test_records_idem_in_flight_409);
	RUN(test_records_idem_kill_and_retry);
	for (k = 0; k < 2; k++)
		if (ri_up[k])
			stack_stop(&ri_s[k]);
	if (ri_pg_up)
		pgtmp_stop(&ri_pg);
	stack_sh("rm -rf %s", ri_dir);
	return harness_done();
}
