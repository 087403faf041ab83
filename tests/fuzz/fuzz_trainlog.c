/* fuzz_trainlog.c - a vit-train --log as vit-plot reads it (tlog_read):
 * every point it keeps is one a plot holds. */
#include <math.h>
#include <stdlib.h>

#include "fuzz.h"
#include "trainlog.h"

int
LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	FILE *fp = size > 0 ? fmemopen((void *)data, size, "r") : NULL;
	struct tlog t;

	if (fp == NULL)
		return 0;
	tlog_read(&t, fp, "fuzz");
	for (int c = 0; c < TLOG_NCURVE; c++)
		for (size_t k = 0; k < t.c[c].n; k++)
			if (!(fabs(t.c[c].x[k]) <= TLOG_MAXSTEP) || !(fabs(t.c[c].y[k]) <= TLOG_MAXVALUE))
				abort();
	tlog_free(&t);
	fclose(fp);
	return 0;
}
