/*
 * read.h: the records API's reads, shared by the records endpoint (handlers/records/) and
 * the realtime endpoint (handlers/realtime.c), so that a record sent to a subscriber is
 * read, checked and written by the same code as a GET of it: the request's context, the
 * rows read, list and view, the expand of relations, a record's JSON, the rules, the
 * error answers.
 *
 *   read.c        list, view, the expand, a record's JSON, an event's record
 *   read_error.c  the error responses, in PocketBase's shape
 */
#ifndef SLUICE_RECORDS_READ_H
#define SLUICE_RECORDS_READ_H

#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

#include "buf.h"
#include "coll.h"
#include "filter.h"
#include "query.h"
#include "req.h"
#include "resp.h"
#include "sqlb.h"

#define REC_SQL_MAX	(4 << 20)
#define REC_PER_PAGE	30
#define REC_PER_PAGE_MAX	1000
#define REC_TOKEN_TTL	(5 * 86400)

/* The per-thread state: the collections as this connection read them, and scratch. */
struct rec_thread {
	struct colls colls;
	struct buf sql;
	struct sqlb q;
	int idem_table;			/* sluice_idempotency is known to exist (idem.c) */
};

/* One record read from the database: its columns as text, by field index. */
struct rec_row {
	const char **v;			/* NULL: SQL NULL */
	size_t *len;
	struct rec_rows *ex;		/* expanded records, by expand node; NULL: none */
};

struct rec_rows {
	struct rec_row **r;
	size_t n;
	int64_t extra;			/* a column past the fields, read from the first row
					 * (a list's total, rec_list()); 0 when none */
};

/* One request's context. */
struct rec_ctx {
	struct req *rq;
	struct resp *rs;
	struct rec_thread *t;
	struct coll *c;			/* the collection of the route, or NULL */
	const char *id;			/* the record id of the route, or NULL */
	const struct coll *auth;	/* the signed-in record's collection, or NULL */
	struct rec_row *auth_row;
	int superuser;
	int auth_refreshable;		/* the token says "refreshable":true (auth-refresh
					 * renews only such a token) */
	/* A token whose record is not read yet (rec_authorize()'s deferral): its collection,
	 * its text and the record's id; NULL when none is pending. */
	const struct coll *auth_wait;
	const char *auth_tok, *auth_id;
	/* x->auth_row is the auth cache's copy (auth.c): a PostgreSQL create's INSERT checks
	 * that the record is still so (rec_auth_guard()). */
	int auth_kept;
	int auth_keep;			/* keep the record rec_auth_check() reads */
	struct filter_ctx f;
	struct filter_shape eq;		/* what the client's filter= is (rec_filter()) */
	struct filter_shape rule;	/* what the list rule is (rec_where()) */
	size_t cols_end;		/* where rec_where()'s column list ends in its text */
	size_t from_end;		/* where its FROM's table ends */
	/* The page's statement carries its total after the record's columns (rec_list()). */
	int wrapped;
	/* The expand node the page's statement joins (rec_join()), its columns from
	 * join_col on; NULL: none. */
	const struct query_expand *join;
	int join_col;
	cJSON *body;			/* the parsed body (write routes); freed by main.c */
	int form;			/* it came as a form: its values are all strings */
	int in_batch;			/* a request of a batch, run inside the batch's
					 * write: rec_commit() runs its write at once */
};

/* Answers an error in PocketBase's shape {"data":{...},"message":...,"status":N}; data is
 * a JSON object's text or NULL ({}); message NULL means the status's standard one.
 * Returns 0. */
int rec_error(struct resp *rs, int status, const char *message, const char *data);
/* Answers the error of a failed database call (logged, never shown).  Returns 0. */
int rec_db_error(struct rec_ctx *x);
/*
 * Appends the API rule r of collection c (alias t) to q as " AND (...)".  Returns 0,
 * 1 when the rule is null and the request is not a superuser's (the caller answers), or
 * -1 with the error response set.
 */
int rec_rule(struct rec_ctx *x, const struct coll *c, enum coll_rule r, const char *alias);
/* Writes one record as JSON (key order, hidden fields, email visibility, fields=,
 * expand).  show_email: the auth response.  0 or -1 (the buf's cap). */
struct rec_out {
	const struct query_fields *fields;
	const struct query_expands *ex;
	int show_email;
};
int rec_write(struct rec_ctx *x, struct buf *b, const struct coll *c,
    const struct rec_row *row, const struct rec_out *o, int node, const char *prefix,
    size_t plen, int whole);
/* The routes (read.c, write.c). */
int rec_list(struct rec_ctx *x);
int rec_view(struct rec_ctx *x);
/* Answers 200 with the record id of x->c as it is now, with the request's fields= and
 * expand= (a create's or an update's answer; no view rule).  Returns 0. */
int rec_show(struct rec_ctx *x, const char *id);
/* The same for the record in rows (rows->r[0], as a write's RETURNING read it). */
int rec_show_rows(struct rec_ctx *x, struct rec_rows *rows);
/* Runs x->t->q (the statement text in q->sql, its values bound) and reads every row of
 * collection c (its fields in order) into *out (arena memory).  Returns 0, or -1 with the
 * error response in x->rs (the failure left on x->rq->db). */
int rec_fetch(struct rec_ctx *x, const struct coll *c, struct rec_rows *out);
/* Reads one record of c by id (no rule) into *row.  1 found, 0 not, -1 error (answered). */
int rec_get(struct rec_ctx *x, const struct coll *c, const char *id, size_t idlen,
    const char *by, struct rec_row **row);

/* Sets x's signed-in record (x->auth, x->auth_row, x->superuser and the rules' view of
 * it in x->f): row, a record of the auth collection c, borrowed for x's life. */
void rec_auth_set(struct rec_ctx *x, const struct coll *c, struct rec_row *row);

/*
 * A realtime event's record as x's subscriber may see it (x->auth, x->superuser and
 * x->f's auth set as rec_authorize() sets them, x->rq's fields= and expand= the
 * subscription's): the record id of x->c read with rule r of x->c (COLL_RULE_LIST for a
 * "*" subscription, COLL_RULE_VIEW for one record), or, for a deleted record, its columns
 * as captured before the delete (gone, by field index) read as a one-row subquery under
 * the same rule (and x->rq's filter=, the subscription's own), then expanded and written
 * by rec_write() into b, as a GET writes it.
 * Returns 1 written, 0 hidden (no row passes the rule, or the rule is null and x is not
 * a superuser's), -1 an error (x->rs holds the answer a GET would give; b unusable).
 */
int rec_event_record(struct rec_ctx *x, const char *id, const struct rec_row *gone,
    enum coll_rule r, struct buf *b);

#endif /* SLUICE_RECORDS_READ_H */
