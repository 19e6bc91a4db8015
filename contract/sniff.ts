// What the bytes are, from their magic numbers; headers and file names are never trusted.
// Hand-written on purpose: the answer picks the ffmpeg demuxer and the sharp input, so it must be exact
// for the formats thumbd serves and say "unknown" for everything else (SVG, text, archives, playlists ...).
// One row per container: its magic, and what it is (kind, format, MIME type, the demuxer forced on ffmpeg).

export type ImageFormat = 'jpeg' | 'png' | 'webp' | 'gif' | 'avif' | 'heic'
export type VideoFormat = 'mp4' | 'mov' | 'webm' | 'mkv' | 'avi' | 'ts' | 'm2ts' | 'mpeg' | 'ogv' | 'asf' | 'flv'
export type AudioFormat = 'mp3' | 'm4a' | 'flac' | 'ogg'
/** ffmpeg demuxers that may ever read an upload; see workers/video/ffmpeg-args.ts. */
export type Demuxer = 'mov' | 'matroska' | 'avi' | 'mpegts' | 'mpeg' | 'ogg' | 'asf' | 'flv' | 'mp3' | 'flac'

export type Media =
  | { kind: 'image', format: ImageFormat, mime: string }
  /** `decoder`: one forced for the video stream, where ffmpeg's own would lose something (WebM's VP9 alpha). */
  | { kind: 'video', format: VideoFormat, mime: string, demuxer: Demuxer, decoder?: 'libvpx-vp9' }
  /** Audio files: their thumbnail is the cover art they carry (workers/video/cover-art.ts). */
  | { kind: 'audio', format: AudioFormat, mime: string, demuxer: Demuxer }

/** How many leading bytes sniff() wants to see (fewer is fine for short sources). */
export const SNIFF_BYTES = 4096

const ascii = (b: Uint8Array, at: number, text: string) =>
  b.length >= at + text.length && [...text].every((c, i) => b[at + i] === c.charCodeAt(0))
const bytesAt = (b: Uint8Array, at: number, magic: number[]) => b.length >= at + magic.length && magic.every((m, i) => b[at + i] === m)
const contains = (b: Uint8Array, text: string | Buffer) => Buffer.from(b.buffer, b.byteOffset, b.byteLength).includes(typeof text === 'string' ? Buffer.from(text, 'latin1') : text)

const image = (format: ImageFormat, mime: string): Media => ({ kind: 'image', format, mime })
const video = (format: VideoFormat, mime: string, demuxer: Demuxer): Media => ({ kind: 'video', format, mime, demuxer })
const audio = (format: AudioFormat, mime: string, demuxer: Demuxer): Media => ({ kind: 'audio', format, mime, demuxer })

/**
 * MPEG transport stream: a sync byte (0x47) every `size` bytes from `offset`, in every packet the head holds
 * (at least two): 188-byte packets (broadcast, HLS segments), 192 with a 4-byte timecode first (Blu-ray and
 * AVCHD .m2ts/.MTS). ffmpeg's mpegts demuxer reads both.
 */
function syncEvery (head: Uint8Array, offset: number, size: number): boolean {
  // The sync positions inside the head: at most 8 checked, at least 2 needed.
  const packets = Math.min(8, Math.floor((head.length - offset - 1) / size) + 1)
  if (packets < 2) return false
  for (let i = 0; i < packets; i++) if (head[offset + i * size] !== 0x47) return false
  return true
}

/**
 * An MP3 without an ID3 tag: an MPEG audio layer III frame header, whose first frame is the Xing/Info header
 * encoders write (LAME and ffmpeg do). Two bytes of frame sync alone would take 1 random file in ~8000 for MP3.
 */
const mp3Frame = (h: Uint8Array) => h[0] === 0xff && ((h[1] ?? 0) & 0xe0) === 0xe0 && (((h[1] ?? 0) >> 1) & 3) === 1 &&
  [...Array(40).keys()].some(i => ascii(h, i, 'Xing') || ascii(h, i, 'Info'))

const ASF_GUID = [0x30, 0x26, 0xb2, 0x75, 0x8e, 0x66, 0xcf, 0x11, 0xa6, 0xd9, 0x00, 0xaa, 0x00, 0x62, 0xce, 0x6c]

interface Row {
  name: string
  magic: (head: Uint8Array) => boolean
  /** What it is; a function where the head says more than the magic (brands, codecs). */
  media: Media | ((head: Uint8Array) => Media | undefined)
}

