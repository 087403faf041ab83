/*
 * dist.c - data-parallel training over MPI: shares of the batches, the
 * stream from rank 0, the gradients' sums.
 *
 * MPI calls come from the main thread alone, between the engine's
 * parallel loops (MPI_THREAD_FUNNELED).  Open MPI moves a nonblocking
 * allreduce along only inside MPI calls, so each block's end also tests
 * the sums in flight.  Errors in MPI calls abort the job (MPI's default
 * handler), as does a rank that dies: the launcher ends the others.
 */
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include <mpi.h>

#include "dist.h"
#include "vitfit.h"

#if defined(__SANITIZE_ADDRESS__)	/* GCC's -fsanitize=address */
#define ASAN	1
#elif defined(__has_feature)		/* clang's */
#if __has_feature(address_sanitizer)
#define ASAN	1
#endif
#endif
#ifdef ASAN
#include <sanitizer/lsan_interface.h>
/* Sanitized builds (make test SAN=1): what MPI_Init allocates and loses is
 * Open MPI's, and so is what it leaves at MPI_Finalize, in components it
 * unloads there (so that no suppression can name them): LeakSanitizer
 * looks away in MPI_Init and makes its check before MPI_Finalize, not at
 * exit; what PMIx's thread loses meanwhile (pmix_hash_fetch) its
 * suppressions name. */
#define LSAN_OFF()	__lsan_disable()
#define LSAN_ON()	__lsan_enable()
#define LSAN_CHECK()	__lsan_do_leak_check()
const char *
__lsan_default_suppressions(void)
{
	return "leak:libpmix.so\n";
}

const char *
__lsan_default_options(void)
{
	return "print_suppressions=0";	/* rank 0 alone speaks */
}
#else
#define LSAN_OFF()
#define LSAN_ON()
#define LSAN_CHECK()
#endif

enum { TAG_X = 1, TAG_POS, TAG_LABEL, TAG_TARGET };

struct dist_state {
	int	 mpi;		/* MPI started */
	int	 root_reads;	/* rank 0 reads a stream and sends the records */
	int	 first;		/* no batch fetched yet */
	MPI_Request *sreq;	/* [4 size] dist_scatter's, made at its first call */
	int	 bcast;		/* the last batch went whole to every rank */
	int64_t	 max;		/* the last batch's planned records */
	/* gradient buckets: bucket k is grad[off[k], off[k + 1]) */
	int	 nbucket;
	size_t	*off;		/* [nbucket + 1] */
	char	*posted;	/* [nbucket] */
	MPI_Request *req;	/* [nbucket] */
	float	*send;		/* [nparam] the scaled gradient being summed */
	struct vit *m;		/* the model whose gradient is sent */
	float	 scale;
	int	 armed;
};

/* How many processes the launcher that started this one says it started
 * (Open MPI's mpirun sets OMPI_COMM_WORLD_SIZE, PMI launchers PMI_SIZE),
 * or NULL. */
static const char *
launcher_size(void)
{
	static const char *const vars[] = { "OMPI_COMM_WORLD_SIZE", "PMI_SIZE" };

	for (size_t i = 0; i < sizeof vars / sizeof *vars; i++)
		if (getenv(vars[i]) != NULL)
			return getenv(vars[i]);
	return NULL;
}

