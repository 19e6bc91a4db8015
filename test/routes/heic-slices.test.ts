// HEVC pictures in several slices (libx265's slices=N through ffmpeg, in a HEIF written box by box): libde265
// decodes every slice segment it is given, so heif-decode follows each one's address (native/hevc-slice.c): a
// real multi-slice picture decodes, a slice repeated within its picture counts as another picture decoded, and a
// slice whose header does not parse is refused.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, test } from 'node:test'
import sharp from 'sharp'
import { build, postMedia } from '../helper.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { makeHeic, makeHevcStream, refusedHeic } from '../heic-media.ts'
import { tempFolder } from '../temp-folder.ts'
import { gridHeif, lengthPrefixed, tileOf, tileOfStream, type Tile } from '../heif-boxes.ts'

const dir = tempFolder('thumbd-heic-slices-', { after })

after(() => assert.deepEqual(decoderChildren(), [], 'no decoder left running'))

/** A 512x512 picture in 4 slices (libx265 slices=4: 8 rows of 64x64 blocks, 2 each); its PNG is dir/like.png. */
async function fourSlices (): Promise<Tile & { slices: Buffer[] }> {
  const like = tileOf(await makeHeic(dir, 'like', '512x512'))
  const sliced = tileOfStream(await makeHevcStream(dir, 'sliced', '512x512', 'slices=4'), like, 512, 512)
  assert.equal(sliced.slices.length, 4, 'x265 wrote 4 slice segments')
  return sliced
}

test('a picture in 4 slices decodes whole; with one of its slices repeated 400 times: 413 before libde265 decodes them again', async (t) => {
  const app = await build(t)
  const sliced = await fourSlices()
  const res = await postMedia(app, 'thumbnail', gridHeif(sliced, []), 'image/heic', '?format=png&width=512')
  assert.equal(res.statusCode, 200, res.body)
  // Every slice's rows, not the first one's only: the picture x265 was given.
  const [got, source] = await Promise.all([sharp(res.rawPayload).removeAlpha().raw().toBuffer(), sharp(join(dir, 'like.png')).removeAlpha().raw().toBuffer()])
  const diff = got.reduce((sum, v, i) => sum + Math.abs(v - source[i]!), 0) / got.length
  assert.ok(diff < 16, `mean difference ${diff.toFixed(1)} from the source`)
  // libde265 decodes each copy of the second slice again, from its address on (the budget counted only pictures'
  // first slices: a 200, 18 x the picture's decoding time). Each copy now counts as a picture: 4 x (512x512 +
  // 512x512) allows 8.
  const [first, second, ...rest] = sliced.slices
  const repeated = { ...sliced, data: lengthPrefixed([first!, ...Array(400).fill(second), ...rest]) }
  await refusedHeic(app, 'a slice repeated 400 times', gridHeif(repeated, []), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
})

test('a slice segment naming a PPS that was never given: 422 (libde265 would pass over it)', async (t) => {
  const app = await build(t)
  const sliced = await fourSlices()
  // An IDR slice header (type 20): first_slice_segment_in_pic_flag 1, no_output_of_prior_pics_flag 0,
  // slice_pic_parameter_set_id 5 (ue 00110), then a stop bit. The stream's one PPS is id 0.
  const stray = Buffer.from([20 << 1, 1, 0b10001101, 0x80])
  const body = gridHeif({ ...sliced, data: lengthPrefixed([...sliced.slices, stray]) }, [])
  await refusedHeic(app, 'a slice naming PPS 5', body, 422, 'THUMBD_MEDIA_UNREADABLE')
  // A header cut short before its PPS id.
  await refusedHeic(app, 'a slice header cut short', gridHeif({ ...sliced, data: lengthPrefixed([...sliced.slices, Buffer.from([20 << 1, 1, 0b10000000])]) }, []), 422, 'THUMBD_MEDIA_UNREADABLE')
})
