// Which slice segments make libde265 1.0.11 decode a picture's pixels, from the parameter sets and slice segment
// headers one decoder is given (H.265 7.3.2.3, 7.3.6.1, read as far as slice_segment_address, as libde265 reads
// them). libde265 decodes every slice segment it is given, each from its address on until its data says it
// ends: a slice that repeats one already decoded decodes its pixels again (a 512x512 four-slice picture with
// one slice repeated 400 times: 18 x the picture's time). Real encoders write a picture's slices in increasing
// address order, so a slice whose address is not past the previous one's counts as a new picture.
#ifndef THUMBD_HEVC_SLICE_H
#define THUMBD_HEVC_SLICE_H

#include <stddef.h>
#include <stdint.h>

#include "hevc-sps.h"

enum { HEVC_NAL_PPS = 34 };

/* One decoder's parameter sets, as far as the slice headers need them, and where its current picture is. */
struct hevc_known_sps { int set; uint32_t coded_w, coded_h, ctbs; };
struct hevc_known_pps { int set, dependent_slices; uint32_t sps; };
struct hevc_stream {
  struct hevc_known_sps sps[16];
  struct hevc_known_pps pps[64];
  int in_picture;
  uint32_t last_address;
};

/* Records an SPS (parsed by hevc_sps_size). -1 when its id was given another size before: libde265 keeps the old
 * one when it cannot read a new one, so only an SPS read alike either way can be followed. */
int hevc_stream_sps (struct hevc_stream *stream, const struct hevc_size *sps);

/* Follows any other NAL unit (header included, emulation prevention bytes in place): 1 when it is a slice segment
 * that starts a picture or goes back over one (to be counted as a picture decoded), else 0; -1 and a reason
 * when it is a PPS or a layer-0 slice segment that does not parse, or names a parameter set not given before,
 * or a PPS given again otherwise. */
int hevc_stream_nal (struct hevc_stream *stream, const uint8_t *nal, size_t length, const char **problem);

#endif
