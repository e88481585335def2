/*
 * names.c: the names of a parsed tree resolved against the schema: each relation's table,
 * each embed's relationship to its parent, and every column of select=, order= and the
 * filters.  More than REST_MEMBERS_MAX keys in one object (a '*' counts the table's
 * columns) is a 400 PGRST100.  A JSON path needs a json column, a cast one of the
 * dialect's type names, a spread beside aggregates a to-one relationship (PGRST119
 * otherwise), and aggregates do not mix with other embeds in one object.  Past this point every identifier the
 * generators write is one the database has.
 *
 * An embed finds its relationship as PostgREST 12 does: by the embedded table's (or
 * view's) name, by the constraint's name or the key's column (tables only:
 * parent_id(*)), and with a !hint naming the constraint, a column of the key on either
 * side, or the junction of a many-to-many.  A self-reference is its one-to-many by the
 * table's name (a hint: the key's column) and its many-to-one by the key's column.  A
 * key whose columns are unique embeds one object both ways.  Errors, in PostgREST's words:
 * 42703 for a column; PGRST200 when no relationship fits (what was searched for, and the
 * closest table name as a hint); PGRST201, status 300, when several do (details: each
 * candidate's cardinality, embedding and relationship; hint: the names that would pick
 * one); 42712 when two embeds of one object would have the same key.  All of it runs
 * over the schema loaded at start-up: no catalog query per request.  The closest table
 * that has relationships is also PGRST200's hint for a parent that is no table, as
 * PostgREST 12 answered an embed from a missing table (http.c).
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "json.h"
#include "rest.h"

static const struct rest_table *
tab(const struct rest_gen *g, int t)
{
	return &g->sc->tables[t];
}

static int
no_column(struct rest_gen *g, int t, int depth, const char *col)
{
	char m[200], d[16] = "";

	/* PostgREST's statement names an embed's table table_depth. */
	if (depth > 0)
		(void)snprintf(d, sizeof(d), "_%d", depth);
	(void)snprintf(m, sizeof(m), "column %s%s.%s does not exist", tab(g, t)->name, d, col);
	rest_err_set(g->e, 400, "42703", NULL, "%s", m);
	return -1;
}

/* A JSON path needs a json or jsonb column (PostgreSQL has no -> on other types). */
static int
path_fits(struct rest_gen *g, int t, int c, const struct rest_path *path)
{
	if (path == NULL || tab(g, t)->cols[c].kind == REST_K_JSON)
		return 0;
	rest_err_set(g->e, 400, "42883", NULL, "column %.80s.%.80s is not json: it has no "
	    "JSON path", tab(g, t)->name, tab(g, t)->cols[c].name);
	return -1;
}

static int
resolve_cond(struct rest_gen *g, int t, int depth, struct rest_cond *c)
{
	size_t i;

	if (c->kind == REST_C_LEAF) {
		if ((c->colidx = rest_schema_col(tab(g, t), c->col)) < 0)
			return no_column(g, t, depth, c->col);
		if (c->path != NULL && c->op == REST_OP_IS &&
		    (c->is == REST_IS_TRUE || c->is == REST_IS_FALSE)) {
			rest_err_set(g->e, 400, "42804", NULL, "is.true and is.false need a "
			    "boolean, not a JSON path");
			return -1;
		}
		return path_fits(g, t, c->colidx, c->path);
	}
	for (i = 0; i < c->nkids; i++)
		if (resolve_cond(g, t, depth, c->kids[i]) < 0)
			return -1;
	return 0;
}

/*
 * Relationships, as PostgREST 12 finds them (its findRel): from the parent's table p,
 * each foreign key is a many-to-one (or one-to-one when its columns are unique) where p
 * holds it and a one-to-many (or one-to-one) where it points at p; a table holding keys
 * to p and to another table, all of whose columns are in its primary key, is the junction
 * of a many-to-many.  The "origin" columns are p's, the "foreign" ones the embedded
 * table's.
 */
enum rel_card { REL_M2O, REL_O2M, REL_O2O, REL_M2M };

struct rel {
	enum rel_card card;
	int forward;		/* p holds the key */
	int fk, fk2, junction;
	int target;		/* the embedded table */
};

