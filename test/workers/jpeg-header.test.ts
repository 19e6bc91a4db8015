// A JPEG's header read from its segments (workers/image/jpeg-header.ts) says what sharp's metadata() says of it,
// for the fields render() uses; anything read otherwise is left to sharp. Photos made by ffmpeg and sharp at
// test time.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { render } from '../../workers/image/image.ts'
import { jpegFacts, jpegHeadersRead } from '../../workers/image/jpeg-header.ts'
import type { JobContext, JobSettings } from '../../contract/types.ts'

const run = promisify(execFile)

async function photo (): Promise<Buffer> {
  const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'testsrc2=size=640x400:rate=1', '-frames:v', '1',
    '-pix_fmt', 'yuvj420p', '-q:v', '3', '-c:v', 'mjpeg', '-f', 'image2pipe', 'pipe:1'], { encoding: 'buffer', maxBuffer: 64 << 20 })
  return stdout
}

async function sameAsSharp (bytes: Buffer, what: string) {
  const facts = jpegFacts(bytes)
  assert.ok(facts !== undefined, `${what}: read here`)
  const meta = await sharp(bytes).metadata()
  assert.deepEqual(
    { width: facts.width, height: facts.height, channels: facts.channels, space: facts.space, orientation: facts.orientation, icc: facts.icc?.toString('hex') },
    { width: meta.width, height: meta.height, channels: meta.channels, space: meta.space, orientation: meta.orientation ?? 1, icc: meta.icc?.toString('hex') }, what)
}

test('the header sharp\'s metadata() reads: sides, channels, space, EXIF orientation 1-8, ICC profiles', async () => {
  const base = await photo()
  await sameAsSharp(base, 'ffmpeg\'s JPEG, no EXIF')
  for (let orientation = 1; orientation <= 8; orientation++) {
    await sameAsSharp(await sharp(base).withMetadata({ orientation }).jpeg({ quality: 90 }).toBuffer(), `orientation ${orientation}`)
  }
  await sameAsSharp(await sharp(base).withIccProfile('srgb').jpeg().toBuffer(), 'sRGB profile')
  await sameAsSharp(await sharp(base).withIccProfile('p3').withMetadata({ orientation: 6 }).jpeg({ progressive: true }).toBuffer(), 'Display P3, progressive, turned')
  await sameAsSharp(await sharp(base).greyscale().toColourspace('b-w').jpeg().toBuffer(), 'grey')
  await sameAsSharp(await sharp(base).toColourspace('cmyk').jpeg().toBuffer(), 'CMYK')
})

test('headers read otherwise than libvips might are left to sharp', async () => {
  const turned = await sharp(await photo()).withMetadata({ orientation: 6 }).jpeg().toBuffer()
  const exifAt = turned.indexOf(Buffer.from('Exif\0\0', 'latin1')) - 4
  const exifEnd = exifAt + 2 + turned.readUInt16BE(exifAt + 2)
  const twice = Buffer.concat([turned.subarray(0, exifEnd), turned.subarray(exifAt, exifEnd), turned.subarray(exifEnd)])
  assert.equal(jpegFacts(twice), undefined, 'two Exif segments')
  const nine = Buffer.from(turned)
  const tag = nine.indexOf(Buffer.from([0x12, 0x01, 0x03, 0x00]), exifAt)
  assert.ok(tag > 0)
  nine.writeUInt16LE(9, tag + 8)
  assert.equal(jpegFacts(nine), undefined, 'orientation 9')
  assert.equal(jpegFacts(turned.subarray(0, exifAt + 20)), undefined, 'cut inside its EXIF')
  assert.equal(jpegFacts(await sharp(turned).png().toBuffer()), undefined, 'a PNG')
})

test('render() reads a JPEG\'s header here for libturbojpeg, not for JPEG_DECODER=sharp', async () => {
  const bytes = await sharp(await photo()).withMetadata({ orientation: 3 }).jpeg().toBuffer()
  const ctx = (jpegDecoder: JobSettings['jpegDecoder']): JobContext => ({ settings: { maxInputPixels: 50_000_000, maxAnimationFrames: 100, jpegDecoder, jpegShrink: 'quality' } as JobSettings, signal: new AbortController().signal, deadline: Date.now() + 60_000 })
  const options = { width: 160, fit: 'cover', format: 'png', quality: 80, withoutEnlargement: true } as const
  const before = jpegHeadersRead()
  const turbo = await render({ bytes }, options, ctx('turbojpeg'))
  assert.equal(jpegHeadersRead() - before, 1)
  const reference = await render({ bytes }, options, ctx('sharp'))
  assert.equal(jpegHeadersRead() - before, 1)
  assert.deepEqual([turbo.width, turbo.height], [reference.width, reference.height])
  const [a, b] = await Promise.all([turbo.data, reference.data].map(data => sharp(data).raw().toBuffer()))
  assert.ok(a!.equals(b!), 'the same thumbnail, turned the same way')
  await assert.rejects(render({ bytes: bytes.subarray(0, 400) }, options, ctx('turbojpeg')), (err: { code?: string }) => err.code === 'MEDIA_UNREADABLE')
})

