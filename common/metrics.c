/*
 * metrics.c: the workers' counters and their sums (see metrics.h).  The writers are the
 * serve loop's threads (serve.c) and, for the database's events, the database layer
 * (gcommit.c, db_sqlite.c, db_pg_pool.c); the reader is sluiced (supervisor/stats.c).
 */
#include <string.h>

#include "metrics.h"
#include "req.h"

const uint64_t metrics_bounds_us[METRICS_BOUNDS] = {
	250, 500, 1000, 2500, 5000, 10000, 25000, 50000, 100000, 250000, 500000, 1000000,
	2500000, 5000000, 10000000
};

const char *const metrics_method_names[METRICS_METHOD__MAX] = {
	"GET", "HEAD", "POST", "PUT", "PATCH", "DELETE", "other"
};

#define LOAD(p)		__atomic_load_n((p), __ATOMIC_RELAXED)
/* Only the owning thread writes a count: a plain load and store, never torn. */
#define BUMP(p, n)	__atomic_store_n((p), LOAD(p) + (n), __ATOMIC_RELAXED)

size_t
metrics_page_size(int threads)
{
	return sizeof(struct metrics_page) +
	    (size_t)(threads > 0 ? threads : 1) * sizeof(struct metrics_counts);
}

enum metrics_method
metrics_method_of(unsigned req_method)
{
	switch (req_method) {
	case REQ_GET:
		return METRICS_GET;
	case REQ_HEAD:
		return METRICS_HEAD;
	case REQ_POST:
		return METRICS_POST;
	case REQ_PUT:
		return METRICS_PUT;
	case REQ_PATCH:
		return METRICS_PATCH;
	case REQ_DELETE:
		return METRICS_DELETE;
	default:
		return METRICS_OTHER;
	}
}

void
metrics_begin(struct metrics_page *pg)
{
	int64_t now = __atomic_add_fetch(&pg->head.inflight, 1, __ATOMIC_RELAXED);
	int64_t peak = LOAD(&pg->head.peak);

	while (now > peak && !__atomic_compare_exchange_n(&pg->head.peak, &peak, now, 1,
	    __ATOMIC_RELAXED, __ATOMIC_RELAXED))
		continue;
}

void
metrics_end(struct metrics_page *pg, struct metrics_counts *c, int status,
    enum metrics_method method, uint64_t dur_us, uint64_t budget_us)
{
	size_t b = 0;
	int cls = status / 100;

	if (cls < 1 || cls > METRICS_CLASSES)
		cls = 5;
	BUMP(&c->status[cls - 1], 1);
	BUMP(&c->method[method < METRICS_METHOD__MAX ? method : METRICS_OTHER], 1);
	while (b < METRICS_BOUNDS && dur_us > metrics_bounds_us[b])
		b++;
	BUMP(&c->bucket[b], 1);
	BUMP(&c->sum_us, dur_us);
	if (budget_us > 0 && dur_us > budget_us / 2) {
		BUMP(&c->slow, 1);
		if (dur_us > budget_us)
			BUMP(&c->timed_out, 1);
	}
	(void)__atomic_sub_fetch(&pg->head.inflight, 1, __ATOMIC_RELAXED);
}

void
metrics_conn(struct metrics_counts *c, int accepted)
{
	if (accepted)
		BUMP(&c->conns_accepted, 1);
	else
		BUMP(&c->conns_closed, 1);
}

/* Set once before the serving threads start, read by them: no lock needed. */
static struct metrics_db *metrics_dbp;

#define DBADD(f, n)	(void)__atomic_fetch_add(&metrics_dbp->f, (n), __ATOMIC_RELAXED)

void
metrics_db_attach(struct metrics_page *pg)
{
	metrics_dbp = pg != NULL ? &pg->db : NULL;
}

void
metrics_db_batch(unsigned writes)
{
	size_t b = 0;

	if (metrics_dbp == NULL || writes == 0)
		return;
	while (b < METRICS_BATCH_BOUNDS && writes > (1U << b))
		b++;
	DBADD(batches, 1);
	DBADD(batch_writes, writes);
	DBADD(batch_size[b], 1);
}

void
metrics_db_busy(void)
{
	if (metrics_dbp != NULL)
		DBADD(busy_retries, 1);
}

