/*
 * rest_fixture.h: the fixture of the rest endpoint's integration tests (test_rest*.c).
 *
 * Two real stacks (nginx tuned + sluiced + bin/rest) over the same small schema and rows,
 * one on a real SQLite file and one on a real throwaway PostgreSQL cluster, so that every
 * request can be sent to both and the answers compared: the same status, and the same
 * JSON up to key order and whitespace (cJSON_Compare; numbers compared as numbers).
 *
 * The schema has what the API must handle: foreign keys both ways (artist <- album <-
 * track -> genre), a many-to-many (playlist <-> track through playlist_track), nullable
 * columns, a table without a primary key (employee), numeric, boolean and timestamp
 * columns, a setof function and a scalar one (declared in sluice_functions on SQLite);
 * on PostgreSQL also an identity column (ident), and functions with a default argument,
 * returning void, TABLE(...) or OUT parameters, a volatile setof one, a computed field
 * of album (title_len), and a second
 * schema "other" with its own artist table and a function.
 * The helpers are static: each test program includes this header once.
 */
#ifndef SLUICE_REST_FIXTURE_H
#define SLUICE_REST_FIXTURE_H

#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "db.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

static const char fx_schema_common[] =
    "create table artist (artist_id integer primary key, name varchar(120));\n"
    "create table album (album_id integer primary key, title varchar(160) not null,\n"
    "  artist_id integer not null references artist (artist_id));\n"
    "create table genre (genre_id integer primary key, name varchar(120));\n"
    "create table track (track_id integer primary key, name varchar(200) not null,\n"
    "  album_id integer references album (album_id), genre_id integer references genre\n"
    "  (genre_id), composer varchar(220), milliseconds integer not null,\n"
    "  unit_price numeric(10,2) not null);\n"
    "create table playlist (playlist_id integer primary key, name varchar(120));\n"
    "create table playlist_track (playlist_id integer not null references playlist\n"
    "  (playlist_id), track_id integer not null references track (track_id),\n"
    "  primary key (playlist_id, track_id));\n"
    "create table employee (employee_id integer not null, last_name varchar(20) not null,\n"
    "  first_name varchar(20) not null, title varchar(30), reports_to integer,\n"
    "  birth_date timestamp, active boolean default true, email varchar(60));\n"
    "create table actor (actor_id integer primary key, first_name varchar(45) not null,\n"
    "  last_name varchar(45) not null,\n"
    "  last_update timestamp not null default '2000-01-01 00:00:00');\n"
    "create table doc (doc_id integer primary key, album_id integer references album\n"
    "  (album_id), body json);\n"
    "insert into artist values (1, 'AC/DC'), (2, 'Accept'), (3, 'Aerosmith'),\n"
    "  (4, 'O''Brien, \"Jr\"'), (5, NULL);\n"
    "insert into album values (1, 'For Those About To Rock', 1), (2, 'Let There Be Rock', 1),\n"
    "  (3, 'Balls to the Wall', 2), (4, 'Restless and Wild', 2), (5, 'Big Ones', 3);\n"
    "insert into genre values (1, 'Rock'), (2, 'Jazz'), (3, NULL);\n"
    "insert into track values\n"
    "  (1, 'For Those About To Rock', 1, 1, 'Angus Young', 343719, 0.99),\n"
    "  (2, 'Put The Finger On You', 1, 1, NULL, 205662, 0.99),\n"
    "  (3, 'Go Down', 2, 2, 'AC/DC', 331180, 1.99),\n"
    "  (4, 'Balls to the Wall', 3, NULL, NULL, 342562, 0.99),\n"
    "  (5, 'Fast As a Shark', 4, 1, 'F. Baltes', 230619, 1.00),\n"
    "  (6, 'Walk On Water', 5, 3, 'Steven Tyler', 295680, 0.99),\n"
    "  (7, 'Orphan', NULL, 2, NULL, 1000, 0.50);\n"
    "insert into playlist values (1, 'Music'), (2, 'Movies'), (3, 'Empty');\n"
    "insert into playlist_track values (1, 1), (1, 2), (1, 3), (2, 3), (2, 6);\n"
    "insert into employee values\n"
    "  (1, 'Adams', 'Andrew', 'General Manager', NULL, '1962-02-18 00:00:00', true,\n"
    "   'andrew@chinookcorp.com'),\n"
    "  (2, 'Edwards', 'Nancy', 'Sales Manager', 1, '1958-12-08 00:00:00', false,\n"
    "   'nancy@chinookcorp.com'),\n"
    "  (3, 'Peacock', 'Jane', NULL, 2, NULL, NULL, NULL);\n"
    "insert into actor (actor_id, first_name, last_name) values (1, 'Penelope', 'Guiness'),\n"
    "  (2, 'Nick', 'Wahlberg');\n"
    "insert into doc values (1, 1, '{\"a\":[1,2],\"b\":\"x}\"}'), (2, 1, NULL);\n";

