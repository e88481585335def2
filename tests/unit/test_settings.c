/*
 * test_settings.c: the worker settings readers (common/settings.c): strict integers with
 * bounds, strings with defaults.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "settings.h"

static void
test_env_readers(void)
{
	long long v = 0;

	unsetenv("SLUICE_T");
	CHECK_INT(settings_int("SLUICE_T", 1, 10, 4, &v), 0);
	CHECK_INT(v, 4);
	setenv("SLUICE_T", "7", 1);
	CHECK_INT(settings_int("SLUICE_T", 1, 10, 4, &v), 0);
	CHECK_INT(v, 7);
	setenv("SLUICE_T", "-3", 1);
	CHECK_INT(settings_int("SLUICE_T", -5, 10, 4, &v), 0);
	CHECK_INT(v, -3);
	setenv("SLUICE_T", "11", 1);
	CHECK_INT(settings_int("SLUICE_T", 1, 10, 4, &v), -1);
	setenv("SLUICE_T", "7x", 1);
	CHECK_INT(settings_int("SLUICE_T", 1, 10, 4, &v), -1);
	setenv("SLUICE_T", " 7", 1);
	CHECK_INT(settings_int("SLUICE_T", 1, 10, 4, &v), -1);
	setenv("SLUICE_T", "+7", 1);
	CHECK_INT(settings_int("SLUICE_T", 1, 10, 4, &v), -1);
	setenv("SLUICE_T", "-", 1);
	CHECK_INT(settings_int("SLUICE_T", -10, 10, 4, &v), -1);
	CHECK_STR(settings_str("SLUICE_T", "d"), "-");
	unsetenv("SLUICE_T");
	CHECK_STR(settings_str("SLUICE_T", "d"), "d");
}

int
main(void)
{
	RUN(test_env_readers);
	return harness_done();
}