#define REL_MAX	32	/* candidates listed by PGRST201 */

static const char *
fk_col(const struct rest_gen *g, const struct rest_fk *fk, int from_side, int i)
{
	return from_side ? tab(g, fk->from)->cols[fk->from_cols[i]].name :
	    tab(g, fk->to)->cols[fk->to_cols[i]].name;
}

/* The single origin column (0) or foreign column (1) of r is name. */
static int
rel_single_col(const struct rest_gen *g, const struct rel *r, int foreign, const char *name)
{
	const struct rest_fk *fk = &g->sc->fks[r->fk];

	if (r->card == REL_M2M || fk->ncols != 1)
		return 0;
	/* Origin columns are the key's own where p holds it, the referenced ones else. */
	return strcmp(fk_col(g, fk, r->forward != foreign, 0), name) == 0;
}

static int
rel_constraint(const struct rest_gen *g, const struct rel *r, const char *name)
{
	return r->card != REL_M2M && strcmp(g->sc->fks[r->fk].name, name) == 0;
}

/* Whether the embed n (name, hint) means r from table p: PostgREST's rules. */
static int
rel_matches(const struct rest_gen *g, int p, const struct rel *r, const struct rest_node *n)
{
	const struct rest_table *t = tab(g, r->target);
	int by_table = strcmp(t->name, n->name) == 0;

	if (t->hidden)
		return 0;
	if (p == r->target) {
		/* A self-reference: the one-to-many by the table's name (children:t(*)), the
		 * many-to-one by the key's column (parent_id(*)); a hint names the key's
		 * column of the one-to-many (auditees:t!auditor(*)). */
		if (n->hint == NULL)
			return (by_table && r->card == REL_O2M && !r->forward) ||
			    (r->card == REL_M2O && rel_single_col(g, r, 0, n->name));
		return by_table && r->card == REL_O2M && rel_single_col(g, r, 1, n->hint);
	}
	if (n->hint == NULL)
		return by_table || (!t->is_view && (rel_constraint(g, r, n->name) ||
		    rel_single_col(g, r, 0, n->name)));
	return by_table && (rel_constraint(g, r, n->hint) ||
	    rel_single_col(g, r, 0, n->hint) || rel_single_col(g, r, 1, n->hint) ||
	    (r->card == REL_M2M && strcmp(tab(g, r->junction)->name, n->hint) == 0));
}

/* Whether every column of the keys a and b of junction j is in j's primary key. */
static int
junction_keys_in_pk(const struct rest_gen *g, const struct rest_fk *a, const struct rest_fk *b)
{
	const struct rest_table *j = tab(g, a->from);
	int i;

	for (i = 0; i < a->ncols; i++)
		if (j->cols[a->from_cols[i]].pk == 0)
			return 0;
	for (i = 0; i < b->ncols; i++)
		if (j->cols[b->from_cols[i]].pk == 0)
			return 0;
	return 1;
}

/*
 * The relationships of table p, in PostgREST's order (keys p holds, many-to-many, keys to
 * p), that embed n means (all of them when n is NULL): the first max into out.  Returns
 * how many there are, which may be more than max.
 */
static int
rels_of(const struct rest_gen *g, int p, const struct rest_node *n, struct rel *out,
    int max)
{
	struct rel r;
	int i, j, k = 0;

	for (i = 0; i < g->sc->nfks; i++) {
		const struct rest_fk *fk = &g->sc->fks[i];

		r = (struct rel){ fk->unique ? REL_O2O : REL_M2O, 1, i, -1, -1, fk->to };
		if (fk->from == p && (n == NULL || rel_matches(g, p, &r, n)) && k++ < max)
			out[k - 1] = r;
	}
	for (i = 0; i < g->sc->nfks; i++) {
		const struct rest_fk *a = &g->sc->fks[i];

		if (a->to != p || tab(g, a->from)->is_view)
			continue;
		for (j = 0; j < g->sc->nfks; j++) {
			const struct rest_fk *b = &g->sc->fks[j];

			if (j == i || b->from != a->from || strcmp(a->name, b->name) == 0 ||
			    !junction_keys_in_pk(g, a, b))
				continue;
			r = (struct rel){ REL_M2M, 0, i, j, a->from, b->to };
			if ((n == NULL || rel_matches(g, p, &r, n)) && k++ < max)
				out[k - 1] = r;
		}
	}
	for (i = 0; i < g->sc->nfks; i++) {
		const struct rest_fk *fk = &g->sc->fks[i];

		r = (struct rel){ fk->unique ? REL_O2O : REL_O2M, 0, i, -1, -1, fk->from };
		if (fk->to == p && (n == NULL || rel_matches(g, p, &r, n)) && k++ < max)
			out[k - 1] = r;
	}
	return k;
}

