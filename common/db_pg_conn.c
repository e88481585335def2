/*
 * db_pg_conn.c: opening one PostgreSQL connection (for db_pg_pool.c), within the time
 * budget of the request that needs it.
 *
 * The conninfo goes to libpq whole, as the dbname keyword with expand_dbname: a URL or a
 * key=value string, one host or several ("postgresql://h1:p1,h2:p2/db?target_session_attrs=
 * read-write", "host=h1,h2 port=p1,p2 ..."), libpq tries the hosts in order and keeps the
 * first that suits target_session_attrs.  What sluice adds comes before it (a default the
 * string overrides: connect_timeout, gssencmode) or after it (what the string may not change:
 * client_encoding, which the JSON the database builds depends on).
 *
 * Without a deadline (start-up, tools) the connection is made with PQconnectdbParams(),
 * and libpq moves on to the next host when one has not answered within connect_timeout (2 s
 * unless the string or PGCONNECT_TIMEOUT says otherwise).  With a deadline (a request's
 * budget) it is made with PQconnectStartParams() and PQconnectPoll(), waiting in poll() no
 * longer than the budget: a host that does not answer costs the request its budget at most,
 * never a hang.  libpq applies connect_timeout only in its blocking connect, so here sluice
 * does it: a host that has not answered within it (a machine that is off, whose packets
 * vanish) is left out and the attempt starts again with the hosts after it, so that a dead
 * primary listed first does not keep every reconnect from finding the promoted standby.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "clock.h"
#include "db_pg_pool.h"
#include "extern.h"
#include "log.h"

/* Seconds a host has to answer before the next is tried (libpq's minimum). */
#define PG_CONNECT_TIMEOUT	"2"

/*
 * GSSAPI encryption off unless the conninfo or PGGSSENCMODE asks for it.  libpq's default
 * (prefer) loads Kerberos on every TCP connection, and Kerberos reads directories
 * (getdents64), which the worker's seccomp filter does not allow: a worker reconnecting
 * over TCP was killed.  GSSAPI encryption is not for sluice's workers (docs/deployment.md).
 */
#define PG_GSSENCMODE		"disable"

/* Room for a list of hosts, host addresses or ports. */
#define PG_HOSTS_LEN		1024

/*
 * A connection attempt within a budget: the conninfo as libpq parses it, and the host,
 * hostaddr and port lists of the hosts still to try (comma-separated, as libpq takes
 * them; has_*: given at all).
 */
struct pg_attempt {
	PQconninfoOption *opts;		/* PQconninfoParse()'s; owned */
	char host[PG_HOSTS_LEN], hostaddr[PG_HOSTS_LEN], port[PG_HOSTS_LEN];
	int has_host, has_hostaddr, has_port;
	long long host_ms;		/* a host's time to answer; 0: only the budget */
};

/* Items in a comma-separated list ("" is one empty item, as libpq counts). */
static int
pg_list_count(const char *list)
{
	int n = 1;

	for (; *list != '\0'; list++)
		n += *list == ',';
	return n;
}

/* Item i of list, copied into out[outlen].  0, or -1 when there is no item i or it does
 * not fit. */
static int
pg_list_item(const char *list, int i, char *out, size_t outlen)
{
	size_t len;

	for (; i > 0; i--)
		if ((list = strchr(list, ',')) == NULL)
			return -1;
		else
			list++;
	len = strcspn(list, ",");
	if (len >= outlen)
		return -1;
	memcpy(out, list, len);
	out[len] = '\0';
	return 0;
}

/* Removes item i from list (in place), unless it is the only one. */
static void
pg_list_drop(char *list, int i)
{
	char *start = list, *end;

	if (pg_list_count(list) <= 1)
		return;
	for (; i > 0; i--)
		if ((start = strchr(start, ',')) == NULL)
			return;
		else
			start++;
	if ((end = strchr(start, ',')) != NULL)
		memmove(start, end + 1, strlen(end + 1) + 1);
	else if (start > list)
		start[-1] = '\0';
}

/* Copies the list of option key (when given) into out.  1 given, 0 not, -1 too long. */
static int
pg_attempt_list(const PQconninfoOption *o, const char *key, char *out)
{
	for (; o->keyword != NULL; o++)
		if (strcmp(o->keyword, key) == 0 && o->val != NULL) {
			if (strlen(o->val) >= PG_HOSTS_LEN)
				return -1;
			memcpy(out, o->val, strlen(o->val) + 1);
			return 1;
		}
	out[0] = '\0';
	return 0;
}

/* Parses conninfo into a.  0, or -1 (not parsed, a list too long): the attempt then
 * keeps every host, bounded by the budget alone. */
