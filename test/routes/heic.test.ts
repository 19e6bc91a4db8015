// HEIC/HEIF photos (phones' default), made at test time with libheif's heif-enc: decoded by native/heif-decode
// in the decoder sandbox, through every job route and source form; hostile HEIF gets the catalogue's 4xx
// and leaves nothing behind.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { thumbHashToAverageRGBA } from 'thumbhash'
import { AUTH, build, decoded, leftoverTempFiles, postMedia } from '../helper.ts'
import { decoderChildren, decoderProcesses, listen, waitFor } from '../faults/helpers.ts'
import { startStaticServer } from '../../load/static-server.ts'
import { makeHeic } from '../heic-media.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
const dir = tempFolder('thumbd-heic-', { after })

/** A 1600x1200 photo-like picture, upright, as HEIC (HEVC inside). */
const heic = (name: string, extra: string[] = []) => makeHeic(dir, name, '1600x1200', extra)

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

/**
 * A HEIC whose embedded thumbnail is a different picture from its primary, which no camera would write: made
 * with libheif's C API (heif-enc's -t always scales the primary), so the test can tell which one was decoded.
 * Flat colours; an ICC file or '-' for each. Compiled at test time, as native/heif-decode is (libheif-dev).
 */
const MAKE_HEIC_WITH_THUMBNAIL = String.raw`#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
static struct heif_image *flat (int w, int h, const char *hex, const char *icc) {
  struct heif_image *image;
  int stride;
  unsigned long rgb = strtoul(hex, NULL, 16);
  heif_image_create(w, h, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image);
  heif_image_add_plane(image, heif_channel_interleaved, w, h, 8);
  uint8_t *p = heif_image_get_plane(image, heif_channel_interleaved, &stride);
  for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) p[y * stride + x * 3] = rgb >> 16, p[y * stride + x * 3 + 1] = rgb >> 8, p[y * stride + x * 3 + 2] = rgb;
  static char data[1 << 16];
  FILE *f = icc[0] == '-' ? NULL : fopen(icc, "rb");
  if (f != NULL) heif_image_set_raw_color_profile(image, "prof", data, fread(data, 1, sizeof data, f));
  return image;
}
static void check (struct heif_error e) { if (e.code) fprintf(stderr, "%s\n", e.message), exit(1); }
int main (int argc, char **argv) {  /* OUT W H RRGGBB ICC THUMB_W THUMB_H RRGGBB ICC */
  struct heif_context *ctx = heif_context_alloc();
  struct heif_encoder *encoder;
  struct heif_image_handle *primary, *thumb;
  if (argc != 10) return 64;
  check(heif_context_get_encoder_for_format(ctx, heif_compression_HEVC, &encoder));
  check(heif_context_encode_image(ctx, flat(atoi(argv[2]), atoi(argv[3]), argv[4], argv[5]), encoder, NULL, &primary));
  check(heif_context_encode_image(ctx, flat(atoi(argv[6]), atoi(argv[7]), argv[8], argv[9]), encoder, NULL, &thumb));
  check(heif_context_assign_thumbnail(ctx, thumb, primary));  /* 1.15's C API takes the thumbnail first, as its C++ one says */
  check(heif_context_write_to_file(ctx, argv[1]));
  return 0;
}
`

/** One of these C programs, compiled once. */
async function compiled (name: string, source: string): Promise<string> {
  const tool = join(dir, name)
  if (!existsSync(tool)) {
    writeFileSync(`${tool}.c`, source)
    const { stdout } = await run('pkg-config', ['--cflags', '--libs', 'libheif'])
    await run('cc', ['-O1', '-o', tool, `${tool}.c`, ...stdout.trim().split(/\s+/)])
  }
  return tool
}

async function heicWithThumbnail (name: string, primary: [number, number, string, string], thumbnail: [number, number, string, string]): Promise<Buffer> {
  await run(await compiled('heic-with-thumbnail', MAKE_HEIC_WITH_THUMBNAIL), [join(dir, name), ...[...primary, ...thumbnail].map(String)])
  return readFileSync(join(dir, name))
}

