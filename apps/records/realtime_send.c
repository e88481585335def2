/*
 * realtime_send.c: a record event delivered to the realtime endpoint's clients (see
 * realtime.h).  For one announcement of the records pool (realtime_event_parse()), every
 * client subscribed to COLLECTION/RECORD_ID, or to every record of the collection ("*"),
 * the collection by name or id, gets the record as that client may see it: read by
 * rec_event_record() (read.h, the code of a GET of the record) with the client's auth,
 * under the list rule for "*" and the view rule for one record, with the topic's expand,
 * fields and filter; then the SSE event PocketBase sends,
 *   id:<clientId>\nevent:<the topic as subscribed>\ndata:{"action":"...","record":{...}}\n\n
 * A client that may not see the record gets nothing.
 *
 * The reads block the loop: one per distinct (auth, rule, expand, fields, filter) of an
 * event, up to REALTIME_SEEN_MAX distinct ones kept per event (past them each client's
 * read is its own).  A client's auth is its record read again at each event (a user
 * deleted since, or an auth collection gone, sees nothing).  A delete's record is read
 * from the columns its datagram carries (rec_event_record()'s captured row); a delete
 * announced without them is sent to no one.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <cjson/cJSON.h>

#include "arena.h"
#include "db.h"
#include "evfcgi.h"
#include "log.h"
#include "read.h"
#include "realtime.h"

int
realtime_reader_init(struct realtime_reader *rd, struct db *db, char *err, size_t errlen)
{
	memset(rd, 0, sizeof(*rd));
	rd->db = db;
	buf_init(&rd->th.sql, REC_SQL_MAX);
	buf_init(&rd->out, 1 << 20);
	buf_init(&rd->ev, 1 << 20);
	buf_init(&rd->key, 16384);
	resp_init(&rd->rs, 1 << 16);
	if ((rd->arena = arena_new(8 << 20)) == NULL ||
	    (rd->ev_arena = arena_new(1 << 20)) == NULL) {
		(void)snprintf(err, errlen, "out of memory");
		return -1;
	}
	if (db == NULL)
		return 0;
	if (colls_load(&rd->th.colls, db, err, errlen) < 0)
		return -1;
	rd->have_colls = 1;
	return 0;
}

/* The reads of the event just delivered, forgotten. */
static void
realtime_seen_clear(struct realtime_reader *rd)
{
	size_t i;

	for (i = 0; i < rd->nseen; i++) {
		free(rd->seen[i].key);
		free(rd->seen[i].json);
	}
	rd->nseen = 0;
}

void
realtime_reader_free(struct realtime_reader *rd)
{
	realtime_seen_clear(rd);
	if (rd->have_colls)
		colls_free(&rd->th.colls);
	if (rd->arena != NULL)
		arena_free(rd->arena);
	if (rd->ev_arena != NULL)
		arena_free(rd->ev_arena);
	buf_free(&rd->th.sql);
	buf_free(&rd->out);
	buf_free(&rd->ev);
	buf_free(&rd->key);
	resp_free(&rd->rs);
}

/* One event in delivery: what every client's read shares. */
struct realtime_job {
	struct realtime_reader *rd;
	const struct realtime_event *ev;
	struct coll *c;
	const struct rec_row *gone;	/* a delete's captured columns */
	unsigned long sent;
};

/* The delete's columns of ev->row as a row of c (arena memory): NULL when one is missing
 * or memory ran out. */
static struct rec_row *
realtime_gone_row(struct realtime_reader *rd, const struct coll *c, const cJSON *row)
{
	struct rec_row *r;
	size_t i;

	if ((r = arena_alloc(rd->ev_arena, sizeof(*r))) == NULL ||
	    (r->v = arena_alloc(rd->ev_arena, c->nfields * sizeof(*r->v))) == NULL ||
	    (r->len = arena_alloc(rd->ev_arena, c->nfields * sizeof(*r->len))) == NULL)
		return NULL;
	r->ex = NULL;
	for (i = 0; i < c->nfields; i++) {
		const cJSON *v = cJSON_GetObjectItemCaseSensitive(row, c->fields[i].name);

		if (v == NULL)
			return NULL;
		r->v[i] = cJSON_IsString(v) ? v->valuestring : NULL;
		r->len[i] = r->v[i] != NULL ? strlen(r->v[i]) : 0;
	}
	return r;
}

