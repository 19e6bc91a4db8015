// Animated GIF/WebP sources stay animated where the output format can hold it (WebP, GIF): every frame, its
// delay and the loop count, with every fit, crop and background applied per frame as to a still; animated=false
// asks for the still first frame. The bounds (MAX_ANIMATION_FRAMES, the pixel budget of all frames) are
// checked from the header.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { build, leftoverTempFiles, postMedia } from '../helper.ts'
import { media } from '../media.ts'
import { gifOf, gifWithBadThirdFrame, webpOf } from '../animated-media.ts'

/** An animation's frames, delays and loop, and each frame's size. */
async function frames (image: Buffer) {
  const meta = await sharp(image, { pages: -1 }).metadata()
  return { format: meta.format, pages: meta.pages ?? 1, width: meta.width, height: meta.pageHeight ?? meta.height, delay: meta.delay, loop: meta.loop }
}

/** Frame i of an animation as raw RGBA (decoded alone). */
const frame = (image: Buffer, i: number) => sharp(image, { page: i }).ensureAlpha().raw().toBuffer({ resolveWithObject: true })

test('an animated GIF thumbnailed to WebP or GIF keeps every frame, its delay and the loop; JPEG and animated=false give the first frame', async (t) => {
  const app = await build(t)
  const gif = await media('gif') // 5 frames of 640x480, 200 ms each
  for (const format of ['webp', 'gif'] as const) {
    const res = await postMedia(app, 'thumbnail', gif, 'image/gif', `?format=${format}&width=160`)
    assert.equal(res.statusCode, 200, res.body)
    assert.equal(res.headers['content-type'], `image/${format}`)
    assert.deepEqual(await frames(res.rawPayload), { format, pages: 5, width: 160, height: 120, delay: [200, 200, 200, 200, 200], loop: 0 })
    // The frames are the source's, in order: testsrc2 moves, so neighbours differ.
    assert.ok(!(await frame(res.rawPayload, 0)).data.equals((await frame(res.rawPayload, 1)).data), `${format}: the frames differ`)
  }
  for (const query of ['?format=jpeg', '?format=webp&animated=false', '?format=png', '?format=avif']) {
    const res = await postMedia(app, 'thumbnail', gif, 'image/gif', query)
    assert.equal(res.statusCode, 200, res.body)
    assert.equal((await frames(res.rawPayload)).pages, 1, `${query}: one frame`)
  }
  const still = await postMedia(app, 'thumbnail', gif, 'image/gif', '?format=webp&animated=false&width=160')
  const first = await postMedia(app, 'thumbnail', gif, 'image/gif', '?format=webp&width=160')
  assert.ok(still.rawPayload.length < first.rawPayload.length / 2, 'the still is one frame, not five')
})

test('resize: fit, gravity, smart crop and contain apply to every frame as to a still; a GIF source stays a GIF', async (t) => {
  const app = await build(t)
  const gif = await media('gif')
  const asGif = await postMedia(app, 'resize', gif, 'image/gif', '?width=100')
  assert.equal(asGif.headers['content-type'], 'image/gif')
  assert.equal((await frames(asGif.rawPayload)).pages, 5)
  for (const query of ['fit=cover', 'fit=cover&position=north', 'fit=cover&position=attention', 'fit=cover&position=entropy', 'fit=fill', 'fit=contain&background=ff0000']) {
    const res = await postMedia(app, 'resize', gif, 'image/gif', `?width=100&height=100&format=webp&${query}`)
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
    const { pages, width, height } = await frames(res.rawPayload)
    assert.deepEqual([pages, width, height], [5, 100, 100], query)
    // Each frame is what a still of that frame alone gives: the same crop, the same bars.
    for (const i of [0, 4]) {
      const alone = await sharp(gif, { page: i }).png().toBuffer()
      const stillRes = await postMedia(app, 'resize', alone, 'image/png', `?width=100&height=100&format=png&${query}`)
      const [want, got] = [await sharp(stillRes.rawPayload).ensureAlpha().raw().toBuffer(), (await frame(res.rawPayload, i)).data]
      assert.ok(meanDifference(want, got) < 12, `${query}, frame ${i}: as the still (mean difference ${meanDifference(want, got).toFixed(1)})`)
    }
  }
  const boxed = await postMedia(app, 'resize', gif, 'image/gif', '?width=100&height=100&fit=contain&background=ff0000&format=webp')
  const corner = (await frame(boxed.rawPayload, 3)).data.subarray(0, 3)
  assert.ok(meanDifference(corner, Buffer.from([255, 0, 0])) < 4, `the bars of the fourth frame are the background too: ${[...corner]}`)
})

function meanDifference (a: Buffer, b: Buffer): number {
  assert.equal(a.length, b.length)
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!)
  return sum / a.length
}

