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
"$CC" -O2 -Wall -Wextra -Werror -shared -fPIC -o native/ffmpeg-zygote.so native/ffmpeg-zygote.c -ldl
