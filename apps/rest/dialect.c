/*
 * dialect.c: where PostgreSQL's and SQLite's SQL differ, one struct rest_dialect per back
 * end, chosen once per connection (rest_dialect_of()).  The generators (select.c, where.c)
 * and the verbs (write.c, rpc.c) write the same statement for both and take every
 * back-end-specific piece from here: no file above this one asks which back end it has.
 *
 * What differs:
 *   JSON of a column   PostgreSQL renders every kind itself (to_json()); SQLite needs
 *                      strftime() for timestamps (ISO-8601 "T"), true/false for booleans
 *                      (stored 0/1) and json() for JSON columns.
 *   JSON of a row      PostgreSQL concatenates text; SQLite calls sluice_obj()/sluice_arr()
 *                      with a template (common/db_sqlite_json.c; select.c writes both).
 *   arrays             '[' || coalesce(string_agg(x, ','), '') || ']'  /  sluice_arr(x);
 *                      a read's top array on PostgreSQL coalesce(string_agg(x, ','), ''),
 *                      its brackets written by the worker (arr_bare_open)
 *   comparisons        SQLite compares timestamps in one spelling and booleans as 0/1.
 *   like, ilike        like/ilike with % / glob for like and like ... escape for ilike.
 *   in.(...)           = any($k::type[]) over an array literal / in json_each($k).
 *   JSON paths         "c" -> $1::text ->> $2::text / "c" -> $1 with $1 = '$."key"'
 *                      (->> cast to text, as PostgreSQL's ->> gives text).
 *   isdistinct         is distinct from / is not.
 *   casts              (x)::type / cast(x as TYPE), from one whitelist of type names.
 *   match, fts, arrays ~ ~* @@ @> <@ && << >> &< &> -|- on PostgreSQL; SQLite:
 *   and ranges         sluice_regexp() (PCRE2), an FTS5 table's MATCH (fts.c writes the
 *                      query), sluice_contains() and its kin; else a 400 naming the
 *                      operator (lite_op()).
 *   offset alone       SQLite needs "limit -1" before it.
 *   CSV                strpos/instr, chr/char, string_agg/group_concat, ::text casts.
 *   writes             PostgreSQL: a CTE _w and one row (body, count) over it; SQLite:
 *                      RETURNING one object per row, in a transaction; the body's values
 *                      by jsonb operators / json_extract().
 *   functions          "fn"("a" => $1::type) / the function's SELECT as a subquery.
 *   the schema         the catalogs (pg_class, pg_attribute, pg_constraint, pg_proc) /
 *                      sqlite_master, its pragmas and sluice_functions; type names.
 */
#include <stdio.h>
#include <string.h>
#include <strings.h>

#include "arena.h"
#include "json.h"
#include "rest.h"
#include "str.h"

static const char schema_pg_cols[] =
    "select c.relname, c.relkind::text, a.attname, format_type(a.atttypid, null), "
    "a.attnotnull::int, coalesce(pg_get_expr(d.adbin, d.adrelid), case when a.attidentity "
    "<> '' then format('nextval(%L::regclass)', pg_get_serial_sequence("
    "format('%I.%I', n.nspname, c.relname), a.attname)) end, ''), "
    "coalesce((select k.n from pg_index i cross join unnest(i.indkey) with ordinality "
    "k(att, n) where i.indrelid = c.oid and i.indisprimary and k.att = a.attnum), 0) "
    "from pg_class c join pg_namespace n on n.oid = c.relnamespace "
    "join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped "
    "left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum "
    "where n.nspname = $1 and c.relkind in ('r', 'v', 'm', 'p', 'f') "
    "order by c.relname, a.attnum";

static const char schema_pg_fks[] =
    "select co.conname, c1.relname, c2.relname, a1.attname, a2.attname "
    "from pg_constraint co join pg_class c1 on c1.oid = co.conrelid "
    "join pg_class c2 on c2.oid = co.confrelid "
    "join pg_namespace n on n.oid = c1.relnamespace "
    "cross join unnest(co.conkey, co.confkey) with ordinality as k(a, b, i) "
    "join pg_attribute a1 on a1.attrelid = co.conrelid and a1.attnum = k.a "
    "join pg_attribute a2 on a2.attrelid = co.confrelid and a2.attnum = k.b "
    "where co.contype = 'f' and n.nspname = $1 "
    "order by c1.relname, co.conname, k.i";

/* Primary keys and unique constraints (not unique indexes, as PostgREST), per column. */
static const char schema_pg_uniques[] =
    "select c.relname, co.conname, a.attname "
    "from pg_constraint co join pg_class c on c.oid = co.conrelid "
    "join pg_namespace n on n.oid = c.relnamespace "
    "cross join unnest(co.conkey) with ordinality as k(a, i) "
    "join pg_attribute a on a.attrelid = co.conrelid and a.attnum = k.a "
    "where co.contype in ('p', 'u') and n.nspname = $1 "
    "order by c.relname, co.conname, k.i";

/*
 * The columns of views that show a base table's column as it is: each target entry of
 * the view's query (pg_rewrite's _RETURN rule, in the node text) carries the table and
 * column it comes from (resorigtbl, resorigcol), as PostgREST reads them.  The entry's
 * name must be the view's column, so that the entries of subqueries are left out.
 */
static const char schema_pg_view_cols[] =
    "select v.relname, va.attname, b.relname, ba.attname "
    "from pg_class v join pg_namespace n on n.oid = v.relnamespace "
    "join pg_rewrite r on r.ev_class = v.oid and r.rulename = '_RETURN' "
    "cross join lateral regexp_matches(r.ev_action::text, ':resno (\\d+) :resname (\\S+) "
    ":ressortgroupref \\d+ :resorigtbl (\\d+) :resorigcol (\\d+)', 'g') m "
    "join pg_attribute va on va.attrelid = v.oid and va.attnum = m[1]::int "
    "and va.attname = m[2] "
    "join pg_class b on b.oid = m[3]::oid "
    "join pg_namespace bn on bn.oid = b.relnamespace and bn.nspname = $1 "
    "join pg_attribute ba on ba.attrelid = b.oid and ba.attnum = m[4]::int "
    "where n.nspname = $1 and v.relkind = 'v' "
    "order by v.relname, va.attnum";

/* IN arguments as "name<US>type<US>..." so that no character of a type name splits them
 * (INOUT and VARIADIC ones count as IN); no body; how many of the last arguments have
 * defaults; void or not; and for a function returning an anonymous record (RETURNS
 * TABLE(...), OUT parameters) its columns, in the arguments' format; volatile or not. */
static const char schema_pg_funcs[] =
    "select p.proname, coalesce((select string_agg(coalesce(p.proargnames[u.i], '') || "
    "chr(31) || format_type(u.t, null), chr(31) order by u.i) "
    "from unnest(coalesce(p.proallargtypes, p.proargtypes::oid[])) with ordinality u(t, i) "
    "where coalesce(p.proargmodes[u.i], 'i') in ('i', 'b', 'v')), ''), "
    "p.proretset::int, coalesce((select c.relname from pg_type t join pg_class c "
    "on c.oid = t.typrelid where t.oid = p.prorettype), ''), null::text, "
    "p.pronargdefaults::int, (p.prorettype = 'void'::regtype)::int, "
    "case when p.prorettype = 'record'::regtype then coalesce((select "
    "string_agg(coalesce(p.proargnames[u.i], '') || chr(31) || format_type(u.t, null), "
    "chr(31) order by u.i) from unnest(p.proallargtypes) with ordinality u(t, i) "
    "where p.proargmodes[u.i] in ('o', 'b', 't')), '') else '' end, "
    "format_type(p.prorettype, null), (p.provolatile = 'v')::int "
    "from pg_proc p join pg_namespace n on n.oid = p.pronamespace "
    "where n.nspname = $1 and p.prokind = 'f' "
    "and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype) "
    "order by p.proname, p.oid";

