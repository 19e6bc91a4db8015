// An animated WebP whose EXIF says to turn or flip it (orientations 2-8, as a phone's or an editor's export may
// write): every frame turned as a still of that frame is, in their order, with their delays. sharp turns the
// frames as one tall image, which reversed their order for 3, 4 (upside down) and could not turn 5-8 at all;
// past the raw pass' bound (MAX_INPUT_PIXELS over all frames) the still first frame is kept, turned.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { build, leftoverTempFiles, postMedia } from '../helper.ts'

const [WIDTH, HEIGHT, COLOURS] = [40, 20, [[255, 0, 0], [0, 255, 0], [0, 0, 255]]]

/** Frame i: a flat colour with a white 8x4 block in its stored top-left corner, so both the turn and the order show. */
function framePixels (i: number): Buffer {
  const raw = Buffer.alloc(WIDTH * HEIGHT * 3)
  for (let y = 0; y < HEIGHT; y++) for (let x = 0; x < WIDTH; x++) raw.set(x < 8 && y < 4 ? [255, 255, 255] : COLOURS[i]!, (y * WIDTH + x) * 3)
  return raw
}

/** The animated WebP of the three frames (100, 200, 300 ms), tagged with `orientation`. */
function animation (orientation: number): Promise<Buffer> {
  const raw = Buffer.concat(COLOURS.map((_, i) => framePixels(i)))
  return sharp(raw, { raw: { width: WIDTH, height: HEIGHT * COLOURS.length, channels: 3, pageHeight: HEIGHT } })
    .webp({ lossless: true, delay: [100, 200, 300], loop: 0 }).withMetadata({ orientation }).toBuffer()
}

/** What a still of frame i tagged with `orientation` shows once sharp has turned it: the reference. */
async function stillTurned (i: number, orientation: number) {
  const still = await sharp(framePixels(i), { raw: { width: WIDTH, height: HEIGHT, channels: 3 } }).png().withMetadata({ orientation }).toBuffer()
  return sharp(still).rotate().raw().toBuffer({ resolveWithObject: true })
}

/** Mean absolute difference of two raw RGB images of the same size. */
function meanDifference (a: Buffer, b: Buffer): number {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!)
  return sum / a.length
}

async function assertFramesTurned (output: Buffer, orientation: number, pages: number) {
  const meta = await sharp(output, { pages: -1 }).metadata()
  assert.equal(meta.pages ?? 1, pages, `orientation ${orientation}: frames`)
  if (pages > 1) assert.deepEqual(meta.delay, [100, 200, 300], `orientation ${orientation}: delays in order`)
  for (let i = 0; i < pages; i++) {
    const expected = await stillTurned(i, orientation)
    const got = await sharp(output, { page: i }).removeAlpha().raw().toBuffer({ resolveWithObject: true })
    assert.deepEqual([got.info.width, got.info.height], [expected.info.width, expected.info.height], `orientation ${orientation}, frame ${i}: size`)
    const difference = meanDifference(got.data, expected.data)
    assert.ok(difference < 6, `orientation ${orientation}, frame ${i}: mean difference ${difference.toFixed(1)} from the still turned by sharp`)
  }
}

test('an animated WebP tagged with each EXIF orientation: every frame turned as its still, in order, with its delay', async (t) => {
  const app = await build(t)
  for (let orientation = 1; orientation <= 8; orientation++) {
    const res = await postMedia(app, 'resize', await animation(orientation), 'image/webp', '?format=gif')
    assert.equal(res.statusCode, 200, res.body)
    await assertFramesTurned(res.rawPayload, orientation, 3)
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('past MAX_INPUT_PIXELS over all its frames, an animation the EXIF turns keeps its first frame, turned', async (t) => {
  // 3 frames of 40x20 are 2400 px: over 2000, while each frame alone is within it.
  const app = await build(t, { MAX_INPUT_PIXELS: '2000' })
  for (const orientation of [3, 6]) {
    const res = await postMedia(app, 'resize', await animation(orientation), 'image/webp', '?format=gif')
    assert.equal(res.statusCode, 200, res.body)
    await assertFramesTurned(res.rawPayload, orientation, 1)
  }
})
