/*
 * task_items.c - the items the tasks place: a data set's images resampled
 * once to the item size (the antialiased filter of patchify --resize),
 * kept in memory with their classes.  60,000 items of 14 x 14 take 12 MB.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "resize.h"
#include "source.h"
#include "task.h"

int
task_items_load(struct task_items *it, const char *idx, const char *labels, int side,
    struct err *e)
{
	struct source s = { 0 };
	int rc = 0;

	memset(it, 0, sizeof *it);
	if (idx_load(&s, idx, labels, e) < 0) {
		source_free(&s);
		return -1;
	}
	/* The relation task's labels are made from the items' classes. */
	if (s.c != 1 || s.label[0] < 0) {
		err_set(e, "%s: %s", idx, s.c != 1 ? "want grey images (N,H,W)" :
		    "no labels (no labels-idx1 file beside it: give --labels)");
		source_free(&s);
		return -1;
	}
	size_t per = (size_t)side * side;
	it->n = s.n;
	it->side = side;
	it->px = malloc(per * (size_t)s.n);
	it->label = malloc(sizeof *it->label * (size_t)s.n);
	if (!it->px || !it->label) {
		err_set(e, "%s: out of memory for the items", idx);
		rc = -1;
		goto out;
	}
	memcpy(it->label, s.label, sizeof *it->label * (size_t)s.n);
	#pragma omp parallel
	{
		struct image im = { 0 }, small = { 0 };
		struct err one;
		#pragma omp for schedule(static)
		for (int64_t i = 0; i < s.n; i++) {
			one.msg[0] = 0;
			if (source_get(&s, i, &im, NULL, &one) < 0 ||
			    image_resize(&im, 0, 0, im.h, im.w, &small, side, side) < 0) {
				#pragma omp critical
				{ rc = -1; err_set(e, "%s", one.msg[0] ? one.msg : "out of memory"); }
				continue;
			}
			memcpy(it->px + per * (size_t)i, small.px, per);
		}
		image_free(&im);
		image_free(&small);
	}
out:
	source_free(&s);
	if (rc < 0)
		task_items_free(it);
	return rc;
}

void
task_items_free(struct task_items *it)
{
	free(it->px);
	free(it->label);
	memset(it, 0, sizeof *it);
}
