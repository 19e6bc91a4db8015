// See heif-boxes.h. libheif 1.15 (libheif/box.cc, heif_file.cc) reads a box header as: a 32-bit size, the type,
// a 64-bit size after them when the size is 1 (refused over 2^60), 16 more bytes of header for 'uuid'; a box
// smaller than its header (a size of 0 included: "to the end of the file" is not implemented) or larger than
// what is left is an error. At the top level (HeifFile::parse_heif_file) any error just ends the walk, silently,
// with the boxes before it kept (so zero padding or a last box cut short are no error), and the last 'meta'
// seen wins; inside a box it fails that box.
#include "heif-boxes.h"

#include <stdio.h>
#include <string.h>

#include "hevc-sps.h"

static uint64_t be (const uint8_t *p, int bytes) {
  uint64_t value = 0;
  for (int i = 0; i < bytes; i++) value = value << 8 | p[i];
  return value;
}

struct box { const uint8_t *at, *body, *end; uint64_t size; int header; };

/* The header of the box at `at`: 0, or -1 when even the header does not fit before `end`. */
static int header_of (const uint8_t *at, const uint8_t *end, struct box *box) {
  if (end - at < 8) return -1;
  *box = (struct box){ .at = at, .size = be(at, 4), .header = 8 };
  if (box->size == 1) {
    if (end - at < 16) return -1;
    box->size = be(at + 8, 8), box->header = 16;
  }
  if (memcmp(at + 4, "uuid", 4) == 0) box->header += 16;
  if (end - at < box->header) return -1;
  box->body = at + box->header;
  return 0;
}

static int fits (const struct box *box, const uint8_t *end) {
  return box->size >= (uint64_t)box->header && box->size <= (uint64_t)(end - box->at);
}

const uint8_t *heif_meta (const uint8_t *data, size_t length, const uint8_t **meta_end, const char **problem) {
  const uint8_t *at = data, *end = data + length, *meta = NULL;
  struct box box;
  for (; at < end; at = box.end) {
    /* Where libheif stops (fewer than 8 bytes left, a header cut short, a size under the header's, 0 included,
     * a box past the end, which any over libheif's 2^60 limit is), the file ends for it: nothing after is read. */
    int is_meta = end - at >= 8 && memcmp(at + 4, "meta", 4) == 0;
    int whole = header_of(at, end, &box) == 0 && fits(&box, end);
    /* A 'meta' there would be read by no one, but one read otherwise, by a reader that takes a size of 0 as
     * "to the end of the file", is how a decoy hid the real meta from these checks: refused. */
    if (!whole && is_meta) { *problem = "a meta box libheif would not read (cut short, or of size 0)"; return NULL; }
    if (!whole) break;
    box.end = at + box.size;
    if (is_meta && meta != NULL) { *problem = "more than one meta box"; return NULL; }
    if (is_meta && box.end - box.body < 4) { *problem = "a meta box without its version"; return NULL; }
    if (is_meta) meta = box.body + 4, *meta_end = box.end;
  }
  if (meta == NULL) *problem = "no meta box";
  return meta;
}

const uint8_t *heif_child (const uint8_t *at, const uint8_t *end, const char *type, const uint8_t **box_end, int *overrun) {
  struct box box;
  for (; at < end; at = box.end) {
    if (header_of(at, end, &box) != 0 || !fits(&box, end)) { *overrun = 1; return NULL; }
    box.end = at + box.size;
    if (memcmp(at + 4, type, 4) == 0) { *box_end = box.end; return box.body; }
  }
  return NULL;
}

/* The 'dimg' references (grid tiles, iovl/iden inputs), which libheif 1.15 takes as they come: a 130 KB grid
 * naming one tiny tile 65,280 times decodes it that often (18 s of CPU), and a grid naming itself recurses
 * until threads or stack run out (abort). Its public API shows neither, so the iref box is read here, as
 * libheif reads it (entries back to back, whatever their size field says). */
