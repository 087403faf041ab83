/*
 * vit-plot - learning curves of vit-train runs from their --log JSON lines:
 * loss, learning rate, validation top-1 and loss against step, one curve
 * per run, drawn by gnuplot as PNG, SVG, PDF or text; see vit-plot(1).
 *
 * gnuplot reads a script from memory, its data inlined as datablocks, and
 * writes the picture into a pipe that we read whole: only then is it
 * written out, every write checked, so that a full disk or a gnuplot that
 * wrote nothing leaves the previous file as it was.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h"
#include "cli.h"
#include "fileio.h"
#include "cliopt.h"
#include "gzin.h"
#include "trainlog.h"

enum fmt { FMT_NONE, FMT_PNG, FMT_SVG, FMT_PDF, FMT_DUMB };
static const char *const fmt_names[] = { "", "png", "svg", "pdf", "dumb" };

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

static int
fmt_parse(const char *s)
{
	for (int f = FMT_PNG; f <= FMT_DUMB; f++)
		if (strcmp(s, fmt_names[f]) == 0)
			return f;
	return FMT_NONE;
}

/* The format an output file's suffix names, or FMT_NONE. */
static int
fmt_suffix(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot == NULL || strchr(dot, '/'))
		return FMT_NONE;
	return strcmp(dot, ".txt") == 0 ? FMT_DUMB : fmt_parse(dot + 1);
}

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

/* s as a gnuplot string of single-quoted parts, which take no backslash
 * escape nor backquoted command, with each ' joined in as "'" (doubled,
 * '' at a string's start reads as an empty string: a title "'q" failed);
 * control characters as '?'. */
static void
put_quoted(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; *s; s++)
		if (*s == '\'')
			fputs("' . \"'\" . '", fp);
		else
			fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, fp);
	fputc('\'', fp);
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

	/* pdfcairo's sizes are inches: 100 pixels an inch. */
	if (fmt == FMT_PDF)
		fprintf(fp, "set terminal pdfcairo size %gin,%gin noenhanced\n",
		    (double)w / 100, (double)h / 100);
	else
		fprintf(fp, "set terminal %s size %ld,%ld noenhanced%s\n",
		    fmt == FMT_PNG ? "pngcairo" : fmt_names[fmt], w, h,
		    fmt == FMT_DUMB ? " nofeed" : "");
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
	if (fmt == FMT_DUMB)
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
				put_quoted(fp, curve_titles[c]);
				if (c == C_LOSS && smooth > 1)
					fprintf(fp, " . ' (mean of the last %ld)'", smooth);
				fputc('\n', fp);
			}
			fprintf(fp, "%s$d%d_%d using 1:2 with %s lt %d dt %d title ", sep, i, c,
			    c == C_VAL ? "linespoints pt 7 ps 0.6" : "lines", i % 8 + 1, i / 8 + 1);
			put_quoted(fp, run[i].title);
			sep = ", \\\n    ";
		}
		if (*sep != 'p')
			fputc('\n', fp);
	}
	fputs("unset multiplot\n", fp);
}

/* A memory file holding len bytes of data, read from its start. */
static int
memfile(const char *name, const void *data, size_t len)
{
	int fd = memfd_create(name, MFD_CLOEXEC);

	if (fd == -1 || write_all(fd, data, len) == -1 || lseek(fd, 0, SEEK_SET) == -1)
		die_errno("%s", name);
	return fd;
}

/*
 * Run gnuplot on the script and return its picture, read whole from a
 * pipe (*len bytes).  Die unless it succeeds and draws something, with its
 * last message; its warnings (about our script, as an empty range for a
 * one-point curve) are dropped.
 */
static char *
gnuplot(const char *script, size_t slen, size_t *len)
{
	int in = memfile("gnuplot script", script, slen), err = memfile("gnuplot errors", "", 0);
	char line[512], last[512] = "", *pic = NULL;
	size_t cap = 0;
	int pfd[2], st;
	ssize_t n;
	FILE *fp;
	pid_t pid;

	if (pipe(pfd) == -1)
		die_errno("gnuplot");
	if ((pid = fork()) == -1)
		die_errno("fork");
	if (pid == 0) {
		if (dup2(in, STDIN_FILENO) == -1 || dup2(pfd[1], STDOUT_FILENO) == -1 ||
		    dup2(err, STDERR_FILENO) == -1)
			_exit(127);
		close(pfd[0]);
		execlp("gnuplot", "gnuplot", (char *)NULL);
		fprintf(stderr, "cannot run it: %s (Debian: apt-get install gnuplot-nox)\n",
		    strerror(errno));
		_exit(127);
	}
	close(pfd[1]);
	close(in);
	*len = 0;
	for (;;) {
		if (*len == cap && (pic = realloc(pic, cap = cap ? 2 * cap : 65536)) == NULL)
			die_errno("memory");
		if ((n = read(pfd[0], pic + *len, cap - *len)) == 0)
			break;
		if (n == -1 && errno != EINTR)
			die_errno("gnuplot: reading its picture");
		*len += n > 0 ? (size_t)n : 0;
	}
	close(pfd[0]);
	while (waitpid(pid, &st, 0) == -1)
		if (errno != EINTR)
			die_errno("waitpid");
	if (WIFEXITED(st) && WEXITSTATUS(st) == 0 && *len > 0) {
		close(err);
		return pic;
	}
	if (lseek(err, 0, SEEK_SET) == -1 || (fp = fdopen(err, "r")) == NULL)
		die_errno("gnuplot errors");
	while (fgets(line, sizeof line, fp))
		if (line[strspn(line, " \t\n")] != '\0')
			snprintf(last, sizeof last, "%.*s", (int)strcspn(line, "\n"), line);
	if (WIFSIGNALED(st))
		die("gnuplot: killed by signal %d", WTERMSIG(st));
	die("gnuplot: %s", *last ? last : WEXITSTATUS(st) ? "failed" : "drew nothing");
}

