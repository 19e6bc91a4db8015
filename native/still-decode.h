// The still-image decoders of native/image-decode (native/still-decode.c).
#ifndef THUMBD_STILL_DECODE_H
#define THUMBD_STILL_DECODE_H
#include <stddef.h>
#include <stdint.h>

enum still_fit_mode { FIT_NONE, FIT_COVER, FIT_CONTAIN, FIT_FILL, FIT_INSIDE, FIT_OUTSIDE };
/* The resize the pool thread will make: sharp's fit, a side of 0 not given. */
struct still_fit { enum still_fit_mode mode; long width, height; };

/* Decodes FORMAT (png, webp, gif) from memory and writes the picture on stdout; the exit status. */
int still_decode (const char *format, const uint8_t *data, size_t size, uint64_t max_pixels, const struct still_fit *fit);

#endif
