/*
 * test_rest_idempotency: the table API's Idempotency-Key (apps/rest/idem.c) on SQLite and
 * PostgreSQL, through nginx and sluiced.
 *
 * A keyed POST sent twice answers the same status, headers and body byte for byte (the
 * second with Idempotent-Replayed: true) and stores one row; PATCH and DELETE the same;
 * the same key with another body, query or method is 422; malformed keys (too long,
 * control characters, non-ASCII) are 400 before anything runs; a failed write stores no
 * key, so its retry runs again; a key held by a transaction in flight is 409; a key past
 * its expiry writes again and the expired keys are purged by later keyed writes; with
 * access control, another caller (role, token subject) with the same key writes its own
 * row; and workers killed with SIGKILL under keyed POSTs that their clients retry with the
 * same key until answered: every write stored exactly once.
 */
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "jwtmake.h"
#include "killwrites.h"
#include "rest_fixture.h"

#define SECRET	"sluice-test-secret-0123456789abcdef0123456789"
#define HS256	"{\"alg\":\"HS256\",\"typ\":\"JWT\"}"

static struct http_resp r, r2;

static const char more_sqlite[] =
    "create table item (item_id integer primary key, tag text not null, n integer);\n";
static const char more_pg[] =
    "create table item (item_id serial primary key, tag text not null, n integer);\n";

static struct stack *const *
stacks_of(void)
{
	static struct stack *s[3];

	s[0] = &fx.lite;
	s[1] = &fx.pgs;
	s[2] = NULL;
	return s;
}

/* The rows of item with tag, counted on stack k's database (0 SQLite, 1 PostgreSQL). */
static long
count_tag(int k, const char *tag)
{
	char url[200], err[256];
	struct db *db;
	struct db_stmt *st;
	long n = -1;

	snprintf(url, sizeof(url), "sqlite:%s", fx.litepath);
	if (db_open(&db, k == 0 ? url : fx.pg.url, NULL, err, sizeof(err)) < 0)
		return -1;
	if ((st = db_prepare(db, "select count(*) from item where tag = $1")) != NULL &&
	    db_bind_text(st, 1, tag, strlen(tag)) == 0 && db_step(st) == DB_ROW)
		n = (long)db_column_int(st, 0);
	db_close(db);
	return n;
}

/* Runs sql (no parameters) on stack k's database; the first column of its first row as
 * an integer, 0 without a row, -1 on failure. */
static long long
db_value(int k, const char *sql)
{
	char url[200], err[256];
	struct db *db;
	struct db_stmt *st;
	long long v = -1;
	int rc;

	snprintf(url, sizeof(url), "sqlite:%s", fx.litepath);
	if (db_open(&db, k == 0 ? url : fx.pg.url, NULL, err, sizeof(err)) < 0)
		return -1;
	if ((st = db_prepare(db, sql)) != NULL) {
		rc = db_step(st);
		v = rc == DB_ROW ? db_column_int(st, 0) : rc == DB_DONE ? 0 : -1;
		if (rc == DB_ROW)
			db_reset(st);
	} else
		fprintf(stderr, "db_value: %s\n", db_errmsg(db));
	db_close(db);
	return v;
}

/* On PostgreSQL, the rows of sluice_idempotency whose scope is not like own that role
 * (NULL: the test's superuser) sees, or -1. */
static long long
pg_others_seen_by(const char *role, const char *own)
{
	char err[256], sql[160];
	struct db *db;
	struct db_stmt *st;
	long long v = -1;

	if (db_open(&db, fx.pg.url, NULL, err, sizeof(err)) < 0)
		return -1;
	snprintf(sql, sizeof(sql), "set role %s", role != NULL ? role : "none");
	if (role != NULL && db_exec(db, sql) < 0) {
		db_close(db);
		return -1;
	}
	snprintf(sql, sizeof(sql), "select count(*) from public.sluice_idempotency where "
	    "scope not like '%s'", own);
	if ((st = db_prepare(db, sql)) != NULL && db_step(st) == DB_ROW) {
		v = db_column_int(st, 0);
		db_reset(st);
	}
	db_close(db);
	return v;
}

