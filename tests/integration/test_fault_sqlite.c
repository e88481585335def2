/*
 * test_fault_sqlite: the SQLite file's storage failing under a running stack (nginx tuned,
 * sluiced, bin/rest), with real file systems mounted for the purpose.
 *
 * (a) Read-only.  Tests run as root, and chmod does not stop root; a read-only bind mount
 *     or "mount -o remount,ro" does, but the kernel refuses both while a process holds a
 *     file open for writing (EBUSY), and the workers do.  What really happens to a server
 *     whose disk goes read-only is ext4's errors=remount-ro: the file system turns
 *     read-only under the open files, and every later write fails with EROFS.  So the
 *     database lives on a small ext4 image on a loop device mounted errors=remount-ro, and
 *     the test raises a file system error through /sys/fs/ext4/loopN/trigger_fs_error.
 *     Then writes must get 503 {"code":"read_only"}, reads 200, and so again after every
 *     worker was killed and restarted on the read-only file.
 * (b) Disk full.  The database lives on a 4 MB tmpfs; a filler file takes the free space;
 *     POSTs of 32 kB rows then fail with 507 {"code":"storage_full"} (the first few may
 *     still fit in the pages the WAL already holds), reads go on, and once the filler is
 *     gone writes work again and "pragma integrity_check" says ok.
 * (c) Read-only, then writable again (chmod, no mount): within a second and a half of the
 *     chmod back, inserts succeed again in the same workers, without a reload.
 *
 * Mounts are made in a private mount namespace of the test (unshare(CLONE_NEWNS), "/"
 * made private), so nobody else sees them and they vanish with the test's processes even
 * if it dies; the normal path unmounts and removes everything itself.  Where mounting is
 * impossible (no privilege, no loop device, no ext4 trigger), the test prints a SKIP line
 * saying why and runs nothing: "0 passed" for that part, never a pass.
 */
#define _GNU_SOURCE	/* unshare() */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mount.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cjson/cJSON.h>

#include "chatfix.h"
#include "http.h"
#include "stack.h"
#include "../lib/harness.h"

#define FS_TIMEOUT_MS	30000

static const char fs_schema[] =
    "CREATE TABLE item (id integer PRIMARY KEY, name text NOT NULL);"
    "INSERT INTO item VALUES (1, 'one'), (2, 'two');";

static char fs_dir[64];		/* the test's directory: images and mount points */
static char fs_ro_mnt[128], fs_full_mnt[128];
static char fs_skip_ro[256], fs_skip_full[256];

/* The "code" of a JSON error body, copied into out ("" when there is none). */
static void
fs_code(const struct http_resp *r, char *out, size_t len)
{
	cJSON *j = NULL, *c;

	out[0] = '\0';
	if (r->body.data != NULL)
		j = cJSON_ParseWithLength(r->body.data, r->body.len);
	c = j != NULL && cJSON_IsObject(j) ? cJSON_GetObjectItem(j, "code") : NULL;
	if (cJSON_IsString(c))
		snprintf(out, len, "%s", c->valuestring);
	cJSON_Delete(j);
}

static int
fs_post(struct stack *s, long id, size_t name_len, struct http_resp *r)
{
	static const char *const json[] = { "Content-Type: application/json", NULL };
	char url[128], *body;
	size_t n;
	int rc;

	if ((body = malloc(name_len + 64)) == NULL)
		return -1;
	n = (size_t)snprintf(body, 64, "{\"id\":%ld,\"name\":\"", id);
	memset(body + n, 'x', name_len);
	memcpy(body + n + name_len, "\"}", 3);
	snprintf(url, sizeof(url), "%s/rest/v1/item", s->base);
	rc = http_do("POST", url, json, body, strlen(body), FS_TIMEOUT_MS, r);
	free(body);
	return rc;
}

/* GET of the rows' ids: 200 and a JSON array holding at least the two seeded rows. */
static int
fs_read_ok(struct stack *s, struct http_resp *r)
{
	char url[128];
	cJSON *j;
	int ok;

	snprintf(url, sizeof(url), "%s/rest/v1/item?select=id&order=id", s->base);
	if (http_do("GET", url, NULL, NULL, 0, FS_TIMEOUT_MS, r) < 0 || r->status != 200)
		return 0;
	j = cJSON_ParseWithLength(r->body.data, r->body.len);
	ok = cJSON_IsArray(j) && cJSON_GetArraySize(j) >= 2;
	cJSON_Delete(j);
	return ok;
}