const TABLE: Row[] = [
  { name: 'JPEG', magic: h => bytesAt(h, 0, [0xff, 0xd8, 0xff]), media: image('jpeg', 'image/jpeg') },
  { name: 'PNG', magic: h => ascii(h, 0, '\x89PNG\r\n\x1a\n'), media: image('png', 'image/png') },
  { name: 'GIF', magic: h => ascii(h, 0, 'GIF87a') || ascii(h, 0, 'GIF89a'), media: image('gif', 'image/gif') },
  { name: 'WebP', magic: h => ascii(h, 0, 'RIFF') && ascii(h, 8, 'WEBP'), media: image('webp', 'image/webp') },
  { name: 'AVI', magic: h => ascii(h, 0, 'RIFF') && ascii(h, 8, 'AVI '), media: video('avi', 'video/x-msvideo', 'avi') },
  { name: 'ISO base media', magic: h => ascii(h, 4, 'ftyp'), media: isoMedia },
  { name: 'Matroska', magic: h => bytesAt(h, 0, [0x1a, 0x45, 0xdf, 0xa3]), media: matroska },
  { name: 'MPEG-TS', magic: h => syncEvery(h, 0, 188), media: video('ts', 'video/mp2t', 'mpegts') },
  { name: 'MPEG-TS (192-byte packets)', magic: h => syncEvery(h, 4, 192), media: video('m2ts', 'video/mp2t', 'mpegts') },
  { name: 'MPEG-PS', magic: h => bytesAt(h, 0, [0x00, 0x00, 0x01, 0xba]), media: video('mpeg', 'video/mpeg', 'mpeg') },
  { name: 'Ogg', magic: h => ascii(h, 0, 'OggS'), media: ogg },
  { name: 'ASF', magic: h => bytesAt(h, 0, ASF_GUID), media: video('asf', 'video/x-ms-asf', 'asf') },
  { name: 'FLV', magic: h => ascii(h, 0, 'FLV\x01'), media: video('flv', 'video/x-flv', 'flv') },
  { name: 'MP3', magic: h => ascii(h, 0, 'ID3') || mp3Frame(h), media: audio('mp3', 'audio/mpeg', 'mp3') },
  { name: 'FLAC', magic: h => ascii(h, 0, 'fLaC'), media: audio('flac', 'audio/flac', 'flac') }
]

export function sniff (head: Uint8Array): Media | undefined {
  const row = TABLE.find(r => r.magic(head))
  if (row === undefined) return undefined
  return typeof row.media === 'function' ? row.media(head) : row.media
}

const AVIF_BRANDS = new Set(['avif', 'avis'])
const HEIC_BRANDS = new Set(['heic', 'heix', 'hevc', 'hevx', 'heim', 'heis', 'mif1', 'msf1'])
/** iTunes' audio brands: music (M4A), audiobooks (M4B), protected (M4P). */
const AUDIO_BRANDS = new Set(['M4A ', 'M4B ', 'M4P '])

// ISO base media (MP4, MOV, M4A, AVIF, HEIC): the ftyp box names a major brand and compatible brands.
function isoMedia (head: Uint8Array): Media | undefined {
  const boxSize = new DataView(head.buffer, head.byteOffset, head.byteLength).getUint32(0)
  const brands: string[] = []
  const end = Math.min(boxSize, head.length)
  for (let at = 8; at + 4 <= end; at += 4) {
    if (at === 12) continue // minor version, not a brand
    brands.push(String.fromCharCode(...head.subarray(at, at + 4)))
  }
  const major = brands[0] ?? ''
  if (AVIF_BRANDS.has(major) || (major === 'mif1' && brands.some(b => AVIF_BRANDS.has(b)))) return image('avif', 'image/avif')
  if (HEIC_BRANDS.has(major)) return image('heic', 'image/heic')
  if (AUDIO_BRANDS.has(major)) return audio('m4a', 'audio/mp4', 'mov')
  if (major === 'qt  ') return video('mov', 'video/quicktime', 'mov')
  if (/^[\x20-\x7e]{4}$/.test(major)) return video('mp4', 'video/mp4', 'mov')
  return undefined
}

/** Matroska's AlphaMode element (ID 0x53C0), one byte long, set to 1: the VP9 track carries an alpha plane. */
const ALPHA_MODE = Buffer.from([0x53, 0xc0, 0x81, 0x01])

// Matroska and WebM share the EBML header; its DocType element says which. A VP9 track with alpha (its
// Tracks element sits in the first bytes, as ffmpeg, libwebm and browsers write it) is read by libvpx-vp9.
function matroska (head: Uint8Array): Media {
  const text = String.fromCharCode(...head.subarray(0, 64))
  const alpha = contains(head, 'V_VP9') && contains(head, ALPHA_MODE)
  const [format, mime] = text.includes('webm') ? ['webm', 'video/webm'] as const : ['mkv', 'video/x-matroska'] as const
  return { kind: 'video', format, mime, demuxer: 'matroska', ...(alpha ? { decoder: 'libvpx-vp9' as const } : {}) }
}

// Ogg starts with the first page of each stream, each naming its codec: Theora is video; Vorbis, Opus and
// FLAC alone are audio (whose cover art sits in the comment header).
function ogg (head: Uint8Array): Media | undefined {
  if (contains(head, '\x80theora')) return video('ogv', 'video/ogg', 'ogg')
  if (contains(head, 'OpusHead') || contains(head, '\x01vorbis') || contains(head, '\x7fFLAC')) return audio('ogg', 'audio/ogg', 'ogg')
  return undefined
}
