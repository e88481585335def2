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
#include "rest_fixture.h"

/* Runs node's test runner against base; 0 when every JS test passed and none was skipped. */
static int
js_run(const char *base, const char *name)
{
	char cmd[1024], line[4096];
	long pass = -1, fail = -1, skipped = -1, todo = -1, cancelled = -1;
	FILE *p;
	int rc, failing = 0;

	snprintf(cmd, sizeof(cmd), "cd tests/js && REST_URL='%s/rest/v1' node --test "
	    "--test-reporter=tap rest.test.mjs 2>&1", base);
	if ((p = popen(cmd, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), p) != NULL) {
		/* Print the summary and the whole report of every failed test. */
		if (strncmp(line, "not ok", 6) == 0)
			failing = 1;
		else if (strncmp(line, "# Subtest", 9) == 0 || strncmp(line, "ok ", 3) == 0)
			failing = 0;
		if (failing || (strncmp(line, "# ", 2) == 0 && strncmp(line, "# Subtest", 9) != 0))
			printf("  [%s] %s", name, line);
		sscanf(line, "# pass %ld", &pass);
		sscanf(line, "# fail %ld", &fail);
		sscanf(line, "# skipped %ld", &skipped);
		sscanf(line, "# todo %ld", &todo);
		sscanf(line, "# cancelled %ld", &cancelled);
	}
	rc = pclose(p);
	if (rc != 0 || pass <= 0 || fail != 0 || skipped != 0 || todo != 0 || cancelled != 0) {
		printf("  [%s] node exited %d: pass %ld fail %ld skipped %ld todo %ld "
		    "cancelled %ld\n", name, rc, pass, fail, skipped, todo, cancelled);
		return -1;
	}
	return 0;
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
	if (access("tests/js/node_modules/@supabase/postgrest-js/package.json", R_OK) != 0 &&
	    stack_sh("cd tests/js && npm ci --no-audit --no-fund >/dev/null 2>&1") != 0) {
		CHECK(!"npm ci installed @supabase/postgrest-js in tests/js");
		return harness_done();
	}
	if (stack_sh("node --version >/dev/null 2>&1") != 0) {
		CHECK(!"node is installed");
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
