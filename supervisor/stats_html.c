/*
 * stats_html.c: the status page of the metrics address, GET / or /status on
 * `set metrics_listen` (stats.c routes it): one HTML document, rendered here from the
 * same sums as /metrics, with no script at all (the answer's Content-Security-Policy
 * allows none, nor anything from elsewhere: its styles are inline, its icon an empty
 * data: URL so that a browser asks for no /favicon.ico) and a refresh every 10 s by a
 * meta tag.
 *
 * At the top, sluiced's pid and state and, with `set nginx_status`, nginx's stub_status
 * figures (or that nginx did not answer).  Then a section per pool, in the endpoint list's
 * order: its state, route, binary and line in the list; a table of its counters (requests
 * a second, p50 and p99 over the last sample's interval and since the start, 5xx, requests
 * in flight, threads busy and idle, the listen queue, requests per FastCGI connection,
 * workers, spawns, crashes, hung kills, slow and timed-out requests, the database's
 * counts); and three inline SVG charts of its ring (stats_ring.c: the last 5 minutes,
 * a sample every 2 s): requests and 5xx a second, p50 and p99, busy threads and the
 * listen queue.  Each series is one <path> of relative steps, about 5 bytes a sample, so
 * a pool's section stays under 7 kB and the shipped list's ten pools under 70 kB.
 *
 * Every text that comes from outside this file (the list's path, a binary's, a database
 * file's, a route; pool names are [a-z0-9_] already) goes through stats_html_escape().
 */
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "metrics.h"
#include "sluiced.h"
#include "stubstatus.h"

/* A chart's size in SVG units: two units a sample across. */
#define STATS_CHART_W	(2 * STATS_RING_LEN)
#define STATS_CHART_H	60
#define STATS_CHART_TOP	12	/* room for the chart's maximum, written above the lines */
#define STATS_CHART_LOW	3	/* and below them, so that a line at 0 is not cut in half */

void
stats_html_escape(FILE *out, const char *text)
{
	const char *p;

	for (p = text; *p != '\0'; p++) {
		switch (*p) {
		case '&':
			fputs("&amp;", out);
			break;
		case '<':
			fputs("&lt;", out);
			break;
		case '>':
			fputs("&gt;", out);
			break;
		case '"':
			fputs("&quot;", out);
			break;
		case '\'':
			fputs("&#39;", out);
			break;
		default:
			fputc(*p, out);
		}
	}
}

/* The endpoint of pool p in the list s holds, or NULL (a pool being removed). */
static const struct conf_endpoint *
stats_html_ep(const struct sluiced *s, const struct pool *p)
{
	size_t i;

	for (i = 0; i < s->conf->neps; i++)
		if (strcmp(s->conf->eps[i].name, p->name) == 0)
			return &s->conf->eps[i];
	return NULL;
}

static void
stats_html_head(FILE *out, const struct sluiced *s)
{
	char when[32];
	time_t t = time(NULL);
	struct tm tm;

	if (gmtime_r(&t, &tm) == NULL || strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S",
	    &tm) == 0)
		(void)snprintf(when, sizeof(when), "?");
	fprintf(out, "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
	    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
	    "<meta http-equiv=\"refresh\" content=\"10\">\n<title>sluiced status</title>\n"
	    "<link rel=\"icon\" href=\"data:,\">\n");
	fprintf(out, "<style>\nbody{font:14px/1.4 system-ui,sans-serif;margin:1em auto;"
	    "max-width:1100px;padding:0 1em;color:#222;background:#fafafa}\n"
	    "h1{font-size:1.4em}h2{font-size:1.15em;margin:0 0 .3em}\n"
	    "section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:.8em 1em;"
	    "margin:1em 0}\n.where{color:#666;font-size:.9em;margin:0 0 .5em;"
	    "overflow-wrap:anywhere}\n"
	    "table{border-collapse:collapse;margin-bottom:.6em}td,th{padding:1px 10px 1px 0;"
	    "text-align:left;font-weight:normal;vertical-align:top}th{color:#666}\n"
	    ".state{font-size:.8em;padding:1px 6px;border-radius:4px;background:#e6f4e6}\n"
	    ".state.failed,.state.degraded{background:#fbe3e3}.state.stopping{background:#eee}\n"
	    ".charts{display:flex;flex-wrap:wrap;gap:1em}figure{margin:0}"
	    "figcaption{font-size:.85em;color:#444}\n"
	    "svg.chart{background:#f4f6f8;border:1px solid #e0e0e0}"
	    "svg.chart path{fill:none;stroke-width:1.5}\n"
	    "svg.chart text{font-size:10px;fill:#666}\n"
	    ".s-rps{stroke:#2a6fdb}.s-err{stroke:#d33}.s-p50{stroke:#2a9d5c}"
	    ".s-p99{stroke:#e07b00}.s-busy{stroke:#7048c8}.s-queue{stroke:#c8487a}\n"
	    ".k-rps{color:#2a6fdb}.k-err{color:#d33}.k-p50{color:#2a9d5c}.k-p99{color:#e07b00}"
	    ".k-busy{color:#7048c8}.k-queue{color:#c8487a}\n</style>\n</head>\n<body>\n");
	fprintf(out, "<h1>sluiced %ld</h1>\n<p>%s, %s UTC. Counters since each pool's start; "
	    "charts of the last %d minutes, a sample every %d s; this page refreshes every "
	    "10 s. Prometheus text at <a href=\"/metrics\">/metrics</a>.</p>\n",
	    (long)getpid(), s->stopping ? "stopping" : "running", when,
	    STATS_RING_LEN * STATS_RING_EVERY_MS / 60000, STATS_RING_EVERY_MS / 1000);
}

