/*
 * test_settings.c: the worker settings (common/settings.c): the table is well formed, its
 * one parser reads integers strictly within a row's bounds and choices by their words,
 * strings come back as they are, and docs/endpoints.conf.5 documents every row.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "settings.h"

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
	CHECK_STR(settings_str("SLUICE_TEMPLATE", "d"), "-");
	setenv("SLUICE_TEMPLATE", "", 1);
	CHECK_STR(settings_get(SETTING_TEMPLATE), "");
	unsetenv("SLUICE_TEMPLATE");
	CHECK(settings_get(SETTING_TEMPLATE) == NULL);
	CHECK_STR(settings_str("SLUICE_TEMPLATE", "d"), "d");
	/* The by-name reader knows only the table's string rows. */
	setenv("SLUICE_NOT_A_ROW", "x", 1);
	CHECK(settings_str("SLUICE_NOT_A_ROW", "d") == NULL);
	CHECK(settings_str("SLUICE_THREADS", "d") == NULL);
	unsetenv("SLUICE_NOT_A_ROW");
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

int
main(void)
{
	RUN(test_table);
	RUN(test_env_readers);
	RUN(test_choices);
	return harness_done();
}
