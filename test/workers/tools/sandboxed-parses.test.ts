// IMAGE_DECODER=sandbox: the parses that reached sharp in the pool thread by other ways than an upload's thumbnail go
// to native/image-decode too, with the very same answers as in-process:
// - /api/info's header read (image-decode --info, workers/image/header-sandboxed.ts), for every format and flag
//   it reports; a read frozen in its decoder is killed at the deadline;
// - the PNG heif-decode makes of a HEIC, an audio file's cover art, a JPEG's fingerprints (/api/hash): the same
//   pixels and fingerprints.
// "Taken" is shown by the decoder processes seen (/proc, every millisecond) while each request runs: with the
// sandbox one writing pixels (over 64 KB, not a header), none in-process; each input is large enough to be seen at it.
import assert from 'node:assert/strict'
import { execFile, execFileSync } from 'node:child_process'
import { existsSync, readFileSync, writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { gifOf, webpOf } from '../../animated-media.ts'
import { makeHeic } from '../../heic-media.ts'
import { build, leftoverTempFiles, postMedia } from '../../helper.ts'
import { tempFolder } from '../../temp-folder.ts'
import { gone } from '../../faults/helpers.ts'
import { decodersSeenDuring, firstDecoders, pixelsDecodedDuring, PIXELS_WRITTEN } from './decoder-probe.ts'

const run = promisify(execFile)
const built = existsSync(IMAGE_DECODE_FILE)

/** A noisy picture sharp makes, as PNG or JPEG: slow enough to decode to be seen at it. */
function noisy (side: number) {
  return sharp({ create: { width: side, height: side, channels: 3, background: '#808080', noise: { type: 'gaussian', mean: 128, sigma: 40 } } })
}

test('/api/info with IMAGE_DECODER=sandbox: the header read in image-decode, the same answer as in-process for every format; frozen, it is killed at the deadline', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const dir = tempFolder('thumbd-info-sandbox-', t)
  const base = sharp({ create: { width: 400, height: 300, channels: 3, background: '#336699' } })
  const inputs: Record<string, Buffer> = {
    'jpeg EXIF 6': await base.clone().withExif({ IFD0: { Orientation: '6' } }).jpeg().toBuffer(),
    'jpeg cmyk with a profile': await base.clone().toColourspace('cmyk').jpeg().toBuffer(),
    'png palette': await base.clone().png({ palette: true }).toBuffer(),
    'png 16-bit grey+alpha': await base.clone().ensureAlpha(0.5).toColourspace('grey16').png().toBuffer(),
    'png EXIF 8': await base.clone().withExif({ IFD0: { Orientation: '8' } }).png().toBuffer(),
    'gif of 7 frames': gifOf({ width: 40, height: 30, frames: 7 }),
    'webp of 3 frames': await webpOf(40, 30, 3),
    'webp lossless with alpha': await base.clone().ensureAlpha(0.5).webp({ lossless: true }).toBuffer(),
    avif: await base.clone().avif({ effort: 0 }).toBuffer(),
    heic: await makeHeic(dir, 'info', '640x480'),
    // A profile stored compressed: larger than the whole file.
    'png 1x1 with a profile': await sharp({ create: { width: 1, height: 1, channels: 3, background: '#336699' } }).withIccProfile('srgb').png().toBuffer()
  }
  const inProcess = await build(t, { POOL_THREADS: '1' })
  const sandboxed = await build(t, { POOL_THREADS: '1', IMAGE_DECODER: 'sandbox', JOB_TIMEOUT_MS: '3000' })
  for (const [name, body] of Object.entries(inputs)) {
    const [a, b] = await Promise.all([postMedia(inProcess, 'info', body), postMedia(sandboxed, 'info', body)])
    assert.equal(a.statusCode, 200, `${name}: ${a.body}`)
    assert.deepEqual(b.json(), a.json(), name)
  }
  // The pixel limit, as sharp's limitInputPixels: 413 from both.
  const limited = await build(t, { POOL_THREADS: '1', IMAGE_DECODER: 'sandbox', MAX_INPUT_PIXELS: '1000' })
  assert.equal((await postMedia(limited, 'info', inputs['png palette']!)).statusCode, 413)
  // A million frames: the header read counts them all (~0.1 s), long enough to be seen.
  const many = gifOf({ width: 1, height: 1, frames: 1_000_000 })
  assert.equal((await decodersSeenDuring(postMedia(inProcess, 'info', many))).seen, 0, 'in-process: no decoder process')
  const { seen, result } = await decodersSeenDuring(postMedia(sandboxed, 'info', many))
  assert.ok(seen >= 1, 'sandbox: the header is read by an image-decode process')
  assert.equal(result.json().pages, 1_000_000)
  // Frozen as soon as it is seen: only the deadline's kill ends it.
  const frozen = postMedia(sandboxed, 'info', many)
  const pids = await firstDecoders()
  assert.equal(pids.length, 1, 'the header read is a process of its own')
  process.kill(pids[0]!, 'SIGSTOP')
  const timedOut = await frozen
  assert.equal(timedOut.statusCode, 504, timedOut.body)
  assert.ok(await gone(pids[0]!), 'the frozen decoder was killed')
  assert.equal((await postMedia(sandboxed, 'info', inputs.avif!)).statusCode, 200, 'the thread takes the next job')
  assert.deepEqual(leftoverTempFiles(sandboxed), [])
})

