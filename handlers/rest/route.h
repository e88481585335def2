/*
 * route.h: the rest endpoint's binary (bin/rest), the thin part over the PostgREST engine
 * (apps/rest/, libapp_rest.a: rest/rest.h lists its files); main.c says what it serves.
 *
 *   main.c     the endpoint: struct endpoint and a one-line main()
 *   route.c    the router (the resource from the path, the verb from the method) and the
 *              per-thread state: schema, SQL dialect, SQL buffer
 */
#ifndef SLUICE_REST_ROUTE_H
#define SLUICE_REST_ROUTE_H

#include "req.h"
#include "resp.h"
#include "rest/rest.h"

struct db;

/* The thread's state with the schema read through db and the endpoint's settings: the
 * endpoint's thread_init().  NULL when the database failed (its error is on db), a setting
 * is malformed (logged) or memory ran out. */
void *rest_thread_init(struct db *db);
/* Takes the schemas read after the worker's last SIGHUP (thread_reload), reading them if
 * no other thread has; the old ones stay when the database fails.  0 or -1. */
int rest_thread_reload(void *state, struct db *db);
void rest_thread_fini(void *state);
/* The endpoint's handle(): routes the request to its verb.  rq->thread must be set. */
int rest_handle(struct req *rq, struct resp *rs);

#endif /* SLUICE_REST_ROUTE_H */
