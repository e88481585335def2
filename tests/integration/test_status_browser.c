/*
 * test_status_browser: sluiced's status page (supervisor/stats_html.c) in a real browser.
 * The real stack (nginx tuned, sluiced with set metrics_listen, bin/health under load and
 * bin/rest on a SQLite file whose name carries "<b>" and "&"), driven by
 * tests/js/status_browser.test.mjs: Debian's chromium, headless, through puppeteer-core
 * (tests/js/package-lock.json).  Once the ring holds a few samples of the load, the
 * script loads the page (status 200, no script in it, nothing else requested, no console
 * error or warning, no failed request), checks that every pool's section has its three
 * charts drawn at their size with stroked lines and that the loaded pool's requests line
 * spans several samples, and that the database file's name shows as text, never as an
 * element.  The screenshot goes to build/test-artifacts/status-page.png.  Without
 * chromium, node or npm the test fails (the Debian packages chromium, nodejs and npm).
 */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "chatfix.h"
#include "http.h"
#include "jsrun.h"
#include "stack.h"
#include "../lib/harness.h"

static struct stack st;
static char db[128], murl[64];
static int up;

static int
setup(void)
{
	char conf[1024], url[300];
	int mport = stack_free_port();

	snprintf(db, sizeof(db), "/tmp/sluice-statusb-%d-<b>x&y.db", (int)getpid());
	snprintf(url, sizeof(url), "sqlite:%s", db);
	unlink(db);
	if (mport < 0 || chatfix_exec(url, "CREATE TABLE item (id integer PRIMARY KEY)") != 0)
		return -1;
	snprintf(murl, sizeof(murl), "http://127.0.0.1:%d", mport);
	snprintf(conf, sizeof(conf), "set metrics_listen 127.0.0.1:%d\n"
	    "db main sqlite:%s\nhealth =/health workers=1 threads=4\n"
	    "rest /rest/v1/ workers=1 threads=2 db=main\n", mport, db);
	if (stack_start(&st, conf, "tuned", 1, NULL) < 0)
		return -1;
	up = 1;
	return 0;
}

static void
teardown(void)
{
	if (up)
		stack_stop(&st);
	stack_sh("rm -f '%s' '%s-wal' '%s-shm' '%s-wlock'", db, db, db, db);
}

/* Load on health until the page's requests line of it has at least 3 samples (12 s at
 * most); 0 or -1. */
static int
load_until_drawn(void)
{
	struct http_loop g;
	struct http_resp r;
	char url[300], page[128];
	const char *p, *end;
	long long stop_at = stack_now_ms() + 12000;
	int n = 0;

	snprintf(url, sizeof(url), "%s/health", st.base);
	snprintf(page, sizeof(page), "%s/", murl);
	if (http_loop_start_paced(&g, "GET", url, 200, 5) != 0)
		return -1;
	http_resp_init(&r);
	while (n < 3 && stack_now_ms() < stop_at) {
		usleep(500 * 1000);
		n = 0;
		if (http_do("GET", page, NULL, NULL, 0, 5000, &r) != 0 || r.body.data == NULL ||
		    (p = strstr(r.body.data, "id=\"pool-health\"")) == NULL ||
		    (p = strstr(p, "<path class=\"s-rps\" d=\"")) == NULL ||
		    (end = strchr(p + 23, '"')) == NULL)
			continue;
		for (p += 23; p < end; p++)
			n += *p == 'M' || *p == 'l';
	}
	http_resp_free(&r);
	http_loop_stop(&g);
	printf("   %ld requests while the ring took %d samples of them\n", g.sent - g.bad, n);
	return n >= 3 ? 0 : -1;
}

static void
test_status_in_chromium(void)
{
	char env[256];

	CHECK(load_until_drawn() == 0);
	snprintf(env, sizeof(env), "STATUS_URL='%s' POOLS='health,rest'", murl);
	CHECK(jsrun_browser(env, "status_browser.test.mjs") == 0);
}

int
main(void)
{
	if (jsrun_browser_ready() < 0)
		return harness_done();
	if (setup() < 0) {
		CHECK(!"the status stack started");
		teardown();
		return harness_done();
	}
	RUN(test_status_in_chromium);
	teardown();
	return harness_done();
}
