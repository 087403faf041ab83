/*
 * video.c - decoding sampled frames of a video file (see video.h).
 *
 * Two passes over one open file: the first counts the video stream's
 * packets (demuxing only, no decoding: one packet is one frame for video
 * codecs) and keeps them, the second decodes them and converts to RGB
 * only the frames video_sample chose.  If the
 * decoder yields fewer frames than packets, the missing frames repeat the
 * last one decoded.  Codecs run single-threaded: records are decoded in
 * parallel by the caller.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <libavcodec/avcodec.h>
#include <libavformat/avformat.h>
#include <libavutil/avstring.h>
#include <libavutil/imgutils.h>
#include <libswscale/swscale.h>

#include "video.h"

void
video_sample(int64_t n, int t, int stride, int64_t *idx)
{
	int64_t start = 0, span = (int64_t)(t - 1) * stride + 1;
	if (stride > 0 && n > span)
		start = (n - span) / 2;
	for (int i = 0; i < t; i++) {
		int64_t k = stride > 0 ? start + (int64_t)i * stride :
		    (int64_t)((2.0 * i + 1) * (double)n / (2.0 * t));
		idx[i] = k < n ? k : n - 1;
	}
}

/* Errors reach the caller through e; libav's own log lines would only
 * repeat them on stderr. */
static void
quiet(void)
{
	av_log_set_level(AV_LOG_QUIET);
}

struct dec {
	AVFormatContext	*fmt;
	AVCodecContext	*cc;
	struct SwsContext *sws;
	AVPacket	*pkt;
	AVFrame		*frame;
	int		 stream;
};

static void
dec_close(struct dec *d)
{
	sws_freeContext(d->sws);
	av_frame_free(&d->frame);
	av_packet_free(&d->pkt);
	avcodec_free_context(&d->cc);
	avformat_close_input(&d->fmt);
}

static int
averr(struct err *e, const char *path, const char *what, int code)
{
	char buf[AV_ERROR_MAX_STRING_SIZE];
	av_strerror(code, buf, sizeof buf);
	err_set(e, "%s: %s: %s", path, what, buf);
	return -1;
}

/* The demuxers of video containers and raw video streams: each reads
 * the one file it is given.  Left out are those that open other files or
 * URLs named inside it (hls, dash, concat, image2's patterns, tee ...), so
 * that a video never makes the reader open a file the user did not name. */
#define VIDEO_FORMATS	"mov,matroska,avi,mpegts,mpeg,flv,asf,ogg,nut,mxf," \
	"yuv4mpegpipe,ivf,gif,h264,hevc,m4v,mpegvideo,mjpeg,obu"

static int
dec_open(struct dec *d, const char *path, int decode, struct err *e)
{
	static pthread_once_t once = PTHREAD_ONCE_INIT;
	AVDictionary *opt = NULL;
	char *url;
	int code;
	pthread_once(&once, quiet);
	memset(d, 0, sizeof *d);
	/* "file:" + path: the path is a file name, never a URL of another
	 * protocol ("subfile:...", "http:..."), and file is the only protocol
	 * the demuxer may use. */
	if (!(url = av_asprintf("file:%s", path)) ||
	    av_dict_set(&opt, "format_whitelist", VIDEO_FORMATS, 0) < 0 ||
	    av_dict_set(&opt, "protocol_whitelist", "file", 0) < 0) {
		av_free(url);
		av_dict_free(&opt);
		return averr(e, path, "cannot open", AVERROR(ENOMEM));
	}
	code = avformat_open_input(&d->fmt, url, NULL, &opt);
	av_free(url);
	av_dict_free(&opt);
	if (code == AVERROR_INVALIDDATA || code == AVERROR(EINVAL))
		return err_set(e, "%s: not a video container FFmpeg reads "
		    "(playlists and lists of other files are refused), nor a PNG or JPEG "
		    "image", path), -1;
	if (code < 0)
		return averr(e, path, "cannot open", code);
	if ((code = avformat_find_stream_info(d->fmt, NULL)) < 0)
		return averr(e, path, "no stream info", code);
	const AVCodec *codec;
	d->stream = av_find_best_stream(d->fmt, AVMEDIA_TYPE_VIDEO, -1, -1, &codec, 0);
	if (d->stream < 0)
		return averr(e, path, "no video stream", d->stream);
	if (!(d->pkt = av_packet_alloc()))
		return averr(e, path, "packet", AVERROR(ENOMEM));
	if (!decode)
		return 0;
	if (!codec)
		return averr(e, path, "no decoder", AVERROR_DECODER_NOT_FOUND);
	if (!(d->cc = avcodec_alloc_context3(codec)) || !(d->frame = av_frame_alloc()))
		return averr(e, path, "decoder", AVERROR(ENOMEM));
	if ((code = avcodec_parameters_to_context(d->cc, d->fmt->streams[d->stream]->codecpar)) < 0)
		return averr(e, path, "decoder parameters", code);
	d->cc->thread_count = 1;
	if ((code = avcodec_open2(d->cc, codec, NULL)) < 0)
		return averr(e, path, "cannot open decoder", code);
	return 0;
}

