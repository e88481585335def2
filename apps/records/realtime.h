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
 */
#ifndef SLUICE_RECORDS_REALTIME_H
#define SLUICE_RECORDS_REALTIME_H

#include <stddef.h>

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

#endif /* SLUICE_RECORDS_REALTIME_H */
