/*
 * stats.c: what the pools' workers counted (common/metrics.h), as sluiced keeps and shows
 * it.
 *
 * Pages.  Before it forks a worker, pool.c asks here for a zeroed counters page (a memfd
 * the child gets as fd 4, mapped here too).  The worker counts into it; sluiced only reads
 * it, with relaxed loads, so reading never blocks a request.  When the worker dies (exit,
 * crash, SIGKILL, the watchdog) pool_reap() calls stats_retire() before anything reuses
 * its place: its counts join the pool's retired totals, so a pool's counts only grow.
 * A removed pool's counts go with it.
 *
 * Four ways out, all from the same sums: a few words on each pool's line of `ctl status`,
 * `ctl status --json` (every figure, and nginx's stub_status figures with set
 * nginx_status), and on `set metrics_listen ADDR:PORT`, an address of
 * sluiced's own (never nginx's listener), the Prometheus text format (version 0.0.4) at
 * /metrics and the status page at / and /status (stats_html.c), with nginx's stub_status
 * figures beside them when set nginx_status is given (stubstatus.c).  It answers GET and
 * HEAD, 405 to any other method and 404 to any other path, one request per connection.  Its client is served inside the poll loop with short
 * socket timeouts, like the control socket's (ctl.c), and STATS_CLIENT_MS in all: a slow
 * or silent client delays supervision by about a second at most.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/syscall.h>
#include <sys/time.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "clock.h"
#include "log.h"
#include "metrics.h"
#include "sluiced.h"
#include "stubstatus.h"

const char *
stats_state_word(const struct pool *p)
{
	static const char *const names[POOL__MAX] = { "running", "failed", "stopping" };

	return p->state == POOL_RUNNING && p->db.state != DBCHECK_OK ? "degraded" :
	    names[p->state];
}

void *
stats_shared_page(const char *pool, const char *what, size_t size, int *fd)
{
	void *m;

	*fd = (int)syscall(SYS_memfd_create, what, 1U /* MFD_CLOEXEC */);
	if (*fd < 0 || ftruncate(*fd, (off_t)size) == -1)
		goto fail;
	m = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, *fd, 0);
	if (m == MAP_FAILED)
		goto fail;
	return m;
fail:
	log_warn("%s: no %s page for a worker: %s", pool, what, strerror(errno));
	if (*fd >= 0)
		(void)close(*fd);
	*fd = -1;
	return NULL;
}

struct metrics_page *
stats_page_new(const char *pool, int threads, int *fd)
{
	return stats_shared_page(pool, "sluice-metrics", metrics_page_size(threads), fd);
}

void
stats_page_free(struct worker *w)
{
	if (w->metrics != NULL)
		(void)munmap(w->metrics, metrics_page_size(w->mthreads));
	w->metrics = NULL;
}

void
stats_retire(struct pool *p, struct worker *w)
{
	if (w->metrics != NULL)
		metrics_add_page(&p->retired, w->metrics, w->mthreads, 1);
	stats_page_free(w);
}

void
stats_pool_sum(const struct pool *p, struct metrics_sum *out)
{
	size_t i;

	*out = p->retired;
	for (i = 0; i < p->nw; i++)
		if (p->w[i].metrics != NULL)
			metrics_add_page(out, p->w[i].metrics, p->w[i].mthreads, 0);
}

/* Serving threads busy: the requests in flight, at most the live workers' threads (an old
 * generation's worker still finishing counts its threads too). */
int64_t
stats_busy(const struct metrics_sum *m)
{
	return m->inflight < m->threads ? m->inflight : m->threads;
}

/* Requests per FastCGI connection accepted, 0 before the first. */
static double
stats_reuse(const struct metrics_sum *m)
{
	return m->c.conns_accepted == 0 ? 0 :
	    (double)metrics_requests(m) / (double)m->c.conns_accepted;
}

