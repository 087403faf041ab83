/*
 * cliopt.h - a command's options, declared once in a table (as Netpbm's
 * programs do): getopt_long's arrays, the --help text and the usage
 * errors all come from it.
 *
 *	enum { OPT_JSON = CLI_OPT_LONG, OPT_SEED };
 *	static const struct cli_opt opts[] = {
 *		{ "batch", 'b', "N", "records per forward pass (64)" },
 *		{ "json", OPT_JSON, NULL, "JSON output" },
 *		{ "seed", OPT_SEED, "N", "bootstrap seed (1)" },
 *		{ NULL }
 *	};
 *	static const struct cli_cmd cmd = { "[options] MODEL [STREAM]",
 *	    "Evaluate MODEL on a stream.", opts, NULL };
 *	while ((c = cli_getopt(argc, argv, &cmd)) != -1)
 *		switch (c) { case 'b': ... case OPT_JSON: ... }
 *
 * --help (-h) and --version (-V) are added to every table and handled
 * here, as are an unknown option and a missing argument (exit 2).
 * CLI_OPT_SECTION("Source:") in a table starts a titled group in --help;
 * an argument name in brackets, "[=LO,HI]", makes the argument optional
 * (given as --rrc=0.2,1).
 */
#ifndef CLIOPT_H
#define CLIOPT_H

#include <stdio.h>

/* The first key of a long-only option (keys below are short letters). */
#define CLI_OPT_LONG	256
/* A table entry that is a title line in --help, not an option. */
#define CLI_OPT_SECTION(title)	{ "", 0, NULL, title }

struct cli_opt {
	const char *name;	/* long name without "--"; NULL ends the table */
	int	 key;		/* short letter, CLI_OPT_LONG + i for long only,
				   0 for a section title */
	const char *arg;	/* the argument's name in --help; NULL: no argument;
				   "[...]": an optional one */
	const char *help;	/* --help text; each '
' starts a line at the help
				   column (blanks after it dropped), and one past
				   column 79 breaks at a space */
};

struct cli_cmd {
	const char *synopsis;	/* after "usage: PROG ", e.g. "[options] [FILE]" */
	const char *about;	/* lines between the usage line and the options */
	const struct cli_opt *opts;
	const char *more;	/* lines after the options, or NULL */
};

/* The next option of argv, as getopt_long returns it (its key, optarg set),
 * or -1 at the first operand-only remainder; --help prints cli_help to
 * stdout and exits 0, --version the version; an unknown option or a
 * missing argument is a usage_error naming it.  Call with one cmd until
 * -1 (a command with subcommands may then start again with another). */
int	 cli_getopt(int argc, char *argv[], const struct cli_cmd *cmd);
/* Print cmd's help, made from its table, to fp. */
void	 cli_help(FILE *fp, const struct cli_cmd *cmd);

#endif
