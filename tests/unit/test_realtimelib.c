/* test_realtimelib: the realtime endpoint's clients (apps/records/realtime.c): ids of 40
 * letters and digits, distinct; the table's cap; look-ups and removals among many
 * clients; and the subscription body's parser on good, malformed and hostile bodies
 * (table-driven). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "records/realtime.h"
#include "../lib/harness.h"

static void
test_table(void)
{
	struct realtime *rt = realtime_new(3000);
	static struct realtime_client *cl[3000];
	struct realtime_client *more;
	int i, j, streams[3000];

	if (rt == NULL) {
		CHECK(!"table made");
		return;
	}
	for (i = 0; i < 3000; i++) {
		cl[i] = realtime_add(rt, &streams[i]);
		CHECK(cl[i] != NULL);
		if (cl[i] == NULL)
			goto out;
		CHECK_INT((int)strlen(cl[i]->id), 40);
		for (j = 0; j < 40; j++)
			CHECK(strchr("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
			    "0123456789", cl[i]->id[j]) != NULL);
	}
	CHECK_INT((int)realtime_count(rt), 3000);
	/* Full: refused with EAGAIN. */
	errno = 0;
	more = realtime_add(rt, NULL);
	CHECK(more == NULL && errno == EAGAIN);
	for (i = 0; i < 3000; i++)
		CHECK(realtime_find(rt, cl[i]->id, 40) == cl[i] && cl[i]->stream == &streams[i]);
	CHECK(realtime_find(rt, cl[0]->id, 39) == NULL);
	/* Every other one removed: the others are still found, the removed ones not. */
	for (i = 0; i < 3000; i += 2) {
		char id[41];

		memcpy(id, cl[i]->id, sizeof(id));
		realtime_remove(rt, cl[i]);
		CHECK(realtime_find(rt, id, 40) == NULL);
	}
	for (i = 1; i < 3000; i += 2)
		CHECK(realtime_find(rt, cl[i]->id, 40) == cl[i]);
	CHECK_INT((int)realtime_count(rt), 1500);
	CHECK(realtime_add(rt, NULL) != NULL);
out:
	realtime_free(rt);
}

static void
test_body(void)
{
	static const struct {
		const char *body;
		enum realtime_err want;
		const char *field;
		size_t nsubs;
	} cases[] = {
		{ "{\"clientId\":\"abc\",\"subscriptions\":[\"posts/*\",\"a?options=%7B%7D\"]}",
		    REALTIME_OK, NULL, 2 },
		{ "{\"clientId\":\"abc\"}", REALTIME_OK, NULL, 0 },
		{ "{\"clientId\":\"abc\",\"subscriptions\":null}", REALTIME_OK, NULL, 0 },
		{ "{\"clientId\":\"abc\",\"subscriptions\":[]}", REALTIME_OK, NULL, 0 },
		{ "", REALTIME_EBODY, NULL, 0 },
		{ "{", REALTIME_EBODY, NULL, 0 },
		{ "[]", REALTIME_EBODY, NULL, 0 },
		{ "\"x\"", REALTIME_EBODY, NULL, 0 },
		{ "{\"clientId\":\"abc\"} trailing", REALTIME_EBODY, NULL, 0 },
		{ "{\"clientId\":\"a\\u0000b\"}", REALTIME_EBODY, NULL, 0 },
		{ "{\"a\":[[[[[1]]]]]}", REALTIME_EBODY, NULL, 0 },
		{ "{}", REALTIME_EID, "clientId", 0 },
		{ "{\"clientId\":\"\"}", REALTIME_EID, "clientId", 0 },
		{ "{\"clientId\":1}", REALTIME_EID, "clientId", 0 },
		{ "{\"clientId\":null}", REALTIME_EID, "clientId", 0 },
		{ "{\"clientId\":\"a\",\"subscriptions\":\"posts\"}", REALTIME_ESUBS,
		    "subscriptions", 0 },
		{ "{\"clientId\":\"a\",\"subscriptions\":[1]}", REALTIME_ESUBS, "subscriptions", 0 },
		{ "{\"clientId\":\"a\",\"subscriptions\":[\"ok\",{}]}", REALTIME_ESUBS,
		    "subscriptions", 0 },
		{ "{\"clientId\":\"a\",\"subscriptions\":[\"\"]}", REALTIME_ESUBS, "subscriptions",
		    0 },
		{ "{\"clientId\":\"a\",\"subscriptions\":[\"a\\nb\"]}", REALTIME_ESUBS,
		    "subscriptions", 0 },
		{ "{\"clientId\":\"a\",\"subscriptions\":[\"caf\\u00e9\"]}", REALTIME_ESUBS,
		    "subscriptions", 0 },
	};
	struct realtime_set set;
	const char *field;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		enum realtime_err e = realtime_body_parse(cases[i].body, strlen(cases[i].body),
		    &set, &field);

		if (e != cases[i].want)
			harness_fail(__FILE__, __LINE__, "case %zu: %s: %d, want %d", i,
			    cases[i].body, (int)e, (int)cases[i].want);
		if (cases[i].field != NULL)
			CHECK(field != NULL && strcmp(field, cases[i].field) == 0);
		CHECK_INT((int)set.nsubs, (int)cases[i].nsubs);
		if (e == REALTIME_OK)
			CHECK_STR(set.client_id, "abc");
		realtime_set_free(&set);
	}
}