static int
fs_start(struct stack *s, const char *dbpath)
{
	char conf[512], url[256];

	snprintf(url, sizeof(url), "sqlite:%s", dbpath);
	if (chatfix_exec(url, fs_schema) != 0)
		return -1;
	snprintf(conf, sizeof(conf), "db main %s\nrest /rest/v1/ workers=2 threads=2 db=main\n",
	    url);
	if (stack_start(s, conf, "tuned", 2, NULL) < 0)
		return -1;
	if (stack_wait_pool(s, "rest", 10000) < 0) {
		stack_stop(s);
		return -1;
	}
	return 0;
}

/* 1 when a new file cannot be made in dir because its file system is read-only (ext4's
 * emergency read-only state need not show in statvfs() flags). */
static int
fs_is_ro(const char *dir)
{
	char path[192];
	int fd;

	snprintf(path, sizeof(path), "%s/probe", dir);
	if ((fd = open(path, O_WRONLY | O_CREAT, 0644)) >= 0) {
		close(fd);
		unlink(path);
		return 0;
	}
	return errno == EROFS;
}

static void
test_fault_sqlite_read_only(void)
{
	struct http_resp r;
	struct stack s;
	char db[192], code[64], dev[128], trig[256];
	pid_t pids[8];
	int up = 0, n, i;

	http_resp_init(&r);
	snprintf(db, sizeof(db), "%s/data/ro.db", fs_ro_mnt);
	if (fs_start(&s, db) < 0) {
		CHECK(!"stack started on the ext4 image");
		goto out;
	}
	up = 1;
	CHECK(fs_post(&s, 10, 10, &r) == 0);
	CHECK_INT(r.status, 201);
	CHECK(fs_read_ok(&s, &r));

	/* The disk fails: ext4 remounts itself read-only under the open database. */
	if (stack_sh("basename $(findmnt -n -o SOURCE %s) > %s/dev", fs_ro_mnt, fs_dir) != 0) {
		CHECK(!"loop device found");
		goto out;
	}
	{
		char path[128];
		FILE *f;

		snprintf(path, sizeof(path), "%s/dev", fs_dir);
		dev[0] = '\0';
		if ((f = fopen(path, "r")) != NULL) {
			if (fgets(dev, sizeof(dev), f) == NULL)
				dev[0] = '\0';
			fclose(f);
		}
		dev[strcspn(dev, "\n")] = '\0';
	}
	snprintf(trig, sizeof(trig), "/sys/fs/ext4/%s/trigger_fs_error", dev);
	CHECK(stack_sh("echo sluice-test > %s", trig) == 0);
	CHECK(fs_is_ro(fs_ro_mnt));
	printf("  %s: file system error raised, %s is now %s\n", dev, fs_ro_mnt,
	    fs_is_ro(fs_ro_mnt) ? "read-only" : "STILL WRITABLE");

	for (i = 0; i < 3; i++) {
		CHECK(fs_post(&s, 20 + i, 10, &r) == 0);
		fs_code(&r, code, sizeof(code));
		printf("  POST on the read-only file system: %ld %s\n", r.status, code);
		CHECK_INT(r.status, 503);
		CHECK_STR(code, "read_only");
		/* The error names the failure, not the file: no path, no SQLite text. */
		CHECK(r.body.data != NULL && strstr(r.body.data, fs_dir) == NULL &&
		    strstr(r.body.data, "disk I/O") == NULL && strstr(r.body.data, ".db") == NULL);
		CHECK(fs_read_ok(&s, &r));
	}
	/* Workers started now open the file read-only: reads still work, writes are 503. */
	usleep(1100 * 1000);	/* past the supervisor's quick-death window */
	n = stack_worker_pids(&s, "rest", pids, 8);
	CHECK_INT(n, 2);
	for (i = 0; i < n; i++)
		kill(pids[i], SIGKILL);
	usleep(100 * 1000);
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	for (i = 0; i < 4; i++) {
		CHECK(fs_read_ok(&s, &r));
		if (r.status != 200)
			printf("  GET after the restart on the read-only file: %ld %.200s\n",
			    r.status, r.body.data ? r.body.data : "");
		CHECK(fs_post(&s, 30 + i, 10, &r) == 0);
		fs_code(&r, code, sizeof(code));
		CHECK_INT(r.status, 503);
		CHECK_STR(code, "read_only");
	}
	CHECK_INT(stack_pool_value(&s, "rest", "crashes"), n);
out:
	http_resp_free(&r);
	if (up)
		stack_stop(&s);
}

