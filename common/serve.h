/*
 * serve.h: the serve loop every endpoint binary runs.
 *
 * A handler file holds its validation, its SQL and one handle() function, and its main()
 * is one line:
 *
 *   int main(int argc, char **argv) { return serve_main(argc, argv, &endpoint); }
 *
 * serve_main() does all the plumbing: it finds the listening socket (fd 0 from sluiced,
 * "-s PATH" when run alone, or plain CGI when started by a CGI server), installs the
 * signal handling that lets a worker leave only between requests, starts SLUICE_THREADS
 * serving threads (each with its own fcgi2 request, arena, response buffers and database
 * connection; no connection is bound to a thread: serve.c), and for every request parses
 * the parameters, enforces the allowed methods and the body cap, calls the handler, and
 * writes the response.  Each request has an id (reqid.h: the web server's REQUEST_ID or
 * UNIQUE_ID, the client's X-Request-Id, else one the worker makes), which the thread's
 * log lines, the X-Request-Id response header and sluice's error bodies carry.
 *
 * Worker settings, from the environment (sluiced sets them from the endpoint list): the
 * rows of the table in settings.h; the loop reads SLUICE_NAME, SLUICE_LOG_LEVEL,
 * SLUICE_THREADS, SLUICE_CPUS, SLUICE_DB, SLUICE_BODY_MAX, SLUICE_ARENA_MAX and
 * SLUICE_RESP_MAX.
 *
 * The files of the serve loop (internals shared between them in extern.h):
 *   serve.c       the worker: its threads, its connections, its signals, its start and end
 *   serve_req.c   one request: parameters, method, body, database connection, handler,
 *                 response
 *   serve_gate.c  how many of the threads wait for a request at once (serve_gate.h)
 *   serve_db.c    the database side (serve_db), linked only by endpoints that name it
 */
#ifndef SLUICE_SERVE_H
#define SLUICE_SERVE_H

#include "req.h"
#include "resp.h"

struct db;
struct serve_db_ops;

/* Opens SLUICE_DB per thread (defined in serve_db.c, so that endpoints without a
 * database do not link the database libraries). */
extern const struct serve_db_ops serve_db;

struct endpoint {
	const char *name;		/* for logs; SLUICE_NAME overrides */
	/*
	 * Answers one request by filling rs.  Returns 0, or -1 on a failure it did not turn
	 * into a response itself (the serve loop then answers 500).  rq and everything it
	 * points to are borrowed until the handler returns.
	 */
	int (*handle)(struct req *rq, struct resp *rs);
	unsigned methods;		/* enum req_method bits; 0 means GET|HEAD; GET implies HEAD */
	const struct serve_db_ops *db;	/* &serve_db to get rq->db, or NULL */
	/*
	 * 1 for an endpoint that speaks another API's dialect (PostgREST's, PocketBase's),
	 * whose clients know its error bodies to the byte: resp_error() then leaves the
	 * request id out of the body (resp.h); the X-Request-Id header still carries it.
	 */
	int dialect_errors;
	/*
	 * Per-thread state, for an endpoint that keeps something per serving thread (a
	 * schema read from its connection, a reusable buffer); all three may be NULL.
	 *
	 * thread_init(db) runs in the serving thread before the first request that reaches
	 * handle(), once the thread's connection is open (db is the thread's connection, as
	 * rq->db; NULL for an endpoint without a database).  It returns the state, which
	 * every request of that thread then finds as rq->thread, or NULL on failure: that
	 * request is answered with db's last error (503 when the database is down) or with
	 * 500 without a database, and the next request calls thread_init again.
	 *
	 * thread_reload(state, db) runs before the next request after the worker received
	 * a SIGHUP (kill -HUP of the workers, "sluiced ctl reload NAME"), to read again what
	 * the state caches from the database.  Returns 0, or -1 when the database failed:
	 * the request is answered with db's error and the next request calls it again.
	 *
	 * thread_fini(state) frees the state once its thread has ended, before the thread's
	 * connection is closed.
	 *
	 * Only the serving thread touches its state: no locking is needed.
	 */
	void *(*thread_init)(struct db *db);
	int (*thread_reload)(void *state, struct db *db);
	void (*thread_fini)(void *state);
};

/*
 * Runs the endpoint until SIGTERM, SIGINT or SIGUSR1 (then finishes the requests in
 * progress and returns 0), or serves one request in CGI mode.  Start-up failures (bad
 * settings, no socket, database unreachable) are reported on stderr and return 1.
 */
int serve_main(int argc, char **argv, const struct endpoint *ep);

/* How many SIGHUPs the worker has received: serve_request() calls the endpoint's
 * thread_reload() when the count moved since the thread's state was made.  State shared
 * by a worker's threads tells by it whether it is as new as a thread's reload asks. */
unsigned serve_reloads(void);
/* Counts one more reload, as a SIGHUP does: each thread reloads at its next request (a
 * database's own notice that what a worker read from it changed).  Any thread. */
void serve_reload_soon(void);

/*
 * Turns the last failure on db into an error response (409, 400, 503, 507 or 500 with the
 * JSON body) and logs the database's message, which never reaches the client (at error
 * level for a 5xx, but for 42501, a refused privilege, logged at info).  The exception is
 * what the schema's own code raised for the client (db_raised()): 400 with code P0001 and
 * its message, detail and hint, as PostgREST answers it.  Returns 0.
 */
int serve_db_error(struct resp *rs, struct db *db);

/*
 * The same, and with words 1 an integrity or input error (the request's: 409 or 400) is
 * answered in the database's own words (db_words()): its SQLSTATE as the code, its
 * message, detail and hint, as PostgREST answers them; the database's text still goes to
 * the log.  A class-54 failure (54000: the response cap sluice sets in the statement, or
 * a value past a limit) and one the database said nothing usable about keep sluice's own
 * answer.  words 0 is serve_db_error().  Returns 0.
 */
int serve_db_error_words(struct resp *rs, struct db *db, int words);

/* The same for an error class (an enum db_err from db.h) known without its connection,
 * e.g. a write that ran on another thread's connection.  Logs nothing.  Returns 0. */
int serve_db_error_class(struct resp *rs, int err_class);

/* The same with the failure's SQLSTATE (db_sqlstate()): an integrity or input error gets
 * it as its code ("23505") and a message of its own.  Logs nothing.  Returns 0. */
int serve_db_error_sqlstate(struct resp *rs, int err_class, const char *sqlstate);

#endif /* SLUICE_SERVE_H */
