/*
 * schema.c: what the rest endpoint may serve, read from the database itself.
 *
 * PostgreSQL: the tables, views and their columns of one schema (pg_class,
 * pg_attribute, pg_attrdef, pg_index), the foreign keys, primary keys and unique
 * constraints (pg_constraint), the base columns of views (pg_rewrite) and the functions
 * (pg_proc): their IN arguments and defaults, and the columns of those returning
 * TABLE(...) or OUT parameters (a hidden table each); a function of one table's row
 * returning one value is also that table's computed field.  SQLite: sqlite_master with
 * pragma_table_info, pragma_foreign_key_list and pragma_index_list, and the functions
 * declared in the project's own table sluice_functions(name, args, returns, volatility,
 * body), whose body is one SELECT with :name parameters (or one INSERT, UPDATE or
 * DELETE ... RETURNING: a function that writes).  The comments of tables,
 * views, columns and functions (pg_description; SQLite's optional sluice_comments(name,
 * column_name, description)) are kept for the OpenAPI document (openapi.c).  A name from
 * a request is only ever used after it matched an entry of this schema.
 *
 * Foreign keys carry what embedding needs, worked out here once so that no request pays
 * for it: whether the key's columns are unique (a one-to-one relationship), its
 * constraint name on both back ends (SQLite keeps it only in the table's DDL, which is
 * read for it; a key without one is named as PostgreSQL would name it, table_col_fkey),
 * and, on PostgreSQL, the same key again for every view that shows its columns (views
 * have no keys of their own: a view column that shows a base column as it is stands
 * for it).  SQLite's views get no keys: nothing in SQLite says where a view's column
 * comes from.
 *
 * The catalog queries and the reading of declared types are the dialect's (dialect.c);
 * every query gives its rows in the same shape, so that one loader reads both.  The
 * schema belongs to one connection (one thread), so it needs no locking.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "rest.h"

#define SCHEMA_TABLES_MAX	4096
#define SCHEMA_COLS_MAX		1600
#define SCHEMA_FKS_MAX		8192

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

void
rest_schema_free(struct rest_schema *sc)
{
	int i, j;

	if (sc == NULL)
		return;
	for (i = 0; i < sc->ntables; i++) {
		for (j = 0; j < sc->tables[i].ncols + sc->tables[i].ncomputed; j++) {
			free(sc->tables[i].cols[j].name);
			free(sc->tables[i].cols[j].type);
			free(sc->tables[i].cols[j].dflt);
			free(sc->tables[i].cols[j].comment);
		}
		free(sc->tables[i].cols);
		free(sc->tables[i].name);
		free(sc->tables[i].comment);
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
		if (sc->funcs[i].argdefaults != NULL)
			for (j = 0; j < sc->funcs[i].nargs; j++)
				free(sc->funcs[i].argdefaults[j]);
		free(sc->funcs[i].argdefaults);
		free(sc->funcs[i].argnames);
		free(sc->funcs[i].argtypes);
		free(sc->funcs[i].name);
		free(sc->funcs[i].body);
		free(sc->funcs[i].rettype);
		free(sc->funcs[i].comment);
		for (j = 0; j < sc->funcs[i].nreads; j++)
			free(sc->funcs[i].reads[j]);
		free(sc->funcs[i].reads);
	}
	free(sc->funcs);
	free(sc->geojson);
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

	for (i = 0; i < t->ncols + t->ncomputed; i++)
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

/* A catalog query, with the schema's name bound as $1 where the dialect has several. */
static struct db_stmt *
schema_prepare(struct db *db, const struct rest_dialect *d, const char *sql, const char *nsp)
{
	struct db_stmt *st = db_prepare(db, sql);

	if (st != NULL && d->search_path != NULL && db_bind_text(st, 1, nsp, strlen(nsp)) < 0) {
		db_reset(st);
		return NULL;
	}
	return st;
}

