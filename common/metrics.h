/*
 * metrics.h: the counters a worker keeps of what it serves, in a page it shares with
 * sluiced.
 *
 * sluiced makes one page per worker before it forks it (a memfd, the worker's fd 4,
 * SLUICE_METRICS_FD) and maps it too; the worker maps it at start-up and counts into it,
 * sluiced reads it whenever it is asked (`ctl status`, the Prometheus address) and, when
 * the worker dies, adds its counts to the pool's retired totals before it unmaps the page:
 * a worker killed with SIGKILL loses nothing it counted.  The page is
 *
 *   struct metrics_head   requests in flight now and the most at once (the only counters
 *                         the worker's threads share: one atomic add per request start
 *                         and end)
 *   struct metrics_counts one per serving thread, each on cache lines of its own: only
 *                         that thread writes it, so a count is a plain load and store
 *                         (relaxed atomics, no lock), and no two threads share a line
 *
 * Counted per request, once its response is written: its status class (1xx..5xx; 0 and
 * anything past 599 count as 5xx, as the loop answers them), its method, its duration in
 * a histogram of fixed buckets (metrics_bounds_us[], Prometheus' `le`: a request of
 * exactly 1 ms falls in the le=0.001 bucket; the counts are kept per bucket and made
 * cumulative on output) with their sum, whether it ran past half its time budget (slow)
 * and past all of it (timed out; a timed-out request is also slow).  Per FastCGI
 * connection: accepted and closed by the worker, so that requests / accepted is how many
 * requests each connection carried (nginx's keepalive reuse).  A connection still open when
 * its worker dies counts as closed in the retired totals.
 *
 *
 *   struct metrics_db     the database's events, counted where they happen by whichever
 *                         thread meets them (one relaxed atomic add each, on a line of
 *                         their own): group-commit batches and how many writes each
 *                         carried (SQLite's gcommit.c; the writes a PostgreSQL leader sends
 *                         together, db_pg_pool.c), SQLite busy retries (its busy handler
 *                         called and trying again), PostgreSQL reconnects (a lost
 *                         connection opened anew) and waits for a connection (a statement
 *                         or a transaction that found every connection taken); and two
 *                         gauges, the database connections open now (SQLite's, one per
 *                         serving thread that has used the database; PostgreSQL's, those
 *                         of the process's shared pools with a live session) and the
 *                         PostgreSQL connections busy now (running a batch, or held by a
 *                         transaction).  A dead worker's gauges count nothing: its
 *                         connections went with it.
 *
 * Nothing here makes a system call: the serve loop reads the clock (vDSO) it reads anyway.
 */
#ifndef SLUICE_METRICS_H
#define SLUICE_METRICS_H

#include <stddef.h>
#include <stdint.h>

/* The methods counted apart; anything else is METRICS_OTHER. */
enum metrics_method {
	METRICS_GET,
	METRICS_HEAD,
	METRICS_POST,
	METRICS_PUT,
	METRICS_PATCH,
	METRICS_DELETE,
	METRICS_OTHER,
	METRICS_METHOD__MAX
};

/* Status classes 1xx..5xx. */
#define METRICS_CLASSES		5
/* The histogram's finite bounds (metrics_bounds_us[]), and one more bucket past them. */
#define METRICS_BOUNDS		15
#define METRICS_BUCKETS		(METRICS_BOUNDS + 1)
#define METRICS_LINE		64
/* A batch's writes: bounds 1, 2, 4, ... 128 (GCOMMIT_BATCH_MAX), and one more past them. */
#define METRICS_BATCH_BOUNDS	8
#define METRICS_BATCH_BUCKETS	(METRICS_BATCH_BOUNDS + 1)

/* Upper bounds of the buckets in microseconds, 0.25 ms to 10 s. */
extern const uint64_t metrics_bounds_us[METRICS_BOUNDS];
/* "GET", "HEAD", ..., "other". */
extern const char *const metrics_method_names[METRICS_METHOD__MAX];

/* One thread's counts; also a sum of them (a worker's, a pool's). */
struct metrics_counts {
	uint64_t status[METRICS_CLASSES];
	uint64_t method[METRICS_METHOD__MAX];
	uint64_t bucket[METRICS_BUCKETS];	/* per bucket, not cumulative */
	uint64_t sum_us;			/* of every request's duration */
	uint64_t conns_accepted;
	uint64_t conns_closed;
	uint64_t slow;				/* past half the budget */
	uint64_t timed_out;			/* past the budget */
} __attribute__((aligned(METRICS_LINE)));

