/*
 * gzin.h - read a file that may be gzip-compressed, as the experiments
 * keep their per-step logs (vit-plot): one FILE gives its bytes as they
 * are, or decompressed.
 */
#ifndef GZIN_H
#define GZIN_H

#include <stdio.h>

#include "err.h"

/* Most a gzip file may expand: GZIN_RATIO times its compressed bytes,
 * plus GZIN_SLACK.  Logs compress about 5 times; a stream that expands
 * further is refused, so that memory stays in proportion to the file. */
#define GZIN_RATIO	64
#define GZIN_SLACK	(16 << 20)

/* A FILE that reads fp's bytes, decompressed when they begin with gzip's
 * magic, else as they are; fp stays the caller's, to close after the
 * result.  A read error
 * (corrupt or truncated data, past the expansion bound) is the FILE's
 * error, its message (name: ...) in *e, which must outlive the FILE.
 * NULL with *e set when it cannot be made. */
FILE	*gzin_open(FILE *fp, const char *name, struct err *e);

#endif
