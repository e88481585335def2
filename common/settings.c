/*
 * settings.c: the worker settings table and its one parser (see settings.h).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "log.h"
#include "settings.h"
#include "str.h"

static const char *const settings_levels[] = { "error", "warn", "info", "debug", NULL };
static const char *const settings_isolations[] = { "default", "read_committed",
    "repeatable_read", "serializable", NULL };
static const char *const settings_plans[] = { "auto", "generic", "custom", NULL };
static const char *const settings_syncs[] = { "off", "normal", "full", NULL };
static const char *const settings_page_orders[] = { "newest", "oldest", NULL };
static const char *const settings_db_errors[] = { "pass", "hide", NULL };
static const char *const settings_off_on[] = { "off", "on", NULL };

#define INT(n, lo, hi, d, doc)	{ n, SETTING_INT, lo, hi, d, NULL, doc }
#define CHOICE(n, c, d, doc)	{ n, SETTING_CHOICE, 0, 0, d, c, doc }
#define STR(n, doc)		{ n, SETTING_STR, 0, 0, 0, NULL, doc }

const struct setting settings_table[SETTING__MAX] = {
	[SETTING_NAME] = STR("SLUICE_NAME",
	    "the endpoint's name in log lines; sluiced sets it (default: the binary's)"),
	[SETTING_ROUTE] = STR("SLUICE_ROUTE",
	    "the endpoint's route, from the endpoint list; sluiced sets it"),
	[SETTING_THREADS] = INT("SLUICE_THREADS", 1, 256, 1,
	    "serving threads per worker process (threads=)"),
	[SETTING_BODY_MAX] = INT("SLUICE_BODY_MAX", 1, 1LL << 32, 1024 * 1024,
	    "request body cap in bytes, 413 past it (set body_max)"),
	[SETTING_ARENA_MAX] = INT("SLUICE_ARENA_MAX", 1, 1LL << 34, 64LL * 1024 * 1024,
	    "per-request memory cap in bytes, raised to hold one full body and 1 MiB"),
	[SETTING_RESP_MAX] = INT("SLUICE_RESP_MAX", 1, 1LL << 34, 64LL * 1024 * 1024,
	    "response body cap in bytes"),
	[SETTING_LOG_LEVEL] = CHOICE("SLUICE_LOG_LEVEL", settings_levels, 2,
	    "log threshold: error, warn, info or debug (an unknown word: info)"),
	[SETTING_SECCOMP] = INT("SLUICE_SECCOMP", 0, 1, 1,
	    "1: the system call filter confines the worker after start-up; 0: off, to debug"),
	[SETTING_DB] = STR("SLUICE_DB",
	    "the database URL, sqlite:PATH or a PostgreSQL URL or conninfo (db=)"),
	[SETTING_DB_READ] = STR("SLUICE_DB_READ",
	    "PostgreSQL: the URL of the read-only work a handler routes to it (the REST API's "
	    "GET and HEAD), e.g. with target_session_attrs=prefer-standby; unset: db="),
	[SETTING_DB_ISOLATION] = CHOICE("SLUICE_DB_ISOLATION", settings_isolations, 0,
	    "isolation of every transaction: default, read_committed, repeatable_read or "
	    "serializable"),
	[SETTING_DB_PLANS] = CHOICE("SLUICE_DB_PLANS", settings_plans, 0,
	    "PostgreSQL: how a prepared statement is planned (plan_cache_mode): auto (the "
	    "server's choice), generic (once per connection) or custom (every execution)"),
	[SETTING_DB_STMT_CACHE] = INT("SLUICE_DB_STMT_CACHE", 1, 100000, 64,
	    "prepared statements kept per database connection"),
	[SETTING_DB_CONNS] = INT("SLUICE_DB_CONNS", 0, 256, 0,
	    "PostgreSQL connections a worker's threads share; 0: the threads, at most the "
	    "CPUs and at least 2"),
	[SETTING_STMT_TIMEOUT_MS] = INT("SLUICE_STMT_TIMEOUT_MS", 0, 3600000, 5000,
	    "a request's time budget for its statements in milliseconds, 503 past it; "
	    "0: none"),
	[SETTING_DB_WAIT_MS] = INT("SLUICE_DB_WAIT_MS", 0, 3600000, 0,
	    "PostgreSQL: how long a statement waits for one of the worker's connections when "
	    "every one is busy, in milliseconds, then 503 busy; 0: the request's budget"),
	[SETTING_WATCHDOG_FD] = INT("SLUICE_WATCHDOG_FD", -1, 1024, -1,
	    "the watchdog's shared page, where each thread says since when it serves a "
	    "request; sluiced sets it (-1: none)"),
	[SETTING_METRICS_FD] = INT("SLUICE_METRICS_FD", -1, 1024, -1,
	    "the counters' shared page, where the worker counts its requests, their "
	    "latencies and its connections (common/metrics.h); sluiced sets it (-1: none)"),
	[SETTING_ORPHAN_GRACE_MS] = INT("SLUICE_ORPHAN_GRACE_MS", 2000, 3600000, 30000,
	    "how long a worker whose supervisor is gone (no heartbeat on its watchdog page) "
	    "keeps serving for a new sluiced to adopt it, in milliseconds; then it leaves"),
	[SETTING_CPUS] = INT("SLUICE_CPUS", 0, 1024, 0,
	    "the CPUs the pool may use as sluiced counts them (set cpus, affinity mask, cgroup "
	    "quota); sluiced sets it (0: the worker's affinity mask)"),
	[SETTING_SQLITE_SYNC] = CHOICE("SLUICE_SQLITE_SYNC", settings_syncs, 2,
	    "SQLite's PRAGMA synchronous: off, normal or full"),
	[SETTING_SQLITE_BUSY_MS] = INT("SLUICE_SQLITE_BUSY_MS", 1, 3600000, 10000,
	    "SQLite's busy timeout in milliseconds"),
	[SETTING_SQLITE_MMAP] = INT("SLUICE_SQLITE_MMAP", -1, 1LL << 40, 256LL * 1024 * 1024,
	    "SQLite's mmap_size in bytes; 0 or -1: no memory map"),
	[SETTING_SQLITE_CHUNK] = INT("SLUICE_SQLITE_CHUNK", 0, 1LL << 30, 0,
	    "SQLite: the database file grows (and shrinks) in steps of this many bytes "
	    "(SQLITE_FCNTL_CHUNK_SIZE), so that its size, and a memory map, changes "
	    "seldom; 0: page by page"),
	[SETTING_SQLITE_WRITE_MS] = INT("SLUICE_SQLITE_WRITE_MS", 0, 3600000, 250,
	    "SQLite: how long one write may run while it holds the writers' lock, in "
	    "milliseconds, then it is undone alone (503); 0: the request's budget alone"),
	[SETTING_SESSION_KEY] = STR("SLUICE_SESSION_KEY",
	    "the chat's session signing key, 32 to 128 hex digits (default: the key file)"),
	[SETTING_SESSION_KEY_FILE] = STR("SLUICE_SESSION_KEY_FILE",
	    "the chat's key file, made on first use (default: chat-session.key next to the "
	    "SQLite database, else data/chat-session.key)"),
	[SETTING_BENCH_SESSIONS] = INT("SLUICE_BENCH_SESSIONS", 0, 99999999, 0,
	    "benchmark mode: N > 0 makes every chat request act as a random seeded user "
	    "s_00000001..N"),
	[SETTING_TEMPLATE] = STR("SLUICE_TEMPLATE",
	    "the chat page's template file (default: handlers/chat_page.html in the tree)"),
	[SETTING_CHAT_PAGE_CACHE] = INT("SLUICE_CHAT_PAGE_CACHE", 0, 1, 0,
	    "the chat page: 1 serves each channel's rendered message list (and its gzip) from "
	    "a per-process cache that every write to the channel invalidates; 0: off"),
	[SETTING_CHAT_PAGE_CACHE_LISTS] = INT("SLUICE_CHAT_PAGE_CACHE_LISTS", 1, 65536, 64,
	    "the chat page's cache: the channels' lists a process keeps at most (slots by "
	    "channel id), about 200 KB each; set it to the channels being read"),
	[SETTING_CHAT_PAGE_ORDER] = CHOICE("SLUICE_CHAT_PAGE_ORDER", settings_page_orders, 0,
	    "the chat page's 500 messages: newest (the channel's last 500) or oldest (its "
	    "first 500, as the Starcord benchmark's page query)"),
	[SETTING_REST_UNFILTERED_WRITES] = INT("SLUICE_REST_UNFILTERED_WRITES", 0, 1, 0,
	    "the REST API: 1 lets a PATCH or DELETE without a filter change every row; 0: 400"),
	[SETTING_REST_CORS_ORIGINS] = STR("SLUICE_REST_CORS_ORIGINS",
	    "the REST API: the origins (comma-separated, as browsers send them) that CORS "
	    "allows; unset: no Access-Control-* headers"),
	[SETTING_REST_JWT_SECRET] = STR("SLUICE_REST_JWT_SECRET",
	    "the REST API: the HS256 secret of its JWTs, 32 bytes or more (prefer "
	    "rest_jwt_secret_file); any of these six rows turns access control on"),
	[SETTING_REST_JWT_SECRET_FILE] = STR("SLUICE_REST_JWT_SECRET_FILE",
	    "the REST API: a file holding the JWT secret, or a PEM public key (RSA: RS256, "
	    "EC: ES256)"),
	[SETTING_REST_JWT_AUD] = STR("SLUICE_REST_JWT_AUD",
	    "the REST API: the audience a token's aud claim must hold when it has one"),
	[SETTING_REST_JWT_ROLE_CLAIM] = STR("SLUICE_REST_JWT_ROLE_CLAIM",
	    "the REST API: the path of the role in a token's claims (default .role)"),
	[SETTING_REST_ANON_ROLE] = STR("SLUICE_REST_ANON_ROLE",
	    "the REST API: the role of requests without a token; unset: 401 PGRST302"),
	[SETTING_REST_GRANTS] = STR("SLUICE_REST_GRANTS",
	    "the REST API on SQLite: what each role may do, ROLE:PRIV[,PRIV][@TABLE[,TABLE]] "
	    "entries separated by |, PRIV select, insert, update, delete, execute or all"),
	[SETTING_REST_PRE_REQUEST] = STR("SLUICE_REST_PRE_REQUEST",
	    "the REST API on PostgreSQL: a function (fn or schema.fn) called in every "
	    "request's transaction before its statement, after the request's settings; "
	    "what it raises is the answer"),
	[SETTING_REST_SCHEMAS] = STR("SLUICE_REST_SCHEMAS",
	    "the REST API: the PostgreSQL schemas served (comma-separated, the first the "
	    "default), picked by Accept-Profile and Content-Profile; unset: public"),
	[SETTING_REST_DIALECT_VERSION] = INT("SLUICE_REST_DIALECT_VERSION", 12, 13, 13,
	    "the REST API: the PostgREST version whose answers differ, 12 or 13 (to-many "
	    "spreads, the missing table's error)"),
	[SETTING_REST_DB_ERRORS] = CHOICE("SLUICE_REST_DB_ERRORS", settings_db_errors, 0,
	    "the REST API: pass answers an integrity or input error with the database's own "
	    "code, message, details and hint, as PostgREST; hide with the SQLSTATE class's "
	    "code and a message of sluice's"),
	[SETTING_REST_CHANNEL] = STR("SLUICE_REST_CHANNEL",
	    "the REST API on PostgreSQL: the channel whose notifications (NOTIFY pgrst, "
	    "'reload schema' or nothing) make every worker read the schema again; unset: "
	    "pgrst, as PostgREST's; off (or empty): none"),
	[SETTING_IDEMPOTENCY_TTL] = INT("SLUICE_IDEMPOTENCY_TTL", 1, 31536000, 86400,
	    "the seconds a write's answer is kept for a retry with its Idempotency-Key "
	    "(the table API); expired keys are purged by later keyed writes"),
	[SETTING_READY_WRITABLE] = INT("SLUICE_READY_WRITABLE", 0, 1, 1,
	    "ready: 1 when the database must be writable for /ready to answer 200; 0 for a "
	    "database served read-only on purpose"),
	[SETTING_BCRYPT_COST] = INT("SLUICE_BCRYPT_COST", 4, 31, 10,
	    "the records API's bcrypt cost for new password hashes"),
	[SETTING_RECORDS_SECRET_FILE] = STR("SLUICE_RECORDS_SECRET_FILE",
	    "the records API's token secret file, made on first use (default: "
	    "records-secret.key next to the SQLite database, else data/records-secret.key)"),
	[SETTING_RECORDS_BATCH] = CHOICE("SLUICE_RECORDS_BATCH", settings_off_on, 1,
	    "the records API: on serves POST /api/batch, off answers it 403"),
	[SETTING_RECORDS_BATCH_MAX] = INT("SLUICE_RECORDS_BATCH_MAX", 1, 1000, 50,
	    "the records API: the most requests one batch may hold (more: 400)"),
	[SETTING_RECORDS_SENDMAIL] = STR("SLUICE_RECORDS_SENDMAIL",
	    "the records API: the sendmail-compatible command the account flows' mail goes to "
	    "(its words separated by commas or blanks, an absolute path first, the message on "
	    "its standard input); unset: no mail is sent, and the request routes log it"),
	[SETTING_RECORDS_APP_URL] = STR("SLUICE_RECORDS_APP_URL",
	    "the records API: the address the mail's links start with (default "
	    "http://127.0.0.1:8080)"),
	[SETTING_RECORDS_MAIL_FROM] = STR("SLUICE_RECORDS_MAIL_FROM",
	    "the records API: the mail's sender address (default noreply@example.com)"),
	[SETTING_RECORDS_AUTH_LIMIT] = INT("SLUICE_RECORDS_AUTH_LIMIT", 0, 1000000, 60,
	    "the records API: the sign-ins and account requests (auth-with-password, "
	    "request-*, confirm-*) a client address may make a minute, a worker's count; past "
	    "them 429; 0: no limit"),
	[SETTING_RECORDS_AUTH_LIMIT_IDENTITY] = INT("SLUICE_RECORDS_AUTH_LIMIT_IDENTITY", 0,
	    1000000, 20, "the records API: the sign-ins and account requests naming one "
	    "identity (an email, a signed-in record) a minute, from any address, a worker's "
	    "count; past them 429; 0: no limit"),
	[SETTING_RECORDS_AUTH_LIMIT_EXEMPT] = STR("SLUICE_RECORDS_AUTH_LIMIT_EXEMPT",
	    "the records API: the client addresses the sign-in limits leave alone, "
	    "comma-separated, loopback for 127.0.0.0/8 and ::1, none for no address (default "
	    "loopback)"),
	[SETTING_RECORDS_OTP] = STR("SLUICE_RECORDS_OTP",
	    "the records API: the auth collections (names or ids, comma-separated) whose "
	    "records may sign in with a one-time password mailed to them (request-otp, "
	    "auth-with-otp); unset: none"),
	[SETTING_RECORDS_OTP_DURATION] = INT("SLUICE_RECORDS_OTP_DURATION", 1, 86400, 180,
	    "the records API: how long a one-time password stays valid, in seconds"),
	[SETTING_RECORDS_OTP_LENGTH] = INT("SLUICE_RECORDS_OTP_LENGTH", 4, 16, 8,
	    "the records API: the digits of a one-time password"),
	[SETTING_STREAM_CONNS] = INT("SLUICE_STREAM_CONNS", 1, 1000000, 10000,
	    "a streaming endpoint (common/evfcgi.h): the FastCGI connections a worker holds "
	    "at once; past it a new one is closed at once"),
	[SETTING_STREAM_BUF] = INT("SLUICE_STREAM_BUF", 1024, 64LL * 1024 * 1024, 256 * 1024,
	    "a streaming endpoint: the bytes waiting to be written on one connection; a "
	    "connection whose reader falls further behind is dropped"),
	[SETTING_STREAM_PARAMS_MAX] = INT("SLUICE_STREAM_PARAMS_MAX", 1024, 16 * 1024 * 1024,
	    64 * 1024,
	    "a streaming endpoint: a request's FastCGI parameters in bytes (headers, query "
	    "string); past it the connection is closed"),
	[SETTING_REALTIME_CLIENTS] = INT("SLUICE_REALTIME_CLIENTS", 1, 1000000, 10000,
	    "the realtime endpoint: the clients connected at once; past it 503"),
	[SETTING_REALTIME_HEARTBEAT_MS] = INT("SLUICE_REALTIME_HEARTBEAT_MS", 10, 30000, 15000,
	    "the realtime endpoint: the milliseconds between two heartbeats of a client's "
	    "stream, below the proxy's read timeout (60 s)"),
	[SETTING_REALTIME_SOCKET] = STR("SLUICE_REALTIME_SOCKET",
	    "the records API: the unix datagram socket each committed create, update and "
	    "delete is announced on, without waiting (default: none)"),
};

/* The one parser: value (not NULL, not empty) as the row says.  0 or -1, logged. */
static int
settings_parse(const struct setting *s, const char *v, long long *out)
{
	char words[256];
	size_t i, len = 0;
	int64_t n;
	int m;

	if (s->kind == SETTING_CHOICE) {
		for (i = 0; s->choices[i] != NULL; i++) {
			if (strcasecmp(v, s->choices[i]) == 0) {
				*out = (long long)i;
				return 0;
			}
			/* Cut short when the words do not fit: only a log line. */
			m = snprintf(words + len, sizeof(words) - len, "%s%s", i ? ", " : "",
			    s->choices[i]);
			if (m > 0 && (size_t)m < sizeof(words) - len)
				len += (size_t)m;
		}
		words[len] = '\0';
		log_err("%s=%s: want one of %s", s->name, v, words);
		return -1;
	}
	if (str_to_int(v, strlen(v), s->min, s->max, &n) == 0) {
		*out = n;
		return 0;
	}
	log_err("%s=%s: want an integer in [%lld, %lld]", s->name, v, s->min, s->max);
	return -1;
}

int
settings_int(enum setting_key key, long long *out)
{
	const struct setting *s = &settings_table[key];
	const char *v = getenv(s->name);

	if (s->kind == SETTING_STR) {
		log_err("%s is not a number", s->name);
		return -1;
	}
	if (v == NULL || *v == '\0') {
		*out = s->def;
		return 0;
	}
	return settings_parse(s, v, out);
}

const char *
settings_get(enum setting_key key)
{
	return getenv(settings_table[key].name);
}
