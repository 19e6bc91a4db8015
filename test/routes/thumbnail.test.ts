import assert from 'node:assert/strict'
import { describe, test } from 'node:test'
import sharp from 'sharp'
import { AUTH, build, decoded, leftoverTempFiles, postMedia, thumbnailOf } from '../helper.ts'
import { IMAGES, VIDEOS, media } from '../media.ts'

const FORMATS = ['jpeg', 'png', 'webp', 'avif'] as const
/** What sharp's metadata calls each output format. */
const DECODED_AS = { jpeg: 'jpeg', png: 'png', webp: 'webp', avif: 'heif' } as const

describe('POST /api/thumbnail', () => {
  test('every image input in every output format: 320 px wide by default, right format', async (t) => {
    const app = await build(t)
    for (const input of IMAGES) {
      for (const format of FORMATS) {
        const res = await postMedia(app, 'thumbnail', await media(input), 'application/octet-stream', `?format=${format}`)
        assert.equal(res.statusCode, 200, `${input} -> ${format}: ${res.body}`)
        assert.equal(res.headers['content-type'], `image/${format}`)
        const meta = await decoded(res.rawPayload)
        assert.equal(meta.format, DECODED_AS[format], `${input} -> ${format}`)
        assert.deepEqual([meta.width, meta.height], [320, 240], `${input} -> ${format}`)
      }
    }
    assert.deepEqual(leftoverTempFiles(app), [])
  })

  test('every video container and codec gives a frame of the right size', async (t) => {
    const app = await build(t)
    for (const input of VIDEOS) {
      const res = await postMedia(app, 'thumbnail', await media(input), 'video/mp4')
      assert.equal(res.statusCode, 200, `${input}: ${res.body}`)
      const meta = await decoded(res.rawPayload)
      assert.equal(meta.format, 'jpeg')
      assert.deepEqual([meta.width, meta.height], [320, 180], input)
    }
    assert.deepEqual(leftoverTempFiles(app), [])
  })

  test('video options: at (seconds and percent), frame=best, every output format, exact box with fit', async (t) => {
    const app = await build(t)
    const video = await media('mp4-h264')
    for (const [query, size, format] of [
      ['?at=0.5', [320, 180], 'jpeg'],
      ['?at=90%25&format=png', [320, 180], 'png'],
      ['?frame=best&format=webp', [320, 180], 'webp'],
      ['?at=30&format=avif', [320, 180], 'avif'], // past the end: the last frame
      ['?width=100&height=100&fit=cover', [100, 100], 'jpeg'],
      ['?width=100&height=100&fit=contain&format=png', [100, 100], 'png'],
      ['?height=90', [160, 90], 'jpeg']
    ] as const) {
      const res = await postMedia(app, 'thumbnail', video, 'video/mp4', query)
      assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
      const meta = await decoded(res.rawPayload)
      assert.equal(meta.format, DECODED_AS[format], query)
      assert.deepEqual([meta.width, meta.height], size, query)
    }
  })

  test('frames at different times differ, and the same request gives the same bytes', async (t) => {
    const app = await build(t)
    const video = await media('mp4-h264')
    const frameAt = async (at: string) => {
      // Two identical error bodies would also be "the same bytes": each must be a PNG frame.
      const frame = await thumbnailOf(app, video, 'video/mp4', `?at=${at}&format=png`, 'image/png')
      assert.equal((await decoded(frame)).format, 'png')
      return frame
    }
    const early = await frameAt('0')
    const late = await frameAt('1.8')
    const again = await frameAt('1.8')
    assert.notDeepEqual(early, late)
    assert.deepEqual(late, again)
  })

  test('frame=best picks a representative frame: not the black one an exact seek to 0 gives', async (t) => {
    const app = await build(t)
    const video = await media('black-start-mp4')
    const brightness = async (query: string) => {
      const { channels } = await sharp(await thumbnailOf(app, video, 'video/mp4', query)).stats()
      return channels.slice(0, 3).reduce((sum, ch) => sum + ch.mean, 0) / 3
    }
    // The clip is black for its first 0.4 s: the exact frame at 0 is black, the best of the frames after it is not.
    assert.ok(await brightness('?at=0') < 10, 'the exact frame at 0 is black')
    assert.ok(await brightness('?at=0&frame=best') > 60, 'frame=best chose a frame of the pattern')
  })

  test('EXIF orientation is applied and metadata is stripped', async (t) => {
    const app = await build(t)
    const rotated = await sharp(await media('jpeg')).withMetadata({ orientation: 6 }).jpeg().toBuffer()
    const res = await postMedia(app, 'thumbnail', rotated, 'image/jpeg')
    assert.equal(res.statusCode, 200)
    const meta = await decoded(res.rawPayload)
    assert.deepEqual([meta.width, meta.height], [320, 427])
    assert.equal(meta.orientation, undefined)
    assert.equal(meta.exif, undefined)
  })

  test('small images are not enlarged', async (t) => {
    const app = await build(t)
    const small = await sharp(await media('png')).resize(100).png().toBuffer()
    const res = await postMedia(app, 'thumbnail', small, 'image/png')
    assert.deepEqual([(await decoded(res.rawPayload)).width], [100])
  })

  test('large JPEG spooled to a temp file (over MEMORY_SPOOL_BYTES) works and leaves nothing', async (t) => {
    const app = await build(t, { MEMORY_SPOOL_BYTES: '1000' })
    const res = await postMedia(app, 'thumbnail', await media('jpeg-large'), 'image/jpeg')
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([(await decoded(res.rawPayload)).width], [320])
    assert.deepEqual(leftoverTempFiles(app), [])
  })

  test('reply headers: length, ETag, caching, timing; If-None-Match gives 304 without a job', async (t) => {
    const app = await build(t)
    const image = await media('jpeg')
    const res = await postMedia(app, 'thumbnail', image, 'image/jpeg')
    assert.equal(Number(res.headers['content-length']), res.rawPayload.length)
    assert.match(String(res.headers.etag), /^"[\w-]{32}"$/)
    assert.match(String(res.headers['cache-control']), /max-age=\d+/)
    assert.match(String(res.headers['server-timing']), /^queue;dur=[\d.]+, work;dur=[\d.]+$/)
    assert.equal(res.headers.vary, undefined)

    const completed = app.jobs.stats().completed
    const cached = await app.inject({ method: 'POST', url: '/api/thumbnail', headers: { ...AUTH, 'content-type': 'image/jpeg', 'if-none-match': String(res.headers.etag) }, payload: image })
    assert.equal(cached.statusCode, 304)
    assert.equal(cached.rawPayload.length, 0)
    assert.equal(app.jobs.stats().completed, completed, 'no job ran for the 304')

    const other = await postMedia(app, 'thumbnail', image, 'image/jpeg', '?width=100')
    assert.notEqual(other.headers.etag, res.headers.etag)
  })

  test('format=auto follows Accept and says Vary: Accept', async (t) => {
    const app = await build(t)
    const image = await media('png')
    for (const [accept, format] of [
      ['image/avif,image/webp,*/*', 'avif'],
      ['image/webp,*/*;q=0.8', 'webp'],
      ['image/avif;q=0,image/webp', 'webp'],
      ['*/*', 'jpeg']
    ]) {
      const res = await app.inject({ method: 'POST', url: '/api/thumbnail?format=auto', headers: { ...AUTH, 'content-type': 'image/png', accept }, payload: image })
      assert.equal(res.headers['content-type'], `image/${format}`, accept)
      assert.equal(res.headers.vary, 'Accept')
    }
  })
})
