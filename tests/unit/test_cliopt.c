/*
 * test_cliopt.c - an option table's parsing and --help: long-only keys, an
 * optional argument ("[=LO,HI]"), section titles, and help text whose
 * continuation lines line up at the help column whatever blanks they
 * start with (pe_list wraps for a column of its own).
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "cliopt.h"
#include "test.h"

enum { OPT_RRC = CLI_OPT_LONG, OPT_FLAG };

static const struct cli_opt options[] = {
	CLI_OPT_SECTION("Input:"),
	{ "rrc", OPT_RRC, "[=LO,HI]", "crop, area LO..HI" },
	{ "list", 'l', "X", "first\n        second" },
	CLI_OPT_SECTION("Output:"),
	{ "flag", OPT_FLAG, NULL, "a flag" },
	{ NULL, 0, NULL, NULL }
};

static const struct cli_cmd command = { "[options] [FILE]", "About.", options, NULL };

/* The line of text that starts with prefix (after blanks), or NULL. */
static const char *
line_of(const char *text, const char *prefix)
{
	for (const char *s = text; s && *s; s = strchr(s, '\n') ? strchr(s, '\n') + 1 : NULL)
		if (strncmp(s + strspn(s, " "), prefix, strlen(prefix)) == 0)
			return s;
	return NULL;
}

int
main(void)
{
	char *args[] = { "t", "--rrc", "--rrc=0.5,1", "-l", "a", "--flag", "op", NULL };
	int argc = 7, c;
	char *text = NULL;
	size_t len = 0;
	FILE *fp;

	c = cli_getopt(argc, args, &command);
	CHECK(c == OPT_RRC && optarg == NULL, "--rrc alone: no argument");
	c = cli_getopt(argc, args, &command);
	CHECK(c == OPT_RRC && optarg && strcmp(optarg, "0.5,1") == 0, "--rrc=0.5,1: its argument");
	c = cli_getopt(argc, args, &command);
	CHECK(c == 'l' && optarg && strcmp(optarg, "a") == 0, "-l a: a short option's argument");
	c = cli_getopt(argc, args, &command);
	CHECK(c == OPT_FLAG, "--flag: a long-only key");
	c = cli_getopt(argc, args, &command);
	CHECK(c == -1 && optind == 6 && strcmp(args[optind], "op") == 0, "then the operand");

	if ((fp = open_memstream(&text, &len)) == NULL)
		return 1;
	cli_help(fp, &command);
	fclose(fp);
	const char *first = line_of(text, "-l, --list X"), *second = line_of(text, "second");
	int col = first ? (int)(strstr(first, "first") - first) : -1;
	CHECK(strstr(text, "\nInput:\n      --rrc[=LO,HI]") != NULL,
	    "--help: a section title, then the optional argument as --rrc[=LO,HI]");
	CHECK(strstr(text, "\nOutput:\n      --flag") != NULL, "--help: the second section");
	CHECK(second && col > 0 && (int)strspn(second, " ") == col,
	    "--help: a continuation line at the help column (%d), its own blanks dropped", col);
	CHECK(strstr(text, "  -h, --help") && strstr(text, "  -V, --version"),
	    "--help: -h and -V added");
	free(text);
	return test_done();
}
