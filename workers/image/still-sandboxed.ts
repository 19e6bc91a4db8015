// IMAGE_DECODER=sandbox: a PNG, WebP, GIF or AVIF (the first frame) decoded by native/image-decode in the decoder
// sandbox with sharp's own libvips and sharp's loader options (as JPEGs are, workers/image/jpeg-sandboxed.ts), so that
// a bug in libspng, libwebp, libnsgif or libheif reaches a process that holds no key and no other photo, and a decode
// past the deadline or of a client that left is killed; the same decoders as in-process, so the same refusals. The
// pool thread gets display-oriented pixels and the ICC profile on a pipe, checks their size, and sharp resizes
// and encodes them as it would have its own decode's:
// - untagged, or a profile that describes sRGB (which sharp drops unread, image.ts colourHandling): raw pixels;
// - another profile: the pixels in a PNG this thread writes (stored, no filter) with the profile as iCCP, so
//   libvips handles the profile exactly as for the original file (kept, or converted by its Little CMS). Only
//   the profile's bytes there came from the upload; the PNG's structure is this thread's own.
// - an animation the job keeps whole: every frame, turned, its profile converted, raw with its page height, delays
//   and loop (image.ts openRaw), where all its frames hold no more than MAX_INPUT_PIXELS (they come back whole).
import { crc32, deflateSync } from 'node:zlib'
import { ANIMATED_FORMATS, checkAnimationInput } from './animation.ts'
import { JobError } from '../../contract/job-error.ts'
import { ANIMATION_PIXELS_FACTOR } from '../../contract/limits.ts'
import type { ImageOptions, JobContext, JobSource } from '../../contract/types.ts'
import { MAX_PROFILE_BYTES, runImageDecode } from './image-decode-run.ts'
import { flattenColour } from './image-encode.ts'
import { withInputFile } from './input-file.ts'
import { describesSrgb } from './srgb-profile.ts'

const HEADER_BYTES = 40
/** The longest frame delay sharp sets on raw frames. */
const MAX_DELAY_MS = 65535
/** The longest side --fit takes (as heif-decode's). */
const MAX_FIT_SIDE = 65535

/**
 * Decoded pixels for sharp's raw input (a Uint16Array: 16-bit samples). `animation`: an animation's frames, one under
 * the other (`height` all of them), each `pageHeight` high, with their delays (ms) and loop count; `paletteBits`: the
 * source's palette depth (GET URLs keep a palette of it in a PNG, image-encode.ts).
 */
export interface RawPixels {
  data: Uint8Array | Uint16Array
  width: number
  height: number
  channels: 1 | 2 | 3 | 4
  animation?: { pageHeight: number, delay: number[], loop: number }
  paletteBits?: number
}

/**
 * The resize the pixels are for (a JPEG or WebP is decoded at sharp's shrink-on-load for it), whether an animation is
 * kept whole, and a GET URL's geometry (its sizes come from imgproxy's rules later: not resized in the decoder); the
 * output format, background and position say what becomes of an alpha channel around the resize (alphaArgs).
 */
export type StillResize = Partial<Pick<ImageOptions, 'width' | 'height' | 'fit' | 'position' | 'background' | 'format' | 'animated' | 'url'>>

/**
 * How a still is decoded: `resize` the resize its pixels are for; `profile` (ProfileHandling); `formats` those this
 * caller hands the sandbox; `countFrames` false: an animation over MAX_ANIMATION_FRAMES or its pixel budget is not
 * refused (the fingerprints read the first frame of any, as sharp does there, workers/hashes/perceptual.ts);
 * `resizes`: the caller's sharp pipeline begins with `resize` (sharp's resize() of its width, height and fit, the
 * default kernel, nothing before it): the decoder does that resize itself where the picture allows it
 * (native/image-decode.c resized()), the same pixels, and hands back only those. A GET URL's never is.
 */
export interface StillDecode { resize?: StillResize, profile?: ProfileHandling, formats?: ReadonlySet<string>, countFrames?: boolean, resizes?: boolean }

/** What imageInput() hands the sandbox before render(); a JPEG goes there from render() (SANDBOXED_JPEG), after libturbojpeg's path. */
export const SANDBOXED_STILLS: ReadonlySet<string> = new Set(['png', 'webp', 'gif', 'avif'])
export const SANDBOXED_JPEG: ReadonlySet<string> = new Set(['jpeg'])

/**
 * How the decoder treats an 8-bit RGB picture's profile that does not describe sRGB: keep hands it back (the
 * thread keeps it on the output, or converts it itself), convert converts it to sRGB in the sandbox (what the
 * thread's pipeline would do: a GET URL's JPEG, a pass before the resize); all converts one that describes sRGB too
 * (sharp's open() with its profile read, as the fingerprints decode). Every other profile sharp would convert
 * through is converted there whatever this says (native/image-decode.c to_srgb).
 */
