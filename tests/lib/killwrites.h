/*
 * killwrites.h: writes sent by client threads while a pool's workers are killed with
 * SIGKILL, then looked up in the database: every write answered 2xx is stored once, none
 * twice, no row stored that no client asked for, every other answer a JSON error or none
 * (test_pg_pool's pipelined writes, test_records_pg_writes' creates).
 */
#ifndef SLUICE_KILLWRITES_H
#define SLUICE_KILLWRITES_H

#include <stdint.h>

#include "stack.h"

/* One write and how it was answered. */
struct kw_write {
	uint32_t id;		/* client << 24 | sequence: unique in the run */
	short status;		/* 0: no answer */
	unsigned char json;	/* a non-2xx answer was a JSON error */
};

/* Sends write w->id (a row marked with it), filling w->status and w->json.  Called by
 * several threads at once. */
typedef void (*kw_send_fn)(struct kw_write *w);

struct kw_result {
	int kills;
	long acked, errors, failed_present, unanswered, lost, dup, nonjson, stored;
	long long total_rows;
};

/*
 * Runs clients threads of send until kills workers of pool have been killed, one every
 * every_ms (stack_kill_workers()), waits for the pool to be whole again, then looks every
 * write up on the database url: stored_sql counts the rows of one write, its $1 being
 * marker followed by the write's id in decimal; total_sql counts every row the writes
 * could have made.  Fills *out.  Returns 0, or -1 after a harness failure (a thread, the
 * database).
 */
int kw_run(struct stack *s, const char *pool, int clients, int kills, int every_ms,
    kw_send_fn send, const char *url, const char *stored_sql, const char *marker,
    const char *total_sql, struct kw_result *out);

/* Prints *r (what: "POSTs", "creates") and checks it: at least min_acked acknowledged,
 * none lost, none stored twice, no non-JSON error, no row unasked for. */
void kw_check(const struct kw_result *r, const char *what, long min_acked);

#endif /* SLUICE_KILLWRITES_H */
