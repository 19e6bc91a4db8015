import assert from 'node:assert/strict'
import { test } from 'node:test'
import sharp from 'sharp'
import { AUTH, build, decoded, leftoverTempFiles, postMedia } from '../helper.ts'
import { media } from '../media.ts'

const resize = (app: Awaited<ReturnType<typeof build>>, body: Buffer, query: string, headers: Record<string, string> = {}) =>
  app.inject({ method: 'POST', url: `/api/resize${query}`, headers: { ...AUTH, 'content-type': 'application/octet-stream', ...headers }, payload: body })

test('each fit gives its exact output size (640x480 source into 200x100)', async (t) => {
  const app = await build(t)
  const png = await media('png')
  for (const [query, size] of [
    ['?width=200&height=100&fit=cover', [200, 100]],
    ['?width=200&height=100&fit=contain', [200, 100]],
    ['?width=200&height=100&fit=fill', [200, 100]],
    ['?width=200&height=100&fit=inside', [133, 100]],
    ['?width=200&height=100&fit=outside', [200, 150]],
    ['?width=200', [200, 150]],
    ['?height=100', [133, 100]],
    ['', [640, 480]],
    ['?width=1000', [640, 480]],
    ['?width=1000&withoutEnlargement=false', [1000, 750]]
  ] as const) {
    const res = await resize(app, png, query)
    assert.equal(res.statusCode, 200, `${query}: ${res.body}`)
    const meta = await decoded(res.rawPayload)
    assert.deepEqual([meta.width, meta.height], size, query)
  }
})

test('output formats all decode; the default keeps the source format; auto follows Accept', async (t) => {
  const app = await build(t)
  for (const format of ['jpeg', 'png', 'webp', 'avif'] as const) {
    const res = await resize(app, await media('jpeg'), `?width=120&format=${format}&quality=60`)
    assert.equal(res.headers['content-type'], `image/${format}`)
    assert.equal((await decoded(res.rawPayload)).format, format === 'avif' ? 'heif' : format)
  }
  for (const [source, format] of [['jpeg', 'jpeg'], ['png', 'png'], ['webp', 'webp'], ['gif', 'gif'], ['avif', 'avif']] as const) {
    const res = await resize(app, await media(source), '?width=50')
    assert.equal(res.headers['content-type'], `image/${format}`, source)
  }
  const auto = await resize(app, await media('png'), '?width=50&format=auto', { accept: 'image/webp,*/*' })
  assert.equal(auto.headers['content-type'], 'image/webp')
  assert.equal(auto.headers.vary, 'Accept')
})

test('positions crop different parts; smart crops work; contain fills with the background', async (t) => {
  const app = await build(t)
  const png = await media('png')
  const crops = new Map<string, Buffer>()
  for (const position of ['north', 'south', 'attention', 'entropy', 'center']) {
    const res = await resize(app, png, `?width=200&height=50&fit=cover&position=${position}&format=png`)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([(await decoded(res.rawPayload)).width, (await decoded(res.rawPayload)).height], [200, 50])
    crops.set(position, res.rawPayload)
  }
  assert.ok(!crops.get('north')!.equals(crops.get('south')!))
  const boxed = await resize(app, png, '?width=200&height=200&fit=contain&background=ff0000&format=png')
  const corner = await sharp(boxed.rawPayload).extract({ left: 0, top: 0, width: 1, height: 1 }).raw().toBuffer()
  assert.deepEqual([...corner.subarray(0, 3)], [255, 0, 0])
})