static void
test_fault_sqlite_disk_full(void)
{
	struct http_resp r;
	struct stack s;
	char db[192], url[256], code[64], filler[192];
	long id = 100, ok_before = 0, full = 0, other = 0;
	int up = 0, i;

	http_resp_init(&r);
	snprintf(db, sizeof(db), "%s/data/full.db", fs_full_mnt);
	snprintf(url, sizeof(url), "sqlite:%s", db);
	snprintf(filler, sizeof(filler), "%s/filler", fs_full_mnt);
	if (fs_start(&s, db) < 0) {
		CHECK(!"stack started on the tmpfs");
		goto out;
	}
	up = 1;
	CHECK(fs_post(&s, id++, 32768, &r) == 0);
	CHECK_INT(r.status, 201);

	/* Fill the file system (dd stops at ENOSPC and says so: its status is 1). */
	stack_sh("dd if=/dev/zero of=%s bs=64k 2>/dev/null", filler);
	stack_sh("df -k %s | tail -1", fs_full_mnt);
	for (i = 0; i < 64 && full == 0; i++) {
		CHECK(fs_post(&s, id++, 32768, &r) == 0);
		fs_code(&r, code, sizeof(code));
		if (r.status == 201)
			ok_before++;
		else if (r.status == 507 && strcmp(code, "storage_full") == 0)
			full++;
		else {
			other++;
			printf("  POST on the full file system: %ld %.200s\n", r.status,
			    r.body.data ? r.body.data : "");
		}
	}
	printf("  disk full: %ld POSTs fitted in pages the database already had, then 507 "
	    "storage_full\n", ok_before);
	CHECK_INT(full, 1);
	CHECK_INT(other, 0);
	for (i = 0; i < 3; i++) {
		CHECK(fs_post(&s, id++, 32768, &r) == 0);
		fs_code(&r, code, sizeof(code));
		CHECK_INT(r.status, 507);
		CHECK_STR(code, "storage_full");
		CHECK(r.body.data != NULL && strstr(r.body.data, fs_dir) == NULL &&
		    strstr(r.body.data, "full") != NULL && strstr(r.body.data, ".db") == NULL);
		CHECK(fs_read_ok(&s, &r));
	}
	CHECK(fs_post(&s, id++, 10, &r) == 0);
	CHECK(r.status == 201 || r.status == 507);

	/* Space again: writes work at once, and the file is sound. */
	CHECK(unlink(filler) == 0);
	for (i = 0; i < 3; i++) {
		CHECK(fs_post(&s, id++, 32768, &r) == 0);
		CHECK_INT(r.status, 201);
	}
	CHECK(fs_read_ok(&s, &r));
	CHECK_INT(stack_pool_value(&s, "rest", "crashes"), 0);
	stack_stop(&s);
	up = 0;
	{
		char ic[64] = "";

		CHECK(chatfix_text(url, "PRAGMA integrity_check", NULL, ic, sizeof(ic)) == 0);
		CHECK_STR(ic, "ok");
		/* Every 201 is a row: the 2 seeded, the first POST, those that fitted, the small
		 * one if it was accepted, and the 3 after. */
		printf("  rows at the end: %lld\n", (long long)chatfix_int(url,
		    "SELECT count(*) FROM item", NULL));
		CHECK(chatfix_int(url, "SELECT count(*) FROM item", NULL) >= 2 + 1 + ok_before + 3);
	}
out:
	http_resp_free(&r);
	if (up)
		stack_stop(&s);
}

/*
 * Regression ("read-only is sticky"): a worker's first write came while the file's write
 * permission was removed, so the group commit's own connection (gcommit.h) opened
 * read-only, and every later insert was answered 503 read_only, long after the permission
 * was back, until the pool was reloaded.  Now the writer looks again, at most once a
 * second: within about a second of the chmod back inserts succeed, by the same worker.
 * chmod does not bind root, but sluiced started as root runs the workers as its run
 * user, whom it does bind; the workers' connections opened before the chmod stay
 * read-write (an open file keeps its mode), so only the writer's is read-only.
 */
