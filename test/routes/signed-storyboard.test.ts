// Storyboards by signed GET URL (video_thumbnail_tile): the sprite as an image, and with .vtt the WebVTT whose
// cues point at that sprite's own signed URL. The video is read by ranges from a loopback origin, as a CDN's
// miss would have thumbd do for a large remote video.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import { startOrigin } from '../../load/range-origin.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { build, decoded } from '../helper.ts'
import { media } from '../media.ts'

const KEY = Buffer.from('943b421c9eb07c830af81030552c86009268de4e532ba2ee2eab8247c6da0881', 'hex')
const SALT = Buffer.from('520f986b998545b4785e0defbc4f3c1203f22de2374a3d53cb7a7fe9fea309c5', 'hex')
const sign = (path: string) => signedUrlPath(path, KEY, SALT)

/** A second pair, as during a key rotation. */
const [KEY2, SALT2] = [Buffer.alloc(32, 7), Buffer.alloc(16, 9)]

async function setup (t: import('node:test').TestContext, env: Record<string, string> = {}) {
  const origin = await startOrigin({ 'clip.mp4': await media('long-mp4'), 'photo.jpg': await media('jpeg') })
  t.after(origin.close)
  const app = await build(t, {
    URL_SIGNING_KEYS: `${KEY.toString('hex')},${KEY2.toString('hex')}`,
    URL_SIGNING_SALTS: `${SALT.toString('hex')},${SALT2.toString('hex')}`,
    ALLOW_PRIVATE_SOURCES: 'true',
    ALLOWED_SOURCES: origin.url(''),
    RANGE_READ_MIN_BYTES: '0',
    ...env
  })
  return { app, origin }
}

/** The sprite URL of the first cue of a .vtt reply. */
const firstCueUrl = (vtt: string) => vtt.split('\n\n')[1]!.split('\n')[1]!.split('#')[0]!

test('a storyboard by GET: the sprite, and its WebVTT whose every cue points inside the sprite at its own signed URL', async (t) => {
  const { app, origin } = await setup(t)
  const options = '/vtt:0:5:2:64:0'
  const spritePath = `${options}/plain/${origin.url('clip.mp4')}@jpg`
  const sprite = await app.inject({ url: sign(spritePath) })
  assert.equal(sprite.statusCode, 200, sprite.body)
  assert.equal(sprite.headers['content-type'], 'image/jpeg')
  const { width, height } = await decoded(sprite.rawPayload)
  assert.equal(width, 5 * 64)
  assert.equal(height, 2 * 36, 'two rows of 64x36 tiles (16:9)')
  assert.ok(origin.ranges().slice(1).every(r => /^bytes=\d+-\d+$/.test(r)), 'the video was read by ranges')

  const vtt = await app.inject({ url: sign(`${options}/plain/${origin.url('clip.mp4')}@vtt`) })
  assert.equal(vtt.statusCode, 200, vtt.body)
  assert.equal(vtt.headers['content-type'], 'text/vtt; charset=utf-8')
  assert.ok(vtt.headers.etag !== undefined && vtt.headers.etag !== sprite.headers.etag)
  const cues = vtt.body.split('\n\n').slice(1).map(block => block.trim().split('\n'))
  assert.equal(cues.length, 10)
  const seconds = (stamp: string) => stamp.split(':').reduce((sum, part) => sum * 60 + Number(part), 0)
  let previousEnd = 0
  for (const [times, target] of cues) {
    const [start, end] = times!.split(' --> ').map(seconds)
    assert.ok(start === previousEnd && end! > start!, `${times} follows on`)
    previousEnd = end!
    const [url, fragment] = target!.split('#xywh=')
    assert.equal(url, sign(spritePath), 'the cue points at the sprite\'s own signed URL')
    const [x, y, w, h] = fragment!.split(',').map(Number)
    assert.ok(x! + w! <= width! && y! + h! <= height! && w === 64 && h === 36, `${fragment} inside the sprite`)
  }
  assert.equal(previousEnd, 20, 'the cues cover the whole video')
  const fromCue = await app.inject({ url: cues[0]![1]!.split('#')[0]! })
  assert.ok(fromCue.rawPayload.equals(sprite.rawPayload), 'the cue\'s URL gives the same sprite')
})

test('a storyboard by GET at a fixed step; refusals: .vtt without a storyboard, a fixed tile height, a PNG sprite, too wide a sprite, an image source', async (t) => {
  const { app, origin } = await setup(t)
  const stepped = await app.inject({ url: sign(`/vtt:4:5:1:64/plain/${origin.url('clip.mp4')}@webp`) })
  assert.equal(stepped.statusCode, 200, stepped.body)
  assert.equal(stepped.headers['content-type'], 'image/webp')
  assert.equal((await decoded(stepped.rawPayload)).width, 5 * 64, 'a tile every 4 s of 20 s')
  for (const [path, status] of [
    [`/w:100/plain/${origin.url('clip.mp4')}@vtt`, 400],
    [`/vtt:0:5:2:64:50/plain/${origin.url('clip.mp4')}@jpg`, 400],
    [`/vtt:0:5:2:64/plain/${origin.url('clip.mp4')}@png`, 400],
    [`/vtt:0:5:50:64/plain/${origin.url('clip.mp4')}@jpg`, 400],
    // 50 tiles of 640 px in a row: a sprite 32000 px wide, refused from the URL alone.
    [`/vtt:0:50:1:640/plain/${origin.url('clip.mp4')}@jpg`, 400],
    [`/vtt:0:5:2:64/plain/${origin.url('photo.jpg')}@jpg`, 415]
  ] as const) {
    const res = await app.inject({ url: sign(path) })
    assert.equal(res.statusCode, status, `${path}: ${res.body}`)
  }
})

test('a .vtt reply signs its sprite URL as its own URL was signed: by the same pair, unsigned when unsigned, over the path as signatures read it', async (t) => {
  const { app, origin } = await setup(t, { ALLOW_UNSIGNED_URLS: 'true' })
  const path = `/vtt:0:2:1:64/plain/${origin.url('clip.mp4')}`
  const bySecond = await app.inject({ url: signedUrlPath(`${path}@vtt`, KEY2, SALT2) })
  assert.equal(bySecond.statusCode, 200, bySecond.body)
  assert.equal(firstCueUrl(bySecond.body), signedUrlPath(`${path}@jpg`, KEY2, SALT2), 'signed by the pair that signed the .vtt')
  const unsigned = await app.inject({ url: `/i/insecure${path}@vtt` })
  assert.equal(firstCueUrl(unsigned.body), `/i/insecure${path}@jpg`, 'an unsigned request gets no signature')
  // A proxy's rewrite (%3A for ':') is undone before signing: the sprite URL it hands out is one thumbd accepts.
  const rewritten = path.replace('vtt:0:2:1:64', 'vtt%3A0%3A2%3A1%3A64')
  const vtt = await app.inject({ url: `${sign(`${path}@vtt`).slice(0, 46)}${rewritten}@vtt` })
  assert.equal(vtt.statusCode, 200, vtt.body)
  assert.equal((await app.inject({ url: firstCueUrl(vtt.body) })).statusCode, 200, 'the sprite URL in the cues is accepted')
})
