/*
 * conf.c: the endpoint list parser (see conf.h for the format).
 *
 * Parsing is strict on purpose: the file names sockets, binaries and nginx locations, so
 * a typo must stop start-up (or a SIGHUP reload) with "path:line: reason" rather than
 * produce a half-working stack.  Every string kept in the result is a heap copy owned by
 * the struct conf; conf_free() releases all of it.
 */
/* sched_getaffinity(), CPU_COUNT_S(). */
#define _GNU_SOURCE	/* NOLINT(bugprone-reserved-identifier,cert-dcl37-c,cert-dcl51-cpp) */
#include <ctype.h>
#include <arpa/inet.h>
#include <errno.h>
#include <sched.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <unistd.h>

#include "conf.h"
#include "db.h"
#include "log.h"
#include "settings.h"
#include "str.h"

#define CONF_TOKENS_MAX	(CONF_EXTRA_MAX + 16)

/* The parser's state for one file; err points into the caller's buffer. */
struct conf_parser {
	struct conf *c;
	const char *path;
	int line;
	char *err;
	size_t errlen;
	size_t cap;		/* allocated slots in c->eps */
};

static void conf_error(struct conf_parser *, const char *, ...)
    __attribute__((format(printf, 2, 3)));

static void
conf_error(struct conf_parser *p, const char *fmt, ...)
{
	char msg[512];
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (n < 0)
		msg[0] = '\0';
	/* A truncated message is still the best we have; the caller's buffer bounds it. */
	if (p->errlen > 0)
		(void)snprintf(p->err, p->errlen, "%s:%d: %s", p->path, p->line, msg);
}

/* Names become file, socket and environment names: [a-z][a-z0-9_]*, short. */
static int
conf_valid_name(const char *s)
{
	size_t i;

	if (!islower((unsigned char)s[0]))
		return 0;
	for (i = 0; s[i] != '\0'; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
			return 0;
	return i < CONF_NAME_MAX;
}

/*
 * Values are pasted verbatim into nginx.conf, Apache configs and unix paths, so they may
 * not contain anything those would interpret: quotes, braces, ';', '$', '\\' or '#'.
 * Blanks cannot occur (they separate tokens).
 */
static int
conf_valid_value(const char *s)
{
	const unsigned char *u;

	if (*s == '\0')
		return 0;
	for (u = (const unsigned char *)s; *u != '\0'; u++)
		if (!isgraph(*u) || strchr("\"'{};$\\#`", *u) != NULL)
			return 0;
	return 1;
}

/* URL paths: an even smaller set, since they also end up in nginx location lines. */
static int
conf_valid_route_path(const char *s)
{
	const unsigned char *u;

	if (s[0] != '/')
		return 0;
	for (u = (const unsigned char *)s; *u != '\0'; u++)
		if (!isalnum(*u) && strchr("/_-.~", *u) == NULL)
			return 0;
	return strstr(s, "//") == NULL && strstr(s, "/../") == NULL;
}

/* A strict decimal integer in [min, max] (str_to_int()): no sign, no blanks, no suffix. */
static int conf_parse_int(const char *, long long, long long, long long *);

/* "a.b.c.d:port" with a dotted IPv4 address and a port in 1-65535: 0 or -1.  An explicit
 * address is required: ":port" would listen on every interface. */
static int
conf_valid_tcp(const char *s)
{
	const char *colon = strrchr(s, ':');
	char host[16];
	struct in_addr a;
	long long port;

	if (colon == NULL || colon == s || (size_t)(colon - s) >= sizeof(host))
		return -1;
	memcpy(host, s, (size_t)(colon - s));
	host[colon - s] = '\0';
	if (inet_pton(AF_INET, host, &a) != 1)
		return -1;
	return conf_parse_int(colon + 1, 1, 65535, &port);
}

static int
conf_parse_int(const char *s, long long min, long long max, long long *out)
{
	int64_t v;

	if (str_to_int(s, strlen(s), min, max, &v) == -1)
		return -1;
	*out = v;
	return 0;
}

/* A size: digits with an optional k or m suffix (powers of 1024), at most 1 GiB. */
static int
conf_parse_size(const char *s, long long *out)
{
	char buf[32];
	size_t n = strlen(s);
	long long mult = 1, v;

	if (n == 0 || n >= sizeof(buf))
		return -1;
	memcpy(buf, s, n + 1);
	if (buf[n - 1] == 'k' || buf[n - 1] == 'K')
		mult = 1024;
	else if (buf[n - 1] == 'm' || buf[n - 1] == 'M')
		mult = 1024 * 1024;
	if (mult != 1)
		buf[n - 1] = '\0';
	if (conf_parse_int(buf, 1, (1LL << 30) / mult, &v) == -1)
		return -1;
	*out = v * mult;
	return 0;
}

static int
conf_parse_octal(const char *s, unsigned max, unsigned *out)
{
	unsigned v = 0;
	size_t i;

	if (s[0] == '\0' || strlen(s) > 4)
		return -1;
	for (i = 0; s[i] != '\0'; i++) {
		if (s[i] < '0' || s[i] > '7')
			return -1;
		v = v * 8 + (unsigned)(s[i] - '0');
	}
	if (v > max)
		return -1;
	*out = v;
	return 0;
}

static int
conf_kv_set(struct conf_kv *kv, const char *key, const char *value)
{
	kv->key = strdup(key);
	kv->value = strdup(value);
	return kv->key != NULL && kv->value != NULL ? 0 : -1;
}

static void
conf_kv_free(struct conf_kv *kv, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		free(kv[i].key);
		free(kv[i].value);
	}
}

