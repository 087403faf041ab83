/*
 * normalize.c - normalization presets and lookup tables (normalize.h).
 * The values are the ones the torchvision/timm recipes use.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "normalize.h"

static const struct {
	const char *name;
	int	 c;
	double	 mean[3], std[3];
} presets[] = {
	{ "imagenet", 3, { 0.485, 0.456, 0.406 }, { 0.229, 0.224, 0.225 } },
	{ "cifar10", 3, { 0.4914, 0.4822, 0.4465 }, { 0.2470, 0.2435, 0.2616 } },
	{ "cifar100", 3, { 0.5071, 0.4865, 0.4409 }, { 0.2673, 0.2564, 0.2762 } },
	{ "mnist", 1, { 0.1307 }, { 0.3081 } },
	{ "fashion-mnist", 1, { 0.2860 }, { 0.3530 } },
	{ "kinetics", 3, { 0.45, 0.45, 0.45 }, { 0.225, 0.225, 0.225 } },
	{ "half", 3, { 0.5, 0.5, 0.5 }, { 0.5, 0.5, 0.5 } },
	{ "none", 3, { 0, 0, 0 }, { 1, 1, 1 } },
};

int
norm_preset(struct norm *n, const char *name, int c)
{
	for (size_t i = 0; i < sizeof presets / sizeof presets[0]; i++) {
		if (strcmp(name, presets[i].name))
			continue;
		double m = 0, s = 0;
		for (int k = 0; k < presets[i].c; k++) {
			m += presets[i].mean[k] / presets[i].c;
			s += presets[i].std[k] / presets[i].c;
		}
		n->c = c;
		for (int k = 0; k < c; k++) {
			int same = presets[i].c == c;
			n->mean[k] = same ? presets[i].mean[k] : m;
			n->std[k] = same ? presets[i].std[k] : s;
		}
		return 0;
	}
	return -1;
}

const char *
norm_presets(void)
{
	return "imagenet cifar10 cifar100 mnist fashion-mnist kinetics half none";
}

int
norm_parse(const char *s, double *v, int c)
{
	int k = 0;
	const char *p = s;
	for (;;) {
		char *end;
		if (k == c)
			return -1;
		v[k++] = strtod(p, &end);
		if (end == p)
			return -1;
		if (*end == 0)
			break;
		if (*end != ',')
			return -1;
		p = end + 1;
	}
	if (k == 1)
		for (; k < c; k++)
			v[k] = v[0];
	return k == c ? 0 : -1;
}

void
norm_lut(const struct norm *n, float (*lut)[256])
{
	for (int k = 0; k < n->c; k++)
		for (int v = 0; v < 256; v++)
			lut[k][v] = (float)((v / 255.0 - n->mean[k]) / n->std[k]);
}

void
norm_format(const double *v, int c, char *buf, int len)
{
	int o = 0;
	buf[0] = 0;
	for (int k = 0; k < c && o < len; k++)
		o += snprintf(buf + o, (size_t)(len - o), "%s%.9g", k ? "," : "", v[k]);
}
