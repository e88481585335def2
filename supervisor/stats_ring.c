/*
 * stats_ring.c: the last minutes of every pool, for the status page's charts
 * (stats_html.c).
 *
 * Every STATS_RING_EVERY_MS (2 s) pool_tick() lets each running pool that keeps counters
 * take a sample, when sluiced has a metrics address to show them on: the pool's sums
 * (stats_pool_sum(), the same relaxed reads as a scrape) against those of the sample
 * before give the requests and 5xx a second, p50 and p99 of the requests that ended in
 * between (interpolated in the histogram's buckets, as metrics_quantile() does) and the
 * requests per FastCGI connection opened in between; the serving threads and the listen
 * queue are those of the moment.  The ring holds STATS_RING_LEN samples (150: 5 minutes),
 * about 6 kB a pool, made at the pool's first sample and freed with the pool; the oldest
 * sample is overwritten.  Nothing here runs on a request's path: the workers only count,
 * sluiced reads.
 */
#include <stdlib.h>
#include <string.h>

#include "metrics.h"
#include "sluiced.h"

/* A figure of m's own requests that ended between the ring's last sample and m. */
static double
stats_ring_quantile(const struct stats_ring *r, const struct metrics_sum *m, double q,
    uint64_t n)
{
	struct metrics_sum d;
	size_t i;

	if (n == 0)
		return -1;
	memset(&d, 0, sizeof(d));
	for (i = 0; i < METRICS_BUCKETS; i++)
		d.c.bucket[i] = m->c.bucket[i] >= r->last_bucket[i] ?
		    m->c.bucket[i] - r->last_bucket[i] : 0;
	/* metrics_requests() counts the classes: the interval's requests as class 2xx. */
	d.c.status[1] = n;
	return metrics_quantile(&d, q) * 1000;
}

/* Keeps m's counts as the ring's last. */
static void
stats_ring_keep(struct stats_ring *r, const struct metrics_sum *m, int64_t now)
{
	r->last_at = now;
	r->last_req = metrics_requests(m);
	r->last_5xx = m->c.status[4];
	r->last_acc = m->c.conns_accepted;
	memcpy(r->last_bucket, m->c.bucket, sizeof(r->last_bucket));
}

/* One sample of p at now into its ring. */
static void
stats_ring_sample(struct pool *p, struct stats_ring *r, int64_t now)
{
	struct stats_point *pt;
	struct metrics_sum m;
	uint64_t req, n, acc;
	double secs;

	stats_pool_sum(p, &m);
	req = metrics_requests(&m);
	/* The first sample, or counts that went back (they only grow): a start. */
	if (r->last_at == 0 || now <= r->last_at || req < r->last_req ||
	    m.c.status[4] < r->last_5xx || m.c.conns_accepted < r->last_acc) {
		stats_ring_keep(r, &m, now);
		return;
	}
	secs = (double)(now - r->last_at) / 1000;
	n = req - r->last_req;
	acc = m.c.conns_accepted - r->last_acc;
	pt = &r->pt[r->head];
	pt->at = now;
	pt->rps = (float)((double)n / secs);
	pt->err5 = (float)((double)(m.c.status[4] - r->last_5xx) / secs);
	pt->p50_ms = (float)stats_ring_quantile(r, &m, 0.5, n);
	pt->p99_ms = (float)stats_ring_quantile(r, &m, 0.99, n);
	pt->busy = (float)stats_busy(&m);
	pt->threads = (float)m.threads;
	pt->queue = p->queue.known ? (float)p->queue.now : -1;
	pt->reuse = acc > 0 ? (float)((double)n / (double)acc) : -1;
	r->head = (r->head + 1) % STATS_RING_LEN;
	if (r->n < STATS_RING_LEN)
		r->n++;
	stats_ring_keep(r, &m, now);
}

int64_t
stats_ring_tick(struct pool *p, int64_t now)
{
	if (p->ring == NULL && (p->ring = calloc(1, sizeof(*p->ring))) == NULL)
		return now + STATS_RING_EVERY_MS;
	if (now >= p->ring->next) {
		stats_ring_sample(p, p->ring, now);
		p->ring->next = now + STATS_RING_EVERY_MS;
	}
	return p->ring->next;
}

void
stats_ring_free(struct pool *p)
{
	free(p->ring);
	p->ring = NULL;
}