static void
test_fault_sqlite_read_only_not_sticky(void)
{
	struct http_resp r;
	struct stack s;
	struct stat st;
	char dir[64], db[128], url[160], conf[320], code[64];
	pid_t before[2], after[2];
	long long t0, took = -1;
	int up = 0, tries = 0, i;

	http_resp_init(&r);
	if (geteuid() != 0)
		SKIP("needs root (workers under another user than the file's)");
	snprintf(dir, sizeof(dir), "/tmp/sluice-rosticky-XXXXXX");
	if (mkdtemp(dir) == NULL) {
		CHECK(!"temporary directory");
		return;
	}
	snprintf(db, sizeof(db), "%s/ro.db", dir);
	snprintf(url, sizeof(url), "sqlite:%s", db);
	snprintf(conf, sizeof(conf), "db main %s\nrest /rest/v1/ workers=1 threads=1 db=main\n",
	    url);
	/* One worker of one thread: every POST meets the same writer, and no thread opens
	 * its first connection while the file is read-only (such a connection stays so,
	 * and its worker is replaced once the file is writable: db_sqlite_ready()). */
	if (chatfix_exec(url, fs_schema) != 0 || stack_start(&s, conf, "tuned", 2, NULL) < 0) {
		CHECK(!"stack started");
		goto out;
	}
	up = 1;
	CHECK(stack_wait_pool(&s, "rest", 10000) == 0);
	CHECK(fs_read_ok(&s, &r));
	CHECK_INT(stack_worker_pids(&s, "rest", before, 2), 1);
	CHECK(stat(db, &st) == 0);
	CHECK(chmod(db, 0440) == 0);
	/* Several refused writes: the writer has looked at the file lately, and looks
	 * again only once its second is over. */
	for (i = 0; i < 3; i++) {
		CHECK(fs_post(&s, 10, 10, &r) == 0);
		fs_code(&r, code, sizeof(code));
		printf("  POST with the file read-only: %ld %s\n", r.status, code);
		CHECK_INT(r.status, 503);
		CHECK_STR(code, "read_only");
		CHECK(fs_read_ok(&s, &r));
	}
	/* Writable again: no reload, no new worker. */
	CHECK(chmod(db, st.st_mode & 07777) == 0);
	t0 = stack_now_ms();
	while (stack_now_ms() - t0 < 5000) {
		tries++;
		if (fs_post(&s, 11, 10, &r) == 0 && r.status == 201) {
			took = stack_now_ms() - t0;
			break;
		}
		usleep(50 * 1000);
	}
	printf("  POST accepted %lld ms after the chmod back (%d tries, last %ld)\n", took,
	    tries, r.status);
	CHECK(took >= 0 && took <= 1500);
	/* Every POST goes through now. */
	CHECK(fs_post(&s, 12, 10, &r) == 0);
	CHECK_INT(r.status, 201);
	CHECK(fs_post(&s, 13, 10, &r) == 0);
	CHECK_INT(r.status, 201);
	CHECK_INT(stack_worker_pids(&s, "rest", after, 2), 1);
	CHECK_INT(after[0], before[0]);
	CHECK_INT(stack_pool_value(&s, "rest", "crashes"), 0);
	stack_stop(&s);
	up = 0;
	CHECK_INT(chatfix_int(url, "SELECT count(*) FROM item WHERE id >= 10", NULL), 3);
out:
	http_resp_free(&r);
	if (up)
		stack_stop(&s);
	stack_sh("rm -rf %s", dir);
}

/* Undoes fs_setup(): unmounts what is mounted and removes the directory. */
static void
fs_teardown(void)
{
	if (fs_dir[0] == '\0')
		return;
	stack_sh("umount %s 2>/dev/null || umount -l %s 2>/dev/null", fs_ro_mnt, fs_ro_mnt);
	stack_sh("umount %s 2>/dev/null || umount -l %s 2>/dev/null", fs_full_mnt, fs_full_mnt);
	stack_sh("rm -rf %s", fs_dir);
	fs_dir[0] = '\0';
}

/*
 * A private mount namespace, then the two file systems.  Sets fs_skip_ro / fs_skip_full
 * to the reason when a part cannot run.  Returns -1 when nothing can.
 */
