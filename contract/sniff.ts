// What the bytes are, from their magic numbers; headers and file names are never trusted.
// Hand-written on purpose: the answer picks the ffmpeg demuxer and the sharp input, so it must be exact
// for the handful of formats thumbd serves and say "unknown" for everything else (SVG, text, archives ...).

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif' | 'heic'
export type VideoFormat = 'mp4' | 'mov' | 'webm' | 'mkv' | 'avi'
/** ffmpeg demuxers that may ever read an upload; see ffmpeg-args.ts. */
export type Demuxer = 'mov' | 'matroska' | 'avi'

export type Media =
  | { kind: 'image', format: ImageFormat, mime: string }
  /** `decoder`: one forced for the video stream, where ffmpeg's own would lose something (WebM's VP9 alpha). */
  | { kind: 'video', format: VideoFormat, mime: string, demuxer: Demuxer, decoder?: 'libvpx-vp9' }

/** How many leading bytes sniff() wants to see (fewer is fine for short sources). */
export const SNIFF_BYTES = 4096

const ascii = (b: Uint8Array, at: number, text: string) =>
  b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0))

const AVIF_BRANDS = new Set(['avif', 'avis'])
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1'])

export function sniff (head: Uint8Array): Media | undefined {
  if (head[0] === 0xff && head[1] === 0xd8 && head[2] === 0xff) return { kind: 'image', format: 'jpeg', mime: 'image/jpeg' }
  if (ascii(head, 0, '\x89PNG\r\n\x1a\n')) return { kind: 'image', format: 'png', mime: 'image/png' }
  if (ascii(head, 0, 'GIF87a') || ascii(head, 0, 'GIF89a')) return { kind: 'image', format: 'gif', mime: 'image/gif' }
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'WEBP')) return { kind: 'image', format: 'webp', mime: 'image/webp' }
  if (ascii(head, 0, 'RIFF') && ascii(head, 8, 'AVI ')) return { kind: 'video', format: 'avi', mime: 'video/x-msvideo', demuxer: 'avi' }
  if (ascii(head, 4, 'ftyp')) return isoMedia(head)
  if (head[0] === 0x1a && head[1] === 0x45 && head[2] === 0xdf && head[3] === 0xa3) return matroska(head)
  return undefined
}

// ISO base media (MP4, MOV, AVIF, HEIC): the ftyp box names a major brand and compatible brands.
function isoMedia (head: Uint8Array): Media | undefined {
  const boxSize = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(0)
  const brands: string[] = []
  const end = Math.min(boxSize, head.length)
  for (let at = 8; at + 4 <= end; at += 4) {
    if (at === 12) continue // minor version, not a brand
    brands.push(String.fromCharCode(...head.subarray(at, at + 4)))
  }
  const major = brands[0] ?? ''
  if (AVIF_BRANDS.has(major) || (major === 'mif1' && brands.some(b => AVIF_BRANDS.has(b)))) {
    return { kind: 'image', format: 'avif', mime: 'image/avif' }
  }
  if (HEIC_BRANDS.has(major)) return { kind: 'image', format: 'heic', mime: 'image/heic' }
  if (major === 'qt  ') return { kind: 'video', format: 'mov', mime: 'video/quicktime', demuxer: 'mov' }
  if (/^[\x20-\x7e]{4}$/.test(major)) return { kind: 'video', format: 'mp4', mime: 'video/mp4', demuxer: 'mov' }
  return undefined
}

/** Matroska's AlphaMode element (ID 0x53C0), one byte long, set to 1: the VP9 track carries an alpha plane. */
const ALPHA_MODE = Buffer.from([0x53, 0xc0, 0x81, 0x01])

// Matroska and WebM share the EBML header; its DocType element says which. A VP9 track with alpha (its
// Tracks element sits in the first bytes, as ffmpeg, libwebm and browsers write it) is read by libvpx-vp9.
function matroska (head: Uint8Array): Media {
  const text = String.fromCharCode(...head.subarray(0, 64))
  const bytes = Buffer.from(head.buffer, head.byteOffset, head.byteLength)
  const alpha = bytes.includes('V_VP9', 0, 'latin1') && bytes.includes(ALPHA_MODE)
  const [format, mime] = text.includes('webm') ? ['webm', 'video/webm'] as const : ['mkv', 'video/x-matroska'] as const
  return { kind: 'video', format, mime, demuxer: 'matroska', ...(alpha ? { decoder: 'libvpx-vp9' as const } : {}) }
}
