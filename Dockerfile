# thumbd: Node 24 runs the TypeScript sources directly; no build step. ffmpeg is built from Debian's source
# package for what thumbd reads (scripts/build-ffmpeg.sh); Debian's `ffmpeg` package and its libraries
# (SDL, X11, PulseAudio, JACK...) were ~800 MB of a 1.1 GB image (docs/operations.md, "The image").
# test/ops/production-smoke.test.ts repeats the deps and final stages on a machine without a Docker engine
# (with the host's ffmpeg): keep them in step. test/ops/ffmpeg-build.test.ts checks the ffmpeg stage's lists.
# Security updates: every stage starts from the base's current Debian and apt-gets the current packages
# (bookworm-security's ffmpeg source too), so `docker build --pull --no-cache` picks them all up.

FROM node:24-bookworm-slim AS ffmpeg
# Debian's source of ffmpeg, with its patches, and the -dev packages of the four libraries it links.
RUN sed -i 's/^Types: deb$/Types: deb deb-src/' /etc/apt/sources.list.d/debian.sources \
 && apt-get update \
 && apt-get install -y --no-install-recommends dpkg-dev gcc make nasm pkg-config xz-utils \
      libdav1d-dev libvpx-dev libzimg-dev zlib1g-dev
WORKDIR /build
RUN apt-get source --only-source ffmpeg && rm -rf /var/lib/apt/lists/*
COPY scripts/build-ffmpeg.sh ./
RUN sh build-ffmpeg.sh ffmpeg-*/ /opt/ffmpeg
# The packages of the shared libraries the two binaries link: the runtime stage installs these and no more.
RUN ldd /opt/ffmpeg/bin/ffmpeg /opt/ffmpeg/bin/ffprobe | awk '$2 == "=>" && $3 ~ /^\// { print $3 }' | sort -u \
  | while read -r lib; do dpkg -S "*/${lib##*/}"; done | cut -d: -f1 | sort -u > /opt/ffmpeg/runtime-packages

FROM node:24-bookworm-slim AS deps
# The compiler builds the ffmpeg zygote, the decoder sandbox's exec wrapper, the HEIF decoder (native/, with
# libheif and libpng) and the sandboxed image decoder (IMAGE_DECODER=sandbox: linked to the libvips sharp installs
# in node_modules, which the image keeps) in npm ci's postinstall; only the four binaries reach the image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev libheif-dev libpng-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build-zygote.sh scripts/prune-node-modules.sh ./scripts/
COPY native ./native
RUN npm ci --omit=dev --no-audit --no-fund
RUN sh scripts/prune-node-modules.sh node_modules

FROM node:24-bookworm-slim
# tini forwards signals so SIGTERM reaches Node and it can drain; libheif for HEIC, libturbojpeg and Little CMS
# for JPEG decodes, libwebp for WebP encodes (JPEG_DECODER, through koffi); and what ffmpeg links.
# native/image-decode links node_modules' own libvips (sharp's), found there by its rpath.
COPY --from=ffmpeg /opt/ffmpeg/runtime-packages /tmp/ffmpeg-runtime-packages
RUN apt-get update \
 && apt-get upgrade -y \
 && apt-get install -y --no-install-recommends tini libheif1 libpng16-16 libturbojpeg0 liblcms2-2 libwebp7 \
      $(cat /tmp/ffmpeg-runtime-packages) \
 && rm -rf /var/lib/apt/lists/* /tmp/ffmpeg-runtime-packages
COPY --from=ffmpeg /opt/ffmpeg/bin/ffmpeg /opt/ffmpeg/bin/ffprobe /usr/local/bin/
# One malloc arena: libvips' threads reuse each other's decode buffers; libturbojpeg's Huffman tables
# optimised as sharp's (src/node-flags.ts, SERVER_ENV).
ENV NODE_ENV=production \
    GLIBC_TUNABLES=glibc.malloc.arena_max=1 \
    TJ_OPTIMIZE=1 \
    PORT=3000 \
    HOST=0.0.0.0 \
    TMP_DIR=/tmp/thumbd \
    LOG_LEVEL=info \
    NODE_COMPILE_CACHE=/app/.compile-cache
WORKDIR /app
COPY --from=deps /app/node_modules ./node_modules
COPY --from=deps /app/native/ffmpeg-zygote.so /app/native/thumbd-sandbox-exec /app/native/heif-decode /app/native/image-decode ./native/
COPY package.json ./
COPY src ./src
COPY contract ./contract
COPY workers ./workers
COPY scripts ./scripts
RUN mkdir -p /tmp/thumbd && chown node:node /tmp/thumbd
# One run of the server fills the compile cache: no thread then loads the TypeScript stripper (~10 MB each).
RUN node scripts/warm-compile-cache.ts
USER node
EXPOSE 3000
HEALTHCHECK --interval=10s --timeout=3s --start-period=15s --retries=3 \
  CMD ["node", "-e", "fetch('http://127.0.0.1:'+(process.env.PORT||3000)+'/health/live').then(r=>process.exit(r.ok?0:1),()=>process.exit(1))"]
ENTRYPOINT ["/usr/bin/tini", "--"]
CMD ["node", "--v8-pool-size=1", "--max-semi-space-size=4", "src/server.ts"]