/* Comments (COMMENT ON TABLE, VIEW, COLUMN, FUNCTION) of the schema's relations, their
 * columns and its functions, for the OpenAPI document (openapi.c). */
/* PostGIS's ST_AsGeoJSON(record), in whichever schema the extension was created. */
static const char schema_pg_geojson[] =
    "select quote_ident(n.nspname) || '.st_asgeojson' from pg_proc p "
    "join pg_namespace n on n.oid = p.pronamespace "
    "where p.proname = 'st_asgeojson' and p.proargtypes[0] = 'record'::regtype "
    "order by n.nspname limit 1";

static const char schema_pg_comments[] =
    "select 'r', c.relname, coalesce(a.attname, ''), d.description "
    "from pg_description d join pg_class c on c.oid = d.objoid "
    "join pg_namespace n on n.oid = c.relnamespace "
    "left join pg_attribute a on a.attrelid = c.oid and a.attnum = d.objsubid "
    "and d.objsubid > 0 and not a.attisdropped "
    "where d.classoid = 'pg_class'::regclass and n.nspname = $1 "
    "and (d.objsubid = 0 or a.attname is not null) "
    "union all select 'f', p.proname, '', d.description "
    "from pg_description d join pg_proc p on p.oid = d.objoid "
    "join pg_namespace n on n.oid = p.pronamespace "
    "where d.classoid = 'pg_proc'::regclass and n.nspname = $1 "
    "order by 1, 2, 3";

/*
 * What the request's role (the transaction's, rest_auth_enter()) may do with each
 * relation and function of the schema, for the OpenAPI document: as PostgREST, a table's
 * privilege or one on any of its columns counts; nothing without USAGE on the schema.
 */
static const char schema_pg_privs[] =
    "select 'r', c.relname, "
    "(has_table_privilege(c.oid, 'select') or has_any_column_privilege(c.oid, 'select'))"
    "::int, (has_table_privilege(c.oid, 'insert') or "
    "has_any_column_privilege(c.oid, 'insert'))::int, "
    "(has_table_privilege(c.oid, 'update') or has_any_column_privilege(c.oid, 'update'))"
    "::int, has_table_privilege(c.oid, 'delete')::int "
    "from pg_class c join pg_namespace n on n.oid = c.relnamespace "
    "where n.nspname = $1 and c.relkind in ('r', 'v', 'm', 'p', 'f') "
    "and has_schema_privilege(n.oid, 'usage') "
    "union all select 'f', p.proname, bool_or(has_function_privilege(p.oid, 'execute'))"
    "::int, 0, 0, 0 from pg_proc p join pg_namespace n on n.oid = p.pronamespace "
    "where n.nspname = $1 and p.prokind = 'f' and has_schema_privilege(n.oid, 'usage') "
    "group by p.proname";

/* An FTS5 table's kind is 'x' (schema.c hides it; lite_fts() searches it); the tables
 * FTS5 keeps its index in (NAME_data, _idx, _content, _docsize, _config) are left out. */
static const char schema_lite_cols[] =
    "select m.name, case when m.sql like 'create virtual table%using fts5%' then 'x' "
    "else m.type end, p.name, p.type, p.\"notnull\", coalesce(p.dflt_value, ''), p.pk "
    "from sqlite_master m join pragma_table_info(m.name) p "
    "where m.type in ('table', 'view') and m.name not like 'sqlite_%' "
    "and not exists (select 1 from sqlite_master v where v.type = 'table' "
    "and v.sql like 'create virtual table%using fts5%' and m.name in (v.name || '_data', "
    "v.name || '_idx', v.name || '_content', v.name || '_docsize', v.name || '_config')) "
    "order by m.name, p.cid";

static const char schema_lite_fks[] =
    "select 'fk_' || m.name || '_' || f.id, m.name, f.\"table\", f.\"from\", "
    "coalesce(f.\"to\", '') from sqlite_master m join pragma_foreign_key_list(m.name) f "
    "where m.type = 'table' order by m.name, f.id, f.seq";

/* Primary keys (but an INTEGER PRIMARY KEY, which is the rowid: the columns' pk tells
 * it) and UNIQUE constraints, per column. */
static const char schema_lite_uniques[] =
    "select m.name, l.name, i.name from sqlite_master m join pragma_index_list(m.name) l "
    "join pragma_index_info(l.name) i "
    "where m.type = 'table' and l.\"unique\" = 1 and l.origin in ('u', 'pk') "
    "order by m.name, l.name, i.seqno";

/* The tables' DDL: SQLite keeps foreign keys' names only there. */
static const char schema_lite_ddl[] =
    "select name, sql from sqlite_master where type = 'table' and sql is not null "
    "order by name";

/* SQLite has no COMMENT: the optional table sluice_comments(name, column_name,
 * description) holds them (docs/postgrest.md); a name is a table's, a view's or a
 * function's, a column_name NULL or '' the relation's own. */
static const char schema_lite_comments[] =
    "select '', name, coalesce(column_name, ''), description from sluice_comments "
    "where name is not null and description is not null order by 2, 3";

/* returns: "setof album", "album", "table(a text, b integer)" (rows of those columns, as
 * PostgreSQL's RETURNS TABLE), "void" (204, no body) or a scalar type name; a body is
 * never NULL.  A body is one SELECT, or one INSERT, UPDATE or DELETE ... RETURNING that
 * rpc.c runs on its own (schema.c marks it). */
static const char schema_lite_funcs[] =
    "select name, args, lower(substr(returns, 1, 6)) = 'setof ' or t, "
    "case when lower(substr(returns, 1, 6)) = 'setof ' then ltrim(substr(returns, 7)) "
    "when t then '' else returns end, coalesce(body, ''), 0, lower(returns) = 'void', "
    "case when t then trim(substr(returns, instr(returns, '(') + 1, "
    "length(returns) - instr(returns, '(') - 1)) else '' end, '', 0 "
    "from (select *, (lower(returns) like 'table(%)' or lower(returns) like 'table (%)') t "
    "from sluice_functions) order by name";

/* Case-insensitive substring test for declared types. */
static int
type_has(const char *type, const char *word)
{
	size_t n = strlen(word), i;

	for (i = 0; type[i] != '\0'; i++)
		if (strncasecmp(type + i, word, n) == 0)
			return 1;
	return 0;
}

/* What a column or argument of this declared type holds: PostgreSQL's type names. */
static enum rest_kind
pg_kind_of(const char *type)
{
	if (!strcmp(type, "integer") || !strcmp(type, "bigint") || !strcmp(type, "smallint"))
		return REST_K_INT;
	if (!strcmp(type, "numeric") || !strcmp(type, "real") ||
	    !strcmp(type, "double precision"))
		return REST_K_NUM;
	if (!strcmp(type, "boolean"))
		return REST_K_BOOL;
	if (!strncmp(type, "timestamp", 9))
		return REST_K_TS;
	if (!strcmp(type, "date"))
		return REST_K_DATE;
	if (!strcmp(type, "json") || !strcmp(type, "jsonb"))
		return REST_K_JSON;
	return REST_K_TEXT;
}

