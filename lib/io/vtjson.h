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

#include "vt.h"

/* Read header.json's text[len] (NUL-ended) into h, which it vt_inits:
 * ALIGN (0 when none is given), fields, keys; every number checked for
 * range before it is converted.  0, or -1 with h->err naming the byte. */
int	 vt_json_read(struct vt *h, const char *text, size_t len);

#endif