static int
conf_nomem(struct conf_parser *p)
{
	conf_error(p, "out of memory");
	return -1;
}

/* "IPV4:PORT" or "PORT" (on 127.0.0.1) into *addr (network order) and *port: 0 or -1. */
static int
conf_metrics_listen(const char *val, unsigned *addr, int *port)
{
	const char *colon = strrchr(val, ':'), *ps = colon != NULL ? colon + 1 : val;
	char host[16] = "127.0.0.1";
	struct in_addr in;
	long long v;

	if (colon != NULL) {
		if ((size_t)(colon - val) >= sizeof(host) || colon == val)
			return -1;
		memcpy(host, val, (size_t)(colon - val));
		host[colon - val] = '\0';
	}
	if (conf_parse_int(ps, 1, 65535, &v) == -1 || inet_pton(AF_INET, host, &in) != 1)
		return -1;
	*addr = in.s_addr;
	*port = (int)v;
	return 0;
}

/* The global setting key = val, checked, into the list's fields (or left for conf_get()).
 * 0, or -1 (the error said). */
static int
conf_set_value(struct conf_parser *p, const char *key, const char *val)
{
	struct conf *c = p->c;
	long long v;

	if (strcmp(key, "listen") == 0) {
		/* ADDR:PORT, PORT, [v6]:PORT or unix:PATH: nginx checks the rest. */
		free(c->listen);
		if ((c->listen = strdup(val)) == NULL)
			return conf_nomem(p);
	} else if (strcmp(key, "nginx_workers") == 0) {
		if (conf_parse_int(val, 0, 1024, &v) == -1) {
			conf_error(p, "nginx_workers: want an integer in [0, 1024]");
			return -1;
		}
		c->nginx_workers = (int)v;
	} else if (strcmp(key, "nginx_user") == 0) {
		if ((c->nginx_user = strdup(val)) == NULL)
			return conf_nomem(p);
	} else if (strcmp(key, "socket_group") == 0) {
		if ((c->socket_group = strdup(val)) == NULL)
			return conf_nomem(p);
	} else if (strcmp(key, "body_max") == 0) {
		if (conf_parse_size(val, &c->body_max) == -1) {
			conf_error(p, "body_max: want a size like 65536, 512k or 8m (at most 1024m)");
			return -1;
		}
	} else if (strcmp(key, "access_log") == 0) {
		if (strcmp(val, "on") != 0 && strcmp(val, "off") != 0 &&
		    strcmp(val, "json") != 0) {
			conf_error(p, "access_log: want on, off or json");
			return -1;
		}
		c->access_log = strcmp(val, "json") == 0 ? CONF_ACCESS_LOG_JSON :
		    strcmp(val, "on") == 0;
	} else if (strcmp(key, "user") == 0 || strcmp(key, "group") == 0 ||
	    strcmp(key, "pool_address") == 0) {
		/* sluiced's run user and group when started as root (supervisor/priv.c), read
		 * with conf_get(); sluiced checks that they exist.  pool_address is checked,
		 * with SLUICE_POOL_ADDRESS over it, in conf_resolve_pool_address(). */
	} else if (strcmp(key, "crash_loop_tries") == 0) {
		if (conf_parse_int(val, 1, 1000, &v) == -1) {
			conf_error(p, "crash_loop_tries: want an integer in [1, 1000]");
			return -1;
		}
		c->crash_loop_tries = (int)v;
	} else if (strcmp(key, "metrics") == 0) {
		if (strcmp(val, "on") != 0 && strcmp(val, "off") != 0) {
			conf_error(p, "metrics: want on or off");
			return -1;
		}
		c->metrics = strcmp(val, "on") == 0;
	} else if (strcmp(key, "metrics_listen") == 0) {
		if (conf_metrics_listen(val, &c->metrics_addr, &c->metrics_port) == -1) {
			conf_error(p, "metrics_listen: want IPV4:PORT or PORT (loopback), e.g. "
			    "127.0.0.1:9145");
			return -1;
		}
	} else if (strcmp(key, "nginx_status") == 0) {
		/* Loopback only: nginx answers stub_status to 127.0.0.1 alone (nginxconf.c). */
		if (strncmp(val, "127.0.0.1:", 10) == 0)
			val += 10;
		if (conf_parse_int(val, 1, 65535, &v) == -1) {
			conf_error(p, "nginx_status: want a port (on 127.0.0.1), e.g. 9146");
			return -1;
		}
		c->nginx_status_port = (int)v;
	} else if (strcmp(key, "cpus") == 0) {
		if (conf_parse_int(val, 1, 1024, &v) == -1) {
			conf_error(p, "cpus: want an integer in [1, 1024]");
			return -1;
		}
		c->cpus = (int)v;
		c->cpus_set = 1;
	} else {
		conf_error(p, "unknown setting %s", key);
		return -1;
	}
	return 0;
}

