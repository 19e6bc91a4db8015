// heif-decode: the primary image of a HEIC/HEIF file, decoded by libheif 1.15 (libde265 for HEVC), as a PNG on
// stdout. Prebuilt sharp reads HEIF with AV1 inside only (HEVC is left out for patent reasons). Runs inside the
// decoder sandbox (thumbd-sandbox-exec --read INPUT: no other file, no fork/exec, stdout a pipe).
//
//   heif-decode --max-pixels N [--fit MODE WIDTH HEIGHT] [--threads T] [--max-threads N] INPUT
//
// Exit status, with one line on stderr unless 0:
//   0  the PNG is on stdout
//   2  not a decodable HEIF: "not heif", "truncated: ...", top-level boxes libheif could read otherwise than
//      heif-boxes.c ("more than one meta box", a meta it would not read), "nested derived images", an item whose HEVC SPS
//      codes another size than its ispe declares, an HEVC slice segment or PPS that does not parse or names a
//      parameter set not given before, a parameter set given again otherwise (heif-guards.h), "too many
//      decoding threads", or libheif's message
//   3  refused before any pixel is decoded: "too large: WxH" (over --max-pixels), "too large: over N tile
//      references", "too large: item I codes WxH" (its SPS), "too large: <libheif's message>" (its security
//      limits, such as a side over 16384); or while decoding, before the picture that would pass the budget:
//      "too large: over N pixels to decode in all" (every picture decoded, heif-guards.h)
//   1  anything else (INPUT unreadable, out of memory, stdout gone: the PNG is then cut short); 64 bad usage
//
// The PNG: 8-bit RGB, or RGBA with alpha (straight); display-oriented (libheif applies irot/imir/clap), so no
// EXIF; the ICC profile as iCCP when there is one (iPhones: Display P3), so sharp handles it as in a JPEG. An
// nclx box only steers YCbCr->RGB: its primaries are not converted. Stored deflate, no filter: 36 MB for 12 MP
// go through a pipe, not to disk; level 1 costs ~8x the CPU to write (400 ms), ~3x to read. Raw pixels would
// save ~50 ms of ~520 (both sides), but sharp's raw input cannot take the profile.
//
// --fit MODE WIDTH HEIGHT: the resize the consumer will make (sharp's fit: cover, contain, fill, inside, outside;
// 0 for a side not given). An embedded thumbnail ('thmb') is decoded instead of the primary when the resize
// would make the same image from it without enlarging it (see usable_thumbnail). Without --fit: the primary.
// With --fit, a decoded image 4x or more larger than the output is also box-shrunk by part of the integer factor
// libvips would box-shrink it by itself (see box_shrink_factor): the same output size, pixels within rounding.
// --threads T: libheif's max_decoding_threads, tiles decoded at once (default 1; 0: on the main thread).
// --max-threads N: threads alive at once besides the main one (default 2T + 2, see heif-guards.h); one more ends
// the decode (exit 2).
//
// heif_init() is not called: in 1.15 it only loads plugins (a directory, LIBHEIF_PLUGIN_PATH); the built-in
// decoders are there without it, and INPUT is the only file opened.
#include <errno.h>
#include <fcntl.h>
#include <libheif/heif.h>
#include <malloc.h>
#include <png.h>
#include <signal.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "heif-boxes.h"
#include "heif-guards.h"

/* The longest side accepted (libheif's own cap is 32768). libheif 1.15's limit is per side, not a pixel count,
 * and a grid canvas it cannot allocate is then written through a null pointer: 16384 keeps a square canvas
 * (3 x 256 MB planes, twice when rotated) well inside the sandbox's 4 GB. No camera writes a longer side. */
enum { MAX_SIDE = 16384, MAX_INPUT_BYTES = 512 << 20 };

/* One line on stderr (libheif ends some messages with a newline of its own), then exit. */
__attribute__((format(printf, 2, 3), noreturn)) static void fail (int code, const char *format, ...) {
  char line[512];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(line, sizeof line, format, args);
  va_end(args);
  for (n = n < 0 ? 0 : n >= (int)sizeof line ? (int)sizeof line - 1 : n; n > 0 && line[n - 1] == '\n'; n--) {}
  fprintf(stderr, "%.*s\n", n, line);
  exit(code);
}

