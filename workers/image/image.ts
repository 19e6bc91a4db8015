// Every image step goes through here, for uploaded images and video frames alike, so options behave the
// same for both. sharp (libvips) does the work; the limits are set on every input.
import sharp, { type Metadata, type Sharp } from 'sharp'
import { JobError } from '../../contract/job-error.ts'
import { ANIMATION_PIXELS_FACTOR, MAX_OUTPUT_SIDE } from '../../contract/limits.ts'
import { applyCrop, checkAnimationInput, checkAnimationOps, checkAnimationOutput, firstFrameCrop, framesKept, needsFirstFrameCrop, orientsPerFrame, type FrameHeader } from './animation.ts'
import { decodeHeif, type HeifResize } from './heif.ts'
import { encode, encodeToFit, flattenColour } from './image-encode.ts'
import { urlResize, type SharpResize } from './image-geometry.ts'
import { turboDecode, type SourceFacts } from './jpeg-decode.ts'
import { encodeDecoded } from './jpeg-direct.ts'
import { jpegFacts } from './jpeg-header.ts'
import { checkScans } from './jpeg-scans.ts'
import { afterResize, beforeResize, needsBefore, placesCrop } from './image-ops.ts'
import { describesSrgb } from './srgb-profile.ts'
import { readHeader } from './header-sandboxed.ts'
import { decodeStill, SANDBOXED_JPEG, type RawPixels, type StillResize } from './still-sandboxed.ts'
import type { ImageOptions, ImageResult, JobContext, JobSource } from '../../contract/types.ts'

/**
 * `made`: bytes of this thread's own making (still-sandboxed.ts taggedPng), whose header need not go to the sandbox,
 * with the palette depth of the source they were decoded from.
 */
export type ImageInput = { bytes: Uint8Array, made?: true, paletteBits?: number } | { path: string } | { raw: RawPixels }

// Every libvips loader is blocked except those of the formats thumbd serves, so even bytes that slipped past
// sniffing could never reach the SVG, PDF, TIFF, FITS, matrix ... loaders. Process-wide and idempotent.
// libvips' operation cache only pays off when the same input comes back; thumbd's never does, so it is memory for nothing.
sharp.cache(false)
sharp.block({ operation: ['VipsForeignLoad'] })
sharp.unblock({ operation: ['VipsForeignLoadJpeg', 'VipsForeignLoadPng', 'VipsForeignLoadWebp', 'VipsForeignLoadNsgif', 'VipsForeignLoadHeif'] })

const decodeOptions = (ctx: JobContext, animated = false) => ({
  // All frames of an animation make one tall image: its budget (checked from the header) bounds them, each frame the limit.
  limitInputPixels: animated ? ANIMATION_PIXELS_FACTOR * ctx.settings.maxInputPixels : ctx.settings.maxInputPixels,
  // 'warning' turns truncated or corrupt data into an error instead of a half-grey picture.
  failOn: 'warning' as const,
  // An animated GIF/WebP: every frame, as one tall image (workers/image/animation.ts); else the first frame only.
  pages: animated ? -1 : 1
})

/**
 * What sharp reads for an image source: its bytes or file, or for HEIC the PNG heif-decode makes of it.
 * `resize`: the resize the input is for (a job's ImageOptions), so that a HEIC's embedded thumbnail can stand in
 * for the full photo when it is large enough (workers/image/heif.ts); without it, the full photo.
 * IMAGE_DECODER=sandbox: a still PNG, WebP, GIF or AVIF is decoded in the decoder sandbox by sharp's own libvips
 * (workers/image/still-sandboxed.ts), and so is the PNG heif-decode makes of a HEIC (a confined decoder's output,
 * which a compromised decoder could shape); sharp then reads trusted pixels. `use`: 'render', the job's own resize
 * (render() begins with it: the decoder may do it, still-sandboxed.ts StillDecode resizes), or 'fingerprints'
 * (perceptual.ts: its working size, begun with too; any animation's first frame: StillDecode countFrames false).
 */
