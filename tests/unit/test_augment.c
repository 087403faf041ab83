/*
 * test_augment.c - lib/augment and lib/randaugment: magnitudes against
 * torchvision's table, each operation against its definition on small
 * images, and determinism by generator stream.
 */
#include <stdlib.h>
#include <string.h>

#include "augment.h"
#include "randaugment.h"
#include "test.h"

#define H 8
#define W 10

static void
fill(struct image *im, int c, unsigned seed)
{
	image_alloc(im, 1, H, W, c);
	srand(seed);
	for (size_t i = 0; i < (size_t)H * W * c; i++)
		im->px[i] = (uint8_t)(rand() % 256);
}

static uint8_t
px(const struct image *im, int y, int x, int k)
{
	return im->px[((size_t)y * im->w + x) * im->c + k];
}

static int
same(const struct image *a, const struct image *b)
{
	return a->h == b->h && a->w == b->w && a->c == b->c && a->t == b->t &&
	    memcmp(a->px, b->px, (size_t)a->t * image_frame_bytes(a)) == 0;
}

static void
copy(struct image *dst, const struct image *src)
{
	image_alloc(dst, src->t, src->h, src->w, src->c);
	memcpy(dst->px, src->px, (size_t)src->t * image_frame_bytes(src));
}

int
main(void)
{
	struct image a = { 0 }, b = { 0 }, tmp = { 0 }, orig = { 0 };
	struct rng r;

	/* torchvision: linspace(0, max, 31)[M]; Posterize 8 - round(M / 7.5). */
	CHECK_CLOSE(ra_magnitude(RA_SHEAR_X, 14, 32, 32), 0.14, 1e-12, "ShearX at M=14");
	CHECK_CLOSE(ra_magnitude(RA_TRANSLATE_X, 30, 32, 40), 150.0 / 331 * 40, 1e-12, "TranslateX at M=30 uses the width");
	CHECK_CLOSE(ra_magnitude(RA_TRANSLATE_Y, 30, 32, 40), 150.0 / 331 * 32, 1e-12, "TranslateY uses the height");
	CHECK_CLOSE(ra_magnitude(RA_ROTATE, 14, 32, 32), 14, 1e-12, "Rotate at M=14: 14 degrees");
	CHECK_CLOSE(ra_magnitude(RA_COLOR, 14, 32, 32), 0.42, 1e-12, "Color at M=14");
	CHECK(ra_magnitude(RA_POSTERIZE, 14, 32, 32) == 6 && ra_magnitude(RA_POSTERIZE, 0, 32, 32) == 8 &&
	    ra_magnitude(RA_POSTERIZE, 30, 32, 32) == 4, "Posterize bits 8..4");
	CHECK_CLOSE(ra_magnitude(RA_SOLARIZE, 14, 32, 32), 136, 1e-12, "Solarize threshold at M=14");
	CHECK(ra_signed(RA_ROTATE) && ra_signed(RA_SHARPNESS) && !ra_signed(RA_SOLARIZE) &&
	    !ra_signed(RA_EQUALIZE), "signed operations");
	CHECK(strcmp(ra_name(RA_AUTOCONTRAST), "AutoContrast") == 0, "names");

	/* Magnitude 0 (factor 1, angle 0, shift 0) leaves the image alone. */
	fill(&orig, 3, 1);
	int ident[] = { RA_IDENTITY, RA_SHEAR_X, RA_SHEAR_Y, RA_TRANSLATE_X, RA_TRANSLATE_Y,
		RA_ROTATE, RA_BRIGHTNESS, RA_COLOR, RA_CONTRAST, RA_SHARPNESS };
	for (size_t i = 0; i < sizeof ident / sizeof ident[0]; i++) {
		copy(&a, &orig);
		ra_apply(&a, &tmp, ident[i], 0);
		CHECK(same(&a, &orig), "%s at magnitude 0 is the identity", ra_name(ident[i]));
	}
	copy(&a, &orig);
	ra_apply(&a, &tmp, RA_TRANSLATE_X, 3.7);	/* whole pixels: 3 */
	int ok = 1;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			ok &= px(&a, y, x, 1) == (x < 3 ? 0 : px(&orig, y, x - 3, 1));
	CHECK(ok, "TranslateX 3.7 shifts right by 3, black fill");
	copy(&a, &orig);
	ra_apply(&a, &tmp, RA_TRANSLATE_Y, -2);
	ok = 1;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			ok &= px(&a, y, x, 0) == (y >= H - 2 ? 0 : px(&orig, y + 2, x, 0));
	CHECK(ok, "TranslateY -2 shifts up by 2");
	copy(&a, &orig);
	ra_apply(&a, &tmp, RA_ROTATE, 180);
	ok = 1;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++)
			ok &= px(&a, y, x, 2) == px(&orig, H - 1 - y, W - 1 - x, 2);
	CHECK(ok, "Rotate 180 turns the image over about its centre");
	copy(&a, &orig);
	ra_apply(&a, &tmp, RA_SHEAR_X, 0.25);
	ok = 1;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int sx = (int)((x + 0.5) + 0.25 * (y + 0.5));
			ok &= px(&a, y, x, 0) == (sx < W ? px(&orig, y, sx, 0) : 0);
		}
	CHECK(ok, "ShearX 0.25: out(x, y) = in(x + 0.25 y, y)");

	copy(&a, &orig);
	ra_apply(&a, &tmp, RA_POSTERIZE, 3);
	ok = 1;
	for (size_t i = 0; i < (size_t)H * W * 3; i++)
		ok &= a.px[i] == (orig.px[i] & 0xe0);
	CHECK(ok, "Posterize 3 keeps the top 3 bits");
	copy(&a, &orig);
	ra_apply(&a, &tmp, RA_SOLARIZE, 128);
	ok = 1;
	for (size_t i = 0; i < (size_t)H * W * 3; i++)
		ok &= a.px[i] == (orig.px[i] >= 128 ? 255 - orig.px[i] : orig.px[i]);
	CHECK(ok, "Solarize 128 inverts values >= 128");
	copy(&a, &orig);
	ra_apply(&a, &tmp, RA_BRIGHTNESS, -0.5);
	ok = 1;
	for (size_t i = 0; i < (size_t)H * W * 3; i++)
		ok &= a.px[i] == (uint8_t)(0.5f * orig.px[i]);
	CHECK(ok, "Brightness -0.5 halves (truncating)");
	copy(&a, &orig);
	ra_apply(&a, &tmp, RA_COLOR, -1);
	ok = 1;
	for (int y = 0; y < H; y++)
		for (int x = 0; x < W; x++) {
			int g = (int)(0.2989f * px(&orig, y, x, 0) + 0.587f * px(&orig, y, x, 1) + 0.114f * px(&orig, y, x, 2));
			ok &= abs(px(&a, y, x, 0) - g) <= 1 && px(&a, y, x, 0) == px(&a, y, x, 2);
		}
	CHECK(ok, "Color -1 gives the grey image");

	/* AutoContrast stretches each channel to 0..255. */
	image_alloc(&a, 1, H, W, 1);
	for (int i = 0; i < H * W; i++)
		a.px[i] = (uint8_t)(50 + i % 51);
	ra_apply(&a, &tmp, RA_AUTOCONTRAST, 0);
	int lo = 255, hi = 0;
	for (int i = 0; i < H * W; i++)
		lo = a.px[i] < lo ? a.px[i] : lo, hi = a.px[i] > hi ? a.px[i] : hi;
	CHECK(lo == 0 && hi == 255 && a.px[1] == 5, "AutoContrast 50..100 -> 0..255 (51 -> 5)");
	/* Equalize: a flat histogram is left as it is; two levels go to the ends. */
	image_alloc(&a, 1, 16, 32, 1);
	for (int i = 0; i < 512; i++)
		a.px[i] = (uint8_t)(i % 256);
	copy(&b, &a);
	ra_apply(&a, &tmp, RA_EQUALIZE, 0);
	CHECK(same(&a, &b), "Equalize keeps a flat histogram");
	for (int i = 0; i < 512; i++)
		a.px[i] = i < 384 ? 10 : 20;
	ra_apply(&a, &tmp, RA_EQUALIZE, 0);
	CHECK(a.px[0] == 0 && a.px[511] == 255, "Equalize of 3:1 two levels (PIL): %d %d", a.px[0], a.px[511]);

	/* Whole RandAugment: same stream, same result; values change with it;
	 * every frame of a clip gets the same operations. */
	image_alloc(&orig, 2, H, W, 3);
	srand(3);
	for (size_t i = 0; i < image_frame_bytes(&orig); i++)
		orig.px[i] = orig.px[i + image_frame_bytes(&orig)] = (uint8_t)(rand() % 256);
	int differ = 0, frames_same = 1, deterministic = 1;
	for (int s = 0; s < 200; s++) {
		copy(&a, &orig);
		copy(&b, &orig);
		rng_seed(&r, 11, s);
		randaugment(&a, &tmp, 2, 14, &r);
		rng_seed(&r, 11, s);
		randaugment(&b, &tmp, 2, 14, &r);
		deterministic &= same(&a, &b);
		differ += !same(&a, &orig);
		frames_same &= memcmp(a.px, a.px + image_frame_bytes(&a), image_frame_bytes(&a)) == 0;
	}
	CHECK(deterministic, "RandAugment: same stream, same bytes");
	CHECK(differ > 150, "RandAugment(2, 14) changes most images (%d of 200)", differ);
	CHECK(frames_same, "RandAugment treats every frame of a clip alike");

	/* Crop with padding: a window of the zero-padded image. */
	fill(&orig, 1, 4);
	int seen[9] = { 0 };
	for (int s = 0; s < 300; s++) {
		rng_seed(&r, 5, s);
		aug_crop_pad(&orig, &a, H, W, 1, &r);
		int found = -1;
		for (int dy = -1; dy <= 1; dy++)
			for (int dx = -1; dx <= 1; dx++) {
				int m = 1;
				for (int y = 0; y < H; y++)
					for (int x = 0; x < W; x++) {
						int sy = y + dy, sx = x + dx;
						int v = sy < 0 || sx < 0 || sy >= H || sx >= W ? 0 : px(&orig, sy, sx, 0);
						m &= px(&a, y, x, 0) == v;
					}
				if (m)
					found = (dy + 1) * 3 + dx + 1;
			}
		if (found >= 0)
			seen[found]++;
		else
			seen[0] = -1000;
	}
	ok = 1;
	for (int i = 0; i < 9; i++)
		ok &= seen[i] > 10;
	CHECK(ok, "crop-pad 1: every one of the 9 offsets, and nothing else");

	/* Flip: half the streams mirror, the others leave the image alone. */
	int flips = 0, fine = 1;
	for (int s = 0; s < 400; s++) {
		copy(&a, &orig);
		rng_seed(&r, 6, s);
		aug_hflip(&a, &r);
		int mirrored = 1;
		for (int y = 0; y < H; y++)
			for (int x = 0; x < W; x++)
				mirrored &= px(&a, y, x, 0) == px(&orig, y, W - 1 - x, 0);
		flips += mirrored;
		fine &= mirrored || same(&a, &orig);
	}
	CHECK(fine && flips > 150 && flips < 250, "flip: mirrored %d of 400 times", flips);

	/* Erasing: p = 1 always erases a box of the fill value, of area 2..33%. */
	image_alloc(&orig, 1, 40, 40, 3);
	memset(orig.px, 100, image_frame_bytes(&orig));
	int boxes = 1;
	for (int s = 0; s < 100; s++) {
		copy(&a, &orig);
		rng_seed(&r, 7, s);
		aug_erase(&a, 1, (const uint8_t[]){ 1, 2, 3 }, &r);
		int n = 0;
		for (int i = 0; i < 1600; i++)
			n += a.px[3 * i] == 1 && a.px[3 * i + 1] == 2 && a.px[3 * i + 2] == 3;
		boxes &= n >= 0.02 * 1600 * 0.7 && n <= 0.33 * 1600 * 1.3;
	}
	CHECK(boxes, "erase p=1: a box of about 2%%..33%% of the area");
	copy(&a, &orig);
	rng_seed(&r, 7, 0);
	aug_erase(&a, 0, (const uint8_t[]){ 1, 2, 3 }, &r);
	CHECK(same(&a, &orig), "erase p=0 does nothing");

	/* RandomResizedCrop: the size asked for; a constant image stays so. */
	int sized = 1;
	for (int s = 0; s < 50; s++) {
		rng_seed(&r, 8, s);
		aug_rrc(&orig, &a, 24, 16, 0.08, 1, &r);
		sized &= a.h == 24 && a.w == 16 && a.px[0] == 100 && a.px[24 * 16 * 3 - 1] == 100;
	}
	CHECK(sized, "RandomResizedCrop to 24x16");

	image_free(&a);
	image_free(&b);
	image_free(&tmp);
	image_free(&orig);
	return test_done();
}
