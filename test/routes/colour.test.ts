// Colour profiles: a Display P3 photo (as phones take them) must come out with the colours it had, and an
// sRGB profile must cost nothing (workers/image/image.ts colourHandling).
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { build, postMedia } from '../helper.ts'

/** A flat, saturated green as an sRGB viewer should show it. */
const GREEN = { r: 20, g: 200, b: 40 }

/** The same colour stored the way a P3 (or sRGB) camera file stores it: pixels in that space, tagged with its profile. */
const photo = (profile: 'p3' | 'srgb') =>
  sharp({ create: { width: 1200, height: 900, channels: 3, background: GREEN } }).withIccProfile(profile).jpeg({ quality: 95 }).toBuffer()

/** The colour as a colour-managed viewer shows it: a pipeline converts through the embedded profile (stats() would not). */
async function shown (image: Buffer) {
  const [r, g, b] = await sharp(image).resize(1, 1).removeAlpha().raw().toBuffer()
  return { r: r!, g: g!, b: b! }
}

const near = (a: typeof GREEN, b: typeof GREEN, tolerance: number) =>
  Math.abs(a.r - b.r) <= tolerance && Math.abs(a.g - b.g) <= tolerance && Math.abs(a.b - b.b) <= tolerance

test('a Display P3 photo keeps its colours; its pixels really differ from sRGB (else this proves nothing)', async (t) => {
  const app = await build(t)
  const p3 = await photo('p3')
  const raw = await sharp(p3, { ignoreIcc: true }).stats()
  const asIfSrgb = { r: raw.channels[0]!.mean, g: raw.channels[1]!.mean, b: raw.channels[2]!.mean }
  assert.ok(!near(asIfSrgb, GREEN, 30), `P3 pixels read as sRGB look different: ${JSON.stringify(asIfSrgb)}`)
  for (const format of ['jpeg', 'webp', 'png', 'avif']) {
    const res = await postMedia(app, 'thumbnail', p3, 'image/jpeg', `?format=${format}`)
    assert.equal(res.statusCode, 200, res.body)
    const colour = await shown(res.rawPayload)
    assert.ok(near(colour, GREEN, 10), `${format}: shown as ${JSON.stringify(colour)}, want ${JSON.stringify(GREEN)}`)
  }
})

test('an sRGB profile is dropped without a conversion: no profile on the output, the same pixels as untagged', async (t) => {
  const app = await build(t)
  const tagged = await postMedia(app, 'thumbnail', await photo('srgb'), 'image/jpeg')
  assert.equal(tagged.statusCode, 200, tagged.body)
  assert.equal((await sharp(tagged.rawPayload).metadata()).icc, undefined, 'no profile: the output is plain sRGB')
  assert.ok(near(await shown(tagged.rawPayload), GREEN, 4))
})