long heif_derived_references (const uint8_t *meta, const uint8_t *meta_end, long limit) {
  enum { MAX_DERIVED = 64 };
  const uint8_t *iref_end;
  int overrun = 0;
  const uint8_t *iref = heif_child(meta, meta_end, "iref", &iref_end, &overrun);
  if (iref == NULL || iref_end - iref < 4) return 0;
  int id = iref[0] == 0 ? 2 : 4;
  uint32_t derived[MAX_DERIVED];
  long count = 0, sources = 0;
  for (int pass = 0; pass < 2 && count <= limit; pass++) {
    for (const uint8_t *at = iref + 4; iref_end - at >= 8; ) {
      int dimg = memcmp(at + 4, "dimg", 4) == 0;
      long header = 8 + (be(at, 4) == 1 ? 8 : 0) + (memcmp(at + 4, "uuid", 4) == 0 ? 16 : 0);
      if (iref_end - at < header + id + 2) break;
      at += header;
      uint32_t from = (uint32_t)be(at, id), n = (uint32_t)be(at + id, 2);
      at += id + 2;
      if (dimg && pass == 0 && ((count += n) > limit || sources == MAX_DERIVED)) return limit + 1;
      if (dimg && pass == 0) derived[sources++] = from;
      for (uint32_t i = 0; i < n && iref_end - at >= id; i++, at += id) {
        for (long s = 0; dimg && pass == 1 && s < sources; s++) if (derived[s] == (uint32_t)be(at, id)) return -1;
      }
    }
  }
  return count;
}

/* The properties of one item, as far as the checks go: every ispe and hvcC any ipma associates with it (libheif
 * takes the first entry's, and of those the last ispe, the first hvcC: all are checked here instead). */
struct properties { int ispe_count, hvcc_count; uint32_t ispe_w, ispe_h, ispe_mismatch; struct span hvcc[8]; };

/* The index-th (1-based) child of ipco. */
static int property (const uint8_t *ipco, const uint8_t *ipco_end, unsigned index, struct box *found) {
  const uint8_t *at = ipco;
  for (unsigned i = 1; at < ipco_end; i++, at = found->end) {
    if (header_of(at, ipco_end, found) != 0 || !fits(found, ipco_end)) return -1;
    found->end = at + found->size;
    if (i == index) return 0;
  }
  return -1;
}

static void associate (const uint8_t *ipco, const uint8_t *ipco_end, unsigned index, struct properties *p) {
  struct box prop;
  if (index == 0 || property(ipco, ipco_end, index, &prop) != 0) return;
  if (memcmp(prop.at + 4, "ispe", 4) == 0 && prop.end - prop.body >= 12) {
    uint32_t w = (uint32_t)be(prop.body + 4, 4), h = (uint32_t)be(prop.body + 8, 4);
    if (p->ispe_count++ > 0 && (w != p->ispe_w || h != p->ispe_h)) p->ispe_mismatch = 1;
    p->ispe_w = w, p->ispe_h = h;
  }
  if (memcmp(prop.at + 4, "hvcC", 4) == 0 && p->hvcc_count < 8) p->hvcc[p->hvcc_count++] = (struct span){ prop.body, prop.end };
}

/* Every association of `item` in every ipma of iprp. */
static void properties_of (uint32_t item, const uint8_t *iprp, const uint8_t *iprp_end, struct properties *p) {
  const uint8_t *ipco_end, *ipma_end;
  int overrun = 0;
  const uint8_t *ipco = heif_child(iprp, iprp_end, "ipco", &ipco_end, &overrun);
  memset(p, 0, sizeof *p);
  for (const uint8_t *at = iprp, *ipma; ipco != NULL && (ipma = heif_child(at, iprp_end, "ipma", &ipma_end, &overrun)) != NULL; at = ipma_end) {
    if (ipma_end - ipma < 8) continue;
    int id = ipma[0] < 1 ? 2 : 4, wide = ipma[3] & 1;
    const uint8_t *e = ipma + 8;
    for (uint64_t n = be(ipma + 4, 4); n > 0 && ipma_end - e >= id + 1; n--) {
      uint32_t entry = (uint32_t)be(e, id);
      int count = e[id];
      e += id + 1;
      for (int k = 0; k < count && ipma_end - e >= 1 + wide; k++, e += 1 + wide) {
        unsigned index = wide ? (unsigned)be(e, 2) & 0x7fff : e[0] & 0x7fu;
        if (entry == item) associate(ipco, ipco_end, index, p);
      }
    }
  }
}

/* The coded size of each SPS in an hvcC (ISO/IEC 14496-15 8.3.3.1: 22 bytes, then arrays of NAL units),
 * whatever type its array claims: libheif hands the decoder every NAL unit of every array. */