int
video_probe(const char *path)
{
	struct err e;
	struct dec d;
	int rc = dec_open(&d, path, 0, &e);
	dec_close(&d);
	return rc == 0;
}

/* A file's packets of the video stream, read once to count them and kept
 * (referenced) while they total at most KEEP_BYTES, so that the decoding
 * pass reads them from memory and the file is opened once; past that the
 * file is read again. */
#define KEEP_BYTES	(64 << 20)
#define KEEP_PKTS	(1 << 14)	/* 9 minutes at 30 frames a second */

struct pkts {
	AVPacket **p;
	int64_t	 n;		/* the stream's packets */
	int64_t	 nkept;		/* of them in p (all of them, or none) */
	size_t	 bytes;
	int	 kept;
};

static void
pkts_drop(struct pkts *k)
{
	for (int64_t i = 0; i < k->nkept; i++)
		av_packet_free(&k->p[i]);
	free(k->p);
	k->p = NULL;
	k->nkept = 0;
	k->kept = 0;
}

/* Keep d->pkt (moving its reference) unless the limits are reached. */
static void
pkts_keep(struct pkts *k, AVPacket *pkt)
{
	if (!k->kept)
		return;
	if (k->nkept == KEEP_PKTS || k->bytes + (size_t)pkt->size > KEEP_BYTES) {
		pkts_drop(k);
		return;
	}
	if ((k->nkept & (k->nkept - 1)) == 0) {		/* grow at powers of two */
		AVPacket **p = realloc(k->p, sizeof *p * (size_t)(k->nkept ? 2 * k->nkept : 1));
		if (!p) {
			pkts_drop(k);
			return;
		}
		k->p = p;
	}
	if (!(k->p[k->nkept] = av_packet_alloc())) {
		pkts_drop(k);
		return;
	}
	av_packet_move_ref(k->p[k->nkept++], pkt);
	k->bytes += (size_t)k->p[k->nkept - 1]->size;
}

/* Count the video stream's packets of the open file d, keeping them in k. */
static int
count_frames(struct dec *d, struct pkts *k, const char *path, struct err *e)
{
	int code;
	*k = (struct pkts){ .kept = 1 };
	while ((code = av_read_frame(d->fmt, d->pkt)) >= 0) {
		if (d->pkt->stream_index == d->stream) {
			k->n++;
			pkts_keep(k, d->pkt);
		}
		av_packet_unref(d->pkt);
	}
	if (code != AVERROR_EOF)
		return averr(e, path, "reading", code);
	if (k->n == 0)
		return err_set(e, "%s: no video frames", path), -1;
	return 0;
}

/* The next packet of the video stream into d->pkt, from k's or the file:
 * 0, AVERROR_EOF after the last, or another error. */
