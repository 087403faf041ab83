/*
 * atomicfile.h - write a file so that readers see the old or the new one,
 * never a part: a temporary in the same directory, fsync, rename.
 */
#ifndef ATOMICFILE_H
#define ATOMICFILE_H

#include <stdio.h>

struct atomicfile {
	FILE	*fp;
	char	*path;		/* final name */
	char	*tmp;		/* temporary name beside it */
};

/* Open a temporary beside path for writing, PATH.tmp.PID.XXXXXX, locked
 * (flock) while it is open, first removing those a process killed while
 * writing path left: their PID is gone and nothing holds their lock.
 * 0, or -1 with errno set. */
int	 atomic_open(struct atomicfile *a, const char *path);
/* Flush, fsync and rename over path; 0, or -1 (temporary removed). */
int	 atomic_commit(struct atomicfile *a);
/* Close and remove the temporary; path is untouched. */
void	 atomic_abort(struct atomicfile *a);

#endif
