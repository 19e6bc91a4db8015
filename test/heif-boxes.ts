// HEIF files written box by box for the tests of heif-decode's checks (and load/fuzz.ts's seeds), since neither
// heif-enc nor libheif 1.15's API writes grids or lies: one real tile from heif-enc (its HEVC data, its hvcC),
// placed under any item structure, declared size or decoder configuration a test needs.
import assert from 'node:assert/strict'

// ---- a minimal ISO-BMFF writer and reader ----

export const u8 = (n: number) => Buffer.from([n])
export const u16 = (n: number) => { const b = Buffer.alloc(2); b.writeUInt16BE(n); return b }
export const u32 = (n: number) => { const b = Buffer.alloc(4); b.writeUInt32BE(n); return b }
export const box = (type: string, ...parts: Buffer[]) => { const body = Buffer.concat(parts); return Buffer.concat([u32(8 + body.length), Buffer.from(type, 'latin1'), body]) }
export const fullBox = (type: string, version: number, flags: number, ...parts: Buffer[]) => box(type, u32(version << 24 | flags), ...parts)

/** The boxes in [start, end): type, whole box, payload. */
export function boxes (data: Buffer, start = 0, end = data.length): Array<{ type: string, whole: Buffer, body: Buffer }> {
  const found = []
  for (let at = start; at + 8 <= end;) {
    const size = data.readUInt32BE(at)
    assert.ok(size >= 8 && at + size <= end, 'a plain box size (heif-enc writes no others)')
    found.push({ type: data.toString('latin1', at + 4, at + 8), whole: data.subarray(at, at + size), body: data.subarray(at + 8, at + size) })
    at += size
  }
  return found
}
export const child = (parent: Buffer, type: string) => {
  const found = boxes(parent).find(b => b.type === type)
  assert.ok(found, `a '${type}' box`)
  return found
}

/**
 * What a HEIF needs of a heif-enc HEIC (or of sharp's AVIF): its primary's coded bitstream, decoder configuration
 * box (hvcC; av1C for an AVIF, whose item type `type` is then 'av01') and size.
 */
export interface Tile { data: Buffer, hvcC: Buffer, width: number, height: number, type?: 'hvc1' | 'av01' }

export function tileOf (heic: Buffer): Tile {
  const meta = child(heic, 'meta').body.subarray(4)
  const primary = child(meta, 'pitm').body.readUInt16BE(4)
  const ipco = child(child(meta, 'iprp').body, 'ipco').body
  const av1 = boxes(ipco).some(b => b.type === 'av1C')
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
    if (id === primary) {
      const data = heic.subarray(base + offset, base + offset + length)
      const [width, height] = [ispe.readUInt32BE(4), ispe.readUInt32BE(8)]
      return av1 ? { data, hvcC: child(ipco, 'av1C').whole, width, height, type: 'av01' } : { data, hvcC: child(ipco, 'hvcC').whole, width, height }
    }
    at += extents * (indexSize + offsetSize + lengthSize)
  }
  throw new Error('no primary item in iloc')
}

/** A copy of a heif-enc HEIC whose one ispe declares w x h instead (same length: nothing else moves). */
export function withIspe (heic: Buffer, w: number, h: number): Buffer {
  const copy = Buffer.from(heic)
  const ispe = child(child(child(child(copy, 'meta').body.subarray(4), 'iprp').body, 'ipco').body, 'ispe').body
  ispe.writeUInt32BE(w, 4)
  ispe.writeUInt32BE(h, 8)
  return copy
}

/**
 * A grid item: its declared size (ispe: what heif-decode's size checks see), its canvas (ImageGrid's output
 * size: what libheif allocates), rows x columns, and the item ids its 'dimg' names (TILE: the tile item).
 */
export interface Grid { ispe: [number, number], canvas: [number, number], rows: number, columns: number, dimg: number[], overlay?: boolean }
export const TILE = 100

