// The still-image decoders of native/image-decode (native/still-decode.c).
#ifndef THUMBD_STILL_DECODE_H
#define THUMBD_STILL_DECODE_H
#include <stddef.h>
#include <stdint.h>

enum still_fit_mode { FIT_NONE, FIT_COVER, FIT_CONTAIN, FIT_FILL, FIT_INSIDE, FIT_OUTSIDE };
/* The resize the pool thread will make: sharp's fit, a side of 0 not given. */
struct still_fit { enum still_fit_mode mode; long width, height; };

/* The pixel limit of one picture; of an animation, the most frames and the pixels of all its frames together
 * (sharp's header pass refuses an animation over them before decoding a frame: so does this, from its own count). */
struct still_limits { uint64_t max_pixels, max_frames, frame_budget; };
/* FRAMES_ALL: the output keeps an animation whole, which sharp decodes (exit 4 for an animation, before a frame). */
enum still_frames { FRAMES_FIRST, FRAMES_ALL };

/* Decodes FORMAT (png, webp, gif) from memory and writes the picture on stdout; the exit status. */
int still_decode (const char *format, const uint8_t *data, size_t size, const struct still_limits *limits, enum still_frames frames, const struct still_fit *fit);

/* native/image-decode.c: all of DATA on stdout, or -1. */
int write_all (const void *data, size_t length);

#endif
