/*
 * gemm_plan.c - the planner of fp32 products, as FFTW's: the first product
 * of a shape (its kind, transposes, M, N, K) is timed by each backend on
 * its own operands and the faster computes every product of that shape
 * after.  A batch (gemm_batch: attention's products of a chunk of
 * records) is timed whole, one oneDNN call against OpenBLAS pair by pair;
 * its shape is each product's.  Which library is faster depends on the
 * shape, the CPU and the libraries' own settings (OPENBLAS_CORETYPE can
 * hold OpenBLAS to 256-bit kernels on a CPU with 512-bit ones), which no
 * rule by CPU flags sees.
 *
 * The two libraries round differently, so a choice decides a product's
 * last bits: to keep same seed, same bytes, every choice is written to the
 * plan file as it is made and read from it by every later process, which
 * then measures nothing it finds there.  Processes that share the file
 * take turns at it (flock) and read what the others appended before they
 * measure, so they agree on every shape.  The file is lines of text,
 * appended whole by one write each, "#" lines comments:
 *
 *	KIND TRANSA TRANSB M N K BACKEND	e.g.  rows T N 96 192 64 openblas
 *
 * The shape leaves out the thread count: a plan made on one thread gives
 * the same products on any (gemm_rows's blocks have the same shapes on
 * any count), so a model's bytes stay the same.
 *
 * A lookup (every product) reads the table without a lock: a slot is
 * written once, its key before its backend, which is stored last with
 * release and read first with acquire.
 */
#include <sys/file.h>
#include <sys/stat.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <cblas.h>
#include <oneapi/dnnl/dnnl.h>

#include "clock.h"
#include "gemm_fail.h"
#include "gemm_plan.h"
#include "hash.h"

#define SLOTS	(1 << 14)	/* a power of two; shapes past SLOTS / 2 take the rule */
#define MAXFILE	(1 << 20)	/* a plan file larger than this is refused */
#define LINEMAX	128

struct slot {
	int	 kind, transa, transb, M, N, K;
	int	 backend;	/* GEMM_AUTO while empty; written last */
};

static struct slot table[SLOTS];
static int used;
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static int fd = -1;		/* the plan file, or -1: this process only */
static char path[4096];
static off_t readto;		/* how far the file has been read */
static struct err failure;	/* the first failure to keep the file */

static const char *const kinds[] = { "one", "rows", "chunks", "batch" };
#define NKIND	((int)(sizeof kinds / sizeof *kinds))

static unsigned
hash(int kind, int ta, int tb, int M, int N, int K)
{
	int v[6] = { kind, ta, tb, M, N, K };
	uint64_t h = fnv1a(FNV1A_INIT, v, sizeof v);

	return (unsigned)(h ^ h >> 32);
}

/* The slot of the shape, or the empty slot where it would go. */
static struct slot *
find(int kind, int ta, int tb, int M, int N, int K)
{
	for (unsigned i = hash(kind, ta, tb, M, N, K);; i++) {
		struct slot *s = &table[i & (SLOTS - 1)];
		if (__atomic_load_n(&s->backend, __ATOMIC_ACQUIRE) == GEMM_AUTO ||
		    (s->kind == kind && s->transa == ta && s->transb == tb &&
		    s->M == M && s->N == N && s->K == K))
			return s;
	}
}

/* Keep a choice (under lock); returns the backend the shape has now. */
static int
keep(int kind, int ta, int tb, int M, int N, int K, int b)
{
	struct slot *s = find(kind, ta, tb, M, N, K);
	int had = __atomic_load_n(&s->backend, __ATOMIC_ACQUIRE);

	if (had != GEMM_AUTO)
		return had;
	if (used >= SLOTS / 2)
		return GEMM_AUTO;
	s->kind = kind, s->transa = ta, s->transb = tb, s->M = M, s->N = N, s->K = K;
	__atomic_store_n(&s->backend, b, __ATOMIC_RELEASE);
	used++;
	return b;
}

/* One line of the file into the table; -1 if it is not one. */
static int
parse_line(char *line)
{
	char k[16], a[4], b[4], be[16], extra;
	int kind = -1, M, N, K, backend;

	if (line[0] == '#' || line[0] == '\0')
		return 0;
	if (sscanf(line, "%15s %3s %3s %d %d %d %15s %c", k, a, b, &M, &N, &K, be,
	    &extra) != 7)
		return -1;
	for (int i = 0; i < NKIND; i++)
		if (strcmp(k, kinds[i]) == 0)
			kind = i;
	backend = gemm_backend_parse(be);
	if (kind < 0 || backend <= GEMM_AUTO || (strcmp(a, "N") && strcmp(a, "T")) ||
	    (strcmp(b, "N") && strcmp(b, "T")) || M < 1 || N < 1 || K < 1)
		return -1;
	keep(kind, a[0] == 'T', b[0] == 'T', M, N, K, backend);
	return 0;
}