/* "(a, b)": the origin (0) or foreign (1) columns of r, or a junction key's own. */
static void
rel_cols(const struct rest_gen *g, struct buf *b, const struct rest_fk *fk, int from_side)
{
	int i;

	buf_putc(b, '(');
	for (i = 0; i < fk->ncols; i++)
		buf_printf(b, "%s%s", i ? ", " : "", fk_col(g, fk, from_side, i));
	buf_putc(b, ')');
}

/* PGRST201's details: PostgREST's description of each candidate, as a JSON array. */
static void
rel_details(const struct rest_gen *g, int p, const struct rel *rs, int n, struct buf *out)
{
	static const char *const card[] = { "many-to-one", "one-to-many", "one-to-one",
	    "many-to-many" };
	struct buf s;
	int i;

	buf_putc(out, '[');
	for (i = 0; i < n; i++) {
		const struct rel *r = &rs[i];
		const struct rest_fk *fk = &g->sc->fks[r->fk];

		buf_init(&s, 4096);
		buf_printf(&s, "%s with %s", tab(g, p)->name, tab(g, r->target)->name);
		buf_puts(out, i ? ",{\"cardinality\":\"" : "{\"cardinality\":\"");
		buf_puts(out, card[r->card]);
		buf_puts(out, "\",\"embedding\":");
		json_escape(out, s.data != NULL ? s.data : "", s.len);
		buf_reset(&s, 4096);
		if (r->card == REL_M2M) {
			buf_printf(&s, "%s using %s", tab(g, r->junction)->name, fk->name);
			rel_cols(g, &s, fk, 1);
			buf_printf(&s, " and %s", g->sc->fks[r->fk2].name);
			rel_cols(g, &s, &g->sc->fks[r->fk2], 1);
		} else {
			buf_printf(&s, "%s using %s", fk->name, tab(g, p)->name);
			rel_cols(g, &s, fk, r->forward);
			buf_printf(&s, " and %s", tab(g, r->target)->name);
			rel_cols(g, &s, fk, !r->forward);
		}
		buf_puts(out, ",\"relationship\":");
		json_escape(out, s.data != NULL ? s.data : "", s.len);
		buf_putc(out, '}');
		buf_free(&s);
	}
	buf_putc(out, ']');
}

static int
ambiguous(struct rest_gen *g, int p, const struct rest_node *n, const struct rel *rs, int nr)
{
	struct buf b;
	int i, len;

	rest_err_set(g->e, 300, "PGRST201", NULL, "Could not embed because more than one "
	    "relationship was found for '%s' and '%s'", tab(g, p)->name, n->name);
	/* As many candidates as the details hold (all but for dozens of keys). */
	for (i = nr; i > 0 && !g->e->details_json; i--) {
		buf_init(&b, sizeof(g->e->details) - 1);
		rel_details(g, p, rs, i, &b);
		if (!buf_failed(&b) && b.data != NULL) {
			memcpy(g->e->details, b.data, b.len + 1);
			g->e->details_json = 1;
		}
		buf_free(&b);
	}
	len = snprintf(g->e->hint_buf, sizeof(g->e->hint_buf), "Try changing '%s' to one of "
	    "the following: ", n->name);
	for (i = 0; i < nr && len > 0 && (size_t)len < sizeof(g->e->hint_buf); i++) {
		const struct rel *r = &rs[i];

		len += snprintf(g->e->hint_buf + len, sizeof(g->e->hint_buf) - (size_t)len,
		    "%s'%s!%s'", i ? ", " : "", tab(g, r->target)->name,
		    r->card == REL_M2M ? tab(g, r->junction)->name : g->sc->fks[r->fk].name);
	}
	if (len > 0 && (size_t)len < sizeof(g->e->hint_buf))
		(void)snprintf(g->e->hint_buf + len, sizeof(g->e->hint_buf) - (size_t)len,
		    ". Find the desired relationship in the 'details' key.");
	g->e->hint = g->e->hint_buf;
	return -1;
}

