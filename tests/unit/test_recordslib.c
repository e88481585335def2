/*
 * test_records: the records API's parsers and compilers (apps/records/), table-driven:
 * collection declarations, the filter language to SQL on both back ends (text and bound
 * values), its refusals (malformed, hostile, over the limits), sort, expand and fields,
 * tokens (made, parsed, verified, tampered with), bcrypt and the rate limits' token
 * buckets.
 */
#include <stdatomic.h>
#include <stdio.h>
#include <sys/resource.h>
#include <sys/syscall.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "clock.h"
#include "records/bucket.h"
#include "records/coll.h"
#include "records/mail.h"
#include "records/lane.h"
#include "records/filter.h"
#include "records/query.h"
#include "sqlb.h"
#include "records/token.h"
#include "str.h"
#include "../lib/harness.h"

static struct colls tc;
static struct arena *ta;

static void
tc_load(void)
{
	static const char *const users_rules[COLL_RULE__MAX] = { "", "", "",
	    "id = @request.auth.id", "id = @request.auth.id" };
	static const char *const posts_rules[COLL_RULE__MAX] = { "", "", "@request.auth.id != ''",
	    "author = @request.auth.id", NULL };
	char err[256];

	tc.c = calloc(COLL_MAX, sizeof(*tc.c));
	tc.n = 0;
	CHECK(coll_parse(&tc.c[tc.n++], "_pb_users_auth_", "users", "auth",
	    "name text; age number; created autodate", users_rules, err, sizeof(err)) == 0);
	CHECK(coll_parse(&tc.c[tc.n++], "pbc_posts", "posts", "base",
	    "title text required; status select values=draft|published index;\n"
	    "author relation to=users; tags select multiple values=a|b|c; meta json; "
	    "hot bool; created autodate; updated autodate onupdate; editors relation multiple "
	    "to=users", posts_rules, err,
	    sizeof(err)) == 0);
	CHECK(coll_parse(&tc.c[tc.n++], "pbc_comments", "comments", "base",
	    "post relation to=posts; text text", posts_rules, err, sizeof(err)) == 0);
	CHECK(coll_resolve(&tc, err, sizeof(err)) == 0);
	ta = arena_new(1 << 24);
}

/* A step of the slow lane: doubles in, notes its thread's nice value and, when asked,
 * sleeps first. */
struct tl_step {
	int in, out, nice, sleep_ms;
};

static _Atomic int tl_finished;

static void
tl_step(void *arg)
{
	struct tl_step *t = arg;

	if (t->sleep_ms > 0)
		usleep((useconds_t)t->sleep_ms * 1000);
	t->out = t->in * 2;
	t->nice = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	tl_finished++;
}

static void
test_lane(void)
{
	struct tl_step t = { .in = 21 };
	int base = getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid));
	long long now;
	int i;

	CHECK_INT(lane_run(tl_step, &t, sizeof(t), 0), LANE_OK);
	CHECK_INT(t.out, 42);
	/* The lane runs at a lower priority; the caller keeps its own.  Under nice (a
	 * base above LANE_NICE) the lane keeps the base where it may not raise it. */
	CHECK(t.nice == LANE_NICE || (base > LANE_NICE && t.nice == base));
	CHECK_INT(getpriority(PRIO_PROCESS, (id_t)syscall(SYS_gettid)), base);
	/* Steps of several callers, all answered. */
	for (i = 0; i < 20; i++) {
		t = (struct tl_step){ .in = i };
		CHECK(lane_run(tl_step, &t, sizeof(t), clock_now_ms() + 5000) == LANE_OK &&
		    t.out == 2 * i);
	}
	/* A budget that runs out first: the caller's copy is left as it was, and the step
	 * finishes on the lane's own copy. */
	i = tl_finished;
	t = (struct tl_step){ .in = 5, .sleep_ms = 300 };
	now = clock_now_ms();
	CHECK_INT(lane_run(tl_step, &t, sizeof(t), now + 50), LANE_ETIMEOUT);
	CHECK(clock_now_ms() - now < 250);
	CHECK_INT(t.out, 0);
	usleep(500 * 1000);
	CHECK_INT(tl_finished, i + 1);
	CHECK_INT(lane_run(tl_step, &t, LANE_ARG_MAX + 1, 0), LANE_EBUSY);
}

static void
test_coll_parse(void)
{
	static const struct { const char *type, *fields; int ok; } cases[] = {
		{ "base", "a text", 1 },
		{ "base", "a text;; b number\n\n c bool", 1 },
		{ "base", "a nope", 0 },
		{ "base", "a", 0 },
		{ "base", "a text; a text", 0 },
		{ "base", "1a text", 0 },
		{ "base", "a-b text", 0 },
		{ "base", "a select", 0 },
		{ "base", "a relation", 0 },
		{ "base", "a text multiple", 0 },
		{ "base", "a select values=x||y", 0 },
		{ "base", "a select values=x|y multiple required unique index", 1 },
		{ "base", "a password", 0 },
		{ "base", "id text", 0 },
		{ "auth", "email text", 0 },
		{ "view", "a text", 0 },
	};
	static const char *const rules[COLL_RULE__MAX] = { NULL };
	struct coll c;
	char err[256];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = coll_parse(&c, "x1", "x", cases[i].type, cases[i].fields, rules, err,
		    sizeof(err));

		if ((rc == 0) != cases[i].ok)
			harness_fail(__FILE__, __LINE__, "coll_parse(%s) = %d", cases[i].fields, rc);
		if (rc == 0)
			coll_free(&c);
	}
	CHECK(coll_parse(&c, "x1", "x; DROP", "base", "", rules, err, sizeof(err)) < 0);
	/* The key order is bytewise, as PocketBase's JSON. */
	{
		const struct coll *u = &tc.c[0];
		const char *prev = "";
		size_t k;

		for (k = 0; k < u->nkeys; k++) {
			const char *n = u->keys[k] == COLL_KEY_COLLID ? "collectionId" :
			    u->keys[k] == COLL_KEY_COLLNAME ? "collectionName" :
			    u->keys[k] == COLL_KEY_EXPAND ? "expand" : u->fields[u->keys[k]].name;

			CHECK(strcmp(prev, n) < 0);
			CHECK(strcmp(n, "password") != 0 && strcmp(n, "tokenKey") != 0);
			prev = n;
		}
	}
}

