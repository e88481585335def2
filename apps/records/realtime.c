/*
 * realtime.c: the realtime endpoint's clients and their subscriptions (see realtime.h).
 *
 * The table is an array of hash chains, sized once for its maximum (about one chain a
 * client), so that a look-up stays a few comparisons at 10,000 clients and nothing is
 * rehashed while streams are open.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "json.h"
#include "realtime.h"
#include "str.h"
#include "token.h"

struct realtime {
	struct realtime_client **chain;
	size_t nchains;			/* a power of two */
	size_t n, max;
};

struct realtime *
realtime_new(size_t max)
{
	struct realtime *rt = calloc(1, sizeof(*rt));
	size_t n = 16;

	if (rt == NULL)
		return NULL;
	while (n < max && n < ((size_t)1 << 24))
		n *= 2;
	/* NOLINTNEXTLINE(bugprone-sizeof-expression): an array of pointers */
	if ((rt->chain = calloc(n, sizeof(*rt->chain))) == NULL) {
		free(rt);
		return NULL;
	}
	rt->nchains = n;
	rt->max = max;
	return rt;
}

/* The topics of cl freed. */
static void
realtime_subs_free(char **subs, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++)
		free(subs[i]);
	free(subs);
}

void
realtime_free(struct realtime *rt)
{
	struct realtime_client *cl;
	size_t i;

	if (rt == NULL)
		return;
	for (i = 0; i < rt->nchains; i++)
		while ((cl = rt->chain[i]) != NULL) {
			rt->chain[i] = cl->next;
			realtime_subs_free(cl->subs, cl->nsubs);
			free(cl);
		}
	free(rt->chain);
	free(rt);
}

/* FNV-1a of id[0..len), to its chain. */
static size_t
realtime_chain_of(const struct realtime *rt, const char *id, size_t len)
{
	uint32_t h = 2166136261u;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)id[i]) * 16777619u;
	return h & (rt->nchains - 1);
}

struct realtime_client *
realtime_find(const struct realtime *rt, const char *id, size_t len)
{
	struct realtime_client *cl;

	if (len != REALTIME_ID_LEN)
		return NULL;
	for (cl = rt->chain[realtime_chain_of(rt, id, len)]; cl != NULL; cl = cl->next)
		if (memcmp(cl->id, id, len) == 0)
			return cl;
	return NULL;
}

struct realtime_client *
realtime_add(struct realtime *rt, void *stream)
{
	struct realtime_client *cl;
	size_t c;

	if (rt->n >= rt->max) {
		errno = EAGAIN;
		return NULL;
	}
	if ((cl = calloc(1, sizeof(*cl))) == NULL)
		return NULL;
	/* 62^40 ids: a collision is never seen, but costs only another draw. */
	do {
		if (token_random_alnum(cl->id, REALTIME_ID_LEN) < 0) {
			free(cl);
			return NULL;
		}
		cl->id[REALTIME_ID_LEN] = '\0';
	} while (realtime_find(rt, cl->id, REALTIME_ID_LEN) != NULL);
	cl->stream = stream;
	c = realtime_chain_of(rt, cl->id, REALTIME_ID_LEN);
	cl->next = rt->chain[c];
	rt->chain[c] = cl;
	rt->n++;
	return cl;
}

void
realtime_remove(struct realtime *rt, struct realtime_client *cl)
{
	struct realtime_client **p = &rt->chain[realtime_chain_of(rt, cl->id,
	    REALTIME_ID_LEN)];

	for (; *p != NULL; p = &(*p)->next)
		if (*p == cl) {
			*p = cl->next;
			rt->n--;
			break;
		}
	realtime_subs_free(cl->subs, cl->nsubs);
	free(cl);
}

size_t
realtime_count(const struct realtime *rt)
{
	return rt->n;
}

void
realtime_each(struct realtime *rt, void (*fn)(void *ctx, struct realtime_client *cl),
    void *ctx)
{
	struct realtime_client *cl;
	size_t i;

	for (i = 0; i < rt->nchains; i++)
		for (cl = rt->chain[i]; cl != NULL; cl = cl->next)
			fn(ctx, cl);
}

/* 1 when s may name a client: 1 to REALTIME_NAMED_MAX bytes (realtime_find() tells
 * whether one has that id). */
