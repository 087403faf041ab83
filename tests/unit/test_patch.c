/*
 * test_patch.c - lib/patch (token and value order against the index
 * formula of vitpipe(5)), lib/resize, lib/normalize, channel conversion
 * and the frame sampling of lib/video.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "normalize.h"
#include "patch.h"
#include "resize.h"
#include "test.h"
#include "video.h"

int
main(void)
{
	struct image im = { 0 }, out = { 0 };

	/* A clip of 4 frames of 6 x 8 pixels, 3 channels, in 2 x 3 x 2 tubelets. */
	int T = 4, Hh = 6, Ww = 8, C = 3, pt = 2, ph = 3, pw = 2;
	image_alloc(&im, T, Hh, Ww, C);
	for (size_t i = 0; i < (size_t)T * Hh * Ww * C; i++)
		im.px[i] = (uint8_t)(i * 7 + 3);
	CHECK(patch_fits(&im, pt, ph, pw) && !patch_fits(&im, 3, ph, pw), "patch_fits");
	int64_t nv = patch_values(&im, pt, ph, pw), ntok = (T / pt) * (Hh / ph) * (Ww / pw);
	CHECK(nv == 36, "values per token pt ph pw c = 36");
	uint8_t *tok = malloc((size_t)(ntok * nv));
	float *ftok = malloc(sizeof(float) * (size_t)(ntok * nv));
	patch_u8(&im, pt, ph, pw, tok);
	int ok = 1;
	for (int gt = 0; gt < T / pt; gt++)
		for (int gy = 0; gy < Hh / ph; gy++)
			for (int gx = 0; gx < Ww / pw; gx++)
				for (int dt = 0; dt < pt; dt++)
					for (int dy = 0; dy < ph; dy++)
						for (int dx = 0; dx < pw; dx++)
							for (int c = 0; c < C; c++) {
								int64_t t = ((int64_t)gt * (Hh / ph) + gy) * (Ww / pw) + gx;
								int64_t v = ((dt * ph + dy) * pw + dx) * C + c;
								size_t src = ((((size_t)gt * pt + dt) * Hh + gy * ph + dy) * Ww + gx * pw + dx) * C + c;
								ok &= tok[t * nv + v] == im.px[src];
							}
	CHECK(ok, "tokens row-major over (t, y, x), values (dt, dy, dx, c)");
	struct norm n;
	float lut[NORM_MAXC][256];
	CHECK(norm_preset(&n, "imagenet", 3) == 0 && n.mean[2] == 0.406 && n.std[0] == 0.229, "imagenet preset");
	CHECK(norm_preset(&n, "nosuch", 3) == -1, "unknown preset");
	norm_lut(&n, lut);
	patch_f32(&im, pt, ph, pw, (const float (*)[256])lut, ftok);
	ok = 1;
	for (int64_t i = 0; i < ntok * nv; i++) {
		int c = (int)(i % C);
		ok &= fabsf(ftok[i] - (float)((tok[i] / 255.0 - n.mean[c]) / n.std[c])) < 1e-6f;
	}
	CHECK(ok, "f32 tokens: (v / 255 - mean[c]) / std[c]");
	CHECK(norm_preset(&n, "cifar10", 1) == 0 && fabs(n.mean[0] - (0.4914 + 0.4822 + 0.4465) / 3) < 1e-12,
	    "a 3-channel preset averaged for 1 channel");
	double v[3];
	CHECK(norm_parse("0.5", v, 3) == 0 && v[2] == 0.5, "one value repeated");
	CHECK(norm_parse("1,2,3", v, 3) == 0 && v[1] == 2, "three values");
	CHECK(norm_parse("1,2", v, 3) == -1 && norm_parse("1,x,3", v, 3) == -1 &&
	    norm_parse("1,2,3,4", v, 3) == -1, "bad lists refused");
	char buf[64];
	norm_format((double[]){ 0.485, 0.456, 0.406 }, 3, buf, sizeof buf);
	CHECK(strcmp(buf, "0.485,0.456,0.406") == 0, "format: %s", buf);

	/* Channels: luma and grey repeated. */
	image_alloc(&im, 1, 1, 2, 3);
	memcpy(im.px, (uint8_t[]){ 255, 0, 0, 10, 20, 30 }, 6);
	image_set_channels(&im, 1);
	CHECK(im.c == 1 && im.px[0] == 76 && im.px[1] == 18, "luma 0.299 0.587 0.114: %d %d", im.px[0], im.px[1]);
	image_set_channels(&im, 3);
	CHECK(im.c == 3 && im.px[3] == 18 && im.px[5] == 18 && im.px[0] == 76, "grey to RGB");

	/* Resize: a constant stays constant, a ramp stays a ramp, same size copies. */
	image_alloc(&im, 2, 20, 30, 1);
	for (int f = 0; f < 2; f++)
		for (int y = 0; y < 20; y++)
			for (int x = 0; x < 30; x++)
				im.px[(f * 20 + y) * 30 + x] = (uint8_t)(f ? 77 : 4 * x + 10);
	CHECK(image_resize(&im, 0, 0, 20, 30, &out, 10, 15) == 0 && out.t == 2, "resize a clip");
	ok = 1;
	for (int y = 0; y < 10; y++)
		for (int x = 1; x < 14; x++)	/* interior: the mean of 2 columns */
			ok &= fabs(out.px[y * 15 + x] - (4 * (2 * x + 0.5) + 10)) <= 1 &&
			    out.px[150 + y * 15 + x] == 77;
	CHECK(ok, "halving a ramp averages it; a constant frame stays");
	CHECK(image_resize(&im, 3, 4, 10, 12, &out, 10, 12) == 0 && out.px[0] == 4 * 4 + 10 &&
	    out.px[11] == 4 * 15 + 10, "same size: an exact crop");
	CHECK(image_resize(&im, 0, 0, 20, 30, &out, 47, 61) == 0 && out.h == 47 && out.w == 61 &&
	    out.px[47 * 61 + 100] == 77, "enlarging");
	CHECK(image_crop(&im, -2, 28, &out, 4, 4) == 0 && out.px[0] == 0 && out.px[2 * 4 + 0] == 4 * 28 + 10 &&
	    out.px[2 * 4 + 2] == 0, "crop outside the image pads with zeros");
	int oh, ow;
	resize_shorter(480, 640, 224, &oh, &ow);
	CHECK(oh == 224 && ow == 298, "shorter side 224 of 480x640: %dx%d", oh, ow);

	/* Frame sampling. */
	int64_t idx[8];
	video_sample(16, 4, 0, idx);
	CHECK(idx[0] == 2 && idx[1] == 6 && idx[2] == 10 && idx[3] == 14, "uniform: segment middles");
	video_sample(3, 5, 0, idx);
	CHECK(idx[0] == 0 && idx[1] == 0 && idx[2] == 1 && idx[3] == 2 && idx[4] == 2, "uniform, fewer frames than wanted");
	video_sample(16, 3, 5, idx);
	CHECK(idx[0] == 2 && idx[1] == 7 && idx[2] == 12, "stride 5, centred window");
	video_sample(6, 4, 3, idx);
	CHECK(idx[0] == 0 && idx[1] == 3 && idx[2] == 5 && idx[3] == 5, "stride past the end repeats the last frame");

	free(tok);
	free(ftok);
	image_free(&im);
	image_free(&out);
	return test_done();
}