static void
test_coll_ddl(void)
{
	struct buf b;

	buf_init(&b, 1 << 20);
	CHECK(coll_ddl(&tc.c[1], DB_SQLITE, &b) == 0);
	CHECK(strstr(b.data, "\"tags\" JSON NOT NULL DEFAULT '[]'") != NULL);
	CHECK(strstr(b.data, "\"hot\" BOOLEAN NOT NULL DEFAULT 0") != NULL);
	CHECK(strstr(b.data, "CREATE INDEX \"idx_posts_status\" ON \"posts\" (\"status\")") != NULL);
	buf_reset(&b, 0);
	CHECK(coll_ddl(&tc.c[1], DB_PG, &b) == 0);
	CHECK(strstr(b.data, "\"tags\" jsonb NOT NULL DEFAULT '[]'") != NULL);
	CHECK(strstr(b.data, "\"meta\" jsonb") != NULL);
	buf_reset(&b, 0);
	CHECK(coll_ddl(&tc.c[0], DB_PG, &b) == 0);
	CHECK(strstr(b.data, "\"age\" double precision NOT NULL DEFAULT 0") != NULL);
	CHECK(strstr(b.data, "CREATE UNIQUE INDEX \"idx_users_email\" ON \"users\" (\"email\") "
	    "WHERE \"email\" <> ''") != NULL);
	buf_free(&b);
}

/* The kept counts: which fields are counted, and the triggers that keep them. */
static void
test_coll_counts_ddl(void)
{
	const struct coll *p = &tc.c[1];
	struct buf b;

	CHECK(coll_field(p, "status", 6)->counted);
	CHECK(!coll_field(p, "author", 6)->counted);	/* no index */
	CHECK(!coll_field(p, "tags", 4)->counted);	/* multiple */
	CHECK(!coll_field(p, "title", 5)->counted);	/* text */
	buf_init(&b, 1 << 20);
	CHECK(coll_counts_table(DB_SQLITE, &b) == 0);
	CHECK(strstr(b.data, "PRIMARY KEY (coll, field, value, slot)) WITHOUT ROWID") != NULL);
	buf_reset(&b, 0);
	CHECK(coll_counts_ddl(p, DB_SQLITE, &b) == 0);
	CHECK(strstr(b.data, "INSERT INTO _counts SELECT 'posts', 'status', \"status\", 0, "
	    "count(*) FROM \"posts\" GROUP BY \"status\";") != NULL);
	CHECK(strstr(b.data, "AFTER INSERT ON \"posts\" BEGIN INSERT INTO _counts VALUES "
	    "('posts', '', '', 0, 1), ('posts', 'status', NEW.\"status\", 0, 1) ON CONFLICT") !=
	    NULL);
	CHECK(strstr(b.data, "AFTER UPDATE OF \"status\" ON \"posts\" WHEN OLD.\"status\" IS "
	    "NOT NEW.\"status\"") != NULL);
	CHECK(strstr(b.data, "AFTER DELETE ON \"posts\"") != NULL);
	/* The markers that say what the database keeps (colls_load()). */
	CHECK(strstr(b.data, "INSERT INTO _counts VALUES ('posts', '', '', -1, 0);") != NULL);
	CHECK(strstr(b.data, "INSERT INTO _counts VALUES ('posts', 'status', '', -1, 0);") !=
	    NULL);
	CHECK(strstr(b.data, "('posts', 'author'") == NULL);
	buf_reset(&b, 0);
	CHECK(coll_counts_ddl(p, DB_PG, &b) == 0);
	CHECK(strstr(b.data, "pg_backend_pid() % 16") != NULL);
	CHECK(strstr(b.data, "AFTER INSERT OR DELETE OR UPDATE OF \"status\" ON \"posts\" FOR "
	    "EACH ROW") != NULL);
	buf_reset(&b, 0);
	CHECK(coll_counts_ddl(&tc.c[2], DB_PG, &b) == 0);	/* nothing counted per value */
	CHECK(strstr(b.data, "AFTER INSERT OR DELETE ON \"comments\"") != NULL);
	buf_free(&b);
}

/* coll_merge(): pre, then the stored elements not removed, then app, in order, the three
 * arrays bound ($1 pre, $2 rm, $3 app); run on SQLite, its text checked on PostgreSQL. */
static void
test_coll_merge(void)
{
	struct db *db = NULL;
	struct db_stmt *st;
	struct buf sql;
	struct sqlb q;
	char err[256];
	const char *s;

	buf_init(&sql, 0);
	sqlb_init(&q, &sql, ta, DB_PG);
	CHECK_INT(coll_merge(&q, "t", "tags", "[\"p\"]", "[\"z\"]", "[\"b\"]"), 0);
	CHECK(strstr(sql.data, "CAST($1 AS jsonb)") != NULL &&
	    strstr(sql.data, "jsonb_array_elements_text(t.\"tags\")") != NULL &&
	    strstr(sql.data, "CAST($2 AS jsonb)") < strstr(sql.data, "CAST($3 AS jsonb)"));
	CHECK(q.vals.n == 3 && strcmp(q.vals.v[1].s, "[\"b\"]") == 0);

	if (db_open(&db, "sqlite::memory:", NULL, err, sizeof(err)) == -1) {
		harness_fail(__FILE__, __LINE__, "db_open: %s", err);
		buf_free(&sql);
		return;
	}
	CHECK(db_exec(db, "CREATE TABLE x (tags TEXT); INSERT INTO x VALUES "
	    "('[\"a\",\"b\",\"c\"]')") == 0);
	sqlb_init(&q, &sql, ta, DB_SQLITE);
	buf_puts(q.sql, "SELECT ");
	CHECK_INT(coll_merge(&q, "t", "tags", "[\"p\"]", "[\"z\"]", "[\"b\"]"), 0);
	buf_puts(q.sql, " FROM x AS t");
	CHECK((st = db_prepare(db, sql.data)) != NULL);
	if (st != NULL) {
		CHECK_INT(sqlb_bind(&q, st), 0);
		CHECK_INT(db_step(st), DB_ROW);
		s = db_column_text(st, 0, NULL);
		CHECK_STR(s, "[\"p\",\"a\",\"c\",\"z\"]");
		db_reset(st);
	}
	db_close(db);
	buf_free(&sql);
}

/* Compiles f on posts; returns the status (0 for OK) and the SQL in sql. */
static int
tf(const char *f, enum db_backend be, const struct filter_ctx *ctx, struct sqlb *q,
    struct buf *sql)
{
	char err[256];
	enum filter_err e;

	sqlb_init(q, sql, ta, be);
	arena_reset(ta);
	e = filter_compile(q, &tc.c[1], "t", f, strlen(f), ctx, err, sizeof(err));
	return e == FILTER_OK ? 0 : filter_status(e);
}

