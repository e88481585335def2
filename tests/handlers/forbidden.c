/*
 * forbidden: a test-only endpoint (built under build/.../tests/handlers/, never into bin/)
 * that makes a system call no worker needs, to prove that the seccomp filter
 * (common/sandbox.c) kills the worker and that sluiced replaces it.
 *
 * GET /forbidden           200 {"pid":N,"uid":N,"gid":N}: which worker answered, as whom
 * GET /forbidden?do=mount  calls mount(2) on a path that does not exist (harmless when the
 *                          call is allowed: it fails with ENOENT or EPERM); under the
 *                          filter the worker dies with SIGSYS and nginx answers 502.
 *                          Without the filter: 200 {"mount":"<strerror>"}.
 * No database, no tables.
 */
#include <errno.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "buf.h"
#include "json.h"
#include "serve.h"

static int
handle(struct req *rq, struct resp *rs)
{
	const struct req_param *what = req_param(rq, "do");
	const char *msg;

	rs->status = 200;
	rs->content_type = "application/json";
	if (what != NULL && strcmp(what->val, "mount") == 0) {
		msg = syscall(SYS_mount, "none", "/nonexistent/sluice-forbidden", "tmpfs", 0UL,
		    NULL) == 0 ? "mounted" : strerror(errno);
		buf_puts(&rs->body, "{\"mount\":");
		json_escape(&rs->body, msg, strlen(msg));
		return buf_putc(&rs->body, '}');
	}
	return buf_printf(&rs->body, "{\"pid\":%ld,\"uid\":%ld,\"gid\":%ld}", (long)getpid(),
	    (long)getuid(), (long)getgid());
}

static const struct endpoint endpoint = { .name = "forbidden", .handle = handle };

int
main(int argc, char **argv)
{
	return serve_main(argc, argv, &endpoint);
}