/* Levenshtein distance of a and b (both at most 63 bytes; longer: their length). */
static size_t
edit_distance(const char *a, const char *b)
{
	size_t la = strlen(a), lb = strlen(b), i, j, row[64];

	if (la >= 64 || lb >= 64)
		return la > lb ? la : lb;
	for (j = 0; j <= lb; j++)
		row[j] = j;
	for (i = 1; i <= la; i++) {
		size_t diag = row[0], up;

		row[0] = i;
		for (j = 1; j <= lb; j++) {
			size_t best = diag + (a[i - 1] != b[j - 1]);

			up = row[j];
			if (up + 1 < best)
				best = up + 1;
			if (row[j - 1] + 1 < best)
				best = row[j - 1] + 1;
			diag = up;
			row[j] = best;
		}
	}
	return row[lb];
}

/* How close cand is to name, as PostgREST's fuzzy set scores with Levenshtein:
 * 1 - distance / the longer length. */
static double
name_score(const char *cand, const char *name)
{
	size_t lc = strlen(cand), ln = strlen(name), d = edit_distance(cand, name);

	return lc == 0 && ln == 0 ? 1.0 : 1.0 - (double)d / (double)(lc > ln ? lc : ln);
}

/*
 * PGRST200's hint: the closest name among the tables p has a relationship with ("Perhaps
 * you meant 'x' instead of 'y'."), scored by name_score(), at least 0.33 as PostgREST's
 * fuzzy set; none for an exact name (then the hint was what did not fit) or nothing close.
 */
static void
suggest(struct rest_gen *g, int p, const char *name)
{
	struct rel rs[256];
	double best = 0.33;
	const char *pick = NULL;
	int i, nr = rels_of(g, p, NULL, rs, 256);

	for (i = 0; i < nr && i < 256; i++) {
		const char *cand = tab(g, rs[i].target)->name;
		double score = name_score(cand, name);

		if (strcmp(cand, name) == 0)
			return;
		if (score >= best && (pick == NULL || score > best)) {
			best = score;
			pick = cand;
		}
	}
	if (pick != NULL) {
		(void)snprintf(g->e->hint_buf, sizeof(g->e->hint_buf),
		    "Perhaps you meant '%s' instead of '%s'.", pick, name);
		g->e->hint = g->e->hint_buf;
	}
}

/* Finds the relationship from table p to the embed n (its name and !hint). */
static int
resolve_rel(struct rest_gen *g, int p, struct rest_node *n)
{
	struct rel hit[REL_MAX];
	int nhit;
	char d[512];

	if (strncmp(n->name, "...", 3) == 0 || strstr(n->name, "->") != NULL) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "'%.100s' in the select parameter: "
		    "this syntax is not understood here", n->name);
		return -1;
	}
	nhit = rels_of(g, p, n, hit, REL_MAX);
	if (nhit == 1) {
		const struct rel *r = &hit[0];

		n->table = r->target;
		n->fk = r->fk;
		n->fk2 = r->fk2;
		n->junction = r->junction;
		n->fk_forward = r->forward;
		n->one = r->card == REL_M2O || r->card == REL_O2O;
		return 0;
	}
	if (nhit > 1)
		return ambiguous(g, p, n, hit, nhit < REL_MAX ? nhit : REL_MAX);
	if (n->hint != NULL)
		(void)snprintf(d, sizeof(d), "Searched for a foreign key relationship between "
		    "'%s' and '%s' using the hint '%s' in the schema 'public', but no matches "
		    "were found.", tab(g, p)->name, n->name, n->hint);
	else
		(void)snprintf(d, sizeof(d), "Searched for a foreign key relationship between "
		    "'%s' and '%s' in the schema 'public', but no matches were found.",
		    tab(g, p)->name, n->name);
	rest_err_set(g->e, 400, "PGRST200", d,
	    "Could not find a relationship between '%s' and '%s' in the schema cache",
	    tab(g, p)->name, n->name);
	suggest(g, p, n->name);
	return -1;
}

