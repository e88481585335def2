/*
 * settings.c: the worker settings, read from the environment that sluiced sets from the
 * endpoint list.  Strict on purpose: a setting that is present but malformed stops the
 * worker at start-up with a logged reason instead of running with a guess.
 */
#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "settings.h"

int
settings_int(const char *name, long long min, long long max, long long def, long long *out)
{
	const char *s = getenv(name);
	long long v = 0;
	size_t i;
	int neg = 0;

	if (s == NULL || *s == '\0') {
		*out = def;
		return 0;
	}
	/* A single leading '-' is allowed so that negative bounds can be expressed. */
	i = 0;
	if (s[0] == '-') {
		neg = 1;
		i = 1;
	}
	if (s[i] == '\0' || strlen(s + i) > 18)
		goto bad;
	for (; s[i] != '\0'; i++) {
		if (!isdigit((unsigned char)s[i]))
			goto bad;
		v = v * 10 + (s[i] - '0');
	}
	if (neg)
		v = -v;
	if (v < min || v > max)
		goto bad;
	*out = v;
	return 0;
bad:
	log_err("%s=%s: want an integer in [%lld, %lld]", name, s, min, max);
	return -1;
}

const char *
settings_str(const char *name, const char *def)
{
	const char *s = getenv(name);

	return s != NULL ? s : def;
}
