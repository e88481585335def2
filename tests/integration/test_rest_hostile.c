/*
 * test_rest_hostile: malformed and hostile requests against every parser of the rest
 * endpoint (select, filters, logic trees, order, limit/offset, Range, columns=, on_conflict=,
 * JSON bodies, RPC arguments, paths, Prefer, Accept-Profile, Content-Profile, the plan
 * type's options), on SQLite and PostgreSQL: each gets a clear 4xx with
 * the JSON error body, never a 5xx, and the data is exactly what it was afterwards.  Also
 * the limits (query length, filters, in-list size, embed depth, logic depth, body size), and
 * the schema refresh on SIGHUP, read once by a worker whose threads all reload.  The richer grammar (aggregates, casts, JSON paths, spreads,
 * op(any|all) lists, fts languages) gets the same treatment: injections stay values, and
 * deep, long or malformed forms are 400s.
 */
#include <pthread.h>

#include "rest_fixture.h"

static struct http_resp r;

/* Sends to both, wants status on both and a JSON error body with a code. */
#define BAD(m_, p_, h_, b_, s_) do { \
	FX_BOTH(m_, p_, h_, b_, s_, NULL, &r); \
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"code\":") != NULL); \
} while (0)

static const char *const json[] = { "Content-Type: application/json", NULL };

static const char artists[] = "[{\"artist_id\":1,\"name\":\"AC/DC\"},{\"artist_id\":2,"
    "\"name\":\"Accept\"},{\"artist_id\":3,\"name\":\"Aerosmith\"},{\"artist_id\":4,"
    "\"name\":\"O'Brien, \\\"Jr\\\"\"},{\"artist_id\":5,\"name\":null}]";

static void
test_rest_hostile_select(void)
{
	char path[20000];
	int i;

	FX_BOTH("GET", "artist?select=%22name%22&artist_id=eq.1", NULL, NULL, 200,
	    "[{\"name\":\"AC/DC\"}]", &r);
	FX_BOTH("GET", "artist?select=x'y:name&artist_id=eq.1", NULL, NULL, 200,
	    "[{\"x'y\":\"AC/DC\"}]", &r);
	FX_BOTH("GET", "artist?select=%22a%22%22b%22:name&artist_id=eq.1", NULL, NULL, 200,
	    "[{\"a\\\"b\":\"AC/DC\"}]", &r);
	BAD("GET", "artist?select=%22na%22%22me%22", NULL, NULL, 400);
	BAD("GET", "artist?select=name;drop%20table%20artist", NULL, NULL, 400);
	BAD("GET", "artist?select=name)%20from%20artist;--", NULL, NULL, 400);
	BAD("GET", "artist?select=album!%22x;drop%22(*)", NULL, NULL, 400);
	BAD("GET", "artist?select=name::text;drop", NULL, NULL, 400);
	BAD("GET", "artist?select=name::evil", NULL, NULL, 400);
	BAD("GET", "artist?select=%FF%FE", NULL, NULL, 400);
	BAD("GET", "artist?select=a:b:c", NULL, NULL, 400);
	BAD("GET", "artist?select=(((", NULL, NULL, 400);
	BAD("GET", "artist?select=%22unterminated", NULL, NULL, 400);
	BAD("GET", "artist?select=album(*", NULL, NULL, 400);
	BAD("GET", "artist?select=album(*))", NULL, NULL, 400);
	/* Nine levels of embeds: past the limit of eight. */
	snprintf(path, sizeof(path), "artist?select=");
	for (i = 0; i < 9; i++)
		strcat(path, "album(artist(");
	strcat(path, "*");
	for (i = 0; i < 9; i++)
		strcat(path, "))");
	BAD("GET", path, NULL, NULL, 400);
	/* A column name of 6,000 bytes (nginx itself refuses request lines over 8 KiB). */
	snprintf(path, sizeof(path), "artist?select=");
	for (i = 0; i < 3000; i++)
		strcat(path, "ab");
	BAD("GET", path, NULL, NULL, 400);
	FX_BOTH("GET", "artist?order=artist_id", NULL, NULL, 200, artists, &r);
}

