/*
 * rest_handler.h: what the request-handling files of the rest endpoint share (rest.c for
 * routing and reads, write.c for POST/PATCH/DELETE, rpc.c for functions).
 */
#ifndef SLUICE_REST_HANDLER_H
#define SLUICE_REST_HANDLER_H

#include "req.h"
#include "resp.h"
#include "rest.h"

/* Per serving thread (the endpoint's thread_init() state, rq->thread): its connection's
 * schema and a reusable SQL buffer. */
struct rest_thread {
	struct db *db;
	struct rest_schema *sc;
	struct buf sql;
};

enum rest_accept {
	REST_ACCEPT_BAD = -1,
	REST_ACCEPT_JSON,
	REST_ACCEPT_CSV,
	REST_ACCEPT_OBJECT,
};

/* Writes e as the response; returns 0. */
int rest_error(struct resp *rs, const struct rest_err *e);
/* 1 when the Prefer header carries token ("return=representation"). */
int rest_prefer(const struct req *rq, const char *token);
/* The response type the Accept header asks for, or REST_ACCEPT_BAD with e set. */
enum rest_accept rest_accept(const struct req *rq, struct rest_err *e);
/* Prepares t->sql and binds p.  0, or -1 after answering the database error. */
int rest_bind_run(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, struct db_stmt **out);
/* Parses select= and every parameter not in skip (NULL-terminated) nor an argument of fn. */
int rest_apply_params(struct req *rq, struct rest_node *root, const char *const *skip,
    const struct rest_func *fn, struct rest_err *e);
/* Runs a statement from rest_sql_select() and writes the response.  Returns 0. */
int rest_answer_read(struct req *rq, struct resp *rs, struct rest_thread *t,
    const struct rest_params *p, const struct rest_node *root, enum rest_accept acc,
    int count, const char *csv_header);
char *rest_csv_header(struct rest_gen *g, struct rest_node *root);

/* write.c */
int rest_insert(struct req *rq, struct resp *rs, struct rest_thread *t, int table);
int rest_update_delete(struct req *rq, struct resp *rs, struct rest_thread *t, int table);
/* rpc.c */
int rest_rpc(struct req *rq, struct resp *rs, struct rest_thread *t, const char *name);

#endif /* SLUICE_REST_HANDLER_H */
