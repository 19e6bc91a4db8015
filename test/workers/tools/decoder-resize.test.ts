// IMAGE_DECODER=sandbox: where a job's sharp pipeline begins with its resize (an API thumbnail or resize, the
// fingerprints' working size), image-decode does that resize itself (--resize, native/image-decode.c resized()), so
// only thumbnail-sized pixels leave the sandbox: the same libvips calls on the same pixels, so the very same bytes as
// in-process, for every fit, odd sizes, grey, palette, sRGB-tagged and alpha pictures (flattened onto a JPEG's
// background first, or premultiplied around the resize); and what it must leave to the pool thread (alpha padded or
// smart-cropped after, 16 bits, a kept profile, an EXIF turn, a GET URL's imgproxy sizing, an enlargement) is left to
// it: resized there from raw pixels as at stop 53, which match sharp's resize of the loaded file at these sizes (not
// at every size: a level apart at some, a difference this change removes wherever the decoder resizes).
import assert from 'node:assert/strict'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import sharp from 'sharp'
import { signedUrlPath } from '../../../src/signed-urls/signature.ts'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { fileOrigin } from '../../file-origin.ts'
import { AUTH, build, postMedia } from '../../helper.ts'
import { decodersSeenDuring } from './decoder-probe.ts'

const built = existsSync(IMAGE_DECODE_FILE)
const KEY = Buffer.from('0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0', 'hex')
const SALT = Buffer.from('a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796', 'hex')

const DENSITY_DIFFERS = new Set(['jpeg cmyk (converted in the decoder first)', 'png display p3 (kept)'])

/** A noisy photo-like picture: any resampling difference shows. */
function noisy (width: number, height: number, channels: 3 | 4 = 3) {
  return sharp({ create: { width, height, channels, background: { r: 90, g: 140, b: 200, alpha: 0.8 }, noise: { type: 'gaussian', mean: 128, sigma: 50 } } })
}

test('IMAGE_DECODER=sandbox: stills resized in image-decode give the very bytes sharp gives in-process, every fit and odd size; those it leaves to the thread too', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const photo = await noisy(1999, 1333).png().toBuffer()
  const inputs: Record<string, Buffer> = {
    'png 1999x1333': photo,
    'png grey 1234x567': await noisy(1234, 567).toColourspace('b-w').png().toBuffer(),
    // Its profile dropped unread in both (image.ts colourHandling 'untagged'); raw pixels resized in the thread
    // differed from sharp's resize of this loaded PNG by a level at 160 px inside.
    'png sRGB-tagged 801x533': await noisy(801, 533).withIccProfile('srgb').png().toBuffer(),
    'png palette 777x1999': await sharp(photo).resize(777, 1999, { fit: 'fill' }).png({ palette: true }).toBuffer(),
    'gif 1001x667': await sharp(photo).resize(1001, 667, { fit: 'fill' }).gif().toBuffer(),
    'webp lossy 1999x1333 (reduced on load first)': await sharp(photo).webp({ quality: 80 }).toBuffer(),
    'avif 8-bit': await sharp(photo).resize(800).avif({ quality: 60, effort: 0 }).toBuffer(),
    'jpeg cmyk (converted in the decoder first)': await sharp(photo).toColourspace('cmyk').jpeg({ quality: 90 }).toBuffer(),
    // With alpha: resized in the decoder, flattened onto a JPEG's background first or premultiplied around it for a
    // PNG, WebP or the fingerprints; by the thread where it is padded (contain) or smart-cropped after.
    'png with alpha': await noisy(999, 666, 4).png().toBuffer(),
    'png grey+alpha': await noisy(999, 666, 4).toColourspace('b-w').png().toBuffer(),
    'png palette with tRNS': await noisy(777, 555, 4).png({ palette: true }).toBuffer(),
    'gif with transparency': await noisy(801, 601, 4).gif().toBuffer(),
    'webp lossless with alpha': await noisy(999, 666, 4).webp({ lossless: true }).toBuffer(),
    // Left to the pool thread's resize:
    'png 16-bit': await sharp(photo).resize(999).toColourspace('rgb16').png().toBuffer(),
    'png display p3 (kept)': await sharp(photo).resize(999).withIccProfile('p3').png().toBuffer(),
    'png EXIF orientation 6': await sharp(photo).resize(999).withExif({ IFD0: { Orientation: '6' } }).png().toBuffer()
  }
  const queries = [
    'thumbnail?width=320&format=png',
    'thumbnail?width=200&height=200&fit=cover&format=jpeg',
    'thumbnail?width=100&height=300&fit=fill&format=webp',
    'thumbnail?width=150&height=150&fit=cover&format=webp',
    'resize?width=180&height=120&fit=contain&background=ff000080&format=jpeg',
    'resize?width=240&format=jpeg&background=3366cc',
    'thumbnail?width=301&height=97&fit=inside&format=png',
    'thumbnail?width=160&height=160&fit=inside&format=png',
    'thumbnail?width=300&height=300&fit=contain&format=png',
    'thumbnail?width=64&height=300&fit=outside&format=png',
    'thumbnail?height=111&format=webp',
    'thumbnail?width=5000&format=png',
    'resize?width=250&height=250&fit=cover&position=attention&format=png',
    'resize?width=251&height=180&fit=cover&position=entropy&format=jpeg'
  ]
  const inProcess = await build(t, { POOL_THREADS: '1' })
  const sandboxed = await build(t, { POOL_THREADS: '1', IMAGE_DECODER: 'sandbox' })
  // Else both would be sharp's own decode in the thread, and the same bytes would prove nothing.
  assert.ok(sandboxed.mediaTools.imageDecodeStills, 'image-decode takes stills, as this thread asks for them')
  for (const [name, body] of Object.entries(inputs)) {
    for (const query of queries) {
      const post = (app: typeof inProcess) => app.inject({ method: 'POST', url: `/api/${query}`, headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: body })
      const [a, b] = await Promise.all([post(inProcess), post(sandboxed)])
      assert.equal(a.statusCode, 200, `${name} ${query} in-process: ${a.body}`)
      assert.equal(b.statusCode, 200, `${name} ${query} sandbox: ${b.body}`)
      const [x, y] = await Promise.all([a, b].map(reply => sharp(reply.rawPayload).raw().toBuffer({ resolveWithObject: true })))
      assert.deepEqual(y!.info, x!.info, `${name} ${query}`)
      assert.ok(y!.data.equals(x!.data), `${name} ${query}: other pixels than in-process`)
      // The bytes too, but where a density reaches sharp's output (a PNG's pHYs) by one path only: a JPEG's JFIF
      // density from sharp's own decode, never from raw pixels; libvips' default one from the PNG the thread makes
      // for a kept profile (still-sandboxed.ts taggedPng), which sharp's decode of the upload lacks.
      if (!DENSITY_DIFFERS.has(name)) assert.ok(b.rawPayload.equals(a.rawPayload), `${name} ${query}: other bytes than in-process`)
    }
    // The fingerprints' working size, resized there too.
    const [a, b] = await Promise.all([postMedia(inProcess, 'hash', body), postMedia(sandboxed, 'hash', body)])
    assert.equal(a.statusCode, 200, `${name} hash: ${a.body}`)
    assert.deepEqual(b.json(), a.json(), `${name} hash`)
  }
})

