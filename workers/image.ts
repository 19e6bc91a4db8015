// Every image step goes through here, for uploaded images and video frames alike, so options behave the
// same for both. sharp (libvips) does the work; the limits are set on every input.
import sharp, { type Sharp } from 'sharp'
import { JobError } from './job-error.ts'
import type { RawFrame } from './ppm.ts'
import type { ImageOptions, ImageResult, JobContext } from './types.ts'

export type ImageInput = { bytes: Uint8Array } | { path: string } | { raw: RawFrame }

function open (input: ImageInput, ctx: JobContext): Sharp {
  if ('raw' in input) {
    const { data, width, height, channels } = input.raw
    return sharp(data, { raw: { width, height, channels } })
  }
  return sharp('bytes' in input ? input.bytes : input.path, {
    limitInputPixels: ctx.settings.maxInputPixels,
    // 'warning' turns truncated or corrupt data into an error instead of a half-grey picture.
    failOn: 'warning',
    // First frame of animated GIF/WebP only.
    pages: 1
  })
}

export async function render (input: ImageInput, options: ImageOptions, ctx: JobContext): Promise<ImageResult> {
  ctx.signal.throwIfAborted()
  const seconds = Math.max(1, Math.ceil((ctx.deadline - Date.now()) / 1000))
  const pipeline = open(input, ctx).rotate().timeout({ seconds })
  if (options.width !== undefined || options.height !== undefined) {
    pipeline.resize({
      width: options.width,
      height: options.height,
      fit: options.fit,
      withoutEnlargement: options.withoutEnlargement
    })
  }
  // PNG is lossless here: sharp's png({ quality }) would switch to a palette.
  if (options.format === 'png') pipeline.png()
  else pipeline.toFormat(options.format, { quality: options.quality })
  try {
    const { data, info } = await pipeline.toBuffer({ resolveWithObject: true })
    return { data, format: options.format, width: info.width, height: info.height }
  } catch (err) {
    throw classify(err)
  }
}

function classify (err: unknown): JobError {
  const message = err instanceof Error ? err.message : String(err)
  if (/pixel limit/i.test(message)) return new JobError('PAYLOAD_TOO_LARGE', 'the image exceeds the pixel limit', message)
  if (/timeout/i.test(message)) return new JobError('TIMEOUT', 'the image took too long to process', message)
  if (/unsupported image format/i.test(message)) return new JobError('UNSUPPORTED_MEDIA', 'this image format is not supported', message)
  return new JobError('MEDIA_UNREADABLE', 'the image could not be decoded', message)
}