export type ProfileHandling = 'keep' | 'convert' | 'all'

/** The image render() reads in place of the upload: raw pixels, or a PNG of this thread's making; undefined: sharp decodes the upload. */
export async function decodeStill (ref: JobSource['ref'], format: string, ctx: JobContext, { resize, profile = 'keep', formats = SANDBOXED_STILLS, countFrames = true, resizes = false }: StillDecode = {}): Promise<{ raw: RawPixels } | { bytes: Uint8Array, made: true, paletteBits?: number } | undefined> {
  const tool = ctx.settings.stills?.imageDecode
  if (tool === undefined || !formats.has(format)) return undefined
  return await withInputFile(ref, ctx.settings.stills!.tempDir, async path => {
    const maxPixels = ctx.settings.maxInputPixels
    // The animation's limits too: the decoder refuses an animation over them from its frame count before it decodes
    // a frame, as sharp's header pass does (workers/image/image.ts inspect), so a broken first frame is no 422 there.
    // Not counted: limits no animation reaches (at most 2^32 frames of at most 2^30 pixels each).
    const [maxFrames, budget] = countFrames ? [ctx.settings.maxAnimationFrames, ANIMATION_PIXELS_FACTOR * maxPixels] : [2 ** 32, 2 ** 62]
    const limits = ['--max-pixels', String(maxPixels), '--max-frames', String(maxFrames), '--frame-budget', String(budget)]
    // An animation the output keeps whole: every frame, where all of them hold no more pixels than a still may (they
    // come back whole); past that, or not kept, the first frame.
    const kept = ['--frames', keepsAnimation(resize) ? 'all' : 'first']
    // 16-bit RGBA at the pixel limit, a profile (stored compressed: it may be larger than the file), and a delay per
    // frame (each at least a pixel).
    const out = await runImageDecode(tool, ['--still', format, ...limits, ...kept, ...fitArgs(format, resize, resizes), '--profile', profile], path, HEADER_BYTES + maxPixels * 8 + MAX_PROFILE_BYTES + 4 * Math.min(maxFrames, maxPixels), ctx)
    const { pixels, frames, icc } = parse(out, maxPixels)
    // An absurd animation is refused as sharp's header pass refuses it (workers/image/image.ts inspect), first frame or not.
    if (countFrames) checkAnimationInput({ frames, width: pixels.width, height: pixels.animation?.pageHeight ?? pixels.height, orientation: 1 }, ctx.settings)
    // As image.ts's colourHandling: an RGB picture whose profile names sRGB is untagged to sharp. An animation's
    // profile was converted in the decoder; one libvips refused is dropped, as sharp goes on without it.
    return icc === undefined || pixels.animation !== undefined || (pixels.channels >= 3 && describesSrgb(icc)) ? { raw: pixels } : { bytes: taggedPng(pixels, icc), made: true, paletteBits: pixels.paletteBits }
  })
}

/** The output's header and pixels, their size checked against what the header says (never trusted further). */
function parse (out: Buffer, maxPixels: number): { pixels: RawPixels, frames: number, icc?: Buffer } {
  const bad = (why: string) => new JobError('MEDIA_UNREADABLE', 'the image decoder failed', `image-decode: ${why}`)
  if (out.length < HEADER_BYTES || out.toString('latin1', 0, 4) !== 'IMD3') throw bad('no header')
  const [width, height, channels, bits, frames, pages, loop, paletteBits, iccBytes] = Array.from({ length: 9 }, (_, i) => out.readUInt32LE(4 + 4 * i)) as [number, number, number, number, number, number, number, number, number]
  // An animation's frames together hold at most the pixels of a still (the decoder hands one over only then).
  if (width === 0 || height === 0 || width * height > maxPixels || channels < 1 || channels > 4 || (bits !== 8 && bits !== 16)) throw bad(`${width}x${height}x${channels}, ${bits} bits`)
  if (pages === 0 || height % pages !== 0 || (pages > 1 && pages > frames)) throw bad(`${pages} frames of ${height} rows`)
  const bytes = width * height * channels * bits / 8
  const timing = pages > 1 ? 4 * pages : 0
  if (out.length !== HEADER_BYTES + iccBytes + timing + bytes) throw bad('another size than its header says')
  const icc = iccBytes === 0 ? undefined : out.subarray(HEADER_BYTES, HEADER_BYTES + iccBytes)
  // sharp takes a delay of at most 65535 ms for raw frames (gif(), webp()); a longer one (a GIF's may be 655 s) is
  // shortened to that, where in-process libvips passes it on: an animation still, not a 422.
  const delay = Array.from({ length: timing / 4 }, (_, i) => Math.min(MAX_DELAY_MS, out.readUInt32LE(HEADER_BYTES + iccBytes + 4 * i)))
  const animation = pages > 1 ? { pageHeight: height / pages, delay, loop } : undefined
  let data: Uint8Array | Uint16Array = out.subarray(HEADER_BYTES + iccBytes + timing)
  // sharp reads 16-bit raw input from a Uint16Array, which must start on an even byte.
  if (bits === 16) data = new Uint16Array(data.byteOffset % 2 === 0 ? data.buffer : Uint8Array.from(data).buffer, data.byteOffset % 2 === 0 ? data.byteOffset : 0, bytes / 2)
  const pixels: RawPixels = { data, width, height, channels: channels as RawPixels['channels'], ...(animation === undefined ? {} : { animation }), ...(paletteBits === 0 ? {} : { paletteBits }) }
  return { pixels, frames, icc }
}

