// Dolby Vision profile 8 files, as iPhones (8.4: HLG base layer) and streaming encoders (8.1: HDR10 base
// layer) write them. Debian's x265 cannot write Dolby Vision, so an HEVC MP4 that ffmpeg made is given the
// Dolby Vision configuration box (`dvvC`, ETSI TS 103 572) in its sample entry, and optionally the `dvh1`
// sample entry type players use for files without a backward-compatible signalling.
// The MP4 must have its index (moov) after its media data, as ffmpeg writes it: growing moov then moves no
// sample, so no chunk offset changes.

const PATH = ['moov', 'trak', 'mdia', 'minf', 'stbl', 'stsd'] as const

export interface DolbyVisionProfile {
  /** 8 for the base-layer-compatible profiles phones and streaming services write. */
  profile: number
  level: number
  /** What the base layer is: 1 HDR10, 2 SDR, 4 HLG. */
  compatibility: 1 | 2 | 4
  /** The sample entry's type: Apple writes `hvc1`, other encoders `dvh1`. */
  sampleEntry?: 'hvc1' | 'dvh1'
}

export function withDolbyVisionConfig (mp4: Buffer, dv: DolbyVisionProfile): Buffer {
  const file = Buffer.from(mp4)
  // The boxes from the top down to stsd: [offset, size] of each.
  const chain: Array<[number, number]> = []
  let [start, end] = [0, file.length]
  for (const type of PATH) {
    const found = findBox(file, start, end, type)
    if (found === undefined) throw new Error(`no ${type} box`)
    chain.push(found)
    // stsd is a full box with an entry count; the others hold their children straight after the header.
    start = found[0] + 8
    end = found[0] + found[1]
  }
  const moov = chain[0]!
  if (findBox(file, 0, moov[0], 'mdat') === undefined) throw new Error('moov must come after mdat')
  const [stsdOffset] = chain.at(-1)!
  const entryOffset = stsdOffset + 16
  const entrySize = file.readUInt32BE(entryOffset)
  if (file.toString('latin1', entryOffset + 4, entryOffset + 8) !== 'hvc1') throw new Error('not an hvc1 sample entry')
  if (dv.sampleEntry === 'dvh1') file.write('dvh1', entryOffset + 4, 'latin1')

  const box = dolbyVisionConfigBox(dv)
  for (const [offset] of [...chain, [entryOffset, entrySize] as [number, number]]) file.writeUInt32BE(file.readUInt32BE(offset) + box.length, offset)
  const at = entryOffset + entrySize
  return Buffer.concat([file.subarray(0, at), box, file.subarray(at)])
}

/** `dvvC` (profiles above 7): version 1.0, profile, level, an RPU and a base layer but no enhancement layer. */
function dolbyVisionConfigBox ({ profile, level, compatibility }: DolbyVisionProfile): Buffer {
  const box = Buffer.alloc(32)
  box.writeUInt32BE(32, 0)
  box.write(profile > 7 ? 'dvvC' : 'dvcC', 4, 'latin1')
  box.writeUInt8(1, 8)
  box.writeUInt8(0, 9)
  const rpu = 1
  const enhancementLayer = 0
  const baseLayer = 1
  box.writeUInt16BE((profile << 9) | (level << 3) | (rpu << 2) | (enhancementLayer << 1) | baseLayer, 10)
  box.writeUInt8(compatibility << 4, 12)
  return box
}

function findBox (file: Buffer, start: number, end: number, type: string): [number, number] | undefined {
  for (let offset = start; offset + 8 <= end;) {
    const size = file.readUInt32BE(offset)
    if (size < 8) return undefined
    if (file.toString('latin1', offset + 4, offset + 8) === type) return [offset, size]
    offset += size
  }
  return undefined
}