/* Headers of a keyed JSON write: key, then an optional extra header. */
static const char *const *
keyed(const char *key, const char *extra)
{
	static char kh[1200];
	static const char *h[5];
	int n = 0;

	h[n++] = "Content-Type: application/json";
	if (key != NULL) {
		snprintf(kh, sizeof(kh), "Idempotency-Key: %s", key);
		h[n++] = kh;
	}
	if (extra != NULL)
		h[n++] = extra;
	h[n] = NULL;
	return h;
}

/* 1 when a and b are the same answer: status, body bytes, and the headers but the date,
 * the request id and the replay's own. */
static int
same_answer(const struct http_resp *a, const struct http_resp *b)
{
	static const char *const names[] = { "Content-Type", "Content-Range", "Location",
	    "Preference-Applied", "Content-Length", NULL };
	char va[512], vb[512];
	int i, ha, hb;

	if (a->status != b->status || a->body.len != b->body.len ||
	    (a->body.len > 0 && memcmp(a->body.data, b->body.data, a->body.len) != 0))
		return 0;
	for (i = 0; names[i] != NULL; i++) {
		ha = http_header(a, names[i], va, sizeof(va));
		hb = http_header(b, names[i], vb, sizeof(vb));
		if (ha != hb || (ha == 0 && strcmp(va, vb) != 0))
			return 0;
	}
	return 1;
}

/* A keyed POST retried: the same answer, replayed, one row; on both back ends. */
static void
test_rest_idempotency_post_retried_once(void)
{
	struct stack *const *s = stacks_of();
	int k;

	for (k = 0; s[k] != NULL; k++) {
		const char *const *h = keyed("post-1", "Prefer: return=representation");

		CHECK_INT(fx_do(s[k], "POST", "item", h, "{\"tag\":\"p1\",\"n\":1}", &r), 0);
		CHECK_INT(r.status, 201);
		CHECK_STR(fx_header(&r, "Idempotent-Replayed"), "");
		h = keyed("post-1", "Prefer: return=representation");
		CHECK_INT(fx_do(s[k], "POST", "item", h, "{\"tag\":\"p1\",\"n\":1}", &r2), 0);
		CHECK_INT(r2.status, 201);
		CHECK(same_answer(&r, &r2));
		CHECK_STR(fx_header(&r2, "Idempotent-Replayed"), "true");
		CHECK_INT(count_tag(k, "p1"), 1);
		/* headers-only: the Location is replayed too. */
		h = keyed("post-2", "Prefer: return=headers-only");
		CHECK_INT(fx_do(s[k], "POST", "item", h, "{\"tag\":\"p2\"}", &r), 0);
		CHECK_INT(r.status, 201);
		CHECK(strncmp(fx_header(&r, "Location"), "/item?item_id=eq.", 17) == 0);
		h = keyed("post-2", "Prefer: return=headers-only");
		CHECK_INT(fx_do(s[k], "POST", "item", h, "{\"tag\":\"p2\"}", &r2), 0);
		CHECK(same_answer(&r, &r2));
		CHECK_STR(fx_header(&r2, "Idempotent-Replayed"), "true");
		CHECK_INT(count_tag(k, "p2"), 1);
		/* Without a key, the same POST twice is two rows, as before. */
		CHECK_INT(fx_do(s[k], "POST", "item", keyed(NULL, NULL), "{\"tag\":\"p3\"}", &r),
		    0);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed(NULL, NULL), "{\"tag\":\"p3\"}", &r),
		    0);
		CHECK_INT(r.status, 201);
		CHECK_INT(count_tag(k, "p3"), 2);
	}
}

