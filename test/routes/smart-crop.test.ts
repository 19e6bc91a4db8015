// Smart crops must find the subject: a picture with one detailed object near its right edge, on a flat
// background, cropped to a square. A centre crop (what an ignored position gives) shows only background.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { build, postMedia } from '../helper.ts'
import { media } from '../media.ts'

/** 600x200 of flat grey with a 150 px square of the colourful test pattern at x = 430..580. */
async function offCentreSubject (): Promise<Buffer> {
  const subject = await sharp(await media('pic-testsrc2')).resize(150, 150).png().toBuffer()
  return sharp({ create: { width: 600, height: 200, channels: 3, background: { r: 128, g: 128, b: 128 } } })
    .composite([{ input: subject, left: 430, top: 25 }])
    .png()
    .toBuffer()
}

/** How much the crop varies: near 0 for flat background, large where the pattern is. */
async function detail (image: Buffer): Promise<number> {
  const { channels } = await sharp(image).stats()
  return Math.max(...channels.slice(0, 3).map(ch => ch.stdev))
}

test('attention and entropy crops keep an off-centre subject that a centre crop cuts away', async (t) => {
  const app = await build(t)
  const picture = await offCentreSubject()
  const crop = async (position: string) => {
    const res = await postMedia(app, 'resize', picture, 'image/png', `?width=200&height=200&fit=cover&position=${position}&format=png`)
    assert.equal(res.statusCode, 200, `${position}: ${res.body}`)
    const { width, height } = await sharp(res.rawPayload).metadata()
    assert.deepEqual([width, height], [200, 200], position)
    return res.rawPayload
  }
  assert.ok(await detail(await crop('center')) < 5, 'the centre crop is background only')
  for (const position of ['attention', 'entropy']) {
    const found = await detail(await crop(position))
    assert.ok(found > 30, `the ${position} crop holds the subject (detail ${found.toFixed(1)})`)
  }
})
