/*
 * openapi.c: the OpenAPI 3.1 document of the endpoint's root, GET or HEAD /rest/v1/, as
 * PostgREST answers GET / with its Swagger 2.0 one (docs/postgrest.md says what is in it).
 *
 * It is written from the schema the workers hold (schema.c: tables, views, columns,
 * keys, functions and the comments read with them), and lists only what the request's
 * role may use, by the grants the verbs obey: on PostgreSQL the role's privileges, asked
 * of the catalog in the role's transaction (auth.c's rest_auth_enter() opened it; the
 * dialect's schema_privs); on SQLite rest_grants (grants.c); with access control off,
 * everything the schema holds.  A table gets a path with the operations the role may
 * perform (get: select, post: insert, patch: update, delete: delete) and a schema under
 * components; a function the role may execute a path /rpc/NAME.  Everything is sorted by
 * name, so that one schema and role always give the same bytes.
 *
 * Accept: application/openapi+json, application/json, any type ("*" "/" "*") or
 * none; anything else is 406
 * PGRST107 as PostgREST answers it.  The document is made per request (it depends on the
 * role) and answered as application/openapi+json.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "rest.h"
#include "settings.h"

#define OA_MIME		"application/openapi+json; charset=utf-8"
#define OA_NAME_MAX	256	/* a name's bytes in a component's key (escaped: 3 each) */

/* Operations a table may list, by privilege, in the order of the document. */
static const struct {
	unsigned priv;
	const char *method;
} oa_ops[] = {
	{ REST_PRIV_SELECT, "get" },
	{ REST_PRIV_INSERT, "post" },
	{ REST_PRIV_UPDATE, "patch" },
	{ REST_PRIV_DELETE, "delete" },
};

/* Query parameters of the dialect that a column of the same name cannot be filtered by. */
static const char *const oa_reserved[] = {
	"select", "order", "limit", "offset", "on_conflict", "columns", NULL
};

/* 1 when a column of this name cannot be a filter parameter: a parameter of the
 * dialect's own name (oa_reserved), or one too long for a component's key to stay
 * unique. */
static int
oa_reserved_col(const char *name)
{
	int i;

	for (i = 0; oa_reserved[i] != NULL; i++)
		if (!strcmp(name, oa_reserved[i]))
			return 1;
	return strlen(name) >= OA_NAME_MAX;
}

/* A name sorted with its index in the schema's tables or functions. */
struct oa_ent {
	const char *name;
	int i;
};

static int
oa_ent_cmp(const void *a, const void *b)
{
	return strcmp(((const struct oa_ent *)a)->name, ((const struct oa_ent *)b)->name);
}

/* 1 when name can be a path of the document: a request can name it (no '/'), and it
 * holds nothing a path template or URL would read otherwise. */
static int
oa_name_ok(const char *name)
{
	const unsigned char *p;

	if (*name == '\0' || strlen(name) >= OA_NAME_MAX)
		return 0;
	for (p = (const unsigned char *)name; *p != '\0'; p++)
		if (*p < 0x20 || *p == 0x7f || strchr("/?#{}", *p) != NULL)
			return 0;
	return 1;
}

/*
 * A component's key for name into out (3 * OA_NAME_MAX bytes do): components' keys may
 * hold only letters, digits, '.', '-' and '_', so every other byte, and '-' itself,
 * becomes -XX (its hex); '.' separates a key's parts and never comes out of a name.
 */
static void
oa_key(char *out, size_t len, const char *name)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = 0;

	for (; *name != '\0' && n + 4 < len; name++) {
		unsigned char c = (unsigned char)*name;

		if ((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
		    c == '_')
			out[n++] = (char)c;
		else {
			out[n++] = '-';
			out[n++] = hex[c >> 4];
			out[n++] = hex[c & 15];
		}
	}
	out[n] = '\0';
}

