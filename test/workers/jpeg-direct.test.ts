// A JPEG that libturbojpeg decodes at its output size, with nothing left to do to it, is encoded without a
// sharp pipeline (workers/image/jpeg-direct.ts): the same bytes (JPEG) and pixels (WebP) as sharp's encode of the
// same decode, which is what render() made of it before; everything with more to do keeps sharp's pipeline.
// Photos made by ffmpeg and sharp at test time; real libturbojpeg, libwebp and sharp.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { render } from '../../workers/image/image.ts'
import { lossyOptions } from '../../workers/image/image-encode.ts'
import { directEncodes } from '../../workers/image/jpeg-direct.ts'
import { turbojpeg } from '../../workers/image/jpeg-turbo.ts'
import type { ImageOptions, JobContext, JobSettings } from '../../contract/types.ts'

// As the server's start sets it, before libturbojpeg is first bound (lazily, in the first test).
process.env.TJ_OPTIMIZE = '1'

const run = promisify(execFile)

/** A detailed 2560x1600 picture (a test pattern under noise), as ffmpeg's 4:2:0 JPEG: 2560 to 320 px is 1/8. */
async function photo (): Promise<Buffer> {
  const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=2560x1600:rate=1', '-frames:v', '1',
    '-vf', 'noise=alls=24:allf=u', '-pix_fmt', 'yuvj420p', '-q:v', '3', '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1'], { encoding: 'buffer', maxBuffer: 64 << 20 })
  return stdout
}

const ctx = (jpegShrink: JobSettings['jpegShrink'] = 'auto'): JobContext => ({
  settings: { maxInputPixels: 50_000_000, maxAnimationFrames: 100, jpegDecoder: 'turbojpeg', jpegShrink } as JobSettings,
  signal: new AbortController().signal,
  deadline: Date.now() + 60_000
})

/** What a GET URL's rs:fit:320:0 asks of the job (src/routes/signed-url.ts), in `format` at `quality`. */
const urlOptions = (format: ImageOptions['format'], quality = 80, extra: Partial<ImageOptions> = {}): ImageOptions =>
  ({ width: 320, fit: 'inside', format, quality, withoutEnlargement: true, url: { type: 'fit', enlarge: false, dpr: 1, zoom: [1, 1] }, ...extra })

/** render() before the direct encode: libturbojpeg's 1/8 decode through sharp's pipeline (a resize to its own size, flatten, encode). */
async function throughSharp (bytes: Buffer, options: ImageOptions): Promise<Buffer> {
  const tj = turbojpeg()!
  const { data, width, height, channels } = tj.decode(bytes, tj.header(bytes), 8)
  const pipeline = sharp(data, { raw: { width, height, channels } }).resize({ width, height, fit: 'fill', withoutEnlargement: false }).flatten({ background: '#ffffff' })
  return pipeline.toFormat(options.format, lossyOptions(options)).toBuffer()
}

async function direct (bytes: Buffer, options: ImageOptions, context = ctx()) {
  const before = directEncodes()
  const result = await render({ bytes }, options, context)
  return { result, direct: directEncodes() - before }
}

test('a GET URL\'s JPEG thumbnail at imgproxy\'s scale is encoded by libturbojpeg: sharp\'s very bytes, at q80 (4:2:0) and q90 (4:4:4)', async () => {
  assert.ok(turbojpeg()?.encode !== undefined, 'TJ_OPTIMIZE=1: libturbojpeg optimises its Huffman tables as sharp does')
  const bytes = await photo()
  for (const quality of [80, 90]) {
    const options = urlOptions('jpeg', quality)
    const { result, direct: taken } = await direct(bytes, options)
    assert.equal(taken, 1)
    assert.deepEqual([result.format, result.width, result.height], ['jpeg', 320, 200])
    assert.ok(Buffer.from(result.data).equals(await throughSharp(bytes, options)), `the bytes sharp's pipeline wrote at q${quality}`)
    assert.equal((await sharp(result.data).metadata()).chromaSubsampling, quality >= 90 ? '4:4:4' : '4:2:0')
  }
})

test('a GET URL\'s WebP thumbnail at imgproxy\'s scale is encoded by libwebp: sharp\'s pixels, no larger', async () => {
  const bytes = await photo()
  const options = urlOptions('webp')
  const { result, direct: taken } = await direct(bytes, options)
  assert.equal(taken, 1)
  assert.deepEqual([result.format, result.width, result.height], ['webp', 320, 200])
  const reference = await throughSharp(bytes, options)
  assert.ok(result.data.length <= reference.length, `${result.data.length} bytes against sharp's ${reference.length}`)
  const [ours, theirs] = await Promise.all([result.data, reference].map(data => sharp(data).raw().toBuffer()))
  assert.ok(ours!.equals(theirs!), 'the same decoded pixels as sharp\'s WebP')
})

test('/api\'s thumbnail at imgproxy\'s scale, one side asked: encoded directly too', async () => {
  const bytes = await photo()
  const options: ImageOptions = { width: 320, fit: 'cover', format: 'jpeg', quality: 80, withoutEnlargement: true }
  const { result, direct: taken } = await direct(bytes, options, ctx('imgproxy'))
  assert.equal(taken, 1)
  assert.ok(Buffer.from(result.data).equals(await throughSharp(bytes, options)))
})

test('whatever has more to do than the encode keeps sharp\'s pipeline', async () => {
  const bytes = await photo()
  const turned = await sharp(bytes).withMetadata({ orientation: 6 }).jpeg({ quality: 90, chromaSubsampling: '4:2:0' }).toBuffer()
  const grey = await sharp(bytes).greyscale().toColourspace('b-w').jpeg({ quality: 90 }).toBuffer()
  const cases: Array<[string, Buffer, ImageOptions, JobContext?]> = [
    ['a resize after the decode (sharp\'s scale, 1/4)', bytes, urlOptions('jpeg'), ctx('quality')],
    ['an EXIF quarter turn', turned, urlOptions('jpeg', 80, { width: 200 })],
    ['a blur', bytes, urlOptions('jpeg', 80, { url: { type: 'fit', enlarge: false, dpr: 1, zoom: [1, 1], ops: { blur: 2 } } })],
    ['padding', bytes, urlOptions('webp', 80, { url: { type: 'fit', enlarge: false, dpr: 1, zoom: [1, 1], ops: { padding: [4, 4, 4, 4] } } })],
    ['a byte budget', bytes, urlOptions('jpeg', 80, { maxBytes: 10_000 })],
    ['PNG out', bytes, urlOptions('png')],
    ['a grey photo', grey, urlOptions('jpeg')]
  ]
  for (const [what, source, options, context] of cases) {
    const { result, direct: taken } = await direct(source, options, context)
    assert.equal(taken, 0, what)
    assert.equal(result.format, options.format, what)
  }
})
