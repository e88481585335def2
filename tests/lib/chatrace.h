/*
 * chatrace.h: the chat page cache under concurrent writes, for test_chat (SQLite) and
 * test_chat_pg (PostgreSQL).  Three users, each on a channel of its own; writer threads
 * send messages as them through the write pools (several processes) and now and then
 * change a nickname, while reader threads ask for each user's page through the cache
 * and without it.
 *
 * A cached page is checked two ways.  Every one must show the newest message each writer
 * had seen acknowledged in that channel before the page was asked for.  And a page asked
 * for in a quiet moment, when no write touching that user's page was in flight from just
 * before the uncached page before it to just after the uncached page after it, must be
 * those two uncached pages byte for byte (identity, or gzip inflating to them): with
 * nothing in flight, every write the database holds was acknowledged, so a cached page
 * of that moment has exactly one right answer.  When the writers stop, every user's
 * cached page is the uncached one again, from every worker.
 */
#ifndef SLUICE_CHATRACE_H
#define SLUICE_CHATRACE_H

#define CHATRACE_USERS	3

struct chatrace {
	/* Set by the caller. */
	const char *base;		/* the stack's URL */
	const char *cached;		/* the page pool with chat_page_cache=1 ("/cached") */
	const char *sends[2];		/* message-send paths the writers take in turn */
	const char *chans[CHATRACE_USERS];	/* each user's channel, opened at the start */
	int seconds;			/* how long the writers write */
	/* Filled by chatrace_run(). */
	int writes, writes_ok;		/* writes sent, answered 204 or 200 */
	int pages, pages_ok;		/* cached pages asked for, 200 with every acked message */
	int quiet, quiet_same;		/* of them in a quiet moment, the uncached bytes */
	int gz, spliced;		/* of them asked in gzip, answered from the cache
					 * (gzip; a page the cache could not serve is Brotli) */
	int final, final_same;		/* after the writers stopped, the same */
};

/* Runs the race as cr says and fills its results.  Returns 0, or -1 when the users could
 * not be made (no cookie or channel); the results then say what ran. */
int chatrace_run(struct chatrace *cr);

/* Prints cr's results and checks them: enough writes, pages and quiet moments to mean
 * something, every one of each as it should be, some gzip pages from the cache. */
void chatrace_check(const struct chatrace *cr);

#endif /* SLUICE_CHATRACE_H */