/* What filter_compile() says a filter is: one `field = 'text'`, or something else. */
static void
test_filter_eq(void)
{
	static const struct { const char *f, *field, *val; int value; } cases[] = {
		{ "status = 'draft'", "status", "draft", -1 },
		{ "((status=\"published\"))", "status", "published", -1 },
		{ "'draft' = status // a comment", "status", "draft", -1 },
		{ "status = 'it\\'s'", "status", "it's", -1 },
		{ "status = ''", "status", "", -1 },
		{ "title = 'x'", "title", "x", -1 },
		{ "status = 'draft' && title = 'x'", NULL, NULL, -1 },
		{ "status = 'draft' || status = 'published'", NULL, NULL, -1 },
		{ "status != 'draft'", NULL, NULL, -1 },
		{ "status ?= 'draft'", NULL, NULL, -1 },
		{ "status:lower = 'draft'", NULL, NULL, -1 },
		{ "author.name = 'draft'", NULL, NULL, -1 },
		{ "status = 1", NULL, NULL, -1 },
		{ "status = null", NULL, NULL, -1 },
		{ "status = title", NULL, NULL, -1 },
		{ "tags = 'a'", NULL, NULL, -1 },
		/* Whatever the record: the value, so a rule's kept count can serve. */
		{ "'a' = 'a'", NULL, NULL, 1 },
		{ "'a' != 'a'", NULL, NULL, 0 },
		{ "('a' = 'a' && 1 < 2) || status = 'x'", NULL, NULL, 1 },
		{ "'a' = 'b' && status = 'x'", NULL, NULL, 0 },
		{ "'a' = 'b' || status = 'x'", NULL, NULL, -1 },
		{ "'a' = 'a' && status = 'x'", NULL, NULL, -1 },
	};
	struct filter_shape eq;
	struct filter_ctx ctx = { .shape = &eq };
	struct sqlb q;
	struct buf sql;
	size_t i;

	buf_init(&sql, 1 << 20);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		memset(&eq, 0xff, sizeof(eq));
		CHECK_INT(tf(cases[i].f, DB_SQLITE, &ctx, &q, &sql), 0);
		if (cases[i].field == NULL ? eq.eq_field != NULL : eq.eq_field == NULL ||
		    strcmp(eq.eq_field->name, cases[i].field) != 0 ||
		    !str_eq(eq.eq_val, eq.eq_len, cases[i].val))
			harness_fail(__FILE__, __LINE__, "%s: field %s", cases[i].f,
			    eq.eq_field ? eq.eq_field->name : "none");
		if (eq.value != cases[i].value)
			harness_fail(__FILE__, __LINE__, "%s: value %d", cases[i].f, eq.value);
	}
	buf_free(&sql);
}

static void
test_filter_sql(void)
{
	static const struct { const char *f, *sqlite, *pg; int binds; } cases[] = {
		{ "title = 'x'", "(((t.\"title\" = $1)))", NULL, 1 },
		{ "title != \"x\"", "(((t.\"title\" IS NOT $1)))",
		    "(((t.\"title\" IS DISTINCT FROM $1)))", 1 },
		{ "title = ''", "((((t.\"title\" IS NULL OR t.\"title\" = ''))))", NULL, 0 },
		{ "null != title", "(((NOT (t.\"title\" IS NULL OR t.\"title\" = ''))))", NULL, 0 },
		{ "title ~ 'a%b'", "(((t.\"title\" LIKE $1 ESCAPE '\\')))",
		    "(((t.\"title\" ILIKE $1 ESCAPE '\\')))", 1 },
		{ "hot = true && created > @yesterday || status ?= 'draft'",
		    "(((t.\"hot\" = $1) AND (t.\"created\" > $2)) OR ((t.\"status\" = $3)))", NULL, 3 },
		{ "author.name = 'u'", "((((SELECT r1.\"name\" FROM \"users\" AS r1 WHERE r1.\"id\" = "
		    "t.\"author\") = $1)))", NULL, 1 },
		{ "tags ?= 'a'", "((EXISTS (SELECT 1 FROM json_each(t.\"tags\") AS j1 WHERE "
		    "(j1.value = $1))))", "((EXISTS (SELECT 1 FROM jsonb_array_elements_text("
		    "t.\"tags\") AS j1(value) WHERE (j1.value = $1))))", 1 },
		{ "tags = ''", "((((t.\"tags\" IS NULL OR t.\"tags\" = '[]'))))", NULL, 0 },
		{ "'a' = 'a' && 1 < 2", "(((1=1) AND (1=1)))", NULL, 0 },
		{ "'a' ~ 'B'", "(((1=0)))", NULL, 0 },
		{ "// a comment\n title = 'x' // another", "(((t.\"title\" = $1)))", NULL, 1 },
		{ "comments_via_post.text ?~ 'x'", "((EXISTS (SELECT 1 FROM \"comments\" AS r1 WHERE "
		    "r1.\"post\" = t.\"id\" AND (r1.\"text\" LIKE $1 ESCAPE '\\'))))",
		    "((EXISTS (SELECT 1 FROM \"comments\" AS r1 WHERE r1.\"post\" = t.\"id\" AND "
		    "(r1.\"text\" ILIKE $1 ESCAPE '\\'))))", 1 },
		{ "comments_via_post.post.title = 'x'", "(((EXISTS (SELECT 1 FROM \"comments\" AS r1 "
		    "WHERE r1.\"post\" = t.\"id\" AND 1=1) AND NOT EXISTS (SELECT 1 FROM \"comments\" "
		    "AS r1 WHERE r1.\"post\" = t.\"id\" AND ((SELECT r2.\"title\" FROM \"posts\" AS r2 "
		    "WHERE r2.\"id\" = r1.\"post\") = $1) IS NOT TRUE))))", NULL, 1 },
		{ "editors.name ?= 'x'", "((EXISTS (SELECT 1 FROM \"users\" AS r1 WHERE r1.\"id\" IN "
		    "(SELECT value FROM json_each(t.\"editors\") AS e1) AND (r1.\"name\" = $1))))",
		    "((EXISTS (SELECT 1 FROM \"users\" AS r1 WHERE r1.\"id\" IN (SELECT value FROM "
		    "jsonb_array_elements_text(t.\"editors\") AS e1(value)) AND (r1.\"name\" = $1))))",
		    1 },
		/* A path crossing two sets: every pair of a comment and its post's comment. */
		{ "comments_via_post.post.comments_via_post.text ?= 'x'",
		    "((EXISTS (SELECT 1 FROM \"comments\" AS r1, \"posts\" AS r2,"
		    " \"comments\" AS r3 WHERE r1.\"post\" = t.\"id\" AND r2.\"id\" ="
		    " r1.\"post\" AND r3.\"post\" = r2.\"id\" AND (r3.\"text\" = $1))))",
		    NULL, 1 },
		{ "comments_via_post.post.comments_via_post.text = 'x'",
		    "(((EXISTS (SELECT 1 FROM \"comments\" AS r1, \"posts\" AS r2,"
		    " \"comments\" AS r3 WHERE r1.\"post\" = t.\"id\" AND r2.\"id\" ="
		    " r1.\"post\" AND r3.\"post\" = r2.\"id\" AND 1=1) AND NOT EXISTS"
		    " (SELECT 1 FROM \"comments\" AS r1, \"posts\" AS r2, \"comments\" AS"
		    " r3 WHERE r1.\"post\" = t.\"id\" AND r2.\"id\" = r1.\"post\" AND"
		    " r3.\"post\" = r2.\"id\" AND (r3.\"text\" = $1) IS NOT TRUE))))",
		    NULL, 1 },
		{ "editors.name:lower ?= 'x'",
		    "((EXISTS (SELECT 1 FROM \"users\" AS r1 WHERE r1.\"id\" IN (SELECT"
		    " value FROM json_each(t.\"editors\") AS e1) AND (LOWER(r1.\"name\") ="
		    " $1))))",
		    "((EXISTS (SELECT 1 FROM \"users\" AS r1 WHERE r1.\"id\" IN (SELECT"
		    " value FROM jsonb_array_elements_text(t.\"editors\") AS e1(value))"
		    " AND (LOWER(r1.\"name\") = $1))))", 1 },
		{ "comments_via_post.post.tags ?= 'a'",
		    "((EXISTS (SELECT 1 FROM \"comments\" AS r1, json_each((SELECT"
		    " r2.\"tags\" FROM \"posts\" AS r2 WHERE r2.\"id\" = r1.\"post\")) AS"
		    " j3 WHERE r1.\"post\" = t.\"id\" AND (j3.value = $1))))",
		    "((EXISTS (SELECT 1 FROM \"comments\" AS r1,"
		    " jsonb_array_elements_text((SELECT r2.\"tags\" FROM \"posts\" AS r2"
		    " WHERE r2.\"id\" = r1.\"post\")) AS j3(value) WHERE r1.\"post\" ="
		    " t.\"id\" AND (j3.value = $1))))", 1 },
		{ "title:lower = 'x'", "(((LOWER(t.\"title\") = $1)))", NULL, 1 },
		{ "tags:length > 1", "(((json_array_length(t.\"tags\") > $1)))",
		    "(((jsonb_array_length(t.\"tags\") > $1)))", 1 },
		{ "title:length < 3", "(((length(t.\"title\") < $1)))", NULL, 1 },
		{ "tags:each != 'a'", "(((NOT EXISTS (SELECT 1 FROM json_each(t.\"tags\") AS j1 WHERE "
		    "(j1.value IS NOT $1) IS NOT TRUE))))", "(((NOT EXISTS (SELECT 1 FROM "
		    "jsonb_array_elements_text(t.\"tags\") AS j1(value) WHERE (j1.value IS DISTINCT "
		    "FROM $1) IS NOT TRUE))))", 1 },
	};
	struct sqlb q;
	struct buf sql;
	size_t i;

	buf_init(&sql, 1 << 20);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		CHECK_INT(tf(cases[i].f, DB_SQLITE, NULL, &q, &sql), 0);
		CHECK_STR(sql.data, cases[i].sqlite);
		CHECK_INT(q.vals.n, cases[i].binds);
		CHECK_INT(tf(cases[i].f, DB_PG, NULL, &q, &sql), 0);
		CHECK_STR(sql.data, cases[i].pg ? cases[i].pg : cases[i].sqlite);
	}
	/* '~' wraps and escapes a literal without '%'. */
	CHECK_INT(tf("title ~ 'a_b\\c'", DB_SQLITE, NULL, &q, &sql), 0);
	CHECK(q.vals.n == 1 && q.vals.v[0].len == 9 && memcmp(q.vals.v[0].s, "%a\\_b\\\\c%", 9) == 0);
	/* Only the enclosing quote is escapable; the value is bound whole. */
	CHECK_INT(tf("title = 'it\\'s \" OR 1=1 --'", DB_SQLITE, NULL, &q, &sql), 0);
	CHECK(q.vals.n == 1 && strcmp(q.vals.v[0].s, "it's \" OR 1=1 --") == 0);
	CHECK(strstr(sql.data, "OR 1=1") == NULL);
	buf_free(&sql);
}

