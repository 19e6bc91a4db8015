// GET URLs of an animated GIF: imgproxy's rotate, crop and flip apply to every frame, as the resize does, and
// the frames keep their order, delays and loop count.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { fileOrigin } from '../file-origin.ts'
import { build } from '../helper.ts'
import { media } from '../media.ts'

const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')

/** Frame i of an animation as raw RGBA (decoded alone). */
const frame = async (image: Buffer, i: number) => (await sharp(image, { page: i }).ensureAlpha().raw().toBuffer({ resolveWithObject: true })).data

function meanDifference (a: Buffer, b: Buffer): number {
  assert.equal(a.length, b.length)
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!)
  return sum / a.length
}

test('rot, c and fl of an animated GIF apply to every frame, in order, with its delays and loop (they gave its still)', async (t) => {
  const gif = await media('gif') // 5 frames of 640x480, 200 ms each; testsrc2 moves, so frames differ
  const files: Record<string, Buffer> = { 'a.gif': gif }
  for (const i of [0, 4]) files[`f${i}.png`] = await sharp(gif, { page: i }).png().toBuffer()
  const base = await fileOrigin(t, files)
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/` })
  const get = (options: string, file: string, ext: string) => app.inject({ url: signedUrlPath(`/${options}/plain/${base}/${file}${ext}`, KEY, SALT) })
  for (const [options, size] of [
    ['rot:90/w:120', [120, 160]],
    ['rot:180/w:160', [160, 120]],
    ['fl:0:1/w:160', [160, 120]],
    ['fl:1:1/w:160', [160, 120]],
    ['c:320:240:soea/w:160', [160, 120]],
    ['rot:270/c:0.5:0.5/rs:fill:100:100/g:nowe', [100, 100]],
    ['rot:270/c:0.5:0.5/rs:fill:100:100/g:sm', [100, 100]]
  ] as const) {
    for (const ext of ['@webp', '@gif']) {
      const res = await get(options, 'a.gif', ext)
      assert.equal(res.statusCode, 200, `${options}${ext}: ${res.body}`)
      const meta = await sharp(res.rawPayload, { pages: -1 }).metadata()
      assert.deepEqual([meta.pages, meta.width, meta.pageHeight, meta.delay, meta.loop], [5, ...size, [200, 200, 200, 200, 200], 0], `${options}${ext}`)
    }
    // Each frame, in its place, is what the same URL makes of that frame alone.
    const animated = (await get(options, 'a.gif', '@webp')).rawPayload
    // A smart crop is chosen on the first frame and cut from all (workers/image/animation.ts): frame 0 alone compares.
    for (const i of options.includes('g:sm') ? [0] : [0, 4]) {
      const alone = await get(options, `f${i}.png`, '@png')
      const [want, got, other] = [await sharp(alone.rawPayload).ensureAlpha().raw().toBuffer(), await frame(animated, i), await frame(animated, 4 - i)]
      const [near, far] = [meanDifference(want, got), meanDifference(want, other)]
      // WebP's loss: a mean difference under 12 (as test/routes/animation.test.ts); the other frame is further.
      assert.ok(near < 12 && near < far, `${options}, frame ${i}: as the still (mean difference ${near.toFixed(1)}; to frame ${4 - i}: ${far.toFixed(1)})`)
    }
  }
})

test('a GIF out of a GIF source gets a new palette per frame, as imgproxy (libvips) makes it: sharp\'s reuse of the source\'s erred 2.8 on average', async (t) => {
  const gif = await media('gif')
  const base = await fileOrigin(t, { 'a.gif': gif })
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/` })
  const res = await app.inject({ url: signedUrlPath(`/rs:fit:160:160/plain/${base}/a.gif@gif`, KEY, SALT) })
  assert.equal(res.statusCode, 200, res.body)
  for (const i of [0, 2, 4]) {
    const want = await sharp(gif, { page: i }).resize(160, 120, { fit: 'fill' }).ensureAlpha().raw().toBuffer()
    const error = meanDifference(want, await frame(res.rawPayload, i))
    // imgproxy 4.0.12's frames err 0.6 here (load/imgproxy-parity.ts); reusing the source's palette, 2.8.
    assert.ok(error < 1.5, `frame ${i}: mean difference ${error.toFixed(2)} from the resized source frame`)
  }
})

test('rot, c and fl of an animation hold all its frames raw: past MAX_INPUT_PIXELS together a 400 naming it; its resize and its still are served', async (t) => {
  const gif = await media('gif') // 5 x 640x480 = 1 536 000 px together
  const base = await fileOrigin(t, { 'a.gif': gif })
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/`, MAX_INPUT_PIXELS: String(640 * 480 * 4) })
  const get = (asked: string) => {
    const [options, ext] = asked.split('@')
    return app.inject({ url: signedUrlPath(`/${options}/plain/${base}/a.gif@${ext}`, KEY, SALT) })
  }
  for (const options of ['rot:90/w:120@webp', 'fl:1:0@gif', 'c:100:100@webp']) {
    const res = await get(options)
    assert.equal(res.statusCode, 400, `${options}: ${res.body}`)
    assert.match(res.json().message, /MAX_INPUT_PIXELS/)
  }
  for (const options of ['w:120@webp', 'rot:90/w:120@jpg', 'da:1/rot:90/w:120@webp']) assert.equal((await get(options)).statusCode, 200, options)
})
