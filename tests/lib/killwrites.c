/*
 * killwrites.c: writes under worker kills, and their tally (killwrites.h).
 */
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "db.h"
#include "harness.h"
#include "killwrites.h"

struct kw_client {
	pthread_t tid;
	int index;
	atomic_int *stop;
	kw_send_fn send;
	struct kw_write *w;
	size_t n, cap;
};

static void *
kw_client_run(void *arg)
{
	struct kw_client *c = arg;
	struct kw_write w, *nw;
	uint32_t seq = 0;

	while (!atomic_load(c->stop)) {
		memset(&w, 0, sizeof(w));
		w.id = (uint32_t)c->index << 24 | seq++;
		c->send(&w);
		if (c->n == c->cap) {
			c->cap = c->cap ? c->cap * 2 : 1024;
			if ((nw = realloc(c->w, c->cap * sizeof(*nw))) == NULL)
				break;
			c->w = nw;
		}
		c->w[c->n++] = w;
	}
	return NULL;
}

/* How many rows hold write id: >= 0, or -1 when the query failed. */
static int
kw_stored(struct db *db, const char *sql, const char *prefix, uint32_t id)
{
	struct db_stmt *st;
	char marker[64];
	int n = -1;

	snprintf(marker, sizeof(marker), "%s%u", prefix, id);
	if ((st = db_prepare(db, sql)) == NULL)
		return -1;
	if (db_bind_text(st, 1, marker, strlen(marker)) == 0 && db_step(st) == DB_ROW)
		n = (int)db_column_int(st, 0);
	db_reset(st);
	return n;
}

int
kw_run(struct stack *s, const char *pool, int clients, int kills, int every_ms,
    kw_send_fn send, const char *url, const char *stored_sql, const char *marker,
    const char *total_sql, struct kw_result *out)
{
	struct kw_client *c;
	struct db_stmt *st;
	struct db *db = NULL;
	atomic_int stop = 0;
	char err[256];
	int i, have, started = 0, rc = -1;
	size_t j;

	memset(out, 0, sizeof(*out));
	out->total_rows = -1;
	if ((c = calloc((size_t)clients, sizeof(*c))) == NULL)
		return -1;
	for (i = 0; i < clients; i++) {
		c[i].index = i + 1;
		c[i].stop = &stop;
		c[i].send = send;
		if (pthread_create(&c[i].tid, NULL, kw_client_run, &c[i]) != 0)
			break;
		started++;
	}
	out->kills = stack_kill_workers(s, pool, kills, every_ms);
	usleep(500 * 1000);
	stop = 1;
	for (i = 0; i < started; i++)
		pthread_join(c[i].tid, NULL);
	if (started < clients || stack_wait_pool(s, pool, 10000) != 0) {
		harness_fail(__FILE__, __LINE__, "%d of %d clients started, or pool %s not whole "
		    "again", started, clients, pool);
		goto out;
	}
	if (db_open(&db, url, NULL, err, sizeof(err)) < 0) {
		harness_fail(__FILE__, __LINE__, "db_open: %s", err);
		goto out;
	}
	for (i = 0; i < started; i++)
		for (j = 0; j < c[i].n; j++) {
			const struct kw_write *w = &c[i].w[j];

			if ((have = kw_stored(db, stored_sql, marker, w->id)) < 0) {
				harness_fail(__FILE__, __LINE__, "write %u looked up: %s", w->id,
				    db_errmsg(db));
				goto out;
			}
			out->stored += have;
			out->dup += have > 1;
			if (w->status >= 200 && w->status < 300) {
				out->acked++;
				out->lost += have == 0;
			} else if (w->status == 0) {
				out->unanswered++;
			} else {
				out->errors++;
				out->nonjson += !w->json;
				out->failed_present += have > 0;
			}
		}
	if ((st = db_prepare(db, total_sql)) != NULL && db_step(st) == DB_ROW)
		out->total_rows = db_column_int(st, 0);
	if (st != NULL)
		db_reset(st);
	rc = 0;
out:
	if (db != NULL)
		db_close(db);
	for (i = 0; i < clients; i++)
		free(c[i].w);
	free(c);
	return rc;
}

void
kw_check(const struct kw_result *r, const char *what, long min_acked)
{
	printf("  %d kills: %ld %s acknowledged, %ld errors (%ld stored all the same), "
	    "%ld unanswered; lost %ld, stored twice %ld, non-JSON errors %ld\n", r->kills,
	    r->acked, what, r->errors, r->failed_present, r->unanswered, r->lost, r->dup,
	    r->nonjson);
	CHECK(r->acked >= min_acked);
	CHECK_INT(r->lost, 0);
	CHECK_INT(r->dup, 0);
	CHECK_INT(r->nonjson, 0);
	/* No row the clients did not ask for. */
	CHECK_INT(r->total_rows, r->stored);
}