/* PATCH and DELETE: the retry does not run again (a counter PATCH would count twice). */
static void
test_rest_idempotency_patch_delete(void)
{
	struct stack *const *s = stacks_of();
	int k;

	for (k = 0; s[k] != NULL; k++) {
		const char *const *h = keyed(NULL, NULL);

		CHECK_INT(fx_do(s[k], "POST", "item", h, "{\"tag\":\"pd\",\"n\":5}", &r), 0);
		h = keyed("patch-1", "Prefer: return=representation");
		CHECK_INT(fx_do(s[k], "PATCH", "item?tag=eq.pd", h, "{\"n\":6}", &r), 0);
		CHECK_INT(r.status, 200);
		/* Changed meanwhile by another client: the replay answers what was. */
		CHECK_INT(fx_do(s[k], "PATCH", "item?tag=eq.pd", keyed(NULL, NULL), "{\"n\":7}",
		    &r2), 0);
		h = keyed("patch-1", "Prefer: return=representation");
		CHECK_INT(fx_do(s[k], "PATCH", "item?tag=eq.pd", h, "{\"n\":6}", &r2), 0);
		CHECK(same_answer(&r, &r2));
		CHECK_STR(fx_header(&r2, "Idempotent-Replayed"), "true");
		CHECK_INT(db_value(k, "select n from item where tag = 'pd'"), 7);
		CHECK_INT(fx_do(s[k], "DELETE", "item?tag=eq.pd", keyed("del-1", NULL), NULL, &r),
		    0);
		CHECK_INT(r.status, 204);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed(NULL, NULL), "{\"tag\":\"pd\"}", &r2),
		    0);
		CHECK_INT(fx_do(s[k], "DELETE", "item?tag=eq.pd", keyed("del-1", NULL), NULL,
		    &r2), 0);
		CHECK_INT(r2.status, 204);
		CHECK_STR(fx_header(&r2, "Idempotent-Replayed"), "true");
		CHECK_INT(count_tag(k, "pd"), 1);
	}
}

/* The same key for another request: 422 with the JSON error body, nothing written. */
static void
test_rest_idempotency_other_request_422(void)
{
	struct stack *const *s = stacks_of();
	int k;

	for (k = 0; s[k] != NULL; k++) {
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("reuse-1", NULL), "{\"tag\":\"r1\"}",
		    &r), 0);
		CHECK_INT(r.status, 201);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("reuse-1", NULL), "{\"tag\":\"r2\"}",
		    &r), 0);
		CHECK_INT(r.status, 422);
		CHECK(http_json_code(&r, "idempotency_key_reused"));
		CHECK_INT(fx_do(s[k], "POST", "item?select=tag", keyed("reuse-1", NULL),
		    "{\"tag\":\"r1\"}", &r), 0);
		CHECK_INT(r.status, 422);
		CHECK_INT(fx_do(s[k], "PATCH", "item?tag=eq.r1", keyed("reuse-1", NULL),
		    "{\"tag\":\"r1\"}", &r), 0);
		CHECK_INT(r.status, 422);
		CHECK_INT(count_tag(k, "r1"), 1);
		CHECK_INT(count_tag(k, "r2"), 0);
	}
}

/* Hostile keys: 400 with the JSON error body before anything runs. */
static void
test_rest_idempotency_hostile_keys(void)
{
	struct stack *const *s = stacks_of();
	char longkey[300];
	int k;

	memset(longkey, 'k', 256);
	longkey[256] = '\0';
	for (k = 0; s[k] != NULL; k++) {
		CHECK_INT(fx_do(s[k], "POST", "item", keyed(longkey, NULL), "{\"tag\":\"h1\"}",
		    &r), 0);
		CHECK_INT(r.status, 400);
		CHECK(http_json_code(&r, "idempotency_key_invalid"));
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("a\tb", NULL), "{\"tag\":\"h1\"}",
		    &r), 0);
		CHECK_INT(r.status, 400);
		CHECK(http_json_code(&r, "idempotency_key_invalid"));
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("caf\xc3\xa9", NULL),
		    "{\"tag\":\"h1\"}", &r), 0);
		CHECK_INT(r.status, 400);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("x'); drop table item; --", NULL),
		    "{\"tag\":\"h2\"}", &r), 0);
		CHECK_INT(r.status, 201);
		CHECK_INT(count_tag(k, "h1"), 0);
		CHECK_INT(count_tag(k, "h2"), 1);
		/* 255 bytes is the longest taken. */
		longkey[255] = '\0';
		CHECK_INT(fx_do(s[k], "POST", "item", keyed(longkey, NULL), "{\"tag\":\"h3\"}",
		    &r), 0);
		CHECK_INT(r.status, 201);
		longkey[255] = 'k';
	}
}

/* A failed write stores no key: its retry runs again (and succeeds once it can). */
static void
test_rest_idempotency_failed_write_not_kept(void)
{
	struct stack *const *s = stacks_of();
	int k;

	for (k = 0; s[k] != NULL; k++) {
		/* item_id 1 is taken: 409, rolled back. */
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("fail-1", NULL),
		    "{\"item_id\":1,\"tag\":\"f1\"}", &r), 0);
		CHECK_INT(r.status, 409);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("fail-1", NULL),
		    "{\"item_id\":1,\"tag\":\"f1\"}", &r), 0);
		CHECK_INT(r.status, 409);
		CHECK_STR(fx_header(&r, "Idempotent-Replayed"), "");
		CHECK_INT(db_value(k, "select count(*) from sluice_idempotency where "
		    "idem_key = 'fail-1'"), 0);
	}
}

