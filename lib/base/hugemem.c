/*
 * hugemem.c - large arrays on 2 MB pages (hugemem.h).  Transparent huge
 * pages in "madvise" mode need the advice.  The engine's large arrays are
 * streamed or strided across every step (activations, the parameter
 * arena that AdamW reads and writes four arrays of at once, rounded
 * copies), and on 4 KB pages TLB misses cost them: the rotary loops about
 * a third of their time (liere:64), AdamW ten times its time
 * (doc/performance.md).  The price: the first touch may wait for the
 * kernel to compact memory.
 */
#include <stdlib.h>
#include <sys/mman.h>

#include "hugemem.h"

void *
huge_alloc(size_t bytes)
{
	bytes = (bytes + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
	void *p = aligned_alloc(HUGE_PAGE, bytes);
	if (p == NULL)
		return NULL;
#ifdef MADV_HUGEPAGE
	madvise(p, bytes, MADV_HUGEPAGE);	/* advice: refusal is harmless */
#endif
	return p;
}
