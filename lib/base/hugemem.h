/* hugemem.h - large arrays on 2 MB pages, where the kernel grants them. */
#ifndef HUGEMEM_H
#define HUGEMEM_H

#include <stddef.h>

#define HUGE_PAGE	((size_t)2 << 20)

/* bytes (rounded up to HUGE_PAGE), aligned to HUGE_PAGE, advised as
 * transparent huge pages; free() frees it; NULL when out of memory. */
void	*huge_alloc(size_t bytes);

#endif
