/*
 * test_rest_js: the rest endpoint driven by the real @supabase/postgrest-js client
 * (tests/js/rest.test.mjs, node's built-in test runner), once against the SQLite stack and
 * once against the PostgreSQL one of rest_fixture.h.  The client is installed from npm
 * (npm ci, pinned by tests/js/package-lock.json) when tests/js/node_modules lacks it.
 *
 * Each run counts as one test here, passed only when node reports no failed, cancelled,
 * skipped or todo test and at least one passed: nothing is skipped silently.  Without node
 * or npm the tests fail (install the Debian packages nodejs and npm).
 */
#include "jsrun.h"
#include "rest_fixture.h"

/* Runs rest.test.mjs against base; 0 when every JS test passed and none was skipped. */
static int
js_run(const char *base, const char *name)
{
	char env[512];

	snprintf(env, sizeof(env), "REST_URL='%s/rest/v1'", base);
	return jsrun(env, "rest.test.mjs", name);
}

static void
test_rest_js_sqlite(void)
{
	CHECK(js_run(fx.lite.base, "sqlite") == 0);
}

static void
test_rest_js_postgresql(void)
{
	CHECK(js_run(fx.pgs.base, "postgresql") == 0);
}

int
main(void)
{
	if (jsrun_install("@supabase/postgrest-js") < 0) {
		CHECK(!"npm ci installed @supabase/postgrest-js in tests/js, and node runs");
		return harness_done();
	}
	if (fx_start(NULL) < 0) {
		CHECK(!"the two stacks started");
		fx_stop();
		return harness_done();
	}
	RUN(test_rest_js_sqlite);
	RUN(test_rest_js_postgresql);
	fx_stop();
	return harness_done();
}
