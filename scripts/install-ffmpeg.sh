#!/bin/sh
# Installs Debian/Ubuntu's ffmpeg (ffmpeg + ffprobe) when it is missing. thumbd never downloads ffmpeg itself.
set -eu
if command -v ffmpeg >/dev/null 2>&1 && command -v ffprobe >/dev/null 2>&1; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "thumbd: ffmpeg is missing; install your OS's ffmpeg package (or set FFMPEG_PATH/FFPROBE_PATH). Images work without it." >&2
  exit 0
fi
as_root=""
[ "$(id -u)" = 0 ] || as_root="sudo"
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -qq
$as_root apt-get install -y -qq --no-install-recommends ffmpeg >/dev/null
ffmpeg -hide_banner -version | head -n 1