static int
pg_attempt_init(struct pg_attempt *a, const char *conninfo)
{
	const PQconninfoOption *o;
	const char *t = getenv("PGCONNECT_TIMEOUT");
	long sec;

	memset(a, 0, sizeof(*a));
	if ((a->opts = PQconninfoParse(conninfo, NULL)) == NULL)
		return -1;
	if ((a->has_host = pg_attempt_list(a->opts, "host", a->host)) < 0 ||
	    (a->has_hostaddr = pg_attempt_list(a->opts, "hostaddr", a->hostaddr)) < 0 ||
	    (a->has_port = pg_attempt_list(a->opts, "port", a->port)) < 0)
		return -1;
	for (o = a->opts; o->keyword != NULL; o++)
		if (strcmp(o->keyword, "connect_timeout") == 0 && o->val != NULL)
			t = o->val;
	/* As libpq reads it: seconds, at least 2 when set; 0 or less: none. */
	sec = strtol(t != NULL ? t : PG_CONNECT_TIMEOUT, NULL, 10);
	a->host_ms = sec <= 0 ? 0 : (sec < 2 ? 2 : sec) * 1000LL;
	return 0;
}

/*
 * Leaves out of a the host libpq was trying (host and port as PQhost() and PQport() told),
 * when there is another to try.  0 done, -1 nothing left out.
 */
static int
pg_attempt_skip(struct pg_attempt *a, const char *host, const char *port)
{
	char h[PG_HOSTS_LEN], p[PG_HOSTS_LEN];
	const char *hosts = a->has_host ? a->host : a->hostaddr;
	int i, n;

	if (a->opts == NULL || host == NULL || (!a->has_host && !a->has_hostaddr) ||
	    (n = pg_list_count(hosts)) <= 1)
		return -1;
	for (i = 0; i < n; i++) {
		if (pg_list_item(hosts, i, h, sizeof(h)) == -1)
			return -1;
		/* An empty name in the host list stands for its host address. */
		if (h[0] == '\0' && a->has_hostaddr &&
		    pg_list_item(a->hostaddr, i, h, sizeof(h)) == -1)
			return -1;
		if (strcmp(h, host) != 0)
			continue;
		if (a->has_port && pg_list_count(a->port) > 1 && port != NULL &&
		    (pg_list_item(a->port, i, p, sizeof(p)) == -1 || strcmp(p, port) != 0))
			continue;
		break;
	}
	if (i == n)
		return -1;
	if (a->has_host)
		pg_list_drop(a->host, i);
	if (a->has_hostaddr)
		pg_list_drop(a->hostaddr, i);
	if (a->has_port)
		pg_list_drop(a->port, i);
	return 0;
}

/* Starts a connection to what is left of a: its options as parsed, its host lists, then
 * what sluice sets.  NULL when out of memory. */
static PGconn *
pg_attempt_start(const struct pg_attempt *a)
{
	const PQconninfoOption *o;
	const char **k, **v;
	PGconn *pq = NULL;
	size_t n = 0, i = 0;

	for (o = a->opts; o->keyword != NULL; o++)
		n++;
	k = calloc(n + 8, sizeof(*k));
	v = calloc(n + 8, sizeof(*v));
	if (k == NULL || v == NULL)
		goto out;
	k[i] = "connect_timeout";
	v[i++] = PG_CONNECT_TIMEOUT;
	if (getenv("PGGSSENCMODE") == NULL) {
		k[i] = "gssencmode";
		v[i++] = PG_GSSENCMODE;
	}
	for (o = a->opts; o->keyword != NULL; o++)
		if (o->val != NULL && strcmp(o->keyword, "host") != 0 &&
		    strcmp(o->keyword, "hostaddr") != 0 && strcmp(o->keyword, "port") != 0) {
			k[i] = o->keyword;
			v[i++] = o->val;
		}
	if (a->has_host) {
		k[i] = "host";
		v[i++] = a->host;
	}
	if (a->has_hostaddr) {
		k[i] = "hostaddr";
		v[i++] = a->hostaddr;
	}
	if (a->has_port) {
		k[i] = "port";
		v[i++] = a->port;
	}
	k[i] = "client_encoding";
	v[i++] = "UTF8";
	k[i] = "fallback_application_name";
	v[i++] = "sluice";
	pq = PQconnectStartParams(k, v, 0);
out:
	free(k);
	free(v);
	return pq;
}

/* Waits until the socket of a connection under way is ready for what PQconnectPoll()
 * asked, or until_ms.  Returns 1 ready, 0 past until_ms, -1 on a poll() error. */