/* The query parameters of topic tp (expand, fields, filter: those it sets) into p[3]. */
static size_t
realtime_params(const struct realtime_topic *tp, struct req_param p[3])
{
	const char *const names[3] = { "expand", "fields", "filter" };
	const char *const vals[3] = { tp->expand, tp->fields, tp->filter };
	size_t i, n = 0;

	for (i = 0; i < 3; i++)
		if (vals[i][0] != '\0') {
			p[n].key = names[i];
			p[n].keylen = strlen(names[i]);
			p[n].val = vals[i];
			p[n].vallen = strlen(vals[i]);
			n++;
		}
	return n;
}

/*
 * Reads the event's record for client cl and topic tp under rule r into rd->out: 1
 * there, 0 hidden (the rule, the client's auth record gone), -1 an error (logged).
 */
static int
realtime_read(struct realtime_job *j, const struct realtime_client *cl,
    const struct realtime_topic *tp, enum coll_rule r)
{
	struct realtime_reader *rd = j->rd;
	struct req_param params[3];
	struct req rq;
	struct rec_ctx x;
	struct rec_row *arow;
	const struct coll *ac;
	int rc;

	arena_reset(rd->arena);
	memset(&rq, 0, sizeof(rq));
	rq.arena = rd->arena;
	rq.db = rd->db;
	rq.method = REQ_GET;
	rq.path = "";
	rq.query = "";
	rq.params = params;
	rq.nparams = realtime_params(tp, params);
	memset(&x, 0, sizeof(x));
	x.rq = &rq;
	x.rs = &rd->rs;
	x.t = &rd->th;
	x.c = j->c;
	x.f.now = time(NULL);
	x.f.rule = 1;
	buf_reset(&rd->out, 1 << 20);
	rc = 0;
	if (cl->auth_id[0] != '\0') {
		ac = colls_find(&rd->th.colls, cl->auth_coll, strlen(cl->auth_coll));
		if (ac == NULL || !ac->auth || (rc = rec_get(&x, ac, cl->auth_id,
		    strlen(cl->auth_id), "id", &arow)) <= 0)
			goto out;
		rec_auth_set(&x, ac, arow);
	}
	rc = rec_event_record(&x, j->ev->record, j->gone, r, &rd->out);
out:
	if (rc < 0)
		log_warn("realtime: %s/%s not sent to %s: %d %.*s", j->c->name, j->ev->record,
		    cl->id, rd->rs.status, (int)(rd->rs.body.len > 200 ? 200 : rd->rs.body.len),
		    rd->rs.body.data != NULL ? rd->rs.body.data : "");
	resp_reset(&rd->rs);
	return rc;
}

/*
 * The record for cl and tp under rule r, read once per distinct (auth, rule, options) of
 * the event: its JSON (borrowed until the event ends; *len bytes), or NULL when cl may
 * not see it.
 */
static const char *
realtime_record_for(struct realtime_job *j, const struct realtime_client *cl,
    const struct realtime_topic *tp, enum coll_rule r, size_t *len)
{
	struct realtime_reader *rd = j->rd;
	struct realtime_seen *s;
	size_t i;
	int rc;

	buf_reset(&rd->key, 16384);
	buf_printf(&rd->key, "%s\n%s\n%d\n%s\n%s\n%s", cl->auth_coll, cl->auth_id, (int)r,
	    tp->expand, tp->fields, tp->filter);
	for (i = 0; i < rd->nseen && !buf_failed(&rd->key); i++)
		if (strcmp(rd->seen[i].key, rd->key.data) == 0) {
			*len = rd->seen[i].len;
			return rd->seen[i].json;
		}
	rc = realtime_read(j, cl, tp, r);
	if (rd->nseen < REALTIME_SEEN_MAX && !buf_failed(&rd->key)) {
		s = &rd->seen[rd->nseen];
		s->json = NULL;
		s->len = 0;
		if ((s->key = strdup(rd->key.data)) != NULL &&
		    (rc <= 0 || (s->json = strndup(rd->out.data, rd->out.len)) != NULL)) {
			s->len = rc > 0 ? rd->out.len : 0;
			rd->nseen++;
		} else
			free(s->key);
	}
	*len = rd->out.len;
	return rc > 0 ? rd->out.data : NULL;
}