static void check (struct heif_error error) {
  if (error.code == heif_error_Ok) return;
  if (error.subcode == heif_suberror_Security_limit_exceeded) fail(EXIT_TOO_LARGE, "too large: %s", error.message);
  if (error.code == heif_error_Memory_allocation_error) fail(EXIT_FAIL, "heif-decode: %s", error.message);
  fail(EXIT_INPUT, error.subcode == heif_suberror_End_of_data ? "truncated: %s" : "%s", error.message);
}

static unsigned long long number (const char *text) {
  char *end;
  unsigned long long value = (errno = 0, strtoull(text, &end, 10));
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') fail(EXIT_USAGE, "heif-decode: not a number: %s", text);
  return value;
}

/* The whole file: libheif wants random access, and a HEIC is a few MB. */
static uint8_t *read_input (const char *path, size_t *length) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) fail(EXIT_FAIL, "heif-decode: %s", strerror(errno));
  if (!S_ISREG(st.st_mode) || st.st_size > MAX_INPUT_BYTES) fail(EXIT_INPUT, "not heif: not a file, or over 512 MB");
  uint8_t *data = malloc((size_t)st.st_size + 1);
  if (data == NULL) fail(EXIT_FAIL, "heif-decode: out of memory");
  ssize_t n = 1;
  for (*length = 0; *length < (size_t)st.st_size && n != 0; *length += n > 0 ? (size_t)n : 0) {
    n = read(fd, data + *length, (size_t)st.st_size - *length);
    if (n < 0 && errno != EINTR) fail(EXIT_FAIL, "heif-decode: %s", strerror(errno));
  }
  return data;
}

enum fit { FIT_NONE, FIT_COVER, FIT_CONTAIN, FIT_FILL, FIT_INSIDE, FIT_OUTSIDE };
struct resize { enum fit fit; long width, height; };  /* a side of 0: not given */

static enum fit fit_named (const char *name) {
  static const char *const names[] = { "cover", "contain", "fill", "inside", "outside" };
  for (int i = 0; i < 5; i++) if (strcmp(name, names[i]) == 0) return (enum fit)(i + 1);
  fail(EXIT_USAGE, "heif-decode: unknown fit %s", name);
}

/* The size sharp scales a w x h source to, before cover's crop or contain's bars (workers/image/image.ts outputSize()
 * rounds the same way): one side given keeps the aspect, except for fill, which leaves the other side as it is;
 * both: cover/outside fill the box, contain/inside fit in it, fill stretches to it. */
static void scaled_size (const struct resize *r, int w, int h, long *sw, long *sh) {
  double sx = r->width > 0 ? (double)r->width / w : (double)r->height / h, sy = r->height > 0 ? (double)r->height / h : sx;
  if (r->width > 0 && r->height > 0 && r->fit != FIT_FILL) {
    int larger = r->fit == FIT_COVER || r->fit == FIT_OUTSIDE;
    sx = sy = larger ? (sx > sy ? sx : sy) : (sx < sy ? sx : sy);
  } else if (r->fit == FIT_FILL) {
    if (r->width == 0) sx = 1.0;
    if (r->height == 0) sy = 1.0;
  } else if (r->height == 0) sy = sx;
  *sw = (long)(w * sx + 0.5), *sh = (long)(h * sy + 0.5);  /* Math.round */
}

/* The embedded thumbnail to decode instead of the primary, or NULL. As libvips' vips_thumbnail does for HEIF
 * (resample/thumbnail.c, vips_thumbnail_open: heifload thumbnail=TRUE when the shrink from the thumbnail's size
 * to the target is > 1.0, i.e. the thumbnail would not be enlarged). libvips needs > because its shrink is
 * clipped to 1.0 under size=down; here the needed size is computed unclipped, so an exact fit is taken (a
 * 320x240 thumbnail for the default 320 px output: a 1:1 copy). A thumbnail qualifies when it shows the primary's
 * picture (its displayed size, after its own irot/clap, within a pixel of the primary's aspect: swapped sides
 * cannot pass, though a square one rotated otherwise could, as libheif 1.15 does not tell an item's irot), is
 * no larger than the primary (declared and coded: held to the primary's pixel limit), has the same alpha, and
 * the resize makes from it the very size it makes from the primary, without enlarging it. The smallest such. */
