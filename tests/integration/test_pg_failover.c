/*
 * test_pg_failover: a PostgreSQL primary and a streaming standby on this machine, and the
 * rest endpoint on libpq multi-host URLs naming both: writes on db= (target_session_attrs=
 * read-write), reads on db_read= (prefer-standby).  Two throwaway clusters on their own
 * sockets and ports (tests/lib/pgtmp.c), the standby made with pg_basebackup -R, then
 * synchronous replication on the primary (synchronous_standby_names '*',
 * synchronous_commit remote_apply).
 *
 *   - routing: GET /rpc/in_recovery (the read URL) answers true: the standby; POST (the
 *     write URL) answers false: the primary.
 *   - read your writes: under remote_apply a GET right after an acknowledged POST sees
 *     the row, although the GET is served by the standby.
 *   - a write that reaches a standby (an endpoint whose db= is the standby alone, no
 *     target_session_attrs): 503 JSON "read_only" with Retry-After (SQLSTATE 25006),
 *     never a 500, nothing stored.
 *   - failover: writers POST unique tags and readers GET while the primary's postmaster
 *     is killed with SIGKILL and, 300 ms later, the standby promoted (pg_ctl promote).
 *     Every POST answered 2xx has its row on the promoted server; every other answer is
 *     a 503 JSON error with Retry-After (no 500, no 502); no request runs past its budget
 *     (stmt_timeout_ms) by more than a second; no GET fails (the standby serves them
 *     throughout); writes resume within FO_RESUME_MS of the kill, without a configuration
 *     change.  The seconds to the first acknowledged write after the kill are printed.
 *   - a host that does not answer (a TCP port whose accept queue is full, so that its SYNs
 *     vanish, as with a machine that is off) listed before the primary: a request whose
 *     connection must be reopened waits about connect_timeout (2 s) for it, then is served
 *     by the primary; once the primary is gone too (after the failover), the request is
 *     answered 503 within its budget, never left hanging.
 *   - what asynchronous replication risks, shown with a second pair of clusters and no
 *     synchronous standby: with the primary's WAL sender stopped (SIGSTOP, as a slow
 *     network would), commits are acknowledged all the same; after the primary's crash
 *     and the standby's promotion they are gone.
 */
#include <sys/socket.h>

#include <arpa/inet.h>
#include <netinet/in.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "chatfix.h"
#include "db.h"
#include "http.h"
#include "pgtmp.h"
#include "stack.h"
#include "../lib/harness.h"

#define FO_WRITERS	6
#define FO_READERS	2
#define FO_BUDGET_MS	2000
#define FO_SLACK_MS	1000
#define FO_RESUME_MS	5000
#define FO_TIMEOUT_MS	15000
#define FO_MAX_POSTS	100000

static const char fo_schema[] =
    "CREATE TABLE fo_item (id bigserial PRIMARY KEY, tag bigint NOT NULL UNIQUE);\n"
    "CREATE FUNCTION in_recovery() RETURNS boolean LANGUAGE sql STABLE AS\n"
    "  $$ SELECT pg_is_in_recovery() $$;\n";

#define FO_BH_BUDGET_MS	3000

static struct pgtmp fo_prim, fo_stby;
static struct stack fo_s;
static int fo_up;
static int fo_bh_port;		/* the host that does not answer */

/* A 503 as a failover may cause: JSON, a code of the database's, Retry-After. */
static int
fo_clean_503(const struct http_resp *r)
{
	char ra[16];

	return r->status == 503 && http_header(r, "Retry-After", ra, sizeof(ra)) == 0 &&
	    (http_json_code(r, "unavailable") || http_json_code(r, "timeout") ||
	    http_json_code(r, "read_only") || http_json_code(r, "busy"));
}

