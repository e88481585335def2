/*
 * test_rest_grammar: PostgREST's select grammar and operators beyond the basics, through
 * the real stack on SQLite and PostgreSQL (rest_fixture.h, plus the table gadget below):
 * aggregates (count(), sum(), avg(), min(), max(), with casts, grouping by the other
 * columns, inside embeds), casts col::type, JSON paths col->a->>b in select, filters and
 * order, spreads ...rel(cols), and the operators isdistinct, op(any|all), match/imatch,
 * fts/plfts/phfts/wfts, cs/cd/ov and the range operators.  Each answer is checked as JSON
 * on both back ends (SQLite's regular expressions through PCRE2, its text search through
 * the FTS5 table gadget_fts, with hostile queries and patterns); where SQLite cannot
 * express a feature (some casts) its answer is a 400 naming the feature, checked too.
 * A second route, /rest12/v1/ (rest_dialect_version=12), answers as PostgREST 12 where 13
 * differs: to-many spreads and the unknown table's errors (by read, embed and write).
 * Functions that write (on SQLite an UPDATE ... RETURNING body) answer alike on both.
 */
#include "rest_fixture.h"

static struct http_resp r;

/* Arrays, ranges, jsonb and text search on PostgreSQL; the same rows on SQLite, where
 * an array is a json column holding a JSON array (cs, cd and ov apply to it as to jsonb)
 * and an int4range column holds PostgreSQL's range text (its operators apply). */
static const char more_pg[] =
    "create table gadget (id integer primary key, tags text[], nums integer[],\n"
    "  span int4range, data jsonb, body text, price numeric(10,2), qty integer,\n"
    "  kind text, maker_id integer references artist (artist_id));\n"
    "insert into gadget values\n"
    "  (1, '{red,blue}', '{1,2,3}', '[1,5)', '{\"a\":{\"b\":\"x\"},\"n\":1,\"arr\":[10,20]}',\n"
    "   'the quick brown fox', 9.50, 3, 'tool', 1),\n"
    "  (2, '{green}', '{4}', '[5,10)', '{\"a\":{\"b\":\"y\"},\"n\":2,\"arr\":[30]}',\n"
    "   'lazy dogs sleep', 20.00, 5, 'tool', 2),\n"
    "  (3, '{red}', '{}', '[20,30)', '{\"n\":3}', 'quick thinking', 1.25, 2, 'toy', 1),\n"
    "  (4, NULL, NULL, NULL, NULL, NULL, NULL, 1, 'toy', NULL);\n"
    "create function gadget_bump(n integer) returns setof gadget language sql as\n"
    "  $$ update gadget set qty = qty + n where id = 4 returning * $$;\n"
    "create function gadget_qty(i integer) returns integer language sql as\n"
    "  $$ update gadget set qty = qty + 1 where id = i returning qty $$;\n";

static const char more_sqlite[] =
    "create table gadget (id integer primary key, tags json, nums json,\n"
    "  span int4range, data json, body text, price numeric(10,2), qty integer, kind text,\n"
    "  maker_id integer references artist (artist_id));\n"
    "insert into gadget values\n"
    "  (1, '[\"red\",\"blue\"]', '[1,2,3]', '[1,5)', '{\"a\":{\"b\":\"x\"},\"n\":1,\"arr\":[10,20]}',\n"
    "   'the quick brown fox', 9.50, 3, 'tool', 1),\n"
    "  (2, '[\"green\"]', '[4]', '[5,10)', '{\"a\":{\"b\":\"y\"},\"n\":2,\"arr\":[30]}',\n"
    "   'lazy dogs sleep', 20.00, 5, 'tool', 2),\n"
    "  (3, '[\"red\"]', '[]', '[20,30)', '{\"n\":3}', 'quick thinking', 1.25, 2, 'toy', 1),\n"
    "  (4, NULL, NULL, NULL, NULL, NULL, NULL, 1, 'toy', NULL);\n"
    /* The FTS5 table that the fts filters search body through on SQLite
     * (docs/postgrest.md): gadget_fts over gadget's rows, kept by triggers. */
    "create virtual table gadget_fts using fts5(body, content='gadget',\n"
    "  tokenize='porter unicode61');\n"
    "insert into gadget_fts(gadget_fts) values ('rebuild');\n"
    "create trigger gadget_fts_ai after insert on gadget begin\n"
    "  insert into gadget_fts(rowid, body) values (new.rowid, new.body); end;\n"
    "create trigger gadget_fts_ad after delete on gadget begin\n"
    "  insert into gadget_fts(gadget_fts, rowid, body) values ('delete', old.rowid,\n"
    "  old.body); end;\n"
    "create trigger gadget_fts_au after update on gadget begin\n"
    "  insert into gadget_fts(gadget_fts, rowid, body) values ('delete', old.rowid,\n"
    "  old.body);\n"
    "  insert into gadget_fts(rowid, body) values (new.rowid, new.body); end;\n"
    /* Functions that write: one UPDATE ... RETURNING each (rpc.c runs it before the
     * call's SELECT). */
    "insert into sluice_functions values ('gadget_bump', 'n integer', 'setof gadget',\n"
    "  'volatile', 'update gadget set qty = qty + :n where id = 4 returning *'),\n"
    "  ('gadget_qty', 'i integer', 'integer', 'volatile',\n"
    "  'update gadget set qty = qty + 1 where id = :i returning qty');\n";

/* Sends to one stack; checks the status and, when want_body is not NULL, the JSON. */
#define ONE(s_, path_, status_, body_) one(__FILE__, __LINE__, s_, path_, status_, body_)

static void
one(const char *file, int line, struct stack *s, const char *path, long status,
    const char *want_body)
{
	const char *b;

	if (fx_do(s, "GET", path, NULL, NULL, &r) < 0) {
		harness_fail(file, line, "GET %.200s: no response", path);
		return;
	}
	b = r.body.data ? r.body.data : "";
	if (r.status != status)
		harness_fail(file, line, "GET %.200s on %s: status %ld, want %ld; body %.300s", path,
		    s == &fx.pgs ? "postgresql" : "sqlite", r.status, status, b);
	if (want_body != NULL && !fx_json_eq(b, want_body))
		harness_fail(file, line, "GET %.200s on %s: body %.600s\n  want %.600s", path,
		    s == &fx.pgs ? "postgresql" : "sqlite", b, want_body);
}

