// IMAGE_DECODER=sandbox: an animation the output keeps whole (an animated GIF or WebP to WebP or GIF) is decoded by
// native/image-decode, every frame, and gives what sharp's in-process decode gives: the same frames, pixel for pixel,
// in order, with their delays and loop count, through every step the frames go (fit, smart crop, background, a WebP
// reduced on load, EXIF turns, GET URLs' rotate, crop and flip). Past MAX_INPUT_PIXELS over all its frames (what a
// still's pixels may hold, since they come back whole) the sandbox keeps the first frame.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import sharp from 'sharp'
import { signedUrlPath } from '../../../src/signed-urls/signature.ts'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { gifOf } from '../../animated-media.ts'
import { fileOrigin } from '../../file-origin.ts'
import { build, leftoverTempFiles, postMedia } from '../../helper.ts'
import { media } from '../../media.ts'
import { decodersSeenDuring, pixelsDecodedDuring, PIXELS_WRITTEN } from './decoder-probe.ts'

const built = existsSync(IMAGE_DECODE_FILE)
const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')

/** Everything a viewer shows of an animation: its frames' size, count, delays, loop and all their pixels (RGBA). */
async function shown (image: Buffer) {
  const meta = await sharp(image, { pages: -1 }).metadata()
  const { data } = await sharp(image, { pages: -1 }).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
  return { format: meta.format, pages: meta.pages ?? 1, width: meta.width, height: meta.pageHeight ?? meta.height, delay: meta.delay, loop: meta.loop, pixels: data }
}

/** An animated GIF of 8 noisy 1280x960 frames, 125 ms each (ffmpeg's): slow enough to decode to be seen at it. */
function noisyGif (): Buffer {
  return execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=1280x960:rate=8:duration=1', '-vf', 'noise=alls=30:allf=t+u', '-f', 'gif', 'pipe:1'], { maxBuffer: 1 << 28 })
}

/** That animation as a 640x480 WebP tagged with an EXIF orientation. */
async function turnedWebp (gif: Buffer, orientation: number) {
  return await sharp(gif, { pages: -1 }).resize(640).webp({ quality: 80 }).withMetadata({ orientation }).toBuffer()
}

