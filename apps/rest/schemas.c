/*
 * schemas.c: the schemas of rest_schemas, read once per worker process and shared by its
 * serving threads.
 *
 * The set is read from the catalogs by the first thread that needs it (at its first
 * request, or its first after a SIGHUP), through that thread's connection.  The threads
 * that need the same set meanwhile wait for it, each within its request's time budget,
 * rather than read the catalogs too; one whose budget runs out first reads its own.  A
 * thread holds a reference to the set it serves with; a reload publishes a new set, and
 * an old one is freed when the last thread lets go of it.  A published set is never
 * written, so its readers take no lock.
 *
 * Before, every serving thread read its own: a worker restarted under load read the
 * catalogs once per thread that served (up to threads= of them), on PostgreSQL on
 * backends whose catalog caches were cold, and kept as many copies.
 */
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "log.h"
#include "rest.h"

struct rest_schemas {
	int refs;		/* the threads holding it, and schemas_cur when it is that */
	unsigned hups;		/* the serve_reloads() count it was read for */
	int n;
	struct rest_schema *scs[REST_SCHEMAS_MAX];
};

static pthread_mutex_t schemas_mu = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t schemas_cv;
static pthread_once_t schemas_once = PTHREAD_ONCE_INIT;
static struct rest_schemas *schemas_cur;	/* the newest set published, or NULL */
static int schemas_loading;			/* a thread is reading a set ... */
static unsigned schemas_loading_hups;		/* ... for this count */

/* The condition variable waits on CLOCK_MONOTONIC, the clock of the request's budget. */
static void
schemas_init(void)
{
	pthread_condattr_t a;

	(void)pthread_condattr_init(&a);
	(void)pthread_condattr_setclock(&a, CLOCK_MONOTONIC);
	(void)pthread_cond_init(&schemas_cv, &a);
	(void)pthread_condattr_destroy(&a);
}

/* 1 when count a is b or later (the counts wrap). */
static int
schemas_newer(unsigned a, unsigned b)
{
	return (int)(a - b) >= 0;
}

static void
schemas_free(struct rest_schemas *s)
{
	int i;

	for (i = 0; i < s->n; i++)
		rest_schema_free(s->scs[i]);
	free(s);
}

/* Drops a reference; schemas_mu held. */
static void
schemas_unref(struct rest_schemas *s)
{
	if (--s->refs == 0)
		schemas_free(s);
}

/* Waits for the set being read, until deadline_ms (0: none).  schemas_mu held.  0, or
 * ETIMEDOUT. */
static int
schemas_wait(long long deadline_ms)
{
	struct timespec ts;

	if (deadline_ms <= 0)
		return pthread_cond_wait(&schemas_cv, &schemas_mu) == 0 ? 0 : ETIMEDOUT;
	ts.tv_sec = (time_t)(deadline_ms / 1000);
	ts.tv_nsec = (long)(deadline_ms % 1000) * 1000000L;
	return pthread_cond_timedwait(&schemas_cv, &schemas_mu, &ts) == ETIMEDOUT ?
	    ETIMEDOUT : 0;
}

/* Reads the schemas names[0..n) through db: a set with one reference, or NULL when the
 * database failed (its error is on db) or memory ran out. */
static struct rest_schemas *
schemas_read(struct db *db, const struct rest_dialect *d, char *const *names, int n,
    unsigned hups)
{
	struct rest_schemas *s;
	enum db_route route;
	int rels = 0, funcs = 0;

	if ((s = calloc(1, sizeof(*s))) == NULL)
		return NULL;
	s->refs = 1;
	s->hups = hups;
	/* The primary's catalogue, read as reads (never in a group of writes). */
	route = db_route(db, DB_ROUTE_PRIMARY);
	for (; s->n < n; s->n++) {
		if ((s->scs[s->n] = rest_schema_load(db, d, names[s->n])) == NULL) {
			(void)db_route(db, route);
			schemas_free(s);
			return NULL;
		}
		rels += s->scs[s->n]->ntables;
		funcs += s->scs[s->n]->nfuncs;
	}
	(void)db_route(db, route);
	log_info("rest: schema read (%d relations, %d functions in %d schemas)", rels, funcs,
	    s->n);
	return s;
}

struct rest_schemas *
rest_schemas_take(struct db *db, const struct rest_dialect *d, char *const *names, int n,
    unsigned hups)
{
	struct rest_schemas *s;
	long long deadline = db_deadline(db);
	int mine;

	(void)pthread_once(&schemas_once, schemas_init);
	pthread_mutex_lock(&schemas_mu);
	for (;;) {
		if (schemas_cur != NULL && schemas_newer(schemas_cur->hups, hups)) {
			s = schemas_cur;
			s->refs++;
			pthread_mutex_unlock(&schemas_mu);
			return s;
		}
		if (!schemas_loading || !schemas_newer(schemas_loading_hups, hups) ||
		    schemas_wait(deadline) == ETIMEDOUT)
			break;
	}
	/* Nobody reads the set wanted, or the wait ran out: read it. */
	mine = !schemas_loading;
	if (mine) {
		schemas_loading = 1;
		schemas_loading_hups = hups;
	}
	pthread_mutex_unlock(&schemas_mu);

	s = schemas_read(db, d, names, n, hups);

	pthread_mutex_lock(&schemas_mu);
	if (mine) {
		schemas_loading = 0;
		pthread_cond_broadcast(&schemas_cv);
	}
	if (s != NULL) {
		if (schemas_cur == NULL || !schemas_newer(schemas_cur->hups, hups)) {
			/* Published: the waiters take it. */
			if (schemas_cur != NULL)
				schemas_unref(schemas_cur);
			schemas_cur = s;
			s->refs++;
		} else {
			/* A newer one came meanwhile: serve with that. */
			schemas_unref(s);
			s = schemas_cur;
			s->refs++;
		}
	}
	pthread_mutex_unlock(&schemas_mu);
	return s;
}

struct rest_schema *
rest_schemas_get(const struct rest_schemas *s, int i)
{
	return i >= 0 && i < s->n ? s->scs[i] : NULL;
}

void
rest_schemas_drop(struct rest_schemas *s)
{
	if (s == NULL)
		return;
	pthread_mutex_lock(&schemas_mu);
	schemas_unref(s);
	pthread_mutex_unlock(&schemas_mu);
}
