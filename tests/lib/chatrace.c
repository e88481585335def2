/* chatrace.c: see chatrace.h. */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <brotli/decode.h>

#include "chatfix.h"
#include "chatrace.h"
#include "harness.h"

#define RACE_WRITERS	4	/* users 0, 1, 2, 0: two writers share the first channel */
#define RACE_READERS	2

/* What the threads share.  started[u] and done[u] count the writes that touch user u's
 * page (its channel's messages, its nickname), before sending and after the answer. */
struct race {
	struct chatrace *cr;
	char ck[CHATRACE_USERS][256];
	unsigned started[CHATRACE_USERS], done[CHATRACE_USERS];
	pthread_mutex_t mu;
	char acked[CHATRACE_USERS][RACE_WRITERS][64];	/* newest acknowledged, under mu */
	int stop;
	int writes, writes_ok, pages, pages_ok, quiet, quiet_same, gz, spliced; /* atomic */
};

struct race_arg {
	struct race *rc;
	int id;
};

static void
race_add(int *p, int v)
{
	(void)__atomic_add_fetch(p, v, __ATOMIC_SEQ_CST);
}

static double
race_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* POST body to path as user u; 1 when answered 204 or 200. */
static int
race_post(struct race *rc, int u, const char *path, const char *body)
{
	struct http_resp r;
	int ok;

	http_resp_init(&r);
	ok = chatfix_post(rc->cr->base, path, rc->ck[u], NULL, body, &r) == 0 &&
	    (r.status == 204 || r.status == 200);
	http_resp_free(&r);
	return ok;
}

/* One write of writer w as user u: a message, or every tenth of the last writer's a
 * nickname; counted in started[u] and done[u] around it, and a message answered becomes
 * the newest acknowledged one of (u, w). */
static void
race_write(struct race *rc, int w, int u, int n)
{
	char body[160], content[64];
	int nick = w == RACE_WRITERS - 1 && n % 10 == 9, ok;

	snprintf(content, sizeof(content), "race w%d n%d", w, n);
	if (nick)
		snprintf(body, sizeof(body), "{\"nicknameSet\":\"Racer %d\"}", n);
	else
		snprintf(body, sizeof(body), "{\"messageSend\":\"%s\"}", content);
	(void)__atomic_add_fetch(&rc->started[u], 1, __ATOMIC_SEQ_CST);
	ok = race_post(rc, u, nick ? "/chat/nickname-set" : rc->cr->sends[n % 2], body);
	if (ok && !nick) {
		pthread_mutex_lock(&rc->mu);
		memcpy(rc->acked[u][w], content, sizeof(content));
		pthread_mutex_unlock(&rc->mu);
	}
	(void)__atomic_add_fetch(&rc->done[u], 1, __ATOMIC_SEQ_CST);
	race_add(&rc->writes, 1);
	race_add(&rc->writes_ok, ok);
}

static void *
race_writer(void *p)
{
	struct race_arg *a = p;
	struct race *rc = a->rc;
	unsigned seed = (unsigned)a->id * 7919u + 1;
	double end = race_now() + rc->cr->seconds;
	int n;

	for (n = 0; race_now() < end; n++) {
		race_write(rc, a->id, a->id % CHATRACE_USERS, n);
		usleep(20000 + (useconds_t)(rand_r(&seed) % 40000));
	}
	return NULL;
}

/* 1 when text[0, len) holds every message acked[0..RACE_WRITERS) names. */
static int
race_has_acked(const char *text, size_t len, char acked[RACE_WRITERS][64])
{
	struct http_resp h;
	char needle[80];
	int w, ok = 1;

	/* chatfix_count() reads a response's body: text borrowed as one. */
	memset(&h, 0, sizeof(h));
	h.body.data = (char *)(uintptr_t)text;
	h.body.len = len;
	for (w = 0; w < RACE_WRITERS && ok; w++) {
		if (acked[w][0] == '\0')
			continue;
		snprintf(needle, sizeof(needle), ">%.63s</p>", acked[w]);
		ok = chatfix_count(&h, needle) == 1;
		if (!ok)
			printf("  race: a cached page lacks the acknowledged \"%s\"\n", acked[w]);
	}
	return ok;
}