/* The key lives idempotency_ttl seconds: an expired one writes again; keyed writes purge
 * the expired keys. */
static void
test_rest_idempotency_expiry_and_purge(void)
{
	struct stack *const *s = stacks_of();
	char sql[512];
	int k, i;

	for (k = 0; s[k] != NULL; k++) {
		long long now = (long long)time(NULL), exp;

		CHECK_INT(fx_do(s[k], "POST", "item", keyed("exp-1", NULL), "{\"tag\":\"e1\"}",
		    &r), 0);
		CHECK_INT(r.status, 201);
		/* idempotency_ttl=3600 on the endpoint's line. */
		exp = db_value(k, "select expires from sluice_idempotency where "
		    "idem_key = 'exp-1'");
		CHECK(exp >= now + 3600 - 5 && exp <= now + 3600 + 5);
		snprintf(sql, sizeof(sql), "update sluice_idempotency set expires = %lld where "
		    "idem_key = 'exp-1'", now - 1);
		CHECK(db_value(k, sql) >= 0);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("exp-1", NULL), "{\"tag\":\"e1\"}",
		    &r), 0);
		CHECK_INT(r.status, 201);
		CHECK_STR(fx_header(&r, "Idempotent-Replayed"), "");
		CHECK_INT(count_tag(k, "e1"), 2);
		/* Twenty expired keys: each keyed write deletes up to 8 of them. */
		for (i = 0; i < 20; i++) {
			snprintf(sql, sizeof(sql), "insert into sluice_idempotency values ('anon', "
			    "'old-%d', 'x', %lld, 201, null, '', '')", i, now - 100 - i);
			CHECK(db_value(k, sql) >= 0);
		}
		CHECK_INT(db_value(k, "select count(*) from sluice_idempotency where "
		    "idem_key like 'old-%'"), 20);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("purge-1", NULL), "{\"tag\":\"e2\"}",
		    &r), 0);
		CHECK_INT(db_value(k, "select count(*) from sluice_idempotency where "
		    "idem_key like 'old-%'"), 12);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("purge-2", NULL), "{\"tag\":\"e2\"}",
		    &r), 0);
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("purge-3", NULL), "{\"tag\":\"e2\"}",
		    &r), 0);
		CHECK_INT(db_value(k, "select count(*) from sluice_idempotency where "
		    "idem_key like 'old-%'"), 0);
		/* A request without the key purges nothing and stores nothing. */
		CHECK_INT(db_value(k, "select count(*) from sluice_idempotency where "
		    "scope = 'anon' and idem_key like 'purge-%'"), 3);
	}
}

/* A keyed POST sent from a thread of its own while the test holds the key's row. */
struct bg_post {
	struct stack *s;
	struct http_resp r;
	pthread_t tid;
};

static void *
bg_post_run(void *arg)
{
	static const char *const h[] = { "Content-Type: application/json",
	    "Idempotency-Key: busy-1", NULL };
	struct bg_post *b = arg;

	(void)fx_do(b->s, "POST", "item", h, "{\"tag\":\"busy\"}", &b->r);
	return NULL;
}

/* A key in flight: another transaction holds its row, uncommitted, while a keyed POST
 * arrives; once that commits, the POST finds the key taken and is 409, nothing written. */