static struct heif_image_handle *usable_thumbnail (struct heif_image_handle *primary, int coded_w, int coded_h, const struct resize *r) {
  int w = heif_image_handle_get_width(primary), h = heif_image_handle_get_height(primary);
  heif_item_id ids[16];
  int count = r->fit != FIT_NONE && (r->width > 0 || r->height > 0) ? heif_image_handle_get_list_of_thumbnail_IDs(primary, ids, 16) : 0;
  long need_w, need_h;
  scaled_size(r, w, h, &need_w, &need_h);
  struct heif_image_handle *best = NULL;
  for (int i = 0; i < count; i++) {
    struct heif_image_handle *thumb = NULL;
    if (heif_image_handle_get_thumbnail(primary, ids[i], &thumb).code != heif_error_Ok) continue;
    int tw = heif_image_handle_get_width(thumb), th = heif_image_handle_get_height(thumb);
    int cw = heif_image_handle_get_ispe_width(thumb), ch = heif_image_handle_get_ispe_height(thumb);
    long sw = 0, sh = 0;
    if (tw > 0 && th > 0) scaled_size(r, tw, th, &sw, &sh);
    double aspect_error = tw > 0 ? (double)tw * h / w - th : 2;  /* in pixels of the thumbnail */
    int ok = tw > 0 && th > 0 && tw <= w && th <= h && (long long)tw * th < (long long)w * h &&
             cw <= coded_w && ch <= coded_h &&
             aspect_error > -1 && aspect_error < 1 && sw == need_w && sh == need_h && tw >= need_w && th >= need_h &&
             heif_image_handle_has_alpha_channel(thumb) == heif_image_handle_has_alpha_channel(primary);
    if (ok && (best == NULL || (long long)tw * th < (long long)heif_image_handle_get_width(best) * heif_image_handle_get_height(best))) {
      if (best != NULL) heif_image_handle_release(best);
      best = thumb;
    } else heif_image_handle_release(thumb);
  }
  return best;
}

/* The decoded planes (R, G, B, alpha), interleaved one row at a time as the PNG is written. */
struct planes { const uint8_t *data[4]; int stride[4], bits[4], count, premultiplied; };

static void interleave (const struct planes *in, int y, int width, uint8_t *row) {
  const uint8_t *r = in->data[0] + (size_t)y * in->stride[0], *g = in->data[1] + (size_t)y * in->stride[1];
  const uint8_t *b = in->data[2] + (size_t)y * in->stride[2];
  if (in->count == 3 && in->bits[0] == 8 && in->bits[1] == 8 && in->bits[2] == 8) {  /* the usual case: 2x faster */
    for (int x = 0; x < width; x++, row += 3) { row[0] = r[x]; row[1] = g[x]; row[2] = b[x]; }
    return;
  }
  for (int c = 0; c < in->count; c++) {
    const uint8_t *src = in->data[c] + (size_t)y * in->stride[c];
    unsigned max = (1u << in->bits[c]) - 1;  /* a 10-bit grid stays 10-bit whatever convert_hdr_to_8bit says */
    for (int x = 0; x < width; x++) {
      row[x * in->count + c] = in->bits[c] == 8 ? src[x] : (uint8_t)(((((const uint16_t *)src)[x] & max) * 255u + max / 2) / max);
    }
  }
  for (uint8_t *p = row, *end = row + (size_t)width * 4; in->premultiplied && p < end; p += 4) {
    for (int c = 0; c < 3 && p[3] != 0; c++) p[c] = (uint8_t)(p[c] >= p[3] ? 255 : (p[c] * 255 + p[3] / 2) / p[3]);
  }
}

/* A share of the box shrink sharp would make first anyway, made here on the decoded planes, so that 12 MP of
 * RGB are not written as a PNG, piped, read back and shrunk by sharp (~25 % of a 12 MP HEIC thumbnail's CPU).
 * sharp's resize (libvips >= 8.13 vips_resize, lanczos3, gap 2) box-shrinks each axis by the integer
 * K = floor(in / out / 2), out being that axis's rounded output size, then reduces with lanczos3. Here s, a
 * divisor of both axes' K, of the width and of the height: s x s pixels become their rounded mean, and sharp
 * then boxes by K / s over the same rows and columns and applies the same lanczos3, so the output differs from
 * the unshrunk one by rounding only (mean |d| ~0.02; max 2 on a 12 MP photo, 5 on a test pattern's hard edges,
 * which lanczos3 sharpens).
 * 1 (none) without a resize, unless sharp computes the very output size from the shrunk image, and for
 * anything but 8-bit RGB without alpha (straight alpha would need premultiplying first). */