static void
stats_html_nginx(FILE *out, const struct stats_nginx *ng)
{
	fprintf(out, "<section id=\"nginx\">\n<h2>nginx</h2>\n");
	if (!ng->up) {
		fprintf(out, "<p class=\"where\">stub_status did not answer on 127.0.0.1:%d "
		    "(set nginx_status): nginx is not running, or not with this list's "
		    "configuration.</p>\n</section>\n", ng->port);
		return;
	}
	fprintf(out, "<table>\n<tr><th>connections open</th><td>%llu</td>"
	    "<th>reading</th><td>%llu</td><th>writing</th><td>%llu</td>"
	    "<th>waiting</th><td>%llu</td></tr>\n"
	    "<tr><th>accepted</th><td>%llu</td><th>handled</th><td>%llu</td>"
	    "<th>requests</th><td>%llu</td></tr>\n</table>\n</section>\n",
	    (unsigned long long)ng->st.active, (unsigned long long)ng->st.reading,
	    (unsigned long long)ng->st.writing, (unsigned long long)ng->st.waiting,
	    (unsigned long long)ng->st.accepts, (unsigned long long)ng->st.handled,
	    (unsigned long long)ng->st.requests);
}

/* A figure, or "-" when it is not known (below 0). */
static void
stats_html_num(FILE *out, double v, int decimals)
{
	if (v < 0)
		fputs("-", out);
	else
		fprintf(out, "%.*f", decimals, v);
}

/* The newest sample of p's ring, or NULL. */
static const struct stats_point *
stats_html_newest(const struct pool *p)
{
	const struct stats_ring *r = p->ring;

	if (r == NULL || r->n == 0)
		return NULL;
	return &r->pt[(r->head + STATS_RING_LEN - 1) % STATS_RING_LEN];
}

