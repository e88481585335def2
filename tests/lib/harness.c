/* harness.c: see harness.h. */
#include <stdarg.h>
#include <stdio.h>

#include "harness.h"

int harness_failed_checks;
static int passed, failed;
static const char *current = "?";

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
harness_run(const char *name, void (*fn)(void))
{
	int before = harness_failed_checks;

	current = name;
	fn();
	if (harness_failed_checks == before) {
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
	printf("%d passed, %d failed\n", passed, failed);
	return failed == 0 ? 0 : 1;
}
