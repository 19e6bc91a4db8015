// IMAGE_DECODER=sandbox gives the thumbnails sharp's in-process decode gives, sample for sample, for
// tagged and untagged stills of every format the sandbox takes: a Display P3 and an Adobe RGB-like profile attached
// by sharp (kept on the output, or converted for a GET-URL-style convert), 16-bit PNG, palette PNG with tRNS,
// grey+alpha, WebP lossless with alpha (and a lossy one scaled on load), a GIF's first frame, 10-bit AVIF, an
// EXIF-turned PNG, and JPEGs (Display P3, CMYK, EXIF-turned, untagged: reduced on load or not). Each reply is compared
// after both are decoded to sRGB RGBA by sharp.
import assert from 'node:assert/strict'
import { execFileSync } from 'node:child_process'
import { existsSync } from 'node:fs'
import { test } from 'node:test'
import sharp from 'sharp'
import { IMAGE_DECODE_FILE } from '../../../workers/tools/sandbox.ts'
import { AUTH, build } from '../../helper.ts'

const built = existsSync(IMAGE_DECODE_FILE)

/** A photo-like picture (ffmpeg's testsrc2, with noise), PNG. */
function photo (width: number, height: number): Buffer {
  return execFileSync('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', `testsrc2=size=${width}x${height}:rate=1`, '-frames:v', '1', '-vf', 'noise=alls=12:allf=u', '-f', 'image2pipe', '-c:v', 'png', 'pipe:1'], { maxBuffer: 1 << 28 })
}

/** The largest difference of any sample, and the mean, between two images decoded to sRGB RGBA at the same size. */
async function difference (a: Buffer, b: Buffer): Promise<{ max: number, mean: number, sizes: string }> {
  const [x, y] = await Promise.all([a, b].map(img => sharp(img).toColourspace('srgb').ensureAlpha().raw().toBuffer({ resolveWithObject: true })))
  const sizes = `${x!.info.width}x${x!.info.height} ${y!.info.width}x${y!.info.height}`
  if (x!.data.length !== y!.data.length) return { max: 255, mean: 255, sizes }
  let max = 0
  let sum = 0
  for (let i = 0; i < x!.data.length; i++) {
    const d = Math.abs(x!.data[i]! - y!.data[i]!)
    sum += d
    if (d > max) max = d
  }
  return { max, mean: sum / x!.data.length, sizes }
}

test('IMAGE_DECODER=sandbox: the same thumbnails as sharp in-process, tagged or not, every format and depth', { skip: !built && 'native/image-decode not built' }, async (t) => {
  const base = photo(640, 480)
  const alpha = await sharp(base).ensureAlpha().composite([{ input: Buffer.from('<svg width="640" height="480"><circle cx="320" cy="240" r="150" fill="#fff" fill-opacity="0.4"/></svg>'), blend: 'dest-out' }]).png().toBuffer()
  const inputs: Record<string, Buffer> = {
    'png untagged': await sharp(base).png().toBuffer(),
    'png display p3': await sharp(base).withIccProfile('p3').png().toBuffer(),
    'png 16-bit': await sharp(base).toColourspace('rgb16').png().toBuffer(),
    'png 16-bit display p3': await sharp(base).toColourspace('rgb16').withIccProfile('p3').png().toBuffer(),
    'png palette with tRNS': await sharp(alpha).png({ palette: true }).toBuffer(),
    'png grey+alpha': await sharp(alpha).toColourspace('b-w').png().toBuffer(),
    'png EXIF orientation 6': await sharp(base).withExif({ IFD0: { Orientation: '6' } }).png().toBuffer(),
    'webp lossy': await sharp(photo(1600, 1200)).webp({ quality: 85 }).toBuffer(),
    'webp lossless with alpha': await sharp(alpha).webp({ lossless: true }).toBuffer(),
    'webp display p3': await sharp(base).withIccProfile('p3').webp({ quality: 90 }).toBuffer(),
    gif: await sharp(base).gif().toBuffer(),
    'avif 10-bit': await sharp(base).avif({ quality: 70, bitdepth: 10 }).toBuffer(),
    'avif display p3': await sharp(base).withIccProfile('p3').avif({ quality: 70 }).toBuffer(),
    // JPEGs libturbojpeg's path does not take (a profile, CMYK, a quarter turn with both sides, no reduction):
    // decoded by image-decode's --still jpeg, their colour converted there.
    'jpeg display p3': await sharp(base).withIccProfile('p3').jpeg({ quality: 90 }).toBuffer(),
    'jpeg cmyk': await sharp(base).toColourspace('cmyk').jpeg({ quality: 90 }).toBuffer(),
    'jpeg EXIF orientation 6': await sharp(base).withExif({ IFD0: { Orientation: '6' } }).jpeg({ quality: 90 }).toBuffer(),
    'jpeg untagged': await sharp(base).jpeg({ quality: 90 }).toBuffer()
  }
  const inProcess = await build(t, { POOL_THREADS: '1' })
  const sandboxed = await build(t, { POOL_THREADS: '1', IMAGE_DECODER: 'sandbox' })
  assert.ok(sandboxed.mediaTools.imageDecodeStills, 'image-decode has its PNG, WebP and GIF decoders here')
  for (const [name, body] of Object.entries(inputs)) {
    for (const query of ['width=200&format=png', 'width=300&height=300&fit=cover&format=jpeg', 'width=160&format=webp', 'width=600&format=png']) {
      const post = (app: typeof inProcess) => app.inject({ method: 'POST', url: `/api/thumbnail?${query}`, headers: { ...AUTH, 'content-type': 'application/octet-stream' }, payload: body })
      const [a, b] = await Promise.all([post(inProcess), post(sandboxed)])
      assert.equal(a.statusCode, 200, `${name} ${query} in-process: ${a.body}`)
      assert.equal(b.statusCode, 200, `${name} ${query} sandbox: ${b.body}`)
      const [metaA, metaB] = await Promise.all([sharp(a.rawPayload).metadata(), sharp(b.rawPayload).metadata()])
      assert.equal(metaB.icc !== undefined, metaA.icc !== undefined, `${name} ${query}: a profile on both or neither`)
      const { max, mean, sizes } = await difference(a.rawPayload, b.rawPayload)
      t.diagnostic(`${name.padEnd(24)} ${query.padEnd(44)} max ${max} mean ${mean.toFixed(3)}`)
      // The sandbox decodes with sharp's own libvips and loader options: the very same pixels, not close ones.
      assert.ok(max === 0, `${name} ${query}: ${sizes} differ by ${max} at most, ${mean.toFixed(2)} on average`)
    }
  }
})
