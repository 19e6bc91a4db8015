// Perceptual fingerprints: a pHash to find near-duplicates, and a ThumbHash placeholder to show while the
// real image loads. Both come from one small decode of the image (or of one video frame).
import sharp from 'sharp'
import { rgbaToThumbHash, thumbHashToDataURL } from 'thumbhash'
import { coverArt } from '../video/cover-art.ts'
import { classify, imageInput, open, storedImage, type ImageInput } from '../image/image.ts'
import { checkScans } from '../image/jpeg-scans.ts'
import { decodeStill, SANDBOXED_JPEG, SANDBOXED_STILLS } from '../image/still-sandboxed.ts'
import { phash } from './phash.ts'
import { grabFrame } from '../video/video.ts'
import { videoInput } from '../video/video-input.ts'
import type { JobContext, JobSource, PerceptualResult, PerceptualTask } from '../../contract/types.ts'

/** Big enough for both fingerprints, small enough that shrink-on-load makes the decode cheap. */
export const WORKING_SIDE = 256
/** The formats whose fingerprints' decode goes to the sandbox with IMAGE_DECODER=sandbox (HEIC's, through heif-decode). */
const HASHED: ReadonlySet<string> = new Set([...SANDBOXED_JPEG, ...SANDBOXED_STILLS])
/** ThumbHash takes at most 100x100. */
const THUMBHASH_SIDE = 100

export async function perceptual (task: PerceptualTask, ctx: JobContext): Promise<PerceptualResult> {
  const { ref, media } = task.source
  let input: ImageInput
  if (media.kind === 'image') input = await pictureInput(task.source, ctx)
  else if (media.kind === 'audio') input = await pictureInput(await coverArt({ ...task.source, media }, ctx), ctx)
  // The frame is shrunk in ffmpeg to cover the working size: a smaller pipe, and frame=best compares small frames.
  else input = { raw: await grabFrame(videoInput(ref), media, task.video, ctx, { width: WORKING_SIDE, height: WORKING_SIDE }) }
  try {
    const { data, info } = await open(input, ctx).rotate()
      .resize(WORKING_SIDE, WORKING_SIDE, { fit: 'inside', withoutEnlargement: true })
      .ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    const raw = { raw: { width: info.width, height: info.height, channels: 4 as const } }
    const grey = await sharp(data, raw).removeAlpha().toColourspace('b-w').resize(32, 32, { fit: 'fill' }).raw().toBuffer()
    const small = await sharp(data, raw).resize(THUMBHASH_SIDE, THUMBHASH_SIDE, { fit: 'inside' }).raw().toBuffer({ resolveWithObject: true })
    const hash = rgbaToThumbHash(small.info.width, small.info.height, small.data)
    return {
      phash: phash(grey),
      thumbhash: Buffer.from(hash).toString('base64'),
      thumbhashDataUrl: thumbHashToDataURL(hash),
      width: info.width,
      height: info.height
    }
  } catch (err) {
    throw classify(err)
  }
}

/**
 * An image's (or a cover's) pixels for the fingerprints, at the working size. A JPEG scan bomb is refused before any
 * decoder visits every scan (workers/image/jpeg-scans.ts); with IMAGE_DECODER=sandbox a JPEG is decoded in the sandbox
 * too, its colour converted there as open() converts it here, as every other format is (imageInput).
 */
async function pictureInput (source: JobSource, ctx: JobContext): Promise<ImageInput> {
  const working = { width: WORKING_SIDE, height: WORKING_SIDE, fit: 'inside' as const }
  const { format } = source.media
  if (format === 'jpeg') {
    const stored = storedImage(source.ref)
    checkScans(typeof stored === 'string' ? { path: stored } : { bytes: stored })
  }
  // Every profile converted, as open() reads it here; an animation's first frame whatever its frame count, as sharp
  // decodes it here (one page).
  // The working size's resize is the first step of perceptual()'s pipeline: the decoder may do it.
  const decoded = await decodeStill(source.ref, format, ctx, { resize: working, profile: 'all', formats: HASHED, countFrames: false, resizes: true })
  return decoded ?? await imageInput(source, ctx, working, 'fingerprints')
}
