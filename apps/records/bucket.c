/*
 * bucket.c: see bucket.h.  A bucket is named by a 64-bit hash of its key, not the key:
 * the table's size does not depend on the keys' (an identity may be 255 bytes), and two
 * keys sharing a hash, which would share a bucket, are a chance of 2^-64.
 */
#include <pthread.h>
#include <stdint.h>
#include <string.h>

#include "bucket.h"

struct bucket {
	uint64_t key;		/* the key's hash; 0: an unused bucket */
	double tokens;
	double at;		/* when tokens was last worked out */
};

static struct {
	pthread_mutex_t mu;
	struct bucket b[BUCKET_SETS][BUCKET_WAYS];
} bucket_table = { .mu = PTHREAD_MUTEX_INITIALIZER };

/* FNV-1a of key with a final mix (FNV's high bits hardly change between short keys that
 * differ in their last byte, and the set is chosen by them), never 0 (the unused
 * bucket's). */
static uint64_t
bucket_hash(const char *key, size_t len)
{
	uint64_t h = 1469598103934665603ULL;
	size_t i;

	for (i = 0; i < len; i++)
		h = (h ^ (unsigned char)key[i]) * 1099511628211ULL;
	h ^= h >> 33;
	h *= 0xff51afd7ed558ccdULL;
	h ^= h >> 33;
	h *= 0xc4ceb9fe1a85ec53ULL;
	h ^= h >> 33;
	return h != 0 ? h : 1;
}

int
bucket_take(const char *key, size_t len, long per_minute, double now)
{
	uint64_t h = bucket_hash(key, len);
	struct bucket *set, *b = NULL;
	double cap = (double)per_minute;
	int i, ok;

	if (per_minute <= 0)
		return 1;
	/* The set from the hash's high bits: the low ones name the bucket within it. */
	set = bucket_table.b[(h >> 32) % BUCKET_SETS];
	pthread_mutex_lock(&bucket_table.mu);
	for (i = 0; i < BUCKET_WAYS; i++)
		if (set[i].key == h) {
			b = &set[i];
			break;
		}
	if (b != NULL) {
		if (now > b->at)
			b->tokens += (now - b->at) * cap / 60.0;
		if (b->tokens > cap)
			b->tokens = cap;
	} else {
		/* An unused bucket, else the one used longest ago: it is the fullest. */
		b = &set[0];
		for (i = 1; i < BUCKET_WAYS && b->key != 0; i++)
			if (set[i].key == 0 || set[i].at < b->at)
				b = &set[i];
		b->key = h;
		b->tokens = cap;
	}
	b->at = now;
	ok = b->tokens >= 1.0;
	if (ok)
		b->tokens -= 1.0;
	pthread_mutex_unlock(&bucket_table.mu);
	return ok;
}

void
bucket_reset(void)
{
	pthread_mutex_lock(&bucket_table.mu);
	memset(bucket_table.b, 0, sizeof(bucket_table.b));
	pthread_mutex_unlock(&bucket_table.mu);
}
