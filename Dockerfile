# thumbd: Node 24 runs the TypeScript sources directly; no build step. ffmpeg comes from Debian.
# test/ops/production-smoke.test.ts repeats these steps on a machine without a Docker engine: keep them in step.

FROM node:24-bookworm-slim AS deps
# The compiler builds the ffmpeg zygote, the decoder sandbox's exec wrapper and the HEIF decoder (native/,
# with libheif and libpng) in npm ci's postinstall; only the three binaries reach the image.
RUN apt-get update \
 && apt-get install -y --no-install-recommends gcc libc6-dev libheif-dev libpng-dev pkg-config \
 && rm -rf /var/lib/apt/lists/*
WORKDIR /app
COPY package.json package-lock.json ./
COPY scripts/build-zygote.sh ./scripts/
COPY native ./native
RUN npm ci --omit=dev --no-audit --no-fund

FROM node:24-bookworm-slim
# ffmpeg/ffprobe for video, libheif for HEIC, libturbojpeg and Little CMS for JPEG decodes (JPEG_DECODER, through koffi);
# tini forwards signals so SIGTERM reaches Node and it can drain.
RUN apt-get update \
 && apt-get install -y --no-install-recommends ffmpeg tini libheif1 libpng16-16 libturbojpeg0 liblcms2-2 libwebp7 \
 && rm -rf /var/lib/apt/lists/*
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
COPY --from=deps /app/native/ffmpeg-zygote.so /app/native/thumbd-sandbox-exec /app/native/heif-decode ./native/
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
