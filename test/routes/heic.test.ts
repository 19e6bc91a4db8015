// HEIC/HEIF photos (phones' default), made at test time with libheif's heif-enc: decoded by native/heif-decode
// in the decoder sandbox, through every job route and source form; hostile HEIF gets the catalogue's 4xx
// and leaves nothing behind.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { mkdtempSync, readFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { AUTH, build, decoded, leftoverTempFiles, postMedia } from '../helper.ts'
import { decoderChildren, listen } from '../faults/helpers.ts'
import { startStaticServer } from '../../load/static-server.ts'

const run = promisify(execFile)
const dir = mkdtempSync(join(tmpdir(), 'thumbd-heic-'))

/** A 1600x1200 photo-like picture, upright, as HEIC (HEVC inside). */
async function heic (name: string, extra: string[] = []): Promise<Buffer> {
  const png = join(dir, `${name}.png`)
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'testsrc2=size=1600x1200', '-frames:v', '1', png])
  await run('heif-enc', ['-q', '60', ...extra, '-o', join(dir, `${name}.heic`), png])
  return readFileSync(join(dir, `${name}.heic`))
}

after(() => assert.deepEqual(decoderChildren(), [], 'no decoder left running'))

test('a HEIC photo thumbnails, resizes and hashes, as an upload, a multipart part and a URL source', async (t) => {
  const statics = await startStaticServer(dir)
  t.after(() => statics.close())
  const app = await build(t, { ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${statics.base}/` })
  const photo = await heic('photo')
  assert.equal(photo.subarray(4, 12).toString('latin1'), 'ftypheic', 'a real HEIC')
  const reference = await sharp(join(dir, 'photo.png')).resize(320).raw().toBuffer()

  const thumbnail = await postMedia(app, 'thumbnail', photo, 'image/heic')
  assert.equal(thumbnail.statusCode, 200, thumbnail.body)
  assert.equal(thumbnail.headers['content-type'], 'image/jpeg')
  const meta = await decoded(thumbnail.rawPayload)
  assert.deepEqual([meta.width, meta.height], [320, 240])
  // The pixels are the photo's, not some other frame or a grey placeholder.
  const pixels = await sharp(thumbnail.rawPayload).raw().toBuffer()
  const diff = pixels.reduce((sum, v, i) => sum + Math.abs(v - reference[i]!), 0) / pixels.length
  assert.ok(diff < 12, `mean difference ${diff.toFixed(1)} against the source picture`)

  const resized = await postMedia(app, 'resize', photo, 'image/heic', '?width=200&height=200&format=webp')
  assert.equal(resized.statusCode, 200, resized.body)
  assert.deepEqual([(await decoded(resized.rawPayload)).width, resized.headers['content-type']], [200, 'image/webp'])

  const hashed = await postMedia(app, 'hash', photo, 'application/octet-stream')
  assert.equal(hashed.statusCode, 200, hashed.body)
  assert.equal(hashed.json().type.format, 'heic')
  assert.match(hashed.json().perceptual.phash, /^[0-9a-f]{16}$/)

  const boundary = 'thumbdheic'
  const form = Buffer.concat([Buffer.from(`--${boundary}\r\nContent-Disposition: form-data; name="width"\r\n\r\n100\r\n--${boundary}\r\nContent-Disposition: form-data; name="file"; filename="IMG_0001.HEIC"\r\nContent-Type: image/heic\r\n\r\n`), photo, Buffer.from(`\r\n--${boundary}--\r\n`)])
  const multipart = await app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': `multipart/form-data; boundary=${boundary}` }, payload: form })
  assert.equal(multipart.statusCode, 200, multipart.body)
  assert.equal((await decoded(multipart.rawPayload)).width, 100)

  const byUrl = await app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': 'application/json' }, payload: { url: `${statics.base}/photo.heic`, width: 160 } })
  assert.equal(byUrl.statusCode, 200, byUrl.body)
  assert.equal((await decoded(byUrl.rawPayload)).width, 160)
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('hostile HEIF: over the pixel limit, truncated, corrupt, a HEIF brand on garbage: 4xx, fast, nothing left', async (t) => {
  const app = await build(t, { MAX_INPUT_PIXELS: '1000000' })
  const photo = await heic('limits')
  const garbage = Buffer.concat([photo.subarray(0, 32), Buffer.alloc(4096, 0x5a)])
  const corrupt = Buffer.from(photo)
  for (let i = photo.length / 2; i < photo.length / 2 + 2000; i++) corrupt[i]! ^= 0x55
  const cases: Array<[string, Buffer, number]> = [
    ['1600x1200 over a 1 MP limit', photo, 413],
    ['truncated', photo.subarray(0, Math.floor(photo.length / 3)), 422],
    ['a HEIF header on garbage', garbage, 422]
  ]
  for (const [name, body, status] of cases) {
    const started = Date.now()
    const res = await postMedia(app, 'thumbnail', body, 'image/heic')
    assert.equal(res.statusCode, status, `${name}: ${res.body}`)
    assert.ok(Date.now() - started < 10_000, `${name}: answered fast`)
  }
  // Corrupt tile data may still decode to something: never a 5xx.
  const res = await postMedia(app, 'thumbnail', corrupt, 'image/heic')
  assert.ok([200, 413, 422].includes(res.statusCode), `corrupt: ${res.statusCode} ${res.body}`)
  assert.deepEqual(leftoverTempFiles(app), [])
  const server = await listen(app)
  assert.equal((await fetch(`${server}/health`)).status, 200)
})
