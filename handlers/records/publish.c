/*
 * publish.c: a committed create, update or delete announced to the realtime pool.  After
 * the write's commit and before its answer, the worker sends one datagram,
 *   {"action":"create","collection":"<collection id>","collectionName":"<name>",
 *    "record":"<record id>"}
 * on the unix datagram socket SLUICE_REALTIME_SOCKET (realtime_socket= on both pools'
 * lines), with MSG_DONTWAIT: a socket that is absent, not bound or full drops the
 * datagram, which is counted and never fails, slows or delays the write.  A write inside
 * POST /api/batch is not announced (its commit is the batch's, after it).  A create's or
 * an update's datagram carries no field of the record: the realtime worker reads the
 * record again under each subscriber's rules.  A delete's record is gone by then, so its
 * datagram also carries the record's columns as the DELETE returned them, as text by
 * field name ("row":{"id":"...","title":"...","author":"...",...}, null for SQL NULL and
 * for an auth record's password and tokenKey, which no rule reads and no event shows),
 * for the rules to be checked against; a datagram that would pass REC_PUB_MAX bytes goes
 * without them (logged), and the realtime worker sends that delete to no one.
 */
#include <errno.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "buf.h"
#include "json.h"
#include "log.h"
#include "records.h"
#include "settings.h"

static int rec_pub_fd = -1;
static struct sockaddr_un rec_pub_addr;
static atomic_ulong rec_pub_dropped;

int
rec_publish_init(void)
{
	const char *path = settings_get(SETTING_REALTIME_SOCKET);

	if (path == NULL || *path == '\0')
		return 0;
	if (strlen(path) >= sizeof(rec_pub_addr.sun_path)) {
		fprintf(stderr, "records: realtime_socket: the path is too long\n");
		return -1;
	}
	memset(&rec_pub_addr, 0, sizeof(rec_pub_addr));
	rec_pub_addr.sun_family = AF_UNIX;
	memcpy(rec_pub_addr.sun_path, path, strlen(path) + 1);
	/* Opened now: the system call filter that applies later forbids socket(). */
	if ((rec_pub_fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0)) < 0) {
		fprintf(stderr, "records: realtime_socket: %s\n", strerror(errno));
		return -1;
	}
	return 0;
}

/* 1 when s is made of the characters of an id (nothing a JSON string must escape). */
static int
rec_pub_plain(const char *s)
{
	if (*s == '\0')
		return 0;
	for (; *s != '\0'; s++)
		if (!((*s >= 'a' && *s <= 'z') || (*s >= 'A' && *s <= 'Z') ||
		    (*s >= '0' && *s <= '9') || *s == '_' || *s == '-'))
			return 0;
	return 1;
}

/* Appends ,"row":{"field":"text"|null,...}: row's columns by field name, as text. */
static void
rec_pub_row(struct buf *b, const struct coll *c, const struct rec_row *row)
{
	size_t i;

	buf_puts(b, ",\"row\":{");
	for (i = 0; i < c->nfields; i++) {
		if (i > 0)
			buf_putc(b, ',');
		json_escape(b, c->fields[i].name, strlen(c->fields[i].name));
		buf_putc(b, ':');
		/* A hidden field (an auth record's password hash, its tokenKey) no rule reads
		 * and no event shows: it does not leave the records worker. */
		if (row->v[i] == NULL || c->fields[i].hidden)
			buf_puts(b, "null");
		else
			json_escape(b, row->v[i], row->len[i]);
	}
	buf_putc(b, '}');
}

void
rec_publish_row(const struct coll *c, const char *action, const char *id,
    const struct rec_row *row)
{
	struct buf b;

	if (rec_pub_fd < 0)
		return;
	buf_init(&b, REC_PUB_MAX);
	if (!rec_pub_plain(c->id) || !rec_pub_plain(c->name) || !rec_pub_plain(id))
		goto drop;
	buf_printf(&b, "{\"action\":\"%s\",\"collection\":\"%s\",\"collectionName\":\"%s\","
	    "\"record\":\"%s\"", action, c->id, c->name, id);
	if (row != NULL)
		rec_pub_row(&b, c, row);
	if (buf_failed(&b) || b.len + 1 > REC_PUB_MAX) {
		/* Over the bound: announced without its columns, which the realtime worker
		 * then sends to no one (a deleted record it cannot check). */
		log_warn("records: a realtime event of %s/%s is over %d bytes: sent without its "
		    "record", c->name, id, REC_PUB_MAX);
		buf_free(&b);
		buf_init(&b, REC_PUB_MAX);
		buf_printf(&b, "{\"action\":\"%s\",\"collection\":\"%s\","
		    "\"collectionName\":\"%s\",\"record\":\"%s\"", action, c->id, c->name, id);
	}
	buf_putc(&b, '}');
	if (buf_failed(&b))
		goto drop;
	/* Never waits: a reader that is gone or behind loses the event, not the writer. */
	if (sendto(rec_pub_fd, b.data, b.len, MSG_DONTWAIT | MSG_NOSIGNAL,
	    (const struct sockaddr *)&rec_pub_addr, sizeof(rec_pub_addr)) == (ssize_t)b.len) {
		buf_free(&b);
		return;
	}
drop:
	buf_free(&b);
	/* Logged at the first drop and at every 1,000th, so a reader that is down does not
	 * flood the log. */
	if (atomic_fetch_add(&rec_pub_dropped, 1) % 1000 == 0)
		log_warn("records: a realtime event dropped (%lu so far)",
		    (unsigned long)atomic_load(&rec_pub_dropped));
}

void
rec_publish(const struct coll *c, const char *action, const char *id)
{
	rec_publish_row(c, action, id, NULL);
}

unsigned long
rec_publish_dropped(void)
{
	return (unsigned long)atomic_load(&rec_pub_dropped);
}
