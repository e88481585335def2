/*
 * db_sqlite_json.c: two SQL functions that let SQLite build a JSON response body fast.
 *
 *   sluice_obj(template, v1, v2, ...)        -> the template with the values filled in
 *   sluice_arr(x)  (aggregate)               -> [x,x,...], or [] for no rows
 *   sluice_arr(template, v1, ...)  (aggregate) -> [obj,obj,...]: each row's object built
 *                                               in place, or [] for no rows
 *   sluice_embed(template, v1, ...) (aggregate) -> the same array, as a pointer that only
 *                                               a parent template's %e reads
 *
 * A template is the object's text with a placeholder where each value goes, in order:
 * '{"album_id":%v,"title":%v,"track":%j}'.  %v renders an SQL value as JSON (NULL as null,
 * integers bare, reals as json_quote() does, text as a quoted string; a blob is an error,
 * as in json_quote()), %j splices a value that is already JSON text (NULL as null), %% is
 * a literal %.  %? and %. bracket an optional group, a to-one embed written in its
 * parent's template: %? takes a value and, when it is NULL, writes null in place of the
 * group and passes over the group's text and values; else it writes nothing and the group
 * is rendered; %. ends the group and takes no value.  Groups nest.  So
 * '{"id":%v,"genre":%?{"genre_id":%v,"name":%v}%.}' with (1, NULL, NULL, NULL) gives
 * {"id":1,"genre":null}, and with (1, 2, 2, 'Jazz') the genre's object: no second call,
 * no object text of its own copied into the parent.  sluice_arr(x)'s elements are JSON
 * text, spliced as they are.  %e splices an embedded resource's array: sluice_embed()'s
 * pointer or JSON text; a NULL there is an error, not null (an array never is NULL, and one
 * that lost its pointer on the way must not read as null).  sluice_embed() exists because
 * a scalar subquery's value is copied twice on its way to the parent's call (OP_Copy
 * makes a text value its own), a pointer is not: the all-albums embed copied its tracks'
 * arrays, most of its body, twice per request.
 * sluice_arr(template, ...) compiles the template of an array's first row and uses it for
 * every row: it must not change within a group (the generated SQL passes a literal).  The
 * SQL that uses them is generated: keys are escaped once, into the template, when the
 * statement is built, not once per row, and the template is one argument however wide the
 * row.
 *
 * Why not json_object()/json_group_array(): a JSON subtype does not cross a subquery, so an
 * embedded resource built by a subquery would have to go through json() (a full parse of
 * the nested text at every level) or be spliced with string concatenation (|| and rtrim),
 * and SQLite's json_object() itself is slow on wide rows.  These two do one
 * pass over the values into one buffer; the aggregate form writes each object straight
 * into the array, not into a value of its own that is then copied.  The SQL that uses them
 * (apps/rest/select.c) stays one statement that returns the finished body, and both are
 * registered on every SQLite connection by db_sqlite.c as deterministic and innocuous.
 */
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <sqlite3.h>

#include "extern.h"
#include "str.h"

/* A growing output buffer, never longer than max (the connection's SQLITE_LIMIT_LENGTH:
 * the response cap); failed latches an allocation failure (SJ_NOMEM) or the cap
 * (SJ_TOOBIG). */
struct sj_buf {
	char *p;
	size_t len, cap, max;
	int failed;
};

enum { SJ_NOMEM = 1, SJ_TOOBIG = 2 };

/* Makes room for more bytes; -1 (and failed set) when memory runs out. */
static int
sj_grow(struct sj_buf *b, size_t more)
{
	size_t cap;
	char *p;

	if (b->failed)
		return -1;
	if (b->len + more > b->max) {
		b->failed = SJ_TOOBIG;
		return -1;
	}
	cap = b->cap ? b->cap : 512;
	while (cap < b->len + more) {
		if (cap > SIZE_MAX / 2)
			goto fail;
		cap *= 2;
	}
	/* Doubling stops at the cap (and the ']' that closes an array). */
	if (cap > b->max + 1)
		cap = b->max + 1;
	if ((p = realloc(b->p, cap)) == NULL)
		goto fail;
	b->p = p;
	b->cap = cap;
	return 0;
fail:
	b->failed = SJ_NOMEM;
	return -1;
}

