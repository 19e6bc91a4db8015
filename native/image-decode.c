// image-decode: an image decoded in the decoder sandbox by the very libvips sharp uses in the pool thread
// (node_modules/@img/sharp-libvips-<platform>/lib/libvips-cpp.so: mozjpeg, libspng and zlib-ng, libwebp,
// libnsgif, libheif with aom), with the options sharp gives its loaders (fail_on warning, sequential access, the
// first page), so a picture decodes here exactly as it would in the server, refused where sharp refuses it.
// It runs as ffmpeg and heif-decode do: forked from its zygote or exec'd through thumbd-sandbox-exec, reading
// only its input file, no socket, no exec, bounded memory, killed at the job's deadline. The pool thread gets the
// pixels on stdout and resizes and encodes them with sharp (workers/image/jpeg-sandboxed.ts, still-sandboxed.ts).
// A bug in a decoder then reaches this process only: not the server's keys, not other requests' photos.
//
//   image-decode --scale N --size W H --channels 1|3 FILE
//   image-decode --still jpeg|png|webp|gif|avif --max-pixels N --max-frames N --frame-budget N [--frames first|all]
//                [--fit MODE W H [--resize lanczos3 [--flatten R G B | --alpha premultiplied]]]
//                [--profile keep|convert|all] FILE
//   image-decode --info --max-pixels N FILE
//
// --scale: a JPEG at libjpeg's 1/N (1, 2, 4 or 8: the shrink-on-load the pool thread chose), by Debian's
// libturbojpeg as in the pool thread (libvips' jpegload where it is missing); W H the size its header pass read,
// at 1/N that of the decode; channels 1 grey, 3 RGB (CMYK is refused: sharp's). Output: "TJD1",
// then width, height and channels (u32 little-endian), then the pixels, rows top to bottom, orientation not applied.
// --still: the first frame, display-oriented (its EXIF orientation applied); with --frames all, an animated GIF's or
// WebP's every frame (sharp's pages: -1, each frame turned) where all of them hold no more pixels than --max-pixels,
// its profile converted to sRGB; --fit (sharp's fit; 0 for a side not given) reduces a JPEG or WebP on load as sharp
// does (src/pipeline.cc: a JPEG's shrink 2, 4 or 8, a WebP's scale 1 / min(hshrink, vshrink) when above 1);
// --resize then resizes a still to that fit as sharp's pipeline would, where that is its first step (resized()).
// Colour, as sharp's pipeline: an 8-bit picture whose profile sharp would convert through is converted to sRGB
// here, by libvips' own Little CMS (a CMYK one without a profile, through libvips' CMYK profile), so the profile is
// parsed here, not in the server; --profile keep (the default) hands back an RGB picture's profile that does not
// describe sRGB, which the pool thread may keep on its output; convert converts that one too; all converts one that
// describes sRGB as well (sharp's open() with the profile read). A 16-bit picture's profile is handed back.
// Output: "IMD3", then width, height (of all frames), channels (1-4), bits (8 or 16, little-endian samples), frames
// (of the file), frames (of the pixels), loop count, palette bits (0: no palette) and the profile's length, u32
// little-endian; the profile; each frame's delay in ms (u32, frames of the pixels > 1 only); the pixels, rows top to
// bottom.
// --info: the header only, as sharp's metadata() reads it (src/metadata.cc: the loader libvips finds for the bytes
// among those not blocked, a HEIF at its primary picture), no pixel decoded: "IMI1", then width and height (stored,
// one page), EXIF orientation (0: none), pages (0: no n-pages), alpha (0 or 1), codec (0 jpeg, 1 png, 2 webp, 3 gif,
// 4 heif), libvips interpretation, bands, palette (0 or 1), bits per sample (0: none) and the profile's length, u32
// little-endian; then the profile.
// Exit: 0; 2 the decoder refused the image (an error or a warning, as sharp's failOn: 'warning'); 3 over the
// pixel limit, an animation over its limits (--still), or another size than expected (--scale); 5 not this path's to
// take (--scale: CMYK, YCCK, 12-bit, or whatever libturbojpeg refuses, as in the pool thread: the next decoder takes
// it; libvips' refusals where libturbojpeg is missing are 2, so that a JPEG it refused is not decoded a second
// time); 6 no loader thumbd serves takes the bytes (--info: sharp's "unsupported image format"); 64 usage; 70 out of
// memory.
//
// libvips' prototypes are declared here (its C API, stable across 8.x), as the house declares TurboJPEG's: the
// build needs only the library sharp installs, no -dev package (scripts/build-zygote.sh).
#define _GNU_SOURCE
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