static const char fx_schema_pg[] =
    "create function albums_of(aid integer) returns setof album language sql stable as\n"
    "  $$ select * from album where artist_id = aid $$;\n"
    "create function add_them(a integer, b integer) returns integer language sql immutable\n"
    "  as $$ select a + b $$;\n"
    "create function first_of(a integer, b integer) returns integer language sql immutable\n"
    "  as $$ select a $$;\n"
    "create function all_albums() returns setof album language sql stable as\n"
    "  $$ select * from album $$;\n"
    "create table ident (id bigint generated by default as identity primary key,\n"
    "  name text);\n"
    "create function add_default(a integer, b integer default 10) returns integer\n"
    "  language sql immutable as $$ select a + b $$;\n"
    "create function do_nothing() returns void language sql volatile as $$ $$;\n"
    "create function echo_default(s text default 'it''s', n text default null)\n"
    "  returns text language sql immutable as $$ select coalesce(n, s) $$;\n"
    "create function artists_upto(aid integer) returns table(id integer, name varchar)\n"
    "  language sql stable as $$ select artist_id, name from artist\n"
    "  where artist_id <= aid order by artist_id $$;\n"
    "create function artist_out(aid integer, out id integer, out name varchar)\n"
    "  returns setof record language sql stable as\n"
    "  $$ select artist_id, name from artist where artist_id = aid $$;\n"
    "create function rename_artist(aid integer, newname text) returns setof artist\n"
    "  language sql volatile as\n"
    "  $$ update artist set name = newname where artist_id <= aid returning * $$;\n"
    "create function title_len(album) returns integer language sql stable as\n"
    "  $$ select length($1.title) $$;\n"
    "create schema other;\n"
    "create table other.artist (artist_id integer primary key, name text, born integer);\n"
    "insert into other.artist values (1, 'Other one', 1950);\n"
    "create function other.whoami() returns text language sql stable as\n"
    "  $$ select 'other' $$;\n";

static const char fx_schema_sqlite[] =
    "create table sluice_functions (name text primary key, args text not null,\n"
    "  returns text not null, volatility text not null, body text not null);\n"
    "insert into sluice_functions values\n"
    "  ('albums_of', 'aid integer', 'setof album', 'stable',\n"
    "   'select * from album where artist_id = :aid'),\n"
    "  ('add_them', 'a integer, b integer', 'integer', 'immutable', 'select :a + :b'),\n"
    "  ('first_of', 'a integer, b integer', 'integer', 'immutable', 'select :a'),\n"
    "  ('all_albums', '', 'setof album', 'stable', 'select * from album'),\n"
    "  ('artists_upto', 'aid integer', 'table(id integer, name varchar)', 'stable',\n"
    "   'select artist_id as id, name from artist where artist_id <= :aid "
    "order by artist_id'),\n"
    "  ('do_nothing', '', 'void', 'volatile', 'select null'),\n"
    "  ('add_default', 'a integer, b integer default 10', 'integer', 'immutable',\n"
    "   'select :a + :b'),\n"
    "  ('echo_default', 's text default ''it''''s'', n text default null', 'text',\n"
    "   'immutable', 'select coalesce(:n, :s)'),\n"
    "  ('bad_default', 'a integer default 1+1', 'integer', 'immutable', 'select :a'),\n"
    "  ('bad_quote', 's text default ''x', 'text', 'immutable', 'select :s');\n";

struct fx {
	struct pgtmp pg;
	struct stack lite;
	struct stack pgs;
	char litepath[128];
	int up;
};

static struct fx fx;

/* More schema for one test program (set before fx_start()): its own tables, loaded after
 * the common schema on each back end. */
static const char *fx_more_sqlite, *fx_more_pg;

static int
fx_load(const char *url, const char *extra, const char *more)
{
	struct db *db;
	char err[256];
	int rc = -1;

	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "fixture: %s\n", err);
		return -1;
	}
	if (db_exec(db, fx_schema_common) < 0 || db_exec(db, extra) < 0 ||
	    (more != NULL && db_exec(db, more) < 0))
		fprintf(stderr, "fixture: %s\n", db_errmsg(db));
	else
		rc = 0;
	db_close(db);
	return rc;
}