/* SQLite's affinity rules, plus the names that carry a rendering. */
static enum rest_kind
lite_kind_of(const char *type)
{
	/* int4range and int8range hold PostgreSQL's range text ([1,5)), not integers. */
	if (type_has(type, "RANGE"))
		return REST_K_TEXT;
	if (type_has(type, "INT"))
		return REST_K_INT;
	if (type_has(type, "BOOL"))
		return REST_K_BOOL;
	if (type_has(type, "TIMESTAMP") || type_has(type, "DATETIME"))
		return REST_K_TS;
	if (type_has(type, "DATE"))
		return REST_K_DATE;
	if (type_has(type, "JSON"))
		return REST_K_JSON;
	if (type_has(type, "CHAR") || type_has(type, "CLOB") || type_has(type, "TEXT"))
		return REST_K_TEXT;
	if (type_has(type, "REAL") || type_has(type, "FLOA") || type_has(type, "DOUB") ||
	    type_has(type, "NUMERIC") || type_has(type, "DECIMAL"))
		return REST_K_NUM;
	return REST_K_TEXT;
}

/* The column as its JSON value should look: PostgreSQL renders every kind itself. */
static void
pg_col_value(struct buf *b, const char *alias, const struct rest_col *c)
{
	sqlb_col(b, alias, c->name);
}

/* SQLite needs help for some kinds. */
static void
lite_col_value(struct buf *b, const char *alias, const struct rest_col *c)
{
	switch (c->kind) {
	case REST_K_TS:
		buf_puts(b, "strftime('%Y-%m-%dT%H:%M:%S', ");
		sqlb_col(b, alias, c->name);
		buf_putc(b, ')');
		break;
	case REST_K_BOOL:
		buf_puts(b, "json(case when ");
		sqlb_col(b, alias, c->name);
		buf_puts(b, " is null then null when ");
		sqlb_col(b, alias, c->name);
		buf_puts(b, " then 'true' else 'false' end)");
		break;
	case REST_K_JSON:
		buf_puts(b, "json(");
		sqlb_col(b, alias, c->name);
		buf_putc(b, ')');
		break;
	default:
		sqlb_col(b, alias, c->name);
	}
}

/*
 * The column as JSON text, 'null' for NULL.  PostgreSQL: an integer's text is its JSON;
 * to_json() renders everything else as row_to_json() would (numbers bare unless NaN or
 * infinite, timestamps ISO-8601, text escaped).  SQLite: json_quote() renders numbers
 * bare (an infinity as null), text quoted.
 */
static void
pg_col_text(struct buf *b, const char *alias, const struct rest_col *c)
{
	buf_puts(b, c->kind == REST_K_INT ? "coalesce(" : "coalesce(to_json(");
	sqlb_col(b, alias, c->name);
	buf_puts(b, c->kind == REST_K_INT ? "::text, 'null')" : ")::text, 'null')");
}

static void
lite_col_text(struct buf *b, const char *alias, const struct rest_col *c)
{
	switch (c->kind) {
	case REST_K_TS:
		buf_puts(b, "json_quote(strftime('%Y-%m-%dT%H:%M:%S', ");
		sqlb_col(b, alias, c->name);
		buf_puts(b, "))");
		break;
	case REST_K_BOOL:
		buf_puts(b, "case when ");
		sqlb_col(b, alias, c->name);
		buf_puts(b, " is null then 'null' when ");
		sqlb_col(b, alias, c->name);
		buf_puts(b, " then 'true' else 'false' end");
		break;
	case REST_K_JSON:
		buf_puts(b, "coalesce(");
		sqlb_col(b, alias, c->name);
		buf_puts(b, ", 'null')");
		break;
	case REST_K_NUM:
		/* json_quote() writes an infinity as Inf, which is no JSON: null instead, as
		 * sluice_obj() does (9e999 is SQLite's infinity). */
		buf_puts(b, "case when abs(");
		sqlb_col(b, alias, c->name);
		buf_puts(b, ") = 9e999 then 'null' else json_quote(");
		sqlb_col(b, alias, c->name);
		buf_puts(b, ") end");
		break;
	default:
		buf_puts(b, "json_quote(");
		sqlb_col(b, alias, c->name);
		buf_putc(b, ')');
	}
}

/* Whether key is an array index (all digits, at most 9 of them). */
static int
path_index(const char *key)
{
	size_t i;

	for (i = 0; key[i] != '\0'; i++)
		if (key[i] < '0' || key[i] > '9' || i == 9)
			return 0;
	return i > 0;
}

/* PostgreSQL: ("c" -> $1::text -> $2::int ->> $3::text), every key bound. */
static int
pg_path(struct rest_gen *g, const struct rest_lhs *l)
{
	size_t i;
	int k;

	buf_putc(g->sql, '(');
	sqlb_col(g->sql, l->alias, l->c->name);
	for (i = 0; i < l->path->nkeys; i++) {
		int idx = path_index(l->path->keys[i]);

		if (idx) {
			int64_t v = 0;

			(void)str_to_int(l->path->keys[i], strlen(l->path->keys[i]), 0, INT32_MAX,
			    &v);
			k = rest_param_int(g, v);
		} else
			k = rest_param_text(g, l->path->keys[i], strlen(l->path->keys[i]));
		if (k < 0)
			return -1;
		buf_puts(g->sql, i + 1 == l->path->nkeys && l->path->last_text ? " ->> " : " -> ");
		sqlb_param(g->sql, k);
		buf_puts(g->sql, idx ? "::int" : "::text");
	}
	buf_putc(g->sql, ')');
	return 0;
}

/* A -> path, and a json column, compare as jsonb (json has no equality); ->> is text. */
static int
pg_lhs(struct rest_gen *g, const struct rest_lhs *l)
{
	if (l->path == NULL) {
		sqlb_col(g->sql, l->alias, l->c->name);
		if (strcmp(l->c->type, "json") == 0)
			buf_puts(g->sql, "::jsonb");
		return 0;
	}
	if (pg_path(g, l) < 0)
		return -1;
	if (!l->path->last_text)
		buf_puts(g->sql, "::jsonb");
	return 0;
}

/*
 * SQLite: ("c" -> $1 -> $2), each key bound as the path $."key" (a bare label would be
 * read as a path when it starts with '$', and split at dots) or an index as an integer;
 * ->> is cast to text, as PostgreSQL's ->> gives text.  A key holding '"' has no SQLite
 * path: 400.
 */
static int
lite_path(struct rest_gen *g, const struct rest_lhs *l)
{
	size_t i;
	int k;

	if (l->path->last_text)
		buf_puts(g->sql, "cast(");
	buf_putc(g->sql, '(');
	sqlb_col(g->sql, l->alias, l->c->name);
	for (i = 0; i < l->path->nkeys; i++) {
		const char *key = l->path->keys[i];

		if (path_index(key)) {
			int64_t v = 0;

			(void)str_to_int(key, strlen(key), 0, INT32_MAX, &v);
			k = rest_param_int(g, v);
		} else {
			size_t n = strlen(key);
			char *p;

			if (strchr(key, '"') != NULL) {
				rest_err_set(g->e, 400, "PGRST100", NULL, "a JSON key with a double "
				    "quote is not supported on SQLite");
				return -1;
			}
			if ((p = arena_alloc(g->a, n + 5)) == NULL) {
				rest_err_set(g->e, 400, "PGRST100", NULL, "the request is too complex");
				return -1;
			}
			(void)snprintf(p, n + 5, "$.\"%s\"", key);
			k = rest_param_text(g, p, n + 4);
		}
		if (k < 0)
			return -1;
		buf_puts(g->sql, i + 1 == l->path->nkeys && l->path->last_text ? " ->> " : " -> ");
		sqlb_param(g->sql, k);
	}
	buf_putc(g->sql, ')');
	if (l->path->last_text)
		buf_puts(g->sql, " as text)");
	return 0;
}