void
stats_status_words(FILE *out, const struct pool *p)
{
	struct metrics_sum m;

	if (!p->spec.metrics) {
		fprintf(out, " metrics=off");
		return;
	}
	stats_pool_sum(p, &m);
	fprintf(out, " requests=%llu 5xx=%llu inflight=%lld inflight_peak=%lld p99_ms=%.2f "
	    "conns=%llu reuse=%.2f slow=%llu timed_out=%llu busy=%lld idle=%lld",
	    (unsigned long long)metrics_requests(&m), (unsigned long long)m.c.status[4],
	    (long long)m.inflight, (long long)m.peak, metrics_quantile(&m, 0.99) * 1000,
	    (unsigned long long)m.c.conns_accepted, stats_reuse(&m),
	    (unsigned long long)m.c.slow, (unsigned long long)m.c.timed_out,
	    (long long)stats_busy(&m), (long long)(m.threads - stats_busy(&m)));
	if (p->queue.known)
		fprintf(out, " queue=%u queue_peak=%u", p->queue.now, p->queue.peak);
	else
		fprintf(out, " queue=?");
	if (p->queue.known && p->queue.drops_known)
		fprintf(out, " dropped=%llu", (unsigned long long)p->queue.drops);
	fprintf(out, " commits=%llu commit_writes=%llu busy_retries=%llu reconnects=%llu "
	    "conn_waits=%llu db_open=%lld db_busy=%lld", (unsigned long long)m.db.batches,
	    (unsigned long long)m.db.batch_writes, (unsigned long long)m.db.busy_retries,
	    (unsigned long long)m.db.reconnects, (unsigned long long)m.db.conn_waits,
	    (long long)m.db.conns_open, (long long)m.db.pg_conns_busy);
}

/* The histogram of m as {"le": [...], "cumulative": [...], "sum": S, "count": N}. */
static cJSON *
stats_json_histogram(const struct metrics_sum *m)
{
	cJSON *h = cJSON_CreateObject(), *le = cJSON_AddArrayToObject(h, "le"),
	    *cum = cJSON_AddArrayToObject(h, "cumulative");
	uint64_t n = 0;
	size_t i;

	for (i = 0; i < METRICS_BUCKETS; i++) {
		n += m->c.bucket[i];
		if (i < METRICS_BOUNDS)
			cJSON_AddItemToArray(le,
			    cJSON_CreateNumber((double)metrics_bounds_us[i] / 1e6));
		else
			cJSON_AddItemToArray(le, cJSON_CreateString("+Inf"));
		cJSON_AddItemToArray(cum, cJSON_CreateNumber((double)n));
	}
	cJSON_AddNumberToObject(h, "sum_seconds", (double)m->c.sum_us / 1e6);
	cJSON_AddNumberToObject(h, "count", (double)n);
	return h;
}

/* The counters' members of a pool's JSON object. */
static void
stats_json_counts(cJSON *o, const struct metrics_sum *m)
{
	static const char *const classes[METRICS_CLASSES] = { "1xx", "2xx", "3xx", "4xx",
	    "5xx" };
	cJSON *st = cJSON_AddObjectToObject(o, "status"),
	    *me = cJSON_AddObjectToObject(o, "methods"),
	    *co = cJSON_AddObjectToObject(o, "connections");
	size_t i;

	cJSON_AddNumberToObject(o, "requests", (double)metrics_requests(m));
	for (i = 0; i < METRICS_CLASSES; i++)
		cJSON_AddNumberToObject(st, classes[i], (double)m->c.status[i]);
	for (i = 0; i < METRICS_METHOD__MAX; i++)
		cJSON_AddNumberToObject(me, metrics_method_names[i], (double)m->c.method[i]);
	cJSON_AddNumberToObject(o, "inflight", (double)m->inflight);
	cJSON_AddNumberToObject(o, "inflight_peak", (double)m->peak);
	cJSON_AddNumberToObject(o, "threads_busy", (double)stats_busy(m));
	cJSON_AddNumberToObject(o, "threads_idle", (double)(m->threads - stats_busy(m)));
	cJSON_AddNumberToObject(co, "accepted", (double)m->c.conns_accepted);
	cJSON_AddNumberToObject(co, "closed", (double)m->c.conns_closed);
	cJSON_AddNumberToObject(co, "open",
	    (double)(m->c.conns_accepted - m->c.conns_closed));
	cJSON_AddNumberToObject(o, "requests_per_connection", stats_reuse(m));
	cJSON_AddNumberToObject(o, "slow", (double)m->c.slow);
	cJSON_AddNumberToObject(o, "timed_out", (double)m->c.timed_out);
	cJSON_AddNumberToObject(o, "p50_ms", metrics_quantile(m, 0.5) * 1000);
	cJSON_AddNumberToObject(o, "p99_ms", metrics_quantile(m, 0.99) * 1000);
	cJSON_AddItemToObject(o, "duration_seconds", stats_json_histogram(m));
}

