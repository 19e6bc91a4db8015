// Finds out once, at start, whether ffmpeg and ffprobe work here. Without them images still work,
// video jobs answer 503 VIDEO_UNAVAILABLE and /health says what is missing. What runs where: ffmpeg, ffprobe,
// native/heif-decode (HEIC) and, with JPEG_DECODER=sandbox, native/image-decode (reduced JPEGs, by sharp's libvips)
// in the decoder sandbox; with IMAGE_DECODER=sandbox also still PNG, WebP, GIF and AVIF (image-decode);
// every other image decode (sharp's libvips loaders) and Little CMS in the pool threads (docs/security.md).
import fp from 'fastify-plugin'
import type { Config } from '../config.ts'
import { errors } from '../errors.ts'
import { detectTools, type DetectedTools } from '../../workers/tools/index.ts'
import { turbojpegMissing } from '../../workers/image/jpeg-turbo.ts'

export interface MediaTools {
  /** What every ffmpeg/ffprobe run gets: the decoder sandbox (workers/tools/sandbox.ts), its environment, and the zygote where it loads. */
  sandbox: DetectedTools['sandbox']
  /** native/heif-decode where built: HEIC/HEIF photos can be read. */
  heifDecode: string | undefined
  /**
   * native/image-decode where built (used with JPEG_DECODER or IMAGE_DECODER=sandbox, src/jobs/settings.ts): the
   * JPEGs the pool thread reduces on load are then decoded in the sandbox, by sharp's own libvips;
   * one in memory is written for it to the process's temp folder (the sandbox lets it read one file, its input).
   */
  imageDecode: { path: string, tempDir: string } | undefined
  /** image-decode takes still PNG, WebP, GIF and AVIF (`--still`; every build since it links sharp's libvips). */
  imageDecodeStills: boolean
  /** What confines a decoder here, in one line; logged at start and shown by /metrics (thumbd_tools_info). */
  confinement: string
  /** A decoder can be confined to one TCP port here: remote videos may be read by ranges. */
  portConfinement: boolean
  ffmpeg: string | undefined
  ffprobe: string | undefined
  /** libturbojpeg loads here: JPEG_DECODER=turbojpeg (or sandbox) takes effect (workers/image/jpeg-decode.ts). */
  turbojpeg: boolean
  /** Both tools answered: video jobs can run. */
  video: boolean
  missing: string[]
  /** Throws 503 VIDEO_UNAVAILABLE when video jobs cannot run here. */
  assertVideo (): void
}

declare module 'fastify' {
  interface FastifyInstance {
    mediaTools: MediaTools
  }
}

export default fp<{ config: Config }>(async (app, { config }) => {
  const { ffmpeg, ffprobe, heifDecode, imageDecode, imageDecodeStills, sandbox, confinement, confinementMissing, portConfinement } = await detectTools({ ffmpegPath: config.ffmpegPath, ffprobePath: config.ffprobePath, zygote: config.ffmpegZygote, env: config.toolEnv })
  // Said at start, never silent: a decoder here is less confined than docs/security.md describes.
  if (confinementMissing) app.log.warn({ confinement }, 'the decoder sandbox is incomplete on this host: %s', confinement)
  else app.log.info({ confinement }, 'decoder sandbox: %s', confinement)
  const missing = [ffmpeg === undefined && 'ffmpeg', ffprobe === undefined && 'ffprobe'].filter(x => x !== false)
  // IMAGE_DECODER=sandbox with the decoder not built: those images are decoded in the pool thread, said here.
  if ((config.jpegDecoder === 'sandbox' || config.imageDecoder === 'sandbox') && imageDecode === undefined) app.log.warn('JPEG_DECODER=sandbox (or IMAGE_DECODER=sandbox) but native/image-decode is not built (a C compiler and sharp\'s own libvips, node_modules/@img/sharp-libvips-*, at npm ci): images are decoded by sharp and libturbojpeg in the pool thread, outside the decoder sandbox')
  else if (config.imageDecoder === 'sandbox' && !imageDecodeStills) app.log.warn('IMAGE_DECODER=sandbox but native/image-decode does not take still PNG, WebP, GIF and AVIF (an older build: run npm ci): those images are decoded by sharp in the pool thread, outside the decoder sandbox')
  if (heifDecode === undefined) app.log.warn('native/heif-decode is not built (libheif-dev, libpng-dev and pkg-config at npm ci): HEIC/HEIF photos get 415')
  if (missing.length > 0) app.log.warn({ missing }, 'video jobs are unavailable: %s not found', missing.join(' and '))
  else if (sandbox.zygote === undefined && config.ffmpegZygote === 'auto') app.log.warn('native/ffmpeg-zygote.so is not built or does not load: each ffmpeg run pays its full start-up (see docs/architecture.md)')
  // sandbox needs libturbojpeg in this process too: jpeg-decode.ts takes a JPEG for either decoder only where it
  // loads, and decodes in the thread with it where image-decode is absent.
  const turbojpegError = config.jpegDecoder !== 'sharp' ? turbojpegMissing() : 'JPEG_DECODER=sharp'
  if (config.jpegDecoder !== 'sharp' && turbojpegError !== undefined) app.log.warn({ reason: turbojpegError }, 'libturbojpeg does not load (apt-get install libturbojpeg0): JPEGs are decoded by sharp, at more CPU (see docs/benchmarks.md)')
  // The exact build and the sandbox's state tell an attacker which decoder flaws apply here: /metrics (for
  // operators, restricted at the network level) shows them, the open /health does not.
  app.metrics.toolsInfo.set({ ffmpeg: ffmpeg ?? 'none', sandbox: confinement }, 1)
  app.decorate('mediaTools', {
    sandbox,
    heifDecode,
    imageDecode: imageDecode === undefined || !app.hasDecorator('tempDir') ? undefined : { path: imageDecode, tempDir: app.tempDir.path },
    imageDecodeStills,
    turbojpeg: turbojpegError === undefined,
    confinement,
    portConfinement,
    ffmpeg,
    ffprobe,
    video: missing.length === 0,
    missing,
    assertVideo () {
      if (missing.length > 0) throw new errors.VideoUnavailable(`${missing.join(' and ')} not found`)
    }
  })
}, { name: 'media-tools', dependencies: ['metrics'] })
