// A JPEG's header read from its segments (workers/jpeg-header.ts) says what sharp's metadata() says of it,
// for the fields render() uses; anything read otherwise is left to sharp. Photos made by ffmpeg and sharp at
// test time.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { test } from 'node:test'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { render } from '../../workers/image.ts'
import { jpegFacts, jpegHeadersRead } from '../../workers/jpeg-header.ts'
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
