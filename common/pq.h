/*
 * pq.h: internal to common/: libpq, loaded when a database is PostgreSQL (pq.c).
 *
 * Endpoint binaries do not link libpq: it brings libssl, libcrypto, Kerberos, LDAP,
 * GnuTLS and p11-kit along, whose relocated data are private pages in every process that
 * maps them (about half a megabyte per worker), and most workers serve SQLite or no
 * database at all.  db_pg_open() calls pq_load() first; the PostgreSQL back end's files
 * include this header instead of <libpq-fe.h>, and each libpq function they call is a
 * macro for the pointer pq_load() found (a function missing here fails the build with an
 * undefined reference, not at run time).  Programs that link libpq themselves (the
 * seeders, the tests' PostgreSQL harness) work the same: dlopen() finds it loaded.
 */
#ifndef SLUICE_PQ_H
#define SLUICE_PQ_H

#include <stddef.h>

/* Debian keeps libpq-fe.h in /usr/include/postgresql, off the default path; the Makefile
 * adds it, and the fallback keeps a build without that -I working. */
#if defined(__has_include)
#if __has_include(<libpq-fe.h>)
#include <libpq-fe.h>
#else
#include <postgresql/libpq-fe.h>
#endif
#else
#include <libpq-fe.h>
#endif

/* The libpq soname loaded (the client library's ABI has been 5 since PostgreSQL 8.2). */
#define PQ_SONAME "libpq.so.5"

/* Every libpq function the back end calls. */
#define PQ_FUNCS(X) \
	X(PQcancel) \
	X(PQclear) \
	X(PQcmdStatus) \
	X(PQcmdTuples) \
	X(PQconnectPoll) \
	X(PQconnectStartParams) \
	X(PQconnectdbParams) \
	X(PQconninfoFree) \
	X(PQconninfoParse) \
	X(PQconsumeInput) \
	X(PQdescribePrepared) \
	X(PQenterPipelineMode) \
	X(PQerrorMessage) \
	X(PQescapeIdentifier) \
	X(PQexec) \
	X(PQexecPrepared) \
	X(PQexitPipelineMode) \
	X(PQfinish) \
	X(PQfname) \
	X(PQfreeCancel) \
	X(PQfreemem) \
	X(PQgetCancel) \
	X(PQgetResult) \
	X(PQgetisnull) \
	X(PQgetlength) \
	X(PQgetvalue) \
	X(PQhost) \
	X(PQisBusy) \
	X(PQnfields) \
	X(PQnotifies) \
	X(PQnparams) \
	X(PQntuples) \
	X(PQpipelineSync) \
	X(PQport) \
	X(PQprepare) \
	X(PQreset) \
	X(PQresultErrorField) \
	X(PQresultErrorMessage) \
	X(PQresultStatus) \
	X(PQsendDescribePrepared) \
	X(PQsendPrepare) \
	X(PQsendQueryParams) \
	X(PQsendQueryPrepared) \
	X(PQserverVersion) \
	X(PQsetNoticeProcessor) \
	X(PQsocket) \
	X(PQstatus) \
	X(PQtransactionStatus)

/* Their addresses in the loaded library, set once by pq_load(). */
struct pq_api {
/* NOLINTNEXTLINE(bugprone-macro-parentheses): a declarator, not an expression */
#define PQ_SLOT(f) __typeof__(f) *f;
	PQ_FUNCS(PQ_SLOT)
#undef PQ_SLOT
};

extern struct pq_api pq_api;

/*
 * Loads libpq and finds every function of PQ_FUNCS, once per process (later calls return
 * the first call's outcome; thread-safe).  Returns 0, or -1 with the reason (dlerror()'s
 * text: the library or a function missing) in err.
 */
int pq_load(char *err, size_t errlen);

#ifndef PQ_NO_MACROS
#define PQcancel (*pq_api.PQcancel)
#define PQclear (*pq_api.PQclear)
#define PQcmdStatus (*pq_api.PQcmdStatus)
#define PQcmdTuples (*pq_api.PQcmdTuples)
#define PQconnectPoll (*pq_api.PQconnectPoll)
#define PQconnectStartParams (*pq_api.PQconnectStartParams)
#define PQconnectdbParams (*pq_api.PQconnectdbParams)
#define PQconninfoFree (*pq_api.PQconninfoFree)
#define PQconninfoParse (*pq_api.PQconninfoParse)
#define PQconsumeInput (*pq_api.PQconsumeInput)
#define PQdescribePrepared (*pq_api.PQdescribePrepared)
#define PQenterPipelineMode (*pq_api.PQenterPipelineMode)
#define PQerrorMessage (*pq_api.PQerrorMessage)
#define PQescapeIdentifier (*pq_api.PQescapeIdentifier)
#define PQexec (*pq_api.PQexec)
#define PQexecPrepared (*pq_api.PQexecPrepared)
#define PQexitPipelineMode (*pq_api.PQexitPipelineMode)
#define PQfinish (*pq_api.PQfinish)
#define PQfname (*pq_api.PQfname)
#define PQfreeCancel (*pq_api.PQfreeCancel)
#define PQfreemem (*pq_api.PQfreemem)
#define PQgetCancel (*pq_api.PQgetCancel)
#define PQgetResult (*pq_api.PQgetResult)
#define PQgetisnull (*pq_api.PQgetisnull)
#define PQgetlength (*pq_api.PQgetlength)
#define PQgetvalue (*pq_api.PQgetvalue)
#define PQhost (*pq_api.PQhost)
#define PQisBusy (*pq_api.PQisBusy)
#define PQnfields (*pq_api.PQnfields)
#define PQnotifies (*pq_api.PQnotifies)
#define PQnparams (*pq_api.PQnparams)
#define PQntuples (*pq_api.PQntuples)
#define PQpipelineSync (*pq_api.PQpipelineSync)
#define PQport (*pq_api.PQport)
#define PQprepare (*pq_api.PQprepare)
#define PQreset (*pq_api.PQreset)
#define PQresultErrorField (*pq_api.PQresultErrorField)
#define PQresultErrorMessage (*pq_api.PQresultErrorMessage)
#define PQresultStatus (*pq_api.PQresultStatus)
#define PQsendDescribePrepared (*pq_api.PQsendDescribePrepared)
#define PQsendPrepare (*pq_api.PQsendPrepare)
#define PQsendQueryParams (*pq_api.PQsendQueryParams)
#define PQsendQueryPrepared (*pq_api.PQsendQueryPrepared)
#define PQserverVersion (*pq_api.PQserverVersion)
#define PQsetNoticeProcessor (*pq_api.PQsetNoticeProcessor)
#define PQsocket (*pq_api.PQsocket)
#define PQstatus (*pq_api.PQstatus)
#define PQtransactionStatus (*pq_api.PQtransactionStatus)
#endif

#endif
