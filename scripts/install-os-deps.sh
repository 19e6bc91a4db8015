#!/bin/sh
# Installs, from Debian/Ubuntu's packages, what thumbd needs from the OS when it is missing: ffmpeg (with
# ffprobe) for video, a C compiler and libheif, with which npm ci builds native/ (the ffmpeg zygote, the decoder
# sandbox, the HEIF decoder, the sandboxed still-image decoder), libturbojpeg and Little CMS for JPEG decodes, and for the tests heif-enc, openssl, Chromium and PostgreSQL. thumbd never downloads ffmpeg itself.
set -eu
packages=""
if ! command -v ffmpeg >/dev/null 2>&1 || ! command -v ffprobe >/dev/null 2>&1; then packages="ffmpeg"; fi
if ! command -v cc >/dev/null 2>&1 || [ ! -e /usr/include/stdio.h ]; then packages="$packages gcc libc6-dev"; fi
# HEIC/HEIF: libheif and libpng to build native/heif-decode; heif-enc makes the tests' HEIC photos.
if ! pkg-config --exists libheif libpng 2>/dev/null; then packages="$packages libheif-dev libpng-dev pkg-config"; fi
if ! command -v heif-enc >/dev/null 2>&1; then packages="$packages libheif-examples"; fi
# native/image-decode (IMAGE_DECODER=sandbox) links the libvips sharp installs: nothing to install for it.
# libturbojpeg decodes reduced JPEGs for less CPU (JPEG_DECODER=turbojpeg; without it sharp decodes them).
if ! ldconfig -p 2>/dev/null | grep -q 'libturbojpeg\.so\.0'; then packages="$packages libturbojpeg0"; fi
# Little CMS converts those photos' RGB profiles to sRGB for GET URLs (without it sharp converts them).
if ! ldconfig -p 2>/dev/null | grep -q 'liblcms2\.so\.2'; then packages="$packages liblcms2-2"; fi
# libwebp encodes WebP thumbnails libturbojpeg decoded at their size (without it sharp encodes them).
if ! ldconfig -p 2>/dev/null | grep -q 'libwebp\.so\.7'; then packages="$packages libwebp7"; fi
# jpegtran makes the tests' arithmetic-coded JPEG.
if ! command -v jpegtran >/dev/null 2>&1; then packages="$packages libjpeg-turbo-progs"; fi
# openssl makes the tests' self-signed certificate for an HTTPS origin.
if ! command -v openssl >/dev/null 2>&1; then packages="$packages openssl"; fi
# PostgreSQL: the shared queue of asynchronous jobs, which the tests and load/jobs-kill.ts start themselves.
if ! ls /usr/lib/postgresql/*/bin/initdb >/dev/null 2>&1; then packages="$packages postgresql"; fi
# The tests open docs/examples/img-tags.html in a real browser.
if ! command -v chromium >/dev/null 2>&1; then packages="$packages chromium"; fi
if [ -z "$packages" ]; then
  exit 0
fi
if ! command -v apt-get >/dev/null 2>&1; then
  echo "thumbd: missing $packages; install them with your OS's package manager (or set FFMPEG_PATH/FFPROBE_PATH). Images work without ffmpeg, video without the compiler (slower)." >&2
  exit 0
fi
as_root=""
[ "$(id -u)" = 0 ] || as_root="sudo"
export DEBIAN_FRONTEND=noninteractive
$as_root apt-get update -qq
# shellcheck disable=SC2086 # the package list is meant to split
$as_root apt-get install -y -qq --no-install-recommends $packages >/dev/null
ffmpeg -hide_banner -version | head -n 1