static int
lite_lhs(struct rest_gen *g, const struct rest_lhs *l)
{
	if (l->path == NULL) {
		sqlb_col(g->sql, l->alias, l->c->name);
		return 0;
	}
	return lite_path(g, l);
}

/* lhs op $k, with v bound and the left side written by lhs. */
static int
cmp_with(struct rest_gen *g, const struct rest_lhs *l, const char *op, const char *v,
    size_t len, int (*lhs)(struct rest_gen *, const struct rest_lhs *))
{
	int k;

	if ((k = rest_param_text(g, v, len)) < 0 || lhs(g, l) < 0)
		return -1;
	buf_putc(g->sql, ' ');
	buf_puts(g->sql, op);
	buf_putc(g->sql, ' ');
	sqlb_param(g->sql, k);
	return 0;
}

static int
pg_cmp(struct rest_gen *g, const struct rest_lhs *l, const char *op, const char *v,
    size_t len)
{
	return cmp_with(g, l, op, v, len, pg_lhs);
}

static int
lite_cmp(struct rest_gen *g, const struct rest_lhs *l, const char *op, const char *v,
    size_t len)
{
	const struct rest_col *c = l->c;
	int k;

	if (l->path != NULL)
		return cmp_with(g, l, op, v, len, lite_lhs);
	if (c->kind == REST_K_BOOL && str_eq(v, len, "true"))
		v = "1", len = 1;
	else if (c->kind == REST_K_BOOL && str_eq(v, len, "false"))
		v = "0", len = 1;
	if (c->kind != REST_K_TS)
		return cmp_with(g, l, op, v, len, lite_lhs);
	if ((k = rest_param_text(g, v, len)) < 0)
		return -1;
	/* Text timestamps compare in one spelling ("T" or " ", seconds or not), as
	 * PostgreSQL compares the values. */
	buf_puts(g->sql, "strftime('%Y-%m-%dT%H:%M:%S', ");
	sqlb_col(g->sql, l->alias, c->name);
	buf_printf(g->sql, ") %s strftime('%%Y-%%m-%%dT%%H:%%M:%%S', $%d)", op, k);
	return 0;
}

static int
pg_like(struct rest_gen *g, const struct rest_lhs *l, int ilike, const char *v, size_t len)
{
	int k;

	if ((v = rest_like_pattern(g->a, v, len)) == NULL ||
	    (k = rest_param_text(g, v, len)) < 0 || pg_lhs(g, l) < 0)
		return -1;
	buf_printf(g->sql, "::text %s $%d", ilike ? g->d->sqlb->like : "like", k);
	return 0;
}

/* PostgREST's like pattern ('*' = '%') as a case-sensitive SQLite GLOB pattern. */
static char *
lite_glob(struct arena *a, const char *v, size_t len, size_t *outlen)
{
	char *o = arena_alloc(a, 3 * len + 1);
	size_t i, n = 0;

	if (o == NULL)
		return NULL;
	for (i = 0; i < len; i++) {
		char ch = v[i];

		if (ch == '\\' && i + 1 < len) {
			ch = v[++i];
			if (ch == '*' || ch == '?' || ch == '[') {
				o[n++] = '[';
				o[n++] = ch;
				o[n++] = ']';
			} else
				o[n++] = ch;
		} else if (ch == '*' || ch == '%')
			o[n++] = '*';
		else if (ch == '_')
			o[n++] = '?';
		else if (ch == '?' || ch == '[') {
			o[n++] = '[';
			o[n++] = ch;
			o[n++] = ']';
		} else
			o[n++] = ch;
	}
	o[n] = '\0';
	*outlen = n;
	return o;
}

static int
lite_like(struct rest_gen *g, const struct rest_lhs *l, int ilike, const char *v, size_t len)
{
	size_t n;
	int k;

	if (!ilike) {
		if ((v = lite_glob(g->a, v, len, &n)) == NULL ||
		    (k = rest_param_text(g, v, n)) < 0 || lite_lhs(g, l) < 0)
			return -1;
		buf_printf(g->sql, " glob $%d", k);
		return 0;
	}
	if ((v = rest_like_pattern(g->a, v, len)) == NULL ||
	    (k = rest_param_text(g, v, len)) < 0 || lite_lhs(g, l) < 0)
		return -1;
	buf_printf(g->sql, " %s $%d escape '\\'", g->d->sqlb->like, k);
	return 0;
}

/* Copies b into the arena (NULL when b failed or the arena is full). */
static char *
buf_to_arena(struct arena *a, struct buf *b, size_t *len)
{
	char *out = NULL;

	if (!buf_failed(b)) {
		out = arena_strndup(a, b->data, b->len);
		*len = b->len;
	}
	buf_free(b);
	return out;
}

/* A PostgreSQL array literal {"a","b"} of the in-list, for = any($k::type[]). */
static int
pg_in(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond)
{
	struct buf b;
	size_t i, j, len = 0;
	char *v;
	int k;

	buf_init(&b, REST_SQL_MAX);
	buf_putc(&b, '{');
	for (i = 0; i < cond->nlist; i++) {
		if (i)
			buf_putc(&b, ',');
		buf_putc(&b, '"');
		for (j = 0; j < cond->listlen[i]; j++) {
			if (cond->list[i][j] == '"' || cond->list[i][j] == '\\')
				buf_putc(&b, '\\');
			buf_putc(&b, cond->list[i][j]);
		}
		buf_putc(&b, '"');
	}
	buf_putc(&b, '}');
	if ((v = buf_to_arena(g->a, &b, &len)) == NULL || (k = rest_param_text(g, v, len)) < 0 ||
	    pg_lhs(g, l) < 0)
		return -1;
	buf_printf(g->sql, " = any($%d::%s[])", k, l->path == NULL ?
	    (strcmp(l->c->type, "json") == 0 ? "jsonb" : l->c->type) :
	    l->path->last_text ? "text" : "jsonb");
	return 0;
}

/* The in-list as a JSON array of strings (booleans as 0/1), for SQLite's json_each(). */
static int
lite_in(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond)
{
	struct buf b;
	size_t i, len = 0;
	int boolcol = l->path == NULL && l->c->kind == REST_K_BOOL, k;
	char *v;

	buf_init(&b, REST_SQL_MAX);
	buf_putc(&b, '[');
	for (i = 0; i < cond->nlist; i++) {
		if (i)
			buf_putc(&b, ',');
		if (boolcol && str_eq(cond->list[i], cond->listlen[i], "true"))
			buf_puts(&b, "1");
		else if (boolcol && str_eq(cond->list[i], cond->listlen[i], "false"))
			buf_puts(&b, "0");
		else
			json_escape(&b, cond->list[i], cond->listlen[i]);
	}
	buf_putc(&b, ']');
	if ((v = buf_to_arena(g->a, &b, &len)) == NULL || (k = rest_param_text(g, v, len)) < 0 ||
	    lite_lhs(g, l) < 0)
		return -1;
	buf_printf(g->sql, " in (select value from json_each($%d))", k);
	return 0;
}

/* The value of column c from the JSON row src (PostgreSQL: jsonb).  With missing_default
 * the default is evaluated for every row, key or not, as PostgREST does: an identity or
 * serial column's sequence advances once per row.  JSON null is SQL NULL in a JSON column
 * too, as json_populate_recordset() makes it. */
