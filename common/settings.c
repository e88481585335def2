/*
 * settings.c: the worker settings, read from the environment that sluiced sets from the
 * endpoint list.  Strict on purpose: a setting that is present but malformed stops the
 * worker at start-up with a logged reason instead of running with a guess.
 */
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "settings.h"
#include "str.h"

int
settings_int(const char *name, long long min, long long max, long long def, long long *out)
{
	const char *s = getenv(name);
	int64_t v;

	if (s == NULL || *s == '\0') {
		*out = def;
		return 0;
	}
	if (str_to_int(s, strlen(s), min, max, &v) == 0) {
		*out = v;
		return 0;
	}
	log_err("%s=%s: want an integer in [%lld, %lld]", name, s, min, max);
	return -1;
}

const char *
settings_str(const char *name, const char *def)
{
	const char *s = getenv(name);

	return s != NULL ? s : def;
}
