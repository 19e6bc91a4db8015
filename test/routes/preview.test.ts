// POST /api/preview and the GET dialect's vta: a looping animation of frames spread over a video, as animated
// WebP or GIF, from every source form (remote videos by ranges); bad asks refused before any frame is grabbed.
import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { startOrigin } from '../../load/range-origin.ts'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { slowdown } from '../busy-machine.ts'
import { AUTH, build, leftoverTempFiles, postMedia } from '../helper.ts'
import { media } from '../media.ts'

async function animation (image: Buffer) {
  const meta = await sharp(image, { pages: -1 }).metadata()
  return { format: meta.format, pages: meta.pages ?? 1, width: meta.width, height: meta.pageHeight ?? meta.height, delay: meta.delay, loop: meta.loop }
}
const frame = (image: Buffer, i: number) => sharp(image, { page: i }).removeAlpha().raw().toBuffer()

test('a preview of an upload: 8 frames of 320 px, 500 ms each, looping WebP; GIF, cover and contain on request', async (t) => {
  const app = await build(t)
  const mp4 = await media('long-mp4') // 20 s of 640x360
  const res = await postMedia(app, 'preview', mp4, 'video/mp4')
  assert.equal(res.statusCode, 200, res.body)
  assert.equal(res.headers['content-type'], 'image/webp')
  assert.deepEqual(await animation(res.rawPayload), { format: 'webp', pages: 8, width: 320, height: 180, delay: Array(8).fill(500), loop: 0 })
  const frames = await Promise.all([0, 1, 7].map(i => frame(res.rawPayload, i)))
  assert.ok(!frames[0]!.equals(frames[1]!) && !frames[1]!.equals(frames[2]!), 'frames from different times differ')

  const gif = await postMedia(app, 'preview', mp4, 'video/mp4', '?format=gif&frames=4&width=160&delay=250')
  assert.equal(gif.headers['content-type'], 'image/gif')
  assert.deepEqual(await animation(gif.rawPayload), { format: 'gif', pages: 4, width: 160, height: 90, delay: Array(4).fill(250), loop: 0 })

  const cover = await postMedia(app, 'preview', mp4, 'video/mp4', '?width=120&height=120&fit=cover&frames=3')
  assert.deepEqual(await animation(cover.rawPayload).then(a => [a.pages, a.width, a.height]), [3, 120, 120])
  const contain = await postMedia(app, 'preview', mp4, 'video/mp4', '?width=120&height=120&fit=contain&frames=3')
  const top = await sharp(contain.rawPayload, { page: 2 }).extract({ left: 60, top: 0, width: 1, height: 1 }).removeAlpha().raw().toBuffer()
  assert.ok(Math.max(...top) < 16, `contain pads with black: ${[...top]}`)
  // A window: the frames of 10 s..12 s are closer to each other than those spread over 20 s.
  const inside = await postMedia(app, 'preview', mp4, 'video/mp4', '?frames=2&width=64&at=10&duration=0.2')
  const spread = await postMedia(app, 'preview', mp4, 'video/mp4', '?frames=2&width=64')
  const change = async (image: Buffer) => difference(await frame(image, 0), await frame(image, 1))
  assert.ok(await change(inside.rawPayload) < await change(spread.rawPayload), 'the window holds the frames together')
  assert.deepEqual(leftoverTempFiles(app), [])
})

function difference (a: Buffer, b: Buffer): number {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!)
  return sum / a.length
}

test('bad asks are 4xx before any frame is grabbed: 10 000 frames, width 10 000, over MAX_ANIMATION_FRAMES or the pixel budget, an image', async (t) => {
  const app = await build(t, { MAX_ANIMATION_FRAMES: '12' })
  const mp4 = await media('long-mp4')
  // 2 s on a quiet machine, times how much slower it is now (test/busy-machine.ts).
  const budgetMs = Math.round(2000 * await slowdown(app))
  for (const [query, status, message] of [
    ['?frames=10000', 400, /frames must be an integer from 1 to 100 \(got 10000\)/],
    ['?width=10000', 400, /width must be an integer from 16 to 1920 \(got 10000\)/],
    ['?frames=0', 400, /frames must be an integer from 1 to 100 \(got 0\)/],
    ['?delay=0', 400, /delay must be an integer from 20 to 10000 \(got 0\)/],
    ['?frames=13', 400, /13 frames; at most 12 \(MAX_ANIMATION_FRAMES\)/],
    ['?frames=12&width=1920&height=1920&fit=cover', 400, /a preview holds at most/],
    ['?format=jpeg', 400, /format must be one of webp, gif \(got "jpeg"\)/]
  ] as const) {
    const started = Date.now()
    const res = await postMedia(app, 'preview', mp4, 'video/mp4', query)
    assert.equal(res.statusCode, status, `${query}: ${res.body}`)
    assert.equal(res.json().code, 'THUMBD_BAD_OPTIONS')
    assert.match(res.json().message, message, query)
    assert.ok(Date.now() - started < budgetMs, `${query}: refused in ${Date.now() - started} ms (budget ${budgetMs} ms)`)
  }
  const image = await postMedia(app, 'preview', await media('gif'), 'image/gif')
  assert.equal(image.statusCode, 415, image.body)
  assert.deepEqual(leftoverTempFiles(app), [])
  assert.deepEqual(decoderChildren(), [])
})