/* PostgreSQL answers want_body; SQLite a 400 whose body names what it lacks. */
static void
pg_or_400(const char *file, int line, const char *path, const char *want_body,
    const char *lacks)
{
	one(file, line, &fx.pgs, path, 200, want_body);
	one(file, line, &fx.lite, path, 400, NULL);
	if (r.body.data == NULL || strstr(r.body.data, lacks) == NULL)
		harness_fail(file, line, "GET %.200s on sqlite: body %.300s, want one naming "
		    "\"%s\"", path, r.body.data ? r.body.data : "", lacks);
}

#define PG_OR_400(path_, body_, lacks_) pg_or_400(__FILE__, __LINE__, path_, body_, lacks_)

static void
test_rest_aggregates(void)
{
	FX_BOTH("GET", "gadget?select=count()", NULL, NULL, 200, "[{\"count\":4}]", &r);
	FX_BOTH("GET", "gadget?select=n:count()&kind=eq.toy", NULL, NULL, 200, "[{\"n\":2}]",
	    &r);
	FX_BOTH("GET", "gadget?select=kind,count()&order=kind", NULL, NULL, 200,
	    "[{\"kind\":\"tool\",\"count\":2},{\"kind\":\"toy\",\"count\":2}]", &r);
	FX_BOTH("GET", "gadget?select=kind,total:qty.sum(),qty.max(),qty.min()&order=kind.desc",
	    NULL, NULL, 200, "[{\"kind\":\"toy\",\"total\":3,\"max\":2,\"min\":1},"
	    "{\"kind\":\"tool\",\"total\":8,\"max\":5,\"min\":3}]", &r);
	FX_BOTH("GET", "gadget?select=qty.avg()&kind=eq.tool", NULL, NULL, 200,
	    "[{\"avg\":4}]", &r);
	FX_BOTH("GET", "gadget?select=price.sum()", NULL, NULL, 200, "[{\"sum\":30.75}]", &r);
	FX_BOTH("GET", "gadget?select=maker_id.count()", NULL, NULL, 200, "[{\"count\":3}]", &r);
	/* Casts of the result and of the input. */
	FX_BOTH("GET", "gadget?select=qty.avg()::int&kind=eq.toy", NULL, NULL, 200,
	    "[{\"avg\":2}]", &r);
	FX_BOTH("GET", "gadget?select=count()::text", NULL, NULL, 200, "[{\"count\":\"4\"}]", &r);
	FX_BOTH("GET", "gadget?select=qty::numeric.sum()&id=lt.3", NULL, NULL, 200,
	    "[{\"sum\":8}]", &r);
	/* No row: one group all the same, with count 0 and a null sum. */
	FX_BOTH("GET", "gadget?select=count(),qty.sum()&id=gt.99", NULL, NULL, 200,
	    "[{\"count\":0,\"sum\":null}]", &r);
	/* Inside an embed: grouped per parent row. */
	FX_BOTH("GET", "artist?select=name,gadget(qty.sum(),count())&artist_id=in.(1,2)"
	    "&order=artist_id", NULL, NULL, 200,
	    "[{\"name\":\"AC/DC\",\"gadget\":[{\"sum\":5,\"count\":2}]},"
	    "{\"name\":\"Accept\",\"gadget\":[{\"sum\":5,\"count\":1}]}]", &r);
	/* CSV of a grouped read. */
	{
		static const char *const csv[] = { "Accept: text/csv", NULL };

		FX_BOTH("GET", "gadget?select=kind,count()&order=kind", csv, NULL, 200, NULL, &r);
		CHECK_STR(r.body.data, "kind,count\ntool,2\ntoy,2");
	}
	FX_BOTH("GET", "gadget?select=qty.median()", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=qty.sum(", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=nope.sum()", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "album?select=title.count(),artist(name)", NULL, NULL, 400, NULL, &r);
	/* min() and max() of timestamps are ISO-8601 on both. */
	FX_BOTH("GET", "employee?select=birth_date.min(),last:birth_date.max()", NULL, NULL, 200,
	    "[{\"min\":\"1958-12-08T00:00:00\",\"last\":\"1962-02-18T00:00:00\"}]", &r);
	/* What PostgreSQL has no aggregate or grouping for is a 400 on both. */
	FX_BOTH("GET", "employee?select=active.max()", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=kind.sum()", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=data->>n.avg()", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=data->>n::int.sum()", NULL, NULL, 200, "[{\"sum\":6}]",
	    &r);
	FX_BOTH("GET", "doc?select=body,count()", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "doc?select=body->a,count()", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=kind,count()&order=qty", NULL, NULL, 400, NULL, &r);
	CHECK(r.body.data != NULL && strstr(r.body.data, "42803") != NULL);
	/* A function's rows group the same way. */
	FX_BOTH("GET", "rpc/all_albums?select=artist_id,count()&order=artist_id", NULL, NULL,
	    200, "[{\"artist_id\":1,\"count\":2},{\"artist_id\":2,\"count\":2},"
	    "{\"artist_id\":3,\"count\":1}]", &r);
}

static void
test_rest_casts(void)
{
	FX_BOTH("GET", "gadget?select=id,qty::text&id=eq.1", NULL, NULL, 200,
	    "[{\"id\":1,\"qty\":\"3\"}]", &r);
	FX_BOTH("GET", "gadget?select=id,q:qty::numeric,p:price::int&id=eq.2", NULL, NULL, 200,
	    "[{\"id\":2,\"q\":5,\"p\":20}]", &r);
	/* To an integer rounds half away from zero on both, as PostgreSQL's numeric does. */
	FX_BOTH("GET", "gadget?select=p:price::int&id=in.(1,3)&order=id", NULL, NULL, 200,
	    "[{\"p\":10},{\"p\":1}]", &r);
	FX_BOTH("GET", "artist?select=id:artist_id::text&artist_id=eq.2", NULL, NULL, 200,
	    "[{\"id\":\"2\"}]", &r);
	FX_BOTH("GET", "gadget?select=qty::evil", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=qty::", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=qty::int;drop", NULL, NULL, 400, NULL, &r);
	/* Casts PostgreSQL has no conversion for are a 400 42846 there (and on SQLite, which
	 * has none of these types, a 400 naming the type). */
	one(__FILE__, __LINE__, &fx.pgs, "gadget?select=qty::date", 400, NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "42846") != NULL);
	one(__FILE__, __LINE__, &fx.lite, "gadget?select=qty::date", 400, NULL);
	one(__FILE__, __LINE__, &fx.pgs, "gadget?select=count()::timestamp", 400, NULL);
	one(__FILE__, __LINE__, &fx.pgs, "gadget?select=data::date", 400, NULL);
	one(__FILE__, __LINE__, &fx.pgs, "gadget?select=count()::boolean", 400, NULL);
	one(__FILE__, __LINE__, &fx.pgs, "employee?select=active::bigint", 400, NULL);
	one(__FILE__, __LINE__, &fx.pgs, "employee?select=e:employee_id::boolean,"
	    "a:active::int&order=employee_id&limit=1", 200, "[{\"e\":true,\"a\":1}]");
	FX_BOTH("GET", "gadget?select=data->>n::numeric&id=eq.1", NULL, NULL, 200,
	    "[{\"n\":1}]", &r);
	/* A text that is no number: PostgreSQL's 22P02 (SQLite's cast gives 0). */
	one(__FILE__, __LINE__, &fx.pgs, "gadget?select=kind::numeric&id=eq.1", 400, NULL);
	FX_BOTH("GET", "gadget?select=data->>n::numeric&id=eq.1", NULL, NULL, 200,
	    "[{\"n\":1}]", &r);
	PG_OR_400("gadget?select=id,b:qty::boolean&id=eq.1",
	    "[{\"id\":1,\"b\":true}]", "cannot cast to type");
}

static void
test_rest_json_paths(void)
{
	FX_BOTH("GET", "gadget?select=id,data->a->>b&id=lt.3&order=id", NULL, NULL, 200,
	    "[{\"id\":1,\"b\":\"x\"},{\"id\":2,\"b\":\"y\"}]", &r);
	FX_BOTH("GET", "gadget?select=id,data->a&id=eq.1", NULL, NULL, 200,
	    "[{\"id\":1,\"a\":{\"b\":\"x\"}}]", &r);
	FX_BOTH("GET", "gadget?select=first:data->arr->0,n:data->>n&id=eq.1", NULL, NULL, 200,
	    "[{\"first\":10,\"n\":\"1\"}]", &r);
	FX_BOTH("GET", "gadget?select=id,data->a->b&id=eq.3", NULL, NULL, 200,
	    "[{\"id\":3,\"b\":null}]", &r);
	FX_BOTH("GET", "gadget?select=n:data->>n::int&id=eq.2", NULL, NULL, 200,
	    "[{\"n\":2}]", &r);
	/* Filters. */
	FX_BOTH("GET", "gadget?select=id&data->a->>b=eq.y", NULL, NULL, 200, "[{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&data->n=eq.3", NULL, NULL, 200, "[{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&data->>n=in.(1,3)&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&data->a=is.null&order=id", NULL, NULL, 200,
	    "[{\"id\":3},{\"id\":4}]", &r);
	FX_BOTH("GET", "gadget?select=id&or=(data->>n.eq.1,data->a->>b.like.y*)&order=id", NULL,
	    NULL, 200, "[{\"id\":1},{\"id\":2}]", &r);
	/* Order. */
	FX_BOTH("GET", "gadget?select=id&data=not.is.null&order=data->>n.desc", NULL, NULL, 200,
	    "[{\"id\":3},{\"id\":2},{\"id\":1}]", &r);
	/* Errors: not a JSON column, empty keys, ->> in the middle. */
	FX_BOTH("GET", "gadget?select=kind->a", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?kind->>a=eq.1", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=data->", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?select=data->>a->b", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?order=data->", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?data->>a=is.true", NULL, NULL, 400, NULL, &r);
	/* A json (not jsonb) column compares as jsonb. */
	FX_BOTH("GET", "doc?select=doc_id&body=eq.{%22a%22:[1,2],%22b%22:%22x}%22}", NULL, NULL,
	    200, NULL, &r);
	one(__FILE__, __LINE__, &fx.pgs, "doc?select=doc_id&body=isdistinct.{}&order=doc_id",
	    200, "[{\"doc_id\":1},{\"doc_id\":2}]");
}

static void
test_rest_spreads(void)
{
	static const char *const csv[] = { "Accept: text/csv", NULL };

	FX_BOTH("GET", "album?select=title,...artist(artist_name:name)&album_id=eq.3", NULL,
	    NULL, 200, "[{\"title\":\"Balls to the Wall\",\"artist_name\":\"Accept\"}]", &r);
	FX_BOTH("GET", "track?select=track_id,...genre(name)&track_id=in.(1,4)&order=track_id",
	    NULL, NULL, 200, "[{\"track_id\":1,\"name\":\"Rock\"},{\"track_id\":4,\"name\":null}]",
	    &r);
	FX_BOTH("GET", "album?select=title,...artist(*)&album_id=eq.1", NULL, NULL, 200,
	    "[{\"title\":\"For Those About To Rock\",\"artist_id\":1,\"name\":\"AC/DC\"}]", &r);
	FX_BOTH("GET", "album?select=album_id,...artist!inner(name)&artist.name=eq.Accept"
	    "&order=album_id", NULL, NULL, 200,
	    "[{\"album_id\":3,\"name\":\"Accept\"},{\"album_id\":4,\"name\":\"Accept\"}]", &r);
	FX_BOTH("GET", "album?select=album_id,...artist(name)&album_id=eq.1", csv, NULL, 200,
	    NULL, &r);
	CHECK_STR(r.body.data, "album_id,name\n1,AC/DC");
	/* To-many (PostgREST 13): each column the array of its values; beside an aggregate
	 * a PGRST119, as PostgREST 12 answers every to-many spread. */
	FX_BOTH("GET", "artist?select=name,...album(title)&artist_id=in.(1,4)&order=artist_id"
	    "&album.order=title.desc", NULL, NULL, 200,
	    "[{\"name\":\"AC/DC\",\"title\":[\"Let There Be Rock\",\"For Those About To Rock\"]},"
	    "{\"name\":\"O'Brien, \\\"Jr\\\"\",\"title\":[]}]", &r);
	FX_BOTH("GET", "artist?select=count(),...album(title)", NULL, NULL, 400, NULL, &r);
	CHECK(r.body.data != NULL && strstr(r.body.data, "PGRST119") != NULL);
	FX_BOTH("GET", "album?select=...title", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "album?select=...artist(album(*))", NULL, NULL, 400, NULL, &r);
}

/* Sends method path (with headers and body, either NULL) to /rest12/v1/ of stack s
 * (rest_dialect_version=12); checks the status and, when want_body is not NULL, the JSON
 * ("" for an empty body). */
static void
one12(const char *file, int line, struct stack *s, const char *method, const char *path,
    const char *const *headers, const char *body, long status, const char *want_body)
{
	char url[1024];
	const char *b;

	(void)snprintf(url, sizeof(url), "%s/rest12/v1/%s", s->base, path);
	if (http_do(method, url, headers, body, body != NULL ? strlen(body) : 0, 10000,
	    &r) < 0) {
		harness_fail(file, line, "%s /rest12/v1/%.200s: no response", method, path);
		return;
	}
	b = r.body.data ? r.body.data : "";
	if (r.status != status)
		harness_fail(file, line, "%s /rest12/v1/%.200s on %s: status %ld, want %ld; body "
		    "%.300s", method, path, s == &fx.pgs ? "postgresql" : "sqlite", r.status,
		    status, b);
	if (want_body != NULL && !(*want_body ? fx_json_eq(b, want_body) : *b == '\0'))
		harness_fail(file, line, "%s /rest12/v1/%.200s on %s: body %.600s\n  want %.600s",
		    method, path, s == &fx.pgs ? "postgresql" : "sqlite", b, want_body);
}

#define BOTH12(path_, status_, body_) do { \
	one12(__FILE__, __LINE__, &fx.lite, "GET", path_, NULL, NULL, status_, body_); \
	one12(__FILE__, __LINE__, &fx.pgs, "GET", path_, NULL, NULL, status_, body_); \
} while (0)

#define BOTH12_DO(method_, path_, headers_, req_, status_, body_) do { \
	one12(__FILE__, __LINE__, &fx.lite, method_, path_, headers_, req_, status_, body_); \
	one12(__FILE__, __LINE__, &fx.pgs, method_, path_, headers_, req_, status_, body_); \
} while (0)

/* rest_dialect_version: 13 (the default, /rest/v1/) and 12 (/rest12/v1/) on both back
 * ends, where PostgREST's two versions answer differently. */
static void
test_rest_dialect_version(void)
{
	/* A to-many spread: 13 makes arrays of its values, 12 refuses it. */
	FX_BOTH("GET", "artist?select=artist_id,...album(title)&artist_id=eq.2", NULL, NULL,
	    200, "[{\"artist_id\":2,\"title\":[\"Balls to the Wall\","
	    "\"Restless and Wild\"]}]", &r);
	BOTH12("artist?select=artist_id,...album(title)&artist_id=eq.2", 400,
	    "{\"code\":\"PGRST119\",\"details\":\"'artist' and 'album' do not form a "
	    "many-to-one or one-to-one relationship\",\"hint\":null,\"message\":\"A spread "
	    "operation on 'album' is not possible\"}");
	BOTH12("artist?select=count(),...album(title)", 400, NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "PGRST119") != NULL);
	/* To-one spreads and the rest of the grammar are the same in both. */
	BOTH12("album?select=title,...artist(artist_name:name)&album_id=eq.3", 200,
	    "[{\"title\":\"Balls to the Wall\",\"artist_name\":\"Accept\"}]");
	BOTH12("artist?select=name,album(title)&artist_id=eq.1&album.order=title", 200,
	    "[{\"name\":\"AC/DC\",\"album\":[{\"title\":\"For Those About To Rock\"},"
	    "{\"title\":\"Let There Be Rock\"}]}]");
	/* An unknown table: 13 looks in its schema cache, 12 passes PostgreSQL's words on. */
	FX_BOTH("GET", "missing_table?select=*", NULL, NULL, 404,
	    "{\"code\":\"PGRST205\",\"details\":null,\"hint\":null,\"message\":\"Could "
	    "not find the table 'public.missing_table' in the schema cache\"}", &r);
	BOTH12("missing_table?select=*", 404,
	    "{\"code\":\"42P01\",\"details\":null,\"hint\":null,\"message\":\"relation "
	    "\\\"public.missing_table\\\" does not exist\"}");
	/* Functions are found the same way by both. */
	BOTH12("rpc/no_such_function", 404, NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "PGRST202") != NULL);
}