/* The common case, room already there, without a call: this runs for every value. */
static inline int
sj_reserve(struct sj_buf *b, size_t more)
{
	return b->len + more <= b->cap ? 0 : sj_grow(b, more);
}

static void
sj_put(struct sj_buf *b, const char *s, size_t n)
{
	/* Empty pieces are common (a template that starts with a value): the buffer may
	 * still be NULL, and memcpy() must not see it. */
	if (n > 0 && sj_reserve(b, n) == 0) {
		memcpy(b->p + b->len, s, n);
		b->len += n;
	}
}

static void
sj_putc(struct sj_buf *b, char c)
{
	if (sj_reserve(b, 1) == 0)
		b->p[b->len++] = c;
}

/* Bytes that a JSON string must escape: control characters, the quote, the backslash. */
static const unsigned char sj_escape[256] = {
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1,
	['"'] = 1, ['\\'] = 1,
};

/* A JSON string: quotes, backslashes and control characters escaped, the rest as is. */
static void
sj_string(struct sj_buf *b, const unsigned char *s, size_t n)
{
	static const char hex[] = "0123456789abcdef";
	size_t i, run = 0, need;

	/* Worst case six bytes per input byte, plus the quotes; near the cap, the exact
	 * length, so that a long string that fits is not refused. */
	if (n > (SIZE_MAX - 2) / 6) {
		b->failed = SJ_TOOBIG;
		return;
	}
	need = 6 * n + 2;
	if (b->len + need > b->max) {
		need = n + 2;
		for (i = 0; i < n; i++)
			if (sj_escape[s[i]])
				need += strchr("\"\\\b\f\n\r\t", s[i]) != NULL &&
				    s[i] != '\0' ? 1 : 5;
	}
	if (sj_reserve(b, need) < 0)
		return;
	b->p[b->len++] = '"';
	for (i = 0; i < n; i++) {
		unsigned char c = s[i];
		char *o;

		if (!sj_escape[c])
			continue;
		memcpy(b->p + b->len, s + run, i - run);
		b->len += i - run;
		run = i + 1;
		o = b->p + b->len;
		o[0] = '\\';
		switch (c) {
		case '"': case '\\': o[1] = (char)c; b->len += 2; break;
		case '\b': o[1] = 'b'; b->len += 2; break;
		case '\f': o[1] = 'f'; b->len += 2; break;
		case '\n': o[1] = 'n'; b->len += 2; break;
		case '\r': o[1] = 'r'; b->len += 2; break;
		case '\t': o[1] = 't'; b->len += 2; break;
		default:
			o[1] = 'u';
			o[2] = '0';
			o[3] = '0';
			o[4] = hex[c >> 4];
			o[5] = hex[c & 15];
			b->len += 6;
		}
	}
	memcpy(b->p + b->len, s + run, n - run);
	b->len += n - run;
	b->p[b->len++] = '"';
}

static void
sj_int(struct sj_buf *b, sqlite3_int64 v)
{
	/* Formatted in place: no copy of the digits. */
	if (sj_reserve(b, STR_INT_MAX) == 0)
		b->len += str_from_int(b->p + b->len, v);
}

/*
 * A real as json_quote() renders it ("%!0.15g": 15 significant digits, always a decimal
 * point), but null for an infinity.  SQLite's printf converts digit by digit; prices and other values with at most
 * two decimals, the common case, take a shortcut that gives the same text.
 */
static void
sj_real(struct sj_buf *b, double v)
{
	char t[64];
	long long c;
	int n;

	/* An infinity (SQLite stores 1e999 as one; NaN it stores as NULL) has no JSON: null,
	 * where json_quote() would write Inf. */
	if (!isfinite(v)) {
		sj_put(b, "null", 4);
		return;
	}
	if (v > -1e12 && v < 1e12 && v != 0) {
		c = (long long)(v * 100.0 + (v < 0 ? -0.5 : 0.5));
		if ((double)c / 100.0 == v) {
			long long u = c < 0 ? -c : c;

			if (c < 0)
				sj_putc(b, '-');
			sj_int(b, u / 100);
			t[0] = '.';
			t[1] = (char)('0' + u / 10 % 10);
			t[2] = (char)('0' + u % 10);
			sj_put(b, t, t[2] == '0' ? 2 : 3);
			return;
		}
	}
	sqlite3_snprintf((int)sizeof(t), t, "%!0.15g", v);
	n = (int)strlen(t);
	sj_put(b, t, (size_t)n);
}

