/*
 * schema.c: what the rest endpoint may serve, read from the database itself.
 *
 * PostgreSQL: the tables, views and their columns of one schema (pg_class,
 * pg_attribute, pg_attrdef, pg_index), the foreign keys (pg_constraint) and the
 * functions (pg_proc): their IN arguments and defaults, and the columns of those returning
 * TABLE(...) or OUT parameters (a hidden table each); a function of one table's row
 * returning one value is also that table's computed field.  SQLite: sqlite_master with pragma_table_info
 * and pragma_foreign_key_list, and the functions declared in the project's own table
 * sluice_functions(name, args, returns, volatility, body), whose body is one SELECT with
 * :name parameters.  A name from a request is only ever used after it matched an entry of
 * this schema.
 *
 * The catalog queries and the reading of declared types are the dialect's (dialect.c);
 * every query gives its rows in the same shape, so that one loader reads both.  The
 * schema belongs to one connection (one thread), so it needs no locking.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rest.h"

#define SCHEMA_TABLES_MAX	4096
#define SCHEMA_COLS_MAX		1600

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
schema_lite_body(const char *body, const struct rest_func *f, const struct rest_dialect *d)
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
			/* argnames[i] is set for every i below nargs; the analyzer cannot tell
			 * now that the argument format is the dialect's. */
			for (i = 0; i < f->nargs; i++)
				if (f->argnames[i] != NULL && strlen(f->argnames[i]) == len &&
				    !strncmp(f->argnames[i], s, len))
					k = i;
			if (k < 0)
				goto out;
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
		out = schema_strdup(b.data);
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
	int i;

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
	f->retvoid = (int)db_column_int(st, 6);
	if (*record != '\0') {
		if ((f->rettable = schema_add_record(sc, d, name, record)) < 0)
			return -1;
	} else if (*rettable != '\0')
		f->rettable = schema_table_any(sc, rettable);
	if (schema_add_computed(sc, d, f, schema_text(st, 8)) < 0)
		return -1;
	if (body != NULL && (f->body = schema_lite_body(body, f, d)) == NULL) {
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

struct rest_schema *
rest_schema_load(struct db *db, const struct rest_dialect *d, const char *nsp)
{
	struct rest_schema *sc;

	if ((sc = calloc(1, sizeof(*sc))) == NULL)
		return NULL;
	if (schema_load_cols(sc, db, d, nsp) < 0 || schema_load_fks(sc, db, d, nsp) < 0 ||
	    schema_load_funcs(sc, db, d, nsp) < 0) {
		rest_schema_free(sc);
		return NULL;
	}
	log_debug("rest: %d relations, %d foreign keys, %d functions", sc->ntables, sc->nfks,
	    sc->nfuncs);
	return sc;
}