static void
pg_json_value(struct buf *b, const struct rest_col *c, const char *src, int missing_default)
{
	if (missing_default && c->dflt != NULL) {
		buf_printf(b, "(select case when %s ? ", src);
		sqlb_literal(b, c->name);
		buf_puts(b, " then ");
	}
	if (c->kind == REST_K_JSON) {
		buf_printf(b, "nullif(%s->", src);
		sqlb_literal(b, c->name);
		buf_printf(b, ", 'null'::jsonb)::%s", c->type);
	} else {
		buf_printf(b, "(%s->>", src);
		sqlb_literal(b, c->name);
		buf_printf(b, ")::%s", c->type);
	}
	if (missing_default && c->dflt != NULL)
		buf_printf(b, " else _dv end from (select %s as _dv) _dt)", c->dflt);
}

/* src SEP '$."name"' (the column name is plain: write.c checks it). */
static void
lite_json_path(struct buf *b, const char *src, const char *sep, const char *name)
{
	buf_puts(b, src);
	buf_puts(b, sep);
	buf_puts(b, "'$.\"");
	buf_puts(b, name);
	buf_puts(b, "\"'");
}

/* fn(src, '$."name"'): a JSON function of column name's key. */
static void
lite_json_key(struct buf *b, const char *fn, const char *src, const char *name)
{
	buf_puts(b, fn);
	buf_putc(b, '(');
	lite_json_path(b, src, ", ", name);
	buf_putc(b, ')');
}

/* nullif(src -> '$."name"', 'null'): the JSON text of column name's key, JSON null as SQL
 * NULL (a JSON column's value, where json_extract() would give a string unquoted and true
 * as 1). */
static void
lite_json_text(struct buf *b, const char *src, const char *name)
{
	buf_puts(b, "nullif(");
	lite_json_path(b, src, " -> ", name);
	buf_puts(b, ", 'null')");
}

/*
 * SQLite: a column's value from a write's body, by JSON path (the column name is plain:
 * write.c checks it) or bound as a parameter of its own.  A timestamp or date
 * also takes PostgreSQL's special inputs 'now', 'today', 'tomorrow', 'yesterday' and
 * 'epoch' (any case, blanks around), turned into the UTC time they name here: SQLite's own
 * strftime() reads only 'now', and not in a CHECK constraint (a non-deterministic call
 * there is an error, not a failed check).  'infinity' is left alone: SQLite has no such
 * time, so the column's CHECK refuses it (400).
 *
 * struct lite_val is such a value: json_extract(src, '$."name"') (a JSON column's: its
 * JSON text, lite_json_text()), or the parameter $k when src is NULL (never a JSON
 * column's: write.c).
 */
struct lite_val {
	const char *src, *name;
	int k;
};

static void
lite_val_put(struct buf *b, const struct rest_col *c, const struct lite_val *v)
{
	if (v->src == NULL) {
		buf_putc(b, '$');
		buf_put_int(b, v->k);
	} else if (c->kind == REST_K_JSON)
		lite_json_text(b, v->src, v->name);
	else
		lite_json_key(b, "json_extract", v->src, v->name);
}

/* v as column c's value, for a timestamp or date inside the CASE of the special inputs.
 * Pieces, not buf_printf(): this runs for every column of every write. */
static void
lite_val_column(struct buf *b, const struct rest_col *c, const struct lite_val *v)
{
	/* The special inputs, and strftime()'s arguments after the format for each. */
	static const char *const special[][2] = {
		{ "now", "'now'" },
		{ "today", "'now', 'start of day'" },
		{ "tomorrow", "'now', 'start of day', '+1 day'" },
		{ "yesterday", "'now', 'start of day', '-1 day'" },
		{ "epoch", "0, 'unixepoch'" },
	};
	const char *fmt = c->kind == REST_K_DATE ? "%Y-%m-%d" : "%Y-%m-%dT%H:%M:%S";
	size_t i;

	if (c->kind != REST_K_TS && c->kind != REST_K_DATE) {
		lite_val_put(b, c, v);
		return;
	}
	buf_puts(b, "case lower(trim(");
	lite_val_put(b, c, v);
	buf_puts(b, "))");
	for (i = 0; i < sizeof(special) / sizeof(special[0]); i++) {
		buf_puts(b, " when '");
		buf_puts(b, special[i][0]);
		buf_puts(b, "' then strftime('");
		buf_puts(b, fmt);
		buf_puts(b, "', ");
		buf_puts(b, special[i][1]);
		buf_putc(b, ')');
	}
	buf_puts(b, " else ");
	lite_val_put(b, c, v);
	buf_puts(b, " end");
}

static void
lite_json_value(struct buf *b, const struct rest_col *c, const char *src, int missing_default)
{
	const struct lite_val v = { src, c->name, 0 };

	if (missing_default && c->dflt != NULL) {
		buf_puts(b, "case when ");
		lite_json_key(b, "json_type", src, c->name);
		buf_puts(b, " is null then (");
		buf_puts(b, c->dflt);
		buf_puts(b, ") else ");
	}
	lite_val_column(b, c, &v);
	if (missing_default && c->dflt != NULL)
		buf_puts(b, " end");
}

/* The same for a string bound as $k (the key is there: no default applies). */
static void
lite_bound_value(struct buf *b, const struct rest_col *c, int k)
{
	const struct lite_val v = { NULL, NULL, k };

	lite_val_column(b, c, &v);
}

/* PostgreSQL: one row, (body, count). */
static int
pg_write_read(struct db_stmt *st, int rep, struct buf *out, int64_t *rows)
{
	const char *body;
	size_t len;

	if (db_step(st) != DB_ROW)
		return -1;
	*rows = db_column_int(st, 1);
	if (rep && (body = db_column_text(st, 0, &len)) != NULL)
		buf_append(out, body, len);
	db_reset(st);
	return 0;
}

/* SQLite: one object per written row (representation), or nothing. */
static int
lite_write_read(struct db_stmt *st, int rep, struct buf *out, int64_t *rows)
{
	int rc;

	*rows = 0;
	if (rep)
		buf_putc(out, '[');
	while ((rc = db_step(st)) == DB_ROW) {
		const char *row;
		size_t len;

		if (rep) {
			if (*rows)
				buf_putc(out, ',');
			if ((row = db_column_text(st, 0, &len)) != NULL)
				buf_append(out, row, len);
		}
		(*rows)++;
	}
	if (rc != DB_DONE)
		return -1;
	if (!rep)
		*rows = db_changes(st);
	if (rep)
		buf_putc(out, ']');
	return 0;
}

static void
pg_call(struct buf *b, const struct rest_func *f, const unsigned char *given)
{
	int i, k = 0;

	sqlb_ident(b, f->name);
	buf_putc(b, '(');
	for (i = 0; i < f->nargs; i++) {
		if (given != NULL && !given[i])
			continue;
		if (k)
			buf_puts(b, ", ");
		sqlb_ident(b, f->argnames[i]);
		buf_printf(b, " => $%d::%s", ++k, f->argtypes[i]);
	}
	buf_putc(b, ')');
}

/* SQLite's bodies name every argument: each is bound, given or its default (rpc.c). */
static void
lite_call(struct buf *b, const struct rest_func *f, const unsigned char *given)
{
	(void)given;
	buf_printf(b, "(%s)", f->body);
}

/* The operators of PostgreSQL's own types, by enum rest_op; NULL for the others. */
static const char *const pg_ops[REST_OP__MAX] = {
	[REST_OP_MATCH] = "~", [REST_OP_IMATCH] = "~*",
	[REST_OP_FTS] = "to_tsquery", [REST_OP_PLFTS] = "plainto_tsquery",
	[REST_OP_PHFTS] = "phraseto_tsquery", [REST_OP_WFTS] = "websearch_to_tsquery",
	[REST_OP_CS] = "@>", [REST_OP_CD] = "<@", [REST_OP_OV] = "&&",
	[REST_OP_SL] = "<<", [REST_OP_SR] = ">>", [REST_OP_NXL] = "&>", [REST_OP_NXR] = "&<",
	[REST_OP_ADJ] = "-|-",
};