/*
 * A text value's bytes.  On a UTF-8 database (utf8 set) sqlite3_value_blob() hands out the
 * stored bytes as they are; sqlite3_value_text() would first copy them to add a NUL
 * terminator, a copy of every string and of every nested object, a large part of the
 * cost of a large embed.  Other encodings go through the conversion.
 */
static const unsigned char *
sj_text(sqlite3_value *v, int utf8, size_t *n)
{
	const unsigned char *p = utf8 ? sqlite3_value_blob(v) : sqlite3_value_text(v);

	*n = (size_t)sqlite3_value_bytes(v);
	return p != NULL ? p : (const unsigned char *)"";
}

/* Appends one SQL value as JSON; returns -1 for a blob. */
/* The pointer type of sluice_embed()'s arrays (sqlite3_result_pointer()). */
static const char sj_embed_type[] = "sluice_embed";

static int
sj_value(struct sj_buf *b, sqlite3_value *v, int raw, int utf8)
{
	const unsigned char *p;
	size_t n;

	switch (sqlite3_value_type(v)) {
	case SQLITE_NULL:
		sj_put(b, "null", 4);
		return 0;
	case SQLITE_INTEGER:
		sj_int(b, sqlite3_value_int64(v));
		return 0;
	case SQLITE_FLOAT:
		sj_real(b, sqlite3_value_double(v));
		return 0;
	case SQLITE_TEXT:
		p = sj_text(v, utf8, &n);
		if (raw)
			sj_put(b, (const char *)p, n);
		else
			sj_string(b, p, n);
		return 0;
	default:
		return -1;
	}
}

/*
 * A compiled template: its literal pieces back to back in text (%% already one %), and
 * after each piece but the last a placeholder: a value spliced (%j) or rendered (%v), or
 * the two marks of an optional group (%? takes a value: NULL writes null and skips the
 * group, its values included; %. ends the group and takes none).  Compiled once per
 * statement for sluice_obj() (SQLite keeps it with the constant argument) and once per
 * array for sluice_arr(), not once per row: scanning the template for its placeholders on
 * every row shows in the profile of a large embed.
 */
enum sj_kind { SJ_VALUE, SJ_RAW, SJ_OPT, SJ_END, SJ_EMBED };

struct sj_tpl {
	int nvals;		/* values taken: %v, %j and %? */
	int nph;		/* placeholders */
	const char *text;
	const unsigned char *src;	/* the template as given, srclen bytes */
	size_t srclen;
	struct sj_piece {
		size_t len;	/* literal bytes before placeholder i (after the last: the end) */
		enum sj_kind kind;
		/* %?: the placeholder of its %., the literal bytes and the values up to it */
		int skip, skip_vals;
		size_t skip_text;
	} piece[];		/* nph + 1 */
};

/* How deep optional groups may nest in one template (embeds in embeds). */
#define SJ_TPL_DEPTH	64

static const char sj_tpl_err[] = "sluice_obj: one value per %v, %j or %? in the template, "
    "and one %. per %?";

/* Compiles a template (t, n bytes); NULL with *err set when it is malformed or memory
 * ran out.  One free() releases it. */
