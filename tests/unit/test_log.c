/* test_log: the line format, with and without the thread's current request id, and the
 * id kept whole after a message cut at the line's limit. */
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "reqid.h"
#include "../lib/harness.h"

/* Runs one log_warn(msg) with stderr on a pipe; the line read back into out. */
static void
logged(const char *msg, char *out, size_t len)
{
	int p[2], saved = dup(STDERR_FILENO);
	ssize_t n;

	out[0] = '\0';
	if (saved < 0 || pipe(p) < 0)
		return;
	dup2(p[1], STDERR_FILENO);
	log_warn("%s", msg);
	dup2(saved, STDERR_FILENO);
	close(saved);
	close(p[1]);
	n = read(p[0], out, len - 1);
	out[n > 0 ? n : 0] = '\0';
	close(p[0]);
}

static void
test_line(void)
{
	char line[4096], want[256], msg[3000];
	size_t n;

	log_init("t");
	snprintf(want, sizeof(want), "sluice t[%ld] warn: hello\n", (long)getpid());
	logged("hello", line, sizeof(line));
	CHECK_STR(line, want);
	CHECK_INT(reqid_set("req-1.a:b@c"), 0);
	logged("hello", line, sizeof(line));
	snprintf(want, sizeof(want), "sluice t[%ld] warn: hello request_id=req-1.a:b@c\n",
	    (long)getpid());
	CHECK_STR(line, want);
	/* A message past the limit is cut; the id still ends the line, whole. */
	memset(msg, 'm', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	logged(msg, line, sizeof(line));
	n = strlen(line);
	CHECK(n < 1024 + 16 + REQID_MAX);
	CHECK(n > 30 && strcmp(line + n - 25, "m request_id=req-1.a:b@c\n") == 0);
	reqid_clear();
	logged("bye", line, sizeof(line));
	CHECK(strstr(line, "request_id") == NULL);
}

int
main(void)
{
	RUN(test_line);
	return harness_done();
}
