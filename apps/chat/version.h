/*
 * version.h: the chat's version board, a small file mapped shared by every chat process
 * of the host, which says when the rendered message list of a channel may have changed.
 *
 * The board holds a counter per channel (channel id modulo CHAT_VERSION_SLOTS: two
 * channels in one slot only invalidate each other more often), one per user (user id
 * modulo CHAT_VERSION_USER_SLOTS: a message list shows its authors' nicknames, so a
 * nickname change makes stale the lists that user wrote in, and only those) and a
 * sequence bumped before any of them.
 * A writer bumps after its transaction committed and before it answers, so a counter
 * value seen by anyone means the write behind it is in every snapshot taken afterwards.
 * A reader (the chat page's cache, pagecache.h) may label a list with the counters it
 * read after its read transaction's snapshot only if none of them moved between before
 * that snapshot and after those reads: then they were already those values when the
 * snapshot was taken.  It reads the sequence before the snapshot, and after its reads
 * asks chat_version_quiet(): the board keeps the sequence of each channel slot's last
 * bump and of the last user bump, so a message in another channel does not stop a list
 * from being stored (a nickname change anywhere does: they are rare).
 *
 * Writers and readers must come from one build: a writer from before the per-slot
 * sequences bumps the counters without them, and a reader of this build would then
 * store lists that lack its writes.  Reload the chat's pools together.
 *
 * The file is chat-versions next to the SQLite database (data/chat-versions for
 * PostgreSQL, like the session key: keyfile.h), made by the first chat process that
 * starts; the counters live as long as it does.  Delete it only with the stack stopped.
 */
#ifndef SLUICE_CHAT_VERSION_H
#define SLUICE_CHAT_VERSION_H

#include <stdint.h>

#define CHAT_VERSION_SLOTS	1024
#define CHAT_VERSION_USER_SLOTS	4096
#define CHAT_VERSION_FILE	"chat-versions"

/*
 * Opens (creating it if needed) and maps the board, before the serving threads start.
 * Returns 0, or -1 with errno set (the board is then absent: bumps do nothing and every
 * read returns 0).
 */
int chat_version_open(void);

/* Unmaps the board; safe to call when it is not open. */
void chat_version_close(void);

/* 1 when the board is mapped. */
int chat_version_ready(void);

/* The slot of user id on the board. */
uint32_t chat_version_user_slot(int64_t id);

/* The sequence, the counter of channel id's slot, the counter of a user slot. */
uint64_t chat_version_seq(void);
uint64_t chat_version_channel(int64_t id);
uint64_t chat_version_user(uint32_t slot);

/*
 * 1 when neither channel's slot nor any user slot was bumped since the sequence was seq0
 * (chat_version_seq()); then a counter of those read at any time since seq0 was read
 * held from then on.  1 too when the board is absent.
 */
int chat_version_quiet(int64_t channel, uint64_t seq0);

/* After a committed write: a message in channel id, or user id's nickname changed. */
void chat_version_bump_channel(int64_t id);
void chat_version_bump_user(int64_t id);

#endif /* SLUICE_CHAT_VERSION_H */
