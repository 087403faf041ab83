/*
 * vt.h - the vitpipe tensor stream (see vitpipe(5)).
 *
 * A stream is a text header (magic line "VITPIPE 1", KEY value lines,
 * "ENDHDR", newline padding to ALIGN bytes) followed by records.  Every
 * record carries the same named fields; a field has a dtype and a shape
 * whose dims are either fixed in the header or '*' (given per record in a
 * small preamble).  Payloads are little-endian and each is padded to ALIGN
 * bytes, so a mapped file keeps every field aligned; in memory every
 * field's data is 64-byte aligned for BLAS whatever the stream's ALIGN
 * (unless the caller lent its own array: vt_lend).
 *
 * Library functions never exit: they return -1 and leave a message such as
 * "input: record 17: field 'pos' truncated" in s->err.
 */
#ifndef VT_H
#define VT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "err.h"

#define VT_MAGIC	"VITPIPE 1"
#define VT_MAXRANK	8
#define VT_ANY		(-1)		/* a dim that varies per record */
#define VT_ALIGN	64		/* writers' default ALIGN */
#define VT_MAXALIGN	4096
#define VT_MAXFIELDS	4096
#define VT_MAXDYN	256		/* '*' dims over all fields */
#define VT_MAXNAME	127		/* longest field name */
#define VT_MAXLINE	4096		/* longest header line */
#define VT_MAXHEADER	(16L << 20)	/* longest header, bytes */

enum vt_dtype { VT_U8, VT_I8, VT_U16, VT_I32, VT_I64, VT_F32, VT_F64, VT_NDTYPE };

struct vt_field {
	char	 name[VT_MAXNAME + 1];
	int	 dtype;			/* enum vt_dtype */
	int	 rank;			/* 0 (scalar) .. VT_MAXRANK */
	int64_t	 dim[VT_MAXRANK];	/* header dims; VT_ANY = per record */
	int64_t	 shape[VT_MAXRANK];	/* this record's dims */
	int64_t	 count;			/* this record's element count */
	size_t	 nbytes;		/* this record's payload bytes */
	void	*data;			/* [count] of dtype, 64-byte aligned */
	size_t	 cap;			/* bytes allocated at data */
	int	 skip;			/* payloads read past (vt_skip) */
	size_t	 limit;			/* most payload bytes of a record
					   (vt_limit); 0: no limit of its own */
	int	 lent;			/* data is the caller's (vt_lend) */
};

struct vt_meta {
	char	*key;
	char	*val;
};

struct vt {
	FILE		*fp;
	const char	*name;		/* for messages: a path or "stdin" */
	int		 align;		/* ALIGN: payload padding, power of 2 */
	int64_t		 records;	/* RECORDS, or -1 when not declared */
	int64_t		 recno;		/* records read or written so far */
	int		 nfield, fieldcap;
	struct vt_field	*field;		/* [nfield] */
	int		 nmeta, metacap;
	struct vt_meta	*meta;		/* [nmeta], header order */
	size_t		 metabytes;	/* their "KEY val" lines' bytes: within
					   VT_MAXHEADER, as a reader wants */
	int		 ndyn;		/* number of '*' dims over all fields */
	int64_t		 maxbytes;	/* largest record accepted (VT_MAXRECORD) */
	struct err	 err;		/* why the last call that failed did */
};

#define VT_MAXRECORD	(4LL << 30)	/* default limit on one record's payloads */
#define VT_MAXEMPTY	(1LL << 20)	/* most RECORDS of no bytes at all */

/* Set s's error to "NAME: " (the stream's name, or "stream") and the
 * message (printf format); returns -1: for vt's readers and those that
 * read streams through it. */
int	 vt_error(struct vt *s, const char *fmt, ...)
	    __attribute__((format(printf, 2, 3)));
/* Set s to an empty stream description with ALIGN 64 and no fields. */
void	 vt_init(struct vt *s);
/* Free everything s owns (not s->fp) and re-initialize it. */
void	 vt_free(struct vt *s);

/* Size in bytes of one element of dtype, 0 if dtype is invalid. */
size_t	 vt_dtype_size(int dtype);
/* Name of dtype ("f32"), or "?". */
const char *vt_dtype_name(int dtype);
/* Dtype for name, or -1. */
int	 vt_dtype_parse(const char *name);