/** A HEIF whose primary item (id 1) is grids[0]; grid i is item i + 1; one 'hvc1' (or the tile's type) tile item, TILE. Without grids, the tile is the primary. A grid with `overlay` is an iovl item. */
export function gridHeif (tile: Tile, grids: Grid[]): Buffer {
  const gridIds = grids.map((_, i) => i + 1)
  // ImageGrid, in idat: version 0, flags 1 (32-bit sizes), rows - 1, columns - 1, output width and height. Or
  // ImageOverlay (iovl): version 0, flags 1, a fill colour (4 x 16 bits), output width and height, each input at 0,0.
  const gridData = grids.map(g => g.overlay === true
    ? Buffer.concat([u8(0), u8(1), Buffer.alloc(8), u32(g.canvas[0]), u32(g.canvas[1]), Buffer.alloc(8 * g.dimg.length)])
    : Buffer.concat([u8(0), u8(1), u8(g.rows - 1), u8(g.columns - 1), u32(g.canvas[0]), u32(g.canvas[1])]))
  const infe = (id: number, type: string) => fullBox('infe', 2, 0, u16(id), u16(0), Buffer.from(type, 'latin1'), u8(0))
  const iinf = fullBox('iinf', 0, 0, u16(grids.length + 1), ...grids.map((g, i) => infe(gridIds[i]!, g.overlay === true ? 'iovl' : 'grid')), infe(TILE, tile.type ?? 'hvc1'))
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
  const references = grids.length > 0 ? [iref] : []
  const idat = grids.length > 0 ? [box('idat', ...gridData)] : []
  const meta = (mdatAt: number) => fullBox('meta', 0, 0, hdlr, fullBox('pitm', 0, 0, u16(grids.length > 0 ? 1 : TILE)), iloc(mdatAt), iinf, ...references, box('iprp', ipco, ipma), ...idat)
  const mdatAt = ftyp.length + meta(0).length + 8
  return Buffer.concat([ftyp, meta(mdatAt), box('mdat', tile.data)])
}

/** A grid of rows x columns references to the one tile, whose canvas and declared size are the tiles' (or as given). */
export function tiled (t: Tile, rows: number, columns: number, canvas: [number, number] = [columns * t.width, rows * t.height], ispe = canvas): Grid {
  return { ispe, canvas, rows, columns, dimg: Array(rows * columns).fill(TILE) }
}

/**
 * 20 bytes that hid a file's real 'meta' from heif-decode's checks: a 'meta' box of size 0 ("to the end of the
 * file" in ISO-BMFF, an error to libheif 1.15, which stops there and keeps the meta before it) holding an empty box.
 */
export const decoy = () => Buffer.concat([u32(0), Buffer.from('meta'), u32(0), box('free')])

// ---- the HEVC sequence parameter set (SPS) in an hvcC: what the decoder allocates ----

/** The RBSP bits of a NAL unit's payload (emulation prevention bytes dropped), as '0'/'1'. */
function rbspBits (nal: Buffer): string {
  const bytes: number[] = []
  let zeros = 0
  for (const b of nal.subarray(2)) {
    if (zeros >= 2 && b === 3) { zeros = 0; continue }
    zeros = b === 0 ? zeros + 1 : 0
    bytes.push(b)
  }
  return bytes.map(b => b.toString(2).padStart(8, '0')).join('')
}

/** The NAL payload of `bits` (whole bytes), emulation prevention bytes put back. */
function nalPayload (bits: string): Buffer {
  const out: number[] = []
  let zeros = 0
  for (let i = 0; i < bits.length; i += 8) {
    const b = parseInt(bits.slice(i, i + 8), 2)
    if (zeros >= 2 && b <= 3) { out.push(3); zeros = 0 }
    zeros = b === 0 ? zeros + 1 : 0
    out.push(b)
  }
  return Buffer.from(out)
}

const ue = (n: number) => { const code = (n + 1).toString(2); return '0'.repeat(code.length - 1) + code }

/** An SPS NAL unit with pic_width/height_in_luma_samples set to w x h and no conformance window (H.265 7.3.2.2). */
export function spsWithSize (sps: Buffer, w: number, h: number): Buffer {
  return Buffer.concat([sps.subarray(0, 2), nalPayload(spsBitsWithSize(sps, w, h))])
}

