/*
 * escape: a test-only endpoint (built under build/.../tests/handlers/, never into bin/)
 * that tries what a compromised worker would, to prove what the sandbox leaves it.
 *
 * GET /escape?do=fork    calls fork(); under the seccomp filter (common/sandbox.c) the
 *                        worker dies with SIGSYS and nginx answers 502.  Without the
 *                        filter: 200 {"fork":"forked"} (the child leaves at once).
 * GET /escape?do=thread  starts and joins a thread: 200 {"thread":"ok"} under the filter.
 * GET /escape?do=env     200 {"env":["NAME",...]}: the names in the worker's environment
 *                        (never the values), to prove that sluiced passes only what
 *                        workers need.
 * GET /escape            200 {"pid":N}.
 * No database, no tables.
 */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "serve.h"

extern char **environ;

static void *
escape_thread(void *arg)
{
	return arg;
}

static int
escape_env(struct buf *b)
{
	const char *eq;
	size_t i;

	buf_puts(b, "{\"env\":[");
	for (i = 0; environ[i] != NULL; i++) {
		eq = strchr(environ[i], '=');
		if (i > 0)
			buf_putc(b, ',');
		json_escape(b, environ[i], eq != NULL ? (size_t)(eq - environ[i]) :
		    strlen(environ[i]));
	}
	return buf_puts(b, "]}");
}

static int
handle(struct req *rq, struct resp *rs)
{
	const struct req_param *what = req_param(rq, "do");
	const char *msg;
	pthread_t t;
	void *ret = NULL;
	pid_t pid;

	rs->status = 200;
	rs->content_type = "application/json";
	if (what != NULL && strcmp(what->val, "fork") == 0) {
		if ((pid = fork()) == 0)
			_exit(0);
		msg = pid > 0 ? "forked" : strerror(errno);
		if (pid > 0)
			(void)waitpid(pid, NULL, 0);
		buf_puts(&rs->body, "{\"fork\":");
		json_escape(&rs->body, msg, strlen(msg));
		return buf_putc(&rs->body, '}');
	}
	if (what != NULL && strcmp(what->val, "thread") == 0) {
		msg = pthread_create(&t, NULL, escape_thread, (void *)1) == 0 &&
		    pthread_join(t, &ret) == 0 && ret == (void *)1 ? "ok" : "failed";
		buf_puts(&rs->body, "{\"thread\":");
		json_escape(&rs->body, msg, strlen(msg));
		return buf_putc(&rs->body, '}');
	}
	if (what != NULL && strcmp(what->val, "env") == 0)
		return escape_env(&rs->body);
	return buf_printf(&rs->body, "{\"pid\":%ld}", (long)getpid());
}

static const struct endpoint endpoint = { .name = "escape", .handle = handle };

int
main(int argc, char **argv)
{
	return serve_main(argc, argv, &endpoint);
}