/* {"$ref": "#/components/KIND/KEY(name)"} with an optional suffix part (".col"). */
static cJSON *
oa_ref(const char *kind, const char *name, const char *part)
{
	char key[3 * OA_NAME_MAX], key2[3 * OA_NAME_MAX], ref[8 * OA_NAME_MAX];
	cJSON *o = cJSON_CreateObject();

	oa_key(key, sizeof(key), name);
	key2[0] = '\0';
	if (part != NULL)
		oa_key(key2, sizeof(key2), part);
	(void)snprintf(ref, sizeof(ref), "#/components/%s/%s%s%s", kind, key,
	    part != NULL ? "." : "", key2);
	cJSON_AddStringToObject(o, "$ref", ref);
	return o;
}

/* 1 when type holds word, letters in any case (SQLite's declared types). */
static int
oa_type_has(const char *type, const char *word)
{
	size_t n = strlen(word);

	for (; *type != '\0'; type++)
		if (strncasecmp(type, word, n) == 0)
			return 1;
	return 0;
}

/* The format of a number: float or double, or NULL to name the database's type instead
 * (numeric, decimal: exact, of any precision). */
static const char *
oa_num_format(const char *type, int lite)
{
	if (lite)	/* SQLite's REAL is 8 bytes, whatever the column declares */
		return oa_type_has(type, "NUMERIC") || oa_type_has(type, "DECIMAL") ? NULL :
		    "double";
	if (!strcmp(type, "real"))
		return "float";
	if (!strcmp(type, "double precision"))
		return "double";
	return NULL;
}

/*
 * The JSON Schema of a value of the database's type type: the JSON type the API writes
 * it as (null too when nullable), and a format, the standard one where one fits (int32,
 * int64, float, double, date, date-time, uuid), else the type's name as the database
 * gives it ("numeric", "timestamp without time zone", "varchar(120)"), as PostgREST's
 * document does.  A JSON column may hold any value: no type.  PostgreSQL's arrays
 * (type[]) are arrays of their element's schema.
 */
static cJSON *
oa_type(const struct rest_dialect *d, int lite, const char *type, int nullable)
{
	cJSON *o = cJSON_CreateObject(), *ty;
	const char *js = NULL, *fmt = type;
	size_t n = strlen(type);

	if (!lite && n > 2 && n < 128 && strcmp(type + n - 2, "[]") == 0) {
		char elem[128];

		memcpy(elem, type, n - 2);
		elem[n - 2] = '\0';
		js = "array";
		cJSON_AddItemToObject(o, "items", oa_type(d, lite, elem, 1));
	} else
		switch (d->kind_of(type)) {
		case REST_K_INT:
			js = "integer";
			fmt = lite || strstr(type, "big") != NULL || !strcmp(type, "int8") ?
			    "int64" : "int32";
			break;
		case REST_K_NUM:
			js = "number";
			if ((fmt = oa_num_format(type, lite)) == NULL)
				fmt = type;
			break;
		case REST_K_BOOL:
			js = "boolean";
			fmt = NULL;
			break;
		case REST_K_TS:
			js = "string";
			if (strstr(type, "with time zone") != NULL)
				fmt = "date-time";
			break;
		case REST_K_DATE:
			js = "string";
			fmt = "date";
			break;
		case REST_K_JSON:
			break;
		default:
			js = "string";
			if (!strcmp(type, "uuid"))
				fmt = "uuid";
		}
	if (js != NULL && nullable) {
		ty = cJSON_AddArrayToObject(o, "type");
		cJSON_AddItemToArray(ty, cJSON_CreateString(js));
		cJSON_AddItemToArray(ty, cJSON_CreateString("null"));
	} else if (js != NULL)
		cJSON_AddStringToObject(o, "type", js);
	if (fmt != NULL && *fmt != '\0')
		cJSON_AddStringToObject(o, "format", fmt);
	return o;
}

/* The schema of a row of tb: its columns (not its computed fields), those NOT NULL
 * without a default required, with their comments. */
