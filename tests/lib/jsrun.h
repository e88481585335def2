/*
 * jsrun.h: running a node test file of tests/js/ (node's built-in test runner, TAP
 * reporter) from a C integration test, and reading its verdict.
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

#endif /* SLUICE_JSRUN_H */