/* A ::type of select= must be one of the known casts, and one this back end has. */
static int
cast_fits(struct rest_gen *g, const char *cast)
{
	enum rest_kind k;

	if (cast == NULL || g->d->cast_type(cast, &k) != NULL)
		return 0;
	if (rest_cast_known(cast))
		rest_err_set(g->e, 400, "PGRST100", NULL, "cannot cast to type \"%.60s\" on "
		    "SQLite", cast);
	else
		rest_err_set(g->e, 400, "PGRST100", NULL, "cannot cast to type \"%.60s\"", cast);
	g->e->hint = "casts: text, varchar, int, int2, int4, int8, smallint, integer, bigint, "
	    "numeric, decimal, real, float, float4, float8; on PostgreSQL also boolean, date, "
	    "timestamp, timestamptz, json, jsonb, uuid";
	return -1;
}

enum rest_kind
rest_expr_arg_kind(const struct rest_gen *g, int t, const struct rest_item *it)
{
	enum rest_kind k;

	if (it->name == NULL)
		return REST_K_INT;
	k = tab(g, t)->cols[rest_schema_col(tab(g, t), it->name)].kind;
	if (it->path != NULL)
		k = it->path->last_text ? REST_K_TEXT : REST_K_JSON;
	if (it->cast != NULL)
		(void)g->d->cast_type(it->cast, &k);
	return k;
}

/*
 * An aggregate's argument must be one PostgreSQL has the function for (the same answer
 * on SQLite, which would take anything): sum() and avg() of numbers, min() and max() of
 * anything but booleans and JSON.
 */
static int
agg_fits(struct rest_gen *g, int t, const struct rest_item *it)
{
	enum rest_kind k = rest_expr_arg_kind(g, t, it);
	int ok;

	if (it->agg == REST_AGG_SUM || it->agg == REST_AGG_AVG)
		ok = k == REST_K_INT || k == REST_K_NUM;
	else if (it->agg == REST_AGG_MIN || it->agg == REST_AGG_MAX)
		ok = k != REST_K_BOOL && k != REST_K_JSON;
	else
		ok = 1;
	if (ok)
		return 0;
	rest_err_set(g->e, 400, "42883", NULL, "function %s() does not take %s values",
	    rest_agg_names[it->agg], k == REST_K_BOOL ? "boolean" : k == REST_K_JSON ? "json" :
	    k == REST_K_TEXT ? "text" : "these");
	g->e->hint = "cast the column first, e.g. col::numeric.sum()";
	return -1;
}

/* Whether a declared type holds text (not an array of it). */
static int
type_textual(const char *type)
{
	size_t n = type != NULL ? strlen(type) : 0, i;

	if (n == 0 || type[n - 1] == ']')
		return 0;
	for (i = 0; i < n; i++)
		if (strncasecmp(type + i, "char", 4) == 0 || strncasecmp(type + i, "text", 4) == 0 ||
		    strncasecmp(type + i, "clob", 4) == 0)
			return 1;
	return 0;
}

/*
 * Whether PostgreSQL casts a value of kind src (textual: a text) to the type name dst
 * (else 42846 would fail the statement): text to anything and anything to text; numbers
 * to numbers; integer (is_int4) and boolean to each other; timestamps and dates to each
 * other; jsonb (json: only to json and jsonb) to json, numbers and booleans.  0, or -1
 * with g->e set (400 42846).
 */