/* "set KEY VALUE". */
static int
conf_do_set(struct conf_parser *p, char **tok, size_t ntok)
{
	struct conf *c = p->c;
	const char *key, *val;
	size_t i;

	if (ntok != 3) {
		conf_error(p, "set wants exactly KEY VALUE");
		return -1;
	}
	key = tok[1];
	val = tok[2];
	for (i = 0; i < c->nsettings; i++)
		if (strcmp(c->settings[i].key, key) == 0) {
			conf_error(p, "setting %s given twice", key);
			return -1;
		}
	if (!conf_valid_value(val)) {
		conf_error(p, "setting %s: value has characters that are not allowed", key);
		return -1;
	}
	if (conf_set_value(p, key, val) == -1)
		return -1;
	if (c->nsettings == CONF_EXTRA_MAX) {
		conf_error(p, "too many settings");
		return -1;
	}
	if (conf_kv_set(&c->settings[c->nsettings++], key, val) == -1)
		return conf_nomem(p);
	return 0;
}

/* "db NAME URL"; the environment's SLUICE_DB_<NAME> wins over URL. */
static int
conf_do_db(struct conf_parser *p, char **tok, size_t ntok)
{
	struct conf *c = p->c;
	char env[sizeof("SLUICE_DB_") + CONF_NAME_MAX];
	const char *url;
	size_t i, n;

	if (ntok != 3) {
		conf_error(p, "db wants exactly NAME URL");
		return -1;
	}
	if (!conf_valid_name(tok[1]) || strcmp(tok[1], "none") == 0) {
		conf_error(p, "bad db name '%s' (want [a-z][a-z0-9_]*, not 'none', < %d chars)",
		    tok[1], CONF_NAME_MAX);
		return -1;
	}
	for (i = 0; i < c->ndbs; i++)
		if (strcmp(c->dbs[i].key, tok[1]) == 0) {
			conf_error(p, "db %s declared twice", tok[1]);
			return -1;
		}
	if (c->ndbs == CONF_EXTRA_MAX) {
		conf_error(p, "too many dbs (at most %d)", CONF_EXTRA_MAX);
		return -1;
	}
	n = (size_t)snprintf(env, sizeof(env), "SLUICE_DB_%s", tok[1]);
	if (n >= sizeof(env)) {
		conf_error(p, "db name too long");
		return -1;
	}
	for (i = 0; env[i] != '\0'; i++)
		env[i] = (char)toupper((unsigned char)env[i]);
	url = getenv(env);
	if (url == NULL || *url == '\0')
		url = tok[2];
	else
		log_info("db %s: using %s from the environment", tok[1], env);
	if (conf_kv_set(&c->dbs[c->ndbs++], tok[1], url) == -1) {
		conf_error(p, "out of memory");
		return -1;
	}
	return 0;
}

/* The keys of an endpoint line that the supervisor reads itself. */
static const char *const conf_ep_keys[] = {
	"workers", "threads", "backlog", "mode", "binary", "db", "tcp", "rate", "burst",
	"rate_by", "stream"
};

/*
 * The worker setting an endpoint line may give as KEY=VALUE: the row of settings_table
 * (common/settings.h) whose variable is SLUICE_<KEY>, or NULL.  The rows that sluiced
 * fills from the line itself (name, route, threads=, db=) are not settings of the line.
 */
static const struct setting *
conf_worker_setting(const char *key)
{
	const char *name;
	size_t i, j;

	for (i = 0; i < SETTING__MAX; i++) {
		if (i == SETTING_NAME || i == SETTING_ROUTE || i == SETTING_THREADS ||
		    i == SETTING_DB || i == SETTING_CPUS)
			continue;
		name = settings_table[i].name;
		if (strncmp(name, "SLUICE_", 7) != 0)
			continue;
		for (j = 0; key[j] != '\0' && name[7 + j] != '\0'; j++)
			if (toupper((unsigned char)key[j]) != name[7 + j])
				break;
		if (key[j] == '\0' && name[7 + j] == '\0')
			return &settings_table[i];
	}
	return NULL;
}

/* 1 if key is one of conf_ep_keys. */
static int
conf_ep_key(const char *key)
{
	size_t i;

	for (i = 0; i < sizeof(conf_ep_keys) / sizeof(conf_ep_keys[0]); i++)
		if (strcmp(conf_ep_keys[i], key) == 0)
			return 1;
	return 0;
}

/* The edit distance between a and b when both are shorter than CONF_NAME_MAX. */
static size_t
conf_distance(const char *a, const char *b)
{
	size_t d[CONF_NAME_MAX + 1], la = strlen(a), lb = strlen(b), i, j, diag, up;

	if (la > CONF_NAME_MAX || lb > CONF_NAME_MAX)
		return (size_t)-1;
	for (j = 0; j <= lb; j++)
		d[j] = j;
	for (i = 1; i <= la; i++) {
		diag = d[0];
		d[0] = i;
		for (j = 1; j <= lb; j++) {
			up = d[j];
			d[j] = diag + (a[i - 1] != b[j - 1]);
			if (up + 1 < d[j])
				d[j] = up + 1;
			if (d[j - 1] + 1 < d[j])
				d[j] = d[j - 1] + 1;
			diag = up;
		}
	}
	return d[lb];
}

