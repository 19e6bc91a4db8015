// image-decode: a JPEG decoded at a reduced scale by Debian's libturbojpeg, in the decoder sandbox (run as
// ffmpeg and heif-decode are: forked from its zygote or exec'd through thumbd-sandbox-exec, reading only its
// input file, no socket, no exec, bounded memory, killed at the job's deadline). The pool thread gets the
// pixels on stdout and resizes and encodes them with sharp, as it did libturbojpeg's pixels decoded in-process
// (workers/image/jpeg-decode.ts). A bug in the decoder then reaches this process only: not the server's keys, not
// other requests' photos.
//
//   image-decode --scale N --size W H --channels 1|3 FILE
//   image-decode --still png|webp|gif --max-pixels N --max-frames N --frame-budget N [--frames first|all] [--fit MODE W H] FILE
//     (native/still-decode.c)
//
// N: 1, 2, 4 or 8 (the shrink-on-load the pool thread chose); W H: the size the header pass read, which
// libturbojpeg's own header must give; channels: 1 grey, 3 RGB. Output: "TJD1", then width, height and
// channels (u32 little-endian), then the pixels, rows top to bottom. Exit: 0; 2 the decoder refused the JPEG
// (a libjpeg warning or error, more than 500 scans); 3 another size than expected; 64 usage; 70 out of memory.
//
// TurboJPEG 2's prototypes are declared here (the API libturbojpeg 2.1 and 3.x export) so that the build needs
// only the runtime library, as workers/image/jpeg-turbo.ts does through koffi.
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "still-decode.h"

void *tjInitDecompress(void);
int tjDecompressHeader3(void *handle, const unsigned char *jpeg, unsigned long size, int *width, int *height, int *subsamp, int *colorspace);
int tjDecompress2(void *handle, const unsigned char *jpeg, unsigned long size, unsigned char *dst, int width, int pitch, int height, int pixelFormat, int flags);
char *tjGetErrorStr2(void *handle);
int tjDestroy(void *handle);

enum { TJPF_RGB = 0, TJPF_GRAY = 6, TJFLAG_ACCURATEDCT = 4096, TJFLAG_STOPONWARNING = 8192, TJFLAG_LIMITSCANS = 32768 };
enum { EXIT_REFUSED = 2, EXIT_SIZE = 3, EXIT_USAGE = 64, EXIT_MEMORY = 70 };

/* All of it on stdout, or -1 (the reader went away): the JPEG path's and the still decoders' one writer. */
int write_all (const void *data, size_t length) {
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

/* The whole file, mapped (its pages come from the page cache, faulted in at once): a JPEG is decoded from memory. */
static unsigned char *map_file (const char *path, size_t *size) {
  int fd = open(path, O_RDONLY | O_CLOEXEC);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0 || st.st_size <= 0) return NULL;
  void *bytes = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE | MAP_POPULATE, fd, 0);
  close(fd);
  *size = (size_t)st.st_size;
  return bytes == MAP_FAILED ? NULL : bytes;
}

static enum still_fit_mode fit_named (const char *name) {
  static const char *const names[] = { "cover", "contain", "fill", "inside", "outside" };
  for (int i = 0; i < 5; i++) if (strcmp(name, names[i]) == 0) return (enum still_fit_mode)(i + 1);
  return FIT_NONE;
}

/* --still FORMAT --max-pixels N --max-frames N --frame-budget N [--frames first|all] [--fit MODE WIDTH HEIGHT] FILE; 69 where built
 * without the still decoders (their -dev packages missing: scripts/build-zygote.sh), which is how the server
 * tells (workers/tools/detect.ts). */