static int
next_packet(struct dec *d, const struct pkts *k, int64_t *i)
{
	if (k->kept)
		return *i < k->nkept ? av_packet_ref(d->pkt, k->p[(*i)++]) : AVERROR_EOF;
	for (;;) {
		int code = av_read_frame(d->fmt, d->pkt);
		if (code < 0 || d->pkt->stream_index == d->stream)
			return code;
		av_packet_unref(d->pkt);
	}
}

/* Convert d->frame to RGB into frame slot k of im (allocated on the first). */
static int
keep(struct dec *d, struct image *im, int t, int k, const char *path, struct err *e)
{
	AVFrame *f = d->frame;
	if (k == 0 && image_alloc(im, t, f->height, f->width, 3) < 0)
		return err_set(e, "%s: absurd frame size %dx%d",
		    path, f->width, f->height), -1;
	if (f->height != im->h || f->width != im->w)
		return err_set(e, "%s: frame size changes", path), -1;
	d->sws = sws_getCachedContext(d->sws, f->width, f->height, f->format,
	    f->width, f->height, AV_PIX_FMT_RGB24, SWS_BILINEAR | SWS_ACCURATE_RND |
	    SWS_FULL_CHR_H_INT, NULL, NULL, NULL);
	if (!d->sws)
		return err_set(e, "%s: cannot convert pixel format", path), -1;
	uint8_t *dst[4] = { im->px + (size_t)k * image_frame_bytes(im) };
	int stride[4] = { im->w * 3 };
	sws_scale(d->sws, (const uint8_t *const *)f->data, f->linesize, 0, f->height, dst, stride);
	return 0;
}

int
video_load(const char *path, int t, int stride, struct image *im, int64_t range[2],
    struct err *e)
{
	struct dec d;
	struct pkts pk = { 0 };
	int64_t *idx = NULL, got = 0, next = 0;	/* frames decoded, packets sent */
	int k = 0, rc = -1, code = 0, flushing = 0;
	if (dec_open(&d, path, 1, e) < 0 || count_frames(&d, &pk, path, e) < 0)
		goto out;
	if (!(idx = malloc(sizeof *idx * (size_t)t))) {
		err_set(e, "%s: out of memory", path);
		goto out;
	}
	video_sample(pk.n, t, stride, idx);
	range[0] = idx[0], range[1] = idx[t - 1];
	if (!pk.kept) {		/* too large to keep: read the file again */
		dec_close(&d);
		if (dec_open(&d, path, 1, e) < 0)
			goto out;
	}
	while (k < t) {
		if (!flushing) {
			code = next_packet(&d, &pk, &next);
			if (code == AVERROR_EOF) {
				flushing = 1;
				code = avcodec_send_packet(d.cc, NULL);
			} else if (code < 0) {
				averr(e, path, "reading", code);
				goto out;
			} else {
				code = avcodec_send_packet(d.cc, d.pkt);
				av_packet_unref(d.pkt);
			}
			if (code < 0 && code != AVERROR(EAGAIN)) {
				averr(e, path, "decoding", code);
				goto out;
			}
		}
		while (k < t && (code = avcodec_receive_frame(d.cc, d.frame)) >= 0) {
			for (; k < t && idx[k] == got; k++)
				if (keep(&d, im, t, k, path, e) < 0)
					goto out;
			got++;
			av_frame_unref(d.frame);
		}
		if (code == AVERROR_EOF)
			break;
		if (code < 0 && code != AVERROR(EAGAIN)) {
			averr(e, path, "decoding", code);
			goto out;
		}
	}
	if (k == 0) {
		err_set(e, "%s: no frame could be decoded", path);
		goto out;
	}
	for (; k < t; k++)	/* fewer frames than packets: repeat the last */
		memcpy(im->px + (size_t)k * image_frame_bytes(im),
		    im->px + (size_t)(k - 1) * image_frame_bytes(im), image_frame_bytes(im));
	rc = 0;
out:
	pkts_drop(&pk);
	dec_close(&d);
	free(idx);
	return rc;
}
