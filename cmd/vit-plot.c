/*
 * vit-plot - learning curves of vit-train runs from their --log JSON lines:
 * loss, learning rate, validation top-1 and loss against step, one curve
 * per run, drawn by gnuplot (lib/cli/gnuplot.h) as PNG, SVG, PDF or text;
 * see vit-plot(1).
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"
#include "gnuplot.h"
#include "gzin.h"
#include "trainlog.h"

enum { C_LOSS = TLOG_LOSS, C_LR = TLOG_LR, C_VAL = TLOG_VAL, NCURVE = TLOG_NCURVE };
static const char *const curve_titles[NCURVE] = { "loss", "learning rate",
	"validation top-1 (%)", "validation loss" };

struct run {
	const char	*file, *title;
	struct tlog	 log;		/* its curves in log.c */
};

static const struct cli_opt options[] = {
	{ "output", 'o', "FILE", "write FILE, atomically; its suffix .png, .svg, .pdf or\n"
	    ".txt gives the format (default: a text plot on stdout)" },
	{ "format", 'f', "FMT", "png, svg, pdf or dumb (text)" },
	{ "title", 't', "NAME", "legend name of the next LOG in order (repeatable;\n"
	    "default: the file names)" },
	{ "size", 's', "WxH", "pixels (800 by 300 a panel), or characters for dumb\n"
	    "(the terminal's width, or 80, by 20 a panel)" },
	{ "smooth", 'm', "N", "draw the loss as the mean of each step's last N\n"
	    "logged losses (default 1: as logged)" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = {
	"[options] LOG...",
	"Draw the learning curves of vit-train --log files: loss, learning rate,\n"
	"validation top-1 and loss against step, one curve per run (needs gnuplot).",
	options, NULL
};

/* Read a log file into r: a bad line is an error, but a partial last
 * line (a run still writing, or killed), which is skipped, as are points
 * that no plot holds; either is said.  Validation top-1 in percent. */
static void
read_log(struct run *r)
{
	const char *name;
	/* a log is text: typed on a terminal is fine */
	FILE *fp = strcmp(r->file, "-") == 0 ? (name = "stdin", stdin) : cli_open_in(r->file, &name);
	struct tlog *t = &r->log;
	struct err e = { "" };
	FILE *in;

	/* the experiments keep their logs gzip-compressed */
	if ((in = gzin_open(fp, name, &e)) == NULL)
		die("%s", e.msg);
	if (tlog_read(t, in, name) < 0)
		die("%s", *e.msg ? e.msg : t->err.msg);
	fclose(in);
	if (fp != stdin)
		fclose(fp);
	if (t->partial)
		cli_warn("%s:%lld: skipped the partial last line (a run still writing, or "
		    "killed)", name, t->partial);
	if (t->skipped)
		cli_warn("%s: %lld point%s skipped, past what a plot holds (%s; steps to "
		    "%g, values to %g)", name, t->skipped, t->skipped > 1 ? "s" : "",
		    t->skip_why, TLOG_MAXSTEP, TLOG_MAXVALUE);
	if (t->c[C_LOSS].n == 0 && t->c[C_VAL].n == 0)
		die("%s: %s", name, t->skipped ? "no point left to plot" :
		    "no vit-train --log lines (step with loss or val_acc)");
	for (size_t k = 0; k < t->c[C_VAL].n; k++)
		t->c[C_VAL].y[k] *= 100;
}

/*
 * c's values replaced by their trailing means over n points (fewer at the
 * start): a noisy per-step loss read as a trend.  A point that is not
 * finite (a diverged run) starts the window again after it.
 */
static void
curve_smooth(struct tlog_curve *c, long n)
{
	double sum = 0, *raw;
	size_t first = 0;

	if (n <= 1 || c->n == 0)
		return;
	if ((raw = malloc(c->n * sizeof *raw)) == NULL)
		die_errno("memory");
	memcpy(raw, c->y, c->n * sizeof *raw);
	for (size_t k = 0; k < c->n; k++) {
		if (!isfinite(raw[k])) {
			first = k + 1, sum = 0;
			continue;
		}
		sum += raw[k];
		if (k - first == (size_t)n)
			sum -= raw[first++];
		c->y[k] = sum / (double)(k - first + 1);
	}
	free(raw);
}

/*
 * The gnuplot script: terminal, datablocks, then one panel per curve kind
 * that any run has, every run in the same line type in each: the eight
 * colours of gnuplot's line types, then again dashed, so that many runs
 * stay apart.  Pictures put the legend right of the panel, off the curves
 * (a dozen names in one column), and one left margin in every panel, so
 * that their steps line up.
 */
static void
write_script(FILE *fp, int fmt, long w, long h, struct run *run, int nrun, int npanel,
    long smooth)
{
	double x0 = INFINITY, x1 = -INFINITY;

	gp_terminal(fp, fmt, w, h);
	for (int i = 0; i < nrun; i++)
		for (int c = 0; c < NCURVE; c++) {
			fprintf(fp, "$d%d_%d << EOD\n", i, c);
			for (size_t k = 0; k < run[i].log.c[c].n; k++) {
				fprintf(fp, "%.17g %.9g\n", run[i].log.c[c].x[k], run[i].log.c[c].y[k]);
				x0 = fmin(x0, run[i].log.c[c].x[k]);
				x1 = fmax(x1, run[i].log.c[c].x[k]);
			}
			fputs("EOD\n", fp);
		}
	/* Every panel on one step axis, so that a run validated and one not
	 * line up; a single step gets a range of one. */
	fprintf(fp, "set multiplot layout %d,1\nset xlabel 'step'\nset xrange [%.17g:%.17g]\n",
	    npanel, x0, x1 > x0 ? x1 : x0 + 1);
	if (fmt == GP_DUMB)
		fputs("set key top right\n", fp);
	else
		fputs("set grid\nset key outside right top font ',9'\nset lmargin 10\n", fp);
	for (int c = 0; c < NCURVE; c++) {
		const char *sep = "plot ";

		for (int i = 0; i < nrun; i++) {
			if (run[i].log.c[c].n == 0)
				continue;
			if (*sep == 'p') {
				fputs("set title ", fp);
				gp_quote(fp, curve_titles[c]);
				if (c == C_LOSS && smooth > 1)
					fprintf(fp, " . ' (mean of the last %ld)'", smooth);
				fputc('\n', fp);
			}
			fprintf(fp, "%s$d%d_%d using 1:2 with %s lt %d dt %d title ", sep, i, c,
			    c == C_VAL ? "linespoints pt 7 ps 0.6" : "lines", i % 8 + 1, i / 8 + 1);
			gp_quote(fp, run[i].title);
			sep = ", \\\n    ";
		}
		if (*sep != 'p')
			fputc('\n', fp);
	}
	fputs("unset multiplot\n", fp);
}

int
main(int argc, char *argv[])
{
	const char *out = NULL, *size = NULL, **title = NULL;
	struct run *run;
	char *script = NULL;
	size_t slen = 0;
	long w, h, smooth = 1;
	int c, fmt = GP_NONE, ntitle = 0, nrun, npanel = 0;
	FILE *sp;

	cli_init(argc, argv);
	if ((title = calloc((size_t)argc, sizeof *title)) == NULL)
		die_errno("memory");
	while ((c = cli_getopt(argc, argv, &command)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f': fmt = gp_format_opt(optarg); break;
		case 't': title[ntitle++] = optarg; break;
		case 's': size = optarg; break;
		case 'm': smooth = (long)cli_int("--smooth", optarg, 1, 1000000); break;
		}
	}
	if ((nrun = argc - optind) < 1)
		usage_error("name at least one LOG file (vit-train --log)");
	if (ntitle > nrun)
		usage_error("%d --title for %d LOG files", ntitle, nrun);
	fmt = gp_output_format(fmt, out);

	if ((run = calloc((size_t)nrun, sizeof *run)) == NULL)
		die_errno("memory");
	for (int i = 0; i < nrun; i++) {
		run[i].file = argv[optind + i];
		run[i].title = i < ntitle ? title[i] :
		    strcmp(run[i].file, "-") == 0 ? "stdin" : run[i].file;
		read_log(&run[i]);
		curve_smooth(&run[i].log.c[C_LOSS], smooth);
	}
	for (int k = 0; k < NCURVE; k++)
		for (int i = 0; i < nrun; i++)
			if (run[i].log.c[k].n > 0) {
				npanel++;
				break;
			}
	if (size != NULL)
		gp_size_opt(size, &w, &h);
	else if (fmt == GP_DUMB)
		w = gp_text_width(out), h = 20L * npanel;
	else
		w = 800, h = 300L * npanel;

	if ((sp = open_memstream(&script, &slen)) == NULL)
		die_errno("memory");
	write_script(sp, fmt, w, h, run, nrun, npanel, smooth);
	if (fclose(sp) == EOF)
		die_errno("memory");
	gp_draw(script, slen, fmt, out);
	for (int i = 0; i < nrun; i++)
		tlog_free(&run[i].log);
	free(run);
	free(title);
	free(script);
	return 0;
}