static void
test_rest_idempotency_in_flight_409(void)
{
	struct stack *const *s = stacks_of();
	char url[200], err[256], sql[512];
	struct bg_post b;
	struct db *db;
	int k;

	for (k = 0; s[k] != NULL; k++) {
		/* A keyed write first: each worker thread makes the table at its first. */
		CHECK_INT(fx_do(s[k], "POST", "item", keyed("busy-0", NULL), "{\"tag\":\"b0\"}",
		    &r), 0);
		snprintf(url, sizeof(url), "sqlite:%s", fx.litepath);
		if (db_open(&db, k == 0 ? url : fx.pg.url, NULL, err, sizeof(err)) < 0) {
			CHECK(!"db_open");
			continue;
		}
		snprintf(sql, sizeof(sql), "insert into sluice_idempotency values ('anon', "
		    "'busy-1', 'x', %lld, 201, null, '', '')", (long long)time(NULL) + 3600);
		CHECK_INT(db_begin(db, DB_TXN_WRITE), 0);
		CHECK_INT(db_exec(db, sql), 0);
		memset(&b, 0, sizeof(b));
		b.s = s[k];
		http_resp_init(&b.r);
		CHECK_INT(pthread_create(&b.tid, NULL, bg_post_run, &b), 0);
		usleep(500 * 1000);
		CHECK_INT(db_commit(db), 0);
		pthread_join(b.tid, NULL);
		db_close(db);
		CHECK_INT(b.r.status, 409);
		CHECK(http_json_code(&b.r, "idempotency_key_in_flight"));
		CHECK_STR(fx_header(&b.r, "Retry-After"), "1");
		http_resp_free(&b.r);
		CHECK_INT(count_tag(k, "busy"), 0);
	}
}

/* The URL the kill test's clients write to, and what their retries met. */
static const char *kill_base;
static _Atomic long kill_retries, kill_replays, kill_in_flight;

/* One write: a POST with its own key, sent again with the same key after a failure
 * (no answer, 502, 503, 409 in flight) until a 2xx or 10 s. */
static void
kill_post(struct kw_write *w)
{
	char url[256], body[96], key[96], replayed[16];
	const char *h[3] = { "Content-Type: application/json", key, NULL };
	long long until = stack_now_ms() + 10000;
	struct http_resp rr;

	snprintf(url, sizeof(url), "%s/rest/v1/item", kill_base);
	snprintf(body, sizeof(body), "{\"tag\":\"kw-%u\"}", w->id);
	snprintf(key, sizeof(key), "Idempotency-Key: kw-%u", w->id);
	http_resp_init(&rr);
	do {
		rr.status = 0;
		w->status = 0;
		if (http_do("POST", url, h, body, strlen(body), 3000, &rr) == 0) {
			w->status = (short)rr.status;
			w->json = rr.status >= 300 && http_json_code(&rr, NULL);
		}
		if (w->status >= 200 && w->status < 300) {
			if (http_header(&rr, "Idempotent-Replayed", replayed,
			    sizeof(replayed)) == 0)
				atomic_fetch_add(&kill_replays, 1);
			break;
		}
		atomic_fetch_add(&kill_retries, 1);
		if (w->status == 409)
			atomic_fetch_add(&kill_in_flight, 1);
		usleep(50 * 1000);
	} while (stack_now_ms() < until);
	http_resp_free(&rr);
}

/* Workers killed under keyed POSTs retried until answered: each stored exactly once. */
static void
test_rest_idempotency_kill_and_retry(void)
{
	struct stack *const *s = stacks_of();
	struct kw_result res;
	char url[200];
	int k;

	for (k = 0; s[k] != NULL; k++) {
		snprintf(url, sizeof(url), "sqlite:%s", fx.litepath);
		kill_base = s[k]->base;
		memset(&res, 0, sizeof(res));
		atomic_store(&kill_retries, 0);
		atomic_store(&kill_replays, 0);
		atomic_store(&kill_in_flight, 0);
		if (kw_run(s[k], "rest", 8, 4, 1300, kill_post, k == 0 ? url : fx.pg.url,
		    "select count(*) from item where tag = $1", "kw-",
		    "select count(*) from item where tag like 'kw-%'", &res) < 0)
			continue;
		printf("  %s: %ld retries (%ld of them 409 in flight), %ld answered by a "
		    "replay\n", k == 0 ? "SQLite" : "PostgreSQL", atomic_load(&kill_retries),
		    atomic_load(&kill_in_flight), atomic_load(&kill_replays));
		kw_check(&res, "keyed POSTs", 20);
		CHECK_INT(res.errors, 0);
		CHECK_INT(res.unanswered, 0);
	}
}

/* With access control: the key is the caller's; another caller's same key is its own. */
static const char *
bearer(const char *claims)
{
	static char h[1200];
	char t[1024];

	if (jwtmake_hs(HS256, claims, SECRET, 256, t, sizeof(t)) < 0)
		return "";
	snprintf(h, sizeof(h), "Authorization: Bearer %s", t);
	return h;
}

