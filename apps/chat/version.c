/*
 * version.c: the chat's version board (see version.h), a file of counters shared with
 * mmap() and updated with atomic operations, which work across processes on one mapping.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "chat/version.h"
#include "keyfile.h"

/* The fields after user[] came later: a board made before them is extended with zeros,
 * which say no bump since sequence 0. */
struct chat_board {
	uint64_t seq;
	uint64_t channel[CHAT_VERSION_SLOTS];
	uint64_t user[CHAT_VERSION_USER_SLOTS];
	uint64_t channel_seq[CHAT_VERSION_SLOTS];	/* the sequence of each slot's last bump */
	uint64_t user_seq;		/* the sequence of the last bump of any user slot */
};

static struct chat_board *chat_board;

int
chat_version_open(void)
{
	char path[4096];
	struct stat sb;
	void *p;
	int fd, saved;

	if (chat_board != NULL)
		return 0;
	if (keyfile_path(CHAT_VERSION_FILE, path, sizeof(path)) < 0) {
		errno = ENAMETOOLONG;
		return -1;
	}
	if ((fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0640)) < 0)
		return -1;
	/* Processes racing to make it all extend it to the same size: zeros, once. */
	if (fstat(fd, &sb) < 0 || (sb.st_size < (off_t)sizeof(struct chat_board) &&
	    ftruncate(fd, (off_t)sizeof(struct chat_board)) < 0))
		goto fail;
	p = mmap(NULL, sizeof(struct chat_board), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (p == MAP_FAILED)
		goto fail;
	(void)close(fd);
	chat_board = p;
	return 0;
fail:
	saved = errno;
	(void)close(fd);
	errno = saved;
	return -1;
}

void
chat_version_close(void)
{
	if (chat_board != NULL)
		(void)munmap(chat_board, sizeof(*chat_board));
	chat_board = NULL;
}

int
chat_version_ready(void)
{
	return chat_board != NULL;
}

static size_t
chat_version_slot(int64_t id)
{
	return (size_t)((uint64_t)id % CHAT_VERSION_SLOTS);
}

uint64_t
chat_version_seq(void)
{
	return chat_board != NULL ? __atomic_load_n(&chat_board->seq, __ATOMIC_SEQ_CST) : 0;
}

uint64_t
chat_version_channel(int64_t id)
{
	return chat_board != NULL ?
	    __atomic_load_n(&chat_board->channel[chat_version_slot(id)], __ATOMIC_SEQ_CST) : 0;
}

uint32_t
chat_version_user_slot(int64_t id)
{
	return (uint32_t)((uint64_t)id % CHAT_VERSION_USER_SLOTS);
}

uint64_t
chat_version_user(uint32_t slot)
{
	return chat_board != NULL && slot < CHAT_VERSION_USER_SLOTS ?
	    __atomic_load_n(&chat_board->user[slot], __ATOMIC_SEQ_CST) : 0;
}

int
chat_version_quiet(int64_t channel, uint64_t seq0)
{
	if (chat_board == NULL)
		return 1;
	return __atomic_load_n(&chat_board->channel_seq[chat_version_slot(channel)],
	    __ATOMIC_SEQ_CST) <= seq0 &&
	    __atomic_load_n(&chat_board->user_seq, __ATOMIC_SEQ_CST) <= seq0;
}

/* Raises *at to s unless it holds more already (writers of one slot race). */
static void
chat_version_raise(uint64_t *at, uint64_t s)
{
	uint64_t cur = __atomic_load_n(at, __ATOMIC_SEQ_CST);

	while (cur < s && !__atomic_compare_exchange_n(at, &cur, s, 0, __ATOMIC_SEQ_CST,
	    __ATOMIC_SEQ_CST))
		;
}

/*
 * The sequence first, then the sequence of the bump where chat_version_quiet() looks,
 * then the counter: a reader that sees the counter moved also sees both.
 */
void
chat_version_bump_channel(int64_t id)
{
	uint64_t s;

	if (chat_board == NULL)
		return;
	s = __atomic_add_fetch(&chat_board->seq, 1, __ATOMIC_SEQ_CST);
	chat_version_raise(&chat_board->channel_seq[chat_version_slot(id)], s);
	(void)__atomic_add_fetch(&chat_board->channel[chat_version_slot(id)], 1,
	    __ATOMIC_SEQ_CST);
}

void
chat_version_bump_user(int64_t id)
{
	uint64_t s;

	if (chat_board == NULL)
		return;
	s = __atomic_add_fetch(&chat_board->seq, 1, __ATOMIC_SEQ_CST);
	chat_version_raise(&chat_board->user_seq, s);
	(void)__atomic_add_fetch(&chat_board->user[chat_version_user_slot(id)], 1,
	    __ATOMIC_SEQ_CST);
}