/* The bounds: 1000 topics of 2500 bytes pass; one more topic or one more byte does not;
 * a clientId of 255 bytes may be named, 256 not. */
static void
test_bounds(void)
{
	struct realtime *rt = realtime_new(1);
	struct realtime_client *cl;
	struct realtime_set set;
	size_t cap = 4 * 1024 * 1024;
	char *body = malloc(cap), *p;
	int i;

	if (body == NULL || rt == NULL || (cl = realtime_add(rt, NULL)) == NULL) {
		CHECK(!"made");
		goto out;
	}
	p = body + snprintf(body, cap, "{\"clientId\":\"%s\",\"subscriptions\":[", cl->id);
	for (i = 0; i < 1000; i++) {
		*p++ = i ? ',' : '"';
		if (i)
			*p++ = '"';
		memset(p, 'x', 2500);
		p += 2500;
		*p++ = '"';
	}
	memcpy(p, "]}", 3);
	CHECK_INT(realtime_body_parse(body, strlen(body), &set, NULL), REALTIME_OK);
	CHECK_INT((int)set.nsubs, 1000);
	realtime_subs_set(cl, &set);
	CHECK_INT((int)cl->nsubs, 1000);
	CHECK(set.subs == NULL && set.nsubs == 0);
	memcpy(p, ",\"y\"]}", 7);
	CHECK_INT(realtime_body_parse(body, strlen(body), &set, NULL), REALTIME_ESUBS);
	/* The last topic one byte longer. */
	memcpy(p - 1, "x\"]}", 5);
	CHECK_INT(realtime_body_parse(body, strlen(body), &set, NULL), REALTIME_ESUBS);
	p = body + snprintf(body, cap, "{\"clientId\":\"");
	memset(p, 'a', 255);
	memcpy(p + 255, "\"}", 3);
	CHECK_INT(realtime_body_parse(body, strlen(body), &set, NULL), REALTIME_OK);
	CHECK_INT((int)strlen(set.client_id), 255);
	CHECK(realtime_find(rt, set.client_id, strlen(set.client_id)) == NULL);
	realtime_set_free(&set);
	memset(p, 'a', 256);
	memcpy(p + 256, "\"}", 3);
	CHECK_INT(realtime_body_parse(body, strlen(body), &set, NULL), REALTIME_EID);
out:
	free(body);
	realtime_free(rt);
}

int
main(void)
{
	RUN(test_table);
	RUN(test_body);
	RUN(test_bounds);
	return harness_done();
}
