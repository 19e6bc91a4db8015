// The attack corpus, generated at test time (no binary blobs in the repo). Each case says what it is, which
// class of attack it stands for (proofs.ts shows each one is live: plain tools fall for it) and what thumbd
// must answer. A sentinel file sits beside the server: nothing may ever read it.
//
// Which inputs can make ffmpeg read another file (checked against Debian's ffmpeg 5.1 by running it without
// thumbd's guards): MP4/MOV data references (dref 'alis' entries), followed with -enable_drefs 1; playlists
// (hls, concat), which ffmpeg's probe only picks when "#EXTM3U"/"ffconcat" start the file, which sniffing
// refuses before any ffmpeg runs; image2 patterns, taken from the file name, which thumbd makes (a UUID).
// No input makes it reach the network: an input opened as "file:" limits what it may open in turn to
// ffmpeg's default "file,crypto,data" even without -protocol_whitelist.
import { execFile } from 'node:child_process'
import { randomBytes } from 'node:crypto'
import { writeFileSync } from 'node:fs'
import { readFile } from 'node:fs/promises'
import { join } from 'node:path'
import { promisify } from 'node:util'
import { crc32 } from 'node:zlib'
import { media, mediaPath } from '../media.ts'
import { gifOf, gifWithBadThirdFrame, webpOf, webpFrameLying } from '../animated-media.ts'
import { aliasEntry, ebmlMoovPolyglot, externalDataMp4 } from './iso-boxes.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)

/** The classes of attack the corpus must cover; proofs.ts says how each case of a class is shown to be live. */
export const ATTACKS = ['not media', 'unserved format', 'corrupt', 'bomb', 'playlist', 'external reference', 'container confusion', 'polyglot', 'type lie'] as const
export type Attack = typeof ATTACKS[number]

export interface HostileCase {
  name: string
  bytes: Buffer
  contentType: string
  attack: Attack
  /** The reply: an error code, or 'ok' for valid media that must still work. */
  expect: { status: number, code: string } | 'ok'
  /** Options sent with it (query or JSON): an animation asks for an animated output, so every frame is at stake. */
  options?: Record<string, string>
  /** ffmpeg options that turn off the guard this case tests: with them (and no forced demuxer), ffmpeg shows the sentinel's picture. */
  unguardedBy?: string[]
}

export interface Sentinel {
  /** Unique string inside the sentinel file: no reply or log may ever contain it. */
  marker: string
  /** A magenta video: a reply derived from it would be magenta. */
  videoPath: string
  /** The same video's bytes: the container attacks are built from them (without the marker). */
  video: Buffer
  textPath: string
}

const unsupported = { status: 415, code: 'THUMBD_UNSUPPORTED_MEDIA' }
const unreadable = { status: 422, code: 'THUMBD_MEDIA_UNREADABLE' }
const tooLarge = { status: 413, code: 'THUMBD_PAYLOAD_TOO_LARGE' }

const cut = (b: Buffer, n: number) => Buffer.from(b.subarray(0, n))

/** Overwrites `length` bytes at `at` with `fill`. */
function smash (b: Buffer, at: number, length: number, fill = 0x5a): Buffer {
  const copy = Buffer.from(b)
  copy.fill(fill, at, Math.min(copy.length, at + length))
  return copy
}

function replaceAscii (b: Buffer, from: string, to: string): Buffer {
  const copy = Buffer.from(b)
  const at = copy.indexOf(from, 0, 'latin1')
  if (at < 0) throw new Error(`no ${from} to replace`)
  copy.write(to, at, 'latin1')
  return copy
}

/** A PNG whose IHDR declares width x height, CRC fixed so only the size is a lie. */
function pngDeclaring (png: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(png)
  copy.writeUInt32BE(width, 16)
  copy.writeUInt32BE(height, 20)
  copy.writeUInt32BE(crc32(copy.subarray(12, 29)), 29)
  return copy
}

/** A JPEG whose SOF0 frame header declares width x height. */
function jpegDeclaring (jpeg: Buffer, width: number, height: number): Buffer {
  const copy = Buffer.from(jpeg)
  const sof = copy.indexOf(Buffer.from([0xff, 0xc0]))
  copy.writeUInt16BE(height, sof + 5)
  copy.writeUInt16BE(width, sof + 7)
  return copy
}