static void
test_rest_idempotency_scoped_to_caller(void)
{
	static const char *const who[] = { NULL, "{\"role\":\"web_user\",\"sub\":\"alice\"}",
	    "{\"role\":\"web_user\",\"sub\":\"bob\"}", "{\"role\":\"web_user\"}", NULL };
	struct stack *const *s = stacks_of();
	int k, i;

	for (k = 0; s[k] != NULL; k++) {
		for (i = 0; i < 4; i++) {
			const char *auth = who[i] != NULL ? bearer(who[i]) : NULL;

			CHECK_INT(fx_do(s[k], "POST", "item", keyed("shared-1", auth),
			    "{\"tag\":\"sc\"}", &r), 0);
			CHECK_INT(r.status, 201);
			CHECK_STR(fx_header(&r, "Idempotent-Replayed"), "");
			auth = who[i] != NULL ? bearer(who[i]) : NULL;
			CHECK_INT(fx_do(s[k], "POST", "item", keyed("shared-1", auth),
			    "{\"tag\":\"sc\"}", &r), 0);
			CHECK_INT(r.status, 201);
			CHECK_STR(fx_header(&r, "Idempotent-Replayed"), "true");
		}
		CHECK_INT(count_tag(k, "sc"), 4);
	}
	/* Stored answers are each role's own (row level security): the rows of the other
	 * role are there, and invisible to a role. */
	CHECK(pg_others_seen_by(NULL, "role:8:web_user%") > 0);
	CHECK(pg_others_seen_by(NULL, "role:4:anon%") > 0);
	CHECK_INT(pg_others_seen_by("web_user", "role:8:web_user%"), 0);
	CHECK_INT(pg_others_seen_by("anon", "role:4:anon%"), 0);
}

/* The secret file of the access control stacks; 0 or -1. */
static int
auth_start(char *path, size_t len)
{
	static const char pg_roles[] =
	    "do $$ begin create role anon nologin; create role web_user nologin;\n"
	    "exception when duplicate_object then null; end $$;\n"
	    "grant usage on schema public to anon, web_user;\n"
	    "grant all on all tables in schema public to anon, web_user;\n"
	    "grant all on all sequences in schema public to anon, web_user;\n";
	char conf[512];
	FILE *f;

	snprintf(path, len, "/tmp/sluice-idem-%d.secret", (int)getpid());
	if ((f = fopen(path, "w")) == NULL)
		return -1;
	fprintf(f, "%s\n", SECRET);
	fclose(f);
	chmod(path, 0644);
	fx_more_pg = NULL;
	fx_more_sqlite = more_sqlite;
	/* The roles exist before the stack starts: pg_roles after the common schema. */
	{
		static char more[1024];

		snprintf(more, sizeof(more), "%s%s", more_pg, pg_roles);
		fx_more_pg = more;
	}
	snprintf(conf, sizeof(conf), "rest_jwt_secret_file=%s rest_anon_role=anon "
	    "rest_grants=anon:all|web_user:all", path);
	return fx_start(conf);
}

int
main(void)
{
	char secret[128];

	http_resp_init(&r);
	http_resp_init(&r2);
	fx_more_sqlite = more_sqlite;
	fx_more_pg = more_pg;
	if (fx_start("idempotency_ttl=3600") < 0) {
		CHECK(!"the two stacks started");
		fx_stop();
		return harness_done();
	}
	RUN(test_rest_idempotency_post_retried_once);
	RUN(test_rest_idempotency_patch_delete);
	RUN(test_rest_idempotency_other_request_422);
	RUN(test_rest_idempotency_hostile_keys);
	RUN(test_rest_idempotency_failed_write_not_kept);
	RUN(test_rest_idempotency_expiry_and_purge);
	RUN(test_rest_idempotency_in_flight_409);
	RUN(test_rest_idempotency_kill_and_retry);
	fx_stop();
	if (auth_start(secret, sizeof(secret)) < 0) {
		CHECK(!"the two stacks with access control started");
		fx_stop();
		return harness_done();
	}
	RUN(test_rest_idempotency_scoped_to_caller);
	fx_stop();
	unlink(secret);
	http_resp_free(&r);
	http_resp_free(&r2);
	return harness_done();
}
