/*
 * dbcheck.h: what sluiced sees of a pool's SQLite database from outside (dbcheck.c).
 */
#ifndef SLUICE_DBCHECK_H
#define SLUICE_DBCHECK_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <time.h>

/* How often a running pool looks at its database file. */
#define DBCHECK_EVERY_MS	1000

enum dbcheck_state {
	DBCHECK_OK,		/* the file the workers opened, with tables (or not readable:
				 * nothing known) */
	DBCHECK_MISSING,	/* the file is gone: the workers write to an unlinked file */
	DBCHECK_REPLACED,	/* another file is in its place: the workers use the old one */
	DBCHECK_EMPTY,		/* empty file, or no table left */
	DBCHECK__MAX
};

/* The words of the states, for `sluiced ctl status`: "ok", "missing", "replaced",
 * "empty". */
extern const char *const dbcheck_words[DBCHECK__MAX];

/* What a look saw of the file and its write-ahead log (zeroed, then filled: compared
 * whole). */
struct dbcheck_seen {
	off_t db_size, wal_size;
	ino_t wal_ino;		/* 0: no log */
	struct timespec db_ctime, wal_ctime;
};

/*
 * The write-ahead log as far as the last look read it.  While the log's salts stay the
 * same, SQLite only appends to it, and overwrites nothing before its last commit frame:
 * the next look goes on from there instead of reading every frame header again (a log of
 * 1 GB holds 250,000 of them).
 */
struct dbcheck_walk {
	ino_t ino;		/* 0: nothing read yet */
	unsigned char salts[8];
	uint32_t psize;
	off_t next;		/* the frame after the last commit frame read */
	off_t found;		/* the newest committed copy of page 1 up to there; 0: none */
	long frames;		/* frame headers the last look read */
};

/* A pool's view of its database; zeroed (dbcheck_reset()) when a generation starts. */
struct dbcheck {
	int known;		/* dev and ino are those of the file the generation opened */
	dev_t dev;
	ino_t ino;
	enum dbcheck_state state;	/* as last reported */
	int64_t next;		/* pool_now() ms of the next look; 0: at once */
	struct dbcheck_seen seen;	/* the last look that read the schema, */
	int seen_ok;		/* if any, */
	long tables;		/* and the schema's rows it found */
	struct dbcheck_walk walk;
};

/* Forgets the file seen: the next look takes the file at path as the workers'. */
void dbcheck_reset(struct dbcheck *d);

/*
 * Looks at the SQLite file path (borrowed) as d last knew it: returns its state, with
 * why[len] saying what is wrong when it is not DBCHECK_OK.  What cannot be told (the
 * file is not readable by sluiced) keeps d->state.  Never creates or writes the file, and
 * never opens it through SQLite (it reads its bytes).  d->state is left to the caller, who
 * reports each change once.
 */
enum dbcheck_state dbcheck_look(struct dbcheck *d, const char *path, char *why, size_t len);

#endif /* SLUICE_DBCHECK_H */