static void
test_rest_hostile_filters(void)
{
	char path[20000];
	int i;

	FX_BOTH("GET", "artist?name=eq.x';drop%20table%20artist;--", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "artist?name=like.%25'%20or%201=1%20--", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "artist?name=in.(%22)%20or%20true%20--%22)", NULL, NULL, 200, "[]", &r);
	FX_BOTH("GET", "artist?name=eq.%E2%82%AC%F0%9F%98%80", NULL, NULL, 200, "[]", &r);
	BAD("GET", "artist?name=eq.%00", NULL, NULL, 400);
	BAD("GET", "artist?name=eq.%FF", NULL, NULL, 400);
	BAD("GET", "artist?name=eq.%C0%AF", NULL, NULL, 400);
	BAD("GET", "artist?na%FFme=eq.1", NULL, NULL, 400);
	BAD("GET", "artist?artist_id=eq.99999999999999999999999", NULL, NULL, 400);
	BAD("GET", "artist?artist_id=eq.1e400", NULL, NULL, 400);
	BAD("GET", "artist?artist_id=in.(1,x)", NULL, NULL, 400);
	BAD("GET", "track?unit_price=gt.1e99999", NULL, NULL, 400);
	BAD("GET", "artist?limit=99999999999999", NULL, NULL, 400);
	BAD("GET", "artist?offset=-1", NULL, NULL, 400);
	BAD("GET", "artist?offset=1e10", NULL, NULL, 400);
	BAD("GET", "artist?artist_id=eq.1;drop", NULL, NULL, 400);
	BAD("GET", "artist?order=name;drop%20table%20artist", NULL, NULL, 400);
	BAD("GET", "artist?order=name.asc.desc.bad", NULL, NULL, 400);
	BAD("GET", "artist?order=", NULL, NULL, 400);
	BAD("GET", "artist?order=name,", NULL, NULL, 400);
	BAD("GET", "artist?or=", NULL, NULL, 400);
	BAD("GET", "artist?or=()", NULL, NULL, 400);
	BAD("GET", "artist?or=(name.eq.a,)", NULL, NULL, 400);
	BAD("GET", "artist?or=(name.eq.a))", NULL, NULL, 400);
	BAD("GET", "artist?or=(name)", NULL, NULL, 400);
	BAD("GET", "artist?or=(not.name.eq.a)", NULL, NULL, 400);
	BAD("GET", "artist?and=(nosuch.eq.1)", NULL, NULL, 400);
	BAD("GET", "artist?not.eq=1", NULL, NULL, 400);
	BAD("GET", "artist?name=not.not.eq.1", NULL, NULL, 400);
	BAD("GET", "artist?name=in.(%22a)", NULL, NULL, 400);
	BAD("GET", "artist?name=in.a,b", NULL, NULL, 400);
	BAD("GET", "artist?.name=eq.1", NULL, NULL, 400);
	BAD("GET", "artist?name.=eq.1", NULL, NULL, 400);
	/* Ten nested or()s: past the limit of eight. */
	snprintf(path, sizeof(path), "artist?or=(");
	for (i = 0; i < 10; i++)
		strcat(path, "or(");
	strcat(path, "name.eq.a");
	for (i = 0; i < 11; i++)
		strcat(path, ")");
	BAD("GET", path, NULL, NULL, 400);
	/* 1001 values in one in-list. */
	snprintf(path, sizeof(path), "artist?artist_id=in.(");
	for (i = 0; i < 1001; i++)
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "%s%d", i ? "," : "", i);
	strcat(path, ")");
	BAD("GET", path, NULL, NULL, 400);
	/* 65 filters. */
	snprintf(path, sizeof(path), "artist?");
	for (i = 0; i < 65; i++)
		snprintf(path + strlen(path), sizeof(path) - strlen(path), "%sartist_id=gt.%d",
		    i ? "&" : "", i - 100);
	BAD("GET", path, NULL, NULL, 400);
	/* A query string over 8 KiB: 414 from nginx or from the worker. */
	snprintf(path, sizeof(path), "artist?name=eq.");
	for (i = 0; i < 9000; i++)
		strcat(path, "a");
	FX_BOTH("GET", path, NULL, NULL, 414, NULL, &r);
	{
		static const char *const big[] = { "Range: 0-99999999999999999999", NULL };
		static const char *const neg[] = { "Range: -5", NULL };

		BAD("GET", "artist", big, NULL, 416);
		BAD("GET", "artist", neg, NULL, 416);
	}
	BAD("GET", "artist%3Bdrop", NULL, NULL, 404);
	BAD("GET", "art%FFist", NULL, NULL, 404);
	BAD("GET", "rpc/add%27them", NULL, NULL, 404);
	/* Only "<table>" and "rpc/<fn>" right under the route are resources. */
	BAD("GET", "x/artist", NULL, NULL, 404);
	BAD("GET", "rpc/x/add_them", NULL, NULL, 404);
	/* The route itself is the OpenAPI document (test_rest_openapi): read-only. */
	BAD("POST", "", NULL, NULL, 405);
	BAD("DELETE", "", NULL, NULL, 405);
	FX_BOTH("GET", "artist?order=artist_id", NULL, NULL, 200, artists, &r);
}

