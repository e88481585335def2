/*
 * pagecache.h: the chat page's cache of rendered message lists (chat_page_cache=1, off by
 * default), per process and shared by its threads.
 *
 * An entry is the HTML of one channel's message list (the template's messages block) as
 * the page renders it, labelled with the counters of the version board (version.h) that
 * held when the snapshot it was read from was taken: the channel's, and those of its
 * authors' user slots (their nicknames are in it); and
 * kept twice: as text, and as raw deflate blocks that end on a byte boundary (a sync
 * flush), so that a gzip page can be made of the per-user head, the cached list and the
 * tail without compressing the list again: chat_cache_gzip() (the splicing pigz does).
 * The blocks are made fast when the list is stored and again at zlib's default level by
 * the second chat_cache_get() that finds it (an entry of its own, replacing the first).
 * An entry whose label is not the board's current one is never served: a page always
 * shows every write answered before it was asked for.  Checking an entry reads its
 * authors' counters: a few hundred atomic loads at most, about a microsecond.
 *
 * An entry also keeps the rows it was rendered from (chat_row), so that a stale one need
 * not be thrown away: the page finds it with chat_cache_peek(), takes the rows that are
 * still in the channel's newest list from it, reads only the rest (and the nicknames
 * whose authors' counters moved), and stores the list so made under the current label.
 *
 * Entries are immutable once published and counted: a thread holds one from
 * chat_cache_get() to chat_cache_release() while another replaces it.  Slots are direct
 * mapped by channel id, as many as chat_cache_init() was given (chat_page_cache_lists,
 * 64 by default), so the cache holds at most that many lists: two channels that share a
 * slot evict each other.
 */
#ifndef SLUICE_CHAT_PAGECACHE_H
#define SLUICE_CHAT_PAGECACHE_H

#include <stddef.h>
#include <stdint.h>

#include "tmpl.h"

struct buf;
struct arena;

/*
 * One message of a list as the page's query returns it: its id (as text, the way the
 * page shows it, and as a number), author's nickname, content, time and author's user
 * id.  In an entry the strings are the entry's own; elsewhere whoever fills it owns them.
 */
struct chat_row {
	struct tmpl_val id, nick, content;
	int64_t num;
	int64_t user;
	double ts;
};

/* A user slot of the board and its counter, as a list's label holds them. */
struct chat_author {
	uint32_t slot;
	uint64_t ver;
};

/* A run of a list's text compressed on its own (a fresh deflate stream, sync-flushed), so
 * that a list made from another can copy the blocks of the runs they share. */
struct chat_chunk {
	size_t at, len;		/* its text: text[at, at + len) */
	size_t zat, zlen;	/* its blocks: z[zat, zat + zlen) */
	unsigned long crc;	/* crc32 of its text */
	int level;		/* zlib's level of its blocks */
};

struct chat_frag {
	int64_t channel;
	uint64_t ver;		/* the channel's counter it is labelled with */
	struct chat_author *authors;	/* its authors' user slots, distinct, and counters */
	size_t nauthors;
	unsigned refs;		/* atomic: the slot's reference and each reader's */
	char *text;		/* the rendered list, len bytes */
	size_t len;
	unsigned char *z;	/* raw deflate of text, ending in a sync flush */
	size_t zlen;
	unsigned long crc;	/* crc32 of text */
	int level;		/* zlib's level of z */
	unsigned hits;		/* atomic: chat_cache_get()'s finds (pagecache.c) */
	struct chat_row *rows;	/* the list's messages in the query's order, or NULL */
	size_t nrows;
	char *rowtext;		/* the rows' strings */
	struct chat_chunk *chunks;	/* z is their blocks, one after the other */
	size_t nchunks;
};

/* What chat_cache_put_list() stores: chat_cache_put()'s arguments, and the chunks. */
struct chat_list {
	int64_t channel;
	uint64_t ver;
	const struct chat_author *authors;
	size_t nauthors;
	const struct chat_row *rows;
	size_t nrows;
	const char *text;
	size_t len;
	const size_t *cuts;	/* where each chunk starts in text, ascending, the first at
				 * 0; NULL (ncuts 0): the text is one chunk */
	size_t ncuts;
	const struct chat_frag *base;	/* an entry whose chunks of the same text are copied
					 * rather than compressed again, or NULL */
};

/* Makes the cache's table of nslots (>= 1) slots; before it, or when it failed (-1, out
 * of memory), nothing is cached: chat_cache_get() finds nothing, chat_cache_put() keeps
 * nothing. */
int chat_cache_init(size_t nslots);

/*
 * The entry of channel labelled ver whose authors' counters are still the board's, held
 * for the caller, or NULL.  Never fails.
 */
struct chat_frag *chat_cache_get(int64_t channel, uint64_t ver);

/*
 * The entry channel's slot holds, whatever its label, held for the caller, or NULL: a
 * list to bring up to date rather than read whole (its rows say what it holds, its
 * authors' counters which nicknames it shows).  Never fails.
 */
struct chat_frag *chat_cache_peek(int64_t channel);

/* Lets go of an entry from chat_cache_get() or chat_cache_peek(); NULL is allowed. */
void chat_cache_release(struct chat_frag *f);

/*
 * Stores a copy of text[0..len) as channel's list labelled ver, the authors[0..n)
 * (copied; slots distinct) and the rows[0..nrows) it was rendered from (copied; NULL
 * and 0 keep none, and chat_cache_peek() then finds a list it cannot update), replacing
 * the slot's entry unless that one is the same channel with a newer ver.  Returns the stored entry held for the caller (put it back
 * with chat_cache_release()), or NULL when out of memory or compression failed, there is
 * no table (chat_cache_init()), or a newer entry stays (nothing stored; the caller's page
 * is fine).
 */
struct chat_frag *chat_cache_put(int64_t channel, uint64_t ver,
    const struct chat_author *authors, size_t n, const struct chat_row *rows,
    size_t nrows, const char *text, size_t len);

/*
 * chat_cache_put() with the list compressed by chunks, those l->base holds with the same
 * text copied from it (all borrowed).  A list with a base is compressed at zlib's default
 * level at once, one without fast (and again at the default level by its second
 * chat_cache_get()).  Returns as chat_cache_put(); NULL too when the cuts are not in
 * order.
 */
struct chat_frag *chat_cache_put_list(const struct chat_list *l);

/*
 * Inserts f's list into body at offset at (a page rendered without its list).  Scratch
 * memory comes from a.  Returns 0, or -1 past body's cap or a's (body is then cut).
 */
int chat_cache_splice(struct buf *body, size_t at, const struct chat_frag *f,
    struct arena *a);

/*
 * Replaces body by the gzip (RFC 1952) of the page body says: its head body[0, at), f's
 * list, and its tail body[at + skip, len), where skip is 0 when the list is not in body
 * and f->len when it is (a page just rendered whole).  Head and tail are compressed now,
 * the list's deflate blocks are copied from f, the CRC is combined.  Scratch memory comes
 * from a.  Returns 0, or -1 (body is then unchanged).
 */
int chat_cache_gzip(struct buf *body, size_t at, size_t skip, const struct chat_frag *f,
    struct arena *a);

/* Frees every entry; call at exit, after the serving threads stopped. */
void chat_cache_free(void);

#endif /* SLUICE_CHAT_PAGECACHE_H */