static cJSON *
oa_row_schema(const struct rest_dialect *d, int lite, const struct rest_table *tb)
{
	cJSON *o = cJSON_CreateObject(), *req = cJSON_CreateArray(), *props;
	int c;

	cJSON_AddStringToObject(o, "type", "object");
	if (tb->comment != NULL)
		cJSON_AddStringToObject(o, "description", tb->comment);
	props = cJSON_AddObjectToObject(o, "properties");
	for (c = 0; c < tb->ncols; c++) {
		const struct rest_col *col = &tb->cols[c];
		cJSON *p = oa_type(d, lite, col->type, !col->notnull);

		if (col->comment != NULL)
			cJSON_AddStringToObject(p, "description", col->comment);
		cJSON_AddItemToObject(props, col->name, p);
		if (col->notnull && col->dflt == NULL)
			cJSON_AddItemToArray(req, cJSON_CreateString(col->name));
	}
	if (cJSON_GetArraySize(req) > 0)
		cJSON_AddItemToObject(o, "required", req);
	else
		cJSON_Delete(req);
	return o;
}

/* A parameter object. */
static cJSON *
oa_param(const char *name, const char *in, const char *type, const char *desc)
{
	cJSON *p = cJSON_CreateObject(), *s;

	cJSON_AddStringToObject(p, "name", name);
	cJSON_AddStringToObject(p, "in", in);
	if (desc != NULL)
		cJSON_AddStringToObject(p, "description", desc);
	s = cJSON_AddObjectToObject(p, "schema");
	cJSON_AddStringToObject(s, "type", type);
	if (!strcmp(type, "integer"))
		cJSON_AddNumberToObject(s, "minimum", 0);
	return p;
}

/* The parameters every table and function shares, under components.parameters. */
static void
oa_common_params(cJSON *params)
{
	static const struct {
		const char *key, *name, *in, *type, *desc;
	} ps[] = {
		{ "select", "select", "query", "string", "The columns and embeds to return: "
		    "col,alias:col,col::type,rel(col,...),...rel(col)" },
		{ "order", "order", "query", "string", "col[.asc|.desc][.nullsfirst|.nullslast],..." },
		{ "limit", "limit", "query", "integer", "At most this many rows" },
		{ "offset", "offset", "query", "integer", "Rows skipped before the first returned" },
		{ "range", "Range", "header", "string", "N-M: the rows N to M, counted from 0" },
		{ "on_conflict", "on_conflict", "query", "string", "The unique columns an upsert "
		    "(Prefer: resolution=...) is resolved on: col,..." },
		{ "columns", "columns", "query", "string", "The body's keys to insert: col,..." },
		{ "preferRead", "Prefer", "header", "string", "count=exact|planned|estimated "
		    "(the total in Content-Range)" },
		{ "preferWrite", "Prefer", "header", "string", "return=minimal|representation|"
		    "headers-only, resolution=merge-duplicates|ignore-duplicates, missing=default, "
		    "count=exact, tx=commit|rollback, handling=lenient|strict, max-affected=N" },
		{ "preferCall", "Prefer", "header", "string", "count=exact, tx=commit|rollback, "
		    "handling=lenient|strict, max-affected=N" },
	};
	size_t i;

	for (i = 0; i < sizeof(ps) / sizeof(ps[0]); i++)
		cJSON_AddItemToObject(params, ps[i].key, oa_param(ps[i].name, ps[i].in,
		    ps[i].type, ps[i].desc));
}

/* Appends {"$ref": "#/components/parameters/KEY"} for each key to arr. */
static void
oa_param_refs(cJSON *arr, const char *const *keys)
{
	for (; *keys != NULL; keys++) {
		cJSON *o = cJSON_CreateObject();
		char ref[128];

		(void)snprintf(ref, sizeof(ref), "#/components/parameters/%s", *keys);
		cJSON_AddStringToObject(o, "$ref", ref);
		cJSON_AddItemToArray(arr, o);
	}
}

/* A response with a description and, when schema is not NULL, that JSON content. */
static cJSON *
oa_response(const char *desc, const char *mime, cJSON *schema)
{
	cJSON *r = cJSON_CreateObject(), *m;

	cJSON_AddStringToObject(r, "description", desc);
	if (schema != NULL) {
		m = cJSON_AddObjectToObject(cJSON_AddObjectToObject(r, "content"), mime);
		cJSON_AddItemToObject(m, "schema", schema);
	}
	return r;
}

