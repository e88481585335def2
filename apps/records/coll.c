/*
 * coll.c: see coll.h.  The declarations are parsed once per connection (a worker thread's
 * first request, and the first after a SIGHUP), so clarity wins over speed here.
 */
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "coll.h"
#include "sqlb.h"
#include "str.h"

static const char *const coll_type_names[COLL_TYPE__MAX] = {
	"text", "number", "bool", "email", "url", "date", "autodate", "select", "relation",
	"json", "password",
};

/* 1 when s[0..len) is a valid name: [A-Za-z_][A-Za-z0-9_]*, shorter than COLL_NAME_MAX. */
static int
coll_name_valid(const char *s, size_t len)
{
	size_t i;

	if (len == 0 || len >= COLL_NAME_MAX)
		return 0;
	for (i = 0; i < len; i++) {
		unsigned char ch = (unsigned char)s[i];

		if (!(isalpha(ch) || ch == '_' || (i > 0 && isdigit(ch))) || ch >= 0x80)
			return 0;
	}
	return 1;
}

int
coll_quote(struct buf *b, const char *name)
{
	buf_putc(b, '"');
	buf_puts(b, name);
	return buf_putc(b, '"');
}

/* Adds a field; returns it, or NULL (with err) when the collection is full or the name
 * is taken or invalid. */
static struct coll_field *
coll_add(struct coll *c, const char *name, size_t len, enum coll_type type, char *err,
    size_t errlen)
{
	struct coll_field *f;

	if (!coll_name_valid(name, len)) {
		(void)snprintf(err, errlen, "%s: bad field name \"%.*s\"", c->name, (int)len, name);
		return NULL;
	}
	if (coll_field(c, name, len) != NULL || c->nfields >= COLL_FIELDS_MAX) {
		(void)snprintf(err, errlen, "%s: field \"%.*s\" twice, or too many fields", c->name,
		    (int)len, name);
		return NULL;
	}
	f = &c->fields[c->nfields++];
	memset(f, 0, sizeof(*f));
	memcpy(f->name, name, len);
	f->type = type;
	return f;
}

/* Applies one option word of a declaration to f.  0, or -1 with err set. */
static int
coll_option(struct coll *c, struct coll_field *f, const char *w, size_t len, char *err,
    size_t errlen)
{
	if (str_eq(w, len, "required"))
		f->required = 1;
	else if (str_eq(w, len, "unique"))
		f->unique = 1;
	else if (str_eq(w, len, "index"))
		f->index = 1;
	else if (str_eq(w, len, "multiple") &&
	    (f->type == COLL_SELECT || f->type == COLL_RELATION))
		f->multiple = 1;
	else if (str_eq(w, len, "onupdate") && f->type == COLL_AUTODATE)
		f->onupdate = 1;
	else if (len > 3 && strncmp(w, "to=", 3) == 0 && f->type == COLL_RELATION &&
	    coll_name_valid(w + 3, len - 3))
		memcpy(f->target, w + 3, len - 3);
	else if (len > 7 && strncmp(w, "values=", 7) == 0 && f->type == COLL_SELECT) {
		const char *p = w + 7, *end = w + len;

		while (p < end) {
			const char *bar = memchr(p, '|', (size_t)(end - p));
			size_t n = (size_t)((bar ? bar : end) - p);

			if (n == 0 || n >= COLL_NAME_MAX || f->nvalues >= COLL_VALUES_MAX)
				goto bad;
			memcpy(f->values[f->nvalues++], p, n);
			p += n + (bar != NULL);
		}
	} else
		goto bad;
	return 0;
bad:
	(void)snprintf(err, errlen, "%s.%s: bad option \"%.*s\"", c->name, f->name, (int)len, w);
	return -1;
}