/*
 * Read the file's lines from readto on (under the file's lock).  An
 * unfinished last line (a writer stopped within its one write: a full
 * disk) is left unread, and cut off when we hold the lock alone, so the
 * next line appended starts a line of its own.
 */
static int
read_plan(int exclusive, struct err *e)
{
	static char buf[MAXFILE + 1];
	struct stat st;

	if (fstat(fd, &st) != 0)
		return err_set(e, "%s: %s", path, strerror(errno));
	if (st.st_size > MAXFILE)
		return err_set(e, "%s: %lld bytes: not a plan (at most %d)", path,
		    (long long)st.st_size, MAXFILE);
	if (st.st_size <= readto)
		return 0;
	size_t n = 0, want = (size_t)(st.st_size - readto);
	while (n < want) {
		ssize_t r = pread(fd, buf + n, want - n, readto + (off_t)n);
		if (r < 0 && errno == EINTR)
			continue;
		if (r < 0)
			return err_set(e, "%s: %s", path, strerror(errno));
		if (r == 0)
			break;
		n += (size_t)r;
	}
	/* the lines already read, for the line numbers of messages */
	for (char *p = buf, *end = buf + n, *nl; p < end; p = nl + 1) {
		if ((nl = memchr(p, '\n', (size_t)(end - p))) == NULL) {
			if (exclusive && ftruncate(fd, readto + (p - buf)) != 0)
				return err_set(e, "%s: %s", path, strerror(errno));
			n = (size_t)(p - buf);
			break;
		}
		*nl = '\0';
		if ((*p != '#' && nl - p >= LINEMAX) || parse_line(p) < 0)
			return err_set(e, "%s: byte %lld: '%.60s' is not a line of a "
			    "plan (KIND TRANSA TRANSB M N K BACKEND); remove the file "
			    "to plan anew", path, (long long)(readto + (p - buf)), p);
	}
	readto += (off_t)n;
	return 0;
}

/* What the choices depend on: the CPU, the kernels OpenBLAS runs
 * (OPENBLAS_CORETYPE changes them) and the instructions oneDNN may use;
 * and the kinds a file may hold, so that a build that knows fewer never
 * meets a line it cannot read in its default file. */
static void
identity(char *buf, size_t size)
{
	char line[256], cpu[128] = "unknown CPU";
	FILE *f = fopen("/proc/cpuinfo", "r");

	while (f != NULL && fgets(line, sizeof line, f) != NULL)
		if (strncmp(line, "model name", 10) == 0 && strchr(line, ':')) {
			snprintf(cpu, sizeof cpu, "%s", strchr(line, ':') + 2);
			cpu[strcspn(cpu, "\n")] = '\0';
			break;
		}
	if (f != NULL)
		fclose(f);
	int n = snprintf(buf, size, "%s; OpenBLAS %s, %s; oneDNN ISA mask %#x; "
	    "kinds", cpu, openblas_get_corename(), openblas_get_config(),
	    (unsigned)dnnl_get_effective_cpu_isa());
	for (int i = 0; i < NKIND && n > 0 && (size_t)n < size; i++)
		n += snprintf(buf + n, size - n, " %s", kinds[i]);
}

void
gemm_plan_name(char *buf, size_t size)
{
	char id[512];

	identity(id, sizeof id);
	snprintf(buf, size, "plan-%016llx",
	    (unsigned long long)fnv1a(FNV1A_INIT, id, strlen(id)));
}

int
gemm_plan_open(const char *file, struct err *e)
{
	if (snprintf(path, sizeof path, "%s", file) >= (int)sizeof path)
		return err_set(e, "%.60s...: path too long", file);
	if ((fd = open(file, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644)) < 0)
		return err_set(e, "%s: %s", file, strerror(errno));
	if (flock(fd, LOCK_SH) != 0 || read_plan(0, e) < 0) {
		if (*e->msg == '\0')
			err_set(e, "%s: %s", file, strerror(errno));
		close(fd);
		fd = -1;
		return -1;
	}
	flock(fd, LOCK_UN);
	return 0;
}