/*
 * A table the schema does not hold, under rest_dialect_version=12, in PostgREST 12's
 * words, whose plan looked for no table before its statement: an embed (or spread) is a
 * relationship it cannot find, 400 PGRST200, its hint the closest table that has
 * relationships; a POST or PATCH that names columns is 404 with an empty object (its
 * NotFound); anything else is PostgreSQL's 404 42P01, on both back ends.  13 answers
 * every one of them 404 PGRST205.
 */
#define NO_REL_12(parent, child, using, hint) "{\"code\":\"PGRST200\",\"details\":" \
	"\"Searched for a foreign key relationship between '" parent "' and '" child "'" \
	using " in the schema 'public', but no matches were found.\",\"hint\":" hint "," \
	"\"message\":\"Could not find a relationship between '" parent "' and '" child "' " \
	"in the schema cache\"}"
#define NO_TABLE_12	"{\"code\":\"42P01\",\"details\":null,\"hint\":null," \
	"\"message\":\"relation \\\"public.missing_table\\\" does not exist\"}"
#define NO_TABLE_13	"{\"code\":\"PGRST205\",\"details\":null,\"hint\":null," \
	"\"message\":\"Could not find the table 'public.missing_table' in the schema cache\"}"

static void
test_rest_dialect12_missing_table(void)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	static const char *const rep[] = { "Content-Type: application/json",
	    "Prefer: return=representation", NULL };

	/* Reads: PostgreSQL's 42P01, but for an embed or a spread. */
	BOTH12("missing_table?select=*&id=eq.1&order=id", 404, NO_TABLE_12);
	BOTH12_DO("HEAD", "missing_table", NULL, NULL, 404, "");
	BOTH12("albums?select=title,artist(name)", 400, NO_REL_12("albums", "artist", "",
	    "\"Perhaps you meant 'album' instead of 'albums'.\""));
	BOTH12("albums?select=title,...artist(name)", 400, NO_REL_12("albums", "artist", "",
	    "\"Perhaps you meant 'album' instead of 'albums'.\""));
	BOTH12("albums?select=title,artist!album_artist_id_fkey(name)", 400,
	    NO_REL_12("albums", "artist", " using the hint 'album_artist_id_fkey'", "\"Perhaps "
	    "you meant 'album' instead of 'albums'.\""));
	BOTH12("zzz?select=*,artist(*)", 400, NO_REL_12("zzz", "artist", "", "null"));
	/* The select grammar is read first. */
	BOTH12("missing_table?select=id,", 400, NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"PGRST100\"") != NULL);

	/* Writes: NotFound where columns are named, else 42P01. */
	BOTH12_DO("POST", "missing_table", json, "{\"id\":1}", 404, "{}");
	BOTH12_DO("POST", "missing_table?columns=id", json, "[{\"id\":1,\"x\":2}]", 404,
	    "{}");
	BOTH12_DO("POST", "missing_table", json, "[]", 404, NO_TABLE_12);
	BOTH12_DO("POST", "missing_table", json, "{}", 404, NO_TABLE_12);
	BOTH12_DO("PATCH", "missing_table?id=eq.1", json, "{\"name\":\"x\"}", 404, "{}");
	BOTH12_DO("DELETE", "missing_table?id=eq.1", NULL, NULL, 404, NO_TABLE_12);
	BOTH12_DO("POST", "zzz?select=id,artist(name)", rep, "{\"id\":1}", 400,
	    NO_REL_12("zzz", "artist", "", "null"));
	/* The body is read before the table is looked for. */
	BOTH12_DO("POST", "missing_table", json, "{\"id\":", 400, NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "\"PGRST102\"") != NULL);

	/* 13 looks in its schema cache first, whatever the request. */
	FX_BOTH("POST", "missing_table", json, "{\"id\":1}", 404, NO_TABLE_13, &r);
	FX_BOTH("PATCH", "missing_table?id=eq.1", json, "{\"name\":\"x\"}", 404, NO_TABLE_13,
	    &r);
	FX_BOTH("DELETE", "missing_table?id=eq.1", NULL, NULL, 404, NO_TABLE_13, &r);
	FX_BOTH("GET", "missing_table?select=*,artist(*)", NULL, NULL, 404, NO_TABLE_13, &r);
}

