// The still-image half of native/image-decode: a PNG (libpng), WebP (libwebp, scaled on load as libvips' webpload
// does for sharp) or GIF's first frame (giflib), decoded in the decoder sandbox, its pixels on stdout for the pool
// thread to resize and encode with sharp (workers/image/still-sandboxed.ts). Pixels as libvips' loaders give them, so
// the thumbnail is sharp's: PNG samples as stored (no gAMA/cHRM/sRGB applied: libvips applies none either),
// palettes and low bit depths expanded, tRNS as alpha, 16-bit kept; WebP RGB or RGBA; a GIF's first frame on a
// transparent canvas of the logical screen's size, RGBA (libnsgif's). The EXIF orientation (PNG eXIf, WebP EXIF)
// is applied here, so the pixels are display-oriented; the ICC profile goes along for the pool thread.
//
//   image-decode --still png|webp|gif --max-pixels N [--fit MODE WIDTH HEIGHT] FILE
//
// --fit: the resize the pool thread will make (sharp's fit; 0 for a side not given): a WebP is then decoded at
// 1/shrink, sharp's shrink-on-load (src/pipeline.cc: scale = 1 / min(hshrink, vshrink) when above 1).
// Output: "IMD2", then width, height, channels (1-4), bits (8 or 16, little-endian samples), frames (of the
// file) and the profile's length, u32 little-endian; the profile; the pixels, rows top to bottom.
// Exit: 0; 2 the decoder refused the image (an error or a warning, as sharp's failOn: 'warning'); 3 over
// --max-pixels; 4 an animated WebP (not decoded here yet); 64 usage; 70 out of memory.
#include <errno.h>
#include <fcntl.h>
#include <gif_lib.h>
#include <png.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <webp/decode.h>
#include <webp/demux.h>

#include "still-decode.h"

enum { EXIT_REFUSED = 2, EXIT_TOO_LARGE = 3, EXIT_ANIMATED = 4, EXIT_USAGE = 64, EXIT_MEMORY = 70 };

struct picture {
  uint32_t width, height, channels, bits, frames;
  uint8_t *pixels;
  const uint8_t *icc;
  size_t icc_length;
  int orientation;
};

__attribute__((noreturn)) static void refuse (int code, const char *what, const char *detail) {
  fprintf(stderr, "image-decode: %s%s%s\n", what, detail == NULL ? "" : ": ", detail == NULL ? "" : detail);
  exit(code);
}