static int
realtime_id_valid(const char *s)
{
	size_t n = strlen(s);

	return n > 0 && n <= REALTIME_NAMED_MAX;
}

/* 1 when s is a topic within the limits: 1 to REALTIME_SUB_MAX bytes of printable
 * ASCII. */
static int
realtime_sub_valid(const char *s)
{
	size_t i;

	for (i = 0; s[i] != '\0'; i++)
		if (i >= REALTIME_SUB_MAX || (unsigned char)s[i] < 0x20 ||
		    (unsigned char)s[i] > 0x7e)
			return 0;
	return i > 0;
}

/* set's topics from the array a.  REALTIME_OK, or the error (set's topics freed). */
static enum realtime_err
realtime_subs_parse(const cJSON *a, struct realtime_set *set)
{
	const cJSON *e;
	int n;

	if (a == NULL || cJSON_IsNull(a))
		return REALTIME_OK;
	if (!cJSON_IsArray(a) || (n = cJSON_GetArraySize(a)) > REALTIME_SUBS_MAX)
		return REALTIME_ESUBS;
	if (n == 0)
		return REALTIME_OK;
	if ((set->subs = calloc((size_t)n, sizeof(*set->subs))) == NULL)
		return REALTIME_ENOMEM;
	cJSON_ArrayForEach(e, a) {
		if (!cJSON_IsString(e) || !realtime_sub_valid(e->valuestring))
			return REALTIME_ESUBS;
		if ((set->subs[set->nsubs] = strdup(e->valuestring)) == NULL)
			return REALTIME_ENOMEM;
		set->nsubs++;
	}
	return REALTIME_OK;
}

enum realtime_err
realtime_body_parse(const char *body, size_t len, struct realtime_set *set,
    const char **field)
{
	enum realtime_err rc = REALTIME_EBODY;
	enum json_err jerr = JSON_OK;
	const cJSON *id;
	cJSON *v;

	memset(set, 0, sizeof(*set));
	if (field != NULL)
		*field = NULL;
	/* cJSON would cut a string at an escaped NUL: such a body is refused whole. */
	if (json_has_nul_escape(body, len) ||
	    (v = json_parse(body, len, 4, &jerr, NULL)) == NULL)
		return jerr == JSON_ENOMEM ? REALTIME_ENOMEM : REALTIME_EBODY;
	if (!cJSON_IsObject(v))
		goto out;
	id = cJSON_GetObjectItemCaseSensitive(v, "clientId");
	if (!cJSON_IsString(id) || !realtime_id_valid(id->valuestring)) {
		rc = REALTIME_EID;
		if (field != NULL)
			*field = "clientId";
		goto out;
	}
	memcpy(set->client_id, id->valuestring, strlen(id->valuestring) + 1);
	rc = realtime_subs_parse(cJSON_GetObjectItemCaseSensitive(v, "subscriptions"), set);
	if (rc == REALTIME_ESUBS && field != NULL)
		*field = "subscriptions";
out:
	cJSON_Delete(v);
	if (rc != REALTIME_OK)
		realtime_set_free(set);
	return rc;
}

void
realtime_set_free(struct realtime_set *set)
{
	realtime_subs_free(set->subs, set->nsubs);
	set->subs = NULL;
	set->nsubs = 0;
}

void
realtime_subs_set(struct realtime_client *cl, struct realtime_set *set)
{
	realtime_subs_free(cl->subs, cl->nsubs);
	cl->subs = set->subs;
	cl->nsubs = set->nsubs;
	set->subs = NULL;
	set->nsubs = 0;
}

/* Copies the string member name of query q, if it is one, into out (of REALTIME_SUB_MAX
 * + 1 bytes; a longer one cannot come from a topic of that size). */
static void
realtime_opt(const cJSON *q, const char *name, char *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(q, name);
	size_t n;

	if (!cJSON_IsString(v) || (n = strlen(v->valuestring)) > REALTIME_SUB_MAX)
		return;
	memcpy(out, v->valuestring, n + 1);
}

