// What a video stream's frames are (pixel format, colour tags, sample aspect ratio) and the colour path that
// makes them SDR BT.709 RGB: read from ffmpeg's input report (one line) or from ffprobe's JSON (same facts).
// Untagged streams get what players assume: the BT.601 matrix for SD, BT.709 for HD.

export interface StreamFacts {
  width: number
  height: number
  pixFmt?: string
  /** ffmpeg's names: matrix (colorspace), primaries, transfer (color_trc), range (tv|pc). */
  matrix?: string
  primaries?: string
  transfer?: string
  range?: string
  /** Sample aspect ratio [num, den]; [0, 1] or absent: unknown, taken as square. */
  sar?: [number, number]
}

export type Matrix = 'bt601' | 'bt709' | 'bt2020'
/** sdr: BT.601/709 YUV or RGB; bt2020: SDR in BT.2020 primaries; pq, hlg: HDR, tone-mapped. */
export type Dynamic = 'sdr' | 'bt2020' | 'pq' | 'hlg'

export interface ColourPath {
  dynamic: Dynamic
  matrix: Matrix
  /** The input's range, for zscale (tv unless tagged pc). */
  range: 'tv' | 'pc'
}

const UNSET = new Set([undefined, '', 'unknown', 'unspecified', 'reserved'])
const known = (value: string | undefined) => UNSET.has(value) ? undefined : value

/** What players assume for untagged video: HD (wider than 1024 or taller than 576) is BT.709. */
export const isHd = ({ width, height }: { width: number, height: number }) => width > 1024 || height > 576

export function colourPath (facts: StreamFacts): ColourPath {
  const [matrix, primaries, transfer] = [known(facts.matrix), known(facts.primaries), known(facts.transfer)]
  const range = facts.range === 'pc' ? 'pc' : 'tv'
  // The transfer decides HDR: a PQ or HLG curve whatever the other tags say (contradictions resolve here).
  const dynamic: Dynamic = transfer === 'smpte2084'
    ? 'pq'
    : transfer === 'arib-std-b67' ? 'hlg' : primaries === 'bt2020' ? 'bt2020' : 'sdr'
  return { dynamic, matrix: matrixOf(matrix, dynamic, facts), range }
}

function matrixOf (matrix: string | undefined, dynamic: Dynamic, size: { width: number, height: number }): Matrix {
  if (matrix === 'bt2020nc' || matrix === 'bt2020c') return 'bt2020'
  if (matrix === 'bt470bg' || matrix === 'smpte170m' || matrix === 'fcc') return 'bt601'
  if (matrix !== undefined) return 'bt709'
  if (dynamic !== 'sdr') return 'bt2020'
  return isHd(size) ? 'bt709' : 'bt601'
}

/** Bits per component of an ffmpeg pixel format name (yuv420p10le: 10; rgba64be: 16; yuv420p: 8). */
export function bitDepth (pixFmt: string | undefined): number | undefined {
  if (pixFmt === undefined) return undefined
  // Packed RGB names count the bits of a whole pixel (rgb48, rgba64): 16 a component.
  if (/^(?:rgb|bgr)48|^(?:rgba|bgra)64/.test(pixFmt)) return 16
  const deep = /(?:p|gray|ya)(\d{1,2})(?:le|be)?$/.exec(pixFmt)
  if (deep !== null) return Number(deep[1])
  return /f32|f16/.test(pixFmt) ? undefined : 8
}

/** Whether the stream's pictures are tone-mapped for display. */
export const isHdr = (facts: StreamFacts) => ['pq', 'hlg'].includes(colourPath(facts).dynamic)

/**
 * One video stream line of ffmpeg's input report, e.g.
 * `  Stream #0:0[0x1](und): Video: hevc (Main 10) (hvc1 / 0x31637668), yuv420p10le(tv, bt2020nc/bt2020/arib-std-b67, progressive), 3840x2160 [SAR 1:1 DAR 16:9], ...`
 * (when matrix, primaries and transfer share one name, ffmpeg prints it once).
 */
export function parseStreamLine (line: string): StreamFacts | undefined {
  const video = /^ {2}Stream #0:\d+\S*: Video: [^,]*?, ([a-z0-9_]+)(?:\(([^)]*)\))?, (\d+)x(\d+)(.*)$/.exec(line)
  if (video === null) return undefined
  const [, pixFmt, tags = '', width, height, rest = ''] = video
  const facts: StreamFacts = { width: Number(width), height: Number(height), pixFmt }
  for (const tag of tags.split(',').map(t => t.trim())) {
    if (tag === 'tv' || tag === 'pc') facts.range = tag
    else if (tag !== 'progressive' && !/^(top|bottom|unknown) (first|coded)/.test(tag) && /^[a-z0-9-]+(\/[a-z0-9-]+\/[a-z0-9-]+)?$/.test(tag)) {
      const [matrix, primaries = matrix, transfer = matrix] = tag.split('/')
      Object.assign(facts, { matrix, primaries, transfer })
    }
  }
  const sar = /SAR (\d+):(\d+)/.exec(rest)
  if (sar !== null) facts.sar = [Number(sar[1]), Number(sar[2])]
  return facts
}

/** ffprobe's stream fields for the same facts. */
export interface ProbeColour {
  width?: number
  height?: number
  pix_fmt?: string
  color_range?: string
  color_space?: string
  color_primaries?: string
  color_transfer?: string
  sample_aspect_ratio?: string
}

export function probeFacts (s: ProbeColour): StreamFacts {
  const sar = /^(\d+):(\d+)$/.exec(s.sample_aspect_ratio ?? '')
  return {
    width: s.width ?? 0,
    height: s.height ?? 0,
    ...(s.pix_fmt === undefined ? {} : { pixFmt: s.pix_fmt }),
    ...(s.color_range === undefined ? {} : { range: s.color_range }),
    ...(s.color_space === undefined ? {} : { matrix: s.color_space }),
    ...(s.color_primaries === undefined ? {} : { primaries: s.color_primaries }),
    ...(s.color_transfer === undefined ? {} : { transfer: s.color_transfer }),
    ...(sar === null ? {} : { sar: [Number(sar[1]), Number(sar[2])] as [number, number] })
  }
}

/** The SAR as a number; unknown (0:x) is square. */
export const sarValue = (sar: [number, number] | undefined) => sar === undefined || sar[0] === 0 || sar[1] === 0 ? 1 : sar[0] / sar[1]
