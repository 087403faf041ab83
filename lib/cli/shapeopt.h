/*
 * shapeopt.h - the model-shape options (--dim, --depth, --heads, --mlp,
 * --classes), declared once: entries for a command's option table
 * (cliopt.h), parsed one way by every command that takes them.
 *
 * The limits are the model's own, not a copy: vit_config_check's for the
 * width, the blocks, the MLP and the classes (vit.h's VIT_MAX*), and
 * pe_parse's for the heads (pe.h's PE_MAXHEADS: an encoding's sets are
 * counted per head and layer; no model has more heads).  An option past
 * them names a model no command could make, so it is refused where it is
 * given.
 */
#ifndef SHAPEOPT_H
#define SHAPEOPT_H

/* Table entries; dflt is the help's word on the default ("the preset's"). */
#define SHAPE_OPT_DIM(key, dflt)	{ "dim", (key), "N", "embedding width (" dflt ")" }
#define SHAPE_OPT_DEPTH(key, dflt)	{ "depth", (key), "N", "blocks (" dflt ")" }
#define SHAPE_OPT_HEADS(key, dflt)	{ "heads", (key), "N", "attention heads (" dflt ")" }
#define SHAPE_OPT_MLP(key, dflt)	{ "mlp", (key), "N", "MLP hidden width (" dflt ")" }
/* --dim, --depth, --heads and --mlp, of keys key0 .. key0 + 3. */
#define SHAPE_OPTS(key0, dflt)	SHAPE_OPT_DIM(key0, dflt), \
	SHAPE_OPT_DEPTH((key0) + 1, dflt), SHAPE_OPT_HEADS((key0) + 2, dflt), \
	SHAPE_OPT_MLP((key0) + 3, dflt)

/* The value of shape option name ("heads"), arg, within its limits, or a
 * usage_error naming them. */
int	 shape_opt(const char *name, const char *arg);

#endif
