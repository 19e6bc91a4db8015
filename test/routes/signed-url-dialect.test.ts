// imgproxy's URL dialect as its clients write it, over real HTTP: the sizes imgproxy gives where they differ
// from sharp's fits, dpr and rs:auto, bg on every format, expiring URLs, file names, skp, mb, and imgproxy's
// output settings (quality per format, full chroma at high JPEG quality).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { fileOrigin } from '../file-origin.ts'
import { build, decoded } from '../helper.ts'

const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')
const sign = (path: string) => signedUrlPath(path, KEY, SALT)

/** A 640x400 photo-like JPEG, a 640x400 PNG with a transparent half, a 400x640 portrait. */
async function sources () {
  const noise = (width: number, height: number) => sharp({ create: { width, height, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
  const landscape = await noise(640, 400).jpeg({ quality: 90 }).toBuffer()
  const portrait = await noise(400, 640).jpeg({ quality: 90 }).toBuffer()
  const half = await sharp({ create: { width: 320, height: 400, channels: 4, background: { r: 0, g: 0, b: 255, alpha: 1 } } }).png().toBuffer()
  const alpha = await sharp({ create: { width: 640, height: 400, channels: 4, background: { r: 0, g: 0, b: 0, alpha: 0 } } }).composite([{ input: half, left: 0, top: 0 }]).png().toBuffer()
  return { 'landscape.jpg': landscape, 'portrait.jpg': portrait, 'alpha.png': alpha } as Record<string, Buffer>
}

async function setup (t: import('node:test').TestContext, env: Record<string, string> = {}) {
  const files = await sources()
  const base = await fileOrigin(t, files)
  // Pixels are checked against sharp's own steps, so JPEGs decode at sharp's scale (GET URLs' default,
  // imgproxy's scale, is tested in jpeg-decoder.test.ts).
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/`, JPEG_SHRINK: 'quality', ...env })
  const get = (options: string, file = 'landscape.jpg', ext = '') => app.inject({ url: sign(`/${options}/plain/${base}/${file}${ext}`) })
  return { app, get, files, base }
}

test('the sizes imgproxy gives: rs:force and rs:fill-down on a small source, rs:auto with both sides, dpr, min-width', async (t) => {
  const { get } = await setup(t)
  for (const [options, file, width, height] of [
    ['rs:force:1000:300', 'landscape.jpg', 640, 192], ['rs:force:1000:0', 'landscape.jpg', 640, 256], ['rs:force:320:320', 'landscape.jpg', 320, 320],
    ['rs:fill-down:1000:1000', 'landscape.jpg', 400, 400], ['rs:fill:1000:1000', 'landscape.jpg', 640, 400],
    ['rs:auto:300:200', 'landscape.jpg', 300, 200], ['rs:auto:300:200', 'portrait.jpg', 125, 200],
    ['rs:fit:160:0/dpr:2', 'landscape.jpg', 320, 200], ['rs:fit:500:0/dpr:2', 'landscape.jpg', 640, 400], ['rs:fill:200:200/dpr:1.5', 'landscape.jpg', 300, 300],
    ['w:100/rs:fit:320:0', 'landscape.jpg', 320, 200], ['rs:fit:320:0/w:100', 'landscape.jpg', 100, 63], ['rs:fit:0:50/mw:320', 'landscape.jpg', 320, 50]
  ] as const) {
    const res = await get(options, file)
    assert.equal(res.statusCode, 200, `${options}: ${res.body}`)
    const meta = await decoded(res.rawPayload)
    assert.deepEqual([meta.width, meta.height], [width, height], options)
  }
})

test('bg flattens PNG and WebP too, as imgproxy does whenever bg is set; without it the alpha stays', async (t) => {
  const { get } = await setup(t)
  for (const ext of ['@png', '@webp']) {
    const flat = await get('bg:ff0000/w:320', 'alpha.png', ext)
    assert.equal(flat.statusCode, 200, flat.body)
    assert.equal((await decoded(flat.rawPayload)).hasAlpha, false, ext)
    const { data } = await sharp(flat.rawPayload).raw().toBuffer({ resolveWithObject: true })
    assert.deepEqual([...data.subarray((320 - 10) * 3, (320 - 10) * 3 + 3)].map(c => Math.round(c / 16)), [16, 0, 0], `${ext}: the transparent half is the bg`)
    const kept = await get('w:320', 'alpha.png', ext)
    assert.equal((await decoded(kept.rawPayload)).hasAlpha, true, ext)
  }
})

test('exp: an expired URL is 404 THUMBD_URL_EXPIRED before any fetch; a future one is served', async (t) => {
  const { get } = await setup(t)
  const expired = await get(`exp:${Math.floor(Date.now() / 1000) - 10}/w:100`)
  assert.equal(expired.statusCode, 404)
  assert.equal(expired.json().code, 'THUMBD_URL_EXPIRED')
  assert.equal((await get(`exp:${Math.floor(Date.now() / 1000) + 600}/w:100`)).statusCode, 200)
})

test('fn and att: Content-Disposition with the reply\'s extension; sm:1, ar:1 and cb are taken', async (t) => {
  const { get } = await setup(t)
  const named = await get('fn:holiday/w:100/sm:1/ar:1/cb:7', 'landscape.jpg', '@webp')
  assert.equal(named.statusCode, 200, named.body)
  assert.equal(named.headers['content-disposition'], 'inline; filename="holiday.webp"')
  const attached = await get('att:1/w:100')
  assert.equal(attached.headers['content-disposition'], 'attachment; filename="landscape.jpg"')
  assert.equal((await get('w:100')).headers['content-disposition'], undefined)
  // A source path that does not percent-decode (possible in the base64 form) keeps its name as it is.
  const { app, files, base } = await setup(t)
  files['b%zz.jpg'] = files['landscape.jpg']!
  const odd = await app.inject({ url: sign(`/att:1/w:100/${Buffer.from(`${base}/b%zz.jpg`).toString('base64url')}`) })
  assert.equal(odd.statusCode, 200, odd.body)
  assert.equal(odd.headers['content-disposition'], 'attachment; filename="b%zz.jpg"')
  assert.equal((await get('sm:0/w:100')).statusCode, 400)
})

test('skp answers a listed source format unprocessed; mb lowers the quality until the result fits', async (t) => {
  const { get, files } = await setup(t)
  const skipped = await get('skp:jpg/w:100')
  assert.equal(skipped.statusCode, 200, skipped.body)
  assert.equal(skipped.headers['content-type'], 'image/jpeg')
  assert.ok(skipped.rawPayload.equals(files['landscape.jpg']!), 'the source as it came')
  assert.equal((await decoded((await get('skp:png/w:100')).rawPayload)).width, 100, 'other formats are processed')
  const full = await get('q:95/w:640')
  const fitted = await get('q:95/w:640/mb:40000')
  assert.ok(full.rawPayload.length > 40000, `the unbounded one is larger (${full.rawPayload.length})`)
  assert.ok(fitted.rawPayload.length <= 40000, `fits: ${fitted.rawPayload.length}`)
  assert.equal((await decoded(fitted.rawPayload)).width, 640)
})

test('imgproxy\'s output settings: quality per format (FORMAT_QUALITY, fq), full chroma from JPEG q90', async (t) => {
  const { get, files } = await setup(t)
  const reference = async (format: 'webp' | 'avif' | 'jpeg', quality: number, source = files['landscape.jpg']!) => (await sharp(source).resize(320).toFormat(format, { quality }).toBuffer()).length
  assert.equal((await get('w:320', 'landscape.jpg', '@webp')).rawPayload.length, await reference('webp', 79), 'webp 79')
  assert.equal((await get('w:320', 'landscape.jpg', '@avif')).rawPayload.length, await reference('avif', 63), 'avif 63')
  assert.equal((await get('w:320/fq:webp:50', 'landscape.jpg', '@webp')).rawPayload.length, await reference('webp', 50), 'fq')
  assert.equal((await get('w:320/fq:webp:50/q:60', 'landscape.jpg', '@webp')).rawPayload.length, await reference('webp', 60), 'q over fq')
  assert.equal((await decoded((await get('w:320/q:95')).rawPayload)).chromaSubsampling, '4:4:4')
  assert.equal((await decoded((await get('w:320/q:89')).rawPayload)).chromaSubsampling, '4:2:0')
  const other = await setup(t, { FORMAT_QUALITY: 'webp=50' }) // its own (random) sources
  assert.equal((await other.get('w:320', 'landscape.jpg', '@webp')).rawPayload.length, await reference('webp', 50, other.files['landscape.jpg']), 'configured')
})

test('image operations as imgproxy orders them: rot, fl, c, gravity offsets and fp, bl, sh, pd, ex, exar (pixels against sharp)', async (t) => {
  const { get, files } = await setup(t)
  const src = files['landscape.jpg']!
  const pixels = async (image: Buffer | import('sharp').Sharp) => (Buffer.isBuffer(image) ? sharp(image) : image).raw().toBuffer({ resolveWithObject: true })
  for (const [options, reference] of [
    ['rot:90', sharp(src).rotate(90)],
    ['rot:-90', sharp(src).rotate(270)],
    ['fl:1:0', sharp(src).flop()],
    ['fl:0:1', sharp(src).flip()],
    ['c:320:200:nowe', sharp(src).extract({ left: 0, top: 0, width: 320, height: 200 })],
    ['c:0.5:0.5', sharp(src).extract({ left: 160, top: 100, width: 320, height: 200 })],
    ['c:100:100:soea:10:20', sharp(src).extract({ left: 530, top: 280, width: 100, height: 100 })],
    ['rs:fill:200:200/g:ea:20:0', sharp(src).resize(320, 200, { fit: 'fill' }).extract({ left: 100, top: 0, width: 200, height: 200 })],
    ['rs:fill:200:200/g:fp:0.75:0.5', sharp(src).resize(320, 200, { fit: 'fill' }).extract({ left: 120, top: 0, width: 200, height: 200 })],
    // A centred crop rounds half to even as imgproxy does: row 76 of 200 for 50 (imgproxy 4.0.12 measured), sharp's cover takes 75.
    ['h:50/mw:320', sharp(src).resize(320, 200, { fit: 'fill' }).extract({ left: 0, top: 76, width: 320, height: 50 })],
    ['bl:2', sharp(src).blur(2)],
    ['sh:1', sharp(src).sharpen({ sigma: 1, m1: 0, m2: 3 })],
    ['pd:10:20/bg:ff0000', sharp(src).extend({ top: 10, bottom: 10, left: 20, right: 20, background: '#ff0000' })],
    ['rs:fit:800:800/ex:1/bg:00ff00', sharp(src).extend({ top: 200, bottom: 200, left: 80, right: 80, background: '#00ff00' })],
    ['rs:fit:400:400/exar:1:no/bg:0000ff', sharp(src).resize(400, 250, { fit: 'fill' }).extend({ top: 0, bottom: 150, left: 0, right: 0, background: '#0000ff' })]
  ] as const) {
    const res = await get(options, 'landscape.jpg', '@png')
    assert.equal(res.statusCode, 200, `${options}: ${res.body}`)
    const [got, want] = await Promise.all([pixels(res.rawPayload), pixels(await reference.png().toBuffer())])
    assert.deepEqual([got.info.width, got.info.height], [want.info.width, want.info.height], options)
    assert.ok(got.data.equals(want.data), `${options}: the pixels sharp makes of the same steps`)
  }
  for (const [opts, name] of [['rot:45', 'rot'], ['c:abc', 'c'], ['g:sm:10:0', 'g'], ['fl:maybe', 'fl'], ['bl:-1', 'bl'], ['ex:1:sm', 'ex']]) {
    const res = await get(opts!)
    assert.equal(res.statusCode, 400, `${opts}: ${res.body}`)
    assert.match(res.json().message, new RegExp(`"${name}"`))
  }
})

test('PNG as imgproxy saves it: a palette source (GIF, palette PNG) stays a palette, without an alpha it does not need', async (t) => {
  const { get } = await setup(t)
  const gif = await sharp({ create: { width: 320, height: 200, channels: 3, background: '#336699' } }).composite([{ input: { text: { text: 'thumbd', dpi: 300 } }, left: 10, top: 10 }]).gif().toBuffer()
  const palettePng = await sharp(gif).png({ palette: true, colours: 16 }).toBuffer()
  const base = await fileOrigin(t, { 'a.gif': gif, 'b.png': palettePng })
  const other = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/`, JPEG_SHRINK: 'quality' })
  for (const file of ['a.gif', 'b.png']) {
    const res = await other.inject({ url: sign(`/w:300/plain/${base}/${file}@png`) })
    assert.equal(res.statusCode, 200, res.body)
    const meta = await decoded(res.rawPayload)
    assert.equal(meta.isPalette, true, `${file}: a palette PNG`)
    assert.equal(meta.hasAlpha, false, `${file}: no alpha`)
    const full = await sharp(file === 'a.gif' ? gif : palettePng).resize(300).png().toBuffer()
    assert.ok(res.rawPayload.length < full.length, `${file}: ${res.rawPayload.length} < ${full.length}`)
  }
  // A truecolour source: adaptive row filters, as imgproxy.
  const photo = await get('w:320', 'landscape.jpg', '@png')
  assert.equal((await decoded(photo.rawPayload)).isPalette, false)
})

test('a Display P3 photo rotated, cropped or flipped keeps its colours (its pixels are converted before that pass)', async (t) => {
  const { get, files } = await setup(t)
  const green = { r: 20, g: 200, b: 40 }
  files['p3.jpg'] = await sharp({ create: { width: 600, height: 400, channels: 3, background: green } }).withIccProfile('p3').jpeg({ quality: 95 }).toBuffer()
  for (const options of ['rot:90', 'c:300:200', 'fl:1', 'w:300']) {
    const res = await get(options, 'p3.jpg')
    assert.equal(res.statusCode, 200, res.body)
    const [r, g, b] = await sharp(res.rawPayload).resize(1, 1).removeAlpha().raw().toBuffer()
    assert.ok(Math.abs(r! - green.r) <= 10 && Math.abs(g! - green.g) <= 10 && Math.abs(b! - green.b) <= 10, `${options}: shown as ${r},${g},${b}`)
  }
})