static int still (int argc, char **argv) {
#ifdef THUMBD_NO_STILLS
  (void)argc, (void)argv, (void)fit_named;
  return 69;
#else
  struct still_fit fit = { FIT_NONE, 0, 0 };
  long long max_pixels = 0, max_frames = 0, frame_budget = 0;
  enum still_frames frames = FRAMES_FIRST;
  int at = 3;
  for (; at + 1 < argc - 1; at += 2) {
    if (strcmp(argv[at], "--max-pixels") == 0) max_pixels = atoll(argv[at + 1]);
    else if (strcmp(argv[at], "--max-frames") == 0) max_frames = atoll(argv[at + 1]);
    else if (strcmp(argv[at], "--frame-budget") == 0) frame_budget = atoll(argv[at + 1]);
    else if (strcmp(argv[at], "--frames") == 0 && strcmp(argv[at + 1], "all") == 0) frames = FRAMES_ALL;
    else if (strcmp(argv[at], "--frames") == 0 && strcmp(argv[at + 1], "first") == 0) frames = FRAMES_FIRST;
    else if (strcmp(argv[at], "--fit") == 0 && at + 3 < argc - 1) {
      fit = (struct still_fit){ fit_named(argv[at + 1]), atol(argv[at + 2]), atol(argv[at + 3]) };
      if (fit.mode == FIT_NONE || fit.width < 0 || fit.height < 0) return EXIT_USAGE;
      at += 2;
    } else return EXIT_USAGE;
  }
  if (at != argc - 1 || max_pixels <= 0 || max_frames <= 0 || frame_budget <= 0) return EXIT_USAGE;
  size_t size;
  unsigned char *bytes = map_file(argv[argc - 1], &size);
  if (bytes == NULL) { fprintf(stderr, "image-decode: cannot read the input: %s\n", strerror(errno)); return EXIT_REFUSED; }
  struct still_limits limits = { (uint64_t)max_pixels, (uint64_t)max_frames, (uint64_t)frame_budget };
  return still_decode(argv[2], bytes, size, &limits, frames, &fit);
#endif
}

int main (int argc, char **argv) {
  if (argc >= 3 && strcmp(argv[1], "--still") == 0) return still(argc, argv);
  if (argc != 9 || strcmp(argv[1], "--scale") != 0 || strcmp(argv[3], "--size") != 0 || strcmp(argv[6], "--channels") != 0) {
    fprintf(stderr, "usage: image-decode --scale N --size W H --channels 1|3 FILE\n");
    return EXIT_USAGE;
  }
  int scale = atoi(argv[2]), expect_w = atoi(argv[4]), expect_h = atoi(argv[5]), channels = atoi(argv[7]);
  const char *path = argv[argc - 1];
  if ((scale != 1 && scale != 2 && scale != 4 && scale != 8) || expect_w <= 0 || expect_h <= 0 || (channels != 1 && channels != 3)) {
    fprintf(stderr, "image-decode: bad arguments\n");
    return EXIT_USAGE;
  }
  size_t size;
  unsigned char *jpeg = map_file(path, &size);
  if (jpeg == NULL) { fprintf(stderr, "image-decode: cannot read the input: %s\n", strerror(errno)); return EXIT_REFUSED; }
  void *tj = tjInitDecompress();
  if (tj == NULL) return EXIT_MEMORY;
  int w, h, subsamp, space;
  if (tjDecompressHeader3(tj, jpeg, size, &w, &h, &subsamp, &space) != 0) {
    fprintf(stderr, "image-decode: header: %s\n", tjGetErrorStr2(tj));
    return EXIT_REFUSED;
  }
  /* What raw RGB or grey pixels lose nothing of (CMYK and YCCK stay with sharp, as in workers/image/jpeg-decode.ts). */
  if (space != 0 && space != 1 && space != 2) { fprintf(stderr, "image-decode: colour space %d\n", space); return EXIT_REFUSED; }
  if (w != expect_w || h != expect_h) { fprintf(stderr, "image-decode: %dx%d, not %dx%d\n", w, h, expect_w, expect_h); return EXIT_SIZE; }
  /* TJSCALED: libjpeg's scaled size, as libvips' jpegload with shrink. */
  uint32_t header[4];
  memcpy(header, "TJD1", 4);
  header[1] = (uint32_t)((w + scale - 1) / scale);
  header[2] = (uint32_t)((h + scale - 1) / scale);
  header[3] = (uint32_t)channels;
  size_t bytes = (size_t)header[1] * header[2] * (size_t)channels;
  /* Faulted in at once, not a page at a time as the decoder writes it (a process lives for one image). */
  unsigned char *pixels = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_POPULATE, -1, 0);
  if (pixels == MAP_FAILED) return EXIT_MEMORY;
  if (tjDecompress2(tj, jpeg, size, pixels, (int)header[1], 0, (int)header[2], channels == 1 ? TJPF_GRAY : TJPF_RGB, TJFLAG_STOPONWARNING | TJFLAG_LIMITSCANS) != 0) {
    fprintf(stderr, "image-decode: %s\n", tjGetErrorStr2(tj));
    return EXIT_REFUSED;
  }
  if (write_all(header, sizeof header) != 0 || write_all(pixels, bytes) != 0) return EXIT_REFUSED;
  return 0;
}
