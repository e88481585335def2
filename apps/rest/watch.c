/*
 * watch.c: the schema read again when the database says it changed, without a restart.
 *
 * PostgreSQL: a worker LISTENs on rest_channel ("pgrst" unless set; "off": not at all),
 * PostgREST's channel, over a connection of its own (db_listen_start()).  A notification
 * whose payload is "reload schema" or empty, as PostgREST reads them, counts a reload
 * (serve_reload_soon()): each thread reads the schema again at its next request, one
 * thread for all of them (schemas.c), the others waiting for it within their budgets; no
 * request is dropped.  "reload config" is left alone (a worker's configuration is its
 * endpoint line: `sluiced ctl reload`).  A lost connection, made again, counts one
 * reload too: a notification may have been missed meanwhile.  Every worker of every host
 * listens (on the primary the URL picks), so one NOTIFY reaches them all.
 *
 * SQLite: the file's schema version (PRAGMA schema_version, which every DDL statement
 * moves) is looked at by the first request of each second in a worker; when it moved
 * since the last look, a reload is counted as above.  So a table made by another process
 * is served within about a second, from the request after the one that saw it.
 *
 * `sluiced ctl reload` (SIGHUP) counts a reload the same way on both back ends.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <string.h>

#include "clock.h"
#include "log.h"
#include "rest.h"
#include "serve.h"
#include "settings.h"

static pthread_once_t watch_once = PTHREAD_ONCE_INIT;
static atomic_llong watch_next;			/* SQLite: the next look, clock_now_ms() */
static atomic_llong watch_version = -1;		/* SQLite: the version seen last */

static atomic_llong watch_logged;		/* the last notice's line, clock_now_ms() */

static void
watch_notified(void *arg, const char *payload)
{
	long long now = clock_now_ms();

	(void)arg;
	if (payload != NULL && *payload != '\0' && strcmp(payload, "reload schema") != 0)
		return;
	/* A line a second at most: a flood of NOTIFYs is one reload per thread anyway. */
	if (now - atomic_load(&watch_logged) >= 1000) {
		atomic_store(&watch_logged, now);
		log_info("rest: the schema changed (%s): reading it again",
		    payload == NULL ? "listening again" : "notified");
	}
	serve_reload_soon();
}

static void
watch_start(void)
{
	const char *channel = settings_get(SETTING_REST_CHANNEL);
	const char *url = settings_get(SETTING_DB);

	if (channel == NULL)
		channel = "pgrst";
	if (*channel != '\0' && strcmp(channel, "off") != 0 && url != NULL && *url != '\0')
		(void)db_listen_start(url, channel, watch_notified, NULL);
}

/* SQLite: counts a reload when the file's schema version moved since the last look. */
static void
watch_sqlite(struct db *db)
{
	long long now = clock_now_ms(), next = atomic_load(&watch_next), v, was;
	struct db_stmt *st;

	if (now < next || !atomic_compare_exchange_strong(&watch_next, &next, now + 1000))
		return;
	if ((st = db_prepare(db, "PRAGMA schema_version")) == NULL)
		return;
	if (db_step(st) != DB_ROW) {
		db_reset(st);
		return;
	}
	v = db_column_int(st, 0);
	db_reset(st);
	was = atomic_exchange(&watch_version, v);
	if (was >= 0 && was != v) {
		log_info("rest: the schema changed (version %lld): reading it again", v);
		serve_reload_soon();
	}
}

void
rest_watch(struct db *db)
{
	if (db_backend(db) == DB_PG)
		(void)pthread_once(&watch_once, watch_start);
	else
		watch_sqlite(db);
}

void
rest_watch_stop(void)
{
	db_listen_stop();
}