static void
test_rest_hostile_bodies(void)
{
	static const char *const text[] = { "Content-Type: text/plain", NULL };
	static const char *const merge[] = { "Content-Type: application/json",
		"Prefer: resolution=merge-duplicates", NULL };
	char *big;

	BAD("POST", "artist", json, "{\"name\\\"); drop table artist; --\":1}", 400);
	BAD("POST", "artist", json, "{\"artist_id\":60,\"artist_id\":61}", 400);
	BAD("PATCH", "artist?artist_id=eq.1", json, "{\"name\":\"a\",\"name\":\"b\"}", 400);
	BAD("POST", "artist", json, "{\"artist_id\":60,\"name\":\"\xff\xfe\"}", 400);
	BAD("POST", "artist", json, "{\"artist_id\":99999999999999999999999}", 400);
	BAD("POST", "artist", json, "{\"artist_id\":1e999}", 400);
	BAD("POST", "artist", json, "null", 400);
	BAD("POST", "artist", json, "\"artist\"", 400);
	BAD("POST", "artist", json, "{} {}", 400);
	BAD("POST", "artist", text, "{\"artist_id\":60}", 415);
	BAD("POST", "artist?columns=artist_id;drop", json, "{\"artist_id\":60}", 400);
	BAD("POST", "artist?columns=", json, "{\"artist_id\":60}", 400);
	BAD("POST", "artist?on_conflict=nosuch", merge, "{\"artist_id\":60}", 400);
	BAD("POST", "artist?on_conflict=artist_id);drop", merge, "{\"artist_id\":60}", 400);
	BAD("PATCH", "artist?artist_id=eq.1", json, "{\"nosuch\":1}", 400);
	BAD("PATCH", "artist?artist_id=eq.1", json, "{\"artist_id\":\"x\"}", 400);
	BAD("POST", "rpc/add_them", json, "[1,2]", 400);
	BAD("POST", "rpc/add_them", json, "{\"a\":1,\"b\":\"2;drop\"}", 400);
	BAD("GET", "rpc/add_them?a=1&b=99999999999999999999", NULL, NULL, 400);
	/* Two megabytes: past the body cap. */
	if ((big = malloc(2 * 1024 * 1024 + 1)) != NULL) {
		memset(big, ' ', 2 * 1024 * 1024);
		big[0] = '[';
		big[2 * 1024 * 1024 - 1] = ']';
		big[2 * 1024 * 1024] = '\0';
		FX_BOTH("POST", "artist", json, big, 413, NULL, &r);
		free(big);
	}
	FX_BOTH("GET", "artist?order=artist_id", NULL, NULL, 200, artists, &r);
	FX_BOTH("GET", "album?select=count:album_id&order=album_id&limit=1", NULL, NULL, 200,
	    "[{\"count\":1}]", &r);
}

/* A table created under running workers is served after they get a SIGHUP. */
/* Prefer, Accept-Profile, Content-Profile and the plan type's options, malformed: each a
 * 4xx with a JSON error (or ignored where PostgREST ignores it), nothing written. */
