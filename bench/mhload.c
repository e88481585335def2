/*
 * mhload: a closed-loop HTTP load generator that counts every request's outcome, for the
 * multi-host failover test (tests/integration/test_multihost.sh) and the multihost
 * benchmark suite (bench/suites/multihost.sh).
 *
 *   mhload [-d SECONDS] [-c CONNECTIONS] [-w POST_PERCENT] [-G GET_PATH] [-P POST_PATH]
 *          [-i FIRST_ID] [-l LOG_FILE] http://ADDR:PORT
 *
 * CONNECTIONS threads (4) each keep one HTTP/1.1 connection and send their next request
 * when the last answer is in.  POST_PERCENT (0) of the requests are POSTs of
 * {"id":N,"note":"mhload"} to POST_PATH with `Prefer: return=minimal`, each with its own
 * id N counted up from FIRST_ID (1); the others are GETs of GET_PATH (/health).  A GET
 * succeeds with 200, a POST is acknowledged with 201; anything else, or no answer within
 * 15 s, or a connection error, is a failure, and the connection is opened again.  Nothing
 * is retried here: retries are the proxy's business, and a POST must never be sent twice.
 *
 * The run ends after SECONDS (10; 0: at SIGTERM or SIGINT).  With -l every request is one
 * line of LOG_FILE, "SENT_MS DONE_MS G|P STATUS ID" (milliseconds of the realtime clock,
 * STATUS 0 for a connection error or timeout, ID 0 for a GET), so that the caller can
 * split the run into phases and check every acknowledged id against the database.  At the
 * end one line on stdout:
 *   mhload: seconds=S requests=N rps=R get=G get_failed=GF post=P post_acked=PA
 *           post_failed=PF
 * Exits 0, or 1 on bad arguments or when the log cannot be written.
 */
#define _GNU_SOURCE	/* strcasestr() */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

#define MH_MAXCONN	256
#define MH_BUF		65536

static struct sockaddr_in mh_addr;
static char mh_host[64];
static const char *mh_get = "/health", *mh_post = "/rest/v1/mh_writes";
static int mh_post_pct;
static volatile sig_atomic_t mh_stop;
static int64_t mh_end_ms;
static FILE *mh_log;
static pthread_mutex_t mh_lock = PTHREAD_MUTEX_INITIALIZER;
static uint64_t mh_next_id = 1;
static uint64_t mh_gets, mh_get_failed, mh_posts, mh_post_acked, mh_post_failed;

static int64_t
mh_now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void
mh_on_signal(int sig)
{
	(void)sig;
	mh_stop = 1;
}

static int
mh_connect(void)
{
	struct timeval tv = { 15, 0 };
	int fd, one = 1;

	if ((fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) == -1)
		return -1;
	(void)setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one));
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv));
	if (connect(fd, (const struct sockaddr *)&mh_addr, sizeof(mh_addr)) == -1) {
		close(fd);
		return -1;
	}
	return fd;
}

