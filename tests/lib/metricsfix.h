/*
 * metricsfix.h: the stack of the metrics address's tests (test_metrics, test_status):
 * sluiced with set metrics_listen on a free loopback port, bin/health (2 workers x 4
 * threads) at /health and bin/rest (1 worker x 2 threads) at /rest/v1/ on a one-table
 * SQLite file, nginx of a profile in front; and one request to that address.
 */
#ifndef SLUICE_METRICSFIX_H
#define SLUICE_METRICSFIX_H

#include "http.h"
#include "stack.h"

/*
 * Makes the SQLite file db anew (one table, item), then starts the stack on it with the
 * lines extra (e.g. "set nginx_status 9146\n", may be "") before the endpoints; the
 * metrics address's port goes to *mport.  Returns 0, or -1 as stack_start().
 */
int metricsfix_start(struct stack *s, const char *profile, const char *extra,
    const char *db, int *mport);

/* Stops the stack and removes db with its -wal, -shm and -wlock files. */
void metricsfix_stop(struct stack *s, const char *db);

/* The metrics address's answer to method path into r (5 s at most); 0, or -1 on a
 * transport error. */
int metricsfix_scrape(int port, const char *method, const char *path, struct http_resp *r);

#endif /* SLUICE_METRICSFIX_H */
