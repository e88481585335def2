/*
 * top.c: the frames of `sluiced ctl top [COUNT]`, a live view of every pool.  Each second
 * ctl.c asks the control socket for "status json" (stats.c), and a frame gives, per pool,
 * the requests a second, p50 and p99 of that second, the 5xx a second, the listen queue,
 * the serving threads busy and the FastCGI requests per connection (the keepalive reuse),
 * each from the difference between two samples; the first frame, with no sample before
 * it, shows the totals and "-" for the rates.  With set nginx_status a last line gives
 * nginx's stub_status figures: its client connections by state, its requests and
 * connections a second.
 *
 * The percentiles are the upper bounds of the latency histogram's buckets (0.25 ms to
 * 10 s, common/metrics.h) in which that share of the second's requests ended: "p99 <= 5"
 * means the 99th percentile is at most 5 ms.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "sluiced.h"

static double
top_num(const cJSON *o, const char *k1, const char *k2)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k1);

	if (k2 != NULL)
		v = cJSON_GetObjectItemCaseSensitive(v, k2);
	return cJSON_IsNumber(v) ? v->valuedouble : 0;
}

/* The latency histogram of pool object o into p. */
static void
top_histogram(const cJSON *o, struct top_pool *p)
{
	const cJSON *h = cJSON_GetObjectItemCaseSensitive(o, "duration_seconds");
	const cJSON *le = cJSON_GetObjectItemCaseSensitive(h, "le");
	const cJSON *cum = cJSON_GetObjectItemCaseSensitive(h, "cumulative");
	int i = 0;

	const cJSON *b;

	cJSON_ArrayForEach(b, le) {
		const cJSON *x = cJSON_GetArrayItem(cum, i);

		if (i == TOP_BUCKETS)
			break;
		p->le[i] = cJSON_IsNumber(b) ? b->valuedouble : INFINITY;
		p->cum[i] = cJSON_IsNumber(x) ? x->valuedouble : 0;
		i++;
	}
	p->nb = i;
}

/* nginx's member of the status JSON (NULL: set nginx_status not given) into ng. */
static void
top_nginx(const cJSON *o, struct top_nginx *ng)
{
	memset(ng, 0, sizeof(*ng));
	if (!cJSON_IsObject(o))
		return;
	ng->state = cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(o, "up")) ? 2 : 1;
	ng->active = top_num(o, "active", NULL);
	ng->reading = top_num(o, "reading", NULL);
	ng->writing = top_num(o, "writing", NULL);
	ng->waiting = top_num(o, "waiting", NULL);
	ng->accepts = top_num(o, "accepts", NULL);
	ng->requests = top_num(o, "requests", NULL);
}

int
top_parse(const char *text, struct top_sample *s)
{
	cJSON *root = cJSON_Parse(text), *pool;
	const cJSON *pools = cJSON_GetObjectItemCaseSensitive(root, "pools");

	s->n = 0;
	if (!cJSON_IsArray(pools)) {
		cJSON_Delete(root);
		return -1;
	}
	top_nginx(cJSON_GetObjectItemCaseSensitive(root, "nginx"), &s->nginx);
	cJSON_ArrayForEach(pool, pools) {
		const cJSON *name = cJSON_GetObjectItemCaseSensitive(pool, "name");
		struct top_pool *p;

		if (s->n == TOP_POOLS)
			break;
		p = &s->p[s->n++];
		memset(p, 0, sizeof(*p));
		(void)snprintf(p->name, sizeof(p->name), "%s",
		    cJSON_IsString(name) ? name->valuestring : "?");
		p->requests = top_num(pool, "requests", NULL);
		p->accepted = top_num(pool, "connections", "accepted");
		name = cJSON_GetObjectItemCaseSensitive(pool, "state");
		(void)snprintf(p->state, sizeof(p->state), "%s",
		    cJSON_IsString(name) ? name->valuestring : "?");
		p->errors5 = top_num(pool, "status", "5xx");
		p->busy = top_num(pool, "threads_busy", NULL);
		p->threads = p->busy + top_num(pool, "threads_idle", NULL);
		p->queue = cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(pool, "listen_queue")) ?
		    top_num(pool, "listen_queue", "now") : -1;
		top_histogram(pool, p);
	}
	cJSON_Delete(root);
	return 0;
}

/* The q-quantile's bucket bound (ms) of the requests that ended between a and b, or -1
 * when none did. */
