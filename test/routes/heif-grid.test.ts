// HEIF 'grid' images (how iPhones store a photo: 512x512 HEVC tiles pasted on a canvas), written box by box
// (test/heif-boxes.ts), since neither heif-enc nor libheif 1.15's API writes grids: one real tile from heif-enc,
// named by a grid item any number of times. A valid grid decodes; hostile ones (a grid among its own tiles, thousands of tile
// references, a canvas larger than the image declares) are refused by heif-decode's own guards, fast.
import assert from 'node:assert/strict'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { after, test } from 'node:test'
import sharp from 'sharp'
import { build, decoded, leftoverTempFiles, postMedia } from '../helper.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { slowdown } from '../busy-machine.ts'
import { decodeCountingThreads, makeHeic } from '../heic-media.ts'
import { tempFolder } from '../temp-folder.ts'
import { TILE, box, decoy, gridHeif, tileOf, tiled, u32, type Grid, type Tile } from '../heif-boxes.ts'

const dir = tempFolder('thumbd-heif-grid-', { after })

after(() => assert.deepEqual(decoderChildren(), [], 'no decoder left running'))

/** A SIZE x SIZE picture as heif-enc's HEIC, reduced to its one tile (its PNG stays in dir as tile-SIZE.png). */
const tile = async (size: number): Promise<Tile> => tileOf(await makeHeic(dir, `tile-${size}`, `${size}x${size}`))

/** A SIZE x SIZE noise picture as sharp's AVIF (libheif 1.15 decodes 'av01' items in any HEIF, with dav1d), reduced to its one item. */
async function av1Tile (size: number): Promise<Tile> {
  const noise = Buffer.alloc(size * size * 3)
  for (let i = 0; i < noise.length; i++) noise[i] = (i * 2654435761) >>> 24
  return tileOf(await sharp(noise, { raw: { width: size, height: size, channels: 3 } }).avif({ quality: 60, effort: 0 }).toBuffer())
}

/**
 * For the refusals that decode part of a file first: JOB_TIMEOUT_MS as long as the suite's per-test timeout, so
 * that on a busy machine refused() judges their time by its scaled budget (a 504 at the default 30 s cut the AV1
 * overlay's refusal short beside stress-ng and other suites, load ~20).
 */
const DECODING_DEADLINE = { JOB_TIMEOUT_MS: '120000' }

// ---- the tests ----

/**
 * A hostile grid's reply: `status` and `code`, in under 5 s (times how much slower than quiet the machine is
 * now), with no heif-decode left running and no temp file left.
 */
async function refused (app: Awaited<ReturnType<typeof build>>, name: string, body: Buffer, status: number, code: string) {
  const budgetMs = Math.round(5000 * await slowdown(app))
  const started = Date.now()
  const res = await postMedia(app, 'thumbnail', body, 'image/heic')
  // A JSON error, or the thumbnail's type had the image got through.
  const json = String(res.headers['content-type']).includes('json')
  assert.equal(res.statusCode, status, `${name}: ${json ? res.body : res.headers['content-type']}`)
  assert.equal(res.json().code, code, name)
  assert.ok(Date.now() - started < budgetMs, `${name}: answered in ${Date.now() - started} ms (budget ${budgetMs} ms)`)
  assert.deepEqual(decoderChildren(), [], `${name}: no heif-decode left running`)
  assert.deepEqual(leftoverTempFiles(app), [], `${name}: no temp file left`)
  return res
}

test('a 2x2 grid of HEVC tiles, as iPhones write, thumbnails: the writer makes grids libheif decodes', async (t) => {
  const app = await build(t)
  const t64 = await tile(64)
  const res = await postMedia(app, 'thumbnail', gridHeif(t64, [tiled(t64, 2, 2)]), 'image/heic', '?width=128&format=png')
  assert.equal(res.statusCode, 200, res.body)
  const meta = await decoded(res.rawPayload)
  assert.deepEqual([meta.width, meta.height], [128, 128])
  // Each quarter is the tile: the pasted pixels, not an empty canvas.
  const source = await sharp(join(dir, 'tile-64.png')).raw().toBuffer()
  for (const [left, top] of [[0, 0], [64, 0], [0, 64], [64, 64]]) {
    const quarter = await sharp(res.rawPayload).extract({ left, top, width: 64, height: 64 }).removeAlpha().raw().toBuffer()
    const diff = quarter.reduce((sum, v, i) => sum + Math.abs(v - source[i]!), 0) / quarter.length
    assert.ok(diff < 16, `quarter at ${left},${top}: mean difference ${diff.toFixed(1)} from the tile`)
  }
  assert.deepEqual(leftoverTempFiles(app), [])
})

