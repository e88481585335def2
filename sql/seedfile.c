/*
 * seedfile.c: see seedfile.h.  The signal handlers may only make async-signal-safe calls,
 * so the four names they unlink are laid out once, in seed_file_begin(), in static
 * storage.
 */
#include <errno.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "buf.h"
#include "seedfile.h"

/* The files a signal removes: the temporary database and its companions (-wlock is the
 * writers' queue of common/db_sqlite.c). */
static char seed_file_doomed[5][SEED_FILE_PATH_MAX + 48];
static volatile sig_atomic_t seed_file_armed;

static const int seed_file_signals[] = { SIGINT, SIGTERM, SIGHUP, SIGPIPE };

static void
seed_file_unlink_all(void)
{
	size_t i;

	for (i = 0; i < sizeof(seed_file_doomed) / sizeof(seed_file_doomed[0]); i++)
		if (seed_file_doomed[i][0] != '\0')
			(void)unlink(seed_file_doomed[i]);
}

static void
seed_file_on_signal(int sig)
{
	if (seed_file_armed)
		seed_file_unlink_all();
	/* Die of the signal itself, so that the caller sees how the seed ended. */
	(void)signal(sig, SIG_DFL);
	(void)raise(sig);
}

int
seed_file_begin(struct seed_file *f, const char *prog, const char *target, int force)
{
	static const char *const sfx[] = { "", "-journal", "-wal", "-shm", "-wlock" };
	struct sigaction sa;
	char dir[SEED_FILE_PATH_MAX];
	const char *slash;
	size_t i;
	int n;

	memset(f, 0, sizeof(*f));
	n = snprintf(f->target, sizeof(f->target), "%s", target);
	if (n < 0 || (size_t)n >= sizeof(f->target) || *target == '\0') {
		fprintf(stderr, "%s: bad or too long database path\n", prog);
		return -1;
	}
	/* The usual first mistake (sqlite:data/x.db before data/ exists) gets a plain answer. */
	slash = strrchr(f->target, '/');
	if (slash != NULL) {
		n = snprintf(dir, sizeof(dir), "%.*s", (int)(slash - f->target), f->target);
		if (n > 0 && access(dir, W_OK | X_OK) == -1) {
			fprintf(stderr, "%s: directory %s: %s\n", prog, dir, strerror(errno));
			return -1;
		}
	}
	if (!force && access(target, F_OK) == 0) {
		fprintf(stderr, "%s: %s exists already (use -f to replace it)\n", prog, target);
		return -1;
	}
	(void)snprintf(f->tmp, sizeof(f->tmp), "%s.seeding.%ld", target, (long)getpid());
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++)
		(void)snprintf(seed_file_doomed[i], sizeof(seed_file_doomed[i]), "%s%s", f->tmp,
		    sfx[i]);
	seed_file_unlink_all();
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = seed_file_on_signal;
	sigemptyset(&sa.sa_mask);
	for (i = 0; i < sizeof(seed_file_signals) / sizeof(seed_file_signals[0]); i++)
		(void)sigaction(seed_file_signals[i], &sa, NULL);
	seed_file_armed = 1;
	return 0;
}

int
seed_file_commit(struct seed_file *f, const char *prog)
{
	char side[SEED_FILE_PATH_MAX + 8];
	static const char *const sfx[] = { "-wal", "-shm" };
	size_t i;

	/* An older database's WAL would be replayed into the new file: it goes first. */
	for (i = 0; i < sizeof(sfx) / sizeof(sfx[0]); i++) {
		(void)snprintf(side, sizeof(side), "%s%s", f->target, sfx[i]);
		if (unlink(side) == -1 && errno != ENOENT) {
			fprintf(stderr, "%s: %s: %s\n", prog, side, strerror(errno));
			seed_file_abort(f);
			return -1;
		}
	}
	if (rename(f->tmp, f->target) == -1) {
		fprintf(stderr, "%s: rename %s to %s: %s\n", prog, f->tmp, f->target,
		    strerror(errno));
		seed_file_abort(f);
		return -1;
	}
	seed_file_armed = 0;
	/* The companions of the temporary file, if SQLite left any, are of no use now. */
	for (i = 1; i < sizeof(seed_file_doomed) / sizeof(seed_file_doomed[0]); i++)
		(void)unlink(seed_file_doomed[i]);
	return 0;
}

void
seed_file_abort(struct seed_file *f)
{
	(void)f;
	seed_file_armed = 0;
	seed_file_unlink_all();
}

double
seed_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

void
seed_progress_start(struct seed_progress *p, const char *prog, const char *what,
    int64_t total, int quiet)
{
	p->prog = prog;
	p->what = what;
	p->total = total;
	p->quiet = quiet;
	p->t0 = seed_now();
	p->next = p->t0 + 1.0;
	p->checked = 0;
	/* A step that cannot be metered (one statement building the indexes) says it began,
	 * so that a long silence is not taken for a hang. */
	if (total == 0 && !quiet)
		fprintf(stderr, "%s: %s ...\n", prog, what);
}

void
seed_progress_tick(struct seed_progress *p, int64_t done)
{
	double now, rate;

	if (p->quiet || done - p->checked < 4096)
		return;
	p->checked = done;
	if ((now = seed_now()) < p->next)
		return;
	p->next = now + 1.0;
	rate = (double)done / (now - p->t0);
	if (p->total > 0)
		fprintf(stderr, "%s: %s: %lld of %lld rows (%.0f%%), %.0f rows/s, %.0f s left\n",
		    p->prog, p->what, (long long)done, (long long)p->total,
		    100.0 * (double)done / (double)p->total, rate,
		    rate > 0 ? (double)(p->total - done) / rate : 0.0);
	else
		fprintf(stderr, "%s: %s: %lld rows, %.0f rows/s\n", p->prog, p->what,
		    (long long)done, rate);
}

void
seed_progress_end(struct seed_progress *p, int64_t done)
{
	double took = seed_now() - p->t0;

	if (p->quiet)
		return;
	if (done > 0)
		fprintf(stderr, "%s: %s: %lld rows in %.2f s (%.0f rows/s)\n", p->prog, p->what,
		    (long long)done, took, took > 0 ? (double)done / took : 0.0);
	else
		fprintf(stderr, "%s: %s: %.2f s\n", p->prog, p->what, took);
}

int
seed_read_file(const char *prog, const char *path, struct buf *b)
{
	char chunk[8192];
	FILE *f;
	size_t n;
	int rc = -1;

	if ((f = fopen(path, "r")) == NULL) {
		fprintf(stderr, "%s: %s: %s\n", prog, path, strerror(errno));
		return -1;
	}
	while ((n = fread(chunk, 1, sizeof(chunk), f)) > 0)
		if (buf_append(b, chunk, n) == -1) {
			fprintf(stderr, "%s: %s: out of memory\n", prog, path);
			goto out;
		}
	if (ferror(f)) {
		fprintf(stderr, "%s: %s: read error\n", prog, path);
		goto out;
	}
	if (buf_putc(b, '\0') == -1) {
		fprintf(stderr, "%s: %s: out of memory\n", prog, path);
		goto out;
	}
	b->len--;	/* the NUL is there, not counted */
	rc = 0;
out:
	(void)fclose(f);
	return rc;
}

uint64_t
seed_mix64(uint64_t x)
{
	x += SEED_MIX64_STEP;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
	return x ^ (x >> 31);
}
