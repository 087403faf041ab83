/*
 * gnuplot.c - run gnuplot on a script held in memory and write its
 * picture out whole.
 */
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/wait.h>

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "atomicfile.h"
#include "cli.h"
#include "fileio.h"
#include "gnuplot.h"

static const char *const fmt_names[] = { "", "png", "svg", "pdf", "dumb" };

static int
fmt_parse(const char *s)
{
	for (int f = GP_PNG; f <= GP_DUMB; f++)
		if (strcmp(s, fmt_names[f]) == 0)
			return f;
	return GP_NONE;
}

int
gp_format_opt(const char *arg)
{
	int f = fmt_parse(arg);

	if (f == GP_NONE)
		usage_error("--format %s: want png, svg, pdf or dumb", arg);
	return f;
}

/* The format an output file's suffix names, or GP_NONE. */
static int
fmt_suffix(const char *path)
{
	const char *dot = strrchr(path, '.');

	if (dot == NULL || strchr(dot, '/'))
		return GP_NONE;
	return strcmp(dot, ".txt") == 0 ? GP_DUMB : fmt_parse(dot + 1);
}

/* 1 when out names a file, not stdout. */
static int
to_file(const char *out)
{
	return out != NULL && strcmp(out, "-") != 0;
}

int
gp_output_format(int fmt, const char *out)
{
	if (fmt == GP_NONE && to_file(out) && (fmt = fmt_suffix(out)) == GP_NONE)
		usage_error("%s: say --format png, svg, pdf or dumb (the suffix names none)", out);
	if (fmt == GP_NONE)
		fmt = GP_DUMB;
	if ((fmt == GP_PNG || fmt == GP_PDF) && !to_file(out))
		cli_binary_stdout(0);
	return fmt;
}

void
gp_size_opt(const char *s, long *w, long *h)
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

long
gp_text_width(const char *out)
{
	struct winsize ws;

	return !to_file(out) && isatty(STDOUT_FILENO) &&
	    ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 10 ? ws.ws_col : 80;
}

void
gp_terminal(FILE *fp, int fmt, long w, long h)
{
	/* pdfcairo's sizes are inches: 100 pixels an inch. */
	if (fmt == GP_PDF)
		fprintf(fp, "set terminal pdfcairo size %gin,%gin noenhanced\n",
		    (double)w / 100, (double)h / 100);
	else
		fprintf(fp, "set terminal %s size %ld,%ld noenhanced%s\n",
		    fmt == GP_PNG ? "pngcairo" : fmt_names[fmt], w, h,
		    fmt == GP_DUMB ? " nofeed" : "");
}

/* Single-quoted parts take no backslash escape nor backquoted command;
 * a ' is joined in as "'", not doubled: '' at a string's start reads as
 * an empty string (a title "'q" failed). */
void
gp_quote(FILE *fp, const char *s)
{
	fputc('\'', fp);
	for (; *s; s++)
		if (*s == '\'')
			fputs("' . \"'\" . '", fp);
		else
			fputc((unsigned char)*s < 0x20 || *s == 0x7f ? '?' : *s, fp);
	fputc('\'', fp);
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
}

void
gp_write(const char *data, size_t len, int tidy, const char *out)
{
	struct atomicfile af = { 0 };
	FILE *dst, *text;

	if (to_file(out) && atomic_open(&af, out) == -1)
		die_errno("%s", out);
	dst = to_file(out) ? af.fp : stdout;
	if (!tidy)
		fwrite(data, 1, len, dst);
	else if ((text = fmemopen((void *)data, len, "r")) != NULL) {
		tidy_text(text, dst);
		fclose(text);
	} else
		die_errno("memory");
	if (to_file(out) && atomic_commit(&af) == -1)
		die_errno("%s", out);
	if (!to_file(out))
		cli_close_out(stdout, "stdout");
}

void
gp_draw(const char *script, size_t slen, int fmt, const char *out)
{
	size_t len;
	char *pic = gnuplot(script, slen, &len);

	gp_write(pic, len, fmt == GP_DUMB, out);
	free(pic);
}