static void
test_filter_refusals(void)
{
	static const struct { const char *f; int status; } cases[] = {
		{ "", 400 }, { "title", 400 }, { "title =", 400 }, { "= 'x'", 400 },
		{ "title = 'x", 400 }, { "title == 'x'", 400 }, { "(title = 'x'", 400 },
		{ "title = 'x')", 400 }, { "title = 'x' &&", 400 }, { "title = 'x' | 1 = 1", 400 },
		{ "nope = 1", 400 }, { "author.nope = 1", 400 }, { "title.x = 1", 400 },
		{ "tags.x = 1", 400 }, { "tags = tags", 400 }, { "'x' ~ tags", 400 },
		{ "1x = 1", 400 }, { "- = 1", 400 }, { "@unknown = 1", 400 },
		{ "@request.auth.id = ''", 403 }, { "@collection.posts.id = 1", 403 },
		{ "title = 'x'; DROP TABLE posts", 400 }, { "title = 'a\0b'", 400 },
		{ "title:nope = 1", 400 }, { "hot:lower = 1", 400 }, { "title:each = 1", 400 },
		{ "title: = 1", 400 }, { "@request.auth.id:lower = 1", 403 },
		{ "comments_via_post.post.comments_via_post.post.comments_via_post.post."
		    "comments_via_post.text = 'x'", 400 },
		{ "comments_via_post.text:length > 1", 400 },
		{ "@collection.posts:a.title ?= 'x'", 403 },
		{ "comments_via_title.text = 'x'", 400 }, { "nope_via_post.text = 'x'", 400 },
		{ "comments_via_post = 'x'", 400 }, { "comments_via_post.nope = 1", 400 },
	};
	struct sqlb q;
	struct buf sql;
	struct buf big;
	char err[256];
	size_t i;

	buf_init(&sql, 1 << 20);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++)
		if (tf(cases[i].f, DB_SQLITE, NULL, &q, &sql) != cases[i].status)
			harness_fail(__FILE__, __LINE__, "filter \"%s\": want %d", cases[i].f,
			    cases[i].status);
	/* A NUL inside the length. */
	sqlb_init(&q, &sql, ta, DB_SQLITE);
	CHECK(filter_compile(&q, &tc.c[1], "t", "title = 'a\0'", 12, NULL, err, sizeof(err)) ==
	    FILTER_ESYNTAX);
	/* 200 comparisons pass, 201 do not; 3,500 characters pass, 3,501 do not. */
	buf_init(&big, 1 << 20);
	for (i = 0; i < 200; i++)
		buf_puts(&big, i ? " || id = 'a'" : "id = 'a'");
	CHECK_INT(tf(big.data, DB_SQLITE, NULL, &q, &sql), big.len <= 3500 ? 0 : 400);
	buf_reset(&big, 0);
	for (i = 0; i < 201; i++)
		buf_puts(&big, i ? "||id='a'" : "id='a'");
	CHECK(big.len <= 3500);
	CHECK_INT(tf(big.data, DB_SQLITE, NULL, &q, &sql), 400);
	buf_reset(&big, 0);
	buf_puts(&big, "id = 'a'");
	while (big.len < 3500)
		buf_putc(&big, ' ');
	CHECK_INT(tf(big.data, DB_SQLITE, NULL, &q, &sql), 0);
	buf_putc(&big, ' ');
	CHECK_INT(tf(big.data, DB_SQLITE, NULL, &q, &sql), 400);
	/* Nesting past 32 parentheses: 400 (no deep recursion). */
	buf_reset(&big, 0);
	for (i = 0; i < 1000; i++)
		buf_putc(&big, '(');
	CHECK_INT(tf(big.data, DB_SQLITE, NULL, &q, &sql), 400);
	buf_free(&big);
	buf_free(&sql);
}

