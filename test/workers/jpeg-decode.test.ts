// The JPEG decode through libturbojpeg (workers/image/jpeg-decode.ts) against sharp's own: the same pixels for
// every chroma, progressive, grey, an sRGB profile and EXIF orientations; sharp's path for what it does not
// take; the same refusal for a truncated JPEG. Photos made by ffmpeg and sharp at test time.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { render } from '../../workers/image/image.ts'
import { frameMarker, turboDecodes } from '../../workers/image/jpeg-decode.ts'
import { jpegShrink } from '../../workers/image/jpeg-scale.ts'
import { turbojpeg } from '../../workers/image/jpeg-turbo.ts'
import type { ImageOptions, JobContext, JobSettings } from '../../contract/types.ts'

const run = promisify(execFile)

/** A detailed 2560x1600 picture (a test pattern under noise), as ffmpeg's JPEG of the given chroma. */
async function photo (pixFmt: string): Promise<Buffer> {
  const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=2560x1600:rate=1', '-frames:v', '1',
    '-vf', 'noise=alls=24:allf=u', '-pix_fmt', pixFmt, '-q:v', '3', '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1'], { encoding: 'buffer', maxBuffer: 64 << 20 })
  return stdout
}

const ctxOf = (jpegDecoder: JobSettings['jpegDecoder'], jpegShrink: JobSettings['jpegShrink'] = 'quality'): JobContext => ({
  settings: { maxInputPixels: 50_000_000, maxAnimationFrames: 100, jpegDecoder, jpegShrink } as JobSettings,
  signal: new AbortController().signal,
  deadline: Date.now() + 60_000
})

const options = (extra: Partial<ImageOptions>): ImageOptions => ({ fit: 'cover', format: 'png', quality: 80, withoutEnlargement: true, ...extra })

async function pixels (bytes: Buffer, opts: ImageOptions, ctx: JobContext) {
  const { data } = await render({ bytes }, opts, ctx)
  return sharp(data).raw().toBuffer({ resolveWithObject: true })
}

/** Renders with both decoders; returns how many JPEGs libturbojpeg decoded for it. */
async function sameAsSharp (bytes: Buffer, opts: ImageOptions): Promise<number> {
  const reference = await pixels(bytes, opts, ctxOf('sharp'))
  const before = turboDecodes()
  const turbo = await pixels(bytes, opts, ctxOf('turbojpeg'))
  assert.deepEqual(turbo.info, reference.info)
  assert.ok(turbo.data.equals(reference.data), 'the same pixels as sharp\'s decode')
  return turboDecodes() - before
}

test('libturbojpeg loads here (Debian\'s libturbojpeg0, through koffi)', () => {
  assert.ok(turbojpeg() !== undefined)
})

test('sharp\'s shrink-on-load rule and imgproxy\'s', () => {
  assert.equal(jpegShrink([2560, 1600], 1, { width: 320 }, 'quality'), 4)
  assert.equal(jpegShrink([2560, 1600], 1, { width: 320 }, 'imgproxy'), 8)
  assert.equal(jpegShrink([2560, 1600], 1, { width: 256 }, 'quality'), 8)
  // A quarter turn: the asked width is the stored height.
  assert.equal(jpegShrink([2560, 1600], 6, { width: 320 }, 'quality'), 4)
  assert.equal(jpegShrink([2560, 1600], 6, { width: 200 }, 'quality'), 4)
  assert.equal(jpegShrink([2560, 1600], 1, { width: 800 }, 'quality'), 2)
  assert.equal(jpegShrink([2560, 1600], 1, { width: 1000 }, 'quality'), 1)
  assert.equal(jpegShrink([2560, 1600], 1, { width: 2000 }, 'quality'), 1)
  assert.equal(jpegShrink([2560, 1600], 1, { width: 320, height: 320, fit: 'cover' }, 'quality'), 4)
  assert.equal(jpegShrink([2560, 1600], 1, { width: 320, height: 320, fit: 'inside' }, 'quality'), 4)
})

test('the same pixels as sharp for 4:2:0, 4:2:2, 4:4:4 and progressive photos', async () => {
  const p420 = await photo('yuvj420p')
  assert.equal(await sameAsSharp(p420, options({ width: 320 })), 1)
  assert.equal(await sameAsSharp(await photo('yuvj422p'), options({ width: 320 })), 1)
  const p444 = await photo('yuvj444p')
  assert.equal(await sameAsSharp(p444, options({ width: 800 })), 1)
  const progressive = await sharp(p444).jpeg({ quality: 85, progressive: true, chromaSubsampling: '4:2:0' }).toBuffer()
  assert.equal(await sameAsSharp(progressive, options({ width: 200 })), 1)
  assert.equal(await sameAsSharp(p420, options({ width: 320, height: 320, fit: 'cover', position: 'northeast' })), 1)
  assert.equal(await sameAsSharp(p420, options({ width: 400, height: 240, fit: 'contain', background: '#336699' })), 1)
})

