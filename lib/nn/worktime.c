/*
 * worktime.c - where a step's time goes: the thread time of each kind of
 * work (the matrix products, their row epilogues, roundings to bf16 outside
 * them, attention), added up while timing is on (bench_vit), so that what
 * is left of a step (elementwise passes, waits) is known by difference.
 * Off, a point of measure costs a load and a branch.
 */
#include <omp.h>

#include "nn.h"

static int on;
static double spent[WORK_KINDS];

void
work_timing(int yes)
{
	for (int k = 0; yes && k < WORK_KINDS; k++)
		spent[k] = 0;
	on = yes;
}

double
work_begin(void)
{
	return on ? omp_get_wtime() : 0;
}

void
work_end(enum work k, double t0, int team)
{
	if (t0 == 0)
		return;
	double d = (omp_get_wtime() - t0) * team;
	#pragma omp atomic
	spent[k] += d;
}

void
work_times(double t[WORK_KINDS])
{
	for (int k = 0; k < WORK_KINDS; k++)
		t[k] = spent[k];
}