static uint8_t *allocate (size_t bytes) {
  /* Faulted in at once (a process lives for one image). */
  void *at = mmap(NULL, bytes == 0 ? 1 : bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (at == MAP_FAILED) refuse(EXIT_MEMORY, "out of memory", NULL);
  return at;
}

static void check_pixels (uint64_t width, uint64_t height, uint64_t max_pixels) {
  if (width == 0 || height == 0) refuse(EXIT_REFUSED, "no pixels", NULL);
  if (width * height > max_pixels) refuse(EXIT_TOO_LARGE, "over the pixel limit", NULL);
}

/* An animation over MAX_ANIMATION_FRAMES or the pixel budget of all its frames, refused before a frame is decoded,
 * as workers/image/animation.ts checkAnimationInput refuses it from sharp's header pass (a first frame that does not
 * decode must not turn that 413 into a 422). */
static void check_animation (uint64_t frames, uint64_t width, uint64_t height, const struct still_limits *limits) {
  if (frames > limits->max_frames) refuse(EXIT_TOO_LARGE, "an animation over the frame limit", NULL);
  if (frames * width * height > limits->frame_budget) refuse(EXIT_TOO_LARGE, "an animation over the pixel budget of all its frames", NULL);
}

/* The orientation (tag 0x0112 of IFD0) of a TIFF-structured EXIF block, 1 where there is none or it does not read. */
static int exif_orientation (const uint8_t *exif, size_t length) {
  if (length >= 6 && memcmp(exif, "Exif\0\0", 6) == 0) exif += 6, length -= 6;
  if (length < 8) return 1;
  int le = exif[0] == 'I' && exif[1] == 'I';
  if (!le && !(exif[0] == 'M' && exif[1] == 'M')) return 1;
#define U16(p) (le ? (uint32_t)(p)[0] | (uint32_t)(p)[1] << 8 : (uint32_t)(p)[0] << 8 | (uint32_t)(p)[1])
#define U32(p) (le ? U16(p) | U16((p) + 2) << 16 : U16(p) << 16 | U16((p) + 2))
  uint32_t ifd = U32(exif + 4);
  if (ifd > length - 2) return 1;
  uint32_t entries = U16(exif + ifd);
  for (uint32_t i = 0; i < entries && ifd + 2 + 12 * (i + 1) <= length; i++) {
    const uint8_t *entry = exif + ifd + 2 + 12 * i;
    if (U16(entry) == 0x0112 && U16(entry + 2) == 3) {
      uint32_t value = U16(entry + 8);
      return value >= 1 && value <= 8 ? (int)value : 1;
    }
  }
#undef U32
#undef U16
  return 1;
}

/* The picture turned as its EXIF orientation says (the display's pixels), as sharp's rotate() would. */
static void orient (struct picture *p) {
  int o = p->orientation;
  if (o <= 1 || o > 8) return;
  size_t px = p->channels * (p->bits / 8);
  uint32_t w = p->width, h = p->height, ow = o >= 5 ? h : w, oh = o >= 5 ? w : h;
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
      memcpy(out + ((size_t)dy * ow + dx) * px, p->pixels + ((size_t)y * w + x) * px, px);
    }
  }
  munmap(p->pixels, (size_t)w * h * px);
  p->pixels = out, p->width = ow, p->height = oh, p->orientation = 1;
}

/* ---- PNG ---- */

static void png_refuse_error (png_structp png, png_const_charp message) { (void)png; refuse(EXIT_REFUSED, "png", message); }
/* A warning is a refusal too, as libvips' pngload under failOn: 'warning'. */
static void png_refuse_warning (png_structp png, png_const_charp message) { (void)png; refuse(EXIT_REFUSED, "png warning", message); }

struct memory_source { const uint8_t *data; size_t length, at; };

static void png_read_memory (png_structp png, png_bytep out, size_t length) {
  struct memory_source *source = png_get_io_ptr(png);
  if (length > source->length - source->at) png_error(png, "truncated");
  memcpy(out, source->data + source->at, length);
  source->at += length;
}

static void decode_png (const uint8_t *data, size_t size, const struct still_limits *limits, struct picture *p) {
  png_structp png = png_create_read_struct(PNG_LIBPNG_VER_STRING, NULL, png_refuse_error, png_refuse_warning);
  png_infop info = png == NULL ? NULL : png_create_info_struct(png);
  if (info == NULL) refuse(EXIT_MEMORY, "out of memory", NULL);
  struct memory_source source = { data, size, 0 };
  png_set_read_fn(png, &source, png_read_memory);
  /* As libvips: an sRGB profile libpng knows to be wrong is no reason to refuse the picture. */
  png_set_option(png, PNG_SKIP_sRGB_CHECK_PROFILE, PNG_OPTION_ON);
  png_set_user_limits(png, 0x7fffffff, 0x7fffffff);
  png_read_info(png, info);
  png_uint_32 width, height;
  int depth, colour, interlace;
  png_get_IHDR(png, info, &width, &height, &depth, &colour, &interlace, NULL, NULL);
  check_pixels(width, height, limits->max_pixels);
  png_set_expand(png);  /* palette to RGB, grey below 8 bits to 8, tRNS to alpha */
  if (depth == 16) png_set_swap(png);  /* little-endian samples, as sharp's Uint16Array raw input reads them */
  png_set_interlace_handling(png);
  png_read_update_info(png, info);
  p->width = width, p->height = height;
  p->channels = png_get_channels(png, info);
  p->bits = png_get_bit_depth(png, info);
  p->frames = 1;
  if (p->channels < 1 || p->channels > 4 || (p->bits != 8 && p->bits != 16)) refuse(EXIT_REFUSED, "png", "unexpected layout");
  size_t row = (size_t)width * p->channels * (p->bits / 8);
  if (png_get_rowbytes(png, info) != row) refuse(EXIT_REFUSED, "png", "unexpected row size");
  p->pixels = allocate(row * height);
  png_bytep *rows = malloc(sizeof *rows * height);
  if (rows == NULL) refuse(EXIT_MEMORY, "out of memory", NULL);
  for (png_uint_32 y = 0; y < height; y++) rows[y] = p->pixels + row * y;
  png_read_image(png, rows);
  png_read_end(png, info);
  png_charp name;
  int compression;
  png_bytep profile;
  png_uint_32 profile_length;
  if (png_get_iCCP(png, info, &name, &compression, &profile, &profile_length) != 0) p->icc = profile, p->icc_length = profile_length;
  png_bytep exif;
  png_uint_32 exif_length;
  if (png_get_eXIf_1(png, info, &exif_length, &exif) != 0) p->orientation = exif_orientation(exif, exif_length);
}

