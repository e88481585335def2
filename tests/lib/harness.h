/*
 * harness.h: the in-tree test harness.  A test program is a list of test functions; each
 * CHECK() that fails prints where and why and marks the current test failed.  The program
 * ends with "N passed, N failed" (counting tests, not checks), followed by ", N skipped"
 * when a test could not run here (SKIP(): never counted as passed), and exits non-zero when
 * any test failed.  tests/run.sh sums the lines of every program into the suite's last
 * line.
 *
 * TEST=NAME in the environment runs only the case NAME (its function's name, "test_"
 * optional; a case run under a label such as "sqlite/test_x" also by the part after the
 * '/', on every back end); the others are not run and not counted.  A NAME that no case
 * has fails the program.
 *
 *   static void test_thing(void) { CHECK(f(1) == 2); CHECK_STR(s, "x"); }
 *   int main(void) { RUN(test_thing); return harness_done(); }
 */
#ifndef SLUICE_HARNESS_H
#define SLUICE_HARNESS_H

#include <stdint.h>

extern int harness_failed_checks;

void harness_fail(const char *file, int line, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
void harness_run(const char *name, void (*fn)(void));
int harness_done(void);
/* Marks the running test as not run here, with the reason; it then counts as skipped
 * (unless a check failed), never as passed. */
void harness_skip(const char *why);

#define RUN(fn) harness_run(#fn, fn)
/* Leaves the running test as skipped: SKIP("needs root"); */
#define SKIP(why) do { harness_skip(why); return; } while (0)

#define CHECK(cond) do { \
	if (!(cond)) harness_fail(__FILE__, __LINE__, "%s", #cond); \
} while (0)

#define CHECK_INT(got, want) do { \
	long long g_ = (long long)(got), w_ = (long long)(want); \
	if (g_ != w_) harness_fail(__FILE__, __LINE__, "%s == %lld, want %lld", #got, g_, w_); \
} while (0)

#define CHECK_STR(got, want) do { \
	const char *g_ = (got), *w_ = (want); \
	if (g_ == NULL || w_ == NULL ? g_ != w_ : strcmp(g_, w_) != 0) \
		harness_fail(__FILE__, __LINE__, "%s == \"%s\", want \"%s\"", #got, \
		    g_ ? g_ : "(null)", w_ ? w_ : "(null)"); \
} while (0)

#endif /* SLUICE_HARNESS_H */