/* 1 when topic tp names the event's record: its collection by name or id, and "*" or
 * the record's id; *r then the rule that applies. */
static int
realtime_topic_matches(const struct realtime_job *j, const struct realtime_topic *tp,
    enum coll_rule *r)
{
	if (strcmp(tp->coll, j->c->name) != 0 && strcmp(tp->coll, j->c->id) != 0)
		return 0;
	if (strcmp(tp->record, "*") == 0) {
		*r = COLL_RULE_LIST;
		return 1;
	}
	*r = COLL_RULE_VIEW;
	return strcmp(tp->record, j->ev->record) == 0;
}

/* 1 when topic s may name collection c (a cheap test before the parse). */
static int
realtime_topic_of(const char *s, const struct coll *c)
{
	size_t n = strlen(c->name), m = strlen(c->id);

	return (strncmp(s, c->name, n) == 0 && s[n] == '/') ||
	    (strncmp(s, c->id, m) == 0 && s[m] == '/');
}

/* Sends the event to cl for each of its topics that names it and may show it. */
static void
realtime_send_client(void *ctx, struct realtime_client *cl)
{
	struct realtime_job *j = ctx;
	struct realtime_reader *rd = j->rd;
	struct realtime_topic tp;
	enum coll_rule r;
	const char *json;
	size_t i, len;

	for (i = 0; i < cl->nsubs; i++) {
		if (!realtime_topic_of(cl->subs[i], j->c) ||
		    realtime_topic_parse(cl->subs[i], &tp) < 0 ||
		    !realtime_topic_matches(j, &tp, &r) ||
		    (json = realtime_record_for(j, cl, &tp, r, &len)) == NULL)
			continue;
		buf_reset(&rd->ev, 1 << 20);
		buf_printf(&rd->ev, "id:%s\nevent:%s\ndata:{\"action\":\"%s\",\"record\":", cl->id,
		    cl->subs[i], realtime_action_name(j->ev->action));
		buf_append(&rd->ev, json, len);
		buf_puts(&rd->ev, "}\n\n");
		/* A stream that cannot take it is dropped by the write; gone() follows. */
		if (!buf_failed(&rd->ev) && evfcgi_write(cl->stream, rd->ev.data,
		    rd->ev.len) == 0)
			j->sent++;
	}
}

void
realtime_deliver(struct realtime_reader *rd, struct realtime *rt, const char *p, size_t n)
{
	struct realtime_event ev;
	struct realtime_job j;

	if (rd->db == NULL) {
		log_debug("realtime: no database (db=): an event sent to no one");
		return;
	}
	if (realtime_event_parse(p, n, &ev) < 0) {
		log_warn("realtime: an announcement that is not one dropped (%zu bytes)", n);
		return;
	}
	memset(&j, 0, sizeof(j));
	j.rd = rd;
	j.ev = &ev;
	arena_reset(rd->ev_arena);
	if ((j.c = colls_find(&rd->th.colls, ev.coll_id, strlen(ev.coll_id))) == NULL)
		goto out;
	if (ev.action == REALTIME_DELETE && (ev.row == NULL ||
	    (j.gone = realtime_gone_row(rd, j.c, ev.row)) == NULL)) {
		log_warn("realtime: the delete of %s/%s came without its record: sent to no one",
		    j.c->name, ev.record);
		goto out;
	}
	realtime_each(rt, realtime_send_client, &j);
	log_debug("realtime: %s %s/%s sent %lu times", realtime_action_name(ev.action),
	    j.c->name, ev.record, j.sent);
out:
	realtime_seen_clear(rd);
	realtime_event_free(&ev);
}
