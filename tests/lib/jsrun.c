/* jsrun.c: see jsrun.h. */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness.h"
#include "jsrun.h"
#include "stack.h"

int
jsrun(const char *env, const char *file, const char *name)
{
	char cmd[2048], line[4096];
	long pass = -1, fail = -1, skipped = -1, todo = -1, cancelled = -1;
	FILE *p;
	int rc, n, failing = 0;

	n = snprintf(cmd, sizeof(cmd), "cd tests/js && %s node --test --test-reporter=tap "
	    "%s 2>&1", env, file);
	if (n < 0 || (size_t)n >= sizeof(cmd) || (p = popen(cmd, "r")) == NULL)
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

int
jsrun_install(const char *pkg)
{
	char path[512];
	int n;

	n = snprintf(path, sizeof(path), "tests/js/node_modules/%s/package.json", pkg);
	if (n < 0 || (size_t)n >= sizeof(path))
		return -1;
	if (access(path, R_OK) != 0 &&
	    (stack_sh("cd tests/js && npm ci --no-audit --no-fund >/dev/null 2>&1") != 0 ||
	    access(path, R_OK) != 0))
		return -1;
	return stack_sh("node --version >/dev/null 2>&1") == 0 ? 0 : -1;
}

const char *
jsrun_chromium(void)
{
	const char *c = getenv("CHROMIUM");

	return c != NULL ? c : "/usr/bin/chromium";
}

int
jsrun_browser_ready(void)
{
	if (access(jsrun_chromium(), X_OK) != 0) {
		CHECK(!"chromium is installed (apt-get install chromium)");
		return -1;
	}
	if (jsrun_install("puppeteer-core") < 0) {
		CHECK(!"npm ci installed puppeteer-core in tests/js, and node runs");
		return -1;
	}
	return 0;
}

int
jsrun_browser(const char *env, const char *file)
{
	char all[PATH_MAX + 1024], cwd[PATH_MAX];
	int n;

	if (getcwd(cwd, sizeof(cwd)) == NULL)
		return -1;
	n = snprintf(all, sizeof(all), "%s ARTIFACTS='%s/build/test-artifacts' CHROMIUM='%s'",
	    env, cwd, jsrun_chromium());
	if (n < 0 || (size_t)n >= sizeof(all))
		return -1;
	return jsrun(all, file, "chromium");
}