/*
 * Reports a key that neither the supervisor nor any sluice binary reads: a typo (with
 * the nearest known key) or a handler's own setting, which is written env.KEY=VALUE.
 */
static void
conf_unknown_key(struct conf_parser *p, const struct conf_endpoint *ep, const char *key)
{
	char lower[CONF_NAME_MAX];
	const char *best = NULL;
	size_t i, j, d, bestd = 3;

	/* Two edits at most, and fewer for short keys: "name" is no typo of "mode". */
	for (i = 0; i < sizeof(conf_ep_keys) / sizeof(conf_ep_keys[0]); i++)
		if ((d = conf_distance(key, conf_ep_keys[i])) < bestd && 3 * d <= strlen(key)) {
			bestd = d;
			best = conf_ep_keys[i];
		}
	/* A worker setting's key is its variable's name after SLUICE_, in lower case. */
	for (i = 0; i < SETTING__MAX; i++) {
		for (j = 0; j + 1 < sizeof(lower) && settings_table[i].name[7 + j] != '\0'; j++)
			lower[j] = (char)tolower((unsigned char)settings_table[i].name[7 + j]);
		lower[j] = '\0';
		if (conf_worker_setting(lower) == NULL)
			continue;
		if ((d = conf_distance(key, lower)) < bestd && 3 * d <= strlen(key)) {
			bestd = d;
			best = settings_table[i].name;
		}
	}
	if (best != NULL && strncmp(best, "SLUICE_", 7) == 0) {
		/* best is a worker setting's variable: say it as the key is written. */
		for (j = 0; j + 1 < sizeof(lower) && best[7 + j] != '\0'; j++)
			lower[j] = (char)tolower((unsigned char)best[7 + j]);
		lower[j] = '\0';
		best = lower;
	}
	if (best != NULL)
		conf_error(p, "endpoint %s: unknown key '%s' (did you mean %s?)", ep->name, key,
		    best);
	else
		conf_error(p, "endpoint %s: unknown key '%s' (the keys are workers, threads, "
		    "db, backlog, mode, binary, tcp, rate, burst, rate_by, stream and the worker "
		    "settings of "
		    "common/settings.h; a handler's own setting is written env.%s=VALUE)",
		    ep->name, key, key);
}

/* Keeps KEY=VALUE for the workers' environment (SLUICE_KEY); -1 with the error reported. */
static int
conf_endpoint_extra(struct conf_parser *p, struct conf_endpoint *ep, const char *key,
    const char *val)
{
	size_t i;

	if (ep->nextra == CONF_EXTRA_MAX) {
		conf_error(p, "%s: too many keys (at most %d extra)", ep->name, CONF_EXTRA_MAX);
		return -1;
	}
	for (i = 0; i < ep->nextra; i++)
		if (strcmp(ep->extra[i].key, key) == 0) {
			conf_error(p, "%s: key %s given twice", ep->name, key);
			return -1;
		}
	if (conf_kv_set(&ep->extra[ep->nextra++], key, val) == -1) {
		conf_error(p, "out of memory");
		return -1;
	}
	return 0;
}

/*
 * env.KEY=VALUE, a handler's own setting: passed on as SLUICE_KEY.  What sluice itself
 * knows has one spelling, without env., and the names sluiced sets are not for the line.
 */
static int
conf_endpoint_env(struct conf_parser *p, struct conf_endpoint *ep, const char *key,
    const char *val)
{
	if (conf_ep_key(key) || conf_worker_setting(key) != NULL) {
		conf_error(p, "%s: write %s=%s, without env.", ep->name, key, val);
		return -1;
	}
	if (strcmp(key, "name") == 0 || strcmp(key, "route") == 0) {
		conf_error(p, "%s: key '%s' is reserved (sluiced sets SLUICE_NAME and "
		    "SLUICE_ROUTE)", ep->name, key);
		return -1;
	}
	return conf_endpoint_extra(p, ep, key, val);
}

/*
 * rate=N r/s or r/m (1-100000), burst=N (0-100000), rate_by=addr|token: the proxy's request
 * limit of the endpoint.  0, or -1 with the error reported.
 */
static int
conf_endpoint_rate(struct conf_parser *p, struct conf_endpoint *ep, const char *key,
    const char *val)
{
	char num[16];
	size_t n;
	long long v;

	if (strcmp(key, "rate_by") == 0) {
		if (strcmp(val, "addr") != 0 && strcmp(val, "token") != 0) {
			conf_error(p, "%s: rate_by wants addr or token", ep->name);
			return -1;
		}
		ep->rate_token = strcmp(val, "token") == 0;
		return 0;
	}
	if (strcmp(key, "burst") == 0) {
		if (conf_parse_int(val, 0, 100000, &v) == -1) {
			conf_error(p, "%s: burst wants a count, 0-100000", ep->name);
			return -1;
		}
		ep->burst = (int)v;
		return 0;
	}
	n = strcspn(val, "r");
	if (n == 0 || n >= sizeof(num) || (strcmp(val + n, "r/s") != 0 &&
	    strcmp(val + n, "r/m") != 0)) {
		conf_error(p, "%s: rate wants requests a second or a minute, like 10r/s or "
		    "600r/m", ep->name);
		return -1;
	}
	memcpy(num, val, n);
	num[n] = '\0';
	if (conf_parse_int(num, 1, 100000, &v) == -1) {
		conf_error(p, "%s: rate %s out of range (1-100000 requests)", ep->name, val);
		return -1;
	}
	ep->rate = (int)v;
	ep->rate_unit = val[n + 2];
	return 0;
}