static int
fo_post(const char *prefix, long long tag, struct http_resp *r)
{
	static const char *const hdrs[] = { "Content-Type: application/json",
	    "Prefer: return=minimal", NULL };
	char url[256], body[64];

	snprintf(url, sizeof(url), "%s/%s/v1/fo_item", fo_s.base, prefix);
	snprintf(body, sizeof(body), "{\"tag\":%lld}", tag);
	return http_do("POST", url, hdrs, body, strlen(body), FO_TIMEOUT_MS, r);
}

/* ---- routing and read-your-writes ---- */

static void
test_pg_failover_reads_on_standby_writes_on_primary(void)
{
	struct http_resp r;
	char url[256];

	if (!fo_up) {
		CHECK(!"stack up");
		return;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/rpc/in_recovery", fo_s.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, FO_TIMEOUT_MS, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.body.len == 4 && memcmp(r.body.data, "true", 4) == 0);
	CHECK_INT(http_do("POST", url, (const char *const[]){ "Content-Type: application/json",
	    NULL }, "{}", 2, FO_TIMEOUT_MS, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(r.body.len == 5 && memcmp(r.body.data, "false", 5) == 0);
	http_resp_free(&r);
}

static void
test_pg_failover_read_your_writes_remote_apply(void)
{
	struct http_resp r;
	char url[256];
	int i, seen = 0, acked = 0;

	if (!fo_up) {
		CHECK(!"stack up");
		return;
	}
	http_resp_init(&r);
	for (i = 0; i < 50; i++) {
		if (fo_post("rest", 900000000LL + i, &r) != 0 || r.status != 201)
			continue;
		acked++;
		snprintf(url, sizeof(url), "%s/rest/v1/fo_item?select=tag&tag=eq.%lld", fo_s.base,
		    900000000LL + i);
		if (http_do("GET", url, NULL, NULL, 0, FO_TIMEOUT_MS, &r) == 0 &&
		    r.status == 200 && chatfix_count(&r, "\"tag\"") == 1)
			seen++;
	}
	printf("  %d POSTs acknowledged, %d seen by the GET that followed (on the standby)\n",
	    acked, seen);
	CHECK_INT(acked, 50);
	CHECK_INT(seen, 50);
	http_resp_free(&r);
}

static void
test_pg_failover_write_on_standby_is_503(void)
{
	struct http_resp r;
	char ra[16];

	if (!fo_up) {
		CHECK(!"stack up");
		return;
	}
	http_resp_init(&r);
	CHECK_INT(fo_post("sb", 800000000LL, &r), 0);
	CHECK_INT(r.status, 503);
	CHECK(http_json_code(&r, "read_only"));
	CHECK_INT(http_header(&r, "Retry-After", ra, sizeof(ra)), 0);
	CHECK_INT(chatfix_int(fo_prim.url, "SELECT count(*) FROM fo_item WHERE tag = "
	    "800000000", NULL), 0);
	http_resp_free(&r);
}

/* ---- a host that does not answer ---- */

/* Opens a TCP port on 127.0.0.1 that never answers a connect: listen backlog 0 and its
 * queue filled by connections nobody accepts, so that the kernel drops further SYNs.  The
 * descriptors stay open for the test's life.  Returns the port, or -1. */
static int
fo_blackhole(void)
{
	struct sockaddr_in sa;
	socklen_t len = sizeof(sa);
	struct pollfd pfd;
	int l, c, i, n;

	memset(&sa, 0, sizeof(sa));
	sa.sin_family = AF_INET;
	sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if ((l = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
	    bind(l, (struct sockaddr *)&sa, sizeof(sa)) == -1 || listen(l, 0) == -1 ||
	    getsockname(l, (struct sockaddr *)&sa, &len) == -1)
		return -1;
	/* Fill the queue, then check that one more connect gets no answer. */
	for (i = 0; i < 3; i++) {
		if ((c = socket(AF_INET, SOCK_STREAM, 0)) == -1 ||
		    fcntl(c, F_SETFL, O_NONBLOCK) == -1)
			return -1;
		if (connect(c, (struct sockaddr *)&sa, sizeof(sa)) == -1 && errno != EINPROGRESS)
			return -1;
		pfd.fd = c;
		pfd.events = POLLOUT;
		n = poll(&pfd, 1, 500);
		if (i == 2) {
			close(c);
			return n == 0 ? ntohs(sa.sin_port) : -1;
		}
	}
	return -1;
}

/* The backends of the bh endpoint (application_name bh). */
static int64_t
fo_bh_terminate(void)
{
	return chatfix_int(fo_prim.url, "SELECT count(pg_terminate_backend(pid)) FROM "
	    "pg_stat_activity WHERE application_name = 'bh'", NULL);
}

static void
test_pg_failover_silent_host_skipped(void)
{
	struct http_resp r;
	char url[256];
	long long t0, ms;
	int i;

	if (!fo_up) {
		CHECK(!"stack up");
		return;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/bh/v1/fo_item?select=id&limit=1", fo_s.base);
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, FO_TIMEOUT_MS, &r), 0);
	CHECK_INT(r.status, 200);
	CHECK(fo_bh_terminate() >= 1);
	/* Gone once their sockets are closed. */
	for (i = 0; i < 100 && chatfix_int(fo_prim.url, "SELECT count(*) FROM "
	    "pg_stat_activity WHERE application_name = 'bh'", NULL) != 0; i++)
		usleep(20000);
	t0 = stack_now_ms();
	CHECK_INT(http_do("GET", url, NULL, NULL, 0, FO_TIMEOUT_MS, &r), 0);
	ms = stack_now_ms() - t0;
	printf("  reconnect past a host that does not answer: %d in %lld ms\n", (int)r.status,
	    ms);
	CHECK_INT(r.status, 200);
	CHECK(ms >= 1500 && ms <= FO_BH_BUDGET_MS + FO_SLACK_MS);
	http_resp_free(&r);
}

/* After the failover: the bh endpoint's hosts are one silent, one dead. */
static void
test_pg_failover_all_hosts_down_answers_within_budget(void)
{
	struct http_resp r;
	char url[256];
	long long t0, ms, slowest = 0;
	int i, clean = 0;

	if (!fo_up) {
		CHECK(!"stack up");
		return;
	}
	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/bh/v1/fo_item?select=id&limit=1", fo_s.base);
	for (i = 0; i < 3; i++) {
		t0 = stack_now_ms();
		if (http_do("GET", url, NULL, NULL, 0, FO_TIMEOUT_MS, &r) == 0 &&
		    fo_clean_503(&r))
			clean++;
		if ((ms = stack_now_ms() - t0) > slowest)
			slowest = ms;
	}
	printf("  every host down or silent: %d of 3 answered 503 JSON, slowest %lld ms "
	    "(budget %d ms)\n", clean, slowest, FO_BH_BUDGET_MS);
	CHECK_INT(clean, 3);
	CHECK(slowest <= FO_BH_BUDGET_MS + FO_SLACK_MS);
	http_resp_free(&r);
}

/* ---- failover ---- */

struct fo_post_rec {
	long long tag;
	long long t0, t1;	/* sent, answered (stack_now_ms()) */
	int status;
	int clean;		/* 2xx, or a clean 503 */
};

struct fo_writer {
	pthread_t tid;
	int id;
	struct fo_post_rec *posts;
	int n;
};

struct fo_reader {
	pthread_t tid;
	int ok, bad;
	long long slowest;
};

static atomic_int fo_stop;
static atomic_llong fo_kill_ms;		/* when the primary was killed; LLONG_MAX before */
static atomic_llong fo_resumed_ms;	/* a write sent after it was acknowledged; 0 before */

static void *
fo_writer_run(void *arg)
{
	struct fo_writer *w = arg;
	struct http_resp r;
	struct fo_post_rec *p;

	http_resp_init(&r);
	while (!atomic_load(&fo_stop) && w->n < FO_MAX_POSTS) {
		p = &w->posts[w->n++];
		p->tag = (long long)w->id * 1000000 + w->n;
		p->t0 = stack_now_ms();
		if (fo_post("rest", p->tag, &r) != 0)
			r.status = 0;
		p->t1 = stack_now_ms();
		p->status = (int)r.status;
		p->clean = (r.status >= 200 && r.status < 300) || fo_clean_503(&r);
		if (r.status == 201 && p->t0 > atomic_load(&fo_kill_ms))
			atomic_store(&fo_resumed_ms, p->t1);
		/* A client that backs off as Retry-After asks would wait longer; a short
		 * pause keeps the machine's two cores for the servers. */
		if (r.status != 201)
			usleep(20000);
	}
	http_resp_free(&r);
	return NULL;
}

static void *
fo_reader_run(void *arg)
{
	struct fo_reader *rd = arg;
	struct http_resp r;
	char url[256];
	long long t0, ms;

	http_resp_init(&r);
	snprintf(url, sizeof(url), "%s/rest/v1/fo_item?select=id&order=id.desc&limit=1",
	    fo_s.base);
	while (!atomic_load(&fo_stop)) {
		t0 = stack_now_ms();
		if (http_do("GET", url, NULL, NULL, 0, FO_TIMEOUT_MS, &r) == 0 &&
		    r.status == 200)
			rd->ok++;
		else
			rd->bad++;
		ms = stack_now_ms() - t0;
		if (ms > rd->slowest)
			rd->slowest = ms;
		usleep(5000);
	}
	http_resp_free(&r);
	return NULL;
}

static int
fo_cmp(const void *a, const void *b)
{
	long long x = *(const long long *)a, y = *(const long long *)b;

	return x < y ? -1 : x > y;
}

/* The tags stored on the server at url, sorted, into *out (caller frees).  Count or -1. */
static long
fo_tags(const char *url, long long **out)
{
	struct db_stmt *st;
	struct db *db = NULL;
	long long *v = NULL, *nv;
	long n = 0, cap = 0;
	char err[256];

	if (db_open(&db, url, NULL, err, sizeof(err)) == -1) {
		fprintf(stderr, "fo_tags: %s\n", err);
		return -1;
	}
	if ((st = db_prepare(db, "SELECT tag FROM fo_item ORDER BY tag")) == NULL)
		goto fail;
	while (db_step(st) == DB_ROW) {
		if (n == cap) {
			cap = cap ? cap * 2 : 4096;
			if ((nv = realloc(v, (size_t)cap * sizeof(*v))) == NULL)
				goto fail;
			v = nv;
		}
		v[n++] = db_column_int(st, 0);
	}
	db_close(db);
	*out = v;
	return n;
fail:
	free(v);
	db_close(db);
	return -1;
}

static void
test_pg_failover_kill_primary_promote_standby(void)
{
	struct fo_writer w[FO_WRITERS];
	struct fo_reader rd[FO_READERS];
	long long t_kill, t_fail, t_promoted = 0, first_ack = -1, slowest = 0, *tags = NULL, ms;
	long acked = 0, failed = 0, unclean = 0, lost = 0, ntags, i_ack;
	int i, j, reads_ok = 0, reads_bad = 0;
	long long reads_slowest = 0;

	if (!fo_up) {
		CHECK(!"stack up");
		return;
	}
	memset(w, 0, sizeof(w));
	memset(rd, 0, sizeof(rd));
	atomic_store(&fo_stop, 0);
	atomic_store(&fo_kill_ms, LLONG_MAX);
	atomic_store(&fo_resumed_ms, 0);
	for (i = 0; i < FO_WRITERS; i++) {
		w[i].id = i + 1;
		if ((w[i].posts = calloc(FO_MAX_POSTS, sizeof(*w[i].posts))) == NULL) {
			CHECK(!"memory");
			goto out;
		}
	}
	for (i = 0; i < FO_WRITERS; i++)
		CHECK_INT(pthread_create(&w[i].tid, NULL, fo_writer_run, &w[i]), 0);
	for (i = 0; i < FO_READERS; i++)
		CHECK_INT(pthread_create(&rd[i].tid, NULL, fo_reader_run, &rd[i]), 0);
	usleep(1000 * 1500);

	t_kill = stack_now_ms();
	atomic_store(&fo_kill_ms, t_kill);
	CHECK_INT(pgtmp_crash(&fo_prim), 0);
	/* The operator (or a tool such as Patroni) decides the primary is gone. */
	usleep(1000 * 300);
	CHECK_INT(pgtmp_promote(&fo_stby), 0);
	t_promoted = stack_now_ms();
	/* Until a write that started after the kill is acknowledged, then a second more. */
	while (atomic_load(&fo_resumed_ms) == 0 && stack_now_ms() - t_kill < 20000)
		usleep(1000 * 50);
	usleep(1000 * 1000);
	atomic_store(&fo_stop, 1);
	for (i = 0; i < FO_WRITERS; i++)
		pthread_join(w[i].tid, NULL);
	for (i = 0; i < FO_READERS; i++) {
		pthread_join(rd[i].tid, NULL);
		reads_ok += rd[i].ok;
		reads_bad += rd[i].bad;
		if (rd[i].slowest > reads_slowest)
			reads_slowest = rd[i].slowest;
	}

	/* The outage as the clients saw it: from the kill to the first acknowledgement of a
	 * write sent after the first failure that followed the kill (or after the kill, when
	 * none failed). */
	t_fail = t_kill;
	for (i = 0; i < FO_WRITERS; i++)
		for (j = 0; j < w[i].n; j++)
			if (w[i].posts[j].t0 >= t_kill && w[i].posts[j].status != 201 &&
			    (t_fail == t_kill || w[i].posts[j].t1 < t_fail))
				t_fail = w[i].posts[j].t1;
	first_ack = -1;
	for (i = 0; i < FO_WRITERS; i++)
		for (j = 0; j < w[i].n; j++) {
			const struct fo_post_rec *p = &w[i].posts[j];

			if (p->t0 >= t_fail && p->status == 201 &&
			    (first_ack < 0 || p->t1 < first_ack))
				first_ack = p->t1;
			if ((ms = p->t1 - p->t0) > slowest)
				slowest = ms;
			if (p->status == 201)
				acked++;
			else
				failed++;
			unclean += !p->clean;
			if (!p->clean)
				printf("  unclean answer: POST tag %lld: status %d after %lld ms\n",
				    p->tag, p->status, p->t1 - p->t0);
		}
	if ((ntags = fo_tags(fo_stby.url, &tags)) < 0) {
		CHECK(!"tags read from the promoted server");
		goto out;
	}
	for (i = 0; i < FO_WRITERS; i++)
		for (j = 0; j < w[i].n; j++)
			if (w[i].posts[j].status == 201 && bsearch(&w[i].posts[j].tag, tags,
			    (size_t)ntags, sizeof(*tags), fo_cmp) == NULL) {
				lost++;
				if (lost <= 5)
					printf("  lost: tag %lld acknowledged at +%lld ms from the "
					    "kill\n", w[i].posts[j].tag, w[i].posts[j].t1 - t_kill);
			}
	i_ack = first_ack >= 0 ? (long)(first_ack - t_kill) : -1;
	printf("  primary killed, standby promoted %lld ms later (pg_ctl promote done); "
	    "first POST failed %lld ms after the kill; writes resumed %.2f s after the kill\n",
	    t_promoted - t_kill, t_fail - t_kill, (double)i_ack / 1000.0);
	printf("  POSTs: %ld acknowledged, %ld failed (all 503 JSON with Retry-After: %s), "
	    "acknowledged and lost: %ld; slowest %lld ms (budget %d ms)\n", acked, failed,
	    unclean == 0 ? "yes" : "no", lost, slowest, FO_BUDGET_MS);
	printf("  GETs (read URL, the standby): %d ok, %d failed, slowest %lld ms\n", reads_ok,
	    reads_bad, reads_slowest);
	CHECK(acked > 50);
	CHECK(i_ack >= 0 && i_ack <= FO_RESUME_MS);
	CHECK_INT(lost, 0);
	CHECK_INT(unclean, 0);
	CHECK(slowest <= FO_BUDGET_MS + FO_SLACK_MS);
	CHECK_INT(reads_bad, 0);
	CHECK(reads_ok > 20);
	CHECK(reads_slowest <= FO_BUDGET_MS + FO_SLACK_MS);
	/* The promoted server is the one that takes writes now. */
	CHECK_INT(chatfix_int(fo_stby.url, "SELECT pg_is_in_recovery()::int", NULL), 0);
out:
	free(tags);
	for (i = 0; i < FO_WRITERS; i++)
		free(w[i].posts);
}

/* ---- asynchronous replication ---- */

#define FO_ASYNC_ROWS	20

static void
test_pg_failover_async_loses_unshipped_commits(void)
{
	struct pgtmp prim, stby;
	char sql[128];
	int64_t sender, before, after;
	int i, acked = 0;

	memset(&prim, 0, sizeof(prim));
	memset(&stby, 0, sizeof(stby));
	if (pgtmp_start(&prim) == -1 || chatfix_exec(prim.url, fo_schema) == -1 ||
	    chatfix_exec(prim.url, "INSERT INTO fo_item (tag) VALUES (1)") == -1 ||
	    pgtmp_start_standby(&stby, &prim) == -1) {
		CHECK(!"a primary and a standby");
		goto out;
	}
	for (i = 0; i < 300 && chatfix_int(stby.url, "SELECT count(*) FROM fo_item", NULL) != 1;
	    i++)
		usleep(20000);
	before = chatfix_int(stby.url, "SELECT count(*) FROM fo_item", NULL);
	/* The standby may have the row from its base backup before its WAL receiver has
	 * connected: wait for the primary's WAL sender to stream. */
	for (i = 0, sender = 0; i < 300 && sender <= 0; i++) {
		sender = chatfix_int(prim.url, "SELECT coalesce(max(pid), 0) FROM "
		    "pg_stat_replication WHERE state = 'streaming'", NULL);
		if (sender <= 0)
			usleep(20000);
	}
	CHECK_INT(before, 1);
	if (sender <= 0 || kill((pid_t)sender, SIGSTOP) == -1) {
		CHECK(!"the WAL sender stopped");
		goto out;
	}
	/* Each INSERT commits and is acknowledged: nobody waits for the standby. */
	for (i = 0; i < FO_ASYNC_ROWS; i++) {
		snprintf(sql, sizeof(sql), "INSERT INTO fo_item (tag) VALUES (%d)", 100 + i);
		acked += chatfix_exec(prim.url, sql) == 0;
	}
	CHECK_INT(pgtmp_crash(&prim), 0);
	CHECK_INT(pgtmp_promote(&stby), 0);
	after = chatfix_int(stby.url, "SELECT count(*) FROM fo_item", NULL);
	printf("  asynchronous: %d commits acknowledged while the WAL sender was stopped; "
	    "%lld of them on the promoted standby\n", acked, (long long)(after - before));
	CHECK_INT(acked, FO_ASYNC_ROWS);
	CHECK_INT(after, before);
out:
	pgtmp_stop(&stby);
	pgtmp_stop(&prim);
}

/* ---- set-up ---- */

/* The standby is streaming and, once the primary names it, synchronous.  0 or -1. */
static int
fo_replicate(void)
{
	int i;

	for (i = 0; i < 300; i++) {
		if (chatfix_int(fo_prim.url, "SELECT count(*) FROM pg_stat_replication WHERE "
		    "state = 'streaming'", NULL) == 1)
			break;
		usleep(20000);
	}
	if (i == 300)
		return -1;
	/* After the base backup: a copy of this setting would make the promoted standby
	 * wait for a standby of its own that does not exist. */
	if (chatfix_exec(fo_prim.url, "ALTER SYSTEM SET synchronous_standby_names = '*'") ||
	    chatfix_exec(fo_prim.url, "ALTER SYSTEM SET synchronous_commit = 'remote_apply'") ||
	    chatfix_exec(fo_prim.url, "SELECT pg_reload_conf()"))
		return -1;
	for (i = 0; i < 300; i++) {
		if (chatfix_int(fo_prim.url, "SELECT count(*) FROM pg_stat_replication WHERE "
		    "sync_state = 'sync'", NULL) == 1)
			return 0;
		usleep(20000);
	}
	return -1;
}

int
main(void)
{
	char lines[16384], bin[4096], hosts[300], ports[32];
	const char *b = getenv("SLUICE_BIN");

	if ((fo_bh_port = fo_blackhole()) > 0 &&
	    pgtmp_start_conns(&fo_prim, 60) == 0 && chatfix_exec(fo_prim.url, fo_schema) == 0 &&
	    pgtmp_start_standby(&fo_stby, &fo_prim) == 0 && fo_replicate() == 0 &&
	    realpath(b != NULL ? b : "bin", bin) != NULL) {
		snprintf(hosts, sizeof(hosts), "%s,%s", fo_prim.dir, fo_stby.dir);
		snprintf(ports, sizeof(ports), "%d,%d", fo_prim.port, fo_stby.port);
		/* The multi-host URLs a deployment would write with host names. */
		snprintf(lines, sizeof(lines),
		    "db main postgresql:///sluice_test?host=%s&port=%s&user=postgres&"
		    "target_session_attrs=read-write\n"
		    "db replica postgresql:///sluice_test?host=%s&port=%s&user=postgres&"
		    "target_session_attrs=prefer-standby\n"
		    "db standby %s\n"
		    "rest /rest/v1/ workers=2 threads=4 db=main db_read=replica "
		    "stmt_timeout_ms=%d\n"
		    "sb /sb/v1/ workers=1 threads=2 db=standby binary=%s/rest\n"
		    "db silent postgresql:///sluice_test?host=127.0.0.1,%s&port=%d,%d&"
		    "user=postgres&application_name=bh&target_session_attrs=read-write\n"
		    "bh /bh/v1/ workers=1 threads=2 db=silent binary=%s/rest "
		    "stmt_timeout_ms=%d\n",
		    hosts, ports, hosts, ports, fo_stby.url, FO_BUDGET_MS, bin, fo_prim.dir,
		    fo_bh_port, fo_prim.port, bin, FO_BH_BUDGET_MS);
		fo_up = stack_start(&fo_s, lines, "tuned", 2, NULL) == 0 &&
		    stack_wait_pool(&fo_s, "rest", 10000) == 0 &&
		    stack_wait_pool(&fo_s, "sb", 10000) == 0 &&
		    stack_wait_pool(&fo_s, "bh", 15000) == 0;
	}
	RUN(test_pg_failover_reads_on_standby_writes_on_primary);
	RUN(test_pg_failover_read_your_writes_remote_apply);
	RUN(test_pg_failover_write_on_standby_is_503);
	RUN(test_pg_failover_silent_host_skipped);
	RUN(test_pg_failover_kill_primary_promote_standby);
	RUN(test_pg_failover_all_hosts_down_answers_within_budget);
	RUN(test_pg_failover_async_loses_unshipped_commits);
	if (fo_up)
		stack_stop(&fo_s);
	pgtmp_stop(&fo_stby);
	pgtmp_stop(&fo_prim);
	return harness_done();
}
