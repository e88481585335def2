/*
 * where.c: the WHERE side of a statement: a relation's filters (leaf comparisons and
 * and()/or() trees, as parsed), the condition joining an embed to its parent (its foreign
 * key, or EXISTS through the junction of a many-to-many), and the EXISTS that !inner adds
 * for an embed.  select.c calls it for every relation it writes; write.c for the filters
 * of PATCH and DELETE.
 *
 * A leaf's left side is a column or a JSON path into one (struct rest_lhs); op(any) and
 * op(all) lists become the comparison with each value, or'ed or and'ed.
 *
 * Values compared with integer and numeric columns must look like numbers, on both back
 * ends (PostgreSQL would refuse them with 22P02, SQLite would quietly compare them as
 * text); everything else about a comparison is the dialect's (dialect.c).
 */
#include <stdio.h>
#include <string.h>

#include "rest.h"
#include "str.h"

static const struct rest_table *
tab(const struct rest_gen *g, int t)
{
	return &g->sc->tables[t];
}

static int
check_number(struct rest_gen *g, const struct rest_col *col, const char *v, size_t len)
{
	int64_t iv;
	size_t i = 0, digits = 0;

	if (col->kind == REST_K_INT) {
		if (str_to_int(v, len, INT64_MIN, INT64_MAX, &iv) == 0)
			return 0;
	} else if (col->kind == REST_K_NUM) {
		if (i < len && v[i] == '-')
			i++;
		for (; i < len && v[i] >= '0' && v[i] <= '9'; i++)
			digits++;
		if (i < len && v[i] == '.')
			for (i++; i < len && v[i] >= '0' && v[i] <= '9'; i++)
				digits++;
		if (i == len && digits > 0 && len < 64)
			return 0;
	} else
		return 0;
	rest_err_set(g->e, 400, "22P02", NULL, "invalid input syntax for type %s: \"%.*s\"",
	    col->kind == REST_K_INT ? "integer" : "numeric", len > 60 ? 60 : (int)len, v);
	return -1;
}

static const char *const sql_cmp[] = { "=", "<>", ">", ">=", "<", "<=" };

/* One comparison of l with the value v by c's operator (a leaf, or one value of a
 * quantified list). */
static int
gen_op(struct rest_gen *g, const struct rest_lhs *l, const struct rest_cond *c,
    const char *v, size_t len)
{
	switch (c->op) {
	case REST_OP_EQ: case REST_OP_NEQ: case REST_OP_GT:
	case REST_OP_GTE: case REST_OP_LT: case REST_OP_LTE:
	case REST_OP_ISDISTINCT:
		if ((l->path == NULL && check_number(g, l->c, v, len) < 0) ||
		    g->d->cmp(g, l, c->op == REST_OP_ISDISTINCT ? g->d->sqlb->is_not :
		    sql_cmp[c->op], v, len) < 0)
			return -1;
		return 0;
	case REST_OP_LIKE:
	case REST_OP_ILIKE:
		return g->d->like(g, l, c->op == REST_OP_ILIKE, v, len);
	default:
		return g->d->op(g, l, c, v, len);
	}
}

static int
gen_leaf(struct rest_gen *g, int t, const char *alias, const struct rest_cond *c)
{
	const struct rest_col *col = &tab(g, t)->cols[c->colidx];
	struct rest_lhs l = { alias, col, c->path };
	size_t i;

	if (c->negate)
		buf_puts(g->sql, "not ");
	buf_putc(g->sql, '(');
	switch (c->op) {
	case REST_OP_IN:
		if (c->nlist == 0) {
			buf_puts(g->sql, "false");
			break;
		}
		for (i = 0; i < c->nlist && c->path == NULL; i++)
			if (check_number(g, col, c->list[i], c->listlen[i]) < 0)
				return -1;
		if (g->d->in(g, &l, c) < 0)
			return -1;
		break;
	case REST_OP_IS:
		if (c->path != NULL) {
			if (g->d->lhs(g, &l) < 0)
				return -1;
		} else
			rest_gen_col(g, alias, t, c->colidx);
		buf_puts(g->sql, c->is == REST_IS_NULL ? " is null" :
		    c->is == REST_IS_NOT_NULL ? " is not null" :
		    c->is == REST_IS_TRUE ? " is true" : " is false");
		break;
	default:
		if (c->quant == REST_Q_NONE) {
			if (gen_op(g, &l, c, c->val, c->vallen) < 0)
				return -1;
			break;
		}
		/* op(any).{a,b}: (l op a or l op b); all: and; an empty list is false for any,
		 * true for all, as = any('{}') is. */
		if (c->nlist == 0)
			buf_puts(g->sql, c->quant == REST_Q_ANY ? "false" : "true");
		for (i = 0; i < c->nlist; i++) {
			if (i)
				buf_puts(g->sql, c->quant == REST_Q_ANY ? " or " : " and ");
			buf_putc(g->sql, '(');
			if (gen_op(g, &l, c, c->list[i], c->listlen[i]) < 0)
				return -1;
			buf_putc(g->sql, ')');
		}
	}
	buf_putc(g->sql, ')');
	return 0;
}