/* The database's member: "db": {commit_batches, commit_writes, batch_size: {le,
 * cumulative}, busy_retries, reconnects, conn_waits, connections_open,
 * pg_connections_busy}. */
static void
stats_json_db(cJSON *o, const struct metrics_db *d)
{
	cJSON *db = cJSON_AddObjectToObject(o, "db"), *h, *le, *cum;
	uint64_t n = 0;
	size_t i;

	cJSON_AddNumberToObject(db, "commit_batches", (double)d->batches);
	cJSON_AddNumberToObject(db, "commit_writes", (double)d->batch_writes);
	h = cJSON_AddObjectToObject(db, "batch_size");
	le = cJSON_AddArrayToObject(h, "le");
	cum = cJSON_AddArrayToObject(h, "cumulative");
	for (i = 0; i < METRICS_BATCH_BUCKETS; i++) {
		n += d->batch_size[i];
		if (i < METRICS_BATCH_BOUNDS)
			cJSON_AddItemToArray(le, cJSON_CreateNumber((double)(1U << i)));
		else
			cJSON_AddItemToArray(le, cJSON_CreateString("+Inf"));
		cJSON_AddItemToArray(cum, cJSON_CreateNumber((double)n));
	}
	cJSON_AddNumberToObject(db, "busy_retries", (double)d->busy_retries);
	cJSON_AddNumberToObject(db, "reconnects", (double)d->reconnects);
	cJSON_AddNumberToObject(db, "conn_waits", (double)d->conn_waits);
	cJSON_AddNumberToObject(db, "connections_open", (double)d->conns_open);
	cJSON_AddNumberToObject(db, "pg_connections_busy", (double)d->pg_conns_busy);
}

/* The listen queue's member, "listen_queue": {now, peak, backlog[, dropped]}, or null
 * when the kernel would not tell; "dropped" only where the kernel counts them (TCP). */
static void
stats_json_queue(cJSON *o, const struct pool_queue *q)
{
	cJSON *lq;

	if (!q->known) {
		cJSON_AddNullToObject(o, "listen_queue");
		return;
	}
	lq = cJSON_AddObjectToObject(o, "listen_queue");
	cJSON_AddNumberToObject(lq, "now", q->now);
	cJSON_AddNumberToObject(lq, "peak", q->peak);
	cJSON_AddNumberToObject(lq, "backlog", q->backlog);
	if (q->drops_known)
		cJSON_AddNumberToObject(lq, "dropped", (double)q->drops);
}

/* One pool as a JSON object. */
static cJSON *
stats_json_pool(const struct pool *p)
{
	cJSON *o = cJSON_CreateObject();
	struct metrics_sum m;
	size_t i, cur = 0, adopted = 0;

	for (i = 0; i < p->nw; i++)
		if (p->w[i].gen == p->gen && p->w[i].term_at == 0) {
			cur++;
			adopted += p->w[i].adopted;
		}
	cJSON_AddStringToObject(o, "name", p->name);
	cJSON_AddStringToObject(o, "state", stats_state_word(p));
	cJSON_AddNumberToObject(o, "gen", p->gen);
	cJSON_AddNumberToObject(o, "workers", (double)cur);
	cJSON_AddNumberToObject(o, "workers_wanted", p->spec.workers);
	/* Of the workers, those a previous sluiced started (adopt.c). */
	cJSON_AddNumberToObject(o, "adopted", (double)adopted);
	cJSON_AddNumberToObject(o, "threads", p->spec.threads);
	cJSON_AddNumberToObject(o, "spawns", (double)p->spawns);
	cJSON_AddNumberToObject(o, "crashes", (double)p->crashes);
	cJSON_AddNumberToObject(o, "hung", (double)p->hung);
	cJSON_AddBoolToObject(o, "metrics", p->spec.metrics);
	if (p->spec.metrics) {
		stats_pool_sum(p, &m);
		stats_json_counts(o, &m);
		stats_json_queue(o, &p->queue);
		stats_json_db(o, &m.db);
	}
	return o;
}

/* nginx's figures of the moment into *ng when set nginx_status is given: NULL when it is
 * not, else ng (ng->up 0 when nginx did not answer). */
static const struct stats_nginx *
stats_nginx_now(const struct sluiced *s, struct stats_nginx *ng)
{
	memset(ng, 0, sizeof(*ng));
	if (s->conf->nginx_status_port == 0)
		return NULL;
	ng->port = s->conf->nginx_status_port;
	ng->up = stubstatus_fetch(s->conf->nginx_status_port, &ng->st) == 0;
	return ng;
}