static int
mh_write_all(int fd, const char *p, size_t len)
{
	ssize_t n;

	while (len > 0) {
		n = send(fd, p, len, MSG_NOSIGNAL);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}

/*
 * Reads one answer on fd; returns its status, or 0 when the connection failed or the
 * answer is malformed.  *keep is set to 0 when the connection cannot be used again.
 */
static int
mh_read_answer(int fd, char *buf, int *keep)
{
	size_t have = 0, body_at, need;
	char *end, *cl, *line_end;
	long long len;
	ssize_t n;
	int status;

	*keep = 0;
	for (;;) {
		buf[have] = '\0';
		if ((end = strstr(buf, "\r\n\r\n")) != NULL)
			break;
		if (have == MH_BUF - 1)
			return 0;
		n = recv(fd, buf + have, MH_BUF - 1 - have, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		have += (size_t)n;
	}
	if (strncmp(buf, "HTTP/1.", 7) != 0 || buf[8] != ' ' || sscanf(buf + 9, "%3d", &status) != 1)
		return 0;
	body_at = (size_t)(end - buf) + 4;
	*end = '\0';
	len = -1;
	for (cl = strstr(buf, "\r\n"); cl != NULL; cl = line_end) {
		cl += 2;
		line_end = strstr(cl, "\r\n");
		if (strncasecmp(cl, "Content-Length:", 15) == 0)
			len = strtoll(cl + 15, NULL, 10);
	}
	if (len < 0)
		return 0;
	need = body_at + (size_t)len;
	/* The body is read and dropped; only its end matters. */
	while (have < need) {
		char sink[MH_BUF];
		size_t want = need - have < sizeof(sink) ? need - have : sizeof(sink);

		n = recv(fd, sink, want, 0);
		if (n == -1 && errno == EINTR)
			continue;
		if (n <= 0)
			return 0;
		have += (size_t)n;
	}
	*keep = have == need && strcasestr(buf, "\r\nConnection: close") == NULL;
	return status;
}

static void *
mh_thread(void *arg)
{
	unsigned seed = (unsigned)(uintptr_t)arg * 2654435761u ^ (unsigned)time(NULL);
	char req[1024], body[128], *buf;
	int fd = -1, keep, status, post, m, b;
	uint64_t id;
	int64_t sent;

	if ((buf = malloc(MH_BUF)) == NULL)
		return NULL;
	while (!mh_stop && (mh_end_ms == 0 || mh_now_ms() < mh_end_ms)) {
		post = mh_post_pct > 0 && (int)(rand_r(&seed) % 100) < mh_post_pct;
		id = 0;
		if (post) {
			pthread_mutex_lock(&mh_lock);
			id = mh_next_id++;
			pthread_mutex_unlock(&mh_lock);
			b = snprintf(body, sizeof(body), "{\"id\":%llu,\"note\":\"mhload\"}",
			    (unsigned long long)id);
			m = snprintf(req, sizeof(req), "POST %s HTTP/1.1\r\nHost: %s\r\n"
			    "Content-Type: application/json\r\nPrefer: return=minimal\r\n"
			    "Content-Length: %d\r\n\r\n%s", mh_post, mh_host, b, body);
		} else
			m = snprintf(req, sizeof(req), "GET %s HTTP/1.1\r\nHost: %s\r\n\r\n",
			    mh_get, mh_host);
		if (m < 0 || (size_t)m >= sizeof(req))
			break;
		sent = mh_now_ms();
		status = 0;
		keep = 0;
		if (fd == -1)
			fd = mh_connect();
		if (fd != -1 && mh_write_all(fd, req, (size_t)m) == 0)
			status = mh_read_answer(fd, buf, &keep);
		if (!keep && fd != -1) {
			close(fd);
			fd = -1;
		}
		pthread_mutex_lock(&mh_lock);
		if (post) {
			mh_posts++;
			if (status == 201)
				mh_post_acked++;
			else
				mh_post_failed++;
		} else {
			mh_gets++;
			if (status != 200)
				mh_get_failed++;
		}
		if (mh_log != NULL)
			fprintf(mh_log, "%lld %lld %c %d %llu\n", (long long)sent,
			    (long long)mh_now_ms(), post ? 'P' : 'G', status,
			    (unsigned long long)id);
		pthread_mutex_unlock(&mh_lock);
		/* A refused connection is retried after a pause, not in a tight loop. */
		if (status == 0)
			usleep(20000);
	}
	if (fd != -1)
		close(fd);
	free(buf);
	return NULL;
}

static long
mh_opt(const char *s, long min, long max)
{
	char *e;
	long v;

	errno = 0;
	v = strtol(s, &e, 10);
	if (errno != 0 || e == s || *e != '\0' || v < min || v > max) {
		fprintf(stderr, "mhload: bad number '%s' (want %ld to %ld)\n", s, min, max);
		exit(1);
	}
	return v;
}

int
main(int argc, char *argv[])
{
	pthread_t th[MH_MAXCONN];
	struct sigaction sa;
	const char *url, *logpath = NULL, *colon;
	long seconds = 10, conns = 4;
	int64_t start, took;
	int ch, port, rc = 0;
	size_t hl;
	long i;

	while ((ch = getopt(argc, argv, "d:c:w:G:P:i:l:")) != -1) {
		switch (ch) {
		case 'd':
			seconds = mh_opt(optarg, 0, 86400);
			break;
		case 'c':
			conns = mh_opt(optarg, 1, MH_MAXCONN);
			break;
		case 'w':
			mh_post_pct = (int)mh_opt(optarg, 0, 100);
			break;
		case 'G':
			mh_get = optarg;
			break;
		case 'P':
			mh_post = optarg;
			break;
		case 'i':
			mh_next_id = (uint64_t)mh_opt(optarg, 1, 1000000000L);
			break;
		case 'l':
			logpath = optarg;
			break;
		default:
			goto usage;
		}
	}
	if (optind + 1 != argc || strncmp(argv[optind], "http://", 7) != 0)
		goto usage;
	url = argv[optind] + 7;
	if ((colon = strchr(url, ':')) == NULL || (hl = (size_t)(colon - url)) >= sizeof(mh_host))
		goto usage;
	memcpy(mh_host, url, hl);
	mh_host[hl] = '\0';
	port = (int)mh_opt(colon + 1, 1, 65535);
	memset(&mh_addr, 0, sizeof(mh_addr));
	mh_addr.sin_family = AF_INET;
	mh_addr.sin_port = htons((uint16_t)port);
	if (inet_pton(AF_INET, mh_host, &mh_addr.sin_addr) != 1)
		goto usage;
	if (logpath != NULL && (mh_log = fopen(logpath, "w")) == NULL) {
		perror(logpath);
		return 1;
	}
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = mh_on_signal;
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGINT, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	start = mh_now_ms();
	mh_end_ms = seconds > 0 ? start + seconds * 1000 : 0;
	for (i = 0; i < conns; i++)
		if (pthread_create(&th[i], NULL, mh_thread, (void *)(uintptr_t)(i + 1)) != 0) {
			fprintf(stderr, "mhload: cannot start thread %ld\n", i);
			mh_stop = 1;
			conns = i;
			rc = 1;
			break;
		}
	for (i = 0; i < conns; i++)
		pthread_join(th[i], NULL);
	took = mh_now_ms() - start;
	if (took < 1)
		took = 1;
	if (mh_log != NULL && fclose(mh_log) != 0) {
		perror(logpath);
		rc = 1;
	}
	printf("mhload: seconds=%.1f requests=%llu rps=%.0f get=%llu get_failed=%llu post=%llu "
	    "post_acked=%llu post_failed=%llu\n", (double)took / 1000,
	    (unsigned long long)(mh_gets + mh_posts),
	    (double)(mh_gets + mh_posts) * 1000 / (double)took, (unsigned long long)mh_gets,
	    (unsigned long long)mh_get_failed, (unsigned long long)mh_posts,
	    (unsigned long long)mh_post_acked, (unsigned long long)mh_post_failed);
	return rc;
usage:
	fprintf(stderr, "usage: mhload [-d SECONDS] [-c CONNECTIONS] [-w POST_PERCENT] "
	    "[-G GET_PATH] [-P POST_PATH] [-i FIRST_ID] [-l LOG_FILE] http://ADDR:PORT\n");
	return 1;
}
