/*
 * vit-probe - what a trained model's attention learned of positions, per
 * layer and head, drawn by gnuplot or printed as numbers: the mean
 * attention distance (the ViT paper's Figure 7) and the position-
 * similarity map over a stream (lib/model/probe.h), or the rotation
 * frequencies of the encoding's generators (pe_frequencies); see
 * vit-probe(1).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "checkpoint.h"
#include "cli.h"
#include "cliopt.h"
#include "evalin.h"
#include "evaluate.h"
#include "gnuplot.h"
#include "pe.h"
#include "posmap.h"
#include "probe.h"

enum show { SHOW_DISTANCE, SHOW_SIMILARITY, SHOW_SPECTRUM };
static const char *const show_names[] = { "distance", "similarity", "spectrum" };

struct opts {
	int	 show;		/* enum show */
	int	 data;		/* numbers, not a picture */
	int	 fmt;		/* enum gp_format */
	const char *out, *size;
	int64_t	 records;	/* 0: all */
	int	 batch, threads;
	const char *model, *input;
};

enum { OPT_SHOW = CLI_OPT_LONG, OPT_DATA, OPT_THREADS };

static const struct cli_opt options[] = {
	{ "show", OPT_SHOW, "WHAT", "distance: the mean attention distance of each layer\n"
	    "and head (default); similarity: the mean score against\n"
	    "the offset from query to key; spectrum: the encoding's\n"
	    "rotation frequencies (reads no STREAM)" },
	{ "data", OPT_DATA, NULL, "the numbers as tab-separated text, not a picture" },
	{ "output", 'o', "FILE", "write FILE, atomically; its suffix .png, .svg, .pdf or\n"
	    ".txt gives a picture's format (default: text on stdout)" },
	{ "format", 'f', "FMT", "png, svg, pdf or dumb (text)" },
	{ "size", 's', "WxH", "pixels, or characters for dumb" },
	{ "records", 'n', "N", "the first N records of the stream (default: all)" },
	{ "batch", 'b', "N", "records per forward pass (16)" },
	{ "threads", OPT_THREADS, "N", "threads (0: all cores)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options] MODEL [STREAM]",
	"Show what the attention of MODEL (a vit-train checkpoint) does with positions,\n"
	"per layer and head, over a stream of patch and pos records whose tokens fill a\n"
	"grid: as a picture drawn by gnuplot, or as numbers (--data).",
	options, NULL
};

static void
parse(int argc, char *argv[], struct opts *o)
{
	int c;

	*o = (struct opts){ .batch = 16 };
	while ((c = cli_getopt(argc, argv, &command)) != -1)
		switch (c) {
		case OPT_SHOW:
			for (o->show = SHOW_SPECTRUM; o->show >= 0; o->show--)
				if (strcmp(optarg, show_names[o->show]) == 0)
					break;
			if (o->show < 0)
				usage_error("--show %s: want distance, similarity or spectrum",
				    optarg);
			break;
		case OPT_DATA: o->data = 1; break;
		case 'o': o->out = optarg; break;
		case 'f': o->fmt = gp_format_opt(optarg); break;
		case 's': o->size = optarg; break;
		case 'n': o->records = cli_int("--records", optarg, 1, INT64_MAX); break;
		case 'b': o->batch = (int)cli_int("--batch", optarg, 1, 1 << 16); break;
		case OPT_THREADS: o->threads = cli_opt_threads(optarg); break;
		}
	if (optind >= argc)
		usage_error("no MODEL");
	if (argc - optind > 2)
		usage_error("too many operands");
	o->model = argv[optind];
	o->input = argc - optind == 2 ? argv[optind + 1] : NULL;
	if (o->show == SHOW_SPECTRUM && o->input != NULL)
		usage_error("--show spectrum reads no STREAM");
	if (o->data && (o->fmt != GP_NONE || o->size != NULL))
		usage_error("--data writes text: no --format or --size");
	if (!o->data)
		o->fmt = gp_output_format(o->fmt, o->out);
}

/* ---- the figures ---- */

/* The name of axis a of A, t y x: the last is x. */
static int
axis_name(int A, int a)
{
	return "tyx"[3 - A + a];
}

/* What probe_batch needs of each batch before its forward. */
struct cells {
	struct probe *p;
	const char *name;
};

static void
batch_cells(void *ctx, struct batch *b)
{
	struct cells *c = ctx;
	struct err e;

	if (probe_batch(c->p, b->pos, b->n, b->T, b->first, &e) < 0)
		die("%s: %s", c->name, e.msg);
}

/* Run in's model over its stream with p summing what the pictures show. */
static void
run_probe(struct eval_input *in, const struct opts *o, struct probe *p)
{
	struct eval_out out = { 0 };
	struct cells cells = { p, in->name };
	struct eval_hooks hooks = { batch_cells, NULL, &cells };
	struct err e;

	probe_init(p, &in->m->c, o->batch, o->show == SHOW_SIMILARITY ?
	    PROBE_DISTANCE | PROBE_SIMILARITY : PROBE_DISTANCE);
	in->br.limit = o->records;
	if (vit_set_probe(in->m, probe_hook, p, &e) < 0 ||
	    evaluate(&in->m, &in->br, o->batch, &hooks, &out, &e) < 0)
		die("%s", e.msg);
	if (p->err.msg[0])
		die("%s: %s", in->name, p->err.msg);
	if (out.n == 0)
		die("%s: no records", in->name);
	eval_free(&out);
}

/* The rotation frequencies of every set of the model of checkpoint ck,
 * freq[nset][axes][pe_nfreq], in radians per grid cell where ck says
 * what a cell is; pe filled. */
static double *
spectrum(const char *model, struct pe *pe)
{
	struct vt ck;
	struct err e;
	struct vit *m = ckpt_load(model, &ck, 1, 0, 0, &e);
	double step[VIT_MAXAXES];

	if (m == NULL)
		die("%s", e.msg);
	const struct vit_config *c = &m->c;
	if (pe_parse(pe, c->pe, c->dim / c->heads, c->axes, c->heads, c->depth,
	    pe_share_name(c->share)) < 0)
		die("%s: %s", model, pe->err.msg);
	if (pe->identity)
		die("%s: --pe %s rotates nothing: no spectrum", model, c->pe);
	if (posmap_cell(c, &ck, step, &e) < 0) {
		cli_warn("%s: %s: frequencies in radians per unit of the positions the "
		    "encoding sees", model, e.msg);
		for (int a = 0; a < c->axes; a++)
			step[a] = 1;
	}
	const struct vit_tensor *t = vit_find_tensor(m, PE_FIELD);
	int nf = pe_nfreq(pe), A = pe->axes;
	double *freq = malloc(sizeof *freq * (size_t)pe->nset * A * nf);
	if (freq == NULL)
		die("out of memory");
	for (int s = 0; s < pe->nset; s++) {
		double *f = freq + (size_t)s * A * nf;
		if (pe_frequencies(pe, t ? m->param + t->off + s * pe->set_params : NULL, f) < 0)
			die("%s: set %d: %s", model, s, pe->err.msg);
		for (int i = 0; i < A * nf; i++)
			f[i] *= step[i / nf];
	}
	vit_destroy(m);
	vt_free(&ck);
	return freq;
}

/* The layers and heads that use set s, as a legend names them. */
static void
set_name(const struct pe *pe, int s, char *buf, size_t len)
{
	switch (pe->share) {
	case PE_SHARE_HEADS: snprintf(buf, len, "layer %d", s); break;
	case PE_SHARE_LAYERS: snprintf(buf, len, "head %d", s); break;
	case PE_SHARE_ALL: snprintf(buf, len, "all"); break;
	default: snprintf(buf, len, "layer %d head %d", s / pe->heads, s % pe->heads);
	}
}

/* ---- numbers ---- */

static void
data_distance(FILE *fp, const struct probe *p)
{
	fputs("# layer\thead\tdistance (grid cells)\n", fp);
	for (int l = 0; l < p->layers; l++)
		for (int h = 0; h < p->heads; h++)
			fprintf(fp, "%d\t%d\t%.6g\n", l, h, probe_distance(p, l, h));
}

static void
data_similarity(FILE *fp, const struct probe *p)
{
	int d[VIT_MAXAXES];

	fputs("# layer\thead", fp);
	for (int a = 0; a < p->axes; a++)
		fprintf(fp, "\td%c", axis_name(p->axes, a));
	fputs("\tscore\n", fp);
	for (int l = 0; l < p->layers; l++)
		for (int h = 0; h < p->heads; h++)
			for (int o = 0; o < p->noff; o++) {
				probe_offset(p, o, d);
				fprintf(fp, "%d\t%d", l, h);
				for (int a = 0; a < p->axes; a++)
					fprintf(fp, "\t%d", d[a]);
				fprintf(fp, "\t%.6g\n", probe_similarity(p, l, h, o));
			}
}

static void
data_spectrum(FILE *fp, const struct pe *pe, const double *freq)
{
	int nf = pe_nfreq(pe);

	fputs("# set\taxis\tk\tfrequency (radians per grid cell)\n", fp);
	for (int s = 0; s < pe->nset; s++)
		for (int a = 0; a < pe->axes; a++)
			for (int k = 0; k < nf; k++)
				fprintf(fp, "%d\t%d\t%d\t%.6g\n", s, a, k,
				    freq[((size_t)s * pe->axes + a) * nf + k]);
}

/* ---- pictures ---- */

/* A picture's size: --size, else w x h pixels, or for text the
 * terminal's width by th lines. */
static void
picture_size(const struct opts *o, long w, long h, long th, long *pw, long *ph)
{
	if (o->size != NULL)
		gp_size_opt(o->size, pw, ph);
	else if (o->fmt == GP_DUMB)
		*pw = gp_text_width(o->out), *ph = th;
	else
		*pw = w, *ph = h;
}

/* The ViT paper's Figure 7: a point per head at each layer. */
static void
draw_distance(FILE *fp, const struct opts *o, const struct probe *p, const char *patch)
{
	char label[160];
	long w, h;

	picture_size(o, 800, 500, 24, &w, &h);
	gp_terminal(fp, o->fmt, w, h);
	for (int k = 0; k < p->heads; k++) {
		fprintf(fp, "$h%d << EOD\n", k);
		for (int l = 0; l < p->layers; l++)
			fprintf(fp, "%d %.9g\n", l, probe_distance(p, l, k));
		fputs("EOD\n", fp);
	}
	fprintf(fp, "set xlabel 'layer'\nset xrange [-0.5:%g]\nset xtics 1\n"
	    "set yrange [0:*]\nset key outside right top\n", p->layers - 0.5);
	snprintf(label, sizeof label, "mean attention distance (grid cells%s%.64s%s)",
	    patch ? " of " : "", patch ? patch : "", patch ? " pixels" : "");
	fputs("set ylabel ", fp);
	gp_quote(fp, label);
	fprintf(fp, "\nset title 'mean attention distance of each head, %lld records'\n",
	    (long long)p->records);
	for (int k = 0; k < p->heads; k++)
		fprintf(fp, "%s$h%d using 1:2 with points pt 7 lt %d title 'head %d'",
		    k ? ", \\\n    " : "plot ", k, k % 8 + 1, k);
	fputc('\n', fp);
}

/* A text picture's shades, lowest first: gnuplot's text terminal draws no
 * image, so a map's cells are drawn as these characters. */
static const char shades[] = " .:-=+*o%@";

/* The shade of v on the scale lo .. hi. */
static int
shade(double v, double lo, double hi)
{
	double k = (v - lo) / (hi - lo) * (sizeof shades - 1);
	return shades[k >= 0 ? (int)fmin(k, sizeof shades - 2) : 0];
}

/* The step between tics of a side of g cells, whose offsets run from
 * 1 - g to g - 1: a power of 2, at most n intervals (legible labels). */
static int
tic_step(int g, int n)
{
	int s = 1;

	while (2 * (g - 1) / s > n)
		s *= 2;
	return s;
}

/* One panel per layer and head of the mean score against the offset, on
 * one colour scale: a heat map (dt = 0 in 3D), a curve in 1D. */
static void
draw_similarity(FILE *fp, const struct opts *o, const struct probe *p)
{
	int A = p->axes, L = p->layers, H = p->heads, d[VIT_MAXAXES];
	double lo = INFINITY, hi = -INFINITY;
	long w, h;

	for (int l = 0; l < L; l++)
		for (int k = 0; k < H; k++)
			for (int i = 0; i < p->noff; i++) {
				double v = probe_similarity(p, l, k, i);
				lo = fmin(lo, v);
				hi = fmax(hi, v);
			}
	if (!(hi > lo))
		hi = lo + 1;
	picture_size(o, 60 + 260L * (H > 3 ? H : 3), 40 + 240L * L, (A > 1 ? p->span[A - 2] + 8L : 12L) * L + 2,
	    &w, &h);
	gp_terminal(fp, o->fmt, w, h);
	for (int l = 0; l < L; l++)
		for (int k = 0; k < H; k++) {
			fprintf(fp, "$s%d_%d << EOD\n", l, k);
			for (int i = 0; i < p->noff; i++) {
				double v = probe_similarity(p, l, k, i);
				probe_offset(p, i, d);
				if (A == 3 && d[0] != 0)
					continue;
				if (A == 1)
					fprintf(fp, "%d %.9g\n", d[0], v);
				else if (o->fmt == GP_DUMB)
					fprintf(fp, "%d %d \"%c\"\n", d[A - 1], d[A - 2],
					    shade(v, lo, hi));
				else
					fprintf(fp, "%d %d %.9g\n", d[A - 1], d[A - 2], v);
			}
			fputs("EOD\n", fp);
		}
	fprintf(fp, "set multiplot layout %d,%d title 'mean score q.k/sqrt(hd) against "
	    "the offset key - query (grid cells)%s, %lld records'\n", L, H,
	    A == 3 ? ", dt = 0" : "", (long long)p->records);
	if (A == 1)
		fprintf(fp, "set xlabel 'dx'\nset yrange [%.9g:%.9g]\n", lo, hi);
	else {
		fprintf(fp, "set xlabel 'dx'\nset ylabel 'dy'\nset xrange [%g:%g]\n"
		    "set yrange [%g:%g]\nset size ratio -1\nunset key\n",
		    -p->grid[A - 1] + 0.5, p->grid[A - 1] - 0.5,
		    -p->grid[A - 2] + 0.5, p->grid[A - 2] - 0.5);
		if (o->fmt == GP_DUMB)
			fprintf(fp, "unset xlabel\nunset ylabel\nset tics scale 0\n"
			    "set xtics (0)\nset ytics (0)\n");
		else
			fprintf(fp, "set cbrange [%.9g:%.9g]\nset palette rgb 33,13,10\n"
			    "set xtics %d\nset ytics %d\n", lo, hi, tic_step(p->grid[A - 1], 4),
			    tic_step(p->grid[A - 2], 8));
	}
	for (int l = 0; l < L; l++)
		for (int k = 0; k < H; k++) {
			fprintf(fp, "set title 'layer %d head %d'\n", l, k);
			if (A == 1)
				fprintf(fp, "plot $s%d_%d using 1:2 with linespoints pt 7 notitle\n",
				    l, k);
			else if (o->fmt == GP_DUMB)
				fprintf(fp, "plot $s%d_%d using 1:2:3 with labels\n", l, k);
			else
				fprintf(fp, "%s\nplot $s%d_%d using 1:2:3 with image\n",
				    k == H - 1 ? "set colorbox" : "unset colorbox", l, k);
		}
	fputs("unset multiplot\n", fp);
	if (o->fmt == GP_DUMB && A > 1)
		fprintf(fp, "set print '-'\nprint ''\nprint 'shades \"%s\": lowest %.4g to highest %.4g'\n",
		    shades, lo, hi);
}

/* One panel per axis: each set's frequencies in order, on a log scale
 * (zeros, the planes the axis does not turn, left out). */
static void
draw_spectrum(FILE *fp, const struct opts *o, const struct pe *pe, const double *freq)
{
	int A = pe->axes, nf = pe_nfreq(pe);
	char name[64];
	long w, h;

	picture_size(o, 900, 60 + 360L * A, 20L * A, &w, &h);
	gp_terminal(fp, o->fmt, w, h);
	for (int s = 0; s < pe->nset; s++)
		for (int a = 0; a < A; a++) {
			fprintf(fp, "$f%d_%d << EOD\n", s, a);
			for (int k = 0; k < nf; k++) {
				double f = freq[((size_t)s * A + a) * nf + k];
				if (f > 0)
					fprintf(fp, "%d %.9g\n", k, f);
			}
			fputs("EOD\n", fp);
		}
	fprintf(fp, "set multiplot layout %d,1 title 'rotation frequencies of --pe %s, "
	    "sorted'\nset logscale y\nset xlabel 'k'\nset ylabel 'radians per grid cell'\n"
	    "set xrange [-0.5:%g]\n", A, pe->spec, nf - 0.5);
	fputs(o->fmt == GP_DUMB ? "set key outside right top\n" :
	    "set grid\nset key outside right top font ',8'\n", fp);
	for (int a = 0; a < A; a++) {
		int any = 0;
		for (int i = 0; i < pe->nset * nf; i++)
			any |= freq[((size_t)(i / nf) * A + a) * nf + i % nf] > 0;
		fprintf(fp, "set title 'axis %c'\n", axis_name(A, a));
		if (!any) {	/* no point to draw: the panel says so */
			fputs("set label 1 'no rotation' at graph 0.5, 0.5 center\n"
			    "plot [0:1] [1:10] 1/0 notitle\nunset label 1\n", fp);
			continue;
		}
		for (int s = 0; s < pe->nset; s++) {
			set_name(pe, s, name, sizeof name);
			fprintf(fp, "%s$f%d_%d using 1:2 with linespoints pt 7 ps 0.5 lt %d dt %d "
			    "title ", s ? ", \\\n    " : "plot ", s, a, s % 8 + 1, s / 8 % 4 + 1);
			gp_quote(fp, name);
		}
		fputc('\n', fp);
	}
	fputs("unset multiplot\n", fp);
}

int
main(int argc, char *argv[])
{
	struct opts o;
	struct eval_input in;
	struct probe p;
	struct pe pe;
	double *freq = NULL;
	char *buf = NULL;
	size_t len = 0;
	FILE *fp;

	cli_init(argc, argv);
	parse(argc, argv, &o);
	cli_threads(o.threads);
	if (o.show == SHOW_SPECTRUM)
		freq = spectrum(o.model, &pe);
	else {
		eval_input_open(&in, o.model, o.input, o.batch);
		run_probe(&in, &o, &p);
	}

	if ((fp = open_memstream(&buf, &len)) == NULL)
		die_errno("memory");
	if (o.data) {
		if (o.show == SHOW_DISTANCE)
			data_distance(fp, &p);
		else if (o.show == SHOW_SIMILARITY)
			data_similarity(fp, &p);
		else
			data_spectrum(fp, &pe, freq);
	} else if (o.show == SHOW_DISTANCE) {
		const char *patch = vt_meta(&in.s, "PATCH");
		draw_distance(fp, &o, &p, patch ? patch : vt_meta(&in.ck, "PATCH"));
	} else if (o.show == SHOW_SIMILARITY)
		draw_similarity(fp, &o, &p);
	else
		draw_spectrum(fp, &o, &pe, freq);
	if (fclose(fp) == EOF)
		die_errno("memory");
	if (o.data)
		gp_write(buf, len, 0, o.out);
	else
		gp_draw(buf, len, o.fmt, o.out);
	free(buf);
	free(freq);
	if (o.show != SHOW_SPECTRUM) {
		probe_free(&p);
		eval_input_close(&in);
	}
	return 0;
}
