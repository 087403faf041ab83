/*
 * dist.c - data-parallel training over MPI: shares of the batches, the
 * stream from rank 0, the gradients' sums.
 *
 * MPI calls come from the main thread, between the engine's parallel
 * loops, and from one thread of ours (MPI_THREAD_MULTIPLE): Open MPI
 * moves a nonblocking allreduce along only inside MPI calls, and the
 * backward pass makes none between two blocks' ends, so that thread
 * tests the sums in flight every millisecond while the backward runs,
 * that they go on behind it (without it, where MPI has no threads, each
 * block's end tests them, and a block's sum moves on in the next one's
 * backward only as far as the kernel's socket buffers take it).  Errors in MPI calls abort the job (MPI's default
 * handler), as does a rank that dies: the launcher ends the others.  A
 * host or link lost makes no error, only silence (TCP retries for a
 * quarter of an hour): the waits that need the others poll, bounded.
 */
#include <limits.h>
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>

#include <mpi.h>

#include "dist.h"
#include "nn.h"
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

enum { TAG_X = 1, TAG_POS, TAG_LABEL, TAG_TARGET, TAG_PING, TAG_PONG };

/* Seconds rank 0, its wait past d->timeout, gives the other ranks to
 * answer before it names those that did not. */
#define ANSWER_S	2.0
/* Seconds a bounded wait (for sums in flight) polls without sleeping: a
 * ring's 2(N - 1) rounds each wait for a poll, which a sleep would
 * delay; a longer wait is for a rank that is busy, validating say. */
#define SPIN_S		0.1

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
	uint16_t *wire, *sum;	/* [nparam] with d->bf16: send in bf16, its sum */
	MPI_Op	 bf16_sum;
	struct vit *m;		/* the model whose gradient is sent */
	float	 scale;
	int	 armed;
	double	 t_first;	/* when the step's first bucket was started */
	/* the thread that moves the sums along during the backward */
	int	 mover;		/* started */
	pthread_t thread;
	pthread_mutex_t lock;	/* over req[] and the two below */
	pthread_cond_t wake;
	int	 moving;	/* sums in flight, the backward under way */
	int	 quit;
	/* rank 0's question "alive?" (silent), which the others answer
	 * while they wait (answer) */
	MPI_Request ping;
	int	 q, a;
	char	(*host)[MPI_MAX_PROCESSOR_NAME];	/* [size] each rank's */
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

/* The mover: while st->moving, test the sums in flight every
 * millisecond. */
static void *
mover(void *arg)
{
	struct dist_state *st = arg;
	struct timespec ms = { 0, 1000000 };
	int done;

	pthread_mutex_lock(&st->lock);
	while (!st->quit) {
		if (!st->moving) {
			pthread_cond_wait(&st->wake, &st->lock);
			continue;
		}
		MPI_Testall(st->nbucket, st->req, &done, MPI_STATUSES_IGNORE);
		pthread_mutex_unlock(&st->lock);
		nanosleep(&ms, NULL);
		pthread_mutex_lock(&st->lock);
	}
	pthread_mutex_unlock(&st->lock);
	return NULL;
}

/* Start the mover, or leave the sums to the block ends' tests. */
static void
start_mover(struct dist_state *st)
{
	if (pthread_mutex_init(&st->lock, NULL) != 0)
		return;
	if (pthread_cond_init(&st->wake, NULL) != 0) {
		pthread_mutex_destroy(&st->lock);
		return;
	}
	st->mover = pthread_create(&st->thread, NULL, mover, st) == 0;
}

/* The mover on (on 1) or off (0: it makes no MPI call until turned on). */
static void
moving(struct dist_state *st, int on)
{
	if (!st->mover)
		return;
	pthread_mutex_lock(&st->lock);
	st->moving = on;
	pthread_cond_signal(&st->wake);
	pthread_mutex_unlock(&st->lock);
}

/* Every rank's host, for messages; rank 0's question posted on the
 * others.  0, or -1 with e. */
static int
hosts(struct dist *d, struct err *e)
{
	struct dist_state *st = d->st;
	char me[MPI_MAX_PROCESSOR_NAME] = "";
	int len;

	if ((st->host = calloc((size_t)d->size, sizeof *st->host)) == NULL) {
		err_set(e, "out of memory");
		return -1;
	}
	MPI_Get_processor_name(me, &len);
	MPI_Allgather(me, MPI_MAX_PROCESSOR_NAME, MPI_CHAR, st->host,
	    MPI_MAX_PROCESSOR_NAME, MPI_CHAR, MPI_COMM_WORLD);
	st->ping = MPI_REQUEST_NULL;
	if (d->rank != 0)
		MPI_Irecv(&st->q, 1, MPI_INT, 0, TAG_PING, MPI_COMM_WORLD, &st->ping);
	return 0;
}

