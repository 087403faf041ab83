/*
 * vtjson.h - header.json, what vtool to-npy keeps beside the arrays of a
 * stream that .npy files cannot hold: its ALIGN, its fields' dtypes and
 * dims ('*' too) and its keys in order, repeated ones included:
 *
 *   {"align": 64, "fields": {"patch": {"dtype": "u8", "dims": ["*", 16]}},
 *    "meta": [["GRID", "7x7"], ["CLASS", "0 cat"]]}
 */
#ifndef VTJSON_H
#define VTJSON_H

#include <stddef.h>
#include <stdio.h>

#include "err.h"
#include "vt.h"

/* Read header.json's text[len] (NUL-ended) into h, which it vt_inits:
 * ALIGN (0 when none is given), fields, keys; every number checked for
 * range before it is converted.  0, or -1 with h->err naming the byte. */
int	 vt_json_read(struct vt *h, const char *text, size_t len);
/* Write s's header.json text to fp: 0, or -1 on a write error (ferror). */
int	 vt_json_write(FILE *fp, const struct vt *s);
/* Read the header.json file at path into h (vt_json_read; h->name path):
 * 0, 1 when there is no such file and missing_ok, or -1 with e naming
 * path. */
int	 vt_json_load(const char *path, struct vt *h, int missing_ok, struct err *e);

#endif