/* Starts both stacks; threads per worker as given.  Returns 0 or -1. */
static int
fx_start(const char *extra_conf)
{
	char url[200], conf[8192];

	signal(SIGPIPE, SIG_IGN);
	memset(&fx, 0, sizeof(fx));
	snprintf(fx.litepath, sizeof(fx.litepath), "/tmp/sluice-rest-%d.db", (int)getpid());
	unlink(fx.litepath);
	snprintf(url, sizeof(url), "sqlite:%s", fx.litepath);
	if (fx_load(url, fx_schema_sqlite, fx_more_sqlite) < 0)
		return -1;
	if (pgtmp_start(&fx.pg) < 0)
		return -1;
	if (fx_load(fx.pg.url, fx_schema_pg, fx_more_pg) < 0)
		return -1;
	snprintf(conf, sizeof(conf), "db chinook %s\nrest /rest/v1/ workers=1 threads=2 "
	    "db=chinook %s\n", url, extra_conf ? extra_conf : "");
	if (stack_start(&fx.lite, conf, "tuned", 1, NULL) < 0)
		return -1;
	setenv("SLUICE_DB_CHINOOK", fx.pg.url, 1);
	if (stack_start(&fx.pgs, conf, "tuned", 1, NULL) < 0) {
		unsetenv("SLUICE_DB_CHINOOK");
		return -1;
	}
	unsetenv("SLUICE_DB_CHINOOK");
	fx.up = 1;
	return 0;
}

static void
fx_stop(void)
{
	stack_stop(&fx.lite);
	stack_stop(&fx.pgs);
	pgtmp_stop(&fx.pg);
	stack_sh("rm -f %s %s-wal %s-shm", fx.litepath, fx.litepath, fx.litepath);
}

/* Sends one request to the stack s; path is below route ("/rest/v1/"). */
static int
fx_do_at(struct stack *s, const char *route, const char *method, const char *path,
    const char *const *headers, const char *body, struct http_resp *r)
{
	static char url[32768];

	if (snprintf(url, sizeof(url), "%s%s%s", s->base, route, path) >= (int)sizeof(url))
		return -1;
	return http_do(method, url, headers, body, body ? strlen(body) : 0, 10000, r);
}

/* Sends one request to the stack s; path is below /rest/v1/. */
static int
fx_do(struct stack *s, const char *method, const char *path, const char *const *headers,
    const char *body, struct http_resp *r)
{
	return fx_do_at(s, "/rest/v1/", method, path, headers, body, r);
}

/* The value of header name of r, "" when absent (a static buffer: use at once). */
static __attribute__((unused)) const char *
fx_header(const struct http_resp *rr, const char *name)
{
	static char v[256];

	if (http_header(rr, name, v, sizeof(v)) < 0)
		v[0] = '\0';
	return v;
}

/* 1 when a and b hold the same JSON (key order and whitespace aside). */
static int
fx_json_eq(const char *a, const char *b)
{
	cJSON *ja = cJSON_Parse(a ? a : ""), *jb = cJSON_Parse(b ? b : "");
	int eq = ja != NULL && jb != NULL && cJSON_Compare(ja, jb, 1);

	cJSON_Delete(ja);
	cJSON_Delete(jb);
	return eq;
}

/* The code of an error body a, in code[6]: "" when a is not an error of the database's
 * own words (rest_db_errors=pass): an integrity (23) or data (22) error, 42P10, 25006. */
static void
fx_db_code(const char *a, char code[6])
{
	cJSON *j = cJSON_Parse(a ? a : "");
	const cJSON *c = cJSON_GetObjectItemCaseSensitive(j, "code");

	code[0] = '\0';
	if (cJSON_IsString(c) && strlen(c->valuestring) == 5 &&
	    (strncmp(c->valuestring, "22", 2) == 0 || strncmp(c->valuestring, "23", 2) == 0 ||
	    strcmp(c->valuestring, "42P10") == 0 || strcmp(c->valuestring, "25006") == 0))
		memcpy(code, c->valuestring, 6);
	cJSON_Delete(j);
}

/*
 * 1 when a and b are the same failure of the database answered in each one's own words
 * (rest_db_errors=pass): their texts differ, their codes do not, but for a data exception
 * (class 22), whose exact code PostgreSQL tells and SQLite cannot (22P02).
 */
static int
fx_db_error_alike(const char *a, const char *b)
{
	char ca[6], cb[6];

	fx_db_code(a, ca);
	fx_db_code(b, cb);
	return ca[0] != '\0' && cb[0] != '\0' && (strcmp(ca, cb) == 0 ||
	    (strncmp(ca, "22", 2) == 0 && strncmp(cb, "22", 2) == 0));
}

