// GET URLs convert a JPEG's RGB profile to sRGB and drop it, as imgproxy replies; where libturbojpeg decodes the
// reduced photo, Little CMS (workers/image/lcms.ts) converts its pixels. A profile lcms refuses leaves the photo to
// sharp's conversion: never a crash of the pool thread, never a 5xx. The API keeps the profile, as before.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { signedUrlPath } from '../../src/signed-urls/signature.ts'
import { turboDecode } from '../../workers/image/jpeg-decode.ts'
import { srgbFrom } from '../../workers/image/lcms.ts'
import type { JobContext, JobSettings } from '../../contract/types.ts'
import { fileOrigin } from '../file-origin.ts'
import { build, leftoverTempFiles, thumbnailOf } from '../helper.ts'

const run = promisify(execFile)

/** A smooth, saturated 2560x1600 picture (ffmpeg's test pattern) as an sRGB JPEG, untagged. */
async function srgbPhoto (): Promise<Buffer> {
  const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=2560x1600:rate=1', '-frames:v', '1',
    '-pix_fmt', 'yuvj444p', '-q:v', '2', '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1'], { encoding: 'buffer', maxBuffer: 64 << 20 })
  return stdout
}

/** The same picture in Display P3 pixels with libvips' P3 profile embedded, as a phone writes it. */
const p3Photo = async (srgb: Buffer) => sharp(srgb).withIccProfile('p3').jpeg({ quality: 95 }).toBuffer()

/** The JPEG with an APP2 ICC_PROFILE segment after its SOI whose profile is `profile`. */
function withIccSegment (jpeg: Buffer, profile: Buffer): Buffer {
  const payload = Buffer.concat([Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([1, 1]), profile])
  const header = Buffer.from([0xff, 0xe2, (payload.length + 2) >> 8, (payload.length + 2) & 0xff])
  return Buffer.concat([jpeg.subarray(0, 2), header, payload, jpeg.subarray(2)])
}

async function rgb (image: Buffer, width: number, height: number) {
  return sharp(image).resize(width, height, { fit: 'fill' }).removeAlpha().raw().toBuffer()
}

function meanDifference (a: Buffer, b: Buffer): number {
  let sum = 0
  for (let i = 0; i < a.length; i++) sum += Math.abs(a[i]! - b[i]!)
  return sum / a.length
}

test('Little CMS loads here (Debian\'s liblcms2-2, through koffi) and refuses what is not an RGB profile', async () => {
  const p3 = (await sharp(await p3Photo(await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).jpeg().toBuffer())).metadata()).icc!
  assert.ok(srgbFrom(p3) !== undefined, 'Display P3')
  for (const [name, bytes] of [['empty', Buffer.alloc(0)], ['garbage', Buffer.alloc(4000, 0x41)], ['cut short', p3.subarray(0, 200)], ['header only', p3.subarray(0, 128)]] as const) {
    assert.equal(srgbFrom(bytes), undefined, name)
  }
  // A CMYK profile (found on an RGB JPEG by a careless editor): lcms opens it, the colour space check refuses it.
  const cmyk = (await sharp({ create: { width: 8, height: 8, channels: 3, background: '#808080' } }).withIccProfile('cmyk').jpeg().toBuffer().then(b => sharp(b).metadata())).icc
  assert.ok(cmyk !== undefined && cmyk.includes('CMYK', 16, 'latin1'), 'a CMYK profile to refuse')
  assert.equal(srgbFrom(cmyk), undefined, 'not an RGB profile')
})

test('libturbojpeg decodes a P3 JPEG given its profile and Little CMS converts the reduced pixels to sRGB', async () => {
  const srgb = await srgbPhoto()
  const p3 = await p3Photo(srgb)
  const icc = (await sharp(p3).metadata()).icc!
  const ctx = { settings: { maxInputPixels: 50_000_000, jpegDecoder: 'turbojpeg', jpegShrink: 'imgproxy' } as JobSettings, signal: new AbortController().signal, deadline: Date.now() + 60_000 } satisfies JobContext
  const facts = { format: 'jpeg', space: 'srgb', channels: 3, width: 2560, height: 1600, orientation: 1, profileUsed: true }
  assert.equal(await turboDecode(p3, facts, { width: 320 }, ctx, true), undefined, 'a used profile without its bytes: sharp decodes')
  const decoded = await turboDecode(p3, facts, { width: 320 }, ctx, true, icc)
  assert.ok(decoded !== undefined && decoded.shrink === 8, 'decoded at 1/8 by libturbojpeg')
  const { data, info } = await decoded.pipeline.raw().toBuffer({ resolveWithObject: true })
  const difference = meanDifference(data, await rgb(srgb, info.width, info.height))
  assert.ok(difference < 2, `the sRGB picture's colours: ${difference.toFixed(2)} from it`)
})

test('a GET URL of a Display P3 JPEG answers sRGB pixels without a profile, as imgproxy; the API keeps P3', async (t) => {
  const srgb = await srgbPhoto()
  const p3 = await p3Photo(srgb)
  const garbled = withIccSegment(srgb, Buffer.concat([Buffer.from([0, 0, 0x10, 0]), Buffer.alloc(3000, 0x5a)]))
  const base = await fileOrigin(t, { 'p3.jpg': p3, 'garbled.jpg': garbled })
  const [key, salt] = ['aa'.repeat(32), 'bb'.repeat(32)]
  const app = await build(t, { URL_SIGNING_KEYS: key, URL_SIGNING_SALTS: salt, ALLOW_PRIVATE_SOURCES: 'true', ALLOWED_SOURCES: `${base}/` })
  const get = (name: string) => app.inject({ url: signedUrlPath(`/rs:fit:320:0/plain/${base}/${name}@png`, Buffer.from(key, 'hex'), Buffer.from(salt, 'hex')) })

  const res = await get('p3.jpg')
  assert.equal(res.statusCode, 200, res.body)
  const meta = await sharp(res.rawPayload).metadata()
  assert.deepEqual([meta.width, meta.height, meta.icc], [320, 200, undefined], 'sRGB, its profile dropped')
  const reference = await rgb(srgb, 320, 200)
  const got = await rgb(res.rawPayload, 320, 200)
  const p3Pixels = await sharp(p3).resize(320, 200, { fit: 'fill' }).keepIccProfile().raw().toBuffer()
  const [converted, unconverted] = [meanDifference(got, reference), meanDifference(p3Pixels, reference)]
  assert.ok(unconverted > 4 * converted && converted < 2, `the sRGB picture's colours: ${converted.toFixed(2)} from it, where P3's own pixels are ${unconverted.toFixed(2)} from it`)

  // The API keeps the profile (and the wide gamut) on the output, as before.
  const api = await thumbnailOf(app, p3, 'image/jpeg', '?width=320&format=png', 'image/png')
  assert.ok((await sharp(api).metadata()).icc !== undefined, 'the API keeps the P3 profile')

  // A profile lcms cannot read: sharp's path decides, as it did before; never a 5xx.
  const bad = await get('garbled.jpg')
  assert.ok(bad.statusCode < 500, `${bad.statusCode} ${bad.body}`)
  assert.deepEqual(leftoverTempFiles(app), [])
})