static int
cast_from(struct rest_gen *g, enum rest_kind src, int textual, int is_json, int is_int4,
    const char *dst)
{
	enum rest_kind k;
	int ok;

	if (dst == NULL || g->d->cast_type(dst, &k) == NULL)
		return 0;
	if (textual || (k == REST_K_TEXT && strcmp(dst, "uuid") != 0))
		return 0;
	switch (src) {
	case REST_K_INT:
	case REST_K_NUM:
		ok = k == REST_K_INT || k == REST_K_NUM || (is_int4 && k == REST_K_BOOL);
		break;
	case REST_K_TS:
	case REST_K_DATE:
		ok = k == REST_K_TS || k == REST_K_DATE;
		break;
	case REST_K_BOOL:
		ok = k == REST_K_BOOL || !strcmp(dst, "int") || !strcmp(dst, "int4") ||
		    !strcmp(dst, "integer");
		break;
	case REST_K_JSON:
		ok = k == REST_K_JSON || (!is_json && (k == REST_K_INT || k == REST_K_NUM ||
		    k == REST_K_BOOL));
		break;
	default:
		ok = 0;
	}
	if (ok)
		return 0;
	rest_err_set(g->e, 400, "42846", NULL, "cannot cast this value to type %.60s", dst);
	g->e->hint = "text casts to any type and any type to text; numbers to numbers, "
	    "timestamps to dates, jsonb to numbers and booleans";
	return -1;
}

/* A computed item: its column, JSON path, casts and aggregate. */
static int
resolve_expr(struct rest_gen *g, int table, int depth, const struct rest_item *it)
{
	const struct rest_col *col;
	enum rest_kind k = REST_K_INT;
	int c, textual = 0, is_json = 0, is_int4 = 0;

	if (cast_fits(g, it->cast) < 0 || cast_fits(g, it->agg_cast) < 0)
		return -1;
	if (it->name != NULL) {
		if ((c = rest_schema_col(tab(g, table), it->name)) < 0)
			return no_column(g, table, depth, it->name);
		if (path_fits(g, table, c, it->path) < 0)
			return -1;
		col = &tab(g, table)->cols[c];
		k = col->kind;
		textual = type_textual(col->type);
		is_json = col->type != NULL && strcasecmp(col->type, "json") == 0;
		is_int4 = col->type != NULL && (strcasecmp(col->type, "integer") == 0 ||
		    strcasecmp(col->type, "int") == 0);
		if (it->path != NULL) {
			k = it->path->last_text ? REST_K_TEXT : REST_K_JSON;
			textual = it->path->last_text;
			is_json = is_int4 = 0;
		}
		if (cast_from(g, k, textual, is_json, is_int4, it->cast) < 0 ||
		    agg_fits(g, table, it) < 0)
			return -1;
		if (it->cast != NULL) {
			(void)g->d->cast_type(it->cast, &k);
			textual = k == REST_K_TEXT;
			is_json = strcmp(it->cast, "json") == 0;
			is_int4 = !strcmp(it->cast, "int") || !strcmp(it->cast, "int4") ||
			    !strcmp(it->cast, "integer");
		}
	}
	/* What the aggregate gives, for the cast after it (sum() of an integer is bigint). */
	if (it->agg == REST_AGG_COUNT || it->agg == REST_AGG_SUM)
		is_int4 = 0;
	if (it->agg == REST_AGG_COUNT)
		k = REST_K_INT, textual = 0;
	else if (it->agg == REST_AGG_AVG || (it->agg == REST_AGG_SUM && k != REST_K_INT))
		k = REST_K_NUM, textual = 0;
	return cast_from(g, k, textual, is_json, is_int4, it->agg_cast);
}

/* Whether column c is one the aggregating node n groups by (select.c's gen_group()). */
static int
grouped(const struct rest_gen *g, const struct rest_node *n, int c)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;

	for (i = 0; i < n->nitems; i++) {
		const struct rest_item *it = &n->items[i];

		if (it->kind == REST_I_STAR)
			return 1;
		if ((it->kind == REST_I_COL || (it->kind == REST_I_EXPR &&
		    it->agg == REST_AGG_NONE && it->name != NULL)) &&
		    rest_schema_col(t, it->name) == c)
			return 1;
	}
	return 0;
}

/*
 * An aggregating node groups by its other columns: none may be of type json (PostgreSQL
 * has no equality for it; jsonb has), and order= may only name grouped columns.
 */