test('a background with alpha: in JPEG one opaque colour for the bars and the transparent pixels alike; PNG keeps the alpha', async (t) => {
  const app = await build(t)
  // 100x50: the left half transparent, the right half opaque blue; boxed into 100x100, bars above and below.
  const pixels = Buffer.alloc(100 * 50 * 4)
  for (let i = 0; i < 100 * 50; i++) if (i % 100 >= 50) pixels.set([0, 0, 255, 255], i * 4)
  const png = await sharp(pixels, { raw: { width: 100, height: 50, channels: 4 } }).png().toBuffer()
  const at = async (image: Buffer) => {
    const { data, info } = await sharp(image).ensureAlpha().raw().toBuffer({ resolveWithObject: true })
    return (x: number, y: number) => [...data.subarray((y * info.width + x) * 4, (y * info.width + x) * 4 + 4)]
  }
  const near = (got: number[], want: number[], what: string) => assert.ok(got.every((v, i) => Math.abs(v - want[i]!) <= 3), `${what}: ${got} vs ${want}`)
  for (const background of ['ff000080', 'ff0000']) {
    const jpeg = await resize(app, png, `?width=100&height=100&fit=contain&format=jpeg&background=${background}`)
    assert.equal(jpeg.statusCode, 200, jpeg.body)
    const pixel = await at(jpeg.rawPayload)
    near(pixel(50, 5), [255, 0, 0, 255], `${background}: a bar`)
    near(pixel(10, 50), [255, 0, 0, 255], `${background}: a transparent pixel`)
    near(pixel(90, 50), [0, 0, 255, 255], `${background}: the picture`)
  }
  const kept = await at((await resize(app, png, '?width=100&height=100&fit=contain&format=png&background=ff000080')).rawPayload)
  assert.deepEqual(kept(50, 5), [255, 0, 0, 128], 'PNG: the bars keep the background\'s alpha')
  assert.equal(kept(10, 50)[3], 0, 'PNG: transparent pixels stay transparent')
})

test('auto-orient, metadata stripped, CMYK converted to sRGB', async (t) => {
  const app = await build(t)
  const rotated = await sharp(await media('jpeg')).withMetadata({ orientation: 8 }).jpeg().toBuffer()
  const upright = await resize(app, rotated, '?width=240')
  const meta = await decoded(upright.rawPayload)
  assert.deepEqual([meta.width, meta.height, meta.orientation, meta.exif], [240, 320, undefined, undefined])
  const cmyk = await sharp(await media('jpeg')).toColourspace('cmyk').jpeg().toBuffer()
  assert.equal((await decoded(cmyk)).space, 'cmyk')
  const converted = await decoded((await resize(app, cmyk, '?width=100')).rawPayload)
  assert.deepEqual([converted.space, converted.channels], ['srgb', 3])
})

test('repeated request with If-None-Match is answered 304', async (t) => {
  const app = await build(t)
  const png = await media('png')
  const first = await resize(app, png, '?width=64')
  const again = await resize(app, png, '?width=64', { 'if-none-match': String(first.headers.etag) })
  assert.equal(again.statusCode, 304)
  assert.equal(again.headers.etag, first.headers.etag)
  assert.equal((await resize(app, png, '?width=65', { 'if-none-match': String(first.headers.etag) })).statusCode, 200)
})

test('bad input: videos, unreadable images, oversized outputs, bad options', async (t) => {
  const app = await build(t)
  const jpeg = await media('jpeg')
  for (const [body, query, status, code] of [
    [await media('mp4-h264'), '', 415, 'THUMBD_UNSUPPORTED_MEDIA'],
    [Buffer.from('not an image'), '', 415, 'THUMBD_UNSUPPORTED_MEDIA'],
    [jpeg.subarray(0, jpeg.length >> 1), '', 422, 'THUMBD_MEDIA_UNREADABLE'],
    [jpeg, '?width=8192&height=8192&fit=outside&withoutEnlargement=false', 400, 'THUMBD_BAD_OPTIONS'],
    [jpeg, '?position=middle', 400, 'THUMBD_BAD_OPTIONS'],
    [jpeg, '?background=red', 400, 'THUMBD_BAD_OPTIONS'],
    [jpeg, '?at=1', 400, 'THUMBD_BAD_OPTIONS']
  ] as const) {
    const res = await postMedia(app, 'resize', body, 'image/jpeg', query)
    assert.equal(res.statusCode, status, `${query}: ${res.body}`)
    assert.equal(res.json().code, code)
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})
