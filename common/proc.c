/*
 * proc.c: see proc.h.
 */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "proc.h"

int
proc_stopped(pid_t pid)
{
	char path[64], buf[512], *paren;
	ssize_t n;
	int fd;

	(void)snprintf(path, sizeof(path), "/proc/%ld/stat", (long)pid);
	if ((fd = open(path, O_RDONLY | O_CLOEXEC)) < 0)
		return 0;
	n = read(fd, buf, sizeof(buf) - 1);
	(void)close(fd);
	if (n <= 0)
		return 0;
	buf[n] = '\0';
	/* "PID (comm) S ...": the name may hold anything, so the last ')' ends it. */
	if ((paren = strrchr(buf, ')')) == NULL || paren[1] != ' ')
		return 0;
	return paren[2] == 'T' || paren[2] == 't';
}
