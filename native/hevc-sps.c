// See hevc-sps.h. The SPS fields before the picture size have variable length (profile_tier_level grows with the
// sub-layers, ids are exp-Golomb), so they are read, not skipped by a fixed offset.
#include "hevc-sps.h"

#include <string.h>

enum { MAX_SPS_BYTES = 1024 };  /* the fields read here fit in ~40 bytes; libde265 takes no SPS much larger either */

/* The RBSP: the NAL payload with each emulation prevention byte (the 03 of 00 00 03) dropped, as libde265 drops
 * them (NAL_unit::remove_stuffing_bytes): from the NAL's first byte, header included, where H.265 7.3.1.1 starts
 * after the header. They differ when the header ends in 00 (nuh_temporal_id_plus1 0, which libde265 takes): a
 * payload 00 03 then loses its 03 in libde265 only, and a parser that kept it read every field a byte off. */
struct bits { uint8_t data[MAX_SPS_BYTES]; size_t length, at; int failed; };

static uint32_t read_bits (struct bits *b, int n) {
  uint32_t value = 0;
  for (int i = 0; i < n; i++, b->at++) {
    if (b->at >= b->length * 8) { b->failed = 1; return 0; }
    value = value << 1 | ((b->data[b->at / 8] >> (7 - b->at % 8)) & 1);
  }
  return value;
}

/* ue(v): exp-Golomb. More than 31 leading zeros is no 32-bit value (libde265 gives up after 20). */
static uint32_t read_ue (struct bits *b) {
  int zeros = 0;
  while (read_bits(b, 1) == 0 && !b->failed) if (++zeros > 31) { b->failed = 1; return 0; }
  return zeros == 0 ? 0 : (uint32_t)((1ull << zeros) - 1 + read_bits(b, zeros));
}

/* profile_tier_level(1, max_sub_layers_minus1), H.265 7.3.3: 88 bits of general profile, 8 of level, then per
 * sub-layer two presence flags (padded to 8 pairs) and what they announce. */
static void skip_profile_tier_level (struct bits *b, int max_sub_layers_minus1) {
  read_bits(b, 32), read_bits(b, 32), read_bits(b, 24), read_bits(b, 8);  /* general profile (88 bits), level (8) */
  int profile[8] = { 0 }, level[8] = { 0 };
  for (int i = 0; i < max_sub_layers_minus1; i++) profile[i] = (int)read_bits(b, 1), level[i] = (int)read_bits(b, 1);
  if (max_sub_layers_minus1 > 0) for (int i = max_sub_layers_minus1; i < 8; i++) read_bits(b, 2);
  for (int i = 0; i < max_sub_layers_minus1; i++) {
    if (profile[i]) read_bits(b, 32), read_bits(b, 32), read_bits(b, 24);
    if (level[i]) read_bits(b, 8);
  }
}

int hevc_nal_type (const uint8_t *nal, size_t length) {
  return length < 2 ? -1 : (nal[0] >> 1) & 0x3f;
}

int hevc_starts_picture (const uint8_t *nal, size_t length) {
  if (length < 3 || hevc_nal_type(nal, length) >= 32 || ((nal[0] & 1) << 5 | nal[1] >> 3) != 0) return 0;
  /* The payload's first bit; its first byte is a 03 libde265 drops only after a header of 00 00 (type 0, temporal id 0). */
  size_t first = nal[0] == 0 && nal[1] == 0 && nal[2] == 3 ? 3 : 2;
  return first < length && (nal[first] & 0x80) != 0;
}

int hevc_sps_size (const uint8_t *nal, size_t length, struct hevc_size *size) {
  static __thread struct bits b;  /* 1 KB, off the stack of libheif's decoding threads */
  if (hevc_nal_type(nal, length) != HEVC_NAL_SPS) return -1;
  memset(&b, 0, sizeof b);
  int zeros = 0;
  for (size_t i = 0; i < length && b.length < MAX_SPS_BYTES; i++) {
    if (zeros >= 2 && nal[i] == 3) { zeros = 0; continue; }
    zeros = nal[i] == 0 ? zeros + 1 : 0;
    b.data[b.length++] = nal[i];
  }
  read_bits(&b, 16);  /* the NAL header, which loses no byte: a 03 dropped needs two bytes before it */
  read_bits(&b, 4);  /* sps_video_parameter_set_id */
  int max_sub_layers_minus1 = (int)read_bits(&b, 3);
  if (max_sub_layers_minus1 > 6) return -1;  /* 7 sub-layers at most (libde265 refuses more too) */
  read_bits(&b, 1);  /* sps_temporal_id_nesting_flag */
  skip_profile_tier_level(&b, max_sub_layers_minus1);
  read_ue(&b);  /* sps_seq_parameter_set_id */
  uint32_t chroma_format_idc = read_ue(&b);
  int separate_planes = chroma_format_idc == 3 ? (int)read_bits(&b, 1) : 0;
  uint32_t w = read_ue(&b), h = read_ue(&b);
  uint32_t left = 0, right = 0, top = 0, bottom = 0;
  if (read_bits(&b, 1)) left = read_ue(&b), right = read_ue(&b), top = read_ue(&b), bottom = read_ue(&b);
  if (b.failed || chroma_format_idc > 3 || w == 0 || h == 0) return -1;
  /* The window is in chroma samples: SubWidthC, SubHeightC of Table 6-1 (1 for 4:0:0, 4:4:4 and separate planes). */
  uint64_t sub_w = !separate_planes && (chroma_format_idc == 1 || chroma_format_idc == 2) ? 2 : 1;
  uint64_t sub_h = !separate_planes && chroma_format_idc == 1 ? 2 : 1;
  uint64_t crop_w = sub_w * ((uint64_t)left + right), crop_h = sub_h * ((uint64_t)top + bottom);
  if (crop_w >= w || crop_h >= h) return -1;
  *size = (struct hevc_size){ w, h, (uint32_t)(w - crop_w), (uint32_t)(h - crop_h) };
  return 0;
}
