/*
 * log.h: logging to stderr, one line per event, with a level threshold.
 *
 * Workers log start-up, shutdown and failures; nothing is logged per request unless the
 * level is debug.  The supervisor collects its workers' stderr, so a line carries the
 * program name and pid: "sluice health[1234] warn: ...".  A line logged by a thread
 * while it serves a request ends with that request's id, "sluice rest[1234] warn: ...
 * request_id=ID" (the thread's current id, reqid.h), the id nginx's access log and the
 * response's X-Request-Id header show.  The level is info until log_set_level(); the
 * serve loop and sluiced set it from SLUICE_LOG_LEVEL (settings.h).
 */
#ifndef SLUICE_LOG_H
#define SLUICE_LOG_H

enum log_level {
	LOG_ERR,
	LOG_WARN,
	LOG_INFO,
	LOG_DEBUG,
	LOG__MAX
};

/* Sets the name printed in every line (borrowed: keep it alive; NULL keeps "sluice"). */
void log_init(const char *name);

void log_set_level(enum log_level l);
int log_enabled(enum log_level l);

/* Writes one line if l passes the threshold.  Never fails visibly; a line longer than 1 KiB
 * is truncated (the request id after it is kept whole). Safe from several threads (one
 * write(2) per line). */
void log_msg(enum log_level l, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

#define log_err(...)	log_msg(LOG_ERR, __VA_ARGS__)
#define log_warn(...)	log_msg(LOG_WARN, __VA_ARGS__)
#define log_info(...)	log_msg(LOG_INFO, __VA_ARGS__)
#define log_debug(...)	do { if (log_enabled(LOG_DEBUG)) log_msg(LOG_DEBUG, __VA_ARGS__); } while (0)

#endif /* SLUICE_LOG_H */