const KEY = Buffer.alloc(32, 3)
const SALT = Buffer.alloc(16, 5)
const sign = (path: string) => signedUrlPath(path, KEY, SALT)

test('a preview of a remote video by ranges (POST and GET vta), and a GIF by GET: animated, or still with da:1', async (t) => {
  const origin = await startOrigin({ 'clip.mp4': await media('long-mp4'), 'anim.gif': await media('gif') })
  t.after(origin.close)
  const app = await build(t, { URL_SIGNING_KEYS: KEY.toString('hex'), URL_SIGNING_SALTS: SALT.toString('hex'), ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: origin.url(''), RANGE_READ_MIN_BYTES: '0' })

  const posted = await app.inject({ method: 'POST', url: '/api/preview?frames=4&width=160', headers: AUTH, payload: { url: origin.url('clip.mp4') } })
  assert.equal(posted.statusCode, 200, posted.body)
  assert.deepEqual(await animation(posted.rawPayload).then(a => [a.pages, a.width]), [4, 160])
  assert.ok(origin.ranges().slice(1).some(r => /^bytes=\d+-\d+$/.test(r)), 'the video was read by ranges')

  // imgproxy Pro's vta: a negative step spreads the frames over the video; @gif picks the format.
  const spread = await app.inject({ url: sign(`/vta:-1:200:6:160:0/plain/${origin.url('clip.mp4')}@gif`) })
  assert.equal(spread.statusCode, 200, spread.body)
  assert.equal(spread.headers['content-type'], 'image/gif')
  assert.deepEqual(await animation(spread.rawPayload), { format: 'gif', pages: 6, width: 160, height: 90, delay: Array(6).fill(200), loop: 0 })
  // A step of 8 s from vts:2: frames at 2, 10, 18, then past the end; trim drops those, fill crops to the box.
  const stepped = await app.inject({ url: sign(`/vts:2/vta:8:100:5:96:96:0:1:1/plain/${origin.url('clip.mp4')}`) })
  assert.equal(stepped.statusCode, 200, stepped.body)
  assert.deepEqual(await animation(stepped.rawPayload).then(a => [a.format, a.pages, a.width, a.height]), ['webp', 3, 96, 96])
  const focus = await app.inject({ url: sign(`/vta:1:100:4:96:96:0:0:1:0.3:0.5/plain/${origin.url('clip.mp4')}`) })
  assert.equal(focus.statusCode, 400)
  assert.match(focus.json().message, /focus_x "0.3" is not supported/)
  const tooMany = await app.inject({ url: sign(`/vta:1:100:10000:96:96/plain/${origin.url('clip.mp4')}`) })
  assert.equal(tooMany.statusCode, 400)
  assert.match(tooMany.json().message, /frames "10000" is not a whole number from 1 to 100/)
  assert.equal((await app.inject({ url: sign(`/vta:1:100:4:10000:0/plain/${origin.url('clip.mp4')}`) })).statusCode, 400)
  assert.equal((await app.inject({ url: sign(`/vta:1:100:4:96:0/plain/${origin.url('clip.mp4')}@jpg`) })).statusCode, 400)

  // A GIF source with no format asked answers a GIF (as imgproxy), animated; da:1 (disable_animation) its first frame.
  const gif = await app.inject({ url: sign(`/rs:fit:200:0/plain/${origin.url('anim.gif')}`) })
  assert.equal(gif.headers['content-type'], 'image/gif')
  assert.deepEqual(await animation(gif.rawPayload).then(a => [a.pages, a.width]), [5, 200])
  const webp = await app.inject({ url: sign(`/rs:fill:100:100/g:sm/plain/${origin.url('anim.gif')}@webp`) })
  assert.deepEqual(await animation(webp.rawPayload).then(a => [a.format, a.pages, a.width, a.height]), ['webp', 5, 100, 100])
  const still = await app.inject({ url: sign(`/rs:fit:200:0/da:1/plain/${origin.url('anim.gif')}`) })
  assert.equal(still.headers['content-type'], 'image/gif')
  assert.equal((await animation(still.rawPayload)).pages, 1)
  assert.notEqual(still.headers.etag, gif.headers.etag)
  assert.deepEqual(leftoverTempFiles(app), [])
})
