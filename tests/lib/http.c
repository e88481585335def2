/* http.c: see http.h. */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include <cjson/cJSON.h>
#include <curl/curl.h>

#include "http.h"

static size_t
http_collect(char *p, size_t size, size_t n, void *ctx)
{
	if (buf_append(ctx, p, size * n) < 0)
		return 0;
	return size * n;
}

void
http_resp_init(struct http_resp *r)
{
	memset(r, 0, sizeof(*r));
	buf_init(&r->headers, 0);
	buf_init(&r->body, 0);
}

void
http_resp_free(struct http_resp *r)
{
	buf_free(&r->headers);
	buf_free(&r->body);
}

static CURL *
http_easy(const char *method, const char *url, struct curl_slist *hdrs, const char *body,
    size_t body_len, long timeout_ms, struct http_resp *r)
{
	CURL *c = curl_easy_init();

	if (c == NULL)
		return NULL;
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, timeout_ms);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, http_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &r->body);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, http_collect);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &r->headers);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	else if (strcmp(method, "GET") != 0 || body != NULL)
		curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);	/* a GET with a body too */
	if (body != NULL) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	if (hdrs != NULL)
		curl_easy_setopt(c, CURLOPT_HTTPHEADER, hdrs);
	return c;
}

int
http_do(const char *method, const char *url, const char *const *headers, const char *body,
    size_t body_len, long timeout_ms, struct http_resp *r)
{
	return http_do_from(NULL, method, url, headers, body, body_len, timeout_ms, r);
}

int
http_do_from(const char *from, const char *method, const char *url,
    const char *const *headers, const char *body, size_t body_len, long timeout_ms,
    struct http_resp *r)
{
	struct curl_slist *hdrs = NULL;
	CURL *c;
	CURLcode rc;

	buf_reset(&r->headers, 0);
	buf_reset(&r->body, 0);
	r->status = 0;
	for (; headers != NULL && *headers != NULL; headers++)
		hdrs = curl_slist_append(hdrs, *headers);
	if ((c = http_easy(method, url, hdrs, body, body_len, timeout_ms, r)) == NULL) {
		curl_slist_free_all(hdrs);
		return -1;
	}
	if (from != NULL)
		curl_easy_setopt(c, CURLOPT_INTERFACE, from);
	rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	curl_easy_getinfo(c, CURLINFO_TOTAL_TIME, &r->seconds);
	curl_easy_cleanup(c);
	curl_slist_free_all(hdrs);
	return rc == CURLE_OK ? 0 : -1;
}

int
http_header(const struct http_resp *r, const char *name, char *out, size_t len)
{
	const char *p = r->headers.data, *end;
	size_t n = strlen(name);

	if (p == NULL)
		return -1;
	for (; *p != '\0'; p = end + (*end != '\0')) {
		size_t vlen;

		if ((end = strchr(p, '\n')) == NULL)
			end = p + strlen(p);
		if ((size_t)(end - p) <= n + 1 || strncasecmp(p, name, n) != 0 || p[n] != ':')
			continue;
		p += n + 1;
		while (*p == ' ')
			p++;
		vlen = (size_t)(end - p);
		while (vlen > 0 && (p[vlen - 1] == '\r' || p[vlen - 1] == ' '))
			vlen--;
		if (vlen >= len)
			return -1;
		memcpy(out, p, vlen);
		out[vlen] = '\0';
		return 0;
	}
	return -1;
}