/* The options=JSON of a topic's query q[0..n): 0, or -1 when malformed. */
static int
realtime_options(const char *q, size_t n, struct realtime_topic *t)
{
	char dec[REALTIME_SUB_MAX + 1];
	const char *p = q, *end = q + n, *amp;
	enum json_err jerr;
	cJSON *v, *query;
	long len;

	for (; p < end; p = amp + 1) {
		if ((amp = memchr(p, '&', (size_t)(end - p))) == NULL)
			amp = end;
		if ((size_t)(amp - p) < 8 || memcmp(p, "options=", 8) != 0)
			continue;
		/* Percent-decoded, '+' a space; a NUL refused. */
		if ((len = str_pct_decode(p + 8, (size_t)(amp - p - 8), dec, 1)) < 0 ||
		    (v = json_parse(dec, (size_t)len, 4, &jerr, NULL)) == NULL)
			return -1;
		if (!cJSON_IsObject(v)) {
			cJSON_Delete(v);
			return -1;
		}
		query = cJSON_GetObjectItemCaseSensitive(v, "query");
		if (cJSON_IsObject(query)) {
			realtime_opt(query, "expand", t->expand);
			realtime_opt(query, "fields", t->fields);
			realtime_opt(query, "filter", t->filter);
		}
		cJSON_Delete(v);
	}
	return 0;
}

int
realtime_topic_parse(const char *s, struct realtime_topic *t)
{
	const char *q, *slash;
	size_t n = strlen(s), pathlen;

	memset(t, 0, sizeof(*t));
	if (n > REALTIME_SUB_MAX)
		return -1;
	q = strchr(s, '?');
	pathlen = q != NULL ? (size_t)(q - s) : n;
	if ((slash = memchr(s, '/', pathlen)) == NULL || slash == s ||
	    (size_t)(slash - s) + 1 >= pathlen ||
	    memchr(slash + 1, '/', pathlen - (size_t)(slash - s) - 1) != NULL)
		return -1;
	memcpy(t->coll, s, (size_t)(slash - s));
	memcpy(t->record, slash + 1, pathlen - (size_t)(slash - s) - 1);
	if (q != NULL && realtime_options(q + 1, n - pathlen - 1, t) < 0) {
		memset(t, 0, sizeof(*t));
		return -1;
	}
	return 0;
}

/* Copies the string member name of o into out (REALTIME_SUB_MAX + 1 bytes): 0, or -1
 * when it is not a string of 1 to REALTIME_SUB_MAX bytes. */
static int
realtime_member(const cJSON *o, const char *name, char *out)
{
	const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, name);
	size_t n;

	if (!cJSON_IsString(v) || (n = strlen(v->valuestring)) == 0 || n > REALTIME_SUB_MAX)
		return -1;
	memcpy(out, v->valuestring, n + 1);
	return 0;
}

/* 1 when o is an object whose members are all strings or nulls. */
static int
realtime_row_ok(const cJSON *o)
{
	const cJSON *e;

	if (!cJSON_IsObject(o))
		return 0;
	cJSON_ArrayForEach(e, o)
		if (!cJSON_IsString(e) && !cJSON_IsNull(e))
			return 0;
	return 1;
}

int
realtime_event_parse(const char *p, size_t n, struct realtime_event *ev)
{
	static const char *const names[] = { "create", "update", "delete" };
	enum json_err jerr;
	char action[REALTIME_SUB_MAX + 1];
	cJSON *v;
	size_t i;

	memset(ev, 0, sizeof(*ev));
	if (json_has_nul_escape(p, n) || (v = json_parse(p, n, 4, &jerr, NULL)) == NULL)
		return -1;
	if (!cJSON_IsObject(v) || realtime_member(v, "action", action) < 0 ||
	    realtime_member(v, "collection", ev->coll_id) < 0 ||
	    realtime_member(v, "record", ev->record) < 0)
		goto bad;
	for (i = 0; i < 3 && strcmp(action, names[i]) != 0; i++)
		;
	if (i == 3)
		goto bad;
	ev->action = (enum realtime_action)i;
	ev->json = v;
	ev->row = cJSON_GetObjectItemCaseSensitive(v, "row");
	if (!realtime_row_ok(ev->row))
		ev->row = NULL;
	return 0;
bad:
	cJSON_Delete(v);
	memset(ev, 0, sizeof(*ev));
	return -1;
}

void
realtime_event_free(struct realtime_event *ev)
{
	cJSON_Delete(ev->json);
	ev->json = NULL;
	ev->row = NULL;
}

const char *
realtime_action_name(enum realtime_action a)
{
	return a == REALTIME_CREATE ? "create" : a == REALTIME_UPDATE ? "update" : "delete";
}