static void
test_rest_hostile_prefer_profile(void)
{
	static char many[8192], longtok[1200];
	static const char *const strict_neg[] = { "Prefer: handling=strict, max-affected=-1",
		NULL };
	static const char *const strict_big[] = { "Prefer: handling=strict, "
		"max-affected=99999999999999999999", NULL };
	static const char *const strict_eq[] = { "Prefer: handling=strict, =, ,,, return=",
		NULL };
	static const char *const prof_quote[] = { "Accept-Profile: pub'lic\";drop", NULL };
	static const char *const prof_empty_list[] = { "Accept-Profile: public,public", NULL };
	static const char *const cprof[] = { "Content-Type: application/json",
		"Content-Profile: nosuch", NULL };
	static const char *const plan_bad[] = { "Accept: application/vnd.pgrst.plan+json; "
		"options=analyze)drop;", NULL };
	const char *h[2] = { NULL, NULL };
	size_t i, n;

	BAD("GET", "artist", strict_neg, NULL, 400);
	BAD("GET", "artist", strict_big, NULL, 400);
	BAD("GET", "artist", strict_eq, NULL, 400);
	CHECK(strstr(r.body.data, "PGRST122") != NULL);
	/* 2,000 tokens: ignored when lenient, refused (and the details cut short) when
	 * strict. */
	n = (size_t)snprintf(many, sizeof(many), "Prefer: ");
	for (i = 0; i < 2000 && n + 4 < sizeof(many); i++)
		n += (size_t)snprintf(many + n, sizeof(many) - n, "x=%zu,", i % 10);
	h[0] = many;
	FX_BOTH("GET", "artist?order=artist_id", h, NULL, 200, artists, &r);
	memcpy(many, "Prefer: handling=strict,", 24);
	BAD("GET", "artist", h, NULL, 400);
	memset(longtok, 'a', sizeof(longtok) - 1);
	memcpy(longtok, "Prefer: handling=strict, ", 25);
	h[0] = longtok;
	BAD("GET", "artist", h, NULL, 400);
	BAD("GET", "artist", prof_quote, NULL, 406);
	CHECK(strstr(r.body.data, "PGRST106") != NULL);
	BAD("GET", "artist", prof_empty_list, NULL, 406);
	BAD("POST", "artist", cprof, "{\"artist_id\":50,\"name\":\"x\"}", 406);
	BAD("PATCH", "artist?artist_id=eq.1", cprof, "{\"name\":\"x\"}", 406);
	BAD("GET", "artist", plan_bad, NULL, 406);
	FX_BOTH("GET", "artist?order=artist_id", NULL, NULL, 200, artists, &r);
}

/* A GET that holds its thread for 0.3 s (rpc/nap, PostgreSQL). */
static void *
nap_thread(void *arg)
{
	struct http_resp *nr = arg;

	if (fx_do(&fx.pgs, "GET", "rpc/nap", NULL, NULL, nr) < 0)
		nr->status = -1;
	return NULL;
}

static void
test_rest_sighup_reload(void)
{
	struct stack *stacks[2] = { &fx.lite, &fx.pgs };
	char url[200];
	pid_t pids[8];
	struct db *db;
	char err[256];
	int i, k, n;

	struct http_resp nr[2];
	pthread_t th[2];
	int before = stack_log_count(&fx.pgs, "rest: schema read");

	FX_BOTH("GET", "newtab", NULL, NULL, 404, NULL, &r);
	CHECK(before >= 1);
	for (k = 0; k < 2; k++) {
		snprintf(url, sizeof(url), "sqlite:%s", fx.litepath);
		if (db_open(&db, k == 0 ? url : fx.pg.url, NULL, err, sizeof(err)) < 0) {
			CHECK(!"database opened");
			return;
		}
		CHECK(db_exec(db, "create table newtab (id integer primary key, v text);"
		    "insert into newtab values (1, 'x');") == 0);
		if (k == 1)
			CHECK(db_exec(db, "create function nap() returns integer language sql "
			    "stable as $$ select 1 from pg_sleep(0.3) $$") == 0);
		db_close(db);
		n = stack_worker_pids(stacks[k], "rest", pids, 8);
		CHECK(n >= 1);
		for (i = 0; i < n; i++)
			kill(pids[i], SIGHUP);
	}
	usleep(200 * 1000);
	/* Both threads of the PostgreSQL worker serve at once, each reloading first: the
	 * schemas are read once, by one of them, and both serve with them. */
	for (i = 0; i < 2; i++) {
		http_resp_init(&nr[i]);
		CHECK(pthread_create(&th[i], NULL, nap_thread, &nr[i]) == 0);
	}
	for (i = 0; i < 2; i++) {
		pthread_join(th[i], NULL);
		CHECK(nr[i].status == 200);
		http_resp_free(&nr[i]);
	}
	CHECK(stack_log_count(&fx.pgs, "rest: schema read") == before + 1);
	/* Both threads of the worker reload on their next request. */
	for (i = 0; i < 4; i++)
		FX_BOTH("GET", "newtab", NULL, NULL, 200, "[{\"id\":1,\"v\":\"x\"}]", &r);
	CHECK(stack_log_count(&fx.pgs, "rest: schema read") == before + 1);
}

