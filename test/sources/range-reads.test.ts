// Remote videos read by range requests (src/sources/range-reader.ts), end to end: real ffmpeg in its sandbox
// reads through the loopback reader from a loopback origin that counts what it sends and, in the hostile
// cases, misbehaves from its second answer on (the first one is what makes the source remote).
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import type { FastifyInstance } from 'fastify'
import { slowdown } from '../busy-machine.ts'
import { decoderChildren, waitFor } from '../faults/helpers.ts'
import { AUTH, build, decoded, leftoverTempFiles, TEST_TMP } from '../helper.ts'
import { media, mediaPath } from '../media.ts'
import { startOrigin, type OriginOptions } from '../../load/range-origin.ts'

const run = promisify(execFile)
/** Above the 1 MiB threshold set below, so every `long-*` file is read remotely. */
const REMOTE = { ALLOW_PRIVATE_SOURCES: 'true', RANGE_READ_MIN_BYTES: String(2 ** 20) }
/** The app's env for these origins: loopback ports are only reachable where ALLOWED_SOURCES names them. */
const remoteFrom = (...origins: Array<{ url: (name: string) => string }>) => ({ ...REMOTE, ALLOWED_SOURCES: origins.map(o => o.url('')).join(',') })

async function fromUrl (app: FastifyInstance, route: string, url: string, options: Record<string, unknown> = {}) {
  return app.inject({ method: 'POST', url: `/api/${route}`, headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url, ...options } })
}

/** Bytes asked for by the bounded ranges (every request after the first, open-ended one). */
const rangedBytes = (ranges: string[]) => ranges.slice(1).reduce((sum, r) => {
  const [start, end] = r.slice('bytes='.length).split('-').map(Number)
  return sum + end! - start! + 1
}, 0)

async function nothingLeft (app: FastifyInstance) {
  assert.deepEqual(leftoverTempFiles(app), [], 'no temp file')
  await waitFor(() => decoderChildren().length === 0, 5000, 'no decoder left')
}

for (const [name, format] of [['long-mp4', 'MP4, index at the end'], ['long-mkv', 'Matroska, cues at the end']] as const) {
  test(`${format}: the poster frame at 50 % comes from a fraction of the file by ranges, the same as from the whole file`, async (t) => {
    const bytes = await media(name)
    const origin = await startOrigin({ video: bytes })
    t.after(origin.close)
    const app = await build(t, remoteFrom(origin))
    const remote = await fromUrl(app, 'thumbnail', origin.url('video'), { at: '50%' })
    assert.equal(remote.statusCode, 200, remote.body)
    const ranges = origin.ranges()
    // The first answer is dropped once sniffed: what the origin had sent by then is the kernel's buffers (the
    // bench measures that on a 2 GB file). Then only bounded ranges, a small part of the file.
    assert.equal(ranges[0], 'bytes=0-', 'the first request asks for everything, as a range')
    assert.ok(ranges.length >= 3 && ranges.slice(1).every(r => /^bytes=\d+-\d+$/.test(r)), `then bounded ranges: ${ranges.join(', ')}`)
    assert.ok(rangedBytes(ranges) < bytes.length / 6, `ranges of ${rangedBytes(ranges)} bytes of ${bytes.length}: ${ranges.join(', ')}`)
    assert.ok(origin.sent() < bytes.length, `sent ${origin.sent()} of ${bytes.length} bytes`)
    // The same frame as from the whole file, uploaded.
    // /metrics counts what was asked of origins, as the origin saw it.
    const metrics = (await app.inject({ url: '/metrics' })).body
    assert.equal(Number(/^thumbd_range_requests_total (\d+)/m.exec(metrics)?.[1]), ranges.length - 1)
    assert.equal(Number(/^thumbd_range_bytes_total (\d+)/m.exec(metrics)?.[1]), rangedBytes(ranges))
    const whole = await app.inject({ method: 'POST', url: '/api/thumbnail?at=50%25', headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: bytes })
    assert.equal(whole.statusCode, 200)
    assert.ok(remote.rawPayload.equals(whole.rawPayload), 'byte for byte the thumbnail of the uploaded file')
    await nothingLeft(app)
  })
}