/* Parses one "NAME TYPE OPTION..." line.  0, or -1 with err set. */
static int
coll_decl(struct coll *c, const char *s, size_t len, char *err, size_t errlen)
{
	const char *w[2 + COLL_VALUES_MAX];
	size_t wl[2 + COLL_VALUES_MAX], nw = 0, i;
	const char *p = s, *end = s + len;
	struct coll_field *f;
	int t;

	while (p < end) {
		while (p < end && isspace((unsigned char)*p))
			p++;
		if (p == end)
			break;
		if (nw == sizeof(w) / sizeof(w[0])) {
			(void)snprintf(err, errlen, "%s: a declaration is too long", c->name);
			return -1;
		}
		w[nw] = p;
		while (p < end && !isspace((unsigned char)*p))
			p++;
		wl[nw] = (size_t)(p - w[nw]);
		nw++;
	}
	if (nw == 0)
		return 0;
	if (nw < 2) {
		(void)snprintf(err, errlen, "%s: \"%.*s\" has no type", c->name, (int)len, s);
		return -1;
	}
	for (t = 0; t < COLL_TYPE__MAX; t++)
		if (str_eq(w[1], wl[1], coll_type_names[t]))
			break;
	if (t == COLL_TYPE__MAX || t == COLL_PASSWORD) {
		(void)snprintf(err, errlen, "%s: unknown type \"%.*s\"", c->name, (int)wl[1], w[1]);
		return -1;
	}
	if ((f = coll_add(c, w[0], wl[0], (enum coll_type)t, err, errlen)) == NULL)
		return -1;
	for (i = 2; i < nw; i++)
		if (coll_option(c, f, w[i], wl[i], err, errlen) < 0)
			return -1;
	if ((f->type == COLL_RELATION && f->target[0] == '\0') ||
	    (f->type == COLL_SELECT && f->nvalues == 0)) {
		(void)snprintf(err, errlen, "%s.%s: a relation needs to=, a select values=",
		    c->name, f->name);
		return -1;
	}
	f->counted = coll_counted(f);
	return 0;
}

int
coll_parse(struct coll *c, const char *id, const char *name, const char *type,
    const char *fields, const char *const rules[COLL_RULE__MAX], char *err, size_t errlen)
{
	struct coll_field *f;
	const char *p, *q;
	int i;

	memset(c, 0, sizeof(*c));
	if (!coll_name_valid(name, strlen(name)) || !coll_name_valid(id, strlen(id))) {
		(void)snprintf(err, errlen, "bad collection name or id \"%s\"", name);
		return -1;
	}
	memcpy(c->name, name, strlen(name));
	memcpy(c->id, id, strlen(id));
	if (strcmp(type, "auth") == 0)
		c->auth = 1;
	else if (strcmp(type, "base") != 0) {
		(void)snprintf(err, errlen, "%s: type must be base or auth", name);
		return -1;
	}
	f = coll_add(c, "id", 2, COLL_TEXT, err, errlen);
	f->system = f->required = 1;
	if (c->auth) {
		static const struct { const char *n; enum coll_type t; int hidden; } sys[] = {
			{ "email", COLL_EMAIL, 0 }, { "emailVisibility", COLL_BOOL, 0 },
			{ "verified", COLL_BOOL, 0 }, { "password", COLL_PASSWORD, 1 },
			{ "tokenKey", COLL_TEXT, 1 },
		};
		size_t k;

		for (k = 0; k < sizeof(sys) / sizeof(sys[0]); k++) {
			f = coll_add(c, sys[k].n, strlen(sys[k].n), sys[k].t, err, errlen);
			f->system = 1;
			f->hidden = sys[k].hidden;
		}
	}
	for (p = fields; *p != '\0'; p = *q ? q + 1 : q) {
		q = p + strcspn(p, ";\n");
		if (coll_decl(c, p, (size_t)(q - p), err, errlen) < 0)
			goto fail;
	}
	for (i = 0; i < COLL_RULE__MAX; i++)
		if (rules[i] != NULL && (c->rules[i] = strdup(rules[i])) == NULL) {
			(void)snprintf(err, errlen, "out of memory");
			goto fail;
		}
	return 0;
fail:
	coll_free(c);
	return -1;
}

void
coll_free(struct coll *c)
{
	int i;

	for (i = 0; i < COLL_RULE__MAX; i++) {
		free(c->rules[i]);
		c->rules[i] = NULL;
	}
}