test('a HEIC\'s decoded PNG, an audio file\'s cover art and a JPEG\'s fingerprints are decoded in image-decode with IMAGE_DECODER=sandbox: the same pixels and fingerprints', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const dir = tempFolder('thumbd-parses-sandbox-', t)
  const cover = join(dir, 'cover.png')
  writeFileSync(cover, await noisy(3000).png({ compressionLevel: 1 }).toBuffer())
  // Display P3 whose description says sRGB: thumbnails drop a profile that names sRGB unread (image.ts
  // colourHandling), but the fingerprints' decode reads every profile, so this one must be converted.
  const p3 = (await sharp({ create: { width: 1, height: 1, channels: 3, background: '#fff' } }).withIccProfile('p3').png().toBuffer())
  const named = join(dir, 'p3-named-srgb.icc')
  writeFileSync(named, Buffer.from((await sharp(p3).metadata()).icc!.toString('latin1').replace('P\u00003\u0000C', 'R\u0000G\u0000B'), 'latin1'))
  const vivid = () => sharp(execFileSync('ffmpeg', ['-v', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=4000x3000', '-frames:v', '1', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'], { maxBuffer: 1 << 28 })).withIccProfile(named)
  await run('ffmpeg', ['-v', 'error', '-y', '-f', 'lavfi', '-i', 'sine=d=1', '-i', cover, '-map', '0', '-map', '1', '-c:a', 'libmp3lame', '-c:v', 'copy', '-id3v2_version', '3', '-disposition:v', 'attached_pic', join(dir, 'cover.mp3')])
  const cases: Array<[string, string, Buffer, string]> = [
    // Thumbnails large enough to be seen written: the decoder resizes them (decoder-resize.test.ts), and writes the
    // first of its rows of tiles only once that many rows are computed.
    ['HEIC thumbnail', 'thumbnail', await makeHeic(dir, 'photo', '3000x2000'), '?width=600&format=png'],
    ['MP3 cover thumbnail', 'thumbnail', readFileSync(join(dir, 'cover.mp3')), '?width=600&format=png'],
    ['MP3 cover fingerprints', 'hash', readFileSync(join(dir, 'cover.mp3')), ''],
    ['JPEG fingerprints', 'hash', await noisy(6000).withIccProfile('p3').jpeg({ quality: 95 }).toBuffer(), ''],
    ['JPEG fingerprints, a P3 profile named sRGB', 'hash', await vivid().jpeg({ quality: 95 }).toBuffer(), ''],
    ['PNG fingerprints, a P3 profile named sRGB', 'hash', await vivid().png({ compressionLevel: 1 }).toBuffer(), '']
  ]
  const inProcess = await build(t, { POOL_THREADS: '1' })
  const sandboxed = await build(t, { POOL_THREADS: '1', IMAGE_DECODER: 'sandbox' })
  for (const [name, route, body, query] of cases) {
    const a = await decodersSeenDuring(postMedia(inProcess, route, body, 'application/octet-stream', query))
    const b = await pixelsDecodedDuring(() => postMedia(sandboxed, route, body, 'application/octet-stream', query))
    assert.equal(a.result.statusCode, 200, `${name}: ${a.result.body.slice(0, 300)}`)
    assert.equal(b.result.statusCode, 200, `${name}: ${b.result.body.slice(0, 300)}`)
    if (route === 'hash') {
      assert.notEqual(a.result.json().perceptual, null, `${name}: fingerprinted`)
      assert.deepEqual(b.result.json(), a.result.json(), `${name}: the very same fingerprints`)
    } else {
      // The very same pixels (a PNG of raw pixels carries no pHYs density, one of the decoded PNG does: 72 dpi either way).
      const [x, y] = await Promise.all([a, b].map(async ({ result }) => await sharp(result.rawPayload).raw().toBuffer({ resolveWithObject: true })))
      assert.deepEqual(y!.info, x!.info, name)
      assert.ok(y!.data.equals(x!.data), `${name}: the very same pixels`)
    }
    assert.equal(a.seen, 0, `${name}: in-process, no image-decode process`)
    // Its pixels, not only a header read (--info writes 48 bytes and the profile: a few hundred here).
    assert.ok(b.written > PIXELS_WRITTEN, `${name}: sandbox, decoded by an image-decode process (${b.seen} seen, ${b.written} bytes written)`)
  }
  assert.deepEqual(leftoverTempFiles(sandboxed), [])
})