static int
resolve_grouping(struct rest_gen *g, const struct rest_node *n)
{
	const struct rest_table *t = tab(g, n->table);
	size_t i;
	int c;

	for (c = 0; c < t->ncols; c++)
		if (t->cols[c].type != NULL && strcasecmp(t->cols[c].type, "json") == 0 &&
		    grouped(g, n, c)) {
			rest_err_set(g->e, 400, "42883", NULL, "cannot group by column %.80s of "
			    "type json", t->cols[c].name);
			g->e->hint = "aggregate it, or leave it out of select=";
			return -1;
		}
	for (i = 0; i < n->norder; i++)
		if (!grouped(g, n, rest_schema_col(t, n->order[i].col))) {
			rest_err_set(g->e, 400, "42803", NULL, "order= names %.80s, which is neither "
			    "selected nor aggregated", n->order[i].col);
			g->e->hint = "order by the selected columns of an aggregating select=";
			return -1;
		}
	return 0;
}

/*
 * A spread ...rel(cols), of its columns only ('*', names): a to-one relationship puts
 * them in the parent's object; a to-many one, as PostgREST 13 does, each as the array of
 * its values, though not beside aggregates (PGRST119, as PostgREST 12 answers any to-many
 * spread, and as sluice does under rest_dialect_version=12).
 */
static int
resolve_spread(struct rest_gen *g, int p, const struct rest_node *n, int aggs)
{
	size_t i;
	char d[256];

	if (!n->one && (aggs || g->pgrst12)) {
		(void)snprintf(d, sizeof(d), "'%.60s' and '%.60s' do not form a many-to-one or "
		    "one-to-one relationship", tab(g, p)->name, n->name);
		rest_err_set(g->e, 400, "PGRST119", d, "A spread operation on '%.80s' is not "
		    "possible", n->name);
		return -1;
	}
	for (i = 0; i < n->nitems; i++) {
		const struct rest_item *it = &n->items[i];

		/* col.agg() of a to-one spread in a to-one embed: the aggregate of its one
		 * row (PostgREST moves it to the parent's group, the same row). */
		if (it->kind == REST_I_EXPR && it->agg != REST_AGG_NONE && it->name != NULL &&
		    n->one && n->parent != NULL && n->parent->one && n->parent->parent != NULL)
			continue;
		if (it->kind != REST_I_STAR && it->kind != REST_I_COL) {
			rest_err_set(g->e, 400, "PGRST100", NULL, "a spread ...%.80s() holds only "
			    "columns (and, in a to-one embed, col.agg()): no embeds, casts or JSON "
			    "paths", n->name);
			return -1;
		}
	}
	return 0;
}

/*
 * Two embeds of one object under the same key: PostgreSQL's 42712, as PostgREST gets it
 * from the subqueries it names parent_key_depth.
 */
static int
dup_embeds(struct rest_gen *g, const struct rest_node *n)
{
	size_t i, j;

	for (i = 0; i < n->nitems; i++) {
		const struct rest_node *a = n->items[i].embed;

		if (n->items[i].kind != REST_I_EMBED)
			continue;
		for (j = i + 1; j < n->nitems; j++) {
			const struct rest_node *b = n->items[j].embed;

			if (n->items[j].kind == REST_I_EMBED && strcmp(a->alias, b->alias) == 0) {
				rest_err_set(g->e, 400, "42712", NULL, "table name \"%s_%s_%d\" "
				    "specified more than once", tab(g, n->table)->name, a->alias,
				    a->depth);
				return -1;
			}
		}
	}
	return 0;
}

/*
 * SQLite's grants (g->access, grants.c) for an embed: its table, and a many-to-many's
 * junction, must be readable by the request's role, as PostgreSQL's grants ask of a
 * join.  42501 as the router answers it: 401 for the anonymous role, 403 otherwise.
 */
static int
embed_allowed(struct rest_gen *g, const struct rest_node *n)
{
	const struct rest_access *ac = g->access;
	int k, ts[2] = { n->table, n->junction };

	if (ac == NULL || ac->role == NULL)
		return 0;
	for (k = 0; k < 2; k++)
		if (ts[k] >= 0 && rest_auth_may(ac->auth, ac->role, tab(g, ts[k])->name,
		    REST_PRIV_SELECT) != 1) {
			rest_err_set(g->e, ac->anon ? 401 : 403, "42501", NULL,
			    "permission denied for table %.100s", tab(g, ts[k])->name);
			return -1;
		}
	return 0;
}