/* A client's filter sees an auth record's email only where the response would show it. */
static void
test_filter_hidden_email(void)
{
	const char *vals[16] = { "abcdefghijklmno" };
	size_t lens[16] = { 15 };
	struct filter_ctx ctx = { .rule = 0 };
	struct sqlb q;
	struct buf sql;
	char err[256];

	buf_init(&sql, 1 << 20);
	sqlb_init(&q, &sql, ta, DB_SQLITE);
	CHECK(filter_compile(&q, &tc.c[0], "t", "email = 'a@b.c'", 15, &ctx, err, sizeof(err)) ==
	    FILTER_OK);
	CHECK_STR(sql.data, "((((CASE WHEN t.\"emailVisibility\" OR t.\"id\" = $1 THEN "
	    "t.\"email\" ELSE '' END) = $2)))");
	CHECK(q.vals.n == 2 && q.vals.v[0].len == 0);
	ctx.auth = &tc.c[0];
	ctx.auth_vals = vals;
	ctx.auth_lens = lens;
	sqlb_init(&q, &sql, ta, DB_SQLITE);
	CHECK(filter_compile(&q, &tc.c[0], "t", "email = 'a@b.c'", 15, &ctx, err, sizeof(err)) ==
	    FILTER_OK);
	CHECK(q.vals.n == 2 && q.vals.v[0].len == 15);
	/* A superuser's filter and a rule see the column itself. */
	ctx.superuser = 1;
	sqlb_init(&q, &sql, ta, DB_SQLITE);
	CHECK(filter_compile(&q, &tc.c[0], "t", "email = 'a@b.c'", 15, &ctx, err, sizeof(err)) ==
	    FILTER_OK);
	CHECK_STR(sql.data, "(((t.\"email\" = $1)))");
	ctx.superuser = 0;
	ctx.rule = 1;
	sqlb_init(&q, &sql, ta, DB_SQLITE);
	CHECK(filter_compile(&q, &tc.c[0], "t", "email = 'a@b.c'", 15, &ctx, err, sizeof(err)) ==
	    FILTER_OK);
	CHECK_STR(sql.data, "(((t.\"email\" = $1)))");
	buf_free(&sql);
}

/* A rule case: the status of compiling f on posts (0: compiled), and the SQL then, on
 * SQLite and on PostgreSQL (pg NULL: the same as SQLite's; sqlite NULL: not compared). */
struct rule_case {
	const char *f;
	int status;
	const char *sqlite, *pg;
};

static void
rule_cases(const struct rule_case *cases, size_t n, const struct filter_ctx *ctx)
{
	struct sqlb q;
	struct buf sql;
	size_t i;

	buf_init(&sql, 1 << 20);
	for (i = 0; i < n; i++) {
		CHECK_INT(tf(cases[i].f, DB_SQLITE, ctx, &q, &sql), cases[i].status);
		if (cases[i].sqlite != NULL)
			CHECK_STR(sql.data, cases[i].sqlite);
		CHECK_INT(tf(cases[i].f, DB_PG, ctx, &q, &sql), cases[i].status);
		if (cases[i].sqlite != NULL)
			CHECK_STR(sql.data, cases[i].pg ? cases[i].pg : cases[i].sqlite);
	}
	buf_free(&sql);
}