/* nginx's member when set nginx_status is given: "nginx": {"up": false} when it did not
 * answer, else {"up": true, "active", "accepts", "handled", "requests", "reading",
 * "writing", "waiting"}, stub_status's figures as /metrics gives them. */
static void
stats_json_nginx(cJSON *root, const struct sluiced *s)
{
	struct stats_nginx ng;
	cJSON *o;

	if (stats_nginx_now(s, &ng) == NULL)
		return;
	o = cJSON_AddObjectToObject(root, "nginx");
	cJSON_AddBoolToObject(o, "up", ng.up);
	if (!ng.up)
		return;
	cJSON_AddNumberToObject(o, "active", (double)ng.st.active);
	cJSON_AddNumberToObject(o, "accepts", (double)ng.st.accepts);
	cJSON_AddNumberToObject(o, "handled", (double)ng.st.handled);
	cJSON_AddNumberToObject(o, "requests", (double)ng.st.requests);
	cJSON_AddNumberToObject(o, "reading", (double)ng.st.reading);
	cJSON_AddNumberToObject(o, "writing", (double)ng.st.writing);
	cJSON_AddNumberToObject(o, "waiting", (double)ng.st.waiting);
}

void
stats_json(FILE *out, const struct sluiced *s)
{
	cJSON *root = cJSON_CreateObject(), *pools;
	const struct pool *p;
	char *text;

	cJSON_AddNumberToObject(root, "pid", (double)getpid());
	cJSON_AddStringToObject(root, "state", s->stopping ? "stopping" : "running");
	pools = cJSON_AddArrayToObject(root, "pools");
	for (p = s->pools; p != NULL; p = p->next)
		cJSON_AddItemToArray(pools, stats_json_pool(p));
	stats_json_nginx(root, s);
	if ((text = cJSON_PrintUnformatted(root)) != NULL) {
		fprintf(out, "%s\n", text);
		cJSON_free(text);
	}
	cJSON_Delete(root);
}

/* The pools and their sums, in list order, for the Prometheus families. */
struct stats_all {
	const struct pool **p;
	struct metrics_sum *m;
	size_t n;
};

static int
stats_collect(const struct sluiced *s, struct stats_all *a)
{
	const struct pool *p;
	size_t n = 0;

	for (p = s->pools; p != NULL; p = p->next)
		n++;
	a->n = 0;
	a->p = calloc(n + 1, sizeof(const struct pool *));
	a->m = calloc(n + 1, sizeof(*a->m));
	if (a->p == NULL || a->m == NULL)
		return -1;
	for (p = s->pools; p != NULL; p = p->next) {
		a->p[a->n] = p;
		if (p->spec.metrics)
			stats_pool_sum(p, &a->m[a->n]);
		a->n++;
	}
	return 0;
}

/* One family of one value per pool: TYPE is "counter" or "gauge"; a pool whose value is
 * below 0 (unknown) has no sample. */
static void
stats_prom_family(FILE *out, const struct stats_all *a, const char *name, const char *type,
    const char *help, int need_metrics, double (*get)(const struct pool *,
    const struct metrics_sum *))
{
	size_t i;
	double v;

	fprintf(out, "# HELP %s %s\n# TYPE %s %s\n", name, help, name, type);
	for (i = 0; i < a->n; i++)
		if ((!need_metrics || a->p[i]->spec.metrics) &&
		    (v = get(a->p[i], &a->m[i])) >= 0)
			fprintf(out, "%s{pool=\"%s\"} %.17g\n", name, a->p[i]->name, v);
}