/* ---- WebP ---- */

/* sharp's ResolveShrink (src/common.cc) for one side or both, as workers/image/jpeg-scale.ts resolveShrink(). */
static double sharp_shrink (const struct still_fit *fit, double width, double height) {
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
  return h < v ? h : v;
}

static void decode_webp (const uint8_t *data, size_t size, const struct still_limits *limits, const struct still_fit *fit, struct picture *p) {
  WebPDecoderConfig config;
  if (!WebPInitDecoderConfig(&config)) refuse(EXIT_USAGE, "libwebp version", NULL);
  if (WebPGetFeatures(data, size, &config.input) != VP8_STATUS_OK) refuse(EXIT_REFUSED, "webp", "header");
  WebPData whole = { data, size };
  WebPDemuxer *demux = WebPDemux(&whole);
  if (demux == NULL) refuse(EXIT_REFUSED, "webp", "container");
  uint32_t width = WebPDemuxGetI(demux, WEBP_FF_CANVAS_WIDTH), height = WebPDemuxGetI(demux, WEBP_FF_CANVAS_HEIGHT);
  check_pixels(width, height, limits->max_pixels);
  p->frames = WebPDemuxGetI(demux, WEBP_FF_FRAME_COUNT);
  check_animation(p->frames, width, height, limits);
  WebPChunkIterator chunk;
  if (WebPDemuxGetChunk(demux, "ICCP", 1, &chunk)) p->icc = chunk.chunk.bytes, p->icc_length = chunk.chunk.size;
  if (WebPDemuxGetChunk(demux, "EXIF", 1, &chunk)) p->orientation = exif_orientation(chunk.chunk.bytes, chunk.chunk.size);
  /* An animated WebP stays with sharp in the pool thread for now (docs/security.md). */
  if (config.input.has_animation) refuse(EXIT_ANIMATED, "webp", "animated");
  if (config.input.width != (int)width || config.input.height != (int)height) refuse(EXIT_REFUSED, "webp", "canvas and frame differ");
  /* sharp's shrink-on-load reads the stored sides, its target swapped for a quarter turn (pipeline.cc). */
  struct still_fit stored = *fit;
  if (p->orientation >= 5) stored.width = fit->height, stored.height = fit->width;
  double shrink = stored.mode == FIT_NONE ? 1 : sharp_shrink(&stored, width, height);
  uint32_t w = width, h = height;
  if (shrink > 1) {
    /* libvips' webpload scale: VIPS_RINT of each side, at least 1. */
    w = (uint32_t)(width / shrink + 0.5), h = (uint32_t)(height / shrink + 0.5);
    w = w < 1 ? 1 : w, h = h < 1 ? 1 : h;
    config.options.use_scaling = 1, config.options.scaled_width = (int)w, config.options.scaled_height = (int)h;
  }
  p->width = w, p->height = h, p->bits = 8, p->channels = config.input.has_alpha ? 4 : 3;
  size_t stride = (size_t)w * p->channels;
  p->pixels = allocate(stride * h);
  config.output.colorspace = config.input.has_alpha ? MODE_RGBA : MODE_RGB;
  config.output.is_external_memory = 1;
  config.output.u.RGBA.rgba = p->pixels;
  config.output.u.RGBA.stride = (int)stride;
  config.output.u.RGBA.size = stride * h;
  VP8StatusCode status = WebPDecode(data, size, &config);
  if (status != VP8_STATUS_OK) refuse(EXIT_REFUSED, "webp", status == VP8_STATUS_NOT_ENOUGH_DATA ? "truncated" : "corrupt");
  /* The demuxer's chunks point into `data`, which outlives it. */
}

