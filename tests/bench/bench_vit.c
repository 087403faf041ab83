/*
 * bench_vit.c - training throughput of the ViT engine on the reference
 * config of issue 4: 32x32x3 images, patch 4 (64 tokens + CLS, P = 48),
 * dim 192, depth 6, heads 3, mlp 768, 100 classes, batch 128; one step =
 * forward + backward + an AdamW update over the arena.  Prints images/s,
 * achieved GFLOP/s (matrix products counted by vit_flops, x3 for a
 * training step), the fraction of the peak of the model's own products
 * measured in the same run and precision (model_peak), and peak RSS.
 * --precision bf16 runs the products in bf16 (lib/nn/bf16.c; where the
 * CPU has no bf16, only under VITPIPE_BF16=emulate).
 *
 * Without --pe it runs every encoding of the bar, each in its own
 * process (so peak RSS is per encoding), and next to each the PyTorch
 * baseline tests/bench/vit_torch.py (under $TOP, default .) twice: with
 * its own threading and with vitpipe's; then the speed-ups over both.
 * With --precision bf16, vitpipe in fp32 too and PyTorch under bf16
 * autocast: the speed-ups of bf16 over vitpipe's fp32 and over PyTorch's
 * bf16.  With --eval, forward passes (inference) on both sides; with
 * --model vitb, ViT-B/16 at 224 x 224 on batches of 32 (abs and liere:8)
 * instead of config R.
 * The CPU may be shared: it prints the load average and the kernel's CPU
 * pressure so the figures can be judged, and besides the mean step the
 * best one (the least disturbed by other users), on which the speed-ups
 * and GFLOP/s are computed; everything runs --rounds times (default 3) in
 * turn, and the summary takes each one's best.
 *
 * With --pe SPEC, --accum N makes a step N micro-batches of 128 (as
 * vit-train --accum: rotations made and taken back once a step); the
 * figures are per micro-batch.  --per-record gives every record its own
 * positions (the grid perturbed as posgen --perturb 0.1): a rotation set
 * per record.  --eval times forward passes with targets (as vit-eval) of
 * the forward-only model vit-eval builds (vit_create_infer), and its peak
 * RSS.  Peak RSS is the model's and its steps': the high-water mark is
 * reset after the opening peak's products and read before the closing
 * ones, whose operands would otherwise count (54 MB).
 */
#include <cblas.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "adamw.h"
#include "cli.h"
#include "cliopt.h"
#include "median.h"
#include "pe.h"
#include "rng.h"
#include "vit.h"

/* The models: config R (issue 4), and ViT-B/16 at 224 x 224 on batches of
 * 32 (issue 22's inference bar: large products). */
static const struct model {
	const char *name;
	int	 dim, depth, heads, mlp, classes, P, grid, B;
} models[] = {
	{ "r", 192, 6, 3, 768, 100, 48, 8, 128 },
	{ "vitb", 768, 12, 12, 3072, 1000, 768, 14, 32 },
};

/* Seconds of CPU this process used (all threads): on a shared machine
 * B / (cpu seconds per step / threads) estimates the throughput the
 * threads would have with the cores to themselves. */
