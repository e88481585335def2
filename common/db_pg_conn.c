/*
 * db_pg_conn.c: opening one PostgreSQL connection (for db_pg_pool.c), within the time
 * budget of the request that needs it.
 *
 * The conninfo goes to libpq whole, as the dbname keyword with expand_dbname: a URL or a
 * key=value string, one host or several ("postgresql://h1:p1,h2:p2/db?target_session_attrs=
 * read-write", "host=h1,h2 port=p1,p2 ..."), libpq tries the hosts in order and keeps the
 * first that suits target_session_attrs.  What sluice adds comes before it (a default the
 * string overrides: connect_timeout) or after it (what the string may not change:
 * client_encoding, which the JSON the database builds depends on).
 *
 * With a deadline (a request's budget), the connection is made with PQconnectStartParams()
 * and PQconnectPoll(), waiting in poll() no longer than the budget: a host that does not
 * answer costs the request its budget at most, never a hang.  libpq's connect_timeout,
 * which moves on to the next host when one does not answer, is applied only by its
 * blocking connect; so without a deadline (start-up, tools) the connection is made with
 * PQconnectdbParams() and that timeout (2 s a host unless the string or PGCONNECT_TIMEOUT
 * says otherwise).
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "db_pg_pool.h"
#include "extern.h"

/* Seconds a blocking connect waits for one host before it tries the next (libpq's
 * minimum). */
#define PG_CONNECT_TIMEOUT	"2"

/* Waits until the socket of a connection under way is ready for what PQconnectPoll()
 * asked, or deadline_ms.  Returns 1 ready, 0 past the deadline, -1 on a poll() error. */
static int
pg_connect_wait(PGconn *pq, PostgresPollingStatusType want, long long deadline_ms)
{
	struct pollfd pfd;
	long long left;
	int n;

	pfd.fd = PQsocket(pq);
	pfd.events = want == PGRES_POLLING_READING ? POLLIN : POLLOUT;
	for (;;) {
		pfd.revents = 0;
		if ((left = deadline_ms - db_now_ms()) <= 0)
			return 0;
		n = poll(&pfd, 1, left > 60000 ? 60000 : (int)left);
		if (n > 0)
			return 1;
		if (n == -1 && errno != EINTR)
			return -1;
	}
}

PGconn *
pg_connect(const char *conninfo, long long deadline_ms, enum db_err *code, char *msg,
    size_t msglen)
{
	/* connect_timeout before dbname: the conninfo's own wins.  client_encoding after
	 * it, so that it wins over the expanded string. */
	const char *keys[] = { "connect_timeout", "dbname", "client_encoding",
	    "fallback_application_name", NULL };
	const char *vals[] = { PG_CONNECT_TIMEOUT, conninfo, "UTF8", "sluice", NULL };
	const char *const *k = keys, *const *v = vals;
	PostgresPollingStatusType st = PGRES_POLLING_WRITING;
	PGconn *pq;
	int n;

	*code = DB_EUNAVAIL;
	/* The environment's default is the operator's: leave it to libpq. */
	if (getenv("PGCONNECT_TIMEOUT") != NULL) {
		k++;
		v++;
	}
	if (deadline_ms <= 0)
		pq = PQconnectdbParams(k, v, 1);
	else
		pq = PQconnectStartParams(k, v, 1);
	if (pq == NULL) {
		*code = DB_EINTERNAL;
		(void)snprintf(msg, msglen, "pg connect: out of memory");
		return NULL;
	}
	/* As libpq's own loop: wait for the socket first (a connect under way), then poll,
	 * until the poll says done. */
	while (deadline_ms > 0 && PQstatus(pq) != CONNECTION_BAD &&
	    st != PGRES_POLLING_OK && st != PGRES_POLLING_FAILED) {
		if ((n = pg_connect_wait(pq, st, deadline_ms)) == 1) {
			st = PQconnectPoll(pq);
			continue;
		}
		*code = n == 0 ? DB_ETIMEOUT : DB_EUNAVAIL;
		(void)snprintf(msg, msglen, "pg connect: %s", n == 0 ?
		    "no server answered within the request's budget" : strerror(errno));
		PQfinish(pq);
		return NULL;
	}
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