/* ---- GIF ---- */

static int gif_read_memory (GifFileType *gif, GifByteType *out, int length) {
  struct memory_source *source = gif->UserData;
  size_t n = (size_t)length <= source->length - source->at ? (size_t)length : source->length - source->at;
  memcpy(out, source->data + source->at, n);
  source->at += n;
  return (int)n;
}

static void gif_check (int ok, GifFileType *gif) {
  if (ok != GIF_ERROR) return;
  const char *why = GifErrorString(gif->Error);
  refuse(EXIT_REFUSED, "gif", why == NULL ? "error" : why);
}

/* The frames of the file, counted as libnsgif's scan counts them for sharp's header pass: their LZW data skipped
 * block by block, never decoded; the count so far where the file goes wrong (the decode then says what). */
static uint32_t count_gif_frames (const uint8_t *data, size_t size) {
  struct memory_source source = { data, size, 0 };
  int error;
  GifFileType *gif = DGifOpen(&source, gif_read_memory, &error);
  if (gif == NULL) return 0;
  uint32_t frames = 0;
  GifRecordType record;
  int code;
  GifByteType *block;
  while (DGifGetRecordType(gif, &record) != GIF_ERROR && record != TERMINATE_RECORD_TYPE) {
    if (record == EXTENSION_RECORD_TYPE) {
      if (DGifGetExtension(gif, &code, &block) == GIF_ERROR) break;
    } else if (record == IMAGE_DESC_RECORD_TYPE) {
      if (DGifGetImageDesc(gif) == GIF_ERROR) break;
      frames++;
      if (DGifGetCode(gif, &code, &block) == GIF_ERROR) break;
    } else {
      break;
    }
    int ok = GIF_OK;
    while (block != NULL && (ok = record == EXTENSION_RECORD_TYPE ? DGifGetExtensionNext(gif, &block) : DGifGetCodeNext(gif, &block)) != GIF_ERROR);
    if (ok == GIF_ERROR) break;
  }
  DGifCloseFile(gif, &error);
  return frames;
}

/* The first frame, drawn onto a transparent canvas of the logical screen (its disposal does not matter to a
 * still); the frames counted first (count_gif_frames), the animation's limits checked before any is decoded. */