/** An MP4 whose movie header declares a duration of ~136 years. */
function mp4WithDuration (mp4: Buffer): Buffer {
  const copy = Buffer.from(mp4)
  const mvhd = copy.indexOf('mvhd', 0, 'latin1')
  copy.writeUInt32BE(1, mvhd + 16) // timescale: 1 per second (version 0 layout)
  copy.writeUInt32BE(0xffffffff, mvhd + 20) // duration
  return copy
}

export async function makeSentinel (): Promise<Sentinel> {
  // Until the process ends: the sentinel outlives every test of a file.
  const dir = tempFolder('thumbd-sentinel-')
  const marker = `THUMBD-SENTINEL-${randomBytes(8).toString('hex')}`
  const videoPath = join(dir, 'sentinel.mp4')
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-f', 'lavfi', '-i', 'color=c=magenta:s=160x120:d=1', '-c:v', 'libx264', '-preset', 'ultrafast', '-pix_fmt', 'yuv420p', '-metadata', `title=${marker}`, videoPath])
  const textPath = join(dir, 'sentinel.txt')
  writeFileSync(textPath, `${marker}\n`)
  return { marker, videoPath, video: await readFile(videoPath), textPath }
}

/** The sentinel's colour: a reply (or a frame) this colour was decoded from the sentinel. */
export function looksMagenta ([r, g, b]: number[]): boolean {
  return r! > 200 && g! < 60 && b! > 200
}

/**
 * The sentinel's movie header with its data reference pointed at the sentinel: `relative` climbs from the
 * upload's folder to / (".." at the root stays there) and down the sentinel's path, which ffmpeg follows with
 * -enable_drefs 1 wherever thumbd keeps the upload; else an absolute path, which also needs -use_absolute_path 1.
 */
function drefToSentinel (sentinel: Sentinel, relative: boolean): Buffer {
  const components = sentinel.videoPath.split('/').length - 1
  const entry = relative ? aliasEntry(`x${sentinel.videoPath}`, 32, components) : aliasEntry(sentinel.videoPath, 0, 0)
  return withoutMarker(externalDataMp4(sentinel.video, entry), sentinel)
}

function withoutMarker (bytes: Buffer, sentinel: Sentinel): Buffer {
  if (bytes.includes(sentinel.marker)) throw new Error('a corpus case carries the sentinel marker itself')
  return bytes
}

const animatedWebp = { format: 'webp' }