static int
pg_connect_wait(PGconn *pq, PostgresPollingStatusType want, long long until_ms)
{
	struct pollfd pfd;
	long long left;
	int n;

	pfd.fd = PQsocket(pq);
	pfd.events = want == PGRES_POLLING_READING ? POLLIN : POLLOUT;
	db_blocking();
	for (;;) {
		pfd.revents = 0;
		if ((left = until_ms - clock_now_ms()) <= 0)
			return 0;
		n = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 1;
		if (n == -1 && errno != EINTR)
			return -1;
	}
}

/* Connects pq (started) before deadline_ms, leaving out each host that does not answer
 * in time (see the top of the file).  Returns the connection, else NULL with *code and
 * msg set (pq is finished either way). */
static PGconn *
pg_connect_budget(PGconn *pq, const char *conninfo, long long deadline_ms,
    enum db_err *code, char *msg, size_t msglen)
{
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	const char *host = NULL, *port = NULL;
	struct pg_attempt a;
	long long since = 0, until;
	int n;

	if (pg_attempt_init(&a, conninfo) == -1)
		a.host_ms = 0;
	while (PQstatus(pq) != CONNECTION_BAD && st != PGRES_POLLING_OK &&
	    st != PGRES_POLLING_FAILED) {
		/* libpq moved on to another host (or address): its time starts now. */
		if (PQhost(pq) != host || PQport(pq) != port) {
			host = PQhost(pq);
			port = PQport(pq);
			since = clock_now_ms();
		}
		until = a.host_ms > 0 && since + a.host_ms < deadline_ms ? since + a.host_ms :
		    deadline_ms;
		if ((n = pg_connect_wait(pq, st, until)) == 1) {
			st = PQconnectPoll(pq);
			continue;
		}
		if (n == 0 && clock_now_ms() < deadline_ms) {
			/* This host had its time: the others, without it; or, when it is the
			 * last, the rest of the budget. */
			if (pg_attempt_skip(&a, host, port) == -1) {
				a.host_ms = 0;
				continue;
			}
			log_warn("pg: %s:%s did not answer within %lld ms; trying the other "
			    "hosts", host, port != NULL ? port : "", a.host_ms);
			PQfinish(pq);
			if ((pq = pg_attempt_start(&a)) == NULL) {
				*code = DB_EINTERNAL;
				(void)snprintf(msg, msglen, "pg connect: out of memory");
				goto out;
			}
			st = PGRES_POLLING_WRITING;
			host = port = NULL;
			continue;
		}
		*code = n == 0 ? DB_ETIMEOUT : DB_EUNAVAIL;
		(void)snprintf(msg, msglen, "pg connect: %s", n == 0 ?
		    "no server answered within the request's budget" : strerror(errno));
		PQfinish(pq);
		pq = NULL;
		goto out;
	}
out:
	PQconninfoFree(a.opts);
	return pq;
}

PGconn *
pg_connect(const char *conninfo, long long deadline_ms, const char *name,
    enum db_err *code, char *msg, size_t msglen)
{
	/* connect_timeout and gssencmode before dbname: the conninfo's own win.
	 * client_encoding (and a name given) after it, so that it wins over the expanded
	 * string. */
	const char *k[6], *v[6];
	PGconn *pq;
	int n, i = 0;

	*code = DB_EUNAVAIL;
	/* The environment's defaults are the operator's: leave them to libpq. */
	if (getenv("PGCONNECT_TIMEOUT") == NULL) {
		k[i] = "connect_timeout";
		v[i++] = PG_CONNECT_TIMEOUT;
	}
	if (getenv("PGGSSENCMODE") == NULL) {
		k[i] = "gssencmode";
		v[i++] = PG_GSSENCMODE;
	}
	k[i] = "dbname";
	v[i++] = conninfo;
	k[i] = "client_encoding";
	v[i++] = "UTF8";
	k[i] = name != NULL ? "application_name" : "fallback_application_name";
	v[i++] = name != NULL ? name : "sluice";
	k[i] = NULL;
	v[i] = NULL;
	if (deadline_ms <= 0)
		pq = PQconnectdbParams(k, v, 1);
	else if ((pq = PQconnectStartParams(k, v, 1)) != NULL)
		pq = pg_connect_budget(pq, conninfo, deadline_ms, code, msg, msglen);
	else {
		*code = DB_EINTERNAL;
		(void)snprintf(msg, msglen, "pg connect: out of memory");
	}
	if (pq == NULL)
		return NULL;
	if (PQstatus(pq) != CONNECTION_OK) {
		/* One line: libpq ends each host's message with a newline. */
		(void)snprintf(msg, msglen, "pg connect: %s", PQerrorMessage(pq));
		for (n = 0; msg[n] != '\0'; n++)
			if (msg[n] == '\n')
				msg[n] = msg[n + 1] != '\0' ? ' ' : '\0';
		PQfinish(pq);
		return NULL;
	}
	return pq;
}