/* The Brotli body of c inflated, NUL-terminated (malloc'd), its length in *len; or NULL. */
static char *
race_unbrotli(const struct http_resp *c, size_t *len)
{
	size_t cap = 4 * 1024 * 1024;
	char *out = malloc(cap + 1);

	*len = cap;
	if (out == NULL || BrotliDecoderDecompress(c->body.len,
	    (const uint8_t *)c->body.data, len, (uint8_t *)out) != BROTLI_DECODER_RESULT_SUCCESS) {
		free(out);
		return NULL;
	}
	out[*len] = '\0';
	return out;
}

/*
 * The cached page c as text into *text and *len: c's body in identity, when gz is not
 * set; when it is, its gzip inflated, or its Brotli (a page the cache could not serve,
 * its list read while a write moved the board, is made as without the cache), malloc'd.
 * 0, or -1 when it is not a 200 in a coding asked for.
 */
static int
race_text(const struct http_resp *c, int gz, char **text, size_t *len)
{
	char v[64];

	if (c->status != 200)
		return -1;
	if (!gz) {
		*text = c->body.data;
		*len = c->body.len;
		return http_header(c, "Content-Encoding", v, sizeof(v)) < 0 ? 0 : -1;
	}
	if (http_header(c, "Content-Encoding", v, sizeof(v)) < 0)
		return -1;
	if (strcmp(v, "gzip") == 0)
		*text = chatfix_gunzip(c, len);
	else if (strcmp(v, "br") == 0)
		*text = race_unbrotli(c, len);
	else
		return -1;
	return *text != NULL ? 0 : -1;
}

/* 1 when the uncached pages a and b and the text are the same bytes. */
static int
race_same(const struct http_resp *a, const struct http_resp *b, const char *text,
    size_t len)
{
	return a->status == 200 && b->status == 200 && a->body.len == len &&
	    b->body.len == len && memcmp(a->body.data, text, len) == 0 &&
	    memcmp(b->body.data, text, len) == 0;
}

/* One check of user u's cached page (gzip when gz) between two uncached ones. */
static void
race_read(struct race *rc, int u, int gz)
{
	struct http_resp before, cached, after;
	char acked[RACE_WRITERS][64], v[64], *text = NULL;
	unsigned d0, s0, s1;
	size_t len = 0;
	int ok;

	http_resp_init(&before);
	http_resp_init(&cached);
	http_resp_init(&after);
	/* done, then started: equal means no write of u's was in flight in between. */
	d0 = __atomic_load_n(&rc->done[u], __ATOMIC_SEQ_CST);
	s0 = __atomic_load_n(&rc->started[u], __ATOMIC_SEQ_CST);
	pthread_mutex_lock(&rc->mu);
	memcpy(acked, rc->acked[u], sizeof(acked));
	pthread_mutex_unlock(&rc->mu);
	ok = chatfix_get(rc->cr->base, "/", rc->ck[u], NULL, &before) == 0 &&
	    chatfix_get(rc->cr->base, rc->cr->cached, rc->ck[u], gz ? "gzip, br" : NULL,
	    &cached) == 0 && chatfix_get(rc->cr->base, "/", rc->ck[u], NULL, &after) == 0 &&
	    race_text(&cached, gz, &text, &len) == 0;
	s1 = __atomic_load_n(&rc->started[u], __ATOMIC_SEQ_CST);
	if (!ok)
		printf("  race: user %d's pages answered %ld, %ld (gzip %d), %ld\n", u,
		    before.status, cached.status, gz, after.status);
	race_add(&rc->pages, 1);
	race_add(&rc->gz, gz);
	race_add(&rc->spliced, ok && gz && http_header(&cached, "Content-Encoding", v,
	    sizeof(v)) == 0 && strcmp(v, "gzip") == 0);
	race_add(&rc->pages_ok, ok && race_has_acked(text, len, acked));
	if (ok && d0 == s0 && s1 == s0) {
		race_add(&rc->quiet, 1);
		if (race_same(&before, &after, text, len))
			race_add(&rc->quiet_same, 1);
		else
			printf("  race: user %d's cached page (gzip %d, %zu bytes) differs from "
			    "the uncached ones of a quiet moment (%zu, %zu)\n", u, gz, len,
			    before.body.len, after.body.len);
	}
	if (gz)
		free(text);
	http_resp_free(&before);
	http_resp_free(&cached);
	http_resp_free(&after);
}