static struct sj_tpl *
sj_tpl_compile(const unsigned char *t, size_t n, const char **err)
{
	struct sj_tpl *tp;
	size_t i, npct = 0, len = 0, off = 0, openoff[SJ_TPL_DEPTH];
	char *text;
	int k = 0, nvals = 0, depth = 0, open[SJ_TPL_DEPTH], j;

	for (i = 0; i < n; i++)
		npct += t[i] == '%';
	tp = malloc(sizeof(*tp) + (npct + 1) * sizeof(tp->piece[0]) + 2 * n + 1);
	if (tp == NULL) {
		*err = NULL;
		return NULL;
	}
	text = (char *)&tp->piece[npct + 1];
	/* The source after the text (which is at most n bytes): sj_tpl_same() reads it. */
	if (n > 0)
		memcpy(text + n, t, n);
	tp->src = (const unsigned char *)text + n;
	tp->srclen = n;
	for (i = 0; i < n; i++) {
		if (t[i] != '%') {
			text[len++] = (char)t[i];
			continue;
		}
		if (i + 1 == n || t[i + 1] == '\0' || strchr("%vje?.", t[i + 1]) == NULL)
			goto bad;
		if (t[++i] == '%') {
			text[len++] = '%';
			continue;
		}
		tp->piece[k].len = len;
		off += len;
		tp->piece[k].kind = t[i] == 'v' ? SJ_VALUE : t[i] == 'j' ? SJ_RAW :
		    t[i] == 'e' ? SJ_EMBED : t[i] == '?' ? SJ_OPT : SJ_END;
		if (t[i] == '?') {
			if (depth == SJ_TPL_DEPTH)
				goto bad;
			openoff[depth] = off;
			open[depth++] = k;
			/* Until its %. is seen: the index of the group's own value. */
			tp->piece[k].skip_vals = nvals;
		} else if (t[i] == '.') {
			if (depth == 0)
				goto bad;
			j = open[--depth];
			tp->piece[j].skip = k;
			tp->piece[j].skip_vals = nvals - tp->piece[j].skip_vals - 1;
			tp->piece[j].skip_text = off - openoff[depth];
		}
		nvals += t[i] != '.';
		text += len;
		len = 0;
		k++;
	}
	if (depth > 0)
		goto bad;
	tp->piece[k].len = len;
	tp->piece[k].kind = SJ_VALUE;
	tp->nvals = nvals;
	tp->nph = k;
	tp->text = (const char *)&tp->piece[npct + 1];
	return tp;
bad:
	free(tp);
	*err = sj_tpl_err;
	return NULL;
}
static const char sj_embed_err[] = "sluice_obj: %e takes sluice_embed()'s array or JSON "
    "text";

/* %e: a sluice_embed() array (a pointer) or JSON text, spliced; -1 for anything else, a
 * NULL included (an array that lost its way would otherwise read as null). */
static int
sj_embed_value(struct sj_buf *b, sqlite3_value *v, int utf8)
{
	const struct sj_buf *e;
	const unsigned char *p;
	size_t n;

	if ((e = sqlite3_value_pointer(v, sj_embed_type)) != NULL) {
		sj_put(b, e->p, e->len);
		return 0;
	}
	if (sqlite3_value_type(v) != SQLITE_TEXT)
		return -1;
	p = sj_text(v, utf8, &n);
	sj_put(b, (const char *)p, n);
	return 0;
}

/* Renders tp with the values argv[0..argc-1] into b.  0, or -1 with *err set. */
static int
sj_tpl_render(struct sj_buf *b, const struct sj_tpl *tp, int argc, sqlite3_value **argv,
    int utf8, const char **err)
{
	const struct sj_piece *pc;
	const char *p = tp->text;
	int i, v = 0;

	if (argc != tp->nvals) {
		*err = sj_tpl_err;
		return -1;
	}
	for (i = 0; i < tp->nph; i++) {
		pc = &tp->piece[i];
		sj_put(b, p, pc->len);
		p += pc->len;
		if (pc->kind == SJ_END)
			continue;
		if (pc->kind == SJ_OPT) {
			if (sqlite3_value_type(argv[v++]) != SQLITE_NULL)
				continue;
			/* The group is null: its text and values are passed over. */
			sj_put(b, "null", 4);
			p += pc->skip_text;
			v += pc->skip_vals;
			i = pc->skip;
			continue;
		}
		if (pc->kind == SJ_EMBED) {
			if (sj_embed_value(b, argv[v++], utf8) < 0) {
				*err = sj_embed_err;
				return -1;
			}
			continue;
		}
		if (sj_value(b, argv[v++], pc->kind == SJ_RAW, utf8) < 0) {
			*err = "JSON cannot hold BLOB values";
			return -1;
		}
	}
	sj_put(b, p, tp->piece[tp->nph].len);
	return 0;
}