/* The operators' names in the URL, for errors. */
static const char *const op_names[REST_OP__MAX] = {
	[REST_OP_MATCH] = "match", [REST_OP_IMATCH] = "imatch", [REST_OP_FTS] = "fts",
	[REST_OP_PLFTS] = "plfts", [REST_OP_PHFTS] = "phfts", [REST_OP_WFTS] = "wfts",
	[REST_OP_CS] = "cs", [REST_OP_CD] = "cd", [REST_OP_OV] = "ov", [REST_OP_SL] = "sl",
	[REST_OP_SR] = "sr", [REST_OP_NXL] = "nxl", [REST_OP_NXR] = "nxr", [REST_OP_ADJ] = "adj",
};

/*
 * Whether PostgreSQL has cond's operator for l's type (else the statement would fail with
 * 42883 after the request was accepted): text search needs text or a tsvector; cs and cd
 * an array, a range or jsonb (a -> path); ov an array or a range; the others a range.
 * 0, or -1 with g->e set (400 42883).
 */
static int
pg_op_fits(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond)
{
	const char *t = l->path == NULL ? l->c->type : l->path->last_text ? "text" : "jsonb";
	size_t n = strlen(t);
	int array = n > 2 && strcmp(t + n - 2, "[]") == 0;
	int range = !array && strstr(t, "range") != NULL, ok;

	switch (cond->op) {
	case REST_OP_MATCH:
	case REST_OP_IMATCH:
		return 0;
	case REST_OP_FTS: case REST_OP_PLFTS: case REST_OP_PHFTS: case REST_OP_WFTS:
		ok = !strcmp(t, "tsvector") || !strcmp(t, "text") ||
		    !strcmp(t, "character varying") || !strcmp(t, "character");
		break;
	case REST_OP_CS:
	case REST_OP_CD:
		ok = array || range || !strcmp(t, "jsonb");
		break;
	case REST_OP_OV:
		ok = array || range;
		break;
	default:
		ok = range;
	}
	if (ok)
		return 0;
	rest_err_set(g->e, 400, "42883", NULL, "operator %s does not apply to %.80s of type "
	    "%.60s", op_names[cond->op], l->c->name, t);
	g->e->hint = cond->op <= REST_OP_WFTS ? "full-text search takes text or tsvector" :
	    cond->op <= REST_OP_CD ? "cs and cd take arrays, ranges or jsonb" :
	    cond->op == REST_OP_OV ? "ov takes arrays or ranges" : "this operator takes ranges";
	return -1;
}

/*
 * match/imatch: lhs::text ~ $k; fts and its kin: lhs @@ to_tsquery([CONFIG, ]$k), CONFIG
 * the pg_ts_config row named $lang (a text column is searched through to_tsvector(),
 * PostgreSQL's text @@ tsquery; an unknown configuration is NULL, which matches nothing,
 * where $lang::regconfig would fail the statement); the
 * array, range and jsonb operators: lhs @> $k::type, the literal ({a,b}, [1,2), {"a":1})
 * read by the column's own type (jsonb for a -> path).
 */
static int
pg_op(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond,
    const char *v, size_t len)
{
	const char *op = pg_ops[cond->op];
	int k, kl = 0;

	if (op == NULL)
		return -1;
	if (pg_op_fits(g, l, cond) < 0)
		return -1;
	if ((k = rest_param_text(g, v, len)) < 0 ||
	    (cond->lang != NULL && (kl = rest_param_text(g, cond->lang,
	    strlen(cond->lang))) < 0) || pg_lhs(g, l) < 0)
		return -1;
	switch (cond->op) {
	case REST_OP_MATCH:
	case REST_OP_IMATCH:
		buf_printf(g->sql, "::text %s $%d", op, k);
		break;
	case REST_OP_FTS: case REST_OP_PLFTS: case REST_OP_PHFTS: case REST_OP_WFTS:
		if (cond->lang != NULL)
			buf_printf(g->sql, " @@ %s((select _c.oid::regconfig from pg_ts_config _c "
			    "where _c.cfgname = $%d), $%d)", op, kl, k);
		else
			buf_printf(g->sql, " @@ %s($%d)", op, k);
		break;
	default:
		buf_printf(g->sql, " %s $%d::%s", op, k, l->path != NULL ? "jsonb" : l->c->type);
	}
	return 0;
}

/* 1 when l is JSON on SQLite: a json or jsonb column (an array column is kept as json),
 * or a -> path into one. */
static int
lite_json(const struct rest_lhs *l)
{
	if (l->path != NULL)
		return !l->path->last_text;
	return !strcmp(l->c->type, "json") || !strcmp(l->c->type, "jsonb");
}

/* 1 when l is an integer range column on SQLite (declared int4range or int8range). */
static int
lite_range(const struct rest_lhs *l)
{
	return l->path == NULL && (!strcmp(l->c->type, "int4range") ||
	    !strcmp(l->c->type, "int8range"));
}

/*
 * fn(lhs, $k): SQLite's call of one of the functions of common/db_sqlite_ops.c, its
 * literal v checked first by ok (a 400 22P02, PostgreSQL's "malformed what literal").
 * fn is the call's opening, "sluice_contains(" or "sluice_range('&&', ".
 */
static int
lite_call_op(struct rest_gen *g, const struct rest_lhs *l, const char *fn, const char *v,
    size_t len, int (*ok)(const char *, size_t), const char *what)
{
	int k;

	if (!ok(v, len)) {
		rest_err_set(g->e, 400, "22P02", NULL, "malformed %s literal: \"%.*s\"", what,
		    (int)(len > 200 ? 200 : len), v);
		return -1;
	}
	if ((k = rest_param_text(g, v, len)) < 0)
		return -1;
	buf_puts(g->sql, fn);
	if (lite_lhs(g, l) < 0)
		return -1;
	buf_puts(g->sql, ", ");
	sqlb_param(g->sql, k);
	buf_putc(g->sql, ')');
	return 0;
}

/* PostgreSQL's own text search configurations (pg_ts_config): fts(LANG) with another
 * name matches nothing, as on PostgreSQL here (pg_op()). */
static const char *const lite_fts_langs[] = {
	"simple", "arabic", "armenian", "basque", "catalan", "danish", "dutch", "english",
	"finnish", "french", "german", "greek", "hindi", "hungarian", "indonesian", "irish",
	"italian", "lithuanian", "nepali", "norwegian", "portuguese", "romanian", "russian",
	"serbian", "spanish", "swedish", "tamil", "turkish", "yiddish",
};

/* The table whose column c is, or NULL (a function's result). */
static const struct rest_table *
lite_table_of(const struct rest_schema *sc, const struct rest_col *c)
{
	int i, j;

	for (i = 0; i < sc->ntables; i++)
		for (j = 0; j < sc->tables[i].ncols; j++)
			if (&sc->tables[i].cols[j] == c)
				return &sc->tables[i];
	return NULL;
}

/* The FTS5 table TABLE_fts of t holding a column named col, or NULL. */
static const struct rest_table *
lite_fts_table(const struct rest_schema *sc, const struct rest_table *t, const char *col)
{
	size_t n = strlen(t->name);
	int i, j;

	for (i = 0; i < sc->ntables; i++) {
		const struct rest_table *f = &sc->tables[i];

		if (!f->fts || strncmp(f->name, t->name, n) != 0 || strcmp(f->name + n, "_fts") != 0)
			continue;
		for (j = 0; j < f->ncols; j++)
			if (strcmp(f->cols[j].name, col) == 0)
				return f;
	}
	return NULL;
}

