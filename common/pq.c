/*
 * pq.c: loads libpq at run time (pq.h says why), when the first PostgreSQL database of the
 * process is opened.  The library stays loaded until the process exits, like one linked
 * at start-up.
 */
#define PQ_NO_MACROS

#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "pq.h"

struct pq_api pq_api;

static pthread_once_t pq_once = PTHREAD_ONCE_INIT;
static int pq_status = -1;
static char pq_error[256];

static void
pq_load_once(void)
{
	static const struct {
		const char *name;
		size_t off;
	} syms[] = {
#define PQ_SYM(f) { #f, offsetof(struct pq_api, f) },
		PQ_FUNCS(PQ_SYM)
#undef PQ_SYM
	};
	struct pq_api api;
	void *lib, *sym;
	const char *why;
	size_t i;

	if ((lib = dlopen(PQ_SONAME, RTLD_NOW | RTLD_LOCAL)) == NULL) {
		why = dlerror();
		(void)snprintf(pq_error, sizeof(pq_error), "cannot load %s: %s", PQ_SONAME,
		    why != NULL ? why : "unknown error");
		return;
	}
	for (i = 0; i < sizeof(syms) / sizeof(syms[0]); i++) {
		(void)dlerror();
		if ((sym = dlsym(lib, syms[i].name)) == NULL) {
			why = dlerror();
			(void)snprintf(pq_error, sizeof(pq_error), "%s has no %s: %s", PQ_SONAME,
			    syms[i].name, why != NULL ? why : "null symbol");
			(void)dlclose(lib);
			return;
		}
		/* ISO C has no conversion from void * to a function pointer; POSIX
		 * guarantees that the representation is the same. */
		memcpy((char *)&api + syms[i].off, &sym, sizeof(sym));
	}
	pq_api = api;
	pq_status = 0;
}

int
pq_load(char *err, size_t errlen)
{
	if (pthread_once(&pq_once, pq_load_once) != 0) {
		(void)snprintf(err, errlen, "cannot load %s: pthread_once failed", PQ_SONAME);
		return -1;
	}
	if (pq_status == -1) {
		(void)snprintf(err, errlen, "%s", pq_error);
		return -1;
	}
	return 0;
}
