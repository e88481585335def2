/*
 * query.h: the list parameters of the records API other than filter: sort, expand and
 * fields (PocketBase's forms; docs/records.md).
 *
 *   sort=-created,title,@random    at most QUERY_SORT_MAX terms, own fields only
 *   expand=author,comments_via_post.author
 *                                  relation paths, dotted, at most QUERY_EXPAND_DEPTH deep;
 *                                  C_via_F is the records of C whose relation F points here
 *   fields=id,title,expand.author.name,body:excerpt(200,true)
 *                                  keys to keep, '*' for every key of a level
 */
#ifndef SLUICE_RECORDS_QUERY_H
#define SLUICE_RECORDS_QUERY_H

#include <stddef.h>

#include "coll.h"
#include "sqlb.h"

struct arena;

#define QUERY_SORT_MAX		8
#define QUERY_EXPAND_DEPTH	6
#define QUERY_EXPAND_MAX	32	/* nodes in one expand tree */
#define QUERY_FIELDS_MAX	64

/*
 * Appends " ORDER BY ..." for sort s[0..len) on collection c (alias t) to q->sql, or
 * nothing for an empty sort.  With hide_email (a request that is not a superuser's), an
 * auth collection's email is refused: its order would tell what the response hides.
 * Returns 0, or -1 with the client's message in err (400).
 */
int query_sort(struct sqlb *q, const struct coll *c, const char *alias, const char *s,
    size_t len, int hide_email, char *err, size_t errlen);

/* One node of an expand tree: a relation of the parent collection, or a back-relation. */
struct query_expand {
	char name[2 * COLL_NAME_MAX + 8];	/* the key under "expand" */
	const struct coll *coll;		/* the records it holds */
	const struct coll_field *field;		/* the relation: in the parent, or in coll
						 * (back-relation) */
	int back;				/* a C_via_F back-relation */
	int many;				/* an array in the JSON */
	int parent;				/* index of the parent node, -1 at the top */
	int depth;
};

struct query_expands {
	struct query_expand n[QUERY_EXPAND_MAX];
	int count;
};

/*
 * Parses expand s[0..len) from collection c into *out (nodes in an order where every
 * parent comes before its children).  Unknown names are skipped, as PocketBase does.
 * Returns 0, or -1 with the message in err (400: too deep, too many, malformed).
 */
int query_expand_parse(struct query_expands *out, const struct coll *c, const char *s,
    size_t len, char *err, size_t errlen);

/* One entry of fields=. */
struct query_field {
	const char *path;	/* "expand.author.name", "*", NUL-terminated (arena) */
	size_t len;
	int excerpt;		/* :excerpt(N[,true]): the first N characters, tags removed */
	int ellipsis;
};

struct query_fields {
	struct query_field f[QUERY_FIELDS_MAX];
	int count;		/* 0: every key */
};

/* Parses fields s[0..len).  Returns 0, or -1 with the message in err (400). */
int query_fields_parse(struct query_fields *out, struct arena *a, const char *s, size_t len,
    char *err, size_t errlen);

/*
 * Whether the key at prefix+key is kept ("" prefix at the top, "expand.author." below):
 * returns 0 (dropped), 1 (kept whole) or 2 (kept, with its own keys filtered: an object
 * under expand), and in *qf the entry with a modifier (excerpt), if any.
 */
int query_fields_keep(const struct query_fields *fs, const char *prefix, size_t plen,
    const char *key, const struct query_field **qf);

#endif /* SLUICE_RECORDS_QUERY_H */