static void
test_rest_isdistinct_any_all(void)
{
	FX_BOTH("GET", "gadget?select=id&kind=isdistinct.tool&order=id", NULL, NULL, 200,
	    "[{\"id\":3},{\"id\":4}]", &r);
	FX_BOTH("GET", "gadget?select=id&maker_id=isdistinct.1&order=id", NULL, NULL, 200,
	    "[{\"id\":2},{\"id\":4}]", &r);
	FX_BOTH("GET", "gadget?select=id&maker_id=not.isdistinct.1&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":3}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&artist_id=eq(any).{1,3}&order=artist_id", NULL,
	    NULL, 200, "[{\"artist_id\":1},{\"artist_id\":3}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&artist_id=gt(all).{1,2}&order=artist_id", NULL,
	    NULL, 200, "[{\"artist_id\":3},{\"artist_id\":4},{\"artist_id\":5}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&artist_id=not.eq(any).{1,2,5}&order=artist_id",
	    NULL, NULL, 200, "[{\"artist_id\":3},{\"artist_id\":4}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=like(any).{AC*,*smith}&order=artist_id",
	    NULL, NULL, 200, "[{\"artist_id\":1},{\"artist_id\":3}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=like(all).{A*,*t}", NULL, NULL, 200,
	    "[{\"artist_id\":2}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=ilike(all).{a*,*T}", NULL, NULL, 200,
	    "[{\"artist_id\":2}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=eq(any).{%22O'Brien,%20%5C%22Jr%5C%22%22}",
	    NULL, NULL, 200, "[{\"artist_id\":4}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&artist_id=eq(any).{}", NULL, NULL, 200, "[]",
	    &r);
	FX_BOTH("GET", "artist?select=artist_id&or=(artist_id.eq(any).{1,2},name.isdistinct.x)"
	    "&artist_id=lt.3&order=artist_id", NULL, NULL, 200,
	    "[{\"artist_id\":1},{\"artist_id\":2}]", &r);
	FX_BOTH("GET", "artist?artist_id=eq(some).{1}", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=in(any).{1}", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=eq(any).(1,2)", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "artist?artist_id=eq(any).{1,x}", NULL, NULL, 400, NULL, &r);
}