#define STATS_GET(fname, expr) \
static double \
fname(const struct pool *p, const struct metrics_sum *m) \
{ \
	(void)p; \
	(void)m; \
	return (double)(expr); \
}
STATS_GET(stats_get_inflight, m->inflight)
STATS_GET(stats_get_peak, m->peak)
STATS_GET(stats_get_accepted, m->c.conns_accepted)
STATS_GET(stats_get_closed, m->c.conns_closed)
STATS_GET(stats_get_open, m->c.conns_accepted - m->c.conns_closed)
STATS_GET(stats_get_slow, m->c.slow)
STATS_GET(stats_get_timed_out, m->c.timed_out)
STATS_GET(stats_get_spawns, p->spawns)
STATS_GET(stats_get_crashes, p->crashes)
STATS_GET(stats_get_hung, p->hung)
STATS_GET(stats_get_workers, p->nw)
STATS_GET(stats_get_busy_retries, m->db.busy_retries)
STATS_GET(stats_get_reconnects, m->db.reconnects)
STATS_GET(stats_get_conn_waits, m->db.conn_waits)
STATS_GET(stats_get_db_open, m->db.conns_open)
STATS_GET(stats_get_pg_busy, m->db.pg_conns_busy)
STATS_GET(stats_get_busy, stats_busy(m))
STATS_GET(stats_get_idle, m->threads - stats_busy(m))
STATS_GET(stats_get_queue, p->queue.known ? (double)p->queue.now : -1)
STATS_GET(stats_get_queue_peak, p->queue.known ? (double)p->queue.peak : -1)
STATS_GET(stats_get_backlog, p->queue.known ? (double)p->queue.backlog : -1)
STATS_GET(stats_get_dropped, p->queue.known && p->queue.drops_known ?
    (double)p->queue.drops : -1)

/* The families with labels beyond the pool: classes, methods, the histogram. */
static void
stats_prom_labelled(FILE *out, const struct stats_all *a)
{
	static const char *const classes[METRICS_CLASSES] = { "1xx", "2xx", "3xx", "4xx",
	    "5xx" };
	const struct metrics_sum *m;
	uint64_t n;
	size_t i, j;

	fprintf(out, "# HELP sluice_requests_total Requests answered, by status class.\n"
	    "# TYPE sluice_requests_total counter\n");
	for (i = 0; i < a->n; i++)
		for (j = 0; a->p[i]->spec.metrics && j < METRICS_CLASSES; j++)
			fprintf(out, "sluice_requests_total{pool=\"%s\",class=\"%s\"} %llu\n",
			    a->p[i]->name, classes[j], (unsigned long long)a->m[i].c.status[j]);
	fprintf(out, "# HELP sluice_requests_method_total Requests answered, by method.\n"
	    "# TYPE sluice_requests_method_total counter\n");
	for (i = 0; i < a->n; i++)
		for (j = 0; a->p[i]->spec.metrics && j < METRICS_METHOD__MAX; j++)
			fprintf(out, "sluice_requests_method_total{pool=\"%s\",method=\"%s\"} "
			    "%llu\n", a->p[i]->name, metrics_method_names[j],
			    (unsigned long long)a->m[i].c.method[j]);
	fprintf(out, "# HELP sluice_request_duration_seconds Time from a request's "
	    "parameters to its response written, in the worker.\n"
	    "# TYPE sluice_request_duration_seconds histogram\n");
	for (i = 0; i < a->n; i++) {
		if (!a->p[i]->spec.metrics)
			continue;
		m = &a->m[i];
		for (j = 0, n = 0; j < METRICS_BUCKETS; j++) {
			n += m->c.bucket[j];
			if (j < METRICS_BOUNDS)
				fprintf(out, "sluice_request_duration_seconds_bucket{pool=\"%s\","
				    "le=\"%g\"} %llu\n", a->p[i]->name,
				    (double)metrics_bounds_us[j] / 1e6, (unsigned long long)n);
			else
				fprintf(out, "sluice_request_duration_seconds_bucket{pool=\"%s\","
				    "le=\"+Inf\"} %llu\n", a->p[i]->name, (unsigned long long)n);
		}
		fprintf(out, "sluice_request_duration_seconds_sum{pool=\"%s\"} %.6f\n"
		    "sluice_request_duration_seconds_count{pool=\"%s\"} %llu\n", a->p[i]->name,
		    (double)m->c.sum_us / 1e6, a->p[i]->name, (unsigned long long)n);
	}
}

/* The serving threads and the listen queue's families. */
static void
stats_prom_queue(FILE *out, const struct stats_all *a)
{
	stats_prom_family(out, a, "sluice_threads_busy", "gauge",
	    "Serving threads answering a request now.", 1, stats_get_busy);
	stats_prom_family(out, a, "sluice_threads_idle", "gauge",
	    "Serving threads of the live workers not answering a request now.", 1,
	    stats_get_idle);
	stats_prom_family(out, a, "sluice_listen_queue", "gauge",
	    "Connections waiting in the pool's listen queue for a worker.", 1,
	    stats_get_queue);
	stats_prom_family(out, a, "sluice_listen_queue_peak", "gauge",
	    "The most connections seen waiting in the listen queue, at sluiced's samples.", 1,
	    stats_get_queue_peak);
	stats_prom_family(out, a, "sluice_listen_backlog", "gauge",
	    "The listen queue's limit as the kernel applies it.", 1, stats_get_backlog);
	stats_prom_family(out, a, "sluice_listen_dropped_total", "counter",
	    "Connections the kernel dropped at a TCP pool's listener (not counted for unix "
	    "sockets).", 1, stats_get_dropped);
}