/* gnuplot's text plot without its form feeds, leading empty lines and
 * trailing blanks, and with a newline at the end. */
static void
tidy_text(FILE *in, FILE *out)
{
	int c, blanks = 0, col = 0, any = 0;

	rewind(in);
	while ((c = getc(in)) != EOF) {
		if (c == '\f')
			continue;
		if (c == '\n' && !any) {
			blanks = 0;
			continue;
		}
		if (c == ' ') {
			blanks++;
			continue;
		}
		if (c != '\n')
			for (; blanks > 0; blanks--, col++)
				putc(' ', out);
		blanks = 0;
		any = 1;
		putc(c, out);
		col = c == '\n' ? 0 : col + 1;
	}
	if (col > 0)
		putc('\n', out);
	fclose(in);
}

/* --size WxH into *w, *h. */
static void
parse_size(const char *s, long *w, long *h)
{
	const char *x = strchr(s, 'x');
	char buf[64];

	if (x == NULL || (size_t)(x - s) >= sizeof buf)
		usage_error("--size %s: want WxH, as 800x600", s);
	memcpy(buf, s, (size_t)(x - s));
	buf[x - s] = '\0';
	*w = (long)cli_int("--size", buf, 10, 10000);
	*h = (long)cli_int("--size", x + 1, 10, 10000);
}

int
main(int argc, char *argv[])
{
	const char *out = NULL, *size = NULL, **title = NULL;
	struct atomicfile af = { 0 };
	struct run *run;
	char *script = NULL, *pic;
	size_t slen = 0, plen;
	long w, h, smooth = 1;
	int c, fmt = FMT_NONE, ntitle = 0, nrun, tofile, npanel = 0;
	FILE *sp, *dst, *text = NULL;

	cli_init(argc, argv);
	if ((title = calloc((size_t)argc, sizeof *title)) == NULL)
		die_errno("memory");
	while ((c = cli_getopt(argc, argv, &command)) != -1) {
		switch (c) {
		case 'o': out = optarg; break;
		case 'f':
			if ((fmt = fmt_parse(optarg)) == FMT_NONE)
				usage_error("--format %s: want png, svg, pdf or dumb", optarg);
			break;
		case 't': title[ntitle++] = optarg; break;
		case 's': size = optarg; break;
		case 'm': smooth = (long)cli_int("--smooth", optarg, 1, 1000000); break;
		}
	}
	if ((nrun = argc - optind) < 1)
		usage_error("name at least one LOG file (vit-train --log)");
	if (ntitle > nrun)
		usage_error("%d --title for %d LOG files", ntitle, nrun);
	tofile = out != NULL && strcmp(out, "-") != 0;
	if (fmt == FMT_NONE && tofile && (fmt = fmt_suffix(out)) == FMT_NONE)
		usage_error("%s: say --format png, svg, pdf or dumb (the suffix names none)", out);
	if (fmt == FMT_NONE)
		fmt = FMT_DUMB;
	if ((fmt == FMT_PNG || fmt == FMT_PDF) && !tofile)
		cli_binary_stdout(0);

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
		parse_size(size, &w, &h);
	else if (fmt == FMT_DUMB) {
		struct winsize ws;

		w = !tofile && isatty(STDOUT_FILENO) &&
		    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 10 ?
		    ws.ws_col : 80;
		h = 20L * npanel;
	} else
		w = 800, h = 300L * npanel;

	if ((sp = open_memstream(&script, &slen)) == NULL)
		die_errno("memory");
	write_script(sp, fmt, w, h, run, nrun, npanel, smooth);
	if (fclose(sp) == EOF)
		die_errno("memory");
	pic = gnuplot(script, slen, &plen);
	if (tofile && atomic_open(&af, out) == -1)
		die_errno("%s", out);
	dst = tofile ? af.fp : stdout;
	if (fmt != FMT_DUMB)
		fwrite(pic, 1, plen, dst);
	else if ((text = fmemopen(pic, plen, "r")) != NULL)
		tidy_text(text, dst);
	else
		die_errno("memory");
	if (tofile && atomic_commit(&af) == -1)
		die_errno("%s", out);
	if (!tofile)
		cli_close_out(stdout, "stdout");
	for (int i = 0; i < nrun; i++)
		tlog_free(&run[i].log);
	free(run);
	free(title);
	free(script);
	free(pic);
	return 0;
}
