// heif-decode: decodes the primary image of a HEIC/HEIF file with libheif (libde265 for HEVC) and writes it to
// stdout as a PNG, for sharp to take from there. Prebuilt sharp reads HEIF with AV1 inside only (HEVC is left
// out for patent reasons), so HEIC is decoded here, in a process of its own, inside the decoder sandbox
// (thumbd-sandbox-exec: reads INPUT and the libraries only, no /dev/null, no /tmp, no fork/exec, RLIMIT_FSIZE=0).
//
//   heif-decode --max-pixels N [--max-side-hint W] [--threads T] INPUT
//
// Exit status: 0 a PNG on stdout; 2 not a decodable HEIF ("not heif", "truncated: ...", or libheif's message
// on stderr); 3 larger than --max-pixels ("too large: WxH", nothing decoded) or over one of libheif's security
// limits ("too large: " and its message); 1 anything else (INPUT
// unreadable, out of memory, stdout gone); 64 bad arguments. Nothing is written to stdout unless the exit is 0
// (stdout may still hold part of a PNG if writing it failed: exit 1).
//
// Output: an 8-bit PNG, RGB, or RGBA when the image has alpha (straight, as PNG wants: premultiplied alpha is
// undone), display-oriented (libheif applies irot/imir/clap, its default), with the image's ICC profile as an
// iCCP chunk when it has one (iPhones: Display P3), so sharp converts or keeps colours as for a JPEG with the
// same profile. No EXIF (the orientation is already applied). Deflate level 0 and no filtering: 12 MP in
// ~35 ms of CPU here; level 1 costs ~4x that and sharp reads either at the same speed (NOTES: heif-decode).
// A raw framing ("THUMBD-RAW w h channels icc_length\n", the profile, the pixels) was measured as well: the
// PNG costs little more, and sharp's raw input has no way to take an input profile.
//
// --max-side-hint W: the consumer needs at most W pixels on the image's longer side. If the file carries a
// thumbnail image of the same aspect that is at least that large on both sides, it is decoded instead of the
// full image (iPhones embed 320x240 or so: useful for small thumbnails only).
// --threads T: tiles decoded in parallel (libheif's max_decoding_threads; 0 decodes them on the main thread).
//
// libheif's plugin directory is read by heif_init() only, which is therefore not called: its built-in
// decoders are registered without it (libheif 1.15), and nothing is opened besides INPUT.
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <libheif/heif.h>
#include <png.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { EXIT_FAIL = 1, EXIT_INPUT = 2, EXIT_TOO_LARGE = 3, EXIT_USAGE = 64 };
/* libheif's own cap on each side (MAX_IMAGE_WIDTH/HEIGHT in 1.15); ours only ever lowers it. */
enum { LIBHEIF_SIDE_LIMIT = 32768, MAX_INPUT_BYTES = 512 << 20 };

/* One line on stderr (libheif ends some messages with a newline of its own), then exit. */
static void fail (int code, const char *format, const char *detail) {
  char line[512];
  int n = snprintf(line, sizeof line, format, detail);
  n = n < 0 ? 0 : n >= (int)sizeof line ? (int)sizeof line - 1 : n;
  while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == ' ')) n--;
  fprintf(stderr, "%.*s\n", n, line);
  exit(code);
}

static unsigned long long number (const char *text) {
  char *end;
  errno = 0;
  unsigned long long value = strtoull(text, &end, 10);
  if (errno != 0 || end == text || *end != '\0' || text[0] == '-') fail(EXIT_USAGE, "heif-decode: not a number: %s", text);
  return value;
}

/* The whole file (HEIC is a few MB; libheif needs random access anyway). */
static uint8_t *read_input (const char *path, size_t *length) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) fail(EXIT_FAIL, "heif-decode: %s", strerror(errno));
  if (!S_ISREG(st.st_mode) || st.st_size > MAX_INPUT_BYTES) fail(EXIT_INPUT, "%s", "not heif: not a regular file, or over 512 MB");
  uint8_t *data = malloc(st.st_size > 0 ? (size_t)st.st_size : 1);
  size_t filled = 0;
  if (data == NULL) fail(EXIT_FAIL, "%s", "heif-decode: out of memory");
  while (filled < (size_t)st.st_size) {
    ssize_t n = read(fd, data + filled, (size_t)st.st_size - filled);
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) fail(EXIT_FAIL, "heif-decode: %s", strerror(errno));
    if (n == 0) break;  /* shrank meanwhile: what we have is what libheif sees */
    filled += (size_t)n;
  }
  close(fd);
  *length = filled;
  return data;
}