/*
 * Sets one KEY=VALUE of an endpoint (env: it was written env.KEY=VALUE, a handler's own
 * setting); returns -1 with the error reported.
 */
static int
conf_endpoint_key(struct conf_parser *p, struct conf_endpoint *ep, const char *key,
    const char *val, int env)
{
	long long v;

	if (env)
		return conf_endpoint_env(p, ep, key, val);
	if (strcmp(key, "workers") == 0) {
		/* auto: sized by conf_resolve(), once the db and the CPUs are known. */
		if (strcmp(val, "auto") == 0)
			ep->workers_auto = 1;
		else if (conf_parse_int(val, 1, 1024, &v) == -1)
			goto range;
		else
			ep->workers = (int)v;
	} else if (strcmp(key, "threads") == 0) {
		if (strcmp(val, "auto") == 0)
			ep->threads_auto = 1;
		else if (conf_parse_int(val, 1, 256, &v) == -1)
			goto range;
		else
			ep->threads = (int)v;
	} else if (strcmp(key, "backlog") == 0) {
		if (conf_parse_int(val, 1, 65535, &v) == -1)
			goto range;
		ep->backlog = (int)v;
	} else if (strcmp(key, "mode") == 0) {
		if (conf_parse_octal(val, 0777, &ep->mode) == -1) {
			conf_error(p, "%s: mode wants an octal mode like 0660", ep->name);
			return -1;
		}
	} else if (strcmp(key, "binary") == 0) {
		if ((ep->binary = strdup(val)) == NULL)
			goto nomem;
	} else if (strcmp(key, "tcp") == 0) {
		if (conf_valid_tcp(val) == -1) {
			conf_error(p, "%s: tcp wants an IPv4 address and a port, like "
			    "127.0.0.1:9001", ep->name);
			return -1;
		}
		if ((ep->tcp = strdup(val)) == NULL)
			goto nomem;
	} else if (strcmp(key, "rate") == 0 || strcmp(key, "burst") == 0 ||
	    strcmp(key, "rate_by") == 0) {
		return conf_endpoint_rate(p, ep, key, val);
	} else if (strcmp(key, "stream") == 0) {
		if (strcmp(val, "0") != 0 && strcmp(val, "1") != 0) {
			conf_error(p, "%s: stream wants 1 (a streaming endpoint) or 0", ep->name);
			return -1;
		}
		ep->stream = val[0] == '1';
	} else if (strcmp(key, "db") == 0) {
		if (strcmp(val, "none") != 0 && (ep->db_name = strdup(val)) == NULL)
			goto nomem;
	} else if (conf_worker_setting(key) == NULL) {
		conf_unknown_key(p, ep, key);
		return -1;
	} else
		return conf_endpoint_extra(p, ep, key, val);
	return 0;
range:
	conf_error(p, "%s: %s=%s out of range or not an integer (workers 1-1024 or auto, "
	    "threads 1-256 or auto, backlog 1-65535)", ep->name, key, val);
	return -1;
nomem:
	conf_error(p, "out of memory");
	return -1;
}

static void
conf_endpoint_free(struct conf_endpoint *ep)
{
	free(ep->route);
	free(ep->binary);
	free(ep->tcp);
	free(ep->db_name);
	free(ep->db_url);
	conf_kv_free(ep->extra, ep->nextra);
}

/* An endpoint's NAME and ROUTE checked: a name, a route not taken, =/exact or /prefix/.
 * 0, or -1 (the error said). */
static int
conf_endpoint_head(struct conf_parser *p, char **tok, size_t ntok)
{
	const struct conf *c = p->c;
	size_t i;

	if (!conf_valid_name(tok[0])) {
		conf_error(p, "unknown directive or bad endpoint name '%s' (want "
		    "[a-z][a-z0-9_]*, < %d chars)", tok[0], CONF_NAME_MAX);
		return -1;
	}
	if (ntok < 2) {
		conf_error(p, "endpoint %s: missing ROUTE", tok[0]);
		return -1;
	}
	if (conf_find(c, tok[0]) != NULL) {
		conf_error(p, "endpoint %s declared twice", tok[0]);
		return -1;
	}
	for (i = 0; i < c->neps; i++)
		if (strcmp(c->eps[i].route, tok[1]) == 0) {
			conf_error(p, "endpoint %s: route %s already used by %s", tok[0], tok[1],
			    c->eps[i].name);
			return -1;
		}
	if (!conf_valid_route_path(tok[1][0] == '=' ? tok[1] + 1 : tok[1])) {
		conf_error(p, "endpoint %s: bad route '%s' (want =/exact or /prefix/, "
		    "characters [A-Za-z0-9/_.~-])", tok[0], tok[1]);
		return -1;
	}
	if (tok[1][0] != '=' && tok[1][strlen(tok[1]) - 1] != '/') {
		conf_error(p, "endpoint %s: route %s is ambiguous: write =%s for an exact route, "
		    "%s/ for a prefix", tok[0], tok[1], tok[1], tok[1]);
		return -1;
	}
	return 0;
}