int
dist_init(struct dist *d, char *err, size_t errlen)
{
	const char *want = launcher_size();
	int provided;

	memset(d, 0, sizeof *d);
	d->size = 1;
	if ((d->st = calloc(1, sizeof *d->st)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	d->st->first = 1;
	if (want == NULL && getenv("PMIX_RANK") == NULL && getenv("PMI_RANK") == NULL)
		return 0;
	LSAN_OFF();
	MPI_Init_thread(NULL, NULL, MPI_THREAD_FUNNELED, &provided);
	LSAN_ON();
	d->st->mpi = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &d->size);
	if (want != NULL && atoi(want) != d->size) {
		snprintf(err, errlen, "the launcher started %s processes, MPI sees %d: "
		    "an mpirun of another MPI than the Open MPI this program uses?",
		    want, d->size);
		return -1;
	}
	return 0;
}

void
dist_end(struct dist *d)
{
	struct dist_state *st = d->st;

	if (st == NULL)
		return;
	if (st->mpi) {
		LSAN_CHECK();
		MPI_Finalize();
	}
	free(st->sreq);
	free(st->off);
	free(st->posted);
	free(st->req);
	free(st->send);
	free(st);
	d->st = NULL;
}

/* A count for one MPI call, or -1 when it is more than an int holds. */
static int
icount(int64_t n)
{
	return n >= 0 && n <= INT_MAX ? (int)n : -1;
}

/* Rank k's share of a batch of m records planned as max: [*lo, *lo + *n). */
static void
share_of(const struct dist *d, int k, int64_t max, int64_t m, int *lo, int *n)
{
	int64_t a = k * max / d->size, b = (k + 1) * max / d->size;

	a = a < m ? a : m;
	b = b < m ? b : m;
	*lo = (int)a;
	*n = (int)(b - a);
}

int
dist_stream(struct dist *d, FILE *fp)
{
	struct stat sb;
	int stream = 0;

	if (d->rank == 0)
		stream = fp == stdin || fstat(fileno(fp), &sb) < 0 ||
		    !S_ISREG(sb.st_mode);
	if (d->size > 1)
		MPI_Bcast(&stream, 1, MPI_INT, 0, MPI_COMM_WORLD);
	d->st->root_reads = stream && d->size > 1;
	return stream;
}

int
dist_read_header(struct dist *d, struct vt *s, FILE *fp, const char *name)
{
	struct dist_state *st = d->st;
	char *buf = NULL;
	size_t len = 0;
	int rc = 0;

	if (!st->root_reads)
		return vt_read_header(s, fp, name);
	if (d->rank == 0) {
		/* A rank-0 failure ends the job: the others wait in MPI_Bcast
		 * until the launcher stops them. */
		struct vt h;
		FILE *mem;
		if (vt_read_header(s, fp, name) < 0)
			return -1;
		vt_init(&h);
		if ((mem = open_memstream(&buf, &len)) == NULL ||
		    vt_copy_header(&h, s) < 0 || vt_write_header(&h, mem, name) < 0 ||
		    fclose(mem) == EOF) {
			snprintf(s->err, sizeof s->err, "%s: out of memory", name);
			vt_free(&h);
			return -1;
		}
		vt_free(&h);
	}
	int64_t n = (int64_t)len;
	MPI_Bcast(&n, 1, MPI_INT64_T, 0, MPI_COMM_WORLD);
	if (d->rank != 0 && (buf = malloc((size_t)n)) == NULL) {
		snprintf(s->err, sizeof s->err, "%s: out of memory", name);
		return -1;
	}
	MPI_Bcast(buf, (int)n, MPI_CHAR, 0, MPI_COMM_WORLD);
	if (d->rank != 0) {
		FILE *mem = fmemopen(buf, (size_t)n, "r");
		if (mem == NULL) {
			snprintf(s->err, sizeof s->err, "%s: out of memory", name);
			rc = -1;
		} else {
			rc = vt_read_header(s, mem, name);
			fclose(mem);
			s->fp = NULL;	/* records come from rank 0 */
		}
	}
	free(buf);
	return rc;
}

int
dist_skip(struct dist *d, struct batch_reader *br, int64_t n)
{
	if (d->st->root_reads && d->rank != 0)
		return 0;
	return batch_skip(br, n);
}

/* Make b, filled by MPI, hold n records of T tokens; -1 with s->err. */
static int
make_room(struct batch *b, struct vt *s, int n, int64_t T)
{
	if (batch_reserve(b, T) < 0) {
		snprintf(s->err, sizeof s->err, "%s: out of memory for %d records "
		    "of %lld tokens", s->name, n, (long long)T);
		return -1;
	}
	b->n = n;
	b->T = (int)T;
	/* sources stay with rank 0 (training reads none) */
	free(b->source_at);
	b->source_at = NULL;
	return 0;
}

/* Records [lo, lo + n) of b (T tokens each) and of target[.][C] (NULL:
 * none) to rank k, or from rank 0 into b's and target's first n. */
static void
move_records(struct dist *d, struct batch *b, float *target, int C, int k,
    int lo, int n, MPI_Request *req)
{
	int64_t nx = (int64_t)b->T * b->P, np = (int64_t)b->T * b->A;
	int send = d->rank == 0, at = send ? lo : 0, i = 0;
	void *buf[] = { b->x + at * nx, b->pos + at * np, b->label + at,
	    target != NULL ? target + (int64_t)at * C : NULL };
	int count[] = { (int)(n * nx), (int)(n * np), n, n * C };
	MPI_Datatype type[] = { MPI_FLOAT, MPI_FLOAT, MPI_INT32_T, MPI_FLOAT };

	for (int f = 0; f < 4; f++) {
		if (buf[f] == NULL)
			continue;
		if (send)
			MPI_Isend(buf[f], count[f], type[f], k, TAG_X + f,
			    MPI_COMM_WORLD, &req[i++]);
		else
			MPI_Irecv(buf[f], count[f], type[f], 0, TAG_X + f,
			    MPI_COMM_WORLD, &req[i++]);
	}
}

int64_t
dist_next(struct dist *d, struct batch_reader *br, struct batch *b, int max)
{
	struct dist_state *st = d->st;
	int64_t h[3] = { 0, 0, 0 };	/* records, tokens, the first's index */

	st->max = max;
	if (!st->root_reads || d->rank == 0) {
		int m = batch_next(br, b, max);
		if (m < 0)
			return -1;
		if (st->root_reads && icount((int64_t)m * b->T *
		    (b->P > b->A ? b->P : b->A)) < 0) {
			snprintf(br->s->err, sizeof br->s->err, "%s: a batch of %d "
			    "records of %d tokens is more than one MPI message holds",
			    br->s->name, m, b->T);
			return -1;
		}
		h[0] = m, h[1] = b->T, h[2] = b->first;
	}
	if (st->root_reads) {
		double t = MPI_Wtime();
		MPI_Bcast(h, 3, MPI_INT64_T, 0, MPI_COMM_WORLD);
		d->comm += MPI_Wtime() - t;
	}
	d->m = h[0];
	share_of(d, d->rank, max, d->m, &d->lo, &d->n);
	st->bcast = st->root_reads && st->first;
	st->first = 0;
	d->whole = !st->root_reads || d->rank == 0 || st->bcast;
	d->at = d->whole ? d->lo : 0;
	if (!st->root_reads || d->m == 0 || (d->rank == 0 && !st->bcast))
		return d->m;
	if (d->rank != 0) {
		if (make_room(b, br->s, st->bcast ? (int)d->m : d->n, h[1]) < 0)
			return -1;
		b->first = h[2] + d->at;
	}
	if (st->bcast) {
		/* the whole first batch, to every rank */
		int64_t nx = (int64_t)b->n * b->T;
		double t = MPI_Wtime();
		MPI_Bcast(b->x, (int)(nx * b->P), MPI_FLOAT, 0, MPI_COMM_WORLD);
		MPI_Bcast(b->pos, (int)(nx * b->A), MPI_FLOAT, 0, MPI_COMM_WORLD);
		MPI_Bcast(b->label, b->n, MPI_INT32_T, 0, MPI_COMM_WORLD);
		d->comm += MPI_Wtime() - t;
	}
	return d->m;
}

int
dist_scatter(struct dist *d, struct batch *b, float *target, int C,
    char *err, size_t errlen)
{
	struct dist_state *st = d->st;
	int nreq = 0;

	if (!st->root_reads || st->bcast || d->m == 0 || (d->rank != 0 && d->n == 0))
		return 0;
	if (st->sreq == NULL &&
	    (st->sreq = malloc(sizeof *st->sreq * 4 * d->size)) == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	MPI_Request *req = st->sreq;
	double t = MPI_Wtime();
	if (d->rank == 0)
		for (int k = 1; k < d->size; k++) {
			int lo, n;
			share_of(d, k, st->max, d->m, &lo, &n);
			if (n > 0) {
				move_records(d, b, target, C, k, lo, n, req + nreq);
				nreq += 4;
			}
		}
	else {
		move_records(d, b, target, C, 0, 0, d->n, req);
		nreq = 4;
	}
	MPI_Waitall(nreq, req, MPI_STATUSES_IGNORE);
	d->comm += MPI_Wtime() - t;
	return 0;
}

void
dist_view(const struct dist *d, const struct batch *b, struct batch *v)
{
	*v = *b;
	v->n = d->n;
	v->x += (int64_t)d->at * b->T * b->P;
	v->pos += (int64_t)d->at * b->T * b->A;
	v->label += d->at;
	v->first += d->at;
	if (v->source_at != NULL)
		v->source_at += d->at;
	if (v->cls != NULL)
		v->cls += (int64_t)d->at * b->A;
}

/* ---- gradients ---- */

/* The buckets of m, once: one per block, from the block's first tensor
 * on, the last block's with the final norm and the head after it, which
 * vit_backward completes first; the tensors before the blocks (the patch
 * embedding, CLS and position table, complete last) one more, and the
 * rest (pe.params, complete at vit_grad_complete) another.  0, or -1 (no
 * memory, or a bucket too large for one MPI call). */
static int
buckets(struct dist_state *st, const struct vit *m)
{
	int depth = m->c.depth, nb = depth + 2, t, last = -1;

	if (st->nbucket > 0)
		return 0;
	st->off = calloc((size_t)nb + 1, sizeof *st->off);
	st->posted = calloc((size_t)nb, 1);
	st->req = malloc(sizeof *st->req * nb);
	st->send = aligned_alloc(64, (m->nparam * sizeof(float) + 63) & ~(size_t)63);
	if (st->off == NULL || st->posted == NULL || st->req == NULL ||
	    st->send == NULL)
		return -1;
	/* the table is in arena order, each block's tensors together */
	for (t = m->ntensor - 1; t >= 0; t--) {
		int l;
		if (sscanf(m->tensor[t].name, "blocks.%d.", &l) == 1 && l >= 0 &&
		    l < depth) {
			st->off[1 + l] = m->tensor[t].off;
			last = last < 0 ? t : last;
		}
	}
	for (t = last + 1; t < m->ntensor && (strncmp(m->tensor[t].name, "norm.",
	    5) == 0 || strncmp(m->tensor[t].name, "head.", 5) == 0); t++)
		;
	st->off[1 + depth] = t < m->ntensor ? m->tensor[t].off : m->nparam;
	st->off[2 + depth] = m->nparam;
	for (int k = 0; k < nb; k++) {
		st->req[k] = MPI_REQUEST_NULL;
		if (icount((int64_t)(st->off[k + 1] - st->off[k])) < 0)
			return -1;
	}
	st->nbucket = nb;
	return 0;
}

/* Start summing bucket k: its gradient, scaled, into send; the sum back
 * into the gradient. */
static void
post(struct dist_state *st, int k)
{
	size_t lo = st->off[k], n = st->off[k + 1] - lo;
	const float *g = st->m->grad + lo;
	float *s = st->send + lo, f = st->scale;

	if (st->posted[k])
		return;
	st->posted[k] = 1;
	#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++)
		s[i] = f * g[i];
	MPI_Iallreduce(s, st->m->grad + lo, (int)n, MPI_FLOAT, MPI_SUM,
	    MPI_COMM_WORLD, &st->req[k]);
}

/* vit_backward's grad_ready: block l's gradient is complete. */
static void
block_ready(void *arg, int l)
{
	struct dist *d = arg;
	struct dist_state *st = d->st;
	int done;
	double t = MPI_Wtime();

	post(st, 1 + l);
	MPI_Testall(st->nbucket, st->req, &done, MPI_STATUSES_IGNORE);
	d->comm += MPI_Wtime() - t;
}

void
dist_arm(struct dist *d, struct vit *m, float scale)
{
	struct dist_state *st = d->st;

	if (d->size == 1 || buckets(st, m) < 0)
		return;		/* dist_reduce sends it all, or fails */
	st->m = m;
	st->scale = scale;
	st->armed = 1;
	m->grad_ready = block_ready;
	m->grad_arg = d;
}

int
dist_reduce(struct dist *d, struct vit *m, float scale, double *lsum,
    char *err, size_t errlen)
{
	struct dist_state *st = d->st;

	if (d->size == 1) {
		if (scale != 1)
			vit_scale_grad(m, scale);
		return 0;
	}
	if (buckets(st, m) < 0) {
		snprintf(err, errlen, "out of memory for the gradient's buckets");
		return -1;
	}
	double t = MPI_Wtime();
	if (!st->armed) {
		st->m = m;
		st->scale = scale;
	}
	/* in the order of the backward: nonblocking collectives, too, must
	 * be called in one order on every rank */
	for (int k = st->nbucket - 2; k >= 0; k--)
		post(st, k);
	post(st, st->nbucket - 1);
	MPI_Waitall(st->nbucket, st->req, MPI_STATUSES_IGNORE);
	MPI_Allreduce(MPI_IN_PLACE, lsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	d->comm += MPI_Wtime() - t;
	memset(st->posted, 0, (size_t)st->nbucket);
	st->armed = 0;
	m->grad_ready = NULL;
	return 0;
}

/* FNV-1a over n 32-bit words. */
static uint64_t
hash_words(uint64_t h, const void *p, size_t n)
{
	const uint32_t *w = p;

	for (size_t i = 0; i < n; i++)
		h = (h ^ w[i]) * 0x100000001b3ULL;
	return h;
}

int
dist_same(struct dist *d, const struct vit *m, char *err, size_t errlen)
{
	uint64_t h = 0xcbf29ce484222325ULL, v[2];

	if (d->size == 1)
		return 0;
	h = hash_words(h, m->param, m->nparam);
	h = hash_words(h, m->adam_m, m->nparam);
	h = hash_words(h, m->adam_v, m->nparam);
	v[0] = h, v[1] = ~h;	/* the largest and, negated, the smallest */
	double t = MPI_Wtime();
	MPI_Allreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD);
	d->comm += MPI_Wtime() - t;
	if (v[0] == ~v[1])
		return 0;
	snprintf(err, errlen, "the ranks' parameters differ: another build, seed "
	    "or --generators file on some host?");
	return -1;
}
