// See heif-guards.h. The four definitions below must be in the executable's dynamic symbol table
// (scripts/build-zygote.sh exports them), or libheif's calls would go past them.
#define _GNU_SOURCE
#include "heif-guards.h"

#include <dav1d/dav1d.h>
#include <dlfcn.h>
#include <errno.h>
#include <libde265/de265.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hevc-slice.h"
#include "hevc-sps.h"

static int (*real_pthread_create)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *);
static de265_error (*real_push_nal)(de265_decoder_context *, const void *, int, de265_PTS, void *);
static de265_error (*real_free_decoder)(de265_decoder_context *);
static int (*real_dav1d_open)(Dav1dContext **, const Dav1dSettings *);
static atomic_uint alive, peak;
static unsigned thread_bound;  /* 0: not armed */
static unsigned long long pixel_bound, decode_budget;
static atomic_ullong decoded;  /* pixels of every picture decoded so far: each HEVC picture, each AV1 frame */
/* The largest picture the SPSs given to this thread's libde265 decoder code: libheif gives one item's parameter
 * sets (its hvcC's first) and data to one decoder, on one thread, and frees it before that thread decodes another. */
static __thread unsigned long long picture_pixels;
static __thread struct hevc_stream stream;  /* that decoder's parameter sets and current picture */
static struct heif_coded_sizes approved;
static atomic_int armed;

void heif_guards_arm (unsigned max_threads, unsigned long long max_pixels, unsigned long long budget, const struct heif_coded_sizes *sizes) {
  thread_bound = max_threads, pixel_bound = max_pixels, decode_budget = budget, approved = *sizes;
  atomic_store(&armed, 1);
}

unsigned heif_guards_threads (unsigned *most) {
  *most = atomic_load(&peak);
  return atomic_load(&alive);
}

/* From any thread: one line, then the whole process ends (exit() would run destructors under running threads). */
__attribute__((format(printf, 2, 3), noreturn)) static void refuse (int code, const char *format, ...) {
  char line[256];
  va_list args;
  va_start(args, format);
  int n = vsnprintf(line, sizeof line - 1, format, args);
  va_end(args);
  n = n < 0 ? 0 : n > (int)sizeof line - 2 ? (int)sizeof line - 2 : n;
  line[n++] = '\n';
  ssize_t ignored = write(STDERR_FILENO, line, (size_t)n);
  (void)ignored;
  _exit(code);
}

static void *next (const char *name) {
  void *real = dlsym(RTLD_NEXT, name);
  if (real == NULL) refuse(EXIT_FAIL, "heif-decode: no %s to call", name);
  return real;
}

/* The real functions, looked up once while the process has one thread (in the zygote: before it forks). */
__attribute__((constructor)) static void find_real (void) {
  real_pthread_create = (int (*)(pthread_t *, const pthread_attr_t *, void *(*)(void *), void *))next("pthread_create");
  real_push_nal = (de265_error (*)(de265_decoder_context *, const void *, int, de265_PTS, void *))next("de265_push_NAL");
  real_free_decoder = (de265_error (*)(de265_decoder_context *))next("de265_free_decoder");
  real_dav1d_open = (int (*)(Dav1dContext **, const Dav1dSettings *))next("dav1d_open");
}

struct start { void *(*routine)(void *); void *arg; };

static void finished (void *unused) { (void)unused; atomic_fetch_sub(&alive, 1); }

static void *counted (void *p) {
  struct start start = *(struct start *)p;
  free(p);
  void *result;
  pthread_cleanup_push(finished, NULL);  /* pthread_exit and cancellation too */
  result = start.routine(start.arg);
  pthread_cleanup_pop(1);
  return result;
}

int pthread_create (pthread_t *thread, const pthread_attr_t *attr, void *(*routine)(void *), void *arg) {
  unsigned now = atomic_fetch_add(&alive, 1) + 1;
  if (atomic_load(&armed) && thread_bound > 0 && now > thread_bound) refuse(EXIT_INPUT, "too many decoding threads (over %u)", thread_bound);
  for (unsigned most = atomic_load(&peak); now > most && !atomic_compare_exchange_weak(&peak, &most, now);) {}
  struct start *start = malloc(sizeof *start);
  int error = start == NULL ? EAGAIN : (*start = (struct start){ routine, arg }, real_pthread_create(thread, attr, counted, start));
  if (error != 0) atomic_fetch_sub(&alive, 1), free(start);
  return error;
}

/* Adds one picture to the pixels decoded in all, refusing the one that would pass the budget. */
static void count_decoded (unsigned long long pixels) {
  if (atomic_fetch_add(&decoded, pixels) + pixels > decode_budget) refuse(EXIT_TOO_LARGE, "too large: over %llu pixels to decode in all", decode_budget);
}