test('a grid among its own tiles: 422 from heif-decode itself, fast, nothing left', async (t) => {
  const app = await build(t)
  const t64 = await tile(64)
  // libheif 1.15 decodes a grid's tiles as they are named: one naming itself recurses until the job times out.
  const self = tiled(t64, 2, 2)
  self.dimg[3] = 1
  const res = await refused(app, 'a grid naming itself', gridHeif(t64, [self]), 422, 'THUMBD_MEDIA_UNREADABLE')
  assert.match(res.json().message, /the HEIF decoder rejected this image$/, 'refused, not a decoder crash')
})

test('a grid whose tile is another grid: 422, fast, nothing left', async (t) => {
  const app = await build(t)
  const t64 = await tile(64)
  // The inner 2x2 grid is valid and libheif 1.15 would decode the pair; no camera writes one, and nesting is
  // the way to multiply the tiles decoded, so a derived image as an input is refused.
  const outer: Grid = { ispe: [128, 128], canvas: [128, 128], rows: 1, columns: 1, dimg: [2] }
  await refused(app, 'a grid of grids', gridHeif(t64, [outer, tiled(t64, 2, 2)]), 422, 'THUMBD_MEDIA_UNREADABLE')
})

test('thousands of tile references: 413, before any tile is decoded', async (t) => {
  const app = await build(t)
  const t64 = await tile(64)
  // A valid 3200x2560 grid of 40 x 50 references to one 64x64 tile: 2000 tile decodes (libheif 1.15 makes
  // them all, ~1.3 s here) where 564 are allowed (64, plus 1 per 128x128 pixels).
  await refused(app, '2000 tiles of 64x64', gridHeif(t64, [tiled(t64, 40, 50)]), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // The same references on a 64x64 canvas: counted before libheif would call the grid invalid.
  await refused(app, '2000 tiles on 64x64', gridHeif(t64, [tiled(t64, 40, 50, [64, 64])]), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
})

test('a grid canvas larger than its declared size, or than the pixel limit: 413 before it is allocated, 422 after', async (t) => {
  const app = await build(t, { MAX_INPUT_PIXELS: '1000000' })
  const t64 = await tile(64)
  // 60000x60000 declared: over the pixel limit before anything is decoded.
  await refused(app, '60000x60000', gridHeif(t64, [tiled(t64, 1, 1, [60000, 60000])]), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // A 64x64 image (ispe) whose canvas is 4000x4000 (16 MP): libheif 1.15 allocates the canvas ImageGrid
  // names, whatever ispe said; heif-decode limits its sides to the declared ones.
  await refused(app, '64x64 with a 4000x4000 canvas', gridHeif(t64, [tiled(t64, 1, 1, [4000, 4000], [64, 64])]), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // Within that side limit (1200x16 declared, well under the pixel limit; a 1200x1000 canvas of 20 tiles): their
  // 1.3 MP pass 4 x the declared image and a tile, so the decode stops at the sixth tile (413; before: 422 once
  // all 20 were decoded).
  const t256 = await tile(256)
  await refused(app, '1200x16 with a 1200x1000 canvas', gridHeif(t256, [tiled(t256, 4, 5, [1200, 1000], [1200, 16])]), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // 1200x250 declared (0.3 MP): the same tiles fit that budget; the 1.2 MP canvas is over the 1 MP limit and
  // refused once decoded, before any PNG is written.
  const wide = gridHeif(t256, [tiled(t256, 4, 5, [1200, 1000], [1200, 250])])
  const res = await refused(app, '1200x250 with a 1200x1000 canvas', wide, 422, 'THUMBD_MEDIA_UNREADABLE')
  assert.match(res.json().message, /the HEIF decoder rejected this image$/, 'refused by heif-decode, not cut short as too much output')
})

test('a decoy meta after the real one (size 0, which libheif stops at, or a second one): 422 before libheif reads either', async (t) => {
  const app = await build(t, { JOB_TIMEOUT_MS: '10000' })
  const t64 = await tile(64)
  const self = tiled(t64, 2, 2)
  self.dimg[3] = 1
  const outer: Grid = { ispe: [128, 128], canvas: [128, 128], rows: 1, columns: 1, dimg: [2] }
  // heif-decode read the last meta, libheif 1.15 the one before a size-0 box: the decoy's, with no iref, passed
  // every check while libheif decoded the hostile one (2000 tiles: 200 after decoding them all; a grid of
  // grids: 200; a grid naming itself: a 504 after JOB_TIMEOUT_MS, hundreds of threads in the sandboxed child).
  const hostile: Array<[string, Buffer]> = [
    ['2000 tile references', gridHeif(t64, [tiled(t64, 40, 50)])],
    ['a grid of grids', gridHeif(t64, [outer, tiled(t64, 2, 2)])],
    ['a grid naming itself', gridHeif(t64, [self])]
  ]
  for (const [name, file] of hostile) {
    const res = await refused(app, `${name}, then a size-0 meta`, Buffer.concat([file, decoy()]), 422, 'THUMBD_MEDIA_UNREADABLE')
    assert.match(res.json().message, /the HEIF decoder rejected this image$/, name)
  }
  // A valid grid followed by a second meta (libheif would read that one), or by a meta cut short.
  const valid = gridHeif(t64, [tiled(t64, 2, 2)])
  const decoyMeta = box('meta', u32(0), box('free'))
  for (const [name, tail] of [['a second meta', decoyMeta], ['a meta cut short', decoyMeta.subarray(0, 12)]] as const) {
    await refused(app, `a valid grid, then ${name}`, Buffer.concat([valid, tail]), 422, 'THUMBD_MEDIA_UNREADABLE')
  }
  // A last mdat of size 0 (to the end of the file, as streaming writers leave it) is no decoy: libheif reads the
  // same meta, and so does heif-decode.
  const open = Buffer.from(valid)
  open.writeUInt32BE(0, open.lastIndexOf('mdat', undefined, 'latin1') - 4)
  const res = await postMedia(app, 'thumbnail', open, 'image/heic', '?width=128&format=png')
  assert.equal(res.statusCode, 200, res.body)
})

test('bytes after the last box where libheif 1.15 stops reading (zero padding, a box cut short): decoded, as libheif decodes them', async (t) => {
  const app = await build(t)
  const t64 = await tile(64)
  const valid = gridHeif(t64, [tiled(t64, 2, 2)])
  // libheif stops at the first top-level box that is not whole, silently, and decodes what it read before; heif-decode
  // refused these with a 422. A meta behind such a stop is read by neither.
  const tails: Array<[string, Buffer]> = [
    ['4 zero bytes', Buffer.alloc(4)],
    ['1 KB of zeros (a size-0 box)', Buffer.alloc(1024)],
    ['a free box cut short', Buffer.concat([u32(100), Buffer.from('free'), Buffer.alloc(10)])],
    ['a size-0 box, then a second meta', Buffer.concat([Buffer.alloc(8), box('meta', u32(0), box('free'))])]
  ]
  for (const [name, tail] of tails) {
    const res = await postMedia(app, 'thumbnail', Buffer.concat([valid, tail]), 'image/heic', '?width=128&format=png')
    assert.equal(res.statusCode, 200, `${name}: ${res.body}`)
  }
})

test('the threads one decode starts are bounded (2 x --threads + 2 besides its main thread, or --max-threads): beyond, it stops', async () => {
  const t256 = await tile(256)
  const file = join(dir, 'grid-6x6.heic')
  writeFileSync(file, gridHeif(t256, [tiled(t256, 6, 6)]))
  // 36 tiles, 8 at once: libheif 1.15 starts a thread per tile in flight and libde265 one per decoder.
  const wide = await decodeCountingThreads(file, ['--threads', '8'])
  assert.equal(wide.code, 0, wide.stderr)
  assert.ok(wide.peak <= 1 + 18, `at most 19 threads with --threads 8: ${wide.peak}`)
  // The same decode held to 3: refused as it would start a fourth, never more than the main thread and 3 alive.
  const held = await decodeCountingThreads(file, ['--threads', '8', '--max-threads', '3'])
  assert.equal(held.code, 2, held.stderr)
  assert.match(held.stderr, /^too many decoding threads \(over 3\)$/m)
  assert.ok(held.peak <= 1 + 3, `at most 4 threads: ${held.peak}`)
})

test('an overlay naming one large item many times: 413 once the pixels decoded pass 4 x the image and that item, not after all of them', async (t) => {
  const app = await build(t, DECODING_DEADLINE)
  const t256 = await tile(256)
  // An iovl (libheif 1.15 decodes each input whole, wherever it lies) of 120 references to one 256x256 item on a
  // 1024x1024 canvas: within the 64 + 1 per 128x128 references, 7.9 MP of decoding for a 1 MP image (before: a
  // 200 after all 120; on a 4096x4096 canvas, 1088 references to a 16 MP item: minutes of CPU). Allowed here:
  // 4 x (1 MP + 64 KP), 65 decodes.
  const overlay: Grid = { ispe: [1024, 1024], canvas: [1024, 1024], rows: 1, columns: 1, dimg: Array(120).fill(TILE), overlay: true }
  await refused(app, '120 overlay inputs', gridHeif(t256, [overlay]), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // A few, as an overlay is meant: decoded.
  const res = await postMedia(app, 'thumbnail', gridHeif(t256, [{ ...overlay, dimg: Array(4).fill(TILE) }]), 'image/heic', '?format=png')
  assert.equal(res.statusCode, 200, res.body)
})

test('an overlay naming one AV1 item many times: held to the same budget as HEVC pictures (4 x the image: 16 of its 128 inputs), 413', async (t) => {
  const app = await build(t, DECODING_DEADLINE)
  const av1 = await av1Tile(1024)
  // libheif 1.15 decodes 'av01' items (dav1d) in a file branded heic too, and the budget counted only HEVC SPSs:
  // 128 references (within 64 + 1 per 128x128) to one 1 MP AV1 item on a 2048x2048 canvas decoded all 128 (a
  // 200 after ~4 s; 320 to a 2048x2048 item: 74 s). Now each AV1 frame counts as it is allocated, before it is
  // decoded: 4 x 4 MP allows 16.
  const overlay: Grid = { ispe: [2048, 2048], canvas: [2048, 2048], rows: 1, columns: 1, dimg: Array(128).fill(TILE), overlay: true }
  await refused(app, '128 AV1 overlay inputs', gridHeif(av1, [overlay]), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  // A few: decoded, as are AV1 grids.
  const res = await postMedia(app, 'thumbnail', gridHeif(av1, [{ ...overlay, dimg: Array(4).fill(TILE) }]), 'image/heic', '?format=png')
  assert.equal(res.statusCode, 200, res.body)
  const grid = await postMedia(app, 'thumbnail', gridHeif(av1, [tiled(av1, 2, 2)]), 'image/heic', '?width=256&format=png')
  assert.equal(grid.statusCode, 200, grid.body)
})

test('an item whose data holds many pictures: each counts in the budget as it is handed over, 413 before libde265 decodes them', async (t) => {
  const app = await build(t, DECODING_DEADLINE)
  const t256 = await tile(256)
  // libheif 1.15 hands libde265 an item's whole data and libde265 decodes every picture in it (libheif keeps the
  // last); the budget counted SPSs, one per item: 100 copies of one 256x256 picture decoded 100 times (a 200).
  // Allowed: 4 x (the image and its largest item), 8 pictures here.
  const many: Tile = { ...t256, data: Buffer.concat(Array(100).fill(t256.data)) }
  await refused(app, '100 pictures in one item', gridHeif(many, []), 413, 'THUMBD_PAYLOAD_TOO_LARGE')
  const two: Tile = { ...t256, data: Buffer.concat([t256.data, t256.data]) }
  const res = await postMedia(app, 'thumbnail', gridHeif(two, []), 'image/heic', '?format=png')
  assert.equal(res.statusCode, 200, res.body)
})