test('info and storyboards read remote videos too; a storyboard re-reads the index from the reader, not from the origin', async (t) => {
  const bytes = await media('long-mp4')
  const origin = await startOrigin({ video: bytes })
  t.after(origin.close)
  const app = await build(t, remoteFrom(origin))
  const info = await fromUrl(app, 'info', origin.url('video'))
  assert.equal(info.statusCode, 200, info.body)
  assert.equal(info.json().size, bytes.length)
  assert.equal(Math.round(info.json().duration), 20)
  const before = origin.ranges().length
  const board = await fromUrl(app, 'storyboard', origin.url('video'), { count: 10, width: 64 })
  assert.equal(board.statusCode, 200, board.body)
  assert.equal(board.json().tiles.length, 10)
  const sprite = await decoded(Buffer.from(board.json().sprite, 'base64'))
  assert.equal(sprite.width, 640)
  // Eleven tool runs (a probe, ten frames) each open the file and read its index: cached after the first.
  const requests = origin.ranges().length - before
  assert.ok(requests <= 30, `${requests} range requests for 11 opens`)
  assert.ok(rangedBytes(origin.ranges()) < bytes.length, `ranges of ${rangedBytes(origin.ranges())} bytes of ${bytes.length} for info and ten tiles`)
  await nothingLeft(app)
})

test('small videos, and servers that ignore Range, are downloaded whole (within MAX_SOURCE_BYTES); /api/hash never asks for a range', async (t) => {
  const bytes = await media('long-mp4')
  const small = await media('mp4-h264')
  const ranged = await startOrigin({ video: bytes, small })
  t.after(ranged.close)
  const ignoring = await startOrigin({ video: bytes }, { misbehave: 'ignore-range', after: 0 })
  t.after(ignoring.close)
  const app = await build(t, remoteFrom(ranged, ignoring))
  assert.equal((await fromUrl(app, 'thumbnail', ranged.url('small'))).statusCode, 200)
  assert.deepEqual(ranged.ranges(), ['bytes=0-'], 'one request: the 206 to bytes=0- is the whole file')
  const hash = await fromUrl(app, 'hash', ranged.url('video'))
  assert.equal(hash.statusCode, 200, hash.body)
  assert.equal(ranged.ranges().at(-1), '', 'digests need every byte: a plain GET')

  assert.equal((await fromUrl(app, 'thumbnail', ignoring.url('video'))).statusCode, 200)
  assert.equal(ignoring.sent(), bytes.length)
  const capped = await build(t, { ...remoteFrom(ignoring), MAX_SOURCE_BYTES: String(bytes.length - 1) })
  const refused = await fromUrl(capped, 'thumbnail', ignoring.url('video'))
  assert.equal(refused.statusCode, 413)
  await nothingLeft(app)
  await nothingLeft(capped)
})

test('a server that caps an open range, or refuses ranges with 416: images and small videos are still read whole', async (t) => {
  const photo = await media('jpeg-large')
  const small = await media('mp4-h264')
  const capped = await startOrigin({ photo, small }, { misbehave: 'capped', after: 0 })
  t.after(capped.close)
  const refusing = await startOrigin({ photo, small }, { misbehave: 'no-ranges', after: 0 })
  t.after(refusing.close)
  const app = await build(t, remoteFrom(capped, refusing))
  for (const origin of [capped, refusing]) {
    for (const name of ['photo', 'small']) {
      const res = await fromUrl(app, 'thumbnail', origin.url(name))
      assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
      assert.equal((await decoded(res.rawPayload)).width, 320)
    }
  }
  assert.ok(photo.length > 64 * 1024 && capped.ranges().includes('bytes=65536-'), `the rest asked for in one more range: ${capped.ranges().join(', ')}`)
  assert.deepEqual(refusing.ranges().slice(0, 2), ['bytes=0-', ''], 'after a 416, a plain GET')
  await nothingLeft(app)
})