test('an animated WebP stays animated, with delays of 0 and 2^16 ms kept as the format allows; a GIF with delays of 0 and 65535 cs too', async (t) => {
  const app = await build(t)
  const webp = await webpOf(64, 48, 3, [0, 65536, 100])
  const toWebp = await postMedia(app, 'thumbnail', webp, 'image/webp', '?format=webp&width=32')
  assert.equal(toWebp.statusCode, 200, toWebp.body)
  // libvips' WebP writer makes a frame of 0 ms 100 ms, as browsers show it; the GIF writer keeps the 0.
  assert.deepEqual(await frames(toWebp.rawPayload), { format: 'webp', pages: 3, width: 32, height: 24, delay: [100, 65536, 100], loop: 0 })
  const toGif = await postMedia(app, 'thumbnail', webp, 'image/webp', '?format=gif&width=32')
  assert.equal(toGif.statusCode, 200, toGif.body)
  // GIF counts centiseconds: 65536 ms is 6554 cs.
  assert.deepEqual((await frames(toGif.rawPayload)).delay, [0, 65540, 100])
  const gif = gifOf({ width: 16, height: 16, frames: 4, delays: [0, 65535] })
  const fromGif = await postMedia(app, 'thumbnail', gif, 'image/gif', '?format=webp&width=16')
  assert.equal(fromGif.statusCode, 200, fromGif.body)
  assert.deepEqual((await frames(fromGif.rawPayload)).delay, [100, 655350, 100, 655350])
})

test('bounds from the header: MAX_ANIMATION_FRAMES and the pixel budget of all frames (413); 100 000 frames of 1x1 and 10 frames at the pixel limit are refused fast', async (t) => {
  const app = await build(t, { MAX_ANIMATION_FRAMES: '20' })
  const ok = await postMedia(app, 'thumbnail', gifOf({ width: 8, height: 8, frames: 20 }), 'image/gif', '?format=webp')
  assert.equal(ok.statusCode, 200, ok.body)
  assert.equal((await frames(ok.rawPayload)).pages, 20)
  const over = await postMedia(app, 'thumbnail', gifOf({ width: 8, height: 8, frames: 21 }), 'image/gif', '?format=webp')
  assert.equal(over.statusCode, 413, over.body)
  assert.match(over.json().message, /21 frames; at most 20/)

  const defaults = await build(t)
  for (const [name, gif] of [
    ['100 000 frames of 1x1', gifOf({ width: 1, height: 1, frames: 100_000 })],
    ['10 frames of 7000x7000 (49 MP each, under the 50 MP limit)', gifOf({ width: 7000, height: 7000, frames: 10, frameWidth: 7000, frameHeight: 7000 })]
  ] as const) {
    for (const query of ['?format=webp', '?format=jpeg', '?format=webp&animated=false']) {
      const started = Date.now()
      const res = await postMedia(defaults, 'thumbnail', gif, 'image/gif', query)
      assert.equal(res.statusCode, 413, `${name} ${query}: ${res.body}`)
      assert.equal(res.json().code, 'THUMBD_PAYLOAD_TOO_LARGE')
      assert.ok(Date.now() - started < 2000, `${name}: refused in ${Date.now() - started} ms`)
    }
  }
  assert.deepEqual(leftoverTempFiles(defaults), [])
})

test('an animated output is bounded: its frames together within the pixel budget (400 naming the size)', async (t) => {
  const app = await build(t, { MAX_INPUT_PIXELS: '10000' })
  const gif = gifOf({ width: 50, height: 50, frames: 10 }) // 25 000 px in all: within 4 x 10 000
  assert.equal((await postMedia(app, 'resize', gif, 'image/gif', '?format=webp')).statusCode, 200)
  const enlarged = await postMedia(app, 'resize', gif, 'image/gif', '?format=webp&width=100&withoutEnlargement=false')
  assert.equal(enlarged.statusCode, 400, enlarged.body)
  assert.match(enlarged.json().message, /10 frames of 100x100 px/)
  assert.equal((await postMedia(app, 'resize', gif, 'image/gif', '?format=webp&width=100&withoutEnlargement=false&animated=false')).statusCode, 200, 'one frame fits')
})

test('the still path decodes the first frame only: a GIF whose later frames are broken gives its still, and fails animated', async (t) => {
  const app = await build(t)
  const broken = gifWithBadThirdFrame()
  const still = await postMedia(app, 'thumbnail', broken, 'image/gif', '?format=webp&animated=false')
  assert.equal(still.statusCode, 200, still.body)
  const animated = await postMedia(app, 'thumbnail', broken, 'image/gif', '?format=webp')
  assert.equal(animated.statusCode, 422, animated.body)
})
