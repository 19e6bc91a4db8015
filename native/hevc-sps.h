// The picture size an HEVC sequence parameter set (SPS) makes the decoder allocate, read as libde265 reads it
// (H.265 7.3.2.2, up to the conformance window): what a HEIF item decodes to, whatever its ispe declares; and on
// to the coding tree block size, which sizes a slice segment's address (hevc-slice.c).
#ifndef THUMBD_HEVC_SPS_H
#define THUMBD_HEVC_SPS_H

#include <stddef.h>
#include <stdint.h>

enum { HEVC_NAL_SPS = 33 };

struct hevc_size {
  uint32_t coded_w, coded_h;    /* pic_width/height_in_luma_samples: the planes libde265 allocates */
  uint32_t cropped_w, cropped_h;  /* after the conformance window: the picture it outputs */
  uint32_t id;                    /* sps_seq_parameter_set_id, 0-15 */
  uint32_t ctbs;                  /* PicSizeInCtbsY: coding tree blocks, which number a slice segment's address */
};

/* The NAL unit type of a NAL unit (its 2-byte header first), or -1 if it has no header. */
int hevc_nal_type (const uint8_t *nal, size_t length);

/* Parses an SPS NAL unit (header included, emulation prevention bytes in place). 0, or -1 when it is not an SPS
 * or ends before its coding block sizes, or a size is out of range (0, a window as large as the picture, blocks
 * over 64, as libde265 refuses them). */
int hevc_sps_size (const uint8_t *nal, size_t length, struct hevc_size *size);

#endif
