/*
 * gen.c: the SQL writer's primitives, shared by every file that writes SQL: identifiers
 * and literals quoted, column references, placeholders and the values bound to them, and
 * the statement's aliases.
 *
 * Only identifiers matched against the schema and aliases made here reach the SQL text;
 * every value from the request is a bound parameter (rest_param_*()).
 */
#include <string.h>

#include "rest.h"
#include "str.h"

/* s between two q, each q inside doubled: a run without q is appended at once (every
 * statement quotes dozens of names). */
static void
quote_doubled(struct buf *b, const char *s, char q)
{
	const char *e;

	buf_putc(b, q);
	while ((e = strchr(s, q)) != NULL) {
		buf_append(b, s, (size_t)(e - s + 1));
		buf_putc(b, q);
		s = e + 1;
	}
	buf_puts(b, s);
	buf_putc(b, q);
}

void
rest_quote_ident(struct buf *b, const char *name)
{
	quote_doubled(b, name, '"');
}

/* A SQL string literal (JSON keys: schema names or request aliases). */
void
rest_sql_literal(struct buf *b, const char *s)
{
	quote_doubled(b, s, '\'');
}

void
rest_col_ref(struct buf *b, const char *alias, const char *name)
{
	buf_puts(b, alias);
	buf_putc(b, '.');
	rest_quote_ident(b, name);
}

void
rest_gen_col(struct rest_gen *g, const char *alias, int t, int c)
{
	rest_col_ref(g->sql, alias, g->sc->tables[t].cols[c].name);
}

void
rest_put_param(struct buf *b, int k)
{
	buf_puts(b, " $");
	buf_put_int(b, k);
}

static int
param_slot(struct rest_gen *g)
{
	if (g->p->n == REST_PARAMS_MAX) {
		rest_err_set(g->e, 400, "PGRST100", NULL, "the request has too many values");
		return -1;
	}
	g->p->isnull[g->p->n] = 0;
	g->p->isint[g->p->n] = 0;
	return g->p->n++;
}

int
rest_param_text(struct rest_gen *g, const char *v, size_t len)
{
	int k = param_slot(g);

	if (k < 0)
		return -1;
	g->p->v[k] = v;
	g->p->len[k] = len;
	return k + 1;
}

int
rest_param_int(struct rest_gen *g, int64_t v)
{
	int k = param_slot(g);

	if (k < 0)
		return -1;
	g->p->isint[k] = 1;
	g->p->iv[k] = v;
	return k + 1;
}

int
rest_param_null(struct rest_gen *g)
{
	int k = param_slot(g);

	if (k < 0)
		return -1;
	g->p->isnull[k] = 1;
	return k + 1;
}

void
rest_gen_start(struct rest_gen *g, struct rest_thread *t, struct arena *a, struct buf *sql,
    struct rest_params *p, struct rest_err *e, int64_t body_max)
{
	*g = (struct rest_gen){ .sc = t->sc, .d = t->d, .a = a, .sql = sql, .p = p, .e = e,
	    .pgrst12 = t->pgrst12, .access = &t->access, .body_max = body_max };
}

void
rest_next_alias(struct rest_gen *g, const char *prefix, char *out, size_t len)
{
	size_t n = strlen(prefix), m;
	char t[STR_INT_MAX];

	m = str_from_int(t, ++g->seq);
	if (n + m + 1 > len) {
		g->sql->failed = 1;	/* cannot happen with the callers' 16 bytes */
		out[0] = '\0';
		return;
	}
	memcpy(out, prefix, n);
	memcpy(out + n, t, m);
	out[n + m] = '\0';
}
