/*
 * test_stats_html.c: the status page's rendering (supervisor/stats_html.c) on pools made
 * here, without a stack.
 *
 * The page's size with every ring full (150 samples of values that change every time,
 * the worst for the charts' relative steps): a pool's section stays under 7 kB and ten
 * pools' page under 100 kB.  Every text that can come from outside is escaped: a binary's
 * path, the list's line and a database file with markup, quotes and ampersands (the list
 * refuses quotes, the page does not count on it), and stats_html_escape() itself byte by
 * byte.  A sample not known (-1: no request in its interval) breaks its line instead of
 * drawing it at 0.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "harness.h"
#include "sluiced.h"

/* The endpoint list text, loaded from a temporary file; NULL on failure. */
static struct conf *
load(const char *text)
{
	char path[] = "/tmp/sluice-test-html-XXXXXX", err[512];
	struct conf *c;
	FILE *f;
	int fd = mkstemp(path);

	if (fd < 0 || (f = fdopen(fd, "w")) == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	c = conf_load(path, err, sizeof(err));
	if (c == NULL)
		fprintf(stderr, "%s\n", err);
	unlink(path);
	return c;
}

/* A pool called name with a full ring of changing values (seed: which ones). */
static struct pool *
pool_make(const char *name, char *binary, const char *where, char *db, unsigned seed)
{
	struct pool *p = calloc(1, sizeof(*p));
	size_t i;

	if (p == NULL || (p->ring = calloc(1, sizeof(*p->ring))) == NULL) {
		free(p);
		return NULL;
	}
	snprintf(p->name, sizeof(p->name), "%s", name);
	p->spec.binary = binary;
	snprintf(p->spec.where, sizeof(p->spec.where), "%s", where);
	p->spec.db_path = db;
	p->spec.metrics = 1;
	p->spec.workers = 4;
	p->spec.threads = 64;
	snprintf(p->spec.sizing, sizeof(p->spec.sizing), "auto:2cpus");
	p->fd = -1;
	p->queue.known = 1;
	p->queue.backlog = 4096;
	for (i = 0; i < STATS_RING_LEN; i++) {
		struct stats_point *pt = &p->ring->pt[i];

		seed = seed * 1103515245U + 12345U;
		pt->at = (int64_t)i * STATS_RING_EVERY_MS;
		pt->rps = (float)(seed % 30011);
		pt->err5 = (float)(seed % 97);
		pt->p50_ms = (float)(seed % 1000) / 10;
		pt->p99_ms = (float)(seed % 9973) / 10;
		pt->busy = (float)(seed % 65);
		pt->threads = 256;
		pt->queue = (float)(seed % 4096);
		pt->reuse = 1;
	}
	p->ring->n = STATS_RING_LEN;
	return p;
}

static void
pool_drop(struct pool *p)
{
	if (p != NULL)
		free(p->ring);
	free(p);
}

/* The page of s into a malloc'ed string (caller frees), its length in *len. */
static char *
render(const struct sluiced *s, size_t *len)
{
	char *buf = NULL;
	FILE *f = open_memstream(&buf, len);

	if (f == NULL)
		return NULL;
	stats_html_page(f, s, NULL);
	fclose(f);
	return buf;
}

static void
test_stats_html_size(void)
{
	static char bin[] = "/usr/lib/sluice/bin/health", db[] = "/var/lib/sluice/chat.db";
	char text[2048] = "", line[128], name[16];
	struct sluiced s;
	struct pool *pools[10];
	size_t len, one = 0;
	char *page;
	const char *p;
	int i;

	memset(&s, 0, sizeof(s));
	for (i = 0; i < 10; i++) {
		snprintf(line, sizeof(line), "pool_number_%d =/route/number/%d workers=4\n", i, i);
		strcat(text, line);
	}
	s.conf = load(text);
	CHECK(s.conf != NULL);
	if (s.conf == NULL)
		return;
	for (i = 9; i >= 0; i--) {
		snprintf(name, sizeof(name), "pool_number_%d", i);
		pools[i] = pool_make(name, bin, "/etc/sluice/endpoints.conf:12", db,
		    (unsigned)i + 1);
		CHECK(pools[i] != NULL);
		if (pools[i] == NULL)
			return;
		pools[i]->next = s.pools;
		s.pools = pools[i];
		if (i == 9) {
			page = render(&s, &one);
			free(page);
		}
	}
	page = render(&s, &len);
	CHECK(page != NULL);
	printf("   a full ring: the page of one pool %zu bytes, of ten %zu bytes\n", one, len);
	CHECK(one > 0 && one < 7 * 1024 + 2500);
	CHECK((len - one) / 9 < 7 * 1024);
	CHECK(len < 100 * 1024);
	/* In the list's order, each with its three charts. */
	CHECK(page != NULL && strstr(page, "id=\"pool-pool_number_0\"") <
	    strstr(page, "id=\"pool-pool_number_9\""));
	for (i = 0, p = page; p != NULL && (p = strstr(p, "<svg class=\"chart\"")) != NULL; p++)
		i++;
	CHECK_INT(i, 30);
	CHECK(page != NULL && strstr(page, "<script") == NULL);
	free(page);
	for (i = 0; i < 10; i++)
		pool_drop(pools[i]);
	conf_free(s.conf);
}

/* Markup, quotes and ampersands in every text from outside, escaped. */
static void
test_stats_html_escaped(void)
{
	static char bin[] = "/opt/<script>alert(1)</script>/h&x\"'", db[] = "/d/<img src=x>.db";
	struct sluiced s;
	struct pool *p;
	size_t len;
	char *page;

	memset(&s, 0, sizeof(s));
	s.conf = load("health =/health\n");
	CHECK(s.conf != NULL);
	if (s.conf == NULL)
		return;
	p = pool_make("health", bin, "/etc/<b>\"x\"</b>&amp;.conf:1", db, 7);
	CHECK(p != NULL);
	if (p == NULL)
		return;
	s.pools = p;
	page = render(&s, &len);
	CHECK(page != NULL);
	CHECK(page != NULL && strstr(page, "<script") == NULL);
	CHECK(page != NULL && strstr(page, "<img") == NULL);
	CHECK(page != NULL && strstr(page, "<b>") == NULL);
	CHECK(page != NULL && strstr(page, "/opt/&lt;script&gt;alert(1)&lt;/script&gt;/h&amp;x"
	    "&quot;&#39;") != NULL);
	CHECK(page != NULL && strstr(page, "/etc/&lt;b&gt;&quot;x&quot;&lt;/b&gt;&amp;amp;"
	    ".conf:1") != NULL);
	CHECK(page != NULL && strstr(page, "/d/&lt;img src=x&gt;.db") != NULL);
	free(page);
	pool_drop(p);
	conf_free(s.conf);
}

/* stats_html_escape() byte by byte: the five characters, and every other byte as it is. */
static void
test_stats_html_escape_bytes(void)
{
	char in[2], *out = NULL;
	size_t len = 0;
	int c, bad = 0;
	FILE *f;

	for (c = 1; c < 256; c++) {
		in[0] = (char)c;
		in[1] = '\0';
		if ((f = open_memstream(&out, &len)) == NULL)
			return;
		stats_html_escape(f, in);
		fclose(f);
		switch (c) {
		case '&': bad += strcmp(out, "&amp;") != 0; break;
		case '<': bad += strcmp(out, "&lt;") != 0; break;
		case '>': bad += strcmp(out, "&gt;") != 0; break;
		case '"': bad += strcmp(out, "&quot;") != 0; break;
		case '\'': bad += strcmp(out, "&#39;") != 0; break;
		default: bad += len != 1 || out[0] != (char)c; break;
		}
		free(out);
		out = NULL;
	}
	CHECK_INT(bad, 0);
}

/* A sample not known breaks the line: a new "M" after it, no step drawn through it. */
static void
test_stats_html_gap(void)
{
	static char bin[] = "/b/health";
	struct sluiced s;
	struct pool *p;
	const char *path;
	size_t len, i;
	char *page;
	int moves = 0;

	memset(&s, 0, sizeof(s));
	s.conf = load("health =/health\n");
	CHECK(s.conf != NULL);
	if (s.conf == NULL)
		return;
	p = pool_make("health", bin, "/e.conf:1", NULL, 3);
	CHECK(p != NULL);
	if (p == NULL)
		return;
	for (i = 0; i < STATS_RING_LEN; i++)
		p->ring->pt[i].p99_ms = i % 50 == 10 ? -1 : 5;
	s.pools = p;
	page = render(&s, &len);
	path = page != NULL ? strstr(page, "<path class=\"s-p99\" d=\"") : NULL;
	CHECK(path != NULL);
	for (; path != NULL && *path != '/' ; path++)
		moves += *path == 'M';
	CHECK_INT(moves, 4);
	free(page);
	pool_drop(p);
	conf_free(s.conf);
}

int
main(void)
{
	RUN(test_stats_html_size);
	RUN(test_stats_html_escaped);
	RUN(test_stats_html_escape_bytes);
	RUN(test_stats_html_gap);
	return harness_done();
}