/* A new endpoint NAME at ROUTE with the defaults, counted in the list at once (so that
 * conf_free() releases what a failing line allocated).  NULL when out of memory (said). */
static struct conf_endpoint *
conf_endpoint_new(struct conf_parser *p, const char *name, const char *route)
{
	struct conf *c = p->c;
	struct conf_endpoint *ep, *grown;

	if (c->neps == p->cap) {
		size_t ncap = p->cap == 0 ? 8 : p->cap * 2;

		if ((grown = realloc(c->eps, ncap * sizeof(*grown))) == NULL) {
			conf_error(p, "out of memory");
			return NULL;
		}
		c->eps = grown;
		p->cap = ncap;
	}
	ep = &c->eps[c->neps];
	memset(ep, 0, sizeof(*ep));
	c->neps++;
	memcpy(ep->name, name, strlen(name) + 1);
	ep->workers = 4;
	ep->threads = 1;
	ep->backlog = 4096;
	ep->mode = 0660;
	ep->burst = -1;
	ep->line = p->line;
	if ((ep->route = strdup(route)) == NULL) {
		conf_error(p, "out of memory");
		return NULL;
	}
	ep->exact = ep->route[0] == '=';
	ep->path = ep->exact ? ep->route + 1 : ep->route;
	return ep;
}

/* "NAME ROUTE [KEY=VALUE ...]". */
static int
conf_do_endpoint(struct conf_parser *p, char **tok, size_t ntok)
{
	struct conf_endpoint *ep;
	char *eq, *key;
	size_t i, ki;
	int seen[sizeof(conf_ep_keys) / sizeof(conf_ep_keys[0])] = { 0 };
	int env;

	if (conf_endpoint_head(p, tok, ntok) == -1 ||
	    (ep = conf_endpoint_new(p, tok[0], tok[1])) == NULL)
		return -1;
	for (i = 2; i < ntok; i++) {
		if ((eq = strchr(tok[i], '=')) == NULL) {
			conf_error(p, "endpoint %s: '%s' is not KEY=VALUE", ep->name, tok[i]);
			return -1;
		}
		*eq = '\0';
		key = tok[i];
		env = strncmp(key, "env.", 4) == 0;
		if (env)
			key += 4;
		if (!conf_valid_name(key)) {
			conf_error(p, "endpoint %s: bad key '%s'", ep->name, key);
			return -1;
		}
		if (!conf_valid_value(eq + 1)) {
			conf_error(p, "endpoint %s: %s: empty value or characters that are not "
			    "allowed", ep->name, key);
			return -1;
		}
		for (ki = 0; !env && ki < sizeof(conf_ep_keys) / sizeof(conf_ep_keys[0]); ki++)
			if (strcmp(conf_ep_keys[ki], key) == 0) {
				if (seen[ki]++) {
					conf_error(p, "%s: key %s given twice", ep->name, key);
					return -1;
				}
			}
		if (conf_endpoint_key(p, ep, key, eq + 1, env) == -1)
			return -1;
	}
	if (ep->rate == 0 && (ep->burst != -1 || ep->rate_token)) {
		conf_error(p, "%s: burst and rate_by need a rate (rate=10r/s)", ep->name);
		return -1;
	}
	/* A streaming endpoint's clients live in its one process: a request naming a
	 * client (the realtime endpoint's POST) must reach the process that holds it. */
	if (ep->stream && (ep->workers_auto || ep->workers != 1 || ep->threads_auto ||
	    ep->threads != 1)) {
		conf_error(p, "%s: a stream=1 endpoint runs one process of one thread (its "
		    "clients live in it): write workers=1 threads=1", ep->name);
		return -1;
	}
	return 0;
}

/* Splits line in place at blanks, stopping at a '#' that starts a token. */
static int
conf_split(char *line, char **tok, size_t max, size_t *ntok)
{
	size_t n = 0;
	char *s = line;

	for (;;) {
		while (*s == ' ' || *s == '\t' || *s == '\r')
			s++;
		if (*s == '\0' || *s == '#')
			break;
		if (n == max)
			return -1;
		tok[n++] = s;
		while (*s != '\0' && *s != ' ' && *s != '\t' && *s != '\r')
			s++;
		if (*s != '\0')
			*s++ = '\0';
	}
	*ntok = n;
	return 0;
}

void
conf_auto_size(enum conf_kind kind, int cpus, int *workers, int *threads)
{
	int w = cpus < 2 ? 1 : (cpus + 1) / 2;

	/* PostgreSQL: at most CONF_AUTO_PG_WORKERS x db_conns backends a pool. */
	if (kind == CONF_KIND_PG && w > CONF_AUTO_PG_WORKERS)
		w = CONF_AUTO_PG_WORKERS;
	*workers = w;
	*threads = CONF_AUTO_THREADS;
}