/*
 * fts, plfts, phfts and wfts on SQLite, on a column of a rowid table T that an FTS5
 * table named T_fts indexes (a column of the same name, its rowids T's: an external
 * content table over T, docs/postgrest.md):
 *
 *   (CASE WHEN lhs IS NULL THEN NULL ELSE alias.rowid [NOT] IN (SELECT rowid FROM
 *   "T_fts" WHERE "col" MATCH $k) END)
 *
 * $k the FTS5 query fts.c writes from v (NOT IN when it stands for the rows the query
 * does not match; 0 in place of the IN for a query without a word, or a language
 * PostgreSQL does not have).  A NULL column is neither matched nor, under not.,
 * unmatched, as PostgreSQL's NULL @@ q.  Without such a table: 400 42883, never a scan.
 */
static int
lite_fts(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond,
    const char *v, size_t len)
{
	const struct rest_table *t = l->path == NULL ? lite_table_of(g->sc, l->c) : NULL;
	const struct rest_table *f = t != NULL && !t->is_view && t->rowid ?
	    lite_fts_table(g->sc, t, l->c->name) : NULL;
	struct buf q;
	const char *qs;
	size_t i;
	int r = 0, neg = 0, k, known = cond->lang == NULL;

	if (f == NULL) {
		rest_err_set(g->e, 400, "42883", NULL, "operator %s does not apply to %.80s: it "
		    "has no full-text index on SQLite", op_names[cond->op], l->c->name);
		(void)snprintf(g->e->hint_buf, sizeof(g->e->hint_buf), "create an FTS5 table "
		    "%.80s_fts over the column (docs/postgrest.md)", t != NULL ? t->name :
		    "TABLE");
		g->e->hint = g->e->hint_buf;
		return -1;
	}
	for (i = 0; !known && i < sizeof(lite_fts_langs) / sizeof(lite_fts_langs[0]); i++)
		known = strcmp(cond->lang, lite_fts_langs[i]) == 0;
	buf_init(&q, 0);
	if (known && (r = rest_fts_query(g->a, cond->op, v, len, &q, &neg, g->e)) < 0)
		goto out;
	buf_puts(g->sql, "(CASE WHEN ");
	(void)lite_lhs(g, l);
	buf_puts(g->sql, " IS NULL THEN NULL ELSE ");
	if (r == 0) {
		buf_puts(g->sql, "0 END)");
		goto out;
	}
	r = -1;
	if ((qs = arena_strndup(g->a, q.data, q.len)) == NULL) {
		rest_err_set(g->e, 413, "54000", NULL, "request too large");
		goto out;
	}
	if ((k = rest_param_text(g, qs, q.len)) < 0)
		goto out;
	buf_printf(g->sql, "%s.rowid %sIN (SELECT rowid FROM ", l->alias, neg ? "NOT " : "");
	sqlb_ident(g->sql, f->name);
	buf_puts(g->sql, " WHERE ");
	sqlb_ident(g->sql, l->c->name);
	buf_puts(g->sql, " MATCH ");
	sqlb_param(g->sql, k);
	buf_puts(g->sql, ") END)");
	r = 0;
out:
	buf_free(&q);
	return r < 0 ? -1 : 0;
}

/*
 * match and imatch on SQLite: sluice_regexp(lhs, $k, 0 or 1) (common/db_sqlite_regex.c:
 * PCRE2, bounded; ~ and ~* of PostgreSQL's), the pattern compiled here first so that a
 * malformed one is a 400 2201B, as PostgreSQL's "invalid regular expression", before the
 * statement runs.
 */
static int
lite_match(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond,
    const char *v, size_t len)
{
	char why[200];
	int k, icase = cond->op == REST_OP_IMATCH;

	if (!db_regex_ok(v, len, icase, why, sizeof(why))) {
		rest_err_set(g->e, 400, "2201B", NULL, "invalid regular expression: %s", why);
		return -1;
	}
	if ((k = rest_param_text(g, v, len)) < 0)
		return -1;
	buf_puts(g->sql, "sluice_regexp(");
	if (lite_lhs(g, l) < 0)
		return -1;
	buf_puts(g->sql, ", ");
	sqlb_param(g->sql, k);
	buf_printf(g->sql, ", %d)", icase);
	return 0;
}

/*
 * cs, cd and ov on JSON (lite_json()): sluice_contains(lhs, $k), sluice_contained(lhs, $k)
 * and sluice_overlaps(lhs, $k) (common/db_sqlite_ops.c: jsonb's containment, the literal a
 * JSON text or an array literal {a,b}, else a 400 22P02 as PostgreSQL's); the range
 * operators on an integer range column as sluice_range('op', lhs, $k); match and imatch
 * by lite_match(), the text searches by lite_fts().  The others, and these on other
 * types, are a 400 naming the operator.
 */
static int
lite_op(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *cond,
    const char *v, size_t len)
{
	const char *name = op_names[cond->op] ? op_names[cond->op] : "?";
	char fn[32];

	if (lite_range(l) && pg_ops[cond->op] != NULL && cond->op >= REST_OP_CS) {
		(void)snprintf(fn, sizeof(fn), "sluice_range('%s', ", pg_ops[cond->op]);
		return lite_call_op(g, l, fn, v, len, db_range_literal_ok, "range");
	}
	if ((cond->op == REST_OP_CS || cond->op == REST_OP_CD || cond->op == REST_OP_OV) &&
	    lite_json(l))
		return lite_call_op(g, l, cond->op == REST_OP_OV ? "sluice_overlaps(" :
		    cond->op == REST_OP_CD ? "sluice_contained(" : "sluice_contains(", v, len,
		    db_json_literal_ok, "array");
	if (cond->op == REST_OP_MATCH || cond->op == REST_OP_IMATCH)
		return lite_match(g, l, cond, v, len);
	if (cond->op >= REST_OP_FTS && cond->op <= REST_OP_WFTS)
		return lite_fts(g, l, cond, v, len);
	rest_err_set(g->e, 400, "42883", NULL, "operator %s is not supported on SQLite", name);
	g->e->hint = cond->op <= REST_OP_OV ? "on SQLite cs, cd and ov take json, jsonb or an integer "
	    "range (an array column is kept as json)" : "on SQLite the range operators take "
	    "int4range or int8range columns";
	return -1;
}

static int
pg_path_value(struct rest_gen *g, const struct rest_lhs *l)
{
	return pg_path(g, l);
}

/* The casts select= accepts: PostgREST passes any type name to PostgreSQL; sluice takes
 * these, so that no type name from a request is written into SQL. */
static const struct cast_type {
	const char *name;
	const char *pg;
	const char *lite;	/* NULL: no SQLite equivalent */
	enum rest_kind kind;
} cast_types[] = {
	{ "text", "text", "TEXT", REST_K_TEXT },
	{ "varchar", "varchar", "TEXT", REST_K_TEXT },
	{ "int", "integer", "INTEGER", REST_K_INT },
	{ "int4", "integer", "INTEGER", REST_K_INT },
	{ "integer", "integer", "INTEGER", REST_K_INT },
	{ "int2", "smallint", "INTEGER", REST_K_INT },
	{ "smallint", "smallint", "INTEGER", REST_K_INT },
	{ "int8", "bigint", "INTEGER", REST_K_INT },
	{ "bigint", "bigint", "INTEGER", REST_K_INT },
	{ "numeric", "numeric", "NUMERIC", REST_K_NUM },
	{ "decimal", "numeric", "NUMERIC", REST_K_NUM },
	{ "real", "real", "REAL", REST_K_NUM },
	{ "float4", "real", "REAL", REST_K_NUM },
	{ "float8", "double precision", "REAL", REST_K_NUM },
	{ "float", "double precision", "REAL", REST_K_NUM },
	{ "boolean", "boolean", NULL, REST_K_BOOL },
	{ "bool", "boolean", NULL, REST_K_BOOL },
	{ "date", "date", NULL, REST_K_DATE },
	{ "timestamp", "timestamp", NULL, REST_K_TS },
	{ "timestamptz", "timestamptz", NULL, REST_K_TS },
	{ "json", "json", NULL, REST_K_JSON },
	{ "jsonb", "jsonb", NULL, REST_K_JSON },
	{ "uuid", "uuid", NULL, REST_K_TEXT },
};