typedef struct _VipsImage VipsImage;
int vips_init (const char *argv0);
void vips_concurrency_set (int concurrency);
void vips_cache_set_max (int max);
void vips_block_untrusted_set (int state);
void vips_operation_block_set (const char *name, int state);
const char *vips_error_buffer (void);
int vips_jpegload_buffer (void *buf, size_t len, VipsImage **out, ...);
int vips_pngload_buffer (void *buf, size_t len, VipsImage **out, ...);
int vips_webpload_buffer (void *buf, size_t len, VipsImage **out, ...);
int vips_gifload_buffer (void *buf, size_t len, VipsImage **out, ...);
int vips_heifload_buffer (void *buf, size_t len, VipsImage **out, ...);
const char *vips_foreign_find_load_buffer (const void *data, size_t size);
int vips_image_get_width (const VipsImage *image);
int vips_image_get_height (const VipsImage *image);
int vips_image_get_bands (const VipsImage *image);
int vips_image_get_format (const VipsImage *image);
int vips_image_get_interpretation (const VipsImage *image);
int vips_image_get_orientation (VipsImage *image);
int vips_image_hasalpha (VipsImage *image);
unsigned long vips_image_get_typeof (const VipsImage *image, const char *name);
int vips_image_get_int (const VipsImage *image, const char *name, int *out);
int vips_image_get_blob (const VipsImage *image, const char *name, const void **data, size_t *length);
int vips_image_get_array_int (VipsImage *image, const char *name, int **out, int *n);
void *vips_image_write_to_memory (VipsImage *in, size_t *size);
int vips_icc_transform (VipsImage *in, VipsImage **out, const char *output_profile, ...);
int vips_resize (VipsImage *in, VipsImage **out, double scale, ...);
int vips_premultiply (VipsImage *in, VipsImage **out, ...);
int vips_unpremultiply (VipsImage *in, VipsImage **out, ...);
int vips_cast (VipsImage *in, VipsImage **out, int format, ...);
int vips_flatten (VipsImage *in, VipsImage **out, ...);
typedef struct _VipsArrayDouble VipsArrayDouble;
VipsArrayDouble *vips_array_double_newv (int n, ...);
void vips_error_clear (void);
void g_object_unref (void *object);
void g_free (void *memory);
typedef struct _VipsRegion VipsRegion;
VipsRegion *vips_region_new (VipsImage *image);
unsigned char *vips_region_fetch (VipsRegion *region, int left, int top, int width, int height, size_t *length);
void vips_get_tile_size (VipsImage *image, int *tile_width, int *tile_height, int *n_lines);
unsigned long g_type_from_name (const char *name);
void *vips_class_map_all (unsigned long type, void *(*fn) (void *cls, void *a), void *a);

/* libvips' enums (vips/image.h, vips/foreign.h). */
enum { VIPS_ACCESS_SEQUENTIAL = 1, VIPS_FAIL_ON_WARNING = 3, VIPS_FORMAT_UCHAR = 0, VIPS_FORMAT_USHORT = 2 };
enum { VIPS_INTERPRETATION_CMYK = 15, VIPS_INTERPRETATION_LABS = 21, VIPS_INTERPRETATION_sRGB = 22, VIPS_INTERPRETATION_GREY16 = 26 };
enum { VIPS_INTENT_PERCEPTUAL = 0 };
enum { EXIT_REFUSED = 2, EXIT_TOO_LARGE = 3, EXIT_NOT_TAKEN = 5, EXIT_UNSUPPORTED = 6, EXIT_USAGE = 64, EXIT_MEMORY = 70 };

/* The loaders thumbd serves; every other one (TIFF, SVG, PDF, matrix ...) blocked, as sharp is in the pool thread. */
static const char *const LOADERS[] = { "VipsForeignLoadJpeg", "VipsForeignLoadPng", "VipsForeignLoadWebp", "VipsForeignLoadNsgif", "VipsForeignLoadHeif" };

static void *class_ready (void *cls, void *a) {
  (void)cls, (void)a;
  return NULL;
}

/* Run before main(), so in the zygote before it forks: every decode starts with libvips' types registered (one
 * thread still: vips_init starts none, and the worker a decode needs is started in the child). */
__attribute__((constructor)) static void start_libvips (void) {
  if (vips_init("image-decode") != 0) return;
  /* One worker: a process decodes one picture, and the pool thread is its parallelism. */
  vips_concurrency_set(1);
  vips_cache_set_max(0);
  vips_operation_block_set("VipsForeignLoad", 1);
  for (size_t i = 0; i < sizeof LOADERS / sizeof LOADERS[0]; i++) vips_operation_block_set(LOADERS[i], 0);
  /* Every class initialised now (its arguments' tables built), once in the zygote rather than in each child at
   * its first operation: ~3 ms of each decode's CPU. Classes only: no image, no thread. */
  vips_class_map_all(g_type_from_name("VipsObject"), class_ready, NULL);
}

__attribute__((noreturn, format(printf, 2, 3))) static void refuse (int code, const char *format, ...) {
  fputs("image-decode: ", stderr);
  va_list args;
  va_start(args, format);
  vfprintf(stderr, format, args);
  va_end(args);
  fputc('\n', stderr);
  exit(code);
}

/* libvips' own message for what it refused, on one line. */
static const char *vips_why (void) {
  static char line[512];
  snprintf(line, sizeof line, "%s", vips_error_buffer());
  for (char *c = line; *c != '\0'; c++) if (*c == '\n') *c = *(c + 1) == '\0' ? '\0' : ' ';
  return line;
}

static int write_all (const void *data, size_t length) {
  const unsigned char *at = data;
  while (length > 0) {
    ssize_t n = write(STDOUT_FILENO, at, length);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return -1;
    at += n;
    length -= (size_t)n;
  }
  return 0;
}

/* The whole file, mapped (its pages come from the page cache, faulted in at once): libvips reads it from memory. */
static unsigned char *map_file (const char *path, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) refuse(EXIT_REFUSED, "cannot read the input: %s", strerror(errno));
  void *bytes = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  if (bytes == MAP_FAILED) refuse(EXIT_REFUSED, "cannot map the input: %s", strerror(errno));
  *size = (size_t)st.st_size;
  return bytes;
}

/* The decoded pixels, as libvips lays them out (band-interleaved rows, native-endian samples). */
static uint8_t *pixels_of (VipsImage *image, size_t *bytes) {
  uint8_t *pixels = vips_image_write_to_memory(image, bytes);
  if (pixels == NULL) refuse(EXIT_REFUSED, "%s", vips_why());
  return pixels;
}

/* Pixels' buffers, mapped apart and asked for huge pages: a process that lives for one picture faults in every page
 * of them fresh (a 6000x4000 JPEG at 1/2, 18 MB: 4564 faults and 26.0 ms of CPU, with huge pages 476 and 21.2). */