/** `jpeg` with `segments` (marker and payload each) inserted after its SOI. */
function withSegments (jpeg: Buffer, ...segments: Array<[number, Buffer]>): Buffer {
  const encoded = segments.map(([marker, payload]) => {
    const head = Buffer.from([0xff, marker, 0, 0])
    head.writeUInt16BE(payload.length + 2, 2)
    return Buffer.concat([head, payload])
  })
  return Buffer.concat([jpeg.subarray(0, 2), ...encoded, jpeg.subarray(2)])
}

/** A little-endian TIFF whose IFD0 holds one Orientation. */
function tiffWithOrientation (orientation: number): Buffer {
  const tiff = Buffer.alloc(26)
  tiff.write('II', 0, 'latin1')
  tiff.writeUInt16LE(42, 2)
  tiff.writeUInt32LE(8, 4)
  tiff.writeUInt16LE(1, 8)
  tiff.writeUInt16LE(0x0112, 10)
  tiff.writeUInt16LE(3, 12)
  tiff.writeUInt32LE(1, 14)
  tiff.writeUInt16LE(orientation, 18)
  return tiff
}

test('segments libvips reads and this reader would not (a decoy Exif, an ICC marker\'s variants) leave the header to sharp, and no output limit is checked on the wrong shape', async () => {
  const exif = (prefix: string, orientation: number): [number, Buffer] => [0xe1, Buffer.concat([Buffer.from(prefix, 'latin1'), tiffWithOrientation(orientation)])]
  const base = await photo()
  // libvips takes the first APP1 that starts "Exif", however it goes on: orientation 1 for it, not this reader's 6.
  const decoy = withSegments(base, exif('Exif\0\x01', 1), exif('Exif\0\0', 6))
  assert.equal((await sharp(decoy).metadata()).orientation ?? 1, 1)
  assert.equal(jpegFacts(decoy), undefined, 'a decoy Exif segment before the real one')
  const p3 = (await sharp(base).withIccProfile('p3').jpeg().toBuffer())
  const iccAt = p3.indexOf(Buffer.from('ICC_PROFILE\0', 'latin1'))
  const renamed = Buffer.from(p3)
  renamed[iccAt + 11] = 0x58 // "ICC_PROFILEX": libvips still reads the profile
  assert.ok((await sharp(renamed).metadata()).icc !== undefined)
  assert.equal(jpegFacts(renamed), undefined, 'an "ICC_PROFILE" marker that is not exactly it')
  const emptyFirst = withSegments(base, [0xe2, Buffer.concat([Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([1, 2])])], [0xe2, Buffer.concat([Buffer.from('ICC_PROFILE\0', 'latin1'), Buffer.from([2, 2]), Buffer.alloc(200, 1)])])
  assert.equal(jpegFacts(emptyFirst), undefined, 'a chunk with no profile bytes')

  // The decoy on a tall CMYK photo (libturbojpeg declines CMYK: sharp decodes it). The output's sides are
  // checked on libvips' reading: 400 px wide is 16,000 tall, over MAX_OUTPUT_SIDE, refused as without the decoy.
  const tall = await sharp({ create: { width: 100, height: 4000, channels: 3, background: '#c04020' } }).toColourspace('cmyk').jpeg().toBuffer()
  const ctx: JobContext = { settings: { maxInputPixels: 50_000_000, maxAnimationFrames: 100, jpegDecoder: 'turbojpeg', jpegShrink: 'quality' } as JobSettings, signal: new AbortController().signal, deadline: Date.now() + 60_000 }
  const options = { width: 400, fit: 'inside', format: 'png', quality: 80, withoutEnlargement: false } as const
  for (const bytes of [tall, withSegments(tall, exif('Exif\0\x01', 1), exif('Exif\0\0', 6))]) {
    await assert.rejects(render({ bytes }, options, ctx), (err: { code?: string }) => err.code === 'BAD_OPTIONS')
  }
})
