/*
 * safetensors.h - the safetensors weight format (PyTorch's, Hugging Face's):
 * an 8-byte little-endian header length N, N bytes of UTF-8 JSON, then the
 * data buffer:
 *
 *   {"__metadata__": {"KEY": "VALUE", ...},
 *    "NAME": {"dtype": "F32", "shape": [3, 2], "data_offsets": [BEGIN, END]},
 *    ...}
 *
 * the JSON padded with spaces; offsets in bytes from the start of the
 * buffer; data little-endian in C order.  The tensors cover the buffer
 * exactly, without holes or overlaps (the format's rule against polyglot
 * files), and the buffer ends the file.
 *
 * The reader takes no size on trust: N within the file and ST_MAXHEADER,
 * every tensor's bytes (shape times dtype size) equal to its offsets'
 * span, the spans tiling the buffer, all checked from the header alone,
 * before any tensor is read or allocated.  Functions return 0 or -1 with a
 * message in s->err; none exits.
 */
#ifndef SAFETENSORS_H
#define SAFETENSORS_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

#define ST_MAXHEADER	(100L << 20)	/* the reference reader's limit */
#define ST_MAXRANK	8
#define ST_MAXNAME	1023		/* longest tensor name, bytes */
#define ST_METADATA	"__metadata__"

enum st_dtype {
	ST_BOOL, ST_U8, ST_I8, ST_F8_E5M2, ST_F8_E4M3, ST_I16, ST_U16, ST_F16,
	ST_BF16, ST_I32, ST_U32, ST_F32, ST_F64, ST_I64, ST_U64, ST_NDTYPE
};

struct st_tensor {
	char	*name;			/* first: unique_names sorts by it */
	int	 dtype;			/* enum st_dtype */
	int	 rank;
	int64_t	 shape[ST_MAXRANK];
	int64_t	 count;			/* elements */
	uint64_t begin, end;		/* its bytes [begin, end) in the buffer */
	const float *data;		/* writer: count f32 values */
	int	 owned;			/* writer: st_free frees data */
};

struct st_meta {
	char	*key, *val;		/* key first: unique_names sorts by it */
};

struct st {
	FILE	*fp;
	const char *name;		/* for messages */
	uint64_t data_at;		/* the buffer's offset in the file: 8 + N */
	uint64_t data_len;		/* its bytes */
	int	 ntensor, tcap;
	struct st_tensor *tensor;	/* [ntensor] in header order */
	int	 nmeta, mcap;
	struct st_meta *meta;		/* [nmeta] in header order */
	struct err err;	/* why the last call that failed did */
};

/* Set s's error to "NAME: " (the file's name, or "safetensors") and the
 * message (printf format); returns -1. */
int	 st_error(struct st *s, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* An empty description, for reading or for st_add_f32. */
void	 st_init(struct st *s);
/* Free what s holds (not s->fp), owned tensor data included. */
void	 st_free(struct st *s);
/* The format's name of dtype ("F32"), or "?". */
const char *st_dtype_name(int dtype);

/* Read and check the header of the safetensors file fp, size bytes long
 * (a regular file, read from its start); name is used in messages.  0, or
 * -1. */
int	 st_read_header(struct st *s, FILE *fp, const char *name, uint64_t size);
/* The tensor called name, or NULL. */
const struct st_tensor *st_find(const struct st *s, const char *name);
/* The metadata value of key, or NULL. */
const char *st_meta(const struct st *s, const char *key);
/* Read t's values into dst[t->count] as f32: F32 as is, F16, BF16 and F64
 * converted (F64 rounded); other dtypes are an error, and so is a value
 * that is not finite (NaN, infinity, an F64 beyond a float's range).  0,
 * or -1. */
int	 st_read_f32(struct st *s, const struct st_tensor *t, float *dst);

/* Append an F32 tensor of shape[rank] whose values are data, lent (owned:
 * st_free frees it).  0, or -1. */
int	 st_add_f32(struct st *s, const char *name, int rank, const int64_t *shape,
	    const float *data, int owned);
/* Append a metadata entry (st_write refuses a key twice).  0, or -1. */
int	 st_meta_add(struct st *s, const char *key, const char *val);
/* Write s's tensors (st_add_f32), in order, and metadata to fp as one
 * safetensors file, its header padded to 8 bytes so that every tensor's
 * data is aligned for its dtype.  0, or -1. */
int	 st_write(struct st *s, FILE *fp, const char *name);

#endif
