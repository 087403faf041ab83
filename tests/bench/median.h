/*
 * median.h - the benchmarks' median (of runs, of rounds): one definition,
 * included by each benchmark that takes one.
 */
#ifndef MEDIAN_H
#define MEDIAN_H

#include <stdlib.h>

static int
median_order(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return (x > y) - (x < y);
}

/* The median of v[0 .. n) leaving out zeros (runs that gave no figure),
 * v reordered in place; 0 if all are. */
static double
median(double *v, int n)
{
	int k = 0;

	for (int j = 0; j < n; j++)
		if (v[j] > 0)
			v[k++] = v[j];
	qsort(v, k, sizeof *v, median_order);
	return k == 0 ? 0 : k % 2 ? v[k / 2] : (v[k / 2 - 1] + v[k / 2]) / 2;
}

#endif