static int
schema_load_cols(struct rest_schema *sc, struct db *db, const struct rest_dialect *d,
    const char *nsp)
{
	struct db_stmt *st;
	struct rest_table *t = NULL;
	int rc, capt = 0, capc = 0;

	if ((st = schema_prepare(db, d, d->schema_cols, nsp)) == NULL)
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
			t->is_view = kind[0] == 'v';
			t->fts = kind[0] == 'x';
			t->hidden = t->fts || strncmp(tname, "sluice_", 7) == 0;
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
		c->kind = d->kind_of(c->type);
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
schema_load_fks(struct rest_schema *sc, struct db *db, const struct rest_dialect *d,
    const char *nsp)
{
	struct db_stmt *st;
	struct rest_fk *fk = NULL;
	int rc, cap = 0;
	char last[256] = "";

	if ((st = schema_prepare(db, d, d->schema_fks, nsp)) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *name = schema_text(st, 0), *from = schema_text(st, 1);
		const char *to = schema_text(st, 2), *fc = schema_text(st, 3);
		const char *tc = schema_text(st, 4);
		char key[256];
		int ti, fi;

		if (snprintf(key, sizeof(key), "%s.%s", from, name) >= (int)sizeof(key))
			continue;
		if ((fi = schema_table_any(sc, from)) < 0 || (ti = schema_table_any(sc, to)) < 0 ||
		    sc->tables == NULL)
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
 * A statement takes as many parameters as the highest it names, and every argument of a
 * call is bound (rpc.c): a body that does not name its last argument (the nargs-th) is
 * wrapped to name it where it changes nothing.  Malloc'd, or NULL.
 */
static char *
schema_lite_wrap(const char *body, int nargs)
{
	struct buf b;
	char *out = NULL;

	buf_init(&b, 1024 * 1024);
	buf_printf(&b, "SELECT * FROM (%s) WHERE $%d IS NULL OR 1", body, nargs);
	if (!buf_failed(&b) && b.data != NULL)
		out = schema_strdup(b.data);
	buf_free(&b);
	return out;
}

/* 1 when an SQLite function's body writes: it begins with INSERT, UPDATE, DELETE or
 * REPLACE (then it ends with RETURNING, its rows; rpc.c runs it on its own). */
static int
schema_lite_writes(const char *body)
{
	static const char *const verbs[] = { "insert", "update", "delete", "replace" };
	size_t i;

	while (isspace((unsigned char)*body))
		body++;
	for (i = 0; i < sizeof(verbs) / sizeof(verbs[0]); i++)
		if (strncasecmp(body, verbs[i], strlen(verbs[i])) == 0 &&
		    !isalnum((unsigned char)body[strlen(verbs[i])]))
			return 1;
	return 0;
}

/*
 * SQLite function bodies use :name parameters; they become $k (the k-th argument) cast to
 * the declared type, so that "a + b" adds integers whatever text the request bound.
 * String literals, quoted identifiers and comments are copied untouched.
 */
static char *
schema_lite_body(const char *body, const struct rest_func *f, const struct rest_dialect *d)
{
	struct buf b;
	const char *p = body;
	char *out = NULL;
	int last = 0;		/* the highest argument the body names, 1-based */

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
			/* argnames[i] is set for every i below nargs; the analyzer cannot tell
			 * now that the argument format is the dialect's. */
			for (i = 0; i < f->nargs; i++)
				if (f->argnames[i] != NULL && strlen(f->argnames[i]) == len &&
				    !strncmp(f->argnames[i], s, len))
					k = i;
			if (k < 0)
				goto out;
			if (k + 1 > last)
				last = k + 1;
			switch (d->kind_of(f->argtypes[k])) {
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
		out = last < f->nargs ? schema_lite_wrap(b.data, f->nargs) : schema_strdup(b.data);
out:
	buf_free(&b);
	return out;
}

/* Splits a dialect's argument list into names[] and types[] (malloc'd, at most max);
 * returns the count, or -1 with nothing left allocated. */
static int
schema_args(const struct rest_dialect *d, const char *args, char **names, char **types,
    int max)
{
	char *parts[2 * 64];
	int n, i, k = 0;

	if (max > 64)
		max = 64;
	if (d->schema_args_sep != ',') {
		/* PostgreSQL: name US type US name US type ... */
		if ((n = schema_split(args, d->schema_args_sep, parts, 2 * max)) < 0)
			return -1;
		for (i = 0; i + 1 < n; i += 2) {
			names[k] = parts[i];
			types[k++] = parts[i + 1];
		}
		if (n % 2)
			free(parts[n - 1]);
		return k;
	}
	/* SQLite: "a integer, b integer". */
	if ((n = schema_split(args, ',', parts, max)) < 0)
		return -1;
	for (i = 0; i < n; i++) {
		char *sp;

		schema_trim(parts[i]);
		sp = strchr(parts[i], ' ');
		types[k] = schema_strdup(sp ? sp + 1 : "text");
		if (sp != NULL)
			*sp = '\0';
		names[k++] = parts[i];
		if (types[k - 1] == NULL) {
			/* The parts not handed out yet are still ours. */
			while (++i < n)
				free(parts[i]);
			while (k > 0) {
				free(names[--k]);
				free(types[k]);
			}
			return -1;
		}
		schema_trim(types[k - 1]);
	}
	return k;
}

/*
 * SQLite's argument defaults: "b integer default 10", "s text default ''", "x text
 * default null" in sluice_functions.args.  Each type loses its " default LITERAL", whose
 * value goes to f->argdefaults (a quoted string unquoted, null as NULL, a number as
 * written); the trailing arguments that have one may be left out (f->ndefaults).  0; 1
 * when a default is no such literal (logged: the function is left out); -1 when memory
 * ran out.
 */
static int
schema_lite_defaults(struct rest_func *f)
{
	int i;

	for (i = 0; i < f->nargs; i++) {
		char *t = f->argtypes[i], *v, *o;
		size_t k;

		for (k = 0; t[k] != '\0' && strncasecmp(t + k, " default ", 9) != 0; k++)
			continue;
		if (t[k] == '\0') {
			f->ndefaults = 0;
			continue;
		}
		if (f->argdefaults == NULL &&
		    (f->argdefaults = calloc((size_t)f->nargs, sizeof(char *))) == NULL)
			return -1;
		t[k] = '\0';
		v = t + k + 9;
		schema_trim(v);
		f->ndefaults++;
		if (strcasecmp(v, "null") == 0)
			continue;
		if ((f->argdefaults[i] = schema_strdup(v)) == NULL)
			return -1;
		if (*v != '\'') {
			/* A number: -?digits(.digits)? */
			o = v + (*v == '-');
			if (!isdigit((unsigned char)*o))
				goto bad;
			while (isdigit((unsigned char)*o))
				o++;
			if (*o == '.' && isdigit((unsigned char)o[1]))
				for (o++; isdigit((unsigned char)*o); o++)
					continue;
			if (*o != '\0')
				goto bad;
			continue;
		}
		/* 'it''s' -> it's */
		for (o = f->argdefaults[i], v++; *v != '\0'; v++) {
			if (*v == '\'' && v[1] != '\'')
				break;
			*o++ = *v;
			if (*v == '\'')
				v++;
		}
		*o = '\0';
		if (*v != '\'' || v[1] != '\0')
			goto bad;
	}
	return 0;
bad:
	log_warn("rest: function %s: the default of %s is no literal", f->name, f->argnames[i]);
	return 1;
}

/* The columns of an anonymous record returned by a function (RETURNS TABLE(...), OUT
 * parameters): a hidden table of the function's name, so that select=, filters and order
 * apply to them as to a table's.  Its index, or -1 when memory ran out. */
static int
schema_add_record(struct rest_schema *sc, const struct rest_dialect *d, const char *name,
    const char *cols)
{
	char *names[64], *types[64];
	struct rest_table *t;
	void *p;
	int n, i;

	if ((n = schema_args(d, cols, names, types, 64)) < 0)
		return -1;
	if ((p = realloc(sc->tables, (size_t)(sc->ntables + 1) * sizeof(*t))) == NULL)
		goto fail;
	sc->tables = p;
	t = &sc->tables[sc->ntables];
	memset(t, 0, sizeof(*t));
	t->hidden = 1;
	if ((t->name = schema_strdup(name)) == NULL)
		goto fail;
	if ((t->cols = calloc((size_t)n + 1, sizeof(*t->cols))) == NULL) {
		free(t->name);
		goto fail;
	}
	for (i = 0; i < n; i++) {
		t->cols[i].name = names[i];
		t->cols[i].type = types[i];
		t->cols[i].kind = d->kind_of(types[i]);
	}
	t->ncols = n;
	return sc->ntables++;
fail:
	for (i = 0; i < n; i++) {
		free(names[i]);
		free(types[i]);
	}
	return -1;
}

/*
 * A computed field: f takes one argument of a table's row type and returns one value
 * (not a set, not void).  It becomes a column of that table after its real ones (see
 * struct rest_table).  0, or -1 when memory ran out.
 */
static int
schema_add_computed(struct rest_schema *sc, const struct rest_dialect *d,
    const struct rest_func *f, const char *rettype)
{
	struct rest_table *t;
	struct rest_col *c;
	void *p;
	int ti;

	if (f->nargs != 1 || f->retset || f->retvoid || f->rettable >= 0 || *rettype == '\0' ||
	    (ti = rest_schema_table(sc, f->argtypes[0])) < 0)
		return 0;
	t = &sc->tables[ti];
	if (rest_schema_col(t, f->name) >= 0 || t->ncols + t->ncomputed >= SCHEMA_COLS_MAX)
		return 0;
	if ((p = realloc(t->cols, (size_t)(t->ncols + t->ncomputed + 1) * sizeof(*c))) == NULL)
		return -1;
	t->cols = p;
	c = &t->cols[t->ncols + t->ncomputed];
	memset(c, 0, sizeof(*c));
	c->name = schema_strdup(f->name);
	c->type = schema_strdup(rettype);
	if (c->name == NULL || c->type == NULL) {
		free(c->name);
		free(c->type);
		return -1;
	}
	c->kind = d->kind_of(rettype);
	t->ncomputed++;
	return 0;
}

static int
schema_add_func(struct rest_schema *sc, const struct rest_dialect *d, int *cap,
    struct db_stmt *st)
{
	const char *name = schema_text(st, 0), *args = schema_text(st, 1);
	const char *rettable = schema_text(st, 3), *body = db_column_text(st, 4, NULL);
	const char *record = schema_text(st, 7);
	struct rest_func *f;
	int i, bad = 0;

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
	if ((f->nargs = schema_args(d, args, f->argnames, f->argtypes, 64)) < 0) {
		f->nargs = 0;
		return -1;
	}
	f->retset = (int)db_column_int(st, 2);
	f->ndefaults = (int)db_column_int(st, 5);
	if (f->ndefaults < 0 || f->ndefaults > f->nargs)
		f->ndefaults = 0;
	if (d->schema_args_sep == ',' && (bad = schema_lite_defaults(f)) < 0)
		return -1;
	f->retvoid = (int)db_column_int(st, 6);
	f->may_write = (int)db_column_int(st, 9);
	/* PostgreSQL names the type returned in its own column, SQLite's scalar one is
	 * its returns as written. */
	if ((f->rettype = schema_strdup(*schema_text(st, 8) != '\0' ? schema_text(st, 8) :
	    rettable)) == NULL)
		return -1;
	if (*record != '\0') {
		if ((f->rettable = schema_add_record(sc, d, name, record)) < 0)
			return -1;
	} else if (*rettable != '\0')
		f->rettable = schema_table_any(sc, rettable);
	if (schema_add_computed(sc, d, f, schema_text(st, 8)) < 0)
		return -1;
	if (!bad && body != NULL && (f->body = schema_lite_body(body, f, d)) == NULL) {
		log_warn("rest: function %s: its body names an unknown parameter", name);
		bad = 1;
	}
	if (!bad && body != NULL && (f->writes = schema_lite_writes(body)) &&
	    strncmp(f->body, "SELECT * FROM (", 15) == 0) {
		/* schema_lite_body() wrapped it: a write cannot be a subquery. */
		log_warn("rest: function %s: a body that writes must name its last "
		    "argument", name);
		bad = 1;
	}
	if (f->writes)
		f->may_write = 1;
	if (bad) {
		sc->nfuncs--;
		for (i = 0; i < f->nargs; i++) {
			free(f->argnames[i]);
			free(f->argtypes[i]);
			if (f->argdefaults != NULL)
				free(f->argdefaults[i]);
		}
		free(f->argdefaults);
		free(f->argnames);
		free(f->argtypes);
		free(f->name);
		free(f->rettype);
	}
	return 0;
}

static int
schema_load_funcs(struct rest_schema *sc, struct db *db, const struct rest_dialect *d,
    const char *nsp)
{
	struct db_stmt *st;
	int rc, cap = 0;

	if (d->schema_funcs_table != NULL && schema_table_any(sc, d->schema_funcs_table) < 0)
		return 0;
	if ((st = schema_prepare(db, d, d->schema_funcs, nsp)) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW)
		if (schema_add_func(sc, d, &cap, st) < 0) {
			db_reset(st);
			return -1;
		}
	return rc == DB_DONE ? 0 : -1;
}

/* Whether the key's columns are exactly the n columns cols, in any order. */
static int
schema_fk_cols_are(const struct rest_fk *fk, const int *cols, int n)
{
	int i, j, hit;

	if (n != fk->ncols)
		return 0;
	for (i = 0; i < n; i++) {
		for (hit = 0, j = 0; j < n; j++)
			hit |= fk->from_cols[i] == cols[j];
		if (!hit)
			return 0;
	}
	return 1;
}

/* Marks the keys of table t whose columns are the n columns cols (a unique key). */
static void
schema_mark_unique(struct rest_schema *sc, int t, const int *cols, int n)
{
	int i;

	for (i = 0; i < sc->nfks; i++)
		if (sc->fks[i].from == t && schema_fk_cols_are(&sc->fks[i], cols, n))
			sc->fks[i].unique = 1;
}

/*
 * One-to-one keys: a key whose columns are the primary key or a unique constraint of its
 * table (as PostgREST: a unique index that is no constraint does not count).
 */
static int
schema_load_uniques(struct rest_schema *sc, struct db *db, const struct rest_dialect *d,
    const char *nsp)
{
	struct db_stmt *st;
	int rc, i, c, t = -1, n = 0, cols[REST_FK_COLS + 1];
	char last[512] = "";

	/* Primary keys from the columns: SQLite's INTEGER PRIMARY KEY has no index. */
	for (i = 0; i < sc->ntables; i++) {
		for (n = 0, c = 0; c < sc->tables[i].ncols; c++)
			if (sc->tables[i].cols[c].pk > 0 && n <= REST_FK_COLS)
				cols[n++] = c;
		if (n > 0)
			schema_mark_unique(sc, i, cols, n);
	}
	if ((st = schema_prepare(db, d, d->schema_uniques, nsp)) == NULL)
		return -1;
	n = 0;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *tname = schema_text(st, 0), *cname = schema_text(st, 1);
		char key[512];

		if (snprintf(key, sizeof(key), "%s.%s", tname, cname) >= (int)sizeof(key))
			continue;
		if (strcmp(key, last) != 0) {
			if (t >= 0 && n > 0)
				schema_mark_unique(sc, t, cols, n);
			memcpy(last, key, strlen(key) + 1);
			t = schema_table_any(sc, tname);
			n = 0;
		}
		if (t < 0)
			continue;
		if ((c = rest_schema_col(&sc->tables[t], schema_text(st, 2))) < 0 ||
		    n > REST_FK_COLS) {
			n = REST_FK_COLS + 1;	/* matches no key */
			continue;
		}
		cols[n++] = c;
	}
	if (rc != DB_DONE)
		return -1;
	if (t >= 0 && n > 0)
		schema_mark_unique(sc, t, cols, n);
	return 0;
}

/* A token of a CREATE TABLE statement: a name (quotes removed) or one character. */
struct ddl_tok {
	const char *p;		/* where scanning goes on */
	int name;		/* 1: a name or keyword in text; 0: the character text[0] */
	int cut;		/* the name did not fit in text */
	char text[256];
};

/* The next token after p; 0 at the end.  Strings and comments are skipped. */
static int
ddl_next(const char *p, struct ddl_tok *t)
{
	size_t n = 0;

	for (;;) {
		while (isspace((unsigned char)*p))
			p++;
		if (p[0] == '-' && p[1] == '-') {
			while (*p != '\0' && *p != '\n')
				p++;
		} else if (p[0] == '/' && p[1] == '*') {
			for (p += 2; *p != '\0' && !(p[0] == '*' && p[1] == '/'); p++)
				;
			p += *p != '\0' ? 2 : 0;
		} else if (*p == '\'') {
			for (p++; *p != '\0'; p++)
				if (*p == '\'' && *++p != '\'')
					break;
			t->name = 0;
			t->text[0] = '\'';
			t->text[1] = '\0';
			t->p = p;
			return 1;
		} else
			break;
	}
	if (*p == '\0')
		return 0;
	t->name = 1;
	t->cut = 0;
	if (*p == '"' || *p == '`' || *p == '[') {
		char close = *p == '[' ? ']' : *p;

		for (p++; *p != '\0'; p++) {
			if (*p == close) {
				if (close == ']' || p[1] != close) {
					p++;
					break;
				}
				p++;
			}
			if (n + 1 < sizeof(t->text))
				t->text[n++] = *p;
			else
				t->cut = 1;
		}
	} else if (isalnum((unsigned char)*p) || *p == '_' || *p == '$' ||
	    (unsigned char)*p >= 0x80) {
		while (isalnum((unsigned char)*p) || *p == '_' || *p == '$' ||
		    (unsigned char)*p >= 0x80) {
			if (n + 1 < sizeof(t->text))
				t->text[n++] = *p;
			else
				t->cut = 1;
			p++;
		}
	} else {
		t->name = 0;
		t->text[n++] = *p++;
	}
	t->text[n] = '\0';
	t->p = p;
	return 1;
}

static int
ddl_is(const struct ddl_tok *t, const char *kw)
{
	return t->name && strcasecmp(t->text, kw) == 0;
}

/* Whether the columns listed are cols, in order, and the referenced table is reftable. */
static int
ddl_fk_fits(char list[][256], int nlist, const char *ref, const char *const *cols,
    int ncols, const char *reftable)
{
	int i;

	if (nlist != ncols || strcasecmp(ref, reftable) != 0)
		return 0;
	for (i = 0; i < ncols; i++)
		if (strcasecmp(list[i], cols[i]) != 0)
			return 0;
	return 1;
}

/* After FOREIGN: "KEY ( col, ... ) REFERENCES", its columns into list[0..*nlist) and *pp
 * past REFERENCES.  1, or 0 when the DDL is not that. */
static int
ddl_foreign_key(const char **pp, char list[][256], int *nlist)
{
	struct ddl_tok t;
	const char *p = *pp;

	if (!ddl_next(p, &t) || !ddl_is(&t, "key") || !ddl_next(t.p, &t) || t.name ||
	    t.text[0] != '(')
		return 0;
	p = t.p;
	for (;;) {
		if (!ddl_next(p, &t))
			return 0;
		p = t.p;
		if (t.name) {
			if (*nlist == REST_FK_COLS)
				return 0;
			memcpy(list[(*nlist)++], t.text, sizeof(t.text));
		} else if (t.text[0] == ')')
			break;
		else if (t.text[0] != ',')
			return 0;
	}
	if (!ddl_next(p, &t) || !ddl_is(&t, "references"))
		return 0;
	*pp = t.p;
	return 1;
}

/* 1 when t begins a column's constraint other than REFERENCES (which ends a pending
 * CONSTRAINT name's reach). */
static int
ddl_other_constraint(const struct ddl_tok *t)
{
	static const char *const kw[] = { "primary", "unique", "check", "not", "null",
	    "default", "collate", "generated", "as" };
	size_t i;

	for (i = 0; i < sizeof(kw) / sizeof(kw[0]); i++)
		if (ddl_is(t, kw[i]))
			return 1;
	return 0;
}

int
rest_ddl_fk_name(const char *ddl, const char *const *cols, int ncols,
    const char *reftable, char *out, size_t outlen)
{
	struct ddl_tok t;
	const char *p = ddl;
	char colname[256] = "", pending[256] = "", list[REST_FK_COLS][256];
	int depth = 0, start = 0, nlist;

	while (ddl_next(p, &t)) {
		p = t.p;
		if (!t.name && t.text[0] == '(') {
			start = ++depth == 1;
			continue;
		}
		if (!t.name && t.text[0] == ')') {
			if (--depth <= 0)
				break;
			continue;
		}
		if (depth != 1)
			continue;
		if (!t.name && t.text[0] == ',') {
			start = 1;
			pending[0] = colname[0] = '\0';
			continue;
		}
		if (start) {
			/* A definition begins: a column's, or a table constraint. */
			start = 0;
			if (!ddl_is(&t, "constraint") && !ddl_is(&t, "primary") &&
			    !ddl_is(&t, "unique") && !ddl_is(&t, "check") &&
			    !ddl_is(&t, "foreign")) {
				(void)snprintf(colname, sizeof(colname), "%s", t.text);
				continue;
			}
		}
		if (ddl_is(&t, "constraint")) {
			if (!ddl_next(p, &t) || !t.name)
				return 0;
			p = t.p;
			/* A name cut short is not the name: none, then. */
			(void)snprintf(pending, sizeof(pending), "%s", t.cut ? "" : t.text);
			continue;
		}
		nlist = 0;
		if (ddl_is(&t, "foreign")) {
			if (!ddl_foreign_key(&p, list, &nlist))
				return 0;
		} else if (ddl_is(&t, "references") && colname[0] != '\0') {
			memcpy(list[nlist++], colname, sizeof(colname));
		} else {
			/* Any other constraint takes the pending name. */
			if (ddl_other_constraint(&t))
				pending[0] = '\0';
			continue;
		}
		/* After REFERENCES: the table (no schema in SQLite's DDL but "main."). */
		if (!ddl_next(p, &t) || !t.name)
			return 0;
		p = t.p;
		if (ddl_fk_fits(list, nlist, t.text, cols, ncols, reftable) &&
		    pending[0] != '\0') {
			if (strlen(pending) >= outlen)
				return 0;
			memcpy(out, pending, strlen(pending) + 1);
			return 1;
		}
		pending[0] = '\0';
	}
	return 0;
}

/* Orders the keys by table and name, as PostgreSQL's catalog query gives them (in
 * place: a handful of keys, loaded once). */
static void
schema_sort_fks(struct rest_schema *sc)
{
	int i, j;

	for (i = 1; i < sc->nfks; i++) {
		struct rest_fk k = sc->fks[i];

		for (j = i; j > 0; j--) {
			const struct rest_fk *o = &sc->fks[j - 1];
			int c = strcmp(sc->tables[o->from].name, sc->tables[k.from].name);

			if (c < 0 || (c == 0 && strcmp(o->name, k.name) <= 0))
				break;
			sc->fks[j] = sc->fks[j - 1];
		}
		sc->fks[j] = k;
	}
}

/* Whether the DDL ends with WITHOUT ROWID (its options follow the last parenthesis). */
static int
schema_without_rowid(const char *ddl)
{
	const char *p = strrchr(ddl, ')');
	struct ddl_tok t;

	if (p == NULL)
		return 0;
	for (p++; ddl_next(p, &t); p = t.p)
		if (ddl_is(&t, "without"))
			return 1;
	return 0;
}

/*
 * SQLite: the keys' names from the tables' DDL (pragma_foreign_key_list has none), or
 * PostgreSQL's default name, table_col1_col2_fkey; and which tables are rowid tables.
 */
static int
schema_load_ddl(struct rest_schema *sc, struct db *db, const struct rest_dialect *d)
{
	struct db_stmt *st;
	int rc, i, j;

	if (d->schema_ddl == NULL)
		return 0;
	if ((st = db_prepare(db, d->schema_ddl)) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *tname = schema_text(st, 0), *ddl = schema_text(st, 1);
		struct rest_table *t;
		int ti = schema_table_any(sc, tname);

		if (ti < 0 || sc->tables == NULL)
			continue;
		t = &sc->tables[ti];
		t->rowid = !t->is_view && !schema_without_rowid(ddl) &&
		    rest_schema_col(t, "rowid") < 0;
		for (i = 0; i < sc->nfks; i++) {
			struct rest_fk *fk = &sc->fks[i];
			const char *cols[REST_FK_COLS];
			char name[256];
			struct buf b;
			char *p;

			if (fk->from != ti)
				continue;
			for (j = 0; j < fk->ncols; j++)
				cols[j] = t->cols[fk->from_cols[j]].name;
			buf_init(&b, 4096);
			if (rest_ddl_fk_name(ddl, cols, fk->ncols, sc->tables[fk->to].name,
			    name, sizeof(name)))
				buf_puts(&b, name);
			else {
				buf_puts(&b, tname);
				for (j = 0; j < fk->ncols; j++)
					buf_printf(&b, "_%s", cols[j]);
				buf_puts(&b, "_fkey");
			}
			p = buf_failed(&b) || b.data == NULL ? NULL : schema_strdup(b.data);
			buf_free(&b);
			if (p == NULL) {
				db_reset(st);
				return -1;
			}
			free(fk->name);
			fk->name = p;
		}
	}
	if (rc != DB_DONE)
		return -1;
	schema_sort_fks(sc);
	return 0;
}

/* A view's column that shows base column bc of table b. */
struct view_col {
	int v, vc, b, bc;
};

/* The column of view v showing column c of table t, or -1. */
static int
schema_view_col(const struct view_col *vcs, int n, int v, int t, int c)
{
	int i;

	for (i = 0; i < n; i++)
		if (vcs[i].v == v && vcs[i].b == t && vcs[i].bc == c)
			return vcs[i].vc;
	return -1;
}

/* Whether view v shows all the columns cols (n) of table t; into out. */
static int
schema_view_shows(const struct view_col *vcs, int nvc, int v, int t, const int *cols, int n,
    int *out)
{
	int i;

	for (i = 0; i < n; i++)
		if ((out[i] = schema_view_col(vcs, nvc, v, t, cols[i])) < 0)
			return 0;
	return 1;
}

/* Appends a copy of the key model going from `from` (columns fc) to `to` (columns tc). */
static int
schema_add_view_fk(struct rest_schema *sc, int *cap, const struct rest_fk *model, int from,
    const int *fc, int to, const int *tc)
{
	struct rest_fk *fk;

	if (sc->nfks == SCHEMA_FKS_MAX)
		return 0;
	if (sc->nfks == *cap) {
		void *p;

		*cap = *cap ? *cap * 2 : 32;
		if ((p = realloc(sc->fks, (size_t)*cap * sizeof(*fk))) == NULL)
			return -1;
		sc->fks = p;
	}
	fk = &sc->fks[sc->nfks];
	*fk = *model;
	if ((fk->name = schema_strdup(model->name)) == NULL)
		return -1;
	fk->from = from;
	fk->to = to;
	memcpy(fk->from_cols, fc, sizeof(fk->from_cols));
	memcpy(fk->to_cols, tc, sizeof(fk->to_cols));
	sc->nfks++;
	return 0;
}

/* A view over a view: each of vcs[0..n) followed down to the base table's column (a
 * few levels). */
static void
schema_view_cols_down(const struct rest_schema *sc, struct view_col *vcs, int n)
{
	int i, j, k;

	for (k = 0; k < 8; k++)
		for (i = 0; i < n; i++) {
			if (!sc->tables[vcs[i].b].is_view)
				continue;
			for (j = 0; j < n; j++)
				if (vcs[j].v == vcs[i].b && vcs[j].vc == vcs[i].bc) {
					vcs[i].b = vcs[j].b;
					vcs[i].bc = vcs[j].bc;
					break;
				}
		}
}

/*
 * PostgreSQL: the foreign keys of views.  Each key from table A to table B is added from
 * every view of A that shows the key's columns to B, from A to every view of B that shows
 * the referenced columns, and between those views, under the key's name.
 */
static int
schema_load_view_fks(struct rest_schema *sc, struct db *db, const struct rest_dialect *d,
    const char *nsp)
{
	struct db_stmt *st;
	struct view_col *vcs = NULL;
	int rc, n = 0, capv = 0, cap, nf0 = sc->nfks, i, v, w, status = -1;

	if (d->schema_view_cols == NULL || nf0 == 0)
		return 0;
	cap = nf0;	/* the array is full: the first key added grows it */
	if ((st = schema_prepare(db, d, d->schema_view_cols, nsp)) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		struct view_col vc;

		vc.v = schema_table_any(sc, schema_text(st, 0));
		vc.b = schema_table_any(sc, schema_text(st, 2));
		if (vc.v < 0 || vc.b < 0 || n == SCHEMA_FKS_MAX)
			continue;
		vc.vc = rest_schema_col(&sc->tables[vc.v], schema_text(st, 1));
		vc.bc = rest_schema_col(&sc->tables[vc.b], schema_text(st, 3));
		if (vc.vc < 0 || vc.bc < 0)
			continue;
		if (n == capv) {
			void *p;

			capv = capv ? capv * 2 : 64;
			if ((p = realloc(vcs, (size_t)capv * sizeof(*vcs))) == NULL) {
				db_reset(st);
				goto out;
			}
			vcs = p;
		}
		vcs[n++] = vc;
	}
	if (rc != DB_DONE)
		goto out;
	schema_view_cols_down(sc, vcs, n);
	for (i = 0; i < nf0; i++) {
		struct rest_fk model = sc->fks[i];
		int vf[REST_FK_COLS], wt[REST_FK_COLS];

		for (v = 0; v < sc->ntables; v++) {
			if (!sc->tables[v].is_view || !schema_view_shows(vcs, n, v, model.from,
			    model.from_cols, model.ncols, vf))
				continue;
			if (schema_add_view_fk(sc, &cap, &model, v, vf, model.to,
			    model.to_cols) < 0)
				goto out;
		}
		for (w = 0; w < sc->ntables; w++) {
			if (!sc->tables[w].is_view || !schema_view_shows(vcs, n, w, model.to,
			    model.to_cols, model.ncols, wt))
				continue;
			if (schema_add_view_fk(sc, &cap, &model, model.from, model.from_cols,
			    w, wt) < 0)
				goto out;
			for (v = 0; v < sc->ntables; v++)
				if (sc->tables[v].is_view && schema_view_shows(vcs, n, v,
				    model.from, model.from_cols, model.ncols, vf) &&
				    schema_add_view_fk(sc, &cap, &model, v, vf, w, wt) < 0)
					goto out;
		}
	}
	status = 0;
out:
	free(vcs);
	return status;
}

/*
 * The comments of tables, views, their columns and functions (COMMENT ON, or SQLite's
 * optional sluice_comments table), kept for the OpenAPI document only.  A comment naming
 * nothing the schema holds is left out.  0, or -1 when the database or memory failed.
 */
static int
schema_load_comments(struct rest_schema *sc, struct db *db, const struct rest_dialect *d,
    const char *nsp)
{
	struct db_stmt *st;
	int rc;

	if (d->schema_comments == NULL || (d->schema_comments_table != NULL &&
	    schema_table_any(sc, d->schema_comments_table) < 0))
		return 0;
	if ((st = schema_prepare(db, d, d->schema_comments, nsp)) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *kind = schema_text(st, 0), *name = schema_text(st, 1);
		const char *col = schema_text(st, 2), *text = schema_text(st, 3);
		char **to = NULL;
		int ti, ci;

		if (*kind != 'f' && (ti = schema_table_any(sc, name)) >= 0 &&
		    sc->tables != NULL && !sc->tables[ti].hidden) {
			if (*col == '\0')
				to = &sc->tables[ti].comment;
			else if ((ci = rest_schema_col(&sc->tables[ti], col)) >= 0)
				to = &sc->tables[ti].cols[ci].comment;
		} else if (*kind != 'r' && *col == '\0') {
			for (ti = 0; ti < sc->nfuncs; ti++)
				if (strcmp(sc->funcs[ti].name, name) == 0)
					to = &sc->funcs[ti].comment;
		}
		if (to == NULL || *to != NULL || *text == '\0')
			continue;
		if ((*to = schema_strdup(text)) == NULL) {
			db_reset(st);
			return -1;
		}
	}
	return rc == DB_DONE ? 0 : -1;
}

/* PostGIS's ST_AsGeoJSON(record), for Accept: application/geo+json, where the dialect
 * has it and the database holds it.  0, or -1 when the database or memory failed. */
static int
schema_load_geojson(struct rest_schema *sc, struct db *db, const struct rest_dialect *d)
{
	struct db_stmt *st;
	int rc;

	if (d->schema_geojson == NULL)
		return 0;
	if ((st = db_prepare(db, d->schema_geojson)) == NULL)
		return -1;
	if ((rc = db_step(st)) == DB_ROW) {
		sc->geojson = schema_strdup(schema_text(st, 0));
		db_reset(st);
		return sc->geojson != NULL ? 0 : -1;
	}
	return rc == DB_DONE ? 0 : -1;
}

struct rest_schema *
rest_schema_load(struct db *db, const struct rest_dialect *d, const char *nsp)
{
	struct rest_schema *sc;

	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return NULL;
	if (schema_load_cols(sc, db, d, nsp) < 0 || schema_load_fks(sc, db, d, nsp) < 0 ||
	    schema_load_ddl(sc, db, d) < 0 || schema_load_uniques(sc, db, d, nsp) < 0 ||
	    schema_load_view_fks(sc, db, d, nsp) < 0 || schema_load_funcs(sc, db, d, nsp) < 0 ||
	    schema_load_comments(sc, db, d, nsp) < 0 || schema_load_geojson(sc, db, d) < 0 ||
	    rest_schema_lite_reads(sc, db) < 0) {
		rest_schema_free(sc);
		return NULL;
	}
	log_debug("rest: %d relations, %d foreign keys, %d functions", sc->ntables, sc->nfks,
	    sc->nfuncs);
	return sc;
}
