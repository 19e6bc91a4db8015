// Previews of videos whose keyframes are further apart than their frames (issue 44): x264's default GOP puts a
// keyframe every 250 frames, 8.3 s at 30 fps, so the keyframe seeks of an 8-frame preview over 30 s landed
// on 4 keyframes and the animation had 4 frames. Each frame must be its own, by POST and by the GET vta: form.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { startOrigin } from '../../load/range-origin.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { repeats } from '../../workers/video/preview.ts'
import { AUTH, build, leftoverTempFiles } from '../helper.ts'
import { media, mediaPath } from '../media.ts'

const run = promisify(execFile)
const KEY = Buffer.alloc(32, 3)
const SALT = Buffer.alloc(16, 5)

/** Every page of an animation, as raw RGB; the encoder merges equal neighbours, so their count says a lot already. */
async function pages (image: Buffer): Promise<Buffer[]> {
  const { pages: count = 1 } = await sharp(image, { pages: -1 }).metadata()
  return Promise.all(Array.from({ length: count }, (_, i) => sharp(image, { page: i }).removeAlpha().raw().toBuffer()))
}

function assertDistinct (frames: Buffer[], what: string) {
  assert.equal(frames.length, 8, `${what}: 8 frames`)
  for (let i = 0; i < frames.length; i++) {
    for (let j = i + 1; j < frames.length; j++) assert.ok(!frames[i]!.equals(frames[j]!), `${what}: frames ${i} and ${j} differ`)
  }
}

test('8 frames of a 30 s video with a keyframe every 8.3 s are 8 distinct frames, POST /api/preview and GET vta:', { timeout: 240_000 }, async (t) => {
  // The clip is what the issue describes: 4 keyframes in 30 s.
  const { stdout } = await run('ffprobe', ['-v', 'error', '-select_streams', 'v:0', '-skip_frame', 'nokey', '-show_entries', 'frame=pts_time', '-of', 'json', await mediaPath('long-gop-mp4')])
  const keyframes = (JSON.parse(stdout) as { frames: Array<{ pts_time: string }> }).frames.map(f => Math.round(Number(f.pts_time) * 10) / 10)
  assert.deepEqual(keyframes, [0, 8.3, 16.7, 25])

  const clip = await media('long-gop-mp4')
  const origin = await startOrigin({ 'clip.mp4': clip })
  t.after(origin.close)
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: origin.url(''), RANGE_READ_MIN_BYTES: '0' })

  const posted = await app.inject({ method: 'POST', url: '/api/preview', headers: { ...AUTH, 'content-type': 'video/mp4' }, payload: clip })
  assert.equal(posted.statusCode, 200, posted.body)
  assertDistinct(await pages(posted.rawPayload), 'POST /api/preview')

  // The URL: frames spread over the video (step -1), 250 ms each, 8 frames of 320 px; read by ranges.
  const got = await app.inject({ url: signedUrlPath(`/vta:-1:250:8:320:0/plain/${origin.url('clip.mp4')}`, KEY, SALT) })
  assert.equal(got.statusCode, 200, got.body)
  assertDistinct(await pages(got.rawPayload), 'GET vta:')
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('a video with one keyframe in 20 s: the frames past 250 frames from it (10 s at 25 fps) stop there, the cost bounded', { timeout: 240_000 }, async (t) => {
  const app = await build(t)
  const res = await app.inject({ method: 'POST', url: '/api/preview?width=160', headers: { ...AUTH, 'content-type': 'video/mp4' }, payload: await media('one-keyframe-mp4') })
  assert.equal(res.statusCode, 200, res.body)
  // Frames asked at 1.25, 3.75 ... 18.75 s: the keyframe, the exact frames at 3.75, 6.25 and 8.75 s, then four
  // times the 250th frame (10 s), which the encoder merges into one: 5 frames.
  const frames = await pages(res.rawPayload)
  assert.equal(frames.length, 5)
})

test('a repeat is a keyframe seek that landed where an earlier one did, asked at another time; equal pictures are not compared', () => {
  assert.deepEqual(repeats([0, 0, 8.333, 8.333, 8.333], [1, 2, 9, 10, 11]), [1, 3, 4])
  // A step past the end asks for the last moment again: that frame is meant to repeat.
  assert.deepEqual(repeats([0, 2, 2], [1, 2, 2]), [])
  // Where ffmpeg said nothing, nothing is taken again.
  assert.deepEqual(repeats([undefined, undefined], [1, 2]), [])
  assert.deepEqual(repeats([0, 2], [1, 2]), [])
})