int
rest_resolve(struct rest_gen *g, struct rest_node *n, int table)
{
	size_t i, members = 0;
	int aggs = 0, embeds = 0;

	n->table = table;
	for (i = 0; i < n->nitems; i++) {
		struct rest_item *it = &n->items[i];

		/* Each '*' is all the table's columns: 300 of them would be thousands. */
		members += it->kind == REST_I_STAR ? (size_t)tab(g, table)->ncols : 1;
		if (members > REST_MEMBERS_MAX) {
			rest_err_set(g->e, 400, "PGRST100", NULL, "select= asks for more than %d "
			    "columns of '%.80s'", REST_MEMBERS_MAX, n->name != NULL ? n->name :
			    tab(g, table)->name);
			return -1;
		}

		/* An embed's bare count, with no column of that name, counts its rows:
		 * PostgREST's rel(count), as rel(count()). */
		if (it->kind == REST_I_COL && n->parent != NULL && !strcmp(it->name, "count") &&
		    rest_schema_col(tab(g, table), it->name) < 0) {
			it->kind = REST_I_EXPR;
			it->agg = REST_AGG_COUNT;
			it->name = NULL;
			if (it->alias == NULL)
				it->alias = "count";
		}
		if (it->kind == REST_I_COL && rest_schema_col(tab(g, table), it->name) < 0)
			return no_column(g, table, n->depth, it->name);
		if (it->kind == REST_I_EXPR && resolve_expr(g, table, n->depth, it) < 0)
			return -1;
		aggs += it->kind == REST_I_EXPR && it->agg != REST_AGG_NONE;
		if (it->kind == REST_I_EMBED) {
			/* In a to-one embed, a to-one spread's columns group like the node's
			 * own: the group is its one row, whatever the grouping.  Elsewhere
			 * PostgREST groups by the spread's values, which sluice does not do. */
			embeds += !it->embed->spread || !n->one || n->parent == NULL;
			if (resolve_rel(g, table, it->embed) < 0 ||
			    embed_allowed(g, it->embed) < 0 ||
			    rest_resolve(g, it->embed, it->embed->table) < 0)
				return -1;
		}
	}
	for (i = 0; i < n->nitems; i++)
		if (n->items[i].kind == REST_I_EMBED && n->items[i].embed->spread &&
		    resolve_spread(g, table, n->items[i].embed, aggs) < 0)
			return -1;
	if (dup_embeds(g, n) < 0)
		return -1;
	if (aggs > 0 && embeds > 0) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "aggregates cannot be mixed with "
		    "embedded resources in one select (aggregate inside the embed, or spread "
		    "it: ...rel(cols))");
		return -1;
	}
	for (i = 0; i < n->norder; i++) {
		int c = rest_schema_col(tab(g, table), n->order[i].col);

		if (c < 0)
			return no_column(g, table, n->depth, n->order[i].col);
		if (path_fits(g, table, c, n->order[i].path) < 0)
			return -1;
	}
	if (aggs > 0 && resolve_grouping(g, n) < 0)
		return -1;
	return resolve_cond(g, table, n->depth, n->where);
}

const char *
rest_names_closest_related(const struct rest_schema *sc, const char *name)
{
	struct rest_gen g;
	struct rel one[1];
	double best = 0.33;
	const char *pick = NULL;
	int i;

	/* rels_of() with no embed reads nothing of g but its schema. */
	memset(&g, 0, sizeof(g));
	g.sc = sc;
	for (i = 0; i < sc->ntables; i++) {
		double score;

		if (sc->tables[i].hidden || rels_of(&g, i, NULL, one, 1) == 0)
			continue;
		score = name_score(sc->tables[i].name, name);
		if (score >= best && (pick == NULL || score > best)) {
			best = score;
			pick = sc->tables[i].name;
		}
	}
	return pick;
}
