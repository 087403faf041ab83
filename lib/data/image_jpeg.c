/*
 * image_jpeg.c - JPEG decoding through libjpeg(-turbo).  Its error handler
 * would exit(); ours longjmps back with the message, and treats warnings
 * (a truncated file is only a warning to libjpeg) as errors too.
 */
#include <setjmp.h>
#include <stdio.h>
#include <string.h>

#include <jpeglib.h>

#include "image.h"

struct jerr {
	struct jpeg_error_mgr mgr;
	jmp_buf	 jmp;
	char	 msg[JMSG_LENGTH_MAX];
};

static void
on_error(j_common_ptr cinfo)
{
	struct jerr *e = (struct jerr *)cinfo->err;
	e->mgr.format_message(cinfo, e->msg);
	longjmp(e->jmp, 1);
}

static void
on_message(j_common_ptr cinfo, int level)
{
	if (level < 0)		/* a warning: corrupt or truncated data */
		on_error(cinfo);
}

int
image_jpeg_load(const char *path, struct image *im, struct err *e)
{
	struct jpeg_decompress_struct ci;
	struct jerr je;
	FILE *fp = fopen(path, "rb");
	if (!fp) {
		err_set(e, "%s: %m", path);
		return -1;
	}
	ci.err = jpeg_std_error(&je.mgr);
	je.mgr.error_exit = on_error;
	je.mgr.emit_message = on_message;
	if (setjmp(je.jmp)) {
		err_set(e, "%s: JPEG: %s", path, je.msg);
		jpeg_destroy_decompress(&ci);
		fclose(fp);
		return -1;
	}
	jpeg_create_decompress(&ci);
	jpeg_stdio_src(&ci, fp);
	jpeg_read_header(&ci, TRUE);
	if (ci.num_components != 1 && ci.num_components != 3) {
		snprintf(je.msg, sizeof je.msg, "%d components (CMYK?) not supported",
		    ci.num_components);
		longjmp(je.jmp, 1);
	}
	ci.out_color_space = ci.num_components == 1 ? JCS_GRAYSCALE : JCS_RGB;
	jpeg_start_decompress(&ci);
	if (image_alloc(im, 1, (int)ci.output_height, (int)ci.output_width,
	    ci.output_components) < 0) {
		snprintf(je.msg, sizeof je.msg, "absurd size %ux%u",
		    ci.output_width, ci.output_height);
		longjmp(je.jmp, 1);
	}
	size_t stride = (size_t)im->w * im->c;
	while (ci.output_scanline < ci.output_height) {
		JSAMPROW row = im->px + ci.output_scanline * stride;
		jpeg_read_scanlines(&ci, &row, 1);
	}
	jpeg_finish_decompress(&ci);
	jpeg_destroy_decompress(&ci);
	fclose(fp);
	return 0;
}
