/* harness.c: see harness.h. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

int harness_failed_checks;
static int passed, failed, skipped;
static const char *current = "?";
static const char *skip_why;
static int matched;		/* cases that TEST chose */

/* 1 when name is want, or is "test_" and want. */
static int
harness_named(const char *name, const char *want)
{
	return strcmp(name, want) == 0 ||
	    (strncmp(name, "test_", 5) == 0 && strcmp(name + 5, want) == 0);
}

/* 1 when the case name is to run: every case without TEST in the environment, else the
 * one it names (see harness.h). */
static int
harness_wanted(const char *name)
{
	const char *want = getenv("TEST"), *slash;

	if (want == NULL || *want == '\0')
		return 1;
	if (harness_named(name, want))
		return 1;
	slash = strrchr(name, '/');
	return slash != NULL && harness_named(slash + 1, want);
}

void
harness_fail(const char *file, int line, const char *fmt, ...)
{
	va_list ap;

	fprintf(stderr, "FAIL %s (%s:%d): ", current, file, line);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
	harness_failed_checks++;
}

void
harness_skip(const char *why)
{
	skip_why = why;
}

void
harness_run(const char *name, void (*fn)(void))
{
	int before = harness_failed_checks;

	if (!harness_wanted(name))
		return;
	matched++;
	current = name;
	skip_why = NULL;
	fn();
	if (harness_failed_checks == before && skip_why != NULL) {
		skipped++;
		printf("skip %s: %s\n", name, skip_why);
	} else if (harness_failed_checks == before) {
		passed++;
		printf("ok   %s\n", name);
	} else {
		failed++;
		printf("FAIL %s\n", name);
	}
	fflush(stdout);
}

int
harness_done(void)
{
	const char *want = getenv("TEST");

	if (want != NULL && *want != '\0' && matched == 0) {
		printf("FAIL TEST=%s: this program has no case of that name\n", want);
		failed++;
	}
	if (skipped > 0)
		printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	else
		printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
