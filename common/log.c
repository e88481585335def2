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
	/* Room for the id's suffix (" request_id=" and REQID_MAX bytes) besides the line. */
	char buf[1024 + 16 + REQID_MAX];
	const char *id = reqid_current();
	va_list ap;
	int n, m, saved = errno;
	size_t len, room = sizeof(buf) - 16 - REQID_MAX;

	if (!log_enabled(l))
		return;
	n = snprintf(buf, room, "sluice %s[%ld] %s: ", log_name, (long)getpid(),
	    log_names[l]);
	if (n < 0 || (size_t)n >= room)
		n = 0;
	va_start(ap, fmt);
	m = vsnprintf(buf + n, room - (size_t)n - 1, fmt, ap);
	va_end(ap);
	if (m < 0)
		m = 0;
	len = (size_t)n + (size_t)m;
	if (len > room - 2)
		len = room - 2;
	/*
	 * A line written while a request is served ends with its id (reqid.h), after the
	 * message so that "LEVEL: message" reads as before; the id's charset has no blank,
	 * so it is always the line's last word, even after a message cut at the limit.
	 */
	if (id != NULL) {
		size_t idlen = strnlen(id, REQID_MAX);

		memcpy(buf + len, " request_id=", 12);
		memcpy(buf + len + 12, id, idlen);
		len += 12 + idlen;
	}
	buf[len++] = '\n';
	/* A failed or short write of a log line is not worth failing anything for. */
	if (write(STDERR_FILENO, buf, len) < 0)
		(void)0;
	errno = saved;
}