/*
 * Sends the request to both back ends.  Checks both statuses against want_status and, when
 * want_body is not NULL, both bodies against it as JSON ("" for an empty body); otherwise
 * checks that the two bodies are the same JSON (or the same text for non-JSON), or the
 * same failure of the database in each one's words (fx_db_error_alike()).  The SQLite
 * answer is left in r for further checks.
 */
#define FX_BOTH(method, path, headers, body, want_status, want_body, r) \
	fx_both(__FILE__, __LINE__, method, path, headers, body, want_status, want_body, r)

static __attribute__((unused)) void
fx_both(const char *file, int line, const char *method, const char *path,
    const char *const *headers, const char *body, long want_status, const char *want_body,
    struct http_resp *r)
{
	struct http_resp p;
	const char *lb, *pb;

	http_resp_init(&p);
	if (fx_do(&fx.lite, method, path, headers, body, r) < 0 ||
	    fx_do(&fx.pgs, method, path, headers, body, &p) < 0) {
		harness_fail(file, line, "%s %.200s: no response", method, path);
		goto out;
	}
	lb = r->body.data ? r->body.data : "";
	pb = p.body.data ? p.body.data : "";
	if (r->status != want_status)
		harness_fail(file, line, "%s %.200s: sqlite status %ld, want %ld; body %.300s", method,
		    path, r->status, want_status, lb);
	if (p.status != want_status)
		harness_fail(file, line, "%s %.200s: postgresql status %ld, want %ld; body %.300s",
		    method, path, p.status, want_status, pb);
	if (want_body != NULL) {
		int lok = *want_body ? fx_json_eq(lb, want_body) : *lb == '\0';
		int pok = *want_body ? fx_json_eq(pb, want_body) : *pb == '\0';

		if (!lok)
			harness_fail(file, line, "%s %.200s: sqlite body %.600s\n  want %.600s", method,
			    path, lb, want_body);
		if (!pok)
			harness_fail(file, line, "%s %.200s: postgresql body %.600s\n  want %.600s",
			    method, path, pb, want_body);
	} else if (!(fx_json_eq(lb, pb) || strcmp(lb, pb) == 0 ||
	    (r->status >= 400 && r->status == p.status && fx_db_error_alike(lb, pb))))
		harness_fail(file, line, "%s %.200s: back ends differ\n  sqlite     %.600s\n"
		    "  postgresql %.600s", method, path, lb, pb);
	{
		char lr[128] = "", pr[128] = "";

		http_header(r, "Content-Range", lr, sizeof(lr));
		http_header(&p, "Content-Range", pr, sizeof(pr));
		if (strcmp(lr, pr) != 0)
			harness_fail(file, line, "%s %.200s: Content-Range \"%s\" on sqlite, \"%s\" on "
			    "postgresql", method, path, lr, pr);
	}
out:
	http_resp_free(&p);
}

/*
 * Sends the request to route ("/rest/v1/") on both back ends, and checks each one's status
 * against want_status and its body against its own want as JSON: want_lite for SQLite,
 * want_pg for PostgreSQL (where the two answer in their own words).  The SQLite answer is
 * left in r.
 */
#define FX_EACH(route, method, path, headers, body, want_status, want_lite, want_pg, r) \
	fx_each(__FILE__, __LINE__, route, method, path, headers, body, want_status, \
	    want_lite, want_pg, r)

static __attribute__((unused)) void
fx_each(const char *file, int line, const char *route, const char *method, const char *path,
    const char *const *headers, const char *body, long want_status, const char *want_lite,
    const char *want_pg, struct http_resp *r)
{
	struct http_resp p;
	const char *lb, *pb;

	http_resp_init(&p);
	if (fx_do_at(&fx.lite, route, method, path, headers, body, r) < 0 ||
	    fx_do_at(&fx.pgs, route, method, path, headers, body, &p) < 0) {
		harness_fail(file, line, "%s %.200s: no response", method, path);
		goto out;
	}
	lb = r->body.data ? r->body.data : "";
	pb = p.body.data ? p.body.data : "";
	if (r->status != want_status || !fx_json_eq(lb, want_lite))
		harness_fail(file, line, "%s %s%.200s: sqlite %ld %.600s\n  want %ld %.600s",
		    method, route, path, r->status, lb, want_status, want_lite);
	if (p.status != want_status || !fx_json_eq(pb, want_pg))
		harness_fail(file, line, "%s %s%.200s: postgresql %ld %.600s\n  want %ld %.600s",
		    method, route, path, p.status, pb, want_status, want_pg);
out:
	http_resp_free(&p);
}

#endif /* SLUICE_REST_FIXTURE_H */
