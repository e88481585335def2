/*
 * bucket.h: token buckets by key, in a small fixed table of the process: the records API's
 * rate limits on sign-in and the account flows (handlers/records/limit.c).
 *
 * A bucket holds up to N tokens and gains N a minute; a request takes one, and is refused
 * when none is left.  The table is the process's own (every serving thread of a worker
 * shares it, under one mutex; the workers of a pool do not), of BUCKET_SETS sets of
 * BUCKET_WAYS buckets: a key's set is a hash of it, and a key not in its set takes the
 * bucket used longest ago, starting full.  So it stays a few tens of kilobytes whatever
 * the traffic, and a key forgotten is one that was not used for a while, whose bucket
 * would have filled up meanwhile anyway, unless more keys than a set holds keep coming in
 * its set.
 */
#ifndef SLUICE_RECORDS_BUCKET_H
#define SLUICE_RECORDS_BUCKET_H

#include <stddef.h>

#define BUCKET_SETS	512
#define BUCKET_WAYS	8

/*
 * Takes a token from key[0..len)'s bucket, of per_minute tokens, at now (seconds, of a
 * monotonic clock).  Returns 1 when one was there (the request may go on), 0 when the
 * bucket is empty; per_minute 0 or less always answers 1.
 */
int bucket_take(const char *key, size_t len, long per_minute, double now);

/* Empties the table (tests). */
void bucket_reset(void);

#endif /* SLUICE_RECORDS_BUCKET_H */