export async function imageInput (source: JobSource, ctx: JobContext, resize?: HeifResize & StillResize, use: 'render' | 'fingerprints' = 'render'): Promise<ImageInput> {
  const countFrames = use === 'render'
  const { ref, media } = source
  if (media.format === 'heic') {
    const png = await decodeHeif(source, ctx, resize)
    return await decodeStill({ location: 'memory', bytes: png }, 'png', ctx, { resize, countFrames, resizes: true }) ?? { bytes: png }
  }
  const still = await decodeStill(ref, media.format, ctx, { resize, countFrames, resizes: true })
  if (still !== undefined) return still
  const stored = storedImage(ref)
  return typeof stored === 'string' ? { path: stored } : { bytes: stored }
}

/** An image source's bytes in memory, or its temp file's path: what sharp opens. Images are never remote. */
export function storedImage (ref: JobSource['ref']): Uint8Array | string {
  if (ref.location === 'remote') throw new JobError('INTERNAL', 'internal error', 'images are never read remotely')
  return ref.location === 'memory' ? ref.bytes : ref.path
}

export function open (input: ImageInput, ctx: JobContext, colour: Colour = 'convert', animated = false): Sharp {
  if ('raw' in input) return openRaw(input.raw, animated)
  return sharp('bytes' in input ? input.bytes : input.path, { ...decodeOptions(ctx, animated), ignoreIcc: colour === 'untagged' })
}

/**
 * Raw pixels; an animation's (the sandbox's, still-sandboxed.ts) as sharp opens an animated file: every frame with its
 * timing (sharp keeps delay and loop across format calls: encode() sets the format after), or its first frame alone.
 */
function openRaw ({ data, width, height, channels, animation }: RawPixels, animated: boolean): Sharp {
  if (animation === undefined) return sharp(data, { raw: { width, height, channels } })
  const { pageHeight, delay, loop } = animation
  if (!animated) return sharp(data.subarray(0, width * pageHeight * channels), { raw: { width, height: pageHeight, channels } })
  return sharp(data, { raw: { width, height, channels, pageHeight }, pages: -1 }).gif({ delay, loop })
}

/**
 * What an embedded colour profile costs and what it is worth. libvips converts through the profile before
 * the resize, and building that transform costs ~6-12 ms whatever the size (4 MP photo: 21 ms of CPU
 * untagged, 33 ms tagged sRGB, 35 ms Display P3; sharp 0.35, one thread). So:
 * - 'untagged': an sRGB profile converts sRGB to sRGB, changing no pixel: dropped unread;
 * - 'keep': another RGB profile (a phone's Display P3) is not converted but kept on the output, which every
 *   colour-managed viewer (every browser) shows right; the pixels stay in the wider gamut;
 * - 'convert': anything else (CMYK, grey with a profile) goes through libvips' conversion to sRGB.
 */
type Colour = 'untagged' | 'keep' | 'convert'

export function colourHandling ({ icc, space }: { icc?: Buffer, space?: string }): Colour {
  if (icc === undefined || space !== 'srgb') return 'convert'
  return describesSrgb(icc) ? 'untagged' : 'keep'
}

