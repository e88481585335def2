/*
 * settings.h: the worker settings (SLUICE_* environment variables, set by sluiced from the
 * endpoint list), read strictly.
 */
#ifndef SLUICE_SETTINGS_H
#define SLUICE_SETTINGS_H

/*
 * Reads the integer environment variable name (e.g. "SLUICE_THREADS").  Returns 0 with
 * def in *out when unset; -1 with a logged message when set but not an integer in
 * [min, max] (strict: no sign tricks, no trailing bytes), so start-up can refuse it.
 */
int settings_int(const char *name, long long min, long long max, long long def,
    long long *out);

/* The string in the environment variable name, or def.  Borrowed from the environment. */
const char *settings_str(const char *name, const char *def);

#endif /* SLUICE_SETTINGS_H */