/* {"type":"array","items":item} */
static cJSON *
oa_array_of(cJSON *item)
{
	cJSON *a = cJSON_CreateObject();

	cJSON_AddStringToObject(a, "type", "array");
	cJSON_AddItemToObject(a, "items", item);
	return a;
}

/* The responses of an operation: its successes, then the error body by default. */
static cJSON *
oa_responses(void)
{
	cJSON *r = cJSON_CreateObject(), *o = cJSON_CreateObject();

	cJSON_AddStringToObject(o, "$ref", "#/components/responses/error");
	cJSON_AddItemToObject(r, "default", o);
	return r;
}

/* One operation of table tb's path: method by privilege priv. */
static cJSON *
oa_table_op(const struct rest_table *tb, unsigned priv)
{
	static const char *const read_params[] = { "select", "order", "limit", "offset",
		"range", "preferRead", NULL };
	static const char *const post_params[] = { "select", "columns", "on_conflict",
		"preferWrite", NULL };
	static const char *const change_params[] = { "select", "order", "limit",
		"preferWrite", NULL };
	cJSON *op = cJSON_CreateObject(), *params, *resp, *body, *rows, *ok, *m;
	int c;

	cJSON_AddItemToArray(cJSON_AddArrayToObject(op, "tags"), cJSON_CreateString(tb->name));
	if (tb->comment != NULL)
		cJSON_AddStringToObject(op, "description", tb->comment);
	params = cJSON_AddArrayToObject(op, "parameters");
	if (priv != REST_PRIV_INSERT)
		for (c = 0; c < tb->ncols; c++)
			if (!oa_reserved_col(tb->cols[c].name))
				cJSON_AddItemToArray(params, oa_ref("parameters", tb->name,
				    tb->cols[c].name));
	oa_param_refs(params, priv == REST_PRIV_SELECT ? read_params :
	    priv == REST_PRIV_INSERT ? post_params : change_params);
	if (priv == REST_PRIV_INSERT || priv == REST_PRIV_UPDATE) {
		body = cJSON_AddObjectToObject(op, "requestBody");
		cJSON_AddBoolToObject(body, "required", 1);
		m = cJSON_AddObjectToObject(cJSON_AddObjectToObject(body, "content"),
		    "application/json");
		if (priv == REST_PRIV_INSERT) {
			cJSON *one = cJSON_AddArrayToObject(cJSON_AddObjectToObject(m, "schema"),
			    "oneOf");

			cJSON_AddItemToArray(one, oa_ref("schemas", tb->name, NULL));
			cJSON_AddItemToArray(one, oa_array_of(oa_ref("schemas", tb->name, NULL)));
		} else
			cJSON_AddItemToObject(m, "schema", oa_ref("schemas", tb->name, NULL));
	}
	resp = oa_responses();
	rows = oa_array_of(oa_ref("schemas", tb->name, NULL));
	switch (priv) {
	case REST_PRIV_SELECT:
		ok = oa_response("OK", "application/json", rows);
		m = cJSON_GetObjectItemCaseSensitive(ok, "content");
		cJSON_AddItemToObject(cJSON_AddObjectToObject(m,
		    "application/vnd.pgrst.object+json"), "schema", oa_ref("schemas", tb->name,
		    NULL));
		cJSON_AddItemToObject(cJSON_AddObjectToObject(m, "text/csv"), "schema",
		    cJSON_Parse("{\"type\":\"string\"}"));
		cJSON_AddItemToObject(resp, "200", ok);
		cJSON_AddItemToObject(resp, "206", oa_response("Partial Content", NULL, NULL));
		break;
	case REST_PRIV_INSERT:
		cJSON_AddItemToObject(resp, "201", oa_response("Created", "application/json",
		    rows));
		break;
	default:
		cJSON_AddItemToObject(resp, "200", oa_response("OK (return=representation)",
		    "application/json", rows));
		cJSON_AddItemToObject(resp, "204", oa_response("No Content", NULL, NULL));
	}
	cJSON_AddItemToObject(op, "responses", resp);
	return op;
}

