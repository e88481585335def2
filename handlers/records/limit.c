/*
 * limit.c: the rate limits of sign-in and the account flows: POST auth-with-password,
 * auth-with-otp, request-verification, request-password-reset, request-email-change,
 * request-otp and the three
 * confirm-* routes of an auth collection.  Past a limit the answer is PocketBase's 429
 * {"data":{},"message":"Too Many Requests.","status":429} and the route does not run (no
 * bcrypt comparison, no mail, no write).
 *
 * Two token buckets (apps/records/bucket.h) count each request: its client address's
 * (REMOTE_ADDR, what nginx's $remote_addr says: an X-Forwarded-For header is not read,
 * since any client may send one; behind another proxy, nginx's realip module makes
 * $remote_addr the client's), SLUICE_RECORDS_AUTH_LIMIT a minute, and its identity's, the
 * account it names (a sign-in's identity, a request's email, a signed-in record, an
 * auth-with-otp's otpId),
 * SLUICE_RECORDS_AUTH_LIMIT_IDENTITY a minute from whatever addresses: one address cannot
 * try many passwords, nor many addresses one account's.  The counts are each worker's
 * (a pool of N workers lets N times through), as the account flows' 2 minutes between
 * mails are.  Superusers' requests are not counted, as in PocketBase.
 *
 * The addresses SLUICE_RECORDS_AUTH_LIMIT_EXEMPT names are not counted either, by
 * default loopback ones: a client on the host itself is the operator's (a local tool, a
 * health check, the benchmark, whose sign-in scenario has 32 connections sign in as
 * random users from 127.0.0.1 as fast as bcrypt allows), and whoever runs code there can
 * read the database anyway.  A proxy on the same host that does not pass the client's
 * address would make every client loopback: name its address's clients through realip, or
 * set the exemption to none.
 */
#include <string.h>

#include "clock.h"
#include "records.h"
#include "records/bucket.h"

long rec_limit_addr = 60;
long rec_limit_ident = 20;
const char *rec_limit_exempt;

/* 1 when what is a route the limits count. */
static int
rec_limit_route(const char *what)
{
	return strcmp(what, "auth-with-password") == 0 || strcmp(what, "auth-with-otp") == 0 ||
	    strncmp(what, "request-", 8) == 0 ||
	    strncmp(what, "confirm-", 8) == 0;
}

/* 1 when addr is a loopback address, IPv4 (also as IPv4-mapped IPv6) or IPv6. */
static int
rec_limit_loopback(const char *addr)
{
	return strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0 ||
	    strncmp(addr, "::ffff:127.", 11) == 0;
}

/* 1 when addr is among the exempt addresses (rec_limit_exempt's list). */
static int
rec_limit_exempt_addr(const char *addr)
{
	const char *p = rec_limit_exempt != NULL ? rec_limit_exempt : "loopback";
	size_t n, alen = strlen(addr);

	while (*p != '\0') {
		n = strcspn(p, ", ");
		if ((n == 8 && strncmp(p, "loopback", 8) == 0 && rec_limit_loopback(addr)) ||
		    (n == alen && strncmp(p, addr, n) == 0))
			return 1;
		p += n;
		p += strspn(p, ", ");
	}
	return 0;
}

/* The identity route what's request names, or NULL: confirmations name none (their
 * tokens are checked, not guessed). */
static const char *
rec_limit_identity(const struct rec_ctx *x, const char *what)
{
	const cJSON *v = NULL;

	if (strcmp(what, "auth-with-password") == 0)
		v = cJSON_GetObjectItemCaseSensitive(x->body, "identity");
	else if (strcmp(what, "request-verification") == 0 ||
	    strcmp(what, "request-password-reset") == 0 || strcmp(what, "request-otp") == 0)
		v = cJSON_GetObjectItemCaseSensitive(x->body, "email");
	else if (strcmp(what, "auth-with-otp") == 0)
		v = cJSON_GetObjectItemCaseSensitive(x->body, "otpId");
	else if (strcmp(what, "request-email-change") == 0)
		return x->auth != NULL ? x->auth_id : NULL;
	if (v == NULL || !cJSON_IsString(v) || v->valuestring[0] == '\0')
		return NULL;
	return v->valuestring;
}

/* Takes a token of the bucket named prefix, a, b (ASCII letters folded, so that an
 * email's case makes no second bucket) at now: 1 taken, 0 refused. */
static int
rec_limit_take(const char *prefix, const char *a, const char *b, long per_minute,
    double now)
{
	char key[600];
	size_t i, n = 0;
	const char *parts[3] = { prefix, a, b };

	for (i = 0; i < 3; i++) {
		const char *p;

		for (p = parts[i]; p != NULL && *p != '\0' && n < sizeof(key); p++)
			key[n++] = (char)(*p >= 'A' && *p <= 'Z' ? *p - 'A' + 'a' : *p);
		if (n < sizeof(key))
			key[n++] = '\n';
	}
	return bucket_take(key, n, per_minute, now);
}

int
rec_limit(struct rec_ctx *x, const char *what)
{
	const char *addr, *ident;
	double now;

	if (x->rq->method != REQ_POST || !rec_limit_route(what) || x->superuser)
		return 0;
	addr = req_env(x->rq, "REMOTE_ADDR");
	if (addr != NULL && rec_limit_exempt_addr(addr))
		return 0;
	now = (double)clock_now_ms() / 1000.0;
	if (addr != NULL && *addr != '\0' &&
	    !rec_limit_take("addr", addr, NULL, rec_limit_addr, now))
		goto refused;
	if ((ident = rec_limit_identity(x, what)) != NULL &&
	    !rec_limit_take("identity", x->c->id, ident, rec_limit_ident, now))
		goto refused;
	return 0;
refused:
	rec_error(x->rs, 429, NULL, NULL);
	return 1;
}
