/* shapeopt.c - the model-shape options' one set of limits (shapeopt.h). */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "pe.h"
#include "shapeopt.h"
#include "vit.h"

static const struct {
	const char *name;
	int	 max;
} limits[] = {
	{ "dim", VIT_MAXDIM },
	{ "depth", VIT_MAXDEPTH },
	{ "heads", PE_MAXHEADS },
	{ "layers", VIT_MAXDEPTH },
	{ "mlp", VIT_MAXMLP },
	{ "classes", VIT_MAXCLASSES },
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
