/*
 * req.h: the request as a handler sees it.
 *
 * The serve loop builds a struct req from the FastCGI parameters (or the CGI environment)
 * before the handler runs: the method, the path, the query string split and
 * percent-decoded, and the body read whole (up to the endpoint's cap).  Everything a req
 * points to lives either in the request's arena or in fcgi2's parameter storage, and both
 * are gone after the request ends (fcgi2 frees its parameters at the next accept): a
 * handler never keeps a pointer from a req across requests.
 */
#ifndef SLUICE_REQ_H
#define SLUICE_REQ_H

#include <stddef.h>
#include <stdint.h>

struct arena;
struct db;

enum req_method {
	REQ_GET = 1 << 0,
	REQ_HEAD = 1 << 1,
	REQ_POST = 1 << 2,
	REQ_PUT = 1 << 3,
	REQ_PATCH = 1 << 4,
	REQ_DELETE = 1 << 5,
	REQ_OPTIONS = 1 << 6,
	REQ_OTHER = 1 << 7,	/* any other token: always 405 */
};

#define REQ_PARAMS_MAX	1000	/* more query parameters than this: 400 */

struct req_param {
	const char *key;	/* decoded, NUL-terminated; no NUL inside */
	const char *val;
	size_t keylen;
	size_t vallen;
};

struct req {
	struct arena *arena;
	unsigned method;		/* one enum req_method bit */
	const char *method_name;	/* as sent */
	const char *path;		/* decoded path (nginx's $document_uri) */
	const char *query;		/* raw query string, "" when none */
	struct req_param *params;	/* in query order */
	size_t nparams;
	const char *body;		/* NUL-terminated copy, NULL when no body */
	size_t body_len;
	struct db *db;			/* this thread's connection, NULL without a database */
	void *thread;			/* the endpoint's thread_init() state, or NULL (serve.h) */
	char **envp;			/* the request's "NAME=value" strings (borrowed) */
};

/* Why req_init() refused a request; serve turns each into a 4xx. */
enum req_err {
	REQ_OK = 0,
	REQ_EQUERY,		/* malformed percent-encoding or NUL in the query: 400 */
	REQ_ETOOMANY,		/* more than REQ_PARAMS_MAX parameters: 400 */
	REQ_ENOMEM,		/* the arena cap: 413 */
};

/*
 * Fills rq from envp (borrowed for the request's life) using the arena a.  Does not read
 * the body.  Returns REQ_OK or the reason the request is malformed.
 */
enum req_err req_init(struct req *rq, char **envp, struct arena *a);

/* The raw value of the FastCGI/CGI parameter name ("CONTENT_TYPE"), or NULL.  Borrowed
 * until the request ends. */
const char *req_env(const struct req *rq, const char *name);

/* The value of the HTTP request header name (any case, "Accept-Encoding"), or NULL.
 * Borrowed until the request ends. */
const char *req_header(const struct req *rq, const char *name);

/*
 * Decodes the body as an HTML form (application/x-www-form-urlencoded) by the query
 * string's rules: '&'-separated "key=value" pairs, percent-decoded, '+' a space.  Returns
 * REQ_OK with *params (in the request's arena, borrowed until the request ends; NULL for an
 * empty body) and *nparams set, REQ_EQUERY for a malformed escape or a NUL, REQ_ETOOMANY
 * past REQ_PARAMS_MAX pairs, REQ_ENOMEM at the arena's cap.  The caller checks the
 * Content-Type and the values' UTF-8.
 */
enum req_err req_form(const struct req *rq, struct req_param **params, size_t *nparams);

/* The first query parameter called key, or NULL.  Borrowed until the request ends. */
const struct req_param *req_param(const struct req *rq, const char *key);

/*
 * The query parameter key as an integer in [min, max] (str_to_int's strict syntax).
 * Returns 0 with *out set (def when absent), or -1 when present but malformed or out of
 * range: the caller answers 400.
 */
int req_param_int(const struct req *rq, const char *key, int64_t min, int64_t max,
    int64_t def, int64_t *out);

/* 1 when the request's Content-Type is mime (parameters such as charset ignored, case
 * insensitive), 0 otherwise. */
int req_content_type_is(const struct req *rq, const char *mime);

/* Parses a method token into its enum bit (REQ_OTHER when unknown). */
unsigned req_method_parse(const char *s);

/* Writes the allowed methods of mask as "GET, HEAD, POST" into out[outlen]. */
void req_methods_format(unsigned mask, char *out, size_t outlen);

#endif /* SLUICE_REQ_H */