/* Append a field; dim[rank] may hold VT_ANY.  Returns its index, or -1. */
int	 vt_add_field(struct vt *s, const char *name, int dtype, int rank,
	    const int64_t *dim);
/* vt_add_field without its buffer: a header described, not one to write
 * records under (header.json's).  Its index, or -1. */
int	 vt_declare_field(struct vt *s, const char *name, int dtype, int rank,
	    const int64_t *dim);
/* Index of the field called name, or -1. */
int	 vt_find(const struct vt *s, const char *name);
/* The field called name, or NULL. */
struct vt_field *vt_get(struct vt *s, const char *name);
/* Set this record's shape of field i (must match its fixed dims) and make
 * room for its payload.  Fixed-shape fields need no call.  The record's
 * payloads (fields before i, set first, and the fixed ones) must stay
 * within s->maxbytes.  0 or -1. */
int	 vt_set_shape(struct vt *s, int i, const int64_t *shape);
/* Make field i's payload, of the size its fixed shape gives, the caller's
 * bytes at data: records are written from them and read into them, with
 * no copy; s never moves or frees them. */
void	 vt_lend(struct vt *s, int i, void *data);
/* Read past field i's payloads from now on, keeping none (data NULL). */
void	 vt_skip(struct vt *s, int i);
/* Refuse a record whose field i holds more than max bytes, when its shape
 * is known: before any of its payload is read, read past or kept. */
void	 vt_limit(struct vt *s, int i, size_t max);

/* Last value of key, or NULL. */
const char *vt_meta(const struct vt *s, const char *key);
/* Replace every value of key by val (or remove key when val is NULL). */
int	 vt_meta_set(struct vt *s, const char *key, const char *val);
/* Append one more KEY val line (keys such as CLASS and HISTORY repeat). */
int	 vt_meta_add(struct vt *s, const char *key, const char *val);
/* Append "HISTORY argv..." recording the command line that made s. */
int	 vt_history(struct vt *s, int argc, char *const argv[]);
/* Copy the fields (not data) and metadata of src into the empty dst; the
 * copied fields get no buffer (vt_copy_record lends them src's). */
int	 vt_copy_header(struct vt *dst, const struct vt *src);

/* Read and validate a header from fp; name is used in messages. 0 or -1. */
int	 vt_read_header(struct vt *s, FILE *fp, const char *name);
/* Read the next record into the fields: 1 read, 0 clean end, -1 error. */
int	 vt_read_record(struct vt *s);
/* Write s's header to fp, unless a reader would refuse it (longer than
 * VT_MAXHEADER, more than VT_MAXEMPTY records of no bytes).  0 or -1. */
int	 vt_write_header(struct vt *s, FILE *fp, const char *name);
/* Write the fields' current payloads as one record.  0 or -1. */
int	 vt_write_record(struct vt *s);

/* Read a whole single-record container (generators, checkpoints). */
int	 vt_load(struct vt *s, const char *path);
/* vt_load, calling prepare(s, arg) between the header and the record,
 * where it may vt_lend or vt_skip fields; its -1 (with its message in
 * s->err) ends the load with -1. */
int	 vt_load_with(struct vt *s, const char *path,
	    int (*prepare)(struct vt *s, void *arg), void *arg);
/* Write s, whose fields hold one record, to path atomically.  0 or -1. */
int	 vt_save(struct vt *s, const char *path);

/* The one parser of header keys' whole numbers: the decimal at str, an
 * optional '-' only when lo < 0, in [lo, hi] (never wrapped) into *out,
 * and then the string's end, or anything when end is not NULL (*end: past
 * the digits).  0, or -1. */
int	 vt_parse_int(const char *str, char **end, int64_t lo, int64_t hi, int64_t *out);
/* Grid dims parsed from "4x7x7" into g[], returning their count or -1. */
int	 vt_parse_dims(const char *str, int64_t *g, int max);
/* The shape dims[rank] as "[a,b,c]" ('*' for VT_ANY) into buf[len]
 * (truncated); buf. */
const char *vt_shape_str(const int64_t *dims, int rank, char *buf, size_t len);

#endif
