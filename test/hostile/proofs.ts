// Each corpus case is a live attack, shown with the plain tools: sharp without thumbd around it, ffmpeg and
// ffprobe without thumbd's guards (no forced demuxer, no protocol allow-list, data references as asked).
// A case that stopped being what its name says (a bomb that no longer declares its size, a data reference
// ffmpeg would not follow even unguarded) fails here, instead of passing the server's test for no reason.
import assert from 'node:assert/strict'
import { execFile } from 'node:child_process'
import { writeFileSync } from 'node:fs'
import { join } from 'node:path'
import { promisify } from 'node:util'
import sharp from 'sharp'
import { ANIMATION_PIXELS_FACTOR, MAX_ANIMATION_FRAMES } from '../../contract/limits.ts'
import { sniff } from '../../contract/sniff.ts'
import { loadConfig } from '../../src/config.ts'
import { MAX_STREAMS } from '../../workers/video/probe.ts'
import { looksMagenta, type Attack, type HostileCase } from './corpus.ts'
import { tempFolder } from '../temp-folder.ts'

const run = promisify(execFile)
/** The limits of a server with the default config, as the hostile test runs it. */
const { maxInputPixels, maxVideoSeconds } = loadConfig({ API_KEYS: 'proofs' })
const scratch = tempFolder('thumbd-proofs-')
let files = 0

/** The bytes as a file of their own (a nested path: a relative data reference climbs from wherever it is). */
function fileOf (bytes: Buffer): string {
  const path = join(scratch, `case-${files++}`)
  writeFileSync(path, bytes)
  return path
}

interface Probe { format?: { format_name?: string, duration?: string, nb_streams?: number }, streams?: Array<{ codec_type?: string, width?: number, height?: number }> }

/** ffprobe as anyone would run it: the demuxer chosen by probing. Undefined if it cannot read the file. */
async function probe (bytes: Buffer, options: string[] = []): Promise<Probe | undefined> {
  try {
    const { stdout } = await run('ffprobe', ['-hide_banner', '-loglevel', 'error', ...options, '-show_format', '-show_streams', '-of', 'json', fileOf(bytes)], { timeout: 20_000 })
    return JSON.parse(stdout) as Probe
  } catch {
    return undefined
  }
}

/** The colour of the first frame a plain ffmpeg decodes with `options`, shrunk to one pixel; undefined if none. */
async function firstPixel (bytes: Buffer, options: string[]): Promise<number[] | undefined> {
  const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-nostdin', ...options, '-i', `file:${fileOf(bytes)}`, '-frames:v', '1', '-vf', 'scale=1:1', '-f', 'rawvideo', '-pix_fmt', 'rgb24', 'pipe:1'], { encoding: 'buffer', timeout: 20_000 }).catch(() => ({ stdout: Buffer.alloc(0) }))
  return stdout.length >= 3 ? [...stdout.subarray(0, 3)] : undefined
}

/** A plain ffmpeg given `options` (which turn a guard off) decodes the sentinel's magenta picture from these bytes. */
async function showsSentinel (bytes: Buffer, options: string[] | undefined): Promise<void> {
  assert.ok(options !== undefined, 'the case names the ffmpeg options that turn its guard off')
  const pixel = await firstPixel(bytes, options)
  assert.ok(pixel !== undefined && looksMagenta(pixel), `ffmpeg ${options.join(' ')} (no forced demuxer) shows the sentinel's picture: ${pixel}`)
}

/** sharp fully decodes it (as thumbd configures it: the first frame, or every frame of an animation, failing on warnings). */
async function decodes (bytes: Buffer, pages = 1): Promise<boolean> {
  try {
    await sharp(bytes, { failOn: 'warning', pages }).toBuffer()
    return true
  } catch {
    return false // sharp throws at once for some inputs (an empty buffer), and rejects for others
  }
}

/** What the image's header says, whatever its size (sharp's own default limit would refuse a bomb's header). */
async function readsHeader (bytes: Buffer) {
  try {
    return await sharp(bytes, { limitInputPixels: false }).metadata()
  } catch {
    return undefined
  }
}

