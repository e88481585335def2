/*
 * db_sqlite_ops.c: PostgreSQL's containment and range operators for SQLite, as SQL
 * functions registered on every SQLite connection: the table API's cs, cd and ov filters
 * on json and jsonb columns (where an array column is kept as a JSON array), and its
 * range filters on int4range and int8range columns (PostgreSQL's range text):
 *
 *   sluice_contains(a, b)   1 when the JSON a contains b as jsonb's @> says, else 0
 *   sluice_contained(a, b)  1 when b contains a (<@), else 0
 *   sluice_overlaps(a, b)   1 when the arrays a and b share an element (&&), else 0
 *   sluice_range(op, a, b)  PostgreSQL's range operator op (@> <@ && << >> &< &> -|-)
 *                           on two integer ranges ([1,5), (0,4], [3,), empty), 1 or 0
 *
 * Either NULL gives NULL.  Containment is jsonb's: equal scalars (numbers by value, as
 * cJSON's doubles: past 17 digits two numbers PostgreSQL tells apart may be equal here); an object contains an object whose every key it has with a value
 * that contains that key's value (a key written twice counts by its last value, as jsonb
 * keeps it); an array contains an array each of whose elements some element of its own
 * contains (order and repetition aside), and at the top level a scalar that it holds.
 * b may be a JSON text or PostgreSQL's array literal ({a,"b c",3,NULL}, what a client
 * writes for an array column): its elements become a JSON array, unquoted numbers as
 * numbers, NULL as null, the rest as strings; {} is the empty array when a is an array.
 * A value of a that is not JSON (or nested past JSON_DEPTH_DEFAULT, or not a range) is in
 * no relation to b; a b that is
 * neither form is an SQL error (the statement fails: the table API checks it first with
 * db_json_literal_ok() and db_range_literal_ok()).  b is parsed once per statement
 * (SQLite's auxiliary data), a for each row.  A range is made canonical as PostgreSQL
 * makes an integer range: [lo, hi), an absent bound infinite.
 */
#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>
#include <sqlite3.h>

#include "extern.h"
#include "json.h"

static int so_contains(const cJSON *a, const cJSON *b);

/*
 * 1 when the scalars a and b are equal: the same type, numbers by value (exactly, so that
 * an infinity from an overflowing literal equals itself; cJSON_Compare()'s tolerance does
 * not), strings byte for byte.  Arrays and objects go to cJSON_Compare().
 */
static int
so_equal(const cJSON *a, const cJSON *b)
{
	if ((a->type & 0xFF) != (b->type & 0xFF))
		return 0;
	if (cJSON_IsNumber(a))
		return a->valuedouble == b->valuedouble;
	if (cJSON_IsString(a))
		return a->valuestring != NULL && b->valuestring != NULL &&
		    strcmp(a->valuestring, b->valuestring) == 0;
	if (cJSON_IsArray(a) || cJSON_IsObject(a))
		return cJSON_Compare(a, b, 1);
	return 1;
}

/* 1 when some element of the array a contains y. */
static int
so_any_contains(const cJSON *a, const cJSON *y)
{
	const cJSON *x;

	cJSON_ArrayForEach(x, a)
		if (so_contains(x, y))
			return 1;
	return 0;
}

/* 1 when every element of the array b is contained by some element of the array a. */
static int
so_array_contains(const cJSON *a, const cJSON *b)
{
	const cJSON *y;

	cJSON_ArrayForEach(y, b)
		if (!so_any_contains(a, y))
			return 0;
	return 1;
}

/* The member key of object o that jsonb keeps: the last of its name; NULL when none. */
static const cJSON *
so_member(const cJSON *o, const char *key)
{
	const cJSON *m, *last = NULL;

	cJSON_ArrayForEach(m, o)
		if (strcmp(m->string, key) == 0)
			last = m;
	return last;
}

/* jsonb's containment; its recursion is as deep as the values' nesting, which so_parse()
 * bounds. */
static int
so_contains(const cJSON *a, const cJSON *b)
{
	const cJSON *y, *x;

	if (cJSON_IsObject(a) && cJSON_IsObject(b)) {
		cJSON_ArrayForEach(y, b) {
			/* A key written twice counts once, by its last value, as in jsonb. */
			if (so_member(b, y->string) != y)
				continue;
			x = so_member(a, y->string);
			if (x == NULL || !so_contains(x, y))
				return 0;
		}
		return 1;
	}
	if (cJSON_IsArray(a) && cJSON_IsArray(b))
		return so_array_contains(a, b);
	if (cJSON_IsArray(a) || cJSON_IsArray(b) || cJSON_IsObject(a) || cJSON_IsObject(b))
		return 0;
	return so_equal(a, b);
}