int
dist_init(struct dist *d, struct err *e)
{
	const char *want = launcher_size();
	int provided;

	memset(d, 0, sizeof *d);
	d->size = 1;
	if ((d->st = calloc(1, sizeof *d->st)) == NULL) {
		err_set(e, "out of memory");
		return -1;
	}
	d->st->first = 1;
	if (want == NULL && getenv("PMIX_RANK") == NULL && getenv("PMI_RANK") == NULL)
		return 0;
	/* Open MPI's nonblocking allreduce on fewer than 4 ranks is a reduce
	 * to rank 0 and a broadcast back, sending 2S bytes one way after the
	 * other where a ring sends 2(N - 1)/N S both ways at once (half the
	 * time on 2 ranks): the ring, unless the user chose. */
	setenv("OMPI_MCA_coll_libnbc_iallreduce_algorithm", "1", 0);
	LSAN_OFF();
	MPI_Init_thread(NULL, NULL, MPI_THREAD_MULTIPLE, &provided);
	LSAN_ON();
	d->st->mpi = 1;
	MPI_Comm_rank(MPI_COMM_WORLD, &d->rank);
	MPI_Comm_size(MPI_COMM_WORLD, &d->size);
	if (want != NULL && atoi(want) != d->size) {
		err_set(e, "the launcher started %s processes, MPI sees %d: "
		    "an mpirun of another MPI than the Open MPI this program uses?",
		    want, d->size);
		return -1;
	}
	if (hosts(d, e) < 0)
		return -1;
	if (d->size > 1 && provided == MPI_THREAD_MULTIPLE)
		start_mover(d->st);
	return 0;
}

void
dist_end(struct dist *d)
{
	struct dist_state *st = d->st;

	if (st == NULL)
		return;
	if (st->mover) {
		pthread_mutex_lock(&st->lock);
		st->quit = 1;
		pthread_cond_signal(&st->wake);
		pthread_mutex_unlock(&st->lock);
		pthread_join(st->thread, NULL);
	}
	if (st->mpi) {
		if (st->ping != MPI_REQUEST_NULL) {
			MPI_Cancel(&st->ping);
			MPI_Wait(&st->ping, MPI_STATUS_IGNORE);
		}
		if (st->wire != NULL)
			MPI_Op_free(&st->bf16_sum);
		LSAN_CHECK();
		MPI_Finalize();
	}
	free(st->host);
	free(st->wire);
	free(st->sum);
	free(st->sreq);
	free(st->off);
	free(st->posted);
	free(st->req);
	free(st->send);
	free(st);
	d->st = NULL;
}

/* A rank other than 0: answer rank 0's question, if it came. */
static void
answer(struct dist_state *st)
{
	MPI_Request r;
	int got;

	if (st->ping == MPI_REQUEST_NULL)
		return;
	MPI_Test(&st->ping, &got, MPI_STATUS_IGNORE);
	if (!got)
		return;
	MPI_Isend(&st->a, 1, MPI_INT, 0, TAG_PONG, MPI_COMM_WORLD, &r);
	MPI_Request_free(&r);
	MPI_Irecv(&st->q, 1, MPI_INT, 0, TAG_PING, MPI_COMM_WORLD, &st->ping);
}

/* Sleep before the next poll of a wait: *ns, then twice that, up to cap
 * nanoseconds.  A poll is Open MPI's progress over every transport: 1 ms
 * apart, a long wait took 4% of a core here, 10 ms apart 1%. */
static void
nap(long *ns, long cap)
{
	struct timespec ts = { 0, *ns };

	nanosleep(&ts, NULL);
	*ns = *ns < cap / 2 ? 2 * *ns : cap;
}

/* Rank 0, its wait for what past the limit: ask the other ranks, and say
 * in e which do not answer within ANSWER_S seconds. */