/* libheif's security limits (a side over the limit set below, too many boxes or items) count as too large. */
static void check (struct heif_error error) {
  if (error.code == heif_error_Ok) return;
  if (error.subcode == heif_suberror_Security_limit_exceeded) fail(EXIT_TOO_LARGE, "too large: %s", error.message);
  if (error.code == heif_error_Memory_allocation_error) fail(EXIT_FAIL, "heif-decode: %s", error.message);
  fail(EXIT_INPUT, error.subcode == heif_suberror_End_of_data ? "truncated: %s" : "%s", error.message);
}

/* The thumbnail to decode instead of the primary image, or NULL: same aspect (to a pixel), and at least the
 * primary scaled to `hint` on its longer side, on both sides. */
static struct heif_image_handle *usable_thumbnail (struct heif_image_handle *primary, int hint) {
  int w = heif_image_handle_get_width(primary), h = heif_image_handle_get_height(primary);
  int count = heif_image_handle_get_number_of_thumbnails(primary);
  if (hint <= 0 || count <= 0) return NULL;
  heif_item_id ids[8];
  count = heif_image_handle_get_list_of_thumbnail_IDs(primary, ids, count < 8 ? count : 8);
  double scale = (double)hint / (w > h ? w : h);
  for (int i = 0; i < count; i++) {
    struct heif_image_handle *thumb = NULL;
    if (heif_image_handle_get_thumbnail(primary, ids[i], &thumb).code != heif_error_Ok) continue;
    int tw = heif_image_handle_get_width(thumb), th = heif_image_handle_get_height(thumb);
    double aspect_error = (double)tw * h / (w > 0 ? w : 1) - th;  /* in pixels of the thumbnail's height */
    if (aspect_error > -1 && aspect_error < 1 && tw >= w * scale - 0.5 && th >= h * scale - 0.5 &&
        heif_image_handle_has_alpha_channel(thumb) == heif_image_handle_has_alpha_channel(primary)) return thumb;
    heif_image_handle_release(thumb);
  }
  return NULL;
}

static void png_failed (png_structp png, png_const_charp message) {
  (void)png;
  fail(EXIT_FAIL, "heif-decode: png: %s", message);  /* only writing can fail: stdout is gone */
}

static void png_warned (png_structp png, png_const_charp message) {
  (void)png;
  fprintf(stderr, "heif-decode: png: %s\n", message);  /* e.g. an ICC profile libpng rejects: left out */
}

/* The decoded planes (R, G, B, and alpha if any), read one row at a time into the PNG's interleaved row. */
struct planes {
  const uint8_t *data[4];
  int stride[4], bits[4], count, premultiplied;
};

static void interleave (const struct planes *in, int y, int width, uint8_t *row) {
  const uint8_t *r = in->data[0] + (size_t)y * in->stride[0], *g = in->data[1] + (size_t)y * in->stride[1];
  const uint8_t *b = in->data[2] + (size_t)y * in->stride[2];
  if (in->count == 3 && in->bits[0] == 8 && in->bits[1] == 8 && in->bits[2] == 8) {  /* the usual case: twice as fast */
    for (int x = 0; x < width; x++, row += 3) { row[0] = r[x]; row[1] = g[x]; row[2] = b[x]; }
    return;
  }
  for (int c = 0; c < in->count; c++) {
    const uint8_t *src = in->data[c] + (size_t)y * in->stride[c];
    uint8_t *dst = row + c;
    if (in->bits[c] == 8) {
      for (int x = 0; x < width; x++, dst += in->count) *dst = src[x];
    } else {  /* 9-16 bits in uint16 (a 10-bit grid is not reduced by convert_hdr_to_8bit in 1.15) */
      unsigned max = (1u << in->bits[c]) - 1;
      const uint16_t *wide = (const uint16_t *)src;
      for (int x = 0; x < width; x++, dst += in->count) *dst = (uint8_t)(((wide[x] & max) * 255u + max / 2) / max);
    }
  }
}