/* Regular expressions (SQLite: PCRE2) and text search (SQLite: gadget_fts) give the same
 * rows on both back ends. */
static void
test_rest_match_fts(void)
{
	FX_BOTH("GET", "artist?select=artist_id&name=match.%5EA.*h%24", NULL, NULL, 200,
	    "[{\"artist_id\":3}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=imatch.%5Eac&order=artist_id", NULL, NULL,
	    200, "[{\"artist_id\":1},{\"artist_id\":2}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=not.match.c&order=artist_id", NULL, NULL,
	    200, "[{\"artist_id\":1},{\"artist_id\":3},{\"artist_id\":4}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=match(any).{%5EAC,smith%24}&order=artist_id",
	    NULL, NULL, 200, "[{\"artist_id\":1},{\"artist_id\":3}]", &r);
	FX_BOTH("GET", "artist?select=artist_id&name=imatch(all).{%5Ea,H%24}", NULL, NULL, 200,
	    "[{\"artist_id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&body=fts.quick&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&body=fts(english).dog", NULL, NULL, 200,
	    "[{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&body=plfts.quick%20brown", NULL, NULL, 200,
	    "[{\"id\":1}]", &r);
	FX_BOTH("GET", "gadget?select=id&body=phfts(english).brown%20fox", NULL, NULL, 200,
	    "[{\"id\":1}]", &r);
	FX_BOTH("GET", "gadget?select=id&body=wfts.quick%20-fox", NULL, NULL, 200,
	    "[{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&body=not.fts.quick&order=id", NULL, NULL, 200,
	    "[{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?body=fts(eng;lish).x", NULL, NULL, 400, NULL, &r);
	FX_BOTH("GET", "gadget?body=fts().x", NULL, NULL, 400, NULL, &r);
	/* An unknown configuration matches nothing (to_regconfig() is NULL), never a 5xx. */
	FX_BOTH("GET", "gadget?body=fts(klingon).x", NULL, NULL, 200, "[]", &r);
}

/*
 * to_tsquery's operators and their FTS5 translations: the same rows on both back ends
 * for &, |, !, <->, :*, 'quoted' lexemes, weights and stemming (english: porter), and the
 * other three functions' grammars.
 */
