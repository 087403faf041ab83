/* cli.c - messages, exit codes and I/O conventions shared by every command. */
#include <sys/prctl.h>
#include <sys/stat.h>

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include <cblas.h>
#include <omp.h>

#include "cli.h"
#include "fileio.h"
#include "parse.h"
#include "nn.h"
#include "pe.h"
#include "text.h"
#include "trainopt.h"
#include "vit.h"

const char *progname = "vitpipe";

/*
 * libgomp takes its wait policy from the environment when it loads, before
 * main: by default idle threads spin 300000 times (milliseconds), which in
 * a pipeline steals the cores from the other stages and from OpenBLAS.  We
 * take passive with a short spin first, 30000 pauses (0.4 ms here): the
 * engine's parallel loops follow one another within that, and a woken
 * thread costs more than the spin (a training step of the reference
 * config 3% faster than with no spin; waits on a pipe or on OpenBLAS are
 * longer and sleep).  The only way to change it from inside is to run
 * again with the variables set.  A user's own setting wins; when nothing
 * changes, nothing is re-run.  OpenBLAS picks its kernels itself: 0.3.21
 * gives every CPU with AVX512VL SkylakeX's sgemm (Cooperlake's, with
 * AVX512_BF16, is the same code).  VITPIPE_GEMM picks the matrix backend,
 * VITPIPE_BF16=emulate lets --precision bf16 run without bf16 kernels
 * (nn.h).
 */
static void
runtime_env(char *argv[])
{
	char exe[PATH_MAX];
	const char *gemm = getenv("VITPIPE_GEMM");
	const char *bf16 = getenv("VITPIPE_BF16");
	ssize_t n;
	int b;

	if (gemm != NULL) {
		if ((b = gemm_backend_parse(gemm)) == -1)
			die("VITPIPE_GEMM: '%s' is not auto, openblas or onednn",
			    gemm);
		gemm_force(b);
	}
	if (bf16 != NULL && *bf16 != '\0') {
		if (strcmp(bf16, "emulate") != 0)
			die("VITPIPE_BF16: '%s' is not emulate", bf16);
		gemm_bf16_emulate();
	}
	if (getenv("OMP_WAIT_POLICY") ||
	    setenv("OMP_WAIT_POLICY", "passive", 1) != 0)
		return;
	if (!getenv("GOMP_SPINCOUNT"))
		setenv("GOMP_SPINCOUNT", "30000", 1);
	/*
	 * OpenBLAS starts a thread per core when it loads, and they spin a
	 * while before --threads reaches them: in a pipeline of short
	 * commands that is most of their CPU time.  Start with one;
	 * cli_threads grows the pool to the count asked for.
	 */
	if (!getenv("OPENBLAS_NUM_THREADS"))
		setenv("OPENBLAS_NUM_THREADS", "1", 1);
	/*
	 * The kernel names a process (ps, top, pgrep -x, /proc/PID/comm) after
	 * the file it executes: by its real path we stay "vit-train", where
	 * /proc/self/exe would make every command "exe".  That link is the
	 * last resort, for a path readlink cannot give (longer than PATH_MAX,
	 * or the file replaced since); process_name then renames us.
	 */
	if ((n = readlink("/proc/self/exe", exe, sizeof exe)) > 0 &&
	    (size_t)n < sizeof exe) {
		exe[n] = '\0';
		execv(exe, argv);
	}
	execv("/proc/self/exe", argv);
	/* Still here: run on with the libraries' own choices. */
}

/* Say at exit that the plan file could not keep this process's choices:
 * a later run may then choose otherwise and differ in its last bits. */
static void
plan_warn(void)
{
	struct err e;

	if (gemm_plan_failed(&e) < 0)
		cli_warn("VITPIPE_PLAN: %s: this run's choices are not kept", e.msg);
}

/*
 * The plan of the fp32 products (nn.h): VITPIPE_PLAN names its file, "off"
 * plans nothing (each kind of product by the CPU's rule); by default the
 * file is this machine's in $XDG_CACHE_HOME/vitpipe (~/.cache/vitpipe),
 * and without a place for it nothing is planned either: a choice kept
 * nowhere would differ from run to run, and the bits of the models with
 * it.  A file named that cannot be used is an error.
 */