/* The table of p's counters m. */
static void
stats_html_counters(FILE *out, const struct pool *p, const struct metrics_sum *m)
{
	const struct stats_point *pt = stats_html_newest(p);
	uint64_t req = metrics_requests(m);

	fprintf(out, "<table class=\"counters\">\n<tr><th>requests/s</th><td class=\"rps\">");
	stats_html_num(out, pt != NULL ? pt->rps : -1, 1);
	fprintf(out, "</td><th>p50 / p99 ms</th><td>");
	stats_html_num(out, pt != NULL ? pt->p50_ms : -1, 2);
	fputs(" / ", out);
	stats_html_num(out, pt != NULL ? pt->p99_ms : -1, 2);
	fprintf(out, "</td><th>since start</th><td>%.2f / %.2f</td>"
	    "<th>5xx/s</th><td>", metrics_quantile(m, 0.5) * 1000,
	    metrics_quantile(m, 0.99) * 1000);
	stats_html_num(out, pt != NULL ? pt->err5 : -1, 1);
	fprintf(out, "</td></tr>\n<tr><th>requests</th><td class=\"requests\">%llu</td>"
	    "<th>5xx</th><td class=\"err5\">%llu</td><th>in flight / peak</th><td>%lld / %lld"
	    "</td><th>slow / timed out</th><td>%llu / %llu</td></tr>\n",
	    (unsigned long long)req, (unsigned long long)m->c.status[4],
	    (long long)m->inflight, (long long)m->peak, (unsigned long long)m->c.slow,
	    (unsigned long long)m->c.timed_out);
	fprintf(out, "<tr><th>threads busy / idle</th><td class=\"threads\">%lld / %lld</td>"
	    "<th>listen queue</th><td class=\"queue\">", (long long)stats_busy(m),
	    (long long)(m->threads - stats_busy(m)));
	if (p->queue.known)
		fprintf(out, "%u (peak %u, backlog %u)", p->queue.now, p->queue.peak,
		    p->queue.backlog);
	else
		fputs("?", out);
	if (p->queue.known && p->queue.drops_known)
		fprintf(out, ", %llu dropped", (unsigned long long)p->queue.drops);
	fprintf(out, "</td><th>requests per FastCGI connection</th><td class=\"reuse\">");
	stats_html_num(out, m->c.conns_accepted > 0 ?
	    (double)req / (double)m->c.conns_accepted : -1, 2);
	fprintf(out, "</td><th>connections open</th><td>%llu</td></tr>\n",
	    (unsigned long long)(m->c.conns_accepted - m->c.conns_closed));
	fprintf(out, "<tr><th>database</th><td colspan=\"7\">%llu group commits of %llu "
	    "writes, %llu busy retries, %llu reconnects, %llu connection waits</td></tr>\n",
	    (unsigned long long)m->db.batches, (unsigned long long)m->db.batch_writes,
	    (unsigned long long)m->db.busy_retries, (unsigned long long)m->db.reconnects,
	    (unsigned long long)m->db.conn_waits);
	fprintf(out, "</table>\n");
}

/* A series of a chart: its class and the figure it draws of a sample. */
struct stats_series {
	const char *cls;
	const char *label;
	float (*get)(const struct stats_point *);
};

#define STATS_PT(fname, member) \
static float \
fname(const struct stats_point *pt) \
{ \
	return pt->member; \
}
STATS_PT(stats_pt_rps, rps)
STATS_PT(stats_pt_err5, err5)
STATS_PT(stats_pt_p50, p50_ms)
STATS_PT(stats_pt_p99, p99_ms)
STATS_PT(stats_pt_busy, busy)
STATS_PT(stats_pt_queue, queue)

/* The sample i of ring r, oldest first. */
static const struct stats_point *
stats_html_at(const struct stats_ring *r, size_t i)
{
	return &r->pt[(r->head + STATS_RING_LEN - r->n + i) % STATS_RING_LEN];
}

/* One series as a path of relative steps; a sample not known breaks the line. */
static void
stats_html_path(FILE *out, const struct stats_ring *r, const struct stats_series *se,
    double max)
{
	size_t i;
	int x, y, py = 0, pen = 0, any = 0;
	float v;

	fprintf(out, "<path class=\"%s\" d=\"", se->cls);
	for (i = 0; i < r->n; i++) {
		v = se->get(stats_html_at(r, i));
		if (v < 0) {
			pen = 0;
			continue;
		}
		x = (int)(2 * (STATS_RING_LEN - r->n + i));
		y = STATS_CHART_H - STATS_CHART_LOW - (int)((double)v / max *
		    (STATS_CHART_H - STATS_CHART_TOP - STATS_CHART_LOW) + 0.5);
		if (!pen)
			fprintf(out, "%sM%d %d", any ? " " : "", x, y);
		else
			fprintf(out, "l2%s%d", y - py < 0 ? "" : " ", y - py);
		pen = any = 1;
		py = y;
	}
	fprintf(out, "\"/>\n");
}

/* A chart of ns series of p's ring, scaled to their largest figure. */
static void
stats_html_chart(FILE *out, const struct pool *p, const char *title, const char *unit,
    const struct stats_series *se, size_t ns)
{
	const struct stats_ring *r = p->ring;
	double max = 0, v;
	size_t i, j;

	for (j = 0; r != NULL && j < ns; j++)
		for (i = 0; i < r->n; i++)
			if ((v = se[j].get(stats_html_at(r, i))) > max)
				max = v;
	fprintf(out, "<figure>\n<svg class=\"chart\" xmlns=\"http://www.w3.org/2000/svg\" "
	    "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" role=\"img\" "
	    "aria-label=\"%s\">\n<title>%s</title>\n<text x=\"2\" y=\"10\">max %.*f %s</text>\n"
	    "<text x=\"%d\" y=\"10\" text-anchor=\"end\">now</text>\n", STATS_CHART_W,
	    STATS_CHART_H, STATS_CHART_W, STATS_CHART_H, title, title, max < 10 ? 2 : 0, max,
	    unit, STATS_CHART_W - 2);
	if (max <= 0)
		max = 1;
	for (j = 0; r != NULL && j < ns; j++)
		stats_html_path(out, r, &se[j], max);
	fprintf(out, "</svg>\n<figcaption>");
	for (j = 0; j < ns; j++)
		fprintf(out, "%s<span class=\"k-%s\">&#9632;</span> %s", j > 0 ? " " : "",
		    se[j].cls + 2, se[j].label);
	fprintf(out, "</figcaption>\n</figure>\n");
}