export async function hostileCorpus (sentinel: Sentinel): Promise<HostileCase[]> {
  const [jpeg, png, webp, gif, mp4, webm, avif] = await Promise.all(['jpeg', 'png', 'webp', 'gif', 'mp4-h264', 'webm-vp8', 'avif'].map(n => media(n as 'jpeg')))
  // Only the video: Debian's hls demuxer refuses a whole playlist that names one segment of another extension (.txt).
  const playlist = `#EXTM3U\n#EXT-X-VERSION:3\n#EXT-X-TARGETDURATION:1\n#EXTINF:1.0,\nfile://${sentinel.videoPath}\n#EXT-X-ENDLIST\n`
  const concat = `ffconcat version 1.0\nfile '${sentinel.videoPath}'\nfile '${sentinel.textPath}'\n`
  const ftypPrefix = Buffer.from('\x00\x00\x00\x18ftypisom\x00\x00\x02\x00isomiso2', 'latin1')
  const aviPrefix = Buffer.from('RIFF\x00\x10\x00\x00AVI LIST\x00\x01\x00\x00hdrl', 'latin1')
  const manyStreams = join(tempFolder('thumbd-streams-'), 'many.mkv')
  await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', await mediaPath('tiny-mp4'), ...Array.from({ length: 100 }, () => ['-map', '0:v']).flat(), '-c', 'copy', '-f', 'matroska', manyStreams])
  const zip = Buffer.concat([Buffer.from('PK\x03\x04\x14\x00\x00\x00\x00\x00', 'latin1'), Buffer.from(sentinel.marker), Buffer.alloc(64)])

  return [
    { name: 'zero bytes', attack: 'not media', bytes: Buffer.alloc(0), contentType: 'image/jpeg', expect: unsupported },
    { name: 'a few random bytes', attack: 'not media', bytes: randomBytes(37), contentType: 'image/png', expect: unsupported },
    { name: 'text as image/jpeg', attack: 'not media', bytes: Buffer.from('hello, this is not an image at all\n'), contentType: 'image/jpeg', expect: unsupported },
    { name: 'truncated JPEG', attack: 'corrupt', bytes: cut(jpeg, jpeg.length >> 1), contentType: 'image/jpeg', expect: unreadable },
    { name: 'JPEG with smashed entropy data', attack: 'corrupt', bytes: smash(jpeg, jpeg.indexOf(Buffer.from([0xff, 0xda])) + 20, 4000), contentType: 'image/jpeg', expect: unreadable },
    { name: 'truncated PNG', attack: 'corrupt', bytes: cut(png, png.length >> 1), contentType: 'image/png', expect: unreadable },
    { name: 'PNG with a bad IHDR CRC', attack: 'corrupt', bytes: smash(png, 29, 4), contentType: 'image/png', expect: unreadable },
    { name: 'truncated WebP', attack: 'corrupt', bytes: cut(webp, webp.length >> 1), contentType: 'image/webp', expect: unreadable },
    { name: 'WebP with a smashed VP8 header', attack: 'corrupt', bytes: smash(webp, 20, 16), contentType: 'image/webp', expect: unreadable },
    { name: 'truncated GIF (header only)', attack: 'corrupt', bytes: cut(gif, 40), contentType: 'image/gif', expect: unreadable },
    { name: 'GIF with a smashed image descriptor', attack: 'corrupt', bytes: smash(gif, gif.indexOf(0x2c, 13), 64, 0xff), contentType: 'image/gif', expect: unreadable },
    { name: 'truncated AVIF', attack: 'corrupt', bytes: cut(avif, avif.length >> 1), contentType: 'image/avif', expect: unreadable },
    { name: 'truncated MP4 (index at the end)', attack: 'corrupt', bytes: cut(mp4, mp4.length >> 1), contentType: 'video/mp4', expect: unreadable },
    { name: 'MP4 with its moov atom renamed', attack: 'corrupt', bytes: replaceAscii(mp4, 'moov', 'moox'), contentType: 'video/mp4', expect: unreadable },
    { name: 'truncated WebM (header only)', attack: 'corrupt', bytes: cut(webm, 200), contentType: 'video/webm', expect: unreadable },
    { name: 'WebM with a smashed segment', attack: 'corrupt', bytes: smash(webm, 40, 400, 0xff), contentType: 'video/webm', expect: unreadable },
    { name: 'PNG bomb: 100000x100000 declared in a tiny file', attack: 'bomb', bytes: pngDeclaring(png, 100_000, 100_000), contentType: 'image/png', expect: tooLarge },
    { name: 'JPEG bomb: 65000x65000 declared', attack: 'bomb', bytes: jpegDeclaring(jpeg, 65_000, 65_000), contentType: 'image/jpeg', expect: tooLarge },
    { name: 'GIF with 3000 frames', attack: 'bomb', bytes: await media('many-frames-gif'), contentType: 'image/gif', expect: tooLarge },
    { name: 'GIF with 100 000 frames of 1x1, to animated WebP', attack: 'bomb', bytes: gifOf({ width: 1, height: 1, frames: 100_000 }), contentType: 'image/gif', options: animatedWebp, expect: tooLarge },
    { name: 'GIF with 10 frames of 7000x7000 (each under the pixel limit), to animated WebP', attack: 'bomb', bytes: gifOf({ width: 7000, height: 7000, frames: 10, frameWidth: 7000, frameHeight: 7000 }), contentType: 'image/gif', options: animatedWebp, expect: tooLarge },
    { name: 'animated WebP whose first frame sits past its canvas, to animated WebP', attack: 'corrupt', bytes: webpFrameLying(await webpOf(64, 48, 3), { xOffsetHalf: 100 }), contentType: 'image/webp', options: animatedWebp, expect: unreadable },
    { name: 'animated GIF whose third frame starts with an LZW code that does not exist, to GIF', attack: 'corrupt', bytes: gifWithBadThirdFrame(), contentType: 'image/gif', options: { format: 'gif' }, expect: unreadable },
    { name: 'video with 8192x8192 frames', attack: 'bomb', bytes: await media('huge-frame-mov'), contentType: 'video/quicktime', expect: tooLarge },
    { name: 'MP4 declaring a 136-year duration', attack: 'bomb', bytes: mp4WithDuration(mp4), contentType: 'video/mp4', expect: tooLarge },
    { name: 'video with 100 streams', attack: 'bomb', bytes: await readFile(manyStreams), contentType: 'video/x-matroska', expect: unreadable },
    { name: 'HLS playlist named .mp4 pointing at a local file', attack: 'playlist', bytes: Buffer.from(playlist), contentType: 'video/mp4', expect: unsupported },
    { name: 'HLS playlist behind an MP4 ftyp box', attack: 'playlist', bytes: Buffer.concat([ftypPrefix, Buffer.from(playlist)]), contentType: 'video/mp4', expect: unreadable },
    { name: 'HLS playlist behind an AVI RIFF header', attack: 'playlist', bytes: Buffer.concat([aviPrefix, Buffer.from(playlist)]), contentType: 'video/x-msvideo', expect: unreadable },
    { name: 'ffconcat script', attack: 'playlist', bytes: Buffer.from(concat), contentType: 'video/mp4', expect: unsupported },
    { name: 'ffconcat script behind an MP4 ftyp box', attack: 'playlist', bytes: Buffer.concat([ftypPrefix, Buffer.from(concat)]), contentType: 'video/mp4', expect: unreadable },
    // Data references: with the guard off, ffmpeg reads every frame from the sentinel (checked: magenta frames).
    { name: 'MP4 whose data reference climbs to the sentinel', attack: 'external reference', bytes: drefToSentinel(sentinel, true), contentType: 'video/mp4', expect: unreadable, unguardedBy: ['-enable_drefs', '1'] },
    { name: 'MP4 whose data reference is the sentinel\'s absolute path', attack: 'external reference', bytes: drefToSentinel(sentinel, false), contentType: 'video/mp4', expect: unreadable, unguardedBy: ['-enable_drefs', '1', '-use_absolute_path', '1'] },
    // Sniffed as Matroska, probed by ffmpeg as MP4: only the forced demuxer keeps it out of the mov demuxer.
    { name: 'EBML magic over an MP4 movie box (probes as MP4)', attack: 'container confusion', bytes: withoutMarker(ebmlMoovPolyglot(sentinel.video), sentinel), contentType: 'video/x-matroska', expect: unreadable, unguardedBy: [] },
    { name: 'SVG with external references and script', attack: 'unserved format', bytes: Buffer.from(`<svg xmlns="http://www.w3.org/2000/svg" xmlns:xlink="http://www.w3.org/1999/xlink" width="100" height="100"><image xlink:href="file://${sentinel.textPath}" width="100" height="100"/><script>alert(1)</script></svg>`), contentType: 'image/svg+xml', expect: unsupported },
    { name: 'TIFF (not served)', attack: 'unserved format', bytes: await media('tiff'), contentType: 'image/tiff', expect: unsupported },
    { name: 'BMP (not served)', attack: 'unserved format', bytes: await media('bmp'), contentType: 'image/bmp', expect: unsupported },
    { name: 'PDF', attack: 'not media', bytes: Buffer.from('%PDF-1.7\n1 0 obj << /Type /Catalog >> endobj\ntrailer << /Root 1 0 R >>\n%%EOF\n'), contentType: 'application/octet-stream', expect: unsupported },
    // A JPEG+ZIP polyglot is a valid JPEG: thumbd re-encodes it, so nothing of the ZIP can survive into the reply.
    { name: 'JPEG+ZIP polyglot', attack: 'polyglot', bytes: Buffer.concat([jpeg, zip]), contentType: 'image/jpeg', expect: 'ok' },
    { name: 'PNG sent as video/mp4', attack: 'type lie', bytes: png, contentType: 'video/mp4', expect: 'ok' },
    { name: 'MP4 sent as image/jpeg', attack: 'type lie', bytes: mp4, contentType: 'image/jpeg', expect: 'ok' },
    { name: 'WebM sent as application/octet-stream', attack: 'type lie', bytes: webm, contentType: 'application/octet-stream', expect: 'ok' },
    { name: 'GIF sent as image/webp', attack: 'type lie', bytes: gif, contentType: 'image/webp', expect: 'ok' }
  ]
}