static int box_shrink_factor (const struct planes *in, const struct resize *r, int w, int h) {
  if (r->fit == FIT_NONE || (r->width == 0 && r->height == 0) || in->count != 3) return 1;
  for (int c = 0; c < 3; c++) if (in->bits[c] != 8) return 1;
  long need_w, need_h;
  scaled_size(r, w, h, &need_w, &need_h);
  if (need_w < 1 || need_h < 1) return 1;
  long k_x = w / need_w / 2, k_y = h / need_h / 2;  /* integer division: the floors libvips takes */
  for (long s = k_x < k_y ? k_x : k_y; s >= 2; s--) {
    long sw, sh;
    if (k_x % s != 0 || k_y % s != 0 || w % s != 0 || h % s != 0) continue;
    scaled_size(r, (int)(w / s), (int)(h / s), &sw, &sh);
    if (sw == need_w && sh == need_h) return (int)s;
  }
  return 1;
}

/* `in` shrunk by s (which divides w and h) into new planes, which `in` then describes. */
static void box_shrink (struct planes *in, int *w, int *h, int s) {
  int ow = *w / s, oh = *h / s;
  /* 64 bits: s x s x 255 passes 32 once s > 4104 (a 1 px side of a 50 MP photo). */
  uint64_t *sum = malloc((size_t)ow * sizeof *sum);
  uint8_t *out = malloc((size_t)ow * oh * 3);
  if (sum == NULL || out == NULL) fail(EXIT_FAIL, "heif-decode: out of memory");
  uint64_t n = (uint64_t)s * (uint64_t)s;
  for (int c = 0; c < 3; c++) {
    uint8_t *plane = out + (size_t)c * ow * oh;
    for (int oy = 0; oy < oh; oy++) {
      memset(sum, 0, (size_t)ow * sizeof *sum);
      for (int y = oy * s; y < (oy + 1) * s; y++) {
        const uint8_t *row = in->data[c] + (size_t)y * in->stride[c];
        for (int ox = 0; ox < ow; ox++) {
          uint64_t t = 0;
          for (int k = 0; k < s; k++) t += row[ox * s + k];
          sum[ox] += t;
        }
      }
      for (int ox = 0; ox < ow; ox++) plane[(size_t)oy * ow + ox] = (uint8_t)((sum[ox] + n / 2) / n);
    }
    in->data[c] = plane, in->stride[c] = ow;
  }
  free(sum);
  *w = ow, *h = oh;
}

/* Only writing can fail (stdout gone); a warning is e.g. a profile libpng rejects (then left out). */
static void png_failed (png_structp png, png_const_charp message) { (void)png; fail(EXIT_FAIL, "heif-decode: png: %s", message); }
static void png_warned (png_structp png, png_const_charp message) { (void)png; fprintf(stderr, "heif-decode: png: %s\n", message); }

static void write_png (const struct planes *in, int width, int height, const uint8_t *icc, size_t icc_length) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_failed, png_warned);
  png_infop info = png == NULL ? NULL : png_create_info_struct(png);
  uint8_t *row = malloc((size_t)width * in->count);
  static char buffer[1 << 20];
  if (info == NULL || row == NULL || setvbuf(stdout, buffer, _IOFBF, sizeof buffer) != 0) fail(EXIT_FAIL, "heif-decode: out of memory");
  png_init_io(png, stdout);
  png_set_compression_level(png, 0);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_set_compression_buffer_size(png, 1 << 20);  /* fewer, larger IDAT chunks */
  png_set_benign_errors(png, 1);  /* a profile libpng finds wrong is dropped with a warning, not fatal */
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8, in->count == 4 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB,
               PNG_INTERLACE_NONE, PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
  if (icc != NULL) png_set_iCCP(png, info, "icc", PNG_COMPRESSION_TYPE_BASE, icc, (png_uint_32)icc_length);
  png_write_info(png, info);
  for (int y = 0; y < height; y++) interleave(in, y, width, row), png_write_row(png, row);
  png_write_end(png, NULL);
  if (fflush(stdout) != 0) fail(EXIT_FAIL, "heif-decode: stdout: %s", strerror(errno));
}

