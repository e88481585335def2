/*
 * jsrun.h: running a node test file of tests/js/ (node's built-in test runner, TAP
 * reporter) from a C integration test, and reading its verdict; for the browser tests,
 * the same with Debian's chromium driven through puppeteer-core.
 */
#ifndef SLUICE_JSRUN_H
#define SLUICE_JSRUN_H

/*
 * Runs "cd tests/js && ENV node --test --test-reporter=tap FILE" (env: shell assignments
 * such as "REST_URL='http://...'", may be ""), printing node's summary, its "# " comment
 * lines and the whole report of every failed test, each prefixed by [name].  Returns 0
 * when node exited 0 and reported at least one passed test and no failed, cancelled,
 * skipped or todo one (nothing is skipped silently); -1 otherwise.
 */
int jsrun(const char *env, const char *file, const char *name);

/*
 * Installs tests/js's packages with npm ci (pinned by tests/js/package-lock.json) unless
 * tests/js/node_modules/PKG/package.json is there already.  Returns 0 when PKG is then
 * installed and node runs, -1 otherwise.
 */
int jsrun_install(const char *pkg);

/* The chromium the browser tests drive: $CHROMIUM, else /usr/bin/chromium (borrowed). */
const char *jsrun_chromium(void);

/*
 * What a browser test needs before it starts its stack: jsrun_chromium() executable, and
 * puppeteer-core installed with node running.  Returns 0, or -1 after a failed CHECK()
 * naming what is missing (the Debian package, or npm ci).
 */
int jsrun_browser_ready(void);

/*
 * jsrun() of the browser test file (reported as [chromium]) with env followed by
 * ARTIFACTS (build/test-artifacts under the current directory, where its screenshots
 * go) and CHROMIUM.  Returns 0, or -1 as jsrun() or when the current directory cannot
 * be read.
 */
int jsrun_browser(const char *env, const char *file);

#endif /* SLUICE_JSRUN_H */