static void *
race_reader(void *p)
{
	struct race_arg *a = p;
	struct race *rc = a->rc;
	int i;

	for (i = 0; !__atomic_load_n(&rc->stop, __ATOMIC_SEQ_CST); i++)
		race_read(rc, i % CHATRACE_USERS, (i / CHATRACE_USERS + a->id) % 2);
	return NULL;
}

/* Makes the users, each on its channel; 0 or -1. */
static int
race_users(struct race *rc)
{
	struct http_resp r;
	char body[96];
	int u, rv = 0;

	http_resp_init(&r);
	for (u = 0; u < CHATRACE_USERS && rv == 0; u++) {
		if (chatfix_get(rc->cr->base, "/", NULL, NULL, &r) < 0 ||
		    chatfix_cookie(&r, rc->ck[u], sizeof(rc->ck[u])) < 0) {
			rv = -1;
			break;
		}
		snprintf(body, sizeof(body), "{\"channelOpen\":\"%s\"}", rc->cr->chans[u]);
		if (!race_post(rc, u, "/chat/channel-open", body))
			rv = -1;
	}
	http_resp_free(&r);
	return rv;
}

/* The writers for cr->seconds and the readers meanwhile. */
static void
race_threads(struct race *rc)
{
	pthread_t wt[RACE_WRITERS], rt[RACE_READERS];
	struct race_arg wa[RACE_WRITERS], ra[RACE_READERS];
	int i, nw = 0, nr = 0;

	for (i = 0; i < RACE_READERS; i++) {
		ra[i].rc = rc;
		ra[i].id = i;
		if (pthread_create(&rt[nr], NULL, race_reader, &ra[i]) == 0)
			nr++;
	}
	for (i = 0; i < RACE_WRITERS; i++) {
		wa[i].rc = rc;
		wa[i].id = i;
		if (pthread_create(&wt[nw], NULL, race_writer, &wa[i]) == 0)
			nw++;
	}
	for (i = 0; i < nw; i++)
		pthread_join(wt[i], NULL);
	__atomic_store_n(&rc->stop, 1, __ATOMIC_SEQ_CST);
	for (i = 0; i < nr; i++)
		pthread_join(rt[i], NULL);
}

int
chatrace_run(struct chatrace *cr)
{
	struct race *rc = calloc(1, sizeof(*rc));
	int u, i;

	if (rc == NULL)
		return -1;
	rc->cr = cr;
	pthread_mutex_init(&rc->mu, NULL);
	if (race_users(rc) < 0) {
		pthread_mutex_destroy(&rc->mu);
		free(rc);
		return -1;
	}
	race_threads(rc);
	cr->writes = rc->writes;
	cr->writes_ok = rc->writes_ok;
	cr->pages = rc->pages;
	cr->pages_ok = rc->pages_ok;
	cr->quiet = rc->quiet;
	cr->quiet_same = rc->quiet_same;
	cr->gz = rc->gz;
	cr->spliced = rc->spliced;
	cr->final = cr->final_same = 0;
	for (u = 0; u < CHATRACE_USERS; u++)
		for (i = 0; i < 4; i++, cr->final++)
			cr->final_same += chatfix_same_page(cr->base, cr->cached, "race, after",
			    rc->ck[u], i % 2);
	pthread_mutex_destroy(&rc->mu);
	free(rc);
	return 0;
}

void
chatrace_check(const struct chatrace *cr)
{
	printf("  %d of %d writes answered; %d of %d cached pages with every acknowledged "
	    "message; %d of %d in quiet moments the uncached bytes; %d of %d after; "
	    "%d of %d gzip pages from the cache\n", cr->writes_ok, cr->writes, cr->pages_ok,
	    cr->pages, cr->quiet_same, cr->quiet, cr->final_same, cr->final, cr->spliced, cr->gz);
	CHECK(cr->writes >= 40);
	CHECK_INT(cr->writes_ok, cr->writes);
	CHECK(cr->pages >= 20);
	CHECK_INT(cr->pages_ok, cr->pages);
	CHECK(cr->quiet >= 3);
	CHECK_INT(cr->quiet_same, cr->quiet);
	CHECK_INT(cr->final_same, cr->final);
	CHECK(cr->spliced > 0);
}