const RED = 'ff0000'
const BLUE = '0000ff'
/** Which of the two flat pictures a reply shows (stored values: a kept profile does not change them). */
async function picture (image: Buffer): Promise<'red' | 'blue' | string> {
  const { channels: [r, g, b] } = await sharp(image).stats()
  if (r!.mean > 200 && g!.mean < 40 && b!.mean < 40) return 'red'
  if (b!.mean > 200 && r!.mean < 40 && g!.mean < 40) return 'blue'
  return `neither: ${[r, g, b].map(c => c!.mean.toFixed(0)).join(',')}`
}

test('an embedded thumbnail stands in for the photo when the output can be made from it without enlarging it, else the photo is decoded', async (t) => {
  const app = await build(t)
  // A 1600x1200 red photo with a 320x240 blue thumbnail (iPhones embed one of about that size).
  const photo = await heicWithThumbnail('thumbed.heic', [1600, 1200, RED, '-'], [320, 240, BLUE, '-'])
  const cases: Array<[string, string, 'red' | 'blue', [number, number]]> = [
    ['thumbnail', '', 'blue', [320, 240]], // the default thumbnail: 320 px wide, exactly the thumbnail
    ['thumbnail', '?width=200', 'blue', [200, 150]],
    ['thumbnail', '?width=321', 'red', [321, 241]], // one pixel more than the thumbnail has
    ['thumbnail', '?height=240', 'blue', [320, 240]],
    ['thumbnail', '?height=241', 'red', [321, 241]],
    ['thumbnail', '?width=320&height=320', 'red', [320, 320]], // cover: 427x320 before the crop
    ['thumbnail', '?width=300&height=225&fit=cover', 'blue', [300, 225]],
    ['thumbnail', '?width=320&height=320&fit=inside', 'blue', [320, 240]],
    ['thumbnail', '?width=320&height=320&fit=contain&format=png', 'blue', [320, 320]],
    ['thumbnail', '?width=320&height=240&fit=fill', 'blue', [320, 240]],
    ['thumbnail', '?width=320&height=241&fit=fill', 'red', [320, 241]],
    ['resize', '?width=100&fit=fill&format=webp', 'red', [100, 1200]], // fill with one side keeps the other: 1200 rows, more than the thumbnail has
    ['thumbnail', '?width=100&height=240&fit=outside', 'blue', [320, 240]],
    ['thumbnail', '?width=100&height=241&fit=outside', 'red', [321, 241]],
    ['resize', '?width=160&format=webp', 'blue', [160, 120]],
    ['resize', '?width=800&format=webp', 'red', [800, 600]]
  ]
  for (const [route, query, want, size] of cases) {
    const res = await postMedia(app, route, photo, 'image/heic', query)
    assert.equal(res.statusCode, 200, `${route}${query}: ${res.body}`)
    const meta = await decoded(res.rawPayload)
    assert.deepEqual([meta.width, meta.height], size, `${route}${query}: size`)
    // contain: the picture is the band between the (transparent) bars.
    const shown = query.includes('contain') ? await sharp(res.rawPayload).extract({ left: 0, top: 40, width: 320, height: 240 }).toBuffer() : res.rawPayload
    assert.equal(await picture(shown), want, `${route}${query}`)
  }
  // /api/hash works on a 256 px picture: the 320x240 thumbnail serves; a 160x120 one does not, but serves a 160 px thumbnail.
  const small = await heicWithThumbnail('small.heic', [1600, 1200, RED, '-'], [160, 120, BLUE, '-'])
  for (const [name, body, want] of [['thumbed', photo, 'blue'], ['small', small, 'red']] as const) {
    const res = await postMedia(app, 'hash', body, 'image/heic')
    assert.equal(res.statusCode, 200, res.body)
    const { r, b } = thumbHashToAverageRGBA(Buffer.from(res.json().perceptual.thumbhash, 'base64'))
    assert.equal(r > 0.8 && b < 0.2 ? 'red' : b > 0.8 && r < 0.2 ? 'blue' : `r ${r} b ${b}`, want, `${name}: the ThumbHash's colour`)
    assert.deepEqual([res.json().perceptual.width, res.json().perceptual.height], [256, 192], name)
  }
  assert.equal(await picture((await postMedia(app, 'thumbnail', small, 'image/heic', '?width=160')).rawPayload), 'blue')
  // A thumbnail of another shape (320x200 for 4:3) is never taken, not even where fill would stretch either to the same size.
  const reshaped = await heicWithThumbnail('reshaped.heic', [1600, 1200, RED, '-'], [320, 200, BLUE, '-'])
  for (const query of ['?width=100', '?width=100&height=50&fit=fill']) {
    assert.equal(await picture((await postMedia(app, 'thumbnail', reshaped, 'image/heic', query)).rawPayload), 'red', `reshaped${query}`)
  }
  // 322x241 is 4:3 to half a pixel: taken where it gives the very size the photo would (100x75), not where
  // rounding would make the reply a pixel shorter (50x37 instead of 50x38).
  const rounded = await heicWithThumbnail('rounded.heic', [1600, 1200, RED, '-'], [322, 241, BLUE, '-'])
  for (const [query, want, size] of [['?width=100', 'blue', [100, 75]], ['?width=50', 'red', [50, 38]]] as const) {
    const res = await postMedia(app, 'thumbnail', rounded, 'image/heic', query)
    const meta = await decoded(res.rawPayload)
    assert.deepEqual([await picture(res.rawPayload), meta.width, meta.height], [want, ...size], `rounded${query}`)
  }
})