test('IMAGE_DECODER=sandbox: only thumbnail-sized pixels leave image-decode where it resizes; all of them where the thread must (alpha padded, a GET URL)', { skip: !built && 'native/image-decode not built' }, async (t) => {
  // 36 MP, flat (a small file, a long decode): its full pixels take the decoder a while to write, so that a decoder
  // writing them is seen at it (/proc every millisecond).
  const side = 6000
  const opaque = await sharp({ create: { width: side, height: side, channels: 3, background: '#4080c0' } }).png().toBuffer()
  const alpha = await sharp({ create: { width: side, height: side, channels: 4, background: { r: 64, g: 128, b: 192, alpha: 0.5 } } }).png().toBuffer()
  const base = await fileOrigin(t, { 'a.png': opaque })
  const env = { POOL_THREADS: '1', URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/` }
  const inProcess = await build(t, env)
  const sandboxed = await build(t, { ...env, IMAGE_DECODER: 'sandbox' })
  type App = typeof inProcess
  const cases: Array<[string, (app: App) => ReturnType<typeof postMedia>, 'thumbnail-sized' | 'whole']> = [
    ['opaque, its resize first', app => postMedia(app, 'thumbnail', opaque, 'image/png', '?width=320&format=png'), 'thumbnail-sized'],
    ['with alpha, to a PNG', app => postMedia(app, 'thumbnail', alpha, 'image/png', '?width=320&format=png'), 'thumbnail-sized'],
    // Flattened onto the background before sharp's resize, so there too.
    ['with alpha, to a JPEG', app => postMedia(app, 'resize', alpha, 'image/png', '?width=320&format=jpeg&background=3366cc'), 'thumbnail-sized'],
    // Padded after the resize while premultiplied, with a premultiplied background.
    ['with alpha, contained', app => postMedia(app, 'resize', alpha, 'image/png', '?width=320&height=200&fit=contain&format=png'), 'whole'],
    // Sized by imgproxy's rules in the thread (image-geometry.ts), after the decode.
    ['GET URL', app => app.inject({ url: signedUrlPath(`/rs:fit:320:320/plain/${base}/a.png@png`, KEY, SALT) }), 'whole']
  ]
  for (const [name, request, expected] of cases) {
    const a = await request(inProcess)
    const b = await decodersSeenDuring(request(sandboxed))
    assert.equal(a.statusCode, 200, `${name}: ${a.body.slice(0, 300)}`)
    assert.equal(b.result.statusCode, 200, `${name}: ${b.result.body.slice(0, 300)}`)
    assert.ok(b.result.rawPayload.equals(a.rawPayload), `${name}: other bytes than in-process`)
    assert.ok(b.seen >= 1, `${name}: the decoder was seen`)
    if (expected === 'thumbnail-sized') assert.ok(b.written < 2 ** 20, `${name}: the decoder wrote ${b.written} bytes, not a 320x320 thumbnail's 300 KB and a header`)
    else assert.ok(b.written > 8 * 2 ** 20, `${name}: the decoder wrote ${b.written} bytes, not the whole picture`)
  }
})