static void
test_rest_hostile_grammar(void)
{
	static const char docs[] = "[{\"doc_id\":1,\"album_id\":1,\"body\":{\"a\":[1,2],"
	    "\"b\":\"x}\"}},{\"doc_id\":2,\"album_id\":1,\"body\":null}]";
	char path[20000];
	int i;

	/* JSON path keys are bound values, whatever they hold. */
	FX_BOTH("GET", "doc?select=doc_id&body->>b=eq.x}", NULL, NULL, 200,
	    "[{\"doc_id\":1}]", &r);
	FX_BOTH("GET", "doc?select=v:body->>x';drop_table_doc;--&order=doc_id", NULL, NULL, 200,
	    "[{\"v\":null},{\"v\":null}]", &r);
	FX_BOTH("GET", "doc?select=v:body->>$x&doc_id=eq.1", NULL, NULL, 200, "[{\"v\":null}]",
	    &r);
	FX_BOTH("GET", "doc?select=v:body->a->99999999999&doc_id=eq.1", NULL, NULL, 200,
	    "[{\"v\":null}]", &r);
	FX_BOTH("GET", "doc?select=doc_id&body->>'b'%20or%201%3D1--=eq.x", NULL, NULL, 200, "[]",
	    &r);
	BAD("GET", "doc?select=body->a->b->c->d->e->f->g->h->i->j->k->l->m->n->o->p->q", NULL,
	    NULL, 400);
	BAD("GET", "doc?select=body->->a", NULL, NULL, 400);
	BAD("GET", "doc?select=body->>", NULL, NULL, 400);
	BAD("GET", "doc?order=body->>a->b", NULL, NULL, 400);
	BAD("GET", "artist?select=name->a", NULL, NULL, 400);
	/* Casts: a word from the list, nothing else. */
	BAD("GET", "artist?select=artist_id::text);drop%20table%20artist;--", NULL, NULL, 400);
	BAD("GET", "artist?select=artist_id::%22text%22", NULL, NULL, 400);
	BAD("GET", "artist?select=artist_id::regclass", NULL, NULL, 400);
	BAD("GET", "artist?select=artist_id::text::text", NULL, NULL, 400);
	/* Aggregates. */
	BAD("GET", "artist?select=count()()", NULL, NULL, 400);
	BAD("GET", "artist?select=artist_id.sum().sum()", NULL, NULL, 400);
	BAD("GET", "artist?select=artist_id.pg_sleep()", NULL, NULL, 400);
	BAD("GET", "artist?select=artist_id.sum(artist_id)", NULL, NULL, 400);
	/* Spreads. */
	BAD("GET", "album?select=...artist(...album(*))", NULL, NULL, 400);
	BAD("GET", "album?select=......artist(*)", NULL, NULL, 400);
	BAD("GET", "album?select=...artist", NULL, NULL, 400);
	/* Quantified lists: quotes stay values; 1001 values are over the list limit. */
	FX_BOTH("GET", "artist?select=artist_id&name=eq(any).{%22)%20or%20true%20--%22,x}", NULL,
	    NULL, 200, "[]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=like(all).{%25',%22%5C%22%22}", NULL, NULL,
	    200, "[]", &r);
	snprintf(path, sizeof(path), "artist?artist_id=eq(any).{");
	for (i = 0; i < 1001; i++)
		strcat(path, i ? ",1" : "1");
	strcat(path, "}");
	BAD("GET", path, NULL, NULL, 400);
	/* 300 values fit the list but not the statement's bound values. */
	snprintf(path, sizeof(path), "artist?artist_id=eq(any).{");
	for (i = 0; i < 300; i++)
		strcat(path, i ? ",1" : "1");
	strcat(path, "}");
	BAD("GET", path, NULL, NULL, 400);
	BAD("GET", "artist?name=like(any).{a", NULL, NULL, 400);
	BAD("GET", "artist?name=like(any).{%22a}", NULL, NULL, 400);
	BAD("GET", "artist?name=like(any(all)).{a}", NULL, NULL, 400);
	BAD("GET", "artist?name=fts(english')%20or%20(true).x", NULL, NULL, 400);
	BAD("GET", "artist?name=fts(aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"
	    "aaaa).x", NULL, NULL, 400);
	BAD("GET", "artist?or=(name.eq(any).{a,b),artist_id.eq.1)", NULL, NULL, 400);
	FX_BOTH("GET", "doc?order=doc_id", NULL, NULL, 200, docs, &r);
	FX_BOTH("GET", "artist?order=artist_id", NULL, NULL, 200, artists, &r);
}

int
main(void)
{
	http_resp_init(&r);
	if (fx_start(NULL) < 0) {
		CHECK(!"the two stacks started");
		fx_stop();
		return harness_done();
	}
	RUN(test_rest_hostile_select);
	RUN(test_rest_hostile_filters);
	RUN(test_rest_hostile_grammar);
	RUN(test_rest_hostile_bodies);
	RUN(test_rest_hostile_prefer_profile);
	RUN(test_rest_sighup_reload);
	http_resp_free(&r);
	fx_stop();
	return harness_done();
}