/* The database's families: the commit batches' histogram and the events. */
static void
stats_prom_db(FILE *out, const struct stats_all *a)
{
	const struct metrics_db *d;
	uint64_t n;
	size_t i, j;

	fprintf(out, "# HELP sluice_db_commit_batch_writes Writes per group commit (SQLite's "
	    "writers' batches, the writes a PostgreSQL connection sends together).\n"
	    "# TYPE sluice_db_commit_batch_writes histogram\n");
	for (i = 0; i < a->n; i++) {
		if (!a->p[i]->spec.metrics)
			continue;
		d = &a->m[i].db;
		for (j = 0, n = 0; j < METRICS_BATCH_BUCKETS; j++) {
			n += d->batch_size[j];
			if (j < METRICS_BATCH_BOUNDS)
				fprintf(out, "sluice_db_commit_batch_writes_bucket{pool=\"%s\","
				    "le=\"%u\"} %llu\n", a->p[i]->name, 1U << j,
				    (unsigned long long)n);
			else
				fprintf(out, "sluice_db_commit_batch_writes_bucket{pool=\"%s\","
				    "le=\"+Inf\"} %llu\n", a->p[i]->name, (unsigned long long)n);
		}
		fprintf(out, "sluice_db_commit_batch_writes_sum{pool=\"%s\"} %llu\n"
		    "sluice_db_commit_batch_writes_count{pool=\"%s\"} %llu\n", a->p[i]->name,
		    (unsigned long long)d->batch_writes, a->p[i]->name,
		    (unsigned long long)d->batches);
	}
	stats_prom_family(out, a, "sluice_db_sqlite_busy_retries_total", "counter",
	    "Times SQLite's busy handler slept and tried a lock again.", 1,
	    stats_get_busy_retries);
	stats_prom_family(out, a, "sluice_db_pg_reconnects_total", "counter",
	    "Lost PostgreSQL connections opened anew.", 1, stats_get_reconnects);
	stats_prom_family(out, a, "sluice_db_pg_connection_waits_total", "counter",
	    "Statements and transactions that waited for a PostgreSQL connection.", 1,
	    stats_get_conn_waits);
	stats_prom_family(out, a, "sluice_db_connections_open", "gauge",
	    "Database connections the live workers hold open (SQLite: one per thread that "
	    "used it; PostgreSQL: the shared pools' sessions).", 1, stats_get_db_open);
	stats_prom_family(out, a, "sluice_db_pg_connections_busy", "gauge",
	    "PostgreSQL connections running a batch of statements or held by a transaction "
	    "now.", 1, stats_get_pg_busy);
}

/* nginx's stub_status families (set nginx_status): sluice_nginx_up, and the figures when
 * nginx answered. */
static void
stats_prom_nginx(FILE *out, const struct stats_nginx *ng)
{
	static const struct {
		const char *name, *type, *help;
		size_t off;
	} fam[] = {
		{ "sluice_nginx_connections_active", "gauge",
		    "nginx's client connections open, waiting ones included.",
		    offsetof(struct stubstatus, active) },
		{ "sluice_nginx_connections_accepted_total", "counter",
		    "Client connections nginx accepted.", offsetof(struct stubstatus, accepts) },
		{ "sluice_nginx_connections_handled_total", "counter",
		    "Client connections nginx handled (fewer than accepted: a limit was hit).",
		    offsetof(struct stubstatus, handled) },
		{ "sluice_nginx_requests_total", "counter", "Client requests nginx read.",
		    offsetof(struct stubstatus, requests) },
		{ "sluice_nginx_connections_reading", "gauge",
		    "nginx's connections whose request header it is reading.",
		    offsetof(struct stubstatus, reading) },
		{ "sluice_nginx_connections_writing", "gauge",
		    "nginx's connections it is answering.", offsetof(struct stubstatus, writing) },
		{ "sluice_nginx_connections_waiting", "gauge",
		    "nginx's idle kept-alive client connections.",
		    offsetof(struct stubstatus, waiting) },
	};
	size_t i;
	uint64_t v;

	fprintf(out, "# HELP sluice_nginx_up 1 when nginx's stub_status (set nginx_status) "
	    "answered this scrape, else 0.\n# TYPE sluice_nginx_up gauge\nsluice_nginx_up %d\n",
	    ng->up);
	for (i = 0; ng->up && i < sizeof(fam) / sizeof(fam[0]); i++) {
		memcpy(&v, (const char *)&ng->st + fam[i].off, sizeof(v));
		fprintf(out, "# HELP %s %s\n# TYPE %s %s\n%s %llu\n", fam[i].name, fam[i].help,
		    fam[i].name, fam[i].type, fam[i].name, (unsigned long long)v);
	}
}

