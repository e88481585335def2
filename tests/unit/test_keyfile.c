/*
 * test_keyfile.c: the key files of common/keyfile.c (the chat's session key, the records
 * API's token secret): where they go, made once with mode 0600, the same key for workers
 * that start together, malformed files refused; and str_hex() against str_unhex().
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "harness.h"
#include "keyfile.h"
#include "str.h"

static char dir[64];

static void
write_text(const char *path, const char *text)
{
	FILE *f = fopen(path, "w");

	CHECK(f != NULL);
	if (f == NULL)
		return;
	fputs(text, f);
	fclose(f);
}

static void
test_path(void)
{
	char out[256];

	setenv("SLUICE_DB", "sqlite:/srv/x/chat.db", 1);
	CHECK_INT(keyfile_path("k.key", out, sizeof(out)), 0);
	CHECK_STR(out, "/srv/x/k.key");
	setenv("SLUICE_DB", "sqlite:chat.db", 1);
	CHECK_INT(keyfile_path("k.key", out, sizeof(out)), 0);
	CHECK_STR(out, "k.key");
	setenv("SLUICE_DB", "postgresql:///chat", 1);
	CHECK_INT(keyfile_path("k.key", out, sizeof(out)), 0);
	CHECK_STR(out, "data/k.key");
	unsetenv("SLUICE_DB");
	CHECK_INT(keyfile_path("k.key", out, sizeof(out)), 0);
	CHECK_STR(out, "data/k.key");
	CHECK_INT(keyfile_path("k.key", out, 5), -1);
}

static void
test_made_once(void)
{
	unsigned char a[64], b[64];
	char path[128];
	struct stat st;
	long n, m;

	snprintf(path, sizeof(path), "%s/once.key", dir);
	n = keyfile_load(path, a, sizeof(a), 32);
	CHECK_INT(n, 32);
	CHECK(stat(path, &st) == 0 && (st.st_mode & 0777) == 0600 && st.st_size == 65);
	m = keyfile_load(path, b, sizeof(b), 48);
	CHECK_INT(m, 32);
	CHECK(n == m && memcmp(a, b, 32) == 0);
}

/* Eight processes that find no file at once all end up with the same key. */
static void
test_same_key_for_concurrent_starts(void)
{
	unsigned char key[64], first[64];
	char path[128], kpath[160];
	int fds[8][2], i, same = 1;
	pid_t pid;

	snprintf(path, sizeof(path), "%s/race.key", dir);
	for (i = 0; i < 8; i++) {
		CHECK(pipe(fds[i]) == 0);
		if ((pid = fork()) == 0) {
			long k = keyfile_load(path, key, sizeof(key), 32);

			if (k != 32 || write(fds[i][1], key, 32) != 32)
				_exit(1);
			_exit(0);
		}
		close(fds[i][1]);
	}
	for (i = 0; i < 8; i++) {
		int status = 0;

		CHECK(wait(&status) > 0 && WIFEXITED(status) && WEXITSTATUS(status) == 0);
	}
	for (i = 0; i < 8; i++) {
		CHECK(read(fds[i][0], i == 0 ? first : key, 32) == 32);
		if (i > 0 && memcmp(first, key, 32) != 0)
			same = 0;
		close(fds[i][0]);
	}
	CHECK(same);
	/* No temporary file is left behind. */
	snprintf(kpath, sizeof(kpath), "ls %s | grep -c tmp >/dev/null", dir);
	CHECK(system(kpath) != 0);
}

static void
test_malformed_refused(void)
{
	static const char *const bad[] = {
		"", "abc\n", "zz00112233445566778899aabbccddeeff\n",
		"00112233445566778899aabbccddee\n",	/* 15 bytes: too short */
	};
	unsigned char key[64];
	char path[128];
	size_t i;

	snprintf(path, sizeof(path), "%s/bad.key", dir);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		write_text(path, bad[i]);
		CHECK_INT(keyfile_load(path, key, sizeof(key), 32), 0);
	}
	/* Longer than the caller's buffer. */
	write_text(path, "00112233445566778899aabbccddeeff00112233445566778899aabbccddeeff\n");
	CHECK_INT(keyfile_load(path, key, 16, 32), 0);
	CHECK_INT(keyfile_load(path, key, 32, 32), 32);
	/* A directory that does not exist: -1, not a key. */
	CHECK_INT(keyfile_load("/nonexistent/dir/k.key", key, sizeof(key), 32), -1);
}

static void
test_hex_round_trip(void)
{
	unsigned char in[4] = { 0x00, 0x7f, 0xa5, 0xff }, out[4];
	char text[9];

	str_hex(in, sizeof(in), text);
	CHECK_STR(text, "007fa5ff");
	CHECK_INT(str_unhex(text, 8, out, sizeof(out)), 4);
	CHECK(memcmp(in, out, 4) == 0);
	CHECK_INT(str_unhex("007FA5FF", 8, out, sizeof(out)), 4);
}

int
main(void)
{
	char cmd[96];

	snprintf(dir, sizeof(dir), "/tmp/test_keyfile.XXXXXX");
	if (mkdtemp(dir) == NULL) {
		perror("mkdtemp");
		return 1;
	}
	RUN(test_path);
	RUN(test_made_once);
	RUN(test_same_key_for_concurrent_starts);
	RUN(test_malformed_refused);
	RUN(test_hex_round_trip);
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", dir);
	if (system(cmd) != 0)
		fprintf(stderr, "cannot remove %s\n", dir);
	return harness_done();
}
