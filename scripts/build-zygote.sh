#!/bin/sh
# Builds native/ffmpeg-zygote.so (see that file's header) when a C compiler is present. Without it thumbd
# still works; video jobs then pay ffmpeg's full start-up each time.
set -eu
cd "$(dirname "$0")/.."
CC=${CC:-cc}
if ! command -v "$CC" >/dev/null 2>&1; then
  echo "thumbd: no C compiler ($CC): ffmpeg runs without the zygote (slower video)" >&2
  exit 0
fi
# A failed build must not fail npm ci: thumbd works without it (CI's tests require it, and show why).
if ! "$CC" -O2 -Wall -Wextra -Werror -shared -fPIC -o native/ffmpeg-zygote.so native/ffmpeg-zygote.c -ldl; then
  echo "thumbd: building native/ffmpeg-zygote.so failed (C headers missing? apt-get install libc6-dev): ffmpeg runs without the zygote" >&2
fi
