// See hevc-slice.h.
#include "hevc-slice.h"

#include "hevc-bits.h"

int hevc_stream_sps (struct hevc_stream *stream, const struct hevc_size *sps) {
  if (sps->id > 15) return -1;
  struct hevc_known_sps *known = &stream->sps[sps->id];
  if (known->set && (known->coded_w != sps->coded_w || known->coded_h != sps->coded_h || known->ctbs != sps->ctbs)) return -1;
  *known = (struct hevc_known_sps){ 1, sps->coded_w, sps->coded_h, sps->ctbs };
  return 0;
}

/* Ceil(Log2(n)), as libde265's ceil_log2: the bits of slice_segment_address. */
static int ceil_log2 (uint32_t n) {
  int bits = 0;
  while (bits < 32 && n > (1ull << bits)) bits++;
  return bits;
}

/* H.265 7.3.2.3.1, its first three fields (libde265 needs its SPS given before it, or drops it). */
static int follow_pps (struct hevc_stream *stream, struct hevc_bits *b, const char **problem) {
  uint32_t id = hevc_read_ue(b), sps = hevc_read_ue(b);
  int dependent_slices = (int)hevc_read_bits(b, 1);  /* dependent_slice_segments_enabled_flag */
  if (b->failed || id > 63 || sps > 15) return *problem = "a PPS that does not parse", -1;
  if (!stream->sps[sps].set) return *problem = "a PPS before its SPS", -1;
  struct hevc_known_pps *known = &stream->pps[id];
  if (known->set && (known->sps != sps || known->dependent_slices != dependent_slices)) return *problem = "a PPS given again otherwise", -1;
  *known = (struct hevc_known_pps){ 1, dependent_slices, sps };
  return 0;
}

/* H.265 7.3.6.1 up to slice_segment_address. */
static int follow_slice (struct hevc_stream *stream, struct hevc_bits *b, int type, const char **problem) {
  int first = (int)hevc_read_bits(b, 1);  /* first_slice_segment_in_pic_flag */
  if (type >= 16 && type <= 23) hevc_read_bits(b, 1);  /* no_output_of_prior_pics_flag (libde265: RapPicFlag) */
  uint32_t pps = hevc_read_ue(b), address = 0;
  if (b->failed || pps > 63 || !stream->pps[pps].set) return *problem = "a slice segment naming no PPS given before", -1;
  uint32_t ctbs = stream->sps[stream->pps[pps].sps].ctbs;
  if (!first) {
    if (stream->pps[pps].dependent_slices) hevc_read_bits(b, 1);  /* dependent_slice_segment_flag */
    address = hevc_read_bits(b, ceil_log2(ctbs));
  }
  if (b->failed || address >= ctbs) return *problem = "a slice segment header that does not parse", -1;
  /* A slice before any picture: libde265 drops it, or decodes it into the last picture it had. */
  int again = first || !stream->in_picture || address <= stream->last_address;
  stream->in_picture = 1, stream->last_address = address;
  return again;
}

int hevc_stream_nal (struct hevc_stream *stream, const uint8_t *nal, size_t length, const char **problem) {
  static __thread struct hevc_bits b;  /* 1 KB, off the stack of libheif's decoding threads */
  int type = hevc_nal_type(nal, length), layer = length < 2 ? 0 : (nal[0] & 1) << 5 | nal[1] >> 3;
  if (type < 0 || (type != HEVC_NAL_PPS && type >= 32)) return 0;
  if (type < 32 && layer != 0) return 0;  /* libde265 drops slices of other layers */
  hevc_bits_of(&b, nal, length, 64);  /* 64 bytes hold every field read */
  return type == HEVC_NAL_PPS ? follow_pps(stream, &b, problem) : follow_slice(stream, &b, type, problem);
}
