#!/bin/sh
# Builds the ffmpeg and ffprobe of the Docker image (its build stage) from Debian's source package
# (`apt-get source ffmpeg`: Debian's patches and security fixes come with it), configured for what thumbd
# asks of them and nothing else: no ffplay, no libavdevice (SDL, X11, PulseAudio, JACK), no encoders but
# PAM, no external library but the four below. Debian's `ffmpeg` package and what it pulls in weighed ~800 MB
# of the image; this build and its libraries weigh ~20 MB (docs/operations.md, "The image").
# test/ops/ffmpeg-build.test.ts reads the lists below and checks them against the code and the test corpus:
# a codec or container added to thumbd is added here too.
#   usage: scripts/build-ffmpeg.sh SOURCE_DIR PREFIX   (installs PREFIX/bin/ffmpeg and PREFIX/bin/ffprobe)
set -eu

# The containers contract/sniff.ts forces (-f), by ffmpeg's demuxer names (its "mpeg" is mpegps).
DEMUXERS="mov matroska avi mpegts mpegps ogg asf flv mp3 flac"
# Never forced: MPEG-PS and MPEG-TS learn what an elementary stream holds (a DVD's video at 0xE0) by asking
# these raw demuxers' probes (libavformat's set_codec_from_probe_data); without them a VOB's MPEG-2 video
# was taken for MP3 audio.
PROBE_DEMUXERS="mpegvideo h264 hevc m4v aac loas ac3 eac3 dts mp3"
# Video: phones and cameras (H.264, HEVC 8-12 bit), the web (VP8, VP9, AV1 by dav1d; libvpx-vp9 for VP9's
# alpha, contract/sniff.ts), production (ProRes, DNxHD, FFV1, QuickTime RLE, v210), broadcast and discs
# (MPEG-1/2, VC-1), archives (MPEG-4 part 2, DivX 3, H.263, WMV 1-3, Theora, FLV's Sorenson and VP6, DV,
# Motion JPEG, raw video).
VIDEO_DECODERS="h264 hevc vp8 vp9 libvpx_vp9 libdav1d prores dnxhd ffv1 qtrle v210 rawvideo
  mpeg1video mpeg2video vc1 mpeg4 msmpeg4v1 msmpeg4v2 msmpeg4v3 h263 wmv1 wmv2 wmv3 theora flv vp6 vp6f vp6a
  dvvideo mjpeg"
# The pictures audio files carry as cover art (workers/video/cover-art.ts copies them out; the probe decodes them to
# learn their size).
PICTURE_DECODERS="mjpeg png bmp gif"
# Audio is never decoded for a thumbnail (-an), but probing a stream whose decoder is missing reads on for its
# parameters: the common ones are here so /api/info and every probe stop early.
AUDIO_DECODERS="aac aac_latm mp3 mp3float mp2 mp2float mp1 mp1float ac3 eac3 dca flac alac opus vorbis
  wmav1 wmav2 wmapro pcm_s16le pcm_s16be pcm_s24le pcm_s24be pcm_s32le pcm_f32le pcm_u8 pcm_alaw pcm_mulaw
  pcm_dvd pcm_bluray adpcm_ima_wav adpcm_ms"
PARSERS="h264 hevc vp8 vp9 av1 mpeg4video mpegvideo vc1 h263 mjpeg png bmp gif
  aac aac_latm ac3 dca flac mpegaudio opus vorbis"
# workers/video/frame-filters.ts (scale, setsar, crop, select, thumbnail, zscale, tonemap, format, transpose,
# hflip, vflip), ffmpeg-args.ts (showinfo); trim and null are what ffmpeg inserts itself for -ss and -map.
FILTERS="scale setsar crop select thumbnail zscale tonemap format transpose hflip vflip showinfo trim null"
# Demuxing H.264/HEVC/MPEG-4 without global headers (MPEG-TS, MPEG-PS) copies their parameter sets to the
# stream's extradata with this one: without it a decoder that starts after a seek has no PPS to decode with.
BSFS="extract_extradata"
# Frames leave as PAM on a pipe (ffmpeg-args.ts); cover art leaves as it was stored (-c copy).
ENCODERS="pam"
MUXERS="image2pipe"
# file: a spooled upload; http over tcp: thumbd's own loopback range reader (workers/video/video-input.ts); pipe: stdout.
PROTOCOLS="file pipe http tcp"
# Debian's shared builds of these, linked dynamically (the runtime stage installs their packages): AV1,
# VP9 with alpha, HDR tone-mapping (zscale), and zlib for compressed Matroska/MOV headers and PNG covers.
LIBRARIES="libdav1d libvpx libzimg zlib"

# A list as configure takes it: comma-separated, each name once (mjpeg is a video and a picture decoder).
list () { echo "$*" | tr -s ' \n' '\n\n' | awk 'NF && !seen[$0]++' | paste -sd, -; }

SOURCE_DIR=$1
PREFIX=$2
cd "$SOURCE_DIR"
# shellcheck disable=SC2046 # each --enable-X is meant to split
./configure --prefix="$PREFIX" \
  --toolchain=hardened --disable-debug --disable-doc \
  --disable-everything --disable-autodetect --disable-ffplay --disable-avdevice --disable-postproc \
  $(for lib in $LIBRARIES; do echo "--enable-$lib"; done) \
  --enable-demuxer="$(list "$DEMUXERS $PROBE_DEMUXERS")" \
  --enable-decoder="$(list "$VIDEO_DECODERS $PICTURE_DECODERS $AUDIO_DECODERS")" \
  --enable-parser="$(list "$PARSERS")" \
  --enable-filter="$(list "$FILTERS")" \
  --enable-bsf="$(list "$BSFS")" \
  --enable-encoder="$(list "$ENCODERS")" \
  --enable-muxer="$(list "$MUXERS")" \
  --enable-protocol="$(list "$PROTOCOLS")"
make -j"${JOBS:-$(nproc)}"
make install
