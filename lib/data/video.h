/*
 * video.h - video files through FFmpeg's libraries (libavformat,
 * libavcodec, libswscale): any codec they decode, in the demuxers of video
 * containers and raw streams alone (video.c's VIDEO_FORMATS), through the
 * file protocol alone, so that a file never makes the reader open another
 * (playlists, concat lists and image sequences are refused).
 */
#ifndef VIDEO_H
#define VIDEO_H

#include <stdint.h>

#include "err.h"

#include "image.h"

/* Indices of the t frames kept out of n (n > 0) into idx[t]: with stride 0
 * the middle frame of each of t equal segments, floor((i + 0.5) n / t);
 * else frames start + i stride of a window centred in the clip, the last
 * frame repeated past its end. */
void	 video_sample(int64_t n, int t, int stride, int64_t *idx);
/* 1 when FFmpeg opens path and finds a video stream in it, else 0. */
int	 video_probe(const char *path);
/* Decode the first video stream of path and keep t frames chosen by
 * video_sample, as RGB at the native size, into im (t x h x w x 3), and
 * the numbers of the first and last frames chosen into range[2].
 * 0, or -1 with e. */
int	 video_load(const char *path, int t, int stride, struct image *im,
	    int64_t range[2], struct err *e);

#endif
