/*
 * test_shapeopt.c - the model's shape limits, which the shape options
 * (shapeopt.h) take: a config at every limit is one vit_config_check
 * takes, one past any is refused; pe_parse takes PE_MAXHEADS heads and
 * VIT_MAXDEPTH layers and refuses one more head.  A check that stopped
 * reading its limit fails here, not as a model no command can make.
 */
#include <string.h>

#include "pe.h"
#include "test.h"
#include "vit.h"

/* The config at every limit, its grid 1x1. */
static void
at_limits(struct vit_config *c)
{
	vit_config_init(c);
	c->dim = VIT_MAXDIM;
	c->depth = VIT_MAXDEPTH;
	c->heads = PE_MAXHEADS;
	c->mlp = VIT_MAXMLP;
	c->classes = VIT_MAXCLASSES;
	c->P = 3;
	c->axes = 2;
	c->grid[0] = c->grid[1] = 1;
}

int
main(void)
{
	struct vit_config c;
	struct pe pe;
	struct err e;

	at_limits(&c);
	CHECK(vit_config_check(&c, &e) == 0, "a model at every shape limit: %s", e.msg);
	int *field[] = { &c.dim, &c.depth, &c.mlp, &c.classes };
	const char *name[] = { "dim", "depth", "mlp", "classes" };
	for (int i = 0; i < 4; i++) {
		at_limits(&c);
		*field[i] += 1;
		if (field[i] == &c.dim)		/* still a multiple of the heads */
			c.dim = VIT_MAXDIM + PE_MAXHEADS;
		CHECK(vit_config_check(&c, &e) < 0,
		    "vit_config_check refuses %s %d, past --%s's limit", name[i], *field[i],
		    name[i]);
	}
	CHECK(pe_parse(&pe, "liere:2", 16, 2, PE_MAXHEADS, VIT_MAXDEPTH, "none") == 0,
	    "pe_parse at %d heads and %d layers: %s", PE_MAXHEADS, VIT_MAXDEPTH, pe.err.msg);
	CHECK(pe_parse(&pe, "liere:2", 16, 2, PE_MAXHEADS + 1, 1, "none") < 0,
	    "pe_parse refuses %d heads, past --heads' limit", PE_MAXHEADS + 1);
	return test_done();
}
