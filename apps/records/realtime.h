/*
 * realtime.h: the realtime endpoint's clients, in PocketBase's dialect: each connected
 * client has an id of 40 random letters and digits (as PocketBase makes it), the stream
 * it listens on, and the topics it subscribed to (a collection's name and "/" and a
 * record's id, or "*" for every record, with an optional "?options=..." that PocketBase's
 * SDK adds), which a POST /api/realtime sets.
 *
 * The clients live in the memory of the one process of the realtime pool (stream=1 pools
 * run one process: supervisor/conf.h), in a hash table keyed by id, at most a set number
 * at once.  Nothing here writes to a stream: the handler (handlers/realtime.c) does, with
 * the stream pointer each client keeps.
 *
 * Limits of a subscription request (sluice's, checked before anything is kept): at most
 * REALTIME_SUBS_MAX topics of REALTIME_SUB_MAX bytes each, of printable ASCII, the body a
 * JSON object of nesting at most 4.
 *
 *   realtime.c       the clients' table, the subscription body, topics and announcements
 *   realtime_send.c  an announced record sent to each subscriber as it may see it
 */
#ifndef SLUICE_RECORDS_REALTIME_H
#define SLUICE_RECORDS_REALTIME_H

#include <stddef.h>

#include "read.h"

struct cJSON;

#define REALTIME_ID_LEN		40
#define REALTIME_SUBS_MAX	1000
#define REALTIME_SUB_MAX	2500
/* A clientId a request may name, at most (PocketBase's bound); only REALTIME_ID_LEN
 * letters and digits can be a client, any other is answered 404. */
#define REALTIME_NAMED_MAX	255

struct realtime;

struct realtime_client {
	char id[REALTIME_ID_LEN + 1];
	void *stream;			/* the handler's, borrowed */
	char **subs;			/* the topics, owned */
	size_t nsubs;
	struct realtime_client *next;	/* the hash chain */
	/* Who subscribed: the verified token's collection id and record id of the first
	 * POST that carried one (empty: no one yet).  A later POST with another (or none)
	 * is refused, as PocketBase refuses it. */
	char auth_coll[64];
	char auth_id[64];
};

/* A subscription request's body, parsed (realtime_body_parse()). */
struct realtime_set {
	char client_id[REALTIME_NAMED_MAX + 1];
	char **subs;			/* owned until realtime_subs_set() takes them */
	size_t nsubs;
};

enum realtime_err {
	REALTIME_OK = 0,
	REALTIME_EBODY,		/* not a JSON object: 400, PocketBase's "loading" error */
	REALTIME_EID,		/* clientId missing, not a string, empty or too long: 400 */
	REALTIME_ESUBS,		/* subscriptions not an array of strings within the limits */
	REALTIME_ENOMEM,
};

/* A table of at most max clients; NULL when out of memory.  Free with realtime_free(),
 * which frees every client left. */
struct realtime *realtime_new(size_t max);
void realtime_free(struct realtime *rt);

/*
 * A new client listening on stream, with a fresh random id and no topic.  Returns it
 * (owned by the table until realtime_remove()), or NULL when the table is full (errno
 * EAGAIN) or memory or randomness ran out.
 */
struct realtime_client *realtime_add(struct realtime *rt, void *stream);

/* The client of id[0..len), or NULL. */
struct realtime_client *realtime_find(const struct realtime *rt, const char *id, size_t len);

/* Removes cl from the table and frees it. */
void realtime_remove(struct realtime *rt, struct realtime_client *cl);

/* The clients in the table. */
size_t realtime_count(const struct realtime *rt);

/* Calls fn for every client (fn may not add or remove clients). */
void realtime_each(struct realtime *rt, void (*fn)(void *ctx, struct realtime_client *cl),
    void *ctx);

/*
 * Parses the body of POST /api/realtime, {"clientId":"...","subscriptions":["..."]}
 * (subscriptions may be absent or null: none), into set.  On an error *field (may be
 * NULL) names the member at fault.  REALTIME_OK with set filled (free it with
 * realtime_set_free() unless realtime_subs_set() took it), or the error with set empty.
 */
enum realtime_err realtime_body_parse(const char *body, size_t len, struct realtime_set *set,
    const char **field);
