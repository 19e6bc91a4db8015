// Perceptual fingerprints: a pHash to find near-duplicates, and a ThumbHash placeholder to show while the
// real image loads. Both come from one small decode of the image (or of one video frame).
import sharp from 'sharp'
import { rgbaToThumbHash, thumbHashToDataURL } from 'thumbhash'
import { coverArt } from '../video/cover-art.ts'
import { classify, imageInput, open, type ImageInput } from '../image/image.ts'
import { checkScans } from '../image/jpeg-scans.ts'
import { phash } from './phash.ts'
import { grabFrame } from '../video/video.ts'
import { videoInput } from '../video/video-input.ts'
import type { JobContext, PerceptualResult, PerceptualTask } from '../../contract/types.ts'

/** Big enough for both fingerprints, small enough that shrink-on-load makes the decode cheap. */
export const WORKING_SIDE = 256
/** ThumbHash takes at most 100x100. */
const THUMBHASH_SIDE = 100

export async function perceptual (task: PerceptualTask, ctx: JobContext): Promise<PerceptualResult> {
  const { ref, media } = task.source
  let input: ImageInput
  if (media.kind === 'image') input = await imageInput(task.source, ctx, { width: WORKING_SIDE, height: WORKING_SIDE, fit: 'inside' })
  // The frame is shrunk in ffmpeg to cover the working size: a smaller pipe, and frame=best compares small frames.
  else if (media.kind === 'audio') input = { bytes: await coverArt({ ...task.source, media }, ctx) }
  else input = { raw: await grabFrame(videoInput(ref), media, task.video, ctx, { width: WORKING_SIDE, height: WORKING_SIDE }) }
  try {
    // A JPEG scan bomb (an upload's or a cover's) is refused before sharp decodes every scan (workers/image/jpeg-scans.ts).
    if (!('raw' in input)) checkScans(input)
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
