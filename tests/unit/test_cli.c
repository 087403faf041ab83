/*
 * test_cli.c - cli_init sets up the libraries' environment: run with
 * OMP_WAIT_POLICY unset, it re-execs itself with OMP_WAIT_POLICY=passive
 * and GOMP_SPINCOUNT=30000, and leaves OpenBLAS's kernels to OpenBLAS; a
 * value the user set is kept.  VITPIPE_GEMM forces a matrix backend.  The
 * thread count follows OMP_NUM_THREADS unless given.  Also the number
 * parsers, and cli_help's line breaks.
 */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cblas.h>
#include <omp.h>

#include "cli.h"
#include "cliopt.h"
#include "nn.h"
#include "test.h"

/* cli_help breaks a help line longer than the screen (a list made at run
 * time) at spaces: no line past column 79, every continuation at the help
 * column, no word lost or split; a '\n' of its own still starts a line. */
static void
help_wrap(void)
{
	static const char words[] = "none zeros abs sincos rope-axial rope-mixed "
	    "liere:B comrope-ap:B comrope-ld:B riemann mrope string rope-nd and "
	    "a few more words to make a third line of it";
	static const struct cli_opt opts[] = {
		{ "pe", 'p', "SPEC", words },
		{ "two", 't', NULL, "first\nsecond" },
		{ NULL, 0, NULL, NULL }
	};
	static const struct cli_cmd cmd = { "[options]", NULL, opts, NULL };
	char *buf, *p, *q, *joined, indent[32], want[64];
	size_t len, longest = 0, n;
	FILE *fp;

	if ((fp = open_memstream(&buf, &len)) == NULL)
		abort();
	cli_help(fp, &cmd);
	if (fclose(fp) != 0 || (joined = malloc(len + 1)) == NULL)
		abort();
	if ((p = strstr(buf, "first")) == NULL) {
		CHECK(0, "--help shows every option's help");
		return;
	}
	for (q = p; q > buf && q[-1] != '\n'; q--)
		;
	snprintf(indent, sizeof indent, "\n%*s", (int)(p - q), "");	/* the help column */
	n = strlen(indent);
	snprintf(want, sizeof want, "first%ssecond\n", indent);
	CHECK(strstr(buf, want) != NULL, "--help: a '\\n' of the help starts a line at its column");
	for (p = buf; (q = strchr(p, '\n')) != NULL; p = q + 1)
		longest = (size_t)(q - p) > longest ? (size_t)(q - p) : longest;
	CHECK(longest <= 79, "--help: no line past column 79 (longest %zu)", longest);
	for (p = buf, q = joined; *p; )	/* the continuations joined again */
		if (strncmp(p, indent, n) == 0)
			*q++ = ' ', p += n;
		else
			*q++ = *p++;
	*q = '\0';
	CHECK(strstr(joined, words) != NULL,
	    "--help: a long line broken at spaces, continued at the help column");
	free(joined);
	free(buf);
}

int
main(int argc, char *argv[])
{
	if (argc == 1) {	/* the parent: run the two children and report */
		int st;
		pid_t p;

		fflush(stdout);
		if ((p = fork()) == 0) {
			unsetenv("OPENBLAS_CORETYPE");
			unsetenv("OMP_WAIT_POLICY");
			unsetenv("GOMP_SPINCOUNT");
			unsetenv("OMP_NUM_THREADS");
			unsetenv("VITPIPE_GEMM");
			unsetenv("OPENBLAS_NUM_THREADS");
			execl("/proc/self/exe", argv[0], "default", (char *)NULL);
			_exit(99);
		}
		waitpid(p, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child with a clean environment");
		fflush(stdout);
		if ((p = fork()) == 0) {
			setenv("OMP_WAIT_POLICY", "active", 1);
			unsetenv("GOMP_SPINCOUNT");
			setenv("OPENBLAS_CORETYPE", "Haswell", 1);
			setenv("OMP_NUM_THREADS", "1", 1);
			setenv("VITPIPE_GEMM", "onednn", 1);
			setenv("OPENBLAS_NUM_THREADS", "3", 1);
			execl("/proc/self/exe", argv[0], "user", (char *)NULL);
			_exit(99);
		}
		waitpid(p, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "child with the user's settings");
		CHECK(cli_int("--n", "12", 0, 20) == 12, "cli_int");
		CHECK_CLOSE(cli_num("--x", "2.5e-1", 0, 1), 0.25, 1e-12, "cli_num");
		help_wrap();
		return test_done();
	}
	cli_init(argc, argv);
	if (strcmp(argv[1], "default") == 0) {
		CHECK(getenv("OMP_WAIT_POLICY") && strcmp(getenv("OMP_WAIT_POLICY"), "passive") == 0,
		    "OMP_WAIT_POLICY=passive after cli_init");
		CHECK(getenv("GOMP_SPINCOUNT") && strcmp(getenv("GOMP_SPINCOUNT"), "30000") == 0,
		    "GOMP_SPINCOUNT=30000 after cli_init");
		CHECK(getenv("OPENBLAS_NUM_THREADS") && strcmp(getenv("OPENBLAS_NUM_THREADS"), "1") == 0,
		    "OPENBLAS_NUM_THREADS=1 after cli_init: OpenBLAS loads with no threads to spin");
		CHECK(cli_threads(0) == omp_get_num_procs() && openblas_get_num_threads() == omp_get_num_procs(),
		    "--threads 0: every core, OpenBLAS's pool grown to them");
		CHECK(getenv("OPENBLAS_CORETYPE") == NULL,
		    "OpenBLAS picks its kernels itself (%s)", openblas_get_corename());
	} else {
		CHECK(strcmp(getenv("OMP_WAIT_POLICY"), "active") == 0, "the user's OMP_WAIT_POLICY kept");
		CHECK(getenv("GOMP_SPINCOUNT") == NULL, "a user's policy: no spin count of ours");
		CHECK(strcmp(getenv("OPENBLAS_NUM_THREADS"), "3") == 0, "the user's OPENBLAS_NUM_THREADS kept");
		CHECK(cli_threads(0) == 1 && openblas_get_num_threads() == 1,
		    "--threads 0 follows OMP_NUM_THREADS=1, OpenBLAS too");
		CHECK(cli_threads(2) == 2, "--threads 2 wins over OMP_NUM_THREADS");
		CHECK(strcmp(openblas_get_corename(), "Haswell") == 0,
		    "the user's OPENBLAS_CORETYPE kept (%s)", openblas_get_corename());
		CHECK(gemm_backend_of(GEMM_ONE) == GEMM_ONEDNN &&
		    gemm_backend_of(GEMM_ROWS) == GEMM_ONEDNN &&
		    gemm_backend_of(GEMM_CHUNKS) == GEMM_ONEDNN,
		    "VITPIPE_GEMM=onednn: every product by oneDNN");
	}
	return test_done();
}