void realtime_set_free(struct realtime_set *set);

/* Replaces cl's topics with set's (which it takes: set is left empty). */
void realtime_subs_set(struct realtime_client *cl, struct realtime_set *set);

/*
 * A topic as a client subscribed it, taken apart: "COLLECTION/RECORD" ("*" for every
 * record), then optionally "?...&options=JSON..." as PocketBase's SDK appends it
 * (percent-encoded {"query":{"expand":"...","fields":"...","filter":"..."},
 * "headers":{...}}; other query members and the headers are ignored, a query value that
 * is not a string too).  Each part is a NUL-terminated copy, "" when absent.
 */
struct realtime_topic {
	char coll[REALTIME_SUB_MAX + 1];	/* the collection, by name or id */
	char record[REALTIME_SUB_MAX + 1];	/* "*" or a record id */
	char expand[REALTIME_SUB_MAX + 1];
	char fields[REALTIME_SUB_MAX + 1];
	char filter[REALTIME_SUB_MAX + 1];
};

/*
 * Parses topic s (at most REALTIME_SUB_MAX bytes, as realtime_body_parse() keeps them)
 * into *t.  Returns 0, or -1 for a topic that is not of that form (no '/', an empty
 * collection or record, a second '/', a malformed percent escape or a NUL, options that
 * are not a JSON object): such a topic receives no event.
 */
int realtime_topic_parse(const char *s, struct realtime_topic *t);

enum realtime_action {
	REALTIME_CREATE,
	REALTIME_UPDATE,
	REALTIME_DELETE,
};

/* A record event as the records pool announced it (handlers/records/publish.c). */
struct realtime_event {
	enum realtime_action action;
	char coll_id[REALTIME_SUB_MAX + 1];
	char record[REALTIME_SUB_MAX + 1];
	struct cJSON *row;		/* a delete's columns by field name: an object of
					 * strings and nulls, or NULL; owned */
	struct cJSON *json;		/* the parsed datagram, owned */
};

/*
 * Parses the datagram p[0..n) into *ev: {"action":"create|update|delete","collection":ID,
 * "record":ID} with "row" optional (an object whose values are strings or null; anything
 * else leaves ev->row NULL).  Returns 0 (free ev with realtime_event_free()), or -1 for
 * anything else (ev left empty).
 */
int realtime_event_parse(const char *p, size_t n, struct realtime_event *ev);
void realtime_event_free(struct realtime_event *ev);

/* The name of an action: "create", "update" or "delete". */
const char *realtime_action_name(enum realtime_action a);

/*
 * realtime_send.c: record events delivered to the clients, each read as that client may
 * see it (read.h's rec_event_record()).  A reader holds what the reads need: the pool's
 * database, its collections, scratch.
 */
#define REALTIME_SEEN_MAX	64	/* distinct reads an event keeps for reuse */

struct realtime_seen {
	char *key;			/* auth, rule and options */
	char *json;			/* the record as they see it; NULL: hidden */
	size_t len;
};

struct realtime_reader {
	struct db *db;			/* borrowed; NULL: no database, nothing delivered */
	struct rec_thread th;		/* the collections, the statement's text */
	int have_colls;
	struct arena *arena;		/* one read's rows, reset at each */
	struct arena *ev_arena;		/* one event's (a delete's row), reset at each */
	struct resp rs;			/* a read's error answer (logged, never sent) */
	struct buf out, ev, key;
	struct realtime_seen seen[REALTIME_SEEN_MAX];
	size_t nseen;
};

/* Sets rd up over db (may be NULL), its collections read now.  0, or -1 with err set;
 * realtime_reader_free() in both cases. */
int realtime_reader_init(struct realtime_reader *rd, struct db *db, char *err,
    size_t errlen);
void realtime_reader_free(struct realtime_reader *rd);

/* Delivers the records pool's datagram p[0..n) to the clients of rt subscribed to its
 * record, as each may see it (evfcgi_write() on their streams).  Never fails: a datagram
 * that does not parse, or names no collection, is logged and dropped. */
void realtime_deliver(struct realtime_reader *rd, struct realtime *rt, const char *p,
    size_t n);

#endif /* SLUICE_RECORDS_REALTIME_H */