/* Decodes `handle` into `planes`: NULL, or why not (libheif's errors other than bad input exit at once, as check()). */
static const char *decode (struct heif_image_handle *handle, const struct heif_decoding_options *options, unsigned long long max_pixels,
                           struct heif_image **image, struct planes *planes, int *out_w, int *out_h) {
  static char message[256];
  int alpha = heif_image_handle_has_alpha_channel(handle);
  /* Planar RGB: libheif makes a grid planar RGB anyway, and its own interleaving pass costs more (~100 ms for
   * 12 MP) than interleaving each row as it is written. */
  struct heif_error error = heif_decode_image(handle, image, heif_colorspace_RGB, heif_chroma_444, options);
  if (error.code != heif_error_Ok) {
    if (error.code == heif_error_Memory_allocation_error || error.subcode == heif_suberror_Security_limit_exceeded) check(error);
    snprintf(message, sizeof message, error.subcode == heif_suberror_End_of_data ? "truncated: %s" : "%s", error.message);
    return message;
  }
  static const enum heif_channel wanted[4] = { heif_channel_R, heif_channel_G, heif_channel_B, heif_channel_Alpha };
  *planes = (struct planes){ .count = alpha ? 4 : 3, .premultiplied = alpha && heif_image_handle_is_premultiplied_alpha(handle) };
  *out_w = heif_image_get_width(*image, heif_channel_R), *out_h = heif_image_get_height(*image, heif_channel_R);
  if (*out_w <= 0 || *out_h <= 0 || (unsigned long long)*out_w * *out_h > max_pixels) return "decoding gave no usable image";
  for (int c = 0; c < planes->count; c++) {  /* each plane at least the image's size: a hostile alpha image need not be */
    planes->data[c] = heif_image_get_plane_readonly(*image, wanted[c], &planes->stride[c]);
    planes->bits[c] = heif_image_get_bits_per_pixel_range(*image, wanted[c]);
    if (planes->data[c] == NULL || planes->bits[c] < 8 || planes->bits[c] > 16 || heif_image_get_width(*image, wanted[c]) < *out_w ||
        heif_image_get_height(*image, wanted[c]) < *out_h || planes->stride[c] < *out_w * (planes->bits[c] > 8 ? 2 : 1)) {
      return "decoding gave no usable image";
    }
  }
  return NULL;
}

