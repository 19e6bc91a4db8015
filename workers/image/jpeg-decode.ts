// The JPEG decode through libturbojpeg (workers/image/jpeg-turbo.ts) where it gives sharp's thumbnail for less CPU:
// decoded at the scale sharp's shrink-on-load would pick (or imgproxy's, JPEG_SHRINK=imgproxy), handed to sharp
// as raw pixels, the EXIF orientation applied after the resize as sharp applies it. Only for what raw pixels
// lose nothing of: an 8-bit YCbCr/RGB or grey JPEG in memory, untagged or with an sRGB profile (which thumbd
// drops anyway), or with an RGB profile to convert to sRGB (GET URLs, as imgproxy replies: by Little CMS on
// the reduced pixels, workers/image/lcms.ts), reduced at least 2 times. Everything else, and any decode that fails (a corrupt or truncated
// JPEG, a scan bomb, 12-bit, CMYK, arithmetic coding), takes sharp's path unchanged: the same reply as before.
import sharp, { type ResizeOptions, type Sharp } from 'sharp'
import { TJCS, turbojpeg } from './jpeg-turbo.ts'
import { srgbFrom } from './lcms.ts'
import { decodeSandboxed } from './jpeg-sandboxed.ts'
import { jpegShrink, orientable, orientationSteps, storedResize, type ResizeArgs } from './jpeg-scale.ts'
import { JobError } from '../../contract/job-error.ts'
import { MAX_JPEG_SCANS } from '../../contract/limits.ts'
import type { JobContext } from '../../contract/types.ts'

/** What the header pass (sharp's metadata) said of the source. */
export interface SourceFacts {
  format?: string
  space?: string
  channels?: number
  width: number
  height: number
  orientation: number
  /** An embedded profile that the pipeline would use (not an sRGB one, which is dropped unread). */
  profileUsed: boolean
}

export interface TurboDecoded {
  pipeline: Sharp
  /** The decoded pixels the pipeline reads, and whether the EXIF orientation still turns them after the resize. */
  pixels: { data: Buffer, width: number, height: number, channels: 1 | 3 }
  turned: boolean
  /** Sets the resize (asked in display pixels) and the orientation after it. */
  resize: (pipeline: Sharp, args: ResizeOptions & ResizeArgs) => void
  shrink: number
}

let decodes = 0
/** JPEGs this thread decoded through libturbojpeg (the tests check that the path was taken). */
export const turboDecodes = () => decodes

/**
 * The pipeline of the JPEG's pixels decoded by libturbojpeg, or undefined: sharp decodes it. `profile`: the
 * embedded RGB profile its pixels are to be converted from, to sRGB (else a used profile leaves it to sharp).
 */
export async function turboDecode (bytes: Uint8Array, facts: SourceFacts, resize: ResizeArgs | undefined, ctx: JobContext, dialect: boolean, profile?: Uint8Array): Promise<TurboDecoded | undefined> {
  const { jpegDecoder, jpegShrink: setting } = ctx.settings
  // auto: a GET URL in imgproxy's dialect gets imgproxy's pixels (its scale), the API sharp's sharper thumbnail.
  const rule = setting === 'auto' ? (dialect ? 'imgproxy' : 'quality') : setting
  if (jpegDecoder !== 'turbojpeg' || resize === undefined || !eligible(facts, profile) || !orientable(facts.orientation, resize)) return undefined
  const shrink = jpegShrink([facts.width, facts.height], facts.orientation, resize, rule)
  // No shrink on load: the whole picture would sit in one buffer, where libvips streams it by strips.
  if (shrink < 2) return undefined
  const frame = frameMarker(bytes)
  if (frame === undefined || frame > 0xc2) return undefined
  const tj = turbojpeg()
  if (tj === undefined) return undefined
  // Built (or found) before the decode, used right after it in the same turn: a profile lcms refuses, or a
  // host without lcms, leaves the photo to sharp's conversion.
  const toSrgb = profile === undefined ? undefined : srgbFrom(profile)
  if (profile !== undefined && toSrgb === undefined) return undefined
  // In the decoder sandbox where native/image-decode is built: libturbojpeg never reads these bytes in this thread.
  const decoded = ctx.settings.imageDecode !== undefined
    ? await decodeSandboxed(bytes, [facts.width, facts.height], facts.channels === 1 ? 1 : 3, shrink, ctx)
    : inThread(tj, bytes, facts, shrink)
  if (decoded === undefined) return undefined
  if (toSrgb !== undefined) toSrgb(decoded.data)
  decodes++
  const { data, width, height, channels } = decoded
  const steps = orientationSteps(facts.orientation)
  return {
    pipeline: sharp(data, { raw: { width, height, channels } }),
    pixels: decoded,
    turned: steps.flip || steps.flop || steps.angle !== 0,
    shrink,
    resize (pipeline, args) {
      pipeline.resize(storedResize(args, facts.orientation))
      // After resize(): sharp turns after the resize then, as it does for the EXIF orientation.
      if (steps.flip) pipeline.flip()
      if (steps.flop) pipeline.flop()
      if (steps.angle !== 0) pipeline.rotate(steps.angle)
    }
  }
}

/** libturbojpeg in this thread (where native/image-decode is not built): the pixels, or undefined for sharp. */
function inThread (tj: NonNullable<ReturnType<typeof turbojpeg>>, bytes: Uint8Array, facts: SourceFacts, shrink: number) {
  try {
    const header = tj.header(bytes)
    if (header.width !== facts.width || header.height !== facts.height) return undefined
    if (header.colourspace !== TJCS.YCbCr && header.colourspace !== TJCS.RGB && header.colourspace !== TJCS.GRAY) return undefined
    return tj.decode(bytes, header, shrink)
  } catch (err) {
    // A limit that tripped is the answer: sharp decoding every scan again would cost the bomb twice.
    if (err instanceof Error && /more than \d+ scans/.test(err.message)) throw new JobError('PAYLOAD_TOO_LARGE', `the JPEG has more than ${MAX_JPEG_SCANS} scans`, err.message)
    // sharp's path decides what a JPEG libjpeg-turbo refuses is (failOn: 'warning'): the same 4xx as before.
    return undefined
  }
}

/**
 * The JPEG's frame marker (SOFn), from its segments before the first scan; undefined if none is found there.
 * Only Huffman-coded frames (baseline, extended, progressive: SOF0-2) are taken: arithmetic-coded ones
 * (SOF9-11) and the lossless and hierarchical ones stay with sharp.
 */
export function frameMarker (bytes: Uint8Array): number | undefined {
  let at = 2
  while (at + 4 <= bytes.length && bytes[at] === 0xff) {
    const marker = bytes[at + 1]!
    if (marker === 0xff) { at++; continue }
    if (marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc) return marker
    if (marker === 0xda) return undefined
    at += 2 + ((bytes[at + 2]! << 8) | bytes[at + 3]!)
  }
  return undefined
}

function eligible ({ format, space, channels, profileUsed }: SourceFacts, profile: Uint8Array | undefined): boolean {
  if (format !== 'jpeg') return false
  if (profile !== undefined) return space === 'srgb' && channels === 3
  return !profileUsed && ((space === 'srgb' && channels === 3) || (space === 'b-w' && channels === 1))
}