/* The cast_types entry of name, or NULL. */
static const struct cast_type *
cast_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(cast_types) / sizeof(cast_types[0]); i++)
		if (strcmp(cast_types[i].name, name) == 0)
			return &cast_types[i];
	return NULL;
}

int
rest_cast_known(const char *name)
{
	return cast_find(name) != NULL;
}

/* (EXPR)::type */
static void
pg_cast(struct buf *b, const char *type, int open)
{
	if (open)
		buf_putc(b, '(');
	else
		buf_printf(b, ")::%s", type);
}

/* cast(EXPR as TYPE); to an integer through round(), which rounds half away from zero as
 * PostgreSQL's numeric to integer does (cast() alone truncates). */
static void
lite_cast(struct buf *b, const char *type, int open)
{
	int integer = strcmp(type, "INTEGER") == 0;

	if (open)
		buf_puts(b, integer ? "cast(round(" : "cast(");
	else
		buf_printf(b, "%s as %s)", integer ? ")" : "", type);
}

static const char *
pg_cast_type(const char *name, enum rest_kind *kind)
{
	const struct cast_type *c = cast_find(name);

	if (c == NULL)
		return NULL;
	*kind = c->kind;
	return c->pg;
}

static const char *
lite_cast_type(const char *name, enum rest_kind *kind)
{
	const struct cast_type *c = cast_find(name);

	if (c == NULL)
		return NULL;
	*kind = c->kind;
	return c->lite;
}

static const struct rest_dialect rest_dialect_pg = {
	.sqlb = &sqlb_pg,
	.col_value = pg_col_value,
	.col_text = pg_col_text,
	.cmp = pg_cmp,
	.like = pg_like,
	.in = pg_in,
	.op = pg_op,
	.lhs = pg_lhs,
	.path_value = pg_path_value,
	.cast_type = pg_cast_type,
	.cast = pg_cast,
	.expr_open = "coalesce(to_json(",
	.expr_close = ")::text, 'null')",
	.expr_json_open = "coalesce(to_json(",
	.expr_json_close = ")::text, 'null')",
	.ts_open = "",
	.ts_close = "",
	.obj_template = 0,
	.arr_open = "'[' || coalesce(string_agg(",
	.arr_close = ", ','), '') || ']'",
	.arr_bare_open = "coalesce(string_agg(",
	.arr_bare_close = ", ','), '')",
	.limit_none = "",
	.csv_agg_open = "coalesce(string_agg(",
	.csv_agg_close = ", chr(10)), '')",
	.strpos = "strpos",
	.as_text = "::text",
	.chr = "chr",
	.write_open = "with _w as (",
	.insert_alias = "",
	.write_alias = " _t0",
	.insert_rows = " from jsonb_array_elements($1::jsonb) _j",
	.insert_row = "_j",
	.patch_open = "($",
	.patch_close = "::jsonb)",
	.insert_returning = " returning *",
	.update_returning = " returning _t0.*",
	.ret_open = ") select ",
	.ret_agg = 1,
	.ret_table = 0,
	.ret_close = ", count(*) from _w _t0",
	.write_minimal = ") select '', count(*) from _w",
	.json_value = pg_json_value,
	.write_read = pg_write_read,
	.call = pg_call,
	.scalar_open = "select to_json(",
	.scalar_close = ")::text",
	/* PostgreSQL has no way to raise an error in plain SQL: an array past its size
	 * limit fails with 54000 ("array size exceeds the maximum allowed") before anything
	 * is allocated.  Its size depends on the row so that the planner cannot fold it
	 * (and fail every statement) ahead of the CASE that guards it. */
	.body_over = "array_fill(0, array[134217728 + 0 * octet_length(_s._b)])::text",
	.explain = "explain (format json) ",
	.search_path = "select set_config('search_path', $1, true)",
	.schema_cols = schema_pg_cols,
	.schema_fks = schema_pg_fks,
	.schema_funcs = schema_pg_funcs,
	.schema_funcs_table = NULL,
	.schema_uniques = schema_pg_uniques,
	.schema_view_cols = schema_pg_view_cols,
	.schema_ddl = NULL,
	.schema_comments = schema_pg_comments,
	.schema_comments_table = NULL,
	.schema_privs = schema_pg_privs,
	.schema_geojson = schema_pg_geojson,
	.resp_settings = ", current_setting('response.headers', true) as _rh, "
	    "current_setting('response.status', true) as _rs",
	.schema_args_sep = 31,
	.kind_of = pg_kind_of,
};

static const struct rest_dialect rest_dialect_sqlite = {
	.sqlb = &sqlb_sqlite,
	.col_value = lite_col_value,
	.col_text = lite_col_text,
	.cmp = lite_cmp,
	.like = lite_like,
	.in = lite_in,
	.op = lite_op,
	.lhs = lite_lhs,
	.path_value = lite_path,
	.cast_type = lite_cast_type,
	.cast = lite_cast,
	.expr_open = "json_quote(",
	.expr_close = ")",
	.expr_json_open = "coalesce(",
	.expr_json_close = ", 'null')",
	.ts_open = "strftime('%Y-%m-%dT%H:%M:%S', ",
	.ts_close = ")",
	.obj_template = 1,
	.arr_open = "sluice_arr(",
	.arr_close = ")",
	.limit_none = " limit -1",
	.csv_agg_open = "coalesce(group_concat(",
	.csv_agg_close = ", char(10)), '')",
	.strpos = "instr",
	.as_text = "",
	.chr = "char",
	.write_open = "",
	.insert_alias = " as _t0",
	.write_alias = " as _t0",
	.insert_rows = " from json_each($1) _j where true",
	.insert_row = "_j.value",
	.insert_one_rows = " where true",
	.insert_one_row = "$1",
	.patch_open = "$",
	.patch_close = "",
	.insert_returning = "",
	.update_returning = "",
	.ret_open = " returning ",
	.ret_agg = 0,
	.ret_table = 1,
	.ret_close = "",
	.write_minimal = "",
	.json_value = lite_json_value,
	.bound_value = lite_bound_value,
	.write_read = lite_write_read,
	.call = lite_call,
	.scalar_open = "select json_quote((",
	.scalar_close = "))",
	.body_over = NULL,
	.explain = NULL,
	.search_path = NULL,
	.schema_cols = schema_lite_cols,
	.schema_fks = schema_lite_fks,
	.schema_funcs = schema_lite_funcs,
	.schema_funcs_table = "sluice_functions",
	.schema_uniques = schema_lite_uniques,
	.schema_view_cols = NULL,
	.schema_ddl = schema_lite_ddl,
	.schema_comments = schema_lite_comments,
	.schema_comments_table = "sluice_comments",
	.schema_privs = NULL,
	.schema_geojson = NULL,
	.resp_settings = NULL,
	.schema_args_sep = ',',
	.kind_of = lite_kind_of,
};

const struct rest_dialect *
rest_dialect_of(enum db_backend be)
{
	return be == DB_PG ? &rest_dialect_pg : &rest_dialect_sqlite;
}
