/*
 * settings.h: the worker settings, one table.
 *
 * Every SLUICE_* environment variable that a worker reads (sluiced sets them from the
 * endpoint list: threads=, db=, set body_max, and any other KEY=VALUE of an endpoint as
 * SLUICE_KEY) is a row of settings_table: its name, its kind, its bounds or its choices,
 * its default and one line of documentation.  The common settings and the applications'
 * (the chat's session key, the page's template, the REST API's route) are rows of the same
 * table, read by the same parser, and docs/endpoints.conf.5 documents every row (a unit
 * test holds the two together).
 *
 * Reading is strict on purpose: a setting that is present but malformed stops the worker
 * at start-up with a logged reason instead of running with a guess.  An integer is
 * str_to_int()'s strict decimal within the row's bounds; a choice is one of the row's words
 * (any case).  An empty integer or choice counts as unset, so a blank line in a unit file
 * is harmless; a string is returned as it is.
 */
#ifndef SLUICE_SETTINGS_H
#define SLUICE_SETTINGS_H

enum setting_kind {
	SETTING_INT,		/* a decimal integer in [min, max] */
	SETTING_CHOICE,		/* one of choices[]; read as its index */
	SETTING_STR,		/* any text */
};

/* SLUICE_WATCHDOG_FD's page: one 64-bit slot per serving thread (the most a worker may
 * have), each the CLOCK_MONOTONIC millisecond its thread's request started, 0 when idle.
 * Written by the worker (serve.c), read by sluiced (supervisor/pool.c). */
#define SETTINGS_WATCH_SLOTS	256
/* The slot after them is sluiced's heartbeat: the CLOCK_MONOTONIC millisecond of its last
 * look at the worker, written by sluiced at least every second.  A worker that sees it
 * older than SLUICE_ORPHAN_GRACE_MS has lost its supervisor, which did not come back to
 * adopt it, and leaves as on SIGTERM (serve.c, supervisor/adopt.c). */
#define SETTINGS_WATCH_BEAT	SETTINGS_WATCH_SLOTS
#define SETTINGS_WATCH_SIZE	((SETTINGS_WATCH_SLOTS + 1) * sizeof(long long))

/* The rows, in the table's order. */
enum setting_key {
	SETTING_NAME,
	SETTING_ROUTE,
	SETTING_THREADS,
	SETTING_BODY_MAX,
	SETTING_ARENA_MAX,
	SETTING_RESP_MAX,
	SETTING_LOG_LEVEL,
	SETTING_SECCOMP,
	SETTING_DB,
	SETTING_DB_READ,
	SETTING_DB_ISOLATION,
	SETTING_DB_PLANS,
	SETTING_DB_STMT_CACHE,
	SETTING_DB_CONNS,
	SETTING_STMT_TIMEOUT_MS,
	SETTING_DB_WAIT_MS,
	SETTING_WATCHDOG_FD,
	SETTING_METRICS_FD,
	SETTING_ORPHAN_GRACE_MS,
	SETTING_CPUS,
	SETTING_SQLITE_SYNC,
	SETTING_SQLITE_BUSY_MS,
	SETTING_SQLITE_MMAP,
	SETTING_SQLITE_CHUNK,
	SETTING_SQLITE_WRITE_MS,
	SETTING_SESSION_KEY,		/* the chat (apps/chat/) */
	SETTING_SESSION_KEY_FILE,
	SETTING_BENCH_SESSIONS,
	SETTING_TEMPLATE,		/* the chat page (handlers/chat_page.c) */
	SETTING_CHAT_PAGE_CACHE,
	SETTING_CHAT_PAGE_CACHE_LISTS,
	SETTING_CHAT_PAGE_ORDER,
	SETTING_REST_UNFILTERED_WRITES,	/* the REST API (apps/rest/) */
	SETTING_REST_CORS_ORIGINS,
	SETTING_REST_JWT_SECRET,
	SETTING_REST_JWT_SECRET_FILE,
	SETTING_REST_JWT_AUD,
	SETTING_REST_JWT_ROLE_CLAIM,
	SETTING_REST_ANON_ROLE,
	SETTING_REST_GRANTS,
	SETTING_REST_PRE_REQUEST,
	SETTING_REST_SCHEMAS,
	SETTING_REST_DIALECT_VERSION,
	SETTING_REST_DB_ERRORS,
	SETTING_REST_CHANNEL,
	SETTING_IDEMPOTENCY_TTL,	/* Idempotency-Key (common/idem.c) */
	SETTING_READY_WRITABLE,		/* the readiness probe (handlers/ready.c) */
	SETTING_BCRYPT_COST,		/* the records API (handlers/records/) */
	SETTING_RECORDS_SECRET_FILE,
	SETTING_RECORDS_BATCH,
	SETTING_RECORDS_BATCH_MAX,
	SETTING_RECORDS_SENDMAIL,
	SETTING_RECORDS_APP_URL,
	SETTING_RECORDS_MAIL_FROM,
	SETTING_RECORDS_AUTH_LIMIT,
	SETTING_RECORDS_AUTH_LIMIT_IDENTITY,
	SETTING_RECORDS_AUTH_LIMIT_EXEMPT,
	SETTING_RECORDS_OTP,
	SETTING_RECORDS_OTP_DURATION,
	SETTING_RECORDS_OTP_LENGTH,
	SETTING_STREAM_CONNS,		/* a streaming endpoint's loop (common/evfcgi.h) */
	SETTING_STREAM_BUF,
	SETTING_STREAM_PARAMS_MAX,
	SETTING_REALTIME_CLIENTS,	/* the realtime endpoint (handlers/realtime.c) */
	SETTING_REALTIME_HEARTBEAT_MS,
	SETTING_REALTIME_SOCKET,	/* the records pool's events (handlers/records/publish.c) */
	SETTING__MAX
};

struct setting {
	const char *name;		/* the environment variable, "SLUICE_THREADS" */
	enum setting_kind kind;
	long long min, max;		/* SETTING_INT: the bounds */
	long long def;			/* SETTING_INT: the default; SETTING_CHOICE: its index */
	const char *const *choices;	/* SETTING_CHOICE: the words, NULL-terminated */
	const char *doc;		/* one line, for the man page and the logs */
};

/* The table, indexed by enum setting_key. */
extern const struct setting settings_table[SETTING__MAX];

/*
 * Reads an integer or choice setting: the value, or for a choice the index of its word in
 * choices[] (the row's default when unset or empty).  Returns 0 with *out set, or -1 with
 * a logged reason ("SLUICE_THREADS=0: want an integer in [1, 256]") and *out untouched.
 */
int settings_int(enum setting_key key, long long *out);

/* A string setting's value, or NULL when unset.  Borrowed from the environment. */
const char *settings_get(enum setting_key key);

#endif /* SLUICE_SETTINGS_H */