static void
plan_open(void)
{
	const char *v = getenv("VITPIPE_PLAN"), *base = getenv("XDG_CACHE_HOME");
	char dir[PATH_MAX], file[PATH_MAX], name[64];
	struct err e = { "" };

	if (v != NULL) {
		if (strcmp(v, "off") == 0)
			return;
		if (*v == '\0')
			die("VITPIPE_PLAN: empty: a file, or off");
		if (gemm_plan_open(v, &e) < 0)
			die("VITPIPE_PLAN: %s", e.msg);
	} else {
		if (base == NULL || *base != '/') {
			if ((base = getenv("HOME")) == NULL || *base != '/')
				return;
			if (snprintf(dir, sizeof dir, "%s/.cache", base) >= (int)sizeof dir)
				return;
			base = dir;
		}
		mkdir(base, 0700);
		gemm_plan_name(name, sizeof name);
		if (snprintf(file, sizeof file, "%s/vitpipe", base) >= (int)sizeof file)
			return;
		mkdir(file, 0755);
		if (snprintf(file, sizeof file, "%s/vitpipe/%s", base, name) >=
		    (int)sizeof file)
			return;
		if (gemm_plan_open(file, &e) < 0) {
			if (errno == EACCES || errno == EROFS || errno == ENOENT ||
			    errno == ENOTDIR)
				return;
			die("%s", e.msg);
		}
	}
	atexit(plan_warn);
}

/* After a re-exec through /proc/self/exe the kernel calls us "exe": take the
 * command's name back. */
static void
process_name(void)
{
	char comm[16] = "";

	if (prctl(PR_GET_NAME, comm) == 0 && strcmp(comm, "exe") == 0)
		prctl(PR_SET_NAME, progname);
}

void
cli_init(int argc, char *argv[])
{
	const char *p;

	if (argc > 0 && argv[0] && *argv[0])
		progname = (p = strrchr(argv[0], '/')) ? p + 1 : argv[0];
	/* A parent may have left SIGPIPE ignored; a closed pipe must end us quietly. */
	signal(SIGPIPE, SIG_DFL);
	runtime_env(argv);
	process_name();
	plan_open();
}

/* "prog: fmt[: tail]" as one whole line in one write: pipeline stages
 * that share a terminal never cut each other's lines.  Its control
 * characters escaped (text_put): messages quote names from the input. */
static void
vmsg(const char *fmt, va_list ap, const char *tail)
{
	char buf[1024], line[4 * sizeof buf + 1];
	int n = snprintf(buf, sizeof buf, "%s: ", progname);
	FILE *m = fmemopen(line, sizeof line, "w");
	long len;

	n += vsnprintf(buf + n, sizeof buf - n, fmt, ap);
	if (tail && n < (int)sizeof buf)
		n += snprintf(buf + n, sizeof buf - n, ": %s", tail);
	if (n > (int)sizeof buf - 1)
		n = (int)sizeof buf - 1;	/* cut, still one line */
	if (m != NULL) {
		text_put(m, buf, (size_t)n);
		len = ftell(m);
		fclose(m);
	} else	/* no FILE for it: the message as it is, rather than none */
		len = (long)strlen(memcpy(line, buf, (size_t)n + 1));
	line[len++] = '\n';
	fflush(stdout);
	(void)write_all(STDERR_FILENO, line, (size_t)len);
}


void
die(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap, NULL);
	va_end(ap);
	exit(1);
}

void
die_errno(const char *fmt, ...)
{
	const char *e = strerror(errno);
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap, e);
	va_end(ap);
	exit(1);
}

void
usage_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap, NULL);
	va_end(ap);
	fprintf(stderr, "Try '%s --help' for more information.\n", progname);
	exit(EXIT_USAGE);
}

void
cli_warn(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vmsg(fmt, ap, NULL);
	va_end(ap);
}

void
cli_version(void)
{
	printf("%s (vitpipe) %s\n", progname, VITPIPE_VERSION);
	cli_close_out(stdout, "stdout");
	exit(0);
}