static void
test_filter_rules(void)
{
	const char *vals[16] = { "abcdefghijklmno", "me@x.com", "1", "0", "h", "k", "Me",
	    "42", "2025" };
	size_t lens[16] = { 15, 8, 1, 1, 1, 1, 2, 2, 4 };
	struct filter_ctx ctx = { .rule = 1 };
	struct sqlb q;
	struct buf sql;

	buf_init(&sql, 1 << 20);
	/* Not signed in: @request.auth.id is empty, so the rule folds to false. */
	CHECK_INT(tf("@request.auth.id != ''", DB_PG, &ctx, &q, &sql), 0);
	CHECK_STR(sql.data, "(((1=0)))");
	ctx.auth = &tc.c[0];
	ctx.auth_vals = vals;
	ctx.auth_lens = lens;
	CHECK_INT(tf("@request.auth.id != ''", DB_PG, &ctx, &q, &sql), 0);
	CHECK_STR(sql.data, "(((1=1)))");
	CHECK_INT(tf("author = @request.auth.id", DB_SQLITE, &ctx, &q, &sql), 0);
	CHECK(q.vals.n == 1 && strcmp(q.vals.v[0].s, "abcdefghijklmno") == 0);
	CHECK_INT(tf("@request.auth.emailVisibility = true && @request.auth.age > 40",
	    DB_SQLITE, &ctx, &q, &sql), 0);
	CHECK_STR(sql.data, "(((1=1) AND (1=1)))");
	CHECK_INT(tf("@request.auth.password = ''", DB_SQLITE, &ctx, &q, &sql), 400);
	CHECK_INT(tf("@request.auth.collectionName = 'users'", DB_SQLITE, &ctx, &q, &sql), 0);
	CHECK_STR(sql.data, "(((1=1)))");
	{
		cJSON *body = cJSON_Parse("{\"title\":\"t\",\"n\":3,\"b\":true,\"o\":{}}");

		ctx.body = body;
		CHECK_INT(tf("@request.body.title = title && @request.body.n = 3 && "
		    "@request.body.b = true && @request.body.none = null", DB_SQLITE, &ctx, &q,
		    &sql), 0);
		CHECK_INT(q.vals.n, 1);
		CHECK_INT(tf("@request.body.o = 1", DB_SQLITE, &ctx, &q, &sql), 400);
		cJSON_Delete(body);
	}
	{
		/* :isset is known in C; :changed compares the body with the record's column. */
		cJSON *body = cJSON_Parse("{\"title\":\"t\",\"tags\":[\"a\"],\"nul\":null,"
		    "\"meta\":{\"k\":1}}");
		static const struct rule_case cases[] = {
			{ "@request.body.title:isset = true && @request.body.none:isset = false && "
			    "@request.body.nul:isset = true", 0, "(((1=1) AND (1=1) AND (1=1)))",
			    NULL },
			{ "@request.body.status:changed = false", 0, "(((1=1)))", NULL },
			{ "@request.body.title:changed = false", 0,
			    "((((($1 IS NOT t.\"title\")) = $2)))",
			    "((((($1 IS DISTINCT FROM t.\"title\")) = $2)))" },
			{ "@request.body.tags:changed = false", 0,
			    "((((json(t.\"tags\") IS NOT json($1)) = $2)))",
			    "((((t.\"tags\" IS DISTINCT FROM CAST($1 AS jsonb)) = $2)))" },
			{ "@request.body.meta:changed = true", 0,
			    "((((json(t.\"meta\") IS NOT json($1)) = $2)))",
			    "((((t.\"meta\" IS DISTINCT FROM CAST($1 AS jsonb)) = $2)))" },
			{ "@request.body.nope:changed = false", 400, NULL, NULL },
			{ "@request.body.title:lower = 'x'", 400, NULL, NULL },
			{ "@request.body.title:isset", 400, NULL, NULL },
			{ "@request.auth.id:isset = true", 400, NULL, NULL },
		};

		ctx.body = body;
		rule_cases(cases, sizeof(cases) / sizeof(cases[0]), &ctx);
		ctx.body = NULL;
		cJSON_Delete(body);
	}
	{
		/* @collection.X: any-of operators share one join of X over the rule; plain
		 * operators read every record of X. */
		static const struct rule_case cases[] = {
			{ "@collection.comments.post ?= id && @collection.comments.text ?= 'x'", 0,
			    "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0 LEFT JOIN \"comments\""
			    " AS c1 ON 1=1 WHERE (((c1.\"post\" = t.\"id\") AND (c1.\"text\""
			    " = $1)))))",
			    NULL },
			{ "@collection.comments:c.post ?= id && @collection.comments.text = 'x' || "
			    "@collection.users.name ?~ 'a'", 0,
			    "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0 LEFT JOIN \"comments\""
			    " AS c1 ON 1=1 LEFT JOIN \"users\" AS c3 ON 1=1 WHERE"
			    " (((c1.\"post\" = t.\"id\") AND (EXISTS (SELECT 1 FROM"
			    " \"comments\" AS c2 WHERE 1=1) AND NOT EXISTS (SELECT 1 FROM"
			    " \"comments\" AS c2 WHERE (c2.\"text\" = $1) IS NOT TRUE))) OR"
			    " ((c3.\"name\" LIKE $2 ESCAPE '\\')))))",
			    "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0 LEFT JOIN \"comments\""
			    " AS c1 ON 1=1 LEFT JOIN \"users\" AS c3 ON 1=1 WHERE"
			    " (((c1.\"post\" = t.\"id\") AND (EXISTS (SELECT 1 FROM"
			    " \"comments\" AS c2 WHERE 1=1) AND NOT EXISTS (SELECT 1 FROM"
			    " \"comments\" AS c2 WHERE (c2.\"text\" = $1) IS NOT TRUE))) OR"
			    " ((c3.\"name\" ILIKE $2 ESCAPE '\\')))))" },
			{ "@collection.posts.tags ?= 'a'", 0,
			    "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0 LEFT JOIN \"posts\" AS"
			    " c1 ON 1=1 WHERE ((EXISTS (SELECT 1 FROM json_each(c1.\"tags\")"
			    " AS j2 WHERE (j2.value = $1))))))",
			    "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0 LEFT JOIN \"posts\" AS"
			    " c1 ON 1=1 WHERE ((EXISTS (SELECT 1 FROM"
			    " jsonb_array_elements_text(c1.\"tags\") AS j2(value) WHERE"
			    " (j2.value = $1))))))" },
			{ "'me' ?= @collection.comments.post.author.name", 0,
			    "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0 LEFT JOIN \"comments\""
			    " AS c1 ON 1=1 WHERE ((($1 = (SELECT (SELECT r2.\"name\" FROM"
			    " \"users\" AS r2 WHERE r2.\"id\" = r1.\"author\") FROM"
			    " \"posts\" AS r1 WHERE r1.\"id\" = c1.\"post\"))))))",
			    NULL },
			{ "@collection.nope.x ?= 1", 400, NULL, NULL },
			{ "@collection.users.password ?= 'x'", 400, NULL, NULL },
			{ "@collection.comments ?= 1", 400, NULL, NULL },
			{ "@collection.comments:.post ?= 1", 400, NULL, NULL },
			{ "@collection.comments:a-b.post ?= 1", 400, NULL, NULL },
			{ "@collection.comments.post ?= @collection.posts.id", 0,
			    "(EXISTS (SELECT 1 FROM (SELECT 1) AS c0 LEFT JOIN \"comments\""
			    " AS c1 ON 1=1 LEFT JOIN \"posts\" AS c2 ON 1=1 WHERE"
			    " (((c1.\"post\" = c2.\"id\")))))",
			    NULL },
			{ "@collection.comments.post = @collection.posts.id", 400, NULL, NULL },
			{ "@collection.users:a.id ?= 1 && @collection.users:b.id ?= 1 && "
			    "@collection.users:c.id ?= 1 && @collection.users:d.id ?= 1 && "
			    "@collection.users:e.id ?= 1 && @collection.users:f.id ?= 1 && "
			    "@collection.users:g.id ?= 1 && @collection.users:h.id ?= 1 && "
			    "@collection.users:i.id ?= 1", 400, NULL, NULL },
		};

		rule_cases(cases, sizeof(cases) / sizeof(cases[0]), &ctx);
	}
	buf_free(&sql);
}