void
stats_prometheus(FILE *out, const struct sluiced *s, const struct stats_nginx *nginx)
{
	struct stats_all a;

	if (stats_collect(s, &a) == 0) {
		stats_prom_labelled(out, &a);
		stats_prom_family(out, &a, "sluice_requests_in_flight", "gauge",
		    "Requests being served now.", 1, stats_get_inflight);
		stats_prom_family(out, &a, "sluice_requests_in_flight_peak", "gauge",
		    "The most requests one worker served at once.", 1, stats_get_peak);
		stats_prom_family(out, &a, "sluice_requests_slow_total", "counter",
		    "Requests that ran past half their time budget.", 1, stats_get_slow);
		stats_prom_family(out, &a, "sluice_requests_timed_out_total", "counter",
		    "Requests that ran past their time budget.", 1, stats_get_timed_out);
		stats_prom_family(out, &a, "sluice_fastcgi_connections_accepted_total",
		    "counter", "FastCGI connections the workers accepted.", 1,
		    stats_get_accepted);
		stats_prom_family(out, &a, "sluice_fastcgi_connections_closed_total",
		    "counter", "FastCGI connections closed.", 1, stats_get_closed);
		stats_prom_family(out, &a, "sluice_fastcgi_connections_open", "gauge",
		    "FastCGI connections open now.", 1, stats_get_open);
		stats_prom_queue(out, &a);
		stats_prom_db(out, &a);
		stats_prom_family(out, &a, "sluice_workers", "gauge",
		    "Worker processes alive.", 0, stats_get_workers);
		stats_prom_family(out, &a, "sluice_worker_spawns_total", "counter",
		    "Workers started.", 0, stats_get_spawns);
		stats_prom_family(out, &a, "sluice_worker_crashes_total", "counter",
		    "Workers that died unasked and abnormally.", 0, stats_get_crashes);
		stats_prom_family(out, &a, "sluice_worker_hung_total", "counter",
		    "Workers the watchdog killed.", 0, stats_get_hung);
	}
	if (nginx != NULL)
		stats_prom_nginx(out, nginx);
	free(a.p);
	free(a.m);
}

int
stats_listen(struct sluiced *s)
{
	struct sockaddr_in sin;
	int fd, one = 1;

	s->metrics_fd = -1;
	if (s->conf->metrics_port == 0)
		return 0;
	memset(&sin, 0, sizeof(sin));
	sin.sin_family = AF_INET;
	sin.sin_port = htons((unsigned short)s->conf->metrics_port);
	sin.sin_addr.s_addr = s->conf->metrics_addr;
	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0)) == -1) {
		log_err("metrics_listen: socket: %s", strerror(errno));
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
	if (bind(fd, (struct sockaddr *)&sin, sizeof(sin)) == -1 || listen(fd, 16) == -1) {
		log_err("metrics_listen %s: %s", conf_get(s->conf, "metrics_listen", "?"),
		    strerror(errno));
		(void)close(fd);
		return -1;
	}
	s->metrics_fd = fd;
	log_info("metrics: Prometheus text on http://%s/metrics",
	    conf_get(s->conf, "metrics_listen", "?"));
	return 0;
}

/* A client of the metrics address has this long in all to send its request and read the
 * answer: a slow one must not hold the poll loop (each read or write also times out). */
#define STATS_CLIENT_MS	1000

/* Reads a request's head into buf[len] (NUL-terminated) until the deadline (clock_now_ms()
 * time): 0, or -1 (timeout, too long, closed). */