static int
gen_cond(struct rest_gen *g, int t, const char *alias, const struct rest_cond *c)
{
	size_t i;

	if (c->kind == REST_C_LEAF)
		return gen_leaf(g, t, alias, c);
	if (c->negate)
		buf_puts(g->sql, "not ");
	buf_putc(g->sql, '(');
	if (c->nkids == 0)
		buf_puts(g->sql, c->kind == REST_C_AND ? "true" : "false");
	for (i = 0; i < c->nkids; i++) {
		if (i)
			buf_puts(g->sql, c->kind == REST_C_AND ? " and " : " or ");
		if (gen_cond(g, t, alias, c->kids[i]) < 0)
			return -1;
	}
	buf_putc(g->sql, ')');
	return 0;
}

void
rest_sql_join(struct rest_gen *g, const struct rest_node *n, const char *alias,
    const char *palias)
{
	const struct rest_fk *fk = &g->sc->fks[n->fk];
	int i;

	if (n->junction >= 0) {
		const struct rest_fk *fk2 = &g->sc->fks[n->fk2];
		char j[16];

		rest_next_alias(g, "_j", j, sizeof(j));
		buf_puts(g->sql, "exists (select 1 from ");
		sqlb_ident(g->sql, tab(g, n->junction)->name);
		buf_printf(g->sql, " %s where ", j);
		for (i = 0; i < fk->ncols; i++) {
			rest_gen_col(g, j, fk->from, fk->from_cols[i]);
			buf_puts(g->sql, " = ");
			rest_gen_col(g, palias, fk->to, fk->to_cols[i]);
			buf_puts(g->sql, " and ");
		}
		for (i = 0; i < fk2->ncols; i++) {
			if (i)
				buf_puts(g->sql, " and ");
			rest_gen_col(g, j, fk2->from, fk2->from_cols[i]);
			buf_puts(g->sql, " = ");
			rest_gen_col(g, alias, fk2->to, fk2->to_cols[i]);
		}
		buf_putc(g->sql, ')');
		return;
	}
	for (i = 0; i < fk->ncols; i++) {
		if (i)
			buf_puts(g->sql, " and ");
		if (n->fk_forward) {
			rest_gen_col(g, alias, fk->to, fk->to_cols[i]);
			buf_puts(g->sql, " = ");
			rest_gen_col(g, palias, fk->from, fk->from_cols[i]);
		} else {
			rest_gen_col(g, alias, fk->from, fk->from_cols[i]);
			buf_puts(g->sql, " = ");
			rest_gen_col(g, palias, fk->to, fk->to_cols[i]);
		}
	}
}

int
rest_sql_filters(struct rest_gen *g, const struct rest_node *n, const char *alias)
{
	size_t i;

	if (n->where->nkids > 0) {
		buf_puts(g->sql, " and ");
		if (gen_cond(g, n->table, alias, n->where) < 0)
			return -1;
	}
	for (i = 0; i < n->nitems; i++) {
		const struct rest_node *c = n->items[i].embed;
		char a[16];

		if (n->items[i].kind != REST_I_EMBED || !c->inner)
			continue;
		rest_next_alias(g, "_t", a, sizeof(a));
		buf_puts(g->sql, " and exists (select 1 from ");
		sqlb_ident(g->sql, tab(g, c->table)->name);
		buf_printf(g->sql, " %s where ", a);
		rest_sql_join(g, c, a, alias);
		if (rest_sql_filters(g, c, a) < 0)
			return -1;
		buf_putc(g->sql, ')');
	}
	return 0;
}

int
rest_sql_where(struct rest_gen *g, struct rest_node *n, const char *alias, int first)
{
	if (first)
		buf_puts(g->sql, " where true");
	return rest_sql_filters(g, n, alias);
}