/* "QUOTA PERIOD" of cgroup v2's cpu.max as whole CPUs (rounded up); 0 for "max" or junk. */
static long
conf_cpu_max(const char *s)
{
	char quota[32], period[32];
	int64_t q, per;

	if (sscanf(s, "%31s %31s", quota, period) != 2 ||
	    str_to_int(quota, strlen(quota), 1, INT64_MAX / 2, &q) == -1 ||
	    str_to_int(period, strlen(period), 1, INT64_MAX / 2, &per) == -1)
		return 0;
	q = (q + per - 1) / per;
	return q > 1024 ? 1024 : (long)q;
}

int
conf_cpus_limit(long online, long affinity, const char *cpu_max)
{
	long n = online > 0 ? online : 1024, quota;

	if (affinity > 0 && affinity < n)
		n = affinity;
	if (cpu_max != NULL && (quota = conf_cpu_max(cpu_max)) > 0 && quota < n)
		n = quota;
	return n > 1024 ? 1024 : (int)n;
}

/* The first line of path in buf (without its newline): 0, or -1 if it cannot be read. */
static int
conf_read_line(const char *path, char *buf, size_t len)
{
	FILE *f;
	int rc = -1;

	if ((f = fopen(path, "r")) == NULL)
		return -1;
	if (fgets(buf, (int)len, f) != NULL) {
		buf[strcspn(buf, "\n")] = '\0';
		rc = 0;
	}
	(void)fclose(f);
	return rc;
}

int
conf_cpus(void)
{
	char line[512], path[600], max[64];
	cpu_set_t *set;
	size_t size;
	long online = sysconf(_SC_NPROCESSORS_ONLN), affinity = 0;
	const char *cpu_max = NULL;

	/* The affinity mask (taskset, cpusets), sized for any CPU number up to 1024. */
	if ((set = CPU_ALLOC(1024)) != NULL) {
		size = CPU_ALLOC_SIZE(1024);
		if (sched_getaffinity(0, size, set) == 0)
			affinity = CPU_COUNT_S(size, set);
		CPU_FREE(set);
	}
	/* cgroup v2: "0::/PATH" in /proc/self/cgroup, the quota in PATH's cpu.max. */
	if (conf_read_line("/proc/self/cgroup", line, sizeof(line)) == 0 &&
	    strncmp(line, "0::", 3) == 0 &&
	    (size_t)snprintf(path, sizeof(path), "/sys/fs/cgroup%s/cpu.max", line + 3) <
	    sizeof(path) && conf_read_line(path, max, sizeof(max)) == 0)
		cpu_max = max;
	return conf_cpus_limit(online, affinity, cpu_max);
}

/* ep's db: its URL (override applied) and its kind; -1 with the error reported. */
static int
conf_resolve_db(struct conf_parser *p, struct conf_endpoint *ep)
{
	const struct conf *c = p->c;
	enum db_backend backend;
	const char *dbpath;
	char *url;
	size_t j, k;

	for (j = 0; j < c->ndbs; j++)
		if (strcmp(c->dbs[j].key, ep->db_name) == 0)
			break;
	if (j == c->ndbs) {
		p->line = ep->line;
		conf_error(p, "endpoint %s: db %s is not declared (add 'db %s URL')", ep->name,
		    ep->db_name, ep->db_name);
		return -1;
	}
	if ((ep->db_url = strdup(c->dbs[j].value)) == NULL) {
		conf_error(p, "out of memory");
		return -1;
	}
	/* A URL that is no SQLite one is PostgreSQL's (db_open() checks the rest). */
	ep->kind = db_url_parse(ep->db_url, &backend, &dbpath) == 0 && backend == DB_SQLITE ?
	    CONF_KIND_SQLITE : CONF_KIND_PG;
	/* db_read= names a db line as db= does (or is a URL itself). */
	for (k = 0; k < ep->nextra; k++)
		for (j = 0; j < c->ndbs && strcmp(ep->extra[k].key, "db_read") == 0; j++)
			if (strcmp(c->dbs[j].key, ep->extra[k].value) == 0) {
				if ((url = strdup(c->dbs[j].value)) == NULL) {
					conf_error(p, "out of memory");
					return -1;
				}
				free(ep->extra[k].value);
				ep->extra[k].value = url;
				break;
			}
	return 0;
}

/*
 * The address every tcp= pool binds on this host: SLUICE_POOL_ADDRESS from the environment,
 * else `set pool_address`, else none (each tcp= keeps its own address).  Given, it replaces
 * the address part of every tcp= value, so that one endpoint list serves every app host of
 * a load-balanced deployment, each host starting sluiced with its own private address.
 */
static int
conf_resolve_pool_address(struct conf_parser *p)
{
	struct conf *c = p->c;
	struct conf_endpoint *ep;
	const char *addr = getenv("SLUICE_POOL_ADDRESS"), *colon;
	char buf[32];
	size_t i;
	int n;

	if (addr == NULL || *addr == '\0')
		addr = conf_get(c, "pool_address", NULL);
	else
		log_info("pool_address: using %s from SLUICE_POOL_ADDRESS", addr);
	if (addr == NULL)
		return 0;
	n = snprintf(buf, sizeof(buf), "%s:1", addr);
	if (n < 0 || (size_t)n >= sizeof(buf) || conf_valid_tcp(buf) == -1) {
		p->line = 0;
		conf_error(p, "pool_address %s: want a dotted IPv4 address", addr);
		return -1;
	}
	for (i = 0; i < c->neps; i++) {
		ep = &c->eps[i];
		if (ep->tcp == NULL)
			continue;
		colon = strrchr(ep->tcp, ':');
		n = snprintf(buf, sizeof(buf), "%s%s", addr, colon);
		if (n < 0 || (size_t)n >= sizeof(buf)) {
			conf_error(p, "pool_address: address too long");
			return -1;
		}
		free(ep->tcp);
		if ((ep->tcp = strdup(buf)) == NULL) {
			conf_error(p, "out of memory");
			return -1;
		}
	}
	return 0;
}

