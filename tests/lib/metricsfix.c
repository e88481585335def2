/* metricsfix.c: see metricsfix.h. */
#include <stdio.h>
#include <unistd.h>

#include "chatfix.h"
#include "metricsfix.h"

int
metricsfix_start(struct stack *s, const char *profile, const char *extra, const char *db,
    int *mport)
{
	char conf[1024], url[300];

	snprintf(url, sizeof(url), "sqlite:%s", db);
	unlink(db);
	if (chatfix_exec(url, "CREATE TABLE item (id integer PRIMARY KEY)") != 0)
		return -1;
	if ((*mport = stack_free_port()) < 0)
		return -1;
	snprintf(conf, sizeof(conf), "set metrics_listen 127.0.0.1:%d\n%s"
	    "db main sqlite:%s\nhealth =/health workers=2 threads=4\n"
	    "rest /rest/v1/ workers=1 threads=2 db=main\n", *mport, extra, db);
	return stack_start(s, conf, profile, 1, NULL);
}

void
metricsfix_stop(struct stack *s, const char *db)
{
	stack_stop(s);
	stack_sh("rm -f '%s' '%s-wal' '%s-shm' '%s-wlock'", db, db, db, db);
}

int
metricsfix_scrape(int port, const char *method, const char *path, struct http_resp *r)
{
	char url[128];

	snprintf(url, sizeof(url), "http://127.0.0.1:%d%s", port, path);
	return http_do(method, url, NULL, NULL, 0, 5000, r);
}