/* Whether tp was compiled from the template argument v. */
static int
sj_tpl_same(const struct sj_tpl *tp, sqlite3_value *v, int utf8)
{
	const unsigned char *t;
	size_t n;

	if (sqlite3_value_type(v) != SQLITE_TEXT)
		return 0;
	t = sj_text(v, utf8, &n);
	return n == tp->srclen && (n == 0 || memcmp(t, tp->src, n) == 0);
}

/* The longest text a function may build on ctx's connection (SQLITE_LIMIT_LENGTH). */
static size_t
sj_max(sqlite3_context *ctx)
{
	int n = sqlite3_limit(sqlite3_context_db_handle(ctx), SQLITE_LIMIT_LENGTH, -1);

	return n > 0 ? (size_t)n : 0;
}

/* Reports a buffer's latched failure on ctx. */
static void
sj_failed(sqlite3_context *ctx, const struct sj_buf *b)
{
	if (b->failed == SJ_TOOBIG)
		sqlite3_result_error_toobig(ctx);
	else
		sqlite3_result_error_nomem(ctx);
}

/* The template argument compiled, or NULL with an error set on ctx. */
static struct sj_tpl *
sj_tpl_arg(sqlite3_context *ctx, sqlite3_value *v, int utf8)
{
	const unsigned char *t;
	struct sj_tpl *tp;
	const char *err;
	size_t n;

	if (sqlite3_value_type(v) != SQLITE_TEXT) {
		sqlite3_result_error(ctx, "sluice_obj(template, value, ...)", -1);
		return NULL;
	}
	t = sj_text(v, utf8, &n);
	if ((tp = sj_tpl_compile(t, n, &err)) == NULL) {
		if (err == NULL)
			sqlite3_result_error_nomem(ctx);
		else
			sqlite3_result_error(ctx, err, -1);
	}
	return tp;
}

static void
sj_obj(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sj_buf b = { NULL, 0, 0, sj_max(ctx), 0 };
	int utf8 = sqlite3_user_data(ctx) != NULL, fresh = 0;
	struct sj_tpl *tp;
	const char *err;

	if (argc < 1) {
		sqlite3_result_error(ctx, "sluice_obj(template, value, ...)", -1);
		return;
	}
	if ((tp = sqlite3_get_auxdata(ctx, 0)) == NULL) {
		if ((tp = sj_tpl_arg(ctx, argv[0], utf8)) == NULL)
			return;
		fresh = 1;
	}
	if (sj_tpl_render(&b, tp, argc - 1, argv + 1, utf8, &err) < 0)
		sqlite3_result_error(ctx, err, -1);
	else if (b.failed)
		sj_failed(ctx, &b);
	else {
		sqlite3_result_text64(ctx, b.p ? b.p : "", b.len, b.p ? free : SQLITE_STATIC,
		    SQLITE_UTF8);
		b.p = NULL;
	}
	free(b.p);
	/* Last: SQLite may free tp at once (it keeps it only for a constant argument). */
	if (fresh)
		sqlite3_set_auxdata(ctx, 0, tp, free);
}

/*
 * sluice_arr()'s state: the array so far.  Its template is compiled once per statement,
 * not once per group (an embed's array is one group per parent row): SQLite keeps it as
 * the constant argument's auxiliary data, and the first row of each group checks that it
 * is still the argument's template.
 */
struct sj_agg {
	struct sj_buf b;
};