/*
 * After the whole file: endpoints' db names must name a declared db; then each endpoint's
 * kind is known, and its auto sizes follow from it and the CPUs.  tcp= pools take the
 * pool address, if any.
 */
static int
conf_resolve(struct conf_parser *p)
{
	struct conf *c = p->c;
	struct conf_endpoint *ep;
	size_t i;
	int w, t;

	if (!c->cpus_set)
		c->cpus = conf_cpus();
	for (i = 0; i < c->neps; i++) {
		ep = &c->eps[i];
		ep->kind = CONF_KIND_CPU;
		if (ep->db_name != NULL && conf_resolve_db(p, ep) == -1)
			return -1;
		conf_auto_size(ep->kind, c->cpus, &w, &t);
		if (ep->workers_auto)
			ep->workers = w;
		if (ep->threads_auto)
			ep->threads = t;
	}
	if (c->nginx_status_port != 0 && c->nginx_status_port == c->metrics_port &&
	    (ntohl(c->metrics_addr) == INADDR_LOOPBACK || c->metrics_addr == INADDR_ANY)) {
		conf_error(p, "nginx_status: port %d is metrics_listen's", c->nginx_status_port);
		return -1;
	}
	return conf_resolve_pool_address(p);
}

struct conf *
conf_load(const char *path, char *err, size_t errlen)
{
	struct conf_parser p;
	struct conf *c = NULL, *ret = NULL;
	char *line = NULL, *tok[CONF_TOKENS_MAX];
	size_t ntok, len, cap = 0;
	ssize_t n;
	FILE *f = NULL;
	int rc;

	memset(&p, 0, sizeof(p));
	p.path = path;
	p.err = err;
	p.errlen = errlen;
	if (errlen > 0)
		err[0] = '\0';
	if ((c = calloc(1, sizeof(*c))) == NULL) {
		conf_error(&p, "out of memory");
		goto out;
	}
	p.c = c;
	c->crash_loop_tries = 5;
	c->access_log = -1;
	c->metrics = 1;
	c->body_max = CONF_BODY_MAX_DEFAULT;
	if ((c->path = strdup(path)) == NULL || (c->listen = strdup("127.0.0.1:8080")) == NULL) {
		conf_error(&p, "out of memory");
		goto out;
	}
	if ((f = fopen(path, "r")) == NULL) {
		conf_error(&p, "%s", strerror(errno));
		goto out;
	}
	while ((n = getline(&line, &cap, f)) != -1) {
		p.line++;
		len = (size_t)n;
		if (len > 0 && line[len - 1] == '\n')
			line[--len] = '\0';
		if (len > CONF_LINE_MAX) {
			conf_error(&p, "line longer than %d bytes", CONF_LINE_MAX);
			goto out;
		}
		if (memchr(line, '\0', len) != NULL) {
			conf_error(&p, "NUL byte in line");
			goto out;
		}
		if (conf_split(line, tok, CONF_TOKENS_MAX, &ntok) == -1) {
			conf_error(&p, "too many fields");
			goto out;
		}
		if (ntok == 0)
			continue;
		if (strcmp(tok[0], "set") == 0)
			rc = conf_do_set(&p, tok, ntok);
		else if (strcmp(tok[0], "db") == 0)
			rc = conf_do_db(&p, tok, ntok);
		else
			rc = conf_do_endpoint(&p, tok, ntok);
		if (rc == -1)
			goto out;
	}
	if (ferror(f)) {
		conf_error(&p, "read error: %s", strerror(errno));
		goto out;
	}
	if (conf_resolve(&p) == -1)
		goto out;
	ret = c;
	c = NULL;
out:
	if (f != NULL)
		(void)fclose(f);
	free(line);
	conf_free(c);
	return ret;
}

void
conf_free(struct conf *c)
{
	size_t i;

	if (c == NULL)
		return;
	for (i = 0; i < c->neps; i++)
		conf_endpoint_free(&c->eps[i]);
	free(c->eps);
	conf_kv_free(c->settings, c->nsettings);
	conf_kv_free(c->dbs, c->ndbs);
	free(c->path);
	free(c->listen);
	free(c->nginx_user);
	free(c->socket_group);
	free(c);
}

const struct conf_endpoint *
conf_find(const struct conf *c, const char *name)
{
	size_t i;

	for (i = 0; i < c->neps; i++)
		if (strcmp(c->eps[i].name, name) == 0)
			return &c->eps[i];
	return NULL;
}

const char *
conf_get(const struct conf *c, const char *key, const char *def)
{
	size_t i;

	for (i = 0; i < c->nsettings; i++)
		if (strcmp(c->settings[i].key, key) == 0)
			return c->settings[i].value;
	return def;
}
