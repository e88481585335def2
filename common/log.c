/*
 * log.c: see log.h.  Each line is formatted into a stack buffer and written with a single
 * write(2), so lines from several threads or processes sharing stderr do not interleave.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "log.h"
#include "reqid.h"

static const char *log_name = "sluice";
static enum log_level log_level = LOG_INFO;

static const char *const log_names[LOG__MAX] = { "error", "warn", "info", "debug" };

void
log_init(const char *name)
{
	if (name != NULL)
		log_name = name;
}

void
log_set_level(enum log_level l)
{
	log_level = l;
}

int
log_enabled(enum log_level l)
{
	return l <= log_level;
}

void
log_msg(enum log_level l, const char *fmt, ...)
{
	char buf[1024];
	const char *id = reqid_current();
	va_list ap;
	int n, m, saved = errno;
	size_t len;

	if (!log_enabled(l))
		return;
	/* A line written while a request is served names it (reqid.h; the id is of a
	 * charset that cannot end the line or be mistaken for another field). */
	n = snprintf(buf, sizeof(buf), "sluice %s[%ld] %s: %s%s%s", log_name, (long)getpid(),
	    log_names[l], id != NULL ? "[request_id=" : "", id != NULL ? id : "",
	    id != NULL ? "] " : "");
	if (n < 0 || (size_t)n >= sizeof(buf))
		n = 0;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, sizeof(buf) - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	len = (size_t)n + (size_t)m;
	if (len > sizeof(buf) - 2)
		len = sizeof(buf) - 2;
	buf[len++] = '\n';
	/* A failed or short write of a log line is not worth failing anything for. */
	if (write(STDERR_FILENO, buf, len) < 0)
		(void)0;
	errno = saved;
}