static int
fs_setup(void)
{
	char why[160];

	if (unshare(CLONE_NEWNS) < 0) {
		snprintf(why, sizeof(why), "unshare(CLONE_NEWNS): %s", strerror(errno));
		goto none;
	}
	if (mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) < 0) {
		snprintf(why, sizeof(why), "making / private: %s", strerror(errno));
		goto none;
	}
	snprintf(fs_dir, sizeof(fs_dir), "/tmp/sluice-fs-XXXXXX");
	if (mkdtemp(fs_dir) == NULL) {
		snprintf(why, sizeof(why), "mkdtemp: %s", strerror(errno));
		fs_dir[0] = '\0';
		goto none;
	}
	atexit(fs_teardown);
	/* Started as root, sluiced runs the workers unprivileged: they must reach the
	 * mounts, and each database lives in a directory of its own (data/, made below),
	 * which sluiced hands over to them. */
	if (chmod(fs_dir, 0755) < 0) {
		snprintf(why, sizeof(why), "chmod: %s", strerror(errno));
		goto none;
	}
	snprintf(fs_ro_mnt, sizeof(fs_ro_mnt), "%s/ext4", fs_dir);
	snprintf(fs_full_mnt, sizeof(fs_full_mnt), "%s/tmpfs", fs_dir);
	if (stack_sh("mkdir -p %s %s", fs_ro_mnt, fs_full_mnt) != 0) {
		snprintf(why, sizeof(why), "mkdir failed");
		goto none;
	}
	if (mount("tmpfs", fs_full_mnt, "tmpfs", 0, "size=4m,mode=0755") < 0)
		snprintf(fs_skip_full, sizeof(fs_skip_full), "mount -t tmpfs: %s",
		    strerror(errno));
	if (stack_sh("command -v mkfs.ext4 >/dev/null") != 0)
		snprintf(fs_skip_ro, sizeof(fs_skip_ro), "no mkfs.ext4 (package e2fsprogs)");
	else if (stack_sh("truncate -s 16M %s/ext4.img && mkfs.ext4 -q -F %s/ext4.img "
	    ">/dev/null 2>&1", fs_dir, fs_dir) != 0)
		snprintf(fs_skip_ro, sizeof(fs_skip_ro), "mkfs.ext4 on an image failed");
	else if (stack_sh("mount -o loop,errors=remount-ro %s/ext4.img %s 2>%s/mount.err",
	    fs_dir, fs_ro_mnt, fs_dir) != 0) {
		snprintf(fs_skip_ro, sizeof(fs_skip_ro), "mount -o loop failed (no loop device "
		    "or no privilege; see below)");
		stack_sh("cat %s/mount.err", fs_dir);
	} else if (stack_sh("test -w /sys/fs/ext4/$(basename $(findmnt -n -o SOURCE %s))"
	    "/trigger_fs_error", fs_ro_mnt) != 0)
		snprintf(fs_skip_ro, sizeof(fs_skip_ro), "this kernel has no "
		    "/sys/fs/ext4/DEV/trigger_fs_error to make ext4 fail");
	if (fs_skip_full[0] == '\0' && stack_sh("mkdir -p %s/data", fs_full_mnt) != 0)
		snprintf(fs_skip_full, sizeof(fs_skip_full), "mkdir on the tmpfs failed");
	if (fs_skip_ro[0] == '\0' && stack_sh("mkdir -p %s/data", fs_ro_mnt) != 0)
		snprintf(fs_skip_ro, sizeof(fs_skip_ro), "mkdir on the ext4 image failed");
	return 0;
none:
	snprintf(fs_skip_ro, sizeof(fs_skip_ro), "%s", why);
	snprintf(fs_skip_full, sizeof(fs_skip_full), "%s", why);
	return -1;
}

int
main(void)
{
	signal(SIGPIPE, SIG_IGN);
	(void)fs_setup();
	if (fs_skip_ro[0] != '\0')
		printf("SKIP test_fault_sqlite_read_only (not run, not counted): %s\n", fs_skip_ro);
	else
		RUN(test_fault_sqlite_read_only);
	if (fs_skip_full[0] != '\0')
		printf("SKIP test_fault_sqlite_disk_full (not run, not counted): %s\n",
		    fs_skip_full);
	else
		RUN(test_fault_sqlite_disk_full);
	RUN(test_fault_sqlite_read_only_not_sticky);
	fs_teardown();
	return harness_done();
}
