/*
 * test_seed: the seeders write SQLite databases whole or not at all (sql/seedfile.h).
 *
 * The real chat-seed, asked for a load of tens of millions of messages, prints progress
 * lines (rows done, total, rate) while it loads; killed in the middle (SIGTERM, SIGINT,
 * SIGKILL) it leaves no database at the target path, and after a catchable signal no
 * temporary file either.  A completed seed leaves exactly the database (no temporary
 * file, no -wlock), refuses to overwrite it without -f, replaces it with -f, and the real
 * stack (sluiced, chat_page, nginx) serves it.  chinook-seed alike: whole file, refusal
 * without -f, no leftovers.
 */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "chatfix.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

static char dir[64];

/* The number of entries of dir whose name contains part. */
static int
entries_with(const char *part)
{
	struct dirent *e;
	DIR *d = opendir(dir);
	int n = 0;

	if (d == NULL)
		return -1;
	while ((e = readdir(d)) != NULL)
		if (strstr(e->d_name, part) != NULL)
			n++;
	closedir(d);
	return n;
}

/* Occurrences of needle in the file at path (0 when unreadable). */
static int
file_count(const char *path, const char *needle)
{
	char buf[65536], *at;
	size_t n;
	FILE *f = fopen(path, "r");
	int c = 0;

	if (f == NULL)
		return 0;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	fclose(f);
	buf[n] = '\0';
	for (at = buf; (at = strstr(at, needle)) != NULL; at += strlen(needle))
		c++;
	return c;
}

/* Starts chat-seed on sqlite:DIR/chat.db with env, its stderr into log; returns the pid. */
static pid_t
seed_start(const char *msgs, const char *log)
{
	char url[128];
	pid_t pid;

	snprintf(url, sizeof(url), "sqlite:%s/chat.db", dir);
	if ((pid = fork()) != 0)
		return pid;
	if (freopen(log, "w", stderr) == NULL)
		_exit(126);
	setenv("SEED_MSG_COUNT", msgs, 1);
	execl(chatfix_seeder(), chatfix_seeder(), "-p", "small", "-S", "sql/chat", url,
	    (char *)NULL);
	_exit(127);
}

/*
 * A long load, interrupted once it has said how far it is: nothing at the target path.
 * Regression: chat-seed wrote straight into PATH, and `make run` then served the
 * half-written file (seed.sh only seeds a missing file).
 */
static void
test_chat_seed_interrupted(void)
{
	static const int sigs[] = { SIGTERM, SIGINT, SIGKILL };
	char log[128], target[128];
	size_t i;
	pid_t pid;
	int status, waited;

	snprintf(log, sizeof(log), "%s/seed.log", dir);
	snprintf(target, sizeof(target), "%s/chat.db", dir);
	for (i = 0; i < sizeof(sigs) / sizeof(sigs[0]); i++) {
		/* The previous run's lines must not count for this one. */
		(void)unlink(log);
		if ((pid = seed_start("200000000", log)) < 0) {
			CHECK(!"fork");
			return;
		}
		/* Wait for the first progress line of the messages (at most 60 s). */
		for (waited = 0; waited < 600; waited++) {
			if (file_count(log, "chat-seed: messages: ") > 0)
				break;
			usleep(100 * 1000);
		}
		CHECK(file_count(log, " of 200000000 rows (") >= 1);
		CHECK(file_count(log, " rows/s") >= 1);
		CHECK_INT(entries_with("chat.db.seeding."), 1);
		CHECK(kill(pid, sigs[i]) == 0);
		CHECK(waitpid(pid, &status, 0) == pid);
		CHECK(WIFSIGNALED(status) && WTERMSIG(status) == sigs[i]);
		printf("  signal %d: %s\n", sigs[i], access(target, F_OK) == 0 ?
		    "database left at the target" : "no database at the target");
		CHECK(access(target, F_OK) == -1 && errno == ENOENT);
		CHECK_INT(entries_with("chat.db"), sigs[i] == SIGKILL ? 1 : 0);
		/* After SIGKILL the temporary file stays, under its own name: the next seed
		 * does not mistake it for a database. */
		stack_sh("rm -f %s/chat.db.seeding.*", dir);
	}
}

static void
test_chat_seed_completed_is_served(void)
{
	struct http_resp r;
	struct stack st;
	char url[128], log[128], conf[512];
	int64_t n;

	snprintf(url, sizeof(url), "sqlite:%s/chat.db", dir);
	snprintf(log, sizeof(log), "%s/seed.log", dir);
	CHECK_INT(chatfix_seed(url, "SEED_MSG_COUNT=3000"), 0);
	/* The database alone: no temporary file, journal or lock file beside it. */
	CHECK_INT(entries_with("chat.db"), 1);
	CHECK_INT(chatfix_int(url, "SELECT count(*) FROM messages", NULL), 3000);
	/* An existing database is refused, untouched, without -f; -f replaces it. */
	CHECK_INT(stack_sh("SEED_MSG_COUNT=10 %s -q -S sql/chat '%s' 2>%s", chatfix_seeder(),
	    url, log), 1);
	CHECK_INT(file_count(log, "exists already (use -f to replace it)"), 1);
	CHECK_INT(chatfix_int(url, "SELECT count(*) FROM messages", NULL), 3000);
	CHECK_INT(stack_sh("SEED_MSG_COUNT=2000 %s -q -f -S sql/chat '%s'", chatfix_seeder(),
	    url), 0);
	n = chatfix_int(url, "SELECT count(*) FROM messages", NULL);
	CHECK_INT(n, 2000);
	CHECK_INT(entries_with(".seeding."), 0);

	snprintf(conf, sizeof(conf), "db chat %s\nchat_page =/ workers=1 threads=2 db=chat\n",
	    url);
	if (stack_start(&st, conf, "tuned", 1, NULL) < 0) {
		CHECK(!"stack started");
		return;
	}
	http_resp_init(&r);
	CHECK(chatfix_get(st.base, "/", NULL, NULL, &r) == 0);
	CHECK_INT(r.status, 200);
	CHECK(chatfix_count(&r, "starcord") > 0);
	http_resp_free(&r);
	stack_stop(&st);
}

static void
test_chinook_seed_whole_file(void)
{
	const char *bin = getenv("SLUICE_BIN");
	char seeder[64], target[128];

	snprintf(seeder, sizeof(seeder), "build/%s/sql/chinook-seed",
	    bin != NULL && strstr(bin, "san") != NULL ? "san" : "rel");
	snprintf(target, sizeof(target), "%s/chinook.db", dir);
	CHECK_INT(stack_sh("%s sqlite:%s >/dev/null", seeder, target), 0);
	CHECK(access(target, F_OK) == 0);
	CHECK_INT(entries_with("chinook.db"), 1);
	CHECK_INT(stack_sh("%s sqlite:%s >/dev/null 2>&1", seeder, target), 1);
	CHECK_INT(stack_sh("%s -f sqlite:%s >/dev/null", seeder, target), 0);
	CHECK_INT(entries_with("chinook.db"), 1);
	/* A directory that is not there is named as such. */
	CHECK_INT(stack_sh("%s sqlite:%s/nodir/x.db 2>&1 | grep -q 'directory %s/nodir'", seeder,
	    dir, dir), 0);
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	snprintf(dir, sizeof(dir), "/tmp/sluice-seed-XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_chat_seed_interrupted);
	RUN(test_chat_seed_completed_is_served);
	RUN(test_chinook_seed_whole_file);
	stack_sh("rm -rf %s", dir);
	return harness_done();
}