static void write_png (const struct planes *in, int width, int height, const uint8_t *icc, size_t icc_length) {
  png_structp png = png_create_write_struct(PNG_LIBPNG_VER_STRING, NULL, png_failed, png_warned);
  png_infop info = png == NULL ? NULL : png_create_info_struct(png);
  uint8_t *row = malloc((size_t)width * in->count);
  if (info == NULL || row == NULL) fail(EXIT_FAIL, "%s", "heif-decode: out of memory");
  static char buffer[1 << 20];
  setvbuf(stdout, buffer, _IOFBF, sizeof buffer);
  png_init_io(png, stdout);
  /* Stored deflate blocks, no filter: the bytes go through a pipe to sharp, not to disk. */
  png_set_compression_level(png, 0);
  png_set_filter(png, PNG_FILTER_TYPE_BASE, PNG_FILTER_NONE);
  png_set_compression_buffer_size(png, 1 << 20);  /* fewer, larger IDAT chunks */
  png_set_benign_errors(png, 1);  /* a profile libpng finds wrong is dropped with a warning, not fatal */
  png_set_IHDR(png, info, (png_uint_32)width, (png_uint_32)height, 8,
               in->count == 4 ? PNG_COLOR_TYPE_RGB_ALPHA : PNG_COLOR_TYPE_RGB, PNG_INTERLACE_NONE,
               PNG_COMPRESSION_TYPE_BASE, PNG_FILTER_TYPE_BASE);
  if (icc != NULL) png_set_iCCP(png, info, "icc", PNG_COMPRESSION_TYPE_BASE, icc, (png_uint_32)icc_length);
  png_write_info(png, info);
  for (int y = 0; y < height; y++) {
    interleave(in, y, width, row);
    for (uint8_t *p = row, *end = row + (size_t)width * 4; in->premultiplied && p < end; p += 4) {
      for (int c = 0; c < 3 && p[3] != 0; c++) p[c] = (uint8_t)(p[c] >= p[3] ? 255 : (p[c] * 255 + p[3] / 2) / p[3]);
    }
    png_write_row(png, row);
  }
  png_write_end(png, NULL);
  if (fflush(stdout) != 0) fail(EXIT_FAIL, "heif-decode: stdout: %s", strerror(errno));
}

