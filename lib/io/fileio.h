/*
 * fileio.h - input opened and output written the commands' way: stdin
 * that is a terminal refused, a directory refused, a write finished after
 * a short one.
 */
#ifndef FILEIO_H
#define FILEIO_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"

/* Open path for reading ("-" or NULL is stdin, refused when a terminal),
 * its name for messages in *name ("stdin" or path): the stream, or NULL
 * with e ("PATH: reason"). */
FILE	*open_in(const char *path, const char **name, struct err *e);
/* Write len bytes of buf to fd, again after a short write or EINTR: 0, or
 * -1 with errno. */
int	 write_all(int fd, const void *buf, size_t len);

#endif
