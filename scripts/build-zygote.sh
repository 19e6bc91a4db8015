#!/bin/sh
# Builds, where a C compiler is present, the native parts of running a tool (see docs/architecture.md):
# native/ffmpeg-zygote.so, the fork server ffmpeg/ffprobe runs are forked from; native/thumbd-sandbox-exec,
# the exec wrapper that puts a tool started afresh into the decoder sandbox (both carry native/sandbox.c);
# native/heif-decode, the HEIC/HEIF (and AVIF) decoder; and native/image-decode, the sandboxed JPEG, PNG, WebP and GIF decoder.
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
# native/image-decode, the decoder of still images in the decoder sandbox: JPEGs libturbojpeg decodes (Debian's
# libturbojpeg0, which workers/image/jpeg-turbo.ts loads too; its prototypes are declared in the source, so no -dev
# package is needed) and PNG, WebP and GIF (libpng, libwebp and giflib: libpng-dev libwebp-dev libgif-dev).
# Without those -dev packages it is built for JPEG only, and IMAGE_DECODER=sandbox says so at start.
STILL_LIBS="$(pkg-config --cflags --libs libpng libwebp libwebpdemux 2>/dev/null) -lgif"
# shellcheck disable=SC2086
if ! "$CC" $FLAGS -o native/image-decode native/image-decode.c native/still-decode.c -l:libturbojpeg.so.0 $STILL_LIBS 2>/dev/null; then
  echo "thumbd: native/image-decode built for JPEG only (apt-get install libpng-dev libwebp-dev libgif-dev pkg-config): PNG, WebP and GIF are decoded by sharp in the pool thread" >&2
  # shellcheck disable=SC2086
  if ! "$CC" $FLAGS -DTHUMBD_NO_STILLS -o native/image-decode native/image-decode.c -l:libturbojpeg.so.0; then
    echo "thumbd: native/image-decode not built (apt-get install libturbojpeg0): JPEGs are decoded by libturbojpeg in the pool thread" >&2
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
