// HEIF 'grid' images (how iPhones store a photo: 512x512 HEVC tiles pasted on a canvas), written here box by
// box, since neither heif-enc nor libheif 1.15's API writes grids: one real tile from heif-enc, named by a grid
// item any number of times. A valid grid decodes; hostile ones (a grid among its own tiles, thousands of tile
// references, a canvas larger than the image declares) are refused by heif-decode's own guards, fast.
import assert from 'node:assert/strict'
import { join } from 'node:path'
import { after, test } from 'node:test'
import sharp from 'sharp'
import { build, decoded, leftoverTempFiles, postMedia } from '../helper.ts'
import { decoderChildren } from '../faults/helpers.ts'
import { makeHeic } from '../heic-media.ts'
import { tempFolder } from '../temp-folder.ts'

const dir = tempFolder('thumbd-heif-grid-', { after })

after(() => assert.deepEqual(decoderChildren(), [], 'no decoder left running'))

// ---- a minimal ISO-BMFF writer and reader ----

const u8 = (n: number) => Buffer.from([n])
const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b }
const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b }
const box = (type: string, ...parts: Buffer[]) => { const body = Buffer.concat(parts); return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]) }
const fullBox = (type: string, version: number, flags: number, ...parts: Buffer[]) => box(type, u32(version << 24 | flags), ...parts)

/** The boxes in [start, end): type, whole box, payload. */
function boxes (data: Buffer, start = 0, end = data.length): Array<{ type: string, whole: Buffer, body: Buffer }> {
  const found = []
  for (let at = start; at + 8 <= end;) {
    const size = data.readUInt32BE(at)
    assert.ok(size >= 8 && at + size <= end, 'a plain box size (heif-enc writes no others)')
    found.push({ type: data.toString('latin1', at + 4, at + 8), whole: data.subarray(at, at + size), body: data.subarray(at + 8, at + size) })
    at += size
  }
  return found
}
const child = (parent: Buffer, type: string) => {
  const found = boxes(parent).find(b => b.type === type)
  assert.ok(found, `a '${type}' box`)
  return found
}

/** What a grid needs of a heif-enc HEIC: its primary's HEVC bitstream, hvcC box (decoder config) and size. */
interface Tile { data: Buffer, hvcC: Buffer, width: number, height: number }

function tileOf (heic: Buffer): Tile {
  const meta = child(heic, 'meta').body.subarray(4)
  const primary = child(meta, 'pitm').body.readUInt16BE(4)
  const ipco = child(child(meta, 'iprp').body, 'ipco').body
  const ispe = child(ipco, 'ispe').body
  // iloc: version, sizes of offset/length/base offset(/index) in nibbles, then the items.
  const iloc = child(meta, 'iloc').body
  const version = iloc[0]!
  const [offsetSize, lengthSize, baseSize, indexSize] = [iloc[4]! >> 4, iloc[4]! & 15, iloc[5]! >> 4, version > 0 ? iloc[5]! & 15 : 0]
  const read = (at: number, size: number) => size === 0 ? 0 : size === 4 ? iloc.readUInt32BE(at) : Number(iloc.readBigUInt64BE(at))
  let at = 8
  for (let i = 0; i < iloc.readUInt16BE(6); i++) {
    const id = iloc.readUInt16BE(at)
    at += 2 + (version > 0 ? 2 : 0) + 2
    const base = read(at, baseSize)
    at += baseSize
    const extents = iloc.readUInt16BE(at)
    at += 2
    assert.ok(id !== primary || extents === 1, 'one extent')
    const offset = read(at + indexSize, offsetSize)
    const length = read(at + indexSize + offsetSize, lengthSize)
    if (id === primary) return { data: heic.subarray(base + offset, base + offset + length), hvcC: child(ipco, 'hvcC').whole, width: ispe.readUInt32BE(4), height: ispe.readUInt32BE(8) }
    at += extents * (indexSize + offsetSize + lengthSize)
  }
  throw new Error('no primary item in iloc')
}

/** A SIZE x SIZE picture as heif-enc's HEIC, reduced to its one tile (its PNG stays in dir as tile-SIZE.png). */
const tile = async (size: number): Promise<Tile> => tileOf(await makeHeic(dir, `tile-${size}`, `${size}x${size}`))

/**
 * A grid item: its declared size (ispe: what heif-decode's size checks see), its canvas (ImageGrid's output
 * size: what libheif allocates), rows x columns, and the item ids its 'dimg' names (TILE: the tile item).
 */
interface Grid { ispe: [number, number], canvas: [number, number], rows: number, columns: number, dimg: number[] }
const TILE = 100