void
colls_free(struct colls *cs)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		coll_free(&cs->c[i]);
	free(cs->c);
	cs->c = NULL;
	cs->n = 0;
}

struct coll *
colls_find(const struct colls *cs, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < cs->n; i++)
		if (str_eq(name, len, cs->c[i].name) || str_eq(name, len, cs->c[i].id))
			return &cs->c[i];
	return NULL;
}

const struct coll_field *
coll_field(const struct coll *c, const char *name, size_t len)
{
	size_t i;

	for (i = 0; i < c->nfields; i++)
		if (str_eq(name, len, c->fields[i].name))
			return &c->fields[i];
	return NULL;
}

size_t
coll_field_index(const struct coll *c, const struct coll_field *f)
{
	return (size_t)(f - c->fields);
}

static const char *
coll_key_name(const struct coll *c, int k)
{
	if (k == COLL_KEY_COLLID)
		return "collectionId";
	if (k == COLL_KEY_COLLNAME)
		return "collectionName";
	if (k == COLL_KEY_EXPAND)
		return "expand";
	return c->fields[k].name;
}

int
coll_resolve(struct colls *cs, char *err, size_t errlen)
{
	size_t i, j, k;

	for (i = 0; i < cs->n; i++) {
		struct coll *c = &cs->c[i];

		c->all = cs;
		for (j = 0; j < c->nfields; j++) {
			struct coll_field *f = &c->fields[j];

			if (f->type != COLL_RELATION)
				continue;
			if ((f->tcoll = colls_find(cs, f->target, strlen(f->target))) == NULL) {
				(void)snprintf(err, errlen, "%s.%s: no collection \"%s\"", c->name,
				    f->name, f->target);
				return -1;
			}
		}
		/* The key order: an insertion sort of a few dozen names, bytewise. */
		c->nkeys = 0;
		c->keys[c->nkeys++] = COLL_KEY_COLLID;
		c->keys[c->nkeys++] = COLL_KEY_COLLNAME;
		c->keys[c->nkeys++] = COLL_KEY_EXPAND;
		for (j = 0; j < c->nfields; j++)
			if (!c->fields[j].hidden)
				c->keys[c->nkeys++] = (int)j;
		for (j = 1; j < c->nkeys; j++) {
			int key = c->keys[j];

			for (k = j; k > 0 && strcmp(coll_key_name(c, c->keys[k - 1]),
			    coll_key_name(c, key)) > 0; k--)
				c->keys[k] = c->keys[k - 1];
			c->keys[k] = key;
		}
	}
	return 0;
}

/*
 * Sets c->counts and f->kept for what the database keeps counts of (the marker rows of
 * slot -1 in _counts; a database made before _counts has none).  0, or -1 with err set.
 */
static int
colls_load_counts(struct colls *cs, struct db *db, char *err, size_t errlen)
{
	const char *has = db_backend(db) == DB_PG ?
	    "SELECT count(*) FROM pg_catalog.pg_tables WHERE tablename = '_counts' AND "
	    "schemaname = ANY (current_schemas(false))" :
	    "SELECT count(*) FROM sqlite_master WHERE type = 'table' AND name = '_counts'";
	struct db_stmt *st;
	int rc;

	if ((st = db_prepare(db, has)) == NULL || db_step(st) != DB_ROW)
		goto fail;
	rc = db_column_int(st, 0) > 0;
	db_reset(st);
	if (!rc)
		return 0;
	if ((st = db_prepare(db, "SELECT coll, field FROM _counts WHERE slot = -1")) == NULL)
		goto fail;
	while ((rc = db_step(st)) == DB_ROW) {
		size_t n = 0, fn = 0;
		const char *name = db_column_text(st, 0, &n);
		const char *field = db_column_text(st, 1, &fn);
		struct coll *c = name != NULL ? colls_find(cs, name, n) : NULL;
		const struct coll_field *f;

		if (c == NULL || strcmp(c->name, name) != 0 || field == NULL)
			continue;
		if (fn == 0)
			c->counts = 1;
		else if ((f = coll_field(c, field, fn)) != NULL && f->counted)
			c->fields[coll_field_index(c, f)].kept = 1;
	}
	if (rc == DB_ERROR)
		goto fail;
	return 0;
fail:
	(void)snprintf(err, errlen, "reading _counts: %s", db_errmsg(db));
	return -1;
}

