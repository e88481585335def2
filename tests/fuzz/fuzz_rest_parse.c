/*
 * fuzz_rest_parse: the rest endpoint's URL grammar (apps/rest/parse.c) and SQL generator
 * (names.c, where.c, select.c and both dialects of dialect.c) on hostile bytes.
 *
 * The input is split at newlines: the first line is select=, every other line a
 * "key=value" query parameter (filters, or=/and= trees, order, limit, offset, embed
 * parameters), or "columns=..." for the columns parser.  Each parse is resolved against a
 * small fixed schema (artist <- album <- track -> genre, playlist <-> track; track has a
 * jsonb column, data, for JSON paths) and turned into
 * SQL for both back ends.  Invariants: no crash or sanitizer report, errors carry a 4xx
 * status and a code, and the generated SQL lexes cleanly: every '...' literal and "..."
 * identifier (where request aliases end up, escaped) is closed, so no request byte can
 * leave its quotes and become SQL.
 *
 * It links the endpoint's library (build/fuzz/handlers/librest.a).
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "arena.h"
#include "rest/rest.h"
#include "str.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define C(n, k, pk) { (char *)(uintptr_t)(n), (char *)(uintptr_t)"integer", k, 0, pk, NULL }

static struct rest_col artist_cols[] = { C("artist_id", REST_K_INT, 1),
	C("name", REST_K_TEXT, 0) };
static struct rest_col album_cols[] = { C("album_id", REST_K_INT, 1),
	C("title", REST_K_TEXT, 0), C("artist_id", REST_K_INT, 0) };
static struct rest_col track_cols[] = { C("track_id", REST_K_INT, 1),
	C("name", REST_K_TEXT, 0), C("album_id", REST_K_INT, 0), C("genre_id", REST_K_INT, 0),
	C("unit_price", REST_K_NUM, 0), C("added", REST_K_TS, 0), C("ok", REST_K_BOOL, 0),
	{ (char *)(uintptr_t)"data", (char *)(uintptr_t)"jsonb", REST_K_JSON, 0, 0, NULL } };
static struct rest_col genre_cols[] = { C("genre_id", REST_K_INT, 1),
	C("name", REST_K_TEXT, 0) };
static struct rest_col playlist_cols[] = { C("playlist_id", REST_K_INT, 1),
	C("name", REST_K_TEXT, 0) };
static struct rest_col pt_cols[] = { C("playlist_id", REST_K_INT, 1),
	C("track_id", REST_K_INT, 2) };

#define T(n, c) { (char *)(uintptr_t)(n), 0, 0, c, (int)(sizeof(c) / sizeof(c[0])) }
static struct rest_table tables[] = { T("artist", artist_cols), T("album", album_cols),
	T("track", track_cols), T("genre", genre_cols), T("playlist", playlist_cols),
	T("playlist_track", pt_cols) };

#define FK(n, f, t, fc, tc) { (char *)(uintptr_t)(n), f, t, 1, { fc }, { tc } }
static struct rest_fk fks[] = { FK("album_artist", 1, 0, 2, 0), FK("track_album", 2, 1, 2, 0),
	FK("track_genre", 2, 3, 3, 0), FK("pt_playlist", 5, 4, 0, 0), FK("pt_track", 5, 2, 1, 0) };

static struct rest_schema schema = { tables, 6, fks, 5, NULL, 0 };

static void
check_sql(const struct buf *b)
{
	size_t i;
	char q = 0;

	if (b->data == NULL)
		return;
	if (strlen(b->data) != b->len)
		abort();
	for (i = 0; i < b->len; i++) {
		char ch = b->data[i];

		if (q == 0) {
			if (ch == '\'' || ch == '"')
				q = ch;
		} else if (ch == q) {
			if (i + 1 < b->len && b->data[i + 1] == q)
				i++;	/* a doubled quote stays inside */
			else
				q = 0;
		}
	}
	if (q != 0)
		abort();
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static struct arena *a;
	static struct rest_params p;
	const char *s = (const char *)data, *end = s + size, *nl;
	struct rest_node *root;
	struct rest_err e;
	struct rest_gen g;
	struct buf sql;
	int be, table = 2;

	if (a == NULL)
		a = arena_new(1 << 24);
	arena_reset(a);
	for (be = 0; be < 2; be++) {
		const char *q = s;

		memset(&e, 0, sizeof(e));
		if ((root = rest_node_new(a, NULL)) == NULL)
			return 0;
		nl = memchr(q, '\n', (size_t)(end - q));
		if (rest_parse_select(a, q, (size_t)((nl ? nl : end) - q), root, &e) < 0)
			goto refused;
		q = nl ? nl + 1 : end;
		while (q < end) {
			const char *eq;
			size_t len;

			nl = memchr(q, '\n', (size_t)(end - q));
			len = (size_t)((nl ? nl : end) - q);
			if ((eq = memchr(q, '=', len)) != NULL) {
				if (str_eq(q, (size_t)(eq - q), "columns")) {
					const char **cols;
					size_t n;

					if (rest_parse_columns(a, eq + 1, len - (size_t)(eq + 1 - q),
					    &cols, &n, &e) < 0)
						goto refused;
				} else if (rest_parse_param(a, root, q, (size_t)(eq - q), eq + 1,
				    len - (size_t)(eq + 1 - q), &e) < 0)
					goto refused;
			}
			q = nl ? nl + 1 : end;
		}
		buf_init(&sql, REST_SQL_MAX);
		rest_params_init(&p, a);
		g = (struct rest_gen){ .sc = &schema, .d = rest_dialect_of(be ? DB_PG : DB_SQLITE),
		    .a = a, .sql = &sql, .p = &p, .e = &e };
		if (rest_resolve(&g, root, table) == 0 &&
		    rest_sql_select(&g, root, NULL, be ? REST_SHAPE_CSV : REST_SHAPE_JSON, 1) == 0)
			check_sql(&sql);
		else if (e.status < 300 || e.status > 499 || e.code == NULL)
			abort();
		buf_free(&sql);
		continue;
refused:
		if (e.status < 400 || e.status > 499 || e.code == NULL)
			abort();
	}
	return 0;
}