/**
 * The same SPS as spsWithSize, written so that a parser which looks for emulation prevention bytes only after the
 * NAL header (as H.265 7.3.1.1 does) reads it a byte off from libde265, which looks from the NAL's first byte: a
 * header ending in 00 (nuh_temporal_id_plus1 0), then the payload's first byte 00 (sps_temporal_id_nesting_flag
 * cleared for it) and a 03 that libde265 alone drops as following 00 00.
 */
export function spsEscapedAcrossHeader (sps: Buffer, w: number, h: number): Buffer {
  const bits = `${spsBitsWithSize(sps, w, h).slice(0, 7)}0${spsBitsWithSize(sps, w, h).slice(8)}`
  assert.equal(bits.slice(0, 8), '00000000', 'VPS id 0 and one sub-layer (heif-enc writes them)')
  return Buffer.concat([u8(sps[0]!), u8(0), u8(0), u8(3), nalPayload(bits.slice(8))])
}

/** The RBSP bits (whole bytes) of spsWithSize's SPS. */
function spsBitsWithSize (sps: Buffer, w: number, h: number): string {
  const bits = rbspBits(sps)
  let at = 0
  const read = (n: number) => { const v = parseInt(bits.slice(at, at + n) || '0', 2); at += n; return v }
  const readUe = () => { let z = 0; while (bits[at] === '0') { z++; at++ } at++; return (2 ** z) - 1 + (z > 0 ? read(z) : 0) }
  read(4)
  const subLayers = read(3)
  read(1)
  at += 96
  const present: Array<[number, number]> = []
  for (let i = 0; i < subLayers; i++) present.push([read(1), read(1)])
  if (subLayers > 0) at += 2 * (8 - subLayers)
  for (const [profile, level] of present) at += (profile ? 88 : 0) + (level ? 8 : 0)
  readUe()
  if (readUe() === 3) read(1)
  const sizeAt = at
  readUe(); readUe()
  if (read(1) === 1) { readUe(); readUe(); readUe(); readUe() }
  const rest = bits.slice(at, bits.lastIndexOf('1'))  // up to the rbsp_stop_one_bit
  let out = bits.slice(0, sizeAt) + ue(w) + ue(h) + '0' + rest + '1'
  out += '0'.repeat((8 - out.length % 8) % 8)
  return out
}

/** The arrays of an hvcC box (whole box): each one's first byte (completeness, NAL type) and NAL units. */
function hvcCArrays (hvcC: Buffer): Array<{ kind: number, units: Buffer[] }> {
  const body = hvcC.subarray(8)
  const arrays = []
  let at = 23
  for (let a = 0; a < body[22]!; a++) {
    const units: Buffer[] = []
    const [kind, count] = [body[at]!, body.readUInt16BE(at + 1)]
    at += 3
    for (let u = 0; u < count; u++) {
      const length = body.readUInt16BE(at)
      units.push(body.subarray(at + 2, at + 2 + length))
      at += 2 + length
    }
    arrays.push({ kind, units })
  }
  return arrays
}

const isSps = (nal: Buffer) => ((nal[0]! >> 1) & 0x3f) === 33

/** The NAL units of an hvcC box (its parameter sets: VPS, SPS, PPS), in order. */
export const parameterSets = (hvcC: Buffer) => hvcCArrays(hvcC).flatMap(a => a.units)

/** The SPS of an hvcC box. */
export const spsOf = (hvcC: Buffer) => hvcCArrays(hvcC).flatMap(a => a.units).find(isSps)!

/** The tile with its hvcC's SPS coding w x h (the HEVC data still codes the tile's own size), written by `write`. */
export function withCodedSize (t: Tile, w: number, h: number, write = spsWithSize): Tile {
  const arrays = hvcCArrays(t.hvcC).map(({ kind, units }) => {
    const changed = units.map(nal => isSps(nal) ? write(nal, w, h) : nal)
    return Buffer.concat([u8(kind), u16(changed.length), ...changed.flatMap(nal => [u16(nal.length), nal])])
  })
  return { ...t, hvcC: box('hvcC', t.hvcC.subarray(8, 30), u8(arrays.length), ...arrays) }
}

