/*
 * reqid.h: the request id, one word that names a request in every place it leaves a
 * trace: nginx's access log, the worker's log lines, the X-Request-Id response header and
 * sluice's error bodies (docs/deployment.md, "Request ids").
 *
 * The web server chooses it: nginx's generated config passes the client's X-Request-Id
 * when it is well-formed, else nginx's own $request_id, as the FastCGI parameter
 * REQUEST_ID; Apache's passes the client's well-formed header as REQUEST_ID and
 * mod_unique_id's UNIQUE_ID.  The worker trusts none of them: reqid_valid() checks every
 * candidate again (a worker can be reached without nginx, and a config written by hand
 * may pass anything), and when none passes it makes one of nginx's form (32 lower-case
 * hex digits).  A valid id is 1 to REQID_MAX bytes of [A-Za-z0-9._:@-]: nothing that can
 * end a header line, a log line or a JSON string, or be read as a second log field.
 *
 * The serve loop sets the current id of its thread before a request (reqid_set()) and
 * clears it after (reqid_clear()); log.c writes it into every line logged meanwhile, so
 * callers need not pass it.
 */
#ifndef SLUICE_REQID_H
#define SLUICE_REQID_H

#include <stddef.h>
#include <stdint.h>

#define REQID_MAX	128
/* A generated id: 32 hex digits, as nginx's $request_id. */
#define REQID_GEN_LEN	32

/* 1 when s[0..len) is a valid request id (1..REQID_MAX bytes of [A-Za-z0-9._:@-]),
 * else 0.  s may be NULL (0). */
int reqid_valid(const char *s, size_t len);

/* The first of the NUL-terminated candidates c[0..n) that is valid (NULL entries are
 * skipped), or NULL when none is.  Borrowed from the caller. */
const char *reqid_pick(const char *const *c, size_t n);

/* A generator's state, one per thread (no locking): reqid_seed() fills it from
 * getrandom(2) (falling back to the clock and the address of state). */
struct reqid_gen {
	uint64_t s;
};

void reqid_seed(struct reqid_gen *g);

/* Writes a new id of REQID_GEN_LEN hex digits and a NUL into out. */
void reqid_make(struct reqid_gen *g, char out[REQID_GEN_LEN + 1]);

/*
 * Makes id the calling thread's current request id (copied: the caller's string may go
 * once this returns).  An invalid id clears it instead, and returns -1; else 0.
 */
int reqid_set(const char *id);
void reqid_clear(void);

/* The calling thread's current request id (NUL-terminated, the thread's own storage:
 * valid until its next reqid_set() or reqid_clear()), or NULL between requests. */
const char *reqid_current(void);

#endif /* SLUICE_REQID_H */
