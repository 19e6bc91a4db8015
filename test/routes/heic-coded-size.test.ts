// The size a HEIC item decodes to is the one its HEVC sequence parameter set (SPS) codes, not the one its ispe
// declares: heif-decode holds the SPS of every item's hvcC to its ispe and to MAX_INPUT_PIXELS before libheif
// decodes anything, and any SPS in the item's own data to the sizes the hvcCs code as libheif hands it over.
// Real heif-enc files, with their ispe or SPS rewritten (test/heif-boxes.ts).
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import sharp from 'sharp'
import { build, decoded, postMedia } from '../helper.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { decodeCountingThreads, makeHeic, refusedHeic } from '../heic-media.ts'
import { tempFolder } from '../temp-folder.ts'
import { gridHeif, parameterSets, spsEscapedAcrossHeader, spsOf, spsWithSize, tileOf, tiled, u32, withCodedSize, withInBandSps, withIspe, type Tile } from '../heif-boxes.ts'

const dir = tempFolder('thumbd-heic-coded-', { after })

after(() => assert.deepEqual(decoderChildren(), [], 'no decoder left running'))

test('an ispe that declares less than the HEVC stream codes: 422, or 413 over the pixel limit, before decoding', async (t) => {
  const photo = await makeHeic(dir, 'photo-640', '640x480')
  // 640x480 coded, 64x48 declared: decoded in full before (a 200 with a 640x480 image).
  await refusedHeic(await build(t), '640x480 as 64x48', withIspe(photo, 64, 48), 422, 'THUMBD_MEDIA_UNREADABLE')
  const app = await build(t, { MAX_INPUT_PIXELS: '100000' })
  // 320x240 declared passes the 0.1 MP limit; the 0.3 MP coded does not (before: a 422 once decoded).
  await refusedHeic(app, '640x480 as 320x240', withIspe(photo, 320, 240), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // The untouched file is over the limit by its ispe already.
  await refusedHeic(app, '640x480', photo, 413, 'THUMBD_PAYLOAD_TOO_LARGE')
})

test('an hvcC whose SPS codes another size than the ispe: 413 over the pixel limit, else 422, before decoding; the conformance window is allowed for', async (t) => {
  const app = await build(t)
  const t64 = tileOf(await makeHeic(dir, 'tile-64', '64x64'))
  const big = tileOf(await makeHeic(dir, 'big', '1200x1000'))
  // 8192x8192 (67 MP, over the default 50 MP): libde265 allocated and decoded it (~350 MB, 3 s) before the size was seen.
  await refusedHeic(app, 'an SPS of 8192x8192 for 64x64', gridHeif(withCodedSize(t64, 8192, 8192), []), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // 65528x65528 (the whole address space before): refused the same way.
  await refusedHeic(app, 'an SPS of 65528x65528 for 64x64', gridHeif(withCodedSize(t64, 65528, 65528), []), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // A real 1200x1000 stream under an ispe of 100x100: decoded in full before (a 200).
  const declaredSmall: Tile = { ...big, width: 100, height: 100 }
  await refusedHeic(app, '1200x1000 coded as 100x100', gridHeif(declaredSmall, []), 422, 'THUMBD_MEDIA_UNREADABLE')
  // Within the limit but off by more than a coding block: 120x120 for 64x64 (before: a 200).
  await refusedHeic(app, 'an SPS of 120x120 for 64x64', gridHeif(withCodedSize(t64, 120, 120), []), 422, 'THUMBD_MEDIA_UNREADABLE')
  // The same for a grid's tile: each tile's own SPS against its own ispe.
  await refusedHeic(app, 'a 2x2 grid of 120x120-coded 64x64 tiles', gridHeif(withCodedSize(t64, 120, 120), [tiled(t64, 2, 2)]), 422, 'THUMBD_MEDIA_UNREADABLE')
  // x265 codes 100x100 as 104x104 cropped by a conformance window: what the ispe says once cropped. It decodes.
  const odd = await makeHeic(dir, 'odd-100', '100x100')
  const res = await postMedia(app, 'thumbnail', odd, 'image/heic', '?format=png')
  assert.equal(res.statusCode, 200, res.body)
  const meta = await decoded(res.rawPayload)
  assert.deepEqual([meta.width, meta.height], [100, 100])
})

test('an SPS is unescaped as libde265 unescapes it, from the NAL header on: the size checked is the size it decodes', async () => {
  const t64 = tileOf(await makeHeic(dir, 'tile-64', '64x64'))
  // An SPS coding 8192x8192 behind a header ending in 00 and a 03 that only libde265 drops: read after the header,
  // as H.265 says, every field came a byte off (a garbled SPS, or with a chosen level byte a 1x1 that matched a
  // 1x1 ispe while libde265 allocated 16384x16384; the decode budget caught that one).
  const file = join(dir, 'sps-across-header.heic')
  writeFileSync(file, gridHeif(withCodedSize(t64, 8192, 8192, spsEscapedAcrossHeader), []))
  const run = await decodeCountingThreads(file, ['--threads', '1'])
  assert.equal(run.code, 3, run.stderr)
  assert.match(run.stderr, /^too large: item 100 codes 8192x8192$/m)
})

test('an SPS in the item data that codes another size than the hvcC: 422 before the picture is decoded', async (t) => {
  const app = await build(t)
  const t64 = tileOf(await makeHeic(dir, 'tile-64', '64x64'))
  const big = tileOf(await makeHeic(dir, 'big', '1200x1000'))
  // hvcC and ispe both say 64x64; the data starts with the 1200x1000 stream's own parameter sets, then its
  // slices: libde265 takes the later SPS and decoded 1200x1000 before (a 200).
  const headers = Buffer.concat(parameterSets(big.hvcC).map(nal => Buffer.concat([u32(nal.length), nal])))
  const smuggled: Tile = { ...t64, data: Buffer.concat([headers, big.data]) }
  await refusedHeic(app, '1200x1000 in the data of a 64x64 item', gridHeif(smuggled, []), 422, 'THUMBD_MEDIA_UNREADABLE')
  // An in-band SPS for 4096x4096 in a grid's tile.
  const inBand = withInBandSps(t64, spsWithSize(spsOf(t64.hvcC), 4096, 4096))
  await refusedHeic(app, 'a tile carrying an SPS of 4096x4096', gridHeif(inBand, [tiled(t64, 2, 2)]), 422, 'THUMBD_MEDIA_UNREADABLE')
})

test('an AV1 item (libheif decodes those too, in a file not branded avif): one decoding thread, and held to the pixel limit by its coded size', async () => {
  // sharp's AVIF with 'mif1' as its major brand: sniffed as HEIF, so decoded by heif-decode (libheif, dav1d).
  const avif = await sharp({ create: { width: 4000, height: 3000, channels: 3, background: '#c04020' } }).avif().toBuffer()
  avif.write('mif1', 8, 'latin1')
  const file = join(dir, 'av1.heif')
  writeFileSync(file, avif)
  // dav1d would start a thread per core of the host (3 here, on 2 cores); it decodes on libheif's thread.
  const plain = await decodeCountingThreads(file, ['--threads', '1'])
  assert.equal(plain.code, 0, plain.stderr)
  assert.ok(plain.peak <= 1, `one thread: ${plain.peak}`)
  // 12 MP coded, 400x300 declared, a 5 MP limit: dav1d refuses the frame before decoding it (before: decoded, then refused).
  writeFileSync(file, withIspe(avif, 400, 300))
  const lying = await decodeCountingThreads(file, ['--threads', '1', '--max-pixels', '5000000'])
  assert.equal(lying.code, 2, lying.stderr)
  assert.match(lying.stderr, /Frame size 4000x3000 exceeds limit 5000000/)
})