/** `headerBy` 'sharp': the header is read by sharp's metadata() whatever the decoder (see the turbo line below). */
export async function render (input: ImageInput, options: ImageOptions, ctx: JobContext, headerBy: 'any' | 'sharp' = 'any'): Promise<ImageResult> {
  ctx.signal.throwIfAborted()
  try {
    const { size: source, colour: found, header, paletteBits, facts, icc, fromSegments } = await inspect(input, ctx, headerBy)
    // GET URLs reply as imgproxy does (its IMGPROXY_STRIP_COLOR_PROFILE default): a JPEG's RGB profile is
    // converted to sRGB and dropped, not kept; by Little CMS after a reduced decode where it can (jpeg-decode.ts).
    const colour = found === 'keep' && options.url !== undefined && facts?.format === 'jpeg' ? 'convert' : found
    const seconds = Math.max(1, Math.ceil((ctx.deadline - Date.now()) / 1000))
    // GET URLs: imgproxy's rotate, crop and flip come before the resize, as a pass of their own (workers/image/image-ops.ts).
    const ops = options.url?.ops
    const before = needsBefore(ops)
    // That pass works on raw pixels, an animation's frame by frame (workers/image/image-ops.ts).
    const frames = framesKept(header, options, ctx.settings)
    if (before) checkAnimationOps({ ...header, frames }, ctx.settings)
    // An animation turned upside down or a quarter by EXIF is turned frame by frame in that pass too (workers/image/animation.ts).
    const orientation = orientsPerFrame({ ...header, frames }) ? header.orientation : 1
    // GET URLs size as imgproxy does; undefined: no resize at all.
    const sizingOf = (size: [number, number]): ImageOptions & SharpResize => options.url === undefined ? options : { ...options, ...urlResize(size, options) ?? { width: undefined, height: undefined } }
    // JPEG has no alpha: its background is opaque (#RRGGBB of #RRGGBBAA), so the bars and the transparent pixels
    // get the same colour, as imgproxy flattens both onto its background's colour. Other formats keep the alpha.
    // A GET URL's background flattens every format, as imgproxy does whenever bg is set.
    const flatten = options.format === 'jpeg' || (options.url !== undefined && options.background !== undefined)
    const background = flatten ? flattenColour(options.background) : options.background ?? { r: 0, g: 0, b: 0, alpha: 0 }
    const resizeOf = (sizing: ImageOptions & SharpResize) => {
      if (sizing.width === undefined && sizing.height === undefined) return undefined
      const placed = placesCrop(options, sizing)
      // GET URLs: fill to the scaled size; afterResize places the crop as imgproxy does.
      return { width: placed ? sizing.scaled![0] : sizing.width, height: placed ? sizing.scaled![1] : sizing.height, fit: placed ? 'fill' as const : sizing.fit, position: options.position, background, withoutEnlargement: sizing.withoutEnlargement }
    }
    // A JPEG photo reduced for its resize: decoded by libturbojpeg where that is the same picture for less CPU.
    const turbo = before || frames > 1 || facts === undefined || !('bytes' in input) ? undefined : await turboDecode(input.bytes, facts, resizeOf(sizingOf(source)), ctx, options.url !== undefined, colour !== found ? icc : undefined)
    // IMAGE_DECODER=sandbox: a JPEG libturbojpeg's path did not take (no reduction, CMYK, a profile, arithmetic
    // coding, refused ...) is decoded in the sandbox too, by sharp's libvips at sharp's shrink-on-load for this resize
    // (none before a pass of GET URL operations, as sharp's pipeline), its colour converted there as the pipeline would.
    if (turbo === undefined && facts?.format === 'jpeg' && !('raw' in input)) {
      const ref = 'bytes' in input ? { location: 'memory' as const, bytes: input.bytes } : { location: 'file' as const, path: input.path }
      const convert = colour === 'convert' || (colour === 'keep' && before)
      const decoded = await decodeStill(ref, 'jpeg', ctx, { resize: before ? undefined : { ...resizeOf(sizingOf(source)), url: options.url, format: options.format, background: options.background }, profile: convert ? 'convert' : 'keep', formats: SANDBOXED_JPEG, resizes: true })
      if (decoded !== undefined) return await render(decoded, options, ctx)
    }
    // A header read from its segments (jpeg-header.ts) serves libturbojpeg's path only, which checks it against
    // its own: sharp's decode turns, sizes and converts by libvips' reading, so its limits are checked on that.
    if (turbo === undefined && fromSegments) return await render(input, options, ctx, 'sharp')
    // Its raw pixels carry no profile, so a kept one (Display P3) is converted to sRGB first.
    const opened = () => open(input, ctx, colour === 'keep' ? 'convert' : colour, frames > 1)
    const { pipeline, size, firstFrame } = before || orientation !== 1
      ? await beforeResize((orientation === 1 ? opened().rotate() : opened()).timeout({ seconds }), source, ops ?? {}, options.url?.gravity ?? { position: options.position === 'attention' || options.position === 'entropy' ? 'centre' : options.position ?? 'centre', x: 0, y: 0 }, frames, orientation, 'raw' in input ? input.raw.animation : undefined)
      : { pipeline: turbo?.pipeline ?? open(input, ctx, colour, frames > 1).rotate(), size: source, firstFrame: undefined }
    pipeline.timeout({ seconds })
    const sizing = sizingOf(size)
    const [width, height] = outputSize(size, sizing)
    if (width > MAX_OUTPUT_SIDE || height > MAX_OUTPUT_SIDE) {
      throw new JobError('BAD_OPTIONS', `the output would be ${width}x${height} px; at most ${MAX_OUTPUT_SIDE} px per side`)
    }
    checkAnimationOutput(frames, width, height, ctx.settings)
    // libturbojpeg's pixels with nothing left to do but the encode: encoded without a sharp pipeline (jpeg-direct.ts).
    const direct = turbo !== undefined && untouched(options, sizing, colour) ? encodeDecoded(turbo, resizeOf(sizing), options) : undefined
    if (direct !== undefined) return direct
    if (colour === 'keep' && !before && orientation === 1) pipeline.keepIccProfile()
    if (frames > 1 && needsFirstFrameCrop(sizing)) {
      // A smart crop of an animation: chosen on the first frame, cut from every frame (workers/image/animation.ts).
      applyCrop(pipeline, sizing, await firstFrameCrop(firstFrame ?? open(input, ctx, colour).rotate().timeout({ seconds }), sizing))
    } else {
      const resize = resizeOf(sizing)
      if (resize !== undefined && turbo !== undefined) turbo.resize(pipeline, resize)
      else if (resize !== undefined) pipeline.resize(resize)
    }
    const [outW, outH] = options.url === undefined ? [width, height] : afterResize(pipeline, options, sizing, [width, height], background)
    if (outW > MAX_OUTPUT_SIDE || outH > MAX_OUTPUT_SIDE) throw new JobError('BAD_OPTIONS', `the output would be ${outW}x${outH} px; at most ${MAX_OUTPUT_SIDE} px per side`)
    // JPEG has no alpha: transparent areas become the background (white unless asked otherwise), not black.
    if (flatten) pipeline.flatten({ background })
    if (frames > 1) checkAnimationOutput(frames, outW, outH, ctx.settings)
    if (options.maxBytes !== undefined && options.format !== 'png' && options.format !== 'gif') {
      const { data, info } = await encodeToFit(pipeline, options, options.maxBytes, frames > 1)
      return { data, format: options.format, width: info.width, height: info.height }
    }
    encode(pipeline, options, paletteBits)
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true })
    return { data, format: options.format, width: info.width, height: info.height }
  } catch (err) {
    throw classify(err)
  }
}

