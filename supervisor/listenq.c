/*
 * listenq.c: the listen queue of a pool's socket, as the kernel sees it: the connections
 * that wait for a worker's accept() now, the most seen waiting, the backlog, and (TCP
 * only) the connections the kernel dropped at the listener.  sluiced owns the listening
 * sockets, so it asks about its own descriptors and nothing on a request's path changes.
 *
 * A unix socket is asked through the sock_diag netlink interface (NETLINK_SOCK_DIAG,
 * unix_diag: the socket's inode, UDIAG_SHOW_RQLEN, whose udiag_rqueue is a listener's
 * queue and udiag_wqueue its backlog); a TCP one through getsockopt(TCP_INFO)
 * (tcpi_unacked and tcpi_sacked of a listener) and SO_MEMINFO, whose SK_MEMINFO_DROPS is
 * what the kernel's tcp_listendrop() counted: a full accept queue, a failed handshake's
 * end.  A full unix socket's backlog makes connect() fail with EAGAIN (nginx answers 502
 * and logs it), and the kernel counts that nowhere per socket: for a unix pool the dropped
 * count stays unknown, never shown as a made-up 0.
 *
 * pool_tick() samples every running pool every LISTENQ_EVERY_MS, and every reader
 * (ctl status, its JSON, the Prometheus text) samples again first, so "now" is now and the
 * peak is the most seen at those samples: a queue that filled and drained between two of
 * them is missed.
 */
#include <errno.h>
#include <stdint.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <linux/netlink.h>
#include <linux/rtnetlink.h>
#include <linux/sock_diag.h>
#include <linux/unix_diag.h>

#include "sluiced.h"

#ifndef SO_MEMINFO
#define SO_MEMINFO	55
#endif
/* A listening socket's state in the diag interfaces (TCP_LISTEN of the kernel). */
#define LISTENQ_LISTEN	10

/* A unix listener's queue and backlog, asked of the kernel by inode: 0, or -1. */
static int
listenq_unix(int fd, uint32_t *queue, uint32_t *backlog)
{
	struct {
		struct nlmsghdr nlh;
		struct unix_diag_req req;
	} msg;
	struct sockaddr_nl nl = { .nl_family = AF_NETLINK };
	union {
		char b[8192];
		struct nlmsghdr align;
	} ans;
	const struct nlmsghdr *h;
	const struct rtattr *a;
	const struct unix_diag_rqlen *rq;
	struct stat st;
	ssize_t n;
	int nlfd, rc = -1, alen;

	if (fstat(fd, &st) == -1)
		return -1;
	memset(&msg, 0, sizeof(msg));
	msg.nlh.nlmsg_len = sizeof(msg);
	msg.nlh.nlmsg_type = SOCK_DIAG_BY_FAMILY;
	msg.nlh.nlmsg_flags = NLM_F_REQUEST;
	msg.req.sdiag_family = AF_UNIX;
	msg.req.udiag_states = 1U << LISTENQ_LISTEN;
	msg.req.udiag_ino = (uint32_t)st.st_ino;
	msg.req.udiag_show = UDIAG_SHOW_RQLEN;
	msg.req.udiag_cookie[0] = msg.req.udiag_cookie[1] = ~0U;
	if ((nlfd = socket(AF_NETLINK, SOCK_DGRAM | SOCK_CLOEXEC, NETLINK_SOCK_DIAG)) == -1)
		return -1;
	if (sendto(nlfd, &msg, sizeof(msg), 0, (struct sockaddr *)&nl, sizeof(nl)) == -1)
		goto out;
	/* The kernel answers an exact request at once: no wait. */
	while ((n = recv(nlfd, ans.b, sizeof(ans.b), MSG_DONTWAIT)) == -1 && errno == EINTR)
		continue;
	if (n <= 0)
		goto out;
	for (h = &ans.align; NLMSG_OK(h, (unsigned)n); h = NLMSG_NEXT(h, n)) {
		if (h->nlmsg_type != SOCK_DIAG_BY_FAMILY ||
		    h->nlmsg_len < NLMSG_LENGTH(sizeof(struct unix_diag_msg)))
			break;
		a = (const struct rtattr *)((const char *)NLMSG_DATA(h) +
		    NLMSG_ALIGN(sizeof(struct unix_diag_msg)));
		alen = (int)(h->nlmsg_len - NLMSG_LENGTH(NLMSG_ALIGN(
		    sizeof(struct unix_diag_msg))));
		for (; RTA_OK(a, alen); a = RTA_NEXT(a, alen)) {
			if (a->rta_type != UNIX_DIAG_RQLEN ||
			    RTA_PAYLOAD(a) < sizeof(struct unix_diag_rqlen))
				continue;
			rq = (const struct unix_diag_rqlen *)RTA_DATA(a);
			*queue = rq->udiag_rqueue;
			*backlog = rq->udiag_wqueue;
			rc = 0;
		}
		break;
	}
out:
	(void)close(nlfd);
	return rc;
}

/* A TCP listener's queue, backlog and drops: 0 (*drops_known says whether the kernel
 * gave the drops), or -1. */
static int
listenq_tcp(int fd, uint32_t *queue, uint32_t *backlog, uint64_t *drops, int *drops_known)
{
	struct tcp_info ti;
	uint32_t mem[SK_MEMINFO_VARS];
	socklen_t len = sizeof(ti);

	memset(&ti, 0, sizeof(ti));
	if (getsockopt(fd, IPPROTO_TCP, TCP_INFO, &ti, &len) == -1 ||
	    ti.tcpi_state != LISTENQ_LISTEN)
		return -1;
	*queue = ti.tcpi_unacked;
	*backlog = ti.tcpi_sacked;
	len = sizeof(mem);
	*drops_known = getsockopt(fd, SOL_SOCKET, SO_MEMINFO, mem, &len) == 0 &&
	    len > SK_MEMINFO_DROPS * sizeof(uint32_t);
	if (*drops_known)
		*drops = mem[SK_MEMINFO_DROPS];
	return 0;
}

void
listenq_sample(struct pool *p)
{
	struct pool_queue *q = &p->queue;
	uint32_t now = 0, backlog = 0;
	uint64_t drops = 0;
	int known = 0, rc;

	if (p->fd == -1) {
		/* No socket (a failed pool): nothing waits, and nothing is known of drops. */
		q->known = 0;
		q->now = 0;
		return;
	}
	rc = p->tcp ? listenq_tcp(p->fd, &now, &backlog, &drops, &known) :
	    listenq_unix(p->fd, &now, &backlog);
	q->known = rc == 0;
	if (rc == -1)
		return;
	q->now = now;
	q->backlog = backlog;
	if (now > q->peak)
		q->peak = now;
	q->drops_known = known;
	if (known)
		q->drops = drops;
}

void
listenq_sample_all(struct sluiced *s)
{
	struct pool *p;

	for (p = s->pools; p != NULL; p = p->next)
		if (p->spec.metrics)
			listenq_sample(p);
}