/* One element of an array literal, p[0..n) with its quotes removed and escapes undone,
 * appended to arr.  0, or -1 (out of memory). */
static int
so_literal_item(cJSON *arr, const char *p, size_t n, int quoted)
{
	char *s, *end;
	cJSON *v;
	double d;

	if ((s = malloc(n + 1)) == NULL)
		return -1;
	memcpy(s, p, n);
	s[n] = '\0';
	if (!quoted && strcmp(s, "NULL") == 0)
		v = cJSON_CreateNull();
	else if (!quoted && n > 0 && (d = strtod(s, &end), *end == '\0') &&
	    strspn(s, "+-0123456789.eE") == n)
		v = cJSON_CreateNumber(d);
	else
		v = cJSON_CreateString(s);
	free(s);
	if (v == NULL)
		return -1;
	cJSON_AddItemToArray(arr, v);
	return 0;
}

/*
 * PostgreSQL's one-dimensional array literal {a,"b, c",3} as a JSON array; NULL when s is
 * not one (or out of memory).
 */
static cJSON *
so_literal(const char *s, size_t len)
{
	cJSON *arr;
	char *item;
	size_t i = 1, n;
	int quoted;

	if (len < 2 || s[0] != '{' || s[len - 1] != '}' || (arr = cJSON_CreateArray()) == NULL)
		return NULL;
	if (len == 2)
		return arr;
	if ((item = malloc(len)) == NULL)
		goto bad;
	while (i < len) {
		n = 0;
		quoted = s[i] == '"';
		if (quoted) {
			for (i++; i < len - 1 && s[i] != '"'; i++) {
				if (s[i] == '\\' && i + 1 < len - 1)
					i++;
				item[n++] = s[i];
			}
			if (i >= len - 1)
				goto bad;
			i++;
		} else
			for (; i < len - 1 && s[i] != ','; i++) {
				if (s[i] == '"' || s[i] == '{' || s[i] == '}' || s[i] == '\\')
					goto bad;
				item[n++] = s[i];
			}
		if ((!quoted && n == 0) || so_literal_item(arr, item, n, quoted) < 0 ||
		    (s[i] != ',' && s[i] != '}') || (s[i] == '}' && i != len - 1))
			goto bad;
		i++;
	}
	free(item);
	return arr;
bad:
	free(item);
	cJSON_Delete(arr);
	return NULL;
}

static void
so_delete(void *p)
{
	cJSON_Delete(p);
}

/* Text s as JSON: a JSON text nested at most JSON_DEPTH_DEFAULT deep (which bounds
 * so_contains()'s recursion), or (literal) an array literal; NULL when neither. */
static cJSON *
so_parse(const char *s, size_t len, int literal)
{
	enum json_err err;
	cJSON *v = json_parse(s, len, JSON_DEPTH_DEFAULT, &err, NULL);

	if (v == NULL && literal)
		v = so_literal(s, len);
	return v;
}

/*
 * The two values of a call: *a (each row's, the caller frees it) and *b (the literal, kept
 * for the statement's later rows as auxiliary data; *own set when SQLite would not keep
 * it, and the caller frees it then).  0, or 1 when the answer is given (NULL, an error,
 * or 0 for an a that is not JSON).
 */
static int
so_args(sqlite3_context *ctx, sqlite3_value **argv, cJSON **a, cJSON **b, int *own)
{
	const char *s;

	*own = 0;
	if (sqlite3_value_type(argv[0]) == SQLITE_NULL ||
	    sqlite3_value_type(argv[1]) == SQLITE_NULL) {
		sqlite3_result_null(ctx);
		return 1;
	}
	if ((*b = sqlite3_get_auxdata(ctx, 1)) == NULL) {
		s = (const char *)sqlite3_value_text(argv[1]);
		if (s == NULL || (*b = so_parse(s, (size_t)sqlite3_value_bytes(argv[1]), 1)) ==
		    NULL) {
			sqlite3_result_error(ctx, "malformed array literal or JSON value", -1);
			return 1;
		}
		/* SQLite may drop it at once (set_auxdata's contract): parse a copy to use. */
		sqlite3_set_auxdata(ctx, 1, *b, so_delete);
		if ((*b = sqlite3_get_auxdata(ctx, 1)) == NULL) {
			*b = so_parse(s, (size_t)sqlite3_value_bytes(argv[1]), 1);
			*own = 1;
			if (*b == NULL) {
				sqlite3_result_error_nomem(ctx);
				return 1;
			}
		}
	}
	s = (const char *)sqlite3_value_text(argv[0]);
	if (s == NULL || (*a = so_parse(s, (size_t)sqlite3_value_bytes(argv[0]), 0)) == NULL) {
		if (*own)
			cJSON_Delete(*b);
		sqlite3_result_int(ctx, 0);
		return 1;
	}
	return 0;
}

