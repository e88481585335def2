/*
 * clock.h: the clock every deadline and timed wait of a worker is measured on:
 * CLOCK_MONOTONIC, in milliseconds.  The database layer's time budgets, the group commit's
 * and the PostgreSQL pool's waits, the serve loop's watchdog and reconnection times and
 * the serve gate's keeper all read it here, so that no two of them can disagree on what
 * "now" is, and none has to call the other for it.
 */
#ifndef SLUICE_CLOCK_H
#define SLUICE_CLOCK_H

struct timespec;

/* CLOCK_MONOTONIC in milliseconds.  Cannot fail. */
long long clock_now_ms(void);
/* The same clock in microseconds (the serve loop's request durations).  Cannot fail. */
long long clock_now_us(void);

/* A clock_now_ms() time as the struct timespec of pthread_cond_timedwait(), on a condition
 * variable whose clock is CLOCK_MONOTONIC. */
void clock_timespec(long long ms, struct timespec *ts);

#endif /* SLUICE_CLOCK_H */
