/*
 * test_settings.c: the worker settings (common/settings.c): the table is well formed, its
 * one parser reads integers strictly within a row's bounds and choices by their words,
 * strings come back as they are, and docs/endpoints.conf.5 documents every row.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "harness.h"
#include "settings.h"

/* Read relative to the repository's root, where the tests run. */
#define MAN_PATH	"docs/endpoints.conf.5"
#define MAN_ITEMS_MAX	128
#define MAN_NAME_MAX	64
#define MAN_TEXT_MAX	1024

/* Every row: a SLUICE_ name given once, a line of doc, a default its own parser accepts. */
static void
test_table(void)
{
	size_t i, j, n;

	for (i = 0; i < SETTING__MAX; i++) {
		const struct setting *s = &settings_table[i];

		CHECK(s->name != NULL && strncmp(s->name, "SLUICE_", 7) == 0);
		CHECK(s->doc != NULL && *s->doc != '\0' && strchr(s->doc, '\n') == NULL);
		for (j = 0; j < i; j++)
			CHECK(strcmp(settings_table[j].name, s->name) != 0);
		switch (s->kind) {
		case SETTING_INT:
			CHECK(s->min <= s->def && s->def <= s->max);
			CHECK(s->choices == NULL);
			break;
		case SETTING_CHOICE:
			CHECK(s->choices != NULL);
			for (n = 0; s->choices != NULL && s->choices[n] != NULL; n++)
				continue;
			CHECK(s->def >= 0 && (size_t)s->def < n);
			break;
		case SETTING_STR:
			CHECK(s->choices == NULL);
			break;
		}
	}
}

static void
test_env_readers(void)
{
	long long v = 0;

	/* SLUICE_THREADS: an integer in [1, 256], default 1. */
	unsetenv("SLUICE_THREADS");
	CHECK_INT(settings_int(SETTING_THREADS, &v), 0);
	CHECK_INT(v, 1);
	setenv("SLUICE_THREADS", "", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), 0);
	CHECK_INT(v, 1);
	setenv("SLUICE_THREADS", "7", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), 0);
	CHECK_INT(v, 7);
	setenv("SLUICE_THREADS", "256", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), 0);
	CHECK_INT(v, 256);
	v = 99;
	setenv("SLUICE_THREADS", "257", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), -1);
	setenv("SLUICE_THREADS", "0", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), -1);
	setenv("SLUICE_THREADS", "7x", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), -1);
	setenv("SLUICE_THREADS", " 7", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), -1);
	setenv("SLUICE_THREADS", "+7", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), -1);
	setenv("SLUICE_THREADS", "-3", 1);
	CHECK_INT(settings_int(SETTING_THREADS, &v), -1);
	CHECK_INT(v, 99);
	unsetenv("SLUICE_THREADS");

	/* A negative bound: SLUICE_SQLITE_MMAP takes -1; a lone '-' is no number. */
	setenv("SLUICE_SQLITE_MMAP", "-1", 1);
	CHECK_INT(settings_int(SETTING_SQLITE_MMAP, &v), 0);
	CHECK_INT(v, -1);
	setenv("SLUICE_SQLITE_MMAP", "-2", 1);
	CHECK_INT(settings_int(SETTING_SQLITE_MMAP, &v), -1);
	setenv("SLUICE_SQLITE_MMAP", "-", 1);
	CHECK_INT(settings_int(SETTING_SQLITE_MMAP, &v), -1);
	unsetenv("SLUICE_SQLITE_MMAP");

	/* Strings come back as they are, NULL when unset. */
	setenv("SLUICE_TEMPLATE", "-", 1);
	CHECK_STR(settings_get(SETTING_TEMPLATE), "-");
	setenv("SLUICE_TEMPLATE", "", 1);
	CHECK_STR(settings_get(SETTING_TEMPLATE), "");
	unsetenv("SLUICE_TEMPLATE");
	CHECK(settings_get(SETTING_TEMPLATE) == NULL);
	/* A string row is no number. */
	CHECK_INT(settings_int(SETTING_DB, &v), -1);
}