test('a thumbnail stand-in has the colour profile the photo would have: its own, else the photo\'s', async (t) => {
  const app = await build(t)
  const p3 = join(dir, 'display-p3.icc')
  const p3Profile = (await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).withIccProfile('p3').jpeg().toBuffer().then(b => sharp(b).metadata())).icc!
  writeFileSync(p3, p3Profile)
  const profileOf = async (image: Buffer) => {
    const { icc } = await decoded(image)
    return icc === undefined ? 'none' : icc.equals(p3Profile) ? 'p3' : 'other'
  }
  // The photo is Display P3, its thumbnail says nothing: the thumbnail is the photo's, in the photo's colours.
  const photoP3 = await heicWithThumbnail('photo-p3.heic', [1600, 1200, RED, p3], [320, 240, BLUE, '-'])
  for (const query of ['', '?width=640']) {
    const res = await postMedia(app, 'thumbnail', photoP3, 'image/heic', query)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([await picture(res.rawPayload), await profileOf(res.rawPayload)], [query === '' ? 'blue' : 'red', 'p3'], query)
  }
  // The thumbnail carries a profile of its own: that one, not the photo's (none: sRGB).
  const thumbP3 = await heicWithThumbnail('thumb-p3.heic', [1600, 1200, RED, '-'], [320, 240, BLUE, p3])
  for (const query of ['', '?width=640']) {
    const res = await postMedia(app, 'thumbnail', thumbP3, 'image/heic', query)
    assert.equal(res.statusCode, 200, res.body)
    assert.deepEqual([await picture(res.rawPayload), await profileOf(res.rawPayload)], query === '' ? ['blue', 'p3'] : ['red', 'none'], query)
  }
})

