/*
 * normalize.h - per-channel mean/std normalization of u8 pixels,
 * (v / 255 - mean[c]) / std[c], with named presets of common data sets.
 */
#ifndef NORMALIZE_H
#define NORMALIZE_H

#define NORM_MAXC	4

struct norm {
	int	 c;			/* channels */
	double	 mean[NORM_MAXC];	/* on the 0..1 scale */
	double	 std[NORM_MAXC];
};

/* Fill n with preset name for c channels (a 3-channel preset's mean and
 * std averaged for c = 1).  0, or -1 for an unknown name. */
int	 norm_preset(struct norm *n, const char *name, int c);
/* The preset names, space separated, for usage messages. */
const char *norm_presets(void);
/* Parse "m0,m1,m2" into v[c] (one value is repeated); 0, or -1. */
int	 norm_parse(const char *s, double *v, int c);
/* lut[k][v] = (v / 255 - mean[k]) / std[k] for every channel k < n->c. */
void	 norm_lut(const struct norm *n, float (*lut)[256]);
/* Format "a,b,c" (9 significant digits each) into buf of size len. */
void	 norm_format(const double *v, int c, char *buf, int len);

#endif