/** Every frame goes to the output: an animated format asked for, and not the first frame only. */
const keepsAnimation = (resize: StillResize | undefined) => resize?.format !== undefined && ANIMATED_FORMATS.has(resize.format) && resize.animated !== false

/**
 * --fit MODE WIDTH HEIGHT for a JPEG or WebP (reduced on load for it, as sharp does), and with --resize for any
 * format the decoder resizes (StillDecode resizes); none for the rest.
 */
function fitArgs (format: string, resize: StillResize | undefined, resizes: boolean): string[] {
  const { width = 0, height = 0, fit = 'cover' } = resize ?? {}
  const side = (n: number) => Number.isInteger(n) && n >= 0 && n <= MAX_FIT_SIDE
  if ((width === 0 && height === 0) || !side(width) || !side(height)) return []
  // sharp's default kernel, the one its resize() uses when none is named (every caller here).
  if (resizes && resize !== undefined && resize.url === undefined) return ['--fit', fit, String(width), String(height), '--resize', 'lanczos3', ...alphaArgs(resize)]
  return format === 'webp' || format === 'jpeg' ? ['--fit', fit, String(width), String(height)] : []
}

/**
 * What sharp's pipeline does with a picture's alpha around its resize, where the decoder can do the same (native/
 * image-decode.c resized()): a JPEG's is flattened onto its background first (render()'s, image-encode.ts
 * flattenColour); another format's is kept through the resize, premultiplied, unless it is padded after (contain, whose
 * background is premultiplied too) or smart-cropped (which weighs premultiplied pixels): then the thread resizes.
 */
function alphaArgs ({ format, fit = 'cover', position, background }: StillResize): string[] {
  if (format === 'jpeg') {
    const hex = flattenColour(background)
    return ['--flatten', ...[1, 3, 5].map(at => String(parseInt(hex.slice(at, at + 2), 16)))]
  }
  return fit !== 'contain' && position !== 'attention' && position !== 'entropy' ? ['--alpha', 'premultiplied'] : []
}

/** A PNG of the pixels with the profile as iCCP: stored deflate, filter 0 on every row (16-bit samples big-endian). */
function taggedPng ({ data, width, height, channels }: RawPixels, icc: Buffer): Buffer {
  const bits = data instanceof Uint16Array ? 16 : 8
  const samples = Buffer.from(data.buffer, data.byteOffset, data.byteLength)
  const row = width * channels * bits / 8
  const filtered = Buffer.alloc((row + 1) * height)
  for (let y = 0; y < height; y++) samples.copy(filtered, y * (row + 1) + 1, y * row, (y + 1) * row)
  if (bits === 16) for (let y = 0; y < height; y++) filtered.subarray(y * (row + 1) + 1, (y + 1) * (row + 1)).swap16()
  const chunk = (type: string, body: Buffer) => {
    const head = Buffer.alloc(8)
    head.writeUInt32BE(body.length, 0)
    head.write(type, 4, 'latin1')
    const crc = Buffer.alloc(4)
    crc.writeUInt32BE(crc32(body, crc32(head.subarray(4))), 0)
    return [head, body, crc]
  }
  const ihdr = Buffer.alloc(13)
  ihdr.writeUInt32BE(width, 0)
  ihdr.writeUInt32BE(height, 4)
  ihdr.writeUInt8(bits, 8)
  ihdr.writeUInt8([0, 0, 4, 2, 6][channels]!, 9)
  return Buffer.concat([
    Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]),
    ...chunk('IHDR', ihdr),
    ...chunk('iCCP', Buffer.concat([Buffer.from('icc\0\0', 'latin1'), deflateSync(icc)])),
    ...chunk('IDAT', deflateSync(filtered, { level: 0 })),
    ...chunk('IEND', Buffer.alloc(0))
  ])
}