static int hvcc_sps (struct span hvcc, struct hevc_size *sizes, int max, int *bad) {
  int found = 0;
  const uint8_t *at = hvcc.at + 22;
  if (hvcc.end - hvcc.at < 23) return 0;
  for (int arrays = *at++; arrays > 0 && hvcc.end - at >= 3; arrays--) {
    int units = (int)be(at + 1, 2);
    for (at += 3; units > 0 && hvcc.end - at >= 2; units--) {
      size_t length = (size_t)be(at, 2);
      at += 2;
      if (length > (size_t)(hvcc.end - at)) length = (size_t)(hvcc.end - at);
      if (hevc_nal_type(at, length) == HEVC_NAL_SPS) {
        if (found < max && hevc_sps_size(at, length, &sizes[found]) == 0) found++;
        else *bad = 1;
      }
      at += length;
    }
  }
  return found;
}

/* Whether an SPS codes w x h: cropped no larger, coded larger by less than one coding block (64). */
static int matches (const struct hevc_size *s, uint32_t w, uint32_t h) {
  return s->cropped_w <= w && s->cropped_h <= h && s->coded_w >= w && s->coded_h >= h && s->coded_w - w < 64 && s->coded_h - h < 64;
}

int heif_check_coded_sizes (const uint8_t *meta, const uint8_t *meta_end, unsigned long long max_pixels,
                            struct heif_coded_sizes *sizes, char *problem, size_t problem_length) {
  const uint8_t *iinf_end, *iprp_end;
  int overrun = 0;
  const uint8_t *iinf = heif_child(meta, meta_end, "iinf", &iinf_end, &overrun);
  const uint8_t *iprp = heif_child(meta, meta_end, "iprp", &iprp_end, &overrun);
  sizes->count = 0;
  if (iinf == NULL || iprp == NULL || iinf_end - iinf < 6) return 0;  /* libheif refuses such a file itself */
  const uint8_t *at = iinf + (iinf[0] == 0 ? 6 : 8);
  for (const uint8_t *infe, *infe_end; at < iinf_end && (infe = heif_child(at, iinf_end, "infe", &infe_end, &overrun)) != NULL; at = infe_end) {
    if (infe_end - infe < 12 || infe[0] < 2 || (infe[0] > 2 && infe_end - infe < 14)) continue;  /* versions 0, 1: no item type */
    int id = infe[0] == 2 ? 2 : 4;
    uint32_t item = (uint32_t)be(infe + 4, id);
    if (memcmp(infe + 4 + id + 2, "hvc1", 4) != 0) continue;
    struct properties p;
    properties_of(item, iprp, iprp_end, &p);
    struct hevc_size sps[8];
    int bad = 0, count = 0;
    for (int i = 0; i < p.hvcc_count; i++) count += hvcc_sps(p.hvcc[i], sps + count, 8 - count, &bad);
    if (bad || count == 0 || p.ispe_count == 0 || p.ispe_mismatch) {
      snprintf(problem, problem_length, "item %u: %s", item, bad ? "an SPS that does not parse" : count == 0 ? "no SPS in its hvcC" : "no single ispe");
      return EXIT_INPUT;
    }
    for (int i = 0; i < count; i++) {
      const struct hevc_size *s = &sps[i];
      if ((unsigned long long)s->coded_w * s->coded_h > max_pixels) {
        snprintf(problem, problem_length, "too large: item %u codes %ux%u", item, s->coded_w, s->coded_h);
        return EXIT_TOO_LARGE;
      }
      if (!matches(s, p.ispe_w, p.ispe_h) && !matches(s, p.ispe_h, p.ispe_w)) {
        snprintf(problem, problem_length, "item %u codes %ux%u (%ux%u shown), not the %ux%u its ispe declares",
                 item, s->coded_w, s->coded_h, s->cropped_w, s->cropped_h, p.ispe_w, p.ispe_h);
        return EXIT_INPUT;
      }
      int known = 0;
      for (int k = 0; k < sizes->count; k++) known |= sizes->w[k] == s->coded_w && sizes->h[k] == s->coded_h;
      if (!known && sizes->count < HEIF_MAX_CODED_SIZES) sizes->w[sizes->count] = s->coded_w, sizes->h[sizes->count++] = s->coded_h;
    }
  }
  return 0;
}