/* A new file's first line: where its choices were made. */
static void
header(void)
{
	char id[512], line[600];
	int n;

	identity(id, sizeof id);
	n = snprintf(line, sizeof line, "# vitpipe plan, made on: %s\n", id);
	if (n < (int)sizeof line && write(fd, line, (size_t)n) == n)
		readto += n;
}

int
gemm_plan_failed(struct err *e)
{
	if (*failure.msg == '\0')
		return 0;
	*e = failure;
	return -1;
}

/* c by backend b into C. */
static void
call_by(int b, const struct gemm_call *c, float *C)
{
	if (c->batch != NULL)
		gemm_batch_by(b, c->batch, c->A, c->B, C);
	else
		gemm_product_by(b, c->transa, c->transb, c->M, c->N, c->K,
		    c->alpha, c->A, c->lda, c->B, c->ldb, c->beta, C, c->ldc);
}

/* Seconds a call of backend b takes on these operands (C: a scratch). */
static double
time_of(int b, const struct gemm_call *c, float *C)
{
	double best = 1e30;
	int reps = 1;

	call_by(b, c, C);	/* warm */
	/* batches of at least 100 us, the best of three */
	for (int round = 0; round < 3; round++) {
		double t0 = now_seconds(), t;
		for (int r = 0; r < reps; r++)
			call_by(b, c, C);
		t = (now_seconds() - t0) / reps;
		best = t < best ? t : best;
		if (t * reps < 1e-4 && reps < 1 << 16) {
			reps *= 2;
			round--;
		}
	}
	return best;
}

/* The faster backend for c, timed on a copy of its result, of those that
 * can compute it (the rule's if there is no memory for the copy, or
 * neither can). */
static int
measure(const struct gemm_call *c, int rule)
{
	const struct gemm_batch *g = c->batch;
	/* a batch's results: from its first to the end of its last */
	size_t last = g ? (g->n0 - 1) * g->sc[0] + (g->n1 - 1) * g->sc[1] : 0;
	size_t n = last + (size_t)(c->M - 1) * c->ldc + c->N;
	float *C = malloc(sizeof(float) * n);
	double t[3];

	if (C == NULL)
		return rule;
	for (int b = GEMM_OPENBLAS; b <= GEMM_ONEDNN; b++) {
		memcpy(C, c->C, sizeof(float) * n);
		product_trial_begin();
		t[b] = time_of(b, c, C);
		if (product_trial_end() < 0)
			t[b] = INFINITY;	/* it cannot compute c */
	}
	free(C);
	return t[GEMM_OPENBLAS] < t[GEMM_ONEDNN] ? GEMM_OPENBLAS :
	    t[GEMM_ONEDNN] < t[GEMM_OPENBLAS] ? GEMM_ONEDNN : rule;
}

/* Append the choice to the file (under its lock); on failure the process
 * goes on with its choices and says why at gemm_plan_failed. */
static void
append(const struct gemm_call *c, int b)
{
	char line[LINEMAX];
	int n = snprintf(line, sizeof line, "%s %c %c %d %d %d %s\n", kinds[c->kind],
	    c->transa ? 'T' : 'N', c->transb ? 'T' : 'N', c->M, c->N, c->K,
	    gemm_backend_name(b));

	if (write(fd, line, (size_t)n) == n)
		readto += n;
	else if (*failure.msg == '\0')
		err_set(&failure, "%s: %s", path, errno ? strerror(errno) : "short write");
}

int
gemm_plan_backend(const struct gemm_call *c, int rule)
{
	struct slot *s;
	int b;

	if (fd < 0)
		return rule;
	s = find(c->kind, c->transa, c->transb, c->M, c->N, c->K);
	if ((b = __atomic_load_n(&s->backend, __ATOMIC_ACQUIRE)) != GEMM_AUTO)
		return b;
	/* the first product of a shape: what follows is off the hot path */
	struct err e = { "" };
	pthread_mutex_lock(&lock);
	while (flock(fd, LOCK_EX) != 0 && errno == EINTR)
		;
	if (read_plan(1, &e) < 0 && *failure.msg == '\0')
		failure = e;
	if (readto == 0)
		header();
	s = find(c->kind, c->transa, c->transb, c->M, c->N, c->K);
	if ((b = __atomic_load_n(&s->backend, __ATOMIC_ACQUIRE)) == GEMM_AUTO &&
	    used < SLOTS / 2) {
		b = measure(c, rule);
		keep(c->kind, c->transa, c->transb, c->M, c->N, c->K, b);
		append(c, b);
	}
	flock(fd, LOCK_UN);
	pthread_mutex_unlock(&lock);
	return b != GEMM_AUTO ? b : rule;
}