test('the same pixels for grey and sRGB-tagged photos; sharp\'s path for a kept profile', async () => {
  const p420 = await photo('yuvj420p')
  const grey = await sharp(p420).greyscale().toColourspace('b-w').jpeg({ quality: 90 }).toBuffer()
  assert.equal((await sharp(grey).metadata()).channels, 1)
  assert.equal(await sameAsSharp(grey, options({ width: 320 })), 1)
  const srgb = await sharp(p420).withIccProfile('srgb').jpeg({ quality: 90 }).toBuffer()
  assert.equal(await sameAsSharp(srgb, options({ width: 320, format: 'jpeg' })), 1)
  const p3 = await sharp(p420).withIccProfile('p3').jpeg({ quality: 90 }).toBuffer()
  assert.equal(await sameAsSharp(p3, options({ width: 320 })), 0, 'Display P3, kept on the output: sharp decodes it')
})

test('EXIF orientations applied as sharp applies them', async () => {
  const p422 = await photo('yuvj422p')
  const turned = (orientation: number) => sharp(p422).withMetadata({ orientation }).jpeg({ quality: 90, chromaSubsampling: '4:2:0' }).toBuffer()
  const o6 = await turned(6)
  assert.equal(await sameAsSharp(o6, options({ width: 320 })), 1)
  assert.equal(await sameAsSharp(o6, options({ width: 300, height: 200, fit: 'fill' })), 1)
  assert.equal(await sameAsSharp(await turned(3), options({ width: 320, height: 240, fit: 'cover' })), 1)
  assert.equal(await sameAsSharp(await turned(5), options({ width: 300, height: 300, fit: 'inside' })), 1)
  assert.equal(await sameAsSharp(await turned(8), options({ height: 200 })), 1)
  assert.equal(await sameAsSharp(await turned(2), options({ width: 320 })), 1)
  assert.equal(await sameAsSharp(await turned(7), options({ width: 320, fit: 'outside', height: 100 })), 1)
  // A quarter turn cropped to both sides: sharp's own path (its crop is to the turned sides).
  assert.equal(await sameAsSharp(o6, options({ width: 320, height: 320, fit: 'cover' })), 0)
})

test('an arithmetic-coded JPEG (jpegtran -arithmetic) takes sharp\'s path', async (t) => {
  const p420 = await photo('yuvj420p')
  const arithmetic = await new Promise<Buffer>((resolve, reject) => {
    const child = execFile('jpegtran', ['-arithmetic'], { encoding: 'buffer', maxBuffer: 64 << 20 }, (err, stdout) => err === null ? resolve(stdout) : reject(err))
    child.stdin!.end(p420)
  }).catch(() => undefined)
  if (arithmetic === undefined) return t.skip('jpegtran (libjpeg-turbo-progs) is not installed')
  assert.equal(frameMarker(p420), 0xc0)
  assert.equal(frameMarker(arithmetic), 0xc9)
  assert.equal(await sameAsSharp(arithmetic, options({ width: 320 })), 0)
})

test('a truncated JPEG: the same refusal as through sharp, nothing decoded by libturbojpeg', async () => {
  const p420 = await photo('yuvj420p')
  const truncated = p420.subarray(0, Math.floor(p420.length * 0.6))
  const before = turboDecodes()
  for (const decoder of ['sharp', 'turbojpeg'] as const) {
    await assert.rejects(render({ bytes: truncated }, options({ width: 320 }), ctxOf(decoder)), (err: { code?: string }) => err.code === 'MEDIA_UNREADABLE')
  }
  assert.equal(turboDecodes(), before)
})

test('JPEG_SHRINK=imgproxy decodes at imgproxy\'s scale: the same size, close pixels', async () => {
  const p444 = await photo('yuvj444p')
  const reference = await pixels(p444, options({ width: 320 }), ctxOf('sharp'))
  const before = turboDecodes()
  const fast = await pixels(p444, options({ width: 320 }), ctxOf('turbojpeg', 'imgproxy'))
  assert.equal(turboDecodes() - before, 1)
  assert.deepEqual(fast.info, reference.info)
  let sum = 0
  for (let i = 0; i < fast.data.length; i++) sum += Math.abs(fast.data[i]! - reference.data[i]!)
  const mean = sum / fast.data.length
  assert.ok(mean > 0 && mean < 8, `a softer thumbnail, not another picture (mean difference ${mean.toFixed(2)})`)
})
