/*
 * proc.h: what Linux's /proc says of another process.
 */
#ifndef SLUICE_PROC_H
#define SLUICE_PROC_H

#include <sys/types.h>

/*
 * 1 when process pid is stopped (state T, by a signal such as SIGSTOP, or t, by a
 * debugger), from /proc/PID/stat; 0 when it runs, sleeps, is gone or cannot be read.
 */
int proc_stopped(pid_t pid);

#endif /* SLUICE_PROC_H */
