/*
 * fuzz_realtime: the realtime endpoint's parsers of what it is sent (apps/records/
 * realtime.c) on hostile bytes: a subscription topic (realtime_topic_parse(), the
 * options=... the SDK appends, percent-decoded and parsed as JSON) and the records pool's
 * announcement (realtime_event_parse()).  The input is given to both, the topic cut at
 * its first NUL and at REALTIME_SUB_MAX + 1 bytes.
 *
 * Invariants: no crash, no read past the input; a topic accepted has a collection and a
 * record, neither with a '/', all its parts within REALTIME_SUB_MAX bytes, and parses the
 * same way twice; a topic refused leaves every part empty; an announcement accepted has
 * its collection and record, an action of the three, and a row only as an object.
 */
#include <assert.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "records/realtime.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static struct realtime_topic t1, t2;

static void
fuzz_topic(const uint8_t *data, size_t size)
{
	size_t n = size > REALTIME_SUB_MAX + 1 ? REALTIME_SUB_MAX + 1 : size;
	char *s = malloc(n + 1);
	int r1, r2;

	assert(s != NULL);
	memcpy(s, data, n);
	s[n] = '\0';
	r1 = realtime_topic_parse(s, &t1);
	r2 = realtime_topic_parse(s, &t2);
	assert(r1 == r2 && (r1 == 0 || r1 == -1));
	if (r1 == 0) {
		assert(t1.coll[0] != '\0' && t1.record[0] != '\0');
		assert(strchr(t1.coll, '/') == NULL && strchr(t1.record, '/') == NULL);
		assert(strlen(t1.expand) <= REALTIME_SUB_MAX && strlen(t1.fields) <=
		    REALTIME_SUB_MAX && strlen(t1.filter) <= REALTIME_SUB_MAX);
		assert(memcmp(&t1, &t2, sizeof(t1)) == 0);
	} else
		assert(t1.coll[0] == '\0' && t1.record[0] == '\0' && t1.expand[0] == '\0' &&
		    t1.fields[0] == '\0' && t1.filter[0] == '\0');
	free(s);
}

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct realtime_event ev;
	char *p = malloc(size ? size : 1);

	assert(p != NULL);
	if (size > 0)
		memcpy(p, data, size);
	fuzz_topic(data, size);
	if (realtime_event_parse(p, size, &ev) == 0) {
		assert(ev.coll_id[0] != '\0' && ev.record[0] != '\0' && ev.json != NULL);
		assert(ev.action == REALTIME_CREATE || ev.action == REALTIME_UPDATE ||
		    ev.action == REALTIME_DELETE);
		assert(ev.row == NULL || cJSON_IsObject(ev.row));
		realtime_event_free(&ev);
	} else
		assert(ev.json == NULL && ev.row == NULL);
	free(p);
	return 0;
}