/** Origins that misbehave from their second answer on, and what thumbd must answer. */
const HOSTILE: Array<{ what: string, origin: OriginOptions, env?: Record<string, string>, status: number, code: string }> = [
  { what: 'a Content-Range with another total size', origin: { misbehave: 'other-size' }, status: 502, code: 'THUMBD_SOURCE_FETCH_FAILED' },
  { what: 'a Content-Range for other bytes than asked', origin: { misbehave: 'other-range' }, status: 502, code: 'THUMBD_SOURCE_FETCH_FAILED' },
  { what: 'other bytes where it already sent the file\'s first bytes', origin: { misbehave: 'other-bytes' }, status: 502, code: 'THUMBD_SOURCE_FETCH_FAILED' },
  { what: 'a file that changed (200 to If-Range)', origin: { misbehave: 'changed' }, status: 502, code: 'THUMBD_SOURCE_FETCH_FAILED' },
  { what: 'a drip of a byte a second', origin: { misbehave: 'drip' }, env: { FETCH_TIMEOUT_MS: '1500' }, status: 502, code: 'THUMBD_SOURCE_FETCH_FAILED' },
  { what: 'a range redirected outside ALLOWED_SOURCES', origin: { misbehave: 'redirect', redirectTo: 'http://localhost:9/elsewhere' }, status: 400, code: 'THUMBD_SOURCE_FORBIDDEN' },
  { what: 'more range requests than MAX_RANGE_REQUESTS', origin: {}, env: { MAX_RANGE_REQUESTS: '2' }, status: 413, code: 'THUMBD_PAYLOAD_TOO_LARGE' },
  { what: 'more bytes than MAX_RANGE_BYTES', origin: {}, env: { MAX_RANGE_BYTES: '300000' }, status: 413, code: 'THUMBD_PAYLOAD_TOO_LARGE' }
]

for (const { what, origin: behaviour, env = {}, status, code } of HOSTILE) {
  test(`range reads from a server giving ${what}: ${status} ${code}, bounded, nothing left`, async (t) => {
    const bytes = await media('long-mp4')
    const origin = await startOrigin({ video: bytes }, behaviour)
    t.after(origin.close)
    const app = await build(t, { ...remoteFrom(origin), ...env })
    // Seconds on a quiet machine; beside stress-ng the niced decoder's share stretches them (13.7 s once).
    const boundMs = Math.round(10_000 * await slowdown(app))
    const started = performance.now()
    const res = await fromUrl(app, 'thumbnail', origin.url('video'), { at: '50%' })
    assert.equal(res.statusCode, status, res.body)
    assert.equal(res.json().code, code)
    assert.ok(performance.now() - started < boundMs, `answered within ${boundMs} ms`)
    // No retry loop: a few requests; what the origin sent is at most two answers dropped after a look (kernel buffers).
    assert.ok(origin.ranges().length <= 6, `requests: ${origin.ranges().join(', ')}`)
    assert.ok(origin.sent() < bytes.length * 1.5, `sent ${origin.sent()} of ${bytes.length}`)
    await nothingLeft(app)
  })
}

test('an index that points past the end of the file: 422, from the reader refusing the range (416)', async (t) => {
  // The index at the start, the media cut off: ffmpeg seeks to where the frames should be.
  const whole = await readFile(await mediaPath('long-mp4'))
  const fast = join(TEST_TMP, 'faststart.mp4')
  await run('ffmpeg', ['-loglevel', 'error', '-y', '-i', await mediaPath('long-mp4'), '-c', 'copy', '-movflags', '+faststart', fast])
  const cut = (await readFile(fast)).subarray(0, Math.floor(whole.length * 0.4))
  const origin = await startOrigin({ video: cut })
  t.after(origin.close)
  const app = await build(t, remoteFrom(origin))
  const res = await fromUrl(app, 'thumbnail', origin.url('video'), { at: '90%' })
  assert.equal(res.statusCode, 422, res.body)
  assert.equal(res.json().code, 'THUMBD_MEDIA_UNREADABLE')
  await nothingLeft(app)
})
