/*
 * batch.h - turn the records of a vitpipe stream into float batches for
 * the model: patch [B][T][P], pos [B][T][A], label [B].
 *
 * u8 patches become (v/255 - MEAN[c]) / STD[c] with the header's MEAN and
 * STD (defaults 0 and 1) and channel c = value index mod CHANNELS; f32
 * patches are taken as they are but must be finite.  A record whose token
 * count differs from the batch's ends the batch early and starts the next
 * one (multi-resolution streams).  A record's 'source' field (u8 [*]
 * text, vitpipe(5)), when the stream has one, is kept with it, as is its
 * CLS token's position (f32 [axes] 'clspos', posgen --offset).
 */
#ifndef BATCH_H
#define BATCH_H

#include <stdint.h>

#include "rng.h"
#include "vt.h"

#define BATCH_MAXCHANNELS 64
#define BATCH_MAXSOURCE	4096	/* longest 'source' text, bytes */

struct batch {
	int	 n;		/* records held */
	int	 T;		/* tokens per record */
	int	 P, A;		/* values per token, position axes */
	int	 cap;		/* records room */
	int64_t	 tcap;		/* tokens room per record */
	float	*x;		/* [cap][tcap..][P], the first n*T*P used */
	float	*pos;		/* [cap][tcap..][A], the first n*T*A used */
	int32_t	*label;		/* [cap]; -1 when the stream has none */
	float	*cls;		/* [cap][A] the records' CLS positions; NULL:
				   the stream has no 'clspos' (its CLSPOS) */
	float	*scratch;	/* [tcap] for batch_grid */
	int64_t	 first;		/* stream index of the first record held */
	char	*source;	/* the records' source texts, each NUL-ended */
	size_t	*source_at;	/* [cap] where record i's starts; NULL: none */
	size_t	 source_cap;	/* bytes room at source */
};

struct batch_reader {
	struct vt *s;		/* the stream, header read */
	int	 ipatch, ipos, ilabel, isource, icls; /* field indexes; -1: none */
	int	 P, A, classes;
	int	 need_label;
	float	 scale[BATCH_MAXCHANNELS], shift[BATCH_MAXCHANNELS];
	int	 channels;
	int	 held;		/* s's fields hold a record not yet batched */
	int64_t	 delivered;	/* records handed out (or skipped) so far */
	int64_t	 limit;		/* batch_next stops after this many records
				   delivered (0, batch_open's: none) */
	int	 eof;
	struct order *order;	/* batch_shuffle's; NULL: the stream's order */
};

/* Check that s (header read) has patch [*][P] u8/f32, pos f32 [*][A]
 * (clspos f32 [A] if any) and, when need_label, label i32 (then every label must be a class; without,
 * label -1 marks a record that has none, as patchify writes them); P, A or
 * classes <= 0 take the stream's values.  0, or -1 with a message in
 * s->err. */
int	 batch_open(struct batch_reader *br, struct vt *s, int P, int A,
	    int classes, int need_label);
/* batch_open for the model whose checkpoint keys are ck (its training
 * stream's MEAN, STD, CHANNELS; none: MEAN 0, STD 1): a stream that
 * declares no MEAN or STD gets ck's for its u8 patches, one that declares
 * others is refused; f32 patches are taken as they are.  A stream that
 * declares CLASSES must declare the model's classes. */
int	 batch_open_model(struct batch_reader *br, struct vt *s,
	    const struct vt *ck, int P, int A, int classes, int need_label);
/* Make room for cap records in b (tokens grow on demand).  0 or -1. */
int	 batch_alloc(struct batch *b, const struct batch_reader *br, int cap);
/* Room in b for its cap records of T tokens each (x, pos and scratch
 * grow, never shrink), to fill other than by batch_next.  0 or -1. */
int	 batch_reserve(struct batch *b, int64_t T);
/* Free what b holds. */
void	 batch_free(struct batch *b);
/* Fill b with up to max (<= b->cap) records of one token count: the number
 * read, 0 at the end of the stream, -1 on bad input (message in s->err). */
int	 batch_next(struct batch_reader *br, struct batch *b, int max);
/* The token grid of the batch's first record, grid[A]: the number of
 * distinct coordinates along each axis.  0, or -1 when their product is
 * not the token count (positions that are not a full grid). */
int	 batch_grid(struct batch *b, int *grid);
/* The source text of record i of b, or NULL when the stream has no field
 * 'source'. */
const char *batch_source(const struct batch *b, int i);
/* Read past n records without converting them: 0, or -1 (also when the
 * stream ends first). */
int	 batch_skip(struct batch_reader *br, int64_t n);
/* Deliver the records from now on in r's random order (order.h): drawn
 * from a buffer of buffer records of each block of block records, a run
 * of one token count at a time; a seekable stream by its index.  1 when
 * the stream seeks, 0 when it goes through the buffer, -1 with a message
 * in s->err. */
int	 batch_shuffle(struct batch_reader *br, const struct rng *r, int64_t block,
	    int64_t buffer);
/* Free what batch_open and batch_shuffle made (not the stream). */
void	 batch_close(struct batch_reader *br);

#endif
