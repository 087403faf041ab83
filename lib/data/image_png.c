/*
 * image_png.c - PNG decoding through libpng's classic API, asking for the
 * stored values as PIL's Image.convert("RGB"/"L") gives them: palettes
 * expanded, 1/2/4-bit grey widened, 16-bit samples scaled by 255/65535
 * and rounded, alpha and transparency dropped, no gamma or colour
 * conversion.  (The simplified API re-encodes 16-bit and alpha images in
 * linear light, which is not what data set loaders do.)
 */
#include <png.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "image.h"

static void
on_error(png_structp png, png_const_charp msg)
{
	snprintf(png_get_error_ptr(png), 200, "%s", msg);
	png_longjmp(png, 1);
}

static void
on_warning(png_structp png, png_const_charp msg)
{
	/* Benign (such as "iCCP: known incorrect sRGB profile"): data errors
	 * come through on_error. */
}

int
image_png_load(const char *path, struct image *im, struct err *e)
{
	char msg[200] = "";
	unsigned char sig[8];
	FILE *fp = fopen(path, "rb");
	png_structp png = NULL;
	png_infop info = NULL;
	png_bytep *volatile rows = NULL;

	if (!fp) {
		err_set(e, "%s: %m", path);
		return -1;
	}
	if (fread(sig, 1, 8, fp) != 8 || png_sig_cmp(sig, 0, 8)) {
		err_set(e, "%s: not a PNG file", path);
		fclose(fp);
		return -1;
	}
	png = png_create_read_struct(PNG_LIBPNG_VER_STRING, msg, on_error, on_warning);
	if (!png || !(info = png_create_info_struct(png))) {
		err_set(e, "%s: PNG: out of memory", path);
		png_destroy_read_struct(&png, NULL, NULL);
		fclose(fp);
		return -1;
	}
	if (setjmp(png_jmpbuf(png))) {
		err_set(e, "%s: PNG: %s%s", path, msg,
		    feof(fp) ? " (truncated file)" : "");
		png_destroy_read_struct(&png, &info, NULL);
		free(rows);
		fclose(fp);
		return -1;
	}
	png_init_io(png, fp);
	png_set_sig_bytes(png, 8);
	png_read_info(png, info);
	png_uint_32 w = png_get_image_width(png, info), h = png_get_image_height(png, info);
	int type = png_get_color_type(png, info), depth = png_get_bit_depth(png, info);
	if (w > IMAGE_MAXSIDE || h > IMAGE_MAXSIDE) {
		snprintf(msg, sizeof msg, "absurd size %ux%u", (unsigned)w, (unsigned)h);
		png_longjmp(png, 1);
	}
	if (type == PNG_COLOR_TYPE_PALETTE)
		png_set_palette_to_rgb(png);
	if (type == PNG_COLOR_TYPE_GRAY && depth < 8)
		png_set_expand_gray_1_2_4_to_8(png);
	if (depth == 16)
		png_set_scale_16(png);
	png_set_strip_alpha(png);
	png_set_interlace_handling(png);
	png_read_update_info(png, info);
	int c = png_get_channels(png, info);
	if ((c != 1 && c != 3) || image_alloc(im, 1, (int)h, (int)w, c) < 0 ||
	    !(rows = malloc(sizeof *rows * h))) {
		snprintf(msg, sizeof msg, "cannot hold %ux%u pixels of %d channels",
		    (unsigned)w, (unsigned)h, c);
		png_longjmp(png, 1);
	}
	for (png_uint_32 y = 0; y < h; y++)
		rows[y] = im->px + (size_t)y * w * c;
	png_read_image(png, rows);
	png_read_end(png, NULL);
	png_destroy_read_struct(&png, &info, NULL);
	free(rows);
	fclose(fp);
	return 0;
}