/** A HEIF whose primary item (id 1) is grids[0]; grid i is item i + 1; one 'hvc1' tile item, TILE. */
function gridHeif (tile: Tile, grids: Grid[]): Buffer {
  const gridIds = grids.map((_, i) => i + 1)
  // ImageGrid, in idat: version 0, flags 1 (32-bit sizes), rows - 1, columns - 1, output width and height.
  const gridData = grids.map(g => Buffer.concat([u8(0), u8(1), u8(g.rows - 1), u8(g.columns - 1), u32(g.canvas[0]), u32(g.canvas[1])]))
  const infe = (id: number, type: string) => fullBox('infe', 2, 0, u16(id), u16(0), Buffer.from(type, 'latin1'), u8(0))
  const iinf = fullBox('iinf', 0, 0, u16(grids.length + 1), ...gridIds.map(id => infe(id, 'grid')), infe(TILE, 'hvc1'))
  const iref = fullBox('iref', 0, 0, ...grids.map((g, i) => box('dimg', u16(gridIds[i]!), u16(g.dimg.length), ...g.dimg.map(u16))))
  const ispe = (w: number, h: number) => fullBox('ispe', 0, 0, u32(w), u32(h))
  // Properties: 1 the tile's hvcC, 2 the tile's ispe, 3.. each grid's ispe.
  const ipco = box('ipco', tile.hvcC, ispe(tile.width, tile.height), ...grids.map(g => ispe(...g.ispe)))
  const ipma = fullBox('ipma', 0, 0, u32(grids.length + 1), ...gridIds.map((id, i) => Buffer.concat([u16(id), u8(1), u8(3 + i)])), u16(TILE), u8(2), u8(0x81), u8(2))
  // iloc version 1: 4-byte offsets and lengths, no base offset; grids in idat (construction method 1), the tile in mdat.
  const iloc = (mdatAt: number) => {
    let idatAt = 0
    const gridEntries = gridData.map((d, i) => { const e = Buffer.concat([u16(gridIds[i]!), u16(1), u16(0), u16(1), u32(idatAt), u32(d.length)]); idatAt += d.length; return e })
    return fullBox('iloc', 1, 0, u8(0x44), u8(0x00), u16(grids.length + 1), ...gridEntries, u16(TILE), u16(0), u16(0), u16(1), u32(mdatAt), u32(tile.data.length))
  }
  const ftyp = box('ftyp', Buffer.from('heic'), u32(0), Buffer.from('mif1heic'))
  const hdlr = fullBox('hdlr', 0, 0, u32(0), Buffer.from('pict'), Buffer.alloc(12), u8(0))
  const meta = (mdatAt: number) => fullBox('meta', 0, 0, hdlr, fullBox('pitm', 0, 0, u16(1)), iloc(mdatAt), iinf, iref, box('iprp', ipco, ipma), box('idat', ...gridData))
  const mdatAt = ftyp.length + meta(0).length + 8
  return Buffer.concat([ftyp, meta(mdatAt), box('mdat', tile.data)])
}

/** A grid of rows x columns references to the one tile, whose canvas and declared size are the tiles' (or as given). */
function tiled (t: Tile, rows: number, columns: number, canvas: [number, number] = [columns * t.width, rows * t.height], ispe = canvas): Grid {
  return { ispe, canvas, rows, columns, dimg: Array(rows * columns).fill(TILE) }
}

// ---- the tests ----

/** A hostile grid's reply: `status` and `code`, in under 5 s, with no heif-decode left running and no temp file left. */
async function refused (app: Awaited<ReturnType<typeof build>>, name: string, body: Buffer, status: number, code: string) {
  const started = Date.now()
  const res = await postMedia(app, 'thumbnail', body, 'image/heic')
  // A JSON error, or the thumbnail's type had the image got through.
  const json = String(res.headers['content-type']).includes('json')
  assert.equal(res.statusCode, status, `${name}: ${json ? res.body : res.headers['content-type']}`)
  assert.equal(res.json().code, code, name)
  assert.ok(Date.now() - started < 5000, `${name}: answered in ${Date.now() - started} ms`)
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
  // Within that side limit (1200x16 declared, well under the pixel limit; a 1200x1000 canvas): 1.2 MP decoded,
  // over the 1 MP limit, refused once decoded, before any PNG is written.
  const t256 = await tile(256)
  const wide = gridHeif(t256, [tiled(t256, 4, 5, [1200, 1000], [1200, 16])])
  const res = await refused(app, '1200x16 with a 1200x1000 canvas', wide, 422, 'THUMBD_MEDIA_UNREADABLE')
  assert.match(res.json().message, /the HEIF decoder rejected this image$/, 'refused by heif-decode, not cut short as too much output')
})