static void
silent(struct dist *d, const char *what, double limit, struct err *e)
{
	struct dist_state *st = d->st;
	MPI_Request *rq = malloc(sizeof *rq * d->size);
	int *got = calloc((size_t)d->size, sizeof *got), quiet = 0;
	size_t len;
	long ns = 20000;

	err_set(e, "%s: nothing for %.0f s", what, limit);
	len = strlen(e->msg);
	if (rq == NULL || got == NULL)
		goto done;
	for (int k = 1; k < d->size; k++) {
		MPI_Request q;
		MPI_Irecv(&got[k], 1, MPI_INT, k, TAG_PONG, MPI_COMM_WORLD, &rq[k]);
		MPI_Isend(&st->q, 1, MPI_INT, k, TAG_PING, MPI_COMM_WORLD, &q);
		MPI_Request_free(&q);
	}
	for (double t0 = MPI_Wtime(); MPI_Wtime() - t0 < ANSWER_S; nap(&ns, 1000000)) {
		int all = 1;
		for (int k = 1; k < d->size; k++) {
			if (rq[k] != MPI_REQUEST_NULL)
				MPI_Test(&rq[k], &got[k], MPI_STATUS_IGNORE);
			all &= rq[k] == MPI_REQUEST_NULL;
		}
		if (all)
			break;
	}
	for (int k = 1; k < d->size && len < sizeof e->msg; k++)
		if (rq[k] != MPI_REQUEST_NULL)
			len += (size_t)snprintf(e->msg + len, sizeof e->msg - len, "%s rank %d "
			    "(host %s)", quiet++ ? "," : "; no answer from", k,
			    st->host[k]);
	if (len < sizeof e->msg)
		snprintf(e->msg + len, sizeof e->msg - len, quiet ? ": a host or its link lost?" :
		    ", though every rank answers");
done:
	free(rq);
	free(got);
}

/* Wait for the n requests req, polling them (MPI_Waitall would spin on
 * a core that another rank or the stream's producer may need), answering
 * rank 0's question meanwhile.  With limit > 0, after limit seconds on
 * rank 0, or on the others twice as many and the time to answer (so that
 * rank 0, if it can, speaks first): -1 with e.  what names the wait for
 * messages.  With a limit, polls without sleeping for SPIN_S, then 1 ms
 * apart at most; without (a wait for rank 0's stream, which may last),
 * 10 ms apart at most. */
static int
await(struct dist *d, int n, MPI_Request *req, double limit, const char *what,
    struct err *e)
{
	double t0 = MPI_Wtime(),
	    end = d->rank == 0 ? limit : 2 * limit + ANSWER_S;
	long ns = 20000;
	int done;

	for (;;) {
		MPI_Testall(n, req, &done, MPI_STATUSES_IGNORE);
		if (done)
			return 0;
		if (d->rank != 0)
			answer(d->st);
		double t = MPI_Wtime() - t0;
		if (limit > 0 && t > end)
			break;
		if (limit > 0 && t < SPIN_S)
			sched_yield();
		else
			nap(&ns, limit > 0 ? 1000000 : 10000000);
	}
	if (d->rank == 0)
		silent(d, what, limit, e);
	else
		err_set(e, "rank %d (host %s): %s: nothing for %.0f s; no "
		    "word from rank 0 (host %s) either: a host or its link lost?",
		    d->rank, d->st->host[d->rank], what, end, d->st->host[0]);
	return -1;
}

/* MPI_Bcast from rank 0, waited for without spinning. */
static void
bcast(struct dist *d, void *buf, int count, MPI_Datatype type)
{
	MPI_Request r;

	MPI_Ibcast(buf, count, type, 0, MPI_COMM_WORLD, &r);
	await(d, 1, &r, 0, NULL, NULL);
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
		bcast(d, &stream, 1, MPI_INT);
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
			err_set(&s->err, "%s: out of memory", name);
			vt_free(&h);
			return -1;
		}
		vt_free(&h);
	}
	int64_t n = (int64_t)len;
	bcast(d, &n, 1, MPI_INT64_T);
	if (d->rank != 0 && (buf = malloc((size_t)n)) == NULL) {
		err_set(&s->err, "%s: out of memory", name);
		return -1;
	}
	bcast(d, buf, (int)n, MPI_CHAR);
	if (d->rank != 0) {
		FILE *mem = fmemopen(buf, (size_t)n, "r");
		if (mem == NULL) {
			err_set(&s->err, "%s: out of memory", name);
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
		err_set(&s->err, "%s: out of memory for %d records "
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
			err_set(&br->s->err, "%s: a batch of %d "
			    "records of %d tokens is more than one MPI message holds",
			    br->s->name, m, b->T);
			return -1;
		}
		h[0] = m, h[1] = b->T, h[2] = b->first;
	}
	if (st->root_reads) {
		double t = MPI_Wtime();
		bcast(d, h, 3, MPI_INT64_T);
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
		bcast(d, b->x, (int)(nx * b->P), MPI_FLOAT);
		bcast(d, b->pos, (int)(nx * b->A), MPI_FLOAT);
		bcast(d, b->label, b->n, MPI_INT32_T);
		d->comm += MPI_Wtime() - t;
	}
	return d->m;
}

