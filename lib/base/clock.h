/* clock.h - the time for rates and progress. */
#ifndef CLOCK_H
#define CLOCK_H

/* Seconds since an arbitrary fixed point (monotonic clock). */
double	 now_seconds(void);

#endif
