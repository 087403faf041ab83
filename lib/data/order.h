/*
 * order.h - the records of a vitpipe stream in a seeded random order, as
 * training wants them.  A seekable file is indexed once (where each record
 * starts) and read in a permutation of each block of records (an epoch);
 * a pipe goes through a bounded shuffle buffer, as tf.data's and
 * WebDataset's: each record delivered is drawn at random from the next
 * ones held.  The order depends on the generator's seed alone.
 */
#ifndef ORDER_H
#define ORDER_H

#include <stdint.h>

#include "rng.h"
#include "vt.h"

#define ORDER_BUFFER		10000		/* records a pipe's buffer holds by default */
#define ORDER_BUFFER_BYTES	(512LL << 20)	/* most record bytes a buffer holds */

struct order;

/* Shuffle the records of s (header read, no record yet) with r: each
 * record delivered is drawn from a buffer of the next buffer records of
 * its block of block records (<= 0: one block) that share its key, the
 * first dim of field group (-1: one key), so that a run of records of one
 * grid stays together; a pipe's buffer holds at most ORDER_BUFFER_BYTES.
 * A file that seeks is indexed and drawn from by number, in the order a
 * pipe gets; buffer <= 0 is a whole block there (a uniform permutation),
 * ORDER_BUFFER for a pipe.  NULL, with a message in s->err, on a read
 * error or when memory is short. */
struct order *order_open(struct vt *s, const struct rng *r, int64_t block, int64_t buffer,
	    int group);
/* Whether o reads a seekable file by its index (else through a buffer). */
int	 order_seeks(const struct order *o);
/* The next record of the order into s's fields, as vt_read_record: 1, 0
 * after the last, -1 with s->err. */
int	 order_next(struct order *o, struct vt *s);
/* The stream's number (from 1) of the record order_next delivered last. */
int64_t	 order_record(const struct order *o);
/* Free o (NULL is fine). */
void	 order_free(struct order *o);

#endif