static void
sj_arr_step(sqlite3_context *ctx, int argc, sqlite3_value **argv)
{
	struct sj_agg *a = sqlite3_aggregate_context(ctx, (int)sizeof(*a));
	int utf8 = sqlite3_user_data(ctx) != NULL, first, fresh = 0;
	struct sj_tpl *tp;
	const char *err = "JSON cannot hold BLOB values";

	if (a == NULL) {
		sqlite3_result_error_nomem(ctx);
		return;
	}
	if (argc < 1) {
		sqlite3_result_error(ctx, "sluice_arr(json) or sluice_arr(template, value, ...)", -1);
		return;
	}
	/* The first row sets the cap; an error from a step ends the statement at once. */
	first = a->b.len == 0;
	if (first)
		a->b.max = sj_max(ctx);
	sj_putc(&a->b, first ? '[' : ',');
	if (argc == 1) {
		if (sj_value(&a->b, argv[0], 1, utf8) < 0)
			sqlite3_result_error(ctx, err, -1);
		else if (a->b.failed)
			sj_failed(ctx, &a->b);
		return;
	}
	tp = sqlite3_get_auxdata(ctx, 0);
	if (tp != NULL && first && !sj_tpl_same(tp, argv[0], utf8))
		tp = NULL;
	if (tp == NULL) {
		if ((tp = sj_tpl_arg(ctx, argv[0], utf8)) == NULL)
			return;
		fresh = 1;
	}
	if (sj_tpl_render(&a->b, tp, argc - 1, argv + 1, utf8, &err) < 0)
		sqlite3_result_error(ctx, err, -1);
	else if (a->b.failed)
		sj_failed(ctx, &a->b);
	/* Last: SQLite may free tp at once (when it runs out of memory). */
	if (fresh)
		sqlite3_set_auxdata(ctx, 0, tp, free);
}

static void
sj_arr_final(sqlite3_context *ctx)
{
	struct sj_agg *a = sqlite3_aggregate_context(ctx, 0);

	if (a == NULL || a->b.len == 0) {
		free(a != NULL ? a->b.p : NULL);
		sqlite3_result_text(ctx, "[]", 2, SQLITE_STATIC);
		return;
	}
	sj_putc(&a->b, ']');
	if (a->b.failed) {
		free(a->b.p);
		sj_failed(ctx, &a->b);
		return;
	}
	/* The aggregate context is freed by SQLite; the text is handed over. */
	sqlite3_result_text64(ctx, a->b.p, a->b.len, free, SQLITE_UTF8);
}

/* Frees a sluice_embed() array. */
static void
sj_embed_free(void *p)
{
	struct sj_buf *e = p;

	free(e->p);
	free(e);
}

/*
 * sluice_embed(): sluice_arr(template, ...) whose array only a %j of a parent's
 * template reads, as a pointer: a scalar subquery's value is copied twice on its way to
 * the parent's call (an embed's array, once per parent row), a pointer is not.  No rows
 * give the text [], as sluice_arr() does.
 */
static void
sj_embed_final(sqlite3_context *ctx)
{
	struct sj_agg *a = sqlite3_aggregate_context(ctx, 0);
	struct sj_buf *e;

	if (a == NULL || a->b.len == 0 || a->b.failed) {
		sj_arr_final(ctx);
		return;
	}
	sj_putc(&a->b, ']');
	if (a->b.failed || (e = malloc(sizeof(*e))) == NULL) {
		free(a->b.p);
		if (a->b.failed)
			sj_failed(ctx, &a->b);
		else
			sqlite3_result_error_nomem(ctx);
		return;
	}
	*e = a->b;
	sqlite3_result_pointer(ctx, e, sj_embed_type, sj_embed_free);
}

int
db_sqlite_json_register(sqlite3 *conn, int utf8)
{
	int flags = SQLITE_UTF8 | SQLITE_DETERMINISTIC | SQLITE_INNOCUOUS;
	/* The user data only says "the database is UTF-8": any non-NULL pointer. */
	void *u = utf8 ? (void *)conn : NULL;

	if (sqlite3_create_function(conn, "sluice_obj", -1, flags, u, sj_obj, NULL,
	    NULL) != SQLITE_OK)
		return -1;
	if (sqlite3_create_function(conn, "sluice_arr", -1, flags, u, NULL, sj_arr_step,
	    sj_arr_final) != SQLITE_OK)
		return -1;
	if (sqlite3_create_function(conn, "sluice_embed", -1, flags, u, NULL, sj_arr_step,
	    sj_embed_final) != SQLITE_OK)
		return -1;
	return 0;
}
