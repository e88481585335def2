/*
 * reads.c: the tables an SQLite function's body reads.
 *
 * A PostgreSQL function runs with its caller's rights unless it says otherwise (SECURITY
 * INVOKER, the default): whoever calls ret_artists() needs EXECUTE on it and SELECT on
 * artist, or the call fails with 42501.  SQLite's functions are the rows of
 * sluice_functions and its grants are rest_grants (grants.c); for the same answer, the
 * caller's role must be allowed to read every table the function's body reads, and this
 * file finds them, once, when the schema is loaded.
 *
 * SQLite says it itself: the body's program (EXPLAIN) opens a read cursor (OpenRead) on
 * the root page of every table or index it reads, and sqlite_schema says whose page it
 * is.  A view in the body is expanded into its tables there, so its tables count (a grant
 * on the view alone is not enough, unlike PostgreSQL, where a view reads with its
 * owner's rights).  Cursors on the temporary or an attached database (p3 != 0) and
 * table-valued functions (json_each(), virtual tables) name no table of the main
 * database and are not counted.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "rest.h"

/* sqlite_schema's root pages: whose table each is (an index's page is its table's). */
struct reads_pages {
	struct reads_page {
		int64_t page;
		char *table;
	} *v;
	int n;
};

static void
reads_pages_free(struct reads_pages *p)
{
	int i;

	for (i = 0; i < p->n; i++)
		free(p->v[i].table);
	free(p->v);
}

static int
reads_pages_load(struct reads_pages *p, struct db *db)
{
	struct db_stmt *st;
	int rc, cap = 0;

	memset(p, 0, sizeof(*p));
	if ((st = db_prepare(db, "select rootpage, tbl_name from sqlite_schema "
	    "where rootpage > 0")) == NULL)
		return -1;
	while ((rc = db_step(st)) == DB_ROW) {
		const char *t = db_column_text(st, 1, NULL);

		if (p->n == cap) {
			void *v = realloc(p->v, (size_t)(cap ? cap * 2 : 64) * sizeof(*p->v));

			if (v == NULL)
				break;
			p->v = v;
			cap = cap ? cap * 2 : 64;
		}
		if ((p->v[p->n].table = strdup(t != NULL ? t : "")) == NULL)
			break;
		p->v[p->n++].page = db_column_int(st, 0);
	}
	if (rc == DB_ROW)
		db_reset(st);
	return rc == DB_DONE ? 0 : -1;
}

static const char *
reads_page_table(const struct reads_pages *p, int64_t page)
{
	int i;

	for (i = 0; i < p->n; i++)
		if (p->v[i].page == page)
			return p->v[i].table;
	return NULL;
}

/* Adds table name to f's reads once; -1 when memory runs out. */
static int
reads_add(struct rest_func *f, const char *name)
{
	char **r;
	int i;

	for (i = 0; i < f->nreads; i++)
		if (strcmp(f->reads[i], name) == 0)
			return 0;
	if ((r = realloc(f->reads, (size_t)(f->nreads + 1) * sizeof(*r))) == NULL)
		return -1;
	f->reads = r;
	if ((r[f->nreads] = strdup(name)) == NULL)
		return -1;
	f->nreads++;
	return 0;
}

/*
 * The tables f's body reads, from its program; f->reads_unknown when they cannot all be
 * told (the body does not compile, a page nobody owns): nobody under rest_grants may call
 * it.  0, or -1 when memory runs out.
 */
static int
reads_func(struct rest_func *f, struct db *db, const struct reads_pages *p)
{
	struct db_stmt *st;
	const char *op, *t;
	int64_t page;
	char *sql;
	size_t n = strlen(f->body);
	int rc, status = 0;

	if ((sql = malloc(n + sizeof("explain "))) == NULL)
		return -1;
	memcpy(sql, "explain ", 8);
	memcpy(sql + 8, f->body, n + 1);
	st = db_prepare(db, sql);
	free(sql);
	if (st == NULL) {
		log_warn("rest: function %s: its body does not compile: %s", f->name,
		    db_errmsg(db));
		f->reads_unknown = 1;
		return 0;
	}
	/* Columns: addr, opcode, p1, p2, p3, p4, p5, comment. */
	while ((rc = db_step(st)) == DB_ROW) {
		op = db_column_text(st, 1, NULL);
		if (op == NULL || strcmp(op, "OpenRead") != 0 || db_column_int(st, 4) != 0)
			continue;
		/* Page 1 is sqlite_schema's own, which it does not list. */
		page = db_column_int(st, 3);
		if ((t = reads_page_table(p, page)) == NULL)
			f->reads_unknown |= page != 1;
		else if (reads_add(f, t) < 0) {
			status = -1;
			break;
		}
	}
	if (rc == DB_ROW)
		db_reset(st);
	else if (rc != DB_DONE) {
		log_warn("rest: function %s: its body's program: %s", f->name, db_errmsg(db));
		f->reads_unknown = 1;
	}
	return status;
}

int
rest_schema_lite_reads(struct rest_schema *sc, struct db *db)
{
	struct reads_pages p;
	int i, status = 0, any = 0;

	for (i = 0; i < sc->nfuncs; i++)
		any |= sc->funcs[i].body != NULL;
	if (!any)
		return 0;
	if (reads_pages_load(&p, db) < 0) {
		reads_pages_free(&p);
		return -1;
	}
	for (i = 0; i < sc->nfuncs && status == 0; i++)
		if (sc->funcs[i].body != NULL && reads_func(&sc->funcs[i], db, &p) < 0)
			status = -1;
	reads_pages_free(&p);
	return status;
}
