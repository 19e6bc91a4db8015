// seek=keyframe: the keyframe at or before `at`, without decoding up to the exact time. On a clip with one
// keyframe in 10 s, the keyframe at 8 s is the frame at 0 s; seek=exact decodes ~200 frames to reach 8 s.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { build, postMedia, thumbnailOf } from '../helper.ts'
import { media } from '../media.ts'

test('seek=keyframe gives the keyframe at or before `at`; exact stays the default', async (t) => {
  const app = await build(t)
  const clip = await media('slow-seek')
  const thumbnail = (query: string) => thumbnailOf(app, clip, 'video/mp4', query)
  const [keyframeAt8, exactAt0, exactAt8, defaultAt8] = [await thumbnail('?at=8&seek=keyframe'), await thumbnail('?at=0'), await thumbnail('?at=8&seek=exact'), await thumbnail('?at=8')]
  assert.ok(keyframeAt8.equals(exactAt0), 'the only keyframe before 8 s is the first frame')
  assert.ok(!exactAt8.equals(exactAt0), 'the exact frame at 8 s is another picture')
  assert.ok(defaultAt8.equals(exactAt8), 'exact is the default')
  const bad = await postMedia(app, 'thumbnail', clip, 'video/mp4', '?seek=nearest')
  assert.equal(bad.statusCode, 400)
})

test('HEVC Main 10: seek=keyframe and storyboard tiles 2 s or more apart give the keyframe at or before their time', async (t) => {
  const app = await build(t)
  const clip = await media('slow-seek-hevc')
  const thumbnail = (query: string) => thumbnailOf(app, clip, 'video/mp4', query)
  const [keyframeAt8, exactAt0, exactAt8] = [await thumbnail('?at=8&seek=keyframe'), await thumbnail('?at=0'), await thumbnail('?at=8&seek=exact')]
  assert.ok(keyframeAt8.equals(exactAt0), 'the only keyframe before 8 s is the first frame')
  assert.ok(!exactAt8.equals(exactAt0), 'the exact frame at 8 s is another picture')
  // Tiles of one row, 64 px wide: 4 tiles 2.5 s apart take keyframes (one-thread lanes), 6 tiles 1.67 s apart exact frames.
  const tiles = async (count: number) => {
    const board = await postMedia(app, 'storyboard', clip, 'video/mp4', `?count=${count}&columns=${count}&width=64`)
    assert.equal(board.statusCode, 200, board.body)
    const sprite = Buffer.from(board.json().sprite, 'base64')
    const { height } = await sharp(sprite).metadata()
    return Promise.all([...Array(count).keys()].map(i => sharp(sprite).extract({ left: i * 64, top: 0, width: 64, height: height! }).raw().toBuffer()))
  }
  // Mean difference per sample: JPEG blurs a tile's edges into its neighbours', so alike tiles differ a little.
  const difference = (a: Buffer, b: Buffer) => a.reduce((sum, v, j) => sum + Math.abs(v - b[j]!), 0) / a.length
  const [keyframes, exact] = [await tiles(4), await tiles(6)]
  for (const i of [1, 2, 3]) assert.ok(difference(keyframes[i]!, keyframes[0]!) < 3, `tile ${i} is the keyframe at 0 s`)
  assert.ok(difference(exact[5]!, exact[0]!) > 10, 'exact tiles are other pictures')
})