static void
test_sort_expand_fields(void)
{
	static const struct { const char *s; const char *sql; } sorts[] = {
		{ "", "" }, { "title", " ORDER BY t.\"title\" COLLATE \"C\" ASC" },
		{ "-created,+hot", " ORDER BY t.\"created\" COLLATE \"C\" DESC, t.\"hot\" ASC" },
		{ "@random", " ORDER BY random()" }, { " title , ", " ORDER BY t.\"title\" COLLATE \"C\" ASC" },
	};
	static const char *const bad[] = { "nope", "-", "author.name", "a,b,c,d,e,f,g,h,i",
	    "title;DROP", "title,title,title,title,title,title,title,title,title" };
	struct query_expands ex;
	struct query_fields fs;
	const struct query_field *qf;
	struct sqlb q;
	struct buf sql;
	char err[256];
	size_t i;

	buf_init(&sql, 1 << 20);
	for (i = 0; i < sizeof(sorts) / sizeof(sorts[0]); i++) {
		sqlb_init(&q, &sql, ta, DB_PG);
		buf_puts(&sql, "");
		CHECK(query_sort(&q, &tc.c[1], "t", sorts[i].s, strlen(sorts[i].s), 1, err,
		    sizeof(err)) == 0);
		CHECK_STR(sql.data ? sql.data : "", sorts[i].sql);
	}
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		sqlb_init(&q, &sql, ta, DB_PG);
		if (query_sort(&q, &tc.c[1], "t", bad[i], strlen(bad[i]), 1, err, sizeof(err)) == 0)
			harness_fail(__FILE__, __LINE__, "sort \"%s\" accepted", bad[i]);
	}
	/* An auth collection's email: a superuser's sort only. */
	sqlb_init(&q, &sql, ta, DB_SQLITE);
	CHECK(query_sort(&q, &tc.c[0], "t", "-email", 6, 1, err, sizeof(err)) < 0);
	sqlb_init(&q, &sql, ta, DB_SQLITE);
	CHECK(query_sort(&q, &tc.c[0], "t", "-email", 6, 0, err, sizeof(err)) == 0);
	CHECK_STR(sql.data, " ORDER BY t.\"email\" DESC");
	buf_free(&sql);
	/* expand: nodes parents first, back-relations, unknowns skipped, depth 6. */
	CHECK(query_expand_parse(&ex, &tc.c[1], "author,comments_via_post.post.author,nope",
	    40, err, sizeof(err)) == 0);
	CHECK_INT(ex.count, 4);
	CHECK_STR(ex.n[1].name, "comments_via_post");
	CHECK(ex.n[1].back && ex.n[1].many && ex.n[1].coll == &tc.c[2]);
	CHECK(ex.n[2].parent == 1 && ex.n[3].parent == 2 && ex.n[3].coll == &tc.c[0]);
	CHECK(query_expand_parse(&ex, &tc.c[1], "a.b.c.d.e.f.g", 13, err, sizeof(err)) < 0);
	CHECK(query_expand_parse(&ex, &tc.c[1], "posts_via_title", 15, err, sizeof(err)) == 0);
	CHECK_INT(ex.count, 0);
	/* fields */
	CHECK(query_fields_parse(&fs, ta, "id, expand.author.name,body:excerpt(20,true)", 44,
	    err, sizeof(err)) == 0);
	CHECK_INT(fs.count, 3);
	CHECK(fs.f[2].excerpt == 20 && fs.f[2].ellipsis == 1);
	CHECK_INT(query_fields_keep(&fs, "", 0, "id", &qf), 1);
	CHECK_INT(query_fields_keep(&fs, "", 0, "title", &qf), 0);
	CHECK_INT(query_fields_keep(&fs, "", 0, "expand", &qf), 2);
	CHECK_INT(query_fields_keep(&fs, "expand.", 7, "author", &qf), 2);
	CHECK_INT(query_fields_keep(&fs, "expand.author.", 14, "name", &qf), 1);
	CHECK_INT(query_fields_keep(&fs, "", 0, "body", &qf), 1);
	CHECK(qf != NULL && qf->excerpt == 20);
	{
		static const char *const badf[] = { "a b", "x:excerpt(0)", "x:excerpt(5,maybe)",
		    "x:excerpt(", "x:nope(1)", "x;y", "x:excerpt(1)y" };

		for (i = 0; i < sizeof(badf) / sizeof(badf[0]); i++)
			if (query_fields_parse(&fs, ta, badf[i], strlen(badf[i]), err, sizeof(err)) == 0)
				harness_fail(__FILE__, __LINE__, "fields \"%s\" accepted", badf[i]);
	}
}

static void
test_tokens(void)
{
	static const unsigned char key[32] = { 1, 2, 3 };
	static const char *const bad[] = { "", "a", "a.b", "a.b.c", "a.b.c.d", "....",
	    "eyJhbGciOiJub25lIn0.eyJ0eXBlIjoiYXV0aCJ9.", "e30.e30.e30" };
	struct token_claims cl;
	char tok[TOKEN_MAX], t2[TOKEN_MAX], id[16] = "";
	int n;
	size_t i;

	token_set_secret(key, sizeof(key));
	n = token_make(tok, sizeof(tok), "_pb_users_auth_", "abcdefghijklmno", "tk", 2, 1900000000);
	CHECK(n > 0 && (size_t)n == strlen(tok));
	CHECK(token_parse(tok, (size_t)n, &cl) == 0);
	CHECK_STR(cl.coll_id, "_pb_users_auth_");
	CHECK_STR(cl.id, "abcdefghijklmno");
	CHECK_INT(cl.exp, 1900000000);
	CHECK_INT(cl.refreshable, 1);
	/* An impersonation's token: the same, but not refreshable, and signed alike. */
	n = token_make_static(t2, sizeof(t2), "_pb_users_auth_", "abcdefghijklmno", "tk", 2,
	    1900000000);
	CHECK(n > 0 && token_parse(t2, (size_t)n, &cl) == 0);
	CHECK_INT(cl.refreshable, 0);
	CHECK(token_verify(t2, (size_t)n, "_pb_users_auth_", "tk", 2) == 1);
	n = (int)strlen(tok);
	CHECK(token_parse(tok, (size_t)n, &cl) == 0);
	CHECK(token_verify(tok, (size_t)n, "_pb_users_auth_", "tk", 2) == 1);
	CHECK(token_verify(tok, (size_t)n, "_pb_users_auth_", "tk2", 3) == 0);
	CHECK(token_verify(tok, (size_t)n, "other", "tk", 2) == 0);
	memcpy(t2, tok, (size_t)n + 1);
	t2[n - 1] = t2[n - 1] == 'A' ? 'B' : 'A';
	CHECK(token_verify(t2, (size_t)n, "_pb_users_auth_", "tk", 2) == 0);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		if (token_parse(bad[i], strlen(bad[i]), &cl) == 0)
			harness_fail(__FILE__, __LINE__, "token \"%s\" parsed", bad[i]);
	CHECK(token_random_text(id, 15) == 0);
	for (i = 0; i < 15; i++)
		CHECK((id[i] >= 'a' && id[i] <= 'z') || (id[i] >= '0' && id[i] <= '9'));
}

/* The account flows' tokens: PocketBase's claims per type, and a token of one type never
 * parses or checks as another. */
