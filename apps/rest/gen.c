/*
 * gen.c: what the rest generator adds to sqlb.h's quoting and bound values: a column of
 * the schema by its indexes, the statement's values with rest's cap and its PGRST100
 * answer past it, and the statement's aliases.
 *
 * Only identifiers matched against the schema and aliases made here reach the SQL text;
 * every value from the request is a bound parameter (rest_param_*()).
 */
#include <string.h>

#include "rest.h"
#include "str.h"

void
rest_gen_col(struct rest_gen *g, const char *alias, int t, int c)
{
	sqlb_col(g->sql, alias, g->sc->tables[t].cols[c].name);
}

void
rest_params_init(struct rest_params *p, struct arena *a)
{
	sqlb_vals_init(&p->vals, a, REST_PARAMS_MAX);
}

/* k from sqlb_val_*(), or -1 with g->e set: too many values, or no room left for them. */
static int
param_number(struct rest_gen *g, int k)
{
	if (k >= 0)
		return k;
	if (g->p->vals.n == g->p->vals.max)
		rest_err_set(g->e, 400, "PGRST100", NULL, "the request has too many values");
	else
		rest_err_set(g->e, 413, "too_large", NULL, "the request is too large");
	return -1;
}

int
rest_param_text(struct rest_gen *g, const char *v, size_t len)
{
	return param_number(g, sqlb_val_text(&g->p->vals, v, len));
}

int
rest_param_int(struct rest_gen *g, int64_t v)
{
	return param_number(g, sqlb_val_int(&g->p->vals, v));
}

int
rest_param_null(struct rest_gen *g)
{
	return param_number(g, sqlb_val_null(&g->p->vals));
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