/* Choices are validated by the table: a word in any case, its index; anything else -1. */
static void
test_choices(void)
{
	static const struct {
		enum setting_key key;
		const char *val;
		int rc;
		long long want;
	} cases[] = {
		{ SETTING_LOG_LEVEL, NULL, 0, 2 },
		{ SETTING_LOG_LEVEL, "", 0, 2 },
		{ SETTING_LOG_LEVEL, "error", 0, 0 },
		{ SETTING_LOG_LEVEL, "warn", 0, 1 },
		{ SETTING_LOG_LEVEL, "debug", 0, 3 },
		{ SETTING_LOG_LEVEL, "DEBUG", 0, 3 },
		{ SETTING_LOG_LEVEL, "verbose", -1, 0 },
		{ SETTING_LOG_LEVEL, "info ", -1, 0 },
		{ SETTING_LOG_LEVEL, "2", -1, 0 },
		{ SETTING_DB_ISOLATION, NULL, 0, 0 },
		{ SETTING_DB_ISOLATION, "serializable", 0, 3 },
		{ SETTING_DB_ISOLATION, "snapshot", -1, 0 },
		{ SETTING_SQLITE_SYNC, NULL, 0, 2 },
		{ SETTING_SQLITE_SYNC, "off", 0, 0 },
		{ SETTING_SQLITE_SYNC, "Normal", 0, 1 },
		{ SETTING_SQLITE_SYNC, "extra", -1, 0 },
		{ SETTING_SECCOMP, NULL, 0, 1 },
		{ SETTING_SECCOMP, "0", 0, 0 },
		{ SETTING_SECCOMP, "yes", -1, 0 },
	};
	size_t i;

	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const char *name = settings_table[cases[i].key].name;
		long long v = 12345;

		if (cases[i].val == NULL)
			unsetenv(name);
		else
			setenv(name, cases[i].val, 1);
		CHECK_INT(settings_int(cases[i].key, &v), cases[i].rc);
		CHECK_INT(v, cases[i].rc == 0 ? cases[i].want : 12345);
		unsetenv(name);
	}
}

/* One item of the man page: .TP, then .B or .BI with the name first, then its text. */
struct man_item {
	char section[32];
	char name[MAN_NAME_MAX];
	char text[MAN_TEXT_MAX];
};

static struct man_item man_items[MAN_ITEMS_MAX];
static size_t man_nitems;

/* Reads the items of the man page; 0 or -1. */
static int
man_load(void)
{
	char line[1024], section[32] = "";
	struct man_item *it = NULL;
	FILE *f;
	int after_tp = 0;
	size_t n;

	if ((f = fopen(MAN_PATH, "r")) == NULL)
		return -1;
	while (fgets(line, sizeof(line), f) != NULL) {
		line[strcspn(line, "\n")] = '\0';
		if (strncmp(line, ".SH ", 4) == 0) {
			/* A longer heading is no section this test looks for. */
			n = strlen(line + 4);
			if (n >= sizeof(section))
				n = sizeof(section) - 1;
			memcpy(section, line + 4, n);
			section[n] = '\0';
			it = NULL;
			after_tp = 0;
			continue;
		}
		if (strcmp(line, ".TP") == 0) {
			it = NULL;
			after_tp = 1;
			continue;
		}
		if (after_tp && (strncmp(line, ".B ", 3) == 0 || strncmp(line, ".BI ", 4) == 0)) {
			const char *p = line + (line[2] == ' ' ? 3 : 4);

			after_tp = 0;
			if (man_nitems == MAN_ITEMS_MAX) {
				fclose(f);
				return -1;
			}
			it = &man_items[man_nitems++];
			memcpy(it->section, section, sizeof(section));
			n = strcspn(p, " =\"");
			if (n >= sizeof(it->name))
				n = sizeof(it->name) - 1;
			memcpy(it->name, p, n);
			it->name[n] = '\0';
			it->text[0] = '\0';
			continue;
		}
		after_tp = 0;
		if (it != NULL && line[0] != '.') {
			n = strlen(it->text);
			(void)snprintf(it->text + n, sizeof(it->text) - n, "%s ", line);
		}
	}
	fclose(f);
	return 0;
}

static const struct man_item *
man_find(const char *section, const char *name)
{
	size_t i;

	for (i = 0; i < man_nitems; i++)
		if (strcmp(man_items[i].section, section) == 0 &&
		    strcmp(man_items[i].name, name) == 0)
			return &man_items[i];
	return NULL;
}

/* Every row of the table is a WORKER SETTINGS item (with its words, for a choice), and
 * every such item is a row. */
static void
test_man_worker_settings(void)
{
	const struct man_item *it;
	size_t i, j, rows = 0;

	CHECK_INT(man_load(), 0);
	for (i = 0; i < SETTING__MAX; i++) {
		const struct setting *s = &settings_table[i];

		it = man_find("WORKER SETTINGS", s->name);
		if (it == NULL) {
			harness_fail(__FILE__, __LINE__, "%s: %s is not documented", MAN_PATH,
			    s->name);
			continue;
		}
		for (j = 0; s->kind == SETTING_CHOICE && s->choices[j] != NULL; j++)
			if (strstr(it->text, s->choices[j]) == NULL)
				harness_fail(__FILE__, __LINE__, "%s: %s: the word %s is missing",
				    MAN_PATH, s->name, s->choices[j]);
	}
	for (i = 0; i < man_nitems; i++) {
		if (strcmp(man_items[i].section, "WORKER SETTINGS") != 0)
			continue;
		rows++;
		for (j = 0; j < SETTING__MAX; j++)
			if (strcmp(settings_table[j].name, man_items[i].name) == 0)
				break;
		if (j == SETTING__MAX)
			harness_fail(__FILE__, __LINE__, "%s: %s is documented as a worker "
			    "setting but is not in the settings table", MAN_PATH,
			    man_items[i].name);
	}
	CHECK_INT(rows, SETTING__MAX);
}