static double
top_quantile(const struct top_pool *a, const struct top_pool *b, double q)
{
	double total, want;
	int i;

	if (b->nb == 0)
		return -1;
	total = b->cum[b->nb - 1] - (a != NULL ? a->cum[b->nb - 1] : 0);
	if (total <= 0)
		return -1;
	want = ceil(q * total);
	for (i = 0; i < b->nb; i++)
		if (b->cum[i] - (a != NULL && i < a->nb ? a->cum[i] : 0) >= want)
			return b->le[i] * 1000;
	return INFINITY;
}

/* pool b's sample before, in prev (NULL: none, or a pool new since). */
static const struct top_pool *
top_before(const struct top_sample *prev, const struct top_pool *b)
{
	int i;

	for (i = 0; prev != NULL && i < prev->n; i++)
		if (strcmp(prev->p[i].name, b->name) == 0 && prev->p[i].requests <= b->requests)
			return &prev->p[i];
	return NULL;
}

/* A number of a frame's column into out with decimals digits after the point: "-" for a
 * negative one (not known), ">10s" for a percentile past the histogram. */
static const char *
top_cell(char *out, size_t len, int decimals, double v)
{
	if (v < 0 || isnan(v))
		(void)snprintf(out, len, "-");
	else if (isinf(v))
		(void)snprintf(out, len, ">10s");
	else
		(void)snprintf(out, len, "%.*f", decimals, v);
	return out;
}

/* nginx's line of a frame, when set nginx_status is given: its client connections and
 * requests a second (from the two samples' counts; "-" for the first frame). */
static void
top_frame_nginx(FILE *out, const struct top_sample *prev, const struct top_sample *cur,
    double secs)
{
	const struct top_nginx *a = prev != NULL && prev->nginx.state == 2 ? &prev->nginx :
	    NULL, *b = &cur->nginx;
	char c[2][32];

	if (b->state == 0)
		return;
	if (b->state == 1) {
		fprintf(out, "nginx: stub_status not answering\n");
		return;
	}
	if (a != NULL && (b->requests < a->requests || b->accepts < a->accepts))
		a = NULL;	/* nginx restarted: its counts began again */
	fprintf(out, "nginx: %.0f active (%.0f reading, %.0f writing, %.0f waiting), "
	    "%s req/s, %s conn/s, %.0f requests\n", b->active, b->reading, b->writing,
	    b->waiting, top_cell(c[0], sizeof(c[0]), 0, a != NULL && secs > 0 ?
	    (b->requests - a->requests) / secs : -1), top_cell(c[1], sizeof(c[1]), 0,
	    a != NULL && secs > 0 ? (b->accepts - a->accepts) / secs : -1), b->requests);
}

void
top_frame(FILE *out, const struct top_sample *prev, const struct top_sample *cur)
{
	double secs = prev != NULL ? (double)(cur->at - prev->at) / 1000 : 0;
	char c[6][32];
	int i;

	fprintf(out, "%-16s %-9s %10s %9s %9s %9s %7s %6s %8s %10s\n", "POOL", "STATE",
	    "REQUESTS", "REQ/S", "P50<=MS", "P99<=MS", "5XX/S", "QUEUE", "BUSY", "REQ/CONN");
	for (i = 0; i < cur->n; i++) {
		const struct top_pool *b = &cur->p[i], *a = top_before(prev, b);

		fprintf(out, "%-16s %-9s %10.0f %9s %9s %9s %7s %6s %3.0f/%-4.0f %10s\n",
		    b->name, b->state, b->requests,
		    top_cell(c[0], sizeof(c[0]), 0,
		    a != NULL && secs > 0 ? (b->requests - a->requests) / secs : -1),
		    top_cell(c[1], sizeof(c[1]), 2, a != NULL ? top_quantile(a, b, 0.5) : -1),
		    top_cell(c[2], sizeof(c[2]), 2, a != NULL ? top_quantile(a, b, 0.99) : -1),
		    top_cell(c[3], sizeof(c[3]), 1,
		    a != NULL && secs > 0 ? (b->errors5 - a->errors5) / secs : -1),
		    top_cell(c[4], sizeof(c[4]), 0, b->queue),
		    b->busy, b->threads,
		    top_cell(c[5], sizeof(c[5]), 1, a != NULL && b->accepted > a->accepted ?
		    (b->requests - a->requests) / (b->accepted - a->accepted) : -1));
	}
	top_frame_nginx(out, prev, cur, secs);
	(void)fflush(out);
}