test('a photo decoded for a much smaller output is box-shrunk by heif-decode first: the same output size and, within rounding, the same pixels', async () => {
  const tool = new URL('../../native/heif-decode', import.meta.url).pathname
  const photo = join(dir, 'photo.heic')
  if (!existsSync(photo)) await heic('photo')
  const decode = async (fit: string[]) => (await run(tool, ['--max-pixels', '50000000', ...fit, photo], { encoding: 'buffer', maxBuffer: 2 ** 26 })).stdout
  const full = await decode([])
  // [fit, width, height] → the size heif-decode hands over for the 1600x1200 photo: shrunk by a divisor of the box
  // shrink libvips would make (cover 250: 3 for both axes, which 1600 is not a multiple of: none), never below 4x the output.
  const cases: ['cover' | 'fill' | 'inside', number, number, [number, number]][] = [
    ['cover', 320, 0, [800, 600]], ['cover', 100, 0, [200, 150]], ['cover', 333, 0, [800, 600]], ['fill', 300, 100, [800, 600]],
    ['cover', 200, 200, [1600, 1200]], ['cover', 200, 0, [400, 300]], ['inside', 1000, 0, [1600, 1200]], ['cover', 500, 0, [1600, 1200]],
    ['cover', 250, 0, [1600, 1200]],
    // fill with one side leaves the other as it is: 100x1200, nothing to shrink
    ['fill', 100, 0, [1600, 1200]]
  ]
  for (const [fit, width, height, size] of cases) {
    const shrunk = await decode(['--fit', fit, String(width), String(height)])
    const meta = await sharp(shrunk).metadata()
    assert.deepEqual([meta.width, meta.height], size, `${fit} ${width}x${height}`)
    const options = { width, height: height || undefined, fit }
    const [a, b] = await Promise.all([full, shrunk].map(png => sharp(png).resize(options).raw().toBuffer({ resolveWithObject: true })))
    assert.deepEqual([b!.info.width, b!.info.height], [a!.info.width, a!.info.height], `${fit} ${width}x${height}: output size`)
    const worst = a!.data.reduce((max, v, i) => Math.max(max, Math.abs(v - b!.data[i]!)), 0)
    const mean = a!.data.reduce((sum, v, i) => sum + Math.abs(v - b!.data[i]!), 0) / a!.data.length
    assert.ok(worst <= 6 && mean < 0.1, `${fit} ${width}x${height}: pixels differ by ${worst} at most, ${mean.toFixed(3)} on average`)
  }
})

/**
 * A W x H HEIC, red on its left half and blue on its right, stored with an irot/imir ORIENTATION (EXIF's 1-8,
 * as phones write a photo taken sideways; heif-enc has no option for it). OUT W H ORIENTATION.
 */
const MAKE_ORIENTED_HEIC = String.raw`#include <libheif/heif.h>
#include <stdio.h>
#include <stdlib.h>
int main (int argc, char **argv) {
  struct heif_context *ctx = heif_context_alloc();
  struct heif_encoder *encoder;
  struct heif_image *image;
  int stride;
  if (argc != 5) return 64;
  int w = atoi(argv[2]), h = atoi(argv[3]);
  heif_image_create(w, h, heif_colorspace_RGB, heif_chroma_interleaved_RGB, &image);
  heif_image_add_plane(image, heif_channel_interleaved, w, h, 8);
  uint8_t *p = heif_image_get_plane(image, heif_channel_interleaved, &stride);
  for (int y = 0; y < h; y++) for (int x = 0; x < w; x++) p[y * stride + x * 3] = x < w / 2 ? 255 : 0, p[y * stride + x * 3 + 1] = 0, p[y * stride + x * 3 + 2] = x < w / 2 ? 0 : 255;
  struct heif_encoding_options *options = heif_encoding_options_alloc();
  options->image_orientation = (enum heif_orientation)atoi(argv[4]);
  if (heif_context_get_encoder_for_format(ctx, heif_compression_HEVC, &encoder).code) return 1;
  if (heif_context_encode_image(ctx, image, encoder, options, NULL).code) return 1;
  return heif_context_write_to_file(ctx, argv[1]).code ? 1 : 0;
}
`

test('a HEIC stored sideways (orientation 6) comes out upright: portrait, its left half on top', async (t) => {
  const app = await build(t)
  const name = join(dir, 'sideways.heic')
  await run(await compiled('oriented-heic', MAKE_ORIENTED_HEIC), [name, '640', '480', '6'])
  const res = await postMedia(app, 'thumbnail', readFileSync(name), 'image/heic')
  assert.equal(res.statusCode, 200, res.body)
  const meta = await decoded(res.rawPayload)
  assert.deepEqual([meta.width, meta.height], [320, 427], 'the displayed 480x640, not the coded 640x480')
  // Rotated 90° clockwise: the coded left (red) is the displayed top, the right (blue) the bottom.
  const half = async (top: number) => picture(await sharp(res.rawPayload).extract({ left: 0, top, width: 320, height: 200 }).toBuffer())
  assert.deepEqual([await half(0), await half(227)], ['red', 'blue'])
})