/* 1 when f's arguments all have names (a function of an unnamed argument, such as a
 * computed field, cannot be called by name). */
static int
oa_func_ok(const struct rest_func *f)
{
	int i;

	if (!oa_name_ok(f->name))
		return 0;
	for (i = 0; i < f->nargs; i++)
		if (f->argnames[i] == NULL || f->argnames[i][0] == '\0')
			return 0;
	return 1;
}

/* The schema of what f returns; a table it returns is marked in used. */
static cJSON *
oa_func_result(const struct rest_schema *sc, const struct rest_dialect *d, int lite,
    const struct rest_func *f, unsigned char *used)
{
	cJSON *s;

	if (f->rettable >= 0 && sc->tables[f->rettable].hidden)
		s = oa_row_schema(d, lite, &sc->tables[f->rettable]);
	else if (f->rettable >= 0) {
		used[f->rettable] = 1;
		s = oa_ref("schemas", sc->tables[f->rettable].name, NULL);
	} else
		return oa_type(d, lite, f->rettype != NULL ? f->rettype : "", 1);
	return f->retset ? oa_array_of(s) : s;
}

/* The path item of function f: post with its arguments as a JSON object, get with them
 * in the query unless it may write (a GET runs read-only). */
static cJSON *
oa_func_path(const struct rest_schema *sc, const struct rest_dialect *d, int lite,
    const struct rest_func *f, unsigned char *used)
{
	static const char *const set_params[] = { "select", "order", "limit", "offset",
		"preferCall", NULL };
	static const char *const one_params[] = { "preferCall", NULL };
	cJSON *item = cJSON_CreateObject(), *args, *props, *req, *op, *resp, *params, *m;
	int i, k, nreq = f->nargs - f->ndefaults;

	args = cJSON_CreateObject();
	cJSON_AddStringToObject(args, "type", "object");
	props = cJSON_AddObjectToObject(args, "properties");
	req = cJSON_CreateArray();
	for (i = 0; i < f->nargs; i++) {
		cJSON_AddItemToObject(props, f->argnames[i], oa_type(d, lite, f->argtypes[i], 1));
		if (i < nreq)
			cJSON_AddItemToArray(req, cJSON_CreateString(f->argnames[i]));
	}
	if (nreq > 0)
		cJSON_AddItemToObject(args, "required", req);
	else
		cJSON_Delete(req);
	for (k = 0; k < 2; k++) {
		if (k == 0 && f->may_write)
			continue;
		op = cJSON_CreateObject();
		cJSON_AddItemToArray(cJSON_AddArrayToObject(op, "tags"), cJSON_CreateString("rpc"));
		if (f->comment != NULL)
			cJSON_AddStringToObject(op, "description", f->comment);
		params = cJSON_AddArrayToObject(op, "parameters");
		if (k == 0)
			for (i = 0; i < f->nargs; i++) {
				cJSON *p = cJSON_CreateObject();

				cJSON_AddStringToObject(p, "name", f->argnames[i]);
				cJSON_AddStringToObject(p, "in", "query");
				cJSON_AddBoolToObject(p, "required", i < nreq);
				cJSON_AddItemToObject(p, "schema", oa_type(d, lite,
				    f->argtypes[i], 0));
				cJSON_AddItemToArray(params, p);
			}
		oa_param_refs(params, f->retset || f->rettable >= 0 ? set_params : one_params);
		if (k == 1) {
			cJSON *body = cJSON_AddObjectToObject(op, "requestBody");

			cJSON_AddBoolToObject(body, "required", nreq > 0);
			m = cJSON_AddObjectToObject(cJSON_AddObjectToObject(body, "content"),
			    "application/json");
			cJSON_AddItemToObject(m, "schema", cJSON_Duplicate(args, 1));
		}
		resp = oa_responses();
		if (f->retvoid)
			cJSON_AddItemToObject(resp, "204", oa_response("No Content", NULL, NULL));
		else
			cJSON_AddItemToObject(resp, "200", oa_response("OK", "application/json",
			    oa_func_result(sc, d, lite, f, used)));
		cJSON_AddItemToObject(op, "responses", resp);
		cJSON_AddItemToObject(item, k == 0 ? "get" : "post", op);
	}
	cJSON_Delete(args);
	return item;
}

