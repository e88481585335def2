/* test_realtimelib: the realtime endpoint's clients (apps/records/realtime.c): ids of 40
 * letters and digits, distinct; the table's cap; look-ups and removals among many
 * clients; and the subscription body's parser on good, malformed and hostile bodies
 * (table-driven); subscription topics with the SDK's options, and the records pool's
 * announcements, on good, malformed and hostile input. */
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

/* Topics as the SDK writes them, and malformed or hostile ones (table-driven). */
static void
test_topic(void)
{
	static const struct {
		const char *in;
		int rc;
		const char *coll, *record, *expand, *fields, *filter;
	} cases[] = {
		{ "posts/*", 0, "posts", "*", "", "", "" },
		{ "pbc_1125843985/abc123", 0, "pbc_1125843985", "abc123", "", "", "" },
		{ "posts/*?options=%7B%22query%22%3A%7B%22expand%22%3A%22author%22%2C%22fields"
		  "%22%3A%22id%2Ctitle%22%2C%22filter%22%3A%22title%3D'a%2Bb'%22%7D%2C%22headers"
		  "%22%3A%7B%7D%7D", 0, "posts", "*", "author", "id,title", "title='a+b'" },
		/* '+' is a space; other parameters and members are ignored. */
		{ "posts/x?a=1&options={\"query\":{\"expand\":\"a+b\",\"page\":2}}&b", 0,
		  "posts", "x", "a b", "", "" },
		{ "posts/x?options={\"query\":{\"expand\":5,\"fields\":null}}", 0, "posts", "x",
		  "", "", "" },
		{ "posts/x?options={\"query\":[1]}", 0, "posts", "x", "", "", "" },
		{ "posts/x?", 0, "posts", "x", "", "", "" },
		/* Malformed. */
		{ "posts", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/", -1, NULL, NULL, NULL, NULL, NULL },
		{ "/x", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/a/b", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts?x/y", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/x?options=%7", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/x?options=%zz", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/x?options=%00", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/x?options=[1]", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/x?options={", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/x?options=", -1, NULL, NULL, NULL, NULL, NULL },
		{ "posts/x?options={\"a\":{\"b\":{\"c\":{\"d\":{}}}}}", -1, NULL, NULL, NULL,
		  NULL, NULL },
	};
	static struct realtime_topic t;
	static char big[REALTIME_SUB_MAX + 10];
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = realtime_topic_parse(cases[i].in, &t);

		CHECK_INT(rc, cases[i].rc);
		if (rc != 0 || cases[i].rc != 0) {
			CHECK(t.coll[0] == '\0' && t.record[0] == '\0');
			continue;
		}
		CHECK_STR(t.coll, cases[i].coll);
		CHECK_STR(t.record, cases[i].record);
		CHECK_STR(t.expand, cases[i].expand);
		CHECK_STR(t.fields, cases[i].fields);
		CHECK_STR(t.filter, cases[i].filter);
	}
	/* Over the topic bound. */
	memset(big, 'a', sizeof(big) - 1);
	big[5] = '/';
	CHECK_INT(realtime_topic_parse(big, &t), -1);
	big[REALTIME_SUB_MAX] = '\0';
	CHECK_INT(realtime_topic_parse(big, &t), 0);
	CHECK_INT((int)strlen(t.record), REALTIME_SUB_MAX - 6);
}

/* Announcements: good, with and without a row, and malformed (table-driven). */
static void
test_event(void)
{
	static const struct {
		const char *in;
		int rc, action, row;
	} cases[] = {
		{ "{\"action\":\"create\",\"collection\":\"c1\",\"record\":\"r1\"}", 0,
		  REALTIME_CREATE, 0 },
		{ "{\"action\":\"update\",\"collection\":\"c1\",\"collectionName\":\"p\","
		  "\"record\":\"r1\"}", 0, REALTIME_UPDATE, 0 },
		{ "{\"action\":\"delete\",\"collection\":\"c1\",\"record\":\"r1\","
		  "\"row\":{\"id\":\"r1\",\"x\":null}}", 0, REALTIME_DELETE, 1 },
		/* A row that is not strings and nulls is no row. */
		{ "{\"action\":\"delete\",\"collection\":\"c1\",\"record\":\"r1\","
		  "\"row\":{\"id\":1}}", 0, REALTIME_DELETE, 0 },
		{ "{\"action\":\"delete\",\"collection\":\"c1\",\"record\":\"r1\","
		  "\"row\":[\"r1\"]}", 0, REALTIME_DELETE, 0 },
		{ "{\"action\":\"drop\",\"collection\":\"c1\",\"record\":\"r1\"}", -1, 0, 0 },
		{ "{\"action\":\"create\",\"collection\":\"\",\"record\":\"r1\"}", -1, 0, 0 },
		{ "{\"action\":\"create\",\"collection\":\"c1\"}", -1, 0, 0 },
		{ "{\"action\":\"create\",\"collection\":\"c\\u0000\",\"record\":\"r\"}",
		  -1, 0, 0 },
		{ "[]", -1, 0, 0 },
		{ "", -1, 0, 0 },
		{ "{\"action\":", -1, 0, 0 },
	};
	struct realtime_event ev;
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		int rc = realtime_event_parse(cases[i].in, strlen(cases[i].in), &ev);

		CHECK_INT(rc, cases[i].rc);
		if (rc != 0) {
			CHECK(ev.json == NULL && ev.row == NULL);
			continue;
		}
		CHECK_INT((int)ev.action, cases[i].action);
		CHECK_STR(ev.coll_id, "c1");
		CHECK_STR(ev.record, "r1");
		CHECK_INT(ev.row != NULL, cases[i].row);
		realtime_event_free(&ev);
	}
	CHECK_STR(realtime_action_name(REALTIME_DELETE), "delete");
}

int
main(void)
{
	RUN(test_table);
	RUN(test_body);
	RUN(test_bounds);
	RUN(test_topic);
	RUN(test_event);
	return harness_done();
}
