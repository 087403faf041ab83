/* shapeopt.c - the model-shape options' one set of limits (shapeopt.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "shapeopt.h"

static const struct {
	const char *name;
	int	 max;
} limits[] = {
	{ "dim", SHAPE_MAXDIM },
	{ "depth", SHAPE_MAXDEPTH },
	{ "heads", SHAPE_MAXHEADS },
	{ "layers", SHAPE_MAXDEPTH },
	{ "mlp", SHAPE_MAXMLP },
	{ "classes", SHAPE_MAXCLASSES },
};

int
shape_opt(const char *name, const char *arg)
{
	char opt[32];

	for (size_t i = 0; i < sizeof limits / sizeof *limits; i++)
		if (strcmp(limits[i].name, name) == 0) {
			snprintf(opt, sizeof opt, "--%s", name);
			return (int)cli_int(opt, arg, 1, limits[i].max);
		}
	die("shape_opt: no option '%s'", name);	/* a command's mistake */
}