int
dist_scatter(struct dist *d, struct batch *b, float *target, int C,
    struct err *e)
{
	struct dist_state *st = d->st;
	int nreq = 0;

	if (!st->root_reads || st->bcast || d->m == 0 || (d->rank != 0 && d->n == 0))
		return 0;
	if (st->sreq == NULL &&
	    (st->sreq = malloc(sizeof *st->sreq * 4 * d->size)) == NULL) {
		err_set(e, "out of memory");
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
	/* the others wait as long as rank 0 reads */
	int rc = await(d, nreq, req, d->rank == 0 ? d->timeout : 0,
	    "sending the records", e);
	d->comm += MPI_Wtime() - t;
	return rc;
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

/* f rounded to bf16 (to nearest even), its 16 bits. */
static uint16_t
to_bf16(float f)
{
	float r = gemm_bf16_round(f);
	uint32_t u;

	memcpy(&u, &r, sizeof u);
	return (uint16_t)(u >> 16);
}

static float
from_bf16(uint16_t h)
{
	uint32_t u = (uint32_t)h << 16;
	float f;

	memcpy(&f, &u, sizeof f);
	return f;
}

/* The MPI_Op of the bf16 sums: inout = in + inout, rounded to bf16 at
 * each addition, as a bf16 allreduce on the wire does at each hop. */
static void
bf16_add(void *in, void *inout, int *len, MPI_Datatype *type)
{
	const uint16_t *a = in;
	uint16_t *b = inout;

	for (int i = 0; i < *len; i++)
		b[i] = to_bf16(from_bf16(a[i]) + from_bf16(b[i]));
}

/* The buffers the sums of n parameters go out of and come back into:
 * fp32 (the gradient itself takes the sums), or bf16.  0 or -1. */
static int
wire(struct dist *d, size_t n)
{
	struct dist_state *st = d->st;

	if (!d->bf16) {
		st->send = aligned_alloc(64, (n * sizeof(float) + 63) & ~(size_t)63);
		return st->send != NULL ? 0 : -1;
	}
	st->wire = malloc(n * sizeof *st->wire);
	st->sum = malloc(n * sizeof *st->sum);
	if (st->wire == NULL || st->sum == NULL)
		return -1;
	MPI_Op_create(bf16_add, 1, &st->bf16_sum);
	return 0;
}

/* The buckets of m, once: one per block, from the block's first tensor
 * on, the last block's with the final norm and the head after it, which
 * vit_backward completes first; the tensors before the blocks (the patch
 * embedding, CLS and position table, complete last) one more, and the
 * rest (pe.params, complete at vit_grad_complete) another.  0, or -1 (no
 * memory, or a bucket too large for one MPI call). */
static int
buckets(struct dist *d, const struct vit *m)
{
	struct dist_state *st = d->st;
	int depth = m->c.depth, nb = depth + 2, t, last = -1;

	if (st->nbucket > 0)
		return 0;
	st->off = calloc((size_t)nb + 1, sizeof *st->off);
	st->posted = calloc((size_t)nb, 1);
	st->req = malloc(sizeof *st->req * (nb + 1));	/* and the loss's */
	if (st->off == NULL || st->posted == NULL || st->req == NULL ||
	    wire(d, m->nparam) < 0)
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
	for (int k = 0; k <= nb; k++) {
		st->req[k] = MPI_REQUEST_NULL;
		if (k == nb)
			break;
		if (icount((int64_t)(st->off[k + 1] - st->off[k])) < 0)
			return -1;
	}
	st->nbucket = nb;
	return 0;
}

/* MPI_Iallreduce into req[k], which the mover may be testing. */
static void
start(struct dist_state *st, int k, const void *send, void *recv, size_t n,
    MPI_Datatype type, MPI_Op op)
{
	if (st->mover)
		pthread_mutex_lock(&st->lock);
	MPI_Iallreduce(send, recv, (int)n, type, op, MPI_COMM_WORLD, &st->req[k]);
	if (st->mover)
		pthread_mutex_unlock(&st->lock);
}

/* Start summing bucket k: its gradient, scaled, into send, the sum back
 * into the gradient; or, in bf16, into wire, the sum into sum. */
static void
post(struct dist *d, int k)
{
	struct dist_state *st = d->st;
	size_t lo = st->off[k], n = st->off[k + 1] - lo;
	const float *g = st->m->grad + lo;
	float f = st->scale;

	if (st->posted[k])
		return;
	st->posted[k] = 1;
	if (st->t_first == 0)
		st->t_first = MPI_Wtime();
	if (d->bf16) {
		uint16_t *w = st->wire + lo;
		#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < n; i++)
			w[i] = to_bf16(f * g[i]);
		start(st, k, w, st->sum + lo, n, MPI_UINT16_T, st->bf16_sum);
		return;
	}
	float *s = st->send + lo;
	#pragma omp parallel for schedule(static)
	for (size_t i = 0; i < n; i++)
		s[i] = f * g[i];
	start(st, k, s, st->m->grad + lo, n, MPI_FLOAT, MPI_SUM);
}

/* vit_backward's grad_ready: block l's gradient is complete. */
static void
block_ready(void *arg, int l)
{
	struct dist *d = arg;
	struct dist_state *st = d->st;
	int done;
	double t = MPI_Wtime();

	post(d, 1 + l);
	if (st->mover)
		moving(st, 1);
	else
		MPI_Testall(st->nbucket, st->req, &done, MPI_STATUSES_IGNORE);
	d->comm += MPI_Wtime() - t;
}

void
dist_arm(struct dist *d, struct vit *m, float scale)
{
	struct dist_state *st = d->st;

	if (d->size == 1 || buckets(d, m) < 0)
		return;		/* dist_reduce sends it all, or fails */
	st->m = m;
	st->scale = scale;
	st->armed = 1;
	m->grad_ready = block_ready;
	m->grad_arg = d;
}

int
dist_reduce(struct dist *d, struct vit *m, float scale, double *lsum,
    struct err *e)
{
	struct dist_state *st = d->st;

	if (d->size == 1) {
		if (scale != 1)
			vit_scale_grad(m, scale);
		if (d->bf16)	/* what the wire would carry */
			for (size_t i = 0; i < m->nparam; i++)
				m->grad[i] = gemm_bf16_round(m->grad[i]);
		return 0;
	}
	if (buckets(d, m) < 0) {
		err_set(e, "out of memory for the gradient's buckets");
		return -1;
	}
	double t = MPI_Wtime();
	moving(st, 0);		/* the wait below tests them */
	if (!st->armed) {
		st->m = m;
		st->scale = scale;
	}
	/* in the order of the backward: nonblocking collectives, too, must
	 * be called in one order on every rank */
	for (int k = st->nbucket - 2; k >= 0; k--)
		post(d, k);
	post(d, st->nbucket - 1);
	MPI_Iallreduce(MPI_IN_PLACE, lsum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD,
	    &st->req[st->nbucket]);
	int rc = await(d, st->nbucket + 1, st->req, d->timeout,
	    "the gradient sums", e);
	double now = MPI_Wtime();
	d->comm += now - t;
	d->exposed = now - t;
	d->sums = now - st->t_first;
	st->t_first = 0;
	memset(st->posted, 0, (size_t)st->nbucket);
	st->armed = 0;
	m->grad_ready = NULL;
	if (rc == 0 && d->bf16) {
		const uint16_t *h = st->sum;
		float *g = m->grad;
		#pragma omp parallel for schedule(static)
		for (size_t i = 0; i < m->nparam; i++)
			g[i] = from_bf16(h[i]);
	}
	return rc;
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
dist_same(struct dist *d, const struct vit *m, struct err *e)
{
	uint64_t h = 0xcbf29ce484222325ULL, v[2];

	if (d->size == 1)
		return 0;
	h = hash_words(h, m->param, m->nparam);
	h = hash_words(h, m->adam_m, m->nparam);
	h = hash_words(h, m->adam_v, m->nparam);
	v[0] = h, v[1] = ~h;	/* the largest and, negated, the smallest */
	double t = MPI_Wtime();
	MPI_Request r;
	MPI_Iallreduce(MPI_IN_PLACE, v, 2, MPI_UINT64_T, MPI_MAX, MPI_COMM_WORLD, &r);
	int rc = await(d, 1, &r, d->timeout, "comparing the ranks' parameters",
	    e);
	d->comm += MPI_Wtime() - t;
	if (rc < 0)
		return -1;
	if (v[0] == ~v[1])
		return 0;
	err_set(e, "the ranks' parameters differ: another build, seed "
	    "or --generators file on some host?");
	return -1;
}