int
colls_load(struct colls *cs, struct db *db, char *err, size_t errlen)
{
	static const char sql[] = "SELECT id, name, type, fields, list_rule, view_rule, "
	    "create_rule, update_rule, delete_rule FROM _collections ORDER BY name";
	struct db_stmt *st;
	int rc;

	memset(cs, 0, sizeof(*cs));
	if ((cs->c = calloc(COLL_MAX, sizeof(*cs->c))) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	if ((st = db_prepare(db, sql)) == NULL) {
		(void)snprintf(err, errlen, "reading _collections: %s", db_errmsg(db));
		goto fail;
	}
	while ((rc = db_step(st)) == DB_ROW) {
		const char *rules[COLL_RULE__MAX];
		const char *v[4];
		int i;

		for (i = 0; i < 4; i++)
			v[i] = db_column_text(st, i, NULL);
		for (i = 0; i < COLL_RULE__MAX; i++)
			rules[i] = db_column_text(st, 4 + i, NULL);
		if (cs->n == COLL_MAX || v[0] == NULL || v[1] == NULL || v[2] == NULL) {
			(void)snprintf(err, errlen, "_collections: too many rows or a NULL name");
			db_reset(st);
			goto fail;
		}
		if (coll_parse(&cs->c[cs->n], v[0], v[1], v[2], v[3] ? v[3] : "", rules, err,
		    errlen) < 0) {
			db_reset(st);
			goto fail;
		}
		cs->n++;
	}
	if (rc == DB_ERROR) {
		(void)snprintf(err, errlen, "reading _collections: %s", db_errmsg(db));
		goto fail;
	}
	if (coll_resolve(cs, err, errlen) < 0 || colls_load_counts(cs, db, err, errlen) < 0)
		goto fail;
	return 0;
fail:
	colls_free(cs);
	return -1;
}

int
coll_email_ok(const char *s)
{
	const unsigned char *p;

	if (strchr(s, '@') == NULL || strlen(s) > 255)
		return 0;
	for (p = (const unsigned char *)s; *p != '\0'; p++)
		if (*p <= ' ' || *p == 0x7f || *p == '<' || *p == '>')
			return 0;
	return 1;
}

int
coll_textual(const struct coll_field *f)
{
	return !f->multiple && f->type != COLL_NUMBER && f->type != COLL_BOOL &&
	    f->type != COLL_JSON;
}

const char *
coll_column(const struct coll_field *f, enum db_backend backend, const char **dflt)
{
	int pg = backend == DB_PG;

	if (f->multiple) {
		*dflt = "'[]'";
		return pg ? "jsonb" : "JSON";
	}
	switch (f->type) {
	case COLL_NUMBER:
		*dflt = "0";
		return pg ? "double precision" : "REAL";
	case COLL_BOOL:
		*dflt = pg ? "false" : "0";
		return pg ? "boolean" : "BOOLEAN";
	case COLL_JSON:
		*dflt = NULL;
		return pg ? "jsonb" : "JSON";
	default:
		*dflt = "''";
		return pg ? "text" : "TEXT";
	}
}

int
coll_ddl(const struct coll *c, enum db_backend backend, struct buf *b)
{
	const char *dflt;
	size_t i;

	buf_puts(b, "CREATE TABLE ");
	coll_quote(b, c->name);
	buf_puts(b, " (\"id\" ");
	buf_puts(b, backend == DB_PG ? "text" COLL_PG_BYTES : "TEXT");
	buf_puts(b, " PRIMARY KEY NOT NULL");
	for (i = 1; i < c->nfields; i++) {
		const char *type = coll_column(&c->fields[i], backend, &dflt);

		buf_puts(b, ", ");
		coll_quote(b, c->fields[i].name);
		buf_putc(b, ' ');
		buf_puts(b, type);
		if (backend == DB_PG && strcmp(type, "text") == 0)
			buf_puts(b, COLL_PG_BYTES);
		if (dflt != NULL)
			buf_printf(b, " NOT NULL DEFAULT %s", dflt);
	}
	buf_puts(b, ");\n");
	for (i = 1; i < c->nfields; i++) {
		const struct coll_field *f = &c->fields[i];
		int uniq = f->unique || (c->auth && strcmp(f->name, "email") == 0);

		if (!uniq && !f->index)
			continue;
		buf_printf(b, "CREATE %sINDEX \"idx_%s_%s\" ON ", uniq ? "UNIQUE " : "", c->name,
		    f->name);
		coll_quote(b, c->name);
		buf_puts(b, " (");
		coll_quote(b, f->name);
		/* An empty text is "no value": only the set ones are unique. */
		if (uniq && coll_textual(f)) {
			buf_puts(b, ") WHERE ");
			coll_quote(b, f->name);
			buf_puts(b, " <> '';\n");
		} else
			buf_puts(b, ");\n");
	}
	return buf_failed(b) ? -1 : 0;
}

int
coll_counted(const struct coll_field *f)
{
	return f->index && !f->multiple && (f->type == COLL_SELECT || f->type == COLL_RELATION);
}

int
coll_counts_table(enum db_backend backend, struct buf *b)
{
	const char *t = backend == DB_PG ? "TEXT" COLL_PG_BYTES : "TEXT";

	buf_printf(b, "CREATE TABLE IF NOT EXISTS _counts (coll %s NOT NULL, field %s NOT NULL, "
	    "value %s NOT NULL, slot INTEGER NOT NULL, n BIGINT NOT NULL, "
	    "PRIMARY KEY (coll, field, value, slot))", t, t, t);
	buf_puts(b, backend == DB_PG ? ";\n" : " WITHOUT ROWID;\n");
	return buf_failed(b) ? -1 : 0;
}

int
coll_otps_table(enum db_backend backend, struct buf *b)
{
	const char *t = backend == DB_PG ? "TEXT" COLL_PG_BYTES : "TEXT";

	buf_printf(b, "CREATE TABLE IF NOT EXISTS _otps (id %s PRIMARY KEY, "
	    "\"collectionRef\" %s NOT NULL, \"recordRef\" %s NOT NULL, hash %s NOT NULL, "
	    "\"sentTo\" %s NOT NULL, attempts INTEGER NOT NULL DEFAULT 0, "
	    "created %s NOT NULL);\n"
	    "CREATE INDEX IF NOT EXISTS _otps_created ON _otps (created);\n", t, t, t, t, t, t);
	return buf_failed(b) ? -1 : 0;
}

/*
 * Appends the VALUES rows that add d (1 or -1) to the counts of the record ROW (NEW or
 * OLD): the collection's row, then one per counted field, always in this order, so that
 * two writers of one slot take its row locks in the same order.  slot is the slot's SQL.
 */
static void
coll_counts_rows(const struct coll *c, struct buf *b, const char *row, const char *slot,
    int d)
{
	size_t i;

	buf_printf(b, "('%s', '', '', %s, %d)", c->name, slot, d);
	for (i = 1; i < c->nfields; i++)
		if (c->fields[i].counted)
			buf_printf(b, ", ('%s', '%s', %s.\"%s\", %s, %d)", c->name,
			    c->fields[i].name, row, c->fields[i].name, slot, d);
}

/* Appends the statement that moves one record of field f from OLD's value to NEW's. */
static void
coll_counts_move(const struct coll *c, const struct coll_field *f, struct buf *b,
    const char *slot, const char *upsert)
{
	buf_printf(b, "INSERT INTO _counts VALUES ('%s', '%s', OLD.\"%s\", %s, -1), "
	    "('%s', '%s', NEW.\"%s\", %s, 1)%s;\n", c->name, f->name, f->name, slot, c->name,
	    f->name, f->name, slot, upsert);
}

/* The SQLite triggers: one for inserts, one for deletes, one per counted field's update. */
static void
coll_counts_sqlite(const struct coll *c, struct buf *b, const char *upsert)
{
	size_t i;

	static const struct { char tag; const char *op, *row; int d; } ops[] = {
		{ 'i', "INSERT", "NEW", 1 }, { 'd', "DELETE", "OLD", -1 },
	};
	size_t k;

	for (k = 0; k < sizeof(ops) / sizeof(ops[0]); k++) {
		buf_printf(b, "DROP TRIGGER IF EXISTS \"_count_%s_%c\";\n", c->name, ops[k].tag);
		buf_printf(b, "CREATE TRIGGER \"_count_%s_%c\" AFTER %s ON \"%s\" BEGIN "
		    "INSERT INTO _counts VALUES ", c->name, ops[k].tag, ops[k].op, c->name);
		coll_counts_rows(c, b, ops[k].row, "0", ops[k].d);
		buf_printf(b, "%s; END;\n", upsert);
	}
	for (i = 1; i < c->nfields; i++) {
		const struct coll_field *f = &c->fields[i];

		if (!f->counted)
			continue;
		buf_printf(b, "DROP TRIGGER IF EXISTS \"_count_%s_u_%s\";\n", c->name, f->name);
		buf_printf(b, "CREATE TRIGGER \"_count_%s_u_%s\" AFTER UPDATE OF \"%s\" ON \"%s\" "
		    "WHEN OLD.\"%s\" IS NOT NEW.\"%s\" BEGIN ", c->name, f->name, f->name,
		    c->name, f->name, f->name);
		coll_counts_move(c, f, b, "0", upsert);
		buf_puts(b, "END;\n");
	}
}

/* The PostgreSQL trigger: one row-level function for inserts, deletes and the updates of
 * the counted fields. */
static void
coll_counts_pg(const struct coll *c, struct buf *b, const char *upsert)
{
	size_t i;
	int any = 0;

	buf_printf(b, "CREATE OR REPLACE FUNCTION \"_count_%s\"() RETURNS trigger "
	    "LANGUAGE plpgsql AS $count$\nDECLARE s integer := pg_backend_pid() %% %d;\n"
	    "BEGIN\nIF TG_OP = 'INSERT' THEN\nINSERT INTO _counts VALUES ", c->name,
	    COLL_COUNT_SLOTS);
	coll_counts_rows(c, b, "NEW", "s", 1);
	buf_printf(b, "%s;\nELSIF TG_OP = 'DELETE' THEN\nINSERT INTO _counts VALUES ",
	    upsert);
	coll_counts_rows(c, b, "OLD", "s", -1);
	buf_printf(b, "%s;\nELSE\n", upsert);
	for (i = 1; i < c->nfields; i++) {
		const struct coll_field *f = &c->fields[i];

		if (!f->counted)
			continue;
		/* The two rows in one order (the lower value first), whichever way it moves. */
		buf_printf(b, "IF NEW.\"%s\" IS DISTINCT FROM OLD.\"%s\" THEN\n"
		    "IF OLD.\"%s\" COLLATE \"C\" < NEW.\"%s\" COLLATE \"C\" THEN\n", f->name,
		    f->name, f->name, f->name);
		coll_counts_move(c, f, b, "s", upsert);
		buf_printf(b, "ELSE\nINSERT INTO _counts VALUES ('%s', '%s', NEW.\"%s\", s, 1), "
		    "('%s', '%s', OLD.\"%s\", s, -1)%s;\nEND IF;\nEND IF;\n", c->name, f->name,
		    f->name, c->name, f->name, f->name, upsert);
	}
	buf_puts(b, "END IF;\nRETURN NULL;\nEND\n$count$;\n");
	buf_printf(b, "DROP TRIGGER IF EXISTS \"_count_%s\" ON \"%s\";\n", c->name, c->name);
	buf_printf(b, "CREATE TRIGGER \"_count_%s\" AFTER INSERT OR DELETE", c->name);
	for (i = 1; i < c->nfields; i++) {
		if (!c->fields[i].counted)
			continue;
		buf_printf(b, "%s\"%s\"", any ? ", " : " OR UPDATE OF ", c->fields[i].name);
		any = 1;
	}
	buf_printf(b, " ON \"%s\" FOR EACH ROW EXECUTE FUNCTION \"_count_%s\"();\n", c->name,
	    c->name);
}

int
coll_counts_ddl(const struct coll *c, enum db_backend backend, struct buf *b)
{
	static const char upsert[] = " ON CONFLICT (coll, field, value, slot) DO UPDATE SET "
	    "n = _counts.n + excluded.n";
	size_t i;

	/* The counts as they are now, in slot 0, their markers in slot -1, then the triggers
	 * that keep them; on PostgreSQL with the table's writers held off until the commit,
	 * so that none writes between the count and the trigger (SQLite's write transaction
	 * already holds them off). */
	if (backend == DB_PG)
		buf_printf(b, "LOCK TABLE \"%s\" IN SHARE ROW EXCLUSIVE MODE;\n", c->name);
	buf_printf(b, "DELETE FROM _counts WHERE coll = '%s';\n", c->name);
	buf_printf(b, "INSERT INTO _counts SELECT '%s', '', '', 0, count(*) FROM \"%s\";\n",
	    c->name, c->name);
	buf_printf(b, "INSERT INTO _counts VALUES ('%s', '', '', -1, 0);\n", c->name);
	for (i = 1; i < c->nfields; i++)
		if (c->fields[i].counted) {
			buf_printf(b, "INSERT INTO _counts SELECT '%s', '%s', \"%s\", 0, count(*) "
			    "FROM \"%s\" GROUP BY \"%s\";\n", c->name, c->fields[i].name,
			    c->fields[i].name, c->name, c->fields[i].name);
			buf_printf(b, "INSERT INTO _counts VALUES ('%s', '%s', '', -1, 0);\n",
			    c->name, c->fields[i].name);
		}
	if (backend == DB_PG)
		coll_counts_pg(c, b, upsert);
	else
		coll_counts_sqlite(c, b, upsert);
	return buf_failed(b) ? -1 : 0;
}

/*
 * coll_merge()'s text on each back end, around pre, the column, rm and app.  SQLite keeps
 * the elements in order by a compound subquery's ORDER BY feeding the aggregate (it does
 * not flatten a compound subquery into an aggregate query).
 */
static const char *const merge_sqlite[5] = {
	"(SELECT json_group_array(value) FROM (SELECT value, 0 AS g, key AS k FROM "
	    "json_each(",
	") UNION ALL SELECT value, 1, key FROM json_each(",
	") WHERE value NOT IN (SELECT value FROM json_each(",
	")) UNION ALL SELECT value, 2, key FROM json_each(",
	") ORDER BY 2, 3))",
};

static const char *const merge_pg[5] = {
	"(SELECT COALESCE(jsonb_agg(v ORDER BY g, k), '[]') FROM (SELECT v, 0 AS g, k "
	    "FROM jsonb_array_elements_text(CAST(",
	" AS jsonb)) WITH ORDINALITY AS p(v, k) UNION ALL SELECT v, 1, k FROM "
	    "jsonb_array_elements_text(",
	") WITH ORDINALITY AS b(v, k) WHERE v NOT IN (SELECT jsonb_array_elements_text("
	    "CAST(",
	" AS jsonb))) UNION ALL SELECT v, 2, k FROM jsonb_array_elements_text(CAST(",
	" AS jsonb)) WITH ORDINALITY AS a(v, k)) AS m)",
};

int
coll_merge(struct sqlb *q, const char *alias, const char *col, const char *pre,
    const char *app, const char *rm)
{
	const char *const *m = q->d->backend == DB_PG ? merge_pg : merge_sqlite;
	int rc = 0;

	buf_puts(q->sql, m[0]);
	rc |= sqlb_text(q, pre, strlen(pre));
	buf_puts(q->sql, m[1]);
	sqlb_col(q->sql, alias, col);
	buf_puts(q->sql, m[2]);
	rc |= sqlb_text(q, rm, strlen(rm));
	buf_puts(q->sql, m[3]);
	rc |= sqlb_text(q, app, strlen(app));
	buf_puts(q->sql, m[4]);
	return rc < 0 ? -1 : 0;
}