struct metrics_head {
	int64_t inflight;
	int64_t peak;
} __attribute__((aligned(METRICS_LINE)));

/* The database's events (any thread; atomic adds). */
struct metrics_db {
	uint64_t batches;			/* group commits */
	uint64_t batch_writes;			/* the writes they carried */
	uint64_t batch_size[METRICS_BATCH_BUCKETS];	/* batches by writes, le 1, 2, 4 .. */
	uint64_t busy_retries;			/* SQLite's busy handler tried again */
	uint64_t reconnects;			/* PostgreSQL connections opened anew */
	uint64_t conn_waits;			/* waits for a PostgreSQL connection */
	int64_t conns_open;			/* gauge: connections open now */
	int64_t pg_conns_busy;			/* gauge: PostgreSQL connections in use */
} __attribute__((aligned(METRICS_LINE)));

struct metrics_page {
	struct metrics_head head;
	struct metrics_db db;
	struct metrics_counts thread[];		/* SLUICE_THREADS of them */
};

/* A sum over pages, with the in-flight figures: the worker's or the pool's. */
struct metrics_sum {
	struct metrics_counts c;
	struct metrics_db db;
	int64_t inflight;	/* now */
	int64_t peak;		/* the most one worker served at once */
	int64_t threads;	/* the serving threads of the live workers' pages */
};

/* The size of the page of a worker of threads serving threads. */
size_t metrics_page_size(int threads);

/* The method bit of a request (enum req_method, req.h) as a counted method. */
enum metrics_method metrics_method_of(unsigned req_method);

/* A request starts on the page (any thread): in flight one more, the peak kept. */
void metrics_begin(struct metrics_page *pg);
/*
 * The request that metrics_begin() counted ended: counted into c (its thread's, written by
 * that thread only) with its status, method and duration; budget_us is the time budget
 * (0: none, nothing is slow).
 */
void metrics_end(struct metrics_page *pg, struct metrics_counts *c, int status,
    enum metrics_method method, uint64_t dur_us, uint64_t budget_us);
/* One more FastCGI connection accepted or closed by c's thread. */
void metrics_conn(struct metrics_counts *c, int accepted);

/*
 * The page the database's events of this process go to (serve.c, before any thread
 * starts; NULL: uncounted, each call below then costs a load and a branch).  Borrowed:
 * the page stays mapped while any thread may count.
 */
void metrics_db_attach(struct metrics_page *pg);
/* One group commit of writes writes (>= 1). */
void metrics_db_batch(unsigned writes);
/* SQLite's busy handler tries once more. */
void metrics_db_busy(void);
/* A lost PostgreSQL connection was opened anew. */
void metrics_db_reconnect(void);
/* A statement or a transaction waits for a PostgreSQL connection. */
void metrics_db_wait(void);
/* A database connection was opened (delta 1) or closed (-1). */
void metrics_db_open(int delta);
/* A PostgreSQL connection was taken for a batch or a transaction (1), or let go (-1). */
void metrics_db_busy_conn(int delta);

/*
 * Adds the threads counts of page pg to sum (a reader's relaxed loads: a count may be a
 * request behind, never torn).  dead: the worker is gone, so nothing of it is in flight
 * and every connection it accepted is closed (its FastCGI connections and its database
 * connections alike: the gauges of a dead worker's page are left out).
 */
void metrics_add_page(struct metrics_sum *sum, const struct metrics_page *pg, int threads,
    int dead);
/* Adds b to a (the pool's retired totals plus a live worker's). */
void metrics_add(struct metrics_sum *a, const struct metrics_sum *b);
/* The requests counted in s. */
uint64_t metrics_requests(const struct metrics_sum *s);
/*
 * The duration under which a fraction q (0 < q <= 1) of the requests of s finished, in
 * seconds, interpolated within its bucket as Prometheus' histogram_quantile() does (a
 * quantile past the last bound is that bound); 0 when nothing was counted.
 */
double metrics_quantile(const struct metrics_sum *s, double q);

#endif /* SLUICE_METRICS_H */
