/*
 * fuzz_records_filter: PocketBase's filter language (apps/records/filter.c) on hostile
 * bytes, compiled for SQLite and for PostgreSQL as a client's filter and as an API rule
 * with a signed-in record and a body; the same bytes also go through the sort, expand and
 * fields parsers and the token parser.
 *
 * Invariants: no crash, no leak, no read past the input (it is copied into a buffer of
 * exactly its size); a compiled filter's text has balanced parentheses and quotes, and
 * holds none of the input's quoted values (they are bound, never SQL text): every bound
 * value is in range, and every "$N" in the text names one of them.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "records/coll.h"
#include "records/filter.h"
#include "records/query.h"
#include "sqlb.h"
#include "records/token.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct colls fz;
static struct arena *fa;

static void
fz_init(void)
{
	static const char *const rules[COLL_RULE__MAX] = { "", "", "", "", "" };
	char err[256];

	fz.c = calloc(COLL_MAX, sizeof(*fz.c));
	coll_parse(&fz.c[fz.n++], "_pb_users_auth_", "users", "auth", "name text; age number",
	    rules, err, sizeof(err));
	coll_parse(&fz.c[fz.n++], "pbc_posts", "posts", "base", "title text; status select "
	    "values=a|b; author relation to=users; tags select multiple values=a|b; meta json; "
	    "hot bool; created autodate; up relation to=posts", rules, err, sizeof(err));
	coll_parse(&fz.c[fz.n++], "pbc_comments", "comments", "base",
	    "post relation to=posts; text text", rules, err, sizeof(err));
	coll_resolve(&fz, err, sizeof(err));
	fa = arena_new(1 << 26);
}

/* The SQL text's shape: parentheses balance outside quotes, quotes close, $N in range. */
static void
fz_check(const struct sqlb *q)
{
	const char *s = q->sql->data ? q->sql->data : "";
	long depth = 0;
	int in = 0;

	for (; *s != '\0'; s++) {
		if (*s == '\'' )
			in = !in;
		else if (!in && *s == '(')
			depth++;
		else if (!in && *s == ')')
			assert(--depth >= 0);
		else if (!in && *s == '$') {
			long n = strtol(s + 1, NULL, 10);

			assert(n >= 1 && n <= q->vals.n);
		}
	}
	assert(depth == 0 && !in);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static const char *vals[16] = { "abcdefghijklmno", "me@x.com", "1", "0", "p", "k", "Me",
	    "42" };
	static const size_t lens[16] = { 15, 8, 1, 1, 1, 1, 2, 2 };
	char *in = malloc(size ? size : 1), err[256];
	struct filter_ctx ctx = { .now = 1767225600 };
	struct query_expands ex;
	struct query_fields fs;
	struct token_claims cl;
	struct sqlb *q = malloc(sizeof(*q));
	struct buf sql;
	cJSON *body = cJSON_Parse("{\"title\":\"x\",\"n\":1,\"b\":false,\"tags\":[\"a\"],"
	    "\"meta\":{\"k\":[1]},\"status\":null}");
	int pass;

	if (fz.c == NULL)
		fz_init();
	memcpy(in, data, size);
	buf_init(&sql, 1 << 22);
	for (pass = 0; pass < 4; pass++) {
		enum filter_err e;

		ctx.rule = pass >= 2;
		ctx.auth = pass == 3 ? &fz.c[0] : NULL;
		ctx.auth_vals = pass == 3 ? vals : NULL;
		ctx.auth_lens = pass == 3 ? lens : NULL;
		ctx.body = pass == 3 ? body : NULL;
		arena_reset(fa);
		sqlb_init(q, &sql, fa, pass % 2 ? DB_PG : DB_SQLITE);
		e = filter_compile(q, &fz.c[1], "t", in, size, &ctx, err, sizeof(err));
		if (e == FILTER_OK)
			fz_check(q);
		else
			assert(err[0] != '\0' && filter_status(e) >= 400);
		sqlb_init(q, &sql, fa, pass % 2 ? DB_PG : DB_SQLITE);
		if (query_sort(q, &fz.c[pass % 2], "t", in, size, pass < 2, err, sizeof(err)) == 0)
			fz_check(q);
	}
	if (query_expand_parse(&ex, &fz.c[1], in, size, err, sizeof(err)) == 0)
		assert(ex.count <= QUERY_EXPAND_MAX);
	(void)query_fields_parse(&fs, fa, in, size, err, sizeof(err));
	(void)token_parse(in, size, &cl);
	/* The account flows' tokens: their email claims end within their buffers. */
	for (pass = TOKEN_VERIFICATION; pass < TOKEN__MAX; pass++)
		if (token_parse_as(in, size, (enum token_type)pass, &cl) == 0)
			assert(strlen(cl.email) < sizeof(cl.email) &&
			    strlen(cl.new_email) < sizeof(cl.new_email));
	cJSON_Delete(body);
	buf_free(&sql);
	free(q);
	free(in);
	return 0;
}
