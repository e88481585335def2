/*
 * dbcheck.c: what sluiced sees of a pool's SQLite database from outside.
 *
 * A worker opens its database once, at start-up, and keeps it: if the file is deleted,
 * replaced by another or emptied while the pool serves, each worker's /ready answers 503
 * (handlers/ready.c), but only a probe of every worker would tell.  The pool tells it
 * once: every DBCHECK_EVERY_MS pool_tick() looks at the path of the endpoint's sqlite: URL
 * with stat() (gone; another inode than the one the current generation started with;
 * zero bytes) and, when the file is there, reads whether its schema has any row left
 * (page 1's b-tree, from the newest committed copy in the write-ahead log when there is
 * one): an emptied database has none.  The log's frame headers are read once: a later
 * look goes on from the last commit frame it read (struct dbcheck_walk), so a look at a
 * pool under writes costs what was written since the last, not the whole log
 * (docs/benchmarks.md, "The database check").  It never opens the database
 * through SQLite, whose connection would take part in the workers' locks and shared
 * memory (a supervisor's read-only connection made workers die with SIGBUS).  pool.c
 * logs each change of state once and `sluiced ctl status` shows the pool as degraded
 * with the reason (db=missing, ...).
 * Serving workers never create a database, and neither does this: it only reads.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "dbcheck.h"

const char *const dbcheck_words[DBCHECK__MAX] = { "ok", "missing", "replaced", "empty" };

void
dbcheck_reset(struct dbcheck *d)
{
	memset(d, 0, sizeof(*d));
}

static uint32_t
dbcheck_be32(const unsigned char *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/*
 * The schema's rows as page 1's b-tree header at off in fd says: its cell count when it
 * is a leaf (0: no table, index or view at all), 1 for an interior page (it has rows),
 * -1 when unreadable.
 */
static long
dbcheck_page1(int fd, off_t off)
{
	unsigned char h[5];

	if (pread(fd, h, sizeof(h), off + 100) != (ssize_t)sizeof(h))
		return -1;
	if (h[0] == 0x05)
		return 1;
	if (h[0] != 0x0d)
		return -1;
	return (long)(h[3] << 8 | h[4]);
}

/*
 * The newest committed copy of page 1 in the write-ahead log path-wal: its offset in the
 * log (*fd open on it), 0 when the log holds none (or there is no log), -1 when it cannot
 * be read.  Frames count while their salts are the header's (a log started anew has new
 * salts); a copy counts once a commit frame follows it.  The walk goes on from where w
 * says the last one stopped when the log is the same (inode, salts, page size); it stops
 * there at the last commit frame, because the frames after it may still be overwritten (a
 * transaction rolled back leaves its frames for the next one to write over).
 */
static off_t
dbcheck_wal_page1(const char *wal, int *fd, struct dbcheck_walk *w)
{
	unsigned char hdr[32], fh[24];
	struct stat st;
	uint32_t psize;
	off_t off, cand, found;

	if ((*fd = open(wal, O_RDONLY | O_CLOEXEC)) == -1)
		return errno == ENOENT ? 0 : -1;
	if (fstat(*fd, &st) == -1)
		return -1;
	if (pread(*fd, hdr, sizeof(hdr), 0) != (ssize_t)sizeof(hdr)) {
		w->ino = 0;
		return 0;	/* empty or reset: nothing in it */
	}
	psize = dbcheck_be32(hdr + 8);
	if ((dbcheck_be32(hdr) & ~1u) != 0x377f0682u || psize < 512 || psize > 65536)
		return -1;
	if (w->ino != st.st_ino || w->psize != psize || memcmp(w->salts, hdr + 16, 8) != 0) {
		w->ino = st.st_ino;
		w->psize = psize;
		memcpy(w->salts, hdr + 16, 8);
		w->next = 32;
		w->found = 0;
	}
	cand = found = w->found;
	for (off = w->next; pread(*fd, fh, sizeof(fh), off) == (ssize_t)sizeof(fh);
	    off += 24 + (off_t)psize) {
		w->frames++;
		if (memcmp(fh + 8, hdr + 16, 8) != 0)
			break;
		if (dbcheck_be32(fh) == 1)
			cand = off + 24;
		if (dbcheck_be32(fh + 4) != 0) {
			found = cand;
			w->next = off + 24 + (off_t)psize;
			w->found = found;
		}
	}
	return found;
}

/*
 * Rows in the schema of the database at path, from the file itself (page 1, or its newest
 * committed copy in the write-ahead log), never through SQLite: a connection of sluiced's
 * would take part in the workers' locking and shared memory.  -1 when it cannot be told.
 */
static long
dbcheck_tables(const char *path, const char *wal, struct dbcheck_walk *walk)
{
	int fd, wfd = -1;
	off_t w;
	long n = -1;

	if ((w = dbcheck_wal_page1(wal, &wfd, walk)) > 0)
		n = dbcheck_page1(wfd, w);
	else if (w == 0 && (fd = open(path, O_RDONLY | O_CLOEXEC)) != -1) {
		n = dbcheck_page1(fd, 0);
		close(fd);
	}
	if (wfd != -1)
		close(wfd);
	return n;
}

enum dbcheck_state
dbcheck_look(struct dbcheck *d, const char *path, char *why, size_t len)
{
	struct stat st, wst;
	struct dbcheck_seen seen;
	char wal[4096];
	long tables;

	why[0] = '\0';
	if (stat(path, &st) == -1) {
		if (errno != ENOENT)
			return d->state;
		(void)snprintf(why, len, "the file is gone (deleted or moved while the pool "
		    "serves; its workers write to the unlinked file)");
		return DBCHECK_MISSING;
	}
	if (!d->known) {
		d->dev = st.st_dev;
		d->ino = st.st_ino;
		d->known = 1;
	} else if (st.st_dev != d->dev || st.st_ino != d->ino) {
		(void)snprintf(why, len, "another file is in its place (inode %lu, the workers "
		    "opened %lu)", (unsigned long)st.st_ino, (unsigned long)d->ino);
		return DBCHECK_REPLACED;
	}
	if (st.st_size == 0) {
		(void)snprintf(why, len, "the file is empty (0 bytes)");
		return DBCHECK_EMPTY;
	}
	/*
	 * The schema is read again only when the file or its log has changed since the
	 * last look (size, time of change, the log's inode): a pool idle or only read
	 * costs two stat() calls a second, not a walk of the log's frame headers.
	 */
	if (snprintf(wal, sizeof(wal), "%s-wal", path) >= (int)sizeof(wal))
		return d->state;
	memset(&seen, 0, sizeof(seen));
	seen.db_size = st.st_size;
	seen.db_ctime = st.st_ctim;
	if (stat(wal, &wst) == 0) {
		seen.wal_ino = wst.st_ino;
		seen.wal_size = wst.st_size;
		seen.wal_ctime = wst.st_ctim;
	}
	d->walk.frames = 0;
	if (d->seen_ok && memcmp(&seen, &d->seen, sizeof(seen)) == 0)
		tables = d->tables;
	else if ((tables = dbcheck_tables(path, wal, &d->walk)) < 0)
		return d->state;
	d->seen = seen;
	d->seen_ok = 1;
	d->tables = tables;
	if (tables == 0) {
		(void)snprintf(why, len, "the database has no table left");
		return DBCHECK_EMPTY;
	}
	return DBCHECK_OK;
}