/* Parses text as an endpoint list; the conf (caller frees) or NULL. */
static struct conf *
conf_text(const char *text)
{
	char path[] = "/tmp/test_settings.XXXXXX", err[256];
	struct conf *c;
	FILE *f;
	int fd;

	if ((fd = mkstemp(path)) < 0 || (f = fdopen(fd, "w")) == NULL)
		return NULL;
	fputs(text, f);
	fclose(f);
	c = conf_load(path, err, sizeof(err));
	unlink(path);
	return c;
}

/*
 * The endpoint list's global settings and endpoint keys, with a value each accepts.  The
 * parser (supervisor/conf.c) knows exactly these: a global it does not know is refused,
 * and so is an endpoint key that is neither one of these nor a worker setting (a
 * handler's own is written env.KEY=VALUE).
 */
static const struct {
	const char *key, *value;
} conf_globals[] = {
	{ "listen", "127.0.0.1:8080" }, { "nginx_workers", "2" }, { "nginx_user", "www-data" },
	{ "socket_group", "www-data" }, { "body_max", "512k" }, { "crash_loop_tries", "5" },
	{ "user", "nobody" }, { "group", "nogroup" }, { "access_log", "on" }, { "cpus", "4" },
	{ "pool_address", "10.0.0.2" }, { "metrics", "off" },
	{ "metrics_listen", "127.0.0.1:9145" }, { "nginx_status", "9146" },
}, conf_keys[] = {
	{ "workers", "2" }, { "threads", "2" }, { "db", "main" }, { "backlog", "16" },
	{ "mode", "0600" }, { "binary", "/bin/true" }, { "tcp", "127.0.0.1:9001" },
	{ "stream", "0" },
};

/* Every global setting and endpoint key of the parser is documented, and everything
 * documented as one is one the parser knows. */
static void
test_man_conf_keys(void)
{
	char text[512];
	struct conf *c;
	size_t i, j;

	CHECK(man_nitems > 0 || man_load() == 0);
	for (i = 0; i < sizeof(conf_globals) / sizeof(conf_globals[0]); i++) {
		if (man_find("GLOBAL SETTINGS", conf_globals[i].key) == NULL)
			harness_fail(__FILE__, __LINE__, "%s: set %s is not documented",
			    MAN_PATH, conf_globals[i].key);
		(void)snprintf(text, sizeof(text), "set %s %s\nx =/x\n", conf_globals[i].key,
		    conf_globals[i].value);
		c = conf_text(text);
		CHECK(c != NULL);
		conf_free(c);
	}
	for (i = 0; i < sizeof(conf_keys) / sizeof(conf_keys[0]); i++) {
		if (man_find("ENDPOINT KEYS", conf_keys[i].key) == NULL)
			harness_fail(__FILE__, __LINE__, "%s: endpoint key %s is not documented",
			    MAN_PATH, conf_keys[i].key);
		(void)snprintf(text, sizeof(text), "db main sqlite:x.db\nx =/x %s=%s\n",
		    conf_keys[i].key, conf_keys[i].value);
		c = conf_text(text);
		/* Known: taken by the parser, not passed through to the workers. */
		CHECK(c != NULL && c->neps == 1 && c->eps[0].nextra == 0);
		conf_free(c);
	}
	for (i = 0; i < man_nitems; i++) {
		int global = strcmp(man_items[i].section, "GLOBAL SETTINGS") == 0;

		if (!global && strcmp(man_items[i].section, "ENDPOINT KEYS") != 0)
			continue;
		if (global) {
			for (j = 0; j < sizeof(conf_globals) / sizeof(conf_globals[0]); j++)
				if (strcmp(conf_globals[j].key, man_items[i].name) == 0)
					break;
			if (j < sizeof(conf_globals) / sizeof(conf_globals[0]))
				continue;
		} else {
			for (j = 0; j < sizeof(conf_keys) / sizeof(conf_keys[0]); j++)
				if (strcmp(conf_keys[j].key, man_items[i].name) == 0)
					break;
			if (j < sizeof(conf_keys) / sizeof(conf_keys[0]))
				continue;
		}
		harness_fail(__FILE__, __LINE__, "%s: %s %s is documented but not in this "
		    "test's list of what the parser knows", MAN_PATH, man_items[i].section,
		    man_items[i].name);
	}
	/* The parser's set of globals is closed: anything else is refused. */
	c = conf_text("set no_such_setting 1\nx =/x\n");
	CHECK(c == NULL);
	conf_free(c);
}

int
main(void)
{
	RUN(test_table);
	RUN(test_env_readers);
	RUN(test_choices);
	RUN(test_man_worker_settings);
	RUN(test_man_conf_keys);
	return harness_done();
}
