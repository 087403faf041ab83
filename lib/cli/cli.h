/*
 * cli.h - what every vitpipe command shares: messages, exit codes, input
 * and output conventions, progress lines, thread and BLAS set-up.
 *
 * Exit codes: 0 success, 1 error, 2 usage.  Messages go to stderr as
 * "prog: context: reason".
 */
#ifndef CLI_H
#define CLI_H

#include <stdio.h>
#include <stdint.h>

#include "clock.h"

#define EXIT_USAGE	2

extern const char *progname;

/* Record argv[0] as progname, make a closed pipe end the program quietly, and
 * re-exec once with OPENBLAS_CORETYPE (AVX-512 CPUs) and OMP_WAIT_POLICY=
 * passive set where the user has not set them, keeping the process's name
 * (ps, /proc/PID/comm); call first in main. */
void	 cli_init(int argc, char *argv[]);
/* Print "prog: fmt" and exit 1. */
void	 die(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Print "prog: fmt: strerror(errno)" and exit 1. */
void	 die_errno(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Print "prog: fmt" and "Try 'prog --help'." and exit 2. */
void	 usage_error(const char *fmt, ...) __attribute__((noreturn, format(printf, 1, 2)));
/* Print "prog: fmt" (a warning) and go on. */
void	 cli_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* Print "prog (vitpipe) VERSION" to stdout and exit 0. */
void	 cli_version(void) __attribute__((noreturn));

/* Open path for reading ("-" or NULL is stdin, refused when a terminal);
 * dies on failure, a directory included. */
FILE	*cli_open_in(const char *path, const char **name);
/* Die unless stdout may take binary data (not a terminal, unless force). */
void	 cli_binary_stdout(int force);
/* Flush fp and die on a write error (quiet exit 1 on a closed pipe). */
void	 cli_close_out(FILE *fp, const char *name);

/* Parse a whole decimal number in [lo, hi] for option opt, or usage_error. */
long long cli_int(const char *opt, const char *arg, long long lo, long long hi);
/* Parse a finite float in [lo, hi] for option opt, or usage_error. */
double	 cli_num(const char *opt, const char *arg, double lo, double hi);

/* The options commands share, parsed one way (usage_error on a bad one):
 * --pe SPEC copied into dst[n] (pe_parse checks it against the model);
 * --share, an enum pe_share; --pool, an enum vit_pool; --seed, 0 ..
 * INT64_MAX; --threads, 0 (all cores) .. 1024; --precision, fp32 or
 * bf16 (dies where bf16 cannot run: gemm_bf16_mode). */
void	 cli_opt_pe(const char *arg, char *dst, size_t n);
int	 cli_opt_share(const char *arg);
int	 cli_opt_pool(const char *arg);
uint64_t cli_opt_seed(const char *arg);
int	 cli_opt_threads(const char *arg);
int	 cli_opt_precision(const char *arg);	/* an enum gemm_prec (nn.h) */

/* Use n threads (0: OMP_NUM_THREADS, else the cores) for OpenMP and OpenBLAS;
 * returns n. */
int	 cli_threads(int n);

/* Progress line on stderr, drawn only when stderr is a terminal. */
struct progress {
	int	 tty;
	double	 t0, last;
	int64_t	 total;
};
void	 progress_start(struct progress *p, int64_t total);
/* Redraw "done/total msg ETA" at most 10 times a second. */
void	 progress_show(struct progress *p, int64_t done, const char *msg);
void	 progress_end(struct progress *p);

#endif