static void
test_sqlite_fts_operators(void)
{
	static const struct { const char *q, *want; } t[] = {
		{ "fts.quick%20%26%20!fox", "[{\"id\":3}]" },
		{ "fts.!quick", "[{\"id\":2}]" },
		{ "fts.!quick%20%26%20!dog", "[]" },
		{ "fts(english).!quick%20%7C%20dogs", "[{\"id\":2}]" },
		{ "fts.fox%20%7C%20lazy", "[{\"id\":1},{\"id\":2}]" },
		{ "fts.(fox%20%7C%20lazy)%20%26%20!dog", "[{\"id\":1}]" },
		{ "fts.quick%20%3C-%3E%20brown", "[{\"id\":1}]" },
		{ "fts.brown%20%3C-%3E%20quick", "[]" },
		{ "fts.qui:*", "[{\"id\":1},{\"id\":3}]" },
		{ "fts.'thinking'", "[{\"id\":3}]" },
		{ "fts(english).sleeping", "[{\"id\":2}]" },
		{ "fts.%20", "[]" },
		{ "plfts.'fox'%20%26%20'quick'", "[{\"id\":1}]" },
		{ "plfts.%26%26%26", "[]" },
		{ "phfts.quick%20fox", "[]" },
		{ "phfts.brown,fox", "[{\"id\":1}]" },
		{ "wfts.%22quick%20brown%22", "[{\"id\":1}]" },
		{ "wfts.%22brown%20quick%22", "[]" },
		{ "wfts.fox%20or%20lazy", "[{\"id\":1},{\"id\":2}]" },
		{ "wfts.fox%20OR%20lazy%20-dogs", "[{\"id\":1}]" },
		{ "wfts.-quick", "[{\"id\":2}]" },
		{ "wfts.%22unclosed%20quick", "[]" },
		{ "wfts.%26%20%7C%20!%20(", "[]" },
	};
	char path[512];
	size_t i;

	for (i = 0; i < sizeof(t) / sizeof(t[0]); i++) {
		(void)snprintf(path, sizeof(path), "gadget?select=id&body=%s&order=id", t[i].q);
		FX_BOTH("GET", path, NULL, NULL, 200, t[i].want, &r);
	}
	/* Weights: FTS5 has none, SQLite ignores them (PostgreSQL's to_tsvector() gives
	 * every lexeme D, so that :AB matches nothing there). */
	ONE(&fx.lite, "gadget?select=id&body=fts.'thinking':AB", 200, "[{\"id\":3}]");
	/* A malformed to_tsquery text is PostgreSQL's 400 42601 on both (it was a 500 on
	 * PostgreSQL, its 42601 taken for a statement of sluice's). */
	ONE(&fx.lite, "gadget?body=fts.quick%20brown", 400, NULL);
	CHECK(http_json_code(&r, "42601"));
	ONE(&fx.pgs, "gadget?body=fts.quick%20brown", 400, NULL);
	CHECK(http_json_code(&r, "42601"));
	ONE(&fx.lite, "gadget?body=fts.(quick", 400, NULL);
	CHECK(http_json_code(&r, "42601"));
	ONE(&fx.lite, "gadget?body=fts.'quick", 400, NULL);
	CHECK(http_json_code(&r, "42601"));
	ONE(&fx.lite, "gadget?body=fts.quick%20%3C3", 400, NULL);
	CHECK(http_json_code(&r, "42601"));
	/* A phrase of expressions, which FTS5 cannot follow: 400 0A000 on SQLite. */
	ONE(&fx.lite, "gadget?body=fts.(quick%20%7C%20lazy)%20%3C-%3E%20fox", 400, NULL);
	CHECK(http_json_code(&r, "0A000"));
	/* A column without an FTS5 table, a JSON path: 400 42883, never a scan. */
	ONE(&fx.lite, "gadget?kind=fts.tool", 400, NULL);
	CHECK(http_json_code(&r, "42883"));
	CHECK(r.body.data != NULL && strstr(r.body.data, "gadget_fts") != NULL);
	ONE(&fx.lite, "gadget?data->>a=fts.x", 400, NULL);
	CHECK(http_json_code(&r, "42883"));
	/* The FTS5 table and its own tables are not served. */
	ONE(&fx.lite, "gadget_fts", 404, NULL);
	ONE(&fx.lite, "gadget_fts_data", 404, NULL);
}

/*
 * Hostile text search queries on SQLite: FTS5's own syntax, quotes, NUL, control bytes
 * and very long texts never reach FTS5 as syntax: each answer is a 200 or a JSON 400,
 * never a 5xx.
 */
static void
test_sqlite_fts_hostile(void)
{
	static const char *const q[] = {
		"fts.NEAR(quick%20fox)", "fts.quick%20AND%20fox", "fts.%22quick%22", "fts.quick*",
		"fts.%7Bbody%7D%3Aquick", "fts.body%3Aquick", "fts.%5Equick", "fts.quick%2Bfox",
		"fts.''''", "fts.'%22'", "fts.'a''b'", "fts.%5C'", "wfts.%22%22%22%22",
		"wfts.NEAR(%22quick%22)", "plfts.%22%20OR%20%22", "phfts.%7Bbody%7D", "fts.%01%02",
		"fts.quick%00fox", "wfts.quick%00", "fts.%3C-%3E", "fts.!", "fts.()", "fts.%7C",
		"fts.a:*:*", "fts.%C3%A9t%C3%A9", "fts.%FF%FE", "wfts.-", "wfts.--quick",
		"fts(english).%27", "fts.quick%20%3C16385%3E%20fox", "fts.quick%20%3C0%3E%20fox",
	};
	char p[512], *path;
	size_t i, k, n = 7000;
	int j;

	for (i = 0; i < sizeof(q) / sizeof(q[0]); i++) {
		(void)snprintf(p, sizeof(p), "gadget?select=id&body=%s", q[i]);
		if (fx_do(&fx.lite, "GET", p, NULL, NULL, &r) < 0) {
			CHECK(!"a response");
			continue;
		}
		if (r.status != 200 && (r.status != 400 || r.body.data == NULL ||
		    r.body.data[0] != '{'))
			harness_fail(__FILE__, __LINE__, "GET %s: status %ld, body %.300s", p,
			    r.status, r.body.data ? r.body.data : "");
	}
	/* 7,000 bytes of one word, of operators, of nesting, of negated phrases: each a
	 * 200, or a JSON 400. */
	if ((path = malloc(n + 64)) == NULL) {
		CHECK(!"memory");
		return;
	}
	for (j = 0; j < 4; j++) {
		const char *unit = j == 0 ? "q" : j == 1 ? "a%26" : j == 2 ? "(" : "%22-";

		k = (size_t)snprintf(path, 64, "gadget?select=id&body=%s.", j == 3 ? "wfts" : "fts");
		while (k + strlen(unit) < n) {
			memcpy(path + k, unit, strlen(unit));
			k += strlen(unit);
		}
		path[k] = '\0';
		if (fx_do(&fx.lite, "GET", path, NULL, NULL, &r) < 0)
			CHECK(!"a response to a long query");
		else if (r.status != 200 && (r.status != 400 || r.body.data == NULL ||
		    r.body.data[0] != '{'))
			harness_fail(__FILE__, __LINE__, "long query %d: status %ld, body %.300s", j,
			    r.status, r.body.data ? r.body.data : "");
		else
			printf("   long query %d: %ld\n", j, r.status);
	}
	free(path);
}

