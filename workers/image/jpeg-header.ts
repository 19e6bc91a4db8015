// What render() asks of a JPEG in memory before decoding it (its sides for the pixel limit, colour space,
// EXIF orientation, embedded profile), read from its segments here rather than by a sharp metadata() call:
// that costs ~0.45 ms of libvips (libexif parses the whole EXIF) and a libuv round trip per photo, ~3 % of
// a 4 MP thumbnail's CPU, against ~10 us here (measured in one thread on a 4 MP photo: 0.40-0.48 ms against
// 0.006-0.012 ms; the path's gain is in docs/architecture.md, "Why it is fast"). Only
// headers read the one way libvips reads them: anything unusual (a marker without a length, a segment
// past the end, no 8-bit frame before the scan, two Exif segments, an EXIF or ICC profile that does not
// parse cleanly, an orientation outside 1-8) gives undefined, and sharp reads the header as before.

/** The fields of sharp's metadata() that render() reads, as sharp gives them for this JPEG. */
export interface JpegFacts {
  width: number
  height: number
  channels: 1 | 3 | 4
  space: 'b-w' | 'srgb' | 'cmyk'
  orientation: number
  icc?: Buffer
}

const SPACES = { 1: 'b-w', 3: 'srgb', 4: 'cmyk' } as const
const EXIF = Buffer.from('Exif\0\0', 'latin1')
const ICC = Buffer.from('ICC_PROFILE\0', 'latin1')
/** SOF markers of every process (not DHT, JPG, DAC, which share the range). */
const isFrame = (marker: number) => marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc

let read = 0
/** Headers this thread read here (the tests check that render() took them). */
export const jpegHeadersRead = () => read

export function jpegFacts (bytes: Uint8Array): JpegFacts | undefined {
  const data = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)
  if (data.length < 4 || data[0] !== 0xff || data[1] !== 0xd8) return undefined
  let frame: Omit<JpegFacts, 'orientation' | 'icc'> | undefined
  let orientation: number | undefined
  const chunks: Buffer[] = []
  let at = 2
  for (;;) {
    if (at + 4 > data.length || data[at] !== 0xff) return undefined
    const marker = data[at + 1]!
    // SOS: the header ends here; libvips reads nothing past it either.
    if (marker === 0xda) break
    // Fill bytes, RSTn, SOI, EOI and TEM have no length: not a header libvips would take as it is.
    if (marker === 0xff || marker === 0x01 || (marker >= 0xd0 && marker <= 0xd9)) return undefined
    const end = at + 2 + data.readUInt16BE(at + 2)
    if (end > data.length || end < at + 4) return undefined
    const payload = data.subarray(at + 4, end)
    if (isFrame(marker)) {
      if (frame !== undefined || payload.length < 6 || payload[0] !== 8) return undefined
      const components = payload[5] as 1 | 3 | 4
      if (!(components in SPACES)) return undefined
      frame = { height: payload.readUInt16BE(1), width: payload.readUInt16BE(3), channels: components, space: SPACES[components] }
    } else if (marker === 0xe1 && payload.length > 4 && payload.toString('latin1', 0, 4) === 'Exif') {
      // libvips takes the first APP1 that starts "Exif" and is longer than that, whatever follows: one that is
      // not a clean "Exif\0\0" TIFF, or a second one, is left to it.
      if (orientation !== undefined || !payload.subarray(0, 6).equals(EXIF)) return undefined
      orientation = exifOrientation(payload.subarray(6))
      if (orientation === undefined) return undefined
    } else if (marker === 0xe2 && payload.toString('latin1', 0, 11) === 'ICC_PROFILE') {
      // libvips takes any APP2 that starts "ICC_PROFILE": only the exact marker, with room for a profile, is read here.
      if (!payload.subarray(0, 12).equals(ICC) || payload.length <= 14) return undefined
      chunks.push(payload)
    }
    at = end
  }
  if (frame === undefined || frame.width === 0 || frame.height === 0) return undefined
  const icc = chunks.length === 0 ? undefined : profile(chunks)
  if (icc === null) return undefined
  read++
  return { ...frame, orientation: orientation ?? 1, ...(icc === undefined ? {} : { icc }) }
}

/** IFD0's Orientation (1 without one), or undefined where the TIFF structure does not hold together. */
function exifOrientation (tiff: Buffer): number | undefined {
  if (tiff.length < 8) return undefined
  const little = tiff.toString('latin1', 0, 2) === 'II'
  if (!little && tiff.toString('latin1', 0, 2) !== 'MM') return undefined
  const u16 = (at: number) => little ? tiff.readUInt16LE(at) : tiff.readUInt16BE(at)
  const u32 = (at: number) => little ? tiff.readUInt32LE(at) : tiff.readUInt32BE(at)
  if (u16(2) !== 42) return undefined
  const ifd = u32(4)
  if (ifd < 8 || ifd + 2 > tiff.length) return undefined
  const count = u16(ifd)
  if (ifd + 2 + count * 12 > tiff.length) return undefined
  let found: number | undefined
  for (let i = 0; i < count; i++) {
    const entry = ifd + 2 + i * 12
    if (u16(entry) !== 0x0112) continue
    // One SHORT of 1-8, once: anything else is left to libexif's reading.
    if (found !== undefined || u16(entry + 2) !== 3 || u32(entry + 4) !== 1) return undefined
    found = u16(entry + 8)
    if (found < 1 || found > 8) return undefined
  }
  return found ?? 1
}

/** The APP2 chunks joined in sequence order (libjpeg's jpeg_read_icc_profile); null if they do not add up. */
function profile (chunks: Buffer[]): Buffer | null {
  const total = chunks[0]![13]!
  if (total !== chunks.length) return null
  const ordered: Buffer[] = []
  for (const chunk of chunks) {
    const seq = chunk[12]!
    if (chunk[13] !== total || seq < 1 || seq > total || ordered[seq - 1] !== undefined) return null
    ordered[seq - 1] = chunk.subarray(14)
  }
  return Buffer.concat(ordered)
}
