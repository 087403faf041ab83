/* clock.c - the time for rates and progress (clock.h). */
#include <time.h>

#include "clock.h"

double
now_seconds(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec + ts.tv_nsec * 1e-9;
}