/*
 * Regular expressions on SQLite: a malformed pattern is PostgreSQL's 400 2201B before the
 * statement runs; a pattern that backtracks catastrophically stops at PCRE2's match limit
 * (400 2201B, "too complex") well within the budget, and the worker answers the next
 * request.
 */
static void
test_sqlite_regex_hostile(void)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	char body[256];
	struct timespec t0, t1;
	double ms;

	ONE(&fx.lite, "artist?name=match.(", 400, NULL);
	CHECK(http_json_code(&r, "2201B"));
	ONE(&fx.pgs, "artist?name=match.(", 400, NULL);
	CHECK(http_json_code(&r, "2201B"));
	ONE(&fx.lite, "artist?name=imatch.%5B", 400, NULL);
	CHECK(http_json_code(&r, "2201B"));
	ONE(&fx.lite, "artist?select=artist_id&name=match.%5C%5C", 200, "[]");
	ONE(&fx.lite, "artist?select=artist_id&name=match(any).{%5EAC,(}", 400, NULL);
	CHECK(http_json_code(&r, "2201B"));
	/* A quote and SQL in a pattern are a pattern's characters; so is a NUL. */
	ONE(&fx.lite, "artist?select=artist_id&name=match.'%20or%201%3D1--", 200, "[]");
	if (fx_do(&fx.lite, "GET", "artist?select=artist_id&name=match.a%00", NULL, NULL, &r) < 0)
		CHECK(!"a response");
	else
		CHECK(r.status == 200 || (r.status == 400 && r.body.data != NULL &&
		    r.body.data[0] == '{'));
	(void)snprintf(body, sizeof(body), "{\"id\":20,\"qty\":1,\"kind\":\"x\",\"body\":"
	    "\"%s!\"}", "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa");
	FX_BOTH("POST", "gadget", json, body, 201, NULL, &r);
	clock_gettime(CLOCK_MONOTONIC, &t0);
	ONE(&fx.lite, "gadget?select=id&body=match.%5E(a%2B)%2B%24", 400, NULL);
	clock_gettime(CLOCK_MONOTONIC, &t1);
	ms = (double)(t1.tv_sec - t0.tv_sec) * 1e3 + (double)(t1.tv_nsec - t0.tv_nsec) / 1e6;
	printf("   catastrophic pattern on SQLite answered in %.1f ms\n", ms);
	CHECK(http_json_code(&r, "2201B"));
	CHECK(r.body.data != NULL && strstr(r.body.data, "too complex") != NULL);
	CHECK(ms < 2000);
	ONE(&fx.lite, "gadget?select=id&body=imatch.%5E(A%7Ca)*!%24", 200, "[{\"id\":20}]");
	/* The FTS5 table followed the insert, then the delete. */
	ONE(&fx.lite, "gadget?select=id&body=fts.aaaa:*", 200, "[{\"id\":20}]");
	FX_BOTH("DELETE", "gadget?id=eq.20", json, NULL, 204, "", &r);
	ONE(&fx.lite, "gadget?select=id&body=fts.aaaa:*", 200, "[]");
}

static void
test_rest_array_range_ops(void)
{
	/* Arrays and jsonb: the same rows on both (SQLite's arrays are JSON arrays). */
	FX_BOTH("GET", "gadget?select=id&tags=cs.{red}&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&tags=cd.{red,blue,green}&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2},{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&nums=ov.{3,4}&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&nums=cs.{}&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2},{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&nums=cs.{1,3}&order=id", NULL, NULL, 200,
	    "[{\"id\":1}]", &r);
	FX_BOTH("GET", "gadget?select=id&tags=cs.{%22red%22,blue}", NULL, NULL, 200,
	    "[{\"id\":1}]", &r);
	FX_BOTH("GET", "gadget?select=id&tags=not.cs.{red}", NULL, NULL, 200, "[{\"id\":2}]",
	    &r);
	FX_BOTH("GET", "gadget?select=id&data=cs.{%22n%22:2}", NULL, NULL, 200,
	    "[{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&data->a=cs.{%22b%22:%22x%22}", NULL, NULL, 200,
	    "[{\"id\":1}]", &r);
	FX_BOTH("GET", "gadget?select=id&data=cs.{%22a%22:{}}&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&data=cd.{%22n%22:3,%22m%22:1}", NULL, NULL, 200,
	    "[{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&data->arr=cs.[20]", NULL, NULL, 200, "[{\"id\":1}]",
	    &r);
	/* A malformed literal: PostgreSQL's 400 22P02 on both (its details its own). */
	ONE(&fx.pgs, "gadget?tags=cs.{red", 400, NULL);
	CHECK(http_json_code(&r, "22P02"));
	ONE(&fx.lite, "gadget?tags=cs.{red", 400, NULL);
	CHECK(http_json_code(&r, "22P02"));
	ONE(&fx.pgs, "gadget?tags=cs.{a,{b}}", 400, NULL);
	CHECK(http_json_code(&r, "22P02"));
	ONE(&fx.lite, "gadget?tags=cs.{a,{b}}", 400, NULL);
	CHECK(http_json_code(&r, "22P02"));
	ONE(&fx.lite, "gadget?data=cd.{%22a%22:", 400, NULL);
	CHECK(http_json_code(&r, "22P02"));
	FX_BOTH("GET", "gadget?select=id&span=ov.[3,6)&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=sl.[10,15)&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=sr.[10,15)", NULL, NULL, 200, "[{\"id\":3}]", &r);
	/* nxl is &> (does not extend to the left of), nxr is &< (to the right of). */
	FX_BOTH("GET", "gadget?select=id&span=nxl.[4,15)&order=id", NULL, NULL, 200,
	    "[{\"id\":2},{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=nxr.[10,15)&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=adj.[10,20)&order=id", NULL, NULL, 200,
	    "[{\"id\":2},{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=cs.[2,4)", NULL, NULL, 200, "[{\"id\":1}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=cs.(1,2]", NULL, NULL, 200, "[{\"id\":1}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=cd.[0,10)&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=ov.[25,)", NULL, NULL, 200, "[{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id&span=cs.empty&order=id", NULL, NULL, 200,
	    "[{\"id\":1},{\"id\":2},{\"id\":3}]", &r);
	FX_BOTH("GET", "gadget?select=id,span&id=eq.2", NULL, NULL, 200,
	    "[{\"id\":2,\"span\":\"[5,10)\"}]", &r);
	ONE(&fx.lite, "gadget?span=ov.[x,y)", 400, NULL);
	CHECK(http_json_code(&r, "22P02"));
	ONE(&fx.lite, "gadget?span=sl.[5,1)", 400, NULL);
	CHECK(http_json_code(&r, "22P02"));
	/* An operator PostgreSQL has not for the column's type is a 400 42883 on both. */
	one(__FILE__, __LINE__, &fx.pgs, "gadget?kind=cs.{a}", 400, NULL);
	CHECK(r.body.data != NULL && strstr(r.body.data, "42883") != NULL);
	one(__FILE__, __LINE__, &fx.pgs, "gadget?tags=sl.[1,2)", 400, NULL);
	one(__FILE__, __LINE__, &fx.pgs, "gadget?data=ov.{1}", 400, NULL);
	one(__FILE__, __LINE__, &fx.pgs, "gadget?qty=fts.x", 400, NULL);
	one(__FILE__, __LINE__, &fx.pgs, "gadget?data->a=fts.x", 400, NULL);
	/* A malformed literal is PostgreSQL's 22P02, a 400. */
	one(__FILE__, __LINE__, &fx.pgs, "gadget?span=ov.[x,y)", 400, NULL);
}