int main (int argc, char **argv) {
  unsigned long long max_pixels = 0, threads = 1, max_threads = 0;
  struct resize resize = { FIT_NONE, 0, 0 };
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && strcmp(argv[i], "--max-pixels") == 0) max_pixels = number(argv[++i]);
    else if (i + 3 < argc && strcmp(argv[i], "--fit") == 0) {
      resize.fit = fit_named(argv[i + 1]), resize.width = (long)number(argv[i + 2]), resize.height = (long)number(argv[i + 3]), i += 3;
    }
    else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0) threads = number(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--max-threads") == 0) max_threads = number(argv[++i]);
    else if (argv[i][0] != '-' && path == NULL) path = argv[i];
    else fail(EXIT_USAGE, "heif-decode: unexpected argument %s", argv[i]);
  }
  if (path == NULL || max_pixels == 0 || resize.width > 65535 || resize.height > 65535 || threads > 64 || max_threads > 1024) {
    fail(EXIT_USAGE, "usage: heif-decode --max-pixels N [--fit cover|contain|fill|inside|outside WIDTH HEIGHT] [--threads T] [--max-threads N] INPUT");
  }
  if (max_threads == 0) max_threads = 2 * threads + 2;
  signal(SIGPIPE, SIG_IGN);  /* a reader gone is exit 1 with a message, not a signal */
  /* Large blocks (each tile's buffers) stay in the heap for the next tile instead of being mmapped, faulted in
   * and unmapped once per tile: 26,000 page faults become 10,500 for 12 MP, ~60 ms of CPU. */
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);

  size_t length;
  uint8_t *data = read_input(path, &length);
  /* ISOBMFF at all (JPEG, PNG, garbage: no); which brands libheif takes is for libheif to say. */
  if (length < 12 || memcmp(data + 4, "ftyp", 4) != 0) fail(EXIT_INPUT, "%s", length == 0 ? "not heif: empty file" : "not heif");
  /* The meta box libheif will read, and none it could read instead: the checks below read this one. */
  const char *problem = NULL;
  const uint8_t *meta_end, *meta = heif_meta(data, length, &meta_end, &problem);
  if (meta == NULL) fail(EXIT_INPUT, "%s", problem);
  struct heif_context *context = heif_context_alloc();
  if (context == NULL) fail(EXIT_FAIL, "heif-decode: out of memory");
  /* Per side in 1.15, checked against every image's ispe as the file is read. */
  heif_context_set_maximum_image_size_limit(context, max_pixels < MAX_SIDE ? (int)max_pixels : MAX_SIDE);
  heif_context_set_max_decoding_threads(context, (int)threads);
  check(heif_context_read_from_memory_without_copy(context, data, length, NULL));
  struct heif_image_handle *primary;
  check(heif_context_get_primary_image_handle(context, &primary));

  /* Before any pixel: the displayed size, and the coded size (ispe) that is decoded before clap crops it. */
  int width = heif_image_handle_get_width(primary), height = heif_image_handle_get_height(primary);
  int coded_w = heif_image_handle_get_ispe_width(primary), coded_h = heif_image_handle_get_ispe_height(primary);
  if (width <= 0 || height <= 0) fail(EXIT_INPUT, "no image size (ispe)");
  coded_w = coded_w < width ? width : coded_w, coded_h = coded_h < height ? height : coded_h;
  if ((unsigned long long)coded_w * coded_h > max_pixels) fail(EXIT_TOO_LARGE, "too large: %dx%d", coded_w, coded_h);
  /* Tiles: 64, plus one per 128x128 pixels (iPhones: 48 of 512x512 for 12 MP). */
  long tiles = 64 + (long)coded_w * coded_h / (128 * 128), references = heif_derived_references(meta, meta_end, tiles);
  if (references < 0) fail(EXIT_INPUT, "nested derived images");
  if (references > tiles) fail(EXIT_TOO_LARGE, "too large: over %ld tile references", tiles);
  /* What the HEVC decoder will allocate, which ispe need not say: each item's SPS, from its hvcC now, and from
   * its data while libheif hands it over (heif-guards.c), as are the threads it starts. */
  struct heif_coded_sizes sizes;
  char coded_problem[256];
  int refused = heif_check_coded_sizes(meta, meta_end, max_pixels, &sizes, coded_problem, sizeof coded_problem);
  if (refused != 0) fail(refused, "%s", coded_problem);
  /* Pixels decoded in all: 4 x the image and its largest item (a grid's tiles cover its canvas once, overhanging
   * by less than a tile; its alpha as many again; a photo smaller than one tile). */
  unsigned long long largest = 0;
  for (int i = 0; i < sizes.count; i++) if ((unsigned long long)sizes.w[i] * sizes.h[i] > largest) largest = (unsigned long long)sizes.w[i] * sizes.h[i];
  heif_guards_arm((unsigned)max_threads, max_pixels, 4 * ((unsigned long long)coded_w * coded_h + largest), &sizes);
  /* A grid canvas is checked against the limit when decoded (>= is refused): none larger than the primary. */
  heif_context_set_maximum_image_size_limit(context, (coded_w > coded_h ? coded_w : coded_h) + 1);

  struct heif_decoding_options *options = heif_decoding_options_alloc();
  if (options == NULL) fail(EXIT_FAIL, "heif-decode: out of memory");
  options->convert_hdr_to_8bit = 1;
  struct heif_image *image = NULL;
  struct planes planes;
  int out_w = 0, out_h = 0;
  /* A thumbnail that does not decode, or not to the size it declares, is passed over for the primary (as libvips
   * blocks broken thumbnails): at most one more decode, of fewer pixels than the primary's. */
  struct heif_image_handle *source = usable_thumbnail(primary, coded_w, coded_h, &resize);
  if (source != NULL && (decode(source, options, max_pixels, &image, &planes, &out_w, &out_h) != NULL ||
                         out_w != heif_image_handle_get_width(source) || out_h != heif_image_handle_get_height(source))) {
    if (image != NULL) heif_image_release(image);
    source = NULL, image = NULL;
  }
  if (source == NULL) {
    source = primary;
    problem = decode(source, options, max_pixels, &image, &planes, &out_w, &out_h);
    if (problem != NULL) fail(EXIT_INPUT, "%s", problem);
  }

  /* The ICC profile of what was decoded: a thumbnail's own, else the primary's. */
  uint8_t *icc = NULL;
  size_t icc_length = 0;
  struct heif_image_handle *described = heif_image_handle_get_color_profile_type(source) != heif_color_profile_type_not_present ? source : primary;
  enum heif_color_profile_type type = heif_image_handle_get_color_profile_type(described);
  if (type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC) {
    icc_length = heif_image_handle_get_raw_color_profile_size(described);
    icc = icc_length > 0 && icc_length < (16u << 20) ? malloc(icc_length) : NULL;
    if (icc != NULL && heif_image_handle_get_raw_color_profile(described, icc).code != heif_error_Ok) icc = NULL;
  }
  int shrink = box_shrink_factor(&planes, &resize, out_w, out_h);
  if (shrink > 1) box_shrink(&planes, &out_w, &out_h, shrink);
  write_png(&planes, out_w, out_h, icc, icc_length);
  return 0;  /* nothing freed: the process ends */
}