test('a HEIC with alpha keeps it: a PNG with 4 channels, transparent where the photo is', async (t) => {
  const app = await build(t)
  // 1600x1200, so that the default 320 px thumbnail is one heif-decode would box-shrink, were it RGB.
  const [width, height] = [1600, 1200]
  const rgba = Buffer.alloc(width * height * 4)
  for (let i = 0; i < width * height; i++) rgba.set([0, 160, 0, i % width < width / 2 ? 0 : 255], i * 4)
  await sharp(rgba, { raw: { width, height, channels: 4 } }).png().toFile(join(dir, 'alpha.png'))
  await run('heif-enc', ['-q', '60', '-o', join(dir, 'alpha.heic'), join(dir, 'alpha.png')])
  const res = await postMedia(app, 'thumbnail', readFileSync(join(dir, 'alpha.heic')), 'image/heic', '?format=png')
  assert.equal(res.statusCode, 200, res.body)
  const { data, info } = await sharp(res.rawPayload).raw().toBuffer({ resolveWithObject: true })
  assert.deepEqual([info.width, info.height, info.channels], [320, 240, 4])
  const alpha = (x: number, y: number) => data[(y * info.width + x) * 4 + 3]
  // Away from the edge, which lossy coding and lanczos3 blur.
  for (const y of [10, 120, 230]) assert.deepEqual([alpha(20, y), alpha(140, y), alpha(180, y), alpha(300, y)].map(a => a! < 8 ? 0 : a! > 247 ? 255 : a), [0, 0, 255, 255], `row ${y}`)
})

test('a photo over libheif\'s own per-side limit (MAX_INPUT_PIXELS under its width) is 413, as over the pixel limit', async (t) => {
  // heif-decode gives libheif a side limit of MAX_INPUT_PIXELS (capped): at 1000, libheif itself refuses the
  // 1600x1200 photo as the file is read, before heif-decode's own pixel check, and that must still be "too large".
  const app = await build(t, { MAX_INPUT_PIXELS: '1000' })
  const photo = join(dir, 'photo.heic')
  const res = await postMedia(app, 'thumbnail', existsSync(photo) ? readFileSync(photo) : await heic('photo'), 'image/heic')
  assert.equal(res.statusCode, 413, res.body)
  assert.equal(res.json().code, 'THUMBD_PAYLOAD_TOO_LARGE')
})

test('timeout: a HEIC decode past JOB_TIMEOUT_MS gets 504 and its heif-decode is killed', async (t) => {
  const large = await makeHeic(dir, 'large', '4000x3000', ['-q', '30', '-p', 'preset=ultrafast'])
  const app = await build(t, { JOB_TIMEOUT_MS: '100' })
  // A job's heif-decode, not heif-decode's zygote, which outlives jobs by design (frozen, it was left running: the
  // test's doing, not a lost kill).
  const heifDecoders = () => decoderProcesses().filter(p => p.comm === 'heif-decode')
  // 12 MP decodes in ~0.2 s here, so it could end by itself before anyone checks: each job's heif-decode is
  // frozen, and then only the server's kill (SIGKILL, after SIGTERM's grace) can end it.
  const frozen = new Set<number>()
  t.after(() => { for (const pid of frozen) { try { process.kill(pid, 'SIGKILL') } catch {} } })
  let answered = false
  const reply = postMedia(app, 'thumbnail', large, 'image/heic').finally(() => { answered = true })
  await waitFor(() => {
    for (const { pid } of heifDecoders()) if (!frozen.has(pid)) { process.kill(pid, 'SIGSTOP'); frozen.add(pid) }
    return answered
  }, 20_000, 'the reply')
  const res = await reply
  assert.equal(res.statusCode, 504, res.body)
  assert.equal(res.json().code, 'THUMBD_TIMEOUT')
  await waitFor(() => heifDecoders().length === 0, 5000, 'heif-decode to be killed')
  assert.deepEqual(leftoverTempFiles(app), [])
})