static void
test_rest_grammar_writes(void)
{
	static const char *const rep[] = { "Content-Type: application/json",
	    "Prefer: return=representation", NULL };
	static const char *const json[] = { "Content-Type: application/json", NULL };

	/* A write's representation takes casts, paths and spreads, not aggregates. */
	FX_BOTH("POST", "gadget?select=count()", rep, "{\"id\":10,\"qty\":1,\"kind\":\"x\"}",
	    400, NULL, &r);
	FX_BOTH("GET", "gadget?select=id&id=eq.10", NULL, NULL, 200, "[]", &r);
	FX_BOTH("POST", "gadget?select=id,q:qty::text,...artist(name)", rep,
	    "{\"id\":11,\"qty\":4,\"kind\":\"x\",\"maker_id\":3}", 201,
	    "[{\"id\":11,\"q\":\"4\",\"name\":\"Aerosmith\"}]", &r);
	/* PATCH and DELETE filter through JSON paths and the new operators. */
	FX_BOTH("PATCH", "gadget?data->>n=eq.3", json, "{\"qty\":7}", 204, "", &r);
	FX_BOTH("GET", "gadget?select=id,qty&qty=eq(any).{7,4}&order=id", NULL, NULL, 200,
	    "[{\"id\":3,\"qty\":7},{\"id\":11,\"qty\":4}]", &r);
	FX_BOTH("DELETE", "gadget?kind=isdistinct.tool&kind=like(any).{x,y*}", NULL, NULL, 204,
	    "", &r);
	FX_BOTH("GET", "gadget?select=count()", NULL, NULL, 200, "[{\"count\":4}]", &r);
}

/*
 * Functions that write, on both back ends (on SQLite a body of one UPDATE ... RETURNING,
 * run before the call's SELECT): their rows take select= and filters, tx=rollback and
 * max-affected undo them, a GET is 405 25006 and writes nothing, and a scalar one answers
 * its value.
 */
static void
test_rest_functions_that_write(void)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	static const char *const rollback[] = { "Content-Type: application/json",
	    "Prefer: tx=rollback", NULL };
	static const char *const strict[] = { "Content-Type: application/json",
	    "Prefer: handling=strict, max-affected=0", NULL };

	FX_BOTH("POST", "rpc/gadget_bump?select=id,qty", rollback, "{\"n\":10}", 200,
	    "[{\"id\":4,\"qty\":11}]", &r);
	FX_BOTH("GET", "gadget?select=qty&id=eq.4", NULL, NULL, 200, "[{\"qty\":1}]", &r);
	FX_BOTH("POST", "rpc/gadget_bump?select=id", strict, "{\"n\":10}", 400, NULL, &r);
	CHECK(http_json_code(&r, "PGRST124"));
	FX_BOTH("GET", "gadget?select=qty&id=eq.4", NULL, NULL, 200, "[{\"qty\":1}]", &r);
	FX_BOTH("GET", "rpc/gadget_bump?n=1", NULL, NULL, 405, NULL, &r);
	CHECK(http_json_code(&r, "25006"));
	FX_BOTH("GET", "gadget?select=qty&id=eq.4", NULL, NULL, 200, "[{\"qty\":1}]", &r);
	FX_BOTH("POST", "rpc/gadget_bump?select=id,qty&qty=gt.100", json, "{\"n\":2}", 200,
	    "[]", &r);
	FX_BOTH("POST", "rpc/gadget_qty", json, "{\"i\":4}", 200, "4", &r);
	FX_BOTH("POST", "rpc/gadget_qty", json, "{\"i\":99}", 200, "null", &r);
	FX_BOTH("GET", "gadget?select=qty&id=eq.4", NULL, NULL, 200, "[{\"qty\":4}]", &r);
}

int
main(void)
{
	const char *b = getenv("SLUICE_BIN");
	char bin[4096], conf[4400];

	http_resp_init(&r);
	fx_more_pg = more_pg;
	fx_more_sqlite = more_sqlite;
	if (realpath(b ? b : "bin", bin) == NULL) {
		CHECK(!"SLUICE_BIN names the binaries");
		return harness_done();
	}
	(void)snprintf(conf, sizeof(conf), "\nrest12 /rest12/v1/ workers=1 threads=2 db=chinook "
	    "binary=%s/rest rest_dialect_version=12", bin);
	if (fx_start(conf) < 0) {
		CHECK(!"the two stacks started");
		fx_stop();
		return harness_done();
	}
	RUN(test_rest_aggregates);
	RUN(test_rest_casts);
	RUN(test_rest_json_paths);
	RUN(test_rest_spreads);
	RUN(test_rest_dialect_version);
	RUN(test_rest_dialect12_missing_table);
	RUN(test_rest_isdistinct_any_all);
	RUN(test_rest_match_fts);
	RUN(test_sqlite_fts_operators);
	RUN(test_sqlite_fts_hostile);
	RUN(test_sqlite_regex_hostile);
	RUN(test_rest_array_range_ops);
	RUN(test_rest_grammar_writes);
	RUN(test_rest_functions_that_write);
	http_resp_free(&r);
	fx_stop();
	return harness_done();
}
