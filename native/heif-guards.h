// What heif-decode watches while libheif decodes, by defining four functions libheif and its libraries call
// (the executable's definitions come first in the dynamic linker's search, and the real ones are reached with
// dlsym(RTLD_NEXT)):
//   pthread_create  threads alive at once, beyond those already started, are held to a bound: libheif 1.15 starts
//                   one per tile in flight (max_decoding_threads) and each HEVC decoder one more (libde265's
//                   worker, fixed at 1), so 2 x threads + 2 is never reached by a file whose structure passed
//                   heif-decode's checks; one that gets past them (a grid naming itself recursed to 388 threads)
//                   stops at the bound. Per process, where the kernel offers nothing that is: RLIMIT_NPROC counts
//                   every thread of the user, and a pids cgroup per run needs a cgroup tree the container can
//                   write, which thumbd's (read-only, not root) has not.
//   de265_push_NAL  every SPS libde265 is given, from an hvcC or from the item's own data (which libheif passes on
//                   as it is), must code one of the sizes heif_check_coded_sizes() found in the hvcCs: an SPS in the
//                   data that codes another is refused before the picture it sizes is decoded; and every picture
//                   (each slice that starts one) counts at its decoder's largest SPS's size in a budget of pixels
//                   decoded in all (each tile, each overlay input, each picture of an item's data: libheif hands
//                   libde265 all of them, 200 copies of one picture decoded 200 times), before libde265 decodes;
//                   so does each slice segment whose address is not past the previous one of its picture, which
//                   libde265 decodes again (hevc-slice.h). A slice segment or PPS that does not parse, names a
//                   parameter set not given before, or a parameter set given again otherwise, is refused.
//   de265_free_decoder  the end of one item's decode on its thread: the next decoder's parameter sets size its pictures.
//   dav1d_open      an AV1 item (libheif 1.15 decodes those too, with dav1d, in a file whose major brand is not
//                   avif) is decoded on the calling thread (dav1d would otherwise start one per core of the host),
//                   a frame over the pixel limit is refused by dav1d itself (libheif sets 32768 x 32768), and
//                   every frame's picture comes from heif-guards.c's allocator, which counts it in the same budget
//                   before it is decoded (an overlay naming one AV1 item 320 times decoded it 320 times: 74 s).
// A refusal ends the process at once: exit status 2 (3 for an SPS over the pixel limit), one line on stderr.
#ifndef THUMBD_HEIF_GUARDS_H
#define THUMBD_HEIF_GUARDS_H

#include "heif-boxes.h"

/* Arms the guards (until then they only pass calls on). `sizes` is copied. */
void heif_guards_arm (unsigned max_threads, unsigned long long max_pixels, unsigned long long budget, const struct heif_coded_sizes *sizes);

/* The threads started and still alive, and the most alive at once so far. */
unsigned heif_guards_threads (unsigned *peak);

#endif