test('an animation kept whole is decoded in image-decode with IMAGE_DECODER=sandbox: the very frames, delays and loop of the in-process decode', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const gif = noisyGif()
  const smooth = await media('gif') // 5 frames of 640x480, 200 ms each: a GIF of a few colours, as GIF output keeps it
  const lossy = await sharp(gif, { pages: -1 }).webp({ quality: 80 }).toBuffer()
  const base = await fileOrigin(t, { 'a.gif': gif })
  const env = { POOL_THREADS: '1', URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/` }
  const inProcess = await build(t, env)
  const sandboxed = await build(t, { ...env, IMAGE_DECODER: 'sandbox' })
  type App = typeof inProcess
  const cases: Array<[string, (app: App) => ReturnType<typeof postMedia>]> = [
    ['GIF to WebP', app => postMedia(app, 'thumbnail', gif, 'image/gif', '?width=160&format=webp')],
    ['GIF to GIF', app => postMedia(app, 'thumbnail', smooth, 'image/gif', '?width=160&format=gif')],
    ['GIF, smart crop', app => postMedia(app, 'resize', gif, 'image/gif', '?width=100&height=100&fit=cover&position=attention&format=webp')],
    ['GIF, contain on a background', app => postMedia(app, 'resize', gif, 'image/gif', '?width=200&height=100&fit=contain&background=ff000080&format=webp')],
    ['lossy WebP reduced on load', app => postMedia(app, 'thumbnail', lossy, 'image/webp', '?width=400&format=webp')],
    ['GET URL rot:90', app => app.inject({ url: signedUrlPath(`/rot:90/w:120/plain/${base}/a.gif@webp`, KEY, SALT) })],
    ['GET URL crop and flip', app => app.inject({ url: signedUrlPath(`/c:320:240:soea/fl:1:1/w:160/plain/${base}/a.gif@gif`, KEY, SALT) })]
  ]
  for (const orientation of [2, 3, 6, 8]) {
    const webp = await turnedWebp(gif, orientation)
    cases.push([`WebP, EXIF ${orientation}`, app => postMedia(app, 'thumbnail', webp, 'image/webp', '?width=300&format=webp')])
  }
  for (const [name, request] of cases) {
    const a = await decodersSeenDuring(request(inProcess))
    const b = await pixelsDecodedDuring(() => request(sandboxed))
    assert.equal(a.result.statusCode, 200, `${name}: ${a.result.body.slice(0, 300)}`)
    assert.equal(b.result.statusCode, 200, `${name}: ${b.result.body.slice(0, 300)}`)
    const [want, got] = [await shown(a.result.rawPayload), await shown(b.result.rawPayload)]
    assert.ok(want.pages > 1, `${name}: animated`)
    assert.deepEqual({ ...got, pixels: undefined }, { ...want, pixels: undefined }, name)
    if (name === 'GIF to GIF') {
      // sharp maps a GIF source's frames onto its own palette (image-encode.ts); raw frames carry none, so the
      // sandbox's get a palette made anew for each frame, as GET URLs always do: close, not the same.
      const mean = got.pixels.reduce((sum, v, i) => sum + Math.abs(v - want.pixels[i]!), 0) / want.pixels.length
      t.diagnostic(`${name}: mean difference ${mean.toFixed(2)}`)
      assert.ok(mean < 3, `${name}: mean difference ${mean}`)
    } else {
      assert.ok(got.pixels.equals(want.pixels), `${name}: the very same pixels in every frame`)
    }
    assert.equal(a.seen, 0, `${name}: in-process, no image-decode process`)
    // Its frames, not only a header read (--info writes 48 bytes); the smooth GIF decodes too fast to be watched.
    if (name !== 'GIF to GIF') assert.ok(b.written > PIXELS_WRITTEN, `${name}: sandbox, decoded by image-decode (${b.seen} seen, ${b.written} bytes written)`)
  }
  assert.deepEqual(leftoverTempFiles(sandboxed), [])
})

test('past MAX_INPUT_PIXELS over all its frames, the sandbox keeps an animation\'s first frame (in-process: every frame, within 4x)', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const gif = await media('gif') // 5 frames of 640x480: 1.5 MP together
  const sandboxed = await build(t, { POOL_THREADS: '1', IMAGE_DECODER: 'sandbox', MAX_INPUT_PIXELS: '1000000' })
  const inProcess = await build(t, { POOL_THREADS: '1', MAX_INPUT_PIXELS: '1000000' })
  const [a, b] = await Promise.all([postMedia(inProcess, 'thumbnail', gif, 'image/gif', '?width=160&format=webp'), postMedia(sandboxed, 'thumbnail', gif, 'image/gif', '?width=160&format=webp')])
  assert.equal(a.statusCode, 200, a.body)
  assert.equal(b.statusCode, 200, b.body)
  assert.equal((await shown(a.rawPayload)).pages, 5)
  const still = await shown(b.rawPayload)
  assert.equal(still.pages, 1)
  // That first frame is the in-process still's (animated=false), pixel for pixel.
  const first = await postMedia(inProcess, 'thumbnail', gif, 'image/gif', '?width=160&format=webp&animated=false')
  assert.ok(still.pixels.equals((await shown(first.rawPayload)).pixels), 'the first frame')
})

test('a frame delay past what sharp sets on raw frames (70 s) is shortened to 65535 ms in the sandbox: the animation still served, not refused', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const gif = gifOf({ width: 40, height: 30, frames: 3, delays: [7000] }) // centiseconds
  const sandboxed = await build(t, { POOL_THREADS: '1', IMAGE_DECODER: 'sandbox' })
  const inProcess = await build(t, { POOL_THREADS: '1' })
  for (const app of [inProcess, sandboxed]) {
    const res = await postMedia(app, 'thumbnail', gif, 'image/gif', '?width=20&format=webp')
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((await shown(res.rawPayload)).pages, 3)
  }
  const { delay } = await shown((await postMedia(sandboxed, 'thumbnail', gif, 'image/gif', '?width=20&format=webp')).rawPayload)
  assert.deepEqual(delay, [65535, 65535, 65535])
})
