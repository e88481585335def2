/*
 * mail.h: the records API's outgoing mail (the account flows' links), handed to a
 * sendmail-compatible command (SLUICE_RECORDS_SENDMAIL, the endpoint key
 * records_sendmail).
 *
 * A worker runs under a seccomp filter (common/sandbox.h) that forbids fork and execve, so
 * a serving thread cannot start the command.  mail_start(), called from main() before
 * serve_main() applies the filter, forks instead a helper process, unconfined but doing
 * nothing else: it waits on its end of a SOCK_SEQPACKET socket pair, and for every message
 * that arrives runs the command (execve, no shell, a bare environment) with the message on
 * its standard input, and waits for it.  A serving thread only send()s the message on the
 * worker's end, which the filter allows, without blocking: a helper that falls behind
 * makes mail_send() fail (logged by the caller), never a request wait.  The helper leaves
 * when the worker's end closes (the worker exited) or the worker dies (PR_SET_PDEATHSIG).
 */
#ifndef SLUICE_RECORDS_MAIL_H
#define SLUICE_RECORDS_MAIL_H

#include <stddef.h>

#define MAIL_MAX	(64 * 1024)	/* a message's bytes, at most */
#define MAIL_ARGS_MAX	16		/* the command's words, at most */

/*
 * Starts the helper for cmd, the command's words separated by commas or blanks (an
 * endpoint line holds no blanks: records_sendmail=/usr/sbin/sendmail,-t); its first word
 * is an absolute path.  cmd NULL or empty: no helper, and mail_on() says 0.  Returns 0, or
 * -1 after logging why (a malformed command, no socket pair or fork).
 */
int mail_start(const char *cmd);

/* 1 when a helper was started. */
int mail_on(void);

/* Hands msg[0..len) (headers, a blank line, the body; the command reads the recipients
 * from the headers, as sendmail -t does) to the helper: 0, or -1 (no helper, too long, the
 * helper gone or behind). */
int mail_send(const char *msg, size_t len);

/* Closes the worker's end (at exit): the helper finishes the message it runs and leaves. */
void mail_stop(void);

#endif /* SLUICE_RECORDS_MAIL_H */