int main (int argc, char **argv) {
  unsigned long long max_pixels = 0, hint = 0, threads = 1;
  const char *path = NULL;
  for (int i = 1; i < argc; i++) {
    if (i + 1 < argc && strcmp(argv[i], "--max-pixels") == 0) max_pixels = number(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--max-side-hint") == 0) hint = number(argv[++i]);
    else if (i + 1 < argc && strcmp(argv[i], "--threads") == 0) threads = number(argv[++i]);
    else if (argv[i][0] != '-' && path == NULL) path = argv[i];
    else fail(EXIT_USAGE, "heif-decode: unexpected argument %s", argv[i]);
  }
  if (path == NULL || max_pixels == 0 || hint > LIBHEIF_SIDE_LIMIT || threads > 64) {
    fail(EXIT_USAGE, "%s", "usage: heif-decode --max-pixels N [--max-side-hint W] [--threads T] INPUT");
  }

  /* Large blocks (each tile's buffers, the planes) stay in the heap for reuse rather than being mmapped,
   * page-faulted in and unmapped again for every tile: ~100 ms of CPU less for 12 MP (a third in the kernel). */
  mallopt(M_MMAP_THRESHOLD, 256 << 20);
  mallopt(M_TRIM_THRESHOLD, 512 << 20);
  size_t length;
  uint8_t *data = read_input(path, &length);
  if (length < 12 || heif_check_filetype(data, (int)(length < 64 ? length : 64)) == heif_filetype_no) {
    fail(EXIT_INPUT, "%s", length == 0 ? "not heif: empty file" : "not heif");
  }
  struct heif_context *context = heif_context_alloc();
  if (context == NULL) fail(EXIT_FAIL, "%s", "heif-decode: out of memory");
  /* Per side in 1.15 (not a pixel count); checked on every image's ispe while the file is read. */
  heif_context_set_maximum_image_size_limit(context, max_pixels < LIBHEIF_SIDE_LIMIT ? (int)max_pixels : LIBHEIF_SIDE_LIMIT);
  heif_context_set_max_decoding_threads(context, (int)threads);
  check(heif_context_read_from_memory_without_copy(context, data, length, NULL));
  struct heif_image_handle *primary;
  check(heif_context_get_primary_image_handle(context, &primary));

  /* Before any pixel: the displayed size, and the coded size (ispe) that is decoded before clap crops it. */
  int width = heif_image_handle_get_width(primary), height = heif_image_handle_get_height(primary);
  int coded_w = heif_image_handle_get_ispe_width(primary), coded_h = heif_image_handle_get_ispe_height(primary);
  if (width <= 0 || height <= 0) fail(EXIT_INPUT, "%s", "no image size (ispe)");
  if ((unsigned long long)width * height > max_pixels || (unsigned long long)coded_w * coded_h > max_pixels) {
    fprintf(stderr, "too large: %dx%d\n", coded_w > width ? coded_w : width, coded_h > height ? coded_h : height);
    return EXIT_TOO_LARGE;
  }
  /* A grid or overlay canvas is checked against the limit when it is decoded: no larger than the primary's
   * own sides (the grid box could otherwise declare a bigger canvas than ispe). */
  int side = coded_w > coded_h ? coded_w : coded_h;
  if (side < (width > height ? width : height)) side = width > height ? width : height;
  heif_context_set_maximum_image_size_limit(context, side + 1);  /* grids are refused at >= limit */

  struct heif_image_handle *source = usable_thumbnail(primary, (int)hint);
  if (source == NULL) source = primary;
  int alpha = heif_image_handle_has_alpha_channel(source);
  struct heif_decoding_options *options = heif_decoding_options_alloc();
  if (options == NULL) fail(EXIT_FAIL, "%s", "heif-decode: out of memory");
  options->convert_hdr_to_8bit = 1;  /* 10-bit HEIC (Canon, some Android) */
  /* Planar RGB, interleaved row by row as the PNG is written: libheif decodes a grid (every iPhone photo)
   * to planar RGB anyway, and its own interleaving pass costs more than the rest of the PNG. */
  struct heif_image *image;
  check(heif_decode_image(source, &image, heif_colorspace_RGB, heif_chroma_444, options));
  heif_decoding_options_free(options);

  static const enum heif_channel wanted[4] = { heif_channel_R, heif_channel_G, heif_channel_B, heif_channel_Alpha };
  struct planes planes = { .count = alpha ? 4 : 3, .premultiplied = alpha && heif_image_handle_is_premultiplied_alpha(source) };
  int out_w = heif_image_get_width(image, heif_channel_R), out_h = heif_image_get_height(image, heif_channel_R);
  if (out_w <= 0 || out_h <= 0 || (unsigned long long)out_w * out_h > max_pixels) fail(EXIT_INPUT, "%s", "decoding gave no image");
  for (int c = 0; c < planes.count; c++) {
    /* Every plane at least the image's size (a hostile file's alpha image need not be). */
    planes.data[c] = heif_image_get_plane_readonly(image, wanted[c], &planes.stride[c]);
    planes.bits[c] = heif_image_get_bits_per_pixel_range(image, wanted[c]);
    if (planes.data[c] == NULL || planes.bits[c] < 8 || planes.bits[c] > 16 ||
        heif_image_get_width(image, wanted[c]) < out_w || heif_image_get_height(image, wanted[c]) < out_h ||
        planes.stride[c] < out_w * (planes.bits[c] > 8 ? 2 : 1)) {
      fail(EXIT_INPUT, "%s", "decoding gave an unusable image");
    }
  }

  /* The profile of what was decoded: a thumbnail's own, else the primary's. Only ICC ("prof"/"rICC"):
   * an nclx box describes sRGB-like primaries the consumer assumes anyway. */
  uint8_t *icc = NULL;
  size_t icc_length = 0;
  struct heif_image_handle *with_profile = source;
  if (heif_image_handle_get_color_profile_type(source) == heif_color_profile_type_not_present) with_profile = primary;
  enum heif_color_profile_type type = heif_image_handle_get_color_profile_type(with_profile);
  if (type == heif_color_profile_type_prof || type == heif_color_profile_type_rICC) {
    icc_length = heif_image_handle_get_raw_color_profile_size(with_profile);
    icc = icc_length > 0 && icc_length < (64u << 20) ? malloc(icc_length) : NULL;
    if (icc != NULL && heif_image_handle_get_raw_color_profile(with_profile, icc).code != heif_error_Ok) {
      free(icc);
      icc = NULL;
    }
  }
  write_png(&planes, out_w, out_h, icc, icc_length);
  /* Nothing to free: the process ends here. */
  return 0;
}
