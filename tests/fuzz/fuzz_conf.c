/*
 * fuzz_conf: the endpoint list parser on hostile files, and the nginx generator on every
 * list it accepts (whatever it accepts must generate without failing).
 */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "conf.h"
#include "log.h"
#include "nginxconf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static char path[64];
	struct nginx_opts o;
	struct conf *c;
	char err[256];
	FILE *f;

	if (path[0] == '\0') {
		snprintf(path, sizeof(path), "/tmp/fuzz_conf.%ld", (long)getpid());
		log_set_level(LOG_ERR);
	}
	if ((f = fopen(path, "w")) == NULL)
		return 0;
	fwrite(data, 1, size, f);
	fclose(f);
	if ((c = conf_load(path, err, sizeof(err))) != NULL) {
		if ((f = fopen("/dev/null", "w")) != NULL) {
			memset(&o, 0, sizeof(o));
			o.profile = NGINX_TUNED;
			o.rundir = "/run/sluice";
			o.prefix = "/run/sluice/nginx";
			o.listen = c->listen;
			o.workers = 2;
			o.keepalive = -1;
			(void)nginx_conf_write(f, c, &o);
			/* The load balancer's file over the same list (every pool on TCP). */
			o.hosts = "10.0.0.2,10.0.0.3";
			(void)nginx_conf_write(f, c, &o);
			fclose(f);
		}
		conf_free(c);
	}
	return 0;
}
