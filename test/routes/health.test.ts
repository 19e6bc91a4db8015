import assert from 'node:assert/strict'
import { test } from 'node:test'
import { build, postMedia } from '../helper.ts'
import { media } from '../media.ts'

test('GET /health reports pool and event loop, no key needed, and not the ffmpeg build nor the sandbox: /metrics does', async (t) => {
  const app = await build(t)
  const res = await app.inject({ url: '/health' })
  assert.equal(res.statusCode, 200)
  const body = res.json()
  assert.equal(body.status, 'ok')
  assert.deepEqual(body.problems, [])
  assert.equal(body.pool.mode, 'pool')
  // One thread stays warm at idle; the pool grows to POOL_THREADS with the load.
  assert.equal(body.pool.threads, 1)
  assert.equal(typeof body.pool.queued, 'number')
  assert.equal(typeof body.eventLoopDelayMs.p99, 'number')
  // What an attacker would map this host's decoder flaws by stays off the open /health.
  assert.deepEqual(Object.keys(body).filter(key => /ffmpeg|sandbox|version/i.test(key)), [])
  assert.doesNotMatch(res.body, /landlock|seccomp|\d+\.\d+\.\d+/i)
  assert.match((await app.inject({ url: '/metrics' })).body, /^thumbd_tools_info\{ffmpeg="[^"]*\d+\.\d+[^"]*",sandbox="[^"]+"\} 1$/m)
  const live = await app.inject({ url: '/health/live' })
  assert.deepEqual([live.statusCode, live.json()], [200, { status: 'ok' }])
  const jpeg = await media('jpeg-large')
  const replies = await Promise.all(Array.from({ length: 6 }, () => postMedia(app, 'thumbnail', jpeg, 'image/jpeg')))
  assert.deepEqual(replies.map(r => r.statusCode), Array(6).fill(200))
  assert.equal((await app.inject({ url: '/health' })).json().pool.threads, 2)
})

test('without ffmpeg: images work, videos get 503 VIDEO_UNAVAILABLE, /health is 503 and names it, /health/live stays 200', async (t) => {
  const app = await build(t, { FFMPEG_PATH: '/nonexistent/ffmpeg', FFPROBE_PATH: '/nonexistent/ffprobe' })
  const health = await app.inject({ url: '/health' })
  assert.equal(health.statusCode, 503)
  assert.match(health.json().problems.join(' '), /ffmpeg not found/)
  assert.equal((await app.inject({ url: '/health/live' })).statusCode, 200)

  const image = await postMedia(app, 'thumbnail', await media('jpeg'), 'image/jpeg')
  assert.equal(image.statusCode, 200)
  const video = await postMedia(app, 'thumbnail', await media('mp4-h264'), 'video/mp4')
  assert.equal(video.statusCode, 503)
  assert.equal(video.json().code, 'THUMBD_VIDEO_UNAVAILABLE')
  assert.ok(video.headers['retry-after'])
})

test('while draining, /health is 503 and new jobs get 503 DRAINING', async (t) => {
  const app = await build(t)
  assert.equal(await app.drain(1000), true)
  assert.equal((await app.inject({ url: '/health' })).statusCode, 503)
  assert.equal((await app.inject({ url: '/health/live' })).statusCode, 200)
  const res = await postMedia(app, 'thumbnail', await media('jpeg'), 'image/jpeg')
  assert.equal(res.statusCode, 503)
  assert.equal(res.json().code, 'THUMBD_DRAINING')
})
