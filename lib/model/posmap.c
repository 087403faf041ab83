/*
 * posmap.c - a stream's positions into an encoding's own convention.
 */
#include <math.h>
#include <string.h>

#include "pe.h"
#include "pe_conv.h"
#include "posmap.h"
#include "vt.h"

int
posmap_native(struct vit_config *c, const char *pos, const char *grid,
    int *native, struct err *e)
{
	struct pe pe;
	struct pe_conv from;
	double scale[VIT_MAXAXES], shift[VIT_MAXAXES];

	if (pe_parse(&pe, c->pe, c->dim / c->heads, c->axes, c->heads, c->depth,
	    pe_share_name(c->share)) < 0)
		return err_set(e, "%s", pe.err.msg);
	*native = pe_conv_native(&pe);
	e->msg[0] = '\0';
	if (*native == PE_CONV_NONE)
		return 1;
	if (pe_conv_parse(&from, pos, grid, e) < 0)
		return 1;
	if (from.axes != c->axes) {
		err_set(e, "POS is of %d axes, the positions of %d", from.axes,
		    c->axes);
		return 1;
	}
	pe_conv_map(&from, *native, c->grid, scale, shift);
	for (int a = 0; a < c->axes; a++) {
		float f = (float)scale[a], g = (float)shift[a];
		/* a range of 1e-40 is a scale of 1e40: no float */
		if (!isfinite(f) || f == 0 || !isfinite(g))
			return err_set(e, "POS '%s': its positions map to the %s ones of "
			    "%s by a scale of %g and a shift of %g on axis %d, which a float "
			    "does not hold", pos, pe_conv_name(*native), c->pe, scale[a],
			    shift[a], a);
		c->pos_scale[a] = f;
		c->pos_shift[a] = g;
	}
	return 0;
}

int
posmap_stream(struct vit_config *c, const struct vt *ck, const struct vt *s,
    struct err *e)
{
	const char *how = vt_meta(ck, "POSITIONS");
	float cls[VIT_MAXAXES];
	int native, rc;

	if (how != NULL && strncmp(how, "native ", 7) == 0 &&
	    posmap_native(c, vt_meta(s, "POS"), vt_meta(s, "GRID"), &native,
	    e) < 0)
		return -1;
	if ((rc = pe_conv_cls(vt_meta(s, "CLSPOS"), c->axes, cls, e)) < 0)
		return -1;
	if (rc == 1 && c->cls_rotate)
		memcpy(c->cls_pos, cls, sizeof(float) * c->axes);
	e->msg[0] = '\0';
	return 0;
}

int
posmap_cell(const struct vit_config *c, const struct vt *ck, double *step,
    struct err *e)
{
	struct pe_conv from;

	if (pe_conv_parse(&from, vt_meta(ck, "POS"), vt_meta(ck, "GRID"), e) < 0)
		return -1;
	if (from.axes != c->axes)
		return err_set(e, "POS is of %d axes, the model's positions of %d",
		    from.axes, c->axes);
	for (int a = 0; a < c->axes; a++)
		step[a] = pe_conv_step(&from, a) * c->pos_scale[a];
	return 0;
}