/*
 * What the request's role may do: tp[i] the REST_PRIV_* bits of the table i, fp[i] of the
 * function i (REST_PRIV_EXECUTE).  PostgreSQL: the catalog's answer for the transaction's
 * role; SQLite: rest_grants for the request's role (names.c's t->access), everything when
 * access control is off; a SQLite view is only read (it has no rows to write), and a
 * function needs select on every table its body reads, as rpc.c asks.  0, or -1 when the
 * database failed (its error is on rq->db).
 */
static int
oa_privs(struct req *rq, const struct rest_thread *t, unsigned *tp, unsigned *fp)
{
	const struct rest_schema *sc = t->sc;
	const struct rest_access *ac = &t->access;
	struct db_stmt *st;
	int i, j, rc;

	if (t->d->schema_privs == NULL) {
		for (i = 0; i < sc->ntables; i++) {
			for (j = 0; j < 4; j++)
				if (ac->role == NULL || rest_auth_may(ac->auth, ac->role,
				    sc->tables[i].name, oa_ops[j].priv) == 1)
					tp[i] |= oa_ops[j].priv;
			if (sc->tables[i].is_view)
				tp[i] &= REST_PRIV_SELECT;
		}
		for (i = 0; i < sc->nfuncs; i++) {
			const struct rest_func *f = &sc->funcs[i];

			if (ac->role == NULL) {
				fp[i] = REST_PRIV_EXECUTE;
				continue;
			}
			if (f->reads_unknown || rest_auth_may(ac->auth, ac->role, f->name,
			    REST_PRIV_EXECUTE) != 1)
				continue;
			for (j = 0; j < f->nreads; j++)
				if (rest_auth_may(ac->auth, ac->role, f->reads[j],
				    REST_PRIV_SELECT) != 1)
					break;
			if (j == f->nreads)
				fp[i] = REST_PRIV_EXECUTE;
		}
		return 0;
	}
	if ((st = db_prepare(rq->db, t->d->schema_privs)) == NULL ||
	    db_bind_text(st, 1, t->scname, strlen(t->scname)) < 0) {
		if (st != NULL)
			db_reset(st);
		return -1;
	}
	while ((rc = db_step(st)) == DB_ROW) {
		const char *kind = db_column_text(st, 0, NULL), *name = db_column_text(st, 1, NULL);

		if (kind == NULL || name == NULL)
			continue;
		if (*kind == 'r' && (i = rest_schema_table(sc, name)) >= 0) {
			for (j = 0; j < 4; j++)
				if (db_column_int(st, 2 + j))
					tp[i] |= oa_ops[j].priv;
		} else if (*kind == 'f' && db_column_int(st, 2)) {
			for (i = 0; i < sc->nfuncs; i++)
				if (!strcmp(sc->funcs[i].name, name))
					fp[i] = REST_PRIV_EXECUTE;
		}
	}
	db_reset(st);
	return rc == DB_DONE ? 0 : -1;
}

/* The filters of tb's columns under components.parameters, keyed TABLE.COLUMN. */
static void
oa_filters(cJSON *params, const struct rest_table *tb)
{
	char key[8 * OA_NAME_MAX], k1[3 * OA_NAME_MAX], k2[3 * OA_NAME_MAX];
	int c;

	oa_key(k1, sizeof(k1), tb->name);
	for (c = 0; c < tb->ncols; c++) {
		cJSON *p;

		if (oa_reserved_col(tb->cols[c].name))
			continue;
		oa_key(k2, sizeof(k2), tb->cols[c].name);
		(void)snprintf(key, sizeof(key), "%s.%s", k1, k2);
		p = oa_param(tb->cols[c].name, "query", "string", tb->cols[c].comment);
		cJSON_AddItemToObject(params, key, p);
	}
}