/** The tile with an SPS NAL unit in front of its data (length-prefixed, as libheif passes item data on). */
export function withInBandSps (t: Tile, sps: Buffer): Tile {
  return { ...t, data: Buffer.concat([u32(sps.length), sps, t.data]) }
}

/**
 * load/fuzz.ts's HEIF seeds from one small tile: a valid 2x2 grid, and what heif-decode refuses before decoding
 * (2000 tile references and a grid naming itself, each behind a size-0 decoy meta; an hvcC whose SPS codes
 * 8192x8192 for a tile-sized item; a tile whose data carries an SPS for 4096x4096; an overlay of a 128x128
 * canvas naming the tile 65 times).
 */
export function heifSeeds (t: Tile): Record<string, Buffer> {
  const self = tiled(t, 2, 2)
  self.dimg[3] = 1
  return {
    heifGrid: gridHeif(t, [tiled(t, 2, 2)]),
    heifDecoyRefs: Buffer.concat([gridHeif(t, [tiled(t, 40, 50)]), decoy()]),
    heifDecoySelf: Buffer.concat([gridHeif(t, [self]), decoy()]),
    heifSpsLie: gridHeif(withCodedSize(t, 8192, 8192), []),
    heifInBandSps: gridHeif(withInBandSps(t, spsWithSize(spsOf(t.hvcC), 4096, 4096)), [tiled(t, 2, 2)]),
    heifOverlay: gridHeif(t, [{ ispe: [128, 128], canvas: [128, 128], rows: 1, columns: 1, dimg: Array(65).fill(TILE), overlay: true }])
  }
}

// ---- a tile from an HEVC elementary stream (libx265's, through ffmpeg): slices as x265 writes them ----

/** The NAL units of an HEVC elementary stream in Annex B (each after a 00 00 01 start code). */
export function annexBUnits (stream: Buffer): Buffer[] {
  const starts: number[] = []
  for (let at = stream.indexOf('000001', 0, 'hex'); at >= 0; at = stream.indexOf('000001', at + 3, 'hex')) starts.push(at + 3)
  // A unit ends where the next start code begins (its 4-byte form's leading 00 is not the unit's).
  return starts.map((s, i) => { let end = i + 1 < starts.length ? starts[i + 1]! - 3 : stream.length; if (i + 1 < starts.length && stream[end - 1] === 0) end--; return stream.subarray(s, end) })
}

/** NAL units as an item's data holds them: each after its 4-byte length. */
export const lengthPrefixed = (units: Buffer[]) => Buffer.concat(units.flatMap(nal => [u32(nal.length), nal]))

const nalType = (nal: Buffer) => (nal[0]! >> 1) & 0x3f

/**
 * A width x height tile from an HEVC elementary stream: its VPS, SPS and PPS in an hvcC with `like`'s header
 * fields (profile, chroma format, bit depth: heif-enc's, for the same kind of picture), its slice segments
 * (`slices`, SEI left out) as the item's data.
 */
export function tileOfStream (stream: Buffer, like: Tile, width: number, height: number): Tile & { slices: Buffer[] } {
  const units = annexBUnits(stream)
  const sets = [32, 33, 34].map(type => units.filter(nal => nalType(nal) === type))
  const arrays = sets.map((group, i) => Buffer.concat([u8(0x80 | (32 + i)), u16(group.length), lengthPrefixedShort(group)]))
  const slices = units.filter(nal => nalType(nal) < 32)
  return { data: lengthPrefixed(slices), hvcC: box('hvcC', like.hvcC.subarray(8, 30), u8(arrays.length), ...arrays), width, height, slices }
}
const lengthPrefixedShort = (units: Buffer[]) => Buffer.concat(units.flatMap(nal => [u16(nal.length), nal]))