void
http_burst(const char *url, int n, long want_status, long timeout_ms, struct http_burst *b)
{
	CURLM *m = curl_multi_init();
	struct http_resp *rs = calloc((size_t)n, sizeof(*rs));
	CURL **cs = calloc((size_t)n, sizeof(*cs));
	int running = 0, i, left;
	CURLMsg *msg;

	memset(b, 0, sizeof(*b));
	curl_multi_setopt(m, CURLMOPT_MAX_TOTAL_CONNECTIONS, (long)n);
	for (i = 0; i < n; i++) {
		http_resp_init(&rs[i]);
		cs[i] = http_easy("GET", url, NULL, NULL, 0, timeout_ms, &rs[i]);
		curl_easy_setopt(cs[i], CURLOPT_FRESH_CONNECT, 1L);
		curl_easy_setopt(cs[i], CURLOPT_FORBID_REUSE, 1L);
		curl_easy_setopt(cs[i], CURLOPT_PRIVATE, (void *)&rs[i]);
		curl_multi_add_handle(m, cs[i]);
	}
	do {
		curl_multi_perform(m, &running);
		if (running)
			curl_multi_poll(m, NULL, 0, 100, NULL);
		while ((msg = curl_multi_info_read(m, &left)) != NULL) {
			struct http_resp *r;
			long status = 0;
			double secs = 0;

			if (msg->msg != CURLMSG_DONE)
				continue;
			curl_easy_getinfo(msg->easy_handle, CURLINFO_PRIVATE, (char **)&r);
			curl_easy_getinfo(msg->easy_handle, CURLINFO_TOTAL_TIME, &secs);
			if (msg->data.result == CURLE_OK)
				curl_easy_getinfo(msg->easy_handle, CURLINFO_RESPONSE_CODE, &status);
			if (secs > b->max_seconds)
				b->max_seconds = secs;
			if (msg->data.result != CURLE_OK)
				b->failed++;
			else if (status == want_status)
				b->ok++;
			else
				b->other++;
		}
	} while (running);
	for (i = 0; i < n; i++) {
		curl_multi_remove_handle(m, cs[i]);
		curl_easy_cleanup(cs[i]);
		http_resp_free(&rs[i]);
	}
	curl_multi_cleanup(m);
	free(cs);
	free(rs);
}

static void *
http_loop_main(void *arg)
{
	struct http_loop *l = arg;
	struct http_resp r;

	http_resp_init(&r);
	while (!l->stop) {
		int rc = http_do(l->method, l->url, NULL, NULL, 0, 10000, &r);

		l->sent++;
		if (r.seconds > l->max_seconds)
			l->max_seconds = r.seconds;
		if (rc < 0 || r.status != l->want_status) {
			l->bad++;
			l->last_bad_status = r.status;
		}
		if (l->pause_ms > 0)
			usleep((useconds_t)(l->pause_ms * 1000));
	}
	http_resp_free(&r);
	return NULL;
}

int
http_loop_start(struct http_loop *l, const char *method, const char *url, long want)
{
	return http_loop_start_paced(l, method, url, want, 0);
}

int
http_loop_start_paced(struct http_loop *l, const char *method, const char *url, long want,
    long pause_ms)
{
	memset(l, 0, sizeof(*l));
	l->method = method;
	l->url = url;
	l->want_status = want;
	l->pause_ms = pause_ms;
	return pthread_create(&l->tid, NULL, http_loop_main, l) == 0 ? 0 : -1;
}

void
http_loop_stop(struct http_loop *l)
{
	l->stop = 1;
	pthread_join(l->tid, NULL);
}

size_t
http_fcgi_record(unsigned char *p, int type, int id, size_t len)
{
	p[0] = 1;
	p[1] = (unsigned char)type;
	p[2] = (unsigned char)(id >> 8);
	p[3] = (unsigned char)id;
	p[4] = (unsigned char)(len >> 8);
	p[5] = (unsigned char)len;
	p[6] = 0;
	p[7] = 0;
	return 8;
}

long
http_raw_unix(const char *path, const void *p, size_t len, long timeout_ms)
{
	struct sockaddr_un sun;
	struct pollfd pfd;
	char scratch[4096];
	long total = 0;
	ssize_t n;
	int fd;

	memset(&sun, 0, sizeof(sun));
	sun.sun_family = AF_UNIX;
	snprintf(sun.sun_path, sizeof(sun.sun_path), "%s", path);
	if ((fd = socket(AF_UNIX, SOCK_STREAM, 0)) < 0)
		return -1;
	if (connect(fd, (struct sockaddr *)&sun, sizeof(sun)) < 0) {
		close(fd);
		return -1;
	}
	if (len > 0 && write(fd, p, len) < 0)
		(void)0;	/* the worker may already have hung up: that is allowed */
	shutdown(fd, SHUT_WR);
	pfd.fd = fd;
	pfd.events = POLLIN;
	while (poll(&pfd, 1, (int)timeout_ms) > 0) {
		if ((n = read(fd, scratch, sizeof(scratch))) <= 0)
			break;
		total += n;
	}
	close(fd);
	return total;
}

int
http_json_code(const struct http_resp *r, const char *code)
{
	cJSON *j = NULL, *c;
	int ok;

	if (r->body.data != NULL && r->body.len > 0)
		j = cJSON_ParseWithLength(r->body.data, r->body.len);
	c = j != NULL && cJSON_IsObject(j) ? cJSON_GetObjectItem(j, "code") : NULL;
	ok = cJSON_IsString(c) && (code == NULL || strcmp(c->valuestring, code) == 0);
	cJSON_Delete(j);
	return ok;
}