const PROOFS: Record<Attack, (c: HostileCase) => Promise<void>> = {
  async 'not media' ({ bytes }) {
    assert.equal(sniff(bytes), undefined, 'not sniffed as media')
    assert.equal(await readsHeader(bytes), undefined, 'sharp cannot read it either')
  },
  async 'unserved format' ({ bytes }) {
    assert.equal(sniff(bytes), undefined, 'not a type thumbd serves')
    const known = (await readsHeader(bytes))?.format ?? (await probe(bytes))?.streams?.[0]?.codec_type
    assert.ok(known !== undefined, 'yet it is media a decoder on this host would read')
  },
  async corrupt ({ bytes, options }) {
    const media = sniff(bytes)
    assert.ok(media !== undefined, 'sniffed as media: the decoder, not sniffing, must refuse it')
    if (media.kind === 'image') assert.equal(await decodes(bytes, options?.format === undefined ? 1 : -1), false, 'sharp refuses it')
    else assert.equal(await firstPixel(bytes, ['-f', media.demuxer]), undefined, 'ffmpeg decodes no frame of it')
  },
  async bomb ({ bytes }) {
    const media = sniff(bytes)
    if (media?.kind === 'image') {
      const { width = 0, height = 0, pages = 1 } = (await readsHeader(bytes)) ?? {}
      const overBudget = pages * width * height > ANIMATION_PIXELS_FACTOR * maxInputPixels
      assert.ok(width * height > maxInputPixels || pages > MAX_ANIMATION_FRAMES || overBudget, `its header declares more than the limits (${width}x${height}, ${pages} frames)`)
      return
    }
    if (media?.kind === 'audio') {
      // Its cover art, as a plain ffmpeg copies it out: an image whose header declares more than the limit.
      const { stdout } = await run('ffmpeg', ['-hide_banner', '-loglevel', 'error', '-i', fileOf(bytes), '-map', '0:v:0', '-c', 'copy', '-f', 'image2pipe', 'pipe:1'], { encoding: 'buffer', timeout: 20_000 })
      const { width = 0, height = 0 } = (await readsHeader(stdout)) ?? {}
      assert.ok(width * height > maxInputPixels, `its picture's header declares more than the limit (${width}x${height})`)
      return
    }
    const info = await probe(bytes)
    const video = info?.streams?.find(s => s.codec_type === 'video')
    const declared = { pixels: (video?.width ?? 0) * (video?.height ?? 0), seconds: Number(info?.format?.duration ?? 0), streams: info?.format?.nb_streams ?? 0 }
    assert.ok(declared.pixels > maxInputPixels || declared.seconds > maxVideoSeconds || declared.streams > MAX_STREAMS, `ffprobe reads more than the limits in its header: ${JSON.stringify(declared)}`)
  },
  async playlist ({ bytes }) {
    // Behind a container header or not: the playlist itself, as a probing ffmpeg reads it, reaches the sentinel.
    const at = Math.max(bytes.indexOf('#EXTM3U'), bytes.indexOf('ffconcat'))
    const info = await probe(bytes.subarray(at), ['-safe', '0'])
    assert.match(info?.format?.format_name ?? 'unreadable', /^(hls|concat)$/, 'ffmpeg reads it as a playlist')
    assert.ok(info?.streams?.some(s => s.width === 160 && s.height === 120), 'which opens the sentinel video')
  },
  async 'external reference' ({ bytes, unguardedBy }) {
    await showsSentinel(bytes, unguardedBy)
    // And the guard makes the difference: with ffmpeg's defaults nothing of the sentinel shows.
    const guarded = await firstPixel(bytes, [])
    assert.ok(guarded === undefined || !looksMagenta(guarded), 'ffmpeg\'s defaults do not follow it')
  },
  async 'container confusion' ({ bytes, unguardedBy }) {
    const sniffed = sniff(bytes)
    assert.ok(sniffed?.kind === 'video', 'sniffed as a video')
    const probed = (await probe(bytes))?.format?.format_name ?? 'unreadable'
    assert.ok(!probed.split(',').includes(sniffed.demuxer), `ffmpeg's probe picks ${probed}, not the sniffed ${sniffed.demuxer}`)
    await showsSentinel(bytes, unguardedBy)
    assert.equal(await firstPixel(bytes, ['-f', sniffed.demuxer]), undefined, 'while the sniffed demuxer decodes nothing')
  },
  async polyglot ({ bytes }) {
    assert.equal(sniff(bytes)?.format, 'jpeg')
    assert.ok(await decodes(bytes), 'a valid image')
    assert.ok(bytes.indexOf('PK\x03\x04') > bytes.lastIndexOf(Buffer.from([0xff, 0xd9])), 'with a ZIP archive after the image')
  },
  async 'type lie' ({ bytes, contentType }) {
    const media = sniff(bytes)
    assert.ok(media !== undefined && media.mime !== contentType, `Content-Type ${contentType} lies about ${media?.mime}`)
  }
}

export async function prove (c: HostileCase): Promise<void> {
  await PROOFS[c.attack](c)
}
