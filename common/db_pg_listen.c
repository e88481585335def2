/*
 * db_pg_listen.c: a worker's one LISTEN on a PostgreSQL channel (db_listen_start()).
 *
 * A thread of its own holds a connection of its own (the pool's connections are shared
 * and pipelined; a LISTEN there would be lost on every reconnect and its notifications
 * read by whichever thread reads next).  It waits in poll() on the connection's socket,
 * a second at a time so that it sees the stop, and hands every notification's payload to
 * the callback, in its own thread.  Its application_name is "sluice listen", from its
 * first packet on, so that whoever counts the pool's ("sluice") in pg_stat_activity (an
 * operator, a test) can tell it apart.  A connection lost (the server restarted, a failover)
 * is made again a second later, and the callback then gets NULL: notifications sent
 * meanwhile were missed, so the caller treats it as one of each kind.  With several hosts
 * the URL's own choice applies (target_session_attrs=read-write: the primary; a standby
 * cannot LISTEN).
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "db_pg_pool.h"
#include "extern.h"
#include "log.h"
#include "pq.h"

static struct {
	pthread_t thread;
	int started;
	atomic_int stop;
	char *url, *channel;
	void (*fn)(void *arg, const char *payload);
	void *arg;
} listen_state;

/* Sleeps ms, a 100 ms at a time so that a stop is seen.  0, or -1 when stopping. */
static int
listen_pause(int ms)
{
	struct timespec ts = { 0, 100 * 1000 * 1000 };

	for (; ms > 0; ms -= 100) {
		if (atomic_load(&listen_state.stop))
			return -1;
		(void)nanosleep(&ts, NULL);
	}
	return atomic_load(&listen_state.stop) ? -1 : 0;
}

/* A connection that listens on the channel, or NULL (logged once per failure run). */
static PGconn *
listen_open(int *quiet)
{
	char msg[256], *ident, *sql;
	enum db_err code;
	PGconn *pq;
	PGresult *r;
	size_t len;

	if ((pq = pg_connect(listen_state.url, 0, "sluice listen", &code, msg, sizeof(msg))) == NULL) {
		if (!*quiet)
			log_warn("listen %s: %s", listen_state.channel, msg);
		*quiet = 1;
		return NULL;
	}
	if ((ident = PQescapeIdentifier(pq, listen_state.channel,
	    strlen(listen_state.channel))) == NULL) {
		PQfinish(pq);
		return NULL;
	}
	len = strlen(ident) + 8;
	if ((sql = malloc(len)) != NULL)
		(void)snprintf(sql, len, "LISTEN %s", ident);
	PQfreemem(ident);
	r = sql != NULL ? PQexec(pq, sql) : NULL;
	free(sql);
	if (r == NULL || PQresultStatus(r) != PGRES_COMMAND_OK) {
		if (!*quiet)
			log_warn("listen %s: %s", listen_state.channel, PQerrorMessage(pq));
		*quiet = 1;
		PQclear(r);
		PQfinish(pq);
		return NULL;
	}
	PQclear(r);
	*quiet = 0;
	return pq;
}

/* Waits for notifications on pq until it fails or the stop.  0 at the stop, else -1. */
static int
listen_wait(PGconn *pq)
{
	struct pollfd p = { PQsocket(pq), POLLIN, 0 };
	PGnotify *n;
	int rc;

	while (!atomic_load(&listen_state.stop)) {
		rc = poll(&p, 1, 1000);
		if (rc < 0 && errno != EINTR)
			return -1;
		if (rc <= 0)
			continue;
		if (PQconsumeInput(pq) == 0)
			return -1;
		while ((n = PQnotifies(pq)) != NULL) {
			listen_state.fn(listen_state.arg, n->extra != NULL ? n->extra : "");
			PQfreemem(n);
		}
	}
	return 0;
}

static void *
listen_main(void *unused)
{
	PGconn *pq;
	int quiet = 0, first = 1;

	(void)unused;
	while (!atomic_load(&listen_state.stop)) {
		if ((pq = listen_open(&quiet)) == NULL) {
			if (listen_pause(1000) < 0)
				break;
			continue;
		}
		/* What was sent while no connection listened is not known: all of it. */
		if (!first)
			listen_state.fn(listen_state.arg, NULL);
		first = 0;
		if (listen_wait(pq) < 0)
			log_warn("listen %s: the connection was lost; listening again",
			    listen_state.channel);
		PQfinish(pq);
		if (listen_pause(1000) < 0)
			break;
	}
	return NULL;
}

int
db_listen_start(const char *url, const char *channel,
    void (*fn)(void *arg, const char *payload), void *arg)
{
	char err[256];

	if (listen_state.started)
		return 0;
	if (pq_load(err, sizeof(err)) < 0) {
		log_err("listen %s: %s", channel, err);
		return -1;
	}
	if ((listen_state.url = strdup(url)) == NULL ||
	    (listen_state.channel = strdup(channel)) == NULL)
		goto fail;
	listen_state.fn = fn;
	listen_state.arg = arg;
	atomic_store(&listen_state.stop, 0);
	if (pthread_create(&listen_state.thread, NULL, listen_main, NULL) != 0)
		goto fail;
	listen_state.started = 1;
	return 0;
fail:
	log_err("listen %s: cannot start its thread", channel);
	free(listen_state.url);
	free(listen_state.channel);
	listen_state.url = listen_state.channel = NULL;
	return -1;
}

void
db_listen_stop(void)
{
	if (!listen_state.started)
		return;
	atomic_store(&listen_state.stop, 1);
	(void)pthread_join(listen_state.thread, NULL);
	listen_state.started = 0;
	free(listen_state.url);
	free(listen_state.channel);
	listen_state.url = listen_state.channel = NULL;
}
