/*
 * fuzz_rest_write: the rest endpoint's writes (apps/rest/write.c: the JSON body ->
 * columns mapping of POST and PATCH, columns=, on_conflict=, Prefer, and DELETE's
 * filters), run for real against the Chinook schema (sql/chinook/schema.sqlite.sql and
 * rpc.sqlite.sql) in an in-memory SQLite database.  It links the endpoint's library
 * (build/fuzz/handlers/librest.a), and the request goes through the endpoint's own
 * handle() with its per-thread state: routing, the schema read from the database, the
 * statement, the answer.
 *
 * Input: the first byte picks the method (mod 5: POST, PATCH, DELETE, GET, POST to an
 * rpc function) and the table (/5 mod 8); then, one per line, the query string, the Prefer
 * header and the Accept header; the rest of the input is the body (application/json).
 * Every run starts from the same few rows (artist, album, genre, media type, track).
 *
 * Invariants: no crash or sanitizer report; the answer is never a 5xx: a generated
 * statement that the database refuses for any other reason than the data (a constraint,
 * a type) would be an engine bug (the statement and the error are printed); an error
 * answer is 4xx with a JSON body.
 */
#include <libgen.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "db.h"
#include "log.h"
#include "rest/route.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct db *fuzz_db;
static struct rest_thread *fuzz_thread;	/* the endpoint's per-thread state */

static const char *const fuzz_tables[] = { "artist", "album", "track", "genre",
	"media_type", "playlist_track", "actor", "invoice_line" };

static const char fuzz_reset[] =
	"delete from invoice_line; delete from invoice; delete from customer; "
	"delete from employee; delete from playlist_track; delete from playlist; "
	"delete from track; delete from album; delete from artist; delete from genre; "
	"delete from media_type; delete from actor; "
	"insert into artist values (1, 'AC/DC'), (2, 'Accept'); "
	"insert into genre values (1, 'Rock'); insert into media_type values (1, 'MPEG'); "
	"insert into album values (1, 'For Those About To Rock', 1), (2, 'Balls', 2); "
	"insert into track (track_id, name, album_id, media_type_id, genre_id, composer, "
	"milliseconds, bytes, unit_price) values "
	"(1, 'For Those About To Rock', 1, 1, 1, 'Angus Young', 343719, 11170334, 0.99), "
	"(2, 'Balls to the Wall', 2, 1, 1, NULL, 342562, 5510424, 0.99); "
	"insert into playlist values (1, 'Music'); "
	"insert into playlist_track values (1, 1), (1, 2); "
	"insert into actor (actor_id, first_name, last_name) values (1, 'PENELOPE', 'GUINESS');";

/* Runs the SQL file at path (relative to this source file's directory). */
static void
fuzz_load(const char *rel)
{
	char dir[4096], path[4200], *text;
	FILE *f;
	long len;

	(void)snprintf(dir, sizeof(dir), "%s", __FILE__);
	(void)snprintf(path, sizeof(path), "%s/%s", dirname(dir), rel);
	if ((f = fopen(path, "rb")) == NULL || fseek(f, 0, SEEK_END) != 0 ||
	    (len = ftell(f)) < 0 || fseek(f, 0, SEEK_SET) != 0 ||
	    (text = malloc((size_t)len + 1)) == NULL ||
	    fread(text, 1, (size_t)len, f) != (size_t)len) {
		fprintf(stderr, "fuzz_rest_write: cannot read %s (run from the repository root)\n",
		    path);
		abort();
	}
	(void)fclose(f);
	text[len] = '\0';
	if (db_exec(fuzz_db, text) < 0) {
		fprintf(stderr, "fuzz_rest_write: %s: %s\n", path, db_errmsg(fuzz_db));
		abort();
	}
	free(text);
}

int
LLVMFuzzerInitialize(int *argc, char ***argv)
{
	char err[256];

	(void)argc;
	(void)argv;
	setenv("SLUICE_ROUTE", "/rest/v1/", 1);
	log_init("fuzz_rest_write");
	if (db_open(&fuzz_db, "sqlite::memory:", NULL, err, sizeof(err)) < 0) {
		fprintf(stderr, "fuzz_rest_write: %s\n", err);
		abort();
	}
	fuzz_load("../../sql/chinook/schema.sqlite.sql");
	fuzz_load("../../sql/chinook/rpc.sqlite.sql");
	if ((fuzz_thread = rest_thread_init(fuzz_db)) == NULL) {
		fprintf(stderr, "fuzz_rest_write: schema: %s\n", db_errmsg(fuzz_db));
		abort();
	}
	return 0;
}

