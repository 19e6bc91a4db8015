// What a HEIF file declares, read from its boxes as libheif 1.15 reads them, for heif-decode's checks before
// libheif decodes anything: the one 'meta' box, the 'dimg' references of derived images, and the size each
// HEVC item's decoder configuration (hvcC) codes against the size its ispe declares.
#ifndef THUMBD_HEIF_BOXES_H
#define THUMBD_HEIF_BOXES_H

#include <stddef.h>
#include <stdint.h>

/* heif-decode's exit statuses (see heif-decode.c). */
enum { EXIT_FAIL = 1, EXIT_INPUT = 2, EXIT_TOO_LARGE = 3, EXIT_USAGE = 64 };

struct span { const uint8_t *at, *end; };

/* The payload of the one top-level 'meta' box (after its version and flags), or NULL with *problem set. The
 * top-level boxes are walked as libheif 1.15 walks them: up to the first that is not whole (fewer than 8 bytes,
 * a size of 0 or under its header, past the end), where libheif stops reading, silently (trailing zeros, a
 * streaming writer's size-0 'mdat', a last box cut short). Refused: a 'meta' there (a size-0 'meta' after the
 * real one, as a decoy, hid that one from these checks), more than one 'meta' before it, or none. */
const uint8_t *heif_meta (const uint8_t *data, size_t length, const uint8_t **meta_end, const char **problem);

/* The payload of the first child box of `type` in [at, end), as libheif's get_child_box finds it; NULL if none
 * or the walk meets a box that does not fit (then *overrun is set: libheif fails such a 'meta'). */
const uint8_t *heif_child (const uint8_t *at, const uint8_t *end, const char *type, const uint8_t **box_end, int *overrun);

/* The number of 'dimg' references in the meta's iref (more than `limit`: not counted further), or -1 when a
 * derived image is the input of one (or of itself). */
long heif_derived_references (const uint8_t *meta, const uint8_t *meta_end, long limit);

/* Coded sizes, in pixels, that the hvcC of some HEVC item codes and that match its ispe. */
enum { HEIF_MAX_CODED_SIZES = 64 };
struct heif_coded_sizes { int count; uint32_t w[HEIF_MAX_CODED_SIZES], h[HEIF_MAX_CODED_SIZES]; };

/* Checks every 'hvc1' item: the SPS in its hvcC codes a picture whose size, once the SPS's conformance window
 * crops it, is the one its ispe declares (at most 63 rows or columns more, before the crop: HEVC codes whole
 * blocks of up to 64), with at most `max_pixels` coded. Sides swapped match too: libheif 1.15 itself writes the
 * ispe of an image encoded with an orientation as the rotated size. Returns 0 and the coded sizes seen; EXIT_TOO_LARGE or
 * EXIT_INPUT (does not match, or no SPS, no ispe) with *problem set. */
int heif_check_coded_sizes (const uint8_t *meta, const uint8_t *meta_end, unsigned long long max_pixels,
                            struct heif_coded_sizes *sizes, char *problem, size_t problem_length);

#endif
