#!/bin/sh
# Builds, where a C compiler is present, the native parts of running a tool (see docs/architecture.md):
# native/ffmpeg-zygote.so, the fork server ffmpeg/ffprobe runs are forked from; native/thumbd-sandbox-exec,
# the exec wrapper that puts a tool started afresh into the decoder sandbox (both carry native/sandbox.c);
# native/heif-decode, the HEIC/HEIF decoder; and native/image-decode, the sandboxed JPEG, PNG, WebP, GIF and AVIF decoder.
# Without them thumbd still works: video jobs pay ffmpeg's full start-up, and tools run with util-linux's
# limits only (the server says so at start and in /health).
set -eu
cd "$(dirname "$0")/.."
CC=${CC:-cc}
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "thumbd: no C compiler ($CC): ffmpeg runs without the zygote (slower video) and without the decoder sandbox" >&2
  exit 0
fi
FLAGS="-O2 -Wall -Wextra -Werror"
# A failed build must not fail npm ci: thumbd works without it (CI's tests require it, and show why).
# shellcheck disable=SC2086 # FLAGS is meant to split
if ! "$CC" $FLAGS -shared -fPIC -o native/ffmpeg-zygote.so native/ffmpeg-zygote.c native/sandbox.c -ldl; then
  echo "thumbd: building native/ffmpeg-zygote.so failed (C headers missing? apt-get install libc6-dev): ffmpeg runs without the zygote" >&2
fi
# shellcheck disable=SC2086
if ! "$CC" $FLAGS -o native/thumbd-sandbox-exec native/sandbox-exec.c native/sandbox.c; then
  echo "thumbd: building native/thumbd-sandbox-exec failed: tools started afresh run without the decoder sandbox" >&2
fi
# native/image-decode, the decoder of still images in the decoder sandbox (JPEG, PNG, WebP, GIF, AVIF): linked to
# the libvips sharp installed (node_modules/@img/sharp-libvips-<platform>/lib), found at run time beside node_modules
# by its rpath; its prototypes are declared in the source, so no -dev package is needed. Where sharp brought no
# libvips of its own (a sharp built against a system libvips), it is not built and images are decoded by sharp in
# the pool thread (IMAGE_DECODER=sandbox says so at start).
VIPS_LIB=$(ls -d node_modules/@img/sharp-libvips-*/lib/libvips-cpp.so.* 2>/dev/null | head -n 1)
if [ -z "$VIPS_LIB" ]; then
  echo "thumbd: native/image-decode not built (no node_modules/@img/sharp-libvips-*): images are decoded by sharp in the pool thread" >&2
else
  VIPS_DIR=$(dirname "$VIPS_LIB")
  # shellcheck disable=SC2086,SC2016 # FLAGS is meant to split; $ORIGIN is the loader's, not the shell's
  if ! "$CC" $FLAGS -o native/image-decode native/image-decode.c -L"$VIPS_DIR" -l:"$(basename "$VIPS_LIB")" -Wl,-rpath,'$ORIGIN/../'"$VIPS_DIR"; then
    echo "thumbd: native/image-decode not built: images are decoded by sharp in the pool thread" >&2
  fi
fi
# HEIC/HEIF photos: libheif (with libde265) and libpng, from the OS (Debian: libheif-dev libpng-dev pkg-config).
# The functions native/heif-guards.c defines in place of libheif's callees must be exported to be called.
HEIF_SOURCES="native/heif-decode.c native/heif-boxes.c native/hevc-sps.c native/hevc-slice.c native/heif-guards.c"
HEIF_EXPORTS="-Wl,--export-dynamic-symbol=pthread_create -Wl,--export-dynamic-symbol=de265_push_NAL -Wl,--export-dynamic-symbol=de265_free_decoder -Wl,--export-dynamic-symbol=dav1d_open"
# shellcheck disable=SC2086,SC2046
if ! pkg-config --exists libheif libde265 dav1d libpng 2>/dev/null || ! "$CC" $FLAGS -o native/heif-decode $HEIF_SOURCES $HEIF_EXPORTS $(pkg-config --cflags --libs libheif libpng) $(pkg-config --cflags libde265 dav1d); then
  echo "thumbd: native/heif-decode not built (apt-get install libheif-dev libde265-dev libpng-dev pkg-config): HEIC/HEIF photos get 415" >&2
fi