/* 1 when a contains b, jsonb's @>, with {} read as [] against an array and a scalar b
 * found among a top-level array's scalars. */
static int
so_contains_top(const cJSON *a, const cJSON *b)
{
	static const cJSON empty_array = { .type = cJSON_Array };
	const cJSON *x;

	if (cJSON_IsArray(a) && cJSON_IsObject(b) && b->child == NULL)
		b = &empty_array;
	if (cJSON_IsArray(a) && !cJSON_IsArray(b) && !cJSON_IsObject(b)) {
		cJSON_ArrayForEach(x, a)
			if (!cJSON_IsArray(x) && !cJSON_IsObject(x) && so_equal(x, b))
				return 1;
		return 0;
	}
	return so_contains(a, b);
}

/* sluice_contains (user data NULL) and sluice_contained (non-NULL). */
static void
so_contains_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	cJSON *a, *b;
	int r, own;

	(void)argc;
	if (so_args(ctx, argv, &a, &b, &own))
		return;
	if (sqlite3_user_data(ctx) == NULL)
		r = so_contains_top(a, b);
	else
		r = so_contains_top(b, a);
	cJSON_Delete(a);
	if (own)
		cJSON_Delete(b);
	sqlite3_result_int(ctx, r);
}

static void
so_overlaps_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const cJSON *x, *y;
	cJSON *a, *b;
	int r = 0, own;

	(void)argc;
	if (so_args(ctx, argv, &a, &b, &own))
		return;
	if (cJSON_IsArray(a) && cJSON_IsArray(b))
		cJSON_ArrayForEach(x, a) {
			cJSON_ArrayForEach(y, b)
				if (so_equal(x, y)) {
					r = 1;
					break;
				}
			if (r)
				break;
		}
	cJSON_Delete(a);
	if (own)
		cJSON_Delete(b);
	sqlite3_result_int(ctx, r);
}

/*
 * An integer range as PostgreSQL's int4range/int8range keep it: canonical [lo, hi), an
 * absent bound as INT64_MIN / INT64_MAX (infinite), or empty.
 */
struct so_range {
	int64_t lo, hi;
	int empty;
};

/* One bound of a range literal at *p, up to stop (',' or the closing bracket): an integer
 * or nothing (infinite, *inf set).  0, or -1 when malformed. */
static int
so_bound(const char **p, const char *end, int64_t *v, int *inf)
{
	char num[32];
	size_t n = 0;
	char *e;

	while (*p < end && **p == ' ')
		(*p)++;
	while (*p < end && (isdigit((unsigned char)**p) || **p == '-' || **p == '+') &&
	    n + 1 < sizeof(num))
		num[n++] = *(*p)++;
	while (*p < end && **p == ' ')
		(*p)++;
	*inf = n == 0;
	if (n == 0)
		return 0;
	num[n] = '\0';
	errno = 0;
	*v = strtoll(num, &e, 10);
	/* Within int8range's bounds, one short of the infinities' stand-ins. */
	return *e != '\0' || errno != 0 || *v == INT64_MIN || *v == INT64_MAX ? -1 : 0;
}