static void decode_gif (const uint8_t *data, size_t size, const struct still_limits *limits, enum still_frames wanted, struct picture *p) {
  struct memory_source source = { data, size, 0 };
  int error;
  GifFileType *gif = DGifOpen(&source, gif_read_memory, &error);
  if (gif == NULL) refuse(EXIT_REFUSED, "gif", GifErrorString(error));
  uint32_t width = (uint32_t)gif->SWidth, height = (uint32_t)gif->SHeight;
  check_pixels(width, height, limits->max_pixels);
  uint32_t frames = count_gif_frames(data, size);
  check_animation(frames, width, height, limits);
  /* An animation the output keeps whole is sharp's to decode (every frame, workers/image/animation.ts), as before. */
  if (frames > 1 && wanted == FRAMES_ALL) refuse(EXIT_ANIMATED, "gif", "animated");
  p->width = width, p->height = height, p->channels = 4, p->bits = 8, p->frames = frames;
  p->pixels = allocate((size_t)width * height * 4);
  int transparent = -1;
  GifRecordType record;
  do {
    gif_check(DGifGetRecordType(gif, &record), gif);
    if (record == EXTENSION_RECORD_TYPE) {
      int code;
      GifByteType *block;
      gif_check(DGifGetExtension(gif, &code, &block), gif);
      if (code == GRAPHICS_EXT_FUNC_CODE && block != NULL && block[0] >= 4) transparent = (block[1] & 1) ? block[4] : -1;
      while (block != NULL) gif_check(DGifGetExtensionNext(gif, &block), gif);
    } else if (record == IMAGE_DESC_RECORD_TYPE) {
      gif_check(DGifGetImageDesc(gif), gif);
      GifImageDesc *d = &gif->Image;
      ColorMapObject *map = d->ColorMap != NULL ? d->ColorMap : gif->SColorMap;
      if (map == NULL || d->Width <= 0 || d->Height <= 0) refuse(EXIT_REFUSED, "gif", "no colour map or no frame");
      if ((uint64_t)d->Width * (uint64_t)d->Height > limits->max_pixels) refuse(EXIT_TOO_LARGE, "over the pixel limit", NULL);
      GifPixelType *line = malloc((size_t)d->Width);
      if (line == NULL) refuse(EXIT_MEMORY, "out of memory", NULL);
      /* Rows come in the order stored: an interlaced frame's passes start at rows 0, 4, 2, 1, every 8, 8, 4, 2. */
      static const int start[] = { 0, 4, 2, 1 }, step[] = { 8, 8, 4, 2 };
      int passes = d->Interlace ? 4 : 1;
      for (int pass = 0; pass < passes; pass++) {
        for (int y = d->Interlace ? start[pass] : 0; y < d->Height; y += d->Interlace ? step[pass] : 1) {
          gif_check(DGifGetLine(gif, line, d->Width), gif);
          long row = (long)d->Top + y;
          if (row < 0 || row >= (long)height) continue;
          for (int x = 0; x < d->Width; x++) {
            long column = (long)d->Left + x;
            if (column < 0 || column >= (long)width || line[x] == transparent || line[x] >= map->ColorCount) continue;
            uint8_t *out = p->pixels + ((size_t)row * width + (size_t)column) * 4;
            GifColorType c = map->Colors[line[x]];
            out[0] = c.Red, out[1] = c.Green, out[2] = c.Blue, out[3] = 255;
          }
        }
      }
      free(line);
      /* The first frame only, as libvips' nsgif load with pages 1 (the rest was counted, never decoded). */
      return;
    }
  } while (record != TERMINATE_RECORD_TYPE);
  refuse(EXIT_REFUSED, "gif", "no frame");
}

int still_decode (const char *format, const uint8_t *data, size_t size, const struct still_limits *limits, enum still_frames frames, const struct still_fit *fit) {
  struct picture p = { .orientation = 1 };
  if (strcmp(format, "png") == 0) decode_png(data, size, limits, &p);
  else if (strcmp(format, "webp") == 0) decode_webp(data, size, limits, fit, &p);
  else if (strcmp(format, "gif") == 0) decode_gif(data, size, limits, frames, &p);
  else refuse(EXIT_USAGE, "unknown format", format);
  orient(&p);
  uint32_t header[7] = { 0, p.width, p.height, p.channels, p.bits, p.frames, (uint32_t)p.icc_length };
  memcpy(header, "IMD2", 4);
  size_t bytes = (size_t)p.width * p.height * p.channels * (p.bits / 8);
  if (write_all(header, sizeof header) != 0 || write_all(p.icc, p.icc_length) != 0 || write_all(p.pixels, bytes) != 0) return EXIT_REFUSED;
  return 0;
}
