/*
 * stubstatus.h: nginx's stub_status figures as sluiced reads them (stubstatus.c), for
 * /metrics and the status page of the metrics address.
 *
 * `set nginx_status PORT` in the endpoint list makes the generated nginx.conf (both
 * profiles, nginxconf.c) listen on 127.0.0.1:PORT in a server of its own, which answers
 * stub_status at STUBSTATUS_PATH to loopback clients only (allow 127.0.0.1; deny all) and
 * 404 to any other path; nginx's public listener never leads there.  sluiced asks it at
 * each scrape, over loopback, within STUBSTATUS_TIMEOUT_MS in all.
 */
#ifndef SLUICE_STUBSTATUS_H
#define SLUICE_STUBSTATUS_H

#include <stddef.h>
#include <stdint.h>

#define STUBSTATUS_PATH		"/nginx_status"
/* The most a fetch waits for nginx, connect to last byte: it holds sluiced's poll loop. */
#define STUBSTATUS_TIMEOUT_MS	250
/* The most of nginx's answer read (its head and the four lines are about 250 bytes). */
#define STUBSTATUS_MAX		4096

/* What stub_status says: the counts since nginx started, summed over its workers. */
struct stubstatus {
	uint64_t active;	/* client connections open, waiting ones included */
	uint64_t accepts;	/* client connections accepted */
	uint64_t handled;	/* of those, handled (less than accepts: a limit was hit) */
	uint64_t requests;	/* client requests */
	uint64_t reading;	/* connections whose request header nginx is reading */
	uint64_t writing;	/* connections nginx is answering */
	uint64_t waiting;	/* idle kept-alive connections */
};

/*
 * Reads the body of a stub_status answer, text[len] (need not be NUL-terminated):
 *
 *   Active connections: N \n
 *   server accepts handled requests\n
 *    N N N \n
 *   Reading: N Writing: N Waiting: N \n
 *
 * strictly: those words in that order, decimal numbers without sign that fit 64 bits,
 * blanks as nginx writes them (spaces, "\r\n" or "\n" line ends), nothing after the last
 * line.  Returns 0 with *out filled, or -1 (out untouched) for anything else.
 */
int stubstatus_parse(const char *text, size_t len, struct stubstatus *out);

/*
 * Reads a whole HTTP answer resp[len] (need not be NUL-terminated): a status line
 * "HTTP/1.x 200 ...", headers, an empty line, and the body as stubstatus_parse() wants
 * it.  0 with *out filled, or -1.
 */
int stubstatus_response(const char *resp, size_t len, struct stubstatus *out);

/*
 * Asks nginx's stub_status on 127.0.0.1:port (GET STUBSTATUS_PATH, HTTP/1.0) and reads
 * its answer, within STUBSTATUS_TIMEOUT_MS in all (a non-blocking socket and poll()).
 * 0 with *out filled, or -1 (refused, timed out, not a stub_status answer).
 */
int stubstatus_fetch(int port, struct stubstatus *out);

#endif /* SLUICE_STUBSTATUS_H */