de265_error de265_push_NAL (de265_decoder_context *context, const void *data, int length, de265_PTS pts, void *user_data) {
  struct hevc_size size;
  const char *problem = NULL;
  if (atomic_load(&armed) && length > 0 && hevc_nal_type(data, (size_t)length) == HEVC_NAL_SPS) {
    if (hevc_sps_size(data, (size_t)length, &size) != 0) refuse(EXIT_INPUT, "an SPS that does not parse");
    if ((unsigned long long)size.coded_w * size.coded_h > pixel_bound) refuse(EXIT_TOO_LARGE, "too large: an SPS codes %ux%u", size.coded_w, size.coded_h);
    int known = 0;
    for (int i = 0; i < approved.count; i++) known |= approved.w[i] == size.coded_w && approved.h[i] == size.coded_h;
    if (!known) refuse(EXIT_INPUT, "an SPS in the image data codes %ux%u, which no hvcC declares", size.coded_w, size.coded_h);
    if (hevc_stream_sps(&stream, &size) != 0) refuse(EXIT_INPUT, "an SPS given again with another size");
    if ((unsigned long long)size.coded_w * size.coded_h > picture_pixels) picture_pixels = (unsigned long long)size.coded_w * size.coded_h;
  }
  /* Each picture at the size of its decoder's largest SPS, as its first slice is handed over (libheif hands over
   * an item's whole data before libde265 decodes any of it): an overlay (iovl) decodes each of its inputs whole,
   * wherever it lies on the canvas, and an item's data may hold any number of pictures, all decoded; and so is
   * each slice that goes back over its picture (hevc-slice.h), which libde265 decodes again. */
  else if (atomic_load(&armed) && length > 0) {
    int decodes = hevc_stream_nal(&stream, data, (size_t)length, &problem);
    if (decodes < 0) refuse(EXIT_INPUT, "%s", problem);
    if (decodes > 0) count_decoded(picture_pixels > 0 ? picture_pixels : pixel_bound);  /* a slice before any SPS: refused above */
  }
  return real_push_nal(context, data, length, pts, user_data);
}

de265_error de265_free_decoder (de265_decoder_context *context) {
  picture_pixels = 0;
  memset(&stream, 0, sizeof stream);
  return real_free_decoder(context);
}

/* Every frame dav1d decodes, shown or not (an AV1 item's data may hold many, and an overlay may name one item
 * hundreds of times), gets its picture from this allocator before any of it is decoded: counted here, then
 * allocated as Dav1dPicAllocator asks (planes aligned and padded by DAV1D_PICTURE_ALIGNMENT, sides rounded up
 * to 128; dav1d's own allocator cannot be wrapped, as it needs a pool only dav1d_open makes for it). */
static int av1_picture_alloc (Dav1dPicture *picture, void *cookie) {
  (void)cookie;
  count_decoded((unsigned long long)picture->p.w * (unsigned long long)picture->p.h);
  enum Dav1dPixelLayout layout = picture->p.layout;
  int chroma = layout != DAV1D_PIXEL_LAYOUT_I400, ss_ver = layout == DAV1D_PIXEL_LAYOUT_I420, ss_hor = layout != DAV1D_PIXEL_LAYOUT_I444;
  size_t w = ((size_t)picture->p.w + 127) & ~(size_t)127, h = ((size_t)picture->p.h + 127) & ~(size_t)127;
  ptrdiff_t y_stride = (ptrdiff_t)(w << (picture->p.bpc > 8)), uv_stride = chroma ? y_stride >> ss_hor : 0;
  /* As dav1d's: a stride of a multiple of 1024 bytes would map a superblock's rows to the same cache sets. */
  if ((y_stride & 1023) == 0) y_stride += DAV1D_PICTURE_ALIGNMENT;
  if (chroma && (uv_stride & 1023) == 0) uv_stride += DAV1D_PICTURE_ALIGNMENT;
  size_t y_size = (size_t)y_stride * h, uv_size = (size_t)uv_stride * (h >> ss_ver);
  void *data = NULL;
  if (posix_memalign(&data, DAV1D_PICTURE_ALIGNMENT, y_size + 2 * uv_size + DAV1D_PICTURE_ALIGNMENT) != 0) return DAV1D_ERR(ENOMEM);
  picture->stride[0] = y_stride, picture->stride[1] = uv_stride;
  picture->data[0] = data;
  picture->data[1] = chroma ? (uint8_t *)data + y_size : NULL;
  picture->data[2] = chroma ? (uint8_t *)data + y_size + uv_size : NULL;
  picture->allocator_data = data;
  return 0;
}

static void av1_picture_release (Dav1dPicture *picture, void *cookie) {
  (void)cookie;
  free(picture->allocator_data);
}

int dav1d_open (Dav1dContext **context, const Dav1dSettings *settings) {
  Dav1dSettings held = *settings;
  if (atomic_load(&armed)) {
    held.n_threads = 1, held.max_frame_delay = 1;
    if (pixel_bound < (unsigned long long)held.frame_size_limit || held.frame_size_limit == 0) held.frame_size_limit = (unsigned)pixel_bound;
    held.allocator = (Dav1dPicAllocator){ NULL, av1_picture_alloc, av1_picture_release };
  }
  return real_dav1d_open(context, &held);
}