static int
stats_read_head(int fd, char *buf, size_t len, long long deadline)
{
	size_t got = 0;
	ssize_t n;

	while (got < len - 1 && clock_now_ms() < deadline) {
		n = read(fd, buf + got, len - 1 - got);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		got += (size_t)n;
		buf[got] = '\0';
		if (strstr(buf, "\r\n\r\n") != NULL || strstr(buf, "\n\n") != NULL)
			return 0;
	}
	return -1;
}

static void
stats_send(int fd, const char *p, size_t len, long long deadline)
{
	ssize_t n;

	while (len > 0 && clock_now_ms() < deadline) {
		n = write(fd, p, len);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return;
		p += n;
		len -= (size_t)n;
	}
}

int
stats_route(const char *req, enum stats_doc *doc)
{
	const char *sp = strchr(req, ' '), *path = sp != NULL ? sp + 1 : "";
	size_t plen = strcspn(path, " ?\r\n");

	if (strncmp(req, "GET ", 4) != 0 && strncmp(req, "HEAD ", 5) != 0)
		return 405;
	if (plen == 8 && strncmp(path, "/metrics", 8) == 0) {
		*doc = STATS_DOC_METRICS;
		return 200;
	}
	if ((plen == 1 && path[0] == '/') || (plen == 7 && strncmp(path, "/status", 7) == 0)) {
		*doc = STATS_DOC_PAGE;
		return 200;
	}
	return 404;
}

/* The answer to the request head req: status line, headers, body (none for HEAD). */
static void
stats_answer(const struct sluiced *s, int fd, const char *req, long long deadline)
{
	char head[512], *body = NULL;
	size_t blen = 0;
	const char *status = "200 OK",
	    *type = "text/plain; version=0.0.4; charset=utf-8", *extra = "";
	enum stats_doc doc = STATS_DOC_METRICS;
	int route = stats_route(req, &doc), headm = strncmp(req, "HEAD ", 5) == 0, m;
	struct stats_nginx ng;
	FILE *f;

	if ((f = open_memstream(&body, &blen)) == NULL)
		return;
	if (route == 405) {
		status = "405 Method Not Allowed";
		extra = "Allow: GET, HEAD\r\n";
		type = "text/plain; charset=utf-8";
		fprintf(f, "method not allowed\n");
	} else if (route == 404) {
		status = "404 Not Found";
		type = "text/plain; charset=utf-8";
		fprintf(f, "not found: the metrics are at /metrics, the status page at /\n");
	} else if (doc == STATS_DOC_PAGE) {
		type = "text/html; charset=utf-8";
		/* No script, no frame, nothing from elsewhere: the page is its own styles. */
		extra = "Content-Security-Policy: default-src 'none'; style-src 'unsafe-inline'; "
		    "img-src data:; frame-ancestors 'none'\r\nX-Content-Type-Options: nosniff\r\n"
		    "Cache-Control: no-store\r\n";
		stats_html_page(f, s, stats_nginx_now(s, &ng));
	} else {
		stats_prometheus(f, s, stats_nginx_now(s, &ng));
	}
	if (fclose(f) != 0) {
		free(body);
		return;
	}
	m = snprintf(head, sizeof(head), "HTTP/1.1 %s\r\nContent-Type: %s\r\n"
	    "Content-Length: %zu\r\n%sConnection: close\r\n\r\n", status, type, blen, extra);
	if (m > 0 && (size_t)m < sizeof(head)) {
		stats_send(fd, head, (size_t)m, deadline);
		if (!headm)
			stats_send(fd, body, blen, deadline);
	}
	free(body);
}

void
stats_accept(struct sluiced *s)
{
	struct timeval rcv = { 0, 200 * 1000 }, snd = { 0, 500 * 1000 };
	long long deadline = clock_now_ms() + STATS_CLIENT_MS;
	char req[2048];
	int fd;

	if ((fd = accept(s->metrics_fd, NULL, NULL)) == -1) {
		if (errno != EINTR && errno != EAGAIN && errno != EWOULDBLOCK)
			log_warn("metrics_listen: accept: %s", strerror(errno));
		return;
	}
	(void)fcntl(fd, F_SETFD, FD_CLOEXEC);
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &rcv, sizeof(rcv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &snd, sizeof(snd));
	if (stats_read_head(fd, req, sizeof(req), deadline) == 0) {
		listenq_sample_all(s);
		stats_answer(s, fd, req, deadline);
	}
	(void)close(fd);
}