static void
test_tokens_typed(void)
{
	static const unsigned char key[32] = { 4, 5, 6 };
	static const char want[] = "{\"collectionId\":\"_pb_users_auth_\",\"email\":\"a@b.c\","
	    "\"exp\":1900000000,\"id\":\"abcdefghijklmno\",\"newEmail\":\"x\\\"y@b.c\","
	    "\"type\":\"emailChange\"}";
	struct token_claims cl;
	char tok[TOKEN_MAX], claims[512];
	const char *d1, *d2;
	long n2;
	int n;

	token_set_secret(key, sizeof(key));
	n = token_make_as(tok, sizeof(tok), TOKEN_EMAIL_CHANGE, "_pb_users_auth_",
	    "abcdefghijklmno", "a@b.c", "x\"y@b.c", "tk", 2, 1900000000);
	CHECK(n > 0);
	d1 = strchr(tok, '.');
	d2 = strchr(d1 + 1, '.');
	n2 = str_b64url_dec(d1 + 1, (size_t)(d2 - d1 - 1), (unsigned char *)claims,
	    sizeof(claims) - 1);
	CHECK(n2 > 0);
	claims[n2 > 0 ? n2 : 0] = '\0';
	CHECK_STR(claims, want);
	CHECK(token_parse_as(tok, (size_t)n, TOKEN_EMAIL_CHANGE, &cl) == 0);
	CHECK_STR(cl.email, "a@b.c");
	CHECK_STR(cl.new_email, "x\"y@b.c");
	CHECK(token_verify_as(tok, (size_t)n, TOKEN_EMAIL_CHANGE, "_pb_users_auth_", "tk", 2) == 1);
	CHECK(token_parse(tok, (size_t)n, &cl) < 0);
	CHECK(token_parse_as(tok, (size_t)n, TOKEN_PASSWORD_RESET, &cl) < 0);
	CHECK(token_verify_as(tok, (size_t)n, TOKEN_PASSWORD_RESET, "_pb_users_auth_", "tk",
	    2) == 0);
	CHECK(token_verify(tok, (size_t)n, "_pb_users_auth_", "tk", 2) == 0);
	n = token_make_as(tok, sizeof(tok), TOKEN_VERIFICATION, "_pb_users_auth_",
	    "abcdefghijklmno", "a@b.c", NULL, "tk", 2, 1900000000);
	CHECK(n > 0 && token_parse_as(tok, (size_t)n, TOKEN_VERIFICATION, &cl) == 0);
	CHECK(token_verify_as(tok, (size_t)n, TOKEN_VERIFICATION, "_pb_users_auth_", "tk", 2) == 1);
	CHECK(token_verify_as(tok, (size_t)n, TOKEN_VERIFICATION, "_pb_users_auth_", "tk2",
	    3) == 0);
	CHECK(token_parse_as(tok, (size_t)n, TOKEN_AUTH, &cl) < 0);
}

/* The mail helper: malformed commands refused; a message handed to the command (tee,
 * which writes its input to a file) arrives whole, from the helper forked here. */
static void
test_mail(void)
{
	static const char msg[] = "To: a@b.c\r\nSubject: s\r\n\r\nhello\r\n";
	char path[64], cmd[128], got[256] = "";
	size_t n = 0;
	FILE *f;
	int i;

	CHECK(mail_on() == 0);
	CHECK(mail_send(msg, sizeof(msg) - 1) == -1);
	CHECK(mail_start(NULL) == 0 && mail_on() == 0);
	CHECK(mail_start("relative/sendmail") == -1);
	CHECK(mail_start("/nonexistent/sendmail,-t") == -1);
	CHECK(mail_start("/usr/bin/tee,1,2,3,4,5,6,7,8,9,10,11,12,13,14,15,16") == -1);
	snprintf(path, sizeof(path), "/tmp/sluice-mail-%d.eml", (int)getpid());
	snprintf(cmd, sizeof(cmd), "/usr/bin/tee %s", path);
	CHECK(mail_start(cmd) == 0 && mail_on() == 1);
	CHECK(mail_send(msg, sizeof(msg) - 1) == 0);
	for (i = 0; i < 250 && n < sizeof(msg) - 1; i++) {
		usleep(20000);
		if ((f = fopen(path, "r")) != NULL) {
			n = fread(got, 1, sizeof(got) - 1, f);
			got[n] = '\0';
			fclose(f);
		}
	}
	CHECK_STR(got, msg);
	mail_stop();
	CHECK(mail_on() == 0);
	unlink(path);
}

static void
test_bcrypt(void)
{
	char h[PASS_HASH_MAX];

	CHECK(pass_hash("password123", 11, 4, h) == 0);
	CHECK(strncmp(h, "$2b$04$", 7) == 0 && strlen(h) == 60);
	CHECK(pass_check("password123", 11, h, 4) == 1);
	CHECK(pass_check("password124", 11, h, 4) == 0);
	CHECK(pass_check("password123", 11, NULL, 4) == 0);
	CHECK(pass_check("password123", 11, "", 4) == 0);
	CHECK(pass_check("password123", 11, "*0", 4) == 0);
	CHECK(pass_hash("a\0b", 3, 4, h) < 0);
}

/* The rate limits' buckets: N a minute in a burst, then one more every 60/N seconds; each
 * key its own; a table full of other keys forgets the one used longest ago. */
static void
test_buckets(void)
{
	char key[32];
	int i, ok = 0;

	bucket_reset();
	for (i = 0; i < 3; i++)
		CHECK_INT(bucket_take("a", 1, 3, 100.0), 1);
	CHECK_INT(bucket_take("a", 1, 3, 100.0), 0);
	CHECK_INT(bucket_take("a", 1, 3, 119.0), 0);	/* 0.95 of a token back */
	CHECK_INT(bucket_take("b", 1, 3, 119.0), 1);
	CHECK_INT(bucket_take("a", 1, 3, 121.0), 1);	/* 1.05 */
	CHECK_INT(bucket_take("a", 1, 3, 121.0), 0);
	CHECK_INT(bucket_take("a", 1, 0, 121.0), 1);	/* 0: no limit */
	/* Never more than N, however long it waited. */
	for (i = 0; i < 5; i++)
		ok += bucket_take("a", 1, 3, 10000.0);
	CHECK_INT(ok, 3);
	/* Many other keys since: "a" was forgotten and starts full again. */
	for (i = 0; i < BUCKET_SETS * BUCKET_WAYS * 4; i++) {
		int n = snprintf(key, sizeof(key), "k%d", i);

		(void)bucket_take(key, (size_t)n, 3, 10001.0 + i * 1e-6);
	}
	CHECK_INT(bucket_take("a", 1, 3, 10002.0), 1);
	bucket_reset();
}

int
main(void)
{
	tc_load();
	RUN(test_coll_parse);
	RUN(test_coll_ddl);
	RUN(test_coll_counts_ddl);
	RUN(test_coll_merge);
	RUN(test_filter_sql);
	RUN(test_filter_eq);
	RUN(test_filter_refusals);
	RUN(test_filter_rules);
	RUN(test_filter_hidden_email);
	RUN(test_sort_expand_fields);
	RUN(test_tokens);
	RUN(test_tokens_typed);
	RUN(test_mail);
	RUN(test_bcrypt);
	RUN(test_lane);
	RUN(test_buckets);
	colls_free(&tc);
	arena_free(ta);
	return harness_done();
}