/* Cuts the next line off *p (up to end); returns it NUL-terminated in the arena. */
static char *
fuzz_line(struct arena *a, const char **p, const char *end)
{
	const char *nl = memchr(*p, '\n', (size_t)(end - *p));
	size_t len = (size_t)((nl ? nl : end) - *p);
	char *s = arena_strndup(a, *p, strnlen(*p, len));

	*p = nl ? nl + 1 : end;
	return s;
}

/* "NAME=value" in the arena. */
static char *
fuzz_env(struct arena *a, const char *name, const char *value)
{
	size_t n = strlen(name), v = strlen(value);
	char *s = arena_alloc(a, n + v + 1);

	if (s != NULL) {
		memcpy(s, name, n);
		memcpy(s + n, value, v + 1);
	}
	return s;
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *const methods[] = { "POST", "PATCH", "DELETE", "GET", "POST" };
	static struct arena *a;
	static struct resp rs;
	const char *p = (const char *)data + 1, *end = (const char *)data + size;
	char *envp[8], *body;
	struct req rq;
	int m, rc;

	if (size < 1)
		return 0;
	if (a == NULL) {
		a = arena_new(1 << 24);
		resp_init(&rs, 1 << 24);
	}
	arena_reset(a);
	resp_reset(&rs);
	if (db_exec(fuzz_db, fuzz_reset) < 0) {
		fprintf(stderr, "fuzz_rest_write: reset: %s\n", db_errmsg(fuzz_db));
		abort();
	}
	m = data[0] % 5;
	envp[0] = fuzz_env(a, "REQUEST_METHOD=", methods[m]);
	envp[1] = m == 4 ? fuzz_env(a, "DOCUMENT_URI=/rest/v1/rpc/",
	    (data[0] / 5) % 2 ? "ret_albums" : "ret_artists") :
	    fuzz_env(a, "DOCUMENT_URI=/rest/v1/", fuzz_tables[(data[0] / 5) % 8]);
	envp[2] = fuzz_env(a, "QUERY_STRING=", fuzz_line(a, &p, end));
	envp[3] = fuzz_env(a, "HTTP_PREFER=", fuzz_line(a, &p, end));
	envp[4] = fuzz_env(a, "HTTP_ACCEPT=", fuzz_line(a, &p, end));
	envp[5] = (char *)(uintptr_t)"CONTENT_TYPE=application/json";
	envp[6] = NULL;
	for (m = 0; m < 5; m++)
		if (envp[m] == NULL)
			abort();
	if (req_init(&rq, envp, a) != REQ_OK)
		return 0;	/* the serve loop answers 400 before the endpoint */
	if ((body = arena_alloc(a, (size_t)(end - p) + 1)) == NULL)
		abort();
	memcpy(body, p, (size_t)(end - p));
	body[end - p] = '\0';
	rq.body = end > p ? body : NULL;
	rq.body_len = (size_t)(end - p);
	rq.db = fuzz_db;
	rq.thread = fuzz_thread;

	rc = rest_handle(&rq, &rs);
	db_rollback(fuzz_db);
	if (rc < 0 || rs.status < 200 || rs.status > 499) {
		struct rest_thread *t = fuzz_thread;

		fprintf(stderr, "fuzz_rest_write: %s %s ?%s -> %d (rc %d)\nbody: %.*s\n"
		    "response: %.*s\nsql: %.*s\ndb: %s\n", rq.method_name, rq.path, rq.query,
		    rs.status, rc, (int)rq.body_len, rq.body ? rq.body : "",
		    (int)rs.body.len, rs.body.data ? rs.body.data : "",
		    t && t->sql.data ? (int)t->sql.len : 0, t && t->sql.data ? t->sql.data : "",
		    db_errmsg(fuzz_db));
		abort();
	}
	return 0;
}
