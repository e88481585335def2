/* harness.c: see harness.h. */
#include <stdarg.h>
#include <stdio.h>

#include "harness.h"

int harness_failed_checks;
static int passed, failed, skipped;
static const char *current = "?";
static const char *skip_why;

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
	if (skipped > 0)
		printf("%d passed, %d failed, %d skipped\n", passed, failed, skipped);
	else
		printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
