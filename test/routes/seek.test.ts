// seek=keyframe: the keyframe at or before `at`, without decoding up to the exact time. On a clip with one
// keyframe in 10 s, the keyframe at 8 s is the frame at 0 s; seek=exact decodes ~200 frames to reach 8 s.
import assert from 'node:assert/strict'
import { test } from 'node:test'
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