/* The info, servers, security and shared components of the document. */
static void
oa_head(cJSON *doc, const struct rest_thread *t, cJSON **paths, cJSON **schemas,
    cJSON **params)
{
	const char *route = settings_get(SETTING_ROUTE);
	char url[512];
	size_t n;
	cJSON *info, *o, *comp, *sec;

	cJSON_AddStringToObject(doc, "openapi", "3.1.0");
	info = cJSON_AddObjectToObject(doc, "info");
	cJSON_AddStringToObject(info, "title", "sluice");
	cJSON_AddStringToObject(info, "description", "The tables, views and functions of "
	    "this schema that the requesting role may use, in PostgREST's dialect: a column "
	    "filter is col=OP.VALUE (eq, neq, gt, gte, lt, lte, like, ilike, in.(a,b), "
	    "is.null, not.OP...), or=(...) and and=(...) combine them.");
	cJSON_AddStringToObject(info, "version", t->pgrst12 ? "12" : "13");
	if (route == NULL || *route == '\0')
		route = "/";
	n = strlen(route);
	while (n > 1 && route[n - 1] == '/')
		n--;
	(void)snprintf(url, sizeof(url), "%.*s", (int)n, route);
	o = cJSON_CreateObject();
	cJSON_AddStringToObject(o, "url", url);
	cJSON_AddItemToArray(cJSON_AddArrayToObject(doc, "servers"), o);
	*paths = cJSON_AddObjectToObject(doc, "paths");
	comp = cJSON_AddObjectToObject(doc, "components");
	*schemas = cJSON_AddObjectToObject(comp, "schemas");
	*params = cJSON_AddObjectToObject(comp, "parameters");
	oa_common_params(*params);
	cJSON_AddItemToObject(cJSON_AddObjectToObject(comp, "responses"), "error",
	    oa_response("Error", "application/json", cJSON_Parse("{\"type\":\"object\","
	    "\"properties\":{\"code\":{\"type\":\"string\"},\"message\":{\"type\":\"string\"},"
	    "\"details\":{\"type\":[\"string\",\"null\"]},\"hint\":{\"type\":[\"string\","
	    "\"null\"]}}}")));
	if (t->auth != NULL && t->auth->on) {
		o = cJSON_AddObjectToObject(cJSON_AddObjectToObject(comp, "securitySchemes"),
		    "jwt");
		cJSON_AddStringToObject(o, "type", "http");
		cJSON_AddStringToObject(o, "scheme", "bearer");
		cJSON_AddStringToObject(o, "bearerFormat", "JWT");
		sec = cJSON_AddArrayToObject(doc, "security");
		if (t->auth->anon != NULL)
			cJSON_AddItemToArray(sec, cJSON_CreateObject());
		o = cJSON_CreateObject();
		cJSON_AddItemToObject(o, "jwt", cJSON_CreateArray());
		cJSON_AddItemToArray(sec, o);
	}
}

/* The tables (funcs 0) or functions (1) of sc that the document can list, as (name,
 * index) sorted by name: malloc'd (caller frees), their count in *out_n; NULL when memory
 * ran out. */
static struct oa_ent *
oa_sorted(const struct rest_schema *sc, int funcs, int *out_n)
{
	int n = funcs ? sc->nfuncs : sc->ntables, i, k = 0;
	struct oa_ent *e = calloc((size_t)n + 1, sizeof(*e));

	if (e == NULL)
		return NULL;
	for (i = 0; i < n; i++) {
		if (funcs ? !oa_func_ok(&sc->funcs[i]) : (sc->tables[i].hidden ||
		    !oa_name_ok(sc->tables[i].name)))
			continue;
		e[k].name = funcs ? sc->funcs[i].name : sc->tables[i].name;
		e[k++].i = i;
	}
	qsort(e, (size_t)k, sizeof(*e), oa_ent_cmp);
	*out_n = k;
	return e;
}

/* The document for t's request (caller deletes with cJSON_Delete()), or NULL when memory
 * ran out or, with *dberr set, the database failed (its error is on rq->db). */