/* The literal s[0..len) as a range: 0, or -1 when it is not one. */
static int
so_range_parse(const char *s, size_t len, struct so_range *r)
{
	size_t i = 0, n = len;
	const char *p, *end;
	int lo_inc, hi_inc, lo_inf, hi_inf;

	while (i < n && s[i] == ' ')
		i++;
	while (n > i && s[n - 1] == ' ')
		n--;
	r->empty = 0;
	/* cppcheck-suppress knownConditionTrueFalse ; it loses n and i in the loops above. */
	if (n - i == 5 && strncasecmp(s + i, "empty", 5) == 0) {
		r->empty = 1;
		return 0;
	}
	/* cppcheck-suppress knownConditionTrueFalse ; as above. */
	if (n - i < 3 || (s[i] != '[' && s[i] != '(') || (s[n - 1] != ']' && s[n - 1] != ')'))
		return -1;
	lo_inc = s[i] == '[';
	hi_inc = s[n - 1] == ']';
	p = s + i + 1;
	end = s + n - 1;
	if (so_bound(&p, end, &r->lo, &lo_inf) < 0 || p >= end || *p++ != ',' ||
	    so_bound(&p, end, &r->hi, &hi_inf) < 0 || p != end)
		return -1;
	/* PostgreSQL: the lower bound must be at most the upper one, as written. */
	if (!lo_inf && !hi_inf && r->lo > r->hi)
		return -1;
	if (lo_inf)
		r->lo = INT64_MIN;
	else if (!lo_inc)
		r->lo++;
	if (hi_inf)
		r->hi = INT64_MAX;
	else if (hi_inc)
		r->hi++;
	r->empty = r->lo >= r->hi;
	return 0;
}

/* a op b for PostgreSQL's range operators; -1 for an unknown op. */
static int
so_range_op(const char *op, const struct so_range *a, const struct so_range *b)
{
	if (strcmp(op, "@>") == 0)
		return b->empty || (!a->empty && a->lo <= b->lo && b->hi <= a->hi);
	if (strcmp(op, "<@") == 0)
		return a->empty || (!b->empty && b->lo <= a->lo && a->hi <= b->hi);
	if (a->empty || b->empty)
		return strcmp(op, "&&") == 0 || strcmp(op, "<<") == 0 || strcmp(op, ">>") == 0 ||
		    strcmp(op, "&<") == 0 || strcmp(op, "&>") == 0 || strcmp(op, "-|-") == 0 ?
		    0 : -1;
	if (strcmp(op, "&&") == 0)
		return a->lo < b->hi && b->lo < a->hi;
	if (strcmp(op, "<<") == 0)
		return a->hi <= b->lo;
	if (strcmp(op, ">>") == 0)
		return a->lo >= b->hi;
	if (strcmp(op, "&<") == 0)
		return a->hi <= b->hi;
	if (strcmp(op, "&>") == 0)
		return a->lo >= b->lo;
	if (strcmp(op, "-|-") == 0)
		return a->hi == b->lo || b->hi == a->lo;
	return -1;
}

static void
so_range_fn(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	const char *op = (const char *)sqlite3_value_text(argv[0]);
	const char *a = (const char *)sqlite3_value_text(argv[1]);
	const char *b = (const char *)sqlite3_value_text(argv[2]);
	struct so_range ra, rb;
	int r;

	(void)argc;
	if (op == NULL || a == NULL || b == NULL) {
		sqlite3_result_null(ctx);
		return;
	}
	if (so_range_parse(b, (size_t)sqlite3_value_bytes(argv[2]), &rb) < 0) {
		sqlite3_result_error(ctx, "malformed range literal", -1);
		return;
	}
	/* A stored value that is not a range is in no relation to any. */
	if (so_range_parse(a, (size_t)sqlite3_value_bytes(argv[1]), &ra) < 0) {
		sqlite3_result_int(ctx, 0);
		return;
	}
	if ((r = so_range_op(op, &ra, &rb)) < 0)
		sqlite3_result_error(ctx, "unknown range operator", -1);
	else
		sqlite3_result_int(ctx, r);
}

int
db_range_literal_ok(const char *s, size_t len)
{
	struct so_range r;

	return so_range_parse(s, len, &r) == 0;
}

int
db_sqlite_ops_register(sqlite3 *conn)
{
	int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;

	if (sqlite3_create_function(conn, "sluice_contains", 2, flags, NULL, so_contains_fn,
	    NULL, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_create_function(conn, "sluice_contained", 2, flags, (void *)conn,
	    so_contains_fn, NULL, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_create_function(conn, "sluice_overlaps", 2, flags, NULL, so_overlaps_fn,
	    NULL, NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_create_function(conn, "sluice_range", 3, flags, NULL, so_range_fn,
	    NULL, NULL) != SQLITE_OK)
		return -1;
	return 0;
}

int
db_json_literal_ok(const char *s, size_t len)
{
	cJSON *v = so_parse(s, len, 1);

	cJSON_Delete(v);
	return v != NULL;
}
