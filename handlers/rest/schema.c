/*
 * schema.c: what the rest endpoint may serve, read from the database itself.
 *
 * PostgreSQL: the tables, views and their columns of the "public" schema (pg_class,
 * pg_attribute, pg_attrdef, pg_index), the foreign keys (pg_constraint) and the SQL
 * functions with only IN arguments (pg_proc).  SQLite: sqlite_master with pragma_table_info
 * and pragma_foreign_key_list, and the functions declared in the project's own table
 * sluice_functions(name, args, returns, volatility, body), whose body is one SELECT with
 * :name parameters.  A name from a request is only ever used after it matched an entry of
 * this schema.
 *
 * The schema belongs to one connection (one thread), so it needs no locking.
 */
#include <ctype.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rest.h"

#define SCHEMA_TABLES_MAX	4096
#define SCHEMA_COLS_MAX		1600

static const char schema_pg_cols[] =
    "select c.relname, c.relkind::text, a.attname, format_type(a.atttypid, null), "
    "a.attnotnull::int, coalesce(pg_get_expr(d.adbin, d.adrelid), ''), "
    "coalesce((select k.n from pg_index i cross join unnest(i.indkey) with ordinality "
    "k(att, n) where i.indrelid = c.oid and i.indisprimary and k.att = a.attnum), 0) "
    "from pg_class c join pg_namespace n on n.oid = c.relnamespace "
    "join pg_attribute a on a.attrelid = c.oid and a.attnum > 0 and not a.attisdropped "
    "left join pg_attrdef d on d.adrelid = c.oid and d.adnum = a.attnum "
    "where n.nspname = 'public' and c.relkind in ('r', 'v', 'm', 'p', 'f') "
    "order by c.relname, a.attnum";

static const char schema_pg_fks[] =
    "select co.conname, c1.relname, c2.relname, a1.attname, a2.attname "
    "from pg_constraint co join pg_class c1 on c1.oid = co.conrelid "
    "join pg_class c2 on c2.oid = co.confrelid "
    "join pg_namespace n on n.oid = c1.relnamespace "
    "cross join unnest(co.conkey, co.confkey) with ordinality as k(a, b, i) "
    "join pg_attribute a1 on a1.attrelid = co.conrelid and a1.attnum = k.a "
    "join pg_attribute a2 on a2.attrelid = co.confrelid and a2.attnum = k.b "
    "where co.contype = 'f' and n.nspname = 'public' "
    "order by c1.relname, co.conname, k.i";

/* Arguments as "name<US>type<US>..." so that no character of a type name splits them. */
static const char schema_pg_funcs[] =
    "select p.proname, coalesce((select string_agg(coalesce(p.proargnames[u.i], '') || "
    "chr(31) || format_type(u.t, null), chr(31) order by u.i) "
    "from unnest(p.proargtypes::oid[]) with ordinality u(t, i)), ''), "
    "p.proretset::int, coalesce((select c.relname from pg_type t join pg_class c "
    "on c.oid = t.typrelid where t.oid = p.prorettype), '') "
    "from pg_proc p join pg_namespace n on n.oid = p.pronamespace "
    "where n.nspname = 'public' and p.prokind = 'f' and p.proargmodes is null "
    "and p.prorettype not in ('trigger'::regtype, 'event_trigger'::regtype) "
    "order by p.proname, p.oid";

static const char schema_lite_cols[] =
    "select m.name, m.type, p.name, p.type, p.\"notnull\", coalesce(p.dflt_value, ''), p.pk "
    "from sqlite_master m join pragma_table_info(m.name) p "
    "where m.type in ('table', 'view') and m.name not like 'sqlite_%' "
    "order by m.name, p.cid";

static const char schema_lite_fks[] =
    "select 'fk_' || m.name || '_' || f.id, m.name, f.\"table\", f.\"from\", "
    "coalesce(f.\"to\", '') from sqlite_master m join pragma_foreign_key_list(m.name) f "
    "where m.type = 'table' order by m.name, f.id, f.seq";

static const char schema_lite_funcs[] =
    "select name, args, returns, body from sluice_functions order by name";