static void
stats_html_charts(FILE *out, const struct pool *p)
{
	static const struct stats_series req[] = {
		{ "s-rps", "requests/s", stats_pt_rps }, { "s-err", "5xx/s", stats_pt_err5 } };
	static const struct stats_series lat[] = {
		{ "s-p50", "p50 ms", stats_pt_p50 }, { "s-p99", "p99 ms", stats_pt_p99 } };
	static const struct stats_series thr[] = {
		{ "s-busy", "busy threads", stats_pt_busy },
		{ "s-queue", "listen queue", stats_pt_queue } };

	fprintf(out, "<div class=\"charts\">\n");
	stats_html_chart(out, p, "requests and 5xx a second", "/s", req, 2);
	stats_html_chart(out, p, "latency in the worker, p50 and p99", "ms", lat, 2);
	stats_html_chart(out, p, "busy threads and listen queue", "", thr, 2);
	fprintf(out, "</div>\n");
}

/* Pool p's section. */
static void
stats_html_pool(FILE *out, const struct sluiced *s, const struct pool *p)
{
	const struct conf_endpoint *ep = stats_html_ep(s, p);
	const char *state = stats_state_word(p);
	struct metrics_sum m;
	size_t i, cur = 0;

	for (i = 0; i < p->nw; i++)
		if (p->w[i].gen == p->gen && p->w[i].term_at == 0)
			cur++;
	fprintf(out, "<section class=\"pool\" id=\"pool-");
	stats_html_escape(out, p->name);
	fprintf(out, "\">\n<h2>");
	stats_html_escape(out, p->name);
	fprintf(out, " <span class=\"state %s\">%s</span></h2>\n<p class=\"where\">", state,
	    state);
	stats_html_escape(out, ep != NULL ? ep->route : "(removed)");
	fputs(" &middot; ", out);
	stats_html_escape(out, p->spec.binary);
	fputs(" &middot; ", out);
	stats_html_escape(out, p->spec.where);
	if (p->spec.db_path != NULL) {
		fputs(" &middot; database ", out);
		stats_html_escape(out, p->spec.db_path);
		fprintf(out, " (%s)", dbcheck_words[p->db.state]);
	}
	fprintf(out, " &middot; generation %u, workers <span class=\"workers\">%zu/%d</span> "
	    "x %d threads (", p->gen, cur, p->spec.workers, p->spec.threads);
	stats_html_escape(out, p->spec.sizing);
	fprintf(out, "), spawns <span class=\"spawns\">%lu</span>, crashes "
	    "<span class=\"crashes\">%lu</span>, hung <span class=\"hung\">%lu</span></p>\n",
	    p->spawns, p->crashes, p->hung);
	if (!p->spec.metrics) {
		fprintf(out, "<p>No counters: set metrics off.</p>\n</section>\n");
		return;
	}
	stats_pool_sum(p, &m);
	stats_html_counters(out, p, &m);
	stats_html_charts(out, p);
	fprintf(out, "</section>\n");
}

void
stats_html_page(FILE *out, const struct sluiced *s, const struct stats_nginx *nginx)
{
	const struct pool *p;
	size_t i;

	stats_html_head(out, s);
	if (nginx != NULL)
		stats_html_nginx(out, nginx);
	/* The endpoint list's order, then the pools leaving it (removed, still stopping). */
	for (i = 0; i < s->conf->neps; i++)
		for (p = s->pools; p != NULL; p = p->next)
			if (!p->removing && strcmp(p->name, s->conf->eps[i].name) == 0)
				stats_html_pool(out, s, p);
	for (p = s->pools; p != NULL; p = p->next)
		if (p->removing || stats_html_ep(s, p) == NULL)
			stats_html_pool(out, s, p);
	fprintf(out, "</body>\n</html>\n");
}
