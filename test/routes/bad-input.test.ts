import assert from 'node:assert/strict'
import { Readable } from 'node:stream'
import { after, describe, test } from 'node:test'
import { AUTH, build, decoded, leftoverTempFiles, leftoverTestTmp, postMedia } from '../helper.ts'
import { media } from '../media.ts'
import { decoderChildren } from '../faults/helpers.ts'

const half = (b: Buffer) => b.subarray(0, Math.floor(b.length / 2))

function assertError (res: { statusCode: number, json (): unknown, body: string }, status: number, code: string) {
  assert.equal(res.statusCode, status, res.body)
  const body = res.json() as Record<string, unknown>
  assert.equal(body.code, code)
  assert.equal(body.statusCode, status)
  assert.equal(typeof body.message, 'string')
  assert.ok(!res.body.includes('    at '), 'no stack trace')
}

describe('bad input gets a clear 4xx, fast, and leaves nothing behind', () => {
  after(() => {
    assert.deepEqual(decoderChildren(), [], 'no ffmpeg left running (the pool\'s threads live in this process)')
    assert.deepEqual(leftoverTestTmp(), [], 'no temp file left in TMP_DIR')
  })

  test('unsupported, unreadable, oversize and unauthorised sources', async (t) => {
    const app = await build(t, { MAX_SOURCE_BYTES: String(2 * 1024 * 1024) })
    const jpeg = await media('jpeg')
    const png = await media('png')
    const mp4 = await media('mp4-h264')
    const cases: Array<[string, Buffer, string, number, string]> = [
      ['text', Buffer.from('hello, I am not an image\n'), 'image/jpeg', 415, 'THUMBD_UNSUPPORTED_MEDIA'],
      ['empty body', Buffer.alloc(0), 'image/png', 415, 'THUMBD_UNSUPPORTED_MEDIA'],
      ['unknown bytes', Buffer.from([0x00, 0x01, 0x02, 0x03, 0xfe, 0xff, 0x10, 0x20]), 'application/octet-stream', 415, 'THUMBD_UNSUPPORTED_MEDIA'],
      // HEIC is read (native/heif-decode), so a HEIC header on garbage is unreadable media, not an unsupported type.
      ['HEIC header, no image', Buffer.concat([Buffer.from('\x00\x00\x00\x18ftypheic\x00\x00\x00\x00mif1heic', 'latin1'), Buffer.alloc(2000, 1)]), 'image/heic', 422, 'THUMBD_MEDIA_UNREADABLE'],
      ['svg', Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'), 'image/svg+xml', 415, 'THUMBD_UNSUPPORTED_MEDIA'],
      ['truncated JPEG', half(jpeg), 'image/jpeg', 422, 'THUMBD_MEDIA_UNREADABLE'],
      ['truncated PNG', half(png), 'image/png', 422, 'THUMBD_MEDIA_UNREADABLE'],
      ['truncated MP4 (index at the end)', half(mp4), 'video/mp4', 422, 'THUMBD_MEDIA_UNREADABLE'],
      ['MP4 header then noise', Buffer.concat([mp4.subarray(0, 64), Buffer.alloc(50_000, 7)]), 'video/mp4', 422, 'THUMBD_MEDIA_UNREADABLE'],
      ['over MAX_SOURCE_BYTES', Buffer.concat([jpeg, Buffer.alloc(3 * 1024 * 1024)]), 'image/jpeg', 413, 'THUMBD_PAYLOAD_TOO_LARGE']
    ]
    for (const [name, body, type, status, code] of cases) {
      const started = Date.now()
      const res = await postMedia(app, 'thumbnail', body, type)
      assertError(res, status, code)
      assert.ok(Date.now() - started < 5000, `${name} answered fast`)
      assert.deepEqual(leftoverTempFiles(app), [], `${name} left no temp file`)
    }
    const health = await app.inject({ url: '/health' })
    assert.equal(health.statusCode, 200)
  })

  test('the byte limit holds while streaming, and the bytes decide what the source is, whatever the headers say', async (t) => {
    const app = await build(t, { MAX_SOURCE_BYTES: '100000' })
    const [mp4, png] = await Promise.all([media('tiny-mp4'), media('png')])
    const text = Buffer.from('plain text, however it is labelled\n')
    // Two chunks, each over the limit on its own (inject's stream gives up, racily, if the server answers between small ones).
    const over = (b: Buffer) => { const whole = Buffer.concat(Array.from({ length: Math.ceil(150_000 / b.length) }, () => b)); return [whole, whole] }
    const post = (type: string, payload: Buffer | Readable) => app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': type }, payload })
    // Streams have no Content-Length: the limit must trip mid-stream, with the temp file already begun,
    // under any label, true or false. (Text is refused sooner, once its first 4 KB are sniffed.)
    for (const [type, chunks] of [['video/mp4', over(mp4)], ['image/gif', over(mp4)], ['image/jpeg', over(png)]] as const) {
      assertError(await post(type, Readable.from(chunks)), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
      assert.deepEqual(leftoverTempFiles(app), [], type)
    }
    // Under the limit, false labels change nothing: the sniffed type is decoded, or refused.
    const pngAsJpeg = await post('image/jpeg', png)
    assert.equal(pngAsJpeg.statusCode, 200, `a PNG labelled image/jpeg: ${pngAsJpeg.body}`)
    assert.deepEqual([(await decoded(pngAsJpeg.rawPayload)).width, (await decoded(pngAsJpeg.rawPayload)).height], [320, 240])
    const mp4AsGif = await post('image/gif', mp4)
    assert.equal(mp4AsGif.statusCode, 200, `an MP4 labelled image/gif: ${mp4AsGif.body}`)
    assert.deepEqual([(await decoded(mp4AsGif.rawPayload)).width, (await decoded(mp4AsGif.rawPayload)).height], [160, 120], 'a frame of the 160x120 video')
    assertError(await post('image/png', text), 415, 'THUMBD_UNSUPPORTED_MEDIA')
    assert.deepEqual(leftoverTempFiles(app), [])
  })

  test('options out of range or unknown', async (t) => {
    const app = await build(t)
    const jpeg = await media('jpeg')
    for (const query of ['?width=0', '?width=100000', '?height=-1', '?quality=101', '?fit=squash', '?format=bmp', '?at=abc', '?at=150%25', '?frame=worst', '?colour=red', '?width=abc']) {
      assertError(await postMedia(app, 'thumbnail', jpeg, 'image/jpeg', query), 400, 'THUMBD_BAD_OPTIONS')
    }
    assert.deepEqual(leftoverTempFiles(app), [])
  })

  test('missing or wrong key', async (t) => {
    const app = await build(t)
    const jpeg = await media('jpeg')
    for (const authorization of [undefined, 'Bearer nope', `Basic ${AUTH.authorization.slice(7)}`, 'Bearer', `Bearer ${AUTH.authorization.slice(7)}x`]) {
      const headers: Record<string, string> = { 'content-type': 'image/jpeg' }
      if (authorization !== undefined) headers.authorization = authorization
      assertError(await app.inject({ method: 'POST', url: '/api/thumbnail', headers, payload: jpeg }), 401, 'THUMBD_UNAUTHORIZED')
    }
  })

  test('wrong or missing content type, and unknown routes', async (t) => {
    const app = await build(t)
    assertError(await app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': 'text/plain' }, payload: 'hi' }), 415, 'THUMBD_UNSUPPORTED_MEDIA')
    assertError(await app.inject({ method: 'GET', url: '/api/nothing-here', headers: AUTH }), 404, 'THUMBD_NOT_FOUND')
  })
})
