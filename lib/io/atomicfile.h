/*
 * atomicfile.h - write a file so that readers see the old or the new one,
 * never a part: a temporary in the same directory, fsync, rename.  A
 * symbolic link is followed and its target replaced; a FIFO or device is
 * written directly, never replaced (as coreutils and editors do).
 */
#ifndef ATOMICFILE_H
#define ATOMICFILE_H

#include <stdio.h>

struct atomicfile {
	FILE	*fp;
	char	*path;		/* final name, links resolved */
	char	*tmp;		/* temporary name beside it; NULL: written directly */
};

/* Open a temporary beside path (its links followed) for writing,
 * PATH.tmp.PID.XXXXXX, locked (flock) while it is open, first removing
 * those a process killed while writing path left: their PID is gone and
 * nothing holds their lock.  An existing FIFO or device is opened itself;
 * a directory fails (EISDIR).  0, or -1 with errno set. */
int	 atomic_open(struct atomicfile *a, const char *path);
/* Flush, fsync and rename over path (flush and close only, when direct);
 * 0, or -1 with errno set (temporary removed, path untouched). */
int	 atomic_commit(struct atomicfile *a);
/* Close and remove the temporary; path is untouched. */
void	 atomic_abort(struct atomicfile *a);

#endif
