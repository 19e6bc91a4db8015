// See hevc-sps.h. The SPS fields before the picture size have variable length (profile_tier_level grows with the
// sub-layers, ids are exp-Golomb), so they are read, not skipped by a fixed offset.
#include "hevc-sps.h"

#include "hevc-bits.h"

/* profile_tier_level(1, max_sub_layers_minus1), H.265 7.3.3: 88 bits of general profile, 8 of level, then per
 * sub-layer two presence flags (padded to 8 pairs) and what they announce. */
static void skip_profile_tier_level (struct hevc_bits *b, int max_sub_layers_minus1) {
  hevc_read_bits(b, 32), hevc_read_bits(b, 32), hevc_read_bits(b, 24), hevc_read_bits(b, 8);  /* general profile (88 bits), level (8) */
  int profile[8] = { 0 }, level[8] = { 0 };
  for (int i = 0; i < max_sub_layers_minus1; i++) profile[i] = (int)hevc_read_bits(b, 1), level[i] = (int)hevc_read_bits(b, 1);
  if (max_sub_layers_minus1 > 0) for (int i = max_sub_layers_minus1; i < 8; i++) hevc_read_bits(b, 2);
  for (int i = 0; i < max_sub_layers_minus1; i++) {
    if (profile[i]) hevc_read_bits(b, 32), hevc_read_bits(b, 32), hevc_read_bits(b, 24);
    if (level[i]) hevc_read_bits(b, 8);
  }
}

int hevc_nal_type (const uint8_t *nal, size_t length) {
  return length < 2 ? -1 : (nal[0] >> 1) & 0x3f;
}

int hevc_sps_size (const uint8_t *nal, size_t length, struct hevc_size *size) {
  static __thread struct hevc_bits b;  /* 1 KB, off the stack of libheif's decoding threads */
  if (hevc_nal_type(nal, length) != HEVC_NAL_SPS) return -1;
  hevc_bits_of(&b, nal, length, HEVC_MAX_RBSP_BYTES);
  hevc_read_bits(&b, 4);  /* sps_video_parameter_set_id */
  int max_sub_layers_minus1 = (int)hevc_read_bits(&b, 3);
  if (max_sub_layers_minus1 > 6) return -1;  /* 7 sub-layers at most (libde265 refuses more too) */
  hevc_read_bits(&b, 1);  /* sps_temporal_id_nesting_flag */
  skip_profile_tier_level(&b, max_sub_layers_minus1);
  uint32_t id = hevc_read_ue(&b);
  uint32_t chroma_format_idc = hevc_read_ue(&b);
  int separate_planes = chroma_format_idc == 3 ? (int)hevc_read_bits(&b, 1) : 0;
  uint32_t w = hevc_read_ue(&b), h = hevc_read_ue(&b);
  uint32_t left = 0, right = 0, top = 0, bottom = 0;
  if (hevc_read_bits(&b, 1)) left = hevc_read_ue(&b), right = hevc_read_ue(&b), top = hevc_read_ue(&b), bottom = hevc_read_ue(&b);
  /* On to the coding tree block size (7.3.2.2), which sizes a slice segment's address. */
  hevc_read_ue(&b), hevc_read_ue(&b), hevc_read_ue(&b);  /* bit depths, log2_max_pic_order_cnt_lsb_minus4 */
  int every_sub_layer = (int)hevc_read_bits(&b, 1);  /* sps_sub_layer_ordering_info_present_flag */
  for (int i = every_sub_layer ? 0 : max_sub_layers_minus1; i <= max_sub_layers_minus1; i++) hevc_read_ue(&b), hevc_read_ue(&b), hevc_read_ue(&b);
  uint32_t log2_min_cb = hevc_read_ue(&b) + 3, log2_ctb = log2_min_cb + hevc_read_ue(&b);
  if (b.failed || id > 15 || chroma_format_idc > 3 || w == 0 || h == 0) return -1;
  if (log2_min_cb > 6 || log2_ctb > 6) return -1;  /* as libde265 (and H.265: 64 at most) */
  /* The window is in chroma samples: SubWidthC, SubHeightC of Table 6-1 (1 for 4:0:0, 4:4:4 and separate planes). */
  uint64_t sub_w = !separate_planes && (chroma_format_idc == 1 || chroma_format_idc == 2) ? 2 : 1;
  uint64_t sub_h = !separate_planes && chroma_format_idc == 1 ? 2 : 1;
  uint64_t crop_w = sub_w * ((uint64_t)left + right), crop_h = sub_h * ((uint64_t)top + bottom);
  if (crop_w >= w || crop_h >= h) return -1;
  uint64_t ctb = 1u << log2_ctb, ctbs = ((w + ctb - 1) / ctb) * ((h + ctb - 1) / ctb);
  if (ctbs > UINT32_MAX) return -1;
  *size = (struct hevc_size){ w, h, (uint32_t)(w - crop_w), (uint32_t)(h - crop_h), id, (uint32_t)ctbs };
  return 0;
}