/** Whether the resize's pixels go to the encoder as they are: no crop placed, GET URL operation, kept profile or byte budget. */
function untouched (options: ImageOptions, sizing: ImageOptions & SharpResize, colour: Colour): boolean {
  return colour !== 'keep' && options.maxBytes === undefined && (options.url === undefined || (options.url.ops === undefined && !placesCrop(options, sizing)))
}

/** Display size of the input (EXIF orientations 5-8 swap the sides), its colour handling and frames; reads the header only, and refuses absurd animations. */
async function inspect (input: ImageInput, ctx: JobContext, headerBy: 'any' | 'sharp'): Promise<{ size: [number, number], colour: Colour, header: FrameHeader, paletteBits?: number, facts?: SourceFacts, icc?: Buffer, fromSegments?: boolean }> {
  if ('raw' in input) {
    const { width, height, animation, paletteBits } = input.raw
    const page = animation?.pageHeight ?? height
    return { size: [width, page], colour: 'convert', header: { frames: height / page, width, height: page, orientation: 1 }, paletteBits }
  }
  // A JPEG in memory for libturbojpeg: its header read from its segments, where they read cleanly (jpeg-header.ts).
  const jpeg = 'bytes' in input && ctx.settings.jpegDecoder === 'turbojpeg' && headerBy === 'any' ? jpegFacts(input.bytes) : undefined
  const meta: Pick<Metadata, 'width' | 'height' | 'pages' | 'orientation' | 'format' | 'space' | 'channels' | 'icc' | 'isPalette' | 'bitsPerSample'> =
    jpeg === undefined ? await headerOf(input, ctx) : { ...jpeg, format: 'jpeg', pages: 1, isPalette: false }
  const [w, h] = [meta.width ?? 0, meta.height ?? 0]
  if (w * h > ctx.settings.maxInputPixels) throw new JobError('PAYLOAD_TOO_LARGE', 'the image exceeds the pixel limit')
  // A scan bomb is refused before any decoder (libturbojpeg, then sharp) visits every block once per scan.
  if (meta.format === 'jpeg') checkScans(input)
  const header = { frames: meta.pages ?? 1, width: w, height: h, orientation: meta.orientation ?? 1 }
  checkAnimationInput(header, ctx.settings)
  const colour = colourHandling(meta)
  const facts = { format: meta.format, space: meta.space, channels: meta.channels, width: w, height: h, orientation: header.orientation, profileUsed: meta.icc !== undefined && colour !== 'untagged' }
  return { size: header.orientation >= 5 ? [h, w] : [w, h], colour, header, paletteBits: 'made' in input ? input.paletteBits : meta.isPalette ? meta.bitsPerSample ?? 8 : undefined, facts, icc: meta.icc, fromSegments: jpeg !== undefined }
}

