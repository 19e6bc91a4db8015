// The picture size an HEVC sequence parameter set (SPS) makes the decoder allocate, read as libde265 reads it
// (H.265 7.3.2.2, up to the conformance window): what a HEIF item decodes to, whatever its ispe declares.
#ifndef THUMBD_HEVC_SPS_H
#define THUMBD_HEVC_SPS_H

#include <stddef.h>
#include <stdint.h>

enum { HEVC_NAL_SPS = 33 };

struct hevc_size {
  uint32_t coded_w, coded_h;    /* pic_width/height_in_luma_samples: the planes libde265 allocates */
  uint32_t cropped_w, cropped_h;  /* after the conformance window: the picture it outputs */
};

/* The NAL unit type of a NAL unit (its 2-byte header first), or -1 if it has no header. */
int hevc_nal_type (const uint8_t *nal, size_t length);

/* Whether a NAL unit starts a picture libde265 decodes: a slice segment (type < 32) of layer 0 (libde265 drops
 * the others) whose first_slice_segment_in_pic_flag is set. Unescaped as hevc_sps_size() unescapes. */
int hevc_starts_picture (const uint8_t *nal, size_t length);

/* Parses an SPS NAL unit (header included, emulation prevention bytes in place). 0, or -1 when it is not an SPS
 * or ends before the conformance window, or its sizes are out of range (0, or a window as large as the picture). */
int hevc_sps_size (const uint8_t *nal, size_t length, struct hevc_size *size);

#endif