static char *
schema_strdup(const char *s)
{
	size_t n = strlen(s) + 1;
	char *p = malloc(n);

	if (p != NULL)
		memcpy(p, s, n);
	return p;
}

static const char *
schema_text(struct db_stmt *st, int col)
{
	const char *s = db_column_text(st, col, NULL);

	return s ? s : "";
}

/* Case-insensitive substring test for declared types. */
static int
schema_has(const char *type, const char *word)
{
	size_t n = strlen(word), i;

	for (i = 0; type[i] != '\0'; i++)
		if (strncasecmp(type + i, word, n) == 0)
			return 1;
	return 0;
}

enum rest_kind
rest_kind_of(enum db_backend be, const char *type)
{
	if (be == DB_PG) {
		if (!strcmp(type, "integer") || !strcmp(type, "bigint") ||
		    !strcmp(type, "smallint"))
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
	if (schema_has(type, "INT"))
		return REST_K_INT;
	if (schema_has(type, "BOOL"))
		return REST_K_BOOL;
	if (schema_has(type, "TIMESTAMP") || schema_has(type, "DATETIME"))
		return REST_K_TS;
	if (schema_has(type, "DATE"))
		return REST_K_DATE;
	if (schema_has(type, "JSON"))
		return REST_K_JSON;
	if (schema_has(type, "CHAR") || schema_has(type, "CLOB") || schema_has(type, "TEXT"))
		return REST_K_TEXT;
	if (schema_has(type, "REAL") || schema_has(type, "FLOA") || schema_has(type, "DOUB") ||
	    schema_has(type, "NUMERIC") || schema_has(type, "DECIMAL"))
		return REST_K_NUM;
	return REST_K_TEXT;
}

void
rest_schema_free(struct rest_schema *sc)
{
	int i, j;

	if (sc == NULL)
		return;
	for (i = 0; i < sc->ntables; i++) {
		for (j = 0; j < sc->tables[i].ncols; j++) {
			free(sc->tables[i].cols[j].name);
			free(sc->tables[i].cols[j].type);
			free(sc->tables[i].cols[j].dflt);
		}
		free(sc->tables[i].cols);
		free(sc->tables[i].name);
	}
	free(sc->tables);
	for (i = 0; i < sc->nfks; i++)
		free(sc->fks[i].name);
	free(sc->fks);
	for (i = 0; i < sc->nfuncs; i++) {
		for (j = 0; j < sc->funcs[i].nargs; j++) {
			free(sc->funcs[i].argnames[j]);
			free(sc->funcs[i].argtypes[j]);
		}
		free(sc->funcs[i].argnames);
		free(sc->funcs[i].argtypes);
		free(sc->funcs[i].name);
		free(sc->funcs[i].body);
	}
	free(sc->funcs);
	free(sc);
}

int
rest_schema_table(const struct rest_schema *sc, const char *name)
{
	int i;

	for (i = 0; i < sc->ntables; i++)
		if (!sc->tables[i].hidden && strcmp(sc->tables[i].name, name) == 0)
			return i;
	return -1;
}

int
rest_schema_col(const struct rest_table *t, const char *name)
{
	int i;

	for (i = 0; i < t->ncols; i++)
		if (strcmp(t->cols[i].name, name) == 0)
			return i;
	return -1;
}

const struct rest_func *
rest_schema_func(const struct rest_schema *sc, const char *name)
{
	int i;

	for (i = 0; i < sc->nfuncs; i++)
		if (strcmp(sc->funcs[i].name, name) == 0)
			return &sc->funcs[i];
	return NULL;
}

/* Any table, hidden or not (foreign keys and function results may name one). */
static int
schema_table_any(const struct rest_schema *sc, const char *name)
{
	int i;

	for (i = 0; i < sc->ntables; i++)
		if (strcmp(sc->tables[i].name, name) == 0)
			return i;
	return -1;
}

static int
schema_load_cols(struct rest_schema *sc, struct db *db)
{
	struct db_stmt *st;
	struct rest_table *t = NULL;
	int rc, capt = 0, capc = 0;
	int lite = sc->be == DB_SQLITE;

	if ((st = db_prepare(db, lite ? schema_lite_cols : schema_pg_cols)) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *tname = schema_text(st, 0), *kind = schema_text(st, 1);
		struct rest_col *c;

		if (t == NULL || strcmp(t->name, tname) != 0) {
			if (sc->ntables == SCHEMA_TABLES_MAX)
				continue;
			if (sc->ntables == capt) {
				void *p;

				capt = capt ? capt * 2 : 32;
				if ((p = realloc(sc->tables, (size_t)capt * sizeof(*t))) == NULL)
					goto nomem;
				sc->tables = p;
			}
			t = &sc->tables[sc->ntables++];
			memset(t, 0, sizeof(*t));
			capc = 0;
			if ((t->name = schema_strdup(tname)) == NULL)
				goto nomem;
			t->is_view = lite ? strcmp(kind, "view") == 0 : kind[0] == 'v';
			t->hidden = strncmp(tname, "sluice_", 7) == 0;
		}
		/* cppcheck-suppress nullPointerRedundantCheck ; t is set by the first row
		 * (ntables starts at 0, below SCHEMA_TABLES_MAX). */
		if (t->ncols == SCHEMA_COLS_MAX)
			continue;
		if (t->ncols == capc) {
			void *p;

			capc = capc ? capc * 2 : 16;
			if ((p = realloc(t->cols, (size_t)capc * sizeof(*c))) == NULL)
				goto nomem;
			t->cols = p;
		}
		c = &t->cols[t->ncols++];
		memset(c, 0, sizeof(*c));
		c->name = schema_strdup(schema_text(st, 2));
		c->type = schema_strdup(schema_text(st, 3));
		if (c->name == NULL || c->type == NULL)
			goto nomem;
		c->kind = rest_kind_of(sc->be, c->type);
		c->notnull = (int)db_column_int(st, 4);
		if (*schema_text(st, 5) != '\0' &&
		    (c->dflt = schema_strdup(schema_text(st, 5))) == NULL)
			goto nomem;
		c->pk = (int)db_column_int(st, 6);
	}
	return rc == DB_DONE ? 0 : -1;
nomem:
	db_reset(st);
	return -1;
}

static int
schema_load_fks(struct rest_schema *sc, struct db *db)
{
	struct db_stmt *st;
	struct rest_fk *fk = NULL;
	int rc, cap = 0;
	char last[256] = "";

	if ((st = db_prepare(db, sc->be == DB_SQLITE ? schema_lite_fks : schema_pg_fks)) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *name = schema_text(st, 0), *from = schema_text(st, 1);
		const char *to = schema_text(st, 2), *fc = schema_text(st, 3);
		const char *tc = schema_text(st, 4);
		char key[256];
		int ti, fi;

		if (snprintf(key, sizeof(key), "%s.%s", from, name) >= (int)sizeof(key))
			continue;
		if ((fi = schema_table_any(sc, from)) < 0 || (ti = schema_table_any(sc, to)) < 0)
			continue;
		if (fk == NULL || strcmp(key, last) != 0) {
			if (sc->nfks == cap) {
				void *p;

				cap = cap ? cap * 2 : 32;
				if ((p = realloc(sc->fks, (size_t)cap * sizeof(*fk))) == NULL)
					goto nomem;
				sc->fks = p;
			}
			fk = &sc->fks[sc->nfks++];
			memset(fk, 0, sizeof(*fk));
			if ((fk->name = schema_strdup(name)) == NULL)
				goto nomem;
			fk->from = fi;
			fk->to = ti;
			memcpy(last, key, strlen(key) + 1);
		}
		/* cppcheck-suppress nullPointerRedundantCheck ; the block above sets fk. */
		if (fk->ncols == REST_FK_COLS)
			continue;
		fk->from_cols[fk->ncols] = rest_schema_col(&sc->tables[fi], fc);
		if (*tc == '\0') {
			/* SQLite: a key that names no column refers to the primary key. */
			int i, want = fk->ncols + 1;

			fk->to_cols[fk->ncols] = -1;
			for (i = 0; i < sc->tables[ti].ncols; i++)
				if (sc->tables[ti].cols[i].pk == want)
					fk->to_cols[fk->ncols] = i;
		} else
			fk->to_cols[fk->ncols] = rest_schema_col(&sc->tables[ti], tc);
		fk->ncols++;
	}
	if (rc != DB_DONE)
		return -1;
	/* Drop keys whose columns did not all resolve. */
	{
		int i, j, k = 0;

		for (i = 0; i < sc->nfks; i++) {
			int ok = sc->fks[i].ncols > 0;

			for (j = 0; j < sc->fks[i].ncols; j++)
				if (sc->fks[i].from_cols[j] < 0 || sc->fks[i].to_cols[j] < 0)
					ok = 0;
			if (ok)
				sc->fks[k++] = sc->fks[i];
			else
				free(sc->fks[i].name);
		}
		sc->nfks = k;
	}
	return 0;
nomem:
	db_reset(st);
	return -1;
}

/* Splits s at sep into at most max malloc'd strings; returns the count, or -1 with
 * nothing left allocated. */
static int
schema_split(const char *s, char sep, char **out, int max)
{
	int n = 0;

	while (*s != '\0' && n < max) {
		const char *e = strchr(s, sep);
		size_t len = e ? (size_t)(e - s) : strlen(s);

		if ((out[n] = malloc(len + 1)) == NULL) {
			while (n > 0)
				free(out[--n]);
			return -1;
		}
		memcpy(out[n], s, len);
		out[n][len] = '\0';
		n++;
		s += len;
		if (*s == sep)
			s++;
	}
	return n;
}

static void
schema_trim(char *s)
{
	size_t n = strlen(s), i = 0;

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
	while (isspace((unsigned char)s[i]))
		i++;
	memmove(s, s + i, n - i + 1);
}

/*
 * SQLite function bodies use :name parameters; they become $k (the k-th argument) cast to
 * the declared type, so that "a + b" adds integers whatever text the request bound.
 * String literals, quoted identifiers and comments are copied untouched.
 */
static char *
schema_lite_body(const char *body, const struct rest_func *f)
{
	struct buf b;
	const char *p = body;
	char *out = NULL;

	buf_init(&b, 1024 * 1024);
	while (*p != '\0') {
		if (*p == '\'' || *p == '"') {
			char q = *p;

			buf_putc(&b, *p++);
			while (*p != '\0' && *p != q)
				buf_putc(&b, *p++);
			if (*p != '\0')
				buf_putc(&b, *p++);
		} else if (*p == ':' && (isalpha((unsigned char)p[1]) || p[1] == '_') &&
		    (p == body || p[-1] != ':')) {
			const char *s = ++p;
			size_t len;
			int i, k = -1;

			while (isalnum((unsigned char)*p) || *p == '_')
				p++;
			len = (size_t)(p - s);
			for (i = 0; i < f->nargs; i++)
				if (strlen(f->argnames[i]) == len && !strncmp(f->argnames[i], s, len))
					k = i;
			if (k < 0)
				goto out;
			switch (rest_kind_of(DB_SQLITE, f->argtypes[k])) {
			case REST_K_INT:
				buf_printf(&b, "cast($%d as integer)", k + 1);
				break;
			case REST_K_NUM:
				buf_printf(&b, "cast($%d as real)", k + 1);
				break;
			default:
				buf_printf(&b, "$%d", k + 1);
			}
		} else
			buf_putc(&b, *p++);
	}
	if (!buf_failed(&b) && b.data != NULL)
		out = schema_strdup(b.data);
out:
	buf_free(&b);
	return out;
}

static int
schema_add_func(struct rest_schema *sc, int *cap, const char *name, const char *args,
    char argsep, int retset, const char *rettable, const char *body)
{
	struct rest_func *f;
	char *parts[2 * 64];
	int n, i;

	if (rest_schema_func(sc, name) != NULL)
		return 0;	/* overloads: the first one only */
	if (sc->nfuncs == *cap) {
		void *p;

		*cap = *cap ? *cap * 2 : 16;
		if ((p = realloc(sc->funcs, (size_t)*cap * sizeof(*f))) == NULL)
			return -1;
		sc->funcs = p;
	}
	f = &sc->funcs[sc->nfuncs++];
	memset(f, 0, sizeof(*f));
	f->rettable = -1;
	if ((f->name = schema_strdup(name)) == NULL)
		return -1;
	f->argnames = calloc(64, sizeof(char *));
	f->argtypes = calloc(64, sizeof(char *));
	if (f->argnames == NULL || f->argtypes == NULL)
		return -1;
	if (argsep == 31) {
		/* PostgreSQL: name US type US name US type ... */
		if ((n = schema_split(args, argsep, parts, 2 * 64)) < 0)
			return -1;
		for (i = 0; i + 1 < n; i += 2) {
			f->argnames[f->nargs] = parts[i];
			f->argtypes[f->nargs++] = parts[i + 1];
		}
		if (n % 2)
			free(parts[n - 1]);
	} else {
		/* SQLite: "a integer, b integer". */
		if ((n = schema_split(args, ',', parts, 64)) < 0)
			return -1;
		for (i = 0; i < n; i++) {
			char *sp;

			schema_trim(parts[i]);
			sp = strchr(parts[i], ' ');
			f->argtypes[f->nargs] = schema_strdup(sp ? sp + 1 : "text");
			if (sp != NULL)
				*sp = '\0';
			f->argnames[f->nargs++] = parts[i];
			if (f->argtypes[f->nargs - 1] == NULL) {
				/* The parts not handed to f yet are still ours. */
				while (++i < n)
					free(parts[i]);
				return -1;
			}
			schema_trim(f->argtypes[f->nargs - 1]);
		}
	}
	f->retset = retset;
	if (*rettable != '\0')
		f->rettable = schema_table_any(sc, rettable);
	if (body != NULL && (f->body = schema_lite_body(body, f)) == NULL) {
		log_warn("rest: function %s: its body names an unknown parameter", name);
		sc->nfuncs--;
		for (i = 0; i < f->nargs; i++) {
			free(f->argnames[i]);
			free(f->argtypes[i]);
		}
		free(f->argnames);
		free(f->argtypes);
		free(f->name);
	}
	return 0;
}

static int
schema_load_funcs(struct rest_schema *sc, struct db *db)
{
	struct db_stmt *st;
	int rc, cap = 0;

	if (sc->be == DB_SQLITE) {
		if (schema_table_any(sc, "sluice_functions") < 0)
			return 0;
		if ((st = db_prepare(db, schema_lite_funcs)) == NULL)
			return -1;
		while ((rc = db_step(st)) == DB_ROW) {
			/* returns: "setof album", "album" or a scalar type name. */
			const char *ret = schema_text(st, 2);
			int retset = strncasecmp(ret, "setof ", 6) == 0;
			const char *rt = retset ? ret + 6 : ret;

			while (*rt == ' ')
				rt++;
			if (schema_add_func(sc, &cap, schema_text(st, 0), schema_text(st, 1), ',',
			    retset, schema_table_any(sc, rt) >= 0 ? rt : "",
			    schema_text(st, 3)) < 0) {
				db_reset(st);
				return -1;
			}
		}
		return rc == DB_DONE ? 0 : -1;
	}
	if ((st = db_prepare(db, schema_pg_funcs)) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		if (schema_add_func(sc, &cap, schema_text(st, 0), schema_text(st, 1), 31,
		    (int)db_column_int(st, 2), schema_text(st, 3), NULL) < 0) {
			db_reset(st);
			return -1;
		}
	return rc == DB_DONE ? 0 : -1;
}

struct rest_schema *
rest_schema_load(struct db *db)
{
	struct rest_schema *sc;

	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return NULL;
	sc->be = db_backend(db);
	if (schema_load_cols(sc, db) < 0 || schema_load_fks(sc, db) < 0 ||
	    schema_load_funcs(sc, db) < 0) {
		rest_schema_free(sc);
		return NULL;
	}
	log_debug("rest: %d relations, %d foreign keys, %d functions", sc->ntables, sc->nfks,
	    sc->nfuncs);
	return sc;
}