/** sharp's metadata() of the input; IMAGE_DECODER=sandbox: read in the sandbox, unless this thread made the bytes. */
async function headerOf (input: { bytes: Uint8Array, made?: true } | { path: string }, ctx: JobContext) {
  const untrusted = !('made' in input && input.made === true)
  const ref = 'bytes' in input ? { location: 'memory' as const, bytes: input.bytes } : { location: 'file' as const, path: input.path }
  return (untrusted ? await readHeader(ref, ctx) : undefined) ?? await sharp('bytes' in input ? input.bytes : input.path, decodeOptions(ctx)).metadata()
}

/** The size sharp's resize will produce, to refuse oversized outputs before any pixel is decoded. */
export function outputSize ([iw, ih]: [number, number], { width, height, fit, withoutEnlargement }: ImageOptions): [number, number] {
  if (width === undefined && height === undefined) return [iw, ih]
  let w: number
  let h: number
  if (width !== undefined && height !== undefined) {
    const scale = fit === 'inside' ? Math.min(width / iw, height / ih) : fit === 'outside' ? Math.max(width / iw, height / ih) : 0
    ;[w, h] = scale === 0 ? [width, height] : [iw * scale, ih * scale]
  } else {
    const scale = width !== undefined ? width / iw : height! / ih
    // fill with one side given leaves the other as it is (as sharp does)
    ;[w, h] = fit === 'fill' ? [width ?? iw, height ?? ih] : [iw * scale, ih * scale]
  }
  if (withoutEnlargement) [w, h] = [Math.min(w, iw), Math.min(h, ih)]
  return [Math.round(w), Math.round(h)]
}

export function classify (err: unknown): JobError {
  if (err instanceof JobError) return err
  const message = err instanceof Error ? err.message : String(err)
  if (/pixel limit/i.test(message)) return new JobError('PAYLOAD_TOO_LARGE', 'the image exceeds the pixel limit', message)
  if (/timeout/i.test(message)) return new JobError('TIMEOUT', 'the image took too long to process', message)
  if (/unsupported image format/i.test(message)) return new JobError('UNSUPPORTED_MEDIA', 'this image format is not supported', message)
  return new JobError('MEDIA_UNREADABLE', 'the image could not be decoded', message)
}