FILE *
cli_open_in(const char *path, const char **name)
{
	struct err e;
	FILE *fp = open_in(path, name, &e);

	if (fp == NULL)
		die("%s", e.msg);
	return fp;
}

void
cli_binary_stdout(int force)
{
	if (!force && isatty(STDOUT_FILENO))
		die("stdout: refusing to write binary data to a terminal; redirect it or pipe it");
}

void
cli_close_out(FILE *fp, const char *name)
{
	if (fflush(fp) == EOF || ferror(fp)) {
		if (errno == EPIPE)
			exit(1);
		die_errno("%s: write error", name);
	}
}



long long
cli_int(const char *opt, const char *arg, long long lo, long long hi)
{
	struct err why;
	long long v;

	if (parse_int(arg, lo, hi, &v, &why) < 0)
		usage_error("%s: '%s' is %s", opt, arg, why.msg);
	return v;
}

double
cli_num(const char *opt, const char *arg, double lo, double hi)
{
	struct err why;
	double v;

	if (parse_num(arg, lo, hi, &v, &why) < 0)
		usage_error("%s: '%s' is %s", opt, arg, why.msg);
	return v;
}

void
cli_opt_pe(const char *arg, char *dst, size_t n)
{
	if (strlen(arg) >= n)
		usage_error("--pe: '%s' is too long", arg);
	strcpy(dst, arg);
}

int
cli_opt_share(const char *arg)
{
	int share = pe_share_parse(arg);

	if (share < 0)
		usage_error("--share: '%s' is not none, heads, layers or all", arg);
	return share;
}

int
cli_opt_pool(const char *arg)
{
	int pool = vit_pool_parse(arg);

	if (pool < 0)
		usage_error("--pool: '%s' is not cls or mean", arg);
	return pool;
}

uint64_t
cli_opt_seed(const char *arg)
{
	return (uint64_t)cli_int("--seed", arg, 0, INT64_MAX);
}

int
cli_opt_threads(const char *arg)
{
	return (int)cli_int("--threads", arg, 0, TRAIN_MAXTHREADS);
}


int
cli_opt_precision(const char *arg)
{
	int p = gemm_prec_parse(arg);

	if (p < 0)
		usage_error("--precision: '%s' is not fp32 or bf16", arg);
	if (p == GEMM_FP32)
		return GEMM_FP32;
	switch (gemm_bf16_mode()) {
	case GEMM_BF16_NONE:
		die("--precision bf16: this CPU has no native bf16 "
		    "(AVX512_BF16 or AMX); VITPIPE_BF16=emulate runs bf16's "
		    "numbers slowly");
	case GEMM_BF16_EMULATED:
		cli_warn("--precision bf16: emulated (VITPIPE_BF16=emulate): "
		    "bf16's numbers, slower than fp32");
		break;
	case GEMM_BF16_NATIVE:
		break;
	}
	return GEMM_BF16;
}

int
cli_threads(int n)
{
	if (n <= 0)		/* OMP_NUM_THREADS, else every core */
		n = omp_get_max_threads();
	omp_set_num_threads(n);
	openblas_set_num_threads(n);
	return n;
}


void
progress_start(struct progress *p, int64_t total)
{
	p->tty = isatty(STDERR_FILENO);
	p->t0 = now_seconds();
	p->last = 0;
	p->total = total;
}

void
progress_show(struct progress *p, int64_t done, const char *msg)
{
	double t = now_seconds(), el = t - p->t0;

	if (!p->tty || t - p->last < 0.1)
		return;
	p->last = t;
	fprintf(stderr, "\r%s: ", progname);
	if (p->total > 0) {
		double eta = done > 0 ? el * (p->total - done) / done : 0;
		fprintf(stderr, "%lld/%lld %3.0f%% %s ETA %d:%02d ", (long long)done,
		    (long long)p->total, 100.0 * done / p->total, msg ? msg : "",
		    (int)eta / 60, (int)eta % 60);
	} else
		fprintf(stderr, "%lld %s %d:%02d ", (long long)done, msg ? msg : "",
		    (int)el / 60, (int)el % 60);
	fputs("\033[K", stderr);
}

void
progress_end(struct progress *p)
{
	if (p->tty && p->last > 0)
		fputc('\n', stderr);
	p->last = 0;
}