static double
cpu_seconds(void)
{
	struct rusage ru;
	getrusage(RUSAGE_SELF, &ru);
	return ru.ru_utime.tv_sec + ru.ru_stime.tv_sec +
	    (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

/* Start the kernel's high-water mark of resident memory (VmHWM) again from
 * what is resident now (Linux's clear_refs; where it cannot be reset the
 * mark stays the process's). */
static void
rss_reset(void)
{
	FILE *f = fopen("/proc/self/clear_refs", "w");

	if (f != NULL) {
		fputs("5", f);
		fclose(f);
	}
}

/* The high-water mark in MB (0 if /proc does not say). */
static double
rss_peak_mb(void)
{
	char line[128];
	double kb = 0;
	FILE *f = fopen("/proc/self/status", "r");

	if (f == NULL)
		return 0;
	while (fgets(line, sizeof line, f) != NULL)
		if (sscanf(line, "VmHWM: %lf", &kb) == 1)
			break;
	fclose(f);
	return kb / 1024;
}

/*
 * The denominator of the fraction of peak: GFLOP/s of the model's own
 * forward products (qkv, proj, fc1, fc2 over its batch's rows with CLS:
 * for R, 8320 x 576 x 192, x 192 x 192, x 768 x 192, x 192 x 768) in
 * precision p, as the engine computes them (gemm_chunks); the best of
 * 1.5 s of rounds of all four.
 */
static double
model_peak(const struct model *mo, enum gemm_prec p)
{
	int M = mo->B * (mo->grid * mo->grid + 1), D = mo->dim, H = mo->mlp;
	const int shape[4][2] = { { 3 * D, D }, { D, D }, { H, D },
	    { D, H } };	/* N, K */
	float *a = aligned_alloc(64, sizeof(float) * M * H);
	float *b = aligned_alloc(64, sizeof(float) * H * 3 * D);
	float *c = aligned_alloc(64, sizeof(float) * M * H);
	double flops = 0;
	for (size_t i = 0; i < (size_t)M * H; i++)
		a[i] = (float)(i % 7) * 1e-3f;
	for (size_t i = 0; i < (size_t)H * 3 * D; i++)
		b[i] = (float)(i % 5) * 1e-3f;
	for (int k = 0; k < 4; k++)
		flops += 2.0 * M * shape[k][0] * shape[k][1];
	double best = 0, t0 = now_seconds();
	while (now_seconds() - t0 < 1.5) {
		double t = now_seconds();
		for (int k = 0; k < 4; k++)
			gemm_chunks(p, 1, M, shape[k][0], shape[k][1], a,
			    shape[k][1], b, shape[k][1], NULL, c, shape[k][0],
			    gemm_chunk(p), NULL, NULL);
		best = fmax(best, flops / (now_seconds() - t) / 1e9);
	}
	free(a);
	free(b);
	free(c);
	return best;
}

/* Milliseconds per step spent in lib/pe/pe.h's rotations and their backward
 * for this model's shapes, bases included (0 for non-rotary encodings):
 * the part of a step the engine cannot make faster itself. */
static double
rotation_ms(const struct vit *m, const float *pos, int T)
{
	const struct vit_config *c = &m->c;
	const struct vit_tensor *t = vit_find_tensor(m, PE_FIELD);
	struct pe pe;
	struct pe_work w;
	if (t == NULL || pe_parse(&pe, c->pe, c->dim / c->heads, c->axes,
	    c->heads, c->depth, "none") == -1 || pe_work_init(&w, &pe, T) == -1)
		return 0;
	w.f32 = 1;	/* as the engine (vit_exact_rotations) */
	size_t nr = (size_t)pe.nset * T * pe.rsize;
	size_t nb = pe.basis ? (size_t)pe.nset * pe.head_dim * pe.head_dim : 1;
	float *R = malloc(sizeof(float) * nr), *dR = malloc(sizeof(float) * nr);
	float *P = malloc(sizeof(float) * nb), *dP = calloc(nb, sizeof(float));
	float *dp = calloc(pe.nparam, sizeof(float));
	for (size_t i = 0; i < nr; i++)
		dR[i] = 1e-3f * (float)(i % 13);
	double t0 = 0;
	for (int r = 0; r < 3; r++) {	/* the first touches R's pages: untimed */
		if (r == 1)
			t0 = now_seconds();
		pe_rotations(&pe, &w, m->param + t->off, T, pos, R);
		pe_rotations_backward(&pe, &w, m->param + t->off, T, pos, R, dR, dp);
		if (pe.basis) {
			pe_bases(&pe, &w, m->param + t->off, P);
			pe_bases_backward(&pe, &w, m->param + t->off, dP, dp);
		}
	}
	double ms = (now_seconds() - t0) / 2 * 1e3;
	pe_work_free(&w);
	free(R);
	free(dR);
	free(P);
	free(dP);
	free(dp);
	return ms;
}

/* Run cmd, echoing its output; the img/s of its first line starting with
 * tag, in *best that line's best-step img/s and in *cpu its cpu-time
 * img/s. */
static double
run_line(const char *cmd, const char *tag, double *best, double *cpu)
{
	char line[512];
	double ips = 0;
	FILE *p = popen(cmd, "r");
	*best = *cpu = 0;
	if (p == NULL)
		return 0;
	while (fgets(line, sizeof line, p) != NULL) {
		fputs(line, stdout);
		char pe[64];
		char *c = strstr(line, "cpu-time "), *bs = strstr(line, "best ");
		if (strncmp(line, tag, strlen(tag)) == 0 && ips == 0) {
			sscanf(line + strlen(tag), "%63s %lf", pe, &ips);
			*cpu = c ? atof(c + 9) : 0;
			*best = bs ? atof(bs + 5) : 0;
		}
	}
	fflush(stdout);
	pclose(p);
	return ips;
}

static void
show_load(void)
{
	double load[3];
	char line[128] = "";
	FILE *f = fopen("/proc/pressure/cpu", "r");
	if (f != NULL) {
		if (fgets(line, sizeof line, f) == NULL)
			line[0] = '\0';
		fclose(f);
	}
	getloadavg(load, 3);
	printf("# CPU shared with other users: load average %.2f %.2f %.2f, "
	    "pressure %s", load[0], load[1], load[2], line[0] ? line : "n/a\n");
	printf("# OMP_WAIT_POLICY=%s, GOMP_SPINCOUNT=%s, OpenBLAS's %s kernels, "
	    "VITPIPE_GEMM=%s, VITPIPE_PLAN=%s\n", getenv("OMP_WAIT_POLICY"),
	    getenv("GOMP_SPINCOUNT") ? getenv("GOMP_SPINCOUNT") : "(libgomp's)",
	    openblas_get_corename(), getenv("VITPIPE_GEMM") ?
	    getenv("VITPIPE_GEMM") : "(auto)", getenv("VITPIPE_PLAN") ?
	    getenv("VITPIPE_PLAN") : "(this machine's)");
}

/* PyTorch's threading: its own (libgomp's default wait, a long spin, as
 * in the reference figures) and vitpipe's (cli_init's passive
 * wait with a short spin, which bench_vit itself runs under). */
enum { NENV = 2 };
static const struct {
	const char *name, *prefix;
} torch_env[NENV] = {
	{ "PyTorch, its own threading", "env -u OMP_WAIT_POLICY -u GOMP_SPINCOUNT " },
	{ "PyTorch, vitpipe's threading", "" },
};

/* Every encoding of the bar, each with the PyTorch baseline beside it in
 * both environments (under bf16 autocast with bf16, and vitpipe's fp32
 * beside its bf16); all run rounds times over, the encodings in turn,
 * keeping each one's best figures (the CPU is shared: a single run of one
 * encoding can fall in a busy minute of the other user's and the ratios
 * with it), and beside them the median over the rounds of each round's
 * ratio of mean steps (runs of the same minute: issue 38's bars). */
static int
run_all(int steps, int threads, int torch, int rounds, enum gemm_prec prec,
    const struct model *mo, int eval)
{
	static const char *pes[] = { "abs", "liere:8", "liere:64", "rope-mixed",
	    "comrope-ld:8", "none", "rope-axial", "comrope-ap:8", "riemann" };
	/* the torch model knows the first 5; ViT-B's steps are long: 2 */
	int NPE = mo == models ? sizeof pes / sizeof pes[0] : 2, NTORCH = 5;
	enum { NPEMAX = sizeof pes / sizeof pes[0] };
	enum { FP32 = 1 + NENV, NRUN };	/* [0] ours, [1 + e] PyTorch, ours fp32 */
	const char *top = getenv("TOP") ? getenv("TOP") : ".";
	int bf16 = prec == GEMM_BF16;
	/* mean wall, best step, cpu of each run */
	double wall[NRUN][NPEMAX] = {{0}}, best[NRUN][NPEMAX] = {{0}};
	double cpu[NRUN][NPEMAX] = {{0}};
	/* each round's mean-step ratio of ours to PyTorch's, [e][i][round]
	 * (the bar's median of rounds); 0 where a run gave no figure */
	double *ratio = calloc((size_t)NENV * NPEMAX * rounds, sizeof *ratio);
	double w1 = 0;	/* ours, this round and encoding: run first */
	char cmd[1024];

	if (ratio == NULL)
		die("out of memory");
	show_load();
	for (int r = 0; r < rounds; r++)
		for (int i = 0; i < NPE; i++)
			for (int k = 0; k < NRUN; k++) {
				double w, b, c;
				if ((k == FP32 && !bf16) || (k > 0 && k < FP32 &&
				    !(torch && i < NTORCH)))
					continue;
				if (k == 0 || k == FP32)
					snprintf(cmd, sizeof cmd, "/proc/%d/exe --pe %s --steps %d "
					    "--threads %d --precision %s --model %s%s", (int)getpid(),
					    pes[i], steps, threads, k == 0 && bf16 ? "bf16" : "fp32",
					    mo->name, eval ? " --eval" : "");
				else
					snprintf(cmd, sizeof cmd, "%s/usr/bin/python3 %s/tests/bench/"
					    "vit_torch.py --pe %s --threads %d --model %s%s%s",
					    torch_env[k - 1].prefix, top, pes[i], threads, mo->name,
					    bf16 ? " --autocast" : "", eval ? " --eval" : "");
				w = run_line(cmd, k > 0 && k < FP32 ? "torch " : eval ?
				    "eval " : "vit ", &b, &c);
				if (k > 0 && k < FP32 && w > 0)
					ratio[((k - 1) * NPEMAX + i) * rounds + r] =
					    w1 / w;
				if (k == 0)
					w1 = w;
				wall[k][i] = fmax(wall[k][i], w);
				best[k][i] = fmax(best[k][i], b);
				cpu[k][i] = fmax(cpu[k][i], c);
			}
	show_load();
	printf("# the best of %d rounds for each figure\n", rounds);
	for (int e = 0; e < NENV; e++)
		for (int i = 0; i < NPE; i++)
			if (best[1 + e][i] > 0)
				printf("speed-up %-14s %.2fx %s%s at the best step, %.2fx "
				    "mean wall, %.2fx cpu-time; mean wall round by round "
				    "%.2fx (median)\n", pes[i],
				    best[0][i] / best[1 + e][i], torch_env[e].name,
				    bf16 ? " (both bf16)" : "", wall[0][i] / wall[1 + e][i],
				    cpu[0][i] / cpu[1 + e][i],
				    median(ratio + (e * NPEMAX + i) * rounds,
				    rounds));
	for (int i = 0; i < NPE && bf16; i++)
		printf("speed-up %-14s %.2fx bf16 over vitpipe's fp32 at the best "
		    "step, %.2fx mean wall, %.2fx cpu-time\n", pes[i],
		    best[0][i] / best[FP32][i], wall[0][i] / wall[FP32][i],
		    cpu[0][i] / cpu[FP32][i]);
	if (wall[0][2] > 0)
		printf("liere:64 / abs throughput: %.2f at the best step, %.2f mean "
		    "wall, %.2f cpu-time\n", best[0][2] / best[0][0],
		    wall[0][2] / wall[0][0], cpu[0][2] / cpu[0][0]);
	free(ratio);
	return 0;
}

int
main(int argc, char *argv[])
{
	enum { OPT_PE = CLI_OPT_LONG, OPT_STEPS, OPT_THREADS, OPT_PEAK,
	    OPT_NO_TORCH, OPT_ROUNDS, OPT_ACCUM, OPT_PER_RECORD, OPT_EVAL,
	    OPT_PRECISION, OPT_MODEL };
	static const struct cli_opt opts[] = {
		{ "pe", OPT_PE, "SPEC", "one encoding, in this process (without: "
		    "every encoding\nof the bar, each beside PyTorch)" },
		{ "steps", OPT_STEPS, "N", "timed steps (5)" },
		{ "threads", OPT_THREADS, "N", "threads (2)" },
		{ "peak", OPT_PEAK, NULL, "only the peak of the model's "
		    "products" },
		{ "precision", OPT_PRECISION, "fp32|bf16", "the products' "
		    "precision (fp32)" },
		{ "model", OPT_MODEL, "r|vitb", "config R, or ViT-B/16 at 224 on "
		    "batches of 32 (r)" },
		{ "no-torch", OPT_NO_TORCH, NULL, "without the PyTorch baseline" },
		{ "rounds", OPT_ROUNDS, "N", "rounds over the encodings (3)" },
		{ "accum", OPT_ACCUM, "N", "with --pe: micro-batches a step (1)" },
		{ "per-record", OPT_PER_RECORD, NULL, "with --pe: positions per "
		    "record" },
		{ "eval", OPT_EVAL, NULL, "forward passes of the inference model "
		    "(without --pe:\nbeside PyTorch's, under no_grad)" },
		{ NULL, 0, NULL, NULL }
	};
	static const struct cli_cmd cmd = { "[--pe SPEC [--accum N] "
	    "[--per-record] [--eval]] [options]", "Training (or inference) "
	    "throughput of the ViT engine on the reference config.", opts,
	    NULL };
	const char *pe = NULL;
	int steps = 5, threads = 2, peak_only = 0, torch = 1, rounds = 3, accum = 1;
	int perrec = 0, eval = 0;
	enum gemm_prec prec = GEMM_FP32;
	const struct model *mo = models;
	int ch;

	/* cli_init re-execs with OMP_WAIT_POLICY=passive and GOMP_SPINCOUNT
	 * (lib/cli/cli.c); run_all gives the PyTorch baseline these, and
	 * libgomp's own wait policy instead (torch_env). */
	cli_init(argc, argv);
	while ((ch = cli_getopt(argc, argv, &cmd)) != -1)
		switch (ch) {
		case OPT_PE: pe = optarg; break;
		case OPT_STEPS: steps = (int)cli_int("--steps", optarg, 1, 1000); break;
		case OPT_THREADS: threads = (int)cli_int("--threads", optarg, 1, 256); break;
		case OPT_PEAK: peak_only = 1; break;
		case OPT_NO_TORCH: torch = 0; break;
		case OPT_ROUNDS: rounds = (int)cli_int("--rounds", optarg, 1, 100); break;
		case OPT_ACCUM: accum = (int)cli_int("--accum", optarg, 1, 64); break;
		case OPT_PER_RECORD: perrec = 1; break;
		case OPT_EVAL: eval = 1; break;
		case OPT_PRECISION: prec = cli_opt_precision(optarg); break;
		case OPT_MODEL:
			if (strcmp(optarg, "r") != 0 && strcmp(optarg, "vitb") != 0)
				usage_error("--model: '%s' is not r or vitb", optarg);
			mo = &models[strcmp(optarg, "vitb") == 0];
			break;
		}
	if (optind < argc)
		usage_error("too many operands");
	if (pe == NULL && !peak_only)
		return run_all(steps, threads, torch, rounds, prec, mo, eval);
	cli_threads(threads);
	if (peak_only) {
		printf("peak %.1f GFLOP/s (the model's forward products, %s, %d "
		    "threads)\n", model_peak(mo, prec), prec == GEMM_BF16 ? "bf16" :
		    "fp32", threads);
		return 0;
	}

	/* first: profilers can skip it (perf -D) */
	double peak = model_peak(mo, prec);
	rss_reset();
	struct vit_config c;
	vit_config_init(&c);
	c.dim = mo->dim;
	c.depth = mo->depth;
	c.heads = mo->heads;
	c.mlp = mo->mlp;
	c.classes = mo->classes;
	c.P = mo->P;
	c.axes = 2;
	c.grid[0] = c.grid[1] = mo->grid;
	c.pos_per_record = perrec;
	snprintf(c.pe, sizeof c.pe, "%s", pe);
	int B = mo->B, g = mo->grid, T = g * g;
	struct err e;
	struct vit *m = vit_create(&c, B, T, 1, &e);
	if (m == NULL)
		die("%s: %s", pe, e.msg);
	if (eval) {	/* the same parameters, as vit-eval loads them */
		struct vit *n = vit_create_infer(&c, B, T, &e);
		if (n == NULL)
			die("%s: %s", pe, e.msg);
		memcpy(n->param, m->param, sizeof(float) * m->nparam);
		vit_destroy(m);
		m = n;
		rss_reset();	/* vit-eval never holds the training model */
	}
	m->prec = prec;

	float *x = malloc(sizeof(float) * B * T * c.P);
	float *pos = malloc(sizeof(float) * B * T * 2);
	float *target = calloc((size_t)B * c.classes, sizeof(float));
	float *logits = malloc(sizeof(float) * B * c.classes);
	struct rng r;
	rng_seed(&r, 1, 0);
	for (size_t i = 0; i < (size_t)B * T * c.P; i++)
		x[i] = (float)rng_normal(&r);
	for (int b = 0; b < B; b++) {
		for (int t = 0; t < T; t++) {
			/* per record: posgen --perturb 0.1 (patches are 1/g) */
			float jy = perrec ? (float)(0.1 / g * rng_normal(&r)) : 0;
			float jx = perrec ? (float)(0.1 / g * rng_normal(&r)) : 0;
			pos[(b * T + t) * 2] = (float)(t / g) / g + jy;
			pos[(b * T + t) * 2 + 1] = (float)(t % g) / g + jx;
		}
		target[b * c.classes + rng_below(&r, c.classes)] = 1;
	}

	double t0 = 0, c0 = 0;
	float loss = 0;
	/* vit-train's AdamW step (lib/nn/adamw.h): lr 1e-4, weight decay
	 * 0.05 on the tensors that take it, the arena in one pass */
	struct adamw opt;
	struct adamw_seg *seg = vit_segments(m);
	adamw_defaults(&opt);
	if (seg == NULL)
		die("out of memory");
	double best = INFINITY;	/* the least disturbed step on a shared CPU */
	for (int s = 0; s <= steps; s++) {
		if (s == 1) {	/* step 0 warms up */
			t0 = now_seconds();
			c0 = cpu_seconds();
			work_timing(1);
		}
		double ts = now_seconds();
		if (eval) {
			loss = vit_forward(m, x, pos, B, T, target, logits, 0, 0);
			if (s > 0)
				best = fmin(best, now_seconds() - ts);
			continue;
		}
		vit_zero_grad(m);
		vit_defer_rotation_grad(m, accum > 1);	/* as vit-train */
		for (int a = 0; a < accum; a++) {
			loss = vit_forward(m, x, pos, B, T, target, logits, 1,
			    (uint64_t)s * accum + a);
			vit_backward(m);
		}
		vit_grad_complete(m);
		adamw_step(&opt, m->param, m->grad, m->adam_m, m->adam_v, seg,
		    m->ntensor, 1.0, 1e-4, 0.05, s + 1);
		if (s > 0)
			best = fmin(best, now_seconds() - ts);
	}
	double dt = (now_seconds() - t0) / steps / accum;	/* a micro-batch */
	double work[WORK_KINDS];
	work_times(work);
	work_timing(0);
	double dc = (cpu_seconds() - c0) / steps / accum / threads;
	best /= accum;
	double rss = rss_peak_mb();
	peak = fmax(peak, model_peak(mo, prec));	/* the best, before or after */
	/* at the best step; a training step is about 3 forwards */
	double gf = (eval ? 1 : 3) * vit_flops(&c, B, T) / best / 1e9;
	double load[3];
	getloadavg(load, 3);
	double rot = eval ? 0 : rotation_ms(m, pos, perrec ? B * T : T);
	printf("%s %-14s %8.1f img/s  %7.0f ms/step  best %.1f img/s  "
	    "%6.1f GFLOP/s  %.2f of peak %.0f  peak RSS %.0f MB  "
	    "cpu-time %.1f img/s  (loss %.3f, %s, %d threads, accum %d%s, "
	    "load %.2f)\n", eval ? "eval " : "vit  ", pe, B / dt, dt * 1000,
	    B / best, gf, gf / peak, peak, rss, B / dc, loss,
	    prec == GEMM_BF16 ? "bf16" : "fp32", threads, accum,
	    perrec ? ", positions per record" : "", load[0]);
	if (rot > 0)
		printf("      %-14s rotations (lib/pe/pe.h, forward + backward): %.0f ms "
		    "of the %.0f ms step\n", pe, rot, dt * 1000);
	/* thread time over the threads: a share of the mean step */
	double ms[WORK_KINDS], sum = 0;
	for (int k = 0; k < WORK_KINDS; k++)
		sum += ms[k] = work[k] / threads / steps / accum * 1000;
	printf("      %-14s time of a mean step: products %.1f ms, their "
	    "epilogues %.1f, roundings %.1f, attention %.1f, the rest %.1f "
	    "(nn.h's work)\n", pe, ms[WORK_PRODUCT], ms[WORK_EPILOGUE],
	    ms[WORK_ROUNDING], ms[WORK_ATTENTION], dt * 1000 - sum);
	fflush(stdout);
	vit_destroy(m);
	free(x);
	free(pos);
	free(target);
	free(logits);
	free(seg);
	return 0;
}