static void *allocate (size_t bytes) {
  void *at = mmap(NULL, bytes == 0 ? 1 : bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (at == MAP_FAILED) refuse(EXIT_MEMORY, "out of memory");
  madvise(at, bytes, MADV_HUGEPAGE);
  return at;
}

/* The decoded pixels written to stdout as libvips computes them (its raw layout: rows top to bottom, band-interleaved,
 * native-endian samples), a row of tiles at a time: no buffer of the whole picture here (its pages cost more to fault
 * in, in a process that lives for one picture, than its copy). Computed in this thread, tile by tile: the very tiles
 * vips_rawsave's sink would ask for (vips_get_tile_size's, left to right, then down), not vips_rawsave itself, which
 * starts a worker thread for the one picture a process decodes and costs more than its work (a 6 MP PNG thumbnail
 * 4 ms of CPU, a 1000x667 GIF's 1.5 ms, through the zygote). The same tiles matter: vips_resize's pixels depend on
 * where a tile's edge falls, and full-width strips gave pixels a level off sharp's own. 0, or -1 (a refusal mid-way,
 * with libvips' error, or the reader gone). */
static int stream_pixels (VipsImage *image) {
  int width = vips_image_get_width(image), height = vips_image_get_height(image), tile_width, tile_height, lines;
  vips_get_tile_size(image, &tile_width, &tile_height, &lines);
  VipsRegion *region = vips_region_new(image);
  if (region == NULL) return -1;
  size_t px = (size_t)vips_image_get_bands(image) * (vips_image_get_format(image) == VIPS_FORMAT_USHORT ? 2 : 1), row = (size_t)width * px;
  unsigned char *strip = allocate(row * (size_t)tile_height);
  for (int top = 0; top < height; top += tile_height) {
    int rows = height - top < tile_height ? height - top : tile_height;
    for (int left = 0; left < width; left += tile_width) {
      int columns = width - left < tile_width ? width - left : tile_width;
      size_t length, span = (size_t)columns * px;
      unsigned char *tile = vips_region_fetch(region, left, top, columns, rows, &length);
      if (tile == NULL || length != span * (size_t)rows) return -1;
      for (int y = 0; y < rows; y++) memcpy(strip + (size_t)y * row + (size_t)left * px, tile + (size_t)y * span, span);
      g_free(tile);
    }
    if (write_all(strip, row * (size_t)rows) != 0) return -1;
  }
  return 0;
}

/* Every mode's arguments: what a run without them answers (exit 64), and what the server's start-up reads to tell a
 * build older than its own reader of it (workers/tools/detect.ts). */
static const char USAGE[] =
  "usage: image-decode --scale N --size W H --channels 1|3 FILE\n"
  "       image-decode --still jpeg|png|webp|gif|avif --max-pixels N --max-frames N --frame-budget N [--frames first|all]\n"
  "                    [--fit MODE W H [--resize lanczos3 [--flatten R G B | --alpha premultiplied]]]\n"
  "                    [--profile keep|convert|all] FILE\n"
  "       image-decode --info --max-pixels N FILE\n";

/* ---- JPEG at a scale (--scale) ---- */

/* Debian's libturbojpeg (the TurboJPEG 2 API), the very decoder the pool thread runs on this path in-process
 * (workers/image/jpeg-turbo.ts), with its flags: the same pixels and refusals, for less CPU than libvips' jpegload
 * around the same IDCT (a 1 MP JPEG at 1/4, decode and hand-over: 3.1 against 4.3 ms). Opened before main(), so in
 * the zygote before it forks; where it is missing, libvips decodes at the same scale. */
enum { TJPF_RGB = 0, TJPF_GRAY = 6, TJFLAG_STOPONWARNING = 8192, TJFLAG_LIMITSCANS = 32768, TJCS_RGB = 0, TJCS_YCbCr = 1, TJCS_GRAY = 2 };
static struct {
  void *(*init) (void);
  int (*header) (void *, const unsigned char *, unsigned long, int *, int *, int *, int *);
  int (*decompress) (void *, const unsigned char *, unsigned long, unsigned char *, int, int, int, int, int);
  const char *(*error) (void *);
} tj;

__attribute__((constructor)) static void open_turbojpeg (void) {
  /* Global, and its functions looked up in the global scope: a library preloaded in front of it (the tests'
   * stand-in for an exploit, test/workers/tools/image-probe.c) takes their place, as for libvips' calls. libvips'
   * own libjpeg is hidden in it, so no name clashes. */
  if (dlopen("libturbojpeg.so.0", RTLD_NOW | RTLD_GLOBAL) == NULL) return;
  *(void **)&tj.header = dlsym(RTLD_DEFAULT, "tjDecompressHeader3");
  *(void **)&tj.decompress = dlsym(RTLD_DEFAULT, "tjDecompress2");
  *(void **)&tj.error = dlsym(RTLD_DEFAULT, "tjGetErrorStr2");
  if (tj.header != NULL && tj.decompress != NULL && tj.error != NULL) *(void **)&tj.init = dlsym(RTLD_DEFAULT, "tjInitDecompress");
}

/* The JPEG at 1/scale by libturbojpeg, its header checked against the pool thread's reading (jpeg-decode.ts inThread).
 * Whatever libturbojpeg refuses (a sampling it cannot name, a libjpeg warning) is not taken (5), as in the thread,
 * where sharp then decides: the next decoder is libvips' (--still jpeg), which accepts some of those. */
static int jpeg_turbo (unsigned char *bytes, size_t size, int scale, int expect_w, int expect_h, int channels) {
  void *handle = tj.init();
  if (handle == NULL) refuse(EXIT_MEMORY, "no TurboJPEG handle");
  int w, h, subsampling, space;
  if (tj.header(handle, bytes, size, &w, &h, &subsampling, &space) != 0) refuse(EXIT_NOT_TAKEN, "%s", tj.error(handle));
  if (w != expect_w || h != expect_h) refuse(EXIT_TOO_LARGE, "%dx%d, not %dx%d", w, h, expect_w, expect_h);
  /* What raw RGB or grey pixels lose nothing of: CMYK, YCCK stay with sharp's path, as in the thread. */
  if ((space != TJCS_YCbCr && space != TJCS_RGB && space != TJCS_GRAY) || (space == TJCS_GRAY) != (channels == 1)) refuse(EXIT_NOT_TAKEN, "colour space %d", space);
  /* TJSCALED: libjpeg's scaled size. */
  uint32_t header[4] = { 0, (uint32_t)((w + scale - 1) / scale), (uint32_t)((h + scale - 1) / scale), (uint32_t)channels };
  memcpy(header, "TJD1", 4);
  size_t length = (size_t)header[1] * header[2] * (size_t)channels;
  unsigned char *pixels = allocate(length);
  if (tj.decompress(handle, bytes, size, pixels, (int)header[1], 0, (int)header[2], channels == 1 ? TJPF_GRAY : TJPF_RGB, TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) refuse(EXIT_NOT_TAKEN, "%s", tj.error(handle));
  if (write_all(header, sizeof header) != 0 || write_all(pixels, length) != 0) return EXIT_REFUSED;
  return 0;
}

static int jpeg (int argc, char **argv) {
  if (argc != 9 || strcmp(argv[1], "--scale") != 0 || strcmp(argv[3], "--size") != 0 || strcmp(argv[6], "--channels") != 0) {
    fputs(USAGE, stderr);
    return EXIT_USAGE;
  }
  int scale = atoi(argv[2]), expect_w = atoi(argv[4]), expect_h = atoi(argv[5]), channels = atoi(argv[7]);
  if ((scale != 1 && scale != 2 && scale != 4 && scale != 8) || expect_w <= 0 || expect_h <= 0 || (channels != 1 && channels != 3)) refuse(EXIT_USAGE, "bad arguments");
  size_t size;
  unsigned char *bytes = map_file(argv[8], &size);
  if (tj.init != NULL) return jpeg_turbo(bytes, size, scale, expect_w, expect_h, channels);
  VipsImage *image;
  if (vips_jpegload_buffer(bytes, size, &image, "shrink", scale, "fail_on", VIPS_FAIL_ON_WARNING, "access", VIPS_ACCESS_SEQUENTIAL, NULL) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
  /* libjpeg's scaled size (TJSCALED): the size the pool thread resizes from. libvips 8.18's jpegload rounds it down
   * (641 at 1/2: 320), so this fallback leaves such a JPEG to the next decoder (3). */
  uint32_t w = (uint32_t)((expect_w + scale - 1) / scale), h = (uint32_t)((expect_h + scale - 1) / scale);
  if ((uint32_t)vips_image_get_width(image) != w || (uint32_t)vips_image_get_height(image) != h) {
    refuse(EXIT_TOO_LARGE, "%dx%d at 1/%d, not %ux%u", vips_image_get_width(image), vips_image_get_height(image), scale, w, h);
  }
  /* What raw RGB or grey pixels lose nothing of: CMYK, YCCK and 12-bit stay with sharp's path, as before. */
  if (vips_image_get_bands(image) != channels || vips_image_get_format(image) != VIPS_FORMAT_UCHAR) refuse(EXIT_NOT_TAKEN, "%d bands, not %d", vips_image_get_bands(image), channels);
  uint32_t header[4] = { 0, w, h, (uint32_t)channels };
  memcpy(header, "TJD1", 4);
  if (write_all(header, sizeof header) != 0) return EXIT_REFUSED;
  if (stream_pixels(image) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
  return 0;
}

/* ---- Stills (--still) ---- */

enum fit_mode { FIT_NONE, FIT_COVER, FIT_CONTAIN, FIT_FILL, FIT_INSIDE, FIT_OUTSIDE };
struct fit { enum fit_mode mode; long width, height; };

static enum fit_mode fit_named (const char *name) {
  static const char *const names[] = { "cover", "contain", "fill", "inside", "outside" };
  for (int i = 0; i < 5; i++) if (strcmp(name, names[i]) == 0) return (enum fit_mode)(i + 1);
  return FIT_NONE;
}

/* sharp's ResolveShrink (src/common.cc) for one side or both, as workers/image/jpeg-scale.ts resolveShrink(): the
 * horizontal and vertical shrink of a WIDTH x HEIGHT picture (withoutEnlargement not applied: the callers act only
 * on shrinks above 1). */
static void sharp_shrink (const struct fit *fit, double width, double height, double *hshrink, double *vshrink) {
  double h = 1, v = 1;
  if (fit->width > 0 && fit->height > 0) {
    h = width / fit->width, v = height / fit->height;
    if (fit->mode == FIT_COVER || fit->mode == FIT_OUTSIDE) h = v = h < v ? h : v;
    else if (fit->mode == FIT_CONTAIN || fit->mode == FIT_INSIDE) h = v = h > v ? h : v;
  } else if (fit->width > 0) {
    h = width / fit->width;
    if (fit->mode != FIT_FILL) v = h;
  } else if (fit->height > 0) {
    v = height / fit->height;
    if (fit->mode != FIT_FILL) h = v;
  }
  *hshrink = h < width ? h : width, *vshrink = v < height ? v : height;
}

/* sharp's loader of FORMAT, with sharp's options for a first page (src/common.cc GetOptionsForImageType); `scale`:
 * a WebP's scale on load, a JPEG's shrink (1: none); `page`: a HEIF's page; `all`: a GIF's or WebP's every page, as
 * one tall image of them (sharp's pages: -1). */
static int load (const char *format, unsigned char *bytes, size_t size, double scale, int page, int all, VipsImage **image) {
  int n = all ? -1 : 1;
  if (strcmp(format, "jpeg") == 0) return vips_jpegload_buffer(bytes, size, image, "fail_on", VIPS_FAIL_ON_WARNING, "access", VIPS_ACCESS_SEQUENTIAL, "shrink", (int)scale, NULL);
  if (strcmp(format, "png") == 0) return vips_pngload_buffer(bytes, size, image, "fail_on", VIPS_FAIL_ON_WARNING, "access", VIPS_ACCESS_SEQUENTIAL, NULL);
  if (strcmp(format, "gif") == 0) return vips_gifload_buffer(bytes, size, image, "fail_on", VIPS_FAIL_ON_WARNING, "access", VIPS_ACCESS_SEQUENTIAL, "n", n, "page", 0, NULL);
  if (strcmp(format, "avif") == 0) return vips_heifload_buffer(bytes, size, image, "fail_on", VIPS_FAIL_ON_WARNING, "access", VIPS_ACCESS_SEQUENTIAL, "n", 1, "page", page, NULL);
  if (scale != 1) return vips_webpload_buffer(bytes, size, image, "fail_on", VIPS_FAIL_ON_WARNING, "access", VIPS_ACCESS_SEQUENTIAL, "n", n, "page", 0, "scale", scale, NULL);
  return vips_webpload_buffer(bytes, size, image, "fail_on", VIPS_FAIL_ON_WARNING, "access", VIPS_ACCESS_SEQUENTIAL, "n", n, "page", 0, NULL);
}

/* The pixels turned as the EXIF orientation says (the display's), as sharp's rotate() would turn them. */
static uint8_t *orient (uint8_t *pixels, uint32_t *width, uint32_t *height, size_t px, int o) {
  if (o <= 1 || o > 8) return pixels;
  uint32_t w = *width, h = *height, ow = o >= 5 ? h : w, oh = o >= 5 ? w : h;
  uint8_t *out = allocate((size_t)ow * oh * px);
  for (uint32_t y = 0; y < h; y++) {
    for (uint32_t x = 0; x < w; x++) {
      uint32_t dx, dy;
      switch (o) {
        case 2: dx = w - 1 - x; dy = y; break;
        case 3: dx = w - 1 - x; dy = h - 1 - y; break;
        case 4: dx = x; dy = h - 1 - y; break;
        case 5: dx = y; dy = x; break;
        case 6: dx = h - 1 - y; dy = x; break;
        case 7: dx = h - 1 - y; dy = w - 1 - x; break;
        default: dx = y; dy = w - 1 - x; break;
      }
      memcpy(out + ((size_t)dy * ow + dx) * px, pixels + ((size_t)y * w + x) * px, px);
    }
  }
  *width = ow, *height = oh;
  return out;
}

/* Set once the picture went through a conversion to sRGB: its profile is spent, never handed back. */
static int converted;

/* Whether an ICC profile's description names sRGB, as workers/image/srgb-profile.ts describesSrgb tests it. */
static int describes_srgb (const void *icc, size_t length) {
  return memmem(icc, length, "sRGB", 4) != NULL || memmem(icc, length, "s\0R\0G\0B\0", 8) != NULL || memmem(icc, length, "\0s\0R\0G\0B", 8) != NULL;
}

/* An RGB picture's profile that describes sRGB, which the pool thread drops unread (still-sandboxed.ts decodeStill),
 * as sharp's own decode there ignores it (image.ts colourHandling 'untagged'): no conversion before its resize. */
static int drops_profile (VipsImage *image) {
  const void *icc;
  size_t length;
  if (vips_image_get_interpretation(image) != VIPS_INTERPRETATION_sRGB || vips_image_get_bands(image) < 3) return 0;
  return vips_image_get_blob(image, "icc-profile-data", &icc, &length) == 0 && describes_srgb(icc, length);
}

/* What sharp's pipeline does with the picture's colour before the resize (src/pipeline.cc), for 8-bit pictures: a
 * profile converted to sRGB (perceptual, embedded), but an sRGB one dropped unread and, unless `convert`, another
 * RGB one handed back (image.ts colourHandling: kept on the output); a CMYK picture without one through libvips'
 * CMYK profile. A profile libvips refuses is no refusal: sharp goes on without it (its "Invalid embedded profile"). */
static VipsImage *to_srgb (VipsImage *image, int convert) {
  if (vips_image_get_format(image) != VIPS_FORMAT_UCHAR) return image;
  int space = vips_image_get_interpretation(image);
  VipsImage *out = NULL;
  int failed;
  if (vips_image_get_typeof(image, "icc-profile-data") != 0) {
    const void *icc;
    size_t length;
    if (vips_image_get_blob(image, "icc-profile-data", &icc, &length) != 0 || space == VIPS_INTERPRETATION_LABS || space == VIPS_INTERPRETATION_GREY16) return image;
    int rgb = space == VIPS_INTERPRETATION_sRGB && vips_image_get_bands(image) >= 3;
    if (rgb && ((describes_srgb(icc, length) && convert < 2) || !convert)) return image;  /* the pool thread drops or keeps it */
    failed = vips_icc_transform(image, &out, "srgb", "embedded", 1, "intent", VIPS_INTENT_PERCEPTUAL, "depth", 8, NULL);
  } else if (space == VIPS_INTERPRETATION_CMYK) {
    failed = vips_icc_transform(image, &out, "srgb", "input_profile", "cmyk", "intent", VIPS_INTENT_PERCEPTUAL, NULL);
  } else {
    return image;
  }
  if (failed != 0) {
    vips_error_clear();
    return image;
  }
  converted = 1;
  return out;
}

/* An int field of the image's metadata; 0 where it has none (or a negative one). */
static uint32_t int_field (VipsImage *image, const char *name) {
  int value = 0;
  if (vips_image_get_typeof(image, name) == 0 || vips_image_get_int(image, name, &value) != 0 || value < 0) return 0;
  return (uint32_t)value;
}

/* The page sharp reopens a HEIF of several pictures at, its primary one (src/common.cc HeifPrimaryPageReopen); 0: none. */
static int primary_page (VipsImage *image) {
  return int_field(image, "n-pages") > 1 ? (int)int_field(image, "heif-primary") : 0;
}

/*
 * --resize lanczos3: the resize sharp's pipeline begins with (src/pipeline.cc: image.resize(1 / hshrink, vscale 1 /
 * vshrink, its default kernel), after the shrink on load and the colour conversion above), done here where nothing
 * else would come first: a still as stored (no EXIF turn), 8-bit, with no profile left for the thread to keep (none,
 * converted, or one the thread drops unread: drops_profile()), made smaller on both sides or one; with an alpha
 * channel only where the caller's pipeline flattens it first (--flatten R G B: a JPEG's background, sharp's Flatten
 * before its resize, so done here first too) or keeps it through the resize (--alpha premultiplied: no padding or
 * smart crop after it), premultiplied around it as sharp's pipeline does. The same libvips calls on the same pixels,
 * so the same pixels: the pool thread's sharp then finds nothing to resize (a shrink of 1, so nothing to premultiply
 * either), and crops or embeds as ever. Only thumbnail-sized pixels cross: a 6 MP PNG's 18 MB were most of what the
 * sandbox added to its thumbnail.
 */
static VipsImage *resized (VipsImage *image, const struct fit *fit, int animation, int turned, const double *flatten, int premultiplied) {
  int alpha = vips_image_hasalpha(image);
  if (fit->mode == FIT_NONE || animation || turned || vips_image_get_format(image) != VIPS_FORMAT_UCHAR) return image;
  if (alpha && flatten == NULL && !premultiplied) return image;
  if (!converted && vips_image_get_typeof(image, "icc-profile-data") != 0 && !drops_profile(image)) return image;
  double hshrink, vshrink;
  sharp_shrink(fit, (double)vips_image_get_width(image), (double)vips_image_get_height(image), &hshrink, &vshrink);
  if (hshrink < 1 || vshrink < 1 || (hshrink == 1 && vshrink == 1)) return image;
  VipsImage *t[5];
  /* sharp's Flatten (src/operations.cc): image.flatten(background [r, g, b]); the thread's flatten then finds no alpha. */
  if (alpha && flatten != NULL) {
    VipsImage *flat;
    if (vips_flatten(image, &flat, "background", vips_array_double_newv(3, flatten[0], flatten[1], flatten[2]), NULL) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
    image = flat;
    alpha = 0;
  }
  /* sharp: image.premultiply().cast(format), the resize, and after the steps it takes on premultiplied pixels (none
   * here) image.unpremultiply().cast(format). */
  if (alpha && (vips_premultiply(image, &t[0], NULL) != 0 || vips_cast(t[0], &t[1], VIPS_FORMAT_UCHAR, NULL) != 0)) refuse(EXIT_REFUSED, "%s", vips_why());
  /* vips_resize's kernel when none is named is lanczos3, sharp's default, which is all the pool thread asks for. */
  if (vips_resize(alpha ? t[1] : image, &t[2], 1.0 / hshrink, "vscale", 1.0 / vshrink, NULL) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
  if (alpha && (vips_unpremultiply(t[2], &t[3], NULL) != 0 || vips_cast(t[3], &t[4], VIPS_FORMAT_UCHAR, NULL) != 0)) refuse(EXIT_REFUSED, "%s", vips_why());
  return alpha ? t[4] : t[2];
}

static int still (int argc, char **argv) {
  struct fit fit = { FIT_NONE, 0, 0 };
  long long max_pixels = 0, max_frames = 0, frame_budget = 0;
  int all_frames = 0, convert_profile = 0, resize = 0, premultiplied = 0, flattens = 0, at = 3;
  double background[3] = { 0, 0, 0 };
  const char *format = argv[2];
  for (; at + 1 < argc - 1; at += 2) {
    if (strcmp(argv[at], "--max-pixels") == 0) max_pixels = atoll(argv[at + 1]);
    else if (strcmp(argv[at], "--max-frames") == 0) max_frames = atoll(argv[at + 1]);
    else if (strcmp(argv[at], "--frame-budget") == 0) frame_budget = atoll(argv[at + 1]);
    else if (strcmp(argv[at], "--frames") == 0 && strcmp(argv[at + 1], "all") == 0) all_frames = 1;
    else if (strcmp(argv[at], "--frames") == 0 && strcmp(argv[at + 1], "first") == 0) all_frames = 0;
    else if (strcmp(argv[at], "--profile") == 0 && strcmp(argv[at + 1], "keep") == 0) convert_profile = 0;
    else if (strcmp(argv[at], "--profile") == 0 && strcmp(argv[at + 1], "convert") == 0) convert_profile = 1;
    else if (strcmp(argv[at], "--profile") == 0 && strcmp(argv[at + 1], "all") == 0) convert_profile = 2;
    else if (strcmp(argv[at], "--resize") == 0 && strcmp(argv[at + 1], "lanczos3") == 0) resize = 1;
    else if (strcmp(argv[at], "--alpha") == 0 && strcmp(argv[at + 1], "premultiplied") == 0) premultiplied = 1;
    else if (strcmp(argv[at], "--flatten") == 0 && at + 3 < argc - 1) {
      for (int i = 0; i < 3; i++) background[i] = atoi(argv[at + 1 + i]);
      for (int i = 0; i < 3; i++) if (background[i] < 0 || background[i] > 255) return EXIT_USAGE;
      flattens = 1;
      at += 2;
    } else if (strcmp(argv[at], "--fit") == 0 && at + 3 < argc - 1) {
      fit = (struct fit){ fit_named(argv[at + 1]), atol(argv[at + 2]), atol(argv[at + 3]) };
      if (fit.mode == FIT_NONE || fit.width < 0 || fit.height < 0) return EXIT_USAGE;
      at += 2;
    } else return EXIT_USAGE;
  }
  int known = strcmp(format, "jpeg") == 0 || strcmp(format, "png") == 0 || strcmp(format, "webp") == 0 || strcmp(format, "gif") == 0 || strcmp(format, "avif") == 0;
  if (!known || at != argc - 1 || max_pixels <= 0 || max_frames <= 0 || frame_budget <= 0) return EXIT_USAGE;
  size_t size;
  unsigned char *bytes = map_file(argv[argc - 1], &size);
  /* The header first: the limits are checked before a pixel is decoded (libvips decodes on write_to_memory). */
  VipsImage *image;
  if (load(format, bytes, size, 1, 0, 0, &image) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
  uint64_t width = (uint64_t)vips_image_get_width(image), height = (uint64_t)vips_image_get_height(image);
  if (width * height > (uint64_t)max_pixels) refuse(EXIT_TOO_LARGE, "over the pixel limit");
  /* "n-pages" as sharp reads it (vips_image_get_n_pages says 1 for 10000 pages or more). */
  int pages = 1;
  if (vips_image_get_typeof(image, "n-pages") != 0 && vips_image_get_int(image, "n-pages", &pages) != 0) pages = 1;
  uint32_t frames = pages > 1 ? (uint32_t)pages : 1;
  int orientation = vips_image_get_orientation(image);
  /* An animation over MAX_ANIMATION_FRAMES or the pixel budget of all its frames, refused before a frame is decoded,
   * as workers/image/animation.ts checkAnimationInput refuses it from sharp's header pass. */
  if (strcmp(format, "avif") != 0 && frames > 1) {
    if (frames > (uint64_t)max_frames) refuse(EXIT_TOO_LARGE, "an animation over the frame limit");
    if (frames * width * height > (uint64_t)frame_budget) refuse(EXIT_TOO_LARGE, "an animation over the pixel budget of all its frames");
  }
  /* --frames all: an animation the output keeps whole, every frame (sharp's pages: -1), where all its frames hold no
   * more pixels than one still may: they come back whole, as one tall image. Past that, its first frame. */
  int animation = all_frames && strcmp(format, "avif") != 0 && frames > 1 && frames * width * height <= (uint64_t)max_pixels;
  int primary = strcmp(format, "avif") == 0 ? primary_page(image) : 0;
  if (primary != 0) {
    if (load(format, bytes, size, 1, primary, 0, &image) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
    orientation = vips_image_get_orientation(image);
  }
  /* A JPEG's shrink or a WebP's scale on load, as sharp picks it; none for an animation turned or flipped upside down
   * by EXIF (orientations 3-8: sharp turns its frames one by one in a pass before the resize, workers/image/image-ops.ts). */
  double scale = 1;
  if ((strcmp(format, "webp") == 0 || strcmp(format, "jpeg") == 0) && fit.mode != FIT_NONE && !(animation && orientation >= 3)) {
    /* sharp's shrink-on-load reads the stored sides (one frame's), its target swapped for a quarter turn (pipeline.cc). */
    struct fit stored = fit;
    if (orientation >= 5 && orientation <= 8) stored.width = fit.height, stored.height = fit.width;
    double hshrink, vshrink;
    sharp_shrink(&stored, (double)width, (double)height, &hshrink, &vshrink);
    /* "The common part of the shrink: the bit by which both axes must be shrunk." */
    double shrink = hshrink < vshrink ? hshrink : vshrink;
    if (strcmp(format, "jpeg") == 0) {
      int factor = shrink >= 8 ? 8 : shrink >= 4 ? 4 : shrink >= 2 ? 2 : 1;
      /* sharp: "lower shrink-on-load for known libjpeg rounding errors". */
      scale = factor > 1 && (int)shrink == factor ? factor / 2 : factor;
    } else if (shrink > 1) {
      scale = 1.0 / shrink;
    }
  }
  if ((scale != 1 || animation) && load(format, bytes, size, scale, 0, animation, &image) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
  /* An animation's profile is converted here whatever --profile says: its frames come back as raw pixels, which carry none. */
  image = to_srgb(image, animation && convert_profile == 0 ? 1 : convert_profile);
  int turned = orientation >= 2 && orientation <= 8, quarter = turned && orientation >= 5;
  if (resize) image = resized(image, &fit, animation, turned, flattens ? background : NULL, premultiplied);
  uint32_t w = (uint32_t)vips_image_get_width(image), h = (uint32_t)vips_image_get_height(image);
  uint32_t channels = (uint32_t)vips_image_get_bands(image), band_format = (uint32_t)vips_image_get_format(image);
  uint32_t bits = band_format == VIPS_FORMAT_UCHAR ? 8 : band_format == VIPS_FORMAT_USHORT ? 16 : 0;
  if (channels < 1 || channels > 4 || bits == 0) refuse(EXIT_REFUSED, "%u bands of format %u", channels, band_format);
  /* The profile copied before the decode: a loader sets its metadata again as it decodes, freeing what it had set. */
  const void *blob;
  void *icc = NULL;
  size_t icc_length = 0;
  if (!converted && vips_image_get_typeof(image, "icc-profile-data") != 0 && vips_image_get_blob(image, "icc-profile-data", &blob, &icc_length) == 0) {
    if ((icc = malloc(icc_length)) == NULL) refuse(EXIT_MEMORY, "out of memory");
    memcpy(icc, blob, icc_length);
  } else {
    icc_length = 0;
  }
  /* An animation: its frames' height, delays and loop count, as sharp's metadata() gives them. */
  uint32_t page_height = animation ? int_field(image, "page-height") : h, out_pages = page_height == 0 ? 0 : h / page_height, loop = int_field(image, "loop");
  if (out_pages == 0 || out_pages * page_height != h) refuse(EXIT_REFUSED, "frames of %u rows in %u", page_height, h);
  int *delay = NULL, delays = 0;
  if (out_pages > 1 && (vips_image_get_typeof(image, "delay") == 0 || vips_image_get_array_int(image, "delay", &delay, &delays) != 0)) delays = 0;
  uint32_t *timing = out_pages > 1 ? allocate(sizeof *timing * out_pages) : NULL;
  for (uint32_t i = 0; timing != NULL && i < out_pages; i++) timing[i] = i < (uint32_t)delays && delay[i] > 0 ? (uint32_t)delay[i] : 0;
  uint32_t header[10] = { 0, quarter ? page_height : w, quarter ? w * out_pages : h, channels, bits, frames, out_pages, loop, int_field(image, "palette") != 0 ? int_field(image, "bits-per-sample") : 0, (uint32_t)icc_length };
  memcpy(header, "IMD3", 4);
  if (write_all(header, sizeof header) != 0 || write_all(icc, icc_length) != 0 || (timing != NULL && write_all(timing, sizeof *timing * out_pages) != 0)) return EXIT_REFUSED;
  if (!turned) {
    if (stream_pixels(image) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
    return 0;
  }
  /* Turned: the whole picture first, then each frame's pixels moved. */
  size_t length, px = channels * (bits / 8), frame = (size_t)w * page_height * px;
  uint8_t *pixels = pixels_of(image, &length);
  if (length != frame * out_pages) refuse(EXIT_REFUSED, "another size than its header says");
  for (uint32_t i = 0; i < out_pages; i++) {
    uint32_t fw = w, fh = page_height;
    uint8_t *turned_frame = orient(pixels + i * frame, &fw, &fh, px, orientation);
    if (write_all(turned_frame, frame) != 0) return EXIT_REFUSED;
    munmap(turned_frame, frame);
  }
  return 0;
}

/* ---- The header (--info) ---- */

static int info (int argc, char **argv) {
  /* libvips' loader classes of the formats thumbd serves, in the codec order of the output. */
  static const char *const loaders[] = { "VipsForeignLoadJpegBuffer", "VipsForeignLoadPngBuffer", "VipsForeignLoadWebpBuffer", "VipsForeignLoadNsgifBuffer", "VipsForeignLoadHeifBuffer" };
  static const char *const formats[] = { "jpeg", "png", "webp", "gif", "avif" };
  if (argc != 5 || strcmp(argv[2], "--max-pixels") != 0 || atoll(argv[3]) <= 0) {
    fputs(USAGE, stderr);
    return EXIT_USAGE;
  }
  size_t size;
  unsigned char *bytes = map_file(argv[4], &size);
  const char *loader = vips_foreign_find_load_buffer(bytes, size);
  uint32_t codec = 0;
  while (loader != NULL && codec < 5 && strcmp(loader, loaders[codec]) != 0) codec++;
  if (loader == NULL || codec == 5) refuse(EXIT_UNSUPPORTED, "unsupported image format");
  const char *format = formats[codec];
  VipsImage *image;
  if (load(format, bytes, size, 1, 0, 0, &image) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
  int primary = codec == 4 ? primary_page(image) : 0;
  if (primary != 0 && load(format, bytes, size, 1, primary, 0, &image) != 0) refuse(EXIT_REFUSED, "%s", vips_why());
  uint64_t width = (uint64_t)vips_image_get_width(image), height = (uint64_t)vips_image_get_height(image);
  /* sharp's limitInputPixels, checked as it opens the input. */
  if (width * height > (uint64_t)atoll(argv[3])) refuse(EXIT_TOO_LARGE, "over the pixel limit");
  const void *icc = NULL;
  size_t icc_length = 0;
  if (vips_image_get_typeof(image, "icc-profile-data") == 0 || vips_image_get_blob(image, "icc-profile-data", &icc, &icc_length) != 0) icc_length = 0;
  uint32_t header[12] = {
    0, (uint32_t)width, (uint32_t)height, int_field(image, "orientation"), int_field(image, "n-pages"),
    vips_image_hasalpha(image) ? 1 : 0, codec, (uint32_t)vips_image_get_interpretation(image),
    (uint32_t)vips_image_get_bands(image), int_field(image, "palette") != 0, int_field(image, "bits-per-sample"), (uint32_t)icc_length
  };
  memcpy(header, "IMI1", 4);
  if (write_all(header, sizeof header) != 0 || write_all(icc, icc_length) != 0) return EXIT_REFUSED;
  return 0;
}

int main (int argc, char **argv) {
  /* A pipe of 1 MB where the kernel allows it (pipe-max-size): the pixels leave in fewer, larger writes. */
  fcntl(STDOUT_FILENO, F_SETPIPE_SZ, 1 << 20);
  if (argc >= 3 && strcmp(argv[1], "--still") == 0) return still(argc, argv);
  if (argc >= 2 && strcmp(argv[1], "--info") == 0) return info(argc, argv);
  return jpeg(argc, argv);
}
