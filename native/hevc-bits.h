// Reading an HEVC NAL unit's fields as libde265 reads them: its RBSP (emulation prevention bytes dropped), bit
// by bit, and exp-Golomb codes. Shared by hevc-sps.c (SPS) and hevc-slice.c (PPS, slice segment headers).
#ifndef THUMBD_HEVC_BITS_H
#define THUMBD_HEVC_BITS_H

#include <stddef.h>
#include <stdint.h>
#include <string.h>

enum { HEVC_MAX_RBSP_BYTES = 1024 };  /* the fields read fit in ~40 bytes; libde265 takes no SPS much larger either */

struct hevc_bits { uint8_t data[HEVC_MAX_RBSP_BYTES]; size_t length, at; int failed; };

/* The RBSP's first `most` bytes: the NAL with each emulation prevention byte (the 03 of 00 00 03) dropped, as
 * libde265 drops them (NAL_unit::remove_stuffing_bytes): from the NAL's first byte, header included, where H.265
 * 7.3.1.1 starts after the header. They differ when the header ends in 00 (nuh_temporal_id_plus1 0, which
 * libde265 takes): a payload 00 03 then loses its 03 in libde265 only, and a parser that kept it read every
 * field a byte off. Reading starts after the 2-byte header (which loses no byte: a 03 dropped needs two before it). */
static inline void hevc_bits_of (struct hevc_bits *b, const uint8_t *nal, size_t length, size_t most) {
  memset(b, 0, sizeof *b);
  if (most > HEVC_MAX_RBSP_BYTES) most = HEVC_MAX_RBSP_BYTES;
  int zeros = 0;
  for (size_t i = 0; i < length && b->length < most; i++) {
    if (zeros >= 2 && nal[i] == 3) { zeros = 0; continue; }
    zeros = nal[i] == 0 ? zeros + 1 : 0;
    b->data[b->length++] = nal[i];
  }
  b->at = 16;
}

static inline uint32_t hevc_read_bits (struct hevc_bits *b, int n) {
  uint32_t value = 0;
  for (int i = 0; i < n; i++, b->at++) {
    if (b->at >= b->length * 8) { b->failed = 1; return 0; }
    value = value << 1 | ((b->data[b->at / 8] >> (7 - b->at % 8)) & 1);
  }
  return value;
}

/* ue(v): exp-Golomb. More than 31 leading zeros is no 32-bit value (libde265 gives up after 20). */
static inline uint32_t hevc_read_ue (struct hevc_bits *b) {
  int zeros = 0;
  while (hevc_read_bits(b, 1) == 0 && !b->failed) if (++zeros > 31) { b->failed = 1; return 0; }
  return zeros == 0 ? 0 : (uint32_t)((1ull << zeros) - 1 + hevc_read_bits(b, zeros));
}

#endif
