/*
 * seedfile.h: what the seeders (sql/NAME/seed.c) share.
 *
 * An SQLite database is seeded into a temporary file beside its target,
 * TARGET.seeding.PID, which is renamed over the target only once it is complete (closed,
 * its WAL checkpointed away).  An interrupted seed therefore never leaves a half-written
 * database at the target path, where `make run` (supervisor/run.sh, sql/NAME/seed.sh)
 * would take it for a finished one and serve it.  SIGINT, SIGTERM, SIGHUP and SIGPIPE
 * remove the temporary file before the seeder dies of the signal; after a SIGKILL or a
 * power cut the file TARGET.seeding.PID stays behind (never at the target): delete it.
 * A PostgreSQL seed needs none of this: it loads in one transaction.
 *
 * Long loads say how far they are: a progress line on stderr at most once a second with
 * the rows done, the total when known and the rate, then one line when the step is done.
 *
 * They also share the reading of their SQL files and splitmix64, from which their
 * reproducible rows are drawn.
 */
#ifndef SLUICE_SEEDFILE_H
#define SLUICE_SEEDFILE_H

#include <stdint.h>

struct buf;

#define SEED_FILE_PATH_MAX	4096

struct seed_file {
	char target[SEED_FILE_PATH_MAX];
	char tmp[SEED_FILE_PATH_MAX + 32];	/* TARGET.seeding.PID */
};

/*
 * Prepares the seeding of target: refuses it (-1, reason on stderr after "prog: ") when a
 * file is there already and force is 0; names the temporary file, removes a stale one of
 * the same name and installs the signal handlers that remove it.  f is the caller's and
 * must outlive the seed (the handlers read it).
 */
int seed_file_begin(struct seed_file *f, const char *prog, const char *target, int force);

/* Renames the finished temporary file over the target (whose -wal and -shm files, from an
 * older database, go first).  0, or -1 with the reason on stderr and the file removed. */
int seed_file_commit(struct seed_file *f, const char *prog);

/* Removes the temporary file and its -journal, -wal, -shm and -wlock (a failed seed). */
void seed_file_abort(struct seed_file *f);

struct seed_progress {
	const char *prog;	/* "chat-seed" */
	const char *what;	/* "messages" */
	int64_t total;		/* rows expected, or 0 when not known */
	double t0;		/* start, seconds (CLOCK_MONOTONIC) */
	double next;		/* when the next line is due */
	int64_t checked;	/* rows done when the clock was last read */
	int quiet;		/* no lines at all */
};

/* Starts timing a step of total rows (0: unknown, and then a line says it began) called
 * what. */
void seed_progress_start(struct seed_progress *p, const char *prog, const char *what,
    int64_t total, int quiet);

/* done rows so far: prints a progress line when one is due.  Cheap enough for every row
 * (it reads the clock once per 4096 rows done). */
void seed_progress_tick(struct seed_progress *p, int64_t done);

/* The step's last line: rows, seconds and the rate. */
void seed_progress_end(struct seed_progress *p, int64_t done);

/* Appends the whole file at path to b (which stays NUL-terminated): the SQL scripts a seeder
 * runs.  0, or -1 with the reason on stderr after "prog: ". */
int seed_read_file(const char *prog, const char *path, struct buf *b);

/* splitmix64's output function: a well-mixed 64-bit value of x (which it first steps on by
 * SEED_MIX64_STEP), enough for reproducible pseudo-random rows. */
#define SEED_MIX64_STEP	0x9E3779B97F4A7C15ULL
uint64_t seed_mix64(uint64_t x);

/* Seconds on CLOCK_MONOTONIC. */
double seed_now(void);

#endif /* SLUICE_SEEDFILE_H */