static cJSON *
oa_document(struct req *rq, const struct rest_thread *t, int *dberr)
{
	const struct rest_schema *sc = t->sc;
	int lite = db_backend(rq->db) == DB_SQLITE, nt = 0, nf = 0, i, j;
	unsigned *tp = calloc((size_t)sc->ntables + 1, sizeof(*tp));
	unsigned *fp = calloc((size_t)sc->nfuncs + 1, sizeof(*fp));
	unsigned char *used = calloc((size_t)sc->ntables + 1, 1);
	struct oa_ent *te = oa_sorted(sc, 0, &nt), *fe = oa_sorted(sc, 1, &nf);
	cJSON *doc = NULL, *paths, *schemas, *params;
	char path[OA_NAME_MAX + 8];

	*dberr = 0;
	if (tp == NULL || fp == NULL || used == NULL || te == NULL || fe == NULL)
		goto out;
	if (oa_privs(rq, t, tp, fp) < 0) {
		*dberr = 1;
		goto out;
	}
	doc = cJSON_CreateObject();
	oa_head(doc, t, &paths, &schemas, &params);
	for (i = 0; i < nt; i++) {
		const struct rest_table *tb = &sc->tables[te[i].i];
		cJSON *item;

		if (tp[te[i].i] == 0)
			continue;
		used[te[i].i] = 1;
		(void)snprintf(path, sizeof(path), "/%s", tb->name);
		item = cJSON_AddObjectToObject(paths, path);
		for (j = 0; j < 4; j++)
			if (tp[te[i].i] & oa_ops[j].priv)
				cJSON_AddItemToObject(item, oa_ops[j].method,
				    oa_table_op(tb, oa_ops[j].priv));
		if (tp[te[i].i] & ~(unsigned)REST_PRIV_INSERT)
			oa_filters(params, tb);
	}
	for (i = 0; i < nf; i++) {
		if (fp[fe[i].i] == 0)
			continue;
		(void)snprintf(path, sizeof(path), "/rpc/%s", fe[i].name);
		cJSON_AddItemToObject(paths, path, oa_func_path(sc, t->d, lite,
		    &sc->funcs[fe[i].i], used));
	}
	/* The rows' schemas, of the tables listed and those a function listed returns. */
	for (i = 0; i < nt; i++) {
		char key[3 * OA_NAME_MAX];

		if (!used[te[i].i])
			continue;
		oa_key(key, sizeof(key), te[i].name);
		cJSON_AddItemToObject(schemas, key, oa_row_schema(t->d, lite,
		    &sc->tables[te[i].i]));
	}
out:
	free(tp);
	free(fp);
	free(used);
	free(te);
	free(fe);
	return doc;
}

/* 1 when Accept takes the document (none, application/openapi+json, application/json,
 * a wildcard). */
static int
oa_acceptable(const char *a)
{
	return a == NULL || *a == '\0' || strstr(a, "application/openapi+json") != NULL ||
	    strstr(a, "application/json") != NULL || strstr(a, "*/*") != NULL ||
	    strstr(a, "application/*") != NULL;
}

int
rest_openapi(struct req *rq, struct resp *rs, struct rest_thread *t)
{
	const char *accept = req_header(rq, "Accept");
	struct rest_err e;
	cJSON *doc;
	char *text;
	int dberr, rc;

	if (!oa_acceptable(accept)) {
		rest_err_set(&e, 406, "PGRST107", NULL, "None of these media types are "
		    "available: %.200s", accept);
		return rest_error(rs, &e);
	}
	if ((doc = oa_document(rq, t, &dberr)) == NULL) {
		if (dberr)
			return rest_db_error(rs, t, rq->db);
		return resp_error(rs, 500, "internal", "out of memory", NULL, NULL);
	}
	text = cJSON_PrintUnformatted(doc);
	cJSON_Delete(doc);
	if (text == NULL)
		return resp_error(rs, 500, "internal", "out of memory", NULL, NULL);
	rc = resp_set(rs, 200, OA_MIME, text, strlen(text));
	free(text);
	if (rc < 0) {
		log_warn("rest: the OpenAPI document is past resp_max");
		return resp_error(rs, 500, "too_large", "the OpenAPI document is larger than "
		    "the response cap (resp_max)", NULL, NULL);
	}
	return 0;
}