void
metrics_db_reconnect(void)
{
	if (metrics_dbp != NULL)
		DBADD(reconnects, 1);
}

void
metrics_db_wait(void)
{
	if (metrics_dbp != NULL)
		DBADD(conn_waits, 1);
}

void
metrics_db_open(int delta)
{
	if (metrics_dbp != NULL)
		DBADD(conns_open, delta);
}

void
metrics_db_busy_conn(int delta)
{
	if (metrics_dbp != NULL)
		DBADD(pg_conns_busy, delta);
}

/* Adds b's counts to a, and its gauges unless the worker of b is dead. */
static void
metrics_add_db(struct metrics_db *a, const struct metrics_db *b, int relaxed, int dead)
{
	size_t i;

#define ADD(f)	(a->f += relaxed ? LOAD(&b->f) : b->f)
	ADD(batches);
	ADD(batch_writes);
	for (i = 0; i < METRICS_BATCH_BUCKETS; i++)
		ADD(batch_size[i]);
	ADD(busy_retries);
	ADD(reconnects);
	ADD(conn_waits);
	if (!dead) {
		ADD(conns_open);
		ADD(pg_conns_busy);
	}
#undef ADD
}

static void
metrics_add_counts(struct metrics_counts *a, const struct metrics_counts *b, int relaxed)
{
	size_t i;

#define ADD(f)	(a->f += relaxed ? LOAD(&b->f) : b->f)
	for (i = 0; i < METRICS_CLASSES; i++)
		ADD(status[i]);
	for (i = 0; i < METRICS_METHOD__MAX; i++)
		ADD(method[i]);
	for (i = 0; i < METRICS_BUCKETS; i++)
		ADD(bucket[i]);
	ADD(sum_us);
	ADD(conns_accepted);
	ADD(conns_closed);
	ADD(slow);
	ADD(timed_out);
#undef ADD
}

void
metrics_add_page(struct metrics_sum *sum, const struct metrics_page *pg, int threads,
    int dead)
{
	struct metrics_counts w;
	int64_t inflight, peak;
	int i;

	memset(&w, 0, sizeof(w));
	for (i = 0; i < threads; i++)
		metrics_add_counts(&w, &pg->thread[i], 1);
	/* A thread may close a connection another accepted (kept connections move between
	 * threads), so only the worker's sum is meaningful; a dead worker's are all closed. */
	if (dead || w.conns_closed > w.conns_accepted)
		w.conns_closed = w.conns_accepted;
	metrics_add_counts(&sum->c, &w, 0);
	metrics_add_db(&sum->db, &pg->db, 1, dead);
	inflight = LOAD(&pg->head.inflight);
	peak = LOAD(&pg->head.peak);
	if (!dead && inflight > 0)
		sum->inflight += inflight;
	if (!dead)
		sum->threads += threads;
	if (peak > sum->peak)
		sum->peak = peak;
}

void
metrics_add(struct metrics_sum *a, const struct metrics_sum *b)
{
	metrics_add_counts(&a->c, &b->c, 0);
	metrics_add_db(&a->db, &b->db, 0, 0);
	a->inflight += b->inflight;
	a->threads += b->threads;
	if (b->peak > a->peak)
		a->peak = b->peak;
}

uint64_t
metrics_requests(const struct metrics_sum *s)
{
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < METRICS_BUCKETS; i++)
		n += s->c.bucket[i];
	return n;
}

double
metrics_quantile(const struct metrics_sum *s, double q)
{
	uint64_t total = metrics_requests(s), seen = 0;
	double rank, lo, hi;
	size_t i;

	if (total == 0)
		return 0;
	rank = q * (double)total;
	for (i = 0; i < METRICS_BUCKETS; i++) {
		if (s->c.bucket[i] > 0 && (double)(seen + s->c.bucket[i]) >= rank)
			break;
		seen += s->c.bucket[i];
	}
	if (i >= METRICS_BOUNDS)
		return (double)metrics_bounds_us[METRICS_BOUNDS - 1] / 1e6;
	lo = i == 0 ? 0 : (double)metrics_bounds_us[i - 1];
	hi = (double)metrics_bounds_us[i];
	return (lo + (hi - lo) * (rank - (double)seen) / (double)s->c.bucket[i]) / 1e6;
}
