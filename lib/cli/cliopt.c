/* cliopt.c - getopt_long, --help and usage errors from one option table. */
#include <getopt.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"

/* Enough for the largest command (vit-train) with room to grow; a table
 * past it is a programming error, caught on the first call. */
#define MAXOPT	96

static const struct cli_opt builtin[] = {
	{ "help", 'h', NULL, "this help" },
	{ "version", 'V', NULL, "version" },
	{ NULL, 0, NULL, NULL }
};

/* getopt_long's view of the table last given to cli_getopt. */
static const struct cli_cmd *built;
static struct option longopts[MAXOPT + 3];
static char shortopts[3 * MAXOPT + 8];

/* Whether opts has an option with key. */
static int
has_key(const struct cli_opt *opts, int key)
{
	for (; opts->name != NULL; opts++)
		if (opts->key == key)
			return 1;
	return 0;
}

/* Whether o's argument is optional ("[=N]"). */
static int
optional(const struct cli_opt *o)
{
	return o->arg && o->arg[0] == '[';
}

/* Add o to the arrays at *nl, *ns (a section title adds nothing). */
static void
add(const struct cli_opt *o, int *nl, size_t *ns)
{
	if (o->key == 0)
		return;
	longopts[*nl] = (struct option){ o->name, !o->arg ? no_argument :
	    optional(o) ? optional_argument : required_argument, NULL, o->key };
	(*nl)++;
	if (o->key < CLI_OPT_LONG) {
		shortopts[(*ns)++] = (char)o->key;
		if (o->arg)
			shortopts[(*ns)++] = ':';
		if (optional(o))
			shortopts[(*ns)++] = ':';
	}
}

static void
build(const struct cli_cmd *cmd)
{
	int nl = 0;
	size_t ns = 0;

	shortopts[ns++] = ':';	/* report a missing argument as ':' */
	for (const struct cli_opt *o = cmd->opts; o->name != NULL; o++) {
		if (nl == MAXOPT)
			die("internal error: more than %d options", MAXOPT);
		add(o, &nl, &ns);
	}
	for (const struct cli_opt *o = builtin; o->name != NULL; o++)
		if (!has_key(cmd->opts, o->key))
			add(o, &nl, &ns);
	longopts[nl] = (struct option){ NULL, 0, NULL, 0 };
	shortopts[ns] = '\0';
	built = cmd;
}

/* The option as the user wrote it into buf: argv's word for a long one
 * (up to any '='), "-c" for a short one. */
static const char *
written(char *buf, size_t n, char *argv[])
{
	const char *w = optind > 0 ? argv[optind - 1] : "";

	if (strncmp(w, "--", 2) == 0)
		snprintf(buf, n, "%.*s", (int)strcspn(w, "="), w);
	else if (optopt > 0 && optopt < CLI_OPT_LONG)
		snprintf(buf, n, "-%c", optopt);
	else
		snprintf(buf, n, "%s", w);
	return buf;
}

int
cli_getopt(int argc, char *argv[], const struct cli_cmd *cmd)
{
	char buf[128];
	int c;

	if (built != cmd)
		build(cmd);
	opterr = 0;
	c = getopt_long(argc, argv, shortopts, longopts, NULL);
	if (c == ':')
		usage_error("option '%s' needs an argument",
		    written(buf, sizeof buf, argv));
	if (c == '?')
		usage_error("unknown option '%s'", written(buf, sizeof buf, argv));
	if (c == 'h' && !has_key(cmd->opts, 'h')) {
		cli_help(stdout, cmd);
		cli_close_out(stdout, "stdout");
		exit(0);
	}
	if (c == 'V' && !has_key(cmd->opts, 'V'))
		cli_version();
	return c;
}

/* "  -b, --batch N" or "      --json" into buf; its length. */
static int
left(char *buf, size_t n, const struct cli_opt *o)
{
	int sh = o->key > 0 && o->key < CLI_OPT_LONG;

	return snprintf(buf, n, "  %c%c%c --%s%s%s", sh ? '-' : ' ',
	    sh ? o->key : ' ', sh ? ',' : ' ', o->name,
	    o->arg && !optional(o) ? " " : "", o->arg ? o->arg : "");
}

/* Its help text from column col, each '
' starting a line at col (blanks
 * after it dropped, so text wrapped for its column elsewhere comes out
 * aligned), and a line past column 79 broken at its last space that fits
 * (help made at run time, such as a list of encodings). */
static void
right(FILE *fp, int col, const char *help)
{
	for (const char *s = help;;) {
		size_t len = strcspn(s, "\n"), k = 79 - col;

		if (col + len > 79) {
			while (k > 0 && s[k] != ' ')
				k--;
			len = k > 0 ? k : len;
		}
		fprintf(fp, "%.*s\n", (int)len, s);
		if (s[len] == '\0')
			break;
		s += len + 1;
		s += strspn(s, " ");
		fprintf(fp, "%*s", col, "");
	}
}

void
cli_help(FILE *fp, const struct cli_cmd *cmd)
{
	const struct cli_opt *tabs[2] = { cmd->opts, builtin };
	char buf[128];
	int col = 0;

	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = tabs[t]; o->name != NULL; o++) {
			int w = o->key ? left(buf, sizeof buf, o) + 2 : 0;
			if (w <= 30 && w > col)
				col = w;
		}
	fprintf(fp, "usage: %s %s\n", progname, cmd->synopsis);
	if (cmd->about)
		fprintf(fp, "%s\n", cmd->about);
	for (int t = 0; t < 2; t++)
		for (const struct cli_opt *o = tabs[t]; o->name != NULL; o++) {
			int w;
			if (t == 1 && has_key(cmd->opts, o->key))
				continue;
			if (o->key == 0) {
				fprintf(fp, "%s\n", o->help);
				continue;
			}
			w = left(buf, sizeof buf, o);
			if (w + 2 > col)
				fprintf(fp, "%s\n%*s", buf, col, "");
			else
				fprintf(fp, "%-*s", col, buf);
			right(fp, col, o->help);
		}
	if (cmd->more)
		fprintf(fp, "%s\n", cmd->more);
}
