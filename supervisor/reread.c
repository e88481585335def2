/*
 * reread.c: the endpoint list read again while sluiced runs, on SIGHUP or `ctl reload`.
 *
 * All or nothing.  The new list is parsed and its binaries checked; then every pool that
 * stays gets its new spec made and every endpoint that is new gets its pool made, its
 * socket bound (pool_new(): RUNDIR is the run user's, so sluiced binds it after dropping
 * root as well, and the setgid bit gives it the web server's group), none of its workers
 * started yet.  Only when all of that worked does anything running change: the removed
 * pools are stopped (their sockets closed and unlinked at once, their workers finish the
 * request they serve and leave), a pool whose spec changed starts a new generation on
 * its socket, an unchanged pool is not touched at all (same workers, same pids), and the
 * new pools join the list and start their workers at the next tick.  With hold (`ctl
 * reload` while a proxy is to be reloaded) the removed pools go on serving until
 * reread_prune(), which the client asks for once the proxy has forgotten their routes:
 * their sockets are closed after the proxy stopped sending to them, not before; a
 * client that never asks leaves them to the next re-read.  When anything fails
 * (a list that does not parse, a binary that cannot run, a socket that cannot be bound),
 * the new pools made so far are freed (their sockets closed and unlinked), the old list
 * and socket owners are put back, and the reason is returned: what ran goes on as it was.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "log.h"
#include "sluiced.h"

/* What a re-read prepares before anything running changes. */
struct reread {
	struct conf *old;		/* the running list, put back on failure */
	uid_t sock_uid;
	gid_t sock_gid;
	size_t n;			/* pools running before */
	struct pool_spec *specs;	/* each one's new spec, the list's order; zeroed when
					 * the pool is removed */
	unsigned char *keep;		/* 1: the pool stays */
	struct pool *fresh;		/* the new pools, sockets bound */
	size_t nfresh;
};

/* The prepared specs and new pools freed, the running list and owners put back. */
static void
reread_undo(struct sluiced *s, struct reread *r)
{
	struct pool *p;
	size_t i;

	while ((p = r->fresh) != NULL) {
		r->fresh = p->next;
		pool_free(p);
	}
	for (i = 0; r->keep != NULL && i < r->n; i++)
		if (r->keep[i])
			pool_spec_free(&r->specs[i]);
	conf_free(s->conf);
	s->conf = r->old;
	s->sock_uid = r->sock_uid;
	s->sock_gid = r->sock_gid;
}

/* Specs for the pools that stay and pools for the new endpoints: 0, or -1 with err. */
static int
reread_prepare(struct sluiced *s, struct reread *r, char *err, size_t errlen)
{
	const struct conf_endpoint *ep;
	struct pool *p;
	size_t i;

	for (p = s->pools, i = 0; p != NULL; p = p->next, i++) {
		if (p->removing || (ep = conf_find(s->conf, p->name)) == NULL)
			continue;
		if (pool_spec_make(s, ep, &r->specs[i]) == -1) {
			(void)snprintf(err, errlen, "%s: cannot make its settings (see the log)", p->name);
			return -1;
		}
		r->keep[i] = 1;
	}
	for (i = 0; i < s->conf->neps; i++) {
		ep = &s->conf->eps[i];
		if (pool_find(s, ep->name) != NULL)
			continue;
		if ((p = pool_new(s, ep)) == NULL) {
			(void)snprintf(err, errlen, "%s: cannot start: its socket or its settings "
			    "could not be made (sluiced's log says why)", ep->name);
			return -1;
		}
		p->next = r->fresh;
		r->fresh = p;
		r->nfresh++;
	}
	return 0;
}

/* Everything prepared takes effect (the removed pools only without hold); one line of
 * what changed into said[len]. */
static void
reread_commit(struct sluiced *s, struct reread *r, int hold, char *said, size_t len)
{
	struct pool *p, *next;
	size_t i, n, removed = 0, reloaded = 0, same = 0;
	int64_t now = pool_now();

	s->crash_loop_tries = s->conf->crash_loop_tries;
	for (p = s->pools, i = 0; p != NULL; p = p->next, i++) {
		if (p->removing)
			continue;
		if (!r->keep[i]) {
			if (!hold)
				pool_remove(p, now);
			removed++;
			continue;
		}
		pool_apply_socket(s, p, &r->specs[i]);
		p->spec.mode = r->specs[i].mode;
		p->spec.backlog = r->specs[i].backlog;
		memcpy(p->spec.where, r->specs[i].where, sizeof(p->spec.where));
		if (pool_spec_same(&p->spec, &r->specs[i])) {
			pool_spec_free(&r->specs[i]);
			same++;
		} else {
			pool_reload(p, &r->specs[i], now);
			reloaded++;
		}
	}
	(void)snprintf(said, len, "endpoints=%zu added=%zu removed=%zu reloaded=%zu "
	    "unchanged=%zu", s->conf->neps, r->nfresh, removed, reloaded, same);
	/* The new pools by name, for a client that waits until they are up; a name that
	 * does not fit whole is left out. */
	for (p = r->fresh, i = 0; p != NULL; p = next, i++) {
		next = p->next;
		n = strlen(said);
		if (n + strlen(p->name) + 6 < len)
			(void)snprintf(said + n, len - n, "%s%s", i == 0 ? " new=" : ",", p->name);
		p->next = s->pools;
		s->pools = p;
	}
	r->fresh = NULL;
	log_info("%zu endpoints: %zu added, %zu removed, %zu reloaded, %zu unchanged",
	    s->conf->neps, r->nfresh, removed, reloaded, same);
}

int
reread_list(struct sluiced *s, const char *who, int hold, char *said, size_t len)
{
	struct reread r;
	struct conf *c;
	struct pool *p;
	int rc = -1;

	memset(&r, 0, sizeof(r));
	if (s->stopping) {
		(void)snprintf(said, len, "sluiced is stopping");
		return -1;
	}
	if ((c = conf_load(s->conf_path, said, len)) == NULL)
		return -1;
	if (pool_check_binaries(s, c, said, len) == -1) {
		conf_free(c);
		return -1;
	}
	log_info("%s: re-reading %s", who, s->conf_path);
	for (p = s->pools; p != NULL; p = p->next)
		r.n++;
	r.specs = calloc(r.n + 1, sizeof(*r.specs));
	r.keep = calloc(r.n + 1, 1);
	r.old = s->conf;
	r.sock_uid = s->sock_uid;
	r.sock_gid = s->sock_gid;
	/* The specs take body_max from s->conf: the new list is in place while they are
	 * made, and the old one comes back on failure. */
	s->conf = c;
	if (r.specs == NULL || r.keep == NULL) {
		(void)snprintf(said, len, "out of memory");
		goto fail;
	}
	if (priv_sock_owner(s, c) == -1) {
		(void)snprintf(said, len, "socket_group %s: no such group", c->socket_group);
		goto fail;
	}
	if (reread_prepare(s, &r, said, len) == -1)
		goto fail;
	reread_commit(s, &r, hold, said, len);
	conf_free(r.old);
	rc = 0;
	goto out;
fail:
	reread_undo(s, &r);
out:
	free(r.specs);
	free(r.keep);
	return rc;
}

size_t
reread_prune(struct sluiced *s)
{
	struct pool *p;
	size_t n = 0;
	int64_t now = pool_now();

	for (p = s->pools; p != NULL; p = p->next)
		if (!p->removing && conf_find(s->conf, p->name) == NULL) {
			pool_remove(p, now);
			n++;
		}
	return n;
}
